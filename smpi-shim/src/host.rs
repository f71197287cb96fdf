//! The application process side: loading one private copy of the program per
//! rank, binding and interposing its symbols, memory folding, compute kernels
//! replaced by models, sampling, and the per-rank libc state.

pub mod compute;
pub mod folding;
pub mod interpose;
pub mod kernels;
pub mod libc_state;
pub mod loader;
pub mod sampling;
