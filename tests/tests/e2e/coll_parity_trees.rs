//! Parity with SimGrid SMPI 3.32 of the tree and ring collective algorithms
//! (allgather, bcast, reduce, allreduce) added after the first set (see
//! `coll_smpi_parity` for the method).
