//! Point-to-point communication: matching sends with receives and timing them.
//!
//!
//! # Point-to-point semantics (as SMPI 3.32)
//! - Every rank has a mailbox with a queue of *unexpected* sends and a queue of
//!   *posted* receives; matching takes the first entry in posting order whose
//!   context, source and tag match, which gives MPI's non-overtaking rule.
//!   `MPI_ANY_TAG` matches only tags ≥ 0 (collectives use their own context).
//! - A send and its receive share one kernel communication. It starts when both
//!   sides are posted, except sends below `smpi/async-small-thresh`, which start
//!   at once (eager). Its size is the payload plus a 16-byte envelope.
//! - Sends below `smpi/send-is-detached-thresh` (not `Ssend`) are *detached*:
//!   the payload is copied and the call returns at once. Larger ones complete
//!   with the transfer.
//! - Overheads: `ois` before an `Isend` is posted, `os` before a detached or
//!   synchronous send is posted, `or` after a receive matched with a detached
//!   send; `MPI_Test` sleeps `n·smpi/test`, `MPI_Iprobe` computes for
//!   `n·smpi/iprobe` seconds, `n` growing on consecutive failures.
//! - The payload is copied when the communication completes (before either
//!   side runs again), so a received buffer holds what was sent.
//! - `MPI_Mprobe`/`MPI_Improbe` see a send once it is posted (like Iprobe) and
//!   take it out of the unexpected queue; `MPI_Mrecv` then matches it, which
//!   starts the transfer as a receive posted at that moment would.
//! - `MPI_Wtime` costs `smpi/wtime`, slept lazily at the rank's next MPI call.

use std::collections::VecDeque;
use std::rc::Rc;

use crate::mpi::datatype::Datatype;

use super::*;

/// Bytes SMPI adds to every message (the envelope).
pub(crate) const ENVELOPE: usize = 16;

#[derive(Default)]
pub(crate) struct Mailbox {
    pub(crate) unexpected: VecDeque<u32>,
    pub(crate) posted: VecDeque<u32>,
}

/// Arguments of a send or receive.
#[derive(Clone, Copy, Debug)]
pub(crate) struct P2p {
    pub buf: *mut u8,
    pub count: usize,
    pub dtype: i32,
    pub peer: i32,
    pub tag: i32,
    pub comm: i32,
    /// Use the communicator's collective context (internal messages).
    pub coll: bool,
}

/// A send or receive that passed [`check_p2p`], with what the check worked out.
pub(crate) struct Checked {
    /// Matching context (the communicator's, or its collective one).
    context: u32,
    /// The caller's rank in the communicator.
    me_local: i32,
    /// The peer's world rank (`u32::MAX` for a wildcard or `MPI_PROC_NULL`).
    peer_world: u32,
    /// Payload bytes.
    size: usize,
    dt: Rc<Datatype>,
}

/// Validates a send or receive. `kept` is the datatype a persistent request
/// holds (its handle may have been freed since).
pub(crate) fn check_p2p(
    w: &World,
    me: u32,
    a: &P2p,
    is_send: bool,
    kept: Option<Rc<Datatype>>,
) -> MpiResult<Checked> {
    let rank = &w.ranks[me as usize];
    let c = rank.comm(a.comm)?;
    // A zero-count message may name no valid type (MPI_DATATYPE_NULL).
    let dt = match kept.map_or_else(|| w.dtype(a.dtype), Ok) {
        Ok(d) => d,
        Err(_) if a.count == 0 => w.dtype(4)?,
        Err(e) => return Err(e),
    };
    if !dt.committed && !dt.predefined {
        return Err(mpi_err(MPI_ERR_TYPE, "datatype not committed"));
    }
    let size = dt.size * a.count;
    if a.buf.is_null() && size > 0 && !dt.fits_bottom() {
        return Err(mpi_err(
            MPI_ERR_BUFFER,
            format!("null buffer with count {}", a.count),
        ));
    }
    let peer_size = c.peer_size();
    if is_send {
        if a.peer != MPI_PROC_NULL && (a.peer < 0 || a.peer >= peer_size) {
            return Err(mpi_err(
                MPI_ERR_RANK,
                format!(
                    "invalid destination rank {} (communicator size {peer_size})",
                    a.peer
                ),
            ));
        }
        if !a.coll && (a.tag < 0 || a.tag > TAG_UB) {
            return Err(mpi_err(MPI_ERR_TAG, format!("invalid tag {}", a.tag)));
        }
    } else {
        if a.peer != MPI_PROC_NULL && a.peer != MPI_ANY_SOURCE && (a.peer < 0 || a.peer >= peer_size) {
            return Err(mpi_err(
                MPI_ERR_RANK,
                format!("invalid source rank {} (communicator size {peer_size})", a.peer),
            ));
        }
        if !a.coll && a.tag != MPI_ANY_TAG && (a.tag < 0 || a.tag > TAG_UB) {
            return Err(mpi_err(MPI_ERR_TAG, format!("invalid tag {}", a.tag)));
        }
    }
    let context = c.shared.context + a.coll as u32;
    let peer_world = if a.peer >= 0 { c.world_of(a.peer) } else { u32::MAX };
    Ok(Checked {
        context,
        me_local: c.my_rank,
        peer_world,
        size,
        dt,
    })
}

