#![doc = include_str!("../README.md")]
#![warn(
    missing_docs,
    missing_debug_implementations,
    unreachable_pub,
    unsafe_op_in_unsafe_fn
)]

pub mod compute;
pub mod error;
pub mod fit;
pub mod input;
pub mod mixture;
pub mod modelfile;
pub mod network;
pub mod nonreg;
pub mod plot;
pub mod regress;
pub mod report;
pub mod segmented;
pub mod stats;
pub mod summary;
pub mod synth;
pub mod validate;

pub use error::InputError;
