//! Compute-kernel calibration: per kernel, the thesis's mean models M-0
//! (constant), M-1 (a·product + b) and M-2 (full polynomial), chosen by k-fold
//! cross-validation; noise N-0, N-1 (constant σ) or N-2 (σ a polynomial of the
//! same terms); and per-core models (M_H) when the cores differ. The README
//! ("Compute kernels") gives the estimators and the selection rules.

use std::collections::BTreeMap;

use crate::error::InputError;
use crate::input::{CalibrationFile, KernelCall, Table};
use crate::regress::{least_squares, LinearFit};
use crate::stats;

/// `√(π/2)`: E|r| = σ·√(2/π) for a centred normal r, so σ = √(π/2)·E|r|.
const SQRT_PI_OVER_2: f64 = 1.253_314_137_315_500_3;

/// Largest relative σ written by the relative noise model: the simulator
/// clamps a negative draw to 0, which biases the mean by about
/// σ·φ(1/cv) − μ·Φ(−1/cv): 0.4 % of the mean at cv = 0.5, 8 % at cv = 1.
pub const MAX_RELATIVE_SIGMA: f64 = 0.5;

/// A range of K, `[from, to)` (`to` = None: no upper bound).
pub type KRange = (u64, Option<u64>);

/// How kernel noise is modelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KernelNoise {
    /// N-1 against N-2 (σ a polynomial fitted on |residuals|) by
    /// cross-validation, the mean by GLS (the thesis's models).
    Fitted,
    /// σ(x) = cv·ŷ(x), cv the robust relative spread of the calls around the
    /// mean (1.4826·MAD, at most [`MAX_RELATIVE_SIGMA`]); the mean by relative
    /// least squares. An N-2 model whose σ never exceeds half the mean, so that
    /// clamping negative draws does not bias the simulated time.
    Relative,
    /// N-0: the mean alone.
    None,
}

/// Options of the compute fits.
#[derive(Debug, Clone, Copy)]
pub struct ComputeOptions {
    /// Number of cross-validation folds.
    pub folds: usize,
    /// Seed of the fold assignment.
    pub seed: u64,
    /// Significance level of the per-core F-test.
    pub host_alpha: f64,
    /// Smallest relative effect on the total time that makes per-core models
    /// worth it (with a significant F-test).
    pub host_effect: f64,
    /// In-sample relative RMS residual under which data count as noise-free.
    pub noise_free: f64,
    /// Screen gross outliers (preempted calls) out before fitting.
    pub screen_outliers: bool,
    /// Pilot weights 1/ŷ² from the robust pilot (relative least squares)
    /// instead of 1/σ̂₀(x)² from the full polynomial's |residuals|.
    pub relative_pilot: bool,
    /// The noise model.
    pub noise: KernelNoise,
    /// Which kernels are fitted on the calls traced in the program alone when
    /// a trace (`mode: trace`) has enough of them.
    pub from_trace: FromTrace,
    /// Fit by ordinary least squares (every call weighs the same) instead of
    /// relative least squares. Set for the fits of traced calls alone: a
    /// program's calls of one function span decades whose cost per unit
    /// changes with them (HPL's row swaps: 0.5 ns an element while the rows
    /// fit in the caches, 5–7 ns beyond), no line fits them in relative terms,
    /// and what a simulation of the program needs is their total time.
    pub ordinary: bool,
}

/// Kernels whose traced calls, when there are enough, replace the design's
/// (methodology: HPL's small kernels are calibrated by logging their calls
/// in a small real HPL run). A traced call runs on the program's own
/// operands, warm from what the program just did; the design's run on a
/// cold matrix. HPL's row swaps move rows its factorization has just
/// touched: on this project's VM the design's fit put the 2×1 swaps of
/// N = 8000 at 0.61 s against 0.47 s measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FromTrace {
    /// Pool traced and designed calls for every kernel.
    None,
    /// The program's own functions (`HPL_*`).
    Functions,
    /// Every kernel but dgemm and dtrsm (whose designs cover shapes a small
    /// run does not reach; their traced calls are pooled).
    Small,
}

impl Default for ComputeOptions {
    fn default() -> Self {
        Self {
            folds: 10,
            seed: 1,
            host_alpha: 1e-3,
            host_effect: 0.01,
            noise_free: 1e-9,
            screen_outliers: true,
            relative_pilot: true,
            noise: KernelNoise::Relative,
            from_trace: FromTrace::Functions,
            ordinary: false,
        }
    }
}

/// A product of variables (a polynomial term).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Term {
    /// Indices into the kernel's variables, with repetition for powers, sorted;
    /// empty for the intercept.
    pub vars: Vec<usize>,
}

impl Term {
    /// The term's name in the models crate's syntax: `intercept`, `MNK`
    /// (single-letter variables), `M1*N`, `N^2`.
    pub fn name(&self, variables: &[String]) -> String {
        if self.vars.is_empty() {
            return "intercept".into();
        }
        let mut parts: Vec<String> = Vec::new();
        let mut i = 0;
        while i < self.vars.len() {
            let v = self.vars[i];
            let count = self.vars[i..].iter().take_while(|x| **x == v).count();
            let name = &variables[v];
            parts.push(if count > 1 {
                format!("{name}^{count}")
            } else {
                name.clone()
            });
            i += count;
        }
        if parts.iter().all(|p| p.len() == 1) {
            parts.concat()
        } else {
            parts.join("*")
        }
    }

    /// Value at the variables `x`.
    pub fn eval(&self, x: &[f64]) -> f64 {
        self.vars.iter().fold(1.0, |acc, v| acc * x[*v])
    }
}

/// What a kernel takes and which terms its models use.
#[derive(Debug, Clone, PartialEq)]
pub struct KernelSpec {
    /// Kernel or function name.
    pub name: String,
    /// CSV parameters (FORMAT.md order).
    pub params: Vec<String>,
    /// Variables of the terms (dtrsm: `M N K` with K the triangle's order).
    pub variables: Vec<String>,
    /// True for HPL functions (`kind = "function"` in the model file).
    pub function: bool,
    /// The natural product of M-1.
    pub product: Term,
    /// The terms of M-2 (intercept first).
    pub full: Vec<Term>,
}

