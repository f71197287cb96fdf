//! `--cfg=key:value` settings, with SMPI's key names and defaults.
//!
//! Every key smpirun understands is listed in [`KEYS`] with its default and a
//! one-line description (`smpirun --help-cfg` prints them). Unknown keys are an
//! error, as in SimGrid. Old SimGrid names are accepted as aliases
//! (`smpi/lat-factor` → `network/latency-factor`, `surf/precision` →
//! `precision/timing`, `maxmin/precision` → `precision/work-amount`).

use std::collections::BTreeMap;

use models::network::{Overhead, PiecewiseFactor};
use simcore::platform::units;

/// Key, default value, description.
pub const KEYS: &[(&str, &str, &str)] = &[
    (
        "network/model",
        "SMPI",
        "SMPI (size-dependent factors), CM02 (plain fluid), LV08, raw",
    ),
    (
        "network/latency-factor",
        "",
        "piecewise latency factor \"B:v;...\" (empty: the model's)",
    ),
    (
        "network/bandwidth-factor",
        "",
        "piecewise bandwidth factor \"B:v;...\" (empty: the model's)",
    ),
    (
        "network/weight-S",
        "",
        "RTT-unfairness weight (empty: the model's: SMPI 8775, CM02 0)",
    ),
    (
        "network/TCP-gamma",
        "4194304",
        "TCP window bound, bytes (0 disables)",
    ),
    (
        "network/crosstraffic",
        "yes",
        "ACK flows load reverse links at 5%",
    ),
    (
        "network/loopback-bw",
        "10GBps",
        "bandwidth of the model-level loopback",
    ),
    ("network/loopback-lat", "0", "latency of the model-level loopback"),
    ("precision/timing", "1e-9", "timing precision, seconds"),
    ("precision/work-amount", "1e-5", "max-min solver precision"),
    (
        "contexts/stack-size",
        "8192",
        "coroutine stack size per rank, KiB",
    ),
    (
        "contexts/guard-size",
        "1",
        "guard pages below each stack (fixed at 1)",
    ),
    (
        "smpi/host-speed",
        "20000f",
        "flop/s of the machine running the simulation (scales measured time)",
    ),
    (
        "smpi/simulate-computation",
        "yes",
        "inject the measured time of the code between MPI calls",
    ),
    (
        "smpi/cpu-threshold",
        "1e-6",
        "computation bursts shorter than this (s) are not injected",
    ),
    (
        "smpi/async-small-thresh",
        "0",
        "messages below this size (B) are sent eagerly",
    ),
    (
        "smpi/send-is-detached-thresh",
        "65536",
        "sends below this size (B) return at once",
    ),
    ("smpi/os", "0:0:0:0:0", "send overhead \"B:offset:per_byte;...\""),
    (
        "smpi/or",
        "0:0:0:0:0",
        "receive overhead \"B:offset:per_byte;...\"",
    ),
    (
        "smpi/ois",
        "0:0:0:0:0",
        "isend overhead \"B:offset:per_byte;...\"",
    ),
    ("smpi/wtime", "1e-8", "simulated cost of MPI_Wtime, seconds"),
    ("smpi/test", "1e-4", "simulated cost of MPI_Test, seconds"),
    ("smpi/iprobe", "1e-4", "simulated cost of MPI_Iprobe, seconds"),
    (
        "smpi/iprobe-cpu-usage",
        "1",
        "CPU share used by MPI_Iprobe's polling",
    ),
    (
        "smpi/grow-injected-times",
        "yes",
        "Test/Iprobe costs grow with consecutive failures",
    ),
    (
        "smpi/grow-injected-times-scope",
        "global",
        "global (one counter, as SMPI 3.32) or rank",
    ),
    ("smpi/init", "0", "simulated cost of MPI_Init, seconds"),
    (
        "smpi/simcall-yield",
        "yes",
        "ranks yield after posting a request or completing a wait, like SimGrid's simcalls (same-date ordering)",
    ),
    (
        "smpi/event-order",
        "simgrid",
        "order of events due at one date: simgrid (SimGrid 3.32's heap, modified-set order, re-dating and selective solve: the same numbers as SMPI) or fifo (plain order, about 25 % faster on HPL, not SMPI's numbers where costs depend on the order)",
    ),
    (
        "smpi/barrier-finalization",
        "no",
        "MPI_Finalize acts as a barrier",
    ),
    ("smpi/coll-selector", "default", "collective algorithm selector"),
    ("smpi/shared-malloc", "global", "global, local or no"),
    (
        "smpi/shared-malloc-blocksize",
        "1048576",
        "bytes folded onto one block",
    ),
    (
        "smpi/shared-malloc-hugepage",
        "",
        "hugetlbfs mount for folded blocks",
    ),
    (
        "smpi/auto-shared-malloc-thresh",
        "0",
        "fold malloc/calloc/realloc above this size (0: off)",
    ),
    (
        "smpi/auto-shared-malloc-cow-thresh",
        "0",
        "fold copy-on-write the allocations between this size and the auto threshold (0: off)",
    ),
    (
        "smpi/privatization",
        "dlopen",
        "per-rank copies of the program's globals (dlopen or no)",
    ),
    ("smpi/keep-temps", "no", "keep the per-rank copies of the program"),
    ("smpi/tmpdir", "/tmp", "where per-rank copies go"),
    (
        "smpi/display-timing",
        "no",
        "print simulated and real time at the end",
    ),
    (
        "smpi/errors-are-fatal",
        "yes",
        "MPI errors abort unless an error handler says otherwise",
    ),
    (
        "smpi/seed",
        "",
        "seed of every random stream (models, modelled idamax); default: the model set's, else 42",
    ),
    (
        "smpi/blas-mode",
        "auto",
        "auto (model the kernels the model set defines), model, or compute (real BLAS)",
    ),
    (
        "smpi/blas-compute",
        "",
        "comma-separated BLAS kernels always run for real",
    ),
    ("smpi/bcast", "", "force the bcast algorithm"),
    ("smpi/barrier", "", "force the barrier algorithm"),
    ("smpi/reduce", "", "force the reduce algorithm"),
    ("smpi/allreduce", "", "force the allreduce algorithm"),
    ("smpi/alltoall", "", "force the alltoall algorithm"),
    ("smpi/alltoallv", "", "force the alltoallv algorithm"),
    ("smpi/gather", "", "force the gather algorithm"),
    ("smpi/allgather", "", "force the allgather algorithm"),
    ("smpi/allgatherv", "", "force the allgatherv algorithm"),
    ("smpi/scatter", "", "force the scatter algorithm"),
    ("smpi/reduce_scatter", "", "force the reduce_scatter algorithm"),
];

