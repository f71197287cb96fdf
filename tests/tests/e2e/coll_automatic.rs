//! `--cfg=smpi/<coll>:automatic`, SMPI 3.32's automatic selector: every call
//! runs each algorithm of the collective, timed, and every rank reports the
//! quickest (`smpi-shim/src/coll/automatic.rs`).
//!
//! Against SimGrid SMPI 3.32 itself when it is installed (else those checks
//! are skipped with a message): `apps/coll/coll_time.c` on the star platform
//! of `coll_smpi_parity` (8 hosts, one rank each), every collective on 4 ranks
//! (root 0) and 7 ranks (root 6), an eager and a rendezvous size:
//! * where SMPI gets through, every rank's simulated time and every report
//!   line (`[host:rank:(pid) time] file:line: [smpi_colls/WARNING] ...`) are
//!   SMPI's, to the last printed digit; where one of our candidates is known
//!   to have SMPI's largest time but not its per-rank times (the module's
//!   known gaps), smpirun warns, and the times agree within 1e-5;
//! * where SMPI aborts, deadlocks or crashes, we refuse with a message saying
//!   so (and SMPI indeed fails);
//! * a second call (SMPI's MVAPICH2 function pointers and SMP layout left by
//!   the first) gives SMPI's times and lines too;
//! * `smpi/coll-selector:automatic` (every collective automatic) gives
//!   SMPI's times and lines where SMPI gets through, a refusal elsewhere.
//!
//! Without SMPI: the data of every supported collective (also `MPI_IN_PLACE`)
//! is right (`apps/coll_automatic/check.c`), the refusals, `--log` filtering,
//! the once-per-run warnings (known gaps, `-trace`) and `--help-cfg`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use e2e_tests::{apps_dir, build_c, field_f64, run_command, scratch_path, write_scratch, RunOutput, Smpirun};

const PLATFORM: &str = r#"<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <cluster id="star" prefix="h-" suffix="" radical="0-7" speed="1Gf" bw="1GBps" lat="10us"/>
</platform>
"#;

const CFG: &[&str] = &[
    "network/model:CM02",
    "network/crosstraffic:0",
    "smpi/simulate-computation:no",
    "smpi/wtime:0",
];

/// What SMPI's report lines contain (its source file, where they come from).
const REPORT: &str = "smpi_automatic_selector.cpp:";

fn platform() -> PathBuf {
    write_scratch("automatic_star8.xml", PLATFORM)
}

fn hostfile() -> PathBuf {
    let hosts: String = (0..8).map(|i| format!("h-{i}:1\n")).collect();
    write_scratch("automatic_hosts8", &hosts)
}

fn coll_time() -> PathBuf {
    build_c(&apps_dir().join("coll/coll_time.c"))
}

fn check_app() -> PathBuf {
    build_c(&apps_dir().join("coll_automatic/check.c"))
}

/// Our run of `program` with `--cfg=smpi/<coll>:automatic` (and `extra` options).
fn ours(program: &Path, coll: &str, np: usize, extra: &[&str], args: &[String]) -> RunOutput {
    ours_with(program, &[&format!("smpi/{coll}:automatic")], np, extra, args)
}

/// A hostfile of `per_host` ranks on each of the 8 hosts.
fn hosts_by(per_host: usize) -> PathBuf {
    let hosts: String = (0..8).map(|i| format!("h-{i}:{per_host}\n")).collect();
    write_scratch(&format!("automatic_hosts8x{per_host}"), &hosts)
}

/// Our run of `program` with these `--cfg` settings (and `extra` options).
fn ours_with(program: &Path, cfg: &[&str], np: usize, extra: &[&str], args: &[String]) -> RunOutput {
    ours_on(&hostfile(), program, cfg, np, extra, args)
}

/// [`ours_with`] on the hosts of `hosts`.
fn ours_on(
    hosts: &Path,
    program: &Path,
    cfg: &[&str],
    np: usize,
    extra: &[&str],
    args: &[String],
) -> RunOutput {
    let mut run = Smpirun::new(program).platform(platform()).hostfile(hosts).np(np);
    for c in CFG.iter().chain(cfg) {
        run = run.cfg(c);
    }
    for e in extra {
        run = run.opt(*e);
    }
    run.args(args.iter().cloned()).run()
}

