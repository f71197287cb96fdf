//! Platform loading and routing: route shapes and SimGrid link names for each cluster topology,
//! TOML/XML equivalence, units, and the error reported for each kind of bad file.

use std::path::{Path, PathBuf};
use std::time::Instant;

use petgraph::visit::EdgeRef;
use simcore::platform::units::{parse_bandwidth, parse_size, parse_speed, parse_time, UnitError};
use simcore::platform::{
    HostId, LinkId, ModelLoopback, NetNode, Platform, PlatformError, PlatformErrorKind, PlatformFile,
    SharingPolicy,
};

fn platforms_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../platforms")
}

fn load(name: &str) -> Platform {
    let path = platforms_dir().join(name);
    Platform::from_file(&path).unwrap_or_else(|e| panic!("{e}"))
}

fn host(p: &Platform, name: &str) -> HostId {
    p.host_by_name(name).unwrap_or_else(|| panic!("no host {name}"))
}

/// Route between two hosts, as link names.
fn names(p: &Platform, src: &str, dst: &str) -> Vec<String> {
    p.route(host(p, src), host(p, dst))
        .iter()
        .map(|&l| p.link(l).name.clone())
        .collect()
}

/// Follows `route` through the graph from `src`; returns false if some link does not leave the
/// node reached so far. Limiter/loopback self-loops are allowed anywhere.
fn route_is_contiguous(p: &Platform, src: HostId, dst: HostId, route: &[LinkId]) -> bool {
    let node_of = |h: HostId| {
        p.graph
            .node_indices()
            .find(|&n| p.graph[n] == NetNode::Host(h))
            .expect("every host has a node")
    };
    let mut cur = node_of(src);
    for &l in route {
        match p.graph.edges(cur).find(|e| *e.weight() == l) {
            Some(e) => cur = e.target(),
            None => return false,
        }
    }
    cur == node_of(dst)
}

// ---------------------------------------------------------------------------------------------
// Units

#[test]
fn units_follow_simgrid() {
    assert_eq!(parse_bandwidth("10Gbps").unwrap(), 1.25e9);
    assert_eq!(parse_bandwidth("1.25GBps").unwrap(), 1.25e9);
    assert_eq!(parse_bandwidth("10GBps").unwrap(), 1e10);
    assert_eq!(parse_bandwidth("1KBps").unwrap(), 1e3);
    assert_eq!(parse_bandwidth("1kBps").unwrap(), 1e3);
    assert_eq!(parse_bandwidth("1KiBps").unwrap(), 1024.0);
    assert_eq!(parse_bandwidth("1MiBps").unwrap(), 1048576.0);
    assert_eq!(parse_bandwidth("8Mbps").unwrap(), 1e6);
    assert_eq!(parse_bandwidth("8Mibps").unwrap(), 1048576.0);
    assert_eq!(parse_bandwidth("1TBps").unwrap(), 1e12);
    assert_eq!(parse_bandwidth("125").unwrap(), 125.0);
    assert_eq!(parse_time("1us").unwrap(), 1e-6);
    assert_eq!(parse_time("1ps").unwrap(), 1e-12);
    assert_eq!(parse_time("3ms").unwrap(), 3e-3);
    assert_eq!(parse_time("1h").unwrap(), 3600.0);
    assert_eq!(parse_time("1w").unwrap(), 604800.0);
    assert_eq!(parse_time("0.5").unwrap(), 0.5);
    assert_eq!(parse_speed("1Gf").unwrap(), 1e9);
    assert_eq!(parse_speed("20kf").unwrap(), 2e4);
    assert_eq!(parse_speed("1Yf").unwrap(), 1e24);
    assert_eq!(parse_size("4KiB").unwrap(), 4096.0);
    assert_eq!(parse_size("1kB").unwrap(), 1000.0);
    let err = parse_bandwidth("10Gbs").unwrap_err();
    assert!(matches!(&err, UnitError::UnknownUnit { unit, .. } if unit == "Gbs"));
    assert!(err.to_string().contains("unknown bandwidth unit `Gbs`"), "{err}");
    assert!(matches!(
        parse_time("10 parsecs"),
        Err(UnitError::UnknownUnit { .. })
    ));
    assert!(matches!(parse_speed("fast"), Err(UnitError::NotANumber { .. })));
}

// ---------------------------------------------------------------------------------------------
// Fat trees

#[test]
fn fat_tree_64_shape() {
    let p = load("fat_tree_64.xml");
    assert_eq!(p.hosts.len(), 64);
    // 64 host cables + 8 leaves x 8 tops, each SPLITDUPLEX.
    assert_eq!(p.links.len(), 2 * (64 + 64));
    assert!(p.links.iter().all(|l| l.bandwidth == 1e10 && l.latency == 1e-6));
    assert_eq!(p.graph.node_count(), 64 + 16);
    assert_eq!(p.graph.edge_count(), 256);
    assert_eq!(p.host(HostId(0)).name, "node-0");
    assert_eq!(p.host(HostId(63)).name, "node-63");
    assert_eq!(p.host(HostId(7)).speed, 1e9);
}

#[test]
fn fat_tree_64_simgrid_link_names() {
    let p = load("fat_tree_64.xml");
    // Hosts are fat-tree nodes 0..63; leaf switches are 127..120, top switches 119..112.
    // Cables are numbered hosts first (0..63), then leaf j -> top k is 64 + 8j + k.
    assert_eq!(
        names(&p, "node-0", "node-1"),
        ["link_from_0_127_0_UP", "link_from_1_127_1_DOWN"]
    );
    // D-mod-K: leaf 0 goes up to top switch 63 mod 8 = 7 (id 112), then down to leaf 7 (id 120).
    assert_eq!(
        names(&p, "node-0", "node-63"),
        [
            "link_from_0_127_0_UP",
            "link_from_127_112_71_UP",
            "link_from_120_112_127_DOWN",
            "link_from_63_120_63_DOWN"
        ]
    );
    assert_eq!(
        names(&p, "node-63", "node-0"),
        [
            "link_from_63_120_63_UP",
            "link_from_120_119_120_UP",
            "link_from_127_119_64_DOWN",
            "link_from_0_127_0_DOWN"
        ]
    );
    assert_eq!(
        names(&p, "node-9", "node-18"),
        [
            "link_from_9_126_9_UP",
            "link_from_126_117_74_UP",
            "link_from_125_117_82_DOWN",
            "link_from_18_125_18_DOWN"
        ]
    );
    // No loopback in the cluster: up to the leaf switch and back.
    assert_eq!(
        names(&p, "node-5", "node-5"),
        ["link_from_5_127_5_UP", "link_from_5_127_5_DOWN"]
    );
    let r = p.route(host(&p, "node-0"), host(&p, "node-63"));
    assert!((p.route_latency(&r) - 4e-6).abs() < 1e-15);
}

