//! The validation report: `report.md` (verdicts, orderings, the setup, every
//! run, failed runs with their error output, the calibration programs'
//! checks) and its PNG plots (measured runs as points and boxes beside the
//! predictions, relative errors against the targets, the run order, the
//! ping-pong and kernel checks).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::anyhow;
use plotters::prelude::*;

use crate::plot::{Chart, Scale, Series, PALETTE};
use crate::validate::analysis::{ConfigResult, Outcome};
use crate::validate::calib::{kernel_totals, PingpongCheck, PINGPONG_TOLERANCE};
use crate::validate::Validation;

const FONT: &str = "sans-serif";

fn g3(v: f64) -> String {
    if !v.is_finite() {
        "–".into()
    } else if v.abs() >= 100.0 {
        format!("{v:.1}")
    } else if v.abs() >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

fn pct(v: f64) -> String {
    format!("{:+.2} %", 100.0 * v)
}

fn secs(v: f64) -> String {
    if v >= 1e-3 {
        format!("{v:.4} s")
    } else {
        format!("{:.3} µs", v * 1e6)
    }
}

fn yes_no(b: Option<bool>) -> &'static str {
    match b {
        Some(true) => "yes",
        Some(false) => "**no**",
        None => "–",
    }
}

/// Writes `report.md` and the plots into `dir`; returns the files written.
pub fn write(v: &Validation, dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir)?;
    let mut md = String::new();
    let mut files = Vec::new();
    let mut plot_errors = Vec::new();
    let mut plot = |name: &str, r: anyhow::Result<()>, files: &mut Vec<PathBuf>| match r {
        Ok(()) => files.push(dir.join(name)),
        Err(e) => plot_errors.push(format!("{name}: {e:#}")),
    };

    let _ = writeln!(
        md,
        "# Validation: real HPL against its simulation on {}\n",
        v.machine.host
    );
    let _ = writeln!(
        md,
        "{} from {} to {}; command `{}`.\n",
        v.tool, v.started, v.finished, v.command_line
    );

    // ---------------------------------------------------------------- verdict
    md.push_str("## HPL: measured against predicted\n\n");
    md.push_str(
        "Gflop/s with HPL's own formula ((N/1e9)·(N/t))·(2/3·N + 3/2), t the time of each run (recovered \
         from HPL's printed Gflop/s, four significant digits). Measured: the median of the successful runs with its \
         95 % distribution-free interval (exact binomial ranks); spread = min–max and the coefficient of variation \
         of the times; mean = total flop / total time. Predicted: the median of the simulation replicas (range in \
         brackets). Error = predicted / measured median − 1. Targets: 3 % at N ≥ 6000, 5 % at N = 4000.\n\n",
    );
    md.push_str("| configuration | runs (failed) | measured median [95 % CI] | spread: min–max (CoV of t) | mean | predicted [replicas] | error | in CI | target | met |\n|---|---|---|---|---|---|---|---|---|---|\n");
    for r in &v.results {
        let (med, spread, mean) = match &r.measured {
            Some(m) => (
                format!(
                    "{} [{}]",
                    g3(m.median_gflops),
                    m.ci.map_or("no CI".into(), |c| format!("{}, {}", g3(c[0]), g3(c[1])))
                ),
                format!(
                    "{}–{} ({:.2} %)",
                    g3(m.min_gflops),
                    g3(m.max_gflops),
                    100.0 * m.cov_time
                ),
                g3(m.mean_gflops),
            ),
            None => ("no successful run".into(), "–".into(), "–".into()),
        };
        let pred = r.predicted.as_ref().map_or("no prediction".into(), |p| {
            if p.replicas > 1 {
                format!("{} [{}–{}]", g3(p.gflops), g3(p.min_gflops), g3(p.max_gflops))
            } else {
                g3(p.gflops)
            }
        });
        let _ = writeln!(
            md,
            "| {} | {} ({}) | {} | {} | {} | {} | {} | {} | {} | {} |",
            r.config.label(),
            r.runs_attempted,
            r.runs_failed,
            med,
            spread,
            mean,
            pred,
            r.relative_error.map_or("–".into(), pct),
            yes_no(r.within_ci),
            r.tolerance.map_or("–".into(), |t| format!("±{:.0} %", 100.0 * t)),
            yes_no(r.meets_target)
        );
    }
    md.push('\n');
    for r in &v.results {
        if let Some(note) = r.measured.as_ref().and_then(|m| m.ci_note.as_ref()) {
            let _ = writeln!(md, "- {}: {note}.", r.config.label());
        }
    }
    let misses: Vec<&ConfigResult> = v
        .results
        .iter()
        .filter(|r| r.meets_target == Some(false))
        .collect();
    if misses.is_empty() {
        if v.results.iter().any(|r| r.meets_target.is_some()) {
            md.push_str("\nEvery configuration with a target meets it.\n");
        }
    } else {
        md.push_str("\n**Misses:** ");
        md.push_str(
            &misses
                .iter()
                .map(|r| {
                    format!(
                        "{} ({} against ±{:.0} %)",
                        r.config.label(),
                        r.relative_error.map_or("?".into(), pct),
                        100.0 * r.tolerance.unwrap_or(0.0)
                    )
                })
                .collect::<Vec<_>>()
                .join("; "),
        );
        md.push_str(". The kernel breakdown of the simulation and the calibration checks below say where the predicted time goes; the notes say why.\n");
    }
    md.push_str("\n![HPL Gflop/s](hpl-gflops.png)\n\n![relative error](hpl-error.png)\n\n");
    plot(
        "hpl-gflops.png",
        gflops_plot(v, &dir.join("hpl-gflops.png")),
        &mut files,
    );
    plot(
        "hpl-error.png",
        error_plot(v, &dir.join("hpl-error.png")),
        &mut files,
    );

    // ---------------------------------------------------------------- ordering
    md.push_str("## Orderings between grids at equal N\n\n");
    if v.orderings.is_empty() {
        md.push_str("No two configurations share N and NB (or one of them has no result).\n\n");
    } else {
        md.push_str("Significant: the two measured medians' 95 % intervals do not overlap (overlapping intervals do not show equality, only that these runs cannot tell).\n\n| N | NB | grids | measured median Gflop/s | measured faster | significant | predicted | predicted faster | agrees |\n|---|---|---|---|---|---|---|---|---|\n");
        for o in &v.orderings {
            let _ = writeln!(
                md,
                "| {} | {} | {} vs {} | {} vs {} | {} | {} | {} vs {} | {} | {} |",
                o.n,
                o.nb,
                o.a,
                o.b,
                g3(o.measured[0]),
                g3(o.measured[1]),
                o.measured_faster,
                yes_no(o.significant),
                g3(o.predicted[0]),
                g3(o.predicted[1]),
                o.predicted_faster,
                if o.agrees { "yes" } else { "**no**" }
            );
        }
        let bad = v.orderings.iter().filter(|o| !o.agrees).count();
        let _ = writeln!(
            md,
            "\n{} of {} orderings agree.\n",
            v.orderings.len() - bad,
            v.orderings.len()
        );
    }

    // ---------------------------------------------------------------- machine state
    machine_section(v, &mut md);
    extrapolation_section(v, &mut md);

    // ---------------------------------------------------------------- notes
    if !v.notes.is_empty() {
        md.push_str("## Notes\n\n");
        for n in &v.notes {
            md.push_str(n.trim_end());
            md.push_str("\n\n");
        }
    }

    // ---------------------------------------------------------------- phases
    if !v.phases.is_empty() {
        md.push_str("## HPL's phases, measured against predicted\n\n");
        md.push_str(
            "HPL built with `-DHPL_DETAILED_TIMING` prints, per phase, the largest over the processes of the phase's \
             aggregated wall time (two decimals): rfact = the recursive panel factorization (pfact its local part, \
             mxswp the pivot exchanges, waits included), update = the trailing update (laswp its row swaps), up tr sv \
             = the final triangular solve. Medians over the runs and the replicas; a miss is located here first.\n\n\
             | configuration | phase | measured (s) | predicted (s) | difference (s) |\n|---|---|---|---|---|\n",
        );
        for p in &v.phases {
            let _ = writeln!(
                md,
                "| {} | {} | {:.2} | {:.2} | {:+.2} |",
                v.configs[p.config].label(),
                p.phase,
                p.measured,
                p.predicted,
                p.predicted - p.measured
            );
        }
        md.push('\n');
    }

    // ---------------------------------------------------------------- where the time goes
    md.push_str("## Where the predicted time goes\n\n");
    md.push_str("Modelled kernel time of the first replica, summed over ranks, as a share of ranks × predicted HPL time (the rest is communication, waiting, and unmodelled code). From `smpirun --json`.\n\n");
    let mut names: Vec<String> = v
        .sim_runs
        .iter()
        .flat_map(|s| s.kernels.keys().cloned())
        .collect();
    names.sort();
    names.dedup();
    // Keep the kernels that matter somewhere.
    let share = |s: &crate::validate::analysis::SimRun, k: &str| -> Option<f64> {
        let c = v.configs[s.config];
        let t = s.outcome.seconds()?;
        s.kernels
            .get(k)
            .map(|(_, secs)| secs / (t * f64::from(c.ranks())))
    };
    let first: Vec<&crate::validate::analysis::SimRun> = (0..v.configs.len())
        .filter_map(|i| v.sim_runs.iter().find(|s| s.config == i))
        .collect();
    names.retain(|k| first.iter().any(|s| share(s, k).unwrap_or(0.0) >= 0.002));
    if first.is_empty() || names.is_empty() {
        md.push_str("No simulation result.\n\n");
    } else {
        let _ = writeln!(md, "| configuration | {} |", names.join(" | "));
        let _ = writeln!(md, "|---|{}", "---|".repeat(names.len()));
        for s in &first {
            let cells: Vec<String> = names
                .iter()
                .map(|k| share(s, k).map_or("–".into(), |x| format!("{:.1} %", 100.0 * x)))
                .collect();
            let _ = writeln!(md, "| {} | {} |", v.configs[s.config].label(), cells.join(" | "));
        }
        md.push('\n');
    }

    traced_section(v, &mut md);

    // ---------------------------------------------------------------- calibration programs
    md.push_str("## The calibration programs themselves\n\n");
    md.push_str("### Ping-pong: held-out check (the target)\n\n");
    match &v.pingpong_heldout {
        Some(p) => {
            heldout_section(&mut md, p);
            md.push_str("![held-out ping-pong error](pingpong-heldout.png)\n\n");
            plot(
                "pingpong-heldout.png",
                heldout_error_plot(p, &dir.join("pingpong-heldout.png")),
                &mut files,
            );
        }
        None => {
            let _ = writeln!(
                md,
                "Not run: {}.\n",
                v.pingpong_heldout_note.as_deref().unwrap_or(
                    "no held-out sizes in the network calibration (scripts/calibrate.sh --heldout-per-qd) \
                         and no --pingpong-check file",
                )
            );
        }
    }
    if let (Some(_), Some(n)) = (&v.pingpong_heldout, &v.pingpong_heldout_note) {
        let _ = writeln!(md, "Note: {n}\n");
    }
    md.push_str("### Ping-pong: in-sample (the calibration's own sizes)\n\n");
    match &v.pingpong {
        Some(p) => {
            let _ = writeln!(
                md,
                "The sizes the model was fitted to, so not a test of it: a view of how the fit follows them. \
                 `calib_net` built with smpicc, run under smpirun with the fitted model and platform and the measured \
                 run's design (same seed and options), against the measured file `{}`. Per size: the simulated median \
                 round trip against the measured median (and its 95 % interval). Per quarter decade of sizes: the \
                 median of the per-size errors (one size's median of 30-100 calls carries a sampling error of several \
                 percent here; pooling shows the model's own error).\n\n\
                 - sizes: {}; simulated median within 5 % of the measured median: **{}** ({:.1} %); inside the measured \
                 median's 95 % interval: {} of {} with an interval;\n\
                 - quarter-decade bins within 5 %: **{} of {}**, worst bin {}.\n",
                p.measured_file,
                p.rows.len(),
                p.sizes_within,
                100.0 * p.sizes_within as f64 / p.rows.len().max(1) as f64,
                p.sizes_within_ci,
                p.sizes_with_ci,
                p.bins_within,
                p.bins.len(),
                pct(p.worst_bin)
            );
            md.push_str("\n| sizes (B) | sizes | median error [95 % CI] | within 5 % |\n|---|---|---|---|\n");
            for b in &p.bins {
                let _ = writeln!(
                    md,
                    "| {}–{} | {} | {} {} | {} |",
                    b.from,
                    b.to,
                    b.sizes,
                    pct(b.relative_error),
                    b.ci.map_or(String::new(), |c| format!("[{}, {}]", pct(c[0]), pct(c[1]))),
                    if b.within { "yes" } else { "**no**" }
                );
            }
            md.push_str("\n![ping-pong](pingpong.png)\n\n![ping-pong error](pingpong-error.png)\n\n");
            plot(
                "pingpong.png",
                pingpong_plot(v, &dir.join("pingpong.png")),
                &mut files,
            );
            plot(
                "pingpong-error.png",
                pingpong_error_plot(v, &dir.join("pingpong-error.png")),
                &mut files,
            );
        }
        None => {
            let _ = writeln!(
                md,
                "Not run: {}.\n",
                v.pingpong_note
                    .as_deref()
                    .unwrap_or("no network calibration file given")
            );
        }
    }
    if let (Some(_), Some(n)) = (&v.pingpong, &v.pingpong_note) {
        let _ = writeln!(md, "Note: {n}\n");
    }
    md.push_str("### Kernels: every measured call against the model\n\n");
    if v.kernels.is_empty() {
        md.push_str("Not run: no compute calibration file given.\n\n");
    } else {
        md.push_str("The model's mean (its noise has mean 0) at each measured call's parameters, for the calling core's host; errors on totals (what a simulation adds up) and the median per-call error.\n\n| kernel | design | product in | calls | Σ measured | Σ predicted | error of Σ | median call error |\n|---|---|---|---|---|---|---|---|\n");
        for b in v.kernels.iter().filter(|b| b.kernel == "dgemm") {
            let _ = writeln!(
                md,
                "| {} | {} | [{:.0e}, {:.0e}) | {} | {} | {} | {} | {} |",
                b.kernel,
                b.design,
                b.from,
                b.to,
                b.calls,
                secs(b.measured_total),
                secs(b.predicted_total),
                pct(b.relative_error),
                pct(b.median_call_error)
            );
        }
        md.push_str("\n| kernel | design | calls | Σ measured | Σ predicted | error of Σ |\n|---|---|---|---|---|---|\n");
        for ((k, d), (n, m, p)) in kernel_totals(&v.kernels) {
            let _ = writeln!(
                md,
                "| {k} | {d} | {n} | {} | {} | {} |",
                secs(m),
                secs(p),
                pct(p / m - 1.0)
            );
        }
        md.push_str("\n![dgemm](dgemm-error.png)\n\n");
        plot(
            "dgemm-error.png",
            dgemm_plot(v, &dir.join("dgemm-error.png")),
            &mut files,
        );
    }

    // ---------------------------------------------------------------- setup
    md.push_str("## Setup\n\n");
    let m = &v.machine;
    let s = &v.software;
    let _ = writeln!(
        md,
        "| item | value |\n|---|---|\n| machine | {} ({} cores) |\n| CPU | {} |\n| kernel | {} |\n| OS | {} |\n| MPI | {} |\n| BLAS | {} |\n| BLAS kernel of the runs | {} |",
        m.host,
        m.cores,
        m.cpu,
        m.kernel,
        m.os,
        s.mpi,
        s.blas,
        if s.blas_kernels.is_empty() { "not reported".into() } else { s.blas_kernels.join(", ") }
    );
    for (k, val) in &s.openblas_env {
        let _ = writeln!(md, "| {k} | {val} |");
    }
    for (k, val) in &s.hpl_build {
        let _ = writeln!(md, "| real HPL build: {k} | `{val}` |");
    }
    let _ = writeln!(
        md,
        "| load average before / after the real runs | {} / {} |\n| real runs per configuration | {} (one seeded random order, seed {}) |\n| replicas | {} (`smpi/seed` {:?}) |\n| model | `{}` (sha256 `{}`) |\n| platform | `{}` (sha256 `{}`) |\n| real program | `{}` |\n| simulated program | `{}` |\n",
        v.load[0].map_or("?".into(), |l| format!("{:.2} {:.2} {:.2}", l[0], l[1], l[2])),
        v.load[1].map_or("?".into(), |l| format!("{:.2} {:.2} {:.2}", l[0], l[1], l[2])),
        v.runs_per_config,
        v.order_seed,
        v.replica_seeds.len(),
        v.replica_seeds,
        v.model.path,
        v.model.sha256,
        v.platform.path,
        v.platform.sha256,
        v.real_program.path,
        v.simulated_program.path
    );
    if !v.real_blocks.is_empty() {
        let _ = writeln!(
            md,
            "The real runs were measured in {} blocks of their order, each right after one part of the compute calibration (`scripts/validate-here.sh --interleave`), so that the calibration and the runs saw the same machine states:\n\n| block | positions | start (UTC) | end (UTC) | file |\n|---|---|---|---|---|",
            v.real_blocks.len()
        );
        for b in &v.real_blocks {
            let _ = writeln!(
                md,
                "| {}/{} | {}..{} | {} | {} | `{}` |",
                b.index, b.count, b.positions[0], b.positions[1], b.started, b.finished, b.file
            );
        }
        md.push('\n');
    }
    let _ = writeln!(
        md,
        "Real runs: `{}`\n\nSimulation: `{}`\n\nHPL.dat: `apps/hpl/gen_dat.sh` defaults (BCAST 1ringM, DEPTH 1, SWAP mix/64, PFACT Crout, RFACT right, NBMIN 4, NDIV 2); the real runs check the residual, the simulations skip it (`--threshold -1`: modelled BLAS computes nothing).\n",
        v.real_command, v.simulation_command
    );
    md.push_str("Simulation settings and why:\n\n");
    for l in &v.simulation_settings {
        let _ = writeln!(md, "- {l}");
    }
    md.push('\n');

    // ---------------------------------------------------------------- raw runs
    md.push_str("## Every real run, in the order run\n\n![run order](hpl-order.png)\n\n| # | configuration | rep | start (UTC) | load (1 min) | probe Gflop/s | BLAS core | wall (s) | HPL time (s) | Gflop/s | residual | status |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    plot(
        "hpl-order.png",
        order_plot(v, &dir.join("hpl-order.png")),
        &mut files,
    );
    for r in &v.real_runs {
        let c = v.configs[r.config];
        let (t, gf, res, st) = match &r.outcome {
            Outcome::Ok {
                seconds,
                gflops,
                passed,
                ..
            } => (
                format!("{seconds:.4}"),
                g3(*gflops),
                match passed {
                    Some(true) => "PASSED",
                    Some(false) => "**FAILED**",
                    None => "skipped",
                },
                "ok".to_string(),
            ),
            Outcome::Failed { reason, .. } => ("–".into(), "–".into(), "–", format!("**failed**: {reason}")),
        };
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {} | {} | {} | {:.2} | {} | {} | {} | {} |",
            r.position,
            c.label(),
            r.rep,
            r.start,
            r.load_before.map_or("?".into(), |l| format!("{:.2}", l[0])),
            if r.probe_gflops.is_empty() {
                "–".to_string()
            } else {
                r.probe_gflops
                    .iter()
                    .map(|g| g3(*g))
                    .collect::<Vec<_>>()
                    .join(" ")
            },
            r.blas_core.as_deref().unwrap_or("?"),
            r.wall,
            t,
            gf,
            res,
            st
        );
    }
    let failed: Vec<_> = v
        .real_runs
        .iter()
        .filter(|r| matches!(r.outcome, Outcome::Failed { .. }))
        .collect();
    if !failed.is_empty() {
        md.push_str("\n### Failed real runs\n\n");
        for r in failed {
            if let Outcome::Failed {
                reason,
                exit_code,
                stderr_tail,
                stdout_tail,
            } = &r.outcome
            {
                let _ = writeln!(
                    md,
                    "Run {} ({}, rep {}): {reason} (exit code {}).\n\nstderr (last lines):\n\n```text\n{}\n```\n\nstdout (last lines):\n\n```text\n{}\n```\n",
                    r.position,
                    v.configs[r.config].label(),
                    r.rep,
                    exit_code.map_or("none".into(), |c| c.to_string()),
                    stderr_tail,
                    stdout_tail
                );
            }
        }
    }
    md.push_str("\n## Simulation replicas\n\n| configuration | seed | predicted time (s) | Gflop/s | smpirun wall (s) | status |\n|---|---|---|---|---|---|\n");
    for s in &v.sim_runs {
        let (t, gf, st) = match &s.outcome {
            Outcome::Ok { seconds, gflops, .. } => (format!("{seconds:.4}"), g3(*gflops), "ok".to_string()),
            Outcome::Failed { reason, .. } => ("–".into(), "–".into(), format!("**failed**: {reason}")),
        };
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {:.2} | {} |",
            v.configs[s.config].label(),
            s.seed,
            t,
            gf,
            s.wall,
            st
        );
    }
    for s in &v.sim_runs {
        if let Outcome::Failed {
            reason, stderr_tail, ..
        } = &s.outcome
        {
            let _ = writeln!(
                md,
                "\nReplica {} seed {}: {reason}\n\n```text\n{stderr_tail}\n```",
                v.configs[s.config].label(),
                s.seed
            );
        }
    }
    if !plot_errors.is_empty() {
        md.push_str("\n## Plot errors\n\n");
        for e in &plot_errors {
            let _ = writeln!(md, "- {e}");
        }
    }
    let path = dir.join("report.md");
    std::fs::write(&path, md)?;
    files.push(path);
    Ok(files)
}

