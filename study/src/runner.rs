//! One run: its directory, the `smpirun` command, its row.
//!
//! `runs/<run id>/` gets everything the run needs and produces: the platform
//! file of the point (with the replica's perturbation), a hostfile when the
//! placement asks for one, HPL.dat for HPL, `command.txt`, the program's
//! `stdout`, smpirun's `stderr` and its `run.json`. The directory is emptied
//! first, so a run redone after an interruption starts clean.
//!
//! The simulation runs in its own process group (so a terminal's Ctrl-C
//! reaches this tool, which then stops it and records nothing for it), and
//! with `PR_SET_PDEATHSIG`, so that it dies with the thread that waits for it
//! if this tool is killed outright: a resumed study never races an orphan
//! writing into the same directory.

use std::collections::BTreeMap;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{anyhow, bail, Context, Result};
use rand::seq::SliceRandom;

use crate::design::{params_json, stream, Run};
use crate::hpl;
use crate::results::{ResultsDir, Row, Status};
use crate::spec::{Launch, MetricSpec, Placement, PointConfig, Reduce, Study};

/// What every run of an invocation shares.
#[derive(Clone, Debug)]
pub struct Env {
    /// The simulator.
    pub smpirun: PathBuf,
    /// `smpirun -version`.
    pub simulator: String,
    /// `local` or `slurm`.
    pub executor: String,
    /// This machine's name.
    pub host: String,
    /// `<job>_<task>` under Slurm.
    pub slurm_task: Option<String>,
}

impl Env {
    /// Finds smpirun (`explicit`, else the study's, else next to this executable, else `$PATH`)
    /// and asks its version.
    pub fn new(explicit: Option<&Path>, study: &Study, executor: &str) -> Result<Env> {
        let smpirun = find_smpirun(explicit, study)?;
        let out = Command::new(&smpirun)
            .arg("-version")
            .output()
            .with_context(|| format!("cannot run {} -version", smpirun.display()))?;
        let simulator = String::from_utf8_lossy(&out.stdout).trim().to_string();
        let simulator = if simulator.is_empty() {
            String::from_utf8_lossy(&out.stderr).trim().to_string()
        } else {
            simulator
        };
        Ok(Env {
            smpirun,
            simulator,
            executor: executor.to_string(),
            host: hostname(),
            slurm_task: None,
        })
    }
}

/// This machine's short name.
pub fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown".into())
}

fn find_smpirun(explicit: Option<&Path>, study: &Study) -> Result<PathBuf> {
    if let Some(p) = explicit {
        let p = std::fs::canonicalize(p).with_context(|| format!("--smpirun {}: not found", p.display()))?;
        return Ok(p);
    }
    if let Some(p) = &study.smpirun {
        let p = study.base_dir.join(p);
        return std::fs::canonicalize(&p)
            .with_context(|| format!("smpirun = {} (in the study file): not found", p.display()));
    }
    if let Ok(exe) = std::env::current_exe() {
        if let Some(dir) = exe.parent() {
            let p = dir.join("smpirun");
            if p.exists() {
                return Ok(p);
            }
        }
    }
    if let Some(path) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&path) {
            let p = dir.join("smpirun");
            if p.exists() {
                return Ok(p);
            }
        }
    }
    bail!("smpirun not found next to smpi-study nor in PATH: build it (cargo build --release -p smpi-shim) or pass --smpirun")
}

/// Shell-quotes one word.
pub fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./:=,+%@".contains(&b))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// A prepared run: its directory and command.
#[derive(Clone, Debug)]
pub struct Prepared {
    /// `runs/<run id>/`.
    pub dir: PathBuf,
    /// smpirun and its arguments.
    pub command: Vec<String>,
    /// The point's configuration.
    pub config: PointConfig,
}

