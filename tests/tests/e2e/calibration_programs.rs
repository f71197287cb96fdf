//! The calibration programs of `apps/calibration/` and their CSV contract
//! (`apps/calibration/FORMAT.md`).
//!
//! * `calib_net` built with our smpicc runs under smpirun on `cluster_4.toml`
//!   in quick mode: the metadata keys are all there, the header is exact, the
//!   rows are numbered 0, 1, 2, …, every kind is present `sizes × reps` times,
//!   sizes are in range, `# end: N` is the last line and counts the rows, the
//!   warm-up flag marks exactly the first call of each (kind, size), and the
//!   order is shuffled. The same seed gives byte-identical data rows (the
//!   simulator is deterministic) and the same design hash; another seed another
//!   design. Bad command lines fail with a message.
//! * When Open MPI (`mpicc`, `mpirun`) is installed, `scripts/calibrate.sh
//!   --quick` runs for real (with `--keep-blas-env`: tests never change the
//!   OpenBLAS variables) and its manifest and every CSV it wrote are checked
//!   against the same contract (dgemm anchors and the six permutations of each
//!   uniform-product tuple, the fixed-K run's K, every kernel present, the
//!   files' SHA-256 in the manifest). Skipped with a message otherwise.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use e2e_tests::{apps_dir, platform, run_command, scratch_path, smpicc, workspace_root, Smpirun};

const REQUIRED_KEYS: &[&str] = &[
    "format",
    "kind",
    "host",
    "date",
    "kernel",
    "cpu",
    "compiler",
    "mpi",
    "blas",
    "blas_kernel",
    "command",
    "seed",
    "mode",
    "timer",
    "timer_resolution_s",
    "timer_overhead_s",
];
const NET_HEADER: &str = "seq,kind,size,start,duration,warmup";
const COMPUTE_HEADER: &str = "seq,core,kernel,p0,p1,p2,start,duration";
const NET_KINDS: &[&str] = &[
    "send",
    "recv",
    "isend",
    "test",
    "iprobe",
    "wtime",
    "pingpong",
    "iprobe_arrived",
];
/// Kernel name → number of model parameters (FORMAT.md).
const COMPUTE_KERNELS: &[(&str, usize)] = &[
    ("dgemm", 3),
    ("dtrsm", 3),
    ("dgemv", 2),
    ("dger", 2),
    ("dtrsv", 1),
    ("daxpy", 1),
    ("dscal", 1),
    ("dcopy", 1),
    ("dswap", 1),
    ("idamax", 1),
    ("HPL_dlaswp00N", 2),
    ("HPL_dlaswp01T", 2),
    ("HPL_dlaswp02N", 2),
    ("HPL_dlaswp03T", 2),
    ("HPL_dlaswp04T", 3),
    ("HPL_dlaswp05T", 2),
    ("HPL_dlaswp06T", 2),
    ("HPL_dlaswp10N", 2),
    ("HPL_dlacpy", 2),
    ("HPL_dlatcpy", 2),
];

/// One calibration CSV, parsed strictly.
struct Csv {
    path: PathBuf,
    meta: BTreeMap<String, String>,
    header: String,
    rows: Vec<Vec<String>>,
    /// The data lines as written (for byte comparisons).
    data_text: String,
}

