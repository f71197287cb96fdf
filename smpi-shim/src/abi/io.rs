//! MPI-IO (MPI chapter 14): the C interface of files — open/close/delete, the access
//! functions in all their forms (explicit offset, individual and shared pointers, collective,
//! ordered, non-blocking, split collective), pointers, views, sizes, hints, atomicity and
//! error handlers. Errors go to the file's error handler (`MPI_ERRORS_RETURN` unless the
//! program sets another), or to `MPI_FILE_NULL`'s when the handle is not a valid file.
#![allow(non_snake_case, clippy::missing_safety_doc, clippy::too_many_arguments)]

use std::ffi::{c_char, c_int, c_void, CStr};

use crate::mpi::entry::{self, enter_call};
use crate::mpi::io::{self, Access, Data};
use crate::mpi::ti_trace::{self, ti};
use crate::mpi::{self as rt, mpi_err, with_world, CStatus, MpiError, MpiResult, StatusInfo, MPI_SUCCESS};

use super::args::*;

type Offset = i64;

/// `MPI_File_errhandler_function`: `void (MPI_File *, int *, ...)`.
type FileErrhandlerFn = unsafe extern "C" fn(*mut c_int, *mut c_int, ...);

/// Enters an MPI-IO call: SMPI's time-independent trace format has no action for these, so
/// a recording (`-trace-ti`) counts it among the calls it cannot represent.
fn enter_io(call: &'static str) -> entry::Entry {
    ti!(ti_trace::unrepresented(call));
    enter_call(call)
}

/// Applies file `fh`'s error handler to an error of `call`.
fn file_error(me: u32, fh: c_int, call: &str, e: MpiError) -> c_int {
    let message = if fh > 0 && !io::path_of(fh).is_empty() {
        format!("{} (file {fh}, `{}`)", e.message, io::path_of(fh))
    } else {
        e.message.clone()
    };
    super::errhandler::apply_errhandler(me, io::errhandler(me, fh), fh, call, &e, &message)
}

fn file_result<T>(me: u32, fh: c_int, call: &str, r: MpiResult<T>) -> c_int {
    match r {
        Ok(_) => MPI_SUCCESS,
        Err(e) => file_error(me, fh, call, e),
    }
}

/// The buffer, count and datatype of an access, checked.
fn data(buf: usize, count: c_int, dtype: c_int) -> MpiResult<Data> {
    arg_data(buf as *const c_void, count, dtype, P2P_BUF)?;
    if count > 0 {
        arg_dtype(dtype, "datatype")?;
    }
    Ok(Data {
        buf: buf as *mut u8,
        count: count.max(0) as usize,
        dtype,
    })
}

/// Ends a blocking access: status, or the error through the file's handler.
unsafe fn finish(me: u32, fh: c_int, call: &str, status: *mut CStatus, r: MpiResult<StatusInfo>) -> c_int {
    match r {
        Ok(s) => {
            // Safety: `status` is MPI_STATUS_IGNORE (null) or valid (the caller's contract).
            unsafe { write_status(status, &s) };
            MPI_SUCCESS
        }
        Err(e) => file_error(me, fh, call, e),
    }
}

