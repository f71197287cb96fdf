//! MVAPICH2's two-level gather and scatters as SMPI 3.32 runs them when
//! forced (`gather` `mvapich2_two_level`, `scatter`
//! `mvapich2_two_level_binomial` / `mvapich2_two_level_direct`): each host's
//! blocks meet at its leader, and the leaders exchange whole hosts' worth of
//! blocks with the root (which must be a leader). The host layout is
//! `smp.rs`'s.

use super::smp::layout;
use super::{
    dtype_of, elem, gather, local_copy, regular_counts, CommView, BYTE, IN_PLACE, TAG_GATHER, TAG_SCATTER,
};
use crate::mpi::MpiResult;

/// Whether SMPI's two-level gather/scatter can run here with the right
/// data: every host holds as many ranks (SMPI crashes otherwise), each
/// host's ranks are consecutive and come in their leaders' order (a host's
/// blocks are one piece of the root's buffer), and the root leads its host
/// (SMPI crashes otherwise).
fn two_level_fits(c: CommView, root: i32) -> MpiResult<bool> {
    let l = layout(c)?;
    Ok(l.uniform
        && l.blocked
        && l.leader_ranks.windows(2).all(|w| w[0] < w[1])
        && l.leader_of[root as usize] == root)
}

/// SMPI's `gather__mvapich2_two_level`: Open MPI's binomial gather (SMPI's
/// `gather__mpich`) of each host's blocks, as bytes, to its leader, then
/// the linear gather (`ompi_basic_linear`) of the hosts' blocks to the root.
/// Where SMPI crashes (non-uniform placement, a root that is not its host's
/// leader) or would misplace blocks (hosts not consecutive in the
/// communicator), the default gather.
pub(crate) fn gather_two_level(
    c: CommView,
    sbuf: *const u8,
    scount: usize,
    stype: i32,
    rbuf: *mut u8,
    rcount: usize,
    rtype: i32,
    root: i32,
) -> MpiResult<()> {
    if !two_level_fits(c, root)? {
        let (counts, displs) = regular_counts(c.size, rcount);
        return gather::gatherv_linear(c, sbuf, scount, stype, rbuf, &counts, &displs, rtype, root);
    }
    if (c.rank == root && rcount == 0) || (c.rank != root && scount == 0) {
        return Ok(());
    }
    let l = layout(c)?;
    let intra = CommView::new(c.me, l.intra)?;
    let rdt = dtype_of(rtype)?;
    let nbytes = if c.rank == root {
        rdt.size * rcount
    } else {
        dtype_of(stype)?.size * scount
    };
    let (sb, sn, st) = if c.rank == root && std::ptr::eq(sbuf, IN_PLACE) {
        (
            elem(rbuf, &rdt, c.rank as usize * rcount) as *const u8,
            rcount,
            rtype,
        )
    } else {
        (sbuf, scount, stype)
    };
    let host_bytes = nbytes * intra.size as usize;
    let mut tmp = vec![0u8; if intra.rank == 0 { host_bytes } else { 0 }];
    gather::binomial_gather(intra, sb, sn, st, tmp.as_mut_ptr(), nbytes, BYTE, 0, nbytes)?;
    let Some(lh) = l.leaders else { return Ok(()) };
    let leaders = CommView::new(c.me, lh)?;
    let leader_root = l.leader_ranks.iter().position(|&r| r == root).expect("a leader") as i32;
    if leaders.rank != leader_root {
        return leaders.send(tmp.as_ptr(), host_bytes, BYTE, leader_root, TAG_GATHER);
    }
    let per_host = rcount * intra.size as usize;
    for i in 0..leaders.size {
        let dst = elem(rbuf, &rdt, i as usize * per_host);
        if i == leader_root {
            local_copy(tmp.as_ptr(), host_bytes, BYTE, dst, per_host, rtype)?;
        } else {
            leaders.recv(dst, per_host, rtype, i, TAG_GATHER)?;
        }
    }
    Ok(())
}

/// Open MPI's basic linear scatter (SMPI's `scatter__ompi_basic_linear`):
/// the root sends each block in rank order with blocking sends (also
/// `smpi/scatter:ompi_basic_linear`).
pub(super) fn linear_scatter(
    c: CommView,
    sbuf: *const u8,
    scount: usize,
    stype: i32,
    rbuf: *mut u8,
    rcount: usize,
    rtype: i32,
    root: i32,
) -> MpiResult<()> {
    if c.rank != root {
        return c.recv(rbuf, rcount, rtype, root, TAG_SCATTER).map(|_| ());
    }
    let sdt = dtype_of(stype)?;
    for i in 0..c.size {
        let src = elem(sbuf, &sdt, i as usize * scount);
        if i == root {
            if rbuf != IN_PLACE {
                local_copy(src, scount, stype, rbuf, rcount, rtype)?;
            }
        } else {
            c.send(src, scount, stype, i, TAG_SCATTER)?;
        }
    }
    Ok(())
}