#[test]
fn fat_tree_64_all_routes() {
    let p = load("fat_tree.toml");
    for s in 0..64u32 {
        for d in 0..64u32 {
            let route = p.route(HostId(s), HostId(d));
            let expected = if s / 8 == d / 8 { 2 } else { 4 };
            assert_eq!(route.len(), expected, "node-{s} -> node-{d}");
            assert!(
                route_is_contiguous(&p, HostId(s), HostId(d), &route),
                "node-{s} -> node-{d}"
            );
            if expected == 4 {
                // D-mod-K: the top switch is destination mod 8 (switch ids 119..112).
                let top = format!("_{}_", 119 - d % 8);
                assert!(p.link(route[1]).name.contains(&top), "{}", p.link(route[1]).name);
            }
        }
    }
}

#[test]
fn fat_tree_toml_and_xml_give_identical_routes() {
    let xml = load("fat_tree_64.xml");
    let toml = load("fat_tree.toml");
    assert_eq!(xml.hosts.len(), toml.hosts.len());
    for (a, b) in xml.hosts.iter().zip(&toml.hosts) {
        assert_eq!(
            (a.name.as_str(), a.speed, a.cores),
            (b.name.as_str(), b.speed, b.cores)
        );
    }
    let link_names = |p: &Platform| p.links.iter().map(|l| l.name.clone()).collect::<Vec<_>>();
    assert_eq!(link_names(&xml), link_names(&toml));
    for s in 0..64 {
        for d in 0..64 {
            let a: Vec<_> = xml
                .route(HostId(s), HostId(d))
                .iter()
                .map(|&l| xml.link(l).name.clone())
                .collect();
            let b: Vec<_> = toml
                .route(HostId(s), HostId(d))
                .iter()
                .map(|&l| toml.link(l).name.clone())
                .collect();
            assert_eq!(a, b);
        }
    }
}

#[test]
fn fat_tree_256_and_1024_route_lengths() {
    for (file, per_leaf, hosts) in [
        ("fat_tree_256.toml", 16u32, 256u32),
        ("fat_tree_1024.toml", 32, 1024),
    ] {
        let p = load(file);
        assert_eq!(p.hosts.len() as u32, hosts);
        for (s, d) in [
            (0, 1),
            (0, per_leaf - 1),
            (0, per_leaf),
            (3, hosts - 1),
            (hosts - 1, 0),
        ] {
            let expected = if s / per_leaf == d / per_leaf { 2 } else { 4 };
            let route = p.route(HostId(s), HostId(d));
            assert_eq!(route.len(), expected, "{file}: {s} -> {d}");
            assert!(route_is_contiguous(&p, HostId(s), HostId(d), &route));
        }
    }
}

/// platforms/stampede.toml: 6,400 hosts, 20 per leaf, 320 leaves each wired to the 8 core
/// switches by 2 cables (16 uplinks for 20 hosts), 56 Gbps, 5.2 us, as its header says.
#[test]
fn stampede_two_level_oversubscribed_fat_tree() {
    let p = load("stampede.toml");
    assert_eq!(p.hosts.len(), 6400);
    // 6400 host cables + 320 leaves x 8 core switches x 2 cables, SPLITDUPLEX.
    assert_eq!(p.links.len(), 2 * (6400 + 320 * 8 * 2));
    assert!(p.links.iter().all(|l| l.bandwidth == 7e9 && l.latency == 5.2e-6));
    let config: Vec<_> = p.config.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    assert_eq!(
        config,
        [
            ("network/crosstraffic", "no"),
            ("network/bandwidth-factor", "0.795")
        ]
    );
    let mut route = Vec::new();
    for s in (0..6400u32).step_by(97) {
        for d in (0..6400u32).step_by(89) {
            route.clear();
            p.router.route(HostId(s), HostId(d), &mut route);
            // A host's route to itself goes up and back down its own cable.
            let expected = if s / 20 == d / 20 { 2 } else { 4 };
            assert_eq!(route.len(), expected, "node-{s} -> node-{d}");
        }
    }
}

#[test]
fn fat_tree_4096_three_levels() {
    let start = Instant::now();
    let p = load("fat_tree_4096.toml");
    println!(
        "built the 4096-host 3-level fat tree in {:?} ({} links)",
        start.elapsed(),
        p.links.len()
    );
    assert_eq!(p.hosts.len(), 4096);
    // 4096 host cables + 256 leaves x 16 + 256 level-2 switches x 16, SPLITDUPLEX.
    assert_eq!(p.links.len(), 2 * (4096 + 4096 + 4096));
    let start = Instant::now();
    let mut longest = 0;
    let mut route = Vec::new();
    for s in (0..4096u32).step_by(61) {
        for d in (0..4096u32).step_by(37) {
            route.clear();
            p.router.route(HostId(s), HostId(d), &mut route);
            let expected = if s / 16 == d / 16 {
                2
            } else if s / 256 == d / 256 {
                4
            } else {
                6
            };
            assert_eq!(route.len(), expected, "node-{s} -> node-{d}");
            longest = longest.max(route.len());
        }
    }
    println!(
        "{} routes in {:?}",
        (4096 / 61 + 1) * (4096 / 37 + 1),
        start.elapsed()
    );
    assert_eq!(longest, 6);
    let r = p.route(HostId(0), HostId(4095));
    assert!(route_is_contiguous(&p, HostId(0), HostId(4095), &r));
    assert_eq!(p.link(r[0]).name, "link_from_0_8191_0_UP");
}

