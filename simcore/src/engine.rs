//! The discrete-event kernel: simulated clock, activities and actors.
//!
//! # Model
//! An *actor* is a piece of user code (an MPI rank, for instance) running as a
//! stackful coroutine on a simulated host. Actors run **one at a time**; an actor
//! runs until it blocks on an *activity* (a computation, a sleep, a
//! communication, or a manual activity completed by other code), and only then
//! does the next one run. Time advances only when no actor can run.
//!
//! Activities consume resources: a computation uses its host's CPU constraint, a
//! communication uses every link of its route, and the [`crate::lmm`] solver
//! decides the rates. A communication has a *latency phase* (it loads no link)
//! followed by a *bandwidth phase* (SimGrid's CM02 family of models: see
//! [`NetworkConfig`]).
//!
//! # Disks
//! A read or write of `S` bytes on a disk is SimGrid 3.32's `disk_s19` model: a variable of
//! its own max-min system (separate from the network's and CPUs'), on the disk's read (or
//! write) constraint, bounded by the read (write) bandwidth, and on its read-write constraint,
//! bounded by the larger of the two. The model updates in SimGrid's *full* mode: whenever the
//! clock moves by `Δ`, every running I/O loses `rint(rate · Δ)` bytes (whole bytes, as
//! SimGrid rounds), ends when nothing remains, and is re-dated `remains / rate` later. I/Os
//! ending at a date wake their waiters after the computations and communications ending then
//! (SimGrid's model order: CPU, network, disk).
//!
//! # Profiles and pstates
//! A platform's availability and state profiles (see `platform::profile`) change hosts and
//! links at their dates as SimGrid 3.32's `EngineImpl::solve` does: events dated at the start
//! apply before any actor runs; later, after each solve, every profile event due by the next
//! activity event is applied at its own date (none while no activity is dated), and one on a
//! resource in use brings the next date forward to its own. A host's speed is its pstate's peak
//! times its profile's scale; a change re-bounds its CPU constraint and its computations, which
//! keep their remaining work. A link's bandwidth change re-bounds its constraint (and, with a
//! `weight-S`, changes its flows' penalties); a latency change moves its flows' latency, bound
//! and penalty. A penalty given to a flow still in its latency phase enables it early, as in
//! SimGrid 3.32 (whose flow then waits at rate 0 for the next change on its links). Every
//! change goes through one function per kind (`set_host_speed_scale`, `set_host_pstate`,
//! `set_host_on`, `set_link_bandwidth`, `set_link_latency`, `set_link_on`); a host or link
//! turning off under the program ends the run ([`SimError::ResourceFailed`]).
//!
//! # Determinism
//! Runs are bit-for-bit reproducible:
//! - ready actors run in FIFO order of becoming ready; at start, in spawn order;
//! - events are processed by increasing date, ties broken by the order in which
//!   they were scheduled;
//! - the waiters of one activity are woken in the order they started waiting.
//!
//! With [`KernelConfig::simgrid_order`] the order among events due at one date is
//! SimGrid 3.32's instead (see `sgorder`): after each date, every activity of the modified
//! part of the max-min system is re-dated in SimGrid's modified-set order, ties go to the
//! earliest (re)dated, and computations and sleeps end before communications.
//!
//! # Actor-side API
//! Actor bodies receive a [`Ctx`]: `now`, `execute`, `sleep`, `comm_*`, `wait`,
//! `wait_any`, `test`. Blocking calls suspend the coroutine and hand control back
//! to the kernel.

use std::cell::{Cell, RefCell};
use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashMap, VecDeque};
use std::rc::Rc;

use corosensei::stack::{DefaultStack, Stack};
use corosensei::{Coroutine, CoroutineResult, Yielder};

use crate::crash;
use crate::energy;
use crate::lmm::{self, CnstId, Sharing, VarId};
use crate::platform::{
    DiskId, HostId, LinkId, Platform, Profile, ProfileCursor, ProfileTarget, SharingPolicy,
};
use crate::sgorder::SgOrder;

/// Identifier of an actor (dense, in spawn order).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ActorId(pub u32);

/// Identifier of an activity. Ids are reused once an activity is released.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ActivityId(pub u32);

/// Size-dependent latency and bandwidth factors (SMPI's `network/latency-factor`
/// and `network/bandwidth-factor`). The plain model returns 1 for both.
pub trait NetworkFactors {
    /// Multiplies the route latency of a message of `size` bytes.
    fn latency_factor(&self, _size: f64) -> f64 {
        1.0
    }
    /// Multiplies the rate the solver grants a message of `size` bytes.
    fn bandwidth_factor(&self, _size: f64) -> f64 {
        1.0
    }
}

/// Factors of 1: the plain fluid model (CM02).
#[derive(Debug, Default, Clone, Copy)]
pub struct PlainFactors;
impl NetworkFactors for PlainFactors {}

/// Parameters of the CM02 family of network models.
///
/// For a message of `S` bytes over links `L` with raw latency `λ = Σ lat_l`:
/// - latency phase: `λ · latency_factor(S)` seconds, no bandwidth used;
/// - bandwidth phase: a solver variable on every link of `L` (weight 1) and,
///   with cross-traffic, on every link of the reverse route (weight 0.05),
///   sharing penalty `λ + Σ weight_s / bw_l`, bound
///   `min(min_l bw_l, tcp_gamma / (2λ))`; its rate is the solved value times
///   `bandwidth_factor(S)`.
pub struct NetworkConfig {
    /// Size-dependent latency and bandwidth factors.
    pub factors: Box<dyn NetworkFactors>,
    /// `network/weight-S` (0 for CM02, 8775 for SMPI).
    pub weight_s: f64,
    /// `network/TCP-gamma`, bytes (0 = no window bound).
    pub tcp_gamma: f64,
    /// `network/crosstraffic`.
    pub crosstraffic: bool,
}

impl Default for NetworkConfig {
    /// CM02: factors 1, weight-S 0, TCP-gamma 4194304, cross-traffic on.
    fn default() -> Self {
        NetworkConfig {
            factors: Box::new(PlainFactors),
            weight_s: 0.0,
            tcp_gamma: 4194304.0,
            crosstraffic: true,
        }
    }
}

/// Kernel settings.
pub struct KernelConfig {
    /// Coroutine stack size in bytes (`contexts/stack-size`); a guard page sits below.
    pub stack_size: usize,
    /// `precision/work-amount`.
    pub work_precision: f64,
    /// How messages are timed.
    pub network: NetworkConfig,
    /// Record an event trace (see [`Simulation::trace`]).
    pub trace: bool,
    /// `precision/timing`: events due within this many seconds of the
    /// current date are processed at the current date (SimGrid: 1e-9).
    pub timing_precision: f64,
    /// Reproduce SimGrid 3.32's order among same-date events and its re-dating of every
    /// action of a modified part of the system (see `sgorder`), instead of plain FIFO
    /// order: needed to match SMPI where costs depend on that order.
    pub simgrid_order: bool,
}

impl Default for KernelConfig {
    fn default() -> Self {
        KernelConfig {
            stack_size: 8 << 20,
            work_precision: 1e-5,
            network: NetworkConfig::default(),
            trace: false,
            timing_precision: 0.0,
            simgrid_order: false,
        }
    }
}

/// What a kernel run can end with, besides success.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    /// No event remains but some actors are still blocked.
    #[error("deadlock at t={time}: {} actor(s) blocked", blocked.len())]
    Deadlock {
        /// When the last event happened.
        time: f64,
        /// The actors still blocked, and on what.
        blocked: Vec<BlockedActor>,
    },
    /// An actor body returned an error or panicked.
    #[error("actor '{name}' failed at t={time}: {message}")]
    ActorFailed {
        /// The actor.
        actor: ActorId,
        /// Its name.
        name: String,
        /// When it failed.
        time: f64,
        /// What its body reported.
        message: String,
    },
    /// Resource setup failed (e.g. a coroutine stack could not be mapped).
    #[error("{0}")]
    Setup(String),
    /// A host or link was turned off by its state profile while actors depended on it: the
    /// actors of a host that turns off are killed, the communications of a link that turns off
    /// fail (SimGrid 3.32; an MPI program does not survive either).
    #[error("{what} turned off at t={time} by its state profile: {}", affected.join(", "))]
    ResourceFailed {
        /// When.
        time: f64,
        /// `host \`name\`` or `link \`name\``.
        what: String,
        /// The actors killed or whose communications failed, by name (with what happened to them).
        affected: Vec<String>,
    },
    /// The run reached something SimGrid 3.32 does not simulate either (it aborts), which this
    /// kernel refuses rather than giving a number of its own.
    #[error("not supported (t={time}): {message}")]
    Unsupported {
        /// When.
        time: f64,
        /// What, naming the host or link.
        message: String,
    },
    /// The run was asked to stop (see [`Simulation::stop_when`]) before it ended.
    #[error("stopped at t={time}: {} actor(s) still running", unfinished.len())]
    Stopped {
        /// The simulated time reached.
        time: f64,
        /// The actors that had not ended, and what they wait on.
        unfinished: Vec<BlockedActor>,
    },
}

