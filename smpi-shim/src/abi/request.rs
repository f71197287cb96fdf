//! Requests (MPI chapter 3.7–3.9, 13.2): completion (wait, test), persistent requests,
//! cancellation, generalized requests and status fields.
#![allow(non_snake_case, clippy::missing_safety_doc, clippy::too_many_arguments)]

use crate::mpi::ti_trace::{self, ti};
use std::ffi::{c_int, c_void};

use crate::mpi::entry::{self, enter_call, result};
use crate::mpi::{
    self as rt, mpi_err, with_world, CStatus, Greq, GreqCancelFn, GreqFreeFn, GreqQueryFn, MpiResult, P2p,
    SendMode, StatusInfo, MPI_SUCCESS, MPI_UNDEFINED,
};

use super::args::{write_single_status, write_status, *};
use super::p2p::start_p2p;

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

/// The value of a `Result`, or a return of its error through
/// `MPI_COMM_WORLD`'s error handler (the completion calls belong to no
/// communicator until they know their requests).
macro_rules! or_world_error {
    ($me:expr, $call:expr, $r:expr) => {
        match $r {
            Ok(v) => v,
            Err(e) => return entry::handle_error($me, rt::MPI_COMM_WORLD, $call, e),
        }
    };
}

/// Enters a multiple completion other than `MPI_Waitall` (none has a TI
/// action) and checks its `n` requests at `reqs`: the call's guard, the
/// requests (`None`: inactive) and what each must tell before it completes.
/// A bad argument returns from the calling function.
macro_rules! enter_multiple {
    ($call:expr, $n:expr, $reqs:expr) => {{
        let g = enter_call($call);
        ti!(ti_trace::unrepresented($call));
        let (ids, before) = or_world_error!(g.me, $call, collect($n, $reqs));
        (g, ids, before)
    }};
}

/// What a completion must learn of a request before it completes (a
/// completed request is freed): the communicator whose error handler its
/// error goes through, and whether its handle outlives the completion.
#[derive(Clone, Copy)]
struct Before {
    comm: c_int,
    persistent: bool,
}

impl Before {
    fn of(id: u32) -> Self {
        Before {
            comm: comm_of_request(id),
            persistent: is_persistent(id),
        }
    }

    /// Sets the program's handle to `MPI_REQUEST_NULL`, unless the request
    /// is persistent (then it only became inactive).
    unsafe fn release(self, handle: *mut c_int) {
        if !self.persistent {
            // Safety: `handle` is the program's request (the caller's contract).
            unsafe { *handle = 0 };
        }
    }
}

/// The request `*req` of a single completion, checked: `None` for
/// `MPI_REQUEST_NULL` or an inactive persistent request.
unsafe fn single_request(req: *mut c_int) -> MpiResult<Option<u32>> {
    // Safety: `req` is checked non-NULL before it is read.
    arg_request_ptr(req).and_then(|_| req_id(unsafe { *req }))
}

/// The end of a single completion (`MPI_Wait`, `MPI_Test`) whose request
/// completed with status `s`.
unsafe fn single_done(
    me: u32,
    call: &str,
    b: Before,
    req: *mut c_int,
    st: *mut CStatus,
    s: &StatusInfo,
) -> c_int {
    // Safety: the caller's pointers are the program's (its contract).
    unsafe {
        b.release(req);
        write_single_status(st, s);
    }
    completion_result(me, b.comm, call, s)
}

/// Entry `i` of an array of statuses (`MPI_STATUSES_IGNORE`: NULL).
unsafe fn status_at(sts: *mut CStatus, i: usize) -> *mut CStatus {
    if sts.is_null() {
        std::ptr::null_mut()
    } else {
        // Safety: the array holds an entry per request (the caller's contract).
        unsafe { sts.add(i) }
    }
}

/// The outcome of a multiple completion so far: the first failed request
/// (its index, communicator and error class), for `MPI_ERR_IN_STATUS`.
#[derive(Default)]
struct Completions {
    failed: Option<(usize, c_int, i32)>,
}

impl Completions {
    /// Request `i` (handle at `handle`) completed with status `s`, to be
    /// written at `st`.
    unsafe fn done(&mut self, i: usize, b: Before, handle: *mut c_int, s: &StatusInfo, st: *mut CStatus) {
        // Safety: the caller's pointers are the program's (its contract).
        unsafe {
            b.release(handle);
            write_status(st, s);
        }
        if s.error != MPI_SUCCESS && self.failed.is_none() {
            self.failed = Some((i, b.comm, s.error));
        }
    }

    /// Completes request `i` (`id`, known to be complete) as [`Self::done`].
    unsafe fn finish(&mut self, me: u32, i: usize, id: u32, handle: *mut c_int, st: *mut CStatus) {
        let b = Before::of(id);
        let s = rt::finish(me, id);
        // Safety: as `done`.
        unsafe { self.done(i, b, handle, &s, st) };
    }

