//! More of the MPI C ABI: non-blocking collectives, `MPI_Alltoallw`, group
//! algebra, attributes and keyvals, Cartesian topologies, intercommunicators,
//! datatype introspection.
#![allow(non_snake_case, clippy::missing_safety_doc, clippy::too_many_arguments)]

use std::ffi::{c_char, c_int, c_void};
use std::rc::Rc;

use smpi_shim::coll::{self, CommView, IN_PLACE};
use smpi_shim::entry::{self, enter, result};
use smpi_shim::nbc;
use smpi_shim::runtime::{
    self as rt, mpi_err, with_world, Cart, CommEntry, CommShared, MpiResult, MPI_COMM_NULL, MPI_SUCCESS,
    MPI_UNDEFINED,
};

unsafe fn set<T>(p: *mut T, v: T) {
    if !p.is_null() {
        *p = v;
    }
}

fn view(me: u32, comm: i32) -> MpiResult<CommView> {
    let v = CommView::new(me, comm)?;
    let inter = with_world(|w| w.ranks[me as usize].comm(comm).map(|c| c.shared.remote.is_some()))?;
    if inter {
        return Err(mpi_err(
            rt::MPI_ERR_COMM,
            "collectives on intercommunicators are not supported",
        ));
    }
    Ok(v)
}

fn nonneg(v: c_int) -> MpiResult<usize> {
    if v < 0 {
        Err(mpi_err(rt::MPI_ERR_COUNT, format!("negative count {v}")))
    } else {
        Ok(v as usize)
    }
}

unsafe fn ivec(n: i32, p: *const c_int) -> MpiResult<Vec<usize>> {
    (0..n.max(0) as usize).map(|i| nonneg(*p.add(i))).collect()
}

unsafe fn dvec(n: i32, p: *const c_int) -> Vec<isize> {
    (0..n.max(0) as usize)
        .map(|i| if p.is_null() { 0 } else { *p.add(i) as isize })
        .collect()
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

// ------------------------------------------------------------------ non-blocking collectives

#[no_mangle]
pub unsafe extern "C" fn MPI_Ibarrier(comm: c_int, req: *mut c_int) -> c_int {
    nb!("MPI_Ibarrier", comm, req, |me| nbc::ibarrier(view(me, comm)?))
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
    nb!("MPI_Ibcast", comm, req, |me| nbc::ibcast(
        view(me, comm)?,
        buf as *mut u8,
        nonneg(count)?,
        dt,
        root
    ))
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
    nb!("MPI_Ireduce", comm, req, |me| nbc::ireduce(
        view(me, comm)?,
        s as *const u8,
        r as *mut u8,
        nonneg(count)?,
        dt,
        op,
        root
    ))
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
    nb!("MPI_Iallreduce", comm, req, |me| nbc::iallreduce(
        view(me, comm)?,
        s as *const u8,
        r as *mut u8,
        nonneg(count)?,
        dt,
        op
    ))
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
        let c = view(me, comm)?;
        let rc = nonneg(rc)?;
        let displs = (0..c.size as isize).map(|i| i * rc as isize).collect();
        nbc::igatherv(
            c,
            s as *const u8,
            nonneg(sc)?,
            st,
            r as *mut u8,
            vec![rc; c.size as usize],
            displs,
            rt_,
            root,
        )
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
        let c = view(me, comm)?;
        let (cs, d) = if c.rank == root {
            (ivec(c.size, rcs)?, dvec(c.size, ds))
        } else {
            (vec![0; c.size as usize], vec![0; c.size as usize])
        };
        nbc::igatherv(c, s as *const u8, nonneg(sc)?, st, r as *mut u8, cs, d, rt_, root)
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
        let c = view(me, comm)?;
        let sc = nonneg(sc)?;
        let displs = (0..c.size as isize).map(|i| i * sc as isize).collect();
        nbc::iscatterv(
            c,
            s as *const u8,
            vec![sc; c.size as usize],
            displs,
            st,
            r as *mut u8,
            nonneg(rc)?,
            rt_,
            root,
        )
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
        let c = view(me, comm)?;
        let (cs, d) = if c.rank == root {
            (ivec(c.size, scs)?, dvec(c.size, ds))
        } else {
            (vec![0; c.size as usize], vec![0; c.size as usize])
        };
        nbc::iscatterv(c, s as *const u8, cs, d, st, r as *mut u8, nonneg(rc)?, rt_, root)
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
        let c = view(me, comm)?;
        let rc = nonneg(rc)?;
        let displs = (0..c.size as isize).map(|i| i * rc as isize).collect();
        nbc::iallgatherv(
            c,
            s as *const u8,
            nonneg(sc)?,
            st,
            r as *mut u8,
            vec![rc; c.size as usize],
            displs,
            rt_,
        )
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
        let c = view(me, comm)?;
        nbc::iallgatherv(
            c,
            s as *const u8,
            nonneg(sc)?,
            st,
            r as *mut u8,
            ivec(c.size, rcs)?,
            dvec(c.size, ds),
            rt_,
        )
    })
}

