//! The end of a run: the summary line, `--json`, peak memory, and how each rank's
//! blocking call is described in deadlock reports.

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use crate::mpi as rt;

/// Outcome of a run, for the summary and JSON.
pub(super) struct Report {
    pub simulated_time: f64,
    pub wall_time: f64,
    pub finish_times: Vec<f64>,
    pub messages: Vec<u64>,
    pub bytes: Vec<u64>,
    pub events: u64,
    /// Peak proportional set size seen (sampled about once a second), KiB.
    pub peak_pss_kb: u64,
    /// Peak resident set size (getrusage), KiB.
    pub max_rss_kb: u64,
    /// Modelled kernels: (name, calls, total injected seconds over all ranks).
    pub kernels: Vec<(String, u64, f64)>,
    /// Kernels called outside their calibrated ranges, with their number of
    /// calls and modelled seconds; `None` when the model set gives no ranges.
    pub extrapolated: Option<Vec<(models::KernelExtrapolation, u64, f64)>>,
    /// Simulated seconds each rank spent computing (its own code, modelled
    /// kernels, `smpi_execute*`).
    pub compute_times: Vec<f64>,
    /// `--link-stats`: the busiest links, most saturated first.
    pub links: Option<Vec<LinkReport>>,
    /// `plugin:host_energy`: each host's energy at the end.
    pub energy: Option<simcore::energy::EnergyReport>,
}

/// One link's traffic (`--link-stats`).
#[derive(Debug, Clone)]
pub(super) struct LinkReport {
    pub name: String,
    pub bytes: f64,
    pub saturated: f64,
    pub peak_flows: u32,
}

/// The `count` busiest links of `stats`: most saturated time, then most bytes
/// (links that carried nothing are left out).
pub(super) fn busiest_links(
    stats: &simcore::LinkStats,
    platform: &simcore::platform::Platform,
    count: usize,
) -> Vec<LinkReport> {
    let mut links: Vec<LinkReport> = (0..stats.bytes.len())
        .filter(|&i| stats.bytes[i] > 0.0)
        .map(|i| LinkReport {
            name: platform.links[i].name.clone(),
            bytes: stats.bytes[i],
            saturated: stats.saturated[i],
            peak_flows: stats.peak_flows[i],
        })
        .collect();
    links.sort_by(|a, b| {
        b.saturated
            .total_cmp(&a.saturated)
            .then(b.bytes.total_cmp(&a.bytes))
            .then(a.name.cmp(&b.name))
    });
    links.truncate(count);
    links
}

/// The `--link-stats` table and the per-rank split of time, on stderr.
pub(super) fn print_link_stats(r: &Report) {
    let Some(links) = &r.links else { return };
    eprintln!("[smpirun] busiest links (of those that carried traffic):");
    eprintln!(
        "  {:<40} {:>14} {:>14} {:>8} {:>10}",
        "link", "bytes", "saturated s", "% of run", "peak flows"
    );
    for l in links {
        let share = if r.simulated_time > 0.0 {
            100.0 * l.saturated / r.simulated_time
        } else {
            0.0
        };
        eprintln!(
            "  {:<40} {:>14.0} {:>14.9} {:>7.1}% {:>10}",
            l.name, l.bytes, l.saturated, share, l.peak_flows
        );
    }
    let n = r.finish_times.len().max(1) as f64;
    // (+ 0.0: an empty sum is -0.0.)
    let compute: f64 = r.compute_times.iter().sum::<f64>() / n + 0.0;
    let total: f64 = r.finish_times.iter().filter(|t| t.is_finite()).sum::<f64>() / n;
    eprintln!(
        "[smpirun] time per rank, mean over ranks: {:.9} s computing, {:.9} s in MPI (communication, waiting, overheads)",
        compute,
        (total - compute).max(0.0)
    );
}

/// The warning that the model extrapolates, on stderr: one line per kernel
/// called outside its calibrated ranges (nothing when none was).
pub(super) fn print_extrapolation(r: &Report) {
    let Some(list) = r.extrapolated.as_ref().filter(|l| !l.is_empty()) else {
        return;
    };
    let lines: Vec<String> = list
        .iter()
        .map(|(e, calls, seconds)| e.describe(*calls, *seconds))
        .collect();
    if let [line] = lines.as_slice() {
        eprintln!("smpirun: warning: the model extrapolates: {line}");
        return;
    }
    eprintln!(
        "smpirun: warning: the model extrapolates: {} kernels were called outside the ranges their models were \
         calibrated on:",
        lines.len()
    );
    for line in lines {
        eprintln!("  {line}");
    }
}

