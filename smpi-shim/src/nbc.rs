//! Non-blocking collectives (`MPI_Ibarrier`, `MPI_Ibcast`, ...).
//!
//! Like SMPI, they use flat algorithms: every message of a stage is posted at
//! once. A collective is a list of stages; a stage starts when the previous
//! one's messages have all completed, which happens inside MPI calls on the
//! request (`MPI_Wait`, `MPI_Test`, ...): MPI's weak progress rule. Local
//! reductions run in the last stage, in rank order.
#![allow(clippy::not_unsafe_ptr_arg_deref, clippy::too_many_arguments)]

use std::cell::RefCell;
use std::rc::Rc;

use crate::coll::{self, CommView, TempBuf, IN_PLACE};
use crate::runtime::{self as rt, with_world, MpiResult, Stage};

const TAG: i32 = 100;

fn dt_of(h: i32) -> MpiResult<Rc<crate::datatype::Datatype>> {
    with_world(|w| w.dtype(h))
}

/// MPI_Ibarrier: everyone notifies rank 0, then rank 0 answers everyone.
pub fn ibarrier(c: CommView) -> MpiResult<u32> {
    let byte = 4;
    let s1: Stage = Box::new(move || {
        if c.rank == 0 {
            (1..c.size)
                .map(|i| c.irecv(std::ptr::null_mut(), 0, byte, i, TAG))
                .collect()
        } else {
            Ok(vec![c.isend(std::ptr::null(), 0, byte, 0, TAG)?])
        }
    });
    let s2: Stage = Box::new(move || {
        if c.rank == 0 {
            (1..c.size)
                .map(|i| c.isend(std::ptr::null(), 0, byte, i, TAG))
                .collect()
        } else {
            Ok(vec![c.irecv(std::ptr::null_mut(), 0, byte, 0, TAG)?])
        }
    });
    rt::start_coll(c.me, c.comm, vec![s1, s2])
}

/// MPI_Ibcast: the root sends to everyone.
pub fn ibcast(c: CommView, buf: *mut u8, count: usize, dt: i32, root: i32) -> MpiResult<u32> {
    let s: Stage = Box::new(move || {
        if c.rank == root {
            (0..c.size)
                .filter(|&i| i != root)
                .map(|i| c.isend(buf, count, dt, i, TAG))
                .collect()
        } else {
            Ok(vec![c.irecv(buf, count, dt, root, TAG)?])
        }
    });
    rt::start_coll(c.me, c.comm, vec![s])
}

/// Stages of a flat reduce to `root` (receives, then local ops in rank order).
fn reduce_stages(
    c: CommView,
    sbuf: *const u8,
    rbuf: *mut u8,
    count: usize,
    dt: i32,
    op: i32,
    root: i32,
) -> MpiResult<Vec<Stage>> {
    let d = dt_of(dt)?;
    let sbuf = if std::ptr::eq(sbuf, IN_PLACE) {
        rbuf as *const u8
    } else {
        sbuf
    };
    if c.rank != root {
        return Ok(vec![Box::new(move || {
            Ok(vec![c.isend(sbuf, count, dt, root, TAG)?])
        })]);
    }
    let temps: Rc<RefCell<Vec<TempBuf>>> = Rc::new(RefCell::new(
        (0..c.size).map(|_| TempBuf::new(&d, count)).collect(),
    ));
    let t1 = temps.clone();
    let recv: Stage = Box::new(move || {
        let mut t = t1.borrow_mut();
        (0..c.size)
            .filter(|&i| i != root)
            .map(|i| c.irecv(t[i as usize].ptr(), count, dt, i, TAG))
            .collect()
    });
    let combine: Stage = Box::new(move || {
        let mut t = temps.borrow_mut();
        let mut acc = TempBuf::new(&d, count);
        coll::local_copy(sbuf, count, dt, acc.ptr(), count, dt)?;
        // Rank order: acc = x_i op acc for the ranks above the root...; for
        // commutative ops the order only affects rounding, as in SMPI.
        for i in (0..c.size).filter(|&i| i != root) {
            coll::apply_op(op, dt, t[i as usize].ptr(), acc.ptr(), count)?;
        }
        coll::local_copy(acc.ptr(), count, dt, rbuf, count, dt)?;
        Ok(vec![])
    });
    Ok(vec![recv, combine])
}

/// MPI_Ireduce.
pub fn ireduce(
    c: CommView,
    sbuf: *const u8,
    rbuf: *mut u8,
    count: usize,
    dt: i32,
    op: i32,
    root: i32,
) -> MpiResult<u32> {
    let stages = reduce_stages(c, sbuf, rbuf, count, dt, op, root)?;
    rt::start_coll(c.me, c.comm, stages)
}

