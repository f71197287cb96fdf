/* stencil: 2-D Jacobi iterations with halo exchange on a px x py process grid.
 *
 * demonstrates: non-blocking point-to-point (MPI_Isend/MPI_Irecv/MPI_Waitall),
 * a derived datatype (MPI_Type_vector for columns), MPI_Allreduce, MPI_Reduce.
 *
 * Usage: stencil [-n local_nx] [-m local_ny] [-i iterations]
 *   default: 32 x 32 points per rank, 10 iterations.
 *
 * The process grid is computed by hand (no MPI_Cart_*): px is the largest
 * divisor of np not above sqrt(np), py = np / px; rank r sits at column
 * r % px, row r / px. Each rank owns nx x ny points of the global
 * (px*nx) x (py*ny) grid, plus one ghost layer. Points outside the global grid
 * are 0 (fixed boundary). The initial value of global point (x, y) is
 * ((31x + 17y) mod 101) / 100. One iteration exchanges the four halos (rows
 * are contiguous, columns are an MPI_Type_vector) and then sets every point to
 * the mean of its four neighbours.
 *
 * Checks: the sum of all points and a position-weighted sum (catches halos
 * that land in the wrong place) are combined with MPI_Allreduce; rank 0
 * compares them with a sequential run of the same iterations on the whole
 * grid (relative error <= 1e-10). Rank 0 prints
 *   stencil np=<n> procs=<px>x<py> grid=<X>x<Y> iters=<i> time=<s> checksum=<sum> weighted=<wsum>
 * (time = max over ranks of the iteration loop), then OK (exit 0) or FAIL (exit 1). */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double initial(long x, long y) { return (double)((31 * x + 17 * y) % 101) / 100.0; }

/* Sum and weighted sum of the nx x ny interior of a (nx+2) x (ny+2) array
 * whose first interior point is global (x0, y0). */
static void sums(const double *u, int nx, int ny, long x0, long y0, double *sum, double *wsum)
{
  double s = 0, w = 0;
  for (int j = 1; j <= ny; j++)
    for (int i = 1; i <= nx; i++) {
      double v = u[(long)j * (nx + 2) + i];
      s += v;
      w += v * (double)((x0 + i - 1) % 7 + 1) * (double)((y0 + j - 1) % 5 + 1);
    }
  *sum = s;
  *wsum = w;
}

static void jacobi(const double *u, double *v, int nx, int ny)
{
  for (int j = 1; j <= ny; j++)
    for (int i = 1; i <= nx; i++) {
      long k = (long)j * (nx + 2) + i;
      v[k] = 0.25 * (u[k - 1] + u[k + 1] + u[k - (nx + 2)] + u[k + (nx + 2)]);
    }
}

static double *grid_new(int nx, int ny, long x0, long y0)
{
  double *u = calloc((size_t)(nx + 2) * (ny + 2), sizeof(double));
  for (int j = 1; j <= ny; j++)
    for (int i = 1; i <= nx; i++) u[(long)j * (nx + 2) + i] = initial(x0 + i - 1, y0 + j - 1);
  return u;
}

