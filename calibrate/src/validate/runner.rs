//! Running the programs a validation compares: a command in its own working
//! directory and process group, with a timeout, its output captured; the
//! randomized plan of real runs; the environment of real runs (the OpenBLAS
//! variables of `scripts/calibrate.sh`); and what the machine looked like
//! while it ran (load average, and the speed `calib_probe` measures before
//! each run).

use std::io::Read as _;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::validate::analysis::{CalibrationProbe, ProbeRun};
use crate::validate::hpl::HplConfig;

/// What a finished (or killed) command left.
#[derive(Debug, Clone, PartialEq)]
pub struct Finished {
    /// Exit code (`None`: killed by a signal or by the timeout).
    pub code: Option<i32>,
    /// True when the timeout killed it.
    pub timed_out: bool,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
    /// Wall time (s).
    pub wall: f64,
}

impl Finished {
    /// True for exit code 0 within the time limit.
    pub fn success(&self) -> bool {
        self.code == Some(0) && !self.timed_out
    }
}

/// The last `lines` lines of `s` (what a report shows of a failed run).
pub fn tail(s: &str, lines: usize) -> String {
    let v: Vec<&str> = s.lines().collect();
    v[v.len().saturating_sub(lines)..].join("\n")
}

fn drain(mut r: impl std::io::Read + Send + 'static) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = r.read_to_end(&mut buf);
        String::from_utf8_lossy(&buf).into_owned()
    })
}

