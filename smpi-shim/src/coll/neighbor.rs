//! Neighbourhood collectives: `MPI_(I)neighbor_allgather(v)` and
//! `MPI_(I)neighbor_alltoall(v,w)` as one non-blocking stage (every receive
//! and send posted at once, as the other non-blocking collectives in
//! [`crate::coll::nbc`]); the blocking forms wait for it. SMPI 3.32 has no
//! neighbourhood collectives, so there is no algorithm to choose.

use crate::coll::CommView;
use crate::mpi::topo::Neighbors;
use crate::mpi::{self as rt, MpiResult, Stage, MPI_PROC_NULL};

/// One buffer slot of a neighbourhood collective: `count` elements of
/// `dtype` at `buf`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Block {
    pub buf: *mut u8,
    pub count: usize,
    pub dtype: i32,
}

/// Starts a neighbourhood collective: receives `recvs[k]` from
/// `nb.sources[k]` and sends `sends[k]` to `nb.destinations[k]`, all posted
/// at once (receives first); `MPI_PROC_NULL` slots are skipped. Returns the
/// collective request (the blocking forms wait for it).
pub(crate) fn ineighbor(c: CommView, nb: Neighbors, sends: Vec<Block>, recvs: Vec<Block>) -> MpiResult<u32> {
    debug_assert_eq!(sends.len(), nb.destinations.len());
    debug_assert_eq!(recvs.len(), nb.sources.len());
    let stage: Stage = Box::new(move || {
        let mut reqs = Vec::with_capacity(sends.len() + recvs.len());
        for (k, (&src, b)) in nb.sources.iter().zip(&recvs).enumerate() {
            if src != MPI_PROC_NULL {
                reqs.push(c.irecv(b.buf, b.count, b.dtype, src, nb.recv_tag(k))?);
            }
        }
        for (k, (&dst, b)) in nb.destinations.iter().zip(&sends).enumerate() {
            if dst != MPI_PROC_NULL {
                reqs.push(c.isend(b.buf, b.count, b.dtype, dst, nb.send_tag(k))?);
            }
        }
        Ok(reqs)
    });
    rt::start_coll(c.me, c.comm, vec![stage])
}
