/* stack_overflow: rank 0 recurses without bound (each frame holds 1 KiB) while
 * the others wait in MPI_Barrier. Expected: smpirun exits non-zero and reports
 * that rank 0 overflowed its stack (contexts/stack-size).
 * Usage: smpirun -np 1 (or more) ... stack_overflow */
#include <mpi.h>
#include <stdio.h>

static volatile int never = -1; /* keeps the compiler from seeing an infinite recursion */

static int recurse(int depth)
{
  volatile char frame[1024];
  if (depth == never) return 0;
  frame[0] = (char)depth;
  frame[1023] = (char)depth;
  return recurse(depth + 1) + frame[0] + frame[1023];
}

int main(int argc, char **argv)
{
  int rank;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) printf("stack_overflow: %d\n", recurse(0));
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
