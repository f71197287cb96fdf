//! Errors raised while loading a platform file.
//!
//! Every [`PlatformError`] names the file, the line and column (1-based) where the problem was
//! found, and the problem itself ([`PlatformErrorKind`]):
//!
//! ```text
//! platforms/ft.toml:7:1: bad FAT_TREE topology `2;8,8;1,8`: expected 4 fields separated by `;` ...
//! ```

use super::units::UnitError;

/// A platform file could not be loaded. Always fatal for that file.
#[derive(Debug, thiserror::Error)]
#[error("{}{}", location(.file, *.line, *.column), one_line(.kind))]
pub struct PlatformError {
    /// The file name as given to the loader.
    pub file: String,
    /// 1-based line of the offending element, key or table; 0 when the problem has no position
    /// (the file could not be read, for instance).
    pub line: usize,
    /// 1-based column; 0 when unknown.
    pub column: usize,
    /// What went wrong.
    pub kind: PlatformErrorKind,
}

fn location(file: &str, line: usize, column: usize) -> String {
    match (line, column) {
        (0, _) => format!("{file}: "),
        (l, 0) => format!("{file}:{l}: "),
        (l, c) => format!("{file}:{l}:{c}: "),
    }
}

/// The problem on one line: a newline or other control character quoted from the file (a value,
/// the XML parser's "expected '>' not '\n'") is written escaped.
fn one_line(kind: &PlatformErrorKind) -> String {
    let text = kind.to_string();
    if !text.contains(char::is_control) {
        return text;
    }
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

impl PlatformError {
    pub(crate) fn new(file: &str, loc: Loc, kind: PlatformErrorKind) -> Self {
        PlatformError {
            file: file.to_string(),
            line: loc.line,
            column: loc.column,
            kind,
        }
    }
}

/// A position in a platform file (1-based; 0 = unknown).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Loc {
    pub(crate) line: usize,
    pub(crate) column: usize,
}

impl Loc {
    /// Position of byte `offset` in `text`.
    pub(crate) fn at_offset(text: &str, offset: usize) -> Loc {
        let offset = offset.min(text.len());
        let before = &text.as_bytes()[..offset];
        let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
        let line_start = before.iter().rposition(|&b| b == b'\n').map_or(0, |p| p + 1);
        let column = text[line_start..offset].chars().count() + 1;
        Loc { line, column }
    }
}

/// The problem found in a platform file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PlatformErrorKind {
    /// The file could not be read.
    #[error("cannot read the platform file: {0}")]
    Io(#[source] std::io::Error),
    /// The file name does not end with `.xml` or `.toml`.
    #[error("unknown platform file extension (expected .xml or .toml)")]
    UnknownExtension,
    /// A platform written as a program (SimGrid's C++ `.so` platforms, or their sources).
    #[error(
        "a platform written in C++ or Python (SimGrid's compiled .so platforms) is not supported: \
         describe it in SimGrid's XML (.xml) or our TOML (.toml)"
    )]
    ProgramPlatform,
    /// Not well-formed XML.
    #[error("malformed XML: {0}")]
    MalformedXml(String),
    /// Not valid TOML, or a TOML key/value the format does not accept (unknown key, missing key,
    /// wrong type); the message is the TOML parser's.
    #[error("malformed TOML: {0}")]
    MalformedToml(String),
    /// An XML element that SimGrid does not define.
    #[error("unknown element <{0}>")]
    UnknownElement(String),
    /// A SimGrid element or value that this simulator does not implement.
    #[error("unsupported {what}: {reason}")]
    Unsupported {
        /// The element or attribute value.
        what: String,
        /// Why, and what to use instead.
        reason: String,
    },
    /// An attribute that the element does not have.
    #[error("unknown attribute `{attribute}` on <{element}>")]
    UnknownAttribute {
        /// Element name.
        element: String,
        /// Attribute name.
        attribute: String,
    },
    /// A required attribute (or TOML key) is missing.
    #[error("missing required attribute `{attribute}` on <{element}>")]
    MissingAttribute {
        /// Element name.
        element: String,
        /// Attribute name.
        attribute: String,
    },
    /// A value with a unit could not be parsed.
    #[error("`{key}`: {source}")]
    Unit {
        /// Attribute or key name.
        key: String,
        /// The unit problem.
        #[source]
        source: UnitError,
    },
    /// A value was parsed but is out of range or not one of the allowed words.
    #[error("invalid value `{value}` for `{key}`: {reason}")]
    InvalidValue {
        /// Attribute or key name.
        key: String,
        /// The value as written.
        value: String,
        /// What was expected.
        reason: String,
    },
    /// Cluster topology parameters that do not describe a valid topology.
    #[error("bad {topology} topology `{parameters}`: {reason}")]
    Topology {
        /// `FAT_TREE`, `TORUS` or `DRAGONFLY`.
        topology: String,
        /// The `topo_parameters` string.
        parameters: String,
        /// What does not add up.
        reason: String,
    },
    /// A route names a host or router that was not declared.
    #[error("unknown host or router `{0}`")]
    UnknownHost(String),
    /// A route names a link that was not declared.
    #[error("unknown link `{0}`")]
    UnknownLink(String),
    /// Two hosts, links, routers or routes with the same name.
    #[error("duplicate {what} `{name}`")]
    Duplicate {
        /// "host", "link", "route", ...
        what: String,
        /// The repeated name.
        name: String,
    },
    /// Two hosts have no route between them.
    #[error("no route from `{src}` to `{dst}` (declare one, or use Floyd/Dijkstra routing through routers)")]
    NoRoute {
        /// Source host.
        src: String,
        /// Destination host.
        dst: String,
    },
    /// A host of a `<zone routing="Cluster">` has no `<host_link>`.
    #[error("host `{0}` has no <host_link> in its routing=\"Cluster\" zone")]
    MissingHostLink(String),
    /// A profile (`speed_file`, `<trace>`, ...) that cannot be read or is malformed.
    #[error("profile `{profile}`{}: {reason}", if *.line > 0 { format!(" line {line}") } else { String::new() })]
    Profile {
        /// The profile's file as found (or the platform file, for a `<trace>`'s content).
        profile: String,
        /// 1-based line in that file; 0 for the profile as a whole.
        line: usize,
        /// What is wrong.
        reason: String,
    },
    /// The file declares no host at all.
    #[error("the platform declares no host")]
    NoHost,
}
