//! Simulated time of every collective algorithm against a hand-computed value.
//!
//! Platform: a star of 8 hosts, each with one private SPLITDUPLEX link of
//! bandwidth B = 1 GB/s and latency L = 10 us to a switch, no backbone
//! (written to a scratch file below). Model `CM02` (latency and bandwidth
//! factors 1), `network/crosstraffic:0` (no 5 % reverse-ACK load, so the two
//! directions of an exchange do not interfere), no computation, and
//! `smpi/wtime:0`. `apps/coll/coll_time.c` times one call on every rank; the
//! collective's time is the largest.
//!
//! The message model:
//! * one message of x bytes between two hosts crosses 2 links:
//!   `t(x) = 2L + (x + 16) / B` (16 bytes of envelope);
//! * k messages leaving (or entering) one host together share its link
//!   fairly: `sh(k, x) = 2L + k (x + 16) / B` for all of them;
//! * a send of at least 65536 bytes blocks until the transfer ends
//!   (rendezvous); smaller sends return at once, but every transfer starts
//!   only when the receive is posted.
//!
//! The SMP algorithms (`mvapich2_knomial_intra_node` and the others of
//! `coll/smp*.rs`) are left out: their first call also pays SMPI's set-up of
//! the per-host communicators; `coll_smpi_parity` and `coll_parity_smp`
//! compare them with SMPI itself.
//!
//! S is the message size given to coll_time (whole vector for bcast, reduce,
//! allreduce; one rank's block otherwise). Each case states its formula.

use std::path::PathBuf;
use std::sync::OnceLock;

use e2e_tests::{apps_dir, build_c, field_f64, write_scratch, Smpirun};

const L: f64 = 10e-6;
const B: f64 = 1e9;
const MIB: f64 = 1048576.0;
const KIB256: f64 = 262144.0;

/// One message of `x` bytes.
fn t(x: f64) -> f64 {
    2.0 * L + (x + 16.0) / B
}

/// `k` messages of `x` bytes sharing one link.
fn sh(k: f64, x: f64) -> f64 {
    2.0 * L + k * (x + 16.0) / B
}

const STAR: &str = r#"# 8 hosts, each with a private SPLITDUPLEX link (1 GB/s, 10 us) to one switch; no backbone.
[[cluster]]
id = "star"
prefix = "h-"
suffix = ""
radical = "0-7"
speed = "1Gf"
bw = "1GBps"
lat = "10us"
"#;

fn star() -> PathBuf {
    static P: OnceLock<PathBuf> = OnceLock::new();
    P.get_or_init(|| write_scratch("star8.toml", STAR)).clone()
}

struct Case {
    np: usize,
    coll: &'static str,
    bytes: f64,
    root: usize,
    /// `--cfg=smpi/...` settings
    cfg: &'static [&'static str],
    expected: f64,
    formula: &'static str,
}

fn case(
    np: usize,
    coll: &'static str,
    bytes: f64,
    cfg: &'static [&'static str],
    expected: f64,
    formula: &'static str,
) -> Case {
    Case {
        np,
        coll,
        bytes,
        root: 0,
        cfg,
        expected,
        formula,
    }
}

/// Runs every case; panics with all the mismatches.
fn check(cases: &[Case]) {
    let prog = build_c(&apps_dir().join("coll/coll_time.c"));
    let mut bad = Vec::new();
    for c in cases {
        let mut run = Smpirun::new(&prog)
            .platform(star())
            .np(c.np)
            .cfg("network/model:CM02")
            .cfg("network/crosstraffic:0")
            .cfg("smpi/simulate-computation:no")
            .cfg("smpi/wtime:0");
        for k in c.cfg {
            run = run.cfg(&format!("smpi/{k}"));
        }
        let out = run
            .args([
                c.coll.to_string(),
                format!("{}", c.bytes as u64),
                c.root.to_string(),
            ])
            .run();
        out.assert_success();
        let times: Vec<f64> = out
            .lines_starting_with("time ")
            .map(|l| field_f64(l, "t"))
            .collect();
        assert_eq!(times.len(), c.np, "one time per rank\n{}", out.describe());
        let got = times.iter().copied().fold(0.0, f64::max);
        let rel = (got - c.expected).abs() / c.expected;
        if rel > 1e-6 {
            bad.push(format!(
                "{} np={} S={} root={} {:?}: got {got:.9e} s, expected {:.9e} s = {} (rel. error {rel:.1e})",
                c.coll, c.np, c.bytes, c.root, c.cfg, c.expected, c.formula
            ));
        }
    }
    assert!(bad.is_empty(), "timing mismatches:\n{}", bad.join("\n"));
}

