//! Routers: one per zone kind, each answering "which links from host A to host B".
//!
//! | zone | module | route |
//! |---|---|---|
//! | Full / Floyd / Dijkstra | [`full`] | declared `<route>`s (shortest chain of routes for Floyd/Dijkstra); `__loopback__` for self |
//! | FLAT cluster, `routing="Cluster"` | [`star`] | src's links up + dst's links down, duplicates removed |
//! | FAT_TREE cluster | [`fat_tree`] | D-mod-K up to the nearest common ancestor, then down |
//! | TORUS cluster | [`torus`] | dimension order, shorter way round |
//! | DRAGONFLY cluster | [`dragonfly`] | SimGrid's minimal routing |
//! | several zones (SimGrid XML) | [`zones`] | each zone's own route, joined through the gateways of `<zoneRoute>`s; bypass routes; None and Vivaldi zones |
//!
//! Every router here is cheap per query (a hash lookup, or O(levels/dimensions) arithmetic on
//! precomputed link tables), so routes are not cached; the exception, [`zones`], walks a few zones
//! and may run a Dijkstra search per query, which the engine's own cache of used routes absorbs.

pub(crate) mod dragonfly;
pub(crate) mod fat_tree;
pub(crate) mod full;
pub(crate) mod star;
pub(crate) mod torus;
pub(crate) mod zones;

use super::build::Builder;
use super::error::PlatformError;
use super::spec::{ClusterSpec, Topology};
use super::{Host, HostId, LinkId, Router, SharingPolicy};

/// Builds the hosts, links and router of a `<cluster>`.
pub(crate) fn build_cluster(c: &ClusterSpec, b: &mut Builder) -> Result<Box<dyn Router>, PlatformError> {
    match &c.topology {
        Topology::Flat => Ok(Box::new(star::build_cluster(c, b)?)),
        Topology::FatTree(p) => fat_tree::build(c, p, b),
        Topology::Torus(dims) => torus::build(c, dims, b),
        Topology::Dragonfly(p) => dragonfly::build(c, p, b),
    }
}

/// The per-node links of a cluster host that are not part of the topology.
#[derive(Copy, Clone, Debug, Default)]
pub(crate) struct LeafLinks {
    /// `<id>_link_<N>_loopback`, FATPIPE, used alone for self-communication.
    pub(crate) loopback: Option<LinkId>,
    /// `<id>_link_<N>_limiter`, SHARED, latency 0, crossed at both ends of every route.
    pub(crate) limiter: Option<LinkId>,
}

/// Creates host number `index` of a cluster (radical `radical`) followed by its loopback and
/// limiter links, in SimGrid's order (host, loopback, limiter).
pub(crate) fn add_cluster_host(
    c: &ClusterSpec,
    b: &mut Builder,
    radical: i64,
) -> Result<(HostId, LeafLinks), PlatformError> {
    let host = b.add_host(
        Host {
            name: c.host_name(radical),
            speed: c.speed,
            pstate_speeds: c.speeds.clone(),
            pstate: 0,
            cores: c.cores,
            properties: c.properties.clone(),
        },
        c.loc,
    )?;
    let node = b.host_node(host);
    let mut leaf = LeafLinks::default();
    if let Some((bw, lat)) = c.loopback {
        let l = b.add_link(
            format!("{}_link_{radical}_loopback", c.id),
            bw,
            lat,
            SharingPolicy::FatPipe,
            c.loc,
        )?;
        b.graph.add_edge(node, node, l);
        leaf.loopback = Some(l);
    }
    if c.limiter.is_some() {
        let l = b.add_limiter(c, &radical.to_string())?;
        b.graph.add_edge(node, node, l);
        leaf.limiter = Some(l);
    }
    Ok((host, leaf))
}

impl Builder<'_> {
    /// Creates the limiter link `<cluster>_link_<tag>_limiter` (SHARED, latency 0).
    pub(crate) fn add_limiter(&mut self, c: &ClusterSpec, tag: &str) -> Result<LinkId, PlatformError> {
        let bw = c
            .limiter
            .expect("add_limiter is only called for clusters with limiter_link");
        self.add_link(
            format!("{}_link_{tag}_limiter", c.id),
            bw,
            0.0,
            SharingPolicy::Shared,
            c.loc,
        )
    }
}
