//! The key table: every `--cfg` key, declared once with its default, its help line and how its
//! value lands in [`SmpiConfig`] (SimGrid's `config::Flag{name, description, default,
//! validator}`).
//!
//! A key's setter parses a value (the given one or the default) and stores the typed result in
//! its field, or says in a sentence what is wrong with the value (the caller adds the key, the
//! value and where it was given). Keys are applied in table order, so a setter may read a field
//! set by a key above it: the network factors' and `network/weight-S`'s defaults depend on
//! `network/model`, which comes first.

use models::network::{Overhead, PiecewiseFactor};
use simcore::platform::units;

use super::{NetModel, SmpiConfig};

/// Parses a value into its place in the configuration, or says what is wrong with it.
type Setter = fn(&mut SmpiConfig, &str) -> Result<(), String>;

/// One `--cfg` key.
#[derive(Debug)]
pub(crate) struct Key {
    /// The name (SimGrid's).
    pub name: &'static str,
    /// Older SimGrid names accepted for it.
    pub aliases: &'static [&'static str],
    /// The value when nothing sets it, written as on the command line.
    pub default: &'static str,
    /// One line for `smpirun --help-cfg`.
    pub help: &'static str,
    set: Setter,
}

impl Key {
    /// Parses `value` into `cfg`.
    pub(super) fn apply(&self, cfg: &mut SmpiConfig, value: &str) -> Result<(), String> {
        (self.set)(cfg, value)
    }

    /// The same key, also accepted under `aliases`.
    const fn alias(self, aliases: &'static [&'static str]) -> Key {
        Key { aliases, ..self }
    }
}

const fn key(name: &'static str, default: &'static str, help: &'static str, set: Setter) -> Key {
    Key {
        name,
        aliases: &[],
        default,
        help,
        set,
    }
}

/// A setter that stores `parse(value)` in `field`.
macro_rules! field {
    ($field:ident, $parse:expr) => {
        |cfg: &mut SmpiConfig, value: &str| {
            cfg.$field = $parse(value)?;
            Ok(())
        }
    };
}