impl KernelSpec {
    /// The spec of a kernel whose CSV parameters are `params` (as
    /// [`crate::input::kernel_params`] names them).
    pub fn new(name: &str, params: &[&str]) -> Self {
        let params: Vec<String> = params.iter().map(|s| s.to_string()).collect();
        let variables: Vec<String> = if name == "dtrsm" {
            vec!["M".into(), "N".into(), "K".into()]
        } else {
            params.clone()
        };
        let nv = variables.len();
        let subsets = |vars: usize| -> Vec<Term> {
            let mut t: Vec<Term> = (0..1u32 << vars)
                .map(|mask| Term {
                    vars: (0..vars).filter(|v| mask & (1 << v) != 0).collect(),
                })
                .collect();
            // Intercept first, then by decreasing degree.
            t.sort_by(|a, b| b.vars.len().cmp(&a.vars.len()).then(a.vars.cmp(&b.vars)));
            t.rotate_right(1);
            t
        };
        let (product, full) = match name {
            "dtrsv" => (
                Term { vars: vec![0, 0] },
                vec![
                    Term { vars: vec![] },
                    Term { vars: vec![0, 0] },
                    Term { vars: vec![0] },
                ],
            ),
            "HPL_dlaswp04T" => (Term { vars: vec![1, 2] }, subsets(3)),
            _ => (
                Term {
                    vars: (0..nv).collect(),
                },
                subsets(nv),
            ),
        };
        Self {
            name: name.into(),
            params,
            variables,
            function: name.starts_with("HPL_"),
            product,
            full,
        }
    }

    /// Model variables from a call's parameters.
    pub fn variables_of(&self, params: &[f64]) -> Vec<f64> {
        if self.name == "dtrsm" {
            let k = if params[2] == 0.0 { params[0] } else { params[1] };
            vec![params[0], params[1], k]
        } else {
            params.to_vec()
        }
    }
}

/// The mean models.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
pub enum MeanModel {
    /// M-0: a constant.
    #[serde(rename = "M-0")]
    Constant,
    /// M-1: a·product + b.
    #[serde(rename = "M-1")]
    Linear,
    /// M-2: the full polynomial.
    #[serde(rename = "M-2")]
    Polynomial,
}

impl MeanModel {
    /// The thesis's name.
    pub fn label(self) -> &'static str {
        match self {
            MeanModel::Constant => "M-0",
            MeanModel::Linear => "M-1",
            MeanModel::Polynomial => "M-2",
        }
    }
}

/// The noise models.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum NoiseModel {
    /// N-0: none.
    #[serde(rename = "N-0")]
    None,
    /// N-1: normal, constant σ.
    #[serde(rename = "N-1")]
    Constant,
    /// N-2: normal, σ a polynomial of the mean model's terms.
    #[serde(rename = "N-2")]
    Polynomial,
}

impl NoiseModel {
    /// The thesis's name.
    pub fn label(self) -> &'static str {
        match self {
            NoiseModel::None => "N-0",
            NoiseModel::Constant => "N-1",
            NoiseModel::Polynomial => "N-2",
        }
    }
}

/// A fitted mean model with its terms.
#[derive(Debug, Clone, PartialEq)]
pub struct MeanFit {
    /// Which model.
    pub model: MeanModel,
    /// Terms, in column order (aliased ones included, see `fit.aliased`).
    pub terms: Vec<Term>,
    /// The least-squares fit.
    pub fit: LinearFit,
    /// How the final fit was weighted.
    pub weighting: &'static str,
    /// Coefficients rounded for the model file (0 for aliased terms).
    pub written: Vec<f64>,
}

impl MeanFit {
    /// Prediction at variables `x` with the written coefficients.
    pub fn predict(&self, x: &[f64]) -> f64 {
        self.terms
            .iter()
            .zip(&self.written)
            .map(|(t, c)| c * t.eval(x))
            .sum()
    }
}

/// A fitted noise model.
#[derive(Debug, Clone, PartialEq)]
pub struct NoiseFit {
    /// Which model.
    pub model: NoiseModel,
    /// σ terms and coefficients (N-1: just the intercept).
    pub sigma: Vec<(Term, f64)>,
}

impl NoiseFit {
    /// σ at variables `x` (clamped at 0, as the simulator does).
    pub fn sigma_at(&self, x: &[f64]) -> f64 {
        self.sigma
            .iter()
            .map(|(t, c)| c * t.eval(x))
            .sum::<f64>()
            .max(0.0)
    }
}

/// Cross-validation score of one candidate.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct CvScore {
    /// Candidate name (`M-1`, `N-2`, ...).
    pub name: String,
    /// Mean held-out score (MSE in s² for mean models, negative log-likelihood
    /// per call for noise models).
    pub score: f64,
    /// Standard error of the score over the folds.
    pub se: f64,
    /// Mean held-out relative error |ŷ − y|/y (mean models only); for an
    /// ordinary least-squares fit (see [`ComputeOptions::ordinary`]) the
    /// held-out error of the total time, Σ|ŷ − y| / Σy.
    pub rel_error: f64,
}

/// The per-core comparison.
#[derive(Debug, Clone, PartialEq)]
pub struct HostTest {
    /// F statistic of per-core coefficients against pooled ones.
    pub f: f64,
    /// Its p-value.
    pub p_value: f64,
    /// Largest relative change of the design's total predicted time when one
    /// core's own model replaces the pooled one.
    pub effect: f64,
    /// True when per-core models are written.
    pub per_host: bool,
    /// Per host index: its own mean and noise fits.
    pub fits: Vec<(usize, MeanFit, NoiseFit)>,
}

