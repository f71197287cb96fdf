//! Process topologies and neighbourhood collectives (`apps/topo/neighbors.c`):
//! the data lands in the right slots on Cartesian, graph and distributed
//! graph communicators, and a Cartesian neighbour exchange takes the time the
//! network model gives.

use std::path::PathBuf;
use std::sync::OnceLock;

use e2e_tests::{apps_dir, build_c, field_f64, platform, write_scratch, Smpirun};

fn neighbors_app() -> PathBuf {
    build_c(&apps_dir().join("topo/neighbors.c"))
}

/// 1 and 2 ranks make periodic dimensions of size 1 and 2, where both
/// neighbours of a dimension are the same rank; 7 ranks wrap around 4 hosts.
#[test]
fn neighborhood_collectives_deliver_the_right_slots() {
    let prog = neighbors_app();
    for np in [1, 2, 3, 4, 7] {
        Smpirun::new(&prog)
            .platform(platform("cluster_4.toml"))
            .np(np)
            .cfg("smpi/simulate-computation:no")
            .args(["1000"])
            .run()
            .assert_ok();
    }
}

const L: f64 = 10e-6;
const B: f64 = 1e9;

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

/// On a periodic ring every rank sends S bytes to each of its 2 neighbours
/// and receives 2 messages, all posted at once: each host's outgoing link
/// carries 2 flows, and so does its incoming link, so every message gets B/2
/// and the exchange takes `2L + 2 (S + 16) / B` (16 bytes of envelope; model
/// CM02, no cross-traffic, as in `coll_timing.rs`). Holds for eager and
/// rendezvous sizes alike, since every receive is posted at the start.
#[test]
fn cartesian_neighbor_exchange_time() {
    let prog = neighbors_app();
    let mut bad = Vec::new();
    for np in [2, 4, 8] {
        for bytes in [0.0, 1024.0, 1048576.0] {
            let out = Smpirun::new(&prog)
                .platform(star())
                .np(np)
                .cfg("network/model:CM02")
                .cfg("network/crosstraffic:0")
                .cfg("smpi/simulate-computation:no")
                .cfg("smpi/wtime:0")
                .args([format!("{}", bytes as u64)])
                .run();
            out.assert_ok();
            let times: Vec<f64> = out
                .lines_starting_with("time ")
                .map(|l| field_f64(l, "t"))
                .collect();
            assert_eq!(times.len(), np, "one time per rank\n{}", out.describe());
            let expected = 2.0 * L + 2.0 * (bytes + 16.0) / B;
            for (rank, t) in times.iter().enumerate() {
                if (t - expected).abs() / expected > 1e-6 {
                    bad.push(format!(
                        "np={np} S={bytes}: rank {rank} took {t:.9e} s, expected 2L + 2(S+16)/B = {expected:.9e} s"
                    ));
                }
            }
        }
    }
    assert!(bad.is_empty(), "timing mismatches:\n{}", bad.join("\n"));
}
