//! Network calibration: per measure kind, a segmented fit (sized kinds) or a
//! constant (`test`, `iprobe`, `wtime`); then the translation into SMPI's model
//! as `smpirun` applies it: overheads `os`/`or`/`ois`, piecewise latency and
//! bandwidth factors over a nominal link, the eager/detached threshold, the
//! per-call costs, and per-range noise. The README ("Network translation")
//! gives every formula; the tests check them on synthetic machines.

use std::collections::BTreeMap;

use crate::error::InputError;
use crate::input::{CalibrationFile, NetKind, NetworkCall, ProbeArrived, Table};
use crate::mixture::{fit_mixture, MixtureFit};
use crate::segmented::{fit_segmented, Center, SegmentOptions, SegmentedFit};
use crate::stats::{self, Interval};
use crate::synth::ENVELOPE;

/// Options of the network fit.
#[derive(Debug, Clone, Copy)]
pub struct NetworkOptions {
    /// Segmentation options (center, segment limits, seeds).
    pub segments: SegmentOptions,
    /// Fraction of the one-way time a send must last to count as blocking
    /// (rendezvous) when looking for the eager/rendezvous switch.
    pub blocking_ratio: f64,
    /// Smallest share of the one-way time left to the transfer itself when the
    /// measured overheads nearly fill a round trip (see the README).
    pub min_transfer_share: f64,
}

impl Default for NetworkOptions {
    fn default() -> Self {
        Self {
            segments: SegmentOptions::default(),
            blocking_ratio: 0.6,
            min_transfer_share: 0.1,
        }
    }
}

/// A size-independent kind (`test`, `iprobe`, `wtime`).
#[derive(Debug, Clone, PartialEq)]
pub struct ConstantFit {
    /// Number of calls.
    pub n: usize,
    /// Mean with its 95 % t interval.
    pub mean: Interval,
    /// Median with its 95 % nonparametric interval (`None` for n ≤ 5).
    pub median: Option<Interval>,
    /// The value used (mean or median, per the fit's center).
    pub center: f64,
    /// Mixture of the calls about the center.
    pub noise: MixtureFit,
}

/// The fit of one measure kind.
#[derive(Debug, Clone, PartialEq)]
pub enum KindFit {
    /// A sized kind.
    Segmented(SegmentedFit),
    /// A size-free kind.
    Constant(ConstantFit),
}

/// A piecewise-linear function of the payload size: piece `i` covers sizes in
/// `[starts[i-1], starts[i])` (piece 0 from 0), integer thresholds.
#[derive(Debug, Clone, PartialEq)]
pub struct Pwl {
    /// First size of pieces 1.. (strictly increasing integers).
    pub starts: Vec<u64>,
    /// `(intercept, slope)` per piece.
    pub lines: Vec<(f64, f64)>,
}

impl Pwl {
    fn piece(&self, size: f64) -> usize {
        self.starts.iter().filter(|s| size >= **s as f64).count()
    }

    /// Value at `size`.
    pub fn at(&self, size: f64) -> f64 {
        let (a, b) = self.lines[self.piece(size)];
        a + b * size
    }

    fn line_at(&self, size: f64) -> (f64, f64) {
        self.lines[self.piece(size)]
    }

    /// From a segmented fit: a threshold is the rounded breakpoint estimate, kept
    /// inside (last size below, first size above].
    fn from_fit(f: &SegmentedFit) -> Self {
        let starts = f
            .breakpoints
            .iter()
            .map(|b| {
                (b.estimate.round() as u64)
                    .max(b.last_below as u64 + 1)
                    .min(b.first_above as u64)
            })
            .collect();
        Self {
            starts,
            lines: f.segments.iter().map(|s| (s.intercept, s.slope)).collect(),
        }
    }

    /// Replaces each threshold by its image under `snap` and drops pieces that
    /// become empty.
    fn snapped(&self, snap: &dyn Fn(u64) -> u64) -> Self {
        let mut starts: Vec<u64> = Vec::new();
        let mut lines = vec![self.lines[0]];
        for (i, s) in self.starts.iter().enumerate() {
            let t = snap(*s);
            if starts.last().is_some_and(|l| *l >= t) || t == 0 {
                // Empty piece: the upper line takes over from here.
                *lines.last_mut().expect("at least one line") = self.lines[i + 1];
                continue;
            }
            starts.push(t);
            lines.push(self.lines[i + 1]);
        }
        Self { starts, lines }
    }
}

