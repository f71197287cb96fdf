//! Network model M′ (piecewise by message size): SMPI's latency and bandwidth
//! factors, the software overheads `os` / `or` / `ois`, and optional per-range
//! temporal noise N′ (a Gaussian mixture).
//!
//! Every quantity is a [`Piecewise`] function of the message size in bytes with
//! SMPI's chunk rule (chunk `B:v` applies to sizes in `(B, next B]`, see
//! [`crate::piecewise`]). Each quantity has its own breakpoints, as in SMPI.
//!
//! How the simulator uses them (smpi-digest §2.2, §3.3): for a message of `S`
//! bytes (SMPI adds a 16-byte envelope before the lookup), the latency phase lasts
//! `lat_factor(S)·Σ link latencies`, the bandwidth phase runs at
//! `bw_factor(S)·(max-min share)`, the sender sleeps `os(S)` (or `ois(S)` for
//! `MPI_Isend`) and the receiver `or(S)`, where an overhead is
//! `offset + per_byte·S` of its chunk. The noise, when present, is an extra delay
//! in seconds drawn per message; the caller adds it to the communication and
//! clamps the total at 0.

use std::fmt;

use crate::error::ModelError;
use crate::noise::{Mixture, NoiseRng};
use crate::piecewise::{parse_smpi, Piecewise, SmpiString};

/// SMPI's default `smpi/bw-factor` (Stampede fit, SimGrid `network_cm02.cpp`).
pub const SMPI_DEFAULT_BW_FACTOR: &str = "65472:0.940694;15424:0.697866;9376:0.58729;5776:1.08739;\
3484:0.77493;1426:0.608902;732:0.341987;257:0.338112;0:0.812084";

/// SMPI's default `smpi/lat-factor` (Stampede fit, SimGrid `network_cm02.cpp`).
pub const SMPI_DEFAULT_LAT_FACTOR: &str = "65472:11.6436;15424:3.48845;9376:2.59299;5776:2.18796;\
3484:1.88101;1426:1.61075;732:1.9503;257:1.95341;0:2.01467";

/// SMPI's default `smpi/os`, `smpi/or` and `smpi/ois`: zero overhead.
pub const SMPI_DEFAULT_OVERHEAD: &str = "0:0:0:0:0";

/// A dimensionless multiplier by message size (latency or bandwidth factor).
/// Default (sizes at or below the first boundary) is 1.0.
#[derive(Debug, Clone, PartialEq)]
pub struct PiecewiseFactor(Piecewise<f64>);

impl PiecewiseFactor {
    /// The same factor `v` for every size.
    pub fn constant(v: f64) -> Self {
        Self(Piecewise::constant(v))
    }

    /// Builds from `(boundary in bytes, factor)` chunks in any order; sizes at or
    /// below the first boundary get 1.0.
    pub fn from_chunks(chunks: Vec<(f64, f64)>) -> Result<Self, ModelError> {
        Ok(Self(Piecewise::from_chunks(1.0, chunks)?))
    }

    /// Parses SMPI's `smpi/lat-factor` / `smpi/bw-factor` syntax:
    /// `"65472:0.940694;15424:0.697866;..."` (any order) or a single number
    /// (constant for every size, size 0 included). Extra values after the first
    /// in a chunk are ignored, as in SimGrid.
    pub fn parse_smpi(s: &str) -> Result<Self, ModelError> {
        match parse_smpi(s, 1)? {
            SmpiString::Single(v) => Ok(Self::constant(v)),
            SmpiString::Chunks(c) => Self::from_chunks(c.into_iter().map(|(b, v)| (b, v[0])).collect()),
        }
    }

    /// The first value (the default, then the chunks in size order) a latency factor
    /// (`positive` false: not negative) or a bandwidth factor (`positive` true: above 0) cannot
    /// take, if any. Parsing only checks that values are finite numbers.
    pub fn invalid_value(&self, positive: bool) -> Option<f64> {
        std::iter::once(*self.0.default_value())
            .chain(self.0.chunks().map(|(_, v)| *v))
            .find(|&v| !(v > 0.0 || (v == 0.0 && !positive)))
    }

