//! `smpi-study run` and `report` end to end, on the local executor (the Slurm executor is
//! tested against a real Slurm in `tests/tests/e2e/study.rs`):
//!
//! - a study with 2 axes (2 and 3 values) × 2 replicas gives 12 rows, in a randomized order;
//!   run again, nothing is redone; run elsewhere, the same rows; stopped with SIGTERM and then
//!   killed with SIGKILL half-way, it resumes without redoing finished runs and ends with the
//!   same 12 rows;
//! - a failing point is a row with its exit code and stderr tail, the others are kept;
//! - the taper study: live on a small fat tree (HPL's median Gflops do not increase with the
//!   taper; spreads and plots reported), and the committed results of `studies/taper.toml`
//!   (20 rows, medians not increasing from 8 to 1 top-level switches, the report's PNGs).
//!
//! Needs `target/release/smpicc` and `smpirun` (`cargo build --release -p smpi-shim`); the HPL
//! tests build HPL with `apps/hpl/build.sh` when needed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use study::results::{read_jsonl, Row, Status};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace")
        .to_path_buf()
}

fn study_exe() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_smpi-study"))
}

/// `target/release/` (smpirun, smpicc): next to the smpi-study binary.
fn tool(name: &str) -> PathBuf {
    let p = study_exe().parent().expect("a directory").join(name);
    assert!(
        p.exists(),
        "{} not found: cargo build --release -p smpi-shim first",
        p.display()
    );
    p
}

