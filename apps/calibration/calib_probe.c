/*
 * calib_probe.c -- a quick measure of how fast this machine runs HPL's main kernel right now.
 *
 * A validation compares a model fitted at one moment with real runs made minutes later. On a
 * shared or virtual machine the speed of the cores drifts in between (other tenants, boost
 * budgets, thermal limits) by as much as the tolerances being checked. This probe measures that
 * speed in a fraction of a second so that the calibration and every real run can carry the
 * machine's state: every rank (one per core, pinned by the launcher, all at once as in HPL)
 * times the same dgemm of HPL's update shape (C -= A * B^T, K = NB, operands in a matrix of
 * leading dimension --lda) --reps times after two warm-up calls, and rank 0 prints each rank's
 * median rate and the line `PROBE_GFLOPS r0 r1 ...` that smpi-validate and calibrate.sh read.
 * Memory-bound kernels (HPL's row swaps and copies) can drift apart from dgemm (another tenant
 * taking memory bandwidth slows them, not the cores), so the probe then times a row gather too:
 * --rows random rows (fresh ones each call) of the same matrix, N columns of them, copied into a
 * contiguous block as HPL_dlaswp01T does, and prints `PROBE_GATHER_NS r0 r1 ...`, each rank's
 * median nanoseconds per element moved.
 *
 *   mpirun --bind-to core -np 2 calib_probe [--m 2048] [--n 1024] [--k 128] [--lda 5000]
 *                                           [--reps 15] [--rows 128]
 *
 * Built with our smpicc it runs under smpirun too (the tests do so): the model's dgemm then
 * answers.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <mpi.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calib_common.h"

/* CBLAS's column-major dgemm, declared here so that no cblas.h is needed (smpicc's and
 * OpenBLAS's agree on this prototype). */
enum { PROBE_COL_MAJOR = 102, PROBE_NO_TRANS = 111, PROBE_TRANS = 112 };
void cblas_dgemm(int order, int transa, int transb, int m, int n, int k, double alpha,
                 const double *a, int lda, const double *b, int ldb, double beta, double *c,
                 int ldc);

typedef struct {
    int m, n, k, lda, reps, rows;
} probe_opts;

static void usage(FILE *f)
{
    fputs("usage: calib_probe [--m M] [--n N] [--k K] [--lda L] [--reps R] [--rows W]\n"
          "  times dgemm(NoTrans, Trans) of M x N x K (HPL's update: K = NB) on every rank at\n"
          "  once, R calls after two warm-up calls, operands in a matrix of leading dimension\n"
          "  max(L, M); prints each rank's median rate and `PROBE_GFLOPS r0 r1 ...`. Then times\n"
          "  R gathers of W random rows x N columns of that matrix into a block (a row swap's\n"
          "  memory traffic) and prints `PROBE_GATHER_NS r0 r1 ...`: median ns per element.\n"
          "  defaults: --m 2048 --n 1024 --k 128 --lda 5000 --reps 15 --rows 128\n",
          f);
}

