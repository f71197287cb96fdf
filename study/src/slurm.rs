//! The Slurm executor: the runs as one job array, each task one run.
//!
//! A submission writes `slurm/submit-<k>/tasks.txt` (one run id per line)
//! and `job.sh`, which runs `smpi-study run-point <results dir> --tasks
//! tasks.txt` (a hidden subcommand): task `i` (`SLURM_ARRAY_TASK_ID`) does
//! line `i` and writes its row to `rows/<run id>.json`. The submitting
//! process polls `squeue` until no task of its jobs is pending or running
//! (with a timeout: it never waits forever), then merges the rows into
//! `results.jsonl`. A task that ended without a row (killed for its time
//! limit or memory, node failure, `scancel`) gets a failed row naming its
//! Slurm state (from `sacct` when accounting works) and the tail of its
//! output file.
//!
//! `slurm/jobs.json` lists the submissions. A later `smpi-study run
//! --executor slurm` first gathers finished rows, then submits only the runs
//! that have no row and whose task is not still queued or running (it waits
//! for those instead of submitting them twice).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};
use serde::{Deserialize, Serialize};

use crate::design::Run;
use crate::local::{interrupted, progress_bar, run_line, Outcome};
use crate::results::{write_atomic, ResultsDir, Row, Status};
use crate::runner::{shell_quote, Env};
use crate::spec::Study;

/// Options of the Slurm executor.
#[derive(Clone, Debug)]
pub struct SlurmOptions {
    /// Seconds between two `squeue` polls.
    pub poll: f64,
    /// Seconds to wait for the jobs before giving up (they keep running).
    pub timeout: f64,
    /// Extra `sbatch` arguments (`--partition=...`, `--mem=4G`, `--time=...`).
    pub sbatch_args: Vec<String>,
    /// At most this many tasks at once (`--array=...%N`).
    pub max_running: Option<usize>,
    /// Print a line per gathered row.
    pub verbose: bool,
}

/// One submission, in `slurm/jobs.json`.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct Submission {
    job_id: String,
    dir: String,
    run_ids: Vec<String>,
    submitted_at: f64,
}

fn jobs_file(results: &ResultsDir) -> PathBuf {
    results.dir.join("slurm").join("jobs.json")
}

fn read_submissions(results: &ResultsDir) -> Result<Vec<Submission>> {
    match std::fs::read_to_string(jobs_file(results)) {
        Ok(t) => serde_json::from_str(&t).context("slurm/jobs.json"),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(e.into()),
    }
}

fn write_submissions(results: &ResultsDir, subs: &[Submission]) -> Result<()> {
    write_atomic(
        &jobs_file(results),
        serde_json::to_string_pretty(subs).expect("serializes").as_bytes(),
    )
}

/// Job ids (of `ids`) that still have a task pending or running, per `squeue`.
pub fn active_jobs(ids: &[String]) -> Result<BTreeSet<String>> {
    if ids.is_empty() {
        return Ok(BTreeSet::new());
    }
    let out = Command::new("squeue")
        .args(["-h", "-o", "%F %T", "-j", &ids.join(",")])
        .output()
        .context("cannot run squeue (is Slurm installed?)")?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        // squeue rejects ids it no longer knows about: they are finished.
        if err.contains("Invalid job id") {
            return Ok(BTreeSet::new());
        }
        bail!("squeue failed: {}", err.trim());
    }
    Ok(stdout
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .map(|id| id.to_string())
        .collect())
}

/// `sacct` states of a job's tasks (index → state), when accounting answers.
fn task_states(job: &str) -> BTreeMap<usize, String> {
    let mut out = BTreeMap::new();
    let Ok(o) = Command::new("sacct")
        .args(["-n", "-P", "-X", "-o", "JobID,State", "-j", job])
        .output()
    else {
        return out;
    };
    if !o.status.success() {
        return out;
    }
    for line in String::from_utf8_lossy(&o.stdout).lines() {
        if let Some((id, state)) = line.split_once('|') {
            if let Some(i) = id.rsplit_once('_').and_then(|(_, i)| i.parse::<usize>().ok()) {
                out.insert(i, state.to_string());
            }
        }
    }
    out
}

