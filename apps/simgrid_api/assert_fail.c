/* A failing xbt_assert (or xbt_die): SimGrid prints a root/CRITICAL line and
 * aborts, so the run ends with exit status 134 naming the rank.
 *
 * Usage: assert_fail [assert|assert1|die]; rank 1 fails after a barrier:
 *  - assert:  xbt_assert(rank != 1, "rank %d refuses (value %d)", rank, 42)
 *  - assert1: xbt_assert(rank != 1) (message "Assertion rank != 1 failed")
 *  - die:     xbt_die("rank %d gives up", rank)
 * Other ranks wait in a second barrier that never completes. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <xbt/asserts.h>
#include <xbt/log.h>

XBT_LOG_NEW_DEFAULT_CATEGORY(assert_fail, "the failing program");

int main(int argc, char **argv)
{
  int rank;
  const char *mode = argc > 1 ? argv[1] : "assert";
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  XBT_INFO("rank %d before the check", rank);
  printf("rank %d printed before the check\n", rank);
  MPI_Barrier(MPI_COMM_WORLD);
  if (strcmp(mode, "assert") == 0)
    xbt_assert(rank != 1, "rank %d refuses (value %d)", rank, 42);
  else if (strcmp(mode, "assert1") == 0)
    xbt_assert(rank != 1);
  else if (strcmp(mode, "die") == 0 && rank == 1)
    xbt_die("rank %d gives up", rank);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
