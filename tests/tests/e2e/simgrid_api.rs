//! SimGrid's helper API that SMPI programs include (`xbt/log.h`,
//! `xbt/asserts.h`, `xbt/sysdep.h`, `simgrid/{actor,host,engine,instr}.h`,
//! `SMPI_SHARED_CALL`, tagged sampling), with `apps/simgrid_api/`:
//! `simgrid_api.c` exercises all of it, `assert_fail.c` fails an `xbt_assert`.
//!
//! Checked: log lines in SimGrid's layout (host, actor name = rank, pid =
//! rank + 1, simulated time, location for every priority but info), `--log`
//! thresholds and their inheritance, errors for bad settings, the order of log
//! lines and the program's own stderr lines, actor and host answers as SMPI
//! gives them (the host speed and cores of the platform), `xbt_assert`
//! failures (exit status 134, the rank named), and smpicc picking our headers
//! over SimGrid's installed ones.
//!
//! When SimGrid 3.32 is installed (`/usr/bin/smpicc`, `/usr/bin/smpirun`), the
//! same program on the same platform must print the same lines under both.
//! One SMPI quirk shapes that comparison: with privatization (SMPI's
//! default), a `--log` threshold reaches only the first copy of the program
//! whose category is used (rank 0's), since SimGrid drops a setting once it
//! applied it; the other ranks keep the default. We apply settings to every
//! rank (the documented meaning), so with thresholds only rank 0's lines are
//! compared. The last line comes after sampled loops, whose measured CPU
//! time both simulators inject: its time is compared within 5 µs.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

use e2e_tests::{
    apps_dir, build_c, fields, platform, run_command, scratch_dir, write_scratch, RunOutput, Smpirun,
    DEFAULT_TIMEOUT,
};

/// Ranks 0, 1, 2 on alice (1 Gf, 1 core), bob (1 Gf), carol (500 Mf, 4 cores).
const ALL_HOSTS: &str = "alice\nbob\ncarol\n";
/// Ranks on alice, bob, alice: no rank on carol, whose per-host `smpi/os` we do
/// not apply yet (times would differ from SMPI's).
const NO_CAROL: &str = "alice\nbob\nalice\n";

fn api_program() -> PathBuf {
    build_c(&apps_dir().join("simgrid_api/simgrid_api.c"))
}

fn run_api(hosts: &str, logs: &[&str]) -> RunOutput {
    let mut run = Smpirun::new(api_program())
        .platform(platform("small_star.xml"))
        .hostfile(write_scratch("hosts", hosts))
        .np(3)
        .cfg("smpi/simulate-computation:no");
    for l in logs {
        run = run.opt(format!("--log={l}"));
    }
    let out = run.run();
    out.assert_ok();
    out
}

/// The log lines of a run (SimGrid's layout starts with `[`), our summary excluded.
fn log_lines(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| l.starts_with('[') && !l.starts_with("[smpirun]"))
        .collect()
}

/// The stdout line of `rank` that starts with `rank=<rank> <key>`.
fn rank_line<'a>(out: &'a RunOutput, rank: usize, key: &str) -> &'a str {
    let prefix = format!("rank={rank} {key}");
    out.stdout
        .lines()
        .find(|l| l.starts_with(&prefix))
        .unwrap_or_else(|| panic!("no line {prefix}...\n{}", out.describe()))
}

#[track_caller]
fn has_line(out: &RunOutput, line: &str) {
    assert!(
        out.stderr.lines().any(|l| l == line),
        "expected the line {line:?} on stderr\n{}",
        out.describe()
    );
}

#[track_caller]
fn lacks(out: &RunOutput, needle: &str) {
    assert!(
        !out.stderr.contains(needle),
        "{needle:?} must not be on stderr\n{}",
        out.describe()
    );
}

