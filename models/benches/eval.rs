//! Cost of one model evaluation, with and without noise.
//!
//! Run with `cargo bench -p models --bench eval`. Every iteration evaluates one
//! call with parameters taken in turn from a table of 1024 random sizes (so the
//! branch predictor cannot learn one range). Target: well under 100 ns each.
//!
//! Best of four runs on the shared 2-core development VM (other crates were
//! building at the same time, so single runs were up to 2× slower):
//!
//! | evaluation | ns |
//! |---|---|
//! | network: lat + bw factor lookups, SMPI default (9 chunks) | 8 |
//! | network: `os` cost, dahu (5 chunks) | 4 |
//! | network: noise draw, per-range mixture | 29 |
//! | dgemm M-1, no noise (dahu) | 15 |
//! | dgemm M-2 (5 terms), no noise | 27 |
//! | dgemm, per-host override, no noise | 16 |
//! | dgemv M-1 + N-2 normal | 28 |
//! | dtrsm M-1 + half-normal (dahu) | 33 |
//! | dtrsm M-2 + N-2 half-normal (5 + 5 terms) | 40 |
//! | daxpy M-0 + N′ mixture (4 components) | 32 |
//! | dscal M′ (3 ranges), no noise / + N-1 | 22 / 33 |
//! | `kernel_id("dgemm")` (do it once, keep the id) | 12 |
//! | `NoiseRng::new` + `stream_key` (once per rank and kernel) | 16 |

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use models::{stream_key, ModelSet, NetworkModel, NoiseRng};

const M2: &str = r#"
[compute.dgemm]
model = "polynomial"
coefficients = { intercept = 2.844700e-07, MNK = 6.317136e-11, MN = 1.489053e-10, MK = 2.107985e-09, NK = 3.332944e-09 }
[[compute.dgemm.host]]
hosts = [1]
model = "linear"
product = "MNK"
a = 1.1e-11
b = 2e-12

[compute.dtrsm]
model = "polynomial"
coefficients = { intercept = 2.844700e-07, MNK = 6.317136e-11, MN = 1.489053e-10, MK = 2.107985e-09, NK = 3.332944e-09 }
noise = { kind = "half_normal", sigma = { intercept = 1.087202e-07, MNK = 2.976703e-12, MN = 8.365868e-12, MK = 1.528598e-10, NK = 9.931248e-11 } }

[compute.dgemv]
model = "linear"
product = "MN"
a = 1.278804e-09
b = 1e-7
noise = { kind = "normal", sigma = { MN = 1.6e-11 } }

[compute.daxpy]
model = "constant"
value = 1e-6
noise = { kind = "mixture", weights = [0.6, 0.25, 0.1, 0.05], means = [0, 1e-6, 5e-6, 1e-5], sigmas = [1e-7, 2e-7, 1e-6, 2e-6] }

[compute.dscal]
piecewise_on = "N"
noise = { kind = "normal", sigma = 1e-8 }
[[compute.dscal.range]]
from = 0
model = "constant"
value = 1e-7
[[compute.dscal.range]]
from = 1000
model = "linear"
product = "N"
a = 3.8e-10
b = 0
[[compute.dscal.range]]
from = 100000
model = "linear"
product = "N"
a = 4e-10
b = 1e-6
"#;

fn sizes() -> Vec<f64> {
    let mut rng = NoiseRng::new(1, 1);
    (0..1024)
        .map(|_| 10f64.powf(9.0 * rng.uniform()).floor())
        .collect()
}

fn triples() -> Vec<[f64; 3]> {
    let mut rng = NoiseRng::new(2, 2);
    (0..1024)
        .map(|_| [0; 3].map(|_| (1.0 + 2048.0 * rng.uniform()).floor()))
        .collect()
}

fn network(c: &mut Criterion) {
    let net = NetworkModel::smpi_default();
    let dahu = ModelSet::load(std::path::Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/dahu.toml"
    )))
    .expect("shipped set loads")
    .network
    .expect("dahu has a network model");
    let mix = ModelSet::from_toml_str(
        "[[network.range]]\nabove = 0\nlat_factor = 1\nbw_factor = 1\n\
         noise = { weights = [0.7, 0.2, 0.1], means = [0, 1e-6, 1e-5], sigmas = [1e-7, 1e-7, 1e-6] }\n\
         [[network.range]]\nabove = 65536\nlat_factor = 2\nbw_factor = 0.9\n\
         noise = { weights = [0.5, 0.5], means = [0, 1e-5], sigmas = [1e-6, 1e-6] }\n",
        "bench.toml",
    )
    .expect("bench model is valid")
    .network
    .expect("has a network");
    let s = sizes();
    let mut g = c.benchmark_group("network");
    let mut i = 0;
    g.bench_function("lat+bw factor, SMPI default (9 chunks)", |b| {
        b.iter(|| {
            i = (i + 1) & 1023;
            let x = black_box(s[i]);
            net.lat_factor.value(x) + net.bw_factor.value(x)
        })
    });
    g.bench_function("os cost, dahu (5 chunks)", |b| {
        b.iter(|| {
            i = (i + 1) & 1023;
            dahu.os.cost(black_box(s[i]))
        })
    });
    let mut rng = NoiseRng::for_stream(1, 0, "network");
    g.bench_function("noise sample, mixture per range", |b| {
        b.iter(|| {
            i = (i + 1) & 1023;
            mix.noise.sample(black_box(s[i]), &mut rng)
        })
    });
    g.finish();
}

