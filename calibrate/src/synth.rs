//! Synthetic calibration data with a known truth, written in the CSV format of
//! `apps/calibration/FORMAT.md`: the fitter's tests and `smpi-fit synth` use it
//! to check that fitting recovers what generated the data.
//!
//! * Network: a machine described by an SMPI network model (factors, overheads,
//!   thresholds, per-range noise from the `models` crate) and a nominal link.
//!   Each kind's duration is what `smpirun` would measure when the calibration
//!   program times the call between two clock reads (README, "How a measured
//!   kind maps to the SMPI model"), plus the model's noise.
//! * Compute: a `models` compute model (any kernel) evaluated with its noise
//!   stream on the thesis's uniform-product design.

use std::fmt::Write as _;

use models::{ComputeModels, NetworkModel, NoiseRng};

use crate::input::NetKind;

/// The metadata block of a synthetic file (every required key, marked synthetic).
pub fn metadata(kind: &str, host: &str, seed: u64, timer_resolution: f64, timer_overhead: f64) -> String {
    let mut s = String::new();
    for (k, v) in [
        ("format", crate::input::FORMAT_VERSION.to_string()),
        ("kind", kind.to_string()),
        ("host", host.to_string()),
        ("date", "2026-01-01T00:00:00Z".to_string()),
        ("kernel", "synthetic".to_string()),
        ("cpu", "synthetic".to_string()),
        ("compiler", "none".to_string()),
        ("mpi", "synthetic (smpi-fit synth)".to_string()),
        ("blas", "synthetic".to_string()),
        ("blas_kernel", "synthetic".to_string()),
        ("command", format!("smpi-fit synth --seed {seed}")),
        ("seed", seed.to_string()),
        ("mode", "quick".to_string()),
        ("timer", "synthetic".to_string()),
        ("timer_resolution_s", format!("{timer_resolution:e}")),
        ("timer_overhead_s", format!("{timer_overhead:e}")),
    ] {
        let _ = writeln!(s, "# {k}: {v}");
    }
    s
}

/// Sizes drawn as ⌊10^U(0, decades)⌉ bytes (at least 1).
pub fn log_uniform_sizes(n: usize, decades: f64, rng: &mut NoiseRng) -> Vec<u64> {
    (0..n)
        .map(|_| (10f64.powf(decades * rng.uniform()).round() as u64).max(1))
        .collect()
}

/// Fisher–Yates shuffle with the given stream.
pub fn shuffle<T>(v: &mut [T], rng: &mut NoiseRng) {
    for i in (1..v.len()).rev() {
        let j = ((rng.uniform() * (i + 1) as f64) as usize).min(i);
        v.swap(i, j);
    }
}

/// A synthetic two-rank machine for the network calibration.
#[derive(Debug, Clone)]
pub struct SyntheticNetwork {
    /// The SMPI model (factors apply to size + 16, overheads to the payload).
    pub model: NetworkModel,
    /// Nominal route latency (s).
    pub latency: f64,
    /// Nominal route bandwidth (B/s).
    pub bandwidth: f64,
    /// Sends below this size are detached (eager).
    pub detached_thresh: u64,
    /// Cost of one clock read (s), `smpi/wtime`.
    pub wtime: f64,
    /// Cost of one failed `MPI_Test` (s).
    pub test: f64,
    /// Cost of one failed `MPI_Iprobe` (s).
    pub iprobe: f64,
}

/// SMPI's message envelope (bytes) added before the factor lookups.
pub const ENVELOPE: f64 = 16.0;

/// The example machine of `smpi-fit synth network` and of the tests, as a
/// model file: eager (detached) below 8192 B with copy overheads, rendezvous
/// above, a protocol-like jump of the latency at 65536 B, and zero-mean
/// two-component noise per range.
pub const EXAMPLE_NETWORK: &str = r#"
[network]
lat_factor = "0:1.0;8207:6.0;65552:40.0"
bw_factor = "0:0.5;8207:0.8;65552:1.0"
os = "0:2e-7:5e-11;8191:0:0"
or = "0:3e-7:8e-11;8191:0:0"
ois = "0:1.5e-7:4e-11;8191:4e-7:1e-12"

[[network.range]]
above = 0
noise = { weights = [0.8, 0.2], means = [-2e-8, 8e-8], sigmas = [1e-8, 4e-8] }

[[network.range]]
above = 65552
noise = { weights = [0.7, 0.3], means = [-6e-7, 1.4e-6], sigmas = [3e-7, 6e-7] }
"#;

