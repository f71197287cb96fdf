//! Waiting and polling: blocking until requests complete, `MPI_Test`'s and
//! `MPI_Iprobe`'s polling costs, and progress of non-blocking collectives.

use std::collections::VecDeque;

use simcore::{ActivityId, Ctx};

use super::*;

/// SimGrid answers every simcall between scheduling rounds: after posting a
/// request the rank lets the other ranks ready at this date run first.
pub(crate) fn simcall_yield(me: u32) {
    yield_with(with_world(|w| yield_ctx(w, me)));
}

/// What [`simcall_yield`] needs from the world, for a caller that holds it: `me`'s context
/// when simcalls yield.
pub(crate) fn yield_ctx(w: &World, me: u32) -> Option<&'static Ctx> {
    w.cfg.simcall_yield.then(|| w.ranks[me as usize].ctx())
}

/// [`simcall_yield`] with the context [`yield_ctx`] gave (no world borrow held).
pub(crate) fn yield_with(ctx: Option<&'static Ctx>) {
    if let Some(ctx) = ctx {
        ctx.yield_now();
    }
}

/// Sleeps on behalf of `me` (no world borrow held).
pub(crate) fn sleep_for(me: u32, seconds: f64) {
    if seconds > 0.0 {
        let ctx = with_world(|w| w.ranks[me as usize].ctx());
        ctx.sleep(seconds);
    }
}

/// Blocks until request `id` completes; returns its status and frees it
/// (persistent requests are only made inactive).
pub(crate) fn wait(me: u32, id: u32, call: &'static str) -> StatusInfo {
    wait_inline(me, id, call)
}

/// [`wait`], inlined into the blocking calls (`MPI_Send`, `MPI_Recv`, `MPI_Sendrecv`): one
/// frame less between the program and the switch, so fewer of the rank's stack lines to
/// bring back when it resumes. The first look at the request runs under the world borrow
/// (out of line, on the scratch stack); the rare cases go to [`wait_slow`].
#[inline(always)]
pub(crate) fn wait_inline(me: u32, id: u32, call: &'static str) -> StatusInfo {
    let step = with_world_deep(|w| wait_step(w, me, id, call));
    after_step(me, id, step)
}

/// [`wait_inline`] on `first`, then on `second` (`MPI_Sendrecv`'s send, then its receive).
/// A first request finished at its first look with no overhead to pay (a detached send) has
/// nothing left to do after the borrow, so the second's first look runs in the same borrow.
#[inline(always)]
pub(crate) fn wait_pair_inline(me: u32, first: u32, second: u32, call: &'static str) -> StatusInfo {
    let look = with_world_deep(|w| pair_look(w, me, first, second, call));
    wait_pair_looked(me, first, second, look, call)
}

/// A wait's first look at a request, taken by a caller that holds the world (see
/// [`look`]); [`wait_looked`] does the rest once the borrow is over.
pub(crate) struct Look(WaitStep);

/// [`wait_inline`]'s first look at request `id`, in the caller's borrow.
pub(crate) fn look(w: &mut World, me: u32, id: u32, call: &'static str) -> Look {
    Look(wait_step(w, me, id, call))
}

/// The rest of [`wait_inline`] after [`look`].
#[inline(always)]
pub(crate) fn wait_looked(me: u32, id: u32, look: Look) -> StatusInfo {
    after_step(me, id, look.0)
}

/// [`wait_pair_inline`]'s first looks at its two requests, taken by a caller that holds
/// the world; [`wait_pair_looked`] does the rest once the borrow is over.
pub(crate) struct PairLook(WaitStep, Option<WaitStep>);

/// [`wait_pair_inline`]'s first looks, in the caller's borrow.
pub(crate) fn pair_look(w: &mut World, me: u32, first: u32, second: u32, call: &'static str) -> PairLook {
    let step = wait_step(w, me, first, call);
    let done_at_once = matches!(&step, WaitStep::Finished(Some((_, or_cost))) if *or_cost <= 0.0);
    let then = done_at_once.then(|| wait_step(w, me, second, call));
    PairLook(step, then)
}

