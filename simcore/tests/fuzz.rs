//! Fuzz targets for the platform parsers (SimGrid XML and our TOML format), run as tests for a
//! fixed time (`FUZZ_SECONDS`, default 3 s each; see `tests/fuzz-corpus/README.md`).
//!
//! Properties, for every input: loading never panics, never hangs, never allocates more than
//! 1 GiB at once (the harness checks these); a rejected file gets one message naming the file
//! and a line; an accepted platform holds only sensible values (hosts with a positive finite
//! speed, links with a positive finite bandwidth and a finite non-negative latency, at most
//! [`MAX_HOSTS`] hosts) and answers route queries with links it has.

#[path = "../../tests/fuzz-corpus/harness.rs"]
mod harness;

use harness::{Target, Verdict};
use simcore::platform::{HostId, Platform, PlatformError, PlatformFile};

#[global_allocator]
static ALLOC: harness::TrackingAlloc = harness::TrackingAlloc;

/// The most hosts a platform may declare (the loader's limit).
const MAX_HOSTS: usize = 1 << 20;

fn check_error(e: &PlatformError, file: &str) -> Verdict {
    let msg = e.to_string();
    if e.file != file || !msg.starts_with(&format!("{file}:")) {
        return Err(format!("message without the file name: `{msg}`"));
    }
    if e.line == 0 {
        return Err(format!("message without a line: `{msg}`"));
    }
    if msg.contains('\n') {
        return Err(format!("message on several lines: `{msg}`"));
    }
    Ok(())
}

fn check_platform(p: &Platform) -> Verdict {
    if p.hosts.is_empty() || p.hosts.len() > MAX_HOSTS {
        return Err(format!("accepted nonsense: {} hosts", p.hosts.len()));
    }
    if p.host_index.len() != p.hosts.len() {
        return Err("accepted nonsense: two hosts with one name".to_string());
    }
    for h in &p.hosts {
        if !(h.speed.is_finite() && h.speed > 0.0) || h.cores == 0 {
            return Err(format!(
                "accepted nonsense: host `{}` with speed {} and {} cores",
                h.name, h.speed, h.cores
            ));
        }
    }
    for l in &p.links {
        if !(l.bandwidth.is_finite() && l.bandwidth > 0.0) {
            return Err(format!(
                "accepted nonsense: link `{}` with bandwidth {}",
                l.name, l.bandwidth
            ));
        }
        if !(l.latency.is_finite() && l.latency >= 0.0) {
            return Err(format!(
                "accepted nonsense: link `{}` with latency {}",
                l.name, l.latency
            ));
        }
    }
    // Every pair of a small platform; corners and a spread of pairs of a large one.
    let n = p.hosts.len();
    let mut pairs = Vec::new();
    if n <= 12 {
        for a in 0..n {
            for b in 0..n {
                pairs.push((a, b));
            }
        }
    } else {
        for a in [0, 1, n / 2, n - 2, n - 1] {
            for b in [0, 1, n / 3, n - 2, n - 1] {
                pairs.push((a, b));
            }
        }
        pairs.extend((0..64).map(|i| ((i * 7919) % n, (i * 104_729 + 13) % n)));
    }
    for (a, b) in pairs {
        let Ok(route) = p.try_route(HostId(a as u32), HostId(b as u32)) else {
            continue;
        };
        if let Some(l) = route.iter().find(|l| l.0 as usize >= p.links.len()) {
            return Err(format!(
                "bad route: {a} -> {b} crosses link {} of {}",
                l.0,
                p.links.len()
            ));
        }
        if a != b && route.is_empty() {
            return Err(format!("bad route: {a} -> {b} crosses no link"));
        }
        let latency = p.route_latency(&route);
        if !latency.is_finite() {
            return Err(format!("bad route: {a} -> {b} has latency {latency}"));
        }
    }
    Ok(())
}

