//! Time-independent traces (`smpirun -trace-ti`) and their replay
//! (`smpirun -replay`): the lines we record are SMPI 3.32's for the same
//! program, a recorded run replayed on the same platform takes the same
//! simulated time, SimGrid's own replay examples give the timestamps of
//! their tesh file, and a malformed trace is an error naming file and line.

use std::path::{Path, PathBuf};
use std::process::Command;

use e2e_tests::{
    build_app, build_c, platform, rel_diff, run_command, scratch_dir, scratch_path, smpirun, write_scratch,
    RunOutput, Smpirun, DEFAULT_TIMEOUT,
};

/// `smpirun -replay <trace> <options>` from the scratch directory.
fn replay(trace: &Path, options: &[&str]) -> RunOutput {
    let mut cmd = Command::new(smpirun());
    cmd.current_dir(scratch_dir())
        .arg("-replay")
        .arg(trace)
        .args(options);
    run_command(cmd, DEFAULT_TIMEOUT)
}

/// The simulated time of smpirun's summary line.
fn simulated_time(out: &RunOutput) -> f64 {
    let line = out
        .stderr
        .lines()
        .find(|l| l.starts_with("[smpirun] simulated time: "))
        .unwrap_or_else(|| panic!("no summary line\n{}", out.describe()));
    line["[smpirun] simulated time: ".len()..]
        .split_whitespace()
        .next()
        .and_then(|t| t.parse().ok())
        .unwrap_or_else(|| panic!("bad summary line {line}"))
}

/// Records `program` on `cluster_4.toml` with 4 ranks; returns the index file and the run.
fn record(program: &Path, args: &[&str], extra: &[&str]) -> (PathBuf, RunOutput) {
    let index = scratch_path("ti-trace");
    let mut r = Smpirun::new(program)
        .platform(platform("cluster_4.toml"))
        .np(4)
        .cfg("smpi/host-speed:1Gf")
        .opt("-trace-ti")
        .opt("-trace-file")
        .opt(index.as_os_str())
        .args(args.iter().copied());
    for e in extra {
        r = r.opt(*e);
    }
    let out = r.run();
    out.assert_success();
    (index, out)
}

fn round_trip(program: &Path, args: &[&str]) {
    let (index, online) = record(program, args, &[]);
    online.assert_stderr_has(&["time-independent trace written to"]);
    let p = platform("cluster_4.toml");
    let replayed = replay(&index, &["-platform", p.to_str().unwrap()]);
    replayed.assert_success();
    let (t_online, t_replay) = (simulated_time(&online), simulated_time(&replayed));
    assert!(
        rel_diff(t_online, t_replay) < 1e-2,
        "{}: online {t_online} s, replayed {t_replay} s\n{}",
        program.display(),
        replayed.describe()
    );
}

#[test]
fn a_blocking_ring_replays_in_the_same_simulated_time() {
    round_trip(&build_app("ring"), &["-l", "20", "-s", "100000"]);
}

#[test]
fn collectives_replay_in_the_same_simulated_time() {
    round_trip(&build_app("collectives"), &[]);
}

#[test]
fn a_non_blocking_stencil_replays_in_the_same_simulated_time() {
    round_trip(&build_app("stencil"), &[]);
}

/// Our trace of `apps/replay/ti_calls.c` has SMPI's lines but the
/// computation, which measures the machine: rank files, order, fields.
#[test]
fn recorded_lines_are_smpis() {
    let program = build_c(&e2e_tests::apps_dir().join("replay/ti_calls.c"));
    let (index, out) = record(&program, &[], &[]);
    // The sub-communicator collectives are flagged.
    out.assert_stderr_has(&["on communicators other than MPI_COMM_WORLD"]);
    let listed: Vec<String> = std::fs::read_to_string(&index)
        .unwrap()
        .lines()
        .map(String::from)
        .collect();
    assert_eq!(listed.len(), 4, "{listed:?}");
    let mut ours = String::new();
    for (r, file) in listed.iter().enumerate() {
        assert!(file.ends_with(&format!("_files/rank-{r}.txt")), "{file}");
        let text = std::fs::read_to_string(scratch_dir().join(file)).expect("a rank file");
        for l in text.lines() {
            assert!(l.starts_with(&format!("{r} ")), "rank {r}'s file has '{l}'");
            if !l.contains(" compute ") {
                ours.push_str(l);
                ours.push('\n');
            }
        }
    }
    let smpi: String = std::fs::read_to_string(e2e_tests::apps_dir().join("replay/ti_calls.smpi-3.32.txt"))
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(ours, smpi, "our TI lines differ from SMPI's");
}

