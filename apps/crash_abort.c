/* crash_abort: rank 2 calls abort() (SIGABRT) while the others wait in
 * MPI_Barrier. Expected: smpirun exits non-zero and names rank 2 and abort.
 * Usage: smpirun -np 3 (or more) ... crash_abort */
#include <mpi.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
  int rank;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 2) abort();
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