/// The `extrapolated` object of the JSON summary: per kernel, the calls outside
/// the calibrated ranges and each term that was outside; `null` when the model set
/// gives no ranges.
fn extrapolated_json(list: &Option<Vec<(models::KernelExtrapolation, u64, f64)>>) -> serde_json::Value {
    let Some(list) = list else {
        return serde_json::Value::Null;
    };
    list.iter()
        .map(|(e, calls, seconds)| {
            let terms: Vec<serde_json::Value> = e
                .terms
                .iter()
                .map(|t| {
                    serde_json::json!({
                        "section": t.section,
                        "term": t.term,
                        "calls": t.calls,
                        "min_seen": t.min_seen,
                        "max_seen": t.max_seen,
                        "calibrated": t.calibrated,
                    })
                })
                .collect();
            (
                e.kernel.clone(),
                serde_json::json!({
                    "calls": e.calls,
                    "of_calls": calls,
                    "seconds": e.seconds,
                    "of_seconds": seconds,
                    "terms": terms
                }),
            )
        })
        .collect::<serde_json::Map<_, _>>()
        .into()
}

/// This process's proportional set size (`/proc/self/smaps_rollup`), KiB.
pub(super) fn proportional_set_size_kb() -> u64 {
    std::fs::read_to_string("/proc/self/smaps_rollup")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Pss:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}

/// Samples this process's PSS on a thread of its own, so the simulation never
/// waits for it: a read walks every page table (a tenth of a second with
/// gigabytes folded). The period is at least 0.2 s and 50 times the last
/// read's cost, so on a single core the sampler takes at most 2 %.
pub(super) struct PssSampler {
    peak_kb: Arc<AtomicU64>,
    /// When the last read finished and how long the period is, in ms since `origin`.
    last_done_ms: Arc<AtomicU64>,
    period_ms: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
    origin: Instant,
}

impl PssSampler {
    pub(super) fn start() -> Self {
        let s = PssSampler {
            peak_kb: Arc::new(AtomicU64::new(0)),
            last_done_ms: Arc::new(AtomicU64::new(0)),
            period_ms: Arc::new(AtomicU64::new(200)),
            stop: Arc::new(AtomicBool::new(false)),
            origin: Instant::now(),
        };
        let (peak, done, period, stop, origin) = (
            s.peak_kb.clone(),
            s.last_done_ms.clone(),
            s.period_ms.clone(),
            s.stop.clone(),
            s.origin,
        );
        std::thread::Builder::new()
            .name("pss-sampler".into())
            .spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    let read = Instant::now();
                    peak.fetch_max(proportional_set_size_kb(), Ordering::Relaxed);
                    let p = (50 * read.elapsed().as_millis() as u64).max(200);
                    period.store(p, Ordering::Relaxed);
                    done.store(origin.elapsed().as_millis() as u64, Ordering::Relaxed);
                    std::thread::sleep(std::time::Duration::from_millis(p));
                }
            })
            .expect("spawning the PSS sampler");
        s
    }

    /// Stops sampling and returns the peak, KiB; reads once more here when
    /// the last sample is older than a period (short runs).
    pub(super) fn finish(self) -> u64 {
        self.stop.store(true, Ordering::Relaxed);
        let age = self.origin.elapsed().as_millis() as u64 - self.last_done_ms.load(Ordering::Relaxed);
        if age > self.period_ms.load(Ordering::Relaxed) {
            self.peak_kb
                .fetch_max(proportional_set_size_kb(), Ordering::Relaxed);
        }
        self.peak_kb.load(Ordering::Relaxed)
    }
}

/// Peak resident set size of this process, KiB.
pub(super) fn max_rss_kb() -> u64 {
    // Safety: getrusage fills a plain struct.
    unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut ru);
        ru.ru_maxrss as u64
    }
}

pub(super) fn fmt_peer(p: i32) -> String {
    match p {
        rt::MPI_ANY_SOURCE => "MPI_ANY_SOURCE".into(),
        rt::MPI_PROC_NULL => "MPI_PROC_NULL".into(),
        _ => p.to_string(),
    }
}

