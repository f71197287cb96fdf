//! Zones of declared routes: SimGrid's Full, Floyd and Dijkstra routing.
//!
//! - **Full**: every host pair needs a declared `<route>`; nothing is inferred.
//! - **Floyd**: routes may go through `<router>`s; the route between two hosts is the chain of
//!   declared routes with the fewest links, found with SimGrid's Floyd–Warshall (cost of a
//!   declared route = its link count; ties keep the first path found, in SimGrid's loop order).
//! - **Dijkstra**: same costs, searched from each source host (ties may differ from Floyd's).
//!
//! A `<route>` is symmetrical unless `symmetrical="NO"`: the reverse route is the link list
//! reversed, with the `_UP`/`_DOWN` halves of SPLITDUPLEX links swapped. Declaring a route that
//! already exists (possibly as the mirror of a symmetrical one) is an error, as in SimGrid.
//!
//! A host without a declared route to itself uses the network model's `__loopback__` link
//! (FATPIPE; its bandwidth and latency, `network/loopback-bw` and `network/loopback-lat`, are
//! given by the loader: [`ModelLoopback`]), created only if some host needs it. As in SimGrid, a
//! host pair without a route is an error only when a message takes it: the simulation stops
//! there, naming both hosts.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

use crate::platform::build::Builder;
use crate::platform::error::{PlatformError, PlatformErrorKind as K};
use crate::platform::spec::{Direction, LinkRef, LinkSpec, Policy, Routing, Spec};
use crate::platform::{Host, HostId, LinkId, ModelLoopback, NoRoute, Router, SharingPolicy};

/// Name of the model-level loopback link.
pub(crate) const LOOPBACK_NAME: &str = "__loopback__";

/// The most hosts and routers in a zone of declared routes: its route table grows as the square
/// of the hosts, and Floyd's search as the cube of the points (2048 points: a few seconds).
pub(crate) const MAX_POINTS: usize = 2048;

/// Precomputed routes between the pairs of hosts that have one.
#[derive(Debug)]
pub(crate) struct FullRouter {
    routes: HashMap<(u32, u32), Box<[LinkId]>>,
    /// Host names, for the message of a missing route.
    names: Vec<String>,
}

impl Router for FullRouter {
    fn try_route(&self, src: HostId, dst: HostId, out: &mut Vec<LinkId>) -> Result<(), NoRoute> {
        match self.routes.get(&(src.0, dst.0)) {
            Some(r) => {
                out.extend_from_slice(r);
                Ok(())
            }
            None => Err(NoRoute {
                src: self.names[src.0 as usize].clone(),
                dst: self.names[dst.0 as usize].clone(),
                reason:
                    "the platform declares none (declare one, or use Floyd/Dijkstra routing through routers)"
                        .to_string(),
            }),
        }
    }
}

/// A declared link: its two halves (the same id twice unless SPLITDUPLEX).
#[derive(Copy, Clone, Debug)]
struct Declared {
    up: LinkId,
    down: LinkId,
    split: bool,
}

/// The `<link>`s of a file, by name, to resolve the `<link_ctn>`s of its routes.
#[derive(Debug, Default)]
pub(crate) struct DeclaredLinks {
    by_name: HashMap<String, Declared>,
    /// The other half of each SPLITDUPLEX half.
    mirror: HashMap<LinkId, LinkId>,
}

impl DeclaredLinks {
    /// Creates the links (both halves of a SPLITDUPLEX one).
    pub(crate) fn add(links: &[LinkSpec], b: &mut Builder) -> Result<Self, PlatformError> {
        let mut declared = DeclaredLinks::default();
        for l in links {
            let (up, down) = b.add_cable(&l.name, l.bandwidth, l.latency, l.policy, l.loc)?;
            let split = l.policy == Policy::SplitDuplex;
            declared
                .by_name
                .insert(l.name.clone(), Declared { up, down, split });
            if split {
                declared.mirror.insert(up, down);
                declared.mirror.insert(down, up);
            }
        }
        Ok(declared)
    }

    /// The link a `<link_ctn>` names: a SPLITDUPLEX link needs a direction (or the name of a
    /// half); any other link of the platform (a cluster's, say) may be named too.
    pub(crate) fn resolve(&self, b: &Builder, r: &LinkRef) -> Result<LinkId, PlatformError> {
        if let Some(d) = self.by_name.get(&r.name) {
            if !d.split {
                return Ok(d.up);
            }
            return match r.direction {
                Direction::Up => Ok(d.up),
                Direction::Down => Ok(d.down),
                Direction::None => Err(b.err(
                    r.loc,
                    K::InvalidValue {
                        key: "direction".to_string(),
                        value: "NONE".to_string(),
                        reason: format!(
                            "link `{}` is SPLITDUPLEX: give direction UP or DOWN (or name `{0}_UP` / `{0}_DOWN`)",
                            r.name
                        ),
                    },
                )),
            };
        }
        b.link_index
            .get(&r.name)
            .copied()
            .ok_or_else(|| b.err(r.loc, K::UnknownLink(r.name.clone())))
    }

