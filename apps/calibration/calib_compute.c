/*
 * calib_compute.c -- compute-kernel calibration, one process per core, all cores busy at once
 * (`mpirun -np <cores> calib_compute ...`), per apps/calibration/FORMAT.md (compute table).
 *
 * Design (methodology digest §1.5 ch. 4 and 8, §2 items 1 and 3):
 *   - dgemm, "uniform product": gamma products stratified over [1, PI] (one per stratum
 *     [j PI/gamma, (j+1) PI/gamma), jittered uniformly inside it), each factorised at random
 *     as A ~ U(1, cbrt P), B ~ U(1, sqrt(P/A)), C = P/(A B) (redrawn until all <= SIGMA), and
 *     all six permutations of (A, B, C) emitted as (M, N, K); `grids` such grids, each with
 *     fresh jitter; fixed anchors (1,1,1) and (2048,2048,2048) in every file;
 *   - --fixed-k K: the HPL bias, K = NB for every dgemm (M N uniform-product, both orders)
 *     and triangles of order K for every dtrsm (the other side stratified up to SIGMA), and
 *     at most K rows for the row-swap kernels (HPL_dlaswp*: a panel swaps at most NB rows);
 *   - dtrsm (both sides), dgemv, dger, the HPL kernels (HPL_dlaswp*, HPL_dlacpy,
 *     HPL_dlatcpy): products stratified the same way, both orders of the two dimensions;
 *     dtrsv and the BLAS-1 kernels (daxpy, dscal, dcopy, dswap, idamax): N log-uniform;
 *   - every tuple `reps` times, then ONE Fisher-Yates shuffle over all kernels; every
 *     process derives the same sequence from the seed;
 *   - matrices allocated once at the largest size the design needs and filled with uniform
 *     random values in [0, 1] (never constants: dgemm's time depends on the data's bits).
 *     dgemm's inputs are never written; the outputs drift (C -= A B, as in HPL's update),
 *     which keeps them random and far from denormals. Triangular solves use a unit
 *     triangle whose other entries are U(0,1)/max order (the solution stays bounded) and a
 *     right-hand side restored from a pristine copy before each call (outside the timing).
 * Every call is timed alone with MPI_Wtime; the processes start together (barrier) and the
 * ones that finish first keep their core busy with untimed dgemm until all are done.
 *
 * The HPL kernels are those of the real HPL built with Open MPI (apps/hpl/build-real.sh,
 * libhpl.a): -DCALIB_HAVE_HPL. -DCALIB_HAVE_OPENBLAS records which core OpenBLAS chose.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* sched_setaffinity, sched_getcpu */
#endif
#include "calib_common.h"

#include <cblas.h>
#include <math.h>
#include <mpi.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#ifdef CALIB_HAVE_OPENBLAS
char *openblas_get_corename(void);
char *openblas_get_config(void);
void openblas_set_num_threads(int);
int openblas_get_num_threads(void);
#endif

#ifdef CALIB_HAVE_HPL
/* HPL 2.0's own prototypes (hpl_pauxil.h, hpl_auxil.h), restated to avoid HPL's headers. */
void HPL_dlaswp00N(const int, const int, double *, const int, const int *);
void HPL_dlaswp01T(const int, const int, double *, const int, double *, const int, const int *,
                   const int *);
void HPL_dlaswp02N(const int, const int, const double *, const int, double *, double *, const int,
                   const int *, const int *);
void HPL_dlaswp03T(const int, const int, double *, const int, const double *, const double *,
                   const int);
void HPL_dlaswp04T(const int, const int, const int, double *, const int, double *, const int,
                   const double *, const double *, const int, const int *, const int *);
void HPL_dlaswp05T(const int, const int, double *, const int, const double *, const int,
                   const int *, const int *);
void HPL_dlaswp06T(const int, const int, double *, const int, double *, const int, const int *);
void HPL_dlaswp10N(const int, const int, double *, const int, const int *);
void HPL_dlacpy(const int, const int, const double *, const int, double *, const int);
void HPL_dlatcpy(const int, const int, const double *, const int, double *, const int);
#endif

/* ------------------------------------------------------------------ kernels */
enum kernel {
    DGEMM, DTRSM, DGEMV, DGER, DTRSV, DAXPY, DSCAL, DCOPY, DSWAP, IDAMAX,
    LASWP00N, LASWP01T, LASWP02N, LASWP03T, LASWP04T, LASWP05T, LASWP06T, LASWP10N, LACPY, LATCPY,
    NKERNELS
};
static const char *const kname[NKERNELS] = {
    "dgemm", "dtrsm", "dgemv", "dger", "dtrsv", "daxpy", "dscal", "dcopy", "dswap", "idamax",
    "HPL_dlaswp00N", "HPL_dlaswp01T", "HPL_dlaswp02N", "HPL_dlaswp03T", "HPL_dlaswp04T",
    "HPL_dlaswp05T", "HPL_dlaswp06T", "HPL_dlaswp10N", "HPL_dlacpy", "HPL_dlatcpy"};
/* Number of model parameters (FORMAT.md: the order of models::ComputeModels::duration). */
static const int nparams[NKERNELS] = {3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 3, 2, 2, 2, 2, 2};

typedef struct {
    int32_t p[3];
    uint8_t k;
} call;

typedef struct {
    uint64_t seed;
    int full;
    uint64_t reps, grids, gamma, sigma, anchor, draws, fixed_k, rows_cap, dim2_cap, lda;
    double pi, pi2, pi_trsm, n1_max, ntrsv_max;
    int pin, list_only;
    int want[NKERNELS];
    const char *out_dir;
} options;

/* Command-line errors: every rank parses, rank 0 alone reports. */
#define ERR(...) do { if (!calib_quiet) fprintf(stderr, __VA_ARGS__); } while (0)

static const char *prog = "calib_compute";

