//! Entry points: load a [`Platform`] from a file or a string, in one step or in two.
//!
//! One step ([`Platform::from_file`]) is for a platform on its own: the file's `<config>` is the
//! only configuration there is, so the network model's loopback takes `network/loopback-bw` and
//! `network/loopback-lat` from it. Two steps ([`PlatformFile::read`], then [`PlatformFile::build`])
//! are for a caller with configuration of its own (smpirun's `--cfg` and model files): it reads
//! the file's `<config>` entries first, merges them with its other sources, and gives back the
//! effective values the platform depends on ([`ModelLoopback`]).

use std::path::Path;

use super::error::{Loc, PlatformError, PlatformErrorKind};
use super::spec::{Spec, ZoneKind};
use super::{build, profile, toml_format, units, xml, LinkId, Platform};

/// The network model's loopback link (`__loopback__`, FATPIPE): what a host talking to itself
/// crosses in a zone of declared routes without a route from the host to itself. Its values are
/// SimGrid's `network/loopback-bw` and `network/loopback-lat`, settings of the network model
/// rather than of the platform, so a caller may set them from outside the file.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct ModelLoopback {
    /// Bytes per second (default 10 GB/s, as in SimGrid).
    pub bandwidth: f64,
    /// Seconds (default 0).
    pub latency: f64,
}

impl Default for ModelLoopback {
    fn default() -> Self {
        ModelLoopback {
            bandwidth: 10e9,
            latency: 0.0,
        }
    }
}

/// One `<config>` entry of a platform file (`[config]` in TOML), in file order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigEntry {
    /// The key as written (`id` of the `<prop>`).
    pub key: String,
    /// The value as written.
    pub value: String,
    /// Where the entry is, `file:line:column`, for the caller's messages.
    pub place: String,
}

/// A platform file read and checked, not built yet (the first of two steps, see the module doc).
#[derive(Debug)]
pub struct PlatformFile {
    file: String,
    spec: Spec,
    /// Directories where relative profile files are looked up (SimGrid's `path`).
    search_path: Vec<std::path::PathBuf>,
}

