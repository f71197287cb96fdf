//! Dragonflies, as SimGrid's `DragonflyZone` (minimal routing).
//!
//! `topo_parameters = "G,Nb;C,Nk;R,Ng;N"`: `G` groups, `C` chassis per group, `R` routers
//! (blades) per chassis, `N` hosts per router. Host `i` has coordinates (group, chassis, router,
//! node) in that mixed radix (node fastest); router `(g,c,r)` has index `g·C·R + c·R + r`.
//!
//! Cables (bandwidth = cluster `bw` × the link count of their level), created in this order and
//! numbered by one counter `n`:
//! - `local_link_from_router_<r>_to_node_<k>_<n>`: host ↔ its router (`_UP` towards the router);
//! - `green_link_in_chassis_<c>_between_routers_<a>_and_<b>_<n>` (× `Ng`): all pairs of routers of
//!   a chassis;
//! - `black_link_in_group_<g>_between_chassis_<a>_and_<b>_blade_<r>_<n>` (× `Nk`): routers of the
//!   same rank in all pairs of chassis of a group;
//! - `blue_link_between_group_<a>_and_<b>_routers_<x>_and_<y>_<n>` (× `Nb`): one per pair of
//!   groups, joining router index `b` of group `a` (router `b` of chassis 0, hence `G ≤ R`) and
//!   router index `a` of group `b`.
//!
//! SplitDuplex cables are `_UP` from the lower-numbered end to the other, `_DOWN` back.
//!
//! Routing, exactly as SimGrid: host → its router; if the groups differ: green hop to router
//! `target group` of the chassis (if not already there), black hop to chassis 0 (if not there),
//! blue hop to the target group (arriving at router `source group` of its chassis 0); then, if the
//! router index differs from the target's, a green hop to it **and the walk continues from chassis
//! 0** (SimGrid sets the current router to the one of chassis 0 even when the green hop was taken
//! in another chassis); then, if the chassis differs, a black hop; finally router → host.
//! Limiters (per host and per router) are inserted as SimGrid does.

use crate::platform::build::Builder;
use crate::platform::error::PlatformError;
use crate::platform::graph::connect_cable;
use crate::platform::routing::{add_cluster_host, LeafLinks};
use crate::platform::spec::{ClusterSpec, DragonflyParams};
use crate::platform::{HostId, LinkId, NoRoute, Router};

#[derive(Clone, Debug, Default)]
struct DfRouter {
    group: usize,
    chassis: usize,
    blade: usize,
    /// (up, down) of the cable to each of its hosts.
    local: Vec<(LinkId, LinkId)>,
    green: Vec<Option<LinkId>>,
    black: Vec<Option<LinkId>>,
    blue: Option<LinkId>,
    limiter: Option<LinkId>,
}

#[derive(Copy, Clone, Debug)]
struct Coords {
    group: usize,
    chassis: usize,
    blade: usize,
    node: usize,
}

/// A built dragonfly.
#[derive(Debug)]
pub(crate) struct DragonflyRouter {
    p: DragonflyParams,
    first_host: u32,
    routers: Vec<DfRouter>,
    leaves: Vec<LeafLinks>,
}

impl DragonflyRouter {
    fn coords(&self, rank: usize) -> Coords {
        let p = &self.p;
        let per_group = p.chassis * p.routers * p.nodes;
        let per_chassis = p.routers * p.nodes;
        let rest = rank % per_group;
        Coords {
            group: rank / per_group,
            chassis: rest / per_chassis,
            blade: (rest % per_chassis) / p.nodes,
            node: rest % p.nodes,
        }
    }

    fn index(&self, group: usize, chassis: usize, blade: usize) -> usize {
        group * self.p.chassis * self.p.routers + chassis * self.p.routers + blade
    }
}

fn wired(link: Option<LinkId>) -> LinkId {
    link.expect("dragonfly links used by minimal routing are all wired")
}

impl DragonflyRouter {
    /// Appends the links from `src` to `dst` (every pair of its hosts has a route).
    pub(crate) fn links(&self, src: HostId, dst: HostId, out: &mut Vec<LinkId>) {
        let s = (src.0 - self.first_host) as usize;
        let d = (dst.0 - self.first_host) as usize;
        if s == d {
            if let Some(l) = self.leaves[s].loopback {
                out.push(l);
                return;
            }
        }
        let me = self.coords(s);
        let target = self.coords(d);
        let my_router = self.index(me.group, me.chassis, me.blade);
        let target_router = self.index(target.group, target.chassis, target.blade);
        let mut cur = my_router;

        out.extend(self.leaves[s].limiter);
        out.push(self.routers[my_router].local[me.node].0);
        if target_router != my_router {
            if self.routers[target_router].group != self.routers[cur].group {
                if self.routers[cur].blade != target.group {
                    out.extend(self.routers[cur].limiter);
                    out.push(wired(self.routers[cur].green[target.group]));
                    cur = self.index(me.group, me.chassis, target.group);
                }
                if self.routers[cur].chassis != 0 {
                    out.extend(self.routers[cur].limiter);
                    out.push(wired(self.routers[cur].black[0]));
                    cur = self.index(me.group, 0, target.group);
                }
                out.push(wired(self.routers[cur].blue));
                out.extend(self.routers[cur].limiter);
                cur = self.index(target.group, 0, me.group);
            }
            if self.routers[target_router].blade != self.routers[cur].blade {
                out.extend(self.routers[cur].limiter);
                out.push(wired(self.routers[cur].green[target.blade]));
                cur = self.index(target.group, 0, target.blade);
            }
            if self.routers[target_router].chassis != self.routers[cur].chassis {
                out.extend(self.routers[cur].limiter);
                out.push(wired(self.routers[cur].black[target.chassis]));
            }
        }
        out.extend(self.routers[target_router].limiter);
        out.push(self.routers[target_router].local[target.node].1);
        out.extend(self.leaves[d].limiter);
    }
}

