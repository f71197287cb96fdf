//! Entry points: load a [`Platform`] from a file or a string.

use std::path::Path;

use super::error::{Loc, PlatformError, PlatformErrorKind};
use super::{build, toml_format, xml, LinkId, Platform};

impl Platform {
    /// Loads a platform file: SimGrid v4 XML if the name ends with `.xml`, our TOML format if it
    /// ends with `.toml`.
    ///
    /// Errors name the file, the line and the problem (see [`PlatformError`]).
    pub fn from_file(path: &Path) -> Result<Platform, PlatformError> {
        let file = path.display().to_string();
        let err = |kind| PlatformError::new(&file, Loc::default(), kind);
        let extension = path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase);
        let parse: fn(&str, &str) -> Result<Platform, PlatformError> = match extension.as_deref() {
            Some("xml") => Platform::from_xml_str,
            Some("toml") => Platform::from_toml_str,
            _ => return Err(err(PlatformErrorKind::UnknownExtension)),
        };
        let text = std::fs::read_to_string(path).map_err(|e| err(PlatformErrorKind::Io(e)))?;
        parse(&text, &file)
    }

    /// Loads a SimGrid v4 XML platform from `text`; `file_name` is only used in error messages.
    pub fn from_xml_str(text: &str, file_name: &str) -> Result<Platform, PlatformError> {
        build::build(xml::parse(text, file_name)?, file_name)
    }

    /// Loads a TOML platform from `text`; `file_name` is only used in error messages.
    pub fn from_toml_str(text: &str, file_name: &str) -> Result<Platform, PlatformError> {
        build::build(toml_format::parse(text, file_name)?, file_name)
    }

    /// The link called `name` (for a SPLITDUPLEX link, name one half: `<name>_UP` or `<name>_DOWN`).
    pub fn link_by_name(&self, name: &str) -> Option<LinkId> {
        self.link_index.get(name).copied()
    }
}
