//! Linear least squares (ordinary or weighted) on named term columns, with
//! standard errors, R² and aliased-term detection.
//!
//! Columns are scaled to unit root-mean-square before solving (compute terms
//! span 1 to 10¹⁰), solved by Householder QR (backward stable, no normal
//! equations), and unscaled afterwards. A column that is (numerically) a linear
//! combination of the columns before it is *aliased*, as R's `lm` reports: it
//! gets no coefficient and the fit goes on without it (dtrsm's `K` equals `M` or
//! `N`, so some of its polynomial terms are always aliased).

use nalgebra::{DMatrix, DVector};

/// One least-squares fit.
#[derive(Debug, Clone, PartialEq)]
pub struct LinearFit {
    /// Term names, in column order.
    pub names: Vec<String>,
    /// Coefficients (0 for aliased terms).
    pub coef: Vec<f64>,
    /// Standard errors (0 for aliased terms).
    pub se: Vec<f64>,
    /// True for terms left out because they are aliased with earlier ones.
    pub aliased: Vec<bool>,
    /// Weighted residual sum of squares Σ wᵢ rᵢ².
    pub rss: f64,
    /// Residual degrees of freedom n − (number of estimated terms).
    pub dof: usize,
    /// Number of observations.
    pub n: usize,
    /// Coefficient of determination (weighted; centred when the first column is
    /// constant, uncentred otherwise).
    pub r2: f64,
    /// Residual scale √(rss / dof) (in the weighted metric).
    pub sigma: f64,
}

impl LinearFit {
    /// The fitted value at one row of term values.
    pub fn predict(&self, row: &[f64]) -> f64 {
        self.coef.iter().zip(row).map(|(c, x)| c * x).sum()
    }

    /// The coefficient of term `name`, if present and not aliased.
    pub fn coefficient(&self, name: &str) -> Option<(f64, f64)> {
        let i = self.names.iter().position(|n| n == name)?;
        (!self.aliased[i]).then(|| (self.coef[i], self.se[i]))
    }

    /// Number of estimated (not aliased) terms.
    pub fn rank(&self) -> usize {
        self.aliased.iter().filter(|a| !**a).count()
    }
}

/// Relative norm below which a scaled column counts as aliased.
const ALIAS_TOLERANCE: f64 = 1e-9;

