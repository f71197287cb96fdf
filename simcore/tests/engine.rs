//! Kernel behaviour with numbers: small platforms written inline in TOML, actors run by
//! [`Simulation`], and the simulated dates checked against closed-form values.
//!
//! - network (CM02 family, see `NetworkConfig`): one flow lasts `lat_factor·L + S/(bw_factor·B)`
//!   with `B = min(min_l bw_l, γ/(2L))`; SimGrid's `cm02-tcpgamma` oracles; fair sharing of a
//!   link; independence of disjoint fat-tree paths; shares inversely proportional to the
//!   penalty (the route latency when `weight_s = 0`); the 1.05 cross-traffic slowdown; rates
//!   re-shared when a flow starts, ends or is cancelled mid-way;
//! - computation: `execute(f)` lasts `f/speed`, actors on one host share its cores;
//! - `sleep`, `wait_any`, manual activities;
//! - errors: deadlock report, failing and panicking actors;
//! - determinism: identical traces and bit-identical end dates across runs;
//! - prefetch hints (`set_hot_lines`): any address is harmless.
//!
//! The kernel's crash reporter keeps a process-wide registry of actor stacks that assumes a
//! single simulation thread, so every test here takes [`serial`] before running a simulation.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::{Mutex, MutexGuard};

use simcore::platform::{HostId, Platform};
use simcore::{ActivityId, Ctx, KernelConfig, NetworkConfig, NetworkFactors, SimError, Simulation};

/// One simulation at a time in this process (see the module docs).
fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

fn platform(toml: &str) -> Rc<Platform> {
    Rc::new(Platform::from_toml_str(toml, "inline.toml").unwrap_or_else(|e| panic!("{e}")))
}

fn host(p: &Platform, name: &str) -> HostId {
    p.host_by_name(name).unwrap_or_else(|| panic!("no host {name}"))
}

/// `|got − want| ≤ rel·|want|` (plus a tiny absolute slack for 0).
#[track_caller]
fn assert_close(got: f64, want: f64, rel: f64) {
    assert!(
        (got - want).abs() <= rel * want.abs() + 1e-15,
        "got {got:.12}, want {want:.12} (rel. error {:.3e})",
        (got - want).abs() / want.abs()
    );
}

/// Hosts `h1` and `h2` joined by one link `l` (route `h1 -> h2` = `[l]`, or `[l_UP]` for a
/// SPLITDUPLEX link, whose reverse half `l_DOWN` carries `h2 -> h1`).
fn one_link(bw: &str, lat: &str, sharing: &str) -> Rc<Platform> {
    let link = if sharing == "SPLITDUPLEX" { "l_UP" } else { "l" };
    platform(&format!(
        r#"
[[host]]
id = "h1"
speed = "1Gf"
[[host]]
id = "h2"
speed = "1Gf"
[[link]]
id = "l"
bandwidth = "{bw}"
latency = "{lat}"
sharing_policy = "{sharing}"
[[route]]
src = "h1"
dst = "h2"
links = ["{link}"]
"#
    ))
}

/// A network configuration: plain factors, the given TCP-gamma and cross-traffic.
fn net(tcp_gamma: f64, crosstraffic: bool) -> KernelConfig {
    KernelConfig {
        network: NetworkConfig {
            tcp_gamma,
            crosstraffic,
            ..NetworkConfig::default()
        },
        ..KernelConfig::default()
    }
}

/// A flow: `size` bytes from `src` to `dst`, started at `start`.
struct Flow<'a> {
    src: &'a str,
    dst: &'a str,
    size: f64,
    start: f64,
}

fn flow<'a>(src: &'a str, dst: &'a str, size: f64) -> Flow<'a> {
    Flow {
        src,
        dst,
        size,
        start: 0.0,
    }
}

/// Runs one actor per flow (on the source host) that sleeps until the flow's start, sends it
/// and waits for its end. Returns each flow's end date.
fn run_flows(p: &Rc<Platform>, config: KernelConfig, flows: &[Flow]) -> Vec<f64> {
    let _serial = serial();
    let mut sim = Simulation::new(p.clone(), config);
    let ends = Rc::new(RefCell::new(vec![f64::NAN; flows.len()]));
    for (i, f) in flows.iter().enumerate() {
        let (src, dst, size, start) = (host(p, f.src), host(p, f.dst), f.size, f.start);
        let ends = ends.clone();
        sim.spawn(format!("flow-{i}"), src, move |ctx: &Ctx| {
            if start > 0.0 {
                ctx.sleep(start);
            }
            let c = ctx.comm_async(src, dst, size, i as u64);
            ctx.wait(c);
            ctx.release(c);
            ends.borrow_mut()[i] = ctx.now();
            Ok(())
        });
    }
    sim.run().unwrap_or_else(|e| panic!("{e}"));
    let out = ends.borrow().clone();
    out
}

// ---------------------------------------------------------------------------------------------
// One flow: latency phase + bandwidth phase

