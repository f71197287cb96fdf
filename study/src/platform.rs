//! Platform files per point, from generator settings.
//!
//! `[platform]` in a study names a topology kind and its parameters; each
//! point gets its own file (written into the run's directory), in our TOML
//! format (`platforms/README.md`):
//!
//! - `fat_tree`, `torus`, `dragonfly`, `flat`: one `[[cluster]]`, exactly
//!   what a person would write, so the simulator's own generator and router
//!   (SimGrid's) build it;
//! - a fat tree whose link bandwidth or latency differs *per level* (a
//!   `[[cluster]]` has one `bw` and one `lat` for every cable), or with
//!   `explicit = true`: the cluster
//!   is built in memory by the simulator's own code (`simcore`), and written
//!   out as explicit hosts, links and routes (`routing = "full"`), with every
//!   link, in the cluster's order and under the cluster's name, given the
//!   bandwidth and latency of its level, and every route the cluster's
//!   D-mod-K route. Same hosts, links, routes and link order as the cluster:
//!   with equal levels the two files simulate identically (tested with HPL,
//!   whose chaotic time would show any difference);
//! - `file`: a platform file of the user's, copied as is.
//!
//! Replicas may perturb latencies: every latency (cables, backbone) is
//! multiplied by one factor `1 + δ`; see [`crate::design`].

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context, Result};
use simcore::platform::units::{parse_bandwidth, parse_speed, parse_time};
use simcore::platform::Platform;
use toml::Value;

/// A bandwidth, latency or speed: the text as written and its value in base units.
#[derive(Clone, Debug, PartialEq)]
pub struct Quantity {
    /// As written (`"10GBps"`, `"1us"`, or a plain number).
    pub text: String,
    /// In base units (B/s, s, flop/s).
    pub value: f64,
}

impl Quantity {
    fn read(
        v: &Value,
        key: &str,
        parse: fn(&str) -> Result<f64, simcore::platform::units::UnitError>,
    ) -> Result<Quantity> {
        let text = match v {
            Value::String(s) => s.clone(),
            Value::Integer(i) => i.to_string(),
            Value::Float(f) => format!("{f:e}"),
            other => bail!(
                "platform.{key} = {other}: expected a number or a string with a unit (\"10GBps\", \"1us\")"
            ),
        };
        let value = parse(&text).map_err(|e| anyhow!("platform.{key}: {e}"))?;
        if !value.is_finite() || value < 0.0 {
            bail!("platform.{key} = {text:?}: must be a finite, non-negative value");
        }
        Ok(Quantity { text, value })
    }

    /// The text to write, scaled by `factor` (the text as written when `factor` is 1).
    fn scaled(&self, factor: f64) -> String {
        if factor == 1.0 {
            self.text.clone()
        } else {
            format!("{:e}", self.value * factor)
        }
    }
}

/// Settings every generated cluster has.
#[derive(Clone, Debug, PartialEq)]
pub struct Hosts {
    /// Per-core speed.
    pub speed: Quantity,
    /// Cores per host.
    pub core: u32,
    /// Host name prefix (`node-` gives `node-0`, `node-1`, ...).
    pub prefix: String,
    /// `sharing_policy` of the cables.
    pub sharing_policy: String,
}

