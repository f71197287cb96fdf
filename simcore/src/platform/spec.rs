//! The format-independent description of a platform, produced by the XML and TOML front ends
//! and consumed by the builder (`load.rs`).
//!
//! Both front ends turn each element/table into an [`Attrs`] list (name, value as written,
//! position), so unit parsing, defaults and value checks are written once and give the same
//! messages for both formats.

use super::error::{Loc, PlatformError, PlatformErrorKind as K};
use super::units::{self, UnitError};

/// The most hosts a platform may declare: 32 times the ranks a run can hold (each rank has its
/// own copy of the program, about 8000 fit), so that an absurd `radical` is an error naming the
/// limit rather than an allocation failure.
pub(crate) const MAX_HOSTS: usize = 1 << 18;

/// The most links a cluster may create (both halves of a SPLITDUPLEX cable counted, with the
/// limiter and loopback links): about 400 MB and a few seconds of loading. A two-level fat tree
/// of [`MAX_HOSTS`] hosts (`2;512,512;1,512;1,1`) has just that many.
pub(crate) const MAX_LINKS: usize = 1 << 20;

/// The longest `id`, `prefix`, `suffix` or `router_id` of a cluster, in bytes: they are repeated
/// in the names of its hosts and links.
pub(crate) const MAX_NAME: usize = 256;

/// The longest latency accepted, in seconds (about 30 years): longer is no network, and the
/// latencies of a route must add up to a finite time.
pub(crate) const MAX_LATENCY: f64 = 1e9;

/// An attribute (XML) or key (TOML) value as written, with its position.
#[derive(Clone, Debug)]
pub(crate) struct Val {
    pub(crate) text: String,
    pub(crate) loc: Loc,
}

/// The attributes of one element (XML) or table (TOML).
#[derive(Debug)]
pub(crate) struct Attrs<'f> {
    pub(crate) file: &'f str,
    pub(crate) element: &'static str,
    pub(crate) loc: Loc,
    pub(crate) items: Vec<(String, Val)>,
}

/// How a link is shared (SimGrid's `sharing_policy`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Policy {
    Shared,
    SplitDuplex,
    FatPipe,
}

impl<'f> Attrs<'f> {
    pub(crate) fn new(file: &'f str, element: &'static str, loc: Loc) -> Self {
        Attrs {
            file,
            element,
            loc,
            items: Vec::new(),
        }
    }

    pub(crate) fn push(&mut self, key: &str, text: impl Into<String>, loc: Loc) {
        self.items.push((
            key.to_string(),
            Val {
                text: text.into(),
                loc,
            },
        ));
    }

    pub(crate) fn err(&self, loc: Loc, kind: K) -> PlatformError {
        PlatformError::new(self.file, loc, kind)
    }

    /// Rejects any attribute not in `allowed`.
    pub(crate) fn check_known(&self, allowed: &[&str]) -> Result<(), PlatformError> {
        for (key, val) in &self.items {
            if !allowed.contains(&key.as_str()) {
                return Err(self.err(
                    val.loc,
                    K::UnknownAttribute {
                        element: self.element.to_string(),
                        attribute: key.clone(),
                    },
                ));
            }
        }
        Ok(())
    }

