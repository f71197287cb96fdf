//! Plots (PNG and SVG, with `plotters`) and the Markdown and terminal summaries.
//!
//! For each metric and each axis with more than one value, one plot: the
//! axis values along x (evenly spaced, in the study's order), the metric on
//! y; every successful replica as a dot, the median of each point as a line
//! with markers, the range of the replicas as a shaded band. When other axes
//! vary too, each combination of their values is its own series (colour,
//! legend). Adjacent values whose ranges overlap are marked `≈` on the plot
//! and flagged in the tables: the replicas do not resolve that difference.
//!
//! Text uses DejaVu Sans, embedded (the `dejavu` crate), so plots have text on
//! machines without fonts.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Once;

use anyhow::{anyhow, Context, Result};
use plotters::coord::ranged1d::{SegmentedCoord, ValueFormatter};
use plotters::coord::types::RangedCoordi32;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::{register_font, FontStyle};

use crate::results::{AxisMeta, Row, Status, StudyMeta};
use crate::stats::{by_point, comparisons, spread, Comparison, PointRows, Spread};

/// A metric's name for people, with its unit.
pub fn metric_label(meta: &StudyMeta, metric: &str) -> String {
    let name = match metric {
        "gflops" => "HPL performance",
        "hpl_time" => "HPL time",
        "simulated_time" => "simulated time",
        "wall_time" => "wall time",
        "peak_pss_mb" => "peak memory (PSS)",
        "residual" => "HPL scaled residual",
        other => meta.labels.get(other).map(String::as_str).unwrap_or(other),
    };
    match meta.units.get(metric) {
        Some(u) if !u.is_empty() => format!("{name} ({u})"),
        _ => name.to_string(),
    }
}

fn axis_label(a: &AxisMeta) -> String {
    match &a.unit {
        Some(u) if !u.is_empty() => format!("{} ({u})", a.name),
        _ => a.name.clone(),
    }
}

/// Metadata for rows without a `study.json`: axes in order of appearance (numeric order when every value is a number).
pub fn meta_from_rows(rows: &[Row]) -> StudyMeta {
    let mut axes: Vec<AxisMeta> = Vec::new();
    for r in rows {
        for (name, v) in &r.axes {
            let a = match axes.iter_mut().find(|a| &a.name == name) {
                Some(a) => a,
                None => {
                    axes.push(AxisMeta {
                        name: name.clone(),
                        unit: None,
                        values: Vec::new(),
                    });
                    axes.last_mut().expect("just pushed")
                }
            };
            if !a.values.contains(v) {
                a.values.push(v.clone());
            }
        }
    }
    for a in &mut axes {
        if a.values.iter().all(|v| v.parse::<f64>().is_ok()) {
            a.values.sort_by(|x, y| {
                x.parse::<f64>()
                    .unwrap_or(0.0)
                    .total_cmp(&y.parse::<f64>().unwrap_or(0.0))
            });
        }
    }
    let hpl = rows.iter().any(|r| r.metrics.contains_key("gflops"));
    StudyMeta {
        name: rows.first().map(|r| r.study.clone()).unwrap_or_default(),
        description: String::new(),
        source: String::new(),
        base_dir: String::new(),
        axes,
        metric: if hpl {
            "gflops".into()
        } else {
            "simulated_time".into()
        },
        also: Vec::new(),
        log_y: false,
        units: [
            ("gflops", "Gflop/s"),
            ("hpl_time", "s"),
            ("simulated_time", "s"),
            ("wall_time", "s"),
            ("peak_pss_mb", "MiB"),
        ]
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect(),
        labels: BTreeMap::new(),
        replicas: 0,
        perturb: Vec::new(),
        latency_jitter: 0.0,
        runs: rows.len(),
    }
}

