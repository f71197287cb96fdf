//! SMPI 3.32's `automatic` algorithm (`--cfg=smpi/<coll>:automatic`, for
//! each of the eleven selectable collectives, or `--cfg=smpi/coll-selector:
//! automatic` for all of those without their own `smpi/<coll>` value, as
//! SMPI's `set_collectives`; the collectives without a selection, e.g.
//! scan, are unchanged): every call runs each algorithm of the collective
//! in turn, times it, and says which was quickest.
//!
//! What SMPI's `smpi_automatic_selector.cpp` does, and so what this module
//! does:
//! 1. The candidates are SMPI's table of the collective (`smpi_coll.cpp`), in
//!    its order, without `default` and `automatic`; the selectors (`ompi`,
//!    `mpich`, `mvapich2`, `impi`) are candidates too (they run their choice,
//!    SMPI's: where our `mpich` selector leaves SMPI's choice, [`smpi_mpich`]
//!    restores it). Every algorithm of SMPI's tables is one of ours.
//! 2. For each candidate: the default barrier (`ompi_basic_linear`), the
//!    clock, the candidate with the caller's arguments, the clock again; the
//!    duration goes through the default reduce (`MPI_DOUBLE`, `MPI_MAX`, to
//!    rank 0), so rank 0 knows the largest one.
//! 3. A candidate that SMPI's code throws on is skipped after the barrier and
//!    the clock (no reduce): `pair` and its variants, `rhv`, `rab1` on a
//!    non-power-of-two size, the allgather meshes on sizes without a mesh,
//!    the SMP allgathers when the cores do not divide the size (after SMPI's
//!    SMP set-up), ... ([`smpi_outcome`]). A candidate that returns an error
//!    code at once (`2dmesh`/`3dmesh` alltoall without a mesh) counts as run
//!    in no time. Forced, our versions of these fall back to a valid
//!    algorithm; here they are not run.
//! 4. SMPI's MVAPICH2 two-level reduce and allreduce read process-wide
//!    function pointers that its `mvapich2` selector sets ([`Mv2Pointers`]):
//!    the `mvapich2_two_level` candidate (and, from the second call on,
//!    `mpich`'s two-level branch) runs what the `mvapich2` candidate left.
//! 5. A candidate calling its own collective (e.g. `lr`'s remainder) runs
//!    `automatic` inside, as SMPI's `colls::` calls do.
//! 6. Every rank prints, in category `smpi_colls` at warning level (shown by
//!    `--log=smpi_colls.thres:...` as SimGrid's; the source location is
//!    SMPI's file and line), on rank 0 `For rank 0, the quickest was <a> :
//!    <t> , but global was <b> : <T> at max` (its own quickest, and the
//!    candidate with the smallest largest time), elsewhere `The quickest
//!    <coll> was <a> on rank <r> and took <t>`; `%f` times, the first minimum
//!    wins ties.
//!
//! The data in the caller's buffers is the last candidate's. Where running
//! the candidates one after the other would feed one's output to the next
//! (`MPI_IN_PLACE` for reduce at the root, allreduce, reduce_scatter,
//! alltoall(v)), every candidate reads a copy of the original contribution
//! (SMPI's bindings make that copy for all but reduce), so the result is the
//! collective's.
//!
//! Refused ("not supported"), because SMPI 3.32 itself does not get through:
//! * bcast on more than one rank (a candidate receives another's message and
//!   aborts with `MPI_ERR_TRUNCATE`; on one rank SMPI's MPI_Bcast runs no
//!   algorithm, nor does this one);
//! * barrier, reduce and allreduce on one rank (SMPI crashes or deadlocks);
//! * reduce with fewer elements than ranks on a non-power-of-two size (the
//!   candidate `scatter_gather` fails with `MPI_ERR_TRUNCATE`);
//! * barrier on more than two ranks (`ompi_two_procs` pairs every rank with
//!   rank 0 or 1: deadlock);
//! * alltoall on a non-power-of-two size (SMPI crashes);
//! * reduce_scatter on a non-power-of-two size or with unequal counts
//!   (`mpich_noncomm` fails an assertion);
//! * a `mvapich2_two_level` reduce or allreduce after a `mvapich2` choice
//!   whose functions this library cannot name ([`pointers_left`]);
//! * a collective whose SMPI candidates call another collective that is
//!   automatic too ([`nested`]): allreduce with bcast, reduce, allgather or
//!   alltoall; allgather with bcast or gather; allgatherv with bcast;
//!   alltoall(v) with barrier (and alltoall with allgather). SMPI then runs
//!   that automatic inside its candidates (and aborts or deadlocks on most
//!   of them); our candidates call the other collective's default. So
//!   `smpi/coll-selector:automatic` gets through reduce, gather, scatter,
//!   reduce_scatter (power-of-two sizes) and barrier (2 ranks), as SMPI's
//!   does, and refuses allreduce, allgather(v) and alltoall(v), where SMPI
//!   fails (but on alltoallv with 2 ranks).
//!
//! Known gaps (a warning says so once per run, [`known_gap`]): allreduce's
//! `smp_rsag` and `smp_rsag_rab` where SMPI's own messages are too short for
//! a right result (a count that the number of hosts does not divide; for
//! `smp_rsag_rab` also an odd count per host): their times differ from
//! SMPI's (`smp_allreduce.rs` says why); and, on a non-commutative
//! operation, the reduce, allreduce and reduce_scatter candidates that keep
//! rank order where SMPI's do not (other messages, so other times). Every
//! other candidate's every rank's time is SMPI's (`coll_smpi_parity`, with
//! `MPI_SUM`). With `-trace`, SMPI adds an event per candidate (an event type
//! named after the collective) that our traces do not have (a warning
//! says so). SMPI's own messages from inside the candidates (its
//! `XBT_INFO`s) are not printed, as elsewhere in smpirun. MPI_Allgatherv with the regular
//! counts and displacements of an allgather goes by `smpi/allgather`, as
//! everywhere in smpirun (SMPI: `smpi/allgatherv`). A call the library makes itself
//! outside the collectives' dispatch (e.g. MPI_Comm_split's gather) runs the
//! default, as SMPI's; but a candidate that calls another collective's
//! algorithm module directly (e.g. `ring_mpi_barrier`'s barriers) runs that
//! one's default where SMPI would run its configured `automatic`, when both
//! are set.