/// Regular or v-counts alltoall as an alltoallw with byte displacements.
unsafe fn alltoall_as_w(
    me: u32,
    comm: i32,
    s: *const c_void,
    scounts: Vec<usize>,
    sdispls: Vec<isize>,
    st: i32,
    r: *mut c_void,
    rcounts: Vec<usize>,
    rdispls: Vec<isize>,
    rt_: i32,
) -> MpiResult<u32> {
    let c = view(me, comm)?;
    let (sext, rext) = with_world(|w| Ok::<_, rt::MpiError>((w.dtype(st)?.extent, w.dtype(rt_)?.extent)))?;
    let n = c.size as usize;
    if s as *mut u8 == IN_PLACE {
        return Err(mpi_err(
            rt::MPI_ERR_ARG,
            "MPI_IN_PLACE is not supported for non-blocking alltoall",
        ));
    }
    nbc::ialltoallw(
        c,
        s as *const u8,
        scounts,
        sdispls.iter().map(|d| d * sext).collect(),
        vec![st; n],
        r as *mut u8,
        rcounts,
        rdispls.iter().map(|d| d * rext).collect(),
        vec![rt_; n],
    )
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
        let n = CommView::new(me, comm)?.size as usize;
        let (sc, rc) = (nonneg(sc)?, nonneg(rc)?);
        let sd = (0..n as isize).map(|i| i * sc as isize).collect();
        let rd = (0..n as isize).map(|i| i * rc as isize).collect();
        alltoall_as_w(me, comm, s, vec![sc; n], sd, st, r, vec![rc; n], rd, rt_)
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
        let n = CommView::new(me, comm)?.size;
        alltoall_as_w(
            me,
            comm,
            s,
            ivec(n, scs)?,
            dvec(n, sds),
            st,
            r,
            ivec(n, rcs)?,
            dvec(n, rds),
            rt_,
        )
    })
}

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
    let c = view(me, comm)?;
    let n = c.size;
    let types = |p: *const c_int| -> Vec<i32> { (0..n as usize).map(|i| *p.add(i)).collect() };
    let (rcounts, rdispls, rtypes) = (ivec(n, rcs)?, dvec(n, rds), types(rts));
    if s as *mut u8 == IN_PLACE {
        // Send from a copy of the receive buffer (same layout).
        let span = (0..n as usize)
            .map(|i| {
                let ext = with_world(|w| w.dtype(rtypes[i]).map(|d| d.extent).unwrap_or(0));
                rdispls[i] + rcounts[i] as isize * ext
            })
            .max()
            .unwrap_or(0)
            .max(0) as usize;
        let copy: &'static mut [u8] = Box::leak(vec![0u8; span].into_boxed_slice());
        std::ptr::copy_nonoverlapping(r as *const u8, copy.as_mut_ptr(), span);
        return nbc::ialltoallw(
            c,
            copy.as_ptr(),
            rcounts.clone(),
            rdispls.clone(),
            rtypes.clone(),
            r as *mut u8,
            rcounts,
            rdispls,
            rtypes,
        );
    }
    nbc::ialltoallw(
        c,
        s as *const u8,
        ivec(n, scs)?,
        dvec(n, sds),
        types(sts),
        r as *mut u8,
        rcounts,
        rdispls,
        rtypes,
    )
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
    let res = alltoallw_req(g.me, comm, s, scs, sds, sts, r, rcs, rds, rts).map(|id| {
        rt::wait(g.me, id, "MPI_Alltoallw");
    });
    result(g.me, comm, "MPI_Alltoallw", res)
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
        let c = view(me, comm)?;
        nbc::ireduce_scatter(c, s as *const u8, r as *mut u8, ivec(c.size, rcs)?, dt, op)
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
        let c = view(me, comm)?;
        nbc::ireduce_scatter(
            c,
            s as *const u8,
            r as *mut u8,
            vec![nonneg(rc)?; c.size as usize],
            dt,
            op,
        )
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
    nb!("MPI_Iscan", comm, req, |me| nbc::iscan(
        view(me, comm)?,
        s as *const u8,
        r as *mut u8,
        nonneg(count)?,
        dt,
        op,
        false
    ))
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
    nb!("MPI_Iexscan", comm, req, |me| nbc::iscan(
        view(me, comm)?,
        s as *const u8,
        r as *mut u8,
        nonneg(count)?,
        dt,
        op,
        true
    ))
}

// ------------------------------------------------------------------ groups

fn group_of(me: u32, h: c_int) -> MpiResult<rt::Group> {
    with_world(|w| {
        w.ranks[me as usize]
            .groups
            .get(h.max(0) as usize)
            .and_then(|g| g.clone())
            .ok_or_else(|| mpi_err(rt::MPI_ERR_GROUP, format!("invalid group handle {h}")))
    })
}

fn add_group(me: u32, g: Vec<u32>) -> c_int {
    if g.is_empty() {
        return 1; // MPI_GROUP_EMPTY
    }
    with_world(|w| {
        let gs = &mut w.ranks[me as usize].groups;
        gs.push(Some(Rc::new(g)));
        (gs.len() - 1) as c_int
    })
}

unsafe fn group_result(me: u32, r: MpiResult<Vec<u32>>, new: *mut c_int) -> c_int {
    match r {
        Ok(g) => {
            set(new, add_group(me, g));
            MPI_SUCCESS
        }
        Err(e) => e.code,
    }
}