/// A fresh `$TMPDIR/smpi-study-test-<pid>/<name>`; the directories of test
/// processes that have exited are removed first (a failed run's files stay
/// until the next run).
fn scratch(name: &str) -> PathBuf {
    let tmp = std::env::temp_dir();
    let prefix = "smpi-study-test-";
    for e in std::fs::read_dir(&tmp).into_iter().flatten().flatten() {
        let file = e.file_name().to_string_lossy().into_owned();
        let pid = file
            .strip_prefix(prefix)
            .and_then(|r| r.split('-').next())
            .unwrap_or("");
        if pid.parse::<u32>().is_ok()
            && pid != std::process::id().to_string()
            && !std::path::Path::new("/proc").join(pid).exists()
        {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
    let d = tmp.join(format!("{prefix}{}", std::process::id())).join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("scratch dir");
    d
}

/// `apps/pingpong.c` built once with smpicc.
fn pingpong() -> PathBuf {
    static P: OnceLock<PathBuf> = OnceLock::new();
    P.get_or_init(|| {
        let dir = scratch("bin");
        let out = dir.join("pingpong");
        let o = Command::new(tool("smpicc"))
            .args(["-O2"])
            .arg(root().join("apps/pingpong.c"))
            .arg("-o")
            .arg(&out)
            .output()
            .expect("smpicc runs");
        assert!(
            o.status.success(),
            "smpicc failed: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        out
    })
    .clone()
}

/// HPL, built once (apps/hpl/build.sh is a no-op when it is built).
fn xhpl() -> PathBuf {
    static LOCK: Mutex<()> = Mutex::new(());
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let p = root().join("apps/hpl/build/xhpl");
    if !p.exists() {
        let o = Command::new(root().join("apps/hpl/build.sh"))
            .arg(tool("smpicc"))
            .output()
            .expect("build.sh runs");
        assert!(
            o.status.success(),
            "apps/hpl/build.sh failed: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    p
}

fn run_study(args: &[&str]) -> Output {
    let o = Command::new(study_exe())
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("smpi-study runs");
    eprintln!(
        "smpi-study {}\n--- stderr ---\n{}--- stdout ---\n{}",
        args.join(" "),
        String::from_utf8_lossy(&o.stderr),
        String::from_utf8_lossy(&o.stdout)
    );
    o
}

fn rows(dir: &Path) -> Vec<Row> {
    read_jsonl(&dir.join("results.jsonl")).expect("results.jsonl reads")
}

/// What must be identical between two runs of the same study: point, replica, order,
/// parameters, perturbation, simulated time, metrics.
type Essence = (String, u32, usize, String, String, String, String);

fn essence(r: &Row) -> Essence {
    (
        r.point_id.clone(),
        r.replica,
        r.order,
        serde_json::to_string(&r.params).unwrap(),
        serde_json::to_string(&r.perturbation).unwrap(),
        format!("{:?}", r.simulated_time),
        format!("{:?}", r.metrics),
    )
}

fn by_id(rows: &[Row]) -> BTreeMap<String, Essence> {
    rows.iter().map(|r| (r.run_id.clone(), essence(r))).collect()
}

const TWELVE: &str = r#"
name = "twelve"
description = "2 axes (2 and 3 values) x 2 replicas"
seed = 11
np = 2
placement = "spread"
timeout = 120

[cfg]
"smpi/simulate-computation" = "no"

[program]
path = "PINGPONG"
args = ["-i", "3", "{size}"]
[program.params]
size = "1"
[[program.metric]]
name = "one_way"
line = "pingpong"
unit = "s"

[platform]
kind = "fat_tree"
levels = 2
down = [4, 4]
up = [1, 2]
bw = "10GBps"
lat = "1us"

[replicas]
count = 2
perturb = ["latency"]

[[axis]]
name = "size"
key = "param.size"
values = ["1k", "1M"]

[[axis]]
name = "bandwidth"
key = "platform.bw"
values = ["1GBps", "5GBps", "10GBps"]
"#;

fn line_count(p: &Path) -> usize {
    std::fs::read_to_string(p).map(|t| t.lines().count()).unwrap_or(0)
}

/// Starts `smpi-study run` and waits until results.jsonl has `n` lines (or the run ends).
fn start_until(args: &[&str], jsonl: &Path, n: usize) -> Child {
    let mut child = Command::new(study_exe())
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("smpi-study starts");
    let t0 = Instant::now();
    while line_count(jsonl) < n {
        assert!(
            child.try_wait().unwrap().is_none(),
            "smpi-study ended before {n} rows"
        );
        assert!(t0.elapsed() < Duration::from_secs(120), "no {n} rows after 120 s");
        std::thread::sleep(Duration::from_millis(5));
    }
    child
}

/// Processes whose command line mentions `needle` (read from /proc).
fn processes_mentioning(needle: &str) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        if e.file_name().to_string_lossy().parse::<u32>().is_err() {
            continue;
        }
        if let Ok(c) = std::fs::read(e.path().join("cmdline")) {
            let c = String::from_utf8_lossy(&c).replace('\0', " ");
            if c.contains(needle) {
                out.push(c);
            }
        }
    }
    out
}

#[test]
fn twelve_runs_random_order_rerun_and_resume() {
    let dir = scratch("twelve");
    let study = dir.join("twelve.toml");
    std::fs::write(
        &study,
        TWELVE.replace("PINGPONG", &pingpong().display().to_string()),
    )
    .unwrap();
    let a = dir.join("a");
    let study_s = study.to_str().unwrap();

    // A full run: 12 rows, every run once, in a randomized order.
    let o = run_study(&["run", study_s, "-o", a.to_str().unwrap(), "-j", "2"]);
    assert!(o.status.success());
    let ra = rows(&a);
    assert_eq!(ra.len(), 12);
    assert!(ra
        .iter()
        .all(|r| r.status == Status::Ok && r.metrics.contains_key("one_way")));
    let ids = by_id(&ra);
    assert_eq!(ids.len(), 12, "12 distinct runs");
    let mut orders: Vec<usize> = ra.iter().map(|r| r.order).collect();
    orders.sort();
    assert_eq!(orders, (0..12).collect::<Vec<_>>());
    // The design order is size-major, then bandwidth, then replica; the run order is not.
    let sizes = ["1k", "1M"];
    let bws = ["1GBps", "5GBps", "10GBps"];
    let design_index = |r: &Row| {
        let s = sizes.iter().position(|x| *x == r.axes["size"]).unwrap();
        let b = bws.iter().position(|x| *x == r.axes["bandwidth"]).unwrap();
        (s * 3 + b) * 2 + r.replica as usize
    };
    let mut by_order = ra.clone();
    by_order.sort_by_key(|r| r.order);
    let seq: Vec<usize> = by_order.iter().map(design_index).collect();
    assert_ne!(seq, (0..12).collect::<Vec<_>>(), "runs went in design order");
    let points: std::collections::BTreeSet<_> = ra.iter().map(|r| r.point_id.clone()).collect();
    assert_eq!(points.len(), 6);
    for p in &points {
        let reps: Vec<&Row> = ra.iter().filter(|r| &r.point_id == p).collect();
        assert_eq!(reps.len(), 2);
        assert_ne!(
            reps[0].perturbation.latency_factor,
            reps[1].perturbation.latency_factor
        );
    }
    let csv = std::fs::read_to_string(a.join("results.csv")).unwrap();
    assert_eq!(csv.lines().count(), 13, "header + 12 rows:\n{csv}");

    // Again on the same results: nothing to do, nothing changes.
    let before = std::fs::read(a.join("results.jsonl")).unwrap();
    let o = run_study(&["run", study_s, "-o", a.to_str().unwrap()]);
    assert!(o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("12 already done, 0 to run"));
    assert_eq!(std::fs::read(a.join("results.jsonl")).unwrap(), before);

    // Elsewhere: the same rows.
    let b = dir.join("b");
    assert!(run_study(&["run", study_s, "-o", b.to_str().unwrap(), "-j", "2"])
        .status
        .success());
    assert_eq!(by_id(&rows(&b)), ids, "a rerun gives the same rows");

    // Interrupted twice, then resumed. A slow smpirun (sleeps 0.25 s first) gives time to stop it.
    let slow = dir.join("slow-smpirun");
    std::fs::write(
        &slow,
        format!(
            "#!/bin/sh\nsleep 0.25\nexec {} \"$@\"\n",
            tool("smpirun").display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&slow, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let c = dir.join("c");
    let jsonl = c.join("results.jsonl");
    let args = [
        "run",
        study_s,
        "-o",
        c.to_str().unwrap(),
        "-j",
        "1",
        "--smpirun",
        slow.to_str().unwrap(),
    ];

    let child = start_until(&args, &jsonl, 3);
    Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "SIGTERM: exit 130\n{stderr}");
    assert!(
        stderr.contains("run the same command again to resume"),
        "{stderr}"
    );
    let k1 = rows(&c).len();
    assert!((3..12).contains(&k1), "{k1} rows after SIGTERM");
    assert_eq!(line_count(&jsonl), k1, "no torn lines");

    let mut child = start_until(&args, &jsonl, k1 + 2);
    child.kill().unwrap(); // SIGKILL: no chance to clean up
    child.wait().unwrap();
    let k2 = rows(&c).len();
    assert!(k2 > k1 && k2 < 12, "{k2} rows after SIGKILL (had {k1})");
    // The simulations died with it (PR_SET_PDEATHSIG): none is left writing into c/.
    std::thread::sleep(Duration::from_millis(500));
    let left: Vec<String> = processes_mentioning(&c.join("runs").display().to_string())
        .into_iter()
        .filter(|p| p.contains("smpirun"))
        .collect();
    assert!(left.is_empty(), "orphan simulations: {left:?}");

    let o = run_study(&args);
    assert!(o.status.success());
    assert!(
        String::from_utf8_lossy(&o.stderr).contains(&format!("{k2} already done, {} to run", 12 - k2)),
        "the resume redoes only the missing runs"
    );
    let rc = rows(&c);
    assert_eq!(rc.len(), 12, "no run twice");
    assert_eq!(
        by_id(&rc),
        ids,
        "the resumed study has the rows of the uninterrupted one"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_failing_point_is_recorded_with_its_error() {
    let dir = scratch("failing");
    let study = dir.join("failing.toml");
    let text = TWELVE
        .replace("PINGPONG", &pingpong().display().to_string())
        .replace("name = \"twelve\"", "name = \"failing\"")
        .replace("values = [\"1k\", \"1M\"]", "values = [\"1k\", \"oops\"]")
        .replace(
            "values = [\"1GBps\", \"5GBps\", \"10GBps\"]",
            "values = [\"1GBps\"]",
        )
        .replace("count = 2", "count = 1")
        .replace("perturb = [\"latency\"]", "");
    std::fs::write(&study, text).unwrap();
    let out = dir.join("out");
    let o = run_study(&["run", study.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    assert!(o.status.success(), "every run has a row: exit 0");
    assert!(String::from_utf8_lossy(&o.stdout).contains("1 runs failed"));
    let r = rows(&out);
    assert_eq!(r.len(), 2);
    let bad = r.iter().find(|r| r.axes["size"] == "oops").unwrap();
    let good = r.iter().find(|r| r.axes["size"] == "1k").unwrap();
    assert_eq!(good.status, Status::Ok);
    assert_eq!(bad.status, Status::Failed);
    assert_eq!(bad.exit_code, Some(2));
    assert!(
        bad.error.as_deref().unwrap().contains("exited with code 2"),
        "{:?}",
        bad.error
    );
    assert!(
        bad.stderr_tail.as_deref().unwrap().contains("bad size 'oops'"),
        "{:?}",
        bad.stderr_tail
    );
    assert!(std::fs::read_to_string(out.join("results.csv"))
        .unwrap()
        .contains("exited with code 2"));
    // Not redone, unless asked.
    let o = run_study(&["run", study.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("2 already done, 0 to run"));
    let o = run_study(&[
        "run",
        study.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--retry-failed",
    ]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("1 already done, 1 to run"));
    assert_eq!(rows(&out).len(), 2);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Medians of `gflops` per value of `axis`.
fn medians(rows: &[Row], axis: &str) -> BTreeMap<String, (f64, f64, f64, usize)> {
    let mut by: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for r in rows.iter().filter(|r| r.status == Status::Ok) {
        by.entry(r.axes[axis].clone())
            .or_default()
            .push(r.metrics["gflops"]);
    }
    by.into_iter()
        .map(|(k, mut v)| {
            v.sort_by(f64::total_cmp);
            let n = v.len();
            let m = if n % 2 == 1 {
                v[n / 2]
            } else {
                (v[n / 2 - 1] + v[n / 2]) / 2.0
            };
            (k, (m, v[0], v[n - 1], n))
        })
        .collect()
}

/// A PNG's width and height (IHDR), after checking the signature.
fn png_size(p: &Path) -> (u32, u32) {
    let b = std::fs::read(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    assert!(b.len() > 10_000, "{} is only {} bytes", p.display(), b.len());
    assert_eq!(&b[..8], b"\x89PNG\r\n\x1a\n", "{} is not a PNG", p.display());
    let be = |i: usize| u32::from_be_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
    (be(16), be(20))
}

fn check_report(report: &Path, axis_file: &str, axis_label: &str) {
    let png = report.join(format!("gflops_vs_{axis_file}.png"));
    assert_eq!(png_size(&png), (1000, 620));
    let svg = std::fs::read_to_string(report.join(format!("gflops_vs_{axis_file}.svg"))).unwrap();
    for label in [axis_label, "HPL performance (Gflop/s)"] {
        assert!(svg.contains(label), "the SVG has no axis label {label:?}");
    }
    let md = std::fs::read_to_string(report.join("summary.md")).unwrap();
    assert!(md.contains("| median | min | max | range % |"), "{md}");
    assert!(md.contains("median change"), "{md}");
}

#[test]
fn taper_hurts_hpl_live() {
    let xhpl = xhpl();
    let dir = scratch("taper");
    // The ready-made study, on a smaller machine: 64 hosts (2;8,8;1,T;1,1), HPL 8x8, N = 8000.
    let text = std::fs::read_to_string(root().join("studies/taper.toml"))
        .unwrap()
        .replace("np = 256", "np = 64")
        .replace("n = 16000", "n = 8000")
        .replace("p = 16", "p = 8")
        .replace("q = 16", "q = 8")
        .replace("down = [16, 16]", "down = [8, 8]")
        .replace("up = [1, 16]", "up = [1, 8]")
        .replace("count = 5", "count = 2")
        .replace("values = [8, 4, 2, 1]", "values = [8, 1]")
        .replace(
            "labels = [\"8 (2:1)\", \"4 (4:1)\", \"2 (8:1)\", \"1 (16:1)\"]",
            "labels = [\"8 (1:1)\", \"1 (8:1)\"]",
        )
        .replace("../apps/hpl/build/xhpl", xhpl.to_str().unwrap())
        .replace(
            "../apps/hpl/models",
            root().join("apps/hpl/models").to_str().unwrap(),
        );
    let study = dir.join("taper.toml");
    std::fs::write(&study, text).unwrap();
    let out = dir.join("out");
    assert!(run_study(&[
        "run",
        study.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "-j",
        "2"
    ])
    .status
    .success());
    let r = rows(&out);
    assert_eq!(r.len(), 4);
    assert!(
        r.iter().all(|r| r.status == Status::Ok && r.hpl_line.is_some()),
        "every HPL run printed its result"
    );
    let m = medians(&r, "top-level switches");
    let (full, tapered) = (m["8 (1:1)"], m["1 (8:1)"]);
    assert!(tapered.0 <= full.0, "median Gflops rose with the taper: {m:?}");
    assert!(
        tapered.2 < full.1,
        "8:1 taper should be clearly slower (ranges {:?} vs {:?})",
        tapered,
        full
    );
    let report = out.join("report");
    let o = run_study(&["report", out.to_str().unwrap()]);
    assert!(o.status.success());
    check_report(&report, "top_level_switches", "top-level switches (taper)");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn taper_study_committed_results() {
    let results = root().join("studies/results/taper");
    let r = rows(&results);
    assert_eq!(
        r.len(),
        20,
        "studies/results/taper/results.jsonl: 4 tapers x 5 replicas"
    );
    assert!(r.iter().all(|r| r.status == Status::Ok));
    // The rows are those of studies/taper.toml as it is now.
    let study = study::spec::Study::load(&root().join("studies/taper.toml")).unwrap();
    let ids: std::collections::BTreeSet<String> = study::design::runs(&study)
        .unwrap()
        .into_iter()
        .map(|r| r.id)
        .collect();
    assert!(
        r.iter().all(|r| ids.contains(&r.run_id)),
        "results of another version of studies/taper.toml"
    );
    let m = medians(&r, "top-level switches");
    let order = ["8 (2:1)", "4 (4:1)", "2 (8:1)", "1 (16:1)"];
    for w in order.windows(2) {
        assert!(
            m[w[1]].0 <= m[w[0]].0,
            "median Gflops rose from {} to {}: {m:?}",
            w[0],
            w[1]
        );
    }
    assert!(
        m.values().all(|s| s.3 == 5 && s.1 < s.2),
        "every point has 5 replicas and a spread: {m:?}"
    );
    // The committed report, and a fresh one from the same rows.
    check_report(
        &results.join("report"),
        "top_level_switches",
        "top-level switches (taper)",
    );
    let fresh = scratch("taper-report");
    let o = run_study(&["report", results.to_str().unwrap(), "-o", fresh.to_str().unwrap()]);
    assert!(o.status.success());
    check_report(&fresh, "top_level_switches", "top-level switches (taper)");
    let md = std::fs::read_to_string(fresh.join("summary.md")).unwrap();
    assert!(md.contains("1 (16:1)") && md.contains("range %"));
    let _ = std::fs::remove_dir_all(&fresh);
}

/// A fat tree written as explicit hosts, links and routes (`explicit = true`, what per-level
/// bandwidths need) simulates exactly like the `[[cluster]]` it comes from: HPL's time, which a
/// femtosecond or a different event order would move, is identical to the last bit.
#[test]
fn explicit_fat_tree_simulates_like_the_cluster() {
    let xhpl = xhpl();
    let dir = scratch("explicit");
    let text = format!(
        r#"name = "explicit"
np = 16
placement = "linear"
model = "{model}"
[cfg]
"smpi/simulate-computation" = "no"
"smpi/host-speed" = "1Gf"
[hpl]
xhpl = "{xhpl}"
n = 3000
nb = 64
p = 4
q = 4
threshold = -1
[platform]
kind = "fat_tree"
levels = 2
down = [4, 4]
up = [1, 2]
bw = "1.25GBps"
lat = "1us"
[replicas]
count = 2
perturb = ["latency"]
[[axis]]
name = "explicit"
key = "platform.explicit"
values = [false, true]
"#,
        model = root().join("apps/hpl/models/smpi_reference.toml").display(),
        xhpl = xhpl.display()
    );
    let study = dir.join("explicit.toml");
    std::fs::write(&study, text).unwrap();
    let out = dir.join("out");
    assert!(run_study(&[
        "run",
        study.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "-j",
        "2"
    ])
    .status
    .success());
    let r = rows(&out);
    assert_eq!(r.len(), 4);
    for rep in 0..2 {
        let pick = |explicit: &str| {
            r.iter()
                .find(|x| x.replica == rep && x.axes["explicit"] == explicit)
                .unwrap_or_else(|| panic!("no row explicit={explicit} replica {rep}"))
        };
        let (cluster, explicit) = (pick("false"), pick("true"));
        assert_eq!(cluster.status, Status::Ok);
        assert_eq!(explicit.status, Status::Ok);
        let platform = std::fs::read_to_string(Path::new(&explicit.run_dir).join("platform.toml")).unwrap();
        assert!(platform.contains("routing = \"full\"") && platform.contains("[[route]]"));
        assert_eq!(
            cluster.simulated_time, explicit.simulated_time,
            "replica {rep}: the explicit fat tree simulates differently"
        );
        assert_eq!(cluster.metrics["gflops"], explicit.metrics["gflops"]);
        assert_eq!(cluster.messages, explicit.messages);
    }
    let _ = std::fs::remove_dir_all(&dir);
}
