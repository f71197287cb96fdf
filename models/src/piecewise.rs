//! Piecewise-constant lookup by message size with SMPI's chunk rule, and the
//! parser of SMPI's `"B:v;B:v;..."` strings (SimGrid `FactorSet`).
//!
//! # Lookup rule (SMPI code semantics, smpi-digest §2.3)
//!
//! Chunks are sorted by boundary `B0 < B1 < ... < Bn-1`. A chunk `Bi:vi`
//! applies to sizes in the left-open interval **(Bi, Bi+1]**:
//!
//! * `size <= B0` (including size 0 when `B0 = 0`) gets the *default* value
//!   (1.0 for factors, 0 for overheads);
//! * `Bi < size <= Bi+1` gets `vi`;
//! * `size > Bn-1` gets the last value `vn-1`.
//!
//! Equivalently: the value index is *(number of boundaries strictly below
//! `size`) − 1*, or the default when that number is 0. SimGrid's configuration
//! documentation describes half-open `[B, next)` intervals; its code, which we
//! match, uses the rule above.

use crate::error::ModelError;

/// A piecewise-constant function of the message size, with SMPI's chunk rule
/// (see the module docs). `T` is the per-chunk payload: a factor (`f64`), an
/// overhead (`offset`, `per_byte`) or a noise law.
#[derive(Debug, Clone, PartialEq)]
pub struct Piecewise<T> {
    bounds: Vec<f64>,
    values: Vec<T>,
    default: T,
}

impl<T: PartialEq> Piecewise<T> {
    /// A function that is `v` for every size (no boundaries).
    pub fn constant(v: T) -> Self {
        Self {
            bounds: Vec::new(),
            values: Vec::new(),
            default: v,
        }
    }

    /// Builds from `(boundary, value)` chunks in any order (they are sorted).
    /// Boundaries must be finite, `>= 0` and distinct; `default` applies to sizes at
    /// or below the first boundary.
    pub fn from_chunks(default: T, mut chunks: Vec<(f64, T)>) -> Result<Self, ModelError> {
        for (i, (b, _)) in chunks.iter().enumerate() {
            if !b.is_finite() || *b < 0.0 {
                return Err(ModelError::FactorString {
                    chunk: i + 1,
                    text: b.to_string(),
                    message: "boundary must be a finite size >= 0 (bytes)".into(),
                });
            }
        }
        chunks.sort_by(|a, b| a.0.total_cmp(&b.0));
        if let Some(w) = chunks.windows(2).find(|w| w[0].0 == w[1].0) {
            return Err(ModelError::FactorString {
                chunk: 0,
                text: w[0].0.to_string(),
                message: "boundary appears twice (overlapping chunks)".into(),
            });
        }
        // Merge a chunk into the previous one (or the default) when their values are
        // equal: the function is the same, and equal functions compare equal.
        let mut bounds = Vec::with_capacity(chunks.len());
        let mut values: Vec<T> = Vec::with_capacity(chunks.len());
        for (b, v) in chunks {
            if *values.last().unwrap_or(&default) != v {
                bounds.push(b);
                values.push(v);
            }
        }
        Ok(Self {
            bounds,
            values,
            default,
        })
    }

    /// The value for a message of `size` bytes (see the module docs for the rule).
    #[inline]
    pub fn at(&self, size: f64) -> &T {
        // Branch-free count for the usual handful of chunks, binary search beyond.
        let below = if self.bounds.len() <= 16 {
            self.bounds.iter().map(|&b| usize::from(b < size)).sum()
        } else {
            self.bounds.partition_point(|&b| b < size)
        };
        if below == 0 {
            &self.default
        } else {
            &self.values[below - 1]
        }
    }

    /// The value used at or below the first boundary (or everywhere when there
    /// are no chunks).
    pub fn default_value(&self) -> &T {
        &self.default
    }

