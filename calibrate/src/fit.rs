//! The whole fit: read the CSVs, fit the network and the kernels, build the
//! model file, the platform and the summary, check that the `models` crate
//! reads the model back with the same values, and write every output only when
//! everything succeeded (each through a temporary file renamed at the end).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context as _};

use crate::compute::{fit_compute, ComputeOptions, KernelFit, MeanModel, NoiseModel};
use crate::input::{read_file, CalibrationFile, NetKind, Table};
use crate::modelfile::{
    About, ConfigValue, HostEntry, InputRef, KernelSection, MixtureDoc, ModelFile, ModelKeys, NetRange,
    NetworkSection, NoiseDoc, PlatformFile, RangeEntry, Sigma,
};
use crate::network::{fit_network, predict, NetworkFit, NetworkOptions};
use crate::summary::{KernelSummary, KindSummary, NetworkSummary, SegmentSummary, Summary, SUMMARY_FORMAT};

/// The tool's name and version, as recorded in outputs.
pub fn tool() -> String {
    format!("smpi-fit {}", env!("CARGO_PKG_VERSION"))
}

/// Options of a fit.
#[derive(Debug, Clone)]
pub struct FitOptions {
    /// Network options.
    pub network: NetworkOptions,
    /// Compute options.
    pub compute: ComputeOptions,
    /// The command line (for provenance).
    pub command: String,
    /// The fit date (UTC, ISO 8601); [`now_utc`] by default.
    pub date: String,
    /// Host speed of the platform (flop/s).
    pub host_speed: f64,
    /// Write the per-range network noise (mixtures). Without it the network
    /// model is N-0: its lines go through the per-size centers.
    pub network_noise: bool,
}

/// One predicted-against-measured row of the in-sample check.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct CheckRow {
    /// Measure kind or kernel.
    pub what: String,
    /// Message size (network) or product (compute).
    pub x: f64,
    /// Calls.
    pub n: usize,
    /// Measured mean.
    pub mean: f64,
    /// Measured median.
    pub median: f64,
    /// What the loaded model predicts.
    pub predicted: f64,
}

impl CheckRow {
    /// Relative error against the measured median.
    pub fn error_median(&self) -> f64 {
        self.predicted / self.median - 1.0
    }
    /// Relative error against the measured mean.
    pub fn error_mean(&self) -> f64 {
        self.predicted / self.mean - 1.0
    }
}

/// Everything a fit produces.
#[derive(Debug, Clone)]
pub struct FitResult {
    /// The inputs.
    pub files: Vec<CalibrationFile>,
    /// The network fit, with network inputs.
    pub network: Option<NetworkFit>,
    /// The kernel fits.
    pub kernels: Vec<KernelFit>,
    /// Simulated hosts: `(machine, core)` in host-index order.
    pub hosts: Vec<(String, u32)>,
    /// The model file.
    pub model: ModelFile,
    /// Its text.
    pub model_text: String,
    /// The platform.
    pub platform: PlatformFile,
    /// The summary.
    pub summary: Summary,
    /// Predicted (by the model as the `models` crate reads it) against measured,
    /// per network kind and size.
    pub network_checks: Vec<CheckRow>,
    /// Largest |model value − fitted value| / fitted value over the kernels'
    /// calls, model as read by the `models` crate (a writer check).
    pub compute_readback_error: f64,
}

/// The current UTC date and time, ISO 8601 (no external clock crate: days to
/// civil date by Howard Hinnant's algorithm).
pub fn now_utc() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs()) as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// The name of the machine the fit runs on.
pub fn this_host() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .ok()
        .filter(|s| !s.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "unknown".into())
}

/// The `empty` entry of a kernel whose calibration had calls with a zero
/// product (BLAS's quick return): their median duration, so that a simulated
/// call with an empty operand costs what it measured, not the polynomial's
/// intercept and cross terms.
fn empty_call(k: &KernelFit) -> Option<crate::modelfile::EmptyCall> {
    Some(crate::modelfile::EmptyCall {
        product: k.spec.product.name(&k.spec.variables),
        seconds: k.zero_size_median?,
    })
}

