//! Model files: the TOML schema (documented in `models/README.md`), its
//! validation, and `include` resolution.
//!
//! Parsing is two-step: `serde` + `toml` into the `*Doc` structs below (syntax,
//! types and unknown keys are reported by the TOML parser with line and column),
//! then validation into the runtime models, where every error names the file, the
//! line and column (from `toml::Spanned`) and the dotted key.

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

use crate::compute::{
    EmptyCall, Kernel, Noise, Polynomial, Segment, Signature, Variant, BLAS_KERNELS, MAX_PARAMS,
};
use crate::error::ModelError;
use crate::network::{NetworkModel, NetworkNoise, Overhead, PiecewiseFactor};
use crate::noise::Mixture;
use crate::piecewise::{parse_number, shown};

/// Highest host index accepted in `hosts = [...]`.
pub(crate) const MAX_HOST: u64 = 1 << 24;

/// Config keys that belong in `[network]`, not `[config]`.
const NETWORK_CONFIG_KEYS: [(&str, &str); 7] = [
    ("smpi/lat-factor", "lat_factor"),
    ("smpi/bw-factor", "bw_factor"),
    ("network/latency-factor", "lat_factor"),
    ("network/bandwidth-factor", "bw_factor"),
    ("smpi/os", "os"),
    ("smpi/or", "or"),
    ("smpi/ois", "ois"),
];

// ---------------------------------------------------------------------------
// Schema
// ---------------------------------------------------------------------------

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileDoc {
    include: Option<Vec<Spanned<String>>>,
    seed: Option<Spanned<u64>>,
    about: Option<toml::Table>,
    config: Option<BTreeMap<String, Spanned<toml::Value>>>,
    // Tables are not `Spanned`: toml cannot span implicitly created tables (a file
    // with only `[[network.range]]` entries); `header_span` finds their headers.
    network: Option<NetworkDoc>,
    compute: Option<BTreeMap<String, ModelDoc>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct NetworkDoc {
    #[serde(alias = "smpi/lat-factor", alias = "network/latency-factor")]
    lat_factor: Option<Spanned<toml::Value>>,
    #[serde(alias = "smpi/bw-factor", alias = "network/bandwidth-factor")]
    bw_factor: Option<Spanned<toml::Value>>,
    #[serde(alias = "smpi/os")]
    os: Option<Spanned<toml::Value>>,
    #[serde(alias = "smpi/or")]
    or: Option<Spanned<toml::Value>>,
    #[serde(alias = "smpi/ois")]
    ois: Option<Spanned<toml::Value>>,
    noise: Option<Spanned<NoiseDoc>>,
    range: Option<Vec<Spanned<NetRangeDoc>>>,
    /// Free-form provenance text: accepted, not interpreted.
    #[allow(dead_code)]
    source: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct NetRangeDoc {
    above: Option<Spanned<f64>>,
    upto: Option<Spanned<f64>>,
    lat_factor: Option<Spanned<f64>>,
    bw_factor: Option<Spanned<f64>>,
    os: Option<Spanned<toml::Value>>,
    or: Option<Spanned<toml::Value>>,
    ois: Option<Spanned<toml::Value>>,
    noise: Option<Spanned<NoiseDoc>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct NoiseDoc {
    kind: Option<Spanned<String>>,
    sigma: Option<Spanned<toml::Value>>,
    weights: Option<Spanned<Vec<f64>>>,
    means: Option<Spanned<Vec<f64>>>,
    sigmas: Option<Spanned<Vec<f64>>>,
}

/// `empty = { product = "M*N*K", seconds = 3e-8 }`: a call whose product is 0.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct EmptyDoc {
    product: Spanned<String>,
    seconds: Spanned<f64>,
}

/// `[about.calibrated]`, read with spans in a second pass (the rest of `[about]`
/// is free-form, so the first pass keeps it as a plain table).
#[derive(Debug, Deserialize)]
struct CalibratedFileDoc {
    about: Option<CalibratedAboutDoc>,
}

#[derive(Debug, Deserialize)]
struct CalibratedAboutDoc {
    calibrated: Option<BTreeMap<String, BTreeMap<String, Spanned<toml::Value>>>>,
}

/// A kernel table, a `[[...range]]` entry or a `[[...host]]` entry: which keys are
/// allowed where is checked during validation.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ModelDoc {
    kind: Option<Spanned<String>>,
    params: Option<Spanned<Vec<String>>>,
    model: Option<Spanned<String>>,
    value: Option<Spanned<f64>>,
    product: Option<Spanned<String>>,
    a: Option<Spanned<f64>>,
    b: Option<Spanned<f64>>,
    coefficients: Option<Spanned<BTreeMap<String, Spanned<f64>>>>,
    noise: Option<Spanned<NoiseDoc>>,
    piecewise_on: Option<Spanned<String>>,
    range: Option<Vec<Spanned<ModelDoc>>>,
    from: Option<Spanned<f64>>,
    to: Option<Spanned<f64>>,
    hosts: Option<Spanned<Vec<u64>>>,
    host: Option<Vec<Spanned<ModelDoc>>>,
    quantum: Option<Spanned<f64>>,
    empty: Option<Spanned<EmptyDoc>>,
    /// Free-form provenance text: accepted, not interpreted.
    #[allow(dead_code)]
    source: Option<String>,
}

// ---------------------------------------------------------------------------
// Error context
// ---------------------------------------------------------------------------

/// The file being validated: its name (for messages) and text (for line numbers).
struct Ctx<'a> {
    file: &'a str,
    text: &'a str,
}

impl Ctx<'_> {
    fn line_col(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.text.len());
        let before = &self.text.as_bytes()[..offset];
        let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
        let col = offset - before.iter().rposition(|&b| b == b'\n').map_or(0, |p| p + 1) + 1;
        (line, col)
    }

    fn err(&self, span: Range<usize>, key: &str, message: impl Into<String>) -> ModelError {
        let (line, column) = self.line_col(span.start);
        ModelError::Invalid {
            file: self.file.to_string(),
            line,
            column,
            key: printable(key),
            message: printable(&message.into()),
        }
    }

    fn syntax(&self, e: toml::de::Error) -> ModelError {
        let (line, column) = e.span().map_or((0, 0), |s| self.line_col(s.start));
        let message = e
            .message()
            .trim()
            .lines()
            .map(str::trim)
            .collect::<Vec<_>>()
            .join("; ");
        ModelError::Syntax {
            file: self.file.to_string(),
            line,
            column,
            message: printable(&message),
        }
    }

    /// The span of the first table header (`[a.b]` or `[[a.b.c]]`) whose dotted
    /// path starts with `path`, or of a line `path[0] = ...`; `0..0` if none.
    fn header_span(&self, path: &[&str]) -> Range<usize> {
        let mut offset = 0;
        for line in self.text.split_inclusive('\n') {
            let t = line.trim_start();
            let start = offset + (line.len() - t.len());
            offset += line.len();
            let Some(h) = t.strip_prefix('[') else {
                if path.len() == 1
                    && t.split('=')
                        .next()
                        .is_some_and(|k| k.trim().trim_matches('"') == path[0])
                {
                    return start..start;
                }
                continue;
            };
            let h = h.trim_start_matches('[');
            let Some(end) = h.find(']') else { continue };
            let parts: Vec<&str> = h[..end].split('.').map(|p| p.trim().trim_matches('"')).collect();
            if parts.len() >= path.len() && parts[..path.len()] == *path {
                return start..start;
            }
        }
        0..0
    }

    fn dup(&self, span: Range<usize>, key: &str, first: &str) -> ModelError {
        let (line, column) = self.line_col(span.start);
        ModelError::Duplicate {
            file: self.file.to_string(),
            line,
            column,
            key: printable(key),
            first: first.to_string(),
        }
    }
}