/// Every key smpirun understands.
pub(crate) static KEYS: &[Key] = &[
    key(
        "network/model",
        "SMPI",
        "SMPI (size-dependent factors), CM02 (plain fluid), LV08, raw",
        field!(net_model, net_model),
    ),
    key(
        "network/latency-factor",
        "",
        "piecewise latency factor \"B:v;...\" (empty: the network model's)",
        |cfg, value| {
            cfg.lat_factor = factor(value, cfg.net_model.latency_factor(), false)?;
            Ok(())
        },
    )
    .alias(&["smpi/lat-factor"]),
    key(
        "network/bandwidth-factor",
        "",
        "piecewise bandwidth factor \"B:v;...\" (empty: the network model's)",
        |cfg, value| {
            cfg.bw_factor = factor(value, cfg.net_model.bandwidth_factor(), true)?;
            Ok(())
        },
    )
    .alias(&["smpi/bw-factor"]),
    key(
        "network/weight-S",
        "",
        "RTT-unfairness weight (empty: the network model's: SMPI 8775, CM02 0)",
        |cfg, value| {
            cfg.weight_s = match value {
                "" => cfg.net_model.weight_s(),
                _ => non_negative(number(value)?)?,
            };
            Ok(())
        },
    ),
    key(
        "network/TCP-gamma",
        "4194304",
        "TCP window bound, bytes (0 disables)",
        field!(tcp_gamma, |v| non_negative(number(v)?)),
    ),
    key(
        "network/crosstraffic",
        "yes",
        "ACK flows load reverse links at 5% (never with network/model:raw)",
        |cfg, value| {
            cfg.crosstraffic = yes_no(value)? && cfg.net_model != NetModel::Raw;
            Ok(())
        },
    ),
    key(
        "network/loopback-bw",
        "10GBps",
        "bandwidth of the network model's loopback link (a host to itself in a zone of declared routes)",
        field!(loopback_bw, positive_bandwidth),
    ),
    key(
        "network/loopback-lat",
        "0",
        "latency of the network model's loopback link, seconds",
        field!(loopback_lat, latency),
    ),
    key(
        "precision/timing",
        "1e-9",
        "timing precision, seconds",
        field!(timing_precision, |v| positive(number(v)?)),
    )
    .alias(&["surf/precision"]),
    key(
        "precision/work-amount",
        "1e-5",
        "max-min solver precision",
        field!(precision_work, |v| positive(number(v)?)),
    )
    .alias(&["maxmin/precision"]),
    key(
        "contexts/stack-size",
        "8192",
        "coroutine stack size per rank, KiB",
        |cfg, value| {
            let kib = size(value)?;
            if kib < 64 {
                return Err("at least 64 KiB".to_string());
            }
            cfg.stack_size = kib.checked_mul(1024).ok_or("too large")?;
            Ok(())
        },
    ),
    key(
        "contexts/guard-size",
        "1",
        "guard pages below each stack (only 1 is supported)",
        |_, value| match size(value)? {
            1 => Ok(()),
            _ => Err("not supported: each stack has exactly one guard page".to_string()),
        },
    ),
    key(
        "smpi/host-speed",
        "20000f",
        "flop/s of the machine running the simulation (scales measured time)",
        field!(host_speed, positive_speed),
    )
    .alias(&["smpi/running-power"]),
    key(
        "smpi/simulate-computation",
        "yes",
        "inject the measured time of the code between MPI calls",
        field!(simulate_computation, yes_no),
    ),
    key(
        "smpi/cpu-threshold",
        "1e-6",
        "computation bursts shorter than this (s) are not injected",
        field!(cpu_threshold, seconds),
    ),
    key(
        "smpi/async-small-thresh",
        "0",
        "messages below this size (B) are sent eagerly",
        field!(async_small_thresh, size),
    ),
    key(
        "smpi/send-is-detached-thresh",
        "65536",
        "sends below this size (B) return at once",
        field!(detached_thresh, size),
    ),
    key(
        "smpi/os",
        "0:0:0:0:0",
        "send overhead \"B:offset:per_byte;...\"",
        field!(os, overhead),
    ),
    key(
        "smpi/or",
        "0:0:0:0:0",
        "receive overhead \"B:offset:per_byte;...\"",
        field!(or, overhead),
    ),
    key(
        "smpi/ois",
        "0:0:0:0:0",
        "isend overhead \"B:offset:per_byte;...\"",
        field!(ois, overhead),
    ),
    key(
        "smpi/wtime",
        "1e-8",
        "simulated cost of MPI_Wtime, seconds",
        field!(wtime, non_negative_seconds),
    ),
    key(
        "smpi/test",
        "1e-4",
        "simulated cost of MPI_Test, seconds",
        field!(test, non_negative_seconds),
    ),
    key(
        "smpi/iprobe",
        "1e-4",
        "simulated cost of MPI_Iprobe, seconds",
        field!(iprobe, non_negative_seconds),
    ),
    key(
        "smpi/iprobe-cpu-usage",
        "1",
        "CPU share used by MPI_Iprobe's polling",
        field!(iprobe_cpu_usage, |v| positive(number(v)?)),
    ),
    key(
        "smpi/grow-injected-times",
        "yes",
        "Test/Iprobe costs grow with consecutive failures",
        field!(grow_injected, yes_no),
    ),
    key(
        "smpi/grow-injected-times-scope",
        "global",
        "global (one counter, as SMPI 3.32) or rank",
        field!(grow_per_rank, |v| one_of(v, &[("global", false), ("rank", true)])),
    ),
    key(
        "smpi/probe-sees",
        "sent",
        "sent (a probe sees every message sent so far, as SimGrid) or progressed (only those that \
         arrived before the rank's previous MPI call, as Open MPI's ob1, which matches before it progresses)",
        field!(probe_sees_progressed, |v| one_of(v, &[("sent", false), ("progressed", true)])),
    ),
    key(
        "smpi/init",
        "0",
        "simulated cost of MPI_Init, seconds",
        field!(init, non_negative_seconds),
    ),
    key(
        "smpi/simcall-yield",
        "yes",
        "ranks yield after posting a request or completing a wait, like SimGrid's simcalls (same-date ordering)",
        field!(simcall_yield, yes_no),
    ),
    key(
        "smpi/event-order",
        "simgrid",
        "order of events due at one date: simgrid (SimGrid 3.32's heap, modified-set order, re-dating and \
         selective solve: the same numbers as SMPI) or fifo (plain order, about 25 % faster on HPL, not SMPI's \
         numbers where costs depend on the order)",
        field!(simgrid_order, |v| one_of(v, &[("simgrid", true), ("fifo", false)])),
    ),
    key(
        "smpi/finalization-barrier",
        "no",
        "MPI_Finalize acts as a barrier",
        field!(barrier_finalization, yes_no),
    )
    .alias(&["smpi/barrier-finalization"]),
    key(
        "smpi/coll-selector",
        "default",
        "collective algorithm selector: default, ompi, mpich, mvapich2, impi or automatic (SMPI 3.32's; checked at the first collective)",
        field!(coll_selector, text),
    ),
    key(
        "smpi/shared-malloc",
        "global",
        "global, local or no",
        field!(shared_malloc, shared_malloc_mode),
    ),
    key(
        "smpi/shared-malloc-blocksize",
        "1048576",
        "bytes folded onto one block",
        field!(shared_malloc_blocksize, size),
    ),
    key(
        "smpi/shared-malloc-hugepage",
        "",
        "hugetlbfs mount for folded blocks",
        field!(shared_malloc_hugepage, text),
    ),
    key(
        "smpi/auto-shared-malloc-thresh",
        "0",
        "fold malloc/calloc/realloc above this size (0: off)",
        field!(auto_shared_malloc_thresh, size),
    ),
    key(
        "smpi/auto-shared-malloc-cow-thresh",
        "0",
        "fold copy-on-write the allocations between this size and the auto threshold (0: off)",
        field!(auto_shared_malloc_cow_thresh, size),
    ),
    key(
        "smpi/privatization",
        "dlopen",
        "per-rank copies of the program's globals (dlopen or no)",
        field!(privatize, privatization),
    ),
    key(
        "smpi/keep-temps",
        "no",
        "keep the per-rank copies of the program",
        field!(keep_temps, yes_no),
    ),
    key(
        "smpi/tmpdir",
        "/tmp",
        "where per-rank copies go",
        field!(tmpdir, text),
    ),
    key(
        "smpi/display-timing",
        "no",
        "print simulated and real time at the end",
        field!(display_timing, yes_no),
    ),
    key(
        "tracing",
        "no",
        "record a timeline of the run (smpirun -trace): every MPI call of each rank",
        field!(tracing, yes_no),
    ),
    key(
        "tracing/filename",
        "smpi_simgrid.trace",
        "where the timeline goes (smpirun -trace-file)",
        field!(tracing_filename, text),
    ),
    key(
        "tracing/format",
        "auto",
        "json (Chrome trace events: Perfetto, chrome://tracing), paje (SimGrid's tools) or auto \
         (json when the file name ends in .json, else paje)",
        field!(tracing_format, text),
    ),
    key(
        "tracing/smpi/computing",
        "no",
        "also record each rank's computation (its own code, modelled kernels by name, smpi_execute)",
        field!(tracing_computing, yes_no),
    ),
    key(
        "tracing/smpi/internals",
        "no",
        "timeline: also record the messages collectives exchange (links, and the messages of the call)",
        field!(tracing_internals, yes_no),
    ),
    key(
        "tracing/smpi/display-sizes",
        "no",
        "Paje timeline: each MPI call's state and each message's link carry its size in bytes",
        field!(tracing_display_sizes, yes_no),
    ),
    key(
        "tracing/smpi/group",
        "no",
        "timeline: ranks grouped by host (Paje: rank containers inside host containers; JSON: one \
         process per host; smpirun -trace-grouped)",
        field!(tracing_grouped, yes_no),
    ),
    key(
        "tracing/precision",
        "6",
        "Paje timeline: decimal digits of the dates (seconds)",
        |cfg: &mut SmpiConfig, value: &str| {
            cfg.tracing_precision = count(value)?;
            if cfg.tracing_precision > 15 {
                return Err("expected at most 15 digits (a double holds no more)".into());
            }
            Ok(())
        },
    ),
    key(
        "tracing/comment",
        "",
        "timeline: a comment written at the top of the file (smpirun -trace-comment)",
        field!(tracing_comment, text),
    ),
    key(
        "tracing/comment-file",
        "",
        "timeline: a file whose lines are written as comments at the top (smpirun -trace-comment-file)",
        field!(tracing_comment_file, text),
    ),
    key(
        "tracing/smpi/format",
        "Paje",
        "Paje: a timeline (see tracing/format); TI: a time-independent trace for smpirun -replay, \
         in SMPI's format (smpirun -trace-ti)",
        |cfg: &mut SmpiConfig, value: &str| {
            cfg.tracing_ti = match value.to_ascii_lowercase().as_str() {
                "paje" => false,
                "ti" => true,
                _ => return Err("expected Paje or TI".into()),
            };
            Ok(())
        },
    ),
    key(
        "tracing/smpi/format/ti-one-file",
        "no",
        "TI trace: every rank's actions in one file instead of one file per rank",
        field!(tracing_ti_one_file, yes_no),
    ),
    key(
        "tracing/smpi/sleeping",
        "no",
        "TI trace: record the program's sleeps (sleep, usleep, nanosleep, smpi_sleep) as sleep actions",
        field!(tracing_sleeping, yes_no),
    ),
    key(
        "smpi/list-leaks",
        "0",
        "MPI handles a rank never freed are reported when it ends after MPI_Finalize (for the \
         first ranks); N > 0 lists up to N of them, for every rank",
        field!(list_leaks, count),
    ),
    key(
        "smpi/pedantic",
        "no",
        "accepted for SimGrid's command lines (-analyze): SimGrid's costly checks, which are \
         always on here (collective matching, type signatures, truncation, leaks)",
        field!(pedantic, yes_no),
    ),
    // SimGrid's implementation choices, set by its example platforms and by
    // users' files: each value gives SimGrid the same results, and the same
    // as here, so they are checked and accepted.
    key(
        "cpu/optim",
        "Lazy",
        "SimGrid's CPU-model update strategy (Lazy, TI or Full): the same results with each; accepted",
        |_, v| one_of(v, &[("Lazy", ()), ("TI", ()), ("Full", ())]),
    ),
    key(
        "network/optim",
        "Lazy",
        "SimGrid's network-model update strategy (Lazy or Full): the same results with each; accepted",
        |_, v| one_of(v, &[("Lazy", ()), ("Full", ())]),
    ),
    key(
        "cpu/maxmin-selective-update",
        "no",
        "SimGrid's selective update of the CPU sharing system: the same results either way; accepted",
        |_, v| yes_no(v).map(|_| ()),
    ),
    key(
        "network/maxmin-selective-update",
        "yes",
        "SimGrid's selective update of the network sharing system: the same results either way \
         (smpi/event-order:simgrid reproduces its order of events); accepted",
        |_, v| yes_no(v).map(|_| ()),
    ),
    key(
        "cpu/model",
        "Cas01",
        "SimGrid's CPU model: Cas01 (each host's speed shared among its running computations), the only one",
        |_, v| one_of(v, &[("Cas01", ())]),
    ),
    key(
        "host/model",
        "default",
        "SimGrid's host model: default or compound (the CPU and network models named by cpu/model and \
         network/model, as here); ptask_L07 (parallel tasks) is not simulated",
        |_, v| one_of(v, &[("default", ()), ("compound", ())]),
    ),
    key(
        "contexts/factory",
        "raw",
        "SimGrid's implementation of its actors (thread, ucontext, raw, boost): ranks are coroutines here \
         whichever is named; accepted",
        |_, v| one_of(v, &[("thread", ()), ("ucontext", ()), ("raw", ()), ("boost", ())]),
    ),
    key(
        "contexts/nthreads",
        "1",
        "SimGrid's threads running actors in parallel (the same results with any number); one here; accepted",
        |_, v| match count(v)? {
            0 => Err("expected at least 1".into()),
            _ => Ok(()),
        },
    ),
    key(
        "contexts/synchro",
        "futex",
        "how SimGrid's parallel threads synchronize (futex, posix, busy_wait): there are none here; accepted",
        |_, v| one_of(v, &[("futex", ()), ("posix", ()), ("busy_wait", ())]),
    ),
    key(
        "disk/model",
        "S19",
        "SimGrid's disk model: S19 (the only one SimGrid 3.32 has) is the one simulated",
        |_, v| one_of(v, &[("S19", ())]),
    ),
    key(
        "disk/solver",
        "maxmin",
        "SimGrid's solver of the disk model: maxmin (bmf and fairbottleneck are not implemented)",
        |_, v| one_of(v, &[("maxmin", ())]),
    ),
    key(
        "tracing/smpi",
        "yes",
        "SimGrid's switch for MPI calls in the trace: the timeline here is the MPI calls (no is refused)",
        |_, v| match yes_no(v)? {
            true => Ok(()),
            false => Err("not supported: the trace (-trace) is the MPI timeline; leave tracing off instead".into()),
        },
    ),
    key(
        "smpi/errors-are-fatal",
        "yes",
        "MPI errors abort unless an error handler says otherwise",
        field!(errors_fatal, yes_no),
    ),
    key(
        "smpi/seed",
        "",
        "seed of every random stream (models, modelled idamax); default: the model set's, else 42",
        field!(seed, optional_seed),
    ),
    key(
        "smpi/blas-mode",
        "auto",
        "auto (model the kernels the model set defines), model, or compute (real BLAS)",
        field!(blas_mode, |v| one_of(v, &[("auto", "auto"), ("model", "model"), ("compute", "compute")])
            .map(String::from)),
    ),
    key(
        "smpi/blas-compute",
        "",
        "comma-separated BLAS kernels always run for real",
        field!(blas_compute, comma_list),
    ),
    key(
        "path",
        "",
        "directories (separated by ':') where the platform's relative profile files are looked up, \
         after the working directory and before the platform file's own directory (SimGrid's path; \
         given at several levels, the highest-precedence value is used where SimGrid adds them up)",
        field!(path, |v: &str| Ok::<_, String>(v.split(':').filter(|d| !d.is_empty()).map(Into::into).collect())),
    ),
    key(
        "plugin",
        "",
        "SimGrid plugin: host_energy (energy per host from its wattage_per_state and wattage_off \
         properties, printed at the end and in --json); SimGrid's other plugins are not supported",
        field!(host_energy, plugin),
    ),
    key("smpi/bcast", "", "force the bcast algorithm", |c, v| force(c, "bcast", v)),
    key("smpi/barrier", "", "force the barrier algorithm", |c, v| force(c, "barrier", v)),
    key("smpi/reduce", "", "force the reduce algorithm", |c, v| force(c, "reduce", v)),
    key("smpi/allreduce", "", "force the allreduce algorithm", |c, v| force(c, "allreduce", v)),
    key("smpi/alltoall", "", "force the alltoall algorithm", |c, v| force(c, "alltoall", v)),
    key("smpi/alltoallv", "", "force the alltoallv algorithm", |c, v| force(c, "alltoallv", v)),
    key("smpi/gather", "", "force the gather algorithm", |c, v| force(c, "gather", v)),
    key("smpi/allgather", "", "force the allgather algorithm", |c, v| force(c, "allgather", v)),
    key("smpi/allgatherv", "", "force the allgatherv algorithm", |c, v| force(c, "allgatherv", v)),
    key("smpi/scatter", "", "force the scatter algorithm", |c, v| force(c, "scatter", v)),
    key("smpi/reduce_scatter", "", "force the reduce_scatter algorithm", |c, v| {
        force(c, "reduce_scatter", v)
    }),
];

