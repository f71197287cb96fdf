//! Our TOML platform format (documented with examples in `platforms/README.md`).
//!
//! ```toml
//! [config]                       # any --cfg key, optional
//! "network/model" = "SMPI"
//!
//! [[cluster]]                    # same keys, values and units as SimGrid's <cluster>
//! id = "ft64"
//! prefix = "node-"
//! radical = "0-63"
//! speed = "1Gf"
//! bw = "10GBps"
//! lat = "1us"
//! topology = "fat_tree"
//! topo_parameters = "2;8,8;1,8;1,1"
//! ```
//!
//! or, for small hand-made platforms, `routing = "full" | "floyd" | "dijkstra" | "cluster"` with
//! `[[host]]` (with `[[host.disk]]`: `id`, `read_bw`, `write_bw`, `prop`), `[[router]]`,
//! `[[link]]` (hosts and links take SimGrid's `speed_file`, `state_file`, `bandwidth_file`,
//! `latency_file`: profile files, relative to the working directory or the platform file's),
//! `[[route]]` (and `[[host_link]]`, `[backbone]` for
//! `routing = "cluster"`). Unknown keys are errors. All values go through the same checks as
//! the XML attributes of the same name (see `spec.rs`).

use std::collections::BTreeMap;

use serde::Deserialize;
use toml::Spanned;

use super::error::{Loc, PlatformError, PlatformErrorKind as K};
use super::spec::{
    Attrs, ClusterSpec, Direction, DiskSpec, HostLinkSpec, HostSpec, LinkRef, LinkSpec, Policy,
    ProfileAttach, RouteSpec, Routing, Spec, Val,
};