fn kernel_keys(k: &KernelFit, mean: &crate::compute::MeanFit, noise: &crate::compute::NoiseFit) -> ModelKeys {
    let vars = &k.spec.variables;
    let mut keys = ModelKeys::default();
    let coef = |i: usize| mean.written[i];
    match mean.model {
        MeanModel::Constant => {
            keys.model = "constant".into();
            keys.value = Some(coef(0));
        }
        MeanModel::Linear => {
            keys.model = "linear".into();
            keys.product = Some(mean.terms[1].name(vars));
            keys.a = Some(coef(1));
            keys.b = Some(coef(0));
        }
        MeanModel::Polynomial => {
            keys.model = "polynomial".into();
            keys.coefficients = Some(
                mean.terms
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| !mean.fit.aliased[*i])
                    .map(|(i, t)| (t.name(vars), coef(i)))
                    .collect(),
            );
        }
    }
    keys.noise = match noise.model {
        NoiseModel::None => None,
        NoiseModel::Constant => Some(NoiseDoc {
            kind: "normal".into(),
            sigma: Sigma::Constant(noise.sigma.first().map_or(0.0, |s| s.1.max(0.0))),
        }),
        NoiseModel::Polynomial => Some(NoiseDoc {
            kind: "normal".into(),
            sigma: Sigma::Polynomial(noise.sigma.iter().map(|(t, c)| (t.name(vars), *c)).collect()),
        }),
    };
    keys
}

fn smpi_factor(chunks: &[(u64, f64)]) -> String {
    chunks
        .iter()
        .map(|(b, v)| format!("{b}:{}", crate::modelfile::fmt_f64(*v)))
        .collect::<Vec<_>>()
        .join(";")
}

fn smpi_overhead(chunks: &[(u64, f64, f64)]) -> String {
    chunks
        .iter()
        .map(|(b, o, p)| {
            format!(
                "{b}:{}:{}",
                crate::modelfile::fmt_f64(*o),
                crate::modelfile::fmt_f64(*p)
            )
        })
        .collect::<Vec<_>>()
        .join(";")
}

