//! Parity with SimGrid SMPI 3.32 of the alltoall, alltoallv and reduce_scatter
//! collective algorithms added after the first set (see `coll_smpi_parity` for
//! the method).