#[test]
fn barrier_times() {
    let z = 0.0;
    check(&[
        // 3 arrivals share rank 0's incoming link, then 3 releases share its outgoing link
        case(
            4,
            "barrier",
            z,
            &["barrier:ompi_basic_linear"],
            2.0 * sh(3.0, z),
            "2 (2L + 3*16/B)",
        ),
        case(
            8,
            "barrier",
            z,
            &["barrier:ompi_basic_linear"],
            2.0 * sh(7.0, z),
            "2 (2L + 7*16/B)",
        ),
        // log2(4) rounds of exchanges
        case(
            4,
            "barrier",
            z,
            &["barrier:ompi_recursivedoubling"],
            2.0 * t(z),
            "2 t(0)",
        ),
        case(4, "barrier", z, &["barrier:mvapich2_pair"], 2.0 * t(z), "2 t(0)"),
        // 6 ranks: 4,5 report to 0,1; 2 rounds among 4; 0,1 release 4,5
        case(
            6,
            "barrier",
            z,
            &["barrier:ompi_recursivedoubling"],
            4.0 * t(z),
            "t(0) + 2 t(0) + t(0)",
        ),
        // ceil(log2 n) dissemination rounds
        case(4, "barrier", z, &["barrier:ompi_bruck"], 2.0 * t(z), "2 t(0)"),
        case(6, "barrier", z, &["barrier:ompi_bruck"], 3.0 * t(z), "3 t(0)"),
        case(8, "barrier", z, &["barrier:ompi_bruck"], 3.0 * t(z), "3 t(0)"),
        // fan-in 1->0 | 3->2, 2->0; fan-out: 0->2 and 0->1 together (detached), then 2->3
        case(
            4,
            "barrier",
            z,
            &["barrier:ompi_tree"],
            3.0 * t(z) + sh(2.0, z),
            "t(0) + t(0) + sh(2,0) + t(0)",
        ),
        // two tokens around the ring of 4
        case(
            4,
            "barrier",
            z,
            &["barrier:ompi_doublering"],
            8.0 * t(z),
            "2 * 4 t(0)",
        ),
        case(2, "barrier", z, &["barrier:ompi_two_procs"], t(z), "t(0)"),
        // selectors: ompi (4..7 ranks) -> linear; mpich -> bruck
        case(
            4,
            "barrier",
            z,
            &["coll-selector:ompi"],
            2.0 * sh(3.0, z),
            "ompi: linear",
        ),
        case(
            4,
            "barrier",
            z,
            &["coll-selector:mpich"],
            2.0 * t(z),
            "mpich: bruck",
        ),
    ]);
}

