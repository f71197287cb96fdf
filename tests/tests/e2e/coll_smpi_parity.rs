//! Parity with SimGrid SMPI 3.32 itself, when it is installed (`smpirun` and
//! `smpicc` on the PATH, `smpirun -version` saying 3.32; skipped with a
//! message otherwise).
//!
//! `apps/coll/coll_time.c` is built with both tool chains and run on the same
//! SimGrid XML platform (8 hosts on a star: private 1 GB/s, 10 us links, no
//! backbone) with `network/model:CM02`, `network/crosstraffic:0`, no
//! computation and `smpi/wtime:0`. Every rank's time of one call must be
//! SMPI's within 1e-10 of the call's largest time (the times print 13
//! digits; they agree to the last but for rounding) for:
//! * every algorithm of SMPI's table of every collective (its selectors
//!   too), forced by `--cfg=smpi/<coll>:<algo>`, on 4 ranks (root 0) and 7
//!   ranks (root 6), with an eager and a rendezvous message size;
//! * the default selector and the `ompi` selector on every collective.
//!
//! The SMP algorithms with several ranks per host are in `coll_parity_smp`,
//! more sizes of the tree and ring algorithms in `coll_parity_trees`, the
//! selectors `mvapich2` and `impi` in `coll_parity_selectors`.
//!
//! Skipped where SMPI 3.32 fails ([`smpi_fails`]: it aborts, crashes or
//! deadlocks; we run a correct algorithm instead) and where we differ on
//! purpose ([`we_differ`]):
//! * `mpich` (bcast, reduce, allreduce, alltoallv): our `mpich` selector
//!   leaves out SMPI's SMP-aware branches and its slips (`select.rs`);
//! * allreduce `smp_rsag` when the number of hosts does not divide the
//!   count (here 7): SMPI leaves the remainder unreduced; we reduce it, as
//!   `smp_rsag_lr` does (`smp_allreduce.rs`);
//! * `ompi_two_procs` on more than 2 ranks: SMPI deadlocks; we run
//!   `ompi_recursivedoubling`;
//! * `ompi_split_bintree` on messages too small to split: SMPI aborts in its
//!   SMP-linear fallback; we run `NTSL` (not at the sizes here).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use e2e_tests::{
    apps_dir, build_c, field_f64, fields, platform, run_command, scratch_path, write_scratch, RunOutput,
    Smpirun,
};

const PLATFORM: &str = r#"<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <cluster id="star" prefix="h-" suffix="" radical="0-7" speed="1Gf" bw="1GBps" lat="10us"/>
</platform>
"#;

const CFG: &[&str] = &[
    "network/model:CM02",
    "network/crosstraffic:0",
    "smpi/simulate-computation:no",
    "smpi/wtime:0",
];

pub(super) struct Smpi {
    coll_time: PathBuf,
    platform: PathBuf,
}

/// A hostfile placing `per_host` consecutive ranks on each of the star's 8
/// hosts (SMPI's SMP algorithms group the ranks of one host).
fn hostfile(per_host: usize) -> PathBuf {
    let hosts: String = (0..8).map(|i| format!("h-{i}:{per_host}\n")).collect();
    write_scratch(&format!("hosts8x{per_host}"), &hosts)
}

/// SMPI 3.32 and coll_time built with its smpicc, or `None` (with a message).
pub(super) fn smpi() -> Option<&'static Smpi> {
    static S: OnceLock<Option<Smpi>> = OnceLock::new();
    S.get_or_init(|| {
        let version = Command::new("smpirun").arg("-version").output().ok()?;
        let text =
            String::from_utf8_lossy(&version.stdout).to_string() + &String::from_utf8_lossy(&version.stderr);
        if !text.contains("3.32") {
            eprintln!("skipped: smpirun is not SimGrid 3.32 ({})", text.trim());
            return None;
        }
        let out = scratch_path("coll_time_smpi");
        let mut cc = Command::new("smpicc");
        cc.arg("-O2")
            .arg(apps_dir().join("coll/coll_time.c"))
            .arg("-o")
            .arg(&out);
        let r = run_command(cc, Duration::from_secs(120));
        if r.code != Some(0) {
            eprintln!("skipped: SMPI's smpicc failed\n{}", r.describe());
            return None;
        }
        Some(Smpi {
            coll_time: out,
            platform: write_scratch("star8.xml", PLATFORM),
        })
    })
    .as_ref()
    .or_else(|| {
        eprintln!("skipped: SimGrid SMPI 3.32 (smpirun, smpicc) not installed");
        None
    })
}

