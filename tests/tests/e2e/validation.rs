//! `smpi-validate` (calibrate/) and `scripts/validate-here.sh`:
//!
//! * a synthetic "measured" set made by our own simulator with a model whose
//!   noise is known (the launcher of the "real" runs is smpirun with that
//!   model and a different seed per run): the prediction of the true model
//!   must be ≈ 0 % off and inside the measured median's 95 % interval, and
//!   Gflop/s follow HPL's own formula;
//! * a real run that fails is recorded in the report (with its stderr), the
//!   others go on, and the tool still succeeds;
//! * fewer than 6 successful runs give no interval, and the report says so;
//! * real runs measured in blocks (`--real-only --block`, merged by
//!   `--real-from`) give the validation of the same runs in one go, and a
//!   missing or foreign block is an error naming it;
//! * the machine probe (`calib_probe`) runs before every real run, and a
//!   machine slower than when it was calibrated is flagged;
//! * `scripts/validate-here.sh --quick` end to end (tiny N) where Open MPI is
//!   installed; skipped with a message otherwise.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::time::Duration;

use e2e_tests::{bin_dir, platform, run_command, scratch_path, smpicc, smpirun, workspace_root, RunOutput};

/// HPL built with smpicc (apps/hpl/build.sh), once per test process.
fn xhpl() -> PathBuf {
    static BUILT: Mutex<Option<PathBuf>> = Mutex::new(None);
    let mut b = BUILT.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(p) = b.as_ref() {
        return p.clone();
    }
    let mut cmd = Command::new(workspace_root().join("apps/hpl/build.sh"));
    cmd.arg(smpicc());
    let out = run_command(cmd, Duration::from_secs(900));
    assert!(
        out.status.success(),
        "apps/hpl/build.sh failed\n{}",
        out.describe()
    );
    let p = workspace_root().join("apps/hpl/build/xhpl");
    *b = Some(p.clone());
    p
}

fn smpi_validate() -> PathBuf {
    let p = bin_dir().join("smpi-validate");
    assert!(
        p.exists(),
        "{} not found: cargo build --release -p smpi-calibrate",
        p.display()
    );
    p
}

/// The "truth": dgemm 2e-10 s per M·N·K plus 1 µs, with N-2 noise of 10 %
/// per call (σ = 2e-11·MNK); the other kernels free.
fn truth_model(dir: &Path) -> PathBuf {
    let p = dir.join("truth.toml");
    let mut text = String::from(
        "[compute.dgemm]\nmodel = \"linear\"\nproduct = \"MNK\"\na = 2e-10\nb = 1e-6\n\
         noise = { kind = \"normal\", sigma = { MNK = 2e-11 } }\n",
    );
    for k in [
        "dtrsm", "dgemv", "dger", "dtrsv", "daxpy", "dscal", "dswap", "dcopy", "idamax",
    ] {
        text.push_str(&format!("\n[compute.{k}]\nmodel = \"constant\"\nvalue = 1e-7\n"));
    }
    std::fs::write(&p, text).unwrap();
    p
}

/// smpi-validate with "real" runs simulated by smpirun with `model` (seed
/// `{seed}` per run), simulations with the same model.
fn validate(dir: &Path, model: &Path, launcher: &str, extra: &[&str]) -> (RunOutput, serde_json::Value) {
    let out_dir = dir.join("out");
    let mut cmd = Command::new(smpi_validate());
    cmd.arg("--model")
        .arg(model)
        .arg("--platform")
        .arg(platform("cluster_4.toml"))
        .arg("--out")
        .arg(&out_dir)
        .arg("--smpirun")
        .arg(smpirun())
        .arg("--sim-xhpl")
        .arg(xhpl())
        .arg("--real-xhpl")
        .arg(xhpl())
        .args(["--real-threshold", "-1", "--nb", "64"])
        .args(["--sim-cfg", "smpi/simulate-computation:no"])
        .arg("--launcher")
        .arg(launcher)
        .args(extra);
    let out = run_command(cmd, Duration::from_secs(600));
    let json = std::fs::read_to_string(out_dir.join("validation.json"))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(serde_json::Value::Null);
    (out, json)
}