/// S bytes over a route of latency L and bottleneck B end at L + S/B (SPLITDUPLEX, so the
/// cross-traffic of the flow lands on the other direction's link).
#[test]
fn one_flow_lasts_latency_plus_size_over_bandwidth() {
    let p = one_link("1GBps", "10us", "SPLITDUPLEX");
    let t = run_flows(&p, KernelConfig::default(), &[flow("h1", "h2", 1e8)]);
    assert_close(t[0], 1e-5 + 1e8 / 1e9, 1e-12);
}

/// Over a multi-link route the latencies add up and the slowest link is the bottleneck:
/// a -> b crosses `fast` (10 us, 1 GB/s) then `slow` (30 us, 100 MB/s): 40 us + S / 100 MB/s.
#[test]
fn one_flow_over_a_multi_link_route() {
    let p = platform(
        r#"
routing = "full"
[[host]]
id = "a"
speed = "1Gf"
[[host]]
id = "b"
speed = "1Gf"
[[link]]
id = "fast"
bandwidth = "1GBps"
latency = "10us"
sharing_policy = "SPLITDUPLEX"
[[link]]
id = "slow"
bandwidth = "100MBps"
latency = "30us"
sharing_policy = "SPLITDUPLEX"
[[route]]
src = "a"
dst = "b"
links = ["fast_UP", "slow_UP"]
"#,
    );
    let t = run_flows(&p, KernelConfig::default(), &[flow("a", "b", 1e7)]);
    assert_close(t[0], 4e-5 + 1e7 / 1e8, 1e-12);
}

/// Constant latency and bandwidth factors: `T = lf·L + S/(bf·B)`.
struct ConstFactors {
    latency: f64,
    bandwidth: f64,
}

impl NetworkFactors for ConstFactors {
    fn latency_factor(&self, _size: f64) -> f64 {
        self.latency
    }
    fn bandwidth_factor(&self, _size: f64) -> f64 {
        self.bandwidth
    }
}

/// Factors that apply only to messages of more than `threshold` bytes (checks that the
/// kernel passes the message size).
struct LargeMessageFactors {
    threshold: f64,
}

impl NetworkFactors for LargeMessageFactors {
    fn latency_factor(&self, size: f64) -> f64 {
        if size > self.threshold {
            3.0
        } else {
            1.0
        }
    }
    fn bandwidth_factor(&self, size: f64) -> f64 {
        if size > self.threshold {
            0.5
        } else {
            1.0
        }
    }
}

#[test]
fn latency_and_bandwidth_factors() {
    let p = one_link("1GBps", "10us", "SPLITDUPLEX");
    let cfg = KernelConfig {
        network: NetworkConfig {
            factors: Box::new(ConstFactors {
                latency: 2.5,
                bandwidth: 0.8,
            }),
            ..NetworkConfig::default()
        },
        ..KernelConfig::default()
    };
    let t = run_flows(&p, cfg, &[flow("h1", "h2", 1e8)]);
    assert_close(t[0], 2.5 * 1e-5 + 1e8 / (0.8 * 1e9), 1e-12);

    // Size-dependent: a 1 kB message is below the threshold, a 100 MB one above it.
    let cfg = KernelConfig {
        network: NetworkConfig {
            factors: Box::new(LargeMessageFactors { threshold: 65536.0 }),
            ..NetworkConfig::default()
        },
        ..KernelConfig::default()
    };
    let small = Flow {
        start: 1.0,
        ..flow("h1", "h2", 1e3)
    };
    let t = run_flows(&p, cfg, &[flow("h1", "h2", 1e8), small]);
    assert_close(t[0], 3.0 * 1e-5 + 1e8 / (0.5 * 1e9), 1e-12);
    assert_close(t[1], 1.0 + 1e-5 + 1e3 / 1e9, 1e-12);
}

/// SimGrid's LV08 documentation example: 100 kB over one SHARED 1 Mb/s link of 10 ms with
/// latency factor 13.01, bandwidth factor 0.97, weight-S 20537 and cross-traffic (the ACKs on
/// the same SHARED link: ×1.05): 0.01·13.01 + 8e5 / (0.97·1e6 / 1.05) = 0.996 s.
#[test]
fn lv08_documentation_example() {
    let p = one_link("1Mbps", "10ms", "SHARED");
    let cfg = KernelConfig {
        network: NetworkConfig {
            factors: Box::new(ConstFactors {
                latency: 13.01,
                bandwidth: 0.97,
            }),
            weight_s: 20537.0,
            ..NetworkConfig::default()
        },
        ..KernelConfig::default()
    };
    let t = run_flows(&p, cfg, &[flow("h1", "h2", 1e5)]);
    assert_close(t[0], 0.01 * 13.01 + 8e5 / (0.97 * 1e6 / 1.05), 1e-12);
    assert!((t[0] - 0.996).abs() < 5e-4, "{}", t[0]);
}