#[test]
fn fat_tree_with_parallel_cables_and_limiters() {
    // The documentation example of SimGrid: 16 hosts, 4 leaves, 2 tops, 2 cables leaf-top.
    let text = r#"
[[cluster]]
id = "ft"
prefix = "n"
radical = "0-15"
speed = "1Gf"
bw = "1GBps"
lat = "1us"
sharing_policy = "SHARED"
topology = "fat_tree"
topo_parameters = "2;4,4;1,2;1,2"
limiter_link = "2GBps"
loopback_bw = "100GBps"
"#;
    let p = Platform::from_toml_str(text, "pgft.toml").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(p.hosts.len(), 16);
    // Self: loopback only.
    assert_eq!(names(&p, "n3", "n3"), ["ft_link_3_loopback"]);
    assert_eq!(
        p.link(p.link_by_name("ft_link_3_loopback").unwrap()).sharing,
        SharingPolicy::FatPipe
    );
    // Same leaf: source limiter, up, down, then the limiter of the switch left going down, and
    // the destination's limiter (SimGrid's order).
    assert_eq!(
        names(&p, "n0", "n1"),
        [
            "ft_link_0_limiter",
            "link_from_0_31_0",
            "link_from_1_31_1",
            "ft_link_31_limiter",
            "ft_link_1_limiter"
        ]
    );
    // Across: 4 cables plus a limiter at each node left and at the destination.
    let r = names(&p, "n0", "n15");
    assert_eq!(r.len(), 4 + 5, "{r:?}");
    assert_eq!(r.iter().filter(|n| n.starts_with("link_from_")).count(), 4);
    // D-mod-K with 2 tops x 2 cables: port 15 mod 4 = 3 = top 1, cable 1.
    assert!(r[3].starts_with("link_from_31_26_"), "{r:?}");
}

// ---------------------------------------------------------------------------------------------
// Flat clusters (star)

#[test]
fn flat_cluster_with_backbone() {
    let p = load("cluster_4.toml");
    assert_eq!(p.hosts.len(), 4);
    assert_eq!(p.host(HostId(2)).cores, 2);
    assert_eq!(
        names(&p, "host-0", "host-1"),
        ["c4_link_0_UP", "c4_backbone", "c4_link_1_DOWN"]
    );
    assert_eq!(
        names(&p, "host-3", "host-0"),
        ["c4_link_3_UP", "c4_backbone", "c4_link_0_DOWN"]
    );
    // No loopback: up and down the private link, the backbone once.
    assert_eq!(
        names(&p, "host-2", "host-2"),
        ["c4_link_2_UP", "c4_backbone", "c4_link_2_DOWN"]
    );
    let r = p.route(HostId(0), HostId(1));
    assert!((p.route_latency(&r) - 25e-6).abs() < 1e-15);
    let bb = p.link_by_name("c4_backbone").unwrap();
    assert_eq!(p.link(bb).bandwidth, 2.5e9);
    assert_eq!(p.link(bb).sharing, SharingPolicy::Shared);
    assert!(p
        .graph
        .node_indices()
        .any(|n| p.graph[n] == NetNode::Router("host-c4_router".to_string())));
}

#[test]
fn flat_cluster_shared_links_limiter_and_loopback() {
    let xml = r#"<?xml version='1.0'?>
<platform version="4.1">
  <cluster id="c" prefix="h" suffix=".lan" radical="1-3,7" speed="1Gf" bw="125MBps" lat="50us"
           sharing_policy="SHARED" bb_bw="1GBps" bb_lat="1us" limiter_link="200MBps"/>
</platform>"#;
    let p = Platform::from_xml_str(xml, "flat.xml").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        p.hosts.iter().map(|h| h.name.as_str()).collect::<Vec<_>>(),
        ["h1.lan", "h2.lan", "h3.lan", "h7.lan"]
    );
    assert_eq!(
        names(&p, "h1.lan", "h7.lan"),
        [
            "c_link_1_limiter",
            "c_link_1",
            "c_backbone",
            "c_link_7",
            "c_link_7_limiter"
        ]
    );
    // SHARED private link and limiter counted once.
    assert_eq!(
        names(&p, "h2.lan", "h2.lan"),
        ["c_link_2_limiter", "c_link_2", "c_backbone"]
    );

    let xml = xml.replace(
        "limiter_link=\"200MBps\"",
        "loopback_bw=\"1GBps\" loopback_lat=\"0.1us\"",
    );
    let p = Platform::from_xml_str(&xml, "flat.xml").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(names(&p, "h3.lan", "h3.lan"), ["c_link_3_loopback"]);
    assert_eq!(
        names(&p, "h1.lan", "h2.lan"),
        ["c_link_1", "c_backbone", "c_link_2"]
    );
}

#[test]
fn hand_made_cluster_zone() {
    let xml = r#"<?xml version='1.0'?>
<platform version="4.1">
  <zone id="z" routing="Cluster">
    <host id="a" speed="1Gf"/>
    <host id="b" speed="1Gf"/>
    <link id="la" bandwidth="1GBps" latency="1us" sharing_policy="SPLITDUPLEX"/>
    <link id="lb" bandwidth="1GBps" latency="1us" sharing_policy="SPLITDUPLEX"/>
    <host_link id="a" up="la_UP" down="la_DOWN"/>
    <host_link id="b" up="lb_UP" down="lb_DOWN"/>
    <backbone id="bb" bandwidth="2GBps" latency="1us"/>
  </zone>
</platform>"#;
    let p = Platform::from_xml_str(xml, "z.xml").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(names(&p, "a", "b"), ["la_UP", "bb", "lb_DOWN"]);
    assert_eq!(names(&p, "b", "b"), ["lb_UP", "bb", "lb_DOWN"]);
}

// ---------------------------------------------------------------------------------------------
// Torus and dragonfly

