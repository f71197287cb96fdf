/* A program that brings its own BLAS: cblas_dgemm here is a stub that does no
 * work and injects 1 ns per multiply-add with smpi_execute_benched, the way
 * SMPI's HPL tutorials emulate a BLAS. smpirun exports a cblas_dgemm too; the
 * program's own must win unless a model file models dgemm.
 * Prints the simulated time of four 512^3 calls. */
#include <mpi.h>
#include <smpi/smpi.h>
#include <stdio.h>

void cblas_dgemm(int order, int ta, int tb, int m, int n, int k, double alpha, const double *a, int lda,
                 const double *b, int ldb, double beta, double *c, int ldc)
{
  (void)order, (void)ta, (void)tb, (void)alpha, (void)a, (void)lda, (void)b, (void)ldb, (void)beta,
      (void)c, (void)ldc;
  smpi_execute_benched(1e-9 * (double)m * n * k);
}

int main(int argc, char **argv)
{
  static double a[512 * 512], b[512 * 512], c[512 * 512];
  int rank;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  double t0 = MPI_Wtime();
  for (int i = 0; i < 4; i++)
    cblas_dgemm(102, 111, 111, 512, 512, 512, 1.0, a, 512, b, 512, 0.0, c, 512);
  double t1 = MPI_Wtime();
  if (rank == 0) printf("4 dgemm 512^3 took %.9e s\n", t1 - t0);
  MPI_Finalize();
  return 0;
}
