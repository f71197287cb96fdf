//! Turns a [`Spec`] (what the file says) into a [`Platform`] (hosts, links, graph, router).

use std::collections::HashMap;

use petgraph::graph::NodeIndex;

use super::error::{Loc, PlatformError, PlatformErrorKind as K};
use super::graph::{NetNode, PlatformGraph};
use super::routing;
use super::spec::{Policy, Routing, Spec, ZoneItem, MAX_LATENCY};
use super::{Disk, Host, HostId, Link, LinkId, ModelLoopback, Platform, Router, SharingPolicy};

/// Accumulates hosts, links and graph nodes, rejecting duplicate names.
#[derive(Debug)]
pub(crate) struct Builder<'f> {
    pub(crate) file: &'f str,
    pub(crate) hosts: Vec<Host>,
    pub(crate) host_index: HashMap<String, HostId>,
    pub(crate) host_nodes: Vec<NodeIndex>,
    pub(crate) links: Vec<Link>,
    pub(crate) link_index: HashMap<String, LinkId>,
    pub(crate) routers: HashMap<String, NodeIndex>,
    pub(crate) graph: PlatformGraph,
}

impl<'f> Builder<'f> {
    pub(crate) fn new(file: &'f str) -> Self {
        Builder {
            file,
            hosts: Vec::new(),
            host_index: HashMap::new(),
            host_nodes: Vec::new(),
            links: Vec::new(),
            link_index: HashMap::new(),
            routers: HashMap::new(),
            graph: PlatformGraph::new(),
        }
    }

    pub(crate) fn err(&self, loc: Loc, kind: K) -> PlatformError {
        PlatformError::new(self.file, loc, kind)
    }

    fn duplicate(&self, loc: Loc, what: &str, name: &str) -> PlatformError {
        self.err(
            loc,
            K::Duplicate {
                what: what.to_string(),
                name: name.to_string(),
            },
        )
    }

    /// Adds a host and its graph node.
    pub(crate) fn add_host(&mut self, host: Host, loc: Loc) -> Result<HostId, PlatformError> {
        if self.host_index.contains_key(&host.name) || self.routers.contains_key(&host.name) {
            return Err(self.duplicate(loc, "host", &host.name));
        }
        let id = HostId(u32::try_from(self.hosts.len()).expect("fewer than 2^32 hosts"));
        self.host_index.insert(host.name.clone(), id);
        self.host_nodes.push(self.graph.add_node(NetNode::Host(id)));
        self.hosts.push(host);
        Ok(id)
    }

    /// Adds a named router (or switch) node.
    pub(crate) fn add_router(&mut self, name: &str, loc: Loc) -> Result<NodeIndex, PlatformError> {
        if self.host_index.contains_key(name) || self.routers.contains_key(name) {
            return Err(self.duplicate(loc, "router", name));
        }
        let node = self.graph.add_node(NetNode::Router(name.to_string()));
        self.routers.insert(name.to_string(), node);
        Ok(node)
    }

    /// Adds one link (one constraint).
    pub(crate) fn add_link(
        &mut self,
        name: String,
        bandwidth: f64,
        latency: f64,
        sharing: SharingPolicy,
        loc: Loc,
    ) -> Result<LinkId, PlatformError> {
        if self.link_index.contains_key(&name) {
            return Err(self.duplicate(loc, "link", &name));
        }
        // The parsers check every value written; this catches one computed from them (a
        // dragonfly's bandwidth times its link count, say) that is no longer sensible.
        for (key, value, fine, expected) in [
            ("bandwidth", bandwidth, bandwidth > 0.0, "a finite, positive"),
            (
                "latency",
                latency,
                (0.0..=MAX_LATENCY).contains(&latency),
                "a non-negative (at most 1e9 s)",
            ),
        ] {
            if !(value.is_finite() && fine) {
                return Err(self.err(
                    loc,
                    K::InvalidValue {
                        key: key.to_string(),
                        value: value.to_string(),
                        reason: format!("link `{name}` would get this {key}; expected {expected} value"),
                    },
                ));
            }
        }
        let id = LinkId(u32::try_from(self.links.len()).expect("fewer than 2^32 links"));
        self.link_index.insert(name.clone(), id);
        self.links.push(Link {
            name,
            bandwidth,
            latency,
            sharing,
        });
        Ok(id)
    }

