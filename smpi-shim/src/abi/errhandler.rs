//! Error handlers and error classes and strings (MPI chapter 9.3, 9.5).
#![allow(non_snake_case, clippy::missing_safety_doc, clippy::too_many_arguments)]

use std::ffi::{c_char, c_int};

use crate::mpi::entry::{self, enter_call, result};
use crate::mpi::{self as rt, mpi_err, with_world, MpiError, MpiResult, MPI_SUCCESS};

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
    let r = if is_errhandler(eh) {
        with_world(|w| w.ranks[g.me as usize].comm_mut(comm).map(|c| c.errhandler = eh))
    } else {
        Err(mpi_err(
            rt::MPI_ERR_ARG,
            format!("unsupported error handler {eh}"),
        ))
    };
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
    unsafe { create_errhandler(f, eh) }
}

/// Registers the program's error handler function `f` (`MPI_Comm_create_errhandler`, and the
/// window and file forms: every object's handler has this C signature) and writes its new
/// handle to `*eh`; `MPI_ERR_ARG` for a null function.
///
/// # Safety
/// `eh` is null or valid for a write.
pub(super) unsafe fn create_errhandler(f: Option<entry::CommErrhandlerFn>, eh: *mut c_int) -> c_int {
    let Some(f) = f else {
        return rt::MPI_ERR_ARG;
    };
    let h = with_world(|w| {
        w.errhandlers.push(f as usize);
        entry::FIRST_USER_ERRHANDLER + w.errhandlers.len() as c_int - 1
    });
    // Safety: as this function's contract.
    unsafe { set(eh, h) };
    MPI_SUCCESS
}

/// Whether `eh` is an error handler an object may take: `MPI_ERRORS_ARE_FATAL`,
/// `MPI_ERRORS_RETURN` or one the program created (`MPI_*_set_errhandler`).
pub(super) fn is_errhandler(eh: c_int) -> bool {
    eh == rt::MPI_ERRORS_ARE_FATAL
        || eh == rt::MPI_ERRORS_RETURN
        || with_world(|w| {
            usize::try_from(eh - entry::FIRST_USER_ERRHANDLER).is_ok_and(|i| i < w.errhandlers.len())
        })
}

/// Applies error handler `handler` of object `object` (a window, a file: communicators go
/// through [`entry::handle_error`]) to error `e` of `call`: `MPI_ERRORS_RETURN` returns the
/// code, a handler the program created is called with the object and the code (then the code
/// is returned), any other ends the run with `message` (the error's, perhaps with more said).
pub(super) fn apply_errhandler(
    me: u32,
    handler: c_int,
    object: c_int,
    call: &str,
    e: &MpiError,
    message: &str,
) -> c_int {
    if handler == rt::MPI_ERRORS_RETURN {
        return e.code;
    }
    match entry::user_errhandler(handler) {
        Some(f) => {
            let (mut o, mut code) = (object, e.code);
            // Safety: the program's handler, called as MPI specifies (no world borrow held).
            unsafe { f(&mut o, &mut code) };
            e.code
        }
        None => entry::abort_run(me, format!("{call}: {message} ({})", entry::short_class(e.code))),
    }
}

/// Calls `comm`'s error handler on `code`, as an error in an MPI call would
/// (`MPI_ERRORS_ARE_FATAL` ends the run); `MPI_SUCCESS` once it returns.
#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Comm_call_errhandler(comm: c_int, code: c_int) -> c_int {
    call_errhandler("MPI_Comm_call_errhandler", comm, code, entry::handle_error)
}

/// `MPI_Comm_call_errhandler` and the window and file forms: applies
/// `object`'s error handler to `code` through `apply` (for a communicator,
/// [`entry::handle_error`]), as an error in an MPI call would; `MPI_SUCCESS`
/// once it returns.
pub(super) fn call_errhandler(
    call: &'static str,
    object: c_int,
    code: c_int,
    apply: impl FnOnce(u32, c_int, &str, MpiError) -> c_int,
) -> c_int {
    let g = enter_call(call);
    apply(
        g.me,
        object,
        call,
        mpi_err(code, format!("error code {code} raised by the program")),
    );
    MPI_SUCCESS
}

super::attr::aliases! {
    // The MPI-1 names of the communicator error handler calls.
    MPI_Errhandler_set(comm: c_int, eh: c_int) = MPI_Comm_set_errhandler;
    MPI_Errhandler_get(comm: c_int, eh: *mut c_int) = MPI_Comm_get_errhandler;
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
