/* Compute + ping-pong under availability profiles (speed, bandwidth, latency).
 *
 * Demonstrates:
 * - computations re-rated when a host's speed profile changes (SMPI_SAMPLE_FLOPS);
 * - messages timed with the bandwidth and latency a link's profiles give it;
 * - the dates printed by rank 0 are compared with SimGrid SMPI 3.32's (e2e `profiles`).
 *
 * Rank 0 and rank 1 alternate: compute, then a ping-pong of growing size.
 */
#include <mpi.h>
#include <smpi/smpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv)
{
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  static char buf[1 << 22];
  double flops = argc > 1 ? atof(argv[1]) : 2e7;
  int rounds = argc > 2 ? atoi(argv[2]) : 12;
  for (int i = 0; i < rounds; i++) {
    SMPI_SAMPLE_FLOPS(flops * (1 + rank)) {}
    int n = 1000 << (i % 12);
    if (rank == 0) {
      MPI_Send(buf, n, MPI_CHAR, 1, i, MPI_COMM_WORLD);
      MPI_Recv(buf, n, MPI_CHAR, 1, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      printf("round %d size %d t=%.9f\n", i, n, MPI_Wtime());
    } else if (rank == 1) {
      MPI_Recv(buf, n, MPI_CHAR, 0, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(buf, n, MPI_CHAR, 0, i, MPI_COMM_WORLD);
    }
  }
  printf("rank %d done t=%.9f\n", rank, MPI_Wtime());
  MPI_Finalize();
  return 0;
}
