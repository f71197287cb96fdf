//! `simcore`: a discrete-event simulation kernel that knows nothing of MPI.
//!
//! - [`platform`]: hosts, links, routes (TOML and SimGrid XML, fat tree, torus, dragonfly).
//! - [`lmm`]: the weighted max-min fairness solver that shares link and CPU capacity.
//! - [`engine`]: simulated clock, activities (exec, comm, sleep), actors as coroutines.

pub mod platform;