/// SMPI 3.32's `coll_time`, built with its smpicc, or `None` (with a message).
fn smpi_coll_time() -> Option<&'static Path> {
    static S: OnceLock<Option<PathBuf>> = OnceLock::new();
    S.get_or_init(|| {
        let version = Command::new("smpirun").arg("-version").output().ok()?;
        let text =
            String::from_utf8_lossy(&version.stdout).to_string() + &String::from_utf8_lossy(&version.stderr);
        if !text.contains("3.32") {
            eprintln!("skipped: smpirun is not SimGrid 3.32 ({})", text.trim());
            return None;
        }
        let out = scratch_path("coll_time_smpi_automatic");
        let mut cc = Command::new("smpicc");
        cc.arg("-O2")
            .arg(apps_dir().join("coll/coll_time.c"))
            .arg("-o")
            .arg(&out);
        let r = run_command(cc, Duration::from_secs(120));
        if r.code != Some(0) {
            eprintln!("skipped: SMPI's smpicc failed\n{}", r.describe());
            return None;
        }
        Some(out)
    })
    .as_deref()
    .or_else(|| {
        eprintln!("skipped: SimGrid SMPI 3.32 (smpirun, smpicc) not installed");
        None
    })
}

/// SMPI's run of its `coll_time`.
fn theirs(program: &Path, coll: &str, np: usize, args: &[String]) -> RunOutput {
    theirs_with(program, &[&format!("smpi/{coll}:automatic")], np, args)
}

/// SMPI's run of its `coll_time` with these `--cfg` settings.
fn theirs_with(program: &Path, cfg: &[&str], np: usize, args: &[String]) -> RunOutput {
    theirs_on(&hostfile(), program, cfg, np, args)
}

/// [`theirs_with`] on the hosts of `hosts`.
fn theirs_on(hosts: &Path, program: &Path, cfg: &[&str], np: usize, args: &[String]) -> RunOutput {
    let mut cmd = Command::new("smpirun");
    cmd.current_dir(program.parent().unwrap_or(Path::new(".")))
        .arg("-np")
        .arg(np.to_string())
        .arg("-platform")
        .arg(platform())
        .arg("-hostfile")
        .arg(hosts);
    for c in CFG.iter().chain(cfg) {
        cmd.arg(format!("--cfg={c}"));
    }
    cmd.arg(program).args(args);
    run_command(cmd, Duration::from_secs(120))
}

/// The `time` lines (one per rank), sorted.
fn times(out: &RunOutput) -> Vec<String> {
    let mut t: Vec<String> = out.lines_starting_with("time ").map(String::from).collect();
    t.sort();
    t
}

/// The report lines, sorted.
fn reports(out: &RunOutput) -> Vec<String> {
    let mut r: Vec<String> = out
        .stderr
        .lines()
        .filter(|l| l.contains(REPORT))
        .map(String::from)
        .collect();
    r.sort();
    r
}

/// Why SMPI 3.32 does not get through this call (we refuse it), if it does not.
fn refused(coll: &str, np: usize) -> bool {
    match coll {
        "bcast" => np > 1,
        "barrier" => np > 2,
        "alltoall" | "reduce_scatter" => !np.is_power_of_two(),
        _ => false,
    }
}

/// Whether a known gap of ours (a candidate whose time is not SMPI's, see
/// `automatic.rs`) applies: smpirun warns, the times agree within 1e-5. Here:
/// allreduce `smp_rsag` on 7 hosts, which divide neither count (SMPI's
/// result is wrong there).
fn gap(coll: &str, np: usize, _bytes: usize) -> bool {
    coll == "allreduce" && np == 7
}

fn sizes(coll: &str) -> [usize; 2] {
    match coll {
        "bcast" | "reduce" | "allreduce" => [16384, 1048576],
        _ => [4096, 262144],
    }
}

