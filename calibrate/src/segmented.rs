//! Segmented (piecewise-linear) regression of duration against message size
//! with breakpoints found from the data (methodology-digest §2 item 4; the
//! thesis's M′ model).
//!
//! Per distinct size the calls are aggregated (valid because the design is
//! shuffled); the aggregates, sorted by size, are cut into contiguous segments
//! by exact dynamic programming on a robust search aggregate (the mean of the
//! faster half of each size's calls, winsorised against a pilot fit), weighted
//! by the local noise scale; the number of segments minimises BIC; each segment's
//! line is then fitted to the per-size means (or medians) of all calls. The
//! crate README ("Segmented regression") gives the steps, the likelihood, the
//! penalty and the breakpoint interval.

use crate::mixture::{fit_mixture, MixtureFit};
use crate::regress::least_squares;
use crate::stats;

/// Which per-size aggregate the lines are fitted to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Center {
    /// Per-size mean (the simulator sums delays, so expected times add up).
    Mean,
    /// Per-size median (typical call; robust to rare long preemptions).
    Median,
}

/// The calls of one message size.
#[derive(Debug, Clone, PartialEq)]
pub struct SizeAggregate {
    /// Message size (bytes).
    pub size: f64,
    /// Number of calls.
    pub n: usize,
    /// Mean duration (s).
    pub mean: f64,
    /// Median duration (s).
    pub median: f64,
    /// The value the lines are fitted to (mean or median).
    pub center: f64,
    /// Robust scale of the calls: 1.4826 × median absolute deviation (the
    /// standard deviation for normal calls; 0 for a single call).
    pub mad: f64,
}

/// Options of [`fit_segmented`].
#[derive(Debug, Clone, Copy)]
pub struct SegmentOptions {
    /// Largest number of segments tried.
    pub max_segments: usize,
    /// Fewest distinct sizes in a segment. A segment also needs 3 % of the
    /// distinct sizes or 3 % of the calls: a short segment can bend towards a
    /// few noisy sizes, but not towards sizes measured hundreds of times (the
    /// exponential design's smallest sizes: 1–10 B are ten sizes and 14 % of
    /// the calls, and Open MPI's shared-memory round trip steps from 1.01 to
    /// 1.17 µs between 10 and 11 B on this project's VM).
    pub min_sizes: usize,
    /// Aggregate fitted.
    pub center: Center,
    /// Smallest duration or noise scale used in a weight (the timer resolution).
    pub duration_floor: f64,
    /// Largest number of mixture components per segment.
    pub max_components: usize,
    /// Smallest intercept a segment's line may have (s; `-∞`: free). A line
    /// the model must hold as an SMPI transfer time (latency and bandwidth
    /// positive) cannot start below the clock read it includes: with the
    /// bound, the search and the lines are fitted as such (a convex stretch
    /// is cut into more, steeper lines) instead of being patched after the fit.
    pub min_intercept: f64,
    /// Seed of the mixture fits.
    pub seed: u64,
}

impl Default for SegmentOptions {
    fn default() -> Self {
        Self {
            max_segments: 14,
            min_sizes: 8,
            center: Center::Mean,
            duration_floor: 1e-9,
            max_components: 4,
            min_intercept: f64::NEG_INFINITY,
            seed: 1,
        }
    }
}

/// A breakpoint between two segments, in bytes.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Breakpoint {
    /// Estimate of the first size of the upper segment: the geometric mean of
    /// the two calibrated sizes around the cut.
    pub estimate: f64,
    /// Largest calibrated size of the lower segment.
    pub last_below: f64,
    /// Smallest calibrated size of the upper segment.
    pub first_above: f64,
    /// Approximate 95 % interval of the switch (profile likelihood, χ²₁).
    pub ci_low: f64,
    /// Upper end of that interval.
    pub ci_high: f64,
}