#[test]
fn bcast_times() {
    let m = MIB;
    let seg128 = 131072.0;
    check(&[
        // root sends to 2 then to 1 (blocking), 2 sends to 3 during 0 -> 1
        case(4, "bcast", m, &["bcast:binomial_tree"], 2.0 * t(m), "2 t(S)"),
        case(8, "bcast", m, &["bcast:binomial_tree"], 3.0 * t(m), "3 t(S)"),
        case(4, "bcast", m, &[], 2.0 * t(m), "default = binomial: 2 t(S)"),
        // 3 isends share the root's link
        case(4, "bcast", m, &["bcast:flattree"], sh(3.0, m), "sh(3, S)"),
        // binomial scatter (S/2 to 2, then S/4 to 1 | 2 -> 3), rdb allgather (S/4, then S/2)
        case(
            4,
            "bcast",
            m,
            &["bcast:scatter_rdb_allgather"],
            2.0 * t(m / 2.0) + 2.0 * t(m / 4.0),
            "t(S/2) + t(S/4) + t(S/4) + t(S/2)",
        ),
        // same scatter, then 3 ring steps of S/4
        case(
            4,
            "bcast",
            m,
            &["bcast:scatter_LR_allgather"],
            t(m / 2.0) + 4.0 * t(m / 4.0),
            "t(S/2) + t(S/4) + 3 t(S/4)",
        ),
        // 6 ranks, pieces p = S/6: root sends 2p to 4, 2p to 2, p to 1 (2 -> 3 last); 5 ring steps
        case(
            6,
            "bcast",
            6.0 * 131072.0,
            &["bcast:scatter_LR_allgather"],
            2.0 * t(2.0 * 131072.0) + 6.0 * t(131072.0),
            "2 t(2p) + t(p) + 5 t(p)",
        ),
        // chain of 4 with 128 KiB segments (S = 4 MiB: 32 segments): (32 + 2) segment times
        case(
            4,
            "bcast",
            4.0 * m,
            &["bcast:ompi_pipeline"],
            34.0 * t(seg128),
            "(32 + 4 - 2) t(128 KiB)",
        ),
        case(
            8,
            "bcast",
            4.0 * m,
            &["bcast:ompi_pipeline"],
            38.0 * t(seg128),
            "(32 + 8 - 2) t(128 KiB)",
        ),
        // ompi selector, 4 ranks, >= 1 MiB: chain -> ompi_pipeline
        case(
            4,
            "bcast",
            4.0 * m,
            &["coll-selector:ompi"],
            34.0 * t(seg128),
            "ompi: pipeline, 34 t(128 KiB)",
        ),
        // mpich selector, <= 8 ranks: binomial
        case(
            4,
            "bcast",
            m,
            &["coll-selector:mpich"],
            2.0 * t(m),
            "mpich: binomial, 2 t(S)",
        ),
        // one 8 KiB segment (detached) down a chain: 3 hops
        case(4, "bcast", 8192.0, &["bcast:NTSL"], 3.0 * t(8192.0), "3 t(S)"),
        // binary tree: root -> 1, 2 together (detached), then 1 -> 3
        case(
            4,
            "bcast",
            8192.0,
            &["bcast:NTSB"],
            sh(2.0, 8192.0) + t(8192.0),
            "sh(2, S) + t(S)",
        ),
    ]);
}

#[test]
fn reduce_times() {
    let m = MIB;
    let seg64 = 65536.0;
    let mut cases = vec![
        // 3 isends into the root's link
        case(4, "reduce", m, &[], sh(3.0, m), "default: sh(3, S)"),
        // blocking receives from 3, 2, 1 in turn
        case(
            4,
            "reduce",
            m,
            &["reduce:ompi_basic_linear"],
            3.0 * t(m),
            "3 t(S)",
        ),
        case(4, "reduce", m, &["reduce:flat_tree"], 3.0 * t(m), "3 t(S)"),
        // 1 -> 0 | 3 -> 2, then 2 -> 0
        case(4, "reduce", m, &["reduce:binomial"], 2.0 * t(m), "2 t(S)"),
        case(4, "reduce", m, &["reduce:ompi_binomial"], 2.0 * t(m), "2 t(S)"),
        // recursive halving (S/2, S/4), binomial gather (S/4, S/2)
        case(
            4,
            "reduce",
            m,
            &["reduce:scatter_gather"],
            2.0 * t(m / 2.0) + 2.0 * t(m / 4.0),
            "2 t(S/2) + 2 t(S/4)",
        ),
        // 6 ranks: 1 -> 0, 3 -> 2 first
        case(
            6,
            "reduce",
            m,
            &["reduce:scatter_gather"],
            t(m) + 2.0 * t(m / 2.0) + 2.0 * t(m / 4.0),
            "t(S) + 2 t(S/2) + 2 t(S/4)",
        ),
        // chain 3 -> 2 -> 1 -> 0 with 64 KiB segments (16): (16 + 2) segment times
        case(
            4,
            "reduce",
            m,
            &["reduce:ompi_pipeline"],
            18.0 * t(seg64),
            "(16 + 4 - 2) t(64 KiB)",
        ),
        // 3 ranks: chain fanout 3/2 = 1, 64 KiB segments
        case(
            3,
            "reduce",
            m,
            &["reduce:ompi_chain"],
            17.0 * t(seg64),
            "(16 + 3 - 2) t(64 KiB)",
        ),
        // in-order binary tree rooted at 3: 2 -> 3 | 0 -> 1, then 1 -> 3, then 3 -> root 0
        case(
            4,
            "reduce",
            m,
            &["reduce:ompi_in_order_binary"],
            3.0 * t(m),
            "3 t(S)",
        ),
        // selectors: ompi 4 ranks, 1 MiB -> linear; mpich -> scatter_gather
        case(
            4,
            "reduce",
            m,
            &["coll-selector:ompi"],
            3.0 * t(m),
            "ompi: linear, 3 t(S)",
        ),
        case(
            4,
            "reduce",
            m,
            &["coll-selector:mpich"],
            2.0 * t(m / 2.0) + 2.0 * t(m / 4.0),
            "mpich: scatter_gather",
        ),
    ];
    // 6 ranks, root 1 (an excluded odd rank): as in SMPI, the root takes rank 0's place in the
    // gather (rank 0 sends it its own quarter too), and nothing is forwarded afterwards
    // (`coll_smpi_parity` checks SMPI's times)
    let mut c = case(
        6,
        "reduce",
        m,
        &["reduce:scatter_gather"],
        t(m) + 2.0 * t(m / 2.0) + 3.0 * t(m / 4.0),
        "t(S) + 2 t(S/2) + 2 t(S/4) + t(S/4): the root gathers in rank 0's place",
    );
    c.root = 1;
    cases.push(c);
    check(&cases);
}

