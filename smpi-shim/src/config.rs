//! `--cfg=key:value` settings, with SMPI's key names and defaults, and where a run's values come
//! from.
//!
//! - `keys` (`config/keys.rs`): the key table. Each key is declared once, as SimGrid declares a `config::Flag`:
//!   name, older aliases, default, one help line, and the parser that puts its typed value into
//!   [`SmpiConfig`]. Parsing, the defaults and `smpirun --help-cfg` all read that table.
//! - `given` (`config/given.rs`): the values given for a run, each with its [`Source`], and the one precedence
//!   chain: built-in default < platform file `<config>` < model file (`-model`) < command line
//!   (`--cfg`). A value from a higher source replaces one from a lower source whatever the order
//!   they are read in; within one source the last value given wins.
//!
//! A model file gives values two ways, at the same level: its `[config]` table holds `--cfg`
//! keys and values, and its `[network]` table holds the network model's five quantities, which
//! are the values of `network/latency-factor`, `network/bandwidth-factor`, `smpi/os`, `smpi/or`
//! and `smpi/ois` ([`resolve`]).
//!
//! Unknown keys are an error, as in SimGrid, wherever they are given; so is a value a key cannot
//! take. Old SimGrid names are accepted as aliases (`smpi/lat-factor` → `network/latency-factor`,
//! `surf/precision` → `precision/timing`, ...).

mod given;
mod keys;
mod unsupported;

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

use models::network::{Overhead, PiecewiseFactor};
use models::ModelSet;
use simcore::platform::{ConfigEntry, ModelLoopback, Platform};

pub(crate) use given::{edit_distance, RawConfig};
pub(crate) use keys::{help, KEYS};

/// Where a configuration value comes from. The variants are in precedence order, lowest first
/// ([`Source::precedence`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Source {
    /// The key's default in [`KEYS`].
    Default,
    /// A platform file's `<config>`; `place` is `file:line:column`.
    Platform { place: String },
    /// A model file; `place` is the file and its table, `models/x.toml: [config]`.
    ModelFile { place: String },
    /// `--cfg=key:value` (and the flags that stand for one: `-tmpdir`, `-keep-temps`, ...).
    CommandLine,
}

impl Source {
    /// The one precedence chain: a value from a source of higher precedence replaces a value
    /// from one of lower precedence.
    pub(crate) fn precedence(&self) -> u8 {
        match self {
            Source::Default => 0,
            Source::Platform { .. } => 1,
            Source::ModelFile { .. } => 2,
            Source::CommandLine => 3,
        }
    }
}

/// How an error message starts: `--cfg=` on the command line, the place elsewhere.
impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Default => f.write_str("built-in default "),
            Source::Platform { place } => write!(f, "{place}: <config> "),
            Source::ModelFile { place } => write!(f, "{place} "),
            Source::CommandLine => f.write_str("--cfg="),
        }
    }
}

/// A key that does not exist, or a value its key cannot take.
#[derive(Debug, thiserror::Error)]
#[error("{}", printable(&format!("{}{}:{}: {}", .given_in, .key, .value, .problem)))]
pub(crate) struct ConfigError {
    /// The key: its declared name, or the name as given when no key has it.
    pub key: String,
    /// The value as given.
    pub value: String,
    /// What is wrong, in a sentence.
    pub problem: String,
    /// Where the key was given.
    pub given_in: Source,
}

/// `text` with its control characters (a newline, a carriage return given on a command line or
/// in a file) escaped, so that a message stays on one line.
pub(crate) fn printable(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// Which network model family is used (`network/model`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NetModel {
    Smpi,
    Cm02,
    Lv08,
    Raw,
}

impl NetModel {
    /// The latency factor when `network/latency-factor` is empty.
    fn latency_factor(self) -> &'static str {
        match self {
            NetModel::Smpi => models::network::SMPI_DEFAULT_LAT_FACTOR,
            NetModel::Cm02 | NetModel::Raw => "1.0",
            NetModel::Lv08 => "13.01",
        }
    }

    /// The bandwidth factor when `network/bandwidth-factor` is empty.
    fn bandwidth_factor(self) -> &'static str {
        match self {
            NetModel::Smpi => models::network::SMPI_DEFAULT_BW_FACTOR,
            NetModel::Cm02 | NetModel::Raw => "1.0",
            NetModel::Lv08 => "0.97",
        }
    }

    /// The RTT-unfairness weight when `network/weight-S` is empty.
    fn weight_s(self) -> f64 {
        match self {
            NetModel::Smpi => 8775.0,
            NetModel::Cm02 | NetModel::Raw => 0.0,
            NetModel::Lv08 => 20537.0,
        }
    }
}

