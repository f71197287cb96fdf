//! Programs that fail on purpose: the run must end (never hang: every run has
//! a timeout), exit non-zero, and say on stderr which rank failed and why.

use std::time::Duration;

use e2e_tests::{build_app, platform, RunOutput, Smpirun};

const TIMEOUT: Duration = Duration::from_secs(30);

fn run(app: &str, np: usize, args: &[&str]) -> RunOutput {
    Smpirun::new(build_app(app))
        .platform(platform("cluster_4.toml"))
        .np(np)
        .args(args.iter().copied())
        .timeout(TIMEOUT)
        .run()
}

/// The first stderr line mentioning `rank N` (followed by a non-digit).
#[track_caller]
fn line_naming_rank(out: &RunOutput, rank: usize) -> &str {
    let needle = format!("rank {rank}");
    out.stderr
        .lines()
        .find(|l| {
            l.match_indices(&needle)
                .any(|(i, _)| !l[i + needle.len()..].starts_with(|c: char| c.is_ascii_digit()))
        })
        .unwrap_or_else(|| panic!("no stderr line names {needle}\n{}", out.describe()))
}

#[test]
fn segfault_names_the_rank_and_sigsegv() {
    for np in [2, 4] {
        let out = run("crash_segv", np, &[]);
        out.assert_failure();
        let l = line_naming_rank(&out, 1);
        assert!(l.contains("SIGSEGV"), "{l}\n{}", out.describe());
        assert_eq!(
            out.code,
            Some(128 + 11),
            "exit code 128 + SIGSEGV\n{}",
            out.describe()
        );
        // output printed before the crash is not lost
        assert!(
            out.stdout.contains("crash_segv: rank 0 is in the barrier"),
            "{}",
            out.describe()
        );
    }
}

#[test]
fn abort_names_the_rank_and_abort() {
    let out = run("crash_abort", 4, &[]);
    out.assert_failure();
    let l = line_naming_rank(&out, 2);
    assert!(
        l.contains("abort") || l.contains("SIGABRT"),
        "{l}\n{}",
        out.describe()
    );
    assert_eq!(
        out.code,
        Some(128 + 6),
        "exit code 128 + SIGABRT\n{}",
        out.describe()
    );
}

#[test]
fn mpi_abort_exits_with_its_error_code() {
    let out = run("mpi_abort", 4, &[]);
    assert_eq!(
        out.code,
        Some(7),
        "MPI_Abort(..., 7) exits with 7\n{}",
        out.describe()
    );
    let l = line_naming_rank(&out, 1);
    assert!(
        l.contains("MPI_Abort") && l.contains('7'),
        "{l}\n{}",
        out.describe()
    );
}

#[test]
fn nonzero_return_from_main_is_the_exit_code() {
    let out = run("bad_return", 4, &[]);
    assert_eq!(
        out.code,
        Some(5),
        "return 5 from main exits with 5\n{}",
        out.describe()
    );
    let l = line_naming_rank(&out, 3);
    assert!(l.contains("return") && l.contains('5'), "{l}\n{}", out.describe());
    // The other ranks run to the end: their output after rank 3's return is kept.
    for r in [0, 1, 2] {
        assert!(
            out.stdout.contains(&format!("rank {r} done")),
            "rank {r}\n{}",
            out.describe()
        );
    }
    assert!(
        out.stderr.contains("simulated time"),
        "the run ends normally\n{}",
        out.describe()
    );
    // exit(7) from a rank: the same, with exit status 7.
    let out = run("bad_return", 4, &["exit"]);
    assert_eq!(out.code, Some(7), "exit(7) exits with 7\n{}", out.describe());
    assert!(line_naming_rank(&out, 3).contains("exit"), "{}", out.describe());
    assert_eq!(out.stdout.matches(" done").count(), 3, "{}", out.describe());
}

#[test]
fn deadlock_lists_the_blocked_ranks() {
    for np in [2, 4] {
        let out = run("deadlock", np, &[]);
        out.assert_failure();
        out.assert_stderr_has(&["deadlock"]);
        for (rank, peer) in [(0, 1), (1, 0)] {
            let l = line_naming_rank(&out, rank);
            for want in ["MPI_Recv", &format!("peer {peer}"), "tag 42"] {
                assert!(
                    l.contains(want),
                    "rank {rank}'s line lacks {want:?}: {l}\n{}",
                    out.describe()
                );
            }
        }
        // the other ranks finished: they are not listed as blocked
        for rank in 2..np {
            let needle = format!("rank {rank} ");
            assert!(
                !out.stderr.contains(&needle),
                "rank {rank} is not blocked\n{}",
                out.describe()
            );
        }
        assert!(!out.stdout.contains("was not blocked"), "{}", out.describe());
    }
}