/// x position of configuration i in the categorical plots, and its label.
fn labels(v: &Validation) -> Vec<String> {
    v.configs
        .iter()
        .map(|c| format!("{} {}", c.grid(), c.n))
        .collect()
}

/// Measured runs (points), their box (quartiles, median, whiskers to min and
/// max) and the 95 % interval, the prediction (diamond) with the replicas'
/// range, per configuration.
fn gflops_plot(v: &Validation, path: &Path) -> anyhow::Result<()> {
    crate::plot::ensure_font()?;
    let k = v.configs.len();
    let mut lo = f64::INFINITY;
    let mut hi = f64::NEG_INFINITY;
    for r in &v.real_runs {
        if let Some(g) = r.outcome.gflops() {
            lo = lo.min(g);
            hi = hi.max(g);
        }
    }
    for s in &v.sim_runs {
        if let Some(g) = s.outcome.gflops() {
            lo = lo.min(g);
            hi = hi.max(g);
        }
    }
    if !lo.is_finite() {
        return Err(anyhow!("nothing to plot"));
    }
    let pad = 0.06 * (hi - lo).max(hi.abs() * 0.05);
    let (y0, y1) = ((lo - pad).max(0.0), hi + pad);
    let names = labels(v);
    let root = BitMapBackend::new(path, (1200, 720)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| anyhow!("{e:?}"))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            "HPL Gflop/s: measured runs (box: quartiles, whiskers: min–max) and prediction",
            (FONT, 22),
        )
        .margin(14)
        .x_label_area_size(60)
        .y_label_area_size(80)
        .build_cartesian_2d(-0.5f64..(k as f64 - 0.5), y0..y1)
        .map_err(|e| anyhow!("{e:?}"))?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(k.max(1) + 1)
        .x_label_formatter(&|x| {
            let i = x.round();
            if (x - i).abs() < 0.05 && i >= 0.0 && (i as usize) < names.len() {
                names[i as usize].clone()
            } else {
                String::new()
            }
        })
        .x_desc("grid and N (NB as configured)")
        .y_desc("Gflop/s")
        .label_style((FONT, 15))
        .axis_desc_style((FONT, 17))
        .light_line_style(RGBColor(235, 235, 235))
        .draw()
        .map_err(|e| anyhow!("{e:?}"))?;
    let blue = PALETTE[0];
    let red = PALETTE[3];
    for (i, r) in v.results.iter().enumerate() {
        let x = i as f64;
        // Runs: small dots spread sideways by their repetition (no random jitter: reproducible).
        let pts: Vec<(f64, f64)> = v
            .real_runs
            .iter()
            .filter(|run| run.config == i)
            .filter_map(|run| run.outcome.gflops().map(|g| (run.rep, g)))
            .map(|(rep, g)| (x - 0.28 + 0.04 * (rep % 6) as f64, g))
            .collect();
        chart
            .draw_series(pts.iter().map(|p| Circle::new(*p, 3, blue.mix(0.7).filled())))
            .map_err(|e| anyhow!("{e:?}"))?;
        if let Some(m) = &r.measured {
            let (q1, q3) = (m.quartiles[0], m.quartiles[1]);
            chart
                .draw_series(std::iter::once(Rectangle::new(
                    [(x - 0.08, q1), (x + 0.08, q3)],
                    blue.mix(0.25).filled(),
                )))
                .map_err(|e| anyhow!("{e:?}"))?;
            chart
                .draw_series(std::iter::once(Rectangle::new(
                    [(x - 0.08, q1), (x + 0.08, q3)],
                    blue.stroke_width(1),
                )))
                .map_err(|e| anyhow!("{e:?}"))?;
            for seg in [
                vec![(x - 0.08, m.median_gflops), (x + 0.08, m.median_gflops)],
                vec![(x, m.min_gflops), (x, q1)],
                vec![(x, q3), (x, m.max_gflops)],
                vec![(x - 0.04, m.min_gflops), (x + 0.04, m.min_gflops)],
                vec![(x - 0.04, m.max_gflops), (x + 0.04, m.max_gflops)],
            ] {
                chart
                    .draw_series(LineSeries::new(seg, blue.stroke_width(2)))
                    .map_err(|e| anyhow!("{e:?}"))?;
            }
            if let Some([l, h]) = m.ci {
                chart
                    .draw_series(LineSeries::new(
                        vec![(x + 0.12, l), (x + 0.12, h)],
                        BLACK.mix(0.7).stroke_width(3),
                    ))
                    .map_err(|e| anyhow!("{e:?}"))?;
            }
        }
        if let Some(p) = &r.predicted {
            let xp = x + 0.22;
            chart
                .draw_series(LineSeries::new(
                    vec![(xp, p.min_gflops), (xp, p.max_gflops)],
                    red.stroke_width(2),
                ))
                .map_err(|e| anyhow!("{e:?}"))?;
            chart
                .draw_series(std::iter::once(TriangleMarker::new(
                    (xp, p.gflops),
                    7,
                    red.filled(),
                )))
                .map_err(|e| anyhow!("{e:?}"))?;
        }
    }
    // Legend, drawn by hand (mixed element kinds).
    let legend = [
        ("measured runs, box, median", blue),
        ("95 % CI of the measured median (black bar)", RGBColor(60, 60, 60)),
        ("prediction (replicas' median and range)", red),
    ];
    for (j, (t, c)) in legend.iter().enumerate() {
        let y = 40 + 22 * j as i32;
        root.draw(&Rectangle::new([(100, y - 6), (116, y + 6)], c.filled()))
            .map_err(|e| anyhow!("{e:?}"))?;
        root.draw(&Text::new(t.to_string(), (124, y - 8), (FONT, 15)))
            .map_err(|e| anyhow!("{e:?}"))?;
    }
    root.present().map_err(|e| anyhow!("{e:?}"))
}

