/* ring: a token travels around all ranks, rank 0 -> 1 -> ... -> np-1 -> 0.
 *
 * demonstrates: a chain of dependent blocking messages; per-hop latency.
 *
 * Usage: ring [-l laps] [-s bytes]
 *   laps: times the token goes around (default 10);
 *   bytes: message size, at least 8 (default 8: just the token).
 *
 * Each rank adds rank+1 to the token before passing it on, so on lap l
 * (from 0) rank r receives l*S + r(r+1)/2 (rank 0: (l+1)*S), where
 * S = np(np+1)/2; every rank checks the value it receives, and the padding
 * bytes after the token are checked too. Rank 0 prints
 *   ring np=<n> laps=<l> bytes=<b> time=<s> per_hop=<s> token=<final value>
 * then OK (exit 0) or FAIL (exit 1). With one rank, rank 0 sends to itself. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned char pad_byte(long i) { return (unsigned char)(i * 11 + 3); }

int main(int argc, char **argv)
{
  int rank, np, laps = 10;
  long bytes = 8;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  for (int a = 1; a + 1 < argc; a += 2) {
    if (strcmp(argv[a], "-l") == 0) laps = atoi(argv[a + 1]);
    else if (strcmp(argv[a], "-s") == 0) bytes = atol(argv[a + 1]);
  }
  if (laps < 1 || bytes < 8) {
    if (rank == 0) fprintf(stderr, "ring: need laps >= 1 and bytes >= 8\n");
    MPI_Finalize();
    return 2;
  }
  unsigned char *msg = malloc(bytes);
  for (long i = 8; i < bytes; i++) msg[i] = pad_byte(i);
  int next = (rank + 1) % np, prev = (rank + np - 1) % np;
  long long s = (long long)np * (np + 1) / 2, token = 0;
  long errors = 0;

  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  for (int lap = 0; lap < laps; lap++) {
    long long expected;
    if (rank == 0) {
      token = (long long)lap * s + 1;
      memcpy(msg, &token, 8);
      MPI_Send(msg, (int)bytes, MPI_BYTE, next, lap, MPI_COMM_WORLD);
      MPI_Recv(msg, (int)bytes, MPI_BYTE, prev, lap, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      expected = (long long)(lap + 1) * s;
    } else {
      MPI_Recv(msg, (int)bytes, MPI_BYTE, prev, lap, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      expected = (long long)lap * s + (long long)rank * (rank + 1) / 2;
    }
    memcpy(&token, msg, 8);
    if (token != expected) {
      fprintf(stderr, "ring: rank %d lap %d: token %lld, expected %lld\n", rank, lap, token, expected);
      errors++;
    }
    if (rank != 0) {
      token += rank + 1;
      memcpy(msg, &token, 8);
      MPI_Send(msg, (int)bytes, MPI_BYTE, next, lap, MPI_COMM_WORLD);
    }
  }
  double t1 = MPI_Wtime();
  for (long i = 8; i < bytes; i++)
    if (msg[i] != pad_byte(i)) {
      fprintf(stderr, "ring: rank %d: padding byte %ld is %d, expected %d\n", rank, i, msg[i], pad_byte(i));
      errors++;
      break;
    }
  free(msg);

  long total = 0;
  MPI_Allreduce(&errors, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) {
    printf("ring np=%d laps=%d bytes=%ld time=%.9e per_hop=%.9e token=%lld\n", np, laps, bytes, t1 - t0,
           (t1 - t0) / ((double)laps * np), token);
    if (total == 0) printf("OK\n");
    else printf("FAIL: %ld errors\n", total);
  }
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}
