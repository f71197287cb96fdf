//! Communicators (MPI chapter 7): creation, duplication, splitting, comparison, names,
//! info, and intercommunicators.
#![allow(non_snake_case, clippy::missing_safety_doc, clippy::too_many_arguments)]

use std::ffi::{c_char, c_int, CStr};
use std::rc::Rc;

use crate::abi::coll::view;
use crate::abi::group::{add_group, group_of};
use crate::coll::{self, CommView};
use crate::mpi::entry::{self, enter, result};
use crate::mpi::{
    self as rt, mpi_err, with_world, CommEntry, CommShared, MpiResult, MPI_COMM_NULL, MPI_SUCCESS,
    MPI_UNDEFINED,
};

use super::args::*;

// ------------------------------------------------------------------ communicators

#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_rank(comm: c_int, rank: *mut c_int) -> c_int {
    let me = rt::current_rank();
    match with_world(|w| w.ranks[me as usize].comm(comm).map(|c| c.my_rank)) {
        Ok(r) => {
            set(rank, r);
            MPI_SUCCESS
        }
        Err(e) => entry::handle_error(me, comm, "MPI_Comm_rank", e),
    }
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_size(comm: c_int, size: *mut c_int) -> c_int {
    let me = rt::current_rank();
    match with_world(|w| w.ranks[me as usize].comm(comm).map(|c| c.size())) {
        Ok(s) => {
            set(size, s);
            MPI_SUCCESS
        }
        Err(e) => entry::handle_error(me, comm, "MPI_Comm_size", e),
    }
}

/// Creates this rank's entry of a communicator derived from `parent` (same
/// group, or `group`), then, like SMPI 3.32's communicator constructor, has
/// the new communicator's rank 0 broadcast its id (one `MPI_INT`, with the
/// selected bcast): that message is part of what a Comm_dup / split / create /
/// Cart_create costs in simulated time.
pub(crate) fn derive_comm(me: u32, parent: c_int, color: i32, group: Option<Vec<u32>>) -> MpiResult<c_int> {
    let h = new_comm_entry(me, parent, color, group)?;
    announce_comm(me, h)?;
    Ok(h)
}

/// The id broadcast of SMPI's communicator constructor (see [`derive_comm`]).
pub(super) fn announce_comm(me: u32, h: c_int) -> MpiResult<()> {
    const MPI_INT: c_int = 7;
    if h != MPI_COMM_NULL {
        let mut id: c_int = 0;
        coll::bcast(view(me, h)?, (&mut id as *mut c_int).cast(), 1, MPI_INT, 0)?;
    }
    Ok(())
}

