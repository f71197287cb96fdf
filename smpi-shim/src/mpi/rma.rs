//! One-sided communication (MPI chapter 12): windows, their synchronization
//! (fence, post-start-complete-wait, locks, flushes) and the RMA operations,
//! timed as SMPI 3.32 times them.
//!
//! # Semantics (as SMPI 3.32, checked against it)
//! - Creating a window costs an allgather of an 8-byte handle on its
//!   communicator (SMPI exchanges window pointers); `MPI_Win_allocate_shared`
//!   adds a broadcast of the segment's address and a barrier. The window keeps
//!   a private duplicate of the communicator (free of cost), so the program
//!   may free its own.
//! - A `Put`, `Get` or `Accumulate` to another rank is one message, from where
//!   the data is (the origin, or the target for a `Get`) to where it goes:
//!   always eager and detached (the payload is copied when posted, the
//!   transfer starts at once), after the `ois` overhead. The data lands when the
//!   transfer ends, whatever either rank is doing (so passive-target
//!   epochs need no help from the target). Each side's request is kept by its
//!   window until a synchronization completes it; `MPI_Rput`/`MPI_Rget` hand
//!   the origin's request to the program instead.
//! - A `Put` or `Get` on the calling rank's own window is a plain copy; an
//!   `Accumulate` always goes through a message, and completes (a flush to its
//!   target) before returning, which also keeps MPI's ordering of accumulates.
//! - `Get_accumulate`, `Fetch_and_op`, `Compare_and_swap`: a `Get`, waited,
//!   then (unless `MPI_NO_OP`, or the comparison fails) an `Accumulate` (a
//!   `Put` for the swap), under the target's atomicity lock. SMPI leaves the
//!   swap's `Put` in flight when it releases that lock, so two ranks can both
//!   win a swap; here it completes first.
//! - Fence: unless `MPI_MODE_NOPRECEDE`, a barrier, then the rank completes
//!   every request its window holds; then a barrier.
//! - Post/start and complete/wait exchange 0-byte messages (post → start,
//!   complete → wait); complete and wait then complete the window's requests.
//! - Lock and unlock complete the requests between the two ranks (a flush).
//!   An exclusive lock waits, first come first served, until no other rank
//!   holds a lock on that target; a shared lock waits only for an exclusive
//!   one (SMPI's bookkeeping lets an exclusive lock in beside shared ones;
//!   this is the MPI semantics).
//!
//! Beyond SMPI: an access outside the target's window (`MPI_ERR_RMA_RANGE`)
//! and an operation outside any access epoch (`MPI_ERR_RMA_SYNC`) are errors
//! naming the call, the target and the range; so is the use of a freed window.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::ffi::c_int;
use std::rc::Rc;

use simcore::ActivityId;

use crate::coll::{self, CommView};
use crate::mpi::datatype::{Datatype, MPI_BYTE};
use crate::mpi::op::Op;

use super::*;

pub(crate) const MPI_ERR_WIN: i32 = 27;
pub(crate) const MPI_ERR_BASE: i32 = 28;
pub(crate) const MPI_ERR_SIZE: i32 = 29;
pub(crate) const MPI_ERR_DISP: i32 = 30;
pub(crate) const MPI_ERR_LOCKTYPE: i32 = 31;
pub(crate) const MPI_ERR_RMA_SYNC: i32 = 34;
pub(crate) const MPI_ERR_RMA_RANGE: i32 = 35;
pub(crate) const MPI_ERR_RMA_ATTACH: i32 = 36;
pub(crate) const MPI_ERR_RMA_FLAVOR: i32 = 38;

pub(crate) const MPI_LOCK_EXCLUSIVE: i32 = 1;
pub(crate) const MPI_LOCK_SHARED: i32 = 2;
pub(crate) const MPI_MODE_NOPRECEDE: i32 = 8;
pub(crate) const MPI_MODE_NOSUCCEED: i32 = 16;

pub(crate) const MPI_WIN_FLAVOR_CREATE: i32 = 1;
pub(crate) const MPI_WIN_FLAVOR_ALLOCATE: i32 = 2;
pub(crate) const MPI_WIN_FLAVOR_DYNAMIC: i32 = 3;
pub(crate) const MPI_WIN_FLAVOR_SHARED: i32 = 4;
pub(crate) const MPI_WIN_UNIFIED: i32 = 2;

/// SMPI's tags of RMA messages (below every tag a program or a collective uses).
const RMA_TAG: i32 = -6666;
const TAG_PUT: i32 = RMA_TAG + 1;
const TAG_GET: i32 = RMA_TAG + 2;
const TAG_POST: i32 = RMA_TAG + 4;
const TAG_COMPLETE: i32 = RMA_TAG + 5;

/// A lock some ranks may wait for, granted first come first served.
#[derive(Default)]
pub(crate) struct SimLock {
    exclusive: bool,
    shared: u32,
    /// Waiting ranks: (wants exclusive, activity completed when granted).
    waiters: VecDeque<(bool, ActivityId)>,
}

impl SimLock {
    fn can_take(&self, exclusive: bool) -> bool {
        self.waiters.is_empty() && !self.exclusive && (!exclusive || self.shared == 0)
    }

    fn take(&mut self, exclusive: bool) {
        if exclusive {
            self.exclusive = true;
        } else {
            self.shared += 1;
        }
    }

    /// Takes the lock if it is free for this kind of hold; otherwise queues
    /// the caller, whose activity (made by `activity`) completes when it is
    /// granted: that activity, to wait for.
    fn take_or_queue(
        &mut self,
        exclusive: bool,
        activity: impl FnOnce() -> ActivityId,
    ) -> Option<ActivityId> {
        if self.can_take(exclusive) {
            self.take(exclusive);
            None
        } else {
            let a = activity();
            self.waiters.push_back((exclusive, a));
            Some(a)
        }
    }

    /// Releases one hold; returns the waiters now granted (to wake).
    fn release(&mut self, exclusive: bool) -> Vec<ActivityId> {
        if exclusive {
            self.exclusive = false;
        } else {
            self.shared = self.shared.saturating_sub(1);
        }
        let mut granted = Vec::new();
        while let Some(&(excl, act)) = self.waiters.front() {
            if self.exclusive || (excl && self.shared > 0) {
                break;
            }
            self.waiters.pop_front();
            self.take(excl);
            granted.push(act);
            if excl {
                break;
            }
        }
        granted
    }
}

