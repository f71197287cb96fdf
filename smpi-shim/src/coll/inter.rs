//! Blocking collectives on intercommunicators: flat exchanges between the two
//! groups on the collective context (SMPI 3.32 has none; MPI's semantics, the
//! simplest schedule). `MPI_ROOT` marks the root in the root's group and
//! `MPI_PROC_NULL` the other members of that group.

use crate::coll::{self, nbc_inter::MPI_ROOT};
use crate::mpi::{self as rt, mpi_err, with_world, MpiResult};

/// The extent of datatype `dt`.
fn extent(dt: i32) -> MpiResult<isize> {
    with_world(|w| w.dtype(dt).map(|d| d.extent))
}

/// One rank's view of an intercommunicator for collectives: flat exchanges
/// between the two groups on the collective context (peers are remote ranks).
#[derive(Clone, Copy)]
pub(crate) struct InterView {
    pub me: u32,
    pub comm: i32,
    pub rank: i32,
    pub rsize: i32,
}

const ITAG: i32 = 31;

impl InterView {
    /// `Some` when `comm` is an intercommunicator.
    pub(crate) fn of(me: u32, comm: i32) -> MpiResult<Option<InterView>> {
        with_world(|w| {
            let c = w.ranks[me as usize].comm(comm)?;
            Ok(c.shared.remote.as_ref().map(|r| InterView {
                me,
                comm,
                rank: c.my_rank,
                rsize: r.len() as i32,
            }))
        })
    }

    fn p2p(&self, buf: *const u8, count: usize, dtype: i32, peer: i32) -> rt::P2p {
        rt::P2p {
            buf: buf as *mut u8,
            count,
            dtype,
            peer,
            tag: ITAG,
            comm: self.comm,
            coll: true,
        }
    }

    fn isend(&self, buf: *const u8, count: usize, dtype: i32, peer: i32) -> MpiResult<u32> {
        rt::isend(
            self.me,
            &self.p2p(buf, count, dtype, peer),
            rt::SendMode::Standard,
            false,
        )
    }

    fn irecv(&self, buf: *mut u8, count: usize, dtype: i32, peer: i32) -> MpiResult<u32> {
        rt::irecv(self.me, &self.p2p(buf, count, dtype, peer))
    }

    fn waitall(&self, reqs: &[u32]) {
        rt::wait_all_ids(self.me, reqs);
    }
}

/// Barrier: each rank leaves once every rank of the other group has entered.
pub(crate) fn barrier(v: InterView) -> MpiResult<()> {
    let mut reqs = Vec::new();
    for i in 0..v.rsize {
        reqs.push(v.irecv(std::ptr::null_mut(), 0, 4, i)?);
    }
    for i in 0..v.rsize {
        reqs.push(v.isend(std::ptr::null(), 0, 4, i)?);
    }
    v.waitall(&reqs);
    Ok(())
}

/// Bcast: the root (MPI_ROOT) sends to every remote rank.
pub(crate) fn bcast(v: InterView, buf: *mut u8, count: usize, dt: i32, root: i32) -> MpiResult<()> {
    match root {
        rt::MPI_PROC_NULL => Ok(()),
        MPI_ROOT => {
            let reqs: Vec<u32> = (0..v.rsize)
                .map(|i| v.isend(buf, count, dt, i))
                .collect::<MpiResult<_>>()?;
            v.waitall(&reqs);
            Ok(())
        }
        r if r >= 0 && r < v.rsize => {
            let q = v.irecv(buf, count, dt, r)?;
            v.waitall(&[q]);
            Ok(())
        }
        r => Err(mpi_err(
            rt::MPI_ERR_ROOT,
            format!("invalid root {r} on an intercommunicator"),
        )),
    }
}

/// Receives `count` elements from every remote rank and combines them in
/// remote-rank order into `out`.
fn gather_reduce(v: InterView, count: usize, dt: i32, op: i32, out: *mut u8) -> MpiResult<()> {
    let d = with_world(|w| w.dtype(dt))?;
    let mut bufs: Vec<coll::TempBuf> = (0..v.rsize).map(|_| coll::TempBuf::new(&d, count)).collect();
    let mut reqs = Vec::new();
    for (i, b) in bufs.iter_mut().enumerate() {
        reqs.push(v.irecv(b.ptr(), count, dt, i as i32)?);
    }
    v.waitall(&reqs);
    // out = x0 op x1 op ... (left to right): acc = x_{n-1}; acc = x_i op acc.
    let n = bufs.len();
    if n == 0 {
        return Ok(());
    }
    let mut acc = coll::TempBuf::new(&d, count);
    coll::local_copy(bufs[n - 1].ptr(), count, dt, acc.ptr(), count, dt)?;
    for i in (0..n - 1).rev() {
        coll::apply_op(op, dt, bufs[i].ptr(), acc.ptr(), count)?;
    }
    coll::local_copy(acc.ptr(), count, dt, out, count, dt)
}

/// Reduce: the remote group's data, reduced, arrives at the root.
pub(crate) fn reduce(
    v: InterView,
    sbuf: *const u8,
    rbuf: *mut u8,
    count: usize,
    dt: i32,
    op: i32,
    root: i32,
) -> MpiResult<()> {
    match root {
        rt::MPI_PROC_NULL => Ok(()),
        MPI_ROOT => gather_reduce(v, count, dt, op, rbuf),
        r => {
            let q = v.isend(sbuf, count, dt, r)?;
            v.waitall(&[q]);
            Ok(())
        }
    }
}

