//! The MPI C ABI of non-blocking collectives (`MPI_Ibcast`, ...), on intra-
//! and intercommunicators, plus `MPI_Alltoallw` and `MPI_Alltoallv_c`, which
//! share their argument handling.
//!
//! Arguments MPI calls insignificant (the receive arguments of a gather at a
//! non-root, the send arguments with `MPI_IN_PLACE`, ...) are not read or
//! checked: applications pass anything there, e.g. a count of -1.
#![allow(non_snake_case, clippy::missing_safety_doc, clippy::too_many_arguments)]

use std::ffi::{c_int, c_void};

use crate::coll::nbc;
use crate::coll::nbc_inter::{self, ROOT};
use crate::coll::{self, CommView, IN_PLACE};
use crate::mpi::entry::{self, enter, result};
use crate::mpi::{self as rt, mpi_err, with_world, MpiResult, MPI_SUCCESS};

unsafe fn set<T>(p: *mut T, v: T) {
    if !p.is_null() {
        *p = v;
    }
}

fn nonneg(v: i64) -> MpiResult<usize> {
    if v < 0 {
        Err(mpi_err(rt::MPI_ERR_COUNT, format!("negative count {v}")))
    } else {
        Ok(v as usize)
    }
}

/// `n` counts from a C array of `int` or `MPI_Count`.
unsafe fn ivec<T: Copy + Into<i64>>(n: i32, p: *const T) -> MpiResult<Vec<usize>> {
    if p.is_null() && n > 0 {
        return Err(mpi_err(rt::MPI_ERR_ARG, "null array of counts"));
    }
    (0..n.max(0) as usize)
        .map(|i| nonneg((*p.add(i)).into()))
        .collect()
}

