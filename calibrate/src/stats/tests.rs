use super::*;

fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * b.abs().max(1e-300)
}

#[test]
fn le_boudec_ranks_for_100_at_95_are_40_and_61() {
    assert_eq!(median_ci_ranks_le_boudec(100, 0.95), Some((40, 61)));
}

#[test]
fn le_boudec_ranks_refused_below_8_at_95() {
    assert_eq!(median_ci_ranks_le_boudec(7, 0.95), None);
    assert!(median_ci_ranks_le_boudec(8, 0.95).is_some());
}

#[test]
fn exact_median_ranks_need_n_above_5_at_95() {
    assert_eq!(median_ci_ranks_exact(5, 0.95), None);
    let (j, k, cov) = median_ci_ranks_exact(6, 0.95).unwrap();
    assert_eq!((j, k), (1, 6));
    assert!(close(cov, 1.0 - 2.0 / 64.0, 1e-12));
    // n = 20: P(Bin(20,1/2) <= 5) = 0.0207 <= 0.025 < P(<= 6) = 0.0577: ranks (6, 15)
    let (j, k, cov) = median_ci_ranks_exact(20, 0.95).unwrap();
    assert_eq!((j, k), (6, 15));
    assert!(close(cov, 1.0 - 2.0 * 0.020_694_732_666_015_625, 1e-9));
    assert!(median_ci(&[1.0, 2.0, 3.0, 4.0, 5.0], 0.95).is_none());
}

#[test]
fn mean_ci_matches_the_t_formula() {
    // x = 1..5: mean 3, s = sqrt(2.5), t_{0.975}(4) = 2.7764451051977987
    let ci = mean_ci(&[1.0, 2.0, 3.0, 4.0, 5.0], 0.95).unwrap();
    let half = 2.776_445_105_197_798_7 * 2.5f64.sqrt() / 5f64.sqrt();
    assert!(close(ci.estimate, 3.0, 1e-15));
    assert!(close(ci.high - ci.estimate, half, 1e-9), "{ci:?}");
}

#[test]
fn hoefler_mean_examples() {
    // 100 Gflop in 10, 100 and 40 s (Hoefler & Belli §3.1.1).
    let times = [10.0, 100.0, 40.0];
    let rates: Vec<f64> = times.iter().map(|t| 100.0 / t).collect();
    assert!(close(mean(&times), 50.0, 1e-15));
    assert!(close(100.0 / mean(&times), 2.0, 1e-15));
    assert!(close(harmonic_mean(&rates), 2.0, 1e-12));
    assert!(close(mean(&rates), 4.5, 1e-12));
    assert!(close(
        geometric_mean(&[1.0, 0.1, 0.25]),
        0.292_401_773_821_286_6,
        1e-9
    ));
}

#[test]
fn quantiles_follow_type_7() {
    let x = [3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0];
    // numpy.quantile([3,1,4,1,5,9,2,6], [0.25, 0.5, 0.9]) = [1.75, 3.5, 6.9]
    assert!(close(quantile(&x, 0.25), 1.75, 1e-12));
    assert!(close(median(&x), 3.5, 1e-12));
    assert!(close(quantile(&x, 0.9), 6.9, 1e-12));
}

#[test]
fn t_squared_is_f_with_one_numerator_dof() {
    for nu in [3.0, 10.0, 57.0] {
        for g in [0.9, 0.99, 0.9999] {
            let t = t_quantile((1.0 + g) / 2.0, nu);
            assert!(close(f_quantile(g, 1.0, nu), t * t, 1e-8), "nu {nu} gamma {g}");
        }
    }
    // R: qf(0.95, 3, 20) = 3.098391
    assert!(close(f_quantile(0.95, 3.0, 20.0), 3.098_391, 1e-6));
    // R: pf(3.098391, 3, 20) = 0.95
    assert!(close(f_cdf(3.098_391_212_407_9, 3.0, 20.0), 0.95, 1e-7));
    assert!(close(chi2_quantile(0.995, 2.0), -2.0 * 0.005f64.ln(), 1e-9));
}

#[test]
fn tukey_filter_reports_the_removed_count() {
    let mut x: Vec<f64> = (0..20).map(|i| i as f64).collect();
    x.push(1000.0);
    let (kept, removed) = tukey_filter(&x, 1.5);
    assert_eq!(removed, 1);
    assert_eq!(kept.len(), 20);
}

/// Coverage of the 95 % intervals over 10⁴ samples of 30 exponential values
/// (skewed, so the median interval's distribution-freeness matters).
#[test]
fn interval_coverage_is_at_least_94_percent() {
    let mut rng = models::NoiseRng::new(7, 1);
    let (mut mean_hits, mut median_hits) = (0, 0);
    let trials = 10_000;
    for _ in 0..trials {
        let x: Vec<f64> = (0..30).map(|_| -(1.0 - rng.uniform()).ln()).collect();
        let m = mean_ci(&x, 0.95).unwrap();
        if m.low <= 1.0 && 1.0 <= m.high {
            mean_hits += 1;
        }
        let md = median_ci(&x, 0.95).unwrap();
        if md.low <= std::f64::consts::LN_2 && std::f64::consts::LN_2 <= md.high {
            median_hits += 1;
        }
    }
    // The t interval on skewed data under-covers a little (≈ 93.5 % for n = 30
    // exponentials); normal data would give 95 %. The median interval is exact.
    assert!(median_hits as f64 / trials as f64 >= 0.94, "median {median_hits}");
    assert!(mean_hits as f64 / trials as f64 >= 0.92, "mean {mean_hits}");
}

#[test]
fn normal_mean_ci_covers_95_percent() {
    let mut rng = models::NoiseRng::new(9, 2);
    let trials = 10_000;
    let hits = (0..trials)
        .filter(|_| {
            let x: Vec<f64> = (0..10).map(|_| rng.standard_normal()).collect();
            let m = mean_ci(&x, 0.95).unwrap();
            m.low <= 0.0 && 0.0 <= m.high
        })
        .count();
    assert!(hits as f64 / trials as f64 >= 0.94, "{hits}");
}

#[test]
fn spearman_of_a_monotone_pair_is_one_and_ties_share_ranks() {
    let x = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
    let y = [10.0, 20.0, 25.0, 26.0, 100.0, 1000.0];
    let (rho, p) = spearman(&x, &y).unwrap();
    assert!(close(rho, 1.0, 1e-12) && p == 0.0);
    let (rho, _) = spearman(&x, &[6.0, 5.0, 4.0, 3.0, 2.0, 1.0]).unwrap();
    assert!(close(rho, -1.0, 1e-12));
    assert_eq!(ranks(&[3.0, 1.0, 3.0, 2.0]), vec![3.5, 1.0, 3.5, 2.0]);
    assert!(spearman(&x, &[1.0; 6]).is_none());
    assert!(spearman(&x[..3], &y[..3]).is_none());
}

#[test]
fn spearman_matches_r_on_a_small_sample() {
    // R: cor.test(c(1,2,3,4,5,6,7,8,9,10), c(2,1,4,3,6,5,8,7,10,9), method = "spearman",
    // exact = FALSE): rho = 0.9393939, p-value = 5.484e-05 (t approximation).
    let x: Vec<f64> = (1..=10).map(f64::from).collect();
    let y = [2.0, 1.0, 4.0, 3.0, 6.0, 5.0, 8.0, 7.0, 10.0, 9.0];
    let (rho, p) = spearman(&x, &y).unwrap();
    assert!(close(rho, 0.939_393_9, 1e-6), "{rho}");
    assert!(close(p, 5.484e-5, 2e-3), "{p}");
}
