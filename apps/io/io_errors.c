/* MPI-IO errors: under the default MPI_ERRORS_RETURN each faulty call returns its error class
 * ("<case> <class name>" on stdout); then, with MPI_ERRORS_ARE_FATAL on the file, an access
 * to a closed file ends the run. Usage: io_errors <dir for scratch files> */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

static void report(const char *what, int err)
{
  char s[MPI_MAX_ERROR_STRING];
  int len, class;
  MPI_Error_class(err, &class);
  MPI_Error_string(class, s, &len);
  printf("%s %s\n", what, err == MPI_SUCCESS ? "MPI_SUCCESS" : strtok(s, ":"));
}

int main(int argc, char *argv[])
{
  char path[4096], missing[4096];
  MPI_File fh, copy;
  MPI_Errhandler eh;
  MPI_Status st;
  int x = 42, rank;

  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  snprintf(path, sizeof path, "%s/io_errors.dat", argc > 1 ? argv[1] : ".");
  snprintf(missing, sizeof missing, "%s/io_errors_missing.dat", argc > 1 ? argv[1] : ".");

  MPI_File_get_errhandler(MPI_FILE_NULL, &eh);
  printf("default_errhandler %s\n", eh == MPI_ERRORS_RETURN ? "MPI_ERRORS_RETURN" : "other");
  report("open_missing", MPI_File_open(MPI_COMM_WORLD, missing, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
  report("open_bad_amode", MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
  report("open_create", MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
  report("read_wronly", MPI_File_read_at(fh, 0, &x, 1, MPI_INT, &st));
  report("write_wronly", MPI_File_write_at(fh, 4 * rank, &x, 1, MPI_INT, &st));
  report("negative_count", MPI_File_write_at(fh, 0, &x, -1, MPI_INT, &st));
  report("bad_whence", MPI_File_seek(fh, 0, 12345));
  report("close", MPI_File_close(&fh));
  report("open_excl", MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
  report("open_rdonly", MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, &fh));
  report("write_rdonly", MPI_File_write(fh, &x, 1, MPI_INT, &st));
  report("delete_missing", MPI_File_delete(missing, MPI_INFO_NULL));
  copy = fh;
  report("close2", MPI_File_close(&fh));
  report("read_closed", MPI_File_read(copy, &x, 1, MPI_INT, &st));
  fflush(stdout);
  MPI_Barrier(MPI_COMM_WORLD);
  /* Fatal from here: a read on the closed handle through MPI_ERRORS_ARE_FATAL (the handler of
   * MPI_FILE_NULL, used for handles that are not valid files). */
  MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_ARE_FATAL);
  if (rank == 1)
    MPI_File_read(copy, &x, 1, MPI_INT, &st);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
