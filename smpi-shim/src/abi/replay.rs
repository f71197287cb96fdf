//! The replayer (`smpirun -replay <trace>`): a built-in MPI program, one per
//! rank, that reads its rank's actions (see [`crate::mpi::ti_actions`]) and
//! makes the same MPI calls through this C interface as a program would, so
//! that timing, collective selection and models are exactly the online ones.
//!
//! As SMPI's replayer (`smpi_replay.cpp`):
//! - counts are in elements of the action's datatype; the data is garbage in
//!   two scratch buffers (one to send from, one to receive into) shared by all
//!   ranks, sized for the largest action before the run;
//! - every action runs on `MPI_COMM_WORLD`; `sendRecv` uses tag 0;
//!   reductions run with an operation valid for the datatype, whose result
//!   nobody reads (SMPI: `MPI_OP_NULL`), then execute the action's flops;
//! - `isend`/`irecv` requests are kept by (source, destination, tag); `wait`
//!   and `test` take the oldest one of their key (none left: nothing to do,
//!   since a `test` may have completed it), `waitall` waits for all of them,
//!   and the rank waits for those left at the end of its actions;
//! - `compute` executes its flops on the rank's host when
//!   `smpi/simulate-computation` is on; the replayer's own CPU time is never
//!   benchmarked.
//!
//! `--log=smpi_replay.thres:verbose` prints SMPI's line after each action:
//! `[host:rank:(pid) end] [smpi_replay/VERBOSE] <action line> <duration>`.

use std::collections::VecDeque;
use std::ffi::{c_int, c_void};

use crate::host::xbt_log::{self, Origin, Priority};
use crate::mpi::entry::abort_run;
use crate::mpi::ti_actions::{Action, Dt, Exchange, Kind, Mode, Reduction, Trace};
use crate::mpi::{self as rt, with_world, CStatus, MPI_COMM_WORLD, MPI_SUCCESS};

use super::{coll, errhandler, init, p2p, request};

use crate::mpi::datatype::MPI_BYTE;
/// `MPI_DOUBLE` (`mpi.h`).
const MPI_DOUBLE: i32 = 14;
const MPI_ANY_SOURCE: i32 = -1;
const MPI_ERRORS_RETURN: i32 = 2;

/// The scratch buffers all replaying ranks send from and receive into.
pub(crate) struct Buffers {
    send: Vec<u8>,
    recv: Vec<u8>,
    /// Ranks still replaying (the last one says when the replay ended, as SMPI).
    active: std::cell::Cell<usize>,
}

impl Buffers {
    /// Buffers large enough for every action of `trace`.
    pub(crate) fn for_trace(trace: &Trace) -> Buffers {
        let mut need = 0usize;
        // The bytes of an element of each predefined datatype (the only ones a trace names).
        let bytes: Vec<usize> = with_world(|w| {
            (0..=u8::MAX as i32)
                .map(|h| {
                    w.dtype(h)
                        .map(|d| d.extent.max(d.size as isize) as usize)
                        .unwrap_or(32)
                })
                .collect()
        });
        let ext = |dt: Dt, dflt: i32| -> usize { bytes[dt.map_or(dflt, |h| h.get() as i32) as usize] };
        let sum = |from: u32| trace.per_rank(from).iter().map(|c| *c as usize).sum::<usize>();
        for actions in &trace.ranks {
            let mut dflt = MPI_BYTE;
            for a in actions {
                let n = match a.kind {
                    Kind::Init { double_default } => {
                        dflt = if double_default { MPI_DOUBLE } else { MPI_BYTE };
                        0
                    }
                    Kind::Send { message: m, .. } | Kind::Recv(m) => {
                        m.count.max(0) as usize * ext(m.dt, dflt)
                    }
                    Kind::SendRecv {
                        scount,
                        rcount,
                        sdt,
                        rdt,
                        ..
                    } => (scount as usize * ext(sdt, dflt)).max(rcount as usize * ext(rdt, dflt)),
                    Kind::Bcast { count, dt, .. } | Kind::Reduction { count, dt, .. } => {
                        count as usize * ext(dt, dflt)
                    }
                    Kind::Exchange {
                        coll,
                        send,
                        recv,
                        sdt,
                        rdt,
                        ..
                    } => {
                        let (send_v, recv_v) = coll.per_rank();
                        let total = |n: u32, per_rank: bool| if per_rank { sum(n) } else { n as usize };
                        let (s, r) = (
                            total(send, send_v) * ext(sdt, dflt),
                            total(recv, recv_v) * ext(rdt, dflt),
                        );
                        if send_v || recv_v {
                            s.max(r)
                        } else {
                            // One block for each rank, of either size.
                            trace.ranks.len() * s.max(r)
                        }
                    }
                    Kind::ReduceScatter { rcounts, dt, .. } => sum(rcounts) * ext(dt, dflt),
                    _ => 0,
                };
                need = need.max(n);
            }
        }
        // Never empty: a zero-count call still gets a valid pointer.
        Buffers {
            send: vec![0; need.max(16)],
            recv: vec![0; need.max(16)],
            active: std::cell::Cell::new(trace.ranks.len()),
        }
    }

