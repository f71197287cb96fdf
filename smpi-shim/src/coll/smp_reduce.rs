//! MVAPICH2's two-level reductions as SMPI 3.32 runs them when forced
//! (`reduce` and `allreduce` `mvapich2_two_level`, MVAPICH2's tuning tables
//! not loaded): a reduction inside each host to its leader, one between the
//! leaders, then the result goes to the root (reduce) or back inside each
//! host (allreduce). The host layout is `smp.rs`'s.

use super::smp::layout;
use super::{allreduce, contribution, local_copy, pof2_floor, reduce, CommView, Reducer, TAG_REDUCE};
use crate::mpi::MpiResult;

/// Whether combining per host, then host after host in leaders order,
/// keeps rank order: each host's ranks are consecutive and the hosts come in
/// their leaders' order. If not, a non-commutative operation runs on the
/// whole communicator instead (`reduce__mpich` / recursive doubling; SMPI
/// combines out of order).
fn in_rank_order(c: CommView) -> MpiResult<bool> {
    let l = layout(c)?;
    Ok(l.blocked && l.leader_ranks.windows(2).all(|w| w[0] < w[1]))
}

/// SMPI's `reduce__mpich` on a host or leaders communicator: binomial for
/// counts below the largest power of two <= size, messages below 2048 B or
/// non-commutative operations, else reduce-scatter + gather.
fn mpich_reduce(
    c: CommView,
    sbuf: *const u8,
    rbuf: *mut u8,
    count: usize,
    red: &Reducer,
    root: i32,
) -> MpiResult<()> {
    if count < pof2_floor(c.size) as usize || red.bytes(count) < 2048 || !red.commutative {
        reduce::binomial(c, sbuf, rbuf, count, red, root)
    } else {
        reduce::scatter_gather(c, sbuf, rbuf, count, red, root)
    }
}

/// The reductions of MVAPICH2's two-level reduce when SMPI's MVAPICH2
/// selector (`select_mvapich2.rs`) names them: inside each host, then
/// between the leaders.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Tuned {
    pub intra: Inner,
    pub inter: Inner,
}

/// One of MVAPICH2's reductions as SMPI maps them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Inner {
    /// `MPIR_Reduce_shmem_MV2`: SMPI's `reduce__ompi_basic_linear`.
    Shmem,
    /// `reduce__mvapich2_knomial` (factor 4, the tables' value).
    Knomial,
    /// `reduce__binomial`.
    Binomial,
}

/// Runs `f` (operation `op`) on `c` to `root`.
#[allow(clippy::too_many_arguments)]
fn inner(
    f: Inner,
    c: CommView,
    sbuf: *const u8,
    rbuf: *mut u8,
    count: usize,
    red: &Reducer,
    op: i32,
    root: i32,
) -> MpiResult<()> {
    match f {
        Inner::Shmem => reduce::linear(c, sbuf, rbuf, count, red.dtype, op, root),
        Inner::Binomial => reduce::binomial(c, sbuf, rbuf, count, red, root),
        Inner::Knomial => super::trees_reduce::knomial(
            c,
            &super::trees_reduce::Args {
                sbuf,
                rbuf,
                count,
                op,
                root,
            },
            red,
        ),
    }
}

/// SMPI's `reduce__mvapich2_two_level`: SMPI's `reduce__mpich` inside each
/// host to its leader, then between the leaders to the root's leader, which
/// sends the result to the root if it is another rank.
///
/// All ranks on one host: below 2049 B with a commutative operation, the
/// linear reduce (`ompi_basic_linear`) to the leader, which sends the result
/// to the root; above (or non-commutative), MVAPICH2's k-nomial reduce
/// (`mvapich2_knomial`) over the whole communicator.
///
/// With `tuned` (SMPI's MVAPICH2 selector), the host's reduction is the
/// table's: `Shmem` (for a commutative operation below 131072 B per rank of
/// the host, else the k-nomial), `Binomial` or `Knomial`; the leaders'
/// reduction is the table's; a host of one rank reduces from its send
/// buffer (no copy).
#[allow(clippy::too_many_arguments)]
pub(crate) fn mvapich2_two_level(
    c: CommView,
    sbuf: *const u8,
    rbuf: *mut u8,
    count: usize,
    dtype: i32,
    op: i32,
    root: i32,
    tuned: Option<Tuned>,
) -> MpiResult<()> {
    let l = layout(c)?;
    let red = Reducer::new(op, dtype)?;
    if !red.commutative && !in_rank_order(c)? {
        return mpich_reduce(c, contribution(sbuf, rbuf), rbuf, count, &red, root);
    }
    let intra = CommView::new(c.me, l.intra)?;
    let leader_of_root = l.leader_of[root as usize];
    let leader_root = l
        .leader_ranks
        .iter()
        .position(|&r| r == leader_of_root)
        .expect("a leader") as i32;
    let mine = contribution(sbuf, rbuf);
    let mut tmp = red.temp(count);
    if intra.size == c.size {
        let stride = count as isize * red.dt.extent.max(red.dt.true_ub - red.dt.true_lb);
        if stride > 2048 || !red.commutative {
            return inner(Inner::Knomial, c, mine, rbuf, count, &red, op, root);
        }
        let out = if c.rank == root { rbuf } else { tmp.ptr() };
        reduce::linear(intra, mine, out, count, dtype, op, 0)?;
        if intra.rank == 0 && root != c.rank {
            c.send(out, count, dtype, root, TAG_REDUCE)?;
        }
        if intra.rank != 0 && root == c.rank {
            c.recv(rbuf, count, dtype, leader_of_root, TAG_REDUCE)?;
        }
        return Ok(());
    }
    // The leaders' partial results in `tmp`.
    if intra.size > 1 {
        match tuned {
            None => mpich_reduce(intra, mine, tmp.ptr(), count, &red, 0)?,
            Some(t) => {
                let f = if t.intra == Inner::Shmem
                    && !(red.commutative && red.bytes(count) < intra.size as usize * 131072)
                {
                    Inner::Knomial
                } else {
                    t.intra
                };
                inner(f, intra, mine, tmp.ptr(), count, &red, op, 0)?
            }
        }
    } else {
        local_copy(mine, count, dtype, tmp.ptr(), count, dtype)?;
    }
    let mut i_lead_root = false;
    if let Some(lh) = l.leaders {
        let leaders = CommView::new(c.me, lh)?;
        i_lead_root = leaders.rank == leader_root;
        if leaders.size > 1 {
            let mut copy = red.temp(count);
            local_copy(tmp.ptr(), count, dtype, copy.ptr(), count, dtype)?;
            let out = if c.rank == root { rbuf } else { tmp.ptr() };
            match tuned {
                None => mpich_reduce(leaders, copy.ptr(), out, count, &red, leader_root)?,
                Some(t) => inner(t.inter, leaders, copy.ptr(), out, count, &red, op, leader_root)?,
            }
        }
    }
    if intra.size > 1 {
        if intra.rank == 0 && root != c.rank && i_lead_root {
            c.send(tmp.ptr(), count, dtype, root, TAG_REDUCE)?;
        }
        if intra.rank != 0 && root == c.rank {
            c.recv(rbuf, count, dtype, leader_of_root, TAG_REDUCE)?;
        }
    }
    Ok(())
}

