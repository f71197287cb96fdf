//! SMPI's reduce algorithms `NTSL` (a pipelined chain) and
//! `mvapich2_knomial` (MVAPICH2's k-nomial tree).
//!
//! Both combine partial results in an order SMPI does not keep for
//! non-commutative operations (`NTSL` puts higher ranks on the left,
//! `mvapich2_knomial` does not combine at all). Here the chain and the tree
//! combine in rank order, which is right for any root with a commutative
//! operation and for root 0 otherwise; a non-commutative operation with
//! another root runs the algorithm to rank 0, which then sends the result to
//! the root (a time SMPI does not have, since its data would be wrong).

use super::reduce::default_reduce;
use super::{local_copy, CommView, Reducer, TAG_REDUCE};
use crate::mpi::MpiResult;

/// The arguments of one reduce (`sbuf`: my contribution, never `MPI_IN_PLACE`).
pub(crate) struct Args {
    pub sbuf: *const u8,
    pub rbuf: *mut u8,
    pub count: usize,
    pub op: i32,
    pub root: i32,
}

/// Runs `algo` to `a.root`, or, for a non-commutative operation and a root
/// other than 0, to rank 0 followed by a send of the result to the root.
fn in_rank_order(
    c: CommView,
    a: &Args,
    red: &Reducer,
    algo: impl FnOnce(&Args) -> MpiResult<()>,
) -> MpiResult<()> {
    if red.commutative || a.root == 0 {
        return algo(a);
    }
    let mut res = red.temp(a.count);
    algo(&Args {
        rbuf: res.ptr(),
        root: 0,
        ..*a
    })?;
    if c.rank == 0 {
        c.send(res.ptr(), a.count, red.dtype, a.root, TAG_REDUCE)?;
    } else if c.rank == a.root {
        c.recv(a.rbuf, a.count, red.dtype, 0, TAG_REDUCE)?;
    }
    Ok(())
}

/// SMPI's `NTSL`: a chain from root − 1 down to root (rank r receives from
/// r + 1 and sends to r − 1, around the ring), in 8 KiB segments (8192 /
/// extent elements) all posted at once: the root receives them in order, the
/// chain's head isends them all, the others receive each segment, combine and
/// isend it on. A message of one segment or less goes hop by hop with
/// blocking calls; the count % segment last elements then go through SMPI's
/// default reduce.
pub(crate) fn ntsl(c: CommView, a: &Args, red: &Reducer) -> MpiResult<()> {
    if c.size == 1 {
        return local_copy(a.sbuf, a.count, red.dtype, a.rbuf, a.count, red.dtype);
    }
    in_rank_order(c, a, red, |a| ntsl_to(c, a, red))
}

fn ntsl_to(c: CommView, a: &Args, red: &Reducer) -> MpiResult<()> {
    let (n, r, root, count, dtype) = (c.size, c.rank, a.root, a.count, red.dtype);
    let to = (r - 1 + n) % n;
    let from = (r + 1) % n;
    let head = (root - 1 + n) % n;
    let seg = if red.dt.extent > 0 {
        (8192 / red.dt.extent).max(1) as usize
    } else {
        1
    };
    // my partial result (the root's goes to rbuf at the end)
    let mut acc = red.temp(count);
    local_copy(a.sbuf, count, dtype, acc.ptr(), count, dtype)?;
    let mut tmp = red.temp(count);
    if count <= seg {
        if r != head {
            c.recv(tmp.ptr(), count, dtype, from, TAG_REDUCE)?;
            red.right(acc.ptr(), tmp.ptr(), count)?;
        }
        if r != root {
            c.send(acc.ptr(), count, dtype, to, TAG_REDUCE)?;
        } else {
            local_copy(acc.ptr(), count, dtype, a.rbuf, count, dtype)?;
        }
        return Ok(());
    }
    let pipe = count / seg;
    let at = |p: *mut u8, i: usize| red.at(p, i * seg);
    if r == head {
        let mut sends = Vec::with_capacity(pipe);
        for i in 0..pipe {
            sends.push(c.isend(at(acc.ptr(), i), seg, dtype, to, TAG_REDUCE)?);
        }
        c.waitall(&sends);
    } else {
        let mut recvs = Vec::with_capacity(pipe);
        for i in 0..pipe {
            recvs.push(c.irecv(at(tmp.ptr(), i), seg, dtype, from, TAG_REDUCE)?);
        }
        let mut sends = Vec::with_capacity(pipe);
        for (i, &rq) in recvs.iter().enumerate() {
            c.wait(rq)?;
            red.right(at(acc.ptr(), i), at(tmp.ptr(), i), seg)?;
            if r != root {
                sends.push(c.isend(at(acc.ptr(), i), seg, dtype, to, TAG_REDUCE)?);
            }
        }
        c.waitall(&sends);
    }
    let done = pipe * seg;
    if r == root {
        local_copy(acc.ptr(), done, dtype, a.rbuf, done, dtype)?;
    }
    if done < count {
        let rest = count - done;
        let target = if r == root {
            red.at(a.rbuf, done)
        } else {
            at(tmp.ptr(), pipe)
        };
        default_reduce(c, red.at(a.sbuf, done), target, rest, dtype, a.op, root)?;
    }
    Ok(())
}

