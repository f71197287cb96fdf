//! The one run-scoped MPI state: [`World`] (ranks, communicators, groups,
//! requests, datatypes, operations, keyvals, ...) and how MPI entry points reach it.
//!
//! Everything lives in one [`World`] (one simulation per process). MPI entry
//! points borrow it briefly and never hold the borrow across a blocking call:
//! blocking goes through [`Rank::ctx`], which suspends the calling rank's
//! coroutine until the kernel wakes it.

use std::cell::{Cell, RefCell};
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashMap};
use std::rc::Rc;

use simcore::platform::{HostId, Platform};
use simcore::{Ctx, KernelHandle};

use crate::config::SmpiConfig;
use crate::mpi::datatype::{self, Datatype};
use crate::mpi::op::Op;

use super::*;

pub(crate) const MPI_ANY_SOURCE: i32 = -1;
pub(crate) const MPI_ANY_TAG: i32 = -1;
pub(crate) const MPI_PROC_NULL: i32 = -2;
pub(crate) const MPI_UNDEFINED: i32 = -32766;
pub(crate) const MPI_COMM_NULL: i32 = 0;
pub(crate) const MPI_COMM_WORLD: i32 = 1;
pub(crate) const MPI_COMM_SELF: i32 = 2;
/// Largest tag (`MPI_TAG_UB`).
pub(crate) const TAG_UB: i32 = 0x3fff_ffff;

/// The first handle of the communicators the library makes for itself
/// ([`Rank::add_hidden_comm`]).
pub(crate) const HIDDEN_COMM_BASE: i32 = 1 << 28;

/// Group of processes: world ranks in group order.
pub(crate) type Group = Rc<[u32]>;

/// What all members of a communicator share.
#[derive(Debug)]
pub(crate) struct CommShared {
    /// Point-to-point matching context; collectives use `context + 1`.
    pub context: u32,
    pub group: Group,
    /// Remote group of an intercommunicator.
    pub remote: Option<Group>,
}

/// One rank's handle on a communicator.
#[derive(Debug, Clone)]
pub(crate) struct CommEntry {
    pub shared: Rc<CommShared>,
    pub my_rank: i32,
    pub errhandler: i32,
    pub name: String,
    pub attrs: BTreeMap<i32, usize>,
    /// Number of communicator-creating calls made on this communicator, to
    /// agree on new contexts without communication.
    pub creations: u64,
    /// Process topology (Cartesian, graph, distributed graph), kept by dups.
    pub topo: Option<Rc<crate::mpi::topo::Topology>>,
    /// How its ranks sit on hosts, made by the first SMP collective on it
    /// (SMPI's `Comm::init_smp`; see `coll/smp.rs`).
    pub smp: Option<Rc<crate::mpi::comm::SmpLayout>>,
}

impl CommEntry {
    pub(crate) fn size(&self) -> i32 {
        self.shared.group.len() as i32
    }

    /// World rank of local rank `r` (of the remote group for intercommunicators).
    pub(crate) fn world_of(&self, r: i32) -> u32 {
        match &self.shared.remote {
            Some(g) => g[r as usize],
            None => self.shared.group[r as usize],
        }
    }

    /// Size of the group peers are addressed in.
    pub(crate) fn peer_size(&self) -> i32 {
        match &self.shared.remote {
            Some(g) => g.len() as i32,
            None => self.size(),
        }
    }
}

/// What a blocked rank waits for, for deadlock reports.
#[derive(Debug, Clone, Copy)]
pub(crate) struct BlockInfo {
    pub call: &'static str,
    pub peer: i32,
    pub tag: i32,
    pub comm: i32,
}

