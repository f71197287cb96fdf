/* Function and BLAS models: `work(n)` is the program's own function; with a
 * model file that names it (kind = "function"), smpirun replaces each call by
 * the model's time. cblas_dgemm is served by smpirun too (model or real BLAS).
 * Prints the simulated time of each phase. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

volatile double sink;

void work(int n)
{
  double s = 0;
  for (int i = 0; i < n * 1000; i++) s += i * 0.5;
  sink = s;
}

void cblas_dgemm(int, int, int, int, int, int, double, const double *, int, const double *, int, double,
                 double *, int);

int main(int argc, char **argv)
{
  int rank;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int n = argc > 1 ? atoi(argv[1]) : 1000;
  double t0 = MPI_Wtime();
  work(n);
  double t1 = MPI_Wtime();
  static double a[64 * 64], b[64 * 64], c[64 * 64];
  for (int i = 0; i < 64 * 64; i++) { a[i] = 1; b[i] = 2; c[i] = 0; }
  cblas_dgemm(102, 111, 111, 64, 64, 64, 1.0, a, 64, b, 64, 0.0, c, 64);
  double t2 = MPI_Wtime();
  if (rank == 0) printf("work(%d) took %.9e s; dgemm 64^3 took %.9e s; c[0]=%g\n", n, t1 - t0 - 1e-8, t2 - t1 - 1e-8, c[0]);
  MPI_Finalize();
  return 0;
}
