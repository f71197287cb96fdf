//! The MPI runtime: ranks, communicators, requests, matching and message timing.
//!
//! Everything lives in one [`World`] (one simulation per process). MPI entry
//! points (in `smpirun`'s `abi` module) borrow it briefly and never hold the
//! borrow across a blocking call: blocking goes through [`Rank::ctx`], which
//! suspends the calling rank's coroutine until the kernel wakes it.
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

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::ffi::CString;
use std::rc::Rc;

use simcore::platform::{HostId, Platform};
use simcore::{ActivityId, Ctx, KernelHandle};

use crate::config::SmpiConfig;
use crate::datatype::{self, Datatype, SpanLayout};
use crate::op::Op;

pub const MPI_SUCCESS: i32 = 0;
pub const MPI_ERR_BUFFER: i32 = 1;
pub const MPI_ERR_COUNT: i32 = 2;
pub const MPI_ERR_TYPE: i32 = 3;
pub const MPI_ERR_TAG: i32 = 4;
pub const MPI_ERR_COMM: i32 = 5;
pub const MPI_ERR_RANK: i32 = 6;
pub const MPI_ERR_REQUEST: i32 = 7;
pub const MPI_ERR_ROOT: i32 = 8;
pub const MPI_ERR_GROUP: i32 = 9;
pub const MPI_ERR_OP: i32 = 10;
pub const MPI_ERR_ARG: i32 = 13;
pub const MPI_ERR_TRUNCATE: i32 = 15;
pub const MPI_ERR_OTHER: i32 = 16;
pub const MPI_ERR_INTERN: i32 = 17;
pub const MPI_ERR_IN_STATUS: i32 = 18;
pub const MPI_ERR_PENDING: i32 = 19;
pub const MPI_ERR_KEYVAL: i32 = 20;

pub const MPI_ANY_SOURCE: i32 = -1;
pub const MPI_ANY_TAG: i32 = -1;
pub const MPI_PROC_NULL: i32 = -2;
pub const MPI_UNDEFINED: i32 = -32766;
pub const MPI_COMM_NULL: i32 = 0;
pub const MPI_COMM_WORLD: i32 = 1;
pub const MPI_COMM_SELF: i32 = 2;
pub const MPI_ERRORS_ARE_FATAL: i32 = 1;
pub const MPI_ERRORS_RETURN: i32 = 2;
/// Largest tag (`MPI_TAG_UB`).
pub const TAG_UB: i32 = 0x3fff_ffff;

/// Bytes SMPI adds to every message (the envelope).
pub const ENVELOPE: usize = 16;

/// An MPI error: class and a readable explanation.
#[derive(Debug, Clone)]
pub struct MpiError {
    pub code: i32,
    pub message: String,
}

pub type MpiResult<T> = Result<T, MpiError>;

pub fn mpi_err(code: i32, message: impl Into<String>) -> MpiError {
    MpiError {
        code,
        message: message.into(),
    }
}

/// The text of an error class (`MPI_Error_string`).
pub fn error_string(code: i32) -> &'static str {
    match code {
        MPI_SUCCESS => "MPI_SUCCESS: no error",
        MPI_ERR_BUFFER => "MPI_ERR_BUFFER: invalid buffer pointer",
        MPI_ERR_COUNT => "MPI_ERR_COUNT: invalid count argument",
        MPI_ERR_TYPE => "MPI_ERR_TYPE: invalid datatype",
        MPI_ERR_TAG => "MPI_ERR_TAG: invalid tag",
        MPI_ERR_COMM => "MPI_ERR_COMM: invalid communicator",
        MPI_ERR_RANK => "MPI_ERR_RANK: invalid rank",
        MPI_ERR_REQUEST => "MPI_ERR_REQUEST: invalid request",
        MPI_ERR_ROOT => "MPI_ERR_ROOT: invalid root",
        MPI_ERR_GROUP => "MPI_ERR_GROUP: invalid group",
        MPI_ERR_OP => "MPI_ERR_OP: invalid reduce operation",
        11 => "MPI_ERR_TOPOLOGY: invalid communicator topology",
        12 => "MPI_ERR_DIMS: invalid dimension argument",
        MPI_ERR_ARG => "MPI_ERR_ARG: invalid argument",
        14 => "MPI_ERR_UNKNOWN: unknown error",
        MPI_ERR_TRUNCATE => "MPI_ERR_TRUNCATE: message truncated",
        MPI_ERR_OTHER => "MPI_ERR_OTHER: other error",
        MPI_ERR_INTERN => "MPI_ERR_INTERN: internal error",
        MPI_ERR_IN_STATUS => "MPI_ERR_IN_STATUS: error code in status",
        MPI_ERR_PENDING => "MPI_ERR_PENDING: pending request",
        MPI_ERR_KEYVAL => "MPI_ERR_KEYVAL: invalid key value",
        21 => "MPI_ERR_NO_MEM: out of memory",
        22 => "MPI_ERR_INFO: invalid info object",
        23 => "MPI_ERR_UNSUPPORTED_OPERATION: unsupported operation",
        24 => "MPI_ERR_INFO_KEY: invalid info key",
        25 => "MPI_ERR_INFO_VALUE: invalid info value",
        26 => "MPI_ERR_INFO_NOKEY: info key not found",
        _ => "unknown error code",
    }
}

/// Group of processes: world ranks in group order.
pub type Group = Rc<Vec<u32>>;

/// What all members of a communicator share.
#[derive(Debug)]
pub struct CommShared {
    /// Point-to-point matching context; collectives use `context + 1`.
    pub context: u32,
    pub group: Group,
    /// Remote group of an intercommunicator.
    pub remote: Option<Group>,
}

