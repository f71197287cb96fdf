//! The MPI C interface: every `extern "C"` function the program calls.
//!
//! `smpirun` exports these symbols (`-Wl,--export-dynamic`), so each rank's
//! copy of the program binds its `MPI_*` (and BLAS, SMPI helper, SimGrid
//! helper and a few libc) calls here. A function checks its arguments, converts C values to
//! Rust ones and calls the MPI layer; it owns no MPI semantics.

// Macros shared by the chapters (defined before the modules that use them).

macro_rules! check_count {
    ($me:expr, $comm:expr, $call:expr, $count:expr) => {
        match count_ok($me, $comm, $call, $count) {
            Ok(c) => c,
            Err(code) => return code,
        }
    };
}

macro_rules! nb {
    ($name:literal, $comm:expr, $req:expr, $body:expr) => {{
        let g = enter_call($name);
        // Non-blocking collectives have no action in SMPI's TI format.
        $crate::mpi::ti_trace::ti!($crate::mpi::ti_trace::unrepresented($name));
        let r: MpiResult<u32> = $body(g.me);
        match r {
            Ok(id) => {
                set($req, id as c_int + 1);
                MPI_SUCCESS
            }
            Err(e) => entry::handle_error(g.me, $comm, $name, e),
        }
    }};
}

macro_rules! coll_call {
    ($g:expr, $comm:expr, $call:expr, $body:expr) => {{
        let r: MpiResult<()> = (|| -> MpiResult<()> { $body })();
        result($g.me, $comm, $call, r)
    }};
}

mod args;
mod attr;
mod blas;
mod coll;
mod comm;
mod datatype;
pub(crate) mod energy;
mod errhandler;
mod fortran;
mod group;
mod info;
mod init;
mod io;
mod libc;
mod p2p;
pub(crate) mod replay;
mod request;
mod rma;
mod simgrid;
mod smpi;
mod ti_hooks;
mod topo;

#[cfg(test)]
mod tests;
