//! `smpi-study run --executor slurm` against a real single-node Slurm that the test starts:
//! Debian's `slurm-wlm` and `munge` (installed with apt-get when absent and we are root;
//! otherwise the test is skipped with a message), `munged` with its own key, socket and log
//! under a temporary folder, a minimal `slurm.conf` naming this host with its CPU count
//! (`select/cons_tres`, `proctrack/linuxproc`, `task/none`, state and spool directories in
//! the folder, free non-default ports, `SlurmUser=root`), `slurmctld -D` and `slurmd -D`.
//! A 4-point study is submitted as one job array and gathers 4 rows within seconds; with 2
//! rows removed, a resubmission runs only those 2. The daemons are stopped by a drop guard,
//! whatever happens. The local executor is tested in `study/tests/study.rs`.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use e2e_tests::{bin_dir, build_app, run_command, scratch_path};

/// The daemons this test started, stopped (TERM, then KILL) when dropped.
struct Daemons {
    children: Vec<(&'static str, Child)>,
    dir: PathBuf,
}

impl Daemons {
    fn start(&mut self, name: &'static str, cmd: &mut Command) {
        let log = std::fs::File::create(self.dir.join(format!("{name}.out"))).expect("daemon log");
        let err = log.try_clone().expect("daemon log");
        let child = cmd
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(err)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {name}: {e}"));
        self.children.push((name, child));
    }

