//! Point-to-point communication (MPI chapter 3): sends, receives, probes, matched probes,
//! buffered mode, counts, and the large-count (`_c`) forms.
#![allow(non_snake_case, clippy::missing_safety_doc, clippy::too_many_arguments)]

use std::ffi::{c_int, c_void};
use std::rc::Rc;

use crate::coll;
use crate::mpi::entry::{self, enter_call, result};
use crate::mpi::{
    self as rt, mpi_err, with_world, BlockInfo, CStatus, MpiResult, P2p, SendMode, MPI_SUCCESS, MPI_UNDEFINED,
};

use super::args::{status_result, write_single_status, write_status, *};
use crate::mpi::ti_trace::{self, ti};

/// SMPI's TI action of a send (`MPI_Rsend` is traced as `MPI_Send`, as SMPI does).
fn send_action(mode: SendMode, nonblocking: bool) -> &'static str {
    match (mode, nonblocking) {
        (SendMode::Sync, false) => "Ssend",
        (SendMode::Buffered, false) => "bsend",
        (_, false) => "send",
        (SendMode::Sync, true) => "ISsend",
        (SendMode::Buffered, true) => "ibsend",
        (_, true) => "isend",
    }
}

/// Exports an MPI function and its large-count form (`_c`): the same
/// parameters but the counts, written `Cnt`, which are `int` in the first and
/// `MPI_Count` in the second. Both forward to one Rust function, which takes
/// the call's name last. A parameter type of more than one token goes in
/// parentheses.
macro_rules! count_forms {
    ($($name:ident / $name_c:ident ($($p:ident: $t:tt),* $(,)?) => $f:ident($($a:expr),* $(,)?);)*) => {$(
        count_forms!(@one $name, c_int, ($($p: $t),*) => $f($($a),*));
        count_forms!(@one $name_c, Count, ($($p: $t),*) => $f($($a),*));
    )*};
    (@one $name:ident, $cnt:ty, ($($p:ident: $t:tt),*) => $f:ident($($a:expr),*)) => {
        #[no_mangle]
        pub(super) unsafe extern "C" fn $name($($p: count_forms!(@ty $cnt, $t)),*) -> c_int {
            // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
            unsafe { $f($($a,)* stringify!($name)) }
        }
    };
    (@ty $cnt:ty, Cnt) => { $cnt };
    (@ty $cnt:ty, ($($t:tt)*)) => { $($t)* };
    (@ty $cnt:ty, $t:ident) => { $t };
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

pub(super) unsafe fn blocking_send(
    buf: *const c_void,
    count: impl Into<i64>,
    dt: c_int,
    dst: c_int,
    tag: c_int,
    comm: c_int,
    mode: SendMode,
    call: &'static str,
) -> c_int {
    let g = enter_call(call);
    let n = check_count!(g.me, comm, call, count);
    ti!(ti_trace::p2p(
        g.me,
        send_action(mode, false),
        comm,
        dst,
        tag,
        n,
        dt
    ));
    result(
        g.me,
        comm,
        call,
        rt::send(g.me, &p2p(buf, n, dt, dst, tag, comm), mode, call),
    )
}

/// The frame of a call that starts a request on one point-to-point
/// argument list (`MPI_Isend`, `MPI_Irecv`, `MPI_Send_init`, ..., and the
/// `_c` forms): checks the count, runs `start` on the arguments and hands its
/// request back through `req` (an error goes to `comm`'s error handler).
pub(super) unsafe fn start_p2p(
    buf: *const c_void,
    count: impl Into<i64>,
    dt: c_int,
    peer: c_int,
    tag: c_int,
    comm: c_int,
    req: *mut c_int,
    start: impl FnOnce(u32, &P2p) -> MpiResult<u32>,
    call: &'static str,
) -> c_int {
    let g = enter_call(call);
    let n = check_count!(g.me, comm, call, count);
    let r = start(g.me, &p2p(buf, n, dt, peer, tag, comm));
    // Safety: `req` is the program's request pointer (the caller's contract).
    unsafe { started(g.me, comm, call, req, r) }
}

/// [`start_p2p`]'s start of a non-blocking send in `mode`.
fn isend(mode: SendMode) -> impl FnOnce(u32, &P2p) -> MpiResult<u32> {
    move |me, a| {
        ti!(ti_trace::p2p(
            me,
            send_action(mode, true),
            a.comm,
            a.peer,
            a.tag,
            a.count,
            a.dtype
        ));
        rt::isend(me, a, mode, true)
    }
}

/// [`start_p2p`]'s start of a non-blocking receive.
fn irecv(me: u32, a: &P2p) -> MpiResult<u32> {
    ti!(ti_trace::p2p(
        me, "irecv", a.comm, a.peer, a.tag, a.count, a.dtype
    ));
    rt::irecv(me, a)
}

/// The end of a blocking receive (`MPI_Recv`, `MPI_Sendrecv`) of at most
/// `count` elements: its status, and `MPI_ERR_TRUNCATE` (through the handler
/// of `comm`) for a longer message.
unsafe fn received(
    me: u32,
    comm: c_int,
    call: &str,
    st: *mut CStatus,
    r: MpiResult<rt::StatusInfo>,
    count: usize,
) -> c_int {
    match r {
        Ok(s) => {
            // Safety: `st` is null or the program's status (the caller's contract).
            unsafe { write_status(st, &s) };
            status_result(me, comm, call, &s, count)
        }
        Err(e) => entry::handle_error(me, comm, call, e),
    }
}

/// One half of a point-to-point exchange as the program passes it: buffer,
/// count, datatype, peer, tag.
type Half<C> = (*const c_void, C, c_int, c_int, c_int);

/// `MPI_Recv` and `MPI_Sendrecv` with their `_c` forms (the counts as `int` or
/// `MPI_Count`): the send half if there is one, the receive, and its status
/// written and checked. Inlined into each: one frame less under a blocked rank.
#[inline(always)]
unsafe fn exchange<C: Into<i64>>(
    send: Option<Half<C>>,
    recv: Half<C>,
    comm: c_int,
    st: *mut CStatus,
    call: &'static str,
) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        let g = enter_call(call);
        let send = match send {
            Some((buf, count, dt, dst, tag)) => {
                Some((buf, check_count!(g.me, comm, call, count), dt, dst, tag))
            }
            None => None,
        };
        let (rbuf, rcount, rtype, src, rtag) = recv;
        let rn = check_count!(g.me, comm, call, rcount);
        let into = p2p(rbuf, rn, rtype, src, rtag, comm);
        let r = match send {
            None => {
                ti!(ti_trace::p2p(g.me, "recv", comm, src, rtag, rn, rtype));
                rt::recv_and_wait(g.me, &into, call)
            }
            Some((sbuf, sn, stype, dst, stag)) => {
                ti!(ti_trace::sendrecv(g.me, comm, sn, stype, dst, rn, rtype, src));
                rt::sendrecv(g.me, &p2p(sbuf, sn, stype, dst, stag, comm), &into)
            }
        };
        received(g.me, comm, call, st, r, rn)
    }
}

