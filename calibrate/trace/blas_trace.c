/* blas_trace.so: an LD_PRELOAD library that times every CBLAS call a
 * dynamically linked program makes (the real HPL built by
 * apps/hpl/build-real.sh calls cblas_dgemm, cblas_dtrsm, ... from OpenBLAS)
 * and writes them, at exit, as a calibration CSV (apps/calibration/FORMAT.md,
 * kind compute): one file per process, BLAS_TRACE_DIR/trace-<host>-core<c>-<rank>.csv.
 *
 * Why: which kernels dominate HPL's time, with which geometries, measured in
 * HPL itself (smpi-validate --trace); and HPL-like calls (NB-fixed dgemm,
 * the panel's small dgemm/dtrsm and BLAS-1/2 calls) that a randomized
 * calibration design rarely draws.
 *
 * Built with -DBLAS_TRACE_HPL and linked into the program instead of preloaded,
 * it also times HPL's own row-swap and copy functions (HPL_dlaswp00N, 01T,
 * 02N, 03T, 04T, 05T, 06T, 10N, HPL_dlacpy, HPL_dlatcpy), which xhpl links
 * statically, so no preload can see them: link with
 * -Wl,--wrap=HPL_dlaswp00N,--wrap=HPL_dlaswp01T,... (every name above) and
 * -ldl. The program's calls then go through __wrap_<name>, which times
 * __real_<name>. The thesis calibrates these functions from a small real HPL
 * run: they work on rows HPL has just touched, warm in the caches, which no
 * random-access benchmark reproduces. Their parameters in the CSV are their
 * function models' (apps/calibration/FORMAT.md): M,N (04T: M0,M1,N).
 *
 * In that build it also times HPL's MPI calls (MPI_Send, MPI_Ssend, MPI_Recv,
 * MPI_Iprobe, MPI_Irecv, MPI_Issend, MPI_Wait, through the profiling
 * interface) into a second file per process,
 * BLAS_TRACE_DIR/mpi-<host>-core<c>-<rank>.csv (format smpi-mpi-trace/1:
 * seq,call,bytes,peer,start,duration; an MPI_Iprobe's bytes are 1 when it
 * found a message, 0 when not), so that a run's time splits into kernels,
 * MPI and HPL's own code. Both files give `t0_monotonic_s`, the process's
 * time origin on CLOCK_MONOTONIC (one clock for all processes of a host), so
 * that the ranks' timelines can be aligned.
 *
 * Environment: BLAS_TRACE_DIR (required, else nothing is written),
 * BLAS_TRACE_MAX (calls kept per process, default 4000000; further calls are
 * counted, not kept). Rank and core come from OMPI_COMM_WORLD_RANK and
 * sched_getcpu() at the first call.
 *
 * Build: cc -O2 -shared -fPIC -o blas_trace.so blas_trace.c -ldl
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/utsname.h>
#ifdef BLAS_TRACE_HPL
#include <mpi.h>
#endif

enum {
    K_DGEMM, K_DTRSM, K_DGEMV, K_DGER, K_DTRSV, K_DAXPY, K_DSCAL, K_DSWAP, K_DCOPY, K_IDAMAX,
    K_LASWP00N, K_LASWP01T, K_LASWP02N, K_LASWP03T, K_LASWP04T, K_LASWP05T, K_LASWP06T, K_LASWP10N,
    K_LACPY, K_LATCPY, K_N
};
static const char *names[K_N] = {"dgemm", "dtrsm", "dgemv", "dger", "dtrsv", "daxpy", "dscal",
                                 "dswap", "dcopy", "idamax", "HPL_dlaswp00N", "HPL_dlaswp01T",
                                 "HPL_dlaswp02N", "HPL_dlaswp03T", "HPL_dlaswp04T", "HPL_dlaswp05T",
                                 "HPL_dlaswp06T", "HPL_dlaswp10N", "HPL_dlacpy", "HPL_dlatcpy"};

typedef struct {
    double start, dur;
    int p0, p1, p2;
    unsigned char k, np;
} rec_t;

static rec_t *recs;
static size_t nrec, cap, dropped;
static double t0;
static int core = -1;
static int registered;

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void flush(void);
#ifdef BLAS_TRACE_HPL
static void flush_mpi(const char *dir, const char *host, const char *rk, const char *date, const char *cmd);
#endif

static void init_once(void) {
    if (registered) return;
    registered = 1;
    t0 = now();
    core = sched_getcpu();
    const char *m = getenv("BLAS_TRACE_MAX");
    cap = m ? strtoull(m, NULL, 10) : 4000000;
    recs = malloc(cap * sizeof(rec_t));
    if (!recs) cap = 0;
    atexit(flush);
}

static void keep(int k, double s, double e, int np, int a, int b, int c) {
    if (nrec < cap) {
        rec_t *r = &recs[nrec++];
        r->start = s - t0;
        r->dur = e - s;
        r->k = (unsigned char)k;
        r->np = (unsigned char)np;
        r->p0 = a;
        r->p1 = b;
        r->p2 = c;
    } else {
        dropped++;
    }
}

static void flush(void) {
    const char *dir = getenv("BLAS_TRACE_DIR");
    if (!dir || !recs) return;
    const char *rk = getenv("OMPI_COMM_WORLD_RANK");
    struct utsname u;
    uname(&u);
    char host[256];
    gethostname(host, sizeof host);
    host[sizeof host - 1] = 0;
    char path[4096];
    snprintf(path, sizeof path, "%s/trace-%s-core%d-%s.csv", dir, host, core, rk ? rk : "0");
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f) return;
    time_t tt = time(NULL);
    char date[64];
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&tt));
    char cmd[4096] = "unknown";
    FILE *c = fopen("/proc/self/cmdline", "r");
    if (c) {
        size_t n = fread(cmd, 1, sizeof cmd - 1, c);
        fclose(c);
        for (size_t i = 0; i + 1 < n; i++)
            if (!cmd[i]) cmd[i] = ' ';
        cmd[n] = 0;
    }
    fprintf(f, "# format: smpi-calibration/1\n# kind: compute\n# host: %s\n# date: %s\n", host, date);
    fprintf(f, "# kernel: %s %s %s\n# cpu: see the run's system description\n", u.sysname, u.release, u.machine);
    fprintf(f, "# compiler: unknown\n# mpi: the traced program's\n# blas: the traced program's\n");
    fprintf(f, "# blas_kernel: %s\n", getenv("BLAS_TRACE_KERNEL") ? getenv("BLAS_TRACE_KERNEL") : "unknown");
    fprintf(f, "# command: %s\n# seed: 0\n# mode: trace\n# timer: clock_gettime(CLOCK_MONOTONIC)\n", cmd);
    fprintf(f, "# timer_resolution_s: 1e-09\n# timer_overhead_s: 2e-08\n# core: %d\n# rank: %s\n", core,
            rk ? rk : "0");
#ifdef BLAS_TRACE_HPL
    fprintf(f, "# note: blas_trace.c (calibrate/trace), linked in: every CBLAS call of the program and every call of "
               "HPL's row-swap and copy functions timed around the call\n");
#else
    fprintf(f, "# note: blas_trace.so (calibrate/trace): every CBLAS call of the program, timed around the call\n");
#endif
    fprintf(f, "# dropped_calls: %zu\n# t0_monotonic_s: %.9f\n", dropped, t0);
    fprintf(f, "seq,core,kernel,p0,p1,p2,start,duration\n");
    for (size_t i = 0; i < nrec; i++) {
        rec_t *r = &recs[i];
        fprintf(f, "%zu,%d,%s,%d,", i, core, names[r->k], r->p0);
        if (r->np > 1) fprintf(f, "%d", r->p1);
        fputc(',', f);
        if (r->np > 2) fprintf(f, "%d", r->p2);
        fprintf(f, ",%.9e,%.9e\n", r->start, r->dur);
    }
    fprintf(f, "# end: %zu\n", nrec);
    fclose(f);
    rename(tmp, path);
#ifdef BLAS_TRACE_HPL
    flush_mpi(dir, host, rk, date, cmd);
#endif
}

#define REAL(fn, type)                                                   \
    static type real_##fn;                                               \
    if (!real_##fn) {                                                    \
        init_once();                                                     \
        real_##fn = (type)dlsym(RTLD_NEXT, "cblas_" #fn);                \
        if (!real_##fn) {                                                \
            fprintf(stderr, "blas_trace: no cblas_" #fn " below\n");     \
            abort();                                                     \
        }                                                                \
    }

typedef void (*dgemm_t)(int, int, int, int, int, int, double, const double *, int, const double *, int, double,
                        double *, int);
void cblas_dgemm(int o, int ta, int tb, int M, int N, int K, double al, const double *A, int lda, const double *B,
                 int ldb, double be, double *C, int ldc) {
    REAL(dgemm, dgemm_t);
    double s = now();
    real_dgemm(o, ta, tb, M, N, K, al, A, lda, B, ldb, be, C, ldc);
    keep(K_DGEMM, s, now(), 3, M, N, K);
}

typedef void (*dtrsm_t)(int, int, int, int, int, int, int, double, const double *, int, double *, int);
void cblas_dtrsm(int o, int side, int uplo, int ta, int diag, int M, int N, double al, const double *A, int lda,
                 double *B, int ldb) {
    REAL(dtrsm, dtrsm_t);
    double s = now();
    real_dtrsm(o, side, uplo, ta, diag, M, N, al, A, lda, B, ldb);
    /* FORMAT.md: side 0 = Left (CblasLeft = 141), 1 = Right */
    keep(K_DTRSM, s, now(), 3, M, N, side == 141 ? 0 : 1);
}

