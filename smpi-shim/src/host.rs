//! The application process side: loading one private copy of the program per
//! rank, binding and interposing its symbols, memory folding, compute kernels
//! replaced by models, sampling, SMPI's shared call results, SimGrid's logging
//! (categories and `--log` thresholds), and the per-rank libc state.

pub(crate) mod compute;
pub(crate) mod folding;
pub(crate) mod interpose;
pub(crate) mod kernels;
pub(crate) mod libc_state;
pub(crate) mod loader;
pub(crate) mod sampling;
pub(crate) mod shared_calls;
pub(crate) mod xbt_log;
