//! A small, time-bounded mutation fuzzer for the input parsers, on stable Rust and without
//! dependencies (no sanitizer coverage: structure-aware mutation of valid seeds instead).
//!
//! Included with `#[path]` by `simcore/tests/fuzz.rs`, `models/tests/fuzz.rs` and smpi-shim's
//! `config/fuzz.rs`; how to run it longer is in `tests/fuzz-corpus/README.md`.
//!
//! A [`Target`] runs, in order: every file of `tests/fuzz-corpus/<name>/` (the seeds and the
//! inputs that once failed, kept as regression cases), its extra seeds (shipped files), then
//! mutations of all of them until `FUZZ_SECONDS` (default 3) have passed. Each input goes through
//! the target's check, which returns what property the input breaks, if any; the harness adds
//! three of its own: no panic, at most `FUZZ_SLOW_MS` (default 10000) milliseconds per input, and
//! at most 1 GiB allocated at once by the check (a single request above 2 GiB aborts the process;
//! the input being run is always in `target/fuzz/<name>/current.<ext>`). A failing input is
//! shrunk, saved under `target/fuzz/<name>/`, and the test fails naming the file.
#![allow(dead_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::io::Write as _;
use std::os::unix::fs::FileExt as _;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Once};
use std::time::{Duration, Instant};

/// What a check says about one input: fine, or the property it breaks, as `"kind: detail"`
/// (inputs failing with the same kind count as one failure).
pub(crate) type Verdict = Result<(), String>;

/// Bytes a check may hold allocated at once.
const MEMORY_LIMIT: usize = 1 << 30;
/// A single allocation request above this fails (the process aborts: the input is in the
/// `current` file).
const ALLOCATION_LIMIT: usize = 2 << 30;
/// Longest input produced by mutation.
const MAX_INPUT: usize = 1 << 22;
/// Distinct failures after which a run stops.
const MAX_FAILURES: usize = 8;

// ---------------------------------------------------------------------------------------------
// Memory accounting

thread_local! {
    static TRACKING: Cell<bool> = const { Cell::new(false) };
    static LIVE: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
    static FUZZING: Cell<bool> = const { Cell::new(false) };
    static LAST_PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// The global allocator of a fuzz test binary: counts, per thread and only while a check runs,
/// the bytes allocated and not yet freed, and refuses single requests above 2 GiB.
pub(crate) struct TrackingAlloc;

fn note(delta: isize) {
    let _ = TRACKING.try_with(|t| {
        if t.get() {
            let _ = LIVE.try_with(|live| {
                let now = live.get() + delta;
                live.set(now);
                let _ = PEAK.try_with(|peak| peak.set(peak.get().max(now)));
            });
        }
    });
}

fn refused(size: usize) -> bool {
    size > ALLOCATION_LIMIT && TRACKING.try_with(Cell::get).unwrap_or(false)
}

// SAFETY: every method forwards to `System` with the caller's arguments unchanged; the
// bookkeeping touches only `Cell`s of const-initialised thread-locals without destructors, which
// never allocate.
unsafe impl GlobalAlloc for TrackingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if refused(layout.size()) {
            return std::ptr::null_mut();
        }
        // SAFETY: same contract as ours.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            note(layout.size() as isize);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if refused(layout.size()) {
            return std::ptr::null_mut();
        }
        // SAFETY: same contract as ours.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            note(layout.size() as isize);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        note(-(layout.size() as isize));
        // SAFETY: same contract as ours.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if refused(new_size) {
            return std::ptr::null_mut();
        }
        // SAFETY: same contract as ours.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            note(new_size as isize - layout.size() as isize);
        }
        p
    }
}

// ---------------------------------------------------------------------------------------------
// Random numbers (SplitMix64: deterministic for a seed, on every platform)

pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Self {
        Rng(seed)
    }

    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`).
    pub(crate) fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// True with probability `percent`/100.
    pub(crate) fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }

    pub(crate) fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

fn fnv(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    })
}

// ---------------------------------------------------------------------------------------------
// Mutations

/// Numbers that break parsers: signs, overflow of every integer width, float extremes.
pub(crate) const NUMBERS: &[&str] = &[
    "0",
    "-0",
    "-1",
    "1",
    "2",
    "3",
    "7",
    "-2147483648",
    "2147483647",
    "4294967295",
    "4294967296",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775809",
    "18446744073709551615",
    "18446744073709551616",
    "99999999999999999999999999999",
    "1e308",
    "1.8e308",
    "1e309",
    "1e999",
    "-1e999",
    "1e-320",
    "4.9e-324",
    "1e-400",
    "nan",
    "NaN",
    "-nan",
    "inf",
    "-inf",
    "infinity",
    "0.0",
    "0.5",
    "1.5",
    "-0.5",
    "65536",
    "1048576",
    "1000000",
    "100000000",
    "1e9",
    ".",
    "-",
    "+",
    "1e",
    "e5",
    "0x10",
    "+1",
    "1_000",
    "١٢",
];

/// Values that break parsers of strings.
pub(crate) const STRINGS: &[&str] = &[
    "",
    " ",
    "\\",
    "\t",
    "0-4294967296",
    "0-9999999999",
    "0-1000000",
    "0-100000",
    "5-1",
    "-5--1",
    "0-0,0-0",
    "1e999Gf",
    "1e999GBps",
    "-1GBps",
    "0Bps",
    "0f",
    "nanGf",
    "infGBps",
    "1e-400us",
    "-1us",
    "1Gf,",
    ",",
    ";;;",
    "1;1;1;1",
    "1;4294967296;1;1",
    "2;2,2;4294967296,1;1,1",
    "2;2,2;1,1;4294967296,1",
    "2;2,2;65536,65536;65536,65536",
    "1,1;1,1;1048576,1;1",
    "1,1;1,1;1,1;1048576",
    "1,4294967296;1,1;1,1;1",
    "4294967296",
    "65536,65536",
    "FAT_TREE",
    "TORUS",
    "DRAGONFLY",
    "FLAT",
    "SPLITDUPLEX",
    "FATPIPE",
    "M^4294967296",
    "M^99999999999",
    "M*N*K*M*N*K*M",
    "intercept",
    "é",
    "\u{202e}",
    "\u{feff}",
    "🦀",
    "\u{0}",
    "a\nb",
];

/// Bytes that matter to the formats.
const BYTES: &[u8] = b"\0\n\r\t \"'<>/=[]{}();:,.-+#&\\eE0123456789";

/// A fuzz target: a name (its corpus directory), seeds, and the words its mutations insert.
pub(crate) struct Target {
    name: &'static str,
    ext: &'static str,
    seeds: Vec<(String, Vec<u8>)>,
    dict: Vec<Vec<u8>>,
    nesting: Vec<(&'static str, &'static str)>,
}

/// A failing input, with what it breaks.
struct Failure {
    kind: String,
    detail: String,
    input: Vec<u8>,
    /// Where it came from: a corpus file, or `mutation`.
    origin: String,
}

/// The root of the workspace (each crate is one directory below it).
pub(crate) fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("a crate lives in the workspace root")
        .to_path_buf()
}

fn env_number(name: &str) -> Option<f64> {
    let text = std::env::var(name).ok()?;
    match text.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Some(v),
        _ => panic!("{name}={text}: expected a non-negative number"),
    }
}

impl Target {
    /// A target whose corpus is `tests/fuzz-corpus/<name>/` and whose inputs are saved with
    /// extension `ext`.
    pub(crate) fn new(name: &'static str, ext: &'static str) -> Self {
        Target {
            name,
            ext,
            seeds: Vec::new(),
            dict: Vec::new(),
            nesting: Vec::new(),
        }
    }

    /// Adds every file of `dir` (relative to the workspace root) whose name ends with one of
    /// `suffixes` as a seed.
    pub(crate) fn seed_dir(mut self, dir: &str, suffixes: &[&str]) -> Self {
        let dir = workspace_root().join(dir);
        let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| e.expect("readable directory").path())
            .filter(|p| {
                let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
                suffixes.iter().any(|s| name.ends_with(s))
            })
            .collect();
        paths.sort();
        for p in paths {
            let bytes = std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            self.seeds.push((p.display().to_string(), bytes));
        }
        self
    }

    /// Adds one seed.
    pub(crate) fn seed(mut self, origin: &str, text: impl Into<Vec<u8>>) -> Self {
        self.seeds.push((origin.to_string(), text.into()));
        self
    }

    /// Words the mutations insert (keys, element names, values of the format).
    pub(crate) fn dict(mut self, words: &[&str]) -> Self {
        self.dict.extend(words.iter().map(|w| w.as_bytes().to_vec()));
        self
    }

    /// An opening and a closing text the mutations nest deeply.
    pub(crate) fn nesting(mut self, open: &'static str, close: &'static str) -> Self {
        self.nesting.push((open, close));
        self
    }

    fn corpus_dir(&self) -> PathBuf {
        workspace_root().join("tests/fuzz-corpus").join(self.name)
    }

    fn out_dir(&self) -> PathBuf {
        let target = std::env::var_os("CARGO_TARGET_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| workspace_root().join("target"));
        let target = if target.is_absolute() {
            target
        } else {
            workspace_root().join(target)
        };
        target.join("fuzz").join(self.name)
    }

    /// Runs the corpus, the seeds, then mutations until the time is up; fails the test with
    /// every distinct failure found.
    pub(crate) fn run(self, check: impl Fn(&[u8]) -> Verdict + Send + Sync + 'static) {
        install_panic_hook();
        let seconds = env_number("FUZZ_SECONDS").unwrap_or(3.0);
        let slow = Duration::from_secs_f64(env_number("FUZZ_SLOW_MS").unwrap_or(10_000.0) / 1000.0);
        let seed = env_number("FUZZ_SEED").map_or(1, |s| s as u64);
        if let Some(path) = std::env::var_os("FUZZ_REPLAY") {
            return replay(Path::new(&path), self.name, self.ext, &check);
        }
        let out = self.out_dir();
        std::fs::create_dir_all(&out).unwrap_or_else(|e| panic!("{}: {e}", out.display()));
        let current = out.join(format!("current.{}", self.ext));
        if std::env::var_os("FUZZ_SECONDS").is_some() {
            let _ = writeln!(
                std::io::stderr(),
                "fuzz {}: {seconds} s, seed {seed}; if the process dies, the input it ran is {}",
                self.name,
                current.display()
            );
        }

        let started = Arc::new(AtomicU64::new(0));
        let epoch = Instant::now();
        let done = Arc::new(AtomicBool::new(false));
        let worker = {
            let (started, done, current) = (started.clone(), done.clone(), current.clone());
            std::thread::Builder::new()
                .name(format!("fuzz-{}", self.name))
                // The size of a main thread's stack, where smpirun parses its inputs.
                .stack_size(8 << 20)
                .spawn(move || {
                    let file = std::fs::File::create(&current)
                        .unwrap_or_else(|e| panic!("{}: {e}", current.display()));
                    let mut runner = Runner {
                        check: &check,
                        started: &started,
                        current: file,
                        slow,
                        epoch,
                    };
                    let report = self.fuzz(&mut runner, seconds, seed);
                    done.store(true, Ordering::SeqCst);
                    (self, report)
                })
                .expect("spawn the fuzz thread")
        };
        // Watchdog: an input running for far longer than the slow limit is a hang.
        let hang = slow * 4 + Duration::from_secs(10);
        while !done.load(Ordering::SeqCst) {
            std::thread::sleep(Duration::from_millis(20));
            let since = started.load(Ordering::SeqCst);
            if since != 0 {
                let running = epoch.elapsed().saturating_sub(Duration::from_millis(since));
                if running > hang && !done.load(Ordering::SeqCst) {
                    panic!(
                        "fuzz: an input has run for {:.0} s (a hang); it is in {}",
                        running.as_secs_f64(),
                        current.display()
                    );
                }
            }
        }
        let (target, (runs, failures)) = worker.join().expect("the fuzz thread catches panics");
        let _ = std::fs::remove_file(&current);
        let _ = writeln!(
            std::io::stderr(),
            "fuzz {}: {runs} inputs in {seconds} s (seed {seed}), {} failure(s)",
            target.name,
            failures.len()
        );
        if failures.is_empty() {
            return;
        }
        let mut message = format!("fuzz {}: {} failure(s)\n", target.name, failures.len());
        for (i, f) in failures.iter().enumerate() {
            let path = out.join(format!("failure-{}-{i}.{}", fnv(&f.kind) % 1_000_000, target.ext));
            let _ = std::fs::write(&path, &f.input);
            message += &format!(
                "\n[{i}] {}\n    from {}; input ({} bytes) saved to {}\n    {}\n",
                f.detail,
                f.origin,
                f.input.len(),
                path.display(),
                preview(&f.input)
            );
        }
        message += &format!(
            "\nOnce fixed, copy each input to {}/ as a regression case.",
            target.corpus_dir().display()
        );
        panic!("{message}");
    }

    /// The fuzzing proper (on the worker thread): returns the number of inputs run and the
    /// failures, shrunk.
    fn fuzz(&self, runner: &mut Runner<'_>, seconds: f64, seed: u64) -> (u64, Vec<Failure>) {
        let deadline = Instant::now() + Duration::from_secs_f64(seconds);
        let mut failures: BTreeMap<String, Failure> = BTreeMap::new();
        // The corpus (seeds and regression cases) and the extra seeds, always run in full.
        let mut pool: Vec<(String, Vec<u8>)> = Vec::new();
        if let Ok(entries) = std::fs::read_dir(self.corpus_dir()) {
            let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
            paths.sort();
            for p in paths.into_iter().filter(|p| p.is_file()) {
                let bytes = std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
                pool.push((p.display().to_string(), bytes));
            }
        }
        pool.extend(self.seeds.iter().cloned());
        assert!(!pool.is_empty(), "fuzz {}: no seed", self.name);
        let mut runs = 0u64;
        for (origin, input) in &pool {
            runs += 1;
            if let Err((kind, detail)) = runner.verdict(input) {
                record(&mut failures, runner, kind, detail, input, origin);
            }
        }

        let mut rng = Rng::new(seed ^ fnv(self.name));
        let inputs: Vec<&[u8]> = pool.iter().map(|(_, b)| b.as_slice()).collect();
        while Instant::now() < deadline && failures.len() < MAX_FAILURES {
            // Mostly the smaller of two seeds: small inputs run faster, and reach the same code.
            let (a, b) = (rng.pick(&inputs), rng.pick(&inputs));
            let pick = if a.len() <= b.len() || rng.chance(10) {
                a
            } else {
                b
            };
            let mut input = pick.to_vec();
            let rounds = if rng.chance(20) {
                4 + rng.below(12)
            } else {
                1 + rng.below(3)
            };
            for _ in 0..rounds {
                self.mutate(&mut rng, &mut input, &inputs);
            }
            input.truncate(MAX_INPUT);
            runs += 1;
            if let Err((kind, detail)) = runner.verdict(&input) {
                record(&mut failures, runner, kind, detail, &input, "mutation");
            }
        }
        (runs, failures.into_values().collect())
    }

    /// Applies one random mutation to `data`.
    fn mutate(&self, rng: &mut Rng, data: &mut Vec<u8>, pool: &[&[u8]]) {
        let len = data.len();
        match rng.below(18) {
            0 if len > 0 => {
                let i = rng.below(len);
                data[i] ^= 1 << rng.below(8);
            }
            1 if len > 0 => {
                let i = rng.below(len);
                data[i] = *rng.pick(BYTES);
            }
            2 => {
                let at = rng.below(len + 1);
                let n = 1 + rng.below(8);
                let bytes: Vec<u8> = (0..n)
                    .map(|_| {
                        if rng.chance(50) {
                            *rng.pick(BYTES)
                        } else {
                            rng.next() as u8
                        }
                    })
                    .collect();
                data.splice(at..at, bytes);
            }
            3 if len > 0 => {
                let start = rng.below(len);
                let span = if rng.chance(80) { 16 } else { len - start };
                let n = 1 + rng.below(span);
                data.drain(start..(start + n).min(len));
            }
            4 if len > 0 => {
                let start = rng.below(len);
                let n = 1 + rng.below((len - start).min(256));
                let chunk = data[start..start + n].to_vec();
                let at = rng.below(len + 1);
                data.splice(at..at, chunk);
            }
            5 => data.truncate(rng.below(len + 1)),
            6..=8 => {
                if let Some(r) = pick_token(rng, data, true) {
                    let replacement = if rng.chance(70) {
                        rng.pick(NUMBERS).to_string()
                    } else {
                        let digits = 1 + rng.below(30);
                        (0..digits)
                            .map(|_| char::from(b'0' + rng.below(10) as u8))
                            .collect()
                    };
                    data.splice(r, replacement.into_bytes());
                }
            }
            9 | 10 => {
                if let Some(r) = quoted(rng, data) {
                    let mut replacement = rng.pick(STRINGS).as_bytes().to_vec();
                    if rng.chance(3) {
                        replacement = replacement.repeat(1 + rng.below(10_000));
                    } else if rng.chance(30) && !self.dict.is_empty() {
                        replacement = rng.pick(&self.dict).clone();
                    }
                    data.splice(r, replacement);
                }
            }
            11 if !self.dict.is_empty() => {
                let word = rng.pick(&self.dict).clone();
                let at = if rng.chance(50) {
                    line_start(rng, data)
                } else {
                    rng.below(len + 1)
                };
                let mut bytes = word;
                if rng.chance(50) {
                    bytes.push(b'\n');
                }
                data.splice(at..at, bytes);
            }
            12 => {
                let lines = lines(data);
                if lines.is_empty() {
                    return;
                }
                let (a, b) = (rng.below(lines.len()), rng.below(lines.len()));
                let line_a = data[lines[a].clone()].to_vec();
                match rng.below(3) {
                    0 => {
                        data.drain(lines[a].clone());
                    }
                    1 => {
                        let at = lines[b].start;
                        let copies = if rng.chance(3) { 1 + rng.below(1000) } else { 1 };
                        data.splice(at..at, line_a.repeat(copies));
                    }
                    _ => {
                        let (lo, hi) = (a.min(b), a.max(b));
                        if lo != hi {
                            let line_hi = data[lines[hi].clone()].to_vec();
                            let line_lo = data[lines[lo].clone()].to_vec();
                            data.splice(lines[hi].clone(), line_lo);
                            data.splice(lines[lo].clone(), line_hi);
                        }
                    }
                }
            }
            13 => {
                let other = rng.pick(pool);
                let other_lines = lines(other);
                if other_lines.is_empty() {
                    return;
                }
                let first = rng.below(other_lines.len());
                let last = (first + rng.below(8)).min(other_lines.len() - 1);
                let chunk = other[other_lines[first].start..other_lines[last].end].to_vec();
                let at = line_start(rng, data);
                data.splice(at..at, chunk);
            }
            14 if !self.nesting.is_empty() => {
                let (open, close) = *rng.pick(&self.nesting);
                // Deep enough to overflow a recursive parser's stack, now and then.
                let depth = if rng.chance(5) {
                    100_000
                } else {
                    *rng.pick(&[2usize, 5, 10, 50, 100, 300, 1_000])
                };
                let mut nest = open.repeat(depth).into_bytes();
                nest.extend(close.repeat(depth).into_bytes());
                let at = if rng.chance(50) {
                    after_equals(rng, data).unwrap_or(len)
                } else {
                    line_start(rng, data)
                };
                data.splice(at..at, nest);
            }
            15 => {
                let at = rng.below(len + 1);
                let bytes: &[u8] = match rng.below(6) {
                    0 => "é".as_bytes(),
                    1 => "\u{202e}".as_bytes(),
                    2 => "🦀".as_bytes(),
                    3 => b"\xff",
                    4 => b"\xc3",
                    _ => b"\0",
                };
                data.splice(at..at, bytes.iter().copied());
            }
            16 => {
                // A value after `=` or a quote replaced by a number as text.
                if let Some(r) = quoted(rng, data) {
                    data.splice(r, rng.pick(NUMBERS).bytes());
                }
            }
            _ => {
                if rng.chance(2) {
                    data.clear();
                } else if let Some(r) = pick_token(rng, data, false) {
                    let word: Vec<u8> = if !self.dict.is_empty() && rng.chance(50) {
                        rng.pick(&self.dict).clone()
                    } else {
                        rng.pick(STRINGS).as_bytes().to_vec()
                    };
                    data.splice(r, word);
                }
            }
        }
    }
}

/// Keeps the first failure of each kind, shrunk (not a slow one: shrinking it would take long).
fn record(
    failures: &mut BTreeMap<String, Failure>,
    runner: &mut Runner<'_>,
    kind: String,
    detail: String,
    input: &[u8],
    origin: &str,
) {
    if failures.contains_key(&kind) {
        return;
    }
    let input = if kind == "slow" {
        input.to_vec()
    } else {
        runner.shrink(input, &kind)
    };
    let (kind, detail) = match runner.verdict(&input) {
        Err(v) => v,
        Ok(()) => (kind, detail),
    };
    failures.entry(kind.clone()).or_insert(Failure {
        kind,
        detail,
        input,
        origin: origin.to_string(),
    });
}

/// Runs one input through the check and the harness's own properties.
struct Runner<'a> {
    check: &'a (dyn Fn(&[u8]) -> Verdict + Send + Sync),
    started: &'a AtomicU64,
    /// The `current` file, kept open (opening a file per input costs milliseconds here).
    current: std::fs::File,
    slow: Duration,
    epoch: Instant,
}

impl Runner<'_> {
    /// `Err((kind, detail))` when the input breaks a property.
    fn verdict(&mut self, input: &[u8]) -> Result<(), (String, String)> {
        // Kept on disk in case the process dies (stack overflow, refused allocation).
        let _ = self.current.set_len(0);
        let _ = self.current.write_all_at(input, 0);
        self.started
            .store(self.epoch.elapsed().as_millis().max(1) as u64, Ordering::SeqCst);
        FUZZING.with(|f| f.set(true));
        LIVE.with(|l| l.set(0));
        PEAK.with(|p| p.set(0));
        TRACKING.with(|t| t.set(true));
        let start = Instant::now();
        let outcome = catch_unwind(AssertUnwindSafe(|| (self.check)(input)));
        let elapsed = start.elapsed();
        TRACKING.with(|t| t.set(false));
        FUZZING.with(|f| f.set(false));
        self.started.store(0, Ordering::SeqCst);
        let peak = PEAK.with(Cell::get).max(0) as usize;
        match outcome {
            Err(_) => {
                let what = LAST_PANIC
                    .with(|p| p.borrow_mut().take())
                    .unwrap_or_else(|| "panic with an unknown payload".to_string());
                let place = what.rsplit(" at ").next().unwrap_or("").to_string();
                return Err((format!("panic at {place}"), what));
            }
            Ok(Err(violation)) => {
                let kind = violation.split(':').next().unwrap_or("").trim().to_string();
                return Err((kind, violation));
            }
            Ok(Ok(())) => {}
        }
        if elapsed > self.slow {
            return Err((
                "slow".to_string(),
                format!(
                    "{:.2} s for one input (limit {:.2} s)",
                    elapsed.as_secs_f64(),
                    self.slow.as_secs_f64()
                ),
            ));
        }
        if peak > MEMORY_LIMIT {
            return Err((
                "memory".to_string(),
                format!(
                    "{} MiB allocated at once (limit {} MiB)",
                    peak >> 20,
                    MEMORY_LIMIT >> 20
                ),
            ));
        }
        Ok(())
    }

    /// A smaller input failing the same way (lines, then bytes, removed while the failure
    /// stays), within a couple of seconds.
    fn shrink(&mut self, input: &[u8], kind: &str) -> Vec<u8> {
        let deadline = Instant::now() + Duration::from_secs(3);
        let mut best = input.to_vec();
        let same = |runner: &mut Runner<'_>, candidate: &[u8]| matches!(runner.verdict(candidate), Err((k, _)) if k == kind);
        // Whole lines, in chunks of decreasing size.
        let mut chunk = lines(&best).len().max(1);
        while chunk >= 1 && Instant::now() < deadline {
            let mut i = 0;
            loop {
                let ls = lines(&best);
                if i >= ls.len() || Instant::now() >= deadline {
                    break;
                }
                let end = (i + chunk).min(ls.len()) - 1;
                let mut candidate = best.clone();
                candidate.drain(ls[i].start..ls[end].end);
                if same(self, &candidate) {
                    best = candidate;
                } else {
                    i += chunk;
                }
            }
            if chunk == 1 {
                break;
            }
            chunk /= 2;
        }
        // Bytes, for small inputs.
        if best.len() <= 2000 {
            let mut chunk = (best.len() / 2).max(1);
            while Instant::now() < deadline {
                let mut i = 0;
                while i < best.len() && Instant::now() < deadline {
                    let mut candidate = best.clone();
                    candidate.drain(i..(i + chunk).min(best.len()));
                    if same(self, &candidate) {
                        best = candidate;
                    } else {
                        i += chunk;
                    }
                }
                if chunk == 1 {
                    break;
                }
                chunk /= 2;
            }
        }
        best
    }
}

/// `FUZZ_REPLAY=<file>`: runs one input through the check of every target whose inputs have
/// the file's extension, and prints what it breaks.
fn replay(path: &Path, name: &str, ext: &str, check: &(dyn Fn(&[u8]) -> Verdict + Send + Sync)) {
    if path.extension().and_then(|e| e.to_str()) != Some(ext) {
        return;
    }
    let input = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let file =
        std::fs::File::create(std::env::temp_dir().join("fuzz-replay-current")).expect("a temporary file");
    let started = AtomicU64::new(0);
    let mut runner = Runner {
        check,
        started: &started,
        current: file,
        slow: Duration::from_secs(3600),
        epoch: Instant::now(),
    };
    match runner.verdict(&input) {
        Ok(()) => eprintln!("fuzz {name}: {} passes", path.display()),
        Err((_, detail)) => panic!("fuzz {name}: {}: {detail}", path.display()),
    }
}

fn install_panic_hook() {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if FUZZING.try_with(Cell::get).unwrap_or(false) {
                let payload = info.payload();
                let message = payload
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| payload.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "non-string payload".to_string());
                let place = info
                    .location()
                    .map_or_else(|| "?".to_string(), |l| format!("{}:{}", l.file(), l.line()));
                let _ = LAST_PANIC.try_with(|p| *p.borrow_mut() = Some(format!("{message} at {place}")));
            } else {
                previous(info);
            }
        }));
    });
}

/// The input's first bytes, printable.
fn preview(input: &[u8]) -> String {
    let text = String::from_utf8_lossy(&input[..input.len().min(400)]);
    let mut out: String = text.escape_debug().collect();
    if input.len() > 400 {
        out += "...";
    }
    out
}

/// Byte ranges of the lines of `data`, each with its `\n`.
fn lines(data: &[u8]) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, &b) in data.iter().enumerate() {
        if b == b'\n' {
            out.push(start..i + 1);
            start = i + 1;
        }
    }
    if start < data.len() {
        out.push(start..data.len());
    }
    out
}

fn line_start(rng: &mut Rng, data: &[u8]) -> usize {
    let ls = lines(data);
    if ls.is_empty() {
        0
    } else {
        ls[rng.below(ls.len())].start
    }
}

/// A position just after a `=` (or `="`), where a value starts.
fn after_equals(rng: &mut Rng, data: &[u8]) -> Option<usize> {
    let spots: Vec<usize> = data
        .iter()
        .enumerate()
        .filter(|(_, &b)| b == b'=')
        .map(|(i, _)| i + 1)
        .take(10_000)
        .collect();
    if spots.is_empty() {
        return None;
    }
    let mut at = *rng.pick(&spots);
    while at < data.len() && (data[at] == b' ' || data[at] == b'"') {
        at += 1;
    }
    Some(at)
}

