/* calib_common.c -- see calib_common.h. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* sched_getcpu; smpicc force-includes headers first, so the Makefile passes -D_GNU_SOURCE too */
#endif
#include "calib_common.h"

#include <errno.h>
#include <math.h>
#include <mpi.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>

/* ------------------------------------------------------------------ PRNG */
static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

void rng_seed(calib_rng *r, uint64_t seed)
{
    uint64_t x = seed;
    for (int i = 0; i < 4; i++) r->s[i] = splitmix64(&x);
}

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t rng_next(calib_rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

double rng_uniform(calib_rng *r) { return (double)(rng_next(r) >> 11) * 0x1.0p-53; }

uint64_t rng_below(calib_rng *r, uint64_t n)
{
    /* Rejection of the top partial block: every value in [0, n) is equally likely. */
    uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    uint64_t x;
    do x = rng_next(r);
    while (x >= limit);
    return x % n;
}

void rng_shuffle(calib_rng *r, void *base, size_t n, size_t size)
{
    unsigned char *b = base, tmp[256];
    if (size > sizeof tmp || n < 2) return;
    for (size_t i = n - 1; i > 0; i--) {
        size_t j = (size_t)rng_below(r, (uint64_t)i + 1);
        if (j == i) continue;
        memcpy(tmp, b + i * size, size);
        memcpy(b + i * size, b + j * size, size);
        memcpy(b + j * size, tmp, size);
    }
}

uint64_t fnv1a64(uint64_t h, const void *data, size_t len)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}

/* ------------------------------------------------------------------ timer */
static uint64_t gcd_u64(uint64_t a, uint64_t b)
{
    while (b) {
        uint64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double median_inplace(double *v, size_t n)
{
    if (n == 0) return 0.0;
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* MPI_Wtime as an integer count of nanoseconds. Krutar's method wants the raw counter; MPI
 * only gives a double, so the tick found is in whole nanoseconds (1 ns at best). */
static uint64_t wtime_ns(void) { return (uint64_t)llround(MPI_Wtime() * 1e9); }

void timer_characterise(calib_timer *t)
{
    /* Resolution (Krutar): 10 stabs, each polling up to 10,000 reads for the first change;
     * the GCD of the nonzero differences converges to the tick, where the minimum would
     * only give a multiple of it (a read costs several ticks). Unsigned subtraction keeps a
     * wrapped counter right. */
    uint64_t g = 0;
    for (int stab = 0, found = 0; stab < 100 && found < 10; stab++) {
        uint64_t a = wtime_ns(), b = a;
        for (int i = 0; i < 10000 && b == a; i++) b = wtime_ns();
        if (b != a) {
            g = gcd_u64(g, b - a);
            found++;
        }
    }
    t->resolution = g ? (double)g * 1e-9 : 1e-9;

    /* Overhead: median of 1000 differences of back-to-back reads (never subtracted from the
     * measures: mpptest's advice; the fitter gets it from the metadata). */
    enum { N = 1001 };
    static double reads[N], diffs[N - 1];
    for (int i = 0; i < N; i++) reads[i] = MPI_Wtime();
    for (int i = 0; i + 1 < N; i++) diffs[i] = reads[i + 1] - reads[i];
    t->overhead = median_inplace(diffs, N - 1);
    t->wtick = MPI_Wtick();
}

/* ------------------------------------------------------------------ metadata */
static void first_line(char *dst, size_t cap, const char *src)
{
    size_t n = strcspn(src, "\r\n");
    if (n >= cap) n = cap - 1;
    memcpy(dst, src, n);
    dst[n] = '\0';
    /* trim trailing blanks */
    while (n > 0 && (dst[n - 1] == ' ' || dst[n - 1] == '\t')) dst[--n] = '\0';
}

static void cpu_model(char *dst, size_t cap)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[1024];
    snprintf(dst, cap, "unknown");
    if (!f) return;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) == 0) {
            const char *c = strchr(line, ':');
            if (c) {
                c++;
                while (*c == ' ' || *c == '\t') c++;
                first_line(dst, cap, c);
            }
            break;
        }
    }
    fclose(f);
}

