//! MPI_Reduce_scatter (and MPI_Reduce_scatter_block).

use super::select::{self, pick};
use super::{
    gather, is_pof2, local_copy, pof2_floor, reduce, CommView, Reducer, TempBuf, IN_PLACE, TAG_REDUCE_SCATTER,
};
use crate::mpi::MpiResult;

pub(super) const KNOWN: &[&str] = &[
    "ompi_basic_recursivehalving",
    "ompi_ring",
    "mpich_pair",
    "mpich_noncomm",
    "mpich_rdb",
    "ompi_butterfly",
];

/// SMPI default: with equal counts, the default reduce of the whole vector to
/// rank 0, then a linear scatterv; with unequal counts, MPICH's choice. The
/// other algorithms need a commutative op (else they run the default), except
/// `mpich_noncomm`, which needs a power-of-two size and equal counts (else the
/// default), and `mpich_rdb` and `ompi_butterfly`, which take any op.
pub(crate) fn run(
    c: CommView,
    sbuf: *const u8,
    rbuf: *mut u8,
    rcounts: &[usize],
    dtype: i32,
    op: i32,
) -> MpiResult<()> {
    let red = Reducer::new(op, dtype)?;
    let total: usize = rcounts.iter().sum();
    let bytes = red.bytes(total);
    let n = c.size;
    let regular = rcounts.iter().all(|&k| k == rcounts[0]);
    let mpich = || select::mpich_reduce_scatter(n, total, red.commutative, regular);
    let algo = pick(
        "reduce_scatter",
        KNOWN,
        select::Facts {
            commutative: red.commutative,
            regular,
            ..select::Facts::new(c, bytes)
        },
        || if regular { "default" } else { mpich() },
        || select::ompi_reduce_scatter(n, bytes, red.commutative),
        mpich,
    )?;
    if algo == "mvapich2_noncomm_rdb" {
        // SMPI's MVAPICH2 selector: both, one after the other (in place,
        // SMPI's second run reads the first one's result; both read the
        // input here).
        let mut keep = None;
        let sbuf = if std::ptr::eq(sbuf, IN_PLACE) {
            let mut t = red.temp(total);
            local_copy(rbuf, total, dtype, t.ptr(), total, dtype)?;
            let p = t.ptr() as *const u8;
            keep = Some(t);
            p
        } else {
            sbuf
        };
        run_named(c, sbuf, rbuf, rcounts, dtype, op, "mpich_noncomm")?;
        let r = run_named(c, sbuf, rbuf, rcounts, dtype, op, "mpich_rdb");
        drop(keep);
        return r;
    }
    run_named(c, sbuf, rbuf, rcounts, dtype, op, algo)
}

/// Runs `algo` (after the fallbacks for operations and sizes it does not take).
fn run_named(
    c: CommView,
    sbuf: *const u8,
    rbuf: *mut u8,
    rcounts: &[usize],
    dtype: i32,
    op: i32,
    algo: &'static str,
) -> MpiResult<()> {
    let red = Reducer::new(op, dtype)?;
    let total: usize = rcounts.iter().sum();
    let n = c.size;
    let regular = rcounts.iter().all(|&k| k == rcounts[0]);
    let algo = match algo {
        "mpich_noncomm" if !(is_pof2(n) && regular) => "default",
        "mpich_noncomm" | "mpich_rdb" | "ompi_butterfly" => algo,
        _ if !red.commutative => "default",
        _ => algo,
    };
    if algo == "default" {
        return default(c, sbuf, rbuf, rcounts, dtype, op, &red);
    }
    if total == 0 && algo != "ompi_butterfly" {
        return Ok(());
    }
    // the input vector (MPI_IN_PLACE: it is in rbuf, which receives the result)
    let mut copy = None;
    let input = if std::ptr::eq(sbuf, IN_PLACE) {
        let mut t = red.temp(total);
        local_copy(rbuf, total, dtype, t.ptr(), total, dtype)?;
        let p = t.ptr() as *const u8;
        copy = Some(t);
        p
    } else {
        sbuf
    };
    let mut disp = Vec::with_capacity(n as usize + 1);
    let mut acc = 0;
    for &k in rcounts {
        disp.push(acc);
        acc += k;
    }
    disp.push(acc);
    let r = match algo {
        "ompi_basic_recursivehalving" => recursive_halving(c, input, rbuf, rcounts, &disp, &red),
        "ompi_ring" => ring(c, input, rbuf, rcounts, &disp, &red),
        "mpich_pair" => pair(c, input, rbuf, rcounts, &disp, &red),
        "mpich_rdb" => recursive_doubling(c, input, rbuf, rcounts, &disp, &red),
        "ompi_butterfly" => butterfly(c, input, rbuf, rcounts, &disp, &red),
        _ => noncomm(c, input, rbuf, rcounts[0], &red),
    };
    drop(copy);
    r
}