/// One piece of the one-way transfer time, as translated.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct TransferPiece {
    /// First payload size of the piece.
    pub from: u64,
    /// First payload size of the next piece (`None` for the last).
    pub to: Option<u64>,
    /// True below the detached threshold (overheads are paid).
    pub detached: bool,
    /// Measured one-way time line (pingpong − clock read)/2: intercept, slope.
    pub one_way: (f64, f64),
    /// Transfer-time line after the overheads are taken out: intercept, slope.
    pub transfer: (f64, f64),
    /// Latency factor (of the nominal latency).
    pub lat_factor: f64,
    /// Bandwidth factor (of the nominal bandwidth).
    pub bw_factor: f64,
    /// What had to be adjusted, if anything.
    pub adjusted: Option<String>,
}

/// Noise of one size range: `(above, weights, means, sigmas)`, sizes + 16 above
/// `above`, seconds.
pub type NoiseRange = (u64, Vec<f64>, Vec<f64>, Vec<f64>);

/// The SMPI model the fit translates into.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Translation {
    /// Nominal route latency of the platform (s).
    pub latency: f64,
    /// Nominal route bandwidth of the platform (B/s).
    pub bandwidth: f64,
    /// `smpi/lat-factor` chunks `(boundary on size + 16, factor)`.
    pub lat_factor: Vec<(u64, f64)>,
    /// `smpi/bw-factor` chunks.
    pub bw_factor: Vec<(u64, f64)>,
    /// `smpi/os` chunks `(boundary on the payload, offset, per_byte)`.
    pub os: Vec<(u64, f64, f64)>,
    /// `smpi/or` chunks.
    pub or: Vec<(u64, f64, f64)>,
    /// `smpi/ois` chunks.
    pub ois: Vec<(u64, f64, f64)>,
    /// Per-range noise `(above, weights, means, sigmas)` on size + 16.
    pub noise: Vec<NoiseRange>,
    /// `smpi/wtime` (s): one clock read.
    pub wtime: f64,
    /// `smpi/test` (s).
    pub test: f64,
    /// `smpi/iprobe` (s).
    pub iprobe: f64,
    /// `smpi/send-is-detached-thresh` and `smpi/async-small-thresh` (bytes).
    pub detached_thresh: u64,
    /// The transfer pieces, for the report.
    pub pieces: Vec<TransferPiece>,
}

/// How the calibrated MPI's `MPI_Iprobe` sees a message that arrived after the
/// rank's previous MPI call (`calib_net`'s `iprobe_arrived` rows), and the
/// `smpi/probe-sees` setting that reproduces it: `sent` (SimGrid's: any message
/// already sent) when the probe found it in most calls, `progressed` (only what
/// an earlier call progressed: Open MPI's ob1 matches before it progresses) when
/// it missed it in most.
#[derive(Debug, Clone, PartialEq)]
pub struct ProbeSemantics {
    /// Probes (warm-up rows left out).
    pub calls: usize,
    /// Probes that found the message.
    pub found: usize,
    /// The `smpi/probe-sees` value.
    pub setting: &'static str,
}

impl ProbeSemantics {
    /// From the rows; `None` when there is none.
    pub fn from_rows(rows: &[ProbeArrived]) -> Option<Self> {
        let timed: Vec<&ProbeArrived> = rows.iter().filter(|r| !r.warmup).collect();
        if timed.is_empty() {
            return None;
        }
        let found = timed.iter().filter(|r| r.found).count();
        Some(ProbeSemantics {
            calls: timed.len(),
            found,
            setting: if 2 * found >= timed.len() {
                "sent"
            } else {
                "progressed"
            },
        })
    }

    /// Share of the probes that found the message.
    pub fn found_share(&self) -> f64 {
        self.found as f64 / self.calls as f64
    }
}

/// The whole network fit.
#[derive(Debug, Clone)]
pub struct NetworkFit {
    /// Per kind.
    pub kinds: BTreeMap<NetKind, KindFit>,
    /// The cost of one clock read (s), from the `wtime` rows.
    pub clock_read: f64,
    /// The model.
    pub translation: Translation,
    /// Smallest and largest calibrated message sizes.
    pub size_range: (f64, f64),
    /// Things the user should know (adjustments, missing kinds, ...).
    pub warnings: Vec<String>,
    /// The center fitted.
    pub center: Center,
    /// The probe semantics measured (`None`: no `iprobe_arrived` rows; smpirun's
    /// default, SimGrid's `sent`, applies).
    pub probe: Option<ProbeSemantics>,
}

