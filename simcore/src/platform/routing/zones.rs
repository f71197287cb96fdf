//! Routing between zones, as SimGrid does it (`NetZoneImpl::get_global_route`): for platforms
//! whose hosts sit in several zones, each with its own routing.
//!
//! Every zone has points: its hosts, its routers and its child zones, in file order. A zone
//! answers *local* routes between two of its points:
//! - Full / Floyd / Dijkstra zones ([`Routed`]): declared `<route>`s between hosts and routers,
//!   `<zoneRoute>`s between child zones (each with a gateway, a host or router inside each end
//!   zone), chained by Floyd's or Dijkstra's search as in [`super::full`];
//! - star zones (a FLAT `<cluster>`, `routing="Cluster"` with `<host_link>`s and `<cabinet>`s):
//!   a host's links up, then the other's links down; a router of the zone has no links;
//! - FAT_TREE, TORUS and DRAGONFLY clusters: between their hosts only;
//! - `routing="None"` zones: no local route at all;
//! - Vivaldi zones ([`Vivaldi`]): a `<peer>`'s link up, the other's link down, and the latency
//!   of the distance between their coordinates.
//!
//! A route from `src` to `dst` starts at their closest common zone. If both are points of it,
//! its local route is the route. Otherwise the local route between the two child zones holding
//! them gives gateways `gw_src`, `gw_dst` and links; the route is then the route from `src` to
//! `gw_src`, those links, and the route from `gw_dst` to `dst`, found the same way.
//! Before that, bypass routes of the common zone are looked up: `<bypassRoute>` between two of
//! its points, or `<bypassZoneRoute>` between zones on the way up from `src` and from `dst`
//! (nearest first, in SimGrid's order); one found replaces the route.
//!
//! Zones of declared routes give a host a route to itself over the model's `__loopback__` only
//! when they have no child zone (SimGrid's "base" zones). A missing route is an error only when
//! a message takes it, as in SimGrid: the simulation stops with a message naming both hosts and
//! the zone that lacks the route.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

use petgraph::graph::NodeIndex;

use crate::platform::build::Builder;
use crate::platform::error::{Loc, PlatformError, PlatformErrorKind as K};
use crate::platform::graph::{connect_both, connect_cable, NetNode};
use crate::platform::routing;
use crate::platform::routing::full::{DeclaredLinks, LOOPBACK_NAME, MAX_POINTS};
use crate::platform::routing::star::StarRouter;
use crate::platform::spec::{GatewayRoute, Routing, Spec, Topology, Val, ZoneItem, ZoneKind, ZoneSpec};
use crate::platform::types::LATENCY_ONLY_BANDWIDTH;
use crate::platform::{Host, HostId, LinkId, ModelLoopback, NoRoute, Router, SharingPolicy};

/// A point of the platform: a host, a router or a zone.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
enum Point {
    Host(u32),
    Router(u32),
    Zone(u32),
}

/// The gateways `(gw_src, gw_dst)` of a route between zones (`None` for other routes).
type Gateways = Option<(Point, Point)>;

/// A declared route between two points of a zone; `gateways` for a route between zones.
#[derive(Clone, Debug)]
struct Segment {
    links: Box<[LinkId]>,
    gateways: Gateways,
}

/// Why a route cannot be found: the zone and the points it has no route between.
#[derive(Debug)]
struct Missing(String);

/// A zone of declared routes.
#[derive(Debug)]
struct Routed {
    routing: Routing,
    /// Its points, by local index.
    points: Vec<Point>,
    index: HashMap<Point, usize>,
    segments: HashMap<(usize, usize), Segment>,
    /// Floyd: the point before the last on the best path from `a` to `b`, at `a * n + b`.
    pred: Vec<usize>,
    /// Dijkstra: the declared segments from each point, in declaration order.
    adjacency: Vec<Vec<(usize, u64)>>,
}

/// How a zone finds its local routes.
#[derive(Debug)]
enum Local {
    Routed(Routed),
    Star(StarRouter),
    Topology(Box<dyn Router>),
    Empty,
    Vivaldi(Vivaldi),
}

/// A Vivaldi zone: a peer's link up, the other's link down, and the latency of their distance.
///
/// SimGrid adds that latency to the route without a link; here each pair of points with
/// coordinates gets a link of its own carrying it, FATPIPE and of [`LATENCY_ONLY_BANDWIDTH`]:
/// the kernel adds its latency to a route and leaves it out of the sharing (a message between
/// two hosts without `<peer>` links ends once its latency is paid, as in SimGrid).
#[derive(Debug, Default)]
struct Vivaldi {
    /// The `<peer>`s' links (`link_<id>_UP`, `link_<id>_DOWN`).
    peers: HashMap<Point, (LinkId, LinkId)>,
    /// Points with coordinates.
    coordinates: HashMap<Point, [f64; 3]>,
    /// The latency link of each pair (the lower point first) at a distance above zero.
    distance: HashMap<(Point, Point), LinkId>,
}