/// Reads, lists the `<config>`, and builds, as smpirun does.
fn check_load(
    text: &str,
    file: &str,
    read: fn(&str, &str) -> Result<PlatformFile, PlatformError>,
) -> Verdict {
    let f = match read(text, file) {
        Ok(f) => f,
        Err(e) => return check_error(&e, file),
    };
    for entry in f.config() {
        if !entry.place.starts_with(&format!("{file}:")) {
            return Err(format!("config entry without a place: {entry:?}"));
        }
    }
    let loopback = match f.own_loopback() {
        Ok(l) => l,
        Err(e) => return check_error(&e, file),
    };
    match f.build(loopback) {
        Ok(p) => check_platform(&p),
        Err(e) => check_error(&e, file),
    }
}

const XML_WORDS: &[&str] = &[
    "<zone id=\"z2\" routing=\"Full\">",
    "<zone id=\"z3\" routing=\"Floyd\">",
    "<AS id=\"as\" routing=\"Dijkstra\">",
    "</zone>",
    "</AS>",
    "<host id=\"hx\" speed=\"1Gf\"/>",
    "<host id=\"a\" speed=\"1Gf\" core=\"2\"/>",
    "<router id=\"rx\"/>",
    "<link id=\"lx\" bandwidth=\"1GBps\" latency=\"1us\"/>",
    "<link id=\"la\" bandwidth=\"1GBps\" sharing_policy=\"SPLITDUPLEX\"/>",
    "<route src=\"a\" dst=\"b\"><link_ctn id=\"la\"/></route>",
    "<route src=\"a\" dst=\"hx\" symmetrical=\"NO\"><link_ctn id=\"lx\" direction=\"DOWN\"/></route>",
    "<link_ctn id=\"lx\"/>",
    "<backbone id=\"bbx\" bandwidth=\"1GBps\" latency=\"0\"/>",
    "<host_link id=\"hx\" up=\"lx\" down=\"lx\"/>",
    "<config><prop id=\"network/loopback-bw\" value=\"1GBps\"/></config>",
    "<prop id=\"p\" value=\"v\"/>",
    "<cluster id=\"c2\" prefix=\"x\" suffix=\"\" radical=\"0-3\" speed=\"1Gf\" bw=\"1GBps\" lat=\"1us\"/>",
    "<zoneRoute src=\"a\" dst=\"b\" gw_src=\"a\" gw_dst=\"b\"/>",
    "<!DOCTYPE platform [<!ENTITY e \"&#60;host id='e' speed='1Gf'/&#62;\">]>",
    "&e;",
    "<!-- comment -->",
    "<![CDATA[ x ]]>",
    " topology=\"FAT_TREE\" topo_parameters=\"2;2,2;1,2;1,1\"",
    " topology=\"TORUS\" topo_parameters=\"2,2\"",
    " topology=\"DRAGONFLY\" topo_parameters=\"1,1;1,1;2,1;2\"",
    " radical=\"0-4294967296\"",
    " sharing_policy=\"FATPIPE\"",
    " sharing_policy=\"SPLITDUPLEX\"",
    " sharing_policy=\"WIFI\"",
    " limiter_link=\"1GBps\"",
    " loopback_bw=\"1GBps\" loopback_lat=\"1us\"",
    " bb_bw=\"1GBps\" bb_lat=\"1us\"",
    " pstate=\"1\"",
    " core=\"4294967296\"",
    " routing=\"Cluster\"",
    " routing=\"Vivaldi\"",
    " version=\"4.1\"",
    "FAT_TREE",
    "TORUS",
    "DRAGONFLY",
    "SPLITDUPLEX",
];

