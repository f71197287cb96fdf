//! The study file: what to run and what to vary.
//!
//! A study file is read once into a [`Study`]: settings of the study itself
//! (name, seed, replicas, design, report) and a *base* parameter map. Every
//! parameter of a run — platform generator settings, `--cfg` keys, the model
//! file, HPL's or the program's parameters, the rank count and placement —
//! lives in one flat map ([`Params`]) under a dotted key (`platform.bw`,
//! `cfg.smpi/host-speed`, `hpl.n`, `param.size`, `np`). Axes and listed points
//! are edits of that map (`platform.up[1] = 4` sets one element of a list),
//! so anything the file can say, an axis can vary, and a row can record every
//! parameter as it was. [`PointConfig::from_params`] turns a map back into a
//! checked, typed configuration.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context, Result};
use serde::Deserialize;
use toml::Value;

use crate::hpl::HplParams;
use crate::platform::PlatformSpec;

/// Every parameter of a run, by dotted key (see the module doc).
pub type Params = BTreeMap<String, Value>;

/// A study, read and checked.
#[derive(Clone, Debug)]
pub struct Study {
    /// Short name (file names, Slurm job name).
    pub name: String,
    /// Free text.
    pub description: String,
    /// Seed of the run order, the replicas' perturbations and random placements.
    pub seed: u64,
    /// Directory relative paths are resolved against (the study file's).
    pub base_dir: PathBuf,
    /// The study file as written.
    pub text: String,
    /// Where it was read from.
    pub source: PathBuf,
    /// `smpirun` to use, if the file names one.
    pub smpirun: Option<PathBuf>,
    /// Per-run time limit, seconds.
    pub timeout: f64,
    /// Results directory, if the file names one (relative to `base_dir`).
    pub output: Option<PathBuf>,
    /// Parameters shared by every point before the axes apply.
    pub base: Params,
    /// What varies, in file order (for a listed design: one axis per key the points set).
    pub axes: Vec<Axis>,
    /// Full factorial over the axes, or the listed points.
    pub design: Design,
    /// Replicas of every point.
    pub replicas: Replicas,
    /// Program metrics to extract from stdout (HPL's are built in).
    pub metrics: Vec<MetricSpec>,
    /// What the report plots.
    pub report: ReportSpec,
}

/// One axis: a name and the values it takes.
#[derive(Clone, Debug)]
pub struct Axis {
    /// Name shown in plots and tables (defaults to the key).
    pub name: String,
    /// Unit shown on plot axes, if any.
    pub unit: Option<String>,
    /// Values, in the order given (plots keep it).
    pub values: Vec<AxisValue>,
}

/// One value of an axis: a label and the parameter edits it makes.
#[derive(Clone, Debug, PartialEq)]
pub struct AxisValue {
    /// How the value is shown.
    pub label: String,
    /// `(key, value)` edits of the parameter map, applied in order.
    pub set: Vec<(String, Value)>,
}

/// How points are formed from the axes.
#[derive(Clone, Debug, PartialEq)]
pub enum Design {
    /// Every combination of axis values.
    Factorial,
    /// The listed points: for each, the index of its value on each axis.
    List(Vec<Vec<usize>>),
}

/// What a replica perturbs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Perturb {
    /// Every link latency times `1 + δ`, δ uniform in ±`latency_jitter`, one δ per replica.
    Latency,
    /// `--cfg=smpi/seed:<s>`, one seed per replica (seeds every noise model).
    Seed,
}

/// Replicas of every point.
#[derive(Clone, Debug, PartialEq)]
pub struct Replicas {
    /// Runs per point (≥ 1).
    pub count: u32,
    /// What changes between them.
    pub perturb: Vec<Perturb>,
    /// Half-width of the relative latency jitter.
    pub latency_jitter: f64,
}

/// How to combine the values a program prints for one metric.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Reduce {
    /// The last value printed.
    Last,
    /// The first value printed.
    First,
    /// The largest.
    Max,
    /// The smallest.
    Min,
    /// The mean.
    Mean,
    /// The sum.
    Sum,
}

