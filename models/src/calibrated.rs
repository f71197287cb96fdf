//! Calibrated ranges: where each fitted kernel model was measured (the
//! `[about.calibrated]` tables `smpi-fit` writes), the per-call check against
//! them, and the tally of the calls that extrapolate.
//!
//! A table `[about.calibrated.<section>]` gives, for one kernel (`dgemm`) or one
//! range of a piecewise kernel (`"dgemm@K<128"`, matching a
//! `[[compute.dgemm.range]]` entry), the interval `[min, max]` of each model term
//! (`M`, `MNK`, `"M1*N"`, ...) over the calibration's calls. A call extrapolates
//! when one of its terms falls outside its interval; a term's value is the product
//! of the named variables, computed as the polynomial terms are.
//!
//! A call where a term is 0 below a positive calibrated minimum has a zero
//! dimension: BLAS returns at once, `smpi-fit` leaves such calls out of the fit on
//! purpose, and they are not counted as extrapolations.
//!
//! The check runs on every modelled call: it is a few multiplications and
//! comparisons into a tally allocated once per run ([`Extrapolations`]).

use crate::compute::{ComputeModels, KernelId, MAX_DEGREE, SLOTS};

/// Most terms one calibrated section may list.
pub(crate) const MAX_TERMS: usize = 64;

/// One term's calibrated interval.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CalibratedTerm {
    /// The term as the file names it (`MNK`, `"M1*N"`).
    pub(crate) name: String,
    /// Variable slots of the product; unused factors point at the constant-1 slot.
    pub(crate) vars: [u8; MAX_DEGREE],
    /// Number of variable factors (1 to [`MAX_DEGREE`]).
    pub(crate) degree: u8,
    pub(crate) min: f64,
    pub(crate) max: f64,
}

impl CalibratedTerm {
    /// The term's value at the variables `x`, multiplied left to right as
    /// polynomial terms are.
    #[inline]
    fn value(&self, x: &[f64; SLOTS]) -> f64 {
        // The factors past the degree are the constant 1, and so is the
        // coefficient: leaving them out changes no bit of the product.
        let mut v = x[self.vars[0] as usize];
        for &i in &self.vars[1..self.degree as usize] {
            v *= x[i as usize];
        }
        v
    }
}

/// The calibrated intervals of one `[about.calibrated.<section>]` table.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CalibratedSection {
    /// The table's name: the kernel's, or `kernel@range` for a piecewise range.
    pub(crate) label: String,
    /// Index of its first term in the kernel's tally slots.
    pub(crate) first_slot: usize,
    /// Terms sorted by name.
    pub(crate) terms: Vec<CalibratedTerm>,
}

/// The calibrated ranges of one kernel.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Calibration {
    /// The section of each segment of the kernel's default model (one segment
    /// unless piecewise); `None` for a segment without a table (not checked).
    pub(crate) by_segment: Vec<Option<u32>>,
    pub(crate) sections: Vec<CalibratedSection>,
}

impl Calibration {
    /// Number of tally slots (terms over all sections).
    pub(crate) fn slots(&self) -> usize {
        self.sections.iter().map(|s| s.terms.len()).sum()
    }

    /// Records a call of kernel `k` at the variables `x` that fell in `segment`.
    #[inline]
    pub(crate) fn record(
        &self,
        k: KernelId,
        segment: usize,
        x: &[f64; SLOTS],
        seconds: f64,
        tally: &mut Extrapolations,
    ) {
        let Some(s) = self.by_segment.get(segment).copied().flatten() else {
            return;
        };
        let section = &self.sections[s as usize];
        let mut outside = 0u64;
        for (i, t) in section.terms.iter().enumerate() {
            let v = t.value(x);
            if !(v >= t.min && v <= t.max) {
                if v == 0.0 {
                    return; // a zero dimension: never calibrated, see the module docs
                }
                outside |= 1 << i;
            }
        }
        if outside == 0 {
            return;
        }
        tally.calls[k.index()] += 1;
        tally.seconds[k.index()] += seconds;
        let base = tally.base[k.index()] + section.first_slot;
        for (i, t) in section.terms.iter().enumerate() {
            if outside & (1 << i) == 0 {
                continue;
            }
            let v = t.value(x);
            let seen = &mut tally.seen[base + i];
            seen.calls += 1;
            if v < t.min {
                seen.low = seen.low.min(v);
            } else if v > t.max {
                seen.high = seen.high.max(v);
            }
        }
    }
}

