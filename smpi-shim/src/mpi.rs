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
//!   [`info`]: info objects; [`rma`]: one-sided communication (windows);
//!   [`io`]: MPI-IO (files on the real file system, timed on the platform's disks);
//! - [`entry`]: what every MPI call does on entry and exit (computation
//!   injection, error handlers);
//! - [`trace`]: timelines (`-trace`); [`ti_trace`], [`ti_actions`]:
//!   time-independent traces, recorded (`-trace-ti`) and read for replay (`-replay`).

pub(crate) mod attr;
pub(crate) mod coll_check;
pub(crate) mod comm;
pub(crate) mod datatype;
pub(crate) mod entry;
pub(crate) mod errors;
pub(crate) mod info;
pub(crate) mod io;
pub(crate) mod leaks;
pub(crate) mod op;
pub(crate) mod p2p;
pub(crate) mod progress;
pub(crate) mod request;
pub(crate) mod rma;
pub(crate) mod ti_actions;
pub(crate) mod ti_trace;
pub(crate) mod topo;
pub(crate) mod trace;
pub(crate) mod world;

pub(crate) use errors::*;
pub(crate) use p2p::*;
pub(crate) use progress::*;
pub(crate) use request::*;
pub(crate) use world::*;
