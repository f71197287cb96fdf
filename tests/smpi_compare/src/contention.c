/* (b) Contention: all pairs exchange at the same time.
 * Patterns: half  = partner (i + N/2) mod N (crosses the top of a fat tree),
 *           xor8  = partner i ^ (N/8) (when N >= 8: neighbour leaf switch),
 * Variants: sendrecv (MPI_Sendrecv), nb (MPI_Irecv + MPI_Isend + MPI_Waitall),
 *           oneway (lower rank of each pair MPI_Send, upper MPI_Recv).
 * Printed: largest time over ranks. Optional argument: largest size (default 16 MiB). */
#include "common.h"

int main(int argc, char **argv)
{
  common_init(&argc, &argv);
  long maxsize = argc > 1 ? atol(argv[1]) : (16L << 20);
  const long sizes[] = {1024, 65536, 1L << 20, 16L << 20};
  char label[128];
  for (int pat = 0; pat < 2; pat++) {
    int partner;
    const char *pn;
    if (pat == 0) {
      partner = (g_rank + g_np / 2) % g_np;
      pn = "half";
    } else {
      if (g_np < 8)
        continue;
      partner = g_rank ^ (g_np / 8);
      pn = "xor";
    }
    for (int si = 0; si < 4; si++) {
      long S = sizes[si];
      if (S > maxsize)
        break;
      char *sb = xmalloc(S), *rb = xmalloc(S);
      const char *sn = strdup(size_name(S));
      MPI_Barrier(MPI_COMM_WORLD);
      double t0 = MPI_Wtime();
      MPI_Sendrecv(sb, (int)S, MPI_BYTE, partner, 1, rb, (int)S, MPI_BYTE, partner, 1, MPI_COMM_WORLD,
                   MPI_STATUS_IGNORE);
      double dt = MPI_Wtime() - t0;
      snprintf(label, sizeof label, "contention_%s_sendrecv_%s_max", pn, sn);
      emit_max(label, dt);

      MPI_Barrier(MPI_COMM_WORLD);
      t0 = MPI_Wtime();
      MPI_Request rq[2];
      MPI_Irecv(rb, (int)S, MPI_BYTE, partner, 2, MPI_COMM_WORLD, &rq[0]);
      MPI_Isend(sb, (int)S, MPI_BYTE, partner, 2, MPI_COMM_WORLD, &rq[1]);
      MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
      dt = MPI_Wtime() - t0;
      snprintf(label, sizeof label, "contention_%s_nb_%s_max", pn, sn);
      emit_max(label, dt);

      MPI_Barrier(MPI_COMM_WORLD);
      t0 = MPI_Wtime();
      if (g_rank < partner)
        MPI_Send(sb, (int)S, MPI_BYTE, partner, 3, MPI_COMM_WORLD);
      else
        MPI_Recv(rb, (int)S, MPI_BYTE, partner, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      dt = MPI_Wtime() - t0;
      snprintf(label, sizeof label, "contention_%s_oneway_%s_max", pn, sn);
      emit_max(label, dt);
      free(sb);
      free(rb);
    }
  }
  emit("end_time", MPI_Wtime());
  MPI_Finalize();
  return 0;
}
