//! `--cfg=smpi/coll-selector:mvapich2`: SMPI 3.32's MVAPICH2 selector
//! (`smpi_mvapich2_selector.cpp`) with the tuning tables SMPI loads, MVAPICH2's
//! tables for TACC's Stampede (`smpi_mvapich2_selector_stampede.hpp`), carried
//! over as data.
//!
//! A table is a list of rows, one per communicator size: the first row whose
//! `numproc` is at least the size applies (the last row beyond). In a row, the
//! first entry whose `max` is at least the message size applies (`max` -1: no
//! bound; only the row's first `size` entries count). Some tables exist per
//! number of ranks per host (1, 2, 16); the selector uses the one matching the
//! communicator's host layout (`smp.rs`) when the placement is uniform, else
//! the one-rank-per-host table.
//!
//! What each collective runs (names are the algorithms of this library):
//! * barrier: `mvapich2_pair`; alltoallv: `ring` (`ompi_basic_linear` in
//!   place).
//! * alltoall: SMPI always uses the one-rank-per-host table (its selector
//!   never looks at the layout).
//! * allgather, scatter: they set up the host layout first (SMPI's
//!   `init_smp`, paid as SMPI pays it).
//! * gather: the table applies only when the host layout is already known
//!   and blocked (SMPI asks `is_blocked` without setting the layout up);
//!   otherwise SMPI's `gather__mpich`, the Open MPI binomial gather.
//! * allgatherv, reduce_scatter: by total bytes.
//! * bcast: sets up the host layout; MVAPICH2's two-level bcast with the
//!   leaders' bcast the table names (`smp_bcast::mvapich2_tuned`).
//! * reduce: MVAPICH2's two-level reduce with the host's and the leaders'
//!   reductions the table names (`smp_reduce::mvapich2_two_level` with
//!   [`Tuned`]), or the table's flat reduce.
//! * allreduce: the two-level entries run `smp_reduce::allreduce_mv2_tuned`
//!   (the configured reduce and bcast inside each host, recursive doubling
//!   or MVAPICH2's reduce-scatter + allgather between the leaders);
//!   non-commutative operations recursive doubling.
//!
//! SMPI's slips and what is done instead:
//! * allreduce's row for 1025 to 2048 ranks names, for 65 to 512 B, a
//!   reduce to rank 0 alone: recursive doubling here.
//! * allgather on 16 ranks per host names a placeholder that does nothing
//!   (SMPI returns `MPI_ERR_OTHER` with the buffer untouched): `rdb` here.
//! * reduce_scatter with a non-commutative operation on a power-of-two size
//!   with equal blocks runs `mpich_noncomm` and then `mpich_rdb` (both): the
//!   same here. In place, SMPI's second run reads the first one's result
//!   (wrong data); here both read the input.
//! * scatter's two-level algorithms run, in SMPI, with the intra-host
//!   scatter the table names; this library's run SMPI's `scatter__mpich`
//!   (Open MPI's binomial) there, which is the table's choice except where
//!   it names the direct scatter (16 ranks per host; 2 ranks per host on 65
//!   to 128 ranks below 128 B): those entries are not SMPI's time. (Gather's
//!   two-level entries name `gather__mpich` inside hosts, as the forced
//!   algorithm runs.)
//! * SMPI's tables set global inner functions that later forced
//!   `mvapich2_two_level` calls keep using; here a forced algorithm always
//!   runs as when forced first.

use super::select::Facts;
use super::smp;
use super::smp_reduce::{Inner, Tuned};
use super::CommView;
use crate::mpi::MpiResult;

/// `max` of an unbounded entry.
const NO_MAX: i64 = -1;

/// One size row: communicator sizes up to `numproc`, entries
/// `(max bytes, algorithm)`, of which the first `size` count.
struct Row {
    numproc: i32,
    size: usize,
    entries: &'static [(i64, &'static str)],
}

const fn row(numproc: i32, size: usize, entries: &'static [(i64, &'static str)]) -> Row {
    Row {
        numproc,
        size,
        entries,
    }
}

/// SMPI's row search: skip rows while the size exceeds `numproc`.
fn find_row(rows: &[Row], n: i32) -> usize {
    let mut r = 0;
    while r + 1 < rows.len() && n > rows[r].numproc {
        r += 1;
    }
    r
}

/// SMPI's entry search in a row: skip entries while `bytes > max` (scaled by
/// `scale`) and the entry is bounded.
fn find_entry(row: &Row, bytes: i64, scale: i64) -> usize {
    let mut i = 0;
    while i + 1 < row.size && bytes > scale * row.entries[i].0 && row.entries[i].0 != NO_MAX {
        i += 1;
    }
    i
}