/// Relative error per configuration, with the measured interval as a band
/// around 0 and the targets.
fn error_plot(v: &Validation, path: &Path) -> anyhow::Result<()> {
    crate::plot::ensure_font()?;
    let k = v.configs.len();
    let mut lo: f64 = -5.5;
    let mut hi: f64 = 5.5;
    for r in &v.results {
        if let Some(e) = r.relative_error {
            lo = lo.min(100.0 * e - 1.0);
            hi = hi.max(100.0 * e + 1.0);
        }
        if let Some(Some([l, h])) = r.measured.as_ref().map(|m| {
            m.ci.map(|c| [c[0] / m.median_gflops - 1.0, c[1] / m.median_gflops - 1.0])
        }) {
            lo = lo.min(100.0 * l - 0.5);
            hi = hi.max(100.0 * h + 0.5);
        }
    }
    let names = labels(v);
    let root = BitMapBackend::new(path, (1200, 620)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| anyhow!("{e:?}"))?;
    let mut chart = ChartBuilder::on(&root)
        .caption("Prediction error: predicted / measured median − 1 (grey: the median's 95 % CI; lines: ±3 %, ±5 %)", (FONT, 20))
        .margin(14)
        .x_label_area_size(60)
        .y_label_area_size(80)
        .build_cartesian_2d(-0.5f64..(k as f64 - 0.5), lo..hi)
        .map_err(|e| anyhow!("{e:?}"))?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(k.max(1) + 1)
        .x_label_formatter(&|x| {
            let i = x.round();
            if (x - i).abs() < 0.05 && i >= 0.0 && (i as usize) < names.len() {
                names[i as usize].clone()
            } else {
                String::new()
            }
        })
        .y_desc("error (%)")
        .label_style((FONT, 15))
        .axis_desc_style((FONT, 17))
        .light_line_style(RGBColor(235, 235, 235))
        .draw()
        .map_err(|e| anyhow!("{e:?}"))?;
    for (y, c) in [
        (0.0, BLACK.mix(0.8)),
        (3.0, RGBColor(200, 120, 0).mix(0.8)),
        (-3.0, RGBColor(200, 120, 0).mix(0.8)),
        (5.0, PALETTE[3].mix(0.6)),
        (-5.0, PALETTE[3].mix(0.6)),
    ] {
        chart
            .draw_series(LineSeries::new(
                vec![(-0.5, y), (k as f64 - 0.5, y)],
                c.stroke_width(1),
            ))
            .map_err(|e| anyhow!("{e:?}"))?;
    }
    for (i, r) in v.results.iter().enumerate() {
        let x = i as f64;
        if let Some(m) = &r.measured {
            if let Some([l, h]) = m.ci {
                chart
                    .draw_series(std::iter::once(Rectangle::new(
                        [
                            (x - 0.15, 100.0 * (l / m.median_gflops - 1.0)),
                            (x + 0.15, 100.0 * (h / m.median_gflops - 1.0)),
                        ],
                        RGBColor(120, 120, 120).mix(0.3).filled(),
                    )))
                    .map_err(|e| anyhow!("{e:?}"))?;
            }
        }
        if let Some(e) = r.relative_error {
            let c = match r.meets_target {
                Some(false) => PALETTE[3],
                _ => PALETTE[0],
            };
            chart
                .draw_series(std::iter::once(Circle::new((x, 100.0 * e), 6, c.filled())))
                .map_err(|e| anyhow!("{e:?}"))?;
            // Replica range as relative error too.
            if let (Some(p), Some(m)) = (&r.predicted, &r.measured) {
                chart
                    .draw_series(LineSeries::new(
                        vec![
                            (x, 100.0 * (p.min_gflops / m.median_gflops - 1.0)),
                            (x, 100.0 * (p.max_gflops / m.median_gflops - 1.0)),
                        ],
                        c.stroke_width(2),
                    ))
                    .map_err(|e| anyhow!("{e:?}"))?;
            }
        }
    }
    root.present().map_err(|e| anyhow!("{e:?}"))
}