    pub(crate) fn get(&self, key: &str) -> Option<&Val> {
        self.items.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    pub(crate) fn required(&self, key: &str) -> Result<&Val, PlatformError> {
        self.get(key).ok_or_else(|| {
            self.err(
                self.loc,
                K::MissingAttribute {
                    element: self.element.to_string(),
                    attribute: key.to_string(),
                },
            )
        })
    }

    fn unit(
        &self,
        key: &str,
        val: &Val,
        parse: fn(&str) -> Result<f64, UnitError>,
    ) -> Result<f64, PlatformError> {
        parse(&val.text).map_err(|source| {
            self.err(
                val.loc,
                K::Unit {
                    key: key.to_string(),
                    source,
                },
            )
        })
    }

    fn invalid(&self, key: &str, val: &Val, reason: &str) -> PlatformError {
        self.err(
            val.loc,
            K::InvalidValue {
                key: key.to_string(),
                value: val.text.clone(),
                reason: reason.to_string(),
            },
        )
    }

    /// A bandwidth that must be > 0 (B/s).
    pub(crate) fn bandwidth(&self, key: &str) -> Result<Option<f64>, PlatformError> {
        let Some(val) = self.get(key) else { return Ok(None) };
        let bw = self.unit(key, val, units::parse_bandwidth)?;
        if bw.is_finite() && bw > 0.0 {
            Ok(Some(bw))
        } else {
            Err(self.invalid(
                key,
                val,
                "bandwidth must be positive (zero or negative bandwidth)",
            ))
        }
    }

    /// A latency that must be ≥ 0 (s).
    pub(crate) fn latency(&self, key: &str) -> Result<Option<f64>, PlatformError> {
        let Some(val) = self.get(key) else { return Ok(None) };
        let lat = self.unit(key, val, units::parse_time)?;
        if lat.is_finite() && lat > MAX_LATENCY {
            Err(self.invalid(key, val, "latency above 1e9 s (about 30 years)"))
        } else if lat.is_finite() && lat >= 0.0 {
            Ok(Some(lat))
        } else {
            Err(self.invalid(key, val, "latency must be zero or positive"))
        }
    }

    /// A speed list (`"1Gf"` or the pstate list `"1Gf,500Mf"`); returns entry `pstate` (flop/s, > 0).
    pub(crate) fn speed(&self, key: &str, pstate: usize) -> Result<f64, PlatformError> {
        let val = self.required(key)?;
        let speeds: Vec<&str> = val.text.split(',').collect();
        let Some(text) = speeds.get(pstate) else {
            return Err(self.invalid(
                key,
                val,
                &format!("pstate {pstate} but only {} speeds given", speeds.len()),
            ));
        };
        let one = Val {
            text: text.trim().to_string(),
            loc: val.loc,
        };
        let speed = self.unit(key, &one, units::parse_speed)?;
        if speed.is_finite() && speed > 0.0 {
            Ok(speed)
        } else {
            Err(self.invalid(key, val, "speed must be positive"))
        }
    }

    /// Entry `pstate` of a speed list, which may be zero (flop/s, ≥ 0).
    pub(crate) fn pstate_speed(&self, key: &str, pstate: usize) -> Result<f64, PlatformError> {
        let val = self.required(key)?;
        let text = val.text.split(',').nth(pstate).unwrap_or_default();
        let one = Val {
            text: text.trim().to_string(),
            loc: val.loc,
        };
        let speed = self.unit(key, &one, units::parse_speed)?;
        if speed.is_finite() && speed >= 0.0 {
            Ok(speed)
        } else {
            Err(self.invalid(key, val, "speeds must be zero or positive"))
        }
    }

    /// A positive integer (default `default`).
    pub(crate) fn positive_int(&self, key: &str, default: u32) -> Result<u32, PlatformError> {
        let Some(val) = self.get(key) else {
            return Ok(default);
        };
        match val.text.trim().parse::<u32>() {
            Ok(n) if n > 0 => Ok(n),
            _ => Err(self.invalid(key, val, "expected a positive integer")),
        }
    }

    /// A non-negative integer (default `default`).
    pub(crate) fn natural(&self, key: &str, default: usize) -> Result<usize, PlatformError> {
        let Some(val) = self.get(key) else {
            return Ok(default);
        };
        val.text
            .trim()
            .parse::<usize>()
            .map_err(|_| self.invalid(key, val, "expected a non-negative integer"))
    }

    /// A sharing policy (case-insensitive; FULLDUPLEX is SimGrid's deprecated name for SPLITDUPLEX).
    pub(crate) fn policy(&self, key: &str, default: Policy) -> Result<Policy, PlatformError> {
        let Some(val) = self.get(key) else {
            return Ok(default);
        };
        match val.text.trim().to_ascii_uppercase().as_str() {
            "SHARED" => Ok(Policy::Shared),
            "SPLITDUPLEX" | "FULLDUPLEX" => Ok(Policy::SplitDuplex),
            "FATPIPE" => Ok(Policy::FatPipe),
            "WIFI" | "NONLINEAR" => Err(self.err(
                val.loc,
                K::Unsupported {
                    what: format!("sharing policy `{}`", val.text),
                    reason: "only SHARED, SPLITDUPLEX and FATPIPE are implemented".to_string(),
                },
            )),
            _ => Err(self.invalid(key, val, "expected SHARED, SPLITDUPLEX or FATPIPE")),
        }
    }

    /// A yes/no flag (`YES`/`NO` in XML, `true`/`false` in TOML).
    pub(crate) fn flag(&self, key: &str, default: bool) -> Result<bool, PlatformError> {
        let Some(val) = self.get(key) else {
            return Ok(default);
        };
        match val.text.trim().to_ascii_uppercase().as_str() {
            "YES" | "TRUE" => Ok(true),
            "NO" | "FALSE" => Ok(false),
            _ => Err(self.invalid(key, val, "expected YES or NO")),
        }
    }
}

/// A `<host>` / `[[host]]`.
#[derive(Clone, Debug)]
pub(crate) struct HostSpec {
    pub(crate) name: String,
    pub(crate) speed: f64,
    /// Every pstate's speed (`speed="100Mf,50Mf"`), and the selected pstate (`speed` is its speed).
    pub(crate) speeds: Vec<f64>,
    pub(crate) pstate: usize,
    pub(crate) cores: u32,
    pub(crate) properties: Vec<(String, String)>,
    pub(crate) disks: Vec<DiskSpec>,
    pub(crate) loc: Loc,
}

/// A `<disk>` in a `<host>` / `[[host.disk]]`.
#[derive(Clone, Debug)]
pub(crate) struct DiskSpec {
    pub(crate) name: String,
    pub(crate) read_bw: f64,
    pub(crate) write_bw: f64,
    pub(crate) properties: Vec<(String, String)>,
    pub(crate) loc: Loc,
}

impl DiskSpec {
    pub(crate) const KEYS: &'static [&'static str] = &["id", "read_bw", "write_bw"];

    pub(crate) fn from_attrs(a: &Attrs, properties: Vec<(String, String)>) -> Result<Self, PlatformError> {
        a.check_known(Self::KEYS)?;
        let name = a.required("id")?.text.clone();
        a.required("read_bw")?;
        a.required("write_bw")?;
        Ok(DiskSpec {
            name,
            read_bw: a.bandwidth("read_bw")?.unwrap_or_default(),
            write_bw: a.bandwidth("write_bw")?.unwrap_or_default(),
            properties,
            loc: a.loc,
        })
    }
}

