//! Requests: what a pending operation is (point-to-point, persistent,
//! collective schedule, generalized), its status, and its end of life
//! (completion, release, cancellation).

use std::collections::VecDeque;
use std::rc::Rc;

use simcore::ActivityId;

use crate::mpi::datatype::{Datatype, SpanLayout};

use super::*;

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum ReqKind {
    Send,
    Recv,
    /// A non-blocking collective: stages of point-to-point sub-requests.
    Coll,
    /// A generalized request (`MPI_Grequest_start`): completed by the
    /// application, its callbacks live in [`World::greqs`].
    Generalized,
}

/// One stage of a non-blocking collective: posts sub-requests (or does local
/// work) once the previous stage's sub-requests have all completed.
pub(crate) type Stage = Box<dyn FnOnce() -> MpiResult<Vec<u32>>>;

/// Progress state of a non-blocking collective.
#[derive(Default)]
pub(crate) struct CollState {
    pub subs: Vec<u32>,
    pub stages: VecDeque<Stage>,
    /// The request's status is that of its receive (`MPI_Isendrecv`,
    /// `MPI_Isendrecv_replace`); a collective's status is empty.
    pub receive_status: bool,
}

/// Send modes.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum SendMode {
    Standard,
    Sync,
    Ready,
    Buffered,
}

/// Completion information of a request.
#[derive(Copy, Clone, Debug, Default)]
pub(crate) struct StatusInfo {
    pub source: i32,
    pub tag: i32,
    pub error: i32,
    pub bytes: usize,
    pub cancelled: bool,
}

/// A point-to-point request (user-visible or internal to a collective).
pub(crate) struct Request {
    pub kind: ReqKind,
    pub owner: u32,
    pub context: u32,
    /// Send: destination local rank; recv: source local rank or ANY_SOURCE.
    pub peer: i32,
    /// Sender's local rank (sends), used for matching.
    pub me_local: i32,
    pub peer_world: u32,
    pub tag: i32,
    pub buf: *mut u8,
    pub count: usize,
    pub dtype: i32,
    /// The datatype itself, held so the handle may be freed while the request is pending.
    pub dt: Option<Rc<Datatype>>,
    pub size: usize,
    pub mode: SendMode,
    pub detached: bool,
    /// Where a send's payload is (unused for other requests).
    pub payload: Payload,
    pub act: Option<ActivityId>,
    pub partner: Option<u32>,
    pub done: bool,
    pub transferred: bool,
    pub status: StatusInfo,
    pub matched_detached: bool,
    pub persistent: bool,
    pub active: bool,
    /// The user no longer holds the handle; free when the transfer is over.
    pub orphan: bool,
    /// Its rank has ended (returned from main): its buffers are gone, so the
    /// transfer, if it still completes, moves no data.
    pub owner_gone: bool,
    pub comm_handle: i32,
    /// Sub-requests and remaining stages (non-blocking collectives only).
    pub coll: Option<Box<CollState>>,
    /// A one-sided transfer (`rma`): sent eagerly whatever its size; a
    /// receive with an `accumulate` operation combines the data into its
    /// buffer instead of overwriting it.
    pub rma: bool,
    pub accumulate: Option<crate::mpi::op::Op>,
    /// Its neighbours in its owner's list of live requests ([`World::alloc_req`]),
    /// [`NO_REQ`] at either end.
    pub owned_prev: u32,
    pub owned_next: u32,
    /// A send queued as unexpected: its receiver's progress epoch (`World::progress_epochs`) then
    /// (`smpi/probe-sees:progressed`).
    pub arrived_epoch: u32,
}

/// Where the data of a send is until its receive buffer has it.
#[derive(Clone, Debug)]
pub(crate) enum Payload {
    /// In the sender's buffer, copied into the receive buffer when the
    /// transfer completes (the sender may not touch it before that), with
    /// the buffer's layout when it touches folded memory (computed when
    /// posted; valid until completion, since the buffer may not change).
    InBuffer(Option<Rc<SpanLayout>>),
    /// Copied aside, packed (detached sends not matched when posted).
    Staged(Vec<u8>),
    /// Entirely in folded memory: garbage by definition, nothing to copy.
    Folded,
    /// Already in the receive buffer (a detached send whose receive was
    /// posted first: copied when the send was posted, sparing the staging copy).
    Delivered,
}

impl Default for Payload {
    fn default() -> Self {
        Payload::InBuffer(None)
    }
}

