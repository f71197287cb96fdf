//! Traced real runs against their simulation. A traced run is the real HPL
//! with every BLAS call and every call of HPL's row-swap and copy functions
//! timed (`calibrate/trace/blas_trace.c`; `scripts/validate-here.sh` makes
//! them between the calibration's parts); the simulation of the same
//! configuration, with the fitted model, reports each kernel's modelled total
//! (`smpirun --json`). Per kernel, side by side, they say which model term a
//! prediction error comes from, measured on the program itself rather than on
//! the calibration's designs: the check that found per-core models of
//! `HPL_dlatcpy` five times too fast on 2x1's large copies.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{anyhow, bail, Context as _};

use crate::input::{read_file, Table};
use crate::stats;
use crate::validate::hpl::{self, HplConfig};

/// Calls and total seconds of one kernel, summed over the ranks.
pub type KernelTotals = BTreeMap<String, (u64, f64)>;

/// One traced real run: HPL's result and its kernels' totals.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct TracedRun {
    /// The run's directory (`HPL.dat`, `out.txt`, `csv/`).
    pub dir: String,
    /// Its configuration, from HPL's result line.
    pub config: HplConfig,
    /// HPL's Gflop/s.
    pub gflops: f64,
    /// HPL's time (s).
    pub seconds: f64,
    /// Per kernel: calls and seconds up to the end of HPL's solve (the
    /// residual check's calls left out), summed over the ranks.
    pub kernels: KernelTotals,
    /// Per MPI call, likewise, when the run traced its MPI calls (`mpi-*.csv`).
    pub mpi: Option<KernelTotals>,
}

impl TracedRun {
    /// HPL's own code (s, summed over the ranks): the ranks' time in HPL not
    /// spent in a traced kernel or MPI call, when the MPI calls were traced.
    pub fn own_code(&self) -> Option<f64> {
        let mpi: f64 = self.mpi.as_ref()?.values().map(|e| e.1).sum();
        let kernels: f64 = self.kernels.values().map(|e| e.1).sum();
        Some(f64::from(self.config.ranks()) * self.seconds - kernels - mpi)
    }
}

/// Reads an MPI trace (`smpi-mpi-trace/1`): per call, calls and seconds of
/// the calls that started at or before `end` (s from the process's origin).
fn read_mpi_trace(path: &Path, end: f64, into: &mut KernelTotals) -> anyhow::Result<()> {
    let text = std::fs::read_to_string(path).with_context(|| format!("{}: cannot read", path.display()))?;
    if !text.starts_with("# format: smpi-mpi-trace/1") {
        bail!(
            "{}: not an MPI trace (no `# format: smpi-mpi-trace/1`)",
            path.display()
        );
    }
    for (i, line) in text.lines().enumerate() {
        if line.starts_with('#') || line.starts_with("seq,") || line.is_empty() {
            continue;
        }
        let f: Vec<&str> = line.split(',').collect();
        let parsed = (f.len() == 6)
            .then(|| Some((f[1], f[4].parse::<f64>().ok()?, f[5].parse::<f64>().ok()?)))
            .flatten();
        let Some((call, start, duration)) = parsed else {
            bail!(
                "{}:{}: expected seq,call,bytes,peer,start,duration",
                path.display(),
                i + 1
            );
        };
        if start <= end {
            let e = into.entry(call.to_string()).or_default();
            e.0 += 1;
            e.1 += duration;
        }
    }
    Ok(())
}

