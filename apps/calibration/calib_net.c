/*
 * calib_net.c -- point-to-point network calibration (2 ranks), per apps/calibration/FORMAT.md.
 *
 * Design (methodology digest §1.5 ch. 8, §2 items 1, 2, 12):
 *   - message sizes round(10^U(0, log10 max)) bytes: log-uniform, so the small breakpoints
 *     (eager limits, cache sizes) get as many points as the large ones;
 *   - for every drawn size, every kind, `reps` repetitions; the WHOLE expanded list (all kinds
 *     together) is shuffled with a seeded Fisher-Yates, so neither the order of sizes nor
 *     the order of kinds carries a temporal bias; both ranks derive the same list from the
 *     seed, so no design has to be sent around;
 *   - the first call of each (kind, size) pair in the shuffled order is flagged `warmup`;
 *   - the timer's resolution and read cost are measured before anything else.
 *
 * Every measure starts with a barrier, then follows its kind's protocol (rank 0 measures):
 *   send     rank 1 posts MPI_Irecv, barrier; rank 0 times MPI_Send.
 *   recv     rank 1 MPI_Isend, barrier; rank 0 waits (long enough for the message or its
 *            rendezvous request to be there), then times MPI_Recv: no late-sender wait.
 *   isend    rank 1 posts MPI_Irecv, barrier; rank 0 times MPI_Isend alone, then waits.
 *   test     rank 0 posts an MPI_Irecv that rank 1 only satisfies after the next barrier,
 *            times one MPI_Test (which cannot complete), barrier, waits.
 *   iprobe   rank 0 times one MPI_Iprobe for a tag nobody sends (size 0).
 *   wtime    rank 0 times one MPI_Wtime (size 0).
 *   pingpong rank 0 times MPI_Send + MPI_Recv, rank 1 MPI_Recv + MPI_Send, same size.
 *   iprobe_arrived  rank 1 sends 1 byte after the barrier; rank 0 waits (no MPI call: the
 *            message is there), then times one MPI_Iprobe for it and receives it. Whether that
 *            probe finds the message (row kind iprobe_arrived_found or _missed, size 0) tells
 *            how the MPI probes: Open MPI's ob1 matches what earlier calls have progressed and
 *            progresses after, so its first probe misses (smpirun's smpi/probe-sees).
 * Payloads carry a per-measure marker in their first and last byte, checked outside the timed
 * region, so a transfer that silently delivers the wrong data is reported.
 *
 * Builds with Open MPI's mpicc and with our smpicc (under the simulator waits are simulated
 * sleeps instead of busy loops).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* sched_getcpu; smpicc force-includes headers first, so the Makefile passes -D_GNU_SOURCE too */
#endif
#include "calib_common.h"

#include <math.h>
#include <mpi.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* K_HELDOUT is a ping-pong measured exactly as K_PINGPONG, on sizes of its own, interleaved with
 * the rest: a held-out check of the fitted model under the same machine states (smpi-fit leaves
 * it out; smpi-validate compares it). It is not one of the --kinds. */
enum kind { K_SEND, K_RECV, K_ISEND, K_TEST, K_IPROBE, K_WTIME, K_PINGPONG, K_IPROBE_ARRIVED, K_HELDOUT, NKINDS };
static const char *const kind_name[NKINDS] = {"send",   "recv",  "isend",    "test",           "iprobe",
                                              "wtime",  "pingpong", "iprobe_arrived", "pingpong_heldout"};
#define NSELECTABLE K_HELDOUT

/* Tags: one per kind, and one that is never sent (for the probe that must find nothing). */
#define TAG_BASE 100
#define TAG_NEVER 999

typedef struct {
    uint32_t size;
    uint8_t kind;
    uint8_t warmup;
} measure;

typedef struct {
    uint64_t seed;
    int full;
    uint64_t sizes, reps, max_size;
    int sizes_set, reps_set, max_set;
    /* --per-quarter-decade Q: Q sizes drawn in every quarter decade (0: one log-uniform draw) */
    uint64_t per_qd;
    /* --heldout-per-quarter-decade H and --heldout-reps: the held-out ping-pong sizes (0: none) */
    uint64_t heldout_per_qd, heldout_reps;
    /* --kinds: which kinds are measured (all by default), and how many */
    int kind_on[NKINDS];
    int nkinds;
    char kinds_list[128];
    const char *out;
} options;