impl PlatformFile {
    /// Reads a platform file: SimGrid v4 XML if the name ends with `.xml`, our TOML format if it
    /// ends with `.toml`.
    ///
    /// Errors name the file, the line and the problem (see [`PlatformError`]).
    pub fn read(path: &Path) -> Result<PlatformFile, PlatformError> {
        let file = path.display().to_string();
        let err = |kind| PlatformError::new(&file, Loc::default(), kind);
        let extension = path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase);
        let parse: fn(&str, &str) -> Result<PlatformFile, PlatformError> = match extension.as_deref() {
            Some("xml") => PlatformFile::from_xml_str,
            Some("toml") => PlatformFile::from_toml_str,
            Some("so" | "cpp" | "cc" | "py") => return Err(err(PlatformErrorKind::ProgramPlatform)),
            _ => return Err(err(PlatformErrorKind::UnknownExtension)),
        };
        let text = std::fs::read_to_string(path).map_err(|e| err(PlatformErrorKind::Io(e)))?;
        parse(&text, &file)
    }

    /// Reads a SimGrid v4 XML platform from `text`; `file_name` is only used in messages.
    pub fn from_xml_str(text: &str, file_name: &str) -> Result<PlatformFile, PlatformError> {
        Ok(PlatformFile {
            search_path: Vec::new(),
            file: file_name.to_string(),
            spec: xml::parse(text, file_name)?,
        })
    }

    /// Reads a TOML platform from `text`; `file_name` is only used in messages.
    pub fn from_toml_str(text: &str, file_name: &str) -> Result<PlatformFile, PlatformError> {
        Ok(PlatformFile {
            search_path: Vec::new(),
            file: file_name.to_string(),
            spec: toml_format::parse(text, file_name)?,
        })
    }

    /// Changes attributes of its clusters as if the file said so (what-if runs without editing
    /// the file, `smpirun -platform-set`): each setting is `<cluster id>.<attribute>` (or
    /// `cluster.<attribute>` for every cluster) and a value, checked as in a file (`bw`, `lat`,
    /// `speed`, `topo_parameters`, `radical`, `core`, ...). An unknown cluster or attribute, or a
    /// bad value, is an error naming the setting.
    pub fn set_cluster_attributes(&mut self, settings: &[(String, String)]) -> Result<(), String> {
        for (target, value) in settings {
            let setting = format!("{target}={value}");
            let Some((cluster, attribute)) = target.rsplit_once('.') else {
                return Err(format!(
                    "{setting}: expected <cluster id>.<attribute>=<value> (or cluster.<attribute>)"
                ));
            };
            let mut matched = 0;
            let in_zones = self.spec.zones.iter_mut().filter_map(|z| match &mut z.kind {
                ZoneKind::Cluster(c) => Some(&mut **c),
                _ => None,
            });
            for c in self.spec.clusters.iter_mut().chain(in_zones) {
                if cluster == "cluster" || c.id == cluster {
                    *c = c
                        .with_attribute(&self.file, attribute, value)
                        .map_err(|e| format!("{setting}: {e}"))?;
                    matched += 1;
                }
            }
            if matched == 0 {
                let in_zones = self.spec.zones.iter().filter_map(|z| match &z.kind {
                    ZoneKind::Cluster(c) => Some(c.id.as_str()),
                    _ => None,
                });
                let ids: Vec<&str> = self
                    .spec
                    .clusters
                    .iter()
                    .map(|c| c.id.as_str())
                    .chain(in_zones)
                    .collect();
                return Err(if ids.is_empty() {
                    format!("{setting}: {} has no cluster", self.file)
                } else {
                    format!(
                        "{setting}: no cluster {cluster:?} in {} (clusters: {})",
                        self.file,
                        ids.join(", ")
                    )
                });
            }
        }
        Ok(())
    }

    /// The file's `<config>` entries, in file order.
    pub fn config(&self) -> Vec<ConfigEntry> {
        self.spec
            .config
            .iter()
            .map(|(key, val)| ConfigEntry {
                key: key.clone(),
                value: val.text.clone(),
                place: format!("{}:{}:{}", self.file, val.loc.line, val.loc.column),
            })
            .collect()
    }

    /// The loopback the file's own `<config>` asks for (the last entry of a key wins), with
    /// SimGrid's defaults for what it does not set.
    pub fn own_loopback(&self) -> Result<ModelLoopback, PlatformError> {
        let default = ModelLoopback::default();
        let bandwidth = self.config_value(
            "network/loopback-bw",
            units::parse_bandwidth,
            "must be positive",
            |v| v > 0.0,
        )?;
        let latency = self.config_value(
            "network/loopback-lat",
            units::parse_time,
            "must be between 0 and 1e9 s",
            |v| (0.0..=super::spec::MAX_LATENCY).contains(&v),
        )?;
        Ok(ModelLoopback {
            bandwidth: bandwidth.unwrap_or(default.bandwidth),
            latency: latency.unwrap_or(default.latency),
        })
    }

    /// Looks relative profile files up in `dirs` too, after the working directory and before the
    /// platform file's own directory (SimGrid's `path` setting).
    pub fn set_search_path(&mut self, dirs: Vec<std::path::PathBuf>) {
        self.search_path = dirs;
    }

    /// Builds the platform; `loopback` is the network model's loopback link, for the zones that
    /// use it.
    pub fn build(mut self, loopback: ModelLoopback) -> Result<Platform, PlatformError> {
        let attached = std::mem::take(&mut self.spec.profiles);
        let mut platform = build::build(self.spec, &self.file, loopback)?;
        platform.profiles = profile::attach(&platform, &attached, &self.file, &self.search_path)?;
        Ok(platform)
    }

    /// A `<config>` value parsed with a unit parser and checked, if the file sets `key`.
    fn config_value(
        &self,
        key: &str,
        parse: fn(&str) -> Result<f64, units::UnitError>,
        reason: &str,
        valid: fn(f64) -> bool,
    ) -> Result<Option<f64>, PlatformError> {
        let Some((_, val)) = self.spec.config.iter().rev().find(|(k, _)| k == key) else {
            return Ok(None);
        };
        let err = |kind| PlatformError::new(&self.file, val.loc, kind);
        let v = parse(&val.text).map_err(|source| {
            err(PlatformErrorKind::Unit {
                key: key.to_string(),
                source,
            })
        })?;
        if !(v.is_finite() && valid(v)) {
            return Err(err(PlatformErrorKind::InvalidValue {
                key: key.to_string(),
                value: val.text.clone(),
                reason: reason.to_string(),
            }));
        }
        Ok(Some(v))
    }
}

impl Platform {
    /// Loads a platform file on its own (its `<config>` sets the network model's loopback): SimGrid
    /// v4 XML if the name ends with `.xml`, our TOML format if it ends with `.toml`.
    ///
    /// Errors name the file, the line and the problem (see [`PlatformError`]).
    pub fn from_file(path: &Path) -> Result<Platform, PlatformError> {
        PlatformFile::read(path)?.build_on_its_own()
    }

    /// Loads a SimGrid v4 XML platform from `text`; `file_name` is only used in error messages.
    pub fn from_xml_str(text: &str, file_name: &str) -> Result<Platform, PlatformError> {
        PlatformFile::from_xml_str(text, file_name)?.build_on_its_own()
    }

    /// Loads a TOML platform from `text`; `file_name` is only used in error messages.
    pub fn from_toml_str(text: &str, file_name: &str) -> Result<Platform, PlatformError> {
        PlatformFile::from_toml_str(text, file_name)?.build_on_its_own()
    }

    /// The link called `name` (for a SPLITDUPLEX link, name one half: `<name>_UP` or `<name>_DOWN`).
    pub fn link_by_name(&self, name: &str) -> Option<LinkId> {
        self.link_index.get(name).copied()
    }
}

impl PlatformFile {
    fn build_on_its_own(self) -> Result<Platform, PlatformError> {
        let loopback = self.own_loopback()?;
        self.build(loopback)
    }
}
