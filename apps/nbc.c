/* Non-blocking collectives: rank order of non-commutative reductions,
 * progress of outstanding collectives while a rank is blocked elsewhere,
 * ignored arguments with MPI_IN_PLACE, and the intercommunicator forms
 * (data flows between the groups; MPI_ROOT / MPI_PROC_NULL roots).
 *
 * Usage: nbc (at least 3 ranks). Prints `nbc np= checks=` and OK, or FAIL.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

/* Named like libc's err(): the program's own global must be used. */
int err = 0;
static int checks = 0;
static int rank, np;

#define CHECK(cond, ...)                                                   \
    do {                                                                   \
        ++checks;                                                          \
        if (!(cond)) {                                                     \
            ++err;                                                         \
            fprintf(stderr, "rank %d: check failed: %s: ", rank, #cond);  \
            fprintf(stderr, __VA_ARGS__);                                  \
            fprintf(stderr, "\n");                                         \
        }                                                                  \
    } while (0)

/* Concatenation of decimal digit strings, as (value, length) pairs: it is
 * associative but not commutative, so the result spells the operand order. */
static void concat(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    int *a = in, *b = inout;
    (void) dt;
    for (int i = 0; i < *len; i++) {
        int p = 1;
        for (int k = 0; k < b[2 * i + 1]; k++)
            p *= 10;
        b[2 * i] = a[2 * i] * p + b[2 * i];
        b[2 * i + 1] += a[2 * i + 1];
    }
}

/* "12...n" */
static int digits(int n)
{
    int v = 0;
    for (int i = 1; i <= n; i++)
        v = v * 10 + i;
    return v;
}

static void intra(MPI_Op op)
{
    MPI_Request req;
    int mine[2] = { rank + 1, 1 }, out[2] = { -1, -1 };

    MPI_Ireduce(mine, out, 1, MPI_2INT, op, np - 1, MPI_COMM_WORLD, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    if (rank == np - 1)
        CHECK(out[0] == digits(np), "Ireduce gave %d", out[0]);

    out[0] = -1;
    MPI_Iallreduce(mine, out, 1, MPI_2INT, op, MPI_COMM_WORLD, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    CHECK(out[0] == digits(np), "Iallreduce gave %d", out[0]);

    int *all = malloc(2 * np * sizeof(int));
    for (int i = 0; i < np; i++) {
        all[2 * i] = rank + 1;
        all[2 * i + 1] = 1;
    }
    out[0] = -1;
    MPI_Ireduce_scatter_block(all, out, 1, MPI_2INT, op, MPI_COMM_WORLD, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    CHECK(out[0] == digits(np), "Ireduce_scatter_block gave %d", out[0]);

    /* In-place alltoall: the send count and type are not read. */
    for (int i = 0; i < np; i++)
        all[i] = 100 * rank + i;
    MPI_Ialltoall(MPI_IN_PLACE, -1, MPI_DATATYPE_NULL, all, 1, MPI_INT, MPI_COMM_WORLD, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    for (int i = 0; i < np; i++)
        CHECK(all[i] == 100 * i + rank, "in-place Ialltoall block %d is %d", i, all[i]);

    /* Receive arguments are not read at a non-root. */
    int x = rank;
    MPI_Igather(&x, 1, MPI_INT, all, rank == 0 ? 1 : -1, MPI_INT, 0, MPI_COMM_WORLD, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    if (rank == 0)
        for (int i = 0; i < np; i++)
            CHECK(all[i] == i, "Igather block %d is %d", i, all[i]);
    free(all);
}

/* Rank 0 blocks in MPI_Recv while its Iallreduce has stages left; the
 * others wait for that Iallreduce before sending to rank 0. */
static void progress(void)
{
    MPI_Request req[2];
    int one = 1, sum = 0, sum2 = 0, token = 0;

    MPI_Iallreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req[0]);
    MPI_Iallreduce(&one, &sum2, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req[1]);
    if (rank == 0) {
        for (int i = 1; i < np; i++) {
            MPI_Recv(&token, 1, MPI_INT, i, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            CHECK(token == i, "token %d from %d", token, i);
        }
        MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
    } else {
        /* Wait for the later collective first. */
        MPI_Wait(&req[1], MPI_STATUS_IGNORE);
        MPI_Send(&rank, 1, MPI_INT, 0, 7, MPI_COMM_WORLD);
        MPI_Wait(&req[0], MPI_STATUS_IGNORE);
    }
    CHECK(sum == np && sum2 == np, "sums %d %d", sum, sum2);
}

static void inter(MPI_Op op)
{
    MPI_Comm local, ic;
    MPI_Request req;
    int color = rank % 2, lrank, lsize, rsize;

    MPI_Comm_split(MPI_COMM_WORLD, color, rank, &local);
    /* Leaders: world ranks 0 (evens) and 1 (odds). */
    MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, color == 0 ? 1 : 0, 99, &ic);
    MPI_Comm_rank(ic, &lrank);
    MPI_Comm_size(ic, &lsize);
    MPI_Comm_remote_size(ic, &rsize);

    /* Bcast from the evens' rank 0 to the odds. */
    int v = color == 0 && lrank == 0 ? 4242 : -1;
    int root = color == 0 ? (lrank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
    MPI_Ibcast(&v, 1, MPI_INT, root, ic, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    CHECK(v == (color == 1 || lrank == 0 ? 4242 : -1), "Ibcast gave %d", v);

    /* Reduce of the evens' data, in their rank order, at the odds' last rank. */
    int mine[2] = { lrank + 1, 1 }, out[2] = { -1, -1 };
    root = color == 1 ? (lrank == lsize - 1 ? MPI_ROOT : MPI_PROC_NULL) : rsize - 1;
    MPI_Ireduce(mine, out, 1, MPI_2INT, op, root, ic, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    if (color == 1 && lrank == lsize - 1)
        CHECK(out[0] == digits(rsize), "inter Ireduce gave %d", out[0]);

    /* Allreduce: each group gets the other group's reduction. */
    MPI_Iallreduce(mine, out, 1, MPI_2INT, op, ic, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    CHECK(out[0] == digits(rsize), "inter Iallreduce gave %d", out[0]);

    /* Alltoall: block j goes to remote rank j. */
    int *s = malloc(rsize * sizeof(int)), *r = malloc(rsize * sizeof(int));
    for (int j = 0; j < rsize; j++) {
        s[j] = 1000 * color + 100 * lrank + j;
        r[j] = -1;
    }
    MPI_Ialltoall(s, 1, MPI_INT, r, 1, MPI_INT, ic, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    for (int j = 0; j < rsize; j++)
        CHECK(r[j] == 1000 * (1 - color) + 100 * j + lrank, "inter Ialltoall block %d is %d", j, r[j]);

    /* Blocking alltoallw on the intercommunicator. */
    int *cnt = malloc(rsize * sizeof(int)), *dsp = malloc(rsize * sizeof(int));
    MPI_Datatype *ty = malloc(rsize * sizeof(MPI_Datatype));
    for (int j = 0; j < rsize; j++) {
        cnt[j] = 1;
        dsp[j] = j * (int) sizeof(int);
        ty[j] = MPI_INT;
        r[j] = -1;
    }
    MPI_Alltoallw(s, cnt, dsp, ty, r, cnt, dsp, ty, ic);
    for (int j = 0; j < rsize; j++)
        CHECK(r[j] == 1000 * (1 - color) + 100 * j + lrank, "inter Alltoallw block %d is %d", j, r[j]);

    MPI_Ibarrier(ic, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);

    free(s);
    free(r);
    free(cnt);
    free(dsp);
    free(ty);
    MPI_Comm_free(&ic);
    MPI_Comm_free(&local);
}

int main(int argc, char **argv)
{
    MPI_Op op;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (np < 3 || np > 9) {
        if (rank == 0)
            fprintf(stderr, "nbc: needs 3 to 9 ranks\n");
        MPI_Finalize();
        return 1;
    }
    MPI_Op_create(concat, 0, &op);
    intra(op);
    progress();
    inter(op);
    MPI_Op_free(&op);

    int total = 0;
    MPI_Allreduce(&err, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("nbc np=%d checks=%d\n", np, checks);
        printf(total == 0 ? "OK\n" : "FAIL\n");
    }
    MPI_Finalize();
    return total == 0 ? 0 : 1;
}