/// Per-rank state.
pub(crate) struct Rank {
    pub ctx: *const Ctx,
    pub comms: Vec<Option<CommEntry>>,
    /// Communicators of the library's own (handles from [`HIDDEN_COMM_BASE`]).
    pub hidden_comms: Vec<CommEntry>,
    pub groups: Vec<Option<Group>>,
    pub bench_start: f64,
    pub initialized: bool,
    pub finalized: bool,
    /// This rank's polling cost multipliers (`smpi/grow-injected-times-scope:rank`), by [`Poll`].
    pub nsleeps: [u64; 3],
    pub messages_sent: u64,
    pub bytes_sent: u64,
    pub blocked: Option<BlockInfo>,
    pub buffer_attached: Option<(usize, usize)>,
    pub in_mpi: u32,
    /// Returned from its main (its stack and buffers are gone).
    pub ended: bool,
    /// Inside `MPI_Probe`'s polling loop (it sends nothing until it matches).
    pub probing: bool,
    /// The non-zero code it returned from main or passed to `exit`.
    pub exit_code: Option<i32>,
    /// The program's last MPI call (the one it is in, when it is blocked).
    pub user_call: Option<&'static str>,
    /// Error classes, codes and strings the program added.
    pub errors: crate::mpi::errors::UserErrors,
    /// The first of its live requests, linked through [`Request::owned_next`]
    /// ([`NO_REQ`] when it has none): what it still holds when it ends is found
    /// without a scan of every rank's requests.
    pub live_reqs: u32,
}

impl Rank {
    /// The coroutine context of this rank.
    pub(crate) fn ctx(&self) -> &'static Ctx {
        // Safety: set when the rank's coroutine starts; the Ctx lives on that
        // coroutine's stack until it ends, and only that rank uses it.
        unsafe { &*self.ctx }
    }

    pub(crate) fn comm(&self, h: i32) -> MpiResult<&CommEntry> {
        if h >= HIDDEN_COMM_BASE {
            return self
                .hidden_comms
                .get((h - HIDDEN_COMM_BASE) as usize)
                .ok_or_else(|| mpi_err(MPI_ERR_COMM, format!("unknown communicator handle {h}")));
        }
        if h <= 0 {
            return Err(mpi_err(MPI_ERR_COMM, format!("invalid communicator handle {h}")));
        }
        self.comms
            .get(h as usize)
            .and_then(|c| c.as_ref())
            .ok_or_else(|| mpi_err(MPI_ERR_COMM, format!("unknown communicator handle {h}")))
    }

    pub(crate) fn comm_mut(&mut self, h: i32) -> MpiResult<&mut CommEntry> {
        if h >= HIDDEN_COMM_BASE {
            return self
                .hidden_comms
                .get_mut((h - HIDDEN_COMM_BASE) as usize)
                .ok_or_else(|| mpi_err(MPI_ERR_COMM, format!("unknown communicator handle {h}")));
        }
        if h <= 0 {
            return Err(mpi_err(MPI_ERR_COMM, format!("invalid communicator handle {h}")));
        }
        self.comms
            .get_mut(h as usize)
            .and_then(|c| c.as_mut())
            .ok_or_else(|| mpi_err(MPI_ERR_COMM, format!("unknown communicator handle {h}")))
    }

    /// Adds a communicator the library uses internally (SMPI's intra-host
    /// and leaders communicators): the program never sees its handle, and it
    /// is not one of the rank's handles to free.
    pub(crate) fn add_hidden_comm(&mut self, c: CommEntry) -> i32 {
        self.hidden_comms.push(c);
        HIDDEN_COMM_BASE + self.hidden_comms.len() as i32 - 1
    }

    /// Adds a communicator to this rank's table, returns its handle.
    pub(crate) fn add_comm(&mut self, c: CommEntry) -> i32 {
        if let Some(i) = self.comms.iter().skip(3).position(|c| c.is_none()) {
            self.comms[i + 3] = Some(c);
            (i + 3) as i32
        } else {
            self.comms.push(Some(c));
            (self.comms.len() - 1) as i32
        }
    }
}

/// The rank that created each handle of a kind (derived datatypes, user
/// operations), and each rank's handles in order: the report of one rank's
/// handles never freed reads its own, not every rank's.
#[derive(Default)]
pub(crate) struct HandleOwners {
    /// By handle: the rank that created it last (`u32::MAX`: none). Handles
    /// are small dense table indices, reused lowest first; HPL creates and
    /// frees a datatype per message, so this is written on every message.
    owner: Vec<u32>,
}

impl HandleOwners {
    /// Handle `h` was just created by `rank` (a reused handle changes hands).
    pub(crate) fn set(&mut self, h: i32, rank: u32) {
        let h = h as usize;
        if h >= self.owner.len() {
            self.owner.resize(h + 1, u32::MAX);
        }
        self.owner[h] = rank;
    }