/// Reads the files and fits everything (no output is written).
pub fn run(paths: &[PathBuf], opts: &FitOptions) -> anyhow::Result<FitResult> {
    if paths.is_empty() {
        bail!("no calibration CSV given");
    }
    let files: Vec<CalibrationFile> = paths
        .iter()
        .enumerate()
        .map(|(i, p)| read_file(p, i))
        .collect::<Result<_, _>>()?;
    // Simulated hosts: one per (machine, core) of the compute files, sorted;
    // without compute files, the two cores a network calibration runs on.
    let mut hosts: Vec<(String, u32)> = Vec::new();
    for f in &files {
        if let Table::Compute(rows) = &f.table {
            for r in rows {
                hosts.push((f.meta("host").to_string(), r.core));
            }
        }
    }
    hosts.sort();
    hosts.dedup();
    let machines: Vec<String> = {
        let mut m: Vec<String> = files.iter().map(|f| f.meta("host").to_string()).collect();
        m.sort();
        m.dedup();
        m
    };
    if hosts.is_empty() {
        hosts = vec![(machines[0].clone(), 0), (machines[0].clone(), 1)];
    } else if hosts.len() == 1 {
        // A two-rank run needs two hosts: the second is a copy of the first core.
        let (m, c) = hosts[0].clone();
        hosts.push((m, c + 1));
    }
    let host_list = hosts.clone();
    let host_index = move |machine: &str, core: u32| {
        host_list
            .iter()
            .position(|(m, c)| m == machine && *c == core)
            .expect("every compute (machine, core) is a host")
    };
    let network = fit_network(&files, &opts.network)?;
    let kernels = fit_compute(&files, &host_index, &opts.compute)?;

    // Model file.
    let calibrated_host = machines.join(", ");
    let inputs: Vec<InputRef> = files
        .iter()
        .map(|f| InputRef {
            file: f.name(),
            sha256: f.sha256.clone(),
            kind: f.meta("kind").into(),
            host: f.meta("host").into(),
            seed: f.meta("seed").into(),
            date: f.meta("date").into(),
        })
        .collect();
    let mut calibrated: BTreeMap<String, BTreeMap<String, [f64; 2]>> = BTreeMap::new();
    let mut config = BTreeMap::new();
    let network_section = network.as_ref().map(|n| {
        let t = &n.translation;
        calibrated.insert(
            "network".into(),
            BTreeMap::from([("size".into(), [n.size_range.0, n.size_range.1])]),
        );
        config.insert(
            "smpi/async-small-thresh".into(),
            ConfigValue::Int(t.detached_thresh as i64),
        );
        config.insert(
            "smpi/send-is-detached-thresh".into(),
            ConfigValue::Int(t.detached_thresh as i64),
        );
        config.insert("smpi/wtime".into(), ConfigValue::Float(t.wtime));
        config.insert("smpi/test".into(), ConfigValue::Float(t.test));
        config.insert("smpi/iprobe".into(), ConfigValue::Float(t.iprobe));
        if let Some(p) = &n.probe {
            config.insert("smpi/probe-sees".into(), ConfigValue::Str(p.setting.into()));
        }
        let ranges: Vec<NetRange> = t
            .noise
            .iter()
            .filter(|_| opts.network_noise)
            .enumerate()
            .map(|(i, (above, w, m, s))| NetRange {
                above: *above as f64,
                upto: t.noise.get(i + 1).map(|n| n.0 as f64),
                noise: MixtureDoc {
                    kind: "mixture".into(),
                    weights: w.clone(),
                    means: m.clone(),
                    sigmas: s.clone(),
                },
            })
            .collect();
        NetworkSection {
            source: format!(
                "smpi-fit: segmented fits of per-size {}s (breakpoints by dynamic programming, BIC); \
                 nominal link {} s, {} B/s (platform file); noise: {}",
                match n.center {
                    crate::segmented::Center::Mean => "mean",
                    crate::segmented::Center::Median => "median",
                },
                crate::modelfile::fmt_f64(t.latency),
                crate::modelfile::fmt_f64(t.bandwidth),
                if opts.network_noise {
                    "ping-pong mixtures halved per message"
                } else {
                    "none written (smpi-fit --network-noise none)"
                }
            ),
            lat_factor: smpi_factor(&t.lat_factor),
            bw_factor: smpi_factor(&t.bw_factor),
            os: smpi_overhead(&t.os),
            or: smpi_overhead(&t.or),
            ois: smpi_overhead(&t.ois),
            range: ranges,
        }
    });
    let mut compute = BTreeMap::new();
    // A kernel fitted per K range (dgemm or dtrsm with a fixed-K design) is written
    // piecewise on K, one range per fit.
    let ranges_of = |name: &str| -> Vec<&KernelFit> {
        let mut v: Vec<&KernelFit> = kernels
            .iter()
            .filter(|f| f.k_range.is_some() && f.spec.name == name)
            .collect();
        v.sort_by_key(|f| f.k_range.map(|r| r.0));
        v
    };
    let source_of = |k: &KernelFit| {
        let score = |name: &str| k.mean_scores.iter().find(|s| s.name == name);
        format!(
            "smpi-fit: {} + {} chosen by {}-fold cross-validation{} ({} calls{}; {})",
            k.mean.model.label(),
            k.noise.model.label(),
            opts.compute.folds,
            score(k.mean.model.label()).map_or(String::new(), |s| format!(
                ", held-out {} {:.2} %",
                if k.ordinary {
                    "error of the total time"
                } else {
                    "relative error"
                },
                100.0 * s.rel_error
            )),
            k.calls,
            if k.outliers > 0 {
                format!(", {} gross outliers screened out", k.outliers)
            } else {
                String::new()
            } + &if k.design_set_aside > 0 {
                format!(
                    ", all traced in the program: the designs' {} calls set aside",
                    k.design_set_aside
                )
            } else {
                String::new()
            },
            k.mean.weighting
        )
    };
    for k in &kernels {
        calibrated.insert(
            k.label(),
            k.range.iter().map(|(q, (a, b))| (q.clone(), [*a, *b])).collect(),
        );
        if k.k_range.is_some() {
            let all = ranges_of(&k.spec.name);
            if !std::ptr::eq(all[0], k) {
                continue; // written with the first range's section
            }
            let range: Vec<RangeEntry> = all
                .iter()
                .enumerate()
                .map(|(i, f)| {
                    let (a, _) = f.k_range.expect("ranged");
                    let to = all.get(i + 1).and_then(|n| n.k_range).map(|r| r.0 as f64);
                    RangeEntry {
                        from: a as f64,
                        to,
                        source: format!("{}: {}", f.label(), source_of(f)),
                        keys: kernel_keys(f, &f.mean, &f.noise),
                    }
                })
                .collect();
            compute.insert(
                k.spec.name.clone(),
                KernelSection {
                    kind: k.spec.function.then(|| "function".to_string()),
                    params: k.spec.function.then(|| k.spec.params.clone()),
                    source: format!(
                        "smpi-fit: piecewise on K (M′): K below, at and above the fixed-K design's K (HPL's NB) fitted \
                         apart; per-core models are not written for a piecewise kernel ({} calls in all{})",
                        all.iter().map(|f| f.calls).sum::<usize>(),
                        if k.zero_size > 0 {
                            format!(", {} calls with a zero dimension left out", k.zero_size)
                        } else {
                            String::new()
                        }
                    ),
                    keys: ModelKeys::default(),
                    host: Vec::new(),
                    piecewise_on: Some("K".into()),
                    empty: empty_call(k),
                    range,
                },
            );
            continue;
        }
        let source = source_of(k);
        let host = match &k.hosts_test {
            Some(h) if h.per_host => h
                .fits
                .iter()
                .map(|(idx, m, nz)| HostEntry {
                    hosts: vec![*idx as u64],
                    source: format!(
                        "{}-core{}: own coefficients (per-core F = {:.3}, p = {:.2e}, effect on total time {:.2} %)",
                        hosts[*idx].0,
                        hosts[*idx].1,
                        h.f,
                        h.p_value,
                        100.0 * h.effect
                    ),
                    keys: kernel_keys(k, m, nz),
                })
                .collect(),
            _ => Vec::new(),
        };
        compute.insert(
            k.spec.name.clone(),
            KernelSection {
                kind: k.spec.function.then(|| "function".to_string()),
                params: k.spec.function.then(|| k.spec.params.clone()),
                source,
                keys: kernel_keys(k, &k.mean, &k.noise),
                host,
                piecewise_on: None,
                empty: empty_call(k),
                range: Vec::new(),
            },
        );
    }
    let model = ModelFile {
        seed: 0,
        about: About {
            tool: tool(),
            date: opts.date.clone(),
            command: opts.command.clone(),
            fit_host: this_host(),
            calibrated_host: calibrated_host.clone(),
            center: network.as_ref().map(|n| {
                match n.center {
                    crate::segmented::Center::Mean => "mean",
                    crate::segmented::Center::Median => "median",
                }
                .to_string()
            }),
            fit_seed: opts.compute.seed,
            cv_folds: opts.compute.folds as u64,
            inputs: inputs.clone(),
            calibrated,
        },
        config,
        network: network_section,
        compute,
    };
    let model_text = model.to_toml();
    // The models crate must read what we wrote, with our values.
    let loaded = models::ModelSet::from_toml_str(&model_text, "<model file being written>")
        .map_err(|e| anyhow::anyhow!("bug: the model file written does not load: {e}\n{model_text}"))?;
    let mut network_checks = Vec::new();
    if let (Some(n), Some(net)) = (&network, &loaded.network) {
        for kind in NetKind::ALL {
            if let Some(f) = n.segmented(kind) {
                for a in &f.aggregates {
                    network_checks.push(CheckRow {
                        what: kind.name().into(),
                        x: a.size,
                        n: a.n,
                        mean: a.mean,
                        median: a.median,
                        predicted: predict(net, &n.translation, kind, a.size),
                    });
                }
            }
        }
    }
    let mut compute_readback_error: f64 = 0.0;
    for k in &kernels {
        let id = loaded
            .compute
            .kernel_id(&k.spec.name)
            .context("a written kernel is missing when read back")?;
        let piecewise = k.k_range.is_some();
        for (x, _, h) in k.data.iter().step_by((k.data.len() / 200).max(1)) {
            let params: Vec<f64> = if k.spec.name == "dtrsm" {
                vec![x[0], x[1], if x[2] == x[0] { 0.0 } else { 1.0 }]
            } else {
                x.clone()
            };
            let mine = match &k.hosts_test {
                Some(t) if t.per_host && !piecewise => t
                    .fits
                    .iter()
                    .find(|f| f.0 == *h)
                    .map_or(k.mean.predict(x), |f| f.1.predict(x)),
                _ => k.mean.predict(x),
            };
            // The simulator clamps a negative total to 0; compare on that scale.
            let theirs = loaded.compute.duration_without_noise(id, *h, &params);
            let scale = mine.abs().max(1e-3 * k.mean_duration).max(f64::MIN_POSITIVE);
            compute_readback_error = compute_readback_error.max((theirs - mine.max(0.0)).abs() / scale);
        }
    }
    if compute_readback_error > 1e-9 {
        bail!("bug: the models crate evaluates the written kernels {compute_readback_error:.2e} away from the fit");
    }

    let machine = machines.first().cloned().unwrap_or_else(|| "machine".into());
    let width = (hosts.len().max(2) - 1).to_string().len();
    let platform = PlatformFile {
        machine: calibrated_host.clone(),
        hosts: hosts
            .iter()
            .map(|(m, c)| {
                let prefix = if machines.len() > 1 { m } else { &machine };
                format!("{prefix}-core{c:0width$}")
            })
            .collect(),
        latency: network.as_ref().map_or(1e-6, |n| n.translation.latency),
        bandwidth: network.as_ref().map_or(1e10, |n| n.translation.bandwidth),
        speed: opts.host_speed,
        tool: tool(),
    };
    let summary = summarize(
        &files,
        network.as_ref(),
        &kernels,
        &inputs,
        &calibrated_host,
        &opts.date,
    );
    Ok(FitResult {
        files,
        network,
        kernels,
        hosts,
        model,
        model_text,
        platform,
        summary,
        network_checks,
        compute_readback_error,
    })
}

