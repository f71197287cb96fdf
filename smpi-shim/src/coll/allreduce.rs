//! MPI_Allreduce.

use super::select::{self, pick};
use super::{
    bcast, bcast::seg_count, local_copy, pof2_floor, reduce, CommView, Reducer, IN_PLACE, TAG_ALLREDUCE,
    TAG_REDUCE,
};
use super::{trees_allreduce, trees_rab};
use crate::mpi::MpiResult;

pub(super) const KNOWN: &[&str] = &[
    "redbcast",
    "rdb",
    "lr",
    "rab_rdb",
    "ompi_ring_segmented",
    "rab1",
    "rab2",
    "mvapich2_rs",
    "rab",
    "smp_binomial",
    "smp_rdb",
    "smp_binomial_pipeline",
    "smp_rsag",
    "smp_rsag_lr",
    "smp_rsag_rab",
    "mvapich2_two_level",
];

/// SMPI default: `reduce__default` to rank 0, then `bcast__default` (binomial).
pub(crate) fn run(
    c: CommView,
    sbuf: *const u8,
    rbuf: *mut u8,
    count: usize,
    dtype: i32,
    op: i32,
) -> MpiResult<()> {
    let red = Reducer::new(op, dtype)?;
    let bytes = red.bytes(count);
    let n = c.size;
    let algo = pick(
        "allreduce",
        KNOWN,
        select::Facts {
            commutative: red.commutative,
            count,
            ..select::Facts::new(c, bytes)
        },
        || "default",
        || select::ompi_allreduce(n, bytes, red.commutative),
        || select::mpich_allreduce(n, count, bytes, red.commutative),
    )?;
    match algo {
        "default" => reduce_bcast(c, sbuf, rbuf, count, dtype, op, false),
        "redbcast" => reduce_bcast(c, sbuf, rbuf, count, dtype, op, true),
        "rdb" => rdb(c, sbuf, rbuf, count, &red),
        "lr" => lr(c, sbuf, rbuf, count, dtype, op, &red),
        "rab_rdb" => rab_rdb(c, sbuf, rbuf, count, &red),
        "rab1" => {
            let src = super::contribution(sbuf, rbuf);
            trees_allreduce::rab1(c, src, rbuf, count, &red, || rdb(c, sbuf, rbuf, count, &red))
        }
        "rab2" => trees_allreduce::rab2(c, super::contribution(sbuf, rbuf), rbuf, count, &red),
        "rab" => trees_rab::rab(c, super::contribution(sbuf, rbuf), rbuf, count, &red, None),
        // MVAPICH2's reduce-scatter + allgather is MPICH's (`rab_rdb`), but
        // recursive doubling for fewer elements than the power of two.
        "mvapich2_rs" if count == 0 => Ok(()),
        "mvapich2_rs" if count < pof2_floor(n) as usize => rdb(c, sbuf, rbuf, count, &red),
        "mvapich2_rs" => rab_rdb(c, sbuf, rbuf, count, &red),
        "smp_binomial" => super::smp_allreduce::smp_binomial(c, sbuf, rbuf, count, &red),
        "smp_rdb" => super::smp_allreduce::smp_rdb(c, sbuf, rbuf, count, &red),
        "smp_binomial_pipeline" => super::smp_allreduce::smp_binomial_pipeline(c, sbuf, rbuf, count, &red),
        "smp_rsag" | "smp_rsag_lr" => {
            super::smp_allreduce::smp_rsag(c, sbuf, rbuf, count, &red, algo == "smp_rsag_lr")
        }
        "smp_rsag_rab" => super::smp_allreduce::smp_rsag_rab(c, sbuf, rbuf, count, &red),
        "mvapich2_two_level" => super::smp_reduce::allreduce_two_level(c, sbuf, rbuf, count, &red),
        // the mvapich2 selector's two-level allreduces (select_mvapich2.rs)
        "mv2_tl_rd" => super::smp_reduce::allreduce_mv2_tuned(c, sbuf, rbuf, count, op, &red, false),
        "mv2_tl_rs" => super::smp_reduce::allreduce_mv2_tuned(c, sbuf, rbuf, count, op, &red, true),
        _ => ring_segmented(c, sbuf, rbuf, count, dtype, op, &red),
    }
}