// MVAPICH2 function names, as SMPI maps them to its algorithms.
const A2A_BRUCK: &str = "bruck";
const A2A_RD: &str = "rdb";
const A2A_SCATTER_DEST: &str = "mvapich2_scatter_dest";
const A2A_PAIRWISE: &str = "pair";

/// Alltoall, one rank per host (the only table SMPI's selector reads).
const ALLTOALL: &[Row] = &[
    row(2, 1, &[(NO_MAX, A2A_PAIRWISE)]),
    row(4, 2, &[(262144, A2A_SCATTER_DEST), (NO_MAX, A2A_PAIRWISE)]),
    row(8, 2, &[(8, A2A_RD), (NO_MAX, A2A_SCATTER_DEST)]),
    row(
        16,
        3,
        &[(64, A2A_RD), (512, A2A_BRUCK), (NO_MAX, A2A_SCATTER_DEST)],
    ),
    row(
        32,
        3,
        &[(32, A2A_RD), (2048, A2A_BRUCK), (NO_MAX, A2A_SCATTER_DEST)],
    ),
    row(
        64,
        3,
        &[(8, A2A_RD), (1024, A2A_BRUCK), (NO_MAX, A2A_SCATTER_DEST)],
    ),
];

const AG_RD: &str = "rdb";
const AG_RING: &str = "ring";
/// MVAPICH2's `RD_Allgather_Comm`, a placeholder in SMPI.
const AG_RD_COMM: &str = "rd_allgather_comm";

/// Allgather tables (1, 2 and 16 ranks per host): rows and, per entry, whether
/// the entry is two-level.
const ALLGATHER_1PPN: &[Row] = &[
    row(2, 1, &[(NO_MAX, AG_RING)]),
    row(4, 2, &[(262144, AG_RD), (NO_MAX, AG_RING)]),
    row(8, 2, &[(131072, AG_RD), (NO_MAX, AG_RING)]),
    row(16, 2, &[(131072, AG_RD), (NO_MAX, AG_RING)]),
    row(32, 2, &[(65536, AG_RD), (NO_MAX, AG_RING)]),
    row(64, 2, &[(32768, AG_RD), (NO_MAX, AG_RING)]),
];
const ALLGATHER_1PPN_TWO_LEVEL: &[&[bool]] = &[
    &[false],
    &[false, false],
    &[false, false],
    &[false, false],
    &[false, false],
    &[false, false],
];
const ALLGATHER_2PPN: &[Row] = &[
    row(4, 2, &[(524288, AG_RD), (NO_MAX, AG_RING)]),
    row(8, 2, &[(32768, AG_RD), (524288, AG_RING), (NO_MAX, AG_RING)]),
    row(16, 2, &[(16384, AG_RD), (524288, AG_RING), (NO_MAX, AG_RING)]),
    row(32, 2, &[(65536, AG_RD), (524288, AG_RING), (NO_MAX, AG_RING)]),
    row(64, 2, &[(32768, AG_RD), (524288, AG_RING), (NO_MAX, AG_RING)]),
    row(128, 2, &[(65536, AG_RD), (524288, AG_RING), (NO_MAX, AG_RING)]),
];
const ALLGATHER_2PPN_TWO_LEVEL: &[&[bool]] = &[
    &[false, false],
    &[false, true, false],
    &[false, true, false],
    &[true, true, false],
    &[true, true, false],
    &[true, true, false],
];
const ALLGATHER_16PPN: &[Row] = &[
    row(16, 2, &[(1024, AG_RD), (NO_MAX, AG_RING)]),
    row(32, 2, &[(1024, AG_RD_COMM), (NO_MAX, AG_RING)]),
    row(64, 2, &[(1024, AG_RD_COMM), (NO_MAX, AG_RING)]),
    row(128, 2, &[(1024, AG_RD_COMM), (NO_MAX, AG_RING)]),
    row(256, 2, &[(1024, AG_RD_COMM), (NO_MAX, AG_RING)]),
    row(512, 2, &[(1024, AG_RD_COMM), (NO_MAX, AG_RING)]),
];
const ALLGATHER_16PPN_TWO_LEVEL: &[&[bool]] = &[
    &[false, false],
    &[false, false],
    &[false, false],
    &[false, false],
    &[false, false],
    &[false, false],
];

const G_DIRECT: &str = "ompi_basic_linear";
const G_MPICH: &str = "ompi_binomial";
const G_TWO_LEVEL: &str = "mvapich2_two_level";