/// Compares one collective with SMPI (or checks our side only without it);
/// panics with every mismatch.
fn collective(coll: &str) {
    let smpi = smpi_coll_time();
    let app = coll_time();
    let mut bad = Vec::new();
    for (np, root) in [(4usize, 0usize), (7, 6)] {
        for bytes in sizes(coll) {
            let args = vec![coll.to_string(), bytes.to_string(), root.to_string()];
            let o = ours(&app, coll, np, &[], &args);
            let case = format!("{coll} np={np} S={bytes}");
            if refused(coll, np) {
                let key = format!("smpi/{coll}:automatic is not supported");
                if o.code == Some(0) || !o.stderr.contains(&key) {
                    bad.push(format!("{case}: expected a refusal\n{}", o.describe()));
                }
                if let Some(s) = smpi {
                    let t = theirs(s, coll, np, &args);
                    if t.code == Some(0) && times(&t).len() == np {
                        bad.push(format!(
                            "{case}: SMPI got through where we refuse\n{}",
                            t.describe()
                        ));
                    }
                }
                continue;
            }
            // (a candidate calling its own collective nests more reports: `lr`'s remainder)
            if o.code != Some(0) || times(&o).len() != np || reports(&o).len() < np {
                bad.push(format!("{case}: we failed\n{}", o.describe()));
                continue;
            }
            let warned = o
                .stderr
                .contains(&format!("smpirun: warning: smpi/{coll}:automatic:"));
            if warned != gap(coll, np, bytes) {
                bad.push(format!(
                    "{case}: known-gap warning {warned}, expected the opposite\n{}",
                    o.stderr
                ));
            }
            let Some(s) = smpi else { continue };
            let t = theirs(s, coll, np, &args);
            if t.code != Some(0) || times(&t).len() != np {
                bad.push(format!("{case}: SMPI failed\n{}", t.describe()));
                continue;
            }
            if gap(coll, np, bytes) {
                for (a, b) in times(&t).iter().zip(times(&o).iter()) {
                    let (x, y) = (field_f64(a, "t"), field_f64(b, "t"));
                    if (x - y).abs() > 1e-5 * x.abs() || a.split(' ').nth(1) != b.split(' ').nth(1) {
                        bad.push(format!("{case}: SMPI {a}, ours {b}"));
                    }
                }
                if reports(&t).len() != reports(&o).len() {
                    bad.push(format!(
                        "{case}: report lines\nSMPI {:#?}\nours {:#?}",
                        reports(&t),
                        reports(&o)
                    ));
                }
            } else {
                if times(&t) != times(&o) {
                    bad.push(format!(
                        "{case}: times\nSMPI {:#?}\nours {:#?}",
                        times(&t),
                        times(&o)
                    ));
                }
                if reports(&t) != reports(&o) {
                    bad.push(format!(
                        "{case}: report lines\nSMPI {:#?}\nours {:#?}",
                        reports(&t),
                        reports(&o)
                    ));
                }
            }
        }
    }
    assert!(bad.is_empty(), "{} mismatch(es):\n{}", bad.len(), bad.join("\n"));
}

#[test]
fn barrier_as_smpi() {
    collective("barrier");
}

#[test]
fn bcast_as_smpi() {
    collective("bcast");
}

#[test]
fn reduce_as_smpi() {
    collective("reduce");
}

#[test]
fn allreduce_as_smpi() {
    collective("allreduce");
}

#[test]
fn gather_as_smpi() {
    collective("gather");
}

#[test]
fn scatter_as_smpi() {
    collective("scatter");
}

#[test]
fn allgather_as_smpi() {
    collective("allgather");
}

#[test]
fn allgatherv_as_smpi() {
    collective("allgatherv");
}

#[test]
fn alltoall_as_smpi() {
    collective("alltoall");
}

#[test]
fn alltoallv_as_smpi() {
    collective("alltoallv");
}

#[test]
fn reduce_scatter_as_smpi() {
    collective("reduce_scatter");
}

/// Two ranks: the barrier SMPI gets through (its report lines, checked on 4
/// and 7 ranks above, are refusals there).
#[test]
fn barrier_on_two_ranks_as_smpi() {
    let app = coll_time();
    let args = vec!["barrier".to_string(), "0".into(), "0".into()];
    let o = ours(&app, "barrier", 2, &[], &args);
    o.assert_success();
    assert_eq!(reports(&o).len(), 2, "{}", o.describe());
    assert!(
        reports(&o)[0].contains("[smpi_colls/WARNING] For rank 0, the quickest was "),
        "{}",
        o.describe()
    );
    let Some(s) = smpi_coll_time() else { return };
    let t = theirs(s, "barrier", 2, &args);
    assert_eq!(
        (times(&t), reports(&t)),
        (times(&o), reports(&o)),
        "{}",
        t.describe()
    );
}