const ALIASES: &[(&str, &str)] = &[
    ("smpi/lat-factor", "network/latency-factor"),
    ("smpi/bw-factor", "network/bandwidth-factor"),
    ("surf/precision", "precision/timing"),
    ("maxmin/precision", "precision/work-amount"),
    ("smpi/running-power", "smpi/host-speed"),
];

/// An error in a `--cfg` setting.
#[derive(Debug, thiserror::Error)]
#[error("--cfg={key}:{value}: {problem}")]
pub struct ConfigError {
    pub key: String,
    pub value: String,
    pub problem: String,
}

/// Raw key/value settings, in the order given (later ones win).
#[derive(Debug, Clone, Default)]
pub struct RawConfig {
    values: BTreeMap<String, String>,
}

impl RawConfig {
    /// Sets `key` (or its alias) to `value`. Unknown keys are an error.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), ConfigError> {
        let key = ALIASES.iter().find(|(a, _)| *a == key).map_or(key, |(_, k)| k);
        if !KEYS.iter().any(|(k, _, _)| *k == key) {
            return Err(ConfigError {
                key: key.into(),
                value: value.into(),
                problem: "unknown configuration key (smpirun --help-cfg lists them)".into(),
            });
        }
        self.values.insert(key.to_string(), value.to_string());
        Ok(())
    }

    /// Parses `key:value` (the text after `--cfg=`).
    pub fn set_pair(&mut self, pair: &str) -> Result<(), ConfigError> {
        let (k, v) = pair.split_once(':').ok_or_else(|| ConfigError {
            key: pair.into(),
            value: String::new(),
            problem: "expected key:value".into(),
        })?;
        self.set(k.trim(), v.trim())
    }

    /// The value of `key`, or its default.
    pub fn get(&self, key: &str) -> &str {
        if let Some(v) = self.values.get(key) {
            return v;
        }
        KEYS.iter()
            .find(|(k, _, _)| *k == key)
            .map(|(_, d, _)| *d)
            .unwrap_or("")
    }

    /// Whether the user set `key` explicitly.
    pub fn is_set(&self, key: &str) -> bool {
        self.values.contains_key(key)
    }
}