/// Gather, inter-leader functions (used when the layout is known and blocked).
const GATHER: &[Row] = &[
    row(16, 2, &[(524288, G_DIRECT), (NO_MAX, G_MPICH)]),
    row(
        32,
        3,
        &[(16384, G_DIRECT), (131072, G_MPICH), (NO_MAX, G_TWO_LEVEL)],
    ),
    row(
        64,
        3,
        &[(256, G_TWO_LEVEL), (16384, G_DIRECT), (NO_MAX, G_TWO_LEVEL)],
    ),
    row(
        128,
        3,
        &[(512, G_TWO_LEVEL), (16384, G_DIRECT), (NO_MAX, G_TWO_LEVEL)],
    ),
    row(
        256,
        3,
        &[(512, G_TWO_LEVEL), (16384, G_DIRECT), (NO_MAX, G_TWO_LEVEL)],
    ),
    row(
        512,
        3,
        &[(512, G_TWO_LEVEL), (16384, G_DIRECT), (NO_MAX, G_TWO_LEVEL)],
    ),
    row(
        1024,
        3,
        &[(512, G_TWO_LEVEL), (16384, G_DIRECT), (NO_MAX, G_TWO_LEVEL)],
    ),
];

const AGV_RD: &str = "mpich_rdb";
const AGV_RING: &str = "mpich_ring";

/// Allgatherv, bounds in bytes per rank (SMPI compares the total with
/// size × max).
const ALLGATHERV: &[Row] = &[
    row(16, 2, &[(512, AGV_RD), (NO_MAX, AGV_RING)]),
    row(32, 2, &[(512, AGV_RD), (NO_MAX, AGV_RING)]),
    row(64, 2, &[(256, AGV_RD), (NO_MAX, AGV_RING)]),
    row(128, 2, &[(256, AGV_RD), (NO_MAX, AGV_RING)]),
    row(256, 2, &[(256, AGV_RD), (NO_MAX, AGV_RING)]),
    row(512, 2, &[(256, AGV_RD), (NO_MAX, AGV_RING)]),
];

const RS_BASIC: &str = "default";
const RS_REC_HALVING: &str = "ompi_basic_recursivehalving";
const RS_PAIRWISE: &str = "mpich_pair";

/// Reduce_scatter (commutative operations), by total bytes.
const REDUCE_SCATTER: &[Row] = &[
    row(
        16,
        3,
        &[(64, RS_BASIC), (65536, RS_REC_HALVING), (NO_MAX, RS_PAIRWISE)],
    ),
    row(
        32,
        3,
        &[(64, RS_BASIC), (131072, RS_REC_HALVING), (NO_MAX, RS_PAIRWISE)],
    ),
    row(
        64,
        3,
        &[(1024, RS_BASIC), (262144, RS_REC_HALVING), (NO_MAX, RS_PAIRWISE)],
    ),
    row(128, 2, &[(128, RS_BASIC), (NO_MAX, RS_REC_HALVING)]),
    row(256, 2, &[(128, RS_BASIC), (NO_MAX, RS_REC_HALVING)]),
    row(512, 2, &[(256, RS_BASIC), (NO_MAX, RS_REC_HALVING)]),
];

const S_BINOMIAL: &str = "ompi_binomial";
const S_DIRECT: &str = "ompi_basic_linear";
const S_TWO_LEVEL_BINOMIAL: &str = "mvapich2_two_level_binomial";
const S_TWO_LEVEL_DIRECT: &str = "mvapich2_two_level_direct";
/// MVAPICH2's multicast scatter: never available, the next entry runs.
const S_MCST: &str = "mcst";