    /// The factor for a message of `size` bytes.
    #[inline]
    pub fn value(&self, size: f64) -> f64 {
        *self.0.at(size)
    }

    /// The underlying piecewise function.
    pub fn piecewise(&self) -> &Piecewise<f64> {
        &self.0
    }
}

/// A software overhead by message size, `offset + per_byte·size` seconds, with
/// `(offset, per_byte)` chosen by chunk. Default (sizes at or below the first
/// boundary) is 0.
#[derive(Debug, Clone, PartialEq)]
pub struct Overhead(Piecewise<(f64, f64)>);

impl Overhead {
    /// No overhead.
    pub fn zero() -> Self {
        Self(Piecewise::constant((0.0, 0.0)))
    }

    /// Builds from `(boundary in bytes, (offset s, per_byte s/B))` chunks in any order.
    pub fn from_chunks(chunks: Vec<(f64, (f64, f64))>) -> Result<Self, ModelError> {
        Ok(Self(Piecewise::from_chunks((0.0, 0.0), chunks)?))
    }

    /// Parses SMPI's `smpi/os` / `smpi/or` / `smpi/ois` syntax
    /// `"B:offset:per_byte;..."` (any order). A chunk needs at least the offset;
    /// a missing per-byte term is 0 and values beyond the second are ignored, as in
    /// SimGrid (its default is `"0:0:0:0:0"`). A single number is a constant offset.
    pub fn parse_smpi(s: &str) -> Result<Self, ModelError> {
        match parse_smpi(s, 1)? {
            SmpiString::Single(v) => Ok(Self(Piecewise::constant((v, 0.0)))),
            SmpiString::Chunks(c) => Self::from_chunks(
                c.into_iter()
                    .map(|(b, v)| (b, (v[0], v.get(1).copied().unwrap_or(0.0))))
                    .collect(),
            ),
        }
    }

    /// The first `(offset, per_byte)` (the default, then the chunks in size order) out of the
    /// range that keeps every cost finite, if any: an offset beyond ±1e9 s or a per-byte cost
    /// beyond ±1 s/B (slower than 1 B/s). Parsing only checks that values are finite numbers.
    pub fn invalid_value(&self) -> Option<(f64, f64)> {
        std::iter::once(*self.0.default_value())
            .chain(self.0.chunks().map(|(_, v)| *v))
            .find(|(offset, per_byte)| !(offset.abs() <= 1e9 && per_byte.abs() <= 1.0))
    }

    /// The overhead in seconds for a message of `size` bytes. Unlike the network
    /// factors, a size at or below the first boundary takes the *first* chunk's
    /// offset and slope, not a default of 0 (SMPI's `Host::osend/orecv/oisend` start
    /// from the first chunk; measured against SMPI 3.32: with `0:1e-6:1e-9`, an empty
    /// message costs 1e-6 s).
    #[inline]
    pub fn cost(&self, size: f64) -> f64 {
        let (offset, per_byte) = match self.0.chunks().next() {
            Some((first, v)) if size <= first => *v,
            _ => *self.0.at(size),
        };
        offset + per_byte * size
    }

    /// The underlying piecewise function of `(offset, per_byte)`.
    pub fn piecewise(&self) -> &Piecewise<(f64, f64)> {
        &self.0
    }
}

/// Formats in SMPI syntax (`"B:v;B:v"` ascending, or a single number for a
/// constant), so `PiecewiseFactor::parse_smpi(&f.to_string()) == f`.
impl fmt::Display for PiecewiseFactor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return write!(f, "{}", self.0.default_value());
        }
        for (i, (b, v)) in self.0.chunks().enumerate() {
            write!(f, "{}{b}:{v}", if i == 0 { "" } else { ";" })?;
        }
        Ok(())
    }
}

/// Formats in SMPI syntax (`"B:offset:per_byte;..."` ascending, or a single number
/// for a constant offset), so `Overhead::parse_smpi(&o.to_string()) == o`.
impl fmt::Display for Overhead {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return write!(f, "{}", self.0.default_value().0);
        }
        for (i, (b, (o, p))) in self.0.chunks().enumerate() {
            write!(f, "{}{b}:{o}:{p}", if i == 0 { "" } else { ";" })?;
        }
        Ok(())
    }
}