/// Removes and returns the first request of `rank`'s mailbox that pairs with
/// request `id`: among its posted receives when `id` is a send
/// (`id_is_send`), among its unexpected sends when `id` is a receive.
#[inline]
fn take_partner(w: &mut World, rank: u32, id: u32, id_is_send: bool) -> Option<u32> {
    let (mb, me) = (&w.mailboxes[rank as usize], w.req(id));
    let pos = if id_is_send {
        mb.posted.iter().position(|&r| matches(me, w.req(r)))
    } else {
        mb.unexpected.iter().position(|&s| matches(w.req(s), me))
    }?;
    let mb = &mut w.mailboxes[rank as usize];
    if id_is_send {
        mb.posted.remove(pos)
    } else {
        mb.unexpected.remove(pos)
    }
}

pub(crate) fn matches(send: &Request, recv: &Request) -> bool {
    send.context == recv.context
        && (recv.peer == MPI_ANY_SOURCE || recv.peer == send.me_local)
        && (recv.tag == send.tag || (recv.tag == MPI_ANY_TAG && send.tag >= 0))
}

/// Posts a send; returns the request id. Applies `os`/`ois` before posting.
pub(crate) fn isend(me: u32, a: &P2p, mode: SendMode, immediate: bool) -> MpiResult<u32> {
    isend_kept(me, a, mode, immediate, None)
}

/// [`isend`] with the datatype a persistent request keeps.
pub(crate) fn isend_kept(
    me: u32,
    a: &P2p,
    mode: SendMode,
    immediate: bool,
    kept: Option<Rc<Datatype>>,
) -> MpiResult<u32> {
    let (req, overhead) = with_world_deep(|w| -> MpiResult<(u32, f64)> {
        let checked = check_p2p(w, me, a, true, kept)?;
        Ok(alloc_send(w, me, a, mode, immediate, checked))
    })?;
    start_send(me, req, overhead)
}

/// The request of a checked send, not posted yet, and the overhead to pay before posting it.
fn alloc_send(
    w: &mut World,
    me: u32,
    a: &P2p,
    mode: SendMode,
    immediate: bool,
    checked: Checked,
) -> (u32, f64) {
    let Checked {
        context,
        me_local,
        peer_world,
        size,
        dt,
    } = checked;
    let detached = mode == SendMode::Buffered
        || (mode != SendMode::Sync && size < w.cfg.detached_thresh && a.peer != MPI_PROC_NULL);
    // Detached sends are copied when posted (see `post_send`).
    let payload = if w.payloads_meaningless {
        Payload::Folded
    } else {
        send_payload(&dt, a.buf, a.count, size)
    };
    // As SMPI: software overheads are evaluated on the payload (no envelope).
    let overhead = if immediate {
        w.cfg.ois.cost(size as f64)
    } else if detached || mode == SendMode::Sync {
        w.cfg.os.cost(size as f64)
    } else {
        0.0
    };
    let r = Request {
        context,
        me_local,
        peer_world,
        dt: Some(dt),
        size,
        detached,
        payload,
        ..Request::message(ReqKind::Send, me, a, mode)
    };
    (w.alloc_req(r), overhead)
}

/// Pays a send's overhead, then posts it.
fn start_send(me: u32, req: u32, overhead: f64) -> MpiResult<u32> {
    sleep_for(me, overhead);
    yield_with(with_world_deep(|w| {
        post_send(w, req);
        yield_ctx(w, me)
    }));
    Ok(req)
}

/// Where a send's data is when posted: left in the sender's buffer (with its
/// layout when the buffer touches folded memory), or nowhere when the buffer
/// is entirely folded (garbage by definition).
pub(crate) fn send_payload(dt: &Datatype, buf: *mut u8, count: usize, size: usize) -> Payload {
    // The user promises `buf` holds `count` elements of `dt`.
    let layout = if size > 0 {
        dt.folded_layout(buf, count)
    } else {
        None
    };
    if layout.as_ref().is_some_and(|(_, l)| l.all_garbage()) {
        Payload::Folded
    } else {
        Payload::InBuffer(layout.map(Rc::new))
    }
}

/// Completes a send or receive addressed to MPI_PROC_NULL: at once, with the
/// status MPI prescribes.
fn complete_with_proc_null(r: &mut Request) {
    r.done = true;
    r.transferred = true;
    r.status = StatusInfo {
        source: MPI_PROC_NULL,
        tag: MPI_ANY_TAG,
        ..Default::default()
    };
}