/// One member's part of a window.
pub(crate) struct Member {
    pub world: u32,
    pub base: *mut u8,
    pub size: isize,
    pub disp_unit: i32,
    /// Regions attached to a dynamic window: (address, bytes).
    pub attached: Vec<(usize, usize)>,
    /// The requests of this member's own operations, completed by its
    /// synchronizations: (id, the target, world numbering).
    pub requests: Vec<(u32, u32)>,
    /// The requests of other ranks' operations on this member (the receive
    /// of a put, the send of a get): (id, the origin, world numbering),
    /// completed by this member's fence, wait, free or flush_all.
    pub incoming: Vec<(u32, u32)>,
    /// Every transfer of this member's operations not known to be over:
    /// (activity, the target, world numbering), retained. A flush waits for
    /// them whoever holds the requests (the target, or the program for
    /// `MPI_Rput`/`MPI_Rget`): the data is at the target when they end.
    pub outstanding: Vec<(ActivityId, u32)>,
    /// SMPI's epoch counter: a fence opens (+1), `MPI_MODE_NOSUCCEED` closes
    /// (0); start and post open (−1), complete and wait close (+1).
    pub opened: i32,
    /// Accumulates issued so far (each gets its own tag, as in SMPI).
    pub accumulates: i32,
    /// Operations issued since the last synchronization that completes
    /// them (fence, complete, flush, unlock): freeing the window with some
    /// is an epoch never closed.
    pub unsynced: u32,
    /// Ranks (window numbering) holding a lock on this member, and how.
    pub lockers: Vec<(i32, bool)>,
    pub lock: SimLock,
    /// Serializes the atomic read-modify-write operations on this member.
    pub atomic: SimLock,
    /// Targets of the access epoch opened by `MPI_Win_start`, origins of the
    /// exposure epoch opened by `MPI_Win_post` (window numbering).
    pub start_group: Option<Vec<i32>>,
    pub post_group: Option<Vec<i32>>,
    /// The 0-byte receives of `MPI_Win_test` still pending.
    pub wait_recvs: Vec<u32>,
    /// This member's handle of the window's private communicator.
    pub comm: i32,
    pub name: String,
    pub info: i32,
    pub errhandler: i32,
    pub attrs: BTreeMap<i32, usize>,
    /// Memory the window allocated (`MPI_Win_allocate`), freed with it.
    pub allocated: Option<(*mut u8, usize)>,
    /// Values whose addresses `MPI_Win_get_attr` returns.
    pub attr_size: isize,
    pub attr_disp_unit: i32,
    pub attr_flavor: i32,
    pub attr_model: i32,
    pub freed: bool,
    pub joined: bool,
}

impl Member {
    /// The part of `world` in a window of `flavor` being created, until it
    /// joins (gives its memory).
    fn new(world: u32, flavor: i32) -> Member {
        Member {
            world,
            base: std::ptr::null_mut(),
            size: 0,
            disp_unit: 1,
            attached: Vec::new(),
            requests: Vec::new(),
            incoming: Vec::new(),
            outstanding: Vec::new(),
            opened: 0,
            accumulates: 0,
            unsynced: 0,
            lockers: Vec::new(),
            lock: SimLock::default(),
            atomic: SimLock::default(),
            start_group: None,
            post_group: None,
            wait_recvs: Vec::new(),
            comm: 0,
            name: String::new(),
            info: 0,
            errhandler: MPI_ERRORS_ARE_FATAL,
            attrs: BTreeMap::new(),
            allocated: None,
            attr_size: 0,
            attr_disp_unit: 1,
            attr_flavor: flavor,
            attr_model: MPI_WIN_UNIFIED,
            freed: false,
            joined: false,
        }
    }
}

/// A window: its flavor and its members' parts (in communicator order).
pub(crate) struct Window {
    pub flavor: i32,
    pub members: Vec<Member>,
    /// `MPI_Win_allocate_shared`: the segment every member's part lies in.
    pub shared_segment: Option<(*mut u8, usize)>,
}

/// Every window of the run. A window's handle is its index plus one, the same
/// on every member.
#[derive(Default)]
pub(crate) struct Windows {
    pub table: Vec<Option<Box<Window>>>,
    /// Window being created, by the context of its private communicator
    /// (unique to it, agreed by the members without communication).
    pub by_context: HashMap<u32, usize>,
}

/// The arguments of an RMA operation's origin or target side.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Side {
    pub buf: *mut u8,
    pub count: usize,
    pub dtype: i32,
}

fn win_err(code: i32, msg: impl Into<String>) -> MpiError {
    mpi_err(code, msg)
}

impl Windows {
    fn get(&self, h: c_int) -> MpiResult<&Window> {
        match usize::try_from(h - 1).ok().and_then(|i| self.table.get(i)) {
            Some(Some(w)) => Ok(w),
            Some(None) => Err(win_err(MPI_ERR_WIN, format!("window {h} was freed"))),
            None if h == 0 => Err(win_err(MPI_ERR_WIN, "MPI_WIN_NULL is not a window")),
            None => Err(win_err(MPI_ERR_WIN, format!("invalid window handle {h}"))),
        }
    }

    fn get_mut(&mut self, h: c_int) -> MpiResult<&mut Window> {
        match usize::try_from(h - 1).ok().and_then(|i| self.table.get_mut(i)) {
            Some(Some(w)) => Ok(w),
            Some(None) => Err(win_err(MPI_ERR_WIN, format!("window {h} was freed"))),
            None if h == 0 => Err(win_err(MPI_ERR_WIN, "MPI_WIN_NULL is not a window")),
            None => Err(win_err(MPI_ERR_WIN, format!("invalid window handle {h}"))),
        }
    }
}

impl Window {
    /// Member `target` (window numbering), or `MPI_ERR_RANK`.
    fn target(&self, target: i32) -> MpiResult<&Member> {
        let n = self.members.len() as i32;
        if target < 0 || target >= n {
            return Err(win_err(
                MPI_ERR_RANK,
                format!("invalid target rank {target} (window of {n} ranks)"),
            ));
        }
        Ok(&self.members[target as usize])
    }

    /// `MPI_ERR_RMA_FLAVOR` (saying `what`) unless the window is of `flavor`.
    fn need_flavor(&self, flavor: i32, what: &str) -> MpiResult<()> {
        if self.flavor != flavor {
            return Err(win_err(MPI_ERR_RMA_FLAVOR, what));
        }
        Ok(())
    }

    /// The calling rank's number in the window, if it is a member.
    fn rank_of(&self, me: u32) -> MpiResult<usize> {
        match self.members.iter().position(|m| m.world == me && m.joined) {
            Some(r) if !self.members[r].freed => Ok(r),
            Some(_) => Err(win_err(
                MPI_ERR_WIN,
                "the window was freed (MPI_Win_free) by this rank",
            )),
            None => Err(win_err(
                MPI_ERR_WIN,
                format!("rank {me} is not a member of this window"),
            )),
        }
    }
}

/// The window `h` and the caller's number in it.
pub(crate) fn with_win<R>(
    me: u32,
    h: c_int,
    f: impl FnOnce(&mut World, usize) -> MpiResult<R>,
) -> MpiResult<R> {
    with_world(|w| {
        let r = w.wins.get(h)?.rank_of(me)?;
        f(w, r)
    })
}

fn member(w: &mut World, h: c_int, r: usize) -> &mut Member {
    &mut w.wins.get_mut(h).expect("checked window").members[r]
}

