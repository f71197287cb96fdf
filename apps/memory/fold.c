/* Memory folding: each rank allocates a large buffer with plain malloc (folded
 * by --cfg=smpi/auto-shared-malloc-thresh), writes to a few places, exchanges
 * a slice with its neighbour, and keeps a small private array whose contents
 * must survive. Usage: fold [GiB per rank] (default 4). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
  int rank, size;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  size_t gib = argc > 1 ? (size_t)atol(argv[1]) : 4;
  size_t bytes = gib << 30;
  char *big = malloc(bytes);
  int *small = malloc(1000 * sizeof(int)); /* below the threshold: private */
  if (!big || !small) { fprintf(stderr, "rank %d: allocation failed\n", rank); return 1; }
  for (int i = 0; i < 1000; i++) small[i] = rank * 1000 + i;
  for (size_t off = 0; off < bytes; off += bytes / 16) big[off] = (char)rank;
  /* exchange 16 MiB of the big buffer with the neighbours */
  int right = (rank + 1) % size, left = (rank + size - 1) % size;
  MPI_Sendrecv(big, 16 << 20, MPI_BYTE, right, 0, big + (64 << 20), 16 << 20, MPI_BYTE, left, 0, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
  int ok = 1;
  for (int i = 0; i < 1000; i++) ok &= small[i] == rank * 1000 + i;
  int all_ok;
  MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  if (rank == 0) printf("fold: %d ranks x %zu GiB, private data %s, time %.6f s\n", size, gib, all_ok ? "OK" : "CORRUPTED", MPI_Wtime());
  free(big);
  free(small);
  MPI_Finalize();
  return all_ok ? 0 : 1;
}
