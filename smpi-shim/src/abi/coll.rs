//! Collective communication (MPI chapter 6), blocking and non-blocking, on intra- and
//! intercommunicators, and reduction operations.
#![allow(non_snake_case, clippy::missing_safety_doc, clippy::too_many_arguments)]

use std::ffi::{c_int, c_void};

use crate::coll::inter::{self as ic, InterView};
use crate::coll::nbc_inter::{self, MPI_ROOT};
use crate::coll::{self, nbc, CommView, IN_PLACE};
use crate::mpi::entry::{self, enter_call, result};
use crate::mpi::op::{Op, UserFn};
use crate::mpi::{self as rt, mpi_err, with_world, MpiResult, MPI_SUCCESS};

use crate::mpi::coll_check::{self, CollSig};

use super::args::*;
use super::ti_hooks as tih;
use crate::mpi::ti_trace::ti;

pub(super) fn view(me: u32, comm: i32) -> MpiResult<CommView> {
    let inter = with_world(|w| w.ranks[me as usize].comm(comm).map(|c| c.shared.remote.is_some()))?;
    if inter {
        return Err(mpi_err(
            rt::MPI_ERR_COMM,
            "collectives on intercommunicators are not supported yet",
        ));
    }
    CommView::new(me, comm)
}

/// A count that MPI says is ignored when its buffer is `MPI_IN_PLACE`.
pub(super) fn in_place_count(buf: *const c_void, v: c_int) -> MpiResult<usize> {
    if buf as *mut u8 == IN_PLACE {
        Ok(0)
    } else {
        nonneg(v)
    }
}

/// Runs a blocking collective under its entry guard, as `nb!` does for the
/// non-blocking forms: any error goes to the handler of `comm` under `call`.
fn blocking(call: &'static str, comm: c_int, body: impl FnOnce(u32) -> MpiResult<()>) -> c_int {
    let g = enter_call(call);
    result(g.me, comm, call, body(g.me))
}

/// The communicator a blocking collective runs on.
enum On {
    /// An intercommunicator: the algorithms of `coll::inter`.
    Inter(InterView),
    /// An intracommunicator: the selected algorithm of `coll`.
    Intra(CommView),
}

impl On {
    fn of(me: u32, comm: i32) -> MpiResult<On> {
        Ok(match InterView::of(me, comm)? {
            Some(iv) => On::Inter(iv),
            None => On::Intra(view(me, comm)?),
        })
    }

    /// This rank in an intracommunicator; `None` on an intercommunicator.
    fn rank(&self) -> Option<i32> {
        match self {
            On::Inter(_) => None,
            On::Intra(c) => Some(c.rank),
        }
    }

    /// How many ranks a rooted or all-to-all collective addresses: the
    /// remote group on an intercommunicator, the communicator otherwise.
    fn peers(&self) -> i32 {
        match self {
            On::Inter(iv) => iv.rsize,
            On::Intra(c) => c.size,
        }
    }
}

/// The two sides of a rooted collective at this rank: (it is the root side,
/// it has data of its own on the other side). `rank` is `None` on an
/// intercommunicator, where `root` is `MPI_ROOT`, `MPI_PROC_NULL` or a remote
/// rank; `own` is the non-root buffer (`MPI_IN_PLACE` at an intracommunicator root).
pub(super) fn rooted(rank: Option<i32>, root: c_int, own: *const c_void) -> (bool, bool) {
    match rank {
        None => (root == MPI_ROOT, root >= 0),
        Some(rank) => (rank == root, !in_place(own)),
    }
}

/// A count where it is read (`used`), zero where MPI says it is ignored.
pub(super) fn count_if(used: bool, count: c_int) -> MpiResult<usize> {
    if used {
        nonneg(count)
    } else {
        Ok(0)
    }
}

/// Counts and displacements from C arrays where they are read (`used`),
/// zeros where MPI says they are ignored.
unsafe fn counts_displs_if(
    used: bool,
    n: i32,
    counts: *const c_int,
    displs: *const c_int,
) -> MpiResult<(Vec<usize>, Vec<isize>)> {
    if used {
        // Safety: where they are read the arrays hold `n` entries (the caller's contract).
        unsafe { counts_displs(n, counts, displs) }
    } else {
        Ok((vec![0; n as usize], vec![0; n as usize]))
    }
}