fn default(
    c: CommView,
    sbuf: *const u8,
    rbuf: *mut u8,
    rcounts: &[usize],
    dtype: i32,
    op: i32,
    red: &Reducer,
) -> MpiResult<()> {
    let total: usize = rcounts.iter().sum();
    let mut tmp = red.temp(total);
    let sbuf = super::contribution(sbuf, rbuf);
    reduce::default_reduce(c, sbuf, tmp.ptr(), total, dtype, op, 0)?;
    let mut displs = Vec::with_capacity(rcounts.len());
    let mut d = 0isize;
    for &n in rcounts {
        displs.push(d);
        d += n as isize;
    }
    let mine = rcounts[c.rank as usize];
    gather::scatterv_linear(c, tmp.ptr(), rcounts, &displs, dtype, rbuf, mine, dtype, 0)
}

/// Open MPI's `basic_recursivehalving`: even ranks below 2·rem hand their
/// vector to rank + 1; among the pof2 others (rank i stands for the blocks of
/// its one or two real ranks), recursive halving starting with the largest
/// distance (irecv, blocking send, wait); finally every rank gets its block,
/// the odd helpers sending their even neighbours' blocks.
fn recursive_halving(
    c: CommView,
    input: *const u8,
    rbuf: *mut u8,
    rcounts: &[usize],
    disp: &[usize],
    red: &Reducer,
) -> MpiResult<()> {
    let (n, rank) = (c.size, c.rank);
    let dtype = red.dtype;
    let total = disp[n as usize];
    let mut acc = red.temp(total);
    let mut tmp = red.temp(total);
    local_copy(input, total, dtype, acc.ptr(), total, dtype)?;
    let size = pof2_floor(n);
    let rem = n - size;
    let tmp_rank = if rank < 2 * rem {
        if rank % 2 == 0 {
            c.send(acc.ptr(), total, dtype, rank + 1, TAG_REDUCE_SCATTER)?;
            -1
        } else {
            c.recv(tmp.ptr(), total, dtype, rank - 1, TAG_REDUCE_SCATTER)?;
            red.left(tmp.ptr(), acc.ptr(), total)?;
            rank / 2
        }
    } else {
        rank - rem
    };
    if tmp_rank >= 0 {
        // virtual rank v covers real ranks {2v, 2v+1} (v < rem) or {v + rem}
        // (first_real(size) = n)
        let first_real = |v: i32| if v < rem { 2 * v } else { v + rem };
        let vdisp = |v: i32| disp[first_real(v) as usize];
        let real = |v: i32| if v < rem { 2 * v + 1 } else { v + rem };
        let (mut send_idx, mut recv_idx, mut last_idx) = (0, 0, size);
        let mut mask = size >> 1;
        while mask > 0 {
            let peer_v = tmp_rank ^ mask;
            let peer = real(peer_v);
            if tmp_rank < peer_v {
                send_idx = recv_idx + mask;
            } else {
                recv_idx = send_idx + mask;
            }
            let (s_lo, s_hi, r_lo, r_hi) = if tmp_rank < peer_v {
                (send_idx, last_idx, recv_idx, send_idx)
            } else {
                (send_idx, recv_idx, recv_idx, last_idx)
            };
            let (soff, scnt) = (vdisp(s_lo), vdisp(s_hi) - vdisp(s_lo));
            let (roff, rcnt) = (vdisp(r_lo), vdisp(r_hi) - vdisp(r_lo));
            let req = if rcnt > 0 {
                Some(c.irecv(red.at(tmp.ptr(), roff), rcnt, dtype, peer, TAG_REDUCE_SCATTER)?)
            } else {
                None
            };
            if scnt > 0 {
                c.send(red.at(acc.ptr(), soff), scnt, dtype, peer, TAG_REDUCE_SCATTER)?;
            }
            if let Some(req) = req {
                c.wait(req)?;
                red.left(red.at(tmp.ptr(), roff), red.at(acc.ptr(), roff), rcnt)?;
            }
            send_idx = r_lo;
            last_idx = r_lo + mask;
            mask >>= 1;
        }
        let me = rank as usize;
        local_copy(
            red.at(acc.ptr(), disp[me]),
            rcounts[me],
            dtype,
            rbuf,
            rcounts[me],
            dtype,
        )?;
        if tmp_rank < rem {
            let e = me - 1;
            c.send(
                red.at(acc.ptr(), disp[e]),
                rcounts[e],
                dtype,
                rank - 1,
                TAG_REDUCE_SCATTER,
            )?;
        }
    } else {
        c.recv(rbuf, rcounts[rank as usize], dtype, rank + 1, TAG_REDUCE_SCATTER)?;
    }
    Ok(())
}