pub(super) fn fmt_tag(t: i32) -> String {
    if t == rt::MPI_ANY_TAG {
        "MPI_ANY_TAG".into()
    } else {
        t.to_string()
    }
}

pub(super) fn fmt_comm(c: i32) -> String {
    match c {
        rt::MPI_COMM_WORLD => "MPI_COMM_WORLD".into(),
        rt::MPI_COMM_SELF => "MPI_COMM_SELF".into(),
        _ => format!("#{c}"),
    }
}

/// How a run ended, for the exit status and `--json`.
#[derive(Debug)]
pub(super) struct Ending {
    /// `ok`, `rank-failed` (a rank returned or exited non-zero), `deadlock`,
    /// `failed` (a rank crashed, aborted or made a fatal MPI error), `stopped`
    /// (signal or time limit).
    pub(super) status: &'static str,
    /// smpirun's exit status.
    pub(super) code: i32,
    /// What went wrong, as smpirun printed it.
    pub(super) error: Option<String>,
}

/// The `energy` object of the JSON summary (`plugin:host_energy`): the totals as SimGrid's last
/// lines give them, and each host by name.
fn energy_json(e: &simcore::energy::EnergyReport) -> serde_json::Value {
    let (total, used) = e.totals();
    serde_json::json!({
        "date": e.date,
        "total_joules": total,
        "used_hosts_joules": used,
        "unused_hosts_joules": total - used,
        "hosts": e.by_name().into_iter().map(|(name, joules, used)| serde_json::json!({
            "name": name,
            "joules": joules,
            "used": used,
        })).collect::<Vec<_>>(),
    })
}

/// SimGrid's end lines of the energy plugin (`host_energy/INFO`), on stderr.
pub(super) fn print_energy(e: &simcore::energy::EnergyReport) {
    for line in e.lines() {
        crate::abi::energy::log_energy(crate::host::xbt_log::Priority::Info, None, &line, e.date);
    }
}

/// Writes the `--json` summary (format `smpirun-summary/2`, documented in
/// the README): everything deterministic at the top level, what depends on
/// the machine and its load (wall time, memory) under `host`, so two runs of
/// the same inputs compare equal once `host` is removed.
pub(super) fn write_json(
    path: &Path,
    r: &Report,
    ending: &Ending,
    np: usize,
    platform: &Path,
    program: &Path,
) -> std::io::Result<()> {
    let finite = |t: f64| t.is_finite().then_some(t);
    let v = serde_json::json!({
        "format": "smpirun-summary/2",
        "status": ending.status,
        "exit_code": ending.code,
        "error": ending.error,
        "simulated_time": r.simulated_time,
        "ranks": np,
        "events": r.events,
        "platform": platform.display().to_string(),
        "program": program.display().to_string(),
        "messages": r.messages.iter().sum::<u64>(),
        "kernels": r.kernels.iter().map(|(n, c, t)| (n.clone(), serde_json::json!({"calls": c, "seconds": t}))).collect::<serde_json::Map<_, _>>(),
        "extrapolated": extrapolated_json(&r.extrapolated),
        "per_rank": (0..np).map(|i| {
            let finish = r.finish_times.get(i).copied().and_then(finite);
            let compute = r.compute_times.get(i).copied().unwrap_or(0.0);
            serde_json::json!({
                "rank": i,
                "finish_time": finish,
                "compute_time": compute,
                "mpi_time": finish.map(|f| (f - compute).max(0.0)),
                "messages_sent": r.messages[i],
                "bytes_sent": r.bytes[i],
            })
        }).collect::<Vec<_>>(),
        "links": r.links.as_ref().map(|links| links.iter().map(|l| serde_json::json!({
            "name": l.name,
            "bytes": l.bytes,
            "saturated_time": l.saturated,
            "peak_flows": l.peak_flows,
        })).collect::<Vec<_>>()),
        "energy": r.energy.as_ref().map(energy_json),
        "host": {
            "wall_time": r.wall_time,
            "peak_pss_kb": r.peak_pss_kb,
            "max_rss_kb": r.max_rss_kb,
        },
    });
    let text = serde_json::to_string_pretty(&v)? + "\n";
    if path == Path::new("-") {
        // After the program's own output, which is flushed by now.
        use std::io::Write as _;
        let mut out = std::io::stdout().lock();
        out.write_all(text.as_bytes())?;
        return out.flush();
    }
    std::fs::write(path, text)
}
