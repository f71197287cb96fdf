/* One-sided communication checks: every synchronization mode, the RMA
 * operations, shared and dynamic windows, and the errors of misuse.
 * Usage: rma <mode> [bytes]; modes: fence, lock, pscw, atomics, shared,
 * dynamic, and the misuses range, epoch, freed, null-base, unclosed. Each
 * rank prints what it checked and the simulated times of the steps, so runs
 * can be compared with SMPI's. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;

static void check(int ok, const char *what) {
  if (!ok) {
    printf("[%d] FAILED %s\n", rank, what);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}

/* Fence epochs: put to the right neighbour, get from the left one,
 * accumulate into rank 0, with timings per epoch. */
static void fence(int bytes) {
  int n = bytes / (int)sizeof(double);
  if (n < 1) n = 1;
  double *win_buf, *src = malloc(n * sizeof(double)), *dst = malloc(n * sizeof(double));
  MPI_Win win;
  double t0 = MPI_Wtime();
  MPI_Win_allocate(n * sizeof(double), sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &win_buf, &win);
  for (int i = 0; i < n; i++) { win_buf[i] = -1; src[i] = rank * 1000 + i; }
  double t1 = MPI_Wtime();
  MPI_Win_fence(0, win);
  MPI_Put(src, n, MPI_DOUBLE, (rank + 1) % size, 0, n, MPI_DOUBLE, win);
  MPI_Win_fence(0, win);
  double t2 = MPI_Wtime();
  int left = (rank + size - 1) % size;
  check(win_buf[0] == left * 1000 && win_buf[n - 1] == left * 1000 + n - 1, "put under fence");
  MPI_Get(dst, n, MPI_DOUBLE, left, 0, n, MPI_DOUBLE, win);
  MPI_Win_fence(0, win);
  double t3 = MPI_Wtime();
  int leftleft = (left + size - 1) % size;
  check(dst[0] == leftleft * 1000 && dst[n - 1] == leftleft * 1000 + n - 1, "get under fence");
  if (rank == 0) for (int i = 0; i < n; i++) win_buf[i] = 0;
  MPI_Win_fence(0, win);
  MPI_Accumulate(src, n, MPI_DOUBLE, 0, 0, n, MPI_DOUBLE, MPI_SUM, win);
  MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
  double t4 = MPI_Wtime();
  if (rank == 0) {
    double want = 0;
    for (int r = 0; r < size; r++) want += r * 1000 + (n - 1);
    check(win_buf[n - 1] == want, "accumulate under fence");
  }
  MPI_Win_free(&win);
  double t5 = MPI_Wtime();
  printf("[%d] fence ok: create %.9f put %.9f get %.9f acc %.9f free %.9f\n", rank, t1 - t0, t2 - t1, t3 - t2,
         t4 - t3, t5 - t4);
  free(src);
  free(dst);
}

/* Passive target: a counter on rank 0 incremented under an exclusive lock
 * by every rank, then read back; lock_all with flush. */
static void lock(int iters) {
  int *counter;
  MPI_Win win;
  MPI_Win_allocate(2 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &counter, &win);
  counter[0] = counter[1] = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  for (int i = 0; i < iters; i++) {
    int v;
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
    MPI_Get(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, win);
    MPI_Win_flush(0, win);
    v++;
    MPI_Put(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, win);
    MPI_Win_unlock(0, win);
  }
  double t1 = MPI_Wtime();
  int one = 1;
  MPI_Win_lock_all(0, win);
  for (int i = 0; i < iters; i++) MPI_Accumulate(&one, 1, MPI_INT, 0, 1, 1, MPI_INT, MPI_SUM, win);
  MPI_Win_flush_all(win);
  MPI_Win_unlock_all(win);
  MPI_Barrier(MPI_COMM_WORLD);
  double t2 = MPI_Wtime();
  if (rank == 0) {
    check(counter[0] == iters * size, "exclusive-lock counter");
    check(counter[1] == iters * size, "accumulate counter");
  }
  MPI_Win_free(&win);
  printf("[%d] lock ok: exclusive %.9f lock_all %.9f\n", rank, t1 - t0, t2 - t1);
}

