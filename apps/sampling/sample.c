/* SMPI_SAMPLE_LOCAL / SMPI_SAMPLE_GLOBAL: a loop of 1000 iterations whose body
 * burns about the same CPU each time; only the first few iterations run, the
 * rest is injected as their mean. Prints how many bodies really ran, and the
 * time of a local loop whose body also reads MPI_Wtime (as NAS EP's timers do):
 * it must cost what the same loop costs without it. */
#include <mpi.h>
#include <stdio.h>

static volatile double sink;

static void body(void)
{
  double s = 0;
  for (int k = 0; k < 20000; k++) s += k * 0.5;
  sink = s;
}

int main(int argc, char **argv)
{
  int rank, ran_local = 0, ran_global = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  double t0 = MPI_Wtime();
  SMPI_SAMPLE_LOCAL(int i = 0, i < 1000, i++, 5, -1) { body(); ran_local++; }
  double t1 = MPI_Wtime();
  MPI_Barrier(MPI_COMM_WORLD);
  double t2 = MPI_Wtime();
  SMPI_SAMPLE_LOCAL(int i = 0, i < 1000, i++, 5, -1) { body(); sink += MPI_Wtime(); }
  double t3 = MPI_Wtime();
  MPI_Barrier(MPI_COMM_WORLD);
  SMPI_SAMPLE_GLOBAL(int i = 0, i < 1000, i++, 5, -1) { body(); ran_global++; }
  printf("rank %d ran_local=%d ran_global=%d local_time=%.6e wtime_loop_time=%.6e\n", rank, ran_local,
         ran_global, t1 - t0, t3 - t2);
  MPI_Finalize();
  return 0;
}