/* Quarter decades [10^(j/4), 10^((j+1)/4)) that hold sizes 1..max. */
static uint64_t quarter_decades(uint64_t max_size)
{
    uint64_t q = (uint64_t)ceil(4.0 * log10((double)max_size) - 1e-9);
    return q < 1 ? 1 : q;
}

/* Number of held-out sizes and measures. */
static uint64_t heldout_sizes(const options *o) { return o->heldout_per_qd * quarter_decades(o->max_size); }
static uint64_t heldout_count(const options *o) { return heldout_sizes(o) * o->heldout_reps; }

/* Parses a comma-separated list of kind names into o->kind_on; 0 on success. */
static int parse_kinds(const char *v, options *o)
{
    memset(o->kind_on, 0, sizeof o->kind_on);
    o->nkinds = 0;
    if (v == NULL || v[0] == '\0' || strlen(v) >= sizeof o->kinds_list) return -1;
    char buf[128];
    strcpy(buf, v);
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        int k = 0;
        while (k < NSELECTABLE && strcmp(t, kind_name[k]) != 0) k++;
        if (k == NSELECTABLE || o->kind_on[k]) return -1;
        o->kind_on[k] = 1;
        o->nkinds++;
    }
    if (o->nkinds == 0) return -1;
    /* canonical order (the design's expansion order) */
    o->kinds_list[0] = '\0';
    for (int k = 0; k < NSELECTABLE; k++)
        if (o->kind_on[k]) {
            if (o->kinds_list[0]) strcat(o->kinds_list, ",");
            strcat(o->kinds_list, kind_name[k]);
        }
    return 0;
}

/* Command-line errors: every rank parses, rank 0 alone reports. */
#define ERR(...) do { if (!calib_quiet) fprintf(stderr, __VA_ARGS__); } while (0)

static const char *prog = "calib_net";

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: mpirun -np 2 calib_net [options]     (or: smpirun -np 2 ... calib_net [options])\n"
            "Point-to-point calibration between ranks 0 and 1; rank 0 writes the CSV described in\n"
            "apps/calibration/FORMAT.md (kinds send, recv, isend, test, iprobe, wtime, pingpong,\n"
            "iprobe_arrived).\n"
            "  --seed S       seed of the design (same seed and options, same design)     [1]\n"
            "  --quick        small design: 200 sizes x 10 repetitions (default)\n"
            "  --full         large design: 1000 sizes x 100 repetitions\n"
            "  --sizes N      number of sizes drawn as round(10^U(0, log10 max-size))\n"
            "  --reps R       repetitions of every (kind, size) pair (>= 2: the first is a warm-up)\n"
            "  --max-size B   largest message size in bytes (1 .. 1073741824)       [10000000]\n"
            "  --per-quarter-decade Q  instead of --sizes: Q sizes drawn as round(10^U) inside every\n"
            "                 quarter decade [10^(j/4), 10^((j+1)/4)) up to max-size (a stratified\n"
            "                 design, e.g. a held-out check of a fitted model)\n"
            "  --kinds LIST   comma-separated kinds to measure (interleaved and shuffled as usual) [all]\n"
            "  --heldout-per-quarter-decade H  also H held-out ping-pong sizes in every quarter decade\n"
            "                 (kind pingpong_heldout, its own draws), measured among the rest: a check\n"
            "                 of the fitted model under the same machine states         [0: none]\n"
            "  --heldout-reps R  repetitions of each held-out size                       [300]\n"
            "  --out FILE     output file                      [network-<host>-<seed>.csv]\n"
            "  --help         this text\n");
}

