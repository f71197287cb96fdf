//! The validation of the calibration programs themselves: the measured
//! ping-pong against `calib_net` (built with smpicc) run under `smpirun` with
//! the fitted model, size by size; and every measured kernel call (dgemm
//! first) against what the fitted model injects for it, by design and size
//! bucket. The README ("Validation") says how sizes are pooled.

use std::collections::BTreeMap;

use crate::input::{CalibrationFile, NetKind, Table};
use crate::stats;

/// Relative tolerance of the ping-pong target.
pub const PINGPONG_TOLERANCE: f64 = 0.05;

/// Ping-pong durations per size (warm-up calls left out).
pub fn pingpong_by_size(f: &CalibrationFile) -> BTreeMap<u64, Vec<f64>> {
    let mut m: BTreeMap<u64, Vec<f64>> = BTreeMap::new();
    if let Table::Network(rows) = &f.table {
        for r in rows.iter().filter(|r| r.kind == NetKind::Pingpong && !r.warmup) {
            m.entry(r.size).or_default().push(r.duration);
        }
    }
    m
}

/// One size: measured and simulated ping-pong.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct PingpongRow {
    /// Payload (bytes).
    pub size: u64,
    /// Measured calls.
    pub measured_calls: usize,
    /// Measured median round trip (s).
    pub measured_median: f64,
    /// Its 95 % interval (`None` for ≤ 5 calls).
    pub measured_ci: Option<[f64; 2]>,
    /// Simulated calls.
    pub simulated_calls: usize,
    /// Simulated median round trip (s).
    pub simulated_median: f64,
    /// simulated / measured median − 1.
    pub relative_error: f64,
    /// The simulated median lies inside the measured median's interval.
    pub within_ci: Option<bool>,
    /// |relative error| ≤ 5 %.
    pub within: bool,
    /// A miss whose measured interval lies entirely outside the measured
    /// medians the prediction would be within 5 % of
    /// ([simulated/1.05, simulated/0.95]): the model, not the sampling, misses
    /// (`None` within 5 % or without an interval).
    pub significant_miss: Option<bool>,
}

/// Sizes pooled over a quarter of a decade: the median of the per-size
/// ratios simulated/measured. One size's median of 30-100 calls has a sampling
/// error of several percent on a noisy machine; the pooled ratio shows the
/// model's own error at that size.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct PingpongBin {
    /// Smallest size of the bin.
    pub from: u64,
    /// Largest size of the bin.
    pub to: u64,
    /// Sizes in the bin.
    pub sizes: usize,
    /// Median of simulated/measured − 1 over its sizes.
    pub relative_error: f64,
    /// Its 95 % interval (`None` for ≤ 5 sizes).
    pub ci: Option<[f64; 2]>,
    /// |relative error| ≤ 5 %.
    pub within: bool,
}

/// The ping-pong check.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct PingpongCheck {
    /// The measured file.
    pub measured_file: String,
    /// The simulated file.
    pub simulated_file: String,
    /// Per size.
    pub rows: Vec<PingpongRow>,
    /// Per quarter decade.
    pub bins: Vec<PingpongBin>,
    /// Sizes whose simulated median is within 5 % of the measured one.
    pub sizes_within: usize,
    /// Sizes whose simulated median is inside the measured median's 95 % interval.
    pub sizes_within_ci: usize,
    /// Sizes with an interval.
    pub sizes_with_ci: usize,
    /// Bins within 5 %.
    pub bins_within: usize,
    /// Largest |relative error| of a bin.
    pub worst_bin: f64,
    /// Sizes that miss 5 % significantly (see [`PingpongRow::significant_miss`]).
    pub significant_misses: usize,
    /// Largest |relative error| of a size.
    pub worst_size: f64,
    /// Smallest number of measured calls of a size.
    pub min_calls: usize,
    /// Largest relative half-width of a measured median's interval
    /// (max(median − low, high − median) / median; `None` without intervals).
    pub widest_ci: Option<f64>,
}

/// Quarter-decade bin of a size.
fn bin_of(size: u64) -> i64 {
    (4.0 * (size.max(1) as f64).log10() + 1e-9).floor() as i64
}

