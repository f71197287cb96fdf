//! The model file `smpi-fit` writes (the `models` crate's TOML format,
//! `models/README.md`) and the platform file that goes with it
//! (`platforms/README.md`).
//!
//! A [`ModelFile`] is a document: [`ModelFile::to_toml`] writes it with
//! comments, [`ModelFile::parse`] reads it back (comments aside, every written
//! value is a field), so writing, reading and writing again gives the same
//! bytes. Numbers are written in Rust's shortest round-trip form, so a value
//! read back is the value written, to the bit.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

/// A `[config]` value as written: integer, float or string.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ConfigValue {
    /// An integer (thresholds in bytes).
    Int(i64),
    /// A float (seconds).
    Float(f64),
    /// A string.
    Str(String),
}

/// One input file, in `[about] inputs`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InputRef {
    /// Path as given to `smpi-fit`.
    pub file: String,
    /// SHA-256 of its bytes.
    pub sha256: String,
    /// `network` or `compute`.
    pub kind: String,
    /// The calibrated host (metadata `host`).
    pub host: String,
    /// Seed of its design (metadata `seed`).
    pub seed: String,
    /// Start of its run (metadata `date`).
    pub date: String,
}

/// `[about]`: provenance (free-form for the simulator).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct About {
    /// `smpi-fit <version>`.
    pub tool: String,
    /// When the fit ran (UTC).
    pub date: String,
    /// The command line.
    pub command: String,
    /// The machine the fit ran on.
    pub fit_host: String,
    /// The calibrated machine(s) (metadata `host`).
    pub calibrated_host: String,
    /// Network aggregate fitted (`mean` or `median`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub center: Option<String>,
    /// Seed of the cross-validation folds and the mixture fits.
    pub fit_seed: u64,
    /// Number of cross-validation folds.
    pub cv_folds: u64,
    /// The CSVs read.
    pub inputs: Vec<InputRef>,
    /// Calibrated range of each quantity: `section → quantity → [min, max]`
    /// (network: `size` in bytes; kernels: each variable and the product).
    #[serde(default)]
    pub calibrated: BTreeMap<String, BTreeMap<String, [f64; 2]>>,
}

/// A network noise mixture (`kind = "mixture"`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MixtureDoc {
    /// Always `mixture`.
    pub kind: String,
    /// Weights (sum 1).
    pub weights: Vec<f64>,
    /// Means (s).
    pub means: Vec<f64>,
    /// Standard deviations (s).
    pub sigmas: Vec<f64>,
}

/// One `[[network.range]]` (noise only: the quantities are SMPI strings).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NetRange {
    /// The range covers sizes (payload + 16) above this.
    pub above: f64,
    /// Next range's `above` (documentation).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub upto: Option<f64>,
    /// Noise added to a message of this range.
    pub noise: MixtureDoc,
}

/// `[network]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NetworkSection {
    /// How it was fitted.
    pub source: String,
    /// `smpi/lat-factor` string.
    pub lat_factor: String,
    /// `smpi/bw-factor` string.
    pub bw_factor: String,
    /// `smpi/os` string.
    pub os: String,
    /// `smpi/or` string.
    pub or: String,
    /// `smpi/ois` string.
    pub ois: String,
    /// Per-range noise.
    #[serde(default)]
    pub range: Vec<NetRange>,
}

/// A compute σ: a number (N-1) or a polynomial (N-2).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Sigma {
    /// Constant σ (s).
    Constant(f64),
    /// `term → coefficient`.
    Polynomial(BTreeMap<String, f64>),
}

/// A compute noise.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoiseDoc {
    /// `normal`.
    pub kind: String,
    /// σ.
    pub sigma: Sigma,
}

/// The model keys shared by a kernel table and a host entry.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ModelKeys {
    /// `constant`, `linear` or `polynomial` (empty for a piecewise kernel,
    /// whose ranges carry the models).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub model: String,
    /// M-0 value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<f64>,
    /// M-1 product.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub product: Option<String>,
    /// M-1 slope.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub a: Option<f64>,
    /// M-1 intercept.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub b: Option<f64>,
    /// M-2 coefficients.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub coefficients: Option<BTreeMap<String, f64>>,
    /// Noise (absent: N-0).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub noise: Option<NoiseDoc>,
}