/// One rank's handle on a communicator.
#[derive(Debug, Clone)]
pub struct CommEntry {
    pub shared: Rc<CommShared>,
    pub my_rank: i32,
    pub errhandler: i32,
    pub name: String,
    pub attrs: BTreeMap<i32, usize>,
    /// Number of communicator-creating calls made on this communicator, to
    /// agree on new contexts without communication.
    pub creations: u64,
    /// Process topology (Cartesian, graph, distributed graph), kept by dups.
    pub topo: Option<Rc<crate::topo::Topology>>,
}

impl CommEntry {
    pub fn size(&self) -> i32 {
        self.shared.group.len() as i32
    }

    /// World rank of local rank `r` (of the remote group for intercommunicators).
    pub fn world_of(&self, r: i32) -> u32 {
        match &self.shared.remote {
            Some(g) => g[r as usize],
            None => self.shared.group[r as usize],
        }
    }

    /// Size of the group peers are addressed in.
    pub fn peer_size(&self) -> i32 {
        match &self.shared.remote {
            Some(g) => g.len() as i32,
            None => self.size(),
        }
    }
}

/// What a blocked rank waits for, for deadlock reports.
#[derive(Debug, Clone, Copy)]
pub struct BlockInfo {
    pub call: &'static str,
    pub peer: i32,
    pub tag: i32,
    pub comm: i32,
}

/// Per-rank state.
pub struct Rank {
    pub ctx: *const Ctx,
    pub host: HostId,
    pub comms: Vec<Option<CommEntry>>,
    pub groups: Vec<Option<Group>>,
    pub bench_start: f64,
    pub initialized: bool,
    pub finalized: bool,
    /// This rank's polling cost multipliers (`smpi/grow-injected-times-scope:rank`), by [`Poll`].
    pub nsleeps: [u64; 3],
    pub messages_sent: u64,
    pub bytes_sent: u64,
    pub blocked: Option<BlockInfo>,
    pub argv: Vec<CString>,
    pub buffer_attached: Option<(usize, usize)>,
    pub in_mpi: u32,
}

impl Rank {
    /// The coroutine context of this rank.
    pub fn ctx(&self) -> &'static Ctx {
        // Safety: set when the rank's coroutine starts; the Ctx lives on that
        // coroutine's stack until it ends, and only that rank uses it.
        unsafe { &*self.ctx }
    }

    pub fn comm(&self, h: i32) -> MpiResult<&CommEntry> {
        if h <= 0 {
            return Err(mpi_err(MPI_ERR_COMM, format!("invalid communicator handle {h}")));
        }
        self.comms
            .get(h as usize)
            .and_then(|c| c.as_ref())
            .ok_or_else(|| mpi_err(MPI_ERR_COMM, format!("unknown communicator handle {h}")))
    }

    pub fn comm_mut(&mut self, h: i32) -> MpiResult<&mut CommEntry> {
        if h <= 0 {
            return Err(mpi_err(MPI_ERR_COMM, format!("invalid communicator handle {h}")));
        }
        self.comms
            .get_mut(h as usize)
            .and_then(|c| c.as_mut())
            .ok_or_else(|| mpi_err(MPI_ERR_COMM, format!("unknown communicator handle {h}")))
    }

    /// Adds a communicator to this rank's table, returns its handle.
    pub fn add_comm(&mut self, c: CommEntry) -> i32 {
        if let Some(i) = self.comms.iter().skip(3).position(|c| c.is_none()) {
            self.comms[i + 3] = Some(c);
            (i + 3) as i32
        } else {
            self.comms.push(Some(c));
            (self.comms.len() - 1) as i32
        }
    }
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ReqKind {
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
pub type Stage = Box<dyn FnOnce() -> MpiResult<Vec<u32>>>;

/// Progress state of a non-blocking collective.
#[derive(Default)]
pub struct CollState {
    pub subs: Vec<u32>,
    pub stages: VecDeque<Stage>,
}

/// Send modes.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum SendMode {
    Standard,
    Sync,
    Ready,
    Buffered,
}

/// Completion information of a request.
#[derive(Copy, Clone, Debug, Default)]
pub struct StatusInfo {
    pub source: i32,
    pub tag: i32,
    pub error: i32,
    pub bytes: usize,
    pub cancelled: bool,
}

/// A point-to-point request (user-visible or internal to a collective).
pub struct Request {
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
    pub comm_handle: i32,
    /// Sub-requests and remaining stages (non-blocking collectives only).
    pub coll: Option<Box<CollState>>,
}