/// Open MPI's ring reduce-scatter: block b travels b+1 → b+2 → ... → b,
/// accumulating; one receive kept ahead, blocking sends.
fn ring(
    c: CommView,
    input: *const u8,
    rbuf: *mut u8,
    rcounts: &[usize],
    disp: &[usize],
    red: &Reducer,
) -> MpiResult<()> {
    let n = c.size as usize;
    let rank = c.rank as usize;
    let dtype = red.dtype;
    let total = disp[n];
    let mut acc = red.temp(total);
    local_copy(input, total, dtype, acc.ptr(), total, dtype)?;
    if n == 1 {
        return local_copy(acc.ptr(), total, dtype, rbuf, rcounts[0], dtype);
    }
    let max_block = rcounts.iter().copied().max().unwrap_or(0);
    let mut inbuf = [red.temp(max_block), red.temp(max_block)];
    let send_to = ((rank + 1) % n) as i32;
    let recv_from = ((rank + n - 1) % n) as i32;
    let mut inbi = 0;
    let mut reqs = [0u32; 2];
    reqs[inbi] = c.irecv(inbuf[inbi].ptr(), max_block, dtype, recv_from, TAG_REDUCE_SCATTER)?;
    let first = (rank + n - 1) % n;
    c.send(
        red.at(acc.ptr(), disp[first]),
        rcounts[first],
        dtype,
        send_to,
        TAG_REDUCE_SCATTER,
    )?;
    for k in 2..n {
        let prev = (rank + n - k) % n;
        inbi ^= 1;
        reqs[inbi] = c.irecv(inbuf[inbi].ptr(), max_block, dtype, recv_from, TAG_REDUCE_SCATTER)?;
        c.wait(reqs[inbi ^ 1])?;
        let a = red.at(acc.ptr(), disp[prev]);
        red.left(inbuf[inbi ^ 1].ptr(), a, rcounts[prev])?;
        c.send(a, rcounts[prev], dtype, send_to, TAG_REDUCE_SCATTER)?;
    }
    c.wait(reqs[inbi])?;
    let a = red.at(acc.ptr(), disp[rank]);
    red.left(inbuf[inbi].ptr(), a, rcounts[rank])?;
    local_copy(a, rcounts[rank], dtype, rbuf, rcounts[rank], dtype)
}

/// MPICH's pairwise exchange: at step i, send block rank + i to rank + i and
/// receive my block's contribution from rank − i.
fn pair(
    c: CommView,
    input: *const u8,
    rbuf: *mut u8,
    rcounts: &[usize],
    disp: &[usize],
    red: &Reducer,
) -> MpiResult<()> {
    let (n, rank) = (c.size, c.rank);
    let dtype = red.dtype;
    let me = rank as usize;
    let k = rcounts[me];
    let mut acc = red.temp(k);
    let mut tmp = red.temp(k);
    local_copy(red.at(input, disp[me]), k, dtype, acc.ptr(), k, dtype)?;
    for i in 1..n {
        let dst = (rank + i) % n;
        let src = (rank - i + n) % n;
        let d = dst as usize;
        c.sendrecv(
            red.at(input, disp[d]),
            rcounts[d],
            dtype,
            dst,
            tmp.ptr(),
            k,
            dtype,
            src,
            TAG_REDUCE_SCATTER,
        )?;
        red.left(tmp.ptr(), acc.ptr(), k)?;
    }
    local_copy(acc.ptr(), k, dtype, rbuf, k, dtype)
}

