//! Compute-kernel models: how long one call of `dgemm`, `dtrsm`, … (or of a
//! declared function such as `HPL_dlaswp02N`) lasts, given its size parameters.
//!
//! # Model options (methodology-digest §1.5, Cornebize thesis ch. 4)
//!
//! Every model is a [`Polynomial`] in the kernel's *variables*:
//!
//! * **M-0** constant `α` (a polynomial with only an intercept);
//! * **M-1** `a·S + b` for one product `S` of variables (e.g. `S = M·N·K`);
//! * **M-2** the full polynomial, e.g. `MNK, MN, MK, NK, M, N, K, intercept`;
//! * **M′** piecewise: the segment is chosen by a feature (a product of variables)
//!   with lower-inclusive starts, segment `i` covers `[startᵢ, startᵢ₊₁)`; values
//!   below the first start use the first segment;
//! * **M_H** per host: hosts listed in a `host` entry use their own model.
//!
//! Noise ([`Noise`]) is added to the model value, in seconds:
//! **N-0** none; **N-1** normal with constant σ; **N-2** normal with σ a polynomial
//! of the variables (we model σ, not σ², and clamp a negative σ to 0);
//! **N′** a Gaussian mixture; the Cornebize HPL fork's **shifted half-normal**
//! with σ constant or polynomial (zero mean, standard deviation σ); **N_H** per
//! host (host entries may carry their own noise).
//!
//! # Calls with an empty operand
//!
//! A kernel may say how long a call lasts when a product of its variables is 0
//! (`empty = { product = "M*N*K", seconds = 3e-8 }` in its table): BLAS returns
//! at once then (M, N or K of `dgemm` is 0: HPL updates empty blocks), and a
//! polynomial fitted to real work would charge its intercept and cross terms
//! for nothing (a calibrated `dgemm` charged 4 µs for each of HPL's thousands
//! of N = 0 calls, which take 30 ns). Without the key such calls take the
//! model's value, as SMPI's model libraries do. Either way they are not
//! extrapolations (see [`crate::calibrated`]).
//!
//! # Negative durations
//!
//! A call lasts `max(0, model + noise)`: a negative (or NaN) total is **clamped to
//! 0**, never redrawn. Clamping keeps the number of draws per call a pure function
//! of the stream (a redraw loop would not) and costs nothing; it biases the mean
//! up by `E[max(0, −T)]`, which is negligible when σ is small against the model
//! value. With the shifted half-normal, a negative total needs
//! `model < 1.3236·σ`.
//!
//! # Parameters per kernel
//!
//! `params` passed to [`ComputeModels::duration`] (sizes as `f64`):
//!
//! | kernel | params | variables usable in terms |
//! |---|---|---|
//! | `dgemm` | `[M, N, K]` | `M N K` |
//! | `dtrsm` | `[M, N, side]`, side 0 = Left, ≠0 = Right | `M N K`, with `K = M` (Left) or `N` (Right): the triangle's order, so `M·N·K` is `M²N` or `MN²` |
//! | `dgemv`, `dger` | `[M, N]` | `M N` |
//! | `dtrsv`, `daxpy`, `dscal`, `dswap`, `dcopy`, `idamax` | `[N]` | `N` |
//! | declared `kind = "function"` | as declared in `params` (≤ 8) | the declared names |

use std::collections::BTreeMap;

use crate::calibrated::{Calibration, Extrapolations};
use crate::noise::{zero_mean_half_normal, Mixture, NoiseRng};

/// The ten BLAS kernels known without declaration (HPL's BLAS surface,
/// smpi-digest §10.2).
pub const BLAS_KERNELS: [&str; 10] = [
    "dgemm", "dtrsm", "dgemv", "dger", "dtrsv", "daxpy", "dscal", "dswap", "dcopy", "idamax",
];

/// Maximum number of parameters of a kernel.
pub const MAX_PARAMS: usize = 8;
/// Maximum degree of one polynomial term (number of variable factors).
pub const MAX_DEGREE: usize = 6;

/// Index of a modelled kernel in a [`ComputeModels`]. Ids follow the sorted kernel
/// names, so they are the same for every load of the same model set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct KernelId(u32);