/// `MPI_Sendrecv_replace` and `MPI_Isendrecv_replace`, which MPI defines with
/// one parameter list (the last argument is the status or the request): the
/// list is written once, each form gets its body.
macro_rules! replace_forms {
    (@one ($($p:ident: $t:ty),*) $name:ident $last:ident $lt:ty { $($body:tt)* }) => {
        #[no_mangle]
        pub(super) unsafe extern "C" fn $name($($p: $t,)* $last: $lt) -> c_int {
            // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
            unsafe { $($body)* }
        }
    };
    ($params:tt) => {};
    ($params:tt $name:ident($last:ident: $lt:ty) => { $($body:tt)* } $($rest:tt)*) => {
        replace_forms!(@one $params $name $last $lt { $($body)* });
        replace_forms!($params $($rest)*);
    };
}

replace_forms! {
    (buf: *mut c_void, count: c_int, dt: c_int, dst: c_int, stag: c_int, src: c_int, rtag: c_int, comm: c_int)
    MPI_Sendrecv_replace(st: *mut CStatus) => {
        let call = "MPI_Sendrecv_replace";
        let g = enter_call(call);
        let (n, mut tmp) = match replace_copy(buf, count, dt) {
            Ok(c) => c,
            Err(e) => return entry::handle_error(g.me, comm, call, e),
        };
        ti!(ti_trace::sendrecv(g.me, comm, n, dt, dst, n, dt, src));
        match rt::sendrecv(
            g.me,
            &p2p(tmp.ptr() as *const c_void, n, dt, dst, stag, comm),
            &p2p(buf, n, dt, src, rtag, comm),
        ) {
            Ok(s) => {
                write_status(st, &s);
                MPI_SUCCESS
            }
            Err(e) => entry::handle_error(g.me, comm, call, e),
        }
    }
    // The send goes from a copy of the buffer, kept until the request ends.
    MPI_Isendrecv_replace(req: *mut c_int) => {
        nb!("MPI_Isendrecv_replace", comm, req, |me| {
            let (n, copy) = replace_copy(buf, count, dt)?;
            let half = move |peer, tag| p2p(buf, n, dt, peer, tag, comm);
            rt::check_pair(me, &half(dst, stag), &half(src, rtag))?;
            let keep = Rc::new(std::cell::RefCell::new(copy));
            let k2 = keep.clone();
            let stage: rt::Stage = Box::new(move || {
                let p = k2.borrow_mut().ptr();
                let s = p2p(p as *const c_void, n, dt, dst, stag, comm);
                let r = half(src, rtag);
                let rid = rt::irecv(me, &r)?;
                let sid = rt::isend(me, &s, rt::SendMode::Standard, true)?;
                Ok(vec![rid, sid])
            });
            let hold: rt::Stage = Box::new(move || {
                drop(keep);
                Ok(vec![])
            });
            rt::start_sendrecv(me, comm, vec![stage, hold])
        })
    }
}

