#![warn(missing_docs, unreachable_pub, unsafe_op_in_unsafe_fn)]
//! `smpi-study`: what-if studies with `smpirun`.
//!
//! A study file (TOML, see `study/README.md`) names a program (or HPL with its
//! parameters), a base platform built by our platform generator, `--cfg`
//! keys, a model file, and axes to vary. The crate expands it into runs
//! (points × replicas, in a seeded random order), runs them on the local
//! cores or as a Slurm job array, writes one row per run to JSONL and CSV
//! (resumable), and turns the rows into plots and a Markdown report.
//!
//! | module | what |
//! |---|---|
//! | [`spec`] | the study file: parsing, the flat parameter map, per-point configuration |
//! | [`design`] | points, replicas and their perturbations, run ids, the randomized order |
//! | [`platform`] | platform files per point: fat tree, torus, dragonfly, flat cluster |
//! | [`hpl`] | HPL.dat for a point, HPL's result lines |
//! | [`runner`] | one run: its directory, the `smpirun` command, its row |
//! | [`results`] | rows: JSONL (appended atomically), CSV, reading back for resume |
//! | [`local`] | the local executor: parallel runs, progress bar, interruption |
//! | [`slurm`] | the Slurm executor: job arrays, polling, gathering |
//! | [`stats`] | medians, spreads, overlapping comparisons |
//! | [`report`] | PNG/SVG plots and the Markdown summary |

pub mod design;
pub mod hpl;
pub mod local;
pub mod platform;
pub mod report;
pub mod results;
pub mod runner;
pub mod slurm;
pub mod spec;
pub mod stats;

/// This tool's version, recorded in every row.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