/// SimGrid `teshsuite/models/cm02-tcpgamma`: 10 GB over one 10 GB/s link, cross-traffic off.
/// The window bound γ/(2L) (γ = 4194304 B) only matters once it is below the bandwidth.
#[test]
fn cm02_tcp_gamma_oracles() {
    let run = |lat: &str, gamma: f64| {
        let p = one_link("10GBps", lat, "SHARED");
        run_flows(&p, net(gamma, false), &[flow("h1", "h2", 1e10)])[0]
    };
    let gamma = 4194304.0;
    // lat 0: no window bound, the bandwidth is used: 1 s.
    assert_close(run("0s", gamma), 1.0, 1e-12);
    // lat 1e-5: γ/2L ≈ 2.1e11 B/s > 1e10 B/s: 1.00001 s.
    assert_close(run("10us", gamma), 1.00001, 1e-12);
    // lat 1e-3: γ/2L ≈ 2.1e9 B/s < 1e10 B/s: window-limited, 4.769372 s.
    let t = run("1ms", gamma);
    assert_close(t, 1e-3 + 1e10 / (gamma / 2e-3), 1e-12);
    assert!((t - 4.769372).abs() < 5e-7, "{t}");
    // lat 0.1: 476.937158 s.
    let t = run("100ms", gamma);
    assert!((t - 476.937158).abs() < 5e-7, "{t}");
    // lat 1e-3 with γ = 0: no window bound: 1.001 s.
    assert_close(run("1ms", 0.0), 1.001, 1e-12);
}

// ---------------------------------------------------------------------------------------------
// Sharing

/// 16-host 2-level fat tree `2;4,4;1,2;1,1` (4 leaf switches of 4 hosts, 2 top switches);
/// every cable 1 GB/s, 10 us, SPLITDUPLEX.
const FAT_TREE_16: &str = r#"
[[cluster]]
id = "ft"
prefix = "node-"
radical = "0-15"
speed = "1Gf"
bw = "1GBps"
lat = "10us"
topology = "fat_tree"
topo_parameters = "2;4,4;1,2;1,1"
"#;

/// node-0 -> node-1 and node-2 -> node-1 share node-1's down cable: each gets B/2 and both end
/// at L + 2S/B. node-4 -> node-5, under another leaf switch, is unaffected: L + S/B.
#[test]
fn two_flows_share_a_link_and_a_disjoint_path_is_unaffected() {
    let p = platform(FAT_TREE_16);
    let routes: Vec<_> = [("node-0", "node-1"), ("node-2", "node-1"), ("node-4", "node-5")]
        .iter()
        .map(|(s, d)| p.route(host(&p, s), host(&p, d)))
        .collect();
    for r in &routes {
        assert_eq!(r.len(), 2, "within a leaf switch: host -> leaf -> host");
    }
    assert_eq!(routes[0][1], routes[1][1], "both end on node-1's down cable");
    assert!(routes[2]
        .iter()
        .all(|l| !routes[0].contains(l) && !routes[1].contains(l)));

    let (s, b, l) = (1e8, 1e9, 2e-5);
    let t = run_flows(
        &p,
        KernelConfig::default(),
        &[
            flow("node-0", "node-1", s),
            flow("node-2", "node-1", s),
            flow("node-4", "node-5", s),
        ],
    );
    assert_close(t[0], l + 2.0 * s / b, 1e-9);
    assert_close(t[1], l + 2.0 * s / b, 1e-9);
    assert_close(t[2], l + s / b, 1e-12);
}

/// Penalties 1 and 2 on one bottleneck get 2/3 and 1/3 of it. With weight-S = 0 the penalty is
/// the route latency: a -> c crosses la (1 s) + lc, b -> c crosses lb (2 s) + lc; lc is the
/// 300 B/s bottleneck (latency 0), la and lb are fast. Cross-traffic and γ off.
///
/// Flow A (900 B): latency until t=1, alone at 300 B/s until t=2 (300 B), then 200 B/s (2/3)
/// until t=5 (600 B). Flow B (600 B): latency until t=2, 100 B/s (1/3) until t=5 (300 B), then
/// alone at 300 B/s until t=6.
#[test]
fn shares_are_inversely_proportional_to_the_latency_penalty() {
    let p = platform(
        r#"
[[host]]
id = "a"
speed = "1Gf"
[[host]]
id = "b"
speed = "1Gf"
[[host]]
id = "c"
speed = "1Gf"
[[link]]
id = "la"
bandwidth = "1GBps"
latency = "1s"
[[link]]
id = "lb"
bandwidth = "1GBps"
latency = "2s"
[[link]]
id = "lc"
bandwidth = "300Bps"
latency = "0s"
[[route]]
src = "a"
dst = "c"
links = ["la", "lc"]
[[route]]
src = "b"
dst = "c"
links = ["lb", "lc"]
[[route]]
src = "a"
dst = "b"
links = ["la", "lb"]
"#,
    );
    let t = run_flows(
        &p,
        net(0.0, false),
        &[flow("a", "c", 900.0), flow("b", "c", 600.0)],
    );
    assert_close(t[0], 5.0, 1e-12);
    assert_close(t[1], 6.0, 1e-12);
}