/// `text` with its control characters escaped (a key or value written `"a\nb"` in TOML, quoted
/// in a message), so that every message is one line.
fn printable(text: &str) -> String {
    if !text.contains(char::is_control) {
        return text.to_string();
    }
    text.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

fn finite(ctx: &Ctx, v: &Spanned<f64>, key: &str) -> Result<f64, ModelError> {
    let x = *v.get_ref();
    if x.is_finite() {
        Ok(x)
    } else {
        Err(ctx.err(v.span(), key, format!("{x} is not a finite number")))
    }
}

// ---------------------------------------------------------------------------
// One file
// ---------------------------------------------------------------------------

/// What one file (without its includes) defines, with spans for duplicate checks.
#[derive(Default)]
pub(crate) struct Parts {
    pub(crate) seed: Option<(u64, Range<usize>)>,
    pub(crate) config: Vec<(String, String, Range<usize>)>,
    pub(crate) network: Option<(NetworkModel, Range<usize>)>,
    pub(crate) kernels: Vec<(Kernel, Range<usize>)>,
    pub(crate) includes: Vec<(String, Range<usize>)>,
}

/// Parses and validates one file's text.
pub(crate) fn parse_file(text: &str, file: &str) -> Result<Parts, ModelError> {
    let ctx = Ctx { file, text };
    let doc: FileDoc = toml::from_str(text).map_err(|e| ctx.syntax(e))?;
    let mut parts = Parts::default();
    if let Some(inc) = doc.include {
        parts.includes = inc.into_iter().map(|s| (s.get_ref().clone(), s.span())).collect();
    }
    parts.seed = doc.seed.map(|s| (*s.get_ref(), s.span()));
    for (key, value) in doc.config.unwrap_or_default() {
        let path = format!("config.\"{key}\"");
        if let Some((_, net)) = NETWORK_CONFIG_KEYS.iter().find(|(k, _)| *k == key) {
            return Err(ctx.err(
                value.span(),
                &path,
                format!("`{key}` is part of the network model: set it as `{net}` in [network]"),
            ));
        }
        let v = match value.get_ref() {
            toml::Value::String(s) => s.clone(),
            toml::Value::Integer(i) => i.to_string(),
            toml::Value::Float(f) => f.to_string(),
            toml::Value::Boolean(b) => b.to_string(),
            other => {
                return Err(ctx.err(
                    value.span(),
                    &path,
                    format!(
                        "config values must be strings, numbers or booleans, found {}",
                        other.type_str()
                    ),
                ))
            }
        };
        parts.config.push((key, v, value.span()));
    }
    if let Some(net) = doc.network {
        let span = ctx.header_span(&["network"]);
        parts.network = Some((network(&ctx, net, span.clone())?, span));
    }
    for (name, k) in doc.compute.unwrap_or_default() {
        let span = ctx.header_span(&["compute", &name]);
        parts
            .kernels
            .push((kernel(&ctx, &name, Spanned::new(span.clone(), k))?, span));
    }
    // `[about]` is free-form provenance, except `[about.calibrated]`: the ranges
    // a fit measured, checked by the simulator.
    if doc.about.as_ref().is_some_and(|a| a.contains_key("calibrated")) {
        let cal: CalibratedFileDoc = toml::from_str(text).map_err(|e| ctx.syntax(e))?;
        let sections = cal.about.and_then(|a| a.calibrated).unwrap_or_default();
        calibrations(&ctx, &sections, &mut parts.kernels)?;
    }
    Ok(parts)
}

// ---------------------------------------------------------------------------
// Network
// ---------------------------------------------------------------------------

fn smpi_string<T>(
    ctx: &Ctx,
    v: &Spanned<toml::Value>,
    key: &str,
    parse: impl Fn(&str) -> Result<T, ModelError>,
) -> Result<T, ModelError> {
    let s = match v.get_ref() {
        toml::Value::String(s) => s.clone(),
        toml::Value::Integer(i) => i.to_string(),
        toml::Value::Float(f) => f.to_string(),
        other => {
            return Err(ctx.err(
                v.span(),
                key,
                format!(
                    "expected an SMPI string like \"0:1.0;65472:0.9\" or a number, found {}",
                    other.type_str()
                ),
            ))
        }
    };
    parse(&s).map_err(|e| ctx.err(v.span(), key, format!("invalid SMPI value: {e}")))
}

fn overhead_value(ctx: &Ctx, v: &Spanned<toml::Value>, key: &str) -> Result<(f64, f64), ModelError> {
    let num = |x: &toml::Value| match x {
        toml::Value::Float(f) if f.is_finite() => Some(*f),
        toml::Value::Integer(i) => Some(*i as f64),
        toml::Value::String(s) => parse_number(s),
        _ => None,
    };
    let bad = || {
        ctx.err(
            v.span(),
            key,
            "expected { offset = <s>, per_byte = <s/B> } or [offset, per_byte] (cost = offset + per_byte·size)",
        )
    };
    match v.get_ref() {
        toml::Value::Table(t) => {
            if let Some(k) = t.keys().find(|k| *k != "offset" && *k != "per_byte") {
                return Err(ctx.err(
                    v.span(),
                    key,
                    format!("unknown key `{k}` (expected offset, per_byte)"),
                ));
            }
            let get = |name: &str| -> Result<f64, ModelError> {
                let x = t.get(name).ok_or_else(|| {
                    ctx.err(
                        v.span(),
                        key,
                        format!("missing coefficient `{name}` (offset + per_byte·size)"),
                    )
                })?;
                num(x).ok_or_else(bad)
            };
            Ok((get("offset")?, get("per_byte")?))
        }
        toml::Value::Array(a) if a.len() == 2 => {
            Ok((num(&a[0]).ok_or_else(bad)?, num(&a[1]).ok_or_else(bad)?))
        }
        _ => Err(bad()),
    }
}

fn network(ctx: &Ctx, doc: NetworkDoc, span: Range<usize>) -> Result<NetworkModel, ModelError> {
    let mut m = NetworkModel::cm02();
    let default_noise = match &doc.noise {
        Some(n) => network_noise(ctx, n, "network.noise")?,
        None => None,
    };
    let top = [&doc.lat_factor, &doc.bw_factor, &doc.os, &doc.or, &doc.ois];
    const NAMES: [&str; 5] = ["lat_factor", "bw_factor", "os", "or", "ois"];
    if let Some(v) = &doc.lat_factor {
        m.lat_factor = smpi_string(ctx, v, "network.lat_factor", PiecewiseFactor::parse_smpi)?;
        if let Some(bad) = m.lat_factor.invalid_value(false) {
            return Err(ctx.err(v.span(), "network.lat_factor", factor_problem(bad, false)));
        }
    }
    if let Some(v) = &doc.bw_factor {
        m.bw_factor = smpi_string(ctx, v, "network.bw_factor", PiecewiseFactor::parse_smpi)?;
        if let Some(bad) = m.bw_factor.invalid_value(true) {
            return Err(ctx.err(v.span(), "network.bw_factor", factor_problem(bad, true)));
        }
    }
    if let Some(v) = &doc.os {
        m.os = smpi_string(ctx, v, "network.os", Overhead::parse_smpi)?;
        if let Some(bad) = m.os.invalid_value() {
            return Err(ctx.err(v.span(), "network.os", overhead_problem(bad)));
        }
    }
    if let Some(v) = &doc.or {
        m.or = smpi_string(ctx, v, "network.or", Overhead::parse_smpi)?;
        if let Some(bad) = m.or.invalid_value() {
            return Err(ctx.err(v.span(), "network.or", overhead_problem(bad)));
        }
    }
    if let Some(v) = &doc.ois {
        m.ois = smpi_string(ctx, v, "network.ois", Overhead::parse_smpi)?;
        if let Some(bad) = m.ois.invalid_value() {
            return Err(ctx.err(v.span(), "network.ois", overhead_problem(bad)));
        }
    }
    let Some(ranges) = &doc.range else {
        if let Some(n) = default_noise {
            m.noise = noise_constant(n);
        }
        return Ok(m);
    };
    if ranges.is_empty() {
        return Err(ctx.err(span, "network.range", "empty list of ranges"));
    }
    // Ranges: sorted, distinct, contiguous.
    let mut bounds = Vec::with_capacity(ranges.len());
    for (i, r) in ranges.iter().enumerate() {
        let key = format!("network.range[{i}]");
        let rr = r.get_ref();
        let above = rr.above.as_ref().ok_or_else(|| {
            ctx.err(
                r.span(),
                &key,
                "missing key `above` (the range covers sizes > above)",
            )
        })?;
        let b = finite(ctx, above, &format!("{key}.above"))?;
        if b < 0.0 {
            return Err(ctx.err(
                above.span(),
                &format!("{key}.above"),
                format!("{b} is negative (bytes)"),
            ));
        }
        if let Some(&prev) = bounds.last() {
            if b == prev {
                return Err(ctx.err(
                    above.span(),
                    &format!("{key}.above"),
                    format!("overlapping ranges: range {} also starts above {b}", i - 1),
                ));
            }
            if b < prev {
                return Err(ctx.err(
                    above.span(),
                    &format!("{key}.above"),
                    format!(
                        "unsorted ranges: above = {b} comes after above = {prev}; sort ranges by `above`"
                    ),
                ));
            }
        }
        bounds.push(b);
    }
    for (i, r) in ranges.iter().enumerate() {
        if let Some(upto) = &r.get_ref().upto {
            let key = format!("network.range[{i}].upto");
            let u = finite(ctx, upto, &key)?;
            if u <= bounds[i] {
                return Err(ctx.err(
                    upto.span(),
                    &key,
                    format!("upto = {u} must be > above = {}", bounds[i]),
                ));
            }
            match bounds.get(i + 1) {
                Some(&next) if u > next => {
                    return Err(ctx.err(
                        upto.span(),
                        &key,
                        format!("overlapping ranges: upto = {u} but the next range starts above {next}"),
                    ))
                }
                Some(&next) if u < next => {
                    return Err(ctx.err(
                        upto.span(),
                        &key,
                        format!("gap between ranges: upto = {u} but the next range starts above {next}"),
                    ))
                }
                _ => {}
            }
        }
    }
    // Per-quantity chunks.
    let mut lat = Vec::new();
    let mut bw = Vec::new();
    let mut ov: [Vec<(f64, (f64, f64))>; 3] = Default::default();
    let mut noise = Vec::new();
    let mut any_ov = [false; 3];
    for (i, r) in ranges.iter().enumerate() {
        let rr = r.get_ref();
        let b = bounds[i];
        let key = format!("network.range[{i}]");
        for (q, (field, dst)) in [(&rr.lat_factor, &mut lat), (&rr.bw_factor, &mut bw)]
            .into_iter()
            .enumerate()
        {
            match (field, top[q]) {
                (Some(v), Some(_)) => {
                    return Err(ctx.err(
                        v.span(),
                        &format!("{key}.{}", NAMES[q]),
                        format!(
                            "{} is already given as an SMPI string in [network]; use one or the other",
                            NAMES[q]
                        ),
                    ))
                }
                (Some(v), None) => {
                    let fkey = format!("{key}.{}", NAMES[q]);
                    let f = finite(ctx, v, &fkey)?;
                    let positive = q == 1;
                    if PiecewiseFactor::constant(f).invalid_value(positive).is_some() {
                        return Err(ctx.err(v.span(), &fkey, factor_problem(f, positive)));
                    }
                    dst.push((b, f));
                }
                (None, Some(_)) => {}
                (None, None) => {
                    return Err(ctx.err(
                        r.span(),
                        &key,
                        format!(
                            "missing coefficient `{}` (give it in every range, or once in [network] \
                             as a number or SMPI string)",
                            NAMES[q]
                        ),
                    ))
                }
            }
        }
        for (q, field) in [&rr.os, &rr.or, &rr.ois].into_iter().enumerate() {
            let name = NAMES[q + 2];
            match (field, top[q + 2]) {
                (Some(v), Some(_)) => {
                    return Err(ctx.err(
                        v.span(),
                        &format!("{key}.{name}"),
                        format!(
                            "{name} is already given as an SMPI string in [network]; use one or the other"
                        ),
                    ))
                }
                (Some(v), None) => {
                    any_ov[q] = true;
                    let okey = format!("{key}.{name}");
                    let value = overhead_value(ctx, v, &okey)?;
                    if Overhead::from_chunks(vec![(0.0, value)])
                        .ok()
                        .and_then(|o| o.invalid_value())
                        .is_some()
                    {
                        return Err(ctx.err(v.span(), &okey, overhead_problem(value)));
                    }
                    ov[q].push((b, value));
                }
                (None, _) => ov[q].push((b, (0.0, 0.0))),
            }
        }
        let n = match &rr.noise {
            Some(n) => network_noise(ctx, n, &format!("{key}.noise"))?,
            None => default_noise.clone(),
        };
        noise.push((b, n));
    }
    let wrap = |e: ModelError| ctx.err(span.clone(), "network.range", e.to_string());
    if doc.lat_factor.is_none() {
        m.lat_factor = PiecewiseFactor::from_chunks(lat).map_err(wrap)?;
    }
    if doc.bw_factor.is_none() {
        m.bw_factor = PiecewiseFactor::from_chunks(bw).map_err(wrap)?;
    }
    let [os, or, ois] = ov;
    if any_ov[0] {
        m.os = Overhead::from_chunks(os).map_err(wrap)?;
    }
    if any_ov[1] {
        m.or = Overhead::from_chunks(or).map_err(wrap)?;
    }
    if any_ov[2] {
        m.ois = Overhead::from_chunks(ois).map_err(wrap)?;
    }
    m.noise = NetworkNoise::from_chunks_with_default(default_noise, noise).map_err(wrap)?;
    Ok(m)
}

/// Why a latency factor (`bandwidth` false) or a bandwidth factor cannot be `v`.
fn factor_problem(v: f64, bandwidth: bool) -> String {
    if bandwidth {
        format!(
            "bandwidth factor {} must be positive (a message would never end)",
            shown(v)
        )
    } else {
        format!("latency factor {} must not be negative", shown(v))
    }
}

/// Why an overhead cannot be `offset + per_byte·size`.
fn overhead_problem((offset, per_byte): (f64, f64)) -> String {
    format!(
        "overhead {} s + {} s/B: the offset must be within ±1e9 s and the per-byte cost within ±1 s/B",
        shown(offset),
        shown(per_byte)
    )
}

fn noise_constant(n: Mixture) -> NetworkNoise {
    NetworkNoise::from_chunks_with_default(Some(n), Vec::new()).expect("no chunk, nothing to validate")
}

fn network_noise(ctx: &Ctx, n: &Spanned<NoiseDoc>, key: &str) -> Result<Option<Mixture>, ModelError> {
    let d = n.get_ref();
    let kind = noise_kind(ctx, n, key)?;
    match kind.as_str() {
        "none" => {
            reject(
                ctx,
                key,
                "none",
                &[("sigma", d.sigma.as_ref().map(Spanned::span))],
            )?;
            reject_mixture_keys(ctx, d, key, "none")?;
            Ok(None)
        }
        "normal" => {
            reject_mixture_keys(ctx, d, key, "normal")?;
            let s = d
                .sigma
                .as_ref()
                .ok_or_else(|| ctx.err(n.span(), key, "missing key `sigma` for kind = \"normal\""))?;
            let sigma = match s.get_ref() {
                toml::Value::Float(f) => *f,
                toml::Value::Integer(i) => *i as f64,
                _ => {
                    return Err(ctx.err(
                        s.span(),
                        &format!("{key}.sigma"),
                        "network noise sigma must be a number (seconds)",
                    ))
                }
            };
            let m = Mixture::normal(0.0, sigma)
                .map_err(|(_, msg)| ctx.err(s.span(), &format!("{key}.sigma"), msg))?;
            Ok(Some(m))
        }
        "mixture" => Ok(Some(mixture(ctx, n, key)?)),
        other => Err(ctx.err(
            d.kind.as_ref().map_or(n.span(), Spanned::span),
            &format!("{key}.kind"),
            format!("unknown network noise kind `{other}` (expected none, normal or mixture)"),
        )),
    }
}

fn noise_kind(ctx: &Ctx, n: &Spanned<NoiseDoc>, key: &str) -> Result<String, ModelError> {
    let d = n.get_ref();
    match &d.kind {
        Some(k) => Ok(k.get_ref().clone()),
        None if d.weights.is_some() => Ok("mixture".into()),
        None => Err(ctx.err(
            n.span(),
            key,
            "missing key `kind` (none, normal, half_normal or mixture; kind may be omitted for a mixture)",
        )),
    }
}

fn reject(
    ctx: &Ctx,
    key: &str,
    what: &str,
    fields: &[(&str, Option<Range<usize>>)],
) -> Result<(), ModelError> {
    for (name, span) in fields {
        if let Some(span) = span {
            return Err(ctx.err(
                span.clone(),
                &format!("{key}.{name}"),
                format!("`{name}` is not used by {what}"),
            ));
        }
    }
    Ok(())
}

fn reject_mixture_keys(ctx: &Ctx, d: &NoiseDoc, key: &str, kind: &str) -> Result<(), ModelError> {
    reject(
        ctx,
        key,
        &format!("kind = \"{kind}\""),
        &[
            ("weights", d.weights.as_ref().map(Spanned::span)),
            ("means", d.means.as_ref().map(Spanned::span)),
            ("sigmas", d.sigmas.as_ref().map(Spanned::span)),
        ],
    )
}

fn mixture(ctx: &Ctx, n: &Spanned<NoiseDoc>, key: &str) -> Result<Mixture, ModelError> {
    let d = n.get_ref();
    reject(
        ctx,
        key,
        "kind = \"mixture\"",
        &[("sigma", d.sigma.as_ref().map(Spanned::span))],
    )?;
    let get = |f: &Option<Spanned<Vec<f64>>>, name: &str| -> Result<Vec<f64>, ModelError> {
        f.as_ref().map(|v| v.get_ref().clone()).ok_or_else(|| {
            ctx.err(
                n.span(),
                key,
                format!("missing key `{name}` for a mixture (weights, means, sigmas)"),
            )
        })
    };
    let (w, m, s) = (
        get(&d.weights, "weights")?,
        get(&d.means, "means")?,
        get(&d.sigmas, "sigmas")?,
    );
    Mixture::new(w, m, s).map_err(|(field, msg)| {
        let span = match field {
            "means" => d.means.as_ref().map(Spanned::span),
            "sigmas" => d.sigmas.as_ref().map(Spanned::span),
            _ => d.weights.as_ref().map(Spanned::span),
        }
        .unwrap_or(n.span());
        ctx.err(span, &format!("{key}.{field}"), msg)
    })
}

// ---------------------------------------------------------------------------
// Compute
// ---------------------------------------------------------------------------

fn is_identifier(s: &str) -> bool {
    let mut c = s.chars();
    c.next().is_some_and(|f| f.is_ascii_alphabetic() || f == '_')
        && c.all(|x| x.is_ascii_alphanumeric() || x == '_')
}

fn kernel(ctx: &Ctx, name: &str, doc: Spanned<ModelDoc>) -> Result<Kernel, ModelError> {
    let key = format!("compute.{name}");
    let d = doc.get_ref();
    let kind = d.kind.as_ref().map(|k| (k.get_ref().as_str(), k.span()));
    let signature = if BLAS_KERNELS.contains(&name) {
        if let Some((k, span)) = kind {
            if k != "blas" {
                return Err(ctx.err(
                    span,
                    &format!("{key}.kind"),
                    format!("`{name}` is a BLAS kernel: kind must be \"blas\" or absent, found \"{k}\""),
                ));
            }
        }
        let sig = Signature::blas(name).expect("every BLAS_KERNELS name has a signature");
        if let Some(p) = &d.params {
            return Err(ctx.err(
                p.span(),
                &format!("{key}.params"),
                format!(
                    "the parameters of BLAS kernel `{name}` are fixed: [{}]",
                    sig.params.join(", ")
                ),
            ));
        }
        sig
    } else {
        match kind {
            Some(("function", _)) => {}
            Some((k, span)) => {
                return Err(ctx.err(
                    span,
                    &format!("{key}.kind"),
                    format!("unknown kind \"{k}\" (expected \"function\" for a non-BLAS kernel)"),
                ))
            }
            None => {
                return Err(ctx.err(
                    doc.span(),
                    &key,
                    format!(
                        "unknown kernel `{name}`: known kernels are the BLAS {} and names declared with \
                         kind = \"function\" and params = [...]",
                        BLAS_KERNELS.join(", ")
                    ),
                ))
            }
        }
        if !is_identifier(name) {
            return Err(ctx.err(
                doc.span(),
                &key,
                format!("kernel name `{name}` is not an identifier"),
            ));
        }
        let p = d.params.as_ref().ok_or_else(|| {
            ctx.err(
                doc.span(),
                &key,
                "missing key `params` (the names of the call's parameters, e.g. [\"M\", \"N\"])",
            )
        })?;
        let params = p.get_ref().clone();
        let pkey = format!("{key}.params");
        if params.is_empty() || params.len() > MAX_PARAMS {
            return Err(ctx.err(
                p.span(),
                &pkey,
                format!("expected 1 to {MAX_PARAMS} parameters, found {}", params.len()),
            ));
        }
        for (i, x) in params.iter().enumerate() {
            if !is_identifier(x) || x == "intercept" {
                return Err(ctx.err(
                    p.span(),
                    &pkey,
                    format!("parameter name `{x}` is not an identifier"),
                ));
            }
            if params[..i].contains(x) {
                return Err(ctx.err(p.span(), &pkey, format!("parameter `{x}` appears twice")));
            }
        }
        Signature::function(params)
    };
    reject(
        ctx,
        &key,
        "a kernel table (only in [[range]] or [[host]] entries)",
        &[
            ("from", d.from.as_ref().map(Spanned::span)),
            ("to", d.to.as_ref().map(Spanned::span)),
            ("hosts", d.hosts.as_ref().map(Spanned::span)),
        ],
    )?;
    let inv_quantum = match &d.quantum {
        Some(q) => {
            let v = finite(ctx, q, &format!("{key}.quantum"))?;
            if v <= 0.0 {
                return Err(ctx.err(
                    q.span(),
                    &format!("{key}.quantum"),
                    format!("quantum = {v} must be > 0 (seconds)"),
                ));
            }
            if !(1.0 / v).is_finite() {
                return Err(ctx.err(
                    q.span(),
                    &format!("{key}.quantum"),
                    format!(
                        "quantum = {} is too small (1/quantum is not a finite number)",
                        shown(v)
                    ),
                ));
            }
            Some(1.0 / v)
        }
        None => None,
    };
    let vars = &signature.variables;
    let empty = match &d.empty {
        Some(e) => {
            let (ekey, e) = (format!("{key}.empty"), e.get_ref());
            let product = Polynomial::parse_term(e.product.get_ref(), vars)
                .map_err(|m| ctx.err(e.product.span(), &format!("{ekey}.product"), m))?;
            if product.is_empty() {
                return Err(ctx.err(
                    e.product.span(),
                    &format!("{ekey}.product"),
                    "the product must use at least one variable",
                ));
            }
            let seconds = finite(ctx, &e.seconds, &format!("{ekey}.seconds"))?;
            if seconds < 0.0 {
                return Err(ctx.err(
                    e.seconds.span(),
                    &format!("{ekey}.seconds"),
                    format!("seconds = {seconds} must be >= 0"),
                ));
            }
            Some(EmptyCall { product, seconds })
        }
        None => None,
    };
    let default = variant(ctx, &key, &doc, vars, &Noise::None, None)?.ok_or_else(|| {
        ctx.err(
            doc.span(),
            &key,
            "missing key `model` (constant, linear or polynomial) or `range` entries",
        )
    })?;
    let mut variants = vec![default];
    let mut host_variant: Vec<u32> = Vec::new();
    let mut owner: BTreeMap<u64, usize> = BTreeMap::new();
    for (i, h) in d.host.iter().flatten().enumerate() {
        let hkey = format!("{key}.host[{i}]");
        let hd = h.get_ref();
        reject(
            ctx,
            &hkey,
            "a host entry",
            &[
                ("kind", hd.kind.as_ref().map(Spanned::span)),
                ("params", hd.params.as_ref().map(Spanned::span)),
                ("from", hd.from.as_ref().map(Spanned::span)),
                ("to", hd.to.as_ref().map(Spanned::span)),
                ("quantum", hd.quantum.as_ref().map(Spanned::span)),
                ("empty", hd.empty.as_ref().map(Spanned::span)),
            ],
        )?;
        if hd.host.is_some() {
            return Err(ctx.err(h.span(), &hkey, "host entries cannot be nested"));
        }
        let hosts = hd
            .hosts
            .as_ref()
            .ok_or_else(|| ctx.err(h.span(), &hkey, "missing key `hosts` (list of host indices)"))?;
        if hosts.get_ref().is_empty() {
            return Err(ctx.err(hosts.span(), &format!("{hkey}.hosts"), "empty list of hosts"));
        }
        let kernel_noise = match &d.noise {
            Some(n) => compute_noise(ctx, n, &format!("{key}.noise"), vars)?,
            None => Noise::None,
        };
        let v = variant(ctx, &hkey, h, vars, &kernel_noise, Some(&variants[0]))?
            .expect("host entries inherit the default model");
        let idx = variants.len();
        variants.push(v);
        for &host in hosts.get_ref() {
            if host > MAX_HOST {
                return Err(ctx.err(
                    hosts.span(),
                    &format!("{hkey}.hosts"),
                    format!("host index {host} is too large (at most {MAX_HOST})"),
                ));
            }
            if let Some(prev) = owner.insert(host, i) {
                return Err(ctx.err(
                    hosts.span(),
                    &format!("{hkey}.hosts"),
                    format!("host {host} is already listed in {key}.host[{prev}]"),
                ));
            }
            let hi = host as usize;
            if host_variant.len() <= hi {
                host_variant.resize(hi + 1, 0);
            }
            host_variant[hi] = idx as u32;
        }
    }
    Ok(Kernel {
        name: name.to_string(),
        signature,
        variants,
        host_variant,
        inv_quantum,
        calibration: None,
        empty,
    })
}

/// True when `d` sets any key of a model (M-0/1/2).
fn has_model(d: &ModelDoc) -> bool {
    d.model.is_some()
        || d.value.is_some()
        || d.a.is_some()
        || d.b.is_some()
        || d.product.is_some()
        || d.coefficients.is_some()
}

/// Builds a variant from a kernel or host entry. `inherited_noise` applies where no
/// `noise` is given; `inherit_model` (host entries) is used when the entry has no
/// model of its own. Returns `None` when there is neither a model nor a fallback.
fn variant(
    ctx: &Ctx,
    key: &str,
    doc: &Spanned<ModelDoc>,
    vars: &[String],
    inherited_noise: &Noise,
    inherit_model: Option<&Variant>,
) -> Result<Option<Variant>, ModelError> {
    let d = doc.get_ref();
    let own_noise = match &d.noise {
        Some(n) => Some(compute_noise(ctx, n, &format!("{key}.noise"), vars)?),
        None => None,
    };
    let noise = own_noise.clone().unwrap_or_else(|| inherited_noise.clone());
    if let Some(ranges) = &d.range {
        if has_model(d) {
            return Err(ctx.err(
                doc.span(),
                key,
                "a model with `range` entries takes its model keys (model, value, a, b, product, coefficients) \
                 in each range",
            ));
        }
        let on = d.piecewise_on.as_ref().ok_or_else(|| {
            ctx.err(
                doc.span(),
                key,
                "missing key `piecewise_on` (the feature that selects the range, e.g. \"M*N*K\")",
            )
        })?;
        let t = Polynomial::parse_term(on.get_ref(), vars)
            .map_err(|m| ctx.err(on.span(), &format!("{key}.piecewise_on"), m))?;
        if t.is_empty() {
            return Err(ctx.err(
                on.span(),
                &format!("{key}.piecewise_on"),
                "the feature must use at least one variable",
            ));
        }
        let mut feature = Polynomial::default();
        feature.push(1.0, &t);
        if ranges.is_empty() {
            return Err(ctx.err(doc.span(), &format!("{key}.range"), "empty list of ranges"));
        }
        let mut starts: Vec<f64> = Vec::new();
        let mut segments = Vec::new();
        for (i, r) in ranges.iter().enumerate() {
            let rkey = format!("{key}.range[{i}]");
            let rd = r.get_ref();
            reject(
                ctx,
                &rkey,
                "a range entry",
                &[
                    ("kind", rd.kind.as_ref().map(Spanned::span)),
                    ("params", rd.params.as_ref().map(Spanned::span)),
                    ("piecewise_on", rd.piecewise_on.as_ref().map(Spanned::span)),
                    ("hosts", rd.hosts.as_ref().map(Spanned::span)),
                    ("quantum", rd.quantum.as_ref().map(Spanned::span)),
                    ("empty", rd.empty.as_ref().map(Spanned::span)),
                ],
            )?;
            if rd.range.is_some() || rd.host.is_some() {
                return Err(ctx.err(
                    r.span(),
                    &rkey,
                    "range entries cannot contain `range` or `host` entries",
                ));
            }
            let from = rd.from.as_ref().ok_or_else(|| {
                ctx.err(
                    r.span(),
                    &rkey,
                    "missing key `from` (the range covers from <= feature < next from)",
                )
            })?;
            let f = finite(ctx, from, &format!("{rkey}.from"))?;
            if let Some(&prev) = starts.last() {
                if f == prev {
                    return Err(ctx.err(
                        from.span(),
                        &format!("{rkey}.from"),
                        format!("overlapping ranges: range {} also starts at {f}", i - 1),
                    ));
                }
                if f < prev {
                    return Err(ctx.err(
                        from.span(),
                        &format!("{rkey}.from"),
                        format!(
                            "unsorted ranges: from = {f} comes after from = {prev}; sort ranges by `from`"
                        ),
                    ));
                }
            }
            starts.push(f);
            let model = model_poly(ctx, &rkey, r, vars)?.ok_or_else(|| {
                ctx.err(
                    r.span(),
                    &rkey,
                    "missing key `model` (constant, linear or polynomial)",
                )
            })?;
            let noise = match &rd.noise {
                Some(n) => compute_noise(ctx, n, &format!("{rkey}.noise"), vars)?,
                None => noise.clone(),
            };
            segments.push(Segment { model, noise });
        }
        for (i, r) in ranges.iter().enumerate() {
            if let Some(to) = &r.get_ref().to {
                let tkey = format!("{key}.range[{i}].to");
                let t = finite(ctx, to, &tkey)?;
                if t <= starts[i] {
                    return Err(ctx.err(
                        to.span(),
                        &tkey,
                        format!("to = {t} must be > from = {}", starts[i]),
                    ));
                }
                match starts.get(i + 1) {
                    Some(&next) if t > next => {
                        return Err(ctx.err(
                            to.span(),
                            &tkey,
                            format!("overlapping ranges: to = {t} but the next range starts at {next}"),
                        ))
                    }
                    Some(&next) if t < next => {
                        return Err(ctx.err(
                            to.span(),
                            &tkey,
                            format!("gap between ranges: to = {t} but the next range starts at {next}"),
                        ))
                    }
                    _ => {}
                }
            }
        }
        let first_from = starts.remove(0);
        let last_to = ranges
            .last()
            .and_then(|r| r.get_ref().to.as_ref())
            .map(|t| *t.get_ref());
        return Ok(Some(Variant {
            on: Some(feature),
            starts,
            segments,
            first_from,
            last_to,
        }));
    }
    if let Some(on) = &d.piecewise_on {
        return Err(ctx.err(
            on.span(),
            &format!("{key}.piecewise_on"),
            "`piecewise_on` needs `range` entries",
        ));
    }
    if let Some(model) = model_poly(ctx, key, doc, vars)? {
        return Ok(Some(Variant {
            on: None,
            starts: Vec::new(),
            segments: vec![Segment { model, noise }],
            first_from: f64::NEG_INFINITY,
            last_to: None,
        }));
    }
    Ok(inherit_model.map(|base| {
        let mut v = base.clone();
        if let Some(n) = own_noise {
            for s in &mut v.segments {
                s.noise = n.clone();
            }
        }
        v
    }))
}

/// Builds the M-0/M-1/M-2 polynomial of an entry; `None` when it has no model key.
fn model_poly(
    ctx: &Ctx,
    key: &str,
    doc: &Spanned<ModelDoc>,
    vars: &[String],
) -> Result<Option<Polynomial>, ModelError> {
    let d = doc.get_ref();
    if !has_model(d) {
        return Ok(None);
    }
    let model = d.model.as_ref().ok_or_else(|| {
        ctx.err(
            doc.span(),
            key,
            "missing key `model` (constant, linear or polynomial)",
        )
    })?;
    let mkey = format!("{key}.model");
    let what = format!("model = \"{}\"", model.get_ref());
    let sp = |x: &Option<Spanned<f64>>| x.as_ref().map(Spanned::span);
    let missing = |name: &str, hint: &str| {
        ctx.err(
            doc.span(),
            key,
            format!("missing coefficient `{name}` for {what} ({hint})"),
        )
    };
    let mut p = Polynomial::default();
    match model.get_ref().as_str() {
        "constant" => {
            reject(
                ctx,
                key,
                &what,
                &[
                    ("a", sp(&d.a)),
                    ("b", sp(&d.b)),
                    ("product", d.product.as_ref().map(Spanned::span)),
                    ("coefficients", d.coefficients.as_ref().map(Spanned::span)),
                ],
            )?;
            let v = d
                .value
                .as_ref()
                .ok_or_else(|| missing("value", "T = value, in seconds"))?;
            p.push(finite(ctx, v, &format!("{key}.value"))?, &[]);
        }
        "linear" => {
            reject(
                ctx,
                key,
                &what,
                &[
                    ("value", sp(&d.value)),
                    ("coefficients", d.coefficients.as_ref().map(Spanned::span)),
                ],
            )?;
            let a = d.a.as_ref().ok_or_else(|| missing("a", "T = a·product + b"))?;
            let b =
                d.b.as_ref()
                    .ok_or_else(|| missing("b", "T = a·product + b; write b = 0 for no intercept"))?;
            let prod = d.product.as_ref().ok_or_else(|| {
                ctx.err(
                    doc.span(),
                    key,
                    format!("missing key `product` for {what} (e.g. \"M*N*K\")"),
                )
            })?;
            let t = Polynomial::parse_term(prod.get_ref(), vars)
                .map_err(|m| ctx.err(prod.span(), &format!("{key}.product"), m))?;
            p.push(finite(ctx, a, &format!("{key}.a"))?, &t);
            p.push(finite(ctx, b, &format!("{key}.b"))?, &[]);
        }
        "polynomial" => {
            reject(
                ctx,
                key,
                &what,
                &[
                    ("value", sp(&d.value)),
                    ("a", sp(&d.a)),
                    ("b", sp(&d.b)),
                    ("product", d.product.as_ref().map(Spanned::span)),
                ],
            )?;
            let c = d.coefficients.as_ref().ok_or_else(|| {
                missing(
                    "coefficients",
                    "a table of term = coefficient, e.g. { MNK = 1e-11, intercept = 2e-12 }",
                )
            })?;
            p = poly_table(ctx, c, &format!("{key}.coefficients"), vars)?;
        }
        other => {
            return Err(ctx.err(
                model.span(),
                &mkey,
                format!("unknown model `{other}` (expected constant, linear or polynomial)"),
            ))
        }
    }
    Ok(Some(p))
}

fn poly_table(
    ctx: &Ctx,
    c: &Spanned<BTreeMap<String, Spanned<f64>>>,
    key: &str,
    vars: &[String],
) -> Result<Polynomial, ModelError> {
    if c.get_ref().is_empty() {
        return Err(ctx.err(c.span(), key, "missing coefficients: the table is empty"));
    }
    let mut seen: Vec<(Vec<u8>, &str)> = Vec::new();
    let mut p = Polynomial::default();
    for (term, v) in c.get_ref() {
        let tkey = format!("{key}.\"{term}\"");
        let t = Polynomial::parse_term(term, vars).map_err(|m| ctx.err(v.span(), &tkey, m))?;
        if let Some((_, other)) = seen.iter().find(|(s, _)| *s == t) {
            return Err(ctx.err(
                v.span(),
                &tkey,
                format!("term `{term}` is the same term as `{other}`"),
            ));
        }
        p.push(finite(ctx, v, &tkey)?, &t);
        seen.push((t, term));
    }
    Ok(p)
}

/// A σ given as a number (N-1) or a table of terms (N-2).
fn sigma(ctx: &Ctx, s: &Spanned<toml::Value>, key: &str, vars: &[String]) -> Result<Polynomial, ModelError> {
    match s.get_ref() {
        toml::Value::Float(_) | toml::Value::Integer(_) => {
            let x = match s.get_ref() {
                toml::Value::Float(f) => *f,
                toml::Value::Integer(i) => *i as f64,
                _ => unreachable!("matched above"),
            };
            if !x.is_finite() || x < 0.0 {
                return Err(ctx.err(
                    s.span(),
                    key,
                    format!("negative sigma {x} (a standard deviation must be >= 0)"),
                ));
            }
            Ok(Polynomial::constant(x))
        }
        toml::Value::Table(t) => {
            let mut map = BTreeMap::new();
            for (term, v) in t {
                let x = match v {
                    toml::Value::Float(f) => *f,
                    toml::Value::Integer(i) => *i as f64,
                    _ => {
                        return Err(ctx.err(
                            s.span(),
                            &format!("{key}.\"{term}\""),
                            format!("expected a number, found {}", v.type_str()),
                        ))
                    }
                };
                map.insert(term.clone(), Spanned::new(s.span(), x));
            }
            let p = poly_table(ctx, &Spanned::new(s.span(), map), key, vars)?;
            // A polynomial σ must not be negative at the origin (its intercept).
            let at0 = p.eval(&[0.0; MAX_PARAMS]);
            if at0 < 0.0 {
                return Err(ctx.err(
                    s.span(),
                    key,
                    format!(
                        "negative sigma: the intercept is {at0}, so σ < 0 when every variable is 0 \
                             (a standard deviation must be >= 0)"
                    ),
                ));
            }
            Ok(p)
        }
        other => Err(ctx.err(
            s.span(),
            key,
            format!(
                "sigma must be a number or a table of term = coefficient, found {}",
                other.type_str()
            ),
        )),
    }
}

fn compute_noise(ctx: &Ctx, n: &Spanned<NoiseDoc>, key: &str, vars: &[String]) -> Result<Noise, ModelError> {
    let d = n.get_ref();
    let kind = noise_kind(ctx, n, key)?;
    match kind.as_str() {
        "none" => {
            reject(
                ctx,
                key,
                "kind = \"none\"",
                &[("sigma", d.sigma.as_ref().map(Spanned::span))],
            )?;
            reject_mixture_keys(ctx, d, key, "none")?;
            Ok(Noise::None)
        }
        "normal" | "half_normal" => {
            reject_mixture_keys(ctx, d, key, &kind)?;
            let s = d.sigma.as_ref().ok_or_else(|| {
                ctx.err(
                    n.span(),
                    key,
                    format!("missing key `sigma` for kind = \"{kind}\""),
                )
            })?;
            let p = sigma(ctx, s, &format!("{key}.sigma"), vars)?;
            Ok(if kind == "normal" {
                Noise::Normal(p)
            } else {
                Noise::HalfNormal(p)
            })
        }
        "mixture" => Ok(Noise::Mixture(mixture(ctx, n, key)?)),
        other => Err(ctx.err(
            d.kind.as_ref().map_or(n.span(), Spanned::span),
            &format!("{key}.kind"),
            format!("unknown noise kind `{other}` (expected none, normal, half_normal or mixture)"),
        )),
    }
}

// ---------------------------------------------------------------------------
// Calibrated ranges
// ---------------------------------------------------------------------------

/// `name` as one part of a dotted TOML key (quoted unless bare).
fn key_part(name: &str) -> String {
    if !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        name.to_string()
    } else {
        format!("\"{name}\"")
    }
}