typedef void (*dgemv_t)(int, int, int, int, double, const double *, int, const double *, int, double, double *,
                        int);
void cblas_dgemv(int o, int ta, int M, int N, double al, const double *A, int lda, const double *X, int incx,
                 double be, double *Y, int incy) {
    REAL(dgemv, dgemv_t);
    double s = now();
    real_dgemv(o, ta, M, N, al, A, lda, X, incx, be, Y, incy);
    keep(K_DGEMV, s, now(), 2, M, N, 0);
}

typedef void (*dger_t)(int, int, int, double, const double *, int, const double *, int, double *, int);
void cblas_dger(int o, int M, int N, double al, const double *X, int incx, const double *Y, int incy, double *A,
                int lda) {
    REAL(dger, dger_t);
    double s = now();
    real_dger(o, M, N, al, X, incx, Y, incy, A, lda);
    keep(K_DGER, s, now(), 2, M, N, 0);
}

typedef void (*dtrsv_t)(int, int, int, int, int, const double *, int, double *, int);
void cblas_dtrsv(int o, int uplo, int ta, int diag, int N, const double *A, int lda, double *X, int incx) {
    REAL(dtrsv, dtrsv_t);
    double s = now();
    real_dtrsv(o, uplo, ta, diag, N, A, lda, X, incx);
    keep(K_DTRSV, s, now(), 1, N, 0, 0);
}

