//! The fit report (`smpi-fit --report DIR`): `report.md` with the
//! coefficients and their 95 % intervals, R², the chosen models and their
//! cross-validation scores, breakpoints with their intervals, mixtures, the
//! in-sample check of the written model, and the calibrated ranges with
//! extrapolation warnings; PNG plots beside it.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::compute::KernelFit;
use crate::fit::FitResult;
use crate::input::NetKind;
use crate::mixture::MixtureFit;
use crate::network::{KindFit, NetworkFit};
use crate::plot::{Chart, Scale, Series, PALETTE};
use crate::segmented::SegmentedFit;
use crate::stats;

fn g(v: f64) -> String {
    if v == 0.0 {
        "0".into()
    } else if (1e-3..1e5).contains(&v.abs()) {
        format!("{:.4}", v)
            .trim_end_matches('0')
            .trim_end_matches('.')
            .to_string()
    } else {
        format!("{v:.4e}")
    }
}

fn ci(est: f64, se: f64, dof: usize) -> String {
    let t = if dof > 0 {
        stats::t_quantile(0.975, dof as f64)
    } else {
        f64::NAN
    };
    format!("{} [{}, {}]", g(est), g(est - t * se), g(est + t * se))
}

fn mixture_text(m: &MixtureFit) -> String {
    (0..m.k())
        .map(|j| format!("{:.3} × N({}, {}²)", m.weights[j], g(m.means[j]), g(m.sigmas[j])))
        .collect::<Vec<_>>()
        .join(" + ")
}

/// Thins `points` to at most `max` (every k-th), for readable scatter plots.
fn thin(points: Vec<(f64, f64)>, max: usize) -> Vec<(f64, f64)> {
    let step = (points.len() / max.max(1)).max(1);
    points.into_iter().step_by(step).collect()
}

/// Writes `report.md` and the plots into `dir`. Returns the files written.
pub fn write_report(r: &FitResult, dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir)?;
    let mut md = String::new();
    let mut written = Vec::new();
    let mut plots: Vec<(PathBuf, Chart)> = Vec::new();
    let m = &r.model.about;
    let _ = writeln!(md, "# Calibration fit report: {}\n", m.calibrated_host);
    let _ = writeln!(
        md,
        "Fitted by {} on {} (on {}), command `{}`; fold/mixture seed {}, {}-fold cross-validation.\n",
        m.tool, m.date, m.fit_host, m.command, m.fit_seed, m.cv_folds
    );
    md.push_str("## Inputs\n\n| file | kind | host | seed | date | cpu | MPI | BLAS (kernel) | operand layout | timer resolution / overhead | sha256 |\n|---|---|---|---|---|---|---|---|---|---|---|\n");
    for f in &r.files {
        // calib_compute --lda: HPL's layout (blocks of a matrix with that leading
        // dimension); a BLAS trace has the traced program's own layout.
        let layout = match (f.meta("kind"), f.meta("mode"), f.meta("lda").trim()) {
            ("compute", "trace", _) => "traced program's".to_string(),
            ("compute", _, "" | "0") => "tight".to_string(),
            ("compute", _, l) => format!("lda {l}"),
            _ => "–".to_string(),
        };
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {} | {} | {} | {} ({}) | {} | {} s / {} s | `{}` |",
            f.name(),
            f.meta("kind"),
            f.meta("host"),
            f.meta("seed"),
            f.meta("date"),
            f.meta("cpu"),
            f.meta("mpi"),
            f.meta("blas"),
            f.meta("blas_kernel"),
            layout,
            f.meta("timer_resolution_s"),
            f.meta("timer_overhead_s"),
            &f.sha256[..f.sha256.len().min(16)]
        );
    }
    let mut warnings: Vec<String> = Vec::new();
    if let Some(n) = &r.network {
        warnings.extend(n.warnings.iter().cloned());
    }
    warnings.extend(crate::fit::screening_warnings(&r.kernels));
    warnings.extend(crate::fit::layout_warnings(&r.files));
    warnings.extend(extrapolation_warnings(r));
    md.push_str("\n## Warnings\n\n");
    if warnings.is_empty() {
        md.push_str("None.\n");
    }
    for w in &warnings {
        let _ = writeln!(md, "- ⚠ {w}");
    }
    if let Some(n) = &r.network {
        network_section(&mut md, &mut plots, n, r, dir);
    }
    for k in &r.kernels {
        kernel_section(&mut md, &mut plots, k, dir);
    }
    md.push_str("\n## Predictions outside the calibrated range\n\n");
    md.push_str(&extrapolation_table(r));
    // Plots last: a missing font should not lose the text.
    let mut plot_errors = Vec::new();
    for (path, chart) in &plots {
        match crate::plot::draw(path, chart) {
            Ok(()) => written.push(path.clone()),
            Err(e) => plot_errors.push(format!("{}: {e:#}", path.display())),
        }
    }
    if !plot_errors.is_empty() {
        md.push_str("\n## Plot errors\n\n");
        for e in plot_errors {
            let _ = writeln!(md, "- {e}");
        }
    }
    let path = dir.join("report.md");
    std::fs::write(&path, md)?;
    written.push(path);
    Ok(written)
}