/// Makes a prepared send request visible to its receiver.
pub(crate) fn post_send(w: &mut World, id: u32) {
    let (peer, peer_world, size, detached, owner) = {
        let r = w.req(id);
        (r.peer, r.peer_world, r.size, r.detached, r.owner)
    };
    if peer == MPI_PROC_NULL {
        complete_with_proc_null(w.req_mut(id));
        return;
    }
    w.messages += 1;
    w.ranks[owner as usize].messages_sent += 1;
    if w.request_log.is_some() {
        let tag = w.req(id).tag;
        w.log_request(owner, "send", size, Some(peer_world), tag, None);
    }
    if w.trace.is_some() {
        let (tag, context, me_local) = (w.req(id).tag, w.req(id).context, w.req(id).me_local);
        let now = w.kernel.now();
        if let Some(t) = w.trace.as_mut().filter(|t| t.records(context)) {
            t.note_message(owner, "send", size, Some(peer_world), tag);
            t.message_sent(now, owner, me_local, peer_world, tag, context, size);
        }
    }
    w.ranks[owner as usize].bytes_sent += size as u64;
    let ctx = w.kernel.clone();
    // Synchronous sends stay on the rendezvous path even when small.
    // One-sided transfers always are (SMPI's RMA flag).
    let eager = (size < w.cfg.async_small_thresh && w.req(id).mode != SendMode::Sync) || w.req(id).rma;
    // Find a posted receive at the destination.
    if let Some(recv) = take_partner(w, peer_world, id, true) {
        // Adopt the receive's pending communication.
        let act = w.req(recv).act.expect("posted receive has an activity");
        ctx.retain(act);
        ctx.set_user(act, id as u64);
        w.req_mut(id).act = Some(act);
        do_match(w, id, recv);
        if detached && !w.req(id).transferred && matches!(w.req(id).payload, Payload::InBuffer(_)) {
            // The sender may reuse its buffer as soon as it returns: copy now,
            // straight into the receive buffer, which is not the receiver's
            // until its receive completes.
            copy_payload(w, id, recv);
            w.req_mut(id).payload = Payload::Delivered;
        }
    } else {
        let act = ctx.comm_create(id as u64);
        w.req_mut(id).act = Some(act);
        if eager {
            let (src, dst) = (w.hosts[owner as usize], w.hosts[peer_world as usize]);
            start_transfer(w, &ctx, act, owner, src, dst, size);
        }
        let epoch = w.progress_epochs[peer_world as usize];
        w.req_mut(id).arrived_epoch = epoch;
        w.mailboxes[peer_world as usize].unexpected.push_back(id);
        if detached && matches!(w.req(id).payload, Payload::InBuffer(_)) {
            let mut v = w.staging_buffers.pop().unwrap_or_default();
            v.reserve(size);
            let r = w.req(id);
            let Payload::InBuffer(layout) = &r.payload else {
                unreachable!("checked above")
            };
            if let Some(dt) = r.dt.clone() {
                // Safety: the user promised `buf` holds `count` elements of `dtype`,
                // and the sender has not returned from its call yet.
                unsafe { dt.pack_with(r.buf, r.count, layout.as_deref(), &mut v) };
            }
            w.req_mut(id).payload = Payload::Staged(v);
        }
    }
    if detached {
        let r = w.req_mut(id);
        r.done = true;
        // The request lives on until the transfer ends; the user's handle completes now.
    }
}

/// Posts a receive; returns the request id.
pub(crate) fn irecv(me: u32, a: &P2p) -> MpiResult<u32> {
    irecv_kept(me, a, None)
}

/// [`irecv`] with the datatype a persistent request keeps.
pub(crate) fn irecv_kept(me: u32, a: &P2p, kept: Option<Rc<Datatype>>) -> MpiResult<u32> {
    with_world_deep(|w| {
        let id = new_recv(w, me, a, kept)?;
        post_recv(w, id);
        Ok(id)
    })
    .inspect(|_| simcall_yield(me))
}

/// A checked receive request, not posted yet.
pub(crate) fn new_recv(w: &mut World, me: u32, a: &P2p, kept: Option<Rc<Datatype>>) -> MpiResult<u32> {
    let checked = check_p2p(w, me, a, false, kept)?;
    Ok(alloc_recv(w, me, a, checked))
}

/// The request of a checked receive, not posted yet. Inlined into the borrow that posts
/// the receive (a call less on every receive).
#[inline]
fn alloc_recv(w: &mut World, me: u32, a: &P2p, checked: Checked) -> u32 {
    let Checked {
        context,
        peer_world,
        size,
        dt,
        ..
    } = checked;
    let r = Request {
        context,
        peer_world,
        dt: Some(dt),
        size,
        ..Request::message(ReqKind::Recv, me, a, SendMode::Standard)
    };
    w.alloc_req(r)
}