impl HostSpec {
    pub(crate) const KEYS: &'static [&'static str] = &[
        "id",
        "speed",
        "core",
        "pstate",
        "coordinates",
        "speed_file",
        "availability_file",
        "state_file",
    ];

    pub(crate) fn from_attrs(a: &Attrs, properties: Vec<(String, String)>) -> Result<Self, PlatformError> {
        a.check_known(Self::KEYS)?;
        let pstate = a.natural("pstate", 0)?;
        let speed = a.speed("speed", pstate)?;
        let n = a.required("speed")?.text.split(',').count();
        Ok(HostSpec {
            name: a.required("id")?.text.clone(),
            speed,
            // Pstates other than the selected one may have no speed (SimGrid's boot and
            // shutdown pstates, `energy_boot.xml`).
            speeds: (0..n)
                .map(|i| {
                    if i == pstate {
                        Ok(speed)
                    } else {
                        a.pstate_speed("speed", i)
                    }
                })
                .collect::<Result<_, _>>()?,
            pstate,
            cores: a.positive_int("core", 1)?,
            properties,
            disks: Vec::new(),
            loc: a.loc,
        })
    }
}

/// A `<link>` / `[[link]]`, before SPLITDUPLEX is split in two.
#[derive(Clone, Debug)]
pub(crate) struct LinkSpec {
    pub(crate) name: String,
    pub(crate) bandwidth: f64,
    pub(crate) latency: f64,
    pub(crate) policy: Policy,
    pub(crate) loc: Loc,
}

impl LinkSpec {
    pub(crate) const KEYS: &'static [&'static str] = &[
        "id",
        "bandwidth",
        "latency",
        "sharing_policy",
        "bandwidth_file",
        "latency_file",
        "state_file",
    ];

    pub(crate) fn from_attrs(a: &Attrs) -> Result<Self, PlatformError> {
        a.check_known(Self::KEYS)?;
        let name = a.required("id")?.text.clone();
        a.required("bandwidth")?;
        Ok(LinkSpec {
            name,
            bandwidth: a.bandwidth("bandwidth")?.unwrap_or_default(),
            latency: a.latency("latency")?.unwrap_or(0.0),
            // The DTD default for a plain <link> is SHARED.
            policy: a.policy("sharing_policy", Policy::Shared)?,
            loc: a.loc,
        })
    }
}

/// Direction of a link in a route (`<link_ctn direction=..>`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Direction {
    None,
    Up,
    Down,
}

/// One link of a route as written.
#[derive(Clone, Debug)]
pub(crate) struct LinkRef {
    pub(crate) name: String,
    pub(crate) direction: Direction,
    pub(crate) loc: Loc,
}

/// A `<route>` / `[[route]]`.
#[derive(Clone, Debug)]
pub(crate) struct RouteSpec {
    pub(crate) src: Val,
    pub(crate) dst: Val,
    pub(crate) links: Vec<LinkRef>,
    pub(crate) symmetrical: bool,
    pub(crate) loc: Loc,
}

/// `<host_link>` in a `<zone routing="Cluster">`.
#[derive(Clone, Debug)]
pub(crate) struct HostLinkSpec {
    pub(crate) host: Val,
    pub(crate) up: Val,
    pub(crate) down: Val,
    pub(crate) loc: Loc,
}

/// How routes between explicitly declared hosts are found.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Routing {
    /// Every route is declared.
    Full,
    /// Shortest paths (in links) over the declared routes, SimGrid's Floyd.
    Floyd,
    /// Same paths found with a per-source search (SimGrid's Dijkstra with unit costs).
    Dijkstra,
    /// A hand-made star cluster: `<host_link>` per host and an optional `<backbone>`.
    Cluster,
}

impl Routing {
    pub(crate) fn parse(a: &Attrs, key: &str) -> Result<Routing, PlatformError> {
        let val = a.required(key)?;
        match val.text.trim().to_ascii_lowercase().as_str() {
            "full" => Ok(Routing::Full),
            "floyd" => Ok(Routing::Floyd),
            "dijkstra" | "dijkstracache" => Ok(Routing::Dijkstra),
            "cluster" => Ok(Routing::Cluster),
            "none" | "vivaldi" | "wifi" | "star" | "clusterfattree" | "clustertorus" | "clusterdragonfly" => {
                Err(a.err(
                    val.loc,
                    K::Unsupported {
                        what: format!("zone routing `{}`", val.text),
                        reason: "use Full, Floyd, Dijkstra, Cluster, or a <cluster> element".to_string(),
                    },
                ))
            }
            _ => Err(a.invalid(key, val, "expected Full, Floyd, Dijkstra or Cluster")),
        }
    }
}

/// Parameters of a PGFT fat tree (`"h;d1,..,dh;u1,..,uh;c1,..,ch"`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct FatTreeParams {
    /// Children per switch at each level (`D`).
    pub(crate) down: Vec<usize>,
    /// Parents per node at each level (`U`).
    pub(crate) up: Vec<usize>,
    /// Parallel cables between a node and each parent (`C`).
    pub(crate) count: Vec<usize>,
}

/// Parameters of a dragonfly (`"G,Nb;C,Nk;R,Ng;N"`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct DragonflyParams {
    pub(crate) groups: usize,
    pub(crate) blue_links: usize,
    pub(crate) chassis: usize,
    pub(crate) black_links: usize,
    pub(crate) routers: usize,
    pub(crate) green_links: usize,
    pub(crate) nodes: usize,
}

