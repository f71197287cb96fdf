//! One run: platform, configuration and models, the program's copies, the
//! simulation loop, and how it ends.

use std::io::IsTerminal;
use std::path::Path;
use std::rc::Rc;
use std::time::Instant;

use simcore::platform::{HostId, PlatformFile};
use simcore::{KernelConfig, NetworkConfig, NetworkFactors, SimError, Simulation};

use crate::config;
use crate::host::interpose;
use crate::host::kernels::Kernels;
use crate::host::loader::{c_argv, Program};
use crate::mpi::{self as rt, with_world, World};

use super::*;

/// Links listed by `--link-stats` (and in the JSON).
const LINKS_SHOWN: usize = 10;

pub(super) struct SmpiFactors {
    lat: models::network::PiecewiseFactor,
    bw: models::network::PiecewiseFactor,
    /// The last size asked and its `(latency, bandwidth)` factors: a program's messages
    /// mostly repeat a few sizes, and each asks both factors in turn. (A NaN size never
    /// matches: it is looked up each time.)
    last: std::cell::Cell<(f64, f64, f64)>,
}

impl SmpiFactors {
    fn new(lat: models::network::PiecewiseFactor, bw: models::network::PiecewiseFactor) -> Self {
        SmpiFactors {
            lat,
            bw,
            last: std::cell::Cell::new((f64::NAN, 0.0, 0.0)),
        }
    }

    /// Both factors of `size`, from the last lookup when it was the same size.
    #[inline]
    fn of(&self, size: f64) -> (f64, f64) {
        let (s, lat, bw) = self.last.get();
        if s == size {
            return (lat, bw);
        }
        let (lat, bw) = (self.lat.value(size), self.bw.value(size));
        self.last.set((size, lat, bw));
        (lat, bw)
    }
}

impl NetworkFactors for SmpiFactors {
    fn latency_factor(&self, size: f64) -> f64 {
        self.of(size).0
    }
    fn bandwidth_factor(&self, size: f64) -> f64 {
        self.of(size).1
    }
}

/// The wall-clock limit: `--wall-time-limit`, else Open MPI's `MPIEXEC_TIMEOUT`.
fn wall_time_limit(args: &Args) -> Option<f64> {
    args.wall_time_limit.or_else(|| {
        std::env::var("MPIEXEC_TIMEOUT")
            .ok()
            .and_then(|v| v.trim().parse::<f64>().ok())
            .filter(|s| *s > 0.0 && s.is_finite())
    })
}

