/* mpi_abort: rank 1 calls MPI_Abort(MPI_COMM_WORLD, 7) while the others wait
 * in MPI_Barrier. Expected: smpirun exits with code 7 and names rank 1 and
 * MPI_Abort. Usage: smpirun -np 2 (or more) ... mpi_abort */
#include <mpi.h>

int main(int argc, char **argv)
{
  int rank;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 1) MPI_Abort(MPI_COMM_WORLD, 7);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
