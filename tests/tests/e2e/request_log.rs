//! `smpirun -request-log`: one line per send, receive and probe each rank posts, with
//! its simulated date, and `scripts/request_diff.py`, which compares two such logs (or
//! one with SimGrid's `smpi_request` verbose log) rank by rank. (An unwritable log path is
//! a user error: `tests/tests/e2e/cli.rs`.)

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use e2e_tests::{
    build_app, build_c, platform, run_command, scratch_path, workspace_root, write_scratch, Smpirun,
};

const TIMEOUT: Duration = Duration::from_secs(60);

/// One parsed log line.
#[derive(Debug, PartialEq)]
struct Line {
    date: f64,
    rank: u32,
    kind: String,
    size: u64,
    peer: i64,
    tag: i32,
    found: Option<bool>,
}

fn parse(path: &Path) -> Vec<Line> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            assert!(f.len() == 6 || f.len() == 7, "malformed line {l:?}");
            let field = |i: usize, key: &str| {
                f[i].strip_prefix(key)
                    .unwrap_or_else(|| panic!("{key} expected in {l:?}"))
                    .to_string()
            };
            Line {
                date: f[0].parse().unwrap(),
                rank: f[1].parse().unwrap(),
                kind: f[2].to_string(),
                size: field(3, "size=").parse().unwrap(),
                peer: field(4, "peer=").parse().unwrap(),
                tag: field(5, "tag=").parse().unwrap(),
                found: (f.len() == 7).then(|| field(6, "found=") == "1"),
            }
        })
        .collect()
}

fn ring_log(name: &str, laps: &str) -> PathBuf {
    let log = scratch_path(name);
    Smpirun::new(build_app("ring"))
        .platform(platform("cluster_4.toml"))
        .np(3)
        .opt("-request-log")
        .opt(log.as_os_str())
        .args(["-l", laps, "-s", "1000"])
        .timeout(TIMEOUT)
        .run()
        .assert_success();
    log
}

/// The ring on 3 ranks: every rank posts one receive of 1000 bytes from its predecessor
/// and one send to its successor per lap (tag = lap), at non-decreasing dates, rank 0's
/// send first. (The barrier before and the allreduce after add their own small messages.)
#[test]
fn ring_requests_are_logged_with_peers_sizes_and_dates() {
    let lines = parse(&ring_log("ring3.log", "4"));
    for rank in 0..3u32 {
        let mine: Vec<&Line> = lines.iter().filter(|l| l.rank == rank).collect();
        assert!(
            mine.windows(2).all(|w| w[0].date <= w[1].date),
            "rank {rank} dates go back: {mine:?}"
        );
        let (next, prev) = ((rank + 1) % 3, (rank + 2) % 3);
        let ring = |kind: &str| -> Vec<(i64, i32)> {
            mine.iter()
                .filter(|l| l.kind == kind && l.size == 1000)
                .map(|l| (l.peer, l.tag))
                .collect()
        };
        let laps: Vec<i32> = (0..4).collect();
        assert_eq!(
            ring("send"),
            laps.iter().map(|&t| (next as i64, t)).collect::<Vec<_>>(),
            "rank {rank}"
        );
        assert_eq!(
            ring("recv"),
            laps.iter().map(|&t| (prev as i64, t)).collect::<Vec<_>>(),
            "rank {rank}"
        );
    }
    let first = lines.iter().find(|l| l.size == 1000).unwrap();
    assert_eq!((first.rank, first.kind.as_str()), (0, "send"));
}

const PROBE_LATE: &str = r#"
#include <mpi.h>
#include <unistd.h>
int main(int argc, char **argv)
{
  int rank, flag = 0, v = 7;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 1) {
    usleep(1000);
    MPI_Send(&v, 1, MPI_INT, 0, 5, MPI_COMM_WORLD);
  } else {
    while (!flag)
      MPI_Iprobe(MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
    MPI_Recv(&v, 1, MPI_INT, 1, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  MPI_Finalize();
  return 0;
}
"#;

/// Probes are logged with their answer: rank 0 polls (ANY_SOURCE, peer -1) until rank 1's
/// message, sent after 1 ms, is there; only the last probe finds it, at or after 1 ms.
#[test]
fn probes_are_logged_with_their_answer() {
    let prog = build_c(&write_scratch("probe_late.c", PROBE_LATE));
    let log = scratch_path("probe_late.log");
    Smpirun::new(prog)
        .platform(platform("cluster_4.toml"))
        .np(2)
        .opt("-request-log")
        .opt(log.as_os_str())
        .timeout(TIMEOUT)
        .run()
        .assert_success();
    let lines = parse(&log);
    let probes: Vec<&Line> = lines.iter().filter(|l| l.kind == "iprobe").collect();
    assert!(probes.len() >= 2, "{lines:?}");
    assert!(probes.iter().all(|l| l.rank == 0 && l.peer == -1 && l.tag == 5));
    let (last, before) = probes.split_last().unwrap();
    assert_eq!(last.found, Some(true));
    assert!(last.date >= 1e-3, "found at {}", last.date);
    assert!(before.iter().all(|l| l.found == Some(false)), "{probes:?}");
    let send = lines.iter().find(|l| l.kind == "send").unwrap();
    assert_eq!((send.rank, send.peer, send.size, send.tag), (1, 0, 4, 5));
    assert!((send.date - 1e-3).abs() < 1e-12, "send posted at {}", send.date);
}

fn request_diff(a: &Path, b: &Path) -> (i32, String) {
    let mut c = Command::new("python3");
    c.arg(workspace_root().join("scripts/request_diff.py"))
        .arg(a)
        .arg(b);
    let out = run_command(c, TIMEOUT);
    (out.code.expect("exits"), out.stdout)
}

/// `scripts/request_diff.py`: two runs of one program are identical (exit 0); a run with
/// one more lap differs, first where the shorter run ends.
#[test]
fn request_diff_finds_where_two_runs_part() {
    let a = ring_log("ring3_a.log", "4");
    let b = ring_log("ring3_b.log", "4");
    let (code, out) = request_diff(&a, &b);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("identical"), "{out}");
    let c = ring_log("ring3_c.log", "5");
    let (code, out) = request_diff(&a, &c);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("3 ranks differ"), "{out}");
    assert!(
        out.contains("size=1000") && out.contains("tag=4"),
        "the fifth lap: {out}"
    );
}