/// Every rank's time (index = rank), if the run succeeded and printed one
/// time per rank.
pub(super) fn rank_times(out: &RunOutput, np: usize) -> Option<Vec<f64>> {
    if out.code != Some(0) {
        return None;
    }
    let mut t = vec![None; np];
    for l in out.lines_starting_with("time ") {
        let rank: usize = fields(l).get("rank")?.parse().ok()?;
        *t.get_mut(rank)? = Some(field_f64(l, "t"));
    }
    t.into_iter().collect()
}

/// Tolerance of a rank's time, relative to the call's largest time.
const TOLERANCE: f64 = 1e-10;

/// The ranks whose times differ (SMPI's, ours), with both times; `None`
/// when every rank's time agrees.
pub(super) fn rank_mismatch(theirs: &[f64], ours: &[f64]) -> Option<String> {
    let largest = theirs.iter().chain(ours).fold(0.0f64, |m, t| m.max(t.abs()));
    let bad: Vec<String> = theirs
        .iter()
        .zip(ours)
        .enumerate()
        .filter(|(_, (a, b))| (*a - *b).abs() > TOLERANCE * largest.max(1e-12))
        .map(|(r, (a, b))| format!("rank {r}: SMPI {a:.9e} s, ours {b:.9e} s"))
        .collect();
    (!bad.is_empty() || theirs.len() != ours.len()).then(|| bad.join("; "))
}

/// (SMPI's times, ours) for one configuration, `per_host` ranks on each host.
#[allow(clippy::type_complexity)]
fn both(
    s: &Smpi,
    np: usize,
    per_host: usize,
    cfg: &[String],
    args: &[String],
) -> (Option<Vec<f64>>, Option<Vec<f64>>, RunOutput, RunOutput) {
    let hosts = hostfile(per_host);
    let mut cmd = Command::new("smpirun");
    cmd.current_dir(s.coll_time.parent().unwrap_or(Path::new(".")))
        .arg("-np")
        .arg(np.to_string())
        .arg("-platform")
        .arg(&s.platform)
        .arg("-hostfile")
        .arg(&hosts);
    for c in CFG.iter().map(|c| c.to_string()).chain(cfg.iter().cloned()) {
        cmd.arg(format!("--cfg={c}"));
    }
    cmd.arg(&s.coll_time).args(args);
    let theirs = run_command(cmd, Duration::from_secs(120));
    let mut run = Smpirun::new(build_c(&apps_dir().join("coll/coll_time.c")))
        .platform(&s.platform)
        .hostfile(&hosts)
        .np(np);
    for c in CFG.iter().map(|c| c.to_string()).chain(cfg.iter().cloned()) {
        run = run.cfg(&c);
    }
    let ours = run.args(args.iter().cloned()).run();
    (rank_times(&theirs, np), rank_times(&ours, np), theirs, ours)
}

/// One comparison: (cfg, np, collective, bytes, root, warm).
pub(super) type Case<'a> = (Vec<String>, usize, &'a str, usize, usize, bool);

/// Compares every case, one rank per host; panics with all the mismatches.
pub(super) fn compare(cases: &[Case]) {
    compare_on(cases, 1)
}