/// A metric read from the program's `key=value` output.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MetricSpec {
    /// Name in the rows.
    pub name: String,
    /// The `key` of `key=value` tokens (default: the name).
    #[serde(default)]
    pub key: Option<String>,
    /// Only lines whose first word is this.
    #[serde(default)]
    pub line: Option<String>,
    /// How several values combine (default: last).
    #[serde(default)]
    pub reduce: Option<Reduce>,
    /// Unit, for plots.
    #[serde(default)]
    pub unit: Option<String>,
    /// Name for people, for plots and tables (default: the name).
    #[serde(default)]
    pub label: Option<String>,
}

/// What `smpi-study report` plots by default.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReportSpec {
    /// Metric name (default: `gflops` for HPL, else `simulated_time`).
    #[serde(default)]
    pub metric: Option<String>,
    /// Other metrics to plot too.
    #[serde(default)]
    pub also: Vec<String>,
    /// Plot the metric on a log scale.
    #[serde(default)]
    pub log_y: bool,
}

// ----- the file as written -----

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawStudy {
    name: Option<String>,
    #[serde(default)]
    description: String,
    #[serde(default = "default_seed")]
    seed: u64,
    smpirun: Option<PathBuf>,
    timeout: Option<f64>,
    output: Option<PathBuf>,
    design: Option<String>,
    np: Option<Value>,
    placement: Option<Value>,
    model: Option<Value>,
    #[serde(default)]
    cfg: toml::Table,
    hpl: Option<toml::Table>,
    program: Option<RawProgram>,
    platform: Option<toml::Table>,
    replicas: Option<RawReplicas>,
    #[serde(default)]
    axis: Vec<RawAxis>,
    #[serde(default)]
    point: Vec<toml::Table>,
    #[serde(default)]
    report: ReportSpec,
}

