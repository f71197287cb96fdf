//! SimGrid platforms of several zones give SMPI 3.32's simulated times.
//!
//! A program of ours exchanges messages between every pair of ranks in turn (a ping-pong of a
//! small and of a large message, then a barrier) and prints each round-trip time. It is built with
//! our smpicc and with SMPI's, and run on the same platform with the same hostfile (one rank per
//! host, hosts taken from different zones) with `smpi/simulate-computation:no`; every printed
//! time must agree within 1e-9 (relative).
//!
//! Platforms: small ones written here, each exercising one feature (zone routes through
//! gateways across Full, Floyd, Dijkstra, cluster, cabinet and `routing="None"` zones; bypass
//! routes; Vivaldi coordinates and peers), and SimGrid's own examples read from the SimGrid 3.32 source tree
//! (`tests/simgrid_examples/fetch.sh`, or `/tmp/sgsrc/simgrid-3.32`) when it is there. Each part is skipped with a
//! message when SMPI 3.32 or the source tree is absent.
//!
//! Hosts with coordinates and no `<peer>` links in a Vivaldi zone (SimGrid's `vivaldi.xml`):
//! their messages cross no link, and end once the distance's latency is paid, as in SimGrid.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use e2e_tests::{build_c, run_command, scratch_path, write_scratch, RunOutput, Smpirun};

/// Every pair of ranks (i < j), in turn: i sends `bytes` to j and j sends them back, for a small
/// and a large size; i prints `pair i j bytes rtt`.
const PAIRS_C: &str = r#"
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
  int rank, np;
  const int sizes[2] = {8, 1 << 20};
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  char *buf = calloc(1 << 20, 1);
  for (int i = 0; i < np; i++)
    for (int j = i + 1; j < np; j++)
      for (int s = 0; s < 2; s++) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == i) {
          double t0 = MPI_Wtime();
          MPI_Send(buf, sizes[s], MPI_CHAR, j, 0, MPI_COMM_WORLD);
          MPI_Recv(buf, sizes[s], MPI_CHAR, j, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
          printf("pair %d %d bytes=%d rtt=%.17g\n", i, j, sizes[s], MPI_Wtime() - t0);
        } else if (rank == j) {
          MPI_Recv(buf, sizes[s], MPI_CHAR, i, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
          MPI_Send(buf, sizes[s], MPI_CHAR, i, 0, MPI_COMM_WORLD);
        }
      }
  free(buf);
  MPI_Finalize();
  return 0;
}
"#;

/// Zone routes through gateways: a Floyd root over a Full zone, a Dijkstra zone (crossed from
/// one gateway to another), a FLAT cluster with a backbone, a hand-made cluster of cabinets, and
/// a `routing="None"` zone reached through its only host; SPLITDUPLEX links in both directions.
const ZONES: &str = r#"<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="world" routing="Floyd">
    <zone id="A" routing="Full">
      <host id="a1" speed="1Gf"/>
      <host id="a2" speed="1Gf"/>
      <router id="a_gw"/>
      <link id="a1_l" bandwidth="1GBps" latency="10us"/>
      <link id="a2_l" bandwidth="500MBps" latency="20us" sharing_policy="SPLITDUPLEX"/>
      <route src="a1" dst="a2"><link_ctn id="a1_l"/><link_ctn id="a2_l" direction="DOWN"/></route>
      <route src="a1" dst="a_gw"><link_ctn id="a1_l"/></route>
      <route src="a2" dst="a_gw"><link_ctn id="a2_l" direction="UP"/></route>
    </zone>
    <zone id="B" routing="Dijkstra">
      <host id="b1" speed="1Gf"/>
      <router id="b_in"/>
      <router id="b_mid"/>
      <router id="b_out"/>
      <link id="b1_l" bandwidth="200MBps" latency="7us"/>
      <link id="b_x" bandwidth="2GBps" latency="3us"/>
      <link id="b_y" bandwidth="2GBps" latency="4us"/>
      <route src="b1" dst="b_mid"><link_ctn id="b1_l"/></route>
      <route src="b_in" dst="b_mid"><link_ctn id="b_x"/></route>
      <route src="b_mid" dst="b_out"><link_ctn id="b_y"/></route>
    </zone>
    <cluster id="C" prefix="c" suffix="" radical="1-2" speed="1Gf" bw="125MBps" lat="50us"
             bb_bw="1GBps" bb_lat="5us" router_id="c_gw"/>
    <zone id="D" routing="Cluster">
      <router id="d_gw"/>
      <cabinet id="cab" prefix="d" suffix="" radical="1-2" speed="1Gf" bw="125MBps" lat="30us"/>
      <backbone id="d_bb" bandwidth="2GBps" latency="3us"/>
    </zone>
    <zone id="E" routing="None">
      <host id="e1" speed="1Gf"/>
    </zone>
    <link id="wan_ab" bandwidth="100MBps" latency="1ms"/>
    <link id="wan_bc" bandwidth="80MBps" latency="2ms"/>
    <link id="wan_bd" bandwidth="60MBps" latency="3ms" sharing_policy="FATPIPE"/>
    <link id="wan_ce" bandwidth="10MBps" latency="5ms"/>
    <zoneRoute src="A" dst="B" gw_src="a_gw" gw_dst="b_in"><link_ctn id="wan_ab"/></zoneRoute>
    <zoneRoute src="B" dst="C" gw_src="b_out" gw_dst="c_gw"><link_ctn id="wan_bc"/></zoneRoute>
    <zoneRoute src="B" dst="D" gw_src="b_out" gw_dst="d_gw"><link_ctn id="wan_bd"/></zoneRoute>
    <zoneRoute src="C" dst="E" gw_src="c_gw" gw_dst="e1"><link_ctn id="wan_ce"/></zoneRoute>
  </zone>