#[test]
fn log_lines_follow_simgrids_layout_with_host_pid_and_time() {
    let out = run_api(ALL_HOSTS, &[]);
    has_line(&out, "[alice:0:(1) 0.000000] [api/INFO] before MPI_Init");
    has_line(&out, "[bob:1:(2) 0.000000] [api/INFO] hello from rank 1 of 3");
    has_line(&out, "[carol:2:(3) 0.000000] [api_smpi/INFO] under smpi info 2");
    has_line(
        &out,
        "[alice:0:(1) 0.000000] [api_child/INFO] default category switched to api_child on rank 0",
    );
    // Every priority but info shows the location; smpicc passed the source by absolute path.
    let source = apps_dir().join("simgrid_api/simgrid_api.c");
    let source = source.canonicalize().expect("the source exists");
    let warning = out
        .stderr
        .lines()
        .find(|l| l.ends_with("[api/WARNING] warning 2"))
        .unwrap_or_else(|| panic!("no warning line\n{}", out.describe()));
    assert!(
        warning.starts_with(&format!("[carol:2:(3) 0.000000] {}:", source.display())),
        "{warning}"
    );
    assert!(
        out.stderr.contains(": [api/CRITICAL] critical 0\n"),
        "{}",
        out.describe()
    );
    assert!(
        out.stderr.contains(": [api_top/WARNING] top warning 1\n"),
        "{}",
        out.describe()
    );
    // The simulated time of a line is the rank's clock (simgrid_get_clock after the barrier).
    for (rank, host) in [(0, "alice"), (1, "bob"), (2, "carol")] {
        let clock1 = fields(rank_line(&out, rank, "clock0"))
            .get("clock1")
            .copied()
            .unwrap()
            .to_string();
        assert_ne!(clock1, "0.000000");
        has_line(
            &out,
            &format!(
                "[{host}:{rank}:({}) {clock1}] [api/INFO] after the barrier",
                rank + 1
            ),
        );
    }
    // A message longer than the headers' 1024-byte buffer arrives whole.
    let long = format!("[alice:0:(1) 0.000000] [api/INFO] long {} end", "x".repeat(1099));
    has_line(&out, &long);
    // Below info: nothing by default.
    lacks(&out, "DEBUG");
    lacks(&out, "VERBOSE");
    assert_eq!(
        rank_line(&out, 1, "enabled"),
        "rank=1 enabled api.debug=0 api_child.debug=0 api_smpi.debug=0 api_top.info=1"
    );
}

#[test]
fn log_lines_and_the_programs_own_stderr_stay_in_order() {
    let out = run_api(ALL_HOSTS, &[]);
    for (rank, host) in [(0, "alice"), (1, "bob"), (2, "carol")] {
        let pos = |needle: &str| {
            out.stderr
                .find(needle)
                .unwrap_or_else(|| panic!("{needle:?} missing\n{}", out.describe()))
        };
        let before = pos(&format!(
            "[{host}:{rank}:({}) 0.000000] [api_child/INFO] default category",
            rank + 1
        ));
        let plain = pos(&format!("plain stderr line of rank {rank}\n"));
        let after = pos(&format!("[api_child/ERROR] after the plain line {rank}\n"));
        assert!(
            before < plain && plain < after,
            "rank {rank} out of order\n{}",
            out.describe()
        );
    }
}

