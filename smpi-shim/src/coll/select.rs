//! Algorithm selection: `--cfg=smpi/<coll>:<algo>` and
//! `--cfg=smpi/coll-selector:default|ompi|mpich|mvapich2|impi|automatic` (a
//! selector name is also accepted as `smpi/<coll>`'s value; `automatic`, as
//! SMPI's, makes every collective without its own `smpi/<coll>` value run
//! `automatic.rs`).
//!
//! * `default` is SMPI 3.32's default selector (each collective module says
//!   what it does).
//! * `ompi`: thresholds from SMPI 3.32's `smpi_openmpi_selector.cpp`
//!   ("Updated 02/2022"), itself a transcription of Open MPI 4.1's
//!   `coll_tuned_decision_fixed.c`; the Open MPI algorithm numbers map to
//!   SMPI's functions the way SMPI maps them (e.g. Open MPI's linear bcast is
//!   SMPI's `NTSL`).
//! * `mpich`: thresholds from MPICH 3.3's defaults (`MPIR_CVAR_*`), as in
//!   SMPI's `smpi_mpich_selector.cpp` but without its SMP-aware branches
//!   (which need node-level sub-communicators) and without its two known
//!   slips (alltoall `pair` on odd sizes; allgatherv thresholds on element
//!   counts instead of bytes).
//! * `mvapich2`: SMPI 3.32's MVAPICH2 selector with its Stampede tables, for
//!   every collective (see `select_mvapich2.rs`).
//! * `impi`: SMPI 3.32's Intel MPI selector and tables (`select_impi.rs`).
//!
//! Each collective passes the facts of its call ([`Facts`]) to [`pick`], which
//! hands them to the selector in force.
//!
//! A decision depends only on values that are the same on every rank
//! (communicator size, message size, operation), so all ranks agree.

use super::CommView;
use crate::mpi::{self as rt, mpi_err, with_world, MpiResult};