/// A `[[compute.<k>.host]]` entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostEntry {
    /// Host indices.
    pub hosts: Vec<u64>,
    /// What the entry is.
    pub source: String,
    /// The model.
    #[serde(flatten)]
    pub keys: ModelKeys,
}

/// A `[compute.<k>]` table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelSection {
    /// `function` for HPL functions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Declared parameters of a function.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub params: Option<Vec<String>>,
    /// How it was fitted.
    pub source: String,
    /// The model.
    #[serde(flatten)]
    pub keys: ModelKeys,
    /// Per-host entries.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub host: Vec<HostEntry>,
    /// The feature a piecewise kernel's ranges are selected on (M′).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub piecewise_on: Option<String>,
    /// How long a call with an empty operand lasts (BLAS's quick return).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub empty: Option<EmptyCall>,
    /// Ranges of a piecewise kernel.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub range: Vec<RangeEntry>,
}

/// `empty = { product = "MNK", seconds = t }`: a call whose product is 0 lasts `t`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EmptyCall {
    /// The product of variables (the kernel's M-1 product).
    pub product: String,
    /// Median duration of the calibration's calls with that product 0.
    pub seconds: f64,
}

/// A `[[compute.<k>.range]]` entry: the model on `from ≤ feature < next from`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RangeEntry {
    /// First value of the feature.
    pub from: f64,
    /// Next range's `from` (documentation).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to: Option<f64>,
    /// What the range is.
    pub source: String,
    /// The model.
    #[serde(flatten)]
    pub keys: ModelKeys,
}

/// A whole model file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelFile {
    /// Noise seed.
    pub seed: u64,
    /// Provenance.
    pub about: About,
    /// Simulator configuration the model implies.
    #[serde(default)]
    pub config: BTreeMap<String, ConfigValue>,
    /// The network model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub network: Option<NetworkSection>,
    /// Kernel models.
    #[serde(default)]
    pub compute: BTreeMap<String, KernelSection>,
}

/// Formats a float so that TOML reads it back as the same float: an integer
/// value as `8133.0`, a moderate one in plain decimal, others in exponent form
/// (Rust prints the shortest digits that round-trip).
pub fn fmt_f64(v: f64) -> String {
    if v == 0.0 {
        return "0.0".into();
    }
    if v.fract() == 0.0 && v.abs() < 1e15 {
        return format!("{v:.1}");
    }
    if (1e-3..1e6).contains(&v.abs()) {
        return format!("{v}");
    }
    format!("{v:e}")
}

fn fmt_str(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

fn fmt_key(k: &str) -> String {
    if !k.is_empty()
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        k.to_string()
    } else {
        fmt_str(k)
    }
}

fn fmt_list(v: &[f64]) -> String {
    format!(
        "[{}]",
        v.iter().map(|x| fmt_f64(*x)).collect::<Vec<_>>().join(", ")
    )
}

fn fmt_table(m: &BTreeMap<String, f64>) -> String {
    format!(
        "{{ {} }}",
        m.iter()
            .map(|(k, v)| format!("{} = {}", fmt_key(k), fmt_f64(*v)))
            .collect::<Vec<_>>()
            .join(", ")
    )
}

fn fmt_config(v: &ConfigValue) -> String {
    match v {
        ConfigValue::Int(i) => i.to_string(),
        ConfigValue::Float(f) => fmt_f64(*f),
        ConfigValue::Str(s) => fmt_str(s),
    }
}

fn write_keys(out: &mut String, k: &ModelKeys) {
    if !k.model.is_empty() {
        let _ = writeln!(out, "model = {}", fmt_str(&k.model));
    }
    if let Some(v) = k.value {
        let _ = writeln!(out, "value = {}", fmt_f64(v));
    }
    if let Some(p) = &k.product {
        let _ = writeln!(out, "product = {}", fmt_str(p));
    }
    if let Some(a) = k.a {
        let _ = writeln!(out, "a = {}", fmt_f64(a));
    }
    if let Some(b) = k.b {
        let _ = writeln!(out, "b = {}", fmt_f64(b));
    }
    if let Some(c) = &k.coefficients {
        let _ = writeln!(out, "coefficients = {}", fmt_table(c));
    }
    if let Some(n) = &k.noise {
        let sigma = match &n.sigma {
            Sigma::Constant(s) => fmt_f64(*s),
            Sigma::Polynomial(m) => fmt_table(m),
        };
        let _ = writeln!(out, "noise = {{ kind = {}, sigma = {sigma} }}", fmt_str(&n.kind));
    }
}

