//! MPI_Bcast.

use super::select::{self, pick};
use super::smp_bcast::LeadersBcast;
use super::tree::{self, Tree};
use super::trees_bcast;
use super::{boff, dtype_of, elem, ByteView, CommView, BYTE, TAG_BCAST};
use crate::mpi::MpiResult;

pub(super) const KNOWN: &[&str] = &[
    "binomial_tree",
    "flattree",
    "flattree_pipeline",
    "scatter_rdb_allgather",
    "scatter_LR_allgather",
    "ompi_pipeline",
    "ompi_split_bintree",
    "NTSL",
    "NTSB",
    "mvapich2_knomial_intra_node",
    "NTSL_Isend",
    "arrival_pattern_aware",
    "arrival_pattern_aware_wait",
    "arrival_scatter",
    "SMP_binomial",
    "SMP_binary",
    "SMP_linear",
    "mvapich2_intra_node",
    "mvapich2_inter_node",
];

/// SMPI default: `binomial_tree`.
pub(crate) fn run(c: CommView, buf: *mut u8, count: usize, dtype: i32, root: i32) -> MpiResult<()> {
    c.check_root(root)?;
    let dt = dtype_of(dtype)?;
    let bytes = dt.size * count;
    let algo = pick(
        "bcast",
        KNOWN,
        select::Facts::new(c, bytes),
        || "binomial_tree",
        || select::ompi_bcast(c.size, bytes),
        || select::mpich_bcast(c.size, bytes),
    )?;
    if algo == "binomial_tree" {
        return binomial_tree(c, buf, count, dtype, root);
    }
    if c.size == 1 || count == 0 {
        return Ok(());
    }
    let (n, r) = (c.size, c.rank);
    match algo {
        "flattree" => flat(c, buf, count, dtype, root),
        "scatter_rdb_allgather" => scatter_allgather(c, buf, count, dtype, root, false),
        "scatter_LR_allgather" => scatter_allgather(c, buf, count, dtype, root, true),
        // Open MPI's pipeline (a chain), segment size from Open MPI's
        // message-size rule: 128 KiB, 64 KiB or 16 KiB.
        "ompi_pipeline" => {
            let m = bytes as f64;
            let seg = if (n as f64) < 1.6134e-6 * m + 2.1102 {
                128 << 10
            } else if (n as f64) < 2.3679e-6 * m + 1.1787 {
                64 << 10
            } else if (n as f64) < 3.2118e-6 * m + 8.7936 {
                16 << 10
            } else {
                128 << 10
            };
            let t = tree::chain(n, r, root, 1);
            segmented(c, buf, count, dtype, &t, seg_count(seg, dt.size, count))
        }
        "ompi_split_bintree" => split_bintree(c, buf, count, dtype, root),
        // SMPI's NTSL / NTSB: chain / binary tree with 8 KiB segments.
        "NTSL" => ntsl(c, buf, count, dtype, root),
        "NTSB" => ntsb(c, buf, count, dtype, root),
        "flattree_pipeline" => flattree_pipeline(c, buf, count, dtype, root),
        // SMPI's NTSL_Isend is NTSL (the same code).
        "NTSL_Isend" => ntsl(c, buf, count, dtype, root),
        "arrival_pattern_aware" => trees_bcast::arrival_pattern_aware(c, buf, count, dtype, root),
        "arrival_pattern_aware_wait" => trees_bcast::arrival_pattern_aware_wait(c, buf, count, dtype, root),
        "arrival_scatter" => trees_bcast::arrival_scatter(c, buf, count, dtype, root),
        "SMP_binomial" => super::smp_bcast::binomial(c, buf, count, dtype, root),
        "SMP_binary" => super::smp_bcast::binary(c, buf, count, dtype, root),
        "SMP_linear" => super::smp_bcast::linear(c, buf, count, dtype, root),
        "mvapich2_intra_node" => super::smp_bcast::mvapich2_intra_node(c, buf, count, dtype, root),
        "mvapich2_inter_node" => super::smp_bcast::mvapich2_inter_node(c, buf, count, dtype, root),
        // the mvapich2 selector's two-level bcasts (select_mvapich2.rs)
        "mv2_tuned_mpich" => {
            super::smp_bcast::mvapich2_tuned(c, buf, count, dtype, root, LeadersBcast::Mpich)
        }
        "mv2_tuned_binomial" => {
            super::smp_bcast::mvapich2_tuned(c, buf, count, dtype, root, LeadersBcast::Binomial)
        }
        "mv2_tuned_scatter_LR" => {
            super::smp_bcast::mvapich2_tuned(c, buf, count, dtype, root, LeadersBcast::ScatterRing)
        }
        "mv2_tuned_scatter_rdb" => {
            super::smp_bcast::mvapich2_tuned(c, buf, count, dtype, root, LeadersBcast::ScatterDoubling)
        }
        _ => knomial(c, buf, count, dtype, root, 4),
    }
}