fn simulated_launcher(model: &Path) -> String {
    format!(
        "{} -platform {} -model {} --cfg=smpi/simulate-computation:no --cfg=smpi/seed:{{seed}} -np {{np}}",
        smpirun().display(),
        platform("cluster_4.toml").display(),
        model.display()
    )
}

/// HPL's Gflop/s formula, in HPL's order of operations.
fn hpl_gflops(n: f64, t: f64) -> f64 {
    ((n / 1.0e9) * (n / t)) * ((2.0 / 3.0) * n + 1.5)
}

#[test]
fn synthetic_measurements_are_predicted_by_the_true_model() {
    let dir = scratch_path("validate-synthetic");
    std::fs::create_dir_all(&dir).unwrap();
    let model = truth_model(&dir);
    let (out, j) = validate(
        &dir,
        &model,
        &simulated_launcher(&model),
        &[
            "--hpl",
            "1x2:640",
            "--hpl",
            "2x1:640",
            "--runs",
            "8",
            "--replicas",
            "5",
        ],
    );
    out.assert_success();
    let configs = j["configurations"].as_array().expect("configurations");
    assert_eq!(configs.len(), 2, "{j}");
    for c in configs {
        assert_eq!(c["runs"], 8, "{c}");
        let med = c["measured_median_gflops"].as_f64().unwrap();
        let ci = c["measured_ci95_gflops"]
            .as_array()
            .expect("an interval with 8 runs");
        let (lo, hi) = (ci[0].as_f64().unwrap(), ci[1].as_f64().unwrap());
        assert!(lo <= med && med <= hi, "{c}");
        // The noise is real: the runs differ.
        assert!(
            c["measured_max_gflops"].as_f64().unwrap() > c["measured_min_gflops"].as_f64().unwrap(),
            "{c}"
        );
        let e = c["relative_error"].as_f64().unwrap();
        assert!(e.abs() < 0.01, "the true model is {:.3} % off: {c}", 100.0 * e);
        assert_eq!(c["within_ci"], true, "{c}");
        // Gflop/s by HPL's formula from each run's time.
        for r in c["measured_runs"].as_array().unwrap() {
            let (t, g) = (r["seconds"].as_f64().unwrap(), r["gflops"].as_f64().unwrap());
            assert!((hpl_gflops(640.0, t) / g - 1.0).abs() < 1e-12, "{r}");
        }
        assert_eq!(c["P"].as_u64().unwrap() * c["Q"].as_u64().unwrap(), 2);
        assert_eq!((c["N"].as_u64(), c["NB"].as_u64()), (Some(640), Some(64)));
    }
    assert_eq!(j["format"], "smpi-validation/1");
    assert!(j["metadata"]["seeds"]["replicas"].as_array().unwrap().len() == 5);
    assert_eq!(j["orderings"].as_array().unwrap().len(), 1);
    assert_eq!(j["orderings"][0]["agrees"], true, "{}", j["orderings"]);
    let report = std::fs::read_to_string(dir.join("out/report.md")).unwrap();
    for needle in [
        "## HPL: measured against predicted",
        "## Setup",
        "Every real run",
        "hpl-gflops.png",
    ] {
        assert!(report.contains(needle), "report.md lacks {needle:?}");
    }
    assert!(
        out.stdout.contains("configuration"),
        "no error table:\n{}",
        out.describe()
    );
}