/// MPI_Iallreduce: flat reduce to 0, then 0 sends the result to everyone.
pub fn iallreduce(
    c: CommView,
    sbuf: *const u8,
    rbuf: *mut u8,
    count: usize,
    dt: i32,
    op: i32,
) -> MpiResult<u32> {
    let d = dt_of(dt)?;
    let tmp = Rc::new(RefCell::new(TempBuf::new(&d, count)));
    let sbuf = if std::ptr::eq(sbuf, IN_PLACE) {
        // Keep our contribution: rbuf is overwritten by the result.
        let p = tmp.borrow_mut().ptr();
        coll::local_copy(rbuf, count, dt, p, count, dt)?;
        p as *const u8
    } else {
        sbuf
    };
    let mut stages = reduce_stages(c, sbuf, rbuf, count, dt, op, 0)?;
    let keep = tmp.clone();
    stages.push(Box::new(move || {
        let _keep = &keep;
        if c.rank == 0 {
            (1..c.size).map(|i| c.isend(rbuf, count, dt, i, TAG)).collect()
        } else {
            Ok(vec![c.irecv(rbuf, count, dt, 0, TAG)?])
        }
    }));
    rt::start_coll(c.me, c.comm, stages)
}

/// MPI_Igatherv (and Igather).
pub fn igatherv(
    c: CommView,
    sbuf: *const u8,
    scount: usize,
    stype: i32,
    rbuf: *mut u8,
    rcounts: Vec<usize>,
    displs: Vec<isize>,
    rtype: i32,
    root: i32,
) -> MpiResult<u32> {
    let rext = dt_of(rtype)?.extent;
    let s: Stage = Box::new(move || {
        if c.rank != root {
            return Ok(vec![c.isend(sbuf, scount, stype, root, TAG)?]);
        }
        let mut reqs = Vec::new();
        for i in 0..c.size {
            let dst = rbuf.wrapping_offset(displs[i as usize] * rext);
            if i == root {
                if !std::ptr::eq(sbuf, IN_PLACE) {
                    coll::local_copy(sbuf, scount, stype, dst, rcounts[i as usize], rtype)?;
                }
            } else {
                reqs.push(c.irecv(dst, rcounts[i as usize], rtype, i, TAG)?);
            }
        }
        Ok(reqs)
    });
    rt::start_coll(c.me, c.comm, vec![s])
}

/// MPI_Iscatterv (and Iscatter).
pub fn iscatterv(
    c: CommView,
    sbuf: *const u8,
    scounts: Vec<usize>,
    displs: Vec<isize>,
    stype: i32,
    rbuf: *mut u8,
    rcount: usize,
    rtype: i32,
    root: i32,
) -> MpiResult<u32> {
    let sext = dt_of(stype)?.extent;
    let s: Stage = Box::new(move || {
        if c.rank != root {
            return Ok(vec![c.irecv(rbuf, rcount, rtype, root, TAG)?]);
        }
        let mut reqs = Vec::new();
        for i in 0..c.size {
            let src = sbuf.wrapping_offset(displs[i as usize] * sext);
            if i == root {
                if rbuf != IN_PLACE {
                    coll::local_copy(src, scounts[i as usize], stype, rbuf, rcount, rtype)?;
                }
            } else {
                reqs.push(c.isend(src, scounts[i as usize], stype, i, TAG)?);
            }
        }
        Ok(reqs)
    });
    rt::start_coll(c.me, c.comm, vec![s])
}

/// MPI_Iallgatherv (and Iallgather).
pub fn iallgatherv(
    c: CommView,
    sbuf: *const u8,
    scount: usize,
    stype: i32,
    rbuf: *mut u8,
    rcounts: Vec<usize>,
    displs: Vec<isize>,
    rtype: i32,
) -> MpiResult<u32> {
    let rext = dt_of(rtype)?.extent;
    let s: Stage = Box::new(move || {
        let mine = rbuf.wrapping_offset(displs[c.rank as usize] * rext);
        let (sbuf, scount, stype) = if std::ptr::eq(sbuf, IN_PLACE) {
            (mine as *const u8, rcounts[c.rank as usize], rtype)
        } else {
            coll::local_copy(sbuf, scount, stype, mine, rcounts[c.rank as usize], rtype)?;
            (sbuf, scount, stype)
        };
        let mut reqs = Vec::new();
        for i in (0..c.size).filter(|&i| i != c.rank) {
            reqs.push(c.isend(sbuf, scount, stype, i, TAG)?);
            let dst = rbuf.wrapping_offset(displs[i as usize] * rext);
            reqs.push(c.irecv(dst, rcounts[i as usize], rtype, i, TAG)?);
        }
        Ok(reqs)
    });
    rt::start_coll(c.me, c.comm, vec![s])
}

