//! Compute kernels by model: BLAS calls and named application functions whose
//! duration comes from the `models` crate instead of running them.
//!
//! Per kernel the mode is *model* (do no work, inject the model's time on the
//! calling rank's host) or *compute* (run the real BLAS found on the system; its
//! time is measured like any code between MPI calls). By default
//! (`smpi/blas-mode:auto`) a kernel is modelled when the model set (`-model`)
//! defines it; `smpi/blas-mode:compute` runs every BLAS kernel for real.
//!
//! In model mode `idamax` returns a pseudo-random index in range drawn from the
//! rank's own stream (unbiased, reproducible pivoting), and `dcopy`/`dswap`
//! still move their data: HPL's pivot search carries the pivot row through
//! `dcopy`, and ranks would disagree on pivots without it.
//!
//! Every modelled call is checked against the ranges the model was calibrated
//! on, when the model file gives them (`[about.calibrated]`); the run ends with
//! a warning naming the kernels that were used outside them.
//!
//! Named functions (`kind = "function"` in a model file, e.g. `HPL_dlaswp00N`)
//! are interposed in each rank's copy of the program by rewriting its GOT
//! entries (see [`crate::host::interpose`]); their model parameters are the
//! function's first integer arguments, read as C `int`, in declaration order.

use models::compute::KernelId;
use models::NoiseRng;

/// The BLAS kernels the simulator can model.
pub(crate) const BLAS: [&str; 10] = [
    "dgemm", "dtrsm", "dgemv", "dger", "dtrsv", "daxpy", "dscal", "dswap", "dcopy", "idamax",
];

/// Per-run kernel state: which kernels are modelled, and one noise stream per
/// (rank, kernel).
pub(crate) struct Kernels {
    pub models: models::ComputeModels,
    pub seed: u64,
    /// `modelled[k]` for each kernel id of `models`.
    modelled: Vec<bool>,
    /// BLAS kernel index (in [`BLAS`]) → model kernel id, when modelled.
    blas: [Option<KernelId>; 10],
    /// By kernel: whether its model draws noise.
    noisy: Vec<bool>,
    /// rngs[rank][kernel id], created on first use (noisy kernels only).
    rngs: Vec<Vec<Option<NoiseRng>>>,
    /// Stream for idamax's random index, per rank.
    pivots: Vec<Option<NoiseRng>>,
    /// Per kernel id: calls and total injected seconds (all ranks).
    pub stats: Vec<(u64, f64)>,
    /// Calls outside the model's calibrated ranges (`[about.calibrated]`).
    extrapolations: models::Extrapolations,
    /// Whether the run already said that real BLAS work goes unsimulated.
    pub(crate) said_unsimulated: bool,
}

impl Kernels {
    /// `mode`: "auto", "model" or "compute"; `computed`: kernels forced to compute.
    pub(crate) fn new(
        models: models::ComputeModels,
        seed: u64,
        ranks: usize,
        mode: &str,
        computed: &[String],
    ) -> Self {
        let mut blas = [None; 10];
        let mut modelled = vec![true; models.len()];
        for (i, name) in BLAS.iter().enumerate() {
            if let Some(k) = models.kernel_id(name) {
                let on = mode != "compute" && !computed.iter().any(|c| c == name);
                modelled[k.index()] = on;
                if on {
                    blas[i] = Some(k);
                }
            }
        }
        let n = models.len();
        let extrapolations = models.extrapolations();
        let mut noisy = vec![false; n];
        for k in models.names().filter_map(|name| models.kernel_id(name)) {
            noisy[k.index()] = models.is_noisy(k);
        }
        Kernels {
            models,
            seed,
            modelled,
            blas,
            noisy,
            rngs: (0..ranks).map(|_| vec![None; n]).collect(),
            pivots: vec![None; ranks],
            stats: vec![(0, 0.0); n],
            extrapolations,
            said_unsimulated: false,
        }
    }

    /// The model of BLAS kernel `i` (index in [`BLAS`]), if modelled.
    pub(crate) fn blas_model(&self, i: usize) -> Option<KernelId> {
        self.blas[i]
    }