/// A generated platform's settings.
#[derive(Clone, Debug, PartialEq)]
pub enum PlatformSpec {
    /// Parallel generalized fat tree.
    FatTree {
        /// `levels`, `down`, `up`, `parallel` (h; d; u; c).
        levels: usize,
        /// Children per switch of each level.
        down: Vec<u32>,
        /// Parents of each node of the level below.
        up: Vec<u32>,
        /// Parallel cables per parent.
        parallel: Vec<u32>,
        /// Cable bandwidth per level (level 1: host to leaf switch).
        bw: Vec<Quantity>,
        /// Cable latency per level.
        lat: Vec<Quantity>,
        /// Write explicit hosts, links and routes even when the levels are alike.
        explicit: bool,
        /// Host settings.
        hosts: Hosts,
    },
    /// Torus.
    Torus {
        /// Sizes of the dimensions.
        dims: Vec<u32>,
        /// Cable bandwidth.
        bw: Quantity,
        /// Cable latency.
        lat: Quantity,
        /// Host settings.
        hosts: Hosts,
    },
    /// Dragonfly (SimGrid's G,Nb;C,Nk;R,Ng;N).
    Dragonfly {
        /// Groups and blue links between each pair of groups.
        groups: (u32, u32),
        /// Chassis per group and black links between same-rank routers.
        chassis: (u32, u32),
        /// Routers per chassis and green links between each pair.
        routers: (u32, u32),
        /// Hosts per router.
        hosts_per_router: u32,
        /// Cable bandwidth.
        bw: Quantity,
        /// Cable latency.
        lat: Quantity,
        /// Host settings.
        hosts: Hosts,
    },
    /// Star with an optional backbone.
    Flat {
        /// Number of hosts.
        count: u32,
        /// Private cable bandwidth.
        bw: Quantity,
        /// Private cable latency.
        lat: Quantity,
        /// Backbone bandwidth and latency.
        backbone: Option<(Quantity, Quantity)>,
        /// Host settings.
        hosts: Hosts,
    },
    /// A platform file of the user's.
    File(PathBuf),
}

fn int_list(t: &mut toml::Table, key: &str, len: Option<usize>, default: Option<u32>) -> Result<Vec<u32>> {
    let v = match t.remove(key) {
        Some(v) => v,
        None => match (default, len) {
            (Some(d), Some(n)) => return Ok(vec![d; n]),
            _ => bail!("platform.{key} is required"),
        },
    };
    let items = match v {
        Value::Array(a) => a,
        Value::String(s) => s
            .split(',')
            .map(|x| x.trim().parse::<i64>().map(Value::Integer))
            .collect::<Result<_, _>>()
            .map_err(|_| anyhow!("platform.{key} = {s:?}: expected integers separated by commas"))?,
        Value::Integer(i) => vec![Value::Integer(i)],
        other => bail!("platform.{key} = {other}: expected a list of integers"),
    };
    let mut out = Vec::new();
    for x in &items {
        match x {
            Value::Integer(i) if *i >= 1 && *i <= u32::MAX as i64 => out.push(*i as u32),
            other => bail!("platform.{key}: {other} is not a positive integer"),
        }
    }
    if let Some(n) = len {
        if out.len() != n {
            bail!("platform.{key} has {} entries but levels = {n}", out.len());
        }
    }
    Ok(out)
}

fn int(t: &mut toml::Table, key: &str, default: Option<u32>) -> Result<u32> {
    match t.remove(key) {
        Some(Value::Integer(i)) if i >= 1 && i <= u32::MAX as i64 => Ok(i as u32),
        Some(other) => bail!("platform.{key} = {other}: expected a positive integer"),
        None => default.ok_or_else(|| anyhow!("platform.{key} is required")),
    }
}

fn string(t: &mut toml::Table, key: &str, default: &str) -> Result<String> {
    match t.remove(key) {
        Some(Value::String(s)) => Ok(s),
        Some(other) => bail!("platform.{key} = {other}: expected a string"),
        None => Ok(default.to_string()),
    }
}

fn quantity(
    t: &mut toml::Table,
    key: &str,
    parse: fn(&str) -> Result<f64, simcore::platform::units::UnitError>,
) -> Result<Quantity> {
    let v = t
        .remove(key)
        .ok_or_else(|| anyhow!("platform.{key} is required"))?;
    Quantity::read(&v, key, parse)
}

fn per_level(
    t: &mut toml::Table,
    key: &str,
    levels: usize,
    parse: fn(&str) -> Result<f64, simcore::platform::units::UnitError>,
) -> Result<Vec<Quantity>> {
    match t
        .remove(key)
        .ok_or_else(|| anyhow!("platform.{key} is required"))?
    {
        Value::Array(a) => {
            if a.len() != levels {
                bail!(
                    "platform.{key} has {} entries but levels = {levels} (or give one value for every level)",
                    a.len()
                );
            }
            a.iter()
                .enumerate()
                .map(|(i, v)| Quantity::read(v, &format!("{key}[{i}]"), parse))
                .collect()
        }
        v => Ok(vec![Quantity::read(&v, key, parse)?; levels]),
    }
}

