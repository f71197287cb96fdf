/* A small (detached) send returns at once and its buffer is the sender's
 * again: overwriting it must not change what the receiver gets, whether the
 * receive was posted before the send (copied straight into the receive
 * buffer) or after it (copied aside first). Contiguous and strided (vector)
 * layouts, on both sides. Prints "N errors". */
#include <mpi.h>
#include <stdio.h>

#define N 64

int main(int argc, char **argv)
{
  int rank, errors = 0;
  double buf[2 * N], got[4][2 * N];
  MPI_Datatype strided;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Type_vector(N, 1, 2, MPI_DOUBLE, &strided);
  MPI_Type_commit(&strided);
  if (rank == 1) {
    MPI_Request early[2];
    /* posted before the sends (rank 0 waits for the go message) */
    MPI_Irecv(got[0], N, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD, &early[0]);
    MPI_Irecv(got[1], 1, strided, 0, 1, MPI_COMM_WORLD, &early[1]);
    MPI_Send(NULL, 0, MPI_BYTE, 0, 9, MPI_COMM_WORLD);
    MPI_Waitall(2, early, MPI_STATUSES_IGNORE);
    /* posted after the sends: rank 0 sent them before the second go message */
    MPI_Recv(NULL, 0, MPI_BYTE, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Recv(got[2], 1, strided, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Recv(got[3], N, MPI_DOUBLE, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int i = 0; i < N; i++) {
      errors += got[0][i] != i;
      errors += got[1][2 * i] != 1000 + i;
      errors += got[2][2 * i] != 2000 + 2 * i;
      errors += got[3][i] != 3000 + 2 * i;
    }
    printf("%d errors\n", errors);
  } else if (rank == 0) {
    MPI_Recv(NULL, 0, MPI_BYTE, 1, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int i = 0; i < 2 * N; i++) buf[i] = i;
    MPI_Send(buf, N, MPI_DOUBLE, 1, 0, MPI_COMM_WORLD);
    for (int i = 0; i < 2 * N; i++) buf[i] = 1000 + i;
    MPI_Send(buf, N, MPI_DOUBLE, 1, 1, MPI_COMM_WORLD);
    for (int i = 0; i < 2 * N; i++) buf[i] = 2000 + i;
    MPI_Send(buf, 1, strided, 1, 2, MPI_COMM_WORLD);
    for (int i = 0; i < 2 * N; i++) buf[i] = 3000 + i;
    MPI_Send(buf, 1, strided, 1, 3, MPI_COMM_WORLD);
    for (int i = 0; i < 2 * N; i++) buf[i] = -1;
    MPI_Send(NULL, 0, MPI_BYTE, 1, 9, MPI_COMM_WORLD);
  }
  MPI_Type_free(&strided);
  MPI_Finalize();
  return errors != 0;
}
