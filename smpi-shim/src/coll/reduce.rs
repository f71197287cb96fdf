//! MPI_Reduce.

use super::select::{self, pick};
use super::tree::{self, Tree};
use super::{
    apply_op, bcast::seg_count, contribution, dtype_of, local_copy, pof2_floor, CommView, Reducer, TempBuf,
    TAG_REDUCE,
};
use super::{trees_rab, trees_reduce};
use crate::mpi::{self as rt, with_world, MpiResult};

pub(super) const KNOWN: &[&str] = &[
    "ompi_basic_linear",
    "flat_tree",
    "binomial",
    "scatter_gather",
    "ompi_chain",
    "ompi_pipeline",
    "ompi_binary",
    "ompi_binomial",
    "ompi_in_order_binary",
    "NTSL",
    "mvapich2_knomial",
    "rab",
    "arrival_pattern_aware",
    "mvapich2_two_level",
];

/// SMPI default: a non-blocking linear gather to the root (commutative op on a
/// predefined type), else `ompi_basic_linear`.
pub(crate) fn run(
    c: CommView,
    sbuf: *const u8,
    rbuf: *mut u8,
    count: usize,
    dtype: i32,
    op: i32,
    root: i32,
) -> MpiResult<()> {
    c.check_root(root)?;
    let red = Reducer::new(op, dtype)?;
    let bytes = red.bytes(count);
    let n = c.size;
    let algo = pick(
        "reduce",
        KNOWN,
        select::Facts {
            commutative: red.commutative,
            count,
            ..select::Facts::new(c, bytes)
        },
        || "default",
        || select::ompi_reduce(n, bytes, red.commutative),
        || select::mpich_reduce(n, count, bytes, red.commutative),
    )?;
    match algo {
        "default" => default_reduce(c, sbuf, rbuf, count, dtype, op, root),
        "ompi_basic_linear" => linear(c, sbuf, rbuf, count, dtype, op, root),
        "mvapich2_two_level" => {
            super::smp_reduce::mvapich2_two_level(c, sbuf, rbuf, count, dtype, op, root, None)
        }
        // the mvapich2 selector's two-level reduces (select_mvapich2.rs)
        _ if algo.starts_with("mv2_tl_") => {
            let tuned = super::select_mvapich2::reduce_two_level(algo);
            super::smp_reduce::mvapich2_two_level(c, sbuf, rbuf, count, dtype, op, root, Some(tuned))
        }
        _ => {
            let sbuf = contribution(sbuf, rbuf);
            if count == 0 {
                return Ok(());
            }
            let r = c.rank;
            let args = trees_reduce::Args {
                sbuf,
                rbuf,
                count,
                op,
                root,
            };
            // A segmented reduction to `root` along tree `t` rooted at `tr`.
            let segmented =
                |tr: i32, t: &Tree, seg: usize| generic(c, sbuf, rbuf, count, &red, root, tr, t, seg);
            match algo {
                "flat_tree" => flat_tree(c, sbuf, rbuf, count, &red, root),
                "binomial" => binomial(c, sbuf, rbuf, count, &red, root),
                "scatter_gather" => scatter_gather(c, sbuf, rbuf, count, &red, root),
                // Open MPI's segmented tree reductions. Non-commutative ops use a
                // tree of consecutive ranks rooted at 0 (then rank 0 forwards the
                // result), or the in-order binary tree.
                "ompi_chain" => {
                    // chain fanout n/2, 64 KiB segments
                    let seg = seg_count(64 << 10, red.dt.size, count);
                    let fanout = (n / 2).max(1);
                    let tr = if red.commutative { root } else { 0 };
                    segmented(tr, &tree::chain(n, r, tr, fanout), seg)
                }
                "ompi_pipeline" => {
                    // chain fanout 1; segments of 1 KiB, 32 KiB or 64 KiB (Open MPI's rule)
                    let m = bytes as f64;
                    let segsize = if n as f64 > 0.0410 / 1024.0 * m + 9.7128 {
                        1 << 10
                    } else if n as f64 > 0.0033 / 1024.0 * m + 1.6761 {
                        32 << 10
                    } else {
                        64 << 10
                    };
                    let seg = seg_count(segsize, red.dt.size, count);
                    let tr = if red.commutative { root } else { 0 };
                    segmented(tr, &tree::chain(n, r, tr, 1), seg)
                }
                "ompi_binary" => {
                    // binary tree, 32 KiB segments; in-order binary tree if non-commutative
                    let seg = seg_count(32 << 10, red.dt.size, count);
                    if red.commutative {
                        segmented(root, &tree::ompi_tree(n, r, root, 2), seg)
                    } else {
                        segmented(n - 1, &tree::in_order_binary(n, r), seg)
                    }
                }
                "ompi_binomial" => {
                    // binomial tree, no segments (or 1 KiB ones, Open MPI's rule)
                    let segsize = if (n < 8 && bytes < 20480) || bytes < 2048 || count <= 1 {
                        0
                    } else if n as f64 > 0.6016 / 1024.0 * bytes as f64 + 1.3496 {
                        1024
                    } else {
                        0
                    };
                    let seg = seg_count(segsize, red.dt.size, count);
                    let tr = if red.commutative { root } else { 0 };
                    segmented(tr, &tree::binomial(n, r, tr), seg)
                }
                "rab" => trees_rab::rab(c, sbuf, rbuf, count, &red, Some(root)),
                "NTSL" => trees_reduce::ntsl(c, &args, &red),
                "mvapich2_knomial" => trees_reduce::knomial(c, &args, &red),
                "arrival_pattern_aware" => trees_reduce::arrival_pattern_aware(c, &args, &red),
                // in-order binary tree rooted at n-1, no segments
                _ => segmented(n - 1, &tree::in_order_binary(n, r), count),
            }
        }
    }
}