impl Csv {
    fn read(path: &Path) -> Csv {
        let text =
            std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
        let p = path.display();
        let lines: Vec<&str> = text.lines().collect();
        assert!(text.ends_with('\n'), "{p}: the last line has no newline");
        let mut i = 0;
        let mut meta = BTreeMap::new();
        while i < lines.len() && lines[i].starts_with('#') {
            let l = lines[i];
            let (k, v) = l
                .strip_prefix("# ")
                .and_then(|r| r.split_once(": "))
                .unwrap_or_else(|| panic!("{p}:{}: not a `# key: value` line: {l:?}", i + 1));
            assert!(
                !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'),
                "{p}:{}: bad key {k:?}",
                i + 1
            );
            assert!(
                meta.insert(k.to_string(), v.to_string()).is_none(),
                "{p}: key {k} twice"
            );
            i += 1;
        }
        assert!(i < lines.len(), "{p}: no header line");
        let header = lines[i].to_string();
        i += 1;
        let last = lines.last().copied().unwrap_or("");
        let end: usize = last
            .strip_prefix("# end: ")
            .unwrap_or_else(|| panic!("{p}: the last line is not `# end: N` but {last:?}"))
            .parse()
            .unwrap_or_else(|_| panic!("{p}: bad end line {last:?}"));
        let data = &lines[i..lines.len() - 1];
        assert_eq!(
            end,
            data.len(),
            "{p}: `# end: {end}` but {} data rows",
            data.len()
        );
        let width = header.split(',').count();
        let rows: Vec<Vec<String>> = data
            .iter()
            .enumerate()
            .map(|(j, l)| {
                assert!(
                    !l.starts_with('#'),
                    "{p}:{}: a metadata line among the data",
                    i + j + 1
                );
                let cells: Vec<String> = l.split(',').map(str::to_string).collect();
                assert_eq!(
                    cells.len(),
                    width,
                    "{p}:{}: {} cells, header has {width}",
                    i + j + 1,
                    cells.len()
                );
                cells
            })
            .collect();
        for k in REQUIRED_KEYS {
            let v = meta
                .get(*k)
                .unwrap_or_else(|| panic!("{p}: required metadata key `{k}` missing"));
            assert!(!v.trim().is_empty(), "{p}: metadata `{k}` is empty");
        }
        assert_eq!(meta["format"], "smpi-calibration/1", "{p}");
        assert_eq!(meta["timer"], "MPI_Wtime", "{p}");
        for k in ["timer_resolution_s", "timer_overhead_s"] {
            let v: f64 = meta[k]
                .parse()
                .unwrap_or_else(|_| panic!("{p}: {k} = {:?} is not a number", meta[k]));
            assert!(v > 0.0 && v < 1e-3, "{p}: {k} = {v}");
        }
        let date = &meta["date"];
        assert!(
            date.len() == 20 && date.ends_with('Z') && date.as_bytes()[10] == b'T',
            "{p}: date {date:?}"
        );
        // seq is 0, 1, 2, ... in file order
        for (j, r) in rows.iter().enumerate() {
            assert_eq!(r[0], j.to_string(), "{p}: row {j} has seq {}", r[0]);
        }
        let data_text = data.join("\n");
        Csv {
            path: path.to_path_buf(),
            meta,
            header,
            rows,
            data_text,
        }
    }

    fn num(&self, row: usize, col: usize) -> f64 {
        let v = &self.rows[row][col];
        let x: f64 = v.parse().unwrap_or_else(|_| {
            panic!(
                "{}: row {row} column {col}: {v:?} is not a number",
                self.path.display()
            )
        });
        assert!(
            x.is_finite(),
            "{}: row {row} column {col}: {v}",
            self.path.display()
        );
        x
    }

    fn meta_u64(&self, key: &str) -> u64 {
        let v = self
            .meta
            .get(key)
            .unwrap_or_else(|| panic!("{}: no `{key}`", self.path.display()));
        v.parse()
            .unwrap_or_else(|_| panic!("{}: `{key}` = {v:?}", self.path.display()))
    }
}