</platform>
"#;

/// Bypass routes: `<bypassRoute>` between two hosts of a Floyd zone (one way only), and
/// `<bypassZoneRoute>` from a zone to a zone nested one level deeper, next to the zone routes
/// they replace.
const BYPASS: &str = r#"<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="world" routing="Full">
    <zone id="A" routing="Floyd">
      <host id="a1" speed="1Gf"/>
      <host id="a2" speed="1Gf"/>
      <router id="a_gw"/>
      <link id="a1_l" bandwidth="1GBps" latency="10us"/>
      <link id="a2_l" bandwidth="1GBps" latency="10us"/>
      <link id="a_fast" bandwidth="4GBps" latency="1us"/>
      <route src="a1" dst="a_gw"><link_ctn id="a1_l"/></route>
      <route src="a2" dst="a_gw"><link_ctn id="a2_l"/></route>
      <bypassRoute src="a1" dst="a2"><link_ctn id="a_fast"/></bypassRoute>
    </zone>
    <zone id="outer" routing="Full">
      <zone id="B" routing="Full">
        <host id="b1" speed="1Gf"/>
        <router id="b_gw"/>
        <link id="b1_l" bandwidth="300MBps" latency="20us"/>
        <route src="b1" dst="b_gw"><link_ctn id="b1_l"/></route>
      </zone>
    </zone>
    <zone id="C" routing="Full">
      <host id="c1" speed="1Gf"/>
      <router id="c_gw"/>
      <link id="c1_l" bandwidth="300MBps" latency="30us"/>
      <route src="c1" dst="c_gw"><link_ctn id="c1_l"/></route>
    </zone>
    <link id="wan_ab" bandwidth="100MBps" latency="1ms"/>
    <link id="wan_ac" bandwidth="100MBps" latency="2ms"/>
    <link id="wan_bc" bandwidth="100MBps" latency="3ms"/>
    <link id="short_ab" bandwidth="50MBps" latency="100us"/>
    <zoneRoute src="A" dst="outer" gw_src="a_gw" gw_dst="b_gw"><link_ctn id="wan_ab"/></zoneRoute>
    <zoneRoute src="A" dst="C" gw_src="a_gw" gw_dst="c_gw"><link_ctn id="wan_ac"/></zoneRoute>
    <zoneRoute src="outer" dst="C" gw_src="b_gw" gw_dst="c_gw"><link_ctn id="wan_bc"/></zoneRoute>
    <bypassZoneRoute src="A" dst="B" gw_src="a_gw" gw_dst="b_gw"><link_ctn id="short_ab"/></bypassZoneRoute>
  </zone>