/// Open MPI's `COLL_TUNED_COMPUTED_SEGCOUNT`: elements per segment of about
/// `segsize` bytes (no segmentation when the message fits).
pub(crate) fn seg_count(segsize: usize, type_size: usize, count: usize) -> usize {
    if segsize >= type_size && type_size > 0 && segsize < type_size * count {
        let mut s = segsize / type_size;
        if segsize - s * type_size > type_size / 2 {
            s += 1;
        }
        s.max(1)
    } else {
        count.max(1)
    }
}

/// Binomial tree rooted at `root`, blocking sends (SMPI's `bcast__binomial_tree`).
pub(crate) fn binomial_tree(c: CommView, buf: *mut u8, count: usize, dtype: i32, root: i32) -> MpiResult<()> {
    let n = c.size;
    let rel = (c.rank - root + n) % n;
    let mut mask = 1;
    while mask < n {
        if rel & mask != 0 {
            let src = (c.rank - mask + n) % n;
            c.recv(buf, count, dtype, src, TAG_BCAST)?;
            break;
        }
        mask <<= 1;
    }
    mask >>= 1;
    while mask > 0 {
        if rel + mask < n {
            let dst = (c.rank + mask) % n;
            c.send(buf, count, dtype, dst, TAG_BCAST)?;
        }
        mask >>= 1;
    }
    Ok(())
}

/// The root isends to everyone (ascending) and waits; the others receive.
fn flat(c: CommView, buf: *mut u8, count: usize, dtype: i32, root: i32) -> MpiResult<()> {
    if c.rank == root {
        let mut reqs = Vec::new();
        for i in 0..c.size {
            if i != root {
                reqs.push(c.isend(buf, count, dtype, i, TAG_BCAST)?);
            }
        }
        c.waitall(&reqs);
    } else {
        c.recv(buf, count, dtype, root, TAG_BCAST)?;
    }
    Ok(())
}

/// Open MPI's generic segmented tree broadcast (`bcast_intra_generic`): the
/// root sends each segment to all its children (isend + waitall per segment);
/// inner nodes keep one receive ahead and forward each segment once it has
/// arrived; leaves keep one receive ahead.
pub(crate) fn segmented(
    c: CommView,
    buf: *mut u8,
    count: usize,
    dtype: i32,
    t: &Tree,
    segcount: usize,
) -> MpiResult<()> {
    let dt = dtype_of(dtype)?;
    let segcount = segcount.max(1);
    let nseg = count.div_ceil(segcount);
    if nseg == 0 {
        return Ok(());
    }
    let seg = |s: usize| (elem(buf, &dt, s * segcount), segcount.min(count - s * segcount));
    let forward = |s: usize| -> MpiResult<()> {
        let (p, k) = seg(s);
        let mut reqs = Vec::with_capacity(t.children.len());
        for &ch in &t.children {
            reqs.push(c.isend(p, k, dtype, ch, TAG_BCAST)?);
        }
        c.waitall(&reqs);
        Ok(())
    };
    let Some(parent) = t.parent else {
        for s in 0..nseg {
            forward(s)?;
        }
        return Ok(());
    };
    let (p0, k0) = seg(0);
    let mut pending = c.irecv(p0, k0, dtype, parent, TAG_BCAST)?;
    for s in 1..nseg {
        let (p, k) = seg(s);
        let next = c.irecv(p, k, dtype, parent, TAG_BCAST)?;
        c.wait(pending)?;
        forward(s - 1)?;
        pending = next;
    }
    c.wait(pending)?;
    forward(nseg - 1)
}