/// Held-out ping-pong durations per size (`pingpong_heldout` rows, warm-up
/// calls left out).
pub fn heldout_by_size(f: &CalibrationFile) -> BTreeMap<u64, Vec<f64>> {
    let mut m: BTreeMap<u64, Vec<f64>> = BTreeMap::new();
    for r in f.heldout.iter().filter(|r| !r.warmup) {
        m.entry(r.size).or_default().push(r.duration);
    }
    m
}

/// Compares the measured ping-pong with the simulated one, size by size.
pub fn compare_pingpong(measured: &CalibrationFile, simulated: &CalibrationFile) -> PingpongCheck {
    compare_sizes(
        measured,
        simulated,
        &pingpong_by_size(measured),
        &pingpong_by_size(simulated),
    )
}

/// Compares the held-out ping-pong rows measured among the calibration's with
/// the same rows of the simulated calibration run.
pub fn compare_heldout(measured: &CalibrationFile, simulated: &CalibrationFile) -> PingpongCheck {
    compare_sizes(
        measured,
        simulated,
        &heldout_by_size(measured),
        &heldout_by_size(simulated),
    )
}

fn compare_sizes(
    measured: &CalibrationFile,
    simulated: &CalibrationFile,
    m: &BTreeMap<u64, Vec<f64>>,
    s: &BTreeMap<u64, Vec<f64>>,
) -> PingpongCheck {
    let mut rows = Vec::new();
    for (size, mv) in m {
        let Some(sv) = s.get(size) else { continue };
        let ci = stats::median_ci(mv, 0.95);
        let mm = stats::median(mv);
        let sm = stats::median(sv);
        let error = sm / mm - 1.0;
        let within = error.abs() <= PINGPONG_TOLERANCE;
        rows.push(PingpongRow {
            size: *size,
            measured_calls: mv.len(),
            measured_median: mm,
            measured_ci: ci.map(|c| [c.low, c.high]),
            simulated_calls: sv.len(),
            simulated_median: sm,
            relative_error: error,
            within_ci: ci.map(|c| sm >= c.low && sm <= c.high),
            within,
            significant_miss: if within {
                None
            } else {
                ci.map(|c| {
                    c.high < sm / (1.0 + PINGPONG_TOLERANCE) || c.low > sm / (1.0 - PINGPONG_TOLERANCE)
                })
            },
        });
    }
    let mut by_bin: BTreeMap<i64, Vec<&PingpongRow>> = BTreeMap::new();
    for r in &rows {
        by_bin.entry(bin_of(r.size)).or_default().push(r);
    }
    let bins: Vec<PingpongBin> = by_bin
        .values()
        .map(|v| {
            let e: Vec<f64> = v.iter().map(|r| r.relative_error).collect();
            let med = stats::median(&e);
            PingpongBin {
                from: v[0].size,
                to: v[v.len() - 1].size,
                sizes: v.len(),
                relative_error: med,
                ci: stats::median_ci(&e, 0.95).map(|c| [c.low, c.high]),
                within: med.abs() <= PINGPONG_TOLERANCE,
            }
        })
        .collect();
    PingpongCheck {
        measured_file: measured.name(),
        simulated_file: simulated.name(),
        sizes_within: rows.iter().filter(|r| r.within).count(),
        significant_misses: rows.iter().filter(|r| r.significant_miss == Some(true)).count(),
        worst_size: rows.iter().map(|r| r.relative_error.abs()).fold(0.0, f64::max),
        min_calls: rows.iter().map(|r| r.measured_calls).min().unwrap_or(0),
        widest_ci: rows
            .iter()
            .filter_map(|r| {
                r.measured_ci
                    .map(|c| (r.measured_median - c[0]).max(c[1] - r.measured_median) / r.measured_median)
            })
            .reduce(f64::max),
        sizes_within_ci: rows.iter().filter(|r| r.within_ci == Some(true)).count(),
        sizes_with_ci: rows.iter().filter(|r| r.within_ci.is_some()).count(),
        bins_within: bins.iter().filter(|b| b.within).count(),
        worst_bin: bins.iter().map(|b| b.relative_error.abs()).fold(0.0, f64::max),
        rows,
        bins,
    }
}

/// The arguments of the measured `calib_net` run (its `command` metadata
/// without the program and without `--out FILE`), so that the simulated run
/// draws the same design.
pub fn calib_net_args(measured: &CalibrationFile) -> Vec<String> {
    let words: Vec<&str> = measured.meta("command").split_whitespace().collect();
    let mut out = Vec::new();
    let mut i = 1;
    while i < words.len() {
        if words[i] == "--out" {
            i += 2;
            continue;
        }
        out.push(words[i].to_string());
        i += 1;
    }
    out
}