/// Submits `todo` (and waits for them and any earlier submission still running).
#[allow(clippy::too_many_arguments)]
pub fn run_slurm(
    study: &Study,
    all_runs: &[Run],
    todo: Vec<Run>,
    env: &Env,
    results: &ResultsDir,
    rows: &mut Vec<Row>,
    opts: &SlurmOptions,
) -> Result<Outcome> {
    let mut subs = read_submissions(results)?;
    let ids: Vec<String> = subs.iter().map(|s| s.job_id.clone()).collect();
    let active = active_jobs(&ids)?;
    let in_flight: BTreeSet<String> = subs
        .iter()
        .filter(|s| active.contains(&s.job_id))
        .flat_map(|s| s.run_ids.iter().cloned())
        .collect();
    let to_submit: Vec<&Run> = todo.iter().filter(|r| !in_flight.contains(&r.id)).collect();
    if !in_flight.is_empty() {
        eprintln!(
            "smpi-study: {} runs are still queued or running in Slurm job(s) {}: waiting for them, not resubmitting",
            todo.iter().filter(|r| in_flight.contains(&r.id)).count(),
            active.iter().cloned().collect::<Vec<_>>().join(", ")
        );
    }
    if !to_submit.is_empty() {
        let sub = submit(study, &to_submit, env, results, opts, subs.len())?;
        eprintln!(
            "smpi-study: submitted Slurm job array {} ({} tasks; scripts in {})",
            sub.job_id,
            sub.run_ids.len(),
            sub.dir
        );
        subs.push(sub);
        write_submissions(results, &subs)?;
    }
    let waited: BTreeSet<String> = todo.iter().map(|r| r.id.clone()).collect();
    let waiting_jobs: Vec<String> = subs
        .iter()
        .filter(|s| s.run_ids.iter().any(|id| waited.contains(id)))
        .map(|s| s.job_id.clone())
        .collect();
    wait_and_gather(
        study,
        all_runs,
        &waited,
        &waiting_jobs,
        &subs,
        env,
        results,
        rows,
        opts,
    )
}

fn submit(
    study: &Study,
    runs: &[&Run],
    env: &Env,
    results: &ResultsDir,
    opts: &SlurmOptions,
    k: usize,
) -> Result<Submission> {
    let dir = results.dir.join("slurm").join(format!("submit-{k}"));
    std::fs::create_dir_all(&dir)?;
    let tasks = dir.join("tasks.txt");
    let mut list = String::new();
    for r in runs {
        list.push_str(&r.id);
        list.push('\n');
    }
    write_atomic(&tasks, list.as_bytes())?;
    let exe = std::env::current_exe().context("cannot find smpi-study's own path")?;
    let script = dir.join("job.sh");
    let text = format!(
        "#!/bin/sh\n\
         # smpi-study {}: study {}, submission {k}: task i runs line i of tasks.txt and writes\n\
         # its row to {}/rows/<run id>.json\n\
         exec {} run-point {} --tasks {} --smpirun {}\n",
        crate::VERSION,
        study.name,
        results.dir.display(),
        shell_quote(&exe.display().to_string()),
        shell_quote(&results.dir.display().to_string()),
        shell_quote(&tasks.display().to_string()),
        shell_quote(&env.smpirun.display().to_string()),
    );
    std::fs::write(&script, text)?;
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755))?;
    }
    let mut array = format!("0-{}", runs.len() - 1);
    if let Some(m) = opts.max_running {
        array.push_str(&format!("%{m}"));
    }
    let mut cmd = Command::new("sbatch");
    cmd.arg("--parsable")
        .arg(format!("--array={array}"))
        .arg(format!("--job-name=smpi-study-{}", study.name))
        .arg(format!("--output={}", dir.join("task-%A_%a.out").display()))
        .arg(format!("--chdir={}", results.dir.display()))
        .arg("--ntasks=1")
        .arg("--cpus-per-task=1")
        .args(&opts.sbatch_args)
        .arg(&script);
    let out = cmd.output().context("cannot run sbatch (is Slurm installed?)")?;
    if !out.status.success() {
        bail!(
            "sbatch failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    let job_id = String::from_utf8_lossy(&out.stdout)
        .trim()
        .split(';')
        .next()
        .unwrap_or("")
        .to_string();
    if job_id.is_empty() || !job_id.chars().all(|c| c.is_ascii_digit()) {
        bail!(
            "sbatch printed no job id: {:?}",
            String::from_utf8_lossy(&out.stdout)
        );
    }
    std::fs::write(dir.join("sbatch.txt"), format!("{cmd:?}\njob {job_id}\n"))?;
    Ok(Submission {
        job_id,
        dir: dir.display().to_string(),
        run_ids: runs.iter().map(|r| r.id.clone()).collect(),
        submitted_at: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs_f64())
            .unwrap_or(0.0),
    })
}