/// Fits `y ≈ Σ coef_j · columns[j]` by least squares, weighted by `weights` when
/// given (each weight ≥ 0, proportional to 1/variance). Panics if the columns
/// and `y` have different lengths (a caller bug). With fewer observations than
/// terms, the extra terms are reported aliased.
pub fn least_squares(
    names: &[String],
    columns: &[Vec<f64>],
    y: &[f64],
    weights: Option<&[f64]>,
) -> LinearFit {
    let n = y.len();
    let p = columns.len();
    assert!(
        columns.iter().all(|c| c.len() == n),
        "columns and y differ in length"
    );
    let sw: Vec<f64> = match weights {
        Some(w) => w.iter().map(|v| v.max(0.0).sqrt()).collect(),
        None => vec![1.0; n],
    };
    // Scale columns to unit RMS in the weighted metric.
    let mut scale = vec![1.0; p];
    for (j, c) in columns.iter().enumerate() {
        let ss: f64 = c.iter().zip(&sw).map(|(x, s)| (x * s) * (x * s)).sum();
        let rms = (ss / n.max(1) as f64).sqrt();
        scale[j] = if rms > 0.0 && rms.is_finite() { rms } else { 1.0 };
    }
    // Aliasing by modified Gram-Schmidt on the scaled, weighted columns.
    let mut basis: Vec<Vec<f64>> = Vec::new();
    let mut aliased = vec![false; p];
    for (j, c) in columns.iter().enumerate() {
        let mut v: Vec<f64> = c.iter().zip(&sw).map(|(x, s)| x * s / scale[j]).collect();
        let norm0 = v.iter().map(|a| a * a).sum::<f64>().sqrt();
        for q in &basis {
            let d: f64 = v.iter().zip(q).map(|(a, b)| a * b).sum();
            v.iter_mut().zip(q).for_each(|(a, b)| *a -= d * b);
        }
        let norm = v.iter().map(|a| a * a).sum::<f64>().sqrt();
        if norm0 == 0.0 || norm <= ALIAS_TOLERANCE * norm0 || basis.len() >= n {
            aliased[j] = true;
        } else {
            v.iter_mut().for_each(|a| *a /= norm);
            basis.push(v);
        }
    }
    let kept: Vec<usize> = (0..p).filter(|j| !aliased[*j]).collect();
    let k = kept.len();
    let mut coef = vec![0.0; p];
    let mut se = vec![0.0; p];
    let wy: Vec<f64> = y.iter().zip(&sw).map(|(v, s)| v * s).collect();
    let mut rss: f64 = wy.iter().map(|v| v * v).sum();
    if k > 0 {
        let a = DMatrix::from_fn(n, k, |i, jj| {
            let j = kept[jj];
            columns[j][i] * sw[i] / scale[j]
        });
        let b = DVector::from_vec(wy.clone());
        let qr = a.clone().qr();
        let qtb = qr.q().transpose() * &b;
        let r = qr.r();
        let mut beta = r
            .solve_upper_triangular(&qtb)
            .expect("non-aliased columns give a non-singular R");
        // One step of iterative refinement: the residual of the solved system is
        // recomputed in full and the correction solved again; it recovers the last
        // digits on exact (noise-free) data.
        let resid = &b - &a * &beta;
        let corr = r
            .solve_upper_triangular(&(qr.q().transpose() * &resid))
            .expect("same R");
        beta += corr;
        let resid = &b - &a * &beta;
        rss = resid.iter().map(|v| v * v).sum();
        let dof = n.saturating_sub(k);
        let sigma2 = if dof > 0 { rss / dof as f64 } else { 0.0 };
        let rinv = r.try_inverse().expect("non-singular R");
        let cov = &rinv * rinv.transpose();
        for (jj, &j) in kept.iter().enumerate() {
            coef[j] = beta[jj] / scale[j];
            se[j] = (sigma2 * cov[(jj, jj)]).max(0.0).sqrt() / scale[j];
        }
    }
    let dof = n.saturating_sub(k);
    // R²: centred about the weighted mean when the first column is constant.
    let has_intercept = columns
        .first()
        .is_some_and(|c| c.iter().all(|v| *v == c[0]) && c[0] != 0.0);
    let tss = if has_intercept {
        let wsum: f64 = sw.iter().map(|s| s * s).sum();
        let ybar: f64 = y.iter().zip(&sw).map(|(v, s)| v * s * s).sum::<f64>() / wsum;
        y.iter()
            .zip(&sw)
            .map(|(v, s)| ((v - ybar) * s).powi(2))
            .sum::<f64>()
    } else {
        wy.iter().map(|v| v * v).sum()
    };
    let r2 = if tss > 0.0 { 1.0 - rss / tss } else { 1.0 };
    LinearFit {
        names: names.to_vec(),
        coef,
        se,
        aliased,
        rss,
        dof,
        n,
        r2,
        sigma: if dof > 0 { (rss / dof as f64).sqrt() } else { 0.0 },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn exact_line_is_recovered() {
        let x: Vec<f64> = (0..50).map(|i| (i * i) as f64 * 1e6).collect();
        let y: Vec<f64> = x.iter().map(|v| 1.029e-11 * v + 1.981e-12).collect();
        let f = least_squares(&names(&["intercept", "x"]), &[vec![1.0; 50], x], &y, None);
        assert!((f.coef[1] / 1.029e-11 - 1.0).abs() < 1e-12, "{:?}", f.coef);
        assert!((f.coef[0] / 1.981e-12 - 1.0).abs() < 1e-6, "{:?}", f.coef);
        assert!(f.r2 > 1.0 - 1e-12);
    }

    #[test]
    fn standard_errors_match_the_textbook_formula() {
        // y = 1 + 2x + e with e = ±1 alternating, x = 0..9.
        let x: Vec<f64> = (0..10).map(f64::from).collect();
        let y: Vec<f64> = x
            .iter()
            .enumerate()
            .map(|(i, v)| 1.0 + 2.0 * v + if i % 2 == 0 { 1.0 } else { -1.0 })
            .collect();
        let f = least_squares(&names(&["intercept", "x"]), &[vec![1.0; 10], x.clone()], &y, None);
        let sxx: f64 = x.iter().map(|v| (v - 4.5) * (v - 4.5)).sum();
        let s = (f.rss / 8.0).sqrt();
        assert!((f.se[1] - s / sxx.sqrt()).abs() < 1e-12);
        assert!((f.se[0] - s * (1.0 / 10.0 + 4.5 * 4.5 / sxx).sqrt()).abs() < 1e-12);
    }

    #[test]
    fn aliased_columns_are_dropped() {
        let m: Vec<f64> = (1..30).map(f64::from).collect();
        let n: Vec<f64> = (1..30).map(|i| f64::from((i * 7) % 11 + 1)).collect();
        let mn: Vec<f64> = m.iter().zip(&n).map(|(a, b)| a * b).collect();
        let y: Vec<f64> = mn.iter().zip(&m).map(|(a, b)| 3.0 * a + b).collect();
        // K = M: the column MK equals M·M, NK equals MN (aliased), K equals M (aliased).
        let f = least_squares(
            &names(&["intercept", "MN", "M", "NK", "K"]),
            &[vec![1.0; 29], mn.clone(), m.clone(), mn, m],
            &y,
            None,
        );
        assert_eq!(f.aliased, vec![false, false, false, true, true]);
        assert!((f.coef[1] - 3.0).abs() < 1e-10 && (f.coef[2] - 1.0).abs() < 1e-10);
    }
}