impl PlatformSpec {
    /// From the `platform.*` parameters.
    pub fn from_table(mut t: toml::Table, base_dir: &Path) -> Result<PlatformSpec> {
        let kind = string(&mut t, "kind", "")?;
        let hosts = |t: &mut toml::Table| -> Result<Hosts> {
            let speed = match t.remove("speed") {
                Some(v) => Quantity::read(&v, "speed", parse_speed)?,
                None => Quantity {
                    text: "1Gf".into(),
                    value: 1e9,
                },
            };
            let sharing_policy = string(t, "sharing_policy", "SPLITDUPLEX")?;
            if !["SPLITDUPLEX", "SHARED", "FATPIPE"].contains(&sharing_policy.as_str()) {
                bail!(
                    "platform.sharing_policy = {sharing_policy:?}: expected SPLITDUPLEX, SHARED or FATPIPE"
                );
            }
            Ok(Hosts {
                speed,
                core: int(t, "core", Some(1))?,
                prefix: string(t, "prefix", "node-")?,
                sharing_policy,
            })
        };
        let spec = match kind.as_str() {
            "fat_tree" | "FAT_TREE" => {
                let levels = int(&mut t, "levels", None)? as usize;
                PlatformSpec::FatTree {
                    levels,
                    down: int_list(&mut t, "down", Some(levels), None)?,
                    up: int_list(&mut t, "up", Some(levels), None)?,
                    parallel: int_list(&mut t, "parallel", Some(levels), Some(1))?,
                    bw: per_level(&mut t, "bw", levels, parse_bandwidth)?,
                    lat: per_level(&mut t, "lat", levels, parse_time)?,
                    explicit: match t.remove("explicit") {
                        None => false,
                        Some(Value::Boolean(b)) => b,
                        Some(other) => bail!("platform.explicit = {other}: expected true or false"),
                    },
                    hosts: hosts(&mut t)?,
                }
            }
            "torus" | "TORUS" => PlatformSpec::Torus {
                dims: int_list(&mut t, "dims", None, None)?,
                bw: quantity(&mut t, "bw", parse_bandwidth)?,
                lat: quantity(&mut t, "lat", parse_time)?,
                hosts: hosts(&mut t)?,
            },
            "dragonfly" | "DRAGONFLY" => PlatformSpec::Dragonfly {
                groups: (int(&mut t, "groups", None)?, int(&mut t, "group_links", Some(1))?),
                chassis: (int(&mut t, "chassis", None)?, int(&mut t, "chassis_links", Some(1))?),
                routers: (int(&mut t, "routers", None)?, int(&mut t, "router_links", Some(1))?),
                hosts_per_router: int(&mut t, "hosts_per_router", None)?,
                bw: quantity(&mut t, "bw", parse_bandwidth)?,
                lat: quantity(&mut t, "lat", parse_time)?,
                hosts: hosts(&mut t)?,
            },
            "flat" | "FLAT" => {
                let count = int(&mut t, "hosts", None)?;
                let bw = quantity(&mut t, "bw", parse_bandwidth)?;
                let lat = quantity(&mut t, "lat", parse_time)?;
                let backbone = match (t.remove("bb_bw"), t.remove("bb_lat")) {
                    (Some(b), l) => Some((
                        Quantity::read(&b, "bb_bw", parse_bandwidth)?,
                        match l {
                            Some(l) => Quantity::read(&l, "bb_lat", parse_time)?,
                            None => Quantity {
                                text: "0".into(),
                                value: 0.0,
                            },
                        },
                    )),
                    (None, Some(_)) => bail!("platform.bb_lat without bb_bw"),
                    (None, None) => None,
                };
                PlatformSpec::Flat {
                    count,
                    bw,
                    lat,
                    backbone,
                    hosts: hosts(&mut t)?,
                }
            }
            "file" => {
                let p = string(&mut t, "file", "")?;
                if p.is_empty() {
                    bail!("platform.file: kind = \"file\" needs file = \"<platform file>\"");
                }
                let p = Path::new(&p);
                PlatformSpec::File(if p.is_absolute() { p.to_path_buf() } else { base_dir.join(p) })
            }
            "" => bail!("platform.kind is required: \"fat_tree\", \"torus\", \"dragonfly\", \"flat\" or \"file\""),
            other => bail!("platform.kind = {other:?}: expected \"fat_tree\", \"torus\", \"dragonfly\", \"flat\" or \"file\""),
        };
        if let Some(k) = t.keys().next() {
            bail!("unknown key platform.{k} for kind = {kind:?} (see study/README.md for each kind's keys)");
        }
        Ok(spec)
    }

