/* Rank 0 computes for argv[1] simulated seconds (default 100), then sends to
 * rank 1, which polls with MPI_Iprobe until the message is there; prints the
 * number of polls. Used to check the chaos warning of SMPI's shared, growing
 * polling cost. Run with 2 ranks. */
#include <mpi.h>
#include <smpi/smpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
  int rank, flag = 0, value = 42;
  long polls = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    smpi_execute_benched(argc > 1 ? atof(argv[1]) : 100.0);
    MPI_Send(&value, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
  } else if (rank == 1) {
    while (!flag) {
      MPI_Iprobe(0, 0, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
      polls++;
    }
    MPI_Recv(&value, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    printf("polls %ld\n", polls);
  }
  MPI_Finalize();
  return 0;
}
