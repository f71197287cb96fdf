//! SMPI's SMP (two-level) collectives: the ranks of a communicator grouped by
//! the host they run on, one leader per host.
//!
//! The grouping is SMPI 3.32's `Comm::init_smp`, made on a rank's first SMP
//! collective on a communicator and kept with it ([`layout`]); it costs the
//! messages SMPI's set-up sends, in the same order:
//! 1. an `allgather__ring` of one `MPI_INT` (each rank's leader) over the
//!    communicator;
//! 2. on the leaders, an `allgather__ring` of one `MPI_INT` (each host's
//!    number of ranks) over the leaders communicator;
//! 3. a `bcast__scatter_LR_allgather` of one `MPI_INT` (uniform or not) from
//!    the leader over the intra-host communicator;
//! 4. an `allreduce__default` (default reduce to rank 0, binomial bcast) of
//!    one `MPI_INT` with `MPI_LAND` (blocked or not) over the communicator.
//!
//! A host's intra communicator holds the communicator's members on that host
//! in world-rank order (SMPI: the host's actors, in creation order); its
//! leader is the lowest world rank; the leaders communicator holds the
//! leaders in world-rank order. Both are the library's own communicators
//! (hidden handles, never freed by the program).
//!
//! Most of SMPI's SMP algorithms then assume what their name says without
//! checking it: `num_core` consecutive ranks per host, where `num_core` is the
//! intra communicator's size when the placement is uniform, else 1. The
//! algorithms here do the same (same messages, same peers), so their time is
//! SMPI's on any placement; their data is right on any placement too.

use std::rc::Rc;

use super::{barrier, bcast, reduce, CommView, BYTE, TAG_ALLGATHER};
use crate::mpi::comm::{new_entry, SmpLayout};
use crate::mpi::datatype::MPI_INT;
use crate::mpi::{with_world, CommShared, MpiResult};

/// `MPI_LAND`'s handle.
const MPI_LAND: i32 = 5;

/// Creation numbers (on the parent's context) of the two sub-communicators:
/// out of reach of the program's own creations.
const INTRA_CREATION: u64 = u64::MAX - 1;
const LEADERS_CREATION: u64 = u64::MAX - 2;

/// The host layout of `c` if a collective already made it (costs nothing).
pub(crate) fn known_layout(c: CommView) -> MpiResult<Option<Rc<SmpLayout>>> {
    with_world(|w| w.ranks[c.me as usize].comm(c.comm).map(|e| e.smp.clone()))
}

/// The host layout of `c` (made, and paid for, on the first call).
pub(crate) fn layout(c: CommView) -> MpiResult<Rc<SmpLayout>> {
    let known = with_world(|w| w.ranks[c.me as usize].comm(c.comm).map(|e| e.smp.clone()))?;
    if let Some(l) = known {
        return Ok(l);
    }
    let l = Rc::new(init(c)?);
    with_world(|w| {
        w.ranks[c.me as usize]
            .comm_mut(c.comm)
            .map(|e| e.smp = Some(l.clone()))
    })?;
    Ok(l)
}

/// SMPI's `num_core`: ranks per host if the placement is uniform, else 1.
pub(crate) fn num_core(c: CommView) -> MpiResult<i32> {
    let l = layout(c)?;
    if !l.uniform {
        return Ok(1);
    }
    let intra = CommView::new(c.me, l.intra)?;
    Ok(intra.size)
}

