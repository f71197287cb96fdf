/* Calls an MPI function the simulator does not implement (on a path taken
 * only with an argument) and a function no library defines: smpirun must
 * refuse to start and list both, instead of stopping at the first call in
 * the dynamic loader with the program's output lost. */
#include <mpi.h>
#include <stdio.h>

/* Dynamic processes are not implemented: mpi.h does not declare it. */
int MPI_Comm_spawn(const char *command, char *argv[], int maxprocs, MPI_Info info, int root, MPI_Comm comm,
                   MPI_Comm *intercomm, int array_of_errcodes[]);
double not_defined_anywhere(double);

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  printf("started\n");
  if (argc > 1) {
    MPI_Comm child;
    MPI_Comm_spawn("worker", NULL, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &child, NULL);
    printf("%f\n", not_defined_anywhere(1.0));
  }
  MPI_Finalize();
  return 0;
}
