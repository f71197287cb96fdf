#![warn(missing_docs, unreachable_pub, unsafe_op_in_unsafe_fn)]
//! Helpers for the end-to-end tests in `tests/tests/`.
//!
//! The tests drive the real tools: they compile C programs from `apps/` with
//! `target/release/smpicc` and run them with `target/release/smpirun`, then
//! look at the exit code, stdout, stderr and the `--json` summary. Build the
//! tools first:
//!
//! ```text
//! cargo build --release -p smpi-shim
//! cargo test --release -p e2e-tests
//! ```
//!
//! - [`smpicc`], [`smpirun`]: the tools, found next to the test executable
//!   (`target/release/deps/<test>` → `target/release/`);
//! - [`build_app`], [`build_c`]: compile once per test process into a private
//!   scratch directory ([`scratch_dir`]);
//! - [`Smpirun`]: a builder for one `smpirun` run, always with a timeout
//!   ([`DEFAULT_TIMEOUT`]): a run that hangs is killed and the test fails;
//! - [`RunOutput`]: what a run produced, with assertion helpers that print the
//!   whole command and output on failure;
//! - [`fields`], [`field_f64`]: parse the `key=value` lines the apps print.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// Time a single `smpirun` (or `smpicc`) run may take before it is killed.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// SimGrid 3.32's `examples/` directory: the one `tests/simgrid_examples/fetch.sh` extracted
/// from Debian's `simgrid` source package (`scripts/test.sh` runs it), else an unpacked source
/// tree in `/tmp/sgsrc/simgrid-3.32`. Tests that need it skip, with a message, when it is absent.
pub fn simgrid_examples() -> PathBuf {
    let marker = workspace_root().join("tests/simgrid_examples/build/EXAMPLES");
    std::fs::read_to_string(marker)
        .ok()
        .and_then(|t| t.trim().strip_prefix("SIMGRID_EXAMPLES=").map(PathBuf::from))
        .filter(|d| d.join("platforms").is_dir())
        .unwrap_or_else(|| PathBuf::from("/tmp/sgsrc/simgrid-3.32/examples"))
}

/// The workspace root (the parent of this crate's directory).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the tests crate lives inside the workspace")
        .to_path_buf()
}

/// `apps/` of the workspace.
pub fn apps_dir() -> PathBuf {
    workspace_root().join("apps")
}

/// A file of `platforms/`, e.g. `platform("cluster_4.toml")`.
pub fn platform(name: &str) -> PathBuf {
    let p = workspace_root().join("platforms").join(name);
    assert!(p.exists(), "platform file {} is missing", p.display());
    p
}

/// `shared/reference/smpi-3.32/` next to the workspace (`<workspace>/../shared`),
/// or `None` when it is absent (tests that need it skip with a message).
pub fn smpi_reference_dir() -> Option<PathBuf> {
    let p = workspace_root().join("../shared/reference/smpi-3.32");
    p.join("netbench.c").exists().then_some(p)
}

/// `target/release/` (the directory holding `smpicc` and `smpirun`), found from
/// the test executable `target/release/deps/<test>-<hash>`.
pub fn bin_dir() -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let exe = std::env::current_exe().expect("the test executable has a path");
        let deps = exe.parent().expect("the test executable is in a directory");
        let dir = if deps.file_name().is_some_and(|n| n == "deps") {
            deps.parent().expect("deps/ has a parent").to_path_buf()
        } else {
            deps.to_path_buf()
        };
        for tool in ["smpicc", "smpirun"] {
            assert!(
                dir.join(tool).exists(),
                "{} not found: run `cargo build --release -p smpi-shim` first",
                dir.join(tool).display()
            );
            assert_not_stale(&dir.join(tool), &["smpi-shim", "simcore", "models"]);
        }
        dir
    })
    .clone()
}

