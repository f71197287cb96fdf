//! HPL as a validation workload: its configurations (P, Q, N, NB), how they
//! are given (command line `PxQ:N1,N2[:NB]` or a TOML file), HPL's own flop
//! count and Gflops formula, and the parsing of its result line.

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

use anyhow::{bail, Context as _};

/// One HPL configuration: a P×Q process grid, order N, block size NB.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
pub struct HplConfig {
    /// Process rows.
    pub p: u32,
    /// Process columns.
    pub q: u32,
    /// Matrix order.
    pub n: u64,
    /// Block size.
    pub nb: u32,
}

impl HplConfig {
    /// Ranks the run needs (P·Q).
    pub fn ranks(&self) -> u32 {
        self.p * self.q
    }

    /// The grid as `PxQ`.
    pub fn grid(&self) -> String {
        format!("{}x{}", self.p, self.q)
    }

    /// A short label, `1x2 N=4000 NB=128`.
    pub fn label(&self) -> String {
        format!("{} N={} NB={}", self.grid(), self.n, self.nb)
    }

    /// A relative cost (∝ the flop count per rank), for progress estimates.
    pub fn cost(&self) -> f64 {
        hpl_flops(self.n) / f64::from(self.ranks().max(1))
    }
}

impl fmt::Display for HplConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.label())
    }
}

/// HPL's flop count for order N, as `HPL_pdtest.c` computes its Gflops:
/// 2/3·N³ − 1/2·N² for the LU factorisation plus 2·N² for the solve, i.e.
/// N²·(2/3·N + 3/2). (The thesis writes 2/3·N³ + 2·N²; methodology digest §4.)
pub fn hpl_flops(n: u64) -> f64 {
    let n = n as f64;
    n * n * (2.0 / 3.0 * n + 1.5)
}

/// Gflop/s of a run of order N that took `seconds`, with HPL's formula and in
/// HPL's order of operations: `((N/1e9)·(N/t))·(2/3·N + 3/2)`.
pub fn hpl_gflops(n: u64, seconds: f64) -> f64 {
    let nf = n as f64;
    ((nf / 1.0e9) * (nf / seconds)) * ((2.0 / 3.0) * nf + 1.5)
}

/// The time a run of order N must have taken to be reported at `gflops`.
pub fn hpl_seconds(n: u64, gflops: f64) -> f64 {
    hpl_flops(n) / (gflops * 1e9)
}

/// One result line of HPL's output (`WR11C2R4  4000  128  1  2  1.23  3.47e+01`).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct HplResult {
    /// The variant code (`WR11C2R4`).
    pub variant: String,
    /// N.
    pub n: u64,
    /// NB.
    pub nb: u32,
    /// P.
    pub p: u32,
    /// Q.
    pub q: u32,
    /// The time as printed (two decimals).
    pub printed_time: f64,
    /// The Gflop/s as printed (four significant digits).
    pub printed_gflops: f64,
    /// The run's time recovered from the printed Gflops (four significant
    /// digits, where the printed time has only two decimals).
    pub seconds: f64,
    /// HPL's residual check, when it ran: `Some(true)` for PASSED.
    pub passed: Option<bool>,
    /// Phases of an HPL built with `-DHPL_DETAILED_TIMING` (`rfact`, `pfact`,
    /// `mxswp`, `update`, `laswp`, `up tr sv`): the largest over the
    /// processes of each phase's aggregated wall time (s, two decimals).
    pub phases: BTreeMap<String, f64>,
}