/// Compares every case with `per_host` ranks on each host (rank r on host
/// r / per_host); panics with all the mismatches.
pub(super) fn compare_on(cases: &[Case], per_host: usize) {
    let Some(s) = smpi() else { return };
    let mut bad = Vec::new();
    for (cfg, np, coll, bytes, root, warm) in cases {
        let mut args = vec![coll.to_string(), bytes.to_string(), root.to_string()];
        if *warm {
            args.push("warm".into());
        }
        let (theirs, ours, t_out, o_out) = both(s, *np, per_host, cfg, &args);
        match (theirs, ours) {
            (Some(a), Some(b)) => {
                if let Some(m) = rank_mismatch(&a, &b) {
                    bad.push(format!(
                        "{coll} np={np} per_host={per_host} S={bytes} root={root} warm={warm} {cfg:?}: {m}"
                    ))
                }
            }
            (None, _) => bad.push(format!(
                "{coll} np={np} {cfg:?}: SMPI failed\n{}",
                t_out.describe()
            )),
            (_, None) => bad.push(format!("{coll} np={np} {cfg:?}: we failed\n{}", o_out.describe())),
        }
    }
    assert!(
        bad.is_empty(),
        "{} mismatch(es) with SMPI 3.32:\n{}",
        bad.len(),
        bad.join("\n")
    );
}

/// Sizes (bytes): whole vector for bcast/reduce/allreduce, one block otherwise.
pub(super) fn sizes(coll: &str) -> [usize; 2] {
    match coll {
        "bcast" | "reduce" | "allreduce" => [16384, 1048576],
        _ => [4096, 262144],
    }
}

/// Whether SMPI 3.32 fails (aborts, crashes, deadlocks) with `algo` of
/// `coll` on `np` ranks (one per host) and `bytes`.
fn smpi_fails(coll: &str, algo: &str, np: usize, bytes: usize) -> bool {
    let pof2 = np.is_power_of_two();
    match (coll, algo) {
        // recursive halving or pairwise exchanges that need a power of two
        ("allgather", "pair" | "rhv") | ("allgatherv", "pair") | ("allreduce", "rab1" | "smp_rsag_rab") => {
            !pof2
        }
        ("reduce_scatter", "mpich_noncomm") => !pof2,
        ("alltoall" | "alltoallv", a) if a.starts_with("pair") => !pof2,
        // SMPI's mpich alltoall runs `pair` on large blocks
        ("alltoall", "mpich") => !pof2 && bytes >= 32768,
        // no 2-D shape of SMPI's choosing on 7 ranks (see coll_parity_trees)
        ("allgather" | "alltoall", "2dmesh") => np == 7,
        ("barrier", "ompi_two_procs") => np > 2,
        // with one rank per host, SMPI's chain arithmetic breaks (coll_parity_smp)
        ("bcast", "SMP_linear") => true,
        _ => false,
    }
}

/// Whether our `algo` of `coll` differs from SMPI's on purpose there (see
/// the module docs).
fn we_differ(coll: &str, algo: &str, np: usize, bytes: usize) -> bool {
    match (coll, algo) {
        ("bcast" | "reduce" | "allreduce" | "alltoallv", "mpich") => true,
        ("allreduce", "smp_rsag") => !(bytes / 4).is_multiple_of(np),
        _ => false,
    }
}

/// Every algorithm of `algos` forced on `coll`, 4 ranks (root 0) and 7
/// ranks (root 6), both sizes of [`sizes`], but where SMPI fails or we
/// differ on purpose; every rank's time compared.
pub(super) fn algorithms(coll: &str, algos: &[&str]) {
    let mut cases = Vec::new();
    for a in algos {
        for (np, root) in [(4usize, 0usize), (7, 6)] {
            for bytes in sizes(coll) {
                if smpi_fails(coll, a, np, bytes) || we_differ(coll, a, np, bytes) {
                    continue;
                }
                // (`mvapich2_knomial_intra_node` pays SMPI's SMP set-up on its
                // first call, as in SMPI: compared cold, like the others.)
                cases.push((vec![format!("smpi/{coll}:{a}")], np, coll, bytes, root, false));
            }
        }
    }
    compare(&cases);
}

