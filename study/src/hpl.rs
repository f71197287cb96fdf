//! HPL: the `HPL.dat` of a point and the results HPL prints.
//!
//! The input file has the 31-line layout `apps/hpl/gen_dat.sh` writes (and
//! both HPL builds read), with one value per list: a study varies N, NB, the
//! grid, BCAST, DEPTH or SWAP through its axes, one run per value.

use std::collections::BTreeMap;

use anyhow::{anyhow, bail, Result};
use toml::Value;

/// One HPL configuration (defaults are `gen_dat.sh`'s).
#[derive(Clone, Debug, PartialEq)]
pub struct HplParams {
    /// Problem size.
    pub n: u64,
    /// Block size.
    pub nb: u32,
    /// Process grid rows.
    pub p: u32,
    /// Process grid columns.
    pub q: u32,
    /// Panel broadcast: 0=1ring 1=1ringM 2=2ring 3=2ringM 4=long 5=longM.
    pub bcast: u32,
    /// Look-ahead depth.
    pub depth: u32,
    /// Row swaps: 0=binary exchange 1=spread-roll 2=mix.
    pub swap: u32,
    /// Column threshold of the mixed swap.
    pub swap_threshold: u32,
    /// Panel factorization: 0=left 1=Crout 2=right.
    pub pfact: u32,
    /// Recursive panel factorization.
    pub rfact: u32,
    /// Recursion stopping criterion.
    pub nbmin: u32,
    /// Panels in recursion.
    pub ndiv: u32,
    /// Residual threshold (as written into HPL.dat); ≤ 0 skips the checks.
    pub threshold: String,
    /// Process mapping: 0=row-major 1=column-major.
    pub pmap: u32,
    /// L1 form.
    pub l1: u32,
    /// U form.
    pub u: u32,
    /// Equilibration.
    pub equil: u32,
    /// Memory alignment in doubles.
    pub align: u32,
}

impl HplParams {
    /// From the `hpl.*` parameters (without `xhpl`); `grid = "PxQ"` sets P and Q.
    pub fn from_table(mut t: toml::Table) -> Result<HplParams> {
        let mut take = |name: &str, default: Option<i64>, min: i64, max: i64| -> Result<i64> {
            let v = match t.remove(name) {
                Some(Value::Integer(i)) => i,
                Some(Value::String(s)) => s
                    .trim()
                    .parse()
                    .map_err(|_| anyhow!("hpl.{name} = {s:?}: expected an integer"))?,
                Some(other) => bail!("hpl.{name} = {other}: expected an integer"),
                None => default.ok_or_else(|| anyhow!("hpl.{name} is required"))?,
            };
            if v < min || v > max {
                bail!("hpl.{name} = {v}: must be in {min}..={max}");
            }
            Ok(v)
        };
        let n = take("n", None, 1, i64::MAX)? as u64;
        let nb = take("nb", None, 1, i32::MAX as i64)? as u32;
        let bcast = take("bcast", Some(1), 0, 5)? as u32;
        let depth = take("depth", Some(1), 0, 1000)? as u32;
        let swap = take("swap", Some(2), 0, 2)? as u32;
        let swap_threshold = take("swap_threshold", Some(64), 0, i32::MAX as i64)? as u32;
        let pfact = take("pfact", Some(1), 0, 2)? as u32;
        let rfact = take("rfact", Some(2), 0, 2)? as u32;
        let nbmin = take("nbmin", Some(4), 1, i32::MAX as i64)? as u32;
        let ndiv = take("ndiv", Some(2), 2, i32::MAX as i64)? as u32;
        let pmap = take("pmap", Some(0), 0, 1)? as u32;
        let l1 = take("l1", Some(0), 0, 1)? as u32;
        let u = take("u", Some(0), 0, 1)? as u32;
        let equil = take("equil", Some(1), 0, 1)? as u32;
        let align = take("align", Some(8), 1, i32::MAX as i64)? as u32;
        let (p, q) = match t.remove("grid") {
            Some(Value::String(g)) => {
                if t.contains_key("p") || t.contains_key("q") {
                    bail!("hpl.grid = {g:?} and hpl.p/hpl.q: give one or the other");
                }
                let (a, b) = g
                    .split_once(['x', 'X', '×'])
                    .ok_or_else(|| anyhow!("hpl.grid = {g:?}: expected \"PxQ\", e.g. \"16x16\""))?;
                let parse = |s: &str| -> Result<u32> {
                    s.trim()
                        .parse::<u32>()
                        .ok()
                        .filter(|v| *v >= 1)
                        .ok_or_else(|| anyhow!("hpl.grid = {g:?}: `{s}` is not a positive integer"))
                };
                (parse(a)?, parse(b)?)
            }
            Some(other) => bail!("hpl.grid = {other}: expected a string \"PxQ\""),
            None => {
                let mut take = |name: &str| -> Result<u32> {
                    match t.remove(name) {
                        Some(Value::Integer(i)) if i >= 1 && i <= i32::MAX as i64 => Ok(i as u32),
                        Some(other) => bail!("hpl.{name} = {other}: expected a positive integer"),
                        None => bail!("hpl.{name} is required (or hpl.grid = \"PxQ\")"),
                    }
                };
                (take("p")?, take("q")?)
            }
        };
        let threshold = match t.remove("threshold") {
            None => "16.0".to_string(),
            Some(Value::Float(f)) if f.is_finite() => format_threshold(f),
            Some(Value::Integer(i)) => i.to_string(),
            Some(other) => bail!("hpl.threshold = {other}: expected a number"),
        };
        if let Some(k) = t.keys().next() {
            bail!(
                "unknown key hpl.{k} (known: xhpl, n, nb, p, q, grid, bcast, depth, swap, swap_threshold, \
                 pfact, rfact, nbmin, ndiv, threshold, pmap, l1, u, equil, align)"
            );
        }
        Ok(HplParams {
            n,
            nb,
            p,
            q,
            bcast,
            depth,
            swap,
            swap_threshold,
            pfact,
            rfact,
            nbmin,
            ndiv,
            threshold,
            pmap,
            l1,
            u,
            equil,
            align,
        })
    }