fn segmented_table(md: &mut String, f: &SegmentedFit) {
    md.push_str("| segment | sizes (B) | calls | intercept (s) [95 % CI] | slope (s/B) [95 % CI] | R² | dispersion | noise mixture of the calls (s) |\n|---|---|---|---|---|---|---|---|\n");
    for (i, s) in f.segments.iter().enumerate() {
        let dof = s.sizes.saturating_sub(2);
        let _ = writeln!(
            md,
            "| {i} | {}–{} | {} | {} | {} | {:.4} | {:.2} | {} |",
            s.min_size,
            s.max_size,
            s.calls,
            ci(s.intercept, s.se_intercept, dof),
            ci(s.slope, s.se_slope, dof),
            s.r2,
            s.dispersion,
            mixture_text(&s.noise)
        );
    }
    if !f.breakpoints.is_empty() {
        md.push_str("\n| breakpoint | estimate (B) | between calibrated sizes | ≈95 % interval (profile likelihood) |\n|---|---|---|---|\n");
        for (i, b) in f.breakpoints.iter().enumerate() {
            let _ = writeln!(
                md,
                "| {} | {:.0} | {} and {} | [{}, {}] |",
                i + 1,
                b.estimate,
                b.last_below,
                b.first_above,
                b.ci_low,
                b.ci_high
            );
        }
    }
    let _ = writeln!(
        md,
        "\nVariance of the per-size aggregates: {}, times a scale per segment. BIC by number of segments: {}.\n",
        match f.variance {
            crate::segmented::VarianceSource::Replicates => "from the repetitions of each size (smoothed over neighbouring sizes)",
            crate::segmented::VarianceSource::Relative => "proportional to the squared duration (too few repeated sizes)",
        },
        f.bic
            .iter()
            .enumerate()
            .map(|(i, v)| format!("{}: {:.1}", i + 1, v))
            .collect::<Vec<_>>()
            .join(", ")
    );
}