/// Panics when a source file of `crates` is newer than the built `tool`:
/// `cargo test -p e2e-tests` runs the tools as they are in `target/release`
/// and does not rebuild them, so a test run after an edit would silently
/// check the previous code. Of the `src/bin/` files only the tool's own count
/// (and `src/bin/common/` when the tool includes it): cargo relinks a binary
/// when its own sources change, not another binary's.
fn assert_not_stale(tool: &Path, crates: &[&str]) {
    fn newest(dir: &Path, skip: &dyn Fn(&Path) -> bool, best: &mut Option<(std::time::SystemTime, PathBuf)>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let path = e.path();
            let Ok(meta) = e.metadata() else { continue };
            if skip(&path) {
                continue;
            }
            if meta.is_dir() {
                newest(&path, skip, best);
            } else if path
                .extension()
                .is_some_and(|x| x == "rs" || x == "c" || x == "h")
            {
                if let Ok(t) = meta.modified() {
                    if best.as_ref().is_none_or(|(b, _)| t > *b) {
                        *best = Some((t, path));
                    }
                }
            }
        }
    }
    let Ok(built) = std::fs::metadata(tool).and_then(|m| m.modified()) else {
        return;
    };
    let name = tool.file_name().and_then(|n| n.to_str()).unwrap_or_default();
    let mut best = None;
    for c in crates {
        let bin = workspace_root().join(c).join("src/bin");
        let own = bin.join(format!("{name}.rs"));
        let uses_common = std::fs::read_to_string(&own).is_ok_and(|t| t.contains("common/"));
        let skip = |p: &Path| {
            p.parent() == Some(bin.as_path()) && p != own && !(uses_common && p.ends_with("common"))
        };
        newest(&workspace_root().join(c).join("src"), &skip, &mut best);
    }
    if let Some((t, path)) = best {
        assert!(
            t <= built,
            "{} is older than {}: rebuild the tools (`cargo build --release --bins`) before the end-to-end \
             tests, which run them as they are",
            tool.display(),
            path.display()
        );
    }
}

/// Path of `smpicc`.
pub fn smpicc() -> PathBuf {
    bin_dir().join("smpicc")
}

/// Path of `smpirun`.
pub fn smpirun() -> PathBuf {
    bin_dir().join("smpirun")
}

/// A directory private to this test process (`$TMPDIR/e2e-tests-<pid>`).
/// Directories left by earlier test processes that have exited are removed
/// when it is created.
pub fn scratch_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let tmp = std::env::temp_dir();
        if let Ok(entries) = std::fs::read_dir(&tmp) {
            for e in entries.flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                if let Some(pid) = name.strip_prefix("e2e-tests-") {
                    if pid.parse::<u32>().is_ok() && !Path::new("/proc").join(pid).exists() {
                        let _ = std::fs::remove_dir_all(e.path());
                    }
                }
            }
        }
        let dir = tmp.join(format!("e2e-tests-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("cannot create the scratch directory");
        dir
    })
}

/// A fresh path in the scratch directory: `<scratch>/<n>-<name>`.
pub fn scratch_path(name: &str) -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    scratch_dir().join(format!("{}-{name}", N.fetch_add(1, Ordering::Relaxed)))
}

/// Writes `contents` to a fresh scratch file named after `name`; returns its path.
pub fn write_scratch(name: &str, contents: &str) -> PathBuf {
    let p = scratch_path(name);
    std::fs::write(&p, contents).expect("cannot write a scratch file");
    p
}

/// A platform of two hosts `h0`, `h1` (1 Gf each) joined by one link `l` of the given
/// bandwidth, latency and sharing policy (SimGrid units, e.g. `"1GBps"`, `"10us"`); the route
/// uses the link's `_UP` half when it is SPLITDUPLEX. Returns the scratch file's path.
pub fn two_host_platform(bandwidth: &str, latency: &str, policy: &str) -> PathBuf {
    let route_link = if policy == "SPLITDUPLEX" { "l_UP" } else { "l" };
    write_scratch(
        "two_hosts.toml",
        &format!(
            r#"# two hosts, one link
routing = "full"

[[host]]
id = "h0"
speed = "1Gf"

[[host]]
id = "h1"
speed = "1Gf"

[[link]]
id = "l"
bandwidth = "{bandwidth}"
latency = "{latency}"
sharing_policy = "{policy}"

[[route]]
src = "h0"
dst = "h1"
links = ["{route_link}"]
"#
        ),
    )
}

/// Compiles `apps/<name>.c` (see [`build_c`]).
pub fn build_app(name: &str) -> PathBuf {
    build_c(&apps_dir().join(format!("{name}.c")))
}