impl SyntheticNetwork {
    /// The machine of [`EXAMPLE_NETWORK`] on a 0.5 µs, 10 GB/s link, with a
    /// 20 ns clock read, 80 ns tests and 120 ns probes.
    pub fn example() -> Self {
        let set = models::ModelSet::from_toml_str(EXAMPLE_NETWORK, "example-network.toml")
            .expect("the example model is valid");
        Self {
            model: set.network.expect("it has a network"),
            latency: 5e-7,
            bandwidth: 1e10,
            detached_thresh: 8192,
            wtime: 2e-8,
            test: 8e-8,
            iprobe: 1.2e-7,
        }
    }

    /// One-way transfer time of a lone message of `size` payload bytes.
    pub fn comm(&self, size: f64) -> f64 {
        let s = size + ENVELOPE;
        self.model.lat_factor.value(s) * self.latency + s / (self.model.bw_factor.value(s) * self.bandwidth)
    }

    /// The noise-free duration of a row of `kind` (timer read included).
    pub fn expected(&self, kind: NetKind, size: f64) -> f64 {
        let m = &self.model;
        let detached = size < self.detached_thresh as f64;
        self.wtime
            + match kind {
                NetKind::Send if detached => m.os.cost(size),
                NetKind::Send => self.comm(size),
                NetKind::Recv if detached => m.or.cost(size),
                NetKind::Recv => self.comm(size),
                NetKind::Isend => m.ois.cost(size),
                NetKind::Test => self.test,
                NetKind::Iprobe => self.iprobe,
                NetKind::Wtime => self.wtime,
                NetKind::Pingpong if detached => 2.0 * (m.os.cost(size) + self.comm(size) + m.or.cost(size)),
                NetKind::Pingpong => 2.0 * self.comm(size),
            }
    }

    /// A network CSV: `sizes` distinct sizes drawn as 10^U(0, decades), each
    /// measured `reps` times per sized kind, the size-free kinds `reps·sizes/10`
    /// times, the whole list shuffled; the first call of each (kind, size) is a
    /// warm-up row (twice as slow). Noise from the model's per-range mixtures.
    pub fn csv(&self, sizes: usize, reps: usize, decades: f64, seed: u64) -> String {
        let mut rng = NoiseRng::new(seed, 0x6e6574);
        let mut noise = NoiseRng::new(seed, 0x6e6f69);
        let sz = log_uniform_sizes(sizes, decades, &mut rng);
        let mut calls: Vec<(NetKind, u64)> = Vec::new();
        for kind in NetKind::ALL {
            if kind.sized() {
                for &s in &sz {
                    calls.extend(std::iter::repeat_n((kind, s), reps));
                }
            } else {
                calls.extend(std::iter::repeat_n((kind, 0), (reps * sizes / 10).max(20)));
            }
        }
        shuffle(&mut calls, &mut rng);
        let mut out = metadata("network", "synthetic", seed, 1e-9, self.wtime);
        out.push_str("seq,kind,size,start,duration,warmup\n");
        let mut seen = std::collections::HashSet::new();
        let mut t = 0.0;
        for (i, (kind, size)) in calls.iter().enumerate() {
            let mut d = self.expected(*kind, *size as f64);
            // The range's noise on what involves the transfer; an isend (a local
            // call) gets a quarter of the small-message noise.
            match kind {
                NetKind::Isend => d += 0.25 * self.model.noise.sample(1.0 + ENVELOPE, &mut noise),
                k if k.sized() => d += self.model.noise.sample(*size as f64 + ENVELOPE, &mut noise),
                _ => {}
            }
            let warm = seen.insert((*kind, *size));
            if warm {
                d *= 2.0;
            }
            let d = d.max(0.0);
            let _ = writeln!(
                out,
                "{i},{},{size},{t:.9e},{d:.9e},{}",
                kind.name(),
                u8::from(warm)
            );
            t += d + 1e-6;
        }
        let _ = writeln!(out, "# end: {}", calls.len());
        out
    }
}

/// The example dgemm of `smpi-fit synth dgemm` and of the tests: the thesis's
/// reference slope 6.7e-11 s per MNK (dahu) plus small quadratic terms, N-2 noise.
pub const EXAMPLE_DGEMM: &str = r#"
[compute.dgemm]
model = "polynomial"
coefficients = { MNK = 6.7e-11, MN = 2e-10, MK = 1.5e-9, NK = 2.5e-9, intercept = 2e-7 }
noise = { kind = "normal", sigma = { MNK = 1.5e-12, intercept = 5e-8 } }
"#;

