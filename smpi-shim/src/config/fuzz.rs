//! Fuzz target for the `--cfg` parser: the values of every key, from the command line, a
//! platform's `<config>` and a model file's `[config]`, through the precedence chain
//! ([`resolve`]). Run as a test for a fixed time (`FUZZ_SECONDS`, default 3 s; see
//! `tests/fuzz-corpus/README.md`). Also holds the harness for smpi-shim's other target (the
//! hostfile, `launcher/args/fuzz.rs`).
//!
//! An input is lines: `key:value` is a `--cfg` pair, `@key=value` a platform `<config>` entry
//! and `%key=value` a model file's `[config]` entry. Properties: no panic, no hang; a rejected
//! value gets one message naming where it was given, the key and the value; an accepted
//! configuration holds only sensible values (finite numbers, positive precisions, speeds and
//! bandwidth factors, costs and latency factors that are not negative, ...).

#[path = "../../../tests/fuzz-corpus/harness.rs"]
pub(crate) mod harness;

use std::path::Path;

use harness::{Target, Verdict};
use models::ModelSet;
use simcore::platform::ConfigEntry;

use super::{printable, resolve, SmpiConfig, KEYS};

#[global_allocator]
static ALLOC: harness::TrackingAlloc = harness::TrackingAlloc;

const PLATFORM: &str = "fuzz-platform.xml";
const MODEL: &str = "fuzz-model.toml";

fn check_config(c: &SmpiConfig) -> Verdict {
    let nonsense = |what: &str, v: f64| Err(format!("accepted nonsense: {what} {v}"));
    for (what, v, fine) in [
        ("network/weight-S", c.weight_s, c.weight_s >= 0.0),
        ("network/TCP-gamma", c.tcp_gamma, c.tcp_gamma >= 0.0),
        ("network/loopback-bw", c.loopback_bw, c.loopback_bw > 0.0),
        (
            "network/loopback-lat",
            c.loopback_lat,
            (0.0..=1e9).contains(&c.loopback_lat),
        ),
        ("precision/work-amount", c.precision_work, c.precision_work > 0.0),
        ("precision/timing", c.timing_precision, c.timing_precision > 0.0),
        ("smpi/host-speed", c.host_speed, c.host_speed > 0.0),
        ("smpi/cpu-threshold", c.cpu_threshold, true),
        ("smpi/wtime", c.wtime, c.wtime >= 0.0),
        ("smpi/test", c.test, c.test >= 0.0),
        ("smpi/iprobe", c.iprobe, c.iprobe >= 0.0),
        (
            "smpi/iprobe-cpu-usage",
            c.iprobe_cpu_usage,
            c.iprobe_cpu_usage > 0.0,
        ),
        ("smpi/init", c.init, c.init >= 0.0),
    ] {
        if !(v.is_finite() && fine) {
            return nonsense(what, v);
        }
    }
    if let Some(v) = c.lat_factor.invalid_value(false) {
        return nonsense("latency factor", v);
    }
    if let Some(v) = c.bw_factor.invalid_value(true) {
        return nonsense("bandwidth factor", v);
    }
    for (what, o) in [("smpi/os", &c.os), ("smpi/or", &c.or), ("smpi/ois", &c.ois)] {
        for size in [0.0, 1.0, 65536.0, 1e9] {
            if !o.cost(size).is_finite() {
                return nonsense(what, o.cost(size));
            }
        }
    }
    if c.stack_size < 64 * 1024 || c.async_small_thresh > c.detached_thresh {
        return Err(format!(
            "accepted nonsense: stack {} B, thresholds {} > {}",
            c.stack_size, c.async_small_thresh, c.detached_thresh
        ));
    }
    for (what, size) in [
        ("smpi/shared-malloc-blocksize", c.shared_malloc_blocksize),
        ("smpi/auto-shared-malloc-thresh", c.auto_shared_malloc_thresh),
        (
            "smpi/auto-shared-malloc-cow-thresh",
            c.auto_shared_malloc_cow_thresh,
        ),
    ] {
        if size > 1 << 53 {
            return nonsense(what, size as f64);
        }
    }
    Ok(())
}

