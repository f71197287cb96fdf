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

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Comm_get_attr(
    comm: c_int,
    key: c_int,
    val: *mut c_void,
    flag: *mut c_int,
) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        let me = rt::current_rank();
        let p: Option<*mut c_int> = match key {
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
        };
        if let Some(p) = p {
            *(val as *mut *mut c_int) = p;
            set(flag, 1);
            return MPI_SUCCESS;
        }
        match attr::comm_attr(me, comm, key) {
            Ok(Some(v)) => {
                *(val as *mut usize) = v;
                set(flag, 1);
                MPI_SUCCESS
            }
            Ok(None) => {
                set(flag, 0);
                MPI_SUCCESS
            }
            Err(e) => entry::handle_error(me, comm, "MPI_Comm_get_attr", e),
        }
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Attr_get(
    comm: c_int,
    key: c_int,
    val: *mut c_void,
    flag: *mut c_int,
) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe { MPI_Comm_get_attr(comm, key, val, flag) }
}

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
pub(super) unsafe extern "C" fn MPI_Keyval_create(
    copy: usize,
    delete: usize,
    key: *mut c_int,
    extra: *mut c_void,
) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe { MPI_Comm_create_keyval(copy, delete, key, extra) }
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
pub(super) unsafe extern "C" fn MPI_Keyval_free(key: *mut c_int) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe { MPI_Comm_free_keyval(key) }
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
pub(super) unsafe extern "C" fn MPI_Attr_put(comm: c_int, key: c_int, val: *mut c_void) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe { MPI_Comm_set_attr(comm, key, val) }
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
pub(super) unsafe extern "C" fn MPI_Attr_delete(comm: c_int, key: c_int) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe { MPI_Comm_delete_attr(comm, key) }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Type_create_keyval(
    copy: usize,
    delete: usize,
    key: *mut c_int,
    extra: *mut c_void,
) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe { MPI_Comm_create_keyval(copy, delete, key, extra) }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Type_free_keyval(key: *mut c_int) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe { MPI_Comm_free_keyval(key) }
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
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        match attr::type_attr(rt::current_rank(), dt, key) {
            Ok(Some(v)) => {
                *(val as *mut usize) = v;
                set(flag, 1);
                MPI_SUCCESS
            }
            Ok(None) => {
                set(flag, 0);
                MPI_SUCCESS
            }
            Err(e) => e.code,
        }
    }
}
