/* Copy-on-write folding (--cfg=smpi/auto-shared-malloc-cow-thresh): buffers
 * between that size and the auto-fold threshold start folded; the pages a rank
 * writes become private and keep their contents. Checks that
 *  - written values read back, in several pages of one buffer;
 *  - a strided (vector) message from private pages of one rank's buffer
 *    arrives in its neighbour's buffer, which it never wrote; a never-written
 *    buffer sends zeros (strided and contiguous);
 *  - freed buffers are folded again before they are recycled (the test
 *    checks the peak PSS), and read as zeros again (calloc).
 * Prints "fold_cow: ... OK" on success. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PAGE 4096
#define MIB (1 << 20)

int main(int argc, char **argv)
{
  int rank, size, ok = 1;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  /* 1. values written to a copy-on-write buffer read back */
  double *a = malloc(8 * MIB);
  double *b = malloc(8 * MIB);
  const int per_page = PAGE / sizeof(double);
  for (int k = 0; k < 16; k++)
    a[k * 64 * per_page] = rank * 100.0 + k;
  for (int k = 0; k < 16; k++)
    ok &= a[k * 64 * per_page] == rank * 100.0 + k;

  /* 2. a strided message from private pages: element k of the vector is the
   * first double of page 64k. The receiver has not written its buffer yet: the
   * real data received makes those pages private. */
  MPI_Datatype every_64_pages;
  MPI_Type_vector(16, 1, 64 * per_page, MPI_DOUBLE, &every_64_pages);
  MPI_Type_commit(&every_64_pages);
  int right = (rank + 1) % size, left = (rank + size - 1) % size;
  MPI_Sendrecv(a, 1, every_64_pages, right, 0, b, 1, every_64_pages, left, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  for (int k = 0; k < 16; k++)
    ok &= b[k * 64 * per_page] == left * 100.0 + k;
  /* 2b. the other way: a never-written buffer holds zeros, and sending it
   * overwrites data the receiver had written */
  double *fresh = malloc(8 * MIB);
  for (int k = 0; k < 16; k++)
    b[k * 64 * per_page] = 7.0;
  MPI_Sendrecv(fresh, 1, every_64_pages, right, 1, b, 1, every_64_pages, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  for (int k = 0; k < 16; k++)
    ok &= b[k * 64 * per_page] == 0.0;
  MPI_Sendrecv(fresh, MIB, MPI_BYTE, right, 2, a, MIB, MPI_BYTE, left, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  ok &= a[0] == 0.0;
  free(fresh);
  MPI_Type_free(&every_64_pages);
  free(a);
  free(b);

  /* 3. fill, check, free buffers of 2, 3, ..., 17 MiB (152 MiB in all): each
   * size is recycled separately, so unless freed buffers are folded again the
   * recycled ones keep all that memory. Two ranks suffice. */
  for (int mib = 2; rank < 2 && mib <= 17; mib++) {
    char *c = malloc((size_t)mib * MIB);
    memset(c, rank + mib, (size_t)mib * MIB);
    for (size_t off = 0; off < (size_t)mib * MIB; off += PAGE)
      ok &= c[off] == (char)(rank + mib);
    free(c);
  }

  /* 4. calloc: the recycled buffers filled above read as zeros again, even
   * when folded (not copy-on-write) memory holds non-zero garbage */
  char *folded = malloc(40 * MIB);
  memset(folded, 0x5a, MIB);
  free(folded);
  for (int mib = 2; rank < 2 && mib <= 17; mib++) {
    char *z = calloc((size_t)mib, MIB);
    for (size_t off = 0; off < (size_t)mib * MIB; off += PAGE / 2)
      ok &= z[off] == 0;
    free(z);
  }

  int all_ok;
  MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  if (rank == 0)
    printf("fold_cow: %d ranks, copy-on-write data %s\n", size, all_ok ? "OK" : "CORRUPTED");
  MPI_Finalize();
  return all_ok ? 0 : 1;
}