    /// The BLAS kernel that `symbol` (`cblas_dgemm` or `dgemm_`) calls, if this
    /// run models it.
    pub(crate) fn modelled_blas_symbol(&self, symbol: &str) -> Option<&'static str> {
        let name = symbol
            .strip_prefix("cblas_")
            .or_else(|| symbol.strip_suffix('_'))?;
        let i = BLAS.iter().position(|b| *b == name)?;
        self.blas[i].map(|_| BLAS[i])
    }

    /// The name of kernel `k` (as the model file writes it).
    pub(crate) fn name(&self, k: KernelId) -> &str {
        self.models.name(k)
    }

    /// Names of the modelled non-BLAS functions.
    pub(crate) fn functions(&self) -> Vec<(String, KernelId)> {
        self.models
            .names()
            .filter(|n| !BLAS.contains(n))
            .filter_map(|n| self.models.kernel_id(n).map(|k| (n.to_string(), k)))
            .filter(|(_, k)| self.modelled[k.index()])
            .collect()
    }

    /// Model duration of one call of `k` on `rank` (running on host `host`).
    pub(crate) fn duration(&mut self, rank: u32, host: usize, k: KernelId, params: &[f64]) -> f64 {
        // A kernel without noise needs no random stream (each rank's is cold
        // memory at thousands of ranks).
        let d = if self.noisy[k.index()] {
            let (seed, models) = (self.seed, &self.models);
            let rng = self.rngs[rank as usize][k.index()]
                .get_or_insert_with(|| NoiseRng::for_stream(seed, u64::from(rank), models.name(k)));
            self.models.duration(k, host, params, rng)
        } else {
            self.models.duration_without_noise(k, host, params)
        }
        .max(0.0);
        self.models
            .check_calibrated(k, params, d, &mut self.extrapolations);
        let st = &mut self.stats[k.index()];
        st.0 += 1;
        st.1 += d;
        d
    }

    /// (name, calls, total seconds) of every kernel called at least once.
    pub(crate) fn summary(&self) -> Vec<(String, u64, f64)> {
        self.models
            .names()
            .filter_map(|n| self.models.kernel_id(n).map(|k| (n, k)))
            .filter(|(_, k)| self.stats[k.index()].0 > 0)
            .map(|(n, k)| (n.to_string(), self.stats[k.index()].0, self.stats[k.index()].1))
            .collect()
    }

    /// The kernels called outside their calibrated ranges, each with its number
    /// of calls and their modelled seconds; `None` when the model set has no
    /// calibrated ranges (nothing was checked).
    pub(crate) fn extrapolated(&self) -> Option<Vec<(models::KernelExtrapolation, u64, f64)>> {
        self.models.is_calibrated().then(|| {
            self.extrapolations
                .report(&self.models)
                .into_iter()
                .map(|e| {
                    let (calls, seconds) = self
                        .models
                        .kernel_id(&e.kernel)
                        .map_or((0, 0.0), |k| self.stats[k.index()]);
                    (e, calls, seconds)
                })
                .collect()
        })
    }

    /// A pseudo-random index in `0..n` from the rank's pivot stream.
    pub(crate) fn random_index(&mut self, rank: u32, n: usize) -> usize {
        let seed = self.seed;
        let rng = self.pivots[rank as usize]
            .get_or_insert_with(|| NoiseRng::for_stream(seed, u64::from(rank), "idamax:pivot"));
        if n == 0 {
            0
        } else {
            (rng.next_u64() % n as u64) as usize
        }
    }
}

/// The real BLAS library, loaded on first use for compute mode.
pub(crate) struct RealBlas {
    lib: Option<libloading::Library>,
}

impl RealBlas {
    fn load() -> Self {
        for name in ["libcblas.so.3", "libopenblas.so.0", "libblas.so.3", "libblas.so"] {
            // Safety: loading a system BLAS library.
            if let Ok(lib) =
                unsafe { libloading::os::unix::Library::open(Some(name), libc::RTLD_NOW | libc::RTLD_LOCAL) }
            {
                return RealBlas {
                    lib: Some(lib.into()),
                };
            }
        }
        RealBlas { lib: None }
    }

    /// The real function `symbol`, or an error message.
    pub(crate) fn get<T: Copy>(&self, symbol: &str) -> Result<T, String> {
        let lib = self.lib.as_ref().ok_or_else(|| {
            format!("{symbol}: no BLAS library found to compute it (install libblas3/libopenblas0, or model the kernel with -model)")
        })?;
        let mut name = symbol.as_bytes().to_vec();
        name.push(0);
        // Safety: the caller names a symbol with the signature T.
        unsafe {
            lib.get::<T>(&name)
                .map(|s| *s)
                .map_err(|e| format!("{symbol}: {e}"))
        }
    }
}

thread_local! {
    static REAL: RealBlas = RealBlas::load();
}

