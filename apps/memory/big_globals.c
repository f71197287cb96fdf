/* A program with 1 GiB of global variables (zeroed, so they cost nothing
 * until written) of which each rank writes one page: smpirun warns that the
 * private copies could outgrow the machine's memory, and the run works. */
#include <mpi.h>
#include <stdio.h>

char big[1 << 30];

int main(int argc, char **argv)
{
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    big[rank * 4096 % sizeof big] = (char)rank;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("%s\n", big[0] == 0 ? "OK" : "WRONG");
    MPI_Finalize();
    return 0;
}
