//! From runs to verdicts: per configuration the measured median Gflop/s with
//! its 95 % nonparametric interval (`stats::median_ci`, which refuses an
//! interval for too few runs), the spread, the predicted value (the median of
//! the simulation replicas), the relative error, the target, and whether the
//! ordering between configurations of the same N agrees. The formulas are in
//! the crate README ("Validation").

use std::collections::BTreeMap;

use crate::stats;
use crate::validate::hpl::{hpl_flops, hpl_gflops, HplConfig};

/// Confidence level of the intervals.
pub const LEVEL: f64 = 0.95;

/// How one run (real or simulated) ended.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Outcome {
    /// HPL printed its result line.
    Ok {
        /// The run's time (from the printed Gflops: four significant digits).
        seconds: f64,
        /// Gflop/s with HPL's formula.
        gflops: f64,
        /// The time as HPL printed it (two decimals).
        printed_time: f64,
        /// HPL's residual check (`null` when skipped).
        passed: Option<bool>,
        /// HPL's phase times (HPL_DETAILED_TIMING builds), s.
        #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
        phases: BTreeMap<String, f64>,
    },
    /// Anything else: non-zero exit, timeout, no result line.
    Failed {
        /// What went wrong.
        reason: String,
        /// Exit code, if it exited.
        exit_code: Option<i32>,
        /// The last lines of its standard error.
        stderr_tail: String,
        /// The last lines of its standard output.
        stdout_tail: String,
    },
}

impl Outcome {
    /// Gflop/s of a successful run.
    pub fn gflops(&self) -> Option<f64> {
        match self {
            Outcome::Ok { gflops, .. } => Some(*gflops),
            Outcome::Failed { .. } => None,
        }
    }

    /// Phase times of a successful run of a detailed-timing HPL.
    pub fn phases(&self) -> Option<&BTreeMap<String, f64>> {
        match self {
            Outcome::Ok { phases, .. } if !phases.is_empty() => Some(phases),
            _ => None,
        }
    }

    /// Seconds of a successful run.
    pub fn seconds(&self) -> Option<f64> {
        match self {
            Outcome::Ok { seconds, .. } => Some(*seconds),
            Outcome::Failed { .. } => None,
        }
    }
}

/// One real run.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RealRun {
    /// Index of its configuration.
    pub config: usize,
    /// Repetition of that configuration (0-based).
    pub rep: usize,
    /// Position in the randomized order (0-based).
    pub position: usize,
    /// Start (UTC).
    pub start: String,
    /// Wall time of the whole command (mpirun included), s.
    pub wall: f64,
    /// Load averages (1, 5, 15 min) just before the run.
    pub load_before: Option<[f64; 3]>,
    /// The OpenBLAS core the run reported (`OPENBLAS_VERBOSE=2`).
    pub blas_core: Option<String>,
    /// The machine probe just before the run (`calib_probe`: HPL's update
    /// dgemm on every core at once), Gflop/s per rank; empty when not probed.
    #[serde(default)]
    pub probe_gflops: Vec<f64>,
    /// The same probe's row gather (memory-bound, as HPL's row swaps), ns per
    /// element per rank; empty when not probed or the probe has no gather.
    #[serde(default)]
    pub probe_gather_ns: Vec<f64>,
    /// How it ended.
    pub outcome: Outcome,
}

/// A percentage with two significant digits (`0.0021 %`, `38 %`).
pub fn percent2(p: f64) -> String {
    models::percent_of(p, 100.0)
}

/// How one kernel was called outside its model's calibrated ranges in one
/// simulation (smpirun's `--json` `extrapolated`).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Extrapolated {
    /// Calls outside.
    pub calls: u64,
    /// All the kernel's calls.
    pub of_calls: u64,
    /// The modelled time of the calls outside, in percent of the kernel's
    /// (`None` from an smpirun that does not say).
    pub share_of_time: Option<f64>,
    /// What went outside, e.g. "M up to 15996, calibrated 4–6115".
    pub outside: String,
}