#[test]
fn torus_routes() {
    let p = load("torus_64.toml");
    assert_eq!(p.hosts.len(), 64);
    assert_eq!(p.links.len(), 64 * 3 * 2);
    assert_eq!(names(&p, "node-0", "node-1"), ["torus64_link_from_0_to_1_UP"]);
    assert_eq!(names(&p, "node-1", "node-0"), ["torus64_link_from_0_to_1_DOWN"]);
    // Shorter way round: 0 -> 3 in dimension 0 goes backwards over 3's wrap-around cable.
    assert_eq!(names(&p, "node-0", "node-3"), ["torus64_link_from_3_to_0_DOWN"]);
    // (0,0,0) -> (2,2,2): distance 2 in each dimension, dimension order.
    assert_eq!(
        names(&p, "node-0", "node-42"),
        [
            "torus64_link_from_0_to_1_UP",
            "torus64_link_from_1_to_2_UP",
            "torus64_link_from_2_to_6_UP",
            "torus64_link_from_6_to_10_UP",
            "torus64_link_from_10_to_26_UP",
            "torus64_link_from_26_to_42_UP",
        ]
    );
    // Without a loopback a host's route to itself is empty, as in SimGrid.
    assert!(p.route(HostId(5), HostId(5)).is_empty());
    let mut histogram = [0usize; 7];
    for s in 0..64u32 {
        for d in 0..64u32 {
            let r = p.route(HostId(s), HostId(d));
            // Hop count = sum over dimensions of the ring distance.
            let dist: usize = (0..3)
                .map(|j| {
                    let (a, b) = ((s >> (2 * j)) & 3, (d >> (2 * j)) & 3);
                    let diff = a.abs_diff(b) as usize;
                    diff.min(4 - diff)
                })
                .sum();
            assert_eq!(r.len(), dist, "node-{s} -> node-{d}");
            assert!(route_is_contiguous(&p, HostId(s), HostId(d), &r));
            histogram[r.len()] += 1;
        }
    }
    assert_eq!(histogram[6], 64);
}

#[test]
fn dragonfly_routes() {
    let p = load("dragonfly_small.toml");
    assert_eq!(p.hosts.len(), 36);
    // 18 routers x 2 local cables, 6 chassis x 3 green, 3 groups x 3 black, 3 blue; all split.
    assert_eq!(p.links.len(), 2 * (36 + 18 + 9 + 3));
    assert_eq!(
        names(&p, "node-0", "node-1"),
        [
            "local_link_from_router_0_to_node_0_0_UP",
            "local_link_from_router_0_to_node_1_1_DOWN"
        ]
    );
    assert_eq!(names(&p, "node-0", "node-2").len(), 3);
    assert_eq!(names(&p, "node-0", "node-6").len(), 3);
    assert_eq!(
        names(&p, "node-0", "node-12"),
        [
            "local_link_from_router_0_to_node_0_0_UP",
            "green_link_in_chassis_0_between_routers_0_and_1_36_UP",
            "blue_link_between_group_0_and_1_routers_1_and_6_63_UP",
            "local_link_from_router_6_to_node_0_12_DOWN",
        ]
    );
    // Longest minimal route: local, green, black, blue, green, black, local.
    let r = p.route(host(&p, "node-10"), host(&p, "node-22"));
    assert_eq!(r.len(), 7);
    assert!(route_is_contiguous(
        &p,
        host(&p, "node-10"),
        host(&p, "node-22"),
        &r
    ));
    let mut longest = 0;
    for s in 0..36u32 {
        for d in 0..36u32 {
            let r = p.route(HostId(s), HostId(d));
            assert!((2..=7).contains(&r.len()), "node-{s} -> node-{d}");
            longest = longest.max(r.len());
            // Routes between groups always start at chassis 0 of the target group: contiguous.
            if s / 12 != d / 12 {
                assert!(
                    route_is_contiguous(&p, HostId(s), HostId(d), &r),
                    "node-{s} -> node-{d}"
                );
            }
        }
    }
    assert_eq!(longest, 7);
    // SimGrid quirk kept on purpose: inside a group, after a green hop in chassis 1 SimGrid
    // continues from chassis 0, so node-6 (chassis 1, router 0) -> node-2 (chassis 0, router 1)
    // takes no black link.
    assert_eq!(
        names(&p, "node-6", "node-2"),
        [
            "local_link_from_router_3_to_node_0_6_UP",
            "green_link_in_chassis_1_between_routers_0_and_1_39_UP",
            "local_link_from_router_1_to_node_0_2_DOWN",
        ]
    );
}

// ---------------------------------------------------------------------------------------------
// Explicit routes

#[test]
fn small_star_full_routes() {
    let p = load("small_star.xml");
    assert_eq!(p.hosts.len(), 3);
    assert_eq!(names(&p, "alice", "bob"), ["l_alice_UP", "l_bob_DOWN"]);
    // Symmetrical by default: reversed, UP/DOWN swapped.
    assert_eq!(names(&p, "bob", "alice"), ["l_bob_UP", "l_alice_DOWN"]);
    assert_eq!(names(&p, "carol", "bob"), ["l_carol_UP", "l_bob_DOWN"]);
    // Self: the model-level loopback, created once.
    assert_eq!(names(&p, "alice", "alice"), ["__loopback__"]);
    assert_eq!(names(&p, "carol", "carol"), ["__loopback__"]);
    let lo = p.link(p.link_by_name("__loopback__").unwrap());
    assert_eq!(
        (lo.bandwidth, lo.latency, lo.sharing),
        (10e9, 0.0, SharingPolicy::FatPipe)
    );
    assert_eq!(p.link(p.link_by_name("l_bob_UP").unwrap()).bandwidth, 1.25e9);
    let carol = p.host(host(&p, "carol"));
    assert_eq!((carol.speed, carol.cores), (5e8, 4));
    assert_eq!(
        carol.properties,
        [("smpi/os".to_string(), "0:1e-6:0".to_string())]
    );
    assert_eq!(p.config, [("network/model".to_string(), "SMPI".to_string())]);

    let t = load("small_star.toml");
    assert_eq!(t.config, p.config);
    assert_eq!(t.host(host(&t, "carol")).properties, carol.properties);
    for a in ["alice", "bob", "carol"] {
        for b in ["alice", "bob", "carol"] {
            assert_eq!(names(&p, a, b), names(&t, a, b), "{a} -> {b}");
        }
    }
}

