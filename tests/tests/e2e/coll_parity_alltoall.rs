//! Parity with SimGrid SMPI 3.32 of the alltoall, alltoallv and reduce_scatter
//! collective algorithms added after the first set (see `coll_smpi_parity` for
//! the method), and the correctness of their results (`apps/coll/coll_check.c`,
//! as in `coll_algorithms`).
//!
//! Known differences, skipped below (our behaviour is the correct MPI one):
//! * `pair_*_barrier` on a non-power-of-two size: SMPI throws; we run the
//!   `ring_*_barrier` of the same synchronisation.

use std::time::Duration;

use e2e_tests::{apps_dir, build_c, platform, Smpirun};

use super::coll_smpi_parity::{compare_on, sizes, Case};

/// Cases for `coll` with each algorithm on `np` ranks (root `np - 1`), the
/// eager and the rendezvous size of `sizes`.
fn cases<'a>(coll: &'a str, algos: &[&str], nps: &[usize]) -> Vec<Case<'a>> {
    let mut v = Vec::new();
    for a in algos {
        for &np in nps {
            for bytes in sizes(coll) {
                v.push((vec![format!("smpi/{coll}:{a}")], np, coll, bytes, np - 1, false));
            }
        }
    }
    v
}

/// coll_check's quick check of `coll` (its test name `filter`) with each
/// algorithm forced, on each size; panics with all the failures.
fn check(coll: &str, filter: &str, algos: &[&str], nps: &[usize]) {
    let exe = build_c(&apps_dir().join("coll/coll_check.c"));
    let mut failures = Vec::new();
    for a in algos {
        for &np in nps {
            let out = Smpirun::new(exe.clone())
                .platform(platform("fat_tree.toml"))
                .np(np)
                .cfg("smpi/simulate-computation:no")
                .cfg(&format!("smpi/{coll}:{a}"))
                .timeout(Duration::from_secs(300))
                .args(["quick", filter])
                .run();
            if out.code != Some(0) || out.stdout.lines().last() != Some("OK") {
                failures.push(format!("np={np} smpi/{coll}:{a}\n{}", out.describe()));
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

const CHECK_SIZES: &[usize] = &[1, 2, 3, 4, 5, 7, 8, 11, 16];

const PAIR_SYNC: &[&str] = &["pair_light_barrier", "pair_mpi_barrier", "pair_one_barrier"];
const RING_SYNC: &[&str] = &["ring_light_barrier", "ring_mpi_barrier", "ring_one_barrier"];

#[test]
fn synchronised_exchanges_parity() {
    let mut all = Vec::new();
    for coll in ["alltoall", "alltoallv"] {
        all.extend(cases(coll, PAIR_SYNC, &[4, 8]));
        all.extend(cases(coll, RING_SYNC, &[4, 7]));
    }
    // the barrier inside mpi_barrier is the selected one
    for coll in ["alltoall", "alltoallv"] {
        for np in [4, 7] {
            all.push((
                vec![
                    format!("smpi/{coll}:ring_mpi_barrier"),
                    "smpi/barrier:ompi_bruck".to_string(),
                ],
                np,
                coll,
                4096,
                0,
                false,
            ));
        }
    }
    compare_on(&all, 1);
}

#[test]
fn synchronised_exchanges_results() {
    let algos: Vec<&str> = PAIR_SYNC.iter().chain(RING_SYNC).copied().collect();
    check("alltoall", "alltoall", &algos, CHECK_SIZES);
    check("alltoallv", "alltoallv", &algos, CHECK_SIZES);
}

#[test]
fn alltoallv_bruck_parity_and_results() {
    compare_on(&cases("alltoallv", &["bruck"], &[4, 7, 8]), 1);
    check("alltoallv", "alltoallv", &["bruck"], CHECK_SIZES);
}
