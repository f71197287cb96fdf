/* The four send-receive calls (MPI_Sendrecv, MPI_Sendrecv_replace and their
 * MPI-4 non-blocking forms) on a ring, receiving from MPI_ANY_SOURCE with
 * MPI_ANY_TAG: each rank checks the data it got and that the status is the
 * receive's (source, tag, count), then prints one line per call. */
#include <mpi.h>
#include <stdio.h>

#define N 100

static int check(const char *call, int rank, const MPI_Status *st, int got, int from, int tag, int count)
{
    int n = -1;
    MPI_Get_count(st, MPI_INT, &n);
    int ok = st->MPI_SOURCE == from && st->MPI_TAG == tag && n == count && got == from;
    printf("%s rank=%d source=%d tag=%d count=%d data=%d %s\n", call, rank, st->MPI_SOURCE, st->MPI_TAG,
           n, got, ok ? "ok" : "WRONG");
    return ok;
}

int main(int argc, char **argv)
{
    int rank, size, buf[N], in[N];
    MPI_Status st;
    MPI_Request req;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int next = (rank + 1) % size, prev = (rank + size - 1) % size, ok = 1;

    for (int i = 0; i < N; i++)
        buf[i] = rank;
    MPI_Sendrecv(buf, N, MPI_INT, next, 10 + rank, in, N, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG,
                 MPI_COMM_WORLD, &st);
    ok &= check("MPI_Sendrecv", rank, &st, in[N - 1], prev, 10 + prev, N);

    MPI_Isendrecv(buf, N / 2, MPI_INT, next, 20 + rank, in, N, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG,
                  MPI_COMM_WORLD, &req);
    MPI_Wait(&req, &st);
    ok &= check("MPI_Isendrecv", rank, &st, in[0], prev, 20 + prev, N / 2);

    for (int i = 0; i < N; i++)
        buf[i] = rank;
    MPI_Sendrecv_replace(buf, N, MPI_INT, next, 30 + rank, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
    ok &= check("MPI_Sendrecv_replace", rank, &st, buf[N - 1], prev, 30 + prev, N);

    for (int i = 0; i < N; i++)
        buf[i] = rank;
    MPI_Isendrecv_replace(buf, N, MPI_INT, next, 40 + rank, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &req);
    MPI_Wait(&req, &st);
    ok &= check("MPI_Isendrecv_replace", rank, &st, buf[N - 1], prev, 40 + prev, N);

    MPI_Finalize();
    return ok ? 0 : 1;
}
