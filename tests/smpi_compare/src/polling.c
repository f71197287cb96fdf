/* (g) Which polling calls share SMPI's growing cost counters: Test, Testall and Testsome
 * (one Test per request), Testany and Iprobe each have their own, shared by all ranks.
 * Rank 0 polls receives that rank 1 satisfies only later (after a busy wait on MPI_Wtime),
 * interleaving the calls, and prints the time of each call; then rank 1 polls too, at the
 * same time as rank 0, so the shared counters mix both ranks' failures.
 * Needs >= 4 ranks. */
#include "common.h"

/* Sends `n` small messages to rank 0 (tags 10, 11, ...) after `rounds` round trips of 1 MiB
 * with `partner`: the sends come late, in simulated time, after few calls. */
static void late_sends(int n, int partner, int rounds, char *big)
{
  for (int i = 0; i < rounds; i++) {
    MPI_Send(big, 1 << 20, MPI_BYTE, partner, 50, MPI_COMM_WORLD);
    MPI_Recv(big, 1 << 20, MPI_BYTE, partner, 51, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  for (int i = 0; i < n; i++)
    MPI_Send(&i, 1, MPI_INT, 0, 10 + i, MPI_COMM_WORLD);
}

/* The partner of late_sends. */
static void echo(int partner, int rounds, char *big)
{
  for (int i = 0; i < rounds; i++) {
    MPI_Recv(big, 1 << 20, MPI_BYTE, partner, 50, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Send(big, 1 << 20, MPI_BYTE, partner, 51, MPI_COMM_WORLD);
  }
}

int main(int argc, char **argv)
{
  common_init(&argc, &argv);
  char *big = xmalloc(1 << 20);
  int buf[2], flag, idx, outc, ind[2];
  MPI_Request r[2];
  char label[64];
  /* 1. the sequence of calls on one rank */
  if (g_rank == 0) {
    MPI_Irecv(&buf[0], 1, MPI_INT, 1, 10, MPI_COMM_WORLD, &r[0]);
    MPI_Irecv(&buf[1], 1, MPI_INT, 1, 11, MPI_COMM_WORLD, &r[1]);
    const char *calls[] = {"test", "test", "testall2", "testany2", "testany2", "testsome2", "test",
                           "iprobe", "iprobe", "testall1", "testany2", "test"};
    for (int i = 0; i < 12; i++) {
      double t0 = MPI_Wtime();
      const char *c = calls[i];
      if (!strcmp(c, "test"))
        MPI_Test(&r[0], &flag, MPI_STATUS_IGNORE);
      else if (!strcmp(c, "testall2"))
        MPI_Testall(2, r, &flag, MPI_STATUSES_IGNORE);
      else if (!strcmp(c, "testall1"))
        MPI_Testall(1, r, &flag, MPI_STATUSES_IGNORE);
      else if (!strcmp(c, "testany2"))
        MPI_Testany(2, r, &idx, &flag, MPI_STATUS_IGNORE);
      else if (!strcmp(c, "testsome2"))
        MPI_Testsome(2, r, &outc, ind, MPI_STATUSES_IGNORE);
      else
        MPI_Iprobe(1, 99, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
      snprintf(label, sizeof label, "seq_%02d_%s", i, c);
      emit(label, MPI_Wtime() - t0);
    }
    MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
  } else if (g_rank == 1) {
    late_sends(2, 2, 20, big);
  } else if (g_rank == 2) {
    echo(1, 20, big);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  /* 2. two ranks polling at once: rank 0 with Test, rank 1 with Iprobe then Test */
  if (g_rank == 0) {
    MPI_Irecv(&buf[0], 1, MPI_INT, 2, 10, MPI_COMM_WORLD, &r[0]);
    double t0 = MPI_Wtime();
    int calls = 0;
    do {
      MPI_Test(&r[0], &flag, MPI_STATUS_IGNORE);
      calls++;
    } while (!flag);
    emit("both_rank0_test_time", MPI_Wtime() - t0);
    emit_int("both_rank0_test_calls", calls);
  } else if (g_rank == 1) {
    double t0 = MPI_Wtime();
    for (int i = 0; i < 20; i++) {
      MPI_Iprobe(0, 99, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
      MPI_Request q;
      MPI_Irecv(&buf[1], 1, MPI_INT, 0, 98, MPI_COMM_WORLD, &q);
      MPI_Test(&q, &flag, MPI_STATUS_IGNORE);
      MPI_Cancel(&q);
      MPI_Wait(&q, MPI_STATUS_IGNORE);
    }
    double dt = MPI_Wtime() - t0;
    MPI_Send(&dt, 1, MPI_DOUBLE, 0, 97, MPI_COMM_WORLD);
  }
  if (g_rank == 2)
    late_sends(1, 3, 10, big);
  else if (g_rank == 3)
    echo(2, 10, big);
  if (g_rank == 0) {
    double dt;
    MPI_Recv(&dt, 1, MPI_DOUBLE, 1, 97, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    emit("both_rank1_iprobe_test_time", dt);
  }
  MPI_Finalize();
  return 0;
}