const ROUTED: &str = r#"<?xml version='1.0'?>
<platform version="4.1">
  <config><prop id="network/loopback-bw" value="5GBps"/></config>
  <zone id="z" routing="ROUTING">
    <host id="h1" speed="1Gf"/>
    <host id="h2" speed="1Gf"/>
    <host id="h3" speed="1Gf"/>
    <router id="r1"/>
    <router id="r2"/>
    <link id="a" bandwidth="1GBps" latency="1us"/>
    <link id="c" bandwidth="1GBps" latency="1us" sharing_policy="SPLITDUPLEX"/>
    <link id="d" bandwidth="1GBps" latency="1us"/>
    <link id="e" bandwidth="1GBps" latency="1us"/>
    <route src="h1" dst="r1"><link_ctn id="a"/></route>
    <route src="r1" dst="r2"><link_ctn id="c" direction="UP"/></route>
    <route src="r2" dst="h2"><link_ctn id="d"/></route>
    <route src="r1" dst="h3"><link_ctn id="e"/></route>
    <route src="h3" dst="h2" symmetrical="NO"><link_ctn id="e"/><link_ctn id="d"/></route>
  </zone>
</platform>"#;

#[test]
fn floyd_and_dijkstra_route_through_routers() {
    for routing in ["Floyd", "Dijkstra"] {
        let p = Platform::from_xml_str(&ROUTED.replace("ROUTING", routing), "routed.xml")
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(names(&p, "h1", "h2"), ["a", "c_UP", "d"], "{routing}");
        assert_eq!(names(&p, "h2", "h1"), ["d", "c_DOWN", "a"], "{routing}");
        assert_eq!(names(&p, "h1", "h3"), ["a", "e"], "{routing}");
        // The declared two-link route beats h3 -> r1 -> r2 -> h2 (3 links); it is one-way.
        assert_eq!(names(&p, "h3", "h2"), ["e", "d"], "{routing}");
        assert_eq!(names(&p, "h2", "h3"), ["d", "c_DOWN", "e"], "{routing}");
        assert_eq!(names(&p, "h1", "h1"), ["__loopback__"]);
        assert_eq!(p.link(p.link_by_name("__loopback__").unwrap()).bandwidth, 5e9);
    }
}

/// Zones routing between themselves (SimGrid's `<zoneRoute>`), each with its own routing.
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

#[test]
fn zone_routes_go_through_gateways() {
    let p = Platform::from_xml_str(ZONES, "zones.xml").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(p.hosts.len(), 8);
    // Full zone A to gateway, the zone route, Dijkstra zone B from its gateway down to b1.
    assert_eq!(names(&p, "a1", "b1"), ["a1_l", "wan_ab", "b_x", "b1_l"]);
    assert_eq!(names(&p, "b1", "a1"), ["b1_l", "b_x", "wan_ab", "a1_l"]);
    // Floyd chains two zone routes, crossing B from one gateway to the other.
    assert_eq!(
        names(&p, "a1", "c1"),
        [
            "a1_l",
            "wan_ab",
            "b_x",
            "b_y",
            "wan_bc",
            "C_backbone",
            "C_link_1_DOWN"
        ]
    );
    assert_eq!(
        names(&p, "c2", "a2"),
        [
            "C_link_2_UP",
            "C_backbone",
            "wan_bc",
            "b_y",
            "b_x",
            "wan_ab",
            "a2_l_DOWN"
        ]
    );
    // The gateway of a None zone is its host.
    assert_eq!(names(&p, "c1", "e1"), ["C_link_1_UP", "C_backbone", "wan_ce"]);
    // Cabinets of a hand-made cluster: private links and the backbone (once).
    assert_eq!(names(&p, "d1", "d2"), ["link_d1_UP", "d_bb", "link_d2_DOWN"]);
    assert_eq!(
        names(&p, "d2", "b1"),
        ["link_d2_UP", "d_bb", "wan_bd", "b_y", "b1_l"]
    );
    // SPLITDUPLEX halves swap in the reverse of a symmetrical route.
    assert_eq!(names(&p, "a1", "a2"), ["a1_l", "a2_l_DOWN"]);
    assert_eq!(names(&p, "a2", "a1"), ["a2_l_UP", "a1_l"]);
    // A zone without child zones gives its hosts the model's loopback; a None zone has no route.
    assert_eq!(names(&p, "a1", "a1"), ["__loopback__"]);
    let e = p.try_route(host(&p, "e1"), host(&p, "e1")).unwrap_err();
    assert_eq!(
        e.to_string(),
        "no route from `e1` to `e1`: zone `E` (routing=\"None\") has no route from `e1` to `e1`"
    );
}

#[test]
fn bypass_routes_replace_routes() {
    let bypass = BYPASS_ROUTES;
    let p = Platform::from_xml_str(bypass, "bypass.xml").unwrap_or_else(|e| panic!("{e}"));
    // <bypassRoute>: one way only.
    assert_eq!(names(&p, "a1", "a2"), ["a_fast"]);
    assert_eq!(names(&p, "a2", "a1"), ["a2_l", "a1_l"]);
    // <bypassZoneRoute> to a zone nested deeper than the zone route it replaces.
    assert_eq!(names(&p, "a1", "b1"), ["a1_l", "short_ab", "b1_l"]);
    assert_eq!(names(&p, "b1", "a1"), ["b1_l", "wan_ab", "a1_l"]);
    assert_eq!(names(&p, "a1", "c1"), ["a1_l", "wan_ac", "c1_l"]);
    assert_eq!(names(&p, "c1", "b1"), ["c1_l", "wan_bc", "b1_l"]);
}

const BYPASS_ROUTES: &str = r#"<?xml version='1.0'?>
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