    fn s(&self) -> *const c_void {
        self.send.as_ptr() as *const c_void
    }

    fn r(&self) -> *mut c_void {
        // The buffer is only written through MPI calls, which take raw pointers anyway.
        self.recv.as_ptr() as *mut c_void
    }
}

/// A kept request: its key (source, destination, tag) and handle (0: completed by a `test`).
struct Kept {
    key: (i32, i32, i32),
    handle: c_int,
}

/// A reduction operation valid for datatype `dt`: bitwise or for integers and
/// bytes, logical or for booleans, maxloc for pairs, sum for the others.
fn op_for(dt: i32) -> c_int {
    match dt {
        17 | 44 => 7,                                         // MPI_C_BOOL, MPI_CXX_BOOL: MPI_LOR
        30..=35 | 41..=43 | 65..=67 => 12,                    // pair types: MPI_MAXLOC
        13..=15 | 36..=38 | 45..=53 | 59 | 60 | 63 | 64 => 3, // floating point and complex: MPI_SUM
        _ => 8,                                               // integers, bytes, MPI_LOGICAL: MPI_BOR
    }
}

/// Prefix sums of `counts` (displacements that make blocks follow each other).
fn displs(counts: &[c_int]) -> Vec<c_int> {
    let mut at: c_int = 0;
    counts
        .iter()
        .map(|c| {
            let d = at;
            at = at.wrapping_add(*c);
            d
        })
        .collect()
}

/// One side of an exchange as MPI takes it: its count (`n`), or its counts
/// and their displacements (blocks one after the other), and its datatype.
struct Side<'t> {
    n: c_int,
    counts: &'t [c_int],
    displs: Vec<c_int>,
    dt: c_int,
}