/// The most pairs of points with coordinates in a Vivaldi zone (each gets a link).
const MAX_VIVALDI_PAIRS: usize = 1 << 18;

impl Vivaldi {
    /// SimGrid's Vivaldi distance, in seconds: the distance in the plane of the first two
    /// coordinates plus both heights, read as milliseconds.
    fn latency(a: [f64; 3], b: [f64; 3]) -> f64 {
        (((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2)).sqrt() + a[2].abs() + b[2].abs()) / 1000.0
    }

    fn pair(a: Point, b: Point) -> (Point, Point) {
        let key = |p: Point| match p {
            Point::Host(h) => (0, h),
            Point::Router(r) => (1, r),
            Point::Zone(z) => (2, z),
        };
        if key(a) <= key(b) {
            (a, b)
        } else {
            (b, a)
        }
    }
}

#[derive(Debug)]
struct Zone {
    id: String,
    parent: Option<u32>,
    local: Local,
    bypass: HashMap<(Point, Point), Segment>,
}

/// Routes of a platform of several zones.
#[derive(Debug)]
pub(crate) struct ZoneRouter {
    zones: Vec<Zone>,
    /// The zone holding each host, by host id.
    host_zone: Vec<u32>,
    host_names: Vec<String>,
    /// The zone holding each router, and its name.
    routers: Vec<(u32, String)>,
}

impl Router for ZoneRouter {
    fn try_route(&self, src: HostId, dst: HostId, out: &mut Vec<LinkId>) -> Result<(), NoRoute> {
        let start = out.len();
        let reason = match self.global(Point::Host(src.0), Point::Host(dst.0), out) {
            Ok(()) if out.len() > start => return Ok(()),
            Ok(()) => "the route found has no link".to_string(),
            Err(Missing(why)) => why,
        };
        out.truncate(start);
        Err(NoRoute {
            src: self.host_names[src.0 as usize].clone(),
            dst: self.host_names[dst.0 as usize].clone(),
            reason,
        })
    }
}

impl ZoneRouter {
    fn name(&self, p: Point) -> &str {
        match p {
            Point::Host(h) => &self.host_names[h as usize],
            Point::Router(r) => &self.routers[r as usize].1,
            Point::Zone(z) => &self.zones[z as usize].id,
        }
    }

    fn zone_of(&self, p: Point) -> u32 {
        match p {
            Point::Host(h) => self.host_zone[h as usize],
            Point::Router(r) => self.routers[r as usize].0,
            Point::Zone(z) => self.zones[z as usize].parent.unwrap_or(z),
        }
    }

    /// The zones from the one holding `p` up to the outermost.
    fn path_up(&self, p: Point) -> Vec<u32> {
        let mut path = vec![self.zone_of(p)];
        while let Some(parent) = self.zones[*path.last().expect("not empty") as usize].parent {
            path.push(parent);
        }
        path
    }

    /// The paths up from `src` and `dst` without the zones they share, down to one zone each
    /// (which is shared when one point is inside the other's zone).
    fn split_paths(&self, src: Point, dst: Point) -> (Vec<u32>, Vec<u32>, Option<u32>) {
        let (mut ps, mut pd) = (self.path_up(src), self.path_up(dst));
        let mut shared = None;
        while ps.len() > 1 && pd.len() > 1 && ps.last() == pd.last() {
            shared = ps.pop();
            pd.pop();
        }
        (ps, pd, shared)
    }

    fn global(&self, src: Point, dst: Point, out: &mut Vec<LinkId>) -> Result<(), Missing> {
        let (common, sa, da) = if self.zone_of(src) == self.zone_of(dst) {
            let z = self.zone_of(src);
            (z, z, z)
        } else {
            let (ps, pd, shared) = self.split_paths(src, dst);
            let (sa, da) = (*ps.last().expect("not empty"), *pd.last().expect("not empty"));
            let common = if sa == da {
                sa
            } else {
                shared.expect("every zone is inside the outermost one")
            };
            (common, sa, da)
        };
        if self.bypass(common, src, dst, out)? {
            return Ok(());
        }
        if sa == da {
            if self.zone_of(src) != common || self.zone_of(dst) != common {
                return Err(Missing(format!(
                    "`{}` is in zone `{}`, which holds the zone of `{}`: SimGrid routes only between \
                     points of one zone or of sibling zones",
                    self.name(if self.zone_of(src) == common { src } else { dst }),
                    self.zones[common as usize].id,
                    self.name(if self.zone_of(src) == common { dst } else { src }),
                )));
            }
            self.local(common, src, dst, out)?;
            return Ok(());
        }
        let mut links = Vec::new();
        let (gw_src, gw_dst) = self
            .local(common, Point::Zone(sa), Point::Zone(da), &mut links)?
            .ok_or_else(|| {
                Missing(format!(
                    "the route from zone `{}` to zone `{}` in zone `{}` has no gateways",
                    self.zones[sa as usize].id, self.zones[da as usize].id, self.zones[common as usize].id
                ))
            })?;
        if src != gw_src {
            self.global(src, gw_src, out)?;
        }
        out.extend_from_slice(&links);
        if gw_dst != dst {
            self.global(gw_dst, dst, out)?;
        }
        Ok(())
    }