    /// The handles `rank` created, in increasing order (freed ones included).
    pub(crate) fn of(&self, rank: u32) -> impl Iterator<Item = i32> + '_ {
        (self.owner.iter().enumerate())
            .filter(move |&(_, &o)| o == rank)
            .map(|(h, _)| h as i32)
    }
}

/// The end of a rank's list of live requests ([`Rank::live_reqs`]).
pub(crate) const NO_REQ: u32 = u32::MAX;

/// The whole simulated MPI world.
pub(crate) struct World {
    pub cfg: SmpiConfig,
    pub kernel: KernelHandle,
    pub kernels: crate::host::kernels::Kernels,
    pub platform: Rc<Platform>,
    pub ranks: Vec<Rank>,
    pub reqs: Vec<Option<Request>>,
    pub(crate) free_reqs: Vec<u32>,
    pub(crate) mailboxes: Vec<Mailbox>,
    /// Each rank's host, by world rank: what a message reads of its peer's state, apart from
    /// the large `Rank`, in a table that stays in the caches.
    pub(crate) hosts: Vec<HostId>,
    /// Each rank's progressing MPI calls left so far (`smpi/probe-sees:progressed`), by world
    /// rank: read by every send queued as unexpected at it, so kept beside `hosts`.
    pub(crate) progress_epochs: Vec<u32>,
    pub types: Vec<Option<Rc<Datatype>>>,
    /// Freed slots of `types`, lowest first: a new type takes the lowest free handle (as a
    /// scan from the front would) without scanning thousands of ranks' live types.
    free_types: BinaryHeap<Reverse<i32>>,
    pub ops: Vec<Option<Op>>,
    pub next_context: u32,
    pub creation_contexts: HashMap<(u32, u64, i32), u32>,
    /// SMPI's polling cost multipliers, shared by all ranks, by [`Poll`].
    pub global_nsleeps: [u64; 3],
    pub keyvals: Vec<Option<crate::mpi::attr::Keyval>>,
    /// How many communicator attributes were set so far, and when each was
    /// last set ((rank, comm, keyval) → sequence): MPI_Finalize deletes
    /// MPI_COMM_SELF's attributes in reverse order of setting.
    pub attr_sets: u64,
    pub attr_set_order: HashMap<(u32, i32, i32), u64>,
    /// Datatype attributes: (rank, datatype, keyval) → value.
    pub type_attrs: std::collections::BTreeMap<(u32, i32, i32), usize>,
    pub messages: u64,
    /// Messages taken out of matching by `MPI_Mprobe`/`MPI_Improbe`: handle − 1
    /// → (send request, communicator handle of the probe).
    pub matched_messages: Vec<Option<(u32, i32)>>,
    /// Free slots of `matched_messages`, lowest first.
    pub(crate) free_messages: BinaryHeap<Reverse<usize>>,
    /// Emptied buffers of delivered staged payloads (detached sends copied
    /// before their receive was posted), kept for the next ones: a staged
    /// message costs no allocation once the run has as many as it stages at
    /// once (up to a bound: `p2p::MAX_KEPT_STAGING_BUFFERS`).
    pub(crate) staging_buffers: Vec<Vec<u8>>,
    /// Callbacks of generalized requests, by request id.
    pub greqs: HashMap<u32, Greq>,
    /// Types made by `MPI_Type_create_f90_*`, by (combiner, p, r): the same
    /// arguments give the same handle.
    pub f90_types: std::collections::BTreeMap<(i32, i32, i32), i32>,
    /// `smpirun -request-log`: one line per send, receive and probe posted.
    pub request_log: Option<std::io::BufWriter<std::fs::File>>,
    /// Per world rank: its non-blocking collectives not known to be complete
    /// (MPI's progress rule: a rank blocked in any MPI call keeps them moving).
    pub open_colls: Vec<Vec<u32>>,
    /// Non-blocking collectives started so far, per (world rank, communicator
    /// context): their sequence numbers name each one's messages.
    pub nbc_started: HashMap<(u32, u32), u32>,
    /// How many `MPI_Comm_create_group` calls each rank made with a given
    /// (parent context, group, tag), so repeated calls get distinct contexts.
    pub create_group_calls: HashMap<(u32, u32, Vec<u32>, i32), u64>,
    /// The functions of the error handlers the program created, by handle
    /// minus [`FIRST_USER_ERRHANDLER`](crate::mpi::entry::FIRST_USER_ERRHANDLER).
    pub errhandlers: Vec<usize>,
    /// Collective calls not yet checked by every member (see `coll_check`).
    pub(crate) pending_colls: crate::mpi::coll_check::PendingCollectives,
    /// The rank that created each derived datatype and user operation still
    /// registered (for the report of handles never freed, `leaks`).
    pub(crate) type_owner: HandleOwners,
    pub(crate) op_owner: HandleOwners,
    /// The timeline being recorded (`smpirun -trace`).
    pub(crate) trace: Option<crate::mpi::trace::Timeline>,
    /// The time-independent trace being recorded (`smpirun -trace-ti`).
    pub(crate) ti: Option<crate::mpi::ti_trace::TiRecorder>,
    /// Polls (MPI_Test, MPI_Iprobe) that failed under the shared growing cost.
    pub(crate) failed_shared_polls: u64,
    /// Ranks whose handles never freed were reported so far.
    pub(crate) leak_reports: usize,
    /// Pairs of (sent, received) basic types already reported as a mismatch.
    pub(crate) said_type_mismatch: std::collections::HashSet<(String, String)>,
    /// The model set's temporal network noise, if any: one draw per message,
    /// added to its latency phase, from the sender's own stream.
    pub net_noise: Option<NetNoise>,
    /// The thread level `MPI_Init_thread` granted (all ranks share one process).
    pub thread_level: i32,
    /// The info objects (`MPI_Info`) of every rank.
    pub infos: crate::mpi::info::InfoTable,
    /// Each rank's copy of libc's per-process state (getopt, rand, strtok).
    pub libc: crate::host::libc_state::LibcState,
    /// The one-sided communication windows.
    pub wins: crate::mpi::rma::Windows,
    /// The MPI-IO files.
    pub files: crate::mpi::io::Files,
    /// Whether message contents mean nothing (a replayed trace: every send is from a scratch
    /// buffer), so point-to-point payloads are not copied.
    pub(crate) payloads_meaningless: bool,
}

