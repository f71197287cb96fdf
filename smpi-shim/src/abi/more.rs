//! More of the MPI C ABI: group algebra, attributes and keyvals, Cartesian
//! topologies, intercommunicators and their blocking collectives, datatype
//! introspection. (Non-blocking collectives are in `abi_nbc.rs`.)
#![allow(non_snake_case, clippy::missing_safety_doc, clippy::too_many_arguments)]

use std::ffi::{c_char, c_int, c_void};
use std::rc::Rc;

use crate::coll::{self, CommView};
use crate::mpi::entry::{self, enter, result};
use crate::mpi::topo::{self, Cart, Topology};
use crate::mpi::{
    self as rt, mpi_err, with_world, CommEntry, CommShared, MpiResult, MPI_COMM_NULL, MPI_SUCCESS,
    MPI_UNDEFINED,
};

unsafe fn set<T>(p: *mut T, v: T) {
    if !p.is_null() {
        *p = v;
    }
}

fn nonneg(v: c_int) -> MpiResult<usize> {
    if v < 0 {
        Err(mpi_err(rt::MPI_ERR_COUNT, format!("negative count {v}")))
    } else {
        Ok(v as usize)
    }
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
        topo: None,
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
    // MPI_COMM_TYPE_SHARED: ranks on the same simulated host. The hardware
    // types (MPI_COMM_TYPE_HW_GUIDED / _UNGUIDED) may give MPI_COMM_NULL, as
    // in SMPI: a simulated host has no hardware hierarchy below it.
    const MPI_COMM_TYPE_SHARED: c_int = 1;
    let me = rt::current_rank();
    let color = if split_type == MPI_COMM_TYPE_SHARED {
        with_world(|w| w.ranks[me as usize].host.0 as c_int)
    } else {
        MPI_UNDEFINED
    };
    crate::abi::base::MPI_Comm_split(comm, color, key, new)
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
        ATTR_SET_ORDER.with(|o| {
            let mut o = o.borrow_mut();
            o.1 += 1;
            let seq = o.1;
            o.0.insert((me, comm, key), seq);
        });
        Ok(())
    });
    result(me, comm, "MPI_Comm_set_attr", r)
}

thread_local! {
    /// When each communicator attribute was last set, for the LIFO deletion
    /// MPI_Finalize does on MPI_COMM_SELF: ((rank, comm, keyval) -> sequence, next sequence).
    #[allow(clippy::type_complexity)]
    static ATTR_SET_ORDER: std::cell::RefCell<(std::collections::HashMap<(u32, i32, i32), u64>, u64)> =
        Default::default();
}

