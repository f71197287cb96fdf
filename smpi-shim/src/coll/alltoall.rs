//! MPI_Alltoall and MPI_Alltoallv.

use super::select::{self, pick};
use super::{dtype_of, is_pof2, local_copy, CommView, TempBuf, BYTE, IN_PLACE, TAG_ALLTOALL};
use crate::mpi::MpiResult;

const ALLTOALL: &[&str] = &["basic_linear", "pair", "ring", "bruck", "mvapich2_scatter_dest"];
const ALLTOALLV: &[&str] = &["ompi_basic_linear", "pair", "ring"];

/// Alltoall: SMPI's default is the ompi decision. Alltoallv: SMPI's default
/// posts every receive (ascending) then every send (ascending); mpich: the
/// same exchange without empty messages (`ompi_basic_linear`).
pub(crate) fn run(
    c: CommView,
    sbuf: *const u8,
    scounts: &[usize],
    sdispls: &[isize],
    stype: i32,
    rbuf: *mut u8,
    rcounts: &[usize],
    rdispls: &[isize],
    rtype: i32,
    regular: bool,
) -> MpiResult<()> {
    let sdt = dtype_of(stype)?;
    let rdt = dtype_of(rtype)?;
    // MPI_IN_PLACE: send from a copy of the receive buffer.
    let mut copy: Option<TempBuf> = None;
    let (sbuf, scounts, sdispls, stype, sdt) = if std::ptr::eq(sbuf, IN_PLACE) {
        let total: usize = (0..c.size as usize)
            .map(|i| rdispls[i].max(0) as usize + rcounts[i])
            .max()
            .unwrap_or(0);
        let mut t = TempBuf::new(&rdt, total);
        local_copy(rbuf, total, rtype, t.ptr(), total, rtype)?;
        let p = t.ptr() as *const u8;
        copy = Some(t);
        (p, rcounts, rdispls, rtype, rdt.clone())
    } else {
        (sbuf, scounts, sdispls, stype, sdt)
    };
    let n = c.size;
    let me = c.rank;
    let sp = |i: i32| sbuf.wrapping_offset(sdispls[i as usize] * sdt.extent);
    let rp = |i: i32| rbuf.wrapping_offset(rdispls[i as usize] * rdt.extent);
    let algo = if regular {
        let block = sdt.size * scounts.first().copied().unwrap_or(0);
        pick(
            "alltoall",
            ALLTOALL,
            || select::ompi_alltoall(n, block),
            || select::ompi_alltoall(n, block),
            || select::mpich_alltoall(n, block),
        )?
    } else {
        pick(
            "alltoallv",
            ALLTOALLV,
            || "default",
            || select::ompi_alltoallv(n),
            || "ompi_basic_linear",
        )?
    };
    let own = || {
        local_copy(
            sp(me),
            scounts[me as usize],
            stype,
            rp(me),
            rcounts[me as usize],
            rtype,
        )
    };
    // pair needs a power-of-two size (SMPI throws otherwise): ring instead.
    let algo = if algo == "pair" && !is_pof2(n) {
        "ring"
    } else {
        algo
    };
    match algo {
        "ring" => {
            for i in 0..n {
                let src = (me - i + n) % n;
                let dst = (me + i) % n;
                c.sendrecv(
                    sp(dst),
                    scounts[dst as usize],
                    stype,
                    dst,
                    rp(src),
                    rcounts[src as usize],
                    rtype,
                    src,
                    TAG_ALLTOALL,
                )?;
            }
        }
        "pair" => {
            for i in 0..n {
                let peer = me ^ i;
                c.sendrecv(
                    sp(peer),
                    scounts[peer as usize],
                    stype,
                    peer,
                    rp(peer),
                    rcounts[peer as usize],
                    rtype,
                    peer,
                    TAG_ALLTOALL,
                )?;
            }
        }
        "basic_linear" => {
            // SMPI's basic_linear: receives from rank+1, rank+2, ... and sends to
            // rank-1, rank-2, ..., all in flight at once.
            own()?;
            let mut reqs = Vec::new();
            for k in 1..n {
                let i = (me + k) % n;
                reqs.push(c.irecv(rp(i), rcounts[i as usize], rtype, i, TAG_ALLTOALL)?);
            }
            for k in 1..n {
                let i = (me - k + n) % n;
                reqs.push(c.isend(sp(i), scounts[i as usize], stype, i, TAG_ALLTOALL)?);
            }
            c.waitall(&reqs);
        }
        "mvapich2_scatter_dest" => {
            // MVAPICH2's scattered exchange as SMPI runs it: 4 peers at a time
            // (receive from rank+i, send to rank-i, i = 0, 1, ...), my own block
            // included (a message to myself); nothing at all for empty blocks.
            if rcounts[0] == 0 {
                return Ok(());
            }
            let batch = 4.min(n);
            let mut k0 = 0;
            while k0 < n {
                let k1 = (k0 + batch).min(n);
                let mut reqs = Vec::new();
                for k in k0..k1 {
                    let i = (me + k) % n;
                    reqs.push(c.irecv(rp(i), rcounts[i as usize], rtype, i, TAG_ALLTOALL)?);
                }
                for k in k0..k1 {
                    let i = (me - k + n) % n;
                    reqs.push(c.isend(sp(i), scounts[i as usize], stype, i, TAG_ALLTOALL)?);
                }
                c.waitall_checked(&reqs)?;
                k0 = k1;
            }
        }
        "bruck" => bruck(c, sbuf, scounts[0], stype, rbuf, rcounts[0], rtype)?,
        "ompi_basic_linear" => {
            // Open MPI's alltoallv basic linear: all receives, then all sends,
            // both in ascending rank order, skipping empty blocks.
            own()?;
            let mut reqs = Vec::new();
            for i in (0..n).filter(|&i| i != me && rcounts[i as usize] * rdt.size > 0) {
                reqs.push(c.irecv(rp(i), rcounts[i as usize], rtype, i, TAG_ALLTOALL)?);
            }
            for i in (0..n).filter(|&i| i != me && scounts[i as usize] * sdt.size > 0) {
                reqs.push(c.isend(sp(i), scounts[i as usize], stype, i, TAG_ALLTOALL)?);
            }
            c.waitall_checked(&reqs)?;
        }
        _ => {
            // Default alltoallv: receives from everyone (ascending), then sends (ascending).
            own()?;
            let mut reqs = Vec::new();
            for i in (0..n).filter(|&i| i != me) {
                reqs.push(c.irecv(rp(i), rcounts[i as usize], rtype, i, TAG_ALLTOALL)?);
            }
            for i in (0..n).filter(|&i| i != me) {
                reqs.push(c.isend(sp(i), scounts[i as usize], stype, i, TAG_ALLTOALL)?);
            }
            c.waitall(&reqs);
        }
    }
    drop(copy);
    Ok(())
}

