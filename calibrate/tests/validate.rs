//! The validation record, its report and `validation.json` on synthetic runs
//! (no process is started: the end-to-end checks with smpirun and mpirun are in
//! `tests/tests/validation.rs`), and a fit whose files include a fixed-K
//! design: dgemm written piecewise on K, read back by the `models` crate.

mod common;

use std::collections::BTreeMap;
use std::path::PathBuf;

use calibrate::fit::{run, FitOptions};
use calibrate::synth::{compute_csv, example_dgemm_models, uniform_product_design};
use calibrate::validate::analysis::{self, Outcome, RealRun, SimRun};
use calibrate::validate::hpl::{hpl_flops, hpl_gflops, HplConfig};
use calibrate::validate::{report, FileRef, Machine, Software, Validation};

fn scratch(name: &str) -> PathBuf {
    common::scratch("smpi-validate-test", name)
}

fn ok(n: u64, seconds: f64) -> Outcome {
    Outcome::Ok {
        seconds,
        gflops: hpl_gflops(n, seconds),
        printed_time: (seconds * 100.0).round() / 100.0,
        passed: Some(true),
        phases: BTreeMap::from([("update".to_string(), 0.9 * seconds)]),
    }
}

/// A "measured" set drawn around a known time with known noise (±2 % uniform,
/// seeded) and replicas of the true model: error ≈ 0 and inside the interval;
/// one failed run is recorded with its stderr; 5 runs give no interval.
fn synthetic() -> Validation {
    let configs = vec![
        HplConfig {
            p: 1,
            q: 2,
            n: 4000,
            nb: 128,
        },
        HplConfig {
            p: 2,
            q: 1,
            n: 4000,
            nb: 128,
        },
        HplConfig {
            p: 1,
            q: 2,
            n: 8000,
            nb: 128,
        },
    ];
    let truth = [1.0, 1.2, 6.0];
    let runs = [8, 8, 5];
    let plan: Vec<(usize, usize)> = (0..3).flat_map(|c| (0..runs[c]).map(move |r| (c, r))).collect();
    let mut rng = models::NoiseRng::new(3, 1);
    let mut real = Vec::new();
    for (position, (c, rep)) in plan.into_iter().enumerate() {
        let t = truth[c] * (1.0 + 0.04 * (rng.uniform() - 0.5));
        real.push(RealRun {
            config: c,
            rep,
            position,
            start: "2026-01-01T00:00:00Z".into(),
            wall: t + 0.3,
            load_before: Some([0.1, 0.1, 0.1]),
            blas_core: Some("Haswell".into()),
            probe_gflops: Vec::new(),
            probe_gather_ns: Vec::new(),
            outcome: ok(configs[c].n, t),
        });
    }
    real.push(RealRun {
        config: 0,
        rep: 8,
        position: 21,
        start: "2026-01-01T00:00:00Z".into(),
        wall: 0.1,
        load_before: None,
        blas_core: None,
        probe_gflops: Vec::new(),
        probe_gather_ns: Vec::new(),
        outcome: Outcome::Failed {
            reason: "exit code 1".into(),
            exit_code: Some(1),
            stderr_tail: "MPI_ABORT was invoked on rank 1".into(),
            stdout_tail: String::new(),
        },
    });
    let ns: Vec<u64> = configs.iter().map(|c| c.n).collect();
    let sims: Vec<SimRun> = (0..3)
        .flat_map(|c| {
            let n = ns[c];
            (1..=3).map(move |seed| SimRun {
                config: c,
                seed,
                wall: 1.0,
                simulated_time: Some(truth[c]),
                kernels: BTreeMap::from([("dgemm".to_string(), (100, 1.6 * truth[c]))]),
                extrapolated: BTreeMap::new(),
                outcome: ok(n, truth[c] * (1.0 + 1e-4 * seed as f64)),
            })
        })
        .collect();
    let results = analysis::results(&configs, &real, &sims);
    let orderings = analysis::orderings(&results);
    let phases = analysis::phases(configs.len(), &real, &sims);
    Validation {
        tool: "smpi-validate test".into(),
        command_line: "smpi-validate --test".into(),
        started: "2026-01-01T00:00:00Z".into(),
        finished: "2026-01-01T00:10:00Z".into(),
        machine: Machine {
            host: "synthetic".into(),
            cpu: "none".into(),
            cores: 2,
            kernel: "Linux test".into(),
            os: "none".into(),
        },
        software: Software {
            mpi: "none".into(),
            blas: "none".into(),
            blas_kernels: vec!["Haswell".into()],
            ..Software::default()
        },
        real_command: "mpirun ...".into(),
        simulation_command: "smpirun ...".into(),
        simulation_settings: vec!["`smpi/simulate-computation:no`: test".into()],
        order_seed: 1,
        real_blocks: Vec::new(),
        replica_seeds: vec![1, 2, 3],
        runs_per_config: 8,
        model: FileRef::of(std::path::Path::new("/nonexistent")),
        platform: FileRef::of(std::path::Path::new("/nonexistent")),
        real_program: FileRef::of(std::path::Path::new("/nonexistent")),
        simulated_program: FileRef::of(std::path::Path::new("/nonexistent")),
        configs,
        real_runs: real,
        sim_runs: sims,
        results,
        orderings,
        phases,
        pingpong: None,
        pingpong_note: Some("not given".into()),
        pingpong_heldout: None,
        pingpong_heldout_note: None,
        kernels: Vec::new(),
        traced: Vec::new(),
        traced_notes: Vec::new(),
        load: [Some([0.1, 0.1, 0.1]), Some([0.2, 0.2, 0.2])],
        probe: None,
        calibration_probe: None,
        machine_state: Default::default(),
        notes: vec!["A note.".into()],
    }
}

