use super::*;
use models::NoiseRng;
use std::collections::BTreeMap;

fn normal_rows(n: usize, p: usize, rng: &mut NoiseRng) -> Vec<Vec<f64>> {
    (0..n)
        .map(|_| (0..p).map(|_| rng.standard_normal()).collect())
        .collect()
}

/// For p = 1 the region is x̄ ± s·t_{(1+γ)/2}(n−1)·√(1/n + 1/r) (digest §2 item 11).
#[test]
fn single_factor_interval_has_the_closed_form() {
    let x = [3.1, 2.9, 3.4, 3.0, 2.8, 3.3, 3.05, 2.95];
    let (n, gamma) = (x.len() as f64, 0.9999);
    for r in [1usize, 5] {
        let (lo, hi) = interval(&x, r, gamma).unwrap();
        let half = stats::std_dev(&x)
            * stats::t_quantile((1.0 + gamma) / 2.0, n - 1.0)
            * (1.0 / n + 1.0 / r as f64).sqrt();
        let m = stats::mean(&x);
        assert!(
            (lo - (m - half)).abs() < 1e-9 && (hi - (m + half)).abs() < 1e-9,
            "r {r}"
        );
        // The test agrees with the interval on both sides of its edge.
        let reference: Vec<Vec<f64>> = x.iter().map(|v| vec![*v]).collect();
        let just = |v: f64| vec![vec![v]; r];
        assert!(chew_test(&reference, &just(hi + 1e-9), gamma).is_alarm());
        assert!(!chew_test(&reference, &just(hi - 1e-9), gamma).is_alarm());
    }
    // The r = 5 half-width is √((1/n + 1/5)/(1/n + 1)) times the r = 1 one.
    let w1 = interval(&x, 1, gamma).unwrap();
    let w5 = interval(&x, 5, gamma).unwrap();
    let ratio = (w5.1 - w5.0) / (w1.1 - w1.0);
    assert!((ratio - ((1.0 / n + 0.2) / (1.0 / n + 1.0)).sqrt()).abs() < 1e-12);
}

/// Under H₀ the false-alarm rate is 1 − γ (γ = 0.99, 2·10⁴ trials: 0.010 ± 0.002).
#[test]
fn false_alarm_rate_is_nominal() {
    let mut rng = NoiseRng::new(1, 2);
    for p in [1usize, 3] {
        let trials = 20_000;
        let alarms = (0..trials)
            .filter(|_| {
                let reference = normal_rows(20, p, &mut rng);
                let recent = normal_rows(1, p, &mut rng);
                chew_test(&reference, &recent, 0.99).is_alarm()
            })
            .count();
        let rate = alarms as f64 / trials as f64;
        assert!((rate - 0.01).abs() <= 0.0021, "p = {p}: rate {rate}");
    }
}

/// Thesis Fig 9.2: ρ = −0.7, γ = 0.995, large n: (2σ, 2σ) is flagged
/// (Mahalanobis d² ≈ 26.7 > χ²₂ = 10.6), (2σ, −2σ) is not (d² ≈ 4.7).
#[test]
fn bivariate_region_follows_the_correlation() {
    let mut rng = NoiseRng::new(3, 4);
    let rho: f64 = -0.7;
    let reference: Vec<Vec<f64>> = (0..20_000)
        .map(|_| {
            let (a, b) = (rng.standard_normal(), rng.standard_normal());
            vec![a, rho * a + (1.0 - rho * rho).sqrt() * b]
        })
        .collect();
    assert!(chew_test(&reference, &[vec![2.0, 2.0]], 0.995).is_alarm());
    assert!(!chew_test(&reference, &[vec![2.0, -2.0]], 0.995).is_alarm());
}

#[test]
fn small_references_are_insufficient() {
    let reference = vec![vec![1.0, 2.0], vec![1.5, 2.5]];
    assert_eq!(
        chew_test(&reference, &[vec![1.0, 2.0]], 0.99),
        Verdict::InsufficientReference { n: 2, p: 2 }
    );
    assert!(matches!(
        chew_test(&[vec![1.0]], &[vec![1.0]], 0.99),
        Verdict::InsufficientReference { .. }
    ));
}

#[test]
fn likelihood_is_the_f_p_value() {
    // p = 1: 1 − F_cdf(t; 1, ν) = 2·(1 − T_cdf(√t; ν)).
    let reference: Vec<Vec<f64>> = [1.0, 1.2, 0.9, 1.1, 1.05, 0.95]
        .iter()
        .map(|v| vec![*v])
        .collect();
    if let Verdict::Pass { t, likelihood, .. } | Verdict::Alarm { t, likelihood, .. } =
        chew_test(&reference, &[vec![1.3]], 0.99)
    {
        use statrs::distribution::{ContinuousCDF, StudentsT};
        let tt = StudentsT::new(0.0, 1.0, 5.0).unwrap();
        assert!((likelihood - 2.0 * (1.0 - tt.cdf(t.sqrt()))).abs() < 1e-9);
    } else {
        panic!("a verdict with t");
    }
}

fn history(n: usize, shift_last: f64, seed: u64) -> (Vec<Observation>, Observation) {
    let mut rng = NoiseRng::new(seed, 9);
    let mut obs: Vec<Observation> = (0..=n)
        .map(|i| {
            let perf = 28e9 * (1.0 + 0.005 * rng.standard_normal());
            let mnk = 6.7e-11 * (1.0 + 0.003 * rng.standard_normal());
            let nk = 2.5e-9 * (1.0 + 0.02 * rng.standard_normal());
            Observation {
                label: format!("run {i}"),
                factors: BTreeMap::from([
                    ("dgemm.performance".to_string(), perf),
                    ("dgemm.coef.MNK".to_string(), mnk),
                    ("dgemm.coef.NK".to_string(), nk),
                ]),
            }
        })
        .collect();
    let mut new = obs.pop().unwrap();
    *new.factors.get_mut("dgemm.performance").unwrap() *= 1.0 + shift_last;
    *new.factors.get_mut("dgemm.coef.MNK").unwrap() /= 1.0 + shift_last;
    (obs, new)
}

/// A 4 % slowdown of dgemm is flagged by the single factors and the group at
/// γ = 0.9999; the same history without it is not.
#[test]
fn planted_shift_is_flagged_and_its_absence_is_not() {
    let groups = BTreeMap::from([(
        "dgemm.coef".to_string(),
        vec!["dgemm.coef.MNK".to_string(), "dgemm.coef.NK".to_string()],
    )]);
    let (h, new) = history(30, -0.04, 5);
    let res = test_all(&h, &new, &groups, &[1, 5], 0.9999);
    let alarm = |name: &str, r: usize| {
        res.iter()
            .find(|t| t.name == name && t.r == r)
            .unwrap()
            .verdict
            .is_alarm()
    };
    assert!(alarm("dgemm.performance", 1) && alarm("dgemm.coef.MNK", 1) && alarm("dgemm.coef", 1));
    assert!(!alarm("dgemm.coef.NK", 1));
    let mut false_alarms = 0;
    for seed in 0..50 {
        let (h, new) = history(30, 0.0, 100 + seed);
        false_alarms += test_all(&h, &new, &groups, &[1, 5], 0.9999)
            .iter()
            .filter(|t| t.verdict.is_alarm())
            .count();
    }
    assert!(
        false_alarms <= 1,
        "{false_alarms} false alarms in 50 clean histories × 8 tests"
    );
}
