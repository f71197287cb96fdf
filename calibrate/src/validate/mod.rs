//! `smpi-validate`: simulation against reality. For a list of HPL
//! configurations it runs the real HPL under the real MPI several times each,
//! all runs in one seeded random order, simulates each configuration with the
//! fitted model and platform (several seeds when the model is noisy), and
//! writes a report and `validation.json`: measured medians with their 95 %
//! nonparametric intervals, spread, predictions, relative errors, orderings.
//! It does the same for the calibration programs (ping-pong through
//! `smpirun`, kernels through the model). The crate README ("Validation")
//! documents the method, the settings and the JSON schema.

pub mod analysis;
pub mod blocks;
pub mod calib;
pub mod hpl;
pub mod report;
pub mod runner;
pub mod traced;

use std::collections::BTreeMap;
use std::path::Path;

use sha2::{Digest as _, Sha256};

use crate::validate::analysis::{
    CalibrationProbe, ConfigResult, MachineState, Ordering, PhaseRow, RealRun, SimRun,
};
use crate::validate::calib::{KernelBucket, PingpongCheck};
use crate::validate::hpl::HplConfig;

/// Format tag of `validation.json`.
pub const FORMAT: &str = "smpi-validation/1";

/// A file the validation used, with its digest.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct FileRef {
    /// Path as given.
    pub path: String,
    /// SHA-256 (hex), empty when unreadable.
    pub sha256: String,
}

impl FileRef {
    /// Reads `path` to hash it.
    pub fn of(path: &Path) -> Self {
        let sha256 = std::fs::read(path)
            .map(|b| Sha256::digest(&b).iter().map(|x| format!("{x:02x}")).collect())
            .unwrap_or_default();
        Self {
            path: path.display().to_string(),
            sha256,
        }
    }
}

/// The machine the real runs ran on (Hoefler & Belli rule 9).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct Machine {
    /// `hostname`.
    pub host: String,
    /// CPU model.
    pub cpu: String,
    /// Online cores.
    pub cores: usize,
    /// `uname -srm`.
    pub kernel: String,
    /// Operating system (`/etc/os-release` PRETTY_NAME).
    pub os: String,
}

/// The software of the real runs.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Software {
    /// `mpirun --version`, first line.
    pub mpi: String,
    /// The BLAS library (package version when known).
    pub blas: String,
    /// The OpenBLAS cores the runs reported (`OPENBLAS_VERBOSE=2`).
    pub blas_kernels: Vec<String>,
    /// `OPENBLAS_CORETYPE` and `OPENBLAS_L2_SIZE` before the runs, and
    /// whether the runs had them unset.
    pub openblas_env: BTreeMap<String, String>,
    /// The real HPL's build record (apps/hpl/build-real/BUILD_INFO).
    pub hpl_build: BTreeMap<String, String>,
}

/// Everything one validation produced.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Validation {
    /// Tool and version.
    pub tool: String,
    /// The command line.
    pub command_line: String,
    /// Start and end (UTC).
    pub started: String,
    /// End (UTC).
    pub finished: String,
    /// The machine.
    pub machine: Machine,
    /// The software.
    pub software: Software,
    /// The real runs' command (one configuration's, as a shell line).
    pub real_command: String,
    /// The simulation command (one replica's, as a shell line).
    pub simulation_command: String,
    /// Why the simulation is run this way (one line per setting).
    pub simulation_settings: Vec<String>,
    /// Seed of the run order.
    pub order_seed: u64,
    /// The blocks the real runs were measured in (`--real-from`); empty when
    /// this invocation ran them.
    pub real_blocks: Vec<blocks::BlockRecord>,
    /// `smpi/seed` of the replicas.
    pub replica_seeds: Vec<u64>,
    /// Real runs per configuration asked for.
    pub runs_per_config: usize,
    /// The model file.
    pub model: FileRef,
    /// The platform file.
    pub platform: FileRef,
    /// The real program.
    pub real_program: FileRef,
    /// The simulated program.
    pub simulated_program: FileRef,
    /// The configurations.
    pub configs: Vec<HplConfig>,
    /// Real runs, in the order they ran.
    pub real_runs: Vec<RealRun>,
    /// Simulation replicas.
    pub sim_runs: Vec<SimRun>,
    /// Per configuration.
    pub results: Vec<ConfigResult>,
    /// Orderings between grids at equal N.
    pub orderings: Vec<Ordering>,
    /// HPL's phases, measured against predicted (detailed-timing builds).
    pub phases: Vec<PhaseRow>,
    /// Ping-pong: measured against simulated.
    pub pingpong: Option<PingpongCheck>,
    /// Why the ping-pong check did not run or failed.
    pub pingpong_note: Option<String>,
    /// The held-out ping-pong check (`--pingpong-check`): a measurement not
    /// used by the fit, few sizes with many calls each, against its
    /// simulation. The ping-pong target is judged on it.
    pub pingpong_heldout: Option<PingpongCheck>,
    /// Why the held-out check did not run or failed.
    pub pingpong_heldout_note: Option<String>,
    /// Kernel calls against the model.
    pub kernels: Vec<KernelBucket>,
    /// Traced real runs against their simulation, per configuration.
    pub traced: Vec<traced::TracedCheck>,
    /// Traced runs that could not be read, and why.
    pub traced_notes: Vec<String>,
    /// Load averages before and after the real runs.
    pub load: [Option<[f64; 3]>; 2],
    /// The machine probe run before each real run (`None`: not probed).
    pub probe: Option<String>,
    /// The calibration's own probe (`machine-probe.tsv`), when found.
    pub calibration_probe: Option<CalibrationProbe>,
    /// Whether the machine kept its speed (probe and run order).
    pub machine_state: MachineState,
    /// Free-text notes (from `--note`), shown in the report.
    pub notes: Vec<String>,
}

