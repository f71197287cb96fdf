//! `smpi-fit`: fits SMPI network and compute-kernel models to calibration CSVs
//! (apps/calibration/FORMAT.md) and writes a model file `smpirun -model`
//! loads, the matching platform, a summary and a report; `smpi-fit nonreg`
//! tests a calibration summary against a history; `smpi-fit synth` writes
//! synthetic calibration CSVs with a known truth.

#![warn(missing_docs, unreachable_pub, unsafe_op_in_unsafe_fn)]

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use calibrate::compute::{ComputeOptions, FromTrace, KernelNoise};
use calibrate::fit::{self, FitOptions};
use calibrate::network::NetworkOptions;
use calibrate::nonreg::{self, Observation, Verdict};
use calibrate::plot::{Chart, Scale, Series, PALETTE};
use calibrate::segmented::{Center, SegmentOptions};
use calibrate::summary::Summary;
use clap::{Args, Parser, Subcommand};

/// Fit SMPI models to calibration CSVs.
///
/// `smpi-fit network-*.csv compute-*.csv -o machine.toml --platform-out machine-platform.toml --report report/`
/// reads the CSVs written by the calibration programs and writes a model file
/// (`smpirun -model`), the platform it goes with (`smpirun -platform`), a JSON
/// summary for `smpi-fit nonreg`, and a Markdown + PNG report. Nothing is
/// written unless every input is valid and every fit succeeded.
#[derive(Parser, Debug)]
#[command(
    name = "smpi-fit",
    version,
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    fit: FitArgs,
}

