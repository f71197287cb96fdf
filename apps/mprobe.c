/* mprobe: matched probes (MPI_Mprobe/MPI_Improbe + MPI_Mrecv/MPI_Imrecv).
 *
 * demonstrates: a probed message is taken out of matching (a later MPI_Recv
 * cannot get it), MPI_MESSAGE_NO_PROC for MPI_PROC_NULL, and the time of a
 * probed receive.
 *
 * Usage: mprobe [size ...]   (bytes; default 1 1000 100000)
 *
 * For each size, rank 0 sends one message of that size (tag 1) and rank 1
 * probes it with MPI_Mprobe, then receives it with MPI_Mrecv. Rank 1 prints
 *   mprobe size=<B> count=<B> source=<r> tag=<t> recv_time=<s>
 * where recv_time is the MPI_Wtime difference around MPI_Mrecv (it includes
 * one MPI_Wtime cost). Then two same-tag messages: rank 1 MPI_Improbe's the
 * first, MPI_Recv must get the second, MPI_Imrecv + MPI_Wait the first:
 *   order first=<value> second=<value>
 * Payloads are checked. Last line: OK (exit 0) or FAIL (exit 1); needs 2 ranks. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static unsigned char pattern(long i, long size) { return (unsigned char)((i * 7 + size * 13) & 0xff); }

int main(int argc, char **argv)
{
  long sizes[64];
  int nsizes = 0, rank, np, errs = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  for (int i = 1; i < argc && nsizes < 64; i++) sizes[nsizes++] = atol(argv[i]);
  if (nsizes == 0) {
    sizes[0] = 1;
    sizes[1] = 1000;
    sizes[2] = 100000;
    nsizes = 3;
  }
  if (np != 2) {
    if (rank == 0) printf("mprobe needs 2 ranks\nFAIL\n");
    MPI_Finalize();
    return 1;
  }

  for (int k = 0; k < nsizes; k++) {
    long size = sizes[k];
    unsigned char *buf = malloc(size > 0 ? size : 1);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
      for (long i = 0; i < size; i++) buf[i] = pattern(i, size);
      MPI_Send(buf, (int)size, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
    } else {
      MPI_Message msg = MPI_MESSAGE_NULL;
      MPI_Status st;
      int count = -1;
      MPI_Mprobe(0, 1, MPI_COMM_WORLD, &msg, &st);
      MPI_Get_count(&st, MPI_BYTE, &count);
      double t0 = MPI_Wtime();
      MPI_Mrecv(buf, count, MPI_BYTE, &msg, MPI_STATUS_IGNORE);
      double t1 = MPI_Wtime();
      long bad = 0;
      for (long i = 0; i < size; i++) bad += buf[i] != pattern(i, size);
      if (bad || count != size || msg != MPI_MESSAGE_NULL) {
        printf("size %ld: %ld wrong bytes, count %d\n", size, bad, count);
        errs++;
      }
      printf("mprobe size=%ld count=%d source=%d tag=%d recv_time=%.12e\n", size, count, st.MPI_SOURCE,
             st.MPI_TAG, t1 - t0);
    }
    free(buf);
  }

  /* A probed message is no longer matchable. */
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    int a = 11, b = 22;
    MPI_Send(&a, 1, MPI_INT, 1, 2, MPI_COMM_WORLD);
    MPI_Send(&b, 1, MPI_INT, 1, 2, MPI_COMM_WORLD);
  } else {
    MPI_Message msg = MPI_MESSAGE_NULL;
    MPI_Request req;
    int flag = 0, first = -1, second = -1;
    while (!flag) MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &msg, MPI_STATUS_IGNORE);
    MPI_Recv(&second, 1, MPI_INT, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Imrecv(&first, 1, MPI_INT, &msg, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    printf("order first=%d second=%d\n", first, second);
    if (first != 11 || second != 22) errs++;

    /* MPI_PROC_NULL gives MPI_MESSAGE_NO_PROC and an empty receive. */
    MPI_Status st;
    int count = -1;
    MPI_Mprobe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &msg, &st);
    MPI_Mrecv(&first, 1, MPI_INT, &msg, &st);
    MPI_Get_count(&st, MPI_INT, &count);
    if (st.MPI_SOURCE != MPI_PROC_NULL || count != 0 || msg != MPI_MESSAGE_NULL) {
      printf("MPI_PROC_NULL probe: source %d count %d\n", st.MPI_SOURCE, count);
      errs++;
    }
  }

  MPI_Allreduce(MPI_IN_PLACE, &errs, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  /* Rank 1 printed the results: it also prints the verdict, so it comes last. */
  if (rank == 1) printf(errs ? "FAIL\n" : "OK\n");
  MPI_Finalize();
  return errs ? 1 : 0;
}
