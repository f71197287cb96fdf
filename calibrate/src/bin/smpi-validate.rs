//! `smpi-validate`: runs the real HPL under the real MPI several times per
//! configuration (all runs in one seeded random order), simulates each
//! configuration with a fitted model and platform, and writes a Markdown + PNG
//! report and `validation.json`; also checks the calibration programs
//! themselves (ping-pong through smpirun, kernel calls through the model).

#![warn(missing_docs, unreachable_pub, unsafe_op_in_unsafe_fn)]

use std::collections::BTreeMap;
use std::io::IsTerminal as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{bail, Context as _};
use calibrate::fit::{now_utc, this_host, write_atomically};
use calibrate::input::{read_file, CalibrationFile, Table};
use calibrate::validate::analysis::{self, Outcome, RealRun, SimRun};
use calibrate::validate::calib;
use calibrate::validate::hpl::{self, HplConfig};
use calibrate::validate::runner::{self, tail, RealLauncher};
use calibrate::validate::{blocks, report, traced, FileRef, Machine, Software, Validation};
use clap::Parser;
use indicatif::{ProgressBar, ProgressStyle};

/// The simulation settings used unless `--sim-cfg` replaces them, each with
/// the reason (shown in the report). The README ("Validation: simulation
/// settings") explains them.
const DEFAULT_SIM_CFG: &[(&str, &str)] = &[
    (
        "smpi/simulate-computation:no",
        "the kernels that carry HPL's time are modelled (dgemm, dtrsm, the BLAS-1/2 kernels and HPL's dlaswp/dlacpy/dlatcpy \
         functions, all in the fitted model file); the rest of HPL's own code between MPI calls (index bookkeeping, pivot \
         row copies) is not measured, so the prediction does not depend on the load of the machine that simulates",
    ),
    (
        "smpi/grow-injected-times:no",
        "the real MPI_Iprobe/MPI_Test cost is constant (calibrated: smpi/iprobe, smpi/test); SMPI's growing cost makes \
         HPL's polling loops (panel broadcast progress during the look-ahead update) increasingly expensive",
    ),
    (
        "smpi/auto-shared-malloc-thresh:0",
        "no memory folding: at N ≤ 8000 on 2 ranks the matrix fits in memory, and the kernels that run for real \
         (none with simulate-computation:no) would otherwise see folded, cache-resident data",
    ),
];

/// Check a fitted simulation against real runs of HPL (and the calibration
/// programs against their own measurements).
///
/// Example (what `scripts/validate-here.sh` runs):
/// `smpi-validate --model M.toml --platform P.toml --hpl 1x2:2000,4000 --hpl 2x1:2000,4000 --runs 6 --calibration CALDIR --out OUT`
#[derive(Parser, Debug)]
#[command(name = "smpi-validate", version)]
struct Cli {
    /// Fitted model file (smpi-fit -o).
    #[arg(long, required_unless_present = "real_only")]
    model: Option<PathBuf>,
    /// Fitted platform file (smpi-fit --platform-out).
    #[arg(long, required_unless_present = "real_only")]
    platform: Option<PathBuf>,
    /// Output directory (report.md, PNG plots, validation.json, runs/).
    #[arg(long)]
    out: PathBuf,
    /// HPL configurations `PxQ:N1,N2,...[:NB]` (repeatable), e.g. `1x2:2000,4000`.
    #[arg(long = "hpl")]
    hpl: Vec<String>,
    /// A TOML file of configurations (`[[hpl]] grid = "1x2"  n = [2000, 4000]`; see the README).
    #[arg(long)]
    config: Option<PathBuf>,
    /// Default NB.
    #[arg(long, default_value_t = 128)]
    nb: u32,
    /// Real runs per configuration (≥ 6 for a 95 % interval of the median).
    #[arg(long)]
    runs: Option<usize>,
    /// Simulation replicas per configuration (seeds 1..=R: a distribution when the model is noisy).
    #[arg(long)]
    replicas: Option<usize>,
    /// Seed of the random order of the real runs.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// The real HPL (apps/hpl/build-real.sh).
    #[arg(long)]
    real_xhpl: Option<PathBuf>,
    /// The HPL built with smpicc (apps/hpl/build.sh).
    #[arg(long)]
    sim_xhpl: Option<PathBuf>,
    /// smpirun.
    #[arg(long)]
    smpirun: Option<PathBuf>,
    /// apps/hpl/gen_dat.sh.
    #[arg(long)]
    gen_dat: Option<PathBuf>,
    /// The launcher of real runs, words separated by spaces; `{np}` is replaced by P·Q and
    /// `{seed}` by the run's seed (default: mpirun with scripts/calibrate.sh's transport and binding).
    #[arg(long)]
    launcher: Option<String>,
    /// HPL's residual threshold of the real runs (≤ 0 skips the check: for a launcher that
    /// runs a simulation with modelled BLAS, as the tests do).
    #[arg(long, default_value_t = 16.0, allow_hyphen_values = true)]
    real_threshold: f64,
    /// Keep OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE for the real runs (by default both are unset, as
    /// scripts/calibrate.sh does for the calibration).
    #[arg(long)]
    keep_blas_env: bool,
    /// Run the real runs under `nice -n N`.
    #[arg(long, default_value_t = 0)]
    nice: i32,
    /// Time limit of one real run or simulation (s).
    #[arg(long, default_value_t = 900)]
    timeout: u64,
    /// Simulation settings `key:value` (repeatable); replaces the defaults (the README says why each).
    #[arg(long = "sim-cfg")]
    sim_cfg: Vec<String>,
    /// Calibration directories (repeatable; scripts/calibrate.sh --out, a BLAS trace directory):
    /// the first network-*.csv is checked through smpirun (ping-pong), every compute file's calls
    /// against the model.
    #[arg(long)]
    calibration: Vec<PathBuf>,
    /// calib_net built with smpicc (make -C apps/calibration smpi).
    #[arg(long)]
    calib_net_sim: Option<PathBuf>,
    /// A held-out ping-pong measurement (calib_net --per-quarter-decade Q, all kinds interleaved as in the calibration,
    /// with its own seed, not given to smpi-fit): simulated with the same arguments under
    /// smpirun and compared size by size; the ping-pong target is judged on it.
    #[arg(long, value_name = "FILE")]
    pingpong_check: Option<PathBuf>,
    /// The machine probe run before every real run with the same launcher (apps/calibration's
    /// calib_probe: HPL's update dgemm on every core at once, a fraction of a second), to see
    /// whether the machine kept the speed it had when calibrated (its `machine-probe.tsv`).
    /// Default: apps/calibration/build/calib_probe when the launcher is the default one.
    #[arg(long, conflicts_with = "no_probe")]
    probe: Option<PathBuf>,
    /// Do not run the machine probe.
    #[arg(long)]
    no_probe: bool,
    /// Skip the real runs (simulations and calibration checks only).
    #[arg(long, conflicts_with_all = ["real_only", "real_from"])]
    skip_real: bool,
    /// Only the real runs (no model needed): measure them (with `--block`, one block of their
    /// order) and write `OUT/runs/real-block-I-of-K.json` for a later `--real-from`. Lets a
    /// script measure the real runs in blocks between the parts of a calibration, so that both
    /// see the same machine states (scripts/validate-here.sh --interleave).
    #[arg(long, conflicts_with = "real_from")]
    real_only: bool,
    /// With `--real-only`: measure block I of K of the seeded run order (contiguous pieces
    /// whose sizes differ by at most one).
    #[arg(long, value_name = "I/K", requires = "real_only")]
    block: Option<String>,
    /// Take the real runs from files of `--real-only` (repeatable: every block once) instead of
    /// running them; they must be of the same configurations, runs per configuration, seed and
    /// real program.
    #[arg(long, value_name = "FILE")]
    real_from: Vec<PathBuf>,
    /// A traced real run of HPL (repeatable): a directory with HPL's `HPL.dat` and `out.txt` and
    /// one trace CSV per rank in `csv/` (calibrate/trace/blas_trace.c, as scripts/validate-here.sh
    /// makes them). Each traced configuration is simulated once with its own HPL.dat and the
    /// report sets every kernel's simulated total beside the measured ones: which model term a
    /// prediction error comes from, measured on the program itself.
    #[arg(long, value_name = "DIR")]
    traced_run: Vec<PathBuf>,
    /// Markdown files whose text goes into the report's Notes (repeatable).
    #[arg(long = "note")]
    notes: Vec<PathBuf>,
}

