//! Parallel generalized fat trees (PGFT) with D-mod-K routing, as SimGrid's `FatTreeZone`.
//!
//! # Parameters
//! `topo_parameters = "h;d1,..,dh;u1,..,uh;c1,..,ch"` (Zahavi, *D-Mod-K Routing Providing
//! Non-Blocking Traffic for Shift Permutations on Real Life Fat Trees*, 2010). With 0-indexed
//! vectors `D` (children per switch at level i+1), `U` (parents of each node of level i) and `C`
//! (parallel cables between a node of level i and each of its parents):
//! - hosts (level 0): `Π D[i]` (must equal the number of radicals);
//! - switches at level `l+1`: `Π_{j≤l} U[j] · Π_{j>l} D[j]`.
//!
//! # Labels and cables
//! A node of level `l` at position `p` has the mixed-radix label of `p` (digit 0 least
//! significant) where digit `j` has radix `U[j]` if `j < l`, else `D[j]`. A node of level `l` and
//! a switch of level `l+1` are related iff their labels agree on every digit except digit `l`.
//! Between related nodes there are `C[l]` cables; cable `j` is stored at the parent's child port
//! `child.label[l] + j·D[l]` and at the child's parent port `parent.label[l] + j·U[l]`.
//!
//! Node ids (used in link names) are SimGrid's: host = its index in radical order, switches
//! numbered downwards from `2·hosts − 1` (level 1 first, by position). Cables are created node by
//! node (level, then position), parent by parent (position), cable by cable, and named
//! `link_from_<child id>_<parent id>_<n>` with `n` a counter over all cables, plus `_UP`/`_DOWN`
//! for SPLITDUPLEX (going up uses `_UP`, going down `_DOWN`).
//!
//! # Routing (D-mod-K)
//! From the source, go up while the current node's subtree does not hold the destination (a
//! switch of level `l` holds a host iff their label digits `l..h` agree). A node of level `l` takes
//! parent port `(dst_position / Π_{i<l} U[i]) mod (U[l]·C[l])`. Going down from a switch of level
//! `l`, SimGrid scans child ports from `(src_position mod C[l−1])·D[l−1]` and takes the first port
//! `i` with `i mod D[l−1] = dst.label[l−1]`; the scan continues on the node just reached with the
//! next port number, which this implementation reproduces (it only matters when `C > 1`).
//! Limiters, if any, are crossed at each node left going up, at each switch left going down and
//! at the destination. A host talking to itself uses its loopback if the cluster has one, else goes
//! up to its leaf switch and back down.

use crate::platform::build::Builder;
use crate::platform::error::PlatformError;
use crate::platform::graph::connect_cable;
use crate::platform::routing::add_cluster_host;
use crate::platform::spec::{ClusterSpec, FatTreeParams};
use crate::platform::{HostId, LinkId, NoRoute, Router};

/// One cable between a node and one of its parents.
#[derive(Copy, Clone, Debug)]
struct Cable {
    up: LinkId,
    down: LinkId,
    lower: u32,
    upper: u32,
}

#[derive(Clone, Debug)]
struct Node {
    level: usize,
    position: usize,
    label: Box<[u32]>,
    /// Indexed by parent port; `None` only for top-level switches (empty).
    parents: Box<[Option<Cable>]>,
    /// Indexed by child port.
    children: Box<[Option<Cable>]>,
    limiter: Option<LinkId>,
}

/// A built fat tree: nodes are hosts (positions 0..n, same order as their [`HostId`]s from
/// `first_host`) followed by the switches, level by level.
#[derive(Debug)]
pub(crate) struct FatTreeRouter {
    levels: usize,
    down: Vec<usize>,
    up: Vec<usize>,
    count: Vec<usize>,
    nodes: Vec<Node>,
    hosts: usize,
    first_host: u32,
    loopback: Vec<Option<LinkId>>,
}

impl FatTreeRouter {
    fn in_subtree(&self, root: &Node, host: &Node) -> bool {
        root.level > host.level && (root.level..self.levels).all(|i| root.label[i] == host.label[i])
    }
}

impl FatTreeRouter {
    /// Appends the links from `src` to `dst` (every pair of its hosts has a route).
    pub(crate) fn links(&self, src: HostId, dst: HostId, out: &mut Vec<LinkId>) {
        let s = (src.0 - self.first_host) as usize;
        let d = (dst.0 - self.first_host) as usize;
        debug_assert!(s < self.hosts && d < self.hosts, "host outside the fat tree");
        if s == d {
            if let Some(l) = self.loopback[s] {
                out.push(l);
                return;
            }
        }
        let source = &self.nodes[s];
        let dest = &self.nodes[d];
        let mut cur = s;

        // Up, D-mod-K.
        while !self.in_subtree(&self.nodes[cur], dest) {
            let node = &self.nodes[cur];
            let l = node.level;
            let divisor: usize = self.up[..l].iter().product();
            let port = (dest.position / divisor) % (self.up[l] * self.count[l]);
            out.extend(node.limiter);
            let cable = node.parents[port].expect("fat-tree parent ports are all wired");
            out.push(cable.up);
            cur = cable.upper as usize;
        }

        // Down, with SimGrid's port scan.
        while cur != d {
            let start_level = self.nodes[cur].level;
            let mut port = (source.position % self.count[start_level - 1]) * self.down[start_level - 1];
            let before = cur;
            while port < self.nodes[cur].children.len() {
                let node = &self.nodes[cur];
                let l = node.level;
                if port % self.down[l - 1] == dest.label[l - 1] as usize {
                    let cable = node.children[port].expect("fat-tree child ports are all wired");
                    out.push(cable.down);
                    out.extend(node.limiter);
                    cur = cable.lower as usize;
                }
                port += 1;
            }
            assert_ne!(
                cur, before,
                "fat-tree descent found no child port towards the destination"
            );
        }
        out.extend(self.nodes[d].limiter);
    }
}