/// One fitted segment: `duration ≈ intercept + slope · size`.
#[derive(Debug, Clone, PartialEq)]
pub struct Segment {
    /// Index of the first aggregate (in size order).
    pub first: usize,
    /// One past the last aggregate.
    pub end: usize,
    /// Smallest calibrated size in the segment.
    pub min_size: f64,
    /// Largest calibrated size in the segment.
    pub max_size: f64,
    /// Intercept (s).
    pub intercept: f64,
    /// The intercept sits on [`SegmentOptions::min_intercept`] (the free fit
    /// would have gone below it; its standard error is then 0).
    pub intercept_at_bound: bool,
    /// Standard error of the intercept.
    pub se_intercept: f64,
    /// Slope (s/B).
    pub slope: f64,
    /// Standard error of the slope.
    pub se_slope: f64,
    /// Weighted R² of the aggregates.
    pub r2: f64,
    /// Weighted residual sum of squares per degree of freedom: about 1 when the
    /// line explains the per-size aggregates up to their own noise.
    pub dispersion: f64,
    /// Number of distinct sizes.
    pub sizes: usize,
    /// Number of calls.
    pub calls: usize,
    /// Gaussian mixture of the per-call residuals (s).
    pub noise: MixtureFit,
}

impl Segment {
    /// The line at `size`.
    pub fn at(&self, size: f64) -> f64 {
        self.intercept + self.slope * size
    }
}

/// A piecewise-linear fit of one measure kind.
#[derive(Debug, Clone, PartialEq)]
pub struct SegmentedFit {
    /// The aggregates, sorted by size.
    pub aggregates: Vec<SizeAggregate>,
    /// Segments in size order.
    pub segments: Vec<Segment>,
    /// Breakpoints between consecutive segments.
    pub breakpoints: Vec<Breakpoint>,
    /// BIC for 1, 2, … segments (∞ where not feasible).
    pub bic: Vec<f64>,
    /// Where the variances of the aggregates (up to each segment's scale) came from.
    pub variance: VarianceSource,
}

/// How the variance of the per-size aggregates was estimated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VarianceSource {
    /// From the spread of each size's calls, smoothed over neighbouring sizes.
    Replicates,
    /// Proportional to the squared duration (too few repeated sizes).
    Relative,
}

impl SegmentedFit {
    /// Index of the segment that covers `size` (sizes at or above a breakpoint
    /// estimate belong to the upper segment).
    pub fn segment_index(&self, size: f64) -> usize {
        self.breakpoints.iter().filter(|b| size >= b.estimate).count()
    }

    /// The fitted duration at `size`.
    pub fn at(&self, size: f64) -> f64 {
        self.segments[self.segment_index(size)].at(size)
    }

    /// Smallest and largest calibrated sizes.
    pub fn range(&self) -> (f64, f64) {
        (
            self.aggregates.first().map_or(f64::NAN, |a| a.size),
            self.aggregates.last().map_or(f64::NAN, |a| a.size),
        )
    }
}

/// Groups `(size, duration)` calls by size, sorted by size.
pub fn aggregate(points: &[(f64, f64)], center: Center) -> Vec<SizeAggregate> {
    let mut sorted: Vec<(f64, f64)> = points.to_vec();
    sorted.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
    let mut out = Vec::new();
    let mut i = 0;
    while i < sorted.len() {
        let size = sorted[i].0;
        let j = i + sorted[i..].iter().take_while(|p| p.0 == size).count();
        let d: Vec<f64> = sorted[i..j].iter().map(|p| p.1).collect();
        let mean = stats::mean(&d);
        let median = stats::quantile_sorted(&d, 0.5);
        let dev: Vec<f64> = d.iter().map(|v| (v - median).abs()).collect();
        let mad = 1.4826 * stats::median(&dev);
        out.push(SizeAggregate {
            size,
            n: d.len(),
            mean,
            median,
            center: match center {
                Center::Mean => mean,
                Center::Median => median,
            },
            mad,
        });
        i = j;
    }
    out
}

/// Running weighted line fit: West's incremental update of the weighted means
/// and co-moments (stable, one pass, O(1) per added point).
#[derive(Debug, Clone, Copy, Default)]
struct Running {
    w: f64,
    mx: f64,
    my: f64,
    sxx: f64,
    sxy: f64,
    syy: f64,
    count: usize,
}

impl Running {
    fn push(&mut self, x: f64, y: f64, w: f64) {
        self.count += 1;
        self.w += w;
        let dx = x - self.mx;
        let dy = y - self.my;
        self.mx += w / self.w * dx;
        self.my += w / self.w * dy;
        self.sxx += w * dx * (x - self.mx);
        self.sxy += w * dx * (y - self.my);
        self.syy += w * dy * (y - self.my);
    }

