//! Performance non-regression test of calibrations (thesis ch. 9, Chew 1966):
//! is a new calibration summary inside the F-distribution prediction region of
//! the earlier ones?
//!
//! With a reference set of n past observations x₁…xₙ ∈ ℝᵖ (mean x̄, sample
//! covariance S) and m⁽ʳ⁾ the mean of the r newest observations,
//! t = n·r·(n−p) / ((n+r)·(n−1)·p) · (m⁽ʳ⁾ − x̄)ᵀ S⁻¹ (m⁽ʳ⁾ − x̄) follows
//! F(p, n−p) when everything is iid normal; the alarm is t ≥ F⁻¹(γ; p, n−p),
//! and ℒ = 1 − F_cdf(t) is the p-value. For p = 1 this is the interval
//! x̄ ± s·√((1/n + 1/r)·F⁻¹(γ; 1, n−1)) = x̄ ± s·t_{(1+γ)/2}(n−1)·√(1/n + 1/r).
//! n ≤ p gives "insufficient reference", never a division by zero.

use nalgebra::{DMatrix, DVector};

use crate::stats;

/// Outcome of one test.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Verdict {
    /// Inside the region.
    Pass {
        /// The statistic t.
        t: f64,
        /// F⁻¹(γ; p, n−p).
        threshold: f64,
        /// ℒ = 1 − F_cdf(t).
        likelihood: f64,
        /// For p = 1: +1 above the reference mean, −1 below.
        sign: i8,
    },
    /// Outside: an anomaly.
    Alarm {
        /// The statistic t.
        t: f64,
        /// F⁻¹(γ; p, n−p).
        threshold: f64,
        /// ℒ = 1 − F_cdf(t).
        likelihood: f64,
        /// For p = 1: +1 above (red), −1 below (blue).
        sign: i8,
    },
    /// n ≤ p (or fewer history entries than the window needs).
    InsufficientReference {
        /// Reference size.
        n: usize,
        /// Number of factors.
        p: usize,
    },
    /// The reference covariance is singular (e.g. a factor that never varied).
    Degenerate {
        /// Why.
        reason: String,
    },
}

impl Verdict {
    /// True for an alarm.
    pub fn is_alarm(&self) -> bool {
        matches!(self, Verdict::Alarm { .. })
    }
}

/// The test of `recent` (the r newest observations, r = its length) against
/// `reference` (n past observations), each a vector of p factors, at
/// confidence `gamma`.
pub fn chew_test(reference: &[Vec<f64>], recent: &[Vec<f64>], gamma: f64) -> Verdict {
    let n = reference.len();
    let r = recent.len();
    let p = recent.first().map_or(0, Vec::len);
    if r == 0 || p == 0 || n <= p {
        return Verdict::InsufficientReference { n, p };
    }
    let x = DMatrix::from_fn(n, p, |i, j| reference[i][j]);
    let mean = DVector::from_fn(p, |j, _| x.column(j).mean());
    let m = DVector::from_fn(p, |j, _| recent.iter().map(|v| v[j]).sum::<f64>() / r as f64);
    let mut s = DMatrix::zeros(p, p);
    for i in 0..n {
        let d = x.row(i).transpose() - &mean;
        s += &d * d.transpose();
    }
    s /= (n - 1) as f64;
    let diff = &m - &mean;
    let (nf, rf, pf) = (n as f64, r as f64, p as f64);
    let threshold = stats::f_quantile(gamma, pf, nf - pf);
    let sign = if p == 1 {
        if diff[0] >= 0.0 {
            1
        } else {
            -1
        }
    } else {
        0
    };
    let quad = match s.clone().cholesky() {
        Some(c) => diff.dot(&c.solve(&diff)),
        None => {
            // A factor that never varied: any change of it is an anomaly, none is
            // not (p = 1), otherwise the region is undefined.
            if p == 1 && s[(0, 0)] == 0.0 {
                if diff[0] == 0.0 {
                    return Verdict::Pass {
                        t: 0.0,
                        threshold,
                        likelihood: 1.0,
                        sign,
                    };
                }
                return Verdict::Alarm {
                    t: f64::INFINITY,
                    threshold,
                    likelihood: 0.0,
                    sign,
                };
            }
            return Verdict::Degenerate {
                reason:
                    "the reference covariance is singular (a factor is constant or factors are collinear)"
                        .into(),
            };
        }
    };
    let t = nf * rf * (nf - pf) / ((nf + rf) * (nf - 1.0) * pf) * quad;
    let likelihood = 1.0 - stats::f_cdf(t, pf, nf - pf);
    if t >= threshold {
        Verdict::Alarm {
            t,
            threshold,
            likelihood,
            sign,
        }
    } else {
        Verdict::Pass {
            t,
            threshold,
            likelihood,
            sign,
        }
    }
}