/// Matches a prepared receive against unexpected sends, or queues it.
pub(crate) fn post_recv(w: &mut World, id: u32) {
    let (peer, owner) = (w.req(id).peer, w.req(id).owner);
    if peer == MPI_PROC_NULL {
        complete_with_proc_null(w.req_mut(id));
        return;
    }
    if w.trace.is_some() {
        let r = w.req(id);
        let (size, tag, context) = (r.size, r.tag, r.context);
        let from = (peer != MPI_ANY_SOURCE).then_some(r.peer_world);
        if let Some(t) = w.trace.as_mut().filter(|t| t.records(context)) {
            t.note_message(owner, "recv", size, from, tag);
        }
    }
    if w.request_log.is_some() {
        let r = w.req(id);
        let (size, tag) = (r.size, r.tag);
        let from = (peer != MPI_ANY_SOURCE).then_some(r.peer_world);
        w.log_request(owner, "recv", size, from, tag, None);
    }
    if let Some(send) = take_partner(w, owner, id, false) {
        let act = w.req(send).act.expect("posted send has an activity");
        w.kernel.retain(act);
        w.req_mut(id).act = Some(act);
        do_match(w, send, id);
    } else {
        let act = w.kernel.comm_create(u64::MAX);
        w.req_mut(id).act = Some(act);
        w.mailboxes[owner as usize].posted.push_back(id);
    }
}

/// Pairs a send with a receive and starts their communication.
pub(crate) fn do_match(w: &mut World, send: u32, recv: u32) {
    let (sowner, sworld_dst, s_local, tag, size, detached) = {
        let s = w.req(send);
        (s.owner, s.peer_world, s.me_local, s.tag, s.size, s.detached)
    };
    let ctx = w.kernel.clone();
    let act = w.req(send).act.expect("matched send has an activity");
    w.req_mut(send).partner = Some(recv);
    w.req_mut(recv).partner = Some(send);
    let capacity = w.req(recv).size;
    {
        let r = w.req_mut(recv);
        r.peer_world = sowner;
        r.matched_detached = detached;
        r.status = StatusInfo {
            source: s_local,
            tag,
            error: if size > capacity {
                MPI_ERR_TRUNCATE
            } else {
                MPI_SUCCESS
            },
            bytes: size.min(capacity),
            cancelled: false,
        };
    }
    // The program's own messages (even contexts; collectives use the odd ones).
    if w.req(send).context.is_multiple_of(2) {
        warn_on_type_mismatch(w, send, recv);
    }
    if !ctx.is_started(act) {
        let (src, dst) = (w.hosts[sowner as usize], w.hosts[sworld_dst as usize]);
        start_transfer(w, &ctx, act, sowner, src, dst, size);
    } else if ctx.test(act) {
        // Eager message already arrived: deliver now.
        deliver(w, send);
    }
}

/// Warns, once per pair of types, when a program's send and the receive it
/// matched have type signatures that disagree (MPI-3.1 §3.3.1): the bytes are
/// delivered unconverted, as a real MPI would, but the data read is likely
/// wrong. `MPI_BYTE`/`MPI_PACKED` match anything, and so do signed and
/// unsigned integers of one width (a common, harmless habit); types mixing
/// several basic types are not compared.
fn warn_on_type_mismatch(w: &mut World, send: u32, recv: u32) {
    let (s, r) = (w.req(send), w.req(recv));
    let (Some(sdt), Some(rdt)) = (s.dt.as_ref(), r.dt.as_ref()) else {
        return;
    };
    let (Some(sb), Some(rb)) = (sdt.basic, rdt.basic) else {
        return;
    };
    if s.size == 0 || sb.compatible_with(rb) {
        return;
    }
    let names = (sdt.name.to_string(), rdt.name.to_string());
    if w.said_type_mismatch.contains(&names) {
        return;
    }
    let (from, to, tag, count) = (s.owner, r.owner, s.tag, s.count);
    let name = |n: &str| {
        if n.is_empty() {
            "a derived type".to_string()
        } else {
            n.to_string()
        }
    };
    eprintln!(
        "smpirun: warning: rank {from} sends {count} × {} (tag {tag}) to rank {to}, whose receive \
         takes {}: the type signatures do not match (MPI-3.1 §3.3.1); the bytes are delivered \
         unconverted. Further mismatches between these two types are not reported",
        name(&names.0),
        name(&names.1)
    );
    w.said_type_mismatch.insert(names);
}

/// Copies a finished message into its receive buffer (completion hook).
pub(crate) fn on_comm_done(w: &mut World, user: u64) {
    let send = user as u32;
    if w.reqs.get(send as usize).and_then(|r| r.as_ref()).is_none() {
        return;
    }
    if w.req(send).partner.is_some() {
        deliver(w, send);
    }
}

/// The largest staging buffer kept for reuse (SMPI's default
/// `smpi/send-is-detached-thresh`: larger ones are rare, and are freed).
const MAX_KEPT_STAGING_BYTES: usize = 65536;

/// How many emptied staging buffers are kept at most (at most 16 MiB held
/// back from the program's own allocations; beyond, they are freed).
const MAX_KEPT_STAGING_BUFFERS: usize = 256;