/// The radicals of a cluster (`"0-99,120"`): the ranges as written, expanded on use.
#[derive(Clone, Debug)]
pub(crate) struct Radicals {
    ranges: Vec<(i64, i64)>,
    count: usize,
}

impl Radicals {
    /// Number of hosts (at most [`MAX_HOSTS`]).
    pub(crate) fn len(&self) -> usize {
        self.count
    }

    /// The radicals, in the order written.
    pub(crate) fn iter(&self) -> impl Iterator<Item = i64> + '_ {
        self.ranges.iter().flat_map(|&(start, end)| start..=end)
    }
}

/// Cluster shape.
#[derive(Clone, Debug)]
pub(crate) enum Topology {
    Flat,
    FatTree(FatTreeParams),
    Torus(Vec<usize>),
    Dragonfly(DragonflyParams),
}

impl Topology {
    /// The switches (or routers) and the cables of the topology for `hosts` hosts (FLAT: a
    /// private cable per host); `None` when a count overflows.
    fn size(&self, hosts: usize) -> Option<(usize, usize)> {
        let pairs = |n: usize| n.checked_mul(n.saturating_sub(1)).map(|x| x / 2);
        match self {
            Topology::Flat => Some((0, hosts)),
            Topology::FatTree(p) => {
                let (mut switches, mut cables, mut nodes) = (0usize, 0usize, hosts);
                for l in 0..p.down.len() {
                    let up = nodes.checked_mul(p.up[l])?.checked_mul(p.count[l])?;
                    cables = cables.checked_add(up)?;
                    nodes = p.up[..=l]
                        .iter()
                        .chain(&p.down[l + 1..])
                        .try_fold(1usize, |acc, &x| acc.checked_mul(x))?;
                    switches = switches.checked_add(nodes)?;
                }
                Some((switches, cables))
            }
            Topology::Torus(dims) => Some((0, hosts.checked_mul(dims.len())?)),
            Topology::Dragonfly(p) => {
                let routers = p.groups.checked_mul(p.chassis)?.checked_mul(p.routers)?;
                let green = p.groups.checked_mul(p.chassis)?.checked_mul(pairs(p.routers)?)?;
                let black = p.groups.checked_mul(p.routers)?.checked_mul(pairs(p.chassis)?)?;
                let cables = hosts
                    .checked_add(green)?
                    .checked_add(black)?
                    .checked_add(pairs(p.groups)?)?;
                Some((routers, cables))
            }
        }
    }

    fn name(&self) -> &'static str {
        match self {
            Topology::Flat => "FLAT",
            Topology::FatTree(_) => "FAT_TREE",
            Topology::Torus(_) => "TORUS",
            Topology::Dragonfly(_) => "DRAGONFLY",
        }
    }
}

/// A `<cluster>` / `[[cluster]]`, with units parsed and topology checked.
#[derive(Clone, Debug)]
pub(crate) struct ClusterSpec {
    pub(crate) id: String,
    pub(crate) prefix: String,
    pub(crate) suffix: String,
    pub(crate) radicals: Radicals,
    /// The speed of pstate 0, a cluster's hosts' pstate.
    pub(crate) speed: f64,
    /// Every pstate's speed (`speed="100Mf,50Mf,20Mf"`; those after the first may be 0).
    pub(crate) speeds: Vec<f64>,
    pub(crate) cores: u32,
    pub(crate) bw: f64,
    pub(crate) lat: f64,
    pub(crate) policy: Policy,
    pub(crate) topology: Topology,
    /// Backbone (bandwidth, latency, policy), FLAT only.
    pub(crate) backbone: Option<(f64, f64, Policy)>,
    pub(crate) router_id: String,
    /// Per-node limiter bandwidth (SHARED, latency 0).
    pub(crate) limiter: Option<f64>,
    /// Per-node loopback (bandwidth, latency), FATPIPE.
    pub(crate) loopback: Option<(f64, f64)>,
    pub(crate) properties: Vec<(String, String)>,
    pub(crate) loc: Loc,
    /// The attributes as written, to read the cluster again with some of
    /// them changed ([`ClusterSpec::with_attribute`]).
    pub(crate) written: Vec<(String, Val)>,
}

impl ClusterSpec {
    /// The cluster read again from its attributes as written, `key` set to
    /// `value` (checked as in a file; an error's position is the cluster's).
    pub(crate) fn with_attribute(&self, file: &str, key: &str, value: &str) -> Result<Self, PlatformError> {
        let mut a = Attrs::new(file, "cluster", self.loc);
        for (k, v) in &self.written {
            if k != key {
                a.push(k, v.text.clone(), v.loc);
            }
        }
        a.push(key, value, self.loc);
        ClusterSpec::from_attrs(&a, self.properties.clone())
    }

