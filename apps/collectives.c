/* collectives: times and checks the main MPI collectives.
 *
 * demonstrates: MPI_Barrier, MPI_Bcast, MPI_Reduce, MPI_Allreduce, MPI_Gather,
 * MPI_Scatter, MPI_Allgather, MPI_Alltoall on MPI_INT / MPI_DOUBLE buffers.
 *
 * Usage: collectives [count ...]
 *   counts = elements per buffer (per destination for Alltoall/Scatter/Gather
 *   blocks); default: 1 64 4096.
 *
 * Each operation runs once per count: MPI_Barrier, t0, operation, t1; the time
 * reported is the max over ranks of t1 - t0 (an MPI_Reduce after the timing).
 * Rank 0 prints one line per operation and count:
 *   coll op=<name> count=<n> bytes=<bytes per rank buffer> time=<s>
 * Every rank checks what it received against the value computed
 * sequentially from the formula each rank used to fill its buffer; roots
 * alternate (rank 0, then np-1) to exercise non-zero roots. The last line is
 * OK (exit 0) or FAIL (exit 1). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* No mutable globals on purpose: this app must not depend on privatization
 * (privatization.c tests that). */
struct ctx {
  int rank, np;
  long errors;
  double t_start;
};

/* value that rank r puts at index i of its contribution (kept small: sums of
 * up to a few thousand ranks stay exact in int and double) */
static int val(int r, long i) { return (int)((r + 1) * ((i % 1000) + 1) + r % 7); }

static void expect_int(struct ctx *c, const char *op, long count, long i, int got, int want)
{
  if (got != want) {
    if (c->errors < 10)
      fprintf(stderr, "collectives: rank %d: %s count=%ld: element %ld is %d, expected %d\n", c->rank, op, count, i,
              got, want);
    c->errors++;
  }
}

static void start(struct ctx *c)
{
  MPI_Barrier(MPI_COMM_WORLD);
  c->t_start = MPI_Wtime();
}