/// The fit of one kernel.
#[derive(Debug, Clone, PartialEq)]
pub struct KernelFit {
    /// What the kernel takes.
    pub spec: KernelSpec,
    /// Number of calls fitted.
    pub calls: usize,
    /// Host indices present.
    pub hosts: Vec<usize>,
    /// CV scores of M-0, M-1, M-2.
    pub mean_scores: Vec<CvScore>,
    /// The chosen mean model, fitted on all calls.
    pub mean: MeanFit,
    /// The M-2 fit (kept for summaries even when not chosen).
    pub full: MeanFit,
    /// CV scores of N-1, N-2.
    pub noise_scores: Vec<CvScore>,
    /// The chosen noise model.
    pub noise: NoiseFit,
    /// True when the data are noise-free (N-0 and relative least squares).
    pub noise_free: bool,
    /// Per-core comparison (with at least two cores of enough calls).
    pub hosts_test: Option<HostTest>,
    /// Calibrated range of each variable and of the product: `name → (min, max)`.
    pub range: BTreeMap<String, (f64, f64)>,
    /// Σ product / Σ duration (units of product per second; ×2 for dgemm's flop/s).
    pub performance: f64,
    /// Measured mean duration.
    pub mean_duration: f64,
    /// The variables and durations of every call (for plots), host index last.
    pub data: Vec<(Vec<f64>, f64, usize)>,
    /// For dgemm and dtrsm with a fixed-K design among the files (`fixed_k` in
    /// their metadata; dtrsm's K is its triangle's order): the K range `[from, to)` of this fit (`to` = None: no upper
    /// bound). `smpi-fit` writes the fits of one kernel as the ranges of a
    /// model piecewise on K.
    pub k_range: Option<KRange>,
    /// Calls with a zero dimension (BLAS's quick return), left out of the fit.
    pub zero_size: usize,
    /// Median duration of those calls (s): the model file's `empty` time.
    pub zero_size_median: Option<f64>,
    /// Calls of the calibration designs set aside because the program's
    /// trace had enough calls of its own (see [`FromTrace`]).
    pub design_set_aside: usize,
    /// Fitted by ordinary least squares (see [`ComputeOptions::ordinary`]).
    pub ordinary: bool,
    /// Calls screened out as gross outliers (see [`robust_pilot`]).
    pub outliers: usize,
}

impl KernelFit {
    /// The kernel's name, with its K range when it has one (`dgemm@K=128`).
    pub fn label(&self) -> String {
        match self.k_range {
            Some((a, Some(b))) if b == a + 1 => format!("{}@K={a}", self.spec.name),
            Some((0, Some(b))) => format!("{}@K<{b}", self.spec.name),
            Some((a, Some(b))) => format!("{}@K[{a},{b})", self.spec.name),
            Some((a, None)) => format!("{}@K>={a}", self.spec.name),
            None => self.spec.name.clone(),
        }
    }

    /// The K of a fixed-K fit (a one-value K range).
    pub fn fixed_k(&self) -> Option<u64> {
        match self.k_range {
            Some((a, Some(b))) if b == a + 1 => Some(a),
            _ => None,
        }
    }
}

/// Significant digits a coefficient deserves: two beyond its standard
/// error's leading digit, from 4 to 12 (12 when the SE is 0).
fn digits_for(coef: f64, se: f64) -> i32 {
    if coef == 0.0 {
        return 4;
    }
    if se.is_nan() || se <= 0.0 {
        return 12;
    }
    (2.0 + (coef.abs() / se).log10().ceil()).clamp(4.0, 12.0) as i32
}

fn columns(terms: &[Term], xs: &[Vec<f64>]) -> Vec<Vec<f64>> {
    terms
        .iter()
        .map(|t| xs.iter().map(|x| t.eval(x)).collect())
        .collect()
}

fn terms_of(spec: &KernelSpec, m: MeanModel) -> Vec<Term> {
    match m {
        MeanModel::Constant => vec![Term { vars: vec![] }],
        MeanModel::Linear => vec![Term { vars: vec![] }, spec.product.clone()],
        MeanModel::Polynomial => spec.full.clone(),
    }
}

fn fit_terms(
    spec: &KernelSpec,
    model: MeanModel,
    xs: &[Vec<f64>],
    y: &[f64],
    w: Option<&[f64]>,
) -> (Vec<Term>, LinearFit) {
    let terms = terms_of(spec, model);
    let names: Vec<String> = terms.iter().map(|t| t.name(&spec.variables)).collect();
    let fit = least_squares(&names, &columns(&terms, xs), y, w);
    (terms, fit)
}

fn mean_fit(
    spec: &KernelSpec,
    model: MeanModel,
    terms: Vec<Term>,
    fit: LinearFit,
    weighting: &'static str,
) -> MeanFit {
    let _ = spec;
    let written = fit
        .coef
        .iter()
        .zip(&fit.se)
        .zip(&fit.aliased)
        .map(|((c, s), a)| {
            if *a {
                0.0
            } else {
                crate::network::round_sig(*c, digits_for(*c, *s))
            }
        })
        .collect();
    MeanFit {
        model,
        terms,
        fit,
        weighting,
        written,
    }
}

/// σ model fitted on |residuals|: σ(x) = √(π/2)·E|r|, with E|r| a linear
/// combination of the terms fitted by iteratively reweighted least squares
/// (weights 1/σ̂², two rounds after an unweighted start: |r| has a spread
/// proportional to σ, so unweighted squares would only fit the large calls).
/// A negative intercept (the simulator rejects one) is refitted at 0.
fn sigma_fit(terms: &[Term], variables: &[String], xs: &[Vec<f64>], resid: &[f64]) -> Vec<(Term, f64)> {
    let abs: Vec<f64> = resid.iter().map(|r| r.abs() * SQRT_PI_OVER_2).collect();
    let solve = |terms: &[Term], w: Option<&[f64]>| -> Vec<(Term, f64)> {
        let names: Vec<String> = terms.iter().map(|t| t.name(variables)).collect();
        let f = least_squares(&names, &columns(terms, xs), &abs, w);
        terms
            .iter()
            .zip(&f.coef)
            .zip(&f.aliased)
            .filter(|(_, a)| !**a)
            .map(|((t, c), _)| (t.clone(), *c))
            .collect()
    };
    let eval = |m: &[(Term, f64)], x: &[f64]| m.iter().map(|(t, c)| c * t.eval(x)).sum::<f64>();
    let mut terms: Vec<Term> = terms.to_vec();
    let mut model = solve(&terms, None);
    for _ in 0..3 {
        if model.first().is_some_and(|(t, c)| t.vars.is_empty() && *c < 0.0) {
            terms.retain(|t| !t.vars.is_empty());
            if terms.is_empty() {
                break;
            }
        }
        let sig: Vec<f64> = xs.iter().map(|x| eval(&model, x)).collect();
        let fl = sigma_floor(&sig);
        let w: Vec<f64> = sig.iter().map(|v| 1.0 / v.max(fl).powi(2)).collect();
        model = solve(&terms, Some(&w));
    }
    if model.first().is_some_and(|(t, c)| t.vars.is_empty() && *c < 0.0) {
        terms.retain(|t| !t.vars.is_empty());
        model = solve(&terms, None);
    }
    model
        .into_iter()
        .map(|(t, c)| (t, crate::network::round_sig(c, 6)))
        .collect()
}

