/* One MPI misuse per mode (argv[1]), each of which the simulator must report
 * instead of passing silently, hanging or crashing:
 *   truncate-wait     MPI_Irecv + MPI_Wait into a buffer too small for the message
 *   truncate-return   the same under MPI_ERRORS_RETURN: prints the code and the status
 *   truncate-waitall  MPI_Waitall with one truncated receive (MPI_ERR_IN_STATUS)
 *   init-twice        MPI_Init called twice
 *   after-finalize    MPI_Send after MPI_Finalize
 *   before-init       MPI_Barrier before MPI_Init
 *   nbc-unwaited      an MPI_Igather never waited before MPI_Finalize
 *   probe-never       MPI_Probe for a message nobody sends
 *   no-finalize       rank 1 returns from main without MPI_Finalize
 * Run with 2 ranks. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
  const char *mode = argc > 1 ? argv[1] : "";
  int rank, big[100] = {0}, small[10], gathered[200];
  MPI_Status st;
  MPI_Request r[2];
  if (strcmp(mode, "before-init") == 0) MPI_Barrier(MPI_COMM_WORLD);
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (strcmp(mode, "init-twice") == 0) MPI_Init(&argc, &argv);
  if (strncmp(mode, "truncate", 8) == 0) {
    if (strcmp(mode, "truncate-return") == 0) MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (rank == 1) {
      MPI_Send(big, 100, MPI_INT, 0, 7, MPI_COMM_WORLD);
      if (strcmp(mode, "truncate-waitall") == 0) MPI_Send(big, 5, MPI_INT, 0, 8, MPI_COMM_WORLD);
    } else if (strcmp(mode, "truncate-waitall") == 0) {
      MPI_Irecv(small, 10, MPI_INT, 1, 8, MPI_COMM_WORLD, &r[0]);
      MPI_Irecv(small, 10, MPI_INT, 1, 7, MPI_COMM_WORLD, &r[1]);
      MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
    } else {
      MPI_Irecv(small, 10, MPI_INT, 1, 7, MPI_COMM_WORLD, &r[0]);
      int rc = MPI_Wait(&r[0], &st);
      int class;
      MPI_Error_class(rc, &class);
      printf("MPI_Wait returned %s, status error %s\n", class == MPI_ERR_TRUNCATE ? "MPI_ERR_TRUNCATE" : "another code",
             st.MPI_ERROR == MPI_ERR_TRUNCATE ? "MPI_ERR_TRUNCATE" : "another code");
    }
  }
  if (strcmp(mode, "nbc-unwaited") == 0) MPI_Igather(big, 100, MPI_INT, gathered, 100, MPI_INT, 0, MPI_COMM_WORLD, &r[0]);
  if (strcmp(mode, "probe-never") == 0 && rank == 0) MPI_Probe(1, 99, MPI_COMM_WORLD, &st);
  if (strcmp(mode, "no-finalize") == 0 && rank == 1) return 0;
  MPI_Finalize();
  if (strcmp(mode, "after-finalize") == 0 && rank == 0) MPI_Send(big, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
  return 0;
}