pub(crate) fn deliver(w: &mut World, send: u32) {
    let Some(recv) = w.req(send).partner else { return };
    if w.req(send).transferred {
        return;
    }
    copy_payload(w, send, recv);
    let s = w.req_mut(send);
    s.transferred = true;
    let payload = std::mem::replace(&mut s.payload, Payload::Delivered);
    let orphan = s.orphan;
    if let Payload::Staged(mut buffer) = payload {
        if buffer.capacity() <= MAX_KEPT_STAGING_BYTES && w.staging_buffers.len() < MAX_KEPT_STAGING_BUFFERS {
            buffer.clear();
            w.staging_buffers.push(buffer);
        }
    }
    w.req_mut(recv).transferred = true;
    if orphan {
        w.free_req(send);
    }
}

/// Copies a matched send's payload (as much as its receive takes) into the
/// receive buffer, wherever the payload is.
pub(crate) fn copy_payload(w: &World, send: u32, recv: u32) {
    let (s, r) = (w.req(send), w.req(recv));
    let rbytes = r.status.bytes;
    if matches!(s.payload, Payload::Folded | Payload::Delivered) || r.owner_gone {
        return;
    }
    if s.owner_gone && matches!(s.payload, Payload::InBuffer(_)) {
        return; // the sender's buffer went with its rank (reported when it ended)
    }
    let rdt = r.dt.clone().or_else(|| w.dtype(r.dtype).ok());
    let sdt = s.dt.clone().or_else(|| w.dtype(s.dtype).ok());
    let (Some(rdt), Some(sdt)) = (rdt, sdt) else {
        return;
    };
    if let Some(op) = r.accumulate {
        // Safety: as for a copy below; the target's buffer was checked against its window.
        unsafe { accumulate_payload(s, r, &sdt, &rdt, op) };
        return;
    }
    // Safety: both buffers were given by the application for these type maps,
    // and a send's layout was computed when it was posted.
    unsafe {
        match &s.payload {
            Payload::Staged(data) => copy_in(&rdt, r.buf, r.count, &data[..rbytes.min(data.len())]),
            Payload::InBuffer(None) if sdt.is_contiguous() && rdt.is_contiguous() => {
                if rbytes > 0 && s.buf != r.buf {
                    crate::host::folding::copy(s.buf, r.buf, rbytes);
                }
            }
            Payload::InBuffer(layout) => {
                if s.buf != r.buf || !(sdt.is_contiguous() && rdt.is_contiguous()) {
                    let bytes = rbytes.min(s.size);
                    sdt.copy_to_with(s.buf, s.count, layout.as_deref(), &rdt, r.buf, r.count, bytes);
                }
            }
            Payload::Folded | Payload::Delivered => {}
        }
    }
}

/// Combines an accumulate's payload into its target with `op`, element by
/// element of the target datatype's basic type (MPI_Accumulate).
///
/// # Safety
/// The send's buffer (unless staged) and the receive's buffer hold what their
/// counts and datatypes say.
unsafe fn accumulate_payload(
    s: &Request,
    r: &Request,
    sdt: &Datatype,
    rdt: &Datatype,
    op: crate::mpi::op::Op,
) {
    let Some(basic) = rdt.basic else { return };
    // Safety: the caller upholds this function's contract (see its `# Safety`).
    unsafe {
        let mut packed = Vec::new();
        let incoming: &[u8] = match &s.payload {
            Payload::Staged(data) => data,
            Payload::InBuffer(layout) => {
                sdt.pack_with(s.buf, s.count, layout.as_deref(), &mut packed);
                &packed
            }
            Payload::Folded | Payload::Delivered => return,
        };
        let mut current = Vec::new();
        rdt.pack(r.buf, r.count, &mut current);
        // Packed data has no padding; pair types (MPI_SHORT_INT, ...) are
        // combined in their native layout, padding included.
        let pieces = basic.elements();
        let packed_size: usize = pieces.iter().map(|(_, b)| b.size()).sum();
        let n = incoming.len().min(current.len()) / packed_size.max(1);
        let native = |packed: &[u8]| -> Vec<u8> {
            let mut out = vec![0u8; n * basic.size()];
            for i in 0..n {
                let mut at = i * packed_size;
                for &(off, b) in &pieces {
                    let dst = i * basic.size() + off as usize;
                    out[dst..dst + b.size()].copy_from_slice(&packed[at..at + b.size()]);
                    at += b.size();
                }
            }
            out
        };
        if pieces.len() == 1 {
            if crate::mpi::op::apply(op, basic, incoming.as_ptr(), current.as_mut_ptr(), n).is_ok() {
                rdt.unpack(&current, r.buf, r.count);
            }
            return;
        }
        let (inv, mut acc) = (native(incoming), native(&current));
        if crate::mpi::op::apply(op, basic, inv.as_ptr(), acc.as_mut_ptr(), n).is_ok() {
            for i in 0..n {
                let mut at = i * packed_size;
                for &(off, b) in &pieces {
                    let src = i * basic.size() + off as usize;
                    current[at..at + b.size()].copy_from_slice(&acc[src..src + b.size()]);
                    at += b.size();
                }
            }
            rdt.unpack(&current, r.buf, r.count);
        }
    }
}

