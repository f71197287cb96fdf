//! Process groups (MPI chapter 7.3).
#![allow(non_snake_case, clippy::missing_safety_doc, clippy::too_many_arguments)]

use std::ffi::c_int;
use std::rc::Rc;

use crate::mpi::{self as rt, mpi_err, with_world, MpiResult, MPI_SUCCESS, MPI_UNDEFINED};

use super::args::*;

pub(super) fn group_of(me: u32, h: c_int) -> MpiResult<rt::Group> {
    with_world(|w| {
        w.ranks[me as usize]
            .groups
            .get(h.max(0) as usize)
            .and_then(|g| g.clone())
            .ok_or_else(|| mpi_err(rt::MPI_ERR_GROUP, format!("invalid group handle {h}")))
    })
}

pub(super) fn add_group(me: u32, g: Vec<u32>) -> c_int {
    if g.is_empty() {
        // Every empty group is MPI_GROUP_EMPTY.
        return 1;
    }
    with_world(|w| {
        let gs = &mut w.ranks[me as usize].groups;
        gs.push(Some(Rc::new(g)));
        (gs.len() - 1) as c_int
    })
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Group_size(group: c_int, size: *mut c_int) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        match group_of(rt::current_rank(), group) {
            Ok(g) => {
                set(size, g.len() as c_int);
                MPI_SUCCESS
            }
            Err(e) => e.code,
        }
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Group_rank(group: c_int, rank: *mut c_int) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        let me = rt::current_rank();
        match group_of(me, group) {
            Ok(g) => {
                set(
                    rank,
                    g.iter()
                        .position(|&x| x == me)
                        .map_or(MPI_UNDEFINED, |p| p as c_int),
                );
                MPI_SUCCESS
            }
            Err(e) => e.code,
        }
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Group_incl(
    group: c_int,
    n: c_int,
    ranks: *const c_int,
    new: *mut c_int,
) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        let me = rt::current_rank();
        match group_of(me, group) {
            Ok(g) => {
                let mut v = Vec::new();
                for i in 0..n.max(0) as usize {
                    let r = *ranks.add(i);
                    if r < 0 || r as usize >= g.len() {
                        return rt::MPI_ERR_RANK;
                    }
                    v.push(g[r as usize]);
                }
                set(new, add_group(me, v));
                MPI_SUCCESS
            }
            Err(e) => e.code,
        }
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Group_excl(
    group: c_int,
    n: c_int,
    ranks: *const c_int,
    new: *mut c_int,
) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        let me = rt::current_rank();
        match group_of(me, group) {
            Ok(g) => {
                let ex: Vec<i32> = (0..n.max(0) as usize).map(|i| *ranks.add(i)).collect();
                let v: Vec<u32> = g
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| !ex.contains(&(*i as i32)))
                    .map(|(_, &x)| x)
                    .collect();
                set(new, add_group(me, v));
                MPI_SUCCESS
            }
            Err(e) => e.code,
        }
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Group_translate_ranks(
    g1: c_int,
    n: c_int,
    r1: *const c_int,
    g2: c_int,
    r2: *mut c_int,
) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        let me = rt::current_rank();
        let (a, b) = match (group_of(me, g1), group_of(me, g2)) {
            (Ok(a), Ok(b)) => (a, b),
            _ => return rt::MPI_ERR_GROUP,
        };
        for i in 0..n.max(0) as usize {
            let r = *r1.add(i);
            *r2.add(i) = if r == rt::MPI_PROC_NULL {
                rt::MPI_PROC_NULL
            } else if r < 0 || r as usize >= a.len() {
                return rt::MPI_ERR_RANK;
            } else {
                b.iter()
                    .position(|&x| x == a[r as usize])
                    .map_or(MPI_UNDEFINED, |p| p as c_int)
            };
        }
        MPI_SUCCESS
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Group_free(group: *mut c_int) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        let me = rt::current_rank();
        let h = *group;
        if h > 1 {
            with_world(|w| {
                if let Some(g) = w.ranks[me as usize].groups.get_mut(h as usize) {
                    *g = None;
                }
            });
        }
        *group = 0;
        MPI_SUCCESS
    }
}

pub(super) unsafe fn group_result(me: u32, r: MpiResult<Vec<u32>>, new: *mut c_int) -> c_int {
    // Safety: the caller upholds this function's contract (see its `# Safety`).
    unsafe {
        match r {
            Ok(g) => {
                set(new, add_group(me, g));
                MPI_SUCCESS
            }
            Err(e) => e.code,
        }
    }
}

pub(super) unsafe fn ranges(n: c_int, r: *const [c_int; 3], size: usize) -> MpiResult<Vec<usize>> {
    // Safety: the caller upholds this function's contract (see its `# Safety`).
    unsafe {
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
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Group_range_incl(
    group: c_int,
    n: c_int,
    r: *const [c_int; 3],
    new: *mut c_int,
) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        let me = rt::current_rank();
        let res =
            group_of(me, group).and_then(|g| Ok(ranges(n, r, g.len())?.into_iter().map(|i| g[i]).collect()));
        group_result(me, res, new)
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Group_range_excl(
    group: c_int,
    n: c_int,
    r: *const [c_int; 3],
    new: *mut c_int,
) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
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
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Group_union(a: c_int, b: c_int, new: *mut c_int) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        let me = rt::current_rank();
        let res = group_of(me, a).and_then(|ga| {
            let gb = group_of(me, b)?;
            let mut v = ga.as_ref().clone();
            v.extend(gb.iter().filter(|x| !ga.contains(x)));
            Ok(v)
        });
        group_result(me, res, new)
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Group_intersection(a: c_int, b: c_int, new: *mut c_int) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        let me = rt::current_rank();
        let res = group_of(me, a).and_then(|ga| {
            let gb = group_of(me, b)?;
            Ok(ga.iter().filter(|x| gb.contains(x)).copied().collect())
        });
        group_result(me, res, new)
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Group_difference(a: c_int, b: c_int, new: *mut c_int) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        let me = rt::current_rank();
        let res = group_of(me, a).and_then(|ga| {
            let gb = group_of(me, b)?;
            Ok(ga.iter().filter(|x| !gb.contains(x)).copied().collect())
        });
        group_result(me, res, new)
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Group_compare(a: c_int, b: c_int, res: *mut c_int) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
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
}