/// Typed settings used by the run. Each field is set by the key(s) of [`KEYS`] named in its
/// doc; the defaults are in that table (`smpirun --help-cfg`).
#[derive(Debug, Clone)]
pub(crate) struct SmpiConfig {
    /// `network/model`.
    pub net_model: NetModel,
    /// `network/latency-factor` (empty: the network model's).
    pub lat_factor: PiecewiseFactor,
    /// `network/bandwidth-factor` (empty: the network model's).
    pub bw_factor: PiecewiseFactor,
    /// `network/weight-S` (empty: the network model's).
    pub weight_s: f64,
    /// `network/TCP-gamma`, bytes.
    pub tcp_gamma: f64,
    /// `network/crosstraffic` (always off with `network/model:raw`).
    pub crosstraffic: bool,
    /// `network/loopback-bw`, B/s: the network model's loopback link ([`Self::model_loopback`]).
    pub loopback_bw: f64,
    /// `network/loopback-lat`, seconds.
    pub loopback_lat: f64,
    /// `precision/work-amount`.
    pub precision_work: f64,
    /// `precision/timing`, seconds.
    pub timing_precision: f64,
    /// `contexts/stack-size`, in bytes (the key is in KiB).
    pub stack_size: usize,
    /// `smpi/host-speed`, flop/s.
    pub host_speed: f64,
    /// Whether `smpi/host-speed` was given (platform, model file or command line) rather than
    /// left at SimGrid's default.
    pub host_speed_given: bool,
    /// `smpi/simulate-computation`.
    pub simulate_computation: bool,
    /// `smpi/cpu-threshold`, seconds.
    pub cpu_threshold: f64,
    /// `smpi/async-small-thresh`, bytes.
    pub async_small_thresh: usize,
    /// `smpi/send-is-detached-thresh`, bytes.
    pub detached_thresh: usize,
    /// `smpi/os`.
    pub os: Overhead,
    /// `smpi/or`.
    pub or: Overhead,
    /// `smpi/ois`.
    pub ois: Overhead,
    /// `smpi/wtime`, seconds.
    pub wtime: f64,
    /// `smpi/test`, seconds.
    pub test: f64,
    /// `smpi/iprobe`, seconds.
    pub iprobe: f64,
    /// `smpi/iprobe-cpu-usage`.
    pub iprobe_cpu_usage: f64,
    /// `smpi/grow-injected-times`.
    pub grow_injected: bool,
    /// `smpi/grow-injected-times-scope` is `rank`.
    pub grow_per_rank: bool,
    /// `smpi/probe-sees` is `progressed`: a non-blocking probe sees only the
    /// messages that arrived before the rank's previous progressing MPI call
    /// (Open MPI's ob1 matches a probe before it progresses), instead of
    /// every message sent so far (SimGrid).
    pub probe_sees_progressed: bool,
    /// `smpi/init`, seconds.
    pub init: f64,
    /// `smpi/simcall-yield`.
    pub simcall_yield: bool,
    /// `smpi/event-order` is `simgrid`: SimGrid's order among same-date events.
    pub simgrid_order: bool,
    /// `plugin:host_energy`: SimGrid's host energy plugin (`simcore::energy`).
    pub host_energy: bool,
    /// `path`: directories where the platform's profile files are looked up.
    pub path: Vec<std::path::PathBuf>,
    /// `smpi/finalization-barrier` (SimGrid 3.32's name; `smpi/barrier-finalization` also accepted).
    pub barrier_finalization: bool,
    /// `smpi/coll-selector`.
    pub coll_selector: String,
    /// `smpi/<collective>` (`smpi/bcast`, ...): collective name → forced algorithm.
    pub coll_forced: BTreeMap<String, String>,
    /// `smpi/privatization`.
    pub privatize: bool,
    /// `smpi/keep-temps`.
    pub keep_temps: bool,
    /// `smpi/tmpdir`.
    pub tmpdir: String,
    /// `smpi/display-timing`.
    pub display_timing: bool,
    /// `tracing`: record a timeline.
    pub tracing: bool,
    /// `tracing/filename`.
    pub tracing_filename: String,
    /// `tracing/format`: `auto`, `json` or `paje`.
    pub tracing_format: String,
    /// `tracing/smpi/computing`.
    pub tracing_computing: bool,
    /// `tracing/smpi/internals`: collectives' messages on the timeline.
    pub tracing_internals: bool,
    /// `tracing/smpi/display-sizes`: sizes on Paje states and links.
    pub tracing_display_sizes: bool,
    /// `tracing/smpi/group`: ranks grouped by host on the timeline.
    pub tracing_grouped: bool,
    /// `tracing/precision`: digits of Paje dates.
    pub tracing_precision: usize,
    /// `tracing/comment`.
    pub tracing_comment: String,
    /// `tracing/comment-file`.
    pub tracing_comment_file: String,
    /// `tracing/smpi/format:TI`: a time-independent trace instead of a timeline.
    pub tracing_ti: bool,
    /// `tracing/smpi/format/ti-one-file`.
    pub tracing_ti_one_file: bool,
    /// `tracing/smpi/sleeping`.
    pub tracing_sleeping: bool,
    /// `smpi/list-leaks`: handles never freed listed per rank (0: counted only).
    pub list_leaks: usize,
    /// `smpi/pedantic` (SimGrid's switch for costly checks; ours are always on).
    pub pedantic: bool,
    /// `smpi/errors-are-fatal`.
    pub errors_fatal: bool,
    /// `smpi/seed` (empty: none).
    pub seed: Option<u64>,
    /// `smpi/blas-mode`: `auto`, `model` or `compute`.
    pub blas_mode: String,
    /// `smpi/blas-compute`, split at commas.
    pub blas_compute: Vec<String>,
    /// `smpi/shared-malloc`.
    pub shared_malloc: String,
    /// `smpi/shared-malloc-blocksize`, bytes.
    pub shared_malloc_blocksize: usize,
    /// `smpi/shared-malloc-hugepage`.
    pub shared_malloc_hugepage: String,
    /// `smpi/auto-shared-malloc-thresh`, bytes.
    pub auto_shared_malloc_thresh: usize,
    /// `smpi/auto-shared-malloc-cow-thresh`, bytes.
    pub auto_shared_malloc_cow_thresh: usize,
}

