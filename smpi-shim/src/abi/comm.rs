//! Communicators (MPI chapter 7): creation, duplication, splitting, comparison, names,
//! info, and intercommunicators.
#![allow(non_snake_case, clippy::missing_safety_doc, clippy::too_many_arguments)]

use std::ffi::{c_char, c_int, CStr};

use crate::abi::group::{add_group, group_of};
use crate::mpi::comm;
use crate::mpi::entry::{self, enter_call, result};
use crate::mpi::{
    self as rt, mpi_err, with_world, CommShared, MpiResult, MPI_COMM_NULL, MPI_SUCCESS, MPI_UNDEFINED,
};

use super::args::*;

// ------------------------------------------------------------------ communicators

/// The remote group of an intercommunicator (`MPI_ERR_COMM` for an
/// intracommunicator).
fn remote_of(c: &CommShared) -> MpiResult<&[u32]> {
    c.remote
        .as_deref()
        .ok_or_else(|| mpi_err(rt::MPI_ERR_COMM, "not an intercommunicator"))
}

/// Exports the queries of a communicator: each answers from the calling
/// rank (`$me`), the communicator's shared part (`$c`) and the rank's rank in
/// it (`$rank`), into its out-parameter (when not NULL). An invalid
/// communicator or an answer that is an error goes to the communicator's
/// error handler.
macro_rules! comm_queries {
    ($($name:ident($out:ident: $t:ty) = |$me:pat_param, $c:pat_param, $rank:pat_param| $answer:expr;)*) => {$(
        #[no_mangle]
        pub(super) unsafe extern "C" fn $name(comm: c_int, $out: *mut $t) -> c_int {
            let me = rt::current_rank();
            let view = with_world(|w| w.ranks[me as usize].comm(comm).map(|c| (c.shared.clone(), c.my_rank)));
            let r = view.and_then(|(shared, rank)| {
                let ($me, $c, $rank): (u32, &CommShared, i32) = (me, &shared, rank);
                $answer
            });
            // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
            unsafe { answer(me, comm, stringify!($name), $out, r) }
        }
    )*};
}

comm_queries! {
    MPI_Comm_rank(rank: c_int) = |_, _, rank| Ok(rank);
    MPI_Comm_size(size: c_int) = |_, c, _| Ok(c.group.len() as c_int);
    MPI_Comm_test_inter(flag: c_int) = |_, c, _| Ok(c.remote.is_some() as c_int);
    MPI_Comm_group(group: c_int) = |me, c, _| Ok(add_group(me, c.group.to_vec()));
    MPI_Comm_remote_size(size: c_int) = |_, c, _| Ok(remote_of(c)?.len() as c_int);
    MPI_Comm_remote_group(group: c_int) = |me, c, _| Ok(add_group(me, remote_of(c)?.to_vec()));
}

/// Exports the communicator constructors: each makes the new communicator
/// with the calling rank `$me` and hands its handle back through `new`; an
/// error goes to the handler of the communicator it was made from (`$from`).
macro_rules! comm_constructors {
    ($($name:ident($($p:ident: $t:ty),*) from $from:ident = |$me:ident| $make:expr;)*) => {$(
        #[no_mangle]
        pub(super) unsafe extern "C" fn $name($($p: $t,)* new: *mut c_int) -> c_int {
            let g = enter_call(stringify!($name));
            let $me = g.me;
            // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
            unsafe { answer(g.me, $from, stringify!($name), new, $make) }
        }
    )*};
}