/// Reads a traced run's directory: HPL's output `out.txt` and one trace CSV
/// per rank in `csv/`.
pub fn read_run(dir: &Path) -> anyhow::Result<TracedRun> {
    let out = dir.join("out.txt");
    let text = std::fs::read_to_string(&out).with_context(|| format!("{}: cannot read", out.display()))?;
    let result = hpl::parse_output(&text)
        .into_iter()
        .next()
        .ok_or_else(|| anyhow!("{}: no HPL result line (did the run finish?)", out.display()))?;
    let csv_dir = dir.join("csv");
    let mut all: Vec<_> = std::fs::read_dir(&csv_dir)
        .with_context(|| format!("{}: cannot list the trace CSVs", csv_dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "csv"))
        .collect();
    all.sort();
    let is_mpi = |p: &std::path::PathBuf| {
        p.file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("mpi-"))
    };
    let (mpi_paths, paths): (Vec<_>, Vec<_>) = all.into_iter().partition(is_mpi);
    let ranks = (result.p * result.q) as usize;
    if paths.len() != ranks {
        bail!(
            "{}: {} trace CSV(s) for a {}x{} run of {ranks} ranks (one per rank expected)",
            csv_dir.display(),
            paths.len(),
            result.p,
            result.q
        );
    }
    let mut kernels = KernelTotals::new();
    // Per rank (its `# rank:`), where HPL's solve ended on its own clock.
    let mut solve_end: BTreeMap<String, f64> = BTreeMap::new();
    for (i, p) in paths.iter().enumerate() {
        let f = read_file(p, i)?;
        if f.meta("mode") != "trace" {
            bail!(
                "{}: not a program trace (metadata `mode: {}`)",
                p.display(),
                f.meta("mode")
            );
        }
        let Table::Compute(rows) = &f.table else {
            bail!("{}: not a compute trace", p.display());
        };
        // HPL's timed part ends with the triangular solve, whose last BLAS
        // call is a dtrsv; the residual check's calls after it (dgemv over
        // the whole matrix) are left out, as the simulation runs without it.
        let end = rows
            .iter()
            .filter(|r| r.kernel == "dtrsv")
            .map(|r| r.start)
            .reduce(f64::max)
            .unwrap_or(f64::INFINITY);
        solve_end.insert(f.meta("rank").to_string(), end);
        for r in rows.iter().filter(|r| r.start <= end) {
            let e = kernels.entry(r.kernel.clone()).or_default();
            e.0 += 1;
            e.1 += r.duration;
        }
    }
    let mpi = if mpi_paths.is_empty() {
        None
    } else {
        if mpi_paths.len() != ranks {
            bail!(
                "{}: {} MPI trace(s) for {ranks} ranks (one per rank, or none)",
                csv_dir.display(),
                mpi_paths.len()
            );
        }
        let mut totals = KernelTotals::new();
        for p in &mpi_paths {
            // mpi-<host>-core<c>-<rank>.csv
            let name = p
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            let rank = name.rsplit('-').next().unwrap_or_default();
            let end = *solve_end
                .get(rank)
                .ok_or_else(|| anyhow!("{}: no kernel trace of rank {rank} beside it", p.display()))?;
            read_mpi_trace(p, end, &mut totals)?;
        }
        Some(totals)
    };
    Ok(TracedRun {
        dir: dir.display().to_string(),
        config: HplConfig {
            p: result.p,
            q: result.q,
            n: result.n,
            nb: result.nb,
        },
        gflops: result.printed_gflops,
        seconds: result.seconds,
        kernels,
        mpi,
    })
}

/// An HPL.dat with the residual check's threshold made negative (HPL then
/// skips the check), every other line as given.
pub fn without_residual_check(dat: &str) -> String {
    dat.lines()
        .map(|l| {
            let mut f = l.split_whitespace();
            match (f.next().map(str::parse::<f64>), f.next()) {
                (Some(Ok(v)), Some("threshold")) if v >= 0.0 => {
                    format!("{:<13}threshold", format!("{:.1}", -v.max(1.0)))
                }
                _ => l.to_string(),
            }
        })
        .map(|l| l + "\n")
        .collect()
}

/// One kernel of a traced configuration: measured against simulated.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct TracedKernel {
    /// Kernel or HPL function.
    pub kernel: String,
    /// Median over the traced runs of the calls (the look-ahead's polling
    /// splits updates differently from run to run).
    pub measured_calls: f64,
    /// Calls in the simulation.
    pub simulated_calls: u64,
    /// Median over the runs of the kernel's total seconds.
    pub measured_seconds: f64,
    /// Smallest and largest total over the runs.
    pub measured_range: [f64; 2],
    /// The simulation's modelled total (0 when it made no such call).
    pub simulated_seconds: f64,
}

impl TracedKernel {
    /// Simulated − measured (s).
    pub fn difference(&self) -> f64 {
        self.simulated_seconds - self.measured_seconds
    }
}

/// A traced configuration: its runs, its simulation, its kernels.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct TracedCheck {
    /// The configuration.
    pub config: HplConfig,
    /// The traced runs' directories.
    pub runs: Vec<String>,
    /// Their Gflop/s.
    pub measured_gflops: Vec<f64>,
    /// The simulation's Gflop/s (`None`: it failed, see `note`).
    pub predicted_gflops: Option<f64>,
    /// Why there is no simulation.
    pub note: Option<String>,
    /// Per kernel, the largest |simulated − measured| first.
    pub kernels: Vec<TracedKernel>,
    /// MPI time summed over the ranks: median over the runs that traced it.
    pub measured_mpi_seconds: Option<f64>,
    /// The simulation's MPI time summed over the ranks (`smpirun --json`).
    pub simulated_mpi_seconds: Option<f64>,
    /// HPL's own code summed over the ranks (median over the runs): not
    /// simulated under `smpi/simulate-computation:no`.
    pub measured_own_code_seconds: Option<f64>,
}

