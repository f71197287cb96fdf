//! Rows: one per run, in `results.jsonl` (the record) and `results.csv` (for spreadsheets).
//!
//! `results.jsonl` is appended one whole line per `write` on a file opened
//! with `O_APPEND`, then synced: a run is either in the file or not, so an
//! interrupted study resumes from it. A torn last line (a crash inside the
//! write) is ignored when read back, with a warning, and the run redone.
//! Slurm tasks write `rows/<run id>.json` instead (a temporary file renamed
//! into place: atomic on one file system, no two writers on one file); the
//! submitting process merges them into `results.jsonl`. `results.csv` is
//! regenerated from all rows after each one (written to a temporary file,
//! then renamed), with one column per parameter and per metric.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use crate::design::Perturbation;

/// Outcome of a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// smpirun exited 0 (and, for HPL, printed a result line).
    Ok,
    /// Anything else; `error` says what.
    Failed,
}

/// One run's row (the JSONL schema; documented in `study/README.md`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// Study name.
    pub study: String,
    /// `<point id>-r<replica>`.
    pub run_id: String,
    /// Hash of the point's parameters.
    pub point_id: String,
    /// Replica number.
    pub replica: u32,
    /// Position in the randomized order.
    pub order: usize,
    /// ok / failed.
    pub status: Status,
    /// Axis name → value label.
    pub axes: BTreeMap<String, String>,
    /// Every parameter (dotted keys, values as in the study file).
    pub params: serde_json::Map<String, serde_json::Value>,
    /// What the replica perturbed.
    pub perturbation: Perturbation,
    /// Simulated time, seconds (smpirun's `--json`).
    pub simulated_time: Option<f64>,
    /// The program's metrics (HPL: gflops, hpl_time, residual).
    pub metrics: BTreeMap<String, f64>,
    /// HPL's residual check: PASSED (true), FAILED (false), not run (null).
    pub passed: Option<bool>,
    /// HPL's result line, verbatim.
    pub hpl_line: Option<String>,
    /// Wall time of the run as this tool measured it, seconds.
    pub wall_time: f64,
    /// smpirun's own wall time, seconds.
    pub smpirun_wall_time: Option<f64>,
    /// smpirun's peak proportional set size, KiB.
    pub peak_pss_kb: Option<u64>,
    /// smpirun's maximum resident set size, KiB.
    pub max_rss_kb: Option<u64>,
    /// Messages simulated.
    pub messages: Option<u64>,
    /// Kernel events.
    pub events: Option<u64>,
    /// smpirun's exit code (null when killed by a signal or not started).
    pub exit_code: Option<i32>,
    /// Signal that killed smpirun.
    pub signal: Option<i32>,
    /// Why the run failed.
    pub error: Option<String>,
    /// Last lines of smpirun's stderr, for failed runs.
    pub stderr_tail: Option<String>,
    /// `smpirun -version`.
    pub simulator: String,
    /// This tool's version.
    pub study_version: String,
    /// The command, one argument per element.
    pub command: Vec<String>,
    /// The same, as one shell-quoted line (run from `run_dir`).
    pub command_line: String,
    /// Where the run's files are (platform, HPL.dat, stdout, stderr, JSON).
    pub run_dir: String,
    /// Machine it ran on.
    pub host: String,
    /// `local` or `slurm`.
    pub executor: String,
    /// Slurm job and task, when run by Slurm (`<job>_<task>`).
    pub slurm_task: Option<String>,
    /// Start, seconds since the Unix epoch.
    pub started_at: f64,
}

impl Row {
    /// A metric by name: `simulated_time`, `wall_time`, `peak_pss_mb` or a program metric.
    pub fn metric(&self, name: &str) -> Option<f64> {
        match name {
            "simulated_time" => self.simulated_time,
            "wall_time" => Some(self.wall_time),
            "peak_pss_mb" => self.peak_pss_kb.map(|k| k as f64 / 1024.0),
            _ => self.metrics.get(name).copied(),
        }
    }
}

/// The files of a study's results directory.
#[derive(Clone, Debug)]
pub struct ResultsDir {
    /// The directory.
    pub dir: PathBuf,
}

impl ResultsDir {
    /// `dir` (created if needed).
    pub fn create(dir: &Path) -> Result<ResultsDir> {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
        Ok(ResultsDir { dir })
    }