pub(super) fn new_comm_entry(
    me: u32,
    parent: c_int,
    color: i32,
    group: Option<Vec<u32>>,
) -> MpiResult<c_int> {
    with_world(|w| {
        let r = &mut w.ranks[me as usize];
        let p = r.comm_mut(parent)?;
        let creation = p.creations;
        p.creations += 1;
        let (pctx, errh) = (p.shared.context, p.errhandler);
        let group = match group {
            Some(g) => g,
            None => p.shared.group.as_ref().clone(),
        };
        let Some(my_rank) = group.iter().position(|&x| x == me) else {
            return Ok(MPI_COMM_NULL);
        };
        let context = w.agree_context(pctx, creation, color);
        let entry = CommEntry {
            shared: Rc::new(CommShared {
                context,
                group: Rc::new(group),
                remote: None,
            }),
            my_rank: my_rank as i32,
            errhandler: errh,
            name: String::new(),
            attrs: Default::default(),
            creations: 0,
            topo: None,
        };
        Ok(w.ranks[me as usize].add_comm(entry))
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_dup(comm: c_int, new: *mut c_int) -> c_int {
    let g = enter();
    let r = dup_comm(g.me, comm, true);
    match r {
        Ok(h) => {
            set(new, h);
            MPI_SUCCESS
        }
        Err(e) => entry::handle_error(g.me, comm, "MPI_Comm_dup", e),
    }
}

/// Comm_dup's work. `announce`: pay SMPI's id broadcast on the new
/// intra-communicator (MPI_Comm_idup does not: it must not block).
pub(crate) unsafe fn dup_comm(me: u32, comm: c_int, announce: bool) -> MpiResult<c_int> {
    {
        let (remote, topo) = with_world(|w| {
            w.ranks[me as usize]
                .comm(comm)
                .map(|c| (c.shared.remote.clone(), c.topo.clone()))
        })?;
        let h = new_comm_entry(me, comm, i32::MIN, None)?;
        if announce && remote.is_none() {
            announce_comm(me, h)?;
        }
        with_world(|w| {
            if let Ok(e) = w.ranks[me as usize].comm_mut(h) {
                e.topo = topo;
                if remote.is_some() {
                    let sh = &e.shared;
                    e.shared = Rc::new(CommShared {
                        context: sh.context,
                        group: sh.group.clone(),
                        remote,
                    });
                }
            }
        });
        crate::mpi::attr::copy_comm_attrs(me, comm, h)?;
        Ok(h)
    }
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_split(comm: c_int, color: c_int, key: c_int, new: *mut c_int) -> c_int {
    let g = enter();
    let inter = with_world(|w| {
        w.ranks[g.me as usize]
            .comm(comm)
            .map(|c| c.shared.remote.is_some())
    });
    if let Ok(true) = inter {
        return match super::comm::split_intercomm(g.me, comm, color, key) {
            Ok(h) => {
                set(new, h);
                MPI_SUCCESS
            }
            Err(e) => entry::handle_error(g.me, comm, "MPI_Comm_split", e),
        };
    }
    let r = (|| -> MpiResult<c_int> {
        let c = view(g.me, comm)?;
        let pairs = coll::split_tables(c, color, key)?;
        let pairs = match pairs {
            Some(p) if color != MPI_UNDEFINED => p,
            _ => {
                // Still count the creation so contexts stay agreed.
                with_world(|w| w.ranks[g.me as usize].comm_mut(comm).map(|p| p.creations += 1))?;
                return Ok(MPI_COMM_NULL);
            }
        };
        let parent_group = with_world(|w| w.ranks[g.me as usize].comm(comm).map(|p| p.shared.group.clone()))?;
        let mut members: Vec<(i32, usize)> = pairs
            .iter()
            .enumerate()
            .filter(|(_, p)| p[0] == color)
            .map(|(i, p)| (p[1], i))
            .collect();
        members.sort();
        let group: Vec<u32> = members.iter().map(|&(_, i)| parent_group[i]).collect();
        derive_comm(g.me, comm, color, Some(group))
    })();
    match r {
        Ok(h) => {
            set(new, h);
            MPI_SUCCESS
        }
        Err(e) => entry::handle_error(g.me, comm, "MPI_Comm_split", e),
    }
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_create(comm: c_int, group: c_int, new: *mut c_int) -> c_int {
    let g = enter();
    let inter = with_world(|w| {
        w.ranks[g.me as usize]
            .comm(comm)
            .map(|c| c.shared.remote.is_some())
    });
    if let Ok(true) = inter {
        // On an intercommunicator: each side names a subgroup of its own group.
        let r = group_of(g.me, group).and_then(|grp| {
            let pos = grp.iter().position(|&x| x == g.me);
            let (color, key) = match pos {
                Some(p) => (0, p as i32),
                None => (MPI_UNDEFINED, 0),
            };
            super::comm::split_intercomm(g.me, comm, color, key)
        });
        return match r {
            Ok(h) => {
                set(new, h);
                MPI_SUCCESS
            }
            Err(e) => entry::handle_error(g.me, comm, "MPI_Comm_create", e),
        };
    }
    let r = group_of(g.me, group).and_then(|grp| derive_comm(g.me, comm, 0, Some(grp.as_ref().clone())));
    match r {
        Ok(h) => {
            set(new, h);
            MPI_SUCCESS
        }
        Err(e) => entry::handle_error(g.me, comm, "MPI_Comm_create", e),
    }
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_free(comm: *mut c_int) -> c_int {
    let g = enter();
    let h = *comm;
    if h == rt::MPI_COMM_WORLD || h == rt::MPI_COMM_SELF {
        return entry::handle_error(
            g.me,
            h,
            "MPI_Comm_free",
            mpi_err(rt::MPI_ERR_COMM, "cannot free a predefined communicator"),
        );
    }
    let r = crate::mpi::attr::delete_all_comm_attrs(g.me, h).and_then(|_| {
        with_world(|w| {
            w.ranks[g.me as usize].comm(h)?;
            w.ranks[g.me as usize].comms[h as usize] = None;
            Ok(())
        })
    });
    if r.is_ok() {
        *comm = MPI_COMM_NULL;
    }
    result(g.me, rt::MPI_COMM_WORLD, "MPI_Comm_free", r)
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_compare(c1: c_int, c2: c_int, res: *mut c_int) -> c_int {
    let me = rt::current_rank();
    let r = with_world(|w| -> MpiResult<c_int> {
        let a = w.ranks[me as usize].comm(c1)?;
        let b = w.ranks[me as usize].comm(c2)?;
        Ok(if c1 == c2 || Rc::ptr_eq(&a.shared, &b.shared) {
            0
        } else if a.shared.group == b.shared.group {
            1
        } else {
            let mut x = a.shared.group.as_ref().clone();
            let mut y = b.shared.group.as_ref().clone();
            x.sort();
            y.sort();
            if x == y {
                2
            } else {
                3
            }
        })
    });
    match r {
        Ok(v) => {
            set(res, v);
            MPI_SUCCESS
        }
        Err(e) => e.code,
    }
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_group(comm: c_int, group: *mut c_int) -> c_int {
    let me = rt::current_rank();
    match with_world(|w| {
        w.ranks[me as usize]
            .comm(comm)
            .map(|c| c.shared.group.as_ref().clone())
    }) {
        Ok(g) => {
            set(group, add_group(me, g));
            MPI_SUCCESS
        }
        Err(e) => entry::handle_error(me, comm, "MPI_Comm_group", e),
    }
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_test_inter(comm: c_int, flag: *mut c_int) -> c_int {
    let me = rt::current_rank();
    match with_world(|w| w.ranks[me as usize].comm(comm).map(|c| c.shared.remote.is_some())) {
        Ok(f) => {
            set(flag, f as c_int);
            MPI_SUCCESS
        }
        Err(e) => entry::handle_error(me, comm, "MPI_Comm_test_inter", e),
    }
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_set_name(comm: c_int, name: *const c_char) -> c_int {
    let me = rt::current_rank();
    let s = CStr::from_ptr(name).to_string_lossy().into_owned();
    let r = with_world(|w| w.ranks[me as usize].comm_mut(comm).map(|c| c.name = s));
    result(me, comm, "MPI_Comm_set_name", r)
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_get_name(comm: c_int, name: *mut c_char, len: *mut c_int) -> c_int {
    let me = rt::current_rank();
    match with_world(|w| w.ranks[me as usize].comm(comm).map(|c| c.name.clone())) {
        Ok(s) => {
            write_cstr(name, &s, len, 128);
            MPI_SUCCESS
        }
        Err(e) => entry::handle_error(me, comm, "MPI_Comm_get_name", e),
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

pub(super) fn new_entry(shared: CommShared, my_rank: i32, errh: i32) -> CommEntry {
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
    super::comm::MPI_Comm_split(comm, color, key, new)
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

#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_idup(comm: c_int, new: *mut c_int, req: *mut c_int) -> c_int {
    let g = enter();
    match super::comm::dup_comm(g.me, comm, false) {
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
pub unsafe extern "C" fn MPI_Comm_dup_with_info(comm: c_int, _info: c_int, new: *mut c_int) -> c_int {
    super::comm::MPI_Comm_dup(comm, new)
}

/// (rank, parent context, group, tag) of an MPI_Comm_create_group call.
pub(super) type CreateGroupKey = (u32, u32, Vec<u32>, i32);

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
    set(info, with_world(|w| w.infos.create()));
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