impl<'t> Side<'t> {
    /// The side of count `n`, or (`per_rank`) whose counts start at `n` in the trace's counts.
    fn new(trace: &'t Trace, n: u32, per_rank: bool, dt: c_int) -> Side<'t> {
        if per_rank {
            let counts = trace.per_rank(n);
            Side {
                n: 0,
                counts,
                displs: displs(counts),
                dt,
            }
        } else {
            Side {
                n: n as c_int,
                counts: &[],
                displs: Vec::new(),
                dt,
            }
        }
    }

    fn ns(&self) -> *const c_int {
        self.counts.as_ptr()
    }

    fn ds(&self) -> *const c_int {
        self.displs.as_ptr()
    }
}

/// Replays rank `me`'s actions of `trace`; returns its exit code.
pub(crate) fn run_rank(me: u32, trace: &Trace, bufs: &Buffers) -> i32 {
    let (host, verbose) = with_world(|w| {
        let r = &mut w.ranks[me as usize];
        // Inside MPI for good: the replayer's own CPU time is not the program's.
        r.in_mpi = 1;
        let host = w.hosts[me as usize];
        (w.platform.host(host).name.clone(), w.cfg.simulate_computation)
    });
    let simulate_computation = verbose;
    let threshold = xbt_log::threshold(&["smpi_replay", "smpi"]).0;
    let verbose = threshold <= Priority::Verbose;
    let mut r = Replayer {
        me,
        trace,
        bufs,
        dflt: MPI_BYTE,
        kept: VecDeque::new(),
        simulate_computation,
    };
    let mut initialized = false;
    // The verbose log prints each action's line: read again from the trace (not kept in memory).
    let texts = if verbose {
        trace.line_texts(me as usize)
    } else {
        Vec::new()
    };
    for (i, a) in trace.ranks[me as usize].iter().enumerate() {
        // MPI_Init at the init action (a program may compute before it), or
        // before the first MPI action of a trace without one.
        if !initialized && !matches!(a.kind, Kind::Compute { .. } | Kind::Sleep { .. }) {
            init_mpi();
            initialized = true;
        }
        if !verbose {
            r.run(a);
            continue;
        }
        let start = now();
        r.run(a);
        if !matches!(a.kind, Kind::Init { .. } | Kind::Finalize) {
            let end = now();
            let origin = Origin {
                host: &host,
                rank: me,
            };
            let text = match texts.get(i) {
                Some((line, text)) if *line == a.line => text.clone(),
                _ => trace.text_of(me as usize, a),
            };
            let msg = format!("{text} {:.6}", end - start);
            eprint!(
                "{}",
                xbt_log::format_line(Some(origin), end, "smpi_replay", Priority::Verbose, None, &msg)
            );
        }
    }
    if !initialized {
        init_mpi();
    }
    // Requests never waited for: waited for now (as SMPI).
    let mut left: Vec<c_int> = r.kept.drain(..).map(|k| k.handle).filter(|h| *h != 0).collect();
    if !left.is_empty() {
        // Safety: handles of this rank's requests.
        let rc =
            unsafe { request::MPI_Waitall(left.len() as c_int, left.as_mut_ptr(), std::ptr::null_mut()) };
        if rc != MPI_SUCCESS {
            abort_run(
                me,
                format!(
                    "replay of rank {me}: waiting for its last requests: {}",
                    rt::error_string(rc)
                ),
            );
        }
        // SMPI's final waitall takes a scheduling round even when the requests
        // are complete: the ranks then end in the same order (which one says
        // "Simulation time" last).
        with_world(|w| w.ranks[me as usize].ctx()).yield_now();
    }
    bufs.active.set(bufs.active.get() - 1);
    if bufs.active.get() == 0 && threshold <= Priority::Info {
        let end = now();
        let origin = Origin {
            host: &host,
            rank: me,
        };
        let msg = format!("Simulation time {end:.6}");
        eprint!(
            "{}",
            xbt_log::format_line(Some(origin), end, "smpi_replay", Priority::Info, None, &msg)
        );
    }
    // Safety: as above.
    unsafe { init::MPI_Finalize() };
    0
}

/// MPI_Init, with errors returned so that the replayer names the action that failed.
fn init_mpi() {
    // Safety: MPI calls as a program makes them.
    unsafe {
        init::MPI_Init(std::ptr::null_mut(), std::ptr::null_mut());
        errhandler::MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    }
}

fn now() -> f64 {
    with_world(|w| w.kernel.now())
}

struct Replayer<'a> {
    me: u32,
    trace: &'a Trace,
    bufs: &'a Buffers,
    /// The rank's default datatype (`init` decides).
    dflt: i32,
    /// In posting order (a `test` puts its request back last); the oldest
    /// are usually the first waited for, so taken from the front.
    kept: VecDeque<Kept>,
    simulate_computation: bool,
}