    /// Uses a bypass route of zone `common` from `src` to `dst` if there is one.
    fn bypass(&self, common: u32, src: Point, dst: Point, out: &mut Vec<LinkId>) -> Result<bool, Missing> {
        let table = &self.zones[common as usize].bypass;
        if table.is_empty() {
            return Ok(false);
        }
        if self.zone_of(src) == common && self.zone_of(dst) == common {
            return Ok(match table.get(&(src, dst)) {
                Some(seg) => {
                    out.extend_from_slice(&seg.links);
                    true
                }
                None => false,
            });
        }
        let (ps, pd, _) = self.split_paths(src, dst);
        let lookup = |i: usize, j: usize| {
            let key = (Point::Zone(*ps.get(i)?), Point::Zone(*pd.get(j)?));
            table.get(&key).map(|seg| (key, seg))
        };
        let mut found = None;
        for max in 0..ps.len().max(pd.len()) {
            for i in 0..max {
                found = lookup(i, max).or_else(|| lookup(max, i));
                if found.is_some() {
                    break;
                }
            }
            if found.is_none() {
                found = lookup(max, max);
            }
            if found.is_some() {
                break;
            }
        }
        let Some(((from, to), seg)) = found else {
            return Ok(false);
        };
        let (gw_src, gw_dst) = seg.gateways.expect("bypass routes between zones have gateways");
        if src != from {
            self.global(src, gw_src, out)?;
        }
        out.extend_from_slice(&seg.links);
        if dst != to {
            self.global(gw_dst, dst, out)?;
        }
        Ok(true)
    }

    /// Appends the local route of zone `z` between two of its points; returns its gateways
    /// (for a route between zones).
    fn local(&self, z: u32, src: Point, dst: Point, out: &mut Vec<LinkId>) -> Result<Gateways, Missing> {
        let zone = &self.zones[z as usize];
        let missing = |what: &str| {
            Missing(format!(
                "zone `{}` {what} from `{}` to `{}`",
                zone.id,
                self.name(src),
                self.name(dst)
            ))
        };
        match &zone.local {
            Local::Empty => Err(missing("(routing=\"None\") has no route")),
            Local::Vivaldi(v) => {
                for p in [src, dst] {
                    if !v.coordinates.contains_key(&p) {
                        return Err(missing(&format!(
                            "(Vivaldi) lacks the coordinates of `{}` for a route",
                            self.name(p)
                        )));
                    }
                }
                let start = out.len();
                let links = v
                    .peers
                    .get(&src)
                    .map(|l| l.0)
                    .into_iter()
                    .chain(v.peers.get(&dst).map(|l| l.1));
                for l in links.chain(v.distance.get(&Vivaldi::pair(src, dst)).copied()) {
                    if !out[start..].contains(&l) {
                        out.push(l);
                    }
                }
                Ok(None)
            }
            Local::Topology(router) => match (src, dst) {
                (Point::Host(s), Point::Host(d)) => match router.try_route(HostId(s), HostId(d), out) {
                    Ok(()) => Ok(None),
                    Err(e) => Err(Missing(e.reason)),
                },
                _ => Err(missing(
                    "(a FAT_TREE, TORUS or DRAGONFLY cluster) routes only between hosts, not",
                )),
            },
            Local::Star(star) => {
                match (src, dst) {
                    (Point::Host(s), Point::Host(d)) => star.links(HostId(s), HostId(d), out),
                    (Point::Host(s), Point::Router(_)) => star.half(HostId(s), true, out),
                    (Point::Router(_), Point::Host(d)) => star.half(HostId(d), false, out),
                    (Point::Router(_), Point::Router(_)) => {}
                    _ => return Err(missing("(a cluster) has no route")),
                }
                Ok(None)
            }
            Local::Routed(r) => self
                .routed(r, src, dst, out)
                .ok_or_else(|| missing("declares no route")),
        }
    }

