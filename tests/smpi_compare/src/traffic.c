/* (h) Traffic: rounds of shifted exchanges of mixed sizes, started after rank-dependent
 * sleeps on a coarse time grid, so that flow ends, latency ends and starts often fall on one
 * date. The times then depend on which flows the simulator re-solves at each date and in
 * what order (SimGrid's selective update), not only on the bandwidth shares.
 * Round r: rank i sleeps a multiple of 50 us, then sends to (i + shift_r) mod N and receives
 * from (i - shift_r) mod N (MPI_Irecv + MPI_Isend + MPI_Waitall); sizes cycle through
 * eager and rendezvous sizes. Printed: each rank's end time of every round (seeded by the
 * optional argument, default 1). */
#include "common.h"

#define ROUNDS 8

static unsigned next(unsigned *s)
{
  *s = *s * 1103515245u + 12345u;
  return (*s >> 16) & 0x7fff;
}

int main(int argc, char **argv)
{
  common_init(&argc, &argv);
  unsigned seed = argc > 1 ? (unsigned)atoi(argv[1]) : 1u;
  const long sizes[] = {8, 1000, 20000, 65536, 200000, 1L << 20};
  char *sb = xmalloc(1L << 20), *rb = xmalloc(1L << 20);
  double ends[ROUNDS];
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  for (int r = 0; r < ROUNDS; r++) {
    unsigned s = seed * 7919u + (unsigned)r * 104729u;
    int shift = 1 + (int)(next(&s) % (unsigned)(g_np - 1));
    unsigned mine = s + (unsigned)g_rank * 31u;
    unsigned from_s = s + (unsigned)((g_rank - shift + g_np) % g_np) * 31u;
    long send_size = sizes[next(&mine) % 6];
    long recv_size = sizes[next(&from_s) % 6];
    usleep(50 * (next(&mine) % 4));
    MPI_Request req[2];
    MPI_Irecv(rb, (int)recv_size, MPI_BYTE, (g_rank - shift + g_np) % g_np, r, MPI_COMM_WORLD, &req[0]);
    MPI_Isend(sb, (int)send_size, MPI_BYTE, (g_rank + shift) % g_np, r, MPI_COMM_WORLD, &req[1]);
    MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
    ends[r] = MPI_Wtime() - t0;
  }
  double *all = g_rank == 0 ? (double *)xmalloc(sizeof(double) * ROUNDS * g_np) : NULL;
  MPI_Gather(ends, ROUNDS, MPI_DOUBLE, all, ROUNDS, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  char label[64];
  for (int i = 0; i < g_np; i++)
    for (int r = 0; r < ROUNDS; r++) {
      snprintf(label, sizeof label, "traffic_r%d_round%d", i, r);
      emit(label, g_rank == 0 ? all[i * ROUNDS + r] : 0);
    }
  MPI_Finalize();
  return 0;
}