/// A `[min, max]` interval.
fn interval(ctx: &Ctx, v: &Spanned<toml::Value>, key: &str) -> Result<(f64, f64), ModelError> {
    let bad = |what: &str| {
        ctx.err(
            v.span(),
            key,
            format!("{what}: expected [min, max], two finite numbers with min <= max"),
        )
    };
    let toml::Value::Array(a) = v.get_ref() else {
        return Err(bad(&format!("found {}", v.get_ref().type_str())));
    };
    let num = |x: &toml::Value| match x {
        toml::Value::Float(f) if f.is_finite() => Some(*f),
        toml::Value::Integer(i) => Some(*i as f64),
        _ => None,
    };
    match a.as_slice() {
        [lo, hi] => match (num(lo), num(hi)) {
            (Some(lo), Some(hi)) if lo <= hi => Ok((lo, hi)),
            (Some(lo), Some(hi)) => Err(bad(&format!("min {} > max {}", shown(lo), shown(hi)))),
            _ => Err(bad("not two finite numbers")),
        },
        _ => Err(bad(&format!("{} values", a.len()))),
    }
}

/// How a section name after `kernel@` selects a range of a piecewise kernel:
/// `K<128`, `K=128`, `K[128,256)` or `K>=129` (as `smpi-fit` names them).
#[derive(Debug, Clone, Copy, PartialEq)]
enum RangeName {
    Below(f64),
    Exactly(f64),
    Between(f64, f64),
    From(f64),
}

