//! `smpi-shim`: the MPI C interface on top of `simcore`, and the `smpicc` /
//! `smpirun` tools.
//!
//! - [`config`]: `--cfg` keys with SMPI's names and defaults;
//! - [`runtime`]: ranks, communicators, requests, matching, message timing;
//! - [`coll`]: collective algorithms built from simulated point-to-point messages;
//! - [`nbc`], [`nbc_inter`]: non-blocking collectives (intra- and intercommunicators);
//! - [`datatype`], [`datatype_ext`], [`op`]: MPI datatypes (with darray and
//!   external32) and reduction operations;
//! - [`entry`]: what every MPI call does on entry and exit (computation
//!   injection, error handlers);
//! - [`topo`]: process topologies and neighbourhood collectives;
//! - [`loader`]: per-rank private copies of the application;
//! - [`launcher`]: `smpirun`'s command line and run loop.
//!
//! The `extern "C"` MPI functions themselves live in the `smpirun` binary
//! (`src/bin/smpirun/abi.rs`): symbols must be defined in the executable to be
//! exported to the application, which `smpirun` loads with `dlopen`.

mod abi;
pub mod coll;
pub mod config;
pub mod host;
pub mod launcher;
pub mod mpi;

// Old paths, for the modules being reworked (config and launcher) until they move.
