//! Requests (MPI chapter 3.7–3.9, 13.2): completion (wait, test), persistent requests,
//! cancellation, generalized requests and status fields.
#![allow(non_snake_case, clippy::missing_safety_doc, clippy::too_many_arguments)]

use crate::mpi::ti_trace::{self, ti};
use std::ffi::{c_int, c_void};

use crate::mpi::entry::{self, enter_call, result};
use crate::mpi::{
    self as rt, mpi_err, with_world, CStatus, Greq, GreqCancelFn, GreqFreeFn, GreqQueryFn, MpiError,
    MpiResult, SendMode, StatusInfo, MPI_SUCCESS, MPI_UNDEFINED,
};

use super::args::{write_single_status, write_status, *};
use super::p2p::p2p;

pub(super) fn is_persistent(id: u32) -> bool {
    with_world(|w| {
        w.reqs
            .get(id as usize)
            .and_then(|r| r.as_ref())
            .is_some_and(|r| r.persistent)
    })
}

pub(super) fn empty_status() -> StatusInfo {
    StatusInfo {
        source: rt::MPI_ANY_SOURCE,
        tag: rt::MPI_ANY_TAG,
        error: 0,
        bytes: 0,
        cancelled: false,
    }
}

/// The communicator of request `id` (whose error handler its errors go through).
/// (`MPI_COMM_WORLD`'s for a request already gone, e.g. one that completed
/// when it started.)
fn comm_of_request(id: u32) -> c_int {
    with_world(|w| {
        w.reqs
            .get(id as usize)
            .and_then(|r| r.as_ref())
            .map_or(rt::MPI_COMM_WORLD, |r| r.comm_handle)
    })
}

/// The error a completed request reports, through its communicator's error
/// handler (`MPI_ERR_TRUNCATE` for a receive into a too-small buffer).
fn completion_result(me: u32, comm: c_int, call: &str, s: &StatusInfo) -> c_int {
    if s.error == MPI_SUCCESS {
        return MPI_SUCCESS;
    }
    let what = if s.error == rt::MPI_ERR_TRUNCATE {
        format!(
            "message truncated: the receive buffer holds {} bytes, the message was longer",
            s.bytes
        )
    } else {
        rt::error_string(s.error).to_string()
    };
    entry::handle_error(me, comm, call, mpi_err(s.error, what))
}

/// `MPI_ERR_IN_STATUS` through the error handler of the first failed
/// request's communicator, when any status of a multiple completion holds an error.
fn in_status_result(me: u32, failed: Option<(usize, c_int, i32)>, call: &str) -> c_int {
    match failed {
        None => MPI_SUCCESS,
        Some((i, comm, code)) => entry::handle_error(
            me,
            comm,
            call,
            mpi_err(
                rt::MPI_ERR_IN_STATUS,
                format!("request {i}: {}", rt::error_string(code)),
            ),
        ),
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Wait(req: *mut c_int, st: *mut CStatus) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        let g = enter_call("MPI_Wait");
        let id = match arg_request_ptr(req).and_then(|_| req_id(*req)) {
            Ok(Some(id)) => id,
            Ok(None) => {
                write_status(st, &empty_status());
                return MPI_SUCCESS;
            }
            Err(e) => return entry::handle_error(g.me, rt::MPI_COMM_WORLD, "MPI_Wait", e),
        };
        let persistent = is_persistent(id);
        let comm = comm_of_request(id);
        ti!(ti_trace::wait(g.me, "wait", id));
        let s = rt::wait(g.me, id, "MPI_Wait");
        if !persistent {
            *req = 0;
        }
        write_single_status(st, &s);
        completion_result(g.me, comm, "MPI_Wait", &s)
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Waitall(n: c_int, reqs: *mut c_int, sts: *mut CStatus) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        let g = enter_call("MPI_Waitall");
        ti!(ti_trace::waitall(g.me, n.max(0) as usize));
        let ids = match collect(n, reqs) {
            Ok(v) => v,
            Err(e) => return entry::handle_error(g.me, rt::MPI_COMM_WORLD, "MPI_Waitall", e),
        };
        // SMPI 3.32 waits with waitany until all are done: completion order.
        let comms: Vec<Option<c_int>> = ids.iter().map(|id| id.map(comm_of_request)).collect();
        let statuses = rt::wait_all(g.me, &ids);
        let mut failed = None;
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
                    if s.error != MPI_SUCCESS && failed.is_none() {
                        failed = Some((i, comms[i].unwrap_or(rt::MPI_COMM_WORLD), s.error));
                    }
                    write_status(st, s);
                }
                None => write_status(st, &empty_status()),
            }
        }
        in_status_result(g.me, failed, "MPI_Waitall")
    }
}