/// Every supported collective leaves the right data, `MPI_IN_PLACE` included
/// (the candidates run one after the other on the caller's buffers).
#[test]
fn result_data_is_right() {
    let app = check_app();
    let mut bad = Vec::new();
    for coll in [
        "reduce",
        "allreduce",
        "gather",
        "scatter",
        "allgather",
        "allgatherv",
        "alltoall",
        "alltoallv",
        "reduce_scatter",
    ] {
        for np in [4usize, 7] {
            if refused(coll, np) {
                continue;
            }
            let o = ours(&app, coll, np, &[], &[coll.to_string()]);
            let ok = o.lines_starting_with(&format!("ok {coll} ")).count();
            if o.code != Some(0) || ok != np {
                bad.push(format!("{coll} np={np}: {ok} ok lines\n{}", o.describe()));
            }
        }
    }
    // bcast on one rank: no algorithm runs (as in SMPI), no report.
    let o = ours(&app, "bcast", 1, &[], &["bcast".to_string()]);
    if o.code != Some(0) || o.lines_starting_with("ok bcast ").count() != 1 || !reports(&o).is_empty() {
        bad.push(format!("bcast np=1\n{}", o.describe()));
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// Where SMPI 3.32 aborts, deadlocks or crashes, the run stops with an error
/// naming the key and why.
#[test]
fn refusals_name_the_key_and_the_reason() {
    let app = check_app();
    for (coll, np, why) in [
        ("bcast", 2, "SMPI 3.32 aborts there"),
        ("barrier", 4, "SMPI 3.32 deadlocks there"),
        ("alltoall", 3, "SMPI 3.32 crashes there"),
        ("reduce_scatter", 6, "mpich_noncomm fails an assertion"),
        ("allreduce", 1, "SMPI 3.32 crashes or deadlocks there"),
    ] {
        let o = ours(&app, coll, np, &[], &[coll.to_string()]);
        o.assert_failure()
            .assert_stderr_has(&[&format!("smpi/{coll}:automatic is not supported"), why]);
    }
    // A reduce of fewer elements than ranks on 7 ranks: SMPI's candidate
    // scatter_gather fails.
    let args = vec!["reduce".to_string(), "8".into(), "6".into()];
    ours(&coll_time(), "reduce", 7, &[], &args)
        .assert_failure()
        .assert_stderr_has(&["smpi/reduce:automatic is not supported", "MPI_ERR_TRUNCATE"]);
    if let Some(s) = smpi_coll_time() {
        let t = theirs(s, "reduce", 7, &args);
        assert!(t.code != Some(0), "SMPI got through\n{}", t.describe());
    }
}

/// The report is SimGrid's warning in category `smpi_colls` (under `smpi`):
/// `--log` thresholds hide it, `no_loc` drops SMPI's source location.
#[test]
fn log_settings_filter_the_report() {
    let app = coll_time();
    let args = vec!["allgather".to_string(), "4096".into(), "0".into()];
    let run = |extra: &[&str]| {
        let o = ours(&app, "allgather", 4, extra, &args);
        o.assert_success();
        o
    };
    let plain = run(&[]);
    let lines = reports(&plain);
    assert_eq!(lines.len(), 4, "{}", plain.describe());
    assert!(lines[0].starts_with("[h-0:0:(1) "), "{lines:#?}");
    assert!(
        lines[0].contains("] ./src/smpi/colls/smpi_automatic_selector.cpp:71: [smpi_colls/WARNING] For rank 0, the quickest was "),
        "{lines:#?}"
    );
    assert!(
        lines[1].contains("[smpi_colls/WARNING] The quickest allgather was ")
            && lines[1].contains(" on rank 1 and took 0."),
        "{lines:#?}"
    );
    for hide in [
        "--log=smpi_colls.thres:error",
        "--log=smpi.thres:critical",
        "--log=root.thres:error",
    ] {
        let o = run(&[hide]);
        assert!(
            !o.stderr.contains("[smpi_colls/WARNING]"),
            "{hide}\n{}",
            o.describe()
        );
    }
    let o = run(&["--log=no_loc"]);
    let n = o
        .stderr
        .lines()
        .filter(|l| l.contains("[smpi_colls/WARNING]"))
        .count();
    assert_eq!(n, 4, "{}", o.describe());
    assert!(!o.stderr.contains(REPORT), "{}", o.describe());
    // the timing does not depend on the printing
    assert_eq!(times(&o), times(&plain));
}

/// `smpirun --help-cfg` offers `automatic` for every collective.
#[test]
fn help_cfg_lists_automatic() {
    let mut cmd = Command::new(e2e_tests::smpirun());
    cmd.arg("--help-cfg");
    let o = run_command(cmd, Duration::from_secs(30));
    o.assert_success();
    let text = o.stdout.clone() + &o.stderr;
    let lines: Vec<&str> = text.lines().collect();
    for coll in [
        "barrier",
        "bcast",
        "reduce",
        "allreduce",
        "gather",
        "scatter",
        "allgather",
        "allgatherv",
        "alltoall",
        "alltoallv",
        "reduce_scatter",
    ] {
        let key = format!("smpi/{coll} ");
        let at = lines
            .iter()
            .position(|l| l.starts_with(&key))
            .unwrap_or_else(|| panic!("--help-cfg lists smpi/{coll}\n{text}"));
        let names = lines[at..].iter().take(4).find(|l| l.contains("(selectors) or "));
        assert!(
            names.is_some_and(|l| l.trim_end().ends_with(", automatic")),
            "smpi/{coll} lists automatic\n{}",
            lines[at..].iter().take(4).copied().collect::<Vec<_>>().join("\n")
        );
    }
}

/// SMPI's trace has an event per candidate, ours not: smpirun says so (once),
/// and the known gaps are said once per run too.
#[test]
fn trace_and_known_gaps_are_warned_of_once() {
    let app = coll_time();
    let file = scratch_path("automatic.paje");
    let trace = format!("--cfg=tracing/filename:{}", file.display());
    let args = vec!["allreduce".to_string(), "16384".into(), "0".into(), "warm".into()];
    let o = ours(&app, "allreduce", 7, &["-trace", &trace], &args);
    o.assert_success();
    let count = |needle: &str| o.stderr.lines().filter(|l| l.contains(needle)).count();
    assert_eq!(
        count("smpirun: warning: smpi/allreduce:automatic: the trace does not carry SMPI's events"),
        1,
        "{}",
        o.describe()
    );
    assert_eq!(
        count("smpirun: warning: smpi/allreduce:automatic: candidate smp_rsag (and smp_rsag_rab"),
        1,
        "{}",
        o.describe()
    );
    // two calls (warm), each reported by the 7 ranks, plus `lr`'s nested ones
    assert!(reports(&o).len() >= 14, "{}", o.describe());
    let plain = ours(&app, "allreduce", 4, &[], &args);
    assert!(
        !plain
            .stderr
            .contains("smpirun: warning: smpi/allreduce:automatic"),
        "{}",
        plain.describe()
    );
}

/// A second call starts from what the first left: SMPI's MVAPICH2 pointers
/// (reduce and allreduce `mpich` run the two-level algorithm with the
/// `mvapich2` candidate's functions) and the SMP layout.
#[test]
fn second_call_as_smpi() {
    let Some(s) = smpi_coll_time() else { return };
    let app = coll_time();
    let mut bad = Vec::new();
    for (coll, bytes) in [
        ("reduce", 16384usize),
        ("reduce", 1048576),
        ("allreduce", 16384),
        ("allreduce", 1048576),
        ("allgather", 4096),
        ("alltoall", 262144),
    ] {
        let args = vec![coll.to_string(), bytes.to_string(), "0".into(), "warm".into()];
        let o = ours(&app, coll, 4, &[], &args);
        let t = theirs(s, coll, 4, &args);
        if o.code != Some(0) || times(&o).len() != 4 || (times(&t), reports(&t)) != (times(&o), reports(&o)) {
            bad.push(format!(
                "{coll} S={bytes}\nSMPI:\n{}\nours:\n{}",
                t.describe(),
                o.describe()
            ));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// `smpi/coll-selector:automatic` makes every collective without its own
/// `smpi/<coll>` value run `automatic` (SMPI's `set_collectives`). Where
/// SMPI gets through (reduce, gather, scatter, reduce_scatter; barrier on 2
/// ranks; scan, which has no automatic; allreduce given its own algorithm),
/// every rank's time and every report line are SMPI's (also with 2 ranks
/// per host for reduce, gather and reduce_scatter). Where SMPI's
/// candidates would run another collective's automatic inside theirs
/// (allreduce, allgather(v), alltoall(v): SMPI aborts or deadlocks on these
/// calls) or SMPI fails (bcast, barrier on 4 ranks), we refuse, naming the
/// selector, and SMPI indeed fails.
#[test]
fn coll_selector_automatic_as_smpi() {
    let smpi = smpi_coll_time();
    let app = coll_time();
    const SELECTOR: &str = "smpi/coll-selector:automatic";
    let mut bad = Vec::new();
    let runs: &[(usize, &str, usize, usize, &[&str])] = &[
        (4, "reduce", 16384, 0, &[]),
        (7, "reduce", 1048576, 6, &[]),
        (4, "gather", 4096, 0, &[]),
        (7, "gather", 262144, 6, &[]),
        (4, "scatter", 4096, 0, &[]),
        (7, "scatter", 262144, 6, &[]),
        (4, "reduce_scatter", 4096, 0, &[]),
        (2, "barrier", 0, 0, &[]),
        (4, "scan", 16384, 0, &[]),
        (4, "allreduce", 16384, 0, &["smpi/allreduce:rdb"]),
    ];
    for &(np, coll, bytes, root, extra) in runs {
        let cfg: Vec<&str> = std::iter::once(SELECTOR).chain(extra.iter().copied()).collect();
        let args = vec![coll.to_string(), bytes.to_string(), root.to_string()];
        let case = format!("{coll} np={np} S={bytes} {cfg:?}");
        let o = ours_with(&app, &cfg, np, &[], &args);
        let automatic = extra.is_empty() && coll != "scan";
        if o.code != Some(0) || times(&o).len() != np || (reports(&o).len() >= np) != automatic {
            bad.push(format!("{case}: we failed\n{}", o.describe()));
            continue;
        }
        let Some(s) = smpi else { continue };
        let t = theirs_with(s, &cfg, np, &args);
        if (times(&t), reports(&t)) != (times(&o), reports(&o)) {
            bad.push(format!(
                "{case}\nSMPI:\n{}\nours:\n{}",
                t.describe(),
                o.describe()
            ));
        }
    }
    // 2 ranks per host (the SMP candidates' host reductions)
    let hosts = hosts_by(2);
    for (coll, bytes, root) in [
        ("reduce", 1048576usize, 3usize),
        ("gather", 4096, 0),
        ("reduce_scatter", 4096, 0),
    ] {
        let args = vec![coll.to_string(), bytes.to_string(), root.to_string()];
        let o = ours_on(&hosts, &app, &[SELECTOR], 8, &[], &args);
        if o.code != Some(0) || times(&o).len() != 8 || reports(&o).len() < 8 {
            bad.push(format!("{coll} 2 per host: we failed\n{}", o.describe()));
            continue;
        }
        let Some(s) = smpi else { continue };
        let t = theirs_on(&hosts, s, &[SELECTOR], 8, &args);
        if (times(&t), reports(&t)) != (times(&o), reports(&o)) {
            bad.push(format!(
                "{coll} 2 per host\nSMPI:\n{}\nours:\n{}",
                t.describe(),
                o.describe()
            ));
        }
    }
    for (np, coll, bytes, why) in [
        (4usize, "allreduce", 16384usize, "while bcast is automatic too"),
        (4, "allgather", 4096, "while bcast is automatic too"),
        (4, "allgatherv", 4096, "while bcast is automatic too"),
        (4, "alltoall", 4096, "while barrier is automatic too"),
        (2, "alltoallv", 4096, "while barrier is automatic too"),
        (4, "alltoallv", 4096, "while barrier is automatic too"),
        (4, "bcast", 16384, "SMPI 3.32 aborts there"),
        (4, "barrier", 0, "SMPI 3.32 deadlocks there"),
    ] {
        let args = vec![coll.to_string(), bytes.to_string(), "0".into()];
        let case = format!("{coll} np={np}");
        let o = ours_with(&app, &[SELECTOR], np, &[], &args);
        let key = format!("{SELECTOR} (for {coll}) is not supported");
        if o.code == Some(0) || !o.stderr.contains(&key) || !o.stderr.contains(why) {
            bad.push(format!("{case}: expected a refusal ({why})\n{}", o.describe()));
        }
        let Some(s) = smpi else { continue };
        let t = theirs_with(s, &[SELECTOR], np, &args);
        // (SMPI gets through alltoallv on 2 ranks, its candidates running the
        // automatic barrier inside: not supported here)
        let through = t.code == Some(0) && times(&t).len() == np;
        if through != (coll == "alltoallv" && np == 2) {
            bad.push(format!("{case}: SMPI got through: {through}\n{}", t.describe()));
        }
    }
    assert!(bad.is_empty(), "{} mismatch(es):\n{}", bad.len(), bad.join("\n"));
}

/// SMPI's `mvapich2` reduce sets its two-level pointers (the intra-node and
/// the inter-leader reductions of its table) on every call, also when it
/// runs a one-level reduce: the `mvapich2_two_level` candidate after it runs
/// them. With 2 ranks per host (a host reduction to do), on 4 and 8 ranks:
/// SMPI's times and report lines, first and second call.
#[test]
fn mvapich2_two_level_reduce_after_a_one_level_choice_as_smpi() {
    let app = coll_time();
    let hosts = hosts_by(2);
    let cfg = ["smpi/reduce:automatic"];
    let mut bad = Vec::new();
    for (np, bytes, warm) in [
        (4usize, 1048576usize, false),
        (4, 1048576, true),
        (8, 1048576, false),
    ] {
        let mut args = vec!["reduce".to_string(), bytes.to_string(), "0".into()];
        if warm {
            args.push("warm".into());
        }
        let case = format!("np={np} S={bytes} warm={warm}");
        let o = ours_on(&hosts, &app, &cfg, np, &[], &args);
        if o.code != Some(0) || times(&o).len() != np || reports(&o).len() < np {
            bad.push(format!("{case}: we failed\n{}", o.describe()));
            continue;
        }
        let Some(s) = smpi_coll_time() else { continue };
        let t = theirs_on(&hosts, s, &cfg, np, &args);
        if (times(&t), reports(&t)) != (times(&o), reports(&o)) {
            bad.push(format!(
                "{case}\nSMPI:\n{}\nours:\n{}",
                t.describe(),
                o.describe()
            ));
        }
    }
    // above 1 MiB the table's inter-leader reduction is the reduce-scatter +
    // gather, which no two-level reduce of ours has: refused
    let args = vec!["reduce".to_string(), "4194304".into(), "0".into()];
    let o = ours_on(&hosts, &app, &cfg, 4, &[], &args);
    if o.code == Some(0) || !o.stderr.contains("smpi/reduce:automatic is not supported here") {
        bad.push(format!("S=4194304: expected a refusal\n{}", o.describe()));
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// A forced reduction algorithm known to keep rank order with other messages than SMPI's on a
/// non-commutative operation says so once (its result is right, its time is not SMPI's); the
/// same algorithm on a commutative operation, or another algorithm, says nothing.
#[test]
fn forced_algorithms_with_a_noncommutative_gap_warn() {
    let prog = build_c(&write_scratch(
        "noncommutative_reduce.c",
        r#"#include <mpi.h>
#include <stdio.h>
#include <string.h>
static void first(void *in, void *inout, int *len, MPI_Datatype *t) { (void)in; (void)inout; (void)len; (void)t; }
int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, x, y = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  x = rank;
  MPI_Op op = MPI_SUM;
  if (argc > 1 && strcmp(argv[1], "noncommutative") == 0) MPI_Op_create(first, 0, &op);
  for (int i = 0; i < 3; i++) MPI_Reduce(&x, &y, 1, MPI_INT, op, 0, MPI_COMM_WORLD);
  if (rank == 0) printf("done\n");
  MPI_Finalize();
  return 0;
}
"#,
    ));
    let run = |algo: &str, arg: &str| {
        Smpirun::new(&prog)
            .platform(platform())
            .hostfile(hostfile())
            .np(4)
            .cfg("smpi/simulate-computation:no")
            .cfg(&format!("smpi/reduce:{algo}"))
            .args([arg])
            .run()
    };
    let warning = "smpi/reduce:ompi_chain on a non-commutative operation keeps rank order";
    let out = run("ompi_chain", "noncommutative");
    out.assert_success();
    assert_eq!(out.stderr.matches(warning).count(), 1, "{}", out.describe());
    let out = run("ompi_chain", "sum");
    out.assert_success();
    assert!(!out.stderr.contains("non-commutative"), "{}", out.describe());
    let out = run("binomial", "noncommutative");
    out.assert_success();
    assert!(!out.stderr.contains("non-commutative"), "{}", out.describe());
}