#[test]
fn actors_and_hosts_answer_as_smpi() {
    let out = run_api(ALL_HOSTS, &[]);
    // (host, speed of one core in the platform, cores)
    let hosts = [
        ("alice", "1000000000", "1"),
        ("bob", "1000000000", "1"),
        ("carol", "500000000", "4"),
    ];
    for (rank, (host, speed, cores)) in hosts.iter().enumerate() {
        assert_eq!(
            rank_line(&out, rank, "pid"),
            format!(
                "rank={rank} pid={p} self_pid={p} ppid=0 name={rank} self_name={rank}",
                p = rank + 1
            )
        );
        assert_eq!(
            rank_line(&out, rank, "host"),
            format!(
                "rank={rank} host={host} self_host={host} actor_host={host} speed={speed} cores={cores} by_name=1 hosts=3"
            )
        );
        assert_eq!(
            rank_line(&out, rank, "xbt"),
            format!("rank={rank} xbt zero_sum=0 realloc=7 strdup=copied new=1.5 null_strdup=1")
        );
        // Computed once, by the first rank there; every rank gets that result.
        let shared = fields(rank_line(&out, rank, "shared"));
        assert_eq!(shared["shared_runs_total"], "1", "{}", out.describe());
        assert!(shared["shared"].starts_with("computed-by-"), "{}", out.describe());
        // Two tags are two sites; the same tag again finds its site already sampled.
        assert_eq!(
            rank_line(&out, rank, "sampled"),
            format!("rank={rank} sampled a=3 b=3 a_again=0")
        );
    }
    let first: Vec<_> = (0..3)
        .map(|r| fields(rank_line(&out, r, "shared"))["shared"].to_string())
        .collect();
    assert!(first.iter().all(|s| *s == first[0]), "{first:?}");
}

#[test]
fn log_thresholds_filter_and_are_inherited() {
    // api and its child api_child at debug; api's parent api_top stays at info.
    let out = run_api(ALL_HOSTS, &["api.thres:debug"]);
    assert!(
        out.stderr.contains(": [api/DEBUG] debug 2\n"),
        "{}",
        out.describe()
    );
    assert!(
        out.stderr.contains(": [api/VERBOSE] verbose 0\n"),
        "{}",
        out.describe()
    );
    assert!(
        out.stderr.contains(": [api_child/DEBUG] child debug 1\n"),
        "{}",
        out.describe()
    );
    lacks(&out, "api_top verbose");
    lacks(&out, "under smpi debug");
    assert_eq!(
        rank_line(&out, 2, "enabled"),
        "rank=2 enabled api.debug=1 api_child.debug=1 api_smpi.debug=0 api_top.info=1"
    );

    // A child's own setting wins over its parent's; several settings in one flag.
    let out = run_api(ALL_HOSTS, &["api.thres:debug api_child.threshold:error"]);
    assert!(
        out.stderr.contains(": [api/DEBUG] debug 0\n"),
        "{}",
        out.describe()
    );
    lacks(&out, "child info");
    lacks(&out, "child debug");
    assert!(
        out.stderr
            .contains(": [api_child/ERROR] after the plain line 0\n"),
        "{}",
        out.describe()
    );

    // root reaches every category; the last setting of a category wins.
    let out = run_api(ALL_HOSTS, &["root.thres:info", "root.thres:critical"]);
    let lines = log_lines(&out.stderr);
    assert_eq!(lines.len(), 3, "only the 3 CRITICAL lines\n{}", out.describe());
    assert!(
        lines.iter().all(|l| l.contains("[api/CRITICAL] critical")),
        "{lines:?}"
    );

    // SimGrid's smpi category: the program's subcategory follows it; a note says
    // SimGrid's own messages are not produced.
    let out = run_api(ALL_HOSTS, &["smpi.thres:debug"]);
    assert!(
        out.stderr.contains(": [api_smpi/DEBUG] under smpi debug 1\n"),
        "{}",
        out.describe()
    );
    lacks(&out, "[api/DEBUG]");
    out.assert_stderr_has(&["note: --log=smpi.thres:debug", "internal 'smpi' messages"]);

    // no_loc: no file:line in lines.
    let out = run_api(ALL_HOSTS, &["no_loc"]);
    has_line(&out, "[carol:2:(3) 0.000000] [api/WARNING] warning 2");
}