pub(super) unsafe fn collect(n: c_int, reqs: *mut c_int) -> Result<Vec<Option<u32>>, MpiError> {
    // Safety: the caller upholds this function's contract (see its `# Safety`).
    unsafe {
        let n = arg_requests(n, reqs)?;
        (0..n).map(|i| req_id(*reqs.add(i))).collect()
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Waitany(
    n: c_int,
    reqs: *mut c_int,
    index: *mut c_int,
    st: *mut CStatus,
) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        let g = enter_call("MPI_Waitany");
        ti!(ti_trace::unrepresented("MPI_Waitany"));
        let ids = match collect(n, reqs) {
            Ok(v) => v,
            Err(e) => return entry::handle_error(g.me, rt::MPI_COMM_WORLD, "MPI_Waitany", e),
        };
        let comms: Vec<Option<c_int>> = ids.iter().map(|id| id.map(comm_of_request)).collect();
        match rt::wait_any(g.me, &ids) {
            Some((i, s)) => {
                if !is_persistent_handle(*reqs.add(i)) {
                    *reqs.add(i) = 0;
                }
                set(index, i as c_int);
                write_status(st, &s);
                completion_result(g.me, comms[i].unwrap_or(rt::MPI_COMM_WORLD), "MPI_Waitany", &s)
            }
            None => {
                set(index, MPI_UNDEFINED);
                write_status(st, &empty_status());
                MPI_SUCCESS
            }
        }
    }
}

