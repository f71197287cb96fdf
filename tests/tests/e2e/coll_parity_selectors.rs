//! Whole-collective selectors beyond `default` / `ompi` / `mpich`:
//! `smpi/coll-selector:mvapich2` and `impi` compared with SMPI 3.32
//! (simulated times), one and two ranks per host, and checked for results
//! (`coll_check.c`).
//!
//! Nothing is skipped: SMPI's mvapich2 selector gives right data and runs on
//! all these cases.

use std::path::PathBuf;
use std::time::Duration;

use e2e_tests::{apps_dir, build_c, platform, RunOutput, Smpirun};

use super::coll_smpi_parity::{compare_on, Case};

/// The collectives (all those with a selector).
const MVAPICH2: &[&str] = &[
    "barrier",
    "bcast",
    "reduce",
    "allreduce",
    "gather",
    "scatter",
    "allgather",
    "allgatherv",
    "alltoall",
    "alltoallv",
    "reduce_scatter",
];

const SIZES: &[usize] = &[100, 4096, 65536, 1048576];

/// Every (np, root) × size case of `colls` under `cfg`.
fn cases<'a>(cfg: &str, colls: &[&'a str]) -> Vec<Case<'a>> {
    let mut v = Vec::new();
    for coll in colls {
        for (np, root) in [(4usize, 0usize), (7, 6)] {
            let sizes: &[usize] = if *coll == "barrier" { &[0] } else { SIZES };
            for &bytes in sizes {
                v.push((vec![cfg.to_string()], np, *coll, bytes, root, false));
            }
        }
    }
    v
}

#[test]
fn mvapich2_one_rank_per_host() {
    compare_on(&cases("smpi/coll-selector:mvapich2", MVAPICH2), 1);
}

#[test]
fn mvapich2_two_ranks_per_host() {
    compare_on(&cases("smpi/coll-selector:mvapich2", MVAPICH2), 2);
}

#[test]
fn mvapich2_per_collective_key() {
    // `smpi/<coll>:mvapich2` selects for that collective only (allreduce's
    // two-level entries then reduce and bcast inside hosts by SMPI's defaults).
    compare_on(&cases("smpi/alltoall:mvapich2", &["alltoall"]), 1);
    compare_on(&cases("smpi/allreduce:mvapich2", &["allreduce"]), 2);
}

fn coll_check() -> PathBuf {
    build_c(&apps_dir().join("coll/coll_check.c"))
}

fn run_check(np: usize, cfg: &str, filter: &str) -> RunOutput {
    Smpirun::new(coll_check())
        .platform(platform("fat_tree.toml"))
        .np(np)
        .cfg("smpi/simulate-computation:no")
        .cfg(cfg)
        .timeout(Duration::from_secs(300))
        .args(["quick", filter])
        .run()
}

#[test]
fn impi_one_rank_per_host() {
    compare_on(&cases("smpi/coll-selector:impi", MVAPICH2), 1);
}

#[test]
fn impi_two_ranks_per_host() {
    compare_on(&cases("smpi/coll-selector:impi", MVAPICH2), 2);
}

#[test]
fn mvapich2_results_are_right() {
    results_are_right("mvapich2");
}

#[test]
fn impi_results_are_right() {
    results_are_right("impi");
}

fn results_are_right(selector: &str) {
    let mut bad = Vec::new();
    for coll in MVAPICH2 {
        let filter = if *coll == "scatter" { "gather" } else { coll };
        for np in [1, 2, 3, 4, 5, 7, 8, 11, 16, 17] {
            // per collective: coll_check verifies with other collectives
            let out = run_check(np, &format!("smpi/{coll}:{selector}"), filter);
            if !(out.code == Some(0) && out.stdout.lines().last() == Some("OK")) {
                bad.push(format!("{coll} np={np}\n{}", out.describe()));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "{} failing run(s):\n{}",
        bad.len(),
        bad.join("\n")
    );
}

#[test]
fn unknown_names_list_the_new_selectors() {
    let out = run_check(2, "smpi/coll-selector:bogus", "barrier");
    assert_ne!(out.code, Some(0), "{}", out.describe());
    assert!(
        out.stderr.contains("known: default, ompi, mpich, mvapich2, impi"),
        "{}",
        out.describe()
    );
    let out = run_check(2, "smpi/bcast:bogus", "bcast");
    assert!(
        out.stderr
            .contains("known: default, ompi, mpich, mvapich2, impi, binomial_tree"),
        "{}",
        out.describe()
    );
}
