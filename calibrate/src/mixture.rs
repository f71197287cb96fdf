//! One-dimensional Gaussian mixtures fitted by expectation–maximisation, with
//! the number of components (1 to 4) chosen by BIC: the network noise model N′
//! (thesis §4.3.1: 2 to 4 modes per size range).
//!
//! EM runs in the log domain from several deterministic and seeded starts per
//! component count; component standard deviations are floored (half the timer
//! resolution, or 10⁻⁶ of the sample's) so that a component cannot collapse on
//! repeated identical values. Above [`MAX_POINTS`] residuals, a seeded random
//! subsample is fitted.

use models::NoiseRng;

/// Largest number of residuals EM runs on (a seeded subsample above).
pub const MAX_POINTS: usize = 2000;
/// EM iterations per start.
const MAX_ITERATIONS: usize = 200;

/// A fitted mixture, components sorted by mean.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct MixtureFit {
    /// Component weights (sum 1).
    pub weights: Vec<f64>,
    /// Component means (s).
    pub means: Vec<f64>,
    /// Component standard deviations (s).
    pub sigmas: Vec<f64>,
    /// Log-likelihood of the fitted points.
    pub loglik: f64,
    /// BIC of each component count tried (index 0: one component).
    pub bic_by_k: Vec<f64>,
    /// Number of residuals EM was run on.
    pub n: usize,
}

impl MixtureFit {
    /// Number of components.
    pub fn k(&self) -> usize {
        self.weights.len()
    }

    /// Mean of the mixture.
    pub fn mean(&self) -> f64 {
        self.weights.iter().zip(&self.means).map(|(w, m)| w * m).sum()
    }

    /// Standard deviation of the mixture.
    pub fn std_dev(&self) -> f64 {
        let m = self.mean();
        let v: f64 = self
            .weights
            .iter()
            .zip(&self.means)
            .zip(&self.sigmas)
            .map(|((w, mu), s)| w * (s * s + (mu - m) * (mu - m)))
            .sum();
        v.sqrt()
    }
}

const LN_SQRT_2PI: f64 = 0.918_938_533_204_672_8;

fn log_normal_pdf(x: f64, mu: f64, sigma: f64) -> f64 {
    let z = (x - mu) / sigma;
    -0.5 * z * z - sigma.ln() - LN_SQRT_2PI
}

fn log_sum_exp(v: &[f64]) -> f64 {
    let m = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if m == f64::NEG_INFINITY {
        return m;
    }
    m + v.iter().map(|a| (a - m).exp()).sum::<f64>().ln()
}

/// Weights, means, standard deviations and log-likelihood of an EM run.
type Fitted = (Vec<f64>, Vec<f64>, Vec<f64>, f64);

/// One EM run from the given start.
fn em(x: &[f64], mut w: Vec<f64>, mut mu: Vec<f64>, mut sd: Vec<f64>, floor: f64) -> Fitted {
    let n = x.len();
    let k = w.len();
    let mut resp = vec![0.0; n * k];
    let mut lp = vec![0.0; k];
    let mut prev = f64::NEG_INFINITY;
    let mut ll = prev;
    for _ in 0..MAX_ITERATIONS {
        // E step.
        ll = 0.0;
        for (i, &xi) in x.iter().enumerate() {
            for j in 0..k {
                lp[j] = w[j].max(1e-300).ln() + log_normal_pdf(xi, mu[j], sd[j]);
            }
            let tot = log_sum_exp(&lp);
            ll += tot;
            for j in 0..k {
                resp[i * k + j] = (lp[j] - tot).exp();
            }
        }
        // M step.
        for j in 0..k {
            let nj: f64 = (0..n).map(|i| resp[i * k + j]).sum();
            if nj < 1e-9 {
                // An empty component keeps a negligible weight and its last
                // parameters; the BIC of this k then shows it is not needed.
                w[j] = 1e-6;
                continue;
            }
            let m: f64 = (0..n).map(|i| resp[i * k + j] * x[i]).sum::<f64>() / nj;
            let v: f64 = (0..n)
                .map(|i| resp[i * k + j] * (x[i] - m) * (x[i] - m))
                .sum::<f64>()
                / nj;
            w[j] = nj / n as f64;
            mu[j] = m;
            sd[j] = v.sqrt().max(floor);
        }
        let s: f64 = w.iter().sum();
        w.iter_mut().for_each(|v| *v /= s);
        if (ll - prev).abs() <= 1e-9 * (1.0 + ll.abs()) {
            break;
        }
        prev = ll;
    }
    (w, mu, sd, ll)
}

