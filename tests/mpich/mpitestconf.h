/* mpitestconf.h — hand-written replacement for the header that MPICH's test-suite configure
 * (test/mpi/configure) would generate from include/mpitestconf.h.in.
 *
 * tests/mpich/run.py compiles the MPICH 4.0.2 tests WITHOUT running configure; this file is
 * found first on the include path (-I tests/mpich) and says what configure would have found on
 * a Linux/glibc x86-64 system with gcc, testing a NON-MPICH MPI (strict mode) that has no
 * Fortran, no C++, no threads package, no MPI-IO, no dynamic processes, no RMA and no GPU.
 * Keep it in sync with the feature switches in run.py (FEATURES).
 */
#ifndef MPITESTCONF_H_INCLUDED
#define MPITESTCONF_H_INCLUDED

/* ---- C compiler / system (Linux, glibc, gcc, LP64) ---- */
#define HAVE_DLFCN_H 1
#define HAVE_INTTYPES_H 1
#define HAVE_MEMORY_H 1
#define HAVE_STDARG_H 1
#define HAVE_STDINT_H 1
#define HAVE_STDLIB_H 1
#define HAVE_STRINGS_H 1
#define HAVE_STRING_H 1
#define HAVE_SYS_RESOURCE_H 1
#define HAVE_SYS_STAT_H 1
#define HAVE_SYS_TIME_H 1
#define HAVE_SYS_TYPES_H 1
#define HAVE_UNISTD_H 1
#define HAVE_PTHREAD_H 1
#define STDC_HEADERS 1
#define HAVE_GETRUSAGE 1
#define HAVE_STRDUP 1
#define HAVE_USLEEP 1
#define HAVE_H_ADDR_LIST 1
#define HAVE__BOOL 1
#define HAVE_LONG_LONG 1
#define HAVE_LONG_LONG_INT 1
#define HAVE_LONG_DOUBLE 1
#define HAVE_FLOAT__COMPLEX 1
#define HAVE_DOUBLE__COMPLEX 1
#define HAVE_LONG_DOUBLE__COMPLEX 1
/* USE_LONG_DOUBLE_COMPLEX is left undefined: MPI_C_LONG_DOUBLE_COMPLEX reductions are optional */

#define SIZEOF_SHORT 2
#define SIZEOF_INT 4
#define SIZEOF_LONG 8
#define SIZEOF_LONG_LONG 8
#define SIZEOF_VOID_P 8
#define SIZEOF_MPI_OFFSET 8
#define POINTERINT_t long

/* STDCALL: empty calling convention */
#define STDCALL

/* ---- MPI implementation features ---- */
/* We are not MPICH: test only what the MPI standard defines (configure --enable-strictmpi).
 * This also hides MPIX_* extensions (mtest_mpix.h). */
#define USE_STRICT_MPI 1

/* No threads package: mpithreadtest.h then compiles the single-threaded stubs. */
#define THREAD_PACKAGE_NAME THREAD_PACKAGE_NONE

/* Absent features (left undefined on purpose):
 *   HAVE_FORTRAN_BINDING, F77_NAME_*       no Fortran bindings
 *   HAVE_IOSTREAM, HAVE_NAMESPACES, ...    no C++ bindings
 *   HAVE_MPI_SPAWN                         no dynamic processes
 *   HAVE_CUDA, HAVE_ZE, HAVE_HIP           no GPU memory
 *   HAVE_LIBABT                            no Argobots
 */

/* MPI-IO: files on the real file system (mpi.h also defines MPIO_USES_MPI_REQUEST: the
 * non-blocking forms return MPI requests). */
#define HAVE_MPI_IO 1

/* One-sided communication (RMA windows). */
#define HAVE_MPI_WIN_CREATE 1

/* mpi.h defines MPI_INTEGER16 (as MPI_DATATYPE_NULL: no 16-byte integer), which configure's
 * check for the name detects. */
#define HAVE_MPI_INTEGER16 1
/* ---- package identification (configure's AC_INIT) ---- */
#define PACKAGE "mpich-testsuite"
#define PACKAGE_BUGREPORT "discuss@mpich.org"
#define PACKAGE_NAME "mpich-testsuite"
#define PACKAGE_STRING "mpich-testsuite 4.0.2"
#define PACKAGE_TARNAME "mpich-testsuite"
#define PACKAGE_URL "http://www.mpich.org/"
#define PACKAGE_VERSION "4.0.2"
#define VERSION "4.0.2"

#endif /* MPITESTCONF_H_INCLUDED */
