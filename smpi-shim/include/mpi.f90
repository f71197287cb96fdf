! mpi.f90 -- the `mpi` module of our simulator (`use mpi`).
! It holds what mpif.h declares: the constants (same values as mpi.h), the
! special addresses (MPI_BOTTOM, MPI_IN_PLACE, MPI_STATUS_IGNORE, ...) and
! the predefined procedures. It gives no explicit interfaces for the MPI
! routines (as with mpif.h, calls are checked by nothing but the linker),
! so choice buffers of any type and rank are accepted; smpif90 compiles it
! into mpi.mod on first use (a cache keyed by the compiler and this source).
module mpi
  implicit none
  include 'mpif.h'
end module mpi
