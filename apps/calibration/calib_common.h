/*
 * calib_common.h -- pieces shared by the calibration programs (calib_net.c, calib_compute.c).
 *
 *  - a seeded PRNG (splitmix64 to seed, xoshiro256** to draw) and a Fisher-Yates shuffle, so
 *    that one seed gives one design on every machine and compiler;
 *  - the timer characterisation (Krutar's GCD of raw differences, median back-to-back cost);
 *  - the metadata block of the CSV contract (FORMAT.md) and strict command-line parsing.
 *
 * Everything here is plain C99 + POSIX + MPI, so it builds with Open MPI's mpicc and with our
 * smpicc alike.
 */
#ifndef CALIB_COMMON_H
#define CALIB_COMMON_H

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>

/* Built by our smpicc (the simulator's mpi.h defines SMPI_RS_MPI_H): time is simulated, so
 * waits are simulated sleeps instead of busy loops. */
#if defined(SMPI_RS_MPI_H)
#define CALIB_SIMULATED 1
#else
#define CALIB_SIMULATED 0
#endif

#define CALIB_FORMAT "smpi-calibration/1"

/* ------------------------------------------------------------------ PRNG */
typedef struct {
    uint64_t s[4];
} calib_rng;

/* Seeds the four words of xoshiro256** from splitmix64(seed), as its authors recommend, so
 * that nearby seeds give unrelated streams. */
void rng_seed(calib_rng *r, uint64_t seed);
uint64_t rng_next(calib_rng *r);
/* Uniform double in [0, 1) with 53 random bits. */
double rng_uniform(calib_rng *r);
/* Uniform integer in [0, n) without modulo bias (n >= 1). */
uint64_t rng_below(calib_rng *r, uint64_t n);
/* In-place Fisher-Yates shuffle of n elements of `size` bytes. */
void rng_shuffle(calib_rng *r, void *base, size_t n, size_t size);

/* 64-bit FNV-1a, to print a hash of a design (same seed and options -> same hash). */
uint64_t fnv1a64(uint64_t h, const void *data, size_t len);
#define FNV1A64_INIT 0xcbf29ce484222325ULL

/* ------------------------------------------------------------------ timer */
typedef struct {
    double resolution; /* seconds: GCD of 10 nonzero raw differences, in whole ns */
    double overhead;   /* seconds: median difference of back-to-back reads */
    double wtick;      /* MPI_Wtick(), as the library reports it */
} calib_timer;

/* Measures the resolution and read cost of MPI_Wtime (call after MPI_Init). */
void timer_characterise(calib_timer *t);

/* ------------------------------------------------------------------ metadata */
typedef struct {
    char host[256];
    char date[32];
    char kernel[256];
    char cpu[256];
    char compiler[128];
    char mpi[256];
    char command[4096];
} calib_sysinfo;

/* Fills host (MPI_Get_processor_name), date (now, UTC), kernel (uname -srm), cpu (model name
 * of /proc/cpuinfo), compiler, MPI library version (first line) and the command line. */
void sysinfo_collect(calib_sysinfo *si, int argc, char **argv);

/* Writes "# key: value\n" (value printf-style). Newlines in the value become spaces. */
void meta(FILE *f, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The required keys of FORMAT.md that both programs share, plus the optional records of the
 * environment the calibration script passes on (CALIB_ENV_OPENBLAS_CORETYPE,
 * CALIB_ENV_OPENBLAS_L2_SIZE, CALIB_ENV_NOTE). */
void meta_common(FILE *f, const char *kind, const calib_sysinfo *si, const char *blas,
                 const char *blas_kernel, uint64_t seed, const char *mode,
                 const calib_timer *t);

/* ------------------------------------------------------------------ command line */
/* Strict parsers: the whole string must be a number in [min, max]; on failure they print
 * "<prog>: <option>: ..." on stderr (unless calib_quiet: only rank 0 speaks) and return -1. */
extern int calib_quiet;
int parse_u64(const char *prog, const char *opt, const char *s, uint64_t min, uint64_t max,
              uint64_t *out);
int parse_double(const char *prog, const char *opt, const char *s, double min, double max,
                 double *out);

/* Median of n doubles (sorts the array in place). */
double median_inplace(double *v, size_t n);

#endif