/// Cross-traffic: a flow's ACKs load the reverse route at 0.05. On a SHARED link the two
/// directions are one constraint, so the flow gets B/1.05; two opposite flows get B/2.1 each.
/// On a SPLITDUPLEX link a lone flow gets B, and two opposite flows B/1.05 each (each half
/// carries one flow's data and the other's ACKs).
#[test]
fn crosstraffic_slows_flows_by_1_05() {
    let (s, b, l) = (1e8, 1e9, 1e-5);
    let shared = one_link("1GBps", "10us", "SHARED");
    let t = run_flows(&shared, KernelConfig::default(), &[flow("h1", "h2", s)]);
    assert_close(t[0], l + 1.05 * s / b, 1e-12);
    let t = run_flows(
        &shared,
        KernelConfig::default(),
        &[flow("h1", "h2", s), flow("h2", "h1", s)],
    );
    assert_close(t[0], l + 2.1 * s / b, 1e-9);
    assert_close(t[1], l + 2.1 * s / b, 1e-9);
    // Without cross-traffic: B.
    let t = run_flows(&shared, net(4194304.0, false), &[flow("h1", "h2", s)]);
    assert_close(t[0], l + s / b, 1e-12);

    let duplex = one_link("1GBps", "10us", "SPLITDUPLEX");
    let t = run_flows(&duplex, KernelConfig::default(), &[flow("h1", "h2", s)]);
    assert_close(t[0], l + s / b, 1e-12);
    let t = run_flows(
        &duplex,
        KernelConfig::default(),
        &[flow("h1", "h2", s), flow("h2", "h1", s)],
    );
    assert_close(t[0], l + 1.05 * s / b, 1e-9);
    assert_close(t[1], l + 1.05 * s / b, 1e-9);
}

/// Rates are re-shared when a flow starts in the middle of another (latency 0, 1 GB/s):
/// A (3 GB) alone on [0,1] (1 GB), with B on [1,3] (1 GB each), alone on [3,4]: A ends at 4,
/// B (1 GB, starting at 1) at 3.
#[test]
fn rates_are_reshared_when_a_flow_starts_and_ends() {
    let p = one_link("1GBps", "0s", "SPLITDUPLEX");
    let late = Flow {
        start: 1.0,
        ..flow("h1", "h2", 1e9)
    };
    let t = run_flows(&p, KernelConfig::default(), &[flow("h1", "h2", 3e9), late]);
    assert_close(t[0], 4.0, 1e-12);
    assert_close(t[1], 3.0, 1e-12);
}

/// A flow in its latency phase loads no link (γ off, 1 s link latency): A (2 GB) is alone on
/// [1, 2.5] (1.5 GB) although B started at 1.5, then both share until A ends at 3.5; B (1 GB)
/// has 0.5 GB left and ends alone at 4.
#[test]
fn latency_phase_does_not_load_links() {
    let p = one_link("1GBps", "1s", "SPLITDUPLEX");
    let late = Flow {
        start: 1.5,
        ..flow("h1", "h2", 1e9)
    };
    let t = run_flows(&p, net(0.0, true), &[flow("h1", "h2", 2e9), late]);
    assert_close(t[0], 3.5, 1e-12);
    assert_close(t[1], 4.0, 1e-12);
}

/// An empty message only pays the latency; an empty computation ends at once.
#[test]
fn empty_message_and_empty_computation() {
    let p = one_link("1GBps", "10us", "SPLITDUPLEX");
    let t = run_flows(&p, KernelConfig::default(), &[flow("h1", "h2", 0.0)]);
    assert_close(t[0], 1e-5, 1e-12);
    assert_eq!(run_execs(&[("single", 0.5, 0.0)])[0], 0.5);
}

/// Releasing a running communication cancels it and gives its share back: A (10 GB) and B
/// (3 GB) share 1 GB/s; A is released at t=1, so B has 2.5 GB left at full rate: ends at 3.5.
#[test]
fn cancelling_a_flow_frees_its_bandwidth() {
    let _serial = serial();
    let p = one_link("1GBps", "0s", "SPLITDUPLEX");
    let (h1, h2) = (host(&p, "h1"), host(&p, "h2"));
    let mut sim = Simulation::new(p.clone(), KernelConfig::default());
    sim.spawn("canceller", h1, move |ctx: &Ctx| {
        let a = ctx.comm_async(h1, h2, 1e10, 0);
        ctx.sleep(1.0);
        assert!(!ctx.test(a));
        ctx.release(a);
        Ok(())
    });
    let end = Rc::new(Cell::new(f64::NAN));
    let e = end.clone();
    sim.spawn("survivor", h1, move |ctx: &Ctx| {
        let b = ctx.comm_async(h1, h2, 3e9, 1);
        ctx.wait(b);
        ctx.release(b);
        e.set(ctx.now());
        Ok(())
    });
    let summary = sim.run().unwrap_or_else(|e| panic!("{e}"));
    assert_close(end.get(), 3.5, 1e-12);
    assert_close(summary.time, 3.5, 1e-12);
}

