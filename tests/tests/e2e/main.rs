//! End-to-end tests, one binary with one module per behaviour: each builds C
//! programs from `apps/` with `smpicc`, runs them with `smpirun` and checks the
//! outcome (see `tests/src/lib.rs` for the helpers). Run one module with
//! `cargo test --release -p e2e-tests --test e2e <module>::`.

mod apps;
mod arg_checks;
mod calibration_programs;
mod cli;
mod coll_algorithms;
mod coll_automatic;
mod coll_parity_alltoall;
mod coll_parity_selectors;
mod coll_parity_smp;
mod coll_parity_trees;
mod coll_smpi_parity;
mod coll_timing;
mod config;
mod cxx;
mod datatypes;
mod determinism;
mod energy;
mod failures;
mod fortran;
mod hpl;
mod libc_state;
mod mbi;
mod misuse;
mod model_range;
mod mpi_io;
mod mprobe;
mod nas;
mod nbc;
mod netbench;
mod parity;
mod pingpong_model;
mod privatization;
mod probe_progress;
mod profiles;
mod replay;
mod request_log;
mod rma;
mod sampling;
mod simgrid_api;
mod simgrid_platforms;
mod smpi_compare;
mod stop;
mod study;
mod topology;
mod trace;
mod validation;
