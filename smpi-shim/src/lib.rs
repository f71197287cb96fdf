#![warn(missing_docs, unreachable_pub, unsafe_op_in_unsafe_fn)]
//! `smpi-shim`: the MPI C interface on top of `simcore`, and the `smpicc` /
//! `smpirun` tools. Layers, from the program down (see `ARCHITECTURE.md` at
//! the repository root):
//!
//! - [`abi`]: every `extern "C"` function a program calls (MPI, SMPI's
//!   helpers, BLAS, a few libc functions), one file per MPI chapter: argument
//!   checks and C ↔ Rust conversions only. `smpirun` exports them
//!   (`-Wl,--export-dynamic`), so each rank's copy of the program binds to them;
//! - [`coll`]: collective algorithms (SMPI's), their selection,
//!   intercommunicator, non-blocking and neighbourhood collectives, built on
//!   the point-to-point operations of the MPI layer;
//! - [`mpi`]: the MPI semantics: the run's [`mpi::World`], communicators,
//!   groups, attributes, requests, matching and timing of messages, progress,
//!   datatypes, operations, topologies, info objects, error handlers;
//! - [`host`]: the application process: its per-rank copies, symbol binding
//!   and interposition, memory folding, modelled kernels, sampling, per-rank
//!   libc state;
//! - [`config`]: the `--cfg` keys (one declaration each) and their precedence;
//! - [`launcher`]: `smpirun` itself: command line, run, report.
//!
//! Only [`launcher::main_with_args`] is used from outside (by the `smpirun`
//! binary); everything else is crate-private.

pub(crate) mod abi;
pub(crate) mod coll;
pub(crate) mod config;
pub(crate) mod host;
pub mod launcher;
pub(crate) mod mpi;