fn is_number_token(b: u8) -> bool {
    b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-')
}

fn is_word_token(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'/' | b'-')
}

/// A random maximal run of bytes accepted by `class` that contains a digit (numbers) or a
/// letter (words).
fn pick_token(rng: &mut Rng, data: &[u8], numbers: bool) -> Option<std::ops::Range<usize>> {
    let class = if numbers { is_number_token } else { is_word_token };
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < data.len() && tokens.len() < 10_000 {
        if class(data[i]) {
            let start = i;
            while i < data.len() && class(data[i]) {
                i += 1;
            }
            let t = &data[start..i];
            let wanted = if numbers {
                t.iter().any(u8::is_ascii_digit)
            } else {
                t.iter().any(u8::is_ascii_alphabetic)
            };
            if wanted {
                tokens.push(start..i);
            }
        } else {
            i += 1;
        }
    }
    if tokens.is_empty() {
        None
    } else {
        Some(tokens[rng.below(tokens.len())].clone())
    }
}

/// The inside of a random `"..."` (or `'...'`) pair.
fn quoted(rng: &mut Rng, data: &[u8]) -> Option<std::ops::Range<usize>> {
    let quote = if rng.chance(85) { b'"' } else { b'\'' };
    let marks: Vec<usize> = data
        .iter()
        .enumerate()
        .filter(|(_, &b)| b == quote)
        .map(|(i, _)| i)
        .take(20_000)
        .collect();
    if marks.len() < 2 {
        return None;
    }
    let pair = rng.below(marks.len() / 2);
    Some(marks[2 * pair] + 1..marks[2 * pair + 1])
}