/// Scatter tables (1, 2 and 16 ranks per host), inter-leader functions.
const SCATTER_1PPN: &[Row] = &[
    row(2, 1, &[(NO_MAX, S_BINOMIAL)]),
    row(4, 1, &[(NO_MAX, S_DIRECT)]),
    row(8, 1, &[(NO_MAX, S_DIRECT)]),
    row(16, 1, &[(NO_MAX, S_DIRECT)]),
    row(32, 1, &[(NO_MAX, S_DIRECT)]),
    row(64, 2, &[(32, S_BINOMIAL), (NO_MAX, S_DIRECT)]),
];
const SCATTER_2PPN: &[Row] = &[
    row(4, 2, &[(4096, S_BINOMIAL), (NO_MAX, S_DIRECT)]),
    row(8, 2, &[(512, S_TWO_LEVEL_DIRECT), (NO_MAX, S_DIRECT)]),
    row(16, 2, &[(2048, S_TWO_LEVEL_DIRECT), (NO_MAX, S_DIRECT)]),
    row(32, 2, &[(2048, S_TWO_LEVEL_DIRECT), (NO_MAX, S_DIRECT)]),
    row(64, 2, &[(8192, S_TWO_LEVEL_DIRECT), (NO_MAX, S_DIRECT)]),
    row(
        128,
        4,
        &[
            (16, S_BINOMIAL),
            (128, S_TWO_LEVEL_BINOMIAL),
            (16384, S_TWO_LEVEL_DIRECT),
            (NO_MAX, S_DIRECT),
        ],
    ),
];
const SCATTER_16PPN: &[Row] = &[
    row(16, 2, &[(256, S_BINOMIAL), (NO_MAX, S_DIRECT)]),
    row(32, 2, &[(512, S_BINOMIAL), (NO_MAX, S_DIRECT)]),
    row(64, 2, &[(1024, S_TWO_LEVEL_DIRECT), (NO_MAX, S_DIRECT)]),
    row(
        128,
        4,
        &[
            (16, S_MCST),
            (16, S_TWO_LEVEL_DIRECT),
            (2048, S_TWO_LEVEL_DIRECT),
            (NO_MAX, S_DIRECT),
        ],
    ),
    row(
        256,
        4,
        &[
            (16, S_MCST),
            (16, S_TWO_LEVEL_DIRECT),
            (2048, S_TWO_LEVEL_DIRECT),
            (NO_MAX, S_DIRECT),
        ],
    ),
    row(
        512,
        4,
        &[
            (16, S_MCST),
            (16, S_TWO_LEVEL_DIRECT),
            (4096, S_TWO_LEVEL_DIRECT),
            (NO_MAX, S_DIRECT),
        ],
    ),
    row(
        1024,
        5,
        &[
            (16, S_MCST),
            (16, S_BINOMIAL),
            (32, S_BINOMIAL),
            (4096, S_TWO_LEVEL_DIRECT),
            (NO_MAX, S_DIRECT),
        ],
    ),
    row(
        2048,
        7,
        &[
            (16, S_MCST),
            (16, S_TWO_LEVEL_BINOMIAL),
            (128, S_TWO_LEVEL_BINOMIAL),
            (1024, S_TWO_LEVEL_DIRECT),
            (16384, S_TWO_LEVEL_DIRECT),
            (65536, S_DIRECT),
            (NO_MAX, S_TWO_LEVEL_DIRECT),
        ],
    ),
];

const B_MPICH: &str = "mv2_tuned_mpich";
const B_BINOMIAL: &str = "mv2_tuned_binomial";
const B_SCATTER_RING: &str = "mv2_tuned_scatter_LR";
const B_SCATTER_DOUBLING: &str = "mv2_tuned_scatter_rdb";
/// The one entry that is not two-level: scatter + ring allgather on the
/// whole communicator.
const B_FLAT_SCATTER_RING: &str = "scatter_LR_allgather";

/// Bcast, inter-leader functions. MVAPICH2's zero-copy and plain pipelined
/// bcasts and its shared-memory bcast are all SMPI's `bcast__mpich`; every
/// entry is two-level (the leaders' bcast, then `bcast__mpich` inside each
/// host from its leader) except [`B_FLAT_SCATTER_RING`].
const BCAST: &[Row] = &[
    row(
        16,
        11,
        &[
            (8, B_MPICH),
            (16, B_MPICH),
            (1024, B_MPICH),
            (8192, B_MPICH),
            (16384, B_BINOMIAL),
            (32768, B_MPICH),
            (65536, B_MPICH),
            (131072, B_SCATTER_RING),
            (262144, B_SCATTER_RING),
            (524288, B_SCATTER_DOUBLING),
            (NO_MAX, B_SCATTER_RING),
        ],
    ),
    row(
        32,
        8,
        &[
            (128, B_MPICH),
            (256, B_MPICH),
            (32768, B_MPICH),
            (65536, B_MPICH),
            (131072, B_MPICH),
            (262144, B_MPICH),
            (524288, B_MPICH),
            (NO_MAX, B_MPICH),
        ],
    ),
    row(
        64,
        9,
        &[
            (2, B_MPICH),
            (4, B_MPICH),
            (16, B_MPICH),
            (32, B_MPICH),
            (128, B_MPICH),
            (256, B_MPICH),
            (4096, B_MPICH),
            (32768, B_MPICH),
            (NO_MAX, B_MPICH),
        ],
    ),
    row(
        128,
        4,
        &[
            (8192, B_MPICH),
            (16384, B_MPICH),
            (524288, B_MPICH),
            (NO_MAX, B_FLAT_SCATTER_RING),
        ],
    ),
    row(
        256,
        5,
        &[
            (16384, B_MPICH),
            (131072, B_MPICH),
            (262144, B_SCATTER_RING),
            (524288, B_MPICH),
            (NO_MAX, B_SCATTER_RING),
        ],
    ),
    row(
        512,
        5,
        &[
            (4096, B_MPICH),
            (16384, B_MPICH),
            (131072, B_MPICH),
            (262144, B_MPICH),
            (NO_MAX, B_SCATTER_RING),
        ],
    ),
    row(
        1024,
        5,
        &[
            (8192, B_MPICH),
            (16384, B_MPICH),
            (65536, B_MPICH),
            (524288, B_MPICH),
            (NO_MAX, B_SCATTER_RING),
        ],
    ),
    row(
        2048,
        7,
        &[
            (16, B_MPICH),
            (32, B_MPICH),
            (4096, B_MPICH),
            (16384, B_MPICH),
            (32768, B_MPICH),
            (524288, B_MPICH),
            (NO_MAX, B_SCATTER_RING),
        ],
    ),
];