    pub(crate) const KEYS: &'static [&'static str] = &[
        "id",
        "prefix",
        "suffix",
        "radical",
        "speed",
        "core",
        "bw",
        "lat",
        "sharing_policy",
        "topology",
        "topo_parameters",
        "bb_bw",
        "bb_lat",
        "bb_sharing_policy",
        "router_id",
        "limiter_link",
        "loopback_bw",
        "loopback_lat",
    ];

    pub(crate) fn from_attrs(a: &Attrs, properties: Vec<(String, String)>) -> Result<Self, PlatformError> {
        a.check_known(Self::KEYS)?;
        for key in ["id", "prefix", "suffix", "router_id"] {
            if let Some(val) = a.get(key).filter(|v| v.text.len() > MAX_NAME) {
                let start: String = val.text.chars().take(32).collect();
                return Err(a.err(
                    val.loc,
                    K::InvalidValue {
                        key: key.to_string(),
                        value: format!("{start}..."),
                        reason: format!(
                            "{} bytes, more than {MAX_NAME} (it is part of the name of every host or link)",
                            val.text.len()
                        ),
                    },
                ));
            }
        }
        let id = a.required("id")?.text.clone();
        let prefix = a.required("prefix")?.text.clone();
        let suffix = a.required("suffix")?.text.clone();
        let radicals = parse_radicals(a, a.required("radical")?)?;
        let speed = a.speed("speed", 0)?;
        let speeds = std::iter::once(Ok(speed))
            .chain((1..a.required("speed")?.text.split(',').count()).map(|i| a.pstate_speed("speed", i)))
            .collect::<Result<_, _>>()?;
        let cores = a.positive_int("core", 1)?;
        a.required("bw")?;
        a.required("lat")?;
        let bw = a.bandwidth("bw")?.unwrap_or_default();
        let lat = a.latency("lat")?.unwrap_or_default();
        let policy = a.policy("sharing_policy", Policy::SplitDuplex)?;

        let params = a.get("topo_parameters").cloned().unwrap_or(Val {
            text: String::new(),
            loc: a.loc,
        });
        let topology = match a.get("topology") {
            None => Topology::Flat,
            Some(val) => match val.text.trim().to_ascii_uppercase().as_str() {
                "FLAT" => Topology::Flat,
                "FAT_TREE" | "FATTREE" => Topology::FatTree(parse_fat_tree(a, &params, radicals.len())?),
                "TORUS" => Topology::Torus(parse_torus(a, &params, radicals.len())?),
                "DRAGONFLY" => Topology::Dragonfly(parse_dragonfly(a, &params, radicals.len())?),
                _ => return Err(a.invalid("topology", val, "expected FLAT, FAT_TREE, TORUS or DRAGONFLY")),
            },
        };

        let bb_bw = a.bandwidth("bb_bw")?;
        let bb_lat = a.latency("bb_lat")?;
        let backbone = match (bb_bw, bb_lat) {
            (Some(bw), lat) => {
                let policy = a.policy("bb_sharing_policy", Policy::Shared)?;
                if policy == Policy::SplitDuplex {
                    let val = a.required("bb_sharing_policy")?;
                    return Err(a.invalid("bb_sharing_policy", val, "a backbone is SHARED or FATPIPE"));
                }
                Some((bw, lat.unwrap_or(0.0), policy))
            }
            (None, Some(lat)) if lat > 0.0 => {
                return Err(a.err(
                    a.loc,
                    K::MissingAttribute {
                        element: a.element.to_string(),
                        attribute: "bb_bw".to_string(),
                    },
                ))
            }
            _ => None,
        };
        if backbone.is_some() && !matches!(topology, Topology::Flat) {
            let val = a.get("bb_bw").map_or(a.loc, |v| v.loc);
            return Err(a.err(
                val,
                K::Unsupported {
                    what: "backbone on a non-FLAT cluster".to_string(),
                    reason: "SimGrid only builds a backbone for FLAT clusters".to_string(),
                },
            ));
        }
        let loopback_bw = a.bandwidth("loopback_bw")?;
        let loopback_lat = a.latency("loopback_lat")?;
        let loopback = match (loopback_bw, loopback_lat) {
            (Some(bw), lat) => Some((bw, lat.unwrap_or(0.0))),
            (None, Some(lat)) if lat > 0.0 => {
                return Err(a.err(
                    a.loc,
                    K::MissingAttribute {
                        element: a.element.to_string(),
                        attribute: "loopback_bw".to_string(),
                    },
                ))
            }
            _ => None,
        };
        let router_id = match a.get("router_id") {
            Some(v) if !v.text.is_empty() => v.text.clone(),
            _ => format!("{prefix}{id}_router{suffix}"),
        };
        let limiter = a.bandwidth("limiter_link")?;
        let radical = a.required("radical")?;
        check_size(
            a,
            if matches!(topology, Topology::Flat) {
                radical
            } else {
                &params
            },
            &topology,
            radicals.len(),
            policy,
            limiter.is_some(),
            loopback.is_some(),
        )?;
        if let Topology::Dragonfly(p) = &topology {
            let most = p.blue_links.max(p.black_links).max(p.green_links);
            if !(bw * most as f64).is_finite() {
                return Err(topology_error(
                    a,
                    &params,
                    "DRAGONFLY",
                    format!("{most} links per pair of bandwidth {bw} B/s make an infinite bandwidth"),
                ));
            }
        }
        Ok(ClusterSpec {
            id,
            prefix,
            suffix,
            radicals,
            speed,
            speeds,
            cores,
            bw,
            lat,
            policy,
            topology,
            backbone,
            router_id,
            limiter,
            loopback,
            properties,
            loc: a.loc,
            written: a.items.clone(),
        })
    }

    /// Name of the host with radical `r`.
    pub(crate) fn host_name(&self, r: i64) -> String {
        format!("{}{}{}", self.prefix, r, self.suffix)
    }
}