/// Lower bound of a fitted σ(x) used in weights: half the 1st percentile of
/// its positive values on the data. A linear σ model may dip to 0 or below
/// where it extrapolates; σ spans several decades for dgemm, so a fraction of
/// the median would flatten the small calls' weights, while no floor lets the
/// few calls where the σ model is least known dominate (a lower floor, 10⁻⁶ of
/// the largest σ, made the cross-validation scores erratic on the test design).
fn sigma_floor(sigmas: &[f64]) -> f64 {
    let pos: Vec<f64> = sigmas.iter().copied().filter(|v| *v > 0.0).collect();
    if pos.is_empty() {
        return f64::MIN_POSITIVE;
    }
    let max = pos.iter().copied().fold(0.0, f64::max);
    (0.5 * stats::quantile(&pos, 0.01))
        .max(1e-9 * max)
        .max(f64::MIN_POSITIVE)
}

/// The relative noise model ([`KernelNoise::Relative`]) of a fitted mean:
/// σ(x) = cv·ŷ(x), cv the robust relative spread of the calls around it
/// (1.4826·MAD of the relative residuals, at most [`MAX_RELATIVE_SIGMA`]).
fn relative_noise(mf: &MeanFit, xs: &[Vec<f64>], y: &[f64]) -> (f64, NoiseFit) {
    let preds: Vec<f64> = xs.iter().map(|x| mf.predict(x)).collect();
    let fl = sigma_floor(&preds.iter().map(|p| p.abs()).collect::<Vec<_>>());
    let rel: Vec<f64> = y.iter().zip(&preds).map(|(v, p)| (v - p) / p.max(fl)).collect();
    let med = stats::median(&rel);
    let dev: Vec<f64> = rel.iter().map(|r| (r - med).abs()).collect();
    let cv = (1.4826 * stats::median(&dev)).min(MAX_RELATIVE_SIGMA);
    let sigma = mf
        .terms
        .iter()
        .zip(&mf.written)
        .zip(&mf.fit.aliased)
        .filter(|((t, c), a)| !**a && **c != 0.0 && !(t.vars.is_empty() && **c < 0.0))
        .map(|((t, c), _)| (t.clone(), crate::network::round_sig(cv * c, 6)))
        .collect();
    (
        cv,
        NoiseFit {
            model: NoiseModel::Polynomial,
            sigma,
        },
    )
}

/// A σ(x) model evaluated at a call's variables.
type SigmaFn = Box<dyn Fn(&Vec<f64>) -> f64>;

fn nll(sigma: f64, r: f64) -> f64 {
    sigma.ln() + r * r / (2.0 * sigma * sigma)
}