/// Checks a network table; returns the design (kind, size, warmup) in sequence order.
fn check_network(csv: &Csv, max_size: u64) -> Vec<(String, u64, bool)> {
    let p = csv.path.display();
    assert_eq!(csv.header, NET_HEADER, "{p}: header");
    assert_eq!(csv.meta["kind"], "network", "{p}");
    let sizes = csv.meta_u64("sizes");
    let reps = csv.meta_u64("reps");
    // Held-out ping-pong sizes: `H per quarter decade x R repetitions`.
    let heldout: Vec<u64> = csv.meta["heldout"]
        .split(|c: char| !c.is_ascii_digit())
        .filter(|t| !t.is_empty())
        .map(|t| t.parse().unwrap())
        .collect();
    let quarter_decades = (4.0 * (max_size as f64).log10() - 1e-9).ceil().max(1.0) as u64;
    let heldout_rows = heldout[0] * quarter_decades * heldout[1];
    assert_eq!(
        csv.rows.len() as u64,
        sizes * reps * NET_KINDS.len() as u64 + heldout_rows,
        "{p}: rows = sizes x reps x kinds + held-out sizes x their repetitions"
    );
    let mut per_kind: BTreeMap<&str, u64> = BTreeMap::new();
    let mut seen = BTreeSet::new();
    let mut design = Vec::new();
    let mut last_start = f64::NEG_INFINITY;
    for (i, r) in csv.rows.iter().enumerate() {
        // `iprobe_arrived` rows say whether the probe found the message.
        let row_kind = match r[1].as_str() {
            "iprobe_arrived_found" | "iprobe_arrived_missed" => "iprobe_arrived",
            k => k,
        };
        let kind = NET_KINDS
            .iter()
            .chain(&["pingpong_heldout"])
            .find(|k| **k == row_kind)
            .unwrap_or_else(|| panic!("{p}: row {i}: unknown kind {:?}", r[1]));
        *per_kind.entry(kind).or_default() += 1;
        let size: u64 = r[2]
            .parse()
            .unwrap_or_else(|_| panic!("{p}: row {i}: size {:?}", r[2]));
        if *kind == "wtime" || *kind == "iprobe" || *kind == "iprobe_arrived" {
            assert_eq!(size, 0, "{p}: row {i}: {kind} moves no payload");
        } else {
            assert!(
                (1..=max_size).contains(&size),
                "{p}: row {i}: size {size} out of [1, {max_size}]"
            );
        }
        let start = csv.num(i, 3);
        let dur = csv.num(i, 4);
        assert!((0.0..10.0).contains(&dur), "{p}: row {i}: duration {dur}");
        assert!(
            start >= 0.0 && start >= last_start,
            "{p}: row {i}: start {start} before {last_start}"
        );
        last_start = start;
        let warm = match r[5].as_str() {
            "0" => false,
            "1" => true,
            w => panic!("{p}: row {i}: warmup {w:?}"),
        };
        let first = seen.insert((kind.to_string(), size));
        assert_eq!(
            warm, first,
            "{p}: row {i}: warmup must flag exactly the first ({kind}, {size})"
        );
        design.push((kind.to_string(), size, warm));
    }
    for k in NET_KINDS {
        assert_eq!(per_kind.get(k).copied(), Some(sizes * reps), "{p}: {k} rows");
    }
    assert_eq!(
        per_kind.get("pingpong_heldout").copied().unwrap_or(0),
        heldout_rows,
        "{p}: held-out rows"
    );
    // Shuffled, kinds interleaved: no long run of one kind, and the first tenth of the
    // sequence already holds every kind.
    let longest = design
        .chunk_by(|a, b| a.0 == b.0)
        .map(|c| c.len())
        .max()
        .unwrap_or(0);
    assert!(
        longest < 20,
        "{p}: {longest} consecutive measures of one kind: not shuffled"
    );
    let early: BTreeSet<&str> = design[..design.len() / 10].iter().map(|d| d.0.as_str()).collect();
    assert_eq!(
        NET_KINDS.iter().filter(|k| early.contains(*k)).count(),
        NET_KINDS.len(),
        "{p}: kinds not interleaved: {early:?}"
    );
    // Log-uniform sizes: about half of them below sqrt(max) (uniform sizes would put
    // almost none there).
    let payload: Vec<u64> = design.iter().filter(|d| d.1 > 0).map(|d| d.1).collect();
    let below = payload
        .iter()
        .filter(|&&s| (s as f64) < (max_size as f64).sqrt())
        .count() as f64;
    let frac = below / payload.len() as f64;
    assert!(
        (0.3..0.7).contains(&frac),
        "{p}: {frac:.2} of the sizes below sqrt(max): not log-uniform"
    );
    design
}