impl KernelId {
    /// The index as `usize`.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// How call parameters become model variables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Derive {
    /// Variables are the parameters.
    Identity,
    /// `dtrsm`: params `[M, N, side]` → variables `[M, N, K]`, `K = side == 0 ? M : N`.
    Dtrsm,
}

/// The parameters a kernel takes and the variables its polynomials use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signature {
    /// Names of the call parameters, in order.
    pub params: Vec<String>,
    /// Names of the variables polynomial terms may use.
    pub variables: Vec<String>,
    pub(crate) derive: Derive,
}

impl Signature {
    /// The signature of a BLAS kernel, `None` for other names.
    pub fn blas(name: &str) -> Option<Self> {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        let (params, vars, derive) = match name {
            "dgemm" => (s(&["M", "N", "K"]), s(&["M", "N", "K"]), Derive::Identity),
            "dtrsm" => (s(&["M", "N", "side"]), s(&["M", "N", "K"]), Derive::Dtrsm),
            "dgemv" | "dger" => (s(&["M", "N"]), s(&["M", "N"]), Derive::Identity),
            "dtrsv" | "daxpy" | "dscal" | "dswap" | "dcopy" | "idamax" => {
                (s(&["N"]), s(&["N"]), Derive::Identity)
            }
            _ => return None,
        };
        Some(Self {
            params,
            variables: vars,
            derive,
        })
    }

    /// A declared function's signature: the variables are the parameters.
    pub(crate) fn function(params: Vec<String>) -> Self {
        Self {
            variables: params.clone(),
            params,
            derive: Derive::Identity,
        }
    }

    #[inline]
    fn variables_of(&self, params: &[f64], x: &mut [f64; SLOTS]) {
        let n = self.params.len();
        assert!(
            params.len() >= n,
            "compute model called with {} parameters, the kernel takes {} ({:?})",
            params.len(),
            n,
            self.params
        );
        x[..n].copy_from_slice(&params[..n]);
        x[MAX_PARAMS] = 1.0;
        if self.derive == Derive::Dtrsm {
            x[2] = if params[2] == 0.0 { params[0] } else { params[1] };
        }
    }
}

/// Index of the variable slot that always holds 1.0 (pads terms of degree < 6).
pub(crate) const ONE: u8 = MAX_PARAMS as u8;
/// Size of the variable buffer: the variables plus the constant-1 slot.
pub(crate) const SLOTS: usize = MAX_PARAMS + 1;

/// One term `coef · Π x[vars[i]]`; unused factors point at the constant-1 slot,
/// so evaluation is a fixed, branch-free product.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Term {
    coef: f64,
    vars: [u8; MAX_DEGREE],
}

/// A polynomial in a kernel's variables: `Σ coef · Π variables`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Polynomial {
    terms: Vec<Term>,
}

impl Polynomial {
    /// The constant `c`.
    pub fn constant(c: f64) -> Self {
        let mut p = Self::default();
        p.push(c, &[]);
        p
    }

    /// Adds the term `coef · Π x[vars]` (variable indices; at most [`MAX_DEGREE`]).
    pub(crate) fn push(&mut self, coef: f64, vars: &[u8]) {
        assert!(vars.len() <= MAX_DEGREE, "term degree checked by the parser");
        let mut v = [ONE; MAX_DEGREE];
        v[..vars.len()].copy_from_slice(vars);
        self.terms.push(Term { coef, vars: v });
    }

    /// Evaluates at the variables `x` (at most [`MAX_PARAMS`]; missing ones are 0).
    pub fn eval(&self, x: &[f64]) -> f64 {
        let mut buf = [0.0; SLOTS];
        let n = x.len().min(MAX_PARAMS);
        buf[..n].copy_from_slice(&x[..n]);
        buf[MAX_PARAMS] = 1.0;
        self.eval_slots(&buf)
    }

    /// Evaluates on a full variable buffer whose last slot is 1.0.
    #[inline]
    fn eval_slots(&self, x: &[f64; SLOTS]) -> f64 {
        let mut sum = 0.0;
        for t in &self.terms {
            let f = |i: usize| x[t.vars[i] as usize];
            // Left to right, coefficient first, as the formula reads: a C model
            // library computing `a * M * N * K` gets the same bits, and a last-bit
            // difference in an injected time can change which rank wins an
            // MPI_Iprobe race (HPL 16x16 took another path with a product tree).
            sum += t.coef * f(0) * f(1) * f(2) * f(3) * f(4) * f(5);
        }
        sum
    }