use std::cell::RefCell;

use super::{is_pof2, CommView, TempBuf, IN_PLACE};
use super::{select_mvapich2, smp};
use crate::host::xbt_log::{self, Origin, Priority};
use crate::mpi::{self as rt, mpi_err, with_world, MpiResult};

/// `MPI_DOUBLE` and `MPI_MAX`: the reduce of the measured times.
const MPI_DOUBLE: i32 = 14;
const MPI_MAX: i32 = 1;

/// Where SMPI's warning comes from (its layout shows it at warning level):
/// the file and the line of each collective's instantiation.
const SOURCE: &str = "./src/smpi/colls/smpi_automatic_selector.cpp";

/// SMPI 3.32's candidates of each collective, in its table's order
/// (`default` and `automatic` left out), and the line of its instantiation.
fn candidates(coll: &str) -> (&'static [&'static str], i32) {
    match coll {
        "allgatherv" => (
            &[
                "GB",
                "pair",
                "ring",
                "ompi",
                "ompi_neighborexchange",
                "ompi_bruck",
                "mpich",
                "mpich_rdb",
                "mpich_ring",
                "mvapich2",
                "impi",
            ],
            68,
        ),
        "allreduce" => (
            &[
                "lr",
                "rab1",
                "rab2",
                "rab_rdb",
                "rdb",
                "smp_binomial",
                "smp_binomial_pipeline",
                "smp_rdb",
                "smp_rsag",
                "smp_rsag_lr",
                "smp_rsag_rab",
                "redbcast",
                "ompi",
                "ompi_ring_segmented",
                "mpich",
                "mvapich2",
                "mvapich2_rs",
                "mvapich2_two_level",
                "impi",
                "rab",
            ],
            69,
        ),
        "gather" => (
            &[
                "ompi",
                "ompi_basic_linear",
                "ompi_binomial",
                "ompi_linear_sync",
                "mpich",
                "mvapich2",
                "mvapich2_two_level",
                "impi",
            ],
            70,
        ),
        "allgather" => (
            &[
                "2dmesh",
                "3dmesh",
                "bruck",
                "GB",
                "loosely_lr",
                "NTSLR",
                "NTSLR_NB",
                "pair",
                "rdb",
                "rhv",
                "ring",
                "SMP_NTS",
                "smp_simple",
                "spreading_simple",
                "ompi",
                "ompi_neighborexchange",
                "mvapich2",
                "mvapich2_smp",
                "mpich",
                "impi",
            ],
            71,
        ),
        "alltoall" => (
            &[
                "2dmesh",
                "3dmesh",
                "basic_linear",
                "bruck",
                "pair",
                "pair_rma",
                "pair_light_barrier",
                "pair_mpi_barrier",
                "pair_one_barrier",
                "rdb",
                "ring",
                "ring_light_barrier",
                "ring_mpi_barrier",
                "ring_one_barrier",
                "mvapich2",
                "mvapich2_scatter_dest",
                "ompi",
                "mpich",
                "impi",
            ],
            72,
        ),
        "alltoallv" => (
            &[
                "bruck",
                "pair",
                "pair_light_barrier",
                "pair_mpi_barrier",
                "pair_one_barrier",
                "ring",
                "ring_light_barrier",
                "ring_mpi_barrier",
                "ring_one_barrier",
                "ompi",
                "mpich",
                "ompi_basic_linear",
                "mvapich2",
                "impi",
            ],
            73,
        ),
        "bcast" => (
            &[
                "arrival_pattern_aware",
                "arrival_pattern_aware_wait",
                "arrival_scatter",
                "binomial_tree",
                "flattree",
                "flattree_pipeline",
                "NTSB",
                "NTSL",
                "NTSL_Isend",
                "scatter_LR_allgather",
                "scatter_rdb_allgather",
                "SMP_binary",
                "SMP_binomial",
                "SMP_linear",
                "ompi",
                "ompi_split_bintree",
                "ompi_pipeline",
                "mpich",
                "mvapich2",
                "mvapich2_inter_node",
                "mvapich2_intra_node",
                "mvapich2_knomial_intra_node",
                "impi",
            ],
            74,
        ),
        "reduce" => (
            &[
                "arrival_pattern_aware",
                "binomial",
                "flat_tree",
                "NTSL",
                "scatter_gather",
                "ompi",
                "ompi_chain",
                "ompi_pipeline",
                "ompi_basic_linear",
                "ompi_in_order_binary",
                "ompi_binary",
                "ompi_binomial",
                "mpich",
                "mvapich2",
                "mvapich2_knomial",
                "mvapich2_two_level",
                "impi",
                "rab",
            ],
            75,
        ),
        "reduce_scatter" => (
            &[
                "ompi",
                "ompi_basic_recursivehalving",
                "ompi_ring",
                "ompi_butterfly",
                "mpich",
                "mpich_pair",
                "mpich_rdb",
                "mpich_noncomm",
                "mvapich2",
                "impi",
            ],
            76,
        ),
        "scatter" => (
            &[
                "ompi",
                "ompi_basic_linear",
                "ompi_linear_nb",
                "ompi_binomial",
                "mpich",
                "mvapich2",
                "mvapich2_two_level_binomial",
                "mvapich2_two_level_direct",
                "impi",
            ],
            77,
        ),
        _ => (
            &[
                "ompi",
                "ompi_basic_linear",
                "ompi_two_procs",
                "ompi_tree",
                "ompi_bruck",
                "ompi_recursivedoubling",
                "ompi_doublering",
                "mpich_smp",
                "mpich",
                "mvapich2_pair",
                "mvapich2",
                "impi",
            ],
            78,
        ),
    }
}

