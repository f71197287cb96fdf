//! One-sided communication (MPI chapter 12): window creation, RMA operations,
//! synchronization, and windows' names, info, attributes and error handlers.
//! Errors go to the window's error handler (`MPI_ERRORS_ARE_FATAL` unless
//! the program sets another), or to `MPI_COMM_WORLD`'s when the window
//! itself is not valid.
#![allow(non_snake_case, clippy::missing_safety_doc, clippy::too_many_arguments)]

use std::ffi::{c_char, c_int, c_void};

use crate::mpi::entry::{self, enter_call};
use crate::mpi::op::Op;
use crate::mpi::rma::{self, Access, Memory, Side};
use crate::mpi::ti_trace::{self, ti};
use crate::mpi::{self as rt, mpi_err, with_world, MpiError, MpiResult, MPI_SUCCESS};

use super::args::*;
use super::errhandler;

const MPI_WIN_NULL: c_int = 0;
const MPI_WIN_BASE: c_int = 8;
const MPI_WIN_SIZE: c_int = 9;
const MPI_WIN_DISP_UNIT: c_int = 10;
const MPI_WIN_CREATE_FLAVOR: c_int = 11;
const MPI_WIN_MODEL: c_int = 12;

/// `MPI_Win_errhandler_function`: `void (MPI_Win *, int *, ...)`, the
/// communicator's signature (handles are `int`s).
type WinErrhandlerFn = entry::CommErrhandlerFn;

/// Enters a one-sided call that takes simulated time: SMPI's
/// time-independent trace format has no action for these, so a recording
/// (`-trace-ti`) counts it among the calls it cannot represent.
fn enter_timed(call: &'static str) -> entry::Entry {
    ti!(ti_trace::unrepresented(call));
    enter_call(call)
}

/// Applies window `win`'s error handler to an error of `call`.
fn win_error(me: u32, win: c_int, call: &str, e: MpiError) -> c_int {
    match rma::errhandler(me, win) {
        None => entry::handle_error(me, rt::MPI_COMM_WORLD, call, e),
        Some(h) => errhandler::apply_errhandler(me, h, win, call, &e, &e.message),
    }
}

fn win_result<T>(me: u32, win: c_int, call: &str, r: MpiResult<T>) -> c_int {
    match r {
        Ok(_) => MPI_SUCCESS,
        Err(e) => win_error(me, win, call, e),
    }
}

/// A count argument as `usize` (`MPI_ERR_COUNT` when negative).
fn count(c: c_int) -> MpiResult<usize> {
    usize::try_from(c).map_err(|_| mpi_err(rt::MPI_ERR_COUNT, format!("negative count {c}")))
}

/// A buffer argument as MPI passes it: address, count, datatype.
type Buf = (*const c_void, c_int, c_int);

/// A buffer argument, checked.
fn side((buf, n, dtype): Buf) -> MpiResult<Side> {
    Ok(Side {
        buf: buf as *mut u8,
        count: count(n)?,
        dtype,
    })
}

/// The predefined reduction an accumulate may use (user operations may not).
fn acc_op(op: c_int) -> MpiResult<Op> {
    Op::predefined(op).ok_or_else(|| {
        mpi_err(
            rt::MPI_ERR_OP,
            format!("operation {op} is not a predefined operation (accumulates take only those)"),
        )
    })
}

// ------------------------------------------------------------------ creation

/// The window constructors: `memory` says how the window's memory is given
/// (`baseptr`, when not null, receives its address).
unsafe fn create(
    call: &'static str,
    (size, disp_unit): (Aint, c_int),
    info: c_int,
    comm: c_int,
    memory: Memory,
    baseptr: *mut c_void,
    win: *mut c_int,
) -> c_int {
    // Safety: the program calls this as MPI specifies: its pointers are valid for what it passes.
    unsafe {
        let g = enter_timed(call);
        if win.is_null() {
            return entry::handle_error(g.me, comm, call, mpi_err(rt::MPI_ERR_ARG, "null window pointer"));
        }
        match rma::create(g.me, comm, size, disp_unit, info, memory) {
            Ok((h, base)) => {
                if !baseptr.is_null() {
                    *(baseptr as *mut *mut u8) = base;
                }
                *win = h;
                MPI_SUCCESS
            }
            Err(e) => entry::handle_error(g.me, comm, call, e),
        }
    }
}