/// Writes the run's input files and builds its command.
pub fn prepare(study: &Study, run: &Run, env: &Env, results: &ResultsDir) -> Result<Prepared> {
    let dir = results.run_dir(&run.id);
    if dir.exists() {
        std::fs::remove_dir_all(&dir).with_context(|| format!("cannot empty {}", dir.display()))?;
    }
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let config = PointConfig::from_params(&run.point.params, &study.base_dir)?;
    let text = config.platform.generate(run.perturbation.latency_factor)?;
    let platform = dir.join(config.platform.file_name());
    std::fs::write(&platform, &text)?;

    let mut cmd: Vec<String> = vec![env.smpirun.display().to_string()];
    cmd.extend(["-platform".into(), platform.display().to_string()]);
    cmd.extend(["-np".into(), config.np.to_string()]);
    let hostfile = match &config.placement {
        Placement::Default => None,
        Placement::Hostfile(p) => Some(p.clone()),
        placement => {
            let hosts = config.platform.host_names(&text)?;
            let h = hosts.len();
            let np = config.np as usize;
            let order: Vec<usize> = match placement {
                Placement::Linear => (0..np).map(|i| i % h).collect(),
                Placement::Spread => (0..np).map(|i| (i * h / np) % h).collect(),
                Placement::Random => {
                    let mut perm: Vec<usize> = (0..h).collect();
                    perm.shuffle(&mut stream(study.seed, "placement", h as u64));
                    (0..np).map(|i| perm[i % h]).collect()
                }
                Placement::Default | Placement::Hostfile(_) => unreachable!(),
            };
            let mut s = String::new();
            for i in order {
                s.push_str(&hosts[i]);
                s.push('\n');
            }
            let p = dir.join("hostfile");
            std::fs::write(&p, s)?;
            Some(p)
        }
    };
    if let Some(h) = hostfile {
        cmd.extend(["-hostfile".into(), h.display().to_string()]);
    }
    for (k, v) in &config.cfg {
        cmd.push(format!("--cfg={k}:{v}"));
    }
    if let Some(s) = run.perturbation.seed {
        cmd.push(format!("--cfg=smpi/seed:{s}"));
    }
    if let Some(m) = &config.model {
        cmd.extend(["-model".into(), m.display().to_string()]);
    }
    cmd.extend(["--json".into(), dir.join("run.json").display().to_string()]);
    match &config.launch {
        Launch::Hpl { xhpl, params } => {
            std::fs::write(dir.join("HPL.dat"), params.dat())?;
            cmd.push(xhpl.display().to_string());
        }
        Launch::Program { path, args } => {
            cmd.push(path.display().to_string());
            cmd.extend(args.iter().cloned());
        }
    }
    std::fs::write(
        dir.join("command.txt"),
        format!(
            "cd {}\n{}\n",
            shell_quote(&dir.display().to_string()),
            quote_all(&cmd)
        ),
    )?;
    Ok(Prepared {
        dir,
        command: cmd,
        config,
    })
}

fn quote_all(cmd: &[String]) -> String {
    cmd.iter().map(|a| shell_quote(a)).collect::<Vec<_>>().join(" ")
}

/// How a run ended.
enum Ended {
    Exited(std::process::ExitStatus),
    TimedOut,
    Cancelled,
}