/// One simulation replica.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SimRun {
    /// Index of its configuration.
    pub config: usize,
    /// `smpi/seed` of the replica.
    pub seed: u64,
    /// Wall time of smpirun, s.
    pub wall: f64,
    /// Simulated time of the whole program (smpirun --json), s.
    pub simulated_time: Option<f64>,
    /// Per modelled kernel: calls and injected seconds, summed over ranks.
    pub kernels: BTreeMap<String, (u64, f64)>,
    /// Kernels called outside their model's calibrated ranges (smpirun --json
    /// `extrapolated`), by kernel.
    #[serde(default)]
    pub extrapolated: BTreeMap<String, Extrapolated>,
    /// How it ended.
    pub outcome: Outcome,
}

/// The measured side of one configuration.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Measured {
    /// Successful runs.
    pub runs: usize,
    /// Median Gflop/s.
    pub median_gflops: f64,
    /// 95 % nonparametric interval of the median, `None` for too few runs.
    pub ci: Option<[f64; 2]>,
    /// Coverage actually reached by the exact interval (≥ 95 %).
    pub ci_level: Option<f64>,
    /// Why there is no interval.
    pub ci_note: Option<String>,
    /// Total flop / total time of the runs (the mean for rates: Hoefler & Belli rule 3).
    pub mean_gflops: f64,
    /// Smallest and largest Gflop/s.
    pub min_gflops: f64,
    /// Largest Gflop/s.
    pub max_gflops: f64,
    /// First and third quartiles of Gflop/s.
    pub quartiles: [f64; 2],
    /// Coefficient of variation of the times.
    pub cov_time: f64,
    /// (max − min)/median of Gflop/s.
    pub relative_range: f64,
    /// Median time (s).
    pub median_seconds: f64,
}

/// The predicted side of one configuration.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Predicted {
    /// Successful replicas.
    pub replicas: usize,
    /// Median of the replicas' Gflop/s (the prediction).
    pub gflops: f64,
    /// Smallest replica.
    pub min_gflops: f64,
    /// Largest replica.
    pub max_gflops: f64,
    /// Median predicted time (s).
    pub seconds: f64,
}

/// One configuration's verdict.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ConfigResult {
    /// The configuration.
    pub config: HplConfig,
    /// Real runs attempted.
    pub runs_attempted: usize,
    /// Real runs that failed.
    pub runs_failed: usize,
    /// Measured summary (`None` without a successful run).
    pub measured: Option<Measured>,
    /// Predicted summary (`None` without a successful replica).
    pub predicted: Option<Predicted>,
    /// predicted / measured median − 1.
    pub relative_error: Option<f64>,
    /// The prediction lies inside the measured median's interval.
    pub within_ci: Option<bool>,
    /// The tolerance the targets set for this N (`None`: no target).
    pub tolerance: Option<f64>,
    /// |relative error| ≤ tolerance.
    pub meets_target: Option<bool>,
}

/// The targets of issue 17: 3 % at N ≥ 6000, 5 % at N ≥ 4000, none below.
pub fn tolerance(n: u64) -> Option<f64> {
    if n >= 6000 {
        Some(0.03)
    } else if n >= 4000 {
        Some(0.05)
    } else {
        None
    }
}