impl NetworkFit {
    /// The segmented fit of a kind, if fitted.
    pub fn segmented(&self, kind: NetKind) -> Option<&SegmentedFit> {
        match self.kinds.get(&kind) {
            Some(KindFit::Segmented(f)) => Some(f),
            _ => None,
        }
    }

    /// The constant fit of a kind, if fitted.
    pub fn constant(&self, kind: NetKind) -> Option<&ConstantFit> {
        match self.kinds.get(&kind) {
            Some(KindFit::Constant(f)) => Some(f),
            _ => None,
        }
    }
}

/// Relative distance under which thresholds of different kinds are taken as
/// the same switch.
const SNAP_RELATIVE: f64 = 0.03;
/// Largest bandwidth factor written (a flat, latency-bound piece).
const MAX_BW_FACTOR: f64 = 1e4;
/// Smallest latency factor written (the latency phase must stay positive).
const MIN_LAT_FACTOR: f64 = 1e-3;

/// Rounds to `digits` significant digits.
pub fn round_sig(v: f64, digits: i32) -> f64 {
    if v == 0.0 || !v.is_finite() {
        return v;
    }
    let e = v.abs().log10().floor() as i32;
    let p = 10f64.powi(digits - 1 - e);
    let r = (v * p).round() / p;
    // Shortest decimal that rounds to r (avoid 0.30000000000000004).
    format!("{r:.*e}", (digits - 1).max(0) as usize)
        .parse()
        .unwrap_or(r)
}

fn no_data(
    files: &[CalibrationFile],
    kind: NetKind,
    message: &str,
    first: Option<&NetworkCall>,
) -> InputError {
    let (file, line, column) = match first {
        Some(c) => (files[c.at.file].name(), c.at.line, c.at.column),
        None => files
            .iter()
            .rev()
            .find(|f| matches!(f.table, Table::Network(_)))
            .map_or((String::from("<no network file>"), 0, 1), |f| {
                (f.name(), f.header_line, 1)
            }),
    };
    InputError::NoData {
        file,
        line,
        column,
        what: format!("network kind `{}`", kind.name()),
        message: message.into(),
    }
}

