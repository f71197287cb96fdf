//! Rolf Rabenseifner's reduce and allreduce (SMPI's `rab` for both), for long
//! vectors: halve the vector along a power-of-two set of ranks (a
//! reduce-scatter), then gather the pieces back (to the root, or to all).
//!
//! With 2ⁿ the largest power of two ≤ size and r = size − 2ⁿ:
//! 1. ranks below 2r pair up (2i, 2i + 1): the even one keeps the first half
//!    (count / 2 elements), the odd one the second; they exchange the other
//!    halves, combine, and the odd one sends its combined half back. The
//!    even one goes on as new rank i, the odd one waits; ranks ≥ 2r go on as
//!    new rank rank − r.
//! 2. for distance 1, 2, 4, ...: the range kept so far is split (the lower
//!    part has count / 2 elements, rounded down); the new rank with the bit
//!    clear keeps the lower part, the other the upper; they exchange the
//!    parts they give away and combine.
//! 3. allreduce: the same exchanges in reverse (largest distance first), each
//!    side sending the part it kept; then odd ranks below 2r get the whole
//!    result from rank − 1.
//!    reduce: largest distance first, in each pair the rank whose bit differs
//!    from the (new) root's sends the part it kept, the other receives it.
//!    SMPI keeps every pair busy at every distance, even pairs whose data has
//!    already gone up; so do we (for the time). An odd root below 2r first
//!    receives rank 0's final piece and takes over new rank 0.
//!
//! Pieces are combined in rank order, so non-commutative operations are
//! right. SMPI accepts only some predefined types (aborting on others) and
//! computes `MPI_MAX` for operations other than the ten predefined arithmetic
//! and logical ones; here any type and operation run the same messages with
//! the right operation. With one rank or no element, SMPI recurses forever;
//! here the data is just copied.

use super::{local_copy, CommView, Reducer, TAG_ALLREDUCE, TAG_REDUCE};
use crate::mpi::MpiResult;

/// One level of the halving: the kept range splits into `even` (lower) and
/// `odd` (upper) parts, each `(start, count)` in elements.
#[derive(Clone, Copy, Default)]
struct Level {
    even: (usize, usize),
    odd: (usize, usize),
}

/// The levels along the path of new rank `newrank` (bit i clear: it keeps the
/// even part at level i), and its final piece.
fn levels(count: usize, n: u32, newrank: i32) -> (Vec<Level>, (usize, usize)) {
    let mut v = Vec::with_capacity(n as usize);
    let (mut start, mut len) = (0, count);
    for i in 0..n {
        let half = len / 2;
        let l = Level {
            even: (start, half),
            odd: (start + half, len - half),
        };
        (start, len) = if (newrank >> i) & 1 == 0 { l.even } else { l.odd };
        v.push(l);
    }
    (v, (start, len))
}

