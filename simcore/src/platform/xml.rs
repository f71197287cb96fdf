//! SimGrid v4 XML platform files (`<platform version="4.1">`), read with `roxmltree`.
//!
//! Supported elements: `platform`, `config`/`prop`, `zone` (or the older `AS`), `host` (+ `prop`,
//! `disk` (+ `prop`)), `router`, `link` (+ `prop`, ignored), `route` + `link_ctn`, `zoneRoute`
//! (`ASroute`), `bypassRoute`, `bypassZoneRoute` (`bypassASroute`), `cluster` (+ `prop`), in a
//! `routing="Cluster"` zone `host_link`, `backbone` and `cabinet`, and in a `routing="Vivaldi"`
//! zone `peer`. When one zone holds every host and route, the platform is read flat (the zones
//! around it change nothing); otherwise the zone tree is kept and routed as SimGrid does
//! ([`super::routing::zones`]).
//! `trace` and `trace_connect` attach profiles (see [`super::profile`]), as do the `speed_file`,
//! `state_file`, `bandwidth_file` and `latency_file` attributes of hosts, peers and links.
//! Known SimGrid elements that this simulator does not implement (`storage`, deployment
//! elements, ...) are reported as unsupported; anything else is an unknown element. Attribute
//! defaults follow SimGrid's DTD.

use roxmltree::{Document, Node, ParsingOptions};

use super::error::{Loc, PlatformError, PlatformErrorKind as K};
use super::spec::{
    Attrs, CabinetSpec, ClusterSpec, Direction, DiskSpec, GatewayRoute, HostLinkSpec, HostSpec, LinkRef,
    LinkSpec, PeerSpec, Policy, ProfileAttach, ProfileKind, ProfileSource, RouteSpec, Routing, Spec, Val,
    ZoneItem, ZoneKind, ZoneSpec,
};

/// Elements of SimGrid's DTD that we do not implement.
const UNSUPPORTED: &[&str] = &[
    "storage",
    "storage_type",
    "mount",
    "model_prop",
    "include",
    "actor",
    "process",
    "argument",
    "random",
];

/// The deepest nesting of zones read (SimGrid platforms nest a few levels; the reader recurses).
const MAX_ZONE_DEPTH: usize = 64;

