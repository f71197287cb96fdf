//! Non-blocking collectives (`MPI_Ibarrier`, `MPI_Ibcast`, ...) on
//! intra-communicators; [`crate::coll::nbc_inter`] has the intercommunicator ones.
//!
//! Like SMPI, they use flat algorithms: every message of a stage is posted at
//! once. A collective is a list of stages; a stage starts when the previous
//! one's messages have all completed, which happens inside MPI calls on the
//! request (`MPI_Wait`, `MPI_Test`, ...): MPI's weak progress rule. Local
//! reductions run in the last stage, in rank order.
//!
//! Each collective has a tag of its own on the communicator's collective
//! context, drawn from a per-communicator counter: every member starts the
//! same collectives in the same order, so the counter names a collective alike
//! on every rank, and several outstanding collectives on one communicator
//! never take each other's messages.
#![allow(clippy::not_unsafe_ptr_arg_deref, clippy::too_many_arguments)]

use std::cell::RefCell;
use std::rc::Rc;

use crate::coll::{self, Alltoallw, CommView, Reducer, TempBuf, BYTE, IN_PLACE};
use crate::mpi::{self as rt, with_world, MpiResult, Stage};

/// First tag of non-blocking collectives (blocking ones use small fixed tags).
const TAG_BASE: i32 = 1 << 20;

fn dt_of(h: i32) -> MpiResult<Rc<crate::mpi::datatype::Datatype>> {
    with_world(|w| w.dtype(h))
}

/// One non-blocking collective's endpoints: the communicator and its own tag.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Nbc {
    pub c: CommView,
    tag: i32,
}

impl Nbc {
    /// Names the next collective started on `c` (call it once per collective, on every member).
    pub(crate) fn new(c: CommView) -> MpiResult<Self> {
        let seq = with_world(|w| {
            let context = w.ranks[c.me as usize].comm(c.comm)?.shared.context;
            let n = w.nbc_started.entry((c.me, context)).or_insert(0);
            let seq = *n;
            *n = n.wrapping_add(1);
            Ok::<u32, crate::mpi::MpiError>(seq)
        })?;
        Ok(Nbc {
            c,
            tag: TAG_BASE + (seq % (1 << 30)) as i32,
        })
    }

    pub(crate) fn isend(&self, buf: *const u8, count: usize, dt: i32, peer: i32) -> MpiResult<u32> {
        self.c.isend(buf, count, dt, peer, self.tag)
    }

    pub(crate) fn irecv(&self, buf: *mut u8, count: usize, dt: i32, peer: i32) -> MpiResult<u32> {
        self.c.irecv(buf, count, dt, peer, self.tag)
    }

    /// Starts the collective; returns its request.
    pub(crate) fn start(&self, stages: Vec<Stage>) -> MpiResult<u32> {
        rt::start_coll(self.c.me, self.c.comm, stages)
    }
}

/// Appends a last stage that owns `keep`, so that buffers the earlier stages'
/// messages use live until those messages are over.
pub(crate) fn keep_until_done<T: 'static>(stages: &mut Vec<Stage>, keep: T) {
    stages.push(Box::new(move || {
        drop(keep);
        Ok(vec![])
    }));
}

/// `out = x[0] op x[1] op ... op x[n-1]`, folded from the right
/// (`acc = x[i] op acc`) so that a non-commutative operation sees its operands
/// in rank order.
pub(crate) fn fold_in_order(red: &Reducer, xs: &[*const u8], count: usize, out: *mut u8) -> MpiResult<()> {
    let Some((&last, rest)) = xs.split_last() else {
        return Ok(());
    };
    let dt = red.dtype;
    let mut acc = red.temp(count);
    coll::local_copy(last, count, dt, acc.ptr(), count, dt)?;
    for &x in rest.iter().rev() {
        red.left(x, acc.ptr(), count)?;
    }
    coll::local_copy(acc.ptr(), count, dt, out, count, dt)
}

/// `n` temporary buffers of `count` elements and their element-0 pointers
/// (the pointers stay valid while the buffers live, wherever they move).
pub(crate) fn temps(red: &Reducer, n: usize, count: usize) -> (Vec<TempBuf>, Vec<*mut u8>) {
    let mut bufs: Vec<TempBuf> = (0..n).map(|_| red.temp(count)).collect();
    let ptrs = bufs.iter_mut().map(|b| b.ptr()).collect();
    (bufs, ptrs)
}

