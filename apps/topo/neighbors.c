/* neighbors: neighbourhood collectives on Cartesian, graph and distributed
 * graph topologies.
 *
 * Usage: smpirun ... neighbors [bytes]   (default 1024)
 *
 * 1. Timed first thing after MPI_Init (so every rank starts at the same
 *    simulated time): MPI_Neighbor_alltoall of <bytes> per neighbour (MPI_BYTE)
 *    on a periodic 1-D Cartesian ring of all ranks. Prints
 *    "time rank=<r> t=<seconds>" (use --cfg=smpi/wtime:0) and checks the data.
 * 2. Checks data: MPI_Ineighbor_alltoall on a periodic 2-D grid from
 *    MPI_Dims_create (size-1 and size-2 periodic dimensions send twice to the
 *    same neighbour: the slots must not be swapped); MPI_Neighbor_allgather on
 *    a directed ring (MPI_Dist_graph_create_adjacent); MPI_Neighbor_alltoallv
 *    on the undirected ring as MPI_Graph_create; MPI_Ineighbor_alltoallw and
 *    MPI_Neighbor_allgatherv on a distributed graph built by rank 0 alone
 *    (MPI_Dist_graph_create).
 * Ends with OK (exit 0) or FAIL (exit 1).
 */
#include <mpi.h>
#include <smpi/smpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int errors = 0;

#define CHECK(cond, ...)                                                                                              \
  do {                                                                                                                \
    if (!(cond)) {                                                                                                    \
      if (errors++ < 10) {                                                                                            \
        fprintf(stderr, "rank %d: ", rank);                                                                           \
        fprintf(stderr, __VA_ARGS__);                                                                                 \
        fprintf(stderr, "\n");                                                                                        \
      }                                                                                                               \
    }                                                                                                                 \
  } while (0)

/* A byte that tells sender, neighbour slot and position apart. */
static unsigned char pattern(int sender, int slot, long i) { return (unsigned char)(sender * 31 + slot * 7 + i); }

static void timed_ring(int rank, int size, long bytes)
{
  MPI_Comm ring;
  int periods[1] = {1};
  MPI_Cart_create(MPI_COMM_WORLD, 1, &size, periods, 0, &ring);
  unsigned char *s = malloc(2 * bytes + 1), *r = malloc(2 * bytes + 1);
  for (int slot = 0; slot < 2; slot++)
    for (long i = 0; i < bytes; i++) s[slot * bytes + i] = pattern(rank, slot, i);
  /* Ranks leave MPI_Cart_create at different dates (the new communicator's id
   * broadcast, as in SMPI): start the timed exchange at one common date. */
  double at = MPI_Wtime();
  MPI_Allreduce(MPI_IN_PLACE, &at, 1, MPI_DOUBLE, MPI_MAX, ring);
  at += 1e-3;
  double now = MPI_Wtime();
  if (now < at) smpi_sleep_seconds(at - now);
  double t0 = MPI_Wtime();
  MPI_Neighbor_alltoall(s, (int)bytes, MPI_BYTE, r, (int)bytes, MPI_BYTE, ring);
  double t1 = MPI_Wtime();
  printf("time rank=%d t=%.12e\n", rank, t1 - t0);
  /* slot 0 holds what the left neighbour sent to its right (its slot 1), and conversely */
  int left = (rank - 1 + size) % size, right = (rank + 1) % size;
  for (long i = 0; i < bytes; i++) {
    CHECK(r[i] == pattern(left, 1, i), "ring: slot 0 byte %ld", i);
    CHECK(r[bytes + i] == pattern(right, 0, i), "ring: slot 1 byte %ld", i);
  }
  free(s);
  free(r);
  MPI_Comm_free(&ring);
}

static void grid(int rank, int size)
{
  int dims[2] = {0, 0}, periods[2] = {1, 1}, coords[2], topo;
  MPI_Comm cart;
  MPI_Dims_create(size, 2, dims);
  MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
  MPI_Topo_test(cart, &topo);
  CHECK(topo == MPI_CART, "grid: topology %d", topo);
  MPI_Cart_coords(cart, rank, 2, coords);
  int s[4], r[4], nb[4];
  for (int k = 0; k < 4; k++) s[k] = rank * 10 + k;
  for (int d = 0; d < 2; d++) MPI_Cart_shift(cart, d, 1, &nb[2 * d], &nb[2 * d + 1]);
  MPI_Request req;
  MPI_Ineighbor_alltoall(s, 1, MPI_INT, r, 1, MPI_INT, cart, &req);
  MPI_Wait(&req, MPI_STATUS_IGNORE);
  for (int k = 0; k < 4; k++)
    CHECK(r[k] == nb[k] * 10 + (k ^ 1), "grid %dx%d: slot %d got %d, expected %d", dims[0], dims[1], k, r[k],
          nb[k] * 10 + (k ^ 1));
  MPI_Comm_free(&cart);
}

static void directed_ring(int rank, int size)
{
  int src = (rank - 1 + size) % size, dst = (rank + 1) % size, in, out, weighted;
  MPI_Comm g;
  MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &src, MPI_UNWEIGHTED, 1, &dst, MPI_UNWEIGHTED, MPI_INFO_NULL, 0,
                                 &g);
  MPI_Dist_graph_neighbors_count(g, &in, &out, &weighted);
  CHECK(in == 1 && out == 1 && !weighted, "directed ring: degrees %d %d weighted %d", in, out, weighted);
  double x = rank + 0.5, y = -1;
  MPI_Neighbor_allgather(&x, 1, MPI_DOUBLE, &y, 1, MPI_DOUBLE, g);
  CHECK(y == src + 0.5, "directed ring: got %g from %d", y, src);
  MPI_Comm_free(&g);
}