static void stop(struct ctx *c, const char *op, long count, long bytes)
{
  double dt = MPI_Wtime() - c->t_start, dtmax = 0;
  MPI_Reduce(&dt, &dtmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  if (c->rank == 0) printf("coll op=%s count=%ld bytes=%ld time=%.9e\n", op, count, bytes, dtmax);
}

static void run(struct ctx *c, long n, int round)
{
  int rank = c->rank, np = c->np;
  int root = (round % 2 == 0) ? 0 : np - 1;
  int *a = malloc(sizeof(int) * n * np), *b = malloc(sizeof(int) * n * np);
  double *da = malloc(sizeof(double) * n), *db = malloc(sizeof(double) * n);
  long bytes = n * (long)sizeof(int);

  /* Barrier (timed only) */
  start(c);
  MPI_Barrier(MPI_COMM_WORLD);
  stop(c, "Barrier", 0, 0);

  /* Bcast from root */
  for (long i = 0; i < n; i++) a[i] = rank == root ? val(root, i) : -1;
  start(c);
  MPI_Bcast(a, (int)n, MPI_INT, root, MPI_COMM_WORLD);
  stop(c, "Bcast", n, bytes);
  for (long i = 0; i < n; i++) expect_int(c, "Bcast", n, i, a[i], val(root, i));

  /* Reduce (sum of ints) to root */
  for (long i = 0; i < n; i++) { a[i] = val(rank, i); b[i] = -1; }
  start(c);
  MPI_Reduce(a, b, (int)n, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD);
  stop(c, "Reduce", n, bytes);
  if (rank == root)
    for (long i = 0; i < n; i++) {
      int want = 0;
      for (int r = 0; r < np; r++) want += val(r, i);
      expect_int(c, "Reduce", n, i, b[i], want);
    }

  /* Allreduce (sum of doubles, and max of ints) */
  for (long i = 0; i < n; i++) { da[i] = val(rank, i) * 0.5; db[i] = -1; }
  start(c);
  MPI_Allreduce(da, db, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  stop(c, "Allreduce", n, n * (long)sizeof(double));
  for (long i = 0; i < n; i++) {
    double want = 0;
    for (int r = 0; r < np; r++) want += val(r, i) * 0.5;
    if (db[i] != want) {
      if (c->errors < 10)
        fprintf(stderr, "collectives: rank %d: Allreduce count=%ld: element %ld is %g, expected %g\n", rank, n, i, db[i],
                want);
      c->errors++;
    }
  }
  for (long i = 0; i < n; i++) { a[i] = val((rank + (int)i) % np, i); b[i] = -1; }
  MPI_Allreduce(a, b, (int)n, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  for (long i = 0; i < n; i++) {
    int want = val(0, i);
    for (int r = 1; r < np; r++) want = val(r, i) > want ? val(r, i) : want;
    expect_int(c, "Allreduce(MAX)", n, i, b[i], want);
  }

  /* Gather to root: block r of the result is rank r's contribution */
  for (long i = 0; i < n; i++) a[i] = val(rank, i);
  for (long i = 0; i < n * np; i++) b[i] = -1;
  start(c);
  MPI_Gather(a, (int)n, MPI_INT, b, (int)n, MPI_INT, root, MPI_COMM_WORLD);
  stop(c, "Gather", n, bytes);
  if (rank == root)
    for (int r = 0; r < np; r++)
      for (long i = 0; i < n; i++) expect_int(c, "Gather", n, r * n + i, b[r * n + i], val(r, i));

  /* Scatter from root: block r goes to rank r */
  for (long i = 0; i < n * np; i++) a[i] = rank == root ? val((int)(i / n), i % n + 3) : -1;
  for (long i = 0; i < n; i++) b[i] = -1;
  start(c);
  MPI_Scatter(a, (int)n, MPI_INT, b, (int)n, MPI_INT, root, MPI_COMM_WORLD);
  stop(c, "Scatter", n, bytes);
  for (long i = 0; i < n; i++) expect_int(c, "Scatter", n, i, b[i], val(rank, i + 3));

  /* Allgather */
  for (long i = 0; i < n; i++) a[i] = val(rank, i + 5);
  for (long i = 0; i < n * np; i++) b[i] = -1;
  start(c);
  MPI_Allgather(a, (int)n, MPI_INT, b, (int)n, MPI_INT, MPI_COMM_WORLD);
  stop(c, "Allgather", n, bytes);
  for (int r = 0; r < np; r++)
    for (long i = 0; i < n; i++) expect_int(c, "Allgather", n, r * n + i, b[r * n + i], val(r, i + 5));

  /* Alltoall: block d of rank s's send buffer goes to block s of rank d */
  for (int d = 0; d < np; d++)
    for (long i = 0; i < n; i++) a[d * n + i] = val(rank, i) * 64 + d % 64;
  for (long i = 0; i < n * np; i++) b[i] = -1;
  start(c);
  MPI_Alltoall(a, (int)n, MPI_INT, b, (int)n, MPI_INT, MPI_COMM_WORLD);
  stop(c, "Alltoall", n, bytes * np);
  for (int s = 0; s < np; s++)
    for (long i = 0; i < n; i++) expect_int(c, "Alltoall", n, s * n + i, b[s * n + i], val(s, i) * 64 + rank % 64);

  free(a);
  free(b);
  free(da);
  free(db);
}

int main(int argc, char **argv)
{
  long counts[32];
  int rank, np, ncounts = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  for (int a = 1; a < argc && ncounts < 32; a++) {
    long c = atol(argv[a]);
    if (c < 1) {
      if (rank == 0) fprintf(stderr, "collectives: bad count '%s'\n", argv[a]);
      MPI_Finalize();
      return 2;
    }
    counts[ncounts++] = c;
  }
  if (ncounts == 0) {
    counts[0] = 1;
    counts[1] = 64;
    counts[2] = 4096;
    ncounts = 3;
  }
  struct ctx c = {rank, np, 0, 0.0};
  for (int k = 0; k < ncounts; k++) run(&c, counts[k], k);

  long total = 0;
  MPI_Allreduce(&c.errors, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) {
    if (total == 0) printf("OK\n");
    else printf("FAIL: %ld wrong elements\n", total);
  }
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}
