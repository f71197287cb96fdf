//! MPI_Gather(v) and MPI_Scatter(v).

use super::bcast::seg_count;
use super::select::{self, pick};
use super::tree;
use super::{
    boff, dtype_of, elem, local_copy, regular_counts, CommView, BYTE, IN_PLACE, TAG_GATHER, TAG_SCATTER,
};
use crate::mpi::MpiResult;

pub(super) const GATHER: &[&str] = &[
    "ompi_basic_linear",
    "ompi_binomial",
    "ompi_linear_sync",
    "mvapich2_two_level",
];
pub(super) const SCATTER: &[&str] = &[
    "ompi_basic_linear",
    "ompi_binomial",
    "ompi_linear_nb",
    "mvapich2_two_level_binomial",
    "mvapich2_two_level_direct",
];

/// MPI_Gather. SMPI default: the non-blocking linear gather. mpich: binomial.
pub(crate) fn gather(
    c: CommView,
    sbuf: *const u8,
    scount: usize,
    stype: i32,
    rbuf: *mut u8,
    rcount: usize,
    rtype: i32,
    root: i32,
) -> MpiResult<()> {
    c.check_root(root)?;
    // bytes of one block, as each rank sees it (the same everywhere for a correct program)
    let block = if c.rank == root {
        dtype_of(rtype)?.size * rcount
    } else {
        dtype_of(stype)?.size * scount
    };
    let algo = pick(
        "gather",
        GATHER,
        select::Facts::new(c, block),
        || "default",
        || select::ompi_gather(c.size, block),
        || "ompi_binomial",
    )?;
    match algo {
        "default" => {
            let (counts, displs) = regular_counts(c.size, rcount);
            gatherv_linear(c, sbuf, scount, stype, rbuf, &counts, &displs, rtype, root)
        }
        "ompi_basic_linear" => {
            if c.rank != root {
                return c.send(sbuf, scount, stype, root, TAG_GATHER);
            }
            let rdt = dtype_of(rtype)?;
            for i in 0..c.size {
                let dst = elem(rbuf, &rdt, i as usize * rcount);
                if i == root {
                    if !std::ptr::eq(sbuf, IN_PLACE) {
                        local_copy(sbuf, scount, stype, dst, rcount, rtype)?;
                    }
                } else {
                    c.recv(dst, rcount, rtype, i, TAG_GATHER)?;
                }
            }
            Ok(())
        }
        "ompi_binomial" => binomial_gather(c, sbuf, scount, stype, rbuf, rcount, rtype, root, block),
        "mvapich2_two_level" => {
            super::smp_gather::gather_two_level(c, sbuf, scount, stype, rbuf, rcount, rtype, root)
        }
        _ => linear_sync(c, sbuf, scount, stype, rbuf, rcount, rtype, root, block),
    }
}

/// Open MPI's binomial gather: every node receives its children's subtrees
/// (packed, in virtual-rank order; children by increasing distance, blocking)
/// and sends its whole subtree to its parent.
pub(crate) fn binomial_gather(
    c: CommView,
    sbuf: *const u8,
    scount: usize,
    stype: i32,
    rbuf: *mut u8,
    rcount: usize,
    rtype: i32,
    root: i32,
    block: usize,
) -> MpiResult<()> {
    let n = c.size;
    let v = (c.rank - root + n) % n;
    let t = tree::binomial(n, c.rank, root);
    let sub = subtree_size(n, v);
    let mut tmp = vec![0u8; sub as usize * block];
    if c.rank != root {
        let sdt = dtype_of(stype)?;
        let mut own = Vec::with_capacity(block);
        // Safety: the application's send buffer holds `scount` elements of `stype`.
        unsafe { sdt.pack(sbuf, scount, &mut own) };
        own.resize(block, 0);
        tmp[..block].copy_from_slice(&own);
    }
    for &ch in &t.children {
        let cv = (ch - root + n) % n;
        let len = subtree_size(n, cv) as usize * block;
        c.recv(
            boff(tmp.as_mut_ptr(), (cv - v) as usize * block),
            len,
            BYTE,
            ch,
            TAG_GATHER,
        )?;
    }
    if let Some(p) = t.parent {
        return c.send(tmp.as_ptr(), tmp.len(), BYTE, p, TAG_GATHER);
    }
    let rdt = dtype_of(rtype)?;
    for u in 1..n {
        let r = (u + root) % n;
        // Safety: the root's receive buffer holds n blocks of `rcount` elements.
        unsafe {
            rdt.unpack(
                &tmp[u as usize * block..(u as usize + 1) * block],
                elem(rbuf, &rdt, r as usize * rcount),
                rcount,
            )
        };
    }
    if !std::ptr::eq(sbuf, IN_PLACE) {
        local_copy(
            sbuf,
            scount,
            stype,
            elem(rbuf, &rdt, root as usize * rcount),
            rcount,
            rtype,
        )?;
    }
    Ok(())
}

