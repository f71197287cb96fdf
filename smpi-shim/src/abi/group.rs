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
        gs.push(Some(Rc::from(g)));
        (gs.len() - 1) as c_int
    })
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Group_size(group: c_int, size: *mut c_int) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        put(
            size,
            group_of(rt::current_rank(), group)
                .map_err(|e| e.code)
                .map(|g| g.len() as c_int),
        )
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
    unsafe { put(new, r.map_err(|e| e.code).map(|g| add_group(me, g))) }
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

/// `n` ranks of a group of `size` (`MPI_Group_incl`, `MPI_Group_excl`):
/// with `Some(size)`, a rank outside the group is `MPI_ERR_RANK`.
unsafe fn listed(n: c_int, ranks: *const c_int, size: Option<usize>) -> MpiResult<Vec<usize>> {
    (0..n.max(0) as usize)
        .map(|i| {
            // Safety: the program's array holds `n` ranks.
            let r = unsafe { *ranks.add(i) };
            match size {
                Some(size) if r < 0 || r as usize >= size => {
                    Err(mpi_err(rt::MPI_ERR_RANK, format!("rank {r} out of range")))
                }
                _ => Ok(r as usize),
            }
        })
        .collect()
}

/// The members of group `g` at `positions` (in that order), or, when not
/// `include`, those at the other positions.
fn subgroup(g: &[u32], positions: Vec<usize>, include: bool) -> Vec<u32> {
    if include {
        positions.iter().map(|&i| g[i]).collect()
    } else {
        g.iter()
            .enumerate()
            .filter(|(i, _)| !positions.contains(i))
            .map(|(_, &x)| x)
            .collect()
    }
}

/// Exports the operations that make a subgroup of a group from an array of
/// `n` ranks or rank ranges (MPI chapter 7.3.2): each lists the positions in
/// the group (of `$size` members) that the new group includes (`true`), in
/// that order, or excludes (`false`).
macro_rules! subgroup_ops {
    ($($name:ident($t:ty) = |$n:ident, $p:ident, $size:ident| $positions:expr, $include:literal;)*) => {$(
        #[no_mangle]
        pub(super) unsafe extern "C" fn $name(group: c_int, $n: c_int, $p: *const $t, new: *mut c_int) -> c_int {
            let me = rt::current_rank();
            // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
            unsafe {
                let res = group_of(me, group).and_then(|g| {
                    let $size = g.len();
                    Ok(subgroup(&g, $positions?, $include))
                });
                group_result(me, res, new)
            }
        }
    )*};
}

subgroup_ops! {
    MPI_Group_incl(c_int) = |n, ranks, size| listed(n, ranks, Some(size)), true;
    MPI_Group_excl(c_int) = |n, ranks, _size| listed(n, ranks, None), false;
    MPI_Group_range_incl([c_int; 3]) = |n, r, size| ranges(n, r, size), true;
    MPI_Group_range_excl([c_int; 3]) = |n, r, size| ranges(n, r, size), false;
}

/// Exports the operations that make a group from two (MPI chapter 7.3.2):
/// each lists the new group's members from those of `$a` and `$b`, in order.
macro_rules! group_ops {
    ($($name:ident = |$a:ident, $b:ident| $members:expr;)*) => {$(
        #[no_mangle]
        pub(super) unsafe extern "C" fn $name(a: c_int, b: c_int, new: *mut c_int) -> c_int {
            let me = rt::current_rank();
            let res = group_of(me, a).and_then(|ga| {
                let gb = group_of(me, b)?;
                let ($a, $b): (&[u32], &[u32]) = (&ga, &gb);
                Ok($members)
            });
            // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
            unsafe { group_result(me, res, new) }
        }
    )*};
}

group_ops! {
    MPI_Group_union = |a, b| a.iter().chain(b.iter().filter(|x| !a.contains(x))).copied().collect();
    MPI_Group_intersection = |a, b| a.iter().filter(|x| b.contains(x)).copied().collect();
    MPI_Group_difference = |a, b| a.iter().filter(|x| !b.contains(x)).copied().collect();
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
                    let (mut x, mut y) = (ga.to_vec(), gb.to_vec());
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