/// MPI_Ialltoallw (byte displacements, one type per peer); Ialltoall(v) map onto it.
pub fn ialltoallw(
    c: CommView,
    sbuf: *const u8,
    scounts: Vec<usize>,
    sdispls: Vec<isize>,
    stypes: Vec<i32>,
    rbuf: *mut u8,
    rcounts: Vec<usize>,
    rdispls: Vec<isize>,
    rtypes: Vec<i32>,
) -> MpiResult<u32> {
    let s: Stage = Box::new(move || {
        let me = c.rank as usize;
        coll::local_copy(
            sbuf.wrapping_offset(sdispls[me]),
            scounts[me],
            stypes[me],
            rbuf.wrapping_offset(rdispls[me]),
            rcounts[me],
            rtypes[me],
        )?;
        let mut reqs = Vec::new();
        for i in (0..c.size).filter(|&i| i != c.rank) {
            let iu = i as usize;
            reqs.push(c.irecv(rbuf.wrapping_offset(rdispls[iu]), rcounts[iu], rtypes[iu], i, TAG)?);
        }
        for i in (0..c.size).filter(|&i| i != c.rank) {
            let iu = i as usize;
            reqs.push(c.isend(sbuf.wrapping_offset(sdispls[iu]), scounts[iu], stypes[iu], i, TAG)?);
        }
        Ok(reqs)
    });
    rt::start_coll(c.me, c.comm, vec![s])
}

/// MPI_Iscan / MPI_Iexscan: each rank receives from all lower ranks and sends
/// to all higher ones, then combines in rank order.
pub fn iscan(
    c: CommView,
    sbuf: *const u8,
    rbuf: *mut u8,
    count: usize,
    dt: i32,
    op: i32,
    exclusive: bool,
) -> MpiResult<u32> {
    let d = dt_of(dt)?;
    let mine = Rc::new(RefCell::new(TempBuf::new(&d, count)));
    let src = if std::ptr::eq(sbuf, IN_PLACE) {
        rbuf as *const u8
    } else {
        sbuf
    };
    coll::local_copy(src, count, dt, mine.borrow_mut().ptr(), count, dt)?;
    let temps: Rc<RefCell<Vec<TempBuf>>> = Rc::new(RefCell::new(
        (0..c.rank).map(|_| TempBuf::new(&d, count)).collect(),
    ));
    let (t1, m1) = (temps.clone(), mine.clone());
    let s1: Stage = Box::new(move || {
        let mut reqs = Vec::new();
        let mut t = t1.borrow_mut();
        for i in 0..c.rank {
            reqs.push(c.irecv(t[i as usize].ptr(), count, dt, i, TAG)?);
        }
        let p = m1.borrow_mut().ptr() as *const u8;
        for i in c.rank + 1..c.size {
            reqs.push(c.isend(p, count, dt, i, TAG)?);
        }
        Ok(reqs)
    });
    let s2: Stage = Box::new(move || {
        let mut t = temps.borrow_mut();
        if c.rank == 0 {
            if !exclusive {
                coll::local_copy(mine.borrow_mut().ptr(), count, dt, rbuf, count, dt)?;
            }
            return Ok(vec![]);
        }
        // acc = x0 op x1 op ... op x_{r-1} [op x_r], computed left to right.
        let mut acc = TempBuf::new(&d, count);
        coll::local_copy(t[0].ptr(), count, dt, acc.ptr(), count, dt)?;
        let upto = if exclusive { c.rank } else { c.rank + 1 };
        for i in 1..upto {
            let mut next = TempBuf::new(&d, count);
            let xi = if i == c.rank {
                mine.borrow_mut().ptr()
            } else {
                t[i as usize].ptr()
            };
            coll::local_copy(xi, count, dt, next.ptr(), count, dt)?;
            coll::apply_op(op, dt, acc.ptr(), next.ptr(), count)?;
            acc = next;
        }
        coll::local_copy(acc.ptr(), count, dt, rbuf, count, dt)?;
        Ok(vec![])
    });
    rt::start_coll(c.me, c.comm, vec![s1, s2])
}

/// MPI_Ireduce_scatter: flat reduce to 0, then 0 scatters the blocks.
pub fn ireduce_scatter(
    c: CommView,
    sbuf: *const u8,
    rbuf: *mut u8,
    rcounts: Vec<usize>,
    dt: i32,
    op: i32,
) -> MpiResult<u32> {
    let d = dt_of(dt)?;
    let total: usize = rcounts.iter().sum();
    let tmp = Rc::new(RefCell::new(TempBuf::new(&d, total)));
    let sbuf = if std::ptr::eq(sbuf, IN_PLACE) {
        rbuf as *const u8
    } else {
        sbuf
    };
    let tp = tmp.borrow_mut().ptr();
    let mut stages = reduce_stages(c, sbuf, tp, total, dt, op, 0)?;
    let ext = d.extent;
    stages.push(Box::new(move || {
        let _keep = &tmp;
        let mine = rcounts[c.rank as usize];
        if c.rank != 0 {
            return Ok(vec![c.irecv(rbuf, mine, dt, 0, TAG)?]);
        }
        let mut reqs = Vec::new();
        let mut off = 0isize;
        for i in 0..c.size {
            let n = rcounts[i as usize];
            let src = tp.wrapping_offset(off * ext);
            if i == 0 {
                coll::local_copy(src, n, dt, rbuf, n, dt)?;
            } else {
                reqs.push(c.isend(src, n, dt, i, TAG)?);
            }
            off += n as isize;
        }
        Ok(reqs)
    }));
    rt::start_coll(c.me, c.comm, stages)
}
