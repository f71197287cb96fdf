/* privatization: checks that every rank has its own copy of global variables.
 *
 * demonstrates: smpirun's per-rank copies of the program (SMPI's
 * smpi/privatization:dlopen). Real MPI ranks are processes with their own
 * globals; simulated ranks share one process, so without privatization they
 * share (and overwrite) each other's globals.
 *
 * Usage: privatization [laps]   (default 1)
 *
 * Every rank writes its rank into a global int and a static array and
 * increments a static counter (from 0), then passes a token around the ring
 * `laps` times and calls MPI_Barrier (so that every other rank has run and
 * written its own values), then checks that the globals still hold its rank
 * and that the counter is 1. Ranks that see another value print it on stderr. Rank 0 prints
 *   privatization np=<n> wrong_ranks=<k>
 * then OK (exit 0) or FAIL (exit 1, on every rank). With
 * --cfg=smpi/privatization:no it is expected to FAIL when np > 1. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int my_rank = -1;                /* a plain global */
static int my_array[16];         /* a static (file-local) array */
static int counter;              /* a static counter, incremented once per rank */

int main(int argc, char **argv)
{
  int rank, np, laps = argc > 1 ? atoi(argv[1]) : 1;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &np);

  my_rank = rank;
  for (int i = 0; i < 16; i++) my_array[i] = rank * 16 + i;
  counter++;

  int next = (rank + 1) % np, prev = (rank + np - 1) % np, token = 0;
  for (int lap = 0; lap < laps; lap++) {
    if (rank == 0) {
      token = lap;
      MPI_Send(&token, 1, MPI_INT, next, 0, MPI_COMM_WORLD);
      MPI_Recv(&token, 1, MPI_INT, prev, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(&token, 1, MPI_INT, prev, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(&token, 1, MPI_INT, next, 0, MPI_COMM_WORLD);
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);

  int wrong = 0;
  if (my_rank != rank) {
    fprintf(stderr, "privatization: rank %d: global my_rank is %d\n", rank, my_rank);
    wrong = 1;
  }
  for (int i = 0; i < 16; i++)
    if (my_array[i] != rank * 16 + i) {
      fprintf(stderr, "privatization: rank %d: static my_array[%d] is %d, expected %d\n", rank, i, my_array[i],
              rank * 16 + i);
      wrong = 1;
      break;
    }
  if (counter != 1) {
    fprintf(stderr, "privatization: rank %d: static counter is %d, expected 1\n", rank, counter);
    wrong = 1;
  }

  int total = 0;
  MPI_Allreduce(&wrong, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) {
    printf("privatization np=%d wrong_ranks=%d\n", np, total);
    printf(total == 0 ? "OK\n" : "FAIL\n");
  }
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}
