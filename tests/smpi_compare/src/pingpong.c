/* (c) Point-to-point around the protocol thresholds and the SMPI factor boundaries.
 * Payload sizes 1 .. 1 MiB including 65535/65536/65537 (detached / async-small thresholds),
 * 65455..65457 and 241/242, 256/257, 1410/1411 (factor-chunk boundaries 65472, 257, 1426
 * with or without the 16-byte envelope). For each size and peer (rank 1, rank N-1):
 *   rtt        : one warm-up then one timed MPI_Send/MPI_Recv round trip (rank 0 clock)
 *   lr_send    : late receiver (peer sleeps 100 us before MPI_Recv): when MPI_Send returns
 *   lr_recv    :   ... when the peer's MPI_Recv returns (relative to rank 0's start)
 *   ls_send    : late sender (rank 0 sleeps 100 us before MPI_Send): MPI_Send return
 *   ls_recv    :   ... peer's MPI_Recv return
 *   is_ret/is_wait : late receiver, rank 0 MPI_Isend then MPI_Wait: when each returns
 * All relative to rank 0's MPI_Wtime after a barrier. */
#include "common.h"

static double bar_t0(void)
{
  MPI_Barrier(MPI_COMM_WORLD);
  double t = MPI_Wtime();
  /* broadcast rank 0's start so every rank reports relative to it */
  MPI_Bcast(&t, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  return t;
}

int main(int argc, char **argv)
{
  common_init(&argc, &argv);
  const long sizes[] = {1, 241, 242, 256, 257, 1410, 1411, 65455, 65456, 65457, 65535, 65536, 65537, 1L << 20};
  const int ns = sizeof sizes / sizeof sizes[0];
  char *buf = xmalloc(1L << 20);
  char label[128];
  int peers[2] = {1, g_np - 1};
  int npeers = g_np - 1 == 1 ? 1 : 2;
  for (int p = 0; p < npeers; p++) {
    int peer = peers[p];
    for (int i = 0; i < ns; i++) {
      int S = (int)sizes[i];
      /* round trip */
      MPI_Barrier(MPI_COMM_WORLD);
      double t0, t1, v = 0;
      if (g_rank == 0) {
        MPI_Send(buf, S, MPI_BYTE, peer, 3, MPI_COMM_WORLD);
        MPI_Recv(buf, S, MPI_BYTE, peer, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        t0 = MPI_Wtime();
        MPI_Send(buf, S, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
        MPI_Recv(buf, S, MPI_BYTE, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        t1 = MPI_Wtime();
        snprintf(label, sizeof label, "pp_p%d_%dB_rtt", peer, S);
        emit(label, t1 - t0);
      } else if (g_rank == peer) {
        MPI_Recv(buf, S, MPI_BYTE, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(buf, S, MPI_BYTE, 0, 4, MPI_COMM_WORLD);
        MPI_Recv(buf, S, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(buf, S, MPI_BYTE, 0, 2, MPI_COMM_WORLD);
      }
      /* late receiver */
      t0 = bar_t0();
      if (g_rank == 0) {
        MPI_Send(buf, S, MPI_BYTE, peer, 5, MPI_COMM_WORLD);
        v = MPI_Wtime() - t0;
      } else if (g_rank == peer) {
        usleep(100);
        MPI_Recv(buf, S, MPI_BYTE, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        v = MPI_Wtime() - t0;
      }
      snprintf(label, sizeof label, "pp_p%d_%dB_lr_send", peer, S);
      emit_from(label, 0, v);
      snprintf(label, sizeof label, "pp_p%d_%dB_lr_recv", peer, S);
      emit_from(label, peer, v);
      /* late sender */
      t0 = bar_t0();
      if (g_rank == 0) {
        usleep(100);
        MPI_Send(buf, S, MPI_BYTE, peer, 6, MPI_COMM_WORLD);
        v = MPI_Wtime() - t0;
      } else if (g_rank == peer) {
        MPI_Recv(buf, S, MPI_BYTE, 0, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        v = MPI_Wtime() - t0;
      }
      snprintf(label, sizeof label, "pp_p%d_%dB_ls_send", peer, S);
      emit_from(label, 0, v);
      snprintf(label, sizeof label, "pp_p%d_%dB_ls_recv", peer, S);
      emit_from(label, peer, v);
      /* Isend + Wait, late receiver */
      t0 = bar_t0();
      double w = 0;
      if (g_rank == 0) {
        MPI_Request r;
        MPI_Isend(buf, S, MPI_BYTE, peer, 7, MPI_COMM_WORLD, &r);
        v = MPI_Wtime() - t0;
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        w = MPI_Wtime() - t0;
      } else if (g_rank == peer) {
        usleep(100);
        MPI_Recv(buf, S, MPI_BYTE, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      }
      snprintf(label, sizeof label, "pp_p%d_%dB_is_ret", peer, S);
      emit_from(label, 0, v);
      snprintf(label, sizeof label, "pp_p%d_%dB_is_wait", peer, S);
      emit_from(label, 0, w);
    }
  }
  emit("end_time", MPI_Wtime());
  MPI_Finalize();
  return 0;
}