/// Splits an input into the three sources and resolves them.
fn check(bytes: &[u8]) -> Verdict {
    let text = String::from_utf8_lossy(bytes);
    let mut platform = Vec::new();
    let mut model = ModelSet::default();
    let mut command_line = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if let Some(entry) = line.strip_prefix('@') {
            let (key, value) = entry.split_once('=').unwrap_or((entry, ""));
            platform.push(ConfigEntry {
                key: key.to_string(),
                value: value.to_string(),
                place: format!("{PLATFORM}:{}:1", i + 1),
            });
        } else if let Some(entry) = line.strip_prefix('%') {
            let (key, value) = entry.split_once('=').unwrap_or((entry, ""));
            model.config.insert(key.to_string(), value.to_string());
        } else if !line.is_empty() {
            command_line.push(line.to_string());
        }
    }
    let with_model = (!model.config.is_empty()).then_some((Path::new(MODEL), &model));
    match resolve(&platform, with_model, &command_line) {
        Ok(c) => check_config(&c),
        Err(e) => {
            let msg = e.to_string();
            let placed = msg.starts_with("--cfg=")
                || msg.starts_with(&format!("{PLATFORM}:"))
                || msg.starts_with(&format!("{MODEL}: [config] "));
            if !placed {
                return Err(format!("message without the place of the value: `{msg}`"));
            }
            if !msg.contains(&format!("{}:{}", printable(&e.key), printable(&e.value)))
                || e.problem.is_empty()
            {
                return Err(format!("message without the key, value and problem: `{msg}`"));
            }
            if msg.contains(['\n', '\r']) {
                return Err(format!("message on several lines: `{msg}`"));
            }
            Ok(())
        }
    }
}

/// Values that parse for some key and that break others.
const VALUES: &[&str] = &[
    "yes",
    "no",
    "SMPI",
    "CM02",
    "LV08",
    "raw",
    "global",
    "rank",
    "simgrid",
    "fifo",
    "dlopen",
    "auto",
    "model",
    "compute",
    "1us",
    "1e-9",
    "0",
    "-1",
    "nan",
    "inf",
    "-inf",
    "1e999",
    "1e308",
    "4.9e-324",
    "0:1;100:2",
    "0:0",
    "0:-1",
    "0:1:2;8133:0:0",
    "0:nan",
    "18446744073709551615:1",
    "64KiB",
    "1e30B",
    "1e16",
    "8PiB",
    "10GBps",
    "0GBps",
    "1Gf",
    "0f",
    "1e999f",
    "1e999GBps",
    "20000f",
    "1d",
    "1e10s",
    "",
    ":",
    "::",
    "a,b,,c",
    "4096",
    "9007199254740993",
];

#[test]
fn cfg() {
    let mut target = Target::new("cfg", "txt");
    // One seed per key: its default, on the command line and as the two file sources.
    let mut defaults = String::new();
    for k in KEYS {
        defaults += &format!(
            "{}:{}\n@{}={}\n%{}={}\n",
            k.name, k.default, k.name, k.default, k.name, k.default
        );
    }
    target = target.seed("defaults of every key", defaults);
    let mut words: Vec<String> = Vec::new();
    for k in KEYS {
        for name in std::iter::once(k.name).chain(k.aliases.iter().copied()) {
            words.push(format!("{name}:"));
            words.push(format!("@{name}="));
            words.push(format!("%{name}="));
        }
    }
    words.extend(VALUES.iter().map(|v| v.to_string()));
    let words: Vec<&str> = words.iter().map(String::as_str).collect();
    target.dict(&words).run(check);
}

// ---------------------------------------------------------------------------------------------
// Regression cases: each value the fuzzing found accepted (or crashing), with the message it now
// gets. (Their inputs are also in the corpus, `tests/fuzz-corpus/cfg/crash-*`.)

fn error(pairs: &[&str]) -> String {
    let cli: Vec<String> = pairs.iter().map(|p| p.to_string()).collect();
    match resolve(&[], None, &cli) {
        Ok(_) => panic!("accepted: {pairs:?}"),
        Err(e) => e.to_string(),
    }
}

/// Were accepted; `precision/timing:0` and `precision/work-amount:0|-1|nan` then spun forever.
#[test]
fn precisions_must_be_positive_numbers() {
    assert_eq!(
        error(&["precision/timing:0"]),
        "--cfg=precision/timing:0: must be positive"
    );
    assert_eq!(
        error(&["surf/precision:-1e-9"]),
        "--cfg=precision/timing:-1e-9: must be positive"
    );
    assert_eq!(
        error(&["precision/work-amount:nan"]),
        "--cfg=precision/work-amount:nan: expected a finite number"
    );
    assert_eq!(
        error(&["maxmin/precision:-1"]),
        "--cfg=precision/work-amount:-1: must be positive"
    );
    assert_eq!(
        error(&["precision/work-amount:inf"]),
        "--cfg=precision/work-amount:inf: expected a finite number"
    );
}