/// SMPI's `mvapich2_knomial` (factor 4, its value when the algorithm is
/// forced): in the k-nomial tree rooted at the root, each rank posts its
/// receives from its children (nearest first), waits for them all, combines
/// them and isends the result to its parent.
pub(crate) fn knomial(c: CommView, a: &Args, red: &Reducer) -> MpiResult<()> {
    if a.count == 0 {
        return Ok(());
    }
    in_rank_order(c, a, red, |a| knomial_to(c, a, red, 4))
}

fn knomial_to(c: CommView, a: &Args, red: &Reducer, k: i32) -> MpiResult<()> {
    let (n, r, root, count, dtype) = (c.size, c.rank, a.root, a.count, red.dtype);
    let rel = (r - root + n) % n;
    let mut parent = None;
    let mut mask = 1;
    while mask < n {
        if rel % (k * mask) != 0 {
            parent = Some((rel / (k * mask) * (k * mask) + root) % n);
            break;
        }
        mask *= k;
    }
    mask /= k;
    // children, farthest first (relative rank, rank)
    let mut kids = Vec::new();
    while mask > 0 {
        for j in 1..k {
            if rel + mask * j < n {
                kids.push((rel + mask * j, (r + mask * j) % n));
            }
        }
        mask /= k;
    }
    let mut acc = red.temp(count);
    local_copy(a.sbuf, count, dtype, acc.ptr(), count, dtype)?;
    let mut bufs: Vec<_> = kids.iter().map(|_| red.temp(count)).collect();
    let mut reqs = Vec::with_capacity(kids.len());
    for (i, &(_, kid)) in kids.iter().enumerate().rev() {
        reqs.push(c.irecv(bufs[i].ptr(), count, dtype, kid, TAG_REDUCE)?);
    }
    c.waitall_checked(&reqs)?;
    // each child's subtree is a range of relative ranks above mine: combine
    // them in ascending order
    let mut order: Vec<usize> = (0..kids.len()).collect();
    order.sort_by_key(|&i| kids[i].0);
    for i in order {
        red.right(acc.ptr(), bufs[i].ptr(), count)?;
    }
    match parent {
        Some(p) => {
            let rq = c.isend(acc.ptr(), count, dtype, p, TAG_REDUCE)?;
            c.waitall(&[rq]);
            Ok(())
        }
        None => local_copy(acc.ptr(), count, dtype, a.rbuf, count, dtype),
    }
}

/// The tag of `arrival_pattern_aware`'s messages (SMPI's, on the user's
/// context; ours on the collective context).
const TAG_ARRIVAL: i32 = 112;