/// The copy of the buffer `MPI_Sendrecv_replace` and `MPI_Isendrecv_replace`
/// send from (the receive overwrites the buffer), and its element count. The
/// buffer is checked first: it is read before anything else of the call
/// (`buf` holds `count` elements of `dt`: the program's promise).
fn replace_copy(buf: *mut c_void, count: c_int, dt: c_int) -> MpiResult<(usize, coll::TempBuf)> {
    arg_data(buf, count, dt, P2P_BUF)?;
    let n = nonneg(count)?;
    let d = with_world(|w| w.dtype(dt))?;
    let mut copy = coll::TempBuf::new(&d, n);
    coll::local_copy(buf as *const u8, n, dt, copy.ptr(), n, dt)?;
    Ok((n, copy))
}

/// The end of `MPI_Iprobe` and `MPI_Improbe`: `flag` says whether a message
/// matched (`write` then hands out what was found); an error goes to the
/// handler of `comm`.
unsafe fn polled<T>(
    me: u32,
    comm: c_int,
    call: &str,
    flag: *mut c_int,
    r: MpiResult<Option<T>>,
    write: impl FnOnce(T),
) -> c_int {
    match r {
        Ok(found) => {
            // Safety: `flag` is null or valid for a write (the caller's contract).
            unsafe { set(flag, found.is_some() as c_int) };
            if let Some(x) = found {
                write(x);
            }
            MPI_SUCCESS
        }
        Err(e) => entry::handle_error(me, comm, call, e),
    }
}

