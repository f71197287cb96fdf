/* coll_time: times one collective call.
 *
 * Usage: smpirun ... coll_time <collective> <bytes> [root [warm]]
 *   collective: barrier bcast reduce allreduce gather scatter allgather
 *               allgatherv alltoall alltoallv reduce_scatter scan exscan
 *   bytes: message size; the whole vector for bcast, reduce, allreduce, scan
 *          and exscan,
 *          one rank's block for the others (a multiple of 4: reductions use
 *          MPI_INT and MPI_SUM, data moves as MPI_BYTE).
 *   warm: call the collective once and MPI_Barrier before the timed call.
 * Every rank prints "time rank=<r> t=<seconds>", the simulated time from just
 * before the call to just after it (use --cfg=smpi/wtime:0).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void one_call(const char *coll, long bytes, int root, char *s, char *r, int *counts, int *displs, int rank,
                     int size)
{
  MPI_Comm comm = MPI_COMM_WORLD;
  int ints = (int)(bytes / 4);
  if (!strcmp(coll, "barrier"))
    MPI_Barrier(comm);
  else if (!strcmp(coll, "bcast"))
    MPI_Bcast(s, (int)bytes, MPI_BYTE, root, comm);
  else if (!strcmp(coll, "reduce"))
    MPI_Reduce(s, r, ints, MPI_INT, MPI_SUM, root, comm);
  else if (!strcmp(coll, "allreduce"))
    MPI_Allreduce(s, r, ints, MPI_INT, MPI_SUM, comm);
  else if (!strcmp(coll, "gather"))
    MPI_Gather(s, (int)bytes, MPI_BYTE, r, (int)bytes, MPI_BYTE, root, comm);
  else if (!strcmp(coll, "scatter"))
    MPI_Scatter(s, (int)bytes, MPI_BYTE, r, (int)bytes, MPI_BYTE, root, comm);
  else if (!strcmp(coll, "allgather"))
    MPI_Allgather(s, (int)bytes, MPI_BYTE, r, (int)bytes, MPI_BYTE, comm);
  else if (!strcmp(coll, "allgatherv")) {
    /* irregular displacements (reversed order), regular counts */
    for (int i = 0; i < size; i++) displs[i] = (int)((size - 1 - i) * bytes);
    MPI_Allgatherv(s, (int)bytes, MPI_BYTE, r, counts, displs, MPI_BYTE, comm);
  } else if (!strcmp(coll, "alltoall"))
    MPI_Alltoall(s, (int)bytes, MPI_BYTE, r, (int)bytes, MPI_BYTE, comm);
  else if (!strcmp(coll, "alltoallv"))
    MPI_Alltoallv(s, counts, displs, MPI_BYTE, r, counts, displs, MPI_BYTE, comm);
  else if (!strcmp(coll, "reduce_scatter"))
    MPI_Reduce_scatter_block(s, r, ints, MPI_INT, MPI_SUM, comm);
  else if (!strcmp(coll, "scan"))
    MPI_Scan(s, r, ints, MPI_INT, MPI_SUM, comm);
  else if (!strcmp(coll, "exscan"))
    MPI_Exscan(s, r, ints, MPI_INT, MPI_SUM, comm);
  else {
    if (rank == 0) fprintf(stderr, "unknown collective %s\n", coll);
    MPI_Abort(comm, 2);
  }
}

int main(int argc, char **argv)
{
  int rank, size;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc < 3) {
    if (rank == 0) fprintf(stderr, "usage: coll_time <collective> <bytes> [root]\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const char *coll = argv[1];
  long bytes = atol(argv[2]);
  int root = argc > 3 ? atoi(argv[3]) : 0;
  size_t total = (size_t)bytes * size + 64;
  char *s = calloc(total, 1), *r = calloc(total, 1);
  int *counts = malloc(size * sizeof(int)), *displs = malloc(size * sizeof(int));
  for (int i = 0; i < size; i++) {
    counts[i] = (int)bytes;
    displs[i] = (int)(i * bytes);
  }
  int warm = argc > 4 && !strcmp(argv[4], "warm");
  if (warm) {
    one_call(coll, bytes, root, s, r, counts, displs, rank, size);
    MPI_Barrier(MPI_COMM_WORLD);
  }
  double t0 = MPI_Wtime();
  one_call(coll, bytes, root, s, r, counts, displs, rank, size);
  double t1 = MPI_Wtime();
  printf("time rank=%d t=%.12e\n", rank, t1 - t0);
  free(s);
  free(r);
  free(counts);
  free(displs);
  MPI_Finalize();
  return 0;
}