/// Summarises the successful runs' Gflop/s of order `n`.
pub fn measure(n: u64, gflops: &[f64]) -> Option<Measured> {
    if gflops.is_empty() {
        return None;
    }
    let secs: Vec<f64> = gflops.iter().map(|g| hpl_flops(n) / (g * 1e9)).collect();
    let ci = stats::median_ci(gflops, LEVEL);
    let median = stats::median(gflops);
    let total_time: f64 = secs.iter().sum();
    let s = stats::sorted(gflops);
    Some(Measured {
        runs: gflops.len(),
        median_gflops: median,
        ci: ci.map(|c| [c.low, c.high]),
        ci_level: ci.map(|c| c.level),
        ci_note: ci.is_none().then(|| {
            format!(
                "no 95 % interval: {} run(s); a distribution-free interval of the median needs at least 6 \
                 (with 5, even [min, max] covers only 93.75 %)",
                gflops.len()
            )
        }),
        mean_gflops: hpl_gflops(n, total_time / gflops.len() as f64),
        min_gflops: s[0],
        max_gflops: s[s.len() - 1],
        quartiles: [stats::quantile_sorted(&s, 0.25), stats::quantile_sorted(&s, 0.75)],
        cov_time: if secs.len() > 1 {
            stats::coefficient_of_variation(&secs)
        } else {
            f64::NAN
        },
        relative_range: (s[s.len() - 1] - s[0]) / median,
        median_seconds: stats::median(&secs),
    })
}

/// Summarises the replicas of one configuration.
pub fn predict(n: u64, gflops: &[f64]) -> Option<Predicted> {
    if gflops.is_empty() {
        return None;
    }
    let g = stats::median(gflops);
    Some(Predicted {
        replicas: gflops.len(),
        gflops: g,
        min_gflops: gflops.iter().copied().fold(f64::INFINITY, f64::min),
        max_gflops: gflops.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        seconds: hpl_flops(n) / (g * 1e9),
    })
}

/// Per configuration, its verdict.
pub fn results(configs: &[HplConfig], real: &[RealRun], sims: &[SimRun]) -> Vec<ConfigResult> {
    configs
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let mine: Vec<&RealRun> = real.iter().filter(|r| r.config == i).collect();
            let ok: Vec<f64> = mine.iter().filter_map(|r| r.outcome.gflops()).collect();
            let pred: Vec<f64> = sims
                .iter()
                .filter(|s| s.config == i)
                .filter_map(|s| s.outcome.gflops())
                .collect();
            let measured = measure(c.n, &ok);
            let predicted = predict(c.n, &pred);
            let relative_error = match (&measured, &predicted) {
                (Some(m), Some(p)) => Some(p.gflops / m.median_gflops - 1.0),
                _ => None,
            };
            let within_ci = match (&measured, &predicted) {
                (
                    Some(Measured {
                        ci: Some([lo, hi]), ..
                    }),
                    Some(p),
                ) => Some(p.gflops >= *lo && p.gflops <= *hi),
                _ => None,
            };
            let tol = tolerance(c.n);
            ConfigResult {
                config: *c,
                runs_attempted: mine.len(),
                runs_failed: mine.len() - ok.len(),
                measured,
                predicted,
                relative_error,
                within_ci,
                tolerance: tol,
                meets_target: tol.zip(relative_error).map(|(t, e)| e.abs() <= t),
            }
        })
        .collect()
}

/// One HPL phase of one configuration, measured against predicted (medians).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct PhaseRow {
    /// Configuration index.
    pub config: usize,
    /// Phase name (HPL's: rfact, pfact, mxswp, update, laswp, up tr sv).
    pub phase: String,
    /// Median over the real runs (s).
    pub measured: f64,
    /// Median over the replicas (s).
    pub predicted: f64,
}

/// Median phase times of every configuration whose runs report them.
pub fn phases(configs: usize, real: &[RealRun], sims: &[SimRun]) -> Vec<PhaseRow> {
    let mut out = Vec::new();
    for i in 0..configs {
        let mut names: Vec<String> = real
            .iter()
            .filter(|r| r.config == i)
            .filter_map(|r| r.outcome.phases())
            .flat_map(|p| p.keys().cloned())
            .collect();
        // HPL's order of the phases, unknown names last.
        const ORDER: [&str; 6] = ["rfact", "pfact", "mxswp", "update", "laswp", "up tr sv"];
        names.sort_by_key(|n| {
            (
                ORDER.iter().position(|o| o == n).unwrap_or(ORDER.len()),
                n.clone(),
            )
        });
        names.dedup();
        for name in names {
            let pick = |it: &mut dyn Iterator<Item = &Outcome>| -> Vec<f64> {
                it.filter_map(|o| o.phases().and_then(|p| p.get(&name).copied()))
                    .collect()
            };
            let m = pick(&mut real.iter().filter(|r| r.config == i).map(|r| &r.outcome));
            let p = pick(&mut sims.iter().filter(|s| s.config == i).map(|s| &s.outcome));
            if m.is_empty() || p.is_empty() {
                continue;
            }
            out.push(PhaseRow {
                config: i,
                phase: name,
                measured: stats::median(&m),
                predicted: stats::median(&p),
            });
        }
    }
    out
}