/// Fits every network kind of the files and translates the result.
pub fn fit_network(
    files: &[CalibrationFile],
    opts: &NetworkOptions,
) -> Result<Option<NetworkFit>, InputError> {
    let calls: Vec<&NetworkCall> = files
        .iter()
        .filter_map(|f| match &f.table {
            Table::Network(rows) => Some(rows),
            Table::Compute(_) => None,
        })
        .flatten()
        .collect();
    if calls.is_empty() {
        return Ok(None);
    }
    let timer_resolution = files
        .iter()
        .filter(|f| matches!(f.table, Table::Network(_)))
        .filter_map(|f| f.meta("timer_resolution_s").parse::<f64>().ok())
        .fold(0.0, f64::max);
    let mut seg_opts = opts.segments;
    seg_opts.duration_floor = seg_opts.duration_floor.max(timer_resolution);
    // The ping-pong's lines become SMPI transfer times (latency factor ≥ 0,
    // bandwidth factor > 0) plus one clock read: their intercepts are bounded
    // below by the clock read, estimated here as below (`clock_read`).
    let meta_overhead = stats::median(
        &files
            .iter()
            .filter(|f| matches!(f.table, Table::Network(_)))
            .filter_map(|f| f.meta("timer_overhead_s").parse::<f64>().ok())
            .collect::<Vec<_>>(),
    );
    let wtime_rows: Vec<f64> = calls
        .iter()
        .filter(|c| c.kind == NetKind::Wtime && !c.warmup)
        .map(|c| c.duration)
        .collect();
    let clock_floor = if wtime_rows.len() >= 2 {
        match seg_opts.center {
            Center::Mean => stats::mean(&wtime_rows) / 2.0,
            Center::Median => stats::median(&wtime_rows) / 2.0,
        }
    } else {
        meta_overhead.max(0.0)
    };
    let mut kinds = BTreeMap::new();
    let mut warnings = Vec::new();
    for kind in NetKind::ALL {
        let of_kind: Vec<&&NetworkCall> = calls.iter().filter(|c| c.kind == kind).collect();
        let first = of_kind.first().map(|c| **c);
        let used: Vec<(f64, f64)> = of_kind
            .iter()
            .filter(|c| !c.warmup)
            .map(|c| (c.size as f64, c.duration))
            .collect();
        if of_kind.is_empty() {
            if kind == NetKind::Pingpong {
                return Err(no_data(
                    files,
                    kind,
                    "no row of this kind: the ping-pong is needed for the transfer times",
                    None,
                ));
            }
            warnings.push(format!(
                "no `{}` rows: its model quantity is left at SMPI's default",
                kind.name()
            ));
            continue;
        }
        if kind.sized() {
            let mut sizes: Vec<u64> = of_kind.iter().filter(|c| !c.warmup).map(|c| c.size).collect();
            sizes.sort_unstable();
            sizes.dedup();
            if sizes.len() < 3 {
                return Err(no_data(
                    files,
                    kind,
                    &format!(
                        "{} distinct sizes outside warm-up rows, a fit needs at least 3",
                        sizes.len()
                    ),
                    first,
                ));
            }
            let mut o = seg_opts;
            if kind == NetKind::Pingpong && clock_floor.is_finite() {
                o.min_intercept = o.min_intercept.max(clock_floor);
            }
            kinds.insert(kind, KindFit::Segmented(fit_segmented(&used, &o)));
        } else {
            if used.len() < 2 {
                return Err(no_data(
                    files,
                    kind,
                    &format!("{} calls outside warm-up rows, at least 2 are needed", used.len()),
                    first,
                ));
            }
            let d: Vec<f64> = used.iter().map(|p| p.1).collect();
            let mean = stats::mean_ci(&d, 0.95).expect("2 values");
            let median = stats::median_ci(&d, 0.95);
            let center = match seg_opts.center {
                Center::Mean => mean.estimate,
                Center::Median => stats::median(&d),
            };
            let resid: Vec<f64> = d.iter().map(|v| v - center).collect();
            let noise = fit_mixture(
                &resid,
                seg_opts.max_components,
                timer_resolution / 2.0,
                seg_opts.seed,
            );
            kinds.insert(
                kind,
                KindFit::Constant(ConstantFit {
                    n: d.len(),
                    mean,
                    median,
                    center,
                    noise,
                }),
            );
        }
    }
    // One clock read: a `wtime` row is two reads around one call (README).
    let clock_read = match kinds.get(&NetKind::Wtime) {
        Some(KindFit::Constant(w)) => {
            let c = w.center / 2.0;
            if meta_overhead > 0.0 && !(0.5..=2.0).contains(&(c / meta_overhead)) {
                warnings.push(format!(
                    "one clock read from the wtime rows ({c:.3e} s, half a row) differs from the metadata's \
                     timer_overhead_s ({meta_overhead:.3e} s) by more than 2x: check how the calibration program times MPI_Wtime"
                ));
            }
            c
        }
        _ => meta_overhead.max(0.0),
    };
    let (mut min_size, mut max_size) = (f64::INFINITY, 0.0f64);
    for k in kinds.values() {
        if let KindFit::Segmented(f) = k {
            let (a, b) = f.range();
            min_size = min_size.min(a);
            max_size = max_size.max(b);
        }
    }
    let translation = translate(&kinds, clock_read, opts, (min_size, max_size), &mut warnings);
    let probe_rows: Vec<ProbeArrived> = files
        .iter()
        .flat_map(|f| f.probe_arrived.iter().copied())
        .collect();
    let probe = ProbeSemantics::from_rows(&probe_rows);
    if let Some(p) = &probe {
        if (0.1..=0.9).contains(&p.found_share()) {
            warnings.push(format!(
                "MPI_Iprobe found a message that arrived after the previous MPI call in {} of {} calls: the MPI \
                 neither always sees nor always misses it; smpi/probe-sees = {} (the majority)",
                p.found, p.calls, p.setting
            ));
        }
    }
    Ok(Some(NetworkFit {
        kinds,
        clock_read,
        translation,
        size_range: (min_size, max_size),
        warnings,
        center: seg_opts.center,
        probe,
    }))
}