/// The key called `name` (or whose alias it is).
pub(super) fn find(name: &str) -> Option<&'static Key> {
    KEYS.iter().find(|k| k.name == name || k.aliases.contains(&name))
}

/// `smpirun --help-cfg`: the precedence chain, then every key with its default and help line.
pub(crate) fn help() -> String {
    let mut out = String::from(
        "Configuration keys, set with --cfg=<key>:<value> (repeatable).\n\
         \n\
         Where a value comes from, lowest precedence first: the default below < the platform\n\
         file's <config> < the model file (-model: its [config], and its [network] for\n\
         network/latency-factor, network/bandwidth-factor, smpi/os, smpi/or and smpi/ois) < the\n\
         command line (--cfg). Given twice at one level, the last value wins.\n\n",
    );
    for k in KEYS {
        out += &format!("{:34} default '{}'\n{:34} {}\n", k.name, k.default, "", k.help);
        if !k.aliases.is_empty() {
            out += &format!("{:34} (also accepted as {})\n", "", k.aliases.join(", "));
        }
        let coll = k.name.strip_prefix("smpi/");
        if let Some(names) = coll.and_then(crate::coll::algorithm_names) {
            out += &format!(
                "{:34} default, ompi, mpich, mvapich2, impi (selectors) or {}\n",
                "",
                names.join(", ")
            );
        }
    }
    out
}

