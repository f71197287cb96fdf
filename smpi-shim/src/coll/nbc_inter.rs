//! Non-blocking collectives on intercommunicators, with MPI's semantics: data
//! flows between the two groups. Rooted ones name the root with `MPI_ROOT`
//! (the root itself), `MPI_PROC_NULL` (the other members of the root's group,
//! which take no part) or the root's rank in the remote group.
//!
//! Flat algorithms, built from stages like [`crate::coll::nbc`]; peers are ranks of
//! the remote group. Reductions combine the remote group's contributions in
//! rank order.
#![allow(clippy::not_unsafe_ptr_arg_deref, clippy::too_many_arguments)]

use crate::coll::nbc::{fold_in_order, keep_until_done, temps, Nbc};
use crate::coll::{self, Alltoallw, CommView, Reducer, BYTE};
use crate::mpi::{self as rt, mpi_err, with_world, MpiResult, Stage};

/// `MPI_ROOT`.
pub(crate) const MPI_ROOT: i32 = -3;

/// One rank's side of an intercommunicator collective.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Inter {
    n: Nbc,
    /// Size of the remote group.
    pub rsize: i32,
}

/// What a rooted collective asks of this rank.
enum Role {
    /// `MPI_ROOT`: the root.
    Root,
    /// `MPI_PROC_NULL`: a member of the root's group other than the root.
    Idle,
    /// The root is this rank of the remote group.
    Leaf(i32),
}

impl Inter {
    /// `Some` when `comm` is an intercommunicator.
    pub(crate) fn of(me: u32, comm: i32) -> MpiResult<Option<CommView>> {
        let inter = with_world(|w| w.ranks[me as usize].comm(comm).map(|c| c.shared.remote.is_some()))?;
        Ok(if inter {
            Some(CommView::new(me, comm)?)
        } else {
            None
        })
    }

    /// Names the next collective on intercommunicator `c`.
    fn new(c: CommView) -> MpiResult<Self> {
        let rsize = with_world(|w| w.ranks[c.me as usize].comm(c.comm).map(|e| e.peer_size()))?;
        Ok(Inter {
            n: Nbc::new(c)?,
            rsize,
        })
    }

    fn role(&self, root: i32) -> MpiResult<Role> {
        match root {
            MPI_ROOT => Ok(Role::Root),
            rt::MPI_PROC_NULL => Ok(Role::Idle),
            r if (0..self.rsize).contains(&r) => Ok(Role::Leaf(r)),
            r => Err(mpi_err(
                rt::MPI_ERR_ROOT,
                format!(
                    "invalid root {r} on an intercommunicator (remote group size {})",
                    self.rsize
                ),
            )),
        }
    }

    fn remote(&self) -> std::ops::Range<i32> {
        0..self.rsize
    }
}

/// Size of the remote group of `c` (an intercommunicator).
pub(crate) fn remote_size(c: CommView) -> MpiResult<i32> {
    with_world(|w| w.ranks[c.me as usize].comm(c.comm).map(|e| e.peer_size()))
}

fn extent(dt: i32) -> MpiResult<isize> {
    with_world(|w| w.dtype(dt).map(|d| d.extent))
}

/// MPI_Ibarrier: every rank tells every remote rank it has entered and
/// completes once all remote ranks have told it.
pub(crate) fn ibarrier(c: CommView) -> MpiResult<u32> {
    let x = Inter::new(c)?;
    let s: Stage = Box::new(move || {
        let mut reqs = Vec::new();
        for i in x.remote() {
            reqs.push(x.n.irecv(std::ptr::null_mut(), 0, BYTE, i)?);
        }
        for i in x.remote() {
            reqs.push(x.n.isend(std::ptr::null(), 0, BYTE, i)?);
        }
        Ok(reqs)
    });
    x.n.start(vec![s])
}

/// MPI_Ibcast: the root sends to every remote rank.
pub(crate) fn ibcast(c: CommView, buf: *mut u8, count: usize, dt: i32, root: i32) -> MpiResult<u32> {
    let x = Inter::new(c)?;
    let role = x.role(root)?;
    let s: Stage = Box::new(move || match role {
        Role::Root => x.remote().map(|i| x.n.isend(buf, count, dt, i)).collect(),
        Role::Idle => Ok(vec![]),
        Role::Leaf(r) => Ok(vec![x.n.irecv(buf, count, dt, r)?]),
    });
    x.n.start(vec![s])
}

/// Stages that receive `count` elements from every remote rank and fold them
/// in remote-rank order into `out`.
fn gather_reduce_stages(x: Inter, red: Reducer, count: usize, out: *mut u8) -> Vec<Stage> {
    let (bufs, ptrs) = temps(&red, x.rsize as usize, count);
    let dt = red.dtype;
    let recv_into = ptrs.clone();
    let recv: Stage = Box::new(move || {
        x.remote()
            .map(|i| x.n.irecv(recv_into[i as usize], count, dt, i))
            .collect()
    });
    let combine: Stage = Box::new(move || {
        let xs: Vec<*const u8> = ptrs.iter().map(|&p| p as *const u8).collect();
        fold_in_order(&red, &xs, count, out)?;
        drop(bufs);
        Ok(vec![])
    });
    vec![recv, combine]
}

/// MPI_Ireduce: the remote group's data, reduced, arrives at the root.
pub(crate) fn ireduce(
    c: CommView,
    sbuf: *const u8,
    rbuf: *mut u8,
    count: usize,
    dt: i32,
    op: i32,
    root: i32,
) -> MpiResult<u32> {
    let x = Inter::new(c)?;
    let stages = match x.role(root)? {
        Role::Root => gather_reduce_stages(x, Reducer::new(op, dt)?, count, rbuf),
        Role::Idle => vec![],
        Role::Leaf(r) => vec![Box::new(move || Ok(vec![x.n.isend(sbuf, count, dt, r)?])) as Stage],
    };
    x.n.start(stages)
}