/// The workspace root: the parent of `target/` that holds this executable,
/// else the current directory.
fn workspace_root() -> PathBuf {
    std::env::current_exe()
        .ok()
        .and_then(|e| {
            e.ancestors()
                .find(|a| a.file_name().is_some_and(|n| n == "target"))
                .and_then(|t| t.parent().map(Path::to_path_buf))
        })
        .filter(|r| r.join("apps/hpl").is_dir())
        .unwrap_or_else(|| std::env::current_dir().unwrap_or_else(|_| ".".into()))
}

fn sh_first_line(cmd: &str, args: &[&str]) -> String {
    std::process::Command::new(cmd)
        .args(args)
        .output()
        .ok()
        .map(|o| {
            let s = String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr);
            s.lines()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("")
                .trim()
                .to_string()
        })
        .unwrap_or_default()
}

fn machine() -> Machine {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':').map(|x| x.1.trim().to_string()))
        })
        .unwrap_or_default();
    let os = std::fs::read_to_string("/etc/os-release")
        .ok()
        .and_then(|s| {
            s.lines().find_map(|l| {
                l.strip_prefix("PRETTY_NAME=")
                    .map(|v| v.trim_matches('"').to_string())
            })
        })
        .unwrap_or_default();
    Machine {
        host: this_host(),
        cpu,
        cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
        kernel: sh_first_line("uname", &["-srm"]),
        os,
    }
}

fn progress(len: u64, prefix: &str) -> ProgressBar {
    let pb = ProgressBar::new(len.max(1));
    pb.set_style(
        ProgressStyle::with_template(
            "{prefix} [{bar:32}] {percent:>3}% {elapsed_precise} ETA {eta_precise} {msg}",
        )
        .expect("a valid template")
        .progress_chars("=> "),
    );
    pb.set_prefix(prefix.to_string());
    pb
}

/// A line under the bar (and alone when stderr is not a terminal, where
/// indicatif draws nothing).
fn say(pb: &ProgressBar, line: &str) {
    pb.suspend(|| eprintln!("smpi-validate: {line}"));
}

fn fail(reason: String, f: Option<&runner::Finished>) -> Outcome {
    Outcome::Failed {
        reason,
        exit_code: f.and_then(|f| f.code),
        stderr_tail: f.map_or(String::new(), |f| tail(&f.stderr, 25)),
        stdout_tail: f.map_or(String::new(), |f| tail(&f.stdout, 10)),
    }
}