impl Router for FatTreeRouter {
    fn try_route(&self, src: HostId, dst: HostId, out: &mut Vec<LinkId>) -> Result<(), NoRoute> {
        self.links(src, dst, out);
        Ok(())
    }
}

/// Position of a label under radices `radix` (digit 0 least significant).
fn position_of(label: &[u32], radix: &[usize]) -> usize {
    label
        .iter()
        .zip(radix)
        .rev()
        .fold(0, |acc, (&digit, &r)| acc * r + digit as usize)
}

/// Builds the hosts, switches, cables and router of a FAT_TREE cluster.
pub(crate) fn build(
    c: &ClusterSpec,
    p: &FatTreeParams,
    b: &mut Builder,
) -> Result<Box<dyn Router>, PlatformError> {
    let levels = p.down.len();
    let n_hosts = c.radicals.len();
    // Radix of each label digit for nodes of level l.
    let radix = |l: usize| -> Vec<usize> {
        (0..levels)
            .map(|j| if j < l { p.up[j] } else { p.down[j] })
            .collect()
    };
    let mut nodes_by_level = vec![n_hosts];
    for l in 0..levels {
        nodes_by_level.push(p.up[..=l].iter().product::<usize>() * p.down[l + 1..].iter().product::<usize>());
    }
    let mut level_start = vec![0usize];
    for l in 0..levels {
        level_start.push(level_start[l] + nodes_by_level[l]);
    }
    let total = level_start[levels] + nodes_by_level[levels];

    let mut router = FatTreeRouter {
        levels,
        down: p.down.clone(),
        up: p.up.clone(),
        count: p.count.clone(),
        nodes: Vec::with_capacity(total),
        hosts: n_hosts,
        first_host: u32::try_from(b.hosts.len()).expect("fewer than 2^32 hosts"),
        loopback: Vec::with_capacity(n_hosts),
    };
    let mut graph_nodes = Vec::with_capacity(total);
    // SimGrid ids: hosts 0..n, switches from 2n-1 downwards.
    let mut sg_ids: Vec<usize> = (0..n_hosts).collect();

    for (position, r) in c.radicals.iter().enumerate() {
        let (host, leaf) = add_cluster_host(c, b, r)?;
        graph_nodes.push(b.host_node(host));
        router.loopback.push(leaf.loopback);
        router.nodes.push(Node {
            level: 0,
            position,
            label: Box::default(),
            parents: vec![None; p.up[0] * p.count[0]].into(),
            children: Box::default(),
            limiter: leaf.limiter,
        });
    }
    let mut next_id = 2 * n_hosts;
    for (l, &count) in nodes_by_level.iter().enumerate().skip(1) {
        for position in 0..count {
            next_id -= 1;
            sg_ids.push(next_id);
            let limiter = if c.limiter.is_some() {
                Some(b.add_limiter(c, &next_id.to_string())?)
            } else {
                None
            };
            let node = b.add_router(&format!("{}_switch_{next_id}", c.id), c.loc)?;
            if let Some(lim) = limiter {
                b.graph.add_edge(node, node, lim);
            }
            graph_nodes.push(node);
            let n_parents = if l < levels { p.up[l] * p.count[l] } else { 0 };
            router.nodes.push(Node {
                level: l,
                position,
                label: Box::default(),
                parents: vec![None; n_parents].into(),
                children: vec![None; p.down[l - 1] * p.count[l - 1]].into(),
                limiter,
            });
        }
    }
    // Labels.
    for l in 0..=levels {
        let rad = radix(l);
        for position in 0..nodes_by_level[l] {
            let mut rest = position;
            let label: Box<[u32]> = rad
                .iter()
                .map(|&r| {
                    let digit = rest % r;
                    rest /= r;
                    digit as u32
                })
                .collect();
            router.nodes[level_start[l] + position].label = label;
        }
    }
    // Cables, in SimGrid's creation order.
    let mut cable_counter = 0usize;
    for l in 0..levels {
        let parent_radix = radix(l + 1);
        for position in 0..nodes_by_level[l] {
            let child = level_start[l] + position;
            let child_label = router.nodes[child].label.clone();
            for parent_digit in 0..p.up[l] {
                let mut parent_label = child_label.to_vec();
                parent_label[l] = parent_digit as u32;
                let parent = level_start[l + 1] + position_of(&parent_label, &parent_radix);
                for j in 0..p.count[l] {
                    let name = format!("link_from_{}_{}_{}", sg_ids[child], sg_ids[parent], cable_counter);
                    cable_counter += 1;
                    let (up, down) = b.add_cable(&name, c.bw, c.lat, c.policy, c.loc)?;
                    let cable = Cable {
                        up,
                        down,
                        lower: child as u32,
                        upper: parent as u32,
                    };
                    let child_port = child_label[l] as usize + j * p.down[l];
                    let parent_port = parent_digit + j * p.up[l];
                    router.nodes[parent].children[child_port] = Some(cable);
                    router.nodes[child].parents[parent_port] = Some(cable);
                    connect_cable(&mut b.graph, graph_nodes[child], graph_nodes[parent], up, down);
                }
            }
        }
    }
    Ok(Box::new(router))
}