/// A blocked actor in a deadlock report.
#[derive(Debug, Clone)]
pub struct BlockedActor {
    /// The actor.
    pub actor: ActorId,
    /// Its name.
    pub name: String,
    /// The host it runs on.
    pub host: HostId,
    /// Descriptions of the activities it waits on.
    pub waiting_on: Vec<String>,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum ActKind {
    Comm,
    Exec,
    Sleep,
    Manual,
    /// A disk read or write (its heap entries only mark dates: the disk update ends it).
    Io,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum ActState {
    /// A communication not started yet (waiting for its peer), or a manual activity.
    Pending,
    Latency,
    Running,
    Done,
}

#[derive(Debug)]
struct Activity {
    kind: ActKind,
    state: ActState,
    live: bool,
    refs: u32,
    var: Option<VarId>,
    remains: f64,
    rate: f64,
    rate_factor: f64,
    last_update: f64,
    penalty: f64,
    version: u32,
    /// The first actor waiting for it (with its wait epoch), kept in the activity itself:
    /// most activities have one, and its wait and wake-up then touch no other cache line.
    first_waiter: Option<(ActorId, u64)>,
    /// The others, in the order they began waiting.
    waiters: Vec<(ActorId, u64)>,
    user: u64,
    src: HostId,
    dst: HostId,
    size: f64,
    start: f64,
    finish: f64,
    /// A sleep's end date (dated at the next solve in SimGrid order).
    due: f64,
    /// Sequence number of the last (re)dating: SimGrid's tie-break among equal dates.
    stamp: u64,
    /// A flow's raw route latency as latency profiles change it, and its bandwidth bound at
    /// start (SimGrid's `lat_current_` and user bound).
    lat_current: f64,
    user_bound: f64,
    /// A flow enabled during its latency phase (a link profile changed its penalty then, as
    /// SimGrid 3.32 does): its latency end changes nothing in the solver.
    early: bool,
}

impl Activity {
    /// Adds a waiter after the others (the first one in the activity itself).
    #[inline]
    fn add_waiter(&mut self, waiter: (ActorId, u64)) {
        if self.first_waiter.is_none() {
            self.first_waiter = Some(waiter);
        } else {
            self.waiters.push(waiter);
        }
    }

    fn new(kind: ActKind, user: u64) -> Self {
        Activity {
            kind,
            state: ActState::Pending,
            live: true,
            refs: 1,
            var: None,
            remains: 0.0,
            rate: 0.0,
            rate_factor: 1.0,
            last_update: 0.0,
            penalty: 0.0,
            version: 0,
            first_waiter: None,
            waiters: Vec::new(),
            user,
            src: HostId(0),
            dst: HostId(0),
            size: 0.0,
            start: 0.0,
            finish: -1.0,
            due: 0.0,
            stamp: 0,
            lat_current: 0.0,
            user_bound: 0.0,
            early: false,
        }
    }
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum ActorState {
    Ready,
    Blocked,
    Done,
}

/// What the kernel keeps of an actor: one cache line (its name is apart, in
/// `Kernel::actor_names`), read and written at each of its waits, wake-ups and resumes, which
/// with thousands of actors find it out of the caches.
#[derive(Debug)]
#[repr(C, align(64))]
struct ActorSlot {
    /// Incremented at each wake-up so stale waiter entries are ignored.
    wait_epoch: u64,
    /// What a blocked actor waits for: one activity ([`Ctx::wait`]), kept here, or several
    /// ([`Ctx::wait_any`]).
    waiting_on: Vec<ActivityId>,
    waiting_one: Option<ActivityId>,
    woken_by: Option<ActivityId>,
    /// Set by [`Ctx::exit`]: the actor ended without returning from its body (boxed: rare).
    exited: Option<Box<Result<(), String>>>,
    host: HostId,
    state: ActorState,
}

const _: () = assert!(std::mem::size_of::<ActorSlot>() == 64);

/// An event: an activity's date, with the sequence number of its scheduling (unique, so the
/// queue's order is total).
#[derive(Debug, PartialEq)]
struct HeapEntry {
    /// The date as [`date_key`] maps it (compared as an integer).
    key: u64,
    seq: u64,
    act: u32,
    version: u32,
}
impl HeapEntry {
    fn time(&self) -> f64 {
        date_from_key(self.key)
    }
}
impl Eq for HeapEntry {}
impl Ord for HeapEntry {
    fn cmp(&self, other: &Self) -> Ordering {
        // Reversed: BinaryHeap is a max-heap and we want the earliest event.
        (other.key, other.seq).cmp(&(self.key, self.seq))
    }
}

/// A date as an integer ordered as [`f64::total_cmp`] orders dates (the sign bit set for
/// positive ones, every bit flipped for negative ones), so that comparing two costs one
/// integer comparison.
fn date_key(t: f64) -> u64 {
    let bits = t.to_bits();
    if bits >> 63 == 0 {
        bits | 1 << 63
    } else {
        !bits
    }
}

/// The inverse of [`date_key`].
fn date_from_key(key: u64) -> f64 {
    f64::from_bits(if key >> 63 == 1 { key & !(1 << 63) } else { !key })
}
impl PartialOrd for HeapEntry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// A cached route: its totals, and where its links lie in [`Kernel::route_links`]
/// (stored inline in the cache: a message reads no pointer and moves no reference count).
#[derive(Clone, Copy)]
struct Route {
    /// The links of the route, as a range of `route_links`.
    links: (u32, u32),
    /// The links of the way back (for the TCP acknowledgements), likewise.
    back: (u32, u32),
    latency: f64,
    min_bw: f64,
    inv_bw_sum: f64,
}

impl Route {
    /// No links, nothing to pay (where there is no route).
    const NONE: Route = Route {
        links: (0, 0),
        back: (0, 0),
        latency: 0.0,
        min_bw: f64::INFINITY,
        inv_bw_sum: 0.0,
    };
}

/// Links `range` of [`Kernel::route_links`].
fn links_of(route_links: &[LinkId], range: (u32, u32)) -> &[LinkId] {
    &route_links[range.0 as usize..range.1 as usize]
}

/// A fast hasher for the route cache (keys are pairs of small integers).
#[derive(Default, Clone, Copy)]
struct HostPairHasher(u64);

impl std::hash::Hasher for HostPairHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0.rotate_left(5) ^ u64::from(*b)).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
        }
    }
    fn write_u32(&mut self, x: u32) {
        self.0 = (self.0.rotate_left(5) ^ u64::from(x)).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

type BuildHostPairHasher = std::hash::BuildHasherDefault<HostPairHasher>;

/// Where a run's traffic went, per link (indexed by [`LinkId`]), collected
/// when asked for ([`Simulation::collect_link_stats`]): what users look at to
/// see why one topology is slower than another.
#[derive(Clone, Debug, Default)]
pub struct LinkStats {
    /// Bytes of the messages that crossed the link (counted when they start).
    pub bytes: Vec<f64>,
    /// Simulated seconds during which the flows on the link used all its
    /// bandwidth.
    pub saturated: Vec<f64>,
    /// Most messages that crossed the link at once.
    pub peak_flows: Vec<u32>,
    /// Messages crossing the link now.
    flows: Vec<u32>,
    /// Links that had a flow since the clock last advanced (may repeat).
    busy: Vec<u32>,
}

impl LinkStats {
    fn new(links: usize) -> Self {
        LinkStats {
            bytes: vec![0.0; links],
            saturated: vec![0.0; links],
            peak_flows: vec![0; links],
            flows: vec![0; links],
            busy: Vec::new(),
        }
    }
}

/// The kernel state shared by the scheduler and the actors' [`Ctx`].
struct Kernel {
    now: f64,
    platform: Rc<Platform>,
    cfg_net: NetworkConfig,
    lmm: lmm::System,
    link_cnst: Vec<CnstId>,
    host_cnst: Vec<CnstId>,
    acts: Vec<Activity>,
    free_acts: Vec<u32>,
    var_owner: Vec<u32>,
    actors: Vec<ActorSlot>,
    /// Each actor's name, by id (for reports only).
    actor_names: Vec<String>,
    ready: VecDeque<ActorId>,
    heap: BinaryHeap<HeapEntry>,
    seq: u64,
    routes: HashMap<(HostId, HostId), Route, BuildHostPairHasher>,
    /// The links of the cached routes, each route's two ranges one after the other.
    route_links: Vec<LinkId>,
    solved: Vec<u32>,
    completed: Vec<(ActivityId, u64)>,
    current: Option<ActorId>,
    trace: Option<Vec<String>>,
    link_stats: Option<LinkStats>,
    /// Simulated seconds each actor spent computing ([`Ctx::compute`]).
    compute_time: Vec<f64>,
    events: u64,
    timing_precision: f64,
    /// SimGrid's event order, when enabled.
    sg: Option<SgOrder>,
    sg_order: Vec<u32>,
    sg_listed: Vec<CnstId>,
    sg_batch: Vec<(bool, u64, HeapEntry)>,
    sg_finished: Vec<HeapEntry>,
    /// The disk model's own max-min system.
    disk_lmm: lmm::System,
    /// Per disk: read, write and read-write constraints.
    disk_cnst: Vec<[CnstId; 3]>,
    /// Running I/Os, in start order (SimGrid's started-action set).
    ios: Vec<u32>,
    /// The host energy plugin, when on.
    energy: Option<Box<energy::Meter>>,
    /// Per host: the peak speed of its current pstate, its speed scale (profile), its pstate,
    /// whether it is on.
    host_peak: Vec<f64>,
    host_scale: Vec<f64>,
    host_pstate: Vec<usize>,
    host_on: Vec<bool>,
    /// Per link: its current bandwidth and latency, whether it is on.
    link_bw: Vec<f64>,
    link_lat: Vec<f64>,
    link_on: Vec<bool>,
    /// How many links are off (0: no message start needs to look).
    links_off: usize,
    /// The platform's profiles and where each is.
    profiles: Vec<(ProfileTarget, Profile, ProfileCursor)>,
    /// A failure that ends the run (a host or link turned off under actors).
    failure: Option<SimError>,
    /// Yields that returned at once, no other actor being ready (see [`Ctx::yield_now`]).
    lone_yields: u32,
    /// Where each actor's stack pointer was when it last blocked or yielded (0: not yet):
    /// the run loop prefetches the next actor's stack top from it ([`prefetch_stack`]).
    resume_sp: Vec<usize>,
    /// Per actor, up to [`HOT_LINES`] cache lines of its own data it touches first when
    /// resumed (0: none), prefetched with its stack ([`Simulation::set_hot_lines`]).
    hot_lines: Vec<[usize; HOT_LINES]>,
}

impl Kernel {
    /// Inlined so the activity is built where it is stored (one `memcpy` less).
    #[inline(always)]
    fn alloc_act(&mut self, mut act: Activity) -> ActivityId {
        if let Some(i) = self.free_acts.pop() {
            // Keep the old waiter buffer: avoids an allocation per activity.
            let slot = &mut self.acts[i as usize];
            let mut waiters = std::mem::take(&mut slot.waiters);
            waiters.clear();
            act.waiters = waiters;
            act.version = slot.version.wrapping_add(1);
            *slot = act;
            ActivityId(i)
        } else {
            self.acts.push(act);
            ActivityId((self.acts.len() - 1) as u32)
        }
    }

    #[inline]
    fn act(&self, a: ActivityId) -> &Activity {
        let act = &self.acts[a.0 as usize];
        debug_assert!(act.live, "use of released activity {a:?}");
        act
    }

    #[inline]
    fn act_mut(&mut self, a: ActivityId) -> &mut Activity {
        &mut self.acts[a.0 as usize]
    }

    fn schedule(&mut self, a: ActivityId, time: f64) {
        self.seq += 1;
        let act = &mut self.acts[a.0 as usize];
        act.version = act.version.wrapping_add(1);
        act.finish = time;
        act.stamp = self.seq;
        self.heap.push(HeapEntry {
            key: date_key(time),
            seq: self.seq,
            act: a.0,
            version: act.version,
        });
    }

    fn route(&mut self, src: HostId, dst: HostId) -> Route {
        if let Some(&r) = self.routes.get(&(src, dst)) {
            return r;
        }
        let links = match self.platform.try_route(src, dst) {
            Ok(links) => links,
            Err(no_route) => {
                // SimGrid stops there: the actor that starts the message fails
                // with the hosts named (when it next yields), and the message
                // goes nowhere meanwhile.
                self.fail_current(no_route.to_string());
                return Route::NONE;
            }
        };
        // A route declared one way only has no return traffic (as SimGrid).
        let back = if self.cfg_net.crosstraffic {
            self.platform.try_route(dst, src).unwrap_or_default()
        } else {
            Vec::new()
        };
        let mut latency = 0.0;
        let mut min_bw = f64::INFINITY;
        let mut inv_bw_sum = 0.0;
        for l in &links {
            let (bw, lat) = (self.link_bw[l.0 as usize], self.link_lat[l.0 as usize]);
            latency += lat;
            min_bw = min_bw.min(bw);
            inv_bw_sum += 1.0 / bw;
        }
        // Links that only carry a latency (Vivaldi distances) are not shared: SimGrid has no
        // link there, so a route of nothing else ends once its latency is paid.
        let (mut links, mut back) = (links, back);
        let platform = &self.platform;
        links.retain(|&l| !platform.link(l).latency_only());
        back.retain(|&l| !platform.link(l).latency_only());
        let start = self.route_links.len() as u32;
        self.route_links.extend_from_slice(&links);
        let mid = self.route_links.len() as u32;
        self.route_links.extend_from_slice(&back);
        let r = Route {
            links: (start, mid),
            back: (mid, self.route_links.len() as u32),
            latency,
            min_bw,
            inv_bw_sum,
        };
        self.routes.insert((src, dst), r);
        r
    }

    /// Ends the running actor with `message` as soon as it yields (the run
    /// then stops with [`SimError::ActorFailed`]); outside any actor there is
    /// no one to blame, and the kernel stops here.
    fn fail_current(&mut self, message: String) {
        let Some(id) = self.current else {
            panic!("{message}");
        };
        let slot = &mut self.actors[id.0 as usize];
        if slot.exited.is_none() {
            slot.exited = Some(Box::new(Err(message)));
        }
    }

    /// Fails a message whose route crosses a link that is off, as SimGrid fails its
    /// communication: the actor starting it, or (outside any actor) the run.
    #[cold]
    fn check_links_on(&mut self, links: &[LinkId], src: HostId, dst: HostId) {
        let Some(&off) = links.iter().find(|l| !self.link_on[l.0 as usize]) else {
            return;
        };
        let name = self.platform.link(off).name.clone();
        let message = format!(
            "a message from `{}` to `{}` crosses link `{name}`, which is off (state profile)",
            self.platform.host(src).name,
            self.platform.host(dst).name
        );
        if self.current.is_some() {
            self.fail_current(message);
        } else if self.failure.is_none() {
            self.failure = Some(SimError::ResourceFailed {
                time: self.now,
                what: format!("link `{name}`"),
                affected: vec![message],
            });
        }
    }

    /// The speed one core of `h` delivers now: its pstate's peak speed times its speed
    /// profile's scale (SimGrid's `speed_.scale * speed_.peak`).
    fn host_speed(&self, h: HostId) -> f64 {
        let i = h.0 as usize;
        self.host_scale[i] * self.host_peak[i]
    }

    /// The live computations on host `h`, and the live communications with a variable on link
    /// `l` (route or back route), in slot order.
    fn acts_on(&self, kind: ActKind, pred: impl Fn(&Activity) -> bool) -> Vec<u32> {
        (0..self.acts.len() as u32)
            .filter(|&i| {
                let a = &self.acts[i as usize];
                a.live && a.kind == kind && a.state != ActState::Done && a.var.is_some() && pred(a)
            })
            .collect()
    }

    fn flows_on(&self, l: LinkId) -> Vec<u32> {
        let c = self.link_cnst[l.0 as usize];
        self.acts_on(ActKind::Comm, |a| {
            a.var
                .is_some_and(|v| self.lmm.variable_constraints(v).any(|(c2, _)| c2 == c))
        })
    }

    /// Re-rates host `h` after its peak speed or scale changed (SimGrid's
    /// `CpuCas01::on_speed_change`): its CPU constraint is bounded by cores × scale × peak and
    /// each computation on it by scale × peak; their remaining work is kept and they are
    /// re-dated at the next solve.
    #[cold]
    fn host_speed_changed(&mut self, h: HostId) {
        let i = h.0 as usize;
        let cores = self.platform.host(h).cores.max(1) as f64;
        let bound = cores * self.host_scale[i] * self.host_peak[i];
        self.lmm.set_constraint_bound(self.host_cnst[i], bound);
        let speed = self.host_speed(h);
        for a in self.acts_on(ActKind::Exec, |a| a.src == h) {
            let var = self.acts[a as usize].var.expect("filtered");
            self.lmm.set_bound(var, speed);
        }
        if let Some(sg) = &mut self.sg {
            sg.touch_host(h.0);
        }
    }

    /// Sets the speed scale of host `h` (its speed profile's value: 1 is its pstate's peak).
    /// Every change of a host's speed scale goes through here.
    #[cold]
    fn set_host_speed_scale(&mut self, h: HostId, scale: f64) {
        if scale <= 0.0 && self.failure.is_none() && !self.acts_on(ActKind::Exec, |a| a.src == h).is_empty() {
            self.failure = Some(self.zero_speed(h));
        }
        self.host_scale[h.0 as usize] = scale;
        self.host_speed_changed(h);
        self.energy_update(h);
        let now = self.now;
        self.record(|| format!("{now:.9} host-speed-scale {} {scale}", h.0));
    }

    /// SimGrid 3.32 aborts ("The Impossible Did Happen") when a computation runs on a host
    /// whose speed profile is at 0.
    #[cold]
    fn zero_speed(&self, h: HostId) -> SimError {
        SimError::Unsupported {
            time: self.now,
            message: format!(
                "a computation on host `{}` while its speed profile is at 0 (SimGrid 3.32 aborts there)",
                self.platform.host(h).name
            ),
        }
    }

    /// Switches host `h` to pstate `pstate` (its peak speed becomes that pstate's). Every pstate
    /// change goes through here; `Err` names the pstates the host has.
    #[cold]
    fn set_host_pstate(&mut self, h: HostId, pstate: usize) -> Result<(), String> {
        let host = self.platform.host(h);
        let Some(&peak) = host.pstate_speeds.get(pstate) else {
            return Err(format!(
                "host `{}` has {} pstate(s) (0 to {}), not pstate {pstate}",
                host.name,
                host.pstate_speeds.len(),
                host.pstate_speeds.len().saturating_sub(1)
            ));
        };
        if peak <= 0.0 {
            return Err(format!(
                "pstate {pstate} of host `{}` has speed 0 (a boot or shutdown pstate of the energy plugin): \
                 not supported, its computations would never end",
                host.name
            ));
        }
        self.host_peak[h.0 as usize] = peak;
        self.host_pstate[h.0 as usize] = pstate;
        self.host_speed_changed(h);
        self.energy_update(h);
        let now = self.now;
        self.record(|| format!("{now:.9} host-pstate {} {pstate}", h.0));
        Ok(())
    }

    /// Turns host `h` on or off (its state profile). Every change of a host's state goes
    /// through here. Turning it off kills its actors, as SimGrid does; an MPI program does not
    /// survive that, so the run ends with [`SimError::ResourceFailed`] naming them. Turning it
    /// back on restarts nothing.
    #[cold]
    fn set_host_on(&mut self, h: HostId, on: bool) {
        let i = h.0 as usize;
        if self.host_on[i] == on {
            return;
        }
        self.host_on[i] = on;
        self.energy_update(h);
        let now = self.now;
        self.record(|| format!("{now:.9} host-on {} {on}", h.0));
        if on {
            return;
        }
        let killed: Vec<String> = self
            .actors
            .iter()
            .zip(&self.actor_names)
            .filter(|(a, _)| a.host == h && a.state != ActorState::Done)
            .map(|(_, name)| format!("{name} killed"))
            .collect();
        if !killed.is_empty() && self.failure.is_none() {
            self.failure = Some(SimError::ResourceFailed {
                time: self.now,
                what: format!("host `{}`", self.platform.host(h).name),
                affected: killed,
            });
        }
    }

    /// Sets the bandwidth of link `l` (its bandwidth profile's value, B/s), as SimGrid's
    /// `NetworkCm02Link::set_bandwidth`: the link's constraint takes the new bound and, with a
    /// `weight-S`, every flow on it the new penalty; flows keep the bound they started with.
    /// Every change of a link's bandwidth goes through here.
    #[cold]
    fn set_link_bandwidth(&mut self, l: LinkId, bw: f64) {
        let i = l.0 as usize;
        let old = self.link_bw[i];
        self.link_bw[i] = bw;
        self.routes.clear();
        self.route_links.clear();
        self.lmm.set_constraint_bound(self.link_cnst[i], bw);
        if let Some(sg) = &mut self.sg {
            sg.touch_link_changed(l.0);
        }
        let ws = self.cfg_net.weight_s;
        if ws > 0.0 {
            let delta = ws / bw - ws / old;
            for a in self.flows_on(l) {
                self.acts[a as usize].penalty += delta;
                self.push_penalty(ActivityId(a));
            }
        }
        let now = self.now;
        self.record(|| format!("{now:.9} link-bandwidth {} {bw}", l.0));
    }

    /// Sets the latency of link `l` (its latency profile's value, s), as SimGrid's
    /// `NetworkCm02Link::set_latency`: every flow on it (started or in its latency phase) has
    /// its latency, bound (`TCP-gamma / 2λ`) and penalty changed by the difference; messages
    /// that start later see the new latency. Every change of a link's latency goes through here.
    #[cold]
    fn set_link_latency(&mut self, l: LinkId, lat: f64) {
        let i = l.0 as usize;
        let delta = lat - self.link_lat[i];
        self.link_lat[i] = lat;
        self.routes.clear();
        self.route_links.clear();
        let gamma = self.cfg_net.tcp_gamma;
        for a in self.flows_on(l) {
            let act = &mut self.acts[a as usize];
            act.lat_current += delta;
            act.penalty += delta;
            let mut bound = act.user_bound;
            if gamma > 0.0 && act.lat_current > 0.0 {
                bound = bound.min(gamma / (2.0 * act.lat_current));
            }
            let var = act.var.expect("a flow has a variable");
            self.lmm.set_bound(var, bound);
            if let Some(sg) = &mut self.sg {
                sg.touch_flow(a);
            }
            self.push_penalty(ActivityId(a));
        }
        let now = self.now;
        self.record(|| format!("{now:.9} link-latency {} {lat}", l.0));
    }

    /// Gives a flow's penalty to the solver; a flow in its latency phase is thereby enabled
    /// early, as in SimGrid 3.32 (`update_variable_penalty` on a disabled variable).
    #[cold]
    fn push_penalty(&mut self, a: ActivityId) {
        let act = &mut self.acts[a.0 as usize];
        let (var, penalty) = (act.var.expect("a flow has a variable"), act.penalty);
        if act.state == ActState::Latency && !act.early {
            act.early = true;
            self.lmm.set_penalty(var, penalty);
            if let Some(sg) = &mut self.sg {
                sg.flow_enable(a.0);
            }
        } else if self.lmm.penalty(var) != penalty {
            self.lmm.set_penalty(var, penalty);
            if let Some(sg) = &mut self.sg {
                sg.touch_flow(a.0);
            }
        }
    }

    /// Turns link `l` on or off (its state profile). Every change of a link's state goes
    /// through here. Turning it off fails the communications crossing it (SimGrid 3.32); an MPI
    /// program does not survive that, so the run ends with [`SimError::ResourceFailed`]. Later
    /// messages over it fail when they start.
    #[cold]
    fn set_link_on(&mut self, l: LinkId, on: bool) {
        let i = l.0 as usize;
        if self.link_on[i] == on {
            return;
        }
        self.link_on[i] = on;
        if on {
            self.links_off -= 1;
        } else {
            self.links_off += 1;
        }
        let now = self.now;
        self.record(|| format!("{now:.9} link-on {} {on}", l.0));
        if on {
            return;
        }
        let failed: Vec<String> = self
            .flows_on(l)
            .into_iter()
            .map(|a| {
                let act = &self.acts[a as usize];
                format!(
                    "the message from `{}` to `{}` ({} B) failed",
                    self.platform.host(act.src).name,
                    self.platform.host(act.dst).name,
                    act.size
                )
            })
            .collect();
        if !failed.is_empty() && self.failure.is_none() {
            self.failure = Some(SimError::ResourceFailed {
                time: self.now,
                what: format!("link `{}`", self.platform.link(l).name),
                affected: failed,
            });
        }
    }

    /// Whether a resource has activities on it (SimGrid's `is_used`: any variable on its
    /// constraint, sleeps included for a host).
    #[cold]
    fn target_used(&self, target: ProfileTarget) -> bool {
        match target {
            ProfileTarget::HostSpeed(h) | ProfileTarget::HostState(h) => self.acts.iter().any(|a| {
                a.live
                    && a.src == h
                    && a.state != ActState::Done
                    && (a.kind == ActKind::Sleep || (a.kind == ActKind::Exec && a.var.is_some()))
            }),
            ProfileTarget::LinkBandwidth(l) | ProfileTarget::LinkLatency(l) | ProfileTarget::LinkState(l) => {
                !self.flows_on(l).is_empty()
            }
        }
    }

    /// The date of the next profile event, if any.
    fn next_profile_date(&self) -> Option<f64> {
        self.profiles
            .iter()
            .filter_map(|(_, _, c)| c.next_date)
            .min_by(f64::total_cmp)
    }

    /// Applies every profile event dated `nd` or earlier, in (date, profile) order, each with
    /// the clock at `nd` (SimGrid's `pop_leq` loop); returns whether one was on a resource in
    /// use.
    #[cold]
    fn apply_profiles_due(&mut self, nd: f64) -> bool {
        let now = self.now;
        let mut used = false;
        while let Some(i) =
            (0..self.profiles.len()).find(|&i| self.profiles[i].2.next_date.is_some_and(|d| d <= nd))
        {
            let (target, profile, cursor) = &mut self.profiles[i];
            let target = *target;
            let value = cursor.advance(profile);
            used |= self.target_used(target);
            self.now = nd;
            match target {
                ProfileTarget::HostSpeed(h) => self.set_host_speed_scale(h, value),
                ProfileTarget::HostState(h) => self.set_host_on(h, value > 0.0),
                ProfileTarget::LinkBandwidth(l) => self.set_link_bandwidth(l, value),
                ProfileTarget::LinkLatency(l) => self.set_link_latency(l, value),
                ProfileTarget::LinkState(l) => self.set_link_on(l, value > 0.0),
            }
            self.now = now;
        }
        used
    }

    /// SimGrid's `EngineImpl::presolve`: the profile events dated at or before the start are
    /// applied before any actor runs.
    #[cold]
    fn presolve_profiles(&mut self) {
        while let Some(nd) = self.next_profile_date() {
            if nd > self.now {
                break;
            }
            self.apply_profiles_due(nd);
        }
    }

    /// SimGrid's handling of profile events in `EngineImpl::solve`: given the date of the next
    /// activity event (`None`: no activity is dated, and profile events wait too), applies
    /// every profile event due by then, each at its own date; one on a resource in use brings
    /// the next date forward to its own. Returns the next date.
    #[inline]
    fn apply_profile_events(&mut self, next: Option<f64>) -> Option<f64> {
        if self.profiles.is_empty() {
            return next;
        }
        self.apply_profile_events_slow(next)
    }

    #[cold]
    fn apply_profile_events_slow(&mut self, next: Option<f64>) -> Option<f64> {
        let mut t = next?;
        let now = self.now;
        while let Some(nd) = self.next_profile_date() {
            if nd > now + (t - now) {
                break;
            }
            if self.apply_profiles_due(nd) {
                t = nd;
            }
        }
        Some(t)
    }

    /// The actors that have not ended, with what each waits on.
    fn unfinished_actors(&self) -> Vec<BlockedActor> {
        self.actors
            .iter()
            .enumerate()
            .filter(|(_, a)| a.state != ActorState::Done)
            .map(|(i, a)| BlockedActor {
                actor: ActorId(i as u32),
                name: self.actor_names[i].clone(),
                host: a.host,
                waiting_on: a
                    .waiting_one
                    .iter()
                    .chain(&a.waiting_on)
                    .map(|w| self.describe(*w))
                    .collect(),
            })
            .collect()
    }

    fn record(&mut self, what: impl FnOnce() -> String) {
        if let Some(t) = &mut self.trace {
            t.push(what());
        }
    }

    fn start_comm(&mut self, a: ActivityId, src: HostId, dst: HostId, size: f64, extra_latency: f64) {
        let route = self.route(src, dst);
        let lat_factor = self.cfg_net.factors.latency_factor(size);
        let bw_factor = self.cfg_net.factors.bandwidth_factor(size);
        let now = self.now;
        let lat_eff = if extra_latency == 0.0 {
            route.latency * lat_factor
        } else {
            // A negative delay shortens the latency phase, never below zero.
            (route.latency * lat_factor + extra_latency).max(0.0)
        };
        {
            let act = self.act_mut(a);
            assert_eq!(act.kind, ActKind::Comm, "comm_start on a non-comm activity");
            assert_eq!(act.state, ActState::Pending, "comm started twice");
            act.src = src;
            act.dst = dst;
            act.size = size;
            act.remains = size;
            act.start = now;
            act.last_update = now;
            act.rate_factor = bw_factor;
        }
        self.record(|| format!("{now:.9} comm-start #{} {}->{} {} B", a.0, src.0, dst.0, size));
        if self.links_off > 0 {
            let links = links_of(&self.route_links, route.links).to_vec();
            self.check_links_on(&links, src, dst);
        }
        if route.links.0 == route.links.1 || size <= 0.0 {
            // Nothing to share: only the latency is paid.
            self.act_mut(a).state = ActState::Latency;
            self.act_mut(a).remains = 0.0;
            self.schedule(a, now + lat_eff);
            return;
        }
        if let Some(stats) = &mut self.link_stats {
            for l in links_of(&self.route_links, route.links) {
                let i = l.0 as usize;
                stats.bytes[i] += size;
                stats.flows[i] += 1;
                stats.peak_flows[i] = stats.peak_flows[i].max(stats.flows[i]);
                if stats.flows[i] == 1 {
                    stats.busy.push(l.0);
                }
            }
        }
        let penalty = route.latency + self.cfg_net.weight_s * route.inv_bw_sum;
        let mut bound = route.min_bw;
        if self.cfg_net.tcp_gamma > 0.0 && route.latency > 0.0 {
            bound = bound.min(self.cfg_net.tcp_gamma / (2.0 * route.latency));
        }
        let initial_penalty = if lat_eff > 0.0 { 0.0 } else { 1.0 };
        let var = self.lmm.add_variable(initial_penalty, bound);
        for l in links_of(&self.route_links, route.links) {
            self.lmm.expand(self.link_cnst[l.0 as usize], var, 1.0);
        }
        for l in links_of(&self.route_links, route.back) {
            self.lmm.expand(self.link_cnst[l.0 as usize], var, 0.05);
        }
        self.set_owner(var, a);
        if let Some(sg) = &mut self.sg {
            // The way there then the way back: one range of `route_links`.
            let links = links_of(&self.route_links, (route.links.0, route.back.1))
                .iter()
                .map(|l| l.0);
            sg.flow_start(a.0, links, lat_eff <= 0.0);
        }
        let act = self.act_mut(a);
        act.var = Some(var);
        act.penalty = if penalty > 0.0 { penalty } else { 1.0 };
        act.lat_current = route.latency;
        act.user_bound = route.min_bw;
        if lat_eff > 0.0 {
            act.state = ActState::Latency;
            self.schedule(a, now + lat_eff);
        } else {
            act.state = ActState::Running;
        }
    }

    /// Adds `dt` to the saturated time of every link whose flows use all its
    /// bandwidth at the current rates (valid until the clock advances).
    fn account_link_saturation(&mut self, dt: f64) {
        let Some(mut stats) = self.link_stats.take() else {
            return;
        };
        let mut busy = std::mem::take(&mut stats.busy);
        busy.sort_unstable();
        busy.dedup();
        busy.retain(|&l| stats.flows[l as usize] > 0);
        for &l in &busy {
            let c = self.link_cnst[l as usize];
            let bound = self.lmm.constraint_bound(c);
            if bound > 0.0 && self.lmm.constraint_load(c) >= bound * (1.0 - 1e-6) {
                stats.saturated[l as usize] += dt;
            }
        }
        stats.busy = busy;
        self.link_stats = Some(stats);
    }

    fn set_owner(&mut self, var: VarId, a: ActivityId) {
        let i = var.0 as usize;
        if self.var_owner.len() <= i {
            self.var_owner.resize(i + 1, u32::MAX);
        }
        self.var_owner[i] = a.0;
    }

    fn start_exec(&mut self, a: ActivityId, host: HostId, flops: f64) {
        self.energy_update(host);
        let speed = self.host_speed(host);
        if speed <= 0.0 && self.failure.is_none() {
            self.failure = Some(self.zero_speed(host));
        }
        let now = self.now;
        let var = self.lmm.add_variable(1.0, speed);
        self.lmm.expand(self.host_cnst[host.0 as usize], var, 1.0);
        self.set_owner(var, a);
        let act = self.act_mut(a);
        act.src = host;
        act.size = flops;
        act.remains = flops;
        act.start = now;
        act.last_update = now;
        act.var = Some(var);
        act.state = ActState::Running;
        if let Some(sg) = &mut self.sg {
            // Even an empty computation is dated by the next solve, as in SimGrid.
            sg.exec_start(a.0, host.0);
            return;
        }
        if flops <= 0.0 {
            self.lmm.remove_variable(var);
            self.act_mut(a).var = None;
            self.act_mut(a).state = ActState::Latency;
            self.schedule(a, now);
        }
    }

    fn start_io(&mut self, a: ActivityId, disk: DiskId, size: f64, write: bool) {
        let now = self.now;
        let [read_c, write_c, rw_c] = self.disk_cnst[disk.0 as usize];
        let var = self.disk_lmm.add_variable(1.0, -1.0);
        self.disk_lmm.expand(rw_c, var, 1.0);
        self.disk_lmm
            .expand(if write { write_c } else { read_c }, var, 1.0);
        let host = self.platform.disk(disk).host;
        let act = self.act_mut(a);
        act.src = host;
        act.size = size;
        act.remains = size.max(0.0);
        act.start = now;
        act.last_update = now;
        act.var = Some(var);
        act.state = ActState::Running;
        act.rate = 0.0;
        act.finish = -1.0;
        self.ios.push(a.0);
        self.record(|| format!("{now:.9} io-start #{} disk {} {} B", a.0, disk.0, size));
    }

    /// SimGrid's full update of the disk model after the clock moved by `delta`: every running
    /// I/O loses `rint(rate · delta)` bytes; those with nothing left end (in start order).
    fn advance_ios(&mut self, delta: f64) {
        if self.ios.is_empty() {
            return;
        }
        let precision = self.disk_lmm.precision() * self.timing_precision;
        let mut ios = std::mem::take(&mut self.ios);
        let mut ended = Vec::new();
        ios.retain(|&i| {
            let act = &mut self.acts[i as usize];
            act.remains -= (act.rate * delta).round_ties_even();
            if act.remains < precision {
                act.remains = 0.0;
            }
            act.last_update = self.now;
            if act.remains <= 0.0 {
                ended.push(i);
                false
            } else {
                true
            }
        });
        self.ios = ios;
        for i in ended {
            self.finish_activity(ActivityId(i));
        }
    }

    /// Solves the disk system and dates every running I/O `remains / rate` from now.
    fn update_io_rates(&mut self) {
        if self.ios.is_empty() {
            return;
        }
        self.disk_lmm.solve_all();
        let now = self.now;
        for k in 0..self.ios.len() {
            let a = ActivityId(self.ios[k]);
            let var = self.act(a).var.expect("a running I/O has a variable");
            let rate = self.disk_lmm.value(var);
            let act = self.act_mut(a);
            act.rate = rate;
            if rate > 0.0 {
                let t = finish_date(now, act.remains, rate);
                if act.finish != t {
                    self.schedule(a, t);
                }
            } else {
                act.version = act.version.wrapping_add(1);
                act.finish = -1.0;
            }
        }
    }

    /// Tells the order tracker that an activity's variable is freed.
    fn sg_free(&mut self, a: ActivityId, var: VarId) {
        let Some(sg) = &mut self.sg else { return };
        let act = &self.acts[a.0 as usize];
        match act.kind {
            ActKind::Exec => sg.exec_free(a.0, act.src.0),
            ActKind::Comm => sg.flow_free(a.0, self.lmm.penalty(var) > 0.0),
            ActKind::Sleep | ActKind::Manual | ActKind::Io => {}
        }
    }

    /// Tells the order tracker that a sleep ends or is cancelled.
    fn sg_sleep_free(&mut self, a: ActivityId) {
        if let Some(sg) = &mut self.sg {
            let act = &self.acts[a.0 as usize];
            if act.kind == ActKind::Sleep && act.state != ActState::Done {
                sg.sleep_free(act.src.0);
            }
        }
    }

    /// SimGrid order: solves, then re-dates every action of each model's modified set in
    /// that set's order (CPU, then network), as SimGrid's lazy update does.
    fn update_rates_sg(&mut self) {
        if !self.sg.as_ref().is_some_and(|sg| sg.pending()) {
            return;
        }
        let mut order = std::mem::take(&mut self.sg_order);
        order.clear();
        {
            let sg = self.sg.as_mut().expect("simgrid order");
            sg.cpu_order(&mut order);
            sg.net_order(&mut order);
        }
        // Re-solve exactly SimGrid's modified constraints, in its order; the variables this
        // re-solves are exactly those just listed (the enabled ones on those constraints), so
        // with none (a message starting on idle links, say) the solve would change nothing;
        // likewise constraints without any are left out.
        if !order.is_empty() {
            let sg = self.sg.as_ref().expect("simgrid order");
            let mut listed = std::mem::take(&mut self.sg_listed);
            listed.clear();
            listed.extend(sg.modified_busy_hosts().map(|h| self.host_cnst[h as usize]));
            listed.extend(sg.modified_busy_links().map(|l| self.link_cnst[l as usize]));
            // Most solves at scale are one computation alone on its CPU (a polling cost):
            // its rate needs no saturation loop.
            if !self.lmm.solve_lone(&listed) {
                self.lmm.solve_listed(listed.iter().copied());
            }
            self.sg_listed = listed;
        }
        for &a in &order {
            let act = &self.acts[a as usize];
            if !act.live || act.state == ActState::Done {
                continue;
            }
            if act.kind == ActKind::Sleep {
                let due = act.due;
                self.schedule(ActivityId(a), due);
                continue;
            }
            if act.state != ActState::Running {
                continue; // a flow in its latency phase keeps its latency event
            }
            let value = act.var.map_or(0.0, |v| self.lmm.value(v));
            self.redate(ActivityId(a), value);
        }
        self.sg.as_mut().expect("simgrid order").next_period();
        self.sg_order = order;
    }

    /// SimGrid's `update_remains_lazy` followed by the new completion date.
    fn redate(&mut self, a: ActivityId, value: f64) {
        let now = self.now;
        let precision = self.lmm.precision() * self.timing_precision;
        let act = &mut self.acts[a.0 as usize];
        if act.remains > 0.0 {
            act.remains -= act.rate * (now - act.last_update);
            if act.remains < precision {
                act.remains = 0.0;
            }
        }
        act.last_update = now;
        let rate = value * act.rate_factor;
        act.rate = rate;
        if rate > 0.0 {
            let t = finish_date(now, act.remains, rate);
            if act.finish == t {
                // Same date: its heap entry stays valid, only the tie-break stamp is renewed
                // (the batch of due events is sorted by stamp).
                self.seq += 1;
                act.stamp = self.seq;
            } else {
                self.schedule(a, t);
            }
        } else {
            act.version = act.version.wrapping_add(1);
            act.finish = -1.0;
        }
    }

    /// Solves the modified part of the max-min system and re-predicts the
    /// completion date of every activity whose rate may have changed.
    fn update_rates(&mut self) {
        self.update_io_rates();
        if self.sg.is_some() {
            return self.update_rates_sg();
        }
        if !self.lmm.needs_solve() {
            return;
        }
        let now = self.now;
        let mut vars = std::mem::take(&mut self.solved);
        vars.clear();
        vars.extend_from_slice(self.lmm.solve());
        for &v in &vars {
            let a = self.var_owner[v as usize];
            let value = self.lmm.value(VarId(v));
            let act = &mut self.acts[a as usize];
            if act.state != ActState::Running {
                continue;
            }
            act.remains = (act.remains - act.rate * (now - act.last_update)).max(0.0);
            act.last_update = now;
            let rate = value * act.rate_factor;
            if rate == act.rate && act.finish >= 0.0 {
                continue;
            }
            act.rate = rate;
            if rate > 0.0 {
                let t = now + act.remains / rate;
                self.schedule(ActivityId(a), t);
            } else {
                act.version = act.version.wrapping_add(1);
                act.finish = -1.0;
            }
        }
        self.solved = vars;
    }

    /// Pops the next valid heap entry, returns its date.
    fn next_event_time(&mut self) -> Option<f64> {
        while let Some(top) = self.heap.peek() {
            let act = &self.acts[top.act as usize];
            if act.live && act.version == top.version && act.state != ActState::Done {
                return Some(top.time());
            }
            self.heap.pop();
        }
        None
    }

    /// Processes every event dated `t` (the clock is already at `t`).
    fn process_events(&mut self, t: f64) {
        if self.sg.is_some() {
            // SimGrid: each model pops its due actions in (date, stamp) order, the CPU
            // model's before the network model's.
            let mut batch = std::mem::take(&mut self.sg_batch);
            batch.clear();
            while let Some(top) = self.heap.peek() {
                // SimGrid's test, to the bit (`double_equals`): |date - now| < precision, so
                // an event exactly one precision later waits for the next date. (`<=` made
                // some actors wake 1 ns early: 16x16 HPL drifted by 0.2 %.)
                if (top.time() - t).abs() >= self.timing_precision {
                    break;
                }
                let e = self.heap.pop().expect("peeked");
                let act = &self.acts[e.act as usize];
                if !act.live
                    || act.version != e.version
                    || act.state == ActState::Done
                    || act.kind == ActKind::Io
                {
                    continue;
                }
                batch.push((act.kind == ActKind::Comm, act.stamp, e));
            }
            // Popped in (date, sequence) order, a batch is most often in this order already.
            let order = |x: &(bool, u64, HeapEntry), y: &(bool, u64, HeapEntry)| {
                x.0.cmp(&y.0).then(x.2.key.cmp(&y.2.key)).then(x.1.cmp(&y.1))
            };
            if !batch.is_sorted_by(|x, y| order(x, y).is_le()) {
                batch.sort_by(order);
            }
            // SimGrid pops the due actions of each model first, enabling the flows whose
            // latency is paid as it goes, and only then hands the finished ones to their
            // activities, which free their variables (touching constraints): all of this
            // date's enables come before its frees.
            let mut finished = std::mem::take(&mut self.sg_finished);
            finished.clear();
            for (_, _, e) in batch.drain(..) {
                let act = &self.acts[e.act as usize];
                if act.kind == ActKind::Comm && act.state == ActState::Latency && act.var.is_some() {
                    self.process_event(e);
                } else {
                    finished.push(e);
                }
            }
            for e in finished.drain(..) {
                self.process_event(e);
            }
            self.sg_batch = batch;
            self.sg_finished = finished;
            return;
        }
        let horizon = t + self.timing_precision;
        while let Some(top) = self.heap.peek() {
            if top.time() > horizon {
                break;
            }
            let e = self.heap.pop().expect("peeked");
            self.process_event(e);
        }
    }

    fn process_event(&mut self, e: HeapEntry) {
        let t = self.now;
        {
            let a = ActivityId(e.act);
            let act = &self.acts[e.act as usize];
            if !act.live || act.version != e.version || act.state == ActState::Done || act.kind == ActKind::Io
            {
                return;
            }
            self.events += 1;
            match (act.kind, act.state) {
                (ActKind::Comm, ActState::Latency) if act.var.is_some() => {
                    let var = act.var.expect("checked");
                    let (penalty, early) = (act.penalty, act.early);
                    if !early {
                        self.lmm.set_penalty(var, penalty);
                    }
                    let act = self.act_mut(a);
                    act.state = ActState::Running;
                    act.last_update = t;
                    act.rate = 0.0;
                    act.finish = -1.0;
                    if let Some(sg) = &mut self.sg {
                        if !early {
                            sg.flow_enable(a.0);
                        }
                    }
                    self.record(|| format!("{t:.9} comm-latency-end #{}", a.0));
                }
                _ => self.finish_activity(a),
            }
        }
    }

    fn finish_activity(&mut self, a: ActivityId) {
        let act = &self.acts[a.0 as usize];
        if matches!(act.kind, ActKind::Exec | ActKind::Sleep) {
            self.energy_update(act.src);
        }
        self.sg_sleep_free(a);
        let now = self.now;
        let act = self.act_mut(a);
        act.state = ActState::Done;
        act.remains = 0.0;
        act.finish = now;
        let kind = act.kind;
        let user = act.user;
        if let Some(var) = act.var.take() {
            if kind == ActKind::Io {
                self.disk_lmm.remove_variable(var);
            } else {
                self.sg_free(a, var);
                self.lmm.remove_variable(var);
            }
        }
        self.record(|| format!("{now:.9} done #{} {:?}", a.0, kind));
        if kind == ActKind::Comm && self.link_stats.is_some() {
            let act = self.act(a);
            let (src, dst, size) = (act.src, act.dst, act.size);
            if size > 0.0 {
                let route = self.route(src, dst);
                if let Some(stats) = &mut self.link_stats {
                    for l in links_of(&self.route_links, route.links) {
                        stats.flows[l.0 as usize] -= 1;
                    }
                }
            }
        }
        if kind == ActKind::Comm {
            self.completed.push((a, user));
        }
        self.wake_waiters(a);
    }

    fn wake_waiters(&mut self, a: ActivityId) {
        // The list is cleared in place: its buffer stays with the slot for the next
        // activity there (no allocation per wait).
        let Kernel {
            acts, actors, ready, ..
        } = self;
        let act = &mut acts[a.0 as usize];
        let first = act.first_waiter.take();
        for &(actor, epoch) in first.iter().chain(&act.waiters) {
            let slot = &mut actors[actor.0 as usize];
            if slot.state == ActorState::Blocked && slot.wait_epoch == epoch {
                slot.state = ActorState::Ready;
                slot.wait_epoch += 1;
                slot.woken_by = Some(a);
                slot.waiting_one = None;
                slot.waiting_on.clear();
                ready.push_back(actor);
            }
        }
        act.waiters.clear();
    }

    fn describe(&self, a: ActivityId) -> String {
        let act = &self.acts[a.0 as usize];
        let p = &self.platform;
        match act.kind {
            ActKind::Comm if act.state == ActState::Pending => {
                format!("communication #{} (not matched yet)", a.0)
            }
            ActKind::Comm => format!(
                "communication #{} {} -> {} ({} B)",
                a.0,
                p.host(act.src).name,
                p.host(act.dst).name,
                act.size
            ),
            ActKind::Exec => format!("computation #{}", a.0),
            ActKind::Sleep => format!("sleep #{}", a.0),
            ActKind::Manual => format!("event #{}", a.0),
            ActKind::Io => format!("disk I/O #{} on {} ({} B)", a.0, p.host(act.src).name, act.size),
        }
    }
}

impl Kernel {
    /// The host energy plugin's update of `host` (nothing when the plugin is off): the ONE
    /// entry point for whatever changes what a host dissipates. Called just before a
    /// computation starts on the host and when a computation or sleep on it ends (before its
    /// variable leaves the system); call it too right after the host's speed, pstate or on/off
    /// state changed, before the max-min system is re-solved. The interval that ends is counted
    /// at the load of the last solve and at the pstate recorded when it began; the pstate (or
    /// off) of the next one is read from the [`energy::Hosts`] view below.
    fn energy_update(&mut self, host: HostId) {
        if let Some(mut meter) = self.energy.take() {
            meter.update(host, self.now, &*self);
            self.energy = Some(meter);
        }
    }
}

/// The kernel's hosts as the energy plugin sees them: the ONE place that tells it a host's
/// pstate, pstate speeds and state (kept by `set_host_pstate` and `set_host_on`, which tell the
/// plugin of every change through [`Kernel::energy_update`]).
impl energy::Hosts for Kernel {
    fn state(&self, host: HostId) -> energy::HostState {
        let i = host.0 as usize;
        energy::HostState {
            on: self.host_on[i],
            pstate: self.host_pstate[i],
            cores: self.platform.host(host).cores,
            load: self.lmm.constraint_load(self.host_cnst[i]),
        }
    }

    fn pstate_speed(&self, host: HostId, pstate: usize) -> f64 {
        let h = self.platform.host(host);
        h.pstate_speeds.get(pstate).copied().unwrap_or(h.speed)
    }

    fn pstate_count(&self, host: HostId) -> Option<usize> {
        Some(self.platform.host(host).pstate_speeds.len())
    }
}

type ActorBody = Box<dyn FnOnce(&Ctx) -> Result<(), String>>;

/// A lone actor's yields go back to the kernel once in this many (see [`Ctx::yield_now`]).
const LONE_YIELD_ROUNDS: u32 = 4096;
type ActorCoroutine = Coroutine<(), (), Result<(), String>, DefaultStack>;

/// Handle given to an actor's body: the actor-side operations.
pub struct Ctx {
    k: Rc<RefCell<Kernel>>,
    me: ActorId,
    yielder: Cell<*const Yielder<(), ()>>,
}

impl Ctx {
    /// This actor's id.
    #[inline]
    pub fn id(&self) -> ActorId {
        self.me
    }

    /// Current simulated time, seconds.
    #[inline]
    pub fn now(&self) -> f64 {
        self.k.borrow().now
    }

    /// The host this actor runs on.
    #[inline]
    pub fn host(&self) -> HostId {
        self.k.borrow().actors[self.me.0 as usize].host
    }

    /// The platform.
    pub fn platform(&self) -> Rc<Platform> {
        self.k.borrow().platform.clone()
    }

    /// Computes `flops` of the program's own work on this actor's host,
    /// blocking, and counts the time as the actor's computation
    /// ([`Simulation::compute_times`]); [`Ctx::execute`] is for costs of the
    /// runtime itself.
    pub fn compute(&self, flops: f64) {
        let start = self.now();
        self.execute(flops);
        let mut k = self.k.borrow_mut();
        let now = k.now;
        let i = self.me.0 as usize;
        if k.compute_time.len() <= i {
            k.compute_time.resize(i + 1, 0.0);
        }
        k.compute_time[i] += now - start;
    }

    /// Computes `flops` on this actor's host, blocking.
    pub fn execute(&self, flops: f64) {
        let a = self.exec_async(flops);
        self.wait(a);
        self.release(a);
    }

    /// Sleeps `seconds` of simulated time.
    pub fn sleep(&self, seconds: f64) {
        let a = self.sleep_async(seconds);
        self.wait(a);
        self.release(a);
    }

    /// Starts a computation of `flops` on this actor's host.
    pub fn exec_async(&self, flops: f64) -> ActivityId {
        let mut k = self.k.borrow_mut();
        let host = k.actors[self.me.0 as usize].host;
        let a = k.alloc_act(Activity::new(ActKind::Exec, 0));
        k.start_exec(a, host, flops);
        a
    }

    /// Starts a sleep of `seconds`.
    pub fn sleep_async(&self, seconds: f64) -> ActivityId {
        let mut k = self.k.borrow_mut();
        let a = k.alloc_act(Activity::new(ActKind::Sleep, 0));
        let now = k.now;
        k.act_mut(a).state = ActState::Latency;
        k.act_mut(a).start = now;
        let host = k.actors[self.me.0 as usize].host;
        k.act_mut(a).src = host;
        if k.sg.is_some() {
            // SimGrid sleeps at least its timing precision and is dated at the next solve.
            let seconds = if seconds > 0.0 {
                seconds.max(k.timing_precision)
            } else {
                0.0
            };
            k.act_mut(a).due = now + seconds;
            k.sg.as_mut().expect("checked").sleep_start(a.0, host.0);
        } else {
            k.schedule(a, now + seconds.max(0.0));
        }
        a
    }

    /// Creates a communication that does not start until [`Ctx::comm_start`]
    /// (e.g. until its receiver is posted). `user` is returned by the
    /// completion hook (see [`Simulation::on_comm_done`]).
    pub fn comm_create(&self, user: u64) -> ActivityId {
        self.k.borrow_mut().alloc_act(Activity::new(ActKind::Comm, user))
    }

    /// Starts a communication created by [`Ctx::comm_create`]: `size` bytes from
    /// `src` to `dst`.
    pub fn comm_start(&self, a: ActivityId, src: HostId, dst: HostId, size: f64) {
        self.k.borrow_mut().start_comm(a, src, dst, size, 0.0);
    }

    /// [`Ctx::comm_start`] with `extra_latency` seconds added to the latency
    /// phase (a temporal noise draw; negative shortens it, down to zero).
    pub fn comm_start_delayed(&self, a: ActivityId, src: HostId, dst: HostId, size: f64, extra_latency: f64) {
        self.k.borrow_mut().start_comm(a, src, dst, size, extra_latency);
    }

    /// Creates and starts a communication.
    pub fn comm_async(&self, src: HostId, dst: HostId, size: f64, user: u64) -> ActivityId {
        let a = self.comm_create(user);
        self.comm_start(a, src, dst, size);
        a
    }

    /// Sets the user tag of an activity (returned by the completion hook).
    #[inline]
    pub fn set_user(&self, a: ActivityId, user: u64) {
        self.k.borrow_mut().act_mut(a).user = user;
    }

    /// Starts a read (or, with `write`, a write) of `size` bytes on `disk`.
    pub fn io_async(&self, disk: DiskId, size: f64, write: bool) -> ActivityId {
        let mut k = self.k.borrow_mut();
        let a = k.alloc_act(Activity::new(ActKind::Io, 0));
        k.start_io(a, disk, size, write);
        a
    }

    /// Reads (or, with `write`, writes) `size` bytes on `disk`, blocking.
    pub fn io(&self, disk: DiskId, size: f64, write: bool) {
        let a = self.io_async(disk, size, write);
        self.wait(a);
        self.release(a);
    }

    /// Creates a manual activity, completed by [`Ctx::complete`].
    pub fn manual_create(&self) -> ActivityId {
        self.k.borrow_mut().alloc_act(Activity::new(ActKind::Manual, 0))
    }

    /// Completes a manual activity now, waking its waiters.
    pub fn complete(&self, a: ActivityId) {
        let mut k = self.k.borrow_mut();
        if k.act(a).state != ActState::Done {
            k.finish_activity(a);
        }
    }

    /// Whether an activity is finished (does not block).
    #[inline]
    pub fn test(&self, a: ActivityId) -> bool {
        self.k.borrow().act(a).state == ActState::Done
    }

    /// Whether a communication has been started.
    #[inline]
    pub fn is_started(&self, a: ActivityId) -> bool {
        self.k.borrow().act(a).state != ActState::Pending
    }

    /// Adds a reference: the activity is reused only after one more [`Ctx::release`].
    #[inline]
    pub fn retain(&self, a: ActivityId) {
        self.k.borrow_mut().act_mut(a).refs += 1;
    }

    /// Drops a reference; at zero the activity is cancelled if still running and its id reused.
    pub fn release(&self, a: ActivityId) {
        release_activity(&mut self.k.borrow_mut(), a);
    }

    /// Blocks until `a` is finished. Inlined: one frame less on a blocked actor's stack.
    #[inline]
    pub fn wait(&self, a: ActivityId) {
        {
            let mut k = self.k.borrow_mut();
            if k.act(a).state == ActState::Done {
                return;
            }
            let slot = &mut k.actors[self.me.0 as usize];
            slot.state = ActorState::Blocked;
            let epoch = slot.wait_epoch;
            slot.waiting_one = Some(a);
            slot.waiting_on.clear();
            k.act_mut(a).add_waiter((self.me, epoch));
            k.resume_sp[self.me.0 as usize] = stack_pointer();
        }
        self.suspend();
    }

    /// Blocks until one of `acts` is finished; returns its index in `acts`
    /// (the first finished one in slice order if several already are).
    pub fn wait_any(&self, acts: &[ActivityId]) -> usize {
        {
            let mut k = self.k.borrow_mut();
            if let Some(i) = acts.iter().position(|a| k.act(*a).state == ActState::Done) {
                return i;
            }
            let slot = &mut k.actors[self.me.0 as usize];
            slot.state = ActorState::Blocked;
            let epoch = slot.wait_epoch;
            slot.waiting_one = None;
            slot.waiting_on.clear();
            slot.waiting_on.extend_from_slice(acts);
            for a in acts {
                k.act_mut(*a).add_waiter((self.me, epoch));
            }
            k.resume_sp[self.me.0 as usize] = stack_pointer();
        }
        self.suspend();
        let k = self.k.borrow();
        let woken = k.actors[self.me.0 as usize].woken_by;
        acts.iter()
            .position(|a| Some(*a) == woken)
            .or_else(|| acts.iter().position(|a| k.act(*a).state == ActState::Done))
            .expect("woken without a finished activity")
    }

    /// Date at which an activity started (comm: when matched).
    pub fn start_time(&self, a: ActivityId) -> f64 {
        self.k.borrow().act(a).start
    }

    /// Lets every other actor that is ready at this date run first: the
    /// actor goes to the back of the run queue (SimGrid's scheduling round
    /// after a simcall). Simulated time does not advance.
    ///
    /// With no other actor ready, the round would resume this one at once: it goes on
    /// without switching to the kernel and back, except once in `LONE_YIELD_ROUNDS` (the
    /// run loop then looks at its stop flag, so a rank polling alone forever can be stopped)
    /// or when the kernel failed it meanwhile (it ends at this yield).
    #[inline]
    pub fn yield_now(&self) {
        {
            let mut k = self.k.borrow_mut();
            if k.ready.is_empty() && k.actors[self.me.0 as usize].exited.is_none() {
                k.lone_yields = k.lone_yields.wrapping_add(1);
                if !k.lone_yields.is_multiple_of(LONE_YIELD_ROUNDS) {
                    return;
                }
            }
            k.ready.push_back(self.me);
            k.resume_sp[self.me.0 as usize] = stack_pointer();
        }
        self.suspend();
    }

    /// Ends this actor now, from any call depth (e.g. C `exit()` or
    /// `MPI_Abort`), without unwinding its stack. `Err` ends the whole run.
    pub fn exit(&self, result: Result<(), String>) -> ! {
        {
            let mut k = self.k.borrow_mut();
            let slot = &mut k.actors[self.me.0 as usize];
            slot.exited = Some(Box::new(result));
            slot.state = ActorState::Done;
        }
        self.suspend();
        unreachable!("an exited actor was resumed");
    }

    #[inline]
    fn suspend(&self) {
        assert!(
            !ON_SCRATCH.with(Cell::get),
            "an actor blocked on the scratch stack (code run by on_scratch_stack must not block)"
        );
        let y = self.yielder.get();
        // Safety: the pointer is set by the coroutine body before the user body
        // runs and stays valid for the coroutine's whole life.
        unsafe { (*y).suspend(()) };
    }
}

/// This thread's stack pointer, about (the address of a local on x86-64's and other targets).
#[inline(always)]
fn stack_pointer() -> usize {
    let marker = 0u8;
    std::ptr::addr_of!(marker) as usize
}

/// How much of a blocked actor's stack [`prefetch_stack`] fetches: below the recorded stack
/// pointer (the switch's own frames) and above it (the frames the actor returns through to
/// the program, and those of its next MPI call). 20 lines: the best of 5 to 48 tried on the
/// 1,024-rank ring (fewer leave frames cold, more stall the run loop on the prefetches).
const PREFETCH_BELOW: usize = 256;
const PREFETCH_ABOVE: usize = 1024;

/// Starts loading the stack top of the actor that runs next, while the current one runs:
/// with thousands of actors each stack is cold by its turn, and the switch to it, then each
/// frame it returns through, would wait for memory (about 15 % of the 1,024-rank ring's
/// time went to first touches of stacks; with this, its wall time drops by about a quarter).
/// A prefetch never faults, so a stale or zero address only wastes it.
#[inline(always)]
fn prefetch_stack(sp: usize) {
    if sp > PREFETCH_BELOW {
        let mut line = (sp - PREFETCH_BELOW) & !63;
        while line < sp + PREFETCH_ABOVE {
            prefetch_line(line);
            line += 64;
        }
    }
}

/// Starts loading the cache line at `addr` (0: nothing). Never faults.
#[inline(always)]
fn prefetch_line(addr: usize) {
    #[cfg(target_arch = "x86_64")]
    if addr != 0 {
        // Safety: prefetching is a hint; it reads nothing and faults on no address.
        unsafe { std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(addr as *const i8) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = addr;
}

/// How many lines of its own data an actor may have prefetched with its stack
/// ([`Simulation::set_hot_lines`]).
pub const HOT_LINES: usize = 6;

/// Size of the guard page of a stack made by corosensei's `DefaultStack`: the lowest page of
/// its mapping, at `limit()` (the scratch stack's and every actor's).
const GUARD_PAGE: usize = 4096;

/// Size of the thread's scratch stack ([`on_scratch_stack`]): as large as an actor's
/// default stack; only the pages used are ever touched.
const SCRATCH_STACK_SIZE: usize = 8 << 20;

/// The thread's scratch stack, owned by a thread local; its address is in [`SCRATCH_AT`].
struct ScratchStack(RefCell<Option<DefaultStack>>);

impl Drop for ScratchStack {
    fn drop(&mut self) {
        // From here on the stack is going: later calls run where they are.
        SCRATCH_AT.with(|at| at.set(std::ptr::null_mut()));
    }
}

thread_local! {
    static SCRATCH: ScratchStack = const { ScratchStack(RefCell::new(None)) };
    /// The scratch stack, once made (null before, and once the thread ends). A constant
    /// initializer and no destructor: reading it is a plain thread-local load.
    static SCRATCH_AT: Cell<*mut DefaultStack> = const { Cell::new(std::ptr::null_mut()) };
    /// Code is running on the scratch stack now.
    static ON_SCRATCH: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f` on the thread's scratch stack: one stack shared by every caller, so the deep
/// calls of a step that never blocks (matching a message, starting a transfer, the LMM
/// update) use memory the previous caller just used, still in the caches, instead of
/// the running actor's own stack. With thousands of actors, each one's stack is out of
/// the caches by the time it runs again, and every line of it a step touches is a miss.
///
/// `f` must not block (an actor suspended in it would leave its frames on the stack the
/// next caller uses): [`Ctx::suspend`] panics if it does. A call from `f` runs in place.
/// A panic in `f` goes on unwinding in the caller.
#[inline]
pub fn on_scratch_stack<R>(f: impl FnOnce() -> R) -> R {
    let at = SCRATCH_AT.with(Cell::get);
    if at.is_null() || ON_SCRATCH.with(Cell::get) {
        return on_new_scratch_stack(f);
    }
    /// Clears the flag on return and on unwinding alike.
    struct Leave;
    impl Drop for Leave {
        fn drop(&mut self) {
            ON_SCRATCH.with(|on| on.set(false));
        }
    }
    ON_SCRATCH.with(|on| on.set(true));
    let _leave = Leave;
    // Safety: `at` points to the scratch stack, alive until the thread's locals are
    // destroyed (then `at` is null), and used by no one else now: `ON_SCRATCH` was false
    // and nothing running on it can block.
    corosensei::on_stack(unsafe { &mut *at }, f)
}

/// [`on_scratch_stack`] when there is no scratch stack yet (it is made, unless the thread
/// is ending or the mapping fails: then `f` runs in place) or `f` is called from code
/// already on it (it runs in place).
#[cold]
#[inline(never)]
fn on_new_scratch_stack<R>(f: impl FnOnce() -> R) -> R {
    if ON_SCRATCH.with(Cell::get) {
        return f();
    }
    let made = SCRATCH.try_with(|s| {
        let mut slot = s.0.borrow_mut();
        if slot.is_none() {
            *slot = DefaultStack::new(SCRATCH_STACK_SIZE).ok();
            if let Some(stack) = slot.as_ref() {
                let limit = stack.limit().get();
                crash::register_scratch_stack(limit, limit + GUARD_PAGE, SCRATCH_STACK_SIZE);
            }
        }
        if let Some(stack) = slot.as_mut() {
            SCRATCH_AT.with(|at| at.set(stack));
        }
    });
    if made.is_ok() && !SCRATCH_AT.with(Cell::get).is_null() {
        on_scratch_stack(f)
    } else {
        f()
    }
}

fn release_activity(k: &mut Kernel, a: ActivityId) {
    let act = &mut k.acts[a.0 as usize];
    debug_assert!(act.live && act.refs > 0);
    act.refs -= 1;
    if act.refs > 0 {
        return;
    }
    k.sg_sleep_free(a);
    let act = &mut k.acts[a.0 as usize];
    act.live = false;
    act.first_waiter = None;
    act.waiters.clear();
    let kind = act.kind;
    if let Some(var) = act.var.take() {
        if kind == ActKind::Io {
            // Cancelled while running.
            k.disk_lmm.remove_variable(var);
            k.ios.retain(|&i| i != a.0);
        } else {
            k.sg_free(a, var);
            k.lmm.remove_variable(var);
        }
    }
    k.free_acts.push(a.0);
}

/// A handle on the kernel for operations that need no running actor
/// (creating, starting, testing and releasing activities), usable from
/// completion hooks and after the actor that created an activity has ended.
#[derive(Clone)]
pub struct KernelHandle {
    k: Rc<RefCell<Kernel>>,
}

impl KernelHandle {
    /// Current simulated time.
    #[inline]
    pub fn now(&self) -> f64 {
        self.k.borrow().now
    }

    /// See [`Ctx::comm_create`].
    pub fn comm_create(&self, user: u64) -> ActivityId {
        self.k.borrow_mut().alloc_act(Activity::new(ActKind::Comm, user))
    }

    /// See [`Ctx::comm_start`].
    pub fn comm_start(&self, a: ActivityId, src: HostId, dst: HostId, size: f64) {
        self.k.borrow_mut().start_comm(a, src, dst, size, 0.0);
    }

    /// See [`Ctx::comm_start_delayed`].
    pub fn comm_start_delayed(&self, a: ActivityId, src: HostId, dst: HostId, size: f64, extra_latency: f64) {
        self.k.borrow_mut().start_comm(a, src, dst, size, extra_latency);
    }

    /// See [`Ctx::set_user`].
    #[inline]
    pub fn set_user(&self, a: ActivityId, user: u64) {
        self.k.borrow_mut().act_mut(a).user = user;
    }

    /// See [`Ctx::test`].
    #[inline]
    pub fn test(&self, a: ActivityId) -> bool {
        self.k.borrow().act(a).state == ActState::Done
    }

    /// See [`Ctx::is_started`].
    #[inline]
    pub fn is_started(&self, a: ActivityId) -> bool {
        self.k.borrow().act(a).state != ActState::Pending
    }

    /// See [`Ctx::retain`].
    #[inline]
    pub fn retain(&self, a: ActivityId) {
        self.k.borrow_mut().act_mut(a).refs += 1;
    }

    /// See [`Ctx::release`].
    pub fn release(&self, a: ActivityId) {
        release_activity(&mut self.k.borrow_mut(), a);
    }

    /// See [`Ctx::complete`].
    pub fn complete(&self, a: ActivityId) {
        let mut k = self.k.borrow_mut();
        if k.act(a).state != ActState::Done {
            k.finish_activity(a);
        }
    }

    /// Turns the host energy plugin on now (nothing if it is on): SimGrid's warnings, or the
    /// first malformed power property.
    pub fn enable_host_energy(&self) -> Result<Vec<String>, energy::PropertyError> {
        let mut k = self.k.borrow_mut();
        if k.energy.is_some() {
            return Ok(Vec::new());
        }
        let platform = k.platform.clone();
        let (meter, warnings) = energy::Meter::new(&platform.hosts, k.now, &*k)?;
        k.energy = Some(Box::new(meter));
        Ok(warnings)
    }

    /// `f` on the host energy plugin at the current date; `None` when the plugin is off.
    pub fn energy<R>(&self, f: impl FnOnce(&mut energy::Access<'_>) -> R) -> Option<R> {
        let mut k = self.k.borrow_mut();
        let mut meter = k.energy.take()?;
        let r = f(&mut energy::Access::new(&mut meter, k.now, &*k));
        k.energy = Some(meter);
        Some(r)
    }

    /// The peak speed of one core of `h` in its current pstate, flop/s (SimGrid's
    /// `Host::get_speed`: a speed profile's scale is not included).
    pub fn host_peak_speed(&self, h: HostId) -> f64 {
        self.k.borrow().host_peak[h.0 as usize]
    }

    /// The scale a speed profile applies to `h` now (SimGrid's `Host::get_available_speed`; 1
    /// without a profile).
    pub fn host_speed_scale(&self, h: HostId) -> f64 {
        self.k.borrow().host_scale[h.0 as usize]
    }

    /// The pstate `h` runs in.
    pub fn host_pstate(&self, h: HostId) -> usize {
        self.k.borrow().host_pstate[h.0 as usize]
    }

    /// Switches `h` to pstate `pstate`: its computations are re-rated from now on (SimGrid's
    /// `Host::set_pstate`). `Err` names the pstates the host has.
    pub fn set_host_pstate(&self, h: HostId, pstate: usize) -> Result<(), String> {
        self.k.borrow_mut().set_host_pstate(h, pstate)
    }

    /// Whether `h` is on (its state profile may turn it off).
    pub fn host_is_on(&self, h: HostId) -> bool {
        self.k.borrow().host_on[h.0 as usize]
    }
}

/// Statistics of a finished run.
#[derive(Debug, Clone)]
pub struct RunSummary {
    /// Simulated time at the end.
    pub time: f64,
    /// Date at which each actor finished, by actor id.
    pub finish_times: Vec<f64>,
    /// Number of processed events.
    pub events: u64,
}

type CommDoneHook = Box<dyn FnMut(ActivityId, u64)>;

/// A simulation: a platform, actors and the kernel that runs them.
pub struct Simulation {
    k: Rc<RefCell<Kernel>>,
    stack_size: usize,
    coroutines: Vec<Option<ActorCoroutine>>,
    bodies: Vec<Option<ActorBody>>,
    finish_times: Vec<f64>,
    /// Each actor's `errno` while another runs: actors share one thread, and a
    /// C program expects its own (saved and restored at each switch).
    errnos: Vec<libc::c_int>,
    on_comm_done: Option<CommDoneHook>,
    progress: Option<Box<dyn FnMut(f64)>>,
    /// The kernel's list of completed communications is swapped with this one at each date.
    completed_buf: Vec<(ActivityId, u64)>,
    /// Set from outside (a signal, a time limit): the run stops at the next
    /// scheduling round.
    stop: Option<&'static std::sync::atomic::AtomicBool>,
}

impl Simulation {
    /// A simulation on `platform`.
    pub fn new(platform: Rc<Platform>, config: KernelConfig) -> Self {
        let mut lmm = lmm::System::new(config.work_precision);
        // In SimGrid's order the engine lists the constraints to re-solve itself.
        lmm.set_caller_lists(config.simgrid_order);
        let (platform_hosts, platform_links) = (platform.hosts.len(), platform.links.len());
        let link_cnst = platform
            .links
            .iter()
            .map(|l| {
                let sharing = match l.sharing {
                    SharingPolicy::Shared => Sharing::Shared,
                    SharingPolicy::FatPipe => Sharing::FatPipe,
                };
                lmm.add_constraint(l.bandwidth, sharing)
            })
            .collect();
        let host_cnst = platform
            .hosts
            .iter()
            .map(|h| lmm.add_constraint(h.speed * h.cores.max(1) as f64, Sharing::Shared))
            .collect();
        // SimGrid's disk model: its own system; a disk's read-write constraint is bounded by
        // the larger of its two bandwidths.
        let mut disk_lmm = lmm::System::new(config.work_precision);
        let disk_cnst = platform
            .disks
            .iter()
            .map(|d| {
                [
                    disk_lmm.add_constraint(d.read_bw, Sharing::Shared),
                    disk_lmm.add_constraint(d.write_bw, Sharing::Shared),
                    disk_lmm.add_constraint(d.read_bw.max(d.write_bw), Sharing::Shared),
                ]
            })
            .collect();
        let platform_ref = platform.clone();
        let k = Kernel {
            now: 0.0,
            platform,
            cfg_net: config.network,
            lmm,
            link_cnst,
            host_cnst,
            acts: Vec::new(),
            free_acts: Vec::new(),
            var_owner: Vec::new(),
            actors: Vec::new(),
            actor_names: Vec::new(),
            ready: VecDeque::new(),
            heap: BinaryHeap::new(),
            seq: 0,
            routes: HashMap::default(),
            route_links: Vec::new(),
            solved: Vec::new(),
            completed: Vec::new(),
            current: None,
            trace: if config.trace { Some(Vec::new()) } else { None },
            link_stats: None,
            compute_time: Vec::new(),
            events: 0,
            timing_precision: config.timing_precision,
            sg: config
                .simgrid_order
                .then(|| SgOrder::new(platform_hosts, platform_links)),
            sg_order: Vec::new(),
            sg_listed: Vec::new(),
            sg_batch: Vec::new(),
            sg_finished: Vec::new(),
            disk_lmm,
            disk_cnst,
            ios: Vec::new(),
            energy: None,
            host_peak: platform_ref.hosts.iter().map(|h| h.speed).collect(),
            host_scale: vec![1.0; platform_hosts],
            host_pstate: platform_ref.hosts.iter().map(|h| h.pstate).collect(),
            host_on: vec![true; platform_hosts],
            link_bw: platform_ref.links.iter().map(|l| l.bandwidth).collect(),
            link_lat: platform_ref.links.iter().map(|l| l.latency).collect(),
            link_on: vec![true; platform_links],
            links_off: 0,
            profiles: platform_ref
                .profiles
                .iter()
                .map(|p| (p.target, p.profile.clone(), ProfileCursor::start(&p.profile)))
                .collect(),
            failure: None,
            lone_yields: 0,
            resume_sp: Vec::new(),
            hot_lines: Vec::new(),
        };
        Simulation {
            k: Rc::new(RefCell::new(k)),
            stack_size: config.stack_size,
            coroutines: Vec::new(),
            bodies: Vec::new(),
            finish_times: Vec::new(),
            errnos: Vec::new(),
            on_comm_done: None,
            progress: None,
            completed_buf: Vec::new(),
            stop: None,
        }
    }

    /// Cache lines of `actor`'s own data (at most [`HOT_LINES`]; the rest are ignored) that
    /// the run loop prefetches with its stack before resuming it: data it touches first,
    /// which are cold by its turn with hundreds of actors (a program copy's slots of the
    /// MPI functions it calls, for one). A hint: any address is harmless.
    pub fn set_hot_lines(&mut self, actor: ActorId, lines: &[usize]) {
        let mut k = self.k.borrow_mut();
        let slot = &mut k.hot_lines[actor.0 as usize];
        for (s, l) in slot.iter_mut().zip(lines) {
            *s = *l;
        }
    }

    /// Adds an actor named `name` on `host`; it starts at time 0 (or now).
    pub fn spawn(
        &mut self,
        name: impl Into<String>,
        host: HostId,
        body: impl FnOnce(&Ctx) -> Result<(), String> + 'static,
    ) -> ActorId {
        let mut k = self.k.borrow_mut();
        let id = ActorId(k.actors.len() as u32);
        k.actor_names.push(name.into());
        k.actors.push(ActorSlot {
            host,
            state: ActorState::Ready,
            wait_epoch: 0,
            waiting_one: None,
            waiting_on: Vec::new(),
            woken_by: None,
            exited: None,
        });
        k.resume_sp.push(0);
        k.hot_lines.push([0; HOT_LINES]);
        k.ready.push_back(id);
        self.coroutines.push(None);
        self.bodies.push(Some(Box::new(body)));
        self.finish_times.push(f64::NAN);
        self.errnos.push(0);
        id
    }

    /// Where the run is now: simulated time, the dates actors finished at (NaN
    /// for those still running) and the events processed so far (for reports
    /// on any ending, failures included).
    pub fn summary_so_far(&self) -> RunSummary {
        let k = self.k.borrow();
        RunSummary {
            time: k.now,
            finish_times: self.finish_times.clone(),
            events: k.events,
        }
    }

    /// Collects per-link traffic statistics during the run ([`LinkStats`]);
    /// off by default (it costs a pass over the busy links at every date).
    pub fn collect_link_stats(&mut self) {
        let mut k = self.k.borrow_mut();
        let links = k.link_cnst.len();
        k.link_stats = Some(LinkStats::new(links));
    }

    /// The per-link statistics collected so far, if asked for.
    pub fn link_stats(&self) -> Option<LinkStats> {
        self.k.borrow().link_stats.clone()
    }

    /// Simulated seconds each actor spent computing ([`Ctx::compute`]), by
    /// actor id (missing entries: none).
    pub fn compute_times(&self) -> Vec<f64> {
        self.k.borrow().compute_time.clone()
    }

    /// Stops the run at the next scheduling round once `flag` is set (by a
    /// signal handler or another thread): [`Simulation::run`] then returns
    /// [`SimError::Stopped`] with where every unfinished actor is.
    pub fn stop_when(&mut self, flag: &'static std::sync::atomic::AtomicBool) {
        self.stop = Some(flag);
    }

    /// Called with (activity, user tag) when a communication completes, before
    /// any actor waiting on it runs (e.g. to copy the message payload).
    pub fn on_comm_done(&mut self, hook: impl FnMut(ActivityId, u64) + 'static) {
        self.on_comm_done = Some(Box::new(hook));
    }

    /// Called after each time advance with the new simulated time.
    pub fn on_progress(&mut self, hook: impl FnMut(f64) + 'static) {
        self.progress = Some(Box::new(hook));
    }

    /// Current simulated time.
    pub fn now(&self) -> f64 {
        self.k.borrow().now
    }

    /// A handle for actor-independent kernel operations.
    pub fn handle(&self) -> KernelHandle {
        KernelHandle { k: self.k.clone() }
    }

    /// The actor currently running, if any.
    pub fn current_actor(&self) -> Option<ActorId> {
        self.k.borrow().current
    }

    /// The recorded event trace (empty unless `KernelConfig::trace`).
    pub fn trace(&self) -> Vec<String> {
        self.k.borrow().trace.clone().unwrap_or_default()
    }

    fn make_coroutine(&mut self, id: ActorId) -> Result<ActorCoroutine, SimError> {
        let body = self.bodies[id.0 as usize]
            .take()
            .expect("actor body already taken");
        let stack = DefaultStack::new(self.stack_size)
            .map_err(|e| SimError::Setup(format!("cannot map a {} B stack: {e}", self.stack_size)))?;
        let k = self.k.clone();
        let limit = stack.limit().get();
        let name = self.k.borrow().actor_names[id.0 as usize].clone();
        crash::register_actor(id.0, name, limit, limit + GUARD_PAGE, self.stack_size);
        Ok(Coroutine::with_stack(stack, move |y: &Yielder<(), ()>, ()| {
            let ctx = Ctx {
                k,
                me: id,
                yielder: Cell::new(y as *const _),
            };
            match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| body(&ctx))) {
                Ok(r) => r,
                Err(p) => Err(panic_message(&p)),
            }
        }))
    }

    /// Whether the flag of [`Simulation::stop_when`] is set.
    fn stop_requested(&self) -> bool {
        self.stop
            .as_ref()
            .is_some_and(|f| f.load(std::sync::atomic::Ordering::Relaxed))
    }

    /// Runs until every actor has finished. Returns the end date and statistics.
    pub fn run(&mut self) -> Result<RunSummary, SimError> {
        crash::install();
        {
            let mut k = self.k.borrow_mut();
            k.presolve_profiles();
            if let Some(failure) = k.failure.take() {
                return Err(failure);
            }
        }
        let mut resumed: u64 = 0;
        // Safety: errno is this thread's, always valid (and at one address for its life).
        let errno = unsafe { libc::__errno_location() };
        loop {
            loop {
                // One borrow per resume on each side of the switch: the next actor is
                // taken and made current together, its exit read as it stops being current.
                let id = {
                    let mut k = self.k.borrow_mut();
                    let Some(id) = k.ready.pop_front() else { break };
                    k.current = Some(id);
                    if let Some(next) = k.ready.front() {
                        let next = next.0 as usize;
                        prefetch_stack(k.resume_sp[next]);
                        for &line in &k.hot_lines[next] {
                            prefetch_line(line);
                        }
                    }
                    id
                };
                // Ranks that yield to each other forever at one date (polling
                // that costs no simulated time) never leave this loop: look at
                // the stop flag here too.
                resumed += 1;
                if resumed.is_multiple_of(4096) && self.stop_requested() {
                    let mut k = self.k.borrow_mut();
                    k.current = None;
                    return Err(SimError::Stopped {
                        time: k.now,
                        unfinished: k.unfinished_actors(),
                    });
                }
                if self.coroutines[id.0 as usize].is_none() {
                    let co = self
                        .make_coroutine(id)
                        .inspect_err(|_| self.k.borrow_mut().current = None)?;
                    self.coroutines[id.0 as usize] = Some(co);
                }
                crash::set_current(Some(id.0));
                let co = self.coroutines[id.0 as usize].as_mut().expect("created above");
                // Safety: see `errno` above.
                let kernel_errno = unsafe { errno.replace(self.errnos[id.0 as usize]) };
                let res = co.resume(());
                self.errnos[id.0 as usize] = unsafe { errno.replace(kernel_errno) };
                crash::set_current(None);
                let exited = {
                    let mut k = self.k.borrow_mut();
                    k.current = None;
                    let exited = &mut k.actors[id.0 as usize].exited;
                    if exited.is_none() && matches!(res, CoroutineResult::Yield(())) {
                        // The common case: the actor blocked or yielded.
                        continue;
                    }
                    exited.take().map(|r| *r)
                };
                let res = match (res, exited) {
                    // An actor the kernel failed while it ran to its end.
                    (CoroutineResult::Return(_), Some(Err(message))) => CoroutineResult::Return(Err(message)),
                    (CoroutineResult::Yield(()), Some(r)) => {
                        // The stack holds foreign frames that must not be unwound.
                        if let Some(co) = self.coroutines[id.0 as usize].take() {
                            std::mem::forget(co);
                        }
                        CoroutineResult::Return(r)
                    }
                    (res, _) => res,
                };
                if let CoroutineResult::Return(r) = res {
                    let now = self.now();
                    self.finish_times[id.0 as usize] = now;
                    self.coroutines[id.0 as usize] = None;
                    let name = {
                        let mut k = self.k.borrow_mut();
                        k.actors[id.0 as usize].state = ActorState::Done;
                        k.record(|| format!("{now:.9} actor-end {}", id.0));
                        k.actor_names[id.0 as usize].clone()
                    };
                    if let Err(message) = r {
                        return Err(SimError::ActorFailed {
                            actor: id,
                            name,
                            time: now,
                            message,
                        });
                    }
                }
            }
            if self.stop_requested() {
                let k = self.k.borrow();
                return Err(SimError::Stopped {
                    time: k.now,
                    unfinished: k.unfinished_actors(),
                });
            }
            let completed = {
                let mut k = self.k.borrow_mut();
                k.update_rates();
                let next = k.next_event_time();
                let next = k.apply_profile_events(next);
                if let Some(failure) = k.failure.take() {
                    return Err(failure);
                }
                let Some(t) = next else {
                    break;
                };
                if t > k.now && k.link_stats.is_some() {
                    let dt = t - k.now;
                    k.account_link_saturation(dt);
                }
                let before = k.now;
                if t > k.now {
                    // SimGrid advances its clock by the delay to the next event, which
                    // can differ from that event's date in the last bit.
                    k.now = if k.sg.is_some() { k.now + (t - k.now) } else { t };
                }
                let t = k.now;
                k.process_events(t);
                k.advance_ios(t - before);
                // Swapped with the previous (emptied) buffer: no allocation per date.
                let mut completed = std::mem::take(&mut self.completed_buf);
                std::mem::swap(&mut completed, &mut k.completed);
                completed
            };
            if let Some(hook) = &mut self.on_comm_done {
                for (a, user) in &completed {
                    hook(*a, *user);
                }
            }
            self.completed_buf = completed;
            self.completed_buf.clear();
            if let Some(p) = &mut self.progress {
                p(self.k.borrow().now);
            }
        }
        let k = self.k.borrow();
        let blocked = k.unfinished_actors();
        if !blocked.is_empty() {
            return Err(SimError::Deadlock { time: k.now, blocked });
        }
        Ok(RunSummary {
            time: k.now,
            finish_times: self.finish_times.clone(),
            events: k.events,
        })
    }
}

impl Drop for Simulation {
    fn drop(&mut self) {
        // Unwinding a suspended coroutine would run through foreign (C) frames;
        // leak the blocked ones instead (this only happens on error paths).
        for co in self.coroutines.drain(..).flatten() {
            if co.started() && !co.done() {
                std::mem::forget(co);
            }
        }
    }
}

fn panic_message(p: &Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        format!("panicked: {s}")
    } else if let Some(s) = p.downcast_ref::<String>() {
        format!("panicked: {s}")
    } else {
        "panicked".to_string()
    }
}

/// When an activity with `remains` left, progressing at `rate` (> 0) from
/// `now`, ends: now if nothing remains.
#[inline]
fn finish_date(now: f64, remains: f64, rate: f64) -> f64 {
    if remains > 0.0 {
        now + remains / rate
    } else {
        now
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn date_keys_order_dates_as_total_cmp_and_round_trip() {
        let dates = [
            f64::NEG_INFINITY,
            -1.5e300,
            -1.0,
            -f64::MIN_POSITIVE,
            -0.0,
            0.0,
            5e-324,
            1e-9,
            8.061645359e-3,
            1.0,
            1.0 + f64::EPSILON,
            3.2e7,
            f64::MAX,
            f64::INFINITY,
            f64::NAN,
            -f64::NAN,
        ];
        for &a in &dates {
            assert_eq!(date_from_key(date_key(a)).to_bits(), a.to_bits(), "{a}");
            for &b in &dates {
                assert_eq!(date_key(a).cmp(&date_key(b)), a.total_cmp(&b), "{a} vs {b}");
            }
        }
    }
}
