/*
 * blas_model.c -- BLAS "model library" for running the real HPL 2.0 (Debian hpcc) under the
 * real SimGrid/SMPI 3.32, as described in shared/reference/smpi-3.32/README.md:
 *
 *   - cblas_dgemm: no work, smpi_execute_benched(1.029e-11*M*N*K + 1.981e-12) seconds;
 *     (env BLAS_MODEL_SKIP_EMPTY=1: no smpi_execute_benched at all when M, N or K is 0);
 *   - cblas_dtrsm, dgemv, dger, dtrsv, daxpy, dscal: no work, no time;
 *   - cblas_dcopy, cblas_dswap: real data movement (HPL's pivot search carries the pivot row
 *     through dcopy), no time (computation is not simulated anyway);
 *   - cblas_idamax: BLAS_MODEL_IDAMAX selects the variant at compile time:
 *         0 (default) real loop: first index of max |x[i]| (what a real BLAS returns),
 *         1           return 0,
 *         2           pseudo-random index in [0,n) (rand_r, per-process seed 42; like the
 *                     Ezibenroc fork's rand() % N).
 *     Can also be chosen at run time with env BLAS_MODEL_IDAMAX=loop|zero|random.
 *   - HPL_pdmatgen: a no-op that replaces HPL's (this object is linked before libhpl.a so the
 *     archive member HPL_pdmatgen.o is never pulled in); it prints one line on the first call
 *     so that the override can be checked.
 *
 * HPL with -DHPL_CALL_CBLAS calls exactly these ten cblas_* names (include/hpl_blas.h);
 * CBLAS_INDEX is int there.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <smpi/smpi.h>

#include "hpl.h"

#ifndef BLAS_MODEL_IDAMAX
#define BLAS_MODEL_IDAMAX 0
#endif

#define DGEMM_A 1.029e-11
#define DGEMM_B 1.981e-12

/* Counters, for the statistics line printed at the end (env BLAS_MODEL_STATS=1). */
static long n_dgemm, n_dtrsm, n_dgemv, n_dger, n_dtrsv, n_daxpy, n_dscal, n_dswap, n_dcopy,
    n_idamax;
static double t_dgemm;

void cblas_dgemm(const enum HPL_ORDER order, const enum HPL_TRANS ta, const enum HPL_TRANS tb,
                 const int m, const int n, const int k, const double alpha, const double *a,
                 const int lda, const double *b, const int ldb, const double beta, double *c,
                 const int ldc)
{
    (void)order; (void)ta; (void)tb; (void)alpha; (void)a; (void)lda; (void)b; (void)ldb;
    (void)beta; (void)c; (void)ldc;
    static int skip_empty = -1;
    double d = DGEMM_A * (double)m * (double)n * (double)k + DGEMM_B;
    if (skip_empty < 0) skip_empty = getenv("BLAS_MODEL_SKIP_EMPTY") != NULL;
    n_dgemm++;
    if (skip_empty && (m <= 0 || n <= 0 || k <= 0)) return; /* variant: no exec for empty calls */
    t_dgemm += d;
    smpi_execute_benched(d);
}

void cblas_dtrsm(const enum HPL_ORDER order, const enum HPL_SIDE side, const enum HPL_UPLO uplo,
                 const enum HPL_TRANS ta, const enum HPL_DIAG diag, const int m, const int n,
                 const double alpha, const double *a, const int lda, double *b, const int ldb)
{
    (void)order; (void)side; (void)uplo; (void)ta; (void)diag; (void)m; (void)n; (void)alpha;
    (void)a; (void)lda; (void)b; (void)ldb;
    n_dtrsm++;
}

void cblas_dgemv(const enum HPL_ORDER order, const enum HPL_TRANS ta, const int m, const int n,
                 const double alpha, const double *a, const int lda, const double *x,
                 const int incx, const double beta, double *y, const int incy)
{
    (void)order; (void)ta; (void)m; (void)n; (void)alpha; (void)a; (void)lda; (void)x;
    (void)incx; (void)beta; (void)y; (void)incy;
    n_dgemv++;
}

void cblas_dger(const enum HPL_ORDER order, const int m, const int n, const double alpha,
                const double *x, const int incx, const double *y, const int incy, double *a,
                const int lda)
{
    (void)order; (void)m; (void)n; (void)alpha; (void)x; (void)incx; (void)y; (void)incy;
    (void)a; (void)lda;
    n_dger++;
}