/// Which of two configurations is faster, measured and predicted.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Ordering {
    /// N of both.
    pub n: u64,
    /// NB of both.
    pub nb: u32,
    /// First grid.
    pub a: String,
    /// Second grid.
    pub b: String,
    /// Measured median Gflop/s of a and b.
    pub measured: [f64; 2],
    /// Predicted Gflop/s of a and b.
    pub predicted: [f64; 2],
    /// The grid measured faster (higher median Gflop/s).
    pub measured_faster: String,
    /// The grid predicted faster.
    pub predicted_faster: String,
    /// The measured medians' 95 % intervals do not overlap (a significant
    /// difference; overlapping intervals do not prove equality).
    pub significant: Option<bool>,
    /// Prediction and measurement rank them the same way.
    pub agrees: bool,
}

/// Every pair of configurations with the same N and NB and different grids.
pub fn orderings(results: &[ConfigResult]) -> Vec<Ordering> {
    let mut out = Vec::new();
    for (i, a) in results.iter().enumerate() {
        for b in &results[i + 1..] {
            if a.config.n != b.config.n || a.config.nb != b.config.nb || a.config == b.config {
                continue;
            }
            let (Some(ma), Some(mb), Some(pa), Some(pb)) =
                (&a.measured, &b.measured, &a.predicted, &b.predicted)
            else {
                continue;
            };
            let faster = |x: f64, y: f64| if x >= y { a.config.grid() } else { b.config.grid() };
            let significant = match (ma.ci, mb.ci) {
                (Some([la, ha]), Some([lb, hb])) => Some(ha < lb || hb < la),
                _ => None,
            };
            let mf = faster(ma.median_gflops, mb.median_gflops);
            let pf = faster(pa.gflops, pb.gflops);
            out.push(Ordering {
                n: a.config.n,
                nb: a.config.nb,
                a: a.config.grid(),
                b: b.config.grid(),
                measured: [ma.median_gflops, mb.median_gflops],
                predicted: [pa.gflops, pb.gflops],
                agrees: mf == pf,
                measured_faster: mf,
                predicted_faster: pf,
                significant,
            });
        }
    }
    out
}

/// The machine probe taken during the calibration (`machine-probe.tsv` of
/// `scripts/calibrate.sh`): per probe run, when it ran and what it measured.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct CalibrationProbe {
    /// The file read.
    pub file: String,
    /// The probe's options (its `# calib_probe ...` line), reused for the runs.
    pub args: Vec<String>,
    /// The probe runs, in the file's order.
    pub runs: Vec<ProbeRun>,
}

/// One run of `calib_probe` during the calibration.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct ProbeRun {
    /// Label, such as `before-compute`.
    pub when: String,
    /// UTC date.
    pub date: String,
    /// dgemm Gflop/s per rank.
    pub gflops: Vec<f64>,
    /// Row gather ns per element per rank (empty: a probe without the gather).
    pub gather_ns: Vec<f64>,
}

/// Share of a change in the machine's speed beyond which the report warns (the
/// validation targets are 3–5 %: a drift of that size decides them alone).
pub const DRIFT_WARN: f64 = 0.02;