struct Reader<'a, 'f> {
    doc: &'a Document<'a>,
    file: &'f str,
    spec: Spec,
    /// Zones open around the element being read.
    depth: usize,
    /// The zone tree, in file order (`zones[0]`: the `<platform>` itself, a Full zone).
    zones: Vec<ZoneSpec>,
    /// `<trace>`s declared so far: id and text.
    traces: Vec<(String, ProfileSource)>,
    /// `<trace_connect>`s so far: kind and trace.
    connected: Vec<(&'static str, String)>,
    /// The profiles they attach, scheduled after those of attributes.
    connects: Vec<ProfileAttach>,
}

/// The deepest nesting of elements given to the XML parser, which recurses once per level (its
/// stack would overflow on a file nesting elements a hundred thousand deep).
const MAX_ELEMENT_DEPTH: usize = 256;

/// The byte offset of the first start tag nested deeper than [`MAX_ELEMENT_DEPTH`], if any.
/// Comments, CDATA sections, processing instructions and declarations do not nest; markup in an
/// entity's value counts as written (an entity nesting entities adds at most ten times that).
fn too_deep(text: &str) -> Option<usize> {
    let b = text.as_bytes();
    let skip_to = |from: usize, end: &[u8]| {
        b[from..]
            .windows(end.len())
            .position(|w| w == end)
            .map_or(b.len(), |p| from + p + end.len())
    };
    let mut depth = 0usize;
    let mut i = 0;
    while let Some(offset) = b[i..].iter().position(|&c| c == b'<') {
        let at = i + offset;
        let rest = &b[at..];
        if rest.starts_with(b"<!--") {
            i = skip_to(at + 4, b"-->");
        } else if rest.starts_with(b"<![CDATA[") {
            i = skip_to(at + 9, b"]]>");
        } else if rest.starts_with(b"<?") {
            i = skip_to(at + 2, b"?>");
        } else if rest.starts_with(b"</") {
            depth = depth.saturating_sub(1);
            i = at + 2;
        } else if rest.starts_with(b"<!") {
            i = at + 2;
        } else {
            // A start tag ends at the first `>` outside quotes.
            let mut j = at + 1;
            let mut quote = None;
            while j < b.len() {
                match (quote, b[j]) {
                    (None, b'"' | b'\'') => quote = Some(b[j]),
                    (Some(q), c) if c == q => quote = None,
                    (None, b'>') => break,
                    _ => {}
                }
                j += 1;
            }
            if b[j - 1] != b'/' {
                depth += 1;
                if depth > MAX_ELEMENT_DEPTH {
                    return Some(at);
                }
            }
            i = j.min(b.len());
        }
        if i >= b.len() {
            break;
        }
    }
    None
}

/// Parses a SimGrid XML platform.
pub(crate) fn parse(text: &str, file: &str) -> Result<Spec, PlatformError> {
    if let Some(at) = too_deep(text) {
        return Err(PlatformError::new(
            file,
            Loc::at_offset(text, at),
            K::Unsupported {
                what: format!("element nesting deeper than {MAX_ELEMENT_DEPTH} levels"),
                reason: "platform files nest a few levels".to_string(),
            },
        ));
    }
    let options = ParsingOptions {
        allow_dtd: true,
        ..ParsingOptions::default()
    };
    let doc = Document::parse_with_options(text, options).map_err(|e| {
        let pos = e.pos();
        PlatformError::new(
            file,
            Loc {
                line: pos.row as usize,
                column: pos.col as usize,
            },
            K::MalformedXml(e.to_string()),
        )
    })?;
    let mut reader = Reader {
        doc: &doc,
        file,
        spec: Spec::new(),
        depth: 0,
        zones: Vec::new(),
        traces: Vec::new(),
        connected: Vec::new(),
        connects: Vec::new(),
    };
    let root = doc.root_element();
    let loc = reader.loc(root.range().start);
    if root.tag_name().name() != "platform" {
        return Err(reader.err(
            loc,
            K::UnknownElement(format!(
                "{} (the root element must be <platform>)",
                root.tag_name().name()
            )),
        ));
    }
    let attrs = reader.attrs(root, "platform");
    attrs.check_known(&["version"])?;
    let version = attrs.required("version")?;
    if !version.text.trim().starts_with('4') {
        return Err(reader.err(
            version.loc,
            K::Unsupported {
                what: format!("platform version `{}`", version.text),
                reason: "only SimGrid v4 files (version=\"4.1\") are read; convert older files with \
                         SimGrid's simgrid_update_xml"
                    .to_string(),
            },
        ));
    }
    reader.spec.routing_loc = loc;
    reader.zones.push(ZoneSpec {
        id: "AS0".to_string(),
        kind: ZoneKind::Routed(Routing::Full),
        parent: None,
        loc,
        items: Vec::new(),
        coordinates: Vec::new(),
    });
    reader.children(root, 0)?;
    // SimGrid schedules the connected traces once the file is read, kind by kind.
    let mut connects = std::mem::take(&mut reader.connects);
    let rank = |k: ProfileKind| match k {
        ProfileKind::HostState => 0,
        ProfileKind::HostSpeed => 1,
        ProfileKind::LinkState => 2,
        ProfileKind::LinkBandwidth => 3,
        ProfileKind::LinkLatency => 4,
    };
    connects.sort_by_key(|c| rank(c.kind));
    reader.spec.profiles.extend(connects);
    Ok(reader.finish())
}

/// Whether zone `z` declares anything but zones.
fn has_content(z: &ZoneSpec) -> bool {
    matches!(z.kind, ZoneKind::Cluster(_)) || z.items.iter().any(|i| !matches!(i, ZoneItem::Zone(_)))
}

impl Reader<'_, '_> {
    /// The spec: flat when at most one zone declares hosts, routers or routes, and only in ways
    /// the flat builders know; the zone tree otherwise.
    fn finish(mut self) -> Spec {
        let mut content = self.zones.iter().filter(|z| has_content(z));
        let first = content.next();
        let flat = content.next().is_none()
            && first.is_none_or(|z| {
                matches!(
                    z.kind,
                    ZoneKind::Routed(_) | ZoneKind::Star | ZoneKind::Cluster(_)
                ) && z.items.iter().all(|i| {
                    matches!(
                        i,
                        ZoneItem::Host(_)
                            | ZoneItem::Router(_)
                            | ZoneItem::Zone(_)
                            | ZoneItem::Route(_)
                            | ZoneItem::HostLink(_)
                            | ZoneItem::Backbone(_)
                    )
                })
            });
        if !flat {
            self.spec.zones = self.zones;
            return self.spec;
        }
        let Some(zone) = self.zones.into_iter().find(has_content) else {
            return self.spec;
        };
        let spec = &mut self.spec;
        match zone.kind {
            ZoneKind::Cluster(c) => spec.clusters.push(*c),
            kind => {
                spec.routing = match kind {
                    ZoneKind::Routed(r) => r,
                    _ => Routing::Cluster,
                };
                spec.zone_id = zone.id;
                spec.routing_loc = zone.loc;
            }
        }
        for item in zone.items {
            match item {
                ZoneItem::Host(h) => spec.hosts.push(h),
                ZoneItem::Router(r) => spec.routers.push(r),
                ZoneItem::Route(r) => spec.routes.push(r),
                ZoneItem::HostLink(h) => spec.host_links.push(h),
                ZoneItem::Backbone(b) => spec.backbone = Some(b),
                _ => {}
            }
        }
        self.spec
    }
}

impl<'a, 'f> Reader<'a, 'f> {
    fn loc(&self, offset: usize) -> Loc {
        let pos = self.doc.text_pos_at(offset);
        Loc {
            line: pos.row as usize,
            column: pos.col as usize,
        }
    }

