//! Unit tests of the compute models: every model option against hand-computed
//! values, breakpoints, per-host selection, noise moments, clamping and streams.

use crate::noise::{stream_key, NoiseRng};
use crate::ModelSet;

use super::*;

fn set(toml: &str) -> ComputeModels {
    match ModelSet::from_toml_str(toml, "test.toml") {
        Ok(s) => s.compute,
        Err(e) => panic!("{e}"),
    }
}

fn id(c: &ComputeModels, name: &str) -> KernelId {
    c.kernel_id(name).expect("kernel modelled")
}

/// Sample mean and standard deviation.
fn moments(x: &[f64]) -> (f64, f64) {
    let n = x.len() as f64;
    let m = x.iter().sum::<f64>() / n;
    let v = x.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / (n - 1.0);
    (m, v.sqrt())
}

fn within(actual: f64, expected: f64, rel: f64) -> bool {
    (actual - expected).abs() <= rel * expected.abs()
}

const N: usize = 100_000;

fn draws(c: &ComputeModels, k: KernelId, host: usize, params: &[f64], seed: u64) -> Vec<f64> {
    let mut rng = NoiseRng::new(seed, stream_key(0, c.name(k)));
    (0..N).map(|_| c.duration(k, host, params, &mut rng)).collect()
}

#[test]
fn m0_constant() {
    let c = set("[compute.daxpy]\nmodel = \"constant\"\nvalue = 6.5e-7\n");
    let k = id(&c, "daxpy");
    let mut rng = NoiseRng::new(0, 0);
    assert_eq!(c.duration(k, 0, &[1e6], &mut rng), 6.5e-7);
    assert_eq!(c.duration_without_noise(k, 9, &[1.0]), 6.5e-7);
}

#[test]
fn m1_linear_on_product() {
    let c = set("[compute.dgemm]\nmodel = \"linear\"\nproduct = \"M*N*K\"\na = 1.029e-11\nb = 1.981e-12\n");
    let k = id(&c, "dgemm");
    // 1.029e-11 · (100·200·300) + 1.981e-12 = 6.174e-5 + 1.981e-12
    assert_eq!(
        c.duration_without_noise(k, 0, &[100.0, 200.0, 300.0]),
        1.029e-11 * 6e6 + 1.981e-12
    );
    assert_eq!(c.duration_without_noise(k, 0, &[0.0, 200.0, 300.0]), 1.981e-12);
}