/// Which selector applies to a collective, or a forced algorithm name.
pub(crate) enum Choice {
    Default,
    Ompi,
    Mpich,
    Mvapich2,
    Impi,
    Named(&'static str),
}

/// What a selector may look at in a call (the same on every rank of a
/// correct program, except where said).
pub(crate) struct Facts {
    pub c: CommView,
    /// The message size the MVAPICH2 selector tests: count × type size for
    /// bcast / reduce / allreduce; one block (send block for alltoall and
    /// scatter at the root, receive block for allgather and gather at the
    /// root, the rank's own block elsewhere); the total for allgatherv and
    /// reduce_scatter.
    pub bytes: usize,
    /// Total bytes gathered (allgather), else `bytes`.
    pub total: usize,
    /// Elements (reduce).
    pub count: usize,
    pub commutative: bool,
    /// All counts equal (v-collectives and reduce_scatter).
    pub regular: bool,
    /// The send buffer is `MPI_IN_PLACE`.
    pub in_place: bool,
}

impl Facts {
    /// Facts of a call of `bytes` bytes (commutative, regular, not in place).
    pub(crate) fn new(c: CommView, bytes: usize) -> Self {
        Facts {
            c,
            bytes,
            total: bytes,
            count: 0,
            commutative: true,
            regular: true,
            in_place: false,
        }
    }
}

/// The selectors `smpi/coll-selector` takes.
const SELECTORS: &str = "default, ompi, mpich, mvapich2, impi";

/// Reads `smpi/<coll>` (else `smpi/coll-selector`) and validates it against
/// `known` (the algorithm names this collective implements).
pub(crate) fn choice(coll: &str, known: &[&'static str]) -> MpiResult<Choice> {
    let (forced, selector) =
        with_world(|w| (w.cfg.coll_forced.get(coll).cloned(), w.cfg.coll_selector.clone()));
    let (value, from_selector) = match forced {
        Some(v) => (v, false),
        None => (selector, true),
    };
    parse_choice(coll, known, &value, from_selector)
}

/// The choice a value of `smpi/<coll>` (or, `from_selector`, of
/// `smpi/coll-selector`) names.
fn parse_choice(coll: &str, known: &[&'static str], value: &str, from_selector: bool) -> MpiResult<Choice> {
    match value {
        // `automatic` (of the collective or of the whole selector) is
        // dispatched before the collective's own selection (`coll.rs`); a
        // call that gets here with it is one the library makes itself outside
        // that dispatch (e.g. MPI_Comm_split's gather), which runs the
        // default as SMPI's do.
        "" | "default" | super::automatic::NAME => Ok(Choice::Default),
        "ompi" => Ok(Choice::Ompi),
        "mpich" => Ok(Choice::Mpich),
        "mvapich2" => Ok(Choice::Mvapich2),
        "impi" => Ok(Choice::Impi),
        v if from_selector => Err(mpi_err(
            rt::MPI_ERR_ARG,
            format!(
                "unknown collective selector '{v}' for smpi/coll-selector (known: {SELECTORS}, {})",
                super::automatic::NAME
            ),
        )),
        v => known
            .iter()
            .find(|k| **k == v)
            .map(|k| Choice::Named(k))
            .ok_or_else(|| {
                mpi_err(
                    rt::MPI_ERR_ARG,
                    format!(
                        "unknown algorithm '{v}' for smpi/{coll} (known: {SELECTORS}, {}, {})",
                        known.join(", "),
                        super::automatic::NAME
                    ),
                )
            }),
    }
}

/// Resolves a choice to an algorithm name with the selectors' rules
/// (`default`, `ompi`, `mpich` given by the caller; `mvapich2` from `facts`).
pub(crate) fn pick(
    coll: &str,
    known: &[&'static str],
    facts: Facts,
    default: impl FnOnce() -> &'static str,
    ompi: impl FnOnce() -> &'static str,
    mpich: impl FnOnce() -> &'static str,
) -> MpiResult<&'static str> {
    // A candidate `automatic` is timing comes first (a selector's name, or
    // any algorithm the collective runs, e.g. a tuned MVAPICH2 variant).
    let me = facts.c.me;
    let trial = super::automatic::take_trial(me, coll);
    let chosen = match trial {
        Some(t @ ("ompi" | "mpich" | "mvapich2" | "impi")) => parse_choice(coll, known, t, false)?,
        Some(t) => Choice::Named(t),
        None => choice(coll, known)?,
    };
    let algorithm = match chosen {
        Choice::Default => default(),
        Choice::Ompi => ompi(),
        Choice::Mpich => mpich(),
        Choice::Mvapich2 => super::select_mvapich2::choose(coll, &facts)?,
        Choice::Impi => super::select_impi::choose(coll, &facts)?,
        Choice::Named(n) => n,
    };
    if trial.is_some() {
        super::automatic::picked(me, coll, algorithm);
    }
    with_world(|w| {
        if let Some(t) = &mut w.trace {
            t.note_algorithm(rt::current_rank(), coll, algorithm);
        }
    });
    Ok(algorithm)
}

/// First algorithm whose (exclusive) upper bound exceeds `x`, from a
/// `[(bound, alg), ...]` table ending with `usize::MAX`.
pub(crate) fn by_size(x: usize, table: &[(usize, u8)]) -> u8 {
    table
        .iter()
        .find(|(b, _)| x < *b)
        .map_or(table[table.len() - 1].1, |t| t.1)
}

const MAX: usize = usize::MAX;

// ------------------------------------------------------------------- ompi

/// Open MPI 4.1 barrier decision (by communicator size only).
pub(crate) fn ompi_barrier(n: i32) -> &'static str {
    // 1 linear, 2 double_ring (SMPI: basic_linear), 3 recursive_doubling, 4 bruck,
    // 5 two_proc, 6 tree.
    let alg = match n {
        ..=3 => 3,
        4..=7 => 1,
        8..=63 => 3,
        64..=255 => 4,
        256..=511 => 6,
        512..=1023 => 4,
        1024..=4095 => 6,
        _ => 4,
    };
    match alg {
        3 => "ompi_recursivedoubling",
        4 => "ompi_bruck",
        6 => "ompi_tree",
        _ => "ompi_basic_linear",
    }
}

/// Open MPI 4.1 bcast decision (`bytes` = count × type size).
pub(crate) fn ompi_bcast(n: i32, bytes: usize) -> &'static str {
    // 1 basic_linear (SMPI: NTSL), 2 chain (SMPI: ompi_pipeline), 3 pipeline,
    // 4 split_binary_tree, 5 binary_tree (SMPI: NTSB), 6 binomial, 7 knomial
    // (SMPI: mvapich2_knomial_intra_node), 8 scatter_allgather (rdb),
    // 9 scatter_allgather_ring.
    let t: &[(usize, u8)] = match n {
        ..=3 => &[
            (32, 3),
            (256, 5),
            (512, 3),
            (1024, 7),
            (32768, 1),
            (131072, 5),
            (262144, 2),
            (524288, 1),
            (1048576, 6),
            (MAX, 5),
        ],
        4..=7 => &[(64, 5), (128, 6), (2048, 5), (8192, 6), (1048576, 1), (MAX, 2)],
        8..=15 => &[(8, 7), (64, 5), (4096, 7), (16384, 5), (32768, 6), (MAX, 1)],
        16..=31 => &[(4096, 7), (1048576, 6), (MAX, 8)],
        32..=63 => &[(2048, 6), (MAX, 7)],
        64..=127 => &[(MAX, 7)],
        128..=255 => &[(2, 6), (16384, 5), (32768, 1), (65536, 5), (MAX, 7)],
        256..=1023 => &[(16384, 7), (32768, 4), (MAX, 7)],
        1024..=2047 => &[(524288, 7), (MAX, 8)],
        2048..=4095 => &[(262144, 7), (MAX, 8)],
        _ => &[(8192, 7), (16384, 5), (262144, 7), (MAX, 8)],
    };
    match by_size(bytes, t) {
        1 => "NTSL",
        2 | 3 => "ompi_pipeline",
        4 => "ompi_split_bintree",
        5 => "NTSB",
        6 => "binomial_tree",
        7 => "mvapich2_knomial_intra_node",
        8 => "scatter_rdb_allgather",
        _ => "scatter_LR_allgather",
    }
}

/// Open MPI 4.1 reduce decision.
pub(crate) fn ompi_reduce(n: i32, bytes: usize, commutative: bool) -> &'static str {
    // 1 linear, 2 chain, 3 pipeline, 4 binary, 5 binomial, 6 in-order binary,
    // 7 rabenseifner (SMPI: basic_linear).
    let t: &[(usize, u8)] = if !commutative {
        match n {
            ..=3 => &[(8, 6), (MAX, 1)],
            4..=7 => &[(MAX, 1)],
            8..=15 => &[(1024, 6), (8192, 1), (16384, 6), (262144, 1), (MAX, 6)],
            16..=127 => &[(MAX, 6)],
            128..=255 => &[(512, 6), (1024, 1), (MAX, 6)],
            _ => &[(MAX, 6)],
        }
    } else {
        match n {
            ..=3 => &[
                (8, 7),
                (16, 4),
                (32, 3),
                (262144, 1),
                (524288, 3),
                (1048576, 2),
                (MAX, 3),
            ],
            4..=7 => &[
                (4096, 4),
                (65536, 2),
                (262144, 5),
                (524288, 1),
                (1048576, 5),
                (MAX, 1),
            ],
            8..=15 => &[(8192, 4), (MAX, 5)],
            16..=31 => &[(4096, 4), (MAX, 5)],
            32..=255 => &[(MAX, 5)],
            256..=511 => &[(8192, 5), (16384, 6), (MAX, 5)],
            512..=2047 => &[(MAX, 5)],
            2048..=4095 => &[(512, 5), (1024, 6), (8192, 5), (16384, 6), (MAX, 5)],
            _ => &[
                (16, 5),
                (32, 6),
                (1024, 5),
                (2048, 6),
                (8192, 5),
                (16384, 6),
                (MAX, 5),
            ],
        }
    };
    match by_size(bytes, t) {
        2 => "ompi_chain",
        3 => "ompi_pipeline",
        4 => "ompi_binary",
        5 => "ompi_binomial",
        6 => "ompi_in_order_binary",
        _ => "ompi_basic_linear",
    }
}