fn build_calib_net_smpi() -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            let dir = apps_dir().join("calibration");
            let out = scratch_path("calib_net");
            let mut cmd = Command::new(smpicc());
            cmd.args(["-O2", "-Wall", "-Wextra", "-std=gnu11", "-D_GNU_SOURCE", "-o"])
                .arg(&out)
                .arg(dir.join("calib_net.c"))
                .arg(dir.join("calib_common.c"))
                .arg("-lm");
            let r = run_command(cmd, Duration::from_secs(120));
            assert!(
                r.code == Some(0) && out.exists(),
                "smpicc failed on calib_net\n{}",
                r.describe()
            );
            assert!(
                !r.stderr.contains("warning"),
                "calib_net is not -Wall -Wextra clean under smpicc\n{}",
                r.describe()
            );
            out
        })
        .clone()
}

fn run_net_sim(seed: u64, extra: &[&str]) -> (Csv, e2e_tests::RunOutput) {
    let csv = scratch_path(&format!("network-{seed}.csv"));
    let mut args: Vec<String> = vec![
        "--quick".into(),
        "--seed".into(),
        seed.to_string(),
        "--out".into(),
    ];
    args.push(csv.display().to_string());
    args.extend(extra.iter().map(|s| s.to_string()));
    let out = Smpirun::new(build_calib_net_smpi())
        .platform(platform("cluster_4.toml"))
        .np(2)
        .cfg("smpi/simulate-computation:no")
        .args(args)
        .timeout(Duration::from_secs(120))
        .run();
    out.assert_success();
    (Csv::read(&csv), out)
}

#[test]
fn calib_net_under_the_simulator_follows_the_contract_and_is_reproducible() {
    let (a, out) = run_net_sim(7, &[]);
    assert!(
        out.stderr.contains("calib_net: "),
        "no summary line\n{}",
        out.describe()
    );
    let design_a = check_network(&a, 10_000_000);
    assert_eq!(a.meta["mode"], "quick");
    assert_eq!(a.meta["seed"], "7");
    assert_eq!(a.meta["simulated"], "1", "smpicc build must know it is simulated");
    assert_eq!(a.meta["host"], "host-0", "host is the simulated host's name");
    assert_eq!(a.meta["payload_errors"], "0");
    assert_eq!(
        (a.meta_u64("sizes"), a.meta_u64("reps")),
        (200, 10),
        "quick design"
    );
    // The simulated clock ticks: every MPI_Wtime costs smpi/wtime (1e-8 s by default).
    assert_eq!(a.meta["timer_resolution_s"], "1.000e-08");
    // Physical sanity on cluster_4 (25 us one way): a ping-pong is at least two latencies.
    for (i, d) in design_a.iter().enumerate() {
        if d.0 == "pingpong" {
            assert!(a.num(i, 4) >= 50e-6, "pingpong row {i}: {}", a.num(i, 4));
        }
    }

    // Same seed: the same design and, the simulator being deterministic, the same bytes.
    let (b, _) = run_net_sim(7, &[]);
    assert_eq!(a.meta["design_hash"], b.meta["design_hash"]);
    assert!(a.data_text == b.data_text, "same seed, different data rows");
    // Another seed: another design (the hash covers kinds and sizes in order).
    let (c, _) = run_net_sim(8, &["--sizes", "50", "--reps", "4"]);
    let design_c = check_network(&c, 10_000_000);
    assert_ne!(a.meta["design_hash"], c.meta["design_hash"]);
    assert_eq!(c.rows.len(), 50 * 4 * NET_KINDS.len());
    let c_prefix: Vec<_> = design_c.iter().take(50).collect();
    let a_prefix: Vec<_> = design_a.iter().take(50).collect();
    assert_ne!(a_prefix, c_prefix, "different seeds gave the same sequence");
}