/// Compiles a C file with `smpicc -O2 -Wall <file> -lm -o <scratch>/<stem>`,
/// once per test process (later calls return the cached program). Panics with
/// the compiler output if it fails.
pub fn build_c(source: &Path) -> PathBuf {
    static BUILT: Mutex<BTreeMap<PathBuf, PathBuf>> = Mutex::new(BTreeMap::new());
    // Compiling under the lock: concurrent tests wait instead of compiling twice.
    let mut built = BUILT.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(p) = built.get(source) {
        return p.clone();
    }
    assert!(source.exists(), "C source {} is missing", source.display());
    let stem = source
        .file_stem()
        .expect("a file name")
        .to_string_lossy()
        .into_owned();
    // Two sources may share a file name (apps/pingpong.c and a pingpong.c
    // elsewhere): the n-th program built gets its own name.
    let out = scratch_dir().join(if built.values().any(|p| p.ends_with(&stem)) {
        format!("{stem}-{}", built.len())
    } else {
        stem
    });
    let mut cmd = Command::new(smpicc());
    cmd.arg("-O2")
        .arg("-Wall")
        .arg(source)
        .arg("-lm")
        .arg("-o")
        .arg(&out);
    let r = run_command(cmd, DEFAULT_TIMEOUT);
    assert!(
        r.code == Some(0) && out.exists(),
        "smpicc failed to build {}\n{}",
        source.display(),
        r.describe()
    );
    built.insert(source.to_path_buf(), out.clone());
    out
}

/// Compiles `sources` with one of our compiler drivers (`smpicxx`,
/// `smpif90`, `smpiff`, ...) and `args`, into a fresh scratch program named
/// `name`. Panics with the compiler output if it fails. Unlike [`build_c`],
/// nothing is cached: each call compiles.
pub fn build_with(tool: &str, sources: &[&Path], args: &[&str], name: &str) -> PathBuf {
    let out = scratch_path(name);
    let mut cmd = Command::new(bin_dir().join(tool));
    cmd.args(args).args(sources).arg("-o").arg(&out);
    let r = run_command(cmd, DEFAULT_TIMEOUT);
    assert!(
        r.code == Some(0) && out.exists(),
        "{tool} failed to build {name}\n{}",
        r.describe()
    );
    out
}

/// What a finished process produced.
#[derive(Debug)]
pub struct RunOutput {
    /// The command line, for messages.
    pub command: String,
    /// Exit status.
    pub status: ExitStatus,
    /// Exit code (`None` if killed by a signal).
    pub code: Option<i32>,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
    /// The parsed `--json` file, when [`Smpirun::json`] was asked and the file exists.
    pub json: Option<serde_json::Value>,
    /// Wall-clock duration of the run.
    pub wall: Duration,
}

impl RunOutput {
    /// The command, status and both outputs, for failure messages.
    pub fn describe(&self) -> String {
        format!(
            "command: {}\nstatus: {} (wall {:.2} s)\n--- stdout ---\n{}\n--- stderr ---\n{}\n---",
            self.command,
            self.status,
            self.wall.as_secs_f64(),
            truncate(&self.stdout),
            truncate(&self.stderr)
        )
    }

    /// Panics unless the process exited with code 0.
    #[track_caller]
    pub fn assert_success(&self) -> &Self {
        assert_eq!(self.code, Some(0), "expected exit code 0\n{}", self.describe());
        self
    }

    /// Panics unless the process exited with code 0 and the last line of
    /// stdout is `OK` (the apps' self-check).
    #[track_caller]
    pub fn assert_ok(&self) -> &Self {
        self.assert_success();
        assert_eq!(
            self.stdout.lines().last(),
            Some("OK"),
            "expected OK as the last line of stdout\n{}",
            self.describe()
        );
        self
    }

    /// Panics unless the process failed: non-zero exit code or killed by a signal.
    #[track_caller]
    pub fn assert_failure(&self) -> &Self {
        assert_ne!(
            self.code,
            Some(0),
            "expected a failure (non-zero exit code)\n{}",
            self.describe()
        );
        self
    }