pub(crate) unsafe fn copy_in(dt: &Datatype, buf: *mut u8, count: usize, data: &[u8]) {
    // Safety: the caller upholds this function's contract (see its `# Safety`).
    unsafe {
        if dt.is_contiguous() {
            if !data.is_empty() {
                crate::host::folding::copy(data.as_ptr(), buf, data.len());
            }
        } else {
            dt.unpack_folded(data, buf, count);
        }
    }
}

/// Looks for a matching unexpected message without receiving it.
/// Returns its status and the send request.
pub(crate) fn probe_match(
    w: &World,
    me: u32,
    context: u32,
    source: i32,
    tag: i32,
) -> Option<(StatusInfo, u32)> {
    // `smpi/probe-sees:progressed`: a message that arrived since the rank's
    // last progressing call is still in the library's queue, unseen.
    let unseen = w
        .cfg
        .probe_sees_progressed
        .then(|| w.progress_epochs[me as usize]);
    for &s in &w.mailboxes[me as usize].unexpected {
        let r = w.req(s);
        if unseen == Some(r.arrived_epoch) {
            continue;
        }
        let ok = r.context == context
            && (source == MPI_ANY_SOURCE || source == r.me_local)
            && (tag == r.tag || (tag == MPI_ANY_TAG && r.tag >= 0));
        if ok {
            let st = StatusInfo {
                source: r.me_local,
                tag: r.tag,
                error: 0,
                bytes: r.size,
                cancelled: false,
            };
            return Some((st, s));
        }
    }
    None
}

/// MPI_Iprobe semantics: computes for the polling cost, then probes.
pub(crate) fn iprobe(me: u32, source: i32, tag: i32, comm: i32) -> MpiResult<Option<StatusInfo>> {
    Ok(probe_for(me, source, tag, comm, false)?.map(|(st, _)| st))
}

/// MPI_Improbe semantics: like [`iprobe`], but a message found is taken out
/// of matching and named by the returned message handle
/// ([`MESSAGE_NO_PROC`] for `MPI_PROC_NULL`).
pub(crate) fn improbe(me: u32, source: i32, tag: i32, comm: i32) -> MpiResult<Option<(StatusInfo, i32)>> {
    Ok(probe_for(me, source, tag, comm, true)?.map(|(st, h)| (st, h.unwrap_or(MESSAGE_NO_PROC))))
}

/// Probe shared by [`iprobe`] and [`improbe`]; with `claim`, a matched send
/// leaves the unexpected queue and gets a message handle.
pub(crate) fn probe_for(
    me: u32,
    source: i32,
    tag: i32,
    comm: i32,
    claim: bool,
) -> MpiResult<Option<(StatusInfo, Option<i32>)>> {
    // One borrow for what the whole probe needs from the world before the mailbox: the
    // rank's state is cold at thousands of ranks, and each look costs misses.
    let (context, flops, bound, ctx, yield_to) = with_world(|w| -> MpiResult<_> {
        let c = w.ranks[me as usize].comm(comm)?;
        if source != MPI_ANY_SOURCE && source != MPI_PROC_NULL && (source < 0 || source >= c.peer_size()) {
            return Err(mpi_err(MPI_ERR_RANK, format!("invalid source rank {source}")));
        }
        if tag != MPI_ANY_TAG && !(0..=TAG_UB).contains(&tag) {
            return Err(mpi_err(MPI_ERR_TAG, format!("invalid tag {tag}")));
        }
        let context = c.shared.context;
        let speed = w.platform.host(w.hosts[me as usize]).speed;
        let n = poll_counter(w, me, Poll::Iprobe) as f64;
        Ok((
            context,
            n * w.cfg.iprobe * speed * w.cfg.iprobe_cpu_usage,
            speed * w.cfg.iprobe_cpu_usage,
            w.ranks[me as usize].ctx(),
            yield_ctx(w, me),
        ))
    })?;
    if source == MPI_PROC_NULL {
        return Ok(Some((
            StatusInfo {
                source: MPI_PROC_NULL,
                tag: MPI_ANY_TAG,
                ..Default::default()
            },
            None,
        )));
    }
    if flops > 0.0 && bound > 0.0 {
        ctx.execute(flops);
    }
    // The mailbox probe is a simcall. SimGrid handles the simcalls of one
    // scheduling round in the order their ranks ran, so the probe sees the
    // sends of the ranks that ran before this one at this date and not those
    // of the ranks after it: as our ranks post sends while they run, that is
    // the mailbox now. The rank reads the answer, and updates the shared
    // polling counter, in the next round. (Probing after the yield saw the
    // later ranks' sends too: HPL 16x16 took another path.)
    let found = with_world(|w| {
        let found = probe_match(w, me, context, source, tag);
        if w.request_log.is_some() {
            // The communicator was checked when the probe began.
            let from = (source != MPI_ANY_SOURCE)
                .then(|| w.ranks[me as usize].comm(comm).ok().map(|c| c.world_of(source)))
                .flatten();
            w.log_request(me, "iprobe", 0, from, tag, Some(found.is_some()));
        }
        let (st, send) = found?;
        let handle = claim.then(|| claim_message(w, me, send, comm));
        Some((st, handle))
    });
    yield_with(yield_to);
    with_world(|w| poll_result(w, me, Poll::Iprobe, found.is_some()));
    Ok(found)
}

