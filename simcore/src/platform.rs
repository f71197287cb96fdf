//! Platform description: hosts, links and the routes between hosts.
//!
//! A [`Platform`] is built from our TOML format or from a SimGrid v4 XML file
//! (see `platforms/README.md`). Both produce the same in-memory shape: a list of
//! hosts, a list of unidirectional-or-shared links (a SPLITDUPLEX link becomes two
//! links, `<name>_UP` and `<name>_DOWN`), and a router that answers "which links
//! does a message from host A to host B cross, in order".

mod types;
pub use types::*;
