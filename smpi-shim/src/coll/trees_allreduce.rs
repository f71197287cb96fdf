//! SMPI's allreduce algorithms `rab1` and `rab2` (reduce-scatter, then the
//! configured allgather).

use super::{local_copy, regular_counts, CommView, Reducer, TAG_ALLREDUCE};
use crate::mpi::MpiResult;

/// The configured allgather of `count` elements from every rank.
fn allgather(c: CommView, mine: *const u8, count: usize, dtype: i32, all: *mut u8) -> MpiResult<()> {
    let (counts, displs) = regular_counts(c.size, count);
    super::allgatherv(c, mine, count, dtype, all, &counts, &displs, dtype)
}

/// SMPI's `rab1` (power-of-two sizes): the vector, padded to a multiple of n
/// elements when n does not divide it (`(count + n) / n` per rank), is
/// reduce-scattered by recursive halving (distance n/2 first; the lower rank
/// keeps the lower half), so that rank r holds block r; then the configured
/// allgather of the blocks. SMPI aborts on other sizes; here they run `rdb`
/// (`fallback`), as do non-commutative operations (the halving from the
/// farthest distance down combines interleaved groups of ranks, which SMPI
/// does out of rank order).
pub(crate) fn rab1(
    c: CommView,
    sbuf: *const u8,
    rbuf: *mut u8,
    count: usize,
    red: &Reducer,
    fallback: impl FnOnce() -> MpiResult<()>,
) -> MpiResult<()> {
    let n = c.size as usize;
    if !super::is_pof2(c.size) || !red.commutative {
        return fallback();
    }
    let rank = c.rank as usize;
    let dtype = red.dtype;
    let total = if !count.is_multiple_of(n) {
        (count + n) / n * n
    } else {
        count
    };
    let mut acc = red.temp(total);
    local_copy(sbuf, count, dtype, acc.ptr(), count, dtype)?;
    let share = total / n;
    let mut tmp = red.temp(total);
    let mut lo = 0;
    let mut len = total;
    let mut mask = n / 2;
    while mask > 0 {
        let peer = rank ^ mask;
        len /= 2;
        let (keep, give) = if rank < peer {
            (lo, lo + len)
        } else {
            (lo + len, lo)
        };
        c.sendrecv(
            red.at(acc.ptr(), give),
            len,
            dtype,
            peer as i32,
            tmp.ptr(),
            len,
            dtype,
            peer as i32,
            TAG_ALLREDUCE,
        )?;
        red.left(tmp.ptr(), red.at(acc.ptr(), keep), len)?;
        lo = keep;
        mask /= 2;
    }
    debug_assert_eq!(lo, rank * share);
    local_copy(red.at(acc.ptr(), lo), share, dtype, tmp.ptr(), share, dtype)?;
    allgather(c, tmp.ptr(), share, dtype, acc.ptr())?;
    local_copy(acc.ptr(), count, dtype, rbuf, count, dtype)
}

/// SMPI's `rab2`: the configured alltoall of n blocks of `count / n` elements
/// (when n does not divide the count, of the vector padded to blocks of
/// `(count + n) / n` elements, or of n elements if count < n), a local
/// reduction of the n received blocks, then the configured allgather.
pub(crate) fn rab2(
    c: CommView,
    sbuf: *const u8,
    rbuf: *mut u8,
    count: usize,
    red: &Reducer,
) -> MpiResult<()> {
    let n = c.size as usize;
    let dtype = red.dtype;
    let block = if count.is_multiple_of(n) {
        count / n
    } else if count < n {
        n
    } else {
        (count + n) / n
    };
    let total = block * n;
    let mut send = red.temp(total);
    local_copy(sbuf, count, dtype, send.ptr(), count, dtype)?;
    let mut recv = red.temp(total);
    let (counts, displs) = regular_counts(c.size, block);
    super::alltoallv(
        c,
        send.ptr(),
        &counts,
        &displs,
        dtype,
        recv.ptr(),
        &counts,
        &displs,
        dtype,
        true,
    )?;
    // blocks from ranks 0, 1, ..., n-1 combined left to right
    let mut mine = red.temp(block);
    local_copy(recv.ptr(), block, dtype, mine.ptr(), block, dtype)?;
    for i in 1..n {
        red.right(mine.ptr(), red.at(recv.ptr(), i * block), block)?;
    }
    allgather(c, mine.ptr(), block, dtype, recv.ptr())?;
    local_copy(recv.ptr(), count, dtype, rbuf, count, dtype)
}