/// Blocking send (MPI_Send/Ssend/Rsend/Bsend).
pub(crate) fn send(me: u32, a: &P2p, mode: SendMode, call: &'static str) -> MpiResult<()> {
    let id = isend(me, a, mode, false)?;
    wait_inline(me, id, call);
    Ok(())
}

/// Blocking receive.
pub(crate) fn recv(me: u32, a: &P2p) -> MpiResult<StatusInfo> {
    let st = recv_and_wait(me, a, "MPI_Recv")?;
    if st.error == MPI_ERR_TRUNCATE {
        return Err(mpi_err(
            MPI_ERR_TRUNCATE,
            format!(
                "message truncated: receive buffer of {} elements too small",
                a.count
            ),
        ));
    }
    Ok(st)
}

/// Sends and receives as SMPI does (`isend_init` + `irecv_init` + `startall` +
/// `waitall`): the send is started first (after its `ois` sleep), then the
/// receive is posted, then both are waited for, send first.
pub(crate) fn sendrecv(me: u32, s: &P2p, r: &P2p) -> MpiResult<StatusInfo> {
    // Both halves are checked before either starts (see `check_pair`), once each; without
    // an overhead to pay first, the send is posted in the same borrow.
    let (sid, rc, posted) = with_world_deep(|w| -> MpiResult<_> {
        let sc = check_p2p(w, me, s, true, None)?;
        let rc = check_p2p(w, me, r, false, None)?;
        let (sid, overhead) = alloc_send(w, me, s, SendMode::Standard, true, sc);
        if overhead > 0.0 {
            return Ok((sid, rc, Err(overhead)));
        }
        post_send(w, sid);
        Ok((sid, rc, Ok(yield_ctx(w, me))))
    })?;
    match posted {
        Ok(ctx) => yield_with(ctx),
        Err(overhead) => {
            start_send(me, sid, overhead)?;
        }
    }
    // The receive is posted, and when its wait may begin at once (see `waits_at_once`; a
    // detached send's wait ends at once) both first looks are taken in the same borrow.
    let (rid, looked) = with_world_deep(|w| {
        let id = alloc_recv(w, me, r, rc);
        post_recv(w, id);
        let send = w.req(sid);
        if send.detached && send.done && waits_at_once(w, me, id) {
            (id, Ok(pair_look(w, me, sid, id, "MPI_Sendrecv")))
        } else {
            (id, Err(yield_ctx(w, me)))
        }
    });
    Ok(match looked {
        Ok(look) => wait_pair_looked(me, sid, rid, look, "MPI_Sendrecv"),
        Err(ctx) => {
            yield_with(ctx);
            wait_pair_inline(me, sid, rid, "MPI_Sendrecv")
        }
    })
}

/// A blocking receive (`MPI_Recv`, and the receives of blocking collectives): posts it,
/// then waits for it, in one borrow when the wait may begin at once (see [`waits_at_once`]).
#[inline(always)]
pub(crate) fn recv_and_wait(me: u32, a: &P2p, call: &'static str) -> MpiResult<StatusInfo> {
    let (id, looked) = with_world_deep(|w| -> MpiResult<_> {
        let id = new_recv(w, me, a, None)?;
        post_recv(w, id);
        Ok(if waits_at_once(w, me, id) {
            (id, Ok(look(w, me, id, call)))
        } else {
            (id, Err(yield_ctx(w, me)))
        })
    })?;
    Ok(match looked {
        Ok(l) => wait_looked(me, id, l),
        Err(ctx) => {
            yield_with(ctx);
            wait_inline(me, id, call)
        }
    })
}

/// Whether the wait that follows the posting of receive `id` by rank `me` may begin in the
/// same step, without the posting's simcall round between (one resume of the rank less a
/// receive), every other actor running in the same order as with the round. The rank
/// merely leaves the run queue one turn earlier; it may when:
/// - the communication is not over: none ends before every actor ready at this date has
///   run, so the wait would block at the rank's next turn all the same, and the rank is
///   woken when the communication ends either way;
/// - the order of the communication's waiters cannot change. Besides `me`, only the
///   sender may wait on it (`MPI_Wait`, or `MPI_Buffer_detach` on a buffered send). If the
///   send is not posted yet, its owner posts it later and lets the others run before its
///   wait, so `me`, which waits at its next turn, comes first either way. If it matched a
///   send already, that send must be detached (its owner's request is complete at once:
///   it never waits on the communication) and not buffered;
/// - no collective of `me` is open (a wait would keep them moving).
fn waits_at_once(w: &World, me: u32, id: u32) -> bool {
    let r = w.req(id);
    let Some(act) = r.act else { return false };
    if w.kernel.test(act) || !w.open_colls[me as usize].is_empty() {
        return false;
    }
    match r.partner {
        None => true,
        Some(send) => {
            let s = w.req(send);
            s.detached && s.mode != SendMode::Buffered
        }
    }
}