impl TracedCheck {
    /// Median Gflop/s of the traced runs.
    pub fn measured_median(&self) -> f64 {
        stats::median(&self.measured_gflops)
    }

    /// HPL's time error (s, predicted − measured median), when simulated.
    pub fn time_difference(&self) -> Option<f64> {
        let p = self.predicted_gflops?;
        let n = self.config.n;
        Some(hpl::hpl_seconds(n, p) - hpl::hpl_seconds(n, self.measured_median()))
    }
}

/// The traced runs grouped by configuration (in configuration order).
pub fn group(runs: &[TracedRun]) -> Vec<(HplConfig, Vec<&TracedRun>)> {
    let mut by: BTreeMap<HplConfig, Vec<&TracedRun>> = BTreeMap::new();
    for r in runs {
        by.entry(r.config).or_default().push(r);
    }
    by.into_iter().collect()
}

/// Compares a configuration's traced runs with its simulation (`Err`: why
/// it could not be simulated).
pub fn compare(config: HplConfig, runs: &[&TracedRun], simulated: Result<Simulated, String>) -> TracedCheck {
    let (predicted_gflops, note, sim, simulated_mpi_seconds) = match simulated {
        Ok(s) => (Some(s.gflops), None, s.kernels, s.mpi_seconds),
        Err(e) => (None, Some(e), KernelTotals::new(), None),
    };
    let median_of = |v: Vec<f64>| (!v.is_empty()).then(|| stats::median(&v));
    let measured_mpi_seconds = median_of(
        runs.iter()
            .filter_map(|r| r.mpi.as_ref().map(|m| m.values().map(|e| e.1).sum()))
            .collect(),
    );
    let measured_own_code_seconds = median_of(runs.iter().filter_map(|r| r.own_code()).collect());
    let mut names: Vec<&String> = runs
        .iter()
        .flat_map(|r| r.kernels.keys())
        .chain(sim.keys())
        .collect();
    names.sort();
    names.dedup();
    let mut kernels: Vec<TracedKernel> = names
        .into_iter()
        .map(|k| {
            let per_run = |f: fn(&(u64, f64)) -> f64| -> Vec<f64> {
                runs.iter().map(|r| r.kernels.get(k).map_or(0.0, f)).collect()
            };
            let secs = per_run(|e| e.1);
            let (s_calls, s_secs) = sim.get(k).copied().unwrap_or_default();
            TracedKernel {
                kernel: k.clone(),
                measured_calls: stats::median(&per_run(|e| e.0 as f64)),
                simulated_calls: s_calls,
                measured_seconds: stats::median(&secs),
                measured_range: [
                    secs.iter().copied().fold(f64::INFINITY, f64::min),
                    secs.iter().copied().fold(0.0, f64::max),
                ],
                simulated_seconds: s_secs,
            }
        })
        .collect();
    if predicted_gflops.is_some() {
        kernels.sort_by(|a, b| b.difference().abs().total_cmp(&a.difference().abs()));
    }
    TracedCheck {
        config,
        runs: runs.iter().map(|r| r.dir.clone()).collect(),
        measured_gflops: runs.iter().map(|r| r.gflops).collect(),
        predicted_gflops,
        note,
        kernels,
        measured_mpi_seconds,
        simulated_mpi_seconds,
        measured_own_code_seconds,
    }
}

/// A configuration's simulation, as the comparison needs it.
#[derive(Debug, Clone, PartialEq)]
pub struct Simulated {
    /// HPL's Gflop/s.
    pub gflops: f64,
    /// Each kernel's modelled calls and total.
    pub kernels: KernelTotals,
    /// MPI time summed over the ranks (`per_rank[].mpi_time`).
    pub mpi_seconds: Option<f64>,
}

impl Simulated {
    /// From `smpirun --json` and the Gflop/s HPL printed.
    pub fn from_json(gflops: f64, j: &serde_json::Value) -> Self {
        let mpi_seconds = j["per_rank"]
            .as_array()
            .map(|ranks| ranks.iter().filter_map(|r| r["mpi_time"].as_f64()).sum());
        Self {
            gflops,
            kernels: json_kernels(j),
            mpi_seconds,
        }
    }
}