/// The simulated ping-pong of `calib_net` is the model's round trip, whatever follows it: on
/// two hosts joined by one slow SPLITDUPLEX link under plain CM02 with eager sends (as fitted
/// models set them), every round trip of a detached (< 64 KiB) message lasts `smpi/wtime + 2·(L + (S + 16)/B)`. Rank 1's reply is a
/// detached send whose transfer goes on after `MPI_Send` returns; without rank 0's "done"
/// message, rank 1's next barrier message shared the reply's route and stretched it (by up to
/// the barrier message's own transfer time).
#[test]
fn calib_net_simulated_pingpong_is_the_model_round_trip() {
    const LAT: f64 = 5e-5;
    const BW: f64 = 12.5e6;
    let platform = e2e_tests::two_host_platform("100Mbps", "50us", "SPLITDUPLEX");
    let csv = scratch_path("network-two-hosts.csv");
    let out = Smpirun::new(build_calib_net_smpi())
        .platform(platform)
        .np(2)
        .cfg("network/model:CM02")
        .cfg("smpi/simulate-computation:no")
        // eager as the fitted models make it: the transfer starts at the send, so the
        // barrier's skew (rank 1 leaves it one latency after rank 0) is not timed
        .cfg("smpi/async-small-thresh:65536")
        .args([
            "--seed",
            "3",
            "--sizes",
            "40",
            "--reps",
            "3",
            "--max-size",
            "60000",
        ])
        .args(["--kinds", "pingpong,send,recv,wtime", "--out"])
        .args([csv.display().to_string()])
        .timeout(Duration::from_secs(120))
        .run();
    out.assert_success();
    let f = Csv::read(&csv);
    assert_eq!(f.meta["pingpong_done_message"], "yes");
    let wtime = 1e-8;
    let mut checked = 0;
    let mut bad = Vec::new();
    for (i, row) in f.rows.iter().enumerate() {
        if row[1] != "pingpong" || row[5] != "0" {
            continue;
        }
        let size = f.num(i, 2);
        let want = wtime + 2.0 * (LAT + (size + 16.0) / BW);
        let got = f.num(i, 4);
        checked += 1;
        if (got - want).abs() > 1e-9 * want {
            bad.push(format!("row {i}: {size} B: {got:.9e} s, model {want:.9e} s"));
        }
    }
    assert!(
        checked >= 40,
        "only {checked} timed ping-pong rows\n{}",
        out.describe()
    );
    assert!(
        bad.is_empty(),
        "{} of {checked} round trips are not the model's:\n{}",
        bad.len(),
        bad.join("\n")
    );
}

/// `iprobe_arrived` measures how the MPI's probe sees a message that arrived after the
/// rank's previous MPI call: under smpirun the answer is `smpi/probe-sees` itself (SimGrid's
/// `sent`: every probe finds it; `progressed`, Open MPI's ob1: every probe misses it, the
/// barrier before being the last call that progressed).
#[test]
fn calib_net_iprobe_arrived_tells_the_probe_semantics() {
    for (setting, want) in [
        ("sent", "iprobe_arrived_found"),
        ("progressed", "iprobe_arrived_missed"),
    ] {
        let csv = scratch_path(&format!("network-probe-{setting}.csv"));
        let out = Smpirun::new(build_calib_net_smpi())
            .platform(platform("cluster_4.toml"))
            .np(2)
            .cfg("smpi/simulate-computation:no")
            .cfg(&format!("smpi/probe-sees:{setting}"))
            .args([
                "--seed",
                "5",
                "--sizes",
                "20",
                "--reps",
                "3",
                "--kinds",
                "iprobe_arrived,pingpong",
            ])
            .args(["--out".to_string(), csv.display().to_string()])
            .timeout(Duration::from_secs(120))
            .run();
        out.assert_success();
        let f = Csv::read(&csv);
        assert_eq!(f.meta["payload_errors"], "0", "{setting}");
        let probes: Vec<&str> = f
            .rows
            .iter()
            .map(|r| r[1].as_str())
            .filter(|k| k.starts_with("iprobe_arrived"))
            .collect();
        assert_eq!(
            probes.len(),
            60,
            "{setting}: 20 sizes x 3 reps\n{}",
            out.describe()
        );
        assert!(
            probes.iter().all(|k| *k == want),
            "{setting}: expected every row {want}, got {:?}",
            probes.iter().filter(|k| **k != want).take(3).collect::<Vec<_>>()
        );
    }
}

