/* (f) MPI_Comm_split, then collectives on the sub-communicators.
 * rows: color = rank / 8, key = rank; cols: color = rank % 8, key = -rank (reversed order);
 * halves: color = rank < N/2, key = rank. Times: largest over all ranks of MPI_COMM_WORLD. */
#include "common.h"

int main(int argc, char **argv)
{
  common_init(&argc, &argv);
  char label[128];
  const int w = g_np >= 8 ? 8 : 2;
  for (int kind = 0; kind < 3; kind++) {
    static const char *kname[] = {"rows", "cols", "halves"};
    int color = kind == 0 ? g_rank / w : kind == 1 ? g_rank % w : g_rank < g_np / 2;
    int key = kind == 1 ? -g_rank : g_rank;
    MPI_Comm sub;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    MPI_Comm_split(MPI_COMM_WORLD, color, key, &sub);
    snprintf(label, sizeof label, "split_%s_split_max", kname[kind]);
    emit_max(label, MPI_Wtime() - t0);
    int srank, ssize;
    MPI_Comm_rank(sub, &srank);
    MPI_Comm_size(sub, &ssize);
    const long sizes[] = {1024, 1L << 20};
    for (int si = 0; si < 2; si++) {
      long S = sizes[si];
      int cnt = (int)(S / 8);
      double *a = (double *)xmalloc(S * ssize), *b = (double *)xmalloc(S * ssize);
      memset(a, 0, S * ssize);
#define TIMED(name, call)                                                                          \
  do {                                                                                             \
    MPI_Barrier(MPI_COMM_WORLD);                                                                   \
    t0 = MPI_Wtime();                                                                              \
    call;                                                                                          \
    snprintf(label, sizeof label, "split_%s_%s_%s_max", kname[kind], name, size_name(S));          \
    emit_max(label, MPI_Wtime() - t0);                                                             \
  } while (0)
      TIMED("barrier", MPI_Barrier(sub));
      TIMED("bcast", MPI_Bcast(a, cnt, MPI_DOUBLE, 0, sub));
      TIMED("allreduce", MPI_Allreduce(a, b, cnt, MPI_DOUBLE, MPI_SUM, sub));
      TIMED("reduce", MPI_Reduce(a, b, cnt, MPI_DOUBLE, MPI_SUM, ssize - 1, sub));
      TIMED("gather", MPI_Gather(a, cnt, MPI_DOUBLE, b, cnt, MPI_DOUBLE, 0, sub));
      TIMED("allgather", MPI_Allgather(a, cnt, MPI_DOUBLE, b, cnt, MPI_DOUBLE, sub));
      TIMED("alltoall", MPI_Alltoall(a, cnt / ssize > 0 ? cnt / ssize : 1, MPI_DOUBLE, b,
                                     cnt / ssize > 0 ? cnt / ssize : 1, MPI_DOUBLE, sub));
      /* all sub-communicators at once vs. the world: point-to-point inside sub */
      TIMED("ring", MPI_Sendrecv(a, cnt, MPI_DOUBLE, (srank + 1) % ssize, 5, b, cnt, MPI_DOUBLE,
                                 (srank + ssize - 1) % ssize, 5, sub, MPI_STATUS_IGNORE));
      free(a);
      free(b);
    }
    MPI_Comm_free(&sub);
  }
  emit("end_time", MPI_Wtime());
  MPI_Finalize();
  return 0;
}
