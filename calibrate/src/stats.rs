//! Descriptive statistics and confidence intervals shared by the fitter and the
//! validation tool: mean with a t interval, median with a nonparametric interval
//! (Le Boudec's rank formula, exact binomial ranks for small samples),
//! quantiles, coefficient of variation, the means for costs and rates, Tukey's
//! filter, and quantiles of the usual reference distributions.
//!
//! The formulas are in the crate README ("Statistics"); every function takes
//! plain slices and returns plain numbers, so a report can use them directly.

use statrs::distribution::{
    Binomial, ChiSquared, ContinuousCDF, DiscreteCDF, FisherSnedecor, Normal, StudentsT,
};

/// A point estimate with a two-sided confidence interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Interval {
    /// The estimate (mean or median).
    pub estimate: f64,
    /// Lower end of the interval.
    pub low: f64,
    /// Upper end of the interval.
    pub high: f64,
    /// The confidence level actually reached (for the exact median interval it
    /// is at least the level asked for).
    pub level: f64,
}

/// Arithmetic mean; `NaN` for an empty slice.
pub fn mean(x: &[f64]) -> f64 {
    if x.is_empty() {
        return f64::NAN;
    }
    // Welford's running mean: stable for long samples of similar values.
    let mut m = 0.0;
    for (i, v) in x.iter().enumerate() {
        m += (v - m) / (i + 1) as f64;
    }
    m
}

/// Sample variance (denominator n − 1), by Welford's update; `NaN` below 2 values.
pub fn variance(x: &[f64]) -> f64 {
    if x.len() < 2 {
        return f64::NAN;
    }
    let (mut m, mut m2) = (0.0, 0.0);
    for (i, v) in x.iter().enumerate() {
        let d = v - m;
        m += d / (i + 1) as f64;
        m2 += d * (v - m);
    }
    m2 / (x.len() - 1) as f64
}

/// Sample standard deviation (denominator n − 1).
pub fn std_dev(x: &[f64]) -> f64 {
    variance(x).sqrt()
}

/// Coefficient of variation s / x̄.
pub fn coefficient_of_variation(x: &[f64]) -> f64 {
    std_dev(x) / mean(x)
}

/// Harmonic mean, the right mean for rates (Hoefler & Belli rule 3).
pub fn harmonic_mean(x: &[f64]) -> f64 {
    x.len() as f64 / x.iter().map(|v| 1.0 / v).sum::<f64>()
}

/// Geometric mean, only a fallback for ratios (Hoefler & Belli rule 4).
pub fn geometric_mean(x: &[f64]) -> f64 {
    (x.iter().map(|v| v.ln()).sum::<f64>() / x.len() as f64).exp()
}

/// A sorted copy (NaNs last).
pub fn sorted(x: &[f64]) -> Vec<f64> {
    let mut s = x.to_vec();
    s.sort_by(f64::total_cmp);
    s
}

/// Quantile `q` in [0, 1] of a **sorted** sample, linear interpolation between
/// order statistics (R's type 7, numpy's default).
pub fn quantile_sorted(s: &[f64], q: f64) -> f64 {
    if s.is_empty() {
        return f64::NAN;
    }
    let h = (s.len() - 1) as f64 * q.clamp(0.0, 1.0);
    let lo = h.floor() as usize;
    let hi = h.ceil() as usize;
    s[lo] + (h - lo as f64) * (s[hi] - s[lo])
}

/// Quantile `q` of an unsorted sample (see [`quantile_sorted`]).
pub fn quantile(x: &[f64], q: f64) -> f64 {
    quantile_sorted(&sorted(x), q)
}

/// Median.
pub fn median(x: &[f64]) -> f64 {
    quantile(x, 0.5)
}

/// Two-sided standard normal quantile z such that P(|Z| ≤ z) = `level`.
pub fn z_two_sided(level: f64) -> f64 {
    Normal::standard().inverse_cdf(0.5 + level / 2.0)
}

/// Student's t quantile t_{p}(ν).
pub fn t_quantile(p: f64, dof: f64) -> f64 {
    StudentsT::new(0.0, 1.0, dof).expect("dof > 0").inverse_cdf(p)
}

/// F quantile F⁻¹(p; ν₁, ν₂) (lower tail, as R's `qf`).
pub fn f_quantile(p: f64, d1: f64, d2: f64) -> f64 {
    FisherSnedecor::new(d1, d2).expect("dof > 0").inverse_cdf(p)
}

/// F cumulative distribution function (R's `pf`).
pub fn f_cdf(x: f64, d1: f64, d2: f64) -> f64 {
    FisherSnedecor::new(d1, d2).expect("dof > 0").cdf(x)
}

/// χ² quantile (lower tail).
pub fn chi2_quantile(p: f64, dof: f64) -> f64 {
    ChiSquared::new(dof).expect("dof > 0").inverse_cdf(p)
}

/// Mean with the t interval x̄ ± t_{(1+level)/2}(n−1)·s/√n (valid for iid data
/// whose sample mean is close to normal). `None` below 2 values.
pub fn mean_ci(x: &[f64], level: f64) -> Option<Interval> {
    if x.len() < 2 {
        return None;
    }
    let n = x.len() as f64;
    let m = mean(x);
    let half = t_quantile(0.5 + level / 2.0, n - 1.0) * std_dev(x) / n.sqrt();
    Some(Interval {
        estimate: m,
        low: m - half,
        high: m + half,
        level,
    })
}