/// Per-range temporal noise (N′-1): for each size range, either no noise or a
/// Gaussian mixture whose draw (seconds) is added to the communication time.
#[derive(Debug, Clone, PartialEq)]
pub struct NetworkNoise(Piecewise<Option<Mixture>>);

impl NetworkNoise {
    /// No noise for any size.
    pub fn none() -> Self {
        Self(Piecewise::constant(None))
    }

    /// Builds from `(boundary, noise)` chunks (same chunk rule as the factors;
    /// sizes at or below the first boundary get no noise).
    pub fn from_chunks(chunks: Vec<(f64, Option<Mixture>)>) -> Result<Self, ModelError> {
        Ok(Self(Piecewise::from_chunks(None, chunks)?))
    }

    /// Like [`from_chunks`](Self::from_chunks) with `default` for sizes at or
    /// below the first boundary (or for every size when there is no chunk).
    pub fn from_chunks_with_default(
        default: Option<Mixture>,
        chunks: Vec<(f64, Option<Mixture>)>,
    ) -> Result<Self, ModelError> {
        Ok(Self(Piecewise::from_chunks(default, chunks)?))
    }

    /// True when no range has noise.
    pub fn is_none(&self) -> bool {
        self.0.default_value().is_none() && self.0.chunks().all(|(_, m)| m.is_none())
    }

    /// The mixture that applies to `size` bytes, if any.
    pub fn law(&self, size: f64) -> Option<&Mixture> {
        self.0.at(size).as_ref()
    }

    /// One draw (seconds, may be negative) for a message of `size` bytes; 0.0
    /// without consuming randomness when its range has no noise.
    #[inline]
    pub fn sample(&self, size: f64, rng: &mut NoiseRng) -> f64 {
        match self.0.at(size) {
            Some(m) => m.sample(rng),
            None => 0.0,
        }
    }
}

/// The network model: factors, overheads and optional noise, all by message size.
#[derive(Debug, Clone, PartialEq)]
pub struct NetworkModel {
    /// Multiplier of the route's summed latency (SMPI `smpi/lat-factor`).
    pub lat_factor: PiecewiseFactor,
    /// Multiplier of the flow's bandwidth share (SMPI `smpi/bw-factor`).
    pub bw_factor: PiecewiseFactor,
    /// Sender overhead of blocking/detached sends (SMPI `smpi/os`).
    pub os: Overhead,
    /// Receiver overhead (SMPI `smpi/or`).
    pub or: Overhead,
    /// Sender overhead of `MPI_Isend` (SMPI `smpi/ois`).
    pub ois: Overhead,
    /// Per-range temporal noise (none by default).
    pub noise: NetworkNoise,
}

impl NetworkModel {
    /// SMPI with no calibration: [`SMPI_DEFAULT_LAT_FACTOR`],
    /// [`SMPI_DEFAULT_BW_FACTOR`], [`SMPI_DEFAULT_OVERHEAD`] (zero) overheads, no noise.
    pub fn smpi_default() -> Self {
        let zero =
            Overhead::parse_smpi(SMPI_DEFAULT_OVERHEAD).expect("the built-in overhead string is valid");
        Self {
            os: zero.clone(),
            or: zero.clone(),
            ois: zero,
            lat_factor: PiecewiseFactor::parse_smpi(SMPI_DEFAULT_LAT_FACTOR)
                .expect("the built-in SMPI latency-factor string is valid"),
            bw_factor: PiecewiseFactor::parse_smpi(SMPI_DEFAULT_BW_FACTOR)
                .expect("the built-in SMPI bandwidth-factor string is valid"),
            ..Self::cm02()
        }
    }

    /// CM02: factors 1.0, zero overheads, no noise.
    pub fn cm02() -> Self {
        Self {
            lat_factor: PiecewiseFactor::constant(1.0),
            bw_factor: PiecewiseFactor::constant(1.0),
            os: Overhead::zero(),
            or: Overhead::zero(),
            ois: Overhead::zero(),
            noise: NetworkNoise::none(),
        }
    }
}

impl Default for NetworkModel {
    /// Same as [`NetworkModel::cm02`].
    fn default() -> Self {
        Self::cm02()
    }
}

#[cfg(test)]
mod tests;