/// SMPI's `reduce__default`.
pub(crate) fn default_reduce(
    c: CommView,
    sbuf: *const u8,
    rbuf: *mut u8,
    count: usize,
    dtype: i32,
    op: i32,
    root: i32,
) -> MpiResult<()> {
    let (commutative, dt) =
        with_world(|w| Ok::<_, rt::MpiError>((w.op(op)?.is_commutative(), w.dtype(dtype)?)))?;
    if !commutative || !dt.predefined {
        linear(c, sbuf, rbuf, count, dtype, op, root)
    } else {
        linear_nb(c, sbuf, rbuf, count, dtype, op, root)
    }
}

/// Non-blocking linear reduce: every non-root sends to the root; the root
/// posts all receives, waits for them, and reduces in rank order.
fn linear_nb(
    c: CommView,
    sbuf: *const u8,
    rbuf: *mut u8,
    count: usize,
    dtype: i32,
    op: i32,
    root: i32,
) -> MpiResult<()> {
    let dt = dtype_of(dtype)?;
    let sbuf = contribution(sbuf, rbuf);
    if c.rank != root {
        let r = c.isend(sbuf, count, dtype, root, TAG_REDUCE)?;
        c.waitall(&[r]);
        return Ok(());
    }
    let mut temps: Vec<TempBuf> = Vec::new();
    let mut reqs = Vec::new();
    for i in 0..c.size {
        if i == root {
            continue;
        }
        let mut t = TempBuf::new(&dt, count);
        reqs.push(c.irecv(t.ptr(), count, dtype, i, TAG_REDUCE)?);
        temps.push(t);
    }
    c.waitall(&reqs);
    // SMPI's order: start from the root's own data, then acc = x_src op acc for
    // every other source in ascending rank order.
    let mut acc = TempBuf::new(&dt, count);
    local_copy(sbuf, count, dtype, acc.ptr(), count, dtype)?;
    let mut k = 0;
    for i in 0..c.size {
        if i == root {
            continue;
        }
        apply_op(op, dtype, temps[k].ptr(), acc.ptr(), count)?;
        k += 1;
    }
    local_copy(acc.ptr(), count, dtype, rbuf, count, dtype)
}

