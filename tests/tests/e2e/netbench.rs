//! SMPI 3.32 parity: `netbench.c` from `shared/reference/smpi-3.32/`, run
//! exactly as that directory's README says (64 ranks on `fattree_64.xml`,
//! hosts from `hosts_64.txt`, `smpi/host-speed:1Gf`, computation not
//! simulated), must print the same times as SMPI 3.32: ping-pong lines within
//! 1% (CM02) / 2% (SMPI model), and the same for the MPI_Alltoall and
//! MPI_Allreduce lines (a separate test, since those depend on the collective
//! algorithms). Skipped with a message when the reference directory is absent.

use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::Duration;

use e2e_tests::{build_c, rel_diff, smpi_reference_dir, Smpirun};

/// Keys whose values are times (or derived from times) and compared with a tolerance.
const TIMED_KEYS: &[&str] = &["rtt", "one_way", "eff_bw", "time_max"];

struct Model {
    /// `--cfg=network/model:` value.
    name: &'static str,
    /// Reference output file.
    reference: &'static str,
    /// Relative tolerance on times.
    tolerance: f64,
}

const CM02: Model = Model {
    name: "CM02",
    reference: "netbench_output_CM02.txt",
    tolerance: 0.01,
};
const SMPI: Model = Model {
    name: "SMPI",
    reference: "netbench_output_default_SMPI_model.txt",
    tolerance: 0.02,
};

fn reference_dir() -> Option<PathBuf> {
    let dir = smpi_reference_dir();
    if dir.is_none() {
        eprintln!("skipped: shared/reference/smpi-3.32 not found next to the workspace");
    }
    dir
}

/// Our netbench output for `model` (run once per test process and model).
fn our_output(model: &Model, dir: &std::path::Path) -> &'static str {
    static CM02_OUT: OnceLock<String> = OnceLock::new();
    static SMPI_OUT: OnceLock<String> = OnceLock::new();
    let cell = if model.name == "CM02" {
        &CM02_OUT
    } else {
        &SMPI_OUT
    };
    cell.get_or_init(|| {
        let prog = build_c(&dir.join("netbench.c"));
        let out = Smpirun::new(prog)
            .platform(dir.join("fattree_64.xml"))
            .hostfile(dir.join("hosts_64.txt"))
            .np(64)
            .cfg(&format!("network/model:{}", model.name))
            .cfg("smpi/host-speed:1Gf")
            .cfg("smpi/simulate-computation:no")
            .timeout(Duration::from_secs(120))
            .run();
        out.assert_success();
        out.stdout
    })
}

/// A line without its timed fields: lines with the same key are compared.
fn line_key(line: &str) -> String {
    line.split_whitespace()
        .filter(|t| {
            !TIMED_KEYS
                .iter()
                .any(|k| t.strip_prefix(k).is_some_and(|r| r.starts_with('=')))
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Compares every reference line starting with one of `prefixes` with ours;
/// returns a report of each mismatch (empty when everything matches).
fn compare(model: &Model, prefixes: &[&str]) -> Option<Vec<String>> {
    let dir = reference_dir()?;
    let reference = std::fs::read_to_string(dir.join(model.reference)).expect("reference output readable");
    let ours = our_output(model, &dir);
    let mut problems = Vec::new();
    let mut compared = 0;
    for want in reference
        .lines()
        .filter(|l| prefixes.iter().any(|p| l.starts_with(p)))
    {
        let key = line_key(want);
        let Some(got) = ours.lines().find(|l| line_key(l) == key) else {
            problems.push(format!("missing line: {want}"));
            continue;
        };
        compared += 1;
        let (w, g) = (e2e_tests::fields(want), e2e_tests::fields(got));
        for k in TIMED_KEYS {
            let (Some(wv), Some(gv)) = (w.get(k), g.get(k)) else {
                continue;
            };
            let (wv, gv): (f64, f64) = (wv.parse().expect("number"), gv.parse().expect("number"));
            let d = rel_diff(gv, wv);
            if d > model.tolerance {
                problems.push(format!(
                    "{key}: {k} = {gv:.9e}, SMPI 3.32 gives {wv:.9e} (off by {:.2}%, tolerance {}%)",
                    d * 100.0,
                    model.tolerance * 100.0
                ));
            }
        }
    }
    assert!(
        compared > 0 || !problems.is_empty(),
        "no reference line starts with {prefixes:?}"
    );
    if !problems.is_empty() {
        problems.push(format!("--- our output ({}) ---\n{ours}", model.name));
    }
    Some(problems)
}

#[track_caller]
fn check(model: &Model, prefixes: &[&str]) {
    if let Some(problems) = compare(model, prefixes) {
        assert!(
            problems.is_empty(),
            "netbench, network/model:{}:\n{}",
            model.name,
            problems.join("\n")
        );
    }
}

#[test]
fn pingpong_cm02_within_1_percent() {
    check(&CM02, &["pingpong"]);
}

#[test]
fn pingpong_smpi_model_within_2_percent() {
    check(&SMPI, &["pingpong"]);
}

#[test]
fn collectives_cm02_within_1_percent() {
    check(&CM02, &["alltoall", "allreduce"]);
}

#[test]
fn collectives_smpi_model_within_2_percent() {
    check(&SMPI, &["alltoall", "allreduce"]);
}

#[test]
fn line_key_drops_only_timed_fields() {
    assert_eq!(
        line_key("pingpong 0<->1 size=1 B  rtt=4.0e-06 s  one_way=2.0e-06 s  eff_bw=4.9e+05 B/s"),
        "pingpong 0<->1 size=1 B s s B/s"
    );
    assert_eq!(
        line_key("allreduce np=64 bytes=1048576 time_max=7.2e-03 s  check y[0]=2016"),
        "allreduce np=64 bytes=1048576 s check y[0]=2016"
    );
}
