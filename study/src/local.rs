//! The local executor: runs on this machine's cores, a progress bar, interruption.
//!
//! `jobs` worker threads take runs from one queue in the randomized order;
//! each starts one `smpirun` (a simulation is single-threaded) and waits for
//! it. Rows come back to the calling thread, the only writer of the results
//! files: it appends each to `results.jsonl` as it arrives and regenerates
//! `results.csv`. On Ctrl-C or SIGTERM ([`interrupted`]) no new run starts,
//! running simulations are stopped and nothing is recorded for them: the next
//! `smpi-study run` does them again.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Mutex};
use std::time::{Duration, Instant};

use anyhow::Result;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::design::Run;
use crate::results::{ResultsDir, Row, Status};
use crate::runner::{execute, Env};
use crate::spec::Study;

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Installs the Ctrl-C / SIGTERM / SIGHUP handler: the first signal asks for a
/// clean stop, a second one exits at once (simulations die with us:
/// `PR_SET_PDEATHSIG`).
pub fn install_interrupt_handler() {
    let result = ctrlc::set_handler(|| {
        if INTERRUPTED.swap(true, Ordering::SeqCst) {
            eprintln!("\nsmpi-study: stopping now");
            std::process::exit(130);
        }
        eprintln!("\nsmpi-study: interrupted: stopping the running simulations (again to quit at once)");
    });
    if let Err(e) = result {
        eprintln!("smpi-study: warning: cannot handle Ctrl-C ({e}); an interrupted study still resumes");
    }
}

/// True once the user asked to stop.
pub fn interrupted() -> &'static AtomicBool {
    &INTERRUPTED
}

/// What a local execution did.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Runs recorded (ok or failed).
    pub recorded: usize,
    /// Of which failed.
    pub failed: usize,
    /// Stopped before the end.
    pub interrupted: bool,
}

/// A progress bar on stderr when it is a terminal; hidden otherwise.
pub fn progress_bar(len: usize, what: &str) -> ProgressBar {
    let pb = ProgressBar::with_draw_target(Some(len as u64), ProgressDrawTarget::stderr());
    pb.set_style(
        ProgressStyle::with_template(&format!(
            "{{elapsed_precise}} [{{bar:32.cyan/blue}}] {{pos}}/{{len}} {what}, ETA {{eta}} {{msg}}"
        ))
        .expect("valid template")
        .progress_chars("=> "),
    );
    pb.enable_steady_tick(Duration::from_millis(500));
    pb
}

/// One line about a finished run (printed when there is no progress bar, or with `verbose`).
pub fn run_line(row: &Row, metric: &str, done: usize, total: usize) -> String {
    let point = row
        .axes
        .iter()
        .map(|(a, v)| format!("{a}={v}"))
        .collect::<Vec<_>>()
        .join(", ");
    match row.status {
        Status::Ok => format!(
            "[{done}/{total}] {} ({point}) replica {}: {metric} {} in {:.1} s",
            row.run_id,
            row.replica,
            row.metric(metric)
                .map(|v| format!("{v:.6}"))
                .unwrap_or_else(|| "-".into()),
            row.wall_time
        ),
        Status::Failed => format!(
            "[{done}/{total}] {} ({point}) replica {}: FAILED: {}",
            row.run_id,
            row.replica,
            row.error.as_deref().unwrap_or("?")
        ),
    }
}

/// Runs `todo` with `jobs` parallel simulations; `rows` holds the rows so far and gets the new ones.
pub fn run_local(
    study: &Study,
    todo: Vec<Run>,
    env: &Env,
    results: &ResultsDir,
    rows: &mut Vec<Row>,
    jobs: usize,
    verbose: bool,
) -> Result<Outcome> {
    let total = todo.len();
    let queue = Mutex::new(VecDeque::from(todo));
    let (tx, rx) = mpsc::channel::<Row>();
    let cancel = interrupted();
    let metric = study.main_metric();
    let pb = progress_bar(total, "runs");
    let mut outcome = Outcome::default();
    let t0 = Instant::now();
    let mut write_error = None;
    std::thread::scope(|s| {
        for _ in 0..jobs.max(1).min(total.max(1)) {
            let tx = tx.clone();
            let queue = &queue;
            s.spawn(move || loop {
                if cancel.load(Ordering::SeqCst) {
                    break;
                }
                let Some(run) = queue.lock().unwrap_or_else(|e| e.into_inner()).pop_front() else {
                    break;
                };
                match execute(study, &run, env, results, cancel) {
                    Some(row) => {
                        if tx.send(row).is_err() {
                            break;
                        }
                    }
                    None => break,
                }
            });
        }
        drop(tx);
        for row in rx {
            if write_error.is_none() {
                if let Err(e) = results.append(&row) {
                    write_error = Some(e);
                    cancel.store(true, Ordering::SeqCst);
                }
            }
            outcome.recorded += 1;
            if row.status == Status::Failed {
                outcome.failed += 1;
                pb.set_message(format!("({} failed)", outcome.failed));
            }
            let line = run_line(&row, &metric, outcome.recorded, total);
            rows.push(row);
            if let Err(e) = results.write_csv(rows) {
                eprintln!(
                    "smpi-study: warning: cannot write {}: {e:#}",
                    results.csv().display()
                );
            }
            if pb.is_hidden() || verbose {
                pb.suspend(|| eprintln!("{line}"));
            }
            pb.inc(1);
        }
    });
    pb.finish_and_clear();
    if let Some(e) = write_error {
        return Err(e);
    }
    outcome.interrupted = cancel.load(Ordering::SeqCst) && outcome.recorded < total;
    if outcome.recorded > 0 {
        eprintln!(
            "smpi-study: {} runs in {:.1} s with {} parallel jobs",
            outcome.recorded,
            t0.elapsed().as_secs_f64(),
            jobs
        );
    }
    Ok(outcome)
}