/// Exports `MPI_Win_allocate` and `MPI_Win_allocate_shared`: the same
/// parameters, the window's memory (`$memory`) allocated by MPI.
macro_rules! allocate_forms {
    ($($name:ident => $memory:expr;)*) => {$(
        #[no_mangle]
        pub(super) unsafe extern "C" fn $name(
            size: Aint,
            disp_unit: c_int,
            info: c_int,
            comm: c_int,
            baseptr: *mut c_void,
            win: *mut c_int,
        ) -> c_int {
            // Safety: the program calls this as MPI specifies: its pointers are valid for what it passes.
            unsafe { create(stringify!($name), (size, disp_unit), info, comm, $memory, baseptr, win) }
        }
    )*};
}

allocate_forms! {
    MPI_Win_allocate => Memory::Allocate;
    MPI_Win_allocate_shared => Memory::Shared;
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Win_create(
    base: *mut c_void,
    size: Aint,
    disp_unit: c_int,
    info: c_int,
    comm: c_int,
    win: *mut c_int,
) -> c_int {
    let memory = Memory::Given(base as *mut u8);
    // Safety: as the caller's contract.
    unsafe {
        create(
            "MPI_Win_create",
            (size, disp_unit),
            info,
            comm,
            memory,
            std::ptr::null_mut(),
            win,
        )
    }
}

/// `MPI_Win_create_dynamic`: no memory until the program attaches some;
/// displacements are addresses (a unit of 1).
#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Win_create_dynamic(info: c_int, comm: c_int, win: *mut c_int) -> c_int {
    // Safety: as the caller's contract.
    unsafe {
        create(
            "MPI_Win_create_dynamic",
            (0, 1),
            info,
            comm,
            Memory::Dynamic,
            std::ptr::null_mut(),
            win,
        )
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Win_attach(win: c_int, base: *mut c_void, size: Aint) -> c_int {
    let g = enter_timed("MPI_Win_attach");
    let r = if base.is_null() && size != 0 {
        Err(mpi_err(rt::MPI_ERR_ARG, "null base with a non-zero size"))
    } else {
        rma::attach(g.me, win, base as *mut u8, size)
    };
    win_result(g.me, win, "MPI_Win_attach", r)
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Win_detach(win: c_int, base: *const c_void) -> c_int {
    let g = enter_call("MPI_Win_detach");
    win_result(
        g.me,
        win,
        "MPI_Win_detach",
        rma::detach(g.me, win, base as *const u8),
    )
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Win_free(win: *mut c_int) -> c_int {
    // Safety: as the caller's contract.
    unsafe {
        let g = enter_timed("MPI_Win_free");
        if win.is_null() {
            return win_error(
                g.me,
                0,
                "MPI_Win_free",
                mpi_err(rma::MPI_ERR_WIN, "null window pointer"),
            );
        }
        let h = *win;
        match rma::free(g.me, h) {
            Ok(attrs) => {
                for (k, v) in attrs {
                    if let Ok(kv) = crate::mpi::attr::keyval(k) {
                        crate::mpi::attr::delete_value(kv, h, k, v);
                    }
                }
                *win = MPI_WIN_NULL;
                MPI_SUCCESS
            }
            Err(e) => win_error(g.me, h, "MPI_Win_free", e),
        }
    }
}

// ------------------------------------------------------------------ operations

/// Exports an RMA operation and its request-based form (`MPI_Put` and
/// `MPI_Rput`): the same parameters, plus the request in the second. `$body`
/// is the call, with `$call` bound to the exported name and `$req` to the
/// request: `None` in the first form, `Some(req)` in the second.
macro_rules! request_forms {
    ($(
        $name:ident / $rname:ident ($($p:ident: $t:ty),* $(,)?) => |$call:ident, $req:ident| $body:expr;
    )*) => {$(
        #[no_mangle]
        pub(super) unsafe extern "C" fn $name($($p: $t),*) -> c_int {
            let ($call, $req) = (stringify!($name), None);
            // Safety: the program calls this as MPI specifies: its pointers are valid for what it passes.
            unsafe { $body }
        }

        #[no_mangle]
        pub(super) unsafe extern "C" fn $rname($($p: $t,)* req: *mut c_int) -> c_int {
            let ($call, $req) = (stringify!($rname), Some(req));
            // Safety: as above.
            unsafe { $body }
        }
    )*};
}

request_forms! {
    MPI_Put / MPI_Rput(
        oaddr: *const c_void, ocount: c_int, odt: c_int, target: c_int, disp: Aint, tcount: c_int, tdt: c_int,
        win: c_int,
    ) => |call, req| {
        op_call(call, Ok(Access::Put), (oaddr, ocount, odt), target, disp, (tcount, tdt), win, req)
    };
    MPI_Get / MPI_Rget(
        oaddr: *mut c_void, ocount: c_int, odt: c_int, target: c_int, disp: Aint, tcount: c_int, tdt: c_int,
        win: c_int,
    ) => |call, req| {
        op_call(call, Ok(Access::Get), (oaddr, ocount, odt), target, disp, (tcount, tdt), win, req)
    };
    MPI_Accumulate / MPI_Raccumulate(
        oaddr: *const c_void, ocount: c_int, odt: c_int, target: c_int, disp: Aint, tcount: c_int, tdt: c_int,
        op: c_int, win: c_int,
    ) => |call, req| {
        let access = acc_op(op).map(Access::Accumulate);
        op_call(call, access, (oaddr, ocount, odt), target, disp, (tcount, tdt), win, req)
    };
    MPI_Get_accumulate / MPI_Rget_accumulate(
        oaddr: *const c_void, ocount: c_int, odt: c_int, raddr: *mut c_void, rcount: c_int, rdt: c_int,
        target: c_int, disp: Aint, tcount: c_int, tdt: c_int, op: c_int, win: c_int,
    ) => |call, req| {
        let (origin, result): (Buf, Buf) = ((oaddr, ocount, odt), (raddr, rcount, rdt));
        get_accumulate_call(call, origin, result, target, disp, (tcount, tdt), op, win, req)
    };
}

/// `MPI_Put`, `MPI_Get` or `MPI_Accumulate` (`access`, or the error of its
/// operation), or their request-based forms (`req` is `Some`; a null pointer
/// is an error): from or to `origin`, the target's count and datatype at
/// `disp` in rank `target`'s window. A request-based operation that completed
/// at once gets a request that is already complete.
unsafe fn op_call(
    call: &'static str,
    access: MpiResult<Access>,
    origin: Buf,
    target: c_int,
    disp: Aint,
    (tcount, tdt): (c_int, c_int),
    win: c_int,
    req: Option<*mut c_int>,
) -> c_int {
    let access = match req {
        Some(p) if p.is_null() => Err(mpi_err(rt::MPI_ERR_ARG, "null request pointer")),
        _ => access,
    };
    let access = match access {
        Ok(a) => a,
        Err(e) => return win_error(rt::current_rank(), win, call, e),
    };
    let g = enter_timed(call);
    let req = req.unwrap_or(std::ptr::null_mut());
    let keep = !req.is_null();
    let r = (|| {
        let origin = side(origin)?;
        let tside = side((std::ptr::null(), tcount, tdt))?;
        rma::operate(g.me, win, access, origin, target, disp, tside, keep)
    })();
    match r {
        Ok(id) => {
            if keep {
                let h = match id {
                    Some(id) => id as c_int + 1,
                    None => completed_request(g.me),
                };
                // Safety: `req` is valid for a write (checked non-null above).
                unsafe { *req = h };
            }
            MPI_SUCCESS
        }
        Err(e) => win_error(g.me, win, call, e),
    }
}

/// A request that is already complete (an operation that finished at once).
fn completed_request(me: u32) -> c_int {
    with_world(|w| {
        let mut r = rt::Request::local(rt::ReqKind::Recv, me, rt::MPI_COMM_WORLD, None);
        r.done = true;
        r.status.source = rt::MPI_PROC_NULL;
        r.status.tag = rt::MPI_ANY_TAG;
        w.alloc_req(r) as c_int + 1
    })
}

/// `MPI_Get_accumulate` and the calls made of it: done before returning, so
/// the request of `MPI_Rget_accumulate` (`req`, when not null) is complete.
unsafe fn get_accumulate_call(
    call: &'static str,
    origin: Buf,
    result: Buf,
    target: c_int,
    disp: Aint,
    (tcount, tdt): (c_int, c_int),
    op: c_int,
    win: c_int,
    req: Option<*mut c_int>,
) -> c_int {
    let g = enter_timed(call);
    let r = (|| {
        let op = acc_op(op)?;
        let origin = side(origin)?;
        let result = side(result)?;
        let tside = side((std::ptr::null(), tcount, tdt))?;
        rma::get_accumulate(g.me, win, call, origin, result, target, disp, tside, op)
    })();
    let rc = win_result(g.me, win, call, r);
    if let Some(req) = req.filter(|p| rc == MPI_SUCCESS && !p.is_null()) {
        // Safety: `req` is valid for a write (not null, the caller's contract).
        unsafe { *req = completed_request(rt::current_rank()) };
    }
    rc
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Fetch_and_op(
    oaddr: *const c_void,
    raddr: *mut c_void,
    dt: c_int,
    target: c_int,
    disp: Aint,
    op: c_int,
    win: c_int,
) -> c_int {
    let (origin, result): (Buf, Buf) = ((oaddr, 1, dt), (raddr, 1, dt));
    // Safety: as the caller's contract.
    unsafe {
        get_accumulate_call(
            "MPI_Fetch_and_op",
            origin,
            result,
            target,
            disp,
            (1, dt),
            op,
            win,
            None,
        )
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Compare_and_swap(
    oaddr: *const c_void,
    caddr: *const c_void,
    raddr: *mut c_void,
    dt: c_int,
    target: c_int,
    disp: Aint,
    win: c_int,
) -> c_int {
    timed("MPI_Compare_and_swap", win, |me| {
        let (o, c, r) = (oaddr as *const u8, caddr as *const u8, raddr as *mut u8);
        rma::compare_and_swap(me, win, o, c, r, dt, target, disp)
    })
}

// ------------------------------------------------------------------ synchronization

/// A call on window `win` that takes simulated time: `f(me)`, an error to
/// the window's handler.
fn timed(call: &'static str, win: c_int, f: impl FnOnce(u32) -> MpiResult<()>) -> c_int {
    let g = enter_timed(call);
    win_result(g.me, win, call, f(g.me))
}

/// [`timed`] for a call on target `rank`: nothing to do for `MPI_PROC_NULL`.
fn timed_at(call: &'static str, win: c_int, rank: c_int, f: impl FnOnce(u32) -> MpiResult<()>) -> c_int {
    timed(
        call,
        win,
        |me| if rank == rt::MPI_PROC_NULL { Ok(()) } else { f(me) },
    )
}

/// A call on window `win` that takes no simulated time: `f(me)`, an error to
/// the window's handler.
fn local(call: &'static str, win: c_int, f: impl FnOnce(u32) -> MpiResult<()>) -> c_int {
    let g = enter_call(call);
    win_result(g.me, win, call, f(g.me))
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Win_fence(assert: c_int, win: c_int) -> c_int {
    timed("MPI_Win_fence", win, |me| rma::fence(me, win, assert))
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Win_start(group: c_int, _assert: c_int, win: c_int) -> c_int {
    timed("MPI_Win_start", win, |me| {
        super::group::group_of(me, group).and_then(|grp| rma::start(me, win, grp))
    })
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Win_post(group: c_int, _assert: c_int, win: c_int) -> c_int {
    timed("MPI_Win_post", win, |me| {
        super::group::group_of(me, group).and_then(|grp| rma::post(me, win, grp))
    })
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Win_complete(win: c_int) -> c_int {
    timed("MPI_Win_complete", win, |me| rma::complete(me, win))
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Win_wait(win: c_int) -> c_int {
    timed("MPI_Win_wait", win, |me| rma::win_wait(me, win, true).map(|_| ()))
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Win_test(win: c_int, flag: *mut c_int) -> c_int {
    timed("MPI_Win_test", win, |me| {
        let done = rma::win_wait(me, win, false)?;
        // Safety: as the caller's contract.
        unsafe { set(flag, done as c_int) };
        Ok(())
    })
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Win_lock(
    lock_type: c_int,
    rank: c_int,
    _assert: c_int,
    win: c_int,
) -> c_int {
    timed_at("MPI_Win_lock", win, rank, |me| {
        rma::lock(me, win, lock_type, rank)
    })
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Win_unlock(rank: c_int, win: c_int) -> c_int {
    timed_at("MPI_Win_unlock", win, rank, |me| rma::unlock(me, win, rank))
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Win_lock_all(_assert: c_int, win: c_int) -> c_int {
    timed("MPI_Win_lock_all", win, |me| rma::lock_all(me, win))
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Win_unlock_all(win: c_int) -> c_int {
    timed("MPI_Win_unlock_all", win, |me| rma::unlock_all(me, win))
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Win_flush(rank: c_int, win: c_int) -> c_int {
    timed_at("MPI_Win_flush", win, rank, |me| rma::flush(me, win, rank))
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Win_flush_local(rank: c_int, win: c_int) -> c_int {
    timed_at("MPI_Win_flush_local", win, rank, |me| {
        rma::flush_local(me, win, rank)
    })
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Win_flush_all(win: c_int) -> c_int {
    timed("MPI_Win_flush_all", win, |me| rma::flush_all(me, win))
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Win_flush_local_all(win: c_int) -> c_int {
    timed("MPI_Win_flush_local_all", win, |me| rma::flush_local_all(me, win))
}

/// `MPI_Win_sync`: the memory of a window is the process's memory (one
/// process, the unified model): nothing to synchronize.
#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Win_sync(win: c_int) -> c_int {
    local("MPI_Win_sync", win, |me| rma::with_member(me, win, |_, _| ()))
}

// ------------------------------------------------------------------ queries, names, info

/// A call on window `win` that answers in `*out` (when not null): `f(me)`,
/// an error to the window's handler.
///
/// # Safety
/// `out` is null or valid for a write.
unsafe fn query<T>(
    call: &'static str,
    win: c_int,
    out: *mut T,
    f: impl FnOnce(u32) -> MpiResult<T>,
) -> c_int {
    local(call, win, |me| {
        let v = f(me)?;
        // Safety: as this function's contract.
        unsafe { set(out, v) };
        Ok(())
    })
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Win_shared_query(
    win: c_int,
    rank: c_int,
    size: *mut Aint,
    disp_unit: *mut c_int,
    baseptr: *mut c_void,
) -> c_int {
    local("MPI_Win_shared_query", win, |me| {
        let (s, d, b) = rma::shared_query(me, win, rank)?;
        // Safety: as the caller's contract.
        unsafe {
            set(size, s);
            set(disp_unit, d);
            set(baseptr as *mut *mut u8, b);
        }
        Ok(())
    })
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Win_get_group(win: c_int, group: *mut c_int) -> c_int {
    // Safety: as the caller's contract.
    unsafe {
        query("MPI_Win_get_group", win, group, |me| {
            rma::group(me, win).map(|members| super::group::add_group(me, members))
        })
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Win_set_name(win: c_int, name: *const c_char) -> c_int {
    local("MPI_Win_set_name", win, |me| {
        if name.is_null() {
            return Err(mpi_err(rt::MPI_ERR_ARG, "null name"));
        }
        // Safety: a C string, as MPI requires.
        let s = unsafe { std::ffi::CStr::from_ptr(name) }
            .to_string_lossy()
            .into_owned();
        rma::with_member(me, win, |m, _| m.name = s)
    })
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Win_get_name(win: c_int, name: *mut c_char, len: *mut c_int) -> c_int {
    local("MPI_Win_get_name", win, |me| {
        let s = rma::with_member(me, win, |m, _| m.name.clone())?;
        // Safety: as the caller's contract (MPI_MAX_OBJECT_NAME characters).
        unsafe { write_cstr(name, &s, len, 128) };
        Ok(())
    })
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Win_get_info(win: c_int, info: *mut c_int) -> c_int {
    // Safety: as the caller's contract.
    unsafe {
        query("MPI_Win_get_info", win, info, |me| {
            rma::with_member(me, win, |m, infos| rma::info_in_use(infos, m.info))?
        })
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Win_set_info(win: c_int, info: c_int) -> c_int {
    local("MPI_Win_set_info", win, |me| {
        rma::with_member(me, win, |m, infos| -> MpiResult<()> {
            // New hints add to (or replace) the ones given before.
            let given = rma::window_info(infos, info)?;
            if m.info <= 0 {
                m.info = given;
                return Ok(());
            }
            for n in 0..infos.nkeys(given)? {
                let key = infos.nth_key(given, n as c_int)?;
                if let Some(v) = infos.get(given, &key)? {
                    infos.set(m.info, &key, &v)?;
                }
            }
            infos.free(given)
        })?
    })
}

// ------------------------------------------------------------------ error handlers

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Win_create_errhandler(
    f: Option<WinErrhandlerFn>,
    eh: *mut c_int,
) -> c_int {
    // Safety: as the caller's contract.
    unsafe { errhandler::create_errhandler(f, eh) }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Win_set_errhandler(win: c_int, eh: c_int) -> c_int {
    local("MPI_Win_set_errhandler", win, |me| {
        if !errhandler::is_errhandler(eh) {
            return Err(mpi_err(rt::MPI_ERR_ARG, format!("invalid error handler {eh}")));
        }
        rma::with_member(me, win, |m, _| m.errhandler = eh)
    })
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Win_get_errhandler(win: c_int, eh: *mut c_int) -> c_int {
    // Safety: as the caller's contract.
    unsafe {
        query("MPI_Win_get_errhandler", win, eh, |me| {
            rma::with_member(me, win, |m, _| m.errhandler)
        })
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Win_call_errhandler(win: c_int, code: c_int) -> c_int {
    errhandler::call_errhandler("MPI_Win_call_errhandler", win, code, win_error)
}

// ------------------------------------------------------------------ attributes

super::attr::aliases! {
    // Windows and communicators share the keyvals.
    MPI_Win_create_keyval(copy: usize, delete: usize, keyval: *mut c_int, extra: *mut c_void) =
        super::attr::MPI_Comm_create_keyval;
    /// `MPI_WIN_DUP_FN`: the attribute's value is copied (windows are never
    /// duplicated, but programs name it when creating keyvals).
    MPI_WIN_DUP_FN(
        win: c_int, key: c_int, extra: *mut c_void, inval: *mut c_void, outval: *mut c_void, flag: *mut c_int,
    ) = super::attr::MPI_COMM_DUP_FN;
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Win_free_keyval(keyval: *mut c_int) -> c_int {
    if keyval.is_null() {
        return rt::MPI_ERR_ARG;
    }
    // Safety: as the caller's contract.
    unsafe { super::attr::MPI_Comm_free_keyval(keyval) }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Win_set_attr(win: c_int, key: c_int, val: *mut c_void) -> c_int {
    let g = enter_call("MPI_Win_set_attr");
    let r = (|| -> MpiResult<()> {
        let kv = crate::mpi::attr::keyval(key)?;
        let old = rma::with_member(g.me, win, |m, _| m.attrs.insert(key, val as usize))?;
        if let Some(old) = old {
            // Safety: the program's delete callback, called as MPI specifies.
            unsafe { crate::mpi::attr::delete_value(kv, win, key, old) };
        }
        Ok(())
    })();
    win_result(g.me, win, "MPI_Win_set_attr", r)
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Win_get_attr(
    win: c_int,
    key: c_int,
    val: *mut c_void,
    flag: *mut c_int,
) -> c_int {
    let g = enter_call("MPI_Win_get_attr");
    let r = rma::with_member(g.me, win, |m, _| -> Option<usize> {
        match key {
            MPI_WIN_BASE => Some(m.base as usize),
            MPI_WIN_SIZE => Some(&m.attr_size as *const isize as usize),
            MPI_WIN_DISP_UNIT => Some(&m.attr_disp_unit as *const i32 as usize),
            MPI_WIN_CREATE_FLAVOR => Some(&m.attr_flavor as *const i32 as usize),
            MPI_WIN_MODEL => Some(&m.attr_model as *const i32 as usize),
            _ => m.attrs.get(&key).copied(),
        }
    });
    match r {
        // Safety: as the caller's contract.
        Ok(v) => unsafe { super::attr::answer(val, flag, v) },
        Err(e) => win_error(g.me, win, "MPI_Win_get_attr", e),
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Win_delete_attr(win: c_int, key: c_int) -> c_int {
    local("MPI_Win_delete_attr", win, |me| {
        crate::mpi::attr::keyval(key)?;
        let take = || rma::with_member(me, win, |m, _| m.attrs.remove(&key));
        let put_back = |v| rma::with_member(me, win, |m, _| m.attrs.insert(key, v));
        // Safety: the program's delete callback, called as MPI specifies.
        unsafe { crate::mpi::attr::delete_attr(win, key, take, put_back) }
    })
}

#[no_mangle]
pub(super) extern "C" fn MPI_Win_c2f(win: c_int) -> c_int {
    win
}

#[no_mangle]
pub(super) extern "C" fn MPI_Win_f2c(win: c_int) -> c_int {
    win
}

/// `MPI_Aint_add` (address arithmetic, used with dynamic windows' displacements).
#[no_mangle]
pub(super) extern "C" fn MPI_Aint_add(base: Aint, disp: Aint) -> Aint {
    base.wrapping_add(disp)
}

/// `MPI_Aint_diff`.
#[no_mangle]
pub(super) extern "C" fn MPI_Aint_diff(addr1: Aint, addr2: Aint) -> Aint {
    addr1.wrapping_sub(addr2)
}