    /// Weighted residual sum of squares of the best line.
    fn rss(&self) -> f64 {
        let r = if self.sxx > 0.0 {
            self.syy - self.sxy * self.sxy / self.sxx
        } else {
            self.syy
        };
        r.max(0.0)
    }
}

/// Weighted residual sum of squares of a segment: with the weights carrying
/// the heteroscedasticity, the segments share one noise scale, so the cost of
/// a segmentation is the sum of its segments' (the DP's additive cost). With
/// an intercept bound the line is the best one whose intercept is at least
/// `floor`: the free line when it satisfies the bound, else the best line
/// through (0, floor) (a convex problem with one linear constraint: its
/// optimum is on the boundary when the free one is outside).
fn segment_cost(r: &Running, floor: f64) -> f64 {
    match bounded_line(r, floor) {
        None => r.rss(),
        Some((_, rss)) => rss,
    }
}

/// The slope and weighted RSS of the best line through (0, `floor`) when the
/// free line's intercept is below `floor`; `None` when the free line is
/// allowed. Raw moments about the origin from the running centred ones.
fn bounded_line(r: &Running, floor: f64) -> Option<(f64, f64)> {
    if !floor.is_finite() || r.w <= 0.0 {
        return None;
    }
    let slope = if r.sxx > 0.0 { r.sxy / r.sxx } else { 0.0 };
    if r.my - slope * r.mx >= floor {
        return None;
    }
    let dy = r.my - floor;
    let sxx0 = r.sxx + r.w * r.mx * r.mx;
    let sxy0 = r.sxy + r.w * r.mx * dy;
    let syy0 = r.syy + r.w * dy * dy;
    if sxx0 <= 0.0 {
        return Some((0.0, syy0.max(0.0)));
    }
    Some((sxy0 / sxx0, (syy0 - sxy0 * sxy0 / sxx0).max(0.0)))
}

/// Smallest mean weighted squared residual in the likelihood (keeps the log
/// finite on noise-free data).
const MIN_SCALE: f64 = 1e-12;

/// −2·log-likelihood (up to a constant) of `m` aggregates whose weighted
/// residual sum of squares is `rss`, with one common scale: m·ln(rss/m).
fn neg2_loglik(rss: f64, m: usize) -> f64 {
    m as f64 * (rss / m as f64).max(MIN_SCALE).ln()
}

/// Noise scale of each aggregate's calls as the search uses it: the running
/// median of the per-size robust scales over the neighbouring sizes. It does
/// not use the size's own spread, so a size's weight does not depend on its own
/// noise (that would bias the fit towards sizes whose calls happened to be
/// fast, and split lines where the sizes start repeating). `None` when fewer
/// than a quarter of the sizes have 3 calls or more.
fn smoothed_scale(aggs: &[SizeAggregate], floor: f64) -> Option<Vec<f64>> {
    let m = aggs.len();
    let repeated: Vec<usize> = (0..m).filter(|i| aggs[*i].n >= 3).collect();
    if repeated.len() * 4 < m || repeated.len() < 3 {
        return None;
    }
    let half = (m / 40).max(3);
    Some(
        (0..m)
            .map(|i| {
                // The `2·half + 1` repeated sizes nearest to i in size order.
                let at = repeated.partition_point(|r| *r < i);
                let lo = at.saturating_sub(half);
                let hi = (at + half + 1).min(repeated.len());
                let near: Vec<f64> = repeated[lo..hi].iter().map(|j| aggs[*j].mad).collect();
                stats::median(&near).max(floor).max(1e-6 * aggs[i].median.abs())
            })
            .collect(),
    )
}

/// Which runs of aggregates may form a segment (see
/// [`SegmentOptions::min_sizes`]).
struct SegmentRule {
    /// Fewest aggregates (distinct sizes) in any segment.
    min_sizes: usize,
    /// Aggregates that suffice whatever the calls.
    enough_sizes: usize,
    /// Calls that suffice with `min_sizes` aggregates.
    enough_calls: usize,
    /// `calls_before[i]`: calls of aggregates `0..i`.
    calls_before: Vec<usize>,
}

