//! Communicators (MPI chapter 7): how they are created — derived from a
//! parent (dup, split, create, topologies), between two groups
//! (intercommunicators: create, merge, split) — and the context every member
//! agrees on, so that messages of different communicators never match.
//!
//! Creation costs what it costs in SMPI 3.32: its communicator constructor
//! broadcasts the new communicator's id (see [`derive_comm`]), and splits
//! exchange (color, key) tables with a collective.

use std::ffi::c_int;
use std::rc::Rc;

use crate::coll::{self, CommView};
use crate::mpi::datatype::MPI_INT;
use crate::mpi::{
    self as rt, mpi_err, with_world, CommEntry, CommShared, Group, MpiResult, MPI_COMM_NULL, MPI_UNDEFINED,
};

/// `MPI_Comm_split` on an intra- or intercommunicator.
pub(crate) fn split(me: u32, comm: c_int, color: c_int, key: c_int) -> MpiResult<c_int> {
    if color < 0 && color != MPI_UNDEFINED {
        return Err(mpi_err(
            crate::mpi::MPI_ERR_ARG,
            format!("invalid color {color} (a color is non-negative, or MPI_UNDEFINED)"),
        ));
    }
    let inter = with_world(|w| w.ranks[me as usize].comm(comm).map(|c| c.shared.remote.is_some()))?;
    if inter {
        return split_intercomm(me, comm, color, key);
    }
    let c = CommView::new(me, comm)?;
    let pairs = coll::split_tables(c, color, key)?;
    let pairs = match pairs {
        Some(p) if color != MPI_UNDEFINED => p,
        _ => {
            // Still count the creation so contexts stay agreed.
            with_world(|w| w.ranks[me as usize].comm_mut(comm).map(|p| p.creations += 1))?;
            return Ok(MPI_COMM_NULL);
        }
    };
    let parent_group = with_world(|w| w.ranks[me as usize].comm(comm).map(|p| p.shared.group.clone()))?;
    derive_comm(me, comm, color, Some(split_group(&pairs, &parent_group, color)))
}

/// `MPI_Comm_create`: on an intercommunicator, each side names a subgroup of
/// its own group.
pub(crate) fn create(me: u32, comm: c_int, group: Group) -> MpiResult<c_int> {
    let inter = with_world(|w| w.ranks[me as usize].comm(comm).map(|c| c.shared.remote.is_some()))?;
    if inter {
        let (color, key) = match group.iter().position(|&x| x == me) {
            Some(p) => (0, p as i32),
            None => (MPI_UNDEFINED, 0),
        };
        return split_intercomm(me, comm, color, key);
    }
    derive_comm(me, comm, 0, Some(group.to_vec()))
}

/// `MPI_Comm_compare`: `MPI_IDENT` (0), `MPI_CONGRUENT` (1), `MPI_SIMILAR` (2)
/// or `MPI_UNEQUAL` (3).
pub(crate) fn compare(me: u32, c1: c_int, c2: c_int) -> MpiResult<c_int> {
    with_world(|w| {
        let a = w.ranks[me as usize].comm(c1)?;
        let b = w.ranks[me as usize].comm(c2)?;
        Ok(if c1 == c2 || Rc::ptr_eq(&a.shared, &b.shared) {
            0
        } else if a.shared.group == b.shared.group {
            1
        } else {
            let mut x = a.shared.group.to_vec();
            let mut y = b.shared.group.to_vec();
            x.sort();
            y.sort();
            if x == y {
                2
            } else {
                3
            }
        })
    })
}

/// `MPI_Intercomm_create`: context pairs are allocated by the lower leader and
/// exchanged; both groups then know the remote group's world ranks.
pub(crate) fn intercomm_create(
    me: u32,
    local: c_int,
    local_leader: c_int,
    peer: c_int,
    remote_leader: c_int,
    tag: c_int,
) -> MpiResult<c_int> {
    let lc = CommView::new(me, local)?;
    let (local_group, errh) = with_world(|w| {
        w.ranks[me as usize]
            .comm(local)
            .map(|c| (c.shared.group.clone(), c.errhandler))
    })?;
    // Leaders exchange (context proposal, group size, group) over the peer communicator.
    let mut info = [0i32; 2];
    let mut remote: Vec<i32> = Vec::new();
    if lc.rank == local_leader {
        let pc = CommView::new(me, peer)?;
        let my_world = me as i32;
        let ctx = with_world(|w| {
            let c = w.next_context;
            w.next_context += 2;
            c
        });
        let mine = [ctx as i32, local_group.len() as i32, my_world];
        let mut theirs = [0i32; 3];
        exchange_ints(me, peer, remote_leader, tag, false, &mine, &mut theirs)?;
        let lg: Vec<i32> = local_group.iter().map(|&x| x as i32).collect();
        remote = vec![0; theirs[1] as usize];
        exchange_ints(me, peer, remote_leader, tag, false, &lg, &mut remote)?;
        // The leader with the lower world rank's proposal wins.
        info = [if my_world < theirs[2] { mine[0] } else { theirs[0] }, theirs[1]];
        let _ = pc;
    }
    coll::bcast(lc, info.as_mut_ptr() as *mut u8, 2, MPI_INT, local_leader)?;
    if lc.rank != local_leader {
        remote = vec![0; info[1] as usize];
    }
    coll::bcast(
        lc,
        remote.as_mut_ptr() as *mut u8,
        remote.len(),
        MPI_INT,
        local_leader,
    )?;
    let shared = CommShared {
        context: info[0] as u32,
        group: local_group.clone(),
        remote: Some(remote.iter().map(|&x| x as u32).collect()),
    };
    Ok(add_entry(me, shared, lc.rank, errh))
}

