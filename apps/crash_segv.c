/* crash_segv: rank 1 dereferences NULL (SIGSEGV) while the others wait in
 * MPI_Barrier. Before that, rank 0 prints a line (without flushing) and then
 * sends rank 1 the message it waits for, so the line is printed before the
 * crash. Expected: smpirun exits non-zero and names rank 1 and SIGSEGV, and
 * rank 0's line still reaches stdout.
 * Usage: smpirun -np 2 (or more) ... crash_segv */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
  int rank, x = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    printf("crash_segv: rank 0 is in the barrier\n"); /* not flushed: must not be lost */
    MPI_Send(&x, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
  }
  if (rank == 1) {
    MPI_Recv(&x, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    volatile int *p = NULL;
    *p = 42;
    printf("crash_segv: rank 1 survived a NULL write\n");
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