/// Reduce to rank 0, then broadcast from 0: SMPI's default (`selected` =
/// false: the default reduce and the binomial bcast) or `redbcast` (the
/// configured reduce and bcast).
fn reduce_bcast(
    c: CommView,
    sbuf: *const u8,
    rbuf: *mut u8,
    count: usize,
    dtype: i32,
    op: i32,
    selected: bool,
) -> MpiResult<()> {
    let sbuf = super::contribution(sbuf, rbuf);
    let dt = super::dtype_of(dtype)?;
    let mut tmp = super::TempBuf::new(&dt, count);
    // Reduce into a temporary on ranks other than 0 (their rbuf is not written by a reduce).
    let target = if c.rank == 0 { rbuf } else { tmp.ptr() };
    if selected {
        super::reduce(c, sbuf, target, count, dtype, op, 0)?;
        super::bcast(c, rbuf, count, dtype, 0)
    } else {
        reduce::default_reduce(c, sbuf, target, count, dtype, op, 0)?;
        bcast::binomial_tree(c, rbuf, count, dtype, 0)
    }
}

/// Recursive doubling (power-of-two part plus fold-in of the extra ranks:
/// even ranks below 2·rem hand their data to rank + 1 and get the result back).
pub(crate) fn rdb(c: CommView, sbuf: *const u8, rbuf: *mut u8, count: usize, red: &Reducer) -> MpiResult<()> {
    let dtype = red.dtype;
    if !std::ptr::eq(sbuf, IN_PLACE) {
        local_copy(sbuf, count, dtype, rbuf, count, dtype)?;
    }
    let mut tmp = red.temp(count);
    let n = c.size;
    let pof2 = pof2_floor(n);
    let rem = n - pof2;
    let newrank;
    if c.rank < 2 * rem {
        if c.rank % 2 == 0 {
            c.send(rbuf, count, dtype, c.rank + 1, TAG_REDUCE)?;
            newrank = -1;
        } else {
            c.recv(tmp.ptr(), count, dtype, c.rank - 1, TAG_REDUCE)?;
            red.left(tmp.ptr(), rbuf, count)?;
            newrank = c.rank / 2;
        }
    } else {
        newrank = c.rank - rem;
    }
    if newrank != -1 {
        let mut mask = 1;
        while mask < pof2 {
            let newdst = newrank ^ mask;
            let dst = if newdst < rem {
                newdst * 2 + 1
            } else {
                newdst + rem
            };
            c.sendrecv(rbuf, count, dtype, dst, tmp.ptr(), count, dtype, dst, TAG_REDUCE)?;
            red.combine(dst < c.rank, tmp.ptr(), rbuf, count)?;
            mask <<= 1;
        }
    }
    if c.rank < 2 * rem {
        if c.rank % 2 != 0 {
            c.send(rbuf, count, dtype, c.rank - 1, TAG_REDUCE)?;
        } else {
            c.recv(rbuf, count, dtype, c.rank + 1, TAG_REDUCE)?;
        }
    }
    Ok(())
}

/// SMPI's `lr` (logical ring): ring reduce-scatter of n equal blocks of
/// count/n elements, then ring allgather, all with sendrecv; the count % n
/// leftover elements go through a second allreduce (the configured one).
/// Fewer elements than ranks: `redbcast` (the configured reduce and bcast, as
/// SMPI 3.32 does). Non-commutative ops
/// (the ring does not combine in rank order): `rdb`.
fn lr(
    c: CommView,
    sbuf: *const u8,
    rbuf: *mut u8,
    count: usize,
    dtype: i32,
    op: i32,
    red: &Reducer,
) -> MpiResult<()> {
    let n = c.size as usize;
    if !red.commutative {
        return rdb(c, sbuf, rbuf, count, red);
    }
    if count < n {
        return reduce_bcast(c, sbuf, rbuf, count, dtype, op, true);
    }
    // my contribution, kept apart (rbuf receives partial results; sbuf may be rbuf)
    let mut mine = red.temp(count);
    let src = if std::ptr::eq(sbuf, IN_PLACE) {
        rbuf as *const u8
    } else {
        sbuf
    };
    local_copy(src, count, dtype, mine.ptr(), count, dtype)?;
    let bc = count / n;
    let rank = c.rank as usize;
    let blk = |b: usize| red.at(rbuf, (b % n) * bc);
    let right = ((rank + 1) % n) as i32;
    let left = ((rank + n - 1) % n) as i32;
    // my first block to send: (rank - 1)
    local_copy(
        red.at(mine.ptr(), ((rank + n - 1) % n) * bc),
        bc,
        dtype,
        blk(rank + n - 1),
        bc,
        dtype,
    )?;
    for i in 0..n - 1 {
        let sb = (rank + 2 * n - 1 - i) % n;
        let rb = (rank + 2 * n - 2 - i) % n;
        c.sendrecv(blk(sb), bc, dtype, right, blk(rb), bc, dtype, left, TAG_ALLREDUCE)?;
        // rbuf[rb] = partial (lower ranks around the ring) op mine
        red.right(blk(rb), red.at(mine.ptr(), rb * bc), bc)?;
    }
    for i in 0..n - 1 {
        let sb = (rank + 2 * n - i) % n;
        let rb = (rank + 2 * n - 1 - i) % n;
        c.sendrecv(blk(sb), bc, dtype, right, blk(rb), bc, dtype, left, TAG_ALLREDUCE)?;
    }
    let done = bc * n;
    if done < count {
        super::allreduce(
            c,
            red.at(mine.ptr(), done),
            red.at(rbuf, done),
            count - done,
            dtype,
            op,
        )?;
    }
    Ok(())
}