/// The completion hook sees every communication, in completion order, with its user tag.
#[test]
fn comm_done_hook_reports_user_tags_in_completion_order() {
    let _serial = serial();
    let p = one_link("1GBps", "0s", "SPLITDUPLEX");
    let (h1, h2) = (host(&p, "h1"), host(&p, "h2"));
    let mut sim = Simulation::new(p, KernelConfig::default());
    let seen = Rc::new(RefCell::new(Vec::new()));
    let s = seen.clone();
    let handle = sim.handle();
    sim.on_comm_done(move |_, user| s.borrow_mut().push((user, handle.now())));
    sim.spawn("sender", h1, move |ctx: &Ctx| {
        let big = ctx.comm_async(h1, h2, 2e9, 7);
        let small = ctx.comm_async(h1, h2, 1e9, 42);
        ctx.wait(big);
        ctx.release(big);
        ctx.release(small);
        Ok(())
    });
    sim.run().unwrap_or_else(|e| panic!("{e}"));
    // Both at 0.5 GB/s until the small one ends at 2, then the big one alone until 3.
    let seen = seen.borrow();
    assert_eq!(seen.iter().map(|s| s.0).collect::<Vec<_>>(), vec![42, 7]);
    assert_close(seen[0].1, 2.0, 1e-12);
    assert_close(seen[1].1, 3.0, 1e-12);
}

// ---------------------------------------------------------------------------------------------
// Computation, sleep, waits

/// `single`: 1 core at 1 Gf/s; `dual`: 2 cores at 1 Gf/s each.
fn compute_platform() -> Rc<Platform> {
    platform(
        r#"
[[host]]
id = "single"
speed = "1Gf"
core = 1
[[host]]
id = "dual"
speed = "1Gf"
core = 2
[[link]]
id = "l"
bandwidth = "1GBps"
latency = "10us"
[[route]]
src = "single"
dst = "dual"
links = ["l"]
"#,
    )
}

/// Runs one actor per `(host, start, flops)` that sleeps until `start` then executes `flops`;
/// returns the end dates.
fn run_execs(tasks: &[(&str, f64, f64)]) -> Vec<f64> {
    let _serial = serial();
    let p = compute_platform();
    let mut sim = Simulation::new(p.clone(), KernelConfig::default());
    let ends = Rc::new(RefCell::new(vec![f64::NAN; tasks.len()]));
    for (i, &(h, start, flops)) in tasks.iter().enumerate() {
        let ends = ends.clone();
        sim.spawn(format!("exec-{i}"), host(&p, h), move |ctx: &Ctx| {
            if start > 0.0 {
                ctx.sleep(start);
            }
            ctx.execute(flops);
            ends.borrow_mut()[i] = ctx.now();
            Ok(())
        });
    }
    sim.run().unwrap_or_else(|e| panic!("{e}"));
    let out = ends.borrow().clone();
    out
}

#[test]
fn execute_takes_flops_over_speed() {
    assert_close(run_execs(&[("single", 0.0, 2e9)])[0], 2.0, 1e-12);
    // An execution uses one core: 2e9 flop on the dual-core host still take 2 s.
    assert_close(run_execs(&[("dual", 0.0, 2e9)])[0], 2.0, 1e-12);
}

#[test]
fn actors_share_a_host_cpu() {
    // Two actors on one core: half speed each.
    let t = run_execs(&[("single", 0.0, 1e9), ("single", 0.0, 1e9)]);
    assert_close(t[0], 2.0, 1e-12);
    assert_close(t[1], 2.0, 1e-12);
    // Two actors on two cores: full speed each.
    let t = run_execs(&[("dual", 0.0, 1e9), ("dual", 0.0, 1e9)]);
    assert_close(t[0], 1.0, 1e-12);
    assert_close(t[1], 1.0, 1e-12);
    // Three actors on two cores: 2/3 of a core each.
    let t = run_execs(&[("dual", 0.0, 1e9), ("dual", 0.0, 1e9), ("dual", 0.0, 1e9)]);
    for x in t {
        assert_close(x, 1.5, 1e-12);
    }
    // A (2 Gf) alone on [0,1], shares with B (0.5 Gf, from t=1) on [1,2], alone on [2,2.5].
    let t = run_execs(&[("single", 0.0, 2e9), ("single", 1.0, 5e8)]);
    assert_close(t[0], 2.5, 1e-12);
    assert_close(t[1], 2.0, 1e-12);
}