/// Open MPI 4.1 allreduce decision.
pub(crate) fn ompi_allreduce(n: i32, bytes: usize, commutative: bool) -> &'static str {
    // 1 basic_linear, 2 nonoverlapping (both SMPI: redbcast), 3 recursive_doubling,
    // 4 ring (SMPI: lr), 5 segmented_ring, 6 rabenseifner (SMPI: rab_rdb).
    let t: &[(usize, u8)] = if !commutative {
        match n {
            ..=3 => &[(131072, 3), (MAX, 1)],
            4..=7 => &[(MAX, 3)],
            8..=15 => &[(1048576, 3), (MAX, 2)],
            16..=127 => &[(MAX, 3)],
            128..=255 => &[(131072, 2), (524288, 3), (MAX, 2)],
            256..=511 => &[(4096, 2), (524288, 3), (MAX, 2)],
            _ => &[(2048, 2), (MAX, 3)],
        }
    } else {
        match n {
            ..=3 => &[
                (8, 4),
                (4096, 3),
                (8192, 4),
                (16384, 3),
                (65536, 4),
                (262144, 5),
                (MAX, 6),
            ],
            4..=7 => &[(16, 4), (8192, 3), (MAX, 6)],
            8..=15 => &[(8192, 3), (MAX, 6)],
            16..=31 => &[(64, 5), (4096, 3), (MAX, 6)],
            32..=63 => &[(128, 5), (MAX, 6)],
            64..=127 => &[(262144, 3), (MAX, 6)],
            128..=255 => &[(131072, 2), (262144, 3), (MAX, 6)],
            256..=511 => &[(4096, 2), (MAX, 6)],
            512..=2047 => &[(2048, 2), (16384, 3), (MAX, 6)],
            2048..=4095 => &[(2048, 2), (4096, 5), (16384, 3), (MAX, 6)],
            _ => &[(2048, 2), (16384, 5), (32768, 3), (MAX, 6)],
        }
    };
    match by_size(bytes, t) {
        3 => "rdb",
        4 => "lr",
        5 => "ompi_ring_segmented",
        6 => "rab_rdb",
        _ => "redbcast",
    }
}