/// `MPI_Intercomm_merge`: one intracommunicator over both groups, the group
/// with `high` false first (the lower leader's first when both agree).
pub(crate) fn intercomm_merge(me: u32, inter: c_int, high: c_int) -> MpiResult<c_int> {
    let x = InterCreation::start(me, inter)?;
    let (shared, remote, my_rank) = (&x.shared, &x.remote, x.my_rank);
    // Exchange the `high` flags: every rank sends its flag to remote rank 0
    // of... simpler and exact: all-to-all of flags between the two groups' rank 0s.
    let flag = [high != 0];
    let mut other = [0i32; 1];
    let mine_i = [flag[0] as i32];
    if my_rank == 0 {
        exchange_ints(me, inter, 0, 7777, true, &mine_i, &mut other)?;
    }
    // Share the remote flag inside the local group through a temporary local communicator.
    let lh = x.local_comm(me, i32::MAX - 1);
    coll::bcast(
        CommView::new(me, lh)?,
        other.as_mut_ptr() as *mut u8,
        1,
        MPI_INT,
        0,
    )?;
    let mut mine0 = mine_i;
    coll::bcast(
        CommView::new(me, lh)?,
        mine0.as_mut_ptr() as *mut u8,
        1,
        MPI_INT,
        0,
    )?;
    with_world(|w| w.ranks[me as usize].comms[lh as usize] = None);
    let (my_high, their_high) = (mine0[0] != 0, other[0] != 0);
    let local_first = if my_high == their_high {
        shared.group[0] < remote[0]
    } else {
        !my_high
    };
    let mut group: Vec<u32> = Vec::new();
    if local_first {
        group.extend(shared.group.iter());
        group.extend(remote.iter());
    } else {
        group.extend(remote.iter());
        group.extend(shared.group.iter());
    }
    let pos = group.iter().position(|&m| m == me).expect("member") as i32;
    Ok(x.finish(me, i32::MAX, group, None, pos))
}

/// `MPI_Comm_create_group`: collective over the group's members only.
pub(crate) fn create_group(me: u32, comm: c_int, grp: Group, tag: c_int) -> MpiResult<c_int> {
    let (pctx, errh) = with_world(|w| {
        w.ranks[me as usize]
            .comm(comm)
            .map(|c| (c.shared.context, c.errhandler))
    })?;
    let Some(pos) = grp.iter().position(|&x| x == me) else {
        return Ok(MPI_COMM_NULL);
    };
    let seq = with_world(|w| {
        let e = w
            .create_group_calls
            .entry((me, pctx, grp.to_vec(), tag))
            .or_insert(0);
        *e += 1;
        *e
    });
    // Same key on every member: parent context, a hash of the group, the tag and the call number.
    let mut h: u64 = 1469598103934665603;
    for &x in grp.iter() {
        h = (h ^ u64::from(x)).wrapping_mul(1099511628211);
    }
    let context = with_world(|w| w.agree_context(pctx ^ 0x4000_0000, h ^ (seq << 40), tag));
    let shared = CommShared {
        context,
        group: grp.clone(),
        remote: None,
    };
    Ok(add_entry(me, shared, pos as i32, errh))
}

/// Creates this rank's entry of a communicator derived from `parent` (same
/// group, or `group`), then, like SMPI 3.32's communicator constructor, has
/// the new communicator's rank 0 broadcast its id (one `MPI_INT`, with the
/// selected bcast): that message is part of what a Comm_dup / split / create /
/// Cart_create costs in simulated time.
pub(crate) fn derive_comm(me: u32, parent: c_int, color: i32, group: Option<Vec<u32>>) -> MpiResult<c_int> {
    let h = new_comm_entry(me, parent, color, group)?;
    announce_comm(me, h)?;
    Ok(h)
}