    /// `MPI_ERR_IN_STATUS` through the error handler of the first failed
    /// request's communicator, when any status holds an error.
    fn result(self, me: u32, call: &str) -> c_int {
        match self.failed {
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
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Wait(req: *mut c_int, st: *mut CStatus) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        let g = enter_call("MPI_Wait");
        let Some(id) = or_world_error!(g.me, "MPI_Wait", single_request(req)) else {
            write_status(st, &empty_status());
            return MPI_SUCCESS;
        };
        let b = Before::of(id);
        ti!(ti_trace::wait(g.me, "wait", id));
        let s = rt::wait(g.me, id, "MPI_Wait");
        single_done(g.me, "MPI_Wait", b, req, st, &s)
    }
}

/// The requests of a multiple completion (`None`: inactive), and what each
/// must tell before it completes.
type Requests = (Vec<Option<u32>>, Vec<Option<Before>>);

/// The `n` requests at `reqs` of a multiple completion, checked.
unsafe fn collect(n: c_int, reqs: *mut c_int) -> MpiResult<Requests> {
    // Safety: the caller upholds this function's contract (see its `# Safety`).
    unsafe {
        let n = arg_requests(n, reqs)?;
        let ids = (0..n)
            .map(|i| req_id(*reqs.add(i)))
            .collect::<MpiResult<Vec<_>>>()?;
        let before = ids.iter().map(|id| id.map(Before::of)).collect();
        Ok((ids, before))
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Waitall(n: c_int, reqs: *mut c_int, sts: *mut CStatus) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        let g = enter_call("MPI_Waitall");
        ti!(ti_trace::waitall(g.me, n.max(0) as usize));
        let (ids, before) = or_world_error!(g.me, "MPI_Waitall", collect(n, reqs));
        // SMPI 3.32 waits with waitany until all are done: completion order.
        let statuses = rt::wait_all(g.me, &ids);
        all_done(g.me, "MPI_Waitall", reqs, &before, &statuses, sts)
    }
}

/// The end of `MPI_Waitall` and `MPI_Testall` once their requests completed:
/// each one's status (`None`: inactive, or it could not complete).
unsafe fn all_done(
    me: u32,
    call: &str,
    reqs: *mut c_int,
    before: &[Option<Before>],
    statuses: &[Option<StatusInfo>],
    sts: *mut CStatus,
) -> c_int {
    let mut out = Completions::default();
    for (i, s) in statuses.iter().enumerate() {
        // Safety: the arrays hold an entry per request (the caller's contract).
        unsafe {
            match (s, before[i]) {
                (Some(s), Some(b)) => out.done(i, b, reqs.add(i), s, status_at(sts, i)),
                _ => write_status(status_at(sts, i), &empty_status()),
            }
        }
    }
    out.result(me, call)
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
        let (g, ids, before) = enter_multiple!("MPI_Waitany", n, reqs);
        any_done(
            g.me,
            "MPI_Waitany",
            reqs,
            &before,
            rt::wait_any(g.me, &ids),
            index,
            st,
        )
    }
}

/// The end of `MPI_Waitany` and `MPI_Testany` once a request completed
/// (`Some`: its index and status) or none is active.
unsafe fn any_done(
    me: u32,
    call: &str,
    reqs: *mut c_int,
    before: &[Option<Before>],
    done: Option<(usize, StatusInfo)>,
    index: *mut c_int,
    st: *mut CStatus,
) -> c_int {
    // Safety: the caller's pointers are the program's (its contract).
    unsafe {
        match done {
            Some((i, s)) => {
                let b = before[i].expect("only an active request completes");
                b.release(reqs.add(i));
                set(index, i as c_int);
                write_status(st, &s);
                completion_result(me, b.comm, call, &s)
            }
            None => {
                set(index, MPI_UNDEFINED);
                write_status(st, &empty_status());
                MPI_SUCCESS
            }
        }
    }
}

/// The end of `MPI_Waitsome` and `MPI_Testsome`: `first` (a request that
/// already completed: its index and status), then, in index order, every
/// other request that `complete` finds complete; writes their indices,
/// statuses and number.
unsafe fn some_done(
    me: u32,
    call: &str,
    reqs: *mut c_int,
    ids: &[Option<u32>],
    before: &[Option<Before>],
    first: Option<(usize, StatusInfo)>,
    mut complete: impl FnMut(u32) -> bool,
    outcount: *mut c_int,
    indices: *mut c_int,
    sts: *mut CStatus,
) -> c_int {
    // Safety: the caller's pointers are the program's (its contract).
    unsafe {
        let mut out = Completions::default();
        let mut k = 0usize;
        if let Some((i, s)) = &first {
            let b = before[*i].expect("only an active request completes");
            *indices.add(k) = *i as c_int;
            out.done(*i, b, reqs.add(*i), s, status_at(sts, k));
            k += 1;
        }
        for (i, id) in ids.iter().enumerate() {
            let Some(id) = *id else { continue };
            if first.as_ref().is_some_and(|f| f.0 == i) || !complete(id) {
                continue;
            }
            *indices.add(k) = i as c_int;
            out.finish(me, i, id, reqs.add(i), status_at(sts, k));
            k += 1;
        }
        set(outcount, k as c_int);
        out.result(me, call)
    }
}