</platform>
"#;

/// A Full zone where some host pairs have no route (SimGrid's dogbone.xml): usable as long as
/// no message takes a missing route.
const PARTIAL: &str = r#"<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="AS0" routing="Full">
    <host id="S1" speed="1Gf"/>
    <host id="C1" speed="1Gf"/>
    <host id="S2" speed="1Gf"/>
    <link id="1" bandwidth="100MBps" latency="10ms"/>
    <link id="2" bandwidth="100MBps" latency="10ms"/>
    <route src="S1" dst="C1"><link_ctn id="1"/><link_ctn id="2"/></route>
    <route src="S2" dst="C1"><link_ctn id="2"/></route>
  </zone>
</platform>
"#;

/// A Vivaldi zone of peers (SimGrid's DTD does not mix peers and hosts in a zone).
const VIVALDI: &str = r#"<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="AS0" routing="Vivaldi">
    <peer id="p1" coordinates="25.5 9.4 1.4" speed="1Gf" bw_in="100MBps" bw_out="50MBps"/>
    <peer id="p2" coordinates="-12.7 -9.9 2.1" speed="1Gf" bw_in="80MBps" bw_out="40MBps"/>
    <peer id="p3" coordinates="3 4 0.5" speed="1Gf" bw_in="1GBps" bw_out="1GBps"/>
    <peer id="p4" coordinates="-30 12 7" speed="1Gf" bw_in="20MBps" bw_out="200MBps"/>
  </zone>
</platform>
"#;

/// Where SimGrid 3.32's example platforms are, when its source tree is there.
/// SimGrid 3.32's example platforms (see [`e2e_tests::simgrid_examples`]).
fn simgrid_platforms_dir() -> PathBuf {
    e2e_tests::simgrid_examples().join("platforms")
}

/// SimGrid's examples that load now, with hosts from different zones (every pair routed).
const EXAMPLES: &[(&str, &[&str])] = &[
    (
        "cluster_multi.xml",
        &[
            "node-0.1core.org",
            "node-1.2cores.org",
            "node-2.4cores.org",
            "node-3.1core.org",
        ],
    ),
    (
        "griffon.xml",
        &[
            "griffon-1.nancy.grid5000.fr",
            "griffon-30.nancy.grid5000.fr",
            "griffon-61.nancy.grid5000.fr",
        ],
    ),
    (
        "g5k.xml",
        &[
            "bordeplage-1.bordeaux.grid5000.fr",
            "bordereau-3.bordeaux.grid5000.fr",
            "chicon-1.lille.grid5000.fr",
            "graphene-50.nancy.grid5000.fr",
            "gdx-200.orsay.grid5000.fr",
            "graphene-4.nancy.grid5000.fr",
            "sol-2.sophia.grid5000.fr",
            "paradent-1.rennes.grid5000.fr",
        ],
    ),
    (
        "bypassRoute.xml",
        &["AS_1_host1", "AS_2_host1", "AS_2_host2", "AS_2_host3"],
    ),
    ("bypassZoneRoute.xml", &["1", "2", "3"]),
    ("routing_cluster.xml", &["host1", "host4", "host2", "host6"]),
    (
        "meta_cluster.xml",
        &[
            "host-1.cluster1",
            "host-12.cluster2",
            "host-25.cluster1",
            "host-30.cluster2",
        ],
    ),
    ("cluster_and_one_host.xml", &["c-0.me", "host1", "c-1.me"]),
    ("prop.xml", &["host1", "host2"]),
    ("dogbone.xml", &["S1", "C1"]),
    ("small_platform_fatpipe.xml", &["Tremblay", "Ruby", "Perl"]),
    ("ptask_L07.xml", &["cpu0", "cpu1", "cpu2"]),
    ("model_checker_platform.xml", &["HostA", "HostB"]),
    ("two_peers.xml", &["100030591", "100036570"]),
    (
        "data_center.xml",
        &[
            "cb1-1.dc1.acloud.com",
            "cb2-3.dc1.acloud.com",
            "cb3-30.dc1.acloud.com",
        ],
    ),
    ("cloud.xml", &["cb1-1.dc2.acloud.com", "cb2-3.dc2.acloud.com"]),
    (
        "vivaldi.xml",
        &["100030591", "100036570", "100041334", "100055671"],
    ),
    // Hosts with pstates (energy_boot.xml's boot and shutdown pstates have speed 0).
    ("energy_platform.xml", &["MyHost1", "MyHost2", "MyHost3"]),
    ("energy_boot.xml", &["MyHost1", "MyHost2"]),
];