/// Where the data of a send is until its receive buffer has it.
#[derive(Clone, Debug)]
pub enum Payload {
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

#[derive(Default)]
struct Mailbox {
    unexpected: VecDeque<u32>,
    posted: VecDeque<u32>,
}

/// A registered datatype.
pub struct TypeEntry {
    pub dt: Rc<Datatype>,
}

/// The whole simulated MPI world.
pub struct World {
    pub cfg: SmpiConfig,
    pub kernel: KernelHandle,
    pub kernels: crate::kernels::Kernels,
    pub platform: Rc<Platform>,
    pub ranks: Vec<Rank>,
    pub reqs: Vec<Option<Request>>,
    free_reqs: Vec<u32>,
    mailboxes: Vec<Mailbox>,
    pub types: Vec<Option<Rc<Datatype>>>,
    pub ops: Vec<Option<Op>>,
    pub next_context: u32,
    pub creation_contexts: HashMap<(u32, u64, i32), u32>,
    /// SMPI's polling cost multipliers, shared by all ranks, by [`Poll`].
    pub global_nsleeps: [u64; 3],
    pub keyvals: Vec<Option<(usize, usize, usize)>>,
    pub messages: u64,
    /// Messages taken out of matching by `MPI_Mprobe`/`MPI_Improbe`: handle − 1
    /// → (send request, communicator handle of the probe).
    pub matched_messages: Vec<Option<(u32, i32)>>,
    /// Callbacks of generalized requests, by request id.
    pub greqs: HashMap<u32, Greq>,
    /// `smpirun -request-log`: one line per send, receive and probe posted.
    pub request_log: Option<std::io::BufWriter<std::fs::File>>,
    /// Each rank's copy of libc's per-process state (getopt, rand, strtok).
    pub libc: crate::libc_state::LibcState,
}

/// `MPI_Grequest_query_function`.
pub type GreqQueryFn = unsafe extern "C" fn(*mut std::ffi::c_void, *mut crate::entry::CStatus) -> i32;
/// `MPI_Grequest_free_function`.
pub type GreqFreeFn = unsafe extern "C" fn(*mut std::ffi::c_void) -> i32;
/// `MPI_Grequest_cancel_function`.
pub type GreqCancelFn = unsafe extern "C" fn(*mut std::ffi::c_void, i32) -> i32;

/// The application's callbacks of a generalized request.
#[derive(Clone, Copy)]
pub struct Greq {
    pub query: Option<GreqQueryFn>,
    pub free: Option<GreqFreeFn>,
    pub cancel: Option<GreqCancelFn>,
    pub extra_state: *mut std::ffi::c_void,
}

thread_local! {
    static WORLD: RefCell<Option<World>> = const { RefCell::new(None) };
}

/// Runs `f` with the world borrowed mutably. Must not block inside.
pub fn with_world<R>(f: impl FnOnce(&mut World) -> R) -> R {
    WORLD.with(|w| {
        let mut w = w.borrow_mut();
        f(w.as_mut()
            .expect("MPI world not initialised (is this running under smpirun?)"))
    })
}

/// Whether a world exists (we run under smpirun).
pub fn world_exists() -> bool {
    WORLD.with(|w| w.borrow().is_some())
}

/// Installs the world.
pub fn install_world(w: World) {
    WORLD.with(|cell| *cell.borrow_mut() = Some(w));
}

/// Removes the world (end of run).
pub fn take_world() -> Option<World> {
    WORLD.with(|cell| cell.borrow_mut().take())
}

/// The world rank running now.
pub fn current_rank() -> u32 {
    simcore::crash::current_actor().expect("MPI call outside of a rank")
}

impl World {
    /// A world of `hosts.len()` ranks, rank `i` on `hosts[i]`.
    pub fn new(
        cfg: SmpiConfig,
        kernel: KernelHandle,
        kernels: crate::kernels::Kernels,
        platform: Rc<Platform>,
        hosts: &[HostId],
    ) -> Self {
        let n = hosts.len() as u32;
        let world_group: Group = Rc::new((0..n).collect());
        let world_shared = Rc::new(CommShared {
            context: 0,
            group: world_group,
            remote: None,
        });
        let errh = if cfg.errors_fatal {
            MPI_ERRORS_ARE_FATAL
        } else {
            MPI_ERRORS_RETURN
        };
        let mut ranks = Vec::with_capacity(n as usize);
        for (i, h) in hosts.iter().enumerate() {
            let entry = |shared: Rc<CommShared>, my_rank: i32, name: &str| CommEntry {
                shared,
                my_rank,
                errhandler: errh,
                name: name.into(),
                attrs: BTreeMap::new(),
                creations: 0,
                topo: None,
            };
            let self_shared = Rc::new(CommShared {
                context: 2 + 2 * i as u32,
                group: Rc::new(vec![i as u32]),
                remote: None,
            });
            ranks.push(Rank {
                ctx: std::ptr::null(),
                host: *h,
                comms: vec![
                    None,
                    Some(entry(world_shared.clone(), i as i32, "MPI_COMM_WORLD")),
                    Some(entry(self_shared, 0, "MPI_COMM_SELF")),
                ],
                groups: vec![None, Some(Rc::new(Vec::new()))],
                bench_start: 0.0,
                initialized: false,
                finalized: false,
                nsleeps: [1; 3],
                messages_sent: 0,
                bytes_sent: 0,
                blocked: None,
                argv: Vec::new(),
                buffer_attached: None,
                in_mpi: 0,
            });
        }
        let mut types: Vec<Option<Rc<Datatype>>> = datatype::predefined()
            .into_iter()
            .map(|t| t.map(Rc::new))
            .collect();
        types.resize(64, None);
        let mut ops: Vec<Option<Op>> = vec![None];
        for h in 1..=14 {
            ops.push(Op::predefined(h));
        }
        World {
            cfg,
            kernel,
            kernels,
            platform,
            mailboxes: (0..n).map(|_| Mailbox::default()).collect(),
            ranks,
            reqs: Vec::new(),
            free_reqs: Vec::new(),
            types,
            ops,
            next_context: 2 + 2 * n,
            creation_contexts: HashMap::new(),
            global_nsleeps: [1; 3],
            keyvals: Vec::new(),
            messages: 0,
            matched_messages: Vec::new(),
            greqs: HashMap::new(),
            request_log: None,
            libc: crate::libc_state::LibcState::new(1),
        }
    }

    /// Writes one line of the request log (`smpirun -request-log`), if on:
    /// `<date> <rank> <kind> size=<bytes> peer=<world rank, -1 = any> tag=<tag>`, plus
    /// `found=<0|1>` for probes. The fields of SimGrid's `smpi_request` verbose log
    /// ("New send/recv/iprobe"), so the two can be compared rank by rank
    /// (`scripts/request_diff.py`). `peer`: the world rank, None for any source.
    fn log_request(
        &mut self,
        rank: u32,
        kind: &str,
        size: usize,
        peer: Option<u32>,
        tag: i32,
        found: Option<bool>,
    ) {
        use std::io::Write;
        let now = self.kernel.now();
        if let Some(out) = &mut self.request_log {
            let peer = peer.map_or(-1, i64::from);
            let found = found.map_or(String::new(), |f| format!(" found={}", f as u8));
            // A full disk only loses log lines; the simulation goes on.
            let _ = writeln!(
                out,
                "{now:.9} {rank} {kind} size={size} peer={peer} tag={tag}{found}"
            );
        }
    }

