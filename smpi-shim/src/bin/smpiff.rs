//! `smpiff`: compiles a Fortran 77 (fixed-form .f) MPI program for `smpirun`.
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

#[path = "common/driver.rs"]
mod driver;
#[path = "common/fortran.rs"]
mod fortran;

const USAGE: &str = "\
smpiff: compile a Fortran MPI program for smpirun

Usage: smpiff [gfortran options] <files...> [-o <output>]

Runs the Fortran compiler ($SMPI_FC or gfortran) with -I<smpi include dir>
(for include 'mpif.h'), -I<mpi module dir> (for use mpi; the module is compiled
once per compiler version into $SMPI_FORTRAN_CACHE, $XDG_CACHE_HOME/smpi-rs or
~/.cache/smpi-rs), -fPIC, -fallow-argument-mismatch (gfortran >= 10), and when
linking -shared so that smpirun can load the program. All other options are
passed to the compiler unchanged. In the program, STOP ends the calling rank
and ERROR STOP the whole run (as exit does in C).
Environment: SMPI_FC (compiler), SMPI_PRETEND_CC=1 (plain compiler),
             SMPI_INCLUDE (include directory override), SMPI_FORTRAN_CACHE
             (module cache), SMPI_VERBOSE=1 (print the compiler command).
";

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let driver = driver::Driver {
        tool: "smpiff",
        lang: driver::Lang::Fortran,
        compiler_var: "SMPI_FC",
        default_compiler: "gfortran",
        usage: USAGE,
    };
    driver.run(&args, fortran::add_flags)
}
