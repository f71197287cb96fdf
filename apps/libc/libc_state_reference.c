/* What one process draws from rand() and drand48() seeded like rank <rank>
 * of libc_state.c: the reference its simulated ranks must reproduce.
 * Built with the plain C compiler, no MPI. */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
  int rank = argc > 1 ? atoi(argv[1]) : 0;
  srand(rank + 1);
  srand48(rank + 1);
  int r1 = rand();
  int r2 = rand();
  double d1 = drand48();
  double d2 = drand48();
  printf("[%d] rand %d %d drand48 %.17g %.17g\n", rank, r1, r2, d1, d2);
  return 0;
}