    /// Number of hosts (`None` for a user's file).
    pub fn host_count(&self) -> Option<u64> {
        let prod = |v: &[u32]| v.iter().map(|&x| x as u64).product::<u64>();
        match self {
            PlatformSpec::FatTree { down, .. } => Some(prod(down)),
            PlatformSpec::Torus { dims, .. } => Some(prod(dims)),
            PlatformSpec::Dragonfly {
                groups,
                chassis,
                routers,
                hosts_per_router,
                ..
            } => Some(groups.0 as u64 * chassis.0 as u64 * routers.0 as u64 * *hosts_per_router as u64),
            PlatformSpec::Flat { count, .. } => Some(*count as u64),
            PlatformSpec::File(_) => None,
        }
    }

    /// A one-line description (the file's header comment, the report).
    pub fn describe(&self) -> String {
        let join = |v: &[u32]| v.iter().map(u32::to_string).collect::<Vec<_>>().join(",");
        let qs = |v: &[Quantity]| v.iter().map(|q| q.text.clone()).collect::<Vec<_>>().join(",");
        match self {
            PlatformSpec::FatTree {
                levels,
                down,
                up,
                parallel,
                bw,
                lat,
                ..
            } => format!(
                "fat tree {levels};{};{};{}, bw {} lat {} per level",
                join(down),
                join(up),
                join(parallel),
                qs(bw),
                qs(lat)
            ),
            PlatformSpec::Torus { dims, bw, lat, .. } => {
                format!("torus {}, bw {} lat {}", join(dims), bw.text, lat.text)
            }
            PlatformSpec::Dragonfly {
                groups,
                chassis,
                routers,
                hosts_per_router,
                bw,
                lat,
                ..
            } => format!(
                "dragonfly {},{};{},{};{},{};{hosts_per_router}, bw {} lat {}",
                groups.0, groups.1, chassis.0, chassis.1, routers.0, routers.1, bw.text, lat.text
            ),
            PlatformSpec::Flat {
                count,
                bw,
                lat,
                backbone,
                ..
            } => match backbone {
                Some((b, l)) => format!(
                    "flat cluster of {count}, bw {} lat {}, backbone {} {}",
                    bw.text, lat.text, b.text, l.text
                ),
                None => format!("flat cluster of {count}, bw {} lat {}", bw.text, lat.text),
            },
            PlatformSpec::File(p) => format!("file {}", p.display()),
        }
    }

    /// File name in the run directory (`platform.toml`, or the user's extension).
    pub fn file_name(&self) -> String {
        match self {
            PlatformSpec::File(p) => match p.extension().and_then(|e| e.to_str()) {
                Some(e) => format!("platform.{e}"),
                None => "platform.toml".into(),
            },
            _ => "platform.toml".into(),
        }
    }

    /// The platform file text, with every latency multiplied by `latency_factor`.
    pub fn generate(&self, latency_factor: f64) -> Result<String> {
        let header = format!(
            "# Generated by smpi-study {}: {}{}\n",
            crate::VERSION,
            self.describe(),
            if latency_factor == 1.0 {
                String::new()
            } else {
                format!(", every latency x {latency_factor:e}")
            }
        );
        match self {
            PlatformSpec::File(p) => {
                if latency_factor != 1.0 {
                    bail!(
                        "replicas perturb latencies, which needs a generated platform (kind = \"file\" is used as is); \
                         perturb the seed, or describe the platform with kind = fat_tree/torus/dragonfly/flat"
                    );
                }
                std::fs::read_to_string(p)
                    .with_context(|| format!("cannot read platform file {}", p.display()))
            }
            PlatformSpec::FatTree {
                bw, lat, explicit, ..
            } if *explicit
                || bw.iter().any(|q| q.value != bw[0].value)
                || lat.iter().any(|q| q.value != lat[0].value) =>
            {
                let mut out = header;
                out.push_str("# Per-level bandwidths/latencies: explicit hosts, links and the cluster's D-mod-K routes.\n");
                out.push_str(&self.explicit_fat_tree(latency_factor)?);
                Ok(out)
            }
            _ => {
                let mut out = header;
                out.push_str(&self.cluster_toml(latency_factor, 0));
                Ok(out)
            }
        }
    }