/// The value of `--cfg=smpi/<coll>:` that asks for this selector.
pub(crate) const NAME: &str = "automatic";

// ------------------------------------------------------------------ state

/// SMPI's MVAPICH2 two-level reduce and allreduce run the inter-leader and
/// intra-node functions of process-wide pointers, which the `mvapich2`
/// selector sets on each call (with a count) from its tables; unset, they
/// are MPICH's. `automatic` runs that selector, then `mvapich2_two_level`
/// (and, on a later call, `mpich`'s two-level branch): these use what it set.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Mv2Pointers {
    /// Set along with a two-level choice: the tuned variant of that name
    /// (`mv2_tl_*`), which runs the same functions.
    Tuned(&'static str),
    /// Set along with a one-level choice: functions this library has no
    /// two-level variant for.
    Untracked,
}

/// The run's `automatic` state (see [`take_trial`] and [`Mv2Pointers`]).
#[derive(Default)]
struct State {
    /// `(rank, collective, algorithm)`: the algorithm a rank's next selection
    /// of a collective must return.
    trials: Vec<(u32, &'static str, &'static str)>,
    /// `(rank, collective, algorithm)`: what a trial's selection returned.
    picked: Vec<(u32, String, &'static str)>,
    /// The MVAPICH2 pointers of `reduce` and `allreduce`, once set.
    mv2: Vec<(&'static str, Mv2Pointers)>,
    /// The warnings given (once per run).
    warned: Vec<String>,
}

thread_local! {
    /// Per rank, because ranks interleave (trials, picks); for the run, as
    /// SMPI's pointers are (MVAPICH2). A thread-local because the ranks'
    /// coroutines share the simulation thread and this state belongs to no
    /// MPI object.
    static STATE: RefCell<State> = RefCell::new(State::default());
}

/// The algorithm `automatic` is running on rank `me` for `coll`, if any
/// (taken: asked once; nested calls of the same collective then see the
/// configuration again, as SMPI's do).
pub(crate) fn take_trial(me: u32, coll: &str) -> Option<&'static str> {
    STATE.with(|s| {
        let t = &mut s.borrow_mut().trials;
        // The innermost: a candidate may call its own collective again
        // (e.g. `lr`'s remainder), which then runs `automatic` inside it.
        let i = t.iter().rposition(|(r, c, _)| *r == me && *c == coll)?;
        Some(t.remove(i).2)
    })
}

/// Notes what the selection of a trial on rank `me` returned.
pub(crate) fn picked(me: u32, coll: &str, algo: &'static str) {
    STATE.with(|s| s.borrow_mut().picked.push((me, coll.to_string(), algo)));
}

/// What the trial of `coll` on rank `me` selected, if it selected.
fn take_picked(me: u32, coll: &str) -> Option<&'static str> {
    STATE.with(|s| {
        let p = &mut s.borrow_mut().picked;
        let i = p.iter().rposition(|(r, c, _)| *r == me && c == coll)?;
        Some(p.remove(i).2)
    })
}

fn mv2_pointers(coll: &str) -> Option<Mv2Pointers> {
    STATE.with(|s| s.borrow().mv2.iter().find(|(c, _)| *c == coll).map(|(_, p)| *p))
}

fn set_mv2_pointers(coll: &'static str, p: Mv2Pointers) {
    STATE.with(|s| {
        let mv2 = &mut s.borrow_mut().mv2;
        mv2.retain(|(c, _)| *c != coll);
        mv2.push((coll, p));
    })
}

/// Runs `f` with `algo` as rank `me`'s next choice for `coll`; returns
/// `f`'s result and what the selection returned.
fn with_trial<T>(
    me: u32,
    coll: &'static str,
    algo: &'static str,
    f: impl FnOnce() -> T,
) -> (T, Option<&'static str>) {
    STATE.with(|s| s.borrow_mut().trials.push((me, coll, algo)));
    let out = f();
    // A candidate that returned before selecting leaves its trial behind.
    let _ = take_trial(me, coll);
    (out, take_picked(me, coll))
}

/// Whether `coll` runs `automatic`: `smpi/<coll>:automatic`, or
/// `smpi/coll-selector:automatic` without a value of `smpi/<coll>` (as SMPI's
/// `set_collectives`).
pub(crate) fn configured(coll: &str) -> bool {
    with_world(|w| match w.cfg.coll_forced.get(coll) {
        Some(v) => v == NAME,
        None => w.cfg.coll_selector == NAME,
    })
}

/// The setting that makes `coll` automatic, for messages.
fn key(coll: &str) -> String {
    if with_world(|w| w.cfg.coll_forced.contains_key(coll)) {
        format!("smpi/{coll}:automatic")
    } else {
        format!("smpi/coll-selector:automatic (for {coll})")
    }
}

