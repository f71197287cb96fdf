//! One-sided communication (`apps/rma/rma.c`): every synchronization mode
//! (fence, locks, post-start-complete-wait, lock_all with flushes), the
//! atomics, shared and dynamic windows give the right data; fence epochs take
//! SMPI 3.32's simulated times; misuse (an access outside the window, outside
//! any epoch, on a freed window) ends the run naming the rank, the call and
//! the bad argument.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

use e2e_tests::{build_app, platform, run_command, scratch_dir, RunOutput, Smpirun, DEFAULT_TIMEOUT};

fn run(mode: &str, np: usize, arg: Option<&str>) -> RunOutput {
    Smpirun::new(build_app("rma/rma"))
        .platform(platform("fat_tree.toml"))
        .np(np)
        .cfg("smpi/simulate-computation:no")
        .args(std::iter::once(mode).chain(arg))
        .run()
}

/// Every rank printed `[<rank>] <mode> ok`.
#[track_caller]
fn assert_every_rank_ok(out: &RunOutput, mode: &str, np: usize) {
    out.assert_success();
    for r in 0..np {
        let want = format!("[{r}] {mode} ok");
        assert!(
            out.stdout.lines().any(|l| l.starts_with(&want)),
            "rank {r} did not report {mode} ok\n{}",
            out.describe()
        );
    }
    assert!(!out.stdout.contains("FAILED"), "{}", out.describe());
}

#[test]
fn fence_epochs_move_the_data_of_put_get_and_accumulate() {
    for bytes in ["8", "1024", "200000"] {
        assert_every_rank_ok(&run("fence", 5, Some(bytes)), "fence", 5);
    }
}

#[test]
fn exclusive_locks_serialize_a_shared_counter_and_lock_all_accumulates_add_up() {
    assert_every_rank_ok(&run("lock", 6, Some("25")), "lock", 6);
}

#[test]
fn post_start_complete_wait_and_win_test_deliver_the_puts() {
    assert_every_rank_ok(&run("pscw", 4, Some("5000")), "pscw", 4);
}

#[test]
fn fetch_and_op_compare_and_swap_and_get_accumulate_are_atomic() {
    assert_every_rank_ok(&run("atomics", 7, None), "atomics", 7);
}

#[test]
fn shared_windows_are_loads_and_stores_and_dynamic_windows_take_addresses() {
    assert_every_rank_ok(&run("shared", 4, None), "shared", 4);
    assert_every_rank_ok(&run("dynamic", 4, None), "dynamic", 4);
}

#[test]
fn an_access_beyond_the_target_window_names_rank_call_target_and_range() {
    let out = run("range", 2, None);
    out.assert_failure().assert_stderr_has(&[
        "rank 0",
        "MPI_Put",
        "access to rank 1 reaches bytes 16..20 of its window",
        "which has 16 bytes",
        "MPI_ERR_RMA_RANGE",
    ]);
}

#[test]
fn an_access_outside_any_epoch_is_an_rma_sync_error() {
    let out = run("epoch", 2, None);
    out.assert_failure().assert_stderr_has(&[
        "rank 0",
        "MPI_Put",
        "outside an access epoch",
        "MPI_ERR_RMA_SYNC",
    ]);
}

#[test]
fn a_freed_window_is_an_error_not_a_crash() {
    let out = run("freed", 2, None);
    out.assert_failure()
        .assert_stderr_has(&["rank 0", "MPI_Win_fence", "freed", "MPI_ERR_WIN"]);
}

#[test]
fn a_window_at_a_null_base_is_an_error() {
    let out = run("null-base", 2, None);
    out.assert_failure().assert_stderr_has(&[
        "MPI_Win_create",
        "null base for a window of 64 bytes",
        "MPI_ERR_BASE",
    ]);
}

#[test]
fn freeing_a_window_with_an_unclosed_epoch_is_an_error() {
    let out = run("unclosed", 2, None);
    out.assert_failure().assert_stderr_has(&[
        "rank 0",
        "MPI_Win_free",
        "1 RMA operation(s) issued since the last synchronization",
        "MPI_ERR_RMA_SYNC",
    ]);
}

#[test]
fn same_inputs_give_identical_output() {
    let a = run("atomics", 5, None);
    let b = run("atomics", 5, None);
    assert_eq!(a.stdout, b.stdout);
}

// ------------------------------------------------------------------ SMPI 3.32's times

/// `rma.c` built with SimGrid's smpicc, when SimGrid is installed.
fn simgrid_build() -> Option<(PathBuf, PathBuf)> {
    let (cc, run) = (Path::new("/usr/bin/smpicc"), Path::new("/usr/bin/smpirun"));
    if !cc.exists() || !run.exists() {
        eprintln!("skipped: SimGrid 3.32 is not installed (/usr/bin/smpicc, /usr/bin/smpirun)");
        return None;
    }
    static BUILT: Mutex<Option<PathBuf>> = Mutex::new(None);
    let mut built = BUILT.lock().unwrap_or_else(|e| e.into_inner());
    if built.is_none() {
        let exe = scratch_dir().join("rma_smpi");
        let mut c = Command::new(cc);
        c.arg("-O2")
            .arg(e2e_tests::apps_dir().join("rma/rma.c"))
            .arg("-o")
            .arg(&exe);
        let out = run_command(c, DEFAULT_TIMEOUT);
        assert_eq!(out.code, Some(0), "SimGrid's smpicc failed\n{}", out.describe());
        *built = Some(exe);
    }
    Some((built.clone().expect("built above"), run.to_path_buf()))
}

/// The `[rank] fence ok: ...` lines, sorted by rank.
fn fence_lines(stdout: &str) -> Vec<String> {
    let mut v: Vec<String> = stdout
        .lines()
        .filter(|l| l.contains("fence ok"))
        .map(str::to_string)
        .collect();
    v.sort();
    v
}

#[test]
fn fence_epoch_times_equal_smpi_3_32() {
    let Some((exe, sg_run)) = simgrid_build() else {
        return;
    };
    let xml = platform("fat_tree_64.xml");
    for bytes in ["1024", "100000"] {
        let mut c = Command::new(&sg_run);
        c.current_dir(scratch_dir())
            .arg("-np")
            .arg("4")
            .arg("-platform")
            .arg(&xml)
            .arg("--cfg=smpi/simulate-computation:no")
            .arg(&exe)
            .arg("fence")
            .arg(bytes);
        let theirs = run_command(c, DEFAULT_TIMEOUT);
        assert_eq!(theirs.code, Some(0), "SMPI run failed\n{}", theirs.describe());
        let ours = Smpirun::new(build_app("rma/rma"))
            .platform(&xml)
            .np(4)
            .cfg("smpi/simulate-computation:no")
            .args(["fence", bytes])
            .run();
        ours.assert_success();
        let (a, b) = (fence_lines(&ours.stdout), fence_lines(&theirs.stdout));
        assert_eq!(a.len(), 4, "{}", ours.describe());
        assert_eq!(
            a, b,
            "fence times differ from SMPI 3.32's ({bytes} bytes)\nours:\n{}\nSMPI:\n{}",
            ours.stdout, theirs.stdout
        );
    }
}