const R_KNOMIAL: &str = "mvapich2_knomial";
const R_BINOMIAL: &str = "binomial";
const R_REDSCAT_GATHER: &str = "scatter_gather";
const R_SHMEM: &str = "ompi_basic_linear";

/// One reduce size row: inter-leader entries (with whether each is
/// two-level) and intra-node entries.
struct ReduceRow {
    inter: Row,
    two_level: &'static [bool],
    intra: Row,
}

const fn rrow(
    numproc: i32,
    two_level: &'static [bool],
    inter: &'static [(i64, &'static str)],
    intra: &'static [(i64, &'static str)],
) -> ReduceRow {
    ReduceRow {
        inter: row(numproc, inter.len(), inter),
        two_level,
        intra: row(numproc, intra.len(), intra),
    }
}

/// Reduce (all rows: inter and intra k-nomial factor 4).
const REDUCE: &[ReduceRow] = &[
    rrow(
        16,
        &[true, false, false],
        &[
            (262144, R_KNOMIAL),
            (1048576, R_BINOMIAL),
            (NO_MAX, R_REDSCAT_GATHER),
        ],
        &[(65536, R_SHMEM), (NO_MAX, R_BINOMIAL)],
    ),
    rrow(
        32,
        &[true, true, true, true, false, false, false],
        &[
            (8192, R_KNOMIAL),
            (16384, R_KNOMIAL),
            (32768, R_KNOMIAL),
            (65536, R_BINOMIAL),
            (262144, R_KNOMIAL),
            (1048576, R_BINOMIAL),
            (NO_MAX, R_REDSCAT_GATHER),
        ],
        &[
            (8192, R_SHMEM),
            (16384, R_KNOMIAL),
            (32768, R_SHMEM),
            (65536, R_SHMEM),
            (262144, R_SHMEM),
            (NO_MAX, R_BINOMIAL),
        ],
    ),
    rrow(
        64,
        &[true, true, true, true, false],
        &[
            (8192, R_KNOMIAL),
            (16384, R_KNOMIAL),
            (65536, R_BINOMIAL),
            (262144, R_KNOMIAL),
            (NO_MAX, R_REDSCAT_GATHER),
        ],
        &[
            (8192, R_SHMEM),
            (16384, R_KNOMIAL),
            (65536, R_SHMEM),
            (262144, R_KNOMIAL),
            (NO_MAX, R_BINOMIAL),
        ],
    ),
    rrow(
        128,
        &[true, false, true, false, true, false],
        &[
            (8192, R_KNOMIAL),
            (16384, R_KNOMIAL),
            (65536, R_BINOMIAL),
            (262144, R_KNOMIAL),
            (1048576, R_BINOMIAL),
            (NO_MAX, R_REDSCAT_GATHER),
        ],
        &[
            (8192, R_SHMEM),
            (16384, R_KNOMIAL),
            (65536, R_SHMEM),
            (262144, R_KNOMIAL),
            (NO_MAX, R_BINOMIAL),
        ],
    ),
    rrow(
        256,
        &[true, true, true, false, true, true, false],
        &[
            (8192, R_KNOMIAL),
            (16384, R_KNOMIAL),
            (32768, R_BINOMIAL),
            (65536, R_BINOMIAL),
            (262144, R_BINOMIAL),
            (1048576, R_BINOMIAL),
            (NO_MAX, R_REDSCAT_GATHER),
        ],
        &[
            (8192, R_SHMEM),
            (16384, R_KNOMIAL),
            (32768, R_SHMEM),
            (65536, R_SHMEM),
            (262144, R_KNOMIAL),
            (NO_MAX, R_BINOMIAL),
        ],
    ),
    rrow(
        512,
        &[true, false, true, true, true, false],
        &[
            (8192, R_KNOMIAL),
            (16384, R_KNOMIAL),
            (65536, R_BINOMIAL),
            (262144, R_BINOMIAL),
            (1048576, R_BINOMIAL),
            (NO_MAX, R_REDSCAT_GATHER),
        ],
        &[
            (8192, R_SHMEM),
            (16384, R_KNOMIAL),
            (65536, R_SHMEM),
            (262144, R_KNOMIAL),
            (NO_MAX, R_BINOMIAL),
        ],
    ),
    rrow(
        1024,
        &[true, false, true, true, true],
        &[
            (8192, R_KNOMIAL),
            (16384, R_KNOMIAL),
            (65536, R_BINOMIAL),
            (262144, R_BINOMIAL),
            (NO_MAX, R_BINOMIAL),
        ],
        &[
            (8192, R_SHMEM),
            (16384, R_KNOMIAL),
            (65536, R_SHMEM),
            (262144, R_KNOMIAL),
            (NO_MAX, R_BINOMIAL),
        ],
    ),
    rrow(
        2048,
        &[true, false, true, true, true, true],
        &[
            (2048, R_KNOMIAL),
            (4096, R_KNOMIAL),
            (16384, R_BINOMIAL),
            (65536, R_BINOMIAL),
            (131072, R_BINOMIAL),
            (NO_MAX, R_BINOMIAL),
        ],
        &[
            (2048, R_SHMEM),
            (4096, R_SHMEM),
            (16384, R_SHMEM),
            (65536, R_KNOMIAL),
            (131072, R_BINOMIAL),
            (NO_MAX, R_SHMEM),
        ],
    ),
];