#[test]
fn calib_net_refuses_bad_command_lines() {
    for (args, needle) in [
        (vec!["--sizes", "0"], "--sizes"),
        (vec!["--reps", "1"], "--reps"),
        (vec!["--max-size", "12x"], "--max-size"),
        (vec!["--seed"], "--seed needs a value"),
        (vec!["--bogus"], "unknown option '--bogus'"),
    ] {
        let out = Smpirun::new(build_calib_net_smpi())
            .platform(platform("cluster_4.toml"))
            .np(2)
            .args(args.clone())
            .run();
        out.assert_failure();
        out.assert_stderr_has(&[needle]);
    }
    let out = Smpirun::new(build_calib_net_smpi())
        .platform(platform("cluster_4.toml"))
        .np(3)
        .run();
    out.assert_failure();
    out.assert_stderr_has(&["needs exactly 2 ranks"]);
}

// ---------------------------------------------------------------------------- real MPI

fn on_path(tool: &str) -> bool {
    std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).any(|d| d.join(tool).is_file()))
        .unwrap_or(false)
}

fn sha256(path: &Path) -> String {
    let out = Command::new("sha256sum")
        .arg(path)
        .output()
        .expect("sha256sum runs");
    assert!(out.status.success());
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .next()
        .unwrap_or("")
        .to_string()
}

/// Checks a compute table; returns its (kernel, p0, p1, p2) rows.
fn check_compute(csv: &Csv) -> Vec<(String, [Option<i64>; 3])> {
    let p = csv.path.display();
    assert_eq!(csv.header, COMPUTE_HEADER, "{p}: header");
    assert_eq!(csv.meta["kind"], "compute", "{p}");
    let core = csv.meta["core"].clone();
    let mut calls = Vec::new();
    let mut last_start = f64::NEG_INFINITY;
    for (i, r) in csv.rows.iter().enumerate() {
        assert_eq!(r[1], core, "{p}: row {i}: core column differs from the metadata");
        let arity = COMPUTE_KERNELS
            .iter()
            .find(|(k, _)| *k == r[2])
            .unwrap_or_else(|| panic!("{p}: row {i}: unknown kernel {:?}", r[2]))
            .1;
        let mut ps = [None; 3];
        for j in 0..3 {
            let cell = &r[3 + j];
            if j < arity {
                let v: i64 = cell
                    .parse()
                    .unwrap_or_else(|_| panic!("{p}: row {i}: p{j} = {cell:?}"));
                assert!((0..=100_000_000).contains(&v), "{p}: row {i}: p{j} = {v}");
                ps[j] = Some(v);
            } else {
                assert!(
                    cell.is_empty(),
                    "{p}: row {i}: {} takes {arity} parameters, p{j} = {cell:?}",
                    r[2]
                );
            }
        }
        if r[2] == "dtrsm" {
            assert!(
                matches!(ps[2], Some(0) | Some(1)),
                "{p}: row {i}: dtrsm side {:?}",
                ps[2]
            );
        }
        let start = csv.num(i, 6);
        let dur = csv.num(i, 7);
        assert!((0.0..60.0).contains(&dur), "{p}: row {i}: duration {dur}");
        assert!(start >= last_start, "{p}: row {i}: start goes back");
        last_start = start;
        calls.push((r[2].clone(), ps));
    }
    assert!(!calls.is_empty(), "{p}: no calls");
    calls
}