/// The other collectives SMPI 3.32's candidates of `coll` call through its
/// configured functions (so `automatic` runs inside them when those are
/// automatic too), and what SMPI then does: found by running SMPI with both
/// automatic, 4 ranks.
fn nested(coll: &str) -> &'static [(&'static str, &'static str)] {
    const ABORTS: &str = ", which aborts there";
    const DEADLOCKS: &str = ", and deadlocks";
    const NESTS: &str = "";
    match coll {
        "allreduce" => &[
            ("bcast", ABORTS),
            ("reduce", DEADLOCKS),
            ("allgather", NESTS),
            ("alltoall", NESTS),
        ],
        "allgather" => &[("bcast", ABORTS), ("gather", NESTS)],
        "allgatherv" => &[("bcast", ABORTS)],
        "alltoall" => &[("barrier", DEADLOCKS), ("allgather", NESTS)],
        "alltoallv" => &[("barrier", DEADLOCKS)],
        _ => &[],
    }
}

// ------------------------------------------------------------------ SMPI's outcomes

/// What SMPI's candidate does with a call of this shape.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Outcome {
    /// Runs (as our algorithm of that name, or this selector's choice).
    Runs(&'static str),
    /// Throws before moving any data: skipped (no reduce of its time).
    Throws,
    /// Throws after making the communicator's SMP layout (SMPI's
    /// `init_smp`, paid here too).
    ThrowsAfterLayout,
    /// Returns an error code at once: a run of no time.
    Fails,
    /// Runs MVAPICH2 functions this library does not track (see [`Mv2Pointers`]).
    Untracked,
}

/// The facts of a call that decide SMPI's outcome of a candidate.
#[derive(Clone, Copy)]
pub(crate) struct Shape {
    pub c: CommView,
    /// The reduction is commutative (true for non-reductions).
    pub commutative: bool,
    /// The datatype handle (reduce's `rab` knows only some).
    pub dtype: i32,
    /// All counts equal (reduce_scatter).
    pub regular: bool,
    /// Elements (reduce, allreduce).
    pub count: usize,
    /// Bytes of one block (alltoall; gather: the root's receive block).
    pub block: usize,
    /// Elements received in all (allgatherv).
    pub total: usize,
}

/// SMPI 3.32's 2-D mesh shape exists for `n` ranks (a divisor from ⌊√n⌋ to n/2).
fn mesh2(n: i32) -> bool {
    let mut x = f64::from(n).sqrt() as i32;
    while x <= n / 2 {
        if x > 0 && n % x == 0 {
            return true;
        }
        x += 1;
    }
    false
}

/// SMPI 3.32's 3-D mesh shape exists for `n` ranks (x from ⌊∛n⌋ to n/3 with x² | n).
fn mesh3(n: i32) -> bool {
    let mut x = f64::from(n).cbrt() as i32;
    while x <= n / 3 {
        if x > 0 && n % (x * x) == 0 {
            return true;
        }
        x += 1;
    }
    false
}

/// Datatypes SMPI's `reduce__rab` handles (others make it throw): `MPI_CHAR`,
/// `MPI_SHORT`, `MPI_INT`, `MPI_LONG`, the unsigned ones, `MPI_FLOAT`,
/// `MPI_DOUBLE`, `MPI_BYTE`.
fn rab_knows(dtype: i32) -> bool {
    let name = with_world(|w| w.dtype(dtype).map(|d| d.name.to_string())).unwrap_or_default();
    matches!(
        name.as_str(),
        "MPI_CHAR"
            | "MPI_SHORT"
            | "MPI_INT"
            | "MPI_LONG"
            | "MPI_UNSIGNED_SHORT"
            | "MPI_UNSIGNED"
            | "MPI_UNSIGNED_LONG"
            | "MPI_UNSIGNED_LONG_LONG"
            | "MPI_FLOAT"
            | "MPI_DOUBLE"
            | "MPI_BYTE"
    )
}

/// The algorithm SMPI 3.32's `mpich` selector runs where ours differs from
/// it (ours leaves out its SMP-aware branches and its slips; see
/// `select.rs`); `None`: ours is SMPI's. `Some(None)`: it returns at once.
fn smpi_mpich(coll: &str, s: &Shape) -> Option<Option<&'static str>> {
    let n = s.c.size;
    match coll {
        // A communicator that is not itself a host's or the leaders' one
        // (the library's SMP sub-communicators never run `automatic`).
        "reduce" | "allreduce" if s.commutative => Some(Some("mvapich2_two_level")),
        "alltoallv" => Some(Some("bruck")),
        "alltoall" => Some(Some(if s.block < 256 && n >= 8 {
            "bruck"
        } else if s.block < 32768 {
            "mvapich2_scatter_dest"
        } else if n % 2 == 1 {
            "pair"
        } else {
            "ring"
        })),
        // Thresholds on the total count of elements, not bytes.
        "allgatherv" if s.total == 0 => Some(None),
        "allgatherv" => Some(Some(if is_pof2(n) && s.total < 524288 {
            "mpich_rdb"
        } else if s.total <= 81920 {
            "ompi_bruck"
        } else {
            "mpich_ring"
        })),
        _ => None,
    }
}

