/* bad_args: rank 1 calls MPI_Send to rank np+3, which does not exist.
 *
 * Usage: bad_args            errors are fatal (MPI_ERRORS_ARE_FATAL, the
 *                            default): the run must end, naming rank 1,
 *                            MPI_Send and the bad rank; exit non-zero.
 *        bad_args return     MPI_Comm_set_errhandler(MPI_COMM_WORLD,
 *                            MPI_ERRORS_RETURN) first: MPI_Send must return
 *                            MPI_ERR_RANK; rank 1 prints
 *                              bad_args: MPI_Send returned <code> class=<class> (<MPI_Error_string>)
 *                            and rank 0 prints OK (exit 0), or FAIL (exit 1).
 * Needs at least 2 ranks. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
  int rank, np, x = 1, ok = 1;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  if (argc > 1 && strcmp(argv[1], "return") == 0) MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  if (rank == 1) {
    int rc = MPI_Send(&x, 1, MPI_INT, np + 3, 0, MPI_COMM_WORLD);
    int cls = -1, len = 0;
    char msg[MPI_MAX_ERROR_STRING] = "";
    MPI_Error_class(rc, &cls);
    MPI_Error_string(rc, msg, &len);
    printf("bad_args: MPI_Send returned %d class=%d (%s)\n", rc, cls, msg);
    ok = rc != MPI_SUCCESS && cls == MPI_ERR_RANK;
  }
  MPI_Bcast(&ok, 1, MPI_INT, 1, MPI_COMM_WORLD);
  if (rank == 0) printf(ok ? "OK\n" : "FAIL\n");
  MPI_Finalize();
  return ok ? 0 : 1;
}