/// Each run's Gflop/s relative to its configuration's median, against its
/// position in the randomized order: drift over the session shows here.
/// Did the machine keep its speed between the calibration and the runs, and
/// along the runs? (A miss of a few percent means nothing if it did not.)
fn machine_section(v: &Validation, md: &mut String) {
    let m = &v.machine_state;
    if v.real_runs.is_empty() {
        return;
    }
    md.push_str(
        "## Did the machine keep its speed?

",
    );
    md.push_str(
        "A model fitted at one moment is checked against runs made minutes later; on a shared or virtual machine \
         the cores' speed drifts in between by as much as the targets. Two checks: the machine probe \
         (`calib_probe`: HPL's update dgemm, K = NB, on every core at once, a fraction of a second, then a gather \
         of random rows of a large matrix, memory-bound as HPL's row swaps are), taken during \
         the calibration and before every real run; and the trend of the runs' Gflop/s (relative to their \
         configuration's median) along the randomized order, in which only the machine can change.\n\n",
    );
    let row = |md: &mut String, what: &str, value: String| {
        let _ = writeln!(md, "| {what} | {value} |");
    };
    md.push_str("| check | value |\n|---|---|\n");
    match (&v.probe, m.runs_probe_gflops) {
        (Some(p), Some(r)) => {
            let [lo, hi] = m.runs_probe_range.unwrap_or([r, r]);
            row(
                md,
                "probe before the real runs (median, range)",
                format!("{} Gflop/s ({}–{}), `{p}`", g3(r), g3(lo), g3(hi)),
            );
        }
        (Some(p), None) => row(
            md,
            "probe before the real runs",
            format!("`{p}` gave no result (see the runs' probe.txt)"),
        ),
        (None, _) => row(
            md,
            "probe before the real runs",
            "not run (--no-probe, a custom launcher without --probe, or calib_probe not built)".into(),
        ),
    }
    match (&v.calibration_probe, m.calibration_probe_gflops) {
        (Some(c), Some(g)) => row(
            md,
            "probe during the calibration (median)",
            format!("{} Gflop/s ({} probe runs, `{}`)", g3(g), c.runs.len(), c.file),
        ),
        _ => row(
            md,
            "probe during the calibration",
            "none (no machine-probe.tsv in the first --calibration directory)".into(),
        ),
    }
    if let Some(s) = m.probe_shift {
        row(md, "change of speed, calibration → runs", pct(s));
    }
    if let (Some(c), Some(r), Some(s)) = (m.calibration_gather_ns, m.runs_gather_ns, m.gather_shift) {
        row(
            md,
            "row gather (memory-bound): during the calibration → before the runs",
            format!("{} → {} ns an element: {} speed", g3(c), g3(r), pct(s)),
        );
    }
    if let Some((rho, p)) = m.position_trend {
        row(
            md,
            "trend of the runs along their order (Spearman ρ, p)",
            format!("{rho:+.2}, {p:.2e}"),
        );
    }
    if let Some([a, b]) = m.first_last_fifth {
        row(
            md,
            "first / last fifth of the runs against their medians",
            format!("{} / {}", pct(a - 1.0), pct(b - 1.0)),
        );
    }
    if let Some((rho, p)) = m.probe_vs_run {
        row(
            md,
            "probe against the run that follows it (Spearman ρ, p)",
            format!("{rho:+.2}, {p:.2e}"),
        );
    }
    md.push('\n');
    if m.warnings.is_empty() {
        let _ = writeln!(
            md,
            "No change of speed above {} was seen.\n",
            pct(crate::validate::analysis::DRIFT_WARN)
        );
    } else {
        for w in &m.warnings {
            let _ = writeln!(md, "- **{w}**");
        }
        md.push('\n');
    }
    md.push_str("The run-order plot (below, \"Every real run\") shows both along the runs.\n\n");
}