/// What SMPI 3.32 does with candidate `algo` of `coll` on a call of shape `s`.
fn smpi_outcome(coll: &str, algo: &'static str, s: &Shape) -> Outcome {
    let n = s.c.size;
    let pof2 = is_pof2(n);
    let algo = match (algo, smpi_mpich(coll, s)) {
        ("mpich", Some(None)) => return Outcome::Fails,
        ("mpich", Some(Some(name))) => name,
        _ => algo,
    };
    let algo = match (coll, algo) {
        ("reduce" | "allreduce", "mvapich2_two_level") => match mv2_pointers(coll) {
            None => algo,
            Some(Mv2Pointers::Tuned(name)) => name,
            Some(Mv2Pointers::Untracked) => return Outcome::Untracked,
        },
        _ => algo,
    };
    let pair_family = matches!(
        algo,
        "pair" | "pair_light_barrier" | "pair_mpi_barrier" | "pair_one_barrier"
    );
    match (coll, algo) {
        ("allgather" | "allgatherv" | "alltoall" | "alltoallv", _) if pair_family && !pof2 => Outcome::Throws,
        ("allgather", "rhv") if !pof2 => Outcome::Throws,
        ("allgather", "2dmesh") if !mesh2(n) => Outcome::Throws,
        ("allgather", "3dmesh") if !mesh3(n) => Outcome::Throws,
        ("alltoall", "2dmesh") if !mesh2(n) => Outcome::Fails,
        ("alltoall", "3dmesh") if !mesh3(n) => Outcome::Fails,
        ("allgather", "loosely_lr" | "SMP_NTS" | "smp_simple" | "mvapich2_smp") => Outcome::ThrowsAfterLayout,
        ("allreduce", "rab1") if !pof2 => Outcome::Throws,
        ("allreduce", "smp_rsag_rab") if !pof2 => Outcome::ThrowsAfterLayout,
        ("reduce", "rab") if !rab_knows(s.dtype) => Outcome::Throws,
        ("reduce_scatter", "ompi_basic_recursivehalving") if !s.commutative => Outcome::Throws,
        _ => Outcome::Runs(algo),
    }
}

/// The MVAPICH2 pointers SMPI's `mvapich2` selector leaves set after a
/// call on which ours selected `picked` (see [`Mv2Pointers`]).
///
/// Reduce: SMPI sets both functions from its table on every call with
/// elements, whatever it runs ([`select_mvapich2::reduce_pointers`]);
/// untracked only when the inter-leader one is the reduce-scatter + gather
/// (no two-level reduce of ours has it). Allreduce: a two-level choice names
/// both functions; a one-level choice names the inter-leader one (recursive
/// doubling or reduce-scatter + allgather; its intra-node function is always
/// a reduce on the host, which our tuned variants run). Ambiguous cases (a
/// non-commutative operation, whose choice hides the table's, or a function
/// without a tuned variant here) are `Untracked`.
fn pointers_left(c: CommView, coll: &str, picked: Option<&'static str>, s: &Shape) -> MpiResult<Mv2Pointers> {
    if coll == "reduce" {
        let size = with_world(|w| w.dtype(s.dtype).map(|d| d.size))?;
        let tuned = select_mvapich2::reduce_pointers(c.size, s.count * size);
        return Ok(tuned.map_or(Mv2Pointers::Untracked, Mv2Pointers::Tuned));
    }
    let Some(p) = picked else {
        return Ok(Mv2Pointers::Untracked);
    };
    if p.starts_with("mv2_tl_") {
        return Ok(Mv2Pointers::Tuned(p));
    }
    if !s.commutative {
        return Ok(Mv2Pointers::Untracked);
    }
    // (1025 to 2048 ranks: a reduce_p2p inter-leader function hides behind "rdb")
    Ok(match p {
        "rdb" if !(1025..=2048).contains(&c.size) => Mv2Pointers::Tuned("mv2_tl_rd"),
        "mvapich2_rs" => Mv2Pointers::Tuned("mv2_tl_rs"),
        _ => Mv2Pointers::Untracked,
    })
}

/// Whether SMPI's SMP allgather `algo` throws once the layout is known
/// (`num_core` does not divide the size; `mvapich2_smp`: a placement that is
/// not uniform and blocked).
fn smp_throws(c: CommView, coll: &str, algo: &str) -> MpiResult<bool> {
    let l = smp::layout(c)?;
    Ok(match (coll, algo) {
        ("allgather", "mvapich2_smp") => !l.uniform || !l.blocked,
        ("allgather", _) => c.size % smp::num_core(c)? != 0,
        // allreduce smp_rsag_rab: a non-power-of-two size
        _ => true,
    })
}

/// Why SMPI does not get through `automatic` on this call, if it does not.
fn refusal(coll: &str, s: &Shape) -> Option<String> {
    let n = s.c.size;
    match coll {
        "reduce_scatter" if !is_pof2(n) => Some(format!(
            "on {n} ranks (not a power of two), where SMPI 3.32's candidate mpich_noncomm fails an assertion"
        )),
        "reduce_scatter" if !s.regular => Some(
            "with unequal receive counts, where SMPI 3.32's candidate mpich_noncomm fails an assertion"
                .into(),
        ),
        "reduce" if s.count > 0 && s.count < n as usize && !is_pof2(n) => Some(format!(
            "with {} element(s) on {n} ranks (fewer elements than ranks, not a power of two), where SMPI \
             3.32's candidate scatter_gather fails with MPI_ERR_TRUNCATE",
            s.count
        )),
        "barrier" | "reduce" | "allreduce" if n == 1 => {
            Some("on one rank: SMPI 3.32 crashes or deadlocks there".into())
        }
        "barrier" if n > 2 => Some(format!(
            "on {n} ranks: SMPI 3.32 deadlocks there (its candidate ompi_two_procs pairs every rank \
             with rank 0 or 1)"
        )),
        "bcast" if n > 1 => Some(
            "on more than one rank: SMPI 3.32 aborts there (a candidate receives a message of another \
             and fails with MPI_ERR_TRUNCATE)"
                .into(),
        ),
        "alltoall" if !is_pof2(n) => Some(format!(
            "on {n} ranks (not a power of two): SMPI 3.32 crashes there"
        )),
        _ => None,
    }
}