    /// One `[[cluster]]` (for a fat tree, with the bandwidth and latency of `level`).
    fn cluster_toml(&self, lf: f64, level: usize) -> String {
        let mut o = String::from("\n[[cluster]]\n");
        let h = match self {
            PlatformSpec::FatTree { hosts, .. }
            | PlatformSpec::Torus { hosts, .. }
            | PlatformSpec::Dragonfly { hosts, .. }
            | PlatformSpec::Flat { hosts, .. } => hosts,
            PlatformSpec::File(_) => unreachable!("a user's file is not generated"),
        };
        let n = self.host_count().expect("generated platforms have a host count");
        let join = |v: &[u32]| v.iter().map(u32::to_string).collect::<Vec<_>>().join(",");
        let (id, bw, lat, topology, params) = match self {
            PlatformSpec::FatTree {
                levels,
                down,
                up,
                parallel,
                bw,
                lat,
                ..
            } => (
                "ft",
                &bw[level],
                &lat[level],
                "fat_tree",
                Some(format!("{levels};{};{};{}", join(down), join(up), join(parallel))),
            ),
            PlatformSpec::Torus { dims, bw, lat, .. } => ("torus", bw, lat, "torus", Some(join(dims))),
            PlatformSpec::Dragonfly {
                groups,
                chassis,
                routers,
                hosts_per_router,
                bw,
                lat,
                ..
            } => (
                "df",
                bw,
                lat,
                "dragonfly",
                Some(format!(
                    "{},{};{},{};{},{};{hosts_per_router}",
                    groups.0, groups.1, chassis.0, chassis.1, routers.0, routers.1
                )),
            ),
            PlatformSpec::Flat { bw, lat, .. } => ("flat", bw, lat, "flat", None),
            PlatformSpec::File(_) => unreachable!(),
        };
        let _ = writeln!(o, "id = \"{id}\"");
        let _ = writeln!(o, "prefix = {}", toml_str(&h.prefix));
        let _ = writeln!(o, "radical = \"0-{}\"", n - 1);
        let _ = writeln!(o, "speed = {}", toml_str(&h.speed.text));
        let _ = writeln!(o, "core = {}", h.core);
        let _ = writeln!(o, "bw = {}", toml_str(&bw.text));
        let _ = writeln!(o, "lat = {}", toml_str(&lat.scaled(lf)));
        let _ = writeln!(o, "sharing_policy = \"{}\"", h.sharing_policy);
        let _ = writeln!(o, "topology = \"{topology}\"");
        if let Some(p) = params {
            let _ = writeln!(o, "topo_parameters = \"{p}\"");
        }
        if let PlatformSpec::Flat {
            backbone: Some((b, l)),
            ..
        } = self
        {
            let _ = writeln!(o, "bb_bw = {}", toml_str(&b.text));
            let _ = writeln!(o, "bb_lat = {}", toml_str(&l.scaled(lf)));
        }
        o
    }