/// Kernels where more than 5 % of the calls were screened out as gross
/// outliers: the machine was busy during the calibration (other processes
/// took the core), and the fit describes the calls that ran undisturbed.
pub fn screening_warnings(kernels: &[KernelFit]) -> Vec<String> {
    kernels
        .iter()
        .filter(|k| k.outliers * 20 > k.calls + k.outliers)
        .map(|k| {
            format!(
                "{}: {} of {} calls ({:.0} %) ran more than 1.5× slower than the robust fit and were screened out: \
                 the machine was probably busy during the calibration; calibrate again when it is quiet",
                k.label(),
                k.outliers,
                k.calls + k.outliers,
                100.0 * k.outliers as f64 / (k.calls + k.outliers) as f64
            )
        })
        .collect()
}

/// Compute calibrations timed on different operand layouts (`lda` metadata of
/// `calib_compute --lda`; absent or 0 = tight operands) pooled in one fit:
/// HPL's row swaps on a block of a large matrix cost several times those on a
/// tight block, so a pooled fit is a mixture of two machines. BLAS traces
/// (`mode: trace`) have the traced program's own layout and are not counted.
pub fn layout_warnings(files: &[CalibrationFile]) -> Vec<String> {
    let mut by_lda: std::collections::BTreeMap<u64, Vec<String>> = std::collections::BTreeMap::new();
    for f in files
        .iter()
        .filter(|f| matches!(f.table, crate::input::Table::Compute(_)) && f.meta("mode") != "trace")
    {
        let lda = f.meta("lda").trim().parse::<u64>().unwrap_or(0);
        by_lda.entry(lda).or_default().push(f.name());
    }
    if by_lda.len() < 2 {
        return Vec::new();
    }
    let parts: Vec<String> = by_lda
        .iter()
        .map(|(lda, names)| {
            let layout = if *lda == 0 {
                "tight operands".to_string()
            } else {
                format!("lda {lda}")
            };
            format!("{layout}: {}", names.join(", "))
        })
        .collect();
    vec![format!(
        "compute calibrations with different operand layouts are pooled ({}): calibrate every \
         compute run with the same calib_compute --lda",
        parts.join("; ")
    )]
}