#[test]
fn m2_full_polynomial() {
    let c = set(r#"
[compute.dgemm]
model = "polynomial"
coefficients = { MNK = 1e-11, MN = 2e-10, MK = 3e-10, NK = 4e-10, M = 5e-9, N = 6e-9, K = 7e-9, intercept = 8e-7 }
"#);
    let k = id(&c, "dgemm");
    let (m, n, kk) = (10.0, 20.0, 30.0);
    let expected = 1e-11 * m * n * kk
        + 2e-10 * m * n
        + 3e-10 * m * kk
        + 4e-10 * n * kk
        + 5e-9 * m
        + 6e-9 * n
        + 7e-9 * kk
        + 8e-7;
    let got = c.duration_without_noise(k, 0, &[m, n, kk]);
    assert!((got - expected).abs() < 1e-18, "{got} vs {expected}");
    // 6e-8 + 4e-8 + 9e-8 + 2.4e-7 + 5e-8 + 1.2e-7 + 2.1e-7 + 8e-7 = 1.61e-6
    assert!((got - 1.61e-6).abs() < 1e-15, "{got}");
}

#[test]
fn powers_and_spellings_of_terms() {
    let c = set(r#"
[compute.dgemv]
model = "polynomial"
coefficients = { "M^2*N" = 1.0, "N*M" = 10.0, "1" = 100.0 }
"#);
    let k = id(&c, "dgemv");
    // 1·9·5 + 10·15 + 100
    assert_eq!(c.duration_without_noise(k, 0, &[3.0, 5.0]), 45.0 + 150.0 + 100.0);
}

#[test]
fn dtrsm_side_selects_the_triangle_order() {
    let c = set("[compute.dtrsm]\nmodel = \"linear\"\nproduct = \"MNK\"\na = 1.0\nb = 0\n");
    let k = id(&c, "dtrsm");
    // Left: M²N = 4·3; Right: MN² = 2·9.
    assert_eq!(c.duration_without_noise(k, 0, &[2.0, 3.0, 0.0]), 12.0);
    assert_eq!(c.duration_without_noise(k, 0, &[2.0, 3.0, 1.0]), 18.0);
    assert_eq!(c.signature(k).params, ["M", "N", "side"]);
}

#[test]
fn declared_function_kernel() {
    let c = set(r#"
[compute.HPL_dlaswp04T]
kind = "function"
params = ["M0", "M1", "N"]
model = "linear"
product = "M1*N"
a = 2.0
b = 1.0
"#);
    let k = id(&c, "HPL_dlaswp04T");
    assert_eq!(c.duration_without_noise(k, 0, &[100.0, 3.0, 5.0]), 31.0);
    assert_eq!(c.names().collect::<Vec<_>>(), ["HPL_dlaswp04T"]);
}

const PIECEWISE: &str = r#"
[compute.dgemv]
piecewise_on = "M*N"
[[compute.dgemv.range]]
from = 0
to = 100
model = "constant"
value = 1.0
[[compute.dgemv.range]]
from = 100
model = "linear"
product = "MN"
a = 0.5
b = 2.0
[[compute.dgemv.range]]
from = 1000
model = "constant"
value = 7.0
"#;

#[test]
fn piecewise_breakpoints_at_below_above() {
    let c = set(PIECEWISE);
    let k = id(&c, "dgemv");
    let t = |mn: f64| c.duration_without_noise(k, 0, &[mn, 1.0]);
    assert_eq!(t(0.0), 1.0);
    assert_eq!(t(99.999), 1.0); // just below 100
    assert_eq!(t(100.0), 52.0); // at 100: the upper range (lower-inclusive)
    assert_eq!(t(100.001), 0.5 * 100.001 + 2.0); // just above
    assert_eq!(t(999.999), 0.5 * 999.999 + 2.0);
    assert_eq!(t(1000.0), 7.0);
    assert_eq!(t(1e9), 7.0);
    // Below the first `from` extrapolates the first range.
    assert_eq!(t(-5.0), 1.0);
}

#[test]
fn per_host_models_and_noise() {
    let c = set(r#"
[compute.dgemm]
model = "linear"
product = "MNK"
a = 1.0
b = 0
[[compute.dgemm.host]]
hosts = [2, 5]
model = "linear"
product = "MNK"
a = 2.0
b = 1.0
[[compute.dgemm.host]]
hosts = [7]
noise = { kind = "normal", sigma = 0.5 }
"#);
    let k = id(&c, "dgemm");
    let p = [1.0, 2.0, 3.0];
    for h in [0, 1, 3, 4, 6, 8, 1000] {
        assert_eq!(c.duration_without_noise(k, h, &p), 6.0, "host {h}");
    }
    assert_eq!(c.duration_without_noise(k, 2, &p), 13.0);
    assert_eq!(c.duration_without_noise(k, 5, &p), 13.0);
    // Host 7 keeps the default model but has noise.
    assert_eq!(c.duration_without_noise(k, 7, &p), 6.0);
    let mut rng = NoiseRng::new(1, 1);
    assert_eq!(c.duration(k, 0, &p, &mut rng), 6.0);
    let (m, s) = moments(&draws(&c, k, 7, &p, 3));
    assert!(within(m, 6.0, 0.02) && within(s, 0.5, 0.02), "{m} {s}");
}

#[test]
fn n1_normal_constant_sigma_moments() {
    let c = set(
        "[compute.daxpy]\nmodel = \"constant\"\nvalue = 1.0\nnoise = { kind = \"normal\", sigma = 0.1 }\n",
    );
    let (m, s) = moments(&draws(&c, id(&c, "daxpy"), 0, &[10.0], 11));
    assert!(within(m, 1.0, 0.02), "mean {m}");
    assert!(within(s, 0.1, 0.02), "std {s}");
}

#[test]
fn n2_sigma_polynomial_moments() {
    let c = set(r#"
[compute.dscal]
model = "linear"
product = "N"
a = 1e-3
b = 0
noise = { kind = "normal", sigma = { N = 1e-4, intercept = 1e-3 } }
"#);
    let k = id(&c, "dscal");
    for n in [10.0, 1000.0] {
        let (m, s) = moments(&draws(&c, k, 0, &[n], 5));
        let (em, es) = (1e-3 * n, 1e-4 * n + 1e-3);
        assert!(within(m, em, 0.02), "mean {m} vs {em}");
        assert!(within(s, es, 0.02), "std {s} vs {es}");
    }
}

#[test]
fn half_normal_shifted_moments_and_support() {
    // The fork's dtrsm form: size·hn(m, s) = linear a = m + half_normal sigma = s·size.
    let c = set(r#"
[compute.dtrsm]
model = "linear"
product = "MNK"
a = 5.445540e-11
b = 0
noise = { kind = "half_normal", sigma = { MNK = 3.093410e-12 } }
"#);
    let k = id(&c, "dtrsm");
    let size = 128.0 * 128.0 * 1000.0;
    let d = draws(&c, k, 0, &[128.0, 1000.0, 0.0], 9);
    let (m, s) = moments(&d);
    assert!(within(m, 5.445540e-11 * size, 0.02), "mean {m}");
    assert!(within(s, 3.093410e-12 * size, 0.02), "std {s}");
    // Support starts at size·μ with μ = m − σₕ√(2/π), σₕ = s/√(1−2/π).
    let sigma_h = 3.093410e-12 / (1.0 - 2.0 / std::f64::consts::PI).sqrt();
    let lower = size * (5.445540e-11 - sigma_h * (2.0 / std::f64::consts::PI).sqrt());
    let min = d.iter().cloned().fold(f64::INFINITY, f64::min);
    assert!(
        min >= lower * (1.0 - 1e-12) && min < lower * 1.01,
        "{min} vs {lower}"
    );
}

#[test]
fn mixture_moments_and_proportions() {
    let c = set(r#"
[compute.idamax]
model = "constant"
value = 100.0
noise = { kind = "mixture", weights = [0.5, 0.3, 0.2], means = [0.0, 10.0, 50.0], sigmas = [1.0, 2.0, 3.0] }
"#);
    let d = draws(&c, id(&c, "idamax"), 0, &[1.0], 21);
    // Classify by nearest component mean (components are > 10σ apart).
    let mut counts = [0usize; 3];
    for x in &d {
        let i = [100.0, 110.0, 150.0]
            .iter()
            .enumerate()
            .min_by(|a, b| (x - a.1).abs().total_cmp(&(x - b.1).abs()))
            .map(|(i, _)| i)
            .unwrap();
        counts[i] += 1;
    }
    for (cnt, w) in counts.iter().zip([0.5, 0.3, 0.2]) {
        let p = *cnt as f64 / N as f64;
        assert!(within(p, w, 0.02), "proportion {p} vs {w}");
    }
    let mean: f64 = 100.0 + 0.3 * 10.0 + 0.2 * 50.0;
    let second: f64 = 0.5 * (1.0 + 0.0) + 0.3 * (4.0 + 100.0) + 0.2 * (9.0 + 2500.0);
    let sd = (second - (mean - 100.0).powi(2)).sqrt();
    let (m, s) = moments(&d);
    assert!(within(m, mean, 0.02), "mean {m} vs {mean}");
    assert!(within(s, sd, 0.02), "std {s} vs {sd}");
}

#[test]
fn negative_totals_are_clamped_to_zero() {
    let c =
        set("[compute.dcopy]\nmodel = \"constant\"\nvalue = 0\nnoise = { kind = \"normal\", sigma = 1.0 }\n");
    let d = draws(&c, id(&c, "dcopy"), 0, &[1.0], 4);
    assert!(d.iter().all(|&x| x >= 0.0));
    let zeros = d.iter().filter(|&&x| x == 0.0).count() as f64 / N as f64;
    assert!(within(zeros, 0.5, 0.02), "{zeros}");
    // E[max(0, Z)] = 1/√(2π).
    let (m, _) = moments(&d);
    assert!(within(m, 1.0 / (2.0 * std::f64::consts::PI).sqrt(), 0.02), "{m}");
    // A negative model alone is clamped too.
    let c = set("[compute.dcopy]\nmodel = \"linear\"\nproduct = \"N\"\na = -1\nb = 0\n");
    assert_eq!(c.duration_without_noise(id(&c, "dcopy"), 0, &[5.0]), 0.0);
    // NaN parameters give 0, not NaN.
    assert_eq!(c.duration_without_noise(id(&c, "dcopy"), 0, &[f64::NAN]), 0.0);
}

#[test]
fn negative_polynomial_sigma_is_clamped() {
    let c = set(r#"
[compute.dscal]
model = "constant"
value = 1.0
noise = { kind = "normal", sigma = { intercept = 0.1, N = -1.0 } }
"#);
    let k = id(&c, "dscal");
    let mut rng = NoiseRng::new(0, 0);
    for _ in 0..100 {
        assert_eq!(c.duration(k, 0, &[1.0], &mut rng), 1.0);
    }
}

#[test]
fn quantum_truncates() {
    let c = set("[compute.daxpy]\nmodel = \"constant\"\nvalue = 3.7e-6\nquantum = 1e-6\n");
    assert_eq!(c.duration_without_noise(id(&c, "daxpy"), 0, &[1.0]), 3e-6);
}

#[test]
fn same_seed_same_sequence_different_streams_independent() {
    let c = set(
        "[compute.daxpy]\nmodel = \"constant\"\nvalue = 1.0\nnoise = { kind = \"normal\", sigma = 0.1 }\n",
    );
    let k = id(&c, "daxpy");
    let seq = |seed: u64, rank: u64, n: usize| {
        let mut rng = NoiseRng::new(seed, stream_key(rank, "daxpy"));
        (0..n)
            .map(|_| c.duration(k, 0, &[1.0], &mut rng))
            .collect::<Vec<_>>()
    };
    assert_eq!(seq(7, 0, 1000), seq(7, 0, 1000));
    assert_ne!(seq(7, 0, 1000), seq(8, 0, 1000));
    let (a, b) = (seq(7, 0, N), seq(7, 1, N));
    assert_ne!(a[..10], b[..10]);
    // Pearson correlation of two ranks' streams: |r| < 4/√n.
    let (ma, sa) = moments(&a);
    let (mb, sb) = moments(&b);
    let r = a.iter().zip(&b).map(|(x, y)| (x - ma) * (y - mb)).sum::<f64>() / ((N as f64 - 1.0) * sa * sb);
    assert!(r.abs() < 4.0 / (N as f64).sqrt(), "r = {r}");
    // Extra calls on rank 0 (another kernel on the same rank, too) do not shift rank 1.
    let mut r0 = NoiseRng::new(7, stream_key(0, "daxpy"));
    let mut r0_other = NoiseRng::new(7, stream_key(0, "dgemm"));
    for _ in 0..17 {
        c.duration(k, 0, &[1.0], &mut r0);
        r0_other.standard_normal();
    }
    assert_eq!(seq(7, 1, 1000), b[..1000]);
}

#[test]
fn kernel_id_aliases() {
    let c = set("[compute.dgemm]\nmodel = \"constant\"\nvalue = 1\n");
    let k = id(&c, "dgemm");
    for alias in ["cblas_dgemm", "dgemm_", "HPL_dgemm", "DGEMM", "DGEMM_"] {
        assert_eq!(c.kernel_id(alias), Some(k), "{alias}");
    }
    assert_eq!(c.kernel_id("dtrsm"), None);
    assert_eq!(c.kernel_id("sgemm"), None);
    assert_eq!(c.len(), 1);
}

#[test]
#[should_panic(expected = "compute model called with 2 parameters, the kernel takes 3")]
fn too_few_params_is_a_caller_bug() {
    let c = set("[compute.dgemm]\nmodel = \"constant\"\nvalue = 1\n");
    c.duration_without_noise(id(&c, "dgemm"), 0, &[1.0, 2.0]);
}

#[test]
fn no_noise_consumes_no_randomness() {
    let c = set("[compute.dgemm]\nmodel = \"constant\"\nvalue = 1\n");
    let mut a = NoiseRng::new(1, 2);
    let mut b = a.clone();
    c.duration(id(&c, "dgemm"), 0, &[1.0, 1.0, 1.0], &mut a);
    assert_eq!(a.next_u64(), b.next_u64());
}

#[test]
fn calls_with_an_empty_product_take_the_empty_duration() {
    let with = set(
        "[compute.dgemm]\nmodel = \"linear\"\nproduct = \"MNK\"\na = 1e-11\nb = 4e-6\n\
         empty = { product = \"M*N*K\", seconds = 3e-8 }\n\
         [compute.HPL_dlaswp04T]\nkind = \"function\"\nparams = [\"M0\", \"M1\", \"N\"]\n\
         model = \"linear\"\nproduct = \"M1*N\"\na = 1e-9\nb = 1e-7\n\
         empty = { product = \"M1*N\", seconds = 2e-8 }\n",
    );
    let (dgemm, swap) = (id(&with, "dgemm"), id(&with, "HPL_dlaswp04T"));
    for zero in [[0.0, 5.0, 128.0], [392.0, 0.0, 128.0], [392.0, 5.0, 0.0]] {
        assert_eq!(with.duration_without_noise(dgemm, 0, &zero), 3e-8, "{zero:?}");
    }
    assert_eq!(
        with.duration_without_noise(dgemm, 0, &[1.0, 2.0, 3.0]),
        1e-11 * 6.0 + 4e-6
    );
    // M0 = 0 is real work for HPL_dlaswp04T: only its product M1·N decides.
    assert_eq!(
        with.duration_without_noise(swap, 0, &[0.0, 10.0, 100.0]),
        1e-9 * 1000.0 + 1e-7
    );
    assert_eq!(with.duration_without_noise(swap, 0, &[10.0, 0.0, 100.0]), 2e-8);
    // Without the key an empty call takes the model's value (SMPI's model libraries).
    let without = set("[compute.dgemm]\nmodel = \"linear\"\nproduct = \"MNK\"\na = 1e-11\nb = 4e-6\n");
    let k = id(&without, "dgemm");
    assert_eq!(without.duration_without_noise(k, 0, &[392.0, 0.0, 128.0]), 4e-6);
}
