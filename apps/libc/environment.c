/* Prints, from rank 0, the value of each environment variable named on the
 * command line ("NAME=value", or "NAME unset"), and every variable whose name
 * starts with SMPIRUN_: smpirun must hand the program the environment it was
 * given. Usage: environment NAME... */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern char **environ;

int main(int argc, char **argv)
{
  int rank;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    for (int i = 1; i < argc; i++) {
      const char *value = getenv(argv[i]);
      if (value)
        printf("%s=%s\n", argv[i], value);
      else
        printf("%s unset\n", argv[i]);
    }
    for (char **e = environ; *e; e++)
      if (strncmp(*e, "SMPIRUN_", 8) == 0)
        printf("%s\n", *e);
  }
  MPI_Finalize();
  return 0;
}
