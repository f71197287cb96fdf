/* Runs that never end on their own, to check that smpirun stops them cleanly
 * (output flushed, where each rank is, the exit status):
 *   mpi-loop   every rank prints a line, then barriers forever
 *   compute    every rank prints a line, then computes forever without MPI
 *   raise      every rank prints a line; rank 1 raises SIGTERM, the others
 *              barrier forever */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

volatile double sink;

int main(int argc, char **argv)
{
  const char *mode = argc > 1 ? argv[1] : "mpi-loop";
  int rank;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  printf("rank %d started\n", rank);
  if (strcmp(mode, "compute") == 0)
    for (unsigned long i = 0;; i++) sink += (double)i;
  if (strcmp(mode, "raise") == 0 && rank == 1) raise(SIGTERM);
  for (;;) MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