impl Router for DragonflyRouter {
    fn try_route(&self, src: HostId, dst: HostId, out: &mut Vec<LinkId>) -> Result<(), NoRoute> {
        self.links(src, dst, out);
        Ok(())
    }
}

/// Builds the hosts, routers, cables and router of a DRAGONFLY cluster.
pub(crate) fn build(
    c: &ClusterSpec,
    p: &DragonflyParams,
    b: &mut Builder,
) -> Result<Box<dyn Router>, PlatformError> {
    let first_host = u32::try_from(b.hosts.len()).expect("fewer than 2^32 hosts");
    let mut df = DragonflyRouter {
        p: p.clone(),
        first_host,
        routers: Vec::new(),
        leaves: Vec::new(),
    };
    let mut host_nodes = Vec::with_capacity(c.radicals.len());
    for r in c.radicals.iter() {
        let (host, leaf) = add_cluster_host(c, b, r)?;
        host_nodes.push(b.host_node(host));
        df.leaves.push(leaf);
    }
    // Routers, with limiters numbered downwards from 2·hosts like SimGrid.
    let mut limiter_id = 2 * c.radicals.len();
    let mut router_nodes = Vec::new();
    for g in 0..p.groups {
        for ch in 0..p.chassis {
            for bl in 0..p.routers {
                let limiter = if c.limiter.is_some() {
                    limiter_id -= 1;
                    Some(b.add_limiter(c, &limiter_id.to_string())?)
                } else {
                    None
                };
                let node = b.add_router(&format!("{}_router_{g}_{ch}_{bl}", c.id), c.loc)?;
                if let Some(l) = limiter {
                    b.graph.add_edge(node, node, l);
                }
                router_nodes.push(node);
                df.routers.push(DfRouter {
                    group: g,
                    chassis: ch,
                    blade: bl,
                    local: Vec::with_capacity(p.nodes),
                    green: vec![None; p.routers],
                    black: vec![None; p.chassis],
                    blue: None,
                    limiter,
                });
            }
        }
    }
    let mut counter = 0usize;
    let mut cable = |b: &mut Builder, name: String, mult: usize| -> Result<(LinkId, LinkId), PlatformError> {
        let full = format!("{name}_{counter}");
        counter += 1;
        b.add_cable(&full, c.bw * mult as f64, c.lat, c.policy, c.loc)
    };
    let n_routers = df.routers.len();
    for r in 0..n_routers {
        for k in 0..p.nodes {
            let (up, down) = cable(b, format!("local_link_from_router_{r}_to_node_{k}"), 1)?;
            df.routers[r].local.push((up, down));
            connect_cable(
                &mut b.graph,
                host_nodes[r * p.nodes + k],
                router_nodes[r],
                up,
                down,
            );
        }
    }
    for i in 0..p.groups * p.chassis {
        for j in 0..p.routers {
            for k in j + 1..p.routers {
                let name = format!(
                    "green_link_in_chassis_{}_between_routers_{j}_and_{k}",
                    i % p.chassis
                );
                let (up, down) = cable(b, name, p.green_links)?;
                let (a, z) = (i * p.routers + j, i * p.routers + k);
                df.routers[a].green[k] = Some(up);
                df.routers[z].green[j] = Some(down);
                connect_cable(&mut b.graph, router_nodes[a], router_nodes[z], up, down);
            }
        }
    }
    for g in 0..p.groups {
        for j in 0..p.chassis {
            for k in j + 1..p.chassis {
                for l in 0..p.routers {
                    let name = format!("black_link_in_group_{g}_between_chassis_{j}_and_{k}_blade_{l}");
                    let (up, down) = cable(b, name, p.black_links)?;
                    let a = g * p.routers * p.chassis + j * p.routers + l;
                    let z = g * p.routers * p.chassis + k * p.routers + l;
                    df.routers[a].black[k] = Some(up);
                    df.routers[z].black[j] = Some(down);
                    connect_cable(&mut b.graph, router_nodes[a], router_nodes[z], up, down);
                }
            }
        }
    }
    for i in 0..p.groups {
        for j in i + 1..p.groups {
            let ri = i * p.routers * p.chassis + j;
            let rj = j * p.routers * p.chassis + i;
            let name = format!("blue_link_between_group_{i}_and_{j}_routers_{ri}_and_{rj}");
            let (up, down) = cable(b, name, p.blue_links)?;
            df.routers[ri].blue = Some(up);
            df.routers[rj].blue = Some(down);
            connect_cable(&mut b.graph, router_nodes[ri], router_nodes[rj], up, down);
        }
    }
    Ok(Box::new(df))
}