/* Returns 0 to run, 1 for --help, -1 on a bad command line (message already printed). */
static int parse_args(int argc, char **argv, options *o)
{
    memset(o, 0, sizeof *o);
    o->seed = 1;
    parse_kinds("send,recv,isend,test,iprobe,wtime,pingpong,iprobe_arrived", o);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) return 1;
        else if (strcmp(a, "--quick") == 0) o->full = 0;
        else if (strcmp(a, "--full") == 0) o->full = 1;
        else if (strcmp(a, "--seed") == 0) {
            if (parse_u64(prog, a, v, 0, UINT64_MAX, &o->seed)) return -1;
            i++;
        } else if (strcmp(a, "--sizes") == 0) {
            if (parse_u64(prog, a, v, 1, 1000000, &o->sizes)) return -1;
            o->sizes_set = 1;
            i++;
        } else if (strcmp(a, "--reps") == 0) {
            if (parse_u64(prog, a, v, 2, 100000, &o->reps)) return -1;
            o->reps_set = 1;
            i++;
        } else if (strcmp(a, "--max-size") == 0) {
            if (parse_u64(prog, a, v, 1, 1ULL << 30, &o->max_size)) return -1;
            o->max_set = 1;
            i++;
        } else if (strcmp(a, "--per-quarter-decade") == 0) {
            if (parse_u64(prog, a, v, 1, 10000, &o->per_qd)) return -1;
            i++;
        } else if (strcmp(a, "--heldout-per-quarter-decade") == 0) {
            if (parse_u64(prog, a, v, 0, 100, &o->heldout_per_qd)) return -1;
            i++;
        } else if (strcmp(a, "--heldout-reps") == 0) {
            if (parse_u64(prog, a, v, 2, 100000, &o->heldout_reps)) return -1;
            i++;
        } else if (strcmp(a, "--kinds") == 0) {
            if (parse_kinds(v, o)) {
                ERR("%s: --kinds: '%s' is not a comma-separated list of distinct kinds among "
                    "send,recv,isend,test,iprobe,wtime,pingpong,iprobe_arrived\n", prog, v ? v : "");
                return -1;
            }
            i++;
        } else if (strcmp(a, "--out") == 0) {
            if (v == NULL || v[0] == '\0') {
                ERR("%s: --out needs a file name\n", prog);
                return -1;
            }
            o->out = v;
            i++;
        } else {
            ERR("%s: unknown option '%s' (see --help)\n", prog, a);
            return -1;
        }
    }
    if (o->per_qd && o->sizes_set) {
        ERR("%s: --sizes and --per-quarter-decade exclude each other\n", prog);
        return -1;
    }
    if (!o->reps_set) o->reps = o->full ? 100 : 10;
    if (o->heldout_reps == 0) o->heldout_reps = 300;
    if (!o->max_set) o->max_size = 10000000; /* 10^7: the 10^U(0,7) */
    if (o->per_qd) o->sizes = o->per_qd * quarter_decades(o->max_size);
    else if (!o->sizes_set) o->sizes = o->full ? 1000 : 200;
    if (o->sizes * o->reps * (uint64_t)o->nkinds + heldout_count(o) > 50000000ULL) {
        ERR("%s: sizes x --reps x %d kinds = %llu measures is too many (max 5e7)\n", prog, o->nkinds,
                (unsigned long long)(o->sizes * o->reps * (uint64_t)o->nkinds));
        return -1;
    }
    return 0;
}

/* The design: sizes drawn first (in draw order), then expanded and shuffled with the same
 * stream, then the warm-up flags set in sequence order. Identical on both ranks. */