/// SMPI's `scatter__mvapich2_two_level_binomial` / `_direct`: a root that
/// does not lead its host first sends everything to its leader (as bytes);
/// the leaders scatter whole hosts' worth of blocks (Open MPI's binomial
/// scatter, or the basic linear one for `direct`; with hosts of unequal
/// sizes, SMPI's linear scatterv), then each leader scatters its host's
/// blocks with SMPI's `scatter__mpich` (Open MPI's binomial). All ranks on
/// one host: the basic linear scatter. Where the hosts are not consecutive
/// in the communicator in their leaders' order (SMPI would send blocks to
/// the wrong ranks), the default scatter.
pub(crate) fn scatter_two_level(
    c: CommView,
    sbuf: *const u8,
    scount: usize,
    stype: i32,
    rbuf: *mut u8,
    rcount: usize,
    rtype: i32,
    root: i32,
    binomial: bool,
) -> MpiResult<()> {
    let l = layout(c)?;
    if !(l.blocked && l.leader_ranks.windows(2).all(|w| w[0] < w[1])) {
        let (counts, displs) = regular_counts(c.size, scount);
        return gather::scatterv_linear(c, sbuf, &counts, &displs, stype, rbuf, rcount, rtype, root);
    }
    let intra = CommView::new(c.me, l.intra)?;
    if intra.size == c.size {
        return linear_scatter(c, sbuf, scount, stype, rbuf, rcount, rtype, root);
    }
    let nbytes = if c.rank == root {
        dtype_of(stype)?.size * scount
    } else {
        dtype_of(rtype)?.size * rcount
    };
    let leader_of_root = l.leader_of[root as usize];
    let host_bytes = nbytes * intra.size as usize;
    let mut tmp = vec![0u8; if intra.rank == 0 { host_bytes } else { 0 }];
    // everything, as bytes, at the root's leader when the root does not lead
    let mut whole = Vec::new();
    if intra.rank == 0 && root != c.rank && leader_of_root == c.rank {
        whole = vec![0u8; nbytes * c.size as usize];
        c.recv(whole.as_mut_ptr(), whole.len(), BYTE, root, TAG_SCATTER)?;
    }
    if c.rank == root && intra.rank != 0 {
        c.send(sbuf, scount * c.size as usize, stype, leader_of_root, TAG_SCATTER)?;
    }
    if let Some(lh) = l.leaders {
        let leaders = CommView::new(c.me, lh)?;
        let leader_root = l
            .leader_ranks
            .iter()
            .position(|&r| r == leader_of_root)
            .expect("a leader") as i32;
        // what the root's leader scatters: the root's buffer, or the bytes it got
        let (src, per, st) = if root == leader_of_root {
            (sbuf, scount, stype)
        } else {
            (whole.as_ptr(), nbytes, BYTE)
        };
        if leaders.size > 1 {
            if let Some(sizes) = &l.node_sizes {
                let counts: Vec<usize> = sizes.iter().map(|&k| k as usize * per).collect();
                let displs: Vec<isize> = counts
                    .iter()
                    .scan(0isize, |at, &k| {
                        let d = *at;
                        *at += k as isize;
                        Some(d)
                    })
                    .collect();
                gather::scatterv_linear(
                    leaders,
                    src,
                    &counts,
                    &displs,
                    st,
                    tmp.as_mut_ptr(),
                    host_bytes,
                    BYTE,
                    leader_root,
                )?;
            } else if binomial {
                let block = if leaders.rank == leader_root {
                    dtype_of(st)?.size * per * intra.size as usize
                } else {
                    host_bytes
                };
                gather::binomial_scatter(
                    leaders,
                    src,
                    per * intra.size as usize,
                    st,
                    tmp.as_mut_ptr(),
                    host_bytes,
                    BYTE,
                    leader_root,
                    block,
                )?;
            } else {
                linear_scatter(
                    leaders,
                    src,
                    per * intra.size as usize,
                    st,
                    tmp.as_mut_ptr(),
                    host_bytes,
                    BYTE,
                    leader_root,
                )?;
            }
        }
    }
    let (rb, rn, rt) = if c.rank == root && rbuf == IN_PLACE {
        (
            elem(sbuf, &*dtype_of(stype)?, c.rank as usize * scount),
            scount,
            stype,
        )
    } else {
        (rbuf, rcount, rtype)
    };
    gather::binomial_scatter(intra, tmp.as_ptr(), nbytes, BYTE, rb, rn, rt, 0, nbytes)
}