/// Extremes seen outside one term's interval.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Seen {
    calls: u64,
    /// Lowest value below the minimum (+∞ when none).
    low: f64,
    /// Highest value above the maximum (−∞ when none).
    high: f64,
}

/// The calls that extrapolated during a run: per kernel, how many, and per term
/// the extreme values seen outside the calibrated interval. Made once per run by
/// [`ComputeModels::extrapolations`]; filled by
/// [`ComputeModels::check_calibrated`] without allocating.
#[derive(Debug, Clone, PartialEq)]
pub struct Extrapolations {
    /// Per kernel: calls outside the calibrated range.
    calls: Vec<u64>,
    /// Per kernel: the modelled seconds of those calls.
    seconds: Vec<f64>,
    /// Per kernel: index of its first slot in `seen`.
    base: Vec<usize>,
    seen: Vec<Seen>,
}

/// How one kernel extrapolated, for the end-of-run warning and the JSON summary.
#[derive(Debug, Clone, PartialEq)]
pub struct KernelExtrapolation {
    /// The kernel's name in the model file.
    pub kernel: String,
    /// Calls with at least one term outside its calibrated interval.
    pub calls: u64,
    /// The modelled seconds of those calls (all ranks): what rests on the
    /// model's form rather than on measurements.
    pub seconds: f64,
    /// The terms that were outside, in section order then by name.
    pub terms: Vec<TermExtrapolation>,
}

/// How one term of one calibrated section extrapolated.
#[derive(Debug, Clone, PartialEq)]
pub struct TermExtrapolation {
    /// The `[about.calibrated]` table: `dgemm`, or `dgemm@K<128` for a range.
    pub section: String,
    /// The term (`M`, `MNK`, `M1*N`).
    pub term: String,
    /// Calls with this term outside its interval.
    pub calls: u64,
    /// Lowest value seen below the calibrated minimum, if any.
    pub min_seen: Option<f64>,
    /// Highest value seen above the calibrated maximum, if any.
    pub max_seen: Option<f64>,
    /// The calibrated interval `[min, max]`.
    pub calibrated: [f64; 2],
}

impl Extrapolations {
    pub(crate) fn new(models: &ComputeModels) -> Self {
        let mut base = Vec::with_capacity(models.len());
        let mut n = 0;
        for k in models.kernel_calibrations() {
            base.push(n);
            n += k.map_or(0, Calibration::slots);
        }
        Self {
            calls: vec![0; base.len()],
            seconds: vec![0.0; base.len()],
            base,
            seen: vec![
                Seen {
                    calls: 0,
                    low: f64::INFINITY,
                    high: f64::NEG_INFINITY,
                };
                n
            ],
        }
    }

    /// The kernels that extrapolated, by name, with their terms.
    pub fn report(&self, models: &ComputeModels) -> Vec<KernelExtrapolation> {
        let mut out = Vec::new();
        for name in models.names() {
            let Some(k) = models.kernel_id(name) else { continue };
            let calls = self.calls.get(k.index()).copied().unwrap_or(0);
            let Some(cal) = models.calibration(k).filter(|_| calls > 0) else {
                continue;
            };
            let base = self.base[k.index()];
            let mut terms = Vec::new();
            for s in &cal.sections {
                for (i, t) in s.terms.iter().enumerate() {
                    let seen = &self.seen[base + s.first_slot + i];
                    if seen.calls == 0 {
                        continue;
                    }
                    terms.push(TermExtrapolation {
                        section: s.label.clone(),
                        term: t.name.clone(),
                        calls: seen.calls,
                        min_seen: seen.low.is_finite().then_some(seen.low),
                        max_seen: seen.high.is_finite().then_some(seen.high),
                        calibrated: [t.min, t.max],
                    });
                }
            }
            out.push(KernelExtrapolation {
                kernel: name.to_string(),
                calls,
                seconds: self.seconds[k.index()],
                terms,
            });
        }
        out
    }
}