const TOML_WORDS: &[&str] = &[
    "routing = \"full\"",
    "routing = \"floyd\"",
    "routing = \"dijkstra\"",
    "routing = \"cluster\"",
    "[config]",
    "\"network/loopback-bw\" = \"1GBps\"",
    "\"network/loopback-lat\" = \"-1us\"",
    "[[cluster]]",
    "[[host]]",
    "[[router]]",
    "[[link]]",
    "[[route]]",
    "[[host_link]]",
    "[backbone]",
    "id = \"a\"",
    "id = \"hx\"",
    "speed = \"1Gf\"",
    "core = 4294967296",
    "core = -1",
    "pstate = 3",
    "bandwidth = \"1GBps\"",
    "latency = \"1us\"",
    "sharing_policy = \"SPLITDUPLEX\"",
    "src = \"a\"",
    "dst = \"b\"",
    "links = [\"lx\"]",
    "links = []",
    "symmetrical = false",
    "up = \"lx\"",
    "down = \"lx\"",
    "prefix = \"n\"",
    "suffix = \".x\"",
    "radical = \"0-4294967296\"",
    "radical = \"0-999999999999\"",
    "bw = \"1GBps\"",
    "lat = \"1us\"",
    "topology = \"fat_tree\"",
    "topology = \"torus\"",
    "topology = \"dragonfly\"",
    "topo_parameters = \"2;2,2;1,2;1,1\"",
    "topo_parameters = \"1;4;4294967296;1\"",
    "topo_parameters = \"1,1;1,1;1048576,1;1\"",
    "bb_bw = \"1GBps\"",
    "limiter_link = \"1GBps\"",
    "loopback_bw = \"1GBps\"",
    "prop = { a = \"b\" }",
    "router_id = \"\"",
    "x = 1e999",
    "x = nan",
    "x = inf",
    "x = { a = { b = { c = 1 } } }",
    "'''",
    "\"\"\"",
];

#[test]
fn platform_xml() {
    Target::new("platform-xml", "xml")
        .seed_dir("platforms", &[".xml"])
        .seed_dir("tests/smpi_compare/platforms", &[".xml"])
        .dict(XML_WORDS)
        .nesting("<zone id=\"n\" routing=\"Full\">", "</zone>")
        .nesting("<AS id=\"n\" routing=\"Floyd\">", "</AS>")
        .nesting("<a>", "</a>")
        .run(|bytes| {
            let text = String::from_utf8_lossy(bytes);
            check_load(&text, "fuzz-input.xml", PlatformFile::from_xml_str)
        });
}

#[test]
fn platform_toml() {
    Target::new("platform-toml", "toml")
        .seed_dir("platforms", &[".toml"])
        .dict(TOML_WORDS)
        .nesting("[", "]")
        .nesting("{a=", "}")
        .nesting("[[a.", "]]\n")
        .run(|bytes| {
            let text = String::from_utf8_lossy(bytes);
            check_load(&text, "fuzz-input.toml", PlatformFile::from_toml_str)
        });
}

// ---------------------------------------------------------------------------------------------
// Regression cases: each bug the fuzzing found, with the message it now gets. (Their inputs are
// also in the corpus, `tests/fuzz-corpus/platform-*/crash-*`.)

fn xml_error(text: &str) -> String {
    match Platform::from_xml_str(text, "bad.xml") {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => {
            assert!(check_error(&e, "bad.xml").is_ok(), "{e}");
            e.to_string()
        }
    }
}

fn toml_error(text: &str) -> String {
    match Platform::from_toml_str(text, "bad.toml") {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => {
            assert!(check_error(&e, "bad.toml").is_ok(), "{e}");
            e.to_string()
        }
    }
}

fn cluster(attrs: &str) -> String {
    format!(
        "<?xml version='1.0'?>\n<platform version=\"4.1\">\n<cluster id=\"c\" prefix=\"n\" suffix=\"\" \
         speed=\"1Gf\" bw=\"1GBps\" lat=\"1us\"\n {attrs}/>\n</platform>\n"
    )
}

fn assert_starts(msg: &str, start: &str) {
    assert!(msg.starts_with(start), "`{msg}` should start with `{start}`");
}