/// Ranks in the binomial subtree of virtual rank `v`.
fn subtree_size(n: i32, v: i32) -> i32 {
    let mut mask = 1;
    while mask < n && v & mask == 0 {
        mask <<= 1;
    }
    mask.min(n - v)
}

/// Open MPI's `gather_intra_linear_sync`: for each rank in turn the root posts
/// the receive of the first segment, sends an empty "go" message, posts the
/// receive of the rest and waits for the first part; the rest are waited at
/// the end. A non-root waits for the go, then sends both parts (blocking).
/// The first segment is 32 KiB for blocks above 92160 B, else 1 KiB (rounded
/// to whole elements of each side's datatype, as Open MPI's
/// `COLL_TUNED_COMPUTED_SEGCOUNT`).
fn linear_sync(
    c: CommView,
    sbuf: *const u8,
    scount: usize,
    stype: i32,
    rbuf: *mut u8,
    rcount: usize,
    rtype: i32,
    root: i32,
    block: usize,
) -> MpiResult<()> {
    let segsize = if block > 92160 { 32768 } else { 1024 };
    let type_size = dtype_of(if c.rank == root { rtype } else { stype })?.size;
    let elems = block.checked_div(type_size).unwrap_or(0);
    let first = (seg_count(segsize, type_size, elems) * type_size).min(block);
    if c.rank != root {
        let sdt = dtype_of(stype)?;
        let mut own = Vec::with_capacity(block);
        // Safety: the application's send buffer holds `scount` elements of `stype`.
        unsafe { sdt.pack(sbuf, scount, &mut own) };
        own.resize(block, 0);
        c.recv(std::ptr::null_mut(), 0, BYTE, root, TAG_GATHER)?;
        c.send(own.as_ptr(), first, BYTE, root, TAG_GATHER)?;
        return c.send(own[first..].as_ptr(), block - first, BYTE, root, TAG_GATHER);
    }
    let n = c.size as usize;
    let mut tmp = vec![0u8; n * block];
    let mut rest = Vec::new();
    for i in 0..c.size {
        if i == root {
            continue;
        }
        let p = boff(tmp.as_mut_ptr(), i as usize * block);
        let head = c.irecv(p, first, BYTE, i, TAG_GATHER)?;
        c.send(std::ptr::null(), 0, BYTE, i, TAG_GATHER)?;
        rest.push(c.irecv(boff(p, first), block - first, BYTE, i, TAG_GATHER)?);
        c.wait(head)?;
    }
    let rdt = dtype_of(rtype)?;
    if !std::ptr::eq(sbuf, IN_PLACE) {
        local_copy(
            sbuf,
            scount,
            stype,
            elem(rbuf, &rdt, root as usize * rcount),
            rcount,
            rtype,
        )?;
    }
    c.waitall_checked(&rest)?;
    for i in (0..n).filter(|&i| i != root as usize) {
        // Safety: the root's receive buffer holds n blocks of `rcount` elements.
        unsafe {
            rdt.unpack(
                &tmp[i * block..(i + 1) * block],
                elem(rbuf, &rdt, i * rcount),
                rcount,
            )
        };
    }
    Ok(())
}

/// MPI_Gatherv (and the default gather): linear, non-blocking (SMPI's igather).
pub(crate) fn gatherv_linear(
    c: CommView,
    sbuf: *const u8,
    scount: usize,
    stype: i32,
    rbuf: *mut u8,
    rcounts: &[usize],
    displs: &[isize],
    rtype: i32,
    root: i32,
) -> MpiResult<()> {
    c.check_root(root)?;
    if c.rank != root {
        let r = c.isend(sbuf, scount, stype, root, TAG_GATHER)?;
        c.waitall(&[r]);
        return Ok(());
    }
    let rdt = dtype_of(rtype)?;
    let mut reqs = Vec::new();
    for i in 0..c.size {
        let dst = rbuf.wrapping_offset(displs[i as usize] * rdt.extent);
        if i == root {
            if !std::ptr::eq(sbuf, IN_PLACE) {
                local_copy(sbuf, scount, stype, dst, rcounts[i as usize], rtype)?;
            }
        } else {
            reqs.push(c.irecv(dst, rcounts[i as usize], rtype, i, TAG_GATHER)?);
        }
    }
    c.waitall(&reqs);
    Ok(())
}