/// Whether the machine kept its speed: between the calibration and the real
/// runs (the probe), and along the real runs (their randomized order lets a
/// trend over the position be the machine's, not the configurations').
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct MachineState {
    /// Median probe Gflop/s (mean over ranks of each probe run) during the calibration.
    pub calibration_probe_gflops: Option<f64>,
    /// Median probe Gflop/s before the real runs, and its range.
    pub runs_probe_gflops: Option<f64>,
    /// Lowest and highest probe Gflop/s before a real run.
    pub runs_probe_range: Option<[f64; 2]>,
    /// runs_probe / calibration_probe − 1: how much faster (+) or slower (−) the
    /// machine ran HPL's kernel during the real runs than when it was calibrated.
    pub probe_shift: Option<f64>,
    /// Spearman's ρ and p between a run's position and its Gflop/s relative to
    /// its configuration's median (a trend along the runs).
    pub position_trend: Option<(f64, f64)>,
    /// Mean relative Gflop/s of the first and of the last fifth of the runs.
    pub first_last_fifth: Option<[f64; 2]>,
    /// Spearman's ρ and p between the probe before a run and that run's relative
    /// Gflop/s (whether the probe sees what slows HPL).
    pub probe_vs_run: Option<(f64, f64)>,
    /// Median row-gather ns per element (mean over ranks of each probe run)
    /// during the calibration.
    pub calibration_gather_ns: Option<f64>,
    /// The same before the real runs.
    pub runs_gather_ns: Option<f64>,
    /// calibration_gather / runs_gather − 1: how much faster (+) or slower (−)
    /// memory-bound work (HPL's row swaps and copies) ran during the real runs
    /// than when it was calibrated. It can move apart from dgemm's speed: other
    /// tenants' memory traffic slows it without slowing the cores.
    pub gather_shift: Option<f64>,
    /// Findings worth a line under the error table.
    pub warnings: Vec<String>,
}

/// Mean over ranks of one probe run.
fn probe_mean(g: &[f64]) -> Option<f64> {
    (!g.is_empty()).then(|| g.iter().sum::<f64>() / g.len() as f64)
}

