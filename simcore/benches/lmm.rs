//! Benchmarks of the max-min solver at network scale, and of the kernel's event loop.
//!
//! - `lmm_flow_update/{add,remove}/N`: the cost of one flow starting or ending while `N − 1`
//!   other flows are present, i.e. "add one variable + `solve()`" and "remove one variable +
//!   `solve()`", for N = 1e2, 1e3, 1e4, 1e5. The flows join random host pairs (fixed seed,
//!   `rand_pcg`) of a 4096-host 3-level fat tree (`3;16,16,16;1,16,16;1,1,1`, 10 GB/s, 1 us,
//!   SPLITDUPLEX: 24576 link constraints). As the kernel does, each flow is one variable with
//!   penalty = route latency and bound = the slowest link, expanded with weight 1 on every
//!   link of `platform.route(src, dst)` and 0.05 on every link of the reverse route. The
//!   routes are computed before timing.
//! - `engine_round_trips/N`: N actors on a 64-host fat tree, each doing 1000 rounds of
//!   "sleep 1 us, send 64 kB to another host, wait for it"; criterion's throughput is the
//!   number of kernel events processed per second.
//!
//! `cargo bench -p simcore --bench lmm -- --quick` runs everything in well under 2 minutes.

use std::hint::black_box;
use std::rc::Rc;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use simcore::lmm::{CnstId, Sharing, System, VarId};
use simcore::platform::{HostId, LinkId, Platform, SharingPolicy};
use simcore::{Ctx, KernelConfig, Simulation};

/// 4096 hosts: 256 leaf switches of 16 hosts, 16 × 16 parents per level, full bisection.
const FAT_TREE_4096: &str = r#"
[[cluster]]
id = "ft4096"
prefix = "node-"
radical = "0-4095"
speed = "1Gf"
bw = "10GBps"
lat = "1us"
sharing_policy = "SPLITDUPLEX"
topology = "fat_tree"
topo_parameters = "3;16,16,16;1,16,16;1,1,1"
"#;

/// 64 hosts: 8 leaf switches of 8 hosts, 8 top switches.
const FAT_TREE_64: &str = r#"
[[cluster]]
id = "ft64"
prefix = "node-"
radical = "0-63"
speed = "1Gf"
bw = "10GBps"
lat = "1us"
sharing_policy = "SPLITDUPLEX"
topology = "fat_tree"
topo_parameters = "2;8,8;1,8;1,1"
"#;

/// A flow's solver inputs, computed once.
struct FlowSpec {
    penalty: f64,
    bound: f64,
    links: Vec<LinkId>,
    back: Vec<LinkId>,
}

fn random_flow(p: &Platform, rng: &mut Pcg64) -> FlowSpec {
    let n = p.hosts.len() as u32;
    let src = rng.gen_range(0..n);
    let mut dst = rng.gen_range(0..n - 1);
    if dst >= src {
        dst += 1;
    }
    let (src, dst) = (HostId(src), HostId(dst));
    let links = p.route(src, dst);
    let back = p.route(dst, src);
    let penalty = p.route_latency(&links);
    let bound = links
        .iter()
        .map(|l| p.link(*l).bandwidth)
        .fold(f64::INFINITY, f64::min);
    FlowSpec {
        penalty,
        bound,
        links,
        back,
    }
}

/// A solver with one constraint per platform link, as the kernel builds it.
fn link_system(p: &Platform) -> (System, Vec<CnstId>) {
    let mut sys = System::default();
    let cnsts = p
        .links
        .iter()
        .map(|l| {
            let sharing = match l.sharing {
                SharingPolicy::Shared => Sharing::Shared,
                SharingPolicy::FatPipe => Sharing::FatPipe,
            };
            sys.add_constraint(l.bandwidth, sharing)
        })
        .collect();
    (sys, cnsts)
}

fn add_flow(sys: &mut System, cnsts: &[CnstId], f: &FlowSpec) -> VarId {
    let v = sys.add_variable(f.penalty, f.bound);
    for l in &f.links {
        sys.expand(cnsts[l.0 as usize], v, 1.0);
    }
    for l in &f.back {
        sys.expand(cnsts[l.0 as usize], v, 0.05);
    }
    v
}

