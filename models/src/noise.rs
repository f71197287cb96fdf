//! Seeded random streams and noise laws.
//!
//! # Streams
//!
//! [`NoiseRng`] is a PCG (`rand_pcg::Pcg64`, 128-bit LCG with XSL-RR output)
//! stream keyed by `(seed, stream_key)`. The caller keeps one stream per
//! `(rank, kernel)` (compute) or per `(rank, "network")` (network noise) and passes
//! it in on every call; the models own no random state. Because streams are
//! independent, adding a kernel call on one rank does not shift the draws of any
//! other `(rank, kernel)` stream. [`stream_key`] builds a key from a rank and a
//! name with a fixed hash (FNV-1a + SplitMix64), so keys are stable across Rust
//! versions and platforms.
//!
//! # Laws
//!
//! All noise is *additive*, in seconds, and drawn by one of:
//!
//! * standard normal: Marsaglia & Tsang's 128-layer ziggurat (ZIGNOR variant):
//!   one 64-bit word per draw in ~98.8% of the cases, more on rejection, so the
//!   number of words consumed varies but is a pure function of the stream;
//! * [`Mixture`]: pick component `i` with probability `weights[i]` (one uniform),
//!   then `means[i] + sigmas[i]·Z`;
//! * shifted half-normal (Cornebize HPL fork, smpi-digest §11): for a requested mean
//!   `m` and standard deviation `s`, `σ = s/√(1−2/π)`, `μ = m − σ·√(2/π)`,
//!   `value = μ + σ·|Z|`. [`half_normal_shifted`] returns that value;
//!   the compute models use its zero-mean part `s·(|Z| − √(2/π))/√(1−2/π)`.

use rand::RngCore;
use rand_pcg::Pcg64;

/// A seeded random stream for one `(seed, stream key)` pair.
///
/// Same `(seed, stream_key)` ⇒ the same sequence of draws, on every platform.
#[derive(Debug, Clone)]
pub struct NoiseRng(Pcg64);