impl SegmentRule {
    fn new(min_sizes: usize, calls: &[usize]) -> Self {
        let m = calls.len();
        let mut calls_before = vec![0; m + 1];
        for (i, c) in calls.iter().enumerate() {
            calls_before[i + 1] = calls_before[i] + c;
        }
        SegmentRule {
            min_sizes: min_sizes.max(3),
            enough_sizes: min_sizes.max((0.03 * m as f64).ceil() as usize).max(3),
            enough_calls: (0.03 * calls_before[m] as f64).ceil() as usize,
            calls_before,
        }
    }

    /// Whether aggregates `s..e` may form a segment.
    fn allows(&self, s: usize, e: usize) -> bool {
        let n = e - s;
        n >= self.enough_sizes
            || (n >= self.min_sizes && self.calls_before[e] - self.calls_before[s] >= self.enough_calls)
    }
}

/// Exact dynamic programming over contiguous segments the rule allows:
/// `best[k][e]` is the least total weighted RSS of cutting aggregates `0..e`
/// into `k` lines, `from[k][e]` where the last one starts. Starts are visited
/// in increasing order, so `best[k-1][s]` is final when `s` is reached; each
/// (start, end) cost is computed once, incrementally.
fn dp(
    xs: &[f64],
    ys: &[f64],
    ws: &[f64],
    rule: &SegmentRule,
    kmax: usize,
    floor: f64,
) -> (Vec<Vec<f64>>, Vec<Vec<usize>>) {
    let m = xs.len();
    let inf = f64::INFINITY;
    let mut best = vec![vec![inf; m + 1]; kmax + 1];
    let mut from = vec![vec![usize::MAX; m + 1]; kmax + 1];
    best[0][0] = 0.0;
    for s in 0..m {
        if (1..=kmax).all(|k| best[k - 1][s] == inf) {
            continue;
        }
        let mut run = Running::default();
        for e in s + 1..=m {
            run.push(xs[e - 1], ys[e - 1], ws[e - 1]);
            if !rule.allows(s, e) {
                continue;
            }
            let c = segment_cost(&run, floor);
            for k in 1..=kmax {
                let prev = best[k - 1][s];
                if prev < inf && prev + c < best[k][e] {
                    best[k][e] = prev + c;
                    from[k][e] = s;
                }
            }
        }
    }
    (best, from)
}

/// The starts of the `k` segments of the DP's best cut of all `m` aggregates,
/// followed by `m`.
fn cuts_of(from: &[Vec<usize>], k: usize, m: usize) -> Vec<usize> {
    let mut cuts = vec![m];
    let mut e = m;
    for j in (1..=k).rev() {
        let s = from[j][e];
        cuts.push(s);
        e = s;
    }
    cuts.reverse();
    cuts
}

/// Limits each aggregate's deviation from a pilot fit to 2.5 robust standard
/// deviations (1.4826·MAD of the weighted deleted residuals). The pilot is the most
/// detailed segmentation (`kmax` lines), which follows every real regime but
/// cannot fit a lone extreme size (segments hold `min_sizes` sizes at least);
/// without this, least squares lets such a size, or a cluster of skewed means,
/// pull a short spurious segment around itself.
fn winsorized(xs: &[f64], ys: &[f64], ws: &[f64], rule: &SegmentRule, kmax: usize, floor: f64) -> Vec<f64> {
    let m = xs.len();
    let (best, from) = dp(xs, ys, ws, rule, kmax, floor);
    let Some(k) = (1..=kmax).rev().find(|k| best[*k][m] < f64::INFINITY) else {
        return ys.to_vec();
    };
    let cuts = cuts_of(&from, k, m);
    // Per aggregate: the pilot line's prediction without that aggregate (its
    // deleted residual r/(1 − h), h the leverage), so that a lone extreme size
    // at the end of a short pilot segment, which tilts the line towards itself,
    // is still seen as extreme.
    let mut loo = vec![0.0; m];
    for j in 0..k {
        let mut r = Running::default();
        for i in cuts[j]..cuts[j + 1] {
            r.push(xs[i], ys[i], ws[i]);
        }
        let slope = if r.sxx > 0.0 { r.sxy / r.sxx } else { 0.0 };
        let bounded = bounded_line(&r, floor);
        for i in cuts[j]..cuts[j + 1] {
            let fit = match bounded {
                Some((b, _)) => floor + b * xs[i],
                None => r.my + slope * (xs[i] - r.mx),
            };
            let dx = xs[i] - r.mx;
            let h = ws[i] * (1.0 / r.w + if r.sxx > 0.0 { dx * dx / r.sxx } else { 0.0 });
            loo[i] = if h < 0.99 {
                ys[i] - (ys[i] - fit) / (1.0 - h)
            } else {
                fit
            };
        }
    }
    let z: Vec<f64> = (0..m).map(|i| (ys[i] - loo[i]) * ws[i].sqrt()).collect();
    let tau = 1.4826 * stats::median(&z.iter().map(|v| v.abs()).collect::<Vec<_>>());
    if tau.is_nan() || tau <= 0.0 {
        return ys.to_vec();
    }
    (0..m)
        .map(|i| {
            if z[i].abs() > 2.5 * tau {
                loo[i] + z[i].signum() * 2.5 * tau / ws[i].sqrt()
            } else {
                ys[i]
            }
        })
        .collect()
}

