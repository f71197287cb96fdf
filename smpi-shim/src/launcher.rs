//! `smpirun`: command line, rank placement, and the simulation run.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use simcore::platform::{HostId, Platform, PlatformFile};
use simcore::{KernelConfig, NetworkConfig, NetworkFactors, SimError, Simulation};

use crate::config;
use crate::interpose;
use crate::kernels::Kernels;
use crate::loader::{c_argv, Program};
use crate::runtime::{self as rt, with_world, World};

pub const USAGE: &str = "\
smpirun: run an MPI program (built with smpicc) on a simulated platform

Usage: smpirun [options] -platform <file> [-hostfile <file>] [-np <n>] <program> [args...]

Options:
  -platform <file>     platform description: our TOML format or SimGrid v4 XML
  -np, -n <n>          number of ranks (default: number of hostfile lines)
  -hostfile, -machinefile <file>
                       one host per line (\"host:N\" = N lines); rank i runs on line i mod lines.
                       Without it, ranks go round-robin on the platform's hosts in name order
  -map                 print the rank -> host placement
  --cfg=<key>:<value>  set a configuration key (repeatable; see --help-cfg)
  -model <file>        model set (TOML; see models/README.md)
  --json <file>        write a JSON summary (simulated time, per-rank finish times, messages)
  -request-log <file>  write one line per send, receive and probe posted:
                       <date> <rank> send|recv|iprobe size=<B> peer=<rank|-1> tag=<t> [found=0|1]
                       (the fields of SimGrid's smpi_request verbose log; compare the two
                       with scripts/request_diff.py)
  -keep-temps          keep the per-rank copies of the program
  -no-privatize        share globals between ranks (smpi/privatization:no)
  -tmpdir <dir>        where per-rank copies of the program go (default /tmp)
  -quiet               no end summary
  -progress <seconds>  a progress line on stderr every <seconds> of wall time, also when
                       stderr is not a terminal (on a terminal: one updated line, every 3 s)
  -help, --help        this text
  --help-cfg           list configuration keys with their defaults
  -version             print the version

The program's output goes to stdout; smpirun's summary goes to stderr.
";

/// Parsed command line.
#[derive(Debug, Default)]
pub struct Args {
    pub platform: Option<PathBuf>,
    pub np: Option<usize>,
    pub hostfile: Option<PathBuf>,
    pub map: bool,
    pub cfg: Vec<String>,
    pub model: Option<PathBuf>,
    pub json: Option<PathBuf>,
    /// `-request-log <file>`: one line per send, receive and probe posted.
    pub request_log: Option<PathBuf>,
    pub quiet: bool,
    /// `-progress <seconds>`: progress lines also when stderr is not a terminal.
    pub progress_every: Option<f64>,
    pub program: Option<PathBuf>,
    pub program_args: Vec<String>,
}

/// What the command line asks for.
pub enum Command {
    Run(Box<Args>),
    Help,
    HelpCfg,
    Version,
}

/// Parses smpirun's arguments (SMPI-style single-dash flags).
pub fn parse_args(argv: &[String]) -> Result<Command, String> {
    let mut a = Args::default();
    let mut i = 0;
    let need = |i: usize, flag: &str| -> Result<String, String> {
        argv.get(i + 1)
            .cloned()
            .ok_or_else(|| format!("{flag} needs a value"))
    };
    while i < argv.len() {
        let s = argv[i].as_str();
        if a.program.is_some() {
            // After the program: only --cfg/--log are ours, like SMPI.
            if let Some(kv) = s.strip_prefix("--cfg=") {
                a.cfg.push(kv.to_string());
            } else if s.starts_with("--log=") {
            } else {
                a.program_args.push(s.to_string());
            }
            i += 1;
            continue;
        }
        match s {
            "-help" | "--help" | "-h" => return Ok(Command::Help),
            "--help-cfg" | "-help-cfg" => return Ok(Command::HelpCfg),
            "-version" | "--version" => return Ok(Command::Version),
            "-platform" | "--platform" => {
                a.platform = Some(need(i, s)?.into());
                i += 1;
            }
            "-np" | "-n" | "--np" => {
                let v = need(i, s)?;
                a.np = Some(
                    v.parse()
                        .map_err(|_| format!("{s}: expected a number, got '{v}'"))?,
                );
                i += 1;
            }
            "-hostfile" | "-machinefile" | "--hostfile" => {
                a.hostfile = Some(need(i, s)?.into());
                i += 1;
            }
            "-map" => a.map = true,
            "-model" | "--model" => {
                a.model = Some(need(i, s)?.into());
                i += 1;
            }
            "--json" | "-json" => {
                a.json = Some(need(i, s)?.into());
                i += 1;
            }
            "-request-log" | "--request-log" => {
                a.request_log = Some(need(i, s)?.into());
                i += 1;
            }
            "--cfg" => {
                a.cfg.push(need(i, s)?);
                i += 1;
            }
            "-keep-temps" => a.cfg.push("smpi/keep-temps:yes".into()),
            "-no-privatize" => a.cfg.push("smpi/privatization:no".into()),
            "-tmpdir" => {
                a.cfg.push(format!("smpi/tmpdir:{}", need(i, s)?));
                i += 1;
            }
            "-quiet" => a.quiet = true,
            "-progress" => {
                let v = need(i, s)?;
                i += 1;
                let secs: f64 = v
                    .parse()
                    .ok()
                    .filter(|s: &f64| *s > 0.0 && s.is_finite())
                    .ok_or_else(|| format!("-progress: '{v}' is not a positive number of seconds"))?;
                a.progress_every = Some(secs);
            }
            "-trace" | "-trace-ti" | "-foreground" => {
                eprintln!("smpirun: warning: {s} is not supported yet and is ignored");
            }
            _ if s.starts_with("--cfg=") => a.cfg.push(s["--cfg=".len()..].to_string()),
            _ if s.starts_with("--log=") => {}
            _ if s.starts_with('-') => return Err(format!("unknown option '{s}' (see smpirun --help)")),
            _ => a.program = Some(s.into()),
        }
        i += 1;
    }
    Ok(Command::Run(Box::new(a)))
}

/// Reads a hostfile: one host per line, `host:N` for N copies; `#` comments.
pub fn read_hostfile(path: &Path, platform: &Platform) -> Result<Vec<HostId>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut hosts = Vec::new();
    for (lineno, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let (name, n) = match line.rsplit_once(':') {
            Some((h, n)) => (
                h.trim(),
                n.trim()
                    .parse::<usize>()
                    .map_err(|_| format!("{}:{}: bad slot count in '{line}'", path.display(), lineno + 1))?,
            ),
            None => (line, 1),
        };
        let id = platform.host_by_name(name).ok_or_else(|| {
            format!(
                "{}:{}: host '{name}' is not in the platform",
                path.display(),
                lineno + 1
            )
        })?;
        hosts.extend(std::iter::repeat_n(id, n));
    }
    if hosts.is_empty() {
        return Err(format!("{}: no host listed", path.display()));
    }
    Ok(hosts)
}