void sysinfo_collect(calib_sysinfo *si, int argc, char **argv)
{
    memset(si, 0, sizeof *si);
    int len = 0;
    char name[MPI_MAX_PROCESSOR_NAME + 1] = "";
    if (MPI_Get_processor_name(name, &len) != MPI_SUCCESS || len <= 0) snprintf(name, sizeof name, "unknown");
    name[MPI_MAX_PROCESSOR_NAME] = '\0';
    snprintf(si->host, sizeof si->host, "%s", name);

    time_t now = time(NULL);
    struct tm tmv;
    gmtime_r(&now, &tmv);
    strftime(si->date, sizeof si->date, "%Y-%m-%dT%H:%M:%SZ", &tmv);

    struct utsname u;
    if (uname(&u) == 0)
        snprintf(si->kernel, sizeof si->kernel, "%s %s %s", u.sysname, u.release, u.machine);
    else
        snprintf(si->kernel, sizeof si->kernel, "unknown");

    cpu_model(si->cpu, sizeof si->cpu);

#if defined(__clang__)
    snprintf(si->compiler, sizeof si->compiler, "clang %d.%d.%d", __clang_major__, __clang_minor__,
             __clang_patchlevel__);
#elif defined(__GNUC__)
    snprintf(si->compiler, sizeof si->compiler, "gcc %d.%d.%d", __GNUC__, __GNUC_MINOR__,
             __GNUC_PATCHLEVEL__);
#else
    snprintf(si->compiler, sizeof si->compiler, "unknown");
#endif

    char lib[MPI_MAX_LIBRARY_VERSION_STRING + 1] = "";
    int liblen = 0;
    if (MPI_Get_library_version(lib, &liblen) != MPI_SUCCESS) snprintf(lib, sizeof lib, "unknown");
    lib[MPI_MAX_LIBRARY_VERSION_STRING] = '\0';
    first_line(si->mpi, sizeof si->mpi, lib);

    size_t off = 0;
    for (int i = 0; i < argc && off + 1 < sizeof si->command; i++) {
        int quote = argv[i][0] == '\0' || strpbrk(argv[i], " \t'\"") != NULL;
        int w = snprintf(si->command + off, sizeof si->command - off, quote ? "%s'%s'" : "%s%s",
                         i ? " " : "", argv[i]);
        if (w < 0) break;
        off += (size_t)w;
    }
}

void meta(FILE *f, const char *key, const char *fmt, ...)
{
    char buf[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    for (char *p = buf; *p; p++)
        if (*p == '\n' || *p == '\r') *p = ' ';
    fprintf(f, "# %s: %s\n", key, buf);
}

void meta_common(FILE *f, const char *kind, const calib_sysinfo *si, const char *blas,
                 const char *blas_kernel, uint64_t seed, const char *mode,
                 const calib_timer *t)
{
    meta(f, "format", "%s", CALIB_FORMAT);
    meta(f, "kind", "%s", kind);
    meta(f, "host", "%s", si->host);
    meta(f, "date", "%s", si->date);
    meta(f, "kernel", "%s", si->kernel);
    meta(f, "cpu", "%s", si->cpu);
    meta(f, "compiler", "%s", si->compiler);
    meta(f, "mpi", "%s", si->mpi);
    meta(f, "blas", "%s", blas);
    meta(f, "blas_kernel", "%s", blas_kernel);
    meta(f, "command", "%s", si->command);
    meta(f, "seed", "%llu", (unsigned long long)seed);
    meta(f, "mode", "%s", mode);
    meta(f, "timer", "MPI_Wtime");
    meta(f, "timer_resolution_s", "%.3e", t->resolution);
    meta(f, "timer_overhead_s", "%.3e", t->overhead);
    meta(f, "mpi_wtick_s", "%.3e", t->wtick);
    meta(f, "simulated", "%d", CALIB_SIMULATED);
    const char *v;
    if ((v = getenv("CALIB_ENV_OPENBLAS_CORETYPE")) != NULL) meta(f, "openblas_coretype_env", "%s", v);
    if ((v = getenv("CALIB_ENV_OPENBLAS_L2_SIZE")) != NULL) meta(f, "openblas_l2_size_env", "%s", v);
    if ((v = getenv("CALIB_ENV_NOTE")) != NULL && v[0]) meta(f, "note", "%s", v);
}

/* ------------------------------------------------------------------ command line */
int calib_quiet = 0;

int parse_u64(const char *prog, const char *opt, const char *s, uint64_t min, uint64_t max,
              uint64_t *out)
{
    char *end = NULL;
    if (s == NULL) {
        if (!calib_quiet) fprintf(stderr, "%s: %s needs a value\n", prog, opt);
        return -1;
    }
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (s[0] == '\0' || s[0] == '-' || s[0] == '+' || *end != '\0' || errno == ERANGE) {
        if (!calib_quiet) fprintf(stderr, "%s: %s: '%s' is not a non-negative integer\n", prog, opt, s);
        return -1;
    }
    if (v < min || v > max) {
        if (!calib_quiet) fprintf(stderr, "%s: %s: %llu is out of range [%llu, %llu]\n", prog, opt, v,
                (unsigned long long)min, (unsigned long long)max);
        return -1;
    }
    *out = v;
    return 0;
}

int parse_double(const char *prog, const char *opt, const char *s, double min, double max,
                 double *out)
{
    char *end = NULL;
    if (s == NULL) {
        if (!calib_quiet) fprintf(stderr, "%s: %s needs a value\n", prog, opt);
        return -1;
    }
    errno = 0;
    double v = strtod(s, &end);
    if (s[0] == '\0' || *end != '\0' || errno == ERANGE || !isfinite(v)) {
        if (!calib_quiet) fprintf(stderr, "%s: %s: '%s' is not a number\n", prog, opt, s);
        return -1;
    }
    if (v < min || v > max) {
        if (!calib_quiet) fprintf(stderr, "%s: %s: %g is out of range [%g, %g]\n", prog, opt, v, min, max);
        return -1;
    }
    *out = v;
    return 0;
}