/// Sizes at which network kinds are summarised (within the calibrated range).
pub const SUMMARY_SIZES: [f64; 6] = [1.0, 1e3, 1e4, 1e5, 1e6, 1e7];

fn summarize(
    files: &[CalibrationFile],
    network: Option<&NetworkFit>,
    kernels: &[KernelFit],
    inputs: &[InputRef],
    host: &str,
    date: &str,
) -> Summary {
    let mut factors = BTreeMap::new();
    let mut groups: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut ksum = BTreeMap::new();
    for k in kernels {
        let vars = &k.spec.variables;
        let name = &k.label();
        let full: BTreeMap<String, f64> = k
            .full
            .terms
            .iter()
            .zip(&k.full.fit.coef)
            .zip(&k.full.fit.aliased)
            .filter(|(_, a)| !**a)
            .map(|((t, c), _)| (t.name(vars), *c))
            .collect();
        factors.insert(format!("{name}.performance"), k.performance);
        let mut g = Vec::new();
        for (t, c) in &full {
            let f = format!("{name}.coef.{t}");
            factors.insert(f.clone(), *c);
            g.push(f);
        }
        groups.insert(format!("{name}.coef"), g);
        ksum.insert(
            name.clone(),
            KernelSummary {
                model: k.mean.model.label().into(),
                noise: k.noise.model.label().into(),
                calls: k.calls,
                performance: k.performance,
                full_coefficients: full,
                coefficients: k
                    .mean
                    .terms
                    .iter()
                    .zip(&k.mean.written)
                    .zip(&k.mean.fit.aliased)
                    .filter(|(_, a)| !**a)
                    .map(|((t, c), _)| (t.name(vars), *c))
                    .collect(),
                sigma: k.noise.sigma.iter().map(|(t, c)| (t.name(vars), *c)).collect(),
            },
        );
    }
    let network = network.map(|n| {
        let mut kinds = BTreeMap::new();
        for (kind, fit) in &n.kinds {
            let ks = match fit {
                crate::network::KindFit::Segmented(f) => {
                    let (lo, hi) = f.range();
                    let mut g = Vec::new();
                    for s in SUMMARY_SIZES.iter().filter(|s| **s >= lo && **s <= hi) {
                        let name = format!("network.{}.t({})", kind.name(), s);
                        factors.insert(name.clone(), f.at(*s));
                        g.push(name);
                    }
                    groups.insert(format!("network.{}", kind.name()), g);
                    KindSummary {
                        segments: f
                            .segments
                            .iter()
                            .map(|s| SegmentSummary {
                                from: s.min_size,
                                to: s.max_size,
                                intercept: s.intercept,
                                slope: s.slope,
                            })
                            .collect(),
                        breakpoints: f.breakpoints.iter().map(|b| b.estimate).collect(),
                        value: None,
                    }
                }
                crate::network::KindFit::Constant(c) => {
                    factors.insert(format!("network.{}", kind.name()), c.center);
                    KindSummary {
                        segments: Vec::new(),
                        breakpoints: Vec::new(),
                        value: Some(c.center),
                    }
                }
            };
            kinds.insert(kind.name().to_string(), ks);
        }
        factors.insert(
            "network.detached_thresh".into(),
            n.translation.detached_thresh as f64,
        );
        NetworkSummary {
            detached_thresh: n.translation.detached_thresh,
            latency: n.translation.latency,
            bandwidth: n.translation.bandwidth,
            kinds,
        }
    });
    let calibration_date = files
        .iter()
        .map(|f| f.meta("date").to_string())
        .min()
        .unwrap_or_default();
    Summary {
        format: SUMMARY_FORMAT.into(),
        tool: tool(),
        fit_date: date.into(),
        calibration_date,
        host: host.into(),
        inputs: inputs.to_vec(),
        factors,
        groups,
        kernels: ksum,
        network,
    }
}

/// Files to write: `(final path, contents)`. Each goes to a temporary file in
/// the same directory first; all are renamed only after every write succeeded,
/// so a failure never leaves a half-written model file.
pub fn write_atomically(outputs: &[(PathBuf, Vec<u8>)]) -> anyhow::Result<()> {
    let mut temps = Vec::new();
    for (path, bytes) in outputs {
        let dir = path
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir)
            .with_context(|| format!("{}: cannot create the directory", dir.display()))?;
        let name = path
            .file_name()
            .context("output path has no file name")?
            .to_string_lossy();
        let tmp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
        if let Err(e) = std::fs::write(&tmp, bytes) {
            for t in &temps {
                let _ = std::fs::remove_file(t);
            }
            return Err(e).with_context(|| format!("{}: cannot write it", tmp.display()));
        }
        temps.push(tmp);
    }
    for (tmp, (path, _)) in temps.iter().zip(outputs) {
        std::fs::rename(tmp, path)
            .with_context(|| format!("{}: cannot rename it to {}", tmp.display(), path.display()))?;
    }
    Ok(())
}