struct SmpiFactors {
    lat: models::network::PiecewiseFactor,
    bw: models::network::PiecewiseFactor,
}

impl NetworkFactors for SmpiFactors {
    fn latency_factor(&self, size: f64) -> f64 {
        self.lat.value(size)
    }
    fn bandwidth_factor(&self, size: f64) -> f64 {
        self.bw.value(size)
    }
}

/// Outcome of a run, for the summary and JSON.
pub struct Report {
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
}

/// This process's proportional set size (`/proc/self/smaps_rollup`), KiB.
pub fn proportional_set_size_kb() -> u64 {
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
struct PssSampler {
    peak_kb: Arc<AtomicU64>,
    /// When the last read finished and how long the period is, in ms since `origin`.
    last_done_ms: Arc<AtomicU64>,
    period_ms: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
    origin: Instant,
}

impl PssSampler {
    fn start() -> Self {
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
    fn finish(self) -> u64 {
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
pub fn max_rss_kb() -> u64 {
    // Safety: getrusage fills a plain struct.
    unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut ru);
        ru.ru_maxrss as u64
    }
}

/// Runs smpirun with the given arguments; returns the process exit code.
/// Like mpiexec: with `MPIEXEC_TIMEOUT=<seconds>` in the environment, the
/// run is stopped (exit status 124) after that much wall-clock time.
fn stop_after_mpiexec_timeout() {
    let limit = std::env::var("MPIEXEC_TIMEOUT")
        .ok()
        .and_then(|v| v.trim().parse::<f64>().ok());
    let Some(secs) = limit.filter(|s| *s > 0.0 && s.is_finite()) else {
        return;
    };
    std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_secs_f64(secs));
        eprintln!("smpirun: error: MPIEXEC_TIMEOUT expired: run stopped after {secs} s of wall-clock time");
        // The simulation thread may be anywhere: leave without running its destructors.
        // Safety: _exit only ends the process.
        unsafe { libc::_exit(124) }
    });
}