typedef void (*daxpy_t)(int, double, const double *, int, double *, int);
void cblas_daxpy(int N, double al, const double *X, int incx, double *Y, int incy) {
    REAL(daxpy, daxpy_t);
    double s = now();
    real_daxpy(N, al, X, incx, Y, incy);
    keep(K_DAXPY, s, now(), 1, N, 0, 0);
}

typedef void (*dscal_t)(int, double, double *, int);
void cblas_dscal(int N, double al, double *X, int incx) {
    REAL(dscal, dscal_t);
    double s = now();
    real_dscal(N, al, X, incx);
    keep(K_DSCAL, s, now(), 1, N, 0, 0);
}

typedef void (*dswap_t)(int, double *, int, double *, int);
void cblas_dswap(int N, double *X, int incx, double *Y, int incy) {
    REAL(dswap, dswap_t);
    double s = now();
    real_dswap(N, X, incx, Y, incy);
    keep(K_DSWAP, s, now(), 1, N, 0, 0);
}

typedef void (*dcopy_t)(int, const double *, int, double *, int);
void cblas_dcopy(int N, const double *X, int incx, double *Y, int incy) {
    REAL(dcopy, dcopy_t);
    double s = now();
    real_dcopy(N, X, incx, Y, incy);
    keep(K_DCOPY, s, now(), 1, N, 0, 0);
}

typedef size_t (*idamax_t)(int, const double *, int);
size_t cblas_idamax(int N, const double *X, int incx) {
    REAL(idamax, idamax_t);
    double s = now();
    size_t r = real_idamax(N, X, incx);
    keep(K_IDAMAX, s, now(), 1, N, 0, 0);
    return r;
}

