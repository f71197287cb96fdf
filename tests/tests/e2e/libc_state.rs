//! Per-rank libc state (`apps/libc/libc_state.c`): on 32 ranks, each parses
//! its own options with getopt_long and getopt (MPI calls between options and
//! inside an option group), draws glibc's own rand()/drand48() sequences for
//! its seed, tokenizes with strtok and keeps its errno across MPI calls.
//! Also: glibc's messages for bad options, and `mpi.h` before `<getopt.h>`.

use std::process::Command;

use e2e_tests::{apps_dir, build_c, platform, run_command, scratch_dir, RunOutput, Smpirun, DEFAULT_TIMEOUT};

const RANKS: usize = 32;

fn run(args: &[&str]) -> RunOutput {
    Smpirun::new(build_c(&apps_dir().join("libc/libc_state.c")))
        .platform(platform("fat_tree.toml"))
        .np(RANKS)
        .args(args.iter().copied())
        .run()
}

/// Lines of rank `rank` that start with `[rank] what`.
fn line_of<'a>(out: &'a RunOutput, rank: usize, what: &str) -> &'a str {
    let prefix = format!("[{rank}] {what}");
    out.stdout
        .lines()
        .find(|l| l.starts_with(&prefix))
        .unwrap_or_else(|| panic!("no `{prefix}` line\n{}", out.describe()))
}

#[test]
fn every_rank_has_its_own_getopt_rand_strtok_and_errno() {
    let out = run(&["-n", "7", "-vq", "--size", "3", "--flag", "input.dat"]);
    out.assert_success();
    // glibc's own sequences, from a plain process per seed.
    let reference = scratch_dir().join("libc_state_reference");
    let mut cc = Command::new("cc");
    cc.arg("-O2")
        .arg(apps_dir().join("libc/libc_state_reference.c"))
        .arg("-o")
        .arg(&reference);
    let built = run_command(cc, DEFAULT_TIMEOUT);
    assert!(built.status.success(), "{}", built.describe());
    for rank in 0..RANKS {
        assert_eq!(
            line_of(&out, rank, "n="),
            format!("[{rank}] n=7 verbose=1 quiet=1 size=3 flag=1 operand=input.dat")
        );
        assert_eq!(
            line_of(&out, rank, "x="),
            format!("[{rank}] x={rank} y=1 z=1 rest=rest")
        );
        assert_eq!(
            line_of(&out, rank, "tokens"),
            format!("[{rank}] tokens a{rank} b{rank} c{rank}")
        );
        assert_eq!(
            line_of(&out, rank, "errno"),
            format!("[{rank}] errno {}", 100 + rank)
        );
        let mut cmd = Command::new(&reference);
        cmd.arg(rank.to_string());
        let alone = run_command(cmd, DEFAULT_TIMEOUT);
        assert_eq!(
            line_of(&out, rank, "rand"),
            alone.stdout.trim_end(),
            "rank {rank}'s rand/drand48"
        );
    }
}

#[test]
fn a_bad_option_gets_glibcs_message() {
    let out = run(&["-n", "7", "--sise=3"]);
    // The program aborts on '?' after getopt_long printed its message.
    out.assert_failure();
    assert!(
        out.stderr.contains("libc_state: unrecognized option '--sise=3'"),
        "{}",
        out.describe()
    );
    assert!(out.stdout.contains("getopt_long failed"), "{}", out.describe());
}
