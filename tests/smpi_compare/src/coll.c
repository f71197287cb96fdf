/* (e) Every MPI collective with the default selector, timed: barrier, t0, collective, t1;
 * printed = largest (t1 - t0) over ranks. Sizes are bytes per block (per rank for
 * Gather/Scatter/Allgather/Alltoall/Reduce_scatter, whole vector for the others), MPI_DOUBLE,
 * MPI_SUM. Optional argument: largest block size (default 1 MiB). */
#include "common.h"

static double *dbuf(size_t bytes)
{
  return (double *)xmalloc(bytes);
}

int main(int argc, char **argv)
{
  common_init(&argc, &argv);
  long maxsize = argc > 1 ? atol(argv[1]) : (1L << 20);
  const long sizes[] = {8, 1024, 65536, 1L << 20};
  char label[128];
  double t0;
  MPI_Barrier(MPI_COMM_WORLD);
  t0 = MPI_Wtime();
  MPI_Barrier(MPI_COMM_WORLD);
  emit_max("barrier_max", MPI_Wtime() - t0);
  for (int si = 0; si < 4; si++) {
    long S = sizes[si];
    if (S > maxsize)
      break;
    int cnt = (int)(S / 8);
    const char *sn = strdup(size_name(S));
    int np = g_np;
    /* vector collectives: S bytes in total */
    double *a = dbuf(S), *b = dbuf(S);
    memset(a, 0, S);
#define TIMED(name, call)                                                                          \
  do {                                                                                             \
    MPI_Barrier(MPI_COMM_WORLD);                                                                   \
    t0 = MPI_Wtime();                                                                              \
    call;                                                                                          \
    double dt__ = MPI_Wtime() - t0;                                                                \
    snprintf(label, sizeof label, "%s_%s_max", name, sn);                                          \
    emit_max(label, dt__);                                                                         \
  } while (0)
    TIMED("bcast", MPI_Bcast(a, cnt, MPI_DOUBLE, 0, MPI_COMM_WORLD));
    TIMED("bcast_root3", MPI_Bcast(a, cnt, MPI_DOUBLE, 3 % np, MPI_COMM_WORLD));
    TIMED("reduce", MPI_Reduce(a, b, cnt, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD));
    TIMED("allreduce", MPI_Allreduce(a, b, cnt, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
    TIMED("scan", MPI_Scan(a, b, cnt, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
    free(a);
    free(b);
    /* per-rank-block collectives: S bytes per rank */
    if (S <= 65536 || np <= 16) {
      double *s = dbuf((size_t)S * np), *r = dbuf((size_t)S * np);
      memset(s, 0, (size_t)S * np);
      TIMED("gather", MPI_Gather(s, cnt, MPI_DOUBLE, r, cnt, MPI_DOUBLE, 0, MPI_COMM_WORLD));
      TIMED("scatter", MPI_Scatter(s, cnt, MPI_DOUBLE, r, cnt, MPI_DOUBLE, 0, MPI_COMM_WORLD));
      TIMED("allgather", MPI_Allgather(s, cnt, MPI_DOUBLE, r, cnt, MPI_DOUBLE, MPI_COMM_WORLD));
      TIMED("alltoall", MPI_Alltoall(s, cnt, MPI_DOUBLE, r, cnt, MPI_DOUBLE, MPI_COMM_WORLD));
      int *rc = malloc(sizeof(int) * np);
      for (int i = 0; i < np; i++)
        rc[i] = cnt;
      TIMED("reduce_scatter", MPI_Reduce_scatter(s, r, rc, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
      free(rc);
      free(s);
      free(r);
    }
  }
  emit("end_time", MPI_Wtime());
  MPI_Finalize();
  return 0;
}