/// Points sorted by the axes' value order.
fn sorted_points<'a>(rows: &'a [Row], meta: &StudyMeta) -> Vec<PointRows<'a>> {
    let mut points = by_point(rows);
    let key = |p: &PointRows| -> Vec<usize> {
        meta.axes
            .iter()
            .map(|a| {
                p.axes
                    .get(&a.name)
                    .and_then(|v| a.values.iter().position(|x| x == v))
                    .unwrap_or(usize::MAX)
            })
            .collect()
    };
    points.sort_by_key(key);
    points
}

fn axes_order(meta: &StudyMeta) -> Vec<(String, Vec<String>)> {
    meta.axes
        .iter()
        .map(|a| (a.name.clone(), a.values.clone()))
        .collect()
}

/// An axis tick: at most four significant digits, no trailing zeros (`800`, `0.001`, `1e-4`).
fn tick(v: f64) -> String {
    fn trim(s: &str) -> &str {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.')
        } else {
            s
        }
    }
    if v == 0.0 || !v.is_finite() {
        return "0".into();
    }
    let a = v.abs();
    if (1e-3..1e5).contains(&a) {
        let digits = (3 - a.log10().floor() as i32).clamp(0, 9) as usize;
        trim(&format!("{v:.digits$}")).to_string()
    } else {
        let s = format!("{v:.3e}");
        let (m, e) = s.split_once('e').expect("exponent format");
        format!("{}e{e}", trim(m))
    }
}

/// Three significant digits at least, more for small ranges.
fn num(v: f64) -> String {
    if v == 0.0 {
        return "0".into();
    }
    let a = v.abs();
    if (1e-3..1e6).contains(&a) {
        let digits = (4 - a.log10().floor() as i32 - 1).clamp(0, 9) as usize;
        format!("{v:.digits$}")
    } else {
        format!("{v:.4e}")
    }
}