/// Fits every kernel of the compute files. `host_index` maps a file's
/// `(host, core)` to the simulator's host index.
pub fn fit_compute(
    files: &[CalibrationFile],
    host_index: &dyn Fn(&str, u32) -> usize,
    opts: &ComputeOptions,
) -> Result<Vec<KernelFit>, InputError> {
    // dgemm and dtrsm with a fixed-K design (thesis §8.4: K = HPL's NB, a
    // legitimate bias; for dtrsm K is the triangle's order) are fitted
    // piecewise on K (M′): K below, at and above each fixed K apart. Pooled,
    // the polynomial would trade HPL's K = NB calls against tall-and-skinny
    // ones, and calls with a small K (HPL's panel) against the large products
    // of the uniform design (HPL's update dtrsm, always of order NB, ran 20–30 %
    // slower per flop than the pooled dtrsm model said).
    let mut fixed: Vec<u64> = files
        .iter()
        .filter_map(|f| f.meta("fixed_k").trim().parse::<u64>().ok())
        .filter(|k| *k > 0)
        .collect();
    fixed.sort_unstable();
    fixed.dedup();
    let segments: Vec<KRange> = if fixed.is_empty() {
        Vec::new()
    } else {
        let mut v = Vec::new();
        let mut from = 0;
        for &k in &fixed {
            if k > from {
                v.push((from, Some(k)));
            }
            v.push((k, Some(k + 1)));
            from = k + 1;
        }
        v.push((from, None));
        v
    };
    let segment_of = |kernel: &str, params: &[f64]| -> Option<KRange> {
        let k = match kernel {
            "dgemm" => params.get(2).copied().unwrap_or(0.0),
            // dtrsm's K: the triangle's order (M on the left, N on the right).
            "dtrsm" if params.len() >= 3 => params[if params[2] == 0.0 { 0 } else { 1 }],
            _ => return None,
        };
        segments
            .iter()
            .copied()
            .find(|(a, b)| k >= *a as f64 && b.is_none_or(|b| k < b as f64))
    };
    type Group<'a> = Vec<(&'a KernelCall, usize)>;
    type Key = (String, Option<KRange>);
    let mut by_kernel: BTreeMap<Key, Group> = BTreeMap::new();
    let mut zero: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    let mut specs: BTreeMap<String, KernelSpec> = BTreeMap::new();
    for f in files {
        if let Table::Compute(rows) = &f.table {
            for r in rows {
                // A call with a zero dimension returns at once (BLAS's quick
                // return): it says nothing about the kernel's cost model.
                let spec = specs.entry(r.kernel.clone()).or_insert_with(|| {
                    let names =
                        crate::input::kernel_params(&r.kernel, r.params.len()).expect("checked when read");
                    KernelSpec::new(&r.kernel, &names)
                });
                if spec.product.eval(&spec.variables_of(&r.params)) == 0.0 {
                    zero.entry(r.kernel.clone()).or_default().push(r.duration);
                    continue;
                }
                let h = host_index(f.meta("host"), r.core);
                let seg = segment_of(&r.kernel, &r.params);
                by_kernel.entry((r.kernel.clone(), seg)).or_default().push((r, h));
            }
        }
    }
    let traced = |c: &KernelCall| files[c.at.file].meta("mode").trim() == "trace";
    let mut out = Vec::new();
    for ((name, seg), mut calls) in by_kernel {
        let first = calls[0].0;
        let names = crate::input::kernel_params(&name, first.params.len()).expect("checked when read");
        let spec = KernelSpec::new(&name, &names);
        let need = (2 * spec.full.len()).max(10).max(opts.folds);
        let trace_first = match opts.from_trace {
            FromTrace::None => false,
            FromTrace::Functions => spec.function,
            FromTrace::Small => name != "dgemm" && name != "dtrsm",
        };
        let mut set_aside = 0;
        if trace_first {
            let n_traced = calls.iter().filter(|(c, _)| traced(c)).count();
            if n_traced >= need && n_traced < calls.len() {
                set_aside = calls.len() - n_traced;
                calls.retain(|(c, _)| traced(c));
            }
        }
        let first = calls[0].0;
        if calls.len() < need {
            if seg.is_some() {
                // A sparse K range (a few uniform-product calls above NB, say)
                // is left to the neighbouring range.
                continue;
            }
            return Err(InputError::NoData {
                file: files[first.at.file].name(),
                line: first.at.line,
                column: first.at.column,
                what: format!("kernel `{name}`"),
                message: format!(
                    "{} calls, a fit with cross-validation needs at least {need}",
                    calls.len()
                ),
            });
        }
        let mut k = if set_aside > 0 {
            fit_kernel(
                spec,
                &calls,
                &ComputeOptions {
                    ordinary: true,
                    ..*opts
                },
            )
        } else {
            fit_kernel(spec, &calls, opts)
        };
        k.k_range = seg;
        if let Some(d) = zero.get(&name) {
            k.zero_size = d.len();
            k.zero_size_median = Some(stats::median(d));
        }
        k.design_set_aside = set_aside;
        out.push(k);
    }
    Ok(out)
}

/// Calls slowed down by something outside the kernel: on a shared machine a
/// call preempted by another process lasts a scheduler slice (milliseconds)
/// longer, whatever its size. Such delays are a property of the machine's
/// load, not of the kernel, and least squares would spread them over every
/// call (a 45 ms σ on a 1 ms kernel, an intercept of 0.9 ms). Screening: a
/// robust pilot of the full polynomial (relative weights 1/ŷ², Huber weights
/// on the relative residual, IRLS), then a call is a gross outlier when its
/// relative residual exceeds both `GROSS_REL` and `GROSS_MADS` robust standard
/// deviations (1.4826·MAD). Only slow calls are screened; the count is reported.
const GROSS_REL: f64 = 0.5;
/// See [`GROSS_REL`].
const GROSS_MADS: f64 = 8.0;

/// The robust pilot of a kernel's calls: the indices of its gross outliers
/// (see [`GROSS_REL`]) and its prediction at every call.
pub fn robust_pilot(spec: &KernelSpec, xs: &[Vec<f64>], y: &[f64]) -> (Vec<usize>, Vec<f64>) {
    let n = y.len();
    let terms = spec.full.clone();
    let names: Vec<String> = terms.iter().map(|t| t.name(&spec.variables)).collect();
    let cols = columns(&terms, xs);
    let row = |i: usize| -> Vec<f64> { cols.iter().map(|c| c[i]).collect() };
    let ymax = y.iter().copied().fold(0.0, f64::max).max(f64::MIN_POSITIVE);
    let floor = 1e-9 * ymax;
    let mut w: Vec<f64> = y.iter().map(|v| 1.0 / v.max(floor).powi(2)).collect();
    let mut rel = vec![0.0; n];
    let mut scale = f64::INFINITY;
    let mut pred = vec![0.0; n];
    for _ in 0..8 {
        let f = least_squares(&names, &cols, y, Some(&w));
        pred = (0..n).map(|i| f.predict(&row(i)).max(floor)).collect();
        for i in 0..n {
            rel[i] = (y[i] - pred[i]) / pred[i];
        }
        let med = stats::median(&rel);
        let dev: Vec<f64> = rel.iter().map(|r| (r - med).abs()).collect();
        scale = (1.4826 * stats::median(&dev)).max(1e-6);
        let c = 1.345 * scale;
        for i in 0..n {
            let a = (rel[i] - med).abs();
            let huber = if a <= c { 1.0 } else { c / a };
            w[i] = huber / pred[i].powi(2);
        }
    }
    let out = (0..n)
        .filter(|&i| rel[i] > GROSS_REL && rel[i] > GROSS_MADS * scale)
        .collect();
    (out, pred)
}

