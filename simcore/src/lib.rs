#![warn(missing_docs, unreachable_pub, unsafe_op_in_unsafe_fn)]
//! `simcore`: a discrete-event simulation kernel that knows nothing of MPI.
//!
//! - [`platform`]: hosts, links, routes (TOML and SimGrid XML, fat tree, torus, dragonfly).
//! - [`lmm`]: the weighted max-min fairness solver that shares link and CPU capacity.
//! - [`engine`]: simulated clock, activities (exec, comm, sleep), actors as coroutines.
//! - [`crash`]: clear reports when an actor's code crashes or overflows its stack.

pub mod crash;
pub mod energy;
pub mod engine;
pub mod lmm;
pub mod platform;
mod sgorder;

pub use engine::{
    on_scratch_stack, ActivityId, ActorId, BlockedActor, Ctx, KernelConfig, KernelHandle, LinkStats,
    NetworkConfig, NetworkFactors, PlainFactors, RunSummary, SimError, Simulation, HOT_LINES,
};