/// Allreduce: each group receives the reduction of the other group's data.
pub(crate) fn allreduce(
    v: InterView,
    sbuf: *const u8,
    rbuf: *mut u8,
    count: usize,
    dt: i32,
    op: i32,
) -> MpiResult<()> {
    let mut sends = Vec::new();
    for i in 0..v.rsize {
        sends.push(v.isend(sbuf, count, dt, i)?);
    }
    gather_reduce(v, count, dt, op, rbuf)?;
    v.waitall(&sends);
    Ok(())
}

/// Gatherv: the root receives each remote rank's block.
pub(crate) fn gatherv(
    v: InterView,
    sbuf: *const u8,
    scount: usize,
    stype: i32,
    rbuf: *mut u8,
    rcounts: &[usize],
    displs: &[isize],
    rtype: i32,
    root: i32,
) -> MpiResult<()> {
    match root {
        rt::MPI_PROC_NULL => Ok(()),
        MPI_ROOT => {
            let ext = extent(rtype)?;
            let mut reqs = Vec::new();
            for i in 0..v.rsize {
                reqs.push(v.irecv(
                    rbuf.wrapping_offset(displs[i as usize] * ext),
                    rcounts[i as usize],
                    rtype,
                    i,
                )?);
            }
            v.waitall(&reqs);
            Ok(())
        }
        r => {
            let q = v.isend(sbuf, scount, stype, r)?;
            v.waitall(&[q]);
            Ok(())
        }
    }
}

/// Scatterv: the root sends each remote rank its block.
pub(crate) fn scatterv(
    v: InterView,
    sbuf: *const u8,
    scounts: &[usize],
    displs: &[isize],
    stype: i32,
    rbuf: *mut u8,
    rcount: usize,
    rtype: i32,
    root: i32,
) -> MpiResult<()> {
    match root {
        rt::MPI_PROC_NULL => Ok(()),
        MPI_ROOT => {
            let ext = extent(stype)?;
            let mut reqs = Vec::new();
            for i in 0..v.rsize {
                reqs.push(v.isend(
                    sbuf.wrapping_offset(displs[i as usize] * ext),
                    scounts[i as usize],
                    stype,
                    i,
                )?);
            }
            v.waitall(&reqs);
            Ok(())
        }
        r => {
            let q = v.irecv(rbuf, rcount, rtype, r)?;
            v.waitall(&[q]);
            Ok(())
        }
    }
}

/// Allgatherv: every rank sends its block to every remote rank and receives
/// the remote group's blocks.
pub(crate) fn allgatherv(
    v: InterView,
    sbuf: *const u8,
    scount: usize,
    stype: i32,
    rbuf: *mut u8,
    rcounts: &[usize],
    displs: &[isize],
    rtype: i32,
) -> MpiResult<()> {
    let ext = extent(rtype)?;
    let mut reqs = Vec::new();
    for i in 0..v.rsize {
        reqs.push(v.irecv(
            rbuf.wrapping_offset(displs[i as usize] * ext),
            rcounts[i as usize],
            rtype,
            i,
        )?);
    }
    for i in 0..v.rsize {
        reqs.push(v.isend(sbuf, scount, stype, i)?);
    }
    v.waitall(&reqs);
    Ok(())
}

/// Alltoallw with byte displacements: block i goes to remote rank i.
pub(crate) fn alltoallw(v: InterView, a: &coll::Alltoallw) -> MpiResult<()> {
    let mut reqs = Vec::new();
    for i in 0..v.rsize as usize {
        reqs.push(v.irecv(
            a.rbuf.wrapping_offset(a.rdispls[i]),
            a.rcounts[i],
            a.rtypes[i],
            i as i32,
        )?);
    }
    for i in 0..v.rsize as usize {
        reqs.push(v.isend(
            a.sbuf.wrapping_offset(a.sdispls[i]),
            a.scounts[i],
            a.stypes[i],
            i as i32,
        )?);
    }
    v.waitall(&reqs);
    Ok(())
}

/// Reduce_scatter: each rank gets its block of the reduction of the other
/// group's full vectors.
pub(crate) fn reduce_scatter(
    v: InterView,
    sbuf: *const u8,
    rbuf: *mut u8,
    rcounts_local: &[usize],
    total: usize,
    dt: i32,
    op: i32,
) -> MpiResult<()> {
    let d = with_world(|w| w.dtype(dt))?;
    let mut full = coll::TempBuf::new(&d, total);
    let mut sends = Vec::new();
    for i in 0..v.rsize {
        sends.push(v.isend(sbuf, total, dt, i)?);
    }
    gather_reduce(v, total, dt, op, full.ptr())?;
    v.waitall(&sends);
    let off: usize = rcounts_local[..v.rank as usize].iter().sum();
    let mine = rcounts_local[v.rank as usize];
    coll::local_copy(
        full.ptr().wrapping_offset(off as isize * d.extent),
        mine,
        dt,
        rbuf,
        mine,
        dt,
    )
}
