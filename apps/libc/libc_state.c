/* Per-rank libc state. In the simulator every rank lives in one process, yet
 * each must see the libc state of a process of its own:
 *  - it parses the command line with getopt_long (MPI calls between options
 *    and inside the group -vq), then its own argument vector with getopt;
 *  - it draws from rand() and drand48() seeded with its rank, interleaved with
 *    the other ranks (the sequences must be those a lone process draws:
 *    `libc_state_reference <rank>` prints them, built without MPI);
 *  - it tokenizes a string with strtok across an MPI call;
 *  - errno survives an MPI call during which the other ranks set theirs.
 * mpi.h comes first and <getopt.h> after it on purpose. */
#include <mpi.h>
#include <getopt.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
  int rank, size;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  /* The command line, long and grouped short options, with MPI calls halfway
   * (between two options, and inside the group -vq). */
  static struct option longs[] = {{"size", required_argument, 0, 's'}, {"flag", no_argument, 0, 'f'}, {0, 0, 0, 0}};
  int n = -1, verbose = 0, quiet = 0, lsize = -1, flag = 0, opt, calls = 0;
  while ((opt = getopt_long(argc, argv, "n:vqs:f", longs, NULL)) != -1) {
    switch (opt) {
    case 'n': n = atoi(optarg); break;
    case 'v': verbose++; break;
    case 'q': quiet++; break;
    case 's': lsize = atoi(optarg); break;
    case 'f': flag = 1; break;
    default:
      printf("[%d] getopt_long failed\n", rank);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (++calls <= 3) MPI_Barrier(MPI_COMM_WORLD);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  printf("[%d] n=%d verbose=%d quiet=%d size=%d flag=%d operand=%s\n", rank, n, verbose, quiet, lsize, flag,
         optind < argc ? argv[optind] : "-");

  /* Plain getopt on an argument vector of its own, from the start again. */
  char rank_text[16];
  snprintf(rank_text, sizeof rank_text, "%d", rank);
  char *own[] = {argv[0], "-x", rank_text, "-yz", "rest", NULL};
  int x = -1, y = 0, z = 0;
  optind = 1;
  while ((opt = getopt(5, own, "x:yz")) != -1) {
    if (opt == 'x') x = atoi(optarg);
    else if (opt == 'y') y = 1;
    else if (opt == 'z') z = 1;
    else {
      printf("[%d] getopt failed\n", rank);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
  }
  printf("[%d] x=%d y=%d z=%d rest=%s\n", rank, x, y, z, optind < 5 ? own[optind] : "-");

  /* rand and drand48 seeded per rank, interleaved with the other ranks. */
  srand(rank + 1);
  srand48(rank + 1);
  int r1 = rand();
  MPI_Barrier(MPI_COMM_WORLD);
  int r2 = rand();
  double d1 = drand48();
  MPI_Barrier(MPI_COMM_WORLD);
  double d2 = drand48();
  printf("[%d] rand %d %d drand48 %.17g %.17g\n", rank, r1, r2, d1, d2);

  /* strtok across an MPI call. */
  char line[64];
  snprintf(line, sizeof line, "a%d,b%d,c%d", rank, rank, rank);
  char *t1 = strtok(line, ",");
  MPI_Barrier(MPI_COMM_WORLD);
  char *t2 = strtok(NULL, ",");
  char *t3 = strtok(NULL, ",");
  printf("[%d] tokens %s %s %s\n", rank, t1, t2, t3 ? t3 : "(null)");

  errno = 100 + rank;
  MPI_Barrier(MPI_COMM_WORLD);
  printf("[%d] errno %d\n", rank, errno);
  MPI_Finalize();
  return 0;
}