    pub fn nranks(&self) -> usize {
        self.ranks.len()
    }

    /// The datatype of a handle.
    pub fn dtype(&self, h: i32) -> MpiResult<Rc<Datatype>> {
        if h <= 0 {
            return Err(mpi_err(MPI_ERR_TYPE, format!("invalid datatype handle {h}")));
        }
        self.types
            .get(h as usize)
            .and_then(|t| t.clone())
            .ok_or_else(|| mpi_err(MPI_ERR_TYPE, format!("unknown datatype handle {h}")))
    }

    /// Registers a datatype, returns its handle.
    pub fn add_type(&mut self, dt: Datatype) -> i32 {
        let rc = Rc::new(dt);
        if let Some(i) = self.types.iter().skip(64).position(|t| t.is_none()) {
            self.types[i + 64] = Some(rc);
            (i + 64) as i32
        } else {
            self.types.push(Some(rc));
            (self.types.len() - 1) as i32
        }
    }

    pub fn op(&self, h: i32) -> MpiResult<Op> {
        self.ops
            .get(h.max(0) as usize)
            .and_then(|o| *o)
            .ok_or_else(|| mpi_err(MPI_ERR_OP, format!("invalid operation handle {h}")))
    }

    pub fn req(&self, id: u32) -> &Request {
        self.reqs[id as usize].as_ref().expect("stale request")
    }

    pub fn req_mut(&mut self, id: u32) -> &mut Request {
        self.reqs[id as usize].as_mut().expect("stale request")
    }

    fn alloc_req(&mut self, r: Request) -> u32 {
        if let Some(i) = self.free_reqs.pop() {
            self.reqs[i as usize] = Some(r);
            i
        } else {
            self.reqs.push(Some(r));
            (self.reqs.len() - 1) as u32
        }
    }

    /// Frees a request and its reference on the kernel communication.
    pub fn free_req(&mut self, id: u32) {
        if let Some(r) = self.reqs[id as usize].take() {
            if let Some(a) = r.act {
                self.kernel.release(a);
            }
            if let Some(p) = r.partner {
                if let Some(Some(pr)) = self.reqs.get_mut(p as usize) {
                    if pr.partner == Some(id) {
                        pr.partner = None;
                    }
                }
            }
            self.free_reqs.push(id);
        }
    }