/// The error handler of window `h` for rank `me` (`MPI_ERRORS_ARE_FATAL` when
/// the window is not valid, as the handler of `MPI_COMM_WORLD` would be).
pub(crate) fn errhandler(me: u32, h: c_int) -> Option<i32> {
    with_world(|w| {
        let win = w.wins.get(h).ok()?;
        let r = win.rank_of(me).ok()?;
        Some(win.members[r].errhandler)
    })
}

// ------------------------------------------------------------------ creation and freeing

/// How a window's memory is given.
pub(crate) enum Memory {
    /// `MPI_Win_create`: the program's buffer.
    Given(*mut u8),
    /// `MPI_Win_allocate`: allocated here.
    Allocate,
    /// `MPI_Win_allocate_shared`: one segment for all members.
    Shared,
    /// `MPI_Win_create_dynamic`: memory attached later.
    Dynamic,
}

/// Creates a window collectively over `comm`; returns its handle and base.
pub(crate) fn create(
    me: u32,
    comm: c_int,
    size: isize,
    disp_unit: i32,
    info: c_int,
    memory: Memory,
) -> MpiResult<(c_int, *mut u8)> {
    if size < 0 {
        return Err(win_err(MPI_ERR_SIZE, format!("negative window size {size}")));
    }
    if disp_unit <= 0 {
        return Err(win_err(
            MPI_ERR_DISP,
            format!("displacement unit {disp_unit} (must be positive)"),
        ));
    }
    let inter = with_world(|w| w.ranks[me as usize].comm(comm).map(|c| c.shared.remote.is_some()))?;
    if inter {
        return Err(win_err(MPI_ERR_COMM, "a window needs an intra-communicator"));
    }
    if let Memory::Given(p) = memory {
        if p.is_null() && size > 0 {
            return Err(win_err(
                MPI_ERR_BASE,
                format!("null base for a window of {size} bytes"),
            ));
        }
    }
    let private = crate::mpi::comm::new_comm_entry(me, comm, i32::MIN + 1, None)?;
    let (flavor, base, allocated) = match memory {
        Memory::Given(p) => (MPI_WIN_FLAVOR_CREATE, p, None),
        Memory::Allocate => {
            // Safety: a fresh allocation of at least one byte.
            let p = unsafe { libc::malloc(size.max(1) as usize) } as *mut u8;
            if p.is_null() {
                return Err(win_err(21, format!("cannot allocate a window of {size} bytes")));
            }
            (MPI_WIN_FLAVOR_ALLOCATE, p, Some((p, size as usize)))
        }
        Memory::Shared => (MPI_WIN_FLAVOR_SHARED, std::ptr::null_mut(), None),
        Memory::Dynamic => (MPI_WIN_FLAVOR_DYNAMIC, std::ptr::null_mut(), None),
    };
    let handle = with_world(|w| -> MpiResult<c_int> {
        let c = w.ranks[me as usize].comm(private)?;
        let (context, group, my) = (c.shared.context, c.shared.group.clone(), c.my_rank as usize);
        let info_copy = window_info(&mut w.infos, info)?;
        let idx = match w.wins.by_context.get(&context) {
            Some(&i) => i,
            None => {
                let members = group.iter().map(|&world| Member::new(world, flavor)).collect();
                w.wins.table.push(Some(Box::new(Window {
                    flavor,
                    members,
                    shared_segment: None,
                })));
                let i = w.wins.table.len() - 1;
                w.wins.by_context.insert(context, i);
                i
            }
        };
        let win = w.wins.table[idx].as_mut().expect("window being created");
        if win.flavor != flavor {
            return Err(win_err(
                MPI_ERR_RMA_FLAVOR,
                "the members of a window called different window constructors",
            ));
        }
        // Nothing touched the member before it joins (every member joins
        // before the constructor's allgather ends).
        let m = &mut win.members[my];
        *m = Member {
            base,
            size,
            disp_unit,
            comm: private,
            info: info_copy,
            allocated,
            attr_size: size,
            attr_disp_unit: disp_unit,
            joined: true,
            ..Member::new(m.world, flavor)
        };
        let all_joined = win.members.iter().all(|m| m.joined);
        if all_joined {
            w.wins.by_context.remove(&context);
        }
        Ok(idx as c_int + 1)
    })?;
    let view = CommView::new(me, private)?;
    if flavor == MPI_WIN_FLAVOR_SHARED {
        // SMPI: rank 0 allocates, broadcasts the address, then a barrier.
        let mut address = [0u8; 8];
        coll::bcast(view, address.as_mut_ptr(), 8, MPI_BYTE, 0)?;
        coll::barrier(view)?;
        // Every member has given its size by now: lay the segment out.
        with_world(|w| place_shared_segment(w, handle))?;
    }
    // SMPI's window constructor: an allgather of the window pointers.
    let mut all = vec![0u8; 8 * view.size as usize];
    coll::allgather8(view, &[0u8; 8], &mut all)?;
    let base = with_world(|w| -> MpiResult<*mut u8> {
        let win = w.wins.get(handle)?;
        Ok(win.members[win.rank_of(me)?].base)
    })?;
    Ok((handle, base))
}

/// The info keys a window knows (MPI 4.1 §12.2.1), with their defaults when
/// the standard gives one; others are ignored, as MPI allows.
const WINDOW_INFO_KEYS: [(&str, Option<&str>); 7] = [
    ("no_locks", None),
    ("accumulate_ordering", Some("rar,raw,war,waw")),
    ("accumulate_ops", Some("same_op_no_op")),
    ("same_size", None),
    ("same_disp_unit", None),
    ("alloc_shared_noncontig", None),
    ("mpi_accumulate_granularity", None),
];

/// A window's own info object: the keys of `given` (an info handle, or
/// `MPI_INFO_NULL`) a window knows.
pub(crate) fn window_info(infos: &mut crate::mpi::info::InfoTable, given: c_int) -> MpiResult<c_int> {
    let own = infos.create();
    if given > 0 {
        for (key, _) in WINDOW_INFO_KEYS {
            if let Some(v) = infos.get(given, key)? {
                infos.set(own, key, &v)?;
            }
        }
    }
    Ok(own)
}

/// `MPI_Win_get_info`: a new info object with the window's hints, defaults included.
pub(crate) fn info_in_use(infos: &mut crate::mpi::info::InfoTable, own: c_int) -> MpiResult<c_int> {
    let out = infos.create();
    for (key, default) in WINDOW_INFO_KEYS {
        let value = if own > 0 { infos.get(own, key)? } else { None };
        if let Some(v) = value.or(default.map(str::to_string)) {
            infos.set(out, key, &v)?;
        }
    }
    Ok(out)
}

/// Allocates the segment of a shared window (once, by the first member past
/// the barrier) and gives each member its part, in rank order, each aligned
/// to 16 bytes.
fn place_shared_segment(w: &mut World, h: c_int) -> MpiResult<()> {
    let win = w.wins.get_mut(h)?;
    if win.shared_segment.is_none() {
        let mut offsets = Vec::with_capacity(win.members.len());
        let mut total = 0usize;
        for m in &win.members {
            offsets.push(total);
            total += (m.size as usize).div_ceil(16) * 16;
        }
        // Safety: a fresh zeroed allocation of at least one byte.
        let p = unsafe { libc::calloc(total.max(1), 1) } as *mut u8;
        if p.is_null() {
            return Err(win_err(
                21,
                format!("cannot allocate a shared window of {total} bytes"),
            ));
        }
        win.shared_segment = Some((p, total));
        for (m, off) in win.members.iter_mut().zip(offsets) {
            // Safety: inside the segment just allocated.
            m.base = unsafe { p.add(off) };
        }
    }
    Ok(())
}