/// MPICH's long-message broadcasts: the data (as bytes) is scattered along a
/// binomial tree in `ceil(nbytes / n)`-byte pieces, then allgathered by
/// recursive doubling (`scatter_rdb_allgather`) or around a ring
/// (`scatter_LR_allgather`).
pub(crate) fn scatter_allgather(
    c: CommView,
    buf: *mut u8,
    count: usize,
    dtype: i32,
    root: i32,
    ring: bool,
) -> MpiResult<()> {
    let dt = dtype_of(dtype)?;
    let mut view = ByteView::new(buf, count, dt, c.rank == root);
    let nbytes = view.len();
    let tmp = view.ptr();
    let n = c.size;
    let rel = (c.rank - root + n) % n;
    let ss = nbytes.div_ceil(n as usize);
    // bytes of the pieces [a, b) (virtual ranks), clipped to the message
    let span = |a: i32, b: i32| -> (usize, usize) {
        let lo = (a as usize * ss).min(nbytes);
        let hi = (b.min(n) as usize * ss).min(nbytes);
        (lo, hi.saturating_sub(lo))
    };
    let real = |v: i32| (v + root) % n;

    // Binomial scatter: I get the pieces of my subtree [rel, rel + lowbit).
    let mut mask = 1;
    while mask < n {
        if rel & mask != 0 {
            let (off, len) = span(rel, rel + mask);
            if len > 0 {
                c.recv(boff(tmp, off), len, BYTE, real(rel - mask), TAG_BCAST)?;
            }
            break;
        }
        mask <<= 1;
    }
    mask >>= 1;
    while mask > 0 {
        if rel + mask < n {
            let (off, len) = span(rel + mask, rel + 2 * mask);
            if len > 0 {
                c.send(boff(tmp, off), len, BYTE, real(rel + mask), TAG_BCAST)?;
            }
        }
        mask >>= 1;
    }

    if ring {
        // Ring allgather: forward the piece received in the previous step.
        let left = (c.rank - 1 + n) % n;
        let right = (c.rank + 1) % n;
        let mut j = c.rank;
        let mut jnext = left;
        for _ in 1..n {
            let (soff, slen) = span((j - root + n) % n, (j - root + n) % n + 1);
            let (roff, rlen) = span((jnext - root + n) % n, (jnext - root + n) % n + 1);
            c.sendrecv(
                boff(tmp, soff),
                slen,
                BYTE,
                right,
                boff(tmp, roff),
                rlen,
                BYTE,
                left,
                TAG_BCAST,
            )?;
            j = jnext;
            jnext = (jnext - 1 + n) % n;
        }
    } else {
        // The scattered pieces, in ranks relative to the root.
        let real = |v: i32| (v + root) % n;
        let at = |v: i32| (v as usize * ss).min(nbytes);
        rdb_allgather_image(c, tmp, nbytes, rel, real, at, TAG_BCAST)?;
    }
    if c.rank != root {
        view.store();
    }
    Ok(())
}

/// MPICH's recursive-doubling allgather of a byte image of `total` bytes at
/// `image`, including its tree-forwarding fix-up for non-power-of-two sizes:
/// in virtual ranks (`rel` is mine, `real` gives a virtual rank's rank in `c`),
/// block `v` of the image starting at `off(v)` (`off(n)` = `total`). The
/// allgather `rdb` and the bcast `scatter_rdb_allgather` run it.
pub(crate) fn rdb_allgather_image(
    c: CommView,
    image: *mut u8,
    total: usize,
    rel: i32,
    real: impl Fn(i32) -> i32,
    off: impl Fn(i32) -> usize,
    tag: i32,
) -> MpiResult<()> {
    let n = c.size;
    let mut curr = off(rel + 1) - off(rel);
    let mut recv_size = 0usize;
    let mut mask = 1;
    let mut i = 0;
    while mask < n {
        let rdst = rel ^ mask;
        let dst_tree_root = (rdst >> i) << i;
        let my_tree_root = (rel >> i) << i;
        if rdst < n {
            let soff = off(my_tree_root);
            let roff = off(dst_tree_root);
            let st = c.sendrecv_status(
                boff(image, soff),
                curr,
                BYTE,
                real(rdst),
                boff(image, roff),
                total - roff,
                BYTE,
                real(rdst),
                tag,
            )?;
            recv_size = st.bytes;
            curr += recv_size;
        }
        if dst_tree_root + mask > n {
            let done = n - my_tree_root - mask;
            let mut k = 0;
            while (1 << (k + 1)) <= mask {
                k += 1;
            }
            let mut tmp_mask = mask >> 1;
            while tmp_mask > 0 {
                let rd = rel ^ tmp_mask;
                let tree_root = (rel >> k) << k;
                if rd > rel && rel < tree_root + done && rd >= tree_root + done {
                    let o = off(my_tree_root + mask);
                    c.send(boff(image, o), recv_size, BYTE, real(rd), tag)?;
                } else if rd < rel && rd < tree_root + done && rel >= tree_root + done {
                    let o = off(my_tree_root + mask);
                    let st = c.recv(boff(image, o), total - o, BYTE, real(rd), tag)?;
                    recv_size = st.bytes;
                    curr += recv_size;
                }
                tmp_mask >>= 1;
                k -= 1;
            }
        }
        mask <<= 1;
        i += 1;
    }
    Ok(())
}