/// 1-based ranks (j, k) of Le Boudec's normal-approximation interval for the
/// median: j = ⌊(n − z√n)/2⌋, k = ⌈1 + (n + z√n)/2⌉. `None` when j < 1 or
/// k > n (the approximation does not apply: n < 8 at 95%).
pub fn median_ci_ranks_le_boudec(n: usize, level: f64) -> Option<(usize, usize)> {
    let nf = n as f64;
    let z = z_two_sided(level);
    let j = ((nf - z * nf.sqrt()) / 2.0).floor();
    let k = (1.0 + (nf + z * nf.sqrt()) / 2.0).ceil();
    (j >= 1.0 && k <= nf).then_some((j as usize, k as usize))
}

/// 1-based ranks (j, n+1−j) of the exact binomial (distribution-free) interval
/// for the median: the largest j with P(Bin(n, ½) < j) ≤ (1 − level)/2, so that
/// P(x₍ⱼ₎ ≤ median ≤ x₍ₙ₊₁₋ⱼ₎) = 1 − 2·P(Bin(n, ½) ≤ j − 1) ≥ level. Also returns
/// that coverage. `None` when even [x₍₁₎, x₍ₙ₎] does not reach `level`
/// (n ≤ 5 at 95%).
pub fn median_ci_ranks_exact(n: usize, level: f64) -> Option<(usize, usize, f64)> {
    if n == 0 {
        return None;
    }
    let b = Binomial::new(0.5, n as u64).expect("p in [0, 1]");
    let alpha_half = (1.0 - level) / 2.0;
    let mut best = None;
    for j in 1..=n.div_ceil(2) {
        // P(Bin < j) = P(Bin <= j-1)
        let tail = b.cdf((j - 1) as u64);
        if tail <= alpha_half + 1e-12 {
            best = Some((j, n + 1 - j, 1.0 - 2.0 * tail));
        } else {
            break;
        }
    }
    best
}

/// Median with a nonparametric confidence interval: exact binomial ranks up to
/// `n` = 100 (and wherever Le Boudec's ranks fall outside the sample), Le
/// Boudec's ranks above. `None` when no interval reaches `level` (n ≤ 5 at 95%:
/// Hoefler & Belli's "n > 5").
pub fn median_ci(x: &[f64], level: f64) -> Option<Interval> {
    let s = sorted(x);
    let n = s.len();
    let (j, k, reached) = if n <= 100 {
        median_ci_ranks_exact(n, level)?
    } else {
        match median_ci_ranks_le_boudec(n, level) {
            Some((j, k)) => (j, k, level),
            None => median_ci_ranks_exact(n, level)?,
        }
    };
    Some(Interval {
        estimate: quantile_sorted(&s, 0.5),
        low: s[j - 1],
        high: s[k - 1],
        level: reached,
    })
}

/// Tukey's filter: keeps values in [Q1 − k·IQR, Q3 + k·IQR] and says how many
/// were removed (Hoefler & Belli: always report the count). Only for summaries;
/// the fitter never drops calibration data.
pub fn tukey_filter(x: &[f64], k: f64) -> (Vec<f64>, usize) {
    let s = sorted(x);
    let q1 = quantile_sorted(&s, 0.25);
    let q3 = quantile_sorted(&s, 0.75);
    let (lo, hi) = (q1 - k * (q3 - q1), q3 + k * (q3 - q1));
    let kept: Vec<f64> = x.iter().copied().filter(|v| *v >= lo && *v <= hi).collect();
    let removed = x.len() - kept.len();
    (kept, removed)
}

/// Spearman's rank correlation of paired samples (ties get their average rank)
/// with its two-sided p-value from the t approximation
/// t = ρ·√((n−2)/(1−ρ²)) on n−2 degrees of freedom (good from about 10 pairs).
/// `None` below 4 pairs or when one sample is constant.
pub fn spearman(x: &[f64], y: &[f64]) -> Option<(f64, f64)> {
    let n = x.len().min(y.len());
    if n < 4 {
        return None;
    }
    let (rx, ry) = (ranks(&x[..n]), ranks(&y[..n]));
    let (mx, my) = (mean(&rx), mean(&ry));
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for (a, b) in rx.iter().zip(&ry) {
        sxy += (a - mx) * (b - my);
        sxx += (a - mx) * (a - mx);
        syy += (b - my) * (b - my);
    }
    if sxx <= 0.0 || syy <= 0.0 {
        return None;
    }
    let rho = (sxy / (sxx * syy).sqrt()).clamp(-1.0, 1.0);
    let dof = (n - 2) as f64;
    let p = if rho.abs() >= 1.0 {
        0.0
    } else {
        let t = rho * (dof / (1.0 - rho * rho)).sqrt();
        2.0 * (1.0 - StudentsT::new(0.0, 1.0, dof).expect("dof > 0").cdf(t.abs()))
    };
    Some((rho, p))
}

/// Ranks 1..=n, ties sharing their average rank.
fn ranks(x: &[f64]) -> Vec<f64> {
    let mut idx: Vec<usize> = (0..x.len()).collect();
    idx.sort_by(|&a, &b| x[a].total_cmp(&x[b]));
    let mut r = vec![0.0; x.len()];
    let mut i = 0;
    while i < idx.len() {
        let mut j = i;
        while j + 1 < idx.len() && x[idx[j + 1]] == x[idx[i]] {
            j += 1;
        }
        let avg = (i + j) as f64 / 2.0 + 1.0;
        for &k in &idx[i..=j] {
            r[k] = avg;
        }
        i = j + 1;
    }
    r
}

#[cfg(test)]
mod tests;
