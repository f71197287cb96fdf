//! `smpicc`: compiles a C MPI program for `smpirun`.
//!
//! It runs the system C compiler (`$SMPI_CC`, default `cc`) with our
//! `include/` directory, position-independent code, and — when linking — builds
//! a shared object that exports `main` (smpirun loads one private copy per
//! rank). Use it like `cc`: `smpicc -O2 app.c -o app`, or `CC=smpicc make`.
//! With `SMPI_PRETEND_CC=1` it behaves as the plain compiler (for configure
//! scripts that run test programs). C files get `smpi/smpi_helpers.h`
//! force-included (simulated sleep and clocks, `exit` ending only the rank).
//! The logic shared with `smpicxx`, `smpif90` and `smpiff` is in
//! `common/driver.rs`.

#![warn(missing_docs, unreachable_pub, unsafe_op_in_unsafe_fn)]

#[path = "common/driver.rs"]
mod driver;

const USAGE: &str = "\
smpicc: compile a C MPI program for smpirun

Usage: smpicc [cc options] <files...> [-o <output>]

Runs the C compiler ($SMPI_CC or cc) with -I<smpi include dir> -fPIC, and when
linking adds -shared so that smpirun can load the program. C sources are passed
by absolute path (as SMPI's smpicc does, for __FILE__). All other options
are passed to the compiler unchanged.
Environment: SMPI_CC (compiler), SMPI_PRETEND_CC=1 (plain compiler),
             SMPI_INCLUDE (include directory override), SMPI_VERBOSE=1 (print
             the compiler command).
";

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let driver = driver::Driver {
        tool: "smpicc",
        lang: driver::Lang::C,
        compiler_var: "SMPI_CC",
        default_compiler: "cc",
        usage: USAGE,
    };
    driver.run(&args, |_, _, _| Ok(()))
}