    /// Allocates a new pair of contexts agreed on by every member: the key is
    /// (parent context, creation number on the parent, color).
    pub fn agree_context(&mut self, parent: u32, creation: u64, color: i32) -> u32 {
        let next = &mut self.next_context;
        *self
            .creation_contexts
            .entry((parent, creation, color))
            .or_insert_with(|| {
                let c = *next;
                *next += 2;
                c
            })
    }
}

/// Arguments of a send or receive.
#[derive(Clone, Copy, Debug)]
pub struct P2p {
    pub buf: *mut u8,
    pub count: usize,
    pub dtype: i32,
    pub peer: i32,
    pub tag: i32,
    pub comm: i32,
    /// Use the communicator's collective context (internal messages).
    pub coll: bool,
}

/// Validates a send or receive. `kept` is the datatype a persistent request
/// holds (its handle may have been freed since).
fn check_p2p(
    w: &World,
    me: u32,
    a: &P2p,
    is_send: bool,
    kept: Option<Rc<Datatype>>,
) -> MpiResult<(u32, i32, u32, usize, Rc<Datatype>)> {
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
    if a.buf.is_null() && size > 0 && !is_bottom_ok(&dt) {
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
    Ok((context, c.my_rank, peer_world, size, dt))
}

fn is_bottom_ok(dt: &Datatype) -> bool {
    // Absolute addresses with MPI_BOTTOM: the type map carries the addresses.
    dt.blocks.first().is_some_and(|b| b.0 != 0)
}

/// SimGrid answers every simcall between scheduling rounds: after posting a
/// request the rank lets the other ranks ready at this date run first.
pub fn simcall_yield(me: u32) {
    let ctx = with_world(|w| w.cfg.simcall_yield.then(|| w.ranks[me as usize].ctx()));
    if let Some(ctx) = ctx {
        ctx.yield_now();
    }
}

/// Sleeps on behalf of `me` (no world borrow held).
pub fn sleep_for(me: u32, seconds: f64) {
    if seconds > 0.0 {
        let ctx = with_world(|w| w.ranks[me as usize].ctx());
        ctx.sleep(seconds);
    }
}

fn matches(send: &Request, recv: &Request) -> bool {
    send.context == recv.context
        && (recv.peer == MPI_ANY_SOURCE || recv.peer == send.me_local)
        && (recv.tag == send.tag || (recv.tag == MPI_ANY_TAG && send.tag >= 0))
}

/// Posts a send; returns the request id. Applies `os`/`ois` before posting.
pub fn isend(me: u32, a: &P2p, mode: SendMode, immediate: bool) -> MpiResult<u32> {
    isend_kept(me, a, mode, immediate, None)
}

/// [`isend`] with the datatype a persistent request keeps.
fn isend_kept(
    me: u32,
    a: &P2p,
    mode: SendMode,
    immediate: bool,
    kept: Option<Rc<Datatype>>,
) -> MpiResult<u32> {
    let (req, overhead) = with_world(|w| -> MpiResult<(u32, f64)> {
        let (context, me_local, peer_world, size, dt) = check_p2p(w, me, a, true, kept)?;
        let detached = mode == SendMode::Buffered
            || (mode != SendMode::Sync && size < w.cfg.detached_thresh && a.peer != MPI_PROC_NULL);
        // Safety: the user promises `buf` holds `count` elements of `dtype`.
        let layout = if size > 0 {
            dt.folded_layout(a.buf, a.count)
        } else {
            None
        };
        let payload = if layout.as_ref().is_some_and(|(_, l)| l.all_garbage()) {
            Payload::Folded
        } else {
            // Detached sends are copied when posted (see `post_send`).
            Payload::InBuffer(layout.map(Rc::new))
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
            kind: ReqKind::Send,
            owner: me,
            context,
            peer: a.peer,
            me_local,
            peer_world,
            tag: a.tag,
            buf: a.buf,
            count: a.count,
            dtype: a.dtype,
            dt: Some(dt.clone()),
            size,
            mode,
            detached,
            payload,
            act: None,
            partner: None,
            done: false,
            transferred: false,
            status: StatusInfo::default(),
            matched_detached: false,
            persistent: false,
            active: true,
            orphan: false,
            comm_handle: a.comm,
            coll: None,
        };
        Ok((w.alloc_req(r), overhead))
    })?;
    sleep_for(me, overhead);
    with_world(|w| post_send(w, req));
    simcall_yield(me);
    Ok(req)
}

/// Makes a prepared send request visible to its receiver.
pub fn post_send(w: &mut World, id: u32) {
    let (peer, peer_world, size, detached, owner) = {
        let r = w.req(id);
        (r.peer, r.peer_world, r.size, r.detached, r.owner)
    };
    if peer == MPI_PROC_NULL {
        let r = w.req_mut(id);
        r.done = true;
        r.transferred = true;
        r.status = StatusInfo {
            source: MPI_PROC_NULL,
            tag: MPI_ANY_TAG,
            ..Default::default()
        };
        return;
    }
    w.messages += 1;
    w.ranks[owner as usize].messages_sent += 1;
    if w.request_log.is_some() {
        let tag = w.req(id).tag;
        w.log_request(owner, "send", size, Some(peer_world), tag, None);
    }
    w.ranks[owner as usize].bytes_sent += size as u64;
    let ctx = w.kernel.clone();
    // Synchronous sends stay on the rendezvous path even when small.
    let eager = size < w.cfg.async_small_thresh && w.req(id).mode != SendMode::Sync;
    // Find a posted receive at the destination.
    let mb = &w.mailboxes[peer_world as usize];
    let found = mb.posted.iter().position(|&r| matches(w.req(id), w.req(r)));
    if let Some(pos) = found {
        let recv = w.mailboxes[peer_world as usize]
            .posted
            .remove(pos)
            .expect("position is valid");
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
            let (src, dst) = (w.ranks[owner as usize].host, w.ranks[peer_world as usize].host);
            ctx.comm_start(act, src, dst, (size + ENVELOPE) as f64);
        }
        w.mailboxes[peer_world as usize].unexpected.push_back(id);
        if let (true, Payload::InBuffer(layout)) = (detached, &w.req(id).payload) {
            let r = w.req(id);
            let mut v = Vec::with_capacity(size);
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
pub fn irecv(me: u32, a: &P2p) -> MpiResult<u32> {
    irecv_kept(me, a, None)
}

/// [`irecv`] with the datatype a persistent request keeps.
fn irecv_kept(me: u32, a: &P2p, kept: Option<Rc<Datatype>>) -> MpiResult<u32> {
    with_world(|w| {
        let id = new_recv(w, me, a, kept)?;
        post_recv(w, id);
        Ok(id)
    })
    .inspect(|_| simcall_yield(me))
}

/// A checked receive request, not posted yet.
fn new_recv(w: &mut World, me: u32, a: &P2p, kept: Option<Rc<Datatype>>) -> MpiResult<u32> {
    {
        let (context, _me_local, peer_world, size, dt) = check_p2p(w, me, a, false, kept)?;
        let r = Request {
            kind: ReqKind::Recv,
            owner: me,
            context,
            peer: a.peer,
            me_local: -1,
            peer_world,
            tag: a.tag,
            buf: a.buf,
            count: a.count,
            dtype: a.dtype,
            dt: Some(dt),
            size,
            mode: SendMode::Standard,
            detached: false,
            payload: Payload::default(),
            act: None,
            partner: None,
            done: false,
            transferred: false,
            status: StatusInfo::default(),
            matched_detached: false,
            persistent: false,
            active: true,
            orphan: false,
            comm_handle: a.comm,
            coll: None,
        };
        Ok(w.alloc_req(r))
    }
}

/// Matches a prepared receive against unexpected sends, or queues it.
pub fn post_recv(w: &mut World, id: u32) {
    let (peer, owner) = (w.req(id).peer, w.req(id).owner);
    if peer == MPI_PROC_NULL {
        let r = w.req_mut(id);
        r.done = true;
        r.transferred = true;
        r.status = StatusInfo {
            source: MPI_PROC_NULL,
            tag: MPI_ANY_TAG,
            ..Default::default()
        };
        return;
    }
    if w.request_log.is_some() {
        let r = w.req(id);
        let (size, tag) = (r.size, r.tag);
        let from = (peer != MPI_ANY_SOURCE).then_some(r.peer_world);
        w.log_request(owner, "recv", size, from, tag, None);
    }
    let mb = &w.mailboxes[owner as usize];
    let found = mb.unexpected.iter().position(|&s| matches(w.req(s), w.req(id)));
    if let Some(pos) = found {
        let send = w.mailboxes[owner as usize]
            .unexpected
            .remove(pos)
            .expect("position is valid");
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
fn do_match(w: &mut World, send: u32, recv: u32) {
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
    if !ctx.is_started(act) {
        let (src, dst) = (w.ranks[sowner as usize].host, w.ranks[sworld_dst as usize].host);
        ctx.comm_start(act, src, dst, (size + ENVELOPE) as f64);
    } else if ctx.test(act) {
        // Eager message already arrived: deliver now.
        deliver(w, send);
    }
}

/// Copies a finished message into its receive buffer (completion hook).
pub fn on_comm_done(w: &mut World, user: u64) {
    let send = user as u32;
    if w.reqs.get(send as usize).and_then(|r| r.as_ref()).is_none() {
        return;
    }
    if w.req(send).partner.is_some() {
        deliver(w, send);
    }
}

fn deliver(w: &mut World, send: u32) {
    let Some(recv) = w.req(send).partner else { return };
    if w.req(send).transferred {
        return;
    }
    copy_payload(w, send, recv);
    let s = w.req_mut(send);
    s.transferred = true;
    s.payload = Payload::Delivered;
    let orphan = s.orphan;
    w.req_mut(recv).transferred = true;
    if orphan {
        w.free_req(send);
    }
}

/// Copies a matched send's payload (as much as its receive takes) into the
/// receive buffer, wherever the payload is.
fn copy_payload(w: &World, send: u32, recv: u32) {
    let (s, r) = (w.req(send), w.req(recv));
    let rbytes = r.status.bytes;
    if matches!(s.payload, Payload::Folded | Payload::Delivered) {
        return;
    }
    let rdt = r.dt.clone().or_else(|| w.dtype(r.dtype).ok());
    let sdt = s.dt.clone().or_else(|| w.dtype(s.dtype).ok());
    let (Some(rdt), Some(sdt)) = (rdt, sdt) else {
        return;
    };
    // Safety: both buffers were given by the application for these type maps,
    // and a send's layout was computed when it was posted.
    unsafe {
        match &s.payload {
            Payload::Staged(data) => copy_in(&rdt, r.buf, r.count, &data[..rbytes.min(data.len())]),
            Payload::InBuffer(None) if sdt.is_contiguous() && rdt.is_contiguous() => {
                if rbytes > 0 && s.buf != r.buf {
                    crate::shared::copy(s.buf, r.buf, rbytes);
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

unsafe fn copy_in(dt: &Datatype, buf: *mut u8, count: usize, data: &[u8]) {
    if dt.is_contiguous() {
        if !data.is_empty() {
            crate::shared::copy(data.as_ptr(), buf, data.len());
        }
    } else {
        dt.unpack_folded(data, buf, count);
    }
}

/// Whether a request is complete (no cost injected).
pub fn is_complete(w: &World, id: u32) -> bool {
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

/// Blocks until request `id` completes; returns its status and frees it
/// (persistent requests are only made inactive).
pub fn wait(me: u32, id: u32, call: &'static str) -> StatusInfo {
    if with_world(|w| w.req(id).kind == ReqKind::Coll) {
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
    let (act, done, simcall, info) = with_world(|w| {
        let r = w.req(id);
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
        (act, done, simcall, info)
    });
    if !done {
        if let Some(a) = act {
            let ctx = with_world(|w| w.ranks[me as usize].ctx());
            if has_open_colls(me) {
                wait_progressing_colls(me, id, a, info);
            } else {
                ctx.wait(a);
            }
        }
    } else if simcall {
        simcall_yield(me);
    }
    finish(me, id)
}

/// Final bookkeeping of a completed request: `or` overhead, status, free.
pub fn finish(me: u32, id: u32) -> StatusInfo {
    if with_world(|w| w.req(id).kind == ReqKind::Generalized) {
        return finish_greq(me, id);
    }
    let (status, or_cost) = with_world(|w| {
        w.ranks[me as usize].blocked = None;
        let r = w.req(id);
        let status = if r.kind == ReqKind::Recv {
            r.status
        } else {
            StatusInfo {
                source: MPI_ANY_SOURCE,
                tag: MPI_ANY_TAG,
                ..r.status
            }
        };
        let or_cost = if r.kind == ReqKind::Recv && r.matched_detached {
            w.cfg.or.cost(r.size.min(status.bytes) as f64)
        } else {
            0.0
        };
        release_completed(w, id);
        (status, or_cost)
    });
    sleep_for(me, or_cost);
    status
}

/// Frees (or deactivates, if persistent) a completed request.
pub fn release_completed(w: &mut World, id: u32) {
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

fn clone_req(r: &Request) -> Request {
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
        comm_handle: r.comm_handle,
        coll: None,
    }
}

/// Blocks until one of `ids` completes; returns its index. `None` entries are
/// inactive and skipped; returns `None` if all are.
pub fn wait_any(me: u32, ids: &[Option<u32>]) -> Option<(usize, StatusInfo)> {
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
pub fn wait_all(me: u32, ids: &[Option<u32>]) -> Vec<Option<StatusInfo>> {
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
pub fn wait_all_ids(me: u32, reqs: &[u32]) -> Vec<Option<StatusInfo>> {
    let ids: Vec<Option<u32>> = reqs.iter().map(|&r| Some(r)).collect();
    wait_all(me, &ids)
}

/// The polling calls whose injected cost grows while they fail: each has its
/// own counter, as each is a function-static counter in SMPI 3.32 (checked
/// against it): `MPI_Test` (also one per request in `MPI_Testall` and
/// `MPI_Testsome`), `MPI_Testany`, `MPI_Iprobe`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Poll {
    Test = 0,
    Testany = 1,
    Iprobe = 2,
}

/// The injected cost multiplier of a polling call.
pub fn poll_counter(w: &mut World, me: u32, kind: Poll) -> u64 {
    if w.cfg.grow_per_rank {
        w.ranks[me as usize].nsleeps[kind as usize]
    } else {
        w.global_nsleeps[kind as usize]
    }
}

/// Updates a polling call's multiplier: back to 1 on success, one more on
/// failure. Testany's grows even with `smpi/grow-injected-times:no`, as in
/// SMPI 3.32 (measured: that switch only governs Test and Iprobe).
pub fn poll_result(w: &mut World, me: u32, kind: Poll, success: bool) {
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
    }
}

/// One `MPI_Test` poll of request `id` (no completion): injects the polling
/// sleep, then says whether the request is complete.
pub fn test_poll(me: u32, id: u32) -> bool {
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
pub fn test(me: u32, id: u32) -> Option<StatusInfo> {
    if test_poll(me, id) {
        Some(finish(me, id))
    } else {
        None
    }
}

/// Looks for a matching unexpected message without receiving it.
/// Returns its status and the send request.
pub fn probe_match(w: &World, me: u32, context: u32, source: i32, tag: i32) -> Option<(StatusInfo, u32)> {
    for &s in &w.mailboxes[me as usize].unexpected {
        let r = w.req(s);
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
pub fn iprobe(me: u32, source: i32, tag: i32, comm: i32) -> MpiResult<Option<StatusInfo>> {
    Ok(probe_for(me, source, tag, comm, false)?.map(|(st, _)| st))
}

/// MPI_Improbe semantics: like [`iprobe`], but a message found is taken out
/// of matching and named by the returned message handle
/// ([`MESSAGE_NO_PROC`] for `MPI_PROC_NULL`).
pub fn improbe(me: u32, source: i32, tag: i32, comm: i32) -> MpiResult<Option<(StatusInfo, i32)>> {
    Ok(probe_for(me, source, tag, comm, true)?.map(|(st, h)| (st, h.unwrap_or(MESSAGE_NO_PROC))))
}

/// Probe shared by [`iprobe`] and [`improbe`]; with `claim`, a matched send
/// leaves the unexpected queue and gets a message handle.
fn probe_for(
    me: u32,
    source: i32,
    tag: i32,
    comm: i32,
    claim: bool,
) -> MpiResult<Option<(StatusInfo, Option<i32>)>> {
    let (context, flops, bound) = with_world(|w| -> MpiResult<(u32, f64, f64)> {
        let c = w.ranks[me as usize].comm(comm)?;
        if source != MPI_ANY_SOURCE && source != MPI_PROC_NULL && (source < 0 || source >= c.peer_size()) {
            return Err(mpi_err(MPI_ERR_RANK, format!("invalid source rank {source}")));
        }
        let context = c.shared.context;
        let speed = w.platform.host(w.ranks[me as usize].host).speed;
        let n = poll_counter(w, me, Poll::Iprobe) as f64;
        Ok((
            context,
            n * w.cfg.iprobe * speed * w.cfg.iprobe_cpu_usage,
            speed * w.cfg.iprobe_cpu_usage,
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
        let ctx = with_world(|w| w.ranks[me as usize].ctx());
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
    simcall_yield(me);
    with_world(|w| poll_result(w, me, Poll::Iprobe, found.is_some()));
    Ok(found)
}

/// Blocking send (MPI_Send/Ssend/Rsend/Bsend).
pub fn send(me: u32, a: &P2p, mode: SendMode, call: &'static str) -> MpiResult<()> {
    let id = isend(me, a, mode, false)?;
    wait(me, id, call);
    Ok(())
}

/// Blocking receive.
pub fn recv(me: u32, a: &P2p) -> MpiResult<StatusInfo> {
    let id = irecv(me, a)?;
    let st = wait(me, id, "MPI_Recv");
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
pub fn sendrecv(me: u32, s: &P2p, r: &P2p) -> MpiResult<StatusInfo> {
    let sid = isend(me, s, SendMode::Standard, true)?;
    let rid = irecv(me, r)?;
    wait(me, sid, "MPI_Sendrecv");
    let st = wait(me, rid, "MPI_Sendrecv");
    Ok(st)
}

/// Creates an inactive persistent request (MPI_Send_init / MPI_Recv_init).
pub fn new_persistent(w: &mut World, me: u32, kind: ReqKind, a: P2p, mode: SendMode) -> u32 {
    let r = Request {
        kind,
        owner: me,
        context: 0,
        peer: a.peer,
        me_local: -1,
        peer_world: u32::MAX,
        tag: a.tag,
        buf: a.buf,
        count: a.count,
        dtype: a.dtype,
        dt: None,
        size: 0,
        mode,
        detached: false,
        payload: Payload::default(),
        act: None,
        partner: None,
        done: false,
        transferred: false,
        status: StatusInfo::default(),
        matched_detached: false,
        persistent: true,
        active: false,
        orphan: false,
        comm_handle: a.comm,
        coll: None,
    };
    let id = w.alloc_req(r);
    // Keep the datatype: the application may free its handle before MPI_Start.
    w.req_mut(id).dt = w.dtype(a.dtype).ok();
    id
}

/// MPI_Start: posts a new operation with a persistent request's parameters,
/// reusing its handle.
pub fn start_persistent(me: u32, id: u32) -> MpiResult<()> {
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
        let mut fresh = w.reqs[new as usize].take().expect("just created");
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
fn rename_req(w: &mut World, old: u32, new: u32) {
    let r = w.req(new);
    if r.kind == ReqKind::Send {
        if let Some(act) = r.act {
            w.kernel.set_user(act, new as u64);
        }
    }
    for mb in w.mailboxes.iter_mut() {
        for q in [&mut mb.unexpected, &mut mb.posted] {
            for x in q.iter_mut() {
                if *x == old {
                    *x = new;
                }
            }
        }
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
    fn local(kind: ReqKind, owner: u32, comm_handle: i32, act: Option<ActivityId>) -> Request {
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
            comm_handle,
            coll: None,
        }
    }
}

/// Starts a non-blocking collective made of `stages`; the first runs now.
pub fn start_coll(me: u32, comm: i32, stages: Vec<Stage>) -> MpiResult<u32> {
    let mut stages: VecDeque<Stage> = stages.into();
    let first = stages.pop_front().map(|f| f()).transpose()?.unwrap_or_default();
    let id = with_world(|w| {
        let r = Request {
            status: StatusInfo {
                source: MPI_ANY_SOURCE,
                tag: MPI_ANY_TAG,
                ..Default::default()
            },
            coll: Some(Box::new(CollState { subs: first, stages })),
            ..Request::local(ReqKind::Coll, me, comm, None)
        };
        w.alloc_req(r)
    });
    OPEN_COLLS.with(|m| m.borrow_mut().entry(me).or_default().push(id));
    Ok(id)
}

/// Advances a non-blocking collective as far as possible without blocking;
/// returns true when it is complete.
pub fn progress_coll(me: u32, id: u32) -> bool {
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
            finish(me, s);
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
pub fn progress_all(me: u32, ids: &[Option<u32>]) {
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

thread_local! {
    /// Per world rank: its non-blocking collectives not known to be complete.
    static OPEN_COLLS: RefCell<HashMap<u32, Vec<u32>>> = RefCell::new(HashMap::new());
}

/// The open collectives of `me` that still exist (ids of freed requests may
/// have been reused).
fn open_colls(me: u32) -> Vec<u32> {
    let ids = OPEN_COLLS.with(|m| m.borrow_mut().remove(&me).unwrap_or_default());
    let mut live: Vec<u32> = Vec::with_capacity(ids.len());
    with_world(|w| {
        for id in ids {
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

fn has_open_colls(me: u32) -> bool {
    OPEN_COLLS.with(|m| m.borrow().get(&me).is_some_and(|v| !v.is_empty()))
}

/// Advances every open collective of `me`; forgets the complete ones.
fn progress_open_colls(me: u32) {
    let ids = open_colls(me);
    if ids.is_empty() {
        return;
    }
    let open: Vec<u32> = ids.into_iter().filter(|&id| !progress_coll(me, id)).collect();
    OPEN_COLLS.with(|m| m.borrow_mut().entry(me).or_default().extend(open));
}

/// Kernel activities the open collectives of `me` wait on.
fn open_coll_acts(me: u32) -> Vec<ActivityId> {
    let ids = open_colls(me);
    let acts = ids.iter().flat_map(|&id| pending_acts(id)).collect();
    OPEN_COLLS.with(|m| m.borrow_mut().entry(me).or_default().extend(ids));
    acts
}

/// Blocks until request `id` (kernel activity `a`) completes, progressing the
/// open collectives of `me` meanwhile.
fn wait_progressing_colls(me: u32, id: u32, a: ActivityId, info: BlockInfo) {
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
fn pending_acts(id: u32) -> Vec<ActivityId> {
    with_world(|w| {
        let c = w.req(id).coll.as_ref().expect("coll");
        c.subs
            .iter()
            .filter(|&&s| !is_complete(w, s))
            .filter_map(|&s| w.req(s).act)
            .collect()
    })
}

/// MPI_Cancel: a send or receive not matched yet is withdrawn and completes
/// as cancelled; a matched one is not affected (MPI allows a cancel to fail).
pub fn cancel(w: &mut World, id: u32) {
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

// ------------------------------------------------------------------ matched probes

/// `MPI_MESSAGE_NULL`.
pub const MESSAGE_NULL: i32 = 0;
/// `MPI_MESSAGE_NO_PROC`: the message of a probe on `MPI_PROC_NULL`.
pub const MESSAGE_NO_PROC: i32 = -1;

/// Takes send `send` out of rank `me`'s unexpected queue (no other receive
/// can match it any more) and returns a message handle naming it.
fn claim_message(w: &mut World, me: u32, send: u32, comm: i32) -> i32 {
    let q = &mut w.mailboxes[me as usize].unexpected;
    if let Some(pos) = q.iter().position(|&s| s == send) {
        q.remove(pos);
    }
    let slot = match w.matched_messages.iter().position(|m| m.is_none()) {
        Some(i) => i,
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
pub fn imrecv(me: u32, a: &P2p, msg: i32) -> MpiResult<u32> {
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
        let act = w.req(send).act.expect("a probed send has an activity");
        w.kernel.retain(act);
        w.req_mut(id).act = Some(act);
        do_match(w, send, id);
        Ok(id)
    })?;
    simcall_yield(me);
    Ok(id)
}

// ------------------------------------------------------------------ generalized requests

/// MPI_Grequest_start: a request the application completes itself.
pub fn start_greq(me: u32, greq: Greq) -> u32 {
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
pub fn complete_greq(id: u32) -> MpiResult<()> {
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
pub fn release_greq(id: u32) {
    let done = with_world(|w| {
        let r = w.req_mut(id);
        r.orphan = true;
        r.done
    });
    if done {
        drop_greq(id);
    }
}

fn drop_greq(id: u32) {
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
pub fn greq_of(id: u32) -> Option<Greq> {
    with_world(|w| w.greqs.get(&id).copied())
}

/// Completion of a generalized request: the query callback fills the
/// status, then the free callback runs (MPI 4.0 §13.2). Their error codes
/// end up in the status.
fn finish_greq(me: u32, id: u32) -> StatusInfo {
    let greq = with_world(|w| {
        w.ranks[me as usize].blocked = None;
        w.greqs.remove(&id)
    });
    let mut st = crate::entry::CStatus {
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

// ------------------------------------------------------------------ clock reads and buffered sends

/// MPI_Wtime: the simulated clock, then (between `MPI_Init` and
/// `MPI_Finalize`) a sleep of `smpi/wtime`, as SMPI does, so that a loop
/// waiting on the clock advances it. The sleep is taken at once, not
/// deferred to the rank's next call: lumping several clock reads' costs into
/// one sleep rounds the wake-up date differently from SMPI's chained sleeps,
/// and HPL's time then drifts from SMPI's by 0.07 % even without the growing
/// polling costs (8×8 N=20000; exact with the immediate sleep).
pub fn read_clock(me: u32) -> f64 {
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

/// Blocks until the transfers of every buffered send of rank `me` are over
/// (MPI_Buffer_detach). An eager message that arrived but is not received
/// yet no longer needs the buffer.
pub fn drain_buffered_sends(me: u32) {
    loop {
        let pending = with_world(|w| {
            w.reqs.iter().flatten().find_map(|r| {
                let buffered = r.owner == me && r.kind == ReqKind::Send && r.mode == SendMode::Buffered;
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