/// The outcome of an HPL run from what it printed.
fn hpl_outcome(c: &HplConfig, f: &runner::Finished) -> Outcome {
    let results = hpl::parse_output(&f.stdout);
    let mine = results
        .iter()
        .find(|r| r.n == c.n && r.nb == c.nb && r.p == c.p && r.q == c.q);
    if f.timed_out {
        return fail(format!("timed out after {:.0} s", f.wall), Some(f));
    }
    if f.code != Some(0) {
        return fail(
            format!(
                "exit code {}",
                f.code
                    .map_or("none (killed by a signal)".into(), |c| c.to_string())
            ),
            Some(f),
        );
    }
    match mine {
        Some(r) if r.passed == Some(false) => fail("HPL's residual check FAILED".into(), Some(f)),
        Some(r) => Outcome::Ok {
            seconds: r.seconds,
            gflops: hpl::hpl_gflops(c.n, r.seconds),
            printed_time: r.printed_time,
            passed: r.passed,
            phases: r.phases.clone(),
        },
        None => fail("no HPL result line for this configuration".into(), Some(f)),
    }
}

fn main() -> std::process::ExitCode {
    match run(Cli::parse()) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("smpi-validate: error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn existing(p: Option<PathBuf>, default: PathBuf, what: &str) -> anyhow::Result<PathBuf> {
    let p = p.unwrap_or(default);
    if !p.exists() {
        bail!("{what} {} does not exist", p.display());
    }
    Ok(p.canonicalize().unwrap_or(p))
}

fn run(cli: Cli) -> anyhow::Result<()> {
    let root = workspace_root();
    let started = now_utc();
    let command_line = std::env::args().collect::<Vec<_>>().join(" ");
    let file_cfg = match &cli.config {
        Some(p) => Some(hpl::ConfigFile::read(p)?),
        None => None,
    };
    let mut configs = Vec::new();
    for s in &cli.hpl {
        configs.extend(hpl::parse_spec(s, cli.nb)?);
    }
    if let Some(f) = &file_cfg {
        configs.extend(f.configs(cli.nb)?);
    }
    let configs = hpl::normalize(configs);
    let runs = cli.runs.or(file_cfg.as_ref().and_then(|f| f.runs)).unwrap_or(6);
    let replicas = cli
        .replicas
        .or(file_cfg.as_ref().and_then(|f| f.replicas))
        .unwrap_or(3)
        .max(1);
    if configs.is_empty() && cli.calibration.is_empty() {
        bail!("nothing to validate: give --hpl PxQ:N,... , --config FILE or --calibration DIR");
    }
    let block = match &cli.block {
        Some(b) => blocks::Block::parse(b)?,
        None => blocks::Block::WHOLE,
    };
    if cli.real_only && configs.is_empty() {
        bail!("--real-only: no HPL configuration to run (give --hpl or --config)");
    }
    // The real-only step runs before any fit: no model yet.
    let (model, platform, model_set) = if cli.real_only {
        (PathBuf::new(), PathBuf::new(), None)
    } else {
        let model = existing(cli.model.clone(), PathBuf::new(), "model file")?;
        let platform = existing(cli.platform.clone(), PathBuf::new(), "platform file")?;
        let set = models::ModelSet::load(&model).map_err(|e| anyhow::anyhow!("{e}"))?;
        (model, platform, Some(set))
    };
    // Blocks measured earlier are read first: bad input stops before any simulation.
    let mut measured_blocks = Vec::new();
    for f in &cli.real_from {
        measured_blocks.push((f.clone(), blocks::RealRunsFile::read(f)?));
    }
    let merged = if measured_blocks.is_empty() {
        None
    } else {
        Some(blocks::merge(&measured_blocks, &configs, runs, cli.seed)?)
    };
    let smpirun = existing(
        cli.smpirun.clone(),
        root.join("target/release/smpirun"),
        "smpirun",
    )?;
    let gen_dat = existing(
        cli.gen_dat.clone(),
        root.join("apps/hpl/gen_dat.sh"),
        "gen_dat.sh",
    )?;
    let sim_xhpl = if configs.is_empty() || cli.real_only {
        PathBuf::new()
    } else {
        existing(
            cli.sim_xhpl.clone(),
            root.join("apps/hpl/build/xhpl"),
            "simulated xhpl (apps/hpl/build.sh)",
        )?
    };
    let real_xhpl = if configs.is_empty() || cli.skip_real || merged.is_some() {
        cli.real_xhpl.clone().unwrap_or_default()
    } else {
        existing(
            cli.real_xhpl.clone(),
            root.join("apps/hpl/build-real/xhpl"),
            "real xhpl (apps/hpl/build-real.sh)",
        )?
    };
    let timeout = Duration::from_secs(cli.timeout.max(1));
    std::fs::create_dir_all(cli.out.join("runs"))
        .with_context(|| format!("{}: cannot create it", cli.out.display()))?;
    let out = cli.out.canonicalize()?;
    // The held-out ping-pong file is read first: bad input stops before any run.
    let heldout_measured = match &cli.pingpong_check {
        Some(path) => {
            let f = read_file(path, 0)?;
            if !matches!(f.table, Table::Network(_)) || calib::pingpong_by_size(&f).is_empty() {
                bail!(
                    "{}: --pingpong-check needs a network calibration file with pingpong rows (calib_net --kinds pingpong)",
                    path.display()
                );
            }
            Some(f)
        }
        None => None,
    };
    let launcher = RealLauncher {
        command: match &cli.launcher {
            Some(l) => l.split_whitespace().map(str::to_string).collect(),
            None => runner::default_mpirun(runner::is_root()),
        },
        program: real_xhpl.clone(),
        keep_blas_env: cli.keep_blas_env,
        nice: cli.nice,
    };
    if launcher.command.is_empty() {
        bail!("--launcher is empty");
    }
    let (sim_cfg, mut settings): (Vec<String>, Vec<String>) = if cli.sim_cfg.is_empty() {
        DEFAULT_SIM_CFG
            .iter()
            .map(|(k, why)| (k.to_string(), format!("`{k}`: {why}")))
            .unzip()
    } else {
        (
            cli.sim_cfg.clone(),
            cli.sim_cfg
                .iter()
                .map(|k| format!("`{k}` (given with --sim-cfg)"))
                .collect(),
        )
    };
    settings.push(model_probe_setting(&model));
    let replica_seeds: Vec<u64> = (1..=replicas as u64).collect();
    let sim_command = |c: &HplConfig, seed: u64, json: Option<&Path>| -> std::process::Command {
        let mut cmd = std::process::Command::new(&smpirun);
        cmd.arg("-platform")
            .arg(&platform)
            .arg("-model")
            .arg(&model)
            .arg("-np")
            .arg(c.ranks().to_string())
            .arg(format!("--cfg=smpi/seed:{seed}"));
        for k in &sim_cfg {
            cmd.arg(format!("--cfg={k}"));
        }
        if let Some(j) = json {
            cmd.arg("--json").arg(j);
        }
        cmd.arg(&sim_xhpl);
        cmd
    };

    // ------------------------------------------------------------ real runs
    let mut software = Software {
        mpi: sh_first_line(&launcher.command[0], &["--version"]),
        blas: sh_first_line(
            "dpkg-query",
            &["-W", "-f=${Package} ${Version}\n", "libopenblas0-pthread"],
        ),
        ..Software::default()
    };
    for v in runner::BLAS_ENV_UNSET {
        let before = std::env::var(v).unwrap_or_else(|_| "unset".into());
        let what = if cli.keep_blas_env {
            "kept"
        } else {
            "unset for the runs"
        };
        software
            .openblas_env
            .insert(v.to_string(), format!("{before} ({what})"));
    }
    software
        .openblas_env
        .insert("OPENBLAS_NUM_THREADS".into(), "1 (set for the runs)".into());
    if let Some(dir) = real_xhpl.parent() {
        if let Ok(s) = std::fs::read_to_string(dir.join("BUILD_INFO")) {
            for l in s.lines() {
                if let Some((k, v)) = l.split_once('=') {
                    software.hpl_build.insert(k.to_string(), v.to_string());
                }
            }
        }
    }
    // The machine probe: its options come from the calibration's own probe, so that both
    // measure the same thing.
    let calibration_probe = match cli.calibration.first().map(|d| d.join("machine-probe.tsv")) {
        Some(f) if f.exists() => Some(runner::read_probe_tsv(&f)?),
        _ => None,
    };
    let probe = if cli.no_probe || cli.skip_real || merged.is_some() {
        None
    } else if let Some(p) = &cli.probe {
        Some(existing(
            Some(p.clone()),
            PathBuf::new(),
            "machine probe (--probe)",
        )?)
    } else {
        let default = root.join("apps/calibration/build/calib_probe");
        (cli.launcher.is_none() && default.exists()).then_some(default)
    };
    let probe_args: Vec<String> = calibration_probe
        .as_ref()
        .map(|c| c.args.clone())
        .unwrap_or_default();
    let load_before = runner::loadavg();
    let mut real_runs: Vec<RealRun> = Vec::new();
    if !cli.skip_real && merged.is_none() && !configs.is_empty() {
        let whole = runner::plan(configs.len(), runs, cli.seed);
        let positions = block.positions(whole.len());
        let plan = &whole[positions.clone()];
        let total_cost: f64 = plan.iter().map(|p| configs[p.config].cost()).sum();
        let unit = total_cost / 10_000.0;
        let pb = progress(10_000, "real runs");
        if !std::io::stderr().is_terminal() {
            pb.set_draw_target(indicatif::ProgressDrawTarget::hidden());
        }
        say(
            &pb,
            &format!(
                "{} real runs ({} configurations × {runs}) in one random order (seed {}){}: {}",
                plan.len(),
                configs.len(),
                cli.seed,
                if block == blocks::Block::WHOLE {
                    String::new()
                } else {
                    format!(
                        ", block {}/{} (positions {}..{} of {})",
                        block.index,
                        block.count,
                        positions.start,
                        positions.end,
                        whole.len()
                    )
                },
                launcher.shown(configs[0].ranks())
            ),
        );
        let t0 = Instant::now();
        let mut done_cost = 0.0;
        for (k, p) in plan.iter().enumerate() {
            let position = positions.start + k;
            let c = configs[p.config];
            pb.set_message(format!("{}/{}: {}", k + 1, plan.len(), c.label()));
            let dir = out.join("runs").join(format!("real-{position:03}"));
            std::fs::create_dir_all(&dir)?;
            let (probe_gflops, probe_gather_ns) = match &probe {
                None => (Vec::new(), Vec::new()),
                Some(prog) => {
                    let cmd =
                        launcher.command_of(prog, &probe_args, c.ranks(), cli.seed * 1000 + position as u64);
                    match runner::run(cmd, &dir, timeout) {
                        Ok(f) if f.success() => {
                            let _ = std::fs::write(dir.join("probe.txt"), &f.stdout);
                            let gflops = runner::probe_gflops(&f.stdout).unwrap_or_else(|| {
                                say(&pb, "warning: the machine probe printed no PROBE_GFLOPS line");
                                Vec::new()
                            });
                            (gflops, runner::probe_gather_ns(&f.stdout).unwrap_or_default())
                        }
                        Ok(f) => {
                            say(
                                &pb,
                                &format!("warning: the machine probe failed: {}", tail(&f.stderr, 3)),
                            );
                            (Vec::new(), Vec::new())
                        }
                        Err(e) => {
                            say(&pb, &format!("warning: the machine probe did not run: {e:#}"));
                            (Vec::new(), Vec::new())
                        }
                    }
                }
            };
            let start = now_utc();
            let load = runner::loadavg();
            let (outcome, wall, core) = match runner::write_hpl_dat(&gen_dat, &dir, &c, cli.real_threshold) {
                Err(e) => (fail(format!("cannot write HPL.dat: {e:#}"), None), 0.0, None),
                Ok(()) => match runner::run(
                    launcher.command(c.ranks(), cli.seed * 1000 + position as u64),
                    &dir,
                    timeout,
                ) {
                    Err(e) => (fail(format!("{e:#}"), None), 0.0, None),
                    Ok(f) => {
                        let _ = std::fs::write(dir.join("stdout.txt"), &f.stdout);
                        let _ = std::fs::write(dir.join("stderr.txt"), &f.stderr);
                        let core = runner::blas_core(&f.stderr).or_else(|| runner::blas_core(&f.stdout));
                        (hpl_outcome(&c, &f), f.wall, core)
                    }
                },
            };
            done_cost += c.cost();
            pb.set_position((done_cost / unit).round() as u64);
            let eta = if done_cost > 0.0 {
                t0.elapsed().as_secs_f64() * (total_cost - done_cost) / done_cost
            } else {
                0.0
            };
            say(
                &pb,
                &format!(
                    "run {}/{} {}: {} (load {}; ETA {:.0} s)",
                    k + 1,
                    plan.len(),
                    c.label(),
                    match &outcome {
                        Outcome::Ok { gflops, seconds, .. } =>
                            format!("{gflops:.2} Gflop/s in {seconds:.3} s"),
                        Outcome::Failed { reason, .. } => format!("FAILED: {reason}"),
                    },
                    load.map_or("?".into(), |l| format!("{:.2}", l[0])),
                    eta
                ),
            );
            real_runs.push(RealRun {
                config: p.config,
                rep: p.rep,
                position,
                start,
                wall,
                load_before: load,
                blas_core: core,
                probe_gflops,
                probe_gather_ns,
                outcome,
            });
        }
        pb.finish_and_clear();
    }
    let mut load = [load_before, runner::loadavg()];
    let mut real_command = if cli.skip_real {
        "skipped (--skip-real)".into()
    } else {
        configs
            .first()
            .map_or(String::new(), |c| launcher.shown(c.ranks()))
    };
    let mut real_program = FileRef::of(&real_xhpl);
    let mut real_blocks = Vec::new();
    if let Some(m) = merged {
        real_blocks = m.blocks;
        eprintln!(
            "smpi-validate: {} real runs from {} block file(s) (--real-from), not run again",
            m.real_runs.len(),
            measured_blocks.len()
        );
        real_runs = m.real_runs;
        software = m.software;
        load = m.load;
        real_command = m.real_command;
        real_program = m.real_program;
    }
    let mut cores: Vec<String> = real_runs.iter().filter_map(|r| r.blas_core.clone()).collect();
    cores.sort();
    cores.dedup();
    software.blas_kernels = cores;
    if cli.real_only {
        let file = blocks::RealRunsFile {
            format: blocks::FORMAT.into(),
            configs: configs.clone(),
            runs_per_config: runs,
            order_seed: cli.seed,
            block,
            real_command,
            real_program,
            software,
            load,
            started,
            finished: now_utc(),
            real_runs,
        };
        let path = out
            .join("runs")
            .join(format!("real-block-{}-of-{}.json", block.index, block.count));
        write_atomically(&[(path.clone(), serde_json::to_vec_pretty(&file)?)])?;
        let ok = file
            .real_runs
            .iter()
            .filter(|r| matches!(r.outcome, Outcome::Ok { .. }))
            .count();
        eprintln!(
            "smpi-validate: {} of {} real runs succeeded; wrote {} (for --real-from)",
            ok,
            file.real_runs.len(),
            path.display()
        );
        return Ok(());
    }
    let model_set = model_set.expect("loaded unless --real-only");

    // ------------------------------------------------------------ simulations
    let mut sim_runs: Vec<SimRun> = Vec::new();
    if !configs.is_empty() {
        let pb = progress((configs.len() * replicas) as u64, "simulations");
        if !std::io::stderr().is_terminal() {
            pb.set_draw_target(indicatif::ProgressDrawTarget::hidden());
        }
        for (i, c) in configs.iter().enumerate() {
            for &seed in &replica_seeds {
                pb.set_message(format!("{} seed {seed}", c.label()));
                let dir = out
                    .join("runs")
                    .join(format!("sim-{}x{}-{}-{}-s{seed}", c.p, c.q, c.n, c.nb));
                std::fs::create_dir_all(&dir)?;
                let json = dir.join("smpirun.json");
                let _ = std::fs::remove_file(&json);
                let (outcome, wall, st, kernels, extrapolated) =
                    match runner::write_hpl_dat(&gen_dat, &dir, c, -1.0) {
                        Err(e) => (
                            fail(format!("cannot write HPL.dat: {e:#}"), None),
                            0.0,
                            None,
                            BTreeMap::new(),
                            BTreeMap::new(),
                        ),
                        Ok(()) => match runner::run(sim_command(c, seed, Some(&json)), &dir, timeout) {
                            Err(e) => (
                                fail(format!("{e:#}"), None),
                                0.0,
                                None,
                                BTreeMap::new(),
                                BTreeMap::new(),
                            ),
                            Ok(f) => {
                                let _ = std::fs::write(dir.join("stdout.txt"), &f.stdout);
                                let _ = std::fs::write(dir.join("stderr.txt"), &f.stderr);
                                let j: serde_json::Value = std::fs::read_to_string(&json)
                                    .ok()
                                    .and_then(|t| serde_json::from_str(&t).ok())
                                    .unwrap_or(serde_json::Value::Null);
                                let kernels = traced::json_kernels(&j);
                                let extrapolated = runner::extrapolated(&j["extrapolated"]);
                                (
                                    hpl_outcome(c, &f),
                                    f.wall,
                                    j["simulated_time"].as_f64(),
                                    kernels,
                                    extrapolated,
                                )
                            }
                        },
                    };
                say(
                    &pb,
                    &format!(
                        "simulation {} seed {seed}: {} (wall {wall:.1} s)",
                        c.label(),
                        match &outcome {
                            Outcome::Ok { gflops, seconds, .. } =>
                                format!("{gflops:.2} Gflop/s in {seconds:.3} s"),
                            Outcome::Failed { reason, .. } => format!("FAILED: {reason}"),
                        }
                    ),
                );
                sim_runs.push(SimRun {
                    config: i,
                    seed,
                    wall,
                    simulated_time: st,
                    kernels,
                    extrapolated,
                    outcome,
                });
                pb.inc(1);
            }
        }
        pb.finish_and_clear();
    }

    // ------------------------------------------------------------ traced runs
    let mut traced_notes = Vec::new();
    let mut traced_runs = Vec::new();
    for d in &cli.traced_run {
        match traced::read_run(d) {
            Ok(r) => traced_runs.push(r),
            Err(e) => traced_notes.push(format!("{e:#}")),
        }
    }
    let mut traced_checks = Vec::new();
    for (c, runs) in traced::group(&traced_runs) {
        let dir = out
            .join("runs")
            .join(format!("traced-sim-{}x{}-{}-{}", c.p, c.q, c.n, c.nb));
        eprintln!("smpi-validate: traced runs: simulating {} ...", c.label());
        let simulated = (|| -> Result<traced::Simulated, String> {
            std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
            // The traced run's own input, so that both run the same HPL, without
            // the residual check (a negative threshold): its calls are not in
            // the traced totals either.
            let dat = Path::new(&runs[0].dir).join("HPL.dat");
            let text = std::fs::read_to_string(&dat).map_err(|e| format!("{}: {e}", dat.display()))?;
            std::fs::write(dir.join("HPL.dat"), traced::without_residual_check(&text))
                .map_err(|e| format!("{}: {e}", dir.display()))?;
            let json = dir.join("smpirun.json");
            let _ = std::fs::remove_file(&json);
            let f =
                runner::run(sim_command(&c, 1, Some(&json)), &dir, timeout).map_err(|e| format!("{e:#}"))?;
            let _ = std::fs::write(dir.join("stdout.txt"), &f.stdout);
            let _ = std::fs::write(dir.join("stderr.txt"), &f.stderr);
            let gflops = hpl_outcome(&c, &f)
                .gflops()
                .ok_or_else(|| format!("the simulation failed: {}", tail(&f.stderr, 5)))?;
            let j: serde_json::Value = std::fs::read_to_string(&json)
                .ok()
                .and_then(|t| serde_json::from_str(&t).ok())
                .ok_or_else(|| format!("{}: no summary", json.display()))?;
            Ok(traced::Simulated::from_json(gflops, &j))
        })();
        traced_checks.push(traced::compare(c, &runs, simulated));
    }

    // ------------------------------------------------------------ calibration programs
    let calib_net_prog = cli
        .calib_net_sim
        .clone()
        .unwrap_or_else(|| root.join("apps/calibration/build/smpi/calib_net"));
    // The measured calib_net run's design under smpirun with the fitted model;
    // `Err` is the report's reason.
    let simulate = |measured: &CalibrationFile, what: &str, dir: &str| -> Result<CalibrationFile, String> {
        if !calib_net_prog.exists() {
            return Err(format!(
                "{} is missing (make -C apps/calibration smpi)",
                calib_net_prog.display()
            ));
        }
        eprintln!("smpi-validate: {what}: calib_net under smpirun with the fitted model ...");
        simulate_calib_net(
            &smpirun,
            &platform,
            &model,
            &calib_net_prog,
            measured,
            &out.join("runs").join(dir),
            timeout,
        )
        .map_err(|e| format!("the simulated calib_net run ({what}) failed: {e:#}"))
    };
    let mut pingpong_heldout = None;
    let mut pingpong_heldout_note = None;
    if let Some(measured) = heldout_measured {
        match simulate(&measured, "held-out ping-pong check", "pingpong-check-sim") {
            Ok(sim) => pingpong_heldout = Some(calib::compare_pingpong(&measured, &sim)),
            Err(e) => pingpong_heldout_note = Some(e),
        }
    }
    let mut pingpong = None;
    let mut pingpong_note = None;
    let mut kernels = Vec::new();
    if !cli.calibration.is_empty() {
        let mut net = None;
        let mut comp = Vec::new();
        for dir in &cli.calibration {
            let (n, c) = calibration_files(dir)?;
            net = net.or(n);
            comp.extend(c);
        }
        let dir = &cli.calibration[0];
        if !comp.is_empty() {
            kernels = calib::compare_kernels(&comp, &model_set);
        }
        match net {
            None => pingpong_note = Some(format!("no network-*.csv in {}", dir.display())),
            Some(measured) => match simulate(&measured, "ping-pong", "calib-net-sim") {
                Ok(sim) => {
                    pingpong = Some(calib::compare_pingpong(&measured, &sim));
                    // Held-out sizes measured among the calibration's: the check
                    // under the same machine states (a separate --pingpong-check
                    // file takes precedence).
                    if pingpong_heldout.is_none() && !measured.heldout.is_empty() {
                        pingpong_heldout = Some(calib::compare_heldout(&measured, &sim));
                        pingpong_heldout_note = None;
                    }
                }
                Err(e) => {
                    if pingpong_heldout.is_none() && !measured.heldout.is_empty() {
                        pingpong_heldout_note = Some(e.clone());
                    }
                    pingpong_note = Some(e);
                }
            },
        }
    }

    // ------------------------------------------------------------ analysis and outputs
    let results = analysis::results(&configs, &real_runs, &sim_runs);
    let orderings = analysis::orderings(&results);
    let phases = analysis::phases(configs.len(), &real_runs, &sim_runs);
    let machine_state = analysis::machine_state(&real_runs, &results, calibration_probe.as_ref());
    let mut notes = Vec::new();
    for n in &cli.notes {
        notes.push(
            std::fs::read_to_string(n).with_context(|| format!("{}: cannot read the note", n.display()))?,
        );
    }
    let shown_sim = configs.first().map_or(String::new(), |c| {
        let cmd = sim_command(c, 1, None);
        std::iter::once(cmd.get_program().to_string_lossy().into_owned())
            .chain(cmd.get_args().map(|a| a.to_string_lossy().into_owned()))
            .collect::<Vec<_>>()
            .join(" ")
    });
    let v = Validation {
        tool: format!("smpi-validate {}", env!("CARGO_PKG_VERSION")),
        command_line,
        started,
        finished: now_utc(),
        machine: machine(),
        software,
        real_command,
        simulation_command: shown_sim,
        simulation_settings: settings,
        order_seed: cli.seed,
        real_blocks,
        replica_seeds,
        runs_per_config: if cli.skip_real { 0 } else { runs },
        model: FileRef::of(&model),
        platform: FileRef::of(&platform),
        real_program,
        simulated_program: FileRef::of(&sim_xhpl),
        configs: configs.clone(),
        real_runs,
        sim_runs,
        results,
        orderings,
        phases,
        pingpong,
        pingpong_note,
        pingpong_heldout,
        pingpong_heldout_note,
        kernels,
        traced: traced_checks,
        traced_notes,
        load,
        probe: probe.as_ref().map(|p| p.display().to_string()),
        calibration_probe,
        machine_state,
        notes,
    };
    let json = serde_json::to_vec_pretty(&v.to_json())?;
    write_atomically(&[(out.join("validation.json"), json)])?;
    let files = report::write(&v, &out)?;
    print_table(&v);
    eprintln!(
        "smpi-validate: wrote {} and {} ({} files)",
        out.join("validation.json").display(),
        out.join("report.md").display(),
        files.len()
    );
    Ok(())
}

/// The network file (the first `network-*.csv`) and the compute files of a
/// calibration directory.
fn calibration_files(dir: &Path) -> anyhow::Result<(Option<CalibrationFile>, Vec<CalibrationFile>)> {
    let mut names: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("{}: cannot list it", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "csv"))
        .collect();
    names.sort();
    let mut net = None;
    let mut comp = Vec::new();
    for (i, p) in names.iter().enumerate() {
        let f = read_file(p, i)?;
        match f.table {
            Table::Network(_) if net.is_none() && f.meta("simulated") != "1" => net = Some(f),
            Table::Compute(_) => comp.push(f),
            _ => {}
        }
    }
    Ok((net, comp))
}

