/* check: one collective with known data, checked on every rank.
 *
 * Usage: smpirun ... check <collective>
 *   collective: reduce allreduce gather scatter allgather allgatherv alltoall
 *               alltoallv reduce_scatter bcast barrier
 * Each blocking call is made twice, the second time with MPI_IN_PLACE where
 * MPI allows it (reduce at the root, allreduce, gather and scatter at the
 * root, allgather(v), alltoall(v), reduce_scatter_block). Every rank prints
 * "ok <collective> rank=<r>" or "bad <collective> rank=<r> <what>".
 * Values: rank r contributes r * 100 + i for element i (reductions: MPI_SUM
 * of MPI_INT).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 5

static int rank, size, bad;

static void expect(const char *what, int got, int want)
{
  if (got != want && !bad) {
    printf("bad rank=%d %s: got %d, want %d\n", rank, what, got, want);
    bad = 1;
  }
}

static int contrib(int r, int i) { return r * 100 + i; }

static int sum_of(int i)
{
  int s = 0;
  for (int r = 0; r < size; r++)
    s += contrib(r, i);
  return s;
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char *coll = argc > 1 ? argv[1] : "";
  int root = size - 1;
  int *s = malloc(sizeof(int) * N * size), *r = malloc(sizeof(int) * N * size);
  int *counts = malloc(sizeof(int) * size), *displs = malloc(sizeof(int) * size);
  for (int i = 0; i < size; i++) {
    counts[i] = N;
    displs[i] = N * (size - 1 - i); /* reversed blocks: an irregular layout */
  }
  if (!strcmp(coll, "reduce") || !strcmp(coll, "allreduce")) {
    /* N elements per rank: SMPI's automatic reduce fails with fewer than ranks */
    int n = N * size;
    for (int pass = 0; pass < 2; pass++) {
      for (int i = 0; i < n; i++) {
        s[i] = contrib(rank, i);
        r[i] = pass ? s[i] : -1;
      }
      const void *src = pass && (rank == root || coll[0] == 'a') ? MPI_IN_PLACE : s;
      if (coll[0] == 'r')
        MPI_Reduce(src, r, n, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD);
      else
        MPI_Allreduce(src, r, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
      if (coll[0] == 'a' || rank == root)
        for (int i = 0; i < n; i++)
          expect(pass ? "in place" : "result", r[i], sum_of(i));
    }
  } else if (!strcmp(coll, "reduce_scatter")) {
    for (int pass = 0; pass < 2; pass++) {
      for (int i = 0; i < N * size; i++)
        s[i] = r[i] = contrib(rank, i);
      MPI_Reduce_scatter_block(pass ? MPI_IN_PLACE : s, r, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
      for (int i = 0; i < N; i++)
        expect(pass ? "in place" : "result", r[i], sum_of(rank * N + i));
    }
  } else if (!strcmp(coll, "gather") || !strcmp(coll, "allgather")) {
    for (int pass = 0; pass < 2; pass++) {
      for (int i = 0; i < N * size; i++)
        r[i] = -1;
      for (int i = 0; i < N; i++)
        s[i] = r[rank * N + i] = contrib(rank, i);
      if (coll[0] == 'g')
        MPI_Gather(pass && rank == root ? MPI_IN_PLACE : s, N, MPI_INT, r, N, MPI_INT, root, MPI_COMM_WORLD);
      else
        MPI_Allgather(pass ? MPI_IN_PLACE : s, N, MPI_INT, r, N, MPI_INT, MPI_COMM_WORLD);
      if (coll[0] == 'a' || rank == root)
        for (int i = 0; i < N * size; i++)
          expect(pass ? "in place" : "result", r[i], contrib(i / N, i % N));
    }
  } else if (!strcmp(coll, "allgatherv")) {
    for (int pass = 0; pass < 2; pass++) {
      for (int i = 0; i < N * size; i++)
        r[i] = -1;
      for (int i = 0; i < N; i++)
        s[i] = r[displs[rank] + i] = contrib(rank, i);
      MPI_Allgatherv(pass ? MPI_IN_PLACE : s, N, MPI_INT, r, counts, displs, MPI_INT, MPI_COMM_WORLD);
      for (int p = 0; p < size; p++)
        for (int i = 0; i < N; i++)
          expect(pass ? "in place" : "result", r[displs[p] + i], contrib(p, i));
    }
  } else if (!strcmp(coll, "scatter")) {
    for (int pass = 0; pass < 2; pass++) {
      for (int i = 0; i < N * size; i++)
        s[i] = contrib(root, i);
      for (int i = 0; i < N; i++)
        r[i] = -1;
      int in_place = pass && rank == root;
      MPI_Scatter(s, N, MPI_INT, in_place ? MPI_IN_PLACE : r, N, MPI_INT, root, MPI_COMM_WORLD);
      const int *mine = in_place ? s + rank * N : r;
      for (int i = 0; i < N; i++)
        expect(pass ? "in place" : "result", mine[i], contrib(root, rank * N + i));
    }
  } else if (!strcmp(coll, "alltoall") || !strcmp(coll, "alltoallv")) {
    int v = coll[8] == 'v';
    for (int pass = 0; pass < 2; pass++) {
      /* block for peer p at displs[p] (alltoallv) or p * N (alltoall) */
      for (int p = 0; p < size; p++)
        for (int i = 0; i < N; i++) {
          int at = (v ? displs[p] : p * N) + i;
          s[at] = r[at] = contrib(rank, p * N + i);
        }
      const void *src = pass ? MPI_IN_PLACE : s;
      if (v)
        MPI_Alltoallv(src, counts, displs, MPI_INT, r, counts, displs, MPI_INT, MPI_COMM_WORLD);
      else
        MPI_Alltoall(src, N, MPI_INT, r, N, MPI_INT, MPI_COMM_WORLD);
      for (int p = 0; p < size; p++)
        for (int i = 0; i < N; i++)
          expect(pass ? "in place" : "result", r[(v ? displs[p] : p * N) + i], contrib(p, rank * N + i));
    }
  } else if (!strcmp(coll, "bcast")) {
    for (int i = 0; i < N; i++)
      s[i] = rank == root ? contrib(root, i) : -1;
    MPI_Bcast(s, N, MPI_INT, root, MPI_COMM_WORLD);
    for (int i = 0; i < N; i++)
      expect("result", s[i], contrib(root, i));
  } else if (!strcmp(coll, "barrier")) {
    MPI_Barrier(MPI_COMM_WORLD);
  } else {
    if (rank == 0)
      fprintf(stderr, "unknown collective %s\n", coll);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  if (!bad)
    printf("ok %s rank=%d\n", coll, rank);
  free(s);
  free(r);
  free(counts);
  free(displs);
  MPI_Finalize();
  return 0;
}