/// The two-level reduces' names: `mv2_tl_<intra>_<inter>`.
const REDUCE_TWO_LEVEL: &[(&str, &str, &str)] = &[
    ("mv2_tl_shmem_knomial", R_SHMEM, R_KNOMIAL),
    ("mv2_tl_shmem_binomial", R_SHMEM, R_BINOMIAL),
    ("mv2_tl_knomial_knomial", R_KNOMIAL, R_KNOMIAL),
    ("mv2_tl_knomial_binomial", R_KNOMIAL, R_BINOMIAL),
    ("mv2_tl_binomial_knomial", R_BINOMIAL, R_KNOMIAL),
    ("mv2_tl_binomial_binomial", R_BINOMIAL, R_BINOMIAL),
];

fn inner_of(name: &str) -> Inner {
    match name {
        R_SHMEM => Inner::Shmem,
        R_KNOMIAL => Inner::Knomial,
        _ => Inner::Binomial,
    }
}

/// The reductions of a `mv2_tl_*` name (see [`REDUCE_TWO_LEVEL`]).
pub(crate) fn reduce_two_level(name: &str) -> Tuned {
    let (_, intra, inter) = REDUCE_TWO_LEVEL
        .iter()
        .find(|t| t.0 == name)
        .expect("a two-level reduce name");
    Tuned {
        intra: inner_of(intra),
        inter: inner_of(inter),
    }
}

/// The two-level reduce that SMPI's `reduce__mvapich2` leaves its function
/// pointers naming after a call with elements (it sets the intra-node and
/// the inter-leader one from its table on every such call, whatever it then
/// runs; `mvapich2_two_level` reads them), if this library has that pair
/// (not with the reduce-scatter + gather inter-leader function).
/// `n` ranks, `bytes` = count × type size.
pub(crate) fn reduce_pointers(n: i32, bytes: usize) -> Option<&'static str> {
    let bytes = bytes as i64;
    let r = &REDUCE[find_row_by(REDUCE.len(), |i| REDUCE[i].inter.numproc, n)];
    let inter = r.inter.entries[find_entry(&r.inter, bytes, 1)].1;
    let intra = r.intra.entries[find_entry(&r.intra, bytes, 1)].1;
    REDUCE_TWO_LEVEL
        .iter()
        .find(|t| t.1 == intra && t.2 == inter)
        .map(|t| t.0)
}

/// SMPI's `reduce__mvapich2` (count > 0).
fn reduce(f: &Facts) -> MpiResult<&'static str> {
    let n = f.c.size;
    let bytes = f.bytes as i64;
    let r = &REDUCE[find_row_by(REDUCE.len(), |i| REDUCE[i].inter.numproc, n)];
    let i = find_entry(&r.inter, bytes, 1);
    let inter = r.inter.entries[i].1;
    let intra = r.intra.entries[find_entry(&r.intra, bytes, 1)].1;
    if r.two_level[i] {
        if !f.commutative {
            return Ok(R_BINOMIAL);
        }
        smp::layout(f.c)?;
        return Ok(REDUCE_TWO_LEVEL
            .iter()
            .find(|t| t.1 == intra && t.2 == inter)
            .expect("tables name these")
            .0);
    }
    Ok(match inter {
        R_KNOMIAL if !f.commutative => R_BINOMIAL,
        R_REDSCAT_GATHER if (f.count as i64) < super::pof2_floor(n) as i64 => R_BINOMIAL,
        x => x,
    })
}

fn find_row_by(len: usize, numproc: impl Fn(usize) -> i32, n: i32) -> usize {
    let mut r = 0;
    while r + 1 < len && n > numproc(r) {
        r += 1;
    }
    r
}