/// MPICH's Rabenseifner allreduce (`rab_rdb`): even ranks below 2·rem hand
/// their data to rank + 1; recursive-halving reduce-scatter over pof2 blocks
/// (count/pof2 elements, the last block takes the rest); recursive-doubling
/// allgather; results back to the even ranks. Keeps rank order.
pub(crate) fn rab_rdb(
    c: CommView,
    sbuf: *const u8,
    rbuf: *mut u8,
    count: usize,
    red: &Reducer,
) -> MpiResult<()> {
    let dtype = red.dtype;
    if !std::ptr::eq(sbuf, IN_PLACE) {
        local_copy(sbuf, count, dtype, rbuf, count, dtype)?;
    }
    let n = c.size;
    let rank = c.rank;
    let pof2 = pof2_floor(n);
    let rem = n - pof2;
    let mut tmp = red.temp(count);
    let newrank = if rank < 2 * rem {
        if rank % 2 == 0 {
            c.send(rbuf, count, dtype, rank + 1, TAG_REDUCE)?;
            -1
        } else {
            c.recv(tmp.ptr(), count, dtype, rank - 1, TAG_REDUCE)?;
            red.left(tmp.ptr(), rbuf, count)?;
            rank / 2
        }
    } else {
        rank - rem
    };
    if newrank >= 0 {
        let real = |nr: i32| if nr < rem { nr * 2 + 1 } else { nr + rem };
        let p = pof2 as usize;
        let base = count / p;
        let disp: Vec<usize> = (0..=p).map(|i| if i < p { i * base } else { count }).collect();
        let span = |(a, b): (usize, usize)| (disp[a], disp[b] - disp[a]);
        let mut steps = Vec::new();
        let (mut lo, mut hi) = (0usize, p);
        let mut mask = 1;
        while mask < pof2 {
            let newdst = newrank ^ mask;
            let dst = real(newdst);
            let mid = lo + (hi - lo) / 2;
            let (keep, give) = if newrank < newdst {
                ((lo, mid), (mid, hi))
            } else {
                ((mid, hi), (lo, mid))
            };
            let (koff, klen) = span(keep);
            let (goff, glen) = span(give);
            c.sendrecv(
                red.at(rbuf, goff),
                glen,
                dtype,
                dst,
                red.at(tmp.ptr(), koff),
                klen,
                dtype,
                dst,
                TAG_REDUCE,
            )?;
            red.combine(
                newdst < newrank,
                red.at(tmp.ptr(), koff),
                red.at(rbuf, koff),
                klen,
            )?;
            steps.push((keep, give));
            (lo, hi) = keep;
            mask <<= 1;
        }
        for (j, &(keep, give)) in steps.iter().enumerate().rev() {
            let dst = real(newrank ^ (1 << j));
            let (koff, klen) = span(keep);
            let (goff, glen) = span(give);
            c.sendrecv(
                red.at(rbuf, koff),
                klen,
                dtype,
                dst,
                red.at(rbuf, goff),
                glen,
                dtype,
                dst,
                TAG_REDUCE,
            )?;
        }
    }
    if rank < 2 * rem {
        if rank % 2 != 0 {
            c.send(rbuf, count, dtype, rank - 1, TAG_REDUCE)?;
        } else {
            c.recv(rbuf, count, dtype, rank + 1, TAG_REDUCE)?;
        }
    }
    Ok(())
}