/// `MPI_Probe` and `MPI_Mprobe`: loops of their non-blocking forms (`poll`),
/// as SMPI's `MPI_Probe` is a loop of `MPI_Iprobe`, until a message matches.
/// Simulated time moves between polls even when polling costs nothing.
/// `watch` (`MPI_Probe`): the rank counts as probing meanwhile, and the run
/// ends when no other rank can send any more.
fn probe_loop<T>(
    me: u32,
    call: &'static str,
    (src, tag, comm): (c_int, c_int, c_int),
    watch: bool,
    mut poll: impl FnMut() -> MpiResult<Option<T>>,
) -> MpiResult<T> {
    loop {
        if let Some(found) = poll()? {
            if watch {
                with_world(|w| w.ranks[me as usize].probing = false);
            }
            return Ok(found);
        }
        let hopeless = watch
            && with_world(|w| {
                w.ranks[me as usize].probing = true;
                !rt::someone_can_send(w, me)
            });
        if hopeless {
            entry::abort_run(
                me,
                format!(
                    "deadlock: {call}(source {src}, tag {tag}) can never match: every other rank has ended or is probing too"
                ),
            );
        }
        // Nothing yet: make sure simulated time moves even if polling costs are 0.
        if with_world(|w| w.cfg.iprobe <= 0.0) {
            rt::sleep_for(me, 1e-6);
        }
        with_world(|w| {
            w.ranks[me as usize].blocked = Some(BlockInfo {
                call,
                peer: src,
                tag,
                comm,
            })
        });
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Iprobe(
    src: c_int,
    tag: c_int,
    comm: c_int,
    flag: *mut c_int,
    st: *mut CStatus,
) -> c_int {
    let g = enter_call("MPI_Iprobe");
    let r = rt::iprobe(g.me, src, tag, comm);
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe { polled(g.me, comm, "MPI_Iprobe", flag, r, |s| write_status(st, &s)) }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Improbe(
    src: c_int,
    tag: c_int,
    comm: c_int,
    flag: *mut c_int,
    msg: *mut c_int,
    st: *mut CStatus,
) -> c_int {
    let g = enter_call("MPI_Improbe");
    let r = rt::improbe(g.me, src, tag, comm);
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        polled(g.me, comm, "MPI_Improbe", flag, r, |(s, m)| {
            set(msg, m);
            write_single_status(st, &s);
        })
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Probe(src: c_int, tag: c_int, comm: c_int, st: *mut CStatus) -> c_int {
    let g = enter_call("MPI_Probe");
    let r = probe_loop(g.me, "MPI_Probe", (src, tag, comm), true, || {
        rt::iprobe(g.me, src, tag, comm)
    });
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    let r = r.map(|s| unsafe { write_status(st, &s) });
    result(g.me, comm, "MPI_Probe", r)
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Mprobe(
    src: c_int,
    tag: c_int,
    comm: c_int,
    msg: *mut c_int,
    st: *mut CStatus,
) -> c_int {
    let g = enter_call("MPI_Mprobe");
    let r = probe_loop(g.me, "MPI_Mprobe", (src, tag, comm), false, || {
        rt::improbe(g.me, src, tag, comm)
    });
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    let r = r.map(|(s, m)| unsafe {
        set(msg, m);
        write_single_status(st, &s);
    });
    result(g.me, comm, "MPI_Mprobe", r)
}
/// Whole elements of `dt` a status holds (`MPI_Get_count[_c]`), 64-bit:
/// `MPI_UNDEFINED` when its bytes are not a whole number of them.
unsafe fn count_of(st: *const CStatus, dt: c_int) -> Result<Count, c_int> {
    let size = with_world(|w| w.dtype(dt).map(|d| d.size as Count)).map_err(|_| rt::MPI_ERR_TYPE)?;
    // Safety: `st` is the program's status (the caller's contract).
    let bytes = unsafe { (*st).count };
    Ok(match size {
        0 => 0,
        s if bytes % s == 0 => bytes / s,
        _ => MPI_UNDEFINED as Count,
    })
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Get_count(st: *const CStatus, dt: c_int, count: *mut c_int) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe { put(count, count_of(st, dt).map(|n| n as c_int)) }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Get_count_c(st: *const CStatus, dt: c_int, count: *mut Count) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe { put(count, count_of(st, dt)) }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Get_elements(st: *const CStatus, dt: c_int, count: *mut c_int) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        put(
            count,
            elements_of(st, dt).map(|n| c_int::try_from(n).unwrap_or(MPI_UNDEFINED)),
        )
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Get_elements_x(
    st: *const CStatus,
    dt: c_int,
    count: *mut Count,
) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe { put(count, elements_of(st, dt)) }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Get_elements_c(
    st: *const CStatus,
    dt: c_int,
    count: *mut Count,
) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe { put(count, elements_of(st, dt)) }
}

/// Basic elements of `dt` a status holds (`MPI_Get_elements[_x]`), 64-bit.
pub(crate) unsafe fn elements_of(st: *const CStatus, dt: c_int) -> Result<i64, c_int> {
    // Safety: the caller upholds this function's contract (see its `# Safety`).
    unsafe {
        let d = with_world(|w| w.dtype(dt)).map_err(|_| rt::MPI_ERR_TYPE)?;
        let bytes = (*st).count.max(0) as u64;
        if d.size == 0 {
            return Ok(0);
        }
        Ok(d.elements_in(bytes as usize) as i64)
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Buffer_attach(buf: *mut c_void, size: c_int) -> c_int {
    let me = rt::current_rank();
    with_world(|w| w.ranks[me as usize].buffer_attached = Some((buf as usize, size.max(0) as usize)));
    MPI_SUCCESS
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Buffer_detach(buf: *mut c_void, size: *mut c_int) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        let g = enter_call("MPI_Buffer_detach");
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
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Isendrecv(
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
    req: *mut c_int,
) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        nb!("MPI_Isendrecv", comm, req, |me| {
            let (sc, rc) = (nonneg(scount)?, nonneg(rcount)?);
            let s = p2p(sbuf, sc, stype, dst, stag, comm);
            let r = p2p(rbuf, rc, rtype, src, rtag, comm);
            rt::check_pair(me, &s, &r)?;
            let stage: rt::Stage = Box::new(move || {
                let rid = rt::irecv(me, &r)?;
                let sid = rt::isend(me, &s, rt::SendMode::Standard, true)?;
                Ok(vec![rid, sid])
            });
            rt::start_sendrecv(me, comm, vec![stage])
        })
    }
}

// ------------------------------------------------------------------ matched probes

/// Starts the receive of a probed message; on success `*msg` becomes
/// `MPI_MESSAGE_NULL`.
pub(super) unsafe fn start_mrecv(
    me: u32,
    buf: *mut c_void,
    count: usize,
    dt: c_int,
    msg: *mut c_int,
) -> rt::MpiResult<u32> {
    // Safety: the caller upholds this function's contract (see its `# Safety`).
    unsafe {
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
}

/// What a matched receive does once started: wait for it (`MPI_Mrecv`,
/// its status goes here) or hand back its request (`MPI_Imrecv`).
#[derive(Clone, Copy)]
pub(super) enum Matched {
    Wait(*mut CStatus),
    Start(*mut c_int),
}

/// `MPI_Mrecv`, `MPI_Imrecv` and their `_c` forms (the count as `int` or
/// `MPI_Count`).
pub(super) unsafe fn matched_recv(
    buf: *mut c_void,
    count: impl Into<i64>,
    dt: c_int,
    msg: *mut c_int,
    end: Matched,
    call: &'static str,
) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        let g = enter_call(call);
        let n = check_count!(g.me, rt::MPI_COMM_WORLD, call, count);
        let r = start_mrecv(g.me, buf, n, dt, msg);
        match (end, r) {
            (Matched::Start(req), r) => started(g.me, rt::MPI_COMM_WORLD, call, req, r),
            (Matched::Wait(st), Ok(id)) => {
                let s = rt::wait(g.me, id, call);
                write_single_status(st, &s);
                status_result(g.me, rt::MPI_COMM_WORLD, call, &s, n)
            }
            (Matched::Wait(_), Err(e)) => entry::handle_error(g.me, rt::MPI_COMM_WORLD, call, e),
        }
    }
}

count_forms! {
    MPI_Send / MPI_Send_c(buf: (*const c_void), count: Cnt, dt: c_int, dst: c_int, tag: c_int, comm: c_int)
        => blocking_send(buf, count, dt, dst, tag, comm, SendMode::Standard);
    MPI_Ssend / MPI_Ssend_c(buf: (*const c_void), count: Cnt, dt: c_int, dst: c_int, tag: c_int, comm: c_int)
        => blocking_send(buf, count, dt, dst, tag, comm, SendMode::Sync);
    MPI_Rsend / MPI_Rsend_c(buf: (*const c_void), count: Cnt, dt: c_int, dst: c_int, tag: c_int, comm: c_int)
        => blocking_send(buf, count, dt, dst, tag, comm, SendMode::Ready);
    MPI_Bsend / MPI_Bsend_c(buf: (*const c_void), count: Cnt, dt: c_int, dst: c_int, tag: c_int, comm: c_int)
        => blocking_send(buf, count, dt, dst, tag, comm, SendMode::Buffered);
    MPI_Isend / MPI_Isend_c(
        buf: (*const c_void), count: Cnt, dt: c_int, dst: c_int, tag: c_int, comm: c_int, req: (*mut c_int),
    ) => start_p2p(buf, count, dt, dst, tag, comm, req, isend(SendMode::Standard));
    MPI_Issend / MPI_Issend_c(
        buf: (*const c_void), count: Cnt, dt: c_int, dst: c_int, tag: c_int, comm: c_int, req: (*mut c_int),
    ) => start_p2p(buf, count, dt, dst, tag, comm, req, isend(SendMode::Sync));
    MPI_Irsend / MPI_Irsend_c(
        buf: (*const c_void), count: Cnt, dt: c_int, dst: c_int, tag: c_int, comm: c_int, req: (*mut c_int),
    ) => start_p2p(buf, count, dt, dst, tag, comm, req, isend(SendMode::Ready));
    MPI_Ibsend / MPI_Ibsend_c(
        buf: (*const c_void), count: Cnt, dt: c_int, dst: c_int, tag: c_int, comm: c_int, req: (*mut c_int),
    ) => start_p2p(buf, count, dt, dst, tag, comm, req, isend(SendMode::Buffered));
    MPI_Recv / MPI_Recv_c(
        buf: (*mut c_void), count: Cnt, dt: c_int, src: c_int, tag: c_int, comm: c_int, st: (*mut CStatus),
    ) => exchange(None, (buf.cast_const(), count, dt, src, tag), comm, st);
    MPI_Irecv / MPI_Irecv_c(
        buf: (*mut c_void), count: Cnt, dt: c_int, src: c_int, tag: c_int, comm: c_int, req: (*mut c_int),
    ) => start_p2p(buf, count, dt, src, tag, comm, req, irecv);
    MPI_Sendrecv / MPI_Sendrecv_c(
        sbuf: (*const c_void), scount: Cnt, stype: c_int, dst: c_int, stag: c_int,
        rbuf: (*mut c_void), rcount: Cnt, rtype: c_int, src: c_int, rtag: c_int,
        comm: c_int, st: (*mut CStatus),
    ) => exchange(Some((sbuf, scount, stype, dst, stag)), (rbuf.cast_const(), rcount, rtype, src, rtag), comm, st);
    MPI_Mrecv / MPI_Mrecv_c(buf: (*mut c_void), count: Cnt, dt: c_int, msg: (*mut c_int), st: (*mut CStatus))
        => matched_recv(buf, count, dt, msg, Matched::Wait(st));
    MPI_Imrecv / MPI_Imrecv_c(buf: (*mut c_void), count: Cnt, dt: c_int, msg: (*mut c_int), req: (*mut c_int))
        => matched_recv(buf, count, dt, msg, Matched::Start(req));
}

// Message handles are plain integers in C and Fortran alike.

#[no_mangle]
pub(super) extern "C" fn MPI_Message_c2f(msg: c_int) -> c_int {
    msg
}

#[no_mangle]
pub(super) extern "C" fn MPI_Message_f2c(msg: c_int) -> c_int {
    msg
}

#[no_mangle]
pub(super) extern "C" fn PMPI_Message_c2f(msg: c_int) -> c_int {
    msg
}

#[no_mangle]
pub(super) extern "C" fn PMPI_Message_f2c(msg: c_int) -> c_int {
    msg
}