#[test]
fn log_settings_are_checked() {
    let run = |flag: &str| {
        Smpirun::new(api_program())
            .platform(platform("small_star.xml"))
            .np(3)
            .opt(flag)
            .run()
    };
    for (flag, why) in [
        ("--log=api.thres:warn", "unknown priority 'warn'"),
        ("--log=api:debug", "invalid setting 'api:debug'"),
        ("--log=api.color:red", "unknown setting 'color'"),
        ("--log=api.fmt:%m", "not supported"),
    ] {
        let out = run(flag);
        assert_eq!(out.code, Some(2), "{flag}\n{}", out.describe());
        out.assert_stderr_has(&[&format!("smpirun: error: {flag}: "), why]);
    }
    // SimGrid's own categories are accepted (programs set them to silence SMPI).
    let out = Smpirun::new(api_program())
        .platform(platform("small_star.xml"))
        .np(3)
        .opt("--log=smpi.thres:warning")
        .opt("--log=xbt_cfg.thres:critical")
        .opt("--log=smpi_request.thres:debug")
        .opt("--log=nosuch.thres:debug")
        .run();
    out.assert_ok();
    out.assert_stderr_has(&[
        "note: --log=smpi_request.thres:debug",
        "-request-log",
        "warning: --log=nosuch.thres:debug: no category named 'nosuch' was used",
    ]);
    lacks(&out, "'xbt_cfg'");
    // After the program, --log is still smpirun's (as with SMPI).
    let out = Smpirun::new(api_program())
        .platform(platform("small_star.xml"))
        .np(3)
        .args(["--log=api.thres:debug"])
        .run();
    out.assert_ok();
    assert!(out.stderr.contains("[api/DEBUG] debug 0"), "{}", out.describe());
}

#[test]
fn a_failed_xbt_assert_ends_the_run_naming_the_rank() {
    let program = build_c(&apps_dir().join("simgrid_api/assert_fail.c"));
    for (mode, message, what) in [
        ("assert", "rank 1 refuses (value 42)", "xbt_assert"),
        ("assert1", "Assertion rank != 1 failed", "xbt_assert"),
        ("die", "rank 1 gives up", "xbt_die"),
    ] {
        let out = Smpirun::new(&program)
            .platform(platform("small_star.xml"))
            .hostfile(write_scratch("hosts", ALL_HOSTS))
            .np(3)
            .cfg("smpi/simulate-computation:no")
            .args([mode])
            .run();
        assert_eq!(
            out.code,
            Some(134),
            "{mode}: 128 + SIGABRT, as SimGrid\n{}",
            out.describe()
        );
        let critical = out
            .stderr
            .lines()
            .find(|l| l.contains("[root/CRITICAL]"))
            .unwrap_or_else(|| panic!("{mode}: no CRITICAL line\n{}", out.describe()));
        assert!(critical.starts_with("[bob:1:(2) "), "{critical}");
        assert!(
            critical.contains("assert_fail.c:") && critical.ends_with(message),
            "{critical}"
        );
        out.assert_stderr_has(&[
            "smpirun: error: rank 1 (on bob) failed",
            &format!("aborted by {what}"),
            message,
        ]);
        // Output printed before is not lost.
        for rank in 0..3 {
            assert!(
                out.stdout
                    .contains(&format!("rank {rank} printed before the check")),
                "{}",
                out.describe()
            );
        }
    }
}

#[test]
fn smpicc_uses_our_headers_even_with_simgrid_installed() {
    let src = write_scratch(
        "includes.c",
        "#include <xbt.h>\n#include <simgrid/actor.h>\n#include <simgrid/host.h>\n#include <simgrid/engine.h>\n\
         #include <simgrid/instr.h>\n#include <mpi.h>\nint main(void) { return 0; }\n",
    );
    let mut cmd = Command::new(e2e_tests::smpicc());
    cmd.arg("-M").arg(&src);
    let out = run_command(cmd, DEFAULT_TIMEOUT);
    assert_eq!(out.code, Some(0), "{}", out.describe());
    let ours = e2e_tests::workspace_root().join("smpi-shim/include");
    for header in [
        "xbt/log.h",
        "xbt/asserts.h",
        "xbt/sysdep.h",
        "xbt/base.h",
        "simgrid/host.h",
        "simgrid/forward.h",
    ] {
        assert!(
            out.stdout.contains(&ours.join(header).display().to_string()),
            "{header} is not ours\n{}",
            out.describe()
        );
    }
    assert!(!out.stdout.contains("/usr/include/xbt/"), "{}", out.describe());
    assert!(
        !out.stdout.contains("/usr/include/simgrid/"),
        "{}",
        out.describe()
    );
}