#[test]
fn calibrate_script_quick_with_open_mpi() {
    if !(on_path("mpicc") && on_path("mpirun")) {
        eprintln!("skipped: Open MPI (mpicc, mpirun) is not installed; scripts/calibrate.sh installs it when run by hand");
        return;
    }
    let out_dir = scratch_path("calibration");
    let mut cmd = Command::new(workspace_root().join("scripts/calibrate.sh"));
    cmd.args(["--quick", "--seed", "5", "--keep-blas-env", "--out"])
        .arg(&out_dir);
    let r = run_command(cmd, Duration::from_secs(1200));
    assert_eq!(
        r.code,
        Some(0),
        "scripts/calibrate.sh --quick failed\n{}",
        r.describe()
    );

    let manifest: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out_dir.join("manifest.json")).expect("manifest.json is written"),
    )
    .expect("manifest.json is JSON");
    assert_eq!(manifest["format"], "smpi-calibration-manifest/1");
    assert_eq!(manifest["mode"], "quick");
    assert_eq!(manifest["seeds"]["network"], 5);
    assert_eq!(manifest["seeds"]["compute_fixed_k"], 6);
    assert_eq!(manifest["fixed_k"], 128);
    for key in ["command", "start", "end", "host"] {
        assert!(
            manifest[key].as_str().is_some_and(|s| !s.is_empty()),
            "manifest: {key}"
        );
    }
    for key in ["kernel", "cpu", "cc", "mpicc", "mpirun", "openblas_package"] {
        assert!(
            manifest["tools"][key].as_str().is_some_and(|s| !s.is_empty()),
            "manifest tools: {key}"
        );
    }
    assert_eq!(
        manifest["environment"]["openblas_env_unset_for_runs"], false,
        "--keep-blas-env"
    );
    let steps: Vec<&str> = manifest["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .map(|s| s["step"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(
        steps,
        [
            "build-hpl",
            "build-programs",
            "network",
            "probe-before-compute-1",
            "probe-before-compute-2",
            "probe-before-compute-3",
            "compute",
            "compute-fixed-k",
            "probe-after-compute-1",
            "probe-after-compute-2",
            "probe-after-compute-3",
        ]
    );
    // The machine probe, 3 times on each side of the compute runs, one rate per core.
    let probe = &manifest["machine_probe"];
    assert_eq!(
        probe["args"],
        serde_json::json!(["--lda", "0", "--k", "128"]),
        "{probe}"
    );
    let runs = probe["runs"].as_array().expect("probe runs");
    assert_eq!(runs.len(), 6, "{probe}");
    assert_eq!(runs[0]["when"], "before-compute");
    assert_eq!(runs[5]["when"], "after-compute");
    let cores = manifest["cores"].as_u64().expect("cores") as usize;
    assert!(cores >= 1);
    assert!(
        runs.iter().all(|r| r["gflops_per_rank"]
            .as_array()
            .is_some_and(|g| g.len() == cores && g.iter().all(|x| x.as_f64().is_some_and(|x| x > 0.0)))),
        "{probe}"
    );
    // And its memory-bound row gather: a plausible time per element moved.
    assert!(
        runs.iter()
            .all(|r| r["gather_ns_per_rank"].as_array().is_some_and(
                |g| g.len() == cores && g.iter().all(|x| x.as_f64().is_some_and(|x| x > 0.05 && x < 1e4))
            )),
        "{probe}"
    );

    let files = manifest["files"].as_array().expect("files");
    assert_eq!(
        files.len(),
        1 + 2 * cores,
        "one network file and two compute files per core: {files:?}"
    );
    let mut network = 0;
    let mut uniform = 0;
    let mut fixed = 0;
    let mut cores_seen = BTreeSet::new();
    for f in files {
        let name = f["file"].as_str().expect("file name");
        let path = out_dir.join(name);
        assert_eq!(
            f["sha256"].as_str(),
            Some(sha256(&path).as_str()),
            "{name}: sha256 in the manifest"
        );
        let csv = Csv::read(&path);
        assert_eq!(f["data_rows"].as_u64(), Some(csv.rows.len() as u64), "{name}");
        assert!(
            csv.meta["mpi"].starts_with("Open MPI"),
            "{name}: mpi = {}",
            csv.meta["mpi"]
        );
        assert_eq!(csv.meta["simulated"], "0");
        assert_eq!(csv.meta["mode"], "quick");
        assert!(csv.meta["openblas_coretype_env"].ends_with("(kept)"), "{name}");
        let host = &csv.meta["host"];
        match csv.meta["kind"].as_str() {
            "network" => {
                network += 1;
                assert_eq!(name, format!("network-{host}-5.csv"));
                check_network(&csv, 10_000_000);
                assert_eq!(csv.meta["payload_errors"], "0");
            }
            "compute" => {
                let calls = check_compute(&csv);
                let core = csv.meta["core"].clone();
                assert!(
                    csv.meta["blas"].starts_with("OpenBLAS"),
                    "{name}: blas = {}",
                    csv.meta["blas"]
                );
                let bk = &csv.meta["blas_kernel"];
                assert!(!bk.is_empty() && bk != "unknown", "{name}: blas_kernel = {bk}");
                assert_eq!(
                    csv.meta["abnormal_outputs"], "0",
                    "{name}: Inf/NaN/denormal outputs"
                );
                let seed = csv.meta_u64("seed");
                assert_eq!(name, format!("compute-{host}-core{core}-{seed}.csv"));
                let dgemm: Vec<[i64; 3]> = calls
                    .iter()
                    .filter(|c| c.0 == "dgemm")
                    .map(|c| [c.1[0].unwrap(), c.1[1].unwrap(), c.1[2].unwrap()])
                    .collect();
                if seed == 5 {
                    uniform += 1;
                    cores_seen.insert(core);
                    let kernels: BTreeSet<&str> = calls.iter().map(|c| c.0.as_str()).collect();
                    for (k, _) in COMPUTE_KERNELS {
                        assert!(kernels.contains(k), "{name}: kernel {k} missing");
                    }
                    assert!(
                        dgemm.contains(&[1, 1, 1]) && dgemm.contains(&[2048, 2048, 2048]),
                        "{name}: anchors"
                    );
                    // every uniform-product tuple comes with its six permutations
                    let mut count: BTreeMap<[i64; 3], usize> = BTreeMap::new();
                    for t in &dgemm {
                        *count.entry(*t).or_default() += 1;
                    }
                    for (t, n) in &count {
                        let [m, nn, k] = *t;
                        for q in [[m, k, nn], [nn, m, k], [nn, k, m], [k, m, nn], [k, nn, m]] {
                            assert!(
                                count.get(&q).copied().unwrap_or(0) >= 1,
                                "{name}: {t:?} x{n} without {q:?}"
                            );
                        }
                    }
                    assert!(dgemm.len() >= 6 * 30, "{name}: {} dgemm calls", dgemm.len());
                } else {
                    fixed += 1;
                    assert_eq!(seed, 6, "{name}");
                    assert_eq!(csv.meta["fixed_k"], "128");
                    assert!(
                        calls
                            .iter()
                            .all(|c| c.0 == "dgemm" || c.0 == "dtrsm" || c.0.starts_with("HPL_dlaswp")),
                        "{name}: fixed-K run is dgemm, dtrsm and the row swaps only"
                    );
                    // The row swaps: at most NB = 128 rows (HPL_dlaswp04T: M0 <= M1 rows;
                    // HPL_dlaswp10N: 128 columns), every one of the eight there.
                    let swaps: Vec<_> = calls.iter().filter(|c| c.0.starts_with("HPL_dlaswp")).collect();
                    let mut kinds: Vec<&str> = swaps.iter().map(|c| c.0.as_str()).collect();
                    kinds.sort_unstable();
                    kinds.dedup();
                    assert_eq!(kinds.len(), 8, "{name}: {kinds:?}");
                    for c in &swaps {
                        let rows = match c.0.as_str() {
                            "HPL_dlaswp04T" => c.1[1].unwrap(),
                            "HPL_dlaswp10N" => c.1[1].unwrap(),
                            _ => c.1[0].unwrap(),
                        };
                        assert!((1..=128).contains(&rows), "{name}: {c:?}");
                    }
                    assert!(dgemm.iter().all(|t| t[2] == 128), "{name}: K != 128");
                    // dtrsm: a triangle of order 128 on either side (M on the left, N on the right).
                    let trsm: Vec<_> = calls.iter().filter(|c| c.0 == "dtrsm").collect();
                    assert!(trsm.len() >= 2 * 30, "{name}: {} dtrsm calls", trsm.len());
                    for c in &trsm {
                        let (m, n, side) = (c.1[0].unwrap(), c.1[1].unwrap(), c.1[2].unwrap());
                        assert_eq!(if side == 0 { m } else { n }, 128, "{name}: dtrsm {c:?}");
                    }
                    assert!(dgemm.len() >= 2 * 30, "{name}: {} dgemm calls", dgemm.len());
                }
            }
            k => panic!("{name}: kind {k}"),
        }
    }
    assert_eq!((network, uniform, fixed), (1, cores, cores));
    assert_eq!(
        cores_seen.len(),
        cores,
        "one compute file per core, each on its own core"
    );
}