#[test]
fn allreduce_times() {
    let m = MIB;
    check(&[
        // default reduce (3 isends into rank 0) + binomial bcast
        case(
            4,
            "allreduce",
            m,
            &[],
            sh(3.0, m) + 2.0 * t(m),
            "sh(3, S) + 2 t(S)",
        ),
        case(
            4,
            "allreduce",
            m,
            &["allreduce:redbcast"],
            sh(3.0, m) + 2.0 * t(m),
            "sh(3, S) + 2 t(S)",
        ),
        // 2 full exchanges
        case(4, "allreduce", m, &["allreduce:rdb"], 2.0 * t(m), "2 t(S)"),
        // 6 ranks: fold-in, 2 exchanges, result back
        case(6, "allreduce", m, &["allreduce:rdb"], 4.0 * t(m), "4 t(S)"),
        // 3 + 3 ring steps of S/4
        case(4, "allreduce", m, &["allreduce:lr"], 6.0 * t(m / 4.0), "6 t(S/4)"),
        // count 4k+1: the leftover element goes through the default allreduce
        // (3 detached 4-byte sends into 0, then a binomial bcast whose first two sends leave together)
        case(
            4,
            "allreduce",
            4.0 * 262145.0,
            &["allreduce:lr"],
            6.0 * t(262144.0) + sh(3.0, 4.0) + sh(2.0, 4.0) + t(4.0),
            "6 t(S/4) + sh(3,4) + sh(2,4) + t(4)",
        ),
        // halving S/2, S/4; doubling S/4, S/2
        case(
            4,
            "allreduce",
            m,
            &["allreduce:rab_rdb"],
            2.0 * t(m / 2.0) + 2.0 * t(m / 4.0),
            "2 t(S/2) + 2 t(S/4)",
        ),
        case(
            6,
            "allreduce",
            m,
            &["allreduce:rab_rdb"],
            2.0 * t(m) + 2.0 * t(m / 2.0) + 2.0 * t(m / 4.0),
            "t(S) + 2 t(S/2) + 2 t(S/4) + t(S)",
        ),
        // one phase: 3 + 3 ring steps of S/4
        case(
            4,
            "allreduce",
            m,
            &["allreduce:ompi_ring_segmented"],
            6.0 * t(m / 4.0),
            "6 t(S/4)",
        ),
        // S = 8 MiB: 2 MiB blocks in 2 phases of 1 MiB: 2 x 3 steps of 1 MiB, 3 allgather steps of 2 MiB
        case(
            4,
            "allreduce",
            8.0 * m,
            &["allreduce:ompi_ring_segmented"],
            6.0 * t(m) + 3.0 * t(2.0 * m),
            "6 t(1 MiB) + 3 t(2 MiB)",
        ),
        // ompi selector, 4 ranks, >= 256 KiB, commutative: rabenseifner
        case(
            4,
            "allreduce",
            m,
            &["coll-selector:ompi"],
            2.0 * t(m / 2.0) + 2.0 * t(m / 4.0),
            "ompi: rab_rdb",
        ),
        case(
            4,
            "allreduce",
            m,
            &["coll-selector:mpich"],
            2.0 * t(m / 2.0) + 2.0 * t(m / 4.0),
            "mpich: rab_rdb",
        ),
    ]);
}