/// The element count of a reduction, once its datatype and operation are known valid.
fn reduction_count(count: c_int, dt: c_int, op: c_int) -> MpiResult<usize> {
    let n = nonneg(count)?;
    with_world(|w| w.dtype(dt).and(w.op(op).map(|_| ())))?;
    Ok(n)
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Barrier(comm: c_int) -> c_int {
    blocking("MPI_Barrier", comm, |me| {
        check_barrier(me, comm)?;
        coll_check::check(me, comm, CollSig::new("MPI_Barrier"))?;
        ti!(tih::barrier(me, comm));
        match On::of(me, comm)? {
            On::Inter(iv) => ic::barrier(iv),
            On::Intra(c) => coll::barrier(c),
        }
    })
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Bcast(
    buf: *mut c_void,
    count: c_int,
    dt: c_int,
    root: c_int,
    comm: c_int,
) -> c_int {
    blocking("MPI_Bcast", comm, |me| {
        check_bcast(me, buf, count, dt, root, comm)?;
        coll_check::check(me, comm, CollSig::new("MPI_Bcast").root(root).data(count, dt))?;
        ti!(tih::bcast(me, count, dt, root, comm));
        match On::of(me, comm)? {
            On::Inter(iv) => ic::bcast(iv, buf as *mut u8, nonneg(count)?, dt, root),
            On::Intra(c) => {
                let n = nonneg(count)?;
                with_world(|w| w.dtype(dt))?;
                coll::bcast(c, buf as *mut u8, n, dt, root)
            }
        }
    })
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Reduce(
    sbuf: *const c_void,
    rbuf: *mut c_void,
    count: c_int,
    dt: c_int,
    op: c_int,
    root: c_int,
    comm: c_int,
) -> c_int {
    blocking("MPI_Reduce", comm, |me| {
        check_reduce(me, sbuf, rbuf, count, dt, op, root, comm)?;
        let sig = CollSig::new("MPI_Reduce").root(root).op(op).data(count, dt);
        coll_check::check(me, comm, sig)?;
        ti!(tih::reduction(me, "reduce", count, dt, root, comm));
        let (s, r) = (sbuf as *const u8, rbuf as *mut u8);
        match On::of(me, comm)? {
            On::Inter(iv) => ic::reduce(iv, s, r, nonneg(count)?, dt, op, root),
            On::Intra(c) => coll::reduce(c, s, r, reduction_count(count, dt, op)?, dt, op, root),
        }
    })
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Allreduce(
    sbuf: *const c_void,
    rbuf: *mut c_void,
    count: c_int,
    dt: c_int,
    op: c_int,
    comm: c_int,
) -> c_int {
    blocking("MPI_Allreduce", comm, |me| {
        check_allreduce(me, sbuf, rbuf, count, dt, op, comm)?;
        coll_check::check(me, comm, CollSig::new("MPI_Allreduce").op(op).data(count, dt))?;
        ti!(tih::reduction(me, "allreduce", count, dt, -1, comm));
        let (s, r) = (sbuf as *const u8, rbuf as *mut u8);
        match On::of(me, comm)? {
            On::Inter(iv) => ic::allreduce(iv, s, r, nonneg(count)?, dt, op),
            On::Intra(c) => coll::allreduce(c, s, r, reduction_count(count, dt, op)?, dt, op),
        }
    })
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Reduce_local(
    inbuf: *const c_void,
    inout: *mut c_void,
    count: c_int,
    dt: c_int,
    op: c_int,
) -> c_int {
    let g = enter_call("MPI_Reduce_local");
    coll_call!(g, rt::MPI_COMM_WORLD, "MPI_Reduce_local", {
        arg_data(inbuf, count, dt, INBUF)?;
        arg_data(inout, count, dt, INOUTBUF)?;
        arg_op(op)?;
        coll::apply_op(op, dt, inbuf as *const u8, inout as *mut u8, nonneg(count)?)
    })
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Gather(
    sbuf: *const c_void,
    scount: c_int,
    stype: c_int,
    rbuf: *mut c_void,
    rcount: c_int,
    rtype: c_int,
    root: c_int,
    comm: c_int,
) -> c_int {
    blocking("MPI_Gather", comm, |me| {
        check_gather(me, sbuf, scount, stype, rbuf, rcount, rtype, root, comm)?;
        let sig = CollSig::new("MPI_Gather").root(root);
        coll_check::check(me, comm, sig.contributed(sbuf, scount, stype, rcount, rtype))?;
        ti!(tih::regular(
            me, "gather", sbuf, scount, stype, rcount, rtype, root, comm
        ));
        let on = On::of(me, comm)?;
        let (receives, sends) = rooted(on.rank(), root, sbuf);
        // Receive arguments matter only at the root.
        let rc = count_if(receives, rcount)?;
        let (s, sc, r) = (sbuf as *const u8, count_if(sends, scount)?, rbuf as *mut u8);
        match on {
            On::Inter(iv) => {
                let (cs, ds) = regular(iv.rsize, rc);
                ic::gatherv(iv, s, sc, stype, r, &cs, &ds, rtype, root)
            }
            On::Intra(c) => coll::gather(c, s, sc, stype, r, rc, rtype, root),
        }
    })
}

pub(super) unsafe fn counts_displs(
    n: i32,
    counts: *const c_int,
    displs: *const c_int,
) -> MpiResult<(Vec<usize>, Vec<isize>)> {
    // Safety: the caller upholds this function's contract (see its `# Safety`).
    unsafe {
        let mut c = Vec::with_capacity(n as usize);
        let mut d = Vec::with_capacity(n as usize);
        for i in 0..n as usize {
            c.push(nonneg(*counts.add(i))?);
            d.push(if displs.is_null() {
                0
            } else {
                *displs.add(i) as isize
            });
        }
        Ok((c, d))
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Gatherv(
    sbuf: *const c_void,
    scount: c_int,
    stype: c_int,
    rbuf: *mut c_void,
    rcounts: *const c_int,
    displs: *const c_int,
    rtype: c_int,
    root: c_int,
    comm: c_int,
) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        blocking("MPI_Gatherv", comm, |me| {
            check_gatherv(me, sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm)?;
            coll_check::check(me, comm, CollSig::new("MPI_Gatherv").root(root))?;
            ti!(tih::gatherv(me, sbuf, scount, stype, rcounts, rtype, root, comm));
            let on = On::of(me, comm)?;
            let (receives, sends) = rooted(on.rank(), root, sbuf);
            let (cs, ds) = counts_displs_if(receives, on.peers(), rcounts, displs)?;
            let (s, sc, r) = (sbuf as *const u8, count_if(sends, scount)?, rbuf as *mut u8);
            match on {
                On::Inter(iv) => ic::gatherv(iv, s, sc, stype, r, &cs, &ds, rtype, root),
                On::Intra(c) => coll::gatherv(c, s, sc, stype, r, &cs, &ds, rtype, root),
            }
        })
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Scatter(
    sbuf: *const c_void,
    scount: c_int,
    stype: c_int,
    rbuf: *mut c_void,
    rcount: c_int,
    rtype: c_int,
    root: c_int,
    comm: c_int,
) -> c_int {
    blocking("MPI_Scatter", comm, |me| {
        check_scatter(me, sbuf, scount, stype, rbuf, rcount, rtype, root, comm)?;
        let sig = CollSig::new("MPI_Scatter").root(root);
        coll_check::check(me, comm, sig.received(rbuf, rcount, rtype, scount, stype))?;
        ti!(tih::regular(
            me, "scatter", sbuf, scount, stype, rcount, rtype, root, comm
        ));
        let on = On::of(me, comm)?;
        let (sends, receives) = rooted(on.rank(), root, rbuf);
        // Send arguments matter only at the root.
        let sc = count_if(sends, scount)?;
        let (s, r, rc) = (sbuf as *const u8, rbuf as *mut u8, count_if(receives, rcount)?);
        match on {
            On::Inter(iv) => {
                let (cs, ds) = regular(iv.rsize, sc);
                ic::scatterv(iv, s, &cs, &ds, stype, r, rc, rtype, root)
            }
            On::Intra(c) => coll::scatter(c, s, sc, stype, r, rc, rtype, root),
        }
    })
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Scatterv(
    sbuf: *const c_void,
    scounts: *const c_int,
    displs: *const c_int,
    stype: c_int,
    rbuf: *mut c_void,
    rcount: c_int,
    rtype: c_int,
    root: c_int,
    comm: c_int,
) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        blocking("MPI_Scatterv", comm, |me| {
            check_scatterv(me, sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm)?;
            coll_check::check(me, comm, CollSig::new("MPI_Scatterv").root(root))?;
            ti!(tih::scatterv(me, scounts, stype, rcount, rtype, root, comm));
            let on = On::of(me, comm)?;
            let (sends, receives) = rooted(on.rank(), root, rbuf);
            let (cs, ds) = counts_displs_if(sends, on.peers(), scounts, displs)?;
            let (s, r, rc) = (sbuf as *const u8, rbuf as *mut u8, count_if(receives, rcount)?);
            match on {
                On::Inter(iv) => ic::scatterv(iv, s, &cs, &ds, stype, r, rc, rtype, root),
                On::Intra(c) => coll::scatterv(c, s, &cs, &ds, stype, r, rc, rtype, root),
            }
        })
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Allgather(
    sbuf: *const c_void,
    scount: c_int,
    stype: c_int,
    rbuf: *mut c_void,
    rcount: c_int,
    rtype: c_int,
    comm: c_int,
) -> c_int {
    blocking("MPI_Allgather", comm, |me| {
        check_allgather(me, sbuf, scount, stype, rbuf, rcount, rtype, comm)?;
        let sig = CollSig::new("MPI_Allgather");
        coll_check::check(me, comm, sig.contributed(sbuf, scount, stype, rcount, rtype))?;
        ti!(tih::regular(
            me,
            "allgather",
            sbuf,
            scount,
            stype,
            rcount,
            rtype,
            -1,
            comm
        ));
        let on = On::of(me, comm)?;
        // MPI_IN_PLACE is refused on an intercommunicator (check_allgather).
        let (cs, ds) = regular(on.peers(), nonneg(rcount)?);
        let (s, sc, r) = (sbuf as *const u8, in_place_count(sbuf, scount)?, rbuf as *mut u8);
        match on {
            On::Inter(iv) => ic::allgatherv(iv, s, sc, stype, r, &cs, &ds, rtype),
            On::Intra(c) => coll::allgatherv(c, s, sc, stype, r, &cs, &ds, rtype),
        }
    })
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Allgatherv(
    sbuf: *const c_void,
    scount: c_int,
    stype: c_int,
    rbuf: *mut c_void,
    rcounts: *const c_int,
    displs: *const c_int,
    rtype: c_int,
    comm: c_int,
) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        blocking("MPI_Allgatherv", comm, |me| {
            check_allgatherv(me, sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm)?;
            coll_check::check(me, comm, CollSig::new("MPI_Allgatherv"))?;
            ti!(tih::gatherv(me, sbuf, scount, stype, rcounts, rtype, -1, comm));
            let on = On::of(me, comm)?;
            let (cs, ds) = counts_displs(on.peers(), rcounts, displs)?;
            // MPI_IN_PLACE is refused on an intercommunicator (check_allgatherv).
            let (s, sc, r) = (sbuf as *const u8, in_place_count(sbuf, scount)?, rbuf as *mut u8);
            match on {
                On::Inter(iv) => ic::allgatherv(iv, s, sc, stype, r, &cs, &ds, rtype),
                On::Intra(c) => coll::allgatherv(c, s, sc, stype, r, &cs, &ds, rtype),
            }
        })
    }
}

/// An alltoall(v) on an intercommunicator, as an alltoallw: displacements in
/// elements become bytes, one type per side.
fn inter_alltoallv(
    iv: InterView,
    s: *const u8,
    sc: &[usize],
    sd: &[isize],
    st: c_int,
    r: *mut u8,
    rc: &[usize],
    rd: &[isize],
    rt_: c_int,
) -> MpiResult<()> {
    let (se, re) = (extent(st)?, extent(rt_)?);
    let n = iv.rsize as usize;
    let sd: Vec<isize> = sd.iter().map(|d| d * se).collect();
    let rd: Vec<isize> = rd.iter().map(|d| d * re).collect();
    ic::alltoallw(iv, s, sc, &sd, &vec![st; n], r, rc, &rd, &vec![rt_; n])
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Alltoall(
    sbuf: *const c_void,
    scount: c_int,
    stype: c_int,
    rbuf: *mut c_void,
    rcount: c_int,
    rtype: c_int,
    comm: c_int,
) -> c_int {
    blocking("MPI_Alltoall", comm, |me| {
        check_allgather(me, sbuf, scount, stype, rbuf, rcount, rtype, comm)?;
        let sig = CollSig::new("MPI_Alltoall");
        coll_check::check(me, comm, sig.contributed(sbuf, scount, stype, rcount, rtype))?;
        ti!(tih::regular(
            me, "alltoall", sbuf, scount, stype, rcount, rtype, -1, comm
        ));
        let on = On::of(me, comm)?;
        // The send count and type are ignored with MPI_IN_PLACE (refused on
        // an intercommunicator by check_allgather).
        let (sc, rc) = (in_place_count(sbuf, scount)?, nonneg(rcount)?);
        let ((scs, sd), (rcs, rd)) = (regular(on.peers(), sc), regular(on.peers(), rc));
        let (s, r) = (sbuf as *const u8, rbuf as *mut u8);
        match on {
            On::Inter(iv) => inter_alltoallv(iv, s, &scs, &sd, stype, r, &rcs, &rd, rtype),
            On::Intra(c) => {
                let (scs, sd, stype) = if in_place(sbuf) {
                    (rcs.clone(), rd.clone(), rtype)
                } else {
                    (scs, sd, stype)
                };
                coll::alltoallv(c, s, &scs, &sd, stype, r, &rcs, &rd, rtype, true)
            }
        }
    })
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Alltoallv(
    sbuf: *const c_void,
    scounts: *const c_int,
    sdispls: *const c_int,
    stype: c_int,
    rbuf: *mut c_void,
    rcounts: *const c_int,
    rdispls: *const c_int,
    rtype: c_int,
    comm: c_int,
) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        blocking("MPI_Alltoallv", comm, |me| {
            let (st, rt_) = (Err(stype), Err(rtype));
            check_alltoallv(me, sbuf, scounts, sdispls, st, rbuf, rcounts, rdispls, rt_, comm)?;
            coll_check::check(me, comm, CollSig::new("MPI_Alltoallv"))?;
            ti!(tih::alltoallv(me, sbuf, scounts, stype, rcounts, rtype, comm));
            let (on, s, r) = (On::of(me, comm)?, sbuf as *const u8, rbuf as *mut u8);
            let n = on.peers();
            match on {
                On::Inter(iv) => {
                    let (sc, sd) = counts_displs(n, scounts, sdispls)?;
                    let (rc, rd) = counts_displs(n, rcounts, rdispls)?;
                    inter_alltoallv(iv, s, &sc, &sd, stype, r, &rc, &rd, rtype)
                }
                On::Intra(c) => {
                    let (rc, rd) = counts_displs(n, rcounts, rdispls)?;
                    // With MPI_IN_PLACE the send arguments are those of the receive.
                    let (sc, sd, stype) = if in_place(sbuf) {
                        (rc.clone(), rd.clone(), rtype)
                    } else {
                        let (sc, sd) = counts_displs(n, scounts, sdispls)?;
                        (sc, sd, stype)
                    };
                    coll::alltoallv(c, s, &sc, &sd, stype, r, &rc, &rd, rtype, false)
                }
            }
        })
    }
}

/// The size of this rank's (local) group of `comm`.
fn local_size(me: u32, comm: c_int) -> MpiResult<i32> {
    with_world(|w| w.ranks[me as usize].comm(comm).map(|c| c.size()))
}

/// MPI_Reduce_scatter and MPI_Reduce_scatter_block, once their receive counts
/// (`counts`, one per rank of the local group) are read.
fn reduce_scatter(
    me: u32,
    comm: c_int,
    sbuf: *const c_void,
    rbuf: *mut c_void,
    counts: impl FnOnce(i32) -> MpiResult<Vec<usize>>,
    dt: c_int,
    op: c_int,
) -> MpiResult<()> {
    let (s, r) = (sbuf as *const u8, rbuf as *mut u8);
    match On::of(me, comm)? {
        On::Inter(iv) => {
            let rc = counts(local_size(me, comm)?)?;
            let total: usize = rc.iter().sum();
            ic::reduce_scatter(iv, s, r, &rc, total, dt, op)
        }
        On::Intra(c) => coll::reduce_scatter(c, s, r, &counts(c.size)?, dt, op),
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Reduce_scatter(
    sbuf: *const c_void,
    rbuf: *mut c_void,
    rcounts: *const c_int,
    dt: c_int,
    op: c_int,
    comm: c_int,
) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        blocking("MPI_Reduce_scatter", comm, |me| {
            check_reduce_scatter(me, sbuf, rbuf, rcounts, dt, op, comm)?;
            coll_check::check(me, comm, CollSig::new("MPI_Reduce_scatter").op(op))?;
            ti!(tih::reduce_scatter(me, rcounts, None, dt, comm));
            let counts = |n| Ok(counts_displs(n, rcounts, std::ptr::null())?.0);
            reduce_scatter(me, comm, sbuf, rbuf, counts, dt, op)
        })
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Reduce_scatter_block(
    sbuf: *const c_void,
    rbuf: *mut c_void,
    rcount: c_int,
    dt: c_int,
    op: c_int,
    comm: c_int,
) -> c_int {
    blocking("MPI_Reduce_scatter_block", comm, |me| {
        check_reduce_scatter_block(me, sbuf, rbuf, rcount, dt, op, comm)?;
        coll_check::check(me, comm, CollSig::new("MPI_Reduce_scatter_block").op(op))?;
        ti!(unsafe { tih::reduce_scatter(me, std::ptr::null(), Some(rcount), dt, comm) });
        let counts = |n| Ok(vec![nonneg(rcount)?; n as usize]);
        reduce_scatter(me, comm, sbuf, rbuf, counts, dt, op)
    })
}

/// MPI_Scan and MPI_Exscan (`exclusive`).
fn scan(
    call: &'static str,
    sbuf: *const c_void,
    rbuf: *mut c_void,
    count: c_int,
    dt: c_int,
    op: c_int,
    comm: c_int,
    exclusive: bool,
) -> c_int {
    blocking(call, comm, |me| {
        check_allreduce(me, sbuf, rbuf, count, dt, op, comm)?;
        coll_check::check(me, comm, CollSig::new(call).op(op).data(count, dt))?;
        ti!(tih::reduction(
            me,
            if exclusive { "exscan" } else { "scan" },
            count,
            dt,
            -1,
            comm
        ));
        let (s, r) = (sbuf as *const u8, rbuf as *mut u8);
        coll::scan(view(me, comm)?, s, r, nonneg(count)?, dt, op, exclusive)
    })
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Scan(
    sbuf: *const c_void,
    rbuf: *mut c_void,
    count: c_int,
    dt: c_int,
    op: c_int,
    comm: c_int,
) -> c_int {
    scan("MPI_Scan", sbuf, rbuf, count, dt, op, comm, false)
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Exscan(
    sbuf: *const c_void,
    rbuf: *mut c_void,
    count: c_int,
    dt: c_int,
    op: c_int,
    comm: c_int,
) -> c_int {
    scan("MPI_Exscan", sbuf, rbuf, count, dt, op, comm, true)
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Op_create(f: Option<UserFn>, commute: c_int, op: *mut c_int) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        let Some(func) = f else { return rt::MPI_ERR_OP };
        let h = with_world(|w| {
            w.ops.push(Some(Op::User {
                func,
                commutative: commute != 0,
            }));
            let h = (w.ops.len() - 1) as c_int;
            w.op_owner.insert(h, rt::current_rank());
            h
        });
        set(op, h);
        MPI_SUCCESS
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Op_free(op: *mut c_int) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        if *op > 14 {
            with_world(|w| {
                if let Some(o) = w.ops.get_mut(*op as usize) {
                    *o = None;
                }
            });
        }
        *op = 0;
        MPI_SUCCESS
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Op_commutative(op: c_int, commute: *mut c_int) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        match with_world(|w| w.op(op)) {
            Ok(o) => {
                set(commute, o.is_commutative() as c_int);
                MPI_SUCCESS
            }
            Err(e) => e.code,
        }
    }
}

/// Starts the non-blocking collective `f` of `nbc_inter` on an
/// intercommunicator (`inter` is `Some`), of `nbc` otherwise.
macro_rules! nbc_start {
    ($inter:expr, $f:ident($($a:expr),* $(,)?)) => {
        match $inter {
            Some(_) => nbc_inter::$f($($a),*),
            None => nbc::$f($($a),*),
        }
    };
}

/// `n` counts from a C array of `int` or `MPI_Count`.
pub(super) unsafe fn ivec<T: Copy + Into<i64>>(n: i32, p: *const T) -> MpiResult<Vec<usize>> {
    // Safety: the caller upholds this function's contract (see its `# Safety`).
    unsafe {
        if p.is_null() && n > 0 {
            return Err(mpi_err(rt::MPI_ERR_ARG, "null array of counts"));
        }
        (0..n.max(0) as usize)
            .map(|i| nonneg((*p.add(i)).into()))
            .collect()
    }
}

/// `n` displacements from a C array of `int` or `MPI_Aint` (a null array reads as zeros).
pub(super) unsafe fn dvec<T: Copy + TryInto<isize>>(n: i32, p: *const T) -> Vec<isize> {
    // Safety: the caller upholds this function's contract (see its `# Safety`).
    unsafe {
        (0..n.max(0) as usize)
            .map(|i| {
                if p.is_null() {
                    0
                } else {
                    (*p.add(i)).try_into().unwrap_or(0)
                }
            })
            .collect()
    }
}

/// `n` datatype handles.
pub(super) unsafe fn tvec(n: i32, p: *const c_int) -> MpiResult<Vec<i32>> {
    // Safety: the caller upholds this function's contract (see its `# Safety`).
    unsafe {
        if p.is_null() && n > 0 {
            return Err(mpi_err(rt::MPI_ERR_TYPE, "null array of datatypes"));
        }
        Ok((0..n.max(0) as usize).map(|i| *p.add(i)).collect())
    }
}

/// `n` counts and displacements from C arrays where they are read (`used`),
/// zeros where MPI says they are ignored.
pub(super) unsafe fn vecs_if(
    used: bool,
    n: i32,
    counts: *const c_int,
    displs: *const c_int,
) -> MpiResult<(Vec<usize>, Vec<isize>)> {
    if used {
        // Safety: where they are read the arrays hold `n` entries (the caller's contract).
        unsafe { Ok((ivec(n, counts)?, dvec(n, displs))) }
    } else {
        Ok((vec![0; n.max(0) as usize], vec![0; n.max(0) as usize]))
    }
}

/// Counts and element displacements of `n` consecutive blocks of `count`.
pub(super) fn regular(n: i32, count: usize) -> (Vec<usize>, Vec<isize>) {
    let n = n.max(0) as usize;
    (
        vec![count; n],
        (0..n as isize).map(|i| i * count as isize).collect(),
    )
}

pub(super) fn in_place(p: *const c_void) -> bool {
    p as *mut u8 == IN_PLACE
}

/// The communicator of a collective, and the size of its remote group when it
/// is an intercommunicator.
pub(super) fn comm_of(me: u32, comm: i32) -> MpiResult<(CommView, Option<i32>)> {
    match nbc_inter::Inter::of(me, comm)? {
        Some(c) => Ok((c, Some(nbc_inter::remote_size(c)?))),
        None => Ok((CommView::new(me, comm)?, None)),
    }
}

pub(super) fn no_inter(call: &str) -> rt::MpiError {
    mpi_err(
        rt::MPI_ERR_COMM,
        format!("{call} is not defined on intercommunicators"),
    )
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Ibarrier(comm: c_int, req: *mut c_int) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        nb!("MPI_Ibarrier", comm, req, |me| {
            check_barrier(me, comm)?;
            coll_check::check(me, comm, CollSig::new("MPI_Ibarrier"))?;
            let (c, inter) = comm_of(me, comm)?;
            nbc_start!(inter, ibarrier(c))
        })
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Ibcast(
    buf: *mut c_void,
    count: c_int,
    dt: c_int,
    root: c_int,
    comm: c_int,
    req: *mut c_int,
) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        nb!("MPI_Ibcast", comm, req, |me| {
            check_bcast(me, buf, count, dt, root, comm)?;
            coll_check::check(me, comm, CollSig::new("MPI_Ibcast").root(root).data(count, dt))?;
            let (c, inter) = comm_of(me, comm)?;
            let idle = inter.is_some() && root == rt::MPI_PROC_NULL;
            let count = if idle { 0 } else { nonneg(count)? };
            nbc_start!(inter, ibcast(c, buf as *mut u8, count, dt, root))
        })
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Ireduce(
    s: *const c_void,
    r: *mut c_void,
    count: c_int,
    dt: c_int,
    op: c_int,
    root: c_int,
    comm: c_int,
    req: *mut c_int,
) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        nb!("MPI_Ireduce", comm, req, |me| {
            check_reduce(me, s, r, count, dt, op, root, comm)?;
            coll_check::check(
                me,
                comm,
                CollSig::new("MPI_Ireduce").root(root).op(op).data(count, dt),
            )?;
            let (c, inter) = comm_of(me, comm)?;
            let idle = inter.is_some() && root == rt::MPI_PROC_NULL;
            let count = if idle { 0 } else { nonneg(count)? };
            let (s, r) = (s as *const u8, r as *mut u8);
            nbc_start!(inter, ireduce(c, s, r, count, dt, op, root))
        })
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Iallreduce(
    s: *const c_void,
    r: *mut c_void,
    count: c_int,
    dt: c_int,
    op: c_int,
    comm: c_int,
    req: *mut c_int,
) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        nb!("MPI_Iallreduce", comm, req, |me| {
            check_allreduce(me, s, r, count, dt, op, comm)?;
            coll_check::check(me, comm, CollSig::new("MPI_Iallreduce").op(op).data(count, dt))?;
            let (s, r, n) = (s as *const u8, r as *mut u8, nonneg(count)?);
            let (c, inter) = comm_of(me, comm)?;
            nbc_start!(inter, iallreduce(c, s, r, n, dt, op))
        })
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Igather(
    s: *const c_void,
    sc: c_int,
    st: c_int,
    r: *mut c_void,
    rc: c_int,
    rt_: c_int,
    root: c_int,
    comm: c_int,
    req: *mut c_int,
) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        nb!("MPI_Igather", comm, req, |me| {
            check_gather(me, s, sc, st, r, rc, rt_, root, comm)?;
            coll_check::check(
                me,
                comm,
                CollSig::new("MPI_Igather")
                    .root(root)
                    .contributed(s, sc, st, rc, rt_),
            )?;
            let (c, inter) = comm_of(me, comm)?;
            let (receives, sends) = rooted(inter.is_none().then_some(c.rank), root, s);
            let (rc, sc) = (count_if(receives, rc)?, count_if(sends, sc)?);
            let (cs, ds) = regular(inter.unwrap_or(c.size), rc);
            let (s, r) = (s as *const u8, r as *mut u8);
            nbc_start!(inter, igatherv(c, s, sc, st, r, cs, ds, rt_, root))
        })
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Igatherv(
    s: *const c_void,
    sc: c_int,
    st: c_int,
    r: *mut c_void,
    rcs: *const c_int,
    ds: *const c_int,
    rt_: c_int,
    root: c_int,
    comm: c_int,
    req: *mut c_int,
) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        nb!("MPI_Igatherv", comm, req, |me| {
            check_gatherv(me, s, sc, st, r, rcs, ds, rt_, root, comm)?;
            coll_check::check(me, comm, CollSig::new("MPI_Igatherv").root(root))?;
            let (c, inter) = comm_of(me, comm)?;
            let n = inter.unwrap_or(c.size);
            let (receives, sends) = rooted(inter.is_none().then_some(c.rank), root, s);
            let (cs, d) = vecs_if(receives, n, rcs, ds)?;
            let sc = count_if(sends, sc)?;
            let (s, r) = (s as *const u8, r as *mut u8);
            nbc_start!(inter, igatherv(c, s, sc, st, r, cs, d, rt_, root))
        })
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Iscatter(
    s: *const c_void,
    sc: c_int,
    st: c_int,
    r: *mut c_void,
    rc: c_int,
    rt_: c_int,
    root: c_int,
    comm: c_int,
    req: *mut c_int,
) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        nb!("MPI_Iscatter", comm, req, |me| {
            check_scatter(me, s, sc, st, r, rc, rt_, root, comm)?;
            coll_check::check(
                me,
                comm,
                CollSig::new("MPI_Iscatter")
                    .root(root)
                    .received(r, rc, rt_, sc, st),
            )?;
            let (c, inter) = comm_of(me, comm)?;
            let (sends, receives) = rooted(inter.is_none().then_some(c.rank), root, r);
            let (sc, rc) = (count_if(sends, sc)?, count_if(receives, rc)?);
            let (cs, ds) = regular(inter.unwrap_or(c.size), sc);
            let (s, r) = (s as *const u8, r as *mut u8);
            nbc_start!(inter, iscatterv(c, s, cs, ds, st, r, rc, rt_, root))
        })
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Iscatterv(
    s: *const c_void,
    scs: *const c_int,
    ds: *const c_int,
    st: c_int,
    r: *mut c_void,
    rc: c_int,
    rt_: c_int,
    root: c_int,
    comm: c_int,
    req: *mut c_int,
) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        nb!("MPI_Iscatterv", comm, req, |me| {
            check_scatterv(me, s, scs, ds, st, r, rc, rt_, root, comm)?;
            coll_check::check(me, comm, CollSig::new("MPI_Iscatterv").root(root))?;
            let (c, inter) = comm_of(me, comm)?;
            let n = inter.unwrap_or(c.size);
            let (sends, receives) = rooted(inter.is_none().then_some(c.rank), root, r);
            let (cs, d) = vecs_if(sends, n, scs, ds)?;
            let rc = count_if(receives, rc)?;
            let (s, r) = (s as *const u8, r as *mut u8);
            nbc_start!(inter, iscatterv(c, s, cs, d, st, r, rc, rt_, root))
        })
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Iallgather(
    s: *const c_void,
    sc: c_int,
    st: c_int,
    r: *mut c_void,
    rc: c_int,
    rt_: c_int,
    comm: c_int,
    req: *mut c_int,
) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        nb!("MPI_Iallgather", comm, req, |me| {
            check_allgather(me, s, sc, st, r, rc, rt_, comm)?;
            coll_check::check(
                me,
                comm,
                CollSig::new("MPI_Iallgather").contributed(s, sc, st, rc, rt_),
            )?;
            let (c, inter) = comm_of(me, comm)?;
            let (cs, ds) = regular(inter.unwrap_or(c.size), nonneg(rc)?);
            let sc = if in_place(s) { 0 } else { nonneg(sc)? };
            let (s, r) = (s as *const u8, r as *mut u8);
            nbc_start!(inter, iallgatherv(c, s, sc, st, r, cs, ds, rt_))
        })
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Iallgatherv(
    s: *const c_void,
    sc: c_int,
    st: c_int,
    r: *mut c_void,
    rcs: *const c_int,
    ds: *const c_int,
    rt_: c_int,
    comm: c_int,
    req: *mut c_int,
) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        nb!("MPI_Iallgatherv", comm, req, |me| {
            check_allgatherv(me, s, sc, st, r, rcs, ds, rt_, comm)?;
            coll_check::check(me, comm, CollSig::new("MPI_Iallgatherv"))?;
            let (c, inter) = comm_of(me, comm)?;
            let n = inter.unwrap_or(c.size);
            let (cs, d) = (ivec(n, rcs)?, dvec(n, ds));
            let sc = if in_place(s) { 0 } else { nonneg(sc)? };
            let (s, r) = (s as *const u8, r as *mut u8);
            nbc_start!(inter, iallgatherv(c, s, sc, st, r, cs, d, rt_))
        })
    }
}

/// The arguments of an alltoallw (byte displacements, one type per peer).
pub(super) struct Alltoallw {
    sbuf: *const u8,
    scounts: Vec<usize>,
    sdispls: Vec<isize>,
    stypes: Vec<i32>,
    rbuf: *mut u8,
    rcounts: Vec<usize>,
    rdispls: Vec<isize>,
    rtypes: Vec<i32>,
}

impl Alltoallw {
    /// Regular or v-counts alltoall (displacements in elements of one type).
    /// With `MPI_IN_PLACE` the send arguments are not read.
    fn from_v(
        n: i32,
        sbuf: *const c_void,
        send: impl FnOnce() -> MpiResult<(Vec<usize>, Vec<isize>)>,
        stype: i32,
        rbuf: *mut c_void,
        rcounts: Vec<usize>,
        rdispls: Vec<isize>,
        rtype: i32,
    ) -> MpiResult<Self> {
        let n = n.max(0) as usize;
        let rext = extent(rtype)?;
        let (scounts, sdispls) = if in_place(sbuf) {
            (vec![0; n], vec![0; n])
        } else {
            let (c, d) = send()?;
            let sext = extent(stype)?;
            (c, d.iter().map(|d| d * sext).collect())
        };
        Ok(Alltoallw {
            sbuf: sbuf as *const u8,
            scounts,
            sdispls,
            stypes: vec![stype; n],
            rbuf: rbuf as *mut u8,
            rcounts,
            rdispls: rdispls.iter().map(|d| d * rext).collect(),
            rtypes: vec![rtype; n],
        })
    }

    /// Starts it on `c` (`inter`: an intercommunicator).
    fn start(self, c: CommView, inter: bool) -> MpiResult<u32> {
        let a = self;
        if inter {
            if std::ptr::eq(a.sbuf, IN_PLACE) {
                return Err(mpi_err(
                    rt::MPI_ERR_BUFFER,
                    "MPI_IN_PLACE on an intercommunicator",
                ));
            }
            nbc_inter::ialltoallw(
                c, a.sbuf, a.scounts, a.sdispls, a.stypes, a.rbuf, a.rcounts, a.rdispls, a.rtypes,
            )
        } else {
            nbc::ialltoallw(
                c, a.sbuf, a.scounts, a.sdispls, a.stypes, a.rbuf, a.rcounts, a.rdispls, a.rtypes,
            )
        }
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Ialltoall(
    s: *const c_void,
    sc: c_int,
    st: c_int,
    r: *mut c_void,
    rc: c_int,
    rt_: c_int,
    comm: c_int,
    req: *mut c_int,
) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        nb!("MPI_Ialltoall", comm, req, |me| {
            check_allgather(me, s, sc, st, r, rc, rt_, comm)?;
            coll_check::check(
                me,
                comm,
                CollSig::new("MPI_Ialltoall").contributed(s, sc, st, rc, rt_),
            )?;
            let (c, inter) = comm_of(me, comm)?;
            let n = inter.unwrap_or(c.size);
            let (rcs, rds) = regular(n, nonneg(rc)?);
            let send = || Ok(regular(n, nonneg(sc)?));
            Alltoallw::from_v(n, s, send, st, r, rcs, rds, rt_)?.start(c, inter.is_some())
        })
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Ialltoallv(
    s: *const c_void,
    scs: *const c_int,
    sds: *const c_int,
    st: c_int,
    r: *mut c_void,
    rcs: *const c_int,
    rds: *const c_int,
    rt_: c_int,
    comm: c_int,
    req: *mut c_int,
) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        nb!("MPI_Ialltoallv", comm, req, |me| {
            check_alltoallv(me, s, scs, sds, Err(st), r, rcs, rds, Err(rt_), comm)?;
            coll_check::check(me, comm, CollSig::new("MPI_Ialltoallv"))?;
            let (c, inter) = comm_of(me, comm)?;
            let n = inter.unwrap_or(c.size);
            let send = || Ok((ivec(n, scs)?, dvec(n, sds)));
            Alltoallw::from_v(n, s, send, st, r, ivec(n, rcs)?, dvec(n, rds), rt_)?.start(c, inter.is_some())
        })
    }
}

/// Starts an alltoallw from its C arguments.
pub(super) unsafe fn alltoallw_req(
    me: u32,
    comm: i32,
    s: *const c_void,
    scs: *const c_int,
    sds: *const c_int,
    sts: *const c_int,
    r: *mut c_void,
    rcs: *const c_int,
    rds: *const c_int,
    rts: *const c_int,
) -> MpiResult<u32> {
    // Safety: the caller upholds this function's contract (see its `# Safety`).
    unsafe {
        let (c, inter) = comm_of(me, comm)?;
        let n = inter.unwrap_or(c.size);
        let (scounts, sdispls, stypes) = if in_place(s) {
            let z = n.max(0) as usize;
            (vec![0; z], vec![0; z], vec![0; z])
        } else {
            (ivec(n, scs)?, dvec(n, sds), tvec(n, sts)?)
        };
        Alltoallw {
            sbuf: s as *const u8,
            scounts,
            sdispls,
            stypes,
            rbuf: r as *mut u8,
            rcounts: ivec(n, rcs)?,
            rdispls: dvec(n, rds),
            rtypes: tvec(n, rts)?,
        }
        .start(c, inter.is_some())
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Ialltoallw(
    s: *const c_void,
    scs: *const c_int,
    sds: *const c_int,
    sts: *const c_int,
    r: *mut c_void,
    rcs: *const c_int,
    rds: *const c_int,
    rts: *const c_int,
    comm: c_int,
    req: *mut c_int,
) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        nb!("MPI_Ialltoallw", comm, req, |me| {
            check_alltoallv(me, s, scs, sds, Ok(sts), r, rcs, rds, Ok(rts), comm)?;
            coll_check::check(me, comm, CollSig::new("MPI_Ialltoallw"))?;
            alltoallw_req(me, comm, s, scs, sds, sts, r, rcs, rds, rts)
        })
    }
}

/// Waits for a collective request a blocking call started.
pub(super) fn wait_coll(me: u32, id: u32, call: &'static str) -> MpiResult<()> {
    let st = rt::wait(me, id, call);
    if st.error != MPI_SUCCESS {
        return Err(mpi_err(st.error, format!("{call} failed")));
    }
    Ok(())
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Alltoallw(
    s: *const c_void,
    scs: *const c_int,
    sds: *const c_int,
    sts: *const c_int,
    r: *mut c_void,
    rcs: *const c_int,
    rds: *const c_int,
    rts: *const c_int,
    comm: c_int,
) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        blocking("MPI_Alltoallw", comm, |me| {
            check_alltoallv(me, s, scs, sds, Ok(sts), r, rcs, rds, Ok(rts), comm)?;
            coll_check::check(me, comm, CollSig::new("MPI_Alltoallw"))?;
            ti!(crate::mpi::ti_trace::unrepresented("MPI_Alltoallw"));
            let id = alltoallw_req(me, comm, s, scs, sds, sts, r, rcs, rds, rts)?;
            wait_coll(me, id, "MPI_Alltoallw")
        })
    }
}

/// MPI_Alltoallv with `MPI_Count` counts and `MPI_Aint` displacements: the
/// same algorithms as MPI_Alltoallv.
#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Alltoallv_c(
    s: *const c_void,
    scs: *const i64,
    sds: *const isize,
    st: c_int,
    r: *mut c_void,
    rcs: *const i64,
    rds: *const isize,
    rt_: c_int,
    comm: c_int,
) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        blocking("MPI_Alltoallv_c", comm, |me| {
            check_alltoallv(me, s, scs, sds, Err(st), r, rcs, rds, Err(rt_), comm)?;
            coll_check::check(me, comm, CollSig::new("MPI_Alltoallv_c"))?;
            let (c, inter) = comm_of(me, comm)?;
            let n = inter.unwrap_or(c.size);
            let (rc, rd) = (ivec(n, rcs)?, dvec(n, rds));
            if let Some(rsize) = inter {
                let a =
                    Alltoallw::from_v(rsize, s, || Ok((ivec(n, scs)?, dvec(n, sds))), st, r, rc, rd, rt_)?;
                let iv = InterView::of(me, comm)?.ok_or_else(|| no_inter("MPI_Alltoallv_c"))?;
                return ic::alltoallw(
                    iv, a.sbuf, &a.scounts, &a.sdispls, &a.stypes, a.rbuf, &a.rcounts, &a.rdispls, &a.rtypes,
                );
            }
            // With MPI_IN_PLACE the send arguments are those of the receive.
            let (sc, sd, st) = if in_place(s) {
                (rc.clone(), rd.clone(), rt_)
            } else {
                (ivec(n, scs)?, dvec(n, sds), st)
            };
            coll::alltoallv(
                c,
                s as *const u8,
                &sc,
                &sd,
                st,
                r as *mut u8,
                &rc,
                &rd,
                rt_,
                false,
            )
        })
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Ireduce_scatter(
    s: *const c_void,
    r: *mut c_void,
    rcs: *const c_int,
    dt: c_int,
    op: c_int,
    comm: c_int,
    req: *mut c_int,
) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        nb!("MPI_Ireduce_scatter", comm, req, |me| {
            check_reduce_scatter(me, s, r, rcs, dt, op, comm)?;
            coll_check::check(me, comm, CollSig::new("MPI_Ireduce_scatter").op(op))?;
            let (c, inter) = comm_of(me, comm)?;
            // Receive counts are per rank of the local group, also on an intercommunicator.
            let counts = ivec(c.size, rcs)?;
            let (s, r) = (s as *const u8, r as *mut u8);
            nbc_start!(inter, ireduce_scatter(c, s, r, counts, dt, op))
        })
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Ireduce_scatter_block(
    s: *const c_void,
    r: *mut c_void,
    rc: c_int,
    dt: c_int,
    op: c_int,
    comm: c_int,
    req: *mut c_int,
) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        nb!("MPI_Ireduce_scatter_block", comm, req, |me| {
            check_reduce_scatter_block(me, s, r, rc, dt, op, comm)?;
            coll_check::check(me, comm, CollSig::new("MPI_Ireduce_scatter_block").op(op))?;
            let (c, inter) = comm_of(me, comm)?;
            let counts = vec![nonneg(rc)?; c.size as usize];
            let (s, r) = (s as *const u8, r as *mut u8);
            nbc_start!(inter, ireduce_scatter(c, s, r, counts, dt, op))
        })
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Iscan(
    s: *const c_void,
    r: *mut c_void,
    count: c_int,
    dt: c_int,
    op: c_int,
    comm: c_int,
    req: *mut c_int,
) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        nb!("MPI_Iscan", comm, req, |me| {
            check_allreduce(me, s, r, count, dt, op, comm)?;
            coll_check::check(me, comm, CollSig::new("MPI_Iscan").op(op).data(count, dt))?;
            match comm_of(me, comm)? {
                (_, Some(_)) => Err(no_inter("MPI_Iscan")),
                (c, None) => nbc::iscan(c, s as *const u8, r as *mut u8, nonneg(count)?, dt, op, false),
            }
        })
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Iexscan(
    s: *const c_void,
    r: *mut c_void,
    count: c_int,
    dt: c_int,
    op: c_int,
    comm: c_int,
    req: *mut c_int,
) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        nb!("MPI_Iexscan", comm, req, |me| {
            check_allreduce(me, s, r, count, dt, op, comm)?;
            coll_check::check(me, comm, CollSig::new("MPI_Iexscan").op(op).data(count, dt))?;
            match comm_of(me, comm)? {
                (_, Some(_)) => Err(no_inter("MPI_Iexscan")),
                (c, None) => nbc::iscan(c, s as *const u8, r as *mut u8, nonneg(count)?, dt, op, true),
            }
        })
    }
}

// ------------------------------------------------------------------ argument checks
//
// One check per collective signature, shared by the blocking and the
// non-blocking form (and the intercommunicator form: [`CollArgs`] knows
// which arguments are significant where). Each runs before the collective
// matching check so a bad argument is reported as itself.

pub(super) fn check_barrier(me: u32, comm: c_int) -> MpiResult<()> {
    CollArgs::new(me, comm, None).map(|_| ())
}

pub(super) fn check_bcast(
    me: u32,
    buf: *const c_void,
    count: c_int,
    dt: c_int,
    root: c_int,
    comm: c_int,
) -> MpiResult<()> {
    let a = CollArgs::new(me, comm, Some(root))?;
    a.data(At::All, InPlace::No, BUFFER, buf, count, dt)
}

pub(super) fn check_reduce(
    me: u32,
    s: *const c_void,
    r: *const c_void,
    count: c_int,
    dt: c_int,
    op: c_int,
    root: c_int,
    comm: c_int,
) -> MpiResult<()> {
    let a = CollArgs::new(me, comm, Some(root))?;
    a.data(At::Peers, InPlace::AtRoot, RSEND, s, count, dt)?;
    a.data(At::Root, InPlace::No, RRECV, r, count, dt)?;
    arg_op(op)
}

/// MPI_Allreduce, MPI_Scan, MPI_Exscan (and their `I` forms).
pub(super) fn check_allreduce(
    me: u32,
    s: *const c_void,
    r: *const c_void,
    count: c_int,
    dt: c_int,
    op: c_int,
    comm: c_int,
) -> MpiResult<()> {
    let a = CollArgs::new(me, comm, None)?;
    a.data(At::All, InPlace::Anywhere, RSEND, s, count, dt)?;
    a.data(At::All, InPlace::No, RRECV, r, count, dt)?;
    arg_op(op)
}

pub(super) fn check_gather(
    me: u32,
    s: *const c_void,
    sc: c_int,
    st: c_int,
    r: *const c_void,
    rc: c_int,
    rt_: c_int,
    root: c_int,
    comm: c_int,
) -> MpiResult<()> {
    let a = CollArgs::new(me, comm, Some(root))?;
    a.data(At::Peers, InPlace::AtRoot, SEND, s, sc, st)?;
    a.data(At::Root, InPlace::No, RECV, r, rc, rt_)
}

pub(super) unsafe fn check_gatherv(
    me: u32,
    s: *const c_void,
    sc: c_int,
    st: c_int,
    r: *const c_void,
    rcs: *const c_int,
    ds: *const c_int,
    rt_: c_int,
    root: c_int,
    comm: c_int,
) -> MpiResult<()> {
    let a = CollArgs::new(me, comm, Some(root))?;
    a.data(At::Peers, InPlace::AtRoot, SEND, s, sc, st)?;
    // Safety: at the root the arrays hold one entry per process (the caller's contract).
    unsafe { a.data_v(At::Root, InPlace::No, RECV_V, r, rcs, ds, Err(rt_)) }
}

pub(super) fn check_scatter(
    me: u32,
    s: *const c_void,
    sc: c_int,
    st: c_int,
    r: *const c_void,
    rc: c_int,
    rt_: c_int,
    root: c_int,
    comm: c_int,
) -> MpiResult<()> {
    let a = CollArgs::new(me, comm, Some(root))?;
    a.data(At::Root, InPlace::No, SEND, s, sc, st)?;
    a.data(At::Peers, InPlace::AtRoot, RECV, r, rc, rt_)
}

pub(super) unsafe fn check_scatterv(
    me: u32,
    s: *const c_void,
    scs: *const c_int,
    ds: *const c_int,
    st: c_int,
    r: *const c_void,
    rc: c_int,
    rt_: c_int,
    root: c_int,
    comm: c_int,
) -> MpiResult<()> {
    let a = CollArgs::new(me, comm, Some(root))?;
    // Safety: at the root the arrays hold one entry per process (the caller's contract).
    unsafe { a.data_v(At::Root, InPlace::No, SEND_V, s, scs, ds, Err(st))? };
    a.data(At::Peers, InPlace::AtRoot, RECV, r, rc, rt_)
}

/// MPI_Allgather and MPI_Alltoall (and their `I` forms).
pub(super) fn check_allgather(
    me: u32,
    s: *const c_void,
    sc: c_int,
    st: c_int,
    r: *const c_void,
    rc: c_int,
    rt_: c_int,
    comm: c_int,
) -> MpiResult<()> {
    let a = CollArgs::new(me, comm, None)?;
    a.data(At::All, InPlace::Anywhere, SEND, s, sc, st)?;
    a.data(At::All, InPlace::No, RECV, r, rc, rt_)
}

pub(super) unsafe fn check_allgatherv(
    me: u32,
    s: *const c_void,
    sc: c_int,
    st: c_int,
    r: *const c_void,
    rcs: *const c_int,
    ds: *const c_int,
    rt_: c_int,
    comm: c_int,
) -> MpiResult<()> {
    let a = CollArgs::new(me, comm, None)?;
    a.data(At::All, InPlace::Anywhere, SEND, s, sc, st)?;
    // Safety: the arrays hold one entry per process (the caller's contract).
    unsafe { a.data_v(At::All, InPlace::No, RECV_V, r, rcs, ds, Err(rt_)) }
}

/// MPI_Alltoallv, MPI_Alltoallw, MPI_Alltoallv_c (and the `I` forms):
/// `Err(type)` for one type per side, `Ok(array)` for the `w` form.
pub(super) unsafe fn check_alltoallv<C: Copy + Into<i64>, D>(
    me: u32,
    s: *const c_void,
    scs: *const C,
    sds: *const D,
    st: Result<*const c_int, c_int>,
    r: *const c_void,
    rcs: *const C,
    rds: *const D,
    rt_: Result<*const c_int, c_int>,
    comm: c_int,
) -> MpiResult<()> {
    let a = CollArgs::new(me, comm, None)?;
    // Safety: the arrays hold one entry per process (the caller's contract).
    unsafe {
        a.data_v(At::All, InPlace::Anywhere, SEND, s, scs, sds, st)?;
        a.data_v(At::All, InPlace::No, RECV, r, rcs, rds, rt_)
    }
}

pub(super) unsafe fn check_reduce_scatter(
    me: u32,
    s: *const c_void,
    r: *const c_void,
    rcs: *const c_int,
    dt: c_int,
    op: c_int,
    comm: c_int,
) -> MpiResult<()> {
    let a = CollArgs::new(me, comm, None)?;
    // Safety: `recvcounts` holds one entry per process of the local group.
    let cs = unsafe { arg_counts(rcs, a.size as usize, "recvcounts") }?;
    // On an intercommunicator the send buffer holds what the other group
    // receives, which this process does not know: only the receive side is checked.
    if a.remote.is_none() {
        let total: usize = cs.iter().sum();
        a.data(At::All, InPlace::Anywhere, RSEND, s, total as i64, dt)?;
    }
    let mine = cs.get(a.rank as usize).copied().unwrap_or(0);
    a.data(At::All, InPlace::No, RRECV, r, mine as i64, dt)?;
    arg_op(op)
}

pub(super) fn check_reduce_scatter_block(
    me: u32,
    s: *const c_void,
    r: *const c_void,
    rc: c_int,
    dt: c_int,
    op: c_int,
    comm: c_int,
) -> MpiResult<()> {
    let a = CollArgs::new(me, comm, None)?;
    // The send buffer holds `recvcount` elements per process: it has data
    // exactly when the receive buffer has.
    a.data(At::All, InPlace::Anywhere, RSEND, s, rc, dt)?;
    a.data(At::All, InPlace::No, RRECV, r, rc, dt)?;
    arg_op(op)
}