/// `MPI_Grequest_query_function`.
pub(crate) type GreqQueryFn = unsafe extern "C" fn(*mut std::ffi::c_void, *mut crate::mpi::CStatus) -> i32;
/// `MPI_Grequest_free_function`.
pub(crate) type GreqFreeFn = unsafe extern "C" fn(*mut std::ffi::c_void) -> i32;
/// `MPI_Grequest_cancel_function`.
pub(crate) type GreqCancelFn = unsafe extern "C" fn(*mut std::ffi::c_void, i32) -> i32;

/// The application's callbacks of a generalized request.
#[derive(Clone, Copy)]
pub(crate) struct Greq {
    pub query: Option<GreqQueryFn>,
    pub free: Option<GreqFreeFn>,
    pub cancel: Option<GreqCancelFn>,
    pub extra_state: *mut std::ffi::c_void,
}

/// Whether a request is complete (no cost injected).
pub(crate) fn is_complete(w: &World, id: u32) -> bool {
    let r = w.req(id);
    if r.done {
        return true;
    }
    if let Some(c) = &r.coll {
        return c.stages.is_empty() && c.subs.iter().all(|&s| is_complete(w, s));
    }
    match r.act {
        Some(a) => w.kernel.test(a) && (r.kind == ReqKind::Send || r.transferred),
        None => false,
    }
}

/// Frees (or deactivates, if persistent) a completed request.
pub(crate) fn release_completed(w: &mut World, id: u32) {
    let r = w.req(id);
    if r.kind == ReqKind::Coll {
        w.free_req(id);
        return;
    }
    if r.persistent {
        let act = r.act;
        let transferred = r.transferred;
        let detached_pending = r.kind == ReqKind::Send && r.detached && !transferred;
        if detached_pending {
            // The transfer still needs this request's payload: keep a hidden
            // copy as an orphan and let the persistent handle go inactive.
            let clone = Request {
                persistent: false,
                orphan: true,
                ..clone_req(r)
            };
            let nid = w.alloc_req(clone);
            if let Some(p) = w.req(id).partner {
                w.req_mut(p).partner = Some(nid);
            }
            w.req_mut(id).act = None;
            w.req_mut(id).payload = Payload::InBuffer(None);
            // The pending message is the copy's from now on.
            rename_req(w, id, nid);
        } else if let Some(a) = act {
            w.kernel.release(a);
            w.req_mut(id).act = None;
        }
        let r = w.req_mut(id);
        r.active = false;
        r.partner = None;
        return;
    }
    if r.kind == ReqKind::Send && !r.transferred {
        w.req_mut(id).orphan = true;
    } else {
        w.free_req(id);
    }
}

pub(crate) fn clone_req(r: &Request) -> Request {
    Request {
        kind: r.kind,
        owner: r.owner,
        context: r.context,
        peer: r.peer,
        me_local: r.me_local,
        peer_world: r.peer_world,
        tag: r.tag,
        buf: r.buf,
        count: r.count,
        dtype: r.dtype,
        dt: r.dt.clone(),
        size: r.size,
        mode: r.mode,
        detached: r.detached,
        payload: r.payload.clone(),
        act: r.act,
        partner: r.partner,
        done: r.done,
        transferred: r.transferred,
        status: r.status,
        matched_detached: r.matched_detached,
        persistent: r.persistent,
        active: r.active,
        orphan: r.orphan,
        owner_gone: r.owner_gone,
        comm_handle: r.comm_handle,
        coll: None,
        rma: r.rma,
        accumulate: r.accumulate,
        owned_prev: NO_REQ,
        owned_next: NO_REQ,
        arrived_epoch: 0,
    }
}

/// Creates an inactive persistent request (MPI_Send_init / MPI_Recv_init).
pub(crate) fn new_persistent(w: &mut World, me: u32, kind: ReqKind, a: P2p, mode: SendMode) -> u32 {
    let r = Request {
        persistent: true,
        active: false,
        ..Request::message(kind, me, &a, mode)
    };
    let id = w.alloc_req(r);
    // Keep the datatype: the application may free its handle before MPI_Start.
    w.req_mut(id).dt = w.dtype(a.dtype).ok();
    id
}

