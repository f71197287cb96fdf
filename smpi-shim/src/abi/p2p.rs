//! Point-to-point entry points beyond the basic ones of `abi`: matched probes
//! (`MPI_Mprobe` … `MPI_Imrecv`, message handles), generalized requests, and
//! the MPI 4 large-count (`_c`, `MPI_Count`) forms.
#![allow(non_snake_case, clippy::missing_safety_doc, clippy::too_many_arguments)]

use std::ffi::{c_int, c_void};

use crate::mpi::entry::{self, enter, result, write_status, CStatus};
use crate::mpi::{
    self as rt, mpi_err, with_world, BlockInfo, Greq, GreqCancelFn, GreqFreeFn, GreqQueryFn, SendMode,
    MPI_SUCCESS, MPI_UNDEFINED,
};

use crate::abi::base::{p2p, status_result, write_single_status};

type Count = i64;

unsafe fn set<T>(p: *mut T, v: T) {
    if !p.is_null() {
        *p = v;
    }
}

/// A large count, checked like an `int` one.
fn count_c(me: u32, comm: c_int, call: &str, count: Count) -> Result<usize, c_int> {
    usize::try_from(count).map_err(|_| {
        entry::handle_error(
            me,
            comm,
            call,
            mpi_err(rt::MPI_ERR_COUNT, format!("negative count {count}")),
        )
    })
}

macro_rules! check_count_c {
    ($me:expr, $comm:expr, $call:expr, $count:expr) => {
        match count_c($me, $comm, $call, $count) {
            Ok(c) => c,
            Err(code) => return code,
        }
    };
}

// ------------------------------------------------------------------ matched probes