/// Open MPI 4.1 alltoall decision (`block` = bytes of one block).
pub(crate) fn ompi_alltoall(n: i32, block: usize) -> &'static str {
    // 1 linear, 2 pairwise, 3 modified_bruck, 4 linear_sync, 5 two_proc
    // (SMPI runs basic_linear for 1, 4 and 5).
    let t: &[(usize, u8)] = match n {
        i32::MIN..=1 => &[(MAX, 1)],
        2 => &[
            (2, 2),
            (4, 5),
            (16, 2),
            (64, 5),
            (256, 2),
            (4096, 5),
            (32768, 2),
            (262144, 4),
            (1048576, 5),
            (MAX, 2),
        ],
        3..=7 => &[
            (8192, 4),
            (16384, 1),
            (65536, 4),
            (524288, 1),
            (1048576, 2),
            (MAX, 1),
        ],
        8..=15 => &[(262144, 4), (MAX, 1)],
        16..=31 => &[
            (4, 4),
            (512, 3),
            (8192, 4),
            (32768, 1),
            (262144, 4),
            (524288, 1),
            (MAX, 4),
        ],
        32..=63 => &[(512, 3), (524288, 1), (MAX, 4)],
        64..=127 => &[(1024, 3), (2048, 1), (4096, 4), (262144, 1), (MAX, 2)],
        128..=255 => &[(1024, 3), (2048, 4), (262144, 1), (MAX, 2)],
        256..=511 => &[(1024, 3), (8192, 4), (32768, 1), (MAX, 2)],
        512..=1023 => &[
            (512, 3),
            (8192, 4),
            (16384, 1),
            (131072, 4),
            (262144, 1),
            (MAX, 2),
        ],
        1024..=2047 => &[(512, 3), (1024, 4), (2048, 1), (16384, 4), (262144, 1), (MAX, 4)],
        2048..=4095 => &[(1024, 3), (4096, 4), (8192, 1), (131072, 4), (MAX, 1)],
        _ => &[(2048, 3), (8192, 4), (16384, 1), (32768, 4), (65536, 1), (MAX, 4)],
    };
    match by_size(block, t) {
        2 => "pair",
        3 => "bruck",
        _ => "basic_linear",
    }
}

