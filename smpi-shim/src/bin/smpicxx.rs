//! `smpicxx`: compiles a C++ MPI program for `smpirun`.
//!
//! Like `smpicc`, but runs the C++ compiler (`$SMPI_CXX`, default `c++`), so
//! the shared object links the C++ runtime (libstdc++): iostreams, exceptions
//! and global constructors work in every rank. Each rank's copy of the
//! program gets its own globals, so global constructors run once per rank.
//! libstdc++ itself is loaded once and shared by the ranks (as libc is): its
//! state (e.g. `std::cout`'s buffer) is common, which is harmless because the
//! ranks run one at a time on one thread.
//!
//! As C files, C++ files get `smpi/smpi_helpers.h` force-included: `sleep`,
//! clocks are simulated, `exit` (and `std::exit`) ends only the calling rank.
//! Define `SMPI_NO_HELPERS` to opt out.

#![warn(missing_docs, unreachable_pub, unsafe_op_in_unsafe_fn)]

#[path = "common/driver.rs"]
mod driver;

const USAGE: &str = "\
smpicxx: compile a C++ MPI program for smpirun

Usage: smpicxx [c++ options] <files...> [-o <output>]

Runs the C++ compiler ($SMPI_CXX or c++) with -I<smpi include dir> -fPIC, and
when linking adds -shared so that smpirun can load the program (it then links
the C++ runtime). Sources are passed by absolute path. All other options are
passed to the compiler unchanged. As with smpicc, smpi/smpi_helpers.h is
force-included (simulated sleep and clocks; exit ends only the calling rank).
Environment: SMPI_CXX (compiler), SMPI_PRETEND_CC=1 (plain compiler),
             SMPI_INCLUDE (include directory override), SMPI_VERBOSE=1 (print
             the compiler command).
";

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let driver = driver::Driver {
        tool: "smpicxx",
        lang: driver::Lang::Cxx,
        compiler_var: "SMPI_CXX",
        default_compiler: "c++",
        usage: USAGE,
    };
    driver.run(&args, |_, _, _| Ok(()))
}