/// Kernels the first replica of each configuration called outside the
/// model's calibrated ranges (smpirun's own check, `[about.calibrated]`).
/// Traced real runs against their simulation, kernel by kernel.
fn traced_section(v: &Validation, md: &mut String) {
    if v.traced.is_empty() && v.traced_notes.is_empty() {
        return;
    }
    md.push_str("## Traced runs against their simulation\n\n");
    md.push_str(
        "Real HPL runs with every BLAS call and every call of HPL's row-swap and copy functions timed \
         (`calibrate/trace/blas_trace.c`, `--traced-run`), each configuration simulated once (seed 1) from the \
         run's own HPL.dat without the residual check. Per kernel: the total up to the end of HPL's solve (the \
         traces' calls after the last dtrsv, the residual check's, left out), summed over the ranks, measured \
         (median of the runs, and their range) against the model's total in the simulation; the largest \
         differences first. Divided by the ranks, a kernel's difference is \
         its share of HPL's time error; what the kernels leave unexplained is communication, waiting and HPL's own \
         code, which the simulation does not time (`smpi/simulate-computation:no`).\n\n",
    );
    for n in &v.traced_notes {
        let _ = writeln!(md, "- **not used**: {n}");
    }
    if !v.traced_notes.is_empty() {
        md.push('\n');
    }
    for c in &v.traced {
        let measured = c.measured_median();
        let _ = write!(
            md,
            "### {}\n\n{} traced run(s): {} Gflop/s (median {:.2}); ",
            c.config.label(),
            c.runs.len(),
            c.measured_gflops
                .iter()
                .map(|g| format!("{g:.2}"))
                .collect::<Vec<_>>()
                .join(", "),
            measured
        );
        let ranks = f64::from(c.config.ranks());
        match (c.predicted_gflops, c.time_difference()) {
            (Some(p), Some(dt)) => {
                let kernels: f64 = c.kernels.iter().map(|k| k.difference()).sum::<f64>() / ranks;
                let _ = write!(
                    md,
                    "simulated {p:.2} Gflop/s ({}). HPL's time, predicted − measured median: {:+.3} s; of it, \
                     the kernels' differences per rank {:+.3} s, the rest (communication, waiting, HPL's own code) \
                     {:+.3} s.",
                    pct(p / measured - 1.0),
                    dt,
                    kernels,
                    dt - kernels
                );
                match (
                    c.measured_mpi_seconds,
                    c.simulated_mpi_seconds,
                    c.measured_own_code_seconds,
                ) {
                    (Some(m), Some(s), Some(own)) => {
                        let _ = writeln!(
                            md,
                            " Per rank, from the traced MPI calls: MPI {:.3} s measured, {:.3} s simulated \
                             ({:+.3} s); HPL's own code {:.3} s measured, not simulated.\n",
                            m / ranks,
                            s / ranks,
                            (s - m) / ranks,
                            own / ranks
                        );
                    }
                    _ => md.push_str(" (The runs did not trace their MPI calls.)\n\n"),
                }
            }
            _ => {
                let _ = writeln!(
                    md,
                    "no simulation: {}\n",
                    c.note.as_deref().unwrap_or("unknown reason")
                );
            }
        }
        md.push_str(
            "| kernel | calls measured (median) / simulated | measured total (s) [range] | simulated total (s) | difference (s) | error |\n\
             |---|---|---|---|---|---|\n",
        );
        for k in &c.kernels {
            let err = if k.measured_seconds > 0.0 {
                pct(k.simulated_seconds / k.measured_seconds - 1.0)
            } else {
                "–".into()
            };
            let _ = writeln!(
                md,
                "| {} | {} / {} | {:.4} [{:.4}–{:.4}] | {:.4} | {:+.4} | {} |",
                k.kernel,
                k.measured_calls,
                k.simulated_calls,
                k.measured_seconds,
                k.measured_range[0],
                k.measured_range[1],
                k.simulated_seconds,
                k.difference(),
                err
            );
        }
        md.push('\n');
    }
}