/// The thread's world, owned by a thread local (dropped when the thread ends).
struct WorldSlot(RefCell<Option<World>>);

impl Drop for WorldSlot {
    fn drop(&mut self) {
        // From here on the slot is being destroyed: accesses take the checked way.
        WORLD_AT.with(|at| at.set(std::ptr::null()));
    }
}

thread_local! {
    static WORLD: WorldSlot = const { WorldSlot(RefCell::new(None)) };
    /// Where `WORLD`'s cell is once a world is installed (null before, and once the slot is
    /// being destroyed). A constant initializer and no destructor: reading it is a plain
    /// thread-local load, where `WORLD` (which has a destructor) goes through the lazy
    /// registration check on every access, several times per MPI call.
    static WORLD_AT: Cell<*const RefCell<Option<World>>> = const { Cell::new(std::ptr::null()) };
}

/// Runs `f` with the world borrowed mutably. Must not block inside.
#[inline]
pub(crate) fn with_world<R>(f: impl FnOnce(&mut World) -> R) -> R {
    let at = WORLD_AT.with(Cell::get);
    if at.is_null() {
        return WORLD.with(|slot| borrow_world(&slot.0, f));
    }
    // Safety: set by `install_world` to `WORLD`'s cell, which lives until the thread's
    // thread locals are destroyed, and reset to null when its destruction starts.
    borrow_world(unsafe { &*at }, f)
}

/// [`with_world`] for the deep steps of the blocking point-to-point calls (posting a
/// message: matching, the kernel's transfer start and LMM update; a wait's first look and
/// its end): `f` runs on the kernel's scratch stack (`simcore::on_scratch_stack`), whose
/// lines the previous rank just used, instead of the rank's own stack, which is out of the
/// caches by the time the rank runs again when there are thousands. The switch costs some
/// 60 instructions: shallow borrows (polls, queries) stay on the rank's stack, and with
/// fewer than [`SCRATCH_STACK_FROM_RANKS`] ranks, whose stacks stay in the caches, every
/// borrow does.
#[inline]
pub(crate) fn with_world_deep<R>(f: impl FnOnce(&mut World) -> R) -> R {
    if DEEP_ON_SCRATCH.with(Cell::get) {
        simcore::on_scratch_stack(|| with_world(f))
    } else {
        with_world(f)
    }
}

