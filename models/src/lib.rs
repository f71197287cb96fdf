#![doc = include_str!("../README.md")]
#![warn(
    missing_docs,
    missing_debug_implementations,
    unreachable_pub,
    unsafe_op_in_unsafe_fn
)]

pub mod calibrated;
pub mod compute;
pub mod error;
mod file;
pub mod network;
pub mod noise;
pub mod piecewise;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub use calibrated::{percent_of, Extrapolations, KernelExtrapolation, TermExtrapolation};
pub use compute::{ComputeModels, KernelId, Noise, Polynomial, Signature, BLAS_KERNELS};
pub use error::ModelError;
pub use network::{
    NetworkModel, NetworkNoise, Overhead, PiecewiseFactor, SMPI_DEFAULT_BW_FACTOR, SMPI_DEFAULT_LAT_FACTOR,
    SMPI_DEFAULT_OVERHEAD,
};
pub use noise::{stream_key, Mixture, NoiseRng};
pub use piecewise::Piecewise;

/// A complete model set, as loaded from a model file and its includes.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ModelSet {
    /// The network model, `None` when no file of the set has a `[network]` table
    /// (the simulator then keeps its own default).
    pub network: Option<NetworkModel>,
    /// The compute-kernel models (empty when nothing is modelled).
    pub compute: ComputeModels,
    /// The seed of the noise streams (`seed = ...`, default 0).
    pub seed: u64,
    /// Configuration the files set (`[config]`), e.g.
    /// `"smpi/async-small-thresh" → "8133"`, values as strings like `--cfg` values.
    pub config: BTreeMap<String, String>,
    /// The files read, in load order (includes first). Empty for [`from_toml_str`](Self::from_toml_str)
    /// without includes.
    pub files: Vec<PathBuf>,
}

impl ModelSet {
    /// Loads a model file and, recursively, the files it `include`s (paths relative
    /// to the including file).
    pub fn load(path: &Path) -> Result<Self, ModelError> {
        let text = std::fs::read_to_string(path).map_err(|source| ModelError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let canon = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
        Self::build(&text, &path.display().to_string(), Some(path), vec![canon])
    }

    /// Parses a model set from TOML text. `file` names the text in error messages;
    /// `include` paths are resolved relative to `file`'s directory.
    pub fn from_toml_str(text: &str, file: &str) -> Result<Self, ModelError> {
        let path = Path::new(file);
        let canon = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
        let mut set = Self::build(text, file, Some(path), vec![canon])?;
        set.files.retain(|f| f != path);
        Ok(set)
    }

    fn build(
        text: &str,
        file: &str,
        path: Option<&Path>,
        mut stack: Vec<PathBuf>,
    ) -> Result<Self, ModelError> {
        let mut merged = file::Merged::default();
        file::load_tree(text, file, path, &mut stack, &mut merged)?;
        let mut compute = ComputeModels::new();
        for (_, (k, _)) in merged.kernels {
            compute.insert(k);
        }
        Ok(Self {
            network: merged.network.map(|(n, _)| n),
            compute,
            seed: merged.seed.map_or(0, |(s, _)| s),
            config: merged.config.into_iter().map(|(k, (v, _))| (k, v)).collect(),
            files: merged.files,
        })
    }

    /// The config value a file set for `key`, if any.
    pub fn config_value(&self, key: &str) -> Option<&str> {
        self.config.get(key).map(String::as_str)
    }
}

#[cfg(test)]
mod tests;