/// Open MPI 4.1 alltoallv decision (by communicator size only).
pub(crate) fn ompi_alltoallv(n: i32) -> &'static str {
    match n {
        ..=3 => "pair",
        4..=63 => "ompi_basic_linear",
        64..=127 => "pair",
        128..=255 => "ompi_basic_linear",
        256..=1023 => "pair",
        _ => "ompi_basic_linear",
    }
}

/// Open MPI 4.1 allgather decision (`block` = bytes one rank contributes).
pub(crate) fn ompi_allgather(n: i32, block: usize) -> &'static str {
    // 1 linear (SMPI: NTSLR_NB), 2 bruck, 3 recursive_doubling, 4 ring,
    // 5 neighbor, 6 two_proc (SMPI: pair).
    let t: &[(usize, u8)] = match n {
        2 => &[(MAX, 6)],
        ..=31 => &[(MAX, 3)],
        32..=63 => &[(1024, 3), (65536, 5), (MAX, 4)],
        64..=127 => &[(512, 3), (65536, 5), (MAX, 4)],
        128..=255 => &[(512, 3), (131072, 5), (524288, 4), (1048576, 5), (MAX, 4)],
        256..=511 => &[
            (32, 3),
            (128, 2),
            (1024, 3),
            (131072, 5),
            (524288, 4),
            (1048576, 5),
            (MAX, 4),
        ],
        512..=1023 => &[(64, 3), (256, 2), (2048, 3), (MAX, 5)],
        1024..=2047 => &[
            (4, 3),
            (8, 2),
            (16, 3),
            (32, 2),
            (256, 3),
            (512, 2),
            (4096, 3),
            (MAX, 5),
        ],
        2048..=4095 => &[(32, 2), (128, 3), (512, 2), (4096, 3), (MAX, 5)],
        _ => &[(2, 3), (8, 2), (16, 3), (512, 2), (4096, 3), (MAX, 5)],
    };
    match by_size(block, t) {
        1 => "NTSLR_NB",
        2 => "bruck",
        3 => "rdb",
        4 => "ring",
        5 => "ompi_neighborexchange",
        _ => "pair",
    }
}

/// Open MPI 4.1 allgatherv decision (`per_rank` = total bytes / n).
pub(crate) fn ompi_allgatherv(n: i32, per_rank: usize) -> &'static str {
    // 1 default (SMPI: GB), 2 bruck, 3 ring (SMPI: mpich_ring), 4 neighbor, 5 two_proc (SMPI: pair).
    let t: &[(usize, u8)] = match n {
        2 => &[(2048, 3), (4096, 5), (8192, 3), (MAX, 5)],
        ..=7 => &[(256, 1), (4096, 4), (8192, 3), (16384, 4), (262144, 2), (MAX, 4)],
        8..=15 => &[(1024, 1), (MAX, 2)],
        16..=31 => &[(128, 1), (262144, 2), (MAX, 3)],
        32..=63 => &[(256, 1), (8192, 2), (MAX, 3)],
        64..=127 => &[(256, 1), (4096, 2), (MAX, 3)],
        128..=255 => &[(1024, 2), (65536, 4), (MAX, 3)],
        256..=511 => &[(1024, 2), (MAX, 3)],
        512..=1023 => &[(512, 2), (1024, 1), (4096, 2), (1048576, 4), (MAX, 3)],
        _ => &[(4096, 2), (MAX, 4)],
    };
    match by_size(per_rank, t) {
        1 => "GB",
        2 => "ompi_bruck",
        3 => "mpich_ring",
        4 => "ompi_neighborexchange",
        _ => "pair",
    }
}

/// Open MPI 4.1 gather decision (`block` = bytes of one rank's block).
pub(crate) fn ompi_gather(n: i32, block: usize) -> &'static str {
    // 1 basic_linear, 2 binomial, 3 linear_sync.
    let t: &[(usize, u8)] = match n {
        ..=3 => &[(2, 3), (4, 1), (32768, 2), (65536, 1), (131072, 2), (MAX, 3)],
        4..=7 => &[(1024, 2), (8192, 1), (32768, 2), (262144, 1), (MAX, 3)],
        8..=255 => &[(MAX, 2)],
        256..=511 => &[(2048, 2), (8192, 1), (MAX, 2)],
        _ => &[(MAX, 2)],
    };
    match by_size(block, t) {
        1 => "ompi_basic_linear",
        2 => "ompi_binomial",
        _ => "ompi_linear_sync",
    }
}