/// `smpirun --json`'s `kernels` object as totals.
pub fn json_kernels(j: &serde_json::Value) -> KernelTotals {
    j["kernels"]
        .as_object()
        .map(|o| {
            o.iter()
                .map(|(k, v)| {
                    (
                        k.clone(),
                        (
                            v["calls"].as_u64().unwrap_or(0),
                            v["seconds"].as_f64().unwrap_or(0.0),
                        ),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trace_csv(rank: u32, rows: &[(&str, f64)]) -> String {
        let mut s =
            crate::synth::metadata("compute", "h", 0, 1e-9, 2e-8).replace("# mode: quick", "# mode: trace");
        s.push_str(&format!(
            "# core: {rank}\n# rank: {rank}\nseq,core,kernel,p0,p1,p2,start,duration\n"
        ));
        for (i, (k, d)) in rows.iter().enumerate() {
            let params = match *k {
                "dgemm" => "100,100,100",
                "dtrsv" => "100,,",
                _ => "100,100,",
            };
            s.push_str(&format!("{i},{rank},{k},{params},{:e},{d:e}\n", i as f64));
        }
        s.push_str(&format!("# end: {}\n", rows.len()));
        s
    }

    fn run_dir(root: &Path, name: &str, gflops: &str, ranks: &[Vec<(&str, f64)>]) -> std::path::PathBuf {
        let d = root.join(name);
        std::fs::create_dir_all(d.join("csv")).unwrap();
        std::fs::write(
            d.join("out.txt"),
            format!(
                "T/V                N    NB     P     Q               Time                 Gflops\n\
                 WR11R2C4        5000   128     2     1               1.21              {gflops}\n"
            ),
        )
        .unwrap();
        for (i, rows) in ranks.iter().enumerate() {
            std::fs::write(
                d.join(format!("csv/trace-h-core{i}-{i}.csv")),
                trace_csv(i as u32, rows),
            )
            .unwrap();
        }
        d
    }

    /// A fresh scratch directory for one test.
    fn scratch(test: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("traced-{test}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn traced_runs_sum_their_ranks_and_compare_kernel_by_kernel() {
        let tmp = scratch("compare");
        let a = run_dir(
            &tmp,
            "a",
            "6.917e+01",
            &[
                vec![
                    ("dgemm", 0.5),
                    ("HPL_dlatcpy", 0.01),
                    ("dtrsv", 0.0),
                    ("dgemv", 9.0),
                ],
                vec![("dgemm", 0.6), ("HPL_dlatcpy", 0.02)],
            ],
        );
        let b = run_dir(
            &tmp,
            "b",
            "6.606e+01",
            &[vec![("dgemm", 0.7)], vec![("dgemm", 0.6), ("HPL_dlatcpy", 0.04)]],
        );
        let runs: Vec<TracedRun> = [&a, &b].iter().map(|d| read_run(d).unwrap()).collect();
        assert_eq!(
            runs[0].config,
            HplConfig {
                p: 2,
                q: 1,
                n: 5000,
                nb: 128
            }
        );
        assert_eq!(runs[0].kernels["dgemm"].0, 2);
        // The residual check's calls after the last dtrsv are left out.
        assert!(!runs[0].kernels.contains_key("dgemv"), "{:?}", runs[0].kernels);
        assert_eq!(runs[0].kernels["dtrsv"].0, 1);
        assert!((runs[0].kernels["dgemm"].1 - 1.1).abs() < 1e-12);
        let groups = group(&runs);
        assert_eq!(groups.len(), 1);
        let sim: KernelTotals = [
            ("dgemm".to_string(), (4, 1.2)),
            ("HPL_dlatcpy".to_string(), (2, 0.006)),
        ]
        .into_iter()
        .collect();
        let c = compare(
            groups[0].0,
            &groups[0].1,
            Ok(Simulated {
                gflops: 70.0,
                kernels: sim,
                mpi_seconds: Some(0.5),
            }),
        );
        // dgemm: runs 1.1 and 1.3 (median 1.2) against 1.2; the copies: 0.03
        // and 0.04 (median 0.035) against 0.006 — the largest difference first.
        assert_eq!(c.kernels[0].kernel, "HPL_dlatcpy");
        assert!((c.kernels[0].difference() + 0.029).abs() < 1e-12);
        assert_eq!(c.kernels[0].measured_range, [0.03, 0.04]);
        assert!(c.kernels[1].difference().abs() < 1e-12);
        assert!((c.measured_median() - (69.17 + 66.06) / 2.0).abs() < 1e-9);
        assert!(
            c.time_difference().unwrap() < 0.0,
            "predicted faster than measured"
        );
        let failed = compare(groups[0].0, &groups[0].1, Err("smpirun failed".into()));
        assert_eq!(failed.predicted_gflops, None);
        assert_eq!(failed.kernels.len(), 3);
    }

    fn mpi_csv(rank: usize, rows: &[(&str, f64, f64)]) -> String {
        let mut s = format!(
            "# format: smpi-mpi-trace/1\n# host: h\n# rank: {rank}\n# t0_monotonic_s: 100.0\n\
             seq,call,bytes,peer,start,duration\n"
        );
        for (i, (call, start, d)) in rows.iter().enumerate() {
            s.push_str(&format!("{i},{call},8,1,{start:e},{d:e}\n"));
        }
        s + "# end: 0\n"
    }

    /// With MPI traces beside the kernel traces, the ranks' time splits into
    /// kernels, MPI (up to the end of the solve) and HPL's own code.
    #[test]
    fn mpi_traces_split_the_rest_into_mpi_and_own_code() {
        let tmp = scratch("mpi");
        // HPL's time 1.21 s a rank (recovered from 69.17 Gflop/s at N = 5000).
        let d = run_dir(
            &tmp,
            "a",
            "6.917e+01",
            &[
                vec![("dgemm", 1.0), ("dtrsv", 0.0)],
                vec![("dgemm", 0.9), ("dtrsv", 0.0)],
            ],
        );
        // Each rank's last dtrsv starts at 1.0 s (rows start at their index):
        // the MPI call at 5.0 s is the residual check's.
        std::fs::write(
            d.join("csv/mpi-h-core0-0.csv"),
            mpi_csv(
                0,
                &[
                    ("MPI_Send", 0.5, 0.1),
                    ("MPI_Iprobe", 0.8, 0.01),
                    ("MPI_Recv", 5.0, 9.0),
                ],
            ),
        )
        .unwrap();
        std::fs::write(
            d.join("csv/mpi-h-core1-1.csv"),
            mpi_csv(1, &[("MPI_Recv", 0.2, 0.2)]),
        )
        .unwrap();
        let r = read_run(&d).unwrap();
        let mpi = r.mpi.as_ref().unwrap();
        assert_eq!(mpi["MPI_Recv"].0, 1, "the check's receive left out: {mpi:?}");
        assert!((mpi["MPI_Recv"].1 - 0.2).abs() < 1e-12);
        let seconds = hpl::hpl_seconds(5000, 69.17);
        assert!((r.own_code().unwrap() - (2.0 * seconds - 1.9 - 0.31)).abs() < 1e-9);
        let c = compare(r.config, &[&r], Err("not simulated".into()));
        assert!((c.measured_mpi_seconds.unwrap() - 0.31).abs() < 1e-12);
        // One MPI trace for two ranks: refused.
        std::fs::remove_file(d.join("csv/mpi-h-core1-1.csv")).unwrap();
        let e = read_run(&d).unwrap_err().to_string();
        assert!(e.contains("1 MPI trace(s) for 2 ranks"), "{e}");
    }

    #[test]
    fn the_simulated_input_skips_the_residual_check() {
        let dat = "HPLinpack benchmark input file\n16.0         threshold\n1            # of panel fact\n";
        let out = without_residual_check(dat);
        assert_eq!(out.lines().nth(1), Some("-16.0        threshold"));
        assert_eq!(out.lines().nth(2), Some("1            # of panel fact"));
        assert_eq!(without_residual_check(&out), out, "already negative: unchanged");
    }

    #[test]
    fn a_run_without_one_trace_per_rank_is_refused() {
        let tmp = scratch("refused");
        let d = run_dir(&tmp, "a", "6.917e+01", &[vec![("dgemm", 0.5)]]);
        let e = read_run(&d).unwrap_err().to_string();
        assert!(e.contains("1 trace CSV(s) for a 2x1 run of 2 ranks"), "{e}");
        std::fs::remove_file(d.join("out.txt")).unwrap();
        assert!(read_run(&d).unwrap_err().to_string().contains("out.txt"));
    }
}