    /// The fat tree as explicit hosts, links and routes (see the module doc).
    fn explicit_fat_tree(&self, lf: f64) -> Result<String> {
        let PlatformSpec::FatTree {
            levels,
            down,
            up,
            bw,
            lat,
            hosts,
            ..
        } = self
        else {
            unreachable!("only fat trees have levels")
        };
        let cluster = self.cluster_toml(1.0, 0);
        let p = Platform::from_toml_str(&cluster, "<generated fat tree>")
            .map_err(|e| anyhow!("the fat tree does not build: {e}"))?;
        let n = p.hosts.len();
        // Level of each switch from its SimGrid id: switches are numbered from 2n−1 downwards,
        // level 1 first; level l+1 has Π_{j≤l} up[j] · Π_{j>l} down[j] switches.
        let mut level_of_id = BTreeMap::new();
        let mut next = 2 * n;
        for l in 0..*levels {
            let count: usize = up[..=l].iter().map(|&x| x as usize).product::<usize>()
                * down[l + 1..].iter().map(|&x| x as usize).product::<usize>();
            for _ in 0..count {
                next -= 1;
                level_of_id.insert(next, l);
            }
        }
        let level_of_link = |name: &str| -> Result<usize> {
            // link_from_<child>_<parent>_<n>_UP|_DOWN
            let parts: Vec<&str> = name.split('_').collect();
            let parent: usize = parts
                .get(3)
                .and_then(|s| s.parse().ok())
                .ok_or_else(|| anyhow!("unexpected fat-tree link name {name}"))?;
            level_of_id
                .get(&parent)
                .copied()
                .ok_or_else(|| anyhow!("fat-tree link {name} ends at an unknown switch"))
        };
        let mut o = String::from("\nrouting = \"full\"\n");
        for h in &p.hosts {
            let _ = write!(
                o,
                "\n[[host]]\nid = {}\nspeed = {}\ncore = {}\n",
                toml_str(&h.name),
                toml_str(&hosts.speed.text),
                h.cores
            );
        }
        // Links in the cluster's order (both halves of a split-duplex cable are made by one entry).
        let split = hosts.sharing_policy == "SPLITDUPLEX";
        let mut declared = std::collections::HashSet::new();
        for l in &p.links {
            let base = if split {
                l.name
                    .strip_suffix("_UP")
                    .or_else(|| l.name.strip_suffix("_DOWN"))
                    .ok_or_else(|| anyhow!("split-duplex link {} has no _UP/_DOWN", l.name))?
            } else {
                l.name.as_str()
            };
            if !declared.insert(base.to_string()) {
                continue;
            }
            let level = level_of_link(base)?;
            let _ = write!(
                o,
                "\n[[link]]\nid = \"{base}\"\nbandwidth = {}\nlatency = {}\nsharing_policy = \"{}\"\n",
                toml_str(&bw[level].text),
                toml_str(&lat[level].scaled(lf)),
                hosts.sharing_policy
            );
        }
        for s in 0..n {
            for d in 0..n {
                let route = p.route(
                    simcore::platform::HostId(s as u32),
                    simcore::platform::HostId(d as u32),
                );
                let names: Vec<String> = route.iter().map(|l| format!("\"{}\"", p.link(*l).name)).collect();
                let _ = write!(
                    o,
                    "\n[[route]]\nsrc = {}\ndst = {}\nlinks = [{}]\nsymmetrical = false\n",
                    toml_str(&p.hosts[s].name),
                    toml_str(&p.hosts[d].name),
                    names.join(", ")
                );
            }
        }
        Ok(o)
    }

    /// Host names in the topology's order (positions 0, 1, ...), for placements.
    pub fn host_names(&self, text: &str) -> Result<Vec<String>> {
        match self {
            PlatformSpec::File(p) => {
                let plat = load(text, &p.display().to_string(), &self.file_name())?;
                Ok(plat.hosts.iter().map(|h| h.name.clone()).collect())
            }
            _ => {
                let h = match self {
                    PlatformSpec::FatTree { hosts, .. }
                    | PlatformSpec::Torus { hosts, .. }
                    | PlatformSpec::Dragonfly { hosts, .. }
                    | PlatformSpec::Flat { hosts, .. } => hosts,
                    PlatformSpec::File(_) => unreachable!(),
                };
                let n = self.host_count().expect("generated");
                Ok((0..n).map(|i| format!("{}{i}", h.prefix)).collect())
            }
        }
    }
}

/// Loads platform text with the simulator's parser (`file_name` picks the format).
pub fn load(text: &str, shown_as: &str, file_name: &str) -> Result<Platform> {
    let r = if file_name.ends_with(".xml") {
        Platform::from_xml_str(text, shown_as)
    } else {
        Platform::from_toml_str(text, shown_as)
    };
    r.map_err(|e| anyhow!("{e}"))
}