// Value parsers: each returns the typed value or what is wrong with the text.

/// `yes`/`no` and their usual spellings.
fn yes_no(value: &str) -> Result<bool, String> {
    match value.to_ascii_lowercase().as_str() {
        "yes" | "on" | "true" | "1" => Ok(true),
        "no" | "off" | "false" | "0" => Ok(false),
        _ => Err("expected yes/no".to_string()),
    }
}

/// A count (a non-negative integer).
fn count(value: &str) -> Result<usize, String> {
    value
        .parse::<usize>()
        .map_err(|_| "expected a non-negative integer".to_string())
}

/// One of the `choices`' words, exactly.
fn one_of<T: Copy>(value: &str, choices: &[(&str, T)]) -> Result<T, String> {
    if let Some((_, v)) = choices.iter().find(|(word, _)| *word == value) {
        return Ok(*v);
    }
    let words: Vec<&str> = choices.iter().map(|(word, _)| *word).collect();
    let (last, others) = words.split_last().expect("a key has at least one choice");
    Err(format!("expected {} or {last}", others.join(", ")))
}

fn net_model(value: &str) -> Result<NetModel, String> {
    one_of(
        value,
        &[
            ("SMPI", NetModel::Smpi),
            ("CM02", NetModel::Cm02),
            ("LV08", NetModel::Lv08),
            ("raw", NetModel::Raw),
        ],
    )
}