/// Blocking linear reduce (ompi_basic_linear): the root receives from each rank
/// in decreasing rank order and reduces as data arrives.
pub(crate) fn linear(
    c: CommView,
    sbuf: *const u8,
    rbuf: *mut u8,
    count: usize,
    dtype: i32,
    op: i32,
    root: i32,
) -> MpiResult<()> {
    let sbuf = contribution(sbuf, rbuf);
    if c.rank != root {
        return c.send(sbuf, count, dtype, root, TAG_REDUCE);
    }
    let dt = dtype_of(dtype)?;
    let mut acc = TempBuf::new(&dt, count);
    let mut tmp = TempBuf::new(&dt, count);
    let last = c.size - 1;
    if last == root {
        local_copy(sbuf, count, dtype, acc.ptr(), count, dtype)?;
    } else {
        c.recv(acc.ptr(), count, dtype, last, TAG_REDUCE)?;
    }
    for i in (0..last).rev() {
        if i == root {
            apply_op(op, dtype, sbuf, acc.ptr(), count)?;
        } else {
            c.recv(tmp.ptr(), count, dtype, i, TAG_REDUCE)?;
            apply_op(op, dtype, tmp.ptr(), acc.ptr(), count)?;
        }
    }
    local_copy(acc.ptr(), count, dtype, rbuf, count, dtype)
}

/// SMPI's `flat_tree`: the root receives (blocking) from the last rank, then
/// from every other rank in decreasing rank order, and accumulates
/// `acc = x_i op acc`, so the result is `x_0 op (x_1 op (... op x_{n-1}))`.
fn flat_tree(
    c: CommView,
    sbuf: *const u8,
    rbuf: *mut u8,
    count: usize,
    red: &Reducer,
    root: i32,
) -> MpiResult<()> {
    if c.rank != root {
        return c.send(sbuf, count, red.dtype, root, TAG_REDUCE);
    }
    // The last rank's contribution first, then the others from the
    // second-to-last down to rank 0, each reduced on the left (SMPI's order).
    let last = c.size - 1;
    let mut acc = red.temp(count);
    let mut tmp = red.temp(count);
    if root == last {
        local_copy(sbuf, count, red.dtype, acc.ptr(), count, red.dtype)?;
    } else {
        c.recv(acc.ptr(), count, red.dtype, last, TAG_REDUCE)?;
    }
    for i in (0..last).rev() {
        let x = if i == root {
            sbuf
        } else {
            c.recv(tmp.ptr(), count, red.dtype, i, TAG_REDUCE)?;
            tmp.ptr()
        };
        red.left(x, acc.ptr(), count)?;
    }
    local_copy(acc.ptr(), count, red.dtype, rbuf, count, red.dtype)
}

/// MPICH's binomial reduce (blocking). Commutative ops use the tree rooted at
/// `root`; others the tree of ranks rooted at 0 (every subtree is a range of
/// consecutive ranks), and rank 0 then sends the result to `root`.
pub(crate) fn binomial(
    c: CommView,
    sbuf: *const u8,
    rbuf: *mut u8,
    count: usize,
    red: &Reducer,
    root: i32,
) -> MpiResult<()> {
    let n = c.size;
    let tr = if red.commutative { root } else { 0 };
    let mut acc = red.temp(count);
    let mut tmp = red.temp(count);
    local_copy(sbuf, count, red.dtype, acc.ptr(), count, red.dtype)?;
    let rel = (c.rank - tr + n) % n;
    let mut mask = 1;
    while mask < n {
        if rel & mask == 0 {
            let src_rel = rel | mask;
            if src_rel < n {
                let src = (src_rel + tr) % n;
                c.recv(tmp.ptr(), count, red.dtype, src, TAG_REDUCE)?;
                if red.commutative {
                    red.left(tmp.ptr(), acc.ptr(), count)?;
                } else {
                    red.right(acc.ptr(), tmp.ptr(), count)?;
                }
            }
        } else {
            let dst = ((rel & !mask) + tr) % n;
            c.send(acc.ptr(), count, red.dtype, dst, TAG_REDUCE)?;
            break;
        }
        mask <<= 1;
    }
    deliver(c, &mut acc, rbuf, count, red, root, tr)
}