impl SmpiConfig {
    /// Types a raw configuration: every key of [`KEYS`], in table order, from its given value
    /// or its default; then the rules between keys.
    pub(crate) fn from_raw(raw: &RawConfig) -> Result<Self, ConfigError> {
        let mut cfg = SmpiConfig::placeholders();
        for key in KEYS {
            let value = raw.get(key.name);
            key.apply(&mut cfg, value).map_err(|problem| ConfigError {
                key: key.name.to_string(),
                value: value.to_string(),
                problem,
                given_in: raw.source(key.name),
            })?;
        }
        if cfg.async_small_thresh > cfg.detached_thresh {
            let key = "smpi/async-small-thresh";
            return Err(ConfigError {
                key: key.to_string(),
                value: raw.get(key).to_string(),
                problem: "must not exceed smpi/send-is-detached-thresh".to_string(),
                given_in: raw.source(key),
            });
        }
        Ok(cfg)
    }

    /// The values [`from_raw`](Self::from_raw) starts from, all overwritten by the keys (each
    /// field has a key): not defaults. Most numbers are NaN, so that a field no key sets would show.
    fn placeholders() -> Self {
        SmpiConfig {
            net_model: NetModel::Smpi,
            lat_factor: PiecewiseFactor::constant(f64::NAN),
            bw_factor: PiecewiseFactor::constant(f64::NAN),
            weight_s: f64::NAN,
            tcp_gamma: f64::NAN,
            crosstraffic: false,
            loopback_bw: f64::NAN,
            loopback_lat: f64::NAN,
            precision_work: f64::NAN,
            timing_precision: f64::NAN,
            stack_size: 0,
            host_speed: f64::NAN,
            host_speed_given: false,
            simulate_computation: false,
            cpu_threshold: f64::NAN,
            async_small_thresh: 0,
            detached_thresh: 0,
            os: Overhead::zero(),
            or: Overhead::zero(),
            ois: Overhead::zero(),
            wtime: f64::NAN,
            test: f64::NAN,
            iprobe: f64::NAN,
            iprobe_cpu_usage: f64::NAN,
            grow_injected: false,
            grow_per_rank: false,
            probe_sees_progressed: false,
            init: f64::NAN,
            simcall_yield: false,
            simgrid_order: false,
            host_energy: false,
            path: Vec::new(),
            barrier_finalization: false,
            coll_selector: String::new(),
            coll_forced: BTreeMap::new(),
            privatize: false,
            keep_temps: false,
            tmpdir: String::new(),
            display_timing: false,
            list_leaks: 0,
            tracing: false,
            tracing_filename: String::new(),
            tracing_format: String::new(),
            tracing_computing: false,
            tracing_internals: false,
            tracing_display_sizes: false,
            tracing_grouped: false,
            tracing_precision: 0,
            tracing_comment: String::new(),
            tracing_comment_file: String::new(),
            tracing_ti: false,
            tracing_ti_one_file: false,
            tracing_sleeping: false,
            pedantic: false,
            errors_fatal: false,
            seed: None,
            blas_mode: String::new(),
            blas_compute: Vec::new(),
            shared_malloc: String::new(),
            shared_malloc_blocksize: 0,
            shared_malloc_hugepage: String::new(),
            auto_shared_malloc_thresh: 0,
            auto_shared_malloc_cow_thresh: 0,
        }
    }