fn perturbation_text(meta: &StudyMeta) -> String {
    if meta.perturb.is_empty() {
        return "nothing (deterministic runs)".into();
    }
    meta.perturb
        .iter()
        .map(|p| match p.as_str() {
            "latency" => format!(
                "every link latency × (1 + δ), δ uniform in ±{:e} (one δ per replica, the same at every point)",
                meta.latency_jitter
            ),
            "seed" => "smpi/seed (one seed per replica, the same at every point)".to_string(),
            other => other.to_string(),
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// The per-point table and the flagged comparisons, as aligned text (end of `run`, `status`).
pub fn text_summary(rows: &[Row], meta: &StudyMeta, metric: &str) -> String {
    let points = sorted_points(rows, meta);
    let mut header: Vec<String> = meta.axes.iter().map(|a| a.name.clone()).collect();
    header.extend(["n", "median", "min", "max", "range %", "failed"].map(String::from));
    let mut table = vec![header];
    for p in &points {
        let mut line: Vec<String> = meta
            .axes
            .iter()
            .map(|a| p.axes.get(&a.name).cloned().unwrap_or_default())
            .collect();
        match spread(&p.values(metric)) {
            Some(s) => line.extend([
                s.n.to_string(),
                num(s.median),
                num(s.min),
                num(s.max),
                format!("{:.2}", s.relative_range()),
            ]),
            None => line.extend(["0", "-", "-", "-", "-"].map(String::from)),
        }
        line.push(p.failed().to_string());
        table.push(line);
    }
    let widths: Vec<usize> = (0..table[0].len())
        .map(|c| table.iter().map(|l| l[c].chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = format!(
        "\n{}: {} per point (spread = min..max of the replicas)\n",
        meta.name,
        metric_label(meta, metric)
    );
    for l in &table {
        let cells: Vec<String> = l.iter().zip(&widths).map(|(c, w)| format!("{c:>w$}")).collect();
        out.push_str(&cells.join("  "));
        out.push('\n');
    }
    let comps = comparisons(&points, &axes_order(meta), metric);
    let unresolved: Vec<&Comparison> = comps.iter().filter(|c| c.unresolved()).collect();
    if !comps.is_empty() {
        let _ = writeln!(
            out,
            "{} of {} comparisons between adjacent values are not resolved by the replicas (spreads overlap){}",
            unresolved.len(),
            comps.len(),
            if unresolved.is_empty() { "." } else { ":" }
        );
        for c in unresolved {
            let _ = writeln!(out, "  {}", comparison_text(c));
        }
    }
    let failed: Vec<&Row> = rows.iter().filter(|r| r.status == Status::Failed).collect();
    if !failed.is_empty() {
        let _ = writeln!(out, "{} runs failed:", failed.len());
        for r in failed.iter().take(20) {
            let _ = writeln!(
                out,
                "  {} ({}): {}",
                r.run_id,
                r.run_dir,
                r.error.as_deref().unwrap_or("?")
            );
        }
    }
    out
}

fn comparison_text(c: &Comparison) -> String {
    let fixed = if c.fixed.is_empty() {
        String::new()
    } else {
        format!(
            " [{}]",
            c.fixed
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    let why = if c.a.n < 2 || c.b.n < 2 {
        "a single replica: no spread to compare".to_string()
    } else {
        format!(
            "{}..{} vs {}..{}",
            num(c.a.min),
            num(c.a.max),
            num(c.b.min),
            num(c.b.max)
        )
    };
    format!(
        "{} {} -> {}{}: median {:+.2} % ({why})",
        c.axis,
        c.from,
        c.to,
        fixed,
        c.change()
    )
}

/// The Markdown summary.
pub fn markdown(
    rows: &[Row],
    meta: &StudyMeta,
    metrics: &[String],
    plots: &[(String, String, PathBuf)],
) -> String {
    let points = sorted_points(rows, meta);
    let mut o = String::new();
    let _ = writeln!(o, "# Study `{}`\n", meta.name);
    if !meta.description.is_empty() {
        let _ = writeln!(o, "{}\n", meta.description.trim());
    }
    let ok = rows.iter().filter(|r| r.status == Status::Ok).count();
    let _ = writeln!(
        o,
        "{} runs ({} ok, {} failed) of {} points. Replicas perturb: {}. \
         The spread of a point is the range (min–max) of its successful replicas; a comparison whose \
         spreads overlap is flagged ⚠: the replicas do not resolve it.\n",
        rows.len(),
        ok,
        rows.len() - ok,
        points.len(),
        perturbation_text(meta)
    );
    if let Some(r) = rows.first() {
        let _ = writeln!(
            o,
            "Simulator: `{}`; smpi-study {}.\n",
            r.simulator, r.study_version
        );
    }
    for metric in metrics {
        let _ = writeln!(o, "## {}\n", metric_label(meta, metric));
        let mut head: Vec<String> = meta.axes.iter().map(axis_label).collect();
        head.extend(["n", "median", "min", "max", "range %", "failed"].map(String::from));
        let _ = writeln!(o, "| {} |", head.join(" | "));
        let _ = writeln!(o, "|{}", head.iter().map(|_| "---|").collect::<String>());
        for p in &points {
            let mut cells: Vec<String> = meta
                .axes
                .iter()
                .map(|a| p.axes.get(&a.name).cloned().unwrap_or_default())
                .collect();
            match spread(&p.values(metric)) {
                Some(s) => cells.extend([
                    s.n.to_string(),
                    num(s.median),
                    num(s.min),
                    num(s.max),
                    format!("{:.2}", s.relative_range()),
                ]),
                None => cells.extend(["0", "–", "–", "–", "–"].map(String::from)),
            }
            cells.push(p.failed().to_string());
            let _ = writeln!(o, "| {} |", cells.join(" | "));
        }
        let comps = comparisons(&points, &axes_order(meta), metric);
        if !comps.is_empty() {
            let _ = writeln!(
                o,
                "\nComparisons between adjacent values of each axis (other axes fixed):\n"
            );
            let _ = writeln!(o, "| axis | from → to | other axes | median change | spreads |");
            let _ = writeln!(o, "|---|---|---|---|---|");
            for c in &comps {
                let fixed = c
                    .fixed
                    .iter()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect::<Vec<_>>()
                    .join(", ");
                let verdict = if c.a.n < 2 || c.b.n < 2 {
                    "⚠ one replica: no spread".to_string()
                } else if c.a.overlaps(&c.b) {
                    "⚠ overlap: not resolved".to_string()
                } else {
                    "distinct".to_string()
                };
                let _ = writeln!(
                    o,
                    "| {} | {} → {} | {} | {:+.2} % | {verdict} |",
                    c.axis,
                    c.from,
                    c.to,
                    if fixed.is_empty() { "–".into() } else { fixed },
                    c.change()
                );
            }
        }
        for (m, axis, png) in plots {
            if m == metric {
                let name = png
                    .file_name()
                    .map(|f| f.to_string_lossy().into_owned())
                    .unwrap_or_default();
                let _ = writeln!(o, "\n![{} vs {axis}]({name})", metric_label(meta, metric));
            }
        }
        o.push('\n');
    }
    let failed: Vec<&Row> = rows.iter().filter(|r| r.status == Status::Failed).collect();
    if !failed.is_empty() {
        let _ = writeln!(o, "## Failed runs\n");
        let _ = writeln!(o, "| run | point | error |\n|---|---|---|");
        for r in failed {
            let point = r
                .axes
                .iter()
                .map(|(a, v)| format!("{a}={v}"))
                .collect::<Vec<_>>()
                .join(", ");
            let _ = writeln!(
                o,
                "| `{}` | {} | {} |",
                r.run_id,
                point,
                r.error.as_deref().unwrap_or("?").replace('|', "\\|")
            );
        }
        o.push('\n');
    }
    if let Some(r) = rows.iter().find(|r| r.status == Status::Ok) {
        let _ = writeln!(o, "## Reproduce\n");
        if !meta.source.is_empty() {
            let _ = writeln!(
                o,
                "`smpi-study run {}`; one run by hand (from its directory):\n",
                meta.source
            );
        }
        let _ = writeln!(o, "```sh\ncd {}\n{}\n```", r.run_dir, r.command_line);
    }
    o
}

fn file_stem(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect::<String>()
        .split('_')
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join("_")
}

/// Writes the plots and `summary.md` into `out`; returns the files written.
pub fn write_report(rows: &[Row], meta: &StudyMeta, metrics: &[String], out: &Path) -> Result<Vec<PathBuf>> {
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    let mut metrics: Vec<String> = metrics.to_vec();
    if metrics.is_empty() {
        metrics.push(meta.metric.clone());
        metrics.extend(meta.also.iter().cloned());
    }
    let mut written = Vec::new();
    let mut plots = Vec::new();
    for metric in &metrics {
        if !rows.iter().any(|r| r.metric(metric).is_some()) {
            let known: std::collections::BTreeSet<String> =
                rows.iter().flat_map(|r| r.metrics.keys().cloned()).collect();
            return Err(anyhow!(
                "no row has metric {metric:?} (known: simulated_time, wall_time, peak_pss_mb{})",
                known.iter().map(|k| format!(", {k}")).collect::<String>()
            ));
        }
        for axis in meta.axes.iter().filter(|a| a.values.len() > 1) {
            let stem = format!("{}_vs_{}", file_stem(metric), file_stem(&axis.name));
            let png = out.join(format!("{stem}.png"));
            let svg = out.join(format!("{stem}.svg"));
            let plot = Plot::new(rows, meta, metric, axis);
            plot.draw(BitMapBackend::new(&png, (1000, 620)).into_drawing_area())
                .with_context(|| format!("cannot draw {}", png.display()))?;
            plot.draw(SVGBackend::new(&svg, (1000, 620)).into_drawing_area())
                .with_context(|| format!("cannot draw {}", svg.display()))?;
            plots.push((metric.clone(), axis.name.clone(), png.clone()));
            written.push(png);
            written.push(svg);
        }
    }
    let md = out.join("summary.md");
    std::fs::write(&md, markdown(rows, meta, &metrics, &plots))?;
    written.push(md);
    Ok(written)
}

fn ensure_font() {
    static FONT: Once = Once::new();
    FONT.call_once(|| {
        // The embedded font is valid TrueType; a failure would only lose text.
        let _ = register_font("sans-serif", FontStyle::Normal, dejavu::sans::regular());
        let _ = register_font("sans-serif", FontStyle::Bold, dejavu::sans::bold());
    });
}

/// One series of a plot: the points of one combination of the other axes.
struct Series {
    name: String,
    /// Per x position: the replicas' values and their spread.
    at: Vec<Option<(Vec<f64>, Spread)>>,
}

struct Plot<'a> {
    meta: &'a StudyMeta,
    metric: &'a str,
    axis: &'a AxisMeta,
    series: Vec<Series>,
}

const COLORS: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(255, 127, 14),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(23, 190, 207),
];

impl<'a> Plot<'a> {
    fn new(rows: &'a [Row], meta: &'a StudyMeta, metric: &'a str, axis: &'a AxisMeta) -> Plot<'a> {
        let points = sorted_points(rows, meta);
        let mut by_rest: BTreeMap<Vec<(String, String)>, Vec<&PointRows>> = BTreeMap::new();
        let mut order: Vec<Vec<(String, String)>> = Vec::new();
        for p in &points {
            let rest: Vec<(String, String)> = meta
                .axes
                .iter()
                .filter(|a| a.name != axis.name)
                .filter_map(|a| p.axes.get(&a.name).map(|v| (a.name.clone(), v.clone())))
                .collect();
            if !by_rest.contains_key(&rest) {
                order.push(rest.clone());
            }
            by_rest.entry(rest).or_default().push(p);
        }
        let series = order
            .into_iter()
            .map(|rest| {
                let pts = &by_rest[&rest];
                let at = axis
                    .values
                    .iter()
                    .map(|v| {
                        let p = pts.iter().find(|p| p.axes.get(&axis.name) == Some(v))?;
                        let vals = p.values(metric);
                        let s = spread(&vals)?;
                        Some((vals, s))
                    })
                    .collect();
                let name = if rest.is_empty() {
                    "median".to_string()
                } else {
                    rest.iter()
                        .map(|(k, v)| format!("{k}={v}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                };
                Series { name, at }
            })
            .collect();
        Plot {
            meta,
            metric,
            axis,
            series,
        }
    }

    /// The corner of the plot with the fewest values in it (the legend goes there).
    fn legend_corner(&self) -> SeriesLabelPosition {
        let k = self.axis.values.len() as f64;
        let t = |v: f64| {
            if self.log() {
                v.max(f64::MIN_POSITIVE).log10()
            } else {
                v
            }
        };
        let ys: Vec<(f64, f64)> = self
            .series
            .iter()
            .flat_map(|s| {
                s.at.iter()
                    .enumerate()
                    .filter_map(|(i, a)| a.as_ref().map(|(v, sp)| (i, v, sp)))
                    .flat_map(move |(i, v, sp)| {
                        v.iter()
                            .chain([sp.min, sp.max, sp.median].iter())
                            .map(move |y| (i as f64, *y))
                            .collect::<Vec<_>>()
                    })
            })
            .map(|(x, y)| (x, t(y)))
            .collect();
        let (lo, hi) = ys
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &(_, y)| {
                (a.min(y), b.max(y))
            });
        let span = (hi - lo).max(f64::MIN_POSITIVE);
        let count = |left: bool, top: bool| {
            ys.iter()
                .filter(|(x, y)| {
                    let fx = (x + 0.5) / k;
                    let fy = (y - lo) / span;
                    (if left { fx < 0.45 } else { fx > 0.55 }) && (if top { fy > 0.6 } else { fy < 0.4 })
                })
                .count()
        };
        [
            (count(false, true), SeriesLabelPosition::UpperRight),
            (count(true, true), SeriesLabelPosition::UpperLeft),
            (count(false, false), SeriesLabelPosition::LowerRight),
            (count(true, false), SeriesLabelPosition::LowerLeft),
        ]
        .into_iter()
        .min_by_key(|(n, _)| *n)
        .map(|(_, p)| p)
        .unwrap_or(SeriesLabelPosition::UpperRight)
    }

    fn log(&self) -> bool {
        self.meta.log_y && self.metric == self.meta.metric
    }

    fn draw<DB: DrawingBackend>(&self, root: DrawingArea<DB, Shift>) -> Result<()>
    where
        DB::ErrorType: 'static,
    {
        ensure_font();
        let e = |err: DrawingAreaErrorKind<DB::ErrorType>| anyhow!("{err:?}");
        root.fill(&WHITE).map_err(e)?;
        let log = self.log();
        let all: Vec<f64> = self
            .series
            .iter()
            .flat_map(|s| s.at.iter().flatten().flat_map(|(v, _)| v.iter().copied()))
            .filter(|v| !log || *v > 0.0)
            .collect();
        let (mut lo, mut hi) = all.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| {
            (a.min(v), b.max(v))
        });
        if !lo.is_finite() {
            (lo, hi) = (1.0, 2.0);
        }
        // Room above the data for the legend when there is one (a line of text per series).
        let legend = if self.series.len() > 1 {
            0.06 + 0.06 * self.series.len() as f64
        } else {
            0.0
        };
        let (lo, hi) = if log {
            let span = (hi / lo).log10().max(0.3);
            (lo / 1.3, hi * 1.3 * 10f64.powf(span * legend))
        } else {
            let span = if hi > lo {
                hi - lo
            } else {
                hi.abs().max(1e-12) * 0.4
            };
            (lo - span * 0.12, hi + span * (0.12 + legend))
        };
        let caption = format!(
            "{}: {} vs {}",
            self.meta.name,
            metric_label(self.meta, self.metric),
            self.axis.name
        );
        let (title, body) = root.split_vertically(78);
        title
            .draw(&Text::new(
                caption,
                (20, 12),
                ("sans-serif", 24).into_font().style(FontStyle::Bold),
            ))
            .map_err(e)?;
        let replicas = self.meta.replicas;
        let sub = format!(
            "dots: the {} replicas of each point; line: median; band and bar: range (min–max); ≈: adjacent ranges overlap{}",
            if replicas > 0 { replicas.to_string() } else { String::new() },
            if self.meta.perturb.is_empty() {
                String::new()
            } else {
                format!("; replicas perturb {}", self.meta.perturb.join(" and "))
            }
        );
        title
            .draw(&Text::new(
                sub,
                (20, 46),
                ("sans-serif", 15).into_font().color(&RGBColor(90, 90, 90)),
            ))
            .map_err(e)?;
        let k = self.axis.values.len() as i32;
        let mut builder = ChartBuilder::on(&body);
        builder
            .margin_left(16)
            .margin_right(28)
            .margin_bottom(12)
            .x_label_area_size(56)
            .y_label_area_size(96);
        if log {
            let chart = builder
                .build_cartesian_2d((0..k - 1).into_segmented(), (lo..hi).log_scale())
                .map_err(e)?;
            self.draw_chart(chart)?;
        } else {
            let chart = builder
                .build_cartesian_2d((0..k - 1).into_segmented(), lo..hi)
                .map_err(e)?;
            self.draw_chart(chart)?;
        }
        root.present().map_err(e)?;
        Ok(())
    }

    fn draw_chart<'c, DB, Y>(
        &self,
        mut chart: ChartContext<'c, DB, Cartesian2d<SegmentedCoord<RangedCoordi32>, Y>>,
    ) -> Result<()>
    where
        DB: DrawingBackend + 'c,
        DB::ErrorType: 'static,
        Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
    {
        let e = |err: DrawingAreaErrorKind<DB::ErrorType>| anyhow!("{err:?}");
        let labels = self.axis.values.clone();
        let y_label = metric_label(self.meta, self.metric) + if self.log() { ", log scale" } else { "" };
        chart
            .configure_mesh()
            .disable_x_mesh()
            .light_line_style(RGBColor(246, 246, 246))
            .bold_line_style(RGBColor(215, 215, 215))
            .x_desc(axis_label(self.axis))
            .y_desc(y_label)
            .axis_desc_style(("sans-serif", 17))
            .label_style(("sans-serif", 14))
            .x_labels(labels.len())
            .y_labels(10)
            .x_label_formatter(&|v| match v {
                SegmentValue::CenterOf(i) | SegmentValue::Exact(i) => {
                    labels.get(*i as usize).cloned().unwrap_or_default()
                }
                SegmentValue::Last => String::new(),
            })
            .y_label_formatter(&|v| tick(*v))
            .draw()
            .map_err(e)?;
        let xs = |i: usize| SegmentValue::CenterOf(i as i32);
        for (si, s) in self.series.iter().enumerate() {
            let color = COLORS[si % COLORS.len()];
            let present: Vec<(usize, &Spread)> =
                s.at.iter()
                    .enumerate()
                    .filter_map(|(i, a)| a.as_ref().map(|(_, sp)| (i, sp)))
                    .collect();
            // Band: the range, as a polygon over the values that have one.
            if present.len() > 1 {
                let mut poly: Vec<(SegmentValue<i32>, f64)> =
                    present.iter().map(|(i, sp)| (xs(*i), sp.max)).collect();
                poly.extend(present.iter().rev().map(|(i, sp)| (xs(*i), sp.min)));
                chart
                    .draw_series(std::iter::once(Polygon::new(poly, color.mix(0.15))))
                    .map_err(e)?;
            }
            // Each point's range as a bar (visible for a single value too).
            chart
                .draw_series(present.iter().map(|(i, sp)| {
                    PathElement::new(
                        vec![(xs(*i), sp.min), (xs(*i), sp.max)],
                        color.mix(0.6).stroke_width(2),
                    )
                }))
                .map_err(e)?;
            // Median line.
            let line: Vec<(SegmentValue<i32>, f64)> =
                present.iter().map(|(i, sp)| (xs(*i), sp.median)).collect();
            chart
                .draw_series(LineSeries::new(line.clone(), color.stroke_width(3)))
                .map_err(e)?
                .label(s.name.clone())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 24, y)], color.stroke_width(3)));
            // Replicas: hollow circles, so that several on one value stay visible.
            chart
                .draw_series(
                    s.at.iter()
                        .enumerate()
                        .filter_map(|(i, a)| a.as_ref().map(|(v, _)| (i, v)))
                        .flat_map(|(i, v)| {
                            v.iter()
                                .map(move |y| Circle::new((xs(i), *y), 5, color.stroke_width(2)))
                        }),
                )
                .map_err(e)?;
            // ≈ between adjacent values whose ranges overlap.
            for w in present.windows(2) {
                let ((i, a), (j, b)) = (w[0], w[1]);
                if j == i + 1 && a.overlaps(b) && a.n > 1 && b.n > 1 {
                    let y = (a.median + b.median) / 2.0;
                    chart
                        .draw_series(std::iter::once(
                            EmptyElement::at((SegmentValue::Exact(j as i32), y))
                                + Text::new(
                                    "≈",
                                    (-7, -30),
                                    ("sans-serif", 24).into_font().color(&RGBColor(170, 70, 0)),
                                ),
                        ))
                        .map_err(e)?;
                }
            }
        }
        if self.series.len() > 1 {
            chart
                .configure_series_labels()
                .background_style(WHITE.mix(0.9))
                .border_style(RGBColor(180, 180, 180))
                .label_font(("sans-serif", 14))
                .position(self.legend_corner())
                .draw()
                .map_err(e)?;
        }
        Ok(())
    }
}
