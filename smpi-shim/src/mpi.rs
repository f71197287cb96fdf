//! The MPI layer: the semantics of MPI objects and operations, independent of
//! the C interface ([`crate::abi`] converts and checks C arguments and calls
//! in here) and of the collective algorithms ([`crate::coll`], built on the
//! point-to-point operations of this layer).
//!
//! - [`world`]: the one run-scoped state, ranks and communicators;
//! - [`comm`]: how communicators are created and compared;
//! - [`errors`]: error classes and the error type;
//! - [`request`], [`p2p`], [`progress`]: requests, matching and timing of
//!   messages, waiting and polling;
//! - [`datatype`], [`op`]: datatypes (with darray and external32) and
//!   reduction operations;
//! - [`attr`]: keyvals and attributes; [`topo`]: process topologies;
//!   [`info`]: info objects;
//! - [`entry`]: what every MPI call does on entry and exit (computation
//!   injection, error handlers).

pub mod attr;
pub mod comm;
pub mod datatype;
pub mod entry;
pub mod errors;
pub mod info;
pub mod op;
pub mod p2p;
pub mod progress;
pub mod request;
pub mod topo;
pub mod world;

pub use errors::*;
pub use p2p::*;
pub use progress::*;
pub use request::*;
pub use world::*;