/// Parses HPL's result lines (one per configuration the HPL.dat asked for).
pub fn parse_output(stdout: &str) -> Vec<HplResult> {
    let mut out: Vec<HplResult> = Vec::new();
    for line in stdout.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() == 7 && (f[0].starts_with("WR") || f[0].starts_with("WC")) {
            let parsed = (|| {
                let n: u64 = f[1].parse().ok()?;
                let printed_gflops: f64 = f[6].parse().ok()?;
                Some(HplResult {
                    variant: f[0].to_string(),
                    n,
                    nb: f[2].parse().ok()?,
                    p: f[3].parse().ok()?,
                    q: f[4].parse().ok()?,
                    printed_time: f[5].parse().ok()?,
                    printed_gflops,
                    seconds: hpl_seconds(n, printed_gflops),
                    passed: None,
                    phases: BTreeMap::new(),
                })
            })();
            if let Some(r) = parsed {
                out.push(r);
            }
        } else if let Some(rest) = line.split("Max aggregated wall time ").nth(1) {
            // `+ Max aggregated wall time pfact . . : 0.02`
            if let (Some(last), Some((name, value))) = (out.last_mut(), rest.split_once(':')) {
                let name = name.trim_end_matches([' ', '.']).trim().to_string();
                if let Ok(v) = value.trim().parse::<f64>() {
                    last.phases.insert(name, v);
                }
            }
        } else if line.contains("||Ax-b||") || line.contains("||A||") {
            // The residual checks follow the result line they belong to.
            if let Some(last) = out.last_mut() {
                let ok = line.contains("PASSED");
                let failed = line.contains("FAILED");
                if ok || failed {
                    last.passed = Some(last.passed.unwrap_or(true) && ok);
                }
            }
        }
    }
    out
}

/// Parses `PxQ:N1,N2,...[:NB]` (NB defaults to `default_nb`).
pub fn parse_spec(spec: &str, default_nb: u32) -> anyhow::Result<Vec<HplConfig>> {
    let parts: Vec<&str> = spec.split(':').collect();
    if parts.len() < 2 || parts.len() > 3 {
        bail!("--hpl '{spec}': expected PxQ:N1,N2,...[:NB], e.g. 1x2:2000,4000");
    }
    let (p, q) = parse_grid(parts[0]).with_context(|| format!("--hpl '{spec}'"))?;
    let nb = match parts.get(2) {
        Some(s) => s
            .trim()
            .parse::<u32>()
            .ok()
            .filter(|v| *v > 0)
            .with_context(|| format!("--hpl '{spec}': NB '{s}' is not a positive integer"))?,
        None => default_nb,
    };
    let mut v = Vec::new();
    for n in parts[1].split(',') {
        let n: u64 = n
            .trim()
            .parse()
            .ok()
            .filter(|v| *v > 0)
            .with_context(|| format!("--hpl '{spec}': N '{n}' is not a positive integer"))?;
        v.push(HplConfig { p, q, n, nb });
    }
    Ok(v)
}

/// Parses `PxQ`.
pub fn parse_grid(s: &str) -> anyhow::Result<(u32, u32)> {
    let (p, q) = s
        .split_once(['x', 'X'])
        .with_context(|| format!("grid '{s}' is not PxQ"))?;
    let p: u32 = p
        .trim()
        .parse()
        .ok()
        .filter(|v| *v > 0)
        .context("P is not a positive integer")?;
    let q: u32 = q
        .trim()
        .parse()
        .ok()
        .filter(|v| *v > 0)
        .context("Q is not a positive integer")?;
    Ok((p, q))
}

/// A configuration file (TOML):
///
/// ```toml
/// nb = 128          # default block size
/// runs = 5          # real runs per configuration (the command line wins)
/// [[hpl]]
/// grid = "1x2"
/// n = [2000, 4000]
/// nb = 128          # optional
/// ```
#[derive(Debug, Clone, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    /// Default NB.
    pub nb: Option<u32>,
    /// Real runs per configuration.
    pub runs: Option<usize>,
    /// Simulation replicas per configuration.
    pub replicas: Option<usize>,
    /// The HPL configurations.
    #[serde(default)]
    pub hpl: Vec<ConfigEntry>,
}

/// One `[[hpl]]` entry of a [`ConfigFile`].
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigEntry {
    /// `PxQ`.
    pub grid: String,
    /// Orders.
    pub n: Vec<u64>,
    /// Block size (default: the file's `nb`, else the command line's).
    pub nb: Option<u32>,
}

impl ConfigFile {
    /// Reads and checks a configuration file.
    pub fn read(path: &Path) -> anyhow::Result<Self> {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("{}: cannot read it", path.display()))?;
        let f: ConfigFile = toml::from_str(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        Ok(f)
    }