#[test]
fn a_failed_real_run_is_recorded_not_fatal() {
    let dir = scratch_path("validate-failing");
    std::fs::create_dir_all(&dir).unwrap();
    let model = truth_model(&dir);
    // Runs with an odd seed fail with a message on stderr; the others are simulated.
    let script = dir.join("flaky.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nseed=$1; np=$2; shift 2\nif [ $((seed % 2)) = 1 ]; then echo \"synthetic failure of run $seed\" >&2; exit 7; fi\n\
             exec {} -platform {} -model {} --cfg=smpi/simulate-computation:no --cfg=smpi/seed:$seed -np $np \"$@\"\n",
            smpirun().display(),
            platform("cluster_4.toml").display(),
            model.display()
        ),
    )
    .unwrap();
    let mut perm = std::fs::metadata(&script).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perm, 0o755);
    std::fs::set_permissions(&script, perm).unwrap();
    let (out, j) = validate(
        &dir,
        &model,
        &format!("{} {{seed}} {{np}}", script.display()),
        &["--hpl", "1x2:384", "--runs", "6", "--replicas", "1"],
    );
    out.assert_success();
    let c = &j["configurations"][0];
    assert_eq!(c["runs_attempted"], 6, "{c}");
    let failed = c["runs_failed"].as_u64().unwrap();
    assert!((1..6).contains(&failed), "{c}");
    assert_eq!(c["runs"].as_u64().unwrap() + failed, 6);
    // Fewer than 6 successful runs: no interval, and why.
    assert!(c["measured_ci95_gflops"].is_null(), "{c}");
    assert!(
        c["measured_ci_note"].as_str().unwrap().contains("at least 6"),
        "{c}"
    );
    let report = std::fs::read_to_string(dir.join("out/report.md")).unwrap();
    assert!(report.contains("### Failed real runs"), "{report}");
    assert!(
        report.contains("synthetic failure of run"),
        "the stderr tail is missing"
    );
    assert!(report.contains("exit code 7"));
    assert!(report.contains("no 95 % interval"));
}

#[test]
fn too_few_runs_give_no_interval_and_say_so() {
    let dir = scratch_path("validate-few");
    std::fs::create_dir_all(&dir).unwrap();
    let model = truth_model(&dir);
    let (out, j) = validate(
        &dir,
        &model,
        &simulated_launcher(&model),
        &["--hpl", "2x1:384", "--runs", "5", "--replicas", "1"],
    );
    out.assert_success();
    let c = &j["configurations"][0];
    assert_eq!(c["runs"], 5, "{c}");
    assert!(
        c["measured_ci95_gflops"].is_null() && c["within_ci"].is_null(),
        "{c}"
    );
    assert!(c["measured_median_gflops"].as_f64().unwrap() > 0.0);
    assert!(out.stdout.contains("no CI"), "{}", out.describe());
    let report = std::fs::read_to_string(dir.join("out/report.md")).unwrap();
    assert!(report.contains("no 95 % interval: 5 run(s)"), "{report}");
}

/// `smpi-validate --real-only --block I/K` for one block: the "real" runs only,
/// no model (the runs happen before the fit).
fn real_only_block(out_dir: &Path, model: &Path, block: &str) -> RunOutput {
    let mut cmd = Command::new(smpi_validate());
    cmd.arg("--out")
        .arg(out_dir)
        .arg("--real-xhpl")
        .arg(xhpl())
        .args(["--real-threshold", "-1", "--nb", "64", "--no-probe"])
        .args(["--hpl", "1x2:640", "--hpl", "2x1:640", "--runs", "6"])
        .arg("--launcher")
        .arg(simulated_launcher(model))
        .args(["--real-only", "--block", block]);
    run_command(cmd, Duration::from_secs(600))
}

