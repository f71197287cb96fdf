//! `smpi-study`: run what-if studies with smpirun (see `study/README.md`).

#![warn(missing_docs, unreachable_pub, unsafe_op_in_unsafe_fn)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use clap::{Parser, Subcommand, ValueEnum};

use study::design;
use study::local::{install_interrupt_handler, run_local};
use study::report;
use study::results::{read_jsonl, ResultsDir, Status, StudyMeta};
use study::runner::{check_inputs, Env};
use study::slurm::{run_point, run_slurm, SlurmOptions};
use study::spec::{PointConfig, Study};

/// Run what-if studies with smpirun: sweeps over platform, --cfg, model and program
/// parameters, replicas that expose chaos, resumable CSV/JSONL results, plots.
#[derive(Parser, Debug)]
#[command(name = "smpi-study", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Executor {
    /// On this machine's cores.
    Local,
    /// As a Slurm job array (sbatch --array), one task per run.
    Slurm,
}

#[derive(Subcommand, Debug)]
enum Cmd {
    /// Run every point of a study (resuming: runs already in the results are not redone).
    Run {
        /// The study file (TOML, see study/README.md).
        study: PathBuf,
        /// Results directory [default: the study's `output`, else results/<name> next to the study file].
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// Parallel simulations (local executor) [default: all cores].
        #[arg(short, long)]
        jobs: Option<usize>,
        /// Where the runs go.
        #[arg(long, value_enum, default_value_t = Executor::Local)]
        executor: Executor,
        /// Run again the runs that failed before.
        #[arg(long)]
        retry_failed: bool,
        /// The simulator [default: smpirun next to smpi-study, else in PATH].
        #[arg(long)]
        smpirun: Option<PathBuf>,
        /// Print the runs and their commands' settings, run nothing.
        #[arg(long)]
        dry_run: bool,
        /// A line per finished run even with a progress bar.
        #[arg(short, long)]
        verbose: bool,
        /// Slurm: seconds between two squeue polls.
        #[arg(long, default_value_t = 2.0)]
        slurm_poll: f64,
        /// Slurm: seconds to wait for the jobs before giving up (they keep running).
        #[arg(long, default_value_t = 86400.0)]
        slurm_timeout: f64,
        /// Slurm: extra sbatch argument (repeatable), e.g. --sbatch-arg=--partition=big.
        #[arg(long = "sbatch-arg", allow_hyphen_values = true)]
        sbatch_args: Vec<String>,
        /// Slurm: at most this many tasks at once (--array=...%N).
        #[arg(long)]
        slurm_max_running: Option<usize>,
    },
    /// Plots (PNG, SVG) and a Markdown summary of a study's results.
    Report {
        /// A results directory (or its results.jsonl).
        results: PathBuf,
        /// Where to write [default: <results dir>/report].
        #[arg(short, long)]
        out: Option<PathBuf>,
        /// Metric to plot (repeatable) [default: the study's].
        #[arg(short, long)]
        metric: Vec<String>,
    },
    /// How far a study is: runs done, failed, missing; Slurm jobs still queued.
    Status {
        /// A study file or a results directory.
        target: PathBuf,
        /// The results directory of a study file [default: as for `run`].
        #[arg(short, long)]
        output: Option<PathBuf>,
    },
    /// One run of a results directory's study (what a Slurm array task runs).
    #[command(hide = true)]
    RunPoint {
        /// The results directory.
        results: PathBuf,
        /// The task list (one run id per line).
        #[arg(long)]
        tasks: PathBuf,
        /// Line of the task list [default: $SLURM_ARRAY_TASK_ID].
        #[arg(long)]
        index: Option<usize>,
        /// The simulator.
        #[arg(long)]
        smpirun: Option<PathBuf>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let r = match cli.command {
        Cmd::Run {
            study,
            output,
            jobs,
            executor,
            retry_failed,
            smpirun,
            dry_run,
            verbose,
            slurm_poll,
            slurm_timeout,
            sbatch_args,
            slurm_max_running,
        } => {
            let slurm = (executor == Executor::Slurm).then_some(SlurmOptions {
                poll: slurm_poll,
                timeout: slurm_timeout,
                sbatch_args,
                max_running: slurm_max_running,
                verbose,
            });
            cmd_run(
                &study,
                output.as_deref(),
                jobs,
                slurm,
                retry_failed,
                smpirun.as_deref(),
                dry_run,
                verbose,
            )
        }
        Cmd::Report { results, out, metric } => {
            cmd_report(&results, out.as_deref(), &metric).map(|_| ExitCode::SUCCESS)
        }
        Cmd::Status { target, output } => cmd_status(&target, output.as_deref()).map(|_| ExitCode::SUCCESS),
        Cmd::RunPoint {
            results,
            tasks,
            index,
            smpirun,
        } => run_point(&results, &tasks, index, smpirun.as_deref()).map(|_| ExitCode::SUCCESS),
    };
    match r {
        Ok(code) => code,
        Err(e) => {
            eprintln!("smpi-study: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn output_dir(study: &Study, explicit: Option<&Path>) -> PathBuf {
    match explicit {
        Some(p) => p.to_path_buf(),
        None => match &study.output {
            Some(o) => study.base_dir.join(o),
            None => study.base_dir.join("results").join(&study.name),
        },
    }
}

#[allow(clippy::too_many_arguments)]
fn cmd_run(
    path: &Path,
    output: Option<&Path>,
    jobs: Option<usize>,
    slurm: Option<SlurmOptions>,
    retry_failed: bool,
    smpirun: Option<&Path>,
    dry_run: bool,
    verbose: bool,
) -> Result<ExitCode> {
    let study = Study::load(path)?;
    let runs = design::runs(&study)?;
    let points = design::points(&study)?;
    for p in &points {
        let c = PointConfig::from_params(&p.params, &study.base_dir)?;
        check_inputs(&c).with_context(|| format!("point {}", p.describe()))?;
    }
    let jobs = jobs.unwrap_or_else(|| std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1));
    if dry_run {
        println!(
            "study {}: {} points x {} replicas = {} runs, in this order:",
            study.name,
            points.len(),
            study.replicas.count,
            runs.len()
        );
        for r in &runs {
            println!(
                "{:>4} {} {} replica {} (latency x {:.12}{})",
                r.order,
                r.id,
                r.point.describe(),
                r.replica,
                r.perturbation.latency_factor,
                r.perturbation
                    .seed
                    .map(|s| format!(", seed {s}"))
                    .unwrap_or_default()
            );
        }
        return Ok(ExitCode::SUCCESS);
    }
    let results = ResultsDir::create(&output_dir(&study, output))?;
    let _lock = results.lock()?;
    install_interrupt_handler();
    let env = Env::new(smpirun, &study, if slurm.is_some() { "slurm" } else { "local" })?;
    // Rows Slurm tasks wrote after an earlier submitter stopped waiting.
    results.merge_task_rows()?;
    let mut rows = results.read_rows()?;
    let ids: BTreeSet<&str> = runs.iter().map(|r| r.id.as_str()).collect();
    let foreign = rows.iter().filter(|r| !ids.contains(r.run_id.as_str())).count();
    if foreign > 0 {
        bail!(
            "{} holds {foreign} rows that are not runs of this study as it is now (the study file changed?): \
             give another --output, or move the old results away",
            results.dir.display()
        );
    }
    // One row per run: the first one recorded wins (a duplicate would come from a
    // row merged twice by hand).
    let mut seen = BTreeSet::new();
    rows.retain(|r| seen.insert(r.run_id.clone()));
    if retry_failed {
        let before = rows.len();
        rows.retain(|r| r.status == Status::Ok);
        if rows.len() < before {
            eprintln!(
                "smpi-study: {} failed runs will be run again",
                before - rows.len()
            );
        }
        results.rewrite(&rows)?;
    }
    StudyMeta::of(&study, runs.len()).save(&results, &study.text)?;
    let done: BTreeSet<String> = rows.iter().map(|r| r.run_id.clone()).collect();
    let todo: Vec<_> = runs.iter().filter(|r| !done.contains(&r.id)).cloned().collect();
    eprintln!(
        "smpi-study: study {}: {} points x {} replicas = {} runs; {} already done, {} to run{}",
        study.name,
        points.len(),
        study.replicas.count,
        runs.len(),
        done.len(),
        todo.len(),
        match &slurm {
            None => format!(" on {jobs} parallel jobs"),
            Some(_) => " as a Slurm job array".into(),
        }
    );
    eprintln!("smpi-study: results in {}", results.dir.display());
    let outcome = if todo.is_empty() {
        Default::default()
    } else {
        match &slurm {
            None => run_local(&study, todo, &env, &results, &mut rows, jobs, verbose)?,
            Some(opts) => run_slurm(&study, &runs, todo, &env, &results, &mut rows, opts)?,
        }
    };
    results.write_csv(&rows)?;
    let meta = StudyMeta::of(&study, runs.len());
    println!("{}", report::text_summary(&rows, &meta, &meta.metric));
    let missing = runs.len() - rows.iter().filter(|r| ids.contains(r.run_id.as_str())).count();
    if outcome.interrupted || missing > 0 {
        eprintln!(
            "smpi-study: {missing} of {} runs not done yet: run the same command again to resume",
            runs.len()
        );
        return Ok(ExitCode::from(if outcome.interrupted { 130 } else { 1 }));
    }
    eprintln!(
        "smpi-study: results: {} and {}; plots: smpi-study report {}",
        results.jsonl().display(),
        results.csv().display(),
        results.dir.display()
    );
    Ok(ExitCode::SUCCESS)
}

fn results_dir_of(p: &Path) -> PathBuf {
    if p.is_file() {
        p.parent()
            .map(Path::to_path_buf)
            .unwrap_or_else(|| PathBuf::from("."))
    } else {
        p.to_path_buf()
    }
}

fn cmd_report(results: &Path, out: Option<&Path>, metrics: &[String]) -> Result<()> {
    let dir = results_dir_of(results);
    let jsonl = if results.is_file() {
        results.to_path_buf()
    } else {
        dir.join("results.jsonl")
    };
    let rows = read_jsonl(&jsonl)?;
    if rows.is_empty() {
        bail!("{}: no rows (run the study first)", jsonl.display());
    }
    let meta = match StudyMeta::load(&dir)? {
        Some(m) => m,
        None => report::meta_from_rows(&rows),
    };
    let out = out.map(Path::to_path_buf).unwrap_or_else(|| dir.join("report"));
    let written = report::write_report(&rows, &meta, metrics, &out)?;
    for f in &written {
        println!("{}", f.display());
    }
    Ok(())
}

fn cmd_status(target: &Path, output: Option<&Path>) -> Result<()> {
    let (dir, study) = if target.is_dir() {
        let meta = StudyMeta::load(target)?
            .with_context(|| format!("{} has no study.json: not a results directory", target.display()))?;
        (target.to_path_buf(), meta.study(target)?)
    } else {
        let s = Study::load(target)?;
        (output_dir(&s, output), s)
    };
    let results = ResultsDir { dir: dir.clone() };
    let runs = design::runs(&study)?;
    let rows = results.read_rows()?;
    let done: BTreeSet<&str> = rows.iter().map(|r| r.run_id.as_str()).collect();
    let pending_rows: Vec<_> = results
        .read_task_rows()?
        .into_iter()
        .filter(|(_, r)| !done.contains(r.run_id.as_str()))
        .collect();
    let failed: Vec<_> = rows.iter().filter(|r| r.status == Status::Failed).collect();
    let missing = runs.iter().filter(|r| !done.contains(r.id.as_str())).count();
    println!("study {} in {}", study.name, dir.display());
    println!(
        "{} runs: {} done ({} ok, {} failed), {} not done{}",
        runs.len(),
        done.len(),
        done.len() - failed.len(),
        failed.len(),
        missing,
        if pending_rows.is_empty() {
            String::new()
        } else {
            format!(
                " ({} rows written by Slurm tasks, gathered by the next run)",
                pending_rows.len()
            )
        }
    );
    for r in &failed {
        println!("  failed {}: {}", r.run_id, r.error.as_deref().unwrap_or("?"));
    }
    if let Ok(t) = std::fs::read_to_string(dir.join("slurm/jobs.json")) {
        let subs: Vec<serde_json::Value> = serde_json::from_str(&t).unwrap_or_default();
        let ids: Vec<String> = subs
            .iter()
            .filter_map(|s| s["job_id"].as_str().map(String::from))
            .collect();
        match study::slurm::active_jobs(&ids) {
            Ok(a) if a.is_empty() => println!("Slurm: no job of this study is queued or running"),
            Ok(a) => println!(
                "Slurm: job(s) {} still queued or running",
                a.into_iter().collect::<Vec<_>>().join(", ")
            ),
            Err(e) => println!("Slurm: cannot ask squeue ({e:#})"),
        }
    }
    if !rows.is_empty() {
        let meta = StudyMeta::of(&study, runs.len());
        println!("{}", report::text_summary(&rows, &meta, &meta.metric));
    }
    Ok(())
}