impl Validation {
    /// The `validation.json` document (schema in the crate README).
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::json;
        let configurations: Vec<serde_json::Value> = self
            .results
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let m = r.measured.as_ref();
                let p = r.predicted.as_ref();
                json!({
                    "P": r.config.p,
                    "Q": r.config.q,
                    "N": r.config.n,
                    "NB": r.config.nb,
                    "runs": m.map_or(0, |m| m.runs),
                    "runs_attempted": r.runs_attempted,
                    "runs_failed": r.runs_failed,
                    "measured_median_gflops": m.map(|m| m.median_gflops),
                    "measured_ci95_gflops": m.and_then(|m| m.ci),
                    "measured_ci_level": m.and_then(|m| m.ci_level),
                    "measured_ci_note": m.and_then(|m| m.ci_note.clone()),
                    "measured_mean_gflops": m.map(|m| m.mean_gflops),
                    "measured_min_gflops": m.map(|m| m.min_gflops),
                    "measured_max_gflops": m.map(|m| m.max_gflops),
                    "measured_quartiles_gflops": m.map(|m| m.quartiles),
                    "measured_cov_time": m.map(|m| m.cov_time).filter(|v| v.is_finite()),
                    "measured_median_seconds": m.map(|m| m.median_seconds),
                    "predicted_gflops": p.map(|p| p.gflops),
                    "predicted_min_gflops": p.map(|p| p.min_gflops),
                    "predicted_max_gflops": p.map(|p| p.max_gflops),
                    "predicted_seconds": p.map(|p| p.seconds),
                    "replicas": p.map_or(0, |p| p.replicas),
                    "relative_error": r.relative_error,
                    "within_ci": r.within_ci,
                    "tolerance": r.tolerance,
                    "meets_target": r.meets_target,
                    "measured_runs": self.real_runs.iter().filter(|x| x.config == i).map(|x| json!({
                        "position": x.position,
                        "start": x.start,
                        "load1": x.load_before.map(|l| l[0]),
                        "seconds": x.outcome.seconds(),
                        "gflops": x.outcome.gflops(),
                        "probe_gflops": (!x.probe_gflops.is_empty()).then_some(&x.probe_gflops),
                        "probe_gather_ns": (!x.probe_gather_ns.is_empty()).then_some(&x.probe_gather_ns),
                        "status": match &x.outcome {
                            analysis::Outcome::Ok { .. } => "ok".to_string(),
                            analysis::Outcome::Failed { reason, .. } => format!("failed: {reason}"),
                        },
                    })).collect::<Vec<_>>(),
                    "predicted_replicas": self.sim_runs.iter().filter(|x| x.config == i).map(|x| json!({
                        "seed": x.seed,
                        "gflops": x.outcome.gflops(),
                        "seconds": x.outcome.seconds(),
                        "extrapolated": x.extrapolated.iter().map(|(k, e)| (k.clone(), json!({
                            "calls": e.calls, "of_calls": e.of_calls,
                            "share_of_time_percent": e.share_of_time, "outside": e.outside,
                        }))).collect::<serde_json::Map<_, _>>(),
                    })).collect::<Vec<_>>(),
                })
            })
            .collect();
        let blas_kernel = if self.software.blas_kernels.is_empty() {
            serde_json::Value::Null
        } else {
            json!(self.software.blas_kernels.join(", "))
        };
        json!({
            "format": FORMAT,
            "tool": self.tool,
            "metadata": {
                "machine": self.machine,
                "kernel": self.machine.kernel,
                "mpi": self.software.mpi,
                "blas": self.software.blas,
                "blas_kernel": blas_kernel,
                "openblas_env": self.software.openblas_env,
                "hpl_build": self.software.hpl_build,
                "started": self.started,
                "finished": self.finished,
                "load_before": self.load[0],
                "load_after": self.load[1],
                "commands": {
                    "validate": self.command_line,
                    "real": self.real_command,
                    "simulation": self.simulation_command,
                },
                "simulation_settings": self.simulation_settings,
                "seeds": {"order": self.order_seed, "replicas": self.replica_seeds},
                "real_run_blocks": self.real_blocks,
                "runs_per_config": self.runs_per_config,
                "model": self.model,
                "platform": self.platform,
                "real_program": self.real_program,
                "simulated_program": self.simulated_program,
            },
            "configurations": configurations,
            "orderings": self.orderings,
            "phases": self.phases.iter().map(|p| json!({
                "P": self.configs[p.config].p,
                "Q": self.configs[p.config].q,
                "N": self.configs[p.config].n,
                "NB": self.configs[p.config].nb,
                "phase": p.phase,
                "measured_median_seconds": p.measured,
                "predicted_seconds": p.predicted,
            })).collect::<Vec<_>>(),
            "machine_state": {
                "probe": self.probe,
                "calibration_probe": self.calibration_probe.as_ref().map(|c| json!({
                    "file": c.file,
                    "args": c.args,
                    "runs": c.runs.iter().map(|r| json!({
                        "when": r.when, "date": r.date, "gflops_per_rank": r.gflops,
                        "gather_ns_per_rank": (!r.gather_ns.is_empty()).then_some(&r.gather_ns),
                    })).collect::<Vec<_>>(),
                })),
                "calibration_probe_gflops": self.machine_state.calibration_probe_gflops,
                "runs_probe_gflops": self.machine_state.runs_probe_gflops,
                "runs_probe_range": self.machine_state.runs_probe_range,
                "probe_shift": self.machine_state.probe_shift,
                "calibration_gather_ns": self.machine_state.calibration_gather_ns,
                "runs_gather_ns": self.machine_state.runs_gather_ns,
                "gather_shift": self.machine_state.gather_shift,
                "position_trend": self.machine_state.position_trend.map(|(rho, p)| json!({"rho": rho, "p": p})),
                "first_last_fifth": self.machine_state.first_last_fifth,
                "probe_vs_run": self.machine_state.probe_vs_run.map(|(rho, p)| json!({"rho": rho, "p": p})),
                "warnings": self.machine_state.warnings,
            },
            "calibration_checks": {
                "pingpong": self.pingpong.as_ref().map(|p| json!({
                    "measured_file": p.measured_file,
                    "simulated_file": p.simulated_file,
                    "sizes": p.rows.len(),
                    "sizes_within_5pct": p.sizes_within,
                    "sizes_within_ci": p.sizes_within_ci,
                    "sizes_with_ci": p.sizes_with_ci,
                    "bins": p.bins,
                    "bins_within_5pct": p.bins_within,
                    "worst_bin_error": p.worst_bin,
                    "per_size": p.rows,
                })),
                "pingpong_note": self.pingpong_note,
                "pingpong_heldout": self.pingpong_heldout.as_ref().map(|p| json!({
                    "measured_file": p.measured_file,
                    "simulated_file": p.simulated_file,
                    "sizes": p.rows.len(),
                    "min_calls_per_size": p.min_calls,
                    "widest_ci_relative_half_width": p.widest_ci,
                    "sizes_within_5pct": p.sizes_within,
                    "significant_misses": p.significant_misses,
                    "worst_size_error": p.worst_size,
                    "target_met": p.sizes_within == p.rows.len() && !p.rows.is_empty(),
                    "per_size": p.rows,
                })),
                "pingpong_heldout_note": self.pingpong_heldout_note,
                "kernels": self.kernels,
                "traced_runs": self.traced.iter().map(|c| json!({
                    "P": c.config.p,
                    "Q": c.config.q,
                    "N": c.config.n,
                    "NB": c.config.nb,
                    "runs": c.runs,
                    "measured_gflops": c.measured_gflops,
                    "measured_median_gflops": c.measured_median(),
                    "predicted_gflops": c.predicted_gflops,
                    "time_difference_seconds": c.time_difference(),
                    "measured_mpi_seconds": c.measured_mpi_seconds,
                    "simulated_mpi_seconds": c.simulated_mpi_seconds,
                    "measured_own_code_seconds": c.measured_own_code_seconds,
                    "note": c.note,
                    "kernels": c.kernels.iter().map(|k| json!({
                        "kernel": k.kernel,
                        "measured_calls_median": k.measured_calls,
                        "simulated_calls": k.simulated_calls,
                        "measured_seconds_median": k.measured_seconds,
                        "measured_seconds_range": k.measured_range,
                        "simulated_seconds": k.simulated_seconds,
                        "difference_seconds": k.difference(),
                    })).collect::<Vec<_>>(),
                })).collect::<Vec<_>>(),
                "traced_runs_notes": self.traced_notes,
            },
            "notes": self.notes,
        })
    }
}
