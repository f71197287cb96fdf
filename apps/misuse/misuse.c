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
 *   coll-kind         rank 0 calls MPI_Bcast where rank 1 calls MPI_Barrier
 *   coll-root         MPI_Bcast with root 0 on rank 0 and root 1 on rank 1
 *   coll-op           MPI_Allreduce with MPI_SUM on rank 0 and MPI_MAX on rank 1
 *   coll-count        MPI_Allreduce of 4 ints on rank 0 and 3 on rank 1
 *   type-mismatch     MPI_INT sent twice, received as MPI_FLOAT; then MPI_INT received as
 *                     MPI_UNSIGNED and MPI_BYTE (fine): one warning, the run goes on
 *   leak              a communicator, a group, a datatype, an operation and a persistent
 *                     request never freed before MPI_Finalize (reported, the run succeeds)
 *   coll-fine         matching collectives, a user-defined operation created on each rank
 *                     and an MPI_BYTE/MPI_INT broadcast of equal size: must pass
 * Run with 2 ranks. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

static void user_sum(void *in, void *inout, int *len, MPI_Datatype *type)
{
  (void)type;
  for (int i = 0; i < *len; i++) ((int *)inout)[i] += ((int *)in)[i];
}

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
  if (strcmp(mode, "type-mismatch") == 0) {
    float f[4];
    if (rank == 1) {
      for (int i = 0; i < 4; i++) MPI_Send(big, 4, MPI_INT, 0, i, MPI_COMM_WORLD);
    } else {
      MPI_Recv(f, 4, MPI_FLOAT, 1, 0, MPI_COMM_WORLD, &st);
      MPI_Recv(f, 4, MPI_FLOAT, 1, 1, MPI_COMM_WORLD, &st);
      MPI_Recv(small, 4, MPI_UNSIGNED, 1, 2, MPI_COMM_WORLD, &st);
      MPI_Recv(small, 16, MPI_BYTE, 1, 3, MPI_COMM_WORLD, &st);
      printf("received all four\n");
    }
  }
  if (strcmp(mode, "leak") == 0) {
    MPI_Comm dup;
    MPI_Group g;
    MPI_Datatype t;
    MPI_Op o;
    MPI_Request p;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_group(MPI_COMM_WORLD, &g);
    MPI_Type_contiguous(2, MPI_INT, &t);
    MPI_Type_commit(&t);
    MPI_Op_create(user_sum, 1, &o);
    MPI_Send_init(big, 1, MPI_INT, 1 - rank, 5, MPI_COMM_WORLD, &p);
    MPI_Start(&p);
    MPI_Recv(small, 1, MPI_INT, 1 - rank, 5, MPI_COMM_WORLD, &st);
    MPI_Wait(&p, &st);
  }
  if (strcmp(mode, "coll-kind") == 0) {
    if (rank == 0) MPI_Bcast(big, 1, MPI_INT, 0, MPI_COMM_WORLD);
    else MPI_Barrier(MPI_COMM_WORLD);
  }
  if (strcmp(mode, "coll-root") == 0) MPI_Bcast(big, 1, MPI_INT, rank, MPI_COMM_WORLD);
  if (strcmp(mode, "coll-op") == 0)
    MPI_Allreduce(big, gathered, 1, MPI_INT, rank == 0 ? MPI_SUM : MPI_MAX, MPI_COMM_WORLD);
  if (strcmp(mode, "coll-count") == 0) MPI_Allreduce(big, gathered, 4 - rank, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (strcmp(mode, "coll-fine") == 0) {
    MPI_Op mine, extra;
    if (rank == 1) MPI_Op_create(user_sum, 1, &extra); /* distinct handles on the two ranks */
    MPI_Op_create(user_sum, 1, &mine);
    big[0] = rank + 1;
    MPI_Allreduce(big, gathered, 1, MPI_INT, mine, MPI_COMM_WORLD);
    if (rank == 0) MPI_Bcast(big, 2 * (int)sizeof(int), MPI_BYTE, 0, MPI_COMM_WORLD);
    else MPI_Bcast(big, 2, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    printf("rank %d: user sum %d\n", rank, gathered[0]);
    MPI_Op_free(&mine);
    if (rank == 1) MPI_Op_free(&extra);
  }
  if (strcmp(mode, "unreceived") == 0 && rank == 0) MPI_Send(big, 3, MPI_INT, 1, 42, MPI_COMM_WORLD); /* detached: returns */
  if (strcmp(mode, "split-color") == 0) {
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, rank == 0 ? -10 : 1, 0, &half); /* -10: neither a color nor MPI_UNDEFINED */
  }
  if (strcmp(mode, "free-active-persistent") == 0) {
    MPI_Request p;
    if (rank == 0) {
      MPI_Send_init(big, 1, MPI_INT, 1, 5, MPI_COMM_WORLD, &p);
      MPI_Start(&p);
      MPI_Request_free(&p); /* never waited */
    } else {
      MPI_Recv(big, 1, MPI_INT, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
  }
  MPI_Finalize();
  if (strcmp(mode, "after-finalize") == 0 && rank == 0) MPI_Send(big, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
  return 0;
}