#[test]
fn synthetic_set_report_and_json() {
    let v = synthetic();
    let j = v.to_json();
    assert_eq!(j["format"], "smpi-validation/1");
    let c = &j["configurations"];
    // The documented keys (README, "validation.json").
    for key in [
        "P",
        "Q",
        "N",
        "NB",
        "runs",
        "runs_attempted",
        "runs_failed",
        "measured_median_gflops",
        "measured_ci95_gflops",
        "measured_ci_level",
        "measured_ci_note",
        "measured_mean_gflops",
        "measured_min_gflops",
        "measured_max_gflops",
        "measured_quartiles_gflops",
        "measured_cov_time",
        "measured_median_seconds",
        "predicted_gflops",
        "predicted_min_gflops",
        "predicted_max_gflops",
        "predicted_seconds",
        "replicas",
        "relative_error",
        "within_ci",
        "tolerance",
        "meets_target",
        "measured_runs",
        "predicted_replicas",
    ] {
        assert!(c[0].get(key).is_some(), "missing {key}");
    }
    for key in [
        "machine",
        "kernel",
        "mpi",
        "blas",
        "blas_kernel",
        "started",
        "finished",
        "commands",
        "seeds",
    ] {
        assert!(j["metadata"].get(key).is_some(), "metadata lacks {key}");
    }
    // 1x2 N=4000: 8 good runs + 1 failed; the true model's prediction.
    assert_eq!(
        (c[0]["runs"].as_u64(), c[0]["runs_failed"].as_u64()),
        (Some(8), Some(1))
    );
    let e = c[0]["relative_error"].as_f64().unwrap();
    assert!(e.abs() < 0.02, "{e}");
    assert_eq!(c[0]["within_ci"], true);
    assert_eq!(c[0]["meets_target"], true);
    // HPL's formula: the median's Gflop/s and time agree.
    let (g, t) = (
        c[0]["measured_median_gflops"].as_f64().unwrap(),
        c[0]["measured_median_seconds"].as_f64().unwrap(),
    );
    assert!((g / (hpl_flops(4000) / t / 1e9) - 1.0).abs() < 1e-3, "{g} vs {t}");
    // 5 runs: no interval, and why.
    assert!(c[2]["measured_ci95_gflops"].is_null());
    assert!(c[2]["measured_ci_note"].as_str().unwrap().contains("at least 6"));
    assert_eq!(j["orderings"][0]["agrees"], true);
    assert_eq!(j["orderings"][0]["measured_faster"], "1x2");
    assert!(!j["phases"].as_array().unwrap().is_empty());

    let dir = scratch("report");
    let files = report::write(&v, &dir).unwrap();
    let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
    for needle in [
        "## HPL: measured against predicted",
        "## Orderings between grids at equal N",
        "## HPL's phases, measured against predicted",
        "## Setup",
        "### Failed real runs",
        "MPI_ABORT was invoked on rank 1",
        "no 95 % interval: 5 run(s)",
        "A note.",
        "Not run: not given",
    ] {
        assert!(md.contains(needle), "report.md lacks {needle:?}");
    }
    // The plots exist when a font does (plotting errors are listed in the report otherwise).
    if calibrate::plot::ensure_font().is_ok() {
        for f in ["hpl-gflops.png", "hpl-error.png", "hpl-order.png"] {
            assert!(files.contains(&dir.join(f)), "{f} missing");
        }
    }
}