/// The two blocks of the whole vector a rank of tree `root` (of `mask` ranks)
/// exchanges in MPICH's recursive doubling: everything before the tree's
/// blocks and everything after, as (offset, count) in elements.
fn outside_tree(disp: &[usize], n: usize, root: usize, mask: usize) -> [(usize, usize); 2] {
    let total = disp[n];
    let end = disp[(root + mask).min(n)];
    [(0, disp[root.min(n)]), (end, total - end)]
}

/// Packs the two blocks of `buf` into `packed` (contiguous), or unpacks.
fn move_blocks(
    red: &Reducer,
    buf: *mut u8,
    packed: *mut u8,
    blocks: &[(usize, usize); 2],
    pack: bool,
) -> MpiResult<()> {
    let dtype = red.dtype;
    let mut at = 0;
    for &(off, k) in blocks {
        let (from, to) = if pack {
            (red.at(buf, off), red.at(packed, at))
        } else {
            (red.at(packed, at), red.at(buf, off))
        };
        local_copy(from, k, dtype, to, k, dtype)?;
        at += k;
    }
    Ok(())
}

/// MPICH's recursive-doubling reduce-scatter (`mpich_rdb`, any op, any
/// counts; SMPI 3.32's choice for unequal counts below 524288 elements): at
/// distance 1, 2, 4, ... each rank exchanges with `rank ^ mask` everything
/// outside its own and its partner's subtree (one message each way: SMPI
/// sends an indexed type of the two blocks), then, for a non-power-of-two
/// size, ranks without a partner get the data from their subtree by
/// recursive halving; each rank reduces what it received into its vector
/// (in rank order for a non-commutative op) and keeps its own block.
fn recursive_doubling(
    c: CommView,
    input: *const u8,
    rbuf: *mut u8,
    rcounts: &[usize],
    disp: &[usize],
    red: &Reducer,
) -> MpiResult<()> {
    let (n, rank) = (c.size as usize, c.rank as usize);
    let dtype = red.dtype;
    let total = disp[n];
    let mut results = red.temp(total);
    let mut received_data = red.temp(total);
    let mut packed_send = red.temp(total);
    let mut packed_recv = red.temp(total);
    local_copy(input, total, dtype, results.ptr(), total, dtype)?;
    let count = |b: &[(usize, usize); 2]| b[0].1 + b[1].1;
    let (mut mask, mut i) = (1usize, 0u32);
    while mask < n {
        let dst = rank ^ mask;
        let dst_tree_root = (dst >> i) << i;
        let my_tree_root = (rank >> i) << i;
        let send_blocks = outside_tree(disp, n, my_tree_root, mask);
        let recv_blocks = outside_tree(disp, n, dst_tree_root, mask);
        let mut received = false;
        if dst < n {
            move_blocks(red, results.ptr(), packed_send.ptr(), &send_blocks, true)?;
            c.sendrecv(
                packed_send.ptr(),
                count(&send_blocks),
                dtype,
                dst as i32,
                packed_recv.ptr(),
                count(&recv_blocks),
                dtype,
                dst as i32,
                TAG_REDUCE_SCATTER,
            )?;
            move_blocks(red, received_data.ptr(), packed_recv.ptr(), &recv_blocks, false)?;
            received = true;
        }
        if dst_tree_root + mask > n {
            // Ranks of this subtree whose partner does not exist get what was
            // received from the ones that have it, by recursive halving.
            let done = n.saturating_sub(my_tree_root + mask);
            let mut k = mask.trailing_zeros() as i64;
            let mut tmp_mask = mask >> 1;
            while tmp_mask > 0 {
                let peer = rank ^ tmp_mask;
                let tree_root = (rank >> k) << k;
                if peer > rank && rank < tree_root + done && peer >= tree_root + done {
                    move_blocks(red, received_data.ptr(), packed_send.ptr(), &recv_blocks, true)?;
                    c.send(
                        packed_send.ptr(),
                        count(&recv_blocks),
                        dtype,
                        peer as i32,
                        TAG_REDUCE_SCATTER,
                    )?;
                } else if peer < rank && peer < tree_root + done && rank >= tree_root + done {
                    c.recv(
                        packed_recv.ptr(),
                        count(&recv_blocks),
                        dtype,
                        peer as i32,
                        TAG_REDUCE_SCATTER,
                    )?;
                    move_blocks(red, received_data.ptr(), packed_recv.ptr(), &recv_blocks, false)?;
                    received = true;
                }
                tmp_mask >>= 1;
                k -= 1;
            }
        }
        if received {
            for &(off, len) in &recv_blocks {
                let (x, acc) = (red.at(received_data.ptr(), off), red.at(results.ptr(), off));
                if red.commutative || dst_tree_root < my_tree_root {
                    red.left(x, acc, len)?;
                } else {
                    // results op received, kept in results.
                    red.left(acc, x, len)?;
                    local_copy(x, len, dtype, acc, len, dtype)?;
                }
            }
        }
        mask <<= 1;
        i += 1;
    }
    let k = rcounts[rank];
    local_copy(red.at(results.ptr(), disp[rank]), k, dtype, rbuf, k, dtype)
}