/* 0: run; 1: --help; -1: bad argument (already said). */
static int parse(int argc, char **argv, probe_opts *o)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) return 1;
        int *dst = !strcmp(a, "--m")      ? &o->m
                   : !strcmp(a, "--n")    ? &o->n
                   : !strcmp(a, "--k")    ? &o->k
                   : !strcmp(a, "--lda")  ? &o->lda
                   : !strcmp(a, "--reps") ? &o->reps
                   : !strcmp(a, "--rows") ? &o->rows
                                          : NULL;
        if (!dst) {
            fprintf(stderr, "calib_probe: unknown option '%s' (see --help)\n", a);
            return -1;
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "calib_probe: %s needs a value\n", a);
            return -1;
        }
        char *end;
        long v = strtol(argv[++i], &end, 10);
        long lo = dst == &o->lda ? 0 : 1;
        if (*end || end == argv[i] || v < lo || v > 100000) {
            fprintf(stderr, "calib_probe: %s: '%s' is not an integer in %ld..100000\n", a, argv[i], lo);
            return -1;
        }
        *dst = (int)v;
    }
    return 0;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    probe_opts o = {2048, 1024, 128, 5000, 15, 128};
    int p = parse(argc, argv, &o);
    if (p != 0) {
        if (p > 0 && rank == 0) usage(stdout);
        MPI_Finalize();
        return p > 0 ? 0 : 2;
    }
    int ld = o.lda > o.m ? o.lda : o.m;
    /* A is M x K and C is M x N inside the big matrix, B is N x K (read transposed). */
    size_t cols = (size_t)o.k + (size_t)o.n;
    double *big = malloc(sizeof(double) * (size_t)ld * cols);
    double *b = malloc(sizeof(double) * (size_t)o.n * (size_t)o.k);
    double *times = malloc(sizeof(double) * (size_t)o.reps);
    double *block = malloc(sizeof(double) * (size_t)o.rows * (size_t)o.n);
    int *rows = malloc(sizeof(int) * (size_t)o.rows);
    if (!big || !b || !times || !block || !rows) {
        fprintf(stderr, "calib_probe: rank %d: out of memory\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    calib_rng r;
    rng_seed(&r, 1 + (uint64_t)rank);
    for (size_t i = 0; i < (size_t)ld * cols; i++) big[i] = rng_uniform(&r) - 0.5;
    for (size_t i = 0; i < (size_t)o.n * (size_t)o.k; i++) b[i] = rng_uniform(&r) - 0.5;
    double *a = big, *c = big + (size_t)ld * (size_t)o.k;

    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < o.reps + 2; i++) {
        double t0 = MPI_Wtime();
        cblas_dgemm(PROBE_COL_MAJOR, PROBE_NO_TRANS, PROBE_TRANS, o.m, o.n, o.k, -1.0, a, ld, b,
                    o.n, 1.0, c, ld);
        double t = MPI_Wtime() - t0;
        if (i >= 2) times[i - 2] = t;
    }
    qsort(times, (size_t)o.reps, sizeof(double), cmp_double);
    double median = o.reps % 2 ? times[o.reps / 2] : 0.5 * (times[o.reps / 2 - 1] + times[o.reps / 2]);
    double gflops = median > 0 ? 2.0 * o.m * o.n * (double)o.k / median * 1e-9 : 0.0;

    /* The gather: rows drawn afresh for every call (rows reused would stay in the caches) among
     * all `ld` rows of the matrix's C columns, read column by column as HPL_dlaswp01T reads. */
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < o.reps + 2; i++) {
        for (int w = 0; w < o.rows; w++) rows[w] = (int)(rng_uniform(&r) * ld) % ld;
        double t0 = MPI_Wtime();
        for (int j = 0; j < o.n; j++) {
            const double *col = c + (size_t)ld * (size_t)j;
            double *out = block + (size_t)o.rows * (size_t)j;
            for (int w = 0; w < o.rows; w++) out[w] = col[rows[w]];
        }
        double t = MPI_Wtime() - t0;
        if (i >= 2) times[i - 2] = t;
    }
    /* Keeps the copies from being optimised away. */
    volatile double sink = block[(size_t)o.rows * (size_t)o.n - 1];
    (void)sink;
    qsort(times, (size_t)o.reps, sizeof(double), cmp_double);
    double gather_median =
        o.reps % 2 ? times[o.reps / 2] : 0.5 * (times[o.reps / 2 - 1] + times[o.reps / 2]);
    double gather_ns = gather_median * 1e9 / ((double)o.rows * (double)o.n);
    int core = sched_getcpu();

    double *all = rank == 0 ? malloc(sizeof(double) * (size_t)size) : NULL;
    double *all_ns = rank == 0 ? malloc(sizeof(double) * (size_t)size) : NULL;
    int *cores = rank == 0 ? malloc(sizeof(int) * (size_t)size) : NULL;
    MPI_Gather(&gflops, 1, MPI_DOUBLE, all, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    MPI_Gather(&gather_ns, 1, MPI_DOUBLE, all_ns, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    MPI_Gather(&core, 1, MPI_INT, cores, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        for (int i = 0; i < size; i++)
            printf("calib_probe: rank %d core %d dgemm %dx%dx%d lda %d: median of %d calls %.2f Gflop/s; "
                   "gather of %d random rows x %d columns: %.3f ns per element\n",
                   i, cores[i], o.m, o.n, o.k, ld, o.reps, all[i], o.rows, o.n, all_ns[i]);
        printf("PROBE_GFLOPS");
        for (int i = 0; i < size; i++) printf(" %.4f", all[i]);
        printf("\nPROBE_GATHER_NS");
        for (int i = 0; i < size; i++) printf(" %.4f", all_ns[i]);
        printf("\n");
        fflush(stdout);
    }
    free(all);
    free(all_ns);
    free(block);
    free(rows);
    free(cores);
    free(big);
    free(b);
    free(times);
    MPI_Finalize();
    return 0;
}