    /// `results.jsonl`.
    pub fn jsonl(&self) -> PathBuf {
        self.dir.join("results.jsonl")
    }

    /// `results.csv`.
    pub fn csv(&self) -> PathBuf {
        self.dir.join("results.csv")
    }

    /// `rows/`: rows written by Slurm tasks, not merged yet.
    pub fn rows_dir(&self) -> PathBuf {
        self.dir.join("rows")
    }

    /// `runs/<run id>/`.
    pub fn run_dir(&self, run_id: &str) -> PathBuf {
        self.dir.join("runs").join(run_id)
    }

    /// Reads `results.jsonl` (skipping torn or foreign lines, with a warning each).
    pub fn read_rows(&self) -> Result<Vec<Row>> {
        read_jsonl(&self.jsonl())
    }

    /// Appends one row to `results.jsonl` (one write, then sync).
    pub fn append(&self, row: &Row) -> Result<()> {
        let mut line = serde_json::to_string(row).expect("rows serialize");
        line.push('\n');
        let path = self.jsonl();
        let mut f = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .with_context(|| format!("cannot open {}", path.display()))?;
        f.write_all(line.as_bytes())
            .and_then(|_| f.sync_data())
            .with_context(|| format!("cannot append to {}", path.display()))
    }

    /// Rewrites `results.jsonl` with `rows` (temporary file, then rename).
    pub fn rewrite(&self, rows: &[Row]) -> Result<()> {
        let mut text = String::new();
        for r in rows {
            text.push_str(&serde_json::to_string(r).expect("rows serialize"));
            text.push('\n');
        }
        write_atomic(&self.jsonl(), text.as_bytes())
    }

    /// Writes a row for a Slurm task into `rows/<run id>.json`.
    pub fn write_task_row(&self, row: &Row) -> Result<()> {
        std::fs::create_dir_all(self.rows_dir())?;
        let text = serde_json::to_string_pretty(row).expect("rows serialize");
        write_atomic(
            &self.rows_dir().join(format!("{}.json", row.run_id)),
            text.as_bytes(),
        )
    }

    /// Rows in `rows/` (complete files only).
    pub fn read_task_rows(&self) -> Result<Vec<(PathBuf, Row)>> {
        let mut out = Vec::new();
        let Ok(entries) = std::fs::read_dir(self.rows_dir()) else {
            return Ok(out);
        };
        let mut paths: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "json"))
            .collect();
        paths.sort();
        for p in paths {
            let text = std::fs::read_to_string(&p)?;
            match serde_json::from_str::<Row>(&text) {
                Ok(r) => out.push((p, r)),
                Err(e) => eprintln!("smpi-study: warning: {}: not a row ({e}); ignored", p.display()),
            }
        }
        Ok(out)
    }

    /// Moves the rows of `rows/` into `results.jsonl` (rows already there are not duplicated).
    /// Returns how many were added.
    pub fn merge_task_rows(&self) -> Result<usize> {
        let existing: BTreeSet<String> = self.read_rows()?.into_iter().map(|r| r.run_id).collect();
        let mut added = 0;
        for (path, row) in self.read_task_rows()? {
            if !existing.contains(&row.run_id) {
                self.append(&row)?;
                added += 1;
            }
            std::fs::remove_file(&path).with_context(|| format!("cannot remove {}", path.display()))?;
        }
        Ok(added)
    }

    /// Regenerates `results.csv` from `rows`.
    pub fn write_csv(&self, rows: &[Row]) -> Result<()> {
        write_atomic(&self.csv(), &csv_bytes(rows)?)
    }
}

/// Reads rows from a JSONL file (a missing file has none).
pub fn read_jsonl(path: &Path) -> Result<Vec<Row>> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    let mut rows = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Row>(line) {
            Ok(r) => rows.push(r),
            Err(e) => eprintln!(
                "smpi-study: warning: {}:{}: not a complete row ({e}); ignored (the run is redone)",
                path.display(),
                i + 1
            ),
        }
    }
    Ok(rows)
}

/// Writes `bytes` to `path` through a temporary file and a rename.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let tmp = path.with_extension(format!(
        "{}.tmp{}",
        path.extension().and_then(|e| e.to_str()).unwrap_or(""),
        std::process::id()
    ));
    let mut f = std::fs::File::create(&tmp).with_context(|| format!("cannot create {}", tmp.display()))?;
    f.write_all(bytes)
        .and_then(|_| f.sync_data())
        .with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, path)
        .with_context(|| format!("cannot rename {} to {}", tmp.display(), path.display()))
}