/// `MPI_Win_free`: a barrier, the rank's pending requests completed, a barrier.
pub(crate) fn free(me: u32, h: c_int) -> MpiResult<Vec<(i32, usize)>> {
    let unsynced = with_win(me, h, |w, r| Ok(member(w, h, r).unsynced))?;
    if unsynced > 0 {
        return Err(win_err(
            MPI_ERR_RMA_SYNC,
            format!(
                "{unsynced} RMA operation(s) issued since the last synchronization: the epoch they are in \
                 was never closed (a closing MPI_Win_fence, MPI_Win_complete, MPI_Win_unlock or flush)"
            ),
        ));
    }
    let view = comm_view(me, h)?;
    coll::barrier(view)?;
    complete_requests(me, h, None)?;
    coll::barrier(view)?;
    wait_outstanding(me, h, None)?;
    let busy = with_win(me, h, |w, r| {
        let m = &w.wins.get(h)?.members[r];
        Ok(!m.lockers.is_empty() || m.start_group.is_some() || m.post_group.is_some())
    })?;
    if busy {
        return Err(win_err(
            MPI_ERR_RMA_SYNC,
            "the window is freed inside an epoch (still locked, or between start/post and complete/wait)",
        ));
    }
    with_world(|w| -> MpiResult<Vec<(i32, usize)>> {
        let win = w.wins.get_mut(h)?;
        let r = win.rank_of(me)?;
        let m = &mut win.members[r];
        m.freed = true;
        let attrs = std::mem::take(&mut m.attrs).into_iter().collect();
        if let Some((p, _)) = m.allocated.take() {
            // Safety: allocated by `create` with malloc, freed once.
            unsafe { libc::free(p.cast()) };
        }
        let info = m.info;
        let comm = m.comm;
        let all_freed = win.members.iter().all(|m| m.freed);
        if all_freed {
            if let Some((p, _)) = win.shared_segment.take() {
                // Safety: allocated by `place_shared_segment` with calloc, freed once.
                unsafe { libc::free(p.cast()) };
            }
            w.wins.table[h as usize - 1] = None;
        }
        if info > 0 {
            let _ = w.infos.free(info);
        }
        w.ranks[me as usize].comms[comm as usize] = None;
        Ok(attrs)
    })
}

// ------------------------------------------------------------------ operations

/// What kind of access an operation makes, for its checks and messages.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Access {
    Put,
    Get,
    Accumulate(Op),
}

/// Checks an access of `call` to `target` at displacement `disp` and returns
/// the target's address of it and the target's world rank.
fn check_access(
    w: &World,
    h: c_int,
    r: usize,
    target: i32,
    disp: isize,
    tside: &Side,
    tdt: &Datatype,
) -> MpiResult<(*mut u8, u32)> {
    let win = w.wins.get(h)?;
    let me = &win.members[r];
    let t = win.target(target)?;
    let locked = t.lockers.iter().any(|&(who, _)| who == r as i32);
    let in_start = me.start_group.as_ref().is_some_and(|g| g.contains(&target));
    if me.opened == 0 && !locked && !in_start {
        return Err(win_err(
            MPI_ERR_RMA_SYNC,
            format!(
                "access to rank {target} outside an access epoch (no MPI_Win_fence, MPI_Win_start or \
                 MPI_Win_lock on it is open)"
            ),
        ));
    }
    if disp < 0 {
        return Err(win_err(
            MPI_ERR_DISP,
            format!("negative target displacement {disp}"),
        ));
    }
    if tside.count == 0 {
        return Ok((std::ptr::null_mut(), t.world));
    }
    let span_lo = tdt.true_lb;
    let span_hi = (tside.count as isize - 1) * tdt.extent + tdt.true_ub;
    if win.flavor == MPI_WIN_FLAVOR_DYNAMIC {
        // Displacements are addresses (MPI_Get_address) in attached memory.
        let lo = disp + span_lo;
        let hi = disp + span_hi;
        let inside = covered(&t.attached, lo, hi);
        if !inside {
            return Err(win_err(
                MPI_ERR_RMA_RANGE,
                format!(
                    "access to rank {target} reaches bytes {lo:#x}..{hi:#x}, outside the memory it \
                     attached to the dynamic window"
                ),
            ));
        }
        return Ok((disp as *mut u8, t.world));
    }
    let offset = disp * t.disp_unit as isize;
    let (lo, hi) = (offset + span_lo, offset + span_hi);
    if lo < 0 || hi > t.size {
        return Err(win_err(
            MPI_ERR_RMA_RANGE,
            format!(
                "access to rank {target} reaches bytes {lo}..{hi} of its window (displacement {disp} × \
                 unit {}), which has {} bytes",
                t.disp_unit, t.size
            ),
        ));
    }
    // Safety: inside the target's window, checked just above.
    Ok((unsafe { t.base.offset(offset) }, t.world))
}

fn dtype_of(w: &World, h: i32) -> MpiResult<Rc<Datatype>> {
    let dt = w.dtype(h)?;
    if !dt.committed && !dt.predefined {
        return Err(win_err(MPI_ERR_TYPE, "datatype not committed"));
    }
    Ok(dt)
}

