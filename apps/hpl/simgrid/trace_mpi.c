/*
 * trace_mpi.c -- link-time (-Wl,--wrap=...) tracing of the MPI point-to-point calls HPL makes,
 * for comparing the real SimGrid and our simulator call by call. Each call prints, on stderr:
 *     T <world rank> <seq> <call> <peer> <tag> <count> <t_enter> <t_exit> [<flag>]
 * Times come from MPI_Wtime: run with --cfg=smpi/wtime:0 so that tracing does not perturb the
 * simulated time (both simulators then charge nothing for MPI_Wtime).
 * Built into xhpl by `VARIANT=trace HPL_TRACE_MPI=1 build.sh`.
 * <gin> <gout>: a counter shared by ALL ranks (one mmap'd word whose address is passed through
 * the process environment, which privatization does not copy), taken on entry and on exit:
 * the order in which the simulator actually ran the ranks.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

static int me = -1;
static long seq;
static int rank_(void)
{
    if (me < 0) MPI_Comm_rank(MPI_COMM_WORLD, &me);
    return me;
}
static long *gseq;
static long gtick(void)
{
    if (gseq == NULL) {
        const char *e = getenv("TRACE_MPI_GSEQ");
        if (e != NULL) {
            gseq = (long *)strtoul(e, NULL, 16);
        } else {
            char buf[32];
            gseq = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            snprintf(buf, sizeof buf, "%lx", (unsigned long)gseq);
            setenv("TRACE_MPI_GSEQ", buf, 1);
        }
    }
    return (*gseq)++;
}
#define LOG(call, peer, tag, count, t0, t1, flag) \
    fprintf(stderr, "T %d %ld %s %d %d %d %.9f %.9f %d %ld %ld %a %a\n", rank_(), seq++, call, peer, \
            tag, count, t0, t1, flag, g0, gtick(), t0, t1)

int __real_MPI_Send(const void *b, int c, MPI_Datatype d, int p, int t, MPI_Comm m);
int __wrap_MPI_Send(const void *b, int c, MPI_Datatype d, int p, int t, MPI_Comm m)
{
    double t0 = MPI_Wtime(); long g0 = gtick();
    int r = __real_MPI_Send(b, c, d, p, t, m);
    LOG("Send", p, t, c, t0, MPI_Wtime(), 0);
    return r;
}
int __real_MPI_Ssend(const void *b, int c, MPI_Datatype d, int p, int t, MPI_Comm m);
int __wrap_MPI_Ssend(const void *b, int c, MPI_Datatype d, int p, int t, MPI_Comm m)
{
    double t0 = MPI_Wtime(); long g0 = gtick();
    int r = __real_MPI_Ssend(b, c, d, p, t, m);
    LOG("Ssend", p, t, c, t0, MPI_Wtime(), 0);
    return r;
}
int __real_MPI_Recv(void *b, int c, MPI_Datatype d, int p, int t, MPI_Comm m, MPI_Status *s);
int __wrap_MPI_Recv(void *b, int c, MPI_Datatype d, int p, int t, MPI_Comm m, MPI_Status *s)
{
    double t0 = MPI_Wtime(); long g0 = gtick();
    int r = __real_MPI_Recv(b, c, d, p, t, m, s);
    LOG("Recv", p, t, c, t0, MPI_Wtime(), 0);
    return r;
}
int __real_MPI_Irecv(void *b, int c, MPI_Datatype d, int p, int t, MPI_Comm m, MPI_Request *q);
int __wrap_MPI_Irecv(void *b, int c, MPI_Datatype d, int p, int t, MPI_Comm m, MPI_Request *q)
{
    double t0 = MPI_Wtime(); long g0 = gtick();
    int r = __real_MPI_Irecv(b, c, d, p, t, m, q);
    LOG("Irecv", p, t, c, t0, MPI_Wtime(), 0);
    return r;
}
int __real_MPI_Isend(const void *b, int c, MPI_Datatype d, int p, int t, MPI_Comm m, MPI_Request *q);
int __wrap_MPI_Isend(const void *b, int c, MPI_Datatype d, int p, int t, MPI_Comm m, MPI_Request *q)
{
    double t0 = MPI_Wtime(); long g0 = gtick();
    int r = __real_MPI_Isend(b, c, d, p, t, m, q);
    LOG("Isend", p, t, c, t0, MPI_Wtime(), 0);
    return r;
}
int __real_MPI_Issend(const void *b, int c, MPI_Datatype d, int p, int t, MPI_Comm m, MPI_Request *q);
int __wrap_MPI_Issend(const void *b, int c, MPI_Datatype d, int p, int t, MPI_Comm m, MPI_Request *q)
{
    double t0 = MPI_Wtime(); long g0 = gtick();
    int r = __real_MPI_Issend(b, c, d, p, t, m, q);
    LOG("Issend", p, t, c, t0, MPI_Wtime(), 0);
    return r;
}
int __real_MPI_Wait(MPI_Request *q, MPI_Status *s);
int __wrap_MPI_Wait(MPI_Request *q, MPI_Status *s)
{
    double t0 = MPI_Wtime(); long g0 = gtick();
    int r = __real_MPI_Wait(q, s);
    LOG("Wait", -1, -1, 0, t0, MPI_Wtime(), 0);
    return r;
}
int __real_MPI_Iprobe(int p, int t, MPI_Comm m, int *f, MPI_Status *s);
int __wrap_MPI_Iprobe(int p, int t, MPI_Comm m, int *f, MPI_Status *s)
{
    double t0 = MPI_Wtime(); long g0 = gtick();
    int r = __real_MPI_Iprobe(p, t, m, f, s);
    LOG("Iprobe", p, t, 0, t0, MPI_Wtime(), *f);
    return r;
}
int __real_MPI_Probe(int p, int t, MPI_Comm m, MPI_Status *s);
int __wrap_MPI_Probe(int p, int t, MPI_Comm m, MPI_Status *s)
{
    double t0 = MPI_Wtime(); long g0 = gtick();
    int r = __real_MPI_Probe(p, t, m, s);
    LOG("Probe", p, t, 0, t0, MPI_Wtime(), 0);
    return r;
}
int __real_MPI_Test(MPI_Request *q, int *f, MPI_Status *s);
int __wrap_MPI_Test(MPI_Request *q, int *f, MPI_Status *s)
{
    double t0 = MPI_Wtime(); long g0 = gtick();
    int r = __real_MPI_Test(q, f, s);
    LOG("Test", -1, -1, 0, t0, MPI_Wtime(), *f);
    return r;
}