comm_constructors! {
    MPI_Comm_dup(comm: c_int) from comm = |me| comm::dup_comm(me, comm, true);
    MPI_Comm_split(comm: c_int, color: c_int, key: c_int) from comm = |me| comm::split(me, comm, color, key);
    MPI_Comm_create(comm: c_int, group: c_int) from comm
        = |me| group_of(me, group).and_then(|grp| comm::create(me, comm, grp));
    MPI_Comm_create_group(comm: c_int, group: c_int, tag: c_int) from comm
        = |me| group_of(me, group).and_then(|grp| comm::create_group(me, comm, grp, tag));
    MPI_Intercomm_create(local: c_int, local_leader: c_int, peer: c_int, remote_leader: c_int, tag: c_int) from local
        = |me| comm::intercomm_create(me, local, local_leader, peer, remote_leader, tag);
    MPI_Intercomm_merge(inter: c_int, high: c_int) from inter = |me| comm::intercomm_merge(me, inter, high);
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Comm_free(comm: *mut c_int) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        let g = enter_call("MPI_Comm_free");
        let h = *comm;
        if h == rt::MPI_COMM_WORLD || h == rt::MPI_COMM_SELF {
            return entry::handle_error(
                g.me,
                h,
                "MPI_Comm_free",
                mpi_err(rt::MPI_ERR_COMM, "cannot free a predefined communicator"),
            );
        }
        let r = crate::mpi::attr::delete_all_comm_attrs(g.me, h).and_then(|_| {
            with_world(|w| {
                w.ranks[g.me as usize].comm(h)?;
                w.ranks[g.me as usize].comms[h as usize] = None;
                Ok(())
            })
        });
        if r.is_ok() {
            *comm = MPI_COMM_NULL;
        }
        result(g.me, rt::MPI_COMM_WORLD, "MPI_Comm_free", r)
    }
}
#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Comm_compare(c1: c_int, c2: c_int, res: *mut c_int) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe { put(res, comm::compare(rt::current_rank(), c1, c2).map_err(|e| e.code)) }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Comm_set_name(comm: c_int, name: *const c_char) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        let me = rt::current_rank();
        let s = CStr::from_ptr(name).to_string_lossy().into_owned();
        let r = with_world(|w| w.ranks[me as usize].comm_mut(comm).map(|c| c.name = s));
        result(me, comm, "MPI_Comm_set_name", r)
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Comm_get_name(comm: c_int, name: *mut c_char, len: *mut c_int) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        let me = rt::current_rank();
        match with_world(|w| w.ranks[me as usize].comm(comm).map(|c| c.name.clone())) {
            Ok(s) => {
                write_cstr(name, &s, len, 128);
                MPI_SUCCESS
            }
            Err(e) => entry::handle_error(me, comm, "MPI_Comm_get_name", e),
        }
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Comm_split_type(
    comm: c_int,
    split_type: c_int,
    key: c_int,
    _info: c_int,
    new: *mut c_int,
) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        // MPI_COMM_TYPE_SHARED: ranks on the same simulated host. The hardware
        // types (MPI_COMM_TYPE_HW_GUIDED / _UNGUIDED) may give MPI_COMM_NULL, as
        // in SMPI: a simulated host has no hardware hierarchy below it.
        const MPI_COMM_TYPE_SHARED: c_int = 1;
        let me = rt::current_rank();
        let color = if split_type == MPI_COMM_TYPE_SHARED {
            with_world(|w| w.hosts[me as usize].0 as c_int)
        } else {
            MPI_UNDEFINED
        };
        MPI_Comm_split(comm, color, key, new)
    }
}
#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Comm_idup(comm: c_int, new: *mut c_int, req: *mut c_int) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        let g = enter_call("MPI_Comm_idup");
        match comm::dup_comm(g.me, comm, false) {
            Ok(h) => {
                set(new, h);
                set(req, 0);
                MPI_SUCCESS
            }
            Err(e) => entry::handle_error(g.me, comm, "MPI_Comm_idup", e),
        }
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Comm_set_info(_comm: c_int, _info: c_int) -> c_int {
    MPI_SUCCESS
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Comm_dup_with_info(comm: c_int, _info: c_int, new: *mut c_int) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe { MPI_Comm_dup(comm, new) }
}
#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Comm_idup_with_info(
    comm: c_int,
    _info: c_int,
    new: *mut c_int,
    req: *mut c_int,
) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe { MPI_Comm_idup(comm, new, req) }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Comm_get_info(_comm: c_int, info: *mut c_int) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        // No hints are used: a new, empty object the caller frees.
        set(info, with_world(|w| w.infos.create()));
        MPI_SUCCESS
    }
}
