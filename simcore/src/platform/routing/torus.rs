//! N-dimensional tori, as SimGrid's `TorusZone`.
//!
//! `topo_parameters = "X,Y,Z,..."`: dimension sizes, first dimension varying fastest (host `i`
//! has coordinate `(i / Π_{k<j} dims[k]) mod dims[j]` in dimension `j`).
//!
//! Each host `i` owns one cable per dimension to its `+1` neighbour (with wrap-around), named
//! `<cluster>_link_from_<i>_to_<neighbour>` (+ `_UP`/`_DOWN` for SPLITDUPLEX). Moving `+1`
//! crosses the current node's cable in its `_UP` direction; moving `−1` crosses the previous
//! node's cable in its `_DOWN` direction.
//!
//! Routing is dimension-ordered: fix the first differing dimension, then the next. The direction
//! in a dimension is SimGrid's, decided from the *source* coordinate `m` and the target `t`
//! (size `d`, integer division): go `+1` if `t > m && t ≤ m + d/2`, or if
//! `m > d/2 && (m + d/2) mod d ≥ t`; else go `−1`. That is the shorter way round; on a tie (even
//! `d`, distance `d/2`) it goes `+1` except when `m ≤ d/2` and `t < m` (then `−1`).
//! Limiters, if any, are crossed at each node left and at the destination. A host talking to
//! itself uses its loopback if the cluster has one; otherwise its route is empty (as in SimGrid).

use crate::platform::build::Builder;
use crate::platform::error::PlatformError;
use crate::platform::graph::connect_cable;
use crate::platform::routing::{add_cluster_host, LeafLinks};
use crate::platform::spec::ClusterSpec;
use crate::platform::{HostId, LinkId, NoRoute, Router};

/// A built torus.
#[derive(Debug)]
pub(crate) struct TorusRouter {
    dims: Vec<usize>,
    first_host: u32,
    /// `cables[i * dims.len() + j]` = (up, down) of node `i`'s cable in dimension `j`.
    cables: Vec<(LinkId, LinkId)>,
    leaves: Vec<LeafLinks>,
}

impl TorusRouter {
    /// Next node and link when leaving `cur` along dimension `j` (`stride` = Π_{k<j} dims[k]).
    fn step(&self, cur: usize, j: usize, stride: usize, forward: bool) -> (usize, LinkId) {
        let d = self.dims[j];
        let coord = (cur / stride) % d;
        let n = self.dims.len();
        if forward {
            let next = if coord == d - 1 {
                cur + stride - stride * d
            } else {
                cur + stride
            };
            (next, self.cables[cur * n + j].0)
        } else {
            let next = if coord == 0 {
                cur + stride * d - stride
            } else {
                cur - stride
            };
            (next, self.cables[next * n + j].1)
        }
    }
}

impl TorusRouter {
    /// Appends the links from `src` to `dst` (every pair of its hosts has a route).
    pub(crate) fn links(&self, src: HostId, dst: HostId, out: &mut Vec<LinkId>) {
        let s = (src.0 - self.first_host) as usize;
        let t = (dst.0 - self.first_host) as usize;
        if s == t {
            if let Some(l) = self.leaves[s].loopback {
                out.push(l);
                return;
            }
        }
        let mut cur = s;
        while cur != t {
            let mut stride = 1;
            let mut hop = None;
            for (j, &d) in self.dims.iter().enumerate() {
                if (cur / stride) % d != (t / stride) % d {
                    let m = (s / stride) % d;
                    let target = (t / stride) % d;
                    let forward =
                        (target > m && target <= m + d / 2) || (m > d / 2 && (m + d / 2) % d >= target);
                    hop = Some(self.step(cur, j, stride, forward));
                    break;
                }
                stride *= d;
            }
            let (next, link) = hop.expect("a node different from the target differs in some dimension");
            out.extend(self.leaves[cur].limiter);
            out.push(link);
            cur = next;
        }
        out.extend(self.leaves[t].limiter);
    }
}

impl Router for TorusRouter {
    fn try_route(&self, src: HostId, dst: HostId, out: &mut Vec<LinkId>) -> Result<(), NoRoute> {
        self.links(src, dst, out);
        Ok(())
    }
}

/// Builds the hosts, cables and router of a TORUS cluster.
pub(crate) fn build(
    c: &ClusterSpec,
    dims: &[usize],
    b: &mut Builder,
) -> Result<Box<dyn Router>, PlatformError> {
    let first_host = u32::try_from(b.hosts.len()).expect("fewer than 2^32 hosts");
    let mut router = TorusRouter {
        dims: dims.to_vec(),
        first_host,
        cables: Vec::new(),
        leaves: Vec::with_capacity(c.radicals.len()),
    };
    let mut hosts = Vec::with_capacity(c.radicals.len());
    for (i, r) in c.radicals.iter().enumerate() {
        let (host, leaf) = add_cluster_host(c, b, r)?;
        hosts.push(host);
        router.leaves.push(leaf);
        let mut stride = 1;
        for &d in dims {
            let neighbour = if (i / stride) % d == d - 1 {
                i - (d - 1) * stride
            } else {
                i + stride
            };
            let name = format!("{}_link_from_{i}_to_{neighbour}", c.id);
            router
                .cables
                .push(b.add_cable(&name, c.bw, c.lat, c.policy, c.loc)?);
            stride *= d;
        }
    }
    let n = dims.len();
    for (i, &host) in hosts.iter().enumerate() {
        let mut stride = 1;
        for (j, &d) in dims.iter().enumerate() {
            let neighbour = if (i / stride) % d == d - 1 {
                i - (d - 1) * stride
            } else {
                i + stride
            };
            let (up, down) = router.cables[i * n + j];
            let (a, z) = (b.host_node(host), b.host_node(hosts[neighbour]));
            connect_cable(&mut b.graph, a, z, up, down);
            stride *= d;
        }
    }
    Ok(Box::new(router))
}