impl Replayer<'_> {
    fn dt(&self, dt: Dt) -> c_int {
        dt.map_or(self.dflt, |h| h.get() as c_int)
    }

    /// Ends the run when a call failed, naming the action.
    fn check(&self, a: &Action, rc: c_int) {
        if rc != MPI_SUCCESS {
            abort_run(
                self.me,
                format!(
                    "{}: replaying '{}' failed: {}",
                    self.trace.at(self.me as usize, a),
                    self.trace.text_of(self.me as usize, a),
                    rt::error_string(rc)
                ),
            );
        }
    }

    fn compute(&self, flops: f64) {
        if flops > 0.0 {
            let ctx = with_world(|w| w.ranks[self.me as usize].ctx());
            crate::mpi::entry::traced_computation(self.me, "computation", flops, || ctx.compute(flops));
        }
    }

    fn take(&mut self, key: (i32, i32, i32)) -> Option<c_int> {
        let i = self.kept.iter().position(|k| k.key == key)?;
        self.kept.remove(i).map(|k| k.handle)
    }

    fn run(&mut self, a: &Action) {
        let me = self.me as i32;
        let (s, r) = (self.bufs.s(), self.bufs.r());
        let w = MPI_COMM_WORLD;
        // Safety (all calls below): MPI calls with valid buffers (sized for
        // every action by `Buffers::for_trace`) and arrays of `np` entries.
        let rc = unsafe {
            match &a.kind {
                Kind::Init { double_default } => {
                    self.dflt = if *double_default { MPI_DOUBLE } else { MPI_BYTE };
                    MPI_SUCCESS
                }
                Kind::Finalize | Kind::Nothing => MPI_SUCCESS,
                Kind::Compute { flops } => {
                    if self.simulate_computation {
                        self.compute(flops.get());
                    }
                    MPI_SUCCESS
                }
                Kind::Sleep { seconds } => {
                    let seconds = seconds.get();
                    crate::mpi::ti_trace::ti!(crate::mpi::ti_trace::sleep(self.me, seconds));
                    rt::sleep_for(self.me, seconds);
                    MPI_SUCCESS
                }
                Kind::Send { mode, message: m } => {
                    let (n, t) = (m.count as c_int, self.dt(m.dt));
                    if !m.nonblocking {
                        match mode {
                            Mode::Standard => p2p::MPI_Send(s, n, t, m.partner, m.tag, w),
                            Mode::Sync => p2p::MPI_Ssend(s, n, t, m.partner, m.tag, w),
                            Mode::Buffered => p2p::MPI_Bsend(s, n, t, m.partner, m.tag, w),
                        }
                    } else {
                        let mut h: c_int = 0;
                        let rc = match mode {
                            Mode::Standard => p2p::MPI_Isend(s, n, t, m.partner, m.tag, w, &mut h),
                            Mode::Sync => p2p::MPI_Issend(s, n, t, m.partner, m.tag, w, &mut h),
                            Mode::Buffered => p2p::MPI_Ibsend(s, n, t, m.partner, m.tag, w, &mut h),
                        };
                        self.kept.push_back(Kept {
                            key: (me, m.partner, m.tag),
                            handle: h,
                        });
                        rc
                    }
                }
                Kind::Recv(m) => {
                    let t = self.dt(m.dt);
                    let src = if m.partner == -1 {
                        MPI_ANY_SOURCE
                    } else {
                        m.partner
                    };
                    let mut n = m.count as c_int;
                    if m.count < 0 {
                        // Unknown size: as SMPI, probe for it.
                        let mut st = CStatus {
                            source: 0,
                            tag: 0,
                            error: 0,
                            cancelled: 0,
                            count: 0,
                        };
                        self.check(a, p2p::MPI_Probe(src, m.tag, w, &mut st));
                        self.check(a, p2p::MPI_Get_count(&st, t, &mut n));
                    }
                    if m.nonblocking {
                        let mut h: c_int = 0;
                        let rc = p2p::MPI_Irecv(r, n, t, src, m.tag, w, &mut h);
                        self.kept.push_back(Kept {
                            key: (m.partner, me, m.tag),
                            handle: h,
                        });
                        rc
                    } else {
                        p2p::MPI_Recv(r, n, t, src, m.tag, w, std::ptr::null_mut())
                    }
                }
                Kind::Wait { src, dst, tag } => {
                    if self.kept.is_empty() {
                        abort_run(
                            self.me,
                            format!(
                                "{}: '{}': no isend or irecv before this wait (trace of another run?)",
                                self.trace.at(self.me as usize, a),
                                self.trace.text_of(self.me as usize, a)
                            ),
                        );
                    }
                    match self.take((*src, *dst, *tag)) {
                        Some(mut h) if h != 0 => request::MPI_Wait(&mut h, std::ptr::null_mut()),
                        // Completed by a test, or never posted here: nothing to wait for (as SMPI).
                        _ => MPI_SUCCESS,
                    }
                }
                Kind::Test { src, dst, tag } => match self.take((*src, *dst, *tag)) {
                    Some(mut h) if h != 0 => {
                        let mut flag = 0;
                        let rc = request::MPI_Test(&mut h, &mut flag, std::ptr::null_mut());
                        // Kept for the wait that follows in the trace (a null handle if done).
                        self.kept.push_back(Kept {
                            key: (*src, *dst, *tag),
                            handle: h,
                        });
                        rc
                    }
                    Some(h) => {
                        self.kept.push_back(Kept {
                            key: (*src, *dst, *tag),
                            handle: h,
                        });
                        MPI_SUCCESS
                    }
                    None => MPI_SUCCESS,
                },
                Kind::WaitAll => {
                    let mut hs: Vec<c_int> = self
                        .kept
                        .drain(..)
                        .map(|k| k.handle)
                        .filter(|h| *h != 0)
                        .collect();
                    if hs.is_empty() {
                        MPI_SUCCESS
                    } else {
                        request::MPI_Waitall(hs.len() as c_int, hs.as_mut_ptr(), std::ptr::null_mut())
                    }
                }
                Kind::SendRecv {
                    scount,
                    dst,
                    rcount,
                    src,
                    sdt,
                    rdt,
                } => {
                    let src = if *src == -1 { MPI_ANY_SOURCE } else { *src };
                    p2p::MPI_Sendrecv(
                        s,
                        *scount as c_int,
                        self.dt(*sdt),
                        *dst,
                        0,
                        r,
                        *rcount as c_int,
                        self.dt(*rdt),
                        src,
                        0,
                        w,
                        std::ptr::null_mut(),
                    )
                }
                Kind::Barrier => coll::MPI_Barrier(w),
                Kind::Bcast { count, root, dt } => {
                    // The root sends from the send buffer, the others receive (one buffer in MPI).
                    let buf = if *root == me { s as *mut c_void } else { r };
                    coll::MPI_Bcast(buf, *count as c_int, self.dt(*dt), *root, w)
                }
                Kind::Reduction {
                    coll: c,
                    count,
                    flops,
                    root,
                    dt,
                } => self.reduction(a, *dt, flops.get(), |t, op| {
                    let n = *count as c_int;
                    match c {
                        Reduction::Reduce => coll::MPI_Reduce(s, r, n, t, op, *root, w),
                        Reduction::AllReduce => coll::MPI_Allreduce(s, r, n, t, op, w),
                        Reduction::Scan => coll::MPI_Scan(s, r, n, t, op, w),
                        Reduction::Exscan => coll::MPI_Exscan(s, r, n, t, op, w),
                    }
                }),
                Kind::ReduceScatter { rcounts, flops, dt } => self.reduction(a, *dt, flops.get(), |t, op| {
                    coll::MPI_Reduce_scatter(s, r, self.trace.per_rank(*rcounts).as_ptr(), t, op, w)
                }),
                Kind::Exchange {
                    coll: c,
                    send,
                    recv,
                    root,
                    sdt,
                    rdt,
                } => {
                    let (send_v, recv_v) = c.per_rank();
                    let sd = Side::new(self.trace, *send, send_v, self.dt(*sdt));
                    let rd = Side::new(self.trace, *recv, recv_v, self.dt(*rdt));
                    let root = *root;
                    match c {
                        Exchange::AllToAll => coll::MPI_Alltoall(s, sd.n, sd.dt, r, rd.n, rd.dt, w),
                        Exchange::AllToAllV => {
                            coll::MPI_Alltoallv(s, sd.ns(), sd.ds(), sd.dt, r, rd.ns(), rd.ds(), rd.dt, w)
                        }
                        Exchange::Gather => coll::MPI_Gather(s, sd.n, sd.dt, r, rd.n, rd.dt, root, w),
                        Exchange::GatherV => {
                            coll::MPI_Gatherv(s, sd.n, sd.dt, r, rd.ns(), rd.ds(), rd.dt, root, w)
                        }
                        Exchange::AllGather => coll::MPI_Allgather(s, sd.n, sd.dt, r, rd.n, rd.dt, w),
                        Exchange::AllGatherV => {
                            coll::MPI_Allgatherv(s, sd.n, sd.dt, r, rd.ns(), rd.ds(), rd.dt, w)
                        }
                        Exchange::Scatter => coll::MPI_Scatter(s, sd.n, sd.dt, r, rd.n, rd.dt, root, w),
                        Exchange::ScatterV => {
                            coll::MPI_Scatterv(s, sd.ns(), sd.ds(), sd.dt, r, rd.n, rd.dt, root, w)
                        }
                    }
                }
            }
        };
        self.check(a, rc);
    }

    /// A reduction action: `call(datatype, operation)`, with an operation
    /// valid for the action's datatype, then the action's flops, executed
    /// whatever `smpi/simulate-computation` says (as SMPI).
    fn reduction(&self, a: &Action, dt: Dt, flops: f64, call: impl FnOnce(c_int, c_int) -> c_int) -> c_int {
        let t = self.dt(dt);
        let rc = call(t, op_for(t));
        self.check(a, rc);
        self.compute(flops);
        rc
    }
}