    /// Number of terms.
    pub fn len(&self) -> usize {
        self.terms.len()
    }

    /// True when the polynomial has no term (it is 0).
    pub fn is_empty(&self) -> bool {
        self.terms.is_empty()
    }

    /// Parses a term name into sorted variable indices: `intercept` or `1` → `[]`;
    /// `M*N*K`, `MNK` (concatenated single-letter variables), `M^2*N` (powers with
    /// `^`). Errors name the unknown part.
    pub(crate) fn parse_term(term: &str, variables: &[String]) -> Result<Vec<u8>, String> {
        let t = term.trim();
        if t == "intercept" || t == "1" {
            return Ok(Vec::new());
        }
        let mut out = Vec::new();
        let find = |name: &str| variables.iter().position(|v| v == name);
        for factor in t.split('*').map(str::trim) {
            let (base, pow) = match factor.split_once('^') {
                Some((b, p)) => {
                    let p: usize = p.trim().parse().ok().filter(|p| *p >= 1).ok_or_else(|| {
                        format!("bad exponent in `{factor}` of term `{term}` (expected an integer >= 1)")
                    })?;
                    (b.trim(), p)
                }
                None => (factor, 1),
            };
            let idx: Vec<usize> = if let Some(i) = find(base) {
                vec![i]
            } else if !base.is_empty() && base.chars().all(|c| find(c.encode_utf8(&mut [0; 4])).is_some()) {
                base.chars()
                    .filter_map(|c| find(c.encode_utf8(&mut [0; 4])))
                    .collect()
            } else {
                return Err(format!(
                    "unknown variable `{base}` in term `{term}` (variables: {}; write products as \
                     `M*N*K` or `MNK`, a constant as `intercept`)",
                    variables.join(", ")
                ));
            };
            // The degree is checked before the factors are written out (`M^99999999999`).
            let degree = out.len() as u128 + idx.len() as u128 * pow as u128;
            if degree > MAX_DEGREE as u128 {
                return Err(format!(
                    "term `{term}` has degree {degree} (at most {MAX_DEGREE})"
                ));
            }
            for _ in 0..pow {
                out.extend(idx.iter().map(|&i| i as u8));
            }
        }
        out.sort_unstable();
        Ok(out)
    }
}

/// Noise added to a compute model (seconds). See the module docs.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Noise {
    /// N-0: no noise.
    #[default]
    None,
    /// N-1 (constant σ) or N-2 (σ polynomial in the variables): `σ·Z`, Z ~ N(0,1).
    Normal(Polynomial),
    /// Cornebize fork: zero-mean shifted half-normal with standard deviation σ
    /// (constant or polynomial): `σ·(|Z| − √(2/π))/√(1 − 2/π)`.
    HalfNormal(Polynomial),
    /// N′: a Gaussian mixture, in seconds.
    Mixture(Mixture),
}

impl Noise {
    #[inline]
    fn sample(&self, x: &[f64; SLOTS], rng: &mut NoiseRng) -> f64 {
        match self {
            Noise::None => 0.0,
            Noise::Normal(s) => s.eval_slots(x).max(0.0) * rng.standard_normal(),
            Noise::HalfNormal(s) => s.eval_slots(x).max(0.0) * zero_mean_half_normal(rng),
            Noise::Mixture(m) => m.sample(rng),
        }
    }
}

/// One segment of a (possibly piecewise) model.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Segment {
    pub(crate) model: Polynomial,
    pub(crate) noise: Noise,
}

/// A full model for one kernel on some hosts: one or more segments.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Variant {
    /// The feature that selects the segment (a monomial with coefficient 1);
    /// `None` when there is a single segment.
    pub(crate) on: Option<Polynomial>,
    /// Lower-inclusive starts of segments 1.. (segment 0 has no lower bound).
    pub(crate) starts: Vec<f64>,
    pub(crate) segments: Vec<Segment>,
    /// `from` of the first range as written (−∞ without ranges): it names the
    /// range in `[about.calibrated]`, the segment itself has no lower bound.
    pub(crate) first_from: f64,
    /// `to` of the last range as written, if any (documentation, likewise).
    pub(crate) last_to: Option<f64>,
}

