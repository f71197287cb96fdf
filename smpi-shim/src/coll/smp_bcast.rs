//! SMPI's SMP broadcasts (`SMP_binomial`, `SMP_binary`, `SMP_linear`): the
//! root hands the data to rank 0, the host leaders (ranks that are multiples
//! of `num_core`, see `smp.rs`) pass it on between hosts, and each leader
//! inside its host.
//!
//! On a non-uniform placement SMPI runs its `mpich` bcast instead, which we
//! do too ([`mpich_fallback`]). Where SMPI's index arithmetic sends to a rank
//! outside the sender's host (a host of a non-power-of-two number of ranks
//! for `SMP_binomial`; one rank per host for `SMP_linear`), SMPI leaves a
//! stray message (and deadlocks on large messages); we keep the messages
//! inside the host (`SMP_linear` on one rank per host becomes a chain), so
//! those placements do not have SMPI's time.

use super::smp::{layout, num_core};
use super::{bcast, dtype_of, elem, CommView, TAG_BCAST};
use crate::mpi::MpiResult;

/// The data goes from `root` to rank 0 first (a blocking send).
fn root_to_zero(c: CommView, buf: *mut u8, count: usize, dtype: i32, root: i32) -> MpiResult<()> {
    if root != 0 {
        if c.rank == root {
            c.send(buf, count, dtype, 0, TAG_BCAST)?;
        } else if c.rank == 0 {
            c.recv(buf, count, dtype, root, TAG_BCAST)?;
        }
    }
    Ok(())
}

/// SMPI's `bcast__mpich` once the placement is known not to be uniform:
/// binomial below 12288 B or up to 8 ranks, scatter + recursive-doubling
/// allgather below 524288 B on an even size, else scatter + ring allgather.
pub(crate) fn mpich_fallback(
    c: CommView,
    buf: *mut u8,
    count: usize,
    dtype: i32,
    root: i32,
) -> MpiResult<()> {
    let bytes = dtype_of(dtype)?.size * count;
    if bytes < 12288 || c.size <= 8 {
        bcast::binomial_tree(c, buf, count, dtype, root)
    } else if bytes < 524288 && c.size % 2 == 0 {
        bcast::scatter_allgather(c, buf, count, dtype, root, false)
    } else {
        bcast::scatter_allgather(c, buf, count, dtype, root, true)
    }
}

/// SMPI's `SMP_binomial`: a binomial tree over the leaders from rank 0, then
/// a binomial tree inside each host, blocking sends.
pub(crate) fn binomial(c: CommView, buf: *mut u8, count: usize, dtype: i32, root: i32) -> MpiResult<()> {
    let nc = num_core(c)?;
    if nc == 1 && !super::smp::layout(c)?.uniform {
        return mpich_fallback(c, buf, count, dtype, root);
    }
    let (size, rank) = (c.size, c.rank);
    let inter_rank = rank / nc;
    let inter_size = (size - 1) / nc + 1;
    let intra_rank = rank % nc;
    let base = inter_rank * nc;
    let intra_size = if base == (size / nc) * nc { size - base } else { nc };
    root_to_zero(c, buf, count, dtype, root)?;
    if intra_rank == 0 {
        binomial_tree(c, buf, count, dtype, inter_rank, inter_size, |v| v * nc)?;
    }
    binomial_tree(c, buf, count, dtype, intra_rank, intra_size, |v| base + v)
}

/// A binomial bcast from virtual rank 0 among `n` virtual ranks (`v` is
/// mine, `real` maps a virtual rank to one of `c`).
fn binomial_tree(
    c: CommView,
    buf: *mut u8,
    count: usize,
    dtype: i32,
    v: i32,
    n: i32,
    real: impl Fn(i32) -> i32,
) -> MpiResult<()> {
    let mut mask = 1;
    while mask < n {
        if v & mask != 0 {
            c.recv(buf, count, dtype, real(v - mask), TAG_BCAST)?;
            break;
        }
        mask <<= 1;
    }
    mask >>= 1;
    while mask > 0 {
        if v + mask < n {
            c.send(buf, count, dtype, real(v + mask), TAG_BCAST)?;
        }
        mask >>= 1;
    }
    Ok(())
}

/// Elements per 8 KiB segment of `SMP_binary` / `SMP_linear` (at least 1).
fn segment(extent: isize) -> usize {
    if extent <= 0 {
        1
    } else {
        ((8192 / extent) as usize).max(1)
    }
}