/// The model set of [`EXAMPLE_DGEMM`].
pub fn example_dgemm_models() -> models::ModelSet {
    models::ModelSet::from_toml_str(EXAMPLE_DGEMM, "example-dgemm.toml").expect("the example model is valid")
}

/// The thesis's "uniform product" design for dgemm (methodology-digest §1.5 ch. 8):
/// `products` products stratified over [1, Π] (one uniform draw per stratum),
/// each factored as A ~ U(1, ∛P), B ~ U(1, √(P/A)), C = P/(A·B) (redrawn until
/// every factor is ≤ Σ, rounded to integers ≥ 1), then all six permutations.
pub fn uniform_product_design(products: usize, sigma: f64, pi: f64, rng: &mut NoiseRng) -> Vec<[f64; 3]> {
    let mut out = Vec::with_capacity(6 * products);
    for i in 0..products {
        let p = 1.0 + (pi - 1.0) * (i as f64 + rng.uniform()) / products as f64;
        let (a, b, c) = loop {
            let a = 1.0 + (p.cbrt() - 1.0) * rng.uniform();
            let b = 1.0 + ((p / a).sqrt() - 1.0) * rng.uniform();
            let c = p / (a * b);
            let (a, b, c) = (a.round().max(1.0), b.round().max(1.0), c.round().max(1.0));
            if a <= sigma && b <= sigma && c <= sigma {
                break (a, b, c);
            }
        };
        for perm in [[a, b, c], [a, c, b], [b, a, c], [b, c, a], [c, a, b], [c, b, a]] {
            out.push(perm);
        }
    }
    out
}

/// A compute CSV for one core: every `(kernel, params)` call, shuffled, with
/// durations drawn from `models` (host index `core`, noise stream per core and
/// kernel, seed `seed`).
pub fn compute_csv(models: &ComputeModels, calls: &[(String, Vec<f64>)], core: u32, seed: u64) -> String {
    let mut rng = NoiseRng::new(seed, 0x636f6d70 ^ u64::from(core));
    let mut order: Vec<usize> = (0..calls.len()).collect();
    shuffle(&mut order, &mut rng);
    let mut out = metadata("compute", "synthetic", seed, 1e-9, 2e-8);
    let _ = writeln!(out, "# core: {core}");
    out.push_str("seq,core,kernel,p0,p1,p2,start,duration\n");
    let mut streams: std::collections::BTreeMap<String, NoiseRng> = Default::default();
    let mut t = 0.0;
    for (i, &c) in order.iter().enumerate() {
        let (kernel, params) = &calls[c];
        let id = models
            .kernel_id(kernel)
            .expect("the synthetic model covers every kernel");
        let stream = streams
            .entry(kernel.clone())
            .or_insert_with(|| NoiseRng::for_stream(seed, u64::from(core), kernel));
        let d = models.duration(id, core as usize, params, stream);
        let cells: Vec<String> = (0..3)
            .map(|j| params.get(j).map_or(String::new(), |v| format!("{v}")))
            .collect();
        let _ = writeln!(out, "{i},{core},{kernel},{},{t:.9e},{d:.17e}", cells.join(","));
        t += d;
    }
    let _ = writeln!(out, "# end: {}", calls.len());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uniform_product_emits_all_permutations_within_bounds() {
        let mut rng = NoiseRng::new(1, 2);
        let d = uniform_product_design(300, 2048.0, 1e9, &mut rng);
        assert_eq!(d.len(), 1800);
        for chunk in d.chunks(6) {
            let mut sorted: Vec<[u64; 3]> = chunk
                .iter()
                .map(|t| {
                    let mut s = [t[0] as u64, t[1] as u64, t[2] as u64];
                    s.sort();
                    s
                })
                .collect();
            sorted.dedup();
            assert_eq!(sorted.len(), 1, "one tuple, six orders");
            assert!(chunk.iter().all(|t| t.iter().all(|v| *v >= 1.0 && *v <= 2048.0)));
        }
    }

    #[test]
    fn log_uniform_sizes_put_5_in_9_below_1e5_over_9_decades() {
        let mut rng = NoiseRng::new(3, 4);
        let s = log_uniform_sizes(100_000, 9.0, &mut rng);
        let frac = s.iter().filter(|v| **v <= 100_000).count() as f64 / s.len() as f64;
        assert!((frac - 5.0 / 9.0).abs() < 0.01, "{frac}");
    }
}