/// The id broadcast of SMPI's communicator constructor (see [`derive_comm`]).
pub(crate) fn announce_comm(me: u32, h: c_int) -> MpiResult<()> {
    if h != MPI_COMM_NULL {
        let mut id: c_int = 0;
        coll::bcast(
            CommView::new(me, h)?,
            (&mut id as *mut c_int).cast(),
            1,
            MPI_INT,
            0,
        )?;
    }
    Ok(())
}

pub(crate) fn new_comm_entry(
    me: u32,
    parent: c_int,
    color: i32,
    group: Option<Vec<u32>>,
) -> MpiResult<c_int> {
    with_world(|w| {
        let r = &mut w.ranks[me as usize];
        let p = r.comm_mut(parent)?;
        let creation = p.creations;
        p.creations += 1;
        let (pctx, errh) = (p.shared.context, p.errhandler);
        let group = match group {
            Some(g) => g,
            None => p.shared.group.to_vec(),
        };
        let Some(my_rank) = group.iter().position(|&x| x == me) else {
            return Ok(MPI_COMM_NULL);
        };
        let shared = CommShared {
            context: w.agree_context(pctx, creation, color),
            group: Rc::from(group),
            remote: None,
        };
        Ok(w.ranks[me as usize].add_comm(new_entry(shared, my_rank as i32, errh)))
    })
}

/// Comm_dup's work. `announce`: pay SMPI's id broadcast on the new
/// intra-communicator (MPI_Comm_idup does not: it must not block).
pub(crate) unsafe fn dup_comm(me: u32, comm: c_int, announce: bool) -> MpiResult<c_int> {
    // Safety: the caller upholds this function's contract (see its `# Safety`).
    unsafe {
        {
            let (remote, topo) = with_world(|w| {
                w.ranks[me as usize]
                    .comm(comm)
                    .map(|c| (c.shared.remote.clone(), c.topo.clone()))
            })?;
            let h = new_comm_entry(me, comm, i32::MIN, None)?;
            if announce && remote.is_none() {
                announce_comm(me, h)?;
            }
            with_world(|w| {
                if let Ok(e) = w.ranks[me as usize].comm_mut(h) {
                    e.topo = topo;
                    if remote.is_some() {
                        let sh = &e.shared;
                        e.shared = Rc::new(CommShared {
                            context: sh.context,
                            group: sh.group.clone(),
                            remote,
                        });
                    }
                }
            });
            crate::mpi::attr::copy_comm_attrs(me, comm, h)?;
            Ok(h)
        }
    }
}

/// A rank's entry of a new communicator.
pub(crate) fn new_entry(shared: CommShared, my_rank: i32, errh: i32) -> CommEntry {
    CommEntry {
        shared: Rc::new(shared),
        my_rank,
        errhandler: errh,
        name: String::new(),
        attrs: Default::default(),
        creations: 0,
        topo: None,
        smp: None,
    }
}

/// MPI_Comm_split on an intercommunicator: the result pairs, for each color,
/// the local ranks of that color with the remote ranks of that color.
pub(crate) fn split_intercomm(me: u32, comm: c_int, color: c_int, key: c_int) -> MpiResult<c_int> {
    let x = InterCreation::start(me, comm)?;
    // A temporary communicator over the local group, for the local exchanges.
    let lh = x.local_comm(me, i32::MAX - 2);
    let lc = CommView::new(me, lh)?;
    let mine = coll::allgather_i32_pairs(lc, [color, key])?;
    // Local leaders swap their groups' (color, key) tables over the intercommunicator.
    let mut theirs = vec![[0i32; 2]; x.remote.len()];
    if x.my_rank == 0 {
        exchange_ints(
            me,
            comm,
            0,
            7778,
            true,
            mine.as_flattened(),
            theirs.as_flattened_mut(),
        )?;
    }
    coll::bcast(lc, theirs.as_mut_ptr() as *mut u8, 2 * theirs.len(), MPI_INT, 0)?;
    with_world(|w| w.ranks[me as usize].comms[lh as usize] = None);
    if color == MPI_UNDEFINED {
        return Ok(MPI_COMM_NULL);
    }
    let lgroup = split_group(&mine, &x.shared.group, color);
    let rgroup = split_group(&theirs, &x.remote, color);
    let pos = lgroup.iter().position(|&x| x == me).expect("member of its color") as i32;
    if rgroup.is_empty() {
        return Ok(MPI_COMM_NULL);
    }
    Ok(x.finish(me, color, lgroup, Some(Rc::from(rgroup)), pos))
}

