//! Parity with SimGrid SMPI 3.32 of the SMP collective algorithms (ranks
//! grouped by host) added after the first set (see `coll_smpi_parity` for the
//! method).
