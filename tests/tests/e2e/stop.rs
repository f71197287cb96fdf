//! Runs that do not end on their own stop cleanly (`apps/misuse/forever.c`):
//! `--sim-time-limit`, `--wall-time-limit`, SIGINT to smpirun, SIGTERM raised
//! by a rank. Each flushes every line the program printed, says why and
//! where each rank is, and exits with 124, 130 or 143.

use std::process::{Command, Stdio};
use std::time::Duration;

use e2e_tests::{apps_dir, build_c, platform, smpirun, RunOutput, Smpirun};

fn forever(opts: &[&str], mode: &str) -> RunOutput {
    let mut run = Smpirun::new(build_c(&apps_dir().join("misuse/forever.c")))
        .platform(platform("cluster_4.toml"))
        .np(2)
        .timeout(Duration::from_secs(60));
    for o in opts {
        run = run.opt(*o);
    }
    run.args([mode]).run()
}

#[track_caller]
fn both_lines_kept(out: &RunOutput) {
    for r in [0, 1] {
        assert!(
            out.stdout.contains(&format!("rank {r} started")),
            "rank {r}'s line\n{}",
            out.describe()
        );
    }
}

#[test]
fn a_simulated_time_limit_stops_the_run_and_says_where_each_rank_is() {
    let out = forever(&["--sim-time-limit", "0.01"], "mpi-loop");
    assert_eq!(out.code, Some(124), "{}", out.describe());
    both_lines_kept(&out);
    out.assert_stderr_has(&[
        "simulated time limit of 0.01 s reached",
        "rank 0",
        "in MPI_Barrier",
    ]);
}

#[test]
fn a_wall_time_limit_stops_even_a_rank_that_never_calls_mpi() {
    let out = forever(&["--wall-time-limit", "1"], "compute");
    assert_eq!(out.code, Some(124), "{}", out.describe());
    assert!(out.stdout.contains("started"), "{}", out.describe());
    out.assert_stderr_has(&[
        "wall-clock time limit of 1 s reached",
        "computing without calling MPI",
    ]);
}

#[test]
fn sigterm_raised_by_a_rank_stops_the_run_with_143() {
    let out = forever(&[], "raise");
    assert_eq!(out.code, Some(143), "{}", out.describe());
    both_lines_kept(&out);
    out.assert_stderr_has(&["terminated (SIGTERM)"]);
}

#[test]
fn sigint_to_smpirun_stops_the_run_with_130() {
    let child = Command::new(smpirun())
        .arg("-platform")
        .arg(platform("cluster_4.toml"))
        .args(["-np", "2"])
        .arg(build_c(&apps_dir().join("misuse/forever.c")))
        .arg("mpi-loop")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("smpirun starts");
    std::thread::sleep(Duration::from_millis(800));
    let killed = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(killed.success());
    let out = child.wait_with_output().expect("smpirun ends");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(130), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("rank 0 started") && stdout.contains("rank 1 started"),
        "{stdout}"
    );
    assert!(
        stderr.contains("interrupted (SIGINT)") && stderr.contains("in MPI_Barrier"),
        "{stderr}"
    );
}

/// `--json` is written on every ending: here a deadlock, with its status,
/// exit code and error, and the simulated time reached.
#[test]
fn json_is_written_when_the_run_fails() {
    let out = Smpirun::new(e2e_tests::build_app("deadlock"))
        .platform(platform("cluster_4.toml"))
        .np(2)
        .json()
        .run();
    assert_eq!(out.code, Some(3), "{}", out.describe());
    let j = out.json();
    assert_eq!(j["status"], "deadlock", "{j:#}");
    assert_eq!(j["exit_code"], 3, "{j:#}");
    assert!(
        j["error"].as_str().is_some_and(|e| e.contains("deadlock")),
        "{j:#}"
    );
    assert!(j["simulated_time"].as_f64().is_some(), "{j:#}");
    assert!(j["host"]["wall_time"].as_f64().is_some(), "{j:#}");
}