unsafe fn cstr(p: *const c_char, what: &str) -> MpiResult<String> {
    if p.is_null() {
        return Err(mpi_err(io::MPI_ERR_BAD_FILE, format!("{what} is NULL")));
    }
    // Safety: a NUL-terminated string (the caller's contract).
    Ok(unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
}

// ------------------------------------------------------------------ open, close, delete

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_File_open(
    comm: c_int,
    filename: *const c_char,
    amode: c_int,
    info: c_int,
    fh: *mut c_int,
) -> c_int {
    let call = "MPI_File_open";
    let g = enter_io(call);
    // Safety: as the caller's contract.
    unsafe {
        if fh.is_null() {
            return file_error(g.me, 0, call, mpi_err(rt::MPI_ERR_ARG, "fh is NULL"));
        }
        if with_world(|w| w.ranks[g.me as usize].comm(comm).map(|_| ())).is_err() {
            return entry::handle_error(
                g.me,
                comm,
                call,
                mpi_err(rt::MPI_ERR_COMM, format!("invalid communicator {comm}")),
            );
        }
        let r = cstr(filename, "filename").and_then(|path| io::open(g.me, comm, &path, amode, info));
        match r {
            Ok(h) => {
                *fh = h;
                MPI_SUCCESS
            }
            Err(e) => {
                *fh = 0;
                file_error(g.me, 0, call, e)
            }
        }
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_File_close(fh: *mut c_int) -> c_int {
    let call = "MPI_File_close";
    let g = enter_io(call);
    // Safety: as the caller's contract.
    unsafe {
        if fh.is_null() {
            return file_error(g.me, 0, call, mpi_err(rt::MPI_ERR_ARG, "fh is NULL"));
        }
        let h = *fh;
        match io::close(g.me, h) {
            Ok(()) => {
                *fh = 0;
                MPI_SUCCESS
            }
            Err(e) => file_error(g.me, h, call, e),
        }
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_File_delete(filename: *const c_char, _info: c_int) -> c_int {
    let call = "MPI_File_delete";
    let g = enter_io(call);
    // Safety: as the caller's contract.
    let r = unsafe { cstr(filename, "filename") }.and_then(|p| io::delete(g.me, &p));
    file_result(g.me, 0, call, r)
}

// ------------------------------------------------------------------ accesses

/// The access functions (MPI 14.4), one row per access form and direction: the blocking
/// function, then the non-blocking one (`, MPI_File_i...`) and the split collective pair
/// (`| _begin / _end`) where MPI has them; independent forms first, then collective ones. Each
/// function forwards to [`blocking`], [`nonblocking`], [`split_begin`] or [`split_end`] with
/// its form (an [`Access`], carrying the offset argument of the `_at` forms) and direction,
/// which also sets the buffer's type (`const` for writes); every form's logic is in
/// [`io::access`], once.
macro_rules! access_forms {
    ($($how:ident $(($off:ident))? $dir:ident: $blocking:ident $(, $nb:ident)? $(| $begin:ident / $end:ident)?;)*) => {$(
        access_forms!(@form $dir $how ($($off)?) $blocking [$($nb)?] [$($begin $end)?]);
    )*};
    (@form $dir:ident $how:ident $offset:tt $blocking:ident [$($nb:ident)?] [$($begin:ident $end:ident)?]) => {
        access_forms!(@start $dir $how $offset $blocking (status: *mut CStatus) blocking);
        $(access_forms!(@start $dir $how $offset $nb (request: *mut c_int) nonblocking);)?
        $(
            access_forms!(@start $dir $how $offset $begin () split_begin);
            #[no_mangle]
            pub(super) unsafe extern "C" fn $end(fh: c_int, _buf: access_forms!(@buf $dir), status: *mut CStatus) -> c_int {
                // Safety: as the caller's contract.
                unsafe { split_end(fh, status, stringify!($begin), stringify!($end)) }
            }
        )?
    };
    // A function that starts an access: `fh`, the offset if any, the data, then `$last`.
    (@start $dir:ident $how:ident ($($off:ident)?) $name:ident ($($last:ident: $last_ty:ty)?) $f:ident) => {
        #[no_mangle]
        pub(super) unsafe extern "C" fn $name(
            fh: c_int,
            $($off: Offset,)?
            buf: access_forms!(@buf $dir),
            count: c_int,
            datatype: c_int,
            $($last: $last_ty)?
        ) -> c_int {
            let (how, write) = (Access::$how$(($off))?, access_forms!(@write $dir));
            // Safety: as the caller's contract.
            unsafe { $f(fh, how, write, (buf as *const c_void, count, datatype), $($last,)? stringify!($name)) }
        }
    };
    (@buf read) => { *mut c_void };
    (@buf write) => { *const c_void };
    (@write read) => { false };
    (@write write) => { true };
}

access_forms! {
    At(offset) read:     MPI_File_read_at, MPI_File_iread_at;
    At(offset) write:    MPI_File_write_at, MPI_File_iwrite_at;
    Individual read:     MPI_File_read, MPI_File_iread;
    Individual write:    MPI_File_write, MPI_File_iwrite;
    Shared read:         MPI_File_read_shared, MPI_File_iread_shared;
    Shared write:        MPI_File_write_shared, MPI_File_iwrite_shared;
    AtAll(offset) read:  MPI_File_read_at_all, MPI_File_iread_at_all | MPI_File_read_at_all_begin / MPI_File_read_at_all_end;
    AtAll(offset) write: MPI_File_write_at_all, MPI_File_iwrite_at_all | MPI_File_write_at_all_begin / MPI_File_write_at_all_end;
    All read:            MPI_File_read_all, MPI_File_iread_all | MPI_File_read_all_begin / MPI_File_read_all_end;
    All write:           MPI_File_write_all, MPI_File_iwrite_all | MPI_File_write_all_begin / MPI_File_write_all_end;
    Ordered read:        MPI_File_read_ordered | MPI_File_read_ordered_begin / MPI_File_read_ordered_end;
    Ordered write:       MPI_File_write_ordered | MPI_File_write_ordered_begin / MPI_File_write_ordered_end;
}

/// An access's buffer, count and datatype, as the program passes them.
type DataArgs = (*const c_void, c_int, c_int);

/// Enters access function `call` and makes the access (a write if `write`): its data checked,
/// then the operation. The entry (whose drop ends the call) goes back to the caller.
fn start(
    call: &'static str,
    fh: c_int,
    how: Access,
    write: bool,
    (buf, count, dtype): DataArgs,
) -> (entry::Entry, MpiResult<StatusInfo>) {
    let g = enter_io(call);
    let r = data(buf as usize, count, dtype).and_then(|d| io::access(g.me, fh, &d, how, write, call));
    (g, r)
}

/// A blocking access (`MPI_File_read`, `..._at`, `..._all`, ...): the status.
unsafe fn blocking(
    fh: c_int,
    how: Access,
    write: bool,
    data: DataArgs,
    status: *mut CStatus,
    call: &'static str,
) -> c_int {
    let (g, r) = start(call, fh, how, write, data);
    // Safety: as the caller's contract.
    unsafe { finish(g.me, fh, call, status, r) }
}

/// A non-blocking access (`MPI_File_iread`, ...): the operation now, and a request complete at
/// once.
unsafe fn nonblocking(
    fh: c_int,
    how: Access,
    write: bool,
    data: DataArgs,
    req: *mut c_int,
    call: &'static str,
) -> c_int {
    let (g, r) = start(call, fh, how, write, data);
    if req.is_null() {
        return file_error(
            g.me,
            fh,
            call,
            mpi_err(rt::MPI_ERR_REQUEST, "null request pointer"),
        );
    }
    match r {
        Ok(s) => {
            let id = io::done_request(g.me, s);
            // Safety: checked non-null; the caller's contract.
            unsafe { set(req, id as c_int + 1) };
            MPI_SUCCESS
        }
        Err(e) => file_error(g.me, fh, call, e),
    }
}

/// The `_begin` of a split collective: the whole operation now; its `_end` returns the status.
/// Unsafe as the other access functions: the buffer must hold `count` elements of the datatype.
unsafe fn split_begin(fh: c_int, how: Access, write: bool, data: DataArgs, call: &'static str) -> c_int {
    let (g, r) = start(call, fh, how, write, data);
    file_result(g.me, fh, call, io::split_begin(g.me, fh, call, r))
}

/// The `_end` of the split collective begun by `begin`: its status.
unsafe fn split_end(fh: c_int, status: *mut CStatus, begin: &str, call: &'static str) -> c_int {
    let g = enter_io(call);
    let r = io::split_end(g.me, fh, begin, call);
    // Safety: as the caller's contract.
    unsafe { finish(g.me, fh, call, status, r) }
}

// ------------------------------------------------------------------ pointers, views, sizes, hints

/// Writes `v` to `out`, or reports a NULL `out` as `MPI_ERR_ARG` naming it.
unsafe fn out<T>(me: u32, fh: c_int, call: &str, out: *mut T, name: &str, v: MpiResult<T>) -> c_int {
    if out.is_null() {
        return file_error(me, fh, call, mpi_err(rt::MPI_ERR_ARG, format!("{name} is NULL")));
    }
    match v {
        Ok(v) => {
            // Safety: checked non-null; the caller's contract.
            unsafe { *out = v };
            MPI_SUCCESS
        }
        Err(e) => file_error(me, fh, call, e),
    }
}

/// Exports the file functions that make one operation of [`io`] on file `fh`, one line each.
/// `=> |me| op`: the operation's error, if any, goes through the file's error handler;
/// `-> out = |me| value`: the value goes to the program's pointer `out` (a NULL one is
/// `MPI_ERR_ARG` naming it, see [`out`]). `me` is the calling rank; `|me, call|` also names the
/// call (the function's name).
macro_rules! file_calls {
    () => {};
    ($name:ident($fh:ident $(, $p:ident: $t:ty)*) => |$me:ident $(, $call:ident)?| $op:expr; $($rest:tt)*) => {
        #[no_mangle]
        pub(super) unsafe extern "C" fn $name($fh: c_int $(, $p: $t)*) -> c_int {
            let call = stringify!($name);
            let g = enter_io(call);
            let $me = g.me;
            $(let $call = call;)?
            file_result(g.me, $fh, call, $op)
        }
        file_calls!($($rest)*);
    };
    ($name:ident($fh:ident $(, $p:ident: $t:ty)*) -> $out:ident = |$me:ident| $value:expr; $($rest:tt)*) => {
        #[no_mangle]
        pub(super) unsafe extern "C" fn $name($fh: c_int $(, $p: $t)*) -> c_int {
            let call = stringify!($name);
            let g = enter_io(call);
            let $me = g.me;
            // Safety: as the caller's contract.
            unsafe { out(g.me, $fh, call, $out, stringify!($out), $value) }
        }
        file_calls!($($rest)*);
    };
}

file_calls! {
    MPI_File_seek(fh, offset: Offset, whence: c_int) => |me| io::seek(me, fh, offset, whence);
    MPI_File_seek_shared(fh, offset: Offset, whence: c_int) => |me| io::seek_shared(me, fh, offset, whence);
    MPI_File_get_position(fh, offset: *mut Offset) -> offset = |me| io::position(me, fh);
    MPI_File_get_position_shared(fh, offset: *mut Offset) -> offset = |me| io::position_shared(me, fh);
    MPI_File_get_byte_offset(fh, offset: Offset, disp: *mut Offset) -> disp = |me| io::byte_offset(me, fh, offset);
    MPI_File_get_type_extent(fh, datatype: c_int, extent: *mut Aint) -> extent = |me| io::amode(me, fh)
        .and_then(|_| arg_dtype(datatype, "datatype").map(|d| if d.size == 0 { 0 } else { d.extent }));
    MPI_File_get_size(fh, size: *mut Offset) -> size = |me| io::get_size(me, fh);
    MPI_File_set_size(fh, size: Offset) => |me, call| io::set_size(me, fh, size, false, call);
    MPI_File_preallocate(fh, size: Offset) => |me, call| io::set_size(me, fh, size, true, call);
    MPI_File_sync(fh) => |me| io::sync(me, fh);
    MPI_File_set_atomicity(fh, flag: c_int) => |me| io::set_atomicity(me, fh, flag != 0);
    MPI_File_get_atomicity(fh, flag: *mut c_int) -> flag = |me| io::atomicity(me, fh).map(c_int::from);
    MPI_File_get_amode(fh, amode: *mut c_int) -> amode = |me| io::amode(me, fh);
    MPI_File_get_group(fh, group: *mut c_int) -> group = |me| {
        let members = |c| with_world(|w| w.ranks[me as usize].comm(c).map(|c| c.shared.group.to_vec()));
        io::comm_of(me, fh).and_then(members).map(|m| super::group::add_group(me, m))
    };
    MPI_File_set_info(fh, info: c_int) => |me| io::set_info(me, fh, info);
    MPI_File_get_info(fh, info_used: *mut c_int) -> info_used = |me| io::get_info(me, fh);
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_File_set_view(
    fh: c_int,
    disp: Offset,
    etype: c_int,
    filetype: c_int,
    datarep: *const c_char,
    info: c_int,
) -> c_int {
    let call = "MPI_File_set_view";
    let g = enter_io(call);
    let rep = if datarep.is_null() {
        "native".to_string()
    } else {
        // Safety: a NUL-terminated string (the caller's contract).
        unsafe { CStr::from_ptr(datarep) }.to_string_lossy().into_owned()
    };
    file_result(
        g.me,
        fh,
        call,
        io::set_view(g.me, fh, disp, etype, filetype, &rep, info),
    )
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_File_get_view(
    fh: c_int,
    disp: *mut Offset,
    etype: *mut c_int,
    filetype: *mut c_int,
    datarep: *mut c_char,
) -> c_int {
    let call = "MPI_File_get_view";
    let g = enter_io(call);
    for (p, name) in [
        (disp.is_null(), "disp"),
        (etype.is_null(), "etype"),
        (filetype.is_null(), "filetype"),
    ] {
        if p {
            return file_error(
                g.me,
                fh,
                call,
                mpi_err(rt::MPI_ERR_ARG, format!("{name} is NULL")),
            );
        }
    }
    match io::get_view(g.me, fh) {
        // Safety: checked non-null (datarep: MPI_MAX_DATAREP_STRING bytes); the caller's contract.
        Ok((d, e, f, rep)) => unsafe {
            *disp = d;
            *etype = e;
            *filetype = f;
            write_cstr(datarep, &rep, std::ptr::null_mut(), 128);
            MPI_SUCCESS
        },
        Err(e) => file_error(g.me, fh, call, e),
    }
}

// ------------------------------------------------------------------ error handlers, handles

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_File_create_errhandler(
    f: Option<FileErrhandlerFn>,
    eh: *mut c_int,
) -> c_int {
    // Safety: as the caller's contract.
    unsafe { super::errhandler::create_errhandler(f, eh) }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_File_set_errhandler(fh: c_int, eh: c_int) -> c_int {
    let call = "MPI_File_set_errhandler";
    let g = enter_call(call);
    if !super::errhandler::is_errhandler(eh) {
        return file_error(
            g.me,
            fh,
            call,
            mpi_err(rt::MPI_ERR_ARG, format!("invalid error handler {eh}")),
        );
    }
    file_result(g.me, fh, call, io::set_errhandler(g.me, fh, eh))
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_File_get_errhandler(fh: c_int, eh: *mut c_int) -> c_int {
    let call = "MPI_File_get_errhandler";
    let g = enter_call(call);
    let r = if fh == 0 {
        Ok(io::errhandler(g.me, 0))
    } else {
        io::amode(g.me, fh).map(|_| io::errhandler(g.me, fh))
    };
    // Safety: as the caller's contract.
    unsafe { out(g.me, fh, call, eh, "errhandler", r) }
}

/// Calls `fh`'s error handler on `code`, as an error in an MPI-IO call would.
#[no_mangle]
pub(super) unsafe extern "C" fn MPI_File_call_errhandler(fh: c_int, code: c_int) -> c_int {
    super::errhandler::call_errhandler("MPI_File_call_errhandler", fh, code, file_error)
}

#[no_mangle]
pub(super) extern "C" fn MPI_File_c2f(fh: c_int) -> c_int {
    fh
}

#[no_mangle]
pub(super) extern "C" fn MPI_File_f2c(fh: c_int) -> c_int {
    fh
}