#ifdef BLAS_TRACE_HPL
/* HPL's own functions, reached through the linker's --wrap (see the top). */
#define HPL_ROWS(name, k)                                                                           \
    void __real_##name(int, int, double *, int, const int *);                                       \
    void __wrap_##name(int M, int N, double *A, int LDA, const int *IPIV) {                         \
        init_once();                                                                                \
        double s = now();                                                                           \
        __real_##name(M, N, A, LDA, IPIV);                                                          \
        keep(k, s, now(), 2, M, N, 0);                                                              \
    }
HPL_ROWS(HPL_dlaswp00N, K_LASWP00N)
HPL_ROWS(HPL_dlaswp10N, K_LASWP10N)

/* (M, N, A, LDA, U, LDU, LINDXA, LINDXAU): 01T and 05T (05T's U is const; same registers). */
#define HPL_GATHER(name, k)                                                                         \
    void __real_##name(int, int, double *, int, double *, int, const int *, const int *);           \
    void __wrap_##name(int M, int N, double *A, int LDA, double *U, int LDU, const int *X,          \
                       const int *XU) {                                                             \
        init_once();                                                                                \
        double s = now();                                                                           \
        __real_##name(M, N, A, LDA, U, LDU, X, XU);                                                 \
        keep(k, s, now(), 2, M, N, 0);                                                              \
    }
HPL_GATHER(HPL_dlaswp01T, K_LASWP01T)
HPL_GATHER(HPL_dlaswp05T, K_LASWP05T)

void __real_HPL_dlaswp02N(int, int, const double *, int, double *, double *, int, const int *, const int *);
void __wrap_HPL_dlaswp02N(int M, int N, const double *A, int LDA, double *W0, double *W, int LDW, const int *X,
                          const int *XU) {
    init_once();
    double s = now();
    __real_HPL_dlaswp02N(M, N, A, LDA, W0, W, LDW, X, XU);
    keep(K_LASWP02N, s, now(), 2, M, N, 0);
}

void __real_HPL_dlaswp03T(int, int, double *, int, const double *, const double *, int);
void __wrap_HPL_dlaswp03T(int M, int N, double *U, int LDU, const double *W0, const double *W, int LDW) {
    init_once();
    double s = now();
    __real_HPL_dlaswp03T(M, N, U, LDU, W0, W, LDW);
    keep(K_LASWP03T, s, now(), 2, M, N, 0);
}

void __real_HPL_dlaswp04T(int, int, int, double *, int, double *, int, const double *, const double *, int,
                          const int *, const int *);
void __wrap_HPL_dlaswp04T(int M0, int M1, int N, double *U, int LDU, double *A, int LDA, const double *W0,
                          const double *W, int LDW, const int *X, const int *XU) {
    init_once();
    double s = now();
    __real_HPL_dlaswp04T(M0, M1, N, U, LDU, A, LDA, W0, W, LDW, X, XU);
    keep(K_LASWP04T, s, now(), 3, M0, M1, N);
}

void __real_HPL_dlaswp06T(int, int, double *, int, double *, int, const int *);
void __wrap_HPL_dlaswp06T(int M, int N, double *A, int LDA, double *U, int LDU, const int *X) {
    init_once();
    double s = now();
    __real_HPL_dlaswp06T(M, N, A, LDA, U, LDU, X);
    keep(K_LASWP06T, s, now(), 2, M, N, 0);
}

#define HPL_COPY(name, k)                                                                           \
    void __real_##name(int, int, const double *, int, double *, int);                               \
    void __wrap_##name(int M, int N, const double *A, int LDA, double *B, int LDB) {                \
        init_once();                                                                                \
        double s = now();                                                                           \
        __real_##name(M, N, A, LDA, B, LDB);                                                        \
        keep(k, s, now(), 2, M, N, 0);                                                              \
    }
HPL_COPY(HPL_dlacpy, K_LACPY)
HPL_COPY(HPL_dlatcpy, K_LATCPY)

/* HPL's MPI calls, through the profiling interface. */
enum { M_SEND, M_SSEND, M_RECV, M_IPROBE, M_IRECV, M_ISSEND, M_WAIT, M_N };
static const char *mpi_names[M_N] = {"MPI_Send",  "MPI_Ssend",  "MPI_Recv", "MPI_Iprobe",
                                     "MPI_Irecv", "MPI_Issend", "MPI_Wait"};