/// Elements per segment of SMPI's NTS* / flattree_pipeline algorithms:
/// `bytes / extent`, at least 1.
fn nts_segment(bytes: isize, extent: isize) -> usize {
    if extent <= 0 {
        1
    } else {
        (bytes / extent).max(1) as usize
    }
}

/// If the root is not rank 0, it first sends the whole buffer to rank 0
/// (SMPI's NTSL and NTSB run from rank 0).
fn to_rank0(c: CommView, buf: *mut u8, count: usize, dtype: i32, root: i32) -> MpiResult<()> {
    if root != 0 {
        if c.rank == root {
            c.send(buf, count, dtype, 0, TAG_BCAST)?;
        } else if c.rank == 0 {
            c.recv(buf, count, dtype, root, TAG_BCAST)?;
        }
    }
    Ok(())
}

/// SMPI's `NTSL`: a chain 0 → 1 → ... → n-1 (after the root hands the data
/// to 0), in 8 KiB segments that are all posted at once (isend / irecv); a
/// message of one segment or less goes hop by hop with blocking calls; the
/// count % segment leftover elements then go through a second bcast (the
/// configured one).
fn ntsl(c: CommView, buf: *mut u8, count: usize, dtype: i32, root: i32) -> MpiResult<()> {
    let dt = dtype_of(dtype)?;
    let (n, r) = (c.size, c.rank);
    let to = (r + 1) % n;
    let from = (r + n - 1) % n;
    let seg = nts_segment(8192, dt.extent);
    to_rank0(c, buf, count, dtype, root)?;
    if count <= seg {
        if r == 0 {
            c.send(buf, count, dtype, to, TAG_BCAST)?;
        } else {
            c.recv(buf, count, dtype, from, TAG_BCAST)?;
            if r != n - 1 {
                c.send(buf, count, dtype, to, TAG_BCAST)?;
            }
        }
        return Ok(());
    }
    let pipe = count / seg;
    let at = |i: usize| elem(buf, &dt, i * seg);
    if r == 0 {
        let mut reqs = Vec::with_capacity(pipe);
        for i in 0..pipe {
            reqs.push(c.isend(at(i), seg, dtype, to, TAG_BCAST)?);
        }
        c.waitall(&reqs);
    } else {
        let mut recvs = Vec::with_capacity(pipe);
        for i in 0..pipe {
            recvs.push(c.irecv(at(i), seg, dtype, from, TAG_BCAST)?);
        }
        if r == n - 1 {
            c.waitall_checked(&recvs)?;
        } else {
            let mut sends = Vec::with_capacity(pipe);
            for (i, &rq) in recvs.iter().enumerate() {
                c.wait(rq)?;
                sends.push(c.isend(at(i), seg, dtype, to, TAG_BCAST)?);
            }
            c.waitall(&sends);
        }
    }
    tail(c, buf, count, dtype, root, pipe * seg)
}

