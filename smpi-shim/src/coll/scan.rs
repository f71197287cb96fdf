//! MPI_Scan and MPI_Exscan (a single algorithm: a linear chain).

use super::{apply_op, dtype_of, local_copy, CommView, TempBuf, IN_PLACE, TAG_SCAN};
use crate::runtime::MpiResult;

/// Rank r receives the prefix of ranks 0..r-1 from r-1, combines its own
/// value on the right and passes the result to r+1.
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
    let mut inplace_copy = None;
    let sbuf = if std::ptr::eq(sbuf, IN_PLACE) {
        let mut t = TempBuf::new(&dt, count);
        local_copy(rbuf, count, dtype, t.ptr(), count, dtype)?;
        let p = t.ptr() as *const u8;
        inplace_copy = Some(t);
        p
    } else {
        sbuf
    };
    let mut acc = TempBuf::new(&dt, count);
    // acc = prefix of ranks 0..rank-1 (received from rank-1).
    if c.rank > 0 {
        c.recv(acc.ptr(), count, dtype, c.rank - 1, TAG_SCAN)?;
    }
    let mut incl = TempBuf::new(&dt, count);
    local_copy(sbuf, count, dtype, incl.ptr(), count, dtype)?;
    if c.rank > 0 {
        // incl = acc op mine: apply_op computes inout = in op inout, so in = acc, inout = mine
        let mut t = TempBuf::new(&dt, count);
        local_copy(acc.ptr(), count, dtype, t.ptr(), count, dtype)?;
        apply_op(op, dtype, t.ptr(), incl.ptr(), count)?;
    }
    if c.rank + 1 < c.size {
        c.send(incl.ptr(), count, dtype, c.rank + 1, TAG_SCAN)?;
    }
    if exclusive {
        if c.rank > 0 {
            local_copy(acc.ptr(), count, dtype, rbuf, count, dtype)?;
        }
    } else {
        local_copy(incl.ptr(), count, dtype, rbuf, count, dtype)?;
    }
    drop(inplace_copy);
    Ok(())
}