/// Bruck's alltoall (SMPI's `alltoall__bruck`): the blocks are rotated so
/// that position j holds the block for rank + j; at distance d = 1, 2, 4, ...
/// every position j with bit d set is sent (packed) to rank + d while the
/// same positions arrive from rank − d; finally position j holds the block
/// from rank − j. ⌈log2 n⌉ exchanges of about n/2 blocks each.
fn bruck(
    c: CommView,
    sbuf: *const u8,
    scount: usize,
    stype: i32,
    rbuf: *mut u8,
    rcount: usize,
    rtype: i32,
) -> MpiResult<()> {
    let sdt = dtype_of(stype)?;
    let rdt = dtype_of(rtype)?;
    let (n, me) = (c.size, c.rank);
    let b = sdt.size * scount;
    let mut rot = Vec::with_capacity(n as usize * b);
    for j in 0..n {
        let dst = (me + j) % n;
        // Safety: the send buffer holds n blocks of `scount` elements.
        unsafe { sdt.pack(super::elem(sbuf, &sdt, dst as usize * scount), scount, &mut rot) };
    }
    let mut d = 1;
    while d < n {
        let idx: Vec<usize> = (1..n).filter(|j| j & d != 0).map(|j| j as usize).collect();
        let mut out = Vec::with_capacity(idx.len() * b);
        for &j in &idx {
            out.extend_from_slice(&rot[j * b..(j + 1) * b]);
        }
        let mut inb = vec![0u8; out.len()];
        c.sendrecv(
            out.as_ptr(),
            out.len(),
            BYTE,
            (me + d) % n,
            inb.as_mut_ptr(),
            inb.len(),
            BYTE,
            (me - d + n) % n,
            TAG_ALLTOALL,
        )?;
        for (k, &j) in idx.iter().enumerate() {
            rot[j * b..(j + 1) * b].copy_from_slice(&inb[k * b..(k + 1) * b]);
        }
        d <<= 1;
    }
    for j in 0..n {
        let src = (me - j + n) % n;
        // Safety: the receive buffer holds n blocks of `rcount` elements.
        unsafe {
            rdt.unpack(
                &rot[j as usize * b..(j as usize + 1) * b],
                super::elem(rbuf, &rdt, src as usize * rcount),
                rcount,
            )
        };
    }
    Ok(())
}
