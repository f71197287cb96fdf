/* Datatype construction and representation checks: a block x cyclic(2)
 * darray over a 2x2 process grid (C and Fortran order), external32 packing of
 * int, long and double, and MPI_Type_get_contents of a vector. Each rank
 * prints "rank R: N errors". */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#define ROWS 4
#define COLS 8

static int check_darray(int rank, int order)
{
    int gsizes[2] = {ROWS, COLS}, distribs[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC};
    int dargs[2] = {MPI_DISTRIBUTE_DFLT_DARG, 2}, psizes[2] = {2, 2};
    int global[ROWS * COLS], packed[ROWS * COLS], errors = 0, size, position = 0;
    MPI_Datatype t;
    for (int i = 0; i < ROWS * COLS; i++)
        global[i] = i;
    MPI_Type_create_darray(4, rank, 2, gsizes, distribs, dargs, psizes, order, MPI_INT, &t);
    MPI_Type_commit(&t);
    MPI_Type_size(t, &size);
    MPI_Pack(global, 1, t, packed, sizeof(packed), &position, MPI_COMM_WORLD);
    /* Grid coordinates are row-major whatever the array order. */
    int prow = rank / 2, pcol = rank % 2, n = 0;
    for (int a = 0; a < ROWS * COLS; a++) {
        /* a-th element in type-map order: C order has the column fastest. */
        int i = order == MPI_ORDER_C ? a / COLS : a % ROWS;
        int j = order == MPI_ORDER_C ? a % COLS : a / ROWS;
        if (i / 2 != prow || (j / 2) % 2 != pcol)
            continue;
        int offset = order == MPI_ORDER_C ? i * COLS + j : i + j * ROWS;
        if (n >= size / (int) sizeof(int) || packed[n] != offset)
            errors++;
        n++;
    }
    if (n * (int) sizeof(int) != size)
        errors++;
    MPI_Type_free(&t);
    return errors;
}

static int check_external32(void)
{
    int ints[2] = {1, -2};
    long longs[2] = {1, -2};
    double d = 1.0;
    unsigned char buf[64];
    const unsigned char int_ref[8] = {0, 0, 0, 1, 0xff, 0xff, 0xff, 0xfe};
    const unsigned char double_ref[8] = {0x3f, 0xf0, 0, 0, 0, 0, 0, 0};
    MPI_Aint pos = 0, size;
    int errors = 0;
    MPI_Pack_external_size("external32", 2, MPI_LONG, &size);
    errors += size != 8; /* MPI_LONG is 4 bytes in external32 */
    MPI_Pack_external("external32", ints, 2, MPI_INT, buf, sizeof(buf), &pos);
    MPI_Pack_external("external32", longs, 2, MPI_LONG, buf, sizeof(buf), &pos);
    MPI_Pack_external("external32", &d, 1, MPI_DOUBLE, buf, sizeof(buf), &pos);
    errors += pos != 24;
    errors += memcmp(buf, int_ref, 8) != 0;
    errors += memcmp(buf + 8, int_ref, 8) != 0;
    errors += memcmp(buf + 16, double_ref, 8) != 0;
    long back[2] = {0, 0};
    pos = 8;
    MPI_Unpack_external("external32", buf, sizeof(buf), &pos, back, 2, MPI_LONG);
    errors += back[0] != 1 || back[1] != -2 || pos != 16;
    return errors;
}

static int check_contents(void)
{
    MPI_Datatype v, types[1];
    int ni, na, nd, combiner, ints[3], errors = 0;
    MPI_Aint aints[1];
    MPI_Type_vector(3, 2, 5, MPI_DOUBLE, &v);
    MPI_Type_get_envelope(v, &ni, &na, &nd, &combiner);
    errors += ni != 3 || na != 0 || nd != 1 || combiner != MPI_COMBINER_VECTOR;
    MPI_Type_get_contents(v, 3, 0, 1, ints, aints, types);
    errors += ints[0] != 3 || ints[1] != 2 || ints[2] != 5 || types[0] != MPI_DOUBLE;
    MPI_Type_free(&v);
    return errors;
}

int main(int argc, char **argv)
{
    int rank, errors = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    errors += check_darray(rank, MPI_ORDER_C);
    errors += check_darray(rank, MPI_ORDER_FORTRAN);
    errors += check_external32();
    errors += check_contents();
    printf("rank %d: %d errors\n", rank, errors);
    MPI_Finalize();
    return 0;
}