fn bench_flow_updates(c: &mut Criterion) {
    let platform = Platform::from_toml_str(FAT_TREE_4096, "fat_tree_4096.toml").expect("valid platform");
    let mut group = c.benchmark_group("lmm_flow_update");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    for n in [100usize, 1_000, 10_000, 100_000] {
        let mut rng = Pcg64::seed_from_u64(0x5eed);
        let (mut sys, cnsts) = link_system(&platform);
        let setup = Instant::now();
        for _ in 0..n - 1 {
            let f = random_flow(&platform, &mut rng);
            add_flow(&mut sys, &cnsts, &f);
        }
        sys.solve();
        let setup = setup.elapsed();
        // The flows that come and go during the measurement.
        let probes: Vec<FlowSpec> = (0..64).map(|_| random_flow(&platform, &mut rng)).collect();
        let mut next = 0usize;
        let t = Instant::now();
        let v = add_flow(&mut sys, &cnsts, &probes[0]);
        let component = sys.solve().len();
        sys.remove_variable(v);
        sys.solve();
        eprintln!(
            "lmm_flow_update N={n}: setup {:.2?}, one add+solve+remove+solve {:.2?}, {component} \
             variables re-solved per update",
            setup,
            t.elapsed()
        );

        group.bench_function(BenchmarkId::new("add", n), |b| {
            b.iter_custom(|iters| {
                let mut timed = Duration::ZERO;
                for _ in 0..iters {
                    let f = &probes[next % probes.len()];
                    next += 1;
                    let t = Instant::now();
                    let v = add_flow(&mut sys, &cnsts, f);
                    black_box(sys.solve().len());
                    timed += t.elapsed();
                    sys.remove_variable(v);
                    sys.solve();
                }
                timed
            })
        });
        group.bench_function(BenchmarkId::new("remove", n), |b| {
            b.iter_custom(|iters| {
                let mut timed = Duration::ZERO;
                for _ in 0..iters {
                    let f = &probes[next % probes.len()];
                    next += 1;
                    let v = add_flow(&mut sys, &cnsts, f);
                    sys.solve();
                    let t = Instant::now();
                    sys.remove_variable(v);
                    black_box(sys.solve().len());
                    timed += t.elapsed();
                }
                timed
            })
        });
    }
    group.finish();
}

/// Runs `actors` actors doing `rounds` rounds of sleep + 64 kB send; returns the event count.
fn round_trips(platform: &Rc<Platform>, actors: usize, rounds: usize) -> u64 {
    let config = KernelConfig {
        stack_size: 256 << 10,
        ..KernelConfig::default()
    };
    let mut sim = Simulation::new(platform.clone(), config);
    let n = platform.hosts.len();
    for i in 0..actors {
        let me = HostId((i % n) as u32);
        let peer = HostId(((i * 7 + 1) % n) as u32);
        sim.spawn(format!("actor-{i}"), me, move |ctx: &Ctx| {
            for r in 0..rounds {
                ctx.sleep(1e-6);
                let c = ctx.comm_async(me, peer, 65536.0, r as u64);
                ctx.wait(c);
                ctx.release(c);
            }
            Ok(())
        });
    }
    sim.run().expect("the benchmark scenario runs").events
}

fn bench_engine(c: &mut Criterion) {
    let platform = Rc::new(Platform::from_toml_str(FAT_TREE_64, "fat_tree.toml").expect("valid platform"));
    let mut group = c.benchmark_group("engine_round_trips");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    for actors in [1usize, 16, 64] {
        let events = round_trips(&platform, actors, 1000);
        let t = Instant::now();
        round_trips(&platform, actors, 1000);
        let secs = t.elapsed().as_secs_f64();
        eprintln!(
            "engine_round_trips {actors} actors x 1000: {events} events, {:.3} s, {:.0} events/s",
            secs,
            events as f64 / secs
        );
        group.throughput(Throughput::Elements(events));
        group.bench_function(BenchmarkId::from_parameter(actors), |b| {
            b.iter(|| round_trips(&platform, actors, 1000))
        });
    }
    group.finish();
}

criterion_group!(benches, bench_flow_updates, bench_engine);
criterion_main!(benches);
