//! Star routing: FLAT clusters and hand-made `<zone routing="Cluster">` zones (SimGrid's
//! `StarZone`).
//!
//! Each host has a list of links going up (towards the centre) and a list going down. A route
//! `src → dst` is `up(src)` followed by `down(dst)`, where a link already in the route is not
//! added again (so a SHARED private link or the backbone is crossed, and its latency paid, once).
//! With a loopback, `src → src` is the loopback alone; without one it goes up and back down.
//!
//! For a FLAT cluster with id `c` and host radical `N`:
//! - `up(N)   = [c_link_N_limiter] + c_link_N_UP   + [c_backbone]`
//! - `down(N) = [c_backbone] + c_link_N_DOWN + [c_link_N_limiter]`
//!
//! (a non-split private link `c_link_N` replaces both `_UP` and `_DOWN`).

use crate::platform::build::Builder;
use crate::platform::error::{PlatformError, PlatformErrorKind as K};
use crate::platform::graph::{connect_both, connect_cable};
use crate::platform::routing::add_cluster_host;
use crate::platform::spec::{ClusterSpec, Spec};
use crate::platform::{Host, HostId, LinkId, NoRoute, Router, SharingPolicy};

/// Routes of a star zone, for its hosts `first_host..first_host + up.len()`.
#[derive(Debug)]
pub(crate) struct StarRouter {
    pub(crate) first_host: u32,
    pub(crate) up: Vec<Box<[LinkId]>>,
    pub(crate) down: Vec<Box<[LinkId]>>,
    pub(crate) loopback: Vec<Option<LinkId>>,
}

impl StarRouter {
    /// An empty star for hosts numbered from `first_host`.
    pub(crate) fn new(first_host: u32) -> Self {
        StarRouter {
            first_host,
            up: Vec::new(),
            down: Vec::new(),
            loopback: Vec::new(),
        }
    }

    /// The links between `host` and the centre (the zone's routers, which have no links of
    /// their own): up from it when `up`, else down to it; a link listed twice is crossed once.
    pub(crate) fn half(&self, host: HostId, up: bool, out: &mut Vec<LinkId>) {
        let h = (host.0 - self.first_host) as usize;
        let links = if up { &self.up[h] } else { &self.down[h] };
        let start = out.len();
        for &l in links.iter() {
            if !out[start..].contains(&l) {
                out.push(l);
            }
        }
    }
}

impl StarRouter {
    /// Appends the links from `src` to `dst` (every pair of its hosts has a route).
    pub(crate) fn links(&self, src: HostId, dst: HostId, out: &mut Vec<LinkId>) {
        let (s, d) = (
            (src.0 - self.first_host) as usize,
            (dst.0 - self.first_host) as usize,
        );
        if s == d {
            if let Some(l) = self.loopback[s] {
                out.push(l);
                return;
            }
        }
        let start = out.len();
        for &l in self.up[s].iter().chain(self.down[d].iter()) {
            if !out[start..].contains(&l) {
                out.push(l);
            }
        }
    }
}

impl Router for StarRouter {
    fn try_route(&self, src: HostId, dst: HostId, out: &mut Vec<LinkId>) -> Result<(), NoRoute> {
        self.links(src, dst, out);
        Ok(())
    }
}

/// Builds a FLAT cluster (SimGrid's `sg_platf_new_cluster_flat`).
pub(crate) fn build_cluster(c: &ClusterSpec, b: &mut Builder) -> Result<StarRouter, PlatformError> {
    let backbone = match c.backbone {
        Some((bw, lat, policy)) => {
            let sharing = match policy {
                crate::platform::spec::Policy::FatPipe => SharingPolicy::FatPipe,
                _ => SharingPolicy::Shared,
            };
            Some(b.add_link(format!("{}_backbone", c.id), bw, lat, sharing, c.loc)?)
        }
        None => None,
    };
    let mut router = StarRouter::new(u32::try_from(b.hosts.len()).expect("fewer than 2^32 hosts"));
    let mut hosts = Vec::with_capacity(c.radicals.len());
    for r in c.radicals.iter() {
        let (host, leaf) = add_cluster_host(c, b, r)?;
        let (private_up, private_down) =
            b.add_cable(&format!("{}_link_{r}", c.id), c.bw, c.lat, c.policy, c.loc)?;
        let up: Vec<LinkId> = leaf
            .limiter
            .into_iter()
            .chain([private_up])
            .chain(backbone)
            .collect();
        let down: Vec<LinkId> = backbone
            .into_iter()
            .chain([private_down])
            .chain(leaf.limiter)
            .collect();
        router.up.push(up.into());
        router.down.push(down.into());
        router.loopback.push(leaf.loopback);
        hosts.push((host, private_up, private_down));
    }
    let centre = b.add_router(&c.router_id, c.loc)?;
    if let Some(bb) = backbone {
        b.graph.add_edge(centre, centre, bb);
    }
    for (host, up, down) in hosts {
        let node = b.host_node(host);
        connect_cable(&mut b.graph, node, centre, up, down);
    }
    Ok(router)
}

/// Builds a hand-made `<zone routing="Cluster">`: `<host>`s, `<link>`s, one `<host_link>` per
/// host and an optional `<backbone>`.
pub(crate) fn build_zone(spec: &Spec, b: &mut Builder) -> Result<Box<dyn Router>, PlatformError> {
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
    for r in &spec.routers {
        b.add_router(&r.text, r.loc)?;
    }
    for l in &spec.links {
        b.add_cable(&l.name, l.bandwidth, l.latency, l.policy, l.loc)?;
    }
    let backbone = match &spec.backbone {
        Some(l) => {
            let (bb, _) = b.add_cable(&l.name, l.bandwidth, l.latency, l.policy, l.loc)?;
            Some(bb)
        }
        None => None,
    };
    let centre = b.add_router(&spec.zone_id, spec.routing_loc)?;
    if let Some(bb) = backbone {
        connect_both(&mut b.graph, centre, centre, bb);
    }
    let n = b.hosts.len();
    let mut private: Vec<Option<(LinkId, LinkId)>> = vec![None; n];
    for hl in &spec.host_links {
        let host = b
            .host_index
            .get(&hl.host.text)
            .copied()
            .ok_or_else(|| b.err(hl.host.loc, K::UnknownHost(hl.host.text.clone())))?;
        let find = |v: &crate::platform::spec::Val| {
            b.link_index
                .get(&v.text)
                .copied()
                .ok_or_else(|| b.err(v.loc, K::UnknownLink(v.text.clone())))
        };
        let (up, down) = (find(&hl.up)?, find(&hl.down)?);
        if private[host.0 as usize].replace((up, down)).is_some() {
            return Err(b.err(
                hl.loc,
                K::Duplicate {
                    what: "host_link".to_string(),
                    name: hl.host.text.clone(),
                },
            ));
        }
    }
    let mut router = StarRouter::new(0);
    router.loopback = vec![None; n];
    for (i, p) in private.into_iter().enumerate() {
        let Some((up, down)) = p else {
            let name = b.hosts[i].name.clone();
            return Err(b.err(spec.routing_loc, K::MissingHostLink(name)));
        };
        router.up.push([up].into_iter().chain(backbone).collect());
        router.down.push(backbone.into_iter().chain([down]).collect());
        let node = b.host_node(HostId(i as u32));
        connect_cable(&mut b.graph, node, centre, up, down);
    }
    Ok(Box::new(router))
}
