//! Physical quantities written the way SimGrid writes them: `"10Gbps"`, `"1us"`, `"1Gf"`, `"4MiB"`.
//!
//! Every parser returns SI base units: bytes per second, seconds, flop per second, bytes.
//! A plain number (no unit) is taken in the base unit, like SimGrid does (it only warns).
//!
//! | quantity | function | units (factor to the base unit) |
//! |---|---|---|
//! | bandwidth | [`parse_bandwidth`] | `Bps`; `kBps`/`KBps` 1e3, `MBps`, `GBps`, `TBps`, `PBps`, `EBps`; `KiBps` 1024, `MiBps`, `GiBps`, `TiBps`, `PiBps`, `EiBps`; the same with `bps` (bits: ÷8) |
//! | time | [`parse_time`] | `ps` `ns` `us` `ms` `s` `m` (60) `h` (3600) `d` (86400) `w` (604800) |
//! | speed | [`parse_speed`] | `f`, `kf`, `Mf`, `Gf`, `Tf`, `Pf`, `Ef`, `Zf`, `Yf` (powers of 1000) |
//! | size | [`parse_size`] | `B`; `kB`/`KB`, `MB`, `GB`, `TB`, `PB`, `EB`; `KiB`, `MiB`, `GiB`, `TiB`, `PiB`, `EiB`; the same with `b` (bits: ÷8) |
//!
//! Units are case-sensitive (`Mbps` is not `MBps`), except that the kilo prefix may be `k` or `K`.

use std::fmt;

/// Which quantity a value was supposed to be (used in error messages).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Quantity {
    /// Bytes per second.
    Bandwidth,
    /// Seconds.
    Time,
    /// Flop per second.
    Speed,
    /// Bytes.
    Size,
}

impl Quantity {
    fn name(self) -> &'static str {
        match self {
            Quantity::Bandwidth => "bandwidth",
            Quantity::Time => "time",
            Quantity::Speed => "speed",
            Quantity::Size => "size",
        }
    }

    fn examples(self) -> &'static str {
        match self {
            Quantity::Bandwidth => {
                "Bps, kBps, MBps, GBps, KiBps, MiBps, GiBps, bps, kbps, Mbps, Gbps, Mibps, Gibps"
            }
            Quantity::Time => "ps, ns, us, ms, s, m, h, d, w",
            Quantity::Speed => "f, kf, Mf, Gf, Tf, Pf, Ef, Zf, Yf",
            Quantity::Size => "B, kB, MB, GB, KiB, MiB, GiB, b, kb, Mb, Kib, Mib",
        }
    }
}

/// A value that could not be parsed as a quantity.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum UnitError {
    /// The value does not start with a number (or is empty).
    #[error("`{value}` is not a {} (expected a number followed by a unit such as {})", .quantity.name(), .quantity.examples())]
    NotANumber {
        /// The text as written.
        value: String,
        /// What it was supposed to be.
        quantity: Quantity,
    },
    /// The number is followed by a unit this quantity does not know.
    #[error("unknown {} unit `{unit}` in `{value}` (expected one of {})", .quantity.name(), .quantity.examples())]
    UnknownUnit {
        /// The text as written.
        value: String,
        /// The offending suffix.
        unit: String,
        /// What it was supposed to be.
        quantity: Quantity,
    },
}

/// Decimal prefixes (`k`/`K` both mean 1e3) and binary prefixes.
const DECIMAL: [(&str, f64); 10] = [
    ("", 1.0),
    ("k", 1e3),
    ("K", 1e3),
    ("M", 1e6),
    ("G", 1e9),
    ("T", 1e12),
    ("P", 1e15),
    ("E", 1e18),
    ("Z", 1e21),
    ("Y", 1e24),
];
const BINARY: [(&str, f64); 6] = [
    ("Ki", 1024.0),
    ("Mi", 1048576.0),
    ("Gi", 1073741824.0),
    ("Ti", 1099511627776.0),
    ("Pi", 1125899906842624.0),
    ("Ei", 1152921504606846976.0),
];

/// Splits `text` into its leading decimal number (C `strtod` syntax, no hex/inf/nan) and the rest.
fn split_number(text: &str) -> Option<(f64, &str)> {
    let b = text.as_bytes();
    let mut i = 0;
    if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
        i += 1;
    }
    let int_start = i;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    let mut digits = i - int_start;
    if i < b.len() && b[i] == b'.' {
        i += 1;
        let frac_start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        digits += i - frac_start;
    }
    if digits == 0 {
        return None;
    }
    // An exponent only counts when digits follow it ("1E" could be a prefix).
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        let mut j = i + 1;
        if j < b.len() && (b[j] == b'+' || b[j] == b'-') {
            j += 1;
        }
        if j < b.len() && b[j].is_ascii_digit() {
            while j < b.len() && b[j].is_ascii_digit() {
                j += 1;
            }
            i = j;
        }
    }
    let number = text[..i].parse::<f64>().ok()?;
    Some((number, &text[i..]))
}