/// A plain, finite number (`nan`, `inf` and numbers beyond `f64` are not).
fn number(value: &str) -> Result<f64, String> {
    match value.parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        Ok(_) => Err("expected a finite number".to_string()),
        Err(_) => Err("expected a number".to_string()),
    }
}

fn positive(v: f64) -> Result<f64, String> {
    if v > 0.0 {
        Ok(v)
    } else {
        Err("must be positive".to_string())
    }
}

fn non_negative(v: f64) -> Result<f64, String> {
    if v >= 0.0 {
        Ok(v)
    } else {
        Err("must not be negative".to_string())
    }
}

/// A duration with an optional unit (`1us`), in seconds.
fn seconds(value: &str) -> Result<f64, String> {
    match units::parse_time(value).map_err(|e| e.to_string())? {
        s if s.is_finite() => Ok(s),
        _ => Err("expected a finite time".to_string()),
    }
}

fn non_negative_seconds(value: &str) -> Result<f64, String> {
    non_negative(seconds(value)?)
}

/// A link latency: the platform's bounds (0 to 1e9 s).
fn latency(value: &str) -> Result<f64, String> {
    match non_negative_seconds(value)? {
        s if s <= 1e9 => Ok(s),
        _ => Err("must be at most 1e9 s".to_string()),
    }
}