#[test]
fn zones_without_a_zone_route_fail_only_when_used() {
    let p = Platform::from_xml_str(
        &xml_platform(
            "<cluster id=\"c\" prefix=\"n\" suffix=\"\" radical=\"0-1\" speed=\"1Gf\" bw=\"1GBps\" lat=\"1us\"/>\n\
             <host id=\"h\" speed=\"1Gf\"/>",
        ),
        "two.xml",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(names(&p, "n0", "n1"), ["c_link_0_UP", "c_link_1_DOWN"]);
    let e = p.try_route(host(&p, "n0"), host(&p, "h")).unwrap_err();
    assert_eq!(
        e.to_string(),
        "no route from `n0` to `h`: `h` is in zone `z`, which holds the zone of `n0`: SimGrid routes only \
         between points of one zone or of sibling zones"
    );
    let e = xml_err(&xml_platform(
        "<zone id=\"x\" routing=\"Full\"><host id=\"a\" speed=\"1Gf\"/></zone>\n\
         <zone id=\"y\" routing=\"Full\"><host id=\"b\" speed=\"1Gf\"/></zone>\n\
         <link id=\"l\" bandwidth=\"1GBps\"/>\n\
         <zoneRoute src=\"x\" dst=\"y\" gw_src=\"b\" gw_dst=\"a\"><link_ctn id=\"l\"/></zoneRoute>",
    ));
    assert_msg(
        &e,
        "bad.xml:7:",
        "invalid value `b` for `gateway`: it is not inside zone `x`",
    );
}

#[test]
fn vivaldi_zones_add_the_latency_of_the_distance() {
    let p = Platform::from_xml_str(
        &xml_platform(
            "<peer id=\"p1\" coordinates=\"25.5 9.4 1.4\" speed=\"1Gf\" bw_in=\"100MBps\" bw_out=\"50MBps\"/>\n\
             <peer id=\"p2\" coordinates=\"-12.7 -9.9 2.1\" speed=\"1Gf\" bw_in=\"80MBps\" bw_out=\"40MBps\"/>\n\
             <host id=\"h\" coordinates=\"3 4 0\" speed=\"1Gf\"/>\n\
             <host id=\"lost\" speed=\"1Gf\"/>",
        )
        .replace("routing=\"Full\"", "routing=\"Vivaldi\""),
        "vivaldi.xml",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        names(&p, "p1", "p2"),
        ["link_p1_UP", "link_p2_DOWN", "vivaldi_p1_p2"]
    );
    assert_eq!(
        names(&p, "p2", "p1"),
        ["link_p2_UP", "link_p1_DOWN", "vivaldi_p1_p2"]
    );
    assert_eq!(names(&p, "h", "p1"), ["link_p1_DOWN", "vivaldi_p1_h"]);
    assert_eq!(
        names(&p, "p1", "p1"),
        ["link_p1_UP", "link_p1_DOWN", "vivaldi_p1_p1"]
    );
    let route = p.route(host(&p, "p1"), host(&p, "p2"));
    let distance = ((25.5f64 + 12.7).powi(2) + (9.4f64 + 9.9).powi(2)).sqrt() + 1.4 + 2.1;
    assert!((p.route_latency(&route) - distance / 1000.0).abs() < 1e-15);
    let l = p.link(p.link_by_name("link_p1_UP").unwrap());
    assert_eq!((l.bandwidth, l.latency), (50e6, 0.0));
    let e = p.try_route(host(&p, "h"), host(&p, "lost")).unwrap_err();
    assert!(e.to_string().contains("lacks the coordinates of `lost`"), "{e}");
}

/// Loading in two steps: the `<config>` entries are read first (with their place), and the
/// caller's model loopback replaces the one the file's `<config>` asks for.
#[test]
fn two_step_load_takes_the_callers_loopback() {
    let text = ROUTED.replace("ROUTING", "Floyd");
    let file = PlatformFile::from_xml_str(&text, "routed.xml").unwrap_or_else(|e| panic!("{e}"));
    let config = file.config();
    assert_eq!(config.len(), 1);
    assert_eq!(
        (config[0].key.as_str(), config[0].value.as_str()),
        ("network/loopback-bw", "5GBps")
    );
    assert!(
        config[0].place.starts_with("routed.xml:3:"),
        "{}",
        config[0].place
    );
    assert_eq!(
        file.own_loopback().unwrap(),
        ModelLoopback {
            bandwidth: 5e9,
            latency: 0.0
        }
    );
    let given = ModelLoopback {
        bandwidth: 2e9,
        latency: 1e-6,
    };
    let p = file.build(given).unwrap_or_else(|e| panic!("{e}"));
    let lo = p.link(p.link_by_name("__loopback__").unwrap());
    assert_eq!((lo.bandwidth, lo.latency), (2e9, 1e-6));
}

#[test]
fn bad_loopback_in_config_names_the_line() {
    let text = ROUTED.replace("ROUTING", "Full").replace("5GBps", "0GBps");
    let e = Platform::from_xml_str(&text, "routed.xml").unwrap_err();
    assert_eq!(e.line, 3, "{e}");
    assert!(e.to_string().contains("must be positive"), "{e}");
}

// ---------------------------------------------------------------------------------------------
// Errors: each names the file, the line and the problem.

fn xml_err(text: &str) -> PlatformError {
    match Platform::from_xml_str(text, "bad.xml") {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e,
    }
}

fn toml_err(text: &str) -> PlatformError {
    match Platform::from_toml_str(text, "bad.toml") {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e,
    }
}

fn assert_msg(e: &PlatformError, file_line: &str, needle: &str) {
    let msg = e.to_string();
    assert!(
        msg.starts_with(file_line),
        "`{msg}` should start with `{file_line}`"
    );
    assert!(msg.contains(needle), "`{msg}` should mention `{needle}`");
}

fn xml_platform(body: &str) -> String {
    // Line 1: declaration, line 2: <platform>, line 3: <zone>, body from line 4.
    format!("<?xml version='1.0'?>\n<platform version=\"4.1\">\n<zone id=\"z\" routing=\"Full\">\n{body}\n</zone>\n</platform>\n")
}

const TWO_HOSTS: &str = "<host id=\"a\" speed=\"1Gf\"/>\n<host id=\"b\" speed=\"1Gf\"/>";

#[test]
fn xml_errors() {
    let e = xml_err(
        "<?xml version='1.0'?>\n<platform version=\"4.1\">\n<zone id=\"z\" routing=\"Full\">\n</platform>\n",
    );
    assert!(matches!(e.kind, PlatformErrorKind::MalformedXml(_)));
    assert_msg(&e, "bad.xml:4:", "malformed XML");

    let e = xml_err(&xml_platform("<host id=\"a\" speed=\"1Gf\" colour=\"red\"/>"));
    assert!(
        matches!(&e.kind, PlatformErrorKind::UnknownAttribute { attribute, .. } if attribute == "colour")
    );
    assert_msg(&e, "bad.xml:4:", "unknown attribute `colour` on <host>");

    let e = xml_err(&xml_platform(&format!("{TWO_HOSTS}\n<hots id=\"c\"/>")));
    assert!(matches!(&e.kind, PlatformErrorKind::UnknownElement(name) if name == "hots"));
    assert_msg(&e, "bad.xml:6:", "unknown element <hots>");

    let e = xml_err(&xml_platform(&format!(
        "{TWO_HOSTS}\n<link id=\"l\" bandwidth=\"-1GBps\"/>"
    )));
    assert!(matches!(&e.kind, PlatformErrorKind::InvalidValue { key, .. } if key == "bandwidth"));
    assert_msg(&e, "bad.xml:6:", "bandwidth must be positive");

    let e = xml_err(&xml_platform(&format!(
        "{TWO_HOSTS}\n<link id=\"l\" bandwidth=\"0Bps\"/>"
    )));
    assert_msg(&e, "bad.xml:6:", "bandwidth must be positive");

    let e = xml_err(&xml_platform(&format!(
        "{TWO_HOSTS}\n\n<link id=\"l\" bandwidth=\"10Gbs\"/>"
    )));
    assert!(matches!(&e.kind, PlatformErrorKind::Unit { key, .. } if key == "bandwidth"));
    assert_msg(&e, "bad.xml:7:", "unknown bandwidth unit `Gbs`");

    let e = xml_err(&xml_platform(&format!(
        "{TWO_HOSTS}\n<link id=\"l\" latency=\"1us\"/>"
    )));
    assert!(
        matches!(&e.kind, PlatformErrorKind::MissingAttribute { attribute, .. } if attribute == "bandwidth")
    );
    assert_msg(
        &e,
        "bad.xml:6:",
        "missing required attribute `bandwidth` on <link>",
    );

    let e = xml_err(&xml_platform(&format!(
        "{TWO_HOSTS}\n<link id=\"l\" bandwidth=\"1GBps\"/>\n<route src=\"a\" dst=\"dave\"><link_ctn id=\"l\"/></route>"
    )));
    assert!(matches!(&e.kind, PlatformErrorKind::UnknownHost(name) if name == "dave"));
    assert_msg(&e, "bad.xml:7:", "unknown host or router `dave`");

    let e = xml_err(&xml_platform(&format!(
        "{TWO_HOSTS}\n<link id=\"l\" bandwidth=\"1GBps\"/>\n<route src=\"a\" dst=\"b\">\n<link_ctn id=\"m\"/></route>"
    )));
    assert!(matches!(&e.kind, PlatformErrorKind::UnknownLink(name) if name == "m"));
    assert_msg(&e, "bad.xml:8:", "unknown link `m`");

    let e = xml_err(&xml_platform(&format!(
        "{TWO_HOSTS}\n<link id=\"l\" bandwidth=\"1GBps\" sharing_policy=\"SPLITDUPLEX\"/>\n\
         <route src=\"a\" dst=\"b\"><link_ctn id=\"l\"/></route>"
    )));
    assert_msg(
        &e,
        "bad.xml:7:",
        "link `l` is SPLITDUPLEX: give direction UP or DOWN",
    );

    let e = xml_err(&xml_platform(&format!(
        "{TWO_HOSTS}\n<link id=\"l\" bandwidth=\"1GBps\"/>\n<route src=\"a\" dst=\"b\"><link_ctn id=\"l\"/></route>\n\
         <route src=\"b\" dst=\"a\"><link_ctn id=\"l\"/></route>"
    )));
    assert!(matches!(&e.kind, PlatformErrorKind::Duplicate { .. }));
    assert_msg(&e, "bad.xml:8:", "duplicate route");

    let e = xml_err(&xml_platform(
        "<host id=\"a\" speed=\"1Gf\"/>\n<host id=\"b\" speed=\"1Gf\"/>\n<host id=\"a\" speed=\"1Gf\"/>",
    ));
    assert!(matches!(&e.kind, PlatformErrorKind::Duplicate { name, .. } if name == "a"));
    assert_msg(&e, "bad.xml:6:", "duplicate host `a`");

    // A missing route is no load error (SimGrid fails only when a message takes it).
    let p = Platform::from_xml_str(&xml_platform(TWO_HOSTS), "partial.xml").expect("loads");
    let e = p.try_route(host(&p, "a"), host(&p, "b")).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("no route from `a` to `b`: the platform declares none"),
        "{e}"
    );

    let e = xml_err(&xml_platform("<host id=\"a\" speed=\"1Gf\" core=\"0\"/>"));
    assert_msg(&e, "bad.xml:4:", "invalid value `0` for `core`");

    let e = xml_err(&xml_platform("<host id=\"a\" speed=\"-1Gf\"/>"));
    assert_msg(&e, "bad.xml:4:", "speed must be positive");

    let e = xml_err(&xml_platform(
        "<host id=\"a\" speed=\"1Gf\"/>\n<zoneRoute src=\"x\" dst=\"y\" gw_src=\"a\" gw_dst=\"b\"/>",
    ));
    assert_msg(
        &e,
        "bad.xml:5:",
        "invalid value `x` for `zone`: no zone of that name inside zone `z`",
    );

    let e = xml_err("<platform version=\"3\">\n</platform>");
    assert_msg(&e, "bad.xml:1:", "unsupported platform version `3`");
}