/// `"0-99"`, `"10-20,2"`: ranges and singletons separated by `,` (SimGrid's parser; the
/// documentation's `;` separator is not what the code accepts). At most [`MAX_HOSTS`] in all.
fn parse_radicals(a: &Attrs, val: &Val) -> Result<Radicals, PlatformError> {
    let bad = |reason: String| a.invalid("radical", val, &reason);
    let mut ranges = Vec::new();
    let mut count: u128 = 0;
    for group in val.text.split(',') {
        let ends: Vec<&str> = group.split('-').map(str::trim).collect();
        let num = |s: &str| {
            s.parse::<i64>()
                .map_err(|_| bad(format!("`{s}` is not an integer")))
        };
        let (start, end) = match ends.as_slice() {
            [single] => (num(single)?, num(single)?),
            [start, end] => (num(start)?, num(end)?),
            _ => return Err(bad(format!("malformed range `{group}` (expected N or N-M)"))),
        };
        if start > end {
            return Err(bad(format!("empty range `{group}`")));
        }
        count += (i128::from(end) - i128::from(start) + 1) as u128;
        ranges.push((start, end));
    }
    if count > MAX_HOSTS as u128 {
        return Err(bad(format!(
            "{count} hosts, more than the limit of {MAX_HOSTS} hosts per platform"
        )));
    }
    Ok(Radicals {
        ranges,
        count: count as usize,
    })
}

fn topology_error(a: &Attrs, val: &Val, topology: &str, reason: String) -> PlatformError {
    a.err(
        val.loc,
        K::Topology {
            topology: topology.to_string(),
            parameters: val.text.clone(),
            reason,
        },
    )
}

/// Rejects a cluster that would create more than [`MAX_LINKS`] links (`val` is what sets its
/// size: the topology parameters, or the radical of a FLAT cluster).
fn check_size(
    a: &Attrs,
    val: &Val,
    topology: &Topology,
    hosts: usize,
    policy: Policy,
    limiter: bool,
    loopback: bool,
) -> Result<(), PlatformError> {
    let per_cable = if policy == Policy::SplitDuplex { 2 } else { 1 };
    let links = topology.size(hosts).and_then(|(switches, cables)| {
        let limiters = if limiter { hosts.checked_add(switches)? } else { 0 };
        cables
            .checked_mul(per_cable)?
            .checked_add(limiters)?
            .checked_add(if loopback { hosts } else { 0 })
            .map(|links| (switches, cables, links))
    });
    let reason = match links {
        Some((_, _, links)) if links <= MAX_LINKS => return Ok(()),
        Some((switches, cables, links)) => format!(
            "{hosts} hosts, {switches} switches or routers and {cables} cables make {links} links, more \
             than the limit of {MAX_LINKS} links per platform"
        ),
        None => format!("more than the limit of {MAX_LINKS} links per platform (the counts overflow)"),
    };
    Err(topology_error(a, val, topology.name(), reason))
}

/// Parses a `,`-separated list of positive integers named `what`.
fn positive_list(
    a: &Attrs,
    val: &Val,
    topology: &str,
    text: &str,
    what: &str,
) -> Result<Vec<usize>, PlatformError> {
    text.split(',')
        .map(|s| match s.trim().parse::<usize>() {
            Ok(n) if n > 0 => Ok(n),
            _ => Err(topology_error(
                a,
                val,
                topology,
                format!("{what}: `{s}` is not a positive integer"),
            )),
        })
        .collect()
}

fn check_host_count(
    a: &Attrs,
    val: &Val,
    topology: &str,
    needed: usize,
    got: usize,
) -> Result<(), PlatformError> {
    if needed == got {
        Ok(())
    } else {
        Err(topology_error(
            a,
            val,
            topology,
            format!("the topology has {needed} hosts but the radical gives {got}"),
        ))
    }
}

fn parse_fat_tree(a: &Attrs, val: &Val, hosts: usize) -> Result<FatTreeParams, PlatformError> {
    const T: &str = "FAT_TREE";
    let fields: Vec<&str> = val.text.split(';').collect();
    if fields.len() != 4 {
        return Err(topology_error(
            a,
            val,
            T,
            format!(
                "expected 4 fields separated by `;` (levels;downlinks;uplinks;link counts), got {}",
                fields.len()
            ),
        ));
    }
    let levels = match fields[0].trim().parse::<usize>() {
        Ok(n) if n > 0 => n,
        _ => {
            return Err(topology_error(
                a,
                val,
                T,
                format!("level count `{}` is not a positive integer", fields[0]),
            ))
        }
    };
    let mut vectors = Vec::new();
    for (field, what) in fields[1..]
        .iter()
        .zip(["downlink counts", "uplink counts", "link counts"])
    {
        let v = positive_list(a, val, T, field, what)?;
        if v.len() != levels {
            return Err(topology_error(
                a,
                val,
                T,
                format!(
                    "{what} `{field}` has {} entries but there are {levels} levels",
                    v.len()
                ),
            ));
        }
        vectors.push(v);
    }
    let count = vectors.pop().unwrap_or_default();
    let up = vectors.pop().unwrap_or_default();
    let down = vectors.pop().unwrap_or_default();
    let needed = down
        .iter()
        .try_fold(1usize, |acc, &d| acc.checked_mul(d))
        .unwrap_or(usize::MAX);
    check_host_count(a, val, T, needed, hosts)?;
    Ok(FatTreeParams { down, up, count })
}