fn fit_kernel(spec: KernelSpec, calls: &[(&KernelCall, usize)], opts: &ComputeOptions) -> KernelFit {
    let xs_all: Vec<Vec<f64>> = calls.iter().map(|(c, _)| spec.variables_of(&c.params)).collect();
    let y_all: Vec<f64> = calls.iter().map(|(c, _)| c.duration).collect();
    let (mut screened, robust) = robust_pilot(&spec, &xs_all, &y_all);
    // A program's calls of one function are kept whole: their cost per unit
    // changes with the cache regime (HPL_dlatcpy: its 1 % largest calls carry
    // half its time), and the screen's one line would call the largest ones
    // outliers.
    if !opts.screen_outliers || opts.ordinary {
        screened.clear();
    }
    let robust: Vec<f64> = robust
        .iter()
        .enumerate()
        .filter(|(i, _)| screened.binary_search(i).is_err())
        .map(|(_, v)| *v)
        .collect();
    let calls: Vec<(&KernelCall, usize)> = calls
        .iter()
        .enumerate()
        .filter(|(i, _)| screened.binary_search(i).is_err())
        .map(|(_, c)| *c)
        .collect();
    let calls = &calls[..];
    let xs: Vec<Vec<f64>> = calls.iter().map(|(c, _)| spec.variables_of(&c.params)).collect();
    let y: Vec<f64> = calls.iter().map(|(c, _)| c.duration).collect();
    let hosts_of: Vec<usize> = calls.iter().map(|(_, h)| *h).collect();
    let n = y.len();
    let y_rms = (y.iter().map(|v| v * v).sum::<f64>() / n as f64).sqrt();

    // Folds: a seeded permutation, dealt round-robin.
    let mut order: Vec<usize> = (0..n).collect();
    crate::synth::shuffle(&mut order, &mut models::NoiseRng::new(opts.seed, 0x666f6c64));
    let mut fold = vec![0; n];
    for (i, &j) in order.iter().enumerate() {
        fold[j] = i % opts.folds;
    }
    let split = |k: usize| -> (Vec<usize>, Vec<usize>) { (0..n).partition(|i| fold[*i] != k) };
    let pick = |idx: &[usize]| -> (Vec<Vec<f64>>, Vec<f64>) {
        (
            idx.iter().map(|i| xs[*i].clone()).collect(),
            idx.iter().map(|i| y[*i]).collect(),
        )
    };

    let candidates: Vec<MeanModel> = {
        let mut v = vec![MeanModel::Constant, MeanModel::Linear];
        if terms_of(&spec, MeanModel::Polynomial) != terms_of(&spec, MeanModel::Linear) {
            v.push(MeanModel::Polynomial);
        }
        v
    };
    // Noise-free data: the simplest model that fits exactly.
    let exact = candidates.iter().copied().find(|m| {
        let (_, f) = fit_terms(&spec, *m, &xs, &y, None);
        (f.rss / n as f64).sqrt() <= opts.noise_free * y_rms
    });
    let noise_free = exact.is_some();
    // Pilot variance function: σ̂₀(x) from the |residuals| of the full
    // polynomial (the most flexible model, so its residuals are mostly noise).
    // Weights 1/σ̂₀² make the cross-validation score and the fits efficient
    // under heteroscedastic noise (small calls are not drowned by large ones).
    let pilot: Vec<f64> = if noise_free || opts.ordinary {
        vec![1.0; n]
    } else if opts.relative_pilot {
        // Timings spread over decades with errors roughly proportional to the
        // duration: weights 1/ŷ² from the robust pilot (relative least squares).
        let fl = sigma_floor(&robust);
        robust.iter().map(|v| 1.0 / v.max(fl).powi(2)).collect()
    } else {
        let (ft, ff) = fit_terms(&spec, MeanModel::Polynomial, &xs, &y, None);
        let r: Vec<f64> = xs
            .iter()
            .zip(&y)
            .map(|(x, v)| v - ff.predict(&ft.iter().map(|t| t.eval(x)).collect::<Vec<_>>()))
            .collect();
        let sf = sigma_fit(&ft, &spec.variables, &xs, &r);
        let sig: Vec<f64> = xs
            .iter()
            .map(|x| sf.iter().map(|(t, c)| c * t.eval(x)).sum::<f64>())
            .collect();
        let fl = sigma_floor(&sig);
        sig.iter().map(|v| 1.0 / v.max(fl).powi(2)).collect()
    };
    let pick_w = |idx: &[usize]| -> Vec<f64> { idx.iter().map(|i| pilot[*i]).collect() };
    let mut mean_scores = Vec::new();
    for &m in &candidates {
        let mut scores = Vec::new();
        let mut rel = Vec::new();
        let (mut abs_err, mut total) = (0.0, 0.0);
        for k in 0..opts.folds {
            let (tr, te) = split(k);
            let (xtr, ytr) = pick(&tr);
            let (terms, f) = fit_terms(&spec, m, &xtr, &ytr, Some(&pick_w(&tr)));
            let mut sc = 0.0;
            for &i in &te {
                let row: Vec<f64> = terms.iter().map(|t| t.eval(&xs[i])).collect();
                let p = f.predict(&row);
                sc += pilot[i] * (p - y[i]) * (p - y[i]);
                if opts.ordinary {
                    abs_err += (p - y[i]).abs();
                    total += y[i];
                } else if y[i] > 0.0 {
                    rel.push((p - y[i]).abs() / y[i]);
                }
            }
            scores.push(sc / te.len().max(1) as f64);
        }
        mean_scores.push(CvScore {
            name: m.label().into(),
            score: stats::mean(&scores),
            se: stats::std_dev(&scores) / (opts.folds as f64).sqrt(),
            rel_error: if opts.ordinary {
                abs_err / total
            } else {
                stats::mean(&rel)
            },
        });
    }
    // One-standard-error rule: the simplest model within one SE of the best.
    let chosen = exact.unwrap_or_else(|| {
        let best = mean_scores
            .iter()
            .min_by(|a, b| a.score.total_cmp(&b.score))
            .expect("two candidates at least");
        let limit = best.score + best.se;
        candidates
            .iter()
            .zip(&mean_scores)
            .find(|(_, s)| s.score <= limit)
            .map_or(MeanModel::Polynomial, |(m, _)| *m)
    });
    let (terms, wfit) = fit_terms(&spec, chosen, &xs, &y, Some(&pilot));
    let resid: Vec<f64> = xs
        .iter()
        .zip(&y)
        .map(|(x, v)| v - wfit.predict(&terms.iter().map(|t| t.eval(x)).collect::<Vec<_>>()))
        .collect();

    // Noise: N-0 for noise-free data, otherwise N-1 against N-2 by CV.
    let sigma_terms: Vec<Term> = terms.clone();
    let mut noise_scores = Vec::new();
    // Each branch also returns the weights its mean was fitted with: a core's
    // own model is fitted the same way (below).
    let (mean, noise, mean_weights) = if noise_free {
        // Only rounding noise, whose scale is proportional to the duration:
        // relative least squares gives the exact coefficients to the last digits.
        let w: Vec<f64> = y.iter().map(|v| 1.0 / v.max(f64::MIN_POSITIVE).powi(2)).collect();
        let (t, f) = fit_terms(&spec, chosen, &xs, &y, Some(&w));
        (
            mean_fit(&spec, chosen, t, f, "relative least squares (noise-free data)"),
            NoiseFit {
                model: NoiseModel::None,
                sigma: Vec::new(),
            },
            Some(w),
        )
    } else if opts.noise != KernelNoise::Fitted {
        // Relative noise: the mean by relative least squares (the robust
        // pilot's weights), σ(x) = cv·ŷ(x) with cv the robust relative spread.
        let (t, f) = fit_terms(&spec, chosen, &xs, &y, Some(&pilot));
        let mf = mean_fit(
            &spec,
            chosen,
            t,
            f,
            if opts.ordinary {
                "ordinary least squares: the program's own calls, whose total time counts"
            } else {
                "relative least squares, weights 1/ŷ² of the robust pilot"
            },
        );
        let noise = if opts.noise == KernelNoise::None {
            NoiseFit {
                model: NoiseModel::None,
                sigma: Vec::new(),
            }
        } else {
            let (cv, noise) = relative_noise(&mf, &xs, &y);
            noise_scores.push(CvScore {
                name: format!("relative: σ(x) = {cv:.4}·ŷ(x)"),
                score: f64::NAN,
                se: f64::NAN,
                rel_error: f64::NAN,
            });
            noise
        };
        (mf, noise, Some(pilot.clone()))
    } else {
        let global_sigma = stats::std_dev(&resid).max(f64::MIN_POSITIVE);
        let floor = 1e-3 * global_sigma;
        let mut per_model: Vec<(NoiseModel, Vec<f64>)> = vec![(NoiseModel::Constant, Vec::new())];
        if sigma_terms.len() > 1 {
            per_model.push((NoiseModel::Polynomial, Vec::new()));
        }
        for k in 0..opts.folds {
            let (tr, te) = split(k);
            let (xtr, ytr) = pick(&tr);
            let (t, f) = fit_terms(&spec, chosen, &xtr, &ytr, Some(&pick_w(&tr)));
            let row = |x: &Vec<f64>| t.iter().map(|tt| tt.eval(x)).collect::<Vec<_>>();
            let rtr: Vec<f64> = xtr
                .iter()
                .zip(&ytr)
                .map(|(x, v)| v - f.predict(&row(x)))
                .collect();
            let (xte, yte) = pick(&te);
            let rte: Vec<f64> = xte
                .iter()
                .zip(&yte)
                .map(|(x, v)| v - f.predict(&row(x)))
                .collect();
            for (model, scores) in per_model.iter_mut() {
                let sig: SigmaFn = match model {
                    NoiseModel::Constant => {
                        let s = stats::std_dev(&rtr).max(floor);
                        Box::new(move |_| s)
                    }
                    _ => {
                        let sf = sigma_fit(&sigma_terms, &spec.variables, &xtr, &rtr);
                        Box::new(move |x| sf.iter().map(|(t, c)| c * t.eval(x)).sum::<f64>().max(floor))
                    }
                };
                let v: f64 =
                    xte.iter().zip(&rte).map(|(x, r)| nll(sig(x), *r)).sum::<f64>() / rte.len().max(1) as f64;
                scores.push(v);
            }
        }
        for (model, scores) in &per_model {
            noise_scores.push(CvScore {
                name: model.label().into(),
                score: stats::mean(scores),
                se: stats::std_dev(scores) / (opts.folds as f64).sqrt(),
                rel_error: f64::NAN,
            });
        }
        let n1 = &noise_scores[0];
        let use_n2 = noise_scores.get(1).is_some_and(|n2| n2.score + n2.se < n1.score);
        if use_n2 {
            // Feasible generalised least squares, one more round: σ from the
            // weighted fit's residuals, the mean refitted with 1/σ̂², σ again.
            let sf = sigma_fit(&sigma_terms, &spec.variables, &xs, &resid);
            let sigmas: Vec<f64> = xs
                .iter()
                .map(|x| sf.iter().map(|(t, c)| c * t.eval(x)).sum::<f64>())
                .collect();
            let sfloor = sigma_floor(&sigmas).max(floor);
            let w: Vec<f64> = sigmas.iter().map(|s| 1.0 / s.max(sfloor).powi(2)).collect();
            let (t, f) = fit_terms(&spec, chosen, &xs, &y, Some(&w));
            let r2: Vec<f64> = xs
                .iter()
                .zip(&y)
                .map(|(x, v)| v - f.predict(&t.iter().map(|tt| tt.eval(x)).collect::<Vec<_>>()))
                .collect();
            let sf2 = sigma_fit(&sigma_terms, &spec.variables, &xs, &r2);
            (
                mean_fit(
                    &spec,
                    chosen,
                    t,
                    f,
                    "weighted least squares, weights 1/σ̂(x)² (N-2)",
                ),
                NoiseFit {
                    model: NoiseModel::Polynomial,
                    sigma: sf2,
                },
                Some(w),
            )
        } else {
            // Homoscedastic: ordinary least squares is the efficient fit; with
            // relative pilot weights the fit stays relative (a constant σ
            // fitted in absolute terms would be set by the largest calls).
            let w = opts.relative_pilot.then_some(&pilot[..]);
            let (t, f) = fit_terms(&spec, chosen, &xs, &y, w);
            let r: Vec<f64> = xs
                .iter()
                .zip(&y)
                .map(|(x, v)| v - f.predict(&t.iter().map(|tt| tt.eval(x)).collect::<Vec<_>>()))
                .collect();
            let s = crate::network::round_sig(stats::std_dev(&r), 6);
            (
                mean_fit(
                    &spec,
                    chosen,
                    t,
                    f,
                    if opts.relative_pilot {
                        "relative least squares, weights 1/ŷ² of the robust pilot"
                    } else {
                        "ordinary least squares"
                    },
                ),
                NoiseFit {
                    model: NoiseModel::Constant,
                    sigma: vec![(Term { vars: vec![] }, s)],
                },
                w.map(<[f64]>::to_vec),
            )
        }
    };
    let (full_terms, full_fit) = fit_terms(&spec, MeanModel::Polynomial, &xs, &y, None);
    let full = mean_fit(
        &spec,
        MeanModel::Polynomial,
        full_terms,
        full_fit,
        "ordinary least squares",
    );

    // Per-core models: F-test of separate coefficients against pooled ones, with
    // the final fit's weighting, plus a practical effect on the total time.
    let mut hosts: Vec<usize> = hosts_of.clone();
    hosts.sort_unstable();
    hosts.dedup();
    let p = mean.terms.len();
    // The pooled mean's own weights: a core's model fitted otherwise (with
    // 1/σ̂² of a relative noise under an ordinary fit, say) is a different
    // estimator, and where the linear form misses (cache regimes) a far
    // different total time (HPL_dlatcpy, 2026-11-27: 5 times too fast).
    let weights = mean_weights;
    let enough = |h: usize| hosts_of.iter().filter(|x| **x == h).count() >= (3 * p).max(10);
    let hosts_test = (hosts.len() >= 2 && hosts.iter().all(|h| enough(*h)) && !noise_free).then(|| {
        let pooled = fit_terms(&spec, chosen, &xs, &y, weights.as_deref()).1;
        let mut rss_sep = 0.0;
        let mut fits = Vec::new();
        let total_pooled: f64 = xs.iter().map(|x| mean.predict(x)).sum();
        let mut effect: f64 = 0.0;
        for &h in &hosts {
            let idx: Vec<usize> = (0..n).filter(|i| hosts_of[*i] == h).collect();
            let (hx, hy) = pick(&idx);
            let hw: Option<Vec<f64>> = weights.as_ref().map(|w| idx.iter().map(|i| w[*i]).collect());
            let (t, f) = fit_terms(&spec, chosen, &hx, &hy, hw.as_deref());
            rss_sep += f.rss;
            let hres: Vec<f64> = hx
                .iter()
                .zip(&hy)
                .map(|(x, v)| v - f.predict(&t.iter().map(|tt| tt.eval(x)).collect::<Vec<_>>()))
                .collect();
            let mf = mean_fit(&spec, chosen, t, f, mean.weighting);
            // A core's noise is of the pooled model's kind: a relative σ fitted
            // as a polynomial on one core's residuals was 25 times its mean
            // (dgemv, 2026-11-27), which the simulator's clamping of negative
            // draws turns into a mean 10 times too large.
            let hnoise = match noise.model {
                NoiseModel::None => NoiseFit {
                    model: NoiseModel::None,
                    sigma: Vec::new(),
                },
                NoiseModel::Polynomial if opts.noise == KernelNoise::Relative => {
                    relative_noise(&mf, &hx, &hy).1
                }
                NoiseModel::Polynomial => NoiseFit {
                    model: NoiseModel::Polynomial,
                    sigma: sigma_fit(&sigma_terms, &spec.variables, &hx, &hres),
                },
                NoiseModel::Constant => NoiseFit {
                    model: NoiseModel::Constant,
                    sigma: vec![(
                        Term { vars: vec![] },
                        crate::network::round_sig(stats::std_dev(&hres), 6),
                    )],
                },
            };
            let total_h: f64 = xs.iter().map(|x| mf.predict(x)).sum();
            effect = effect.max((total_h - total_pooled).abs() / total_pooled.abs().max(f64::MIN_POSITIVE));
            fits.push((h, mf, hnoise));
        }
        let k = hosts.len();
        let df1 = (p * (k - 1)) as f64;
        let df2 = n.saturating_sub(p * k).max(1) as f64;
        let f = ((pooled.rss - rss_sep).max(0.0) / df1) / (rss_sep / df2).max(f64::MIN_POSITIVE);
        let p_value = 1.0 - stats::f_cdf(f, df1, df2);
        HostTest {
            f,
            p_value,
            effect,
            per_host: p_value < opts.host_alpha && effect > opts.host_effect,
            fits,
        }
    });

    let mut range = BTreeMap::new();
    for (j, v) in spec.variables.iter().enumerate() {
        if spec.name == "dtrsm" && v == "K" {
            continue;
        }
        let vals: Vec<f64> = xs.iter().map(|x| x[j]).collect();
        range.insert(
            v.clone(),
            (
                vals.iter().copied().fold(f64::INFINITY, f64::min),
                vals.iter().copied().fold(0.0, f64::max),
            ),
        );
    }
    let prod: Vec<f64> = xs.iter().map(|x| spec.product.eval(x)).collect();
    let pname = spec.product.name(&spec.variables);
    range.insert(
        pname,
        (
            prod.iter().copied().fold(f64::INFINITY, f64::min),
            prod.iter().copied().fold(0.0, f64::max),
        ),
    );
    let performance = prod.iter().sum::<f64>() / y.iter().sum::<f64>();
    KernelFit {
        data: xs
            .iter()
            .cloned()
            .zip(y.iter().copied())
            .zip(hosts_of.iter().copied())
            .map(|((x, d), h)| (x, d, h))
            .collect(),
        spec,
        calls: n,
        hosts,
        mean_scores,
        mean,
        full,
        noise_scores,
        noise,
        noise_free,
        hosts_test,
        range,
        performance,
        mean_duration: stats::mean(&y),
        k_range: None,
        zero_size: 0,
        zero_size_median: None,
        design_set_aside: 0,
        ordinary: opts.ordinary,
        outliers: screened.len(),
    }
}

#[cfg(test)]
mod tests;
