/* Engine-speed benchmark: every rank does ITER MPI_Sendrecv of 8 bytes with
 * its right neighbour (receiving from its left one). Prints the simulated
 * time seen by rank 0. Usage: sendrecv_ring [iterations] (default 1000). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
  int rank, size, iters = argc > 1 ? atoi(argv[1]) : 1000;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  double out = rank, in = -1;
  int right = (rank + 1) % size, left = (rank + size - 1) % size;
  double t0 = MPI_Wtime();
  for (int i = 0; i < iters; i++)
    MPI_Sendrecv(&out, 1, MPI_DOUBLE, right, 0, &in, 1, MPI_DOUBLE, left, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  double t1 = MPI_Wtime();
  if (in != left) { fprintf(stderr, "rank %d: got %g, expected %d\n", rank, in, left); return 1; }
  if (rank == 0) printf("sendrecv_ring ranks=%d iterations=%d simulated_time=%.9e s\n", size, iters, t1 - t0);
  MPI_Finalize();
  return 0;
}