const AR_RD: &str = "rdb";
const AR_RS: &str = "mvapich2_rs";
/// MVAPICH2's multicast allreduces: never available, recursive doubling runs.
const AR_MCST: &str = "mcst";
/// SMPI's `MPIR_Allreduce_reduce_p2p_MV2` as an inter-leader function: a
/// reduce to rank 0 only (the other ranks get nothing).
const AR_REDUCE_P2P: &str = "reduce_p2p";

/// Allreduce, inter-leader entries and whether each is two-level (the
/// intra-node entries all name SMPI's reduce to the host's leader).
const ALLREDUCE: &[(Row, &[bool])] = &[
    (row(16, 2, &[(1024, AR_RD), (NO_MAX, AR_RS)]), &[true, false]),
    (
        row(32, 3, &[(1024, AR_RD), (16384, AR_RD), (NO_MAX, AR_RS)]),
        &[true, true, false],
    ),
    (
        row(64, 3, &[(512, AR_RD), (16384, AR_RD), (NO_MAX, AR_RS)]),
        &[true, true, false],
    ),
    (
        row(128, 3, &[(512, AR_RD), (16384, AR_RD), (NO_MAX, AR_RS)]),
        &[true, true, false],
    ),
    (
        row(256, 3, &[(512, AR_RD), (16384, AR_RD), (NO_MAX, AR_RS)]),
        &[true, true, false],
    ),
    (
        row(512, 3, &[(512, AR_RD), (16384, AR_RD), (NO_MAX, AR_RS)]),
        &[true, true, false],
    ),
    (
        row(
            1024,
            4,
            &[(512, AR_RD), (8192, AR_RD), (65536, AR_RS), (NO_MAX, AR_RS)],
        ),
        &[true, true, true, false],
    ),
    (
        row(
            2048,
            4,
            &[
                (64, AR_RD),
                (512, AR_REDUCE_P2P),
                (4096, AR_MCST),
                (16384, AR_RS),
                (NO_MAX, AR_RS),
            ],
        ),
        &[true, true, true, false],
    ),
];

/// SMPI's `allreduce__mvapich2` (count > 0).
fn allreduce(f: &Facts) -> MpiResult<&'static str> {
    let n = f.c.size;
    let ri = find_row_by(ALLREDUCE.len(), |i| ALLREDUCE[i].0.numproc, n);
    let (r, two_level) = &ALLREDUCE[ri];
    let i = find_entry(r, f.bytes as i64, 1);
    let alg = match r.entries[i].1 {
        AR_MCST => AR_RD,
        a => a,
    };
    if two_level[i] {
        if !f.commutative {
            return Ok(AR_RD);
        }
        smp::layout(f.c)?;
        return Ok(if alg == AR_RD { "mv2_tl_rd" } else { "mv2_tl_rs" });
    }
    // SMPI's reduce_p2p leaves all but rank 0 without the result: recursive
    // doubling instead (a size of 1025 to 2048 ranks, 65 to 512 B).
    Ok(if alg == AR_REDUCE_P2P { AR_RD } else { alg })
}

/// Ranks per host if the placement is uniform and SMPI has a table for that
/// number (its `partial_sub_ok`), as an index into the per-host tables.
fn ppn_conf(c: CommView) -> MpiResult<Option<usize>> {
    let l = smp::layout(c)?;
    if !l.uniform {
        return Ok(None);
    }
    let local = CommView::new(c.me, l.intra)?.size;
    Ok([1, 2, 16].iter().position(|&p| p == local))
}