#[test]
fn real_runs_measured_in_blocks_give_the_validation_of_one_go() {
    let dir = scratch_path("validate-blocks");
    std::fs::create_dir_all(&dir).unwrap();
    let model = truth_model(&dir);
    let common = [
        "--hpl",
        "1x2:640",
        "--hpl",
        "2x1:640",
        "--runs",
        "6",
        "--replicas",
        "1",
        "--no-probe",
    ];
    let (out, whole) = validate(&dir.join("whole"), &model, &simulated_launcher(&model), &common);
    out.assert_success();
    // The same plan in three blocks (as scripts/validate-here.sh --interleave 3
    // measures it between the parts of a calibration), then merged.
    let blocks_dir = dir.join("blocks");
    let mut from = Vec::new();
    for i in 1..=3 {
        let out = real_only_block(&blocks_dir, &model, &format!("{i}/3"));
        out.assert_success();
        let f = blocks_dir.join(format!("runs/real-block-{i}-of-3.json"));
        let j: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&f).unwrap()).unwrap();
        assert_eq!(j["format"], "smpi-validate-real-runs/1");
        let positions: Vec<u64> = j["real_runs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["position"].as_u64().unwrap())
            .collect();
        let first = 4 * (i as u64 - 1);
        assert_eq!(positions, (first..first + 4).collect::<Vec<_>>(), "block {i}");
        assert!(
            !blocks_dir.join("validation.json").exists(),
            "--real-only simulated"
        );
        from.push(f);
    }
    let mut extra: Vec<String> = common.iter().map(|s| s.to_string()).collect();
    // Given out of order: the blocks are put back in the run order.
    for f in from.iter().rev() {
        extra.push("--real-from".into());
        extra.push(f.display().to_string());
    }
    let extra_ref: Vec<&str> = extra.iter().map(String::as_str).collect();
    // A launcher that would fail shows that nothing runs again.
    let (out, merged) = validate(&dir.join("merged"), &model, "/bin/false", &extra_ref);
    out.assert_success();
    let configs = |j: &serde_json::Value| -> Vec<(f64, u64)> {
        j["configurations"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                (
                    c["measured_median_gflops"].as_f64().unwrap(),
                    c["runs"].as_u64().unwrap(),
                )
            })
            .collect()
    };
    // Runs are seeded by their position in the order: the same runs either way.
    assert_eq!(configs(&merged), configs(&whole), "{merged}");
    assert_eq!(configs(&merged).len(), 2);
    let blocks = merged["metadata"]["real_run_blocks"].as_array().unwrap();
    let cuts: Vec<(u64, u64, u64)> = blocks
        .iter()
        .map(|b| {
            (
                b["index"].as_u64().unwrap(),
                b["positions"][0].as_u64().unwrap(),
                b["positions"][1].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(cuts, vec![(1, 0, 4), (2, 4, 8), (3, 8, 12)]);
    assert!(whole["metadata"]["real_run_blocks"]
        .as_array()
        .unwrap()
        .is_empty());
    let report = std::fs::read_to_string(dir.join("merged/out/report.md")).unwrap();
    assert!(report.contains("measured in 3 blocks of their order"), "{report}");

    // Two of the three blocks: an error naming what is missing, no report.
    let (out, _) = validate(
        &dir.join("partial"),
        &model,
        "/bin/false",
        &[
            &common[..],
            &[
                "--real-from",
                from[0].to_str().unwrap(),
                "--real-from",
                from[1].to_str().unwrap(),
            ],
        ]
        .concat(),
    );
    assert_ne!(out.code, Some(0), "{}", out.describe());
    assert!(
        out.stderr
            .contains("4 of the 12 positions of the run order have no run (first: 8)"),
        "{}",
        out.describe()
    );
    assert!(!dir.join("partial/out/validation.json").exists());
    // Blocks of another plan (other runs per configuration) are refused by name.
    let mut other = common.to_vec();
    other[5] = "5";
    let (out, _) = validate(
        &dir.join("other"),
        &model,
        "/bin/false",
        &[&other[..], &["--real-from", from[0].to_str().unwrap()]].concat(),
    );
    assert_ne!(out.code, Some(0));
    assert!(
        out.stderr
            .contains("real-block-1-of-3.json: 6 runs per configuration"),
        "{}",
        out.describe()
    );
}

/// calib_probe built with smpicc: under the simulated launcher it measures the model's dgemm.
fn smpi_probe(dir: &Path) -> PathBuf {
    let src = workspace_root().join("apps/calibration");
    let exe = dir.join("calib_probe");
    let mut cmd = Command::new(smpicc());
    cmd.arg("-O2")
        .arg(src.join("calib_probe.c"))
        .arg(src.join("calib_common.c"))
        .arg("-o")
        .arg(&exe)
        .arg("-lm");
    let out = run_command(cmd, Duration::from_secs(120));
    assert!(
        out.status.success(),
        "smpicc calib_probe failed\n{}",
        out.describe()
    );
    exe
}

#[test]
fn a_machine_slower_than_when_calibrated_is_flagged() {
    let dir = scratch_path("validate-probe");
    std::fs::create_dir_all(&dir).unwrap();
    let model = truth_model(&dir);
    let probe = smpi_probe(&dir);
    // The truth model's dgemm runs at 2 flop per 2e-10 s = 10 Gflop/s (plus 1 µs a call and
    // 10 % noise); the calibration's probe claims 13: the machine "slowed down" by ~23 %.
    let cal = dir.join("cal");
    std::fs::create_dir_all(&cal).unwrap();
    std::fs::write(
        cal.join("machine-probe.tsv"),
        "# calib_probe --m 512 --n 256 --k 64 --lda 0 --reps 9\nwhen\tdate\tgflops_per_rank\tgather_ns_per_rank\n\
         before-compute\t2026-11-26T04:00:00Z\t13 13\t7.5 7.5\nafter-compute\t2026-11-26T04:09:00Z\t13 13\t7.5 7.5\n",
    )
    .unwrap();
    let (c, p) = (cal.display().to_string(), probe.display().to_string());
    let (out, j) = validate(
        &dir,
        &model,
        &simulated_launcher(&model),
        &[
            "--hpl",
            "1x2:640",
            "--runs",
            "6",
            "--replicas",
            "1",
            "--calibration",
            &c,
            "--probe",
            &p,
        ],
    );
    out.assert_success();
    let m = &j["machine_state"];
    assert_eq!(m["calibration_probe"]["args"][1], "512", "{m}");
    assert_eq!(m["calibration_probe_gflops"], 13.0, "{m}");
    let runs = j["configurations"][0]["measured_runs"].as_array().unwrap();
    assert_eq!(runs.len(), 6);
    for r in runs {
        let g = r["probe_gflops"].as_array().expect("a probe before every run");
        assert_eq!(g.len(), 2, "{r}");
        for x in g {
            let x = x.as_f64().unwrap();
            assert!((8.5..11.5).contains(&x), "the model's dgemm is ~10 Gflop/s: {r}");
        }
    }
    let shift = m["probe_shift"].as_f64().unwrap();
    assert!((-0.32..-0.14).contains(&shift), "{m}");
    let w = m["warnings"].as_array().unwrap();
    // The row gather: the calibration's file claims 7.5 ns an element; the simulated gathers
    // take almost no simulated time (computation is not simulated: only MPI_Wtime's own cost),
    // so memory-bound work "ran faster" before the runs, flagged apart from dgemm.
    assert_eq!(
        m["calibration_probe"]["runs"][1]["gather_ns_per_rank"],
        serde_json::json!([7.5, 7.5]),
        "{m}"
    );
    assert_eq!(m["calibration_gather_ns"], 7.5, "{m}");
    assert!(runs.iter().all(|r| r["probe_gather_ns"]
        .as_array()
        .is_some_and(|g| g.len() == 2 && g.iter().all(|x| x.as_f64().is_some_and(|x| x > 0.0 && x < 7.5)))));
    assert!(m["gather_shift"].as_f64().is_some_and(|s| s > 0.0), "{m}");
    assert!(
        w.iter().any(|w| {
            let w = w.as_str().unwrap();
            w.contains("memory-bound") && w.contains("faster") && w.contains("pessimistic")
        }),
        "{m}"
    );
    assert!(
        w.iter()
            .any(|w| w.as_str().unwrap().contains("slower before the real runs")),
        "{m}"
    );
    assert!(
        out.stdout.contains("machine probe (calib_probe"),
        "{}",
        out.describe()
    );
    assert!(
        out.stdout.contains("optimistic by about that much"),
        "{}",
        out.describe()
    );
    let report = std::fs::read_to_string(dir.join("out/report.md")).unwrap();
    assert!(report.contains("## Did the machine keep its speed?"), "{report}");

    // --no-probe: nothing measured, nothing claimed.
    std::fs::remove_dir_all(dir.join("out")).ok();
    let (out, j) = validate(
        &dir,
        &model,
        &simulated_launcher(&model),
        &[
            "--hpl",
            "1x2:640",
            "--runs",
            "6",
            "--replicas",
            "1",
            "--calibration",
            &c,
            "--no-probe",
        ],
    );
    out.assert_success();
    assert!(
        j["machine_state"]["probe_shift"].is_null(),
        "{}",
        j["machine_state"]
    );
    assert!(j["machine_state"]["warnings"].as_array().unwrap().is_empty());
}

#[test]
fn calls_outside_the_calibrated_ranges_are_reported() {
    let dir = scratch_path("validate-extrapolation");
    std::fs::create_dir_all(&dir).unwrap();
    let truth = truth_model(&dir);
    // The same model, calibrated (so it says) only for dgemm with M ≤ 100: HPL at N = 640
    // calls it far beyond.
    let model = dir.join("narrow.toml");
    let text = std::fs::read_to_string(&truth).unwrap();
    std::fs::write(
        &model,
        format!("[about.calibrated.dgemm]\nM = [1.0, 100.0]\n\n{text}"),
    )
    .unwrap();
    let (out, j) = validate(
        &dir,
        &model,
        "unused",
        &["--hpl", "1x2:640", "--replicas", "1", "--skip-real"],
    );
    out.assert_success();
    let e = &j["configurations"][0]["predicted_replicas"][0]["extrapolated"]["dgemm"];
    let (calls, of) = (e["calls"].as_u64().unwrap(), e["of_calls"].as_u64().unwrap());
    assert!(calls > 0 && calls <= of, "{e}");
    assert!(e["outside"].as_str().unwrap().contains("calibrated 1–100"), "{e}");
    // How much of dgemm's modelled time rests on extrapolation.
    let share = e["share_of_time_percent"].as_f64().unwrap();
    assert!(share > 0.0 && share <= 100.0, "{e}");
    assert!(
        out.stdout
            .contains("model: called outside its calibrated ranges in 1 of 1 configurations, for at most "),
        "{}",
        out.describe()
    );
    let report = std::fs::read_to_string(dir.join("out/report.md")).unwrap();
    assert!(report.contains("## Where the model extrapolates"), "{report}");
    assert!(report.contains("| 1x2 N=640 NB=64 | dgemm |"), "{report}");
    assert!(report.contains("| share of its time |"), "{report}");

    // The model without the table: nothing to report.
    std::fs::remove_dir_all(dir.join("out")).ok();
    let (out, j) = validate(
        &dir,
        &truth,
        "unused",
        &["--hpl", "1x2:640", "--replicas", "1", "--skip-real"],
    );
    out.assert_success();
    let e = &j["configurations"][0]["predicted_replicas"][0]["extrapolated"];
    assert_eq!(e, &serde_json::json!({}), "{e}");
    assert!(
        !out.stdout.contains("outside its calibrated ranges"),
        "{}",
        out.describe()
    );
}

fn have(tool: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {tool} >/dev/null 2>&1")])
        .status()
        .is_ok_and(|s| s.success())
}

/// The whole loop on this machine, tiny: calibrate (quick), trace, fit,
/// validate 1×2 and 2×1 at N = 400 and 800. Where Open MPI is missing it
/// skips (the script would install it, which a test must not do).
#[test]
fn validate_here_quick_runs_end_to_end() {
    if !have("mpicc") || !have("mpirun") {
        eprintln!(
            "skipped: Open MPI (mpicc, mpirun) is not installed; scripts/validate-here.sh needs a real MPI"
        );
        return;
    }
    let _ = smpi_validate();
    let _ = xhpl();
    let out_dir = scratch_path("validate-here");
    let mut cmd = Command::new(workspace_root().join("scripts/validate-here.sh"));
    // --keep-blas-env: tests never change the OpenBLAS variables. --interleave 2:
    // the real and the traced runs in two blocks between two parts of the
    // compute calibration (the full mode's default is 3).
    cmd.args([
        "--quick",
        "--no-build",
        "--keep-blas-env",
        "--interleave",
        "2",
        "--out",
    ])
    .arg(&out_dir);
    let out = run_command(cmd, Duration::from_secs(1800));
    out.assert_success();
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("validation.json")).unwrap()).unwrap();
    let configs = j["configurations"].as_array().unwrap();
    assert_eq!(configs.len(), 4, "{j}");
    // The real Open MPI's probe misses a message no call has progressed (calib_net's
    // iprobe_arrived rows): the fitted model says so, and the report uses it.
    let model = std::fs::read_to_string(out_dir.join("model.toml")).unwrap();
    assert!(model.contains("\"smpi/probe-sees\" = \"progressed\""), "{model}");
    let report = std::fs::read_to_string(out_dir.join("validation/report.md")).unwrap();
    assert!(
        report.contains("`smpi/probe-sees:progressed` (the model's `[config]`)"),
        "{report}"
    );
    // Interleaved: calibrate.sh ran part 1, the first block of runs, part 2,
    // the second block, in that order, and the validation took those runs.
    let steps = std::fs::read_to_string(out_dir.join("calibration/logs/steps.tsv")).unwrap();
    let order: Vec<&str> = steps
        .lines()
        .map(|l| l.split('\t').next().unwrap())
        .filter(|s| s.starts_with("compute") || s.starts_with("between"))
        .collect();
    assert_eq!(
        order,
        [
            "compute-part1",
            "compute-fixed-k-part1",
            "between-1",
            "compute-part2",
            "compute-fixed-k-part2",
            "between-2"
        ],
        "{steps}"
    );
    let blocks = j["metadata"]["real_run_blocks"].as_array().unwrap();
    assert_eq!(blocks.len(), 2, "{j}");
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("calibration/manifest.json")).unwrap())
            .unwrap();
    assert_eq!(manifest["parts"], 2);
    assert_eq!(manifest["seeds"]["compute_parts"], serde_json::json!([1, 3]));
    assert_eq!(
        manifest["seeds"]["compute_fixed_k_parts"],
        serde_json::json!([2, 4])
    );
    // Each part is a design of its own: compute files of seeds 1 and 3.
    let names: Vec<String> = std::fs::read_dir(out_dir.join("calibration"))
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
        .collect();
    for seed in [1, 3] {
        assert!(
            names
                .iter()
                .any(|n| n.starts_with("compute-") && n.ends_with(&format!("-{seed}.csv"))),
            "no compute file of seed {seed}: {names:?}"
        );
    }
    // Every traced run is made once per block.
    let traces: Vec<String> = std::fs::read_dir(out_dir.join("trace"))
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
        .filter(|n| n.ends_with(".csv"))
        .collect();
    for tag in ["1x2-N600-b1-", "1x2-N600-b2-", "2x1-N600-b1-", "2x1-N600-b2-"] {
        assert!(
            traces.iter().any(|n| n.starts_with(tag)),
            "no {tag}*.csv: {traces:?}"
        );
    }
    // The traced runs against their simulation: both traced configurations,
    // two runs each (one per block), simulated, every kernel of the traces in
    // the table, dgemm's simulated total close to the measured one.
    let traced = j["calibration_checks"]["traced_runs"].as_array().unwrap();
    assert_eq!(
        traced.len(),
        2,
        "{}",
        j["calibration_checks"]["traced_runs_notes"]
    );
    for c in traced {
        assert_eq!(c["N"], 600, "{c}");
        assert_eq!(c["runs"].as_array().unwrap().len(), 2, "{c}");
        assert!(c["predicted_gflops"].as_f64().is_some_and(|g| g > 0.0), "{c}");
        let kernels = c["kernels"].as_array().unwrap();
        let dgemm = kernels
            .iter()
            .find(|k| k["kernel"] == "dgemm")
            .expect("dgemm traced");
        let (m, s) = (
            dgemm["measured_seconds_median"].as_f64().unwrap(),
            dgemm["simulated_seconds"].as_f64().unwrap(),
        );
        assert!(
            m > 0.0 && (s / m - 1.0).abs() < 0.5,
            "dgemm {s} s simulated for {m} s: {c}"
        );
        assert!(kernels.iter().any(|k| k["kernel"] == "idamax"), "{c}");
        // The traced MPI calls split the rest: MPI time measured and
        // simulated, HPL's own code measured.
        for key in [
            "measured_mpi_seconds",
            "simulated_mpi_seconds",
            "measured_own_code_seconds",
        ] {
            assert!(c[key].as_f64().is_some_and(|s| s > 0.0), "{key}: {c}");
        }
    }
    let report = std::fs::read_to_string(out_dir.join("validation/report.md")).unwrap();
    assert!(report.contains("## Traced runs against their simulation"));
    // Every run of a block started inside its between-I step.
    let between: Vec<(String, String)> = steps
        .lines()
        .filter(|l| l.starts_with("between-"))
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            (f[1].to_string(), f[2].to_string())
        })
        .collect();
    for c in configs {
        for r in c["measured_runs"].as_array().unwrap() {
            let start = r["start"].as_str().unwrap();
            let block = usize::from(r["position"].as_u64().unwrap() >= 12);
            let (from, to) = &between[block];
            assert!(
                from.as_str() <= start && start <= to.as_str(),
                "run at {start} outside between-{} [{from}, {to}]",
                block + 1
            );
        }
    }
    for c in configs {
        for key in [
            "P",
            "Q",
            "N",
            "NB",
            "measured_median_gflops",
            "predicted_gflops",
            "relative_error",
        ] {
            assert!(!c[key].is_null(), "{key} missing in {c}");
        }
        assert_eq!(c["runs"], 6, "{c}");
    }
    assert!(j["metadata"]["kernel"].as_str().is_some_and(|k| !k.is_empty()));
    // The machine probe: during the calibration and before every real run.
    let m = &j["machine_state"];
    assert!(
        m["calibration_probe_gflops"].as_f64().is_some_and(|g| g > 0.0),
        "{m}"
    );
    assert!(m["runs_probe_gflops"].as_f64().is_some_and(|g| g > 0.0), "{m}");
    assert!(configs.iter().all(|c| c["measured_runs"]
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r["probe_gflops"].as_array().is_some_and(|g| g.len() == 2)
            && r["probe_gather_ns"].as_array().is_some_and(|g| g.len() == 2))));
    // The row gather, during the calibration and before the runs, compared.
    assert!(
        m["calibration_gather_ns"].as_f64().is_some_and(|g| g > 0.0),
        "{m}"
    );
    assert!(m["gather_shift"].as_f64().is_some_and(f64::is_finite), "{m}");
    assert!(
        j["calibration_checks"]["pingpong"]["sizes"].as_u64().unwrap_or(0) > 0,
        "{}",
        j["calibration_checks"]["pingpong_note"]
    );
    // The held-out ping-pong check: sizes of its own (one per quarter decade
    // of the calibrated range, 50 repetitions in quick mode), per size
    // the measured median's interval, the simulated median and the verdicts.
    let held = &j["calibration_checks"]["pingpong_heldout"];
    let rows = held["per_size"].as_array().unwrap_or_else(|| {
        panic!(
            "no held-out check: {}",
            j["calibration_checks"]["pingpong_heldout_note"]
        )
    });
    assert!(rows.len() >= 20, "{held}");
    assert!(
        held["min_calls_per_size"].as_u64().is_some_and(|n| n >= 49),
        "{held}"
    );
    for r in rows {
        assert!(r["measured_ci"].as_array().is_some_and(|c| c.len() == 2), "{r}");
        assert!(r["simulated_median"].as_f64().is_some_and(|v| v > 0.0), "{r}");
        assert_eq!(
            r["within"].as_bool().unwrap(),
            r["relative_error"].as_f64().unwrap().abs() <= 0.05,
            "{r}"
        );
        assert_eq!(
            r["significant_miss"].is_null(),
            r["within"].as_bool().unwrap(),
            "{r}"
        );
    }
    // The held-out sizes are measured inside the calibration's network run
    // (kind pingpong_heldout, interleaved with the fitted measures).
    let net_csv = std::fs::read_dir(out_dir.join("calibration"))
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("network-"))
        })
        .expect("the network calibration");
    let text = std::fs::read_to_string(&net_csv).unwrap();
    assert!(
        text.contains("# heldout: 1 per quarter decade x 50 repetitions\n")
            && text.contains(",pingpong_heldout,"),
        "{}",
        net_csv.display()
    );
    assert!(
        out.stdout.contains("ping-pong (held-out check, target)"),
        "{}",
        out.describe()
    );
    for f in [
        "model.toml",
        "platform.toml",
        "validation/report.md",
        "validation/pingpong-heldout.png",
        "fit-report/report.md",
        "calibration/manifest.json",
    ] {
        assert!(out_dir.join(f).exists(), "{f} missing");
    }
    assert!(
        out.stdout.contains("configuration"),
        "no error table:\n{}",
        out.describe()
    );
    // The traced HPL is relinked with the recorder: HPL's own functions are
    // in the trace, and a function traced often enough is fitted on its
    // traced calls alone.
    let traced: String = std::fs::read_dir(out_dir.join("trace"))
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "csv"))
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    assert!(
        traced.contains(",HPL_dlatcpy,") && traced.contains(",HPL_dlaswp"),
        "no HPL function in the trace"
    );
    let model = std::fs::read_to_string(out_dir.join("model.toml")).unwrap();
    assert!(
        model.contains("all traced in the program: the designs'"),
        "no function fitted on its traced calls:\n{model}"
    );
}