/// A tree broadcast from rank 0 in 8 KiB segments (SMPI's SMP_binary and
/// SMP_linear): one segment or less goes hop by hop (receive, then blocking
/// sends to each child in order); otherwise every segment is posted at once
/// and forwarded as it arrives; the leftover elements go through the
/// configured bcast.
fn segmented_tree(
    c: CommView,
    buf: *mut u8,
    count: usize,
    dtype: i32,
    root: i32,
    parent: Option<i32>,
    children: &[i32],
) -> MpiResult<()> {
    let dt = dtype_of(dtype)?;
    let seg = segment(dt.extent);
    root_to_zero(c, buf, count, dtype, root)?;
    if count <= seg {
        if let Some(p) = parent {
            c.recv(buf, count, dtype, p, TAG_BCAST)?;
        }
        for &ch in children {
            c.send(buf, count, dtype, ch, TAG_BCAST)?;
        }
        return Ok(());
    }
    let pipe = count / seg;
    let at = |i: usize| elem(buf, &dt, i * seg);
    match parent {
        None => {
            for i in 0..pipe {
                for &ch in children {
                    c.send(at(i), seg, dtype, ch, TAG_BCAST)?;
                }
            }
        }
        Some(p) => {
            let mut recvs = Vec::with_capacity(pipe);
            for i in 0..pipe {
                recvs.push(c.irecv(at(i), seg, dtype, p, TAG_BCAST)?);
            }
            if children.is_empty() {
                c.waitall_checked(&recvs)?;
            } else {
                for (i, &rq) in recvs.iter().enumerate() {
                    c.wait(rq)?;
                    for &ch in children {
                        c.send(at(i), seg, dtype, ch, TAG_BCAST)?;
                    }
                }
            }
        }
    }
    if pipe * seg < count {
        super::bcast(c, at(pipe), count - pipe * seg, dtype, root)?;
    }
    Ok(())
}

/// SMPI's `SMP_binary`: a binary heap over the leaders (leader of host h
/// feeds hosts 2h+1 and 2h+2) and one inside each host, 8 KiB segments.
pub(crate) fn binary(c: CommView, buf: *mut u8, count: usize, dtype: i32, root: i32) -> MpiResult<()> {
    let nc = num_core(c)?;
    if nc == 1 && !super::smp::layout(c)?.uniform {
        return mpich_fallback(c, buf, count, dtype, root);
    }
    let (size, rank) = (c.size, c.rank);
    let (host, local) = (rank / nc, rank % nc);
    let base = host * nc;
    let here = if base == (size / nc) * nc { size - base } else { nc };
    let parent = if rank == 0 {
        None
    } else if local == 0 {
        Some((host - 1) / 2 * nc)
    } else {
        Some(base + (local - 1) / 2)
    };
    let mut children = Vec::new();
    if local == 0 {
        children.extend(
            [(2 * host + 1) * nc, (2 * host + 2) * nc]
                .into_iter()
                .filter(|&k| k < size),
        );
    }
    children.extend(
        [2 * local + 1, 2 * local + 2]
            .into_iter()
            .filter(|&k| k < here)
            .map(|k| base + k),
    );
    segmented_tree(c, buf, count, dtype, root, parent, &children)
}

/// SMPI's `SMP_linear`: a chain over the leaders (host h feeds host h+1),
/// each leader also starting a chain inside its host, 8 KiB segments; when
/// one host holds every rank, SMPI's default bcast (binomial).
pub(crate) fn linear(c: CommView, buf: *mut u8, count: usize, dtype: i32, root: i32) -> MpiResult<()> {
    let nc = num_core(c)?;
    if nc == 1 && !super::smp::layout(c)?.uniform {
        return mpich_fallback(c, buf, count, dtype, root);
    }
    let (size, rank) = (c.size, c.rank);
    if size <= nc {
        return bcast::binomial_tree(c, buf, count, dtype, root);
    }
    let base = rank / nc * nc;
    let next_host = base + nc;
    let parent = if rank == 0 {
        None
    } else if rank % nc == 0 {
        Some(rank - nc)
    } else {
        Some(rank - 1)
    };
    let mut children = Vec::new();
    if rank % nc == 0 && next_host < size {
        children.push(next_host);
    }
    if rank + 1 < (base + nc).min(size) {
        children.push(rank + 1);
    }
    segmented_tree(c, buf, count, dtype, root, parent, &children)
}

/// MVAPICH2's inter-node step (SMPI's `bcast__mvapich2_inter_node` as its
/// two-level bcast uses it): a root that is not its host's leader first
/// sends to that leader, then the leaders run SMPI's `bcast__mpich` among
/// themselves from the root's leader. The other ranks get nothing yet.
fn inter_node(c: CommView, buf: *mut u8, count: usize, dtype: i32, root: i32) -> MpiResult<()> {
    inter_node_with(c, buf, count, dtype, root, LeadersBcast::Mpich)
}