/// The largest size accepted, 2^53 bytes (8 PiB): every size up to it is an exact `f64`, and
/// rounding it up to whole pages cannot overflow.
const MAX_SIZE: f64 = 9_007_199_254_740_992.0;

/// A size with an optional unit (`4MiB`), in bytes (also used for plain counts).
fn size(value: &str) -> Result<usize, String> {
    let bytes = units::parse_size(value).map_err(|e| e.to_string())?;
    if bytes < 0.0 {
        return Err("must not be negative".to_string());
    }
    if bytes > MAX_SIZE {
        return Err("too large (at most 2^53 bytes)".to_string());
    }
    Ok(bytes as usize)
}

fn positive_speed(value: &str) -> Result<f64, String> {
    match units::parse_speed(value).map_err(|e| e.to_string())? {
        s if s > 0.0 && s.is_finite() => Ok(s),
        _ => Err("must be positive".to_string()),
    }
}

fn positive_bandwidth(value: &str) -> Result<f64, String> {
    match units::parse_bandwidth(value).map_err(|e| e.to_string())? {
        b if b > 0.0 && b.is_finite() => Ok(b),
        _ => Err("must be positive".to_string()),
    }
}

/// A piecewise factor in SMPI syntax; empty means `model_default`. A bandwidth factor
/// (`positive`) is above 0, a latency factor not negative.
fn factor(value: &str, model_default: &str, positive: bool) -> Result<PiecewiseFactor, String> {
    let text = if value.is_empty() { model_default } else { value };
    let f = PiecewiseFactor::parse_smpi(text).map_err(|e| e.to_string())?;
    match f.invalid_value(positive) {
        Some(v) if positive => Err(format!(
            "factor {} must be positive (a message would never end)",
            shown(v)
        )),
        Some(v) => Err(format!("factor {} must not be negative", shown(v))),
        None => Ok(f),
    }
}