fn range_name(text: &str) -> Option<(&str, RangeName)> {
    let pos = text.find(['<', '>', '=', '['])?;
    let (feature, rest) = text.split_at(pos);
    let num = |s: &str| s.trim().parse::<f64>().ok().filter(|x| x.is_finite());
    let r = if let Some(v) = rest.strip_prefix(">=") {
        RangeName::From(num(v)?)
    } else if let Some(v) = rest.strip_prefix('<') {
        RangeName::Below(num(v)?)
    } else if let Some(v) = rest.strip_prefix('=') {
        RangeName::Exactly(num(v)?)
    } else {
        let (a, b) = rest.strip_prefix('[')?.strip_suffix(')')?.split_once(',')?;
        RangeName::Between(num(a)?, num(b)?)
    };
    Some((feature.trim(), r))
}

/// The segment of `v` that the range name `r` describes: the one whose `from`
/// is the name's lower bound (`K<b`: the first, which must reach `b`). The upper
/// bound of a name may fall short of the next range's `from`: smpi-fit leaves a
/// range with too few calls to its lower neighbour, which then covers it too.
fn segment_named(v: &Variant, r: RangeName) -> Option<usize> {
    (0..v.segments.len()).find(|&i| {
        let (lower, upper) = v.written_bounds(i);
        match r {
            RangeName::Below(b) => i == 0 && upper.is_none_or(|u| b <= u),
            RangeName::Exactly(a) | RangeName::From(a) => lower == a,
            RangeName::Between(a, b) => lower == a && upper.is_none_or(|u| b <= u),
        }
    })
}