    /// The daemon's output so far (for failure messages).
    fn logs(&self) -> String {
        let mut s = String::new();
        for name in ["munged", "slurmctld", "slurmd"] {
            let t = std::fs::read_to_string(self.dir.join(format!("{name}.out"))).unwrap_or_default();
            let lines: Vec<&str> = t.lines().collect();
            s.push_str(&format!(
                "--- {name} ---\n{}\n",
                lines[lines.len().saturating_sub(15)..].join("\n")
            ));
        }
        s
    }
}

impl Drop for Daemons {
    fn drop(&mut self) {
        // slurmd first, munged last (the others authenticate through it).
        while let Some((name, mut child)) = self.children.pop() {
            let _ = Command::new("kill")
                .args(["-TERM", &child.id().to_string()])
                .status();
            let t = Instant::now();
            while t.elapsed() < Duration::from_secs(10) {
                if let Ok(Some(_)) = child.try_wait() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            if let Ok(None) = child.try_wait() {
                eprintln!("{name} ignored SIGTERM: killing it");
                let _ = child.kill();
                let _ = child.wait();
            }
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn have(path: &str) -> bool {
    Path::new(path).exists()
}

fn slurm_installed() -> bool {
    [
        "/usr/sbin/slurmctld",
        "/usr/sbin/slurmd",
        "/usr/sbin/munged",
        "/usr/bin/sbatch",
        "/usr/bin/squeue",
    ]
    .iter()
    .all(|p| have(p))
        && (have("/usr/sbin/mungekey") || have("/usr/sbin/create-munge-key"))
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

/// Installs slurm-wlm and munge with apt-get (root only); false if we may not.
fn ensure_slurm() -> bool {
    if slurm_installed() {
        return true;
    }
    if !is_root() || !have("/usr/bin/apt-get") {
        eprintln!("skipped: Slurm (slurm-wlm, munge) is not installed and we are not root with apt-get to install it");
        return false;
    }
    let install = || {
        let mut c = Command::new("apt-get");
        c.env("DEBIAN_FRONTEND", "noninteractive").args([
            "install",
            "-y",
            "--no-install-recommends",
            "slurm-wlm",
            "munge",
        ]);
        run_command(c, Duration::from_secs(900))
    };
    let mut out = install();
    if !out.status.success() {
        let mut u = Command::new("apt-get");
        u.arg("update");
        run_command(u, Duration::from_secs(600));
        out = install();
    }
    assert!(
        out.status.success(),
        "apt-get install slurm-wlm munge failed\n{}",
        out.describe()
    );
    assert!(
        slurm_installed(),
        "slurm-wlm and munge installed, but their programs are missing"
    );
    true
}

fn short_hostname() -> String {
    let h = Command::new("hostname")
        .arg("-s")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .filter(|h| !h.is_empty());
    h.unwrap_or_else(|| {
        std::fs::read_to_string("/proc/sys/kernel/hostname")
            .expect("a hostname")
            .trim()
            .split('.')
            .next()
            .unwrap()
            .to_string()
    })
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

fn wait_for(what: &str, d: &Daemons, timeout: Duration, mut ok: impl FnMut() -> bool) {
    let t = Instant::now();
    while !ok() {
        assert!(
            t.elapsed() < timeout,
            "{what}: not ready after {timeout:?}\n{}",
            d.logs()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Starts munged, slurmctld and slurmd; returns the guard and the slurm.conf path.
fn start_slurm() -> (Daemons, PathBuf) {
    let dir = std::env::temp_dir().join(format!("e2e-slurm-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    for sub in ["", "state", "spool"] {
        std::fs::create_dir_all(dir.join(sub)).expect("slurm scratch dirs");
    }
    // munged wants its socket's directory reachable by all, not writable by others.
    let _ = Command::new("chmod").arg("711").arg(&dir).status();
    let mut d = Daemons {
        children: Vec::new(),
        dir: dir.clone(),
    };
    let key = dir.join("munge.key");
    let made = if have("/usr/sbin/mungekey") {
        Command::new("mungekey").arg("-c").arg("-k").arg(&key).status()
    } else {
        Command::new("/usr/sbin/create-munge-key").arg("-f").status()
    };
    assert!(
        made.map(|s| s.success()).unwrap_or(false) && key.exists(),
        "cannot create the munge key"
    );
    let socket = dir.join("munge.socket");
    d.start(
        "munged",
        Command::new("munged")
            .args(["-F", "--force"])
            .arg(format!("--socket={}", socket.display()))
            .arg(format!("--key-file={}", key.display()))
            .arg(format!("--log-file={}", dir.join("munged.log").display()))
            .arg(format!("--pid-file={}", dir.join("munged.pid").display()))
            .arg(format!("--seed-file={}", dir.join("munged.seed").display())),
    );
    wait_for("munged", &d, Duration::from_secs(20), || socket.exists());

    let host = short_hostname();
    let cpus = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    let (ctld_port, slurmd_port) = (free_port(), free_port());
    let p = |s: &str| dir.join(s).display().to_string();
    let conf = format!(
        "# Written by tests/tests/e2e/study.rs: a one-node Slurm for one test.\n\
         ClusterName=e2estudy\n\
         SlurmctldHost={host}(127.0.0.1)\n\
         SlurmctldPort={ctld_port}\n\
         SlurmdPort={slurmd_port}\n\
         AuthType=auth/munge\n\
         AuthInfo=socket={sock}\n\
         CredType=cred/munge\n\
         SlurmUser=root\n\
         SlurmdUser=root\n\
         StateSaveLocation={state}\n\
         SlurmdSpoolDir={spool}\n\
         SlurmctldPidFile={ctldpid}\n\
         SlurmdPidFile={dpid}\n\
         ProctrackType=proctrack/linuxproc\n\
         TaskPlugin=task/none\n\
         SelectType=select/cons_tres\n\
         SelectTypeParameters=CR_Core\n\
         SchedulerType=sched/backfill\n\
         ReturnToService=2\n\
         MpiDefault=none\n\
         JobAcctGatherType=jobacct_gather/none\n\
         AccountingStorageType=accounting_storage/none\n\
         JobCompType=jobcomp/none\n\
         SwitchType=switch/none\n\
         NodeName={host} NodeAddr=127.0.0.1 CPUs={cpus} State=UNKNOWN\n\
         PartitionName=study Nodes={host} Default=YES MaxTime=INFINITE State=UP\n",
        sock = socket.display(),
        state = p("state"),
        spool = p("spool"),
        ctldpid = p("slurmctld.pid"),
        dpid = p("slurmd.pid"),
    );
    let conf_path = dir.join("slurm.conf");
    std::fs::write(&conf_path, conf).expect("slurm.conf");
    d.start(
        "slurmctld",
        Command::new("slurmctld")
            .args(["-D", "-i", "-f"])
            .arg(&conf_path)
            .env("SLURM_CONF", &conf_path),
    );
    d.start(
        "slurmd",
        Command::new("slurmd")
            .args(["-D", "-N", &host, "-f"])
            .arg(&conf_path)
            .env("SLURM_CONF", &conf_path),
    );
    wait_for("the node (sinfo says idle)", &d, Duration::from_secs(60), || {
        Command::new("sinfo")
            .args(["-h", "-o", "%t"])
            .env("SLURM_CONF", &conf_path)
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "idle")
            .unwrap_or(false)
    });
    (d, conf_path)
}

fn rows(out: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(out.join("results.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON row"))
        .collect()
}

#[test]
fn slurm_job_array_gathers_rows_and_resubmits_missing_ones() {
    let study_exe = bin_dir().join("smpi-study");
    assert!(
        study_exe.exists(),
        "{} not found: cargo build --release -p smpi-study",
        study_exe.display()
    );
    if !ensure_slurm() {
        return;
    }
    let pingpong = build_app("pingpong");
    let (daemons, conf) = start_slurm();

    let dir = scratch_path("slurm-study");
    std::fs::create_dir_all(&dir).unwrap();
    let study = dir.join("pp.toml");
    std::fs::write(
        &study,
        format!(
            r#"name = "slurm4"
np = 2
placement = "spread"
[cfg]
"smpi/simulate-computation" = "no"
[program]
path = "{}"
args = ["-i", "3", "{{size}}"]
[program.params]
size = "1"
[platform]
kind = "flat"
hosts = 4
bw = "1GBps"
lat = "10us"
[[axis]]
name = "size"
key = "param.size"
values = ["1k", "1M"]
[[axis]]
name = "bandwidth"
key = "platform.bw"
values = ["1GBps", "10GBps"]
"#,
            pingpong.display()
        ),
    )
    .unwrap();
    let out = dir.join("out");
    let submit = || {
        let mut c = Command::new(&study_exe);
        c.args(["run"])
            .arg(&study)
            .arg("-o")
            .arg(&out)
            .args([
                "--executor",
                "slurm",
                "--slurm-poll",
                "0.5",
                "--slurm-timeout",
                "120",
            ])
            .env("SLURM_CONF", &conf);
        run_command(c, Duration::from_secs(180))
    };

    let t = Instant::now();
    let r = submit();
    let took = t.elapsed();
    assert!(r.status.success(), "{}\n{}", r.describe(), daemons.logs());
    r.assert_stderr_has(&[
        "as a Slurm job array",
        "submitted Slurm job array",
        "4 rows gathered",
    ]);
    let rs = rows(&out);
    assert_eq!(rs.len(), 4, "4 rows\n{}", r.describe());
    for row in &rs {
        assert_eq!(row["status"], "ok", "{row}");
        assert_eq!(row["executor"], "slurm");
        assert!(
            row["slurm_task"].as_str().is_some_and(|t| t.contains('_')),
            "{row}"
        );
        assert!(row["metrics"]["one_way"].as_f64().is_some(), "{row}");
    }
    let tasks = std::fs::read_to_string(out.join("slurm/submit-0/tasks.txt")).unwrap();
    assert_eq!(tasks.lines().count(), 4);
    assert!(took < Duration::from_secs(60), "a 4-task array took {took:?}");
    eprintln!("4-task Slurm array: {:.1} s", took.as_secs_f64());

    // Two rows lost: only those two are submitted again.
    let text = std::fs::read_to_string(out.join("results.jsonl")).unwrap();
    let kept: Vec<&str> = text.lines().take(2).collect();
    std::fs::write(out.join("results.jsonl"), kept.join("\n") + "\n").unwrap();
    let r = submit();
    assert!(r.status.success(), "{}\n{}", r.describe(), daemons.logs());
    r.assert_stderr_has(&["2 already done, 2 to run", "(2 tasks;"]);
    let again = std::fs::read_to_string(out.join("slurm/submit-1/tasks.txt")).unwrap();
    assert_eq!(again.lines().count(), 2);
    let ids = |rs: &[serde_json::Value]| {
        let mut v: Vec<String> = rs
            .iter()
            .map(|r| r["run_id"].as_str().unwrap().to_string())
            .collect();
        v.sort();
        v
    };
    assert_eq!(ids(&rows(&out)), ids(&rs), "the same 4 runs, once each");
    drop(daemons);
    let _ = std::fs::remove_dir_all(&dir);
}
