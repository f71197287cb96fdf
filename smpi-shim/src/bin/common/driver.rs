//! The shared part of the compiler drivers `smpicc`, `smpicxx`, `smpif90` and `smpiff`.
//!
//! Each driver runs the system compiler of its language with our `include/`
//! directory, position-independent code, and — when linking — `-shared`, so
//! the result is a shared object exporting `main` that `smpirun` loads once
//! per rank. The drivers differ only in the compiler they run, the source
//! suffixes they recognise and a few language-specific flags ([`Lang`]).
//!
//! Our `include/` comes first on the search path, so `mpi.h`, `mpif.h`,
//! `smpi/*.h`, `xbt/*.h` and `simgrid/*.h` are ours even when SimGrid's are
//! installed in `/usr/include` (mixing the two would declare functions smpirun
//! does not have). Like SMPI's drivers, source files are passed by absolute
//! path, so `__FILE__` (in log lines and sampling sites) is the same as under
//! SMPI.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The language a driver compiles.
// Each driver binary includes this module and constructs only its own variant.
#[allow(dead_code)]
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Lang {
    C,
    Cxx,
    Fortran,
}

impl Lang {
    /// Whether `arg` names a source file of this language (by suffix).
    fn is_source(self, arg: &str) -> bool {
        if arg.starts_with('-') {
            return false;
        }
        let suffixes: &[&str] = match self {
            Lang::C => &[".c"],
            Lang::Cxx => &[".cpp", ".cc", ".cxx", ".C", ".c++", ".cp", ".CPP"],
            Lang::Fortran => &[
                ".f", ".F", ".for", ".f77", ".f90", ".F90", ".f95", ".F95", ".f03", ".f08",
            ],
        };
        suffixes.iter().any(|s| arg.ends_with(s))
    }
}

/// One compiler driver: its name, language, compiler and help text.
#[derive(Debug)]
pub(crate) struct Driver {
    /// The tool's name, in messages (`smpicc`).
    pub(crate) tool: &'static str,
    pub(crate) lang: Lang,
    /// The environment variable naming the compiler (`SMPI_CC`).
    pub(crate) compiler_var: &'static str,
    /// The compiler run when that variable is unset (`cc`).
    pub(crate) default_compiler: &'static str,
    /// The `--help` text.
    pub(crate) usage: &'static str,
}

/// Whether `dir` holds our headers (not another MPI's or SimGrid's, which may
/// sit in `<prefix>/include` too): our `smpi/smpi.h` has its own guard.
fn is_ours(dir: &Path) -> bool {
    std::fs::read_to_string(dir.join("smpi/smpi.h")).is_ok_and(|t| t.contains("SMPI_RS_SMPI_H"))
}

/// Our `include/` directory: `$SMPI_INCLUDE`, else `<prefix>/include` next to
/// the installed executable, else the source tree's.
pub(crate) fn include_dir() -> PathBuf {
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

impl Driver {
    /// The compiler to run: `$<compiler_var>`, else the default.
    pub(crate) fn compiler(&self) -> String {
        std::env::var(self.compiler_var).unwrap_or_else(|_| self.default_compiler.into())
    }

    /// A source file named on the command line, by absolute path (as SMPI's
    /// drivers do with `readlink -f`); anything else unchanged.
    fn absolute_source(&self, arg: &str) -> String {
        if self.lang.is_source(arg) {
            if let Ok(p) = std::fs::canonicalize(arg) {
                return p.display().to_string();
            }
        }
        arg.to_string()
    }

    /// Runs the compiler on `args` (the driver's command line without the
    /// program name) and exits with its status. `extra` may add
    /// language-specific flags before the user's arguments (it gets the
    /// command, our include directory and the compiler); an `Err` from it is
    /// printed and ends the driver with status 1.
    pub(crate) fn run(
        &self,
        args: &[String],
        extra: impl FnOnce(&mut Command, &Path, &str) -> Result<(), String>,
    ) -> ! {
        if args.iter().any(|a| a == "--help" || a == "-help") {
            print!("{}", self.usage);
            std::process::exit(0);
        }
        let compiler = self.compiler();
        let pretend = std::env::var("SMPI_PRETEND_CC").is_ok_and(|v| v == "1");
        let compile_only = args
            .iter()
            .any(|a| a == "-c" || a == "-E" || a == "-S" || a == "-M" || a == "-MM");
        let mut cmd = Command::new(&compiler);
        let inc = include_dir();
        cmd.arg(format!("-I{}", inc.display()));
        // C and C++ files get the helper header (simulated sleep and clocks,
        // `exit` ending only the rank); Fortran has no preprocessor-level hook.
        if self.lang != Lang::Fortran && !pretend {
            cmd.arg("-include").arg(inc.join("smpi/smpi_helpers.h"));
        }
        if !pretend {
            cmd.arg("-fPIC");
            if let Err(e) = extra(&mut cmd, &inc, &compiler) {
                eprintln!("{}: {e}", self.tool);
                std::process::exit(1);
            }
        }
        if pretend {
            cmd.args(args);
        } else {
            cmd.args(args.iter().map(|a| self.absolute_source(a)));
        }
        if !compile_only
            && !pretend
            && !args.is_empty()
            && !args.iter().any(|a| a == "--version" || a == "-v")
        {
            cmd.arg("-shared");
            // Allow MPI symbols to stay undefined: smpirun provides them at load time.
            cmd.arg("-Wl,--allow-shlib-undefined");
        }
        if std::env::var("SMPI_VERBOSE").is_ok_and(|v| v == "1") {
            eprintln!("{}: {:?}", self.tool, cmd);
        }
        match cmd.status() {
            Ok(s) => std::process::exit(s.code().unwrap_or(1)),
            Err(e) => {
                eprintln!("{}: cannot run {compiler}: {e}", self.tool);
                std::process::exit(127);
            }
        }
    }
}
