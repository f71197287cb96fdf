//! PNG plots of the fit report and of the non-regression overview (plotters,
//! bitmap backend). Text uses a system TrueType font (DejaVu Sans, or what
//! `fc-match sans` finds), registered once; without one, plotting fails with
//! an error the report shows instead of the pictures.

use std::path::Path;
use std::sync::OnceLock;

use anyhow::{anyhow, Context as _};
use plotters::prelude::*;
use plotters::style::{register_font, FontStyle};

const FONT: &str = "sans-serif";
/// Picture size (pixels).
const SIZE: (u32, u32) = (1100, 700);

static FONT_READY: OnceLock<Result<(), String>> = OnceLock::new();

fn font_paths() -> Vec<std::path::PathBuf> {
    let mut v: Vec<std::path::PathBuf> = [
        "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
        "/usr/share/fonts/TTF/DejaVuSans.ttf",
        "/usr/share/fonts/dejavu/DejaVuSans.ttf",
        "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
    ]
    .iter()
    .map(Into::into)
    .collect();
    if let Ok(out) = std::process::Command::new("fc-match")
        .args(["-f", "%{file}", "sans"])
        .output()
    {
        let p = String::from_utf8_lossy(&out.stdout).trim().to_string();
        if !p.is_empty() {
            v.push(p.into());
        }
    }
    v
}

/// Registers a system font for the plots (once).
pub fn ensure_font() -> anyhow::Result<()> {
    FONT_READY
        .get_or_init(|| {
            for p in font_paths() {
                if let Ok(bytes) = std::fs::read(&p) {
                    // plotters keeps a 'static reference: the font lives as long as the process.
                    let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
                    if register_font(FONT, FontStyle::Normal, bytes).is_ok() {
                        return Ok(());
                    }
                }
            }
            Err("no TrueType font found (install fonts-dejavu-core): plots skipped".to_string())
        })
        .clone()
        .map_err(|e| anyhow!(e))
}

/// A series of points or a line.
#[derive(Debug, Clone)]
pub struct Series {
    /// Legend label (empty: no legend entry).
    pub label: String,
    /// Points.
    pub points: Vec<(f64, f64)>,
    /// Colour.
    pub color: RGBColor,
    /// Line (true) or dots (false).
    pub line: bool,
    /// Dot radius or line width.
    pub size: u32,
    /// Opacity (0 to 1).
    pub alpha: f64,
}

/// Axis scales.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    /// Linear.
    Linear,
    /// Base-10 logarithmic (values ≤ 0 are left out).
    Log,
}

/// One chart.
#[derive(Debug, Clone)]
pub struct Chart {
    /// Title.
    pub title: String,
    /// X axis label.
    pub x_label: String,
    /// Y axis label.
    pub y_label: String,
    /// X scale.
    pub x_scale: Scale,
    /// Y scale.
    pub y_scale: Scale,
    /// Series, drawn in order.
    pub series: Vec<Series>,
    /// Vertical marker lines (x, label).
    pub markers: Vec<(f64, String)>,
    /// Horizontal reference lines (y).
    pub hlines: Vec<f64>,
}

/// Matplotlib's first colours: readable on white and for most colour-blind readers.
pub const PALETTE: [RGBColor; 6] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
];