/// Runs the delete callbacks of all of `comm`'s attributes, the most recently
/// set first (what MPI_Finalize does to MPI_COMM_SELF before anything else).
pub unsafe fn delete_attrs_lifo(me: u32, comm: c_int) -> MpiResult<()> {
    let mut keys: Vec<(u64, i32)> = with_world(|w| {
        w.ranks[me as usize]
            .comm(comm)
            .map(|c| c.attrs.keys().copied().collect::<Vec<i32>>())
    })?
    .into_iter()
    .map(|k| {
        let seq = ATTR_SET_ORDER.with(|o| o.borrow().0.get(&(me, comm, k)).copied().unwrap_or(0));
        (seq, k)
    })
    .collect();
    keys.sort_unstable_by(|a, b| b.cmp(a));
    for (_, k) in keys {
        delete_attr(me, comm, k)?;
    }
    Ok(())
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

/// The Cartesian topology of `comm` and my rank in it.
fn cart_of(me: u32, comm: c_int) -> MpiResult<(Cart, i32)> {
    with_world(|w| {
        let c = w.ranks[me as usize].comm(comm)?;
        match c.topo.as_deref() {
            Some(Topology::Cart(k)) => Ok((k.clone(), c.my_rank)),
            _ => Err(mpi_err(
                topo::MPI_ERR_TOPOLOGY,
                "communicator has no Cartesian topology",
            )),
        }
    })
}

/// Attaches `topology` to my handle `h` (unless it is `MPI_COMM_NULL`).
pub(crate) fn attach_topology(me: u32, h: c_int, topology: Topology) {
    if h == MPI_COMM_NULL {
        return;
    }
    with_world(|w| {
        if let Ok(c) = w.ranks[me as usize].comm_mut(h) {
            c.topo = Some(Rc::new(topology));
        }
    });
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
    let r = (|| -> MpiResult<c_int> {
        if ndims < 0 {
            return Err(mpi_err(topo::MPI_ERR_DIMS, format!("negative ndims {ndims}")));
        }
        let nd = ndims as usize;
        let d: Vec<i32> = (0..nd).map(|i| *dims.add(i)).collect();
        let p: Vec<bool> = (0..nd).map(|i| *periods.add(i) != 0).collect();
        let total: i64 = d.iter().map(|&x| x as i64).product();
        let size = CommView::new(g.me, comm)?.size;
        if d.iter().any(|&x| x <= 0) || total > size as i64 {
            return Err(mpi_err(
                topo::MPI_ERR_DIMS,
                format!("dims {d:?} do not fit {size} ranks"),
            ));
        }
        let group: Option<Vec<u32>> = with_world(|w| {
            w.ranks[g.me as usize]
                .comm(comm)
                .ok()
                .map(|c| c.shared.group[..total as usize].to_vec())
        });
        let h = crate::abi::base::derive_comm(g.me, comm, -7, group)?;
        attach_topology(g.me, h, Topology::Cart(Cart { dims: d, periods: p }));
        Ok(h)
    })();
    match r {
        Ok(h) => {
            set(new, h);
            MPI_SUCCESS
        }
        Err(e) => entry::handle_error(g.me, comm, "MPI_Cart_create", e),
    }
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Cartdim_get(comm: c_int, ndims: *mut c_int) -> c_int {
    let me = rt::current_rank();
    match cart_of(me, comm) {
        Ok((c, _)) => {
            set(ndims, c.dims.len() as c_int);
            MPI_SUCCESS
        }
        Err(e) => entry::handle_error(me, comm, "MPI_Cartdim_get", e),
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
    let me = rt::current_rank();
    match cart_of(me, comm) {
        Ok((c, my)) => {
            let co = c.coords(my);
            for (i, x) in co.iter().enumerate().take(maxdims.max(0) as usize) {
                set(dims.add(i), c.dims[i]);
                set(periods.add(i), c.periods[i] as c_int);
                set(coords.add(i), *x);
            }
            MPI_SUCCESS
        }
        Err(e) => entry::handle_error(me, comm, "MPI_Cart_get", e),
    }
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Cart_coords(
    comm: c_int,
    rank: c_int,
    maxdims: c_int,
    coords: *mut c_int,
) -> c_int {
    let me = rt::current_rank();
    let r = cart_of(me, comm).and_then(|(c, _)| {
        if rank < 0 || rank >= c.size() {
            return Err(mpi_err(rt::MPI_ERR_RANK, format!("invalid rank {rank}")));
        }
        for (i, x) in c.coords(rank).iter().enumerate().take(maxdims.max(0) as usize) {
            *coords.add(i) = *x;
        }
        Ok(())
    });
    result(me, comm, "MPI_Cart_coords", r)
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Cart_rank(comm: c_int, coords: *const c_int, rank: *mut c_int) -> c_int {
    let me = rt::current_rank();
    let r = cart_of(me, comm).and_then(|(c, _)| {
        let co: Vec<i32> = (0..c.dims.len()).map(|i| *coords.add(i)).collect();
        let r = c
            .rank_of(&co)
            .ok_or_else(|| mpi_err(rt::MPI_ERR_ARG, format!("coordinates {co:?} outside the grid")))?;
        set(rank, r);
        Ok(())
    });
    result(me, comm, "MPI_Cart_rank", r)
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Cart_shift(
    comm: c_int,
    dir: c_int,
    disp: c_int,
    src: *mut c_int,
    dst: *mut c_int,
) -> c_int {
    let me = rt::current_rank();
    let r = cart_of(me, comm).and_then(|(c, my)| {
        if dir < 0 || dir as usize >= c.dims.len() {
            return Err(mpi_err(topo::MPI_ERR_DIMS, format!("invalid direction {dir}")));
        }
        let (s, d) = c.shift(my, dir as usize, disp);
        set(src, s);
        set(dst, d);
        Ok(())
    });
    result(me, comm, "MPI_Cart_shift", r)
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Cart_sub(comm: c_int, remain: *const c_int, new: *mut c_int) -> c_int {
    let g = enter();
    let (c, me) = match cart_of(g.me, comm) {
        Ok(x) => x,
        Err(e) => return entry::handle_error(g.me, comm, "MPI_Cart_sub", e),
    };
    let keep: Vec<bool> = (0..c.dims.len()).map(|i| *remain.add(i) != 0).collect();
    let co = c.coords(me);
    // Color: coordinates along dropped dimensions; key: along kept ones.
    let (mut color, mut key) = (0i32, 0i32);
    for i in 0..c.dims.len() {
        if keep[i] {
            key = key * c.dims[i] + co[i];
        } else {
            color = color * c.dims[i] + co[i];
        }
    }
    // Keeping no dimension gives a 0-dimensional grid: one point, held by
    // rank 0 (as MPICH, whose test suite expects MPI_COMM_NULL elsewhere).
    if !keep.contains(&true) && me != 0 {
        color = MPI_UNDEFINED;
    }
    let rc = crate::abi::base::MPI_Comm_split(comm, color, key, new);
    if rc == MPI_SUCCESS {
        let dims: Vec<i32> = (0..c.dims.len())
            .filter(|&i| keep[i])
            .map(|i| c.dims[i])
            .collect();
        let periods: Vec<bool> = (0..c.dims.len())
            .filter(|&i| keep[i])
            .map(|i| c.periods[i])
            .collect();
        attach_topology(g.me, *new, Topology::Cart(Cart { dims, periods }));
    }
    rc
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Topo_test(comm: c_int, status: *mut c_int) -> c_int {
    let me = rt::current_rank();
    match with_world(|w| {
        w.ranks[me as usize]
            .comm(comm)
            .map(|c| c.topo.as_ref().map(|t| t.kind()))
    }) {
        Ok(kind) => {
            set(status, kind.unwrap_or(MPI_UNDEFINED));
            MPI_SUCCESS
        }
        Err(e) => entry::handle_error(me, comm, "MPI_Topo_test", e),
    }
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Dims_create(nnodes: c_int, ndims: c_int, dims: *mut c_int) -> c_int {
    let me = rt::current_rank();
    if ndims < 0 {
        return entry::handle_error(
            me,
            rt::MPI_COMM_WORLD,
            "MPI_Dims_create",
            mpi_err(topo::MPI_ERR_DIMS, format!("negative ndims {ndims}")),
        );
    }
    let nd = ndims as usize;
    let mut d: Vec<i32> = (0..nd).map(|i| *dims.add(i)).collect();
    match topo::dims_create(nnodes, &mut d) {
        Ok(()) => {
            for (i, x) in d.iter().enumerate() {
                *dims.add(i) = *x;
            }
            MPI_SUCCESS
        }
        Err(e) => entry::handle_error(me, rt::MPI_COMM_WORLD, "MPI_Dims_create", e),
    }
}

// ------------------------------------------------------------------ datatype introspection

// MPI_Type_get_envelope, MPI_Type_set_name and MPI_Type_get_name: see abi_dtype.rs.

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
    match crate::abi::base::elements_of(st, dt) {
        Ok(n) => {
            set(count, n);
            MPI_SUCCESS
        }
        Err(code) => code,
    }
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_idup(comm: c_int, new: *mut c_int, req: *mut c_int) -> c_int {
    let g = enter();
    match crate::abi::base::dup_comm(g.me, comm, false) {
        Ok(h) => {
            set(new, h);
            set(req, 0);
            MPI_SUCCESS
        }
        Err(e) => entry::handle_error(g.me, comm, "MPI_Comm_idup", e),
    }
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
    crate::abi::base::MPI_Comm_dup(comm, new)
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
    // No hints are used: a new, empty object the caller frees.
    set(info, crate::mpi::info::create());
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
    crate::abi::base::persistent_init(
        rt::ReqKind::Send,
        buf,
        count,
        dt,
        dst,
        tag,
        comm,
        rt::SendMode::Buffered,
        req,
        "MPI_Bsend_init",
    )
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
    crate::abi::base::MPI_Send_init(buf, count, dt, dst, tag, comm, req)
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
                (*st).count = d.bytes_of_elements(count.max(0) as usize) as i64;
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
        let rc = f(dt, key, v as *mut c_void, extra as *mut c_void);
        if rc != MPI_SUCCESS {
            // A failing delete callback keeps the attribute.
            TYPE_ATTRS.with(|m| m.borrow_mut().insert((me, dt, key), v));
        }
        return rc;
    }
    MPI_SUCCESS
}

/// Copies the attributes of type `old` to its duplicate `new` through their
/// copy callbacks (MPI_Type_dup); returns the first failing callback's code.
pub unsafe fn copy_type_attrs(me: u32, old: c_int, new: c_int) -> c_int {
    let mut attrs: Vec<(i32, usize)> = TYPE_ATTRS.with(|m| {
        m.borrow()
            .iter()
            .filter(|((r, t, _), _)| *r == me && *t == old)
            .map(|((_, _, k), v)| (*k, *v))
            .collect()
    });
    attrs.sort_unstable();
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
            return rc;
        }
        if flag != 0 {
            TYPE_ATTRS.with(|m| m.borrow_mut().insert((me, new, k), out as usize));
        }
    }
    MPI_SUCCESS
}

/// Deletes every attribute of type `dt` through its delete callback (MPI_Type_free).
pub unsafe fn delete_type_attrs(me: u32, dt: c_int) -> c_int {
    let mut keys: Vec<i32> = TYPE_ATTRS.with(|m| {
        m.borrow()
            .keys()
            .filter(|(r, t, _)| *r == me && *t == dt)
            .map(|(_, _, k)| *k)
            .collect()
    });
    keys.sort_unstable();
    for k in keys {
        let rc = MPI_Type_delete_attr(dt, k);
        if rc != MPI_SUCCESS {
            return rc;
        }
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
        rt::wait_all_ids(self.me, reqs);
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