/// The report's line on `smpi/probe-sees`: the fitted model's setting (measured by
/// `calib_net`'s `iprobe_arrived` rows), or smpirun's default when the model has none.
fn model_probe_setting(model: &Path) -> String {
    let set = std::fs::read_to_string(model)
        .ok()
        .and_then(|t| t.parse::<toml::Table>().ok())
        .and_then(|t| {
            t.get("config")?
                .get("smpi/probe-sees")?
                .as_str()
                .map(str::to_string)
        });
    match set {
        Some(v) => format!(
            "`smpi/probe-sees:{v}` (the model's `[config]`): measured by calib_net's `iprobe_arrived` rows (the fit \
             report gives the count); Open MPI's ob1 matches an MPI_Iprobe before it progresses, so a message that \
             arrived after the previous MPI call is seen one poll late, and HPL polls its panel broadcast between \
             update chunks"
        ),
        None => "`smpi/probe-sees` not in the model (a calibration without `iprobe_arrived` rows): smpirun's \
                 default `sent`, SimGrid's; for Open MPI pass `--sim-cfg smpi/probe-sees:progressed` with the \
                 other settings"
            .into(),
    }
}

/// Runs calib_net (smpicc build) under smpirun with the measured run's design.
fn simulate_calib_net(
    smpirun: &Path,
    platform: &Path,
    model: &Path,
    prog: &Path,
    measured: &CalibrationFile,
    dir: &Path,
    timeout: Duration,
) -> anyhow::Result<CalibrationFile> {
    std::fs::create_dir_all(dir)?;
    let csv = dir.join("network-simulated.csv");
    let _ = std::fs::remove_file(&csv);
    let mut cmd = std::process::Command::new(smpirun);
    cmd.arg("-platform")
        .arg(platform)
        .arg("-model")
        .arg(model)
        .arg("-np")
        .arg("2")
        .arg("--cfg=smpi/simulate-computation:no")
        .arg(prog)
        .args(calib::calib_net_args(measured))
        .arg("--out")
        .arg(&csv);
    let f = runner::run(cmd, dir, timeout)?;
    let _ = std::fs::write(dir.join("stdout.txt"), &f.stdout);
    let _ = std::fs::write(dir.join("stderr.txt"), &f.stderr);
    if !f.success() {
        bail!(
            "exit code {:?}{}: {}",
            f.code,
            if f.timed_out { " (timed out)" } else { "" },
            tail(&f.stderr, 10)
        );
    }
    Ok(read_file(&csv, 0)?)
}

