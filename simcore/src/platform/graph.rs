//! The platform as a petgraph graph: hosts and routers/switches are nodes, links are edges.
//!
//! The graph is descriptive (for inspection, DOT export, connectivity checks); routes come from
//! the [`Router`](super::Router), which follows SimGrid's rules for each zone kind.
//!
//! Edge conventions:
//! - a SPLITDUPLEX cable gives two edges: `<name>_UP` from the lower node (host, or child switch)
//!   to the upper one, and `<name>_DOWN` back;
//! - a SHARED or FATPIPE cable gives one edge per direction, both carrying the same [`LinkId`];
//! - links that do not join two nodes (a cluster backbone, a limiter, a loopback) are self-loops
//!   on the node they belong to (the cluster router for a backbone);
//! - for zones with declared routes (Full/Floyd/Dijkstra), each link of a route `src → dst` gives
//!   an edge `src → dst` (routes do not name the intermediate points).

use super::{HostId, LinkId};
use petgraph::graph::{DiGraph, NodeIndex};

/// A node of the [`PlatformGraph`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NetNode {
    /// A host, by index in [`Platform::hosts`](super::Platform::hosts).
    Host(HostId),
    /// A router or switch (SimGrid name for declared routers and cluster routers; generated
    /// names such as `switch_<level>_<position>` for fat-tree switches).
    Router(String),
}

/// Hosts and routers joined by links.
pub type PlatformGraph = DiGraph<NetNode, LinkId>;

/// Adds `link` between `a` and `b` in both directions (a shared or fat-pipe cable).
pub(crate) fn connect_both(graph: &mut PlatformGraph, a: NodeIndex, b: NodeIndex, link: LinkId) {
    graph.add_edge(a, b, link);
    if a != b {
        graph.add_edge(b, a, link);
    }
}

/// Adds a cable from `lower` to `upper`: `(up, down)` are the two halves of a split-duplex link,
/// or twice the same link.
pub(crate) fn connect_cable(
    graph: &mut PlatformGraph,
    lower: NodeIndex,
    upper: NodeIndex,
    up: LinkId,
    down: LinkId,
) {
    if up == down {
        connect_both(graph, lower, upper, up);
    } else {
        graph.add_edge(lower, upper, up);
        graph.add_edge(upper, lower, down);
    }
}