#[allow(clippy::too_many_arguments)]
fn wait_and_gather(
    study: &Study,
    all_runs: &[Run],
    waited: &BTreeSet<String>,
    jobs: &[String],
    subs: &[Submission],
    env: &Env,
    results: &ResultsDir,
    rows: &mut Vec<Row>,
    opts: &SlurmOptions,
) -> Result<Outcome> {
    let total = waited.len();
    let metric = study.main_metric();
    let pb = progress_bar(total, "runs (Slurm)");
    let t0 = Instant::now();
    let mut outcome = Outcome::default();
    let mut squeue_errors = 0;
    let gather = |rows: &mut Vec<Row>, outcome: &mut Outcome| -> Result<()> {
        let known: BTreeSet<String> = rows.iter().map(|r| r.run_id.clone()).collect();
        let mut added = false;
        for (path, row) in results.read_task_rows()? {
            if !known.contains(&row.run_id) {
                results.append(&row)?;
                std::fs::remove_file(&path).with_context(|| format!("cannot remove {}", path.display()))?;
                if waited.contains(&row.run_id) {
                    outcome.recorded += 1;
                    if row.status == Status::Failed {
                        outcome.failed += 1;
                        pb.set_message(format!("({} failed)", outcome.failed));
                    }
                    if pb.is_hidden() || opts.verbose {
                        let line = run_line(&row, &metric, outcome.recorded, total);
                        pb.suspend(|| eprintln!("{line}"));
                    }
                    pb.inc(1);
                }
                rows.push(row);
                added = true;
            } else {
                std::fs::remove_file(&path).with_context(|| format!("cannot remove {}", path.display()))?;
            }
        }
        if added {
            results.write_csv(rows)?;
        }
        Ok(())
    };
    loop {
        gather(rows, &mut outcome)?;
        let active = match active_jobs(jobs) {
            Ok(a) => {
                squeue_errors = 0;
                a
            }
            Err(e) => {
                // A busy controller may fail a poll; give up after a few in a row.
                squeue_errors += 1;
                if squeue_errors >= 5 {
                    pb.finish_and_clear();
                    return Err(e.context("squeue failed 5 times in a row"));
                }
                jobs.iter().cloned().collect()
            }
        };
        if active.is_empty() {
            break;
        }
        if interrupted().load(std::sync::atomic::Ordering::SeqCst) {
            pb.finish_and_clear();
            eprintln!(
                "smpi-study: stopped waiting; Slurm job(s) {} keep running (scancel them to stop). \
                 Run the same command again to gather their rows.",
                active.iter().cloned().collect::<Vec<_>>().join(", ")
            );
            outcome.interrupted = true;
            return Ok(outcome);
        }
        if t0.elapsed().as_secs_f64() > opts.timeout {
            pb.finish_and_clear();
            let missing = total - outcome.recorded;
            eprintln!(
                "smpi-study: timeout: {missing} of {total} runs still queued or running after {:.0} s in Slurm job(s) {}. \
                 They keep running; run the same command again later to gather their rows (nothing is resubmitted \
                 while they are queued), or scancel them.",
                opts.timeout,
                active.iter().cloned().collect::<Vec<_>>().join(", ")
            );
            outcome.interrupted = true;
            return Ok(outcome);
        }
        std::thread::sleep(Duration::from_secs_f64(opts.poll));
    }
    gather(rows, &mut outcome)?;
    // Tasks that ended without a row.
    let have: BTreeSet<String> = rows.iter().map(|r| r.run_id.clone()).collect();
    let by_id: BTreeMap<&str, &Run> = all_runs.iter().map(|r| (r.id.as_str(), r)).collect();
    for sub in subs.iter().filter(|s| jobs.contains(&s.job_id)) {
        let missing: Vec<(usize, &String)> = sub
            .run_ids
            .iter()
            .enumerate()
            .filter(|(_, id)| waited.contains(*id) && !have.contains(*id))
            .collect();
        if missing.is_empty() {
            continue;
        }
        let states = task_states(&sub.job_id);
        for (i, id) in missing {
            let Some(run) = by_id.get(id.as_str()) else {
                continue;
            };
            let out_file = Path::new(&sub.dir).join(format!("task-{}_{i}.out", sub.job_id));
            let log = std::fs::read_to_string(&out_file).unwrap_or_default();
            let state = states
                .get(&i)
                .cloned()
                .unwrap_or_else(|| "unknown (no accounting)".into());
            let row = lost_task_row(study, run, env, results, &sub.job_id, i, &state, &out_file, &log);
            results.append(&row)?;
            outcome.recorded += 1;
            outcome.failed += 1;
            pb.inc(1);
            rows.push(row);
        }
        results.write_csv(rows)?;
    }
    pb.finish_and_clear();
    eprintln!(
        "smpi-study: Slurm finished: {} rows gathered in {:.1} s",
        outcome.recorded,
        t0.elapsed().as_secs_f64()
    );
    Ok(outcome)
}