/// The leftover elements `[done, count)` of a segmented bcast, through the
/// configured bcast (as SMPI does).
fn tail(c: CommView, buf: *mut u8, count: usize, dtype: i32, root: i32, done: usize) -> MpiResult<()> {
    if done < count {
        let dt = dtype_of(dtype)?;
        super::bcast(c, elem(buf, &dt, done), count - done, dtype, root)?;
    }
    Ok(())
}

/// SMPI's `NTSB`: the binary heap 0 → {1, 2}, 1 → {3, 4}, ... (after the
/// root hands the data to 0), in 8 KiB segments posted at once; small
/// messages hop by hop with blocking calls; the leftover elements through a
/// second bcast.
fn ntsb(c: CommView, buf: *mut u8, count: usize, dtype: i32, root: i32) -> MpiResult<()> {
    let dt = dtype_of(dtype)?;
    let (n, r) = (c.size, c.rank);
    let from = (r - 1) / 2;
    let kids: Vec<i32> = [2 * r + 1, 2 * r + 2].into_iter().filter(|&k| k < n).collect();
    let seg = nts_segment(8192, dt.extent);
    to_rank0(c, buf, count, dtype, root)?;
    if count <= seg {
        if r != 0 {
            c.recv(buf, count, dtype, from, TAG_BCAST)?;
        }
        for &k in &kids {
            c.send(buf, count, dtype, k, TAG_BCAST)?;
        }
        return Ok(());
    }
    let pipe = count / seg;
    let at = |i: usize| elem(buf, &dt, i * seg);
    let mut recvs = Vec::with_capacity(pipe);
    if r != 0 {
        for i in 0..pipe {
            recvs.push(c.irecv(at(i), seg, dtype, from, TAG_BCAST)?);
        }
    }
    if kids.is_empty() {
        c.waitall_checked(&recvs)?;
    } else {
        // sends ordered as SMPI's waitall sees them: all to the left child, then all to the right
        let mut sends = vec![0u32; pipe * kids.len()];
        for i in 0..pipe {
            if r != 0 {
                c.wait(recvs[i])?;
            }
            for (j, &k) in kids.iter().enumerate() {
                sends[j * pipe + i] = c.isend(at(i), seg, dtype, k, TAG_BCAST)?;
            }
        }
        c.waitall(&sends);
    }
    tail(c, buf, count, dtype, root, pipe * seg)
}

/// SMPI's `flattree_pipeline`: the root sends to each rank in turn all its
/// 8 KiB segments (blocking sends); the others post all their receives.
/// Fewer elements than a segment: `flattree`. SMPI never sends the count %
/// segment last elements; here they travel as a last, shorter segment.
fn flattree_pipeline(c: CommView, buf: *mut u8, count: usize, dtype: i32, root: i32) -> MpiResult<()> {
    let dt = dtype_of(dtype)?;
    let seg = nts_segment(8192, dt.extent);
    if count / seg == 0 {
        return flat(c, buf, count, dtype, root);
    }
    let nseg = count.div_ceil(seg);
    let piece = |i: usize| (elem(buf, &dt, i * seg), seg.min(count - i * seg));
    if c.rank != root {
        let mut reqs = Vec::with_capacity(nseg);
        for i in 0..nseg {
            let (p, k) = piece(i);
            reqs.push(c.irecv(p, k, dtype, root, TAG_BCAST)?);
        }
        return c.waitall_checked(&reqs);
    }
    for j in (0..c.size).filter(|&j| j != root) {
        for i in 0..nseg {
            let (p, k) = piece(i);
            c.send(p, k, dtype, j, TAG_BCAST)?;
        }
    }
    Ok(())
}

