//! The calibration summary (`smpi-fit` writes one beside each model file): a
//! small JSON document with the fitted coefficients and performance figures of
//! one calibration, which `smpi-fit nonreg` compares with a history of earlier
//! summaries (thesis ch. 9). The format is documented in the README
//! ("Calibration summary").

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::modelfile::InputRef;

/// The `format` value of this version.
pub const SUMMARY_FORMAT: &str = "smpi-fit-summary/1";

/// One segment of a network kind.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SegmentSummary {
    /// Smallest calibrated size of the segment (B).
    pub from: f64,
    /// Largest calibrated size of the segment (B).
    pub to: f64,
    /// Intercept (s).
    pub intercept: f64,
    /// Slope (s/B).
    pub slope: f64,
}

/// One network kind.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KindSummary {
    /// Segments (sized kinds) in size order.
    #[serde(default)]
    pub segments: Vec<SegmentSummary>,
    /// Breakpoint estimates (B).
    #[serde(default)]
    pub breakpoints: Vec<f64>,
    /// The fitted value (s) for size-free kinds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<f64>,
}

/// The network part.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NetworkSummary {
    /// Eager/detached threshold (B).
    pub detached_thresh: u64,
    /// Nominal latency (s).
    pub latency: f64,
    /// Nominal bandwidth (B/s).
    pub bandwidth: f64,
    /// Per kind.
    pub kinds: BTreeMap<String, KindSummary>,
}

/// One kernel.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelSummary {
    /// Chosen mean model (`M-0`, `M-1`, `M-2`).
    pub model: String,
    /// Chosen noise model.
    pub noise: String,
    /// Calls fitted.
    pub calls: usize,
    /// Σ product / Σ duration (product units per second).
    pub performance: f64,
    /// Coefficients of the full polynomial (M-2, ordinary least squares), so
    /// that summaries stay comparable whatever model was chosen.
    pub full_coefficients: BTreeMap<String, f64>,
    /// Coefficients of the chosen model as written.
    pub coefficients: BTreeMap<String, f64>,
    /// σ model (term → coefficient).
    pub sigma: BTreeMap<String, f64>,
}

/// A calibration summary.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// [`SUMMARY_FORMAT`].
    pub format: String,
    /// The tool and version.
    pub tool: String,
    /// When the fit ran.
    pub fit_date: String,
    /// When the calibration ran (earliest input `date`): the history's order.
    pub calibration_date: String,
    /// Calibrated machine.
    pub host: String,
    /// The inputs.
    pub inputs: Vec<InputRef>,
    /// Scalar factors tested one at a time (p = 1): name → value.
    pub factors: BTreeMap<String, f64>,
    /// Factor groups tested together (multi-factor): group → factor names.
    pub groups: BTreeMap<String, Vec<String>>,
    /// Per kernel.
    #[serde(default)]
    pub kernels: BTreeMap<String, KernelSummary>,
    /// The network.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<NetworkSummary>,
}

impl Summary {
    /// Reads a summary file.
    pub fn read(path: &std::path::Path) -> anyhow::Result<Self> {
        use anyhow::Context as _;
        let text =
            std::fs::read_to_string(path).with_context(|| format!("{}: cannot read it", path.display()))?;
        let s: Summary = serde_json::from_str(&text)
            .with_context(|| format!("{}: not a calibration summary", path.display()))?;
        anyhow::ensure!(
            s.format == SUMMARY_FORMAT,
            "{}: format `{}` is not `{SUMMARY_FORMAT}`",
            path.display(),
            s.format
        );
        Ok(s)
    }
}