/// A TOML basic string.
fn toml_str(s: &str) -> String {
    Value::String(s.to_string()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(s: &str) -> PlatformSpec {
        PlatformSpec::from_table(toml::from_str(s).unwrap(), Path::new("/")).unwrap()
    }

    const FT: &str =
        "kind = \"fat_tree\"\nlevels = 2\ndown = [4, 4]\nup = [1, 2]\nbw = \"10GBps\"\nlat = \"1us\"\n";

    #[test]
    fn cluster_kinds_load() {
        for s in [
            FT.to_string(),
            "kind = \"torus\"\ndims = [4, 4, 2]\nbw = \"10GBps\"\nlat = \"1us\"".into(),
            "kind = \"dragonfly\"\ngroups = 3\nchassis = 2\nrouters = 3\nhosts_per_router = 2\nbw = \"10GBps\"\nlat = \"1us\"".into(),
            "kind = \"flat\"\nhosts = 8\nbw = \"1GBps\"\nlat = \"10us\"\nbb_bw = \"2.5GBps\"\nbb_lat = \"5us\"".into(),
        ] {
            let sp = spec(&s);
            let text = sp.generate(1.0).unwrap();
            let p = load(&text, "gen", "platform.toml").unwrap_or_else(|e| panic!("{e}\n{text}"));
            assert_eq!(p.hosts.len() as u64, sp.host_count().unwrap(), "{text}");
            assert_eq!(sp.host_names(&text).unwrap()[0], p.hosts[0].name);
        }
    }

    #[test]
    fn latency_factor_scales_every_latency() {
        let sp = spec(FT);
        let p = load(&sp.generate(1.0 + 1e-9).unwrap(), "gen", "platform.toml").unwrap();
        for l in &p.links {
            assert_eq!(l.latency, 1e-6 * (1.0 + 1e-9), "{}", l.name);
        }
        let p = load(&sp.generate(1.0).unwrap(), "gen", "platform.toml").unwrap();
        assert!(p.links.iter().all(|l| l.latency == 1e-6));
    }

    /// Per-level values: the explicit platform has the cluster's links (names, order) and
    /// routes, and each link the bandwidth and latency of its level.
    #[test]
    fn per_level_fat_tree_keeps_the_clusters_links_and_routes() {
        let uniform = spec(FT);
        let per_level = spec(
            &FT.replace("bw = \"10GBps\"", "bw = [\"10GBps\", \"2.5GBps\"]")
                .replace("lat = \"1us\"", "lat = [\"1us\", \"3us\"]"),
        );
        let a = load(&uniform.generate(1.0).unwrap(), "a", "platform.toml").unwrap();
        let text = per_level.generate(1.0).unwrap();
        let b = load(&text, "b", "platform.toml").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(a.links.len(), b.links.len());
        for (x, y) in a.links.iter().zip(&b.links) {
            assert_eq!(x.name, y.name);
            let leaf = x.name.split('_').nth(2).unwrap().parse::<usize>().unwrap() < 16;
            assert_eq!(y.bandwidth, if leaf { 10e9 } else { 2.5e9 }, "{}", y.name);
            assert_eq!(y.latency, if leaf { 1e-6 } else { 3e-6 }, "{}", y.name);
        }
        for s in 0..16u32 {
            for d in 0..16u32 {
                let (s, d) = (simcore::platform::HostId(s), simcore::platform::HostId(d));
                let names = |p: &Platform, r: Vec<simcore::platform::LinkId>| {
                    r.iter().map(|l| p.link(*l).name.clone()).collect::<Vec<_>>()
                };
                assert_eq!(names(&a, a.route(s, d)), names(&b, b.route(s, d)));
            }
        }
    }

    #[test]
    fn errors_name_the_key() {
        let e = PlatformSpec::from_table(
            toml::from_str(&FT.replace("up = [1, 2]", "up = [1]")).unwrap(),
            Path::new("/"),
        )
        .unwrap_err();
        assert!(e.to_string().contains("platform.up has 1 entries"), "{e}");
        let e = PlatformSpec::from_table(toml::from_str(&format!("{FT}\nfoo = 1")).unwrap(), Path::new("/"))
            .unwrap_err();
        assert!(e.to_string().contains("platform.foo"), "{e}");
        let e = PlatformSpec::from_table(
            toml::from_str(&FT.replace("10GBps", "10Gbs")).unwrap(),
            Path::new("/"),
        )
        .unwrap_err();
        assert!(e.to_string().contains("platform.bw"), "{e}");
    }
}
