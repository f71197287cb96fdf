//! The MPI C ABI: every function declared in `include/mpi.h`, exported from the
//! `smpirun` executable to the program it loads.
//!
//! Each function starts with [`enter`] (injects the computation time since the
//! previous MPI call, restarts the benchmark on return), checks its arguments
//! and maps errors through the communicator's error handler.
#![allow(non_snake_case, clippy::missing_safety_doc, clippy::too_many_arguments)]

use std::ffi::{c_char, c_int, c_void, CStr};

use std::rc::Rc;

use crate::coll::{self, CommView, IN_PLACE};
use crate::mpi::datatype::Datatype;
use crate::mpi::entry::{self, enter, result, write_status, CStatus};
use crate::mpi::op::{Op, UserFn};
use crate::mpi::{
    self as rt, mpi_err, with_world, CommEntry, CommShared, MpiError, MpiResult, P2p, SendMode, StatusInfo,
    MPI_COMM_NULL, MPI_SUCCESS, MPI_UNDEFINED,
};

type Aint = isize;

const MPI_ERR_COUNT: i32 = rt::MPI_ERR_COUNT;

fn count_ok(me: u32, comm: i32, call: &str, count: c_int) -> Result<usize, c_int> {
    if count < 0 {
        Err(entry::handle_error(
            me,
            comm,
            call,
            mpi_err(MPI_ERR_COUNT, format!("negative count {count}")),
        ))
    } else {
        Ok(count as usize)
    }
}

macro_rules! check_count {
    ($me:expr, $comm:expr, $call:expr, $count:expr) => {
        match count_ok($me, $comm, $call, $count) {
            Ok(c) => c,
            Err(code) => return code,
        }
    };
}

fn view(me: u32, comm: i32) -> MpiResult<CommView> {
    let inter = with_world(|w| w.ranks[me as usize].comm(comm).map(|c| c.shared.remote.is_some()))?;
    if inter {
        return Err(mpi_err(
            rt::MPI_ERR_COMM,
            "collectives on intercommunicators are not supported yet",
        ));
    }
    CommView::new(me, comm)
}

unsafe fn set<T>(p: *mut T, v: T) {
    if !p.is_null() {
        *p = v;
    }
}

unsafe fn write_cstr(dst: *mut c_char, s: &str, len: *mut c_int, max: usize) {
    let n = s.len().min(max - 1);
    if !dst.is_null() {
        std::ptr::copy_nonoverlapping(s.as_ptr(), dst as *mut u8, n);
        *dst.add(n) = 0;
    }
    set(len, n as c_int);
}

// ------------------------------------------------------------------ environment

#[no_mangle]
pub unsafe extern "C" fn MPI_Init(_argc: *mut c_int, _argv: *mut *mut *mut c_char) -> c_int {
    let g = enter();
    let init = with_world(|w| {
        w.ranks[g.me as usize].initialized = true;
        w.cfg.init
    });
    rt::sleep_for(g.me, init);
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Init_thread(
    argc: *mut c_int,
    argv: *mut *mut *mut c_char,
    required: c_int,
    provided: *mut c_int,
) -> c_int {
    let level = required.clamp(0, 3);
    THREAD_LEVEL.store(level, std::sync::atomic::Ordering::Relaxed);
    set(provided, level);
    MPI_Init(argc, argv)
}

/// The thread level MPI_Init_thread granted (all ranks share one process).
static THREAD_LEVEL: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);