fn network_section(
    md: &mut String,
    plots: &mut Vec<(PathBuf, Chart)>,
    n: &NetworkFit,
    r: &FitResult,
    dir: &Path,
) {
    let t = &n.translation;
    md.push_str("\n## Network\n\n");
    let _ = writeln!(
        md,
        "Lines fitted to per-size **{}s** by weighted least squares (weights nᵢ/σ̂ᵢ²). One clock read (half a `wtime` row) c = {} s. \
         Eager/detached threshold **{} B**. Nominal link: latency {} s, bandwidth {} B/s. Calibrated sizes {}–{} B.\n",
        match n.center {
            crate::segmented::Center::Mean => "mean",
            crate::segmented::Center::Median => "median",
        },
        g(n.clock_read),
        t.detached_thresh,
        g(t.latency),
        g(t.bandwidth),
        n.size_range.0,
        n.size_range.1
    );
    for kind in NetKind::ALL {
        match n.kinds.get(&kind) {
            Some(KindFit::Segmented(f)) => {
                let _ = writeln!(md, "### `{}`\n", kind.name());
                segmented_table(md, f);
                let file = format!("network-{}.png", kind.name());
                let _ = writeln!(md, "![{0}]({file})\n", kind.name());
                plots.push((dir.join(&file), network_chart(kind, f)));
                let file = format!("network-{}-residuals.png", kind.name());
                let _ = writeln!(md, "![{0} residuals]({file})\n", kind.name());
                plots.push((dir.join(&file), residual_chart(kind, f)));
            }
            Some(KindFit::Constant(c)) => {
                let _ = writeln!(
                    md,
                    "### `{}`\n\n{} calls: mean {} s [{}, {}], median {} (95 % CI {}), value used {} s; noise {}.\n",
                    kind.name(),
                    c.n,
                    g(c.mean.estimate),
                    g(c.mean.low),
                    g(c.mean.high),
                    c.median.map_or("-".into(), |m| g(m.estimate)),
                    c.median.map_or("not available (n ≤ 5)".into(), |m| format!("[{}, {}]", g(m.low), g(m.high))),
                    g(c.center),
                    mixture_text(&c.noise)
                );
            }
            None => {}
        }
    }
    md.push_str("### Translation into SMPI's model\n\n");
    let _ = writeln!(
        md,
        "`smpi/wtime` = {} s, `smpi/test` = {} s, `smpi/iprobe` = {} s, `smpi/send-is-detached-thresh` = \
         `smpi/async-small-thresh` = {} B. The one-way time (pingpong − c)/2 is split into os + transfer + or below \
         the threshold and is all transfer above it; transfer = lat_factor·L + (S+16)/(bw_factor·B).\n",
        g(t.wtime),
        g(t.test),
        g(t.iprobe),
        t.detached_thresh
    );
    let _ = writeln!(
        md,
        "{}\n",
        match &n.probe {
            Some(p) => format!(
                "`smpi/probe-sees` = `{}`: an `MPI_Iprobe` for a message that arrived after the rank's previous MPI call \
                 (`iprobe_arrived` rows) found it in {} of {} calls ({})",
                p.setting,
                p.found,
                p.calls,
                if p.setting == "progressed" {
                    "the MPI matches only what earlier calls progressed, as Open MPI's ob1 does: smpirun makes a probe skip \
                     messages that arrived since the rank's last progressing call"
                } else {
                    "the MPI sees every message already sent, SimGrid's semantics"
                }
            ),
            None => "`smpi/probe-sees` not measured (no `iprobe_arrived` rows): smpirun's default, SimGrid's `sent`, applies"
                .into(),
        }
    );
    md.push_str("| payload from (B) | to | detached | one-way (s) = a + b·S | transfer (s) = a + b·S | lat_factor | bw_factor | adjusted |\n|---|---|---|---|---|---|---|---|\n");
    for p in &t.pieces {
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} + {}·S | {} + {}·S | {} | {} | {} |",
            p.from,
            p.to.map_or("∞".into(), |v| v.to_string()),
            if p.detached { "yes" } else { "no" },
            g(p.one_way.0),
            g(p.one_way.1),
            g(p.transfer.0),
            g(p.transfer.1),
            g(p.lat_factor),
            g(p.bw_factor),
            p.adjusted.as_deref().unwrap_or("")
        );
    }
    md.push_str("\n### Check: the written model against the measurements\n\n");
    md.push_str(
        "What `smpirun -platform P -model M` predicts for each calibrated size (the model as the `models` crate reads it, \
         the nominal link, SMPI's semantics), against the per-size median and mean.\n\n\
         | kind | sizes | within 5 % of the median | max \\|error\\| vs median | max \\|error\\| vs mean | worst size (B) |\n|---|---|---|---|---|---|\n",
    );
    let mut series = Vec::new();
    for (ci, kind) in NetKind::ALL.iter().enumerate() {
        let rows: Vec<_> = r
            .network_checks
            .iter()
            .filter(|c| c.what == kind.name())
            .collect();
        if rows.is_empty() {
            continue;
        }
        let within = rows.iter().filter(|c| c.error_median().abs() <= 0.05).count();
        let worst = rows
            .iter()
            .max_by(|a, b| a.error_median().abs().total_cmp(&b.error_median().abs()))
            .expect("non-empty");
        let max_mean = rows.iter().map(|c| c.error_mean().abs()).fold(0.0, f64::max);
        let _ = writeln!(
            md,
            "| {} | {} | {} ({:.1} %) | {:.2} % | {:.2} % | {} |",
            kind.name(),
            rows.len(),
            within,
            100.0 * within as f64 / rows.len() as f64,
            100.0 * worst.error_median().abs(),
            100.0 * max_mean,
            worst.x
        );
        series.push(Series {
            label: kind.name().into(),
            points: rows.iter().map(|c| (c.x, 100.0 * c.error_median())).collect(),
            color: PALETTE[ci % PALETTE.len()],
            line: false,
            size: 3,
            alpha: 0.8,
        });
    }
    md.push_str("\n![check](network-check.png)\n");
    plots.push((
        dir.join("network-check.png"),
        Chart {
            title: "Written model vs per-size median (relative error)".into(),
            x_label: "message size (B)".into(),
            y_label: "predicted / median − 1 (%)".into(),
            x_scale: Scale::Log,
            y_scale: Scale::Linear,
            series,
            markers: vec![(
                t.detached_thresh.max(1) as f64,
                format!("detached < {} B", t.detached_thresh),
            )],
            hlines: vec![-5.0, 0.0, 5.0],
        },
    ));
}

