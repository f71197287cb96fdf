/* (d) Point-to-point semantics: synchronous sends, Test/Iprobe polling loops (number of
 * calls and time: SMPI injects smpi/test and smpi/iprobe costs that grow with consecutive
 * failures), Probe, Waitany over several sources, Sendrecv ring.
 * Needs >= 2 ranks; the multi-poller and Waitany cases use up to 8. */
#include "common.h"

static double bar_t0(void)
{
  MPI_Barrier(MPI_COMM_WORLD);
  double t = MPI_Wtime();
  MPI_Bcast(&t, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  return t;
}

int main(int argc, char **argv)
{
  common_init(&argc, &argv);
  char *buf = xmalloc(1L << 20), *rbuf = xmalloc(1L << 20);
  char label[128];
  const long sizes[] = {1024, 1L << 20};
  for (int si = 0; si < 2; si++) {
    int S = (int)sizes[si];
    const char *sn = strdup(size_name(S));
    double t0, v = 0, w = 0;
    /* Ssend round trip */
    MPI_Barrier(MPI_COMM_WORLD);
    if (g_rank == 0) {
      MPI_Ssend(buf, S, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
      MPI_Recv(buf, S, MPI_BYTE, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      t0 = MPI_Wtime();
      MPI_Ssend(buf, S, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
      MPI_Recv(buf, S, MPI_BYTE, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      v = MPI_Wtime() - t0;
    } else if (g_rank == 1) {
      for (int k = 0; k < 2; k++) {
        MPI_Recv(buf, S, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Ssend(buf, S, MPI_BYTE, 0, 2, MPI_COMM_WORLD);
      }
    }
    snprintf(label, sizeof label, "ssend_%s_rtt", sn);
    emit(label, v);
    /* Ssend vs Send with a late receiver */
    for (int mode = 0; mode < 3; mode++) {
      static const char *mname[] = {"send", "ssend", "issend"};
      t0 = bar_t0();
      if (g_rank == 0) {
        if (mode == 0)
          MPI_Send(buf, S, MPI_BYTE, 1, 3, MPI_COMM_WORLD);
        else if (mode == 1)
          MPI_Ssend(buf, S, MPI_BYTE, 1, 3, MPI_COMM_WORLD);
        else {
          MPI_Request r;
          MPI_Issend(buf, S, MPI_BYTE, 1, 3, MPI_COMM_WORLD, &r);
          w = MPI_Wtime() - t0;
          MPI_Wait(&r, MPI_STATUS_IGNORE);
        }
        v = MPI_Wtime() - t0;
      } else if (g_rank == 1) {
        usleep(100);
        MPI_Recv(rbuf, S, MPI_BYTE, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        v = MPI_Wtime() - t0;
      }
      snprintf(label, sizeof label, "late_recv_%s_%s_sender", mname[mode], sn);
      emit_from(label, 0, v);
      if (mode == 2) {
        snprintf(label, sizeof label, "late_recv_%s_%s_issend_ret", mname[mode], sn);
        emit_from(label, 0, w);
      }
      snprintf(label, sizeof label, "late_recv_%s_%s_receiver", mname[mode], sn);
      emit_from(label, 1, v);
    }
    /* Isend + Test polling, receiver late by 1 ms */
    t0 = bar_t0();
    long count = 0;
    if (g_rank == 0) {
      MPI_Request r;
      int flag = 0;
      MPI_Isend(buf, S, MPI_BYTE, 1, 4, MPI_COMM_WORLD, &r);
      while (!flag) {
        MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
        count++;
      }
      v = MPI_Wtime() - t0;
    } else if (g_rank == 1) {
      usleep(1000);
      MPI_Recv(rbuf, S, MPI_BYTE, 0, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    snprintf(label, sizeof label, "isend_test_%s_time", sn);
    emit(label, v);
    snprintf(label, sizeof label, "isend_test_%s_calls", sn);
    emit_int(label, count);
    /* Irecv + Test polling, sender late by 1 ms */
    t0 = bar_t0();
    count = 0;
    if (g_rank == 1) {
      MPI_Request r;
      int flag = 0;
      MPI_Irecv(rbuf, S, MPI_BYTE, 0, 5, MPI_COMM_WORLD, &r);
      while (!flag) {
        MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
        count++;
      }
      v = MPI_Wtime() - t0;
    } else if (g_rank == 0) {
      usleep(1000);
      MPI_Send(buf, S, MPI_BYTE, 1, 5, MPI_COMM_WORLD);
    }
    snprintf(label, sizeof label, "irecv_test_%s_time", sn);
    emit_from(label, 1, v);
    snprintf(label, sizeof label, "irecv_test_%s_calls", sn);
    emit_from(label, 1, (double)count);
    /* Iprobe polling, sender late by 1 ms */
    t0 = bar_t0();
    count = 0;
    if (g_rank == 1) {
      int flag = 0;
      MPI_Status st;
      while (!flag) {
        MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
        count++;
      }
      w = MPI_Wtime() - t0;
      MPI_Recv(rbuf, S, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      v = MPI_Wtime() - t0;
    } else if (g_rank == 0) {
      usleep(1000);
      MPI_Send(buf, S, MPI_BYTE, 1, 6, MPI_COMM_WORLD);
    }
    snprintf(label, sizeof label, "iprobe_%s_found", sn);
    emit_from(label, 1, w);
    snprintf(label, sizeof label, "iprobe_%s_recv", sn);
    emit_from(label, 1, v);
    snprintf(label, sizeof label, "iprobe_%s_calls", sn);
    emit_from(label, 1, (double)count);
    /* blocking Probe, sender late by 1 ms */
    t0 = bar_t0();
    if (g_rank == 1) {
      MPI_Status st;
      MPI_Probe(0, 7, MPI_COMM_WORLD, &st);
      w = MPI_Wtime() - t0;
      MPI_Recv(rbuf, S, MPI_BYTE, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      v = MPI_Wtime() - t0;
    } else if (g_rank == 0) {
      usleep(1000);
      MPI_Send(buf, S, MPI_BYTE, 1, 7, MPI_COMM_WORLD);
    }
    snprintf(label, sizeof label, "probe_%s_found", sn);
    emit_from(label, 1, w);
    snprintf(label, sizeof label, "probe_%s_recv", sn);
    emit_from(label, 1, v);
  }

  /* Several ranks poll with Iprobe at once (SMPI 3.32's growing-cost counter is global) */
  int k = g_np - 1 < 3 ? g_np - 1 : 3;
  double t0 = bar_t0(), v = 0, w = 0;
  long count = 0;
  if (g_rank == 0) {
    for (int r = 1; r <= k; r++) {
      usleep(500);
      MPI_Send(buf, 1024, MPI_BYTE, r, 8, MPI_COMM_WORLD);
    }
  } else if (g_rank <= k) {
    int flag = 0;
    while (!flag) {
      MPI_Iprobe(0, 8, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
      count++;
    }
    MPI_Recv(rbuf, 1024, MPI_BYTE, 0, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    v = MPI_Wtime() - t0;
  }
  for (int r = 1; r <= k; r++) {
    snprintf(label, sizeof label, "multi_iprobe_r%d_time", r);
    emit_from(label, r, v);
    snprintf(label, sizeof label, "multi_iprobe_r%d_calls", r);
    emit_from(label, r, (double)count);
  }

  /* Waitany over several sources: rank r sleeps (k+1-r)*50 us then sends r*128 KiB */
  k = g_np - 1 < 7 ? g_np - 1 : 7;
  t0 = bar_t0();
  if (g_rank == 0) {
    MPI_Request rq[7];
    char *rb = xmalloc((size_t)k << 20);
    for (int r = 1; r <= k; r++)
      MPI_Irecv(rb + ((size_t)(r - 1) << 20), r << 17, MPI_BYTE, r, 9, MPI_COMM_WORLD, &rq[r - 1]);
    long hash = 0;
    for (int i = 0; i < k; i++) {
      int idx;
      MPI_Waitany(k, rq, &idx, MPI_STATUS_IGNORE);
      hash = hash * 10 + idx + 1;
      snprintf(label, sizeof label, "waitany_%d_time", i);
      emit(label, MPI_Wtime() - t0);
    }
    emit_int("waitany_order", hash);
    free(rb);
  } else if (g_rank <= k) {
    usleep((k + 1 - g_rank) * 50);
    MPI_Send(buf, g_rank << 17, MPI_BYTE, 0, 9, MPI_COMM_WORLD);
  }

  /* Waitall on a mix of small and large Isends to one peer */
  t0 = bar_t0();
  v = 0;
  if (g_rank == 0) {
    MPI_Request rq[4];
    for (int i = 0; i < 4; i++)
      MPI_Isend(buf, i % 2 ? 1 << 20 : 1024, MPI_BYTE, 1, 10 + i, MPI_COMM_WORLD, &rq[i]);
    MPI_Waitall(4, rq, MPI_STATUSES_IGNORE);
    v = MPI_Wtime() - t0;
  } else if (g_rank == 1) {
    usleep(100);
    for (int i = 3; i >= 0; i--) /* reverse tag order */
      MPI_Recv(rbuf, 1 << 20, MPI_BYTE, 0, 10 + i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    w = MPI_Wtime() - t0;
  }
  emit_from("mixed_waitall_sender", 0, v);
  emit_from("mixed_waitall_receiver", 1, w);

  /* Sendrecv ring */
  for (int si = 0; si < 2; si++) {
    int S = (int)sizes[si];
    int right = (g_rank + 1) % g_np, left = (g_rank + g_np - 1) % g_np;
    MPI_Barrier(MPI_COMM_WORLD);
    double ts = MPI_Wtime();
    MPI_Sendrecv(buf, S, MPI_BYTE, right, 11, rbuf, S, MPI_BYTE, left, 11, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    snprintf(label, sizeof label, "sendrecv_ring_%s_max", size_name(S));
    emit_max(label, MPI_Wtime() - ts);
  }
  emit("end_time", MPI_Wtime());
  MPI_Finalize();
  return 0;
}
