//! SMPI's SMP allgathers (`smp_simple`, `SMP_NTS`, `loosely_lr`,
//! `mvapich2_smp`): the blocks are first exchanged inside each host, then
//! between the host leaders, then spread inside each host.
//!
//! They are called after `allgather::run` has put this rank's own block in
//! place (SMPI's first self-sendrecv, which costs no time), so they read
//! every block from the receive buffer; `MPI_IN_PLACE` then works too.
//! `num_core` is SMPI's (see `smp.rs`): with a non-uniform placement it is
//! 1 and everything happens between "hosts" of one rank.

use super::allgather::Ag;
use super::smp::{layout, num_core};
use super::{elem, CommView, TAG_ALLGATHER};
use crate::mpi::datatype::Datatype;
use crate::mpi::MpiResult;

/// A regular allgather's receive side: `count` elements of `dtype` per rank.
#[derive(Clone, Copy)]
pub(crate) struct Blocks<'a> {
    pub buf: *mut u8,
    pub count: usize,
    pub dtype: i32,
    pub dt: &'a Datatype,
}

impl Blocks<'_> {
    /// Block `i` (`k` blocks from there: `k * count` elements).
    fn at(&self, i: i32) -> *mut u8 {
        elem(self.buf, self.dt, i as usize * self.count)
    }
}

/// Runs the SMP allgather `algo` (after `allgather::run`'s local copy).
pub(crate) fn run(algo: &str, c: CommView, b: Blocks) -> MpiResult<()> {
    match algo {
        "smp_simple" => smp_simple(c, b),
        "loosely_lr" => loosely_lr(c, b),
        "mvapich2_smp" => mvapich2_smp(c, b),
        _ => {
            if smp_nts(c, b)?.is_none() {
                // SMPI's allgather__default, from the block already in place
                let (counts, displs) = super::regular_counts(c.size, b.count);
                super::allgather::linear_nb(
                    c,
                    super::IN_PLACE,
                    0,
                    b.dtype,
                    b.buf,
                    &counts,
                    &displs,
                    b.dtype,
                )?;
            }
            Ok(())
        }
    }
}

/// Exchanges the blocks of the ranks of one host, `[base, base + here)`: at
/// step i, send mine to the i-th next and receive the i-th previous.
fn intra_exchange(c: CommView, b: Blocks, base: i32, here: i32) -> MpiResult<()> {
    let local = c.rank - base;
    for i in 1..here {
        let dst = base + (local + i) % here;
        let src = base + (local - i + here) % here;
        c.sendrecv(
            b.at(c.rank),
            b.count,
            b.dtype,
            dst,
            b.at(src),
            b.count,
            b.dtype,
            src,
            TAG_ALLGATHER,
        )?;
    }
    Ok(())
}

/// SMPI's `smp_simple`: exchange inside the host; each leader irecvs every
/// other host's blocks and isends its host's to every other leader; then the
/// leader sends the whole buffer to each rank of its host (blocking sends).
pub(crate) fn smp_simple(c: CommView, b: Blocks) -> MpiResult<()> {
    let nc = num_core(c)?;
    let (size, rank) = (c.size, c.rank);
    let (host, local) = (rank / nc, rank % nc);
    let hosts = (size + nc - 1) / nc;
    let base = host * nc;
    let here = if host == hosts - 1 { size - base } else { nc };
    intra_exchange(c, b, base, here)?;
    let n = b.count * nc as usize;
    if local == 0 {
        let mut reqs = Vec::with_capacity(2 * (hosts as usize - 1));
        for i in 1..hosts {
            let src = (host - i + hosts) % hosts * nc;
            reqs.push(c.irecv(b.at(src), n, b.dtype, src, TAG_ALLGATHER)?);
        }
        for i in 1..hosts {
            let dst = (host + i) % hosts * nc;
            reqs.push(c.isend(b.at(rank), n, b.dtype, dst, TAG_ALLGATHER)?);
        }
        c.waitall_checked(&reqs)?;
        let all = b.count * size as usize;
        for i in 1..here {
            c.send(b.buf, all, b.dtype, rank + i, TAG_ALLGATHER)?;
        }
    } else {
        c.recv(b.buf, b.count * size as usize, b.dtype, base, TAG_ALLGATHER)?;
    }
    Ok(())
}