/// Fits the piecewise-linear model to `(size, duration)` calls. Needs at least 3
/// distinct sizes (the caller checks and reports).
pub fn fit_segmented(points: &[(f64, f64)], opts: &SegmentOptions) -> SegmentedFit {
    let aggregates = aggregate(points, opts.center);
    let m = aggregates.len();
    assert!(
        m >= 3,
        "fit_segmented needs 3 distinct sizes (checked by the caller)"
    );
    let xs: Vec<f64> = aggregates.iter().map(|a| a.size).collect();
    let ys: Vec<f64> = aggregates.iter().map(|a| a.center).collect();
    let floor = opts.duration_floor / 2.0;
    let scale = smoothed_scale(&aggregates, floor);
    let variance = if scale.is_some() {
        VarianceSource::Replicates
    } else {
        VarianceSource::Relative
    };
    let scale = scale.unwrap_or_else(|| {
        aggregates
            .iter()
            .map(|a| a.median.abs().max(opts.duration_floor))
            .collect()
    });
    // Breakpoints are searched on the mean of the faster half of each size's
    // calls: the slow modes of MPI timings (preemptions, a second peak of up to
    // half the calls) add variance and skew, not structure, and skewed
    // aggregates make least squares see regimes in noise, while a protocol or
    // cache regime moves the fast half too. Only the search uses this; the
    // lines and the mixtures use every call.
    let mut by_size: Vec<(f64, f64)> = points.to_vec();
    by_size.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
    let mut search = Vec::with_capacity(m);
    let mut ws = Vec::with_capacity(m);
    let mut i = 0;
    for (a, sc) in aggregates.iter().zip(&scale) {
        let calls = &by_size[i..i + a.n];
        i += a.n;
        // `calls` are sorted by duration within a size (see `aggregate`).
        let kept: Vec<f64> = calls[..a.n.div_ceil(2)].iter().map(|p| p.1).collect();
        search.push(stats::mean(&kept));
        ws.push(kept.len() as f64 / (sc * sc));
    }
    let rule = SegmentRule::new(
        opts.min_sizes,
        &aggregates.iter().map(|a| a.n).collect::<Vec<_>>(),
    );
    let kmax = opts.max_segments.max(1).min(m / rule.min_sizes).max(1);
    let floor = opts.min_intercept;
    let medians = winsorized(&xs, &search, &ws, &rule, kmax, floor);
    let (best, from) = dp(&xs, &medians, &ws, &rule, kmax, floor);
    // BIC: −2 log L + (2k + 2(k − 1) + 1)·ln m: a and b per segment, one scale,
    // and two for each cut, whose position is searched over every gap between
    // sizes (a non-regular parameter; with one, the bimodal noise of the test
    // got a spurious cut in 3 of 20 samples, with two in 3 of 60: README).
    let ln_m = (m as f64).ln();
    let bic: Vec<f64> = (1..=kmax)
        .map(|k| neg2_loglik(best[k][m], m) + (4 * k - 1) as f64 * ln_m)
        .collect();
    let k_best = 1 + bic
        .iter()
        .enumerate()
        .min_by(|a, b| a.1.total_cmp(b.1))
        .map_or(0, |(i, _)| i);
    let cuts = cuts_of(&from, k_best, m); // 0 = cuts[0] < ... < cuts[k] = m

    let mut breakpoints = Vec::new();
    for b in 1..k_best {
        let (s, t, e) = (cuts[b - 1], cuts[b], cuts[b + 1]);
        // Profile of the cut u between its neighbours' outer ends: cost(s, u) +
        // cost(u, e), both built incrementally (a running fit does not depend on
        // the order points are added in).
        let mut left = vec![f64::INFINITY; e + 1];
        let mut run = Running::default();
        for u in s + 1..=e {
            run.push(xs[u - 1], medians[u - 1], ws[u - 1]);
            left[u] = segment_cost(&run, floor);
        }
        let mut right = vec![f64::INFINITY; e + 1];
        let mut run = Running::default();
        for u in (s..e).rev() {
            run.push(xs[u], medians[u], ws[u]);
            right[u] = segment_cost(&run, floor);
        }
        // The rest of the segmentation is fixed: its RSS is the total's minus
        // this pair's.
        let others = best[k_best][m] - (left[t] + right[t]);
        let profile: Vec<(usize, f64)> = (s + rule.min_sizes..=e - rule.min_sizes)
            .filter(|&u| rule.allows(s, u) && rule.allows(u, e))
            .map(|u| (u, neg2_loglik(others + left[u] + right[u], m)))
            .collect();
        let at_t = neg2_loglik(best[k_best][m], m);
        let inside: Vec<usize> = profile
            .iter()
            .filter(|p| p.1 - at_t <= stats::chi2_quantile(0.95, 1.0))
            .map(|p| p.0)
            .collect();
        let lo = *inside.iter().min().unwrap_or(&t);
        let hi = *inside.iter().max().unwrap_or(&t);
        breakpoints.push(Breakpoint {
            estimate: (xs[t - 1] * xs[t]).sqrt(),
            last_below: xs[t - 1],
            first_above: xs[t],
            ci_low: xs[lo - 1],
            ci_high: xs[hi],
        });
    }

    let mut segments = Vec::new();
    for b in 0..k_best {
        let (s, e) = (cuts[b], cuts[b + 1]);
        let names = ["intercept".to_string(), "size".to_string()];
        let mut fit = least_squares(
            &names,
            &[vec![1.0; e - s], xs[s..e].to_vec()],
            &ys[s..e],
            Some(&ws[s..e]),
        );
        let at_bound = floor.is_finite() && fit.coef[0] < floor;
        if at_bound {
            // The line through (0, floor): the slope alone, fitted to y − floor.
            let shifted: Vec<f64> = ys[s..e].iter().map(|y| y - floor).collect();
            let slope_only = least_squares(&names[1..], &[xs[s..e].to_vec()], &shifted, Some(&ws[s..e]));
            fit.coef = vec![floor, slope_only.coef[0]];
            fit.se = vec![0.0, slope_only.se[0]];
            // R² stays centred: against the free fit's total sum of squares.
            let tss = fit.rss / (1.0 - fit.r2);
            fit.r2 = if tss > 0.0 && tss.is_finite() {
                1.0 - slope_only.rss / tss
            } else {
                fit.r2
            };
            fit.rss = slope_only.rss;
        }
        let (lo, hi) = (xs[s], xs[e - 1]);
        let residuals: Vec<f64> = points
            .iter()
            .filter(|p| p.0 >= lo && p.0 <= hi)
            .map(|p| p.1 - (fit.coef[0] + fit.coef[1] * p.0))
            .collect();
        let noise = fit_mixture(
            &residuals,
            opts.max_components,
            opts.duration_floor / 2.0,
            opts.seed ^ (b as u64 + 1),
        );
        segments.push(Segment {
            first: s,
            end: e,
            min_size: lo,
            max_size: hi,
            intercept: fit.coef[0],
            intercept_at_bound: at_bound,
            se_intercept: fit.se[0],
            slope: fit.coef[1],
            se_slope: fit.se[1],
            r2: fit.r2,
            dispersion: fit.rss / (e - s).saturating_sub(2).max(1) as f64,
            sizes: e - s,
            calls: aggregates[s..e].iter().map(|a| a.n).sum(),
            noise,
        });
    }
    SegmentedFit {
        aggregates,
        segments,
        breakpoints,
        bic,
        variance,
    }
}

#[cfg(test)]
mod tests;