/// Checks both halves of a send-receive before either starts, so a bad
/// receive argument leaves no send posted (and no message in flight).
pub(crate) fn check_pair(me: u32, s: &P2p, r: &P2p) -> MpiResult<()> {
    with_world(|w| {
        check_p2p(w, me, s, true, None)?;
        check_p2p(w, me, r, false, None).map(|_| ())
    })
}

// ------------------------------------------------------------------ matched probes

/// `MPI_MESSAGE_NULL`.
pub(crate) const MESSAGE_NULL: i32 = 0;
/// `MPI_MESSAGE_NO_PROC`: the message of a probe on `MPI_PROC_NULL`.
pub(crate) const MESSAGE_NO_PROC: i32 = -1;

/// Takes send `send` out of rank `me`'s unexpected queue (no other receive
/// can match it any more) and returns a message handle naming it.
pub(crate) fn claim_message(w: &mut World, me: u32, send: u32, comm: i32) -> i32 {
    let q = &mut w.mailboxes[me as usize].unexpected;
    if let Some(pos) = q.iter().position(|&s| s == send) {
        q.remove(pos);
    }
    let slot = match w.free_messages.pop() {
        Some(std::cmp::Reverse(i)) => i,
        None => {
            w.matched_messages.push(None);
            w.matched_messages.len() - 1
        }
    };
    w.matched_messages[slot] = Some((send, comm));
    slot as i32 + 1
}

/// MPI_Imrecv: receives the message `msg` (from [`improbe`]) into `a`'s
/// buffer (`a.peer`, `a.tag` and `a.comm` are ignored); returns the receive
/// request. The transfer then runs as for a receive matched at this moment.
pub(crate) fn imrecv(me: u32, a: &P2p, msg: i32) -> MpiResult<u32> {
    let id = with_world(|w| -> MpiResult<u32> {
        if msg == MESSAGE_NO_PROC {
            let a = P2p {
                peer: MPI_PROC_NULL,
                tag: MPI_ANY_TAG,
                comm: MPI_COMM_SELF,
                ..*a
            };
            let id = new_recv(w, me, &a, None)?;
            post_recv(w, id);
            return Ok(id);
        }
        let slot = (msg as usize).wrapping_sub(1);
        let (send, comm) = w
            .matched_messages
            .get(slot)
            .copied()
            .flatten()
            .ok_or_else(|| mpi_err(MPI_ERR_REQUEST, format!("invalid message handle {msg}")))?;
        let (peer, tag) = (w.req(send).me_local, w.req(send).tag);
        let a = P2p {
            peer,
            tag,
            comm,
            ..*a
        };
        let id = new_recv(w, me, &a, None)?;
        w.matched_messages[slot] = None;
        w.free_messages.push(std::cmp::Reverse(slot));
        let act = w.req(send).act.expect("a probed send has an activity");
        w.kernel.retain(act);
        w.req_mut(id).act = Some(act);
        do_match(w, send, id);
        Ok(id)
    })?;
    simcall_yield(me);
    Ok(id)
}

/// Blocks until the transfers of every buffered send of rank `me` are over
/// (MPI_Buffer_detach). An eager message that arrived but is not received
/// yet no longer needs the buffer.
pub(crate) fn drain_buffered_sends(me: u32) {
    loop {
        let pending = with_world(|w| {
            w.owned_reqs(me).into_iter().find_map(|id| {
                let r = w.req(id);
                let buffered = r.kind == ReqKind::Send && r.mode == SendMode::Buffered;
                r.act.filter(|&a| buffered && !r.transferred && !w.kernel.test(a))
            })
        });
        let Some(act) = pending else { return };
        with_world(|w| {
            w.ranks[me as usize].blocked = Some(BlockInfo {
                call: "MPI_Buffer_detach",
                peer: MPI_ANY_SOURCE,
                tag: MPI_ANY_TAG,
                comm: MPI_COMM_WORLD,
            })
        });
        let ctx = with_world(|w| w.ranks[me as usize].ctx());
        ctx.wait(act);
        with_world(|w| w.ranks[me as usize].blocked = None);
    }
}

/// Starts the kernel transfer of a message of `size` payload bytes from
/// `sender` (plus SMPI's envelope), with the model's noise draw if any.
fn start_transfer(
    w: &mut World,
    ctx: &simcore::KernelHandle,
    act: simcore::ActivityId,
    sender: u32,
    src: simcore::platform::HostId,
    dst: simcore::platform::HostId,
    size: usize,
) {
    let bytes = (size + ENVELOPE) as f64;
    match &mut w.net_noise {
        Some(noise) => ctx.comm_start_delayed(act, src, dst, bytes, noise.draw(sender, bytes)),
        None => ctx.comm_start(act, src, dst, bytes),
    }
}