/// Runs one point's replica and returns its row; `None` if `cancel` was set
/// while it ran (the run is then stopped and must be redone).
pub fn execute(
    study: &Study,
    run: &Run,
    env: &Env,
    results: &ResultsDir,
    cancel: &AtomicBool,
) -> Option<Row> {
    let started = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0);
    let t0 = Instant::now();
    let mut row = base_row(study, run, env, results, started);
    let prepared = match prepare(study, run, env, results) {
        Ok(p) => p,
        Err(e) => {
            row.error = Some(format!("could not prepare the run: {e:#}"));
            row.wall_time = t0.elapsed().as_secs_f64();
            return Some(row);
        }
    };
    row.command = prepared.command.clone();
    row.command_line = quote_all(&prepared.command);
    let ended = spawn_and_wait(&prepared, study.timeout, cancel);
    row.wall_time = t0.elapsed().as_secs_f64();
    let ended = match ended {
        Ok(e) => e,
        Err(e) => {
            row.error = Some(format!("could not start smpirun: {e:#}"));
            return Some(row);
        }
    };
    let stdout = std::fs::read_to_string(prepared.dir.join("stdout")).unwrap_or_default();
    let stderr =
        String::from_utf8_lossy(&std::fs::read(prepared.dir.join("stderr")).unwrap_or_default()).into_owned();
    let json: Option<serde_json::Value> = std::fs::read_to_string(prepared.dir.join("run.json"))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok());
    if let Some(j) = &json {
        // smpirun-summary/2 keeps wall time and memory under `host`; the first format had them at the top.
        let host = |k: &str| {
            if j["host"].is_object() {
                &j["host"][k]
            } else {
                &j[k]
            }
        };
        row.simulated_time = j["simulated_time"].as_f64();
        row.smpirun_wall_time = host("wall_time").as_f64();
        row.peak_pss_kb = host("peak_pss_kb").as_u64();
        row.max_rss_kb = host("max_rss_kb").as_u64();
        row.messages = j["messages"].as_u64();
        row.events = j["events"].as_u64();
    }
    // smpirun-summary/2 writes the summary on failures too, with what went wrong.
    let json_error = json
        .as_ref()
        .and_then(|j| j["error"].as_str())
        .map(str::to_string);
    let is_hpl = matches!(prepared.config.launch, Launch::Hpl { .. });
    if is_hpl {
        let h = hpl::parse_output(&stdout);
        row.metrics = h.metrics();
        row.passed = h.passed;
        row.hpl_line = h.line.clone();
    }
    row.metrics
        .extend(program_metrics(&stdout, &study.metrics, !is_hpl));
    match ended {
        Ended::Cancelled => return None,
        Ended::TimedOut => {
            row.error = Some(format!(
                "timeout: stopped after {} s (study `timeout`)",
                study.timeout
            ))
        }
        Ended::Exited(st) => {
            row.exit_code = st.code();
            row.signal = st.signal();
            if !st.success() {
                row.error = Some(match (st.code(), st.signal()) {
                    (Some(c), _) => format!(
                        "smpirun exited with code {c}: {}",
                        json_error.unwrap_or_else(|| last_line(&stderr))
                    ),
                    (None, Some(s)) => format!("smpirun was killed by signal {s}"),
                    _ => "smpirun failed".into(),
                });
            } else if json.is_none() {
                row.error = Some("smpirun exited 0 but wrote no --json summary".into());
            } else if is_hpl && row.hpl_line.is_none() {
                row.error = Some("HPL printed no result line (see stdout)".into());
            }
        }
    }
    if row.error.is_none() {
        row.status = Status::Ok;
    } else {
        row.stderr_tail = Some(tail(&stderr, 20, 4000));
    }
    Some(row)
}

fn base_row(study: &Study, run: &Run, env: &Env, results: &ResultsDir, started: f64) -> Row {
    Row {
        study: study.name.clone(),
        run_id: run.id.clone(),
        point_id: run.point.id.clone(),
        replica: run.replica,
        order: run.order,
        status: Status::Failed,
        axes: run.point.labels.iter().cloned().collect(),
        params: params_json(&run.point.params),
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
        error: None,
        stderr_tail: None,
        simulator: env.simulator.clone(),
        study_version: crate::VERSION.to_string(),
        command: Vec::new(),
        command_line: String::new(),
        run_dir: results.run_dir(&run.id).display().to_string(),
        host: env.host.clone(),
        executor: env.executor.clone(),
        slurm_task: env.slurm_task.clone(),
        started_at: started,
    }
}

fn spawn_and_wait(p: &Prepared, timeout: f64, cancel: &AtomicBool) -> Result<Ended> {
    let stdout = std::fs::File::create(p.dir.join("stdout"))?;
    let stderr = std::fs::File::create(p.dir.join("stderr"))?;
    let mut cmd = Command::new(&p.command[0]);
    cmd.args(&p.command[1..])
        .current_dir(&p.dir)
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(stderr)
        .process_group(0);
    let parent = std::process::id() as libc::pid_t;
    // SAFETY: the closure runs in the child between fork and exec and only calls
    // prctl(2), getppid(2) and _exit(2), all async-signal-safe.
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong, 0, 0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // The parent may have died before prctl: then nobody would wait for us.
            if libc::getppid() != parent {
                libc::_exit(1);
            }
            Ok(())
        });
    }
    let mut child = cmd
        .spawn()
        .with_context(|| format!("cannot run {}", p.command[0]))?;
    let t0 = Instant::now();
    let stop = |child: &mut std::process::Child| {
        let pgid = child.id() as libc::pid_t;
        // SAFETY: signals the process group this function created; no memory is involved.
        unsafe {
            libc::kill(-pgid, libc::SIGTERM);
        }
        let t = Instant::now();
        while t.elapsed() < Duration::from_secs(3) {
            if let Ok(Some(_)) = child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        // SAFETY: as above.
        unsafe {
            libc::kill(-pgid, libc::SIGKILL);
        }
        let _ = child.wait();
    };
    loop {
        if let Some(st) = child.try_wait()? {
            return Ok(Ended::Exited(st));
        }
        if cancel.load(Ordering::SeqCst) {
            stop(&mut child);
            return Ok(Ended::Cancelled);
        }
        if t0.elapsed().as_secs_f64() > timeout {
            stop(&mut child);
            return Ok(Ended::TimedOut);
        }
        std::thread::sleep(Duration::from_millis(25));
    }
}