    /// The `HPL.dat` text (gen_dat.sh's layout: value padded to 13 columns, then a comment).
    pub fn dat(&self) -> String {
        fn row(out: &mut String, v: &str, comment: &str) {
            if v.len() < 13 {
                out.push_str(&format!("{v:<13}{comment}\n"));
            } else {
                out.push_str(&format!("{v} {comment}\n"));
            }
        }
        let mut o = String::new();
        o.push_str("HPLinpack benchmark input file\n");
        o.push_str("Generated by smpi-study\n");
        row(&mut o, "HPL.out", "output file name (if any)");
        row(&mut o, "6", "device out (6=stdout,7=stderr,file)");
        row(&mut o, "1", "# of problems sizes (N)");
        row(&mut o, &self.n.to_string(), "Ns");
        row(&mut o, "1", "# of NBs");
        row(&mut o, &self.nb.to_string(), "NBs");
        row(
            &mut o,
            &self.pmap.to_string(),
            "PMAP process mapping (0=Row-,1=Column-major)",
        );
        row(&mut o, "1", "# of process grids (P x Q)");
        row(&mut o, &self.p.to_string(), "Ps");
        row(&mut o, &self.q.to_string(), "Qs");
        row(&mut o, &self.threshold, "threshold");
        row(&mut o, "1", "# of panel fact");
        row(
            &mut o,
            &self.pfact.to_string(),
            "PFACTs (0=left, 1=Crout, 2=Right)",
        );
        row(&mut o, "1", "# of recursive stopping criterium");
        row(&mut o, &self.nbmin.to_string(), "NBMINs (>= 1)");
        row(&mut o, "1", "# of panels in recursion");
        row(&mut o, &self.ndiv.to_string(), "NDIVs");
        row(&mut o, "1", "# of recursive panel fact.");
        row(
            &mut o,
            &self.rfact.to_string(),
            "RFACTs (0=left, 1=Crout, 2=Right)",
        );
        row(&mut o, "1", "# of broadcast");
        row(
            &mut o,
            &self.bcast.to_string(),
            "BCASTs (0=1rg,1=1rM,2=2rg,3=2rM,4=Lng,5=LnM)",
        );
        row(&mut o, "1", "# of lookahead depth");
        row(&mut o, &self.depth.to_string(), "DEPTHs (>=0)");
        row(&mut o, &self.swap.to_string(), "SWAP (0=bin-exch,1=long,2=mix)");
        row(&mut o, &self.swap_threshold.to_string(), "swapping threshold");
        row(
            &mut o,
            &self.l1.to_string(),
            "L1 in (0=transposed,1=no-transposed) form",
        );
        row(
            &mut o,
            &self.u.to_string(),
            "U  in (0=transposed,1=no-transposed) form",
        );
        row(&mut o, &self.equil.to_string(), "Equilibration (0=no,1=yes)");
        row(
            &mut o,
            &self.align.to_string(),
            "memory alignment in double (> 0)",
        );
        o
    }
}

/// HPL reads the threshold with `%lf`; write it the way a person would (16.0, -1.0).
fn format_threshold(t: f64) -> String {
    if t.fract() == 0.0 && t.abs() < 1e15 {
        format!("{t:.1}")
    } else {
        format!("{t}")
    }
}

/// What HPL printed about its (single) test.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HplResult {
    /// The result line (`WR11R2C4  N NB P Q Time Gflops`).
    pub line: Option<String>,
    /// HPL's own time, seconds.
    pub time: Option<f64>,
    /// HPL's Gflop/s.
    pub gflops: Option<f64>,
    /// The scaled residual, when checked.
    pub residual: Option<f64>,
    /// PASSED / FAILED, when checked.
    pub passed: Option<bool>,
}

