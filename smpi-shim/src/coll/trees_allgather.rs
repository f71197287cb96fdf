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

/// One phase of the mesh allgathers: receives of `k` slots from each source
/// (into the source's group of `k` slots starting at `base(src)`), then
/// blocking sends of my group of `k` slots to each destination in order, then
/// a wait for the receives.
fn mesh_phase(c: CommView, b: Blocks, peers: &[i32], k: i32, base: impl Fn(i32) -> i32) -> MpiResult<()> {
    let len = b.count * k as usize;
    let mut reqs = Vec::with_capacity(peers.len());
    for &src in peers {
        reqs.push(c.irecv(b.at(base(src))?, len, b.rtype, src, TAG_ALLGATHER)?);
    }
    let mine = b.at(base(c.rank))?;
    for &dst in peers {
        c.send(mine, b.count * k as usize, b.rtype, dst, TAG_ALLGATHER)?;
    }
    c.waitall_checked(&reqs)
}

/// SMPI's 2-D mesh shape of `n` ranks: X ≤ Y with X × Y = n, X the first
/// divisor from ⌊√n⌋ up to n / 2; `None` when there is none.
fn mesh_2d(n: i32) -> Option<(i32, i32)> {
    let x0 = (n as f64).sqrt() as i32;
    (x0..=n / 2)
        .find(|&x| x > 0 && n % x == 0)
        .map(|x| (x.min(n / x), x.max(n / x)))
}

/// SMPI's 3-D mesh shape of `n` ranks: X = Y = x, Z = n / x², x the first
/// value from ⌊∛n⌋ up to n / 3 with x² dividing n; `None` when there is none.
fn mesh_3d(n: i32) -> Option<(i32, i32)> {
    let x0 = (n as f64).cbrt() as i32;
    (x0..=n / 3)
        .find(|&x| x > 0 && n % (x * x) == 0)
        .map(|x| (x, n / (x * x)))
}

/// SMPI's `2dmesh`: the ranks as X rows of Y consecutive ranks (see
/// [`mesh_2d`]); an allgather within my row (receives posted, then blocking
/// sends in rank order), then one within my column of the rows gathered so
/// far. SMPI aborts on sizes with no such shape (1, and primes from 5 on);
/// here they run SMPI's default.
pub(crate) fn mesh2(c: CommView, b: Blocks) -> MpiResult<()> {
    let Some((x, y)) = mesh_2d(c.size) else {
        return b.default(c);
    };
    let rank = c.rank;
    let row = rank / y * y;
    let col = rank % y;
    let others = |v: Vec<i32>| v.into_iter().filter(|&p| p != rank).collect::<Vec<_>>();
    mesh_phase(c, b, &others((row..row + y).collect()), 1, |p| p)?;
    mesh_phase(c, b, &others((0..x).map(|i| i * y + col).collect()), y, |p| {
        p / y * y
    })
}

/// SMPI's `3dmesh`: the ranks as Z planes of x × x (see [`mesh_3d`]); an
/// allgather within my row of the plane, then within my column (of rows),
/// then between planes (of whole planes, peers rank + x², rank + 2x², ...
/// around the ranks). SMPI aborts on sizes with no such shape (2, 10, 11,
/// ...); here they run SMPI's default.
pub(crate) fn mesh3(c: CommView, b: Blocks) -> MpiResult<()> {
    let n = c.size;
    let Some((x, z)) = mesh_3d(n) else {
        return b.default(c);
    };
    let rank = c.rank;
    let plane = x * x;
    let row = rank / x * x;
    let col = rank % x + rank / plane * plane;
    let others = |v: Vec<i32>| v.into_iter().filter(|&p| p != rank).collect::<Vec<_>>();
    mesh_phase(c, b, &others((row..row + x).collect()), 1, |p| p)?;
    mesh_phase(c, b, &others((0..x).map(|i| i * x + col).collect()), x, |p| {
        p / x * x
    })?;
    let planes: Vec<i32> = (1..z).map(|i| (rank + i * plane) % n).collect();
    mesh_phase(c, b, &planes, plane, |p| p / plane * plane)
}