/// SMPI 3.32's table of each collective (`smpi_coll.cpp`), in its order,
/// without `default` and `automatic`.
pub(super) fn smpi_table(coll: &str) -> &'static [&'static str] {
    match coll {
        "gather" => &[
            "ompi",
            "ompi_basic_linear",
            "ompi_binomial",
            "ompi_linear_sync",
            "mpich",
            "mvapich2",
            "mvapich2_two_level",
            "impi",
        ],
        "allgather" => &[
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
        "allgatherv" => &[
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
        "allreduce" => &[
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
        "reduce_scatter" => &[
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
        "scatter" => &[
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
        "barrier" => &[
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
        "alltoall" => &[
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
        "alltoallv" => &[
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
        "bcast" => &[
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
        "reduce" => &[
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
        _ => &[],
    }
}

#[test]
fn barrier_parity() {
    algorithms("barrier", smpi_table("barrier"));
}

#[test]
fn bcast_parity() {
    algorithms("bcast", smpi_table("bcast"));
}

#[test]
fn reduce_parity() {
    algorithms("reduce", smpi_table("reduce"));
}

/// With fewer elements than ranks: `scatter_gather` pads the vector to one
/// element per rank, `smp_rsag_lr` sends it whole in every message when
/// there are fewer elements than hosts (SMPI's sizes); 4 and 8 ranks
/// (SMPI's scatter_gather fails on 7), and 2 or 4 ranks per host.
#[test]
fn fewer_elements_than_ranks_parity() {
    let mut cases = Vec::new();
    for (np, root) in [(4usize, 1usize), (8, 5)] {
        for bytes in [4usize, 12] {
            for (coll, a) in [
                ("reduce", "scatter_gather"),
                ("reduce", "flat_tree"),
                ("allreduce", "smp_rsag_lr"),
                ("allreduce", "smp_binomial"),
            ] {
                cases.push((vec![format!("smpi/{coll}:{a}")], np, coll, bytes, root, false));
            }
        }
    }
    // smp_rsag_lr on 7 ranks too
    for bytes in [4usize, 12] {
        cases.push((
            vec!["smpi/allreduce:smp_rsag_lr".into()],
            7,
            "allreduce",
            bytes,
            0,
            false,
        ));
    }
    compare(&cases);
    // and with fewer elements than hosts: 2 ranks per host on 4 hosts, then
    // 4 per host on 6 ranks (not uniform: SMPI takes every rank as a host)
    for (per_host, np) in [(2usize, 8usize), (4, 6)] {
        let smp: Vec<Case> = [4usize, 12]
            .into_iter()
            .flat_map(|bytes| {
                [false, true].map(|warm| {
                    let cfg = vec!["smpi/allreduce:smp_rsag_lr".to_string()];
                    (cfg, np, "allreduce", bytes, 0, warm)
                })
            })
            .collect();
        compare_on(&smp, per_host);
    }
}

/// `scatter_gather` with the root among the odd ranks below 2·rem (rank 0
/// hands it the first piece), on 6 and 7 ranks.
#[test]
fn reduce_scatter_gather_odd_root_parity() {
    let mut cases = Vec::new();
    for (np, root) in [(6usize, 1usize), (6, 3), (7, 1), (7, 5)] {
        for bytes in sizes("reduce") {
            cases.push((
                vec!["smpi/reduce:scatter_gather".into()],
                np,
                "reduce",
                bytes,
                root,
                false,
            ));
        }
    }
    compare(&cases);
}

#[test]
fn allreduce_parity() {
    algorithms("allreduce", smpi_table("allreduce"));
}

#[test]
fn gather_scatter_parity() {
    algorithms("gather", smpi_table("gather"));
    algorithms("scatter", smpi_table("scatter"));
}

/// gather `ompi_linear_sync` on both sides of its 92160 B threshold (first
/// segment 1 KiB, then 32 KiB).
#[test]
fn gather_linear_sync_threshold_parity() {
    let cases: Vec<Case> = [65536usize, 92160, 92164, 131072]
        .into_iter()
        .map(|b| {
            (
                vec!["smpi/gather:ompi_linear_sync".into()],
                7,
                "gather",
                b,
                2,
                false,
            )
        })
        .collect();
    compare(&cases);
}

#[test]
fn allgather_parity() {
    algorithms("allgather", smpi_table("allgather"));
    algorithms("allgatherv", smpi_table("allgatherv"));
}

#[test]
fn alltoall_parity() {
    algorithms("alltoall", smpi_table("alltoall"));
    algorithms("alltoallv", smpi_table("alltoallv"));
}

#[test]
fn reduce_scatter_parity() {
    algorithms("reduce_scatter", smpi_table("reduce_scatter"));
}

/// Unequal counts (`apps/coll/reduce_scatter_uneven.c`): SMPI's default then
/// runs MPICH's choice (recursive doubling below 524288 elements, pair above),
/// with a commutative and a non-commutative operation, under the default and
/// mpich selectors; every rank's time and result equal SMPI's.
#[test]
fn reduce_scatter_with_unequal_counts_parity() {
    if smpi().is_none() {
        return;
    }
    let src = apps_dir().join("coll/reduce_scatter_uneven.c");
    let theirs_exe = scratch_path("reduce_scatter_uneven_smpi");
    let mut cc = Command::new("smpicc");
    cc.arg("-O2").arg(&src).arg("-o").arg(&theirs_exe);
    let r = run_command(cc, Duration::from_secs(120));
    assert_eq!(r.code, Some(0), "SMPI's smpicc failed\n{}", r.describe());
    let platform = platform("fat_tree_64.xml");
    let sorted = |out: &RunOutput| {
        let mut v: Vec<String> = out
            .stdout
            .lines()
            .filter(|l| l.contains("reduce_scatter"))
            .map(String::from)
            .collect();
        v.sort();
        v
    };
    let mut bad = Vec::new();
    for np in [3usize, 4, 7] {
        for args in [vec!["10"], vec!["100000"], vec!["10", "noncomm"]] {
            for sel in ["default", "mpich"] {
                let mut cmd = Command::new("smpirun");
                cmd.current_dir(theirs_exe.parent().unwrap_or(Path::new(".")))
                    .arg("-np")
                    .arg(np.to_string())
                    .arg("-platform")
                    .arg(&platform)
                    .arg("--cfg=smpi/simulate-computation:no")
                    .arg(format!("--cfg=smpi/coll-selector:{sel}"))
                    .arg(&theirs_exe)
                    .args(&args);
                let theirs = run_command(cmd, Duration::from_secs(120));
                let ours = Smpirun::new(build_c(&src))
                    .platform(&platform)
                    .np(np)
                    .cfg("smpi/simulate-computation:no")
                    .cfg(&format!("smpi/coll-selector:{sel}"))
                    .args(args.iter().map(|a| a.to_string()))
                    .run();
                let (a, b) = (sorted(&theirs), sorted(&ours));
                if a.len() != np || a != b || b.iter().any(|l| !l.ends_with(" ok")) {
                    bad.push(format!("np={np} {args:?} {sel}:\nSMPI {a:?}\nours {b:?}"));
                }
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

const ALL: &[&str] = &[
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

/// The default selector and the ompi selector (4 and 7 ranks: sizes where
/// Open MPI's table never picks the k-nomial bcast) over a range of sizes.
#[test]
fn selector_parity() {
    let mut cases = Vec::new();
    for sel in ["default", "ompi"] {
        for coll in ALL {
            for (np, root) in [(4usize, 1usize), (7, 0)] {
                for bytes in [100usize, 4096, 65536, 1048576] {
                    cases.push((
                        vec![format!("smpi/coll-selector:{sel}")],
                        np,
                        *coll,
                        bytes,
                        root,
                        false,
                    ));
                }
            }
        }
    }
    compare(&cases);
}