/// Starts an RMA operation of rank `me` on window `h`: `origin` is the
/// origin's buffer, `tside` the target's part. Returns the request the
/// program gets for `MPI_Rput`/`MPI_Rget`/`MPI_Raccumulate` (`keep`), or
/// `None` when the window keeps it.
#[allow(clippy::too_many_arguments)]
pub(crate) fn operate(
    me: u32,
    h: c_int,
    access: Access,
    origin: Side,
    target: i32,
    disp: isize,
    tside: Side,
    keep: bool,
) -> MpiResult<Option<u32>> {
    if target == MPI_PROC_NULL {
        return Ok(None);
    }
    let plan = with_win(me, h, |w, r| {
        let odt = dtype_of(w, origin.dtype)?;
        let tdt = dtype_of(w, tside.dtype)?;
        if origin.buf.is_null() && origin.count > 0 && odt.size > 0 && !odt.fits_bottom() {
            return Err(win_err(
                MPI_ERR_BUFFER,
                format!("null origin buffer with count {}", origin.count),
            ));
        }
        if odt.size * origin.count != tdt.size * tside.count {
            return Err(win_err(
                MPI_ERR_TYPE,
                format!(
                    "the origin gives {} bytes ({} × {}) but the target takes {} ({} × {})",
                    odt.size * origin.count,
                    origin.count,
                    odt.name,
                    tdt.size * tside.count,
                    tside.count,
                    tdt.name
                ),
            ));
        }
        if let Access::Accumulate(_) = access {
            if tdt.basic.is_none() && tside.count > 0 && tdt.size > 0 {
                return Err(win_err(
                    MPI_ERR_TYPE,
                    "the target datatype of an accumulate must be made of one predefined type",
                ));
            }
        }
        let (taddr, tworld) = check_access(w, h, r, target, disp, &tside, &tdt)?;
        let win = w.wins.get(h)?;
        let context = w.ranks[me as usize].comm(win.members[r].comm)?.shared.context + 1;
        let size = odt.size * origin.count;
        Ok((
            r,
            taddr,
            tworld,
            odt,
            tdt,
            context,
            size,
            w.cfg.ois.cost(size as f64),
        ))
    })?;
    let (r, taddr, tworld, odt, tdt, context, size, ois) = plan;
    with_world(|w| member(w, h, r).unsynced += 1);
    if tworld == me && matches!(access, Access::Put | Access::Get) {
        simcall_yield(me);
        // SMPI copies a Put or Get to the rank's own window at once.
        // Safety: both buffers hold what their counts and types say (checked
        // against the window for the target).
        unsafe {
            match access {
                Access::Put => {
                    odt.copy_to_with(origin.buf, origin.count, None, &tdt, taddr, tside.count, size)
                }
                Access::Get => {
                    tdt.copy_to_with(taddr, tside.count, None, &odt, origin.buf, origin.count, size)
                }
                Access::Accumulate(_) => {}
            }
        }
        return Ok(None);
    }
    if matches!(access, Access::Accumulate(Op::Noop)) {
        return Ok(None);
    }
    let tag = match access {
        Access::Put => TAG_PUT,
        Access::Get => TAG_GET,
        Access::Accumulate(_) => with_world(|w| {
            let m = member(w, h, r);
            let tag = RMA_TAG - 3 - m.accumulates;
            m.accumulates += 1;
            tag
        }),
    };
    sleep_for(me, ois);
    let (send, recv) = with_world(|w| {
        let (from, to, from_side, to_side, from_dt, to_dt, to_addr, from_addr) = match access {
            Access::Get => (
                tworld,
                me,
                tside,
                origin,
                tdt.clone(),
                odt.clone(),
                origin.buf,
                taddr,
            ),
            _ => (
                me,
                tworld,
                origin,
                tside,
                odt.clone(),
                tdt.clone(),
                taddr,
                origin.buf,
            ),
        };
        let (from_local, to_local) = if matches!(access, Access::Get) {
            (target, r as i32)
        } else {
            (r as i32, target)
        };
        let t = Transfer {
            from,
            from_local,
            to,
            to_local,
            context,
            tag,
        };
        let send = post_rma_send(w, &t, from_addr, &from_side, from_dt, size);
        let op = match access {
            Access::Accumulate(op) => Some(op),
            _ => None,
        };
        let recv = post_rma_recv(w, &t, to_addr, &to_side, to_dt, op);
        (send, recv)
    });
    simcall_yield(me);
    // Who completes what: the origin's request (the send of a Put or
    // Accumulate, the receive of a Get) goes to the program or the origin's
    // window; the other to the target's window.
    let (mine, theirs) = if matches!(access, Access::Get) {
        (recv, send)
    } else {
        (send, recv)
    };
    with_world(|w| {
        // Requests of earlier operations on this target that are over are
        // freed here: a target that never synchronizes keeps none.
        let done: Vec<u32> = w.wins.get(h).expect("checked window").members[target as usize]
            .incoming
            .iter()
            .map(|&(id, _)| id)
            .filter(|&id| is_complete(w, id))
            .collect();
        for &id in &done {
            release_completed(w, id);
        }
        let act = w.req(theirs).act;
        let kernel = w.kernel.clone();
        if let Some(a) = act {
            kernel.retain(a);
        }
        let win = w.wins.get_mut(h).expect("checked window");
        let t = &mut win.members[target as usize];
        t.incoming.retain(|(id, _)| !done.contains(id));
        t.incoming.push((theirs, me));
        let m = &mut win.members[r];
        if !keep {
            m.requests.push((mine, tworld));
        }
        m.outstanding.retain(|&(a, _)| {
            let over = kernel.test(a);
            if over {
                kernel.release(a);
            }
            !over
        });
        if let Some(a) = act {
            m.outstanding.push((a, tworld));
        }
    });
    if let Access::Accumulate(_) = access {
        // SMPI completes every accumulate before returning (MPI's ordering).
        flush(me, h, target)?;
    }
    Ok(keep.then_some(mine))
}

/// An RMA transfer: from rank `from` (world numbering; `from_local` in the
/// window) to rank `to`, on the window's context under `tag`.
struct Transfer {
    from: u32,
    from_local: i32,
    to: u32,
    to_local: i32,
    context: u32,
    tag: i32,
}

impl Transfer {
    /// The request of the sending end (`kind` `Send`, owned by `from`) or of
    /// the receiving end (owned by `to`), on `buf` as `side` says.
    fn request(&self, kind: ReqKind, buf: *mut u8, side: &Side, dt: Rc<Datatype>) -> Request {
        let (owner, peer, me_local, peer_world) = if matches!(kind, ReqKind::Send) {
            (self.from, self.to_local, self.from_local, self.to)
        } else {
            (self.to, self.from_local, -1, self.from)
        };
        Request {
            context: self.context,
            peer,
            me_local,
            peer_world,
            tag: self.tag,
            buf,
            count: side.count,
            dtype: side.dtype,
            dt: Some(dt),
            rma: true,
            done: false,
            transferred: false,
            ..Request::local(kind, owner, 0, None)
        }
    }
}

/// Posts the send of RMA transfer `t` (detached, eager) on behalf of its origin.
fn post_rma_send(
    w: &mut World,
    t: &Transfer,
    buf: *mut u8,
    side: &Side,
    dt: Rc<Datatype>,
    size: usize,
) -> u32 {
    let payload = crate::mpi::p2p::send_payload(&dt, buf, side.count, size);
    let mut r = t.request(ReqKind::Send, buf, side, dt);
    r.size = size;
    r.detached = true;
    r.payload = payload;
    let id = w.alloc_req(r);
    post_send(w, id);
    id
}

/// Posts the receive of RMA transfer `t` on behalf of its destination
/// (combining the data with `op` for an accumulate).
fn post_rma_recv(
    w: &mut World,
    t: &Transfer,
    buf: *mut u8,
    side: &Side,
    dt: Rc<Datatype>,
    op: Option<Op>,
) -> u32 {
    let size = dt.size * side.count;
    let mut r = t.request(ReqKind::Recv, buf, side, dt);
    r.size = size;
    r.accumulate = op;
    let id = w.alloc_req(r);
    post_recv(w, id);
    id
}