/// Open MPI's `split_bintree` (SMPI's transcription): the buffer is cut in two
/// halves; the root pipelines the first half down the subtree of virtual
/// rank 1 (odd virtual ranks) and the second down that of 2 (even ones), in
/// segments of 1 KiB (8 KiB from 370728 B), with blocking sends; then every
/// rank swaps halves with its neighbour in the other subtree (with an even
/// size, the root sends the second half to the last rank). Too small to split
/// in segments: SMPI's linear bcast, here `NTSL`.
fn split_bintree(c: CommView, buf: *mut u8, count: usize, dtype: i32, root: i32) -> MpiResult<()> {
    let dt = dtype_of(dtype)?;
    let (n, r) = (c.size, c.rank);
    let ts = dt.size.max(1);
    let segsize = if dt.size * count < 370728 { 1024 } else { 8192 }.max(ts);
    let segcount = segsize / ts;
    let counts = [count.div_ceil(2), count - count.div_ceil(2)];
    if counts[1] == 0 || segsize > counts[0] * ts || segsize > counts[1] * ts {
        return ntsl(c, buf, count, dtype, root);
    }
    let nseg = [counts[0].div_ceil(segcount), counts[1].div_ceil(segcount)];
    let half = [buf, elem(buf, &dt, counts[0])];
    // segment s of half h: (pointer, elements)
    let piece = |h: usize, s: usize| {
        (
            elem(half[h], &dt, s * segcount),
            segcount.min(counts[h] - s * segcount),
        )
    };
    let t = tree::ompi_tree(n, r, root, 2);
    let lr = (((r - root + n) % n + 1) % 2) as usize;
    if r == root {
        for s in 0..nseg[0] {
            for (h, &ch) in t.children.iter().enumerate().take(2) {
                if s < nseg[h] {
                    let (p, k) = piece(h, s);
                    c.send(p, k, dtype, ch, TAG_BCAST)?;
                }
            }
        }
    } else if let Some(parent) = t.parent {
        if t.children.is_empty() {
            for s in 0..nseg[lr] {
                let (p, k) = piece(lr, s);
                c.recv(p, k, dtype, parent, TAG_BCAST)?;
            }
        } else {
            let (p0, k0) = piece(lr, 0);
            let mut base = c.irecv(p0, k0, dtype, parent, TAG_BCAST)?;
            for s in 1..nseg[lr] {
                let (p, k) = piece(lr, s);
                let next = c.irecv(p, k, dtype, parent, TAG_BCAST)?;
                c.wait(base)?;
                let (q, kq) = piece(lr, s - 1);
                for &ch in &t.children {
                    c.send(q, kq, dtype, ch, TAG_BCAST)?;
                }
                base = next;
            }
            c.wait(base)?;
            let (q, kq) = piece(lr, nseg[lr] - 1);
            for &ch in &t.children {
                c.send(q, kq, dtype, ch, TAG_BCAST)?;
            }
        }
    }
    // swap halves with the pair in the other subtree
    let pair = if lr == 0 { (r + 1) % n } else { (r + n - 1) % n };
    let last = (root + n - 1) % n;
    let swap = || {
        c.sendrecv(
            half[lr],
            counts[lr],
            dtype,
            pair,
            half[1 - lr],
            counts[1 - lr],
            dtype,
            pair,
            TAG_BCAST,
        )
    };
    if n % 2 != 0 {
        if r != root {
            swap()?;
        }
    } else if r == root {
        c.send(half[1], counts[1], dtype, last, TAG_BCAST)?;
    } else if r == last {
        c.recv(half[1], counts[1], dtype, root, TAG_BCAST)?;
    } else {
        swap()?;
    }
    Ok(())
}

/// MVAPICH2's intra-node k-nomial bcast (SMPI's
/// `mvapich2_knomial_intra_node`, k = 4): receive from the parent, then for
/// each level, largest distance first, isend to the (up to k - 1) children of
/// that level and wait for them.
pub(crate) fn knomial(
    c: CommView,
    buf: *mut u8,
    count: usize,
    dtype: i32,
    root: i32,
    k: i32,
) -> MpiResult<()> {
    // SMPI's version first makes the communicator's SMP layout (its first call pays for it)
    super::smp::layout(c)?;
    let (n, r) = (c.size, c.rank);
    let rel = (r - root + n) % n;
    let mut mask = 1;
    while mask < n {
        if rel % (k * mask) != 0 {
            let src = (rel / (k * mask) * (k * mask) + root) % n;
            c.recv(buf, count, dtype, src, TAG_BCAST)?;
            break;
        }
        mask *= k;
    }
    mask /= k;
    while mask > 0 {
        let mut reqs = Vec::new();
        for j in 1..k {
            if rel + mask * j < n {
                reqs.push(c.isend(buf, count, dtype, (r + mask * j) % n, TAG_BCAST)?);
            }
        }
        c.waitall(&reqs);
        mask /= k;
    }
    Ok(())
}