fn parse_with(
    text: &str,
    quantity: Quantity,
    unit_factor: impl Fn(&str) -> Option<f64>,
) -> Result<f64, UnitError> {
    let trimmed = text.trim();
    let Some((number, unit)) = split_number(trimmed) else {
        return Err(UnitError::NotANumber {
            value: text.to_string(),
            quantity,
        });
    };
    let unit = unit.trim_start();
    if unit.is_empty() {
        return Ok(number);
    }
    match unit_factor(unit) {
        Some(factor) => Ok(number * factor),
        None => Err(UnitError::UnknownUnit {
            value: text.to_string(),
            unit: unit.to_string(),
            quantity,
        }),
    }
}

/// Factor of `unit` = prefix + `base`, where `base` is worth `base_factor`.
fn prefixed(unit: &str, base: &str, base_factor: f64) -> Option<f64> {
    let prefix = unit.strip_suffix(base)?;
    DECIMAL
        .iter()
        .chain(BINARY.iter())
        .find(|(p, _)| *p == prefix)
        .map(|(_, f)| f * base_factor)
}

/// Parses a bandwidth such as `"10Gbps"` or `"1.25GBps"` into bytes per second.
///
/// ```
/// use simcore::platform::units::parse_bandwidth;
/// assert_eq!(parse_bandwidth("10Gbps").unwrap(), 1.25e9);
/// assert_eq!(parse_bandwidth("1KiBps").unwrap(), 1024.0);
/// ```
pub fn parse_bandwidth(text: &str) -> Result<f64, UnitError> {
    parse_with(text, Quantity::Bandwidth, |u| {
        prefixed(u, "Bps", 1.0).or_else(|| prefixed(u, "bps", 0.125))
    })
}

/// Parses a duration such as `"1us"` or `"2h"` into seconds.
///
/// ```
/// use simcore::platform::units::parse_time;
/// assert_eq!(parse_time("1us").unwrap(), 1e-6);
/// ```
pub fn parse_time(text: &str) -> Result<f64, UnitError> {
    parse_with(text, Quantity::Time, |u| match u {
        "ps" => Some(1e-12),
        "ns" => Some(1e-9),
        "us" => Some(1e-6),
        "ms" => Some(1e-3),
        "s" => Some(1.0),
        "m" => Some(60.0),
        "h" => Some(3600.0),
        "d" => Some(86400.0),
        "w" => Some(604800.0),
        _ => None,
    })
}

/// Parses a computing speed such as `"1Gf"` into flop per second.
///
/// ```
/// use simcore::platform::units::parse_speed;
/// assert_eq!(parse_speed("1Gf").unwrap(), 1e9);
/// ```
pub fn parse_speed(text: &str) -> Result<f64, UnitError> {
    parse_with(text, Quantity::Speed, |u| {
        let prefix = u.strip_suffix('f')?;
        DECIMAL.iter().find(|(p, _)| *p == prefix).map(|(_, f)| *f)
    })
}

/// Parses a size such as `"4MiB"` or `"1kB"` into bytes.
///
/// ```
/// use simcore::platform::units::parse_size;
/// assert_eq!(parse_size("4MiB").unwrap(), 4194304.0);
/// ```
pub fn parse_size(text: &str) -> Result<f64, UnitError> {
    parse_with(text, Quantity::Size, |u| {
        prefixed(u, "B", 1.0).or_else(|| prefixed(u, "b", 0.125))
    })
}

impl fmt::Display for Quantity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_units() {
        assert_eq!(parse_bandwidth("10GBps").unwrap(), 10e9);
        assert_eq!(parse_bandwidth("10Gbps").unwrap(), 1.25e9);
        assert_eq!(parse_bandwidth("1kbps").unwrap(), 125.0);
        assert_eq!(parse_bandwidth("1Kbps").unwrap(), 125.0);
        assert_eq!(parse_bandwidth("1Kibps").unwrap(), 128.0);
        assert_eq!(parse_bandwidth("1e9").unwrap(), 1e9);
        assert_eq!(parse_bandwidth("1.5e3Bps").unwrap(), 1500.0);
        assert_eq!(parse_time("1.5ms").unwrap(), 1.5e-3);
        assert_eq!(parse_time("2m").unwrap(), 120.0);
        assert_eq!(parse_time(".5s").unwrap(), 0.5);
        assert_eq!(parse_speed("1Ef").unwrap(), 1e18);
        assert_eq!(parse_size("1b").unwrap(), 0.125);
        assert!(
            matches!(parse_bandwidth("10Gbs"), Err(UnitError::UnknownUnit { ref unit, .. }) if unit == "Gbs")
        );
        assert!(matches!(parse_time("abc"), Err(UnitError::NotANumber { .. })));
        assert!(matches!(parse_speed(""), Err(UnitError::NotANumber { .. })));
        assert!(matches!(parse_speed("1Kif"), Err(UnitError::UnknownUnit { .. })));
    }
}
