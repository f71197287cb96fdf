//! `smpicc`: compiles a C MPI program for `smpirun`.
//!
//! It runs the system C compiler (`$SMPI_CC`, default `cc`) with our
//! `include/` directory, position-independent code, and — when linking — builds
//! a shared object that exports `main` (smpirun loads one private copy per
//! rank). Use it like `cc`: `smpicc -O2 app.c -o app`, or `CC=smpicc make`.
//! With `SMPI_PRETEND_CC=1` it behaves as the plain compiler (for configure
//! scripts that run test programs).
//!
//! Our `include/` comes first on the search path, so `mpi.h`, `smpi/*.h`,
//! `xbt/*.h` and `simgrid/*.h` are ours even when SimGrid's are installed in
//! `/usr/include` (mixing the two would declare functions smpirun does not
//! have). Like SMPI's smpicc, C sources are passed by absolute path, so
//! `__FILE__` (in log lines and sampling sites) is the same as under SMPI.

use std::path::{Path, PathBuf};
use std::process::Command;

const USAGE: &str = "\
smpicc: compile a C MPI program for smpirun

Usage: smpicc [cc options] <files...> [-o <output>]

Runs the C compiler ($SMPI_CC or cc) with -I<smpi include dir> -fPIC, and when
linking adds -shared so that smpirun can load the program. C sources are passed
by absolute path (as SMPI's smpicc does, for __FILE__). All other options
are passed to the compiler unchanged.
Environment: SMPI_CC (compiler), SMPI_PRETEND_CC=1 (plain compiler),
             SMPI_INCLUDE (include directory override).
";

/// Whether `dir` holds our headers (not another MPI's or SimGrid's, which may
/// sit in `<prefix>/include` too): our `smpi/smpi.h` has its own guard.
fn is_ours(dir: &Path) -> bool {
    std::fs::read_to_string(dir.join("smpi/smpi.h")).is_ok_and(|t| t.contains("SMPI_RS_SMPI_H"))
}

fn include_dir() -> PathBuf {
    if let Ok(p) = std::env::var("SMPI_INCLUDE") {
        return p.into();
    }
    // Next to the executable when installed (<prefix>/bin/../include), else the source tree.
    if let Ok(exe) = std::env::current_exe() {
        if let Some(prefix) = exe.parent().and_then(|b| b.parent()) {
            let p = prefix.join("include");
            if is_ours(&p) {
                return p;
            }
        }
    }
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/include"))
}

/// A C source file named on the command line, by absolute path (as SMPI's
/// smpicc does with `readlink -f`); anything else unchanged.
fn absolute_source(arg: &str) -> String {
    if !arg.starts_with('-') && arg.ends_with(".c") {
        if let Ok(p) = std::fs::canonicalize(arg) {
            return p.display().to_string();
        }
    }
    arg.to_string()
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--help" || a == "-help") {
        print!("{USAGE}");
        return;
    }
    let cc = std::env::var("SMPI_CC").unwrap_or_else(|_| "cc".into());
    let pretend = std::env::var("SMPI_PRETEND_CC").is_ok_and(|v| v == "1");
    let compile_only = args
        .iter()
        .any(|a| a == "-c" || a == "-E" || a == "-S" || a == "-M" || a == "-MM");
    let mut cmd = Command::new(&cc);
    let inc = include_dir();
    cmd.arg(format!("-I{}", inc.display()));
    let is_c = !args
        .iter()
        .any(|a| a.ends_with(".cpp") || a.ends_with(".cc") || a.ends_with(".cxx"));
    if is_c && !pretend {
        cmd.arg("-include").arg(inc.join("smpi/smpi_helpers.h"));
    }
    if !pretend {
        cmd.arg("-fPIC");
    }
    if pretend {
        cmd.args(&args);
    } else {
        cmd.args(args.iter().map(|a| absolute_source(a)));
    }
    if !compile_only && !pretend && !args.is_empty() && !args.iter().any(|a| a == "--version" || a == "-v") {
        cmd.arg("-shared");
        // Allow MPI symbols to stay undefined: smpirun provides them at load time.
        cmd.arg("-Wl,--allow-shlib-undefined");
    }
    match cmd.status() {
        Ok(s) => std::process::exit(s.code().unwrap_or(1)),
        Err(e) => {
            eprintln!("smpicc: cannot run {cc}: {e}");
            std::process::exit(127);
        }
    }
}