/// Looks up a real BLAS function.
pub(crate) fn real<T: Copy>(symbol: &str) -> Result<T, String> {
    REAL.with(|r| r.get(symbol))
}

/// The 0-based index of the first element of largest absolute value (the
/// reference BLAS idamax, minus one): NaNs are never chosen, unless the first
/// element is one; 0 for `n < 1` or `incx < 1`. Vectorized for `incx == 1`.
///
/// # Safety
/// `x` must be valid for `n` elements with stride `incx`.
pub(crate) unsafe fn idamax(n: i32, x: *const f64, incx: i32) -> usize {
    // Safety: the caller upholds this function's contract (see its `# Safety`).
    unsafe {
        if n < 1 || incx < 1 {
            return 0;
        }
        let (n, inc) = (n as usize, incx as usize);
        let view = crate::host::folding::fold_view(x.cast());
        let place = |i: usize| {
            let p = x.add(i * inc);
            view.map_or(p, |v| v.at(p as usize) as *const f64)
        };
        let at = |i: usize| (*place(i)).abs();
        if at(0).is_nan() {
            return 0;
        }
        if inc != 1 {
            let (mut best, mut index) = (at(0), 0);
            for i in 1..n {
                if at(i) > best {
                    best = at(i);
                    index = i;
                }
            }
            return index;
        }
        // Contiguous: the pieces where the elements are best read (one, unless
        // they are folded memory crossing a folded block), walked twice without
        // being collected (no allocation per call).
        match view {
            None => first_largest_abs(|| std::iter::once(std::slice::from_raw_parts(x, n)), at(0)),
            Some(v) => first_largest_abs(
                || {
                    v.pieces(x as usize, n * 8)
                        .map(|(p, len)| std::slice::from_raw_parts(p as *const f64, len / 8))
                },
                at(0),
            ),
        }
    }
}

/// The index of the first element of largest |e| over the consecutive
/// `pieces` (NaNs skipped: a comparison with NaN is false), starting from
/// `start`; 0 when none reaches it. Two passes: the largest, eight lanes at a
/// time, then the first element equal to it.
fn first_largest_abs<'a, I: Iterator<Item = &'a [f64]>>(pieces: impl Fn() -> I, start: f64) -> usize {
    let mut best = start;
    for v in pieces() {
        best = largest_abs(v, best);
    }
    let mut index = 0;
    for v in pieces() {
        match v.iter().position(|e| e.abs() == best) {
            Some(i) => return index + i,
            None => index += v.len(),
        }
    }
    0
}

/// The largest of `start` and the |e| of `v`, NaNs skipped (vectorized).
fn largest_abs(v: &[f64], start: f64) -> f64 {
    let mut best = start;
    let mut lanes = [best; 8];
    let mut chunks = v.chunks_exact(8);
    for c in &mut chunks {
        for (m, &e) in lanes.iter_mut().zip(c) {
            let a = e.abs();
            *m = if a > *m { a } else { *m };
        }
    }
    for &e in chunks.remainder() {
        let a = e.abs();
        best = if a > best { a } else { best };
    }
    for m in lanes {
        best = if m > best { m } else { best };
    }
    best
}

/// Calls `f` on the `n` pairs of elements of two strided vectors, in BLAS
/// order (a negative increment starts from the far end). Folded elements are
/// reached through the canonical view (same memory).
///
/// # Safety
/// `x` and `y` must be valid for the strided ranges.
unsafe fn strided_pairs(
    n: i32,
    x: *mut f64,
    incx: i32,
    y: *mut f64,
    incy: i32,
    mut f: impl FnMut(*mut f64, *mut f64),
) {
    // Safety: the caller upholds this function's contract (see its `# Safety`).
    unsafe {
        if n <= 0 {
            return;
        }
        let (vx, vy) = (
            crate::host::folding::fold_view(x.cast()),
            crate::host::folding::fold_view(y.cast()),
        );
        let (mut ix, mut iy) = (start(n, incx), start(n, incy));
        for _ in 0..n {
            let (px, py) = (x.offset(ix), y.offset(iy));
            let px = vx.map_or(px, |v| v.at(px as usize) as *mut f64);
            let py = vy.map_or(py, |v| v.at(py as usize) as *mut f64);
            f(px, py);
            ix += incx as isize;
            iy += incy as isize;
        }
    }
}