static void graph_ring(int rank, int size)
{
  /* node i: neighbours i-1, i+1 (a multigraph for 1 or 2 nodes) */
  int *index = malloc(size * sizeof(int)), *edges = malloc(2 * size * sizeof(int));
  for (int i = 0; i < size; i++) {
    index[i] = 2 * (i + 1);
    edges[2 * i] = (i - 1 + size) % size;
    edges[2 * i + 1] = (i + 1) % size;
  }
  MPI_Comm g;
  MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 0, &g);
  int n, nb[2];
  MPI_Graph_neighbors_count(g, rank, &n);
  MPI_Graph_neighbors(g, rank, 2, nb);
  CHECK(n == 2 && nb[0] == edges[2 * rank] && nb[1] == edges[2 * rank + 1], "graph: neighbours");
  /* 1 int to the left, 2 to the right, received into reversed slots (with 1 or 2
   * nodes both neighbours are the same rank and the two messages differ in size) */
  if (size > 2) {
    int s[3] = {rank, rank + 100, rank + 200}, r[3] = {-1, -1, -1};
    int scounts[2] = {1, 2}, sdispls[2] = {0, 1}, rcounts[2] = {2, 1}, rdispls[2] = {1, 0};
    MPI_Neighbor_alltoallv(s, scounts, sdispls, MPI_INT, r, rcounts, rdispls, MPI_INT, g);
    /* from the left (slot 0, at r+1): its 2 ints sent right; from the right (slot 1, at r+0): its 1 int */
    int left = nb[0], right = nb[1];
    CHECK(r[1] == left + 100 && r[2] == left + 200 && r[0] == right, "graph alltoallv: %d %d %d", r[0], r[1], r[2]);
  }
  free(index);
  free(edges);
  MPI_Comm_free(&g);
}

static void rank0_graph(int rank, int size)
{
  /* rank 0 gives every edge i -> (i + 1) % size and i -> (i + 2) % size, weight = i */
  int n = rank == 0 ? size : 0;
  int *sources = malloc(size * sizeof(int)), *degrees = malloc(size * sizeof(int));
  int *dests = malloc(2 * size * sizeof(int)), *weights = malloc(2 * size * sizeof(int));
  for (int i = 0; i < size; i++) {
    sources[i] = i;
    degrees[i] = 2;
    dests[2 * i] = (i + 1) % size;
    dests[2 * i + 1] = (i + 2) % size;
    weights[2 * i] = weights[2 * i + 1] = i;
  }
  MPI_Comm g;
  MPI_Dist_graph_create(MPI_COMM_WORLD, n, sources, degrees, dests, weights, MPI_INFO_NULL, 0, &g);
  int in, out, weighted, topo;
  MPI_Topo_test(g, &topo);
  MPI_Dist_graph_neighbors_count(g, &in, &out, &weighted);
  CHECK(topo == MPI_DIST_GRAPH && in == 2 && out == 2, "rank-0 graph: topology %d degrees %d %d", topo, in, out);
  int srcs[2], sw[2], dsts[2], dw[2];
  MPI_Dist_graph_neighbors(g, 2, srcs, sw, 2, dsts, dw);
  for (int k = 0; k < 2; k++) CHECK(sw[k] == srcs[k] && dw[k] == rank, "rank-0 graph: weights");
  /* alltoallw: an int to the first destination, a double to the second */
  int si = rank;
  struct {
    int i;
    double d;
  } sb, rb[2];
  sb.i = si;
  sb.d = rank + 0.25;
  int scounts[2] = {1, 1}, rcounts[2] = {1, 1};
  MPI_Aint sdispls[2] = {0, (char *)&sb.d - (char *)&sb};
  MPI_Datatype stypes[2] = {MPI_INT, MPI_DOUBLE}, rtypes[2];
  MPI_Aint rdispls[2];
  /* source k sends me an int if I am its first destination (source + 1), else a double */
  for (int k = 0; k < 2; k++) {
    int first = (srcs[k] + 1) % size == rank;
    rtypes[k] = first ? MPI_INT : MPI_DOUBLE;
    rdispls[k] = (char *)(first ? (void *)&rb[k].i : (void *)&rb[k].d) - (char *)rb;
  }
  if (size > 2) {
    MPI_Request req;
    MPI_Ineighbor_alltoallw(&sb, scounts, sdispls, stypes, rb, rcounts, rdispls, rtypes, g, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    for (int k = 0; k < 2; k++) {
      if (rtypes[k] == MPI_INT)
        CHECK(rb[k].i == srcs[k], "alltoallw: int from %d is %d", srcs[k], rb[k].i);
      else
        CHECK(rb[k].d == srcs[k] + 0.25, "alltoallw: double from %d is %g", srcs[k], rb[k].d);
    }
    /* allgatherv: one int from each source, stored in reverse order */
    int r[2] = {-1, -1}, counts[2] = {1, 1}, displs[2] = {1, 0};
    MPI_Neighbor_allgatherv(&si, 1, MPI_INT, r, counts, displs, MPI_INT, g);
    CHECK(r[1] == srcs[0] && r[0] == srcs[1], "allgatherv: %d %d", r[0], r[1]);
  }
  free(sources);
  free(degrees);
  free(dests);
  free(weights);
  MPI_Comm_free(&g);
}

int main(int argc, char **argv)
{
  int rank, size;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  long bytes = argc > 1 ? atol(argv[1]) : 1024;
  timed_ring(rank, size, bytes);
  grid(rank, size);
  directed_ring(rank, size);
  graph_ring(rank, size);
  rank0_graph(rank, size);
  int total = 0;
  MPI_Allreduce(&errors, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf(total ? "FAIL\n" : "OK\n");
  MPI_Finalize();
  return total ? 1 : 0;
}