/// Was an allocation failure with a backtrace (a vector of `radical` hosts).
#[test]
fn huge_radical_is_an_error_naming_the_limit() {
    let e = xml_error(&cluster("radical=\"0-9999999999\""));
    assert_starts(
        &e,
        "bad.xml:4:2: invalid value `0-9999999999` for `radical`: 10000000000 hosts, more than the \
         limit of 262144 hosts per platform",
    );
    let e = xml_error(&cluster("radical=\"0-9223372036854775807,5\""));
    assert!(
        e.contains("9223372036854775809 hosts, more than the limit"),
        "{e}"
    );
    // At the limit: accepted (a FLAT cluster of 262144 hosts loads).
    let ok =
        Platform::from_xml_str(&cluster("radical=\"0-262143\""), "ok.xml").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(ok.hosts.len(), 1 << 18);
}

/// Was an allocation failure of 80 GB (one parent port per uplink of each host).
#[test]
fn fat_tree_of_absurd_size_is_an_error_naming_the_limit() {
    let e = xml_error(&cluster(
        "radical=\"0-15\" topology=\"FAT_TREE\" topo_parameters=\"2;4,4;1,2;4294967295,2\"",
    ));
    assert_starts(
        &e,
        "bad.xml:4:37: bad FAT_TREE topology `2;4,4;1,2;4294967295,2`: 16 hosts, 6 switches or routers \
         and 68719476736 cables make 137438953472 links, more than the limit of 1048576 links per platform",
    );
    // Was 7 s and 400 MB: 65536 top switches for 64 hosts.
    let e = xml_error(&cluster(
        "radical=\"0-63\" topology=\"FAT_TREE\" topo_parameters=\"2;8,8;1,65536;1,1\"",
    ));
    assert!(
        e.contains("more than the limit of 1048576 links per platform"),
        "{e}"
    );
    // Counts that overflow 64 bits.
    let e = xml_error(&cluster(
        "radical=\"0-3\" topology=\"FAT_TREE\" topo_parameters=\"3;2,2,1;4294967296,4294967296,2;1,1,1\"",
    ));
    assert!(
        e.contains("more than the limit of 1048576 links per platform (the counts overflow)"),
        "{e}"
    );
}

#[test]
fn torus_and_dragonfly_of_absurd_size_are_errors() {
    let e = xml_error(&cluster(
        "radical=\"0-262143\" topology=\"TORUS\" topo_parameters=\"262144,1,1,1\"",
    ));
    assert!(
        e.contains(
            "bad TORUS topology `262144,1,1,1`: 262144 hosts, 0 switches or routers and 1048576 cables"
        ),
        "{e}"
    );
    // 262144 routers in one chassis: 3.4e10 green cables.
    let e = xml_error(&cluster(
        "radical=\"0-262143\" topology=\"DRAGONFLY\" topo_parameters=\"1,1;1,1;262144,1;1\"",
    ));
    assert!(e.contains("bad DRAGONFLY topology"), "{e}");
    assert!(
        e.contains("more than the limit of 1048576 links per platform"),
        "{e}"
    );
    // A link count that makes a bandwidth infinite.
    let e = xml_error(&cluster(
        "radical=\"0-3\" topology=\"DRAGONFLY\" topo_parameters=\"1,1;1,1;2,18446744073709551615;2\" bw=\"1e300Bps\"",
    ).replace("bw=\"1GBps\" ", ""));
    assert!(e.contains("make an infinite bandwidth"), "{e}");
}