/// The pairs program built with SMPI 3.32's smpicc, or `None` (with a message).
fn smpi_pairs() -> Option<&'static Path> {
    static S: OnceLock<Option<PathBuf>> = OnceLock::new();
    S.get_or_init(|| {
        let version = Command::new("smpirun").arg("-version").output().ok();
        let text = version.map_or(String::new(), |v| {
            String::from_utf8_lossy(&v.stdout).to_string() + &String::from_utf8_lossy(&v.stderr)
        });
        if !text.contains("3.32") {
            eprintln!("skipped: SimGrid SMPI 3.32 (smpirun, smpicc) not installed");
            return None;
        }
        let source = write_scratch("zone_pairs.c", PAIRS_C);
        let out = scratch_path("zone_pairs_smpi");
        let mut cc = Command::new("smpicc");
        cc.arg("-O2").arg(&source).arg("-o").arg(&out);
        let r = run_command(cc, Duration::from_secs(120));
        if r.code != Some(0) {
            eprintln!("skipped: SMPI's smpicc failed\n{}", r.describe());
            return None;
        }
        Some(out)
    })
    .as_deref()
}

/// The `pair` lines of a run, as (line without the time, time).
fn pair_times(out: &RunOutput) -> Vec<(String, f64)> {
    let mut v: Vec<(String, f64)> = out
        .stdout
        .lines()
        .filter(|l| l.starts_with("pair "))
        .filter_map(|l| {
            let (head, t) = l.rsplit_once(" rtt=")?;
            Some((head.to_string(), t.trim().parse().ok()?))
        })
        .collect();
    v.sort_by(|a, b| a.0.cmp(&b.0));
    v
}

/// Runs the pairs program on `platform` with one rank on each of `hosts`, with SMPI and with
/// ours, and asserts that every round-trip time agrees; returns the number compared.
fn compare(platform: &Path, hosts: &[&str]) -> usize {
    let Some(theirs_bin) = smpi_pairs() else { return 0 };
    let name = platform
        .file_stem()
        .map_or("p".into(), |s| s.to_string_lossy().to_string());
    let hostfile = write_scratch(&format!("{name}.hosts"), &(hosts.join("\n") + "\n"));
    let np = hosts.len();
    let mut cmd = Command::new("smpirun");
    cmd.current_dir(theirs_bin.parent().unwrap_or(Path::new(".")))
        .arg("-np")
        .arg(np.to_string())
        .arg("-platform")
        .arg(platform)
        .arg("-hostfile")
        .arg(&hostfile)
        .arg("--cfg=smpi/simulate-computation:no")
        .arg(theirs_bin);
    let theirs = run_command(cmd, Duration::from_secs(120));
    let ours = Smpirun::new(build_c(&write_scratch("zone_pairs.c", PAIRS_C)))
        .platform(platform)
        .hostfile(&hostfile)
        .np(np)
        .cfg("smpi/simulate-computation:no")
        .run();
    assert_eq!(
        theirs.code,
        Some(0),
        "SMPI failed on {}\n{}",
        platform.display(),
        theirs.describe()
    );
    assert_eq!(
        ours.code,
        Some(0),
        "we failed on {}\n{}",
        platform.display(),
        ours.describe()
    );
    let (a, b) = (pair_times(&theirs), pair_times(&ours));
    assert_eq!(a.len(), np * (np - 1), "SMPI printed\n{}", theirs.describe());
    assert_eq!(
        a.iter().map(|x| &x.0).collect::<Vec<_>>(),
        b.iter().map(|x| &x.0).collect::<Vec<_>>(),
        "{}",
        ours.describe()
    );
    let bad: Vec<String> = a
        .iter()
        .zip(&b)
        .filter(|((_, x), (_, y))| (x - y).abs() > 1e-9 * x.abs())
        .map(|((k, x), (_, y))| format!("{k}: SMPI {x:.12e} s, ours {y:.12e} s"))
        .collect();
    assert!(
        bad.is_empty(),
        "{}: times differ from SMPI 3.32:\n{}",
        platform.display(),
        bad.join("\n")
    );
    a.len()
}