static measure *make_design(const options *o, size_t *count, uint64_t *hash)
{
    calib_rng r;
    rng_seed(&r, o->seed);
    uint32_t *sizes = malloc(o->sizes * sizeof *sizes);
    size_t n = (size_t)(o->sizes * o->reps * (uint64_t)o->nkinds + heldout_count(o));
    measure *m = malloc(n * sizeof *m);
    if (!sizes || !m) {
        fprintf(stderr, "%s: out of memory for a design of %zu measures\n", prog, n);
        return NULL;
    }
    double top = log10((double)o->max_size);
    for (uint64_t i = 0; i < o->sizes; i++) {
        /* stratified: draw i lies in quarter decade i / Q (the last one cut at max-size) */
        double lo = 0, hi = top;
        if (o->per_qd) {
            lo = (double)(i / o->per_qd) / 4.0;
            hi = fmin(lo + 0.25, top);
        }
        double s = round(pow(10.0, lo + (hi - lo) * rng_uniform(&r)));
        if (s < 1) s = 1;
        if (s > (double)o->max_size) s = (double)o->max_size;
        sizes[i] = (uint32_t)s;
    }
    size_t k = 0;
    for (uint64_t i = 0; i < o->sizes; i++)
        for (int kind = 0; kind < NKINDS; kind++)
            for (uint64_t rep = 0; rep < o->reps && o->kind_on[kind]; rep++) {
                /* the probes and wtime move no payload of the design's size: size 0 (FORMAT.md) */
                m[k].size = (kind == K_IPROBE || kind == K_WTIME || kind == K_IPROBE_ARRIVED) ? 0 : sizes[i];
                m[k].kind = (uint8_t)kind;
                m[k].warmup = 0;
                k++;
            }
    /* Held-out sizes from a stream of their own: the calibration's design (and hash) is the
     * same with or without them, up to the shuffle. */
    calib_rng hr;
    rng_seed(&hr, o->seed ^ 0x4e1d0c7ec4ec4ULL);
    for (uint64_t i = 0; i < heldout_sizes(o); i++) {
        double lo = (double)(i / o->heldout_per_qd) / 4.0, hi = fmin(lo + 0.25, top);
        double s = round(pow(10.0, lo + (hi - lo) * rng_uniform(&hr)));
        if (s < 1) s = 1;
        if (s > (double)o->max_size) s = (double)o->max_size;
        for (uint64_t rep = 0; rep < o->heldout_reps; rep++) {
            m[k].size = (uint32_t)s;
            m[k].kind = K_HELDOUT;
            m[k].warmup = 0;
            k++;
        }
    }
    rng_shuffle(&r, m, n, sizeof *m);

    /* First contact of each (kind, size): a sorted copy of the keys would do, but sizes fit
     * in a hash set that is cheap to write: open addressing on (kind, size). */
    size_t cap = 1;
    while (cap < 2 * n) cap <<= 1;
    uint64_t *seen = calloc(cap, sizeof *seen);
    if (!seen) {
        fprintf(stderr, "%s: out of memory\n", prog);
        return NULL;
    }
    uint64_t h = FNV1A64_INIT;
    for (size_t i = 0; i < n; i++) {
        uint64_t key = ((uint64_t)m[i].kind << 32 | m[i].size) + 1; /* 0 = empty slot */
        size_t slot = (size_t)((key * 0x9e3779b97f4a7c15ULL) >> 20) & (cap - 1);
        while (seen[slot] && seen[slot] != key) slot = (slot + 1) & (cap - 1);
        if (!seen[slot]) {
            seen[slot] = key;
            m[i].warmup = 1;
        }
        char line[64];
        int len = snprintf(line, sizeof line, "%s,%u\n", kind_name[m[i].kind], m[i].size);
        h = fnv1a64(h, line, (size_t)len);
    }
    free(seen);
    free(sizes);
    *count = n;
    *hash = h;
    return m;
}

/* Waits `s` seconds without entering MPI (so the waiting rank cannot progress anything). */
static void wait_seconds(double s)
{
#if CALIB_SIMULATED
    struct timespec ts;
    ts.tv_sec = (time_t)s;
    ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
    nanosleep(&ts, NULL); /* smpicc makes this a simulated sleep */
#else
    double t0 = MPI_Wtime();
    while (MPI_Wtime() - t0 < s) {
    }
#endif
}

/* How long the receiver of a `recv` measure waits after the barrier before calling MPI_Recv:
 * the eager payload (or the rendezvous request) must have arrived. Generous on purpose; the
 * wait is not part of the measure. */
static double recv_delay(uint32_t size) { return 50e-6 + (double)size * 0.2e-9; }

/* How long rank 0 waits after the barrier before a ping-pong, so that rank 1 is already in
 * MPI_Recv when the message leaves (not part of the measure). */
#define PINGPONG_LEAD_S 20e-6

/* Tag of the empty message rank 0 sends after a ping-pong's reply has arrived; rank 1 waits for
 * it before anything else (not part of the measure), so that its next message (the next
 * measure's barrier) cannot start while the reply is in flight. Over shared memory an eager send
 * has delivered its payload when MPI_Send returns, but in a simulation a detached send's transfer
 * goes on after the call, and a barrier message started meanwhile on the same route shares its
 * bandwidth: the simulated round trip of 11-256 B came out 2-3 % above the model's own. */
#define TAG_PINGPONG_DONE 998

/* iprobe_arrived: how long rank 1 waits after the barrier before sending (rank 0 leaves the
 * barrier within a small message's latency of rank 1, and probes recv_delay(1) after it). */
#define PROBE_SEND_DELAY_S 10e-6