/// Attaches the `[about.calibrated]` sections of a file to its kernels. A section
/// names a kernel of the same file, or one range of a piecewise kernel
/// (`"dgemm@K<128"`); `network` (message sizes) is validated but not attached.
fn calibrations(
    ctx: &Ctx,
    sections: &BTreeMap<String, BTreeMap<String, Spanned<toml::Value>>>,
    kernels: &mut [(Kernel, Range<usize>)],
) -> Result<(), ModelError> {
    use crate::calibrated::{CalibratedSection, CalibratedTerm, Calibration, MAX_TERMS};
    use crate::compute::{MAX_DEGREE, ONE};

    // Per kernel index: (section label, its segments, its terms, whether it names a range).
    type Found = (String, Vec<usize>, Vec<CalibratedTerm>, bool);
    let mut found: BTreeMap<usize, Vec<Found>> = BTreeMap::new();
    for (label, terms) in sections {
        let span = ctx.header_span(&["about", "calibrated", label]);
        let key = format!("about.calibrated.{}", key_part(label));
        if label == "network" {
            for (term, v) in terms {
                let tkey = format!("{key}.{}", key_part(term));
                if term != "size" {
                    return Err(ctx.err(
                        v.span(),
                        &tkey,
                        format!("unknown quantity `{term}` of the network's calibrated range (expected size, in bytes)"),
                    ));
                }
                interval(ctx, v, &tkey)?;
            }
            continue;
        }
        let (name, range) = match label.split_once('@') {
            Some((n, r)) => (n, Some(r)),
            None => (label.as_str(), None),
        };
        let Some(ki) = kernels.iter().position(|(k, _)| k.name == name) else {
            return Err(ctx.err(
                span,
                &key,
                format!(
                    "no [compute.{}] in this file: a calibrated range belongs to a kernel of the same file \
                     (or is `network`)",
                    key_part(name)
                ),
            ));
        };
        let kernel = &kernels[ki].0;
        let vars = &kernel.signature.variables;
        let variant = &kernel.variants[0];
        let segments: Vec<usize> = match range {
            None => (0..variant.segments.len()).collect(),
            Some(r) => {
                let Some(on) = &variant.on else {
                    return Err(ctx.err(
                        span,
                        &key,
                        format!(
                            "`{name}` is not piecewise (no [[compute.{name}.range]] entries): name the table \
                             `{name}`"
                        ),
                    ));
                };
                let ranges = || {
                    (0..variant.segments.len())
                        .map(|i| match variant.written_bounds(i) {
                            (lo, Some(hi)) => format!("[{}, {})", shown(lo), shown(hi)),
                            (lo, None) => format!("[{}, ...)", shown(lo)),
                        })
                        .collect::<Vec<_>>()
                        .join(", ")
                };
                let Some((feature, rn)) = range_name(r) else {
                    return Err(ctx.err(
                        span,
                        &key,
                        format!(
                            "cannot read the range `{r}` (expected `kernel@F<b`, `kernel@F=a`, `kernel@F[a,b)` \
                             or `kernel@F>=a`, F the feature compute.{name}.piecewise_on)"
                        ),
                    ));
                };
                let t = Polynomial::parse_term(feature, vars).map_err(|m| ctx.err(span.clone(), &key, m))?;
                let mut f = Polynomial::default();
                f.push(1.0, &t);
                if f != *on {
                    return Err(ctx.err(
                        span,
                        &key,
                        format!(
                            "`{feature}` is not the feature compute.{name}.piecewise_on selects ranges by"
                        ),
                    ));
                }
                match segment_named(variant, rn) {
                    Some(i) => vec![i],
                    None => {
                        return Err(ctx.err(
                            span,
                            &key,
                            format!(
                                "no range of compute.{name} is `{r}` (its ranges, from the first `from`: {})",
                                ranges()
                            ),
                        ))
                    }
                }
            }
        };
        if terms.len() > MAX_TERMS {
            return Err(ctx.err(span, &key, format!("{} terms (at most {MAX_TERMS})", terms.len())));
        }
        let mut out: Vec<(CalibratedTerm, Vec<u8>)> = Vec::new();
        for (term, v) in terms {
            let tkey = format!("{key}.{}", key_part(term));
            let t = Polynomial::parse_term(term, vars).map_err(|m| ctx.err(v.span(), &tkey, m))?;
            if t.is_empty() {
                return Err(ctx.err(
                    v.span(),
                    &tkey,
                    "a calibrated range is for a term with at least one variable, not the intercept",
                ));
            }
            if let Some((other, _)) = out.iter().find(|(_, s)| *s == t) {
                return Err(ctx.err(
                    v.span(),
                    &tkey,
                    format!("term `{term}` is the same term as `{}`", other.name),
                ));
            }
            let (min, max) = interval(ctx, v, &tkey)?;
            let mut slots = [ONE; MAX_DEGREE];
            slots[..t.len()].copy_from_slice(&t);
            out.push((
                CalibratedTerm {
                    name: term.clone(),
                    vars: slots,
                    degree: t.len() as u8,
                    min,
                    max,
                },
                t,
            ));
        }
        let terms = out.into_iter().map(|(t, _)| t).collect();
        found
            .entry(ki)
            .or_default()
            .push((label.clone(), segments, terms, range.is_some()));
    }
    for (ki, list) in found {
        let kernel = &mut kernels[ki].0;
        let mut cal = Calibration {
            by_segment: vec![None; kernel.variants[0].segments.len()],
            sections: Vec::new(),
        };
        let mut slot = 0;
        // Sections in segment order, so the warning lists ranges as the file does.
        let mut list = list;
        list.sort_by_key(|(_, segs, _, _)| segs[0]);
        let plain = list
            .iter()
            .find(|(_, _, _, ranged)| !ranged)
            .map(|(l, ..)| l.clone());
        for (label, segs, terms, ranged) in list {
            let key = format!("about.calibrated.{}", key_part(&label));
            let span = ctx.header_span(&["about", "calibrated", &label]);
            if let (true, Some(p)) = (ranged, &plain) {
                return Err(ctx.err(
                    span,
                    &key,
                    format!("the whole kernel is already calibrated by about.calibrated.{}: give one or the other", key_part(p)),
                ));
            }
            let index = cal.sections.len() as u32;
            for &s in &segs {
                if let Some(prev) = cal.by_segment[s] {
                    return Err(ctx.err(
                        span,
                        &key,
                        format!(
                            "the same range as about.calibrated.{}",
                            key_part(&cal.sections[prev as usize].label)
                        ),
                    ));
                }
                cal.by_segment[s] = Some(index);
            }
            let n: usize = Vec::len(&terms);
            cal.sections.push(CalibratedSection {
                label,
                first_slot: slot,
                terms,
            });
            slot += n;
        }
        kernel.calibration = Some(cal);
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// Include trees
// ---------------------------------------------------------------------------

/// Everything gathered from an include tree, with the file that defined each item.
#[derive(Default)]
pub(crate) struct Merged {
    pub(crate) seed: Option<(u64, String)>,
    pub(crate) config: BTreeMap<String, (String, String)>,
    pub(crate) network: Option<(NetworkModel, String)>,
    pub(crate) kernels: BTreeMap<String, (Kernel, String)>,
    pub(crate) files: Vec<PathBuf>,
}

/// Loads `text` (named `file`), its includes first (depth first, in order), and
/// merges everything into `out`. `stack` holds the canonical paths being loaded.
pub(crate) fn load_tree(
    text: &str,
    file: &str,
    path: Option<&Path>,
    stack: &mut Vec<PathBuf>,
    out: &mut Merged,
) -> Result<(), ModelError> {
    let parts = parse_file(text, file)?;
    let ctx = Ctx { file, text };
    let dir = path
        .and_then(Path::parent)
        .map(Path::to_path_buf)
        .unwrap_or_default();
    for (inc, span) in &parts.includes {
        let p = dir.join(inc);
        let canon = p.canonicalize().unwrap_or_else(|_| p.clone());
        if stack.contains(&canon) {
            let mut chain: Vec<String> = stack.iter().map(|s| s.display().to_string()).collect();
            chain.push(canon.display().to_string());
            return Err(ModelError::IncludeCycle {
                file: file.to_string(),
                chain: chain.join(" -> "),
            });
        }
        let sub = std::fs::read_to_string(&p).map_err(|source| {
            let (line, column) = ctx.line_col(span.start);
            ModelError::Invalid {
                file: file.to_string(),
                line,
                column,
                key: "include".into(),
                message: printable(&format!("cannot read included file {}: {source}", p.display())),
            }
        })?;
        stack.push(canon);
        load_tree(&sub, &p.display().to_string(), Some(&p), stack, out)?;
        stack.pop();
    }
    if let Some(p) = path {
        out.files.push(p.to_path_buf());
    }
    if let Some((seed, span)) = parts.seed {
        if let Some((_, first)) = &out.seed {
            return Err(ctx.dup(span, "seed", first));
        }
        out.seed = Some((seed, file.to_string()));
    }
    for (k, v, span) in parts.config {
        if let Some((_, first)) = out.config.get(&k) {
            return Err(ctx.dup(span, &format!("config.\"{k}\""), first));
        }
        out.config.insert(k, (v, file.to_string()));
    }
    if let Some((net, span)) = parts.network {
        if let Some((_, first)) = &out.network {
            return Err(ctx.dup(span, "network", first));
        }
        out.network = Some((net, file.to_string()));
    }
    for (k, span) in parts.kernels {
        if let Some((_, first)) = out.kernels.get(&k.name) {
            return Err(ctx.dup(span, &format!("compute.{}", k.name), first));
        }
        out.kernels.insert(k.name.clone(), (k, file.to_string()));
    }
    Ok(())
}
