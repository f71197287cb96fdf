/* MPI_Reduce_scatter with unequal counts (rank i gets base + i*(base/3+1)
 * doubles), checked against the sum it must give; prints each rank's time, to
 * compare with SMPI 3.32 (unequal counts go to MPICH's algorithm choice).
 * Usage: reduce_scatter_uneven [base] [noncomm]: noncomm uses a
 * non-commutative user operation (the result is then checked for rank order). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

/* inout = in "then" inout: keeps the smallest rank's value, a non-commutative op. */
static void ordered(void *in, void *inout, int *len, MPI_Datatype *dt) {
  (void)dt;
  double *a = in, *b = inout;
  for (int i = 0; i < *len; i++) b[i] = a[i];
}

int main(int argc, char **argv) {
  int rank, size;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int base = argc > 1 ? atoi(argv[1]) : 10;
  int noncomm = argc > 2;
  MPI_Op op = MPI_SUM;
  if (noncomm) MPI_Op_create(ordered, 0, &op);
  int counts[64]; int total = 0;
  for (int i = 0; i < size; i++) { counts[i] = base + i * (base / 3 + 1); total += counts[i]; }
  double *sbuf = malloc(total * sizeof(double)), *rbuf = malloc(counts[rank] * sizeof(double));
  for (int i = 0; i < total; i++) sbuf[i] = rank * 1000 + i;
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  MPI_Reduce_scatter(sbuf, rbuf, counts, MPI_DOUBLE, op, MPI_COMM_WORLD);
  double t1 = MPI_Wtime();
  int off = 0; for (int i = 0; i < rank; i++) off += counts[i];
  int ok = 1;
  for (int j = 0; j < counts[rank]; j++) {
    double want = 0;
    if (noncomm) want = off + j; /* rank 0's value */
    else for (int r = 0; r < size; r++) want += r * 1000 + off + j;
    if (rbuf[j] != want) ok = 0;
  }
  printf("[%d] reduce_scatter %.9f %s\n", rank, t1 - t0, ok ? "ok" : "WRONG");
  if (noncomm) MPI_Op_free(&op);
  free(sbuf);
  free(rbuf);
  MPI_Finalize();
  return 0;
}
