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

const MPI_WIN_NULL: c_int = 0;
const MPI_WIN_BASE: c_int = 8;
const MPI_WIN_SIZE: c_int = 9;
const MPI_WIN_DISP_UNIT: c_int = 10;
const MPI_WIN_CREATE_FLAVOR: c_int = 11;
const MPI_WIN_MODEL: c_int = 12;

/// `MPI_Win_errhandler_function`: `void (MPI_Win *, int *, ...)`.
type WinErrhandlerFn = unsafe extern "C" fn(*mut c_int, *mut c_int, ...);

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
        Some(rt::MPI_ERRORS_RETURN) => e.code,
        Some(h) => match entry::user_errhandler(h) {
            Some(f) => {
                let (mut w, mut code) = (win, e.code);
                // Safety: the program's handler, called as MPI specifies (no world borrow held).
                unsafe { f(&mut w, &mut code) };
                e.code
            }
            None => entry::abort_run(
                me,
                format!("{call}: {} ({})", e.message, entry::short_class(e.code)),
            ),
        },
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

fn side(buf: *const c_void, n: c_int, dtype: c_int) -> MpiResult<Side> {
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

unsafe fn create(
    call: &'static str,
    size: Aint,
    disp_unit: c_int,
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

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Win_create(
    base: *mut c_void,
    size: Aint,
    disp_unit: c_int,
    info: c_int,
    comm: c_int,
    win: *mut c_int,
) -> c_int {
    // Safety: as the caller's contract.
    unsafe {
        create(
            "MPI_Win_create",
            size,
            disp_unit,
            info,
            comm,
            Memory::Given(base as *mut u8),
            std::ptr::null_mut(),
            win,
        )
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Win_allocate(
    size: Aint,
    disp_unit: c_int,
    info: c_int,
    comm: c_int,
    baseptr: *mut c_void,
    win: *mut c_int,
) -> c_int {
    // Safety: as the caller's contract.
    unsafe {
        create(
            "MPI_Win_allocate",
            size,
            disp_unit,
            info,
            comm,
            Memory::Allocate,
            baseptr,
            win,
        )
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Win_allocate_shared(
    size: Aint,
    disp_unit: c_int,
    info: c_int,
    comm: c_int,
    baseptr: *mut c_void,
    win: *mut c_int,
) -> c_int {
    // Safety: as the caller's contract.
    unsafe {
        create(
            "MPI_Win_allocate_shared",
            size,
            disp_unit,
            info,
            comm,
            Memory::Shared,
            baseptr,
            win,
        )
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Win_create_dynamic(info: c_int, comm: c_int, win: *mut c_int) -> c_int {
    // Safety: as the caller's contract.
    unsafe {
        create(
            "MPI_Win_create_dynamic",
            0,
            1,
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

unsafe fn op_call(
    call: &'static str,
    access: Access,
    oaddr: *const c_void,
    ocount: c_int,
    odt: c_int,
    target: c_int,
    disp: Aint,
    tcount: c_int,
    tdt: c_int,
    win: c_int,
    req: *mut c_int,
) -> c_int {
    let g = enter_timed(call);
    let keep = !req.is_null();
    let r = (|| {
        let origin = side(oaddr, ocount, odt)?;
        let tside = side(std::ptr::null(), tcount, tdt)?;
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

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Put(
    oaddr: *const c_void,
    ocount: c_int,
    odt: c_int,
    target: c_int,
    disp: Aint,
    tcount: c_int,
    tdt: c_int,
    win: c_int,
) -> c_int {
    // Safety: as the caller's contract.
    unsafe {
        op_call(
            "MPI_Put",
            Access::Put,
            oaddr,
            ocount,
            odt,
            target,
            disp,
            tcount,
            tdt,
            win,
            std::ptr::null_mut(),
        )
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Get(
    oaddr: *mut c_void,
    ocount: c_int,
    odt: c_int,
    target: c_int,
    disp: Aint,
    tcount: c_int,
    tdt: c_int,
    win: c_int,
) -> c_int {
    // Safety: as the caller's contract.
    unsafe {
        op_call(
            "MPI_Get",
            Access::Get,
            oaddr,
            ocount,
            odt,
            target,
            disp,
            tcount,
            tdt,
            win,
            std::ptr::null_mut(),
        )
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Accumulate(
    oaddr: *const c_void,
    ocount: c_int,
    odt: c_int,
    target: c_int,
    disp: Aint,
    tcount: c_int,
    tdt: c_int,
    op: c_int,
    win: c_int,
) -> c_int {
    let me = rt::current_rank();
    match acc_op(op) {
        // Safety: as the caller's contract.
        Ok(op) => unsafe {
            op_call(
                "MPI_Accumulate",
                Access::Accumulate(op),
                oaddr,
                ocount,
                odt,
                target,
                disp,
                tcount,
                tdt,
                win,
                std::ptr::null_mut(),
            )
        },
        Err(e) => win_error(me, win, "MPI_Accumulate", e),
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Rput(
    oaddr: *const c_void,
    ocount: c_int,
    odt: c_int,
    target: c_int,
    disp: Aint,
    tcount: c_int,
    tdt: c_int,
    win: c_int,
    req: *mut c_int,
) -> c_int {
    if req.is_null() {
        let me = rt::current_rank();
        return win_error(
            me,
            win,
            "MPI_Rput",
            mpi_err(rt::MPI_ERR_ARG, "null request pointer"),
        );
    }
    // Safety: as the caller's contract.
    unsafe {
        op_call(
            "MPI_Rput",
            Access::Put,
            oaddr,
            ocount,
            odt,
            target,
            disp,
            tcount,
            tdt,
            win,
            req,
        )
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Rget(
    oaddr: *mut c_void,
    ocount: c_int,
    odt: c_int,
    target: c_int,
    disp: Aint,
    tcount: c_int,
    tdt: c_int,
    win: c_int,
    req: *mut c_int,
) -> c_int {
    if req.is_null() {
        let me = rt::current_rank();
        return win_error(
            me,
            win,
            "MPI_Rget",
            mpi_err(rt::MPI_ERR_ARG, "null request pointer"),
        );
    }
    // Safety: as the caller's contract.
    unsafe {
        op_call(
            "MPI_Rget",
            Access::Get,
            oaddr,
            ocount,
            odt,
            target,
            disp,
            tcount,
            tdt,
            win,
            req,
        )
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Raccumulate(
    oaddr: *const c_void,
    ocount: c_int,
    odt: c_int,
    target: c_int,
    disp: Aint,
    tcount: c_int,
    tdt: c_int,
    op: c_int,
    win: c_int,
    req: *mut c_int,
) -> c_int {
    let me = rt::current_rank();
    if req.is_null() {
        return win_error(
            me,
            win,
            "MPI_Raccumulate",
            mpi_err(rt::MPI_ERR_ARG, "null request pointer"),
        );
    }
    match acc_op(op) {
        // Safety: as the caller's contract.
        Ok(op) => unsafe {
            op_call(
                "MPI_Raccumulate",
                Access::Accumulate(op),
                oaddr,
                ocount,
                odt,
                target,
                disp,
                tcount,
                tdt,
                win,
                req,
            )
        },
        Err(e) => win_error(me, win, "MPI_Raccumulate", e),
    }
}

unsafe fn get_accumulate_call(
    call: &'static str,
    oaddr: *const c_void,
    ocount: c_int,
    odt: c_int,
    raddr: *mut c_void,
    rcount: c_int,
    rdt: c_int,
    target: c_int,
    disp: Aint,
    tcount: c_int,
    tdt: c_int,
    op: c_int,
    win: c_int,
) -> c_int {
    let g = enter_timed(call);
    let r = (|| {
        let op = acc_op(op)?;
        let origin = side(oaddr, ocount, odt)?;
        let result = side(raddr, rcount, rdt)?;
        let tside = side(std::ptr::null(), tcount, tdt)?;
        rma::get_accumulate(g.me, win, call, origin, result, target, disp, tside, op)
    })();
    win_result(g.me, win, call, r)
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Get_accumulate(
    oaddr: *const c_void,
    ocount: c_int,
    odt: c_int,
    raddr: *mut c_void,
    rcount: c_int,
    rdt: c_int,
    target: c_int,
    disp: Aint,
    tcount: c_int,
    tdt: c_int,
    op: c_int,
    win: c_int,
) -> c_int {
    // Safety: as the caller's contract.
    unsafe {
        get_accumulate_call(
            "MPI_Get_accumulate",
            oaddr,
            ocount,
            odt,
            raddr,
            rcount,
            rdt,
            target,
            disp,
            tcount,
            tdt,
            op,
            win,
        )
    }
}

/// `MPI_Rget_accumulate`: done before returning; the request is complete.
#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Rget_accumulate(
    oaddr: *const c_void,
    ocount: c_int,
    odt: c_int,
    raddr: *mut c_void,
    rcount: c_int,
    rdt: c_int,
    target: c_int,
    disp: Aint,
    tcount: c_int,
    tdt: c_int,
    op: c_int,
    win: c_int,
    req: *mut c_int,
) -> c_int {
    // Safety: as the caller's contract.
    unsafe {
        let rc = get_accumulate_call(
            "MPI_Rget_accumulate",
            oaddr,
            ocount,
            odt,
            raddr,
            rcount,
            rdt,
            target,
            disp,
            tcount,
            tdt,
            op,
            win,
        );
        if rc == MPI_SUCCESS && !req.is_null() {
            *req = completed_request(rt::current_rank());
        }
        rc
    }
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
    // Safety: as the caller's contract.
    unsafe {
        get_accumulate_call(
            "MPI_Fetch_and_op",
            oaddr,
            1,
            dt,
            raddr,
            1,
            dt,
            target,
            disp,
            1,
            dt,
            op,
            win,
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
    let g = enter_timed("MPI_Compare_and_swap");
    let r = rma::compare_and_swap(
        g.me,
        win,
        oaddr as *const u8,
        caddr as *const u8,
        raddr as *mut u8,
        dt,
        target,
        disp,
    );
    win_result(g.me, win, "MPI_Compare_and_swap", r)
}

// ------------------------------------------------------------------ synchronization

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Win_fence(assert: c_int, win: c_int) -> c_int {
    let g = enter_timed("MPI_Win_fence");
    win_result(g.me, win, "MPI_Win_fence", rma::fence(g.me, win, assert))
}

fn group_arg(me: u32, group: c_int) -> MpiResult<rt::Group> {
    super::group::group_of(me, group)
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Win_start(group: c_int, _assert: c_int, win: c_int) -> c_int {
    let g = enter_timed("MPI_Win_start");
    let r = group_arg(g.me, group).and_then(|grp| rma::start(g.me, win, grp));
    win_result(g.me, win, "MPI_Win_start", r)
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Win_post(group: c_int, _assert: c_int, win: c_int) -> c_int {
    let g = enter_timed("MPI_Win_post");
    let r = group_arg(g.me, group).and_then(|grp| rma::post(g.me, win, grp));
    win_result(g.me, win, "MPI_Win_post", r)
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Win_complete(win: c_int) -> c_int {
    let g = enter_timed("MPI_Win_complete");
    win_result(g.me, win, "MPI_Win_complete", rma::complete(g.me, win))
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Win_wait(win: c_int) -> c_int {
    let g = enter_timed("MPI_Win_wait");
    win_result(g.me, win, "MPI_Win_wait", rma::win_wait(g.me, win, true))
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Win_test(win: c_int, flag: *mut c_int) -> c_int {
    let g = enter_timed("MPI_Win_test");
    match rma::win_wait(g.me, win, false) {
        Ok(done) => {
            // Safety: as the caller's contract.
            unsafe { set(flag, done as c_int) };
            MPI_SUCCESS
        }
        Err(e) => win_error(g.me, win, "MPI_Win_test", e),
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Win_lock(
    lock_type: c_int,
    rank: c_int,
    _assert: c_int,
    win: c_int,
) -> c_int {
    let g = enter_timed("MPI_Win_lock");
    let r = if rank == rt::MPI_PROC_NULL {
        Ok(())
    } else {
        rma::lock(g.me, win, lock_type, rank)
    };
    win_result(g.me, win, "MPI_Win_lock", r)
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Win_unlock(rank: c_int, win: c_int) -> c_int {
    let g = enter_timed("MPI_Win_unlock");
    let r = if rank == rt::MPI_PROC_NULL {
        Ok(())
    } else {
        rma::unlock(g.me, win, rank)
    };
    win_result(g.me, win, "MPI_Win_unlock", r)
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Win_lock_all(_assert: c_int, win: c_int) -> c_int {
    let g = enter_timed("MPI_Win_lock_all");
    win_result(g.me, win, "MPI_Win_lock_all", rma::lock_all(g.me, win))
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Win_unlock_all(win: c_int) -> c_int {
    let g = enter_timed("MPI_Win_unlock_all");
    win_result(g.me, win, "MPI_Win_unlock_all", rma::unlock_all(g.me, win))
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Win_flush(rank: c_int, win: c_int) -> c_int {
    let g = enter_timed("MPI_Win_flush");
    let r = if rank == rt::MPI_PROC_NULL {
        Ok(())
    } else {
        rma::flush(g.me, win, rank)
    };
    win_result(g.me, win, "MPI_Win_flush", r)
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Win_flush_local(rank: c_int, win: c_int) -> c_int {
    let g = enter_timed("MPI_Win_flush_local");
    let r = if rank == rt::MPI_PROC_NULL {
        Ok(())
    } else {
        rma::flush_local(g.me, win, rank)
    };
    win_result(g.me, win, "MPI_Win_flush_local", r)
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Win_flush_all(win: c_int) -> c_int {
    let g = enter_timed("MPI_Win_flush_all");
    win_result(g.me, win, "MPI_Win_flush_all", rma::flush_all(g.me, win))
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Win_flush_local_all(win: c_int) -> c_int {
    let g = enter_timed("MPI_Win_flush_local_all");
    win_result(
        g.me,
        win,
        "MPI_Win_flush_local_all",
        rma::flush_local_all(g.me, win),
    )
}

/// `MPI_Win_sync`: the memory of a window is the process's memory (one
/// process, the unified model): nothing to synchronize.
#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Win_sync(win: c_int) -> c_int {
    let g = enter_call("MPI_Win_sync");
    win_result(g.me, win, "MPI_Win_sync", rma::with_member(g.me, win, |_, _| ()))
}

// ------------------------------------------------------------------ queries, names, info

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Win_shared_query(
    win: c_int,
    rank: c_int,
    size: *mut Aint,
    disp_unit: *mut c_int,
    baseptr: *mut c_void,
) -> c_int {
    let g = enter_call("MPI_Win_shared_query");
    match rma::shared_query(g.me, win, rank) {
        // Safety: as the caller's contract.
        Ok((s, d, b)) => unsafe {
            set(size, s);
            set(disp_unit, d);
            set(baseptr as *mut *mut u8, b);
            MPI_SUCCESS
        },
        Err(e) => win_error(g.me, win, "MPI_Win_shared_query", e),
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Win_get_group(win: c_int, group: *mut c_int) -> c_int {
    let g = enter_call("MPI_Win_get_group");
    match rma::group(g.me, win) {
        // Safety: as the caller's contract.
        Ok(members) => unsafe {
            set(group, super::group::add_group(g.me, members));
            MPI_SUCCESS
        },
        Err(e) => win_error(g.me, win, "MPI_Win_get_group", e),
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Win_set_name(win: c_int, name: *const c_char) -> c_int {
    let g = enter_call("MPI_Win_set_name");
    let r = if name.is_null() {
        Err(mpi_err(rt::MPI_ERR_ARG, "null name"))
    } else {
        // Safety: a C string, as MPI requires.
        let s = unsafe { std::ffi::CStr::from_ptr(name) }
            .to_string_lossy()
            .into_owned();
        rma::with_member(g.me, win, |m, _| m.name = s)
    };
    win_result(g.me, win, "MPI_Win_set_name", r)
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Win_get_name(win: c_int, name: *mut c_char, len: *mut c_int) -> c_int {
    let g = enter_call("MPI_Win_get_name");
    match rma::with_member(g.me, win, |m, _| m.name.clone()) {
        // Safety: as the caller's contract (MPI_MAX_OBJECT_NAME characters).
        Ok(s) => unsafe {
            write_cstr(name, &s, len, 128);
            MPI_SUCCESS
        },
        Err(e) => win_error(g.me, win, "MPI_Win_get_name", e),
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Win_get_info(win: c_int, info: *mut c_int) -> c_int {
    let g = enter_call("MPI_Win_get_info");
    let r = rma::with_member(g.me, win, |m, infos| rma::info_in_use(infos, m.info)).and_then(|r| r);
    match r {
        // Safety: as the caller's contract.
        Ok(h) => unsafe {
            set(info, h);
            MPI_SUCCESS
        },
        Err(e) => win_error(g.me, win, "MPI_Win_get_info", e),
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Win_set_info(win: c_int, info: c_int) -> c_int {
    let g = enter_call("MPI_Win_set_info");
    let r = rma::with_member(g.me, win, |m, infos| -> MpiResult<()> {
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
    })
    .and_then(|r| r);
    win_result(g.me, win, "MPI_Win_set_info", r)
}

// ------------------------------------------------------------------ error handlers

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Win_create_errhandler(
    f: Option<WinErrhandlerFn>,
    eh: *mut c_int,
) -> c_int {
    let Some(f) = f else {
        return rt::MPI_ERR_ARG;
    };
    let h = with_world(|w| {
        w.errhandlers.push(f as usize);
        entry::FIRST_USER_ERRHANDLER + w.errhandlers.len() as c_int - 1
    });
    // Safety: as the caller's contract.
    unsafe { set(eh, h) };
    MPI_SUCCESS
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Win_set_errhandler(win: c_int, eh: c_int) -> c_int {
    let g = enter_call("MPI_Win_set_errhandler");
    let valid = with_world(|w| {
        eh == rt::MPI_ERRORS_ARE_FATAL
            || eh == rt::MPI_ERRORS_RETURN
            || usize::try_from(eh - entry::FIRST_USER_ERRHANDLER).is_ok_and(|i| i < w.errhandlers.len())
    });
    let r = if valid {
        rma::with_member(g.me, win, |m, _| m.errhandler = eh)
    } else {
        Err(mpi_err(rt::MPI_ERR_ARG, format!("invalid error handler {eh}")))
    };
    win_result(g.me, win, "MPI_Win_set_errhandler", r)
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Win_get_errhandler(win: c_int, eh: *mut c_int) -> c_int {
    let g = enter_call("MPI_Win_get_errhandler");
    match rma::with_member(g.me, win, |m, _| m.errhandler) {
        // Safety: as the caller's contract.
        Ok(h) => unsafe {
            set(eh, h);
            MPI_SUCCESS
        },
        Err(e) => win_error(g.me, win, "MPI_Win_get_errhandler", e),
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Win_call_errhandler(win: c_int, code: c_int) -> c_int {
    let g = enter_call("MPI_Win_call_errhandler");
    win_error(
        g.me,
        win,
        "MPI_Win_call_errhandler",
        mpi_err(code, format!("error code {code} raised by the program")),
    );
    MPI_SUCCESS
}

// ------------------------------------------------------------------ attributes

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Win_create_keyval(
    copy: usize,
    delete: usize,
    keyval: *mut c_int,
    extra: *mut c_void,
) -> c_int {
    let k = crate::mpi::attr::create_keyval(copy, delete, extra as usize);
    // Safety: as the caller's contract.
    unsafe { set(keyval, k) };
    MPI_SUCCESS
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Win_free_keyval(keyval: *mut c_int) -> c_int {
    // Safety: as the caller's contract.
    unsafe {
        if keyval.is_null() {
            return rt::MPI_ERR_ARG;
        }
        match crate::mpi::attr::free_keyval(*keyval) {
            Ok(()) => {
                *keyval = -1; // MPI_KEYVAL_INVALID
                MPI_SUCCESS
            }
            Err(e) => e.code,
        }
    }
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
        Ok(v) => unsafe {
            if let Some(v) = v {
                *(val as *mut usize) = v;
            }
            set(flag, v.is_some() as c_int);
            MPI_SUCCESS
        },
        Err(e) => win_error(g.me, win, "MPI_Win_get_attr", e),
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Win_delete_attr(win: c_int, key: c_int) -> c_int {
    let g = enter_call("MPI_Win_delete_attr");
    let r = (|| -> MpiResult<()> {
        let kv = crate::mpi::attr::keyval(key)?;
        let old = rma::with_member(g.me, win, |m, _| m.attrs.remove(&key))?;
        if let Some(old) = old {
            // Safety: the program's delete callback, called as MPI specifies.
            let rc = unsafe { crate::mpi::attr::delete_value(kv, win, key, old) };
            if rc != MPI_SUCCESS {
                rma::with_member(g.me, win, |m, _| m.attrs.insert(key, old))?;
                return Err(mpi_err(rc, "attribute delete callback failed"));
            }
        }
        Ok(())
    })();
    win_result(g.me, win, "MPI_Win_delete_attr", r)
}

/// `MPI_WIN_DUP_FN`: the attribute's value is copied (windows are never
/// duplicated, but programs name it when creating keyvals).
#[no_mangle]
pub(super) unsafe extern "C" fn MPI_WIN_DUP_FN(
    _win: c_int,
    _key: c_int,
    _extra: *mut c_void,
    inval: *mut c_void,
    outval: *mut c_void,
    flag: *mut c_int,
) -> c_int {
    // Safety: as the caller's contract.
    unsafe {
        *(outval as *mut *mut c_void) = inval;
        set(flag, 1);
    }
    MPI_SUCCESS
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
