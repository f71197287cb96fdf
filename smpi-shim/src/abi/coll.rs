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

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Barrier(comm: c_int) -> c_int {
    let g = enter_call("MPI_Barrier");
    if let Err(e) = check_barrier(g.me, comm) {
        return entry::handle_error(g.me, comm, "MPI_Barrier", e);
    }
    if let Err(e) = coll_check::check(g.me, comm, CollSig::new("MPI_Barrier")) {
        return entry::handle_error(g.me, comm, "MPI_Barrier", e);
    }
    match InterView::of(g.me, comm) {
        Ok(Some(iv)) => {
            let r: MpiResult<()> = ic::barrier(iv);
            return result(g.me, comm, "MPI_Barrier", r);
        }
        Ok(None) => {}
        Err(e) => return entry::handle_error(g.me, comm, "MPI_Barrier", e),
    }
    coll_call!(g, comm, "MPI_Barrier", coll::barrier(view(g.me, comm)?))
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Bcast(
    buf: *mut c_void,
    count: c_int,
    dt: c_int,
    root: c_int,
    comm: c_int,
) -> c_int {
    let g = enter_call("MPI_Bcast");
    if let Err(e) = check_bcast(g.me, buf, count, dt, root, comm) {
        return entry::handle_error(g.me, comm, "MPI_Bcast", e);
    }
    if let Err(e) = coll_check::check(g.me, comm, CollSig::new("MPI_Bcast").root(root).data(count, dt)) {
        return entry::handle_error(g.me, comm, "MPI_Bcast", e);
    }
    match InterView::of(g.me, comm) {
        Ok(Some(iv)) => {
            let r: MpiResult<()> = (|| ic::bcast(iv, buf as *mut u8, nonneg(count)?, dt, root))();
            return result(g.me, comm, "MPI_Bcast", r);
        }
        Ok(None) => {}
        Err(e) => return entry::handle_error(g.me, comm, "MPI_Bcast", e),
    }
    coll_call!(g, comm, "MPI_Bcast", {
        let n = nonneg(count)?;
        with_world(|w| w.dtype(dt))?;
        coll::bcast(view(g.me, comm)?, buf as *mut u8, n, dt, root)
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
    let g = enter_call("MPI_Reduce");
    if let Err(e) = check_reduce(g.me, sbuf, rbuf, count, dt, op, root, comm) {
        return entry::handle_error(g.me, comm, "MPI_Reduce", e);
    }
    if let Err(e) = coll_check::check(
        g.me,
        comm,
        CollSig::new("MPI_Reduce").root(root).op(op).data(count, dt),
    ) {
        return entry::handle_error(g.me, comm, "MPI_Reduce", e);
    }
    match InterView::of(g.me, comm) {
        Ok(Some(iv)) => {
            let r: MpiResult<()> = (|| {
                ic::reduce(
                    iv,
                    sbuf as *const u8,
                    rbuf as *mut u8,
                    nonneg(count)?,
                    dt,
                    op,
                    root,
                )
            })();
            return result(g.me, comm, "MPI_Reduce", r);
        }
        Ok(None) => {}
        Err(e) => return entry::handle_error(g.me, comm, "MPI_Reduce", e),
    }
    coll_call!(g, comm, "MPI_Reduce", {
        let n = nonneg(count)?;
        with_world(|w| w.dtype(dt).and(w.op(op).map(|_| ())))?;
        coll::reduce(
            view(g.me, comm)?,
            sbuf as *const u8,
            rbuf as *mut u8,
            n,
            dt,
            op,
            root,
        )
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
    let g = enter_call("MPI_Allreduce");
    if let Err(e) = check_allreduce(g.me, sbuf, rbuf, count, dt, op, comm) {
        return entry::handle_error(g.me, comm, "MPI_Allreduce", e);
    }
    if let Err(e) = coll_check::check(g.me, comm, CollSig::new("MPI_Allreduce").op(op).data(count, dt)) {
        return entry::handle_error(g.me, comm, "MPI_Allreduce", e);
    }
    match InterView::of(g.me, comm) {
        Ok(Some(iv)) => {
            let r: MpiResult<()> =
                (|| ic::allreduce(iv, sbuf as *const u8, rbuf as *mut u8, nonneg(count)?, dt, op))();
            return result(g.me, comm, "MPI_Allreduce", r);
        }
        Ok(None) => {}
        Err(e) => return entry::handle_error(g.me, comm, "MPI_Allreduce", e),
    }
    coll_call!(g, comm, "MPI_Allreduce", {
        let n = nonneg(count)?;
        with_world(|w| w.dtype(dt).and(w.op(op).map(|_| ())))?;
        coll::allreduce(view(g.me, comm)?, sbuf as *const u8, rbuf as *mut u8, n, dt, op)
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
    let g = enter_call("MPI_Gather");
    if let Err(e) = check_gather(g.me, sbuf, scount, stype, rbuf, rcount, rtype, root, comm) {
        return entry::handle_error(g.me, comm, "MPI_Gather", e);
    }
    if let Err(e) = coll_check::check(
        g.me,
        comm,
        CollSig::new("MPI_Gather")
            .root(root)
            .contributed(sbuf, scount, stype, rcount, rtype),
    ) {
        return entry::handle_error(g.me, comm, "MPI_Gather", e);
    }
    match InterView::of(g.me, comm) {
        Ok(Some(iv)) => {
            let r: MpiResult<()> = (|| {
                let rc = if root == -3 { nonneg(rcount)? } else { 0 };
                let n = iv.rsize as usize;
                let displs: Vec<isize> = (0..n as isize).map(|i| i * rc as isize).collect();
                ic::gatherv(
                    iv,
                    sbuf as *const u8,
                    if root >= 0 { nonneg(scount)? } else { 0 },
                    stype,
                    rbuf as *mut u8,
                    &vec![rc; n],
                    &displs,
                    rtype,
                    root,
                )
            })();
            return result(g.me, comm, "MPI_Gather", r);
        }
        Ok(None) => {}
        Err(e) => return entry::handle_error(g.me, comm, "MPI_Gather", e),
    }
    coll_call!(g, comm, "MPI_Gather", {
        let c = view(g.me, comm)?;
        // Receive arguments matter only at the root.
        let rc = if c.rank == root { nonneg(rcount)? } else { 0 };
        coll::gather(
            c,
            sbuf as *const u8,
            in_place_count(sbuf, scount)?,
            stype,
            rbuf as *mut u8,
            rc,
            rtype,
            root,
        )
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
        let g = enter_call("MPI_Gatherv");
        if let Err(e) = check_gatherv(
            g.me, sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm,
        ) {
            return entry::handle_error(g.me, comm, "MPI_Gatherv", e);
        }
        if let Err(e) = coll_check::check(g.me, comm, CollSig::new("MPI_Gatherv").root(root)) {
            return entry::handle_error(g.me, comm, "MPI_Gatherv", e);
        }
        match InterView::of(g.me, comm) {
            Ok(Some(iv)) => {
                let r: MpiResult<()> = (|| {
                    let (cs, ds) = if root == -3 {
                        counts_displs(iv.rsize, rcounts, displs)?
                    } else {
                        (vec![], vec![])
                    };
                    ic::gatherv(
                        iv,
                        sbuf as *const u8,
                        if root >= 0 { nonneg(scount)? } else { 0 },
                        stype,
                        rbuf as *mut u8,
                        &cs,
                        &ds,
                        rtype,
                        root,
                    )
                })();
                return result(g.me, comm, "MPI_Gatherv", r);
            }
            Ok(None) => {}
            Err(e) => return entry::handle_error(g.me, comm, "MPI_Gatherv", e),
        }
        coll_call!(g, comm, "MPI_Gatherv", {
            let c = view(g.me, comm)?;
            let (cs, ds) = if c.rank == root {
                counts_displs(c.size, rcounts, displs)?
            } else {
                (vec![0; c.size as usize], vec![0; c.size as usize])
            };
            coll::gatherv(
                c,
                sbuf as *const u8,
                in_place_count(sbuf, scount)?,
                stype,
                rbuf as *mut u8,
                &cs,
                &ds,
                rtype,
                root,
            )
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
    let g = enter_call("MPI_Scatter");
    if let Err(e) = check_scatter(g.me, sbuf, scount, stype, rbuf, rcount, rtype, root, comm) {
        return entry::handle_error(g.me, comm, "MPI_Scatter", e);
    }
    if let Err(e) = coll_check::check(
        g.me,
        comm,
        CollSig::new("MPI_Scatter")
            .root(root)
            .received(rbuf, rcount, rtype, scount, stype),
    ) {
        return entry::handle_error(g.me, comm, "MPI_Scatter", e);
    }
    match InterView::of(g.me, comm) {
        Ok(Some(iv)) => {
            let r: MpiResult<()> = (|| {
                let sc = if root == -3 { nonneg(scount)? } else { 0 };
                let n = iv.rsize as usize;
                let displs: Vec<isize> = (0..n as isize).map(|i| i * sc as isize).collect();
                ic::scatterv(
                    iv,
                    sbuf as *const u8,
                    &vec![sc; n],
                    &displs,
                    stype,
                    rbuf as *mut u8,
                    if root >= 0 { nonneg(rcount)? } else { 0 },
                    rtype,
                    root,
                )
            })();
            return result(g.me, comm, "MPI_Scatter", r);
        }
        Ok(None) => {}
        Err(e) => return entry::handle_error(g.me, comm, "MPI_Scatter", e),
    }
    coll_call!(g, comm, "MPI_Scatter", {
        let c = view(g.me, comm)?;
        // Send arguments matter only at the root.
        let sc = if c.rank == root { nonneg(scount)? } else { 0 };
        coll::scatter(
            c,
            sbuf as *const u8,
            sc,
            stype,
            rbuf as *mut u8,
            in_place_count(rbuf as *const c_void, rcount)?,
            rtype,
            root,
        )
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
        let g = enter_call("MPI_Scatterv");
        if let Err(e) = check_scatterv(
            g.me, sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm,
        ) {
            return entry::handle_error(g.me, comm, "MPI_Scatterv", e);
        }
        if let Err(e) = coll_check::check(g.me, comm, CollSig::new("MPI_Scatterv").root(root)) {
            return entry::handle_error(g.me, comm, "MPI_Scatterv", e);
        }
        match InterView::of(g.me, comm) {
            Ok(Some(iv)) => {
                let r: MpiResult<()> = (|| {
                    let (cs, ds) = if root == -3 {
                        counts_displs(iv.rsize, scounts, displs)?
                    } else {
                        (vec![], vec![])
                    };
                    ic::scatterv(
                        iv,
                        sbuf as *const u8,
                        &cs,
                        &ds,
                        stype,
                        rbuf as *mut u8,
                        if root >= 0 { nonneg(rcount)? } else { 0 },
                        rtype,
                        root,
                    )
                })();
                return result(g.me, comm, "MPI_Scatterv", r);
            }
            Ok(None) => {}
            Err(e) => return entry::handle_error(g.me, comm, "MPI_Scatterv", e),
        }
        coll_call!(g, comm, "MPI_Scatterv", {
            let c = view(g.me, comm)?;
            let (cs, ds) = if c.rank == root {
                counts_displs(c.size, scounts, displs)?
            } else {
                (vec![0; c.size as usize], vec![0; c.size as usize])
            };
            coll::scatterv(
                c,
                sbuf as *const u8,
                &cs,
                &ds,
                stype,
                rbuf as *mut u8,
                in_place_count(rbuf as *const c_void, rcount)?,
                rtype,
                root,
            )
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
    let g = enter_call("MPI_Allgather");
    if let Err(e) = check_allgather(g.me, sbuf, scount, stype, rbuf, rcount, rtype, comm) {
        return entry::handle_error(g.me, comm, "MPI_Allgather", e);
    }
    if let Err(e) = coll_check::check(
        g.me,
        comm,
        CollSig::new("MPI_Allgather").contributed(sbuf, scount, stype, rcount, rtype),
    ) {
        return entry::handle_error(g.me, comm, "MPI_Allgather", e);
    }
    match InterView::of(g.me, comm) {
        Ok(Some(iv)) => {
            let r: MpiResult<()> = (|| {
                let rc = nonneg(rcount)?;
                let n = iv.rsize as usize;
                let displs: Vec<isize> = (0..n as isize).map(|i| i * rc as isize).collect();
                ic::allgatherv(
                    iv,
                    sbuf as *const u8,
                    nonneg(scount)?,
                    stype,
                    rbuf as *mut u8,
                    &vec![rc; n],
                    &displs,
                    rtype,
                )
            })();
            return result(g.me, comm, "MPI_Allgather", r);
        }
        Ok(None) => {}
        Err(e) => return entry::handle_error(g.me, comm, "MPI_Allgather", e),
    }
    coll_call!(g, comm, "MPI_Allgather", {
        let c = view(g.me, comm)?;
        let rc = nonneg(rcount)?;
        let counts = vec![rc; c.size as usize];
        let displs: Vec<isize> = (0..c.size as isize).map(|i| i * rc as isize).collect();
        coll::allgatherv(
            c,
            sbuf as *const u8,
            in_place_count(sbuf, scount)?,
            stype,
            rbuf as *mut u8,
            &counts,
            &displs,
            rtype,
        )
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
        let g = enter_call("MPI_Allgatherv");
        if let Err(e) = check_allgatherv(g.me, sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm) {
            return entry::handle_error(g.me, comm, "MPI_Allgatherv", e);
        }
        if let Err(e) = coll_check::check(g.me, comm, CollSig::new("MPI_Allgatherv")) {
            return entry::handle_error(g.me, comm, "MPI_Allgatherv", e);
        }
        match InterView::of(g.me, comm) {
            Ok(Some(iv)) => {
                let r: MpiResult<()> = (|| {
                    let (cs, ds) = counts_displs(iv.rsize, rcounts, displs)?;
                    ic::allgatherv(
                        iv,
                        sbuf as *const u8,
                        nonneg(scount)?,
                        stype,
                        rbuf as *mut u8,
                        &cs,
                        &ds,
                        rtype,
                    )
                })();
                return result(g.me, comm, "MPI_Allgatherv", r);
            }
            Ok(None) => {}
            Err(e) => return entry::handle_error(g.me, comm, "MPI_Allgatherv", e),
        }
        coll_call!(g, comm, "MPI_Allgatherv", {
            let c = view(g.me, comm)?;
            let (cs, ds) = counts_displs(c.size, rcounts, displs)?;
            coll::allgatherv(
                c,
                sbuf as *const u8,
                in_place_count(sbuf, scount)?,
                stype,
                rbuf as *mut u8,
                &cs,
                &ds,
                rtype,
            )
        })
    }
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
    let g = enter_call("MPI_Alltoall");
    if let Err(e) = check_allgather(g.me, sbuf, scount, stype, rbuf, rcount, rtype, comm) {
        return entry::handle_error(g.me, comm, "MPI_Alltoall", e);
    }
    if let Err(e) = coll_check::check(
        g.me,
        comm,
        CollSig::new("MPI_Alltoall").contributed(sbuf, scount, stype, rcount, rtype),
    ) {
        return entry::handle_error(g.me, comm, "MPI_Alltoall", e);
    }
    match InterView::of(g.me, comm) {
        Ok(Some(iv)) => {
            let r: MpiResult<()> = (|| {
                let (sc, rc) = (nonneg(scount)?, nonneg(rcount)?);
                let n = iv.rsize as usize;
                let (se, re) =
                    with_world(|w| Ok::<_, rt::MpiError>((w.dtype(stype)?.extent, w.dtype(rtype)?.extent)))?;
                let sd: Vec<isize> = (0..n as isize).map(|i| i * sc as isize * se).collect();
                let rd: Vec<isize> = (0..n as isize).map(|i| i * rc as isize * re).collect();
                ic::alltoallw(
                    iv,
                    sbuf as *const u8,
                    &vec![sc; n],
                    &sd,
                    &vec![stype; n],
                    rbuf as *mut u8,
                    &vec![rc; n],
                    &rd,
                    &vec![rtype; n],
                )
            })();
            return result(g.me, comm, "MPI_Alltoall", r);
        }
        Ok(None) => {}
        Err(e) => return entry::handle_error(g.me, comm, "MPI_Alltoall", e),
    }
    coll_call!(g, comm, "MPI_Alltoall", {
        let c = view(g.me, comm)?;
        // The send count and type are ignored with MPI_IN_PLACE.
        let sc = in_place_count(sbuf, scount)?;
        let rc = nonneg(rcount)?;
        let n = c.size as usize;
        let sd: Vec<isize> = (0..n as isize).map(|i| i * sc as isize).collect();
        let rd: Vec<isize> = (0..n as isize).map(|i| i * rc as isize).collect();
        let (sc, sd, stype) = if sbuf as *mut u8 == IN_PLACE {
            (vec![rc; n], rd.clone(), rtype)
        } else {
            (vec![sc; n], sd, stype)
        };
        coll::alltoallv(
            c,
            sbuf as *const u8,
            &sc,
            &sd,
            stype,
            rbuf as *mut u8,
            &vec![rc; n],
            &rd,
            rtype,
            true,
        )
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
        let g = enter_call("MPI_Alltoallv");
        if let Err(e) = check_alltoallv(
            g.me,
            sbuf,
            scounts,
            sdispls,
            Err(stype),
            rbuf,
            rcounts,
            rdispls,
            Err(rtype),
            comm,
        ) {
            return entry::handle_error(g.me, comm, "MPI_Alltoallv", e);
        }
        if let Err(e) = coll_check::check(g.me, comm, CollSig::new("MPI_Alltoallv")) {
            return entry::handle_error(g.me, comm, "MPI_Alltoallv", e);
        }
        match InterView::of(g.me, comm) {
            Ok(Some(iv)) => {
                let r: MpiResult<()> = (|| {
                    let n = iv.rsize as usize;
                    let (sc, sd) = counts_displs(iv.rsize, scounts, sdispls)?;
                    let (rc, rd) = counts_displs(iv.rsize, rcounts, rdispls)?;
                    let (se, re) = with_world(|w| {
                        Ok::<_, rt::MpiError>((w.dtype(stype)?.extent, w.dtype(rtype)?.extent))
                    })?;
                    let sd: Vec<isize> = sd.iter().map(|d| d * se).collect();
                    let rd: Vec<isize> = rd.iter().map(|d| d * re).collect();
                    ic::alltoallw(
                        iv,
                        sbuf as *const u8,
                        &sc,
                        &sd,
                        &vec![stype; n],
                        rbuf as *mut u8,
                        &rc,
                        &rd,
                        &vec![rtype; n],
                    )
                })();
                return result(g.me, comm, "MPI_Alltoallv", r);
            }
            Ok(None) => {}
            Err(e) => return entry::handle_error(g.me, comm, "MPI_Alltoallv", e),
        }
        coll_call!(g, comm, "MPI_Alltoallv", {
            let c = view(g.me, comm)?;
            let (rc, rd) = counts_displs(c.size, rcounts, rdispls)?;
            // With MPI_IN_PLACE the send arguments are those of the receive.
            let (sc, sd, stype) = if sbuf as *mut u8 == IN_PLACE {
                (rc.clone(), rd.clone(), rtype)
            } else {
                let (sc, sd) = counts_displs(c.size, scounts, sdispls)?;
                (sc, sd, stype)
            };
            coll::alltoallv(
                c,
                sbuf as *const u8,
                &sc,
                &sd,
                stype,
                rbuf as *mut u8,
                &rc,
                &rd,
                rtype,
                false,
            )
        })
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
        let g = enter_call("MPI_Reduce_scatter");
        if let Err(e) = check_reduce_scatter(g.me, sbuf, rbuf, rcounts, dt, op, comm) {
            return entry::handle_error(g.me, comm, "MPI_Reduce_scatter", e);
        }
        if let Err(e) = coll_check::check(g.me, comm, CollSig::new("MPI_Reduce_scatter").op(op)) {
            return entry::handle_error(g.me, comm, "MPI_Reduce_scatter", e);
        }
        match InterView::of(g.me, comm) {
            Ok(Some(iv)) => {
                let r: MpiResult<()> = (|| {
                    let local = with_world(|w| w.ranks[g.me as usize].comm(comm).map(|c| c.size()))?;
                    let (rc, _) = counts_displs(local, rcounts, std::ptr::null())?;
                    let total: usize = rc.iter().sum();
                    ic::reduce_scatter(iv, sbuf as *const u8, rbuf as *mut u8, &rc, total, dt, op)
                })();
                return result(g.me, comm, "MPI_Reduce_scatter", r);
            }
            Ok(None) => {}
            Err(e) => return entry::handle_error(g.me, comm, "MPI_Reduce_scatter", e),
        }
        coll_call!(g, comm, "MPI_Reduce_scatter", {
            let c = view(g.me, comm)?;
            let (rc, _) = counts_displs(c.size, rcounts, std::ptr::null())?;
            coll::reduce_scatter(c, sbuf as *const u8, rbuf as *mut u8, &rc, dt, op)
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
    let g = enter_call("MPI_Reduce_scatter_block");
    if let Err(e) = check_reduce_scatter_block(g.me, sbuf, rbuf, rcount, dt, op, comm) {
        return entry::handle_error(g.me, comm, "MPI_Reduce_scatter_block", e);
    }
    if let Err(e) = coll_check::check(g.me, comm, CollSig::new("MPI_Reduce_scatter_block").op(op)) {
        return entry::handle_error(g.me, comm, "MPI_Reduce_scatter_block", e);
    }
    match InterView::of(g.me, comm) {
        Ok(Some(iv)) => {
            let r: MpiResult<()> = (|| {
                let local = with_world(|w| w.ranks[g.me as usize].comm(comm).map(|c| c.size()))?;
                let rc = vec![nonneg(rcount)?; local as usize];
                let total: usize = rc.iter().sum();
                ic::reduce_scatter(iv, sbuf as *const u8, rbuf as *mut u8, &rc, total, dt, op)
            })();
            return result(g.me, comm, "MPI_Reduce_scatter_block", r);
        }
        Ok(None) => {}
        Err(e) => return entry::handle_error(g.me, comm, "MPI_Reduce_scatter_block", e),
    }
    coll_call!(g, comm, "MPI_Reduce_scatter_block", {
        let c = view(g.me, comm)?;
        let rc = vec![nonneg(rcount)?; c.size as usize];
        coll::reduce_scatter(c, sbuf as *const u8, rbuf as *mut u8, &rc, dt, op)
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
    let g = enter_call("MPI_Scan");
    if let Err(e) = check_allreduce(g.me, sbuf, rbuf, count, dt, op, comm) {
        return entry::handle_error(g.me, comm, "MPI_Scan", e);
    }
    if let Err(e) = coll_check::check(g.me, comm, CollSig::new("MPI_Scan").op(op).data(count, dt)) {
        return entry::handle_error(g.me, comm, "MPI_Scan", e);
    }
    coll_call!(
        g,
        comm,
        "MPI_Scan",
        coll::scan(
            view(g.me, comm)?,
            sbuf as *const u8,
            rbuf as *mut u8,
            nonneg(count)?,
            dt,
            op,
            false
        )
    )
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
    let g = enter_call("MPI_Exscan");
    if let Err(e) = check_allreduce(g.me, sbuf, rbuf, count, dt, op, comm) {
        return entry::handle_error(g.me, comm, "MPI_Exscan", e);
    }
    if let Err(e) = coll_check::check(g.me, comm, CollSig::new("MPI_Exscan").op(op).data(count, dt)) {
        return entry::handle_error(g.me, comm, "MPI_Exscan", e);
    }
    coll_call!(
        g,
        comm,
        "MPI_Exscan",
        coll::scan(
            view(g.me, comm)?,
            sbuf as *const u8,
            rbuf as *mut u8,
            nonneg(count)?,
            dt,
            op,
            true
        )
    )
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
            match comm_of(me, comm)? {
                (c, Some(_)) => nbc_inter::ibarrier(c),
                (c, None) => nbc::ibarrier(c),
            }
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
            match inter {
                Some(_) => nbc_inter::ibcast(c, buf as *mut u8, count, dt, root),
                None => nbc::ibcast(c, buf as *mut u8, count, dt, root),
            }
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
            match inter {
                Some(_) => nbc_inter::ireduce(c, s, r, count, dt, op, root),
                None => nbc::ireduce(c, s, r, count, dt, op, root),
            }
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
            match comm_of(me, comm)? {
                (c, Some(_)) => nbc_inter::iallreduce(c, s, r, n, dt, op),
                (c, None) => nbc::iallreduce(c, s, r, n, dt, op),
            }
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
            let receives = match inter {
                Some(_) => root == MPI_ROOT,
                None => c.rank == root,
            };
            let sends = match inter {
                Some(_) => root >= 0,
                None => !in_place(s),
            };
            let rc = if receives { nonneg(rc)? } else { 0 };
            let sc = if sends { nonneg(sc)? } else { 0 };
            let (cs, ds) = regular(inter.unwrap_or(c.size), rc);
            let (s, r) = (s as *const u8, r as *mut u8);
            match inter {
                Some(_) => nbc_inter::igatherv(c, s, sc, st, r, cs, ds, rt_, root),
                None => nbc::igatherv(c, s, sc, st, r, cs, ds, rt_, root),
            }
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
            let receives = match inter {
                Some(_) => root == MPI_ROOT,
                None => c.rank == root,
            };
            let sends = match inter {
                Some(_) => root >= 0,
                None => !in_place(s),
            };
            let (cs, d) = if receives {
                (ivec(n, rcs)?, dvec(n, ds))
            } else {
                (vec![0; n.max(0) as usize], vec![0; n.max(0) as usize])
            };
            let sc = if sends { nonneg(sc)? } else { 0 };
            let (s, r) = (s as *const u8, r as *mut u8);
            match inter {
                Some(_) => nbc_inter::igatherv(c, s, sc, st, r, cs, d, rt_, root),
                None => nbc::igatherv(c, s, sc, st, r, cs, d, rt_, root),
            }
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
            let sends = match inter {
                Some(_) => root == MPI_ROOT,
                None => c.rank == root,
            };
            let receives = match inter {
                Some(_) => root >= 0,
                None => !in_place(r),
            };
            let sc = if sends { nonneg(sc)? } else { 0 };
            let rc = if receives { nonneg(rc)? } else { 0 };
            let (cs, ds) = regular(inter.unwrap_or(c.size), sc);
            let (s, r) = (s as *const u8, r as *mut u8);
            match inter {
                Some(_) => nbc_inter::iscatterv(c, s, cs, ds, st, r, rc, rt_, root),
                None => nbc::iscatterv(c, s, cs, ds, st, r, rc, rt_, root),
            }
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
            let sends = match inter {
                Some(_) => root == MPI_ROOT,
                None => c.rank == root,
            };
            let receives = match inter {
                Some(_) => root >= 0,
                None => !in_place(r),
            };
            let (cs, d) = if sends {
                (ivec(n, scs)?, dvec(n, ds))
            } else {
                (vec![0; n.max(0) as usize], vec![0; n.max(0) as usize])
            };
            let rc = if receives { nonneg(rc)? } else { 0 };
            let (s, r) = (s as *const u8, r as *mut u8);
            match inter {
                Some(_) => nbc_inter::iscatterv(c, s, cs, d, st, r, rc, rt_, root),
                None => nbc::iscatterv(c, s, cs, d, st, r, rc, rt_, root),
            }
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
            match inter {
                Some(_) => nbc_inter::iallgatherv(c, s, sc, st, r, cs, ds, rt_),
                None => nbc::iallgatherv(c, s, sc, st, r, cs, ds, rt_),
            }
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
            match inter {
                Some(_) => nbc_inter::iallgatherv(c, s, sc, st, r, cs, d, rt_),
                None => nbc::iallgatherv(c, s, sc, st, r, cs, d, rt_),
            }
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
        let g = enter_call("MPI_Alltoallw");
        if let Err(e) = check_alltoallv(g.me, s, scs, sds, Ok(sts), r, rcs, rds, Ok(rts), comm) {
            return entry::handle_error(g.me, comm, "MPI_Alltoallw", e);
        }
        if let Err(e) = coll_check::check(g.me, comm, CollSig::new("MPI_Alltoallw")) {
            return entry::handle_error(g.me, comm, "MPI_Alltoallw", e);
        }
        let res = alltoallw_req(g.me, comm, s, scs, sds, sts, r, rcs, rds, rts)
            .and_then(|id| wait_coll(g.me, id, "MPI_Alltoallw"));
        result(g.me, comm, "MPI_Alltoallw", res)
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
        let g = enter_call("MPI_Alltoallv_c");
        if let Err(e) = check_alltoallv(g.me, s, scs, sds, Err(st), r, rcs, rds, Err(rt_), comm) {
            return entry::handle_error(g.me, comm, "MPI_Alltoallv_c", e);
        }
        if let Err(e) = coll_check::check(g.me, comm, CollSig::new("MPI_Alltoallv_c")) {
            return entry::handle_error(g.me, comm, "MPI_Alltoallv_c", e);
        }
        let res = (|| -> MpiResult<()> {
            let (c, inter) = comm_of(g.me, comm)?;
            let n = inter.unwrap_or(c.size);
            let (rc, rd) = (ivec(n, rcs)?, dvec(n, rds));
            if let Some(rsize) = inter {
                let a =
                    Alltoallw::from_v(rsize, s, || Ok((ivec(n, scs)?, dvec(n, sds))), st, r, rc, rd, rt_)?;
                let iv = InterView::of(g.me, comm)?.ok_or_else(|| no_inter("MPI_Alltoallv_c"))?;
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
        })();
        result(g.me, comm, "MPI_Alltoallv_c", res)
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
            match inter {
                Some(_) => nbc_inter::ireduce_scatter(c, s, r, counts, dt, op),
                None => nbc::ireduce_scatter(c, s, r, counts, dt, op),
            }
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
            match inter {
                Some(_) => nbc_inter::ireduce_scatter(c, s, r, counts, dt, op),
                None => nbc::ireduce_scatter(c, s, r, counts, dt, op),
            }
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
