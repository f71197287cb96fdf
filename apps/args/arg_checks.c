/* MPI argument checking (issue 15): every MPI function given a bad argument
 * returns the error class real MPIs return under MPI_ERRORS_RETURN, and
 * never crashes; the valid corner cases MPI allows return MPI_SUCCESS.
 *
 * demonstrates:
 *   - NULL buffers with a positive count, negative counts, invalid datatypes,
 *     operations, roots, ranks, tags and communicators in collectives
 *     (blocking, non-blocking, v/w variants, neighbourhood, reduce_local,
 *     intercommunicator forms), point-to-point (send modes, receives,
 *     sendrecv, probes, persistent and `_c` forms), request completion,
 *     datatype constructors (subarray and darray too), MPI_Pack/MPI_Unpack/
 *     MPI_Pack_size and the process-topology constructors and queries;
 *   - what is valid: MPI_IN_PLACE where allowed, arguments significant only
 *     at the root, MPI_BOTTOM with absolute addresses, zero counts with NULL
 *     buffers, MPI_PROC_NULL peers, MPI_ANY_SOURCE/MPI_ANY_TAG on receives.
 *
 * Run with 2 ranks. Every case is called by both ranks with the same bad
 * argument (root-only arguments use MPI_COMM_SELF), so no rank is left
 * waiting for one that returned an error. Rank 0 prints one line per case:
 *   <case>: <class returned> (expected <class>)
 * and a last line "checked <n> cases, <m> unexpected".
 *
 * With argument "fatal" the program instead keeps MPI_ERRORS_ARE_FATAL and
 * calls MPI_Allreduce with a NULL send buffer: the run must end with a
 * message naming the rank, the function and the argument. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

static int rank, checked, unexpected;

static const char *class_name(int code)
{
  static char s[MPI_MAX_ERROR_STRING];
  int cls, len;
  MPI_Error_class(code, &cls);
  if (cls == MPI_SUCCESS) return "MPI_SUCCESS";
  MPI_Error_string(cls, s, &len);
  char *colon = strchr(s, ':');
  if (colon) *colon = 0;
  return s;
}

static void expect(const char *what, int code, int expected)
{
  int cls;
  MPI_Error_class(code, &cls);
  checked++;
  if (cls != expected) unexpected++;
  if (rank == 0) {
    char want[MPI_MAX_ERROR_STRING];
    strcpy(want, class_name(expected));
    printf("%s: %s (expected %s)\n", what, class_name(code), want);
  }
}

#define E(what, call, cls) expect(what, (call), cls)
#define OK(what, call) expect(what, (call), MPI_SUCCESS)

int main(int argc, char **argv)
{
  /* Line by line, so the output up to a crash is kept. */
  setvbuf(stdout, NULL, _IOLBF, 0);
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int buf[64] = {0}, out[256] = {0}, counts[4] = {1, 1, 1, 1}, displs[4] = {0, 1, 2, 3};
  int neg[4] = {1, -1, 1, 1}, types[4] = {MPI_INT, MPI_INT, MPI_INT, MPI_INT};
  int wdispls[4] = {0, 4, 8, 12}, badtypes[4] = {MPI_INT, 12345, MPI_INT, MPI_INT};
  MPI_Count ccounts[2] = {1, 1}, cneg[2] = {1, -2};
  MPI_Aint cdispls[2] = {0, 1};
  MPI_Request req;
  MPI_Status st;
  MPI_Datatype t, uncommitted;
  const MPI_Comm W = MPI_COMM_WORLD, S = MPI_COMM_SELF;
  const int other = 1 - rank;

  if (argc > 1 && strcmp(argv[1], "fatal") == 0) {
    MPI_Allreduce(NULL, out, 10, MPI_INT, MPI_SUM, W);
    printf("not reached\n");
    MPI_Finalize();
    return 0;
  }
  MPI_Comm_set_errhandler(W, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(S, MPI_ERRORS_RETURN);
  MPI_Type_contiguous(2, MPI_INT, &uncommitted);

  /* ---- blocking collectives ---- */
  E("Barrier comm MPI_COMM_NULL", MPI_Barrier(MPI_COMM_NULL), MPI_ERR_COMM);
  E("Bcast buffer NULL", MPI_Bcast(NULL, 10, MPI_INT, 0, W), MPI_ERR_BUFFER);
  E("Bcast count -1", MPI_Bcast(buf, -1, MPI_INT, 0, W), MPI_ERR_COUNT);
  E("Bcast datatype invalid", MPI_Bcast(buf, 1, 12345, 0, W), MPI_ERR_TYPE);
  E("Bcast datatype MPI_DATATYPE_NULL", MPI_Bcast(buf, 1, MPI_DATATYPE_NULL, 0, W), MPI_ERR_TYPE);
  E("Bcast datatype uncommitted", MPI_Bcast(buf, 1, uncommitted, 0, W), MPI_ERR_TYPE);
  E("Bcast root 7", MPI_Bcast(buf, 1, MPI_INT, 7, W), MPI_ERR_ROOT);
  E("Bcast root -1", MPI_Bcast(buf, 1, MPI_INT, -1, W), MPI_ERR_ROOT);
  E("Bcast comm invalid", MPI_Bcast(buf, 1, MPI_INT, 0, (MPI_Comm)777), MPI_ERR_COMM);
  E("Reduce sendbuf NULL", MPI_Reduce(NULL, out, 4, MPI_INT, MPI_SUM, 0, W), MPI_ERR_BUFFER);
  E("Reduce recvbuf NULL at root", MPI_Reduce(buf, NULL, 4, MPI_INT, MPI_SUM, 0, S), MPI_ERR_BUFFER);
  E("Reduce op MPI_OP_NULL", MPI_Reduce(buf, out, 4, MPI_INT, MPI_OP_NULL, 0, W), MPI_ERR_OP);
  E("Reduce root 2", MPI_Reduce(buf, out, 4, MPI_INT, MPI_SUM, 2, W), MPI_ERR_ROOT);
  E("Allreduce sendbuf NULL", MPI_Allreduce(NULL, out, 10, MPI_INT, MPI_SUM, W), MPI_ERR_BUFFER);
  E("Allreduce recvbuf NULL", MPI_Allreduce(buf, NULL, 10, MPI_INT, MPI_SUM, W), MPI_ERR_BUFFER);
  E("Allreduce recvbuf MPI_IN_PLACE", MPI_Allreduce(buf, MPI_IN_PLACE, 1, MPI_INT, MPI_SUM, W), MPI_ERR_BUFFER);
  E("Allreduce count -3", MPI_Allreduce(buf, out, -3, MPI_INT, MPI_SUM, W), MPI_ERR_COUNT);
  E("Allreduce op invalid", MPI_Allreduce(buf, out, 1, MPI_INT, 999, W), MPI_ERR_OP);
  E("Allreduce datatype invalid", MPI_Allreduce(buf, out, 1, 12345, MPI_SUM, W), MPI_ERR_TYPE);
  E("Reduce_local inbuf NULL", MPI_Reduce_local(NULL, out, 4, MPI_INT, MPI_SUM), MPI_ERR_BUFFER);
  E("Reduce_local inoutbuf NULL", MPI_Reduce_local(buf, NULL, 4, MPI_INT, MPI_SUM), MPI_ERR_BUFFER);
  E("Reduce_local count -1", MPI_Reduce_local(buf, out, -1, MPI_INT, MPI_SUM), MPI_ERR_COUNT);
  E("Reduce_local op MPI_OP_NULL", MPI_Reduce_local(buf, out, 4, MPI_INT, MPI_OP_NULL), MPI_ERR_OP);
  E("Gather sendbuf NULL", MPI_Gather(NULL, 4, MPI_INT, out, 4, MPI_INT, 0, W), MPI_ERR_BUFFER);
  E("Gather recvbuf NULL at root", MPI_Gather(buf, 4, MPI_INT, NULL, 4, MPI_INT, 0, S), MPI_ERR_BUFFER);
  E("Gather recvcount -1 at root", MPI_Gather(buf, 4, MPI_INT, out, -1, MPI_INT, 0, S), MPI_ERR_COUNT);
  E("Gather root 5", MPI_Gather(buf, 4, MPI_INT, out, 4, MPI_INT, 5, W), MPI_ERR_ROOT);
  E("Gather sendtype invalid", MPI_Gather(buf, 4, 12345, out, 4, MPI_INT, 0, W), MPI_ERR_TYPE);
  E("Gatherv recvcounts NULL at root", MPI_Gatherv(buf, 1, MPI_INT, out, NULL, displs, MPI_INT, 0, S), MPI_ERR_ARG);
  E("Gatherv displs NULL at root", MPI_Gatherv(buf, 1, MPI_INT, out, counts, NULL, MPI_INT, 0, S), MPI_ERR_ARG);
  E("Gatherv recvcounts[0] -1 at root", MPI_Gatherv(buf, 1, MPI_INT, out, neg + 1, displs, MPI_INT, 0, S),
    MPI_ERR_COUNT);
  E("Gatherv recvbuf NULL at root", MPI_Gatherv(buf, 1, MPI_INT, NULL, counts, displs, MPI_INT, 0, S),
    MPI_ERR_BUFFER);
  E("Scatter sendbuf NULL at root", MPI_Scatter(NULL, 4, MPI_INT, out, 4, MPI_INT, 0, S), MPI_ERR_BUFFER);
  E("Scatter recvbuf NULL", MPI_Scatter(buf, 4, MPI_INT, NULL, 4, MPI_INT, 0, W), MPI_ERR_BUFFER);
  E("Scatter root 9", MPI_Scatter(buf, 4, MPI_INT, out, 4, MPI_INT, 9, W), MPI_ERR_ROOT);
  E("Scatterv sendcounts NULL at root", MPI_Scatterv(buf, NULL, displs, MPI_INT, out, 1, MPI_INT, 0, S),
    MPI_ERR_ARG);
  E("Scatterv sendcounts[0] -1 at root", MPI_Scatterv(buf, neg + 1, displs, MPI_INT, out, 1, MPI_INT, 0, S),
    MPI_ERR_COUNT);
  E("Allgather recvbuf NULL", MPI_Allgather(buf, 4, MPI_INT, NULL, 4, MPI_INT, W), MPI_ERR_BUFFER);
  E("Allgather recvtype invalid", MPI_Allgather(buf, 4, MPI_INT, out, 4, 12345, W), MPI_ERR_TYPE);
  E("Allgatherv recvcounts NULL", MPI_Allgatherv(buf, 1, MPI_INT, out, NULL, displs, MPI_INT, W), MPI_ERR_ARG);
  E("Allgatherv displs NULL", MPI_Allgatherv(buf, 1, MPI_INT, out, counts, NULL, MPI_INT, W), MPI_ERR_ARG);
  E("Allgatherv recvcounts[1] -1", MPI_Allgatherv(buf, 1, MPI_INT, out, neg, displs, MPI_INT, W), MPI_ERR_COUNT);
  E("Alltoall sendbuf NULL", MPI_Alltoall(NULL, 4, MPI_INT, out, 4, MPI_INT, W), MPI_ERR_BUFFER);
  E("Alltoall sendcount -1", MPI_Alltoall(buf, -1, MPI_INT, out, 4, MPI_INT, W), MPI_ERR_COUNT);
  E("Alltoallv arrays NULL", MPI_Alltoallv(buf, NULL, NULL, MPI_INT, out, NULL, NULL, MPI_INT, W), MPI_ERR_ARG);
  E("Alltoallv sendcounts[1] -1", MPI_Alltoallv(buf, neg, displs, MPI_INT, out, counts, displs, MPI_INT, W),
    MPI_ERR_COUNT);
  E("Alltoallv recvbuf NULL", MPI_Alltoallv(buf, counts, displs, MPI_INT, NULL, counts, displs, MPI_INT, W),
    MPI_ERR_BUFFER);
  E("Alltoallw sendtypes NULL", MPI_Alltoallw(buf, counts, wdispls, NULL, out, counts, wdispls, types, W),
    MPI_ERR_ARG);
  E("Alltoallw recvtypes[1] invalid", MPI_Alltoallw(buf, counts, wdispls, types, out, counts, wdispls, badtypes, W),
    MPI_ERR_TYPE);
  E("Alltoallv_c sendcounts[1] -2", MPI_Alltoallv_c(buf, cneg, cdispls, MPI_INT, out, ccounts, cdispls, MPI_INT, W),
    MPI_ERR_COUNT);
  E("Reduce_scatter recvcounts NULL", MPI_Reduce_scatter(buf, out, NULL, MPI_INT, MPI_SUM, W), MPI_ERR_ARG);
  E("Reduce_scatter recvcounts[1] -1", MPI_Reduce_scatter(buf, out, neg, MPI_INT, MPI_SUM, W), MPI_ERR_COUNT);
  E("Reduce_scatter recvbuf NULL", MPI_Reduce_scatter(buf, NULL, counts, MPI_INT, MPI_SUM, W), MPI_ERR_BUFFER);
  E("Reduce_scatter_block sendbuf NULL", MPI_Reduce_scatter_block(NULL, out, 2, MPI_INT, MPI_SUM, W),
    MPI_ERR_BUFFER);
  E("Reduce_scatter_block op invalid", MPI_Reduce_scatter_block(buf, out, 2, MPI_INT, 999, W), MPI_ERR_OP);
  E("Scan sendbuf NULL", MPI_Scan(NULL, out, 2, MPI_INT, MPI_SUM, W), MPI_ERR_BUFFER);
  E("Exscan op MPI_OP_NULL", MPI_Exscan(buf, out, 2, MPI_INT, MPI_OP_NULL, W), MPI_ERR_OP);

  /* ---- non-blocking collectives ---- */
  E("Ibarrier comm MPI_COMM_NULL", MPI_Ibarrier(MPI_COMM_NULL, &req), MPI_ERR_COMM);
  E("Ibcast buffer NULL", MPI_Ibcast(NULL, 3, MPI_INT, 0, W, &req), MPI_ERR_BUFFER);
  E("Ireduce root 4", MPI_Ireduce(buf, out, 1, MPI_INT, MPI_SUM, 4, W, &req), MPI_ERR_ROOT);
  E("Iallreduce sendbuf NULL", MPI_Iallreduce(NULL, out, 1, MPI_INT, MPI_SUM, W, &req), MPI_ERR_BUFFER);
  E("Iallreduce op invalid", MPI_Iallreduce(buf, out, 1, MPI_INT, 999, W, &req), MPI_ERR_OP);
  E("Igather recvbuf NULL at root", MPI_Igather(buf, 1, MPI_INT, NULL, 1, MPI_INT, 0, S, &req), MPI_ERR_BUFFER);
  E("Igatherv recvcounts NULL at root", MPI_Igatherv(buf, 1, MPI_INT, out, NULL, displs, MPI_INT, 0, S, &req),
    MPI_ERR_ARG);
  E("Iscatter sendbuf NULL at root", MPI_Iscatter(NULL, 1, MPI_INT, out, 1, MPI_INT, 0, S, &req), MPI_ERR_BUFFER);
  E("Iscatterv sendcounts[0] -1 at root",
    MPI_Iscatterv(buf, neg + 1, displs, MPI_INT, out, 1, MPI_INT, 0, S, &req), MPI_ERR_COUNT);
  E("Iallgather recvcount -1", MPI_Iallgather(buf, 1, MPI_INT, out, -1, MPI_INT, W, &req), MPI_ERR_COUNT);
  E("Iallgatherv recvcounts NULL", MPI_Iallgatherv(buf, 1, MPI_INT, out, NULL, displs, MPI_INT, W, &req),
    MPI_ERR_ARG);
  E("Ialltoall recvbuf NULL", MPI_Ialltoall(buf, 1, MPI_INT, NULL, 1, MPI_INT, W, &req), MPI_ERR_BUFFER);
  E("Ialltoallv sendcounts NULL", MPI_Ialltoallv(buf, NULL, displs, MPI_INT, out, counts, displs, MPI_INT, W, &req),
    MPI_ERR_ARG);
  E("Ialltoallw sendtypes[1] invalid",
    MPI_Ialltoallw(buf, counts, wdispls, badtypes, out, counts, wdispls, types, W, &req), MPI_ERR_TYPE);
  E("Ireduce_scatter recvcounts[1] -1", MPI_Ireduce_scatter(buf, out, neg, MPI_INT, MPI_SUM, W, &req),
    MPI_ERR_COUNT);
  E("Ireduce_scatter_block recvbuf NULL", MPI_Ireduce_scatter_block(buf, NULL, 1, MPI_INT, MPI_SUM, W, &req),
    MPI_ERR_BUFFER);
  E("Iscan datatype invalid", MPI_Iscan(buf, out, 1, 12345, MPI_SUM, W, &req), MPI_ERR_TYPE);
  E("Iexscan sendbuf NULL", MPI_Iexscan(NULL, out, 1, MPI_INT, MPI_SUM, W, &req), MPI_ERR_BUFFER);

  /* ---- neighbourhood collectives (a periodic ring of 2) ---- */
  MPI_Comm ring;
  int dims[1] = {2}, periods[1] = {1};
  MPI_Cart_create(W, 1, dims, periods, 0, &ring);
  MPI_Comm_set_errhandler(ring, MPI_ERRORS_RETURN);
  E("Neighbor_allgather recvbuf NULL", MPI_Neighbor_allgather(buf, 1, MPI_INT, NULL, 1, MPI_INT, ring),
    MPI_ERR_BUFFER);
  E("Neighbor_allgather sendcount -1", MPI_Neighbor_allgather(buf, -1, MPI_INT, out, 1, MPI_INT, ring),
    MPI_ERR_COUNT);
  E("Neighbor_allgatherv recvcounts NULL",
    MPI_Neighbor_allgatherv(buf, 1, MPI_INT, out, NULL, displs, MPI_INT, ring), MPI_ERR_ARG);
  E("Neighbor_alltoall sendtype invalid", MPI_Neighbor_alltoall(buf, 1, 12345, out, 1, MPI_INT, ring),
    MPI_ERR_TYPE);
  E("Neighbor_alltoallv recvcounts[1] -1",
    MPI_Neighbor_alltoallv(buf, counts, displs, MPI_INT, out, neg, displs, MPI_INT, ring), MPI_ERR_COUNT);
  {
    MPI_Aint wd[2] = {0, 4};
    E("Neighbor_alltoallw recvtypes NULL",
      MPI_Neighbor_alltoallw(buf, counts, wd, types, out, counts, wd, NULL, ring), MPI_ERR_ARG);
  }
  E("Ineighbor_alltoall sendbuf NULL", MPI_Ineighbor_alltoall(NULL, 1, MPI_INT, out, 1, MPI_INT, ring, &req),
    MPI_ERR_BUFFER);

  /* ---- intercommunicator forms (rank 0's group and rank 1's) ---- */
  MPI_Comm inter;
  MPI_Intercomm_create(S, 0, W, other, 42, &inter);
  MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
  E("inter Bcast root 3", MPI_Bcast(buf, 1, MPI_INT, 3, inter), MPI_ERR_ROOT);
  E("inter Allreduce sendbuf NULL", MPI_Allreduce(NULL, out, 2, MPI_INT, MPI_SUM, inter), MPI_ERR_BUFFER);
  E("inter Allreduce sendbuf MPI_IN_PLACE", MPI_Allreduce(MPI_IN_PLACE, out, 2, MPI_INT, MPI_SUM, inter),
    MPI_ERR_BUFFER);
  /* rank 0 is the root (its receive buffer is NULL), rank 1 sends from NULL */
  E("inter Gather buffers NULL",
    MPI_Gather(NULL, 1, MPI_INT, NULL, 1, MPI_INT, rank == 0 ? MPI_ROOT : 0, inter), MPI_ERR_BUFFER);

  /* ---- point-to-point ---- */
  E("Send buf NULL", MPI_Send(NULL, 3, MPI_INT, other, 0, W), MPI_ERR_BUFFER);
  E("Send count -1", MPI_Send(buf, -1, MPI_INT, other, 0, W), MPI_ERR_COUNT);
  E("Send datatype invalid", MPI_Send(buf, 1, 12345, other, 0, W), MPI_ERR_TYPE);
  E("Send dest 9", MPI_Send(buf, 1, MPI_INT, 9, 0, W), MPI_ERR_RANK);
  E("Send dest MPI_ANY_SOURCE", MPI_Send(buf, 1, MPI_INT, MPI_ANY_SOURCE, 0, W), MPI_ERR_RANK);
  E("Send tag -5", MPI_Send(buf, 1, MPI_INT, other, -5, W), MPI_ERR_TAG);
  E("Send tag MPI_ANY_TAG", MPI_Send(buf, 1, MPI_INT, other, MPI_ANY_TAG, W), MPI_ERR_TAG);
  E("Send comm MPI_COMM_NULL", MPI_Send(buf, 1, MPI_INT, other, 0, MPI_COMM_NULL), MPI_ERR_COMM);
  E("Ssend buf NULL", MPI_Ssend(NULL, 3, MPI_INT, other, 0, W), MPI_ERR_BUFFER);
  E("Rsend dest 9", MPI_Rsend(buf, 1, MPI_INT, 9, 0, W), MPI_ERR_RANK);
  E("Bsend count -1", MPI_Bsend(buf, -1, MPI_INT, other, 0, W), MPI_ERR_COUNT);
  E("Isend buf NULL", MPI_Isend(NULL, 3, MPI_INT, other, 0, W, &req), MPI_ERR_BUFFER);
  E("Issend tag -1", MPI_Issend(buf, 1, MPI_INT, other, -1, W, &req), MPI_ERR_TAG);
  E("Irsend datatype invalid", MPI_Irsend(buf, 1, 12345, other, 0, W, &req), MPI_ERR_TYPE);
  E("Ibsend dest -7", MPI_Ibsend(buf, 1, MPI_INT, -7, 0, W, &req), MPI_ERR_RANK);
  E("Recv buf NULL", MPI_Recv(NULL, 3, MPI_INT, other, 0, W, &st), MPI_ERR_BUFFER);
  E("Recv count -1", MPI_Recv(buf, -1, MPI_INT, other, 0, W, &st), MPI_ERR_COUNT);
  E("Recv source 9", MPI_Recv(buf, 1, MPI_INT, 9, 0, W, &st), MPI_ERR_RANK);
  E("Recv tag -5", MPI_Recv(buf, 1, MPI_INT, other, -5, W, &st), MPI_ERR_TAG);
  E("Recv comm invalid", MPI_Recv(buf, 1, MPI_INT, other, 0, (MPI_Comm)777, &st), MPI_ERR_COMM);
  E("Irecv buf NULL", MPI_Irecv(NULL, 3, MPI_INT, other, 0, W, &req), MPI_ERR_BUFFER);
  E("Irecv datatype invalid", MPI_Irecv(buf, 3, 12345, other, 0, W, &req), MPI_ERR_TYPE);
  E("Sendrecv recvbuf NULL", MPI_Sendrecv(buf, 1, MPI_INT, other, 0, NULL, 1, MPI_INT, other, 0, W, &st),
    MPI_ERR_BUFFER);
  E("Sendrecv sendbuf NULL", MPI_Sendrecv(NULL, 1, MPI_INT, other, 0, out, 1, MPI_INT, other, 0, W, &st),
    MPI_ERR_BUFFER);
  E("Sendrecv dest 9", MPI_Sendrecv(buf, 1, MPI_INT, 9, 0, out, 1, MPI_INT, other, 0, W, &st), MPI_ERR_RANK);
  E("Sendrecv_replace buf NULL", MPI_Sendrecv_replace(NULL, 2, MPI_INT, other, 0, other, 0, W, &st),
    MPI_ERR_BUFFER);
  E("Sendrecv_replace count -1", MPI_Sendrecv_replace(buf, -1, MPI_INT, other, 0, other, 0, W, &st),
    MPI_ERR_COUNT);
  E("Probe source 9", MPI_Probe(9, 0, W, &st), MPI_ERR_RANK);
  E("Probe comm MPI_COMM_NULL", MPI_Probe(other, 0, MPI_COMM_NULL, &st), MPI_ERR_COMM);
  {
    int flag;
    E("Iprobe tag -7", MPI_Iprobe(other, -7, W, &flag, &st), MPI_ERR_TAG);
  }
  E("Send_c count -1", MPI_Send_c(buf, -1, MPI_INT, other, 0, W), MPI_ERR_COUNT);
  E("Send_c buf NULL", MPI_Send_c(NULL, 2, MPI_INT, other, 0, W), MPI_ERR_BUFFER);
  E("Recv_c buf NULL", MPI_Recv_c(NULL, 2, MPI_INT, other, 0, W, &st), MPI_ERR_BUFFER);
  E("Isend_c tag -2", MPI_Isend_c(buf, 1, MPI_INT, other, -2, W, &req), MPI_ERR_TAG);
  E("Send_init buf NULL", MPI_Send_init(NULL, 2, MPI_INT, other, 0, W, &req), MPI_ERR_BUFFER);
  E("Recv_init source 9", MPI_Recv_init(buf, 2, MPI_INT, 9, 0, W, &req), MPI_ERR_RANK);

  /* ---- requests ---- */
  {
    MPI_Request bad = (MPI_Request)12345, reqs[2] = {(MPI_Request)12345, MPI_REQUEST_NULL};
    int flag, idx, outcount, idxs[2];
    MPI_Status sts[2];
    E("Wait request invalid", MPI_Wait(&bad, &st), MPI_ERR_REQUEST);
    E("Wait request pointer NULL", MPI_Wait(NULL, &st), MPI_ERR_ARG);
    E("Test request invalid", MPI_Test(&bad, &flag, &st), MPI_ERR_REQUEST);
    E("Waitall requests NULL", MPI_Waitall(2, NULL, sts), MPI_ERR_ARG);
    E("Waitall count -1", MPI_Waitall(-1, reqs, sts), MPI_ERR_COUNT);
    E("Waitall request invalid", MPI_Waitall(2, reqs, sts), MPI_ERR_REQUEST);
    E("Testall requests NULL", MPI_Testall(2, NULL, &flag, sts), MPI_ERR_ARG);
    E("Waitany requests NULL", MPI_Waitany(2, NULL, &idx, &st), MPI_ERR_ARG);
    E("Waitany request invalid", MPI_Waitany(2, reqs, &idx, &st), MPI_ERR_REQUEST);
    E("Testany requests NULL", MPI_Testany(2, NULL, &idx, &flag, &st), MPI_ERR_ARG);
    E("Waitsome requests NULL", MPI_Waitsome(2, NULL, &outcount, idxs, sts), MPI_ERR_ARG);
    E("Testsome request invalid", MPI_Testsome(2, reqs, &outcount, idxs, sts), MPI_ERR_REQUEST);
    E("Request_free request invalid", MPI_Request_free(&bad), MPI_ERR_REQUEST);
    E("Start request invalid", MPI_Start(&bad), MPI_ERR_REQUEST);
    E("Startall requests NULL", MPI_Startall(2, NULL), MPI_ERR_ARG);
    E("Cancel request invalid", MPI_Cancel(&bad), MPI_ERR_REQUEST);
  }

  /* ---- datatype constructors ---- */
  {
    int blens[2] = {1, 1}, nblens[2] = {1, -1}, idispls[2] = {0, 2}, stypes[2] = {MPI_INT, 12345};
    MPI_Aint adispls[2] = {0, 8};
    MPI_Count cbl[2] = {1, 1};
    E("Type_contiguous count -1", MPI_Type_contiguous(-1, MPI_INT, &t), MPI_ERR_COUNT);
    E("Type_contiguous oldtype invalid", MPI_Type_contiguous(2, 12345, &t), MPI_ERR_TYPE);
    E("Type_contiguous newtype NULL", MPI_Type_contiguous(2, MPI_INT, NULL), MPI_ERR_ARG);
    E("Type_vector count -1", MPI_Type_vector(-1, 1, 2, MPI_INT, &t), MPI_ERR_COUNT);
    E("Type_vector blocklength -1", MPI_Type_vector(2, -1, 2, MPI_INT, &t), MPI_ERR_COUNT);
    E("Type_create_hvector oldtype MPI_DATATYPE_NULL", MPI_Type_create_hvector(2, 1, 8, MPI_DATATYPE_NULL, &t),
      MPI_ERR_TYPE);
    E("Type_indexed blocklengths NULL", MPI_Type_indexed(2, NULL, idispls, MPI_INT, &t), MPI_ERR_ARG);
    E("Type_indexed blocklength[1] -1", MPI_Type_indexed(2, nblens, idispls, MPI_INT, &t), MPI_ERR_COUNT);
    E("Type_indexed displacements NULL", MPI_Type_indexed(2, blens, NULL, MPI_INT, &t), MPI_ERR_ARG);
    E("Type_create_hindexed displacements NULL", MPI_Type_create_hindexed(2, blens, NULL, MPI_INT, &t),
      MPI_ERR_ARG);
    E("Type_create_indexed_block count -2", MPI_Type_create_indexed_block(-2, 1, idispls, MPI_INT, &t),
      MPI_ERR_COUNT);
    E("Type_create_hindexed_block displacements NULL", MPI_Type_create_hindexed_block(2, 1, NULL, MPI_INT, &t),
      MPI_ERR_ARG);
    E("Type_create_struct types NULL", MPI_Type_create_struct(2, blens, adispls, NULL, &t), MPI_ERR_ARG);
    E("Type_create_struct types[1] invalid", MPI_Type_create_struct(2, blens, adispls, stypes, &t), MPI_ERR_TYPE);
    E("Type_create_struct count -1", MPI_Type_create_struct(-1, blens, adispls, types, &t), MPI_ERR_COUNT);
    E("Type_create_resized oldtype invalid", MPI_Type_create_resized(12345, 0, 8, &t), MPI_ERR_TYPE);
    E("Type_dup oldtype invalid", MPI_Type_dup(12345, &t), MPI_ERR_TYPE);
    E("Type_contiguous_c count -1", MPI_Type_contiguous_c(-1, MPI_INT, &t), MPI_ERR_COUNT);
    E("Type_create_hindexed_c blocklengths NULL", MPI_Type_create_hindexed_c(2, NULL, cbl, MPI_INT, &t),
      MPI_ERR_ARG);
    E("Type_create_indexed_block_c blocklength -1", MPI_Type_create_indexed_block_c(2, -1, cbl, MPI_INT, &t),
      MPI_ERR_COUNT);
  }

  /* ---- arrays, packing and process topologies (classes as Open MPI 4.1
   * returns them, except where it accepts what MPI forbids: an edge to a
   * rank outside a graph, a Cartesian shift along a missing dimension) ---- */
  {
    int sz[2] = {4, 4}, sub[2] = {2, 2}, st0[2] = {0, 0}, big[2] = {5, 2}, off[2] = {3, 0}, negs[2] = {-1, 4};
    int dist[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_BLOCK};
    int darg[2] = {MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG}, ps[2] = {2, 1}, ps3[2] = {3, 1};
    int pos = 0, psize, dims[2] = {2, 1}, per[2] = {0, 0}, dneg[2] = {-1, 1}, co[2], r, s1, d1;
    int ix[2] = {1, 2}, ed[2] = {1, 0}, edbad[2] = {1, 9}, peer[1] = {other}, far[1] = {7}, deg[1] = {1};
    MPI_Comm c, cart;
    E("Type_create_subarray ndims -1", MPI_Type_create_subarray(-1, sz, sub, st0, MPI_ORDER_C, MPI_INT, &t),
      MPI_ERR_COUNT);
    E("Type_create_subarray sizes NULL", MPI_Type_create_subarray(2, NULL, sub, st0, MPI_ORDER_C, MPI_INT, &t),
      MPI_ERR_ARG);
    E("Type_create_subarray sizes[0] -1", MPI_Type_create_subarray(2, negs, sub, st0, MPI_ORDER_C, MPI_INT, &t),
      MPI_ERR_ARG);
    E("Type_create_subarray subsizes > sizes", MPI_Type_create_subarray(2, sz, big, st0, MPI_ORDER_C, MPI_INT, &t),
      MPI_ERR_ARG);
    E("Type_create_subarray past the end", MPI_Type_create_subarray(2, sz, sub, off, MPI_ORDER_C, MPI_INT, &t),
      MPI_ERR_ARG);
    E("Type_create_subarray order invalid", MPI_Type_create_subarray(2, sz, sub, st0, 77, MPI_INT, &t), MPI_ERR_ARG);
    E("Type_create_subarray oldtype invalid", MPI_Type_create_subarray(2, sz, sub, st0, MPI_ORDER_C, 12345, &t),
      MPI_ERR_TYPE);
    E("Type_create_darray rank 5", MPI_Type_create_darray(2, 5, 2, sz, dist, darg, ps, MPI_ORDER_C, MPI_INT, &t),
      MPI_ERR_ARG);
    E("Type_create_darray psizes do not make size",
      MPI_Type_create_darray(2, 0, 2, sz, dist, darg, ps3, MPI_ORDER_C, MPI_INT, &t), MPI_ERR_ARG);
    E("Type_create_darray gsizes NULL",
      MPI_Type_create_darray(2, 0, 2, NULL, dist, darg, ps, MPI_ORDER_C, MPI_INT, &t), MPI_ERR_ARG);
    E("Pack incount -1", MPI_Pack(buf, -1, MPI_INT, out, 1024, &pos, W), MPI_ERR_COUNT);
    E("Pack datatype invalid", MPI_Pack(buf, 4, 12345, out, 1024, &pos, W), MPI_ERR_TYPE);
    E("Pack comm MPI_COMM_NULL", MPI_Pack(buf, 4, MPI_INT, out, 1024, &pos, MPI_COMM_NULL), MPI_ERR_COMM);
    E("Pack position NULL", MPI_Pack(buf, 4, MPI_INT, out, 1024, NULL, W), MPI_ERR_ARG);
    E("Pack inbuf NULL", MPI_Pack(NULL, 4, MPI_INT, out, 1024, &pos, W), MPI_ERR_BUFFER);
    E("Pack outbuf NULL", MPI_Pack(buf, 4, MPI_INT, NULL, 1024, &pos, W), MPI_ERR_ARG);
    E("Pack outsize too small", MPI_Pack(buf, 4, MPI_INT, out, 8, &pos, W), MPI_ERR_TRUNCATE);
    pos = 0;
    E("Unpack outcount -1", MPI_Unpack(out, 1024, &pos, buf, -1, MPI_INT, W), MPI_ERR_COUNT);
    E("Unpack position NULL", MPI_Unpack(out, 1024, NULL, buf, 4, MPI_INT, W), MPI_ERR_ARG);
    E("Unpack outbuf NULL", MPI_Unpack(out, 1024, &pos, NULL, 4, MPI_INT, W), MPI_ERR_BUFFER);
    E("Unpack insize too small", MPI_Unpack(out, 8, &pos, buf, 4, MPI_INT, W), MPI_ERR_TRUNCATE);
    E("Pack_size datatype invalid", MPI_Pack_size(4, 12345, W, &psize), MPI_ERR_TYPE);
    E("Pack_size size NULL", MPI_Pack_size(4, MPI_INT, W, NULL), MPI_ERR_ARG);
    E("Cart_create dims NULL", MPI_Cart_create(W, 2, NULL, per, 0, &c), MPI_ERR_ARG);
    E("Cart_create dims[0] -1", MPI_Cart_create(W, 2, dneg, per, 0, &c), MPI_ERR_DIMS);
    E("Cart_create comm_cart NULL", MPI_Cart_create(W, 2, dims, per, 0, NULL), MPI_ERR_ARG);
    E("Graph_create nnodes 5", MPI_Graph_create(W, 5, ix, ed, 0, &c), MPI_ERR_ARG);
    E("Graph_create edge 9", MPI_Graph_create(W, 2, ix, edbad, 0, &c), MPI_ERR_ARG);
    E("Graph_create index NULL", MPI_Graph_create(W, 2, NULL, ed, 0, &c), MPI_ERR_ARG);
    E("Dist_graph_create_adjacent sources NULL",
      MPI_Dist_graph_create_adjacent(W, 1, NULL, MPI_UNWEIGHTED, 1, peer, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &c),
      MPI_ERR_ARG);
    E("Dist_graph_create_adjacent source 7",
      MPI_Dist_graph_create_adjacent(W, 1, far, MPI_UNWEIGHTED, 1, peer, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &c),
      MPI_ERR_RANK);
    E("Dist_graph_create degrees NULL",
      MPI_Dist_graph_create(W, 1, &rank, NULL, peer, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &c), MPI_ERR_ARG);
    E("Dist_graph_create destinations NULL",
      MPI_Dist_graph_create(W, 1, &rank, deg, NULL, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &c), MPI_ERR_ARG);
    MPI_Cart_create(W, 2, dims, per, 0, &cart);
    MPI_Comm_set_errhandler(cart, MPI_ERRORS_RETURN);
    E("Cart_coords rank 7", MPI_Cart_coords(cart, 7, 2, co), MPI_ERR_RANK);
    E("Cart_coords coords NULL", MPI_Cart_coords(cart, 0, 2, NULL), MPI_ERR_ARG);
    E("Cart_coords comm not Cartesian", MPI_Cart_coords(W, 0, 2, co), MPI_ERR_TOPOLOGY);
    E("Cart_rank coords NULL", MPI_Cart_rank(cart, NULL, &r), MPI_ERR_ARG);
    E("Cart_shift direction 5", MPI_Cart_shift(cart, 5, 1, &s1, &d1), MPI_ERR_DIMS);
    E("Cart_sub remain_dims NULL", MPI_Cart_sub(cart, NULL, &c), MPI_ERR_ARG);
    E("Cart_get maxdims -1", MPI_Cart_get(cart, -1, co, per, co), MPI_ERR_ARG);
    E("Cart_get dims NULL", MPI_Cart_get(cart, 2, NULL, per, co), MPI_ERR_ARG);
    E("Dims_create dims NULL", MPI_Dims_create(4, 2, NULL), MPI_ERR_ARG);
    E("Graph_neighbors_count comm not a graph", MPI_Graph_neighbors_count(W, 0, &r), MPI_ERR_TOPOLOGY);
    MPI_Comm_free(&cart);
  }

  /* ---- valid corner cases: all MPI_SUCCESS ---- */
  {
    int v[8] = {1, 2, 3, 4, 5, 6, 7, 8}, r8[16] = {0};
    OK("Allreduce sendbuf MPI_IN_PLACE", MPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_INT, MPI_SUM, W));
    OK("Reduce sendbuf MPI_IN_PLACE at root",
       MPI_Reduce(rank == 0 ? MPI_IN_PLACE : v, rank == 0 ? v : NULL, 2, MPI_INT, MPI_SUM, 0, W));
    OK("Gather recvbuf NULL on non-root", MPI_Gather(v, 2, MPI_INT, rank == 0 ? r8 : NULL, 2, MPI_INT, 0, W));
    OK("Gather sendbuf MPI_IN_PLACE at root",
       MPI_Gather(rank == 0 ? MPI_IN_PLACE : v, 2, MPI_INT, rank == 0 ? r8 : NULL, 2, MPI_INT, 0, W));
    OK("Gatherv recvcounts NULL on non-root",
       MPI_Gatherv(v, 1, MPI_INT, r8, rank == 0 ? counts : NULL, rank == 0 ? displs : NULL, MPI_INT, 0, W));
    OK("Scatter sendbuf NULL on non-root", MPI_Scatter(rank == 0 ? v : NULL, 2, MPI_INT, r8, 2, MPI_INT, 0, W));
    OK("Scatter recvbuf MPI_IN_PLACE at root",
       MPI_Scatter(v, 2, MPI_INT, rank == 0 ? MPI_IN_PLACE : r8, 2, MPI_INT, 0, W));
    OK("Scatterv sendcounts NULL on non-root",
       MPI_Scatterv(v, rank == 0 ? counts : NULL, rank == 0 ? displs : NULL, MPI_INT, r8, 1, MPI_INT, 0, W));
    OK("Allgather sendbuf MPI_IN_PLACE", MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, r8, 2, MPI_INT, W));
    OK("Alltoall sendbuf MPI_IN_PLACE", MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, r8, 1, MPI_INT, W));
    OK("Bcast buffer NULL count 0", MPI_Bcast(NULL, 0, MPI_INT, 0, W));
    OK("Allreduce buffers NULL count 0", MPI_Allreduce(NULL, NULL, 0, MPI_INT, MPI_SUM, W));
    {
      int zero[2] = {0, 0};
      OK("Alltoallv counts 0 buffers NULL",
         MPI_Alltoallv(NULL, zero, displs, MPI_INT, NULL, zero, displs, MPI_INT, W));
    }
    OK("Reduce_local buffers NULL count 0", MPI_Reduce_local(NULL, NULL, 0, MPI_INT, MPI_SUM));
    OK("Send buf NULL count 0", MPI_Send(NULL, 0, MPI_INT, other, 5, W));
    OK("Recv buf NULL count 0", MPI_Recv(NULL, 0, MPI_INT, other, 5, W, &st));
    OK("Send dest MPI_PROC_NULL", MPI_Send(v, 2, MPI_INT, MPI_PROC_NULL, 0, W));
    OK("Recv source MPI_PROC_NULL", MPI_Recv(r8, 2, MPI_INT, MPI_PROC_NULL, 0, W, &st));
    OK("Sendrecv peers MPI_PROC_NULL",
       MPI_Sendrecv(v, 1, MPI_INT, MPI_PROC_NULL, 0, r8, 1, MPI_INT, MPI_PROC_NULL, 0, W, &st));
    if (rank == 1) MPI_Send(v, 1, MPI_INT, 0, 17, W);
    OK("Recv MPI_ANY_SOURCE MPI_ANY_TAG",
       rank == 0 ? MPI_Recv(r8, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, W, &st) : MPI_SUCCESS);
    {
      /* MPI_BOTTOM with a datatype of absolute addresses */
      MPI_Aint addr;
      int one = 1;
      MPI_Datatype abs_t;
      MPI_Get_address(&v[2], &addr);
      MPI_Type_create_struct(1, &one, &addr, (MPI_Datatype[]){MPI_INT}, &abs_t);
      MPI_Type_commit(&abs_t);
      OK("Bcast MPI_BOTTOM absolute datatype", MPI_Bcast(MPI_BOTTOM, 1, abs_t, 0, W));
      OK("Allreduce MPI_BOTTOM absolute datatype", MPI_Allreduce(MPI_IN_PLACE, MPI_BOTTOM, 1, abs_t, MPI_SUM, W));
      OK("Sendrecv MPI_BOTTOM absolute datatype",
         MPI_Sendrecv(MPI_BOTTOM, 1, abs_t, other, 9, r8, 1, MPI_INT, other, 9, W, &st));
      MPI_Type_free(&abs_t);
    }
    OK("inter Bcast MPI_ROOT", MPI_Bcast(v, 2, MPI_INT, rank == 0 ? MPI_ROOT : 0, inter));
    OK("Type_contiguous count 0", MPI_Type_contiguous(0, MPI_INT, &t));
    MPI_Type_free(&t);
  }

  MPI_Type_free(&uncommitted);
  MPI_Comm_free(&inter);
  MPI_Comm_free(&ring);
  if (rank == 0) printf("checked %d cases, %d unexpected\n", checked, unexpected);
  MPI_Finalize();
  return 0;
}