/// MPI_Ibarrier: everyone notifies rank 0, then rank 0 answers everyone.
pub(crate) fn ibarrier(c: CommView) -> MpiResult<u32> {
    let n = Nbc::new(c)?;
    let s1: Stage = Box::new(move || {
        if c.rank == 0 {
            (1..c.size)
                .map(|i| n.irecv(std::ptr::null_mut(), 0, BYTE, i))
                .collect()
        } else {
            Ok(vec![n.isend(std::ptr::null(), 0, BYTE, 0)?])
        }
    });
    let s2: Stage = Box::new(move || {
        if c.rank == 0 {
            (1..c.size)
                .map(|i| n.isend(std::ptr::null(), 0, BYTE, i))
                .collect()
        } else {
            Ok(vec![n.irecv(std::ptr::null_mut(), 0, BYTE, 0)?])
        }
    });
    n.start(vec![s1, s2])
}

/// MPI_Ibcast: the root sends to everyone.
pub(crate) fn ibcast(c: CommView, buf: *mut u8, count: usize, dt: i32, root: i32) -> MpiResult<u32> {
    c.check_root(root)?;
    let n = Nbc::new(c)?;
    let s: Stage = Box::new(move || {
        if c.rank == root {
            (0..c.size)
                .filter(|&i| i != root)
                .map(|i| n.isend(buf, count, dt, i))
                .collect()
        } else {
            Ok(vec![n.irecv(buf, count, dt, root)?])
        }
    });
    n.start(vec![s])
}

/// Stages of a flat reduce to `root`: receives, then the local fold in rank
/// order. `sbuf` is the caller's contribution (not `MPI_IN_PLACE`).
fn reduce_stages(
    n: Nbc,
    red: Reducer,
    sbuf: *const u8,
    rbuf: *mut u8,
    count: usize,
    root: i32,
) -> Vec<Stage> {
    let c = n.c;
    let dt = red.dtype;
    if c.rank != root {
        return vec![Box::new(move || Ok(vec![n.isend(sbuf, count, dt, root)?]))];
    }
    let (bufs, mut ptrs) = temps(&red, c.size as usize, count);
    ptrs[root as usize] = sbuf as *mut u8;
    let recv_into = ptrs.clone();
    let recv: Stage = Box::new(move || {
        (0..c.size)
            .filter(|&i| i != root)
            .map(|i| n.irecv(recv_into[i as usize], count, dt, i))
            .collect()
    });
    let combine: Stage = Box::new(move || {
        let xs: Vec<*const u8> = ptrs.iter().map(|&p| p as *const u8).collect();
        fold_in_order(&red, &xs, count, rbuf)?;
        drop(bufs);
        Ok(vec![])
    });
    vec![recv, combine]
}

/// MPI_Ireduce.
pub(crate) fn ireduce(
    c: CommView,
    sbuf: *const u8,
    rbuf: *mut u8,
    count: usize,
    dt: i32,
    op: i32,
    root: i32,
) -> MpiResult<u32> {
    c.check_root(root)?;
    let red = Reducer::new(op, dt)?;
    let n = Nbc::new(c)?;
    let sbuf = coll::contribution(sbuf, rbuf);
    n.start(reduce_stages(n, red, sbuf, rbuf, count, root))
}

/// MPI_Iallreduce: flat reduce to 0, then 0 sends the result to everyone.
/// With `MPI_IN_PLACE` the contribution is read from `rbuf` before the result
/// overwrites it (rank 0 folds into a temporary; the others receive after
/// their send is over).
pub(crate) fn iallreduce(
    c: CommView,
    sbuf: *const u8,
    rbuf: *mut u8,
    count: usize,
    dt: i32,
    op: i32,
) -> MpiResult<u32> {
    let red = Reducer::new(op, dt)?;
    let n = Nbc::new(c)?;
    let sbuf = coll::contribution(sbuf, rbuf);
    let mut stages = reduce_stages(n, red, sbuf, rbuf, count, 0);
    stages.push(Box::new(move || {
        if c.rank == 0 {
            (1..c.size).map(|i| n.isend(rbuf, count, dt, i)).collect()
        } else {
            Ok(vec![n.irecv(rbuf, count, dt, 0)?])
        }
    }));
    n.start(stages)
}