/// A candidate of ours known to time differently from SMPI's on this call
/// (see the module docs). The number of hosts SMPI's SMP allreduces see
/// comes from the communicator's layout once made; before, every divisor of
/// the size is a possible one.
fn known_gap(coll: &str, s: &Shape) -> MpiResult<Option<&'static str>> {
    if !s.commutative {
        // (found against SMPI 3.32 with a user operation on 4 and 7 ranks)
        return Ok(match coll {
            "reduce" => Some(
                "on a non-commutative operation, candidates arrival_pattern_aware, NTSL, ompi_chain, \
                 ompi_pipeline, ompi_binary, ompi_binomial and mvapich2_knomial keep rank order with other \
                 messages than SMPI's",
            ),
            "allreduce" => Some(
                "on a non-commutative operation, candidates lr, rab1, ompi_ring_segmented and the smp_rsag \
                 family keep rank order with other messages than SMPI's",
            ),
            "reduce_scatter" => Some(
                "on a non-commutative operation, candidates ompi_ring and mpich_pair keep rank order with \
                 other messages than SMPI's",
            ),
            _ => None,
        });
    }
    if coll != "allreduce" || s.count == 0 {
        return Ok(None);
    }
    let n = s.c.size;
    let hosts: Vec<i32> = match smp::known_layout(s.c)? {
        Some(l) if l.uniform => vec![n / CommView::new(s.c.me, l.intra)?.size],
        Some(_) => vec![n],
        None => (1..=n).filter(|d| n % d == 0).collect(),
    };
    let count = s.count;
    if hosts.iter().any(|&h| !count.is_multiple_of(h as usize)) {
        return Ok(Some(
            "candidate smp_rsag (and smp_rsag_rab on a power-of-two size) times differently from SMPI's \
             when the number of hosts does not divide the count (SMPI's result is wrong there)",
        ));
    }
    if is_pof2(n) && hosts.iter().any(|&h| (count / h as usize) % 2 == 1) {
        return Ok(Some(
            "candidate smp_rsag_rab times differently from SMPI's on an odd count per host (SMPI's result \
             is wrong there)",
        ));
    }
    Ok(None)
}

// ------------------------------------------------------------------ the benchmark

/// Clock of rank `me`.
fn now(me: u32) -> f64 {
    with_world(|w| w.ranks[me as usize].ctx().now())
}

/// Runs every candidate of `coll` (see the module docs); `run` makes one
/// call of the collective (its selection then takes the trial).
pub(crate) fn bench(coll: &'static str, s: Shape, mut run: impl FnMut() -> MpiResult<()>) -> MpiResult<()> {
    let c = s.c;
    if let Some(why) = refusal(coll, &s) {
        return Err(mpi_err(
            rt::MPI_ERR_OTHER,
            format!("{} is not supported {why}", key(coll)),
        ));
    }
    if let Some((other, what)) = nested(coll).iter().find(|(o, _)| configured(o)) {
        return Err(mpi_err(
            rt::MPI_ERR_OTHER,
            format!(
                "{} is not supported while {other} is automatic too: SMPI 3.32's candidates then run the \
                 automatic {other} inside theirs{what}; ours run {other}'s default",
                key(coll)
            ),
        ));
    }
    if let Some(gap) = known_gap(coll, &s)? {
        warn_once(
            coll,
            &format!("{gap}; its printed times and ranking may differ from SMPI 3.32's"),
        );
    }
    if with_world(|w| w.trace.is_some()) {
        warn_once(
            coll,
            &format!("the trace does not carry SMPI's events of each candidate (its '{coll}' event type)"),
        );
    }
    let (names, line) = candidates(coll);
    let mut mine: Option<(usize, f64)> = None;
    let mut global: Option<(usize, f64)> = None;
    for (i, &algo) in names.iter().enumerate() {
        with_trial(c.me, "barrier", "ompi_basic_linear", || super::barrier::run(c)).0?;
        let t1 = now(c.me);
        let picked = match smpi_outcome(coll, algo, &s) {
            Outcome::Throws => continue,
            Outcome::ThrowsAfterLayout => {
                if smp_throws(c, coll, algo)? {
                    continue;
                }
                let (ran, picked) = with_trial(c.me, coll, algo, &mut run);
                ran?;
                picked
            }
            Outcome::Fails => None,
            Outcome::Untracked => {
                return Err(mpi_err(
                    rt::MPI_ERR_OTHER,
                    format!(
                        "{} is not supported here: SMPI 3.32's candidate {algo} would run the MVAPICH2 \
                         functions its candidate mvapich2 left set (a one-level choice), which smpirun does \
                         not track",
                        key(coll)
                    ),
                ));
            }
            Outcome::Runs(name) => {
                let (ran, picked) = with_trial(c.me, coll, name, &mut run);
                ran?;
                picked
            }
        };
        if algo == "mvapich2" && matches!(coll, "reduce" | "allreduce") && s.count > 0 {
            set_mv2_pointers(coll, pointers_left(c, coll, picked, &s)?);
        }
        let t2 = now(c.me);
        let took = t2 - t1;
        let mut max = 0.0f64;
        super::reduce::default_reduce(
            c,
            (&took as *const f64).cast(),
            (&mut max as *mut f64).cast(),
            1,
            MPI_DOUBLE,
            MPI_MAX,
            0,
        )?;
        if mine.is_none_or(|(_, t)| took < t) {
            mine = Some((i, took));
        }
        if c.rank == 0 && global.is_none_or(|(_, t)| max < t) {
            global = Some((i, max));
        }
    }
    let Some((best, took)) = mine else {
        return Err(mpi_err(rt::MPI_ERR_INTERN, format!("no {coll} algorithm ran")));
    };
    let message = if c.rank == 0 {
        let (g, max) = global.unwrap_or((best, took));
        format!(
            "For rank 0, the quickest was {} : {took:.6} , but global was {} : {max:.6} at max",
            names[best], names[g]
        )
    } else {
        format!(
            "The quickest {coll} was {} on rank {} and took {took:.6}",
            names[best], c.rank
        )
    };
    warn(c.me, line, &message);
    Ok(())
}