fn cluster_xml(attrs: &str) -> String {
    format!("<?xml version='1.0'?>\n<platform version=\"4.1\">\n  <cluster id=\"c\" prefix=\"n\" suffix=\"\" speed=\"1Gf\" bw=\"1GBps\" lat=\"1us\"\n    {attrs}/>\n</platform>\n")
}

#[test]
fn cluster_errors() {
    let e = xml_err(&cluster_xml(
        "radical=\"0-62\" topology=\"FAT_TREE\" topo_parameters=\"2;8,8;1,8;1,1\"",
    ));
    assert!(matches!(&e.kind, PlatformErrorKind::Topology { topology, .. } if topology == "FAT_TREE"));
    assert_msg(
        &e,
        "bad.xml:4:",
        "the topology has 64 hosts but the radical gives 63",
    );

    let e = xml_err(&cluster_xml(
        "radical=\"0-63\" topology=\"FAT_TREE\" topo_parameters=\"2;8,8;1,8\"",
    ));
    assert_msg(&e, "bad.xml:4:", "expected 4 fields");

    let e = xml_err(&cluster_xml(
        "radical=\"0-63\" topology=\"FAT_TREE\" topo_parameters=\"2;8,8,1;1,8;1,1\"",
    ));
    assert_msg(
        &e,
        "bad.xml:4:",
        "downlink counts `8,8,1` has 3 entries but there are 2 levels",
    );

    let e = xml_err(&cluster_xml(
        "radical=\"0-63\" topology=\"FAT_TREE\" topo_parameters=\"2;8,8;0,8;1,1\"",
    ));
    assert_msg(&e, "bad.xml:4:", "uplink counts: `0` is not a positive integer");

    let e = xml_err(&cluster_xml(
        "radical=\"0-63\" topology=\"TORUS\" topo_parameters=\"4,4,5\"",
    ));
    assert_msg(
        &e,
        "bad.xml:4:",
        "bad TORUS topology `4,4,5`: the topology has 80 hosts but the radical gives 64",
    );

    let e = xml_err(&cluster_xml(
        "radical=\"0-35\" topology=\"DRAGONFLY\" topo_parameters=\"3,1;2,1;3;2\"",
    ));
    assert_msg(&e, "bad.xml:4:", "bad DRAGONFLY topology");

    let e = xml_err(&cluster_xml("radical=\"0-99\" topology=\"HYPERCUBE\""));
    assert_msg(&e, "bad.xml:4:", "invalid value `HYPERCUBE` for `topology`");

    let e = xml_err(&cluster_xml("radical=\"0-9;12\""));
    assert_msg(&e, "bad.xml:4:", "invalid value `0-9;12` for `radical`");

    let e = xml_err(&cluster_xml("radical=\"0-3\" sharing_policy=\"HALFDUPLEX\""));
    assert_msg(&e, "bad.xml:4:", "expected SHARED, SPLITDUPLEX or FATPIPE");

    // Missing radical: reported at the <cluster> line.
    let e = xml_err(&cluster_xml(""));
    assert_msg(
        &e,
        "bad.xml:3:",
        "missing required attribute `radical` on <cluster>",
    );
}