/// SMPI's `Comm::init_smp` for this rank (see the module docs).
fn init(c: CommView) -> MpiResult<SmpLayout> {
    let (group, context, errh, hosts) = with_world(|w| {
        let e = w.ranks[c.me as usize].comm(c.comm)?;
        let g = e.shared.group.clone();
        let hosts: Vec<_> = g.iter().map(|&r| w.hosts[r as usize]).collect();
        Ok::<_, crate::mpi::MpiError>((g, e.shared.context, e.errhandler, hosts))
    })?;
    let my_host = hosts[c.rank as usize];
    let mut local: Vec<u32> = group
        .iter()
        .zip(&hosts)
        .filter(|(_, h)| **h == my_host)
        .map(|(&r, _)| r)
        .collect();
    local.sort_unstable();
    let leader = local[0];
    let rank_of = |world: u32| group.iter().position(|&x| x == world).expect("member") as i32;
    let hidden = |members: Vec<u32>, creation: u64, color: i32| {
        let pos = members.iter().position(|&x| x == c.me).expect("member") as i32;
        with_world(|w| {
            let shared = CommShared {
                context: w.agree_context(context, creation, color),
                group: Rc::from(members),
                remote: None,
            };
            w.ranks[c.me as usize].add_hidden_comm(new_entry(shared, pos, errh))
        })
    };
    let intra = hidden(local.clone(), INTRA_CREATION, leader as i32);

    let leaders_map = ring_allgather_int(c, leader as i32)?;
    let mut leader_list: Vec<u32> = leaders_map.iter().map(|&l| l as u32).collect();
    leader_list.sort_unstable();
    leader_list.dedup();
    let leaders = (leader == c.me).then(|| hidden(leader_list.clone(), LEADERS_CREATION, 0));

    let mut uniform: i32 = 1;
    let mut node_sizes = None;
    if let Some(lh) = leaders {
        let sizes = ring_allgather_int(CommView::new(c.me, lh)?, local.len() as i32)?;
        if sizes.iter().any(|&s| s != sizes[0]) {
            uniform = 0;
            node_sizes = Some(sizes);
        }
    }
    bcast::scatter_allgather(
        CommView::new(c.me, intra)?,
        (&mut uniform as *mut i32).cast(),
        1,
        MPI_INT,
        0,
        true,
    )?;

    let blocked: i32 = local
        .windows(2)
        .all(|p| rank_of(p[1]) == rank_of(p[0]) + 1)
        .into();
    let mut all_blocked: i32 = 0;
    reduce::default_reduce(
        c,
        (&blocked as *const i32).cast(),
        (&mut all_blocked as *mut i32).cast(),
        1,
        MPI_INT,
        MPI_LAND,
        0,
    )?;
    bcast::binomial_tree(c, (&mut all_blocked as *mut i32).cast(), 1, MPI_INT, 0)?;

    Ok(SmpLayout {
        intra,
        leaders,
        leader_of: leaders_map.iter().map(|&l| rank_of(l as u32)).collect(),
        leader_ranks: leader_list.iter().map(|&l| rank_of(l)).collect(),
        node_sizes,
        uniform: uniform != 0,
        blocked: all_blocked != 0,
    })
}

/// SMPI's `allgather__ring` of one `MPI_INT` per rank: at step i, send mine
/// to rank + i and receive rank − i's.
fn ring_allgather_int(c: CommView, mine: i32) -> MpiResult<Vec<i32>> {
    let n = c.size;
    let mut all = vec![0i32; n as usize];
    all[c.rank as usize] = mine;
    for i in 1..n {
        let src = (c.rank - i + n) % n;
        let dst = (c.rank + i) % n;
        c.sendrecv(
            (&mine as *const i32).cast(),
            1,
            MPI_INT,
            dst,
            all[src as usize..].as_mut_ptr().cast(),
            1,
            MPI_INT,
            src,
            TAG_ALLGATHER,
        )?;
    }
    Ok(all)
}

/// SMPI's `barrier__mpich_smp`: a Bruck barrier inside each host (SMPI's
/// `barrier__mpich`), one between the leaders, then each leader releases its
/// host with a binomial bcast of one byte (`bcast__mpich` on so small a
/// message).
pub(crate) fn mpich_smp_barrier(c: CommView) -> MpiResult<()> {
    let l = layout(c)?;
    let intra = CommView::new(c.me, l.intra)?;
    barrier::bruck(intra)?;
    if let Some(lh) = l.leaders {
        barrier::bruck(CommView::new(c.me, lh)?)?;
    }
    let mut byte = 0u8;
    bcast::binomial_tree(intra, &mut byte, 1, BYTE, 0)
}
