/* deadlock: ranks 0 and 1 both MPI_Recv from each other with tag 42 before
 * sending anything; the other ranks finish normally. Expected: smpirun reports
 * a deadlock listing rank 0 and rank 1 blocked in MPI_Recv (peer 1 / peer 0,
 * tag 42) and exits non-zero. Usage: smpirun -np 2 (or more) ... deadlock */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
  int rank, x = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank < 2) {
    MPI_Recv(&x, 1, MPI_INT, 1 - rank, 42, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Send(&x, 1, MPI_INT, 1 - rank, 42, MPI_COMM_WORLD);
    printf("deadlock: rank %d was not blocked\n", rank);
  }
  MPI_Finalize();
  return 0;
}