/// MPI_Start: posts a new operation with a persistent request's parameters,
/// reusing its handle.
pub(crate) fn start_persistent(me: u32, id: u32) -> MpiResult<()> {
    let (kind, a, mode, kept) = with_world(|w| -> MpiResult<_> {
        let r = w
            .reqs
            .get(id as usize)
            .and_then(|r| r.as_ref())
            .ok_or_else(|| mpi_err(MPI_ERR_REQUEST, "invalid request"))?;
        if !r.persistent {
            return Err(mpi_err(MPI_ERR_REQUEST, "MPI_Start on a non-persistent request"));
        }
        if r.active {
            return Err(mpi_err(MPI_ERR_REQUEST, "MPI_Start on an active request"));
        }
        let a = P2p {
            buf: r.buf,
            count: r.count,
            dtype: r.dtype,
            peer: r.peer,
            tag: r.tag,
            comm: r.comm_handle,
            coll: false,
        };
        Ok((r.kind, a, r.mode, r.dt.clone()))
    })?;
    let new = match kind {
        ReqKind::Send => isend_kept(me, &a, mode, true, kept)?,
        ReqKind::Recv => irecv_kept(me, &a, kept)?,
        ReqKind::Coll | ReqKind::Generalized => {
            return Err(mpi_err(MPI_ERR_REQUEST, "MPI_Start on a non-persistent request"))
        }
    };
    // Move the fresh request into the persistent slot.
    with_world(|w| {
        w.unlink_owned(new);
        let mut fresh = w.reqs[new as usize].take().expect("just created");
        // It takes the persistent request's place in the owner's list too.
        let kept = w.req(id);
        (fresh.owned_prev, fresh.owned_next) = (kept.owned_prev, kept.owned_next);
        fresh.persistent = true;
        fresh.active = true;
        if let Some(p) = fresh.partner {
            w.req_mut(p).partner = Some(id);
        }
        w.reqs[id as usize] = Some(fresh);
        rename_req(w, new, id);
        w.free_reqs.push(new);
    });
    Ok(())
}

/// Points every reference the matching machinery holds on request `old`
/// (queues, matched messages, the kernel communication's user tag of a
/// send) to `new`, which now holds that operation.
pub(crate) fn rename_req(w: &mut World, old: u32, new: u32) {
    let r = w.req(new);
    let (kind, owner, peer_world) = (r.kind, r.owner, r.peer_world);
    if kind == ReqKind::Send {
        if let Some(act) = r.act {
            w.kernel.set_user(act, new as u64);
        }
    }
    // Only one queue can hold it (as for a cancel): a receive waits in its owner's posted
    // queue, a send in its destination's unexpected queue.
    let queue = match kind {
        ReqKind::Recv => Some(&mut w.mailboxes[owner as usize].posted),
        ReqKind::Send if peer_world != u32::MAX => Some(&mut w.mailboxes[peer_world as usize].unexpected),
        _ => None,
    };
    if let Some(x) = queue.and_then(|q| q.iter_mut().find(|x| **x == old)) {
        *x = new;
    }
    for (send, _) in w.matched_messages.iter_mut().flatten() {
        if *send == old {
            *send = new;
        }
    }
}

impl Request {
    /// A request with no message of its own (a non-blocking collective, a
    /// generalized request): active, never matched, completed by `act` if any.
    #[inline]
    pub(crate) fn local(kind: ReqKind, owner: u32, comm_handle: i32, act: Option<ActivityId>) -> Request {
        Request {
            kind,
            owner,
            context: 0,
            peer: MPI_ANY_SOURCE,
            me_local: -1,
            peer_world: u32::MAX,
            tag: MPI_ANY_TAG,
            buf: std::ptr::null_mut(),
            count: 0,
            dtype: 0,
            dt: None,
            size: 0,
            mode: SendMode::Standard,
            detached: false,
            payload: Payload::default(),
            act,
            partner: None,
            done: false,
            transferred: true,
            status: StatusInfo::default(),
            matched_detached: false,
            persistent: false,
            active: true,
            orphan: false,
            owner_gone: false,
            comm_handle,
            coll: None,
            rma: false,
            accumulate: None,
            owned_prev: NO_REQ,
            owned_next: NO_REQ,
            arrived_epoch: 0,
        }
    }

    /// A point-to-point request on `a`'s buffer, neither checked nor posted:
    /// the fields sends, receives and persistent requests share.
    #[inline]
    pub(crate) fn message(kind: ReqKind, owner: u32, a: &P2p, mode: SendMode) -> Request {
        Request {
            peer: a.peer,
            tag: a.tag,
            buf: a.buf,
            count: a.count,
            dtype: a.dtype,
            mode,
            transferred: false,
            ..Request::local(kind, owner, a.comm, None)
        }
    }
}