/// Open MPI 4.1 scatter decision (`block` = bytes of one rank's block).
pub(crate) fn ompi_scatter(n: i32, block: usize) -> &'static str {
    // 1 basic_linear, 2 binomial, 3 linear_nb.
    let t: &[(usize, u8)] = match n {
        ..=3 => &[(2, 3), (131072, 1), (262144, 3), (MAX, 1)],
        4..=7 => &[
            (2048, 2),
            (4096, 1),
            (8192, 2),
            (32768, 1),
            (1048576, 3),
            (MAX, 1),
        ],
        8..=15 => &[(16384, 2), (1048576, 3), (MAX, 1)],
        16..=31 => &[(16384, 2), (32768, 1), (MAX, 3)],
        32..=63 => &[(512, 2), (8192, 3), (16384, 2), (MAX, 3)],
        _ => &[(512, 2), (MAX, 3)],
    };
    match by_size(block, t) {
        2 => "ompi_binomial",
        3 => "ompi_linear_nb",
        _ => "ompi_basic_linear",
    }
}

/// Open MPI 4.1 reduce_scatter decision (`bytes` = total count × type size).
pub(crate) fn ompi_reduce_scatter(n: i32, bytes: usize, commutative: bool) -> &'static str {
    // 1 non-overlapping (SMPI: reduce_scatter default), 2 recursive_halving,
    // 3 ring, 4 butterfly (SMPI: ring).
    if !commutative {
        return "default";
    }
    let t: &[(usize, u8)] = match n {
        ..=3 => &[(65536, 3), (131072, 4), (MAX, 3)],
        4..=7 => &[(8, 1), (262144, 2), (MAX, 3)],
        8..=31 => &[(262144, 2), (MAX, 3)],
        32..=63 => &[(64, 1), (2048, 2), (524288, 4), (MAX, 3)],
        64..=127 => &[(256, 1), (512, 2), (2048, 4), (4096, 2), (MAX, 4)],
        128..=255 => &[(256, 1), (512, 2), (MAX, 4)],
        256..=511 => &[(256, 1), (1024, 2), (MAX, 4)],
        512..=1023 => &[(512, 1), (2048, 2), (8192, 4), (16384, 2), (MAX, 4)],
        1024..=2047 => &[(512, 1), (4096, 2), (16384, 4), (32768, 2), (MAX, 4)],
        2048..=4095 => &[(512, 1), (4096, 2), (MAX, 4)],
        _ => &[(1024, 1), (8192, 2), (MAX, 4)],
    };
    match by_size(bytes, t) {
        1 => "default",
        2 => "ompi_basic_recursivehalving",
        _ => "ompi_ring",
    }
}

// ------------------------------------------------------------------- mpich

/// MPICH 3.3 bcast: binomial below 12288 B or up to 8 ranks
/// (`MPIR_CVAR_BCAST_SHORT_MSG_SIZE`, `..._MIN_PROCS`), scatter + recursive-
/// doubling allgather below 524288 B (`..._LONG_MSG_SIZE`) on a power-of-two
/// size, else scatter + ring allgather.
pub(crate) fn mpich_bcast(n: i32, bytes: usize) -> &'static str {
    if bytes < 12288 || n <= 8 {
        "binomial_tree"
    } else if bytes < 524288 && super::is_pof2(n) {
        "scatter_rdb_allgather"
    } else {
        "scatter_LR_allgather"
    }
}

/// MPICH 3.3 reduce: binomial for short messages (< 2048 B), counts below the
/// largest power of two <= n, or non-commutative ops; else Rabenseifner's
/// reduce-scatter + gather.
pub(crate) fn mpich_reduce(n: i32, count: usize, bytes: usize, commutative: bool) -> &'static str {
    if (count as i64) < super::pof2_floor(n) as i64 || bytes < 2048 || !commutative {
        "binomial"
    } else {
        "scatter_gather"
    }
}

/// MPICH 3.3 allreduce: Rabenseifner above 2048 B (`MPIR_CVAR_ALLREDUCE_SHORT_MSG_SIZE`)
/// when count >= pof2 and the op is commutative; else recursive doubling.
pub(crate) fn mpich_allreduce(n: i32, count: usize, bytes: usize, commutative: bool) -> &'static str {
    if bytes > 2048 && count as i64 >= super::pof2_floor(n) as i64 && commutative {
        "rab_rdb"
    } else {
        "rdb"
    }
}