impl ModelFile {
    /// The file's text, with comments.
    pub fn to_toml(&self) -> String {
        let mut o = String::new();
        let a = &self.about;
        let _ = writeln!(
            o,
            "# Model set of {} fitted by {} on {} from {} calibration file(s).",
            a.calibrated_host,
            a.tool,
            a.date,
            a.inputs.len()
        );
        o.push_str(
            "# Units: seconds and bytes. calibrate/README.md says how each value is estimated; the fit\n\
             # report (smpi-fit --report) gives intervals, cross-validation scores and checks.\n\
             # Use it with the platform file written alongside: smpirun -platform P -model M ...\n\n",
        );
        let _ = writeln!(o, "seed = {}\n", self.seed);
        o.push_str("[about]\n");
        for (k, v) in [
            ("tool", &a.tool),
            ("date", &a.date),
            ("command", &a.command),
            ("fit_host", &a.fit_host),
            ("calibrated_host", &a.calibrated_host),
        ] {
            let _ = writeln!(o, "{k} = {}", fmt_str(v));
        }
        if let Some(c) = &a.center {
            let _ = writeln!(o, "center = {}", fmt_str(c));
        }
        let _ = writeln!(o, "fit_seed = {}", a.fit_seed);
        let _ = writeln!(o, "cv_folds = {}", a.cv_folds);
        o.push_str("inputs = [\n");
        for i in &a.inputs {
            let _ = writeln!(
                o,
                "  {{ file = {}, sha256 = {}, kind = {}, host = {}, seed = {}, date = {} }},",
                fmt_str(&i.file),
                fmt_str(&i.sha256),
                fmt_str(&i.kind),
                fmt_str(&i.host),
                fmt_str(&i.seed),
                fmt_str(&i.date)
            );
        }
        o.push_str("]\n");
        if !a.calibrated.is_empty() {
            o.push_str(
                "\n# Calibrated ranges [min, max]: predictions outside them are extrapolations\n\
                 # (smpirun checks every modelled call and warns at the end of a run which kernels\n\
                 # were called outside them, how often and how far; the fit report lists what extrapolates).\n",
            );
        }
        for (section, q) in &a.calibrated {
            let _ = writeln!(o, "[about.calibrated.{}]", fmt_key(section));
            for (k, [lo, hi]) in q {
                let _ = writeln!(o, "{} = {}", fmt_key(k), fmt_list(&[*lo, *hi]));
            }
        }
        if !self.config.is_empty() {
            o.push_str("\n# Simulator settings implied by the calibration (eager/detached switch, call costs).\n[config]\n");
            for (k, v) in &self.config {
                let _ = writeln!(o, "{} = {}", fmt_str(k), fmt_config(v));
            }
        }
        if let Some(n) = &self.network {
            o.push_str(
                "\n# Network: SMPI strings \"B:v;...\" (a chunk applies to sizes in (B, next B]); factors\n\
                 # look up payload + 16 bytes, overheads the payload (offset:per_byte).\n[network]\n",
            );
            let _ = writeln!(o, "source = {}", fmt_str(&n.source));
            for (k, v) in [
                ("lat_factor", &n.lat_factor),
                ("bw_factor", &n.bw_factor),
                ("os", &n.os),
                ("or", &n.or),
                ("ois", &n.ois),
            ] {
                let _ = writeln!(o, "{k} = {}", fmt_str(v));
            }
            for r in &n.range {
                o.push_str("\n[[network.range]]\n");
                let _ = writeln!(o, "above = {}", fmt_f64(r.above));
                if let Some(u) = r.upto {
                    let _ = writeln!(o, "upto = {}", fmt_f64(u));
                }
                let _ = writeln!(
                    o,
                    "noise = {{ kind = {}, weights = {}, means = {}, sigmas = {} }}",
                    fmt_str(&r.noise.kind),
                    fmt_list(&r.noise.weights),
                    fmt_list(&r.noise.means),
                    fmt_list(&r.noise.sigmas)
                );
            }
        }
        for (name, k) in &self.compute {
            let _ = writeln!(o, "\n[compute.{}]", fmt_key(name));
            if let Some(kind) = &k.kind {
                let _ = writeln!(o, "kind = {}", fmt_str(kind));
            }
            if let Some(p) = &k.params {
                let _ = writeln!(
                    o,
                    "params = [{}]",
                    p.iter().map(|s| fmt_str(s)).collect::<Vec<_>>().join(", ")
                );
            }
            let _ = writeln!(o, "source = {}", fmt_str(&k.source));
            if let Some(f) = &k.piecewise_on {
                let _ = writeln!(o, "piecewise_on = {}", fmt_str(f));
            }
            if let Some(e) = &k.empty {
                let _ = writeln!(
                    o,
                    "empty = {{ product = {}, seconds = {} }}",
                    fmt_str(&e.product),
                    fmt_f64(e.seconds)
                );
            }
            write_keys(&mut o, &k.keys);
            for r in &k.range {
                let _ = writeln!(o, "\n[[compute.{}.range]]", fmt_key(name));
                let _ = writeln!(o, "from = {}", fmt_f64(r.from));
                if let Some(t) = r.to {
                    let _ = writeln!(o, "to = {}", fmt_f64(t));
                }
                let _ = writeln!(o, "source = {}", fmt_str(&r.source));
                write_keys(&mut o, &r.keys);
            }
            for h in &k.host {
                let _ = writeln!(o, "\n[[compute.{}.host]]", fmt_key(name));
                let _ = writeln!(
                    o,
                    "hosts = [{}]",
                    h.hosts.iter().map(u64::to_string).collect::<Vec<_>>().join(", ")
                );
                let _ = writeln!(o, "source = {}", fmt_str(&h.source));
                write_keys(&mut o, &h.keys);
            }
        }
        o
    }