/// SMPI's `rab`: reduce to `root`, or allreduce when `root` is `None`.
/// `sbuf` is my contribution (never `MPI_IN_PLACE`).
pub(crate) fn rab(
    c: CommView,
    sbuf: *const u8,
    rbuf: *mut u8,
    count: usize,
    red: &Reducer,
    root: Option<i32>,
) -> MpiResult<()> {
    let (size, rank, dtype) = (c.size, c.rank, red.dtype);
    let gets_result = root.is_none_or(|r| r == rank);
    if size == 1 || count == 0 {
        if gets_result {
            local_copy(sbuf, count, dtype, rbuf, count, dtype)?;
        }
        return Ok(());
    }
    let tag = if root.is_some() { TAG_REDUCE } else { TAG_ALLREDUCE };
    let mut n = 0u32;
    while 2 << n <= size {
        n += 1;
    }
    let pof2 = 1 << n;
    let r = size - pof2;
    let mut acc = red.temp(count);
    local_copy(sbuf, count, dtype, acc.ptr(), count, dtype)?;
    let mut tmp = red.temp(count);
    let at = |p: *mut u8, i: usize| red.at(p, i);
    let (a, t) = (acc.ptr(), tmp.ptr());
    let swap = |send: (usize, usize), recv: (usize, usize), into: *mut u8, peer: i32| {
        c.sendrecv(
            at(a, send.0),
            send.1,
            dtype,
            peer,
            at(into, recv.0),
            recv.1,
            dtype,
            peer,
            tag,
        )
    };

    // 1. pairs below 2r
    let half = count / 2;
    let (lower, upper) = ((0, half), (half, count - half));
    if rank < 2 * r {
        if rank % 2 == 0 {
            swap(upper, lower, t, rank + 1)?;
            red.right(at(a, 0), at(t, 0), half)?;
            c.recv(at(a, half), count - half, dtype, rank + 1, tag)?;
        } else {
            swap(lower, upper, t, rank - 1)?;
            red.left(at(t, half), at(a, half), count - half)?;
            c.send(at(a, half), count - half, dtype, rank - 1, tag)?;
        }
    }
    let mut newrank = if rank >= 2 * r {
        rank - r
    } else if rank % 2 == 0 {
        rank / 2
    } else {
        -1
    };
    let oldrank = |nr: i32| if nr < r { nr * 2 } else { nr + r };

    // 2. reduce-scatter, distance 1 first
    let (mut lv, mut piece) = levels(count, n, newrank.max(0));
    if newrank >= 0 {
        for (i, l) in lv.iter().enumerate() {
            let d = 1 << i;
            if (newrank >> i) & 1 == 0 {
                swap(l.odd, l.even, t, oldrank(newrank + d))?;
                red.right(at(a, l.even.0), at(t, l.even.0), l.even.1)?;
            } else {
                swap(l.even, l.odd, t, oldrank(newrank - d))?;
                red.left(at(t, l.odd.0), at(a, l.odd.0), l.odd.1)?;
            }
        }
    }

    let Some(root) = root else {
        // 3. allgather, largest distance first, then to the odd ranks below 2r
        if newrank >= 0 {
            for (i, l) in lv.iter().enumerate().rev() {
                let d = 1 << i;
                if (newrank >> i) & 1 == 0 {
                    swap(l.even, l.odd, a, oldrank(newrank + d))?;
                } else {
                    swap(l.odd, l.even, a, oldrank(newrank - d))?;
                }
            }
        }
        if rank < 2 * r {
            if rank % 2 == 0 {
                c.send(a, count, dtype, rank + 1, tag)?;
            } else {
                c.recv(a, count, dtype, rank - 1, tag)?;
            }
        }
        return local_copy(a, count, dtype, rbuf, count, dtype);
    };

    // 3. gather to the root
    let newroot = if root < 2 * r && root % 2 == 1 {
        if rank == 0 {
            c.send(at(a, piece.0), piece.1, dtype, root, tag)?;
            newrank = -1;
        }
        if rank == root {
            newrank = 0;
            (lv, piece) = levels(count, n, 0);
            c.recv(at(a, piece.0), piece.1, dtype, 0, tag)?;
        }
        0
    } else if root < 2 * r {
        root / 2
    } else {
        root - r
    };
    let real = |nr: i32| if nr == newroot { root } else { oldrank(nr) };
    if newrank >= 0 {
        for (i, l) in lv.iter().enumerate().rev() {
            let d = 1 << i;
            let low = (newrank >> i) & 1 == 0;
            let partner = if low { newrank + d } else { newrank - d };
            let (mine, theirs) = if low { (l.even, l.odd) } else { (l.odd, l.even) };
            if (newrank ^ newroot) & d != 0 {
                c.send(at(a, mine.0), mine.1, dtype, real(partner), tag)?;
            } else {
                c.recv(at(a, theirs.0), theirs.1, dtype, real(partner), tag)?;
            }
        }
    }
    if rank == root {
        local_copy(a, count, dtype, rbuf, count, dtype)?;
    }
    Ok(())
}