    /// The network model's loopback link, for the platform loader.
    pub(crate) fn model_loopback(&self) -> ModelLoopback {
        ModelLoopback {
            bandwidth: self.loopback_bw,
            latency: self.loopback_lat,
        }
    }
}

/// A run's configuration from all its sources: the platform file's `<config>` entries, the
/// model file (`-model`) if any, and the command line's `key:value` pairs, each value ranked by
/// [`Source::precedence`].
///
/// The model file's `[network]` quantities are the values of their five keys, written back in
/// SMPI syntax (their `Display` round-trips exactly, as the models crate tests).
pub(crate) fn resolve(
    platform: &[ConfigEntry],
    model: Option<(&Path, &ModelSet)>,
    command_line: &[String],
) -> Result<SmpiConfig, ConfigError> {
    let mut raw = RawConfig::default();
    for entry in platform {
        let place = entry.place.clone();
        raw.set(&entry.key, &entry.value, Source::Platform { place })?;
    }
    if let Some((path, set)) = model {
        let place = format!("{}: [config]", path.display());
        for (key, value) in &set.config {
            raw.set(key, value, Source::ModelFile { place: place.clone() })?;
        }
        if let Some(net) = &set.network {
            let place = format!("{}: [network]", path.display());
            for (key, value) in [
                ("network/latency-factor", net.lat_factor.to_string()),
                ("network/bandwidth-factor", net.bw_factor.to_string()),
                ("smpi/os", net.os.to_string()),
                ("smpi/or", net.or.to_string()),
                ("smpi/ois", net.ois.to_string()),
            ] {
                raw.set(key, &value, Source::ModelFile { place: place.clone() })?;
            }
        }
    }
    for pair in command_line {
        raw.set_pair(pair)?;
    }
    let mut cfg = SmpiConfig::from_raw(&raw)?;
    cfg.host_speed_given = raw.is_given("smpi/host-speed");
    Ok(cfg)
}

/// Host properties that SMPI reads as a host's own value of a key (`<prop id="smpi/os" .../>`
/// inside a `<host>`, likewise `smpi/or` and `smpi/ois`). Per-host overheads are not implemented:
/// each such key gets a warning, naming the hosts, rather than being dropped in silence.
pub(crate) fn unapplied_host_properties(platform: &Platform) -> Vec<String> {
    ["smpi/os", "smpi/or", "smpi/ois"]
        .iter()
        .filter_map(|key| {
            let hosts: Vec<&str> = platform
                .hosts
                .iter()
                .filter(|h| h.properties.iter().any(|(k, _)| k == key))
                .map(|h| h.name.as_str())
                .collect();
            let (first, more) = (hosts.first()?, hosts.len() - 1);
            let which = match more {
                0 => format!("host {first}"),
                _ => format!("host {first} and {more} more"),
            };
            Some(format!(
                "{which}: property {key} is not applied (per-host overheads are not implemented); \
                 the run uses the global {key}"
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests;

#[cfg(test)]
pub(crate) mod fuzz;