impl Variant {
    #[inline]
    fn segment(&self, x: &[f64; SLOTS]) -> &Segment {
        &self.segments[self.segment_index(x)]
    }

    /// Index of the segment that applies at the variables `x`.
    #[inline]
    pub(crate) fn segment_index(&self, x: &[f64; SLOTS]) -> usize {
        match &self.on {
            None => 0,
            Some(f) => {
                let v = f.eval_slots(x);
                self.starts.partition_point(|&s| s <= v)
            }
        }
    }

    /// Segment `i`'s bounds as the file writes them: `from`, and the next range's
    /// `from` (or the last range's `to`).
    pub(crate) fn written_bounds(&self, i: usize) -> (f64, Option<f64>) {
        let lower = if i == 0 {
            self.first_from
        } else {
            self.starts[i - 1]
        };
        let upper = self.starts.get(i).copied().or(self.last_to);
        (lower, upper)
    }
}

/// One modelled kernel.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Kernel {
    pub(crate) name: String,
    pub(crate) signature: Signature,
    /// `variants[0]` is the default; others are per-host overrides.
    pub(crate) variants: Vec<Variant>,
    /// host index → variant index (hosts past the end use 0).
    pub(crate) host_variant: Vec<u32>,
    /// `1/quantum` when durations are truncated to a multiple of `quantum` seconds.
    pub(crate) inv_quantum: Option<f64>,
    /// Where the model was calibrated (`[about.calibrated]`), if the file says.
    pub(crate) calibration: Option<Calibration>,
    /// How long a call whose product is 0 lasts (`empty`), if the file says.
    pub(crate) empty: Option<EmptyCall>,
}

/// A kernel's calls with an empty operand: those whose `product` of variables
/// is 0 last `seconds`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct EmptyCall {
    /// Variable indices of the product.
    pub(crate) product: Vec<u8>,
    pub(crate) seconds: f64,
}

impl Kernel {
    /// The `empty` duration when it applies to these variables.
    #[inline]
    fn empty_call(&self, x: &[f64; SLOTS]) -> Option<f64> {
        let e = self.empty.as_ref()?;
        e.product
            .iter()
            .any(|&v| x[v as usize] == 0.0)
            .then_some(e.seconds)
    }
}

/// The compute models of a model set: a table of kernels by name.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ComputeModels {
    kernels: Vec<Kernel>,
    index: BTreeMap<String, KernelId>,
}

impl ComputeModels {
    /// No kernel modelled.
    pub fn new() -> Self {
        Self::default()
    }

    pub(crate) fn insert(&mut self, kernel: Kernel) {
        let id = KernelId(self.kernels.len() as u32);
        self.index.insert(kernel.name.clone(), id);
        self.kernels.push(kernel);
    }

    /// The id of kernel `name`, `None` when it is not modelled. Exact names first;
    /// then BLAS spellings are normalised: `cblas_dgemm`, `dgemm_`, `HPL_dgemm` and
    /// `DGEMM` all find `dgemm`.
    pub fn kernel_id(&self, name: &str) -> Option<KernelId> {
        if let Some(id) = self.index.get(name) {
            return Some(*id);
        }
        let lower = name.to_ascii_lowercase();
        let base = lower
            .strip_prefix("cblas_")
            .or_else(|| lower.strip_prefix("hpl_"))
            .unwrap_or(&lower);
        let base = base.trim_end_matches('_');
        if BLAS_KERNELS.contains(&base) {
            self.index.get(base).copied()
        } else {
            None
        }
    }