#[test]
fn sleep_advances_the_clock() {
    let _serial = serial();
    let p = compute_platform();
    let mut sim = Simulation::new(p.clone(), KernelConfig::default());
    let dates = Rc::new(RefCell::new(Vec::new()));
    let d = dates.clone();
    sim.spawn("sleeper", host(&p, "single"), move |ctx: &Ctx| {
        ctx.sleep(2.5);
        d.borrow_mut().push(ctx.now());
        ctx.sleep(0.0);
        d.borrow_mut().push(ctx.now());
        ctx.sleep(0.25);
        d.borrow_mut().push(ctx.now());
        Ok(())
    });
    let summary = sim.run().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(*dates.borrow(), vec![2.5, 2.5, 2.75]);
    assert_eq!(summary.time, 2.75);
    assert_eq!(summary.finish_times, vec![2.75]);
}

/// Hot lines are prefetch hints: any address (null, unmapped, kernel space, more of them
/// than are kept) leaves the run and its dates unchanged.
#[test]
fn hot_lines_are_hints_that_never_fault() {
    let _serial = serial();
    let p = compute_platform();
    let mut sim = Simulation::new(p.clone(), KernelConfig::default());
    let dates = Rc::new(RefCell::new(Vec::new()));
    for i in 0..3u32 {
        let d = dates.clone();
        let id = sim.spawn(format!("a{i}"), host(&p, "single"), move |ctx: &Ctx| {
            for _ in 0..3 {
                ctx.sleep(0.5 * f64::from(i + 1));
                ctx.yield_now();
            }
            d.borrow_mut().push((i, ctx.now()));
            Ok(())
        });
        let bogus = [0, 8, 0xdead_beef_0000, usize::MAX & !63, 0xffff_8000_0000_0000];
        sim.set_hot_lines(id, &bogus.repeat(usize::from(i as u8) + 1));
    }
    sim.run().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(*dates.borrow(), vec![(0, 1.5), (1, 3.0), (2, 4.5)]);
}

/// `wait_any` returns the index of the first activity to finish; if several are already
/// finished, the first of them in slice order.
#[test]
fn wait_any_returns_the_first_finished() {
    let _serial = serial();
    let p = compute_platform();
    let mut sim = Simulation::new(p.clone(), KernelConfig::default());
    let log = Rc::new(RefCell::new(Vec::new()));
    let l = log.clone();
    sim.spawn("waiter", host(&p, "single"), move |ctx: &Ctx| {
        let acts = [ctx.sleep_async(3.0), ctx.sleep_async(1.0), ctx.exec_async(2e9)];
        let i = ctx.wait_any(&acts);
        l.borrow_mut().push((i, ctx.now()));
        let i = ctx.wait_any(&[acts[0], acts[2]]);
        l.borrow_mut().push((i, ctx.now()));
        // All three are finished now: the first in slice order.
        ctx.sleep(5.0);
        let i = ctx.wait_any(&[acts[2], acts[0], acts[1]]);
        l.borrow_mut().push((i, ctx.now()));
        for a in acts {
            ctx.release(a);
        }
        Ok(())
    });
    sim.run().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(*log.borrow(), vec![(1, 1.0), (1, 2.0), (0, 7.0)]);
}

/// A manual activity completed by another actor wakes its waiter at that date.
#[test]
fn manual_activity_completed_by_another_actor() {
    let _serial = serial();
    let p = compute_platform();
    let h = host(&p, "single");
    let mut sim = Simulation::new(p, KernelConfig::default());
    let shared: Rc<Cell<Option<ActivityId>>> = Rc::new(Cell::new(None));
    let woken = Rc::new(Cell::new(f64::NAN));
    let (s, w) = (shared.clone(), woken.clone());
    sim.spawn("waiter", h, move |ctx: &Ctx| {
        let m = ctx.manual_create();
        s.set(Some(m));
        ctx.wait(m);
        ctx.release(m);
        w.set(ctx.now());
        Ok(())
    });
    sim.spawn("completer", h, move |ctx: &Ctx| {
        ctx.sleep(2.0);
        ctx.complete(shared.get().expect("the waiter ran first"));
        Ok(())
    });
    sim.run().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(woken.get(), 2.0);
}

// ---------------------------------------------------------------------------------------------
// Errors

#[test]
fn deadlock_lists_every_blocked_actor() {
    let _serial = serial();
    let p = compute_platform();
    let (single, dual) = (host(&p, "single"), host(&p, "dual"));
    let mut sim = Simulation::new(p, KernelConfig::default());
    for (name, h) in [("alice", single), ("bob", dual)] {
        sim.spawn(name, h, |ctx: &Ctx| {
            let m = ctx.manual_create();
            ctx.wait(m); // nobody completes it
            Ok(())
        });
    }
    sim.spawn("carol", single, |ctx: &Ctx| {
        ctx.sleep(1.0);
        Ok(())
    });
    match sim.run() {
        Err(SimError::Deadlock { time, blocked }) => {
            assert_eq!(time, 1.0);
            let names: Vec<&str> = blocked.iter().map(|b| b.name.as_str()).collect();
            assert_eq!(names, vec!["alice", "bob"]);
            assert_eq!(blocked[0].host, single);
            assert_eq!(blocked[1].host, dual);
            for b in &blocked {
                assert_eq!(b.waiting_on.len(), 1, "{b:?}");
                assert!(b.waiting_on[0].starts_with("event #"), "{b:?}");
            }
        }
        other => panic!("expected a deadlock, got {other:?}"),
    }
}

