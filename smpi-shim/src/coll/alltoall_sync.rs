//! The synchronised pairwise exchanges of MPI_Alltoall(v) (SMPI's
//! `{pair,ring}_{light,mpi,one}_barrier`): one block to one peer per step,
//! like `pair` and `ring`, with some synchronisation between the steps.

use super::alltoall::Blocks;
use super::{barrier, is_pof2, CommView, BYTE, TAG_ALLTOALL};
use crate::mpi::MpiResult;

/// Who a rank exchanges with at step i.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Order {
    /// `rank ^ i` both ways (a power-of-two size only).
    Pair,
    /// send to `rank + i`, receive from `rank - i`.
    Ring,
}

/// What separates the steps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Sync {
    /// after step i >= 1 (but the last), a 1-byte message with step i+1's
    /// peers: sent to the rank I will receive from, received from the rank I
    /// will send to (SMPI's "light barrier"; step 0 is my own block).
    Light,
    /// an MPI_Barrier (the selected barrier algorithm) before every step.
    Mpi,
    /// one MPI_Barrier before the first step.
    One,
}

/// The order and synchronisation named by an SMPI algorithm name.
pub(super) fn parse(name: &str) -> Option<(Order, Sync)> {
    let (order, sync) = name.strip_suffix("_barrier")?.split_once('_')?;
    let order = match order {
        "pair" => Order::Pair,
        "ring" => Order::Ring,
        _ => return None,
    };
    let sync = match sync {
        "light" => Sync::Light,
        "mpi" => Sync::Mpi,
        "one" => Sync::One,
        _ => return None,
    };
    Some((order, sync))
}

/// Runs the exchange: n steps, step 0 being my own block (a local copy).
/// SMPI refuses the `pair` orders on a size that is not a power of two
/// (it throws); the `ring` order with the same synchronisation runs instead.
pub(super) fn run(c: CommView, order: Order, sync: Sync, b: &Blocks) -> MpiResult<()> {
    let (n, me) = (c.size, c.rank);
    let order = if order == Order::Pair && !is_pof2(n) {
        Order::Ring
    } else {
        order
    };
    // (destination, source) of step i
    let peers = |i: i32| match order {
        Order::Pair => (me ^ i, me ^ i),
        Order::Ring => ((me + i) % n, (me - i + n) % n),
    };
    if sync == Sync::One {
        barrier::run(c)?;
    }
    for i in 0..n {
        if sync == Sync::Mpi {
            barrier::run(c)?;
        }
        let (dst, src) = peers(i);
        b.exchange(c, dst, src)?;
        if sync == Sync::Light && i >= 1 && i + 1 < n {
            let (next_dst, next_src) = peers(i + 1);
            let token = [b'a'];
            let mut answer = [0u8];
            c.sendrecv(
                token.as_ptr(),
                1,
                BYTE,
                next_src,
                answer.as_mut_ptr(),
                1,
                BYTE,
                next_dst,
                TAG_ALLTOALL,
            )?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(parse("pair_light_barrier"), Some((Order::Pair, Sync::Light)));
        assert_eq!(parse("ring_mpi_barrier"), Some((Order::Ring, Sync::Mpi)));
        assert_eq!(parse("ring_one_barrier"), Some((Order::Ring, Sync::One)));
        assert_eq!(parse("pair"), None);
        assert_eq!(parse("mvapich2_scatter_dest"), None);
    }
}
