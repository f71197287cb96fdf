! features.f90 -- the Fortran bindings through `use mpi` (smpif90 + smpirun).
!
! Demonstrates:
!  - a ring with MPI_SENDRECV and the status fields (MPI_SOURCE, MPI_TAG,
!    MPI_GET_COUNT);
!  - MPI_ALLREDUCE with a Fortran user operation (MPI_OP_CREATE) and with
!    MPI_IN_PLACE;
!  - CHARACTER arguments: MPI_COMM_SET_NAME / GET_NAME, MPI_INFO_SET / GET,
!    MPI_ERROR_STRING, MPI_GET_PROCESSOR_NAME (blank padding, trimming);
!  - MPI_WAITANY's 1-based index, MPI_STATUS_IGNORE, MPI_STATUSES_IGNORE;
!  - attribute caching with a Fortran copy callback (MPI_COMM_DUP), MPI_TAG_UB;
!  - LOGICAL arguments (MPI_OP_CREATE's commute, MPI_INFO_GET's flag).
! Each rank prints `check <name> <rank> ok|BAD`; rank 0 then prints `OK` or `FAIL`.
subroutine mysum(invec, inoutvec, n, dtype)
  implicit none
  integer :: n, dtype, i
  integer :: invec(n), inoutvec(n)
  do i = 1, n
     inoutvec(i) = inoutvec(i) + 2 * invec(i)
  end do
end subroutine mysum

subroutine copyfn(oldcomm, keyval, extra, valin, valout, flag, ierr)
  use mpi
  implicit none
  integer :: oldcomm, keyval, ierr
  integer(kind=MPI_ADDRESS_KIND) :: extra, valin, valout
  logical :: flag
  valout = valin + extra
  flag = .true.
  ierr = MPI_SUCCESS
end subroutine copyfn

program features
  use mpi
  implicit none
  external mysum, copyfn
  integer :: ierr, rank, nprocs, status(MPI_STATUS_SIZE), cnt, token, op, i, bad, total
  integer :: reqs(2), idx, buf(2), info, namelen, keyval, dup
  integer(kind=MPI_ADDRESS_KIND) :: val, extra
  logical :: flag, okall
  character(len=MPI_MAX_OBJECT_NAME) :: cname
  character(len=40) :: value
  character(len=MPI_MAX_ERROR_STRING) :: estr

  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, nprocs, ierr)
  bad = 0

  ! Ring with MPI_SENDRECV.
  call MPI_SENDRECV(rank, 1, MPI_INTEGER, mod(rank + 1, nprocs), 5, token, 1, MPI_INTEGER, &
       mod(rank + nprocs - 1, nprocs), 5, MPI_COMM_WORLD, status, ierr)
  call MPI_GET_COUNT(status, MPI_INTEGER, cnt, ierr)
  call report('sendrecv', token == mod(rank + nprocs - 1, nprocs) .and. status(MPI_SOURCE) == token &
       .and. status(MPI_TAG) == 5 .and. cnt == 1)

  ! User op: inout = inout + 2*in, so the result is not a plain sum.
  call MPI_OP_CREATE(mysum, .true., op, ierr)
  call MPI_ALLREDUCE(1, total, 1, MPI_INTEGER, op, MPI_COMM_WORLD, ierr)
  call report('user_op', total == 2 * nprocs - 1)
  call MPI_OP_FREE(op, ierr)

  ! MPI_IN_PLACE.
  total = rank
  call MPI_ALLREDUCE(MPI_IN_PLACE, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call report('in_place', total == nprocs * (nprocs - 1) / 2)

  ! CHARACTER arguments.
  call MPI_COMM_SET_NAME(MPI_COMM_WORLD, 'fortran world   ', ierr)
  cname = 'garbage'
  call MPI_COMM_GET_NAME(MPI_COMM_WORLD, cname, namelen, ierr)
  call report('comm_name', cname == 'fortran world' .and. namelen == 13)
  call MPI_INFO_CREATE(info, ierr)
  call MPI_INFO_SET(info, 'color ', ' blue  ', ierr)
  call MPI_INFO_GET(info, 'color', 40, value, flag, ierr)
  call report('info', flag .and. value == 'blue')
  call MPI_INFO_GET(info, 'shape', 40, value, flag, ierr)
  call report('info_absent', .not. flag)
  call MPI_INFO_FREE(info, ierr)
  call MPI_ERROR_STRING(MPI_ERR_TAG, estr, namelen, ierr)
  call report('error_string', namelen > 0 .and. len_trim(estr) == namelen)

  ! MPI_WAITANY returns a 1-based index.
  reqs(1) = MPI_REQUEST_NULL
  call MPI_IRECV(buf, 1, MPI_INTEGER, rank, 9, MPI_COMM_WORLD, reqs(2), ierr)
  call MPI_SEND(rank, 1, MPI_INTEGER, rank, 9, MPI_COMM_WORLD, ierr)
  call MPI_WAITANY(2, reqs, idx, MPI_STATUS_IGNORE, ierr)
  call report('waitany', idx == 2 .and. buf(1) == rank)
  call MPI_IRECV(buf, 1, MPI_INTEGER, rank, 10, MPI_COMM_WORLD, reqs(1), ierr)
  call MPI_ISEND(rank, 1, MPI_INTEGER, rank, 10, MPI_COMM_WORLD, reqs(2), ierr)
  call MPI_WAITALL(2, reqs, MPI_STATUSES_IGNORE, ierr)
  call report('waitall', reqs(1) == MPI_REQUEST_NULL .and. reqs(2) == MPI_REQUEST_NULL)

  ! Attributes: a Fortran copy callback runs on MPI_COMM_DUP.
  extra = 100
  call MPI_COMM_CREATE_KEYVAL(copyfn, MPI_COMM_NULL_DELETE_FN, keyval, extra, ierr)
  val = 7
  call MPI_COMM_SET_ATTR(MPI_COMM_WORLD, keyval, val, ierr)
  call MPI_COMM_DUP(MPI_COMM_WORLD, dup, ierr)
  val = 0
  call MPI_COMM_GET_ATTR(dup, keyval, val, flag, ierr)
  call report('keyval_copy', flag .and. val == 107)
  call MPI_COMM_FREE(dup, ierr)
  call MPI_COMM_GET_ATTR(MPI_COMM_WORLD, MPI_TAG_UB, val, flag, ierr)
  call report('tag_ub', flag .and. val >= 32767)

  call MPI_ALLREDUCE(bad == 0, okall, 1, MPI_LOGICAL, MPI_LAND, MPI_COMM_WORLD, ierr)
  call MPI_FINALIZE(ierr)
  if (rank == 0) then
     if (okall) then
        print '(a)', 'OK'
     else
        print '(a)', 'FAIL'
     end if
  end if

contains

  subroutine report(name, ok)
    character(len=*), intent(in) :: name
    logical, intent(in) :: ok
    if (ok) then
       print '(a,1x,a,1x,i0,1x,a)', 'check', name, rank, 'ok'
    else
       print '(a,1x,a,1x,i0,1x,a)', 'check', name, rank, 'BAD'
       bad = bad + 1
    end if
  end subroutine report
end program features