    /// The chunks, sorted by boundary: `(boundary, value)`.
    pub fn chunks(&self) -> impl Iterator<Item = (f64, &T)> + '_ {
        self.bounds.iter().copied().zip(self.values.iter())
    }

    /// Number of chunks (0 for a constant).
    pub fn len(&self) -> usize {
        self.bounds.len()
    }

    /// True when there are no chunks (a constant).
    pub fn is_empty(&self) -> bool {
        self.bounds.is_empty()
    }

    /// Maps every value (default included).
    pub fn map<U>(&self, mut f: impl FnMut(&T) -> U) -> Piecewise<U> {
        Piecewise {
            bounds: self.bounds.clone(),
            values: self.values.iter().map(&mut f).collect(),
            default: f(&self.default),
        }
    }
}

/// One parsed SMPI chunk: boundary and its values.
pub(crate) type SmpiChunk = (f64, Vec<f64>);

/// Result of parsing an SMPI string.
pub(crate) enum SmpiString {
    /// A single number without `:` or `;`: a constant (the new default).
    Single(f64),
    /// `B:v[:v...];...` chunks, in the order written.
    Chunks(Vec<SmpiChunk>),
}

/// Parses an SMPI factor string like SimGrid's `FactorSet::parse`:
/// `;`-separated chunks (empty chunks are skipped), each `boundary:value[:value...]`;
/// a string with neither `:` nor `;` is a single constant. Boundaries are byte
/// counts (non-negative integers); values are numbers with an optional time unit
/// (`s`, `ms`, `us`, `ns`, `ps`). Every chunk must carry at least `min_values` values.
pub(crate) fn parse_smpi(s: &str, min_values: usize) -> Result<SmpiString, ModelError> {
    let s = s.trim();
    if !s.contains([':', ';']) {
        let v = parse_number(s).ok_or_else(|| ModelError::FactorString {
            chunk: 0,
            text: s.to_string(),
            message: "expected a number or `boundary:value;...` chunks".into(),
        })?;
        return Ok(SmpiString::Single(v));
    }
    let mut out = Vec::new();
    for (i, chunk) in s.split(';').map(str::trim).filter(|c| !c.is_empty()).enumerate() {
        let err = |message: String| ModelError::FactorString {
            chunk: i + 1,
            text: chunk.to_string(),
            message,
        };
        let mut parts = chunk.split(':').map(str::trim);
        let b = parts.next().unwrap_or("");
        let bound: f64 = b
            .parse::<u64>()
            .map_err(|_| err(format!("boundary `{b}` is not a non-negative integer byte count")))?
            as f64;
        let mut values = Vec::new();
        for (j, p) in parts.enumerate() {
            let v = parse_number(p).ok_or_else(|| err(format!("value {} `{p}` is not a number", j + 1)))?;
            values.push(v);
        }
        if values.len() < min_values {
            return Err(err(format!(
                "expected {} value{} after the boundary, found {}",
                min_values,
                if min_values == 1 { "" } else { "s" },
                values.len()
            )));
        }
        out.push((bound, values));
    }
    if out.is_empty() {
        return Err(ModelError::FactorString {
            chunk: 0,
            text: s.to_string(),
            message: "no chunk".into(),
        });
    }
    Ok(SmpiString::Chunks(out))
}

/// Parses a finite float with an optional time unit suffix (`s`, `ms`, `us`, `ns`, `ps`).
pub(crate) fn parse_number(s: &str) -> Option<f64> {
    let s = s.trim();
    const UNITS: [(&str, f64); 5] = [
        ("ms", 1e-3),
        ("us", 1e-6),
        ("ns", 1e-9),
        ("ps", 1e-12),
        ("s", 1.0),
    ];
    let (num, scale) = UNITS
        .iter()
        .find_map(|(u, f)| s.strip_suffix(u).map(|n| (n.trim_end(), *f)))
        .unwrap_or((s, 1.0));
    let v: f64 = num.parse().ok()?;
    let v = v * scale;
    v.is_finite().then_some(v)
}

/// `x` for a message: as Rust writes it, except very large or very small magnitudes in
/// scientific notation (`1e308`, not three hundred digits).
pub(crate) fn shown(x: f64) -> String {
    if x != 0.0 && x.is_finite() && !(1e-6..1e15).contains(&x.abs()) {
        format!("{x:e}")
    } else {
        format!("{x}")
    }
}
