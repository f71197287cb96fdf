//! Environment management (MPI chapter 11): init, finalize, abort, clocks, versions, memory.
#![allow(non_snake_case, clippy::missing_safety_doc, clippy::too_many_arguments)]

use std::ffi::{c_char, c_int, c_void};

use crate::abi::coll::view;
use crate::coll;
use crate::mpi::entry::{self, enter, enter_call};
use crate::mpi::{self as rt, with_world, MPI_SUCCESS};

use super::args::*;

// ------------------------------------------------------------------ environment

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Init(_argc: *mut c_int, _argv: *mut *mut *mut c_char) -> c_int {
    let g = enter();
    let (initialized, finalized) = with_world(|w| {
        let r = &w.ranks[g.me as usize];
        (r.initialized, r.finalized)
    });
    if finalized {
        entry::abort_run(g.me, "MPI_Init called after MPI_Finalize".into());
    }
    if initialized {
        entry::abort_run(g.me, "MPI_Init called twice".into());
    }
    let init = with_world(|w| {
        w.ranks[g.me as usize].initialized = true;
        w.cfg.init
    });
    crate::mpi::ti_trace::ti!(crate::mpi::ti_trace::plain(g.me, "init"));
    rt::sleep_for(g.me, init);
    MPI_SUCCESS
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Init_thread(
    argc: *mut c_int,
    argv: *mut *mut *mut c_char,
    required: c_int,
    provided: *mut c_int,
) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        let level = required.clamp(0, 3);
        with_world(|w| w.thread_level = level);
        set(provided, level);
        MPI_Init(argc, argv)
    }
}

/// Writes a flag of the calling rank's state (`MPI_Initialized`,
/// `MPI_Finalized`).
unsafe fn rank_flag(flag: *mut c_int, f: impl FnOnce(&rt::Rank) -> bool) -> c_int {
    let me = rt::current_rank();
    // Safety: `flag` is null or valid for a write (the caller's contract).
    unsafe { set(flag, with_world(|w| f(&w.ranks[me as usize])) as c_int) };
    MPI_SUCCESS
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Initialized(flag: *mut c_int) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe { rank_flag(flag, |r| r.initialized) }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Finalize() -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        let g = enter_call("MPI_Finalize");
        crate::mpi::ti_trace::ti!(crate::mpi::ti_trace::plain(g.me, "finalize"));
        // MPI_COMM_SELF's attributes are deleted first, while MPI is still up
        // (MPI_Finalized says no), then MPI_COMM_WORLD's.
        for comm in [rt::MPI_COMM_SELF, rt::MPI_COMM_WORLD] {
            let _ = crate::mpi::attr::delete_comm_attrs_lifo(g.me, comm);
        }
        let barrier = with_world(|w| {
            w.ranks[g.me as usize].finalized = true;
            w.cfg.barrier_finalization
        });
        if barrier {
            if let Ok(c) = view(g.me, rt::MPI_COMM_WORLD) {
                let _ = coll::barrier(c);
            }
        }
        MPI_SUCCESS
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Finalized(flag: *mut c_int) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe { rank_flag(flag, |r| r.finalized) }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Abort(_comm: c_int, errorcode: c_int) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        let me = rt::current_rank();
        libc::fflush(std::ptr::null_mut());
        entry::abort_run(me, format!("MPI_Abort with error code {errorcode}"))
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Wtime() -> f64 {
    if crate::host::sampling::benchmarking(rt::current_rank()) {
        return with_world(|w| w.kernel.now());
    }
    let g = enter_call("MPI_Wtime");
    rt::read_clock(g.me)
}

#[no_mangle]
pub(super) extern "C" fn MPI_Wtick() -> f64 {
    1e-9
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Get_processor_name(name: *mut c_char, len: *mut c_int) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        let me = rt::current_rank();
        let host = with_world(|w| w.platform.host(w.hosts[me as usize]).name.clone());
        write_cstr(name, &host, len, 256);
        MPI_SUCCESS
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Get_version(v: *mut c_int, sv: *mut c_int) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        set(v, 3);
        set(sv, 1);
        MPI_SUCCESS
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Get_library_version(s: *mut c_char, len: *mut c_int) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        write_cstr(
            s,
            concat!("smpi-rs ", env!("CARGO_PKG_VERSION"), " (simulated MPI)"),
            len,
            256,
        );
        MPI_SUCCESS
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Query_thread(provided: *mut c_int) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        set(provided, with_world(|w| w.thread_level));
        MPI_SUCCESS
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Is_thread_main(flag: *mut c_int) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        set(flag, 1);
        MPI_SUCCESS
    }
}

#[no_mangle]
pub(super) extern "C" fn MPI_Pcontrol(_level: c_int) -> c_int {
    MPI_SUCCESS
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Alloc_mem(size: Aint, _info: c_int, base: *mut c_void) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        let p = libc::malloc(size.max(1) as usize);
        *(base as *mut *mut c_void) = p;
        if p.is_null() {
            21
        } else {
            MPI_SUCCESS
        }
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Free_mem(base: *mut c_void) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        libc::free(base);
        MPI_SUCCESS
    }
}