fn default_seed() -> u64 {
    1
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawProgram {
    path: Value,
    #[serde(default)]
    args: Vec<Value>,
    #[serde(default)]
    params: toml::Table,
    #[serde(default)]
    metric: Vec<MetricSpec>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawReplicas {
    #[serde(default = "one")]
    count: u32,
    #[serde(default)]
    perturb: Vec<String>,
    latency_jitter: Option<f64>,
}

fn one() -> u32 {
    1
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawAxis {
    name: Option<String>,
    key: Option<String>,
    values: Vec<Value>,
    labels: Option<Vec<String>>,
    unit: Option<String>,
}

/// Default relative half-width of the latency jitter: far below anything a
/// platform description means, yet it moves chaotic runs (HPL by a few %).
pub const DEFAULT_LATENCY_JITTER: f64 = 1e-9;

impl Study {
    /// Reads and checks a study file (every point's configuration is built
    /// once, so a bad value is reported before anything runs).
    pub fn load(path: &Path) -> Result<Study> {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
        let base_dir = path
            .parent()
            .map(|p| {
                if p.as_os_str().is_empty() {
                    Path::new(".")
                } else {
                    p
                }
            })
            .unwrap_or(Path::new("."))
            .to_path_buf();
        let base_dir = std::fs::canonicalize(&base_dir).unwrap_or(base_dir);
        Study::from_str(&text, path, &base_dir)
    }

    /// Parses `text` (read from `source`; relative paths resolve against `base_dir`).
    pub fn from_str(text: &str, source: &Path, base_dir: &Path) -> Result<Study> {
        let file = source.display().to_string();
        let raw: RawStudy = toml::from_str(text).map_err(|e| anyhow!("{file}: {e}"))?;
        let name = raw.name.clone().unwrap_or_else(|| {
            source
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| "study".into())
        });
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
        {
            bail!("{file}: name = {name:?}: use letters, digits, `-`, `_` and `.` only (it names files and jobs)");
        }

        let mut base = Params::new();
        if let Some(v) = raw.np {
            base.insert("np".into(), v);
        }
        if let Some(v) = raw.placement {
            base.insert("placement".into(), v);
        }
        if let Some(v) = raw.model {
            base.insert("model".into(), v);
        }
        for (k, v) in raw.cfg {
            base.insert(format!("cfg.{k}"), v);
        }
        let mut metrics = Vec::new();
        match (raw.hpl, raw.program) {
            (Some(_), Some(_)) => bail!("{file}: give either [hpl] or [program], not both"),
            (None, None) => {
                bail!("{file}: no program: add [program] (path, args) or [hpl] (n, nb, p, q, ...)")
            }
            (Some(h), None) => {
                for (k, v) in h {
                    base.insert(format!("hpl.{k}"), v);
                }
            }
            (None, Some(p)) => {
                base.insert("program.path".into(), p.path);
                base.insert("program.args".into(), Value::Array(p.args));
                for (k, v) in p.params {
                    base.insert(format!("param.{k}"), v);
                }
                metrics = p.metric;
            }
        }
        let platform = raw
            .platform
            .ok_or_else(|| anyhow!("{file}: no [platform] (kind = \"fat_tree\", \"torus\", ...)"))?;
        for (k, v) in platform {
            base.insert(format!("platform.{k}"), v);
        }

        let replicas = match raw.replicas {
            None => Replicas {
                count: 1,
                perturb: Vec::new(),
                latency_jitter: DEFAULT_LATENCY_JITTER,
            },
            Some(r) => {
                let mut perturb = Vec::new();
                for p in &r.perturb {
                    perturb.push(match p.as_str() {
                        "latency" => Perturb::Latency,
                        "seed" => Perturb::Seed,
                        other => bail!(
                            "{file}: replicas.perturb: unknown {other:?} (expected \"latency\" or \"seed\")"
                        ),
                    });
                }
                perturb.sort();
                perturb.dedup();
                if r.count == 0 {
                    bail!("{file}: replicas.count = 0: a point needs at least one run");
                }
                if r.count > 1 && perturb.is_empty() {
                    bail!(
                        "{file}: replicas.count = {} with nothing perturbed would repeat one deterministic run; \
                         name what each replica perturbs: perturb = [\"latency\"] (tiny jitter on every link \
                         latency) and/or [\"seed\"] (smpi/seed, for noise models)",
                        r.count
                    );
                }
                let jitter = r.latency_jitter.unwrap_or(DEFAULT_LATENCY_JITTER);
                if !(jitter.is_finite() && (0.0..0.5).contains(&jitter)) {
                    bail!("{file}: replicas.latency_jitter = {jitter}: must be in [0, 0.5)");
                }
                Replicas {
                    count: r.count,
                    perturb,
                    latency_jitter: jitter,
                }
            }
        };

        let mut axes = Vec::new();
        for (i, a) in raw.axis.into_iter().enumerate() {
            axes.push(read_axis(&file, i, a)?);
        }
        let design = match raw.design.as_deref().unwrap_or(if raw.point.is_empty() {
            "factorial"
        } else {
            "list"
        }) {
            "factorial" => {
                if !raw.point.is_empty() {
                    bail!("{file}: design = \"factorial\" but the file lists [[point]]s (use design = \"list\")");
                }
                Design::Factorial
            }
            "list" => {
                if !axes.is_empty() {
                    bail!("{file}: design = \"list\": give [[point]] tables, not [[axis]] (the keys the points set become the axes)");
                }
                if raw.point.is_empty() {
                    bail!("{file}: design = \"list\" needs at least one [[point]]");
                }
                let (list_axes, indices) = axes_of_points(&file, raw.point)?;
                axes = list_axes;
                Design::List(indices)
            }
            other => bail!("{file}: design = {other:?}: expected \"factorial\" or \"list\""),
        };
        let mut seen = std::collections::BTreeSet::new();
        for a in &axes {
            if !seen.insert(a.name.clone()) {
                bail!("{file}: two axes are named {:?}", a.name);
            }
        }
        let timeout = raw.timeout.unwrap_or(3600.0);
        if !(timeout.is_finite() && timeout > 0.0) {
            bail!("{file}: timeout = {timeout}: must be a positive number of seconds");
        }
        let study = Study {
            name,
            description: raw.description,
            seed: raw.seed,
            base_dir: base_dir.to_path_buf(),
            text: text.to_string(),
            source: source.to_path_buf(),
            smpirun: raw.smpirun,
            timeout,
            output: raw.output,
            base,
            axes,
            design,
            replicas,
            metrics,
            report: raw.report,
        };
        // Every point must make a valid configuration.
        for point in crate::design::points(&study)? {
            PointConfig::from_params(&point.params, &study.base_dir)
                .with_context(|| format!("{file}: point {}", point.describe()))?;
            if study.replicas.perturb.contains(&Perturb::Seed) && point.params.contains_key("cfg.smpi/seed") {
                bail!(
                    "{file}: point {}: cfg.smpi/seed is set but replicas perturb the seed (each replica sets its own): \
                     drop one of the two",
                    point.describe()
                );
            }
        }
        Ok(study)
    }

    /// True if the program is HPL.
    pub fn is_hpl(&self) -> bool {
        self.base.keys().any(|k| k.starts_with("hpl."))
    }

    /// The metric the report plots first.
    pub fn main_metric(&self) -> String {
        self.report.metric.clone().unwrap_or_else(|| {
            if self.is_hpl() {
                "gflops".into()
            } else {
                "simulated_time".into()
            }
        })
    }
}

fn read_axis(file: &str, i: usize, a: RawAxis) -> Result<Axis> {
    let what = || {
        format!(
            "{file}: axis {}",
            a.name
                .clone()
                .or(a.key.clone())
                .unwrap_or_else(|| format!("#{}", i + 1))
        )
    };
    if a.values.is_empty() {
        bail!("{}: no values", what());
    }
    if let Some(l) = &a.labels {
        if l.len() != a.values.len() {
            bail!("{}: {} labels for {} values", what(), l.len(), a.values.len());
        }
    }
    let mut values = Vec::new();
    for (j, v) in a.values.iter().enumerate() {
        let (auto_label, set) = match (&a.key, v) {
            (Some(k), v) => {
                check_key(k).with_context(what)?;
                (value_label(v), vec![(k.clone(), v.clone())])
            }
            (None, Value::Table(t)) => {
                let mut set = Vec::new();
                let mut label = None;
                for (k, v) in t {
                    if k == "label" {
                        label = Some(value_label(v));
                        continue;
                    }
                    check_key(k).with_context(what)?;
                    set.push((k.clone(), v.clone()));
                }
                let auto = label.unwrap_or_else(|| {
                    set.iter()
                        .map(|(k, v)| format!("{k}={}", value_label(v)))
                        .collect::<Vec<_>>()
                        .join(",")
                });
                (auto, set)
            }
            (None, _) => bail!(
                "{}: value {} is not a table: give the axis a `key`, or make each value a table of key = value",
                what(),
                j + 1
            ),
        };
        let label = a.labels.as_ref().map(|l| l[j].clone()).unwrap_or(auto_label);
        values.push(AxisValue { label, set });
    }
    let mut labels = std::collections::BTreeSet::new();
    for v in &values {
        if !labels.insert(v.label.clone()) {
            bail!("{}: two values are labelled {:?}", what(), v.label);
        }
    }
    let name = a.name.or(a.key).unwrap_or_else(|| format!("axis{}", i + 1));
    Ok(Axis {
        name,
        unit: a.unit,
        values,
    })
}

/// Axes of a listed design: one per key set by some point, values in order of appearance.
fn axes_of_points(file: &str, points: Vec<toml::Table>) -> Result<(Vec<Axis>, Vec<Vec<usize>>)> {
    let mut keys: Vec<String> = Vec::new();
    for p in &points {
        for k in p.keys() {
            check_key(k).with_context(|| format!("{file}: [[point]]"))?;
            if !keys.contains(k) {
                keys.push(k.clone());
            }
        }
    }
    let mut axes: Vec<Axis> = keys
        .iter()
        .map(|k| Axis {
            name: k.clone(),
            unit: None,
            values: Vec::new(),
        })
        .collect();
    let mut indices = Vec::new();
    for p in &points {
        let mut idx = Vec::new();
        for (a, k) in axes.iter_mut().zip(&keys) {
            let value = match p.get(k) {
                Some(v) => AxisValue {
                    label: value_label(v),
                    set: vec![(k.clone(), v.clone())],
                },
                // A point that does not set the key keeps the base value.
                None => AxisValue {
                    label: "(base)".into(),
                    set: Vec::new(),
                },
            };
            let pos = match a.values.iter().position(|x| *x == value) {
                Some(pos) => pos,
                None => {
                    a.values.push(value);
                    a.values.len() - 1
                }
            };
            idx.push(pos);
        }
        if indices.contains(&idx) {
            bail!("{file}: two [[point]]s are the same");
        }
        indices.push(idx);
    }
    Ok((axes, indices))
}

/// Checks that `key` names a parameter a study can set.
pub fn check_key(key: &str) -> Result<()> {
    let (path, _) = split_index(key)?;
    let ok = matches!(
        path,
        "np" | "placement" | "model" | "program.path" | "program.args"
    ) || ["cfg.", "hpl.", "param.", "platform."]
        .iter()
        .any(|p| path.strip_prefix(p).is_some_and(|rest| !rest.is_empty()));
    if !ok {
        bail!(
            "unknown parameter key {key:?}: expected np, placement, model, program.path, program.args, \
             cfg.<--cfg key>, hpl.<name>, param.<name> or platform.<name> (a list element: platform.up[1])"
        );
    }
    Ok(())
}

/// `"platform.up[1]"` → `("platform.up", Some(1))`.
fn split_index(key: &str) -> Result<(&str, Option<usize>)> {
    match key.strip_suffix(']').and_then(|k| k.rsplit_once('[')) {
        Some((path, idx)) => {
            let i: usize = idx
                .parse()
                .map_err(|_| anyhow!("bad index in {key:?}: `[{idx}]` (expected a number from 0)"))?;
            Ok((path, Some(i)))
        }
        None => Ok((key, None)),
    }
}

/// The value that removes a parameter: `"platform.levels" = "unset"`.
pub const UNSET: &str = "unset";

/// Applies one edit to a parameter map (`key[i]` sets one list element, `"unset"` removes the key).
pub fn apply(params: &mut Params, key: &str, value: &Value) -> Result<()> {
    let (path, index) = split_index(key)?;
    match index {
        // `"unset"` removes a base parameter (a topology kind that does not take it).
        None if value.as_str() == Some(UNSET) => {
            params.remove(path);
        }
        None => {
            params.insert(path.to_string(), value.clone());
        }
        Some(i) => {
            let levels = params
                .get("platform.levels")
                .and_then(Value::as_integer)
                .unwrap_or(0)
                .max(0) as usize;
            let entry = params.get(path).cloned().ok_or_else(|| {
                anyhow!("{key}: `{path}` is not set in the study, so it has no element {i}")
            })?;
            let mut list = match entry {
                Value::Array(a) => a,
                // A single value meant for every level becomes a list of it.
                scalar => vec![scalar; levels.max(i + 1)],
            };
            if i >= list.len() {
                bail!("{key}: `{path}` has {} elements (indices from 0)", list.len());
            }
            list[i] = value.clone();
            params.insert(path.to_string(), Value::Array(list));
        }
    }
    Ok(())
}

/// A short text for a value: strings without quotes, lists with commas.
pub fn value_label(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(a) => a.iter().map(value_label).collect::<Vec<_>>().join(","),
        Value::Table(t) => t
            .iter()
            .map(|(k, v)| format!("{k}={}", value_label(v)))
            .collect::<Vec<_>>()
            .join(","),
        other => other.to_string(),
    }
}

/// A value as a string for a command line (`--cfg`, program arguments).
pub fn value_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Boolean(b) => if *b { "yes" } else { "no" }.into(),
        other => value_label(other),
    }
}