/// MPICH 3.3 alltoall: Bruck below 256 B per block on >= 8 ranks, the
/// scattered isend/irecv exchange below 32768 B, then pairwise exchange
/// (XOR on power-of-two sizes, shifted ring otherwise).
pub(crate) fn mpich_alltoall(n: i32, block: usize) -> &'static str {
    if block < 256 && n >= 8 {
        "bruck"
    } else if block < 32768 {
        "mvapich2_scatter_dest"
    } else if super::is_pof2(n) {
        "pair"
    } else {
        "ring"
    }
}

/// MPICH 3.3 allgather(v): recursive doubling on power-of-two sizes below
/// 524288 B in total, Bruck up to 81920 B, else ring.
pub(crate) fn mpich_allgather(n: i32, total: usize, v: bool) -> &'static str {
    match (super::is_pof2(n) && total < 524288, total <= 81920, v) {
        (true, _, false) => "rdb",
        (true, _, true) => "mpich_rdb",
        (false, true, false) => "bruck",
        (false, true, true) => "ompi_bruck",
        (false, false, false) => "ring",
        (false, false, true) => "mpich_ring",
    }
}

/// MPICH 3.3 reduce_scatter: commutative ops use recursive halving below
/// 524288 B (`MPIR_CVAR_REDSCAT_COMMUTATIVE_LONG_MSG_SIZE`) and the pairwise
/// exchange above; non-commutative ops use the non-commutative recursive
/// halving on power-of-two sizes with equal blocks, else (MPICH's recursive
/// doubling, not implemented) reduce + scatterv.
/// SMPI 3.32's `reduce_scatter__mpich`: on the total count of elements (not
/// bytes), pair above 524288 for a commutative op, else recursive doubling,
/// except the non-commutative pof2 equal-count case (`mpich_noncomm`).
pub(crate) fn mpich_reduce_scatter(
    n: i32,
    total_count: usize,
    commutative: bool,
    regular: bool,
) -> &'static str {
    if commutative && total_count > 524288 {
        "mpich_pair"
    } else if !commutative && super::is_pof2(n) && regular {
        "mpich_noncomm"
    } else {
        "mpich_rdb"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_match_the_notes() {
        // smpi-3.32-collectives.md: 64 ranks × 65536 B → basic_linear; large → pair; small → bruck.
        assert_eq!(ompi_alltoall(64, 65536), "basic_linear");
        assert_eq!(ompi_alltoall(64, 262144), "pair");
        assert_eq!(ompi_alltoall(64, 100), "bruck");
        assert_eq!(ompi_alltoall(1, 100), "basic_linear");
        // 64 ranks, commutative: < 262144 → rdb, else rab_rdb.
        assert_eq!(ompi_allreduce(64, 1 << 20, true), "rab_rdb");
        assert_eq!(ompi_allreduce(64, 1024, true), "rdb");
        assert_eq!(ompi_allreduce(64, 1 << 20, false), "rdb");
        // examples given for n = 64
        assert_eq!(ompi_barrier(64), "ompi_bruck");
        assert_eq!(ompi_bcast(64, 1000), "mvapich2_knomial_intra_node");
        assert_eq!(ompi_reduce(64, 1000, true), "ompi_binomial");
        assert_eq!(by_size(5, &[(4, 1), (MAX, 2)]), 2);
    }

    #[test]
    fn mpich_rules() {
        assert_eq!(mpich_bcast(16, 100_000), "scatter_rdb_allgather");
        assert_eq!(mpich_bcast(12, 100_000), "scatter_LR_allgather");
        assert_eq!(mpich_bcast(8, 1 << 20), "binomial_tree");
        assert_eq!(mpich_alltoall(6, 1 << 20), "ring");
        assert_eq!(mpich_alltoall(8, 1 << 20), "pair");
        assert_eq!(mpich_reduce(4, 3, 1 << 20, true), "binomial");
        assert_eq!(mpich_reduce(4, 1 << 20, 1 << 22, true), "scatter_gather");
    }
}