/// SMPI's `SMP_NTS`: exchange inside the host; the leaders pass the hosts'
/// blocks around a ring (all receives posted first), each leader handing
/// every block it receives down a chain through its host; fewer ranks than a
/// host holds: the default allgather.
pub(crate) fn smp_nts(c: CommView, b: Blocks) -> MpiResult<Option<()>> {
    let nc = num_core(c)?;
    let (size, rank) = (c.size, c.rank);
    if size <= nc {
        return Ok(None);
    }
    let (host, local) = (rank / nc, rank % nc);
    let hosts = (size + nc - 1) / nc;
    let base = host * nc;
    let here = if host == hosts - 1 { size - base } else { nc };
    intra_exchange(c, b, base, here)?;
    let n = b.count * nc as usize;
    // the host whose blocks arrive at step i
    let from = |i: i32| (host - i - 1 + hosts) % hosts * nc;
    if local == 0 {
        let left = (host - 1 + hosts) % hosts * nc;
        let right = (host + 1) % hosts * nc;
        let mut recvs = Vec::with_capacity(hosts as usize - 1);
        for i in 0..hosts - 1 {
            recvs.push(c.irecv(b.at(from(i)), n, b.dtype, left, TAG_ALLGATHER)?);
        }
        let mut sends = vec![c.isend(b.at(base), n, b.dtype, right, TAG_ALLGATHER)?];
        for i in 0..hosts - 1 {
            c.wait(recvs[i as usize])?;
            if i < hosts - 2 {
                sends.push(c.isend(b.at(from(i)), n, b.dtype, right, TAG_ALLGATHER)?);
            }
            if here > 1 {
                c.send(b.at(from(i)), n, b.dtype, rank + 1, TAG_ALLGATHER)?;
            }
        }
        c.waitall(&sends);
    } else {
        for i in 0..hosts - 1 {
            c.recv(b.at(from(i)), n, b.dtype, rank - 1, TAG_ALLGATHER)?;
            if local < here - 1 {
                c.send(b.at(from(i)), n, b.dtype, rank + 1, TAG_ALLGATHER)?;
            }
        }
    }
    Ok(Some(()))
}

/// SMPI's `loosely_lr`: hosts pass blocks around a ring of hosts (rank r
/// sends to r + num_core), each rank one block per round, while the ranks
/// of a host swap, each round, the blocks they hold (all non-blocking; a
/// rank waits for its ring receive at the end of each round, and for the
/// rest at the end).
pub(crate) fn loosely_lr(c: CommView, b: Blocks) -> MpiResult<()> {
    let nc = num_core(c)?;
    let (size, rank) = (c.size, c.rank);
    let hosts = (size + nc - 1) / nc;
    let (host, me) = (rank / nc, rank % nc);
    let block = |h: i32, j: i32| b.at(h.rem_euclid(hosts) * nc + j);
    let inter_dst = (rank + nc) % size;
    let inter_src = (rank - nc + size) % size;
    let (mut recvs, mut sends, mut inter_sends) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..hosts {
        let mut inter_recv = None;
        for j in 0..nc {
            if j == me && i != hosts - 1 {
                inter_recv = Some(c.irecv(
                    block(host - 1 - i, me),
                    b.count,
                    b.dtype,
                    inter_src,
                    TAG_ALLGATHER,
                )?);
                inter_sends.push(c.isend(block(host - i, me), b.count, b.dtype, inter_dst, TAG_ALLGATHER)?);
            }
            if j != me {
                let peer = host * nc + j;
                recvs.push(c.irecv(block(host - i, j), b.count, b.dtype, peer, TAG_ALLGATHER)?);
                sends.push(c.isend(block(host - i, me), b.count, b.dtype, peer, TAG_ALLGATHER)?);
            }
        }
        if let Some(r) = inter_recv {
            c.wait(r)?;
        }
    }
    c.waitall_checked(&recvs)?;
    c.waitall(&sends);
    c.waitall(&inter_sends);
    Ok(())
}

/// SMPI's `mvapich2_smp`: the configured gather to each host's leader, an
/// allgather between the leaders of their hosts' blocks (SMPI's
/// `allgather__mpich`: recursive doubling on a power-of-two number of hosts
/// below 524288 B in all, Bruck up to 81920 B, else ring), then the
/// configured bcast of everything inside each host. SMPI refuses (throws)
/// unless every host holds as many ranks and each host's ranks are
/// consecutive: we then run the default allgather; so we do when the hosts
/// come in the communicator in another order than their leaders' world
/// ranks (SMPI then puts the hosts' blocks in the wrong places).
pub(crate) fn mvapich2_smp(c: CommView, b: Blocks) -> MpiResult<()> {
    let l = layout(c)?;
    let nc = c.size / l.leader_ranks.len() as i32;
    let hosts_in_order = l
        .leader_ranks
        .iter()
        .enumerate()
        .all(|(i, &r)| r == i as i32 * nc);
    if !l.uniform || !l.blocked || !hosts_in_order {
        let (counts, displs) = super::regular_counts(c.size, b.count);
        return super::allgather::linear_nb(c, super::IN_PLACE, 0, b.dtype, b.buf, &counts, &displs, b.dtype);
    }
    if b.count == 0 {
        return Ok(());
    }
    let intra = CommView::new(c.me, l.intra)?;
    let base = c.rank - intra.rank;
    super::gather(
        intra,
        b.at(c.rank),
        b.count,
        b.dtype,
        b.at(base),
        b.count,
        b.dtype,
        0,
    )?;
    if let Some(lh) = l.leaders {
        let leaders = CommView::new(c.me, lh)?;
        if leaders.size > 1 {
            let per_host = b.count * intra.size as usize;
            let (counts, displs) = super::regular_counts(leaders.size, per_host);
            let ag = Ag {
                c: leaders,
                rbuf: b.buf,
                rcounts: &counts,
                displs: &displs,
                rtype: b.dtype,
                rdt: b.dt,
            };
            let total = b.dt.size * b.count * c.size as usize;
            if super::is_pof2(leaders.size) && total < 524288 {
                ag.rdb()?;
            } else if total <= 81920 {
                ag.bruck()?;
            } else {
                ag.ring()?;
            }
        }
    }
    super::bcast(intra, b.buf, b.count * c.size as usize, b.dtype, 0)
}
