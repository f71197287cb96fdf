//! The alltoalls that first gather whole send buffers, then pick out their
//! blocks (SMPI's `rdb`, `2dmesh` and `3dmesh`, by Ahmad Faraj): every rank
//! receives far more than it keeps, in few, large messages.
//!
//! They move the data as bytes: a send buffer is packed once (when its type
//! is not contiguous) into `n` blocks of `b` bytes, and the receive buffer
//! is unpacked once at the end; the messages have the sizes SMPI's have.

use super::bcast::rdb_allgather_image;
use super::{boff, dtype_of, ByteView, CommView, BYTE, TAG_ALLTOALL};
use crate::mpi::MpiResult;

/// The send and receive buffers of an alltoall as bytes: `n` blocks of `b`
/// bytes each.
struct Image {
    send: ByteView,
    recv: ByteView,
    b: usize,
}

impl Image {
    fn new(
        c: CommView,
        sbuf: *const u8,
        scount: usize,
        stype: i32,
        rbuf: *mut u8,
        rcount: usize,
        rtype: i32,
    ) -> MpiResult<Self> {
        let n = c.size as usize;
        let (sdt, rdt) = (dtype_of(stype)?, dtype_of(rtype)?);
        let b = sdt.size * scount;
        Ok(Image {
            send: ByteView::new(sbuf as *mut u8, n * scount, sdt, true),
            recv: ByteView::new(rbuf, n * rcount, rdt, false),
            b,
        })
    }

    /// My block for rank `i`.
    fn s(&mut self, i: i32) -> *mut u8 {
        boff(self.send.ptr(), i as usize * self.b)
    }

    /// Where rank `i`'s block for me goes.
    fn r(&mut self, i: i32) -> *mut u8 {
        boff(self.recv.ptr(), i as usize * self.b)
    }
}

/// Copies `len` bytes (the regions never overlap).
fn copy(from: *const u8, to: *mut u8, len: usize) {
    // Safety: both regions hold `len` bytes of distinct buffers.
    unsafe { std::ptr::copy_nonoverlapping(from, to, len) }
}

/// `rdb`: MPICH's recursive-doubling allgather of the whole send buffers
/// (with its forwarding fix-up on a non-power-of-two size), then each rank
/// copies out the blocks addressed to it.
pub(super) fn rdb(
    c: CommView,
    sbuf: *const u8,
    scount: usize,
    stype: i32,
    rbuf: *mut u8,
    rcount: usize,
    rtype: i32,
) -> MpiResult<()> {
    let mut im = Image::new(c, sbuf, scount, stype, rbuf, rcount, rtype)?;
    let (n, me, b) = (c.size, c.rank, im.b);
    let whole = n as usize * b;
    let total = n as usize * whole;
    let mut all = vec![0u8; total];
    copy(im.s(0), boff(all.as_mut_ptr(), me as usize * whole), whole);
    rdb_allgather_image(
        c,
        all.as_mut_ptr(),
        total,
        me,
        |v| v,
        |v| (v as usize * whole).min(total),
        TAG_ALLTOALL,
    )?;
    for i in 0..n {
        let from = boff(all.as_mut_ptr(), (i * n + me) as usize * b);
        copy(from, im.r(i), b);
    }
    im.recv.store();
    Ok(())
}

/// SMPI's 2-D mesh for `n` ranks: `(x, y)` with `x <= y`, `x * y = n`, the
/// first divisor `x` from ⌊√n⌋ up to n/2; `None` when there is none (1 rank
/// and primes from 5).
fn mesh2(n: i32) -> Option<(i32, i32)> {
    let mut x = f64::from(n).sqrt() as i32;
    while x <= n / 2 {
        if n % x == 0 {
            return Some((x.min(n / x), x.max(n / x)));
        }
        x += 1;
    }
    None
}

