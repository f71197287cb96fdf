//! SMPI's one-sided alltoall (`pair_rma`): the receive buffers form a window,
//! each rank puts its blocks into the others' windows between two fences.

use super::alltoall::Blocks;
use super::{dtype_of, is_pof2, CommView};
use crate::mpi::rma::{self, Access, Memory, Side};
use crate::mpi::MpiResult;

/// `MPI_INFO_NULL`'s handle.
const INFO_NULL: i32 = 0;

/// `pair_rma`: a window over the receive buffer (created as `MPI_Win_create`
/// does: an allgather of the window handles), a fence, one put per rank in
/// the pair order (`rank ^ i`, my own block first, a local copy), a fence,
/// then the window is freed (two barriers). Unlike SMPI, each block lands at
/// its place in the receive buffer (SMPI puts block j at byte j × extent
/// instead of j × count × extent), and a size that is not a power of two
/// (where SMPI puts to ranks beyond the communicator) uses the ring order
/// (`rank + i`).
pub(super) fn pair_rma(c: CommView, b: &Blocks) -> MpiResult<()> {
    let (n, me) = (c.size, c.rank);
    // the bytes the receive buffer's type map covers (from `lo`, <= 0)
    let rdt = dtype_of(b.rtype)?;
    let total = n as isize * b.rcounts[me as usize] as isize;
    let (lo, hi) = if total == 0 {
        (0, 0)
    } else {
        (rdt.true_lb.min(0), (total - 1) * rdt.extent + rdt.true_ub)
    };
    let base = b.rbuf.wrapping_offset(lo);
    let (win, _) = rma::create(c.me, c.comm, hi - lo, 1, INFO_NULL, Memory::Given(base))?;
    rma::fence(c.me, win, 0)?;
    for i in 0..n {
        let dst = if is_pof2(n) { me ^ i } else { (me + i) % n };
        let origin = Side {
            buf: b.sp(dst) as *mut u8,
            count: b.scounts[dst as usize],
            dtype: b.stype,
        };
        let target = Side {
            buf: std::ptr::null_mut(),
            count: b.rcounts[dst as usize],
            dtype: b.rtype,
        };
        let disp = me as isize * b.rcounts[dst as usize] as isize * b.rext - lo;
        rma::operate(c.me, win, Access::Put, origin, dst, disp, target, false)?;
    }
    rma::fence(c.me, win, 0)?;
    rma::free(c.me, win)?;
    Ok(())
}