/// How ranks are placed on hosts.
#[derive(Clone, Debug, PartialEq)]
pub enum Placement {
    /// No hostfile: smpirun's default (round-robin over the hosts sorted by name).
    Default,
    /// Rank i on host i (the topology's order), wrapping around.
    Linear,
    /// Ranks spread evenly: rank i on host ⌊i·H/np⌋.
    Spread,
    /// A seeded random permutation of the hosts.
    Random,
    /// A hostfile of the user's.
    Hostfile(PathBuf),
}

/// What runs: HPL (HPL.dat generated per point) or any program.
#[derive(Clone, Debug, PartialEq)]
pub enum Launch {
    /// `xhpl`, with the HPL.dat of these parameters in its directory.
    Hpl {
        /// The xhpl binary.
        xhpl: PathBuf,
        /// HPL.dat settings.
        params: HplParams,
    },
    /// A program and its arguments (`{name}` replaced by `param.<name>`).
    Program {
        /// The program (built by smpicc).
        path: PathBuf,
        /// Its arguments.
        args: Vec<String>,
    },
}

/// A point's configuration, typed and checked.
#[derive(Clone, Debug, PartialEq)]
pub struct PointConfig {
    /// What runs.
    pub launch: Launch,
    /// Number of ranks.
    pub np: u32,
    /// Where ranks go.
    pub placement: Placement,
    /// `-model`, if any.
    pub model: Option<PathBuf>,
    /// `--cfg` keys and values, in key order.
    pub cfg: Vec<(String, String)>,
    /// The platform generator's settings.
    pub platform: PlatformSpec,
}