/// Calls of one kernel in one design and size bucket, measured against the
/// model's noise-free prediction (its mean: the noise models have mean 0).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct KernelBucket {
    /// Kernel.
    pub kernel: String,
    /// `HPL trace` (calibrate/trace), `uniform product` or `fixed K=128` for
    /// dgemm, `calibration design` for the other kernels.
    pub design: String,
    /// Bucket of the kernel's natural product (`[from, to)`, decades).
    pub from: f64,
    /// Upper end of the bucket.
    pub to: f64,
    /// Calls.
    pub calls: usize,
    /// Σ measured durations (s).
    pub measured_total: f64,
    /// Σ predicted durations (s).
    pub predicted_total: f64,
    /// Σ predicted / Σ measured − 1 (errors on totals: what a simulation sums).
    pub relative_error: f64,
    /// Median over calls of predicted/measured − 1.
    pub median_call_error: f64,
}

/// The kernel's natural product (what buckets are made on) from its CSV parameters.
fn product(kernel: &str, p: &[f64]) -> f64 {
    match kernel {
        "dtrsm" => {
            let k = if p[2] == 0.0 { p[0] } else { p[1] };
            p[0] * p[1] * k
        }
        "HPL_dlaswp04T" => p[1] * p[2],
        "dtrsv" => p[0] * p[0],
        _ => p.iter().product(),
    }
}

/// Every measured kernel call of the compute files against the model:
/// per kernel, design and decade of the product. Host indices follow
/// `smpi-fit`: the sorted (machine, core) pairs of the files.
pub fn compare_kernels(files: &[CalibrationFile], model: &models::ModelSet) -> Vec<KernelBucket> {
    let mut hosts: Vec<(String, u32)> = Vec::new();
    for f in files {
        if let Table::Compute(rows) = &f.table {
            for r in rows {
                hosts.push((f.meta("host").to_string(), r.core));
            }
        }
    }
    hosts.sort();
    hosts.dedup();
    // (kernel, design, decade) -> (measured, predicted) per call
    type Key = (String, String, i32);
    let mut acc: BTreeMap<Key, Vec<(f64, f64)>> = BTreeMap::new();
    for f in files {
        let Table::Compute(rows) = &f.table else { continue };
        let trace = f.meta("mode") == "trace";
        let design = match f.meta.get("fixed_k") {
            _ if trace => "HPL trace".to_string(),
            Some(k) if !k.is_empty() => format!("fixed K={k}"),
            _ => "uniform product".to_string(),
        };
        for r in rows {
            let Some(id) = model.compute.kernel_id(&r.kernel) else {
                continue;
            };
            let h = hosts
                .iter()
                .position(|(m, c)| m == f.meta("host") && *c == r.core)
                .expect("collected above");
            let pred = model.compute.duration_without_noise(id, h, &r.params);
            let x = product(&r.kernel, &r.params).max(1.0);
            let d = if r.kernel == "dgemm" {
                design.clone()
            } else {
                "all".to_string()
            };
            acc.entry((r.kernel.clone(), d, x.log10().floor() as i32))
                .or_default()
                .push((r.duration, pred));
        }
    }
    acc.into_iter()
        .map(|((kernel, design, dec), v)| {
            let mt: f64 = v.iter().map(|x| x.0).sum();
            let pt: f64 = v.iter().map(|x| x.1).sum();
            let ratios: Vec<f64> = v.iter().filter(|x| x.0 > 0.0).map(|x| x.1 / x.0 - 1.0).collect();
            KernelBucket {
                kernel,
                design,
                from: 10f64.powi(dec),
                to: 10f64.powi(dec + 1),
                calls: v.len(),
                measured_total: mt,
                predicted_total: pt,
                relative_error: pt / mt - 1.0,
                median_call_error: if ratios.is_empty() {
                    f64::NAN
                } else {
                    stats::median(&ratios)
                },
            }
        })
        .collect()
}