/// `MPI_Waitsome` (`wait`: it blocks until a request completes) and
/// `MPI_Testsome` (one `MPI_Test` poll per request, as SMPI).
unsafe fn some(
    wait: bool,
    n: c_int,
    reqs: *mut c_int,
    outcount: *mut c_int,
    indices: *mut c_int,
    sts: *mut CStatus,
    call: &'static str,
) -> c_int {
    // Safety: the program's pointers (the caller's contract).
    unsafe {
        let (g, ids, before) = enter_multiple!(call, n, reqs);
        // The request MPI_Waitsome waited for; `None` when no request is active.
        let first = match (ids.iter().any(Option::is_some), wait) {
            (false, _) => None,
            (true, true) => rt::wait_any(g.me, &ids).map(Some),
            (true, false) => Some(None),
        };
        let Some(first) = first else {
            set(outcount, MPI_UNDEFINED);
            return MPI_SUCCESS;
        };
        let complete = |id| {
            if wait {
                with_world(|w| rt::is_complete(w, id))
            } else {
                rt::test_poll(g.me, id)
            }
        };
        some_done(
            g.me, call, reqs, &ids, &before, first, complete, outcount, indices, sts,
        )
    }
}

/// Exports `MPI_Waitsome` and `MPI_Testsome` ([`some`]).
macro_rules! some_forms {
    ($($name:ident: $wait:literal;)*) => {$(
        #[no_mangle]
        pub(super) unsafe extern "C" fn $name(
            n: c_int,
            reqs: *mut c_int,
            outcount: *mut c_int,
            indices: *mut c_int,
            sts: *mut CStatus,
        ) -> c_int {
            // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
            unsafe { some($wait, n, reqs, outcount, indices, sts, stringify!($name)) }
        }
    )*};
}

some_forms! {
    MPI_Waitsome: true;
    MPI_Testsome: false;
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Test(req: *mut c_int, flag: *mut c_int, st: *mut CStatus) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        let g = enter_call("MPI_Test");
        let Some(id) = or_world_error!(g.me, "MPI_Test", single_request(req)) else {
            set(flag, 1);
            write_status(st, &empty_status());
            return MPI_SUCCESS;
        };
        let b = Before::of(id);
        ti!(ti_trace::wait(g.me, "test", id));
        let s = rt::test(g.me, id);
        set(flag, s.is_some() as c_int);
        match s {
            Some(s) => single_done(g.me, "MPI_Test", b, req, st, &s),
            None => MPI_SUCCESS,
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
        let (g, ids, before) = enter_multiple!("MPI_Testall", n, reqs);
        // As SMPI: one MPI_Test poll per request, in order.
        let mut all = true;
        for id in ids.iter().flatten() {
            all &= rt::test_poll(g.me, *id);
        }
        set(flag, all as c_int);
        if !all {
            return MPI_SUCCESS;
        }
        let statuses: Vec<Option<StatusInfo>> =
            ids.iter().map(|id| id.map(|id| rt::finish(g.me, id))).collect();
        all_done(g.me, "MPI_Testall", reqs, &before, &statuses, sts)
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
        let (g, ids, before) = enter_multiple!("MPI_Testany", n, reqs);
        if ids.iter().all(Option::is_none) {
            set(flag, 1);
            return any_done(g.me, "MPI_Testany", reqs, &before, None, index, st);
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
        set(flag, found.is_some() as c_int);
        let Some(i) = found else {
            set(index, MPI_UNDEFINED);
            return MPI_SUCCESS;
        };
        let s = rt::finish(g.me, ids[i].expect("found"));
        any_done(g.me, "MPI_Testany", reqs, &before, Some((i, s)), index, st)
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Request_free(req: *mut c_int) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        let g = enter_call("MPI_Request_free");
        match single_request(req) {
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
        let handle = single_request(req);
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

/// [`start_p2p`]'s start of a persistent request: an inactive request that
/// stores the parameters only. The arguments a send or receive would reject
/// are rejected now, not at `MPI_Start`: MPI says the call that names them is
/// erroneous.
fn persistent(kind: rt::ReqKind, mode: SendMode) -> impl FnOnce(u32, &P2p) -> MpiResult<u32> {
    move |me, a| {
        with_world(|w| {
            crate::mpi::p2p::check_p2p(w, me, a, kind == rt::ReqKind::Send, None)?;
            Ok(rt::new_persistent(w, me, kind, *a, mode))
        })
    }
}

/// Exports the persistent-request constructors: the parameters of the
/// matching send or receive, and the request. (`MPI_Rsend_init` makes a
/// standard-mode send, as `MPI_Rsend` is a standard send here.)
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
            let start = persistent(rt::ReqKind::$kind, SendMode::$mode);
            // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
            unsafe { start_p2p(buf, count, dt, peer, tag, comm, req, start, stringify!($name)) }
        }
    )*};
}

persistent_forms! {
    MPI_Send_init(*const c_void): Send, Standard;
    MPI_Ssend_init(*const c_void): Send, Sync;
    MPI_Bsend_init(*const c_void): Send, Buffered;
    MPI_Rsend_init(*const c_void): Send, Standard;
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
