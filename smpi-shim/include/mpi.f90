! mpi.f90 -- the `mpi` module of our simulator (`use mpi`).
! It holds what mpif.h declares: the constants (same values as mpi.h), the
! special addresses (MPI_BOTTOM, MPI_IN_PLACE, MPI_STATUS_IGNORE, ...) and
! the predefined procedures. It gives no explicit interfaces for the MPI
! routines (as with mpif.h, calls are checked by nothing but the linker),
! so choice buffers of any type and rank are accepted; smpif90 compiles it
! into mpi.mod on first use (a cache keyed by the compiler and this source).
!
! The one exception is MPI_SIZEOF, which only a module can provide: a
! generic whose specific procedures (exported by smpirun, one per type and
! kind, any rank through DIMENSION(..)) each store their type's size.
module mpi
  implicit none
  include 'mpif.h'

  interface MPI_SIZEOF
    subroutine smpi_sizeof_int1(x, size, ierror)
      integer(kind=1), dimension(..) :: x
      integer :: size, ierror
    end subroutine
    subroutine smpi_sizeof_int2(x, size, ierror)
      integer(kind=2), dimension(..) :: x
      integer :: size, ierror
    end subroutine
    subroutine smpi_sizeof_int4(x, size, ierror)
      integer(kind=4), dimension(..) :: x
      integer :: size, ierror
    end subroutine
    subroutine smpi_sizeof_int8(x, size, ierror)
      integer(kind=8), dimension(..) :: x
      integer :: size, ierror
    end subroutine
    subroutine smpi_sizeof_real4(x, size, ierror)
      real(kind=4), dimension(..) :: x
      integer :: size, ierror
    end subroutine
    subroutine smpi_sizeof_real8(x, size, ierror)
      real(kind=8), dimension(..) :: x
      integer :: size, ierror
    end subroutine
    subroutine smpi_sizeof_real10(x, size, ierror)
      real(kind=10), dimension(..) :: x
      integer :: size, ierror
    end subroutine
    subroutine smpi_sizeof_real16(x, size, ierror)
      real(kind=16), dimension(..) :: x
      integer :: size, ierror
    end subroutine
    subroutine smpi_sizeof_complex4(x, size, ierror)
      complex(kind=4), dimension(..) :: x
      integer :: size, ierror
    end subroutine
    subroutine smpi_sizeof_complex8(x, size, ierror)
      complex(kind=8), dimension(..) :: x
      integer :: size, ierror
    end subroutine
    subroutine smpi_sizeof_complex10(x, size, ierror)
      complex(kind=10), dimension(..) :: x
      integer :: size, ierror
    end subroutine
    subroutine smpi_sizeof_complex16(x, size, ierror)
      complex(kind=16), dimension(..) :: x
      integer :: size, ierror
    end subroutine
    subroutine smpi_sizeof_logical1(x, size, ierror)
      logical(kind=1), dimension(..) :: x
      integer :: size, ierror
    end subroutine
    subroutine smpi_sizeof_logical2(x, size, ierror)
      logical(kind=2), dimension(..) :: x
      integer :: size, ierror
    end subroutine
    subroutine smpi_sizeof_logical4(x, size, ierror)
      logical(kind=4), dimension(..) :: x
      integer :: size, ierror
    end subroutine
    subroutine smpi_sizeof_logical8(x, size, ierror)
      logical(kind=8), dimension(..) :: x
      integer :: size, ierror
    end subroutine
    subroutine smpi_sizeof_character(x, size, ierror)
      character(len=*), dimension(..) :: x
      integer :: size, ierror
    end subroutine
  end interface
end module mpi