/// MPI_Igatherv (and Igather).
pub(crate) fn igatherv(
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
    c.check_root(root)?;
    let rext = if c.rank == root { dt_of(rtype)?.extent } else { 0 };
    let n = Nbc::new(c)?;
    let s: Stage = Box::new(move || {
        if c.rank != root {
            return Ok(vec![n.isend(sbuf, scount, stype, root)?]);
        }
        let mut reqs = Vec::new();
        for i in 0..c.size {
            let dst = rbuf.wrapping_offset(displs[i as usize] * rext);
            if i == root {
                if !std::ptr::eq(sbuf, IN_PLACE) {
                    coll::local_copy(sbuf, scount, stype, dst, rcounts[i as usize], rtype)?;
                }
            } else {
                reqs.push(n.irecv(dst, rcounts[i as usize], rtype, i)?);
            }
        }
        Ok(reqs)
    });
    n.start(vec![s])
}

/// MPI_Iscatterv (and Iscatter).
pub(crate) fn iscatterv(
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
    c.check_root(root)?;
    let sext = if c.rank == root { dt_of(stype)?.extent } else { 0 };
    let n = Nbc::new(c)?;
    let s: Stage = Box::new(move || {
        if c.rank != root {
            return Ok(vec![n.irecv(rbuf, rcount, rtype, root)?]);
        }
        let mut reqs = Vec::new();
        for i in 0..c.size {
            let src = sbuf.wrapping_offset(displs[i as usize] * sext);
            if i == root {
                if rbuf != IN_PLACE {
                    coll::local_copy(src, scounts[i as usize], stype, rbuf, rcount, rtype)?;
                }
            } else {
                reqs.push(n.isend(src, scounts[i as usize], stype, i)?);
            }
        }
        Ok(reqs)
    });
    n.start(vec![s])
}

/// MPI_Iallgatherv (and Iallgather).
pub(crate) fn iallgatherv(
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
    let n = Nbc::new(c)?;
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
            reqs.push(n.isend(sbuf, scount, stype, i)?);
            let dst = rbuf.wrapping_offset(displs[i as usize] * rext);
            reqs.push(n.irecv(dst, rcounts[i as usize], rtype, i)?);
        }
        Ok(reqs)
    });
    n.start(vec![s])
}

/// Packs `count` elements of `dtype` at `buf` into bytes.
pub(crate) fn pack_block(buf: *const u8, count: usize, dtype: i32) -> MpiResult<Vec<u8>> {
    let d = dt_of(dtype)?;
    let mut v = Vec::with_capacity(d.size * count);
    if count > 0 {
        // Safety: the application's buffer holds `count` elements of `dtype`.
        unsafe { d.pack(buf, count, &mut v) };
    }
    Ok(v)
}

/// MPI_Ialltoallw (byte displacements, one type per peer); Ialltoall(v) map
/// onto it. With `sbuf == MPI_IN_PLACE` the send arguments are ignored: block
/// `i` of the receive buffer is sent to `i` (from a packed copy, since the
/// block it receives lands at the same place).
pub(crate) fn ialltoallw(c: CommView, a: Alltoallw) -> MpiResult<u32> {
    let Alltoallw {
        sbuf,
        scounts,
        sdispls,
        stypes,
        rbuf,
        rcounts,
        rdispls,
        rtypes,
    } = a;
    let n = Nbc::new(c)?;
    let in_place = std::ptr::eq(sbuf, IN_PLACE);
    let copies: Rc<RefCell<Vec<Vec<u8>>>> = Rc::default();
    let filled = copies.clone();
    let mut stages: Vec<Stage> = vec![Box::new(move || {
        let me = c.rank as usize;
        let peers: Vec<usize> = (0..c.size as usize).filter(|&i| i != me).collect();
        let mut packed = Vec::new();
        if in_place {
            for &i in &peers {
                packed.push(pack_block(
                    rbuf.wrapping_offset(rdispls[i]),
                    rcounts[i],
                    rtypes[i],
                )?);
            }
        } else {
            coll::local_copy(
                sbuf.wrapping_offset(sdispls[me]),
                scounts[me],
                stypes[me],
                rbuf.wrapping_offset(rdispls[me]),
                rcounts[me],
                rtypes[me],
            )?;
        }
        let mut reqs = Vec::new();
        for &i in &peers {
            reqs.push(n.irecv(rbuf.wrapping_offset(rdispls[i]), rcounts[i], rtypes[i], i as i32)?);
        }
        for (k, &i) in peers.iter().enumerate() {
            reqs.push(if in_place {
                n.isend(packed[k].as_ptr(), packed[k].len(), BYTE, i as i32)?
            } else {
                n.isend(sbuf.wrapping_offset(sdispls[i]), scounts[i], stypes[i], i as i32)?
            });
        }
        *filled.borrow_mut() = packed;
        Ok(reqs)
    })];
    keep_until_done(&mut stages, copies);
    n.start(stages)
}

