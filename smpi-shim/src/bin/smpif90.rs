//! `smpif90`: compiles a Fortran 90 (free-form .f90, or fixed-form .f) MPI program for `smpirun`.
//!
//! It runs the Fortran compiler (`$SMPI_FC`, default `gfortran`) with our
//! `include/` directory (`include 'mpif.h'`), the directory of the `mpi`
//! module (`use mpi`, compiled on first use: `common/fortran.rs`),
//! position-independent code and, when linking, `-shared`: gfortran puts
//! `main` in the object of the `PROGRAM` unit, so the shared object exports
//! it and links libgfortran, and smpirun loads one private copy per rank. The
//! MPI routines are smpirun's Fortran bindings (`smpi-shim/src/abi/fortran.rs`).
//! `smpif90` and `smpiff` behave the same; both names exist because SMPI's
//! (and MPICH's build systems) use them.

#![warn(missing_docs, unreachable_pub, unsafe_op_in_unsafe_fn)]

#[path = "common/driver.rs"]
mod driver;
#[path = "common/fortran.rs"]
mod fortran;

fn main() {
    fortran::run("smpif90")
}