fn json_cell(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Null => String::new(),
        other => other.to_string(),
    }
}

fn opt<T: ToString>(v: &Option<T>) -> String {
    v.as_ref().map(T::to_string).unwrap_or_default()
}

/// The CSV text: fixed columns, then `axis:<name>`, `param:<key>` and `metric:<name>` columns.
pub fn csv_bytes(rows: &[Row]) -> Result<Vec<u8>> {
    let axes: BTreeSet<&String> = rows.iter().flat_map(|r| r.axes.keys()).collect();
    let params: BTreeSet<&String> = rows.iter().flat_map(|r| r.params.keys()).collect();
    let metrics: BTreeSet<&String> = rows.iter().flat_map(|r| r.metrics.keys()).collect();
    let mut w = csv::Writer::from_writer(Vec::new());
    let mut header: Vec<String> = [
        "study",
        "run_id",
        "point_id",
        "replica",
        "order",
        "status",
        "simulated_time",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    header.extend(metrics.iter().map(|m| format!("metric:{m}")));
    header.extend(
        [
            "passed",
            "wall_time",
            "smpirun_wall_time",
            "peak_pss_kb",
            "max_rss_kb",
            "messages",
            "events",
            "latency_factor",
            "seed",
            "exit_code",
            "signal",
            "error",
        ]
        .iter()
        .map(|s| s.to_string()),
    );
    header.extend(axes.iter().map(|a| format!("axis:{a}")));
    header.extend(params.iter().map(|p| format!("param:{p}")));
    header.extend(
        [
            "simulator",
            "study_version",
            "command_line",
            "run_dir",
            "host",
            "executor",
            "slurm_task",
            "started_at",
        ]
        .iter()
        .map(|s| s.to_string()),
    );
    w.write_record(&header)?;
    for r in rows {
        let mut rec = vec![
            r.study.clone(),
            r.run_id.clone(),
            r.point_id.clone(),
            r.replica.to_string(),
            r.order.to_string(),
            match r.status {
                Status::Ok => "ok".into(),
                Status::Failed => "failed".into(),
            },
            opt(&r.simulated_time),
        ];
        rec.extend(metrics.iter().map(|m| opt(&r.metrics.get(*m))));
        rec.extend([
            opt(&r.passed),
            r.wall_time.to_string(),
            opt(&r.smpirun_wall_time),
            opt(&r.peak_pss_kb),
            opt(&r.max_rss_kb),
            opt(&r.messages),
            opt(&r.events),
            r.perturbation.latency_factor.to_string(),
            opt(&r.perturbation.seed),
            opt(&r.exit_code),
            opt(&r.signal),
            r.error.clone().unwrap_or_default(),
        ]);
        rec.extend(axes.iter().map(|a| r.axes.get(*a).cloned().unwrap_or_default()));
        rec.extend(
            params
                .iter()
                .map(|p| r.params.get(*p).map(json_cell).unwrap_or_default()),
        );
        rec.extend([
            r.simulator.clone(),
            r.study_version.clone(),
            r.command_line.clone(),
            r.run_dir.clone(),
            r.host.clone(),
            r.executor.clone(),
            r.slurm_task.clone().unwrap_or_default(),
            r.started_at.to_string(),
        ]);
        w.write_record(&rec)?;
    }
    w.into_inner().map_err(|e| anyhow::anyhow!("{e}"))
}

/// What `run` records about the study next to its results (`study.json`, with the
/// study file itself copied to `study.toml`): enough for Slurm tasks to rebuild
/// the runs and for `report` to order axes and label plots.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StudyMeta {
    /// Study name.
    pub name: String,
    /// Its description.
    pub description: String,
    /// Where the study file was.
    pub source: String,
    /// Directory its relative paths resolve against.
    pub base_dir: String,
    /// Axes in file order: name, unit, value labels in order.
    pub axes: Vec<AxisMeta>,
    /// Metric plotted first.
    pub metric: String,
    /// Other metrics plotted.
    pub also: Vec<String>,
    /// Log scale for the metric.
    pub log_y: bool,
    /// Units of the metrics (by name).
    pub units: BTreeMap<String, String>,
    /// Names for people of the program's metrics (by name).
    #[serde(default)]
    pub labels: BTreeMap<String, String>,
    /// Replicas per point.
    pub replicas: u32,
    /// What replicas perturb.
    pub perturb: Vec<String>,
    /// Relative latency jitter.
    pub latency_jitter: f64,
    /// Total runs in the design.
    pub runs: usize,
}

