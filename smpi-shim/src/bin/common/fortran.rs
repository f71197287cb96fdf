//! The Fortran part of `smpif90` and `smpiff` (the two differ only by name):
//! their entry point, compiler flags and the `mpi` module.
//!
//! `use mpi` needs `mpi.mod`, which only the compiler that reads it can
//! write (its format changes between gfortran versions). So the driver
//! compiles `include/mpi.f90` on first use into a cache directory named after
//! a hash of the compiler's version and of `mpi.f90` + `mpif.h`, and adds
//! `-I<that directory>`. The cache is `$SMPI_FORTRAN_CACHE`, else
//! `$XDG_CACHE_HOME/smpi-rs`, else `~/.cache/smpi-rs`. Concurrent drivers
//! are safe: each compiles into its own temporary directory and renames it
//! into place; the loser of a race drops its copy.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::driver;

/// The `--help` text of `tool`.
fn usage(tool: &str) -> String {
    format!(
        "\
{tool}: compile a Fortran MPI program for smpirun

Usage: {tool} [gfortran options] <files...> [-o <output>]

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
"
    )
}

/// The `main` of the Fortran driver named `tool`.
pub(crate) fn run(tool: &'static str) {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // The driver keeps its help text for the whole (short) process.
    let usage: &'static str = Box::leak(usage(tool).into_boxed_str());
    let driver = driver::Driver {
        tool,
        lang: driver::Lang::Fortran,
        compiler_var: "SMPI_FC",
        default_compiler: "gfortran",
        usage,
    };
    driver.run(&args, add_flags)
}

/// 64-bit FNV-1a: a stable hash for the cache key (std's hasher is not
/// stable across Rust releases).
fn fnv1a(bytes: &[u8], mut h: u64) -> u64 {
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// `<compiler> --version`'s first line, e.g. `GNU Fortran (Debian 12.2.0-14) 12.2.0`.
fn compiler_version(compiler: &str) -> Result<String, String> {
    let out = Command::new(compiler).arg("--version").output().map_err(|e| {
        format!("cannot run the Fortran compiler {compiler}: {e} (set SMPI_FC, or install gfortran)")
    })?;
    let text = String::from_utf8_lossy(&out.stdout);
    Ok(text.lines().next().unwrap_or("").to_string())
}

/// The major version of a GNU Fortran `--version` line (`None` for other compilers).
fn gfortran_major(version: &str) -> Option<u32> {
    if !version.contains("GNU Fortran") {
        return None;
    }
    let last = version.split_whitespace().last()?;
    last.split('.').next()?.parse().ok()
}

fn cache_root() -> PathBuf {
    if let Some(p) = std::env::var_os("SMPI_FORTRAN_CACHE") {
        return p.into();
    }
    if let Some(p) = std::env::var_os("XDG_CACHE_HOME") {
        return PathBuf::from(p).join("smpi-rs");
    }
    if let Some(home) = std::env::var_os("HOME") {
        return PathBuf::from(home).join(".cache/smpi-rs");
    }
    std::env::temp_dir().join("smpi-rs-cache")
}

/// The directory holding `mpi.mod` for `compiler`, compiling it if needed.
fn module_dir(compiler: &str, version: &str, inc: &Path) -> Result<PathBuf, String> {
    let src = inc.join("mpi.f90");
    let read = |p: &Path| std::fs::read(p).map_err(|e| format!("cannot read {}: {e}", p.display()));
    let mut h = fnv1a(compiler.as_bytes(), 0xcbf2_9ce4_8422_2325);
    h = fnv1a(version.as_bytes(), h);
    h = fnv1a(&read(&src)?, h);
    h = fnv1a(&read(&inc.join("mpif.h"))?, h);
    let root = cache_root();
    let dir = root.join(format!("fortran-{h:016x}"));
    if dir.join("mpi.mod").exists() {
        return Ok(dir);
    }
    std::fs::create_dir_all(&root)
        .map_err(|e| format!("cannot create the module cache {}: {e}", root.display()))?;
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let tmp = root.join(format!("tmp-{}-{nanos}", std::process::id()));
    std::fs::create_dir_all(&tmp).map_err(|e| format!("cannot create {}: {e}", tmp.display()))?;
    let out = Command::new(compiler)
        .arg("-c")
        .arg("-fPIC")
        .arg(format!("-I{}", inc.display()))
        .arg(format!("-J{}", tmp.display()))
        .arg(&src)
        .arg("-o")
        .arg(tmp.join("mpi.o"))
        .output()
        .map_err(|e| format!("cannot run {compiler}: {e}"))?;
    if !out.status.success() || !tmp.join("mpi.mod").exists() {
        let _ = std::fs::remove_dir_all(&tmp);
        return Err(format!(
            "{compiler} could not compile the mpi module {}:\n{}",
            src.display(),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    // Atomic publication: a concurrent driver may have won the race, then its
    // (identical) directory stays and ours goes.
    if std::fs::rename(&tmp, &dir).is_err() {
        let _ = std::fs::remove_dir_all(&tmp);
        if !dir.join("mpi.mod").exists() {
            return Err(format!("cannot install the mpi module into {}", dir.display()));
        }
    }
    Ok(dir)
}

/// Adds the Fortran flags: the `mpi` module's directory and, for gfortran ≥
/// 10, `-fallow-argument-mismatch` (MPI routines take buffers of any type, so
/// one file passes them different types: an error by default since gfortran
/// 10; MPICH and Open MPI ask for the same flag).
pub(crate) fn add_flags(cmd: &mut Command, inc: &Path, compiler: &str) -> Result<(), String> {
    let version = compiler_version(compiler)?;
    if gfortran_major(&version).is_some_and(|m| m >= 10) {
        cmd.arg("-fallow-argument-mismatch");
    }
    let dir = module_dir(compiler, &version, inc)?;
    cmd.arg(format!("-I{}", dir.display()));
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn gfortran_major_reads_the_last_word() {
        assert_eq!(
            super::gfortran_major("GNU Fortran (Debian 12.2.0-14+deb12u1) 12.2.0"),
            Some(12)
        );
        assert_eq!(super::gfortran_major("ifx (IFX) 2024.0.0"), None);
    }
}