/// Fewest ranks for which [`with_world_deep`] runs on the scratch stack. Measured on the
/// project's 2-core VM (2026-11-26, same-run pairs): HPL 8x8 (64 ranks) 4-8 % slower with it,
/// the 1024-rank Sendrecv ring 20 % faster (median of three pairs).
const SCRATCH_STACK_FROM_RANKS: usize = 512;

thread_local! {
    /// The world has at least [`SCRATCH_STACK_FROM_RANKS`] ranks (set by `install_world`).
    static DEEP_ON_SCRATCH: Cell<bool> = const { Cell::new(false) };
}

#[inline(always)]
fn borrow_world<R>(cell: &RefCell<Option<World>>, f: impl FnOnce(&mut World) -> R) -> R {
    let mut w = cell.borrow_mut();
    f(w.as_mut()
        .expect("MPI world not initialised (is this running under smpirun?)"))
}

/// Whether a world exists (we run under smpirun).
pub(crate) fn world_exists() -> bool {
    WORLD.with(|w| w.0.borrow().is_some())
}

/// Installs the world.
pub(crate) fn install_world(w: World) {
    DEEP_ON_SCRATCH.with(|on| on.set(w.ranks.len() >= SCRATCH_STACK_FROM_RANKS));
    WORLD.with(|slot| {
        *slot.0.borrow_mut() = Some(w);
        WORLD_AT.with(|at| at.set(&slot.0));
    });
}

/// The world rank running now.
/// The first handle of a datatype the program builds: the predefined ones are
/// below, with room to spare so that adding one changes no user handle.
const FIRST_USER_TYPE: usize = 96;
const _: () = assert!(datatype::PREDEFINED_COUNT <= FIRST_USER_TYPE);

pub(crate) fn current_rank() -> u32 {
    simcore::crash::current_actor().expect("MPI call outside of a rank")
}