#[test]
fn bad_rank_is_fatal_by_default() {
    let out = run("bad_args", 4, &[]);
    out.assert_failure();
    let l = line_naming_rank(&out, 1);
    assert!(
        l.contains("MPI_Send"),
        "names the function: {l}\n{}",
        out.describe()
    );
    assert!(
        l.contains('7'),
        "names the bad rank 7 (np + 3): {l}\n{}",
        out.describe()
    );
    assert!(
        !out.stdout.contains("bad_args: MPI_Send returned"),
        "MPI_Send must not return\n{}",
        out.describe()
    );
}

#[test]
fn bad_rank_returns_mpi_err_rank_with_errors_return() {
    let out = run("bad_args", 4, &["return"]);
    out.assert_ok();
    // MPI_ERR_RANK is 6 in mpi.h
    assert!(
        out.stdout.contains("bad_args: MPI_Send returned 6 class=6"),
        "{}",
        out.describe()
    );
}

#[test]
fn stack_overflow_names_the_rank_and_the_stack() {
    let out = run("stack_overflow", 2, &[]);
    out.assert_failure();
    let l = line_naming_rank(&out, 0);
    assert!(l.contains("stack"), "{l}\n{}", out.describe());
}

#[test]
fn stack_overflow_with_a_small_stack() {
    let out = Smpirun::new(build_app("stack_overflow"))
        .platform(platform("cluster_4.toml"))
        .np(1)
        .cfg("contexts/stack-size:256")
        .timeout(TIMEOUT)
        .run();
    out.assert_failure();
    let l = line_naming_rank(&out, 0);
    assert!(
        l.contains("stack") && l.contains("256"),
        "{l}\n{}",
        out.describe()
    );
}

#[test]
fn more_ranks_than_memory_mappings_allow_is_an_error_naming_the_limit() {
    let Some(limit) = std::fs::read_to_string("/proc/sys/vm/max_map_count")
        .ok()
        .and_then(|l| l.trim().parse::<usize>().ok())
    else {
        eprintln!("skipped: /proc/sys/vm/max_map_count is not readable here");
        return;
    };
    // A rank takes at least 7 mappings (program copy and stack): limit / 4
    // ranks need about twice the limit.
    let np = limit / 4;
    let out = run("ring", np, &[]);
    assert_eq!(out.code, Some(2), "{}", out.describe());
    out.assert_stderr_has(&[
        &format!("{np} ranks need about"),
        &format!("vm.max_map_count = {limit}"),
        "sysctl -w vm.max_map_count=",
        "-no-privatize",
    ]);
}

/// `apps/memory/big_globals.c` has 1 GiB of globals: private copies for more
/// ranks than the machine's available memory could hold if every rank wrote
/// them all get a warning naming the size and the knobs before the run, and
/// the run (which writes one page per rank) still works.
#[test]
fn globals_that_could_outgrow_memory_are_warned_of() {
    let Some(available_gib) = std::fs::read_to_string("/proc/meminfo").ok().and_then(|m| {
        let kib: u64 = m
            .lines()
            .find(|l| l.starts_with("MemAvailable:"))?
            .split_whitespace()
            .nth(1)?
            .parse()
            .ok()?;
        Some(kib >> 20)
    }) else {
        eprintln!("skipped: /proc/meminfo is not readable here");
        return;
    };
    let np = (available_gib as usize + 8).max(2);
    let prog = e2e_tests::build_c(&e2e_tests::apps_dir().join("memory/big_globals.c"));
    let out = Smpirun::new(&prog)
        .platform(platform("cluster_4.toml"))
        .np(np)
        .timeout(TIMEOUT)
        .run();
    out.assert_success();
    out.assert_stderr_has(&[
        "warning: the program's global variables take 1024.0 MiB per rank",
        &format!("{np} private copies"),
        "-no-privatize",
    ]);
    assert!(out.stdout.contains("OK"), "{}", out.describe());
    // Few ranks: no warning.
    let small = Smpirun::new(&prog)
        .platform(platform("cluster_4.toml"))
        .np(2)
        .timeout(TIMEOUT)
        .run();
    small.assert_success();
    assert!(
        !small.stderr.contains("global variables take"),
        "{}",
        small.describe()
    );
}