fn extrapolation_section(v: &Validation, md: &mut String) {
    let rows: Vec<(usize, &crate::validate::analysis::SimRun)> = v
        .configs
        .iter()
        .enumerate()
        .filter_map(|(i, _)| v.sim_runs.iter().find(|s| s.config == i).map(|s| (i, s)))
        .collect();
    if rows.is_empty() {
        return;
    }
    md.push_str("## Where the model extrapolates\n\n");
    if rows.iter().all(|(_, s)| s.extrapolated.is_empty()) {
        md.push_str("Every modelled call of the simulations fell inside the ranges the models were calibrated on (or the model file gives none).\n\n");
        return;
    }
    md.push_str(
        "Calls of the first replica outside the ranges the kernel's model was calibrated on (`smpirun` checks every \
         modelled call against the model file's `[about.calibrated]`): there the prediction rests on the model's form, \
         not on measurements. The share is the modelled time of the calls outside in the kernel's: a few tiny calls \
         outside (a 1-column swap, a 1-row triangle) weigh nothing.\n\n\
         | configuration | kernel | calls outside | of | share of its time | outside |\n|---|---|---|---|---|---|\n",
    );
    for (i, s) in rows {
        for (k, e) in &s.extrapolated {
            let _ = writeln!(
                md,
                "| {} | {k} | {} | {} | {} | {} |",
                v.configs[i].label(),
                e.calls,
                e.of_calls,
                e.share_of_time
                    .map_or("–".to_string(), crate::validate::analysis::percent2),
                e.outside
            );
        }
    }
    md.push('\n');
}