    /// The local route of a zone of declared routes; `None` when it has none.
    fn routed(&self, r: &Routed, src: Point, dst: Point, out: &mut Vec<LinkId>) -> Option<Gateways> {
        let (s, d) = (*r.index.get(&src)?, *r.index.get(&dst)?);
        let hops: Vec<(usize, usize)> = match r.routing {
            Routing::Full | Routing::Cluster => vec![(s, d)],
            Routing::Floyd => {
                let n = r.points.len();
                let mut hops = Vec::new();
                let mut cur = d;
                loop {
                    let p = r.pred[s * n + cur];
                    if p == usize::MAX || hops.len() > n {
                        return None;
                    }
                    hops.push((p, cur));
                    cur = p;
                    if cur == s {
                        break;
                    }
                }
                hops.reverse();
                hops
            }
            Routing::Dijkstra => {
                if s == d {
                    vec![(s, s)]
                } else {
                    dijkstra(&r.adjacency, s, d)?
                }
            }
        };
        let segments: Vec<&Segment> = hops.iter().map(|k| r.segments.get(k)).collect::<Option<_>>()?;
        let mut prev_gw: Option<Point> = None;
        for seg in &segments {
            if let (Some(prev), Some((gw_src, _))) = (prev_gw, seg.gateways) {
                if prev != gw_src {
                    self.global(prev, gw_src, out).ok()?;
                }
            }
            out.extend_from_slice(&seg.links);
            prev_gw = seg.gateways.map(|g| g.1);
        }
        let first = segments.first()?.gateways;
        let last = segments.last()?.gateways;
        Some(first.zip(last).map(|(f, l)| (f.0, l.1)))
    }
}

/// The hops of the shortest path from `s` to `d` (ties: the first found, nodes by index).
fn dijkstra(adjacency: &[Vec<(usize, u64)>], s: usize, d: usize) -> Option<Vec<(usize, usize)>> {
    let n = adjacency.len();
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
    if pred[d] == usize::MAX {
        return None;
    }
    let mut hops = Vec::new();
    let mut cur = d;
    while cur != s {
        hops.push((pred[cur], cur));
        cur = pred[cur];
    }
    hops.reverse();
    Some(hops)
}

/// Builds the hosts, routers, links and routes of a platform of several zones.
pub(crate) fn build(
    spec: &Spec,
    b: &mut Builder,
    model_loopback: ModelLoopback,
) -> Result<Box<dyn Router>, PlatformError> {
    let declared = DeclaredLinks::add(&spec.links, b)?;
    let mut t = TreeBuilder {
        spec,
        declared,
        zones: Vec::new(),
        points: vec![Vec::new(); spec.zones.len()],
        host_zone: Vec::new(),
        routers: Vec::new(),
        router_index: HashMap::new(),
        router_nodes: Vec::new(),
        zone_index: HashMap::new(),
        model_loopback,
        loopback: None,
    };
    for (i, z) in spec.zones.iter().enumerate() {
        // Zone 0 stands for `<platform>` itself: it has no name.
        if i > 0 && t.zone_index.insert(z.id.clone(), i as u32).is_some() {
            return Err(b.err(
                z.loc,
                K::Duplicate {
                    what: "zone".to_string(),
                    name: z.id.clone(),
                },
            ));
        }
        t.zones.push(Zone {
            id: z.id.clone(),
            parent: z.parent.map(|p| p as u32),
            local: Local::Empty,
            bypass: HashMap::new(),
        });
    }
    t.create(0, b)?;
    if b.hosts.is_empty() {
        return Err(b.err(spec.zones[0].loc, K::NoHost));
    }
    for z in 0..spec.zones.len() {
        t.routes(z, b)?;
    }
    let host_names = b.hosts.iter().map(|h| h.name.clone()).collect();
    Ok(Box::new(ZoneRouter {
        zones: t.zones,
        host_zone: t.host_zone,
        host_names,
        routers: t.routers,
    }))
}

struct TreeBuilder<'s> {
    spec: &'s Spec,
    declared: DeclaredLinks,
    zones: Vec<Zone>,
    /// The points of each zone, in creation order.
    points: Vec<Vec<Point>>,
    host_zone: Vec<u32>,
    routers: Vec<(u32, String)>,
    router_index: HashMap<String, u32>,
    router_nodes: Vec<NodeIndex>,
    zone_index: HashMap<String, u32>,
    model_loopback: ModelLoopback,
    loopback: Option<LinkId>,
}

