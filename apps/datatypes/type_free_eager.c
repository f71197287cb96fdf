/* Reproducer: a small (eager/detached) MPI_Send with a derived datatype whose type is freed
 * (MPI_Type_free) by the sender before the receiver matches the message.
 * MPI: "Any communication that is currently using this datatype will complete normally."
 * mode 0: no free               -> expect data received
 * mode 1: free after send       -> expect data received
 * mode 2: free, then create another (bigger) type with the same handle number, as HPL does
 *         for the next panel     -> expect data received, no error                       */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
static MPI_Datatype make(double *a, double *b, int c1, int c2) {
  int blen[2] = {c1, c2}; MPI_Aint disp[2]; MPI_Datatype types[2] = {MPI_DOUBLE, MPI_DOUBLE}, t;
  MPI_Get_address(a, &disp[0]); MPI_Get_address(b, &disp[1]); disp[1] -= disp[0]; disp[0] = 0;
  MPI_Type_create_struct(2, blen, disp, types, &t); MPI_Type_commit(&t); return t;
}
int main(int argc, char **argv) {
  int rank, i, mode = atoi(argv[1]), bad = 0; MPI_Init(&argc, &argv); MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  double *a = malloc(1000 * sizeof(double)), *b = malloc(1000 * sizeof(double));
  MPI_Datatype t = make(a, b, 100, 50), t2;
  for (i = 0; i < 1000; i++) { a[i] = rank == 0 ? i : -1; b[i] = rank == 0 ? 10000 + i : -1; }
  if (rank == 0) {
    MPI_Send(a, 1, t, 1, 0, MPI_COMM_WORLD);          /* 1200 bytes: returns at once */
    if (mode >= 1) MPI_Type_free(&t);
    if (mode >= 2) { t2 = make(a, b, 300, 100); printf("rank 0: freed type handle %ld, new type handle %ld\n", (long)t, (long)t2); }
  } else {
    double t0 = MPI_Wtime(); while (MPI_Wtime() - t0 < 1e-3) ;  /* let the sender go on first */
    MPI_Recv(a, 1, t, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (i = 0; i < 100; i++) bad += a[i] != i;
    for (i = 0; i < 50; i++) bad += b[i] != 10000 + i;
    printf("mode %d: %d of 150 doubles wrong%s\n", mode, bad, bad ? "  <-- BUG" : "");
  }
  MPI_Finalize(); return 0;
}