    fn err(&self, loc: Loc, kind: K) -> PlatformError {
        PlatformError::new(self.file, loc, kind)
    }

    fn attrs(&self, node: Node, element: &'static str) -> Attrs<'f> {
        let mut a = Attrs::new(self.file, element, self.loc(node.range().start));
        for attr in node.attributes() {
            let loc = self.loc(attr.range().start);
            a.push(attr.name(), attr.value(), loc);
        }
        a
    }

    /// Element children of `node` (text and comments skipped).
    fn elements(node: Node<'a, 'a>) -> impl Iterator<Item = Node<'a, 'a>> {
        node.children().filter(|c| c.is_element())
    }

    fn unknown(&self, node: Node) -> PlatformError {
        let name = node.tag_name().name();
        let loc = self.loc(node.range().start);
        if UNSUPPORTED.contains(&name) {
            self.err(
                loc,
                K::Unsupported {
                    what: format!("element <{name}>"),
                    reason: "not implemented by this simulator".to_string(),
                },
            )
        } else {
            self.err(loc, K::UnknownElement(name.to_string()))
        }
    }

    /// Adds `item` to zone `zone`.
    fn push(&mut self, zone: usize, item: ZoneItem) {
        self.zones[zone].items.push(item);
    }

    /// Errors unless zone `zone` routes as `wanted` (an element only such zones accept).
    fn only_in(
        &self,
        zone: usize,
        loc: Loc,
        element: &str,
        wanted: &str,
        reason: &str,
    ) -> Result<(), PlatformError> {
        let fits = match &self.zones[zone].kind {
            ZoneKind::Star => wanted == "Cluster",
            ZoneKind::Vivaldi => wanted == "Vivaldi",
            _ => false,
        };
        if fits {
            return Ok(());
        }
        Err(self.err(
            loc,
            K::Unsupported {
                what: format!("<{element}> outside a routing=\"{wanted}\" zone"),
                reason: reason.to_string(),
            },
        ))
    }

    /// The `<prop id= value=>` children of `node` (no other child is allowed).
    fn props(&self, node: Node<'a, 'a>) -> Result<Vec<(String, String)>, PlatformError> {
        let mut out = Vec::new();
        for child in Self::elements(node) {
            if child.tag_name().name() != "prop" {
                return Err(self.unknown(child));
            }
            let a = self.attrs(child, "prop");
            a.check_known(&["id", "value"])?;
            out.push((a.required("id")?.text.clone(), a.required("value")?.text.clone()));
        }
        Ok(out)
    }

    fn children(&mut self, node: Node<'a, 'a>, zone: usize) -> Result<(), PlatformError> {
        for child in Self::elements(node) {
            let loc = self.loc(child.range().start);
            match child.tag_name().name() {
                "config" => {
                    let a = self.attrs(child, "config");
                    a.check_known(&["id"])?;
                    for p in Self::elements(child) {
                        if p.tag_name().name() != "prop" {
                            return Err(self.unknown(p));
                        }
                        let a = self.attrs(p, "prop");
                        a.check_known(&["id", "value"])?;
                        let key = a.required("id")?.text.clone();
                        let value = a.required("value")?.clone();
                        self.spec.config.push((key, value));
                    }
                }
                "zone" | "AS" => {
                    let a = self.attrs(child, "zone");
                    a.check_known(&["id", "routing"])?;
                    let id = a.required("id")?.text.clone();
                    let routing = a.required("routing")?;
                    let kind = match routing.text.trim().to_ascii_lowercase().as_str() {
                        "none" => ZoneKind::Empty,
                        "vivaldi" => ZoneKind::Vivaldi,
                        _ => match Routing::parse(&a, "routing")? {
                            Routing::Cluster => ZoneKind::Star,
                            r => ZoneKind::Routed(r),
                        },
                    };
                    if self.depth == MAX_ZONE_DEPTH {
                        return Err(self.err(
                            loc,
                            K::Unsupported {
                                what: format!("zone `{id}` nested in {MAX_ZONE_DEPTH} zones"),
                                reason: format!("zones nest at most {MAX_ZONE_DEPTH} deep"),
                            },
                        ));
                    }
                    let inner = self.zones.len();
                    self.zones.push(ZoneSpec {
                        id,
                        kind,
                        parent: Some(zone),
                        loc,
                        items: Vec::new(),
                        coordinates: Vec::new(),
                    });
                    self.push(zone, ZoneItem::Zone(inner));
                    self.depth += 1;
                    self.children(child, inner)?;
                    self.depth -= 1;
                }
                "prop" => {
                    // Zone properties: accepted, not used.
                    let a = self.attrs(child, "prop");
                    a.check_known(&["id", "value"])?;
                }
                "cluster" => {
                    let a = self.attrs(child, "cluster");
                    let props = self.props(child)?;
                    let c = ClusterSpec::from_attrs(&a, props)?;
                    let inner = self.zones.len();
                    self.zones.push(ZoneSpec {
                        id: c.id.clone(),
                        kind: ZoneKind::Cluster(Box::new(c)),
                        parent: Some(zone),
                        loc,
                        items: Vec::new(),
                        coordinates: Vec::new(),
                    });
                    self.push(zone, ZoneItem::Zone(inner));
                }
                "host" => {
                    let a = self.attrs(child, "host");
                    let mut props = Vec::new();
                    let mut disks = Vec::new();
                    for c in Self::elements(child) {
                        let a = self.attrs(c, "prop");
                        match c.tag_name().name() {
                            "prop" => {
                                a.check_known(&["id", "value"])?;
                                props.push((
                                    a.required("id")?.text.clone(),
                                    a.required("value")?.text.clone(),
                                ));
                            }
                            "disk" => {
                                let d = self.attrs(c, "disk");
                                disks.push(DiskSpec::from_attrs(&d, self.props(c)?)?);
                            }
                            _ => return Err(self.unknown(c)),
                        }
                    }
                    let mut host = HostSpec::from_attrs(&a, props)?;
                    self.spec.profiles.extend(ProfileAttach::from_attrs(&a, true)?);
                    host.disks = disks;
                    let c = a.get("coordinates").cloned();
                    self.coordinates(zone, &host.name, c);
                    self.push(zone, ZoneItem::Host(host));
                }
                "peer" => {
                    self.only_in(zone, loc, "peer", "Vivaldi", "a peer is a host of a Vivaldi zone")?;
                    let a = self.attrs(child, "peer");
                    self.props(child)?;
                    a.check_known(&[
                        "id",
                        "speed",
                        "bw_in",
                        "bw_out",
                        "lat",
                        "coordinates",
                        "speed_file",
                        "availability_file",
                        "state_file",
                    ])?;
                    a.required("bw_in")?;
                    a.required("bw_out")?;
                    self.spec.profiles.extend(ProfileAttach::from_attrs(&a, true)?);
                    let speed = a.speed("speed", 0)?;
                    let host = HostSpec {
                        name: a.required("id")?.text.clone(),
                        speed,
                        speeds: vec![speed],
                        pstate: 0,
                        cores: 1,
                        properties: Vec::new(),
                        disks: Vec::new(),
                        loc,
                    };
                    // SimGrid reads a peer's `lat` but does not use it.
                    a.latency("lat")?;
                    let peer = PeerSpec {
                        host,
                        bw_in: a.bandwidth("bw_in")?.unwrap_or_default(),
                        bw_out: a.bandwidth("bw_out")?.unwrap_or_default(),
                        coordinates: a.get("coordinates").cloned().unwrap_or(Val {
                            text: String::new(),
                            loc,
                        }),
                    };
                    let name = peer.host.name.clone();
                    self.coordinates(zone, &name, Some(peer.coordinates.clone()));
                    self.push(zone, ZoneItem::Peer(peer));
                }
                "router" => {
                    let a = self.attrs(child, "router");
                    a.check_known(&["id", "coordinates"])?;
                    let id = a.required("id")?.clone();
                    let c = a.get("coordinates").cloned();
                    self.coordinates(zone, &id.text, c);
                    self.push(zone, ZoneItem::Router(id));
                }
                "link" => {
                    let a = self.attrs(child, "link");
                    self.props(child)?;
                    self.spec.links.push(LinkSpec::from_attrs(&a)?);
                    self.spec.profiles.extend(ProfileAttach::from_attrs(&a, false)?);
                }
                "backbone" => {
                    self.only_in(
                        zone,
                        loc,
                        "backbone",
                        "Cluster",
                        "use <cluster bb_bw=..> or a <zone routing=\"Cluster\">",
                    )?;
                    let a = self.attrs(child, "backbone");
                    a.check_known(&["id", "bandwidth", "latency"])?;
                    if self.zones[zone]
                        .items
                        .iter()
                        .any(|i| matches!(i, ZoneItem::Backbone(_)))
                    {
                        return Err(self.err(
                            loc,
                            K::Duplicate {
                                what: "backbone".to_string(),
                                name: self.zones[zone].id.clone(),
                            },
                        ));
                    }
                    a.required("bandwidth")?;
                    let backbone = LinkSpec {
                        name: a.required("id")?.text.clone(),
                        bandwidth: a.bandwidth("bandwidth")?.unwrap_or_default(),
                        latency: a.latency("latency")?.unwrap_or(0.0),
                        policy: Policy::Shared,
                        loc,
                    };
                    self.push(zone, ZoneItem::Backbone(backbone));
                }
                "host_link" => {
                    self.only_in(
                        zone,
                        loc,
                        "host_link",
                        "Cluster",
                        "only hand-made cluster zones give hosts private links",
                    )?;
                    let a = self.attrs(child, "host_link");
                    a.check_known(&["id", "up", "down"])?;
                    let host_link = HostLinkSpec {
                        host: a.required("id")?.clone(),
                        up: a.required("up")?.clone(),
                        down: a.required("down")?.clone(),
                        loc,
                    };
                    self.push(zone, ZoneItem::HostLink(host_link));
                }
                "cabinet" => {
                    self.only_in(
                        zone,
                        loc,
                        "cabinet",
                        "Cluster",
                        "cabinets are hosts of a hand-made cluster zone",
                    )?;
                    let a = self.attrs(child, "cabinet");
                    let cabinet = CabinetSpec::from_attrs(&a)?;
                    self.push(zone, ZoneItem::Cabinet(cabinet));
                }
                "route" => {
                    let route = self.route(child, "route", false)?;
                    self.push(zone, ZoneItem::Route(route.route));
                }
                "zoneRoute" | "ASroute" => {
                    let route = self.route(child, "zoneRoute", true)?;
                    self.push(zone, ZoneItem::ZoneRoute(route));
                }
                "trace" => {
                    let a = self.attrs(child, "trace");
                    a.check_known(&["id", "file", "periodicity"])?;
                    let id = a.required("id")?.text.clone();
                    let periodicity = a.required("periodicity")?;
                    let period = periodicity.text.trim().parse::<f64>().map_err(|_| {
                        self.err(
                            periodicity.loc,
                            K::InvalidValue {
                                key: "periodicity".to_string(),
                                value: periodicity.text.clone(),
                                reason: "expected a number of seconds".to_string(),
                            },
                        )
                    })?;
                    if self.traces.iter().any(|(t, _)| *t == id) {
                        return Err(self.err(
                            loc,
                            K::Duplicate {
                                what: "trace".to_string(),
                                name: id,
                            },
                        ));
                    }
                    let source = match a.get("file").filter(|f| !f.text.is_empty()) {
                        Some(f) => ProfileSource::File(f.clone()),
                        None => {
                            let text: String = child.children().filter_map(|c| c.text()).collect();
                            let first = child
                                .first_child()
                                .map_or(loc.line, |c| self.loc(c.range().start).line);
                            if text.trim().is_empty() {
                                return Err(self.err(
                                    loc,
                                    K::InvalidValue {
                                        key: "trace".to_string(),
                                        value: id,
                                        reason: "a <trace> needs a file or a content".to_string(),
                                    },
                                ));
                            }
                            ProfileSource::Inline(text, first, period)
                        }
                    };
                    self.traces.push((id, source));
                }
                "trace_connect" => {
                    let a = self.attrs(child, "trace_connect");
                    a.check_known(&["kind", "trace", "element"])?;
                    let kind = match a.get("kind").map(|k| k.text.trim().to_string()).as_deref() {
                        None | Some("HOST_AVAIL") => ProfileKind::HostState,
                        Some("SPEED") | Some("POWER") => ProfileKind::HostSpeed,
                        Some("LINK_AVAIL") => ProfileKind::LinkState,
                        Some("BANDWIDTH") => ProfileKind::LinkBandwidth,
                        Some("LATENCY") => ProfileKind::LinkLatency,
                        Some(_) => {
                            let v = a.required("kind")?;
                            return Err(self.err(
                                v.loc,
                                K::InvalidValue {
                                    key: "kind".to_string(),
                                    value: v.text.clone(),
                                    reason: "expected HOST_AVAIL, SPEED, LINK_AVAIL, BANDWIDTH or LATENCY"
                                        .to_string(),
                                },
                            ));
                        }
                    };
                    let trace = a.required("trace")?;
                    let Some((name, source)) = self.traces.iter().find(|(t, _)| *t == trace.text) else {
                        return Err(self.err(
                            trace.loc,
                            K::InvalidValue {
                                key: "trace".to_string(),
                                value: trace.text.clone(),
                                reason: "no <trace> of that id is declared before".to_string(),
                            },
                        ));
                    };
                    if self.connected.contains(&(kind.name(), name.clone())) {
                        return Err(self.err(
                            loc,
                            K::Unsupported {
                                what: format!("trace `{name}` connected twice as {}", kind.name()),
                                reason: "SimGrid keeps only one of the two; connect one trace per resource"
                                    .to_string(),
                            },
                        ));
                    }
                    self.connected.push((kind.name(), name.clone()));
                    self.connects.push(ProfileAttach {
                        kind,
                        element: a.required("element")?.clone(),
                        name: name.clone(),
                        source: source.clone(),
                        loc,
                    });
                }
                "bypassRoute" => {
                    let route = self.route(child, "bypassRoute", false)?;
                    self.push(zone, ZoneItem::Bypass(route));
                }
                "bypassZoneRoute" | "bypassASroute" => {
                    let route = self.route(child, "bypassZoneRoute", true)?;
                    self.push(zone, ZoneItem::Bypass(route));
                }
                _ => return Err(self.unknown(child)),
            }
        }
        Ok(())
    }

    /// Keeps the `coordinates` of a host, peer or router of a Vivaldi zone.
    fn coordinates(&mut self, zone: usize, name: &str, coordinates: Option<Val>) {
        if let (ZoneKind::Vivaldi, Some(c)) = (&self.zones[zone].kind, coordinates) {
            self.zones[zone].coordinates.push((name.to_string(), c));
        }
    }

    /// A route-like element: `<route>`, `<bypassRoute>`, or with `gateways` a zone route.
    fn route(
        &self,
        node: Node<'a, 'a>,
        element: &'static str,
        gateways: bool,
    ) -> Result<GatewayRoute, PlatformError> {
        let a = self.attrs(node, element);
        let bypass = element.starts_with("bypass");
        let keys: &[&str] = match (gateways, bypass) {
            (false, false) => &["src", "dst", "symmetrical"],
            (true, false) => &["src", "dst", "gw_src", "gw_dst", "symmetrical"],
            (false, true) => &["src", "dst"],
            (true, true) => &["src", "dst", "gw_src", "gw_dst"],
        };
        a.check_known(keys)?;
        let mut links = Vec::new();
        for child in Self::elements(node) {
            if child.tag_name().name() != "link_ctn" {
                return Err(self.unknown(child));
            }
            let l = self.attrs(child, "link_ctn");
            l.check_known(&["id", "direction"])?;
            let direction = match l.get("direction") {
                None => Direction::None,
                Some(v) => match v.text.trim().to_ascii_uppercase().as_str() {
                    "UP" => Direction::Up,
                    "DOWN" => Direction::Down,
                    "NONE" => Direction::None,
                    _ => {
                        return Err(self.err(
                            v.loc,
                            K::InvalidValue {
                                key: "direction".to_string(),
                                value: v.text.clone(),
                                reason: "expected UP, DOWN or NONE".to_string(),
                            },
                        ))
                    }
                },
            };
            links.push(LinkRef {
                name: l.required("id")?.text.clone(),
                direction,
                loc: l.loc,
            });
        }
        let route = RouteSpec {
            src: a.required("src")?.clone(),
            dst: a.required("dst")?.clone(),
            links,
            symmetrical: !bypass && a.flag("symmetrical", true)?,
            loc: a.loc,
        };
        let gateways = if gateways {
            Some((a.required("gw_src")?.clone(), a.required("gw_dst")?.clone()))
        } else {
            None
        };
        Ok(GatewayRoute { route, gateways })
    }
}