fn resolve(base: &Path, p: &str) -> PathBuf {
    let p = Path::new(p);
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        base.join(p)
    }
}

impl PointConfig {
    /// Builds the configuration of a parameter map; relative paths resolve against `base_dir`.
    pub fn from_params(params: &Params, base_dir: &Path) -> Result<PointConfig> {
        let mut cfg = Vec::new();
        let mut hpl = toml::Table::new();
        let mut platform = toml::Table::new();
        let mut named = BTreeMap::new();
        for (k, v) in params {
            if let Some(c) = k.strip_prefix("cfg.") {
                cfg.push((c.to_string(), value_text(v)));
            } else if let Some(h) = k.strip_prefix("hpl.") {
                hpl.insert(h.to_string(), v.clone());
            } else if let Some(p) = k.strip_prefix("platform.") {
                platform.insert(p.to_string(), v.clone());
            } else if let Some(p) = k.strip_prefix("param.") {
                named.insert(p.to_string(), value_text(v));
            }
        }
        let platform = PlatformSpec::from_table(platform, base_dir).context("[platform]")?;
        let launch = if !hpl.is_empty() {
            let xhpl = match hpl.remove("xhpl") {
                Some(Value::String(s)) => resolve(base_dir, &s),
                Some(other) => bail!("hpl.xhpl = {other}: expected a path"),
                None => bail!("hpl.xhpl: the xhpl binary is required (e.g. \"../apps/hpl/build/xhpl\")"),
            };
            Launch::Hpl {
                xhpl,
                params: HplParams::from_table(hpl).context("[hpl]")?,
            }
        } else {
            let path = match params.get("program.path") {
                Some(Value::String(s)) => resolve(base_dir, s),
                Some(other) => bail!("program.path = {other}: expected a path"),
                None => bail!("program.path is required"),
            };
            let raw_args = match params.get("program.args") {
                Some(Value::Array(a)) => a.clone(),
                None => Vec::new(),
                Some(other) => bail!("program.args = {other}: expected a list"),
            };
            let mut args = Vec::new();
            for a in &raw_args {
                args.push(substitute(&value_text(a), &named)?);
            }
            Launch::Program { path, args }
        };
        let np = match params.get("np") {
            Some(Value::Integer(n)) if *n >= 1 && *n <= u32::MAX as i64 => *n as u32,
            Some(other) => bail!("np = {other}: expected a positive integer"),
            None => match &launch {
                Launch::Hpl { params, .. } => params.p * params.q,
                Launch::Program { .. } => bail!("np: the number of ranks is required"),
            },
        };
        if let Launch::Hpl { params: h, .. } = &launch {
            if np < h.p * h.q {
                bail!(
                    "np = {np} is less than P×Q = {}×{} (HPL needs P·Q ranks)",
                    h.p,
                    h.q
                );
            }
        }
        let placement = match params.get("placement").map(value_text).as_deref() {
            None | Some("default") => Placement::Default,
            Some("linear") => Placement::Linear,
            Some("spread") => Placement::Spread,
            Some("random") => Placement::Random,
            Some(other) => match other.strip_prefix("hostfile:") {
                Some(p) => Placement::Hostfile(resolve(base_dir, p)),
                None => bail!(
                    "placement = {other:?}: expected \"default\", \"linear\", \"spread\", \"random\" or \"hostfile:<path>\""
                ),
            },
        };
        let model = match params.get("model") {
            None => None,
            Some(Value::String(s)) if s.is_empty() || s == "none" => None,
            Some(Value::String(s)) => Some(resolve(base_dir, s)),
            Some(other) => bail!("model = {other}: expected a path (or \"none\")"),
        };
        Ok(PointConfig {
            launch,
            np,
            placement,
            model,
            cfg,
            platform,
        })
    }
}