/// Which network model family is used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NetModel {
    Smpi,
    Cm02,
    Lv08,
    Raw,
}

/// Typed settings used by the runtime.
#[derive(Debug, Clone)]
pub struct SmpiConfig {
    pub net_model: NetModel,
    pub lat_factor: PiecewiseFactor,
    pub bw_factor: PiecewiseFactor,
    pub weight_s: f64,
    pub tcp_gamma: f64,
    pub crosstraffic: bool,
    pub precision_work: f64,
    pub timing_precision: f64,
    pub stack_size: usize,
    pub host_speed: f64,
    pub simulate_computation: bool,
    pub cpu_threshold: f64,
    pub async_small_thresh: usize,
    pub detached_thresh: usize,
    pub os: Overhead,
    pub or: Overhead,
    pub ois: Overhead,
    pub wtime: f64,
    pub test: f64,
    pub iprobe: f64,
    pub iprobe_cpu_usage: f64,
    pub grow_injected: bool,
    pub grow_per_rank: bool,
    pub init: f64,
    pub simcall_yield: bool,
    /// `smpi/event-order`: SimGrid's order among same-date events.
    pub simgrid_order: bool,
    pub barrier_finalization: bool,
    pub coll_selector: String,
    pub coll_forced: BTreeMap<String, String>,
    pub privatize: bool,
    pub keep_temps: bool,
    pub tmpdir: String,
    pub display_timing: bool,
    pub errors_fatal: bool,
    pub seed: Option<u64>,
    pub blas_mode: String,
    pub blas_compute: Vec<String>,
    pub shared_malloc: String,
    pub shared_malloc_blocksize: usize,
    pub shared_malloc_hugepage: String,
    pub auto_shared_malloc_thresh: usize,
    pub auto_shared_malloc_cow_thresh: usize,
}

fn err(key: &str, value: &str, problem: impl Into<String>) -> ConfigError {
    ConfigError {
        key: key.into(),
        value: value.into(),
        problem: problem.into(),
    }
}

fn parse_bool(raw: &RawConfig, key: &str) -> Result<bool, ConfigError> {
    let v = raw.get(key);
    match v.to_ascii_lowercase().as_str() {
        "yes" | "on" | "true" | "1" => Ok(true),
        "no" | "off" | "false" | "0" => Ok(false),
        _ => Err(err(key, v, "expected yes/no")),
    }
}

fn parse_f64(raw: &RawConfig, key: &str) -> Result<f64, ConfigError> {
    let v = raw.get(key);
    v.parse::<f64>().map_err(|_| err(key, v, "expected a number"))
}

fn parse_time(raw: &RawConfig, key: &str) -> Result<f64, ConfigError> {
    let v = raw.get(key);
    units::parse_time(v).map_err(|e| err(key, v, e.to_string()))
}

fn parse_usize(raw: &RawConfig, key: &str) -> Result<usize, ConfigError> {
    let v = raw.get(key);
    let x = units::parse_size(v).map_err(|e| err(key, v, e.to_string()))?;
    if x < 0.0 {
        return Err(err(key, v, "must not be negative"));
    }
    Ok(x as usize)
}