#[test]
fn gather_scatter_times() {
    let s = KIB256;
    check(&[
        // 3 isends into the root's link
        case(4, "gather", s, &[], sh(3.0, s), "default: sh(3, S)"),
        case(4, "scatter", s, &[], sh(3.0, s), "default: sh(3, S)"),
        case(
            4,
            "scatter",
            s,
            &["scatter:ompi_linear_nb"],
            sh(3.0, s),
            "sh(3, S)",
        ),
    ]);
}

/// Forced gather / scatter algorithms. MPI_Gather and MPI_Scatter reach them
/// only when `abi.rs` calls `coll::gather` / `coll::scatter` (not
/// `coll::gatherv` / `coll::scatterv`): this test fails until then.
#[test]
fn gather_scatter_forced_times() {
    let s = KIB256;
    check(&[
        // blocking receives from 1, 2, 3 in turn
        case(
            4,
            "gather",
            s,
            &["gather:ompi_basic_linear"],
            3.0 * t(s),
            "3 t(S)",
        ),
        // 1 -> 0 | 3 -> 2, then 2 -> 0 (2S)
        case(
            4,
            "gather",
            s,
            &["gather:ompi_binomial"],
            t(s) + t(2.0 * s),
            "t(S) + t(2S)",
        ),
        case(
            8,
            "gather",
            s,
            &["gather:ompi_binomial"],
            t(s) + t(2.0 * s) + t(4.0 * s),
            "t(S) + t(2S) + t(4S)",
        ),
        // ompi selector, 4 ranks, 128 KiB blocks: linear
        case(
            4,
            "gather",
            s / 2.0,
            &["coll-selector:ompi"],
            3.0 * t(s / 2.0),
            "ompi: linear, 3 t(S)",
        ),
        case(
            4,
            "scatter",
            s,
            &["scatter:ompi_basic_linear"],
            3.0 * t(s),
            "3 t(S)",
        ),
        // children by increasing distance: root -> 1 (S), root -> 2 (2S), then 2 -> 3 (S)
        case(
            4,
            "scatter",
            s,
            &["scatter:ompi_binomial"],
            2.0 * t(s) + t(2.0 * s),
            "t(S) + t(2S) + t(S)",
        ),
        // root -> 1, 2, 4 (S, 2S, 4S); then 4 -> 5 (S), 4 -> 6 (2S), 6 -> 7 (S)
        case(
            8,
            "scatter",
            s,
            &["scatter:ompi_binomial"],
            3.0 * t(s) + 2.0 * t(2.0 * s) + t(4.0 * s),
            "t(S) + t(2S) + t(4S) + t(S) + t(2S) + t(S)",
        ),
        // ompi selector, 4 ranks, 256 KiB: linear_nb (3 isends from the root)
        case(
            4,
            "scatter",
            s,
            &["coll-selector:ompi"],
            sh(3.0, s),
            "ompi: linear_nb, sh(3, S)",
        ),
    ]);
}