/// The tree root `tr` holds the result in `acc`: copy it out at the root, or
/// send it there.
fn deliver(
    c: CommView,
    acc: &mut TempBuf,
    rbuf: *mut u8,
    count: usize,
    red: &Reducer,
    root: i32,
    tr: i32,
) -> MpiResult<()> {
    if tr == root {
        if c.rank == root {
            local_copy(acc.ptr(), count, red.dtype, rbuf, count, red.dtype)?;
        }
    } else if c.rank == tr {
        c.send(acc.ptr(), count, red.dtype, root, TAG_REDUCE)?;
    } else if c.rank == root {
        c.recv(rbuf, count, red.dtype, tr, TAG_REDUCE)?;
    }
    Ok(())
}

/// Open MPI's generic segmented tree reduction (`reduce_generic`, as SMPI
/// transcribes it). A leaf sends its segments to its parent (blocking). An
/// inner node walks the (segment, child) pairs in order, keeping two receives
/// in flight: post the receive of the current pair, wait for the previous one
/// and combine it; once the last child's piece of a segment is in, send that
/// segment to the parent (blocking). Children are combined in rank order
/// around the node, which is right for non-commutative ops when every subtree
/// is a range of consecutive ranks (chain and binomial trees rooted at 0,
/// in-order binary tree).
fn generic(
    c: CommView,
    sbuf: *const u8,
    rbuf: *mut u8,
    count: usize,
    red: &Reducer,
    root: i32,
    tr: i32,
    t: &Tree,
    segcount: usize,
) -> MpiResult<()> {
    let me = c.rank;
    let segcount = segcount.clamp(1, count);
    let nseg = count.div_ceil(segcount);
    let len = |s: usize| segcount.min(count - s * segcount);
    let mut acc = red.temp(count);
    local_copy(sbuf, count, red.dtype, acc.ptr(), count, red.dtype)?;
    if t.children.is_empty() {
        if let Some(p) = t.parent {
            for s in 0..nseg {
                c.send(red.at(acc.ptr(), s * segcount), len(s), red.dtype, p, TAG_REDUCE)?;
            }
        }
        return deliver(c, &mut acc, rbuf, count, red, root, tr);
    }
    let mut inbuf = [red.temp(segcount), red.temp(segcount)];
    // the request in each buffer and its (segment, child)
    let mut reqs: [Option<(u32, usize, i32)>; 2] = [None, None];
    let mut inbi = 0;
    'segments: for s in 0..=nseg {
        for (i, &ch) in t.children.iter().enumerate() {
            if s < nseg {
                let rq = c.irecv(inbuf[inbi].ptr(), len(s), red.dtype, ch, TAG_REDUCE)?;
                reqs[inbi] = Some((rq, s, ch));
            }
            if let Some((rq, ps, pch)) = reqs[inbi ^ 1].take() {
                c.wait(rq)?;
                red.combine(
                    pch < me,
                    inbuf[inbi ^ 1].ptr(),
                    red.at(acc.ptr(), ps * segcount),
                    len(ps),
                )?;
            }
            if i == 0 && s > 0 {
                // every child's piece of segment s - 1 is in
                if let Some(p) = t.parent {
                    c.send(
                        red.at(acc.ptr(), (s - 1) * segcount),
                        len(s - 1),
                        red.dtype,
                        p,
                        TAG_REDUCE,
                    )?;
                }
                if s == nseg {
                    break 'segments;
                }
            }
            inbi ^= 1;
        }
    }
    deliver(c, &mut acc, rbuf, count, red, root, tr)
}