int main(int argc, char **argv)
{
  int rank, np, nx = 32, ny = 32, iters = 10;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  for (int a = 1; a + 1 < argc; a += 2) {
    if (strcmp(argv[a], "-n") == 0) nx = atoi(argv[a + 1]);
    else if (strcmp(argv[a], "-m") == 0) ny = atoi(argv[a + 1]);
    else if (strcmp(argv[a], "-i") == 0) iters = atoi(argv[a + 1]);
  }
  if (nx < 1 || ny < 1 || iters < 0) {
    if (rank == 0) fprintf(stderr, "stencil: bad arguments\n");
    MPI_Finalize();
    return 2;
  }

  int px = 1;
  for (int d = 1; (long)d * d <= np; d++)
    if (np % d == 0) px = d;
  int py = np / px;
  int cx = rank % px, cy = rank / px;
  int west = cx > 0 ? rank - 1 : -1, east = cx < px - 1 ? rank + 1 : -1;
  int north = cy > 0 ? rank - px : -1, south = cy < py - 1 ? rank + px : -1;
  long x0 = (long)cx * nx, y0 = (long)cy * ny;
  long gx = (long)px * nx, gy = (long)py * ny;
  int w = nx + 2; /* row length */

  double *u = grid_new(nx, ny, x0, y0);
  double *v = calloc((size_t)(nx + 2) * (ny + 2), sizeof(double));
  MPI_Datatype column;
  MPI_Type_vector(ny, 1, w, MPI_DOUBLE, &column);
  MPI_Type_commit(&column);

  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  for (int it = 0; it < iters; it++) {
    MPI_Request req[8];
    int n = 0;
    /* receives into the ghost layer; tags say which side the data comes from */
    if (north >= 0) MPI_Irecv(&u[1], nx, MPI_DOUBLE, north, 0, MPI_COMM_WORLD, &req[n++]);
    if (south >= 0) MPI_Irecv(&u[(long)(ny + 1) * w + 1], nx, MPI_DOUBLE, south, 1, MPI_COMM_WORLD, &req[n++]);
    if (west >= 0) MPI_Irecv(&u[w], 1, column, west, 2, MPI_COMM_WORLD, &req[n++]);
    if (east >= 0) MPI_Irecv(&u[w + nx + 1], 1, column, east, 3, MPI_COMM_WORLD, &req[n++]);
    /* sends of the first/last interior row and column */
    if (south >= 0) MPI_Isend(&u[(long)ny * w + 1], nx, MPI_DOUBLE, south, 0, MPI_COMM_WORLD, &req[n++]);
    if (north >= 0) MPI_Isend(&u[w + 1], nx, MPI_DOUBLE, north, 1, MPI_COMM_WORLD, &req[n++]);
    if (east >= 0) MPI_Isend(&u[w + nx], 1, column, east, 2, MPI_COMM_WORLD, &req[n++]);
    if (west >= 0) MPI_Isend(&u[w + 1], 1, column, west, 3, MPI_COMM_WORLD, &req[n++]);
    MPI_Waitall(n, req, MPI_STATUSES_IGNORE);
    jacobi(u, v, nx, ny);
    double *t = u;
    u = v;
    v = t;
  }
  double dt = MPI_Wtime() - t0, dtmax = 0;
  MPI_Reduce(&dt, &dtmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);

  double local[2], global[2];
  sums(u, nx, ny, x0, y0, &local[0], &local[1]);
  MPI_Allreduce(local, global, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  MPI_Type_free(&column);

  int ok = 1;
  if (rank == 0) {
    /* the same iterations, sequentially, on the whole grid */
    double *su = grid_new((int)gx, (int)gy, 0, 0);
    double *sv = calloc((size_t)(gx + 2) * (gy + 2), sizeof(double));
    for (int it = 0; it < iters; it++) {
      jacobi(su, sv, (int)gx, (int)gy);
      double *t = su;
      su = sv;
      sv = t;
    }
    double ref[2];
    sums(su, (int)gx, (int)gy, 0, 0, &ref[0], &ref[1]);
    for (int k = 0; k < 2; k++)
      if (fabs(global[k] - ref[k]) > 1e-10 * fmax(1.0, fabs(ref[k]))) {
        fprintf(stderr, "stencil: %s is %.15e, sequential run gives %.15e\n", k ? "weighted sum" : "sum", global[k],
                ref[k]);
        ok = 0;
      }
    free(su);
    free(sv);
    printf("stencil np=%d procs=%dx%d grid=%ldx%ld iters=%d time=%.9e checksum=%.12e weighted=%.12e\n", np, px, py,
           gx, gy, iters, dtmax, global[0], global[1]);
    printf(ok ? "OK\n" : "FAIL\n");
  }
  MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
  free(u);
  free(v);
  MPI_Finalize();
  return ok ? 0 : 1;
}