static unsigned char marker(size_t seq) { return (unsigned char)(seq * 131u + 7u); }

static void mark(unsigned char *buf, uint32_t size, size_t seq)
{
    if (size == 0) return;
    buf[size - 1] = (unsigned char)(marker(seq) ^ 0x5a);
    buf[0] = marker(seq); /* last: for size 1 both are the same byte */
}

static int marked(const unsigned char *buf, uint32_t size, size_t seq)
{
    if (size == 0) return 1;
    return buf[0] == marker(seq) && (size == 1 || buf[size - 1] == (unsigned char)(marker(seq) ^ 0x5a));
}

static int current_cpu(void)
{
#ifdef __linux__
    return sched_getcpu();
#else
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
    if (np != 2) {
        if (rank == 0) fprintf(stderr, "%s: needs exactly 2 ranks (got %d)\n", prog, np);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Finalize();
        return 2;
    }
    const int peer = 1 - rank;

    calib_sysinfo si;
    sysinfo_collect(&si, argc, argv);
    calib_timer timer;
    timer_characterise(&timer);

    size_t n = 0;
    uint64_t hash = 0;
    measure *design = make_design(&o, &n, &hash);
    if (design == NULL) MPI_Abort(MPI_COMM_WORLD, 1);

    /* Buffers at the largest size, filled with pseudo-random bytes (no special patterns). */
    size_t bufsize = (size_t)o.max_size;
    unsigned char *sbuf = malloc(bufsize), *rbuf = malloc(bufsize);
    double *start = NULL, *dur = NULL;
    unsigned char *probe_found = NULL; /* iprobe_arrived: whether the probe found the message */
    if (rank == 0) {
        start = malloc(n * sizeof *start);
        dur = malloc(n * sizeof *dur);
        probe_found = calloc(n, 1);
    }
    if (!sbuf || !rbuf || (rank == 0 && (!start || !dur || !probe_found))) {
        fprintf(stderr, "%s: rank %d: cannot allocate %zu-byte buffers\n", prog, rank, bufsize);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    calib_rng fill;
    rng_seed(&fill, o.seed ^ 0x5eedf111ULL);
    for (size_t i = 0; i < bufsize; i += 8) {
        uint64_t x = rng_next(&fill);
        memcpy(sbuf + i, &x, bufsize - i < 8 ? bufsize - i : 8);
    }
    memcpy(rbuf, sbuf, bufsize);

    int cores[2] = {current_cpu(), -1};
    MPI_Sendrecv(&cores[0], 1, MPI_INT, peer, 1, &cores[1], 1, MPI_INT, peer, 1, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);

    /* Global warm-up (untimed): connection set-up and first-touch of the buffers. */
    for (int w = 0; w < 10; w++) {
        uint32_t s = w % 2 ? (uint32_t)bufsize : (uint32_t)(w + 1);
        if (s > bufsize) s = (uint32_t)bufsize;
        if (rank == 0) {
            MPI_Send(sbuf, (int)s, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
            MPI_Recv(rbuf, (int)s, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(rbuf, (int)s, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(sbuf, (int)s, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
        }
    }

    long bad_payload = 0, bad_test = 0, bad_probe = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    const double t_run = MPI_Wtime();
    for (size_t i = 0; i < n; i++) {
        const uint32_t size = design[i].size;
        const int kind = design[i].kind;
        const int tag = TAG_BASE + kind;
        double t0 = 0, t1 = 0;
        MPI_Request req;
        MPI_Status st;
        int flag = 0;

        MPI_Barrier(MPI_COMM_WORLD);
        switch (kind) {
        case K_SEND:
            if (rank == 0) {
                mark(sbuf, size, i);
                MPI_Barrier(MPI_COMM_WORLD);
                t0 = MPI_Wtime();
                MPI_Send(sbuf, (int)size, MPI_BYTE, peer, tag, MPI_COMM_WORLD);
                t1 = MPI_Wtime();
            } else {
                MPI_Irecv(rbuf, (int)size, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &req);
                MPI_Barrier(MPI_COMM_WORLD);
                MPI_Wait(&req, MPI_STATUS_IGNORE);
                bad_payload += !marked(rbuf, size, i);
            }
            break;
        case K_RECV:
            if (rank == 0) {
                MPI_Barrier(MPI_COMM_WORLD);
                wait_seconds(recv_delay(size));
                t0 = MPI_Wtime();
                MPI_Recv(rbuf, (int)size, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &st);
                t1 = MPI_Wtime();
                bad_payload += !marked(rbuf, size, i);
            } else {
                mark(sbuf, size, i);
                MPI_Isend(sbuf, (int)size, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &req);
                MPI_Barrier(MPI_COMM_WORLD);
                MPI_Wait(&req, MPI_STATUS_IGNORE);
            }
            break;
        case K_ISEND:
            if (rank == 0) {
                mark(sbuf, size, i);
                MPI_Barrier(MPI_COMM_WORLD);
                t0 = MPI_Wtime();
                MPI_Isend(sbuf, (int)size, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &req);
                t1 = MPI_Wtime();
                MPI_Wait(&req, MPI_STATUS_IGNORE);
            } else {
                MPI_Irecv(rbuf, (int)size, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &req);
                MPI_Barrier(MPI_COMM_WORLD);
                MPI_Wait(&req, MPI_STATUS_IGNORE);
                bad_payload += !marked(rbuf, size, i);
            }
            break;
        case K_TEST:
            if (rank == 0) {
                MPI_Irecv(rbuf, (int)size, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &req);
                t0 = MPI_Wtime();
                MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
                t1 = MPI_Wtime();
                bad_test += flag != 0; /* impossible: rank 1 sends after the barrier */
                MPI_Barrier(MPI_COMM_WORLD);
                if (!flag) MPI_Wait(&req, MPI_STATUS_IGNORE);
                bad_payload += !marked(rbuf, size, i);
            } else {
                mark(sbuf, size, i);
                MPI_Barrier(MPI_COMM_WORLD);
                MPI_Send(sbuf, (int)size, MPI_BYTE, peer, tag, MPI_COMM_WORLD);
            }
            break;
        case K_IPROBE:
            if (rank == 0) {
                t0 = MPI_Wtime();
                MPI_Iprobe(peer, TAG_NEVER, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
                t1 = MPI_Wtime();
                bad_probe += flag != 0;
            }
            break;
        case K_IPROBE_ARRIVED:
            if (rank == 0) {
                /* no MPI call while waiting: nothing progresses after the barrier */
                wait_seconds(recv_delay(1));
                t0 = MPI_Wtime();
                MPI_Iprobe(peer, tag, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
                t1 = MPI_Wtime();
                probe_found[i] = flag != 0;
                MPI_Recv(rbuf, 1, MPI_BYTE, peer, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                bad_payload += !marked(rbuf, 1, i);
            } else {
                mark(sbuf, 1, i);
                /* after rank 0 has surely left the barrier, long before its probe */
                wait_seconds(PROBE_SEND_DELAY_S);
                MPI_Send(sbuf, 1, MPI_BYTE, peer, tag, MPI_COMM_WORLD);
            }
            break;
        case K_WTIME:
            if (rank == 0) {
                t0 = MPI_Wtime();
                (void)MPI_Wtime();
                t1 = MPI_Wtime();
            }
            break;
        case K_PINGPONG:
        case K_HELDOUT:
            if (rank == 0) {
                mark(sbuf, size, i);
                /* Rank 1 leaves the barrier up to a small message's latency after rank 0: without
                 * this wait a rendezvous-sized ping-pong would time that skew too (in a
                 * simulation, once more on top of the fitted transfer time). */
                wait_seconds(PINGPONG_LEAD_S);
                t0 = MPI_Wtime();
                MPI_Send(sbuf, (int)size, MPI_BYTE, peer, tag, MPI_COMM_WORLD);
                MPI_Recv(rbuf, (int)size, MPI_BYTE, peer, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                t1 = MPI_Wtime();
                MPI_Send(NULL, 0, MPI_BYTE, peer, TAG_PINGPONG_DONE, MPI_COMM_WORLD);
                bad_payload += !marked(rbuf, size, i);
            } else {
                MPI_Recv(rbuf, (int)size, MPI_BYTE, peer, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                bad_payload += !marked(rbuf, size, i);
                /* send back what arrived: rank 0 checks the round trip */
                MPI_Send(rbuf, (int)size, MPI_BYTE, peer, tag, MPI_COMM_WORLD);
                MPI_Recv(NULL, 0, MPI_BYTE, peer, TAG_PINGPONG_DONE, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            }
            break;
        }
        if (rank == 0) {
            start[i] = t0 - t_run;
            dur[i] = t1 - t0;
        }
    }
    const double t_end = MPI_Wtime();

    long local_bad[3] = {bad_payload, bad_test, bad_probe}, bad[3] = {0, 0, 0};
    MPI_Reduce(local_bad, bad, 3, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);

    int status = 0;
    if (rank == 0) {
        char defname[600];
        const char *path = o.out;
        if (path == NULL) {
            snprintf(defname, sizeof defname, "network-%s-%llu.csv", si.host, (unsigned long long)o.seed);
            path = defname;
        }
        if (bad[0] || bad[1] || bad[2])
            fprintf(stderr,
                    "%s: error: %ld payload(s) arrived wrong, %ld MPI_Test completed early, %ld MPI_Iprobe "
                    "found a message: the measures are not trustworthy\n",
                    prog, bad[0], bad[1], bad[2]);
        FILE *f = fopen(path, "w");
        if (f == NULL) {
            perror(path);
            status = 1;
        } else {
            meta_common(f, "network", &si, "none", "none", o.seed, o.full ? "full" : "quick", &timer);
            meta(f, "ranks", "2");
            meta(f, "core", "%d", cores[0]);
            meta(f, "peer_core", "%d", cores[1]);
            if (o.per_qd)
                meta(f, "generator",
                     "calib_net 1 (xoshiro256**, sizes round(10^U(j/4,(j+1)/4)), %llu per quarter decade j, "
                     "Fisher-Yates)",
                     (unsigned long long)o.per_qd);
            else
                meta(f, "generator", "calib_net 1 (xoshiro256**, sizes round(10^U(0,log10 max)), Fisher-Yates)");
            meta(f, "kinds", "%s", o.kinds_list);
            meta(f, "heldout", "%llu per quarter decade x %llu repetitions",
                 (unsigned long long)o.heldout_per_qd, (unsigned long long)o.heldout_reps);
            meta(f, "sizes", "%llu", (unsigned long long)o.sizes);
            meta(f, "reps", "%llu", (unsigned long long)o.reps);
            meta(f, "max_size", "%llu", (unsigned long long)o.max_size);
            meta(f, "pingpong_lead_s", "%.1e", PINGPONG_LEAD_S);
            meta(f, "pingpong_done_message", "%s", "yes");
            meta(f, "iprobe_arrived_send_delay_s", "%.1e", PROBE_SEND_DELAY_S);
            meta(f, "design_hash", "fnv1a64:%016llx", (unsigned long long)hash);
            meta(f, "payload_errors", "%ld", bad[0] + bad[1] + bad[2]);
            meta(f, "run_seconds", "%.6f", t_end - t_run);
            fprintf(f, "seq,kind,size,start,duration,warmup\n");
            for (size_t i = 0; i < n; i++) {
                const char *name = kind_name[design[i].kind];
                if (design[i].kind == K_IPROBE_ARRIVED)
                    name = probe_found[i] ? "iprobe_arrived_found" : "iprobe_arrived_missed";
                fprintf(f, "%zu,%s,%u,%.9e,%.9e,%d\n", i, name, design[i].size, start[i], dur[i],
                        design[i].warmup);
            }
            fprintf(f, "# end: %zu\n", n);
            if (fclose(f) != 0) {
                perror(path);
                status = 1;
            }
        }
        if (status == 0) {
            /* Timer sanity (Hoefler): measures shorter than 20 timer reads or 10 ticks. */
            size_t short_ = 0;
            for (size_t i = 0; i < n; i++)
                short_ += dur[i] < 20 * timer.overhead || dur[i] < 10 * timer.resolution;
            fprintf(stderr,
                    "%s: %zu measures in %.2f s -> %s (timer: resolution %.1e s, overhead %.1e s; %zu "
                    "measures shorter than 20 reads or 10 ticks)\n",
                    prog, n, t_end - t_run, path, timer.resolution, timer.overhead, short_);
        }
        if (bad[0] || bad[1] || bad[2]) status = 1;
    }
    free(design);
    free(sbuf);
    free(rbuf);
    free(start);
    free(dur);
    free(probe_found);
    MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    return status;
}