/// SplitMix64 finaliser: a bijective 64-bit mixer.
#[inline]
pub(crate) fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A stable stream key for `(rank, name)`, e.g. `(3, "dgemm")` or `(3, "network")`.
///
/// FNV-1a over the UTF-8 bytes of `name`, combined with `rank` through SplitMix64.
pub fn stream_key(rank: u64, name: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in name.as_bytes() {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    splitmix64(h ^ splitmix64(rank))
}

impl NoiseRng {
    /// The stream for `(seed, stream_key)`. Use [`stream_key`] to derive the key
    /// from a rank (or host) and a kernel name.
    pub fn new(seed: u64, stream_key: u64) -> Self {
        let hi = splitmix64(seed);
        let lo = splitmix64(stream_key ^ 0x5851_f42d_4c95_7f2d);
        let state = (u128::from(hi) << 64) | u128::from(lo);
        // Distinct keys also get distinct PCG increments (stream selectors).
        let stream = (u128::from(splitmix64(stream_key)) << 64) | u128::from(splitmix64(seed ^ stream_key));
        NoiseRng(Pcg64::new(state, stream))
    }

    /// Shorthand for `NoiseRng::new(seed, stream_key(rank, name))`.
    pub fn for_stream(seed: u64, rank: u64, name: &str) -> Self {
        Self::new(seed, stream_key(rank, name))
    }

    /// Next raw 64-bit word.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// Uniform in `[0, 1)` with 53 random bits.
    #[inline]
    pub fn uniform(&mut self) -> f64 {
        (self.0.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform in the open interval `(0, 1)` (safe for `ln`).
    #[inline]
    fn open01(&mut self) -> f64 {
        ((self.0.next_u64() >> 11) as f64 + 0.5) * (1.0 / (1u64 << 53) as f64)
    }

    /// A standard normal draw N(0, 1): Marsaglia & Tsang's ziggurat with 128
    /// layers (Doornik's ZIGNOR variant). One 64-bit word per draw in about 98.8%
    /// of the cases (bits 11..63 give the abscissa, bits 0..6 the layer).
    #[inline]
    pub fn standard_normal(&mut self) -> f64 {
        let z = &*ZIGGURAT;
        loop {
            let w = self.0.next_u64();
            let i = (w & 0x7f) as usize;
            let u = 2.0 * ((w >> 11) as f64 * (1.0 / (1u64 << 53) as f64)) - 1.0;
            if u.abs() < z.ratio[i] {
                return u * z.x[i];
            }
            if i == 0 {
                // Tail beyond R (Marsaglia 1964).
                loop {
                    let x = self.open01().ln() / ZIG_R;
                    let y = self.open01().ln();
                    if -2.0 * y >= x * x {
                        return if u < 0.0 { x - ZIG_R } else { ZIG_R - x };
                    }
                }
            }
            let x = u * z.x[i];
            let f0 = (-0.5 * (z.x[i] * z.x[i] - x * x)).exp();
            let f1 = (-0.5 * (z.x[i + 1] * z.x[i + 1] - x * x)).exp();
            if f1 + self.uniform() * (f0 - f1) < 1.0 {
                return x;
            }
        }
    }
}

/// Number of ziggurat layers.
const ZIG_N: usize = 128;
/// Start of the tail for 128 layers (Marsaglia & Tsang 2000).
const ZIG_R: f64 = 3.442_619_855_899;
/// Area of each layer for 128 layers (for the unnormalised density `exp(−x²/2)`).
const ZIG_V: f64 = 9.912_563_035_262_17e-3;

/// Ziggurat tables: layer edges `x` (with `x[0] = V/f(R)`, `x[1] = R`, `x[N] = 0`)
/// and `ratio[i] = x[i+1]/x[i]`.
struct Ziggurat {
    x: [f64; ZIG_N + 1],
    ratio: [f64; ZIG_N],
}

static ZIGGURAT: std::sync::LazyLock<Ziggurat> = std::sync::LazyLock::new(|| {
    let f = |x: f64| (-0.5 * x * x).exp();
    let mut x = [0.0; ZIG_N + 1];
    x[0] = ZIG_V / f(ZIG_R);
    x[1] = ZIG_R;
    for i in 2..ZIG_N {
        x[i] = (-2.0 * (ZIG_V / x[i - 1] + f(x[i - 1])).ln()).sqrt();
    }
    x[ZIG_N] = 0.0;
    let mut ratio = [0.0; ZIG_N];
    for i in 0..ZIG_N {
        ratio[i] = x[i + 1] / x[i];
    }
    Ziggurat { x, ratio }
});

/// √(2/π), the mean of |Z| for Z ~ N(0, 1).
pub(crate) const SQRT_2_OVER_PI: f64 = 0.797_884_560_802_865_4;
/// 1/√(1 − 2/π), turns the sd of |Z| into 1.
pub(crate) const INV_SD_ABS_NORMAL: f64 = 1.658_896_739_970_306;

/// One draw of the Cornebize fork's "half-normal shifted" law with mean `mean`
/// and standard deviation `sd` (see the module docs). Never below
/// `mean − sd·√(2/π)/√(1−2/π)` ≈ `mean − 1.3236·sd`.
#[inline]
pub fn half_normal_shifted(mean: f64, sd: f64, rng: &mut NoiseRng) -> f64 {
    mean + sd * zero_mean_half_normal(rng)
}

/// Zero-mean, unit-sd shifted half-normal: `(|Z| − √(2/π)) / √(1 − 2/π)`.
#[inline]
pub(crate) fn zero_mean_half_normal(rng: &mut NoiseRng) -> f64 {
    (rng.standard_normal().abs() - SQRT_2_OVER_PI) * INV_SD_ABS_NORMAL
}

/// A mixture of 1 to 4 Gaussians (noise N′): component `i` is drawn with
/// probability `weights[i]`, then the value is `means[i] + sigmas[i]·Z`, in seconds.
#[derive(Debug, Clone, PartialEq)]
pub struct Mixture {
    cumulative: Vec<f64>,
    weights: Vec<f64>,
    means: Vec<f64>,
    sigmas: Vec<f64>,
}

/// Maximum number of mixture components.
pub const MAX_MIXTURE_COMPONENTS: usize = 4;

/// The largest mean (in absolute value) and sigma of a mixture component, in seconds (about
/// 30 years; the platform's longest latency).
const MAX_SECONDS: f64 = 1e9;

impl Mixture {
    /// Validates and builds a mixture. Errors (as `(field, message)`): not 1 to 4
    /// components, lengths differ, a weight `< 0` or not finite, weights not
    /// summing to 1 (± 1e-6), a sigma `< 0`, a mean not finite, a mean or sigma beyond 1e9 s.
    pub fn new(weights: Vec<f64>, means: Vec<f64>, sigmas: Vec<f64>) -> Result<Self, (&'static str, String)> {
        let n = weights.len();
        if n == 0 || n > MAX_MIXTURE_COMPONENTS {
            return Err(("weights", format!("a mixture has 1 to 4 components, found {n}")));
        }
        if means.len() != n {
            return Err((
                "means",
                format!("expected {n} means (one per weight), found {}", means.len()),
            ));
        }
        if sigmas.len() != n {
            return Err((
                "sigmas",
                format!("expected {n} sigmas (one per weight), found {}", sigmas.len()),
            ));
        }
        if let Some(w) = weights.iter().find(|w| !w.is_finite() || **w < 0.0) {
            return Err(("weights", format!("weight {w} is negative or not finite")));
        }
        let sum: f64 = weights.iter().sum();
        if (sum - 1.0).abs() > 1e-6 {
            return Err(("weights", format!("weights sum to {sum}, expected 1")));
        }
        if let Some(m) = means.iter().find(|m| !m.is_finite()) {
            return Err(("means", format!("mean {m} is not finite")));
        }
        if let Some(s) = sigmas.iter().find(|s| !s.is_finite() || **s < 0.0) {
            return Err((
                "sigmas",
                format!("negative sigma {s} (a standard deviation must be >= 0)"),
            ));
        }
        // Seconds: anything longer is no noise, and a draw must stay a finite number.
        if let Some(m) = means.iter().find(|m| m.abs() > MAX_SECONDS) {
            return Err((
                "means",
                format!("mean {} is beyond ±1e9 s", crate::piecewise::shown(*m)),
            ));
        }
        if let Some(s) = sigmas.iter().find(|s| **s > MAX_SECONDS) {
            return Err((
                "sigmas",
                format!("sigma {} is above 1e9 s", crate::piecewise::shown(*s)),
            ));
        }
        let mut acc = 0.0;
        let mut cumulative: Vec<f64> = weights
            .iter()
            .map(|w| {
                acc += w / sum;
                acc
            })
            .collect();
        *cumulative.last_mut().expect("n >= 1 checked above") = f64::INFINITY;
        Ok(Self {
            cumulative,
            weights,
            means,
            sigmas,
        })
    }

    /// A single Gaussian N(mean, sigma²).
    pub fn normal(mean: f64, sigma: f64) -> Result<Self, (&'static str, String)> {
        Self::new(vec![1.0], vec![mean], vec![sigma])
    }

    /// Component weights.
    pub fn weights(&self) -> &[f64] {
        &self.weights
    }
    /// Component means (s).
    pub fn means(&self) -> &[f64] {
        &self.means
    }
    /// Component standard deviations (s).
    pub fn sigmas(&self) -> &[f64] {
        &self.sigmas
    }
    /// The mean of the mixture, `Σ wᵢ·μᵢ`.
    pub fn mean(&self) -> f64 {
        self.weights.iter().zip(&self.means).map(|(w, m)| w * m).sum()
    }

    /// Index of the component chosen by the uniform `u` in `[0, 1)`.
    #[inline]
    pub fn component(&self, u: f64) -> usize {
        self.cumulative
            .iter()
            .position(|&c| u < c)
            .unwrap_or(self.cumulative.len() - 1)
    }

    /// One draw (seconds): one uniform to choose the component, then one normal
    /// (skipped when the component's sigma is 0).
    #[inline]
    pub fn sample(&self, rng: &mut NoiseRng) -> f64 {
        let i = if self.cumulative.len() == 1 {
            0
        } else {
            self.component(rng.uniform())
        };
        let s = self.sigmas[i];
        if s == 0.0 {
            self.means[i]
        } else {
            self.means[i] + s * rng.standard_normal()
        }
    }
}

#[cfg(test)]
mod tests;