fn order_plot(v: &Validation, path: &Path) -> anyhow::Result<()> {
    let mut series = Vec::new();
    let grids: Vec<String> = {
        let mut g: Vec<String> = v.configs.iter().map(|c| c.grid()).collect();
        g.sort();
        g.dedup();
        g
    };
    for (j, grid) in grids.iter().enumerate() {
        let pts: Vec<(f64, f64)> = v
            .real_runs
            .iter()
            .filter(|r| v.configs[r.config].grid() == *grid)
            .filter_map(|r| {
                let m = v.results[r.config].measured.as_ref()?;
                Some((
                    r.position as f64,
                    100.0 * (r.outcome.gflops()? / m.median_gflops - 1.0),
                ))
            })
            .collect();
        series.push(Series {
            label: format!("grid {grid}"),
            points: pts,
            color: PALETTE[j % PALETTE.len()],
            line: false,
            size: 4,
            alpha: 0.8,
        });
    }
    let load: Vec<(f64, f64)> = v
        .real_runs
        .iter()
        .filter_map(|r| r.load_before.map(|l| (r.position as f64, l[0])))
        .collect();
    let chart1 = Chart {
        title: "Run order: Gflop/s relative to the configuration's median".into(),
        x_label: "position in the randomized order".into(),
        y_label: "Gflop/s / median − 1 (%)".into(),
        x_scale: Scale::Linear,
        y_scale: Scale::Linear,
        series,
        markers: Vec::new(),
        hlines: vec![0.0],
    };
    let chart2 = Chart {
        title: "Load average (1 min) before each run".into(),
        x_label: "position in the randomized order".into(),
        y_label: "load".into(),
        x_scale: Scale::Linear,
        y_scale: Scale::Linear,
        series: vec![Series {
            label: String::new(),
            points: load,
            color: PALETTE[4],
            line: true,
            size: 2,
            alpha: 1.0,
        }],
        markers: Vec::new(),
        hlines: Vec::new(),
    };
    let probe: Vec<(f64, f64)> = v
        .real_runs
        .iter()
        .filter(|r| !r.probe_gflops.is_empty())
        .map(|r| {
            (
                r.position as f64,
                r.probe_gflops.iter().sum::<f64>() / r.probe_gflops.len() as f64,
            )
        })
        .collect();
    if probe.is_empty() {
        return crate::plot::draw_grid(path, &[chart1, chart2], 1, (1100, 420));
    }
    let chart3 = Chart {
        title: "Machine probe before each run (line: during the calibration)".into(),
        x_label: "position in the randomized order".into(),
        y_label: "dgemm Gflop/s per core".into(),
        x_scale: Scale::Linear,
        y_scale: Scale::Linear,
        series: vec![Series {
            label: String::new(),
            points: probe,
            color: PALETTE[2],
            line: true,
            size: 2,
            alpha: 1.0,
        }],
        markers: Vec::new(),
        hlines: v.machine_state.calibration_probe_gflops.into_iter().collect(),
    };
    crate::plot::draw_grid(path, &[chart1, chart2, chart3], 1, (1100, 420))
}

