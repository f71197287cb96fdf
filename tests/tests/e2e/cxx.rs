//! C++ programs through `smpicxx` (`apps/cxx/`): the shared object links the
//! C++ runtime, iostream output of every rank arrives, global constructors
//! run once per rank on the rank's own globals, and exceptions propagate;
//! MPI's C++ bindings (`MPI::`, include/mpicxx.h) work and can be left out.

use e2e_tests::{apps_dir, build_with, Smpirun};

#[test]
fn cxx_program_with_iostream_exceptions_and_global_constructors_runs_on_every_rank() {
    let src = apps_dir().join("cxx/hello.cpp");
    let prog = build_with("smpicxx", &[&src], &["-O2", "-Wall", "-Werror"], "cxx_hello");
    let out = Smpirun::new(&prog)
        .platform(e2e_tests::platform("cluster_4.toml"))
        .np(4)
        .cfg("smpi/simulate-computation:no")
        .run();
    out.assert_success();
    for r in 0..4 {
        let left = (r + 3) % 4;
        let line = format!("cxx rank={r} ctor_runs=1 caught=\"division by zero\" left=rank{left} sum=6");
        assert!(
            out.stdout.lines().any(|l| l == line),
            "missing `{line}`\n{}",
            out.describe()
        );
    }
    assert!(out.stdout.lines().any(|l| l == "OK"), "{}", out.describe());
}

#[test]
fn smpicxx_help_names_the_compiler_variable() {
    let mut cmd = std::process::Command::new(e2e_tests::bin_dir().join("smpicxx"));
    cmd.arg("--help");
    let r = e2e_tests::run_command(cmd, e2e_tests::DEFAULT_TIMEOUT);
    assert_eq!(r.code, Some(0), "{}", r.describe());
    assert!(r.stdout.contains("SMPI_CXX"), "{}", r.describe());
}

#[test]
fn mpi2_cxx_bindings_communicate_build_types_and_throw_exceptions() {
    let src = apps_dir().join("cxx/bindings.cpp");
    let prog = build_with(
        "smpicxx",
        &[&src],
        &["-O2", "-Wall", "-Wextra", "-Werror"],
        "cxx_bindings",
    );
    let out = Smpirun::new(&prog)
        .platform(e2e_tests::platform("cluster_4.toml"))
        .np(4)
        .cfg("smpi/simulate-computation:no")
        .run();
    out.assert_success();
    for r in 0..4 {
        let line = format!("cxx bindings rank={r} ring=1 vector=1 absmax=3 comms=1 exception=MPI_ERR_RANK");
        assert!(
            out.stdout.lines().any(|l| l == line),
            "missing `{line}`\n{}",
            out.describe()
        );
    }
    assert!(out.stdout.lines().any(|l| l == "OK"), "{}", out.describe());
}

#[test]
fn a_cxx_program_can_leave_the_cxx_bindings_out() {
    // MPICH_SKIP_MPICXX (or OMPI_SKIP_MPICXX) keeps mpicxx.h out, as with MPICH and Open MPI.
    let src = apps_dir().join("cxx/hello.cpp");
    let prog = build_with(
        "smpicxx",
        &[&src],
        &["-O2", "-Wall", "-Werror", "-DMPICH_SKIP_MPICXX"],
        "cxx_hello_skip",
    );
    let out = Smpirun::new(&prog)
        .platform(e2e_tests::platform("cluster_4.toml"))
        .np(2)
        .cfg("smpi/simulate-computation:no")
        .run();
    out.assert_success();
    assert!(out.stdout.lines().any(|l| l == "OK"), "{}", out.describe());
}
