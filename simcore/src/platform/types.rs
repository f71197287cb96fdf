//! Core platform types shared by the parsers, the routers and the kernel.

use std::collections::HashMap;

/// Index of a host in [`Platform::hosts`].
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct HostId(pub u32);

/// Index of a link in [`Platform::links`].
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LinkId(pub u32);

/// Index of a disk in [`Platform::disks`].
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DiskId(pub u32);

/// How concurrent flows share a link (SimGrid semantics).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum SharingPolicy {
    /// Sum of the flows' rates is bounded by the bandwidth.
    Shared,
    /// Each flow may use the full bandwidth (max instead of sum).
    FatPipe,
}

/// A compute node.
#[derive(Clone, Debug)]
pub struct Host {
    /// Its name in the platform file.
    pub name: String,
    /// Speed of one core, flop/s, in the pstate selected by the platform file.
    pub speed: f64,
    /// The speed of one core in each pstate (`speed="100Mf,50Mf,20Mf"`), flop/s.
    pub pstate_speeds: Vec<f64>,
    /// The pstate the platform file selects (`pstate=".."`; `speed` is its speed).
    pub pstate: usize,
    /// Number of cores.
    pub cores: u32,
    /// Free-form properties (`<prop id=.. value=..>`), e.g. per-host `smpi/os`.
    pub properties: Vec<(String, String)>,
}

/// The bandwidth of a link that only carries a latency (the distance of two points of a Vivaldi
/// zone, which SimGrid adds to a route without any link): no flow uses its bandwidth, and a
/// message whose route has only such links ends once its latency is paid, as in SimGrid.
pub const LATENCY_ONLY_BANDWIDTH: f64 = 1e300;

/// A network link (one direction of a SPLITDUPLEX link, or a shared/fat-pipe link).
#[derive(Clone, Debug)]
pub struct Link {
    /// Its name in the platform file (`_UP`/`_DOWN` for SPLITDUPLEX halves).
    pub name: String,
    /// Bytes per second.
    pub bandwidth: f64,
    /// Seconds.
    pub latency: f64,
    /// How flows share it.
    pub sharing: SharingPolicy,
}

impl Link {
    /// Whether the link only adds its latency to a route ([`LATENCY_ONLY_BANDWIDTH`]).
    pub fn latency_only(&self) -> bool {
        self.bandwidth >= LATENCY_ONLY_BANDWIDTH
    }
}

/// A storage device attached to a host (SimGrid's `<disk>`): reads and writes share its
/// bandwidth as SimGrid's disk model shares it (see [`crate::engine`]).
#[derive(Clone, Debug)]
pub struct Disk {
    /// Its name in the platform file (unique per host, not platform-wide).
    pub name: String,
    /// The host it is attached to.
    pub host: HostId,
    /// Read bandwidth, bytes per second.
    pub read_bw: f64,
    /// Write bandwidth, bytes per second.
    pub write_bw: f64,
    /// Free-form properties (`mount`, `size`, `content`, ...), in file order.
    pub properties: Vec<(String, String)>,
}

impl Disk {
    /// The `mount` property (SimGrid's default: `/`).
    pub fn mount(&self) -> &str {
        self.properties
            .iter()
            .find(|(k, _)| k == "mount")
            .map_or("/", |(_, v)| v.as_str())
    }
}

/// Answers route queries. Implemented by each zone kind (full/explicit routes,
/// star clusters, fat tree, torus, dragonfly) and by platforms of several zones.
pub trait Router: std::fmt::Debug + Send + Sync {
    /// Appends to `out` the links crossed from `src` to `dst`, in order; `Err` when the
    /// platform has no route between them (SimGrid accepts such platforms and fails only when a
    /// message takes the missing route).
    fn try_route(&self, src: HostId, dst: HostId, out: &mut Vec<LinkId>) -> Result<(), NoRoute>;