    /// The links of a route as written.
    pub(crate) fn resolve_all(&self, b: &Builder, links: &[LinkRef]) -> Result<Vec<LinkId>, PlatformError> {
        links.iter().map(|r| self.resolve(b, r)).collect()
    }

    /// The reverse of a route: its links in reverse order, SPLITDUPLEX halves swapped.
    pub(crate) fn reversed(&self, links: &[LinkId]) -> Vec<LinkId> {
        links
            .iter()
            .rev()
            .map(|l| self.mirror.get(l).copied().unwrap_or(*l))
            .collect()
    }
}

/// Builds hosts, routers, links and the routes of a Full/Floyd/Dijkstra zone; `model_loopback`
/// is the link of hosts without a route to themselves.
pub(crate) fn build(
    spec: &Spec,
    b: &mut Builder,
    model_loopback: ModelLoopback,
) -> Result<Box<dyn Router>, PlatformError> {
    let points = spec.hosts.len() + spec.routers.len();
    if points > MAX_POINTS {
        return Err(b.err(
            spec.routing_loc,
            K::Unsupported {
                what: format!("a zone of declared routes with {points} hosts and routers"),
                reason: format!(
                    "such a zone holds at most {MAX_POINTS} (its routes grow as the square of its \
                     hosts); describe a large machine with a <cluster>"
                ),
            },
        ));
    }
    for h in &spec.hosts {
        b.add_host(
            Host {
                name: h.name.clone(),
                speed: h.speed,
                pstate_speeds: h.speeds.clone(),
                pstate: h.pstate,
                cores: h.cores,
                properties: h.properties.clone(),
            },
            h.loc,
        )?;
    }
    let n_hosts = b.hosts.len();
    // Points are hosts (0..n_hosts) then routers.
    let mut nodes: Vec<_> = b.host_nodes.clone();
    let mut point_index: HashMap<String, usize> = b
        .hosts
        .iter()
        .enumerate()
        .map(|(i, h)| (h.name.clone(), i))
        .collect();
    for r in &spec.routers {
        nodes.push(b.add_router(&r.text, r.loc)?);
        point_index.insert(r.text.clone(), nodes.len() - 1);
    }
    let declared = DeclaredLinks::add(&spec.links, b)?;

    // Declared segments between points, in declaration order.
    let mut segments: HashMap<(usize, usize), Vec<LinkId>> = HashMap::new();
    let mut order: Vec<(usize, usize)> = Vec::new();
    for r in &spec.routes {
        let point = |v: &crate::platform::spec::Val| {
            point_index
                .get(&v.text)
                .copied()
                .ok_or_else(|| b.err(v.loc, K::UnknownHost(v.text.clone())))
        };
        let (s, d) = (point(&r.src)?, point(&r.dst)?);
        let links = declared.resolve_all(b, &r.links)?;
        let mut insert = |key: (usize, usize), links: Vec<LinkId>, what: &str| {
            if segments.insert(key, links).is_some() {
                return Err(b.err(
                    r.loc,
                    K::Duplicate {
                        what: what.to_string(),
                        name: format!(
                            "{} -> {}",
                            point_name(b, &spec.routers, key.0),
                            point_name(b, &spec.routers, key.1)
                        ),
                    },
                ));
            }
            order.push(key);
            Ok(())
        };
        if r.symmetrical && s != d {
            let reverse = declared.reversed(&links);
            insert(
                (s, d),
                links,
                "route (routes are symmetrical unless symmetrical=\"NO\")",
            )?;
            insert((d, s), reverse, "route (the reverse of a symmetrical route)")?;
        } else {
            insert(
                (s, d),
                links,
                "route (routes are symmetrical unless symmetrical=\"NO\")",
            )?;
        }
    }
    for &(s, d) in &order {
        for &l in &segments[&(s, d)] {
            b.graph.add_edge(nodes[s], nodes[d], l);
        }
    }

    // The model-level loopback, created on first use.
    let mut loopback: Option<LinkId> = None;
    let mut get_loopback = |b: &mut Builder| -> Result<LinkId, PlatformError> {
        if let Some(l) = loopback {
            return Ok(l);
        }
        let l = b.add_link(
            LOOPBACK_NAME.to_string(),
            model_loopback.bandwidth,
            model_loopback.latency,
            SharingPolicy::FatPipe,
            spec.routing_loc,
        )?;
        loopback = Some(l);
        Ok(l)
    };
    for (h, &node) in nodes.iter().enumerate().take(n_hosts) {
        if let std::collections::hash_map::Entry::Vacant(entry) = segments.entry((h, h)) {
            let l = get_loopback(b)?;
            entry.insert(vec![l]);
            b.graph.add_edge(node, node, l);
        }
    }

    let mut routes = HashMap::with_capacity(n_hosts * n_hosts);
    match spec.routing {
        Routing::Full | Routing::Cluster => {
            for s in 0..n_hosts {
                for d in 0..n_hosts {
                    let Some(r) = segments.get(&(s, d)) else { continue };
                    routes.insert((s as u32, d as u32), r.clone().into_boxed_slice());
                }
            }
        }
        Routing::Floyd => {
            let n = nodes.len();
            let mut cost = vec![u64::MAX; n * n];
            let mut pred = vec![usize::MAX; n * n];
            for (&(s, d), seg) in &segments {
                cost[s * n + d] = seg.len() as u64;
                pred[s * n + d] = s;
            }
            for c in 0..n {
                for a in 0..n {
                    let ac = cost[a * n + c];
                    if ac == u64::MAX {
                        continue;
                    }
                    for bb in 0..n {
                        let cb = cost[c * n + bb];
                        if cb < u64::MAX && (cost[a * n + bb] == u64::MAX || ac + cb < cost[a * n + bb]) {
                            cost[a * n + bb] = ac + cb;
                            pred[a * n + bb] = pred[c * n + bb];
                        }
                    }
                }
            }
            for s in 0..n_hosts {
                'pairs: for d in 0..n_hosts {
                    let mut stack = Vec::new();
                    let mut cur = d;
                    loop {
                        let p = pred[s * n + cur];
                        if p == usize::MAX || stack.len() > n {
                            continue 'pairs;
                        }
                        stack.push((p, cur));
                        cur = p;
                        if cur == s {
                            break;
                        }
                    }
                    let route: Vec<LinkId> = stack
                        .iter()
                        .rev()
                        .flat_map(|k| segments[k].iter().copied())
                        .collect();
                    routes.insert((s as u32, d as u32), route.into_boxed_slice());
                }
            }
        }
        Routing::Dijkstra => {
            let n = nodes.len();
            let mut adjacency: Vec<Vec<(usize, u64)>> = vec![Vec::new(); n];
            for &(s, d) in &order {
                if s != d {
                    adjacency[s].push((d, segments[&(s, d)].len() as u64));
                }
            }
            for s in 0..n_hosts {
                let mut dist = vec![u64::MAX; n];
                let mut pred = vec![usize::MAX; n];
                let mut heap = BinaryHeap::new();
                dist[s] = 0;
                heap.push(Reverse((0u64, s)));
                while let Some(Reverse((du, u))) = heap.pop() {
                    if du > dist[u] {
                        continue;
                    }
                    for &(v, w) in &adjacency[u] {
                        if du + w < dist[v] {
                            dist[v] = du + w;
                            pred[v] = u;
                            heap.push(Reverse((dist[v], v)));
                        }
                    }
                }
                for d in 0..n_hosts {
                    if s == d {
                        routes.insert((s as u32, d as u32), segments[&(s, s)].clone().into_boxed_slice());
                        continue;
                    }
                    if pred[d] == usize::MAX {
                        continue;
                    }
                    let mut hops = Vec::new();
                    let mut cur = d;
                    while cur != s {
                        hops.push((pred[cur], cur));
                        cur = pred[cur];
                    }
                    let route: Vec<LinkId> = hops
                        .iter()
                        .rev()
                        .flat_map(|k| segments[k].iter().copied())
                        .collect();
                    routes.insert((s as u32, d as u32), route.into_boxed_slice());
                }
            }
        }
    }
    let names = b.hosts.iter().map(|h| h.name.clone()).collect();
    Ok(Box::new(FullRouter { routes, names }))
}

fn point_name(b: &Builder, routers: &[crate::platform::spec::Val], point: usize) -> String {
    match b.hosts.get(point) {
        Some(h) => h.name.clone(),
        None => routers[point - b.hosts.len()].text.clone(),
    }
}
