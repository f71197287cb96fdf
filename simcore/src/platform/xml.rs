//! SimGrid v4 XML platform files (`<platform version="4.1">`), read with `roxmltree`.
//!
//! Supported elements: `platform`, `config`/`prop`, `zone` (or the older `AS`; nested zones are
//! flattened), `host` (+ `prop`, `disk` (+ `prop`)), `router`, `link` (+ `prop`, ignored), `route` + `link_ctn`,
//! `cluster` (+ `prop`), and in a `routing="Cluster"` zone `host_link` and `backbone`.
//! Known SimGrid elements that this simulator does not implement (`zoneRoute`, `bypassRoute`,
//! `cabinet`, `peer`, `storage`, traces, deployment elements, ...) are reported as unsupported;
//! anything else is an unknown element. Attribute defaults follow SimGrid's DTD.

use roxmltree::{Document, Node, ParsingOptions};

use super::error::{Loc, PlatformError, PlatformErrorKind as K};
use super::spec::{
    Attrs, ClusterSpec, Direction, DiskSpec, HostLinkSpec, HostSpec, LinkRef, LinkSpec, Policy, RouteSpec,
    Routing, Spec,
};

/// Elements of SimGrid's DTD that we do not implement.
const UNSUPPORTED: &[&str] = &[
    "zoneRoute",
    "ASroute",
    "bypassRoute",
    "bypassZoneRoute",
    "bypassASroute",
    "cabinet",
    "peer",
    "storage",
    "storage_type",
    "mount",
    "model_prop",
    "trace",
    "trace_connect",
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
    /// Routing of the zone that declared the first host/route, with the zone id and position.
    routing_set: bool,
}

/// Zone context while walking the tree.
#[derive(Clone)]
struct Zone {
    id: String,
    routing: Routing,
    loc: Loc,
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
        routing_set: false,
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
    let zone = Zone {
        id: "AS0".to_string(),
        routing: Routing::Full,
        loc,
    };
    reader.children(root, &zone)?;
    Ok(reader.spec)
}

impl<'a> Reader<'a, '_> {
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

    fn attrs(&self, node: Node, element: &'static str) -> Attrs<'_> {
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

    /// Records that `zone` holds hosts or routes; all such zones must share one routing.
    fn use_zone(&mut self, zone: &Zone, loc: Loc) -> Result<(), PlatformError> {
        if !self.routing_set {
            self.routing_set = true;
            self.spec.routing = zone.routing;
            self.spec.zone_id = zone.id.clone();
            self.spec.routing_loc = zone.loc;
            Ok(())
        } else if self.spec.routing != zone.routing {
            Err(self.err(
                loc,
                K::Unsupported {
                    what: format!("hosts or routes in zone `{}`", zone.id),
                    reason: format!(
                        "zones are flattened into one, and zone `{}` already uses another routing",
                        self.spec.zone_id
                    ),
                },
            ))
        } else {
            Ok(())
        }
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

    fn children(&mut self, node: Node<'a, 'a>, zone: &Zone) -> Result<(), PlatformError> {
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
                    let inner = Zone {
                        id: a.required("id")?.text.clone(),
                        routing: Routing::parse(&a, "routing")?,
                        loc,
                    };
                    if self.depth == MAX_ZONE_DEPTH {
                        return Err(self.err(
                            loc,
                            K::Unsupported {
                                what: format!("zone `{}` nested in {MAX_ZONE_DEPTH} zones", inner.id),
                                reason: format!("zones nest at most {MAX_ZONE_DEPTH} deep"),
                            },
                        ));
                    }
                    self.depth += 1;
                    self.children(child, &inner)?;
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
                    self.spec.clusters.push(c);
                }
                "host" => {
                    self.use_zone(zone, loc)?;
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
                    host.disks = disks;
                    self.spec.hosts.push(host);
                }
                "router" => {
                    let a = self.attrs(child, "router");
                    a.check_known(&["id", "coordinates"])?;
                    let id = a.required("id")?.clone();
                    self.spec.routers.push(id);
                }
                "link" => {
                    let a = self.attrs(child, "link");
                    self.props(child)?;
                    self.spec.links.push(LinkSpec::from_attrs(&a)?);
                }
                "backbone" => {
                    self.use_zone(zone, loc)?;
                    if zone.routing != Routing::Cluster {
                        return Err(self.err(
                            loc,
                            K::Unsupported {
                                what: "<backbone> outside a routing=\"Cluster\" zone".to_string(),
                                reason: "use <cluster bb_bw=..> or a <zone routing=\"Cluster\">".to_string(),
                            },
                        ));
                    }
                    let a = self.attrs(child, "backbone");
                    a.check_known(&["id", "bandwidth", "latency"])?;
                    if self.spec.backbone.is_some() {
                        return Err(self.err(
                            loc,
                            K::Duplicate {
                                what: "backbone".to_string(),
                                name: zone.id.clone(),
                            },
                        ));
                    }
                    a.required("bandwidth")?;
                    self.spec.backbone = Some(LinkSpec {
                        name: a.required("id")?.text.clone(),
                        bandwidth: a.bandwidth("bandwidth")?.unwrap_or_default(),
                        latency: a.latency("latency")?.unwrap_or(0.0),
                        policy: Policy::Shared,
                        loc,
                    });
                }
                "host_link" => {
                    self.use_zone(zone, loc)?;
                    if zone.routing != Routing::Cluster {
                        return Err(self.err(
                            loc,
                            K::Unsupported {
                                what: "<host_link> outside a routing=\"Cluster\" zone".to_string(),
                                reason: "only hand-made cluster zones give hosts private links".to_string(),
                            },
                        ));
                    }
                    let a = self.attrs(child, "host_link");
                    a.check_known(&["id", "up", "down"])?;
                    self.spec.host_links.push(HostLinkSpec {
                        host: a.required("id")?.clone(),
                        up: a.required("up")?.clone(),
                        down: a.required("down")?.clone(),
                        loc,
                    });
                }
                "route" => {
                    self.use_zone(zone, loc)?;
                    let route = self.route(child)?;
                    self.spec.routes.push(route);
                }
                _ => return Err(self.unknown(child)),
            }
        }
        Ok(())
    }

    fn route(&self, node: Node<'a, 'a>) -> Result<RouteSpec, PlatformError> {
        let a = self.attrs(node, "route");
        a.check_known(&["src", "dst", "symmetrical"])?;
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
        Ok(RouteSpec {
            src: a.required("src")?.clone(),
            dst: a.required("dst")?.clone(),
            links,
            symmetrical: a.flag("symmetrical", true)?,
            loc: a.loc,
        })
    }
}
