/* big_code: a program with 4 MiB of constants (and code reading them), run
 * on many ranks: the per-rank copies of the program share their read-only
 * segments, so memory grows with the ranks' globals, not with the code.
 * Every rank sums the table (touching all of it) and checks the sum, and its
 * own copy of a global. Prints "big_code OK" on rank 0 on success. */
#include <mpi.h>
#include <stdio.h>

#define TABLE (4 << 20)
static const unsigned char table[TABLE] = {1, 2, 3}; /* in .rodata, full size */
int mine = -1;                                        /* per-rank global */

int main(int argc, char **argv)
{
  int rank, ok, all;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  mine = rank;
  unsigned long sum = 0;
  for (int i = 0; i < TABLE; i += 64)
    sum += table[i] + (i == 0 ? table[1] + table[2] : 0);
  MPI_Barrier(MPI_COMM_WORLD);
  ok = sum == 6 && mine == rank;
  MPI_Reduce(&ok, &all, 1, MPI_INT, MPI_LAND, 0, MPI_COMM_WORLD);
  if (rank == 0)
    printf("big_code %s\n", all ? "OK" : "FAIL");
  MPI_Finalize();
  return all || rank != 0 ? 0 : 1;
}
