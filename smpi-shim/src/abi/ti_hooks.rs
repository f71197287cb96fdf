//! What the collectives of the C interface write in a time-independent trace
//! (`smpirun -trace-ti`): each takes the call's C arguments, once they are
//! checked, and writes SMPI's line for them (`smpi_pmpi_coll.cpp` decides the
//! fields: `MPI_IN_PLACE` sides, counts that only matter at the root, ...).
//! Each collective calls one of these under `ti!`, so nothing here runs
//! when no such trace is recorded.

use std::ffi::{c_int, c_void};

use crate::coll::IN_PLACE;
use crate::mpi::ti_trace::{self, VarColl};
use crate::mpi::with_world;

/// (rank, size) of `me` in intracommunicator `comm` ((0, 0) if unknown: the call then fails anyway).
fn rank_size(me: u32, comm: c_int) -> (i32, usize) {
    with_world(|w| {
        w.ranks[me as usize]
            .comm(comm)
            .map_or((0, 0), |c| (c.my_rank, c.size() as usize))
    })
}

fn in_place(buf: *const c_void) -> bool {
    buf as *mut u8 == IN_PLACE
}

fn count(c: c_int) -> usize {
    c.max(0) as usize
}

/// `n` counts from a C array.
///
/// # Safety
/// `counts` holds `n` entries (checked by the call's argument checks).
unsafe fn counts(counts: *const c_int, n: usize) -> Vec<usize> {
    // Safety: the caller's contract.
    (0..n).map(|i| count(unsafe { *counts.add(i) })).collect()
}

pub(super) fn barrier(me: u32, comm: c_int) {
    ti_trace::barrier(me, comm);
}

pub(super) fn bcast(me: u32, n: c_int, dt: c_int, root: c_int, comm: c_int) {
    ti_trace::coll(me, comm, "bcast", root, -1.0, (count(n), dt), None);
}

/// `reduce`, `allreduce` (`root` < 0), `scan`, `exscan`: SMPI writes 0 flops.
pub(super) fn reduction(me: u32, name: &'static str, n: c_int, dt: c_int, root: c_int, comm: c_int) {
    ti_trace::coll(me, comm, name, root, 0.0, (count(n), dt), None);
}

/// `gather`, `scatter` (`root` ≥ 0), `allgather`, `alltoall` (`root` < 0):
/// an in-place send side is the receive side (`gather`: empty at the root).
#[allow(clippy::too_many_arguments)]
pub(super) fn regular(
    me: u32,
    name: &'static str,
    sbuf: *const c_void,
    sn: c_int,
    st: c_int,
    rn: c_int,
    rt: c_int,
    root: c_int,
    comm: c_int,
) {
    let send = match (in_place(sbuf), name) {
        (true, "gather") => (0, rt),
        (true, _) => (count(rn), rt),
        (false, _) => (count(sn), st),
    };
    ti_trace::coll(me, comm, name, root, -1.0, send, Some((count(rn), rt)));
}

/// `gatherv` (`root` ≥ 0) and `allgatherv`: receive counts (zeros off the root).
///
/// # Safety
/// `rcounts` holds one count per rank where MPI reads it.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn gatherv(
    me: u32,
    sbuf: *const c_void,
    sn: c_int,
    st: c_int,
    rcounts: *const c_int,
    rt: c_int,
    root: c_int,
    comm: c_int,
) {
    let (rank, size) = rank_size(me, comm);
    let at_root = root < 0 || rank == root;
    // Safety: read where MPI reads them.
    let rc = if at_root {
        unsafe { counts(rcounts, size) }
    } else {
        vec![0; size]
    };
    let (send, stype) = match (in_place(sbuf), root < 0) {
        (true, true) => (rc.get(rank as usize).copied().unwrap_or(0), rt),
        (true, false) => (0, rt),
        (false, _) => (count(sn), st),
    };
    let name = if root < 0 { "allgatherv" } else { "gatherv" };
    ti_trace::vcoll(
        me,
        comm,
        VarColl {
            name,
            root,
            send: Some(send),
            sendcounts: None,
            recv: None,
            recvcounts: Some(&rc),
            send_type: Some(stype),
            recv_type: Some(rt),
            flops_as_send_type: false,
        },
    );
}

/// `scatterv`: send counts (zeros off the root).
///
/// # Safety
/// `scounts` holds one count per rank at the root.
pub(super) unsafe fn scatterv(
    me: u32,
    scounts: *const c_int,
    st: c_int,
    rn: c_int,
    rt: c_int,
    root: c_int,
    comm: c_int,
) {
    let (rank, size) = rank_size(me, comm);
    // Safety: read at the root only, as MPI does.
    let sc = if rank == root {
        unsafe { counts(scounts, size) }
    } else {
        vec![0; size]
    };
    ti_trace::vcoll(
        me,
        comm,
        VarColl {
            name: "scatterv",
            root,
            send: None,
            sendcounts: Some(&sc),
            recv: Some(count(rn)),
            recvcounts: None,
            send_type: Some(st),
            recv_type: Some(rt),
            flops_as_send_type: false,
        },
    );
}

/// `alltoallv`: totals and counts of both sides (in place: the receive side twice).
///
/// # Safety
/// The count arrays hold one count per rank (the send one unless in place).
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn alltoallv(
    me: u32,
    sbuf: *const c_void,
    scounts: *const c_int,
    st: c_int,
    rcounts: *const c_int,
    rt: c_int,
    comm: c_int,
) {
    let (_, size) = rank_size(me, comm);
    // Safety: the caller's contract.
    let rc = unsafe { counts(rcounts, size) };
    let (sc, stype) = if in_place(sbuf) {
        (rc.clone(), rt)
    } else {
        // Safety: the caller's contract.
        (unsafe { counts(scounts, size) }, st)
    };
    ti_trace::vcoll(
        me,
        comm,
        VarColl {
            name: "alltoallv",
            root: -1,
            send: Some(sc.iter().sum()),
            sendcounts: Some(&sc),
            recv: Some(rc.iter().sum()),
            recvcounts: Some(&rc),
            send_type: Some(stype),
            recv_type: Some(rt),
            flops_as_send_type: false,
        },
    );
}

/// `reducescatter`: receive counts (`rcounts`, or `block` for each rank).
///
/// # Safety
/// `rcounts` holds one count per rank when `block` is `None`.
pub(super) unsafe fn reduce_scatter(
    me: u32,
    rcounts: *const c_int,
    block: Option<c_int>,
    dt: c_int,
    comm: c_int,
) {
    let (_, size) = rank_size(me, comm);
    let rc = match block {
        Some(b) => vec![count(b); size],
        // Safety: the caller's contract.
        None => unsafe { counts(rcounts, size) },
    };
    ti_trace::vcoll(
        me,
        comm,
        VarColl {
            name: "reducescatter",
            root: -1,
            send: None,
            sendcounts: None,
            recv: None,
            recvcounts: Some(&rc),
            send_type: None,
            recv_type: Some(dt),
            flops_as_send_type: true,
        },
    );
}