#[test]
fn toml_errors() {
    let base = "[[cluster]]\nid = \"c\"\nradical = \"0-3\"\nspeed = \"1Gf\"\nbw = \"1GBps\"\nlat = \"1us\"\n";
    assert!(Platform::from_toml_str(base, "ok.toml").is_ok());

    let e = toml_err(&format!("{base}bww = \"1GBps\"\n"));
    assert!(matches!(e.kind, PlatformErrorKind::MalformedToml(_)));
    assert_msg(&e, "bad.toml:7:", "unknown key `bww`");

    let e = toml_err(&format!("colour = \"red\"\n{base}"));
    assert_msg(&e, "bad.toml:1:", "unknown key `colour`");

    let e = toml_err(&base.replace("bw = \"1GBps\"", "bw = \"1GBs\""));
    assert!(matches!(&e.kind, PlatformErrorKind::Unit { .. }));
    assert_msg(&e, "bad.toml:5:6:", "unknown bandwidth unit `GBs`");

    let e = toml_err(&base.replace("lat = \"1us\"", "lat = \"-1us\""));
    assert_msg(&e, "bad.toml:6:", "latency must be zero or positive");

    let e = toml_err(&base.replace("bw = \"1GBps\"\n", ""));
    assert_msg(&e, "bad.toml:", "missing field `bw`");

    let e = toml_err(&format!(
        "{base}topology = \"fat_tree\"\ntopo_parameters = \"2;2,2;1,2;1,1;7\"\n"
    ));
    assert_msg(&e, "bad.toml:8:", "expected 4 fields separated by `;`");

    let e = toml_err(&format!(
        "{base}topology = \"fat_tree\"\ntopo_parameters = \"2;2,4;1,2;1,1\"\n"
    ));
    assert_msg(
        &e,
        "bad.toml:8:",
        "the topology has 8 hosts but the radical gives 4",
    );

    let e = toml_err("[[cluster]\nid = 3\n");
    assert_msg(&e, "bad.toml:1:", "malformed TOML");

    let routes = "routing = \"full\"\n[[host]]\nid = \"a\"\nspeed = \"1Gf\"\n[[host]]\nid = \"b\"\nspeed = \"1Gf\"\n\
                  [[link]]\nid = \"l\"\nbandwidth = \"1GBps\"\n[[route]]\nsrc = \"a\"\ndst = \"c\"\nlinks = [\"l\"]\n";
    let e = toml_err(routes);
    assert!(matches!(&e.kind, PlatformErrorKind::UnknownHost(name) if name == "c"));
    assert_msg(&e, "bad.toml:13:", "unknown host or router `c`");

    let e = toml_err(
        &routes
            .replace("dst = \"c\"", "dst = \"b\"")
            .replace("[\"l\"]", "[\"l\", \"m\"]"),
    );
    assert_msg(&e, "bad.toml:14:", "unknown link `m`");

    let e = toml_err(&routes.replace("bandwidth = \"1GBps\"", "bandwidth = \"0\""));
    assert_msg(&e, "bad.toml:10:", "bandwidth must be positive");
}

#[test]
fn file_errors() {
    let e = Platform::from_file(Path::new("no/such/platform.toml")).expect_err("missing file");
    assert!(matches!(e.kind, PlatformErrorKind::Io(_)));
    assert_msg(&e, "no/such/platform.toml: ", "cannot read");
    let e = Platform::from_file(Path::new("platform.json")).expect_err("bad extension");
    assert!(matches!(e.kind, PlatformErrorKind::UnknownExtension));
    assert_msg(&e, "platform.json: ", "extension");
    // SimGrid's platforms written as programs (examples/platforms/griffon.cpp, its .so).
    for name in ["libgriffon.so", "griffon.cpp"] {
        let e = Platform::from_file(Path::new(name)).expect_err("a program platform");
        assert!(matches!(e.kind, PlatformErrorKind::ProgramPlatform));
        assert_msg(&e, &format!("{name}: "), "is not supported");
    }
}

#[test]
fn every_shipped_platform_loads() {
    let mut count = 0;
    for entry in std::fs::read_dir(platforms_dir()).expect("platforms/ exists") {
        let path = entry.expect("readable dir").path();
        if matches!(path.extension().and_then(|e| e.to_str()), Some("xml" | "toml")) {
            let p = Platform::from_file(&path).unwrap_or_else(|e| panic!("{e}"));
            assert!(!p.hosts.is_empty());
            count += 1;
        }
    }
    assert!(count >= 10, "{count} platform files");
}