/// SMPI's `arrival_pattern_aware` reduce: the mirror of the bcast of that
/// name. Rank 0 polls the ranks not yet served with probes; each group of
/// ranks found together gets its chain (a 4 KiB header, sent to the first,
/// forwarded along); the chain reduces from its first rank to its last,
/// which sends the partial result to rank 0, which combines it. Small
/// messages (one 8 KiB segment or less) go whole with blocking calls and
/// rank 0 sleeps 100 µs after each probe; longer ones go in segments (the
/// chain isends them, rank 0 receives them with blocking calls), the count %
/// segment last elements through SMPI's default reduce. A root other than 0
/// gets the result from rank 0 at the end. The chains follow the order of
/// arrival, so SMPI combines out of rank order: non-commutative operations
/// run SMPI's default reduce instead.
pub(crate) fn arrival_pattern_aware(c: CommView, a: &Args, red: &Reducer) -> MpiResult<()> {
    use super::trees_bcast::{header, next_in, probe, HEADER};
    use crate::mpi::datatype::MPI_INT;
    use crate::mpi::{self as rt};

    let (n, rank, count, dtype) = (c.size, c.rank, a.count, red.dtype);
    if !red.commutative {
        return default_reduce(c, a.sbuf, a.rbuf, count, dtype, a.op, a.root);
    }
    if n == 1 {
        return local_copy(a.sbuf, count, dtype, a.rbuf, count, dtype);
    }
    let seg = if red.dt.extent > 0 {
        (8192 / red.dt.extent).max(1) as usize
    } else {
        1
    };
    let pipelined = count > seg;
    let pipe = count / seg;
    let mut acc = red.temp(count);
    local_copy(a.sbuf, count, dtype, acc.ptr(), count, dtype)?;
    let mut tmp = red.temp(count);
    let (ap, tp) = (acc.ptr(), tmp.ptr());
    let at = |p: *mut u8, i: usize| red.at(p, i * seg);
    let mut one = [0u8; 1];
    if rank == 0 {
        let mut served = vec![false; n as usize];
        let mut left = n - 1;
        while left > 0 {
            let mut arrived = vec![false; n as usize];
            if pipelined {
                let mut i = 1;
                while i < n {
                    let u = i as usize;
                    if !served[u] && !arrived[u] && probe(c, i, TAG_ARRIVAL)? {
                        arrived[u] = true;
                        c.recv(one.as_mut_ptr(), 1, super::BYTE, i, TAG_ARRIVAL)?;
                        // SMPI restarts its scan at rank 1 + 1
                        i = 1;
                    }
                    i += 1;
                }
            } else {
                for i in (1..n).filter(|&i| !served[i as usize]) {
                    arrived[i as usize] = probe(c, i, TAG_ARRIVAL)?;
                    rt::sleep_for(c.me, 1e-4);
                }
                for i in (1..n).filter(|&i| arrived[i as usize]) {
                    c.recv(one.as_mut_ptr(), 1, super::BYTE, i, TAG_ARRIVAL)?;
                }
            }
            let chain: Vec<i32> = (1..n)
                .filter(|&i| arrived[i as usize] && !served[i as usize])
                .collect();
            let (Some(&first), Some(&last)) = (chain.first(), chain.last()) else {
                continue;
            };
            for &i in &chain {
                served[i as usize] = true;
            }
            left -= chain.len() as i32;
            let h = header(&chain, HEADER);
            c.send(h.as_ptr().cast(), h.len(), MPI_INT, first, TAG_ARRIVAL)?;
            if pipelined {
                for i in 0..pipe {
                    c.recv(at(tp, i), seg, dtype, last, TAG_ARRIVAL)?;
                    red.left(at(tp, i), at(ap, i), seg)?;
                }
            } else {
                c.recv(tp, count, dtype, last, TAG_ARRIVAL)?;
                red.left(tp, ap, count)?;
            }
        }
    } else {
        c.send(one.as_ptr(), 1, super::BYTE, 0, TAG_ARRIVAL)?;
        let mut h = vec![0i32; HEADER.max(n as usize)];
        c.recv(
            h.as_mut_ptr().cast(),
            h.len(),
            MPI_INT,
            rt::MPI_ANY_SOURCE,
            TAG_ARRIVAL,
        )?;
        let next = next_in(&h, rank);
        if let Some(to) = next {
            c.send(h.as_ptr().cast(), h.len(), MPI_INT, to, TAG_ARRIVAL)?;
        }
        let to = next.unwrap_or(0);
        let mine = h.iter().position(|&r| r == rank).unwrap_or(0);
        let from = (mine > 0).then(|| h[mine - 1]);
        if !pipelined {
            if let Some(from) = from {
                c.recv(tp, count, dtype, from, TAG_ARRIVAL)?;
                red.left(tp, ap, count)?;
            }
            c.send(ap, count, dtype, to, TAG_ARRIVAL)?;
        } else {
            let mut sends = Vec::with_capacity(pipe);
            match from {
                None => {
                    for i in 0..pipe {
                        sends.push(c.isend(at(ap, i), seg, dtype, to, TAG_ARRIVAL)?);
                    }
                }
                Some(from) => {
                    let mut recvs = Vec::with_capacity(pipe);
                    for i in 0..pipe {
                        recvs.push(c.irecv(at(tp, i), seg, dtype, from, TAG_ARRIVAL)?);
                    }
                    for (i, &rq) in recvs.iter().enumerate() {
                        c.wait(rq)?;
                        red.left(at(tp, i), at(ap, i), seg)?;
                        sends.push(c.isend(at(ap, i), seg, dtype, to, TAG_ARRIVAL)?);
                    }
                }
            }
            c.waitall(&sends);
        }
    }
    let done = if pipelined { pipe * seg } else { count };
    if a.root != 0 {
        if rank == 0 {
            c.send(ap, count, dtype, a.root, TAG_ARRIVAL)?;
        } else if rank == a.root {
            c.recv(ap, count, dtype, 0, TAG_ARRIVAL)?;
        }
    }
    if rank == a.root {
        local_copy(ap, done, dtype, a.rbuf, done, dtype)?;
    }
    if done < count {
        let target = if rank == a.root {
            red.at(a.rbuf, done)
        } else {
            red.at(tp, done)
        };
        default_reduce(c, red.at(a.sbuf, done), target, count - done, dtype, a.op, a.root)?;
    }
    Ok(())
}
