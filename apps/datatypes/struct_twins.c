/* Struct types built from the same arguments are separate MPI objects even
 * when the simulator shares their type map: committing, naming or freeing one
 * leaves the other as it was. Rank 0 builds two identical struct types (two
 * blocks of doubles and an int), commits one, names the other, checks that
 * the uncommitted one is refused for a send, that both report the same
 * contents and extent, frees the first, builds a third and sends 4 elements
 * of it to rank 1, which receives them through its own identical type.
 * Prints "rank R: E errors". */
#include <mpi.h>
#include <stdio.h>
#include <stddef.h>
#include <string.h>

struct elem { double a[3]; double b; int c; };

static int build(MPI_Datatype *t) {
    struct elem e;
    int blens[3] = {3, 1, 1};
    MPI_Aint base, disp[3];
    MPI_Datatype types[3] = {MPI_DOUBLE, MPI_DOUBLE, MPI_INT};
    MPI_Get_address(&e, &base);
    MPI_Get_address(&e.a, &disp[0]);
    MPI_Get_address(&e.b, &disp[1]);
    MPI_Get_address(&e.c, &disp[2]);
    for (int i = 0; i < 3; i++) disp[i] -= base;
    return MPI_Type_create_struct(3, blens, disp, types, t);
}

int main(int argc, char **argv) {
    int rank, errors = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    struct elem buf[4];
    memset(buf, 0, sizeof buf);
    if (rank == 0) {
        MPI_Datatype t1, t2, t3;
        build(&t1);
        build(&t2);
        if (t1 == t2) { printf("rank 0: same handle for two types\n"); errors++; }
        MPI_Type_commit(&t1);
        MPI_Type_set_name(t2, "mine");
        char name[MPI_MAX_OBJECT_NAME];
        int len;
        MPI_Type_get_name(t1, name, &len);
        if (len != 0) { printf("rank 0: t1 named '%s'\n", name); errors++; }
        MPI_Type_get_name(t2, name, &len);
        if (strcmp(name, "mine") != 0) { printf("rank 0: t2 named '%s'\n", name); errors++; }
        /* t2 was never committed: a send with it is an error. */
        if (MPI_Send(buf, 1, t2, 1, 9, MPI_COMM_WORLD) == MPI_SUCCESS) {
            printf("rank 0: uncommitted type accepted\n");
            errors++;
        }
        MPI_Aint lb1, ext1, lb2, ext2;
        MPI_Type_get_extent(t1, &lb1, &ext1);
        MPI_Type_get_extent(t2, &lb2, &ext2);
        if (ext1 != (MPI_Aint)sizeof(struct elem) || ext2 != ext1 || lb1 != 0 || lb2 != 0) {
            printf("rank 0: extents %ld %ld, struct %zu\n", (long)ext1, (long)ext2, sizeof(struct elem));
            errors++;
        }
        int ni, na, nd, comb;
        MPI_Type_get_envelope(t2, &ni, &na, &nd, &comb);
        int ints[4];
        MPI_Aint aints[3];
        MPI_Datatype olds[3];
        MPI_Type_get_contents(t2, 4, 3, 3, ints, aints, olds);
        if (ni != 4 || na != 3 || nd != 3 || comb != MPI_COMBINER_STRUCT || ints[0] != 3 || ints[1] != 3 ||
            olds[2] != MPI_INT || aints[2] != (MPI_Aint)offsetof(struct elem, c)) {
            printf("rank 0: contents %d %d %d %d\n", ni, na, nd, comb);
            errors++;
        }
        MPI_Type_free(&t1);
        build(&t3);
        MPI_Type_commit(&t3);
        for (int i = 0; i < 4; i++) {
            buf[i].a[0] = i; buf[i].a[1] = i + 0.25; buf[i].a[2] = i + 0.5; buf[i].b = -i; buf[i].c = 100 + i;
        }
        MPI_Send(buf, 4, t3, 1, 7, MPI_COMM_WORLD);
        MPI_Type_free(&t2);
        MPI_Type_free(&t3);
    } else if (rank == 1) {
        MPI_Datatype t;
        build(&t);
        MPI_Type_commit(&t);
        MPI_Recv(buf, 4, t, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int i = 0; i < 4; i++)
            if (buf[i].a[0] != i || buf[i].a[1] != i + 0.25 || buf[i].a[2] != i + 0.5 || buf[i].b != -i ||
                buf[i].c != 100 + i) {
                printf("rank 1: element %d wrong\n", i);
                errors++;
            }
        MPI_Type_free(&t);
    }
    printf("rank %d: %d errors\n", rank, errors);
    MPI_Finalize();
    return 0;
}
