//! SimGrid's NAS Parallel Benchmarks (`examples/smpi/NAS`: EP, IS, DT in C,
//! class S) build unchanged with our smpicc and verify, and IS and DT take SMPI
//! 3.32's simulated time (run live when SimGrid is installed). The sources are not
//! in the repository: `apps/nas/fetch.sh` extracts them (skipped otherwise).

use std::path::{Path, PathBuf};
use std::process::Command;

use e2e_tests::{run_command, scratch_path, smpicc, smpirun, DEFAULT_TIMEOUT};

fn examples() -> Option<PathBuf> {
    let marker = e2e_tests::workspace_root().join("tests/simgrid_examples/build/EXAMPLES");
    let text = std::fs::read_to_string(marker).ok()?;
    let dir = PathBuf::from(text.trim().strip_prefix("SIMGRID_EXAMPLES=")?);
    dir.join("smpi/NAS/is.c").exists().then_some(dir)
}

fn build(nas: &Path, name: &str, sources: &[&str]) -> PathBuf {
    let out = scratch_path(name);
    let mut cmd = Command::new(smpicc());
    cmd.arg("-O2")
        .args(sources.iter().map(|s| nas.join(s)))
        .arg("-lm")
        .arg("-o")
        .arg(&out);
    let r = run_command(cmd, DEFAULT_TIMEOUT);
    assert_eq!(r.code, Some(0), "smpicc {name}\n{}", r.describe());
    out
}

/// Runs a benchmark on SimGrid's small platform; returns its stdout. DT's
/// main returns 1 whatever happens (SMPI 3.32's smpirun then exits with 1 too).
fn run(examples: &Path, prog: &Path, np: usize, args: &[&str], code: i32) -> String {
    let mut cmd = Command::new(smpirun());
    cmd.arg("-np")
        .arg(np.to_string())
        .arg("-platform")
        .arg(examples.join("platforms/small_platform.xml"))
        .arg("--cfg=smpi/simulate-computation:no")
        .arg(prog)
        .arg(np.to_string())
        .args(args);
    let r = run_command(cmd, DEFAULT_TIMEOUT);
    assert_eq!(r.code, Some(code), "{}", r.describe());
    r.stdout
}

fn verification(stdout: &str) -> Option<&str> {
    stdout
        .lines()
        .find_map(|l| l.trim().strip_prefix("Verification"))
        .map(|v| v.trim_start_matches([' ', '=']).trim())
}

#[test]
fn nas_is_dt_verify_and_ep_runs() {
    let Some(examples) = examples() else {
        eprintln!("skipped: run apps/nas/fetch.sh for SimGrid's NAS sources");
        return;
    };
    let nas = examples.join("smpi/NAS");
    let is = build(&nas, "is", &["is.c", "nas_common.c"]);
    let dt = build(&nas, "dt", &["dt.c", "nas_common.c", "DGraph.c"]);
    let ep = build(&nas, "ep", &["ep.c", "nas_common.c"]);
    let out = run(&examples, &is, 4, &["S"], 0);
    assert_eq!(verification(&out), Some("SUCCESSFUL"), "IS class S\n{out}");
    for graph in ["BH", "WH", "SH"] {
        let out = run(&examples, &dt, 12, &["S", graph], 1);
        assert_eq!(
            verification(&out),
            Some("SUCCESSFUL"),
            "DT class S {graph}\n{out}"
        );
    }
    // EP samples its main loop (SMPI_SAMPLE_GLOBAL) and its buffers are shared
    // (SMPI_SHARED_MALLOC): its sums are not computed, so SMPI 3.32 reports
    // UNSUCCESSFUL too. It must run to its report.
    let out = run(&examples, &ep, 4, &["S"], 0);
    assert!(verification(&out).is_some(), "EP class S\n{out}");
}

/// The simulated time of a whole run: ours from smpirun's summary line, SMPI's
/// from `smpi/display-timing` ("Simulated time: 5.19098 seconds.").
fn simulated_time(stderr_and_stdout: &str) -> Option<f64> {
    stderr_and_stdout.lines().find_map(|l| {
        let rest = l
            .split_once("simulated time: ")
            .or_else(|| l.split_once("Simulated time: "))?
            .1;
        rest.split_whitespace().next()?.parse().ok()
    })
}

#[test]
fn is_and_dt_take_smpi_3_32s_simulated_time_without_computation() {
    let Some(examples) = examples() else {
        eprintln!("skipped: run apps/nas/fetch.sh for SimGrid's NAS sources");
        return;
    };
    let (sg_cc, sg_run) = (Path::new("/usr/bin/smpicc"), Path::new("/usr/bin/smpirun"));
    if !sg_cc.exists() || !sg_run.exists() {
        eprintln!("skipped: SimGrid 3.32 is not installed (/usr/bin/smpicc, /usr/bin/smpirun)");
        return;
    }
    let nas = examples.join("smpi/NAS");
    struct Case {
        name: &'static str,
        sources: &'static [&'static str],
        np: usize,
        args: &'static [&'static str],
        code: i32,
    }
    let cases = [
        Case {
            name: "is",
            sources: &["is.c", "nas_common.c"],
            np: 4,
            args: &["S"],
            code: 0,
        },
        Case {
            name: "dt",
            sources: &["dt.c", "nas_common.c", "DGraph.c"],
            np: 12,
            args: &["S", "BH"],
            code: 1,
        },
    ];
    for Case {
        name,
        sources,
        np,
        args,
        code,
    } in cases
    {
        let ours = build(&nas, name, sources);
        let theirs = scratch_path(&format!("{name}_smpi"));
        let mut cc = Command::new(sg_cc);
        cc.arg("-O2")
            .args(sources.iter().map(|s| nas.join(s)))
            .arg("-lm")
            .arg("-o")
            .arg(&theirs);
        let r = run_command(cc, DEFAULT_TIMEOUT);
        assert_eq!(r.code, Some(0), "SimGrid's smpicc {name}\n{}", r.describe());
        let mut ours_cmd = Command::new(smpirun());
        let mut theirs_cmd = Command::new(sg_run);
        for (cmd, prog) in [(&mut ours_cmd, &ours), (&mut theirs_cmd, &theirs)] {
            cmd.current_dir(e2e_tests::scratch_dir())
                .arg("-np")
                .arg(np.to_string())
                .arg("-platform")
                .arg(examples.join("platforms/small_platform.xml"))
                .arg("--cfg=smpi/simulate-computation:no")
                .arg("--cfg=smpi/display-timing:yes")
                .arg(prog)
                .arg(np.to_string())
                .args(args);
        }
        let a = run_command(ours_cmd, DEFAULT_TIMEOUT);
        let b = run_command(theirs_cmd, DEFAULT_TIMEOUT);
        assert_eq!(a.code, Some(code), "{}", a.describe());
        assert_eq!(b.code, Some(code), "{}", b.describe());
        let ta = simulated_time(&format!("{}\n{}", a.stdout, a.stderr)).expect("our simulated time");
        let tb = simulated_time(&format!("{}\n{}", b.stdout, b.stderr)).expect("SMPI's simulated time");
        // SMPI prints 6 significant digits.
        assert!(
            ((ta - tb) / tb).abs() < 5e-6,
            "{name}: ours {ta} s, SMPI 3.32 {tb} s\n{}\n{}",
            a.describe(),
            b.describe()
        );
    }
}
