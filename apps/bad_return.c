/* bad_return: rank 3 returns 5 from main after MPI_Finalize; the other ranks
 * return 0. Expected: smpirun exits with code 5 and names rank 3.
 * Usage: smpirun -np 4 (or more) ... bad_return */
#include <mpi.h>

int main(int argc, char **argv)
{
  int rank;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return rank == 3 ? 5 : 0;
}
