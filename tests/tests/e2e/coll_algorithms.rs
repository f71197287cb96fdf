//! Correctness of every collective algorithm.
//!
//! `apps/coll/coll_check.c` checks each MPI collective against a sequential
//! computation (every root, counts 0 / 1 / odd / large enough for rendezvous
//! messages and pipeline segments, MPI_IN_PLACE, a non-contiguous vector
//! datatype whose holes must survive, MPI_SUM / MPI_MAX / MPI_MINLOC and a
//! non-commutative user operation that must be applied in rank order). Here it
//! runs with each algorithm forced by `--cfg=smpi/<coll>:<algo>` on
//! communicators of 1 to 17 ranks, with each selector, and with every
//! algorithm of every collective at once on the full (non-quick) check.
//!
//! The per-algorithm sweeps and the selector checks run on a sample of sizes
//! (1-5, 7, 8, 11, 16, 17: powers of two, their neighbours and primes, where
//! the algorithms and the selectors' rules change) to keep CI short; set
//! `E2E_FULL_SWEEP=1` to run every size 1..=17.

use std::path::PathBuf;
use std::time::Duration;

use e2e_tests::{apps_dir, build_c, platform, RunOutput, Smpirun};

/// Algorithms of each collective (SMPI names), as `coll.rs` lists them.
const ALGORITHMS: &[(&str, &[&str])] = &[
    (
        "barrier",
        &[
            "ompi_basic_linear",
            "ompi_two_procs",
            "ompi_recursivedoubling",
            "ompi_bruck",
            "ompi_tree",
            "ompi_doublering",
            "mvapich2_pair",
        ],
    ),
    (
        "bcast",
        &[
            "binomial_tree",
            "flattree",
            "flattree_pipeline",
            "scatter_rdb_allgather",
            "scatter_LR_allgather",
            "ompi_pipeline",
            "ompi_split_bintree",
            "NTSL",
            "NTSB",
            "mvapich2_knomial_intra_node",
        ],
    ),
    (
        "reduce",
        &[
            "ompi_basic_linear",
            "flat_tree",
            "binomial",
            "scatter_gather",
            "ompi_chain",
            "ompi_pipeline",
            "ompi_binary",
            "ompi_binomial",
            "ompi_in_order_binary",
        ],
    ),
    (
        "allreduce",
        &["redbcast", "rdb", "lr", "rab_rdb", "ompi_ring_segmented"],
    ),
    (
        "gather",
        &["ompi_basic_linear", "ompi_binomial", "ompi_linear_sync"],
    ),
    (
        "scatter",
        &["ompi_basic_linear", "ompi_binomial", "ompi_linear_nb"],
    ),
    (
        "allgather",
        &[
            "GB",
            "ring",
            "rdb",
            "bruck",
            "pair",
            "ompi_neighborexchange",
            "NTSLR",
            "NTSLR_NB",
        ],
    ),
    (
        "allgatherv",
        &[
            "GB",
            "ring",
            "pair",
            "mpich_ring",
            "mpich_rdb",
            "ompi_bruck",
            "ompi_neighborexchange",
        ],
    ),
    (
        "alltoall",
        &["basic_linear", "pair", "ring", "bruck", "mvapich2_scatter_dest"],
    ),
    ("alltoallv", &["ompi_basic_linear", "pair", "ring"]),
    (
        "reduce_scatter",
        &[
            "ompi_basic_recursivehalving",
            "ompi_ring",
            "mpich_pair",
            "mpich_noncomm",
        ],
    ),
];

const SIZES: std::ops::RangeInclusive<usize> = 1..=17;

/// Sizes of the per-algorithm and selector sweeps (see the module docs).
fn algorithm_sizes() -> Vec<usize> {
    if std::env::var_os("E2E_FULL_SWEEP").is_some_and(|v| v == "1") {
        SIZES.collect()
    } else {
        vec![1, 2, 3, 4, 5, 7, 8, 11, 16, 17]
    }
}

fn coll_check() -> PathBuf {
    build_c(&apps_dir().join("coll/coll_check.c"))
}