#[test]
fn zone_routes_through_gateways_match_smpi() {
    let p = write_scratch("zones.xml", ZONES);
    compare(&p, &["a1", "b1", "c1", "d1", "e1", "a2", "c2", "d2"]);
}

#[test]
fn bypass_routes_match_smpi() {
    let p = write_scratch("bypass.xml", BYPASS);
    compare(&p, &["a1", "a2", "b1", "c1"]);
}

#[test]
fn vivaldi_zones_match_smpi() {
    let p = write_scratch("vivaldi.xml", VIVALDI);
    compare(&p, &["p1", "p2", "p3", "p4"]);
}

/// Hosts with coordinates but no `<peer>` link in a Vivaldi zone (as SimGrid's `vivaldi.xml`):
/// a message between two of them crosses no link and ends once its latency is paid (it was
/// bounded by the TCP window here before), SMPI's times, and no warning.
#[test]
fn hosts_without_peer_links_in_a_vivaldi_zone_match_smpi() {
    let lone = write_scratch(
        "vivaldi_hosts.xml",
        r#"<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="AS0" routing="Vivaldi">
    <host id="a" coordinates="25.5 9.4 1.4" speed="1Gf"/>
    <host id="b" coordinates="-12.7 -9.9 2.1" speed="1Gf"/>
    <host id="c" coordinates="3 4 0.5" speed="1Gf"/>
  </zone>
</platform>
"#,
    );
    compare(&lone, &["a", "b", "c"]);
    let prog = build_c(&write_scratch("zone_pairs.c", PAIRS_C));
    let out = Smpirun::new(&prog)
        .platform(&lone)
        .np(3)
        .cfg("smpi/simulate-computation:no")
        .run();
    out.assert_success();
    assert!(!out.stderr.contains("warning"), "{}", out.describe());
}

#[test]
fn unused_missing_routes_are_no_error() {
    let p = write_scratch("partial.xml", PARTIAL);
    compare(&p, &["S1", "C1"]);
    compare(&p, &["C1", "S2"]);
}

#[test]
fn a_missing_route_stops_the_run_naming_both_hosts() {
    let p = write_scratch("partial_missing.xml", PARTIAL);
    let hostfile = write_scratch("partial_missing.hosts", "S1\nS2\n");
    let out = Smpirun::new(build_c(&write_scratch("zone_pairs.c", PAIRS_C)))
        .platform(&p)
        .hostfile(&hostfile)
        .np(2)
        .cfg("smpi/simulate-computation:no")
        .run();
    assert_ne!(out.code, Some(0), "{}", out.describe());
    // The first message between them (a barrier's) goes from S2 to S1.
    assert!(
        out.stderr
            .contains("no route from `S2` to `S1`: the platform declares none"),
        "{}",
        out.describe()
    );
    // A clean end that names the rank which sent it, no panic.
    assert_eq!(out.code, Some(1), "{}", out.describe());
    assert!(out.stderr.contains("smpirun: error: rank"), "{}", out.describe());
    assert!(!out.stderr.contains("panicked"), "{}", out.describe());
}

#[test]
fn simgrid_example_platforms_match_smpi() {
    let dir = simgrid_platforms_dir();
    if !dir.is_dir() {
        eprintln!(
            "skipped: SimGrid 3.32's examples are not in {} (tests/simgrid_examples/fetch.sh)",
            simgrid_platforms_dir().display()
        );
        return;
    }
    for (file, hosts) in EXAMPLES {
        // Copied, so that the run never touches the source tree.
        let text = std::fs::read_to_string(dir.join(file)).expect("readable example platform");
        let p = write_scratch(&format!("sg_{file}"), &text);
        compare(&p, hosts);
    }
}