#[no_mangle]
pub unsafe extern "C" fn MPI_Improbe(
    src: c_int,
    tag: c_int,
    comm: c_int,
    flag: *mut c_int,
    msg: *mut c_int,
    st: *mut CStatus,
) -> c_int {
    let g = enter();
    match rt::improbe(g.me, src, tag, comm) {
        Ok(Some((s, m))) => {
            set(flag, 1);
            set(msg, m);
            write_single_status(st, &s);
            MPI_SUCCESS
        }
        Ok(None) => {
            set(flag, 0);
            MPI_SUCCESS
        }
        Err(e) => entry::handle_error(g.me, comm, "MPI_Improbe", e),
    }
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Mprobe(
    src: c_int,
    tag: c_int,
    comm: c_int,
    msg: *mut c_int,
    st: *mut CStatus,
) -> c_int {
    let g = enter();
    // A loop of Improbe, as SMPI's MPI_Probe is a loop of Iprobe.
    loop {
        match rt::improbe(g.me, src, tag, comm) {
            Ok(Some((s, m))) => {
                set(msg, m);
                write_single_status(st, &s);
                return MPI_SUCCESS;
            }
            Ok(None) => {
                // Nothing yet: make sure simulated time moves even if polling costs are 0.
                if with_world(|w| w.cfg.iprobe <= 0.0) {
                    rt::sleep_for(g.me, 1e-6);
                }
                with_world(|w| {
                    w.ranks[g.me as usize].blocked = Some(BlockInfo {
                        call: "MPI_Mprobe",
                        peer: src,
                        tag,
                        comm,
                    })
                });
            }
            Err(e) => return entry::handle_error(g.me, comm, "MPI_Mprobe", e),
        }
    }
}

/// Starts the receive of a probed message; on success `*msg` becomes
/// `MPI_MESSAGE_NULL`.
unsafe fn start_mrecv(
    me: u32,
    buf: *mut c_void,
    count: usize,
    dt: c_int,
    msg: *mut c_int,
) -> rt::MpiResult<u32> {
    if msg.is_null() || *msg == rt::MESSAGE_NULL {
        return Err(mpi_err(rt::MPI_ERR_REQUEST, "MPI_MESSAGE_NULL is not a message"));
    }
    let a = p2p(
        buf,
        count,
        dt,
        rt::MPI_ANY_SOURCE,
        rt::MPI_ANY_TAG,
        rt::MPI_COMM_WORLD,
    );
    let id = rt::imrecv(me, &a, *msg)?;
    *msg = rt::MESSAGE_NULL;
    Ok(id)
}

unsafe fn mrecv(
    me: u32,
    buf: *mut c_void,
    count: usize,
    dt: c_int,
    msg: *mut c_int,
    st: *mut CStatus,
) -> c_int {
    let id = match start_mrecv(me, buf, count, dt, msg) {
        Ok(id) => id,
        Err(e) => return entry::handle_error(me, rt::MPI_COMM_WORLD, "MPI_Mrecv", e),
    };
    let s = rt::wait(me, id, "MPI_Mrecv");
    write_single_status(st, &s);
    status_result(me, rt::MPI_COMM_WORLD, "MPI_Mrecv", &s, count)
}

unsafe fn imrecv(
    me: u32,
    buf: *mut c_void,
    count: usize,
    dt: c_int,
    msg: *mut c_int,
    req: *mut c_int,
) -> c_int {
    match start_mrecv(me, buf, count, dt, msg) {
        Ok(id) => {
            set(req, id as c_int + 1);
            MPI_SUCCESS
        }
        Err(e) => entry::handle_error(me, rt::MPI_COMM_WORLD, "MPI_Imrecv", e),
    }
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Mrecv(
    buf: *mut c_void,
    count: c_int,
    dt: c_int,
    msg: *mut c_int,
    st: *mut CStatus,
) -> c_int {
    let g = enter();
    let n = check_count_c!(g.me, rt::MPI_COMM_WORLD, "MPI_Mrecv", count as Count);
    mrecv(g.me, buf, n, dt, msg, st)
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Mrecv_c(
    buf: *mut c_void,
    count: Count,
    dt: c_int,
    msg: *mut c_int,
    st: *mut CStatus,
) -> c_int {
    let g = enter();
    let n = check_count_c!(g.me, rt::MPI_COMM_WORLD, "MPI_Mrecv_c", count);
    mrecv(g.me, buf, n, dt, msg, st)
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Imrecv(
    buf: *mut c_void,
    count: c_int,
    dt: c_int,
    msg: *mut c_int,
    req: *mut c_int,
) -> c_int {
    let g = enter();
    let n = check_count_c!(g.me, rt::MPI_COMM_WORLD, "MPI_Imrecv", count as Count);
    imrecv(g.me, buf, n, dt, msg, req)
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Imrecv_c(
    buf: *mut c_void,
    count: Count,
    dt: c_int,
    msg: *mut c_int,
    req: *mut c_int,
) -> c_int {
    let g = enter();
    let n = check_count_c!(g.me, rt::MPI_COMM_WORLD, "MPI_Imrecv_c", count);
    imrecv(g.me, buf, n, dt, msg, req)
}

// Message handles are plain integers in C and Fortran alike.

#[no_mangle]
pub extern "C" fn MPI_Message_c2f(msg: c_int) -> c_int {
    msg
}

#[no_mangle]
pub extern "C" fn MPI_Message_f2c(msg: c_int) -> c_int {
    msg
}

#[no_mangle]
pub extern "C" fn PMPI_Message_c2f(msg: c_int) -> c_int {
    msg
}

#[no_mangle]
pub extern "C" fn PMPI_Message_f2c(msg: c_int) -> c_int {
    msg
}

// ------------------------------------------------------------------ generalized requests

#[no_mangle]
pub unsafe extern "C" fn MPI_Grequest_start(
    query: Option<GreqQueryFn>,
    free: Option<GreqFreeFn>,
    cancel: Option<GreqCancelFn>,
    extra_state: *mut c_void,
    req: *mut c_int,
) -> c_int {
    let g = enter();
    let id = rt::start_greq(
        g.me,
        Greq {
            query,
            free,
            cancel,
            extra_state,
        },
    );
    set(req, id as c_int + 1);
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Grequest_complete(req: c_int) -> c_int {
    let g = enter();
    let r = if req <= 0 {
        Err(mpi_err(
            rt::MPI_ERR_REQUEST,
            "MPI_REQUEST_NULL is not a generalized request",
        ))
    } else {
        rt::complete_greq((req - 1) as u32)
    };
    result(g.me, rt::MPI_COMM_WORLD, "MPI_Grequest_complete", r)
}

// ------------------------------------------------------------------ large-count forms

unsafe fn send_c(
    buf: *const c_void,
    count: Count,
    dt: c_int,
    dst: c_int,
    tag: c_int,
    comm: c_int,
    mode: SendMode,
    call: &'static str,
) -> c_int {
    let g = enter();
    let n = check_count_c!(g.me, comm, call, count);
    result(
        g.me,
        comm,
        call,
        rt::send(g.me, &p2p(buf, n, dt, dst, tag, comm), mode, call),
    )
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Send_c(
    buf: *const c_void,
    count: Count,
    dt: c_int,
    dst: c_int,
    tag: c_int,
    comm: c_int,
) -> c_int {
    send_c(buf, count, dt, dst, tag, comm, SendMode::Standard, "MPI_Send_c")
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Ssend_c(
    buf: *const c_void,
    count: Count,
    dt: c_int,
    dst: c_int,
    tag: c_int,
    comm: c_int,
) -> c_int {
    send_c(buf, count, dt, dst, tag, comm, SendMode::Sync, "MPI_Ssend_c")
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Rsend_c(
    buf: *const c_void,
    count: Count,
    dt: c_int,
    dst: c_int,
    tag: c_int,
    comm: c_int,
) -> c_int {
    send_c(buf, count, dt, dst, tag, comm, SendMode::Ready, "MPI_Rsend_c")
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Bsend_c(
    buf: *const c_void,
    count: Count,
    dt: c_int,
    dst: c_int,
    tag: c_int,
    comm: c_int,
) -> c_int {
    send_c(buf, count, dt, dst, tag, comm, SendMode::Buffered, "MPI_Bsend_c")
}

unsafe fn isend_c(
    buf: *const c_void,
    count: Count,
    dt: c_int,
    dst: c_int,
    tag: c_int,
    comm: c_int,
    mode: SendMode,
    req: *mut c_int,
    call: &'static str,
) -> c_int {
    let g = enter();
    let n = check_count_c!(g.me, comm, call, count);
    match rt::isend(g.me, &p2p(buf, n, dt, dst, tag, comm), mode, true) {
        Ok(id) => {
            set(req, id as c_int + 1);
            MPI_SUCCESS
        }
        Err(e) => entry::handle_error(g.me, comm, call, e),
    }
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Isend_c(
    buf: *const c_void,
    count: Count,
    dt: c_int,
    dst: c_int,
    tag: c_int,
    comm: c_int,
    req: *mut c_int,
) -> c_int {
    isend_c(
        buf,
        count,
        dt,
        dst,
        tag,
        comm,
        SendMode::Standard,
        req,
        "MPI_Isend_c",
    )
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Issend_c(
    buf: *const c_void,
    count: Count,
    dt: c_int,
    dst: c_int,
    tag: c_int,
    comm: c_int,
    req: *mut c_int,
) -> c_int {
    isend_c(
        buf,
        count,
        dt,
        dst,
        tag,
        comm,
        SendMode::Sync,
        req,
        "MPI_Issend_c",
    )
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Irsend_c(
    buf: *const c_void,
    count: Count,
    dt: c_int,
    dst: c_int,
    tag: c_int,
    comm: c_int,
    req: *mut c_int,
) -> c_int {
    isend_c(
        buf,
        count,
        dt,
        dst,
        tag,
        comm,
        SendMode::Ready,
        req,
        "MPI_Irsend_c",
    )
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Ibsend_c(
    buf: *const c_void,
    count: Count,
    dt: c_int,
    dst: c_int,
    tag: c_int,
    comm: c_int,
    req: *mut c_int,
) -> c_int {
    isend_c(
        buf,
        count,
        dt,
        dst,
        tag,
        comm,
        SendMode::Buffered,
        req,
        "MPI_Ibsend_c",
    )
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Recv_c(
    buf: *mut c_void,
    count: Count,
    dt: c_int,
    src: c_int,
    tag: c_int,
    comm: c_int,
    st: *mut CStatus,
) -> c_int {
    let g = enter();
    let n = check_count_c!(g.me, comm, "MPI_Recv_c", count);
    let id = match rt::irecv(g.me, &p2p(buf, n, dt, src, tag, comm)) {
        Ok(id) => id,
        Err(e) => return entry::handle_error(g.me, comm, "MPI_Recv_c", e),
    };
    let s = rt::wait(g.me, id, "MPI_Recv_c");
    write_status(st, &s);
    status_result(g.me, comm, "MPI_Recv_c", &s, n)
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Irecv_c(
    buf: *mut c_void,
    count: Count,
    dt: c_int,
    src: c_int,
    tag: c_int,
    comm: c_int,
    req: *mut c_int,
) -> c_int {
    let g = enter();
    let n = check_count_c!(g.me, comm, "MPI_Irecv_c", count);
    match rt::irecv(g.me, &p2p(buf, n, dt, src, tag, comm)) {
        Ok(id) => {
            set(req, id as c_int + 1);
            MPI_SUCCESS
        }
        Err(e) => entry::handle_error(g.me, comm, "MPI_Irecv_c", e),
    }
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Sendrecv_c(
    sbuf: *const c_void,
    scount: Count,
    stype: c_int,
    dst: c_int,
    stag: c_int,
    rbuf: *mut c_void,
    rcount: Count,
    rtype: c_int,
    src: c_int,
    rtag: c_int,
    comm: c_int,
    st: *mut CStatus,
) -> c_int {
    let g = enter();
    let sn = check_count_c!(g.me, comm, "MPI_Sendrecv_c", scount);
    let rn = check_count_c!(g.me, comm, "MPI_Sendrecv_c", rcount);
    match rt::sendrecv(
        g.me,
        &p2p(sbuf, sn, stype, dst, stag, comm),
        &p2p(rbuf, rn, rtype, src, rtag, comm),
    ) {
        Ok(s) => {
            write_status(st, &s);
            status_result(g.me, comm, "MPI_Sendrecv_c", &s, rn)
        }
        Err(e) => entry::handle_error(g.me, comm, "MPI_Sendrecv_c", e),
    }
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Get_count_c(st: *const CStatus, dt: c_int, count: *mut Count) -> c_int {
    let size = match with_world(|w| w.dtype(dt).map(|d| d.size)) {
        Ok(s) => s as Count,
        Err(_) => return rt::MPI_ERR_TYPE,
    };
    let bytes = (*st).count;
    let n = match size {
        0 => 0,
        s if bytes % s == 0 => bytes / s,
        _ => MPI_UNDEFINED as Count,
    };
    set(count, n);
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Get_elements_c(st: *const CStatus, dt: c_int, count: *mut Count) -> c_int {
    match crate::abi::base::elements_of(st, dt) {
        Ok(n) => {
            set(count, n);
            MPI_SUCCESS
        }
        Err(code) => code,
    }
}
