//! The MPI C interface: every `extern "C"` function the program calls.
//!
//! `smpirun` exports these symbols (`-Wl,--export-dynamic`), so each rank's
//! copy of the program binds its `MPI_*` (and BLAS, SMPI helper and a few
//! libc) calls here. A function checks its arguments, converts C values to
//! Rust ones and calls the MPI layer; it owns no MPI semantics.

mod base;
mod blas;
mod dtype;
mod info;
mod libc;
mod more;
mod nbc;
mod p2p;
mod smpi;
mod topo;