#[test]
fn a_panicking_actor_fails_the_run_with_its_name() {
    let _serial = serial();
    let p = compute_platform();
    let h = host(&p, "single");
    let mut sim = Simulation::new(p, KernelConfig::default());
    sim.spawn("bystander", h, |ctx: &Ctx| {
        ctx.sleep(10.0);
        Ok(())
    });
    let crasher = sim.spawn("crasher", h, |ctx: &Ctx| {
        ctx.sleep(1.0);
        panic!("boom at {}", ctx.now());
    });
    match sim.run() {
        Err(SimError::ActorFailed {
            actor,
            name,
            time,
            message,
        }) => {
            assert_eq!(actor, crasher);
            assert_eq!(name, "crasher");
            assert_eq!(time, 1.0);
            assert!(message.contains("boom at 1"), "{message}");
        }
        other => panic!("expected ActorFailed, got {other:?}"),
    }
}

/// An address on the caller's stack.
#[inline(never)]
fn stack_address() -> usize {
    let here = 0u8;
    std::hint::black_box(&here) as *const u8 as usize
}

#[test]
fn scratch_stack_runs_code_elsewhere_nested_calls_in_place_and_panics_go_through() {
    let here = stack_address();
    let scratch = simcore::on_scratch_stack(stack_address);
    // Another stack: the thread's own is far from the 8 MiB scratch mapping.
    assert!(here.abs_diff(scratch) > 1 << 20, "{here:#x} vs {scratch:#x}");
    // A nested call runs in place: a second switch to the stack's base would write its
    // frames over the caller's, canary included.
    let intact = simcore::on_scratch_stack(|| {
        let canary = std::hint::black_box([0xa5u8; 4096]);
        simcore::on_scratch_stack(|| std::hint::black_box([0x5au8; 16384]).len());
        std::hint::black_box(&canary).iter().all(|&b| b == 0xa5)
    });
    assert!(intact, "a nested call overwrote its caller's frame");
    let caught = std::panic::catch_unwind(|| simcore::on_scratch_stack(|| panic!("on the scratch stack")));
    let message = caught.expect_err("the panic reaches the caller");
    assert_eq!(message.downcast_ref::<&str>(), Some(&"on the scratch stack"));
    // Released by the unwinding: the next call switches to it again.
    assert_eq!(simcore::on_scratch_stack(stack_address), scratch);
}

#[test]
fn an_actor_blocking_on_the_scratch_stack_fails_the_run() {
    let _serial = serial();
    let p = compute_platform();
    let h = host(&p, "single");
    let mut sim = Simulation::new(p, KernelConfig::default());
    sim.spawn("sleeper", h, |ctx: &Ctx| {
        simcore::on_scratch_stack(|| ctx.sleep(1.0));
        Ok(())
    });
    match sim.run() {
        Err(SimError::ActorFailed { name, message, .. }) => {
            assert_eq!(name, "sleeper");
            assert!(message.contains("blocked on the scratch stack"), "{message}");
        }
        other => panic!("expected ActorFailed, got {other:?}"),
    }
}

#[test]
fn an_actor_returning_an_error_fails_the_run() {
    let _serial = serial();
    let p = compute_platform();
    let h = host(&p, "dual");
    let mut sim = Simulation::new(p, KernelConfig::default());
    sim.spawn("quitter", h, |ctx: &Ctx| {
        ctx.execute(5e8);
        Err("gave up".to_string())
    });
    match sim.run() {
        Err(SimError::ActorFailed {
            name, time, message, ..
        }) => {
            assert_eq!(name, "quitter");
            assert_close(time, 0.5, 1e-12);
            assert_eq!(message, "gave up");
        }
        other => panic!("expected ActorFailed, got {other:?}"),
    }
}

/// `Ctx::exit` ends an actor from any call depth: `Ok` lets the run go on, `Err` fails it.
#[test]
fn exit_ends_an_actor_from_a_nested_call() {
    fn deep(ctx: &Ctx, depth: usize, result: Result<(), String>) {
        if depth == 0 {
            ctx.exit(result);
        }
        deep(ctx, depth - 1, result);
    }
    let _serial = serial();
    let p = compute_platform();
    let h = host(&p, "single");
    let mut sim = Simulation::new(p.clone(), KernelConfig::default());
    sim.spawn("leaver", h, |ctx: &Ctx| {
        ctx.sleep(1.0);
        deep(ctx, 10, Ok(()));
        unreachable!("exit returned");
    });
    sim.spawn("stayer", h, |ctx: &Ctx| {
        ctx.sleep(2.0);
        Ok(())
    });
    let summary = sim.run().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(summary.finish_times, vec![1.0, 2.0]);

    let mut sim = Simulation::new(p, KernelConfig::default());
    sim.spawn("aborter", h, |ctx: &Ctx| {
        ctx.sleep(0.5);
        deep(ctx, 3, Err("MPI_Abort".to_string()));
        Ok(())
    });
    match sim.run() {
        Err(SimError::ActorFailed {
            name, time, message, ..
        }) => {
            assert_eq!(
                (name.as_str(), time, message.as_str()),
                ("aborter", 0.5, "MPI_Abort")
            );
        }
        other => panic!("expected ActorFailed, got {other:?}"),
    }
}