/// Replaces `{name}` by the parameter `param.<name>`; `{{` and `}}` are literal braces.
fn substitute(text: &str, named: &BTreeMap<String, String>) -> Result<String> {
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find(['{', '}']) {
        out.push_str(&rest[..i]);
        let c = rest.as_bytes()[i];
        let after = &rest[i + 1..];
        if after.as_bytes().first() == Some(&c) {
            out.push(c as char);
            rest = &after[1..];
            continue;
        }
        if c == b'}' {
            bail!("argument {text:?}: unmatched `}}` (write `}}}}` for a brace)");
        }
        let end = after
            .find('}')
            .ok_or_else(|| anyhow!("argument {text:?}: unclosed `{{`"))?;
        let name = &after[..end];
        let v = named.get(name).ok_or_else(|| {
            anyhow!("argument {text:?}: no parameter `{name}` (set param.{name} or [program.params] {name})")
        })?;
        out.push_str(v);
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_edits_set_one_element() {
        let mut p = Params::new();
        p.insert("platform.levels".into(), Value::Integer(2));
        p.insert(
            "platform.up".into(),
            Value::Array(vec![Value::Integer(1), Value::Integer(16)]),
        );
        p.insert("platform.bw".into(), Value::String("10GBps".into()));
        apply(&mut p, "platform.up[1]", &Value::Integer(4)).unwrap();
        assert_eq!(value_label(&p["platform.up"]), "1,4");
        apply(&mut p, "platform.bw[0]", &Value::String("1GBps".into())).unwrap();
        assert_eq!(value_label(&p["platform.bw"]), "1GBps,10GBps");
        assert!(apply(&mut p, "platform.up[2]", &Value::Integer(1)).is_err());
        assert!(apply(&mut p, "platform.nope[0]", &Value::Integer(1)).is_err());
        apply(&mut p, "platform.up", &Value::String("unset".into())).unwrap();
        assert!(!p.contains_key("platform.up"));
    }

    #[test]
    fn keys_are_checked() {
        for k in [
            "np",
            "cfg.smpi/host-speed",
            "hpl.n",
            "platform.up[1]",
            "param.size",
            "model",
        ] {
            check_key(k).unwrap();
        }
        for k in ["nps", "cfg.", "platform.up[x]", "foo.bar"] {
            assert!(check_key(k).is_err(), "{k}");
        }
    }

    #[test]
    fn arguments_take_parameters() {
        let mut named = BTreeMap::new();
        named.insert("size".to_string(), "64k".to_string());
        assert_eq!(substitute("-s{size}", &named).unwrap(), "-s64k");
        assert_eq!(substitute("{{x}}", &named).unwrap(), "{x}");
        assert!(substitute("{nope}", &named).is_err());
        assert!(substitute("{size", &named).is_err());
    }
}
