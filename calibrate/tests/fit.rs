//! End-to-end tests of `smpi-fit`: the model file round trip, the thesis's
//! macro model through files, and the command line (help, a bad input that
//! must not leave a half-written model, a full fit with report, nonreg).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use calibrate::fit::{run, FitOptions};
use calibrate::modelfile::ModelFile;
use calibrate::synth::{compute_csv, example_dgemm_models, uniform_product_design, SyntheticNetwork};

fn scratch(name: &str) -> PathBuf {
    common::scratch("smpi-fit-test", name)
}

fn dgemm_calls(products: usize, seed: u64) -> Vec<(String, Vec<f64>)> {
    let mut rng = models::NoiseRng::new(seed, 3);
    let mut v: Vec<(String, Vec<f64>)> = uniform_product_design(products, 2048.0, 2048f64.powi(3), &mut rng)
        .into_iter()
        .map(|t| ("dgemm".to_string(), t.to_vec()))
        .collect();
    v.push(("dgemm".into(), vec![1.0, 1.0, 1.0]));
    v.push(("dgemm".into(), vec![2048.0, 2048.0, 2048.0]));
    v
}

/// A small synthetic calibration: one network file and one compute file per core.
fn inputs(dir: &Path) -> Vec<PathBuf> {
    let net = dir.join("network-synthetic-7.csv");
    std::fs::write(&net, SyntheticNetwork::example().csv(150, 5, 7.0, 7)).unwrap();
    let truth = example_dgemm_models();
    let mut files = vec![net];
    for core in 0..2 {
        let p = dir.join(format!("compute-synthetic-core{core}-7.csv"));
        std::fs::write(
            &p,
            compute_csv(&truth.compute, &dgemm_calls(200, 7), core, 7 + u64::from(core)),
        )
        .unwrap();
        files.push(p);
    }
    files
}

fn options() -> FitOptions {
    FitOptions {
        network: Default::default(),
        compute: Default::default(),
        command: "test".into(),
        date: "2026-01-01T00:00:00Z".into(),
        host_speed: 1e9,
        network_noise: true,
    }
}

/// Written, read back by our reader and written again: the same bytes; and
/// the models crate loads the file (`smpirun -model` does exactly that).
#[test]
fn model_file_round_trip_is_identical() {
    let dir = scratch("roundtrip");
    let r = run(&inputs(&dir), &options()).unwrap();
    let again = ModelFile::parse(&r.model_text).unwrap();
    assert_eq!(again, r.model);
    assert_eq!(again.to_toml(), r.model_text);
    let path = dir.join("model.toml");
    std::fs::write(&path, &r.model_text).unwrap();
    let set = models::ModelSet::load(&path).unwrap();
    assert!(set.network.is_some() && set.compute.kernel_id("dgemm").is_some());
    assert_eq!(
        set.config_value("smpi/send-is-detached-thresh"),
        Some(
            r.network
                .unwrap()
                .translation
                .detached_thresh
                .to_string()
                .as_str()
        )
    );
    assert!(r.compute_readback_error < 1e-12);
}

/// The thesis's macro model T = 1.029e-11·MNK + 1.981e-12 fitted from
/// noise-free calls comes out exactly, and the simulator's reading of the file
/// gives the same delays as the model written by hand.
#[test]
fn thesis_macro_model_round_trips_exactly() {
    let dir = scratch("macro");
    let truth = models::ModelSet::from_toml_str(
        "[compute.dgemm]\nmodel = \"linear\"\nproduct = \"MNK\"\na = 1.029e-11\nb = 1.981e-12\n",
        "macro.toml",
    )
    .unwrap();
    let csv = dir.join("compute-macro-core0-1.csv");
    std::fs::write(&csv, compute_csv(&truth.compute, &dgemm_calls(300, 1), 0, 1)).unwrap();
    let r = run(&[csv], &options()).unwrap();
    assert!(
        r.model_text
            .contains("model = \"linear\"\nproduct = \"MNK\"\na = 1.029e-11\nb = 1.981e-12\n"),
        "{}",
        r.model_text
    );
    let path = dir.join("macro-fitted.toml");
    std::fs::write(&path, &r.model_text).unwrap();
    let fitted = models::ModelSet::load(&path).unwrap();
    let (a, b) = (
        fitted.compute.kernel_id("dgemm").unwrap(),
        truth.compute.kernel_id("dgemm").unwrap(),
    );
    for p in [[1.0, 1.0, 1.0], [128.0, 2048.0, 77.0], [2048.0, 2048.0, 2048.0]] {
        assert_eq!(
            fitted.compute.duration_without_noise(a, 0, &p),
            truth.compute.duration_without_noise(b, 0, &p)
        );
    }
}