/// SMPI's 3-D mesh for `n` ranks: `(x, x, z)` with `x * x * z = n`, the first
/// `x` from ⌊∛n⌋ up to n/3 (x = 1 fits every size from 3); `None` for 1 and
/// 2 ranks.
fn mesh3(n: i32) -> Option<(i32, i32, i32)> {
    let mut x = f64::from(n).cbrt() as i32;
    while x <= n / 3 {
        if x > 0 && n % (x * x) == 0 {
            return Some((x, x, n / (x * x)));
        }
        x += 1;
    }
    None
}

/// Posts a receive of `len` bytes from `src` into `at`.
fn post(c: CommView, reqs: &mut Vec<u32>, at: *mut u8, len: usize, src: i32) -> MpiResult<()> {
    reqs.push(c.irecv(at, len, BYTE, src, TAG_ALLTOALL)?);
    Ok(())
}

/// `2dmesh`: ranks form x rows of y (row-major). Within a row, everyone sends
/// its whole send buffer to everyone (receives posted first, blocking sends in
/// row order); then, within a column, each rank sends each column member the
/// y blocks its row holds for that member (gathered in a scratch block, one
/// blocking send each). On the sizes SMPI refuses (1 rank, primes from 5: it
/// returns an error without moving data) the mesh is 1 × n, the shape SMPI
/// itself uses on 2 and 3 ranks.
pub(super) fn mesh_2d(
    c: CommView,
    sbuf: *const u8,
    scount: usize,
    stype: i32,
    rbuf: *mut u8,
    rcount: usize,
    rtype: i32,
) -> MpiResult<()> {
    let mut im = Image::new(c, sbuf, scount, stype, rbuf, rcount, rtype)?;
    let (n, me, b) = (c.size, c.rank, im.b);
    let (x, y) = mesh2(n).unwrap_or((1, n));
    let whole = n as usize * b;
    let row_base = me / y * y;
    let col_base = me % y;
    // slot j: the whole send buffer of row member j (mine stays in place)
    let mut rows = vec![0u8; whole * y as usize];
    let mut out = vec![0u8; b * y as usize];
    let slot =
        |rows: &mut Vec<u8>, j: i32, blk: i32| boff(rows.as_mut_ptr(), j as usize * whole + blk as usize * b);
    let mut reqs = Vec::new();
    for src in (row_base..row_base + y).filter(|&r| r != me) {
        post(c, &mut reqs, slot(&mut rows, src % y, 0), whole, src)?;
    }
    for dst in (row_base..row_base + y).filter(|&r| r != me) {
        c.send(im.s(0), whole, BYTE, dst, TAG_ALLTOALL)?;
    }
    c.waitall_checked(&reqs)?;
    for i in 0..y {
        let from = if row_base + i == me {
            im.s(me)
        } else {
            slot(&mut rows, i, me)
        };
        copy(from, im.r(row_base + i), b);
    }
    reqs.clear();
    for src in (0..x).map(|i| i * y + col_base).filter(|&r| r != me) {
        let at = im.r(src / y * y);
        post(c, &mut reqs, at, b * y as usize, src)?;
    }
    for dst in (0..x).map(|i| i * y + col_base).filter(|&r| r != me) {
        for j in 0..y {
            let from = if row_base + j == me {
                im.s(dst)
            } else {
                slot(&mut rows, j, dst)
            };
            copy(from, boff(out.as_mut_ptr(), j as usize * b), b);
        }
        c.send(out.as_ptr(), b * y as usize, BYTE, dst, TAG_ALLTOALL)?;
    }
    c.waitall_checked(&reqs)?;
    im.recv.store();
    Ok(())
}