// ------------------------------------------------------------------ comparison with SMPI 3.32

/// SimGrid's tools, when installed.
fn simgrid_tools() -> Option<(PathBuf, PathBuf)> {
    let cc = Path::new("/usr/bin/smpicc");
    let run = Path::new("/usr/bin/smpirun");
    (cc.exists() && run.exists()).then(|| (cc.to_path_buf(), run.to_path_buf()))
}

/// `simgrid_api.c` built with SimGrid's smpicc and run with its smpirun.
fn run_under_simgrid(logs: &[&str]) -> Option<RunOutput> {
    let Some((cc, run)) = simgrid_tools() else {
        eprintln!("skipped: SimGrid 3.32 is not installed (/usr/bin/smpicc, /usr/bin/smpirun)");
        return None;
    };
    // Built once per test process; the two comparison tests may ask at the same time.
    static BUILT: Mutex<Option<PathBuf>> = Mutex::new(None);
    let exe = {
        let mut built = BUILT.lock().unwrap_or_else(|e| e.into_inner());
        if built.is_none() {
            let exe = scratch_dir().join("simgrid_api_smpi");
            let mut c = Command::new(cc);
            c.arg("-O2")
                .arg(apps_dir().join("simgrid_api/simgrid_api.c"))
                .arg("-o")
                .arg(&exe);
            let out = run_command(c, DEFAULT_TIMEOUT);
            assert_eq!(out.code, Some(0), "SimGrid's smpicc failed\n{}", out.describe());
            *built = Some(exe);
        }
        built.clone().expect("built just above")
    };
    let mut c = Command::new(run);
    c.current_dir(scratch_dir())
        .arg("-np")
        .arg("3")
        .arg("-platform")
        .arg(platform("small_star.xml"))
        .arg("-hostfile")
        .arg(write_scratch("hosts", NO_CAROL))
        .arg("--cfg=smpi/simulate-computation:no");
    for l in logs {
        c.arg(format!("--log={l}"));
    }
    c.arg(&exe);
    let out = run_command(c, DEFAULT_TIMEOUT);
    assert_eq!(out.code, Some(0), "SMPI run failed\n{}", out.describe());
    Some(out)
}

/// Log lines of the program's categories (SMPI adds its own: xbt_cfg, smpi_config, ...).
fn program_log_lines(stderr: &str) -> Vec<&str> {
    log_lines(stderr)
        .into_iter()
        .filter(|l| {
            let cat = l
                .split(" [")
                .nth(1)
                .map_or("", |c| c.split('/').next().unwrap_or(""));
            cat.starts_with("api")
        })
        .collect()
}

fn sorted(mut v: Vec<&str>) -> Vec<&str> {
    v.sort_unstable();
    v
}

/// The simulated time of a log line (`[host:rank:(pid) 0.000282] ...`).
fn log_time(line: &str) -> f64 {
    line.split(") ")
        .nth(1)
        .and_then(|t| t.split(']').next())
        .and_then(|t| t.parse().ok())
        .unwrap_or_else(|| panic!("no time in the log line {line:?}"))
}

/// The program's last line, `done`, comes after its sampled loops, which
/// inject their measured CPU time (in SMPI as here): its time varies from run
/// to run by a microsecond or so, in both simulators. Such a line gets its time
/// masked for the exact comparison; [`done_times_agree`] checks them.
fn mask_sampled_time(line: &str) -> String {
    if !line.ends_with("] done") {
        return line.to_string();
    }
    let open = line.find(") ").expect("a log line names its pid") + 2;
    let close = line[open..].find(']').expect("a log line closes its header") + open;
    format!("{}~{}", &line[..open], &line[close..])
}