#[test]
fn allgather_times() {
    let s = KIB256;
    check(&[
        case(4, "allgather", s, &[], sh(3.0, s), "default: sh(3, S) both ways"),
        // default gather into 0, then binomial bcast of nS
        case(
            4,
            "allgather",
            s,
            &["allgather:GB"],
            sh(3.0, s) + 2.0 * t(4.0 * s),
            "sh(3, S) + 2 t(4S)",
        ),
        case(
            8,
            "allgather",
            s,
            &["allgather:GB"],
            sh(7.0, s) + 3.0 * t(8.0 * s),
            "sh(7, S) + 3 t(8S)",
        ),
        // n - 1 exchanges of one block
        case(4, "allgather", s, &["allgather:ring"], 3.0 * t(s), "3 t(S)"),
        case(8, "allgather", s, &["allgather:ring"], 7.0 * t(s), "7 t(S)"),
        case(4, "allgather", s, &["allgather:pair"], 3.0 * t(s), "3 t(S)"),
        case(4, "allgather", s, &["allgather:NTSLR"], 3.0 * t(s), "3 t(S)"),
        // doubling blocks
        case(
            4,
            "allgather",
            s,
            &["allgather:rdb"],
            t(s) + t(2.0 * s),
            "t(S) + t(2S)",
        ),
        case(
            8,
            "allgather",
            s,
            &["allgather:rdb"],
            t(s) + t(2.0 * s) + t(4.0 * s),
            "t(S) + t(2S) + t(4S)",
        ),
        case(
            8,
            "allgather",
            s,
            &["allgather:bruck"],
            t(s) + t(2.0 * s) + t(4.0 * s),
            "t(S) + t(2S) + t(4S)",
        ),
        // 6 ranks: 1, 2, then min(4, 2) = 2 blocks
        case(
            6,
            "allgather",
            s,
            &["allgather:bruck"],
            t(s) + 2.0 * t(2.0 * s),
            "t(S) + 2 t(2S)",
        ),
        // one block, then n/2 - 1 exchanges of two blocks
        case(
            6,
            "allgather",
            s,
            &["allgather:ompi_neighborexchange"],
            t(s) + 2.0 * t(2.0 * s),
            "t(S) + 2 t(2S)",
        ),
        // odd size: ring
        case(
            5,
            "allgather",
            s,
            &["allgather:ompi_neighborexchange"],
            4.0 * t(s),
            "4 t(S)",
        ),
        // selectors, 4 ranks, 256 KiB blocks: ompi -> rdb; mpich (1 MiB in total) -> ring
        case(
            4,
            "allgather",
            s,
            &["coll-selector:ompi"],
            t(s) + t(2.0 * s),
            "ompi: rdb",
        ),
        case(
            4,
            "allgather",
            s,
            &["coll-selector:mpich"],
            3.0 * t(s),
            "mpich: ring",
        ),
        // allgatherv (coll_time uses irregular displacements)
        case(4, "allgatherv", s, &[], sh(3.0, s), "default: sh(3, S) both ways"),
        case(4, "allgatherv", s, &["allgatherv:ring"], 3.0 * t(s), "3 t(S)"),
        case(
            4,
            "allgatherv",
            s,
            &["allgatherv:mpich_ring"],
            3.0 * t(s),
            "3 t(S)",
        ),
        case(
            4,
            "allgatherv",
            s,
            &["allgatherv:GB"],
            sh(3.0, s) + 2.0 * t(4.0 * s),
            "sh(3, S) + 2 t(4S)",
        ),
        case(
            8,
            "allgatherv",
            s,
            &["allgatherv:ompi_bruck"],
            t(s) + t(2.0 * s) + t(4.0 * s),
            "t(S) + t(2S) + t(4S)",
        ),
    ]);
}