/// Finds the eager/rendezvous switch from the fit of `kind` (`recv`, whose
/// sender is early, when measured; else `send`): its breakpoint across which
/// its share of the one-way time jumps the most, to at least
/// `blocking_ratio`. Returns the threshold (first size that blocks).
///
/// `recv` tells the protocols apart where `send` cannot: an eager message is
/// already in the receiver's buffers, so its receive is a copy (a small share
/// of the one-way time), while a rendezvous receive pays the handshake and the
/// transfer. An eager send over shared memory copies the payload and lasts
/// about the one-way time, like a rendezvous one: on this project's machine
/// Open MPI's vader transport switches at 4 KiB, the `recv` share jumps there
/// from 30 % to 93 %, while `send` jumps at 257 B (its inline "fast box" ends).
fn detached_threshold(
    send: &SegmentedFit,
    kind: &str,
    one_way: &Pwl,
    c: f64,
    opts: &NetworkOptions,
    max_size: f64,
) -> (u64, String) {
    let share = |seg: usize, size: f64| {
        let s = &send.segments[seg];
        (s.at(size) - c) / one_way.at(size).max(f64::MIN_POSITIVE)
    };
    let mut best: Option<(f64, u64, f64, f64)> = None;
    for (i, b) in send.breakpoints.iter().enumerate() {
        let below = share(i, b.last_below);
        let above = share(i + 1, b.first_above);
        let jump = above - below;
        let threshold = (b.estimate.round() as u64)
            .max(b.last_below as u64 + 1)
            .min(b.first_above as u64);
        if above >= opts.blocking_ratio && jump >= 0.2 && best.is_none_or(|x| jump > x.0) {
            best = Some((jump, threshold, below, above));
        }
    }
    match best {
        Some((_, t, below, above)) => (
            t,
            format!(
                "{kind} lasts {:.0} % of the one-way time just below {t} B and {:.0} % just above: \
                 the eager/rendezvous switch",
                100.0 * below,
                100.0 * above
            ),
        ),
        None => {
            let first = send.aggregates.first().map_or(1.0, |a| a.size);
            if share(0, first) >= opts.blocking_ratio {
                (
                    0,
                    format!("every {kind} lasts most of the one-way time: no eager protocol seen"),
                )
            } else {
                (
                    max_size as u64 + 1,
                    format!(
                        "no switch to blocking sends up to {max_size} B: every calibrated size is eager \
                         (larger sizes are extrapolated as eager)"
                    ),
                )
            }
        }
    }
}