    /// The configurations it lists.
    pub fn configs(&self, default_nb: u32) -> anyhow::Result<Vec<HplConfig>> {
        let mut v = Vec::new();
        for e in &self.hpl {
            let (p, q) = parse_grid(&e.grid)?;
            let nb = e.nb.or(self.nb).unwrap_or(default_nb);
            if nb == 0 {
                bail!("grid {}: NB must be positive", e.grid);
            }
            for &n in &e.n {
                if n == 0 {
                    bail!("grid {}: N must be positive", e.grid);
                }
                v.push(HplConfig { p, q, n, nb });
            }
        }
        Ok(v)
    }
}

/// Sorted and without duplicates (the order of the report's tables).
pub fn normalize(mut v: Vec<HplConfig>) -> Vec<HplConfig> {
    v.sort_by_key(|c| (c.n, c.nb, c.p, c.q));
    v.dedup();
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gflops_is_hpls_formula() {
        // HPL_pdtest.c: ((N/1e9)·(N/t))·(2/3·N + 3/2); for N = 1000, t = 1 s:
        // 1e-3·1000·(666.67 + 1.5) = 0.66816... Gflop/s.
        let g = hpl_gflops(1000, 1.0);
        assert!((g - 0.668_166_666_666_666_7).abs() < 1e-12, "{g}");
        assert!((hpl_seconds(1000, g) - 1.0).abs() < 1e-12);
        assert!((hpl_flops(1000) - 6.681_666_666_666_667e8).abs() < 1.0);
    }

    #[test]
    fn result_lines_are_parsed() {
        let out = "\
T/V                N    NB     P     Q               Time                 Gflops
--------------------------------------------------------------------------------
WR11C2R4        4000   128     1     2               1.23              3.470e+01
--------------------------------------------------------------------------------
||Ax-b||_oo/(eps*(||A||_oo*||x||_oo+||b||_oo)*N)=        0.0034 ...... PASSED
";
        let r = parse_output(out);
        assert_eq!(r.len(), 1);
        assert_eq!((r[0].n, r[0].nb, r[0].p, r[0].q), (4000, 128, 1, 2));
        assert_eq!(r[0].passed, Some(true));
        assert!((r[0].seconds - hpl_flops(4000) / 34.70e9).abs() < 1e-12);
        assert!((r[0].seconds - r[0].printed_time).abs() < 0.01);
        let timed = "WR11R2C4        8000   128     1     2               4.02              8.486e+01\n\
Max aggregated wall time rfact . . . :               0.08\n\
+ Max aggregated wall time pfact . . :               0.02\n\
Max aggregated wall time up tr sv  . :               0.01\n";
        let r = parse_output(timed);
        assert_eq!(r[0].phases.get("rfact"), Some(&0.08));
        assert_eq!(r[0].phases.get("pfact"), Some(&0.02));
        assert_eq!(r[0].phases.get("up tr sv"), Some(&0.01));
    }

    #[test]
    fn specs_and_files() {
        let v = parse_spec("1x2:2000,4000", 128).unwrap();
        assert_eq!(v.len(), 2);
        assert_eq!(
            v[1],
            HplConfig {
                p: 1,
                q: 2,
                n: 4000,
                nb: 128
            }
        );
        assert_eq!(parse_spec("2X1:500:64", 128).unwrap()[0].nb, 64);
        for bad in ["1x2", "1x:100", "0x2:100", "1x2:1e3", "1x2:100:0", "1x2:10:20:30"] {
            assert!(parse_spec(bad, 128).is_err(), "{bad}");
        }
        let f: ConfigFile = toml::from_str("nb = 64\nruns = 6\n[[hpl]]\ngrid = \"1x2\"\nn = [100, 200]\n[[hpl]]\ngrid = \"2x1\"\nn = [100]\nnb = 32\n").unwrap();
        let c = f.configs(128).unwrap();
        assert_eq!(c.len(), 3);
        assert_eq!((c[0].nb, c[2].nb), (64, 32));
        assert!(toml::from_str::<ConfigFile>("[[hpl]]\ngrid = \"1x2\"\nn = [1]\nbogus = 1\n").is_err());
    }
}