/// MPICH's `reduce_redscat_gather` (Rabenseifner), as SMPI 3.32 runs it:
/// recursive-halving reduce-scatter among the largest power of two ranks
/// (odd ranks below 2·rem first hand their data to rank − 1), then a
/// binomial gather of the pieces to the root. When the root is one of the
/// excluded odd ranks, rank 0 hands it the first piece and the root takes
/// rank 0's place in the gather. A vector shorter than the communicator is
/// padded to one element per rank (SMPI's messages then carry the padding;
/// on a non-power-of-two size SMPI's first step then fails with
/// `MPI_ERR_TRUNCATE`, where we send the padded vector both ways). Keeps
/// rank order for non-commutative ops.
pub(crate) fn scatter_gather(
    c: CommView,
    sbuf: *const u8,
    rbuf: *mut u8,
    count: usize,
    red: &Reducer,
    root: i32,
) -> MpiResult<()> {
    if count == 0 {
        return Ok(());
    }
    let n = c.size;
    let rank = c.rank;
    let pof2 = pof2_floor(n);
    let rem = n - pof2;
    let dtype = red.dtype;
    let total = count.max(n as usize);
    let mut acc = red.temp(total);
    let mut tmp = red.temp(total);
    local_copy(sbuf, count, dtype, acc.ptr(), count, dtype)?;
    let mut newrank = if rank < 2 * rem {
        if rank % 2 == 1 {
            c.send(acc.ptr(), total, dtype, rank - 1, TAG_REDUCE)?;
            -1
        } else {
            c.recv(tmp.ptr(), total, dtype, rank + 1, TAG_REDUCE)?;
            red.right(acc.ptr(), tmp.ptr(), total)?;
            rank / 2
        }
    } else {
        rank - rem
    };
    let real = |nr: i32| if nr < rem { nr * 2 } else { nr + rem };
    let p = pof2 as usize;
    // block i spans [disp(i), disp(i + 1)); the last one holds the remainder
    let disp = |i: usize| if i < p { i * (total / p) } else { total };
    let span = |a: usize, b: usize| disp(b) - disp(a);
    let (mut send_idx, mut recv_idx, mut last_idx) = (0usize, 0usize, p);
    if newrank != -1 {
        let mut mask = 1;
        while mask < pof2 {
            let newdst = newrank ^ mask;
            let half = p / (mask as usize * 2);
            let (scnt, rcnt) = if newrank < newdst {
                send_idx = recv_idx + half;
                (span(send_idx, last_idx), span(recv_idx, send_idx))
            } else {
                recv_idx = send_idx + half;
                (span(send_idx, recv_idx), span(recv_idx, last_idx))
            };
            c.sendrecv(
                red.at(acc.ptr(), disp(send_idx)),
                scnt,
                dtype,
                real(newdst),
                red.at(tmp.ptr(), disp(recv_idx)),
                rcnt,
                dtype,
                real(newdst),
                TAG_REDUCE,
            )?;
            red.combine(
                newdst < newrank,
                red.at(tmp.ptr(), disp(recv_idx)),
                red.at(acc.ptr(), disp(recv_idx)),
                rcnt,
            )?;
            send_idx = recv_idx;
            mask <<= 1;
            if mask < pof2 {
                last_idx = recv_idx + p / mask as usize;
            }
        }
    }
    // the gather
    let odd_root = root < 2 * rem && root % 2 == 1;
    let newroot = if odd_root {
        if rank == root {
            c.recv(acc.ptr(), span(0, 1), dtype, 0, TAG_REDUCE)?;
            newrank = 0;
            send_idx = 0;
            last_idx = 2;
        } else if newrank == 0 {
            c.send(acc.ptr(), span(0, 1), dtype, root, TAG_REDUCE)?;
            newrank = -1;
        }
        0
    } else if root < 2 * rem {
        root / 2
    } else {
        root - rem
    };
    if newrank != -1 {
        let mut mask = pof2 / 2;
        let mut j = pof2.trailing_zeros() as i32 - 1;
        while mask > 0 {
            let newdst = newrank ^ mask;
            let dst = if newdst == 0 && odd_root {
                root
            } else {
                real(newdst)
            };
            let half = p / (mask as usize * 2);
            let (scnt, rcnt) = if newrank < newdst {
                if mask != pof2 / 2 {
                    last_idx += half;
                }
                recv_idx = send_idx + half;
                (span(send_idx, recv_idx), span(recv_idx, last_idx))
            } else {
                recv_idx = send_idx - half;
                (span(send_idx, last_idx), span(recv_idx, send_idx))
            };
            if (newdst >> j) == (newroot >> j) {
                c.send(red.at(acc.ptr(), disp(send_idx)), scnt, dtype, dst, TAG_REDUCE)?;
                break;
            }
            c.recv(red.at(acc.ptr(), disp(recv_idx)), rcnt, dtype, dst, TAG_REDUCE)?;
            if newrank > newdst {
                send_idx = recv_idx;
            }
            mask >>= 1;
            j -= 1;
        }
    }
    if rank == root {
        local_copy(acc.ptr(), count, dtype, rbuf, count, dtype)?;
    }
    Ok(())
}