typedef struct {
    double start, dur;
    long long bytes;
    int peer;
    unsigned char call;
} mrec_t;
static mrec_t *mrecs;
static size_t nmrec, mcap, mdropped;

static long long payload(int count, MPI_Datatype dt) {
    int size = 0;
    PMPI_Type_size(dt, &size);
    return (long long)count * size;
}

static void keep_mpi(int call, double s, double e, long long bytes, int peer) {
    if (!mrecs && !mdropped) {
        mcap = cap ? cap / 4 : 1000000;
        mrecs = malloc(mcap * sizeof(mrec_t));
        if (!mrecs) mcap = 0;
    }
    if (nmrec < mcap) {
        mrec_t *r = &mrecs[nmrec++];
        r->start = s - t0;
        r->dur = e - s;
        r->bytes = bytes;
        r->peer = peer;
        r->call = (unsigned char)call;
    } else {
        mdropped++;
    }
}

int MPI_Send(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm) {
    init_once();
    double s = now();
    int r = PMPI_Send(buf, count, dt, dest, tag, comm);
    keep_mpi(M_SEND, s, now(), payload(count, dt), dest);
    return r;
}

int MPI_Ssend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm) {
    init_once();
    double s = now();
    int r = PMPI_Ssend(buf, count, dt, dest, tag, comm);
    keep_mpi(M_SSEND, s, now(), payload(count, dt), dest);
    return r;
}

int MPI_Recv(void *buf, int count, MPI_Datatype dt, int src, int tag, MPI_Comm comm, MPI_Status *st) {
    init_once();
    double s = now();
    int r = PMPI_Recv(buf, count, dt, src, tag, comm, st);
    keep_mpi(M_RECV, s, now(), payload(count, dt), src);
    return r;
}

int MPI_Iprobe(int src, int tag, MPI_Comm comm, int *flag, MPI_Status *st) {
    init_once();
    double s = now();
    int r = PMPI_Iprobe(src, tag, comm, flag, st);
    keep_mpi(M_IPROBE, s, now(), *flag ? 1 : 0, src);
    return r;
}

int MPI_Irecv(void *buf, int count, MPI_Datatype dt, int src, int tag, MPI_Comm comm, MPI_Request *req) {
    init_once();
    double s = now();
    int r = PMPI_Irecv(buf, count, dt, src, tag, comm, req);
    keep_mpi(M_IRECV, s, now(), payload(count, dt), src);
    return r;
}

int MPI_Issend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request *req) {
    init_once();
    double s = now();
    int r = PMPI_Issend(buf, count, dt, dest, tag, comm, req);
    keep_mpi(M_ISSEND, s, now(), payload(count, dt), dest);
    return r;
}

int MPI_Wait(MPI_Request *req, MPI_Status *st) {
    init_once();
    double s = now();
    int r = PMPI_Wait(req, st);
    keep_mpi(M_WAIT, s, now(), 0, -1);
    return r;
}

static void flush_mpi(const char *dir, const char *host, const char *rk, const char *date, const char *cmd) {
    if (!mrecs) return;
    char path[4096], tmp[4200];
    snprintf(path, sizeof path, "%s/mpi-%s-core%d-%s.csv", dir, host, core, rk ? rk : "0");
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f) return;
    fprintf(f, "# format: smpi-mpi-trace/1\n# host: %s\n# date: %s\n# command: %s\n", host, date, cmd);
    fprintf(f, "# timer: clock_gettime(CLOCK_MONOTONIC)\n# core: %d\n# rank: %s\n", core, rk ? rk : "0");
    fprintf(f, "# note: blas_trace.c (calibrate/trace), linked in: HPL's MPI calls timed around the call; "
               "an MPI_Iprobe's bytes are 1 when it found a message\n");
    fprintf(f, "# dropped_calls: %zu\n# t0_monotonic_s: %.9f\n", mdropped, t0);
    fprintf(f, "seq,call,bytes,peer,start,duration\n");
    for (size_t i = 0; i < nmrec; i++) {
        mrec_t *r = &mrecs[i];
        fprintf(f, "%zu,%s,%lld,%d,%.9e,%.9e\n", i, mpi_names[r->call], r->bytes, r->peer, r->start, r->dur);
    }
    fprintf(f, "# end: %zu\n", nmrec);
    fclose(f);
    rename(tmp, path);
}
#endif