unsafe fn ranges(n: c_int, r: *const [c_int; 3], size: usize) -> MpiResult<Vec<usize>> {
    let mut out = Vec::new();
    for i in 0..n.max(0) as usize {
        let [first, last, stride] = *r.add(i);
        if stride == 0 {
            return Err(mpi_err(rt::MPI_ERR_ARG, "zero stride in a rank range"));
        }
        let mut x = first;
        while (stride > 0 && x <= last) || (stride < 0 && x >= last) {
            if x < 0 || x as usize >= size {
                return Err(mpi_err(rt::MPI_ERR_RANK, format!("rank {x} out of range")));
            }
            out.push(x as usize);
            x += stride;
        }
    }
    Ok(out)
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Group_range_incl(
    group: c_int,
    n: c_int,
    r: *const [c_int; 3],
    new: *mut c_int,
) -> c_int {
    let me = rt::current_rank();
    let res =
        group_of(me, group).and_then(|g| Ok(ranges(n, r, g.len())?.into_iter().map(|i| g[i]).collect()));
    group_result(me, res, new)
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Group_range_excl(
    group: c_int,
    n: c_int,
    r: *const [c_int; 3],
    new: *mut c_int,
) -> c_int {
    let me = rt::current_rank();
    let res = group_of(me, group).and_then(|g| {
        let ex = ranges(n, r, g.len())?;
        Ok(g.iter()
            .enumerate()
            .filter(|(i, _)| !ex.contains(i))
            .map(|(_, &x)| x)
            .collect())
    });
    group_result(me, res, new)
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Group_union(a: c_int, b: c_int, new: *mut c_int) -> c_int {
    let me = rt::current_rank();
    let res = group_of(me, a).and_then(|ga| {
        let gb = group_of(me, b)?;
        let mut v = ga.as_ref().clone();
        v.extend(gb.iter().filter(|x| !ga.contains(x)));
        Ok(v)
    });
    group_result(me, res, new)
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Group_intersection(a: c_int, b: c_int, new: *mut c_int) -> c_int {
    let me = rt::current_rank();
    let res = group_of(me, a).and_then(|ga| {
        let gb = group_of(me, b)?;
        Ok(ga.iter().filter(|x| gb.contains(x)).copied().collect())
    });
    group_result(me, res, new)
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Group_difference(a: c_int, b: c_int, new: *mut c_int) -> c_int {
    let me = rt::current_rank();
    let res = group_of(me, a).and_then(|ga| {
        let gb = group_of(me, b)?;
        Ok(ga.iter().filter(|x| !gb.contains(x)).copied().collect())
    });
    group_result(me, res, new)
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Group_compare(a: c_int, b: c_int, res: *mut c_int) -> c_int {
    let me = rt::current_rank();
    match (group_of(me, a), group_of(me, b)) {
        (Ok(ga), Ok(gb)) => {
            let v = if ga == gb {
                0
            } else {
                let (mut x, mut y) = (ga.as_ref().clone(), gb.as_ref().clone());
                x.sort();
                y.sort();
                if x == y {
                    2
                } else {
                    3
                }
            };
            set(res, v);
            MPI_SUCCESS
        }
        _ => rt::MPI_ERR_GROUP,
    }
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_remote_size(comm: c_int, size: *mut c_int) -> c_int {
    let me = rt::current_rank();
    match with_world(|w| {
        w.ranks[me as usize]
            .comm(comm)
            .map(|c| c.shared.remote.as_ref().map(|r| r.len()))
    }) {
        Ok(Some(n)) => {
            set(size, n as c_int);
            MPI_SUCCESS
        }
        Ok(None) => entry::handle_error(
            me,
            comm,
            "MPI_Comm_remote_size",
            mpi_err(rt::MPI_ERR_COMM, "not an intercommunicator"),
        ),
        Err(e) => entry::handle_error(me, comm, "MPI_Comm_remote_size", e),
    }
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_remote_group(comm: c_int, group: *mut c_int) -> c_int {
    let me = rt::current_rank();
    match with_world(|w| w.ranks[me as usize].comm(comm).map(|c| c.shared.remote.clone())) {
        Ok(Some(g)) => {
            set(group, add_group(me, g.as_ref().clone()));
            MPI_SUCCESS
        }
        Ok(None) => entry::handle_error(
            me,
            comm,
            "MPI_Comm_remote_group",
            mpi_err(rt::MPI_ERR_COMM, "not an intercommunicator"),
        ),
        Err(e) => entry::handle_error(me, comm, "MPI_Comm_remote_group", e),
    }
}

// ------------------------------------------------------------------ communicators

fn new_entry(shared: CommShared, my_rank: i32, errh: i32) -> CommEntry {
    CommEntry {
        shared: Rc::new(shared),
        my_rank,
        errhandler: errh,
        name: String::new(),
        attrs: Default::default(),
        creations: 0,
        cart: None,
    }
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_split_type(
    comm: c_int,
    split_type: c_int,
    key: c_int,
    _info: c_int,
    new: *mut c_int,
) -> c_int {
    // MPI_COMM_TYPE_SHARED: ranks on the same simulated host.
    let me = rt::current_rank();
    let color = if split_type == MPI_UNDEFINED {
        MPI_UNDEFINED
    } else {
        with_world(|w| w.ranks[me as usize].host.0 as c_int)
    };
    crate::abi::MPI_Comm_split(comm, color, key, new)
}

/// Intercommunicator context pairs are allocated by the lower leader and
/// exchanged; both groups then know the remote group's world ranks.
#[no_mangle]
pub unsafe extern "C" fn MPI_Intercomm_create(
    local: c_int,
    local_leader: c_int,
    peer: c_int,
    remote_leader: c_int,
    tag: c_int,
    new: *mut c_int,
) -> c_int {
    let g = enter();
    let me = g.me;
    let r = (|| -> MpiResult<c_int> {
        let lc = CommView::new(me, local)?;
        let (local_group, errh) = with_world(|w| {
            w.ranks[me as usize]
                .comm(local)
                .map(|c| (c.shared.group.clone(), c.errhandler))
        })?;
        // Leaders exchange (context proposal, group size, group) over the peer communicator.
        let mut info = [0i32; 2];
        let mut remote: Vec<i32> = Vec::new();
        if lc.rank == local_leader {
            let pc = CommView::new(me, peer)?;
            let my_world = me as i32;
            let ctx = with_world(|w| {
                let c = w.next_context;
                w.next_context += 2;
                c
            });
            let mine = [ctx as i32, local_group.len() as i32, my_world];
            let mut theirs = [0i32; 3];
            rt::sendrecv(
                me,
                &rt::P2p {
                    buf: mine.as_ptr() as *mut u8,
                    count: 3,
                    dtype: 7,
                    peer: remote_leader,
                    tag,
                    comm: peer,
                    coll: false,
                },
                &rt::P2p {
                    buf: theirs.as_mut_ptr() as *mut u8,
                    count: 3,
                    dtype: 7,
                    peer: remote_leader,
                    tag,
                    comm: peer,
                    coll: false,
                },
            )?;
            let lg: Vec<i32> = local_group.iter().map(|&x| x as i32).collect();
            remote = vec![0; theirs[1] as usize];
            rt::sendrecv(
                me,
                &rt::P2p {
                    buf: lg.as_ptr() as *mut u8,
                    count: lg.len(),
                    dtype: 7,
                    peer: remote_leader,
                    tag,
                    comm: peer,
                    coll: false,
                },
                &rt::P2p {
                    buf: remote.as_mut_ptr() as *mut u8,
                    count: remote.len(),
                    dtype: 7,
                    peer: remote_leader,
                    tag,
                    comm: peer,
                    coll: false,
                },
            )?;
            // The leader with the lower world rank's proposal wins.
            info = [if my_world < theirs[2] { mine[0] } else { theirs[0] }, theirs[1]];
            let _ = pc;
        }
        coll::bcast(lc, info.as_mut_ptr() as *mut u8, 2, 7, local_leader)?;
        if lc.rank != local_leader {
            remote = vec![0; info[1] as usize];
        }
        coll::bcast(lc, remote.as_mut_ptr() as *mut u8, remote.len(), 7, local_leader)?;
        let shared = CommShared {
            context: info[0] as u32,
            group: local_group.clone(),
            remote: Some(Rc::new(remote.iter().map(|&x| x as u32).collect())),
        };
        let entry = new_entry(shared, lc.rank, errh);
        Ok(with_world(|w| w.ranks[me as usize].add_comm(entry)))
    })();
    match r {
        Ok(h) => {
            set(new, h);
            MPI_SUCCESS
        }
        Err(e) => entry::handle_error(me, local, "MPI_Intercomm_create", e),
    }
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Intercomm_merge(inter: c_int, high: c_int, new: *mut c_int) -> c_int {
    let g = enter();
    let me = g.me;
    let r = (|| -> MpiResult<c_int> {
        let (shared, my_rank, errh, creation) = with_world(|w| {
            let c = w.ranks[me as usize].comm_mut(inter)?;
            let cr = c.creations;
            c.creations += 1;
            Ok::<_, rt::MpiError>((c.shared.clone(), c.my_rank, c.errhandler, cr))
        })?;
        let remote = shared
            .remote
            .clone()
            .ok_or_else(|| mpi_err(rt::MPI_ERR_COMM, "not an intercommunicator"))?;
        // Exchange the `high` flags: every rank sends its flag to remote rank 0
        // of... simpler and exact: all-to-all of flags between the two groups' rank 0s.
        let flag = [high != 0];
        let mut other = [0i32; 1];
        let mine_i = [flag[0] as i32];
        if my_rank == 0 {
            rt::sendrecv(
                me,
                &rt::P2p {
                    buf: mine_i.as_ptr() as *mut u8,
                    count: 1,
                    dtype: 7,
                    peer: 0,
                    tag: 7777,
                    comm: inter,
                    coll: true,
                },
                &rt::P2p {
                    buf: other.as_mut_ptr() as *mut u8,
                    count: 1,
                    dtype: 7,
                    peer: 0,
                    tag: 7777,
                    comm: inter,
                    coll: true,
                },
            )?;
        }
        // Share the remote flag inside the local group through a temporary local communicator.
        let local_ctx = with_world(|w| w.agree_context(shared.context, creation, i32::MAX - 1));
        let local_entry = new_entry(
            CommShared {
                context: local_ctx,
                group: shared.group.clone(),
                remote: None,
            },
            my_rank,
            errh,
        );
        let lh = with_world(|w| w.ranks[me as usize].add_comm(local_entry));
        coll::bcast(CommView::new(me, lh)?, other.as_mut_ptr() as *mut u8, 1, 7, 0)?;
        let mut mine0 = mine_i;
        coll::bcast(CommView::new(me, lh)?, mine0.as_mut_ptr() as *mut u8, 1, 7, 0)?;
        with_world(|w| w.ranks[me as usize].comms[lh as usize] = None);
        let (my_high, their_high) = (mine0[0] != 0, other[0] != 0);
        let local_first = if my_high == their_high {
            shared.group[0] < remote[0]
        } else {
            !my_high
        };
        let mut group: Vec<u32> = Vec::new();
        if local_first {
            group.extend(shared.group.iter());
            group.extend(remote.iter());
        } else {
            group.extend(remote.iter());
            group.extend(shared.group.iter());
        }
        let pos = group.iter().position(|&x| x == me).expect("member") as i32;
        let ctx = with_world(|w| w.agree_context(shared.context, creation, i32::MAX));
        let entry = new_entry(
            CommShared {
                context: ctx,
                group: Rc::new(group),
                remote: None,
            },
            pos,
            errh,
        );
        Ok(with_world(|w| w.ranks[me as usize].add_comm(entry)))
    })();
    match r {
        Ok(h) => {
            set(new, h);
            MPI_SUCCESS
        }
        Err(e) => entry::handle_error(me, inter, "MPI_Intercomm_merge", e),
    }
}

// ------------------------------------------------------------------ attributes

fn keyval_new(copy: usize, delete: usize, extra: usize) -> c_int {
    with_world(|w| {
        w.keyvals.push(Some((copy, delete, extra)));
        (w.keyvals.len() - 1 + 16) as c_int
    })
}

fn keyval(k: c_int) -> MpiResult<(usize, usize, usize)> {
    with_world(|w| {
        (k >= 16)
            .then(|| w.keyvals.get((k - 16) as usize).copied().flatten())
            .flatten()
            .ok_or_else(|| mpi_err(rt::MPI_ERR_KEYVAL, format!("invalid keyval {k}")))
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_create_keyval(
    copy: usize,
    delete: usize,
    key: *mut c_int,
    extra: *mut c_void,
) -> c_int {
    set(key, keyval_new(copy, delete, extra as usize));
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Keyval_create(
    copy: usize,
    delete: usize,
    key: *mut c_int,
    extra: *mut c_void,
) -> c_int {
    MPI_Comm_create_keyval(copy, delete, key, extra)
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_free_keyval(key: *mut c_int) -> c_int {
    if keyval(*key).is_err() {
        return rt::MPI_ERR_KEYVAL;
    }
    // Attributes already attached keep their callbacks; the keyval id is not reused.
    *key = -1;
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Keyval_free(key: *mut c_int) -> c_int {
    MPI_Comm_free_keyval(key)
}

type DeleteFn = unsafe extern "C" fn(c_int, c_int, *mut c_void, *mut c_void) -> c_int;
type CopyFn = unsafe extern "C" fn(c_int, c_int, *mut c_void, *mut c_void, *mut c_void, *mut c_int) -> c_int;

unsafe fn delete_attr(me: u32, comm: c_int, key: c_int) -> MpiResult<()> {
    let old = with_world(|w| w.ranks[me as usize].comm_mut(comm).map(|c| c.attrs.remove(&key)))?;
    if let Some(v) = old {
        let (_, del, extra) = keyval(key)?;
        if del != 0 {
            let f: DeleteFn = std::mem::transmute(del);
            let rc = f(comm, key, v as *mut c_void, extra as *mut c_void);
            if rc != MPI_SUCCESS {
                // Put it back: a failing delete callback keeps the attribute.
                with_world(|w| {
                    w.ranks[me as usize]
                        .comm_mut(comm)
                        .map(|c| c.attrs.insert(key, v))
                })?;
                return Err(mpi_err(rc, "attribute delete callback failed"));
            }
        }
    }
    Ok(())
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_set_attr(comm: c_int, key: c_int, val: *mut c_void) -> c_int {
    let me = rt::current_rank();
    let r = keyval(key).and_then(|_| {
        delete_attr(me, comm, key)?;
        with_world(|w| {
            w.ranks[me as usize]
                .comm_mut(comm)
                .map(|c| c.attrs.insert(key, val as usize))
        })?;
        Ok(())
    });
    result(me, comm, "MPI_Comm_set_attr", r)
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Attr_put(comm: c_int, key: c_int, val: *mut c_void) -> c_int {
    MPI_Comm_set_attr(comm, key, val)
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_delete_attr(comm: c_int, key: c_int) -> c_int {
    let me = rt::current_rank();
    let r = keyval(key).and_then(|_| delete_attr(me, comm, key));
    result(me, comm, "MPI_Comm_delete_attr", r)
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Attr_delete(comm: c_int, key: c_int) -> c_int {
    MPI_Comm_delete_attr(comm, key)
}

/// Copies attributes from `old` to `new` through their copy callbacks (Comm_dup).
pub unsafe fn copy_attrs(me: u32, old: c_int, new: c_int) -> MpiResult<()> {
    let attrs: Vec<(i32, usize)> = with_world(|w| {
        w.ranks[me as usize]
            .comm(old)
            .map(|c| c.attrs.iter().map(|(k, v)| (*k, *v)).collect())
    })?;
    for (k, v) in attrs {
        let Ok((copy, _, extra)) = keyval(k) else { continue };
        if copy == 0 {
            continue;
        }
        let f: CopyFn = std::mem::transmute(copy);
        let mut out: *mut c_void = std::ptr::null_mut();
        let mut flag: c_int = 0;
        let rc = f(
            old,
            k,
            extra as *mut c_void,
            v as *mut c_void,
            (&mut out as *mut *mut c_void).cast(),
            &mut flag,
        );
        if rc != MPI_SUCCESS {
            return Err(mpi_err(rc, "attribute copy callback failed"));
        }
        if flag != 0 {
            with_world(|w| {
                w.ranks[me as usize]
                    .comm_mut(new)
                    .map(|c| c.attrs.insert(k, out as usize))
            })?;
        }
    }
    Ok(())
}

/// Runs the delete callbacks of every attribute of `comm` (Comm_free).
pub unsafe fn delete_all_attrs(me: u32, comm: c_int) -> MpiResult<()> {
    let keys: Vec<i32> = with_world(|w| {
        w.ranks[me as usize]
            .comm(comm)
            .map(|c| c.attrs.keys().copied().collect())
    })?;
    for k in keys {
        delete_attr(me, comm, k)?;
    }
    Ok(())
}

// ------------------------------------------------------------------ Cartesian topologies

fn cart_of(me: u32, comm: c_int) -> MpiResult<(Cart, i32)> {
    with_world(|w| {
        let c = w.ranks[me as usize].comm(comm)?;
        c.cart
            .clone()
            .map(|k| (k, c.my_rank))
            .ok_or_else(|| mpi_err(11, "communicator has no Cartesian topology"))
    })
}

fn coords_of(cart: &Cart, mut rank: i32) -> Vec<i32> {
    let mut c = vec![0; cart.dims.len()];
    for i in (0..cart.dims.len()).rev() {
        c[i] = rank % cart.dims[i];
        rank /= cart.dims[i];
    }
    c
}

fn rank_of(cart: &Cart, coords: &[i32]) -> Option<i32> {
    let mut r = 0;
    for (i, &d) in cart.dims.iter().enumerate() {
        let mut x = coords[i];
        if cart.periods[i] {
            x = x.rem_euclid(d);
        } else if x < 0 || x >= d {
            return None;
        }
        r = r * d + x;
    }
    Some(r)
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Cart_create(
    comm: c_int,
    ndims: c_int,
    dims: *const c_int,
    periods: *const c_int,
    _reorder: c_int,
    new: *mut c_int,
) -> c_int {
    let g = enter();
    let nd = ndims.max(0) as usize;
    let d: Vec<i32> = (0..nd).map(|i| *dims.add(i)).collect();
    let p: Vec<bool> = (0..nd).map(|i| *periods.add(i) != 0).collect();
    let total: i64 = d.iter().map(|&x| x as i64).product();
    let size = match CommView::new(g.me, comm) {
        Ok(c) => c.size,
        Err(e) => return entry::handle_error(g.me, comm, "MPI_Cart_create", e),
    };
    if d.iter().any(|&x| x <= 0) || total > size as i64 {
        return entry::handle_error(
            g.me,
            comm,
            "MPI_Cart_create",
            mpi_err(12, format!("dims {d:?} do not fit {size} ranks")),
        );
    }
    let group: Option<Vec<u32>> = with_world(|w| {
        w.ranks[g.me as usize]
            .comm(comm)
            .ok()
            .map(|c| c.shared.group[..total as usize].to_vec())
    });
    match crate::abi::derive_comm(g.me, comm, -7, group) {
        Ok(h) => {
            if h != MPI_COMM_NULL {
                with_world(|w| {
                    if let Ok(c) = w.ranks[g.me as usize].comm_mut(h) {
                        c.cart = Some(Cart { dims: d, periods: p });
                    }
                });
            }
            set(new, h);
            MPI_SUCCESS
        }
        Err(e) => entry::handle_error(g.me, comm, "MPI_Cart_create", e),
    }
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Cartdim_get(comm: c_int, ndims: *mut c_int) -> c_int {
    match cart_of(rt::current_rank(), comm) {
        Ok((c, _)) => {
            set(ndims, c.dims.len() as c_int);
            MPI_SUCCESS
        }
        Err(e) => e.code,
    }
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Cart_get(
    comm: c_int,
    maxdims: c_int,
    dims: *mut c_int,
    periods: *mut c_int,
    coords: *mut c_int,
) -> c_int {
    match cart_of(rt::current_rank(), comm) {
        Ok((c, me)) => {
            let co = coords_of(&c, me);
            for (i, x) in co.iter().enumerate().take(maxdims.max(0) as usize) {
                set(dims.add(i), c.dims[i]);
                set(periods.add(i), c.periods[i] as c_int);
                set(coords.add(i), *x);
            }
            MPI_SUCCESS
        }
        Err(e) => e.code,
    }
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Cart_coords(
    comm: c_int,
    rank: c_int,
    maxdims: c_int,
    coords: *mut c_int,
) -> c_int {
    match cart_of(rt::current_rank(), comm) {
        Ok((c, _)) => {
            let co = coords_of(&c, rank);
            for (i, x) in co.iter().enumerate().take(maxdims.max(0) as usize) {
                *coords.add(i) = *x;
            }
            MPI_SUCCESS
        }
        Err(e) => e.code,
    }
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Cart_rank(comm: c_int, coords: *const c_int, rank: *mut c_int) -> c_int {
    match cart_of(rt::current_rank(), comm) {
        Ok((c, _)) => {
            let co: Vec<i32> = (0..c.dims.len()).map(|i| *coords.add(i)).collect();
            match rank_of(&c, &co) {
                Some(r) => {
                    set(rank, r);
                    MPI_SUCCESS
                }
                None => rt::MPI_ERR_ARG,
            }
        }
        Err(e) => e.code,
    }
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Cart_shift(
    comm: c_int,
    dir: c_int,
    disp: c_int,
    src: *mut c_int,
    dst: *mut c_int,
) -> c_int {
    match cart_of(rt::current_rank(), comm) {
        Ok((c, me)) => {
            let d = dir as usize;
            if d >= c.dims.len() {
                return 12;
            }
            let co = coords_of(&c, me);
            let mut up = co.clone();
            up[d] += disp;
            let mut down = co;
            down[d] -= disp;
            set(dst, rank_of(&c, &up).unwrap_or(rt::MPI_PROC_NULL));
            set(src, rank_of(&c, &down).unwrap_or(rt::MPI_PROC_NULL));
            MPI_SUCCESS
        }
        Err(e) => e.code,
    }
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Cart_sub(comm: c_int, remain: *const c_int, new: *mut c_int) -> c_int {
    let g = enter();
    let (c, me) = match cart_of(g.me, comm) {
        Ok(x) => x,
        Err(e) => return entry::handle_error(g.me, comm, "MPI_Cart_sub", e),
    };
    let keep: Vec<bool> = (0..c.dims.len()).map(|i| *remain.add(i) != 0).collect();
    let co = coords_of(&c, me);
    // Color: coordinates along dropped dimensions; key: along kept ones.
    let (mut color, mut key) = (0i32, 0i32);
    for i in 0..c.dims.len() {
        if keep[i] {
            key = key * c.dims[i] + co[i];
        } else {
            color = color * c.dims[i] + co[i];
        }
    }
    let rc = crate::abi::MPI_Comm_split(comm, color, key, new);
    if rc == MPI_SUCCESS && *new != MPI_COMM_NULL {
        let dims: Vec<i32> = (0..c.dims.len())
            .filter(|&i| keep[i])
            .map(|i| c.dims[i])
            .collect();
        let periods: Vec<bool> = (0..c.dims.len())
            .filter(|&i| keep[i])
            .map(|i| c.periods[i])
            .collect();
        let h = *new;
        with_world(|w| {
            if let Ok(e) = w.ranks[g.me as usize].comm_mut(h) {
                e.cart = Some(Cart { dims, periods });
            }
        });
    }
    rc
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Topo_test(comm: c_int, status: *mut c_int) -> c_int {
    let me = rt::current_rank();
    match with_world(|w| w.ranks[me as usize].comm(comm).map(|c| c.cart.is_some())) {
        Ok(true) => set(status, 2),
        Ok(false) => set(status, MPI_UNDEFINED),
        Err(e) => return e.code,
    }
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Dims_create(nnodes: c_int, ndims: c_int, dims: *mut c_int) -> c_int {
    let nd = ndims.max(0) as usize;
    let mut d: Vec<i32> = (0..nd).map(|i| *dims.add(i)).collect();
    let fixed: i32 = d.iter().filter(|&&x| x > 0).product();
    if d.iter().any(|&x| x < 0) || fixed == 0 || nnodes % fixed != 0 {
        return 12;
    }
    let free: Vec<usize> = (0..nd).filter(|&i| d[i] == 0).collect();
    let mut rest = nnodes / fixed;
    // Prime factors, largest first, each given to the currently smallest free dimension.
    let mut factors = Vec::new();
    let mut f = 2;
    while rest > 1 {
        while rest % f == 0 {
            factors.push(f);
            rest /= f;
        }
        f += 1;
    }
    factors.sort_unstable_by(|a, b| b.cmp(a));
    let mut vals = vec![1i32; free.len()];
    if !free.is_empty() {
        for p in factors {
            let i = (0..vals.len()).min_by_key(|&i| vals[i]).expect("non-empty");
            vals[i] *= p;
        }
    } else if nnodes != fixed {
        return 12;
    }
    vals.sort_unstable_by(|a, b| b.cmp(a));
    for (k, &i) in free.iter().enumerate() {
        d[i] = vals[k];
    }
    for (i, x) in d.iter().enumerate() {
        *dims.add(i) = *x;
    }
    MPI_SUCCESS
}

// ------------------------------------------------------------------ datatype introspection

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_get_envelope(
    dt: c_int,
    ni: *mut c_int,
    na: *mut c_int,
    nd: *mut c_int,
    combiner: *mut c_int,
) -> c_int {
    match with_world(|w| w.dtype(dt)) {
        Ok(d) => {
            set(ni, 0);
            set(na, 0);
            set(nd, 0);
            set(combiner, if d.predefined { 0 } else { d.combiner });
            MPI_SUCCESS
        }
        Err(e) => e.code,
    }
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_set_name(_dt: c_int, _name: *const c_char) -> c_int {
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_get_name(dt: c_int, name: *mut c_char, len: *mut c_int) -> c_int {
    match with_world(|w| w.dtype(dt)) {
        Ok(d) => {
            let s = if d.predefined {
                d.name.clone()
            } else {
                String::new()
            };
            let n = s.len().min(127);
            if !name.is_null() {
                std::ptr::copy_nonoverlapping(s.as_ptr(), name as *mut u8, n);
                *name.add(n) = 0;
            }
            set(len, n as c_int);
            MPI_SUCCESS
        }
        Err(e) => e.code,
    }
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_size_x(dt: c_int, size: *mut i64) -> c_int {
    match with_world(|w| w.dtype(dt)) {
        Ok(d) => {
            set(size, d.size as i64);
            MPI_SUCCESS
        }
        Err(e) => e.code,
    }
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Get_elements_x(st: *const entry::CStatus, dt: c_int, count: *mut i64) -> c_int {
    let mut c: c_int = 0;
    let rc = crate::abi::MPI_Get_elements(st, dt, &mut c);
    set(count, c as i64);
    rc
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_idup(comm: c_int, new: *mut c_int, req: *mut c_int) -> c_int {
    let rc = crate::abi::MPI_Comm_dup(comm, new);
    set(req, 0);
    rc
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Info_create(info: *mut c_int) -> c_int {
    set(info, 1);
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Info_free(info: *mut c_int) -> c_int {
    set(info, 0);
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Info_set(_info: c_int, _k: *const c_char, _v: *const c_char) -> c_int {
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_set_info(_comm: c_int, _info: c_int) -> c_int {
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Add_error_string(_code: c_int, _s: *const c_char) -> c_int {
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_dup_with_info(comm: c_int, _info: c_int, new: *mut c_int) -> c_int {
    crate::abi::MPI_Comm_dup(comm, new)
}

// ------------------------------------------------------------------ more communicators and p2p

/// (rank, parent context, group, tag) of an MPI_Comm_create_group call.
type CreateGroupKey = (u32, u32, Vec<u32>, i32);

thread_local! {
    /// Per rank: how many MPI_Comm_create_group calls were made with a given
    /// (parent context, group, tag), so repeated calls get distinct contexts.
    static CREATE_GROUP_SEQ: std::cell::RefCell<std::collections::HashMap<CreateGroupKey, u64>> =
        std::cell::RefCell::new(std::collections::HashMap::new());
}

/// MPI_Comm_create_group: collective over the group's members only.
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_create_group(
    comm: c_int,
    group: c_int,
    tag: c_int,
    new: *mut c_int,
) -> c_int {
    let g = enter();
    let me = g.me;
    let r = (|| -> MpiResult<c_int> {
        let grp = group_of(me, group)?;
        let (pctx, errh) = with_world(|w| {
            w.ranks[me as usize]
                .comm(comm)
                .map(|c| (c.shared.context, c.errhandler))
        })?;
        let Some(pos) = grp.iter().position(|&x| x == me) else {
            return Ok(MPI_COMM_NULL);
        };
        let seq = CREATE_GROUP_SEQ.with(|m| {
            let mut m = m.borrow_mut();
            let e = m.entry((me, pctx, grp.as_ref().clone(), tag)).or_insert(0);
            *e += 1;
            *e
        });
        // Same key on every member: parent context, a hash of the group, the tag and the call number.
        let mut h: u64 = 1469598103934665603;
        for &x in grp.iter() {
            h = (h ^ u64::from(x)).wrapping_mul(1099511628211);
        }
        let ctx = with_world(|w| w.agree_context(pctx ^ 0x4000_0000, h ^ (seq << 40), tag));
        let entry = new_entry(
            CommShared {
                context: ctx,
                group: grp.clone(),
                remote: None,
            },
            pos as i32,
            errh,
        );
        Ok(with_world(|w| w.ranks[me as usize].add_comm(entry)))
    })();
    match r {
        Ok(h) => {
            set(new, h);
            MPI_SUCCESS
        }
        Err(e) => entry::handle_error(me, comm, "MPI_Comm_create_group", e),
    }
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_idup_with_info(
    comm: c_int,
    _info: c_int,
    new: *mut c_int,
    req: *mut c_int,
) -> c_int {
    MPI_Comm_idup(comm, new, req)
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_get_info(_comm: c_int, info: *mut c_int) -> c_int {
    set(info, 1);
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Info_get(
    _info: c_int,
    _key: *const c_char,
    _len: c_int,
    _value: *mut c_char,
    flag: *mut c_int,
) -> c_int {
    set(flag, 0);
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Info_get_nkeys(_info: c_int, n: *mut c_int) -> c_int {
    set(n, 0);
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Info_dup(_info: c_int, new: *mut c_int) -> c_int {
    set(new, 1);
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Info_delete(_info: c_int, _key: *const c_char) -> c_int {
    MPI_SUCCESS
}

/// MPI_Isendrecv: a receive and a send, completed together.
#[no_mangle]
pub unsafe extern "C" fn MPI_Isendrecv(
    sbuf: *const c_void,
    scount: c_int,
    stype: c_int,
    dst: c_int,
    stag: c_int,
    rbuf: *mut c_void,
    rcount: c_int,
    rtype: c_int,
    src: c_int,
    rtag: c_int,
    comm: c_int,
    req: *mut c_int,
) -> c_int {
    nb!("MPI_Isendrecv", comm, req, |me| {
        let (sc, rc) = (nonneg(scount)?, nonneg(rcount)?);
        let s = rt::P2p {
            buf: sbuf as *mut u8,
            count: sc,
            dtype: stype,
            peer: dst,
            tag: stag,
            comm,
            coll: false,
        };
        let r = rt::P2p {
            buf: rbuf as *mut u8,
            count: rc,
            dtype: rtype,
            peer: src,
            tag: rtag,
            comm,
            coll: false,
        };
        let stage: rt::Stage = Box::new(move || {
            let rid = rt::irecv(me, &r)?;
            let sid = rt::isend(me, &s, rt::SendMode::Standard, true)?;
            Ok(vec![rid, sid])
        });
        rt::start_coll(me, comm, vec![stage])
    })
}

/// MPI_Isendrecv_replace: the send goes from a copy of the buffer.
#[no_mangle]
pub unsafe extern "C" fn MPI_Isendrecv_replace(
    buf: *mut c_void,
    count: c_int,
    dt: c_int,
    dst: c_int,
    stag: c_int,
    src: c_int,
    rtag: c_int,
    comm: c_int,
    req: *mut c_int,
) -> c_int {
    nb!("MPI_Isendrecv_replace", comm, req, |me| {
        let n = nonneg(count)?;
        let d = with_world(|w| w.dtype(dt))?;
        let mut copy = coll::TempBuf::new(&d, n);
        coll::local_copy(buf as *const u8, n, dt, copy.ptr(), n, dt)?;
        let keep = Rc::new(std::cell::RefCell::new(copy));
        let k2 = keep.clone();
        let stage: rt::Stage = Box::new(move || {
            let p = k2.borrow_mut().ptr();
            let s = rt::P2p {
                buf: p,
                count: n,
                dtype: dt,
                peer: dst,
                tag: stag,
                comm,
                coll: false,
            };
            let r = rt::P2p {
                buf: buf as *mut u8,
                count: n,
                dtype: dt,
                peer: src,
                tag: rtag,
                comm,
                coll: false,
            };
            let rid = rt::irecv(me, &r)?;
            let sid = rt::isend(me, &s, rt::SendMode::Standard, true)?;
            Ok(vec![rid, sid])
        });
        let hold: rt::Stage = Box::new(move || {
            drop(keep);
            Ok(vec![])
        });
        rt::start_coll(me, comm, vec![stage, hold])
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Bsend_init(
    buf: *const c_void,
    count: c_int,
    dt: c_int,
    dst: c_int,
    tag: c_int,
    comm: c_int,
    req: *mut c_int,
) -> c_int {
    crate::abi::MPI_Send_init(buf, count, dt, dst, tag, comm, req)
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Rsend_init(
    buf: *const c_void,
    count: c_int,
    dt: c_int,
    dst: c_int,
    tag: c_int,
    comm: c_int,
    req: *mut c_int,
) -> c_int {
    crate::abi::MPI_Send_init(buf, count, dt, dst, tag, comm, req)
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Status_set_cancelled(st: *mut entry::CStatus, flag: c_int) -> c_int {
    if !st.is_null() {
        (*st).cancelled = flag;
    }
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Status_set_elements(st: *mut entry::CStatus, dt: c_int, count: c_int) -> c_int {
    MPI_Status_set_elements_x(st, dt, count as i64)
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Status_set_elements_x(st: *mut entry::CStatus, dt: c_int, count: i64) -> c_int {
    match with_world(|w| w.dtype(dt)) {
        Ok(d) => {
            if !st.is_null() {
                let per = d.size.checked_div(d.basic_count).unwrap_or(d.size);
                (*st).count = count * per as i64;
            }
            MPI_SUCCESS
        }
        Err(e) => e.code,
    }
}

// ------------------------------------------------------------------ datatype attributes

thread_local! {
    static TYPE_ATTRS: std::cell::RefCell<std::collections::HashMap<(u32, i32, i32), usize>> =
        std::cell::RefCell::new(std::collections::HashMap::new());
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_create_keyval(
    copy: usize,
    delete: usize,
    key: *mut c_int,
    extra: *mut c_void,
) -> c_int {
    set(key, keyval_new(copy, delete, extra as usize));
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_free_keyval(key: *mut c_int) -> c_int {
    MPI_Comm_free_keyval(key)
}

type TypeDeleteFn = unsafe extern "C" fn(c_int, c_int, *mut c_void, *mut c_void) -> c_int;

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_delete_attr(dt: c_int, key: c_int) -> c_int {
    let me = rt::current_rank();
    let Ok((_, del, extra)) = keyval(key) else {
        return rt::MPI_ERR_KEYVAL;
    };
    let old = TYPE_ATTRS.with(|m| m.borrow_mut().remove(&(me, dt, key)));
    if let (Some(v), true) = (old, del != 0) {
        let f: TypeDeleteFn = std::mem::transmute(del);
        return f(dt, key, v as *mut c_void, extra as *mut c_void);
    }
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_set_attr(dt: c_int, key: c_int, val: *mut c_void) -> c_int {
    let me = rt::current_rank();
    if keyval(key).is_err() {
        return rt::MPI_ERR_KEYVAL;
    }
    let rc = MPI_Type_delete_attr(dt, key);
    if rc != MPI_SUCCESS {
        return rc;
    }
    TYPE_ATTRS.with(|m| m.borrow_mut().insert((me, dt, key), val as usize));
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_get_attr(
    dt: c_int,
    key: c_int,
    val: *mut c_void,
    flag: *mut c_int,
) -> c_int {
    let me = rt::current_rank();
    if keyval(key).is_err() {
        return rt::MPI_ERR_KEYVAL;
    }
    match TYPE_ATTRS.with(|m| m.borrow().get(&(me, dt, key)).copied()) {
        Some(v) => {
            *(val as *mut usize) = v;
            set(flag, 1);
        }
        None => set(flag, 0),
    }
    MPI_SUCCESS
}

/// MPI_Comm_split on an intercommunicator: the result pairs, for each color,
/// the local ranks of that color with the remote ranks of that color.
pub fn split_intercomm(me: u32, comm: c_int, color: c_int, key: c_int) -> MpiResult<c_int> {
    let (shared, my_rank, errh, creation) = with_world(|w| {
        let c = w.ranks[me as usize].comm_mut(comm)?;
        let cr = c.creations;
        c.creations += 1;
        Ok::<_, rt::MpiError>((c.shared.clone(), c.my_rank, c.errhandler, cr))
    })?;
    let remote = shared
        .remote
        .clone()
        .ok_or_else(|| mpi_err(rt::MPI_ERR_COMM, "not an intercommunicator"))?;
    // A temporary communicator over the local group, for the local exchanges.
    let local_ctx = with_world(|w| w.agree_context(shared.context, creation, i32::MAX - 2));
    let local = new_entry(
        CommShared {
            context: local_ctx,
            group: shared.group.clone(),
            remote: None,
        },
        my_rank,
        errh,
    );
    let lh = with_world(|w| w.ranks[me as usize].add_comm(local));
    let lc = CommView::new(me, lh)?;
    let mine = coll::allgather_i32_pairs(lc, [color, key])?;
    // Local leaders swap their groups' (color, key) tables over the intercommunicator.
    let mut theirs = vec![[0i32; 2]; remote.len()];
    if my_rank == 0 {
        rt::sendrecv(
            me,
            &rt::P2p {
                buf: mine.as_ptr() as *mut u8,
                count: 2 * mine.len(),
                dtype: 7,
                peer: 0,
                tag: 7778,
                comm,
                coll: true,
            },
            &rt::P2p {
                buf: theirs.as_mut_ptr() as *mut u8,
                count: 2 * theirs.len(),
                dtype: 7,
                peer: 0,
                tag: 7778,
                comm,
                coll: true,
            },
        )?;
    }
    coll::bcast(lc, theirs.as_mut_ptr() as *mut u8, 2 * theirs.len(), 7, 0)?;
    with_world(|w| w.ranks[me as usize].comms[lh as usize] = None);
    if color == MPI_UNDEFINED {
        return Ok(MPI_COMM_NULL);
    }
    let pick = |table: &[[i32; 2]], group: &[u32]| -> Vec<u32> {
        let mut m: Vec<(i32, usize)> = table
            .iter()
            .enumerate()
            .filter(|(_, p)| p[0] == color)
            .map(|(i, p)| (p[1], i))
            .collect();
        m.sort();
        m.iter().map(|&(_, i)| group[i]).collect()
    };
    let lgroup = pick(&mine, &shared.group);
    let rgroup = pick(&theirs, &remote);
    let pos = lgroup.iter().position(|&x| x == me).expect("member of its color") as i32;
    if rgroup.is_empty() {
        return Ok(MPI_COMM_NULL);
    }
    let ctx = with_world(|w| w.agree_context(shared.context, creation, color));
    let entry = new_entry(
        CommShared {
            context: ctx,
            group: Rc::new(lgroup),
            remote: Some(Rc::new(rgroup)),
        },
        pos,
        errh,
    );
    Ok(with_world(|w| w.ranks[me as usize].add_comm(entry)))
}

// ------------------------------------------------------------------ collectives on intercommunicators

/// One rank's view of an intercommunicator for collectives: flat exchanges
/// between the two groups on the collective context (peers are remote ranks).
#[derive(Clone, Copy)]
pub struct InterView {
    pub me: u32,
    pub comm: i32,
    pub rank: i32,
    pub rsize: i32,
}

const ITAG: i32 = 31;

impl InterView {
    /// `Some` when `comm` is an intercommunicator.
    pub fn of(me: u32, comm: i32) -> MpiResult<Option<InterView>> {
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
        for &r in reqs {
            rt::wait(self.me, r, "intercommunicator collective");
        }
    }
}

fn extent(dt: i32) -> MpiResult<isize> {
    with_world(|w| w.dtype(dt).map(|d| d.extent))
}

/// Barrier: each rank leaves once every rank of the other group has entered.
pub fn inter_barrier(v: InterView) -> MpiResult<()> {
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
pub fn inter_bcast(v: InterView, buf: *mut u8, count: usize, dt: i32, root: i32) -> MpiResult<()> {
    match root {
        rt::MPI_PROC_NULL => Ok(()),
        -3 => {
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
pub fn inter_reduce(
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
        -3 => gather_reduce(v, count, dt, op, rbuf),
        r => {
            let q = v.isend(sbuf, count, dt, r)?;
            v.waitall(&[q]);
            Ok(())
        }
    }
}

/// Allreduce: each group receives the reduction of the other group's data.
pub fn inter_allreduce(
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
pub fn inter_gatherv(
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
        -3 => {
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
pub fn inter_scatterv(
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
        -3 => {
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
pub fn inter_allgatherv(
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
pub fn inter_alltoallw(
    v: InterView,
    sbuf: *const u8,
    scounts: &[usize],
    sdispls: &[isize],
    stypes: &[i32],
    rbuf: *mut u8,
    rcounts: &[usize],
    rdispls: &[isize],
    rtypes: &[i32],
) -> MpiResult<()> {
    let mut reqs = Vec::new();
    for i in 0..v.rsize as usize {
        reqs.push(v.irecv(rbuf.wrapping_offset(rdispls[i]), rcounts[i], rtypes[i], i as i32)?);
    }
    for i in 0..v.rsize as usize {
        reqs.push(v.isend(sbuf.wrapping_offset(sdispls[i]), scounts[i], stypes[i], i as i32)?);
    }
    v.waitall(&reqs);
    Ok(())
}

/// Reduce_scatter: each rank gets its block of the reduction of the other
/// group's full vectors.
pub fn inter_reduce_scatter(
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