fn range(values: impl Iterator<Item = f64>, scale: Scale) -> (f64, f64) {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for v in values.filter(|v| v.is_finite() && (scale == Scale::Linear || *v > 0.0)) {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if !lo.is_finite() {
        return (1.0, 10.0);
    }
    match scale {
        Scale::Log => {
            if hi <= lo {
                (lo / 2.0, hi * 2.0)
            } else {
                let f = (hi / lo).powf(0.04);
                (lo / f, hi * f)
            }
        }
        Scale::Linear => {
            let pad = if hi > lo {
                0.05 * (hi - lo)
            } else {
                lo.abs().max(1e-12) * 0.1
            };
            (lo - pad, hi + pad)
        }
    }
}

/// A tick label with enough digits to tell ticks `span` apart: 12345678 and
/// 12345679 on a narrow axis need more digits than 1e-3 and 1e-2.
fn tick(v: f64, span: f64) -> String {
    if v == 0.0 || (span > 0.0 && v.abs() < 1e-9 * span) {
        return "0".into();
    }
    let a = v.abs();
    let extra = if span > 0.0 {
        (a / span).log10().ceil().max(0.0) as usize
    } else {
        0
    };
    if (1e-2..1e4).contains(&a) {
        let decimals = if span > 0.0 {
            (1.0 - span.log10()).ceil().clamp(0.0, 6.0) as usize
        } else {
            3
        };
        let s = format!("{v:.decimals$}");
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    } else {
        let s = format!("{v:.*e}", (1 + extra).min(10));
        // 2.50e-3 -> 2.5e-3, 1.0e4 -> 1e4
        let (m, e) = s.split_once('e').unwrap_or((&s, "0"));
        let m = if m.contains('.') {
            m.trim_end_matches('0').trim_end_matches('.')
        } else {
            m
        };
        format!("{m}e{e}")
    }
}

fn draw_on<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    c: &Chart,
) -> anyhow::Result<()>
where
    DB::ErrorType: 'static,
{
    let all = || c.series.iter().flat_map(|s| s.points.iter());
    let (x0, x1) = range(all().map(|p| p.0).chain(c.markers.iter().map(|m| m.0)), c.x_scale);
    let (y0, y1) = range(all().map(|p| p.1).chain(c.hlines.iter().copied()), c.y_scale);
    // Log axes: ticks are decades apart, one significant digit tells them apart.
    let span_of = |lo: f64, hi: f64, scale: Scale| {
        if scale == Scale::Log {
            0.0
        } else {
            (hi - lo) / 10.0
        }
    };
    let (x_span, y_span) = (span_of(x0, x1, c.x_scale), span_of(y0, y1, c.y_scale));
    let mut builder = ChartBuilder::on(area);
    builder
        .caption(&c.title, (FONT, 24))
        .margin(14)
        .x_label_area_size(55)
        .y_label_area_size(95);
    macro_rules! body {
        ($chart:expr) => {{
            let mut chart = $chart;
            chart
                .configure_mesh()
                .x_desc(c.x_label.as_str())
                .y_desc(c.y_label.as_str())
                .label_style((FONT, 16))
                .axis_desc_style((FONT, 18))
                .x_label_formatter(&|v| tick(*v, x_span))
                .y_label_formatter(&|v| tick(*v, y_span))
                .light_line_style(RGBColor(235, 235, 235))
                .draw()
                .map_err(|e| anyhow!("{e:?}"))?;
            for y in &c.hlines {
                chart
                    .draw_series(LineSeries::new(
                        vec![(x0, *y), (x1, *y)],
                        BLACK.mix(0.6).stroke_width(1),
                    ))
                    .map_err(|e| anyhow!("{e:?}"))?;
            }
            for (x, label) in &c.markers {
                chart
                    .draw_series(DashedLineSeries::new(
                        vec![(*x, y0), (*x, y1)],
                        6,
                        4,
                        RGBColor(90, 90, 90).stroke_width(1),
                    ))
                    .map_err(|e| anyhow!("{e:?}"))?;
                if !label.is_empty() {
                    chart
                        .draw_series(std::iter::once(Text::new(
                            label.clone(),
                            (*x, y1),
                            (FONT, 15).into_font().color(&RGBColor(60, 60, 60)),
                        )))
                        .map_err(|e| anyhow!("{e:?}"))?;
                }
            }
            let mut legend = false;
            for s in &c.series {
                let color = s.color.mix(s.alpha);
                let pts: Vec<(f64, f64)> = s
                    .points
                    .iter()
                    .copied()
                    .filter(|(x, y)| {
                        x.is_finite()
                            && y.is_finite()
                            && (c.x_scale == Scale::Linear || *x > 0.0)
                            && (c.y_scale == Scale::Linear || *y > 0.0)
                    })
                    .collect();
                let size = s.size;
                let anno = if s.line {
                    chart
                        .draw_series(LineSeries::new(pts, color.stroke_width(size)))
                        .map_err(|e| anyhow!("{e:?}"))?
                } else {
                    chart
                        .draw_series(pts.into_iter().map(|p| Circle::new(p, size, color.filled())))
                        .map_err(|e| anyhow!("{e:?}"))?
                };
                if !s.label.is_empty() {
                    legend = true;
                    let solid = s.color;
                    anno.label(s.label.clone())
                        .legend(move |(x, y)| Rectangle::new([(x, y - 4), (x + 18, y + 4)], solid.filled()));
                }
            }
            if legend {
                chart
                    .configure_series_labels()
                    .position(SeriesLabelPosition::UpperLeft)
                    .label_font((FONT, 16))
                    .background_style(WHITE.mix(0.85))
                    .border_style(RGBColor(150, 150, 150))
                    .draw()
                    .map_err(|e| anyhow!("{e:?}"))?;
            }
        }};
    }
    match (c.x_scale, c.y_scale) {
        (Scale::Log, Scale::Log) => body!(builder
            .build_cartesian_2d((x0..x1).log_scale(), (y0..y1).log_scale())
            .map_err(|e| anyhow!("{e:?}"))?),
        (Scale::Log, Scale::Linear) => {
            body!(builder
                .build_cartesian_2d((x0..x1).log_scale(), y0..y1)
                .map_err(|e| anyhow!("{e:?}"))?)
        }
        (Scale::Linear, Scale::Log) => {
            body!(builder
                .build_cartesian_2d(x0..x1, (y0..y1).log_scale())
                .map_err(|e| anyhow!("{e:?}"))?)
        }
        (Scale::Linear, Scale::Linear) => {
            body!(builder
                .build_cartesian_2d(x0..x1, y0..y1)
                .map_err(|e| anyhow!("{e:?}"))?)
        }
    }
    Ok(())
}

/// Draws one chart into a PNG.
pub fn draw(path: &Path, chart: &Chart) -> anyhow::Result<()> {
    draw_grid(path, std::slice::from_ref(chart), 1, SIZE)
}

/// Draws charts in a grid of `columns` columns (rows as needed), each panel
/// `panel` pixels, into a PNG.
pub fn draw_grid(path: &Path, charts: &[Chart], columns: usize, panel: (u32, u32)) -> anyhow::Result<()> {
    ensure_font()?;
    let rows = charts.len().div_ceil(columns.max(1)).max(1);
    let size = (panel.0 * columns.max(1) as u32, panel.1 * rows as u32);
    let root = BitMapBackend::new(path, size).into_drawing_area();
    root.fill(&WHITE).map_err(|e| anyhow!("{e:?}"))?;
    let areas = root.split_evenly((rows, columns.max(1)));
    for (area, chart) in areas.iter().zip(charts) {
        draw_on(area, chart)?;
    }
    root.present()
        .map_err(|e| anyhow!("{e:?}"))
        .with_context(|| format!("{}: cannot write the picture", path.display()))
}