/// Runs `cmd` in `dir` in a process group of its own and waits at most
/// `timeout`; on timeout the whole group (mpirun and its ranks) gets SIGTERM,
/// then SIGKILL. A command that cannot start is an error; a command that fails
/// is a [`Finished`] with its code.
pub fn run(mut cmd: Command, dir: &Path, timeout: Duration) -> anyhow::Result<Finished> {
    cmd.current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let shown = format!("{cmd:?}");
    let start = Instant::now();
    let mut child = cmd
        .spawn()
        .map_err(|e| anyhow::anyhow!("cannot start {shown}: {e}"))?;
    let out = drain(child.stdout.take().expect("piped"));
    let err = drain(child.stderr.take().expect("piped"));
    let pgid = child.id();
    let mut timed_out = false;
    let status = loop {
        if let Some(s) = child.try_wait()? {
            break s;
        }
        if start.elapsed() > timeout {
            timed_out = true;
            signal_group(pgid, "TERM");
            let t = Instant::now();
            loop {
                if child.try_wait()?.is_some() {
                    break;
                }
                if t.elapsed() > Duration::from_secs(5) {
                    signal_group(pgid, "KILL");
                    break;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            break child.wait()?;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let wall = start.elapsed().as_secs_f64();
    Ok(Finished {
        code: status.code(),
        timed_out,
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
        wall,
    })
}

/// Sends a signal to a process group (through kill(1): no libc binding needed
/// for this one call).
fn signal_group(pgid: u32, sig: &str) {
    let _ = Command::new("kill")
        .arg(format!("-{sig}"))
        .arg("--")
        .arg(format!("-{pgid}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

/// The 1-, 5- and 15-minute load averages (`/proc/loadavg`).
pub fn loadavg() -> Option<[f64; 3]> {
    let mut s = String::new();
    std::fs::File::open("/proc/loadavg")
        .ok()?
        .read_to_string(&mut s)
        .ok()?;
    let v: Vec<f64> = s
        .split_whitespace()
        .take(3)
        .filter_map(|x| x.parse().ok())
        .collect();
    (v.len() == 3).then(|| [v[0], v[1], v[2]])
}

/// One real run to do: configuration index and repetition number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct PlannedRun {
    /// Index into the configuration list.
    pub config: usize,
    /// Repetition of that configuration (0-based).
    pub rep: usize,
}

/// Every run of every configuration in one seeded random order (Fisher–Yates
/// on the whole list): a drift of the machine over the session then spreads
/// over all configurations instead of biasing the ones run last.
pub fn plan(configs: usize, runs: usize, seed: u64) -> Vec<PlannedRun> {
    let mut v: Vec<PlannedRun> = (0..configs)
        .flat_map(|config| (0..runs).map(move |rep| PlannedRun { config, rep }))
        .collect();
    crate::synth::shuffle(&mut v, &mut models::NoiseRng::new(seed, 0x706c_616e));
    v
}

/// How real runs are launched.
#[derive(Debug, Clone)]
pub struct RealLauncher {
    /// The launcher and its options before the program: by default
    /// `mpirun [--allow-run-as-root] --mca pml ob1 --mca btl self,vader
    /// --bind-to core -np {np}` (`{np}` is replaced by P·Q, `{seed}` by the
    /// run's seed).
    pub command: Vec<String>,
    /// The program (the real `xhpl`).
    pub program: PathBuf,
    /// Keep `OPENBLAS_CORETYPE` and `OPENBLAS_L2_SIZE` (by default both are
    /// unset for the runs, as `scripts/calibrate.sh` does).
    pub keep_blas_env: bool,
    /// `nice -n` value (0: none).
    pub nice: i32,
}

/// The default launcher words: those of `scripts/calibrate.sh`.
pub fn default_mpirun(root: bool) -> Vec<String> {
    let mut v = vec!["mpirun".to_string()];
    if root {
        v.push("--allow-run-as-root".into());
    }
    v.extend(
        [
            "--mca",
            "pml",
            "ob1",
            "--mca",
            "btl",
            "self,vader",
            "--bind-to",
            "core",
            "-np",
            "{np}",
        ]
        .iter()
        .map(|s| s.to_string()),
    );
    v
}

/// True when running as root (`/proc/self/status`'s effective uid).
pub fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .and_then(|l| l.split_whitespace().nth(2).map(|u| u == "0"))
        })
        .unwrap_or(false)
}

/// The OpenBLAS variables a real run changes: `(name, value before)`.
pub const BLAS_ENV_UNSET: [&str; 2] = ["OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"];

impl RealLauncher {
    /// The command of one run (in its directory, where HPL.dat is).
    pub fn command(&self, np: u32, seed: u64) -> Command {
        self.command_of(&self.program, &[], np, seed)
    }

    /// The same launcher, environment and binding for another program (the
    /// machine probe).
    pub fn command_of(&self, program: &Path, args: &[String], np: u32, seed: u64) -> Command {
        let words: Vec<String> = self
            .command
            .iter()
            .map(|w| {
                w.replace("{np}", &np.to_string())
                    .replace("{seed}", &seed.to_string())
            })
            .collect();
        let mut cmd = if self.nice != 0 {
            let mut c = Command::new("nice");
            c.arg("-n").arg(self.nice.to_string()).args(&words);
            c
        } else {
            let mut c = Command::new(&words[0]);
            c.args(&words[1..]);
            c
        };
        cmd.arg(program).args(args);
        if !self.keep_blas_env {
            // Both together: OpenBLAS then picks its kernel from the CPU itself.
            for v in BLAS_ENV_UNSET {
                cmd.env_remove(v);
            }
        }
        cmd.env("OPENBLAS_NUM_THREADS", "1").env("OPENBLAS_VERBOSE", "2");
        cmd
    }

    /// The command as a shell line, for the report.
    pub fn shown(&self, np: u32) -> String {
        let mut s = String::new();
        if !self.keep_blas_env {
            s.push_str("env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE ");
        }
        s.push_str("OPENBLAS_NUM_THREADS=1 OPENBLAS_VERBOSE=2 ");
        if self.nice != 0 {
            s.push_str(&format!("nice -n {} ", self.nice));
        }
        let words: Vec<String> = self
            .command
            .iter()
            .map(|w| w.replace("{np}", &np.to_string()))
            .collect();
        s.push_str(&words.join(" "));
        s.push(' ');
        s.push_str(&self.program.display().to_string());
        s
    }
}

/// The OpenBLAS core named in a run's output (`OPENBLAS_VERBOSE=2` prints
/// `Core: Haswell` once per process).
pub fn blas_core(output: &str) -> Option<String> {
    output
        .lines()
        .find_map(|l| l.trim().strip_prefix("Core:").map(|c| c.trim().to_string()))
        .filter(|c| !c.is_empty())
}

/// Writes HPL.dat for `c` into `dir` with `gen_dat` (apps/hpl/gen_dat.sh),
/// HPL's defaults otherwise; `threshold` ≤ 0 skips the residual check (the
/// simulation's modelled BLAS computes nothing, so it could not pass).
pub fn write_hpl_dat(gen_dat: &Path, dir: &Path, c: &HplConfig, threshold: f64) -> anyhow::Result<()> {
    let mut cmd = Command::new(gen_dat);
    cmd.args(["--n", &c.n.to_string(), "--nb", &c.nb.to_string()])
        .args(["--p", &c.p.to_string(), "--q", &c.q.to_string()])
        .args(["--threshold", &threshold.to_string()])
        .arg("-o")
        .arg(dir.join("HPL.dat"));
    let f = run(cmd, dir, Duration::from_secs(30))?;
    if !f.success() {
        anyhow::bail!("{} failed: {}", gen_dat.display(), tail(&f.stderr, 5));
    }
    Ok(())
}

/// smpirun's `--json` `extrapolated` object (kernel → calls, of_calls, seconds,
/// of_seconds, terms), the terms that went outside in words.
pub fn extrapolated(
    j: &serde_json::Value,
) -> std::collections::BTreeMap<String, super::analysis::Extrapolated> {
    let Some(o) = j.as_object() else {
        return Default::default();
    };
    let num = |v: &serde_json::Value| {
        v.as_f64().map(|x| {
            format!("{x:.4}")
                .trim_end_matches('0')
                .trim_end_matches('.')
                .to_string()
        })
    };
    o.iter()
        .map(|(kernel, e)| {
            let terms: Vec<String> = e["terms"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|t| {
                    let (lo, hi) = (&t["calibrated"][0], &t["calibrated"][1]);
                    let seen = match (num(&t["min_seen"]), num(&t["max_seen"])) {
                        (Some(a), Some(b)) => format!("{a} to {b}"),
                        (Some(a), None) => format!("down to {a}"),
                        (None, Some(b)) => format!("up to {b}"),
                        (None, None) => "outside".into(),
                    };
                    format!(
                        "{}{} {seen}, calibrated {}–{}",
                        t["section"]
                            .as_str()
                            .filter(|s| s.contains('@'))
                            .map_or(String::new(), |s| format!("{s}: ")),
                        t["term"].as_str().unwrap_or("?"),
                        num(lo).unwrap_or_default(),
                        num(hi).unwrap_or_default()
                    )
                })
                .collect();
            let share_of_time = match (e["seconds"].as_f64(), e["of_seconds"].as_f64()) {
                (Some(s), Some(of)) if of > 0.0 => Some(100.0 * s / of),
                (Some(_), Some(_)) => Some(0.0),
                _ => None,
            };
            (
                kernel.clone(),
                super::analysis::Extrapolated {
                    calls: e["calls"].as_u64().unwrap_or(0),
                    of_calls: e["of_calls"].as_u64().unwrap_or(0),
                    share_of_time,
                    outside: terms.join("; "),
                },
            )
        })
        .collect()
}

/// The per-rank Gflop/s of `calib_probe`'s `PROBE_GFLOPS r0 r1 ...` line.
pub fn probe_gflops(stdout: &str) -> Option<Vec<f64>> {
    probe_line(stdout, "PROBE_GFLOPS")
}

/// The per-rank nanoseconds per element of `calib_probe`'s row gather
/// (`PROBE_GATHER_NS r0 r1 ...`; probes built before it print none).
pub fn probe_gather_ns(stdout: &str) -> Option<Vec<f64>> {
    probe_line(stdout, "PROBE_GATHER_NS")
}

/// The positive finite values after `key` on the first line starting with it.
fn probe_line(stdout: &str, key: &str) -> Option<Vec<f64>> {
    let line = stdout.lines().find_map(|l| {
        l.strip_prefix(key)
            .filter(|rest| rest.is_empty() || rest.starts_with(' '))
    })?;
    let v: Vec<f64> = line
        .split_whitespace()
        .map(str::parse)
        .collect::<Result<_, _>>()
        .ok()?;
    (!v.is_empty() && v.iter().all(|g| g.is_finite() && *g > 0.0)).then_some(v)
}

/// Reads a calibration's `machine-probe.tsv` (written by `scripts/calibrate.sh`):
/// a `# calib_probe OPTIONS` line, a header, then `label<TAB>date<TAB>g0 g1 ...`
/// and, from probes that time the row gather, `<TAB>ns0 ns1 ...`.
pub fn read_probe_tsv(path: &Path) -> anyhow::Result<CalibrationProbe> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| anyhow::anyhow!("{}: cannot read it: {e}", path.display()))?;
    let mut probe = CalibrationProbe {
        file: path.display().to_string(),
        ..CalibrationProbe::default()
    };
    for (i, line) in text.lines().enumerate() {
        if let Some(opts) = line.strip_prefix("# calib_probe") {
            probe.args = opts.split_whitespace().map(str::to_string).collect();
            continue;
        }
        if line.starts_with('#') || line.starts_with("when\t") || line.trim().is_empty() {
            continue;
        }
        let f: Vec<&str> = line.split('\t').collect();
        let bad = || {
            anyhow::anyhow!(
                "{}:{}: expected `label<TAB>date<TAB>Gflop/s per rank[<TAB>gather ns per rank]`, found '{line}'",
                path.display(),
                i + 1
            )
        };
        let gflops = matches!(f.len(), 3 | 4)
            .then(|| probe_gflops(&format!("PROBE_GFLOPS {}", f[2])))
            .flatten()
            .ok_or_else(bad)?;
        let gather_ns = match f.get(3) {
            None => Vec::new(),
            Some(ns) => probe_gather_ns(&format!("PROBE_GATHER_NS {ns}")).ok_or_else(bad)?,
        };
        probe.runs.push(ProbeRun {
            when: f[0].to_string(),
            date: f[1].to_string(),
            gflops,
            gather_ns,
        });
    }
    Ok(probe)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probe_lines_and_files_are_read_and_bad_ones_named() {
        let out = "calib_probe: rank 0 core 0 ...\nPROBE_GFLOPS 51.3964 51.1173\n";
        assert_eq!(probe_gflops(out), Some(vec![51.3964, 51.1173]));
        assert_eq!(probe_gflops("PROBE_GFLOPS\n"), None);
        assert_eq!(probe_gflops("PROBE_GFLOPS 1 x\n"), None);
        assert_eq!(probe_gflops("no probe here"), None);
        let both = "PROBE_GFLOPS 50.1 49.9\nPROBE_GATHER_NS 6.35 6.91\n";
        assert_eq!(probe_gflops(both), Some(vec![50.1, 49.9]));
        assert_eq!(probe_gather_ns(both), Some(vec![6.35, 6.91]));
        assert_eq!(probe_gather_ns("PROBE_GFLOPS 50.1 49.9\n"), None);
        let dir = std::env::temp_dir().join(format!("probe-tsv-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("machine-probe.tsv");
        std::fs::write(
            &f,
            "# calib_probe --lda 5000 --k 128\nwhen\tdate\tgflops_per_rank\n\
             before-compute\t2026-11-26T04:00:00Z\t51.2 50.8\nafter-compute\t2026-11-26T04:09:00Z\t49.0 48.0\t7.5 7.7\n",
        )
        .unwrap();
        let p = read_probe_tsv(&f).unwrap();
        assert_eq!(p.args, ["--lda", "5000", "--k", "128"]);
        assert_eq!(p.runs.len(), 2);
        assert_eq!(p.runs[0].gather_ns, Vec::<f64>::new());
        assert_eq!(
            p.runs[1],
            ProbeRun {
                when: "after-compute".into(),
                date: "2026-11-26T04:09:00Z".into(),
                gflops: vec![49.0, 48.0],
                gather_ns: vec![7.5, 7.7],
            }
        );
        std::fs::write(&f, "when\tdate\tgflops_per_rank\nbefore\t2026\tfast\n").unwrap();
        let e = read_probe_tsv(&f).unwrap_err().to_string();
        assert!(e.contains("machine-probe.tsv:2:"), "{e}");
        std::fs::write(
            &f,
            "when\tdate\tgflops_per_rank\tgather_ns_per_rank\nb\t2026\t50 49\tslow\n",
        )
        .unwrap();
        let e = read_probe_tsv(&f).unwrap_err().to_string();
        assert!(e.contains("machine-probe.tsv:2:"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn plan_is_a_seeded_permutation() {
        let a = plan(8, 5, 1);
        assert_eq!(a.len(), 40);
        let mut seen: Vec<(usize, usize)> = a.iter().map(|r| (r.config, r.rep)).collect();
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen.len(), 40);
        assert_eq!(a, plan(8, 5, 1));
        assert_ne!(a, plan(8, 5, 2));
        // Shuffled: not every configuration in a block.
        assert!(a.windows(2).any(|w| w[0].config != w[1].config));
        assert!(a.chunks(5).any(|c| c.iter().any(|r| r.config != c[0].config)));
    }

    #[test]
    fn timeout_kills_and_is_recorded() {
        let dir = std::env::temp_dir();
        let mut c = Command::new("sh");
        c.args(["-c", "echo started; echo oops >&2; sleep 30"]);
        let f = run(c, &dir, Duration::from_millis(300)).unwrap();
        assert!(f.timed_out && !f.success());
        assert_eq!(f.stdout.trim(), "started");
        assert_eq!(tail(&f.stderr, 1), "oops");
        let mut ok = Command::new("sh");
        ok.args(["-c", "exit 3"]);
        let f = run(ok, &dir, Duration::from_secs(10)).unwrap();
        assert_eq!(f.code, Some(3));
        assert!(run(Command::new("/nonexistent/program"), &dir, Duration::from_secs(1)).is_err());
    }

    #[test]
    fn blas_core_and_launcher() {
        assert_eq!(blas_core("x\nCore: Cooperlake\n"), Some("Cooperlake".into()));
        assert_eq!(blas_core("nothing"), None);
        let l = RealLauncher {
            command: default_mpirun(true),
            program: "/x/xhpl".into(),
            keep_blas_env: false,
            nice: 0,
        };
        let s = l.shown(2);
        assert!(
            s.contains("-np 2 /x/xhpl") && s.contains("env -u OPENBLAS_CORETYPE"),
            "{s}"
        );
        let c = l.command(2, 0);
        let envs: Vec<_> = c.get_envs().collect();
        assert!(envs.iter().any(|(k, v)| *k == "OPENBLAS_CORETYPE" && v.is_none()));
        assert!(envs
            .iter()
            .any(|(k, v)| *k == "OPENBLAS_NUM_THREADS" && *v == Some(std::ffi::OsStr::new("1"))));
    }
}