/// `3dmesh`: ranks form z planes of x × x (rows of x). Rows exchange whole
/// send buffers, then columns exchange their rows' buffers (x of them, one
/// message), so that each plane member holds the whole plane's; finally each
/// rank sends every rank of the other planes, at the same place in its plane,
/// the plane's blocks for it (gathered in a scratch block, one blocking send
/// each). On 1 and 2 ranks (SMPI returns an error without moving data) the
/// mesh is 1 × 1 × n, the shape SMPI itself uses on sizes without a square
/// factor.
pub(super) fn mesh_3d(
    c: CommView,
    sbuf: *const u8,
    scount: usize,
    stype: i32,
    rbuf: *mut u8,
    rcount: usize,
    rtype: i32,
) -> MpiResult<()> {
    let mut im = Image::new(c, sbuf, scount, stype, rbuf, rcount, rtype)?;
    let (n, me, b) = (c.size, c.rank, im.b);
    let (x, y, z) = mesh3(n).unwrap_or((1, 1, n));
    let plane = x * y;
    let whole = n as usize * b;
    let my_z = me / plane;
    let row_base = me / x * x;
    let col_base = me % y + my_z * plane;
    let z_base = my_z * plane;
    // slot j: the whole send buffer of the plane's member j
    let mut planes = vec![0u8; whole * plane as usize];
    let mut out = vec![0u8; b * plane as usize];
    let slot =
        |p: &mut Vec<u8>, j: i32, blk: i32| boff(p.as_mut_ptr(), j as usize * whole + blk as usize * b);
    copy(im.s(0), slot(&mut planes, me % plane, 0), whole);
    let mut reqs = Vec::new();
    for src in (row_base..row_base + y).filter(|&r| r != me) {
        post(c, &mut reqs, slot(&mut planes, src % plane, 0), whole, src)?;
    }
    for dst in (row_base..row_base + y).filter(|&r| r != me) {
        c.send(im.s(0), whole, BYTE, dst, TAG_ALLTOALL)?;
    }
    c.waitall_checked(&reqs)?;
    reqs.clear();
    let column = (0..x).map(|i| i * y + col_base).filter(|&r| r != me);
    for src in column.clone() {
        let at = slot(&mut planes, src / x * x % plane, 0);
        post(c, &mut reqs, at, whole * y as usize, src)?;
    }
    let mine = slot(&mut planes, row_base % plane, 0);
    for dst in column {
        c.send(mine, whole * y as usize, BYTE, dst, TAG_ALLTOALL)?;
    }
    c.waitall_checked(&reqs)?;
    reqs.clear();
    for i in 0..plane {
        copy(slot(&mut planes, i, me), im.r(z_base + i), b);
    }
    for i in 1..z {
        let src = (me + i * plane) % n;
        let at = im.r(src / plane * plane);
        post(c, &mut reqs, at, b * plane as usize, src)?;
    }
    for i in 1..z {
        let dst = (me + i * plane) % n;
        for j in 0..plane {
            copy(
                slot(&mut planes, j, dst),
                boff(out.as_mut_ptr(), j as usize * b),
                b,
            );
        }
        c.send(out.as_ptr(), b * plane as usize, BYTE, dst, TAG_ALLTOALL)?;
    }
    c.waitall_checked(&reqs)?;
    im.recv.store();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mesh_shapes_are_smpis() {
        assert_eq!(mesh2(1), None);
        assert_eq!(mesh2(2), Some((1, 2)));
        assert_eq!(mesh2(3), Some((1, 3)));
        assert_eq!(mesh2(4), Some((2, 2)));
        assert_eq!(mesh2(6), Some((2, 3)));
        assert_eq!(mesh2(7), None);
        assert_eq!(mesh2(12), Some((3, 4)));
        assert_eq!(mesh3(1), None);
        assert_eq!(mesh3(2), None);
        assert_eq!(mesh3(3), Some((1, 1, 3)));
        assert_eq!(mesh3(7), Some((1, 1, 7)));
        assert_eq!(mesh3(8), Some((2, 2, 2)));
        assert_eq!(mesh3(12), Some((2, 2, 3)));
        assert_eq!(mesh3(27), Some((3, 3, 3)));
        assert_eq!(mesh3(64), Some((4, 4, 4)));
    }
}