/// The error table on standard output.
fn print_table(v: &Validation) {
    if !v.results.is_empty() {
        println!(
            "{:<20} {:>5} {:>10} {:>21} {:>10} {:>9} {:>6} {:>7}  met",
            "configuration", "runs", "measured", "95% CI", "predicted", "error", "in CI", "target"
        );
        for r in &v.results {
            let m = r.measured.as_ref();
            println!(
                "{:<20} {:>5} {:>10} {:>21} {:>10} {:>9} {:>6} {:>7}  {}",
                r.config.label(),
                format!("{}/{}", m.map_or(0, |m| m.runs), r.runs_attempted),
                m.map_or("-".into(), |m| format!("{:.2}", m.median_gflops)),
                m.and_then(|m| m.ci)
                    .map_or("no CI".into(), |c| format!("[{:.2}, {:.2}]", c[0], c[1])),
                r.predicted
                    .as_ref()
                    .map_or("-".into(), |p| format!("{:.2}", p.gflops)),
                r.relative_error
                    .map_or("-".into(), |e| format!("{:+.2}%", 100.0 * e)),
                match r.within_ci {
                    Some(true) => "yes",
                    Some(false) => "no",
                    None => "-",
                },
                r.tolerance.map_or("-".into(), |t| format!("±{:.0}%", 100.0 * t)),
                match r.meets_target {
                    Some(true) => "yes",
                    Some(false) => "NO",
                    None => "-",
                }
            );
        }
        for o in &v.orderings {
            println!(
                "ordering N={} NB={}: measured {} faster{}, predicted {} faster: {}",
                o.n,
                o.nb,
                o.measured_faster,
                match o.significant {
                    Some(true) => " (significant)",
                    Some(false) => " (not significant: the intervals overlap)",
                    None => "",
                },
                o.predicted_faster,
                if o.agrees { "agrees" } else { "DISAGREES" }
            );
        }
        let m = &v.machine_state;
        if let (Some(c), Some(r), Some([lo, hi])) = (
            m.calibration_probe_gflops,
            m.runs_probe_gflops,
            m.runs_probe_range,
        ) {
            println!(
                "machine probe (calib_probe, HPL's update dgemm): {c:.2} Gflop/s during the calibration, \
                 {r:.2} before the real runs (range {lo:.2}-{hi:.2}): {:+.1}%",
                100.0 * (r / c - 1.0)
            );
        }
        if let (Some(c), Some(r)) = (m.calibration_gather_ns, m.runs_gather_ns) {
            println!(
                "machine probe (calib_probe, row gather): {c:.2} ns an element during the calibration, \
                 {r:.2} before the real runs: {:+.1}% speed",
                100.0 * (c / r - 1.0)
            );
        }
        for w in &m.warnings {
            println!("{w}");
        }
        let outside: Vec<String> = v
            .configs
            .iter()
            .enumerate()
            .filter_map(|(i, c)| {
                let s = v
                    .sim_runs
                    .iter()
                    .find(|s| s.config == i && !s.extrapolated.is_empty())?;
                Some(format!(
                    "{} ({})",
                    c.label(),
                    s.extrapolated
                        .iter()
                        .map(|(k, e)| match e.share_of_time {
                            Some(p) => format!("{k} {}", analysis::percent2(p)),
                            None => k.clone(),
                        })
                        .collect::<Vec<_>>()
                        .join(", ")
                ))
            })
            .collect();
        if !outside.is_empty() {
            let largest = v
                .sim_runs
                .iter()
                .flat_map(|s| s.extrapolated.values())
                .map(|e| e.share_of_time.unwrap_or(100.0))
                .fold(0.0, f64::max);
            println!(
                "model: called outside its calibrated ranges in {} of {} configurations, for at most {} of a kernel's \
                 modelled time (report: \"Where the model extrapolates\"): {}",
                outside.len(),
                v.configs.len(),
                analysis::percent2(largest),
                outside.join("; ")
            );
        }
    }
    if let Some(p) = &v.pingpong_heldout {
        let misses: Vec<String> = p
            .rows
            .iter()
            .filter(|r| !r.within)
            .map(|r| {
                format!(
                    "{} B {:+.1}%{}",
                    r.size,
                    100.0 * r.relative_error,
                    if r.significant_miss == Some(true) {
                        " (significant)"
                    } else {
                        ""
                    }
                )
            })
            .collect();
        println!(
            "ping-pong (held-out check, target): {} sizes, >= {} calls each, simulated median within 5% of the measured median at {}/{}{}; {} significant miss(es); worst {:+.2}%{}",
            p.rows.len(),
            p.min_calls,
            p.sizes_within,
            p.rows.len(),
            p.widest_ci
                .map_or(String::new(), |w| format!(" (measured medians' 95% CI within ±{:.1}%)", 100.0 * w)),
            p.significant_misses,
            100.0 * p.worst_size,
            if misses.is_empty() {
                String::new()
            } else {
                format!("; misses: {}", misses.join(", "))
            }
        );
    } else if let Some(n) = &v.pingpong_heldout_note {
        println!("ping-pong (held-out check): not checked: {n}");
    }
    if let Some(p) = &v.pingpong {
        println!(
            "ping-pong (in-sample, the calibration's own sizes): {} sizes, simulated median within 5% of the measured median at {} ({:.1}%), inside its 95% CI at {}/{}; quarter-decade bins within 5%: {}/{} (worst {:+.2}%)",
            p.rows.len(),
            p.sizes_within,
            100.0 * p.sizes_within as f64 / p.rows.len().max(1) as f64,
            p.sizes_within_ci,
            p.sizes_with_ci,
            p.bins_within,
            p.bins.len(),
            100.0 * p.worst_bin
        );
    } else if let Some(n) = &v.pingpong_note {
        println!("ping-pong: not checked: {n}");
    }
    let totals = calib::kernel_totals(&v.kernels);
    for ((k, d), (n, m, p)) in &totals {
        if k == "dgemm" {
            println!(
                "dgemm ({d}): {n} measured calls, Σ predicted / Σ measured − 1 = {:+.2}%",
                100.0 * (p / m - 1.0)
            );
        }
    }
}