    /// Names of the modelled kernels, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.index.keys().map(String::as_str)
    }

    /// Number of modelled kernels.
    pub fn len(&self) -> usize {
        self.kernels.len()
    }

    /// True when no kernel is modelled.
    pub fn is_empty(&self) -> bool {
        self.kernels.is_empty()
    }

    /// Name of kernel `k`.
    pub fn name(&self, k: KernelId) -> &str {
        &self.kernels[k.index()].name
    }

    /// Parameters and variables of kernel `k`.
    pub fn signature(&self, k: KernelId) -> &Signature {
        &self.kernels[k.index()].signature
    }

    /// Duration in seconds of one call of kernel `k` on host index `host` with the
    /// size parameters `params` (positions per kernel in the module docs), drawing
    /// noise from `rng`, the caller's stream for `(seed, rank, kernel)`.
    ///
    /// Never negative: `max(0, model + noise)`, then truncated to the kernel's
    /// `quantum` if it has one. Panics if `params` is shorter than the kernel's
    /// parameter list (a caller bug).
    #[inline]
    pub fn duration(&self, k: KernelId, host: usize, params: &[f64], rng: &mut NoiseRng) -> f64 {
        self.eval(k, host, params, Some(rng))
    }

    /// Whether kernel `k` draws noise on some host: only then do its calls
    /// need a random stream ([`duration`](Self::duration)); without noise they
    /// are [`duration_without_noise`](Self::duration_without_noise).
    pub fn is_noisy(&self, k: KernelId) -> bool {
        (self.kernels[k.index()].variants.iter()).any(|v| v.segments.iter().any(|s| s.noise != Noise::None))
    }

    /// The model value without noise (N-0) for the same arguments as
    /// [`duration`](Self::duration), also clamped at 0 and truncated.
    #[inline]
    pub fn duration_without_noise(&self, k: KernelId, host: usize, params: &[f64]) -> f64 {
        self.eval(k, host, params, None)
    }

    /// True when some kernel has calibrated ranges (`[about.calibrated]`), so
    /// that [`check_calibrated`](Self::check_calibrated) can find extrapolations.
    pub fn is_calibrated(&self) -> bool {
        self.kernels.iter().any(|k| k.calibration.is_some())
    }

    /// An empty tally of extrapolations for this model set (allocated once).
    pub fn extrapolations(&self) -> Extrapolations {
        Extrapolations::new(self)
    }

    /// Checks one call of kernel `k` with `params` (as for
    /// [`duration`](Self::duration)), which lasted `seconds`, against the
    /// kernel's calibrated ranges and counts it in `tally` when a term is
    /// outside. Cheap: nothing happens for a
    /// kernel without ranges; otherwise a few products and comparisons, no
    /// allocation. The range of a piecewise kernel is the segment its default
    /// model uses for these parameters.
    #[inline]
    pub fn check_calibrated(&self, k: KernelId, params: &[f64], seconds: f64, tally: &mut Extrapolations) {
        let kernel = &self.kernels[k.index()];
        let Some(cal) = &kernel.calibration else { return };
        let mut x = [0.0; SLOTS];
        kernel.signature.variables_of(params, &mut x);
        let segment = kernel.variants[0].segment_index(&x);
        cal.record(k, segment, &x, seconds, tally);
    }

    /// Kernel `k`'s calibrated ranges, if any.
    pub(crate) fn calibration(&self, k: KernelId) -> Option<&Calibration> {
        self.kernels[k.index()].calibration.as_ref()
    }

    /// Each kernel's calibrated ranges, in id order.
    pub(crate) fn kernel_calibrations(&self) -> impl Iterator<Item = Option<&Calibration>> {
        self.kernels.iter().map(|k| k.calibration.as_ref())
    }

    #[inline]
    fn eval(&self, k: KernelId, host: usize, params: &[f64], rng: Option<&mut NoiseRng>) -> f64 {
        let kernel = &self.kernels[k.index()];
        let mut x = [0.0; SLOTS];
        kernel.signature.variables_of(params, &mut x);
        if let Some(t) = kernel.empty_call(&x) {
            return t;
        }
        let v = kernel.host_variant.get(host).map_or(0, |&v| v as usize);
        let seg = kernel.variants[v].segment(&x);
        let mut t = seg.model.eval_slots(&x);
        if let Some(rng) = rng {
            t += seg.noise.sample(&x, rng);
        }
        // Clamp negative and NaN totals to 0 (see the module docs).
        let t = if t > 0.0 { t } else { 0.0 };
        match kernel.inv_quantum {
            Some(inv) => (t * inv).floor() / inv,
            None => t,
        }
    }
}

#[cfg(test)]
mod tests;