    /// Reads a file written by [`to_toml`](Self::to_toml).
    pub fn parse(text: &str) -> Result<Self, toml::de::Error> {
        toml::from_str(text)
    }
}

/// The platform of a calibrated machine: one simulated host per calibrated
/// core, each with a private SPLITDUPLEX link of half the nominal latency and
/// the nominal bandwidth, joined as a cluster (route = up link of the sender +
/// down link of the receiver: latency L, bandwidth B).
#[derive(Debug, Clone, PartialEq)]
pub struct PlatformFile {
    /// The calibrated machine's name.
    pub machine: String,
    /// Host names, in host-index order.
    pub hosts: Vec<String>,
    /// Nominal route latency (s).
    pub latency: f64,
    /// Nominal route bandwidth (B/s).
    pub bandwidth: f64,
    /// Host speed (flop/s), also `smpi/host-speed`.
    pub speed: f64,
    /// What produced it.
    pub tool: String,
}

impl PlatformFile {
    /// The platform's TOML text (platforms/README.md format).
    pub fn to_toml(&self) -> String {
        let mut o = String::new();
        let _ = writeln!(
            o,
            "# Platform of {} written by {}: one host per calibrated core, in core order, so that\n\
             # host index i of the model file's [[compute.<k>.host]] entries is core i. Each host has a\n\
             # private SPLITDUPLEX link; a route is the sender's up link and the receiver's down link:\n\
             # latency {} s (each link half of it) and bandwidth {} B/s, the nominal values the model\n\
             # file's latency and bandwidth factors multiply. Host speed = smpi/host-speed, so measured\n\
             # computation is injected at its measured duration.\n",
            self.machine,
            self.tool,
            fmt_f64(self.latency),
            fmt_f64(self.bandwidth)
        );
        o.push_str("routing = \"cluster\"\n\n[config]\n");
        let speed = fmt_str(&format!("{:e}f", self.speed));
        let _ = writeln!(o, "\"smpi/host-speed\" = {speed}");
        for h in &self.hosts {
            let _ = writeln!(o, "\n[[host]]\nid = {}\nspeed = {speed}", fmt_str(h));
        }
        for h in &self.hosts {
            let _ = writeln!(
                o,
                "\n[[link]]\nid = {}\nbandwidth = {}\nlatency = {}\nsharing_policy = \"SPLITDUPLEX\"",
                fmt_str(&format!("{h}_link")),
                fmt_str(&format!("{:e}Bps", self.bandwidth)),
                fmt_str(&format!("{:e}s", self.latency / 2.0))
            );
        }
        for h in &self.hosts {
            let _ = writeln!(
                o,
                "\n[[host_link]]\nid = {}\nup = {}\ndown = {}",
                fmt_str(h),
                fmt_str(&format!("{h}_link_UP")),
                fmt_str(&format!("{h}_link_DOWN"))
            );
        }
        o
    }
}