fn overhead(value: &str) -> Result<Overhead, String> {
    let o = Overhead::parse_smpi(value).map_err(|e| e.to_string())?;
    match o.invalid_value() {
        Some((offset, per_byte)) => Err(format!(
            "overhead {} s + {} s/B: the offset must be within ±1e9 s and the per-byte cost within \
             ±1 s/B",
            shown(offset),
            shown(per_byte)
        )),
        None => Ok(o),
    }
}

/// `x` for a message, very large or small magnitudes in scientific notation.
fn shown(x: f64) -> String {
    if x != 0.0 && x.is_finite() && !(1e-6..1e15).contains(&x.abs()) {
        format!("{x:e}")
    } else {
        format!("{x}")
    }
}

fn text(value: &str) -> Result<String, String> {
    Ok(value.to_string())
}

fn comma_list(value: &str) -> Result<Vec<String>, String> {
    Ok(value
        .split(',')
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect())
}

fn optional_seed(value: &str) -> Result<Option<u64>, String> {
    match value {
        "" => Ok(None),
        _ => value
            .parse()
            .map(Some)
            .map_err(|_| "expected an integer".to_string()),
    }
}

fn privatization(value: &str) -> Result<bool, String> {
    match value.to_ascii_lowercase().as_str() {
        "dlopen" | "yes" | "on" | "1" => Ok(true),
        "no" | "off" | "0" => Ok(false),
        _ => Err("expected dlopen or no".to_string()),
    }
}

fn shared_malloc_mode(value: &str) -> Result<String, String> {
    match value {
        "global" | "local" | "no" | "off" | "yes" => Ok(value.to_string()),
        _ => Err("expected global, local or no".to_string()),
    }
}

/// The plugins SimGrid 3.32 registers, in its order (`--cfg=plugin:help`).
const SIMGRID_PLUGINS: [&str; 7] = [
    "link_load",
    "link_energy_wifi",
    "link_energy",
    "host_load",
    "host_energy",
    "host_dvfs",
    "cmonkey",
];

/// `plugin`: whether the host energy plugin is on (the only one smpirun has). SimGrid's other
/// plugins (and the file system and wifi energy modules, initialised from programs) are refused
/// as not supported; other names as unknown, with the list.
fn plugin(value: &str) -> Result<bool, String> {
    match value {
        "" => Ok(false),
        "host_energy" => Ok(true),
        "file_system" | "wifi_energy" => Err(format!(
            "SimGrid's {value} plugin is not supported by smpirun (only host_energy is)"
        )),
        _ if SIMGRID_PLUGINS.contains(&value) => Err(format!(
            "SimGrid's plugin {value} is not supported by smpirun (only host_energy is)"
        )),
        _ => Err(format!(
            "unknown plugin; SimGrid's plugins are {} (smpirun supports host_energy)",
            SIMGRID_PLUGINS.join(", ")
        )),
    }
}

/// `smpi/<collective>`: an algorithm forced for one collective (empty: none; the name is
/// checked against the collective's algorithms when it first runs).
fn force(cfg: &mut SmpiConfig, collective: &str, algorithm: &str) -> Result<(), String> {
    if !algorithm.is_empty() {
        cfg.coll_forced
            .insert(collective.to_string(), algorithm.to_string());
    }
    Ok(())
}