/// One coll_check run (`args`: "quick" / "full", then an optional filter).
fn run(np: usize, cfgs: &[String], args: &[&str]) -> RunOutput {
    let mut r = Smpirun::new(coll_check())
        .platform(platform("fat_tree.toml"))
        .np(np)
        .cfg("smpi/simulate-computation:no")
        .timeout(Duration::from_secs(300));
    for c in cfgs {
        r = r.cfg(c);
    }
    r.args(args.iter().copied()).run()
}

fn passed(out: &RunOutput) -> bool {
    out.code == Some(0) && out.stdout.lines().last() == Some("OK")
}

/// Runs every configuration on every size; panics with all the failures.
fn sweep(configs: &[Vec<String>], sizes: impl Iterator<Item = usize> + Clone, args: &[&str]) {
    let mut failures = Vec::new();
    for cfgs in configs {
        for np in sizes.clone() {
            let out = run(np, cfgs, args);
            if !passed(&out) {
                failures.push(format!("np={np} {cfgs:?}\n{}", out.describe()));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failing run(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Every algorithm of `coll`, sizes 1..=17, quick check of that collective only.
fn algorithms_of(coll: &str) {
    let algos = ALGORITHMS
        .iter()
        .find(|(c, _)| *c == coll)
        .expect("collective listed")
        .1;
    let configs: Vec<Vec<String>> = algos.iter().map(|a| vec![format!("smpi/{coll}:{a}")]).collect();
    // coll_check's test names: gather and scatter are one test
    let filter = if coll == "scatter" { "gather" } else { coll };
    sweep(&configs, algorithm_sizes().into_iter(), &["quick", filter]);
}

#[test]
fn barrier_algorithms() {
    algorithms_of("barrier");
}

#[test]
fn bcast_algorithms() {
    algorithms_of("bcast");
}

#[test]
fn reduce_algorithms() {
    algorithms_of("reduce");
}

#[test]
fn allreduce_algorithms() {
    algorithms_of("allreduce");
}

#[test]
fn gather_algorithms() {
    algorithms_of("gather");
}

#[test]
fn scatter_algorithms() {
    algorithms_of("scatter");
}

#[test]
fn allgather_algorithms() {
    algorithms_of("allgather");
}

#[test]
fn allgatherv_algorithms() {
    algorithms_of("allgatherv");
}

#[test]
fn alltoall_algorithms() {
    algorithms_of("alltoall");
}

#[test]
fn alltoallv_algorithms() {
    algorithms_of("alltoallv");
}

#[test]
fn reduce_scatter_algorithms() {
    algorithms_of("reduce_scatter");
}

/// The whole check (all roots, large counts) with each selector.
fn selector(name: &str) {
    sweep(
        &[vec![format!("smpi/coll-selector:{name}")]],
        algorithm_sizes().into_iter(),
        &["full"],
    );
}

#[test]
fn default_selector_full_check() {
    selector("default");
}

#[test]
fn ompi_selector_full_check() {
    selector("ompi");
}

#[test]
fn mpich_selector_full_check() {
    selector("mpich");
}

/// The whole check with the i-th algorithm of every collective forced at once
/// (composite algorithms then also run on forced parts, e.g. `GB` on a forced
/// gather and bcast), on a spread of sizes.
#[test]
fn every_algorithm_full_check() {
    let groups = ALGORITHMS.iter().map(|(_, a)| a.len()).max().unwrap_or(0);
    let configs: Vec<Vec<String>> = (0..groups)
        .map(|g| {
            ALGORITHMS
                .iter()
                .map(|(c, a)| format!("smpi/{c}:{}", a[g % a.len()]))
                .collect()
        })
        .collect();
    sweep(&configs, [1usize, 2, 3, 5, 6, 8, 12, 17].into_iter(), &["full"]);
}

#[test]
fn unknown_algorithm_is_an_error() {
    let out = run(4, &["smpi/bcast:nope".to_string()], &["quick", "bcast"]);
    out.assert_failure().assert_stderr_has(&[
        "unknown algorithm 'nope' for smpi/bcast",
        "binomial_tree",
        "scatter_LR_allgather",
    ]);
    let out = run(4, &["smpi/coll-selector:nope".to_string()], &["quick", "bcast"]);
    out.assert_failure()
        .assert_stderr_has(&["unknown collective selector 'nope'", "ompi", "mpich"]);
}