#[no_mangle]
pub unsafe extern "C" fn MPI_Initialized(flag: *mut c_int) -> c_int {
    let me = rt::current_rank();
    set(flag, with_world(|w| w.ranks[me as usize].initialized) as c_int);
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Finalize() -> c_int {
    let g = enter();
    // MPI_COMM_SELF's attributes are deleted first, while MPI is still up
    // (MPI_Finalized says no), then MPI_COMM_WORLD's.
    for comm in [rt::MPI_COMM_SELF, rt::MPI_COMM_WORLD] {
        let _ = crate::abi::more::delete_attrs_lifo(g.me, comm);
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

#[no_mangle]
pub unsafe extern "C" fn MPI_Finalized(flag: *mut c_int) -> c_int {
    let me = rt::current_rank();
    set(flag, with_world(|w| w.ranks[me as usize].finalized) as c_int);
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Abort(_comm: c_int, errorcode: c_int) -> c_int {
    let me = rt::current_rank();
    libc::fflush(std::ptr::null_mut());
    entry::abort_run(me, format!("MPI_Abort with error code {errorcode}"))
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Wtime() -> f64 {
    let g = enter();
    rt::read_clock(g.me)
}

#[no_mangle]
pub extern "C" fn MPI_Wtick() -> f64 {
    1e-9
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Get_processor_name(name: *mut c_char, len: *mut c_int) -> c_int {
    let me = rt::current_rank();
    let host = with_world(|w| w.platform.host(w.ranks[me as usize].host).name.clone());
    write_cstr(name, &host, len, 256);
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Get_version(v: *mut c_int, sv: *mut c_int) -> c_int {
    set(v, 3);
    set(sv, 1);
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Get_library_version(s: *mut c_char, len: *mut c_int) -> c_int {
    write_cstr(
        s,
        concat!("smpi-rs ", env!("CARGO_PKG_VERSION"), " (simulated MPI)"),
        len,
        256,
    );
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Error_string(code: c_int, s: *mut c_char, len: *mut c_int) -> c_int {
    write_cstr(s, rt::error_string(code), len, 256);
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Error_class(code: c_int, class: *mut c_int) -> c_int {
    set(class, code);
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Query_thread(provided: *mut c_int) -> c_int {
    set(provided, THREAD_LEVEL.load(std::sync::atomic::Ordering::Relaxed));
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Is_thread_main(flag: *mut c_int) -> c_int {
    set(flag, 1);
    MPI_SUCCESS
}

#[no_mangle]
pub extern "C" fn MPI_Pcontrol(_level: c_int) -> c_int {
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_set_errhandler(comm: c_int, eh: c_int) -> c_int {
    let g = enter();
    let r = with_world(|w| -> MpiResult<()> {
        if eh != rt::MPI_ERRORS_ARE_FATAL && eh != rt::MPI_ERRORS_RETURN {
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
pub unsafe extern "C" fn MPI_Comm_get_errhandler(comm: c_int, eh: *mut c_int) -> c_int {
    let g = enter();
    let r = with_world(|w| w.ranks[g.me as usize].comm(comm).map(|c| c.errhandler));
    match r {
        Ok(h) => {
            set(eh, h);
            MPI_SUCCESS
        }
        Err(e) => entry::handle_error(g.me, comm, "MPI_Comm_get_errhandler", e),
    }
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Errhandler_set(comm: c_int, eh: c_int) -> c_int {
    MPI_Comm_set_errhandler(comm, eh)
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Errhandler_get(comm: c_int, eh: *mut c_int) -> c_int {
    MPI_Comm_get_errhandler(comm, eh)
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Errhandler_free(eh: *mut c_int) -> c_int {
    set(eh, 0);
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Alloc_mem(size: Aint, _info: c_int, base: *mut c_void) -> c_int {
    let p = libc::malloc(size.max(1) as usize);
    *(base as *mut *mut c_void) = p;
    if p.is_null() {
        21
    } else {
        MPI_SUCCESS
    }
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Free_mem(base: *mut c_void) -> c_int {
    libc::free(base);
    MPI_SUCCESS
}

// ------------------------------------------------------------------ point to point

pub(crate) fn p2p(
    buf: *const c_void,
    count: usize,
    dtype: c_int,
    peer: c_int,
    tag: c_int,
    comm: c_int,
) -> P2p {
    P2p {
        buf: buf as *mut u8,
        count,
        dtype,
        peer,
        tag,
        comm,
        coll: false,
    }
}

unsafe fn blocking_send(
    buf: *const c_void,
    count: c_int,
    dt: c_int,
    dst: c_int,
    tag: c_int,
    comm: c_int,
    mode: SendMode,
    call: &'static str,
) -> c_int {
    let g = enter();
    let n = check_count!(g.me, comm, call, count);
    result(
        g.me,
        comm,
        call,
        rt::send(g.me, &p2p(buf, n, dt, dst, tag, comm), mode, call),
    )
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Send(
    buf: *const c_void,
    count: c_int,
    dt: c_int,
    dst: c_int,
    tag: c_int,
    comm: c_int,
) -> c_int {
    blocking_send(buf, count, dt, dst, tag, comm, SendMode::Standard, "MPI_Send")
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Ssend(
    buf: *const c_void,
    count: c_int,
    dt: c_int,
    dst: c_int,
    tag: c_int,
    comm: c_int,
) -> c_int {
    blocking_send(buf, count, dt, dst, tag, comm, SendMode::Sync, "MPI_Ssend")
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Rsend(
    buf: *const c_void,
    count: c_int,
    dt: c_int,
    dst: c_int,
    tag: c_int,
    comm: c_int,
) -> c_int {
    blocking_send(buf, count, dt, dst, tag, comm, SendMode::Ready, "MPI_Rsend")
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Bsend(
    buf: *const c_void,
    count: c_int,
    dt: c_int,
    dst: c_int,
    tag: c_int,
    comm: c_int,
) -> c_int {
    blocking_send(buf, count, dt, dst, tag, comm, SendMode::Buffered, "MPI_Bsend")
}

unsafe fn nb_send(
    buf: *const c_void,
    count: c_int,
    dt: c_int,
    dst: c_int,
    tag: c_int,
    comm: c_int,
    mode: SendMode,
    req: *mut c_int,
    call: &'static str,
) -> c_int {
    let g = enter();
    let n = check_count!(g.me, comm, call, count);
    match rt::isend(g.me, &p2p(buf, n, dt, dst, tag, comm), mode, true) {
        Ok(id) => {
            set(req, id as c_int + 1);
            MPI_SUCCESS
        }
        Err(e) => entry::handle_error(g.me, comm, call, e),
    }
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Isend(
    buf: *const c_void,
    count: c_int,
    dt: c_int,
    dst: c_int,
    tag: c_int,
    comm: c_int,
    req: *mut c_int,
) -> c_int {
    nb_send(
        buf,
        count,
        dt,
        dst,
        tag,
        comm,
        SendMode::Standard,
        req,
        "MPI_Isend",
    )
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Issend(
    buf: *const c_void,
    count: c_int,
    dt: c_int,
    dst: c_int,
    tag: c_int,
    comm: c_int,
    req: *mut c_int,
) -> c_int {
    nb_send(buf, count, dt, dst, tag, comm, SendMode::Sync, req, "MPI_Issend")
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Irsend(
    buf: *const c_void,
    count: c_int,
    dt: c_int,
    dst: c_int,
    tag: c_int,
    comm: c_int,
    req: *mut c_int,
) -> c_int {
    nb_send(buf, count, dt, dst, tag, comm, SendMode::Ready, req, "MPI_Irsend")
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Ibsend(
    buf: *const c_void,
    count: c_int,
    dt: c_int,
    dst: c_int,
    tag: c_int,
    comm: c_int,
    req: *mut c_int,
) -> c_int {
    nb_send(
        buf,
        count,
        dt,
        dst,
        tag,
        comm,
        SendMode::Buffered,
        req,
        "MPI_Ibsend",
    )
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Recv(
    buf: *mut c_void,
    count: c_int,
    dt: c_int,
    src: c_int,
    tag: c_int,
    comm: c_int,
    st: *mut CStatus,
) -> c_int {
    let g = enter();
    let n = check_count!(g.me, comm, "MPI_Recv", count);
    let id = match rt::irecv(g.me, &p2p(buf, n, dt, src, tag, comm)) {
        Ok(id) => id,
        Err(e) => return entry::handle_error(g.me, comm, "MPI_Recv", e),
    };
    let s = rt::wait(g.me, id, "MPI_Recv");
    write_status(st, &s);
    status_result(g.me, comm, "MPI_Recv", &s, n)
}

pub(crate) fn status_result(me: u32, comm: i32, call: &str, s: &StatusInfo, count: usize) -> c_int {
    if s.error == rt::MPI_ERR_TRUNCATE {
        return entry::handle_error(
            me,
            comm,
            call,
            mpi_err(
                rt::MPI_ERR_TRUNCATE,
                format!("message truncated (receive count {count} too small)"),
            ),
        );
    }
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Irecv(
    buf: *mut c_void,
    count: c_int,
    dt: c_int,
    src: c_int,
    tag: c_int,
    comm: c_int,
    req: *mut c_int,
) -> c_int {
    let g = enter();
    let n = check_count!(g.me, comm, "MPI_Irecv", count);
    match rt::irecv(g.me, &p2p(buf, n, dt, src, tag, comm)) {
        Ok(id) => {
            set(req, id as c_int + 1);
            MPI_SUCCESS
        }
        Err(e) => entry::handle_error(g.me, comm, "MPI_Irecv", e),
    }
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Sendrecv(
    sbuf: *const c_void,
    scount: c_int,
    stype: c_int,
    dst: c_int,
    stag: c_int,
    rbuf: *mut c_void,
    rcount: c_int,
    rtype: c_int,
    src: c_int,
    rtag: c_int,
    comm: c_int,
    st: *mut CStatus,
) -> c_int {
    let g = enter();
    let sn = check_count!(g.me, comm, "MPI_Sendrecv", scount);
    let rn = check_count!(g.me, comm, "MPI_Sendrecv", rcount);
    match rt::sendrecv(
        g.me,
        &p2p(sbuf, sn, stype, dst, stag, comm),
        &p2p(rbuf, rn, rtype, src, rtag, comm),
    ) {
        Ok(s) => {
            write_status(st, &s);
            status_result(g.me, comm, "MPI_Sendrecv", &s, rn)
        }
        Err(e) => entry::handle_error(g.me, comm, "MPI_Sendrecv", e),
    }
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Sendrecv_replace(
    buf: *mut c_void,
    count: c_int,
    dt: c_int,
    dst: c_int,
    stag: c_int,
    src: c_int,
    rtag: c_int,
    comm: c_int,
    st: *mut CStatus,
) -> c_int {
    let g = enter();
    let n = check_count!(g.me, comm, "MPI_Sendrecv_replace", count);
    let d = match with_world(|w| w.dtype(dt)) {
        Ok(d) => d,
        Err(e) => return entry::handle_error(g.me, comm, "MPI_Sendrecv_replace", e),
    };
    let mut tmp = coll::TempBuf::new(&d, n);
    if let Err(e) = coll::local_copy(buf as *const u8, n, dt, tmp.ptr(), n, dt) {
        return entry::handle_error(g.me, comm, "MPI_Sendrecv_replace", e);
    }
    match rt::sendrecv(
        g.me,
        &p2p(tmp.ptr() as *const c_void, n, dt, dst, stag, comm),
        &p2p(buf, n, dt, src, rtag, comm),
    ) {
        Ok(s) => {
            write_status(st, &s);
            MPI_SUCCESS
        }
        Err(e) => entry::handle_error(g.me, comm, "MPI_Sendrecv_replace", e),
    }
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Iprobe(
    src: c_int,
    tag: c_int,
    comm: c_int,
    flag: *mut c_int,
    st: *mut CStatus,
) -> c_int {
    let g = enter();
    match rt::iprobe(g.me, src, tag, comm) {
        Ok(Some(s)) => {
            set(flag, 1);
            write_status(st, &s);
            MPI_SUCCESS
        }
        Ok(None) => {
            set(flag, 0);
            MPI_SUCCESS
        }
        Err(e) => entry::handle_error(g.me, comm, "MPI_Iprobe", e),
    }
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Probe(src: c_int, tag: c_int, comm: c_int, st: *mut CStatus) -> c_int {
    let g = enter();
    loop {
        match rt::iprobe(g.me, src, tag, comm) {
            Ok(Some(s)) => {
                write_status(st, &s);
                return MPI_SUCCESS;
            }
            Ok(None) => {
                // Nothing yet: make sure simulated time moves even if polling costs are 0.
                let zero_cost = with_world(|w| w.cfg.iprobe <= 0.0);
                if zero_cost {
                    rt::sleep_for(g.me, 1e-6);
                }
                with_world(|w| {
                    w.ranks[g.me as usize].blocked = Some(rt::BlockInfo {
                        call: "MPI_Probe",
                        peer: src,
                        tag,
                        comm,
                    })
                });
            }
            Err(e) => return entry::handle_error(g.me, comm, "MPI_Probe", e),
        }
    }
}

/// Request handle → internal id (`None` for MPI_REQUEST_NULL or inactive persistent).
fn req_id(h: c_int) -> Result<Option<u32>, MpiError> {
    if h == 0 {
        return Ok(None);
    }
    let id = (h - 1) as u32;
    with_world(|w| match w.reqs.get(id as usize).and_then(|r| r.as_ref()) {
        Some(r) if r.persistent && !r.active => Ok(None),
        Some(_) => Ok(Some(id)),
        None => Err(mpi_err(
            rt::MPI_ERR_REQUEST,
            format!("invalid request handle {h}"),
        )),
    })
}

/// Writes the status of a single-request completion (MPI_Wait, MPI_Test,
/// MPI_Mrecv): MPI leaves the `MPI_ERROR` field alone there, only the
/// multiple-completion calls set it.
pub(crate) unsafe fn write_single_status(st: *mut CStatus, s: &StatusInfo) {
    if !st.is_null() {
        let error = (*st).error;
        write_status(st, s);
        (*st).error = error;
    }
}

fn is_persistent(id: u32) -> bool {
    with_world(|w| {
        w.reqs
            .get(id as usize)
            .and_then(|r| r.as_ref())
            .is_some_and(|r| r.persistent)
    })
}

fn empty_status() -> StatusInfo {
    StatusInfo {
        source: rt::MPI_ANY_SOURCE,
        tag: rt::MPI_ANY_TAG,
        error: 0,
        bytes: 0,
        cancelled: false,
    }
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Wait(req: *mut c_int, st: *mut CStatus) -> c_int {
    let g = enter();
    let id = match req_id(*req) {
        Ok(Some(id)) => id,
        Ok(None) => {
            write_status(st, &empty_status());
            return MPI_SUCCESS;
        }
        Err(e) => return entry::handle_error(g.me, rt::MPI_COMM_WORLD, "MPI_Wait", e),
    };
    let persistent = is_persistent(id);
    let s = rt::wait(g.me, id, "MPI_Wait");
    if !persistent {
        *req = 0;
    }
    write_single_status(st, &s);
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Waitall(n: c_int, reqs: *mut c_int, sts: *mut CStatus) -> c_int {
    let g = enter();
    let ids = match collect(n, reqs) {
        Ok(v) => v,
        Err(e) => return entry::handle_error(g.me, rt::MPI_COMM_WORLD, "MPI_Waitall", e),
    };
    // SMPI 3.32 waits with waitany until all are done: completion order.
    let statuses = rt::wait_all(g.me, &ids);
    let mut err = MPI_SUCCESS;
    for (i, s) in statuses.iter().enumerate() {
        let st = if sts.is_null() {
            std::ptr::null_mut()
        } else {
            sts.add(i)
        };
        match s {
            Some(s) => {
                if !is_persistent_handle(*reqs.add(i)) {
                    *reqs.add(i) = 0;
                }
                if s.error != 0 {
                    err = rt::MPI_ERR_IN_STATUS;
                }
                write_status(st, s);
            }
            None => write_status(st, &empty_status()),
        }
    }
    err
}

unsafe fn collect(n: c_int, reqs: *mut c_int) -> Result<Vec<Option<u32>>, MpiError> {
    (0..n.max(0) as usize).map(|i| req_id(*reqs.add(i))).collect()
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Waitany(
    n: c_int,
    reqs: *mut c_int,
    index: *mut c_int,
    st: *mut CStatus,
) -> c_int {
    let g = enter();
    let ids = match collect(n, reqs) {
        Ok(v) => v,
        Err(e) => return entry::handle_error(g.me, rt::MPI_COMM_WORLD, "MPI_Waitany", e),
    };
    match rt::wait_any(g.me, &ids) {
        Some((i, s)) => {
            if !is_persistent_handle(*reqs.add(i)) {
                *reqs.add(i) = 0;
            }
            set(index, i as c_int);
            write_status(st, &s);
        }
        None => {
            set(index, MPI_UNDEFINED);
            write_status(st, &empty_status());
        }
    }
    MPI_SUCCESS
}

fn is_persistent_handle(h: c_int) -> bool {
    h > 0 && is_persistent((h - 1) as u32)
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Waitsome(
    n: c_int,
    reqs: *mut c_int,
    outcount: *mut c_int,
    indices: *mut c_int,
    sts: *mut CStatus,
) -> c_int {
    let g = enter();
    let ids = match collect(n, reqs) {
        Ok(v) => v,
        Err(e) => return entry::handle_error(g.me, rt::MPI_COMM_WORLD, "MPI_Waitsome", e),
    };
    if ids.iter().all(|x| x.is_none()) {
        set(outcount, MPI_UNDEFINED);
        return MPI_SUCCESS;
    }
    let Some((first, s)) = rt::wait_any(g.me, &ids) else {
        set(outcount, MPI_UNDEFINED);
        return MPI_SUCCESS;
    };
    let mut k = 0usize;
    let mut record = |i: usize, s: &StatusInfo| {
        if !is_persistent_handle(*reqs.add(i)) {
            *reqs.add(i) = 0;
        }
        *indices.add(k) = i as c_int;
        if !sts.is_null() {
            write_status(sts.add(k), s);
        }
        k += 1;
    };
    record(first, &s);
    for (i, id) in ids.iter().enumerate() {
        if i == first {
            continue;
        }
        if let Some(id) = id {
            if with_world(|w| rt::is_complete(w, *id)) {
                let s = rt::finish(g.me, *id);
                record(i, &s);
            }
        }
    }
    set(outcount, k as c_int);
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Test(req: *mut c_int, flag: *mut c_int, st: *mut CStatus) -> c_int {
    let g = enter();
    let id = match req_id(*req) {
        Ok(Some(id)) => id,
        Ok(None) => {
            set(flag, 1);
            write_status(st, &empty_status());
            return MPI_SUCCESS;
        }
        Err(e) => return entry::handle_error(g.me, rt::MPI_COMM_WORLD, "MPI_Test", e),
    };
    let persistent = is_persistent(id);
    match rt::test(g.me, id) {
        Some(s) => {
            if !persistent {
                *req = 0;
            }
            set(flag, 1);
            write_single_status(st, &s);
        }
        None => set(flag, 0),
    }
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Testall(
    n: c_int,
    reqs: *mut c_int,
    flag: *mut c_int,
    sts: *mut CStatus,
) -> c_int {
    let g = enter();
    let ids = match collect(n, reqs) {
        Ok(v) => v,
        Err(e) => return entry::handle_error(g.me, rt::MPI_COMM_WORLD, "MPI_Testall", e),
    };
    // As SMPI: one MPI_Test poll per request, in order.
    let mut all = true;
    for id in ids.iter().flatten() {
        all &= rt::test_poll(g.me, *id);
    }
    if !all {
        set(flag, 0);
        return MPI_SUCCESS;
    }
    for (i, id) in ids.iter().enumerate() {
        let st = if sts.is_null() {
            std::ptr::null_mut()
        } else {
            sts.add(i)
        };
        match id {
            Some(id) => {
                let s = rt::finish(g.me, *id);
                if !is_persistent(*id) {
                    *reqs.add(i) = 0;
                }
                write_status(st, &s);
            }
            None => write_status(st, &empty_status()),
        }
    }
    set(flag, 1);
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Testany(
    n: c_int,
    reqs: *mut c_int,
    index: *mut c_int,
    flag: *mut c_int,
    st: *mut CStatus,
) -> c_int {
    let g = enter();
    let ids = match collect(n, reqs) {
        Ok(v) => v,
        Err(e) => return entry::handle_error(g.me, rt::MPI_COMM_WORLD, "MPI_Testany", e),
    };
    if ids.iter().all(|x| x.is_none()) {
        set(flag, 1);
        set(index, MPI_UNDEFINED);
        write_status(st, &empty_status());
        return MPI_SUCCESS;
    }
    let cost = with_world(|w| w.cfg.test * rt::poll_counter(w, g.me, rt::Poll::Testany) as f64);
    rt::sleep_for(g.me, cost);
    let found = with_world(|w| {
        let f = ids
            .iter()
            .position(|id| id.is_some_and(|id| rt::is_complete(w, id)));
        rt::poll_result(w, g.me, rt::Poll::Testany, f.is_some());
        f
    });
    match found {
        Some(i) => {
            let id = ids[i].expect("found");
            let persistent = is_persistent(id);
            let s = rt::finish(g.me, id);
            if !persistent {
                *reqs.add(i) = 0;
            }
            set(flag, 1);
            set(index, i as c_int);
            write_status(st, &s);
        }
        None => {
            set(flag, 0);
            set(index, MPI_UNDEFINED);
        }
    }
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Testsome(
    n: c_int,
    reqs: *mut c_int,
    outcount: *mut c_int,
    indices: *mut c_int,
    sts: *mut CStatus,
) -> c_int {
    let g = enter();
    let ids = match collect(n, reqs) {
        Ok(v) => v,
        Err(e) => return entry::handle_error(g.me, rt::MPI_COMM_WORLD, "MPI_Testsome", e),
    };
    if ids.iter().all(|x| x.is_none()) {
        set(outcount, MPI_UNDEFINED);
        return MPI_SUCCESS;
    }
    let mut k = 0usize;
    for (i, id) in ids.iter().enumerate() {
        if let Some(id) = id {
            // As SMPI: one MPI_Test poll per request.
            if rt::test_poll(g.me, *id) {
                let persistent = is_persistent(*id);
                let s = rt::finish(g.me, *id);
                if !persistent {
                    *reqs.add(i) = 0;
                }
                *indices.add(k) = i as c_int;
                if !sts.is_null() {
                    write_status(sts.add(k), &s);
                }
                k += 1;
            }
        }
    }
    set(outcount, k as c_int);
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Request_free(req: *mut c_int) -> c_int {
    let g = enter();
    match req_id(*req) {
        Ok(Some(id)) if rt::greq_of(id).is_some() => {
            rt::release_greq(id);
            *req = 0;
            MPI_SUCCESS
        }
        Ok(Some(id)) => {
            with_world(|w| {
                if rt::is_complete(w, id) && w.req(id).transferred {
                    w.free_req(id);
                } else {
                    w.req_mut(id).orphan = true;
                    w.req_mut(id).persistent = false;
                }
            });
            *req = 0;
            MPI_SUCCESS
        }
        Ok(None) => {
            if *req != 0 {
                let id = (*req - 1) as u32;
                with_world(|w| w.free_req(id));
            }
            *req = 0;
            MPI_SUCCESS
        }
        Err(e) => entry::handle_error(g.me, rt::MPI_COMM_WORLD, "MPI_Request_free", e),
    }
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Request_get_status(req: c_int, flag: *mut c_int, st: *mut CStatus) -> c_int {
    let _g = enter();
    match req_id(req) {
        Ok(Some(id)) => {
            let (done, s) = with_world(|w| (rt::is_complete(w, id), w.req(id).status));
            set(flag, done as c_int);
            if done {
                write_status(st, &s);
            }
        }
        _ => {
            set(flag, 1);
            write_status(st, &empty_status());
        }
    }
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Cancel(req: *mut c_int) -> c_int {
    let _g = enter();
    if let Ok(Some(id)) = req_id(*req) {
        if let Some(greq) = rt::greq_of(id) {
            // A generalized request is cancelled by its cancel callback.
            let complete = with_world(|w| rt::is_complete(w, id));
            return greq
                .cancel
                .map_or(MPI_SUCCESS, |f| f(greq.extra_state, complete as c_int));
        }
        with_world(|w| rt::cancel(w, id));
    }
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Test_cancelled(st: *const CStatus, flag: *mut c_int) -> c_int {
    set(flag, if st.is_null() { 0 } else { (*st).cancelled });
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Get_count(st: *const CStatus, dt: c_int, count: *mut c_int) -> c_int {
    let size = with_world(|w| w.dtype(dt).map(|d| d.size));
    match size {
        Ok(0) => set(count, 0),
        Ok(s) => {
            let bytes = (*st).count as usize;
            set(
                count,
                if bytes.is_multiple_of(s) {
                    (bytes / s) as c_int
                } else {
                    MPI_UNDEFINED
                },
            );
        }
        Err(_) => return rt::MPI_ERR_TYPE,
    }
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Get_elements(st: *const CStatus, dt: c_int, count: *mut c_int) -> c_int {
    match elements_of(st, dt) {
        Ok(n) => {
            set(count, c_int::try_from(n).unwrap_or(MPI_UNDEFINED));
            MPI_SUCCESS
        }
        Err(code) => code,
    }
}

/// Basic elements of `dt` a status holds (`MPI_Get_elements[_x]`), 64-bit.
pub(crate) unsafe fn elements_of(st: *const CStatus, dt: c_int) -> Result<i64, c_int> {
    let d = with_world(|w| w.dtype(dt)).map_err(|_| rt::MPI_ERR_TYPE)?;
    let bytes = (*st).count.max(0) as u64;
    if d.size == 0 {
        return Ok(0);
    }
    Ok(d.elements_in(bytes as usize) as i64)
}

pub(crate) unsafe fn persistent_init(
    kind: rt::ReqKind,
    buf: *const c_void,
    count: c_int,
    dt: c_int,
    peer: c_int,
    tag: c_int,
    comm: c_int,
    mode: SendMode,
    req: *mut c_int,
    call: &'static str,
) -> c_int {
    let g = enter();
    let n = check_count!(g.me, comm, call, count);
    // Build an inactive request by posting nothing: store parameters only.
    let r = with_world(|w| -> MpiResult<u32> {
        w.ranks[g.me as usize].comm(comm)?;
        w.dtype(dt)?;
        Ok(rt::new_persistent(
            w,
            g.me,
            kind,
            p2p(buf, n, dt, peer, tag, comm),
            mode,
        ))
    });
    match r {
        Ok(id) => {
            set(req, id as c_int + 1);
            MPI_SUCCESS
        }
        Err(e) => entry::handle_error(g.me, comm, call, e),
    }
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Send_init(
    buf: *const c_void,
    count: c_int,
    dt: c_int,
    dst: c_int,
    tag: c_int,
    comm: c_int,
    req: *mut c_int,
) -> c_int {
    persistent_init(
        rt::ReqKind::Send,
        buf,
        count,
        dt,
        dst,
        tag,
        comm,
        SendMode::Standard,
        req,
        "MPI_Send_init",
    )
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Ssend_init(
    buf: *const c_void,
    count: c_int,
    dt: c_int,
    dst: c_int,
    tag: c_int,
    comm: c_int,
    req: *mut c_int,
) -> c_int {
    persistent_init(
        rt::ReqKind::Send,
        buf,
        count,
        dt,
        dst,
        tag,
        comm,
        SendMode::Sync,
        req,
        "MPI_Ssend_init",
    )
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Recv_init(
    buf: *mut c_void,
    count: c_int,
    dt: c_int,
    src: c_int,
    tag: c_int,
    comm: c_int,
    req: *mut c_int,
) -> c_int {
    persistent_init(
        rt::ReqKind::Recv,
        buf,
        count,
        dt,
        src,
        tag,
        comm,
        SendMode::Standard,
        req,
        "MPI_Recv_init",
    )
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Start(req: *mut c_int) -> c_int {
    let g = enter();
    if *req <= 0 {
        return entry::handle_error(
            g.me,
            rt::MPI_COMM_WORLD,
            "MPI_Start",
            mpi_err(rt::MPI_ERR_REQUEST, "null request"),
        );
    }
    let r = rt::start_persistent(g.me, (*req - 1) as u32);
    result(g.me, rt::MPI_COMM_WORLD, "MPI_Start", r)
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Startall(n: c_int, reqs: *mut c_int) -> c_int {
    for i in 0..n.max(0) as usize {
        let rc = MPI_Start(reqs.add(i));
        if rc != MPI_SUCCESS {
            return rc;
        }
    }
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Buffer_attach(buf: *mut c_void, size: c_int) -> c_int {
    let me = rt::current_rank();
    with_world(|w| w.ranks[me as usize].buffer_attached = Some((buf as usize, size.max(0) as usize)));
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Buffer_detach(buf: *mut c_void, size: *mut c_int) -> c_int {
    let g = enter();
    let me = g.me;
    // The buffer goes back to the application only once its messages are out.
    rt::drain_buffered_sends(me);
    let b = with_world(|w| w.ranks[me as usize].buffer_attached.take());
    let (p, s) = b.unwrap_or((0, 0));
    if !buf.is_null() {
        *(buf as *mut *mut c_void) = p as *mut c_void;
    }
    set(size, s as c_int);
    MPI_SUCCESS
}

// ------------------------------------------------------------------ collectives

macro_rules! coll_call {
    ($g:expr, $comm:expr, $call:expr, $body:expr) => {{
        let r: MpiResult<()> = (|| -> MpiResult<()> { $body })();
        result($g.me, $comm, $call, r)
    }};
}

/// A count that MPI says is ignored when its buffer is `MPI_IN_PLACE`.
fn in_place_count(buf: *const c_void, call: &str, v: c_int) -> MpiResult<usize> {
    if buf as *mut u8 == IN_PLACE {
        Ok(0)
    } else {
        nonneg(call, v)
    }
}

fn nonneg(call: &str, v: c_int) -> MpiResult<usize> {
    if v < 0 {
        Err(mpi_err(MPI_ERR_COUNT, format!("{call}: negative count {v}")))
    } else {
        Ok(v as usize)
    }
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Barrier(comm: c_int) -> c_int {
    let g = enter();
    match crate::abi::more::InterView::of(g.me, comm) {
        Ok(Some(iv)) => {
            let r: MpiResult<()> = crate::abi::more::inter_barrier(iv);
            return result(g.me, comm, "MPI_Barrier", r);
        }
        Ok(None) => {}
        Err(e) => return entry::handle_error(g.me, comm, "MPI_Barrier", e),
    }
    coll_call!(g, comm, "MPI_Barrier", coll::barrier(view(g.me, comm)?))
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Bcast(
    buf: *mut c_void,
    count: c_int,
    dt: c_int,
    root: c_int,
    comm: c_int,
) -> c_int {
    let g = enter();
    match crate::abi::more::InterView::of(g.me, comm) {
        Ok(Some(iv)) => {
            let r: MpiResult<()> = (|| {
                crate::abi::more::inter_bcast(iv, buf as *mut u8, nonneg("MPI_Bcast", count)?, dt, root)
            })();
            return result(g.me, comm, "MPI_Bcast", r);
        }
        Ok(None) => {}
        Err(e) => return entry::handle_error(g.me, comm, "MPI_Bcast", e),
    }
    coll_call!(g, comm, "MPI_Bcast", {
        let n = nonneg("MPI_Bcast", count)?;
        with_world(|w| w.dtype(dt))?;
        coll::bcast(view(g.me, comm)?, buf as *mut u8, n, dt, root)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Reduce(
    sbuf: *const c_void,
    rbuf: *mut c_void,
    count: c_int,
    dt: c_int,
    op: c_int,
    root: c_int,
    comm: c_int,
) -> c_int {
    let g = enter();
    match crate::abi::more::InterView::of(g.me, comm) {
        Ok(Some(iv)) => {
            let r: MpiResult<()> = (|| {
                crate::abi::more::inter_reduce(
                    iv,
                    sbuf as *const u8,
                    rbuf as *mut u8,
                    nonneg("MPI_Reduce", count)?,
                    dt,
                    op,
                    root,
                )
            })();
            return result(g.me, comm, "MPI_Reduce", r);
        }
        Ok(None) => {}
        Err(e) => return entry::handle_error(g.me, comm, "MPI_Reduce", e),
    }
    coll_call!(g, comm, "MPI_Reduce", {
        let n = nonneg("MPI_Reduce", count)?;
        with_world(|w| w.dtype(dt).and(w.op(op).map(|_| ())))?;
        coll::reduce(
            view(g.me, comm)?,
            sbuf as *const u8,
            rbuf as *mut u8,
            n,
            dt,
            op,
            root,
        )
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Allreduce(
    sbuf: *const c_void,
    rbuf: *mut c_void,
    count: c_int,
    dt: c_int,
    op: c_int,
    comm: c_int,
) -> c_int {
    let g = enter();
    match crate::abi::more::InterView::of(g.me, comm) {
        Ok(Some(iv)) => {
            let r: MpiResult<()> = (|| {
                crate::abi::more::inter_allreduce(
                    iv,
                    sbuf as *const u8,
                    rbuf as *mut u8,
                    nonneg("MPI_Allreduce", count)?,
                    dt,
                    op,
                )
            })();
            return result(g.me, comm, "MPI_Allreduce", r);
        }
        Ok(None) => {}
        Err(e) => return entry::handle_error(g.me, comm, "MPI_Allreduce", e),
    }
    coll_call!(g, comm, "MPI_Allreduce", {
        let n = nonneg("MPI_Allreduce", count)?;
        with_world(|w| w.dtype(dt).and(w.op(op).map(|_| ())))?;
        coll::allreduce(view(g.me, comm)?, sbuf as *const u8, rbuf as *mut u8, n, dt, op)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Reduce_local(
    inbuf: *const c_void,
    inout: *mut c_void,
    count: c_int,
    dt: c_int,
    op: c_int,
) -> c_int {
    let g = enter();
    coll_call!(g, rt::MPI_COMM_WORLD, "MPI_Reduce_local", {
        coll::apply_op(
            op,
            dt,
            inbuf as *const u8,
            inout as *mut u8,
            nonneg("MPI_Reduce_local", count)?,
        )
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Gather(
    sbuf: *const c_void,
    scount: c_int,
    stype: c_int,
    rbuf: *mut c_void,
    rcount: c_int,
    rtype: c_int,
    root: c_int,
    comm: c_int,
) -> c_int {
    let g = enter();
    match crate::abi::more::InterView::of(g.me, comm) {
        Ok(Some(iv)) => {
            let r: MpiResult<()> = (|| {
                let rc = if root == -3 {
                    nonneg("MPI_Gather", rcount)?
                } else {
                    0
                };
                let n = iv.rsize as usize;
                let displs: Vec<isize> = (0..n as isize).map(|i| i * rc as isize).collect();
                crate::abi::more::inter_gatherv(
                    iv,
                    sbuf as *const u8,
                    if root >= 0 {
                        nonneg("MPI_Gather", scount)?
                    } else {
                        0
                    },
                    stype,
                    rbuf as *mut u8,
                    &vec![rc; n],
                    &displs,
                    rtype,
                    root,
                )
            })();
            return result(g.me, comm, "MPI_Gather", r);
        }
        Ok(None) => {}
        Err(e) => return entry::handle_error(g.me, comm, "MPI_Gather", e),
    }
    coll_call!(g, comm, "MPI_Gather", {
        let c = view(g.me, comm)?;
        // Receive arguments matter only at the root.
        let rc = if c.rank == root {
            nonneg("MPI_Gather", rcount)?
        } else {
            0
        };
        coll::gather(
            c,
            sbuf as *const u8,
            in_place_count(sbuf, "MPI_Gather", scount)?,
            stype,
            rbuf as *mut u8,
            rc,
            rtype,
            root,
        )
    })
}

unsafe fn counts_displs(
    n: i32,
    counts: *const c_int,
    displs: *const c_int,
) -> MpiResult<(Vec<usize>, Vec<isize>)> {
    let mut c = Vec::with_capacity(n as usize);
    let mut d = Vec::with_capacity(n as usize);
    for i in 0..n as usize {
        c.push(nonneg("counts", *counts.add(i))?);
        d.push(if displs.is_null() {
            0
        } else {
            *displs.add(i) as isize
        });
    }
    Ok((c, d))
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Gatherv(
    sbuf: *const c_void,
    scount: c_int,
    stype: c_int,
    rbuf: *mut c_void,
    rcounts: *const c_int,
    displs: *const c_int,
    rtype: c_int,
    root: c_int,
    comm: c_int,
) -> c_int {
    let g = enter();
    match crate::abi::more::InterView::of(g.me, comm) {
        Ok(Some(iv)) => {
            let r: MpiResult<()> = (|| {
                let (cs, ds) = if root == -3 {
                    counts_displs(iv.rsize, rcounts, displs)?
                } else {
                    (vec![], vec![])
                };
                crate::abi::more::inter_gatherv(
                    iv,
                    sbuf as *const u8,
                    if root >= 0 {
                        nonneg("MPI_Gatherv", scount)?
                    } else {
                        0
                    },
                    stype,
                    rbuf as *mut u8,
                    &cs,
                    &ds,
                    rtype,
                    root,
                )
            })();
            return result(g.me, comm, "MPI_Gatherv", r);
        }
        Ok(None) => {}
        Err(e) => return entry::handle_error(g.me, comm, "MPI_Gatherv", e),
    }
    coll_call!(g, comm, "MPI_Gatherv", {
        let c = view(g.me, comm)?;
        let (cs, ds) = if c.rank == root {
            counts_displs(c.size, rcounts, displs)?
        } else {
            (vec![0; c.size as usize], vec![0; c.size as usize])
        };
        coll::gatherv(
            c,
            sbuf as *const u8,
            in_place_count(sbuf, "MPI_Gatherv", scount)?,
            stype,
            rbuf as *mut u8,
            &cs,
            &ds,
            rtype,
            root,
        )
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Scatter(
    sbuf: *const c_void,
    scount: c_int,
    stype: c_int,
    rbuf: *mut c_void,
    rcount: c_int,
    rtype: c_int,
    root: c_int,
    comm: c_int,
) -> c_int {
    let g = enter();
    match crate::abi::more::InterView::of(g.me, comm) {
        Ok(Some(iv)) => {
            let r: MpiResult<()> = (|| {
                let sc = if root == -3 {
                    nonneg("MPI_Scatter", scount)?
                } else {
                    0
                };
                let n = iv.rsize as usize;
                let displs: Vec<isize> = (0..n as isize).map(|i| i * sc as isize).collect();
                crate::abi::more::inter_scatterv(
                    iv,
                    sbuf as *const u8,
                    &vec![sc; n],
                    &displs,
                    stype,
                    rbuf as *mut u8,
                    if root >= 0 {
                        nonneg("MPI_Scatter", rcount)?
                    } else {
                        0
                    },
                    rtype,
                    root,
                )
            })();
            return result(g.me, comm, "MPI_Scatter", r);
        }
        Ok(None) => {}
        Err(e) => return entry::handle_error(g.me, comm, "MPI_Scatter", e),
    }
    coll_call!(g, comm, "MPI_Scatter", {
        let c = view(g.me, comm)?;
        // Send arguments matter only at the root.
        let sc = if c.rank == root {
            nonneg("MPI_Scatter", scount)?
        } else {
            0
        };
        coll::scatter(
            c,
            sbuf as *const u8,
            sc,
            stype,
            rbuf as *mut u8,
            in_place_count(rbuf as *const c_void, "MPI_Scatter", rcount)?,
            rtype,
            root,
        )
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Scatterv(
    sbuf: *const c_void,
    scounts: *const c_int,
    displs: *const c_int,
    stype: c_int,
    rbuf: *mut c_void,
    rcount: c_int,
    rtype: c_int,
    root: c_int,
    comm: c_int,
) -> c_int {
    let g = enter();
    match crate::abi::more::InterView::of(g.me, comm) {
        Ok(Some(iv)) => {
            let r: MpiResult<()> = (|| {
                let (cs, ds) = if root == -3 {
                    counts_displs(iv.rsize, scounts, displs)?
                } else {
                    (vec![], vec![])
                };
                crate::abi::more::inter_scatterv(
                    iv,
                    sbuf as *const u8,
                    &cs,
                    &ds,
                    stype,
                    rbuf as *mut u8,
                    if root >= 0 {
                        nonneg("MPI_Scatterv", rcount)?
                    } else {
                        0
                    },
                    rtype,
                    root,
                )
            })();
            return result(g.me, comm, "MPI_Scatterv", r);
        }
        Ok(None) => {}
        Err(e) => return entry::handle_error(g.me, comm, "MPI_Scatterv", e),
    }
    coll_call!(g, comm, "MPI_Scatterv", {
        let c = view(g.me, comm)?;
        let (cs, ds) = if c.rank == root {
            counts_displs(c.size, scounts, displs)?
        } else {
            (vec![0; c.size as usize], vec![0; c.size as usize])
        };
        coll::scatterv(
            c,
            sbuf as *const u8,
            &cs,
            &ds,
            stype,
            rbuf as *mut u8,
            in_place_count(rbuf as *const c_void, "MPI_Scatterv", rcount)?,
            rtype,
            root,
        )
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Allgather(
    sbuf: *const c_void,
    scount: c_int,
    stype: c_int,
    rbuf: *mut c_void,
    rcount: c_int,
    rtype: c_int,
    comm: c_int,
) -> c_int {
    let g = enter();
    match crate::abi::more::InterView::of(g.me, comm) {
        Ok(Some(iv)) => {
            let r: MpiResult<()> = (|| {
                let rc = nonneg("MPI_Allgather", rcount)?;
                let n = iv.rsize as usize;
                let displs: Vec<isize> = (0..n as isize).map(|i| i * rc as isize).collect();
                crate::abi::more::inter_allgatherv(
                    iv,
                    sbuf as *const u8,
                    nonneg("MPI_Allgather", scount)?,
                    stype,
                    rbuf as *mut u8,
                    &vec![rc; n],
                    &displs,
                    rtype,
                )
            })();
            return result(g.me, comm, "MPI_Allgather", r);
        }
        Ok(None) => {}
        Err(e) => return entry::handle_error(g.me, comm, "MPI_Allgather", e),
    }
    coll_call!(g, comm, "MPI_Allgather", {
        let c = view(g.me, comm)?;
        let rc = nonneg("MPI_Allgather", rcount)?;
        let counts = vec![rc; c.size as usize];
        let displs: Vec<isize> = (0..c.size as isize).map(|i| i * rc as isize).collect();
        coll::allgatherv(
            c,
            sbuf as *const u8,
            in_place_count(sbuf, "MPI_Allgather", scount)?,
            stype,
            rbuf as *mut u8,
            &counts,
            &displs,
            rtype,
        )
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Allgatherv(
    sbuf: *const c_void,
    scount: c_int,
    stype: c_int,
    rbuf: *mut c_void,
    rcounts: *const c_int,
    displs: *const c_int,
    rtype: c_int,
    comm: c_int,
) -> c_int {
    let g = enter();
    match crate::abi::more::InterView::of(g.me, comm) {
        Ok(Some(iv)) => {
            let r: MpiResult<()> = (|| {
                let (cs, ds) = counts_displs(iv.rsize, rcounts, displs)?;
                crate::abi::more::inter_allgatherv(
                    iv,
                    sbuf as *const u8,
                    nonneg("MPI_Allgatherv", scount)?,
                    stype,
                    rbuf as *mut u8,
                    &cs,
                    &ds,
                    rtype,
                )
            })();
            return result(g.me, comm, "MPI_Allgatherv", r);
        }
        Ok(None) => {}
        Err(e) => return entry::handle_error(g.me, comm, "MPI_Allgatherv", e),
    }
    coll_call!(g, comm, "MPI_Allgatherv", {
        let c = view(g.me, comm)?;
        let (cs, ds) = counts_displs(c.size, rcounts, displs)?;
        coll::allgatherv(
            c,
            sbuf as *const u8,
            in_place_count(sbuf, "MPI_Allgatherv", scount)?,
            stype,
            rbuf as *mut u8,
            &cs,
            &ds,
            rtype,
        )
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Alltoall(
    sbuf: *const c_void,
    scount: c_int,
    stype: c_int,
    rbuf: *mut c_void,
    rcount: c_int,
    rtype: c_int,
    comm: c_int,
) -> c_int {
    let g = enter();
    match crate::abi::more::InterView::of(g.me, comm) {
        Ok(Some(iv)) => {
            let r: MpiResult<()> = (|| {
                let (sc, rc) = (nonneg("MPI_Alltoall", scount)?, nonneg("MPI_Alltoall", rcount)?);
                let n = iv.rsize as usize;
                let (se, re) =
                    with_world(|w| Ok::<_, rt::MpiError>((w.dtype(stype)?.extent, w.dtype(rtype)?.extent)))?;
                let sd: Vec<isize> = (0..n as isize).map(|i| i * sc as isize * se).collect();
                let rd: Vec<isize> = (0..n as isize).map(|i| i * rc as isize * re).collect();
                crate::abi::more::inter_alltoallw(
                    iv,
                    sbuf as *const u8,
                    &vec![sc; n],
                    &sd,
                    &vec![stype; n],
                    rbuf as *mut u8,
                    &vec![rc; n],
                    &rd,
                    &vec![rtype; n],
                )
            })();
            return result(g.me, comm, "MPI_Alltoall", r);
        }
        Ok(None) => {}
        Err(e) => return entry::handle_error(g.me, comm, "MPI_Alltoall", e),
    }
    coll_call!(g, comm, "MPI_Alltoall", {
        let c = view(g.me, comm)?;
        // The send count and type are ignored with MPI_IN_PLACE.
        let sc = in_place_count(sbuf, "MPI_Alltoall", scount)?;
        let rc = nonneg("MPI_Alltoall", rcount)?;
        let n = c.size as usize;
        let sd: Vec<isize> = (0..n as isize).map(|i| i * sc as isize).collect();
        let rd: Vec<isize> = (0..n as isize).map(|i| i * rc as isize).collect();
        let (sc, sd, stype) = if sbuf as *mut u8 == IN_PLACE {
            (vec![rc; n], rd.clone(), rtype)
        } else {
            (vec![sc; n], sd, stype)
        };
        coll::alltoallv(
            c,
            sbuf as *const u8,
            &sc,
            &sd,
            stype,
            rbuf as *mut u8,
            &vec![rc; n],
            &rd,
            rtype,
            true,
        )
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Alltoallv(
    sbuf: *const c_void,
    scounts: *const c_int,
    sdispls: *const c_int,
    stype: c_int,
    rbuf: *mut c_void,
    rcounts: *const c_int,
    rdispls: *const c_int,
    rtype: c_int,
    comm: c_int,
) -> c_int {
    let g = enter();
    match crate::abi::more::InterView::of(g.me, comm) {
        Ok(Some(iv)) => {
            let r: MpiResult<()> = (|| {
                let n = iv.rsize as usize;
                let (sc, sd) = counts_displs(iv.rsize, scounts, sdispls)?;
                let (rc, rd) = counts_displs(iv.rsize, rcounts, rdispls)?;
                let (se, re) =
                    with_world(|w| Ok::<_, rt::MpiError>((w.dtype(stype)?.extent, w.dtype(rtype)?.extent)))?;
                let sd: Vec<isize> = sd.iter().map(|d| d * se).collect();
                let rd: Vec<isize> = rd.iter().map(|d| d * re).collect();
                crate::abi::more::inter_alltoallw(
                    iv,
                    sbuf as *const u8,
                    &sc,
                    &sd,
                    &vec![stype; n],
                    rbuf as *mut u8,
                    &rc,
                    &rd,
                    &vec![rtype; n],
                )
            })();
            return result(g.me, comm, "MPI_Alltoallv", r);
        }
        Ok(None) => {}
        Err(e) => return entry::handle_error(g.me, comm, "MPI_Alltoallv", e),
    }
    coll_call!(g, comm, "MPI_Alltoallv", {
        let c = view(g.me, comm)?;
        let (rc, rd) = counts_displs(c.size, rcounts, rdispls)?;
        // With MPI_IN_PLACE the send arguments are those of the receive.
        let (sc, sd, stype) = if sbuf as *mut u8 == IN_PLACE {
            (rc.clone(), rd.clone(), rtype)
        } else {
            let (sc, sd) = counts_displs(c.size, scounts, sdispls)?;
            (sc, sd, stype)
        };
        coll::alltoallv(
            c,
            sbuf as *const u8,
            &sc,
            &sd,
            stype,
            rbuf as *mut u8,
            &rc,
            &rd,
            rtype,
            false,
        )
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Reduce_scatter(
    sbuf: *const c_void,
    rbuf: *mut c_void,
    rcounts: *const c_int,
    dt: c_int,
    op: c_int,
    comm: c_int,
) -> c_int {
    let g = enter();
    match crate::abi::more::InterView::of(g.me, comm) {
        Ok(Some(iv)) => {
            let r: MpiResult<()> = (|| {
                let local = with_world(|w| w.ranks[g.me as usize].comm(comm).map(|c| c.size()))?;
                let (rc, _) = counts_displs(local, rcounts, std::ptr::null())?;
                let total: usize = rc.iter().sum();
                crate::abi::more::inter_reduce_scatter(
                    iv,
                    sbuf as *const u8,
                    rbuf as *mut u8,
                    &rc,
                    total,
                    dt,
                    op,
                )
            })();
            return result(g.me, comm, "MPI_Reduce_scatter", r);
        }
        Ok(None) => {}
        Err(e) => return entry::handle_error(g.me, comm, "MPI_Reduce_scatter", e),
    }
    coll_call!(g, comm, "MPI_Reduce_scatter", {
        let c = view(g.me, comm)?;
        let (rc, _) = counts_displs(c.size, rcounts, std::ptr::null())?;
        coll::reduce_scatter(c, sbuf as *const u8, rbuf as *mut u8, &rc, dt, op)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Reduce_scatter_block(
    sbuf: *const c_void,
    rbuf: *mut c_void,
    rcount: c_int,
    dt: c_int,
    op: c_int,
    comm: c_int,
) -> c_int {
    let g = enter();
    match crate::abi::more::InterView::of(g.me, comm) {
        Ok(Some(iv)) => {
            let r: MpiResult<()> = (|| {
                let local = with_world(|w| w.ranks[g.me as usize].comm(comm).map(|c| c.size()))?;
                let rc = vec![nonneg("MPI_Reduce_scatter_block", rcount)?; local as usize];
                let total: usize = rc.iter().sum();
                crate::abi::more::inter_reduce_scatter(
                    iv,
                    sbuf as *const u8,
                    rbuf as *mut u8,
                    &rc,
                    total,
                    dt,
                    op,
                )
            })();
            return result(g.me, comm, "MPI_Reduce_scatter_block", r);
        }
        Ok(None) => {}
        Err(e) => return entry::handle_error(g.me, comm, "MPI_Reduce_scatter_block", e),
    }
    coll_call!(g, comm, "MPI_Reduce_scatter_block", {
        let c = view(g.me, comm)?;
        let rc = vec![nonneg("MPI_Reduce_scatter_block", rcount)?; c.size as usize];
        coll::reduce_scatter(c, sbuf as *const u8, rbuf as *mut u8, &rc, dt, op)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Scan(
    sbuf: *const c_void,
    rbuf: *mut c_void,
    count: c_int,
    dt: c_int,
    op: c_int,
    comm: c_int,
) -> c_int {
    let g = enter();
    coll_call!(
        g,
        comm,
        "MPI_Scan",
        coll::scan(
            view(g.me, comm)?,
            sbuf as *const u8,
            rbuf as *mut u8,
            nonneg("MPI_Scan", count)?,
            dt,
            op,
            false
        )
    )
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Exscan(
    sbuf: *const c_void,
    rbuf: *mut c_void,
    count: c_int,
    dt: c_int,
    op: c_int,
    comm: c_int,
) -> c_int {
    let g = enter();
    coll_call!(
        g,
        comm,
        "MPI_Exscan",
        coll::scan(
            view(g.me, comm)?,
            sbuf as *const u8,
            rbuf as *mut u8,
            nonneg("MPI_Exscan", count)?,
            dt,
            op,
            true
        )
    )
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Op_create(f: Option<UserFn>, commute: c_int, op: *mut c_int) -> c_int {
    let Some(func) = f else { return rt::MPI_ERR_OP };
    let h = with_world(|w| {
        w.ops.push(Some(Op::User {
            func,
            commutative: commute != 0,
        }));
        (w.ops.len() - 1) as c_int
    });
    set(op, h);
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Op_free(op: *mut c_int) -> c_int {
    if *op > 14 {
        with_world(|w| {
            if let Some(o) = w.ops.get_mut(*op as usize) {
                *o = None;
            }
        });
    }
    *op = 0;
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Op_commutative(op: c_int, commute: *mut c_int) -> c_int {
    match with_world(|w| w.op(op)) {
        Ok(o) => {
            set(commute, o.is_commutative() as c_int);
            MPI_SUCCESS
        }
        Err(e) => e.code,
    }
}

// ------------------------------------------------------------------ datatypes

fn type_info<T>(dt: c_int, f: impl FnOnce(&Datatype) -> T) -> Result<T, c_int> {
    with_world(|w| w.dtype(dt).map(|d| f(&d)).map_err(|e| e.code))
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_size(dt: c_int, size: *mut c_int) -> c_int {
    match type_info(dt, |d| d.size) {
        Ok(s) => {
            set(size, s as c_int);
            MPI_SUCCESS
        }
        Err(c) => c,
    }
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_get_extent(dt: c_int, lb: *mut Aint, extent: *mut Aint) -> c_int {
    match type_info(dt, |d| (d.lb, d.extent)) {
        Ok((l, e)) => {
            set(lb, l);
            set(extent, e);
            MPI_SUCCESS
        }
        Err(c) => c,
    }
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_get_true_extent(dt: c_int, lb: *mut Aint, extent: *mut Aint) -> c_int {
    match type_info(dt, |d| (d.true_lb, d.true_ub - d.true_lb)) {
        Ok((l, e)) => {
            set(lb, l);
            set(extent, e);
            MPI_SUCCESS
        }
        Err(c) => c,
    }
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_extent(dt: c_int, extent: *mut Aint) -> c_int {
    MPI_Type_get_extent(dt, std::ptr::null_mut(), extent)
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_lb(dt: c_int, lb: *mut Aint) -> c_int {
    MPI_Type_get_extent(dt, lb, std::ptr::null_mut())
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_ub(dt: c_int, ub: *mut Aint) -> c_int {
    match type_info(dt, |d| d.lb + d.extent) {
        Ok(u) => {
            set(ub, u);
            MPI_SUCCESS
        }
        Err(c) => c,
    }
}

fn new_type(pieces: &[(isize, i32, usize)], combiner: i32, out: *mut c_int) -> c_int {
    let r = with_world(|w| -> MpiResult<c_int> {
        let children: Vec<Rc<Datatype>> = pieces.iter().map(|p| w.dtype(p.1)).collect::<MpiResult<_>>()?;
        let refs: Vec<(isize, &Datatype, usize)> = pieces
            .iter()
            .zip(children.iter())
            .map(|(p, c)| (p.0, c.as_ref(), p.2))
            .collect();
        let t = Datatype::from_pieces("derived", &refs, combiner);
        Ok(w.add_type(t))
    });
    match r {
        Ok(h) => {
            // Safety: out is the application's MPI_Datatype pointer.
            unsafe { set(out, h) };
            MPI_SUCCESS
        }
        Err(e) => e.code,
    }
}

fn extent_of(dt: c_int) -> Result<isize, c_int> {
    type_info(dt, |d| d.extent)
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_contiguous(count: c_int, old: c_int, new: *mut c_int) -> c_int {
    if count < 0 {
        return MPI_ERR_COUNT;
    }
    let rc = new_type(&[(0, old, count as usize)], 2, new);
    if rc == MPI_SUCCESS {
        crate::abi::dtype::record(*new, vec![count as i64], vec![], &[old]);
    }
    rc
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_vector(
    count: c_int,
    blen: c_int,
    stride: c_int,
    old: c_int,
    new: *mut c_int,
) -> c_int {
    let ext = match extent_of(old) {
        Ok(e) => e,
        Err(c) => return c,
    };
    if count < 0 || blen < 0 {
        return MPI_ERR_COUNT;
    }
    let pieces: Vec<(isize, i32, usize)> = (0..count as isize)
        .map(|i| (i * stride as isize * ext, old, blen as usize))
        .collect();
    let rc = new_type(&pieces, 3, new);
    if rc == MPI_SUCCESS {
        let ints = vec![count as i64, blen as i64, stride as i64];
        crate::abi::dtype::record(*new, ints, vec![], &[old]);
    }
    rc
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_create_hvector(
    count: c_int,
    blen: c_int,
    stride: Aint,
    old: c_int,
    new: *mut c_int,
) -> c_int {
    if count < 0 || blen < 0 {
        return MPI_ERR_COUNT;
    }
    let pieces: Vec<(isize, i32, usize)> = (0..count as isize)
        .map(|i| (i * stride, old, blen as usize))
        .collect();
    let rc = new_type(&pieces, 4, new);
    if rc == MPI_SUCCESS {
        crate::abi::dtype::record(*new, vec![count as i64, blen as i64], vec![stride], &[old]);
    }
    rc
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_hvector(
    count: c_int,
    blen: c_int,
    stride: Aint,
    old: c_int,
    new: *mut c_int,
) -> c_int {
    MPI_Type_create_hvector(count, blen, stride, old, new)
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_indexed(
    count: c_int,
    blens: *const c_int,
    displs: *const c_int,
    old: c_int,
    new: *mut c_int,
) -> c_int {
    let ext = match extent_of(old) {
        Ok(e) => e,
        Err(c) => return c,
    };
    let pieces: Vec<(isize, i32, usize)> = (0..count.max(0) as usize)
        .map(|i| {
            (
                *displs.add(i) as isize * ext,
                old,
                (*blens.add(i)).max(0) as usize,
            )
        })
        .collect();
    let rc = new_type(&pieces, 5, new);
    if rc == MPI_SUCCESS {
        let n = count.max(0) as usize;
        let mut ints = vec![count as i64];
        ints.extend((0..n).map(|i| *blens.add(i) as i64));
        ints.extend((0..n).map(|i| *displs.add(i) as i64));
        crate::abi::dtype::record(*new, ints, vec![], &[old]);
    }
    rc
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_create_hindexed(
    count: c_int,
    blens: *const c_int,
    displs: *const Aint,
    old: c_int,
    new: *mut c_int,
) -> c_int {
    let pieces: Vec<(isize, i32, usize)> = (0..count.max(0) as usize)
        .map(|i| (*displs.add(i), old, (*blens.add(i)).max(0) as usize))
        .collect();
    let rc = new_type(&pieces, 6, new);
    if rc == MPI_SUCCESS {
        let n = count.max(0) as usize;
        let mut ints = vec![count as i64];
        ints.extend((0..n).map(|i| *blens.add(i) as i64));
        let aints = (0..n).map(|i| *displs.add(i)).collect();
        crate::abi::dtype::record(*new, ints, aints, &[old]);
    }
    rc
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_hindexed(
    count: c_int,
    blens: *const c_int,
    displs: *const Aint,
    old: c_int,
    new: *mut c_int,
) -> c_int {
    MPI_Type_create_hindexed(count, blens, displs, old, new)
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_create_indexed_block(
    count: c_int,
    blen: c_int,
    displs: *const c_int,
    old: c_int,
    new: *mut c_int,
) -> c_int {
    let ext = match extent_of(old) {
        Ok(e) => e,
        Err(c) => return c,
    };
    let pieces: Vec<(isize, i32, usize)> = (0..count.max(0) as usize)
        .map(|i| (*displs.add(i) as isize * ext, old, blen.max(0) as usize))
        .collect();
    let rc = new_type(&pieces, 7, new);
    if rc == MPI_SUCCESS {
        let mut ints = vec![count as i64, blen as i64];
        ints.extend((0..count.max(0) as usize).map(|i| *displs.add(i) as i64));
        crate::abi::dtype::record(*new, ints, vec![], &[old]);
    }
    rc
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_create_hindexed_block(
    count: c_int,
    blen: c_int,
    displs: *const Aint,
    old: c_int,
    new: *mut c_int,
) -> c_int {
    let pieces: Vec<(isize, i32, usize)> = (0..count.max(0) as usize)
        .map(|i| (*displs.add(i), old, blen.max(0) as usize))
        .collect();
    let rc = new_type(&pieces, 11, new);
    if rc == MPI_SUCCESS {
        let aints = (0..count.max(0) as usize).map(|i| *displs.add(i)).collect();
        crate::abi::dtype::record(*new, vec![count as i64, blen as i64], aints, &[old]);
    }
    rc
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_create_struct(
    count: c_int,
    blens: *const c_int,
    displs: *const Aint,
    types: *const c_int,
    new: *mut c_int,
) -> c_int {
    let pieces: Vec<(isize, i32, usize)> = (0..count.max(0) as usize)
        .map(|i| (*displs.add(i), *types.add(i), (*blens.add(i)).max(0) as usize))
        .collect();
    let rc = new_type(&pieces, 8, new);
    if rc != MPI_SUCCESS {
        return rc;
    }
    // Like C structs (and MPICH), the extent is padded to the largest
    // alignment of the members, unless MPI_UB/MPI_LB or a resized type set it.
    let h = *new;
    with_world(|w| {
        if let Ok(d) = w.dtype(h) {
            let align = d.align.max(1) as isize;
            if !d.has_ub_marker && d.extent % align != 0 {
                let mut t = (*d).clone();
                t.extent += align - t.extent % align;
                w.types[h as usize] = Some(Rc::new(t));
            }
        }
    });
    let n = count.max(0) as usize;
    let mut ints = vec![count as i64];
    ints.extend((0..n).map(|i| *blens.add(i) as i64));
    let aints = (0..n).map(|i| *displs.add(i)).collect();
    let olds: Vec<c_int> = (0..n).map(|i| *types.add(i)).collect();
    crate::abi::dtype::record(h, ints, aints, &olds);
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_struct(
    count: c_int,
    blens: *const c_int,
    displs: *const Aint,
    types: *const c_int,
    new: *mut c_int,
) -> c_int {
    MPI_Type_create_struct(count, blens, displs, types, new)
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_create_resized(
    old: c_int,
    lb: Aint,
    extent: Aint,
    new: *mut c_int,
) -> c_int {
    let r = with_world(|w| -> MpiResult<c_int> {
        let d = w.dtype(old)?;
        Ok(w.add_type(d.resized(lb, extent)))
    });
    match r {
        Ok(h) => {
            crate::abi::dtype::record(h, vec![], vec![lb, extent], &[old]);
            set(new, h);
            MPI_SUCCESS
        }
        Err(e) => e.code,
    }
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_create_subarray(
    ndims: c_int,
    sizes: *const c_int,
    subsizes: *const c_int,
    starts: *const c_int,
    order: c_int,
    old: c_int,
    new: *mut c_int,
) -> c_int {
    let ext = match extent_of(old) {
        Ok(e) => e,
        Err(c) => return c,
    };
    let nd = ndims.max(0) as usize;
    let get = |p: *const c_int, i: usize| *p.add(if order == 0 { i } else { nd - 1 - i }) as isize;
    // Enumerate the rows of the last (fastest) dimension in C order.
    let mut pieces: Vec<(isize, i32, usize)> = Vec::new();
    let mut total = 1isize;
    for i in 0..nd {
        total *= get(sizes, i);
    }
    if nd == 0 {
        return new_type(&[], 9, new);
    }
    let mut idx = vec![0isize; nd];
    loop {
        let mut off = 0isize;
        for (i, x) in idx.iter().enumerate() {
            off = off * get(sizes, i) + get(starts, i) + x;
        }
        pieces.push((off * ext, old, get(subsizes, nd - 1) as usize));
        // advance all but the last dimension
        let mut d = nd as isize - 2;
        loop {
            if d < 0 {
                break;
            }
            let du = d as usize;
            idx[du] += 1;
            if idx[du] < get(subsizes, du) {
                break;
            }
            idx[du] = 0;
            d -= 1;
        }
        if d < 0 {
            break;
        }
    }
    let rc = new_type(&pieces, 9, new);
    if rc != MPI_SUCCESS {
        return rc;
    }
    // The subarray's extent is the full array's.
    let h = *new;
    with_world(|w| {
        if let Ok(d) = w.dtype(h) {
            let mut t = (*d).clone();
            t.lb = 0;
            t.extent = total * ext;
            w.types[h as usize] = Some(Rc::new(t));
        }
    });
    let mut ints = vec![nd as i64];
    for p in [sizes, subsizes, starts] {
        ints.extend((0..nd).map(|i| *p.add(i) as i64));
    }
    ints.push(order as i64);
    crate::abi::dtype::record(h, ints, vec![], &[old]);
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_dup(old: c_int, new: *mut c_int) -> c_int {
    let r = with_world(|w| -> MpiResult<c_int> {
        let mut d = (*w.dtype(old)?).clone();
        d.predefined = false;
        d.combiner = 1;
        Ok(w.add_type(d))
    });
    match r {
        Ok(mut h) => {
            crate::abi::dtype::record(h, vec![], vec![], &[old]);
            let rc = crate::abi::more::copy_type_attrs(rt::current_rank(), old, h);
            if rc != MPI_SUCCESS {
                // A failing copy callback fails the dup, which yields MPI_DATATYPE_NULL.
                MPI_Type_free(&mut h);
                set(new, 0);
                return rc;
            }
            set(new, h);
            MPI_SUCCESS
        }
        Err(e) => e.code,
    }
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_commit(dt: *mut c_int) -> c_int {
    let h = *dt;
    with_world(|w| match w.dtype(h) {
        Ok(d) => {
            if !d.predefined {
                let mut t = (*d).clone();
                t.committed = true;
                w.types[h as usize] = Some(Rc::new(t));
            }
            MPI_SUCCESS
        }
        Err(e) => e.code,
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_free(dt: *mut c_int) -> c_int {
    let h = *dt;
    if matches!(with_world(|w| w.dtype(h).map(|d| d.predefined)), Ok(false)) {
        let rc = crate::abi::more::delete_type_attrs(rt::current_rank(), h);
        if rc != MPI_SUCCESS {
            return rc;
        }
    }
    let rc = with_world(|w| match w.dtype(h) {
        Ok(d) if d.predefined => rt::MPI_ERR_TYPE,
        Ok(_) => {
            w.types[h as usize] = None;
            MPI_SUCCESS
        }
        Err(e) => e.code,
    });
    if rc == MPI_SUCCESS {
        *dt = 0;
    }
    rc
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Get_address(loc: *const c_void, addr: *mut Aint) -> c_int {
    set(addr, loc as Aint);
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Address(loc: *const c_void, addr: *mut Aint) -> c_int {
    MPI_Get_address(loc, addr)
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Pack(
    inbuf: *const c_void,
    count: c_int,
    dt: c_int,
    out: *mut c_void,
    outsize: c_int,
    pos: *mut c_int,
    _comm: c_int,
) -> c_int {
    let d = match with_world(|w| w.dtype(dt)) {
        Ok(d) => d,
        Err(e) => return e.code,
    };
    let mut v = Vec::new();
    d.pack(inbuf as *const u8, count.max(0) as usize, &mut v);
    if *pos as usize + v.len() > outsize.max(0) as usize {
        return rt::MPI_ERR_TRUNCATE;
    }
    std::ptr::copy_nonoverlapping(v.as_ptr(), (out as *mut u8).add(*pos as usize), v.len());
    *pos += v.len() as c_int;
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Unpack(
    inbuf: *const c_void,
    insize: c_int,
    pos: *mut c_int,
    out: *mut c_void,
    count: c_int,
    dt: c_int,
    _comm: c_int,
) -> c_int {
    let d = match with_world(|w| w.dtype(dt)) {
        Ok(d) => d,
        Err(e) => return e.code,
    };
    let need = d.size * count.max(0) as usize;
    if *pos as usize + need > insize.max(0) as usize {
        return rt::MPI_ERR_TRUNCATE;
    }
    let data = std::slice::from_raw_parts((inbuf as *const u8).add(*pos as usize), need);
    d.unpack(data, out as *mut u8, count.max(0) as usize);
    *pos += need as c_int;
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Pack_size(count: c_int, dt: c_int, _comm: c_int, size: *mut c_int) -> c_int {
    match type_info(dt, |d| d.size) {
        Ok(s) => {
            set(size, (s * count.max(0) as usize) as c_int);
            MPI_SUCCESS
        }
        Err(c) => c,
    }
}

// ------------------------------------------------------------------ communicators and groups

#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_rank(comm: c_int, rank: *mut c_int) -> c_int {
    let me = rt::current_rank();
    match with_world(|w| w.ranks[me as usize].comm(comm).map(|c| c.my_rank)) {
        Ok(r) => {
            set(rank, r);
            MPI_SUCCESS
        }
        Err(e) => entry::handle_error(me, comm, "MPI_Comm_rank", e),
    }
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_size(comm: c_int, size: *mut c_int) -> c_int {
    let me = rt::current_rank();
    match with_world(|w| w.ranks[me as usize].comm(comm).map(|c| c.size())) {
        Ok(s) => {
            set(size, s);
            MPI_SUCCESS
        }
        Err(e) => entry::handle_error(me, comm, "MPI_Comm_size", e),
    }
}

/// Creates this rank's entry of a communicator derived from `parent` (same
/// group, or `group`), then, like SMPI 3.32's communicator constructor, has
/// the new communicator's rank 0 broadcast its id (one `MPI_INT`, with the
/// selected bcast): that message is part of what a Comm_dup / split / create /
/// Cart_create costs in simulated time.
pub(crate) fn derive_comm(me: u32, parent: c_int, color: i32, group: Option<Vec<u32>>) -> MpiResult<c_int> {
    let h = new_comm_entry(me, parent, color, group)?;
    announce_comm(me, h)?;
    Ok(h)
}

/// The id broadcast of SMPI's communicator constructor (see [`derive_comm`]).
fn announce_comm(me: u32, h: c_int) -> MpiResult<()> {
    const MPI_INT: c_int = 7;
    if h != MPI_COMM_NULL {
        let mut id: c_int = 0;
        coll::bcast(view(me, h)?, (&mut id as *mut c_int).cast(), 1, MPI_INT, 0)?;
    }
    Ok(())
}

fn new_comm_entry(me: u32, parent: c_int, color: i32, group: Option<Vec<u32>>) -> MpiResult<c_int> {
    with_world(|w| {
        let r = &mut w.ranks[me as usize];
        let p = r.comm_mut(parent)?;
        let creation = p.creations;
        p.creations += 1;
        let (pctx, errh) = (p.shared.context, p.errhandler);
        let group = match group {
            Some(g) => g,
            None => p.shared.group.as_ref().clone(),
        };
        let Some(my_rank) = group.iter().position(|&x| x == me) else {
            return Ok(MPI_COMM_NULL);
        };
        let context = w.agree_context(pctx, creation, color);
        let entry = CommEntry {
            shared: Rc::new(CommShared {
                context,
                group: Rc::new(group),
                remote: None,
            }),
            my_rank: my_rank as i32,
            errhandler: errh,
            name: String::new(),
            attrs: Default::default(),
            creations: 0,
            topo: None,
        };
        Ok(w.ranks[me as usize].add_comm(entry))
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_dup(comm: c_int, new: *mut c_int) -> c_int {
    let g = enter();
    let r = dup_comm(g.me, comm, true);
    match r {
        Ok(h) => {
            set(new, h);
            MPI_SUCCESS
        }
        Err(e) => entry::handle_error(g.me, comm, "MPI_Comm_dup", e),
    }
}

/// Comm_dup's work. `announce`: pay SMPI's id broadcast on the new
/// intra-communicator (MPI_Comm_idup does not: it must not block).
pub(crate) unsafe fn dup_comm(me: u32, comm: c_int, announce: bool) -> MpiResult<c_int> {
    {
        let (remote, topo) = with_world(|w| {
            w.ranks[me as usize]
                .comm(comm)
                .map(|c| (c.shared.remote.clone(), c.topo.clone()))
        })?;
        let h = new_comm_entry(me, comm, i32::MIN, None)?;
        if announce && remote.is_none() {
            announce_comm(me, h)?;
        }
        with_world(|w| {
            if let Ok(e) = w.ranks[me as usize].comm_mut(h) {
                e.topo = topo;
                if remote.is_some() {
                    let sh = &e.shared;
                    e.shared = Rc::new(CommShared {
                        context: sh.context,
                        group: sh.group.clone(),
                        remote,
                    });
                }
            }
        });
        crate::abi::more::copy_attrs(me, comm, h)?;
        Ok(h)
    }
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_split(comm: c_int, color: c_int, key: c_int, new: *mut c_int) -> c_int {
    let g = enter();
    let inter = with_world(|w| {
        w.ranks[g.me as usize]
            .comm(comm)
            .map(|c| c.shared.remote.is_some())
    });
    if let Ok(true) = inter {
        return match crate::abi::more::split_intercomm(g.me, comm, color, key) {
            Ok(h) => {
                set(new, h);
                MPI_SUCCESS
            }
            Err(e) => entry::handle_error(g.me, comm, "MPI_Comm_split", e),
        };
    }
    let r = (|| -> MpiResult<c_int> {
        let c = view(g.me, comm)?;
        let pairs = coll::split_tables(c, color, key)?;
        let pairs = match pairs {
            Some(p) if color != MPI_UNDEFINED => p,
            _ => {
                // Still count the creation so contexts stay agreed.
                with_world(|w| w.ranks[g.me as usize].comm_mut(comm).map(|p| p.creations += 1))?;
                return Ok(MPI_COMM_NULL);
            }
        };
        let parent_group = with_world(|w| w.ranks[g.me as usize].comm(comm).map(|p| p.shared.group.clone()))?;
        let mut members: Vec<(i32, usize)> = pairs
            .iter()
            .enumerate()
            .filter(|(_, p)| p[0] == color)
            .map(|(i, p)| (p[1], i))
            .collect();
        members.sort();
        let group: Vec<u32> = members.iter().map(|&(_, i)| parent_group[i]).collect();
        derive_comm(g.me, comm, color, Some(group))
    })();
    match r {
        Ok(h) => {
            set(new, h);
            MPI_SUCCESS
        }
        Err(e) => entry::handle_error(g.me, comm, "MPI_Comm_split", e),
    }
}

fn group_of(me: u32, h: c_int) -> MpiResult<rt::Group> {
    with_world(|w| {
        w.ranks[me as usize]
            .groups
            .get(h.max(0) as usize)
            .and_then(|g| g.clone())
            .ok_or_else(|| mpi_err(rt::MPI_ERR_GROUP, format!("invalid group handle {h}")))
    })
}

fn add_group(me: u32, g: Vec<u32>) -> c_int {
    if g.is_empty() {
        // Every empty group is MPI_GROUP_EMPTY.
        return 1;
    }
    with_world(|w| {
        let gs = &mut w.ranks[me as usize].groups;
        gs.push(Some(Rc::new(g)));
        (gs.len() - 1) as c_int
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_create(comm: c_int, group: c_int, new: *mut c_int) -> c_int {
    let g = enter();
    let inter = with_world(|w| {
        w.ranks[g.me as usize]
            .comm(comm)
            .map(|c| c.shared.remote.is_some())
    });
    if let Ok(true) = inter {
        // On an intercommunicator: each side names a subgroup of its own group.
        let r = group_of(g.me, group).and_then(|grp| {
            let pos = grp.iter().position(|&x| x == g.me);
            let (color, key) = match pos {
                Some(p) => (0, p as i32),
                None => (MPI_UNDEFINED, 0),
            };
            crate::abi::more::split_intercomm(g.me, comm, color, key)
        });
        return match r {
            Ok(h) => {
                set(new, h);
                MPI_SUCCESS
            }
            Err(e) => entry::handle_error(g.me, comm, "MPI_Comm_create", e),
        };
    }
    let r = group_of(g.me, group).and_then(|grp| derive_comm(g.me, comm, 0, Some(grp.as_ref().clone())));
    match r {
        Ok(h) => {
            set(new, h);
            MPI_SUCCESS
        }
        Err(e) => entry::handle_error(g.me, comm, "MPI_Comm_create", e),
    }
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_free(comm: *mut c_int) -> c_int {
    let g = enter();
    let h = *comm;
    if h == rt::MPI_COMM_WORLD || h == rt::MPI_COMM_SELF {
        return entry::handle_error(
            g.me,
            h,
            "MPI_Comm_free",
            mpi_err(rt::MPI_ERR_COMM, "cannot free a predefined communicator"),
        );
    }
    let r = crate::abi::more::delete_all_attrs(g.me, h).and_then(|_| {
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

#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_compare(c1: c_int, c2: c_int, res: *mut c_int) -> c_int {
    let me = rt::current_rank();
    let r = with_world(|w| -> MpiResult<c_int> {
        let a = w.ranks[me as usize].comm(c1)?;
        let b = w.ranks[me as usize].comm(c2)?;
        Ok(if c1 == c2 || Rc::ptr_eq(&a.shared, &b.shared) {
            0
        } else if a.shared.group == b.shared.group {
            1
        } else {
            let mut x = a.shared.group.as_ref().clone();
            let mut y = b.shared.group.as_ref().clone();
            x.sort();
            y.sort();
            if x == y {
                2
            } else {
                3
            }
        })
    });
    match r {
        Ok(v) => {
            set(res, v);
            MPI_SUCCESS
        }
        Err(e) => e.code,
    }
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_group(comm: c_int, group: *mut c_int) -> c_int {
    let me = rt::current_rank();
    match with_world(|w| {
        w.ranks[me as usize]
            .comm(comm)
            .map(|c| c.shared.group.as_ref().clone())
    }) {
        Ok(g) => {
            set(group, add_group(me, g));
            MPI_SUCCESS
        }
        Err(e) => entry::handle_error(me, comm, "MPI_Comm_group", e),
    }
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_test_inter(comm: c_int, flag: *mut c_int) -> c_int {
    let me = rt::current_rank();
    match with_world(|w| w.ranks[me as usize].comm(comm).map(|c| c.shared.remote.is_some())) {
        Ok(f) => {
            set(flag, f as c_int);
            MPI_SUCCESS
        }
        Err(e) => entry::handle_error(me, comm, "MPI_Comm_test_inter", e),
    }
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_set_name(comm: c_int, name: *const c_char) -> c_int {
    let me = rt::current_rank();
    let s = CStr::from_ptr(name).to_string_lossy().into_owned();
    let r = with_world(|w| w.ranks[me as usize].comm_mut(comm).map(|c| c.name = s));
    result(me, comm, "MPI_Comm_set_name", r)
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_get_name(comm: c_int, name: *mut c_char, len: *mut c_int) -> c_int {
    let me = rt::current_rank();
    match with_world(|w| w.ranks[me as usize].comm(comm).map(|c| c.name.clone())) {
        Ok(s) => {
            write_cstr(name, &s, len, 128);
            MPI_SUCCESS
        }
        Err(e) => entry::handle_error(me, comm, "MPI_Comm_get_name", e),
    }
}

static mut TAG_UB_VALUE: c_int = rt::TAG_UB;
static mut WTIME_IS_GLOBAL: c_int = 1;
/// MPI_HOST: no process is the host.
static mut HOST_RANK: c_int = rt::MPI_PROC_NULL;
/// MPI_IO: every process can do I/O (MPI_ANY_SOURCE).
static mut IO_RANK: c_int = -1;
static mut APPNUM: c_int = 0;
static UNIVERSE_SIZE: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);
/// MPI_LASTUSEDCODE: MPI_ERR_LASTCODE until MPI_Add_error_code adds codes.
pub(crate) static LAST_USED_CODE: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(64);

#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_get_attr(
    comm: c_int,
    key: c_int,
    val: *mut c_void,
    flag: *mut c_int,
) -> c_int {
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
        7 => Some(LAST_USED_CODE.as_ptr()),
        _ => None,
    };
    if let Some(p) = p {
        *(val as *mut *mut c_int) = p;
        set(flag, 1);
        return MPI_SUCCESS;
    }
    match with_world(|w| {
        w.ranks[me as usize]
            .comm(comm)
            .map(|c| c.attrs.get(&key).copied())
    }) {
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

#[no_mangle]
pub unsafe extern "C" fn MPI_Attr_get(comm: c_int, key: c_int, val: *mut c_void, flag: *mut c_int) -> c_int {
    MPI_Comm_get_attr(comm, key, val, flag)
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Group_size(group: c_int, size: *mut c_int) -> c_int {
    match group_of(rt::current_rank(), group) {
        Ok(g) => {
            set(size, g.len() as c_int);
            MPI_SUCCESS
        }
        Err(e) => e.code,
    }
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Group_rank(group: c_int, rank: *mut c_int) -> c_int {
    let me = rt::current_rank();
    match group_of(me, group) {
        Ok(g) => {
            set(
                rank,
                g.iter()
                    .position(|&x| x == me)
                    .map_or(MPI_UNDEFINED, |p| p as c_int),
            );
            MPI_SUCCESS
        }
        Err(e) => e.code,
    }
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Group_incl(
    group: c_int,
    n: c_int,
    ranks: *const c_int,
    new: *mut c_int,
) -> c_int {
    let me = rt::current_rank();
    match group_of(me, group) {
        Ok(g) => {
            let mut v = Vec::new();
            for i in 0..n.max(0) as usize {
                let r = *ranks.add(i);
                if r < 0 || r as usize >= g.len() {
                    return rt::MPI_ERR_RANK;
                }
                v.push(g[r as usize]);
            }
            set(new, add_group(me, v));
            MPI_SUCCESS
        }
        Err(e) => e.code,
    }
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Group_excl(
    group: c_int,
    n: c_int,
    ranks: *const c_int,
    new: *mut c_int,
) -> c_int {
    let me = rt::current_rank();
    match group_of(me, group) {
        Ok(g) => {
            let ex: Vec<i32> = (0..n.max(0) as usize).map(|i| *ranks.add(i)).collect();
            let v: Vec<u32> = g
                .iter()
                .enumerate()
                .filter(|(i, _)| !ex.contains(&(*i as i32)))
                .map(|(_, &x)| x)
                .collect();
            set(new, add_group(me, v));
            MPI_SUCCESS
        }
        Err(e) => e.code,
    }
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Group_translate_ranks(
    g1: c_int,
    n: c_int,
    r1: *const c_int,
    g2: c_int,
    r2: *mut c_int,
) -> c_int {
    let me = rt::current_rank();
    let (a, b) = match (group_of(me, g1), group_of(me, g2)) {
        (Ok(a), Ok(b)) => (a, b),
        _ => return rt::MPI_ERR_GROUP,
    };
    for i in 0..n.max(0) as usize {
        let r = *r1.add(i);
        *r2.add(i) = if r == rt::MPI_PROC_NULL {
            rt::MPI_PROC_NULL
        } else if r < 0 || r as usize >= a.len() {
            return rt::MPI_ERR_RANK;
        } else {
            b.iter()
                .position(|&x| x == a[r as usize])
                .map_or(MPI_UNDEFINED, |p| p as c_int)
        };
    }
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Group_free(group: *mut c_int) -> c_int {
    let me = rt::current_rank();
    let h = *group;
    if h > 1 {
        with_world(|w| {
            if let Some(g) = w.ranks[me as usize].groups.get_mut(h as usize) {
                *g = None;
            }
        });
    }
    *group = 0;
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn MPI_COMM_DUP_FN(
    _comm: c_int,
    _key: c_int,
    _extra: *mut c_void,
    inval: *mut c_void,
    outval: *mut c_void,
    flag: *mut c_int,
) -> c_int {
    *(outval as *mut *mut c_void) = inval;
    set(flag, 1);
    MPI_SUCCESS
}

// ------------------------------------------------------------------ SMPI extensions (smpi.h)

#[no_mangle]
pub unsafe extern "C" fn smpi_execute(seconds: f64) {
    let g = enter();
    entry::execute_seconds(g.me, seconds, false);
}

#[no_mangle]
pub unsafe extern "C" fn smpi_execute_benched(seconds: f64) {
    let g = enter();
    entry::execute_seconds(g.me, seconds, true);
}

#[no_mangle]
pub unsafe extern "C" fn smpi_execute_flops(flops: f64) {
    let g = enter();
    if flops > 0.0 {
        with_world(|w| w.ranks[g.me as usize].ctx()).execute(flops);
    }
}

#[no_mangle]
pub unsafe extern "C" fn smpi_execute_flops_benched(flops: f64) {
    smpi_execute_flops(flops)
}

#[no_mangle]
pub unsafe extern "C" fn smpi_sleep_seconds(seconds: f64) {
    let g = enter();
    rt::sleep_for(g.me, seconds);
}