pub(super) fn is_persistent_handle(h: c_int) -> bool {
    h > 0 && is_persistent((h - 1) as u32)
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Waitsome(
    n: c_int,
    reqs: *mut c_int,
    outcount: *mut c_int,
    indices: *mut c_int,
    sts: *mut CStatus,
) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        let g = enter_call("MPI_Waitsome");
        ti!(ti_trace::unrepresented("MPI_Waitsome"));
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
        let comms: Vec<Option<c_int>> = ids.iter().map(|id| id.map(comm_of_request)).collect();
        let mut k = 0usize;
        let mut failed = None;
        let mut record = |i: usize, s: &StatusInfo| {
            if !is_persistent_handle(*reqs.add(i)) {
                *reqs.add(i) = 0;
            }
            if s.error != MPI_SUCCESS && failed.is_none() {
                failed = Some((i, comms[i].unwrap_or(rt::MPI_COMM_WORLD), s.error));
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
        in_status_result(g.me, failed, "MPI_Waitsome")
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Test(req: *mut c_int, flag: *mut c_int, st: *mut CStatus) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        let g = enter_call("MPI_Test");
        let id = match arg_request_ptr(req).and_then(|_| req_id(*req)) {
            Ok(Some(id)) => id,
            Ok(None) => {
                set(flag, 1);
                write_status(st, &empty_status());
                return MPI_SUCCESS;
            }
            Err(e) => return entry::handle_error(g.me, rt::MPI_COMM_WORLD, "MPI_Test", e),
        };
        let persistent = is_persistent(id);
        let comm = comm_of_request(id);
        ti!(ti_trace::wait(g.me, "test", id));
        match rt::test(g.me, id) {
            Some(s) => {
                if !persistent {
                    *req = 0;
                }
                set(flag, 1);
                write_single_status(st, &s);
                completion_result(g.me, comm, "MPI_Test", &s)
            }
            None => {
                set(flag, 0);
                MPI_SUCCESS
            }
        }
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Testall(
    n: c_int,
    reqs: *mut c_int,
    flag: *mut c_int,
    sts: *mut CStatus,
) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        let g = enter_call("MPI_Testall");
        ti!(ti_trace::unrepresented("MPI_Testall"));
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
        let mut failed = None;
        for (i, id) in ids.iter().enumerate() {
            let st = if sts.is_null() {
                std::ptr::null_mut()
            } else {
                sts.add(i)
            };
            match id {
                Some(id) => {
                    let comm = comm_of_request(*id);
                    let s = rt::finish(g.me, *id);
                    if !is_persistent(*id) {
                        *reqs.add(i) = 0;
                    }
                    if s.error != MPI_SUCCESS && failed.is_none() {
                        failed = Some((i, comm, s.error));
                    }
                    write_status(st, &s);
                }
                None => write_status(st, &empty_status()),
            }
        }
        set(flag, 1);
        in_status_result(g.me, failed, "MPI_Testall")
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Testany(
    n: c_int,
    reqs: *mut c_int,
    index: *mut c_int,
    flag: *mut c_int,
    st: *mut CStatus,
) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        let g = enter_call("MPI_Testany");
        ti!(ti_trace::unrepresented("MPI_Testany"));
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
                let comm = comm_of_request(id);
                let s = rt::finish(g.me, id);
                if !persistent {
                    *reqs.add(i) = 0;
                }
                set(flag, 1);
                set(index, i as c_int);
                write_status(st, &s);
                completion_result(g.me, comm, "MPI_Testany", &s)
            }
            None => {
                set(flag, 0);
                set(index, MPI_UNDEFINED);
                MPI_SUCCESS
            }
        }
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Testsome(
    n: c_int,
    reqs: *mut c_int,
    outcount: *mut c_int,
    indices: *mut c_int,
    sts: *mut CStatus,
) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        let g = enter_call("MPI_Testsome");
        ti!(ti_trace::unrepresented("MPI_Testsome"));
        let ids = match collect(n, reqs) {
            Ok(v) => v,
            Err(e) => return entry::handle_error(g.me, rt::MPI_COMM_WORLD, "MPI_Testsome", e),
        };
        if ids.iter().all(|x| x.is_none()) {
            set(outcount, MPI_UNDEFINED);
            return MPI_SUCCESS;
        }
        let mut k = 0usize;
        let mut failed = None;
        for (i, id) in ids.iter().enumerate() {
            if let Some(id) = id {
                // As SMPI: one MPI_Test poll per request.
                if rt::test_poll(g.me, *id) {
                    let persistent = is_persistent(*id);
                    let comm = comm_of_request(*id);
                    let s = rt::finish(g.me, *id);
                    if s.error != MPI_SUCCESS && failed.is_none() {
                        failed = Some((i, comm, s.error));
                    }
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
        in_status_result(g.me, failed, "MPI_Testsome")
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Request_free(req: *mut c_int) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        let g = enter_call("MPI_Request_free");
        match arg_request_ptr(req).and_then(|_| req_id(*req)) {
            Ok(Some(id)) if rt::greq_of(id).is_some() => {
                rt::release_greq(id);
                *req = 0;
                MPI_SUCCESS
            }
            Ok(Some(id)) => {
                with_world(|w| {
                    let r = w.req(id);
                    if r.persistent && r.active {
                        // Legal, but nothing can tell the program when the
                        // operation it started is over (MBI: a missing wait).
                        eprintln!(
                            "smpirun: warning: rank {} frees an active persistent request (started by \
                             MPI_Start, never completed by MPI_Wait or MPI_Test): its operation was never \
                             waited, so the program cannot know when its buffer is free again",
                            g.me
                        );
                    }
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
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Request_get_status(
    req: c_int,
    flag: *mut c_int,
    st: *mut CStatus,
) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        let _g = enter_call("MPI_Request_get_status");
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
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Cancel(req: *mut c_int) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        let g = enter_call("MPI_Cancel");
        let handle = arg_request_ptr(req).and_then(|_| req_id(*req));
        if let Err(e) = handle {
            return entry::handle_error(g.me, rt::MPI_COMM_WORLD, "MPI_Cancel", e);
        }
        if let Ok(Some(id)) = handle {
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
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Test_cancelled(st: *const CStatus, flag: *mut c_int) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        set(flag, if st.is_null() { 0 } else { (*st).cancelled });
        MPI_SUCCESS
    }
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
    // Safety: the caller upholds this function's contract (see its `# Safety`).
    unsafe {
        let g = enter_call(call);
        let n = check_count!(g.me, comm, call, count);
        // Build an inactive request by posting nothing: store parameters only.
        let r = with_world(|w| -> MpiResult<u32> {
            // The arguments a send or receive would reject are rejected now,
            // not at MPI_Start: MPI says the call that names them is erroneous.
            let a = p2p(buf, n, dt, peer, tag, comm);
            crate::mpi::p2p::check_p2p(w, g.me, &a, kind == rt::ReqKind::Send, None)?;
            Ok(rt::new_persistent(w, g.me, kind, a, mode))
        });
        started(g.me, comm, call, req, r)
    }
}

/// Exports the persistent-request constructors: the parameters of the
/// matching send or receive, and the request.
macro_rules! persistent_forms {
    ($($name:ident($buf:ty): $kind:ident, $mode:ident;)*) => {$(
        #[no_mangle]
        pub(super) unsafe extern "C" fn $name(
            buf: $buf,
            count: c_int,
            dt: c_int,
            peer: c_int,
            tag: c_int,
            comm: c_int,
            req: *mut c_int,
        ) -> c_int {
            // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
            unsafe {
                persistent_init(rt::ReqKind::$kind, buf, count, dt, peer, tag, comm, rt::SendMode::$mode, req, stringify!($name))
            }
        }
    )*};
}

persistent_forms! {
    MPI_Send_init(*const c_void): Send, Standard;
    MPI_Ssend_init(*const c_void): Send, Sync;
    MPI_Bsend_init(*const c_void): Send, Buffered;
    MPI_Recv_init(*mut c_void): Recv, Standard;
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Start(req: *mut c_int) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        let g = enter_call("MPI_Start");
        ti!(ti_trace::unrepresented("MPI_Start"));
        let id = match arg_request_ptr(req).and_then(|_| arg_request(*req)) {
            Ok(id) => id,
            Err(e) => return entry::handle_error(g.me, rt::MPI_COMM_WORLD, "MPI_Start", e),
        };
        let r = rt::start_persistent(g.me, id);
        result(g.me, rt::MPI_COMM_WORLD, "MPI_Start", r)
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Startall(n: c_int, reqs: *mut c_int) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        let n = match arg_requests(n, reqs) {
            Ok(n) => n,
            Err(e) => return world_error("MPI_Startall", e),
        };
        for i in 0..n {
            let rc = MPI_Start(reqs.add(i));
            if rc != MPI_SUCCESS {
                return rc;
            }
        }
        MPI_SUCCESS
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Rsend_init(
    buf: *const c_void,
    count: c_int,
    dt: c_int,
    dst: c_int,
    tag: c_int,
    comm: c_int,
    req: *mut c_int,
) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe { super::request::MPI_Send_init(buf, count, dt, dst, tag, comm, req) }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Status_set_cancelled(st: *mut crate::mpi::CStatus, flag: c_int) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        if !st.is_null() {
            (*st).cancelled = flag;
        }
        MPI_SUCCESS
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Status_set_elements(
    st: *mut crate::mpi::CStatus,
    dt: c_int,
    count: c_int,
) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe { MPI_Status_set_elements_x(st, dt, count as i64) }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Status_set_elements_x(
    st: *mut crate::mpi::CStatus,
    dt: c_int,
    count: i64,
) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        match with_world(|w| w.dtype(dt)) {
            Ok(d) => {
                if !st.is_null() {
                    (*st).count = d.bytes_of_elements(count.max(0) as usize) as i64;
                }
                MPI_SUCCESS
            }
            Err(e) => e.code,
        }
    }
}

// ------------------------------------------------------------------ generalized requests

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Grequest_start(
    query: Option<GreqQueryFn>,
    free: Option<GreqFreeFn>,
    cancel: Option<GreqCancelFn>,
    extra_state: *mut c_void,
    req: *mut c_int,
) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        let g = enter_call("MPI_Grequest_start");
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
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Grequest_complete(req: c_int) -> c_int {
    let g = enter_call("MPI_Grequest_complete");
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
