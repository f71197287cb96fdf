/* (a) Incast: ranks 1..N-1 send S bytes to rank 0 at the same time.
 * Variants (each after a barrier):
 *   recvany : senders MPI_Isend+MPI_Wait, root N-1 x MPI_Recv(MPI_ANY_SOURCE)
 *   waitall : senders MPI_Isend+MPI_Wait, root N-1 x MPI_Irecv (one per source) + MPI_Waitall
 *   blocking: senders MPI_Send,           root MPI_Recv from 1, 2, ... in order
 * Printed per size S: root time, largest sender time, time of the first arrival (recvany),
 * and a hash of the ANY_SOURCE arrival order (sum over i of (i+1)*source(i)).
 * Optional argument: largest size (default 16 MiB). */
#include "common.h"

int main(int argc, char **argv)
{
  common_init(&argc, &argv);
  long maxsize = argc > 1 ? atol(argv[1]) : (16L << 20);
  const long sizes[] = {1024, 65536, 1L << 20, 16L << 20};
  char label[128];
  for (int si = 0; si < 4; si++) {
    long S = sizes[si];
    if (S > maxsize)
      break;
    char *buf = xmalloc(S);
    const char *sn = strdup(size_name(S));
    int n = g_np - 1;
    /* recvany */
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime(), dt, first = 0;
    long hash = 0;
    if (g_rank == 0) {
      for (int i = 0; i < n; i++) {
        MPI_Status st;
        MPI_Recv(buf, (int)S, MPI_BYTE, MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, &st);
        if (i == 0)
          first = MPI_Wtime() - t0;
        hash += (long)(i + 1) * st.MPI_SOURCE;
      }
      dt = MPI_Wtime() - t0;
    } else {
      MPI_Request r;
      MPI_Isend(buf, (int)S, MPI_BYTE, 0, 1, MPI_COMM_WORLD, &r);
      MPI_Wait(&r, MPI_STATUS_IGNORE);
      dt = MPI_Wtime() - t0;
    }
    snprintf(label, sizeof label, "incast_recvany_%s_root", sn);
    emit(label, dt);
    snprintf(label, sizeof label, "incast_recvany_%s_first", sn);
    emit(label, first);
    snprintf(label, sizeof label, "incast_recvany_%s_order_hash", sn);
    emit_int(label, hash);
    snprintf(label, sizeof label, "incast_recvany_%s_max", sn);
    emit_max(label, g_rank == 0 ? 0 : dt);

    /* waitall */
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    if (g_rank == 0) {
      MPI_Request *rq = malloc(sizeof(MPI_Request) * n);
      for (int i = 0; i < n; i++)
        MPI_Irecv(buf, (int)S, MPI_BYTE, i + 1, 2, MPI_COMM_WORLD, &rq[i]);
      MPI_Waitall(n, rq, MPI_STATUSES_IGNORE);
      free(rq);
      dt = MPI_Wtime() - t0;
    } else {
      MPI_Request r;
      MPI_Isend(buf, (int)S, MPI_BYTE, 0, 2, MPI_COMM_WORLD, &r);
      MPI_Wait(&r, MPI_STATUS_IGNORE);
      dt = MPI_Wtime() - t0;
    }
    snprintf(label, sizeof label, "incast_waitall_%s_root", sn);
    emit(label, dt);
    snprintf(label, sizeof label, "incast_waitall_%s_max", sn);
    emit_max(label, g_rank == 0 ? 0 : dt);

    /* blocking, root receives in rank order */
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    if (g_rank == 0) {
      for (int i = 1; i <= n; i++)
        MPI_Recv(buf, (int)S, MPI_BYTE, i, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      dt = MPI_Wtime() - t0;
    } else {
      MPI_Send(buf, (int)S, MPI_BYTE, 0, 3, MPI_COMM_WORLD);
      dt = MPI_Wtime() - t0;
    }
    snprintf(label, sizeof label, "incast_blocking_%s_root", sn);
    emit(label, dt);
    snprintf(label, sizeof label, "incast_blocking_%s_max", sn);
    emit_max(label, g_rank == 0 ? 0 : dt);
    free(buf);
  }
  emit("end_time", MPI_Wtime());
  MPI_Finalize();
  return 0;
}