/// Our algorithms that, on a non-commutative operation, keep rank order with other messages
/// than SMPI 3.32's (found against SMPI with a user operation on 4 and 7 ranks): the result is
/// right, the simulated time is not SMPI's.
const NONCOMMUTATIVE_GAPS: &[(&str, &[&str])] = &[
    (
        "reduce",
        &[
            "arrival_pattern_aware",
            "NTSL",
            "ompi_chain",
            "ompi_pipeline",
            "ompi_binary",
            "ompi_binomial",
            "mvapich2_knomial",
        ],
    ),
    (
        "allreduce",
        &[
            "lr",
            "rab1",
            "ompi_ring_segmented",
            "smp_rsag",
            "smp_rsag_lr",
            "smp_rsag_rab",
        ],
    ),
    ("reduce_scatter", &["ompi_ring", "mpich_pair"]),
];

/// Warns once per run when `smpi/<coll>` forces one of [`NONCOMMUTATIVE_GAPS`] and `op` is not
/// commutative.
pub(crate) fn warn_forced_noncommutative(coll: &str, op: i32) {
    let Some(algo) = with_world(|w| w.cfg.coll_forced.get(coll).cloned()) else {
        return;
    };
    let known = NONCOMMUTATIVE_GAPS
        .iter()
        .any(|(c, algos)| *c == coll && algos.contains(&algo.as_str()));
    if !known || commutative(op).unwrap_or(true) {
        return;
    }
    print_once(format!(
        "smpirun: warning: smpi/{coll}:{algo} on a non-commutative operation keeps rank order with other \
         messages than SMPI 3.32's: the result is right, the simulated time is not SMPI's"
    ));
}

/// Prints smpirun's warning `smpi/<coll>:automatic: <what>` once per run.
fn warn_once(coll: &str, what: &str) {
    print_once(format!("smpirun: warning: smpi/{coll}:automatic: {what}"));
}

/// Prints `line` on stderr unless it was printed before in this run.
fn print_once(line: String) {
    let first = STATE.with(|st| {
        let warned = &mut st.borrow_mut().warned;
        let first = !warned.contains(&line);
        if first {
            warned.push(line.clone());
        }
        first
    });
    if first {
        eprintln!("{line}");
    }
}

/// Prints SMPI's warning line of rank `me` (category `smpi_colls`).
fn warn(me: u32, line: i32, message: &str) {
    if xbt_log::threshold(&["smpi_colls", "smpi"]).0 > Priority::Warning {
        return;
    }
    let (host, t) = with_world(|w| {
        (
            w.platform.host(w.hosts[me as usize]).name.clone(),
            w.ranks[me as usize].ctx().now(),
        )
    });
    let location = (!xbt_log::no_loc()).then_some((SOURCE, line));
    let origin = Origin {
        host: &host,
        rank: me,
    };
    eprint!(
        "{}",
        xbt_log::format_line(
            Some(origin),
            t,
            "smpi_colls",
            Priority::Warning,
            location,
            message
        )
    );
}

// ------------------------------------------------------------------ entry points

/// A copy of `count` elements of `dtype` at `buf` (the contribution an
/// `MPI_IN_PLACE` call makes, kept for every candidate).
fn snapshot(buf: *const u8, count: usize, dtype: i32) -> MpiResult<TempBuf> {
    let dt = super::dtype_of(dtype)?;
    let mut t = TempBuf::new(&dt, count);
    super::local_copy(buf, count, dtype, t.ptr(), count, dtype)?;
    Ok(t)
}

fn shape(c: CommView) -> Shape {
    Shape {
        c,
        commutative: true,
        dtype: 0,
        regular: true,
        count: 0,
        block: 0,
        total: 0,
    }
}

fn commutative(op: i32) -> MpiResult<bool> {
    with_world(|w| w.op(op).map(|o| o.is_commutative()))
}

pub(crate) fn barrier(c: CommView) -> MpiResult<()> {
    bench("barrier", shape(c), || super::barrier::run(c))
}

pub(crate) fn bcast(c: CommView, buf: *mut u8, count: usize, dtype: i32, root: i32) -> MpiResult<()> {
    c.check_root(root)?;
    if c.size == 1 {
        // SMPI's MPI_Bcast calls no algorithm on one rank.
        return super::bcast::run(c, buf, count, dtype, root);
    }
    bench("bcast", shape(c), || {
        super::bcast::run(c, buf, count, dtype, root)
    })
}

pub(crate) fn reduce(
    c: CommView,
    sbuf: *const u8,
    rbuf: *mut u8,
    count: usize,
    dtype: i32,
    op: i32,
    root: i32,
) -> MpiResult<()> {
    c.check_root(root)?;
    let mut copy = None;
    let sbuf = if std::ptr::eq(sbuf, IN_PLACE) && c.rank == root {
        copy.insert(snapshot(rbuf, count, dtype)?).ptr() as *const u8
    } else {
        sbuf
    };
    let s = Shape {
        commutative: commutative(op)?,
        dtype,
        count,
        ..shape(c)
    };
    bench("reduce", s, || {
        super::reduce::run(c, sbuf, rbuf, count, dtype, op, root)
    })
}

pub(crate) fn allreduce(
    c: CommView,
    sbuf: *const u8,
    rbuf: *mut u8,
    count: usize,
    dtype: i32,
    op: i32,
) -> MpiResult<()> {
    let mut copy = None;
    let sbuf = if std::ptr::eq(sbuf, IN_PLACE) {
        copy.insert(snapshot(rbuf, count, dtype)?).ptr() as *const u8
    } else {
        sbuf
    };
    let s = Shape {
        commutative: commutative(op)?,
        dtype,
        count,
        ..shape(c)
    };
    bench("allreduce", s, || {
        super::allreduce::run(c, sbuf, rbuf, count, dtype, op)
    })
}