// ---------------------------------------------------------------------------------------------
// Determinism

/// A busy scenario on the 16-host fat tree: 16 actors mixing computations, sleeps and
/// overlapping communications of different sizes. Returns the trace and the end date.
fn busy_scenario(trace: bool) -> (Vec<String>, f64, u64) {
    let _serial = serial();
    let p = platform(FAT_TREE_16);
    let mut sim = Simulation::new(
        p.clone(),
        KernelConfig {
            trace,
            ..KernelConfig::default()
        },
    );
    let n = p.hosts.len();
    for i in 0..n {
        let me = HostId(i as u32);
        sim.spawn(format!("rank-{i}"), me, move |ctx: &Ctx| {
            for step in 0..20usize {
                let peer = HostId(((i * 7 + step * 3 + 1) % n) as u32);
                let size = 1e3 * (1 + (i + step) % 13) as f64 * 1e3;
                let c = ctx.comm_async(me, peer, size, (i * 100 + step) as u64);
                ctx.execute(1e6 * (1 + (i * step) % 5) as f64);
                if step % 3 == 0 {
                    ctx.sleep(1e-4 * (1 + i % 4) as f64);
                }
                ctx.wait(c);
                ctx.release(c);
            }
            Ok(())
        });
    }
    let summary = sim.run().unwrap_or_else(|e| panic!("{e}"));
    (sim.trace(), summary.time, summary.events)
}

#[test]
fn identical_runs_produce_identical_traces() {
    let (t1, end1, ev1) = busy_scenario(true);
    let (t2, end2, ev2) = busy_scenario(true);
    assert!(t1.len() > 16 * 20, "trace too short: {} lines", t1.len());
    assert_eq!(t1, t2);
    assert_eq!(end1.to_bits(), end2.to_bits());
    assert_eq!(ev1, ev2);
    // Tracing does not change the simulation.
    let (t3, end3, _) = busy_scenario(false);
    assert!(t3.is_empty());
    assert_eq!(end1.to_bits(), end3.to_bits());
}

#[test]
fn end_date_is_bit_identical_across_repetitions() {
    let first = busy_scenario(false).1;
    assert!(first > 0.0);
    for _ in 0..4 {
        assert_eq!(busy_scenario(false).1.to_bits(), first.to_bits());
    }
}

// ---------------------------------------------------------------------------------------------
// Activity slot reuse

/// A released activity's id is reused; events scheduled for its previous occupant must not
/// fire for the new one.
///
/// A (2 GB) and B (1 GB) share 1 GB/s from t=0: A's end is predicted at 4 (heap entry, version
/// 1). B ends at 2, A speeds up and is re-predicted at 3 (version 2); the entry at 4 is stale.
/// A is released at 3 and its slot is reused by a 10 s sleep, scheduled at 13 with version 1
/// (a fresh activity restarts at version 0), so the stale entry at 4 matches it and ends the
/// sleep 9 s early unless the kernel keeps versions increasing across reuse.
#[test]
fn reused_activity_slot_ignores_stale_events() {
    let _serial = serial();
    let p = one_link("1GBps", "0s", "SPLITDUPLEX");
    let (h1, h2) = (host(&p, "h1"), host(&p, "h2"));
    let mut sim = Simulation::new(p, KernelConfig::default());
    let dates = Rc::new(RefCell::new(Vec::new()));
    let d = dates.clone();
    sim.spawn("sender", h1, move |ctx: &Ctx| {
        let a = ctx.comm_async(h1, h2, 2e9, 0);
        let b = ctx.comm_async(h1, h2, 1e9, 1);
        ctx.wait(a);
        d.borrow_mut().push(ctx.now());
        ctx.release(b);
        ctx.release(a); // freed last, so the sleep below gets A's slot
        let s = ctx.sleep_async(10.0);
        assert_eq!(s, a, "the sleep reuses A's id (the scenario needs it)");
        ctx.wait(s);
        ctx.release(s);
        d.borrow_mut().push(ctx.now());
        Ok(())
    });
    sim.run().unwrap_or_else(|e| panic!("{e}"));
    let dates = dates.borrow();
    assert_close(dates[0], 3.0, 1e-12);
    assert_close(dates[1], 13.0, 1e-12);
}
