/* (i) Probe race: a rank probes at the very date another rank posts the message it looks for.
 * Rank 2 sends 1000 bytes to ranks 0 and 1 at once (on symmetric routes both arrive at one
 * date; `first` is the rank sent to first); on arrival rank 1 sends S bytes to rank 0 (tag 7)
 * while rank 0 polls MPI_Iprobe(1, 7) until it sees the message, then receives it. SimGrid
 * probes the mailbox when it handles the probe's simcall, and handles one date's simcalls in
 * the order their ranks ran: a probe misses a send posted by a rank that runs after the
 * prober at that date. With first = 1, SimGrid runs rank 0 first (observed), so with
 * smpi/iprobe:0 (no polling delay) rank 0 needs a second probe, at the same date; probing
 * after the other ranks of the date ran takes one.
 * Printed: number of probes, date the message was seen, end of the receive; for first = 0, 1
 * and S = 8 B (eager) and 100000 B (rendezvous). Ranks beyond 2 only join the barriers. */
#include "common.h"

int main(int argc, char **argv)
{
  common_init(&argc, &argv);
  const long sizes[] = {8, 100000};
  char *buf = xmalloc(100000);
  char label[64];
  for (int first = 0; first < 2; first++)
    for (int si = 0; si < 2; si++) {
      long S = sizes[si];
      int probes = 0;
      double seen = 0, end = 0;
      MPI_Barrier(MPI_COMM_WORLD);
      if (g_rank == 0 || g_rank == 1)
        MPI_Recv(buf, 1000, MPI_BYTE, 2, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      if (g_rank == 0) {
        int flag = 0;
        while (!flag) {
          MPI_Iprobe(1, 7, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
          probes++;
        }
        seen = MPI_Wtime();
        MPI_Recv(buf, (int)S, MPI_BYTE, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        end = MPI_Wtime();
      } else if (g_rank == 1) {
        MPI_Send(buf, (int)S, MPI_BYTE, 0, 7, MPI_COMM_WORLD);
      } else if (g_rank == 2) {
        MPI_Request r[2];
        MPI_Isend(buf, 1000, MPI_BYTE, first, 1, MPI_COMM_WORLD, &r[0]);
        MPI_Isend(buf, 1000, MPI_BYTE, 1 - first, 1, MPI_COMM_WORLD, &r[1]);
        MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
      }
      snprintf(label, sizeof label, "probe_race_first%d_%s_probes", first, size_name(S));
      emit_int(label, probes);
      snprintf(label, sizeof label, "probe_race_first%d_%s_seen", first, size_name(S));
      emit(label, seen);
      snprintf(label, sizeof label, "probe_race_first%d_%s_recv_end", first, size_name(S));
      emit(label, end);
    }
  MPI_Finalize();
  return 0;
}