/// Writes the report into `dir` (see [`write_report`]).
pub fn write(r: &FitResult, dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    write_report(r, dir)
}

fn network_chart(kind: NetKind, f: &SegmentedFit) -> Chart {
    let mut series = vec![Series {
        label: "per-size median".into(),
        points: f.aggregates.iter().map(|a| (a.size, a.median)).collect(),
        color: PALETTE[0],
        line: false,
        size: 3,
        alpha: 0.55,
    }];
    series.push(Series {
        label: "per-size mean".into(),
        points: f.aggregates.iter().map(|a| (a.size, a.mean)).collect(),
        color: PALETTE[1],
        line: false,
        size: 2,
        alpha: 0.55,
    });
    for (i, s) in f.segments.iter().enumerate() {
        let n = 40;
        let pts: Vec<(f64, f64)> = (0..=n)
            .map(|j| {
                let x = s.min_size * (s.max_size / s.min_size).powf(j as f64 / n as f64);
                (x, s.at(x))
            })
            .collect();
        series.push(Series {
            label: if i == 0 {
                "fitted segments".into()
            } else {
                String::new()
            },
            points: pts,
            color: PALETTE[3],
            line: true,
            size: 3,
            alpha: 1.0,
        });
    }
    Chart {
        title: format!(
            "{}: duration vs size (log-log), {} segment(s)",
            kind.name(),
            f.segments.len()
        ),
        x_label: "message size (B)".into(),
        y_label: "duration (s)".into(),
        x_scale: Scale::Log,
        y_scale: Scale::Log,
        series,
        markers: f
            .breakpoints
            .iter()
            .map(|b| (b.estimate, format!(" {:.0} B", b.estimate)))
            .collect(),
        hlines: vec![],
    }
}