impl World {
    /// A world of `hosts.len()` ranks, rank `i` on `hosts[i]`.
    pub(crate) fn new(
        cfg: SmpiConfig,
        kernel: KernelHandle,
        kernels: crate::host::kernels::Kernels,
        platform: Rc<Platform>,
        hosts: &[HostId],
    ) -> Self {
        let n = hosts.len() as u32;
        let world_group: Group = (0..n).collect();
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
        for i in 0..hosts.len() {
            let entry = |shared: Rc<CommShared>, my_rank: i32, name: &str| CommEntry {
                shared,
                my_rank,
                errhandler: errh,
                name: name.into(),
                attrs: BTreeMap::new(),
                creations: 0,
                topo: None,
                smp: None,
            };
            let self_shared = Rc::new(CommShared {
                context: 2 + 2 * i as u32,
                group: Rc::from([i as u32]),
                remote: None,
            });
            ranks.push(Rank {
                ctx: std::ptr::null(),
                comms: vec![
                    None,
                    Some(entry(world_shared.clone(), i as i32, "MPI_COMM_WORLD")),
                    Some(entry(self_shared, 0, "MPI_COMM_SELF")),
                ],
                hidden_comms: Vec::new(),
                groups: vec![None, Some(Rc::from([]))],
                bench_start: 0.0,
                initialized: false,
                finalized: false,
                nsleeps: [1; 3],
                messages_sent: 0,
                bytes_sent: 0,
                blocked: None,
                buffer_attached: None,
                in_mpi: 0,
                ended: false,
                probing: false,
                exit_code: None,
                user_call: None,
                errors: Default::default(),
                live_reqs: NO_REQ,
            });
        }
        let mut types: Vec<Option<Rc<Datatype>>> = datatype::predefined()
            .into_iter()
            .map(|t| t.map(Rc::new))
            .collect();
        types.resize(FIRST_USER_TYPE, None);
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
            hosts: hosts.to_vec(),
            progress_epochs: vec![0; n as usize],
            ranks,
            reqs: Vec::new(),
            free_reqs: Vec::new(),
            types,
            free_types: BinaryHeap::new(),
            ops,
            next_context: 2 + 2 * n,
            creation_contexts: HashMap::new(),
            global_nsleeps: [1; 3],
            keyvals: Vec::new(),
            attr_sets: 0,
            attr_set_order: HashMap::new(),
            type_attrs: Default::default(),
            messages: 0,
            matched_messages: Vec::new(),
            free_messages: BinaryHeap::new(),
            staging_buffers: Vec::new(),
            greqs: HashMap::new(),
            f90_types: std::collections::BTreeMap::new(),
            request_log: None,
            open_colls: vec![Vec::new(); n as usize],
            nbc_started: HashMap::new(),
            create_group_calls: HashMap::new(),
            errhandlers: Vec::new(),
            pending_colls: Default::default(),
            said_type_mismatch: Default::default(),
            type_owner: HandleOwners::default(),
            op_owner: HandleOwners::default(),
            leak_reports: 0,
            failed_shared_polls: 0,
            trace: None,
            ti: None,
            net_noise: None,
            thread_level: 0,
            infos: Default::default(),
            libc: crate::host::libc_state::LibcState::new(1),
            wins: Default::default(),
            files: Default::default(),
            payloads_meaningless: false,
        }
    }

    /// Writes one line of the request log (`smpirun -request-log`), if on:
    /// `<date> <rank> <kind> size=<bytes> peer=<world rank, -1 = any> tag=<tag>`, plus
    /// `found=<0|1>` for probes. The fields of SimGrid's `smpi_request` verbose log
    /// ("New send/recv/iprobe"), so the two can be compared rank by rank
    /// (`scripts/request_diff.py`). `peer`: the world rank, None for any source.
    pub(crate) fn log_request(
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

    /// The datatype of a handle.
    pub(crate) fn dtype(&self, h: i32) -> MpiResult<Rc<Datatype>> {
        if h <= 0 {
            return Err(mpi_err(MPI_ERR_TYPE, format!("invalid datatype handle {h}")));
        }
        self.types
            .get(h as usize)
            .and_then(|t| t.clone())
            .ok_or_else(|| mpi_err(MPI_ERR_TYPE, format!("unknown datatype handle {h}")))
    }

    /// Datatype `h` borrowed from the table (no reference count taken), or
    /// `None` for an invalid handle (what [`World::dtype`] reports as an error).
    pub(crate) fn dtype_ref(&self, h: i32) -> Option<&Datatype> {
        self.dtype_held(h).map(|t| &**t)
    }

    /// The table's reference to datatype `h` (cloning it shares the type), or
    /// `None` for an invalid handle.
    pub(crate) fn dtype_held(&self, h: i32) -> Option<&Rc<Datatype>> {
        self.types
            .get(usize::try_from(h).ok().filter(|&i| i > 0)?)?
            .as_ref()
    }

    /// Registers a datatype, returns its handle.
    pub(crate) fn add_type(&mut self, dt: Datatype) -> i32 {
        self.add_type_rc(Rc::new(dt))
    }

    /// Registers a datatype that may be shared (a type is changed only
    /// through `Rc::make_mut`, which copies a shared one), returns its handle.
    pub(crate) fn add_type_rc(&mut self, rc: Rc<Datatype>) -> i32 {
        let h = if let Some(Reverse(h)) = self.free_types.pop() {
            self.types[h as usize] = Some(rc);
            h
        } else {
            self.types.push(Some(rc));
            (self.types.len() - 1) as i32
        };
        self.type_owner.set(h, current_rank());
        h
    }

    /// Frees derived datatype `h` (a valid, non-predefined handle): its slot is reused.
    pub(crate) fn free_type(&mut self, h: i32) {
        debug_assert!(h as usize >= FIRST_USER_TYPE && self.types[h as usize].is_some());
        self.types[h as usize] = None;
        self.free_types.push(Reverse(h));
    }

    pub(crate) fn op(&self, h: i32) -> MpiResult<Op> {
        self.ops
            .get(h.max(0) as usize)
            .and_then(|o| *o)
            .ok_or_else(|| mpi_err(MPI_ERR_OP, format!("invalid operation handle {h}")))
    }

    pub(crate) fn req(&self, id: u32) -> &Request {
        self.reqs[id as usize].as_ref().expect("stale request")
    }

    pub(crate) fn req_mut(&mut self, id: u32) -> &mut Request {
        self.reqs[id as usize].as_mut().expect("stale request")
    }

    /// Stores a new request, returns its handle. Inlined so the request is built where
    /// it is stored (a `Request` is large: each move is a `memcpy`).
    #[inline(always)]
    pub(crate) fn alloc_req(&mut self, r: Request) -> u32 {
        let id = if let Some(i) = self.free_reqs.pop() {
            self.reqs[i as usize] = Some(r);
            i
        } else {
            self.reqs.push(Some(r));
            (self.reqs.len() - 1) as u32
        };
        self.link_owned(id);
        id
    }

    /// Puts request `id` at the head of its owner's list of live requests.
    fn link_owned(&mut self, id: u32) {
        let owner = self.req(id).owner as usize;
        let head = std::mem::replace(&mut self.ranks[owner].live_reqs, id);
        let r = self.req_mut(id);
        (r.owned_prev, r.owned_next) = (NO_REQ, head);
        if head != NO_REQ {
            self.req_mut(head).owned_prev = id;
        }
    }

    /// Takes request `id` out of its owner's list of live requests.
    pub(crate) fn unlink_owned(&mut self, id: u32) {
        let r = self.req(id);
        let (prev, next, owner) = (r.owned_prev, r.owned_next, r.owner);
        if prev == NO_REQ {
            self.ranks[owner as usize].live_reqs = next;
        } else {
            self.req_mut(prev).owned_next = next;
        }
        if next != NO_REQ {
            self.req_mut(next).owned_prev = prev;
        }
    }

    /// The live requests rank `me` owns, in handle order (the order of a scan of
    /// the whole table).
    pub(crate) fn owned_reqs(&self, me: u32) -> Vec<u32> {
        let mut ids = Vec::new();
        let mut id = self.ranks[me as usize].live_reqs;
        while id != NO_REQ {
            ids.push(id);
            id = self.req(id).owned_next;
        }
        ids.sort_unstable();
        ids
    }

    /// Frees a request and its reference on the kernel communication.
    pub(crate) fn free_req(&mut self, id: u32) {
        let Some(r) = &self.reqs[id as usize] else { return };
        let (act, partner) = (r.act, r.partner);
        self.unlink_owned(id);
        // Dropped where it lies (no move out of the table).
        self.reqs[id as usize] = None;
        if let Some(a) = act {
            self.kernel.release(a);
        }
        if let Some(p) = partner {
            if let Some(Some(pr)) = self.reqs.get_mut(p as usize) {
                if pr.partner == Some(id) {
                    pr.partner = None;
                }
            }
        }
        self.free_reqs.push(id);
    }

    /// Allocates a new pair of contexts agreed on by every member: the key is
    /// (parent context, creation number on the parent, color).
    pub(crate) fn agree_context(&mut self, parent: u32, creation: u64, color: i32) -> u32 {
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

/// Temporal network noise (the model file's N′): the law by message size and
/// one seeded stream per sending rank, so a rank's draws do not depend on
/// what the others send.
#[derive(Debug)]
pub(crate) struct NetNoise {
    law: models::network::NetworkNoise,
    seed: u64,
    streams: Vec<Option<models::NoiseRng>>,
}

impl NetNoise {
    /// Noise `law` for `ranks` ranks, streams seeded by `seed`.
    pub(crate) fn new(law: models::network::NetworkNoise, seed: u64, ranks: usize) -> Self {
        NetNoise {
            law,
            seed,
            streams: vec![None; ranks],
        }
    }

    /// The extra delay of one message of `size` bytes (envelope included)
    /// sent by `sender`.
    pub(crate) fn draw(&mut self, sender: u32, size: f64) -> f64 {
        let seed = self.seed;
        let rng = self.streams[sender as usize]
            .get_or_insert_with(|| models::NoiseRng::for_stream(seed, u64::from(sender), "network"));
        self.law.sample(size, rng)
    }
}

/// The status the run ends with for its ranks: the first non-zero code a rank
/// returned from main or passed to `exit` (in rank order), if any.
pub(crate) fn ranks_exit_code() -> Option<i32> {
    with_world(|w| w.ranks.iter().find_map(|r| r.exit_code))
}