/* Post-start-complete-wait: even ranks expose, odd ranks put into them. */
static void pscw(int bytes) {
  int n = bytes > 0 ? bytes : 1;
  char *buf = calloc(n, 1), *src = malloc(n);
  memset(src, 'a' + rank % 26, n);
  MPI_Win win;
  MPI_Win_create(buf, n, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  MPI_Group world, peer;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  int partner = rank ^ 1;
  double t0 = MPI_Wtime();
  if (partner < size) {
    MPI_Group_incl(world, 1, &partner, &peer);
    if (rank % 2 == 0) {
      MPI_Win_post(peer, 0, win);
      int flag = 0;
      MPI_Win_test(win, &flag);
      if (!flag) MPI_Win_wait(win);
      check(buf[0] == 'a' + partner % 26 && buf[n - 1] == 'a' + partner % 26, "put under post/wait");
    } else {
      MPI_Win_start(peer, 0, win);
      MPI_Put(src, n, MPI_CHAR, partner, 0, n, MPI_CHAR, win);
      MPI_Win_complete(win);
    }
    MPI_Group_free(&peer);
  }
  double t1 = MPI_Wtime();
  MPI_Group_free(&world);
  MPI_Win_free(&win);
  printf("[%d] pscw ok: epoch %.9f\n", rank, t1 - t0);
  free(buf);
  free(src);
}

/* Atomics: fetch_and_op tickets are all distinct; compare_and_swap elects
 * one winner; get_accumulate returns the old value. */
static void atomics(void) {
  long *mem;
  MPI_Win win;
  MPI_Win_allocate(3 * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
  mem[0] = 0;
  mem[1] = -1;
  mem[2] = 100;
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  long one = 1, ticket, mine = rank, none = -1, old, add = 5, before;
  MPI_Win_lock_all(0, win);
  MPI_Fetch_and_op(&one, &ticket, MPI_LONG, 0, 0, MPI_SUM, win);
  MPI_Compare_and_swap(&mine, &none, &old, MPI_LONG, 0, 1, win);
  MPI_Get_accumulate(&add, 1, MPI_LONG, &before, 1, MPI_LONG, 0, 2, 1, MPI_LONG, MPI_SUM, win);
  MPI_Win_unlock_all(win);
  double t1 = MPI_Wtime();
  long *tickets = malloc(size * sizeof(long)), *olds = malloc(size * sizeof(long));
  MPI_Gather(&ticket, 1, MPI_LONG, tickets, 1, MPI_LONG, 0, MPI_COMM_WORLD);
  MPI_Gather(&old, 1, MPI_LONG, olds, 1, MPI_LONG, 0, MPI_COMM_WORLD);
  check(before >= 100 && (before - 100) % 5 == 0, "get_accumulate old value");
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    check(mem[0] == size, "fetch_and_op total");
    check(mem[2] == 100 + 5 * size, "get_accumulate total");
    int winners = 0;
    for (int r = 0; r < size; r++) {
      if (olds[r] == -1) winners++;
      for (int q = 0; q < r; q++) check(tickets[q] != tickets[r], "distinct tickets");
    }
    check(winners == 1 && mem[1] >= 0 && mem[1] < size, "one compare_and_swap winner");
  }
  MPI_Win_free(&win);
  printf("[%d] atomics ok: %.9f\n", rank, t1 - t0);
  free(tickets);
  free(olds);
}

/* A shared window: each rank writes its part, reads its neighbour's by load. */
static void shared(void) {
  int *mine;
  MPI_Win win;
  MPI_Win_allocate_shared((rank + 1) * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mine, &win);
  for (int i = 0; i <= rank; i++) mine[i] = rank;
  MPI_Win_fence(0, win);
  int right = (rank + 1) % size, disp;
  MPI_Aint bytes;
  int *theirs;
  MPI_Win_shared_query(win, right, &bytes, &disp, &theirs);
  check(bytes == (right + 1) * (MPI_Aint)sizeof(int) && disp == sizeof(int), "shared_query size");
  check(theirs[0] == right && theirs[right] == right, "load from the neighbour's part");
  MPI_Win_fence(0, win);
  MPI_Win_free(&win);
  printf("[%d] shared ok\n", rank);
}

/* A dynamic window: rank 0 attaches memory, others put at its address. */
static void dynamic(void) {
  MPI_Win win;
  MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  int *mem = NULL;
  MPI_Aint addr = 0;
  if (rank == 0) {
    mem = calloc(size, sizeof(int));
    MPI_Win_attach(win, mem, size * sizeof(int));
    MPI_Get_address(mem, &addr);
  }
  MPI_Bcast(&addr, 1, MPI_AINT, 0, MPI_COMM_WORLD);
  MPI_Win_fence(0, win);
  int v = rank + 1;
  MPI_Put(&v, 1, MPI_INT, 0, addr + rank * sizeof(int), 1, MPI_INT, win);
  MPI_Win_fence(0, win);
  if (rank == 0) {
    for (int r = 0; r < size; r++) check(mem[r] == r + 1, "put into attached memory");
    MPI_Win_detach(win, mem);
    free(mem);
  }
  MPI_Win_free(&win);
  printf("[%d] dynamic ok\n", rank);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char *mode = argc > 1 ? argv[1] : "fence";
  int arg = argc > 2 ? atoi(argv[2]) : 1024;
  if (!strcmp(mode, "fence")) fence(arg);
  else if (!strcmp(mode, "lock")) lock(arg);
  else if (!strcmp(mode, "pscw")) pscw(arg);
  else if (!strcmp(mode, "atomics")) atomics();
  else if (!strcmp(mode, "shared")) shared();
  else if (!strcmp(mode, "dynamic")) dynamic();
  else if (!strcmp(mode, "null-base")) {
    MPI_Win win;
    MPI_Win_create(NULL, 64, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win); /* 64 bytes at NULL */
  } else if (!strcmp(mode, "unclosed")) {
    int buf[4] = {0}, v = 1;
    MPI_Win win;
    MPI_Win_create(buf, sizeof buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Win_fence(0, win);
    if (rank == 0) MPI_Put(&v, 1, MPI_INT, size - 1, 0, 1, MPI_INT, win);
    MPI_Win_free(&win); /* no closing fence */
  } else if (!strcmp(mode, "range") || !strcmp(mode, "epoch") || !strcmp(mode, "freed")) {
    /* Misuse: rank 0 errs (the run must end with a message naming it). */
    int buf[4] = {0}, v = 1;
    MPI_Win win;
    MPI_Win_create(buf, sizeof buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    if (!strcmp(mode, "freed")) {
      MPI_Win dead = win;
      MPI_Win_free(&win);
      if (rank == 0) MPI_Win_fence(0, dead);
    } else {
      if (!strcmp(mode, "range")) MPI_Win_fence(0, win);
      if (rank == 0) MPI_Put(&v, 1, MPI_INT, size - 1, 4, 1, MPI_INT, win);
      if (!strcmp(mode, "range")) MPI_Win_fence(0, win);
      MPI_Win_free(&win);
    }
  } else {
    printf("unknown mode %s\n", mode);
  }
  MPI_Finalize();
  return 0;
}