/// MPICH's non-commutative reduce-scatter (power-of-two size, equal blocks):
/// the blocks are stored in bit-reversed order, then recursive halving at
/// distance 1, 2, 4, ... (each rank keeps the half named by its bit), which
/// keeps the operands in rank order.
fn noncomm(c: CommView, input: *const u8, rbuf: *mut u8, block: usize, red: &Reducer) -> MpiResult<()> {
    let (n, rank) = (c.size, c.rank);
    let dtype = red.dtype;
    let total = block * n as usize;
    let mut bits = 0;
    while (1 << bits) < n {
        bits += 1;
    }
    let mirror = |i: i32| (0..bits).fold(0, |m, b| m | (((i >> b) & 1) << (bits - 1 - b)));
    let mut acc = red.temp(total);
    let mut tmp: TempBuf = red.temp(total);
    for i in 0..n {
        local_copy(
            red.at(input, i as usize * block),
            block,
            dtype,
            red.at(acc.ptr(), mirror(i) as usize * block),
            block,
            dtype,
        )?;
    }
    let (mut lo, mut size) = (0usize, total);
    for k in 0..bits {
        size /= 2;
        let peer = rank ^ (1 << k);
        let (keep, give) = if rank & (1 << k) == 0 {
            (lo, lo + size)
        } else {
            (lo + size, lo)
        };
        c.sendrecv(
            red.at(acc.ptr(), give),
            size,
            dtype,
            peer,
            red.at(tmp.ptr(), keep),
            size,
            dtype,
            peer,
            TAG_REDUCE_SCATTER,
        )?;
        red.combine(
            peer < rank,
            red.at(tmp.ptr(), keep),
            red.at(acc.ptr(), keep),
            size,
        )?;
        lo = keep;
    }
    local_copy(red.at(acc.ptr(), lo), block, dtype, rbuf, block, dtype)
}

