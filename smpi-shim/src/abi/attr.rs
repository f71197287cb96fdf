//! Attributes and keyvals on communicators and datatypes (MPI chapter 7.7), and the
//! predefined attributes of `MPI_COMM_WORLD`.
#![allow(non_snake_case, clippy::missing_safety_doc, clippy::too_many_arguments)]

use std::ffi::{c_int, c_void};

use crate::mpi::entry::{self, result};
use crate::mpi::{self as rt, attr, with_world, MPI_SUCCESS};

use super::args::*;

pub(super) static mut TAG_UB_VALUE: c_int = rt::TAG_UB;
pub(super) static mut WTIME_IS_GLOBAL: c_int = 1;
/// MPI_HOST: no process is the host.
pub(super) static mut HOST_RANK: c_int = rt::MPI_PROC_NULL;
/// MPI_IO: every process can do I/O (MPI_ANY_SOURCE).
pub(super) static mut IO_RANK: c_int = -1;
pub(super) static mut APPNUM: c_int = 0;
pub(super) static UNIVERSE_SIZE: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);

/// Exports MPI functions that are another one under a second name (`MPI_Attr_get` is
/// `MPI_Comm_get_attr`, `MPI_Type_create_keyval` is `MPI_Comm_create_keyval`): the same
/// parameters, passed on unchanged. Doc comments go to the alias.
macro_rules! aliases {
    ($($(#[$doc:meta])* $alias:ident($($p:ident: $t:ty),* $(,)?) = $target:path;)*) => {$(
        $(#[$doc])*
        #[no_mangle]
        pub(super) unsafe extern "C" fn $alias($($p: $t),*) -> c_int {
            // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
            unsafe { $target($($p),*) }
        }
    )*};
}
pub(super) use aliases;

aliases! {
    // The MPI-1 names of the communicator attribute calls.
    MPI_Attr_get(comm: c_int, key: c_int, val: *mut c_void, flag: *mut c_int) = MPI_Comm_get_attr;
    MPI_Attr_put(comm: c_int, key: c_int, val: *mut c_void) = MPI_Comm_set_attr;
    MPI_Attr_delete(comm: c_int, key: c_int) = MPI_Comm_delete_attr;
    MPI_Keyval_create(copy: usize, delete: usize, key: *mut c_int, extra: *mut c_void) =
        MPI_Comm_create_keyval;
    MPI_Keyval_free(key: *mut c_int) = MPI_Comm_free_keyval;
    // Datatypes and communicators share the keyvals.
    MPI_Type_create_keyval(copy: usize, delete: usize, key: *mut c_int, extra: *mut c_void) =
        MPI_Comm_create_keyval;
    MPI_Type_free_keyval(key: *mut c_int) = MPI_Comm_free_keyval;
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Comm_get_attr(
    comm: c_int,
    key: c_int,
    val: *mut c_void,
    flag: *mut c_int,
) -> c_int {
    let me = rt::current_rank();
    let r = match predefined(me, key) {
        Some(p) => Ok(Some(p as usize)),
        None => attr::comm_attr(me, comm, key),
    };
    match r {
        // Safety: the program calls this as MPI specifies: its pointers are valid for what it passes.
        Ok(v) => unsafe { answer(val, flag, v) },
        Err(e) => entry::handle_error(me, comm, "MPI_Comm_get_attr", e),
    }
}

/// The value of predefined attribute `key` of every communicator (`MPI_TAG_UB`
/// and the others of `MPI_COMM_WORLD`, `MPI_LASTUSEDCODE`): its address.
fn predefined(me: u32, key: c_int) -> Option<*mut c_int> {
    match key {
        1 => Some(&raw mut TAG_UB_VALUE),
        2 => Some(&raw mut HOST_RANK),
        3 => Some(&raw mut IO_RANK),
        4 => Some(&raw mut WTIME_IS_GLOBAL),
        5 => {
            let n = with_world(|w| w.ranks.len()) as c_int;
            UNIVERSE_SIZE.store(n, std::sync::atomic::Ordering::Relaxed);
            Some(UNIVERSE_SIZE.as_ptr())
        }
        6 => Some(&raw mut APPNUM),
        // This rank's MPI_LASTUSEDCODE (boxed: its address is stable).
        7 => Some(with_world(|w| &raw mut *w.ranks[me as usize].errors.last_used)),
        _ => None,
    }
}

/// Answers an attribute query (`MPI_Comm_get_attr` and the datatype and window
/// forms): the value, when there is one, to `*val`, and whether there is to `*flag`.
///
/// # Safety
/// `val` is valid for a write of an address when `v` is set; `flag` is null or valid.
pub(super) unsafe fn answer(val: *mut c_void, flag: *mut c_int, v: Option<usize>) -> c_int {
    // Safety: as this function's contract.
    unsafe {
        if let Some(v) = v {
            *(val as *mut usize) = v;
        }
        set(flag, v.is_some() as c_int);
    }
    MPI_SUCCESS
}

/// `MPI_COMM_DUP_FN` (also `MPI_WIN_DUP_FN`): the attribute's value is copied.
#[no_mangle]
pub(super) unsafe extern "C" fn MPI_COMM_DUP_FN(
    _comm: c_int,
    _key: c_int,
    _extra: *mut c_void,
    inval: *mut c_void,
    outval: *mut c_void,
    flag: *mut c_int,
) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        *(outval as *mut *mut c_void) = inval;
        set(flag, 1);
        MPI_SUCCESS
    }
}

// ------------------------------------------------------------------ keyvals and attributes

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Comm_create_keyval(
    copy: usize,
    delete: usize,
    key: *mut c_int,
    extra: *mut c_void,
) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        set(key, attr::create_keyval(copy, delete, extra as usize));
        MPI_SUCCESS
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Comm_free_keyval(key: *mut c_int) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        match attr::free_keyval(*key) {
            Ok(()) => {
                *key = -1;
                MPI_SUCCESS
            }
            Err(e) => e.code,
        }
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Comm_set_attr(comm: c_int, key: c_int, val: *mut c_void) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        let me = rt::current_rank();
        let r = attr::set_comm_attr(me, comm, key, val as usize);
        result(me, comm, "MPI_Comm_set_attr", r)
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Comm_delete_attr(comm: c_int, key: c_int) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        let me = rt::current_rank();
        let r = attr::keyval(key).and_then(|_| attr::delete_comm_attr(me, comm, key));
        result(me, comm, "MPI_Comm_delete_attr", r)
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Type_delete_attr(dt: c_int, key: c_int) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe { attr::delete_type_attr(rt::current_rank(), dt, key) }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Type_set_attr(dt: c_int, key: c_int, val: *mut c_void) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe { attr::set_type_attr(rt::current_rank(), dt, key, val as usize) }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Type_get_attr(
    dt: c_int,
    key: c_int,
    val: *mut c_void,
    flag: *mut c_int,
) -> c_int {
    match attr::type_attr(rt::current_rank(), dt, key) {
        // Safety: the program calls this as MPI specifies: its pointers are valid for what it passes.
        Ok(v) => unsafe { answer(val, flag, v) },
        Err(e) => e.code,
    }
}