impl HplResult {
    /// The metrics of a row: `gflops`, `hpl_time`, `residual`.
    pub fn metrics(&self) -> BTreeMap<String, f64> {
        let mut m = BTreeMap::new();
        if let Some(v) = self.gflops {
            m.insert("gflops".into(), v);
        }
        if let Some(v) = self.time {
            m.insert("hpl_time".into(), v);
        }
        if let Some(v) = self.residual {
            m.insert("residual".into(), v);
        }
        m
    }
}

/// Reads HPL's stdout: the first result line and the first residual check.
pub fn parse_output(stdout: &str) -> HplResult {
    let mut r = HplResult::default();
    for line in stdout.lines() {
        let t = line.trim_start();
        if r.line.is_none() && is_result_line(t) {
            let f: Vec<&str> = t.split_whitespace().collect();
            if f.len() >= 7 {
                r.time = f[5].parse().ok();
                r.gflops = f[6].parse().ok();
                r.line = Some(t.to_string());
            }
        }
        if r.passed.is_none() && t.starts_with("||Ax-b||") {
            if let Some((_, rest)) = t.split_once('=') {
                let mut words = rest.split_whitespace();
                r.residual = words.next().and_then(|w| w.parse().ok());
                r.passed = if rest.contains("PASSED") {
                    Some(true)
                } else if rest.contains("FAILED") {
                    Some(false)
                } else {
                    None
                };
            }
        }
    }
    r
}

/// `W[RC]` + digits + ... as HPL names its variants (`WR11R2C4`, `WC00L2L4`).
fn is_result_line(t: &str) -> bool {
    let b = t.as_bytes();
    b.len() > 8
        && b[0] == b'W'
        && (b[1] == b'R' || b[1] == b'C')
        && b[2].is_ascii_digit()
        && b[3].is_ascii_digit()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(s: &str) -> toml::Table {
        toml::from_str(s).unwrap()
    }

    #[test]
    fn dat_has_gen_dat_layout() {
        let p = HplParams::from_table(table("n = 500\nnb = 32\ngrid = \"2x3\"\nthreshold = -1")).unwrap();
        let d = p.dat();
        let lines: Vec<&str> = d.lines().collect();
        assert_eq!(lines.len(), 31);
        assert_eq!(lines[5], "500          Ns");
        assert_eq!(lines[10], "2            Ps");
        assert_eq!(lines[11], "3            Qs");
        assert_eq!(lines[12], "-1           threshold");
        assert_eq!(
            lines[22],
            "1            BCASTs (0=1rg,1=1rM,2=2rg,3=2rM,4=Lng,5=LnM)"
        );
    }

    /// Same text as apps/hpl/gen_dat.sh, when the script is there.
    #[test]
    fn dat_matches_gen_dat_sh() {
        let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../apps/hpl/gen_dat.sh");
        if !script.exists() {
            eprintln!("skipped: no {}", script.display());
            return;
        }
        let out = std::process::Command::new(&script)
            .args([
                "--n", "8000", "--nb", "128", "--p", "4", "--q", "8", "--bcast", "3", "--depth", "0",
            ])
            .args(["--swap", "0", "--threshold", "-1", "--pmap", "1", "-o", "-"])
            .output()
            .unwrap();
        assert!(out.status.success());
        let theirs = String::from_utf8(out.stdout).unwrap();
        let ours = HplParams::from_table(table(
            "n = 8000\nnb = 128\np = 4\nq = 8\nbcast = 3\ndepth = 0\nswap = 0\nthreshold = -1\npmap = 1",
        ))
        .unwrap()
        .dat();
        let skip_line_2 = |s: &str| {
            s.lines()
                .enumerate()
                .filter(|(i, _)| *i != 1)
                .map(|(_, l)| l.to_string())
                .collect::<Vec<_>>()
        };
        assert_eq!(skip_line_2(&ours), skip_line_2(&theirs));
    }

    #[test]
    fn bad_values_are_named() {
        let e = HplParams::from_table(table("n = 500\nnb = 32\np = 2\nq = 2\nbcast = 7")).unwrap_err();
        assert!(e.to_string().contains("hpl.bcast = 7"), "{e}");
        let e = HplParams::from_table(table("n = 500\nnb = 32\np = 2\nq = 2\nfoo = 1")).unwrap_err();
        assert!(e.to_string().contains("hpl.foo"), "{e}");
    }

    #[test]
    fn parses_result_and_residual() {
        let out = "\
T/V                N    NB     P     Q               Time                 Gflops
--------------------------------------------------------------------------------
WR11R2C4         500    32     2     2               0.04              2.318e+00
--------------------------------------------------------------------------------
||Ax-b||_oo/(eps*(||A||_oo*||x||_oo+||b||_oo)*N)=        0.0075299 ...... PASSED
";
        let r = parse_output(out);
        assert_eq!(r.gflops, Some(2.318));
        assert_eq!(r.time, Some(0.04));
        assert_eq!(r.residual, Some(0.0075299));
        assert_eq!(r.passed, Some(true));
        assert_eq!(parse_output("nothing"), HplResult::default());
    }
}