impl KernelExtrapolation {
    /// One line for the end-of-run warning, e.g. `dgemm: 12 of 300 calls (0.52 % of
    /// its modelled time) outside the calibrated range (MNK up to 5.1e10, calibrated
    /// 64–1.3e9; M up to 40000, calibrated 4–6115)`; `total_calls` and
    /// `total_seconds` are the kernel's calls and modelled seconds. Terms of a
    /// piecewise range are prefixed with the range (`K<128: M up to ...`).
    pub fn describe(&self, total_calls: u64, total_seconds: f64) -> String {
        let terms: Vec<String> = self
            .terms
            .iter()
            .map(|t| {
                let range = t
                    .section
                    .split_once('@')
                    .map_or(String::new(), |(_, r)| format!("{r}: "));
                let [lo, hi] = t.calibrated;
                let seen = match (t.min_seen, t.max_seen) {
                    (Some(a), Some(b)) => format!(
                        "down to {} and up to {}",
                        readable_apart(a, lo),
                        readable_apart(b, hi)
                    ),
                    (Some(a), None) => format!("down to {}", readable_apart(a, lo)),
                    (None, Some(b)) => format!("up to {}", readable_apart(b, hi)),
                    (None, None) => "outside".to_string(),
                };
                format!(
                    "{range}{} {seen}, calibrated {}–{}",
                    t.term,
                    readable(lo),
                    readable(hi)
                )
            })
            .collect();
        format!(
            "{}: {} of {} call{} ({} of its modelled time) outside the calibrated range ({})",
            self.kernel,
            self.calls,
            total_calls,
            if total_calls == 1 { "" } else { "s" },
            percent_of(self.seconds, total_seconds),
            terms.join("; ")
        )
    }

    /// The share of the kernel's modelled time that rests on extrapolation, in
    /// percent (0 when the kernel took no time).
    pub fn time_share(&self, total_seconds: f64) -> f64 {
        if total_seconds > 0.0 {
            100.0 * self.seconds / total_seconds
        } else {
            0.0
        }
    }
}

/// `part` as a percentage of `whole` with two significant digits (`0.0021 %`,
/// `38 %`; `0 %` when either is not positive).
pub fn percent_of(part: f64, whole: f64) -> String {
    if whole <= 0.0 || part <= 0.0 {
        return "0 %".into();
    }
    let p = 100.0 * part / whole;
    let digits = (1 - p.log10().floor() as i32).max(0) as usize;
    format!("{p:.digits$} %")
}

/// `x` for a person: whole numbers below a million as they are, others with
/// three significant digits (`5.12e10`, `0.00123`).
pub fn readable(x: f64) -> String {
    readable_digits(x, 3)
}

/// `x` as [`readable`], with more digits while it would print like `bound`.
fn readable_apart(x: f64, bound: f64) -> String {
    let mut digits = 3;
    loop {
        let s = readable_digits(x, digits);
        if digits >= 17 || s != readable_digits(bound, digits) {
            return s;
        }
        digits += 1;
    }
}

fn readable_digits(x: f64, digits: usize) -> String {
    if !x.is_finite() {
        return format!("{x}");
    }
    if x.fract() == 0.0 && x.abs() < 1e6 {
        return format!("{x}");
    }
    let s = format!("{:.*e}", digits - 1, x);
    let (mantissa, exp) = s.split_once('e').expect("`e` formatting writes an exponent");
    let mantissa = if mantissa.contains('.') {
        mantissa.trim_end_matches('0').trim_end_matches('.')
    } else {
        mantissa
    };
    let exp: i32 = exp.parse().expect("`e` formatting writes an integer exponent");
    if (-3..6).contains(&exp) {
        // Plain notation for ordinary magnitudes.
        let v: f64 = format!("{mantissa}e{exp}")
            .parse()
            .expect("a number just written");
        format!("{v}")
    } else {
        format!("{mantissa}e{exp}")
    }
}

#[cfg(test)]
mod tests;
