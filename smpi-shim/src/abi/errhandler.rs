//! Error handlers and error classes and strings (MPI chapter 9.3, 9.5).
#![allow(non_snake_case, clippy::missing_safety_doc, clippy::too_many_arguments)]

use std::ffi::{c_char, c_int};

use crate::mpi::entry::{self, enter_call, result};
use crate::mpi::{self as rt, mpi_err, with_world, MpiResult, MPI_SUCCESS};

use super::args::*;

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Error_string(code: c_int, s: *mut c_char, len: *mut c_int) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        let me = rt::current_rank();
        let user = with_world(|w| {
            let e = &w.ranks[me as usize].errors;
            // An added class or code without a string has the empty one (MPI 4.0 §9.5).
            e.class(code)
                .filter(|_| code > rt::MPI_ERR_LASTCODE)
                .map(|_| e.strings.get(&code).cloned().unwrap_or_default())
        });
        match user {
            Some(text) => write_cstr(s, &text, len, 256),
            None => write_cstr(s, rt::error_string(code), len, 256),
        }
        MPI_SUCCESS
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Error_class(code: c_int, class: *mut c_int) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        let me = rt::current_rank();
        match with_world(|w| w.ranks[me as usize].errors.class(code)) {
            Some(c) => {
                set(class, c);
                MPI_SUCCESS
            }
            None => entry::handle_error(
                me,
                rt::MPI_COMM_WORLD,
                "MPI_Error_class",
                mpi_err(rt::MPI_ERR_ARG, format!("{code} is not an error code")),
            ),
        }
    }
}

/// `MPI_Add_error_class` and `MPI_Add_error_code`: the new value, which is
/// also `MPI_LASTUSEDCODE` from now on.
unsafe fn add_error(call: &'static str, class: Option<c_int>, out: *mut c_int) -> c_int {
    let g = enter_call(call);
    let r = with_world(|w| w.ranks[g.me as usize].errors.add(class));
    if let Ok(code) = r {
        // Safety: `out` is the program's int.
        unsafe { set(out, code) };
    }
    result(g.me, rt::MPI_COMM_WORLD, call, r)
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Add_error_class(class: *mut c_int) -> c_int {
    // Safety: the program calls this as MPI specifies.
    unsafe { add_error("MPI_Add_error_class", None, class) }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Add_error_code(class: c_int, code: *mut c_int) -> c_int {
    // Safety: the program calls this as MPI specifies.
    unsafe { add_error("MPI_Add_error_code", Some(class), code) }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Comm_set_errhandler(comm: c_int, eh: c_int) -> c_int {
    let g = enter_call("MPI_Comm_set_errhandler");
    let r = with_world(|w| -> MpiResult<()> {
        let user = usize::try_from(eh - entry::FIRST_USER_ERRHANDLER).is_ok_and(|i| i < w.errhandlers.len());
        if eh != rt::MPI_ERRORS_ARE_FATAL && eh != rt::MPI_ERRORS_RETURN && !user {
            return Err(mpi_err(
                rt::MPI_ERR_ARG,
                format!("unsupported error handler {eh}"),
            ));
        }
        w.ranks[g.me as usize].comm_mut(comm)?.errhandler = eh;
        Ok(())
    });
    result(g.me, comm, "MPI_Comm_set_errhandler", r)
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Comm_get_errhandler(comm: c_int, eh: *mut c_int) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        let g = enter_call("MPI_Comm_get_errhandler");
        let r = with_world(|w| w.ranks[g.me as usize].comm(comm).map(|c| c.errhandler));
        match r {
            Ok(h) => {
                set(eh, h);
                MPI_SUCCESS
            }
            Err(e) => entry::handle_error(g.me, comm, "MPI_Comm_get_errhandler", e),
        }
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Comm_create_errhandler(
    f: Option<entry::CommErrhandlerFn>,
    eh: *mut c_int,
) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        let Some(f) = f else {
            return rt::MPI_ERR_ARG;
        };
        let h = with_world(|w| {
            w.errhandlers.push(f as usize);
            entry::FIRST_USER_ERRHANDLER + w.errhandlers.len() as c_int - 1
        });
        set(eh, h);
        MPI_SUCCESS
    }
}

/// Calls `comm`'s error handler on `code`, as an error in an MPI call would
/// (`MPI_ERRORS_ARE_FATAL` ends the run); `MPI_SUCCESS` once it returns.
#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Comm_call_errhandler(comm: c_int, code: c_int) -> c_int {
    let g = enter_call("MPI_Comm_call_errhandler");
    entry::handle_error(
        g.me,
        comm,
        "MPI_Comm_call_errhandler",
        mpi_err(code, format!("error code {code} raised by the program")),
    );
    MPI_SUCCESS
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Errhandler_set(comm: c_int, eh: c_int) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe { MPI_Comm_set_errhandler(comm, eh) }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Errhandler_get(comm: c_int, eh: *mut c_int) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe { MPI_Comm_get_errhandler(comm, eh) }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Errhandler_free(eh: *mut c_int) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        set(eh, 0);
        MPI_SUCCESS
    }
}
#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Add_error_string(code: c_int, text: *const c_char) -> c_int {
    let g = enter_call("MPI_Add_error_string");
    // Safety: `text` is the program's NUL-terminated string.
    let text = unsafe { super::info::text(text, "error string") };
    let r = text.and_then(|text| {
        with_world(|w| -> MpiResult<()> {
            let e = &mut w.ranks[g.me as usize].errors;
            // Only added classes and codes take strings (MPI 4.0 §9.5).
            if code <= rt::MPI_ERR_LASTCODE || e.class(code).is_none() {
                return Err(mpi_err(
                    rt::MPI_ERR_ARG,
                    format!("{code} is not an error class or code added by MPI_Add_error_class/code"),
                ));
            }
            e.strings.insert(code, text);
            Ok(())
        })
    });
    result(g.me, rt::MPI_COMM_WORLD, "MPI_Add_error_string", r)
}
