/* Shared helpers of the SMPI comparison programs (tests/smpi_compare).
 * Every program prints `label value` lines from rank 0: simulated times read with MPI_Wtime
 * (seconds) or integer counts. Nothing is computed between MPI calls, so the output depends
 * only on the simulator's timing semantics. Run with
 *   --cfg=smpi/simulate-computation:no --cfg=smpi/host-speed:1Gf */
#ifndef SMPI_COMPARE_COMMON_H
#define SMPI_COMPARE_COMMON_H
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int g_rank, g_np;

static void common_init(int *argc, char ***argv)
{
  MPI_Init(argc, argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_np);
}

/* Rank 0 prints `label value`. */
static void emit(const char *label, double v)
{
  if (g_rank == 0) {
    printf("%s %.12e\n", label, v);
    fflush(stdout);
  }
}

static void emit_int(const char *label, long v)
{
  if (g_rank == 0) {
    printf("%s %ld\n", label, v);
    fflush(stdout);
  }
}

/* Prints the largest `dt` over the ranks of MPI_COMM_WORLD (collective). */
static void emit_max(const char *label, double dt)
{
  double m = 0;
  MPI_Reduce(&dt, &m, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  emit(label, m);
}

/* Prints the value of `v` held by rank `who` (collective). */
static void emit_from(const char *label, int who, double v)
{
  if (who == 0) {
    emit(label, v);
    return;
  }
  if (g_rank == who)
    MPI_Send(&v, 1, MPI_DOUBLE, 0, 999, MPI_COMM_WORLD);
  else if (g_rank == 0) {
    MPI_Recv(&v, 1, MPI_DOUBLE, who, 999, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    emit(label, v);
  }
}

/* Buffers are malloc'd and never written by the program: the pages of a large malloc stay
 * shared zero pages on the sending side, which keeps the memory use of 64 ranks low. */
static char *xmalloc(size_t n)
{
  char *p = malloc(n ? n : 1);
  if (!p) {
    fprintf(stderr, "out of memory (%zu bytes)\n", n);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  return p;
}

static const char *size_name(long s)
{
  static char buf[32];
  if (s >= (1L << 20) && s % (1L << 20) == 0)
    snprintf(buf, sizeof buf, "%ldMiB", s >> 20);
  else if (s >= 1024 && s % 1024 == 0)
    snprintf(buf, sizeof buf, "%ldKiB", s >> 10);
  else
    snprintf(buf, sizeof buf, "%ldB", s);
  return buf;
}

#endif
