//! Platform description: hosts, links and the routes between hosts.
//!
//! A [`Platform`] is built from our TOML format or from a SimGrid v4 XML file
//! (see `platforms/README.md`) with [`Platform::from_file`]. Both produce the same in-memory
//! shape: a list of hosts, a list of links (a SPLITDUPLEX link becomes two links, `<name>_UP`
//! and `<name>_DOWN`, each its own constraint), a petgraph [`PlatformGraph`] of hosts, routers
//! and links, and a [`Router`] that answers "which links does a message from host A to host B
//! cross, in order", with SimGrid's rules and link names for each kind of zone:
//!
//! - explicit routes (`Full`, `Floyd`, `Dijkstra` zones), with the model-level `__loopback__`
//!   link for a host talking to itself;
//! - clusters: FLAT (star, optional backbone, limiter and loopback links), FAT_TREE (D-mod-K),
//!   TORUS (dimension order) and DRAGONFLY (minimal routing).
//!
//! [`PlatformFile`] loads in two steps, for a caller whose own configuration (smpirun's `--cfg`)
//! may override the file's `<config>`: read the file, then build it with the effective values of
//! the settings the platform depends on ([`ModelLoopback`]).
//!
//! Values with units (`"10Gbps"`, `"1us"`, `"1Gf"`) are parsed by [`units`]; everything inside is
//! in SI base units (bytes, seconds, flop). Load errors ([`PlatformError`]) name the file, the
//! line and the problem.
//!
//! ```no_run
//! use simcore::platform::Platform;
//! let p = Platform::from_file("platforms/fat_tree.toml".as_ref()).expect("valid platform");
//! let (a, b) = (p.host_by_name("node-0").unwrap(), p.host_by_name("node-63").unwrap());
//! let route = p.route(a, b);
//! println!("{} links, latency {} s", route.len(), p.route_latency(&route));
//! ```

mod build;
mod error;
mod graph;
mod load;
mod profile;
mod routing;
mod spec;
mod toml_format;
mod types;
pub mod units;
mod xml;

pub use error::{PlatformError, PlatformErrorKind};
pub use graph::{NetNode, PlatformGraph};
pub use load::{ConfigEntry, ModelLoopback, PlatformFile};
pub use profile::{Profile, ProfileCursor, ProfileTarget, ResourceProfile};
pub use types::*;