/// Adds this rank's entry of a new communicator; its handle.
fn add_entry(me: u32, shared: CommShared, my_rank: i32, errh: i32) -> c_int {
    let entry = new_entry(shared, my_rank, errh);
    with_world(|w| w.ranks[me as usize].add_comm(entry))
}

/// One `MPI_INT` exchange with rank `peer` of `comm`, a sendrecv with tag
/// `tag` (`coll`: in the communicator's collective context): `send` goes,
/// `recv` is filled.
fn exchange_ints(
    me: u32,
    comm: c_int,
    peer: c_int,
    tag: c_int,
    coll: bool,
    send: &[i32],
    recv: &mut [i32],
) -> MpiResult<()> {
    let arg = |buf: *const i32, count: usize| rt::P2p {
        buf: buf as *mut u8,
        count,
        dtype: MPI_INT,
        peer,
        tag,
        comm,
        coll,
    };
    rt::sendrecv(
        me,
        &arg(send.as_ptr(), send.len()),
        &arg(recv.as_mut_ptr(), recv.len()),
    )?;
    Ok(())
}

/// A communicator being made from an intercommunicator (merge, split):
/// the creation is counted on the intercommunicator, so that every member
/// agrees on the contexts of what it makes.
struct InterCreation {
    shared: Rc<CommShared>,
    remote: Group,
    my_rank: i32,
    errh: i32,
    creation: u64,
}

impl InterCreation {
    fn start(me: u32, inter: c_int) -> MpiResult<Self> {
        let (shared, my_rank, errh, creation) = with_world(|w| {
            let c = w.ranks[me as usize].comm_mut(inter)?;
            let cr = c.creations;
            c.creations += 1;
            Ok::<_, rt::MpiError>((c.shared.clone(), c.my_rank, c.errhandler, cr))
        })?;
        let remote = shared
            .remote
            .clone()
            .ok_or_else(|| mpi_err(rt::MPI_ERR_COMM, "not an intercommunicator"))?;
        Ok(InterCreation {
            shared,
            remote,
            my_rank,
            errh,
            creation,
        })
    }

    /// A temporary intracommunicator over the local group (the caller frees
    /// it), for the local exchanges; `color` sets its context apart.
    fn local_comm(&self, me: u32, color: i32) -> c_int {
        let shared = CommShared {
            context: with_world(|w| w.agree_context(self.shared.context, self.creation, color)),
            group: self.shared.group.clone(),
            remote: None,
        };
        add_entry(me, shared, self.my_rank, self.errh)
    }

    /// Adds this rank's entry (rank `pos` of `group`) of the new
    /// communicator, whose context is agreed for `color`; its handle.
    fn finish(&self, me: u32, color: i32, group: Vec<u32>, remote: Option<Group>, pos: i32) -> c_int {
        let shared = CommShared {
            context: with_world(|w| w.agree_context(self.shared.context, self.creation, color)),
            group: Rc::from(group),
            remote,
        };
        add_entry(me, shared, pos, self.errh)
    }
}

/// The members of `group` whose entry in the (color, key) table of a split
/// has color `color`, ordered by key (then by rank).
fn split_group(table: &[[i32; 2]], group: &[u32], color: i32) -> Vec<u32> {
    let mut members: Vec<(i32, usize)> = table
        .iter()
        .enumerate()
        .filter(|(_, p)| p[0] == color)
        .map(|(i, p)| (p[1], i))
        .collect();
    members.sort();
    members.iter().map(|&(_, i)| group[i]).collect()
}

/// How a communicator's ranks sit on hosts, as SMPI 3.32's `Comm::init_smp`
/// finds it (made and paid for by `coll::smp::layout`, on the first SMP
/// collective a rank calls on the communicator).
#[derive(Debug)]
pub(crate) struct SmpLayout {
    /// The members on this rank's host, in world-rank order (hidden handle).
    pub intra: c_int,
    /// One member per host, the lowest world rank of each, in world-rank
    /// order (hidden handle); `None` on the other ranks.
    pub leaders: Option<c_int>,
    /// For each rank of the communicator, the rank (in the communicator) of
    /// its host's leader (SMPI's `leaders_map`, in ranks rather than pids).
    pub leader_of: Vec<c_int>,
    /// The leaders' ranks in the communicator, in leaders-communicator order.
    pub leader_ranks: Vec<c_int>,
    /// Members per host, in leaders-communicator order, when hosts hold
    /// different numbers of ranks (SMPI's `non_uniform_map`); known to the
    /// leaders only.
    pub node_sizes: Option<Vec<c_int>>,
    /// Every host holds as many ranks as the others.
    pub uniform: bool,
    /// The ranks of each host are consecutive in the communicator.
    pub blocked: bool,
}
