//! MPI_Barrier. Every message is empty (0 bytes, so detached).

use super::select::{self, pick};
use super::{CommView, BYTE, TAG_BARRIER};
use crate::mpi::MpiResult;

pub(super) const KNOWN: &[&str] = &[
    "ompi_basic_linear",
    "ompi_two_procs",
    "ompi_recursivedoubling",
    "ompi_bruck",
    "ompi_tree",
    "ompi_doublering",
    "mvapich2_pair",
    "mpich_smp",
];

/// SMPI default: `ompi_basic_linear`. mpich: `ompi_bruck` (MPICH's
/// dissemination barrier).
pub(crate) fn run(c: CommView) -> MpiResult<()> {
    let algo = pick(
        "barrier",
        KNOWN,
        select::Facts::new(c, 0),
        || "ompi_basic_linear",
        || select::ompi_barrier(c.size),
        || "ompi_bruck",
    )?;
    if c.size == 1 {
        return Ok(());
    }
    match algo {
        "ompi_two_procs" => two_procs(c),
        "ompi_recursivedoubling" | "mvapich2_pair" => recursive_doubling(c),
        "ompi_bruck" => bruck(c),
        "ompi_tree" => tree(c),
        "ompi_doublering" => double_ring(c),
        "mpich_smp" => super::smp::mpich_smp_barrier(c),
        _ => basic_linear(c),
    }
}

fn send(c: CommView, to: i32) -> MpiResult<()> {
    c.send(std::ptr::null(), 0, BYTE, to, TAG_BARRIER)
}

fn recv(c: CommView, from: i32) -> MpiResult<()> {
    c.recv(std::ptr::null_mut(), 0, BYTE, from, TAG_BARRIER)
        .map(|_| ())
}

fn exchange(c: CommView, to: i32, from: i32) -> MpiResult<()> {
    c.sendrecv(
        std::ptr::null(),
        0,
        BYTE,
        to,
        std::ptr::null_mut(),
        0,
        BYTE,
        from,
        TAG_BARRIER,
    )
}

/// Everyone sends an empty message to 0, then 0 answers everyone.
fn basic_linear(c: CommView) -> MpiResult<()> {
    if c.rank > 0 {
        send(c, 0)?;
        recv(c, 0)?;
    } else {
        let mut reqs = Vec::new();
        // One receive per source, as SMPI's ompi_basic_linear posts them.
        for i in 1..c.size {
            reqs.push(c.irecv(std::ptr::null_mut(), 0, BYTE, i, TAG_BARRIER)?);
        }
        c.waitall(&reqs);
        reqs.clear();
        for i in 1..c.size {
            reqs.push(c.isend(std::ptr::null(), 0, BYTE, i, TAG_BARRIER)?);
        }
        c.waitall(&reqs);
    }
    Ok(())
}

/// One exchange between the two ranks; other sizes use recursive doubling
/// (Open MPI's two_procs only exists for 2 ranks).
fn two_procs(c: CommView) -> MpiResult<()> {
    if c.size != 2 {
        return recursive_doubling(c);
    }
    let peer = 1 - c.rank;
    exchange(c, peer, peer)
}

/// Pairwise exchanges at distance 1, 2, 4, ... among the largest power of two
/// ranks; the extra ranks first report to (and finally hear from) `rank - pof2`.
fn recursive_doubling(c: CommView) -> MpiResult<()> {
    let n = c.size;
    let adj = super::pof2_floor(n);
    if c.rank >= adj {
        send(c, c.rank - adj)?;
        return recv(c, c.rank - adj);
    }
    if c.rank < n - adj {
        recv(c, c.rank + adj)?;
    }
    let mut mask = 1;
    while mask < adj {
        let peer = c.rank ^ mask;
        exchange(c, peer, peer)?;
        mask <<= 1;
    }
    if c.rank < n - adj {
        send(c, c.rank + adj)?;
    }
    Ok(())
}

/// Dissemination: at distance 1, 2, 4, ... send to rank + d, hear from rank - d.
pub(crate) fn bruck(c: CommView) -> MpiResult<()> {
    let n = c.size;
    let mut d = 1;
    while d < n {
        exchange(c, (c.rank + d) % n, (c.rank - d + n) % n)?;
        d <<= 1;
    }
    Ok(())
}

/// Fan-in along a binomial tree rooted at 0, then fan-out along the same tree.
fn tree(c: CommView) -> MpiResult<()> {
    let n = c.size;
    let mut depth = 1;
    while depth < n {
        depth <<= 1;
    }
    let mut jump = 1;
    while jump < depth {
        let partner = c.rank ^ jump;
        if partner & (jump - 1) == 0 && partner < n {
            if partner > c.rank {
                recv(c, partner)?;
            } else {
                send(c, partner)?;
            }
        }
        jump <<= 1;
    }
    jump = depth >> 1;
    while jump > 0 {
        let partner = c.rank ^ jump;
        if partner & (jump - 1) == 0 && partner < n {
            if partner > c.rank {
                send(c, partner)?;
            } else {
                recv(c, partner)?;
            }
        }
        jump >>= 1;
    }
    Ok(())
}

/// Two rounds of a token around the ring 0 → 1 → ... → n-1 → 0.
fn double_ring(c: CommView) -> MpiResult<()> {
    let n = c.size;
    let left = (c.rank - 1 + n) % n;
    let right = (c.rank + 1) % n;
    for _ in 0..2 {
        if c.rank > 0 {
            recv(c, left)?;
        }
        send(c, right)?;
        if c.rank == 0 {
            recv(c, left)?;
        }
    }
    Ok(())
}
