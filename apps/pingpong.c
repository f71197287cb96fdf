/* pingpong: MPI_Send/MPI_Recv round trips between ranks 0 and 1.
 *
 * demonstrates: blocking point-to-point, eager (small) and rendezvous (large)
 * messages, MPI_Wtime as simulated time.
 *
 * Usage: pingpong [-i iterations] [size ...]
 *   sizes in bytes, with an optional k/K (KiB) or m/M (MiB) suffix;
 *   default: 1 B to 256 MiB by powers of 4; default iterations: 1.
 *
 * For each size: one untimed warm-up round trip (synchronises the pair), then
 * `iterations` timed round trips. Rank 0 prints, per size:
 *   pingpong size=<B> iters=<n> rtt=<s> one_way=<s> bw=<B/s>
 * where rtt is the mean round-trip time. Rank 0 sends a pattern that depends
 * on the size and the round trip; rank 1 checks every message it receives and
 * echoes it; rank 0 checks the echo. Checks run outside the timed region.
 * Other ranks only take part in the final check. Last line: OK (exit 0) or
 * FAIL (exit 1). Needs at least 2 ranks. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SIZES 64

static unsigned char pattern(long i, long size, int round)
{
  return (unsigned char)((i * 7 + size * 13 + round * 29 + (i >> 8)) & 0xff);
}

static void fill(unsigned char *buf, long size, int round)
{
  for (long i = 0; i < size; i++) buf[i] = pattern(i, size, round);
}

/* Returns the number of wrong bytes (reports the first one). */
static long check(const unsigned char *buf, long size, int round, int rank, const char *what)
{
  long bad = 0;
  for (long i = 0; i < size; i++) {
    if (buf[i] != pattern(i, size, round)) {
      if (bad == 0)
        fprintf(stderr, "pingpong: rank %d: %s of size %ld round %d: byte %ld is %d, expected %d\n", rank, what, size,
                round, i, buf[i], pattern(i, size, round));
      bad++;
    }
  }
  return bad;
}

static long parse_size(const char *s)
{
  char *end;
  long v = strtol(s, &end, 10);
  if (end == s || v < 0) return -1;
  if (*end == 'k' || *end == 'K') { v <<= 10; end++; }
  else if (*end == 'm' || *end == 'M') { v <<= 20; end++; }
  if (*end == 'B') end++;
  return *end ? -1 : v;
}

int main(int argc, char **argv)
{
  int rank, np, iters = 1, nsizes = 0;
  long sizes[MAX_SIZES];
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  for (int a = 1; a < argc; a++) {
    if (strcmp(argv[a], "-i") == 0 && a + 1 < argc) {
      iters = atoi(argv[++a]);
    } else {
      long s = parse_size(argv[a]);
      if (s < 0 || s > 0x7fffffffL || nsizes == MAX_SIZES) {
        if (rank == 0) fprintf(stderr, "pingpong: bad size '%s'\n", argv[a]);
        MPI_Finalize();
        return 2;
      }
      sizes[nsizes++] = s;
    }
  }
  if (nsizes == 0)
    for (long s = 1; s <= 256L << 20; s *= 4) sizes[nsizes++] = s;
  if (np < 2 || iters < 1) {
    if (rank == 0) fprintf(stderr, "pingpong: needs at least 2 ranks and 1 iteration\n");
    MPI_Finalize();
    return 2;
  }

  long errors = 0;
  for (int k = 0; k < nsizes && rank < 2; k++) {
    long size = sizes[k];
    unsigned char *buf = malloc(size ? size : 1);
    if (rank == 0) {
      unsigned char *echo = malloc(size ? size : 1);
      /* warm-up (round -1), checked */
      fill(buf, size, -1);
      memset(echo, 0, size);
      MPI_Send(buf, (int)size, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
      MPI_Recv(echo, (int)size, MPI_BYTE, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      errors += check(echo, size, -1, rank, "warm-up echo");
      /* timed rounds: all rounds send the pattern of the last round */
      fill(buf, size, iters);
      memset(echo, 0, size);
      double t0 = MPI_Wtime();
      for (int i = 0; i < iters; i++) {
        MPI_Send(buf, (int)size, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
        MPI_Recv(echo, (int)size, MPI_BYTE, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      }
      double t1 = MPI_Wtime();
      errors += check(echo, size, iters, rank, "echo");
      double rtt = (t1 - t0) / iters;
      printf("pingpong size=%ld iters=%d rtt=%.9e one_way=%.9e bw=%.6e\n", size, iters, rtt, rtt / 2,
             rtt > 0 ? size / (rtt / 2) : 0.0);
      fflush(stdout);
      free(echo);
    } else {
      memset(buf, 0, size);
      MPI_Recv(buf, (int)size, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      errors += check(buf, size, -1, rank, "warm-up message");
      MPI_Send(buf, (int)size, MPI_BYTE, 0, 2, MPI_COMM_WORLD);
      memset(buf, 0, size);
      for (int i = 0; i < iters; i++) {
        MPI_Recv(buf, (int)size, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(buf, (int)size, MPI_BYTE, 0, 2, MPI_COMM_WORLD);
      }
      errors += check(buf, size, iters, rank, "message");
    }
    free(buf);
  }

  long total = 0;
  MPI_Allreduce(&errors, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) {
    if (total == 0) printf("OK\n");
    else printf("FAIL: %ld wrong bytes\n", total);
  }
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}