    /// Where this platform's routes are known to give other times than SimGrid's, one sentence
    /// each, for the run to warn about (none by default).
    fn caveats(&self) -> Vec<String> {
        Vec::new()
    }

    /// Appends to `out` the links crossed from `src` to `dst`, in order.
    ///
    /// # Panics
    /// When there is no route: a message cannot be sent, and SimGrid stops there too.
    fn route(&self, src: HostId, dst: HostId, out: &mut Vec<LinkId>) {
        if let Err(e) = self.try_route(src, dst, out) {
            panic!("{e}");
        }
    }
}

/// A host pair without a route, and why.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("no route from `{src}` to `{dst}`: {reason}")]
pub struct NoRoute {
    /// The source host.
    pub src: String,
    /// The destination host.
    pub dst: String,
    /// What lacks: the zone and the points it has no route between.
    pub reason: String,
}

/// A loaded platform.
#[derive(Debug)]
pub struct Platform {
    /// Hosts, by [`HostId`].
    pub hosts: Vec<Host>,
    /// Links, by [`LinkId`].
    pub links: Vec<Link>,
    /// Host name → id.
    pub host_index: HashMap<String, HostId>,
    /// Routes between hosts.
    pub router: Box<dyn Router>,
    /// `<config><prop id=.. value=../></config>` entries, in file order (any `--cfg` key).
    pub config: Vec<(String, String)>,
    /// Hosts and routers/switches (nodes) joined by links (edges); see [`PlatformGraph`](super::PlatformGraph).
    pub graph: super::graph::PlatformGraph,
    /// Link name → id (both halves of a SPLITDUPLEX link are listed, as `<name>_UP`/`_DOWN`).
    pub link_index: HashMap<String, LinkId>,
    /// Disks, by [`DiskId`], in file order.
    pub disks: Vec<Disk>,
    /// Availability and state profiles of hosts and links, in SimGrid's order of scheduling.
    pub profiles: Vec<super::profile::ResourceProfile>,
}

impl Platform {
    /// Host `id`.
    pub fn host(&self, id: HostId) -> &Host {
        &self.hosts[id.0 as usize]
    }

    /// Link `id`.
    pub fn link(&self, id: LinkId) -> &Link {
        &self.links[id.0 as usize]
    }

    /// Disk `id`.
    pub fn disk(&self, id: DiskId) -> &Disk {
        &self.disks[id.0 as usize]
    }

    /// The disks attached to `host`, in file order.
    pub fn host_disks(&self, host: HostId) -> impl Iterator<Item = DiskId> + '_ {
        self.disks
            .iter()
            .enumerate()
            .filter(move |(_, d)| d.host == host)
            .map(|(i, _)| DiskId(i as u32))
    }

    /// The host called `name`.
    pub fn host_by_name(&self, name: &str) -> Option<HostId> {
        self.host_index.get(name).copied()
    }

    /// Links crossed from `src` to `dst`, in order.
    ///
    /// # Panics
    /// When the platform has no route from `src` to `dst` (see [`Platform::try_route`]).
    pub fn route(&self, src: HostId, dst: HostId) -> Vec<LinkId> {
        let mut out = Vec::new();
        self.router.route(src, dst, &mut out);
        out
    }

    /// Links crossed from `src` to `dst`, in order, or why there is no route. A SimGrid
    /// platform may leave host pairs without a route (a Full zone that does not declare one,
    /// zones without a `<zoneRoute>` between them): it is an error only for a message between
    /// them.
    pub fn try_route(&self, src: HostId, dst: HostId) -> Result<Vec<LinkId>, NoRoute> {
        let mut out = Vec::new();
        self.router.try_route(src, dst, &mut out)?;
        Ok(out)
    }

    /// Sum of the latencies of the links of a route.
    pub fn route_latency(&self, route: &[LinkId]) -> f64 {
        route.iter().map(|l| self.link(*l).latency).sum()
    }
}