#[test]
fn alltoall_times() {
    let s = KIB256;
    check(&[
        // ompi decision for 4 ranks, 256 KiB blocks: linear; every link carries 3 flows
        case(
            4,
            "alltoall",
            s,
            &[],
            sh(3.0, s),
            "default (ompi: linear): sh(3, S)",
        ),
        case(
            4,
            "alltoall",
            s,
            &["alltoall:basic_linear"],
            sh(3.0, s),
            "sh(3, S)",
        ),
        // 4 peers at a time, the message to myself included: 4 flows per link
        case(
            4,
            "alltoall",
            s,
            &["alltoall:mvapich2_scatter_dest"],
            sh(4.0, s),
            "sh(4, S)",
        ),
        case(4, "alltoall", s, &["alltoall:pair"], 3.0 * t(s), "3 t(S)"),
        case(4, "alltoall", s, &["alltoall:ring"], 3.0 * t(s), "3 t(S)"),
        // not a power of two: ring
        case(5, "alltoall", s, &["alltoall:pair"], 4.0 * t(s), "4 t(S)"),
        // log2 n exchanges of n/2 blocks
        case(4, "alltoall", s, &["alltoall:bruck"], 2.0 * t(2.0 * s), "2 t(2S)"),
        case(8, "alltoall", s, &["alltoall:bruck"], 3.0 * t(4.0 * s), "3 t(4S)"),
        // 6 ranks: blocks {1,3,5}, {2,3}, {4,5}
        case(
            6,
            "alltoall",
            s,
            &["alltoall:bruck"],
            t(3.0 * s) + 2.0 * t(2.0 * s),
            "t(3S) + 2 t(2S)",
        ),
        case(
            4,
            "alltoall",
            s,
            &["coll-selector:ompi"],
            sh(3.0, s),
            "ompi: linear",
        ),
        case(
            4,
            "alltoall",
            s,
            &["coll-selector:mpich"],
            3.0 * t(s),
            "mpich: pair",
        ),
        case(4, "alltoallv", s, &[], sh(3.0, s), "default: sh(3, S)"),
        case(
            4,
            "alltoallv",
            s,
            &["alltoallv:ompi_basic_linear"],
            sh(3.0, s),
            "sh(3, S)",
        ),
        case(4, "alltoallv", s, &["alltoallv:pair"], 3.0 * t(s), "3 t(S)"),
        case(4, "alltoallv", s, &["alltoallv:ring"], 3.0 * t(s), "3 t(S)"),
        case(
            4,
            "alltoallv",
            s,
            &["coll-selector:ompi"],
            sh(3.0, s),
            "ompi: basic_linear",
        ),
    ]);
}

#[test]
fn reduce_scatter_times() {
    let s = KIB256;
    check(&[
        // default reduce of nS into 0, then 3 isends of S from 0
        case(
            4,
            "reduce_scatter",
            s,
            &[],
            sh(3.0, 4.0 * s) + sh(3.0, s),
            "sh(3, 4S) + sh(3, S)",
        ),
        // halving: 2S, then S
        case(
            4,
            "reduce_scatter",
            s,
            &["reduce_scatter:ompi_basic_recursivehalving"],
            t(2.0 * s) + t(s),
            "t(2S) + t(S)",
        ),
        // 6 ranks: 0, 2 hand 6S to 1, 3; halving 4S, 2S; 1, 3 send S back to 0, 2
        case(
            6,
            "reduce_scatter",
            s,
            &["reduce_scatter:ompi_basic_recursivehalving"],
            t(6.0 * s) + t(4.0 * s) + t(2.0 * s) + t(s),
            "t(6S) + t(4S) + t(2S) + t(S)",
        ),
        // n - 1 ring steps
        case(
            4,
            "reduce_scatter",
            s,
            &["reduce_scatter:ompi_ring"],
            3.0 * t(s),
            "3 t(S)",
        ),
        case(
            8,
            "reduce_scatter",
            s,
            &["reduce_scatter:ompi_ring"],
            7.0 * t(s),
            "7 t(S)",
        ),
        case(
            4,
            "reduce_scatter",
            s,
            &["reduce_scatter:mpich_pair"],
            3.0 * t(s),
            "3 t(S)",
        ),
        case(
            4,
            "reduce_scatter",
            s,
            &["reduce_scatter:mpich_noncomm"],
            t(2.0 * s) + t(s),
            "t(2S) + t(S)",
        ),
        // selectors, 4 ranks, 1 MiB in total: ompi -> ring; mpich -> recursive
        // doubling (SMPI's mpich selector counts elements: 262144 ints < 524288),
        // which sends everything outside the own block (3S), then outside the pair (2S)
        case(
            4,
            "reduce_scatter",
            s,
            &["coll-selector:ompi"],
            3.0 * t(s),
            "ompi: ring",
        ),
        case(
            4,
            "reduce_scatter",
            s,
            &["coll-selector:mpich"],
            t(3.0 * s) + t(2.0 * s),
            "mpich: rdb, t(3S) + t(2S)",
        ),
        case(
            4,
            "reduce_scatter",
            s,
            &["reduce_scatter:mpich_rdb"],
            t(3.0 * s) + t(2.0 * s),
            "t(3S) + t(2S)",
        ),
    ]);
}