/// Totals of a kernel and design over all their buckets: (calls, Σ measured, Σ predicted).
pub fn kernel_totals(buckets: &[KernelBucket]) -> BTreeMap<(String, String), (usize, f64, f64)> {
    let mut m: BTreeMap<(String, String), (usize, f64, f64)> = BTreeMap::new();
    for b in buckets {
        let e = m.entry((b.kernel.clone(), b.design.clone())).or_default();
        e.0 += b.calls;
        e.1 += b.measured_total;
        e.2 += b.predicted_total;
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::parse;

    fn net_csv(rows: &[(u64, f64)]) -> String {
        let mut s = crate::synth::metadata("network", "h", 1, 1e-9, 2e-8);
        s.push_str("# command: /x/calib_net --full --seed 4 --out /tmp/a.csv --reps 3\n");
        s.push_str("seq,kind,size,start,duration,warmup\n");
        for (i, (size, d)) in rows.iter().enumerate() {
            s.push_str(&format!("{i},pingpong,{size},0,{d:e},{}\n", u8::from(i < 2)));
        }
        s.push_str(&format!("# end: {}\n", rows.len()));
        s
    }

    #[test]
    fn pingpong_per_size_and_bins() {
        let mut m = Vec::new();
        let mut s = Vec::new();
        for size in [10u64, 11, 12, 1000] {
            for k in 0..9 {
                m.push((size, 1e-6 * (1.0 + 0.01 * f64::from(k))));
                s.push((size, 1.04e-6));
            }
        }
        let mf = parse(&net_csv(&m), "m.csv", 0).unwrap();
        let sf = parse(&net_csv(&s), "s.csv", 1).unwrap();
        let c = compare_pingpong(&mf, &sf);
        assert_eq!(c.rows.len(), 4);
        // warm-up rows (the first two of the file, both size 10) left out
        assert_eq!(c.rows[0].measured_calls, 7);
        assert!(c.rows.iter().all(|r| (r.relative_error - 0.0).abs() < 0.05));
        assert_eq!(c.bins.len(), 2); // 10..12 and 1000
        assert_eq!(c.bins_within, 2);
        assert_eq!(c.sizes_within, 4);
        assert_eq!(c.significant_misses, 0);
        assert!(c.rows.iter().all(|r| r.within && r.significant_miss.is_none()));
        let args = calib_net_args(&mf);
        assert_eq!(args, ["--full", "--seed", "4", "--reps", "3"]);
    }

    #[test]
    fn significant_misses_need_the_interval_outside() {
        // Size 100: tight calls at 1.00 µs, simulated 1.10 µs: a 10 % miss whose
        // interval [1.00, 1.00] lies below 1.10/1.05: significant. Size 200:
        // calls spread evenly over 0.76–1.24 µs (median 1.00), simulated 1.06: a 6 % miss, but
        // the interval reaches 1.06/1.05: not significant.
        let mut m = Vec::new();
        let mut s = Vec::new();
        for k in 0..41 {
            m.push((100u64, 1e-6));
            m.push((200u64, 1e-6 * (0.8 + 0.5 * f64::from(k) / 40.0) / 1.05));
            s.push((100u64, 1.10e-6));
            s.push((200u64, 1.06e-6));
        }
        let mf = parse(&net_csv(&m), "m.csv", 0).unwrap();
        let sf = parse(&net_csv(&s), "s.csv", 1).unwrap();
        let c = compare_pingpong(&mf, &sf);
        assert_eq!(c.rows.len(), 2);
        let r100 = &c.rows[0];
        assert!(!r100.within);
        assert_eq!(r100.significant_miss, Some(true));
        let r200 = &c.rows[1];
        assert!(!r200.within, "error {}", r200.relative_error);
        let ci = r200.measured_ci.unwrap();
        assert!(ci[1] >= 1.06e-6 / 1.05, "{ci:?}");
        assert_eq!(r200.significant_miss, Some(false));
        assert_eq!(c.significant_misses, 1);
        assert!(c.widest_ci.unwrap() > 0.0);
    }

    #[test]
    fn buckets_by_decade() {
        assert_eq!(bin_of(1), 0);
        assert_eq!(bin_of(10), 4);
        assert_eq!(bin_of(17), 4);
        assert_eq!(bin_of(18), 5);
        assert_eq!(product("dtrsm", &[10.0, 20.0, 0.0]), 2000.0);
        assert_eq!(product("dtrsm", &[10.0, 20.0, 1.0]), 4000.0);
        assert_eq!(product("HPL_dlaswp04T", &[3.0, 4.0, 5.0]), 20.0);
    }
}