#[derive(Args, Debug)]
struct FitArgs {
    /// Calibration CSVs (network and/or compute).
    #[arg(required = true)]
    inputs: Vec<PathBuf>,
    /// Model file to write.
    #[arg(short, long, required = true)]
    output: Option<PathBuf>,
    /// Platform file to write (TOML): one host per calibrated core, the nominal link.
    #[arg(long)]
    platform_out: Option<PathBuf>,
    /// Calibration summary to write (JSON) [default: <output> with `.summary.json`].
    #[arg(long)]
    summary: Option<PathBuf>,
    /// Directory for report.md and its PNG plots.
    #[arg(long)]
    report: Option<PathBuf>,
    /// Per-size aggregate the network lines are fitted to.
    #[arg(long, value_enum, default_value_t = Center::Mean)]
    center: Center,
    /// Largest number of segments per network kind (BIC chooses up to it).
    #[arg(long, default_value_t = 14)]
    max_segments: usize,
    /// Fewest distinct sizes per segment (at least 3 % of the sizes).
    #[arg(long, default_value_t = 8)]
    min_sizes: usize,
    /// Cross-validation folds of the kernel fits.
    #[arg(long, default_value_t = 10)]
    folds: usize,
    /// Seed of the folds and of the mixture fits.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Host speed of the written platform, flop/s (also its smpi/host-speed).
    #[arg(long, default_value_t = 1e9)]
    host_speed: f64,
    /// Network noise written into the model: `mixture` (per size range, from the ping-pong
    /// residuals) or `none` (the lines alone; see the README on why medians then match better).
    #[arg(long, value_parser = ["mixture", "none"], default_value = "mixture")]
    network_noise: String,
    /// Kernel noise: `relative` (σ = cv·mean, cv the robust relative spread, at most 0.5),
    /// `fitted` (N-1 or N-2 by cross-validation, the thesis's) or `none`.
    #[arg(long, value_parser = ["relative", "fitted", "none"], default_value = "relative")]
    kernel_noise: String,
    /// Keep every kernel call in the fits (no screening of gross outliers: calls slowed
    /// down more than 1.5× by something outside the kernel, e.g. a preemption).
    #[arg(long)]
    no_screen: bool,
    /// Which kernels are fitted on the calls of a program trace (`mode: trace`, e.g.
    /// calibrate/trace/blas_trace.c) alone when it has enough of them, the designs' calls set
    /// aside: `functions` (the program's own, `HPL_*`), `small` (every kernel but dgemm and
    /// dtrsm) or `none` (traced and designed calls pooled).
    #[arg(long, value_parser = ["functions", "small", "none"], default_value = "functions")]
    from_trace: String,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Test a new calibration summary against a history (thesis ch. 9, Chew's
    /// F-distribution prediction region). Exit code 3 when something is flagged.
    Nonreg(NonregArgs),
    /// Write a synthetic calibration CSV with a known truth.
    Synth(SynthArgs),
}

#[derive(Args, Debug)]
struct NonregArgs {
    /// Earlier summaries: files, or directories whose *.json files are read.
    #[arg(long, required = true, num_args = 1..)]
    history: Vec<PathBuf>,
    /// The new summary.
    #[arg(long)]
    new: PathBuf,
    /// Confidence γ of the prediction region.
    #[arg(long, default_value_t = 0.9999)]
    gamma: f64,
    /// Windows r (the new summary and the r − 1 before it are averaged).
    #[arg(long, value_delimiter = ',', default_value = "1,5")]
    windows: Vec<usize>,
    /// History summaries labelled as outliers (file names), left out of the reference.
    #[arg(long)]
    exclude: Vec<String>,
    /// Reference starts at this calibration date (the last recorded change).
    #[arg(long)]
    since: Option<String>,
    /// Only these factors and groups (comma-separated prefixes), e.g. `dgemm.`.
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
    /// Write the results as JSON.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Write the overview plot (PNG).
    #[arg(long)]
    plot: Option<PathBuf>,
}

#[derive(Args, Debug)]
struct SynthArgs {
    /// `network` (a two-rank machine with eager and rendezvous) or `dgemm`.
    #[arg(value_parser = ["network", "dgemm"])]
    what: String,
    /// CSV to write.
    #[arg(long)]
    out: PathBuf,
    /// Seed.
    #[arg(long, default_value_t = 7)]
    seed: u64,
    /// Network: distinct sizes. dgemm: distinct products (×6 permutations).
    #[arg(long, default_value_t = 400)]
    count: usize,
    /// Network: repetitions per (kind, size).
    #[arg(long, default_value_t = 10)]
    reps: usize,
    /// dgemm: the core (host index) written.
    #[arg(long, default_value_t = 0)]
    core: u32,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let r = match cli.command {
        Some(Command::Nonreg(a)) => nonreg_main(&a),
        Some(Command::Synth(a)) => synth_main(&a).map(|()| ExitCode::SUCCESS),
        None => fit_main(&cli.fit).map(|()| ExitCode::SUCCESS),
    };
    match r {
        Ok(code) => code,
        Err(e) => {
            eprintln!("smpi-fit: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn fit_main(a: &FitArgs) -> anyhow::Result<()> {
    let output = a.output.clone().context("give the model file to write with -o")?;
    let command = std::env::args().collect::<Vec<_>>().join(" ");
    let opts = FitOptions {
        network: NetworkOptions {
            segments: SegmentOptions {
                max_segments: a.max_segments,
                min_sizes: a.min_sizes,
                center: a.center,
                seed: a.seed,
                ..SegmentOptions::default()
            },
            ..NetworkOptions::default()
        },
        compute: ComputeOptions {
            folds: a.folds.max(2),
            seed: a.seed,
            screen_outliers: !a.no_screen,
            from_trace: match a.from_trace.as_str() {
                "small" => FromTrace::Small,
                "none" => FromTrace::None,
                _ => FromTrace::Functions,
            },
            noise: match a.kernel_noise.as_str() {
                "fitted" => KernelNoise::Fitted,
                "none" => KernelNoise::None,
                _ => KernelNoise::Relative,
            },
            ..ComputeOptions::default()
        },
        command,
        date: fit::now_utc(),
        host_speed: a.host_speed,
        network_noise: a.network_noise == "mixture",
    };
    let r = fit::run(&a.inputs, &opts)?;
    let summary_path = a
        .summary
        .clone()
        .unwrap_or_else(|| output.with_extension("summary.json"));
    let mut outputs = vec![
        (output.clone(), r.model_text.clone().into_bytes()),
        (summary_path.clone(), serde_json::to_vec_pretty(&r.summary)?),
    ];
    if let Some(p) = &a.platform_out {
        outputs.push((p.clone(), r.platform.to_toml().into_bytes()));
    }
    fit::write_atomically(&outputs)?;
    eprintln!(
        "smpi-fit: wrote {} and {}",
        output.display(),
        summary_path.display()
    );
    if let Some(p) = &a.platform_out {
        eprintln!(
            "smpi-fit: wrote {} ({} hosts)",
            p.display(),
            r.platform.hosts.len()
        );
    }
    if let Some(n) = &r.network {
        let t = &n.translation;
        let pp: Vec<_> = r.network_checks.iter().filter(|c| c.what == "pingpong").collect();
        let within = pp.iter().filter(|c| c.error_median().abs() <= 0.05).count();
        let worst = pp.iter().map(|c| c.error_median().abs()).fold(0.0, f64::max);
        eprintln!(
            "smpi-fit: network: detached threshold {} B, link {:e} s / {:e} B/s, ping-pong within 5 % of the median at {}/{} sizes (worst {:.1} %)",
            t.detached_thresh,
            t.latency,
            t.bandwidth,
            within,
            pp.len(),
            100.0 * worst
        );
        for w in &n.warnings {
            eprintln!("smpi-fit: note: {w}");
        }
    }
    for k in &r.kernels {
        eprintln!(
            "smpi-fit: {}: {} + {} ({} calls{})",
            k.label(),
            k.mean.model.label(),
            k.noise.model.label(),
            k.calls,
            if k.k_range.is_none() && k.hosts_test.as_ref().is_some_and(|h| h.per_host) {
                ", per core"
            } else {
                ""
            }
        );
    }
    for w in fit::screening_warnings(&r.kernels)
        .into_iter()
        .chain(fit::layout_warnings(&r.files))
    {
        eprintln!("smpi-fit: warning: {w}");
    }
    if let Some(dir) = &a.report {
        let files = calibrate::report::write(&r, dir)?;
        eprintln!(
            "smpi-fit: report: {} ({} files)",
            dir.join("report.md").display(),
            files.len()
        );
    }
    Ok(())
}

fn read_history(paths: &[PathBuf]) -> anyhow::Result<Vec<(PathBuf, Summary)>> {
    let mut files = Vec::new();
    for p in paths {
        if p.is_dir() {
            let mut v: Vec<PathBuf> = std::fs::read_dir(p)
                .with_context(|| format!("{}: cannot list it", p.display()))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|f| f.extension().is_some_and(|x| x == "json"))
                .collect();
            v.sort();
            files.extend(v);
        } else {
            files.push(p.clone());
        }
    }
    let mut out = Vec::new();
    for f in files {
        let s = Summary::read(&f)?;
        out.push((f, s));
    }
    out.sort_by(|a, b| {
        (a.1.calibration_date.as_str(), a.1.fit_date.as_str(), &a.0).cmp(&(
            b.1.calibration_date.as_str(),
            b.1.fit_date.as_str(),
            &b.0,
        ))
    });
    Ok(out)
}

fn nonreg_main(a: &NonregArgs) -> anyhow::Result<ExitCode> {
    let new = Summary::read(&a.new)?;
    let keep = |name: &str| a.only.is_empty() || a.only.iter().any(|p| name.starts_with(p.as_str()));
    let history: Vec<(PathBuf, Summary)> = read_history(&a.history)?
        .into_iter()
        .filter(|(p, s)| {
            let name = p
                .file_name()
                .map(|n| n.to_string_lossy().to_string())
                .unwrap_or_default();
            !a.exclude.iter().any(|e| *e == name || p.ends_with(e))
                && a.since
                    .as_ref()
                    .is_none_or(|d| s.calibration_date.as_str() >= d.as_str())
                && p.canonicalize().ok() != a.new.canonicalize().ok()
        })
        .collect();
    let obs = |label: String, s: &Summary| Observation {
        label,
        factors: s
            .factors
            .iter()
            .filter(|(k, _)| keep(k))
            .map(|(k, v)| (k.clone(), *v))
            .collect(),
    };
    let hist: Vec<Observation> = history
        .iter()
        .map(|(p, s)| obs(p.display().to_string(), s))
        .collect();
    let newest = obs(a.new.display().to_string(), &new);
    let groups: BTreeMap<String, Vec<String>> = new
        .groups
        .iter()
        .filter(|(g, _)| keep(g))
        .map(|(g, v)| (g.clone(), v.clone()))
        .collect();
    let results = nonreg::test_all(&hist, &newest, &groups, &a.windows, a.gamma);
    println!(
        "non-regression test of {} against {} earlier summaries (γ = {}, windows {:?})",
        a.new.display(),
        hist.len(),
        a.gamma,
        a.windows
    );
    println!(
        "{:<44} {:>2} {:>4} {:>12} {:>12} {:>11}  verdict",
        "factor or group", "r", "n", "t", "threshold", "likelihood"
    );
    let mut alarms = 0;
    for r in &results {
        let (t, th, l, v) = match &r.verdict {
            Verdict::Pass {
                t,
                threshold,
                likelihood,
                ..
            } => (
                format!("{t:.4}"),
                format!("{threshold:.4}"),
                format!("{likelihood:.3e}"),
                "ok".to_string(),
            ),
            Verdict::Alarm {
                t,
                threshold,
                likelihood,
                sign,
            } => {
                alarms += 1;
                let dir = match sign {
                    1 => " (above)",
                    -1 => " (below)",
                    _ => "",
                };
                (
                    format!("{t:.4}"),
                    format!("{threshold:.4}"),
                    format!("{likelihood:.3e}"),
                    format!("ALARM{dir}"),
                )
            }
            Verdict::InsufficientReference { n, p } => (
                "-".into(),
                "-".into(),
                "-".into(),
                format!("insufficient reference (n = {n} ≤ p = {p})"),
            ),
            Verdict::Degenerate { reason } => (
                "-".into(),
                "-".into(),
                "-".into(),
                format!("degenerate: {reason}"),
            ),
        };
        println!(
            "{:<44} {:>2} {:>4} {t:>12} {th:>12} {l:>11}  {v}",
            r.name, r.r, r.n
        );
    }
    println!("{alarms} alarm(s)");
    if let Some(p) = &a.json {
        fit::write_atomically(&[(p.clone(), serde_json::to_vec_pretty(&results)?)])?;
    }
    if let Some(p) = &a.plot {
        overview_plot(p, &hist, &newest, a.gamma)?;
    }
    Ok(if alarms > 0 {
        ExitCode::from(3)
    } else {
        ExitCode::SUCCESS
    })
}

/// One panel per single factor: its history, the r = 1 region each point was
/// tested against (from the points before it), anomalies red (above) and blue
/// (below).
fn overview_plot(
    path: &std::path::Path,
    hist: &[Observation],
    new: &Observation,
    gamma: f64,
) -> anyhow::Result<()> {
    let mut charts = Vec::new();
    let all: Vec<&Observation> = hist.iter().chain(std::iter::once(new)).collect();
    for name in new.factors.keys() {
        let vals: Vec<(usize, f64)> = all
            .iter()
            .enumerate()
            .filter_map(|(i, o)| o.factors.get(name).map(|v| (i, *v)))
            .collect();
        let (mut ok, mut hi, mut lo, mut none) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let (mut up, mut down) = (Vec::new(), Vec::new());
        // The region is drawn from 3 reference points on, and clipped near the
        // values: with 2 points it is wider than any plot is useful for.
        let (vmin, vmax) = vals.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
            (a.min(v.1), b.max(v.1))
        });
        let margin = (vmax - vmin)
            .max(1e-6 * vmax.abs().max(vmin.abs()))
            .max(f64::MIN_POSITIVE);
        let clip = |v: f64| v.clamp(vmin - margin, vmax + margin);
        for j in 0..vals.len() {
            let before: Vec<f64> = vals[..j].iter().map(|v| v.1).collect();
            let (i, v) = vals[j];
            let x = i as f64;
            match nonreg::interval(&before, 1, gamma) {
                Some((a, b)) if before.len() >= 3 => {
                    up.push((x, clip(b)));
                    down.push((x, clip(a)));
                    if v > b {
                        hi.push((x, v));
                    } else if v < a {
                        lo.push((x, v));
                    } else {
                        ok.push((x, v));
                    }
                }
                _ => none.push((x, v)),
            }
        }
        let dot = |label: &str, points: Vec<(f64, f64)>, color, size| Series {
            label: label.into(),
            points,
            color,
            line: false,
            size,
            alpha: 1.0,
        };
        let band = |points: Vec<(f64, f64)>| Series {
            label: String::new(),
            points,
            color: plotters::style::RGBColor(120, 120, 120),
            line: true,
            size: 1,
            alpha: 0.8,
        };
        charts.push(Chart {
            title: name.clone(),
            x_label: "summary (oldest → newest)".into(),
            y_label: String::new(),
            x_scale: Scale::Linear,
            y_scale: Scale::Linear,
            series: vec![
                band(up),
                band(down),
                dot("", none, plotters::style::RGBColor(170, 170, 170), 4),
                dot("", ok, plotters::style::RGBColor(30, 30, 30), 4),
                dot("", hi, PALETTE[3], 6),
                dot("", lo, PALETTE[0], 6),
            ],
            markers: vec![((all.len() - 1) as f64, "new".into())],
            hlines: vec![],
        });
    }
    anyhow::ensure!(!charts.is_empty(), "no factor to plot");
    calibrate::plot::draw_grid(path, &charts, 2, (700, 320))
}

fn synth_main(a: &SynthArgs) -> anyhow::Result<()> {
    let text = match a.what.as_str() {
        "network" => calibrate::synth::SyntheticNetwork::example().csv(a.count, a.reps, 7.0, a.seed),
        _ => {
            let set = calibrate::synth::example_dgemm_models();
            let mut rng = models::NoiseRng::new(a.seed, 0x64676d6d);
            let mut calls: Vec<(String, Vec<f64>)> =
                calibrate::synth::uniform_product_design(a.count, 2048.0, 2048f64.powi(3), &mut rng)
                    .into_iter()
                    .map(|t| ("dgemm".to_string(), t.to_vec()))
                    .collect();
            for anchor in [[1.0, 1.0, 1.0], [2048.0, 2048.0, 2048.0]] {
                calls.push(("dgemm".into(), anchor.to_vec()));
            }
            calibrate::synth::compute_csv(&set.compute, &calls, a.core, a.seed)
        }
    };
    fit::write_atomically(&[(a.out.clone(), text.into_bytes())])?;
    eprintln!("smpi-fit: wrote {}", a.out.display());
    Ok(())
}