fn compute(c: &mut Criterion) {
    let dahu = ModelSet::load(std::path::Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/dahu.toml"
    )))
    .expect("shipped set loads")
    .compute;
    let set = ModelSet::from_toml_str(M2, "bench.toml")
        .expect("bench model is valid")
        .compute;
    let t = triples();
    let mut g = c.benchmark_group("compute");
    let mut i = 0;
    let mut rng = NoiseRng::new(3, stream_key(0, "dgemm"));
    let k = dahu.kernel_id("dgemm").expect("modelled");
    g.bench_function("dgemm M-1, N-0 (dahu)", |b| {
        b.iter(|| {
            i = (i + 1) & 1023;
            dahu.duration(k, 0, black_box(&t[i]), &mut rng)
        })
    });
    let k = set.kernel_id("dgemm").expect("modelled");
    g.bench_function("dgemm M-2 (5 terms), N-0", |b| {
        b.iter(|| {
            i = (i + 1) & 1023;
            set.duration(k, black_box(0), black_box(&t[i]), &mut rng)
        })
    });
    g.bench_function("dgemm M_H host override, N-0", |b| {
        b.iter(|| {
            i = (i + 1) & 1023;
            set.duration(k, black_box(1), black_box(&t[i]), &mut rng)
        })
    });
    let k = set.kernel_id("dtrsm").expect("modelled");
    g.bench_function("dtrsm M-2 + N-2 half-normal (5+5 terms)", |b| {
        b.iter(|| {
            i = (i + 1) & 1023;
            let p = &t[i];
            set.duration(k, 0, black_box(&[p[0], p[1], (i & 1) as f64]), &mut rng)
        })
    });
    let k = dahu.kernel_id("dtrsm").expect("modelled");
    g.bench_function("dtrsm M-1 + half-normal (dahu)", |b| {
        b.iter(|| {
            i = (i + 1) & 1023;
            let p = &t[i];
            dahu.duration(k, 0, black_box(&[p[0], p[1], 0.0]), &mut rng)
        })
    });
    let k = set.kernel_id("dgemv").expect("modelled");
    g.bench_function("dgemv M-1 + N-2 normal", |b| {
        b.iter(|| {
            i = (i + 1) & 1023;
            set.duration(k, 0, black_box(&t[i][..2]), &mut rng)
        })
    });
    let k = set.kernel_id("daxpy").expect("modelled");
    g.bench_function("daxpy M-0 + N' mixture (4 components)", |b| {
        b.iter(|| {
            i = (i + 1) & 1023;
            set.duration(k, 0, black_box(&t[i][..1]), &mut rng)
        })
    });
    let k = set.kernel_id("dscal").expect("modelled");
    g.bench_function("dscal M' (3 ranges) + N-1", |b| {
        b.iter(|| {
            i = (i + 1) & 1023;
            set.duration(k, 0, black_box(&[t[i][0] * t[i][1]]), &mut rng)
        })
    });
    g.bench_function("dscal M' (3 ranges), without noise", |b| {
        b.iter(|| {
            i = (i + 1) & 1023;
            set.duration_without_noise(k, 0, black_box(&[t[i][0] * t[i][1]]))
        })
    });
    g.finish();
}

fn lookup(c: &mut Criterion) {
    let dahu = ModelSet::load(std::path::Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/dahu.toml"
    )))
    .expect("shipped set loads")
    .compute;
    c.bench_function("kernel_id(\"dgemm\")", |b| {
        b.iter(|| dahu.kernel_id(black_box("dgemm")))
    });
    c.bench_function("NoiseRng::new + stream_key", |b| {
        b.iter(|| NoiseRng::new(black_box(42), stream_key(black_box(3), black_box("dgemm"))))
    });
}

criterion_group!(benches, network, compute, lookup);
criterion_main!(benches);