/// SMPI's `allreduce__mvapich2_two_level`: SMPI's `allreduce__mpich` inside
/// each host (Rabenseifner above 2048 B when the count reaches the largest
/// power of two <= the host's size and the operation commutes, else
/// recursive doubling), recursive doubling between the leaders, then the
/// configured bcast inside each host from its leader.
pub(crate) fn allreduce_two_level(
    c: CommView,
    sbuf: *const u8,
    rbuf: *mut u8,
    count: usize,
    red: &Reducer,
) -> MpiResult<()> {
    let l = layout(c)?;
    if count == 0 {
        return Ok(());
    }
    if !red.commutative && !in_rank_order(c)? {
        return allreduce::rdb(c, contribution(sbuf, rbuf), rbuf, count, red);
    }
    let intra = CommView::new(c.me, l.intra)?;
    let mine = contribution(sbuf, rbuf);
    if red.bytes(count) > 2048 && count >= pof2_floor(intra.size) as usize && red.commutative {
        allreduce::rab_rdb(intra, mine, rbuf, count, red)?;
    } else {
        allreduce::rdb(intra, mine, rbuf, count, red)?;
    }
    if let Some(lh) = l.leaders {
        if intra.size != c.size {
            let mut copy = red.temp(count);
            local_copy(rbuf, count, red.dtype, copy.ptr(), count, red.dtype)?;
            allreduce::rdb(CommView::new(c.me, lh)?, copy.ptr(), rbuf, count, red)?;
        }
    }
    super::bcast(intra, rbuf, count, red.dtype, 0)
}

/// SMPI's MVAPICH2 selector's two-level allreduce (`select_mvapich2.rs`):
/// the configured reduce (`smpi/reduce`, else the selector) to each host's
/// leader, inside the host; between the leaders (when there are several
/// hosts) recursive doubling, or MVAPICH2's reduce-scatter + allgather if
/// `rs`; then the configured bcast inside each host from its leader. (SMPI's
/// inner reduce is the selector's own `MPIR_Allreduce_reduce_shmem_MV2`,
/// which its two-level allreduce does not recognise, so it runs on the host
/// communicator.)
pub(crate) fn allreduce_mv2_tuned(
    c: CommView,
    sbuf: *const u8,
    rbuf: *mut u8,
    count: usize,
    op: i32,
    red: &Reducer,
    rs: bool,
) -> MpiResult<()> {
    let l = layout(c)?;
    if count == 0 {
        return Ok(());
    }
    let intra = CommView::new(c.me, l.intra)?;
    let mine = contribution(sbuf, rbuf);
    let mut keep = None;
    let mine = if std::ptr::eq(mine, rbuf) {
        // in place: the reduce's input must not be its output
        let mut t = red.temp(count);
        local_copy(rbuf, count, red.dtype, t.ptr(), count, red.dtype)?;
        let p = t.ptr() as *const u8;
        keep = Some(t);
        p
    } else {
        mine
    };
    super::reduce(intra, mine, rbuf, count, red.dtype, op, 0)?;
    drop(keep);
    if let Some(lh) = l.leaders {
        if intra.size != c.size {
            let leaders = CommView::new(c.me, lh)?;
            let mut copy = red.temp(count);
            local_copy(rbuf, count, red.dtype, copy.ptr(), count, red.dtype)?;
            if rs && count >= pof2_floor(leaders.size) as usize {
                allreduce::rab_rdb(leaders, copy.ptr(), rbuf, count, red)?;
            } else {
                allreduce::rdb(leaders, copy.ptr(), rbuf, count, red)?;
            }
        }
    }
    super::bcast(intra, rbuf, count, red.dtype, 0)
}