fn smpi_fit() -> Command {
    Command::new(env!("CARGO_BIN_EXE_smpi-fit"))
}

#[test]
fn help_describes_the_tool() {
    let out = smpi_fit().arg("--help").output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("--platform-out") && text.contains("nonreg") && text.contains("--report"),
        "{text}"
    );
}

/// An interrupted calibration file is refused with file, line and column, and
/// nothing is written (no model, no summary, no temporary file).
#[test]
fn bad_input_writes_nothing() {
    let dir = scratch("bad");
    let files = inputs(&dir);
    let text = std::fs::read_to_string(&files[1]).unwrap();
    let cut: String = text.lines().take(60).map(|l| format!("{l}\n")).collect();
    std::fs::write(&files[1], cut).unwrap();
    let model = dir.join("out/model.toml");
    let out = smpi_fit()
        .args(files.iter().map(|p| p.as_os_str()))
        .arg("-o")
        .arg(&model)
        .arg("--platform-out")
        .arg(dir.join("out/platform.toml"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("{}:61:1: incomplete file", files[1].display())),
        "{err}"
    );
    assert!(!dir.join("out").exists() || std::fs::read_dir(dir.join("out")).unwrap().next().is_none());
}

/// The whole command: model, platform, summary and report; then `nonreg` of
/// that summary against earlier ones.
#[test]
fn fit_report_and_nonreg_from_the_command_line() {
    let dir = scratch("cli");
    let files = inputs(&dir);
    let model = dir.join("model.toml");
    let report = dir.join("report");
    let out = smpi_fit()
        .args(files.iter().map(|p| p.as_os_str()))
        .arg("-o")
        .arg(&model)
        .arg("--platform-out")
        .arg(dir.join("platform.toml"))
        .arg("--report")
        .arg(&report)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    models::ModelSet::load(&model).unwrap();
    let platform = std::fs::read_to_string(dir.join("platform.toml")).unwrap();
    assert!(platform.contains("routing = \"cluster\"") && platform.contains("synthetic-core1"));
    let md = std::fs::read_to_string(report.join("report.md")).unwrap();
    assert!(md.contains("## Network") && md.contains("## Kernel `dgemm`") && md.contains("extrapolated"));
    assert!(report.join("network-pingpong.png").exists());
    let summary = dir.join("model.summary.json");
    assert!(summary.exists());
    // A history of the same summary (identical values: a constant factor that
    // did not change passes).
    let hist = dir.join("history");
    std::fs::create_dir_all(&hist).unwrap();
    for i in 0..4 {
        std::fs::copy(&summary, hist.join(format!("s{i}.json"))).unwrap();
    }
    let out = smpi_fit()
        .args(["nonreg", "--history"])
        .arg(&hist)
        .arg("--new")
        .arg(&summary)
        .arg("--json")
        .arg(dir.join("nonreg.json"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains("dgemm.performance") && text.contains("0 alarm(s)"),
        "{text}"
    );
}

/// `--network-noise none` and `--kernel-noise none`: no noise anywhere in the
/// model file (N-0), the lines and means unchanged.
#[test]
fn noise_can_be_left_out() {
    let dir = scratch("nonoise");
    let files = inputs(&dir);
    let with = run(&files, &options()).unwrap();
    assert!(with.model_text.contains("[[network.range]]"));
    let mut o = options();
    o.network_noise = false;
    o.compute.noise = calibrate::compute::KernelNoise::None;
    let without = run(&files, &o).unwrap();
    assert!(!without.model_text.contains("[[network.range]]"));
    assert!(!without.model_text.contains("noise = "), "{}", without.model_text);
    let set = models::ModelSet::from_toml_str(&without.model_text, "m.toml").unwrap();
    assert!(set.network.as_ref().unwrap().noise.is_none());
    let out = smpi_fit()
        .args(files.iter().map(|p| p.as_os_str()))
        .arg("-o")
        .arg(dir.join("m.toml"))
        .args(["--network-noise", "none", "--kernel-noise", "none"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = std::fs::read_to_string(dir.join("m.toml")).unwrap();
    assert!(!text.contains("noise = "));
}

/// Compute calibrations timed on different operand layouts (`calib_compute
/// --lda`) pooled in one fit are flagged; one layout, or a BLAS trace next to
/// a calibration, is not.
#[test]
fn pooled_operand_layouts_are_flagged() {
    use calibrate::fit::layout_warnings;
    use calibrate::input::parse;
    let models = example_dgemm_models();
    let csv = compute_csv(&models.compute, &dgemm_calls(5, 3), 0, 3);
    let with = |extra: &str| csv.replacen("# core: 0\n", &format!("# core: 0\n{extra}"), 1);
    let tight = parse(&csv, "tight.csv", 0).unwrap();
    let zero = parse(&with("# lda: 0\n"), "zero.csv", 1).unwrap();
    let strided = parse(&with("# lda: 5000\n"), "strided.csv", 2).unwrap();
    let trace = parse(
        &csv.replacen("# mode: quick\n", "# mode: trace\n", 1),
        "trace.csv",
        3,
    )
    .unwrap();
    assert!(layout_warnings(&[tight.clone(), zero.clone(), trace.clone()]).is_empty());
    assert!(layout_warnings(&[strided.clone(), trace]).is_empty());
    let w = layout_warnings(&[tight, zero, strided]);
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(
        w[0].contains("tight operands: tight.csv, zero.csv") && w[0].contains("lda 5000: strided.csv"),
        "{}",
        w[0]
    );
}

/// A dgemm with an empty operand (HPL makes thousands with N = 0) returns at
/// once: the fit leaves such calls out and writes their median duration as the
/// kernel's `empty` time, which the simulator's reading of the file gives them
/// instead of the polynomial's value.
#[test]
fn empty_calls_get_their_measured_time() {
    let dir = scratch("empty");
    let mut files = inputs(&dir);
    let truth = example_dgemm_models();
    let mut calls = dgemm_calls(200, 9);
    calls.extend((0..41).map(|i| ("dgemm".to_string(), vec![392.0 + f64::from(i), 0.0, 128.0])));
    let p = dir.join("compute-synthetic-core0-9.csv");
    let text = compute_csv(&truth.compute, &calls, 0, 9);
    std::fs::write(&p, &text).unwrap();
    files.push(p);
    let mut zero: Vec<f64> = text
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| l.split(',').collect::<Vec<_>>())
        .filter(|c| c.len() == 8 && c[2] == "dgemm" && c[4] == "0")
        .map(|c| c[7].parse().unwrap())
        .collect();
    assert_eq!(zero.len(), 41);
    zero.sort_by(f64::total_cmp);
    let r = run(&files, &options()).unwrap();
    let line = r
        .model_text
        .lines()
        .find(|l| l.starts_with("empty = "))
        .expect("an empty entry");
    assert!(line.contains("product = \"MNK\""), "{line}");
    assert_eq!(ModelFile::parse(&r.model_text).unwrap().to_toml(), r.model_text);
    let set = models::ModelSet::from_toml_str(&r.model_text, "model.toml").unwrap();
    let k = set.compute.kernel_id("dgemm").unwrap();
    let empty = set.compute.duration_without_noise(k, 0, &[392.0, 0.0, 128.0]);
    assert!(
        (empty - zero[20]).abs() <= 1e-6 * zero[20],
        "{empty} vs median {}",
        zero[20]
    );
    assert!(set.compute.duration_without_noise(k, 0, &[392.0, 1.0, 128.0]) != empty);
}