fn residual_chart(kind: NetKind, f: &SegmentedFit) -> Chart {
    let pts: Vec<(f64, f64)> = f
        .aggregates
        .iter()
        .map(|a| (a.size, 100.0 * (a.center / f.at(a.size) - 1.0)))
        .collect();
    Chart {
        title: format!("{}: per-size residual relative to the fitted line", kind.name()),
        x_label: "message size (B)".into(),
        y_label: "aggregate / fit − 1 (%)".into(),
        x_scale: Scale::Log,
        y_scale: Scale::Linear,
        series: vec![Series {
            label: String::new(),
            points: pts,
            color: PALETTE[0],
            line: false,
            size: 3,
            alpha: 0.7,
        }],
        markers: f
            .breakpoints
            .iter()
            .map(|b| (b.estimate, String::new()))
            .collect(),
        hlines: vec![0.0],
    }
}

fn kernel_section(md: &mut String, plots: &mut Vec<(PathBuf, Chart)>, k: &KernelFit, dir: &Path) {
    let label = k.label();
    let name = &label;
    let stem = label.replace(['@', '='], "-");
    let vars = &k.spec.variables;
    let _ = writeln!(md, "\n## Kernel `{name}`\n");
    if let Some((a, b)) = k.k_range {
        let _ = writeln!(
            md,
            "The calls with K in [{a}, {}), fitted apart: one range of a model piecewise on K (the files include a \
             fixed-K design, HPL's NB).\n",
            b.map_or("∞".into(), |b| b.to_string())
        );
    }
    let perf = if k.spec.name == "dgemm" {
        format!("{:.2} Gflop/s (2·ΣMNK/Σt)", 2.0 * k.performance / 1e9)
    } else {
        format!(
            "{} {}/s (Σ product/Σt)",
            g(k.performance),
            k.spec.product.name(vars)
        )
    };
    let _ = writeln!(
        md,
        "{} calls on host(s) {:?}; mean duration {} s; performance {perf}.\n",
        k.calls,
        k.hosts,
        g(k.mean_duration)
    );
    if k.design_set_aside > 0 {
        let _ = writeln!(
            md,
            "Fitted on the calls traced in the program alone (`smpi-fit --from-trace`), by ordinary least \
             squares; the calibration designs' {} calls are set aside.\n",
            k.design_set_aside
        );
    }
    let _ = writeln!(
        md,
        "| mean model | CV MSE (s²) ± SE | held-out {} |\n|---|---|---|",
        if k.ordinary {
            "error of the total time"
        } else {
            "relative error"
        }
    );
    for s in &k.mean_scores {
        let mark = if s.name == k.mean.model.label() {
            " **chosen**"
        } else {
            ""
        };
        let _ = writeln!(
            md,
            "| {}{mark} | {} ± {} | {:.3} % |",
            s.name,
            g(s.score),
            g(s.se),
            100.0 * s.rel_error
        );
    }
    if k.noise_free {
        md.push_str("\nThe data are noise-free (in-sample relative RMS residual below 1e-9): the simplest exact model is kept, with N-0, fitted by relative least squares.\n");
    }
    let _ = writeln!(
        md,
        "\nChosen: **{} + {}** ({}; R² = {:.6}).\n\n| term | coefficient [95 % CI] | written |\n|---|---|---|",
        k.mean.model.label(),
        k.noise.model.label(),
        k.mean.weighting,
        k.mean.fit.r2
    );
    for (i, t) in k.mean.terms.iter().enumerate() {
        if k.mean.fit.aliased[i] {
            let _ = writeln!(
                md,
                "| {} | aliased (a combination of the terms before it) | - |",
                t.name(vars)
            );
        } else {
            let _ = writeln!(
                md,
                "| {} | {} | {} |",
                t.name(vars),
                ci(k.mean.fit.coef[i], k.mean.fit.se[i], k.mean.fit.dof),
                crate::modelfile::fmt_f64(k.mean.written[i])
            );
        }
    }
    if !k.noise_scores.is_empty() {
        md.push_str("\n| noise model | CV negative log-likelihood per call ± SE |\n|---|---|\n");
        for s in &k.noise_scores {
            let mark = if s.name == k.noise.model.label() {
                " **chosen**"
            } else {
                ""
            };
            if s.score.is_finite() {
                let _ = writeln!(md, "| {}{mark} | {:.4} ± {:.4} |", s.name, s.score, s.se);
            } else {
                let _ = writeln!(md, "| {} **chosen** | – |", s.name);
            }
        }
        let relative = k.noise_scores.iter().any(|s| s.name.starts_with("relative"));
        let _ = writeln!(
            md,
            "\nσ(x) = {} ({}).",
            k.noise
                .sigma
                .iter()
                .map(|(t, c)| format!("{}·{}", g(*c), t.name(vars)))
                .collect::<Vec<_>>()
                .join(" + "),
            if relative {
                "relative N-2: cv times the mean's terms, a negative intercept left out"
            } else {
                "N-2: √(π/2) × least squares of |residual| on the terms"
            }
        );
    }
    if k.mean.model != crate::compute::MeanModel::Polynomial && k.full.terms.len() > 2 {
        let _ = writeln!(
            md,
            "\nFull polynomial (M-2, for comparison and the summary): {}.",
            k.full
                .terms
                .iter()
                .enumerate()
                .filter(|(i, _)| !k.full.fit.aliased[*i])
                .map(|(i, t)| format!(
                    "{} {}",
                    t.name(vars),
                    ci(k.full.fit.coef[i], k.full.fit.se[i], k.full.fit.dof)
                ))
                .collect::<Vec<_>>()
                .join("; ")
        );
    }
    match &k.hosts_test {
        Some(h) => {
            let _ = writeln!(
                md,
                "\nPer-core test: F = {:.3}, p = {:.3e}; largest change of the total predicted time with a core's own model: {:.2} %. {}",
                h.f,
                h.p_value,
                100.0 * h.effect,
                if h.per_host && k.k_range.is_some() {
                    "The cores differ, but per-core models are not written for a piecewise kernel."
                } else if h.per_host {
                    "**Per-core models written** ([[compute.<k>.host]])."
                } else {
                    "One model for all cores (not significant, or below 1 % of the total)."
                }
            );
        }
        None => {
            md.push_str("\nPer-core test: not run (one core, too few calls per core, or noise-free data).\n")
        }
    }
    let _ = writeln!(
        md,
        "\nCalibrated range: {}.\n",
        k.range
            .iter()
            .map(|(q, (a, b))| format!("{q} ∈ [{}, {}]", g(*a), g(*b)))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let prod = &k.spec.product;
    let pname = prod.name(vars);
    let raw: Vec<(f64, f64)> = k.data.iter().map(|(x, d, _)| (prod.eval(x), *d)).collect();
    let fitted: Vec<(f64, f64)> = k
        .data
        .iter()
        .map(|(x, _, _)| (prod.eval(x), k.mean.predict(x)))
        .collect();
    let file = format!("compute-{stem}.png");
    let _ = writeln!(md, "![{name}]({file})\n");
    plots.push((
        dir.join(&file),
        Chart {
            title: format!(
                "{name}: measured and fitted ({}) vs {pname}",
                k.mean.model.label()
            ),
            x_label: pname.clone(),
            y_label: "duration (s)".into(),
            x_scale: Scale::Log,
            y_scale: Scale::Log,
            series: vec![
                Series {
                    label: "measured calls".into(),
                    points: thin(raw, 6000),
                    color: PALETTE[0],
                    line: false,
                    size: 2,
                    alpha: 0.35,
                },
                Series {
                    label: "model (per call)".into(),
                    points: thin(fitted, 6000),
                    color: PALETTE[3],
                    line: false,
                    size: 1,
                    alpha: 0.8,
                },
            ],
            markers: vec![],
            hlines: vec![],
        },
    ));
    // Standardised by the noise model's σ(x) when there is one: a noise model
    // that fits leaves a band of constant width (±2 holds 95 % for normal noise).
    let standardised = k.noise.model != crate::compute::NoiseModel::None;
    let resid: Vec<(f64, f64)> = k
        .data
        .iter()
        .map(|(x, d, _)| {
            let r = d - k.mean.predict(x);
            let s = k.noise.sigma_at(x);
            (prod.eval(x), if standardised && s > 0.0 { r / s } else { r })
        })
        .collect();
    let file = format!("compute-{stem}-residuals.png");
    let _ = writeln!(md, "![{name} residuals]({file})\n");
    plots.push((
        dir.join(&file),
        Chart {
            title: if standardised {
                format!(
                    "{name}: residuals / σ(x) of the {} noise model vs {pname}",
                    k.noise.model.label()
                )
            } else {
                format!("{name}: residuals (measured − model) vs {pname}")
            },
            x_label: pname,
            y_label: if standardised {
                "(measured − model) / σ(x)".into()
            } else {
                "residual (s)".into()
            },
            x_scale: Scale::Log,
            y_scale: Scale::Linear,
            series: vec![Series {
                label: String::new(),
                points: thin(resid, 6000),
                color: PALETTE[0],
                line: false,
                size: 2,
                alpha: 0.4,
            }],
            markers: vec![],
            hlines: if standardised {
                vec![-2.0, 0.0, 2.0]
            } else {
                vec![0.0]
            },
        },
    ));
}

/// Which quantities extrapolate, in words.
fn extrapolation_warnings(r: &FitResult) -> Vec<String> {
    let mut w = Vec::new();
    if let Some(n) = &r.network {
        w.push(format!(
            "network: messages below {} B or above {} B are extrapolated (first/last segment)",
            n.size_range.0, n.size_range.1
        ));
    }
    for k in &r.kernels {
        w.push(format!(
            "{}: calls outside {} are extrapolated",
            k.label(),
            k.range
                .iter()
                .map(|(q, (a, b))| format!("{q} ∈ [{}, {}]", g(*a), g(*b)))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    w
}

fn extrapolation_table(r: &FitResult) -> String {
    let mut md = String::new();
    if let (Some(n), Ok(set)) = (
        &r.network,
        models::ModelSet::from_toml_str(&r.model_text, "model"),
    ) {
        if let Some(net) = &set.network {
            md.push_str("| ping-pong size (B) | predicted round trip (s) | |\n|---|---|---|\n");
            for e in 0..=9 {
                let s = 10f64.powi(e);
                let p = crate::network::predict(net, &n.translation, NetKind::Pingpong, s);
                let flag = if s < n.size_range.0 || s > n.size_range.1 {
                    "⚠ extrapolated"
                } else {
                    ""
                };
                let _ = writeln!(md, "| {s:e} | {} | {flag} |", g(p));
            }
        }
    }
    for k in &r.kernels {
        if k.spec.name == "dgemm" && k.k_range.is_none_or(|r| r.1.is_none()) {
            md.push_str("\n| dgemm M×N×K | predicted (s) | |\n|---|---|---|\n");
            for x in [
                [128.0, 128.0, 128.0],
                [2048.0, 2048.0, 2048.0],
                [8192.0, 8192.0, 128.0],
                [16384.0, 16384.0, 256.0],
            ] {
                let out = k.range.iter().any(|(q, (a, b))| {
                    let v = match q.as_str() {
                        "M" => x[0],
                        "N" => x[1],
                        "K" => x[2],
                        _ => x[0] * x[1] * x[2],
                    };
                    v < *a || v > *b
                });
                let _ = writeln!(
                    md,
                    "| {}×{}×{} | {} | {} |",
                    x[0],
                    x[1],
                    x[2],
                    g(k.mean.predict(&x)),
                    if out { "⚠ extrapolated" } else { "" }
                );
            }
        }
    }
    md
}