/// Fits mixtures of 1..=`max_k` components to `x` and keeps the one with the
/// lowest BIC = −2·logL + (3k − 1)·ln n. `sigma_floor` bounds component standard
/// deviations from below (s). Fewer than 2 points, or all equal, give one
/// component with standard deviation 0.
pub fn fit_mixture(x: &[f64], max_k: usize, sigma_floor: f64, seed: u64) -> MixtureFit {
    let mut rng = NoiseRng::new(seed, 0x6d69_7874);
    let mut data: Vec<f64> = x.iter().copied().filter(|v| v.is_finite()).collect();
    if data.len() > MAX_POINTS {
        // Partial Fisher–Yates: the first MAX_POINTS entries are a uniform subsample.
        for i in 0..MAX_POINTS {
            let j = i + (rng.uniform() * (data.len() - i) as f64) as usize;
            let last = data.len() - 1;
            data.swap(i, j.min(last));
        }
        data.truncate(MAX_POINTS);
    }
    let n = data.len();
    let mean = crate::stats::mean(&data);
    let sd = crate::stats::std_dev(&data);
    if n < 2 || sd.is_nan() || sd <= 0.0 {
        return MixtureFit {
            weights: vec![1.0],
            means: vec![if mean.is_finite() { mean } else { 0.0 }],
            sigmas: vec![0.0],
            loglik: 0.0,
            bic_by_k: vec![0.0],
            n,
        };
    }
    let floor = sigma_floor.max(1e-6 * sd).max(f64::MIN_POSITIVE);
    let sorted = crate::stats::sorted(&data);
    let ln_n = (n as f64).ln();
    let mut best: Option<(f64, Fitted)> = None;
    let mut bic_by_k = Vec::new();
    for k in 1..=max_k.clamp(1, models::noise::MAX_MIXTURE_COMPONENTS) {
        if n < 10 * k {
            break;
        }
        let mut starts: Vec<(Vec<f64>, Vec<f64>, Vec<f64>)> = Vec::new();
        // Quantile start: components at evenly spaced quantiles.
        starts.push((
            vec![1.0 / k as f64; k],
            (0..k)
                .map(|j| crate::stats::quantile_sorted(&sorted, (j as f64 + 0.5) / k as f64))
                .collect(),
            vec![sd / k as f64; k],
        ));
        if k > 1 {
            // Tail start: the bulk around the median, the others in the right tail
            // (MPI timings are skewed with rare slow calls).
            let mut mu = vec![crate::stats::quantile_sorted(&sorted, 0.5)];
            let mut w = vec![0.9];
            for j in 1..k {
                mu.push(crate::stats::quantile_sorted(
                    &sorted,
                    1.0 - 0.1 / (j as f64 + 1.0),
                ));
                w.push(0.1 / (k - 1) as f64);
            }
            let spread =
                crate::stats::quantile_sorted(&sorted, 0.75) - crate::stats::quantile_sorted(&sorted, 0.25);
            starts.push((w, mu, vec![(spread / 1.35).max(floor); k]));
            // A seeded random start: k data points as means.
            {
                let mu: Vec<f64> = (0..k)
                    .map(|_| data[((rng.uniform() * n as f64) as usize).min(n - 1)])
                    .collect();
                starts.push((vec![1.0 / k as f64; k], mu, vec![sd / k as f64; k]));
            }
        }
        let mut best_k: Option<Fitted> = None;
        for (w, mu, s) in starts {
            let r = em(&data, w, mu, s, floor);
            if best_k.as_ref().is_none_or(|b| r.3 > b.3) {
                best_k = Some(r);
            }
        }
        let (w, mu, s, ll) = best_k.expect("at least one start");
        let bic = -2.0 * ll + (3 * k - 1) as f64 * ln_n;
        bic_by_k.push(bic);
        if best.as_ref().is_none_or(|b| bic < b.0) {
            best = Some((bic, (w, mu, s, ll)));
        }
    }
    let (_, (w, mu, s, ll)) = best.expect("k = 1 always runs");
    let mut order: Vec<usize> = (0..w.len()).collect();
    order.sort_by(|a, b| mu[*a].total_cmp(&mu[*b]));
    MixtureFit {
        weights: order.iter().map(|i| w[*i]).collect(),
        means: order.iter().map(|i| mu[*i]).collect(),
        sigmas: order.iter().map(|i| s[*i]).collect(),
        loglik: ll,
        bic_by_k,
        n,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use models::Mixture;

    /// 10⁴ draws of a known 3-component mixture: weights within ±0.03, means
    /// within ±2 % of the spread, standard deviations within ±10 %
    /// (methodology-digest §2 item 6).
    #[test]
    fn recovers_a_three_component_mixture() {
        let truth = Mixture::new(
            vec![0.6, 0.3, 0.1],
            vec![1e-6, 3e-6, 8e-6],
            vec![1e-7, 3e-7, 1e-6],
        )
        .unwrap();
        let mut rng = NoiseRng::new(3, 4);
        let x: Vec<f64> = (0..10_000).map(|_| truth.sample(&mut rng)).collect();
        let f = fit_mixture(&x, 4, 1e-9, 11);
        assert_eq!(f.k(), 3, "{f:?}");
        for j in 0..3 {
            assert!((f.weights[j] - truth.weights()[j]).abs() < 0.03, "{f:?}");
            assert!(
                (f.means[j] - truth.means()[j]).abs() < 0.02 * truth.means()[j],
                "{f:?}"
            );
            assert!((f.sigmas[j] / truth.sigmas()[j] - 1.0).abs() < 0.1, "{f:?}");
        }
    }

    #[test]
    fn one_gaussian_is_one_component() {
        let mut rng = NoiseRng::new(5, 6);
        let x: Vec<f64> = (0..3000).map(|_| 2.0 + 0.5 * rng.standard_normal()).collect();
        let f = fit_mixture(&x, 4, 0.0, 1);
        assert_eq!(f.k(), 1, "{f:?}");
        assert!((f.means[0] - 2.0).abs() < 0.05 && (f.sigmas[0] - 0.5).abs() < 0.03);
    }

    #[test]
    fn constant_data_is_a_zero_width_component() {
        let f = fit_mixture(&[1.0; 50], 4, 0.0, 1);
        assert_eq!((f.k(), f.sigmas[0], f.means[0]), (1, 0.0, 1.0));
    }
}