/// Was a stack overflow (SIGABRT) in the XML parser, which recurses once per level.
#[test]
fn deep_nesting_is_an_error_not_a_stack_overflow() {
    let depth = 100_000;
    let text = format!(
        "<?xml version='1.0'?>\n<platform version=\"4.1\">{}{}</platform>",
        "<zone id=\"z\" routing=\"Full\">".repeat(depth),
        "</zone>".repeat(depth)
    );
    let e = xml_error(&text);
    assert_starts(&e, "bad.xml:2:");
    assert!(
        e.ends_with(": unsupported element nesting deeper than 256 levels: platform files nest a few levels"),
        "{e}"
    );
    // Zones are read recursively too: at most 64 deep.
    let text = format!(
        "<?xml version='1.0'?>\n<platform version=\"4.1\">\n{}<host id=\"h\" speed=\"1Gf\"/>\n{}</platform>",
        "<zone id=\"z\" routing=\"Full\">\n".repeat(70),
        "</zone>\n".repeat(70)
    );
    let e = xml_error(&text);
    assert_starts(
        &e,
        "bad.xml:67:1: unsupported zone `z` nested in 64 zones: zones nest at most 64 deep",
    );
    // TOML nesting is bounded by the TOML parser.
    let e = toml_error(&format!("x = {}{}\n", "[".repeat(100_000), "]".repeat(100_000)));
    assert_starts(&e, "bad.toml:1:");
}

/// Was accepted: two such links in a route add up to an infinite latency.
#[test]
fn latency_beyond_1e9_seconds_is_an_error() {
    let e = toml_error("[[cluster]]\nid=\"\"\nradical=\"5\"\nspeed=\"1\"\nbw=\"1Bps\"\nlat=\"1e308\"\n");
    assert_starts(
        &e,
        "bad.toml:6:5: invalid value `1e308` for `lat`: latency above 1e9 s (about 30 years)",
    );
    let e = xml_error(&cluster("radical=\"0-3\" lat=\"1e10s\"").replace("lat=\"1us\"\n", "\n"));
    assert!(e.contains("latency above 1e9 s"), "{e}");
    let e =
        toml_error("[config]\n\"network/loopback-lat\" = \"2e9\"\n[[host]]\nid = \"a\"\nspeed = \"1Gf\"\n");
    assert_starts(
        &e,
        "bad.toml:2:26: invalid value `2e9` for `network/loopback-lat`: must be between 0 and 1e9 s",
    );
}

/// Was a message on two lines (the XML parser quotes the newline it did not expect).
#[test]
fn messages_stay_on_one_line() {
    let e = xml_error("<r d=\"\" x=\"\" d=\"\"/\n");
    assert_eq!(e, "bad.xml:1:19: malformed XML: expected '>' not '\\n' at 1:19");
    let e = toml_error(
        "[[cluster]]\nid = \"c\"\nradical = \"0\"\nspeed = \"1Gf\"\nbw = \"1\\nGBs\"\nlat = \"0\"\n",
    );
    assert_eq!(
        e,
        "bad.toml:5:6: `bw`: unknown bandwidth unit `GBs` in `1\\nGBs` (expected one of Bps, kBps, MBps, \
         GBps, KiBps, MiBps, GiBps, bps, kbps, Mbps, Gbps, Mibps, Gibps)"
    );
}

/// Was 13 s and several GB: a 400 KB prefix repeated in the names of 4096 hosts.
#[test]
fn long_cluster_names_are_an_error() {
    let e = toml_error(&format!(
        "[[cluster]]\nid = \"c\"\nprefix = \"{}\"\nradical = \"0-3\"\nspeed = \"1Gf\"\nbw = \"1GBps\"\nlat = \"1us\"\n",
        "a".repeat(257)
    ));
    assert_starts(
        &e,
        "bad.toml:3:10: invalid value `aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...` for `prefix`: 257 bytes, more than 256",
    );
}

/// A zone of declared routes is quadratic in memory and (Floyd) cubic in time.
#[test]
fn routed_zone_of_absurd_size_is_an_error() {
    let hosts: String = (0..2049)
        .map(|i| format!("<host id=\"h{i}\" speed=\"1Gf\"/>\n"))
        .collect();
    let text = format!(
        "<?xml version='1.0'?>\n<platform version=\"4.1\">\n<zone id=\"z\" routing=\"Floyd\">\n{hosts}</zone>\n</platform>\n"
    );
    let e = xml_error(&text);
    assert_starts(
        &e,
        "bad.xml:3:1: unsupported a zone of declared routes with 2049 hosts and routers: such a zone \
         holds at most 2048",
    );
}