/// Open MPI's butterfly (Träff 2005; `ompi_butterfly`, any op, any counts):
/// the first 2·rem ranks (rem = n − pof2) pair up, even ranks handing their
/// vector to rank + 1 and dropping out; the pof2 others (virtual ranks; the
/// first rem stand for two ranks' blocks) halve the vector at distance 1, 2,
/// 4, ... (sendrecv, the lower partner's data on the left of the op), so that
/// virtual rank v ends with the blocks of virtual rank mirror(v) (its bits
/// reversed), which it sends there (and to the dropped-out even rank when
/// that virtual rank stands for two).
fn butterfly(
    c: CommView,
    input: *const u8,
    rbuf: *mut u8,
    rcounts: &[usize],
    disp: &[usize],
    red: &Reducer,
) -> MpiResult<()> {
    let (n, rank) = (c.size, c.rank);
    let dtype = red.dtype;
    let me = rank as usize;
    if n < 2 {
        // SMPI returns at once here, leaving the receive buffer alone.
        return local_copy(input, rcounts[0], dtype, rbuf, rcounts[0], dtype);
    }
    let total = disp[n as usize];
    let mut bufs = [red.temp(total), red.temp(total)];
    let (mut s, mut r) = (0, 1);
    local_copy(input, total, dtype, bufs[s].ptr(), total, dtype)?;
    let pof2 = pof2_floor(n);
    let rem = n - pof2;
    let bits = pof2.trailing_zeros();
    let mirror = |v: i32| ((v as u32).reverse_bits() >> (32 - bits)) as i32;
    // the rank a virtual rank runs on, the first rank of a virtual block
    let real = |v: i32| if v < rem { 2 * v + 1 } else { v + rem };
    let first = |blk: i32| (if blk < rem { 2 * blk } else { blk + rem }) as usize;
    let last = |blk: i32| (if blk < rem { 2 * blk + 1 } else { blk + rem }) as usize;
    let span = |lo: i32, hi: i32| disp[last(hi)] + rcounts[last(hi)] - disp[first(lo)];
    let vrank = if rank < 2 * rem {
        if rank % 2 == 0 {
            c.send(bufs[s].ptr(), total, dtype, rank + 1, TAG_REDUCE_SCATTER)?;
            -1
        } else {
            c.recv(bufs[r].ptr(), total, dtype, rank - 1, TAG_REDUCE_SCATTER)?;
            red.left(bufs[r].ptr(), bufs[s].ptr(), total)?;
            rank / 2
        }
    } else {
        rank - rem
    };
    if vrank < 0 {
        let peer = real(mirror((rank + 1) / 2));
        c.recv(rbuf, rcounts[me], dtype, peer, TAG_REDUCE_SCATTER)?;
        return Ok(());
    }
    let (mut nblocks, mut send_index, mut recv_index) = (pof2, 0, 0);
    let mut mask = 1;
    while mask < pof2 {
        let vpeer = vrank ^ mask;
        let peer = real(vpeer);
        nblocks /= 2;
        if vrank & mask == 0 {
            send_index += nblocks;
        } else {
            recv_index += nblocks;
        }
        let (scount, sdispl) = (
            span(send_index, send_index + nblocks - 1),
            disp[first(send_index)],
        );
        let (rcount, rdispl) = (
            span(recv_index, recv_index + nblocks - 1),
            disp[first(recv_index)],
        );
        c.sendrecv(
            red.at(bufs[s].ptr(), sdispl),
            scount,
            dtype,
            peer,
            red.at(bufs[r].ptr(), rdispl),
            rcount,
            dtype,
            peer,
            TAG_REDUCE_SCATTER,
        )?;
        let (mine, theirs) = (red.at(bufs[s].ptr(), rdispl), red.at(bufs[r].ptr(), rdispl));
        if vrank < vpeer {
            // mine op theirs, left in the receive buffer, which becomes mine
            red.left(mine, theirs, rcount)?;
            std::mem::swap(&mut s, &mut r);
        } else {
            red.left(theirs, mine, rcount)?;
        }
        send_index = recv_index;
        mask <<= 1;
    }
    let vpeer = mirror(vrank);
    let peer = real(vpeer);
    let mut index = first(send_index);
    if vpeer < rem {
        c.send(
            red.at(bufs[s].ptr(), disp[index]),
            rcounts[index],
            dtype,
            peer - 1,
            TAG_REDUCE_SCATTER,
        )?;
        index += 1;
    }
    if vpeer != vrank {
        c.sendrecv(
            red.at(bufs[s].ptr(), disp[index]),
            rcounts[index],
            dtype,
            peer,
            rbuf,
            rcounts[me],
            dtype,
            peer,
            TAG_REDUCE_SCATTER,
        )
    } else {
        let k = rcounts[me];
        local_copy(red.at(bufs[s].ptr(), disp[me]), k, dtype, rbuf, k, dtype)
    }
}
