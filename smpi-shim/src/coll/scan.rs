//! MPI_Scan and MPI_Exscan: SMPI's single, linear algorithm.
//!
//! Every rank posts a receive from each lower rank and sends its own
//! contribution to each higher rank, all at once, then combines what it got in
//! rank order. That is O(p²) messages, but it is what SMPI 3.32 times (it has
//! no `smpi/scan` selector), so it is what a user comparing with SMPI expects.

use super::{apply_op, dtype_of, local_copy, CommView, TempBuf, IN_PLACE, TAG_SCAN};
use crate::mpi::MpiResult;

/// Inclusive (`exclusive == false`) or exclusive prefix reduction.
pub(crate) fn run(
    c: CommView,
    sbuf: *const u8,
    rbuf: *mut u8,
    count: usize,
    dtype: i32,
    op: i32,
    exclusive: bool,
) -> MpiResult<()> {
    let dt = dtype_of(dtype)?;
    // With MPI_IN_PLACE the contribution is in rbuf, which the result overwrites.
    let mut mine = TempBuf::new(&dt, count);
    let src = if std::ptr::eq(sbuf, IN_PLACE) {
        rbuf as *const u8
    } else {
        sbuf
    };
    local_copy(src, count, dtype, mine.ptr(), count, dtype)?;

    let lower = c.rank as usize;
    let mut from_lower: Vec<TempBuf> = (0..lower).map(|_| TempBuf::new(&dt, count)).collect();
    let mut reqs = Vec::with_capacity(c.size as usize - 1);
    for (other, buf) in from_lower.iter_mut().enumerate() {
        reqs.push(c.irecv(buf.ptr(), count, dtype, other as i32, TAG_SCAN)?);
    }
    for other in c.rank + 1..c.size {
        reqs.push(c.isend(mine.ptr(), count, dtype, other, TAG_SCAN)?);
    }
    c.waitall_checked(&reqs)?;

    // acc = v_first op ... op v_last, combined from the right so that a
    // non-commutative op sees its operands in rank order (apply_op computes
    // inout = in op inout).
    let mut acc = if exclusive {
        match from_lower.pop() {
            Some(last) => last,
            None => return Ok(()), // rank 0: the exclusive result is undefined
        }
    } else {
        mine
    };
    for v in from_lower.iter_mut().rev() {
        apply_op(op, dtype, v.ptr(), acc.ptr(), count)?;
    }
    local_copy(acc.ptr(), count, dtype, rbuf, count, dtype)
}