/// Open MPI's `ompi_ring_segmented` (SMPI's transcription): n blocks (the
/// first count % n one element longer), each cut into phases; for every phase
/// a ring reduce-scatter (one receive kept ahead, blocking sends), then a ring
/// allgather of whole blocks. Segments are of 1 MiB; with fewer than n
/// segments' worth of data (count < n × segcount) it runs `lr`, as SMPI does;
/// the number of phases is count / (n × segcount), plus one for a large
/// enough remainder. Non-commutative ops: `rdb` (through `lr`).
fn ring_segmented(
    c: CommView,
    sbuf: *const u8,
    rbuf: *mut u8,
    count: usize,
    dtype: i32,
    op: i32,
    red: &Reducer,
) -> MpiResult<()> {
    let n = c.size as usize;
    if n == 1 {
        if !std::ptr::eq(sbuf, IN_PLACE) {
            local_copy(sbuf, count, dtype, rbuf, count, dtype)?;
        }
        return Ok(());
    }
    let segcount = seg_count(1 << 20, red.dt.size, count);
    if !red.commutative || count < n * segcount {
        return lr(c, sbuf, rbuf, count, dtype, op, red);
    }
    let mut phases = count / (n * segcount);
    let left = count % (n * segcount);
    if left >= n && left > n * segcount / 2 {
        phases += 1;
    }
    if !std::ptr::eq(sbuf, IN_PLACE) {
        local_copy(sbuf, count, dtype, rbuf, count, dtype)?;
    }
    let rank = c.rank as usize;
    // blocks
    let split = count % n;
    let early = count.div_ceil(n);
    let late = count / n;
    let block = |b: usize| -> (usize, usize) {
        if b < split {
            (b * early, early)
        } else {
            (b * late + split, late)
        }
    };
    let max_block = if split > 0 { early } else { late };
    // phase p of block b
    let piece = |b: usize, p: usize| -> (usize, usize) {
        let (off, len) = block(b);
        let sp = len % phases;
        let e = len.div_ceil(phases);
        let l = len / phases;
        if p < sp {
            (off + p * e, e)
        } else {
            (off + p * l + sp, l)
        }
    };
    let max_piece = max_block.div_ceil(phases);
    let mut inbuf = [red.temp(max_piece), red.temp(max_piece)];
    let send_to = ((rank + 1) % n) as i32;
    let recv_from = ((rank + n - 1) % n) as i32;
    for phase in 0..phases {
        let mut inbi = 0;
        let mut reqs = [0u32; 2];
        reqs[inbi] = c.irecv(inbuf[inbi].ptr(), max_piece, dtype, recv_from, TAG_ALLREDUCE)?;
        let (off, len) = piece(rank, phase);
        c.send(red.at(rbuf, off), len, dtype, send_to, TAG_ALLREDUCE)?;
        for k in 2..n {
            let prev = (rank + n - k + 1) % n;
            inbi ^= 1;
            reqs[inbi] = c.irecv(inbuf[inbi].ptr(), max_piece, dtype, recv_from, TAG_ALLREDUCE)?;
            c.wait(reqs[inbi ^ 1])?;
            let (off, len) = piece(prev, phase);
            red.left(inbuf[inbi ^ 1].ptr(), red.at(rbuf, off), len)?;
            c.send(red.at(rbuf, off), len, dtype, send_to, TAG_ALLREDUCE)?;
        }
        c.wait(reqs[inbi])?;
        let (off, len) = piece((rank + 1) % n, phase);
        red.left(inbuf[inbi].ptr(), red.at(rbuf, off), len)?;
    }
    for k in 0..n - 1 {
        let (roff, rlen) = block((rank + n - k) % n);
        let (soff, slen) = block((rank + 1 + n - k) % n);
        c.sendrecv(
            red.at(rbuf, soff),
            slen,
            dtype,
            send_to,
            red.at(rbuf, roff),
            rlen,
            dtype,
            recv_from,
            TAG_ALLREDUCE,
        )?;
    }
    Ok(())
}