/// The algorithm SMPI's MVAPICH2 selector runs for this call.
pub(crate) fn choose(coll: &str, f: &Facts) -> MpiResult<&'static str> {
    let n = f.c.size;
    let bytes = f.bytes as i64;
    Ok(match coll {
        "barrier" => "mvapich2_pair",
        // a zero count returns at once (the reduce module does too)
        "reduce" if f.count == 0 => R_BINOMIAL,
        "reduce" => reduce(f)?,
        "allreduce" if f.count == 0 => AR_RS,
        "allreduce" => allreduce(f)?,
        // (a zero count returns before anything; the bcast module does too)
        "bcast" if f.bytes == 0 => "mv2_tuned_mpich",
        "bcast" => {
            smp::layout(f.c)?;
            let r = &BCAST[find_row(BCAST, n)];
            r.entries[find_entry(r, bytes, 1)].1
        }
        "alltoallv" if f.in_place => "ompi_basic_linear",
        "alltoallv" => "ring",
        "alltoall" => {
            let r = &ALLTOALL[find_row(ALLTOALL, n)];
            r.entries[find_entry(r, bytes, 1)].1
        }
        "allgather" => {
            let conf = ppn_conf(f.c)?;
            let (rows, two) = match conf {
                Some(1) => (ALLGATHER_2PPN, ALLGATHER_2PPN_TWO_LEVEL),
                Some(2) => (ALLGATHER_16PPN, ALLGATHER_16PPN_TWO_LEVEL),
                _ => (ALLGATHER_1PPN, ALLGATHER_1PPN_TWO_LEVEL),
            };
            let ri = find_row(rows, n);
            let i = find_entry(&rows[ri], bytes, 1);
            let alg = rows[ri].entries[i].1;
            if two[ri][i] {
                if conf.is_none() {
                    AG_RD
                } else if smp::layout(f.c)?.blocked {
                    "mvapich2_smp"
                } else {
                    super::select::mpich_allgather(n, f.total, false)
                }
            } else if alg == AG_RD_COMM {
                AG_RD
            } else {
                alg
            }
        }
        "allgatherv" => {
            let r = &ALLGATHERV[find_row(ALLGATHERV, n)];
            let alg = r.entries[find_entry(r, bytes, n as i64)].1;
            if alg == AGV_RD && !super::is_pof2(n) {
                "ompi_bruck"
            } else {
                alg
            }
        }
        "gather" => match smp::known_layout(f.c)? {
            Some(l) if l.blocked => {
                let r = &GATHER[find_row(GATHER, n)];
                r.entries[find_entry(r, bytes, 1)].1
            }
            _ => G_MPICH,
        },
        "scatter" => {
            let rows = match ppn_conf(f.c)? {
                Some(1) => SCATTER_2PPN,
                Some(2) => SCATTER_16PPN,
                _ => SCATTER_1PPN,
            };
            let r = &rows[find_row(rows, n)];
            let i = find_entry(r, bytes, 1);
            let mut alg = r.entries[i].1;
            if alg == S_MCST {
                alg = r.entries.get(i + 1).map_or(S_BINOMIAL, |e| e.1);
            }
            if (alg == S_TWO_LEVEL_DIRECT || alg == S_TWO_LEVEL_BINOMIAL) && !smp::layout(f.c)?.blocked {
                S_BINOMIAL
            } else {
                alg
            }
        }
        "reduce_scatter" if f.commutative => {
            let r = &REDUCE_SCATTER[find_row(REDUCE_SCATTER, n)];
            r.entries[find_entry(r, bytes, 1)].1
        }
        "reduce_scatter" if super::is_pof2(n) && f.regular => "mvapich2_noncomm_rdb",
        "reduce_scatter" => "mpich_rdb",
        // collectives without an MVAPICH2 rule (none today): SMPI's default
        _ => "default",
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn searches_follow_smpi() {
        // 4 ranks: row 4; 262144 B stays on scatter_dest, one more byte goes pairwise.
        let r = &ALLTOALL[find_row(ALLTOALL, 4)];
        assert_eq!(r.entries[find_entry(r, 262144, 1)].1, A2A_SCATTER_DEST);
        assert_eq!(r.entries[find_entry(r, 262145, 1)].1, A2A_PAIRWISE);
        // 7 ranks: row 8; beyond the last row, the last row.
        assert_eq!(ALLTOALL[find_row(ALLTOALL, 7)].numproc, 8);
        assert_eq!(ALLTOALL[find_row(ALLTOALL, 1000)].numproc, 64);
        // only the first `size` entries count
        let r = &ALLGATHER_2PPN[find_row(ALLGATHER_2PPN, 8)];
        assert_eq!(find_entry(r, 1 << 30, 1), 1);
        // allgatherv scales the bounds by the size
        let r = &ALLGATHERV[find_row(ALLGATHERV, 4)];
        assert_eq!(r.entries[find_entry(r, 2048, 4)].1, AGV_RD);
        assert_eq!(r.entries[find_entry(r, 2049, 4)].1, AGV_RING);
    }

    #[test]
    fn reduce_pointers_follow_the_table_whatever_runs() {
        // 4 ranks (row 16): two-level k-nomial up to 256 KiB (shared-memory
        // reduce in the host up to 64 KiB), then a one-level binomial whose
        // pointers still name a binomial host reduce, then reduce-scatter +
        // gather, which no two-level reduce of ours has
        assert_eq!(reduce_pointers(4, 16384), Some("mv2_tl_shmem_knomial"));
        assert_eq!(reduce_pointers(4, 262144), Some("mv2_tl_binomial_knomial"));
        assert_eq!(reduce_pointers(4, 1048576), Some("mv2_tl_binomial_binomial"));
        assert_eq!(reduce_pointers(4, 1048577), None);
        // 32 ranks: 16 KiB runs the k-nomial inside the host
        assert_eq!(reduce_pointers(32, 16384), Some("mv2_tl_knomial_knomial"));
    }
}
