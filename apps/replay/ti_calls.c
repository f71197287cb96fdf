/* ti_calls: one call of each MPI operation SMPI's time-independent (TI) trace format records,
 * on 4 ranks, so that our `smpirun -trace-ti` can be compared line by line with SMPI 3.32's
 * recording of the same program (ti_calls.smpi-3.32.txt, its compute lines left out since
 * they measure this machine).
 *
 * demonstrates: send/recv, isend/irecv with test, wait and waitall, sendrecv, every blocking
 * collective (with roots 0 and non-zero), a computation between calls, and collectives on a
 * split and a duplicated communicator (written without their communicator, as SMPI does).
 *
 * Prints "done 1" from rank 0. Run with exactly 4 ranks. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  int rank, np;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  int n = 10000;
  double *a = calloc(n * np, sizeof(double)), *b = calloc(n * np, sizeof(double));
  int *cnt = malloc(np * sizeof(int)), *dsp = malloc(np * sizeof(int)), *scnt = malloc(np * sizeof(int));
  for (int i = 0; i < np; i++) { cnt[i] = 10 + i; dsp[i] = i * n; scnt[i] = 10 + rank; }
  int next = (rank + 1) % np, prev = (rank + np - 1) % np;
  MPI_Send(a, 100, MPI_DOUBLE, next, 1, MPI_COMM_WORLD);
  MPI_Recv(b, 100, MPI_DOUBLE, prev, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Request r[2]; int flag;
  MPI_Irecv(b, 50, MPI_INT, prev, 2, MPI_COMM_WORLD, &r[0]);
  /* Nobody sends with tag 2 before the barrier: the test fails on every platform. */
  MPI_Test(&r[0], &flag, MPI_STATUS_IGNORE);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Isend(a, 50, MPI_INT, next, 2, MPI_COMM_WORLD, &r[1]);
  MPI_Wait(&r[0], MPI_STATUS_IGNORE);
  MPI_Wait(&r[1], MPI_STATUS_IGNORE);
  MPI_Irecv(b, 70000, MPI_CHAR, prev, 3, MPI_COMM_WORLD, &r[0]);
  MPI_Isend(a, 70000, MPI_CHAR, next, 3, MPI_COMM_WORLD, &r[1]);
  MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
  MPI_Sendrecv(a, 10, MPI_DOUBLE, next, 4, b, 10, MPI_DOUBLE, prev, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  double s = 0; for (int i = 0; i < 20000000; i++) s += i * 0.5; a[0] = s;
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Bcast(a, 1000, MPI_DOUBLE, 1, MPI_COMM_WORLD);
  MPI_Bcast(a, 1000, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  MPI_Reduce(a, b, 500, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  MPI_Reduce(a, b, 500, MPI_INT, MPI_SUM, 2, MPI_COMM_WORLD);
  MPI_Allreduce(a, b, 700, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  MPI_Alltoall(a, 20, MPI_DOUBLE, b, 20, MPI_DOUBLE, MPI_COMM_WORLD);
  MPI_Alltoallv(a, scnt, dsp, MPI_DOUBLE, b, cnt, dsp, MPI_DOUBLE, MPI_COMM_WORLD);
  MPI_Gather(a, 30, MPI_DOUBLE, b, 30, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  MPI_Gather(a, 30, MPI_DOUBLE, b, 30, MPI_DOUBLE, 1, MPI_COMM_WORLD);
  MPI_Gatherv(a, 10 + rank, MPI_DOUBLE, b, cnt, dsp, MPI_DOUBLE, 1, MPI_COMM_WORLD);
  MPI_Scatter(a, 30, MPI_DOUBLE, b, 30, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  MPI_Scatterv(a, cnt, dsp, MPI_DOUBLE, b, 10 + rank, MPI_DOUBLE, 2, MPI_COMM_WORLD);
  MPI_Allgather(a, 40, MPI_DOUBLE, b, 40, MPI_DOUBLE, MPI_COMM_WORLD);
  MPI_Allgatherv(a, 10 + rank, MPI_DOUBLE, b, cnt, dsp, MPI_DOUBLE, MPI_COMM_WORLD);
  MPI_Reduce_scatter(a, b, cnt, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  MPI_Scan(a, b, 60, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  MPI_Exscan(a, b, 60, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  MPI_Comm c2, c3;
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &c2);
  MPI_Comm_dup(MPI_COMM_WORLD, &c3);
  MPI_Bcast(a, 10, MPI_DOUBLE, 0, c2);
  MPI_Allreduce(a, b, 7, MPI_DOUBLE, MPI_SUM, c3);
  MPI_Comm_free(&c2); MPI_Comm_free(&c3);
  MPI_Finalize();
  if (rank == 0) printf("done %g\n", b[0] > -1 ? 1.0 : 0.0);
  return 0;
}
