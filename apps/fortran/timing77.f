! timing77.f -- fixed-form Fortran 77 with include 'mpif.h' (smpiff).
!
! Demonstrates:
!  - mpif.h in fixed form; MPI_SEND/MPI_RECV around a ring, MPI_BCAST,
!    MPI_REDUCE (MPI_DOUBLE_PRECISION), MPI_ALLREDUCE, MPI_BARRIER;
!  - simulated times read with MPI_WTIME, printed by rank 0 as
!    `<label> <seconds>` lines (compared with SMPI 3.32's for the same
!    program and platform by the e2e test fortran::*smpi*);
!  - PRINT from every rank, and STOP ending each rank (not the simulator).
      PROGRAM TIMING
      INCLUDE 'mpif.h'
      INTEGER IERR, RANK, NP, I, LAP, STATUS(MPI_STATUS_SIZE)
      INTEGER N
      PARAMETER (N=1000)
      DOUBLE PRECISION A(N), B(N), T0, T1, T2, T3, T4
      CALL MPI_INIT(IERR)
      CALL MPI_COMM_RANK(MPI_COMM_WORLD, RANK, IERR)
      CALL MPI_COMM_SIZE(MPI_COMM_WORLD, NP, IERR)
      DO 10 I = 1, N
         A(I) = DBLE(RANK + I)
   10 CONTINUE
      CALL MPI_BARRIER(MPI_COMM_WORLD, IERR)
      T0 = MPI_WTIME()
      DO 20 LAP = 1, 3
         IF (RANK .EQ. 0) THEN
            CALL MPI_SEND(A, N, MPI_DOUBLE_PRECISION, 1, LAP,
     &                    MPI_COMM_WORLD, IERR)
            CALL MPI_RECV(B, N, MPI_DOUBLE_PRECISION, NP - 1, LAP,
     &                    MPI_COMM_WORLD, STATUS, IERR)
         ELSE
            CALL MPI_RECV(B, N, MPI_DOUBLE_PRECISION, RANK - 1, LAP,
     &                    MPI_COMM_WORLD, STATUS, IERR)
            CALL MPI_SEND(B, N, MPI_DOUBLE_PRECISION,
     &                    MOD(RANK + 1, NP), LAP, MPI_COMM_WORLD, IERR)
         END IF
   20 CONTINUE
      T1 = MPI_WTIME()
      CALL MPI_BCAST(A, N, MPI_DOUBLE_PRECISION, 0, MPI_COMM_WORLD,
     &               IERR)
      T2 = MPI_WTIME()
      CALL MPI_REDUCE(A, B, N, MPI_DOUBLE_PRECISION, MPI_SUM, 0,
     &                MPI_COMM_WORLD, IERR)
      T3 = MPI_WTIME()
      CALL MPI_ALLREDUCE(A, B, N, MPI_DOUBLE_PRECISION, MPI_MAX,
     &                   MPI_COMM_WORLD, IERR)
      T4 = MPI_WTIME()
      PRINT '(A,I0,A,F10.1)', 'rank ', RANK, ' max ', B(N)
      IF (RANK .EQ. 0) THEN
         PRINT '(A,1X,ES20.12)', 'ring', T1 - T0
         PRINT '(A,1X,ES20.12)', 'bcast', T2 - T1
         PRINT '(A,1X,ES20.12)', 'reduce', T3 - T2
         PRINT '(A,1X,ES20.12)', 'allreduce', T4 - T3
         PRINT '(A,1X,ES20.12)', 'total', T4
      END IF
      CALL MPI_FINALIZE(IERR)
      STOP
      END