    /// Adds a cable with a sharing policy: SPLITDUPLEX gives `<name>_UP` and `<name>_DOWN`,
    /// the others one link. Returns `(up, down)` (the same id twice when not split).
    pub(crate) fn add_cable(
        &mut self,
        name: &str,
        bandwidth: f64,
        latency: f64,
        policy: Policy,
        loc: Loc,
    ) -> Result<(LinkId, LinkId), PlatformError> {
        match policy {
            Policy::SplitDuplex => {
                let up = self.add_link(
                    format!("{name}_UP"),
                    bandwidth,
                    latency,
                    SharingPolicy::Shared,
                    loc,
                )?;
                let down = self.add_link(
                    format!("{name}_DOWN"),
                    bandwidth,
                    latency,
                    SharingPolicy::Shared,
                    loc,
                )?;
                Ok((up, down))
            }
            Policy::Shared => {
                let l = self.add_link(name.to_string(), bandwidth, latency, SharingPolicy::Shared, loc)?;
                Ok((l, l))
            }
            Policy::FatPipe => {
                let l = self.add_link(name.to_string(), bandwidth, latency, SharingPolicy::FatPipe, loc)?;
                Ok((l, l))
            }
        }
    }

    pub(crate) fn host_node(&self, host: HostId) -> NodeIndex {
        self.host_nodes[host.0 as usize]
    }

    fn finish(self, router: Box<dyn Router>, config: Vec<(String, String)>) -> Platform {
        Platform {
            hosts: self.hosts,
            links: self.links,
            host_index: self.host_index,
            router,
            config,
            graph: self.graph,
            link_index: self.link_index,
            disks: Vec::new(),
            profiles: Vec::new(),
        }
    }
}

/// Builds the platform described by `spec`; `loopback` is the network model's loopback link.
pub(crate) fn build(spec: Spec, file: &str, loopback: ModelLoopback) -> Result<Platform, PlatformError> {
    let mut b = Builder::new(file);
    let unsupported = |loc: Loc, what: &str, reason: &str| {
        PlatformError::new(
            file,
            loc,
            K::Unsupported {
                what: what.to_string(),
                reason: reason.to_string(),
            },
        )
    };
    if let Some(second) = spec.clusters.get(1) {
        return Err(unsupported(
            second.loc,
            "second cluster",
            "a platform holds one cluster (inter-zone routes are not implemented)",
        ));
    }
    let router: Box<dyn Router> = if !spec.zones.is_empty() {
        routing::zones::build(&spec, &mut b, loopback)?
    } else if let Some(cluster) = spec.clusters.first() {
        if let Some(loc) = spec
            .hosts
            .first()
            .map(|h| h.loc)
            .or(spec.links.first().map(|l| l.loc))
            .or(spec.routes.first().map(|r| r.loc))
        {
            return Err(unsupported(
                loc,
                "host, link or route next to a cluster",
                "a platform is either one cluster or a zone of explicit hosts, links and routes",
            ));
        }
        routing::build_cluster(cluster, &mut b)?
    } else {
        if spec.hosts.is_empty() {
            return Err(PlatformError::new(file, spec.routing_loc, K::NoHost));
        }
        match spec.routing {
            Routing::Cluster => {
                if let Some(route) = spec.routes.first() {
                    return Err(unsupported(
                        route.loc,
                        "<route> in a routing=\"Cluster\" zone",
                        "routes of a hand-made cluster come from its <host_link>s and <backbone>",
                    ));
                }
                routing::star::build_zone(&spec, &mut b)?
            }
            Routing::Full | Routing::Floyd | Routing::Dijkstra => {
                routing::full::build(&spec, &mut b, loopback)?
            }
        }
    };
    let config = spec.config.into_iter().map(|(k, v)| (k, v.text)).collect();
    let mut disks = Vec::new();
    let zone_hosts = spec.zones.iter().flat_map(|z| &z.items).filter_map(|i| match i {
        ZoneItem::Host(h) => Some(h),
        ZoneItem::Peer(p) => Some(&p.host),
        _ => None,
    });
    for h in spec.hosts.iter().chain(zone_hosts) {
        let host = *b.host_index.get(&h.name).expect("every declared host was added");
        for (i, d) in h.disks.iter().enumerate() {
            if h.disks[..i].iter().any(|o| o.name == d.name) {
                return Err(PlatformError::new(
                    file,
                    d.loc,
                    K::Duplicate {
                        what: format!("disk of host `{}`", h.name),
                        name: d.name.clone(),
                    },
                ));
            }
            disks.push(Disk {
                name: d.name.clone(),
                host,
                read_bw: d.read_bw,
                write_bw: d.write_bw,
                properties: d.properties.clone(),
            });
        }
    }
    let mut platform = b.finish(router, config);
    platform.disks = disks;
    Ok(platform)
}