    /// Panics unless stderr contains every one of `needles`.
    #[track_caller]
    pub fn assert_stderr_has(&self, needles: &[&str]) -> &Self {
        for n in needles {
            assert!(
                self.stderr.contains(n),
                "expected {n:?} on stderr\n{}",
                self.describe()
            );
        }
        self
    }

    /// Lines of stdout starting with `prefix`.
    pub fn lines_starting_with<'a>(&'a self, prefix: &str) -> impl Iterator<Item = &'a str> + 'a {
        let prefix = prefix.to_string();
        self.stdout.lines().filter(move |l| l.starts_with(&prefix))
    }

    /// The `--json` summary; panics if there is none.
    #[track_caller]
    pub fn json(&self) -> &serde_json::Value {
        self.json
            .as_ref()
            .unwrap_or_else(|| panic!("no --json summary was written\n{}", self.describe()))
    }
}

fn truncate(s: &str) -> String {
    const MAX: usize = 20_000;
    if s.len() <= MAX {
        return s.to_string();
    }
    let mut cut = s.len() - MAX;
    while !s.is_char_boundary(cut) {
        cut += 1;
    }
    format!("[... {cut} bytes cut ...]\n{}", &s[cut..])
}

/// Runs `cmd` with stdout and stderr captured; kills it (and its process
/// group) and panics with the output so far if it runs longer than `timeout`.
pub fn run_command(mut cmd: Command, timeout: Duration) -> RunOutput {
    let command = format!("{cmd:?}");
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // its own process group, so that a timeout kills its children too
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    let start = Instant::now();
    let mut child = cmd
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {command}: {e}"));
    let reader = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = pipe.read_to_end(&mut buf);
            String::from_utf8_lossy(&buf).into_owned()
        })
    };
    let out = reader(Box::new(child.stdout.take().expect("piped stdout")));
    let err = reader(Box::new(child.stderr.take().expect("piped stderr")));
    let status = loop {
        if let Some(s) = child.try_wait().expect("try_wait on the child") {
            break s;
        }
        if start.elapsed() > timeout {
            let _ = Command::new("kill")
                .args(["-KILL", "--", &format!("-{}", child.id())])
                .status();
            let _ = child.kill();
            let _ = child.wait();
            let stdout = out.join().unwrap_or_default();
            let stderr = err.join().unwrap_or_default();
            panic!(
                "timeout: killed after {:.1} s (nothing may hang)\ncommand: {command}\n--- stdout ---\n{}\n\
                 --- stderr ---\n{}\n---",
                timeout.as_secs_f64(),
                truncate(&stdout),
                truncate(&stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let wall = start.elapsed();
    RunOutput {
        command,
        status,
        code: status.code(),
        stdout: out.join().expect("stdout reader"),
        stderr: err.join().expect("stderr reader"),
        json: None,
        wall,
    }
}

/// One `smpirun` invocation: options, then the program and its arguments.
///
/// ```no_run
/// use e2e_tests::*;
/// let out = Smpirun::new(build_app("ring"))
///     .platform(platform("cluster_4.toml"))
///     .np(4)
///     .cfg("smpi/simulate-computation:no")
///     .json()
///     .run();
/// out.assert_ok();
/// ```
#[derive(Debug)]
pub struct Smpirun {
    options: Vec<OsString>,
    program: PathBuf,
    program_args: Vec<OsString>,
    json: Option<PathBuf>,
    timeout: Duration,
}

impl Smpirun {
    /// A run of `program` (add at least a platform and usually `np`).
    pub fn new(program: impl AsRef<Path>) -> Self {
        Smpirun {
            options: Vec::new(),
            program: program.as_ref().to_path_buf(),
            program_args: Vec::new(),
            json: None,
            timeout: DEFAULT_TIMEOUT,
        }
    }

    /// `-platform <file>`.
    pub fn platform(self, file: impl AsRef<Path>) -> Self {
        self.opt("-platform").opt(file.as_ref())
    }

    /// `-np <n>`.
    pub fn np(self, n: usize) -> Self {
        self.opt("-np").opt(n.to_string())
    }

    /// `-hostfile <file>`.
    pub fn hostfile(self, file: impl AsRef<Path>) -> Self {
        self.opt("-hostfile").opt(file.as_ref())
    }

    /// `--cfg=<key:value>`.
    pub fn cfg(self, key_value: &str) -> Self {
        self.opt(format!("--cfg={key_value}"))
    }

    /// Any smpirun option (placed before the program).
    pub fn opt(mut self, o: impl Into<OsString>) -> Self {
        self.options.push(o.into());
        self
    }

    /// Arguments of the program.
    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        self.program_args.extend(args.into_iter().map(Into::into));
        self
    }

    /// Asks for `--json <scratch file>`; the result lands in [`RunOutput::json`].
    pub fn json(mut self) -> Self {
        self.json = Some(scratch_path("summary.json"));
        self
    }

    /// Overrides [`DEFAULT_TIMEOUT`].
    pub fn timeout(mut self, t: Duration) -> Self {
        self.timeout = t;
        self
    }

    /// Runs smpirun (from the scratch directory) and returns what it produced.
    pub fn run(self) -> RunOutput {
        let mut cmd = Command::new(smpirun());
        cmd.current_dir(scratch_dir());
        cmd.args(&self.options);
        if let Some(j) = &self.json {
            cmd.arg("--json").arg(j);
        }
        cmd.arg(&self.program).args(&self.program_args);
        let mut out = run_command(cmd, self.timeout);
        if let Some(j) = &self.json {
            if let Ok(text) = std::fs::read_to_string(j) {
                let v = serde_json::from_str(&text)
                    .unwrap_or_else(|e| panic!("--json output is not JSON: {e}\n{text}\n{}", out.describe()));
                out.json = Some(v);
            }
        }
        out
    }
}

/// The `key=value` tokens of a line, e.g. `pingpong size=1 rtt=2.0e-05` →
/// `{size: "1", rtt: "2.0e-05"}` (other tokens are ignored).
pub fn fields(line: &str) -> BTreeMap<&str, &str> {
    line.split_whitespace()
        .filter_map(|t| t.split_once('='))
        .collect()
}

/// The value of `key=<float>` in `line`; panics if missing or not a number.
#[track_caller]
pub fn field_f64(line: &str, key: &str) -> f64 {
    let v = fields(line)
        .get(key)
        .copied()
        .unwrap_or_else(|| panic!("no `{key}=` in line {line:?}"));
    v.parse()
        .unwrap_or_else(|_| panic!("`{key}={v}` is not a number in line {line:?}"))
}

/// |a − b| / |b| (or |a| when b = 0).
pub fn rel_diff(a: f64, b: f64) -> f64 {
    if b == 0.0 {
        a.abs()
    } else {
        ((a - b) / b).abs()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_parse_key_value_tokens() {
        let f = fields("pingpong size=1 iters=2 rtt=4.0e-06 one_way=2.0e-06 word");
        assert_eq!(f.get("size"), Some(&"1"));
        assert_eq!(f.get("rtt"), Some(&"4.0e-06"));
        assert_eq!(f.len(), 4);
        assert_eq!(field_f64("x time=1.5e-3 s", "time"), 1.5e-3);
    }

    #[test]
    fn run_command_captures_output_and_status() {
        let mut c = Command::new("sh");
        c.args(["-c", "echo out; echo err >&2; exit 3"]);
        let r = run_command(c, Duration::from_secs(10));
        assert_eq!(r.code, Some(3));
        assert_eq!(r.stdout, "out\n");
        assert_eq!(r.stderr, "err\n");
    }

    #[test]
    fn run_command_kills_after_the_timeout() {
        let start = Instant::now();
        let r = std::panic::catch_unwind(|| {
            let mut c = Command::new("sh");
            c.args(["-c", "echo started; sleep 30; echo never"]);
            run_command(c, Duration::from_millis(300))
        });
        let msg = *r
            .expect_err("must panic")
            .downcast::<String>()
            .expect("a formatted message");
        assert!(msg.contains("timeout") && msg.contains("started"), "{msg}");
        assert!(start.elapsed() < Duration::from_secs(10));
    }

    #[test]
    fn rel_diff_is_relative() {
        assert!((rel_diff(101.0, 100.0) - 0.01).abs() < 1e-12);
        assert_eq!(rel_diff(0.5, 0.0), 0.5);
    }
}