pub(super) fn run(args: &Args) -> Result<i32, String> {
    let wall_start = Instant::now();
    let wall_limit = wall_time_limit(args);
    let stop_flag = super::stop::install(wall_limit);
    let platform_path = args
        .platform
        .as_ref()
        .ok_or("no platform given (use -platform <file>)")?;
    // -replay: the built-in replayer runs the trace instead of a program (a
    // program named too, as SMPI's own replayer binary in its tests, is not run).
    let replay = match &args.replay {
        Some(trace) => {
            if let Some(p) = &args.program {
                eprintln!(
                    "smpirun: note: -replay: {} is not run; the built-in replayer replays {}",
                    p.display(),
                    trace.display()
                );
            }
            Some(Rc::new(crate::mpi::ti_actions::load(trace, args.np)?))
        }
        None => None,
    };
    let program: &Path = match (&replay, &args.program) {
        (Some(_), _) => args.replay.as_deref().unwrap_or(Path::new("replay")),
        (None, Some(p)) => p,
        (None, None) => return Err("no program given (see smpirun --help)".into()),
    };
    // The platform file is read first and built last: its `<config>` is one source of the
    // configuration, and the platform depends on the result (the network model's loopback).
    let mut platform_file = PlatformFile::read(platform_path).map_err(|e| e.to_string())?;
    platform_file
        .set_cluster_attributes(&args.platform_set)
        .map_err(|e| format!("-platform-set {e}"))?;
    let model_set = match &args.model {
        Some(model) => models::ModelSet::load(model).map_err(|e| e.to_string())?,
        None => models::ModelSet::default(),
    };
    let model = args.model.as_deref().map(|path| (path, &model_set));
    let cfg = config::resolve(&platform_file.config(), model, &args.cfg).map_err(|e| e.to_string())?;
    platform_file.set_search_path(cfg.path.clone());
    let platform = Rc::new(
        platform_file
            .build(cfg.model_loopback())
            .map_err(|e| e.to_string())?,
    );
    if cfg.simulate_computation && !cfg.host_speed_given && replay.is_none() {
        // As SMPI: the program's own computation is timed and scaled by this speed.
        eprintln!(
            "smpirun: warning: smpi/host-speed is left at its default (20000 flop/s, as in SimGrid): the \
             program's computation between MPI calls is timed on this machine and converted with it, which \
             makes it almost free on the simulated hosts; give this machine's speed \
             (--cfg=smpi/host-speed:<flop/s>, e.g. 1Gf) or leave computation out \
             (--cfg=smpi/simulate-computation:no)"
        );
    }
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
        (None, _) if replay.is_some() => replay.as_ref().map_or(0, |t| t.ranks.len()),
        (None, Some(_)) => slots.len(),
        (None, None) => return Err("give the number of ranks with -np <n>".into()),
    };
    let rank_hosts: Vec<HostId> = (0..np).map(|i| slots[i % slots.len()]).collect();
    if args.map {
        for (i, h) in rank_hosts.iter().enumerate() {
            println!("[rank {i}] -> {}", platform.host(*h).name);
        }
    }

    // Before loading: the program's constructors may already log.
    // The replayer does produce SMPI's smpi_replay messages.
    for note in args
        .log
        .notes()
        .into_iter()
        .filter(|n| replay.is_none() || !n.contains("'smpi_replay'"))
    {
        eprintln!("smpirun: note: {note}");
    }
    crate::host::xbt_log::install(args.log.clone());
    let prog = match replay {
        Some(_) => None,
        None => Some(
            Program::load(program, np, cfg.privatize, Path::new(&cfg.tmpdir), cfg.keep_temps)
                .map_err(|e| e.to_string())?,
        ),
    };
    let handles: &[*mut std::ffi::c_void] = prog.as_ref().map_or(&[], |p| &p.handles);
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
    let missing = match handles.first() {
        // Safety: the handle of the first copy, loaded just above.
        Some(h) => unsafe { interpose::unresolved_functions(*h) }?,
        None => Vec::new(),
    };
    if !missing.is_empty() {
        let (mpi, other): (Vec<&String>, Vec<&String>) = missing.iter().partition(|m| {
            ["MPI_", "PMPI_", "MPIX_", "smpi_", "SMPI_"]
                .iter()
                .any(|p| m.starts_with(p))
        });
        let mut msg = format!(
            "{} calls functions nothing defines; it would stop at the first call:",
            program.display()
        );
        if !mpi.is_empty() {
            let names: Vec<&str> = mpi.iter().map(|s| s.as_str()).collect();
            msg.push_str(&format!("\n  not implemented by smpirun: {}", names.join(", ")));
        }
        if !other.is_empty() {
            let names: Vec<&str> = other.iter().map(|s| s.as_str()).collect();
            msg.push_str(&format!(
                "\n  in no library the program was linked with: {} (link the library that defines them)",
                names.join(", ")
            ));
        }
        return Err(msg);
    }
    let mut libc_state =
        crate::host::libc_state::LibcState::new(if prog.is_some() { handles.len() } else { np });
    let mut hot_lines = Vec::with_capacity(handles.len());
    for (copy, h) in handles.iter().enumerate() {
        // Safety: handles of the copies loaded just above; the cells live in
        // the world until the run ends.
        unsafe { interpose::bind_own_symbols(*h, &mut keep_ours) }?;
        unsafe { interpose::bind_data(*h, &libc_state.getopt_cells(copy)) }?;
        let counts = unsafe { interpose::patch(*h, &targets) }?;
        hot_lines.push(unsafe { interpose::api_slot_lines(*h, simcore::HOT_LINES - 2) }?);
        if copy == 0 {
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
        factors: Box::new(SmpiFactors::new(cfg.lat_factor.clone(), cfg.bw_factor.clone())),
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
    crate::host::folding::init(
        &cfg.shared_malloc,
        cfg.shared_malloc_blocksize,
        &cfg.shared_malloc_hugepage,
        cfg.auto_shared_malloc_thresh,
        cfg.auto_shared_malloc_cow_thresh,
    )
    .map_err(|e| e.0)?;
    // Each coroutine stack is a mapping and its guard page another.
    crate::host::folding::reserve_mappings(2 * np + 64);
    for caveat in platform.router.caveats() {
        eprintln!("smpirun: warning: {caveat}");
    }
    let mut sim = Simulation::new(platform.clone(), kcfg);
    let display_timing = cfg.display_timing;
    let cfg_host_energy = cfg.host_energy;
    let request_log = match &args.request_log {
        Some(path) => Some(std::io::BufWriter::new(std::fs::File::create(path).map_err(
            |e| format!("-request-log {}: cannot create it: {e}", path.display()),
        )?)),
        None => None,
    };
    let mut world = World::new(cfg, sim.handle(), kernels, platform.clone(), &rank_hosts);
    world.request_log = request_log;
    if world.cfg.tracing && world.cfg.tracing_ti {
        let path = std::path::PathBuf::from(&world.cfg.tracing_filename);
        world.ti = Some(crate::mpi::ti_trace::TiRecorder::create(
            &path,
            np,
            world.cfg.tracing_ti_one_file,
        )?);
        if !world.cfg.tracing_computing && world.cfg.simulate_computation {
            eprintln!(
                "smpirun: warning: TI trace without tracing/smpi/computing: the ranks' computation is not \
                 recorded, so a replay leaves it out (-trace-ti records it)"
            );
        }
    } else if world.cfg.tracing {
        let path = std::path::PathBuf::from(&world.cfg.tracing_filename);
        let format = crate::mpi::trace::TraceFormat::choose(&world.cfg.tracing_format, &path)?;
        let hosts = rank_hosts
            .iter()
            .map(|h| platform.host(*h).name.clone())
            .collect();
        let cfg = &world.cfg;
        let mut comments: Vec<String> = Vec::new();
        if !cfg.tracing_comment.is_empty() {
            comments.push(cfg.tracing_comment.clone());
        }
        if !cfg.tracing_comment_file.is_empty() {
            let text = std::fs::read_to_string(&cfg.tracing_comment_file).map_err(|e| {
                format!(
                    "tracing/comment-file: cannot read {}: {e}",
                    cfg.tracing_comment_file
                )
            })?;
            comments.extend(text.lines().map(String::from));
        }
        let options = crate::mpi::trace::TraceOptions {
            computing: cfg.tracing_computing,
            internals: cfg.tracing_internals,
            display_sizes: cfg.tracing_display_sizes,
            grouped: cfg.tracing_grouped,
            precision: cfg.tracing_precision,
            comments,
        };
        world.trace = Some(crate::mpi::trace::Timeline::create(
            &path, format, options, hosts,
        )?);
    }
    world.libc = libc_state;
    // A replay sends from scratch buffers: copying them would cost wall time for nothing.
    world.payloads_meaningless = replay.is_some();
    if let Some(net) = model_set.network.as_ref().filter(|n| !n.noise.is_none()) {
        world.net_noise = Some(crate::mpi::NetNoise::new(net.noise.clone(), seed, np));
    }
    rt::install_world(world);
    if cfg_host_energy {
        crate::abi::energy::start_plugin(&sim.handle())
            .map_err(|e| format!("{}: {e}", platform_path.display()))?;
    }
    let buffers = replay
        .as_ref()
        .map(|t| Rc::new(crate::abi::replay::Buffers::for_trace(t)));
    let mut prog_args = vec![program.display().to_string()];
    prog_args.extend(args.program_args.iter().cloned());
    crate::mpi::info::set_env(vec![
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
        if let (Some(trace), Some(bufs)) = (&replay, &buffers) {
            let (trace, bufs) = (trace.clone(), bufs.clone());
            let name = format!("rank {rank} (on {})", platform.host(*host).name);
            sim.spawn(name, *host, move |ctx| {
                with_world(|w| w.ranks[rank].ctx = ctx as *const _);
                let code = crate::abi::replay::run_rank(rank as u32, &trace, &bufs);
                for problem in rt::rank_ended(rank as u32, code, "ended its replay with code") {
                    eprintln!("smpirun: warning: rank {rank} {problem}");
                }
                Ok(())
            });
            continue;
        }
        let Some(prog) = &prog else {
            unreachable!("a program or a trace")
        };
        let main = prog.mains[rank];
        let argv = prog_args.clone();
        let name = format!("rank {rank} (on {})", platform.host(*host).name);
        let id = sim.spawn(name, *host, move |ctx| {
            let (_owned, mut ptrs) = c_argv(&argv);
            with_world(|w| {
                let r = &mut w.ranks[rank];
                r.ctx = ctx as *const _;
                r.bench_start = crate::mpi::entry::thread_cpu_time();
            });
            // Safety: calling the program's C main with a valid argv.
            let code = unsafe { main((ptrs.len() - 1) as i32, ptrs.as_mut_ptr()) };
            // Safety: flushing C stdio, so the rank's output precedes our lines.
            unsafe { libc::fflush(std::ptr::null_mut()) };
            for problem in rt::rank_ended(rank as u32, code, "returned from main with code") {
                eprintln!("smpirun: warning: rank {rank} {problem}");
            }
            Ok(())
        });
        // Prefetched before each resume: its copy's slots of the MPI functions (without
        // privatization the ranks share the one copy), then its world entry and its
        // MPI_COMM_WORLD, the first things its MPI calls read (the communicator table may
        // move later: then that line is only wasted).
        let world_lines = with_world(|w| {
            let r = &w.ranks[rank];
            let comm = r.comms.get(crate::mpi::world::MPI_COMM_WORLD as usize);
            [r as *const _ as usize, comm.map_or(0, |c| c as *const _ as usize)]
        });
        let got_lines = hot_lines
            .get(rank)
            .or(hot_lines.first())
            .map_or(&[][..], |l| &l[..]);
        let lines: Vec<usize> = got_lines.iter().copied().chain(world_lines).collect();
        sim.set_hot_lines(id, &lines);
    }
    sim.on_comm_done(|_a, user| with_world(|w| rt::on_comm_done(w, user)));
    sim.stop_when(stop_flag);
    let sim_limit = args.sim_time_limit;
    // On a terminal, one line rewritten in place; otherwise (-progress) plain lines.
    let terminal = std::io::stderr().is_terminal();
    let progress = (terminal && !args.quiet) || args.progress_every.is_some();
    let every = args.progress_every.unwrap_or(3.0);
    let mut last_report = Instant::now();
    let start = Instant::now();
    let pss_sampler = PssSampler::start();
    let mut advances = 0u32;
    sim.on_progress(move |t| {
        if sim_limit.is_some_and(|l| t > l) {
            super::stop::sim_time_reached();
        }
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
    if args.link_stats {
        sim.collect_link_stats();
    }
    let outcome = sim.run();
    super::stop::acknowledge();
    // Safety: flushing C stdio so the program's output precedes our summary.
    unsafe { libc::fflush(std::ptr::null_mut()) };
    for warning in crate::host::xbt_log::finish() {
        eprintln!("smpirun: warning: {warning}");
    }
    // The request log is complete on every ending (a deadlock's log is the useful one).
    let log_flushed = with_world(|w| w.request_log.as_mut().map(std::io::Write::flush));
    if let (Some(Err(e)), Some(path)) = (log_flushed, &args.request_log) {
        eprintln!("smpirun: warning: request log {}: {e}", path.display());
    }
    if progress && terminal {
        eprint!("\r{:70}\r", "");
    }
    let wall = wall_start.elapsed().as_secs_f64();
    // Every ending gets its report (and --json): what the run reached.
    let summary = sim.summary_so_far();
    let ending = match outcome {
        Ok(_) => {
            let code = rt::ranks_exit_code().map_or(0, |c| c & 0xff);
            Ending {
                status: if code == 0 { "ok" } else { "rank-failed" },
                code,
                error: None,
            }
        }
        Err(SimError::Deadlock { time, blocked }) => {
            let error = format!("deadlock detected at t={time:.9} s: every remaining rank is blocked");
            eprintln!("smpirun: error: {error}");
            print_unfinished(&blocked);
            let code = match rt::ranks_exit_code() {
                Some(c) => {
                    eprintln!("smpirun: (a rank ended first with code {c}: that is the run's exit status)");
                    c & 0xff
                }
                None => 3,
            };
            Ending {
                status: "deadlock",
                code,
                error: Some(error),
            }
        }
        Err(SimError::Stopped { time, unfinished }) => {
            let reason = super::stop::requested().unwrap_or(super::stop::StopReason::WallTime);
            let error = format!(
                "{} at t={time:.9} s (simulated)",
                reason.describe(wall_limit, sim_limit)
            );
            eprintln!("smpirun: error: {error}; where each unfinished rank is:");
            print_unfinished(&unfinished);
            Ending {
                status: "stopped",
                code: reason.exit_code(),
                error: Some(error),
            }
        }
        Err(SimError::ActorFailed {
            name, time, message, ..
        }) => {
            let error = format!("{name} failed at t={time:.9} s: {message}");
            eprintln!("smpirun: error: {error}");
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
                // xbt_assert, xbt_die, xbt_abort: SimGrid ends with abort(), 128 + SIGABRT.
                .or_else(|| {
                    message
                        .starts_with("aborted by xbt_")
                        .then_some(128 + libc::SIGABRT)
                })
                .unwrap_or(if message.starts_with("deadlock:") { 3 } else { 1 });
            Ending {
                status: if message.starts_with("deadlock:") {
                    "deadlock"
                } else {
                    "failed"
                },
                code: code & 0xff,
                error: Some(error),
            }
        }
        Err(e @ SimError::ResourceFailed { .. }) => {
            // A state profile turned a host or link off under the program (see simcore).
            let error = e.to_string();
            eprintln!("smpirun: error: {error}");
            Ending {
                status: "failed",
                code: 1,
                error: Some(error),
            }
        }
        Err(e) => return Err(e.to_string()),
    };
    // The timeline is complete on every ending (a failure's is the useful one).
    if let Some(ti) = with_world(|w| w.ti.take()) {
        let path = ti.path().display().to_string();
        match ti.finish() {
            Ok(warnings) => {
                eprintln!("[smpirun] time-independent trace written to {path}");
                for w in warnings {
                    eprintln!("smpirun: warning: {w}");
                }
            }
            Err(e) => eprintln!("smpirun: warning: {e}"),
        }
    }
    if let Some(timeline) = with_world(|w| w.trace.take()) {
        let path = timeline.path().display().to_string();
        match timeline.finish(summary.time) {
            Ok(()) => eprintln!("[smpirun] timeline written to {path}"),
            Err(e) => eprintln!("smpirun: warning: {e}"),
        }
    }
    if let Some(warning) = with_world(|w| rt::chaos_warning(w)) {
        eprintln!("smpirun: warning: {warning}");
    }
    if let Some(warning) = with_world(|w| crate::mpi::leaks::unreceived_messages(w)) {
        eprintln!("smpirun: warning: {warning}");
    }
    // SimGrid's plugin updates every host at the end of the simulation.
    let energy = sim.handle().energy(|e| e.report());
    if let Some(e) = energy
        .as_ref()
        .filter(|_| matches!(ending.status, "ok" | "rank-failed" | "deadlock"))
    {
        super::report::print_energy(e);
    }
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
        extrapolated: w.kernels.extrapolated(),
        compute_times: sim.compute_times(),
        links: sim
            .link_stats()
            .map(|stats| super::report::busiest_links(&stats, &w.platform, LINKS_SHOWN)),
        energy,
    });
    super::report::print_extrapolation(&report);
    if ending.status == "ok" || ending.status == "rank-failed" {
        super::report::print_link_stats(&report);
    }
    if (ending.status == "ok" || ending.status == "rank-failed") && (!args.quiet || display_timing) {
        let total: u64 = report.messages.iter().sum();
        let energy = report
            .energy
            .as_ref()
            .map(|e| format!(" | energy {:.6} J", e.totals().0))
            .unwrap_or_default();
        eprintln!(
            "[smpirun] simulated time: {:.9} s | {} ranks | {} messages | {} events{energy} | wall {:.3} s | peak PSS {:.1} MiB",
            report.simulated_time,
            np,
            total,
            report.events,
            report.wall_time,
            report.peak_pss_kb as f64 / 1024.0
        );
    }
    if let Some(path) = &args.json {
        write_json(path, &report, &ending, np, platform_path, program)
            .map_err(|e| format!("{}: {e}", path.display()))?;
    }
    if ending.status == "ok" || ending.status == "rank-failed" {
        drop(sim);
    } else {
        // Suspended ranks hold foreign (C) frames: leave their stacks alone.
        std::mem::forget(sim);
    }
    std::mem::forget(prog);
    Ok(ending.code)
}

/// One line per unfinished rank: the MPI call it is blocked in, or the
/// activities it waits on.
fn print_unfinished(unfinished: &[simcore::BlockedActor]) {
    with_world(|w| {
        for b in unfinished {
            let rank = b.actor.0 as usize;
            let r = &w.ranks[rank];
            let what = match r.blocked {
                // The program's call first (a collective), then what it waits for inside.
                Some(bi) if r.user_call.is_some_and(|c| c != bi.call) => format!(
                    "in {} (inside: {} peer {}, tag {}, communicator {})",
                    r.user_call.unwrap_or("?"),
                    bi.call,
                    fmt_peer(bi.peer),
                    fmt_tag(bi.tag),
                    fmt_comm(bi.comm)
                ),
                Some(bi) => format!(
                    "in {} (peer {}, tag {}, communicator {})",
                    bi.call,
                    fmt_peer(bi.peer),
                    fmt_tag(bi.tag),
                    fmt_comm(bi.comm)
                ),
                None if b.waiting_on.is_empty() => "running".to_string(),
                None => format!("waiting on {}", b.waiting_on.join(", ")),
            };
            eprintln!("  {}: {what}", b.name);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use models::network::PiecewiseFactor;

    #[test]
    fn cached_factors_are_the_tables_values() {
        let lat = PiecewiseFactor::parse_smpi("0:1.5;1024:2.25;65536:3.5").expect("valid");
        let bw = PiecewiseFactor::parse_smpi("0:0.5;2048:0.75;1000000:0.9").expect("valid");
        let f = SmpiFactors::new(lat.clone(), bw.clone());
        // Repeated, alternating and boundary sizes, asked in both orders.
        for size in [
            24.0,
            24.0,
            1024.0,
            1025.0,
            24.0,
            0.0,
            -0.0,
            2048.0,
            2049.0,
            f64::NAN,
            1e7,
            1e7,
        ] {
            let (l, b) = (f.latency_factor(size), f.bandwidth_factor(size));
            assert_eq!(l.to_bits(), lat.value(size).to_bits(), "latency factor of {size}");
            assert_eq!(
                b.to_bits(),
                bw.value(size).to_bits(),
                "bandwidth factor of {size}"
            );
            assert_eq!(f.bandwidth_factor(size).to_bits(), b.to_bits());
            assert_eq!(f.latency_factor(size).to_bits(), l.to_bits());
        }
    }
}
