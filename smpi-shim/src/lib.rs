//! MPI on simcore.