/// MPI_Iallreduce: every rank sends its data to every remote rank and
/// receives the reduction of the remote group's data.
pub(crate) fn iallreduce(
    c: CommView,
    sbuf: *const u8,
    rbuf: *mut u8,
    count: usize,
    dt: i32,
    op: i32,
) -> MpiResult<u32> {
    let red = Reducer::new(op, dt)?;
    let x = Inter::new(c)?;
    let mut stages = gather_reduce_stages(x, red, count, rbuf);
    let recv = stages.remove(0);
    // Sends go with the receives, so that both groups progress at once.
    let first: Stage = Box::new(move || {
        let mut reqs = recv()?;
        for i in x.remote() {
            reqs.push(x.n.isend(sbuf, count, dt, i)?);
        }
        Ok(reqs)
    });
    stages.insert(0, first);
    x.n.start(stages)
}

/// MPI_Igatherv (and Igather): the root receives each remote rank's block.
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
    let x = Inter::new(c)?;
    let role = x.role(root)?;
    let rext = if matches!(role, Role::Root) {
        extent(rtype)?
    } else {
        0
    };
    let s: Stage = Box::new(move || match role {
        Role::Root => x
            .remote()
            .map(|i| {
                let k = i as usize;
                x.n.irecv(rbuf.wrapping_offset(displs[k] * rext), rcounts[k], rtype, i)
            })
            .collect(),
        Role::Idle => Ok(vec![]),
        Role::Leaf(r) => Ok(vec![x.n.isend(sbuf, scount, stype, r)?]),
    });
    x.n.start(vec![s])
}

/// MPI_Iscatterv (and Iscatter): the root sends each remote rank its block.
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
    let x = Inter::new(c)?;
    let role = x.role(root)?;
    let sext = if matches!(role, Role::Root) {
        extent(stype)?
    } else {
        0
    };
    let s: Stage = Box::new(move || match role {
        Role::Root => x
            .remote()
            .map(|i| {
                let k = i as usize;
                x.n.isend(sbuf.wrapping_offset(displs[k] * sext), scounts[k], stype, i)
            })
            .collect(),
        Role::Idle => Ok(vec![]),
        Role::Leaf(r) => Ok(vec![x.n.irecv(rbuf, rcount, rtype, r)?]),
    });
    x.n.start(vec![s])
}

/// MPI_Iallgatherv (and Iallgather): every rank sends its block to every
/// remote rank and receives the remote group's blocks.
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
    let x = Inter::new(c)?;
    let rext = extent(rtype)?;
    let s: Stage = Box::new(move || {
        let mut reqs = Vec::new();
        for i in x.remote() {
            let k = i as usize;
            reqs.push(x.n.irecv(rbuf.wrapping_offset(displs[k] * rext), rcounts[k], rtype, i)?);
        }
        for i in x.remote() {
            reqs.push(x.n.isend(sbuf, scount, stype, i)?);
        }
        Ok(reqs)
    });
    x.n.start(vec![s])
}

/// MPI_Ialltoallw (byte displacements; Ialltoall(v) map onto it): block `i`
/// goes to remote rank `i`, whose block for me lands at my block `i`.
pub(crate) fn ialltoallw(c: CommView, a: Alltoallw) -> MpiResult<u32> {
    let x = Inter::new(c)?;
    let s: Stage = Box::new(move || {
        let mut reqs = Vec::new();
        for i in x.remote() {
            let k = i as usize;
            reqs.push(x.n.irecv(a.rbuf.wrapping_offset(a.rdispls[k]), a.rcounts[k], a.rtypes[k], i)?);
        }
        for i in x.remote() {
            let k = i as usize;
            reqs.push(x.n.isend(a.sbuf.wrapping_offset(a.sdispls[k]), a.scounts[k], a.stypes[k], i)?);
        }
        Ok(reqs)
    });
    x.n.start(vec![s])
}

/// MPI_Ireduce_scatter (and Ireduce_scatter_block): every rank sends its whole
/// vector (the sum of the local `rcounts` elements, as in MPICH, both groups
/// agreeing on that sum) to every remote rank, reduces the remote vectors and
/// keeps its own block.
pub(crate) fn ireduce_scatter(
    c: CommView,
    sbuf: *const u8,
    rbuf: *mut u8,
    rcounts: Vec<usize>,
    dt: i32,
    op: i32,
) -> MpiResult<u32> {
    let red = Reducer::new(op, dt)?;
    let ext = extent(dt)?;
    let x = Inter::new(c)?;
    let total: usize = rcounts.iter().sum();
    let mut full = red.temp(total);
    let full_ptr = full.ptr();
    let mut stages = gather_reduce_stages(x, red, total, full_ptr);
    let recv = stages.remove(0);
    stages.insert(
        0,
        Box::new(move || {
            let mut reqs = recv()?;
            for i in x.remote() {
                reqs.push(x.n.isend(sbuf, total, dt, i)?);
            }
            Ok(reqs)
        }),
    );
    let rank = c.rank as usize;
    stages.push(Box::new(move || {
        let off: usize = rcounts[..rank].iter().sum();
        let mine = rcounts[rank];
        coll::local_copy(
            full_ptr.wrapping_offset(off as isize * ext),
            mine,
            dt,
            rbuf,
            mine,
            dt,
        )?;
        Ok(vec![])
    }));
    keep_until_done(&mut stages, full);
    x.n.start(stages)
}