type S = Spanned<String>;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    routing: Option<S>,
    config: Option<BTreeMap<String, Spanned<toml::Value>>>,
    #[serde(default)]
    cluster: Vec<Spanned<ClusterToml>>,
    #[serde(default)]
    host: Vec<Spanned<HostToml>>,
    #[serde(default)]
    router: Vec<Spanned<RouterToml>>,
    #[serde(default)]
    link: Vec<Spanned<LinkToml>>,
    #[serde(default)]
    route: Vec<Spanned<RouteToml>>,
    #[serde(default)]
    host_link: Vec<Spanned<HostLinkToml>>,
    backbone: Option<Spanned<BackboneToml>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ClusterToml {
    id: S,
    prefix: Option<S>,
    suffix: Option<S>,
    radical: S,
    speed: S,
    core: Option<Spanned<u32>>,
    bw: S,
    lat: S,
    sharing_policy: Option<S>,
    topology: Option<S>,
    topo_parameters: Option<S>,
    bb_bw: Option<S>,
    bb_lat: Option<S>,
    bb_sharing_policy: Option<S>,
    router_id: Option<S>,
    limiter_link: Option<S>,
    loopback_bw: Option<S>,
    loopback_lat: Option<S>,
    #[serde(default)]
    prop: BTreeMap<String, Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct HostToml {
    id: S,
    speed: S,
    core: Option<Spanned<u32>>,
    pstate: Option<Spanned<u32>>,
    speed_file: Option<S>,
    state_file: Option<S>,
    #[serde(default)]
    prop: BTreeMap<String, Spanned<String>>,
    #[serde(default)]
    disk: Vec<Spanned<DiskToml>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DiskToml {
    id: S,
    read_bw: S,
    write_bw: S,
    #[serde(default)]
    prop: BTreeMap<String, Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RouterToml {
    id: S,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LinkToml {
    id: S,
    bandwidth: S,
    latency: Option<S>,
    sharing_policy: Option<S>,
    bandwidth_file: Option<S>,
    latency_file: Option<S>,
    state_file: Option<S>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RouteToml {
    src: S,
    dst: S,
    links: Vec<S>,
    symmetrical: Option<Spanned<bool>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct HostLinkToml {
    id: S,
    up: S,
    down: S,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BackboneToml {
    id: S,
    bandwidth: S,
    latency: Option<S>,
}

struct Ctx<'t, 'f> {
    text: &'t str,
    file: &'f str,
}

impl<'f> Ctx<'_, 'f> {
    fn loc(&self, offset: usize) -> Loc {
        Loc::at_offset(self.text, offset)
    }

    fn val(&self, s: &S) -> Val {
        Val {
            text: s.get_ref().clone(),
            loc: self.loc(s.span().start),
        }
    }

    fn attrs<T>(&self, element: &'static str, table: &Spanned<T>) -> Attrs<'f> {
        Attrs::new(self.file, element, self.loc(table.span().start))
    }

    fn push(&self, a: &mut Attrs, key: &str, value: &Option<S>) {
        if let Some(v) = value {
            a.push(key, v.get_ref().clone(), self.loc(v.span().start));
        }
    }

    fn push_num(&self, a: &mut Attrs, key: &str, value: &Option<Spanned<u32>>) {
        if let Some(v) = value {
            a.push(key, v.get_ref().to_string(), self.loc(v.span().start));
        }
    }

    fn props(&self, props: &BTreeMap<String, Spanned<String>>) -> Vec<(String, String)> {
        let mut out: Vec<_> = props.iter().collect();
        out.sort_by_key(|(_, v)| v.span().start);
        out.into_iter()
            .map(|(k, v)| (k.clone(), v.get_ref().clone()))
            .collect()
    }
}

/// Parses our TOML platform format.
pub(crate) fn parse(text: &str, file: &str) -> Result<Spec, PlatformError> {
    let parsed: File = toml::from_str(text).map_err(|e| {
        let loc = e.span().map_or(Loc::default(), |s| Loc::at_offset(text, s.start));
        let message = e
            .message()
            .trim()
            .replace('\n', "; ")
            .replace("unknown field", "unknown key");
        PlatformError::new(file, loc, K::MalformedToml(message))
    })?;
    let cx = Ctx { text, file };
    let mut spec = Spec::new();
    spec.routing_loc = Loc { line: 1, column: 1 };

    if let Some(routing) = &parsed.routing {
        let mut a = Attrs::new(file, "platform", cx.loc(routing.span().start));
        cx.push(&mut a, "routing", &parsed.routing);
        spec.routing = Routing::parse(&a, "routing")?;
        spec.routing_loc = a.loc;
    }

    if let Some(config) = &parsed.config {
        let mut entries: Vec<_> = config.iter().collect();
        entries.sort_by_key(|(_, v)| v.span().start);
        for (key, value) in entries {
            let loc = cx.loc(value.span().start);
            let text = match value.get_ref() {
                toml::Value::String(s) => s.clone(),
                toml::Value::Integer(i) => i.to_string(),
                toml::Value::Float(f) => f.to_string(),
                toml::Value::Boolean(b) => b.to_string(),
                other => {
                    return Err(PlatformError::new(
                        file,
                        loc,
                        K::InvalidValue {
                            key: key.clone(),
                            value: other.to_string(),
                            reason: "a config value is a string, number or boolean".to_string(),
                        },
                    ))
                }
            };
            spec.config.push((key.clone(), Val { text, loc }));
        }
    }

    for c in &parsed.cluster {
        let t = c.get_ref();
        let mut a = cx.attrs("cluster", c);
        a.push("id", t.id.get_ref().clone(), cx.loc(t.id.span().start));
        // prefix and suffix are optional here (empty by default), required in XML.
        for (key, value) in [("prefix", &t.prefix), ("suffix", &t.suffix)] {
            let (text, loc) = value.as_ref().map_or((String::new(), a.loc), |v| {
                (v.get_ref().clone(), cx.loc(v.span().start))
            });
            a.push(key, text, loc);
        }
        for (key, value) in [
            ("radical", &t.radical),
            ("speed", &t.speed),
            ("bw", &t.bw),
            ("lat", &t.lat),
        ] {
            a.push(key, value.get_ref().clone(), cx.loc(value.span().start));
        }
        cx.push_num(&mut a, "core", &t.core);
        for (key, value) in [
            ("sharing_policy", &t.sharing_policy),
            ("topology", &t.topology),
            ("topo_parameters", &t.topo_parameters),
            ("bb_bw", &t.bb_bw),
            ("bb_lat", &t.bb_lat),
            ("bb_sharing_policy", &t.bb_sharing_policy),
            ("router_id", &t.router_id),
            ("limiter_link", &t.limiter_link),
            ("loopback_bw", &t.loopback_bw),
            ("loopback_lat", &t.loopback_lat),
        ] {
            cx.push(&mut a, key, value);
        }
        spec.clusters
            .push(ClusterSpec::from_attrs(&a, cx.props(&t.prop))?);
    }

    for h in &parsed.host {
        let t = h.get_ref();
        let mut a = cx.attrs("host", h);
        cx.push(&mut a, "id", &Some(t.id.clone()));
        cx.push(&mut a, "speed", &Some(t.speed.clone()));
        cx.push_num(&mut a, "core", &t.core);
        cx.push_num(&mut a, "pstate", &t.pstate);
        cx.push(&mut a, "speed_file", &t.speed_file);
        cx.push(&mut a, "state_file", &t.state_file);
        let mut host = HostSpec::from_attrs(&a, cx.props(&t.prop))?;
        spec.profiles.extend(ProfileAttach::from_attrs(&a, true)?);
        for d in &t.disk {
            let dt = d.get_ref();
            let mut a = cx.attrs("disk", d);
            cx.push(&mut a, "id", &Some(dt.id.clone()));
            cx.push(&mut a, "read_bw", &Some(dt.read_bw.clone()));
            cx.push(&mut a, "write_bw", &Some(dt.write_bw.clone()));
            host.disks.push(DiskSpec::from_attrs(&a, cx.props(&dt.prop))?);
        }
        spec.hosts.push(host);
    }

    for r in &parsed.router {
        spec.routers.push(cx.val(&r.get_ref().id));
    }

    for l in &parsed.link {
        let t = l.get_ref();
        let mut a = cx.attrs("link", l);
        cx.push(&mut a, "id", &Some(t.id.clone()));
        cx.push(&mut a, "bandwidth", &Some(t.bandwidth.clone()));
        cx.push(&mut a, "latency", &t.latency);
        cx.push(&mut a, "sharing_policy", &t.sharing_policy);
        cx.push(&mut a, "bandwidth_file", &t.bandwidth_file);
        cx.push(&mut a, "latency_file", &t.latency_file);
        cx.push(&mut a, "state_file", &t.state_file);
        spec.links.push(LinkSpec::from_attrs(&a)?);
        spec.profiles.extend(ProfileAttach::from_attrs(&a, false)?);
    }

    for r in &parsed.route {
        let t = r.get_ref();
        let links = t
            .links
            .iter()
            .map(|l| LinkRef {
                name: l.get_ref().clone(),
                direction: Direction::None,
                loc: cx.loc(l.span().start),
            })
            .collect();
        spec.routes.push(RouteSpec {
            src: cx.val(&t.src),
            dst: cx.val(&t.dst),
            links,
            symmetrical: t.symmetrical.as_ref().is_none_or(|s| *s.get_ref()),
            loc: cx.loc(r.span().start),
        });
    }

    for hl in &parsed.host_link {
        let t = hl.get_ref();
        spec.host_links.push(HostLinkSpec {
            host: cx.val(&t.id),
            up: cx.val(&t.up),
            down: cx.val(&t.down),
            loc: cx.loc(hl.span().start),
        });
    }

    if let Some(bb) = &parsed.backbone {
        let t = bb.get_ref();
        let mut a = cx.attrs("backbone", bb);
        cx.push(&mut a, "id", &Some(t.id.clone()));
        cx.push(&mut a, "bandwidth", &Some(t.bandwidth.clone()));
        cx.push(&mut a, "latency", &t.latency);
        let mut link = LinkSpec::from_attrs(&a)?;
        link.policy = Policy::Shared;
        spec.backbone = Some(link);
    }

    let uses_star_keys = !spec.host_links.is_empty() || spec.backbone.is_some();
    if uses_star_keys && spec.routing != Routing::Cluster {
        let loc = spec.host_links.first().map_or_else(
            || spec.backbone.as_ref().map_or(Loc::default(), |b| b.loc),
            |h| h.loc,
        );
        return Err(PlatformError::new(
            file,
            loc,
            K::Unsupported {
                what: "host_link/backbone without routing = \"cluster\"".to_string(),
                reason: "set routing = \"cluster\" at the top of the file".to_string(),
            },
        ));
    }
    Ok(spec)
}