void cblas_dtrsv(const enum HPL_ORDER order, const enum HPL_UPLO uplo, const enum HPL_TRANS ta,
                 const enum HPL_DIAG diag, const int n, const double *a, const int lda, double *x,
                 const int incx)
{
    (void)order; (void)uplo; (void)ta; (void)diag; (void)n; (void)a; (void)lda; (void)x;
    (void)incx;
    n_dtrsv++;
}

void cblas_daxpy(const int n, const double alpha, const double *x, const int incx, double *y,
                 const int incy)
{
    (void)n; (void)alpha; (void)x; (void)incx; (void)y; (void)incy;
    n_daxpy++;
}

void cblas_dscal(const int n, const double alpha, double *x, const int incx)
{
    (void)n; (void)alpha; (void)x; (void)incx;
    n_dscal++;
}

void cblas_dcopy(const int n, const double *x, const int incx, double *y, const int incy)
{
    int i, ix, iy;
    n_dcopy++;
    if (n <= 0) return;
    ix = incx < 0 ? (1 - n) * incx : 0;
    iy = incy < 0 ? (1 - n) * incy : 0;
    for (i = 0; i < n; i++, ix += incx, iy += incy) y[iy] = x[ix];
}

void cblas_dswap(const int n, double *x, const int incx, double *y, const int incy)
{
    int i, ix, iy;
    double t;
    n_dswap++;
    if (n <= 0) return;
    ix = incx < 0 ? (1 - n) * incx : 0;
    iy = incy < 0 ? (1 - n) * incy : 0;
    for (i = 0; i < n; i++, ix += incx, iy += incy) {
        t = x[ix]; x[ix] = y[iy]; y[iy] = t;
    }
}

static int idamax_mode = -1;
static unsigned int idamax_seed = 42;

int cblas_idamax(const int n, const double *x, const int incx)
{
    int i, ix, imax = 0;
    double vmax, v;
    n_idamax++;
    if (idamax_mode < 0) {
        const char *e = getenv("BLAS_MODEL_IDAMAX");
        idamax_mode = BLAS_MODEL_IDAMAX;
        if (e && strcmp(e, "loop") == 0) idamax_mode = 0;
        else if (e && strcmp(e, "zero") == 0) idamax_mode = 1;
        else if (e && strcmp(e, "random") == 0) idamax_mode = 2;
    }
    if (n <= 0) return 0;
    if (idamax_mode == 1) return 0;
    if (idamax_mode == 2) return (int)(rand_r(&idamax_seed) % (unsigned)n);
    if (incx <= 0) return 0;
    vmax = fabs(x[0]);
    for (i = 1, ix = incx; i < n; i++, ix += incx) {
        v = fabs(x[ix]);
        if (v > vmax) { vmax = v; imax = i; }
    }
    return imax;
}

/* HPL's matrix generator, replaced by a no-op (the matrix is shared/folded memory). */
static int matgen_calls;
void HPL_pdmatgen(const HPL_T_grid *GRID, const int M, const int N, const int NB, double *A,
                  const int LDA, const int ISEED)
{
    (void)NB; (void)A; (void)LDA; (void)ISEED;
    if (matgen_calls++ == 0 && GRID->iam == 0)
        fprintf(stderr, "blas_model: HPL_pdmatgen override active (no-op, M=%d N=%d)\n", M, N);
}

/* One line of call counts for this rank (env BLAS_MODEL_STATS=1); called by hpl_main_sg.c
 * just before MPI_Finalize. */
void blas_model_stats(int rank)
{
    if (getenv("BLAS_MODEL_STATS") == NULL) return;
    fprintf(stderr,
            "blas_model[%d]: dgemm %ld (%.6f s) dtrsm %ld dgemv %ld dger %ld dtrsv %ld daxpy %ld "
            "dscal %ld dswap %ld dcopy %ld idamax %ld (mode %d)\n",
            rank, n_dgemm, t_dgemm, n_dtrsm, n_dgemv, n_dger, n_dtrsv, n_daxpy, n_dscal, n_dswap,
            n_dcopy, n_idamax, idamax_mode);
}