/// A replay recorded again gives the trace it replayed (SimGrid's
/// replay-ti-colls test), and `ti-one-file` puts every rank in one file.
#[test]
fn recording_a_replay_gives_the_same_trace() {
    let (index, _) = record(
        &build_app("collectives"),
        &[],
        &["--cfg=tracing/smpi/format/ti-one-file:yes"],
    );
    let files: Vec<String> = std::fs::read_to_string(&index)
        .unwrap()
        .lines()
        .map(String::from)
        .collect();
    assert_eq!(files.len(), 1, "one file for all ranks: {files:?}");
    let again = scratch_path("ti-again");
    let p = platform("cluster_4.toml");
    let out = replay(
        &index,
        &[
            "-platform",
            p.to_str().unwrap(),
            "-trace-ti",
            "-trace-file",
            again.to_str().unwrap(),
        ],
    );
    out.assert_success();
    let first = std::fs::read_to_string(scratch_dir().join(&files[0])).unwrap();
    let lines_of = |text: &str, r: usize| -> Vec<String> {
        text.lines()
            .filter(|l| l.starts_with(&format!("{r} ")))
            .map(String::from)
            .collect()
    };
    for r in 0..4 {
        let second =
            std::fs::read_to_string(scratch_dir().join(format!("{}_files/rank-{r}.txt", again.display())))
                .expect("a rank file of the second trace");
        assert_eq!(lines_of(&first, r), lines_of(&second, r), "rank {r}");
    }
}

/// SimGrid's `examples/smpi/replay/replay.tesh`: every `smpi_replay` line
/// (action, end date, duration, and the final simulation time) as SMPI 3.32
/// prints them. Needs `tests/simgrid_examples/fetch.sh` (skipped otherwise).
#[test]
fn simgrids_replay_examples_give_the_tesh_timestamps() {
    let Some(examples) = simgrid_examples() else {
        eprintln!("skipped: run tests/simgrid_examples/fetch.sh for SimGrid's replay examples");
        return;
    };
    let smpi = examples.join("smpi");
    let tesh = std::fs::read_to_string(smpi.join("replay/replay.tesh")).unwrap();
    let mut stdin: Vec<&str> = Vec::new();
    let mut made: Option<(String, Vec<&str>)> = None;
    let mut cases: Vec<TeshCase> = Vec::new();
    for l in tesh.lines() {
        if let Some(input) = l.strip_prefix("< ") {
            stdin.push(input);
        } else if let Some(file) = l.strip_prefix("$ mkfile ") {
            made = Some((file.to_string(), std::mem::take(&mut stdin)));
        } else if l.starts_with("$ ") && l.contains("smpirun") {
            cases.push((
                l[2..].to_string(),
                made.clone().expect("mkfile first"),
                Vec::new(),
            ));
        } else if let (Some(expected), Some(case)) = (l.strip_prefix("> "), cases.last_mut()) {
            if expected.contains("[smpi_replay/") {
                case.2.push(expected);
            }
        } else if l.starts_with("$ ") {
            // Another command: the lines that follow are not smpirun's.
            cases.push((String::new(), (String::new(), Vec::new()), Vec::new()));
        }
    }
    let cases: Vec<_> = cases.into_iter().filter(|c| !c.0.is_empty()).collect();
    assert!(cases.len() >= 10, "{} cases in replay.tesh", cases.len());
    for (command, (index_name, index_lines), expected) in cases {
        let index = write_scratch("tesh-index", &(index_lines.join("\n") + "\n"));
        // SimGrid's command line, with our smpirun, our index file, and its
        // paths; tracing options are left out (their Paje output is SimGrid's).
        let args: Vec<String> = command
            .split_whitespace()
            .skip(1)
            .map(|a| a.replace("${srcdir:=.}", smpi.to_str().unwrap()))
            .map(|a| {
                if a == index_name {
                    index.display().to_string()
                } else {
                    a
                }
            })
            .filter(|a| !a.starts_with("--cfg=tracing"))
            .collect();
        let mut cmd = Command::new(smpirun());
        cmd.current_dir(&smpi).args(&args);
        let out = run_command(cmd, DEFAULT_TIMEOUT);
        out.assert_success();
        let got: Vec<&str> = out
            .stderr
            .lines()
            .filter(|l| l.contains("[smpi_replay/"))
            .collect();
        assert_eq!(got, expected, "{command}\n{}", out.describe());
    }
}