/// Strided copy of `n` doubles (BLAS dcopy semantics, negative increments included).
/// An element that already holds the value (bit for bit) is not written: a
/// write into a never-written copy-on-write folded page would make the page
/// private for nothing (in model mode HPL copies many zeros onto zeros).
///
/// # Safety
/// `x` and `y` must be valid for the strided ranges.
pub(crate) unsafe fn dcopy(n: i32, x: *const f64, incx: i32, y: *mut f64, incy: i32) {
    // Safety: the caller's contract; `x` is only read.
    unsafe {
        strided_pairs(n, x.cast_mut(), incx, y, incy, |px, py| {
            let v = *px;
            if (*py).to_bits() != v.to_bits() {
                *py = v;
            }
        })
    }
}

/// Strided swap of `n` doubles (BLAS dswap semantics); equal pairs (bit for
/// bit) are left unwritten, as in [`dcopy`].
///
/// # Safety
/// `x` and `y` must be valid for the strided ranges.
pub(crate) unsafe fn dswap(n: i32, x: *mut f64, incx: i32, y: *mut f64, incy: i32) {
    // Safety: the caller's contract.
    unsafe {
        strided_pairs(n, x, incx, y, incy, |px, py| {
            if (*px).to_bits() != (*py).to_bits() {
                std::ptr::swap(px, py);
            }
        })
    }
}

fn start(n: i32, inc: i32) -> isize {
    if inc < 0 {
        (1 - n as isize) * inc as isize
    } else {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reference BLAS loop (0-based).
    fn reference_idamax(x: &[f64], inc: usize) -> usize {
        let n = x.len().div_ceil(inc);
        let (mut best, mut index) = (x[0].abs(), 0);
        for i in 1..n {
            if x[i * inc].abs() > best {
                best = x[i * inc].abs();
                index = i;
            }
        }
        index
    }

    #[test]
    fn idamax_matches_the_reference_loop() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for n in [1usize, 2, 7, 8, 9, 31, 64, 100, 1000] {
            for _ in 0..50 {
                // Few distinct values, so ties are common; some NaNs and negative zeros.
                let x: Vec<f64> = (0..n)
                    .map(|_| match next() % 11 {
                        0 => f64::NAN,
                        1 => -0.0,
                        k => (k as f64 - 6.0) * 0.5,
                    })
                    .collect();
                for inc in [1usize, 3] {
                    let m = n.div_ceil(inc) as i32;
                    // Safety: test data, valid for the sizes and types used.
                    let got = unsafe { idamax(m, x.as_ptr(), inc as i32) };
                    assert_eq!(got, reference_idamax(&x, inc), "n={n} inc={inc} x={x:?}");
                }
            }
        }
    }

    #[test]
    fn idamax_edge_cases() {
        let x = [f64::NAN, 5.0, -7.0];
        // Safety: test data, valid for the sizes and types used.
        assert_eq!(unsafe { idamax(3, x.as_ptr(), 1) }, 0, "a leading NaN wins");
        let y = [1.0, f64::NAN, -3.0, 3.0];
        assert_eq!(
            // Safety: test data, valid for the sizes and types used.
            unsafe { idamax(4, y.as_ptr(), 1) },
            2,
            "first of the ties, NaN skipped"
        );
        // Safety: test data, valid for the sizes and types used.
        assert_eq!(unsafe { idamax(0, y.as_ptr(), 1) }, 0);
        // Safety: test data, valid for the sizes and types used.
        assert_eq!(unsafe { idamax(4, y.as_ptr(), 0) }, 0);
    }

    #[test]
    fn dcopy_and_dswap_leave_equal_elements_unwritten_but_move_the_rest() {
        let x = [1.0, 2.0, 3.0, 4.0];
        let mut y = [0.0, 2.0, 0.0, 0.0];
        // Safety: test data, valid for the sizes and types used.
        unsafe { dcopy(4, x.as_ptr(), 1, y.as_mut_ptr(), 1) };
        assert_eq!(y, x);
        let mut a = [1.0, 2.0, 3.0];
        let mut b = [3.0, 2.0, 1.0];
        // Safety: test data, valid for the sizes and types used.
        unsafe { dswap(3, a.as_mut_ptr(), 1, b.as_mut_ptr(), -1) };
        assert_eq!(a, [1.0, 2.0, 3.0]);
        assert_eq!(b, [3.0, 2.0, 1.0]);
        let mut c = [0.0, -0.0];
        let d = [-0.0, 0.0];
        // Safety: test data, valid for the sizes and types used.
        unsafe { dcopy(2, d.as_ptr(), 1, c.as_mut_ptr(), 1) };
        assert_eq!(
            c[0].to_bits(),
            (-0.0f64).to_bits(),
            "signed zeros are different bits"
        );
    }
}