/// A fit whose files include a fixed-K dgemm design writes dgemm piecewise on
/// K; the models crate reads it back with the fitted values (the fit checks
/// every written kernel against its fit, and would fail otherwise).
#[test]
fn fixed_k_design_gives_a_piecewise_dgemm() {
    let dir = scratch("fixedk");
    let truth = example_dgemm_models();
    let mut rng = models::NoiseRng::new(5, 3);
    let general: Vec<(String, Vec<f64>)> = uniform_product_design(200, 2048.0, 2048f64.powi(3), &mut rng)
        .into_iter()
        .map(|t| ("dgemm".to_string(), t.to_vec()))
        .collect();
    let fixed: Vec<(String, Vec<f64>)> = (0..300)
        .map(|i| {
            let m = 16.0 + (i * 37 % 3000) as f64;
            let n = 16.0 + (i * 91 % 2000) as f64;
            ("dgemm".to_string(), vec![m, n, 128.0])
        })
        .collect();
    let a = dir.join("compute-a.csv");
    let b = dir.join("compute-b.csv");
    std::fs::write(&a, compute_csv(&truth.compute, &general, 0, 7)).unwrap();
    std::fs::write(
        &b,
        compute_csv(&truth.compute, &fixed, 0, 8).replacen("# core: 0\n", "# core: 0\n# fixed_k: 128\n", 1),
    )
    .unwrap();
    let opts = FitOptions {
        network: Default::default(),
        compute: Default::default(),
        command: "test".into(),
        date: "2026-01-01T00:00:00Z".into(),
        host_speed: 1e9,
        network_noise: true,
    };
    let r = run(&[a, b], &opts).unwrap();
    assert!(r.model_text.contains("piecewise_on = \"K\""), "{}", r.model_text);
    assert!(r.model_text.contains("[[compute.dgemm.range]]"));
    let set = models::ModelSet::from_toml_str(&r.model_text, "m.toml").unwrap();
    let id = set.compute.kernel_id("dgemm").unwrap();
    let t = set
        .compute
        .duration_without_noise(id, 0, &[2000.0, 1000.0, 128.0]);
    let exact = truth
        .compute
        .duration_without_noise(id, 0, &[2000.0, 1000.0, 128.0]);
    assert!((t / exact - 1.0).abs() < 0.02, "{t} vs {exact}");
    // The model file round-trips through our reader.
    let again = calibrate::modelfile::ModelFile::parse(&r.model_text).unwrap();
    assert_eq!(again.to_toml(), r.model_text);
}