/// Completes the requests of window member `me`'s own operations (all of
/// them, or those on target `other`, a world rank), and with `other` =
/// `None` the requests of other ranks' operations on it too, as SMPI's
/// `finish_comms`.
fn complete_requests(me: u32, h: c_int, other: Option<u32>) -> MpiResult<()> {
    // SMPI takes the window's mutex first (a simcall): the other ranks ready
    // at this date run before, so a rank polling its own window in a loop
    // lets the others progress.
    simcall_yield(me);
    let ids = with_win(me, h, |w, r| {
        let m = member(w, h, r);
        m.unsynced = 0;
        let (mut take, keep): (Vec<_>, Vec<_>) = std::mem::take(&mut m.requests)
            .into_iter()
            .partition(|&(_, o)| other.is_none_or(|x| x == o));
        m.requests = keep;
        if other.is_none() {
            take.append(&mut m.incoming);
        }
        Ok(take.into_iter().map(|(id, _)| id).collect::<Vec<u32>>())
    })?;
    if !ids.is_empty() {
        wait_all_ids(me, &ids);
    }
    Ok(())
}

/// Waits until the transfers of `me`'s operations (on target `other`, a world
/// rank, or on every target) are over: the data is where it goes.
fn wait_outstanding(me: u32, h: c_int, other: Option<u32>) -> MpiResult<()> {
    let acts = with_win(me, h, |w, r| {
        let m = member(w, h, r);
        let (take, keep): (Vec<_>, Vec<_>) = std::mem::take(&mut m.outstanding)
            .into_iter()
            .partition(|&(_, o)| other.is_none_or(|x| x == o));
        m.outstanding = keep;
        Ok(take)
    })?;
    let ctx = with_world(|w| w.ranks[me as usize].ctx());
    for (a, _) in acts {
        ctx.wait(a);
        with_world(|w| w.kernel.release(a));
    }
    Ok(())
}

/// Whether the regions `(address, bytes)` cover every byte of `lo..hi`.
fn covered(regions: &[(usize, usize)], lo: isize, hi: isize) -> bool {
    let mut sorted: Vec<(isize, isize)> = regions
        .iter()
        .map(|&(a, n)| (a as isize, (a + n) as isize))
        .collect();
    sorted.sort_unstable();
    let mut reached = lo;
    for (a, b) in sorted {
        if a > reached {
            break;
        }
        reached = reached.max(b);
        if reached >= hi {
            return true;
        }
    }
    reached >= hi
}

fn target_world(me: u32, h: c_int, target: i32) -> MpiResult<(usize, u32)> {
    with_win(me, h, |w, r| Ok((r, w.wins.get(h)?.target(target)?.world)))
}

/// `MPI_Win_flush`: the operations of `me` on `target` are complete at both
/// ends.
pub(crate) fn flush(me: u32, h: c_int, target: i32) -> MpiResult<()> {
    let (_, tworld) = target_world(me, h, target)?;
    complete_requests(me, h, Some(tworld))?;
    wait_outstanding(me, h, Some(tworld))
}

/// `MPI_Win_flush_local`: as SMPI, the origin's side only.
pub(crate) fn flush_local(me: u32, h: c_int, target: i32) -> MpiResult<()> {
    let (_, tworld) = target_world(me, h, target)?;
    complete_requests(me, h, Some(tworld))
}

/// `MPI_Win_flush_all`.
pub(crate) fn flush_all(me: u32, h: c_int) -> MpiResult<()> {
    complete_requests(me, h, None)?;
    wait_outstanding(me, h, None)
}

/// `MPI_Win_flush_local_all`.
pub(crate) fn flush_local_all(me: u32, h: c_int) -> MpiResult<()> {
    complete_requests(me, h, None)
}

// ------------------------------------------------------------------ synchronization

fn comm_view(me: u32, h: c_int) -> MpiResult<CommView> {
    let comm = with_win(me, h, |w, r| Ok(w.wins.get(h)?.members[r].comm))?;
    CommView::new(me, comm)
}

/// `MPI_Win_fence`.
pub(crate) fn fence(me: u32, h: c_int, assert: i32) -> MpiResult<()> {
    let view = comm_view(me, h)?;
    with_win(me, h, |w, r| {
        let m = member(w, h, r);
        if m.start_group.is_some() || m.post_group.is_some() {
            return Err(win_err(
                MPI_ERR_RMA_SYNC,
                "MPI_Win_fence inside a post/start or lock epoch",
            ));
        }
        m.opened += 1;
        Ok(())
    })?;
    if assert & MPI_MODE_NOPRECEDE == 0 {
        coll::barrier(view)?;
        complete_requests(me, h, None)?;
        with_win(me, h, |w, r| {
            member(w, h, r).accumulates = 0;
            Ok(())
        })?;
    }
    if assert & MPI_MODE_NOSUCCEED != 0 {
        with_win(me, h, |w, r| {
            member(w, h, r).opened = 0;
            Ok(())
        })?;
    }
    coll::barrier(view)?;
    // Every transfer of the epoch is over (each target completed its own
    // before the barrier): only the bookkeeping goes.
    wait_outstanding(me, h, None)
}

/// The members of group `group` (a handle of rank `me`) in window numbering.
fn group_ranks(me: u32, h: c_int, group: Group) -> MpiResult<Vec<i32>> {
    with_win(me, h, |w, _| {
        let win = w.wins.get(h)?;
        group
            .iter()
            .map(|&world| {
                win.members
                    .iter()
                    .position(|m| m.world == world)
                    .map(|i| i as i32)
                    .ok_or_else(|| {
                        win_err(
                            MPI_ERR_GROUP,
                            format!("rank {world} of the group is not in the window"),
                        )
                    })
            })
            .collect()
    })
}

/// Exchanges the 0-byte synchronization messages of post/start/complete/wait:
/// sends to `to`, or receives from `from` (window numbering, self excluded).
fn sync_messages(me: u32, h: c_int, peers: &[i32], tag: i32, send: bool) -> MpiResult<Vec<u32>> {
    let (r, comm) = with_win(me, h, |w, r| Ok((r, w.wins.get(h)?.members[r].comm)))?;
    let mut ids = Vec::new();
    for &p in peers.iter().filter(|&&p| p != r as i32) {
        let a = P2p {
            buf: std::ptr::null_mut(),
            count: 0,
            dtype: 1,
            peer: p,
            tag,
            comm,
            coll: true,
        };
        ids.push(if send {
            isend(me, &a, SendMode::Standard, false)?
        } else {
            irecv(me, &a)?
        });
    }
    Ok(ids)
}

/// The group of the access epoch (`MPI_Win_start`) or, with `post`, of the
/// exposure epoch (`MPI_Win_post`) of member `m`.
fn epoch_group(m: &mut Member, post: bool) -> &mut Option<Vec<i32>> {
    if post {
        &mut m.post_group
    } else {
        &mut m.start_group
    }
}

/// `MPI_Win_start`: waits for the targets' posts.
pub(crate) fn start(me: u32, h: c_int, group: Group) -> MpiResult<()> {
    open_epoch(me, h, group, false)
}

/// `MPI_Win_post`: tells the origins they may access.
pub(crate) fn post(me: u32, h: c_int, group: Group) -> MpiResult<()> {
    open_epoch(me, h, group, true)
}