impl SmpiConfig {
    /// Validates and types a raw configuration.
    pub fn from_raw(raw: &RawConfig) -> Result<Self, ConfigError> {
        let model_s = raw.get("network/model");
        let net_model = match model_s {
            "SMPI" => NetModel::Smpi,
            "CM02" => NetModel::Cm02,
            "LV08" => NetModel::Lv08,
            "raw" => NetModel::Raw,
            _ => return Err(err("network/model", model_s, "expected SMPI, CM02, LV08 or raw")),
        };
        let (lat_default, bw_default, ws_default) = match net_model {
            NetModel::Smpi => (
                models::network::SMPI_DEFAULT_LAT_FACTOR.to_string(),
                models::network::SMPI_DEFAULT_BW_FACTOR.to_string(),
                8775.0,
            ),
            NetModel::Cm02 | NetModel::Raw => ("1.0".into(), "1.0".into(), 0.0),
            NetModel::Lv08 => ("13.01".into(), "0.97".into(), 20537.0),
        };
        let factor = |key: &str, default: &str| -> Result<PiecewiseFactor, ConfigError> {
            let v = raw.get(key);
            let s = if v.is_empty() { default } else { v };
            PiecewiseFactor::parse_smpi(s).map_err(|e| err(key, s, e.to_string()))
        };
        let overhead = |key: &str| -> Result<Overhead, ConfigError> {
            let v = raw.get(key);
            Overhead::parse_smpi(v).map_err(|e| err(key, v, e.to_string()))
        };
        let weight_s = match raw.get("network/weight-S") {
            "" => ws_default,
            _ => parse_f64(raw, "network/weight-S")?,
        };
        let host_speed_s = raw.get("smpi/host-speed");
        let host_speed = units::parse_speed(host_speed_s)
            .map_err(|e| err("smpi/host-speed", host_speed_s, e.to_string()))?;
        if host_speed <= 0.0 {
            return Err(err("smpi/host-speed", host_speed_s, "must be positive"));
        }
        let stack_kib = parse_usize(raw, "contexts/stack-size")?;
        if stack_kib < 64 {
            return Err(err(
                "contexts/stack-size",
                raw.get("contexts/stack-size"),
                "at least 64 KiB",
            ));
        }
        let async_small_thresh = parse_usize(raw, "smpi/async-small-thresh")?;
        let detached_thresh = parse_usize(raw, "smpi/send-is-detached-thresh")?;
        if async_small_thresh > detached_thresh {
            return Err(err(
                "smpi/async-small-thresh",
                raw.get("smpi/async-small-thresh"),
                "must not exceed smpi/send-is-detached-thresh",
            ));
        }
        let scope = raw.get("smpi/grow-injected-times-scope");
        let grow_per_rank = match scope {
            "global" => false,
            "rank" => true,
            _ => {
                return Err(err(
                    "smpi/grow-injected-times-scope",
                    scope,
                    "expected global or rank",
                ))
            }
        };
        let mut coll_forced = BTreeMap::new();
        for coll in [
            "bcast",
            "barrier",
            "reduce",
            "allreduce",
            "alltoall",
            "alltoallv",
            "gather",
            "allgather",
            "allgatherv",
            "scatter",
            "reduce_scatter",
        ] {
            let v = raw.get(&format!("smpi/{coll}"));
            if !v.is_empty() {
                coll_forced.insert(coll.to_string(), v.to_string());
            }
        }
        let privatization = raw.get("smpi/privatization");
        let privatize = match privatization.to_ascii_lowercase().as_str() {
            "dlopen" | "yes" | "on" | "1" => true,
            "no" | "off" | "0" => false,
            _ => return Err(err("smpi/privatization", privatization, "expected dlopen or no")),
        };
        let shared_malloc = raw.get("smpi/shared-malloc").to_string();
        if !["global", "local", "no", "off", "yes"].contains(&shared_malloc.as_str()) {
            return Err(err(
                "smpi/shared-malloc",
                &shared_malloc,
                "expected global, local or no",
            ));
        }
        let seed_s = raw.get("smpi/seed");
        Ok(SmpiConfig {
            net_model,
            lat_factor: factor("network/latency-factor", &lat_default)?,
            bw_factor: factor("network/bandwidth-factor", &bw_default)?,
            weight_s,
            tcp_gamma: parse_f64(raw, "network/TCP-gamma")?,
            crosstraffic: parse_bool(raw, "network/crosstraffic")? && net_model != NetModel::Raw,
            precision_work: parse_f64(raw, "precision/work-amount")?,
            timing_precision: parse_f64(raw, "precision/timing")?,
            stack_size: stack_kib * 1024,
            host_speed,
            simulate_computation: parse_bool(raw, "smpi/simulate-computation")?,
            cpu_threshold: parse_time(raw, "smpi/cpu-threshold")?,
            async_small_thresh,
            detached_thresh,
            os: overhead("smpi/os")?,
            or: overhead("smpi/or")?,
            ois: overhead("smpi/ois")?,
            wtime: parse_time(raw, "smpi/wtime")?,
            test: parse_time(raw, "smpi/test")?,
            iprobe: parse_time(raw, "smpi/iprobe")?,
            iprobe_cpu_usage: parse_f64(raw, "smpi/iprobe-cpu-usage")?,
            grow_injected: parse_bool(raw, "smpi/grow-injected-times")?,
            grow_per_rank,
            init: parse_time(raw, "smpi/init")?,
            simcall_yield: parse_bool(raw, "smpi/simcall-yield")?,
            simgrid_order: match raw.get("smpi/event-order") {
                "simgrid" => true,
                "fifo" => false,
                other => return Err(err("smpi/event-order", other, "expected simgrid or fifo")),
            },
            barrier_finalization: parse_bool(raw, "smpi/barrier-finalization")?,
            coll_selector: raw.get("smpi/coll-selector").to_string(),
            coll_forced,
            privatize,
            keep_temps: parse_bool(raw, "smpi/keep-temps")?,
            tmpdir: raw.get("smpi/tmpdir").to_string(),
            display_timing: parse_bool(raw, "smpi/display-timing")?,
            errors_fatal: parse_bool(raw, "smpi/errors-are-fatal")?,
            seed: if seed_s.is_empty() {
                None
            } else {
                Some(
                    seed_s
                        .parse()
                        .map_err(|_| err("smpi/seed", seed_s, "expected an integer"))?,
                )
            },
            blas_mode: match raw.get("smpi/blas-mode") {
                m @ ("auto" | "model" | "compute") => m.to_string(),
                m => return Err(err("smpi/blas-mode", m, "expected auto, model or compute")),
            },
            blas_compute: raw
                .get("smpi/blas-compute")
                .split(',')
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect(),
            shared_malloc,
            shared_malloc_blocksize: parse_usize(raw, "smpi/shared-malloc-blocksize")?,
            shared_malloc_hugepage: raw.get("smpi/shared-malloc-hugepage").to_string(),
            auto_shared_malloc_thresh: parse_usize(raw, "smpi/auto-shared-malloc-thresh")?,
            auto_shared_malloc_cow_thresh: parse_usize(raw, "smpi/auto-shared-malloc-cow-thresh")?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_smpi_defaults() {
        let c = SmpiConfig::from_raw(&RawConfig::default()).unwrap();
        assert_eq!(c.net_model, NetModel::Smpi);
        assert_eq!(c.detached_thresh, 65536);
        assert_eq!(c.host_speed, 20000.0);
        assert_eq!(c.weight_s, 8775.0);
        assert!((c.lat_factor.value(17.0) - 2.01467).abs() < 1e-12);
    }

    #[test]
    fn aliases_and_unknown_keys() {
        let mut raw = RawConfig::default();
        raw.set_pair("smpi/bw-factor:0.5").unwrap();
        assert_eq!(raw.get("network/bandwidth-factor"), "0.5");
        let e = raw.set_pair("smpi/no-such-key:1").unwrap_err();
        assert!(e.to_string().contains("smpi/no-such-key"), "{e}");
        assert!(e.to_string().contains("unknown configuration key"), "{e}");
    }

    #[test]
    fn bad_values_name_the_key() {
        let mut raw = RawConfig::default();
        raw.set_pair("smpi/host-speed:fast").unwrap();
        let e = SmpiConfig::from_raw(&raw).unwrap_err();
        assert!(e.to_string().contains("smpi/host-speed"), "{e}");
    }
}