fn parse_torus(a: &Attrs, val: &Val, hosts: usize) -> Result<Vec<usize>, PlatformError> {
    const T: &str = "TORUS";
    if val.text.trim().is_empty() {
        return Err(topology_error(
            a,
            val,
            T,
            "expected dimension sizes such as `4,4,4`".to_string(),
        ));
    }
    let dims = positive_list(a, val, T, &val.text, "dimension")?;
    let needed = dims
        .iter()
        .try_fold(1usize, |acc, &d| acc.checked_mul(d))
        .unwrap_or(usize::MAX);
    check_host_count(a, val, T, needed, hosts)?;
    Ok(dims)
}

fn parse_dragonfly(a: &Attrs, val: &Val, hosts: usize) -> Result<DragonflyParams, PlatformError> {
    const T: &str = "DRAGONFLY";
    let fields: Vec<&str> = val.text.split(';').collect();
    if fields.len() != 4 {
        return Err(topology_error(
            a,
            val,
            T,
            format!(
                "expected 4 fields `groups,blue;chassis,black;routers,green;nodes`, got {}",
                fields.len()
            ),
        ));
    }
    let mut pairs = Vec::new();
    for (field, what) in fields[..3].iter().zip(["groups", "chassis", "routers"]) {
        let v = positive_list(a, val, T, field, what)?;
        if v.len() != 2 {
            return Err(topology_error(
                a,
                val,
                T,
                format!(
                    "`{field}` must be `{what} count,links per pair`, got {} numbers",
                    v.len()
                ),
            ));
        }
        pairs.push((v[0], v[1]));
    }
    let nodes = positive_list(a, val, T, fields[3], "nodes per router")?;
    if nodes.len() != 1 {
        return Err(topology_error(
            a,
            val,
            T,
            format!("the last field `{}` must be one number", fields[3]),
        ));
    }
    let p = DragonflyParams {
        groups: pairs[0].0,
        blue_links: pairs[0].1,
        chassis: pairs[1].0,
        black_links: pairs[1].1,
        routers: pairs[2].0,
        green_links: pairs[2].1,
        nodes: nodes[0],
    };
    if p.groups > 1 && p.groups > p.routers {
        return Err(topology_error(
            a,
            val,
            T,
            format!(
                "{} groups but {} routers per chassis: SimGrid attaches the blue link towards group g to router g \
                 of the first chassis, so groups must not exceed routers",
                p.groups, p.routers
            ),
        ));
    }
    let needed = [p.groups, p.chassis, p.routers, p.nodes]
        .iter()
        .try_fold(1usize, |acc, &d| acc.checked_mul(d))
        .unwrap_or(usize::MAX);
    check_host_count(a, val, T, needed, hosts)?;
    Ok(p)
}

/// What a SimGrid zone routes with, once read (`routing=` of a `<zone>`, or a `<cluster>`).
#[derive(Clone, Debug)]
pub(crate) enum ZoneKind {
    /// Declared routes: Full, Floyd or Dijkstra.
    Routed(Routing),
    /// `routing="Cluster"`: a hand-made star (`<host_link>`, `<backbone>`, `<cabinet>`).
    Star,
    /// A `<cluster>` element: a zone of its own.
    Cluster(Box<ClusterSpec>),
    /// `routing="None"`: no route inside; its hosts are reached through the zone routes of its
    /// parent.
    Empty,
    /// `routing="Vivaldi"`: routes from coordinates and per-host links (`<peer>`).
    Vivaldi,
}

/// A `<zoneRoute>` (`<ASroute>`), or a bypass route: `gateways` is `(gw_src, gw_dst)` when the
/// ends are zones (always for a zone route; for a bypass, only for `<bypassZoneRoute>`).
#[derive(Clone, Debug)]
pub(crate) struct GatewayRoute {
    pub(crate) route: RouteSpec,
    pub(crate) gateways: Option<(Val, Val)>,
}

/// A `<cabinet>` of a `routing="Cluster"` zone: hosts `<prefix><radical><suffix>`, each with
/// its own `link_<host>_UP` and `link_<host>_DOWN` (SHARED).
#[derive(Clone, Debug)]
pub(crate) struct CabinetSpec {
    pub(crate) prefix: String,
    pub(crate) suffix: String,
    pub(crate) radicals: Radicals,
    pub(crate) speed: f64,
    pub(crate) bw: f64,
    pub(crate) lat: f64,
    pub(crate) loc: Loc,
}

impl CabinetSpec {
    pub(crate) const KEYS: &'static [&'static str] =
        &["id", "prefix", "suffix", "radical", "speed", "bw", "lat"];

    pub(crate) fn from_attrs(a: &Attrs) -> Result<Self, PlatformError> {
        a.check_known(Self::KEYS)?;
        a.required("id")?;
        a.required("bw")?;
        a.required("lat")?;
        Ok(CabinetSpec {
            prefix: a.required("prefix")?.text.clone(),
            suffix: a.required("suffix")?.text.clone(),
            radicals: parse_radicals(a, a.required("radical")?)?,
            speed: a.speed("speed", 0)?,
            bw: a.bandwidth("bw")?.unwrap_or_default(),
            lat: a.latency("lat")?.unwrap_or_default(),
            loc: a.loc,
        })
    }
}

/// A `<peer>` of a Vivaldi zone: a host with its own links in and out and coordinates.
#[derive(Clone, Debug)]
pub(crate) struct PeerSpec {
    pub(crate) host: HostSpec,
    pub(crate) bw_in: f64,
    pub(crate) bw_out: f64,
    pub(crate) coordinates: Val,
}