/// Were accepted: a negative latency factor, a zero bandwidth factor (reported later as a
/// deadlock of the ranks), negative call costs, infinite numbers.
#[test]
fn values_out_of_range_are_errors() {
    assert_eq!(
        error(&["network/latency-factor:-1"]),
        "--cfg=network/latency-factor:-1: factor -1 must not be negative"
    );
    assert_eq!(
        error(&["smpi/bw-factor:0:1;65536:0"]),
        "--cfg=network/bandwidth-factor:0:1;65536:0: factor 0 must be positive (a message would never end)"
    );
    for key in ["smpi/wtime", "smpi/test", "smpi/iprobe", "smpi/init"] {
        assert_eq!(
            error(&[&format!("{key}:-1")]),
            format!("--cfg={key}:-1: must not be negative")
        );
    }
    assert_eq!(
        error(&["smpi/host-speed:1e999f"]),
        "--cfg=smpi/host-speed:1e999f: must be positive"
    );
    assert_eq!(
        error(&["network/weight-S:-1"]),
        "--cfg=network/weight-S:-1: must not be negative"
    );
    assert_eq!(
        error(&["network/TCP-gamma:nan"]),
        "--cfg=network/TCP-gamma:nan: expected a finite number"
    );
    assert_eq!(
        error(&["smpi/iprobe-cpu-usage:0"]),
        "--cfg=smpi/iprobe-cpu-usage:0: must be positive"
    );
    assert_eq!(
        error(&["smpi/cpu-threshold:1e999"]),
        "--cfg=smpi/cpu-threshold:1e999: expected a finite time"
    );
    assert_eq!(
        error(&["network/loopback-lat:1e10"]),
        "--cfg=network/loopback-lat:1e10: must be at most 1e9 s"
    );
    assert_eq!(
        error(&["smpi/os:3:0:1e308"]),
        "--cfg=smpi/os:3:0:1e308: overhead 0 s + 1e308 s/B: the offset must be within ±1e9 s and the \
         per-byte cost within ±1 s/B"
    );
    // Still accepted: SimGrid's -1 for "never inject", a zero cost.
    let ok: Vec<String> = [
        "smpi/cpu-threshold:-1",
        "smpi/iprobe:0",
        "network/latency-factor:0",
    ]
    .iter()
    .map(|p| p.to_string())
    .collect();
    assert!(resolve(&[], None, &ok).is_ok());
}

/// Sizes past 2^64 used to saturate to usize::MAX; the stack size then overflowed when
/// converted from KiB (a panic in debug builds, a wrapped size in release builds).
#[test]
fn huge_sizes_are_errors() {
    assert_eq!(
        error(&["contexts/stack-size:1e30"]),
        "--cfg=contexts/stack-size:1e30: too large (at most 2^53 bytes)"
    );
    assert_eq!(
        error(&["smpi/shared-malloc-blocksize:1e999B"]),
        "--cfg=smpi/shared-malloc-blocksize:1e999B: too large (at most 2^53 bytes)"
    );
}

/// Was a message on two lines (a carriage return quoted as given).
#[test]
fn messages_stay_on_one_line() {
    assert_eq!(
        error(&["smpi/cpu-threshold:7\r1"]),
        "--cfg=smpi/cpu-threshold:7\\r1: unknown time unit `1` in `7\\r1` (expected one of ps, ns, us, \
         ms, s, m, h, d, w)"
    );
}

/// A megabyte-long unknown key (from a platform file) took seconds to find no near name.
#[test]
fn huge_unknown_key_is_quick() {
    let key = "k".repeat(1 << 20);
    let entry = ConfigEntry {
        key: key.clone(),
        value: "1".to_string(),
        place: "p.xml:3:5".to_string(),
    };
    let start = std::time::Instant::now();
    let e = resolve(&[entry], None, &[]).expect_err("unknown key").to_string();
    assert!(start.elapsed().as_secs_f64() < 0.5, "{:?}", start.elapsed());
    assert!(e.ends_with(":1: unknown configuration key (smpirun --help-cfg lists them)"));
    // Near names are still suggested.
    assert!(error(&["smpi/wtim:1"]).contains("did you mean smpi/wtime?"));
}