pub fn main_with_args(argv: &[String]) -> i32 {
    let args = match parse_args(argv) {
        Ok(Command::Run(a)) => a,
        Ok(Command::Help) => {
            print!("{USAGE}");
            return 0;
        }
        Ok(Command::HelpCfg) => {
            print!("{}", config::help());
            return 0;
        }
        Ok(Command::Version) => {
            println!("smpirun (smpi-rs) {}", env!("CARGO_PKG_VERSION"));
            return 0;
        }
        Err(e) => {
            eprintln!("smpirun: error: {e}");
            return 2;
        }
    };
    match run(&args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("smpirun: error: {e}");
            2
        }
    }
}

fn run(args: &Args) -> Result<i32, String> {
    let wall_start = Instant::now();
    stop_after_mpiexec_timeout();
    let platform_path = args
        .platform
        .as_ref()
        .ok_or("no platform given (use -platform <file>)")?;
    let program = args
        .program
        .as_ref()
        .ok_or("no program given (see smpirun --help)")?;
    // The platform file is read first and built last: its `<config>` is one source of the
    // configuration, and the platform depends on the result (the network model's loopback).
    let platform_file = PlatformFile::read(platform_path).map_err(|e| e.to_string())?;
    let model_set = match &args.model {
        Some(model) => models::ModelSet::load(model).map_err(|e| e.to_string())?,
        None => models::ModelSet::default(),
    };
    let model = args.model.as_deref().map(|path| (path, &model_set));
    let cfg = config::resolve(&platform_file.config(), model, &args.cfg).map_err(|e| e.to_string())?;
    let platform = Rc::new(
        platform_file
            .build(cfg.model_loopback())
            .map_err(|e| e.to_string())?,
    );
    for warning in config::unapplied_host_properties(&platform) {
        eprintln!("smpirun: warning: {}: {warning}", platform_path.display());
    }

    let slots: Vec<HostId> = match &args.hostfile {
        Some(h) => read_hostfile(h, &platform)?,
        None => {
            let mut ids: Vec<HostId> = (0..platform.hosts.len() as u32).map(HostId).collect();
            ids.sort_by(|a, b| platform.host(*a).name.cmp(&platform.host(*b).name));
            ids
        }
    };
    if slots.is_empty() {
        return Err("the platform has no host".into());
    }
    let np = match (args.np, &args.hostfile) {
        (Some(0), _) => return Err("-np must be at least 1".into()),
        (Some(n), _) => n,
        (None, Some(_)) => slots.len(),
        (None, None) => return Err("give the number of ranks with -np <n>".into()),
    };
    let rank_hosts: Vec<HostId> = (0..np).map(|i| slots[i % slots.len()]).collect();
    if args.map {
        for (i, h) in rank_hosts.iter().enumerate() {
            println!("[rank {i}] -> {}", platform.host(*h).name);
        }
    }

    let prog = Program::load(program, np, cfg.privatize, Path::new(&cfg.tmpdir), cfg.keep_temps)
        .map_err(|e| e.to_string())?;
    let seed = cfg
        .seed
        .unwrap_or(if args.model.is_some() { model_set.seed } else { 42 });
    let kernels = Kernels::new(
        model_set.compute.clone(),
        seed,
        np,
        &cfg.blas_mode,
        &cfg.blas_compute,
    );
    let functions: Vec<(String, models::compute::KernelId, usize)> = kernels
        .functions()
        .into_iter()
        .map(|(n, k)| {
            let nparams = kernels.models.signature(k).params.len();
            (n, k, nparams)
        })
        .collect();
    let targets = interpose::register(&functions)?;
    // A BLAS function the program defines itself stays its own unless the
    // model set models that kernel (the user asked for it); say so then.
    let mut keep_ours = |symbol: &str| match kernels.modelled_blas_symbol(symbol) {
        Some(kernel) => {
            eprintln!(
                "smpirun: note: {} defines {symbol} itself; the model of {kernel} replaces it, as the model set asks",
                program.display()
            );
            true
        }
        None => false,
    };
    let mut libc_state = crate::libc_state::LibcState::new(prog.handles.len());
    for (copy, h) in prog.handles.iter().enumerate() {
        // Safety: handles of the copies loaded just above; the cells live in
        // the world until the run ends.
        unsafe { interpose::bind_own_symbols(*h, &mut keep_ours) }?;
        unsafe { interpose::bind_data(*h, &libc_state.getopt_cells(copy)) }?;
        let counts = unsafe { interpose::patch(*h, &targets) }?;
        if h == &prog.handles[0] {
            for ((name, _), n) in targets.iter().zip(&counts) {
                if *n == 0 {
                    eprintln!(
                        "smpirun: warning: the model of function {name} never applies: {} does not call it through its PLT",
                        program.display()
                    );
                }
            }
        }
    }
    let net = NetworkConfig {
        factors: Box::new(SmpiFactors {
            lat: cfg.lat_factor.clone(),
            bw: cfg.bw_factor.clone(),
        }),
        weight_s: cfg.weight_s,
        tcp_gamma: cfg.tcp_gamma,
        crosstraffic: cfg.crosstraffic,
    };
    let kcfg = KernelConfig {
        stack_size: cfg.stack_size,
        work_precision: cfg.precision_work,
        network: net,
        trace: false,
        timing_precision: cfg.timing_precision,
        simgrid_order: cfg.simgrid_order,
    };
    crate::shared::init(
        &cfg.shared_malloc,
        cfg.shared_malloc_blocksize,
        &cfg.shared_malloc_hugepage,
        cfg.auto_shared_malloc_thresh,
        cfg.auto_shared_malloc_cow_thresh,
    )
    .map_err(|e| e.0)?;
    // Each coroutine stack is a mapping and its guard page another.
    crate::shared::reserve_mappings(2 * np + 64);
    let mut sim = Simulation::new(platform.clone(), kcfg);
    let display_timing = cfg.display_timing;
    let request_log = match &args.request_log {
        Some(path) => Some(std::io::BufWriter::new(std::fs::File::create(path).map_err(
            |e| format!("-request-log {}: cannot create it: {e}", path.display()),
        )?)),
        None => None,
    };
    let mut world = World::new(cfg, sim.handle(), kernels, platform.clone(), &rank_hosts);
    world.request_log = request_log;
    world.libc = libc_state;
    rt::install_world(world);
    let mut prog_args = vec![program.display().to_string()];
    prog_args.extend(args.program_args.iter().cloned());
    crate::info::set_env(vec![
        ("command".into(), program.display().to_string()),
        ("argv".into(), args.program_args.join(" ")),
        ("maxprocs".into(), rank_hosts.len().to_string()),
        (
            "wdir".into(),
            std::env::current_dir()
                .map(|d| d.display().to_string())
                .unwrap_or_default(),
        ),
        ("thread_level".into(), "MPI_THREAD_FUNNELED".into()),
    ]);
    for (rank, host) in rank_hosts.iter().enumerate() {
        let main = prog.mains[rank];
        let argv = prog_args.clone();
        let name = format!("rank {rank} (on {})", platform.host(*host).name);
        sim.spawn(name, *host, move |ctx| {
            let (_owned, mut ptrs) = c_argv(&argv);
            with_world(|w| {
                let r = &mut w.ranks[rank];
                r.ctx = ctx as *const _;
                r.bench_start = crate::entry::thread_cpu_time();
            });
            // Safety: calling the program's C main with a valid argv.
            let code = unsafe { main((ptrs.len() - 1) as i32, ptrs.as_mut_ptr()) };
            if code != 0 {
                return Err(format!("returned {code} from main"));
            }
            Ok(())
        });
    }
    sim.on_comm_done(|_a, user| with_world(|w| rt::on_comm_done(w, user)));
    // On a terminal, one line rewritten in place; otherwise (-progress) plain lines.
    let terminal = std::io::stderr().is_terminal();
    let progress = (terminal && !args.quiet) || args.progress_every.is_some();
    let every = args.progress_every.unwrap_or(3.0);
    let mut last_report = Instant::now();
    let start = Instant::now();
    let pss_sampler = PssSampler::start();
    let mut advances = 0u32;
    sim.on_progress(move |t| {
        // Reading the clock at every time advance shows in profiles.
        advances = advances.wrapping_add(1);
        if !advances.is_multiple_of(64) {
            return;
        }
        if progress && last_report.elapsed().as_secs_f64() > every {
            last_report = Instant::now();
            let wall = start.elapsed().as_secs_f64();
            let line = format!(
                "[smpirun] simulated {t:.6} s after {wall:.1} s wall ({:.3} sim-s/s)",
                t / wall
            );
            if terminal {
                eprint!("\r{line}   ");
            } else {
                eprintln!("{line}");
            }
        }
    });
    let outcome = sim.run();
    // Safety: flushing C stdio so the program's output precedes our summary.
    unsafe { libc::fflush(std::ptr::null_mut()) };
    // The request log is complete on every ending (a deadlock's log is the useful one).
    let log_flushed = with_world(|w| w.request_log.as_mut().map(std::io::Write::flush));
    if let (Some(Err(e)), Some(path)) = (log_flushed, &args.request_log) {
        eprintln!("smpirun: warning: request log {}: {e}", path.display());
    }
    if progress && terminal {
        eprint!("\r{:70}\r", "");
    }
    let wall = wall_start.elapsed().as_secs_f64();
    let (code, summary) = match outcome {
        Ok(s) => (0, s),
        Err(SimError::Deadlock { time, blocked }) => {
            eprintln!("smpirun: error: deadlock detected at t={time:.9} s: every remaining rank is blocked");
            with_world(|w| {
                for b in &blocked {
                    let rank = b.actor.0 as usize;
                    let what = match w.ranks[rank].blocked {
                        Some(bi) => format!(
                            "in {} (peer {}, tag {}, communicator {})",
                            bi.call,
                            fmt_peer(bi.peer),
                            fmt_tag(bi.tag),
                            fmt_comm(bi.comm)
                        ),
                        None => format!("waiting on {}", b.waiting_on.join(", ")),
                    };
                    eprintln!("  {}: {what}", b.name);
                }
            });
            std::mem::forget(sim);
            std::mem::forget(prog);
            return Ok(3);
        }
        Err(SimError::ActorFailed {
            name, time, message, ..
        }) => {
            eprintln!("smpirun: error: {name} failed at t={time:.9} s: {message}");
            std::mem::forget(sim);
            std::mem::forget(prog);
            let code = message
                .strip_prefix("returned ")
                .and_then(|m| m.split(' ').next())
                .and_then(|c| c.parse::<i32>().ok())
                .or_else(|| {
                    message
                        .strip_prefix("MPI_Abort with error code ")
                        .and_then(|m| m.split(' ').next()?.parse().ok())
                })
                .filter(|c| *c != 0)
                .unwrap_or(1);
            return Ok(code & 0xff);
        }
        Err(e) => return Err(e.to_string()),
    };
    let peak_pss_kb = pss_sampler.finish();
    let report = with_world(|w| Report {
        simulated_time: summary.time,
        wall_time: wall,
        finish_times: summary.finish_times.clone(),
        messages: w.ranks.iter().map(|r| r.messages_sent).collect(),
        bytes: w.ranks.iter().map(|r| r.bytes_sent).collect(),
        events: summary.events,
        peak_pss_kb,
        max_rss_kb: max_rss_kb(),
        kernels: w.kernels.summary(),
    });
    if !args.quiet || display_timing {
        let total: u64 = report.messages.iter().sum();
        eprintln!(
            "[smpirun] simulated time: {:.9} s | {} ranks | {} messages | {} events | wall {:.3} s | peak PSS {:.1} MiB",
            report.simulated_time,
            np,
            total,
            report.events,
            report.wall_time,
            report.peak_pss_kb as f64 / 1024.0
        );
    }
    if let Some(path) = &args.json {
        write_json(path, &report, np, platform_path, program)
            .map_err(|e| format!("{}: {e}", path.display()))?;
    }
    drop(sim);
    std::mem::forget(prog);
    Ok(code)
}