/// The p = 1 fluctuation interval (thesis eq. 9.3): x̄ ± s·√((n+r)/(n·r)·F⁻¹(γ; 1, n−1)).
/// `None` for n ≤ 1.
pub fn interval(reference: &[f64], r: usize, gamma: f64) -> Option<(f64, f64)> {
    let n = reference.len();
    if n <= 1 {
        return None;
    }
    let (nf, rf) = (n as f64, r as f64);
    let m = stats::mean(reference);
    let half =
        stats::std_dev(reference) * ((nf + rf) / (nf * rf) * stats::f_quantile(gamma, 1.0, nf - 1.0)).sqrt();
    Some((m - half, m + half))
}

/// One entry of a history: a label (file or date) and its factors.
#[derive(Debug, Clone, PartialEq)]
pub struct Observation {
    /// Label for reports.
    pub label: String,
    /// Factor values by name.
    pub factors: std::collections::BTreeMap<String, f64>,
}

/// The result of testing a new observation on some factors.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct TestResult {
    /// Factor (p = 1) or group name.
    pub name: String,
    /// The factors tested.
    pub factors: Vec<String>,
    /// Window r.
    pub r: usize,
    /// Reference size n.
    pub n: usize,
    /// New value (mean of the window) for p = 1.
    pub value: Option<f64>,
    /// Reference interval for p = 1.
    pub interval: Option<(f64, f64)>,
    /// The verdict.
    pub verdict: Verdict,
}

/// Tests `new` against `history` (oldest first) for each factor alone and for
/// each group, with windows `windows`. A factor missing from an entry leaves
/// that entry out of the factor's (or group's) reference.
pub fn test_all(
    history: &[Observation],
    new: &Observation,
    groups: &std::collections::BTreeMap<String, Vec<String>>,
    windows: &[usize],
    gamma: f64,
) -> Vec<TestResult> {
    let mut out = Vec::new();
    let mut sets: Vec<(String, Vec<String>)> =
        new.factors.keys().map(|k| (k.clone(), vec![k.clone()])).collect();
    for (g, names) in groups {
        let present: Vec<String> = names
            .iter()
            .filter(|n| new.factors.contains_key(*n))
            .cloned()
            .collect();
        if present.len() > 1 {
            sets.push((g.clone(), present));
        }
    }
    for (name, factors) in sets {
        let rows: Vec<Vec<f64>> = history
            .iter()
            .filter_map(|o| {
                factors
                    .iter()
                    .map(|f| o.factors.get(f).copied())
                    .collect::<Option<Vec<f64>>>()
            })
            .collect();
        let newest: Vec<f64> = factors.iter().map(|f| new.factors[f]).collect();
        for &r in windows {
            let (reference, recent) = if rows.len() + 1 >= r {
                let cut = rows.len() + 1 - r;
                let mut recent = rows[cut..].to_vec();
                recent.push(newest.clone());
                (rows[..cut].to_vec(), recent)
            } else {
                (Vec::new(), vec![newest.clone()])
            };
            let verdict = if rows.len() + 1 < r {
                Verdict::InsufficientReference {
                    n: 0,
                    p: factors.len(),
                }
            } else {
                chew_test(&reference, &recent, gamma)
            };
            let single = factors.len() == 1;
            let col: Vec<f64> = reference.iter().map(|v| v[0]).collect();
            out.push(TestResult {
                name: name.clone(),
                factors: factors.clone(),
                r,
                n: reference.len(),
                value: single.then(|| recent.iter().map(|v| v[0]).sum::<f64>() / recent.len() as f64),
                interval: if single { interval(&col, r, gamma) } else { None },
                verdict,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests;