#[allow(clippy::too_many_arguments)]
fn lost_task_row(
    study: &Study,
    run: &Run,
    env: &Env,
    results: &ResultsDir,
    job: &str,
    task: usize,
    state: &str,
    out_file: &Path,
    log: &str,
) -> Row {
    let lines: Vec<&str> = log.lines().collect();
    Row {
        study: study.name.clone(),
        run_id: run.id.clone(),
        point_id: run.point.id.clone(),
        replica: run.replica,
        order: run.order,
        status: Status::Failed,
        axes: run.point.labels.iter().cloned().collect(),
        params: crate::design::params_json(&run.point.params),
        perturbation: run.perturbation.clone(),
        simulated_time: None,
        metrics: BTreeMap::new(),
        passed: None,
        hpl_line: None,
        wall_time: 0.0,
        smpirun_wall_time: None,
        peak_pss_kb: None,
        max_rss_kb: None,
        messages: None,
        events: None,
        exit_code: None,
        signal: None,
        error: Some(format!(
            "Slurm task {job}_{task} ended ({state}) without writing a row; see {}",
            out_file.display()
        )),
        stderr_tail: Some(lines[lines.len().saturating_sub(20)..].join("\n")),
        simulator: env.simulator.clone(),
        study_version: crate::VERSION.to_string(),
        command: Vec::new(),
        command_line: String::new(),
        run_dir: results.run_dir(&run.id).display().to_string(),
        host: String::new(),
        executor: "slurm".into(),
        slurm_task: Some(format!("{job}_{task}")),
        started_at: 0.0,
    }
}

/// The hidden `run-point` subcommand: one Slurm task.
pub fn run_point(
    results_dir: &Path,
    tasks: &Path,
    index: Option<usize>,
    smpirun: Option<&Path>,
) -> Result<()> {
    let results = ResultsDir::create(results_dir)?;
    let meta = crate::results::StudyMeta::load(&results.dir)?.ok_or_else(|| {
        anyhow!(
            "{} has no study.json: not a results directory",
            results.dir.display()
        )
    })?;
    let study = meta.study(&results.dir)?;
    let index = match index {
        Some(i) => i,
        None => std::env::var("SLURM_ARRAY_TASK_ID")
            .context(
                "no --index and no SLURM_ARRAY_TASK_ID: run-point is meant to run as a Slurm array task",
            )?
            .parse()
            .context("SLURM_ARRAY_TASK_ID is not a number")?,
    };
    let list = std::fs::read_to_string(tasks).with_context(|| format!("cannot read {}", tasks.display()))?;
    let id = list
        .lines()
        .nth(index)
        .ok_or_else(|| anyhow!("{} has no line {index}", tasks.display()))?
        .trim()
        .to_string();
    let runs = crate::design::runs(&study)?;
    let run = runs.iter().find(|r| r.id == id).ok_or_else(|| {
        anyhow!(
            "run {id} is not in the study recorded in {}",
            results.dir.display()
        )
    })?;
    let mut env = Env::new(smpirun, &study, "slurm")?;
    env.slurm_task = Some(format!(
        "{}_{}",
        std::env::var("SLURM_ARRAY_JOB_ID").unwrap_or_else(|_| "?".into()),
        index
    ));
    crate::local::install_interrupt_handler();
    match crate::runner::execute(&study, run, &env, &results, interrupted()) {
        Some(row) => {
            results.write_task_row(&row)?;
            eprintln!("{}", run_line(&row, &study.main_metric(), 1, 1));
            Ok(())
        }
        None => bail!("interrupted (Slurm stopped the task): no row written"),
    }
}