/// A tesh command: the command line, the index file it makes (name, lines)
/// and the `smpi_replay` lines it expects.
type TeshCase<'a> = (String, (String, Vec<&'a str>), Vec<&'a str>);

fn simgrid_examples() -> Option<PathBuf> {
    let marker = e2e_tests::workspace_root().join("tests/simgrid_examples/build/EXAMPLES");
    let text = std::fs::read_to_string(marker).ok()?;
    let dir = PathBuf::from(text.trim().strip_prefix("SIMGRID_EXAMPLES=")?);
    dir.join("smpi/replay/replay.tesh").exists().then_some(dir)
}

/// Each kind of malformed trace: exit status 2, and a message with the file,
/// the line and the problem.
#[test]
fn malformed_traces_are_errors_naming_file_and_line() {
    let p = platform("cluster_4.toml");
    let plat = p.to_str().unwrap();
    let cases: &[(&str, &[&str])] = &[
        ("0 init\n1 init\n0 sned 1 0 10\n", &[":3: unknown action 'sned'"]),
        (
            "0 init\n0 send 1 0\n1 init\n",
            &[":2: action 'send' takes 3 to 4 arguments, found 2"],
        ),
        (
            "0 init\n1 init\n\n0 send 1 0 lots\n",
            &[":4: the count should be a number, found 'lots'"],
        ),
        ("0 init\nx init\n", &[":2: the first field should be a rank"]),
        (
            "0 init\n1 init\n1 bcast 10 7\n",
            &[":3: root 7 is not a rank of this run (0 to 1)"],
        ),
        (
            "0 init\n1 init\n0 ibcast 10 0 0\n",
            &[":3: action 'ibcast'", "cannot be replayed"],
        ),
    ];
    for (text, needles) in cases {
        let trace = write_scratch("bad-trace.txt", text);
        let out = replay(&trace, &["-platform", plat]);
        assert_eq!(out.code, Some(2), "{text}\n{}", out.describe());
        out.assert_stderr_has(&[&format!("{}", trace.display())]);
        out.assert_stderr_has(needles);
    }
    // An index naming a file that does not exist, and -np against the index.
    let r0 = write_scratch("r0.txt", "0 init\n0 finalize\n");
    let index = write_scratch("index", &format!("{}\nnowhere/rank-1.txt\n", r0.display()));
    let out = replay(&index, &["-platform", plat]);
    assert_eq!(out.code, Some(2), "{}", out.describe());
    out.assert_stderr_has(&[&format!(
        "{}:2: trace file 'nowhere/rank-1.txt' cannot be read",
        index.display()
    )]);
    let r1 = write_scratch("r1.txt", "1 init\n1 finalize\n");
    let index = write_scratch("index", &format!("{}\n{}\n", r0.display(), r1.display()));
    let out = replay(&index, &["-platform", plat, "-np", "3"]);
    assert_eq!(out.code, Some(2), "{}", out.describe());
    out.assert_stderr_has(&["lists 2 rank trace files but -np is 3"]);
    // A wait with nothing to wait for fails when replayed, naming its line.
    let trace = write_scratch("wait.txt", "0 init\n1 init\n0 wait 0 1 0\n");
    let out = replay(&trace, &["-platform", plat]);
    out.assert_failure();
    out.assert_stderr_has(&[":3: '0 wait 0 1 0': no isend or irecv before this wait"]);
}

/// Recording is off unless asked for: no trace file appears.
#[test]
fn no_ti_trace_without_trace_ti() {
    let out = Smpirun::new(build_app("ring"))
        .platform(platform("cluster_4.toml"))
        .np(2)
        .run();
    out.assert_success();
    assert!(!scratch_dir().join("smpi_simgrid.txt").exists());
    assert!(!out.stderr.contains("time-independent trace"));
}
