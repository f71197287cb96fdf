//! Medians, spreads and which comparisons the replicas cannot settle.
//!
//! With the handful of replicas a simulation study affords (3 to 10), the
//! spread of a point is its **range**: the smallest and the largest value of
//! its successful replicas. A quantile interval would claim a precision that
//! five values do not have. Two points are *distinguishable* only if their
//! ranges do not overlap; otherwise the report flags the comparison: the
//! difference of their medians is within what a femtosecond of latency (or
//! another noise seed) can produce, so it says nothing about the parameter.

use std::collections::BTreeMap;

use crate::results::{Row, Status};

/// Summary of one point's replicas for one metric.
#[derive(Clone, Debug, PartialEq)]
pub struct Spread {
    /// Successful replicas with a value.
    pub n: usize,
    /// Median.
    pub median: f64,
    /// Smallest value.
    pub min: f64,
    /// Largest value.
    pub max: f64,
}

impl Spread {
    /// `max − min` relative to the median, in percent.
    pub fn relative_range(&self) -> f64 {
        if self.median == 0.0 {
            0.0
        } else {
            100.0 * (self.max - self.min) / self.median.abs()
        }
    }

    /// True if the two ranges share a value.
    pub fn overlaps(&self, other: &Spread) -> bool {
        self.min <= other.max && other.min <= self.max
    }
}

/// Median of values (sorted copy; mean of the middle two for an even count).
pub fn median(values: &[f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

/// The spread of `values` (`None` if there are none).
pub fn spread(values: &[f64]) -> Option<Spread> {
    let median = median(values)?;
    Some(Spread {
        n: values.len(),
        median,
        min: values.iter().copied().fold(f64::INFINITY, f64::min),
        max: values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    })
}

/// One point's rows, gathered.
#[derive(Clone, Debug)]
pub struct PointRows<'a> {
    /// Point id.
    pub point_id: String,
    /// Axis name → value label.
    pub axes: BTreeMap<String, String>,
    /// Its rows (all replicas, failed ones too).
    pub rows: Vec<&'a Row>,
}

impl PointRows<'_> {
    /// Values of `metric` over the successful replicas.
    pub fn values(&self, metric: &str) -> Vec<f64> {
        self.rows
            .iter()
            .filter(|r| r.status == Status::Ok)
            .filter_map(|r| r.metric(metric))
            .collect()
    }

    /// Number of failed replicas.
    pub fn failed(&self) -> usize {
        self.rows.iter().filter(|r| r.status == Status::Failed).count()
    }
}

/// Rows grouped by point, in order of first appearance.
pub fn by_point(rows: &[Row]) -> Vec<PointRows<'_>> {
    let mut out: Vec<PointRows> = Vec::new();
    for r in rows {
        match out.iter_mut().find(|p| p.point_id == r.point_id) {
            Some(p) => p.rows.push(r),
            None => out.push(PointRows {
                point_id: r.point_id.clone(),
                axes: r.axes.clone(),
                rows: vec![r],
            }),
        }
    }
    out
}

/// A comparison of two points that differ on one axis only (adjacent values).
#[derive(Clone, Debug)]
pub struct Comparison {
    /// The axis that differs.
    pub axis: String,
    /// The other axes' values (what both points share).
    pub fixed: BTreeMap<String, String>,
    /// The two values of the axis.
    pub from: String,
    /// See `from`.
    pub to: String,
    /// Their spreads.
    pub a: Spread,
    /// See `a`.
    pub b: Spread,
}

impl Comparison {
    /// Change of the median from `from` to `to`, in percent.
    pub fn change(&self) -> f64 {
        if self.a.median == 0.0 {
            0.0
        } else {
            100.0 * (self.b.median - self.a.median) / self.a.median.abs()
        }
    }

    /// True if the spreads overlap (or a point has a single replica: no spread to compare).
    pub fn unresolved(&self) -> bool {
        self.a.overlaps(&self.b) || self.a.n < 2 || self.b.n < 2
    }
}

/// Every comparison between points adjacent along one axis (`axes`: name and value order).
pub fn comparisons(points: &[PointRows], axes: &[(String, Vec<String>)], metric: &str) -> Vec<Comparison> {
    let mut out = Vec::new();
    for (axis, values) in axes {
        for w in values.windows(2) {
            for p in points {
                if p.axes.get(axis) != Some(&w[0]) {
                    continue;
                }
                let mut fixed = p.axes.clone();
                fixed.remove(axis);
                let Some(q) = points.iter().find(|q| {
                    q.axes.get(axis) == Some(&w[1]) && {
                        let mut f = q.axes.clone();
                        f.remove(axis);
                        f == fixed
                    }
                }) else {
                    continue;
                };
                let (Some(a), Some(b)) = (spread(&p.values(metric)), spread(&q.values(metric))) else {
                    continue;
                };
                out.push(Comparison {
                    axis: axis.clone(),
                    fixed,
                    from: w[0].clone(),
                    to: w[1].clone(),
                    a,
                    b,
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians_and_ranges() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median(&[]), None);
        let a = spread(&[1.0, 2.0, 3.0]).unwrap();
        let b = spread(&[2.5, 4.0]).unwrap();
        let c = spread(&[3.5, 4.0]).unwrap();
        assert!(a.overlaps(&b) && !a.overlaps(&c));
        assert_eq!(a.relative_range(), 100.0);
    }
}