fn fmt_peer(p: i32) -> String {
    match p {
        rt::MPI_ANY_SOURCE => "MPI_ANY_SOURCE".into(),
        rt::MPI_PROC_NULL => "MPI_PROC_NULL".into(),
        _ => p.to_string(),
    }
}

fn fmt_tag(t: i32) -> String {
    if t == rt::MPI_ANY_TAG {
        "MPI_ANY_TAG".into()
    } else {
        t.to_string()
    }
}

fn fmt_comm(c: i32) -> String {
    match c {
        rt::MPI_COMM_WORLD => "MPI_COMM_WORLD".into(),
        rt::MPI_COMM_SELF => "MPI_COMM_SELF".into(),
        _ => format!("#{c}"),
    }
}

fn write_json(path: &Path, r: &Report, np: usize, platform: &Path, program: &Path) -> std::io::Result<()> {
    let v = serde_json::json!({
        "simulated_time": r.simulated_time,
        "ranks": np,
        "wall_time": r.wall_time,
        "events": r.events,
        "peak_pss_kb": r.peak_pss_kb,
        "max_rss_kb": r.max_rss_kb,
        "platform": platform.display().to_string(),
        "program": program.display().to_string(),
        "messages": r.messages.iter().sum::<u64>(),
        "kernels": r.kernels.iter().map(|(n, c, t)| (n.clone(), serde_json::json!({"calls": c, "seconds": t}))).collect::<serde_json::Map<_, _>>(),
        "per_rank": (0..np).map(|i| serde_json::json!({
            "rank": i,
            "finish_time": r.finish_times[i],
            "messages_sent": r.messages[i],
            "bytes_sent": r.bytes[i],
        })).collect::<Vec<_>>(),
    });
    std::fs::write(path, serde_json::to_string_pretty(&v)? + "\n")
}