/// Opens the access epoch of `MPI_Win_start` or (`post`) the exposure epoch
/// of `MPI_Win_post` towards `group`.
fn open_epoch(me: u32, h: c_int, group: Group, post: bool) -> MpiResult<()> {
    let peers = group_ranks(me, h, group)?;
    if with_win(me, h, |w, r| Ok(epoch_group(member(w, h, r), post).is_some()))? {
        let (call, epoch) = if post {
            ("MPI_Win_post", "an exposure")
        } else {
            ("MPI_Win_start", "an access")
        };
        return Err(win_err(
            MPI_ERR_RMA_SYNC,
            format!("{call} while {epoch} epoch is open"),
        ));
    }
    let ids = sync_messages(me, h, &peers, TAG_POST, post)?;
    wait_all_ids(me, &ids);
    with_win(me, h, |w, r| {
        let m = member(w, h, r);
        *epoch_group(m, post) = Some(peers);
        m.opened -= 1;
        Ok(())
    })
}

/// Ends the epoch of `MPI_Win_start` or (`post`) of `MPI_Win_post` once the
/// synchronization messages `ids` are done: the window's requests complete.
fn close_epoch(me: u32, h: c_int, ids: &[u32], post: bool) -> MpiResult<()> {
    wait_all_ids(me, ids);
    complete_requests(me, h, None)?;
    with_win(me, h, |w, r| {
        let m = member(w, h, r);
        *epoch_group(m, post) = None;
        m.opened += 1;
        Ok(())
    })
}

/// `MPI_Win_complete`: ends the access epoch opened by `MPI_Win_start`.
pub(crate) fn complete(me: u32, h: c_int) -> MpiResult<()> {
    let Some(targets) = with_win(me, h, |w, r| Ok(member(w, h, r).start_group.clone()))? else {
        return Err(win_err(
            MPI_ERR_RMA_SYNC,
            "MPI_Win_complete without MPI_Win_start",
        ));
    };
    let ids = sync_messages(me, h, &targets, TAG_COMPLETE, true)?;
    close_epoch(me, h, &ids, false)
}

/// `MPI_Win_wait` (`block`) or `MPI_Win_test`: ends the exposure epoch once
/// every origin has completed; returns whether it did.
pub(crate) fn win_wait(me: u32, h: c_int, block: bool) -> MpiResult<bool> {
    let Some(origins) = with_win(me, h, |w, r| Ok(member(w, h, r).post_group.clone()))? else {
        let call = if block { "MPI_Win_wait" } else { "MPI_Win_test" };
        return Err(win_err(MPI_ERR_RMA_SYNC, format!("{call} without MPI_Win_post")));
    };
    let mut ids = with_win(me, h, |w, r| Ok(std::mem::take(&mut member(w, h, r).wait_recvs)))?;
    if ids.is_empty() {
        ids = sync_messages(me, h, &origins, TAG_COMPLETE, false)?;
    }
    if !block {
        // A failing MPI_Win_test costs what a failing MPI_Test does.
        let cost = with_world(|w| w.cfg.test * poll_counter(w, me, Poll::Test) as f64);
        sleep_for(me, cost);
        let done = with_world(|w| {
            let done = ids.iter().all(|&id| is_complete(w, id));
            poll_result(w, me, Poll::Test, done);
            done
        });
        if !done {
            with_win(me, h, |w, r| {
                member(w, h, r).wait_recvs = ids;
                Ok(())
            })?;
            return Ok(false);
        }
    }
    close_epoch(me, h, &ids, true)?;
    Ok(true)
}

/// `MPI_Win_lock`.
pub(crate) fn lock(me: u32, h: c_int, lock_type: i32, target: i32) -> MpiResult<()> {
    if lock_type != MPI_LOCK_EXCLUSIVE && lock_type != MPI_LOCK_SHARED {
        return Err(win_err(
            MPI_ERR_LOCKTYPE,
            format!("invalid lock type {lock_type}"),
        ));
    }
    let exclusive = lock_type == MPI_LOCK_EXCLUSIVE;
    let (r, _) = target_world(me, h, target)?;
    let wait_for = with_world(|w| -> MpiResult<Option<ActivityId>> {
        let ctx = w.ranks[me as usize].ctx();
        let t = &mut w.wins.get_mut(h)?.members[target as usize];
        if t.lockers.iter().any(|&(who, _)| who == r as i32) {
            return Err(win_err(
                MPI_ERR_RMA_SYNC,
                format!("MPI_Win_lock: rank {r} already holds a lock on rank {target}"),
            ));
        }
        t.lockers.push((r as i32, exclusive));
        Ok(t.lock.take_or_queue(exclusive, || ctx.manual_create()))
    })?;
    if let Some(a) = wait_for {
        let blocked = BlockInfo {
            call: "MPI_Win_lock",
            peer: target,
            tag: 0,
            comm: 0,
        };
        wait_granted(me, a, Some(blocked));
    }
    flush(me, h, target)
}

/// `MPI_Win_unlock`.
pub(crate) fn unlock(me: u32, h: c_int, target: i32) -> MpiResult<()> {
    let (r, _) = target_world(me, h, target)?;
    let exclusive = with_world(|w| -> MpiResult<bool> {
        let t = &mut w.wins.get_mut(h)?.members[target as usize];
        let Some(pos) = t.lockers.iter().position(|&(who, _)| who == r as i32) else {
            return Err(win_err(
                MPI_ERR_RMA_SYNC,
                format!("MPI_Win_unlock: rank {r} holds no lock on rank {target}"),
            ));
        };
        Ok(t.lockers.remove(pos).1)
    })?;
    // The operations of the epoch complete before the lock is released.
    flush(me, h, target)?;
    with_world(|w| -> MpiResult<()> {
        let granted = w.wins.get_mut(h)?.members[target as usize]
            .lock
            .release(exclusive);
        for a in granted {
            w.kernel.complete(a);
        }
        Ok(())
    })
}

/// `MPI_Win_lock_all`: a shared lock on every member.
pub(crate) fn lock_all(me: u32, h: c_int) -> MpiResult<()> {
    let n = with_win(me, h, |w, _| Ok(w.wins.get(h)?.members.len()))?;
    for t in 0..n as i32 {
        lock(me, h, MPI_LOCK_SHARED, t)?;
    }
    Ok(())
}

/// `MPI_Win_unlock_all`.
pub(crate) fn unlock_all(me: u32, h: c_int) -> MpiResult<()> {
    let n = with_win(me, h, |w, _| Ok(w.wins.get(h)?.members.len()))?;
    for t in 0..n as i32 {
        unlock(me, h, t)?;
    }
    Ok(())
}

/// Takes (or, with `release`, gives back) the atomicity lock of `target`.
fn atomic_section(me: u32, h: c_int, target: i32, release: bool) -> MpiResult<()> {
    let wait_for = with_world(|w| -> MpiResult<Option<ActivityId>> {
        let ctx = w.ranks[me as usize].ctx();
        let t = &mut w.wins.get_mut(h)?.members[target as usize];
        if release {
            for a in t.atomic.release(true) {
                w.kernel.complete(a);
            }
            return Ok(None);
        }
        Ok(t.atomic.take_or_queue(true, || ctx.manual_create()))
    })?;
    if let Some(a) = wait_for {
        wait_granted(me, a, None);
    }
    Ok(())
}