/// MPI_Scatter. SMPI default: the non-blocking linear scatter. mpich: binomial.
pub(crate) fn scatter(
    c: CommView,
    sbuf: *const u8,
    scount: usize,
    stype: i32,
    rbuf: *mut u8,
    rcount: usize,
    rtype: i32,
    root: i32,
) -> MpiResult<()> {
    c.check_root(root)?;
    let block = if c.rank == root {
        dtype_of(stype)?.size * scount
    } else {
        dtype_of(rtype)?.size * rcount
    };
    let algo = pick(
        "scatter",
        SCATTER,
        select::Facts::new(c, block),
        || "default",
        || select::ompi_scatter(c.size, block),
        || "ompi_binomial",
    )?;
    match algo {
        // Open MPI's linear_nb is the same pattern as SMPI's non-blocking scatter.
        "default" | "ompi_linear_nb" => {
            let (counts, displs) = regular_counts(c.size, scount);
            scatterv_linear(c, sbuf, &counts, &displs, stype, rbuf, rcount, rtype, root)
        }
        "ompi_basic_linear" => {
            super::smp_gather::linear_scatter(c, sbuf, scount, stype, rbuf, rcount, rtype, root)
        }
        "mvapich2_two_level_binomial" | "mvapich2_two_level_direct" => super::smp_gather::scatter_two_level(
            c,
            sbuf,
            scount,
            stype,
            rbuf,
            rcount,
            rtype,
            root,
            algo == "mvapich2_two_level_binomial",
        ),
        _ => binomial_scatter(c, sbuf, scount, stype, rbuf, rcount, rtype, root, block),
    }
}

/// Open MPI's binomial scatter (SMPI's transcription): the root packs the
/// blocks in virtual-rank order; every node sends each child its subtree
/// (children by increasing distance, blocking), then keeps its own block.
pub(crate) fn binomial_scatter(
    c: CommView,
    sbuf: *const u8,
    scount: usize,
    stype: i32,
    rbuf: *mut u8,
    rcount: usize,
    rtype: i32,
    root: i32,
    block: usize,
) -> MpiResult<()> {
    let n = c.size;
    let v = (c.rank - root + n) % n;
    let t = tree::binomial(n, c.rank, root);
    let sub = subtree_size(n, v);
    let mut tmp = Vec::with_capacity(sub as usize * block);
    if let Some(p) = t.parent {
        tmp.resize(sub as usize * block, 0);
        c.recv(tmp.as_mut_ptr(), tmp.len(), BYTE, p, TAG_SCATTER)?;
    } else {
        let sdt = dtype_of(stype)?;
        for u in 0..n {
            let r = (u + root) % n;
            // Safety: the root's send buffer holds n blocks of `scount` elements.
            unsafe { sdt.pack(elem(sbuf, &sdt, r as usize * scount), scount, &mut tmp) };
            tmp.resize((u as usize + 1) * block, 0);
        }
    }
    for &ch in &t.children {
        let cv = (ch - root + n) % n;
        let len = subtree_size(n, cv) as usize * block;
        c.send(
            boff(tmp.as_mut_ptr(), (cv - v) as usize * block),
            len,
            BYTE,
            ch,
            TAG_SCATTER,
        )?;
    }
    if c.rank == root {
        if rbuf != IN_PLACE {
            let sdt = dtype_of(stype)?;
            local_copy(
                elem(sbuf, &sdt, root as usize * scount),
                scount,
                stype,
                rbuf,
                rcount,
                rtype,
            )?;
        }
    } else {
        let rdt = dtype_of(rtype)?;
        // Safety: the receive buffer holds `rcount` elements of `rtype`.
        unsafe { rdt.unpack(&tmp[..block], rbuf, rcount) };
    }
    Ok(())
}

/// MPI_Scatterv (and the default scatter): linear, non-blocking (SMPI's iscatter).
pub(crate) fn scatterv_linear(
    c: CommView,
    sbuf: *const u8,
    scounts: &[usize],
    displs: &[isize],
    stype: i32,
    rbuf: *mut u8,
    rcount: usize,
    rtype: i32,
    root: i32,
) -> MpiResult<()> {
    c.check_root(root)?;
    if c.rank != root {
        let r = c.irecv(rbuf, rcount, rtype, root, TAG_SCATTER)?;
        c.waitall(&[r]);
        return Ok(());
    }
    let sdt = dtype_of(stype)?;
    let mut reqs = Vec::new();
    for i in 0..c.size {
        let src = sbuf.wrapping_offset(displs[i as usize] * sdt.extent);
        if i == root {
            if rbuf != IN_PLACE {
                local_copy(src, scounts[i as usize], stype, rbuf, rcount, rtype)?;
            }
        } else {
            reqs.push(c.isend(src, scounts[i as usize], stype, i, TAG_SCATTER)?);
        }
    }
    c.waitall(&reqs);
    Ok(())
}
