/* bad_return: rank 3 returns 5 from main after MPI_Finalize (with argument
 * "exit": calls exit(7) instead); the other ranks sleep one simulated second
 * longer, print a line and return 0. Expected: the run goes on to the end
 * (every other rank's line is printed), names rank 3 and its code, and
 * smpirun exits with that code (5, or 7).
 * Usage: smpirun -np 4 (or more) ... bad_return [exit] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
  int rank;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  if (rank == 3) {
    if (argc > 1 && strcmp(argv[1], "exit") == 0) exit(7);
    return 5;
  }
  sleep(1);
  printf("rank %d done\n", rank);
  return 0;
}