fn last_line(s: &str) -> String {
    s.lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim()
        .to_string()
}

/// The last `lines` lines of `s`, at most `max` bytes.
fn tail(s: &str, lines: usize, max: usize) -> String {
    let all: Vec<&str> = s.lines().collect();
    let mut t = all[all.len().saturating_sub(lines)..].join("\n");
    if t.len() > max {
        let mut cut = t.len() - max;
        while !t.is_char_boundary(cut) {
            cut += 1;
        }
        t = t[cut..].to_string();
    }
    t
}

/// Metrics from `key=value` tokens of stdout: the study's specs, or (when
/// `all` and there are none) every numeric key, last value.
pub fn program_metrics(stdout: &str, specs: &[MetricSpec], all: bool) -> BTreeMap<String, f64> {
    let mut out = BTreeMap::new();
    if specs.is_empty() {
        if all {
            for line in stdout.lines() {
                for (k, v) in line.split_whitespace().filter_map(|t| t.split_once('=')) {
                    if let Ok(x) = v.parse::<f64>() {
                        out.insert(k.to_string(), x);
                    }
                }
            }
        }
        return out;
    }
    for spec in specs {
        let key = spec.key.as_deref().unwrap_or(&spec.name);
        let mut values = Vec::new();
        for line in stdout.lines() {
            let mut words = line.split_whitespace();
            if let Some(first) = &spec.line {
                if words.clone().next() != Some(first.as_str()) {
                    continue;
                }
            }
            for (k, v) in words.by_ref().filter_map(|t| t.split_once('=')) {
                if k == key {
                    if let Ok(x) = v.parse::<f64>() {
                        values.push(x);
                    }
                }
            }
        }
        if values.is_empty() {
            continue;
        }
        let v = match spec.reduce.unwrap_or(Reduce::Last) {
            Reduce::Last => *values.last().expect("not empty"),
            Reduce::First => values[0],
            Reduce::Max => values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            Reduce::Min => values.iter().copied().fold(f64::INFINITY, f64::min),
            Reduce::Sum => values.iter().sum(),
            Reduce::Mean => values.iter().sum::<f64>() / values.len() as f64,
        };
        out.insert(spec.name.clone(), v);
    }
    out
}

/// Runs `smpi-study`-independent checks that a run could start (the program exists).
pub fn check_inputs(config: &PointConfig) -> Result<()> {
    let exe = match &config.launch {
        Launch::Hpl { xhpl, .. } => xhpl,
        Launch::Program { path, .. } => path,
    };
    if !exe.exists() {
        return Err(anyhow!(
            "{} does not exist{}",
            exe.display(),
            if matches!(config.launch, Launch::Hpl { .. }) {
                " (build HPL: apps/hpl/build.sh)"
            } else {
                " (build it with smpicc)"
            }
        ));
    }
    if let Some(m) = &config.model {
        if !m.exists() {
            bail!("model file {} does not exist", m.display());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metrics_from_key_values() {
        let out = "time rank=0 t=1.5\ntime rank=1 t=2.5\nother t=9\nOK\n";
        let all = program_metrics(out, &[], true);
        assert_eq!(all["t"], 9.0);
        let spec = |reduce| MetricSpec {
            name: "coll".into(),
            key: Some("t".into()),
            line: Some("time".into()),
            reduce: Some(reduce),
            unit: None,
            label: None,
        };
        assert_eq!(program_metrics(out, &[spec(Reduce::Max)], true)["coll"], 2.5);
        assert_eq!(program_metrics(out, &[spec(Reduce::Mean)], true)["coll"], 2.0);
        assert_eq!(program_metrics(out, &[spec(Reduce::First)], true)["coll"], 1.5);
    }

    #[test]
    fn quoting() {
        assert_eq!(shell_quote("--cfg=smpi/seed:3"), "--cfg=smpi/seed:3");
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
    }
}
