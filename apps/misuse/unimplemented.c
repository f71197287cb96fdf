/* Calls an MPI function the simulator does not implement (on a path taken
 * only with an argument) and a function no library defines: smpirun must
 * refuse to start and list both, instead of stopping at the first call in
 * the dynamic loader with the program's output lost. */
#include <mpi.h>
#include <stdio.h>

int MPI_Win_fence(int assert, int win);
double not_defined_anywhere(double);

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  printf("started\n");
  if (argc > 1) {
    MPI_Win_fence(0, 0);
    printf("%f\n", not_defined_anywhere(1.0));
  }
  MPI_Finalize();
  return 0;
}