/// `n` displacements from a C array of `int` or `MPI_Aint` (a null array reads as zeros).
unsafe fn dvec<T: Copy + TryInto<isize>>(n: i32, p: *const T) -> Vec<isize> {
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

/// `n` datatype handles.
unsafe fn tvec(n: i32, p: *const c_int) -> MpiResult<Vec<i32>> {
    if p.is_null() && n > 0 {
        return Err(mpi_err(rt::MPI_ERR_TYPE, "null array of datatypes"));
    }
    Ok((0..n.max(0) as usize).map(|i| *p.add(i)).collect())
}

/// Counts and element displacements of `n` consecutive blocks of `count`.
fn regular(n: i32, count: usize) -> (Vec<usize>, Vec<isize>) {
    let n = n.max(0) as usize;
    (
        vec![count; n],
        (0..n as isize).map(|i| i * count as isize).collect(),
    )
}

fn in_place(p: *const c_void) -> bool {
    p as *mut u8 == IN_PLACE
}

/// The communicator of a collective, and the size of its remote group when it
/// is an intercommunicator.
fn comm_of(me: u32, comm: i32) -> MpiResult<(CommView, Option<i32>)> {
    match nbc_inter::Inter::of(me, comm)? {
        Some(c) => Ok((c, Some(nbc_inter::remote_size(c)?))),
        None => Ok((CommView::new(me, comm)?, None)),
    }
}

fn extent(dt: i32) -> MpiResult<isize> {
    with_world(|w| w.dtype(dt).map(|d| d.extent))
}

fn no_inter(call: &str) -> rt::MpiError {
    mpi_err(
        rt::MPI_ERR_COMM,
        format!("{call} is not defined on intercommunicators"),
    )
}

macro_rules! nb {
    ($name:literal, $comm:expr, $req:expr, $body:expr) => {{
        let g = enter();
        let r: MpiResult<u32> = $body(g.me);
        match r {
            Ok(id) => {
                set($req, id as c_int + 1);
                MPI_SUCCESS
            }
            Err(e) => entry::handle_error(g.me, $comm, $name, e),
        }
    }};
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Ibarrier(comm: c_int, req: *mut c_int) -> c_int {
    nb!("MPI_Ibarrier", comm, req, |me| match comm_of(me, comm)? {
        (c, Some(_)) => nbc_inter::ibarrier(c),
        (c, None) => nbc::ibarrier(c),
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Ibcast(
    buf: *mut c_void,
    count: c_int,
    dt: c_int,
    root: c_int,
    comm: c_int,
    req: *mut c_int,
) -> c_int {
    nb!("MPI_Ibcast", comm, req, |me| {
        let (c, inter) = comm_of(me, comm)?;
        let idle = inter.is_some() && root == rt::MPI_PROC_NULL;
        let count = if idle { 0 } else { nonneg(count.into())? };
        match inter {
            Some(_) => nbc_inter::ibcast(c, buf as *mut u8, count, dt, root),
            None => nbc::ibcast(c, buf as *mut u8, count, dt, root),
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Ireduce(
    s: *const c_void,
    r: *mut c_void,
    count: c_int,
    dt: c_int,
    op: c_int,
    root: c_int,
    comm: c_int,
    req: *mut c_int,
) -> c_int {
    nb!("MPI_Ireduce", comm, req, |me| {
        let (c, inter) = comm_of(me, comm)?;
        let idle = inter.is_some() && root == rt::MPI_PROC_NULL;
        let count = if idle { 0 } else { nonneg(count.into())? };
        let (s, r) = (s as *const u8, r as *mut u8);
        match inter {
            Some(_) => nbc_inter::ireduce(c, s, r, count, dt, op, root),
            None => nbc::ireduce(c, s, r, count, dt, op, root),
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Iallreduce(
    s: *const c_void,
    r: *mut c_void,
    count: c_int,
    dt: c_int,
    op: c_int,
    comm: c_int,
    req: *mut c_int,
) -> c_int {
    nb!("MPI_Iallreduce", comm, req, |me| {
        let (s, r, n) = (s as *const u8, r as *mut u8, nonneg(count.into())?);
        match comm_of(me, comm)? {
            (c, Some(_)) => nbc_inter::iallreduce(c, s, r, n, dt, op),
            (c, None) => nbc::iallreduce(c, s, r, n, dt, op),
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Igather(
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
    nb!("MPI_Igather", comm, req, |me| {
        let (c, inter) = comm_of(me, comm)?;
        let receives = match inter {
            Some(_) => root == ROOT,
            None => c.rank == root,
        };
        let sends = match inter {
            Some(_) => root >= 0,
            None => !in_place(s),
        };
        let rc = if receives { nonneg(rc.into())? } else { 0 };
        let sc = if sends { nonneg(sc.into())? } else { 0 };
        let (cs, ds) = regular(inter.unwrap_or(c.size), rc);
        let (s, r) = (s as *const u8, r as *mut u8);
        match inter {
            Some(_) => nbc_inter::igatherv(c, s, sc, st, r, cs, ds, rt_, root),
            None => nbc::igatherv(c, s, sc, st, r, cs, ds, rt_, root),
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Igatherv(
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
    nb!("MPI_Igatherv", comm, req, |me| {
        let (c, inter) = comm_of(me, comm)?;
        let n = inter.unwrap_or(c.size);
        let receives = match inter {
            Some(_) => root == ROOT,
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
        let sc = if sends { nonneg(sc.into())? } else { 0 };
        let (s, r) = (s as *const u8, r as *mut u8);
        match inter {
            Some(_) => nbc_inter::igatherv(c, s, sc, st, r, cs, d, rt_, root),
            None => nbc::igatherv(c, s, sc, st, r, cs, d, rt_, root),
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Iscatter(
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
    nb!("MPI_Iscatter", comm, req, |me| {
        let (c, inter) = comm_of(me, comm)?;
        let sends = match inter {
            Some(_) => root == ROOT,
            None => c.rank == root,
        };
        let receives = match inter {
            Some(_) => root >= 0,
            None => !in_place(r),
        };
        let sc = if sends { nonneg(sc.into())? } else { 0 };
        let rc = if receives { nonneg(rc.into())? } else { 0 };
        let (cs, ds) = regular(inter.unwrap_or(c.size), sc);
        let (s, r) = (s as *const u8, r as *mut u8);
        match inter {
            Some(_) => nbc_inter::iscatterv(c, s, cs, ds, st, r, rc, rt_, root),
            None => nbc::iscatterv(c, s, cs, ds, st, r, rc, rt_, root),
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Iscatterv(
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
    nb!("MPI_Iscatterv", comm, req, |me| {
        let (c, inter) = comm_of(me, comm)?;
        let n = inter.unwrap_or(c.size);
        let sends = match inter {
            Some(_) => root == ROOT,
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
        let rc = if receives { nonneg(rc.into())? } else { 0 };
        let (s, r) = (s as *const u8, r as *mut u8);
        match inter {
            Some(_) => nbc_inter::iscatterv(c, s, cs, d, st, r, rc, rt_, root),
            None => nbc::iscatterv(c, s, cs, d, st, r, rc, rt_, root),
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Iallgather(
    s: *const c_void,
    sc: c_int,
    st: c_int,
    r: *mut c_void,
    rc: c_int,
    rt_: c_int,
    comm: c_int,
    req: *mut c_int,
) -> c_int {
    nb!("MPI_Iallgather", comm, req, |me| {
        let (c, inter) = comm_of(me, comm)?;
        let (cs, ds) = regular(inter.unwrap_or(c.size), nonneg(rc.into())?);
        let sc = if in_place(s) { 0 } else { nonneg(sc.into())? };
        let (s, r) = (s as *const u8, r as *mut u8);
        match inter {
            Some(_) => nbc_inter::iallgatherv(c, s, sc, st, r, cs, ds, rt_),
            None => nbc::iallgatherv(c, s, sc, st, r, cs, ds, rt_),
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Iallgatherv(
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
    nb!("MPI_Iallgatherv", comm, req, |me| {
        let (c, inter) = comm_of(me, comm)?;
        let n = inter.unwrap_or(c.size);
        let (cs, d) = (ivec(n, rcs)?, dvec(n, ds));
        let sc = if in_place(s) { 0 } else { nonneg(sc.into())? };
        let (s, r) = (s as *const u8, r as *mut u8);
        match inter {
            Some(_) => nbc_inter::iallgatherv(c, s, sc, st, r, cs, d, rt_),
            None => nbc::iallgatherv(c, s, sc, st, r, cs, d, rt_),
        }
    })
}

/// The arguments of an alltoallw (byte displacements, one type per peer).
struct Alltoallw {
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
pub unsafe extern "C" fn MPI_Ialltoall(
    s: *const c_void,
    sc: c_int,
    st: c_int,
    r: *mut c_void,
    rc: c_int,
    rt_: c_int,
    comm: c_int,
    req: *mut c_int,
) -> c_int {
    nb!("MPI_Ialltoall", comm, req, |me| {
        let (c, inter) = comm_of(me, comm)?;
        let n = inter.unwrap_or(c.size);
        let (rcs, rds) = regular(n, nonneg(rc.into())?);
        let send = || Ok(regular(n, nonneg(sc.into())?));
        Alltoallw::from_v(n, s, send, st, r, rcs, rds, rt_)?.start(c, inter.is_some())
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Ialltoallv(
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
    nb!("MPI_Ialltoallv", comm, req, |me| {
        let (c, inter) = comm_of(me, comm)?;
        let n = inter.unwrap_or(c.size);
        let send = || Ok((ivec(n, scs)?, dvec(n, sds)));
        Alltoallw::from_v(n, s, send, st, r, ivec(n, rcs)?, dvec(n, rds), rt_)?.start(c, inter.is_some())
    })
}

/// Starts an alltoallw from its C arguments.
unsafe fn alltoallw_req(
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

#[no_mangle]
pub unsafe extern "C" fn MPI_Ialltoallw(
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
    nb!("MPI_Ialltoallw", comm, req, |me| alltoallw_req(
        me, comm, s, scs, sds, sts, r, rcs, rds, rts
    ))
}

/// Waits for a collective request a blocking call started.
fn wait_coll(me: u32, id: u32, call: &'static str) -> MpiResult<()> {
    let st = rt::wait(me, id, call);
    if st.error != MPI_SUCCESS {
        return Err(mpi_err(st.error, format!("{call} failed")));
    }
    Ok(())
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Alltoallw(
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
    let g = enter();
    let res = alltoallw_req(g.me, comm, s, scs, sds, sts, r, rcs, rds, rts)
        .and_then(|id| wait_coll(g.me, id, "MPI_Alltoallw"));
    result(g.me, comm, "MPI_Alltoallw", res)
}

/// MPI_Alltoallv with `MPI_Count` counts and `MPI_Aint` displacements: the
/// same algorithms as MPI_Alltoallv.
#[no_mangle]
pub unsafe extern "C" fn MPI_Alltoallv_c(
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
    let g = enter();
    let res = (|| -> MpiResult<()> {
        let (c, inter) = comm_of(g.me, comm)?;
        let n = inter.unwrap_or(c.size);
        let (rc, rd) = (ivec(n, rcs)?, dvec(n, rds));
        if let Some(rsize) = inter {
            let a = Alltoallw::from_v(rsize, s, || Ok((ivec(n, scs)?, dvec(n, sds))), st, r, rc, rd, rt_)?;
            let iv =
                crate::abi::more::InterView::of(g.me, comm)?.ok_or_else(|| no_inter("MPI_Alltoallv_c"))?;
            return crate::abi::more::inter_alltoallw(
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

#[no_mangle]
pub unsafe extern "C" fn MPI_Ireduce_scatter(
    s: *const c_void,
    r: *mut c_void,
    rcs: *const c_int,
    dt: c_int,
    op: c_int,
    comm: c_int,
    req: *mut c_int,
) -> c_int {
    nb!("MPI_Ireduce_scatter", comm, req, |me| {
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

#[no_mangle]
pub unsafe extern "C" fn MPI_Ireduce_scatter_block(
    s: *const c_void,
    r: *mut c_void,
    rc: c_int,
    dt: c_int,
    op: c_int,
    comm: c_int,
    req: *mut c_int,
) -> c_int {
    nb!("MPI_Ireduce_scatter_block", comm, req, |me| {
        let (c, inter) = comm_of(me, comm)?;
        let counts = vec![nonneg(rc.into())?; c.size as usize];
        let (s, r) = (s as *const u8, r as *mut u8);
        match inter {
            Some(_) => nbc_inter::ireduce_scatter(c, s, r, counts, dt, op),
            None => nbc::ireduce_scatter(c, s, r, counts, dt, op),
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Iscan(
    s: *const c_void,
    r: *mut c_void,
    count: c_int,
    dt: c_int,
    op: c_int,
    comm: c_int,
    req: *mut c_int,
) -> c_int {
    nb!("MPI_Iscan", comm, req, |me| match comm_of(me, comm)? {
        (_, Some(_)) => Err(no_inter("MPI_Iscan")),
        (c, None) => nbc::iscan(
            c,
            s as *const u8,
            r as *mut u8,
            nonneg(count.into())?,
            dt,
            op,
            false
        ),
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Iexscan(
    s: *const c_void,
    r: *mut c_void,
    count: c_int,
    dt: c_int,
    op: c_int,
    comm: c_int,
    req: *mut c_int,
) -> c_int {
    nb!("MPI_Iexscan", comm, req, |me| match comm_of(me, comm)? {
        (_, Some(_)) => Err(no_inter("MPI_Iexscan")),
        (c, None) => nbc::iscan(
            c,
            s as *const u8,
            r as *mut u8,
            nonneg(count.into())?,
            dt,
            op,
            true
        ),
    })
}