/// The held-out ping-pong check: verdict and one row per size.
fn heldout_section(md: &mut String, p: &PingpongCheck) {
    let n = p.rows.len();
    let met = p.sizes_within == n && n > 0;
    let _ = writeln!(
        md,
        "A measurement the fit never saw: `calib_net --per-quarter-decade Q` with its own seed, every kind \
         interleaved as in the calibration, its pingpong rows compared (`{}`), few sizes with many round trips each, so that each size's median is known to about the target's \
         precision; `calib_net` built with smpicc, run under smpirun with the fitted model and the same arguments \
         (`{}`). Error = simulated / measured median − 1; a miss is **significant** when the measured median's \
         95 % interval lies entirely outside the medians the prediction would be within 5 % of \
         ([simulated/1.05, simulated/0.95]): then the model misses, not the sampling.\n\n\
         - **Ping-pong predicted within 5 % at {} of {} sizes: target {}**; significant misses: {}; worst size {}; \
         at least {} measured round trips per size{}.\n",
        p.measured_file,
        p.simulated_file,
        p.sizes_within,
        n,
        if met { "met" } else { "**not met**" },
        p.significant_misses,
        pct(p.worst_size),
        p.min_calls,
        p.widest_ci.map_or(String::new(), |w| format!(
            ", the widest 95 % interval of a measured median ±{:.1} %",
            100.0 * w
        )),
    );
    md.push_str(
        "\n| size (B) | calls | measured median [95 % CI] | simulated | error | within 5 % | significant miss |\n\
         |---|---|---|---|---|---|---|\n",
    );
    for r in &p.rows {
        let _ = writeln!(
            md,
            "| {} | {} | {} {} | {} | {} | {} | {} |",
            r.size,
            r.measured_calls,
            secs(r.measured_median),
            r.measured_ci
                .map_or("(no CI)".into(), |c| format!("[{}, {}]", secs(c[0]), secs(c[1]))),
            secs(r.simulated_median),
            pct(r.relative_error),
            if r.within { "yes" } else { "**no**" },
            match r.significant_miss {
                Some(true) => "**yes**",
                Some(false) => "no",
                None => "–",
            }
        );
    }
    md.push('\n');
}

fn pingpong_plot(v: &Validation, path: &Path) -> anyhow::Result<()> {
    let p = v.pingpong.as_ref().ok_or_else(|| anyhow!("no ping-pong check"))?;
    crate::plot::draw(
        path,
        &Chart {
            title: "Ping-pong round trip: measured and simulated medians per size".into(),
            x_label: "message size (B)".into(),
            y_label: "round trip (s)".into(),
            x_scale: Scale::Log,
            y_scale: Scale::Log,
            series: vec![
                Series {
                    label: "measured median".into(),
                    points: p
                        .rows
                        .iter()
                        .map(|r| (r.size as f64, r.measured_median))
                        .collect(),
                    color: PALETTE[0],
                    line: false,
                    size: 3,
                    alpha: 0.6,
                },
                Series {
                    label: "simulated median (smpirun)".into(),
                    points: p
                        .rows
                        .iter()
                        .map(|r| (r.size as f64, r.simulated_median))
                        .collect(),
                    color: PALETTE[3],
                    line: false,
                    size: 2,
                    alpha: 0.9,
                },
            ],
            markers: Vec::new(),
            hlines: Vec::new(),
        },
    )
}

/// A ping-pong error chart over message sizes, with the ±5 % target lines.
fn error_chart(title: &str, series: Vec<Series>) -> Chart {
    let tol = 100.0 * PINGPONG_TOLERANCE;
    Chart {
        title: title.into(),
        x_label: "message size (B)".into(),
        y_label: "error (%)".into(),
        x_scale: Scale::Log,
        y_scale: Scale::Linear,
        series,
        markers: Vec::new(),
        hlines: vec![-tol, 0.0, tol],
    }
}

/// Each size's simulated/measured median − 1, in percent.
fn per_size_errors(p: &PingpongCheck, size: u32, alpha: f64) -> Series {
    Series {
        label: "per size".into(),
        points: p
            .rows
            .iter()
            .map(|r| (r.size as f64, 100.0 * r.relative_error))
            .collect(),
        color: PALETTE[0],
        line: false,
        size,
        alpha,
    }
}

fn pingpong_error_plot(v: &Validation, path: &Path) -> anyhow::Result<()> {
    let p = v.pingpong.as_ref().ok_or_else(|| anyhow!("no ping-pong check"))?;
    crate::plot::draw(
        path,
        &error_chart(
            "Ping-pong: simulated / measured median − 1",
            vec![
                per_size_errors(p, 2, 0.5),
                Series {
                    label: "per quarter decade (median)".into(),
                    points: p
                        .bins
                        .iter()
                        .map(|b| (((b.from as f64) * (b.to as f64)).sqrt(), 100.0 * b.relative_error))
                        .collect(),
                    color: PALETTE[3],
                    line: true,
                    size: 3,
                    alpha: 1.0,
                },
            ],
        ),
    )
}

/// The held-out check per size: the error of the simulated median, and where
/// the measured median's 95 % interval puts it (a size whose interval band
/// crosses the ±5 % lines is not a significant miss).
fn heldout_error_plot(p: &PingpongCheck, path: &Path) -> anyhow::Result<()> {
    let bound = |pick: fn(&[f64; 2]) -> f64| -> Vec<(f64, f64)> {
        p.rows
            .iter()
            .filter_map(|r| {
                r.measured_ci
                    .map(|c| (r.size as f64, 100.0 * (r.simulated_median / pick(&c) - 1.0)))
            })
            .collect()
    };
    let ci_series = |label: &str, points| Series {
        label: label.into(),
        points,
        color: PALETTE[1],
        line: false,
        size: 2,
        alpha: 0.8,
    };
    crate::plot::draw(
        path,
        &error_chart(
            "Held-out ping-pong: simulated / measured median − 1",
            vec![
                per_size_errors(p, 4, 1.0),
                ci_series("against the 95 % interval's high end", bound(|c| c[1])),
                ci_series("against its low end", bound(|c| c[0])),
            ],
        ),
    )
}

fn dgemm_plot(v: &Validation, path: &Path) -> anyhow::Result<()> {
    let mut designs: Vec<String> = v
        .kernels
        .iter()
        .filter(|b| b.kernel == "dgemm")
        .map(|b| b.design.clone())
        .collect();
    designs.sort();
    designs.dedup();
    let series = designs
        .iter()
        .enumerate()
        .map(|(j, d)| Series {
            label: format!("dgemm, {d}"),
            points: v
                .kernels
                .iter()
                .filter(|b| b.kernel == "dgemm" && b.design == *d)
                .map(|b| ((b.from * b.to).sqrt(), 100.0 * b.relative_error))
                .collect(),
            color: PALETTE[j % PALETTE.len()],
            line: true,
            size: 3,
            alpha: 1.0,
        })
        .collect();
    crate::plot::draw(
        path,
        &Chart {
            title: "dgemm: Σ predicted / Σ measured − 1 per decade of M·N·K, per design".into(),
            x_label: "M·N·K".into(),
            y_label: "error (%)".into(),
            x_scale: Scale::Log,
            y_scale: Scale::Linear,
            series,
            markers: Vec::new(),
            hlines: vec![-3.0, 0.0, 3.0],
        },
    )
}