impl TreeBuilder<'_> {
    fn add_host(&mut self, z: usize, host: Host, loc: Loc, b: &mut Builder) -> Result<HostId, PlatformError> {
        let id = b.add_host(host, loc)?;
        self.host_zone.push(z as u32);
        self.points[z].push(Point::Host(id.0));
        Ok(id)
    }

    fn add_router(&mut self, z: usize, name: &str, loc: Loc, b: &mut Builder) -> Result<(), PlatformError> {
        let node = b.add_router(name, loc)?;
        self.register_router(z, name, node);
        Ok(())
    }

    fn register_router(&mut self, z: usize, name: &str, node: NodeIndex) {
        let id = self.routers.len() as u32;
        self.routers.push((z as u32, name.to_string()));
        self.router_index.insert(name.to_string(), id);
        self.router_nodes.push(node);
        self.points[z].push(Point::Router(id));
    }

    /// Creates the hosts and routers of zone `z` and of the zones inside it, in file order.
    fn create(&mut self, z: usize, b: &mut Builder) -> Result<(), PlatformError> {
        let spec: &ZoneSpec = &self.spec.zones[z];
        match &spec.kind {
            ZoneKind::Cluster(c) => {
                let first = b.hosts.len();
                let local = match c.topology {
                    Topology::Flat => Local::Star(routing::star::build_cluster(c, b)?),
                    _ => Local::Topology(routing::build_cluster(c, b)?),
                };
                for h in first..b.hosts.len() {
                    self.host_zone.push(z as u32);
                    self.points[z].push(Point::Host(h as u32));
                }
                if let Some(&node) = b.routers.get(&c.router_id) {
                    self.register_router(z, &c.router_id, node);
                }
                self.zones[z].local = local;
                return Ok(());
            }
            ZoneKind::Vivaldi => self.zones[z].local = Local::Vivaldi(Vivaldi::default()),
            _ => {}
        }
        let first_host = b.hosts.len() as u32;
        for item in &spec.items {
            match item {
                ZoneItem::Host(h) => {
                    let host = Host {
                        name: h.name.clone(),
                        speed: h.speed,
                        pstate_speeds: h.speeds.clone(),
                        pstate: h.pstate,
                        cores: h.cores,
                        properties: h.properties.clone(),
                    };
                    self.add_host(z, host, h.loc, b)?;
                }
                ZoneItem::Router(r) => self.add_router(z, &r.text, r.loc, b)?,
                ZoneItem::Zone(child) => {
                    self.points[z].push(Point::Zone(*child as u32));
                    self.create(*child, b)?;
                }
                ZoneItem::Peer(p) => {
                    let h = &p.host;
                    let host = Host {
                        name: h.name.clone(),
                        speed: h.speed,
                        pstate_speeds: h.speeds.clone(),
                        pstate: h.pstate,
                        cores: h.cores,
                        properties: h.properties.clone(),
                    };
                    let id = self.add_host(z, host, h.loc, b)?;
                    let up = b.add_link(
                        format!("link_{}_UP", h.name),
                        p.bw_out,
                        0.0,
                        SharingPolicy::Shared,
                        h.loc,
                    )?;
                    let down = b.add_link(
                        format!("link_{}_DOWN", h.name),
                        p.bw_in,
                        0.0,
                        SharingPolicy::Shared,
                        h.loc,
                    )?;
                    if let Local::Vivaldi(v) = &mut self.zones[z].local {
                        v.peers.insert(Point::Host(id.0), (up, down));
                    }
                }
                _ => {}
            }
        }
        if let ZoneKind::Star = spec.kind {
            let star = self.star(z, first_host, b)?;
            self.zones[z].local = Local::Star(star);
        }
        if let ZoneKind::Vivaldi = spec.kind {
            self.vivaldi(z, b)?;
        }
        Ok(())
    }

    /// The coordinates of the points of Vivaldi zone `z`, and a latency link for each pair.
    fn vivaldi(&mut self, z: usize, b: &mut Builder) -> Result<(), PlatformError> {
        let spec: &ZoneSpec = &self.spec.zones[z];
        let mut points = Vec::new();
        for (name, val) in &spec.coordinates {
            let numbers: Vec<f64> = val
                .text
                .split_whitespace()
                .filter_map(|t| t.parse().ok())
                .collect();
            let (Ok(c), 3) = (
                <[f64; 3]>::try_from(numbers.as_slice()),
                val.text.split_whitespace().count(),
            ) else {
                return Err(b.err(
                    val.loc,
                    K::InvalidValue {
                        key: "coordinates".to_string(),
                        value: val.text.clone(),
                        reason: "expected three numbers separated by spaces".to_string(),
                    },
                ));
            };
            if c.iter().any(|x| !x.is_finite() || x.abs() > 1e9) {
                return Err(b.err(
                    val.loc,
                    K::InvalidValue {
                        key: "coordinates".to_string(),
                        value: val.text.clone(),
                        reason: "coordinates are milliseconds of latency, at most 1e9".to_string(),
                    },
                ));
            }
            points.push((
                self.point(
                    &Val {
                        text: name.clone(),
                        loc: val.loc,
                    },
                    None,
                    b,
                )?,
                c,
            ));
        }
        let pairs = points.len() * (points.len() + 1) / 2;
        if pairs > MAX_VIVALDI_PAIRS {
            return Err(b.err(
                spec.loc,
                K::Unsupported {
                    what: format!(
                        "Vivaldi zone `{}` with {} points with coordinates",
                        spec.id,
                        points.len()
                    ),
                    reason: format!("each pair gets a latency link; at most {MAX_VIVALDI_PAIRS} pairs"),
                },
            ));
        }
        let mut v = match std::mem::replace(&mut self.zones[z].local, Local::Empty) {
            Local::Vivaldi(v) => v,
            _ => unreachable!("zone {z} is a Vivaldi zone"),
        };
        for (i, &(a, ca)) in points.iter().enumerate() {
            v.coordinates.insert(a, ca);
            for &(c, cc) in &points[i..] {
                let latency = Vivaldi::latency(ca, cc);
                if latency > 0.0 {
                    let (p, q) = Vivaldi::pair(a, c);
                    let name = format!("vivaldi_{}_{}", self.point_name(p, b), self.point_name(q, b));
                    let l = b.add_link(
                        name,
                        LATENCY_ONLY_BANDWIDTH,
                        latency,
                        SharingPolicy::FatPipe,
                        spec.loc,
                    )?;
                    v.distance.insert((p, q), l);
                }
            }
        }
        self.zones[z].local = Local::Vivaldi(v);
        Ok(())
    }

    fn point_name(&self, p: Point, b: &Builder) -> String {
        match p {
            Point::Host(h) => b.hosts[h as usize].name.clone(),
            Point::Router(r) => self.routers[r as usize].1.clone(),
            Point::Zone(z) => self.zones[z as usize].id.clone(),
        }
    }

    /// The routes of a hand-made cluster zone: `<host_link>`s and `<cabinet>`s, and its
    /// `<backbone>` (created last, as SimGrid does when the zone closes).
    fn star(&mut self, z: usize, first_host: u32, b: &mut Builder) -> Result<StarRouter, PlatformError> {
        let spec: &ZoneSpec = &self.spec.zones[z];
        let centre = b.graph.add_node(NetNode::Router(spec.id.clone()));
        let mut backbone = None;
        for item in &spec.items {
            if let ZoneItem::Backbone(l) = item {
                let (bb, _) = b.add_cable(&l.name, l.bandwidth, l.latency, l.policy, l.loc)?;
                connect_both(&mut b.graph, centre, centre, bb);
                backbone = Some(bb);
            }
        }
        let mut private: Vec<Option<(LinkId, LinkId)>> = vec![None; b.hosts.len() - first_host as usize];
        for item in &spec.items {
            match item {
                ZoneItem::HostLink(hl) => {
                    let host = b
                        .host_index
                        .get(&hl.host.text)
                        .copied()
                        .filter(|h| h.0 >= first_host)
                        .ok_or_else(|| b.err(hl.host.loc, K::UnknownHost(hl.host.text.clone())))?;
                    let find = |v: &Val| {
                        b.link_index
                            .get(&v.text)
                            .copied()
                            .ok_or_else(|| b.err(v.loc, K::UnknownLink(v.text.clone())))
                    };
                    let (up, down) = (find(&hl.up)?, find(&hl.down)?);
                    if private[(host.0 - first_host) as usize]
                        .replace((up, down))
                        .is_some()
                    {
                        return Err(b.err(
                            hl.loc,
                            K::Duplicate {
                                what: "host_link".to_string(),
                                name: hl.host.text.clone(),
                            },
                        ));
                    }
                }
                ZoneItem::Cabinet(c) => {
                    for r in c.radicals.iter() {
                        let name = format!("{}{r}{}", c.prefix, c.suffix);
                        let host = Host {
                            name: name.clone(),
                            speed: c.speed,
                            pstate_speeds: vec![c.speed],
                            pstate: 0,
                            cores: 1,
                            properties: Vec::new(),
                        };
                        self.add_host(z, host, c.loc, b)?;
                        let up = b.add_link(
                            format!("link_{name}_UP"),
                            c.bw,
                            c.lat,
                            SharingPolicy::Shared,
                            c.loc,
                        )?;
                        let down = b.add_link(
                            format!("link_{name}_DOWN"),
                            c.bw,
                            c.lat,
                            SharingPolicy::Shared,
                            c.loc,
                        )?;
                        private.push(Some((up, down)));
                    }
                }
                _ => {}
            }
        }
        let mut star = StarRouter::new(first_host);
        for (i, p) in private.into_iter().enumerate() {
            let host = HostId(first_host + i as u32);
            let Some((up, down)) = p else {
                let name = b.hosts[host.0 as usize].name.clone();
                return Err(b.err(spec.loc, K::MissingHostLink(name)));
            };
            star.up.push([up].into_iter().chain(backbone).collect());
            star.down.push(backbone.into_iter().chain([down]).collect());
            star.loopback.push(None);
            let node = b.host_node(host);
            connect_cable(&mut b.graph, node, centre, up, down);
        }
        Ok(star)
    }

    /// The point called `v` (a host or router); with `zone`, one inside that zone.
    fn point(&self, v: &Val, inside: Option<u32>, b: &Builder) -> Result<Point, PlatformError> {
        let p = if let Some(h) = b.host_index.get(&v.text) {
            Point::Host(h.0)
        } else if let Some(&r) = self.router_index.get(&v.text) {
            Point::Router(r)
        } else {
            return Err(b.err(v.loc, K::UnknownHost(v.text.clone())));
        };
        let Some(zone) = inside else { return Ok(p) };
        let mut z = match p {
            Point::Host(h) => Some(self.host_zone[h as usize]),
            Point::Router(r) => Some(self.routers[r as usize].0),
            Point::Zone(z) => Some(z),
        };
        while let Some(cur) = z {
            if cur == zone {
                return Ok(p);
            }
            z = self.zones[cur as usize].parent;
        }
        Err(b.err(
            v.loc,
            K::InvalidValue {
                key: "gateway".to_string(),
                value: v.text.clone(),
                reason: format!("it is not inside zone `{}`", self.zones[zone as usize].id),
            },
        ))
    }

    /// The zone called `v`, which must be a child of zone `parent` (any zone when `anywhere`:
    /// the ends of a bypass route).
    fn child_zone(&self, v: &Val, parent: usize, anywhere: bool, b: &Builder) -> Result<u32, PlatformError> {
        match self.zone_index.get(&v.text) {
            Some(&z) if anywhere || self.zones[z as usize].parent == Some(parent as u32) => Ok(z),
            _ => Err(b.err(
                v.loc,
                K::InvalidValue {
                    key: "zone".to_string(),
                    value: v.text.clone(),
                    reason: format!("no zone of that name inside zone `{}`", self.zones[parent].id),
                },
            )),
        }
    }

    /// The two ends of a route (a bypass route when `bypass`) of zone `z`, and its gateways.
    fn ends(
        &self,
        z: usize,
        r: &GatewayRoute,
        bypass: bool,
        b: &Builder,
    ) -> Result<(Point, Point, Gateways), PlatformError> {
        match &r.gateways {
            None => Ok((
                self.point(&r.route.src, None, b)?,
                self.point(&r.route.dst, None, b)?,
                None,
            )),
            Some((gs, gd)) => {
                let (s, d) = (
                    self.child_zone(&r.route.src, z, bypass, b)?,
                    self.child_zone(&r.route.dst, z, bypass, b)?,
                );
                let gateways = (self.point(gs, Some(s), b)?, self.point(gd, Some(d), b)?);
                Ok((Point::Zone(s), Point::Zone(d), Some(gateways)))
            }
        }
    }

    fn node(&self, p: Point, b: &Builder) -> Option<NodeIndex> {
        match p {
            Point::Host(h) => Some(b.host_node(HostId(h))),
            Point::Router(r) => Some(self.router_nodes[r as usize]),
            Point::Zone(_) => None,
        }
    }

    /// Reads the routes and bypass routes of zone `z`.
    fn routes(&mut self, z: usize, b: &mut Builder) -> Result<(), PlatformError> {
        let spec: &ZoneSpec = &self.spec.zones[z];
        for item in &spec.items {
            if let ZoneItem::Bypass(r) = item {
                let (s, d, gateways) = self.ends(z, r, true, b)?;
                let links = self.declared.resolve_all(b, &r.route.links)?.into_boxed_slice();
                let seg = Segment { links, gateways };
                if self.zones[z].bypass.insert((s, d), seg).is_some() {
                    return Err(b.err(
                        r.route.loc,
                        K::Duplicate {
                            what: "bypass route".to_string(),
                            name: format!("{} -> {}", r.route.src.text, r.route.dst.text),
                        },
                    ));
                }
            }
        }
        let routing = match spec.kind {
            ZoneKind::Routed(routing) => routing,
            _ => {
                if let Some(ZoneItem::Route(r) | ZoneItem::ZoneRoute(GatewayRoute { route: r, .. })) = spec
                    .items
                    .iter()
                    .find(|i| matches!(i, ZoneItem::Route(_) | ZoneItem::ZoneRoute(_)))
                {
                    return Err(b.err(
                        r.loc,
                        K::Unsupported {
                            what: format!("a route in zone `{}`", spec.id),
                            reason: "only Full, Floyd and Dijkstra zones declare routes".to_string(),
                        },
                    ));
                }
                return Ok(());
            }
        };
        let points = std::mem::take(&mut self.points[z]);
        if points.len() > MAX_POINTS {
            return Err(b.err(
                spec.loc,
                K::Unsupported {
                    what: format!(
                        "zone `{}` with {} hosts, routers and zones",
                        spec.id,
                        points.len()
                    ),
                    reason: format!("a zone of declared routes holds at most {MAX_POINTS}"),
                },
            ));
        }
        let index: HashMap<Point, usize> = points.iter().enumerate().map(|(i, &p)| (p, i)).collect();
        let mut segments: HashMap<(usize, usize), Segment> = HashMap::new();
        let mut order = Vec::new();
        for item in &spec.items {
            let r = match item {
                ZoneItem::Route(route) => GatewayRoute {
                    route: route.clone(),
                    gateways: None,
                },
                ZoneItem::ZoneRoute(r) => r.clone(),
                _ => continue,
            };
            let (s, d, gateways) = self.ends(z, &r, false, b)?;
            let local = |p: Point| {
                index.get(&p).copied().ok_or_else(|| {
                    b.err(
                        r.route.loc,
                        K::InvalidValue {
                            key: "src/dst".to_string(),
                            value: format!("{} -> {}", r.route.src.text, r.route.dst.text),
                            reason: format!("both ends must be in zone `{}`", spec.id),
                        },
                    )
                })
            };
            let (ls, ld) = (local(s)?, local(d)?);
            let links = self.declared.resolve_all(b, &r.route.links)?;
            if let Some((gs, gd)) = gateways {
                if let (Some(from), Some(to)) = (self.node(gs, b), self.node(gd, b)) {
                    for &l in &links {
                        b.graph.add_edge(from, to, l);
                    }
                }
            } else if let (Some(from), Some(to)) = (self.node(s, b), self.node(d, b)) {
                for &l in &links {
                    b.graph.add_edge(from, to, l);
                }
            }
            let mut entries = vec![((ls, ld), links.clone(), gateways)];
            if r.route.symmetrical && ls != ld {
                entries.push((
                    (ld, ls),
                    self.declared.reversed(&links),
                    gateways.map(|(a, c)| (c, a)),
                ));
            }
            for (key, links, gateways) in entries {
                let seg = Segment {
                    links: links.into_boxed_slice(),
                    gateways,
                };
                if segments.insert(key, seg).is_some() {
                    return Err(b.err(
                        r.route.loc,
                        K::Duplicate {
                            what: "route (routes are symmetrical unless symmetrical=\"NO\")".to_string(),
                            name: format!("{} -> {}", r.route.src.text, r.route.dst.text),
                        },
                    ));
                }
                order.push(key);
            }
        }
        let base = !points.iter().any(|p| matches!(p, Point::Zone(_)));
        if base {
            for (i, p) in points.iter().enumerate() {
                if matches!(p, Point::Host(_)) && !segments.contains_key(&(i, i)) {
                    let l = self.loopback(b)?;
                    segments.insert(
                        (i, i),
                        Segment {
                            links: Box::new([l]),
                            gateways: None,
                        },
                    );
                }
            }
        }
        let n = points.len();
        let mut routed = Routed {
            routing,
            points,
            index,
            segments,
            pred: Vec::new(),
            adjacency: Vec::new(),
        };
        match routing {
            Routing::Floyd => routed.pred = floyd(n, &routed.segments),
            Routing::Dijkstra => {
                routed.adjacency = vec![Vec::new(); n];
                for &(s, d) in &order {
                    if s != d {
                        routed.adjacency[s].push((d, routed.segments[&(s, d)].links.len() as u64));
                    }
                }
            }
            Routing::Full | Routing::Cluster => {}
        }
        self.zones[z].local = Local::Routed(routed);
        Ok(())
    }

    /// The model's loopback link, created on first use.
    fn loopback(&mut self, b: &mut Builder) -> Result<LinkId, PlatformError> {
        if let Some(l) = self.loopback {
            return Ok(l);
        }
        let l = b.add_link(
            LOOPBACK_NAME.to_string(),
            self.model_loopback.bandwidth,
            self.model_loopback.latency,
            SharingPolicy::FatPipe,
            self.spec.zones[0].loc,
        )?;
        self.loopback = Some(l);
        Ok(l)
    }
}

/// SimGrid's Floyd–Warshall over `n` points (cost of a segment: its link count): the
/// predecessor table.
fn floyd(n: usize, segments: &HashMap<(usize, usize), Segment>) -> Vec<usize> {
    let mut cost = vec![u64::MAX; n * n];
    let mut pred = vec![usize::MAX; n * n];
    for (&(s, d), seg) in segments {
        cost[s * n + d] = seg.links.len() as u64;
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
    pred
}