static void usage(FILE *f)
{
    fprintf(f,
        "Usage: mpirun -np <cores> calib_compute [options]\n"
        "Times BLAS and HPL kernels on every core at once (one process per core, pinned); each\n"
        "process writes compute-<host>-core<c>-<seed>.csv (apps/calibration/FORMAT.md).\n"
        "  --seed S          seed of the design                                        [1]\n"
        "  --quick | --full  preset sizes (quick is the default; see below)\n"
        "  --out-dir DIR     where the CSV files go                                    [.]\n"
        "  --kernels LIST    comma-separated subset (dgemm,dtrsm,...,HPL_dlacpy)       [all]\n"
        "  --reps R          repetitions of every tuple                      [quick 1, full 2]\n"
        "dgemm (uniform product):\n"
        "  --grids G         gamma-grids of products                         [quick 1, full 3]\n"
        "  --gamma N         products per grid (strata)                                [30]\n"
        "  --max-dim D       largest M, N or K (SIGMA)                    [quick 4096, full 8192]\n"
        "  --max-product P   largest M*N*K (PI)                     [quick 1024^3, full 2048^3]\n"
        "  --anchor A        anchor tuple (A,A,A), with (1,1,1)                      [2048]\n"
        "  --fixed-k K       every dgemm has K = K (HPL's NB); M*N uniform product up to\n"
        "                    max-dim^2/2; anchors (1,1,K) and (A,A,K); every dtrsm a\n"
        "                    triangle of order K, the other side up to max-dim; the\n"
        "                    HPL_dlaswp* kernels swap at most K rows (10N: K columns)\n"
        "other kernels:\n"
        "  --draws N         tuples drawn per kernel                          [quick 40, full 300]\n"
        "  --max-product2 P  largest M*N of the two-dimensional kernels [quick 2^22, full 2^23]\n"
        "  --max-rows R      largest row count of HPL_dlaswp* (HPL's NB side)          [1024]\n"
        "  --max-n1 N        largest N of daxpy, dscal, dcopy, dswap, idamax [quick 2^20, full 2^22]\n"
        "operand layout:\n"
        "  --lda L           HPL's layout: the operands HPL takes from its local matrix (dgemm's\n"
        "                    A and C, dtrsm's B, dgemv's and dger's A, the destination of\n"
        "                    HPL_dlacpy/HPL_dlatcpy, the A of HPL_dlaswp*) are blocks of a matrix\n"
        "                    with leading dimension max(L, rows), and the rows HPL_dlaswp* gather\n"
        "                    or swap are drawn from all of its max(L, rows) rows; 0: tight\n"
        "                    (leading dimension = rows, rows drawn among the M rows)      [0]\n"
        "  --no-pin          do not pin (by default a process bound to several CPUs pins\n"
        "                    itself to one, chosen by rank)\n"
        "  --list-design     print the design (kernel,p0,p1,p2 in sequence order) and the memory\n"
        "                    it needs on stdout, run nothing\n"
        "  --help\n");
}

static int kernel_by_name(const char *s, size_t len)
{
    for (int k = 0; k < NKERNELS; k++)
        if (strlen(kname[k]) == len && strncmp(kname[k], s, len) == 0) return k;
    return -1;
}

static int parse_args(int argc, char **argv, options *o)
{
    int set_reps = 0, set_grids = 0, set_sigma = 0, set_pi = 0, set_draws = 0, set_pi2 = 0, set_n1 = 0;
    int set_kernels = 0;
    memset(o, 0, sizeof *o);
    o->seed = 1;
    o->gamma = 30;
    o->anchor = 2048;
    o->rows_cap = 1024;
    o->pin = 1;
    o->out_dir = ".";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        uint64_t u;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) return 1;
        else if (!strcmp(a, "--quick")) o->full = 0;
        else if (!strcmp(a, "--full")) o->full = 1;
        else if (!strcmp(a, "--no-pin")) o->pin = 0;
        else if (!strcmp(a, "--list-design")) o->list_only = 1;
        else if (!strcmp(a, "--seed")) { if (parse_u64(prog, a, v, 0, UINT64_MAX, &o->seed)) return -1; i++; }
        else if (!strcmp(a, "--reps")) { if (parse_u64(prog, a, v, 1, 1000, &o->reps)) return -1; set_reps = 1; i++; }
        else if (!strcmp(a, "--grids")) { if (parse_u64(prog, a, v, 0, 1000, &o->grids)) return -1; set_grids = 1; i++; }
        else if (!strcmp(a, "--gamma")) { if (parse_u64(prog, a, v, 1, 100000, &o->gamma)) return -1; i++; }
        else if (!strcmp(a, "--max-dim")) { if (parse_u64(prog, a, v, 1, 100000, &o->sigma)) return -1; set_sigma = 1; i++; }
        else if (!strcmp(a, "--max-product")) { if (parse_double(prog, a, v, 1, 1e13, &o->pi)) return -1; set_pi = 1; i++; }
        else if (!strcmp(a, "--anchor")) { if (parse_u64(prog, a, v, 1, 20000, &o->anchor)) return -1; i++; }
        else if (!strcmp(a, "--fixed-k")) { if (parse_u64(prog, a, v, 1, 100000, &o->fixed_k)) return -1; i++; }
        else if (!strcmp(a, "--draws")) { if (parse_u64(prog, a, v, 0, 1000000, &o->draws)) return -1; set_draws = 1; i++; }
        else if (!strcmp(a, "--max-product2")) { if (parse_double(prog, a, v, 1, 1e10, &o->pi2)) return -1; set_pi2 = 1; i++; }
        else if (!strcmp(a, "--lda")) { if (parse_u64(prog, a, v, 0, 100000, &o->lda)) return -1; i++; }
        else if (!strcmp(a, "--max-rows")) { if (parse_u64(prog, a, v, 1, 100000, &o->rows_cap)) return -1; i++; }
        else if (!strcmp(a, "--max-n1")) { if (parse_u64(prog, a, v, 1, 1ULL << 30, &u)) return -1; o->n1_max = (double)u; set_n1 = 1; i++; }
        else if (!strcmp(a, "--out-dir")) {
            if (!v || !v[0]) { ERR("%s: --out-dir needs a directory\n", prog); return -1; }
            o->out_dir = v; i++;
        } else if (!strcmp(a, "--kernels")) {
            if (!v || !v[0]) { ERR("%s: --kernels needs a list\n", prog); return -1; }
            memset(o->want, 0, sizeof o->want);
            for (const char *p = v; *p;) {
                size_t len = strcspn(p, ",");
                int k = kernel_by_name(p, len);
                if (k < 0) {
                    ERR("%s: --kernels: unknown kernel '%.*s' (known:", prog, (int)len, p);
                    for (int j = 0; j < NKERNELS; j++) ERR(" %s", kname[j]);
                    ERR(")\n");
                    return -1;
                }
                o->want[k] = 1;
                p += len + (p[len] == ',');
            }
            set_kernels = 1;
            i++;
        } else {
            ERR("%s: unknown option '%s' (see --help)\n", prog, a);
            return -1;
        }
    }
    if (!set_reps) o->reps = o->full ? 2 : 1;
    if (!set_grids) o->grids = o->full ? 3 : 1;
    if (!set_sigma) o->sigma = o->full ? 8192 : 4096;
    if (!set_pi) o->pi = o->full ? 2048.0 * 2048 * 2048 : 1024.0 * 1024 * 1024;
    if (!set_draws) o->draws = o->full ? 300 : 40;
    if (!set_pi2) o->pi2 = o->full ? (double)(1 << 23) : (double)(1 << 22);
    if (!set_n1) o->n1_max = o->full ? (double)(1 << 22) : (double)(1 << 20);
    o->dim2_cap = o->sigma;
    o->ntrsv_max = o->full ? 4096 : 2048;
    o->pi_trsm = o->full ? 1073741824.0 : 536870912.0;
    if (!set_kernels)
        for (int k = 0; k < NKERNELS; k++) o->want[k] = 1;
