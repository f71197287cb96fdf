//! MPI_Alltoall and MPI_Alltoallv.
//!
//! The pairwise exchanges with barriers are in `alltoall_sync`, the
//! algorithms that gather whole send buffers (`rdb`, `2dmesh`, `3dmesh`) in
//! `alltoall_mesh`, the one-sided `pair_rma` in `alltoall_rma`.

use super::select::{self, pick};
use super::{alltoall_mesh, alltoall_rma, alltoall_sync};
use super::{dtype_of, is_pof2, local_copy, CommView, TempBuf, BYTE, IN_PLACE, TAG_ALLTOALL};
use crate::mpi::MpiResult;

pub(super) const ALLTOALL: &[&str] = &[
    "basic_linear",
    "pair",
    "ring",
    "bruck",
    "mvapich2_scatter_dest",
    "pair_light_barrier",
    "pair_mpi_barrier",
    "pair_one_barrier",
    "ring_light_barrier",
    "ring_mpi_barrier",
    "ring_one_barrier",
    "rdb",
    "2dmesh",
    "3dmesh",
    "pair_rma",
];
pub(super) const ALLTOALLV: &[&str] = &[
    "ompi_basic_linear",
    "pair",
    "ring",
    "bruck",
    "pair_light_barrier",
    "pair_mpi_barrier",
    "pair_one_barrier",
    "ring_light_barrier",
    "ring_mpi_barrier",
    "ring_one_barrier",
];

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
    let in_place = std::ptr::eq(sbuf, IN_PLACE);
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
    let b = Blocks {
        sbuf,
        scounts,
        sdispls,
        stype,
        sext: sdt.extent,
        rbuf,
        rcounts,
        rdispls,
        rtype,
        rext: rdt.extent,
    };
    let sp = |i: i32| b.sp(i);
    let rp = |i: i32| b.rp(i);
    let algo = if regular {
        let block = sdt.size * scounts.first().copied().unwrap_or(0);
        pick(
            "alltoall",
            ALLTOALL,
            select::Facts::new(c, block),
            || select::ompi_alltoall(n, block),
            || select::ompi_alltoall(n, block),
            || select::mpich_alltoall(n, block),
        )?
    } else {
        pick(
            "alltoallv",
            ALLTOALLV,
            select::Facts {
                in_place,
                regular: false,
                ..select::Facts::new(c, 0)
            },
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
    // The gathering algorithms move bytes: block sizes that differ on the two
    // sides (an erroneous call SMPI refuses) take the linear exchange.
    let algo = match algo {
        "rdb" | "2dmesh" | "3dmesh" if sdt.size * scounts[0] != rdt.size * rcounts[0] => "basic_linear",
        _ => algo,
    };
    if let Some((order, sync)) = alltoall_sync::parse(algo) {
        return alltoall_sync::run(c, order, sync, &b);
    }
    match algo {
        // SMPI's alltoallv ring is the pair exchange on a power-of-two size.
        "ring" if regular || !is_pof2(n) => {
            for i in 0..n {
                b.exchange(c, (me + i) % n, (me - i + n) % n)?;
            }
        }
        "ring" | "pair" => {
            for i in 0..n {
                b.exchange(c, me ^ i, me ^ i)?;
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
            // MVAPICH2's scattered exchange as SMPI runs it, my own block
            // included (a message to myself); nothing at all for empty blocks.
            if rcounts[0] == 0 {
                return Ok(());
            }
            batched(c, &b, true)?;
        }
        "rdb" => alltoall_mesh::rdb(c, sbuf, scounts[0], stype, rbuf, rcounts[0], rtype)?,
        "2dmesh" => alltoall_mesh::mesh_2d(c, sbuf, scounts[0], stype, rbuf, rcounts[0], rtype)?,
        "pair_rma" => alltoall_rma::pair_rma(c, &b)?,
        "3dmesh" => alltoall_mesh::mesh_3d(c, sbuf, scounts[0], stype, rbuf, rcounts[0], rtype)?,
        "bruck" if !regular => {
            // SMPI's alltoallv "bruck" is the same scattered exchange (not
            // Bruck's algorithm), after a local copy of my own block.
            own()?;
            if n > 1 {
                batched(c, &b, false)?;
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

/// The blocks of an alltoall(v): per peer, a count and a displacement (in
/// elements) on each side.
pub(super) struct Blocks<'a> {
    pub(super) sbuf: *const u8,
    pub(super) scounts: &'a [usize],
    pub(super) sdispls: &'a [isize],
    pub(super) stype: i32,
    pub(super) sext: isize,
    pub(super) rbuf: *mut u8,
    pub(super) rcounts: &'a [usize],
    pub(super) rdispls: &'a [isize],
    pub(super) rtype: i32,
    pub(super) rext: isize,
}

impl Blocks<'_> {
    /// Where the block for rank `i` starts.
    pub(super) fn sp(&self, i: i32) -> *const u8 {
        self.sbuf.wrapping_offset(self.sdispls[i as usize] * self.sext)
    }

    /// Where the block from rank `i` goes.
    pub(super) fn rp(&self, i: i32) -> *mut u8 {
        self.rbuf.wrapping_offset(self.rdispls[i as usize] * self.rext)
    }

    /// One step of a pairwise exchange: my block for `dst` out, `src`'s
    /// block for me in (a local copy when both are me).
    pub(super) fn exchange(&self, c: CommView, dst: i32, src: i32) -> MpiResult<()> {
        c.sendrecv(
            self.sp(dst),
            self.scounts[dst as usize],
            self.stype,
            dst,
            self.rp(src),
            self.rcounts[src as usize],
            self.rtype,
            src,
            TAG_ALLTOALL,
        )
    }
}

/// The scattered exchange of MPICH (throttled as Tony Ladd suggested): 4
/// peers at a time, receives from rank + i then sends to rank − i for i = k,
/// k+1, ..., k+3, then wait for all of them; my own block is one of them
/// (`me_too`: a message to myself; else skipped).
fn batched(c: CommView, b: &Blocks, me_too: bool) -> MpiResult<()> {
    let (n, me) = (c.size, c.rank);
    let batch = 4.min(n);
    let mut k0 = 0;
    while k0 < n {
        let k1 = (k0 + batch).min(n);
        let mut reqs = Vec::new();
        for k in k0..k1 {
            let i = (me + k) % n;
            if me_too || i != me {
                reqs.push(c.irecv(b.rp(i), b.rcounts[i as usize], b.rtype, i, TAG_ALLTOALL)?);
            }
        }
        for k in k0..k1 {
            let i = (me - k + n) % n;
            if me_too || i != me {
                reqs.push(c.isend(b.sp(i), b.scounts[i as usize], b.stype, i, TAG_ALLTOALL)?);
            }
        }
        c.waitall_checked(&reqs)?;
        k0 = k1;
    }
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