/// Waits until a lock is granted to `me` (its activity `a` completes);
/// `blocked` says what for in deadlock reports.
fn wait_granted(me: u32, a: ActivityId, blocked: Option<BlockInfo>) {
    let ctx = with_world(|w| {
        if blocked.is_some() {
            w.ranks[me as usize].blocked = blocked;
        }
        w.ranks[me as usize].ctx()
    });
    ctx.wait(a);
    with_world(|w| {
        if blocked.is_some() {
            w.ranks[me as usize].blocked = None;
        }
        w.kernel.release(a);
    });
}

/// `MPI_Get_accumulate` (and `MPI_Fetch_and_op`): the target's data goes to
/// `result`, then `op` combines `origin` into it, atomically.
#[allow(clippy::too_many_arguments)]
pub(crate) fn get_accumulate(
    me: u32,
    h: c_int,
    call: &'static str,
    origin: Side,
    result: Side,
    target: i32,
    disp: isize,
    tside: Side,
    op: Op,
) -> MpiResult<()> {
    if target == MPI_PROC_NULL {
        return Ok(());
    }
    target_world(me, h, target)?;
    atomic_section(me, h, target, false)?;
    let r = (|| {
        if let Some(req) = operate(me, h, Access::Get, result, target, disp, tside, true)? {
            wait(me, req, call);
        }
        if !matches!(op, Op::Noop) {
            operate(me, h, Access::Accumulate(op), origin, target, disp, tside, false)?;
        }
        Ok(())
    })();
    atomic_section(me, h, target, true)?;
    r
}

/// `MPI_Compare_and_swap`: the target's element goes to `result`; if it
/// equals `compare`, `origin` replaces it.
#[allow(clippy::too_many_arguments)]
pub(crate) fn compare_and_swap(
    me: u32,
    h: c_int,
    origin: *const u8,
    compare: *const u8,
    result: *mut u8,
    dtype: i32,
    target: i32,
    disp: isize,
) -> MpiResult<()> {
    const CALL: &str = "MPI_Compare_and_swap";
    if target == MPI_PROC_NULL {
        return Ok(());
    }
    let size = with_world(|w| dtype_of(w, dtype).map(|d| d.size))?;
    target_world(me, h, target)?;
    atomic_section(me, h, target, false)?;
    let one = |buf: *const u8| Side {
        buf: buf as *mut u8,
        count: 1,
        dtype,
    };
    let r = (|| {
        if let Some(req) = operate(me, h, Access::Get, one(result), target, disp, one(result), true)? {
            wait(me, req, CALL);
        }
        // Safety: the three buffers hold one element of `dtype`, as MPI requires.
        let equal = unsafe {
            std::slice::from_raw_parts(result as *const u8, size) == std::slice::from_raw_parts(compare, size)
        };
        if equal {
            operate(me, h, Access::Put, one(origin), target, disp, one(origin), false)?;
            // The swap lands before the next atomic operation on this target
            // reads (SMPI leaves it in flight: two ranks could both win).
            flush(me, h, target)?;
        }
        Ok(())
    })();
    atomic_section(me, h, target, true)?;
    r
}

// ------------------------------------------------------------------ queries

/// `MPI_Win_shared_query`: size, displacement unit and base of `target`'s part
/// (of the first member with a non-empty part for `MPI_PROC_NULL`).
pub(crate) fn shared_query(me: u32, h: c_int, target: i32) -> MpiResult<(isize, i32, *mut u8)> {
    with_win(me, h, |w, _| {
        let win = w.wins.get(h)?;
        win.need_flavor(
            MPI_WIN_FLAVOR_SHARED,
            "MPI_Win_shared_query needs a window made by MPI_Win_allocate_shared",
        )?;
        let m = if target == MPI_PROC_NULL {
            win.members.iter().find(|m| m.size > 0)
        } else {
            win.members.get(
                usize::try_from(target)
                    .map_err(|_| win_err(MPI_ERR_RANK, format!("invalid rank {target}")))?,
            )
        };
        Ok(m.map_or((0, 1, std::ptr::null_mut()), |m| (m.size, m.disp_unit, m.base)))
    })
}

/// `MPI_Win_attach`.
pub(crate) fn attach(me: u32, h: c_int, base: *mut u8, size: isize) -> MpiResult<()> {
    with_win(me, h, |w, r| {
        let win = w.wins.get_mut(h)?;
        win.need_flavor(MPI_WIN_FLAVOR_DYNAMIC, "MPI_Win_attach needs a dynamic window")?;
        if size < 0 {
            return Err(win_err(MPI_ERR_SIZE, format!("negative size {size}")));
        }
        let m = &mut win.members[r];
        m.attached.push((base as usize, size as usize));
        m.size += size;
        Ok(())
    })
}

/// `MPI_Win_detach`.
pub(crate) fn detach(me: u32, h: c_int, base: *const u8) -> MpiResult<()> {
    with_win(me, h, |w, r| {
        let win = w.wins.get_mut(h)?;
        win.need_flavor(MPI_WIN_FLAVOR_DYNAMIC, "MPI_Win_detach needs a dynamic window")?;
        let m = &mut win.members[r];
        let Some(pos) = m.attached.iter().position(|&(a, _)| a == base as usize) else {
            return Err(win_err(
                MPI_ERR_RMA_ATTACH,
                format!("MPI_Win_detach: no memory attached at {base:p}"),
            ));
        };
        let (_, len) = m.attached.remove(pos);
        m.size -= len as isize;
        Ok(())
    })
}

/// The world ranks of the window's members (for `MPI_Win_get_group`).
pub(crate) fn group(me: u32, h: c_int) -> MpiResult<Vec<u32>> {
    with_win(me, h, |w, _| {
        Ok(w.wins.get(h)?.members.iter().map(|m| m.world).collect())
    })
}

/// Runs `f` on the caller's part of window `h`, with the info objects.
pub(crate) fn with_member<R>(
    me: u32,
    h: c_int,
    f: impl FnOnce(&mut Member, &mut crate::mpi::info::InfoTable) -> R,
) -> MpiResult<R> {
    with_world(|w| {
        let win = w.wins.get_mut(h)?;
        let r = win.rank_of(me)?;
        Ok(f(&mut win.members[r], &mut w.infos))
    })
}

/// The windows rank `me` has not freed: (handle, its private communicator),
/// for the report of handles never freed.
pub(crate) fn open_windows(w: &World, me: u32) -> Vec<(c_int, i32)> {
    w.wins
        .table
        .iter()
        .enumerate()
        .filter_map(|(i, win)| {
            let m = win
                .as_ref()?
                .members
                .iter()
                .find(|m| m.world == me && m.joined && !m.freed)?;
            Some((i as c_int + 1, m.comm))
        })
        .collect()
}