/// The lines with sampled times masked, sorted.
fn masked(lines: &[&str]) -> Vec<String> {
    let mut out: Vec<String> = lines.iter().map(|l| mask_sampled_time(l)).collect();
    out.sort_unstable();
    out
}

/// Each rank's `done` time agrees within the noise of the sampled loops
/// (microseconds; the run's network times are tens of microseconds).
#[track_caller]
fn done_times_agree(ours: &[&str], smpi: &[&str]) {
    let done = |lines: &[&str], tag: &str| -> f64 {
        log_time(
            lines
                .iter()
                .find(|l| l.contains(tag) && l.ends_with("] done"))
                .unwrap_or_else(|| panic!("no `done` line for {tag}")),
        )
    };
    for rank in 0..3 {
        let tag = format!(":{rank}:({}) ", rank + 1);
        let (a, b) = (done(ours, &tag), done(smpi, &tag));
        assert!(
            (a - b).abs() <= 5e-6,
            "rank {rank}: done at {a} here, at {b} under SMPI"
        );
    }
}

#[test]
fn same_lines_as_smpi_3_32() {
    let Some(smpi) = run_under_simgrid(&[]) else {
        return;
    };
    let ours = run_api(NO_CAROL, &[]);
    // The ranks interleave differently around MPI_Init, so compare as sets.
    assert_eq!(
        sorted(ours.stdout.lines().collect()),
        sorted(smpi.stdout.lines().collect()),
        "stdout differs\n--- SMPI ---\n{}\n--- ours ---\n{}",
        smpi.describe(),
        ours.describe()
    );
    let (mine, theirs) = (log_lines(&ours.stderr), program_log_lines(&smpi.stderr));
    assert!(!theirs.is_empty(), "{}", smpi.describe());
    assert_eq!(masked(&mine), masked(&theirs), "log lines differ");
    done_times_agree(&mine, &theirs);
    // Each rank's own lines come in the same order.
    for rank in 0..3 {
        let tag = format!(":{rank}:({}) ", rank + 1);
        let of_rank = |lines: &[&str]| -> Vec<String> {
            lines
                .iter()
                .filter(|l| l.contains(&tag))
                .map(|l| mask_sampled_time(l))
                .collect()
        };
        assert_eq!(of_rank(&mine), of_rank(&theirs), "rank {rank}'s lines differ");
    }
}

#[test]
fn same_thresholds_as_smpi_3_32_on_rank_0() {
    let logs = ["api.thres:debug", "api_child.thres:warning", "smpi.thres:debug"];
    let Some(smpi) = run_under_simgrid(&logs) else {
        return;
    };
    let ours = run_api(NO_CAROL, &logs);
    // See the module doc: SMPI applies a threshold to the first copy only.
    let mine: Vec<&str> = log_lines(&ours.stderr)
        .into_iter()
        .filter(|l| l.starts_with("[alice:0:(1) "))
        .collect();
    let theirs: Vec<&str> = program_log_lines(&smpi.stderr)
        .into_iter()
        .filter(|l| l.starts_with("[alice:0:(1) "))
        .collect();
    assert!(
        mine.iter().any(|l| l.contains("[api/DEBUG]")),
        "{}",
        ours.describe()
    );
    let in_order = |lines: &[&str]| -> Vec<String> { lines.iter().map(|l| mask_sampled_time(l)).collect() };
    assert_eq!(in_order(&mine), in_order(&theirs), "rank 0's lines differ");
    let smpi_enabled = smpi.stdout.lines().find(|l| l.starts_with("rank=0 enabled"));
    assert_eq!(Some(rank_line(&ours, 0, "enabled")), smpi_enabled);
}