/// MPI_Cancel: a send or receive not matched yet is withdrawn and completes
/// as cancelled; a matched one is not affected (MPI allows a cancel to fail).
pub(crate) fn cancel(w: &mut World, id: u32) {
    let (kind, owner, peer_world, done) = {
        let r = w.req(id);
        (r.kind, r.owner, r.peer_world, r.done || r.partner.is_some())
    };
    let queue_of = match kind {
        ReqKind::Recv => Some((owner as usize, true)),
        ReqKind::Send if peer_world != u32::MAX => Some((peer_world as usize, false)),
        _ => None,
    };
    let Some((mb, posted)) = queue_of else { return };
    if done && kind == ReqKind::Recv {
        return;
    }
    let q = if posted {
        &mut w.mailboxes[mb].posted
    } else {
        &mut w.mailboxes[mb].unexpected
    };
    let Some(pos) = q.iter().position(|&r| r == id) else {
        return;
    };
    q.remove(pos);
    let r = w.req_mut(id);
    r.done = true;
    r.transferred = true;
    r.status.cancelled = true;
    r.status.bytes = 0;
    if let Some(a) = r.act {
        w.kernel.complete(a);
    }
}

// ------------------------------------------------------------------ generalized requests

/// MPI_Grequest_start: a request the application completes itself.
pub(crate) fn start_greq(me: u32, greq: Greq) -> u32 {
    with_world(|w| {
        let act = w.ranks[me as usize].ctx().manual_create();
        let r = Request::local(ReqKind::Generalized, me, MPI_COMM_SELF, Some(act));
        let id = w.alloc_req(r);
        w.greqs.insert(id, greq);
        id
    })
}

/// MPI_Grequest_complete: wakes whoever waits on the request (or frees it,
/// if the application already let its handle go).
pub(crate) fn complete_greq(id: u32) -> MpiResult<()> {
    let orphan = with_world(|w| {
        let r = w
            .reqs
            .get_mut(id as usize)
            .and_then(|r| r.as_mut())
            .filter(|r| r.kind == ReqKind::Generalized)
            .ok_or_else(|| mpi_err(MPI_ERR_REQUEST, "not a generalized request"))?;
        r.done = true;
        let orphan = r.orphan;
        if let Some(a) = r.act {
            w.kernel.complete(a);
        }
        Ok(orphan)
    })?;
    if orphan {
        drop_greq(id);
    }
    Ok(())
}

/// MPI_Request_free on a generalized request: its free callback runs once
/// it is complete (now, or at MPI_Grequest_complete).
pub(crate) fn release_greq(id: u32) {
    let done = with_world(|w| {
        let r = w.req_mut(id);
        r.orphan = true;
        r.done
    });
    if done {
        drop_greq(id);
    }
}

pub(crate) fn drop_greq(id: u32) {
    if let Some(Greq {
        free: Some(f),
        extra_state,
        ..
    }) = with_world(|w| w.greqs.remove(&id))
    {
        // Safety: callback and state come from the application's MPI_Grequest_start.
        unsafe { f(extra_state) };
    }
    with_world(|w| w.free_req(id));
}

/// The generalized request `id`'s callbacks, if it is one.
pub(crate) fn greq_of(id: u32) -> Option<Greq> {
    with_world(|w| w.greqs.get(&id).copied())
}

/// Completion of a generalized request: the query callback fills the
/// status, then the free callback runs (MPI 4.0 §13.2). Their error codes
/// end up in the status.
pub(crate) fn finish_greq(me: u32, id: u32) -> StatusInfo {
    let (greq, own) = with_world(|w| {
        w.ranks[me as usize].blocked = None;
        (w.greqs.remove(&id), w.req(id).status)
    });
    if greq.is_none() {
        // A request the library completed itself (MPI-IO's non-blocking forms): its own status.
        with_world(|w| w.free_req(id));
        return own;
    }
    let mut st = crate::mpi::CStatus {
        source: MPI_ANY_SOURCE,
        tag: MPI_ANY_TAG,
        error: MPI_SUCCESS,
        cancelled: 0,
        count: 0,
    };
    let mut error = MPI_SUCCESS;
    if let Some(g) = greq {
        // Safety: callbacks and state come from the application's MPI_Grequest_start.
        unsafe {
            if let Some(q) = g.query {
                error = q(g.extra_state, &mut st);
            }
            if let Some(f) = g.free {
                let rc = f(g.extra_state);
                if error == MPI_SUCCESS {
                    error = rc;
                }
            }
        }
    }
    with_world(|w| w.free_req(id));
    StatusInfo {
        source: st.source,
        tag: st.tag,
        error,
        bytes: st.count.max(0) as usize,
        cancelled: st.cancelled != 0,
    }
}

/// The C `MPI_Status` layout (see `include/mpi.h`).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub(crate) struct CStatus {
    pub source: i32,
    pub tag: i32,
    pub error: i32,
    pub cancelled: i32,
    pub count: i64,
}
