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
//!
//! Not carried over (the selector refuses them with an error instead of
//! giving a time that is not SMPI's): bcast, reduce and allreduce. SMPI's
//! versions run MVAPICH2's two-level algorithms with the inner functions the
//! tables name (which this library's two-level algorithms do not take), and
//! its allreduce crashes (segmentation fault) on 1000 `MPI_INT` on 4 ranks.
//!
//! SMPI's slips and what is done instead:
//! * allgather on 16 ranks per host names a placeholder that does nothing
//!   (SMPI returns `MPI_ERR_OTHER` with the buffer untouched): `rdb` here.
//! * reduce_scatter with a non-commutative operation on a power-of-two size
//!   with equal blocks runs `mpich_noncomm` and then `mpich_rdb` (both): the
//!   same here. In place, SMPI's second run reads the first one's result
//!   (wrong data); here both read the input.
//! * scatter's two-level algorithms run with the intra-host scatter the
//!   table names in SMPI (`ompi_binomial` or `ompi_basic_linear`); this
//!   library's run SMPI's `scatter__mpich` there, so those entries (two ranks
//!   per host on 5 to 128 ranks, 16 ranks per host on more than 32) are not
//!   SMPI's time; likewise gather's two-level entries (more than 16 ranks).
//! * SMPI's tables set global inner functions that later forced
//!   `mvapich2_two_level` calls keep using; here a forced algorithm always
//!   runs as when forced first.

use super::select::Facts;
use super::smp;
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

/// The collectives this selector covers (`choice` refuses it for the others).
pub(crate) fn covers(coll: &str) -> bool {
    matches!(
        coll,
        "barrier"
            | "gather"
            | "scatter"
            | "allgather"
            | "allgatherv"
            | "alltoall"
            | "alltoallv"
            | "reduce_scatter"
    )
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
        _ => unreachable!("mvapich2 selector asked for {coll}"),
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
}
