/* MPI-IO round trips: every access form writes data, reads it back and checks it, and each rank
 * prints the simulated date after each phase ("<phase> <rank> <date>"), so that the dates can be
 * compared with another simulator's. Usage: io [file [smpi]] (default io_test.dat, deleted at the end);
 * with `smpi`, only the forms SMPI 3.32 implements run (no non-blocking or split collective) and the
 * data is not checked (SMPI's MPI-IO moves no data: it only times the accesses). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 1000

static int errors = 0;
static int rank, size;
static int timing_only = 0;

static void check(int cond, const char *what, int i, int got, int want)
{
  if (!cond && !timing_only) {
    if (errors < 10)
      fprintf(stderr, "rank %d: %s: element %d is %d, expected %d\n", rank, what, i, got, want);
    errors++;
  }
}

static void stamp(const char *phase)
{
  printf("%s %d %.9f\n", phase, rank, MPI_Wtime());
}

int main(int argc, char *argv[])
{
  const char *path = argc > 1 ? argv[1] : "io_test.dat";
  MPI_File fh;
  MPI_Status st;
  int count, i;
  int *buf = malloc(sizeof(int) * N * 4);
  int *in = malloc(sizeof(int) * N * 64);

  MPI_Init(&argc, &argv);
  timing_only = argc > 2 && strcmp(argv[2], "smpi") == 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
  stamp("open");

  /* Explicit offsets: each rank its own block. */
  for (i = 0; i < N; i++)
    buf[i] = rank * N + i;
  MPI_File_write_at(fh, (MPI_Offset)rank * N * sizeof(int), buf, N, MPI_INT, &st);
  MPI_Get_count(&st, MPI_INT, &count);
  check(count == N, "write_at count", 0, count, N);
  stamp("write_at");
  MPI_File_read_at(fh, (MPI_Offset)rank * N * sizeof(int), in, N, MPI_INT, &st);
  MPI_Get_count(&st, MPI_INT, &count);
  check(count == N, "read_at count", 0, count, N);
  for (i = 0; i < N; i++)
    check(in[i] == rank * N + i, "read_at", i, in[i], rank * N + i);
  stamp("read_at");

  /* Individual pointers, collective, contiguous blocks. */
  MPI_File_seek(fh, (MPI_Offset)rank * N * sizeof(int), MPI_SEEK_SET);
  for (i = 0; i < N; i++)
    buf[i] = -(rank * N + i);
  MPI_File_write_all(fh, buf, N, MPI_INT, &st);
  stamp("write_all");
  MPI_File_seek(fh, (MPI_Offset)rank * N * sizeof(int), MPI_SEEK_SET);
  MPI_File_read_all(fh, in, N, MPI_INT, &st);
  for (i = 0; i < N; i++)
    check(in[i] == -(rank * N + i), "read_all", i, in[i], -(rank * N + i));
  stamp("read_all");

  /* Interleaved ranges (SMPI's two-phase path): rank r starts at int r*N/2, N ints each. */
  MPI_File_seek(fh, (MPI_Offset)rank * (N / 2) * sizeof(int), MPI_SEEK_SET);
  MPI_File_read_all(fh, in, N, MPI_INT, &st);
  stamp("read_all_interleaved");

  /* Shared pointer: every rank appends N ints; then rank 0 reads them all back. */
  MPI_File_seek_shared(fh, 0, MPI_SEEK_SET);
  for (i = 0; i < N; i++)
    buf[i] = 1000000 + rank;
  MPI_File_write_shared(fh, buf, N, MPI_INT, &st);
  stamp("write_shared");
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    int seen[64] = {0};
    MPI_File_read_at(fh, 0, in, N * size, MPI_INT, &st);
    for (i = 0; i < N * size; i++) {
      int r = in[i] - 1000000;
      check(r >= 0 && r < size && in[i - i % N] == in[i], "write_shared block", i, in[i], in[i - i % N]);
      if (i % N == 0 && r >= 0 && r < size)
        seen[r]++;
    }
    for (i = 0; i < size; i++)
      check(seen[i] == 1, "write_shared blocks per rank", i, seen[i], 1);
  }
  stamp("read_shared_check");

  /* Ordered: rank order from the shared pointer (back at 0). */
  MPI_File_seek_shared(fh, 0, MPI_SEEK_SET);
  for (i = 0; i < N; i++)
    buf[i] = 2000000 + rank * N + i;
  MPI_File_write_ordered(fh, buf, N, MPI_INT, &st);
  stamp("write_ordered");
  MPI_File_seek_shared(fh, 0, MPI_SEEK_SET);
  MPI_File_read_ordered(fh, in, N, MPI_INT, &st);
  for (i = 0; i < N; i++)
    check(in[i] == 2000000 + rank * N + i, "read_ordered", i, in[i], 2000000 + rank * N + i);
  stamp("read_ordered");

  /* Non-blocking. */
  if (!timing_only) {
    MPI_Request req;
    for (i = 0; i < N; i++)
      buf[i] = 3000000 + rank * N + i;
    MPI_File_iwrite_at(fh, (MPI_Offset)rank * N * sizeof(int), buf, N, MPI_INT, &req);
    MPI_Wait(&req, &st);
    MPI_File_iread_at(fh, (MPI_Offset)rank * N * sizeof(int), in, N, MPI_INT, &req);
    MPI_Wait(&req, &st);
    MPI_Get_count(&st, MPI_INT, &count);
    check(count == N, "iread_at count", 0, count, N);
    for (i = 0; i < N; i++)
      check(in[i] == 3000000 + rank * N + i, "iread_at", i, in[i], 3000000 + rank * N + i);
  }
  stamp("nonblocking");

  /* Noncontiguous view: ints of all ranks interleaved (rank r owns every size-th int from r). */
  {
    MPI_Datatype filetype;
    MPI_Offset disp;
    MPI_Datatype et, ft;
    char rep[MPI_MAX_DATAREP_STRING];
    MPI_Type_vector(1, 1, size, MPI_INT, &filetype);
    MPI_Type_create_resized(filetype, 0, (MPI_Aint)size * sizeof(int), &ft);
    MPI_Type_commit(&ft);
    MPI_File_set_view(fh, (MPI_Offset)rank * sizeof(int), MPI_INT, ft, "native", MPI_INFO_NULL);
    for (i = 0; i < N; i++)
      buf[i] = 4000000 + rank * N + i;
    MPI_File_write_all(fh, buf, N, MPI_INT, &st);
    MPI_File_get_view(fh, &disp, &et, &ft, rep);
    check(disp == (MPI_Offset)rank * sizeof(int), "get_view disp", 0, (int)disp, rank * (int)sizeof(int));
    stamp("view_write_all");
    MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_read_at(fh, 0, in, N * size, MPI_INT, &st);
    for (i = 0; i < N * size; i++) {
      int r = i % size, k = i / size;
      check(in[i] == 4000000 + r * N + k, "view layout", i, in[i], 4000000 + r * N + k);
    }
    MPI_Type_free(&filetype);
    MPI_Type_free(&ft);
    stamp("view_check");
  }

  /* Split collective. */
  if (!timing_only) {
    MPI_File_read_at_all_begin(fh, (MPI_Offset)rank * sizeof(int), in, 1, MPI_INT);
    MPI_File_read_at_all_end(fh, in, &st);
    check(in[0] == 4000000 + rank * N, "read_at_all_begin/end", 0, in[0], 4000000 + rank * N);
    stamp("split");
  }

  MPI_File_close(&fh);
  stamp("close");
  if (rank == 0)
    MPI_File_delete(path, MPI_INFO_NULL);
  MPI_Barrier(MPI_COMM_WORLD);
  stamp("delete");
  if (errors)
    fprintf(stderr, "rank %d: %d errors\n", rank, errors);
  else if (rank == 0)
    printf("io: all checks passed\n");
  free(buf);
  free(in);
  MPI_Finalize();
  return errors != 0;
}