/// One axis in [`StudyMeta`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AxisMeta {
    /// Name.
    pub name: String,
    /// Unit, if any.
    pub unit: Option<String>,
    /// Value labels in order.
    pub values: Vec<String>,
}

impl StudyMeta {
    /// The metadata of `study`.
    pub fn of(study: &crate::spec::Study, runs: usize) -> StudyMeta {
        let mut units: BTreeMap<String, String> = [
            ("gflops", "Gflop/s"),
            ("hpl_time", "s"),
            ("simulated_time", "s"),
            ("wall_time", "s"),
            ("peak_pss_mb", "MiB"),
        ]
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
        let mut labels = BTreeMap::new();
        for m in &study.metrics {
            if let Some(u) = &m.unit {
                units.insert(m.name.clone(), u.clone());
            }
            if let Some(l) = &m.label {
                labels.insert(m.name.clone(), l.clone());
            }
        }
        StudyMeta {
            name: study.name.clone(),
            description: study.description.clone(),
            source: study.source.display().to_string(),
            base_dir: study.base_dir.display().to_string(),
            axes: study
                .axes
                .iter()
                .map(|a| AxisMeta {
                    name: a.name.clone(),
                    unit: a.unit.clone(),
                    values: a.values.iter().map(|v| v.label.clone()).collect(),
                })
                .collect(),
            metric: study.main_metric(),
            also: study.report.also.clone(),
            log_y: study.report.log_y,
            units,
            labels,
            replicas: study.replicas.count,
            perturb: study
                .replicas
                .perturb
                .iter()
                .map(|p| match p {
                    crate::spec::Perturb::Latency => "latency".to_string(),
                    crate::spec::Perturb::Seed => "seed".to_string(),
                })
                .collect(),
            latency_jitter: study.replicas.latency_jitter,
            runs,
        }
    }

    /// Writes `study.json` and `study.toml` into the results directory.
    pub fn save(&self, dir: &ResultsDir, study_text: &str) -> Result<()> {
        write_atomic(&dir.dir.join("study.toml"), study_text.as_bytes())?;
        write_atomic(
            &dir.dir.join("study.json"),
            serde_json::to_string_pretty(self)
                .expect("metadata serializes")
                .as_bytes(),
        )
    }

    /// Reads `study.json` of a results directory, if there is one.
    pub fn load(dir: &Path) -> Result<Option<StudyMeta>> {
        match std::fs::read_to_string(dir.join("study.json")) {
            Ok(t) => Ok(Some(
                serde_json::from_str(&t).with_context(|| format!("{}/study.json", dir.display()))?,
            )),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e).with_context(|| format!("cannot read {}/study.json", dir.display())),
        }
    }

    /// The study as recorded in a results directory (`study.toml`, resolved against `base_dir`).
    pub fn study(&self, dir: &Path) -> Result<crate::spec::Study> {
        let text = std::fs::read_to_string(dir.join("study.toml"))
            .with_context(|| format!("cannot read {}/study.toml", dir.display()))?;
        crate::spec::Study::from_str(&text, Path::new(&self.source), Path::new(&self.base_dir))
    }
}

/// An exclusive lock on a results directory (released when dropped, or when the process dies).
#[derive(Debug)]
pub struct DirLock {
    _file: std::fs::File,
}

impl ResultsDir {
    /// Takes the directory's lock (`.lock`, `flock`), or says who holds it.
    pub fn lock(&self) -> Result<DirLock> {
        use std::os::fd::AsRawFd;
        let path = self.dir.join(".lock");
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .with_context(|| format!("cannot open {}", path.display()))?;
        // SAFETY: flock(2) on a descriptor this function owns; no memory is shared.
        let r = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
        if r != 0 {
            anyhow::bail!(
                "another smpi-study is running on {} (it holds {}); wait for it or stop it",
                self.dir.display(),
                path.display()
            );
        }
        Ok(DirLock { _file: file })
    }
}