pub(crate) fn reduce_scatter(
    c: CommView,
    sbuf: *const u8,
    rbuf: *mut u8,
    rcounts: &[usize],
    dtype: i32,
    op: i32,
) -> MpiResult<()> {
    let total: usize = rcounts.iter().sum();
    let mut copy = None;
    let sbuf = if std::ptr::eq(sbuf, IN_PLACE) {
        copy.insert(snapshot(rbuf, total, dtype)?).ptr() as *const u8
    } else {
        sbuf
    };
    let s = Shape {
        commutative: commutative(op)?,
        dtype,
        regular: rcounts.iter().all(|&k| k == rcounts[0]),
        ..shape(c)
    };
    bench("reduce_scatter", s, || {
        super::reduce_scatter::run(c, sbuf, rbuf, rcounts, dtype, op)
    })
}

pub(crate) fn gather(
    c: CommView,
    sbuf: *const u8,
    scount: usize,
    stype: i32,
    rbuf: *mut u8,
    rcount: usize,
    rtype: i32,
    root: i32,
) -> MpiResult<()> {
    c.check_root(root)?;
    let block = if c.rank == root {
        super::dtype_of(rtype)?.size * rcount
    } else {
        super::dtype_of(stype)?.size * scount
    };
    bench("gather", Shape { block, ..shape(c) }, || {
        super::gather::gather(c, sbuf, scount, stype, rbuf, rcount, rtype, root)
    })
}

pub(crate) fn scatter(
    c: CommView,
    sbuf: *const u8,
    scount: usize,
    stype: i32,
    rbuf: *mut u8,
    rcount: usize,
    rtype: i32,
    root: i32,
) -> MpiResult<()> {
    c.check_root(root)?;
    bench("scatter", shape(c), || {
        super::gather::scatter(c, sbuf, scount, stype, rbuf, rcount, rtype, root)
    })
}

/// Allgather (`regular`) or allgatherv.
pub(crate) fn allgatherv(
    c: CommView,
    sbuf: *const u8,
    scount: usize,
    stype: i32,
    rbuf: *mut u8,
    rcounts: &[usize],
    displs: &[isize],
    rtype: i32,
    regular: bool,
) -> MpiResult<()> {
    let coll = if regular { "allgather" } else { "allgatherv" };
    let s = Shape {
        total: rcounts.iter().sum(),
        ..shape(c)
    };
    bench(coll, s, || {
        super::allgather::run(c, sbuf, scount, stype, rbuf, rcounts, displs, rtype, regular)
    })
}

/// Alltoall (`regular`) or alltoallv.
pub(crate) fn alltoallv(
    c: CommView,
    sbuf: *const u8,
    scounts: &[usize],
    sdispls: &[isize],
    stype: i32,
    rbuf: *mut u8,
    rcounts: &[usize],
    rdispls: &[isize],
    rtype: i32,
    regular: bool,
) -> MpiResult<()> {
    let coll = if regular { "alltoall" } else { "alltoallv" };
    let mut copy = None;
    let (sbuf, scounts, sdispls, stype) = if std::ptr::eq(sbuf, IN_PLACE) {
        let span = (0..c.size as usize)
            .map(|i| rdispls[i].max(0) as usize + rcounts[i])
            .max()
            .unwrap_or(0);
        let p = copy.insert(snapshot(rbuf, span, rtype)?).ptr() as *const u8;
        (p, rcounts, rdispls, rtype)
    } else {
        (sbuf, scounts, sdispls, stype)
    };
    let s = Shape {
        block: super::dtype_of(stype)?.size * scounts.first().copied().unwrap_or(0),
        ..shape(c)
    };
    bench(coll, s, || {
        super::alltoall::run(
            c, sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, regular,
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const COLLECTIVES: [&str; 11] = [
        "allgatherv",
        "allreduce",
        "gather",
        "allgather",
        "alltoall",
        "alltoallv",
        "bcast",
        "reduce",
        "reduce_scatter",
        "scatter",
        "barrier",
    ];

    #[test]
    fn every_candidate_is_an_algorithm_or_selector_of_ours() {
        for coll in COLLECTIVES {
            let ours = crate::coll::algorithm_names(coll).expect("a collective");
            let (names, _) = candidates(coll);
            for name in names {
                assert!(
                    ["ompi", "mpich", "mvapich2", "impi"].contains(name) || ours.contains(name),
                    "{coll}: SMPI's candidate {name} is not one of ours"
                );
                assert!(
                    *name != "default" && *name != NAME,
                    "{coll}: {name} is not a candidate"
                );
            }
            assert!(ours.contains(&NAME), "{coll}: --help-cfg lists automatic");
        }
    }

    #[test]
    fn the_warning_lines_are_smpis_instantiation_lines() {
        // smpi_automatic_selector.cpp instantiates the collectives on lines 68 to 78, in this order.
        let lines: Vec<i32> = COLLECTIVES.iter().map(|c| candidates(c).1).collect();
        assert_eq!(lines, (68..=78).collect::<Vec<_>>());
    }

    #[test]
    fn meshes_are_smpis() {
        let two: Vec<i32> = (1..=12).filter(|&n| mesh2(n)).collect();
        assert_eq!(two, vec![2, 3, 4, 6, 8, 9, 10, 12]);
        let three: Vec<i32> = (1..=12).filter(|&n| mesh3(n)).collect();
        assert_eq!(three, vec![3, 4, 5, 6, 7, 8, 9, 12]);
    }
}