/// The machine's state from the runs (`results` gives each configuration's
/// measured median) and the calibration's probe.
pub fn machine_state(
    real: &[RealRun],
    results: &[ConfigResult],
    calibration: Option<&CalibrationProbe>,
) -> MachineState {
    let mut m = MachineState::default();
    let cal: Vec<f64> = calibration
        .map(|c| c.runs.iter().filter_map(|r| probe_mean(&r.gflops)).collect())
        .unwrap_or_default();
    let cal_gather: Vec<f64> = calibration
        .map(|c| c.runs.iter().filter_map(|r| probe_mean(&r.gather_ns)).collect())
        .unwrap_or_default();
    let runs_gather: Vec<f64> = real
        .iter()
        .filter_map(|r| probe_mean(&r.probe_gather_ns))
        .collect();
    if !cal_gather.is_empty() && !runs_gather.is_empty() {
        let (c, r) = (stats::median(&cal_gather), stats::median(&runs_gather));
        m.calibration_gather_ns = Some(c);
        m.runs_gather_ns = Some(r);
        m.gather_shift = Some(c / r - 1.0);
    }
    if !cal.is_empty() {
        m.calibration_probe_gflops = Some(stats::median(&cal));
    }
    let probes: Vec<f64> = real.iter().filter_map(|r| probe_mean(&r.probe_gflops)).collect();
    if !probes.is_empty() {
        m.runs_probe_gflops = Some(stats::median(&probes));
        let s = stats::sorted(&probes);
        m.runs_probe_range = Some([s[0], s[s.len() - 1]]);
    }
    if let (Some(c), Some(r)) = (m.calibration_probe_gflops, m.runs_probe_gflops) {
        m.probe_shift = Some(r / c - 1.0);
    }
    // (position, relative Gflop/s, probe) of the successful runs, in run order.
    let mut rel: Vec<(f64, f64, Option<f64>)> = real
        .iter()
        .filter_map(|r| {
            let med = results.get(r.config)?.measured.as_ref()?.median_gflops;
            Some((
                r.position as f64,
                r.outcome.gflops()? / med,
                probe_mean(&r.probe_gflops),
            ))
        })
        .collect();
    rel.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (pos, ratio): (Vec<f64>, Vec<f64>) = rel.iter().map(|r| (r.0, r.1)).unzip();
    m.position_trend = stats::spearman(&pos, &ratio);
    let fifth = rel.len() / 5;
    if fifth >= 2 {
        m.first_last_fifth = Some([
            stats::mean(&ratio[..fifth]),
            stats::mean(&ratio[ratio.len() - fifth..]),
        ]);
    }
    let (pr, rr): (Vec<f64>, Vec<f64>) = rel.iter().filter_map(|r| Some((r.2?, r.1))).unzip();
    m.probe_vs_run = stats::spearman(&pr, &rr);

    if let Some(shift) = m.probe_shift.filter(|s| s.abs() > DRIFT_WARN) {
        m.warnings.push(format!(
            "machine: HPL's update dgemm (calib_probe) ran {:.1} % {} before the real runs than during the \
             calibration (median {:.2} against {:.2} Gflop/s): predictions made from the calibration are \
             expected to be {} by about that much",
            100.0 * shift.abs(),
            if shift < 0.0 { "slower" } else { "faster" },
            m.runs_probe_gflops.unwrap_or(f64::NAN),
            m.calibration_probe_gflops.unwrap_or(f64::NAN),
            if shift < 0.0 { "optimistic" } else { "pessimistic" },
        ));
    }
    if let Some(shift) = m.gather_shift.filter(|s| s.abs() > DRIFT_WARN) {
        m.warnings.push(format!(
            "machine: memory-bound work (calib_probe's row gather, {:.2} against {:.2} ns an element) ran \
             {:.1} % {} before the real runs than during the calibration: the row swaps and copies \
             (HPL_dlaswp*, HPL_dlatcpy, dcopy; the `laswp` phase) are expected to be predicted {} by about \
             that much",
            m.runs_gather_ns.unwrap_or(f64::NAN),
            m.calibration_gather_ns.unwrap_or(f64::NAN),
            100.0 * shift.abs(),
            if shift < 0.0 { "slower" } else { "faster" },
            if shift < 0.0 { "optimistic" } else { "pessimistic" },
        ));
    }
    if let (Some((rho, p)), Some([first, last])) = (m.position_trend, m.first_last_fifth) {
        if p < 0.05 && (last - first).abs() > DRIFT_WARN {
            m.warnings.push(format!(
                "machine: the real runs drifted along their order (Spearman ρ = {rho:+.2}, p = {p:.1e}): \
                 the first fifth ran {:+.1} % and the last fifth {:+.1} % from their configurations' medians, \
                 so each median mixes machine states",
                100.0 * (first - 1.0),
                100.0 * (last - 1.0),
            ));
        }
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(g: f64, n: u64) -> Outcome {
        let s = hpl_flops(n) / (g * 1e9);
        Outcome::Ok {
            seconds: s,
            gflops: g,
            printed_time: (s * 100.0).round() / 100.0,
            passed: Some(true),
            phases: BTreeMap::new(),
        }
    }

    fn real(config: usize, g: f64, n: u64) -> RealRun {
        RealRun {
            config,
            rep: 0,
            position: 0,
            start: String::new(),
            wall: 1.0,
            load_before: None,
            blas_core: None,
            probe_gflops: Vec::new(),
            probe_gather_ns: Vec::new(),
            outcome: ok(g, n),
        }
    }

    /// 40 runs of two configurations alternating, the machine slowing by `drift`
    /// along them and the probe seeing it; the calibration probe at the first
    /// run's speed.
    fn drifting(drift: f64) -> (Vec<RealRun>, Vec<ConfigResult>, CalibrationProbe) {
        let configs = [
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
        ];
        let mut runs = Vec::new();
        for position in 0..40 {
            let speed = 1.0 - drift * position as f64 / 39.0;
            let config = position % 2;
            let mut r = real(config, [80.0, 70.0][config] * speed, 4000);
            r.position = position;
            r.probe_gflops = vec![49.0 * speed, 48.0 * speed];
            r.probe_gather_ns = vec![7.0, 7.2];
            runs.push(r);
        }
        let results = super::results(&configs, &runs, &[]);
        let cal = CalibrationProbe {
            file: "machine-probe.tsv".into(),
            args: vec!["--lda".into(), "5000".into()],
            runs: vec![
                ProbeRun {
                    when: "before-compute".into(),
                    date: String::new(),
                    gflops: vec![49.0, 48.0],
                    gather_ns: vec![7.0, 7.2],
                };
                3
            ],
        };
        (runs, results, cal)
    }

    #[test]
    fn a_drifting_machine_is_reported_and_a_steady_one_is_not() {
        let (runs, results, cal) = drifting(0.10);
        let m = machine_state(&runs, &results, Some(&cal));
        assert_eq!(m.calibration_probe_gflops, Some(48.5));
        // The median probe is the mid-run one: 5 % below the calibration's.
        let shift = m.probe_shift.unwrap();
        assert!((shift + 0.05).abs() < 1e-9, "{shift}");
        let (rho, p) = m.position_trend.unwrap();
        assert!(rho < -0.9 && p < 1e-6, "{rho} {p}");
        let [first, last] = m.first_last_fifth.unwrap();
        assert!(first > 1.03 && last < 0.97, "{first} {last}");
        assert!(m.probe_vs_run.unwrap().0 > 0.9);
        assert_eq!(m.warnings.len(), 2, "{:?}", m.warnings);
        assert!(m.warnings[0].contains("slower") && m.warnings[0].contains("optimistic"));
        assert!(m.warnings[1].contains("drifted"));

        let (runs, results, cal) = drifting(0.0);
        let m = machine_state(&runs, &results, Some(&cal));
        assert!(
            m.position_trend.is_none(),
            "constant ratios have no rank correlation"
        );
        assert!(m.warnings.is_empty(), "{:?}", m.warnings);
        let m = machine_state(&runs, &results, None);
        assert_eq!((m.calibration_probe_gflops, m.probe_shift), (None, None));
    }

    #[test]
    fn memory_bound_drift_is_reported_apart_from_dgemm() {
        // dgemm steady; the row gather 20 % slower during the calibration than
        // before the runs (another tenant's memory traffic then).
        let (mut runs, results, mut cal) = drifting(0.0);
        for r in &mut cal.runs {
            r.gather_ns = vec![8.4, 8.64];
        }
        let m = machine_state(&runs, &results, Some(&cal));
        assert_eq!(m.probe_shift, Some(0.0));
        let shift = m.gather_shift.unwrap();
        assert!((shift - 0.2).abs() < 1e-9, "{shift}");
        assert_eq!(m.warnings.len(), 1, "{:?}", m.warnings);
        let w = &m.warnings[0];
        assert!(
            w.contains("20.0 % faster") && w.contains("pessimistic") && w.contains("laswp"),
            "{w}"
        );
        // Probes without the gather (older calib_probe): nothing to compare.
        for r in &mut runs {
            r.probe_gather_ns.clear();
        }
        let m = machine_state(&runs, &results, Some(&cal));
        assert_eq!((m.gather_shift, m.runs_gather_ns), (None, None));
        assert!(m.warnings.is_empty(), "{:?}", m.warnings);
    }

    #[test]
    fn mean_rate_is_total_flop_over_total_time() {
        // Hoefler & Belli's example: the same work in 10, 100 and 40 s: the mean
        // time is 50 s, the rate flop/50 s; the mean of the rates is 2.25 × that.
        let n = 1000;
        let g: Vec<f64> = [10.0, 100.0, 40.0].iter().map(|t| hpl_gflops(n, *t)).collect();
        let m = measure(n, &g).unwrap();
        assert!((m.mean_gflops - hpl_gflops(n, 50.0)).abs() < 1e-15);
        let arithmetic = stats::mean(&g);
        assert!(
            (arithmetic / m.mean_gflops - 2.25).abs() < 1e-9,
            "{arithmetic} vs {}",
            m.mean_gflops
        );
        assert!((m.mean_gflops - stats::harmonic_mean(&g)).abs() < 1e-12);
    }

    #[test]
    fn too_few_runs_give_no_interval_and_say_so() {
        let m = measure(2000, &[10.0, 11.0, 12.0, 13.0, 14.0]).unwrap();
        assert!(m.ci.is_none());
        assert!(m.ci_note.as_deref().unwrap().contains("at least 6"));
        let m = measure(2000, &[10.0, 11.0, 12.0, 13.0, 14.0, 15.0]).unwrap();
        assert_eq!(m.ci, Some([10.0, 15.0]));
        assert!(m.ci_level.unwrap() > 0.96);
    }

    #[test]
    fn failed_runs_count_but_do_not_summarise() {
        let configs = [HplConfig {
            p: 1,
            q: 2,
            n: 4000,
            nb: 128,
        }];
        let mut runs: Vec<RealRun> = (0..6).map(|i| real(0, 30.0 + f64::from(i), 4000)).collect();
        runs.push(RealRun {
            outcome: Outcome::Failed {
                reason: "exit 1".into(),
                exit_code: Some(1),
                stderr_tail: "boom".into(),
                stdout_tail: String::new(),
            },
            ..real(0, 1.0, 4000)
        });
        let sims = vec![SimRun {
            config: 0,
            seed: 1,
            wall: 1.0,
            simulated_time: None,
            kernels: BTreeMap::new(),
            extrapolated: BTreeMap::new(),
            outcome: ok(32.0, 4000),
        }];
        let r = results(&configs, &runs, &sims);
        assert_eq!((r[0].runs_attempted, r[0].runs_failed), (7, 1));
        let m = r[0].measured.as_ref().unwrap();
        assert_eq!(m.runs, 6);
        assert!((m.median_gflops - 32.5).abs() < 1e-12);
        assert!((r[0].relative_error.unwrap() - (32.0 / 32.5 - 1.0)).abs() < 1e-12);
        assert_eq!(r[0].within_ci, Some(true));
        assert_eq!(r[0].meets_target, Some(true));
    }

    #[test]
    fn ordering_agreement() {
        let c = [
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
        ];
        let runs: Vec<RealRun> = (0..6)
            .flat_map(|i| {
                [
                    real(0, 30.0 + f64::from(i) * 0.1, 4000),
                    real(1, 20.0 + f64::from(i) * 0.1, 4000),
                ]
            })
            .collect();
        let sim = |config, g| SimRun {
            config,
            seed: 1,
            wall: 0.0,
            simulated_time: None,
            kernels: BTreeMap::new(),
            extrapolated: BTreeMap::new(),
            outcome: ok(g, 4000),
        };
        let o = orderings(&results(&c, &runs, &[sim(0, 29.0), sim(1, 21.0)]));
        assert_eq!(o.len(), 1);
        assert!(o[0].agrees && o[0].significant == Some(true));
        assert_eq!(o[0].measured_faster, "1x2");
        let o = orderings(&results(&c, &runs, &[sim(0, 19.0), sim(1, 21.0)]));
        assert!(!o[0].agrees);
    }

    #[test]
    fn targets() {
        assert_eq!(tolerance(8000), Some(0.03));
        assert_eq!(tolerance(6000), Some(0.03));
        assert_eq!(tolerance(4000), Some(0.05));
        assert_eq!(tolerance(2000), None);
    }
}