/// Translates the fitted kinds into SMPI's model (README, "Network translation").
fn translate(
    kinds: &BTreeMap<NetKind, KindFit>,
    c: f64,
    opts: &NetworkOptions,
    (min_size, max_size): (f64, f64),
    warnings: &mut Vec<String>,
) -> Translation {
    let seg = |k| match kinds.get(&k) {
        Some(KindFit::Segmented(f)) => Some(f),
        _ => None,
    };
    let constant = |k| match kinds.get(&k) {
        Some(KindFit::Constant(f)) => Some(f.center),
        _ => None,
    };
    let pp_fit = seg(NetKind::Pingpong).expect("pingpong is required");
    let pp = Pwl::from_fit(pp_fit);
    let one_way_raw = Pwl {
        starts: pp.starts.clone(),
        lines: pp.lines.iter().map(|(a, b)| ((a - c) / 2.0, b / 2.0)).collect(),
    };
    let by = seg(NetKind::Recv)
        .map(|f| (f, "recv"))
        .or_else(|| seg(NetKind::Send).map(|f| (f, "send")));
    let (detached, reason) = match by {
        Some((fit, kind)) => detached_threshold(fit, kind, &one_way_raw, c, opts, max_size),
        None => {
            warnings
                .push("no `recv` or `send` rows: the detached threshold is SMPI's default, 65536 B".into());
            (65536, "SMPI's default (no recv or send rows)".into())
        }
    };
    warnings.push(format!("detached/eager threshold {detached} B: {reason}"));

    // Snap thresholds of every kind that fall within SNAP_RELATIVE of the switch
    // or of an earlier-kept threshold (pingpong first) onto it.
    let mut canonical: Vec<u64> = vec![detached];
    let order = [NetKind::Pingpong, NetKind::Send, NetKind::Recv, NetKind::Isend];
    for k in order {
        if let Some(f) = seg(k) {
            for t in Pwl::from_fit(f).starts {
                if !canonical
                    .iter()
                    .any(|c| (*c as f64 / t as f64 - 1.0).abs() <= SNAP_RELATIVE)
                {
                    canonical.push(t);
                }
            }
        }
    }
    let snap = |t: u64| -> u64 {
        canonical
            .iter()
            .copied()
            .find(|c| (*c as f64 / t as f64 - 1.0).abs() <= SNAP_RELATIVE)
            .unwrap_or(t)
    };
    let pwl = |k| seg(k).map(|f| Pwl::from_fit(f).snapped(&snap));
    let pp = pwl(NetKind::Pingpong).expect("pingpong is required");
    let zero = Pwl {
        starts: vec![],
        lines: vec![(c, 0.0)],
    };
    let send = pwl(NetKind::Send).unwrap_or_else(|| zero.clone());
    let recv = pwl(NetKind::Recv).unwrap_or_else(|| zero.clone());
    let isend = pwl(NetKind::Isend).unwrap_or_else(|| zero.clone());

    // The union partition of the one-way time.
    let mut starts: Vec<u64> = pp.starts.clone();
    starts.extend(send.starts.iter().chain(&recv.starts).filter(|s| **s < detached));
    if detached > 0 && (detached as f64) <= max_size {
        starts.push(detached);
    }
    starts.sort_unstable();
    starts.dedup();
    starts.retain(|s| *s > 0);
    let mut bounds: Vec<u64> = vec![0];
    bounds.extend(&starts);

    // Per piece: one-way time O, overheads os/or (below the switch), transfer.
    struct Raw {
        from: u64,
        to: Option<u64>,
        detached: bool,
        one_way: (f64, f64),
        os: (f64, f64),
        or: (f64, f64),
        transfer: (f64, f64),
        lo: f64,
        hi: f64,
        adjusted: Vec<String>,
    }
    let sub = |l: (f64, f64)| (l.0 - c, l.1);
    let mut raws: Vec<Raw> = Vec::new();
    for (i, &from) in bounds.iter().enumerate() {
        let to = bounds.get(i + 1).copied();
        let probe = from as f64;
        let is_detached = from < detached;
        let (pa, pb) = pp.line_at(probe);
        let one_way = ((pa - c) / 2.0, pb / 2.0);
        let (os, or) = if is_detached {
            (sub(send.line_at(probe)), sub(recv.line_at(probe)))
        } else {
            ((0.0, 0.0), (0.0, 0.0))
        };
        let transfer = (one_way.0 - os.0 - or.0, one_way.1 - os.1 - or.1);
        let lo = probe.max(min_size).max(1.0);
        let hi = to.map_or(max_size, |t| (t as f64 - 1.0).min(max_size)).max(lo);
        raws.push(Raw {
            from,
            to,
            detached: is_detached,
            one_way,
            os,
            or,
            transfer,
            lo,
            hi,
            adjusted: Vec::new(),
        });
    }
    let at = |l: (f64, f64), s: f64| l.0 + l.1 * s;
    // Overheads must not be negative (a clock read larger than the call).
    for r in raws.iter_mut() {
        for (name, l) in [("os", &mut r.os), ("or", &mut r.or)] {
            if at(*l, r.lo) < 0.0 || at(*l, r.hi) < 0.0 {
                let mid = at(*l, (r.lo * r.hi).sqrt()).max(0.0);
                r.adjusted.push(format!(
                    "{name} was negative at an end of the piece: made constant {mid:.3e} s"
                ));
                *l = (mid, 0.0);
            }
        }
        if r.detached {
            r.transfer = (r.one_way.0 - r.os.0 - r.or.0, r.one_way.1 - r.os.1 - r.or.1);
        }
    }
    // Keep at least a share of the one-way time for the transfer: take the
    // deficit out of the overheads so that os + transfer + or stays the
    // measured one-way time (the round trip is the target).
    let kappa = opts.min_transfer_share;
    for r in raws.iter_mut().filter(|r| r.detached) {
        let short = |s: f64| at(r.transfer, s) < kappa * at(r.one_way, s);
        if short(r.lo) || short(r.hi) {
            let target = (kappa * r.one_way.0, kappa * r.one_way.1);
            let delta = (target.0 - r.transfer.0, target.1 - r.transfer.1);
            let mid = (r.lo * r.hi).sqrt();
            let (o, q) = (at(r.os, mid), at(r.or, mid));
            let f = if o + q > 0.0 { o / (o + q) } else { 0.5 };
            r.os = (r.os.0 - f * delta.0, r.os.1 - f * delta.1);
            r.or = (r.or.0 - (1.0 - f) * delta.0, r.or.1 - (1.0 - f) * delta.1);
            r.transfer = target;
            r.adjusted.push(format!(
                "os + or filled more than {:.0} % of the one-way time: both reduced so that the transfer keeps {:.0} %",
                100.0 * (1.0 - kappa),
                100.0 * kappa
            ));
            for (name, l) in [("os", &mut r.os), ("or", &mut r.or)] {
                if at(*l, r.lo) < 0.0 || at(*l, r.hi) < 0.0 {
                    let m = at(*l, mid).max(0.0);
                    *l = (m, 0.0);
                    r.adjusted
                        .push(format!("{name} then made constant {m:.3e} s (it went negative)"));
                }
            }
        }
    }

    // Nominal link: bandwidth from the last piece's slope, latency from the first
    // piece's intercept (so those factors are 1), 4 significant digits.
    let last = raws.last().expect("one piece at least");
    let mut bandwidth = if last.transfer.1 > 0.0 {
        1.0 / last.transfer.1
    } else {
        (last.hi + ENVELOPE) / at(last.transfer, last.hi).max(f64::MIN_POSITIVE)
    };
    if !(bandwidth.is_finite() && bandwidth > 0.0) {
        bandwidth = 1e9;
    }
    let bandwidth = round_sig(bandwidth, 4);
    let first = &raws[0];
    let mut latency = first.transfer.0 - ENVELOPE * first.transfer.1;
    if latency.is_nan() || latency <= 0.0 {
        latency = (0.5 * at(first.transfer, first.lo)).max(1e-9);
    }
    let latency = round_sig(latency, 4);

    let mut pieces = Vec::new();
    for r in &mut raws {
        let mid = (r.lo * r.hi).sqrt();
        let value_mid = at(r.transfer, mid);
        let (mut a, mut b) = r.transfer;
        let min_slope = 1.0 / (MAX_BW_FACTOR * bandwidth);
        if b < min_slope {
            b = min_slope;
            a = value_mid - b * mid;
            r.adjusted.push(format!(
                "transfer time flat or decreasing with size: bandwidth factor capped at {MAX_BW_FACTOR}, line kept through the piece's middle"
            ));
        }
        let mut lat = (a - ENVELOPE * b) / latency;
        if lat < MIN_LAT_FACTOR {
            let at_bound = a >= 0.0;
            lat = MIN_LAT_FACTOR;
            let new_b = (value_mid - lat * latency) / (mid + ENVELOPE);
            b = new_b.max(min_slope);
            r.adjusted.push(if at_bound {
                // The fit's own bound (the line starts at the clock read): only
                // the 16-byte envelope and the smallest factor move it.
                format!(
                    "the line starts at the clock read (the fit's bound): latency factor {MIN_LAT_FACTOR}, slope refitted \
                     through the piece's middle (changes the piece by {:.1e} of its time at most)",
                    (lat * latency + ENVELOPE * b.abs()) / at(r.transfer, r.lo).max(f64::MIN_POSITIVE)
                )
            } else {
                format!(
                    "negative latency intercept: latency factor raised to {MIN_LAT_FACTOR}, slope refitted through the piece's middle"
                )
            });
        }
        let bw = 1.0 / (b * bandwidth);
        pieces.push(TransferPiece {
            from: r.from,
            to: r.to,
            detached: r.detached,
            one_way: r.one_way,
            transfer: r.transfer,
            lat_factor: round_sig(lat, 7),
            bw_factor: round_sig(bw, 7),
            adjusted: (!r.adjusted.is_empty()).then(|| r.adjusted.join("; ")),
        });
    }
    for p in &pieces {
        if let Some(a) = &p.adjusted {
            warnings.push(format!("transfer piece from {} B: {a}", p.from));
        }
    }
    // Boundaries: factors look up size + 16, a piece starting at payload `from`
    // covers lookups > from − 1 + 16; overheads look up the payload.
    let factor_bound = |from: u64| if from == 0 { 0 } else { from - 1 + ENVELOPE as u64 };
    let overhead_bound = |from: u64| from.saturating_sub(1);
    let lat_factor = pieces
        .iter()
        .map(|p| (factor_bound(p.from), p.lat_factor))
        .collect();
    let bw_factor = pieces
        .iter()
        .map(|p| (factor_bound(p.from), p.bw_factor))
        .collect();
    let overhead = |f: &dyn Fn(&Raw) -> (f64, f64)| -> Vec<(u64, f64, f64)> {
        raws.iter()
            .map(|r| {
                let (a, b) = f(r);
                (overhead_bound(r.from), round_sig(a, 7), round_sig(b, 7))
            })
            .collect()
    };
    let os = overhead(&|r: &Raw| r.os);
    let or = overhead(&|r: &Raw| r.or);
    // ois: the isend line minus one clock read, on the isend's own pieces.
    let mut ois = Vec::new();
    let mut isend_bounds = vec![0u64];
    isend_bounds.extend(&isend.starts);
    for (i, &from) in isend_bounds.iter().enumerate() {
        let (a, b) = sub(isend.lines[i]);
        let lo = (from as f64).max(min_size).max(1.0);
        let hi = isend_bounds
            .get(i + 1)
            .map_or(max_size, |t| (*t as f64 - 1.0).min(max_size))
            .max(lo);
        let (a, b) = if a + b * lo < 0.0 || a + b * hi < 0.0 {
            let m = (a + b * (lo * hi).sqrt()).max(0.0);
            warnings.push(format!(
                "ois from {from} B was negative at an end of its piece: made constant {m:.3e} s"
            ));
            (m, 0.0)
        } else {
            (a, b)
        };
        ois.push((overhead_bound(from), round_sig(a, 7), round_sig(b, 7)));
    }
    // Noise: the ping-pong's per-segment mixtures, halved per message (means/2,
    // sigmas/√2: exact for one component, README).
    let pp_raw_starts = Pwl::from_fit(pp_fit).starts;
    let noise = pp_fit
        .segments
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let above = if i == 0 {
                0
            } else {
                factor_bound(snap(pp_raw_starts[i - 1]))
            };
            let w: Vec<f64> = s.noise.weights.iter().map(|v| round_sig(*v, 6)).collect();
            let sum: f64 = w.iter().sum();
            let w: Vec<f64> = w.iter().map(|v| v / sum).collect();
            (
                above,
                w,
                s.noise.means.iter().map(|m| round_sig(m / 2.0, 6)).collect(),
                s.noise
                    .sigmas
                    .iter()
                    .map(|v| round_sig(v / std::f64::consts::SQRT_2, 6))
                    .collect(),
            )
        })
        .collect::<Vec<_>>();
    // Segments the snapping merged share one range: keep the first of each bound.
    let mut noise_dedup: Vec<NoiseRange> = Vec::new();
    for n in noise {
        if noise_dedup.last().is_none_or(|l| l.0 < n.0) {
            noise_dedup.push(n);
        }
    }
    let call_cost = |k: NetKind| {
        constant(k).map_or(1e-4, |v| {
            let x = v - c;
            round_sig(x.max(0.0), 6)
        })
    };
    Translation {
        latency,
        bandwidth,
        lat_factor,
        bw_factor,
        os,
        or,
        ois,
        noise: noise_dedup,
        wtime: round_sig(c.max(0.0), 6),
        test: call_cost(NetKind::Test),
        iprobe: call_cost(NetKind::Iprobe),
        detached_thresh: detached,
        pieces,
    }
}

/// What `smpirun` predicts for a row of `kind` under a loaded model (the
/// `models` crate's reading of the written file) on the nominal link: the
/// formulas of the README, clock read included.
pub fn predict(model: &models::NetworkModel, t: &Translation, kind: NetKind, size: f64) -> f64 {
    let s = size + ENVELOPE;
    let comm = model.lat_factor.value(s) * t.latency + s / (model.bw_factor.value(s) * t.bandwidth);
    let detached = size < t.detached_thresh as f64;
    t.wtime
        + match kind {
            NetKind::Pingpong if detached => 2.0 * (model.os.cost(size) + comm + model.or.cost(size)),
            NetKind::Pingpong => 2.0 * comm,
            NetKind::Send if detached => model.os.cost(size),
            NetKind::Recv if detached => model.or.cost(size),
            NetKind::Send | NetKind::Recv => comm,
            NetKind::Isend => model.ois.cost(size),
            NetKind::Test => t.test,
            NetKind::Iprobe => t.iprobe,
            NetKind::Wtime => t.wtime,
        }
}

#[cfg(test)]
mod tests;
