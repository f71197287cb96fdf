//! SMPI's allgather algorithms from Ahmad Faraj's collection that need regular
//! blocks (`MPI_Allgather`, or an allgatherv with regular counts and
//! displacements): `rhv`, `spreading_simple`, `2dmesh`, `3dmesh`.
//!
//! Each entry point is called with my block already in its slot of `rbuf`
//! (slot `i` holds `count` elements of `rtype` at element `i * count`) and a
//! communicator of at least two ranks.

use super::{allgather, dtype_of, elem, CommView, TAG_ALLGATHER};
use crate::mpi::MpiResult;

/// The regular receive buffer of an allgather: `n` slots of `count` elements.
#[derive(Clone, Copy)]
pub(crate) struct Blocks {
    pub rbuf: *mut u8,
    pub count: usize,
    pub rtype: i32,
}

impl Blocks {
    fn at(&self, slot: i32) -> MpiResult<*mut u8> {
        let dt = dtype_of(self.rtype)?;
        Ok(elem(self.rbuf, &dt, slot as usize * self.count))
    }

    /// sendrecv of `k` consecutive slots from `sslot` to `peer`, and of as many
    /// from `peer` into `rslot`.
    fn swap(&self, c: CommView, sslot: i32, rslot: i32, k: usize, peer: i32) -> MpiResult<()> {
        let n = k * self.count;
        c.sendrecv(
            self.at(sslot)?,
            n,
            self.rtype,
            peer,
            self.at(rslot)?,
            n,
            self.rtype,
            peer,
            TAG_ALLGATHER,
        )
    }

    /// SMPI's default allgather on these blocks (my block is in place).
    fn default(&self, c: CommView) -> MpiResult<()> {
        let (counts, displs) = super::regular_counts(c.size, self.count);
        let mine = self.at(c.rank)?;
        allgather::linear_nb(
            c, mine, self.count, self.rtype, self.rbuf, &counts, &displs, self.rtype,
        )
    }
}

/// SMPI's `rhv` (recursive halving of the distance, doubling of the data):
/// first my block goes to the rank whose number is mine bit-reversed, whose
/// block comes back into its own slot (a local copy when that is me); then, at
/// distance n/2, n/4, ..., 1, exchange with rank XOR distance the 1, 2, 4, ...
/// consecutive slots gathered so far. SMPI runs it only on power-of-two sizes
/// (it aborts otherwise) and only when the send and receive blocks have the
/// same extent (else its default); here both cases run SMPI's default.
/// `same_extent`: whether `scount × extent(stype)` = `count × extent(rtype)`.
pub(crate) fn rhv(c: CommView, b: Blocks, same_extent: bool) -> MpiResult<()> {
    let (n, rank) = (c.size, c.rank);
    if !super::is_pof2(n) || !same_extent {
        return b.default(c);
    }
    // my slot range starts at my rank bit-reversed
    let mut base = 0;
    let mut half = n / 2;
    let mut mask = 1;
    while mask < n {
        if rank & mask != 0 {
            base += half;
        }
        mask <<= 1;
        half /= 2;
    }
    b.swap(c, rank, base, 1, base)?;
    let mut mask = n / 2;
    let mut k = 1;
    while mask >= 1 {
        let peer = rank ^ mask;
        let from = base;
        let to = if rank & mask != 0 {
            base -= k;
            base
        } else {
            base + k
        };
        // the k slots starting at `from` hold my data so far
        b.swap(c, from, to, k as usize, peer)?;
        k *= 2;
        mask >>= 1;
    }
    Ok(())
}

/// SMPI's `spreading_simple`: post the receives from rank + 1, rank + 2, ...
/// (around the ring), then the sends to them in the same order; wait for all.
pub(crate) fn spreading_simple(c: CommView, b: Blocks) -> MpiResult<()> {
    let (n, rank) = (c.size, c.rank);
    let mut reqs = Vec::with_capacity(2 * n as usize - 2);
    for i in 1..n {
        let src = (rank + i) % n;
        reqs.push(c.irecv(b.at(src)?, b.count, b.rtype, src, TAG_ALLGATHER)?);
    }
    let mine = b.at(rank)?;
    for i in 1..n {
        reqs.push(c.isend(mine, b.count, b.rtype, (rank + i) % n, TAG_ALLGATHER)?);
    }
    c.waitall_checked(&reqs)
}