/// One element of a zone, in file order.
#[derive(Clone, Debug)]
pub(crate) enum ZoneItem {
    Host(HostSpec),
    Router(Val),
    Zone(usize),
    Route(RouteSpec),
    ZoneRoute(GatewayRoute),
    Bypass(GatewayRoute),
    HostLink(HostLinkSpec),
    Backbone(LinkSpec),
    Cabinet(CabinetSpec),
    Peer(PeerSpec),
}

/// A zone as written, for platforms whose zones route between themselves.
#[derive(Clone, Debug)]
pub(crate) struct ZoneSpec {
    pub(crate) id: String,
    pub(crate) kind: ZoneKind,
    pub(crate) parent: Option<usize>,
    pub(crate) loc: Loc,
    pub(crate) items: Vec<ZoneItem>,
    /// `coordinates` of hosts and routers (Vivaldi zones), by name.
    pub(crate) coordinates: Vec<(String, Val)>,
}

/// What a profile attached to a resource drives.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum ProfileKind {
    HostSpeed,
    HostState,
    LinkBandwidth,
    LinkLatency,
    LinkState,
}

impl ProfileKind {
    /// SimGrid's name of the kind (`<trace_connect kind=..>`).
    pub(crate) fn name(self) -> &'static str {
        match self {
            ProfileKind::HostSpeed => "SPEED",
            ProfileKind::HostState => "HOST_AVAIL",
            ProfileKind::LinkBandwidth => "BANDWIDTH",
            ProfileKind::LinkLatency => "LATENCY",
            ProfileKind::LinkState => "LINK_AVAIL",
        }
    }
}

/// Where a profile's text comes from.
#[derive(Clone, Debug)]
pub(crate) enum ProfileSource {
    /// A file (`speed_file=".."`, `<trace file=..>`), as written.
    File(Val),
    /// The text inside a `<trace>`: the text, its first line in the platform file, and the
    /// trace's periodicity.
    Inline(String, usize, f64),
}

/// A profile attached to a host or link (an attribute, or a `<trace_connect>`).
#[derive(Clone, Debug)]
pub(crate) struct ProfileAttach {
    pub(crate) kind: ProfileKind,
    /// The host or link name.
    pub(crate) element: Val,
    /// The profile's name (its file, or the trace id) and its text's origin.
    pub(crate) name: String,
    pub(crate) source: ProfileSource,
    pub(crate) loc: Loc,
}

impl ProfileAttach {
    /// The profiles named by a `<host>`'s or `<link>`'s attributes, in SimGrid's order of
    /// scheduling (state, then latency, then bandwidth or speed).
    pub(crate) fn from_attrs(a: &Attrs, host: bool) -> Result<Vec<ProfileAttach>, PlatformError> {
        let element = a.required("id")?.clone();
        let keys: &[(&str, ProfileKind)] = if host {
            &[
                ("state_file", ProfileKind::HostState),
                ("availability_file", ProfileKind::HostSpeed),
                ("speed_file", ProfileKind::HostSpeed),
            ]
        } else {
            &[
                ("state_file", ProfileKind::LinkState),
                ("latency_file", ProfileKind::LinkLatency),
                ("bandwidth_file", ProfileKind::LinkBandwidth),
            ]
        };
        if host && a.get("availability_file").is_some() && a.get("speed_file").is_some() {
            let v = a.required("availability_file")?;
            return Err(a.invalid(
                "availability_file",
                v,
                "both speed_file and its deprecated name availability_file are given",
            ));
        }
        Ok(keys
            .iter()
            .filter_map(|&(key, kind)| {
                let v = a.get(key).filter(|v| !v.text.is_empty())?;
                Some(ProfileAttach {
                    kind,
                    element: element.clone(),
                    name: v.text.clone(),
                    source: ProfileSource::File(v.clone()),
                    loc: v.loc,
                })
            })
            .collect())
    }
}

/// Everything a platform file declares, flattened (nested zones are merged) when one zone holds
/// it all; otherwise `zones` holds the tree and the flat fields only the links and the config.
#[derive(Debug)]
pub(crate) struct Spec {
    /// The zone tree (`zones[0]` is the outermost) when the platform needs SimGrid's routing
    /// between zones; empty when the flat fields describe it.
    pub(crate) zones: Vec<ZoneSpec>,
    pub(crate) config: Vec<(String, Val)>,
    pub(crate) routing: Routing,
    /// Id of the zone whose routing is used (graph node of a hand-made star zone).
    pub(crate) zone_id: String,
    pub(crate) routing_loc: Loc,
    pub(crate) hosts: Vec<HostSpec>,
    pub(crate) routers: Vec<Val>,
    pub(crate) links: Vec<LinkSpec>,
    pub(crate) routes: Vec<RouteSpec>,
    pub(crate) host_links: Vec<HostLinkSpec>,
    pub(crate) backbone: Option<LinkSpec>,
    pub(crate) clusters: Vec<ClusterSpec>,
    /// Profiles attached to hosts and links, in SimGrid's order of scheduling.
    pub(crate) profiles: Vec<ProfileAttach>,
}

impl Spec {
    pub(crate) fn new() -> Self {
        Spec {
            zones: Vec::new(),
            config: Vec::new(),
            routing: Routing::Full,
            zone_id: String::from("AS0"),
            routing_loc: Loc::default(),
            hosts: Vec::new(),
            routers: Vec::new(),
            links: Vec::new(),
            routes: Vec::new(),
            host_links: Vec::new(),
            backbone: None,
            clusters: Vec::new(),
            profiles: Vec::new(),
        }
    }
}