/// The rest of [`wait_pair_inline`] after [`pair_look`].
#[inline(always)]
pub(crate) fn wait_pair_looked(
    me: u32,
    first: u32,
    second: u32,
    look: PairLook,
    call: &'static str,
) -> StatusInfo {
    match look {
        // `first` is over: its `finished_with` would sleep for nothing.
        PairLook(_, Some(then)) => after_step(me, second, then),
        PairLook(step, None) => {
            after_step(me, first, step);
            wait_inline(me, second, call)
        }
    }
}

/// What a wait does after its first look (`step`) at request `id`.
#[inline(always)]
fn after_step(me: u32, id: u32, step: WaitStep) -> StatusInfo {
    match step {
        WaitStep::Finished(done) => return finished_with(me, id, done),
        WaitStep::Block(ctx, a) => ctx.wait(a),
        WaitStep::Yield(ctx) => yield_with(ctx),
        WaitStep::Finish => {}
        WaitStep::Slow => return wait_slow(me, id),
    }
    finish(me, id)
}

/// What a wait does after its first look at the request (see [`wait_step`]).
enum WaitStep {
    /// Finished in that look: the status and the `or` overhead to pay (`None`: a
    /// generalized request, finished by its callbacks).
    Finished(Option<(StatusInfo, f64)>),
    /// Blocks on the request's activity, then finishes.
    Block(&'static Ctx, ActivityId),
    /// Complete, but a simcall: yields (with this context, if simcalls yield), then finishes.
    Yield(Option<&'static Ctx>),
    /// Nothing to wait for: finishes.
    Finish,
    /// A non-blocking collective, or a wait that keeps the rank's open collectives moving.
    Slow,
}

/// The first look of a wait at request `id` (one borrow of the world; the common cases
/// cost one): marks the rank blocked in `call`, and finishes a request with nothing to
/// wait for nor to yield.
#[inline(never)]
fn wait_step(w: &mut World, me: u32, id: u32, call: &'static str) -> WaitStep {
    let r = w.req(id);
    if r.kind == ReqKind::Coll {
        return WaitStep::Slow;
    }
    let info = BlockInfo {
        call,
        peer: r.peer,
        tag: r.tag,
        comm: r.comm_handle,
    };
    let act = r.act;
    // A wait that reaches the kernel (not a detached send) is a simcall.
    let simcall = act.is_some() && !(r.kind == ReqKind::Send && r.detached);
    let done = is_complete(w, id);
    w.ranks[me as usize].blocked = Some(info);
    if done {
        if simcall {
            return WaitStep::Yield(yield_ctx(w, me));
        }
        return WaitStep::Finished(finish_world(w, me, id));
    }
    match act {
        None => WaitStep::Finish,
        Some(_) if !w.open_colls[me as usize].is_empty() => WaitStep::Slow,
        Some(a) => WaitStep::Block(w.ranks[me as usize].ctx(), a),
    }
}

/// [`wait`] on a non-blocking collective, or on a request while the rank has
/// collectives open (they progress while it waits).
#[cold]
#[inline(never)]
fn wait_slow(me: u32, id: u32) -> StatusInfo {
    let (coll, act, info) = with_world(|w| {
        let r = w.req(id);
        let blocked = w.ranks[me as usize].blocked;
        (r.kind == ReqKind::Coll, r.act, blocked)
    });
    if coll {
        loop {
            progress_open_colls(me);
            if progress_coll(me, id) {
                return finish(me, id);
            }
            let mut acts = pending_acts(id);
            acts.extend(open_coll_acts(me));
            let ctx = with_world(|w| w.ranks[me as usize].ctx());
            ctx.wait_any(&acts);
        }
    }
    let a = act.expect("a wait keeping collectives moving has an activity");
    wait_progressing_colls(me, id, a, info.expect("set by wait_step"));
    finish(me, id)
}

/// Final bookkeeping of a completed request: `or` overhead, status, free.
pub(crate) fn finish(me: u32, id: u32) -> StatusInfo {
    let done = with_world_deep(|w| finish_world(w, me, id));
    finished_with(me, id, done)
}

/// [`finish`]'s part under the world borrow: the status and the `or` overhead to pay, with
/// the request released (`None` for a generalized request, finished by its callbacks).
fn finish_world(w: &mut World, me: u32, id: u32) -> Option<(StatusInfo, f64)> {
    if w.req(id).kind == ReqKind::Generalized {
        return None;
    }
    w.ranks[me as usize].blocked = None;
    let r = w.req(id);
    let status = if r.kind == ReqKind::Recv || r.coll.as_ref().is_some_and(|c| c.receive_status) {
        r.status
    } else {
        StatusInfo {
            source: MPI_ANY_SOURCE,
            tag: MPI_ANY_TAG,
            ..r.status
        }
    };
    if r.kind == ReqKind::Recv && w.trace.is_some() && !status.cancelled && status.source >= 0 {
        let (context, owner) = (r.context, r.owner);
        let now = w.kernel.now();
        if let Some(t) = w.trace.as_mut().filter(|t| t.records(context)) {
            t.message_received(now, status.source, owner, status.tag, context);
        }
    }
    let r = w.req(id);
    let or_cost = if r.kind == ReqKind::Recv && r.matched_detached {
        w.cfg.or.cost(r.size.min(status.bytes) as f64)
    } else {
        0.0
    };
    release_completed(w, id);
    Some((status, or_cost))
}

/// [`finish`]'s part after the borrow: pays the `or` overhead (or finishes a generalized
/// request).
fn finished_with(me: u32, id: u32, done: Option<(StatusInfo, f64)>) -> StatusInfo {
    let Some((status, or_cost)) = done else {
        return finish_greq(me, id);
    };
    sleep_for(me, or_cost);
    status
}

/// Blocks until one of `ids` completes; returns its index. `None` entries are
/// inactive and skipped; returns `None` if all are.
pub(crate) fn wait_any(me: u32, ids: &[Option<u32>]) -> Option<(usize, StatusInfo)> {
    loop {
        progress_all(me, ids);
        let (ready, acts) = with_world(|w| {
            let mut acts = Vec::with_capacity(ids.len());
            let mut idx = Vec::with_capacity(ids.len());
            for (i, id) in ids.iter().enumerate() {
                let Some(id) = *id else { continue };
                if is_complete(w, id) {
                    return (Some(i), acts);
                }
                if let Some(c) = &w.req(id).coll {
                    // Only unfinished sub-requests: a finished one would wake us at once, forever.
                    for &s in c.subs.iter().filter(|&&s| !is_complete(w, s)) {
                        if let Some(a) = w.req(s).act {
                            acts.push(a);
                        }
                    }
                    idx.push(i);
                } else if let Some(a) = w.req(id).act {
                    acts.push(a);
                    idx.push(i);
                }
            }
            if let Some(&first) = idx.first() {
                let r = w.req(ids[first].expect("present"));
                w.ranks[me as usize].blocked = Some(BlockInfo {
                    call: "MPI_Waitany",
                    peer: r.peer,
                    tag: r.tag,
                    comm: r.comm_handle,
                });
            }
            (None, acts)
        });
        if let Some(i) = ready {
            let st = finish(me, ids[i].expect("present"));
            return Some((i, st));
        }
        if acts.is_empty() {
            return None;
        }
        let mut acts = acts;
        acts.extend(open_coll_acts(me));
        let ctx = with_world(|w| w.ranks[me as usize].ctx());
        ctx.wait_any(&acts);
    }
}

/// `MPI_Waitall` as SMPI 3.32 does it: `waitany` until every request is done, so the
/// requests finish (and pay their `or` overhead) in the order they complete, not in index
/// order. Returns each request's status (None: it could not complete).
pub(crate) fn wait_all(me: u32, ids: &[Option<u32>]) -> Vec<Option<StatusInfo>> {
    let mut pending = ids.to_vec();
    let mut out = vec![None; ids.len()];
    while pending.iter().any(Option::is_some) {
        let Some((i, st)) = wait_any(me, &pending) else {
            break;
        };
        out[i] = Some(st);
        pending[i] = None;
    }
    out
}

/// [`wait_all`] over requests that all exist (the collectives' own requests).
pub(crate) fn wait_all_ids(me: u32, reqs: &[u32]) -> Vec<Option<StatusInfo>> {
    let ids: Vec<Option<u32>> = reqs.iter().map(|&r| Some(r)).collect();
    wait_all(me, &ids)
}

/// The polling calls whose injected cost grows while they fail: each has its
/// own counter, as each is a function-static counter in SMPI 3.32 (checked
/// against it): `MPI_Test` (also one per request in `MPI_Testall` and
/// `MPI_Testsome`), `MPI_Testany`, `MPI_Iprobe`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Poll {
    Test = 0,
    Testany = 1,
    Iprobe = 2,
}

/// The injected cost multiplier of a polling call.
pub(crate) fn poll_counter(w: &mut World, me: u32, kind: Poll) -> u64 {
    if w.cfg.grow_per_rank {
        w.ranks[me as usize].nsleeps[kind as usize]
    } else {
        w.global_nsleeps[kind as usize]
    }
}

/// Updates a polling call's multiplier: back to 1 on success, one more on
/// failure. Testany's grows even with `smpi/grow-injected-times:no`, as in
/// SMPI 3.32 (measured: that switch only governs Test and Iprobe).
pub(crate) fn poll_result(w: &mut World, me: u32, kind: Poll, success: bool) {
    if !w.cfg.grow_injected && kind != Poll::Testany {
        return;
    }
    let c = if w.cfg.grow_per_rank {
        &mut w.ranks[me as usize].nsleeps[kind as usize]
    } else {
        &mut w.global_nsleeps[kind as usize]
    };
    if success {
        *c = 1;
    } else {
        *c += 1;
        if !w.cfg.grow_per_rank && kind != Poll::Testany {
            w.failed_shared_polls += 1;
        }
    }
}

/// Failed polls under the shared growing cost past which a run's simulated
/// time is called chaotic (HPL 8×8 makes about 10⁵; a few stray ones do not
/// matter).
const CHAOTIC_POLLS: u64 = 1000;

/// A warning when the run polled enough under SMPI's shared, growing polling
/// cost for its simulated time to be chaotic.
pub(crate) fn chaos_warning(w: &World) -> Option<String> {
    (w.failed_shared_polls >= CHAOTIC_POLLS && w.ranks.len() > 1).then(|| {
        format!(
            "the ranks polled without success {} times (MPI_Iprobe, MPI_Test) under SMPI's shared, growing \
             polling cost (smpi/grow-injected-times:yes, the default): the simulated time of such a run is \
             chaotic (a nanosecond's change in any cost can move it by a few %); compare configurations \
             with replicas (smpi-study) or make the cost constant (--cfg=smpi/grow-injected-times:no)",
            w.failed_shared_polls
        )
    })
}

/// One `MPI_Test` poll of request `id` (no completion): injects the polling
/// sleep, then says whether the request is complete.
pub(crate) fn test_poll(me: u32, id: u32) -> bool {
    let cost = with_world(|w| w.cfg.test * poll_counter(w, me, Poll::Test) as f64);
    sleep_for(me, cost);
    progress_all(me, &[Some(id)]);
    with_world(|w| {
        let d = is_complete(w, id);
        poll_result(w, me, Poll::Test, d);
        d
    })
}

/// MPI_Test semantics: injects the polling sleep, then tests.
pub(crate) fn test(me: u32, id: u32) -> Option<StatusInfo> {
    if test_poll(me, id) {
        Some(finish(me, id))
    } else {
        None
    }
}

/// Starts a non-blocking collective made of `stages`; the first runs now.
pub(crate) fn start_coll(me: u32, comm: i32, stages: Vec<Stage>) -> MpiResult<u32> {
    start_stages(me, comm, stages, false)
}

/// Starts a non-blocking send-receive (`MPI_Isendrecv` and its `_replace`
/// form) as stages like a collective; its status is that of the receive.
pub(crate) fn start_sendrecv(me: u32, comm: i32, stages: Vec<Stage>) -> MpiResult<u32> {
    start_stages(me, comm, stages, true)
}

fn start_stages(me: u32, comm: i32, stages: Vec<Stage>, receive_status: bool) -> MpiResult<u32> {
    let mut stages: VecDeque<Stage> = stages.into();
    let first = stages.pop_front().map(|f| f()).transpose()?.unwrap_or_default();
    let id = with_world(|w| {
        let r = Request {
            status: StatusInfo {
                source: MPI_ANY_SOURCE,
                tag: MPI_ANY_TAG,
                ..Default::default()
            },
            coll: Some(Box::new(CollState {
                subs: first,
                stages,
                receive_status,
            })),
            ..Request::local(ReqKind::Coll, me, comm, None)
        };
        let id = w.alloc_req(r);
        w.open_colls[me as usize].push(id);
        id
    });
    Ok(id)
}

/// Advances a non-blocking collective as far as possible without blocking;
/// returns true when it is complete.
pub(crate) fn progress_coll(me: u32, id: u32) -> bool {
    loop {
        let ready = with_world(|w| {
            let c = w.req(id).coll.as_ref().expect("collective request");
            c.subs.iter().all(|&s| is_complete(w, s))
        });
        if !ready {
            return false;
        }
        let subs = with_world(|w| std::mem::take(&mut w.req_mut(id).coll.as_mut().expect("coll").subs));
        for s in subs {
            let keep = with_world(|w| {
                w.req(id).coll.as_ref().is_some_and(|c| c.receive_status) && w.req(s).kind == ReqKind::Recv
            });
            let status = finish(me, s);
            if keep {
                with_world(|w| w.req_mut(id).status = status);
            }
        }
        let next = with_world(|w| w.req_mut(id).coll.as_mut().expect("coll").stages.pop_front());
        match next {
            None => return true,
            Some(stage) => {
                let subs = match stage() {
                    Ok(s) => s,
                    Err(e) => {
                        with_world(|w| w.req_mut(id).status.error = e.code);
                        Vec::new()
                    }
                };
                with_world(|w| w.req_mut(id).coll.as_mut().expect("coll").subs = subs);
            }
        }
    }
}

/// Progresses every non-blocking collective among `ids`.
pub(crate) fn progress_all(me: u32, ids: &[Option<u32>]) {
    for id in ids.iter().flatten() {
        let is_coll = with_world(|w| {
            w.reqs
                .get(*id as usize)
                .and_then(|r| r.as_ref())
                .is_some_and(|r| r.kind == ReqKind::Coll)
        });
        if is_coll {
            progress_coll(me, *id);
        }
    }
    progress_open_colls(me);
}

// ---- Progress of all of a rank's non-blocking collectives (MPI's progress
// rule): a rank blocked in any MPI call keeps every collective it started
// moving, since another rank may be waiting for one's next stage.

/// The open collectives of `me` that still exist (ids of freed requests may
/// have been reused).
pub(crate) fn open_colls(me: u32) -> Vec<u32> {
    let mut live: Vec<u32> = Vec::new();
    with_world(|w| {
        for id in std::mem::take(&mut w.open_colls[me as usize]) {
            let ok = w
                .reqs
                .get(id as usize)
                .and_then(|r| r.as_ref())
                .is_some_and(|r| r.kind == ReqKind::Coll && r.owner == me && r.coll.is_some());
            if ok && !live.contains(&id) {
                live.push(id);
            }
        }
    });
    live
}

/// Advances every open collective of `me`; forgets the complete ones.
pub(crate) fn progress_open_colls(me: u32) {
    let ids = open_colls(me);
    if ids.is_empty() {
        return;
    }
    let open: Vec<u32> = ids.into_iter().filter(|&id| !progress_coll(me, id)).collect();
    with_world(|w| w.open_colls[me as usize].extend(open));
}

/// Kernel activities the open collectives of `me` wait on.
pub(crate) fn open_coll_acts(me: u32) -> Vec<ActivityId> {
    let ids = open_colls(me);
    let acts = ids.iter().flat_map(|&id| pending_acts(id)).collect();
    with_world(|w| w.open_colls[me as usize].extend(ids));
    acts
}

/// Blocks until request `id` (kernel activity `a`) completes, progressing the
/// open collectives of `me` meanwhile.
pub(crate) fn wait_progressing_colls(me: u32, id: u32, a: ActivityId, info: BlockInfo) {
    let ctx = with_world(|w| w.ranks[me as usize].ctx());
    loop {
        progress_open_colls(me);
        if with_world(|w| is_complete(w, id)) {
            return;
        }
        let mut acts = vec![a];
        acts.extend(open_coll_acts(me));
        with_world(|w| w.ranks[me as usize].blocked = Some(info));
        ctx.wait_any(&acts);
    }
}

/// Kernel activities a collective request is waiting on.
pub(crate) fn pending_acts(id: u32) -> Vec<ActivityId> {
    with_world(|w| {
        let c = w.req(id).coll.as_ref().expect("coll");
        c.subs
            .iter()
            .filter(|&&s| !is_complete(w, s))
            .filter_map(|&s| w.req(s).act)
            .collect()
    })
}

// ------------------------------------------------------------------ clock reads and buffered sends

/// MPI_Wtime: the simulated clock, then (between `MPI_Init` and
/// `MPI_Finalize`) a sleep of `smpi/wtime`, as SMPI does, so that a loop
/// waiting on the clock advances it. The sleep is taken at once, not
/// deferred to the rank's next call: lumping several clock reads' costs into
/// one sleep rounds the wake-up date differently from SMPI's chained sleeps,
/// and HPL's time then drifts from SMPI's by 0.07 % even without the growing
/// polling costs (8×8 N=20000; exact with the immediate sleep).
pub(crate) fn read_clock(me: u32) -> f64 {
    let (now, cost) = with_world(|w| {
        let r = &w.ranks[me as usize];
        let cost = if r.initialized && !r.finalized {
            w.cfg.wtime
        } else {
            0.0
        };
        (w.kernel.now(), cost)
    });
    sleep_for(me, cost);
    now
}

/// Ranks whose leaked handles are reported when `smpi/list-leaks` is 0.
const LEAK_REPORTS: usize = 4;

/// A rank ends (returned `code` from its main, or called `exit(code)`): the
/// problems to report (a non-zero code, MPI_Finalize not called, requests
/// never completed), each as a sentence about the rank. The run goes on for
/// the other ranks, as SMPI does, and its exit status will be the first
/// non-zero code. The rank's pending requests stop touching its buffers,
/// which are gone.
pub(crate) fn rank_ended(me: u32, code: i32, how: &str) -> Vec<String> {
    with_world(|w| {
        let mut problems = Vec::new();
        {
            let r = &mut w.ranks[me as usize];
            r.ended = true;
            r.probing = false;
            if code != 0 {
                r.exit_code = Some(code);
                problems.push(format!("{how} {code}"));
            }
            if r.initialized && !r.finalized {
                problems.push("returned from main without calling MPI_Finalize".to_string());
            }
        }
        let owned = w.owned_reqs(me);
        let pending: Vec<u32> = owned
            .iter()
            .copied()
            .filter(|&id| {
                let r = w.req(id);
                !r.persistent || r.active
            })
            .filter(|&id| !is_complete(w, id))
            .collect();
        let mut kinds: std::collections::BTreeMap<&'static str, usize> = Default::default();
        for &id in &pending {
            let r = w.req_mut(id);
            r.owner_gone = true;
            let kind = match r.kind {
                ReqKind::Send => "send",
                ReqKind::Recv => "receive",
                ReqKind::Coll => "non-blocking collective",
                ReqKind::Generalized => "generalized request",
            };
            *kinds.entry(kind).or_default() += 1;
        }
        // Sub-requests of its collectives go with them.
        for &id in &owned {
            let r = w.req_mut(id);
            if !r.done {
                r.owner_gone = true;
            }
        }
        if !pending.is_empty() {
            let list: Vec<String> = kinds
                .iter()
                .map(|(k, n)| format!("{n} {k}{}", if *n > 1 { "s" } else { "" }))
                .collect();
            problems.push(format!(
                "ended with requests never completed: {}",
                list.join(", ")
            ));
        }
        let list = w.cfg.list_leaks;
        if w.ranks[me as usize].finalized && (list > 0 || w.leak_reports <= LEAK_REPORTS) {
            if let Some(handles) = super::leaks::unfreed_handles(w, me, list, &owned, &pending) {
                w.leak_reports += 1;
                if w.leak_reports <= LEAK_REPORTS || list > 0 {
                    let hint = if list > 0 {
                        ""
                    } else {
                        "; --cfg=smpi/list-leaks:N lists them"
                    };
                    problems.push(format!(
                        "called MPI_Finalize with MPI handles never freed (probable leaks): {handles}{hint}"
                    ));
                } else {
                    problems.push(
                        "also has MPI handles never freed; the leaks of further ranks are not reported \
                         (--cfg=smpi/list-leaks:N reports every rank's)"
                            .to_string(),
                    );
                }
            }
        }
        problems
    })
}

/// Whether a message `me` probes for can still come: false when every other
/// rank has ended or is probing too (nothing can send any more).
pub(crate) fn someone_can_send(w: &World, me: u32) -> bool {
    w.ranks
        .iter()
        .enumerate()
        .any(|(i, r)| i != me as usize && !r.ended && !r.probing)
}