/// MPI_Iscan / MPI_Iexscan: each rank receives from all lower ranks and sends
/// to all higher ones, then combines in rank order.
pub(crate) fn iscan(
    c: CommView,
    sbuf: *const u8,
    rbuf: *mut u8,
    count: usize,
    dt: i32,
    op: i32,
    exclusive: bool,
) -> MpiResult<u32> {
    let red = Reducer::new(op, dt)?;
    let n = Nbc::new(c)?;
    let src = if std::ptr::eq(sbuf, IN_PLACE) {
        rbuf as *const u8
    } else {
        sbuf
    };
    // My contribution, copied: with MPI_IN_PLACE the result overwrites it.
    let mut mine = red.temp(count);
    let mine_ptr = mine.ptr();
    coll::local_copy(src, count, dt, mine_ptr, count, dt)?;
    let (lower, mut xs) = temps(&red, c.rank as usize, count);
    let recv_into = xs.clone();
    let s1: Stage = Box::new(move || {
        let mut reqs = Vec::new();
        for i in 0..c.rank {
            reqs.push(n.irecv(recv_into[i as usize], count, dt, i)?);
        }
        for i in c.rank + 1..c.size {
            reqs.push(n.isend(mine_ptr, count, dt, i)?);
        }
        Ok(reqs)
    });
    let s2: Stage = Box::new(move || {
        if !exclusive {
            xs.push(mine_ptr);
        }
        if !xs.is_empty() {
            let xs: Vec<*const u8> = xs.iter().map(|&p| p as *const u8).collect();
            fold_in_order(&red, &xs, count, rbuf)?;
        }
        drop((lower, mine));
        Ok(vec![])
    });
    n.start(vec![s1, s2])
}

/// MPI_Ireduce_scatter (and Ireduce_scatter_block): flat reduce to 0, then 0
/// scatters the blocks.
pub(crate) fn ireduce_scatter(
    c: CommView,
    sbuf: *const u8,
    rbuf: *mut u8,
    rcounts: Vec<usize>,
    dt: i32,
    op: i32,
) -> MpiResult<u32> {
    let red = Reducer::new(op, dt)?;
    let ext = dt_of(dt)?.extent;
    let n = Nbc::new(c)?;
    let total: usize = rcounts.iter().sum();
    let mut full = red.temp(if c.rank == 0 { total } else { 0 });
    let full_ptr = full.ptr();
    let sbuf = coll::contribution(sbuf, rbuf);
    let mut stages = reduce_stages(n, red, sbuf, full_ptr, total, 0);
    stages.push(Box::new(move || {
        let mine = rcounts[c.rank as usize];
        if c.rank != 0 {
            return Ok(vec![n.irecv(rbuf, mine, dt, 0)?]);
        }
        let mut reqs = Vec::new();
        let mut off = 0isize;
        for i in 0..c.size {
            let k = rcounts[i as usize];
            let src = full_ptr.wrapping_offset(off * ext);
            if i == 0 {
                coll::local_copy(src, k, dt, rbuf, k, dt)?;
            } else {
                reqs.push(n.isend(src, k, dt, i)?);
            }
            off += k as isize;
        }
        Ok(reqs)
    }));
    // Rank 0's scatter sends read the reduced vector until they are over.
    keep_until_done(&mut stages, full);
    n.start(stages)
}