/// The bcast between the leaders in MVAPICH2's inter-node step: SMPI's
/// `bcast__mpich` unless MVAPICH2's tuning table (`select_mvapich2.rs`)
/// names another.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LeadersBcast {
    Mpich,
    Binomial,
    ScatterRing,
    ScatterDoubling,
}

/// [`inter_node`] with the leaders' bcast `leaders`.
fn inter_node_with(
    c: CommView,
    buf: *mut u8,
    count: usize,
    dtype: i32,
    root: i32,
    leaders: LeadersBcast,
) -> MpiResult<()> {
    let l = layout(c)?;
    let intra = CommView::new(c.me, l.intra)?;
    let leader_of_root = l.leader_of[root as usize];
    if intra.size > 1 {
        if intra.rank == 0 && root != c.rank && leader_of_root == c.rank {
            c.recv(buf, count, dtype, root, TAG_BCAST)?;
        }
        if intra.rank != 0 && root == c.rank {
            c.send(buf, count, dtype, leader_of_root, TAG_BCAST)?;
        }
    }
    if let Some(lh) = l.leaders {
        let leader_root = l
            .leader_ranks
            .iter()
            .position(|&r| r == leader_of_root)
            .expect("a leader") as i32;
        let lc = CommView::new(c.me, lh)?;
        match leaders {
            LeadersBcast::Mpich => mpich_fallback(lc, buf, count, dtype, leader_root)?,
            LeadersBcast::Binomial => bcast::binomial_tree(lc, buf, count, dtype, leader_root)?,
            LeadersBcast::ScatterRing => bcast::scatter_allgather(lc, buf, count, dtype, leader_root, true)?,
            LeadersBcast::ScatterDoubling => {
                bcast::scatter_allgather(lc, buf, count, dtype, leader_root, false)?
            }
        }
    }
    Ok(())
}

/// SMPI's MVAPICH2 selector's two-level bcast: the inter-node step with the
/// leaders' bcast the table names, then SMPI's `bcast__mpich` inside each
/// host from its leader (also on a host of one rank, where it sends
/// nothing).
pub(crate) fn mvapich2_tuned(
    c: CommView,
    buf: *mut u8,
    count: usize,
    dtype: i32,
    root: i32,
    leaders: LeadersBcast,
) -> MpiResult<()> {
    inter_node_with(c, buf, count, dtype, root, leaders)?;
    let intra = CommView::new(c.me, layout(c)?.intra)?;
    mpich_fallback(intra, buf, count, dtype, 0)
}

/// SMPI's `mvapich2_intra_node` (MVAPICH2's two-level bcast): on up to 64
/// ranks, messages of at most 16384 B go by the binomial bcast and messages
/// of 524288 B or more by scatter + ring allgather; in between (and always
/// on more than 64 ranks), the inter-node step (the leaders get the data),
/// then inside each host SMPI's `bcast__mpich` from the leader up to
/// 131072 B, else MVAPICH2's 4-nomial intra-node bcast from the leader.
/// SMPI's `bcast__mpich` there is given the communicator's root as the
/// host's root, which is only right for root 0 (it misroutes or deadlocks
/// otherwise); we use the leader.
pub(crate) fn mvapich2_intra_node(
    c: CommView,
    buf: *mut u8,
    count: usize,
    dtype: i32,
    root: i32,
) -> MpiResult<()> {
    let bytes = dtype_of(dtype)?.size * count;
    layout(c)?;
    let two_level = c.size > 64 || (bytes > 16384 && bytes < 512 * 1024);
    if !two_level {
        return if bytes <= 16384 {
            bcast::binomial_tree(c, buf, count, dtype, root)
        } else {
            bcast::scatter_allgather(c, buf, count, dtype, root, true)
        };
    }
    inter_node(c, buf, count, dtype, root)?;
    let intra = CommView::new(c.me, layout(c)?.intra)?;
    if bytes <= 131072 {
        mpich_fallback(intra, buf, count, dtype, 0)
    } else {
        bcast::knomial(intra, buf, count, dtype, 0, 4)
    }
}

/// SMPI's `mvapich2_inter_node` forced as a bcast: MVAPICH2's inter-node
/// step alone, which leaves the ranks that do not lead a host without the
/// data (SMPI's time only with one rank per host); we complete it inside
/// each host as the two-level bcast does (SMPI's `bcast__mpich` from the
/// leader), so with several ranks per host the time is not SMPI's.
pub(crate) fn mvapich2_inter_node(
    c: CommView,
    buf: *mut u8,
    count: usize,
    dtype: i32,
    root: i32,
) -> MpiResult<()> {
    inter_node(c, buf, count, dtype, root)?;
    let intra = CommView::new(c.me, layout(c)?.intra)?;
    if intra.size > 1 {
        mpich_fallback(intra, buf, count, dtype, 0)?;
    }
    Ok(())
}