#ifndef CALIB_HAVE_HPL
    for (int k = LASWP00N; k < NKERNELS; k++) {
        if (set_kernels && o->want[k]) {
            ERR("%s: %s: this build has no HPL kernels (built without libhpl.a)\n", prog, kname[k]);
            return -1;
        }
        o->want[k] = 0;
    }
#endif
    if (!o->fixed_k && (double)o->sigma * o->sigma * o->sigma < o->pi) {
        ERR("%s: --max-product %.0f is larger than --max-dim^3 = %.0f: no factorisation fits\n",
                prog, o->pi, (double)o->sigma * o->sigma * o->sigma);
        return -1;
    }
    if (o->anchor > o->sigma && o->want[DGEMM]) {
        ERR("%s: --anchor %llu is larger than --max-dim %llu\n", prog,
                (unsigned long long)o->anchor, (unsigned long long)o->sigma);
        return -1;
    }
    if (o->fixed_k > o->sigma) {
        ERR("%s: --fixed-k %llu is larger than --max-dim %llu\n", prog,
                (unsigned long long)o->fixed_k, (unsigned long long)o->sigma);
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------ design */
typedef struct {
    call *v;
    size_t n, cap;
} callvec;

static void push(callvec *cv, int k, int64_t a, int64_t b, int64_t c, uint64_t reps)
{
    for (uint64_t r = 0; r < reps; r++) {
        if (cv->n == cv->cap) {
            cv->cap = cv->cap ? 2 * cv->cap : 1024;
            cv->v = realloc(cv->v, cv->cap * sizeof *cv->v);
            if (!cv->v) {
                fprintf(stderr, "%s: out of memory for the design\n", prog);
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
        }
        call *c0 = &cv->v[cv->n++];
        c0->k = (uint8_t)k;
        c0->p[0] = (int32_t)a;
        c0->p[1] = (int32_t)b;
        c0->p[2] = (int32_t)c;
    }
}

/* A redraw loop that cannot succeed means inconsistent size limits: say so, never hang. */
static void design_stuck(const char *kernel)
{
    fprintf(stderr, "%s: cannot draw sizes for %s within the limits (check --max-dim, --max-rows, "
            "--max-product2)\n", prog, kernel);
    MPI_Abort(MPI_COMM_WORLD, 2);
}

/* Product in stratum j of n over [1, max], jittered uniformly inside the stratum. */
static double stratum(calib_rng *r, uint64_t j, uint64_t n, double max)
{
    return 1.0 + (max - 1.0) * ((double)j + rng_uniform(r)) / (double)n;
}

static int64_t uniform_int(calib_rng *r, double lo, double hi) /* round(U(lo, hi)) */
{
    return (int64_t)llround(lo + (hi - lo) * rng_uniform(r));
}

/* Two factors A <= B of about P (A ~ U(1, sqrt P), B = P/A); emits (A,B) and (B,A) when each
 * respects its caps. Returns 0 if no order fits (the caller redraws). */
static int two_factors(calib_rng *r, double P, uint64_t cap0, uint64_t cap1, int64_t out[2][2], int *nout)
{
    int64_t a = uniform_int(r, 1.0, sqrt(P));
    if (a < 1) a = 1;
    int64_t b = llround(P / (double)a);
    if (b < 1) b = 1;
    *nout = 0;
    if ((uint64_t)a <= cap0 && (uint64_t)b <= cap1) { out[*nout][0] = a; out[*nout][1] = b; (*nout)++; }
    if (a != b && (uint64_t)b <= cap0 && (uint64_t)a <= cap1) { out[*nout][0] = b; out[*nout][1] = a; (*nout)++; }
    return *nout > 0;
}

static void gen_dgemm(calib_rng *r, const options *o, callvec *cv)
{
    const uint64_t K = o->fixed_k;
    for (uint64_t g = 0; g < o->grids; g++) {
        if (K == 0) {
            for (uint64_t j = 0; j < o->gamma; j++) {
                double P = stratum(r, j, o->gamma, o->pi);
                int64_t A, B, C;
                for (int tries = 0;; tries++) {
                    A = uniform_int(r, 1.0, cbrt(P));
                    if (A < 1) A = 1;
                    B = uniform_int(r, 1.0, sqrt(P / (double)A));
                    if (B < 1) B = 1;
                    C = llround(P / ((double)A * (double)B));
                    if (C < 1) C = 1;
                    if ((uint64_t)A <= o->sigma && (uint64_t)B <= o->sigma && (uint64_t)C <= o->sigma) break;
                    if (tries > 100000) { A = B = C = (int64_t)cbrt(P); break; }
                }
                /* all six permutations: no dimension is systematically the largest */
                push(cv, DGEMM, A, B, C, o->reps);
                push(cv, DGEMM, A, C, B, o->reps);
                push(cv, DGEMM, B, A, C, o->reps);
                push(cv, DGEMM, B, C, A, o->reps);
                push(cv, DGEMM, C, A, B, o->reps);
                push(cv, DGEMM, C, B, A, o->reps);
            }
            push(cv, DGEMM, 1, 1, 1, o->reps);
            push(cv, DGEMM, (int64_t)o->anchor, (int64_t)o->anchor, (int64_t)o->anchor, o->reps);
        } else {
            double pimn = (double)o->sigma * (double)o->sigma / 2.0;
            for (uint64_t j = 0; j < o->gamma; j++) {
                double P = stratum(r, j, o->gamma, pimn);
                int64_t f[2][2];
                int nf = 0;
                for (long tries = 0; !two_factors(r, P, o->sigma, o->sigma, f, &nf); tries++)
                    if (tries > 1000000) design_stuck("dgemm");
                for (int i = 0; i < nf; i++) push(cv, DGEMM, f[i][0], f[i][1], (int64_t)K, o->reps);
            }
            push(cv, DGEMM, 1, 1, (int64_t)K, o->reps);
            push(cv, DGEMM, (int64_t)o->anchor, (int64_t)o->anchor, (int64_t)K, o->reps);
        }
    }
}

static void gen_others(calib_rng *r, const options *o, callvec *cv)
{
    const uint64_t nd = o->draws;
    for (int k = DTRSM; k < NKERNELS; k++) {
        if (!o->want[k]) continue;
        for (uint64_t j = 0; j < nd; j++) {
            switch (k) {
            case DTRSM: {
                int64_t T, O;
                if (o->fixed_k) {
                    /* HPL's update dtrsm: the triangle's order is always NB (--fixed-k); the
                     * other side stratified uniformly up to the largest dimension */
                    T = (int64_t)o->fixed_k;
                    O = llround(stratum(r, j, nd, (double)o->sigma));
                    push(cv, DTRSM, T, O, 0, o->reps);
                    push(cv, DTRSM, O, T, 1, o->reps);
                    break;
                }
                /* cost ~ T^2 O (T: the triangle's order): stratify T^2 O, draw T, derive O */
                for (long tries = 0;; tries++) {
                    if (tries > 1000000) design_stuck("dtrsm");
                    double P = stratum(r, j, nd, o->pi_trsm);
                    double tmax = fmin(sqrt(P), (double)o->rows_cap);
                    T = uniform_int(r, 1.0, tmax);
                    if (T < 1) T = 1;
                    O = llround(P / ((double)T * (double)T));
                    if (O < 1) O = 1;
                    if ((uint64_t)O <= o->sigma) break;
                }
                push(cv, DTRSM, T, O, 0, o->reps); /* Left: triangle M x M */
                push(cv, DTRSM, O, T, 1, o->reps); /* Right: triangle N x N */
                break;
            }
            case DTRSV: {
                int64_t n = llround(pow(10.0, log10(o->ntrsv_max) * rng_uniform(r)));
                push(cv, k, n < 1 ? 1 : n, 0, 0, o->reps);
                break;
            }
            case DAXPY: case DSCAL: case DCOPY: case DSWAP: case IDAMAX: {
                int64_t n = llround(pow(10.0, log10(o->n1_max) * rng_uniform(r)));
                push(cv, k, n < 1 ? 1 : n, 0, 0, o->reps);
                break;
            }
            default: {
                /* two-dimensional: (rows, columns) or (length, count); HPL's row-swapping
                 * kernels work on at most NB-ish rows, the other side is the local width */
                uint64_t cap0 = o->dim2_cap, cap1 = o->dim2_cap;
                /* with --fixed-k NB, HPL's own bias: a panel swaps at most NB rows (columns for
                 * HPL_dlaswp10N), which a design drawing up to --max-rows rows rarely times */
                uint64_t rows = o->fixed_k ? o->fixed_k : o->rows_cap;
                if (k == LASWP00N || k == LASWP01T || k == LASWP02N || k == LASWP03T || k == LASWP04T ||
                    k == LASWP05T || k == LASWP06T)
                    cap0 = rows;
                if (k == LASWP10N) cap1 = rows;
                /* products above cap0*cap1/2 would need both sides near their caps: keep
                 * the strata where a random factorisation fits reasonably often */
                double pmax = fmin(o->pi2, 0.5 * (double)cap0 * (double)cap1);
                int64_t f[2][2];
                int nf = 0;
                for (long tries = 0; !two_factors(r, stratum(r, j, nd, pmax), cap0, cap1, f, &nf); tries++)
                    if (tries > 1000000) design_stuck(kname[k]);
                for (int i = 0; i < nf; i++) {
                    if (k == LASWP04T) /* (M0, M1, N): M0 <= M1 rows of U to A, the rest from W */
                        push(cv, k, (int64_t)rng_below(r, (uint64_t)f[i][0] + 1), f[i][0], f[i][1], o->reps);
                    else
                        push(cv, k, f[i][0], f[i][1], 0, o->reps);
                }
            }
            }
        }
    }
}

/* ------------------------------------------------------------------ memory */
typedef struct {
    size_t x, y, z, w, v, rhs, tri, idx, pool; /* elements */
} needs;

static size_t mx(size_t a, size_t b) { return a > b ? a : b; }

/* --lda: the leading dimension of the operands HPL takes from its local matrix (0: tight). */
static int g_lda;
static int ldm(int rows) { return g_lda > rows ? g_lda : rows; }

static void need_of(const call *c, needs *n)
{
    size_t a = (size_t)c->p[0], b = (size_t)c->p[1], d = (size_t)c->p[2];
    size_t la = (size_t)ldm(c->p[0]); /* leading dimension of an M-row operand of HPL's matrix */
    switch (c->k) {
    case DGEMM: n->x = mx(n->x, la * d); n->y = mx(n->y, b * d); n->z = mx(n->z, la * b); break;
    case DTRSM: {
        size_t t = d == 0 ? a : b;
        n->tri = mx(n->tri, t * t); n->z = mx(n->z, la * b); n->rhs = mx(n->rhs, la * b);
        break;
    }
    case DGEMV: n->x = mx(n->x, la * b); n->y = mx(n->y, b); n->z = mx(n->z, a); break;
    case DGER: n->x = mx(n->x, a); n->y = mx(n->y, b); n->z = mx(n->z, la * b); break;
    case DTRSV: n->tri = mx(n->tri, a * a); n->z = mx(n->z, a); n->rhs = mx(n->rhs, a); break;
    case DAXPY: case DCOPY: case IDAMAX: case DSCAL: n->x = mx(n->x, a); n->z = mx(n->z, a); break;
    case DSWAP: n->z = mx(n->z, a); n->w = mx(n->w, a); break;
    case LASWP00N: n->z = mx(n->z, la * b); n->idx = mx(n->idx, a); break;
    case LASWP10N: n->z = mx(n->z, la * b); n->idx = mx(n->idx, b); break;
    case LASWP01T: case LASWP05T: case LASWP06T:
        n->v = mx(n->v, la * b); n->z = mx(n->z, a * b); n->idx = mx(n->idx, a); n->pool = mx(n->pool, la);
        break;
    case LASWP02N:
        n->z = mx(n->z, la * b); n->w = mx(n->w, (b + 1) * a + 1); n->idx = mx(n->idx, a);
        n->pool = mx(n->pool, la);
        break;
    case LASWP03T: n->z = mx(n->z, a * b); n->w = mx(n->w, (b + 1) * a + 1); n->idx = mx(n->idx, a); break;
    case LASWP04T: /* (M0, M1, N) */
        la = (size_t)ldm(a > 0 ? (int)a : 1);
        n->z = mx(n->z, b * d); n->v = mx(n->v, la * d); n->w = mx(n->w, (d + 1) * b + 1);
        n->idx = mx(n->idx, b); n->pool = mx(n->pool, la);
        break;
    case LACPY: case LATCPY: n->x = mx(n->x, a * b); n->z = mx(n->z, la * b); break;
    }
}

static double *alloc_fill(size_t n, calib_rng *r, double scale, const char *what)
{
    if (n == 0) n = 1;
    double *p = malloc(n * sizeof *p);
    if (!p) {
        fprintf(stderr, "%s: cannot allocate %s (%zu doubles)\n", prog, what, n);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (size_t i = 0; i < n; i++) p[i] = scale * rng_uniform(r);
    return p;
}

typedef struct {
    double *x, *y, *z, *w, *v, *rhs, *tri;
    int *i1, *i2, *pool;
    size_t tri_n; /* largest triangle order */
} buffers;

/* A random permutation of [0, n) into idx. */
static void perm(calib_rng *r, int *idx, int n)
{
    for (int i = 0; i < n; i++) idx[i] = i;
    rng_shuffle(r, idx, (size_t)n, sizeof *idx);
}

/* m distinct rows of a matrix with `ld` rows, in random order, into idx: a random permutation
 * of [0, m) when the layout is tight (ld = m), else a partial Fisher-Yates shuffle of [0, ld)
 * (HPL gathers and scatters pivot rows from anywhere in its local matrix). */
static void rows_of(calib_rng *r, int *idx, int m, int ld, int *pool)
{
    if (ld <= m) {
        perm(r, idx, m);
        return;
    }
    for (int i = 0; i < ld; i++) pool[i] = i;
    for (int i = 0; i < m; i++) {
        int j = i + (int)rng_below(r, (uint64_t)(ld - i));
        int t = pool[i];
        pool[i] = pool[j];
        pool[j] = t;
        idx[i] = pool[i];
    }
}

/* Untimed preparation of a call: index arrays, restored right-hand sides, W0 offsets. */
static void prepare(const call *c, buffers *b, calib_rng *r)
{
    const int p0 = c->p[0], p1 = c->p[1], p2 = c->p[2];
    switch (c->k) {
    case DTRSM: { /* the M x N block of the ld-row right-hand side, column by column */
        const size_t ld = (size_t)ldm(p0);
        for (int j = 0; j < p1; j++)
            memcpy(b->z + (size_t)j * ld, b->rhs + (size_t)j * ld, (size_t)p0 * sizeof(double));
        break;
    }
    case DTRSV: memcpy(b->z, b->rhs, (size_t)p0 * sizeof(double)); break;
    case LASWP00N: /* row k swapped with a row in [k, max(lda, M)) */
        for (int k = 0; k < p0; k++) b->i1[k] = k + (int)rng_below(r, (uint64_t)(ldm(p0) - k));
        break;
    case LASWP10N: /* column j swapped with a column in [j, N) */
        for (int j = 0; j < p1; j++) b->i1[j] = j + (int)rng_below(r, (uint64_t)(p1 - j));
        break;
    case LASWP01T: /* half of the rows go to U (column >= 0), half move within A (-row) */
        rows_of(r, b->i1, p0, ldm(p0), b->pool);
        perm(r, b->i2, p0);
        for (int i = 0; i < p0; i++)
            if (p0 > 1 && rng_below(r, 2)) b->i2[i] = -(1 + (int)rng_below(r, (uint64_t)(p0 - 1)));
        break;
    case LASWP02N: case LASWP05T: case LASWP06T:
        rows_of(r, b->i1, p0, ldm(p0), b->pool);
        perm(r, b->i2, p0);
        break;
    case LASWP03T: /* W0(i*LDW) = destination column in U */
        perm(r, b->i1, p0);
        for (int i = 0; i < p0; i++) b->w[(size_t)i * (size_t)(p1 + 1)] = (double)b->i1[i];
        break;
    case LASWP04T: { /* (M0, M1, N): U has M1 columns, A has M0 rows */
        perm(r, b->i2, p1); /* the U columns the first M0 W columns replace */
        rows_of(r, b->i1, p0, ldm(p0 > 0 ? p0 : 1), b->pool);
        for (int i = p0; i < p1; i++) b->w[(size_t)i * (size_t)(p2 + 1)] = (double)b->i2[i];
        break;
    }
    default: break;
    }
}

static void run(const call *c, buffers *b)
{
    const int p0 = c->p[0], p1 = c->p[1], p2 = c->p[2];
    switch (c->k) {
    case DGEMM: /* as HPL's trailing update: C -= L U^T */
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, p0, p1, p2, -1.0, b->x, ldm(p0), b->y, p1, 1.0,
                    b->z, ldm(p0));
        break;
    case DTRSM:
        if (p2 == 0)
            /* HPL_pdupdateTT's 1 x Q update: U = L1^-T U, L1 unit upper (the fill is random
             * everywhere, so the upper triangle is as bounded as the lower one) */
            cblas_dtrsm(CblasColMajor, CblasLeft, CblasUpper, CblasTrans, CblasUnit, p0, p1, 1.0, b->tri,
                        p0, b->z, ldm(p0));
        else
            cblas_dtrsm(CblasColMajor, CblasRight, CblasUpper, CblasNoTrans, CblasUnit, p0, p1, 1.0, b->tri,
                        p1, b->z, ldm(p0));
        break;
    case DGEMV: cblas_dgemv(CblasColMajor, CblasNoTrans, p0, p1, -1.0, b->x, ldm(p0), b->y, 1, 1.0, b->z, 1); break;
    case DGER: cblas_dger(CblasColMajor, p0, p1, -1.0, b->x, 1, b->y, 1, b->z, ldm(p0)); break;
    case DTRSV: cblas_dtrsv(CblasColMajor, CblasLower, CblasNoTrans, CblasUnit, p0, b->tri, p0, b->z, 1); break;
    case DAXPY: cblas_daxpy(p0, -0.5, b->x, 1, b->z, 1); break;
    case DSCAL: cblas_dscal(p0, -1.0, b->z, 1); break; /* -1: magnitudes never drift */
    case DCOPY: cblas_dcopy(p0, b->x, 1, b->z, 1); break;
    case DSWAP: cblas_dswap(p0, b->z, 1, b->w, 1); break;
    case IDAMAX: { volatile size_t i = cblas_idamax(p0, b->x, 1); (void)i; break; }
#ifdef CALIB_HAVE_HPL
    case LASWP00N: HPL_dlaswp00N(p0, p1, b->z, ldm(p0), b->i1); break;
    case LASWP10N: HPL_dlaswp10N(p0, p1, b->z, ldm(p0), b->i1); break;
    case LASWP01T: HPL_dlaswp01T(p0, p1, b->v, ldm(p0), b->z, p1, b->i1, b->i2); break;
    case LASWP02N: HPL_dlaswp02N(p0, p1, b->z, ldm(p0), b->w, b->w + 1, p1 + 1, b->i1, b->i2); break;
    case LASWP03T: HPL_dlaswp03T(p0, p1, b->z, p1, b->w, b->w + 1, p1 + 1); break;
    case LASWP04T:
        HPL_dlaswp04T(p0, p1, p2, b->z, p2, b->v, ldm(p0 > 0 ? p0 : 1), b->w, b->w + 1, p2 + 1, b->i1, b->i2);
        break;
    case LASWP05T: HPL_dlaswp05T(p0, p1, b->v, ldm(p0), b->z, p1, b->i1, b->i2); break;
    case LASWP06T: HPL_dlaswp06T(p0, p1, b->v, ldm(p0), b->z, p1, b->i1); break;
    case LACPY: HPL_dlacpy(p0, p1, b->x, p0, b->z, ldm(p0)); break;
    case LATCPY: HPL_dlatcpy(p0, p1, b->x, p1, b->z, ldm(p0)); break;
#endif
    default: break;
    }
}

/* ------------------------------------------------------------------ pinning */
static int pin_self(int rank, int want_pin, int *pinned)
{
    *pinned = 0;
#ifdef __linux__
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        int count = CPU_COUNT(&set);
        if (count == 1) {
            *pinned = 1; /* the launcher bound us already */
        } else if (want_pin && count > 1) {
            int target = rank % count, seen = 0;
            for (int c = 0; c < CPU_SETSIZE; c++) {
                if (!CPU_ISSET(c, &set)) continue;
                if (seen++ == target) {
                    cpu_set_t one;
                    CPU_ZERO(&one);
                    CPU_SET(c, &one);
                    if (sched_setaffinity(0, sizeof one, &one) == 0) *pinned = 1;
                    break;
                }
            }
        }
    }
    return sched_getcpu();
#else
    (void)rank;
    (void)want_pin;
    return -1;
#endif
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);

    options o;
    calib_quiet = rank != 0;
    int pa = parse_args(argc, argv, &o);
    if (pa != 0) {
        if (pa > 0 && rank == 0) usage(stdout);
        /* nobody leaves before rank 0 has spoken (a launcher ends the job at the first
         * non-zero exit) */
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Finalize();
        return pa > 0 ? 0 : 2;
    }

    int pinned = 0;
    int core = pin_self(rank, o.pin, &pinned);
    int *cores = malloc((size_t)np * sizeof *cores);
    MPI_Allgather(&core, 1, MPI_INT, cores, 1, MPI_INT, MPI_COMM_WORLD);
    int shared = -1; /* a core two ranks run on: the files (one per core) would collide */
    for (int i = 0; i < np && shared < 0; i++)
        for (int j = i + 1; j < np && shared < 0; j++)
            if (cores[i] == cores[j]) shared = i * np + j;
    if (shared >= 0) {
        if (rank == 0)
            fprintf(stderr, "%s: ranks %d and %d both run on core %d: start at most one process per core\n",
                    prog, shared / np, shared % np, cores[shared / np]);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Finalize();
        return 2;
    }

#ifdef CALIB_HAVE_OPENBLAS
    openblas_set_num_threads(1); /* one process per core: BLAS threads would fight them */
    char blas[128], blas_kernel[128];
    snprintf(blas, sizeof blas, "%s", openblas_get_config());
    { /* "OpenBLAS 0.3.21 NO_LAPACKE ..." -> "OpenBLAS 0.3.21" */
        char *sp = strchr(blas, ' ');
        if (sp && (sp = strchr(sp + 1, ' '))) *sp = '\0';
    }
    snprintf(blas_kernel, sizeof blas_kernel, "%s", openblas_get_corename());
#else
    const char *blas = "unknown (not OpenBLAS)", *blas_kernel = "unknown";
#endif

    calib_sysinfo si;
    sysinfo_collect(&si, argc, argv);
    calib_timer timer;
    timer_characterise(&timer);

    /* The design: identical on every process (same seed). */
    calib_rng r;
    rng_seed(&r, o.seed);
    callvec cv = {0};
    if (o.want[DGEMM]) gen_dgemm(&r, &o, &cv);
    gen_others(&r, &o, &cv);
    if (cv.n == 0) {
        if (rank == 0) fprintf(stderr, "%s: the design is empty (no kernel, or --draws 0 and --grids 0)\n", prog);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Finalize();
        return 2;
    }
    rng_shuffle(&r, cv.v, cv.n, sizeof *cv.v);
    g_lda = (int)o.lda;
    uint64_t hash = FNV1A64_INIT;
    if (o.lda) { /* the layout is part of the design (a tight design keeps its old hash) */
        char line[48];
        int len = snprintf(line, sizeof line, "lda=%llu\n", (unsigned long long)o.lda);
        hash = fnv1a64(hash, line, (size_t)len);
    }
    needs nd = {0};
    for (size_t i = 0; i < cv.n; i++) {
        char line[96];
        int len = snprintf(line, sizeof line, "%s,%d,%d,%d\n", kname[cv.v[i].k], cv.v[i].p[0], cv.v[i].p[1],
                           cv.v[i].p[2]);
        hash = fnv1a64(hash, line, (size_t)len);
        need_of(&cv.v[i], &nd);
    }
    if (o.list_only) {
        if (rank == 0) {
            printf("# design_hash: fnv1a64:%016llx\n# calls: %zu\n# memory_mib: %.0f\nkernel,p0,p1,p2\n",
                   (unsigned long long)hash, cv.n,
                   (double)(nd.x + nd.y + nd.z + nd.w + nd.v + nd.rhs + nd.tri) * 8.0 / 1048576.0);
            for (size_t i = 0; i < cv.n; i++)
                printf("%s,%d,%d,%d\n", kname[cv.v[i].k], cv.v[i].p[0], cv.v[i].p[1], cv.v[i].p[2]);
        }
        MPI_Finalize();
        return 0;
    }
    /* warm-up calls (below) need a little of everything */
    nd.x = mx(nd.x, 256 * 256); nd.y = mx(nd.y, 256 * 256); nd.z = mx(nd.z, 256 * 256);
    nd.w = mx(nd.w, 65 * 64 + 1); nd.v = mx(nd.v, 64 * 64); nd.tri = mx(nd.tri, 64 * 64);
    nd.rhs = mx(nd.rhs, 64 * 64); nd.idx = mx(nd.idx, 64);
    for (int k = 0; k < NKERNELS; k++) { /* ... at the layout's leading dimension */
        call c = {{64, 64, 64}, (uint8_t)k};
        if (k == DTRSM) c.p[2] = 0;
        if (k == LASWP04T) c.p[0] = 32;
        need_of(&c, &nd);
    }
    const call filler = {{256, 256, 256}, DGEMM};
    need_of(&filler, &nd);

    /* Data: uniform [0,1], from a stream that depends on the seed and the rank only. */
    calib_rng fill;
    rng_seed(&fill, o.seed * 0x9e3779b97f4a7c15ULL + (uint64_t)rank + 1);
    buffers b;
    size_t tri_n = (size_t)sqrt((double)nd.tri);
    b.x = alloc_fill(nd.x, &fill, 1.0, "x");
    b.y = alloc_fill(nd.y, &fill, 1.0, "y");
    b.z = alloc_fill(nd.z, &fill, 1.0, "z");
    b.w = alloc_fill(nd.w, &fill, 1.0, "w");
    b.v = alloc_fill(nd.v, &fill, 1.0, "v");
    b.rhs = alloc_fill(nd.rhs, &fill, 1.0, "rhs");
    b.tri = alloc_fill(nd.tri, &fill, 1.0 / (double)(tri_n ? tri_n : 1), "tri");
    b.tri_n = tri_n;
    b.i1 = calloc(nd.idx, sizeof *b.i1);
    b.i2 = calloc(nd.idx, sizeof *b.i2);
    b.pool = calloc(nd.pool ? nd.pool : 1, sizeof *b.pool);
    double *start = malloc(cv.n * sizeof *start), *dur = malloc(cv.n * sizeof *dur);
    if (!b.i1 || !b.i2 || !b.pool || !start || !dur) {
        fprintf(stderr, "%s: out of memory\n", prog);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    double mib = (double)(nd.x + nd.y + nd.z + nd.w + nd.v + nd.rhs + nd.tri) * 8.0 / 1048576.0;

    /* Untimed warm-up: every kernel of the design once, small (OpenBLAS allocates its
     * buffers and resolves its kernels on the first call). */
    calib_rng prep;
    rng_seed(&prep, o.seed ^ 0xa5a5a5a5a5a5a5a5ULL);
    for (int k = 0; k < NKERNELS; k++) {
        if (!o.want[k]) continue;
        call c = {{64, 64, 64}, (uint8_t)k};
        if (nparams[k] == 1) c.p[1] = c.p[2] = 0;
        if (k == DTRSM) c.p[2] = 0;
        if (k == LASWP04T) c.p[0] = 32;
        if (nparams[k] == 2) c.p[2] = 0;
        prepare(&c, &b, &prep);
        run(&c, &b);
    }

    MPI_Barrier(MPI_COMM_WORLD);
    const double t_run = MPI_Wtime();
    for (size_t i = 0; i < cv.n; i++) {
        prepare(&cv.v[i], &b, &prep);
        double t0 = MPI_Wtime();
        run(&cv.v[i], &b);
        double t1 = MPI_Wtime();
        start[i] = t0 - t_run;
        dur[i] = t1 - t0;
    }
    const double t_done = MPI_Wtime();

    /* Keep this core loaded until every process is done, so the last calls of the slowest
     * process do not run on an idle machine. */
    MPI_Request all_done;
    int flag = 0;
    MPI_Ibarrier(MPI_COMM_WORLD, &all_done);
    long fillers = 0;
    for (;;) {
        MPI_Test(&all_done, &flag, MPI_STATUS_IGNORE);
        if (flag) break;
        run(&filler, &b);
        fillers++;
    }

    /* The outputs must still be ordinary numbers: an Inf or NaN (or a drift into denormals)
     * would change the kernels' speed and void the measures after it. */
    size_t nonfinite = 0;
    {
        const double *bufs[3] = {b.z, b.w, b.v};
        const size_t lens[3] = {nd.z, nd.w, nd.v};
        for (int j = 0; j < 3; j++)
            for (size_t i = 0; i < lens[j]; i++) nonfinite += !isnormal(bufs[j][i]) && bufs[j][i] != 0.0;
    }
    if (nonfinite)
        fprintf(stderr, "%s: rank %d: warning: %zu output values are Inf, NaN or denormal\n", prog, rank, nonfinite);

    char path[4096];
    snprintf(path, sizeof path, "%s/compute-%s-core%d-%llu.csv", o.out_dir, si.host, core,
             (unsigned long long)o.seed);
    int status = 0;
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        status = 1;
    } else {
        char kernels[1024] = "";
        for (int k = 0; k < NKERNELS; k++)
            if (o.want[k]) {
                strncat(kernels, kernels[0] ? "," : "", sizeof kernels - strlen(kernels) - 1);
                strncat(kernels, kname[k], sizeof kernels - strlen(kernels) - 1);
            }
        meta_common(f, "compute", &si, blas, blas_kernel, o.seed, o.full ? "full" : "quick", &timer);
        meta(f, "ranks", "%d", np);
        meta(f, "rank", "%d", rank);
        meta(f, "core", "%d", core);
        meta(f, "pinned", "%s", pinned ? "yes" : "no");
#ifdef CALIB_HAVE_OPENBLAS
        meta(f, "openblas_config", "%s", openblas_get_config());
        meta(f, "blas_threads", "%d", openblas_get_num_threads());
#endif
        meta(f, "generator", "calib_compute 1 (xoshiro256**, uniform product, Fisher-Yates)");
        if (o.fixed_k)
            meta(f, "dgemm_design", "fixed-k K=%llu, M*N uniform product up to %.0f, gamma=%llu, grids=%llu, "
                 "max_dim=%llu, anchors (1,1,K) (%llu,%llu,K)",
                 (unsigned long long)o.fixed_k, (double)o.sigma * o.sigma / 2, (unsigned long long)o.gamma,
                 (unsigned long long)o.grids, (unsigned long long)o.sigma, (unsigned long long)o.anchor,
                 (unsigned long long)o.anchor);
        else
            meta(f, "dgemm_design", "uniform-product gamma=%llu, grids=%llu, max_dim=%llu, max_product=%.0f, "
                 "6 permutations, anchors (1,1,1) (%llu,%llu,%llu)",
                 (unsigned long long)o.gamma, (unsigned long long)o.grids, (unsigned long long)o.sigma, o.pi,
                 (unsigned long long)o.anchor, (unsigned long long)o.anchor, (unsigned long long)o.anchor);
        if (o.fixed_k) meta(f, "fixed_k", "%llu", (unsigned long long)o.fixed_k);
        if (o.lda)
            meta(f, "calls", "dgemm NoTrans,Trans alpha=-1 beta=1; dtrsm Left/Upper/Trans or Right/Upper/NoTrans, Unit; "
                 "dgemv NoTrans; dtrsv Lower NoTrans Unit; column-major; HPL layout: dgemm A and C, dtrsm B, "
                 "dgemv and dger A, HPL_dlacpy/HPL_dlatcpy destination, HPL_dlaswp* A with leading dimension "
                 "max(%llu, rows), HPL_dlaswp* rows drawn among max(%llu, rows); other operands tight",
                 (unsigned long long)o.lda, (unsigned long long)o.lda);
        else
            meta(f, "calls", "dgemm NoTrans,Trans alpha=-1 beta=1; dtrsm Left/Upper/Trans or Right/Upper/NoTrans, Unit; "
                 "dgemv NoTrans; dtrsv Lower NoTrans Unit; leading dimensions = rows (tight); column-major");
        meta(f, "lda", "%llu", (unsigned long long)o.lda);
        meta(f, "data", "uniform [0,1] (triangles: U(0,1)/%zu, unit diagonal); %.0f MiB allocated once", tri_n, mib);
        meta(f, "kernels", "%s", kernels);
        meta(f, "reps", "%llu", (unsigned long long)o.reps);
        meta(f, "draws", "%llu", (unsigned long long)o.draws);
        meta(f, "design_hash", "fnv1a64:%016llx", (unsigned long long)hash);
        meta(f, "run_seconds", "%.6f", t_done - t_run);
        meta(f, "filler_calls", "%ld", fillers);
        meta(f, "abnormal_outputs", "%zu", nonfinite);
        fprintf(f, "seq,core,kernel,p0,p1,p2,start,duration\n");
        for (size_t i = 0; i < cv.n; i++) {
            const call *c = &cv.v[i];
            int np_ = nparams[c->k];
            fprintf(f, "%zu,%d,%s,%d,", i, core, kname[c->k], c->p[0]);
            if (np_ >= 2) fprintf(f, "%d", c->p[1]);
            fputc(',', f);
            if (np_ >= 3) fprintf(f, "%d", c->p[2]);
            fprintf(f, ",%.9e,%.9e\n", start[i], dur[i]);
        }
        fprintf(f, "# end: %zu\n", cv.n);
        if (fclose(f) != 0) {
            perror(path);
            status = 1;
        }
    }
    if (status == 0)
        fprintf(stderr, "%s: rank %d core %d: %zu calls in %.2f s (%.0f MiB, BLAS %s core %s) -> %s\n", prog,
                rank, core, cv.n, t_done - t_run, mib, blas, blas_kernel, path);
    int any = 0;
    MPI_Allreduce(&status, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Finalize();
    return any;
}
