//! SimGrid's host energy plugin (`--cfg=plugin:host_energy`, `simgrid/plugins/energy.h`), with
//! `apps/energy/`: `energy_load.c` computes different amounts per rank (several ranks on a
//! 4-core host, so a quarter, a half, ... of its cores are busy), waits in barriers and a
//! message across a slow link, reads its host's energy and power mid-run; `energy_mixed.xml`
//! has a host of each profile form (`Idle:Epsilon:AllCores`, `Idle:AllCores`, none) and an
//! idle one.
//!
//! Checked: the end lines (`[date] [host_energy/INFO] Total energy consumption: ...`, one line
//! per host) and the program's mid-run readings are SMPI 3.32's to the printed digit, on
//! SimGrid's `energy_platform.xml` and `energy_cluster.xml` and on `energy_mixed.xml`, under
//! both event orders (when SMPI 3.32 and SimGrid's sources are installed; skipped otherwise);
//! energies computed by hand; the `--json` fields; malformed power properties (the error names
//! the file, host and property); a host without profile asked for its energy (SimGrid's
//! failed assertion); the plugin turned on by the program at time 0 (SMPI's numbers) or later
//! (refused); other plugins refused; the plugin off: no line, no field, the same times;
//! SimGrid's `examples/smpi/energy` (each rank switches pstates with `sg_host_set_pstate`)
//! gives every line of its tesh file.
//!
//! `energy_load.energy_mixed.smpi-3.32.txt` is SMPI 3.32's output for one run, checked even
//! where SMPI is not installed.
//!
//! Two differences from SMPI are left out of the comparison, which compares lines as sets:
//! SimGrid prints its warning for a host without `wattage_per_state` once per sealing of the
//! host (twice in a flat zone), we once; and on a platform of several zones SimGrid prints the
//! per-host lines zone by zone, we by host name (the platform does not keep the zones).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use e2e_tests::{apps_dir, build_c, run_command, scratch_path, write_scratch, RunOutput, Smpirun};

/// SimGrid 3.32's example platforms (see [`e2e_tests::simgrid_examples`]).
fn simgrid_platforms_dir() -> PathBuf {
    e2e_tests::simgrid_examples().join("platforms")
}

fn program() -> PathBuf {
    build_c(&apps_dir().join("energy/energy_load.c"))
}

fn mixed() -> PathBuf {
    apps_dir().join("energy/energy_mixed.xml")
}

/// `energy_load.c` built with SMPI 3.32's smpicc, or `None` (with a message).
fn smpi_program() -> Option<&'static Path> {
    static S: OnceLock<Option<PathBuf>> = OnceLock::new();
    S.get_or_init(|| {
        let version = Command::new("smpirun").arg("-version").output().ok();
        let text = version.map_or(String::new(), |v| {
            String::from_utf8_lossy(&v.stdout).to_string() + &String::from_utf8_lossy(&v.stderr)
        });
        if !text.contains("3.32") {
            eprintln!("skipped: SimGrid SMPI 3.32 (smpirun, smpicc) not installed");
            return None;
        }
        let out = scratch_path("energy_load_smpi");
        let mut cc = Command::new("smpicc");
        cc.arg("-O2")
            .arg(apps_dir().join("energy/energy_load.c"))
            .arg("-o")
            .arg(&out);
        let r = run_command(cc, Duration::from_secs(120));
        if r.code != Some(0) {
            eprintln!("skipped: SMPI's smpicc failed\n{}", r.describe());
            return None;
        }
        Some(out)
    })
    .as_deref()
}

/// SimGrid's example platform `name`, or `None` (with a message) without SimGrid's sources.
fn simgrid_platform(name: &str) -> Option<PathBuf> {
    let p = simgrid_platforms_dir().join(name);
    if !p.exists() {
        eprintln!(
            "skipped: SimGrid 3.32's examples are not in {} (tests/simgrid_examples/fetch.sh)",
            simgrid_platforms_dir().display()
        );
        return None;
    }
    Some(p)
}

/// The lines of stderr that SMPI and we both print: the program's readings and the plugin's
/// lines (not smpirun's own notes and summary), as a set.
fn energy_lines(out: &RunOutput) -> BTreeSet<String> {
    out.stderr
        .lines()
        .filter(|l| !l.starts_with("[smpirun]") && !l.starts_with("smpirun:") && !l.is_empty())
        .map(String::from)
        .collect()
}

fn hostfile(name: &str, hosts: &[&str]) -> PathBuf {
    write_scratch(name, &(hosts.join("\n") + "\n"))
}

/// Runs `energy_load` with SMPI and with us (each `our_cfgs` in turn) on `platform`, one rank
/// per `hosts` entry, and asserts that the lines are the same; returns how many were compared.
fn compare(platform: &Path, hosts: &[&str], args: &[&str], our_cfgs: &[&[&str]]) -> usize {
    let Some(theirs_bin) = smpi_program() else {
        return 0;
    };
    let stem = platform
        .file_stem()
        .map_or("p".into(), |s| s.to_string_lossy().to_string());
    let hf = hostfile(&format!("energy-{stem}-{}.hosts", hosts.len()), hosts);
    let np = hosts.len().to_string();
    let mut cmd = Command::new("smpirun");
    cmd.current_dir(theirs_bin.parent().unwrap_or(Path::new(".")))
        .args(["-np", &np, "-hostfile"])
        .arg(&hf)
        .arg("-platform")
        .arg(platform)
        .args([
            "--cfg=smpi/simulate-computation:no",
            "--cfg=plugin:host_energy",
            "--log=xbt_cfg.thres:warning",
            "--log=smpi_config.thres:warning",
            "--log=smpi.thres:warning",
        ])
        .arg(theirs_bin)
        .args(args);
    let theirs = run_command(cmd, Duration::from_secs(120));
    assert_eq!(theirs.code, Some(0), "SMPI failed\n{}", theirs.describe());
    let expected = energy_lines(&theirs);
    assert!(
        expected
            .iter()
            .any(|l| l.contains("[host_energy/INFO] Total energy consumption: ")),
        "{}",
        theirs.describe()
    );
    for cfgs in our_cfgs {
        let mut run = Smpirun::new(program())
            .platform(platform)
            .hostfile(&hf)
            .np(hosts.len())
            .cfg("smpi/simulate-computation:no")
            .cfg("plugin:host_energy");
        for c in *cfgs {
            run = run.cfg(c);
        }
        let ours = run.args(args).run();
        ours.assert_success();
        let got = energy_lines(&ours);
        let missing: Vec<&String> = expected.difference(&got).collect();
        let extra: Vec<&String> = got.difference(&expected).collect();
        assert!(
            missing.is_empty() && extra.is_empty(),
            "{} {cfgs:?}: lines differ from SMPI 3.32's\nSMPI only:\n{}\nours only:\n{}\n{}",
            platform.display(),
            missing.iter().map(|s| s.as_str()).collect::<Vec<_>>().join("\n"),
            extra.iter().map(|s| s.as_str()).collect::<Vec<_>>().join("\n"),
            ours.describe()
        );
    }
    expected.len()
}

const BOTH_ORDERS: &[&[&str]] = &[&[], &["smpi/event-order:simgrid"]];

#[test]
fn energy_platform_lines_match_smpi() {
    let Some(p) = simgrid_platform("energy_platform.xml") else {
        return;
    };
    // Four ranks on MyHost1 (4 cores), one on MyHost2 (1 core, behind a 100 kB/s link), MyHost3 idle.
    let hosts = ["MyHost1", "MyHost1", "MyHost1", "MyHost1", "MyHost2"];
    let n = compare(&p, &hosts, &["1e8"], BOTH_ORDERS);
    assert!(n == 0 || n > 20, "{n} lines compared");
    // Two ranks: MyHost1 a quarter loaded, MyHost2 fully.
    compare(&p, &["MyHost1", "MyHost2"], &["3e8"], BOTH_ORDERS);
}

#[test]
fn energy_cluster_lines_match_smpi() {
    let Some(p) = simgrid_platform("energy_cluster.xml") else {
        return;
    };
    // Five ranks on a 4-core host: its load is capped at all cores.
    let hosts = ["MyHost1", "MyHost1", "MyHost1", "MyHost1", "MyHost1", "MyHost2"];
    compare(&p, &hosts, &["3e8"], BOTH_ORDERS);
}

#[test]
fn multi_zone_platform_energies_match_smpi() {
    // Three clusters under a Full zone, every host with a profile. SimGrid prints the hosts
    // zone by zone (as it destroys them), we by name: the lines are compared as sets.
    let Some(p) = simgrid_platform("cluster_multi.xml") else {
        return;
    };
    let n = compare(
        &p,
        &["node-0.1core.org", "node-1.2cores.org"],
        &["1e8", "quiet"],
        BOTH_ORDERS,
    );
    assert!(n == 0 || n == 25, "{n} lines compared");
}

#[test]
fn mixed_profiles_match_smpi() {
    // Two-value profile on Duo, an unused Spare, Bare without profile (not asked: "quiet").
    compare(
        &mixed(),
        &["Quad", "Quad", "Duo", "Duo", "Quad"],
        &["1e8"],
        BOTH_ORDERS,
    );
    let n = compare(
        &mixed(),
        &["Quad", "Quad", "Duo", "Duo", "Bare", "Quad"],
        &["1e8", "quiet"],
        BOTH_ORDERS,
    );
    assert!(n == 0 || n == 6, "{n} lines compared");
}

#[test]
fn plugin_started_by_the_program_at_time_zero_gives_smpis_numbers() {
    let Some(p) = simgrid_platform("energy_platform.xml") else {
        return;
    };
    let Some(theirs_bin) = smpi_program() else { return };
    let hosts = ["MyHost1", "MyHost1", "MyHost2"];
    let hf = hostfile("energy-init.hosts", &hosts);
    let mut cmd = Command::new("smpirun");
    cmd.current_dir(theirs_bin.parent().unwrap_or(Path::new(".")))
        .args(["-np", "3", "-hostfile"])
        .arg(&hf)
        .arg("-platform")
        .arg(&p)
        .args([
            "--cfg=smpi/simulate-computation:no",
            "--cfg=plugin:host_energy",
            "--log=xbt_cfg.thres:warning",
            "--log=smpi_config.thres:warning",
        ])
        .arg(theirs_bin)
        .arg("1e8");
    let theirs = run_command(cmd, Duration::from_secs(120));
    assert_eq!(theirs.code, Some(0), "{}", theirs.describe());
    // No --cfg=plugin: the program calls sg_host_energy_plugin_init() first.
    let ours = Smpirun::new(program())
        .platform(&p)
        .hostfile(&hf)
        .np(3)
        .cfg("smpi/simulate-computation:no")
        .args(["1e8", "init"])
        .run();
    ours.assert_success();
    assert_eq!(energy_lines(&ours), energy_lines(&theirs), "{}", ours.describe());
}

#[test]
fn recorded_smpi_lines_on_energy_mixed_are_ours() {
    // apps/energy/energy_load.energy_mixed.smpi-3.32.txt: SMPI 3.32's stderr lines (sorted,
    // without duplicates) for this run, recorded once; checked even where SMPI is absent.
    let recorded = std::fs::read_to_string(apps_dir().join("energy/energy_load.energy_mixed.smpi-3.32.txt"))
        .expect("the recorded SMPI output");
    let expected: BTreeSet<String> = recorded.lines().map(String::from).collect();
    assert_eq!(expected.len(), 28);
    let hf = hostfile("energy-recorded.hosts", &["Quad", "Quad", "Duo", "Duo", "Quad"]);
    for cfgs in BOTH_ORDERS {
        let mut run = Smpirun::new(program())
            .platform(mixed())
            .hostfile(&hf)
            .np(5)
            .cfg("smpi/simulate-computation:no")
            .cfg("plugin:host_energy");
        for c in *cfgs {
            run = run.cfg(c);
        }
        let ours = run.args(["1e8"]).run();
        ours.assert_success();
        assert_eq!(energy_lines(&ours), expected, "{cfgs:?}\n{}", ours.describe());
    }
    // Started by the program at time 0 instead: the same lines (the warning too, from no rank).
    let ours = Smpirun::new(program())
        .platform(mixed())
        .hostfile(&hf)
        .np(5)
        .cfg("smpi/simulate-computation:no")
        .args(["1e8", "init"])
        .run();
    ours.assert_success();
    assert_eq!(energy_lines(&ours), expected, "init\n{}", ours.describe());
}

#[test]
fn energies_by_hand_on_one_quad_core_host() {
    // One rank on Quad: 1 unit (1 s on one core of four), then half a unit: 1.5 s at
    // 110.25 + 70.5 / 4 = 127.875 W; Duo idle at 60.125 W, Spare at 40 W, Bare 0 W. (MPI_Wtime
    // costs nothing with smpi/wtime:0.)
    let hf = hostfile("energy-quad.hosts", &["Quad"]);
    let out = Smpirun::new(program())
        .platform(mixed())
        .hostfile(&hf)
        .np(1)
        .cfg("smpi/simulate-computation:no")
        .cfg("smpi/wtime:0")
        .cfg("plugin:host_energy")
        .json()
        .args(["1e8"])
        .run();
    out.assert_success();
    out.assert_stderr_has(&[
        "[rank 0] Quad: idle 95.500000 W, pstate 0: idle 95.500000, epsilon 110.250000, all cores 180.750000, \
         slope 70.500000 W",
        "[1.000000] [rank 0] computed Quad: energy 127.875000 J, power 95.500000 W",
        "[1.500000] [rank 0] during Quad: energy 191.812500 J, power 95.500000 W",
        "[0.000000] ./src/plugins/host_energy.cpp:344: [host_energy/WARNING] No energetic profiles \
         (wattage_per_state) given for host Bare, using 0 W by default.",
        "[1.500000] [host_energy/INFO] Total energy consumption: 342.000000 Joules (used hosts: 191.812500 \
         Joules; unused/idle hosts: 150.187500)\n\
         [1.500000] [host_energy/INFO] Energy consumption of host Bare: 0.000000 Joules\n\
         [1.500000] [host_energy/INFO] Energy consumption of host Duo: 90.187500 Joules\n\
         [1.500000] [host_energy/INFO] Energy consumption of host Quad: 191.812500 Joules\n\
         [1.500000] [host_energy/INFO] Energy consumption of host Spare: 60.000000 Joules\n",
        "| energy 342.000000 J |",
    ]);
    let e = &out.json()["energy"];
    assert_eq!(e["date"], 1.5, "{e}");
    assert_eq!(e["total_joules"], 342.0, "{e}");
    assert_eq!(e["used_hosts_joules"], 191.8125, "{e}");
    assert_eq!(e["unused_hosts_joules"], 150.1875, "{e}");
    let hosts: Vec<(String, f64, bool)> = e["hosts"]
        .as_array()
        .expect("a host list")
        .iter()
        .map(|h| {
            (
                h["name"].as_str().unwrap_or("?").to_string(),
                h["joules"].as_f64().unwrap_or(f64::NAN),
                h["used"].as_bool().unwrap_or(false),
            )
        })
        .collect();
    assert_eq!(
        hosts,
        vec![
            ("Bare".to_string(), 0.0, false),
            ("Duo".to_string(), 90.1875, false),
            ("Quad".to_string(), 191.8125, true),
            ("Spare".to_string(), 60.0, false),
        ]
    );
}

#[test]
fn plugin_off_prints_nothing_and_costs_nothing() {
    let hf = hostfile("energy-off.hosts", &["Quad", "Quad", "Duo", "Bare"]);
    let run = |plugin: bool| {
        let mut r = Smpirun::new(program())
            .platform(mixed())
            .hostfile(&hf)
            .np(4)
            .cfg("smpi/simulate-computation:no")
            .json()
            .args(["1e8", "quiet"]);
        if plugin {
            r = r.cfg("plugin:host_energy");
        }
        let out = r.run();
        out.assert_success();
        out
    };
    let (off, on) = (run(false), run(true));
    assert!(
        !off.stderr.contains("host_energy") && !off.stderr.contains("energy "),
        "{}",
        off.describe()
    );
    assert!(off.json()["energy"].is_null(), "{}", off.describe());
    assert!(
        on.stderr.contains("[host_energy/INFO] Total energy consumption"),
        "{}",
        on.describe()
    );
    assert!(on.json()["energy"].is_object(), "{}", on.describe());
    for key in ["simulated_time", "events", "messages"] {
        assert_eq!(off.json()[key], on.json()[key], "{key}");
    }
}

#[test]
fn energy_calls_without_the_plugin_end_the_run() {
    let hf = hostfile("energy-nocfg.hosts", &["Quad"]);
    let out = Smpirun::new(program())
        .platform(mixed())
        .hostfile(&hf)
        .np(1)
        .cfg("smpi/simulate-computation:no")
        .args(["1e8"])
        .run();
    out.assert_failure().assert_stderr_has(&[
        "The Energy plugin is not active. Please call sg_host_energy_plugin_init()",
        "--cfg=plugin:host_energy",
    ]);
}

#[test]
fn starting_the_plugin_after_time_zero_is_refused() {
    let hf = hostfile("energy-late.hosts", &["Quad"]);
    let out = Smpirun::new(program())
        .platform(mixed())
        .hostfile(&hf)
        .np(1)
        .cfg("smpi/simulate-computation:no")
        .args(["1e8", "late"])
        .run();
    out.assert_failure().assert_stderr_has(&[
        "sg_host_energy_plugin_init() called at t=1.000000 s: not supported once the simulation has started",
    ]);
}

#[test]
fn a_host_without_profile_asked_for_its_energy_fails_as_in_simgrid() {
    let hf = hostfile("energy-bare.hosts", &["Bare"]);
    let out = Smpirun::new(program())
        .platform(mixed())
        .hostfile(&hf)
        .np(1)
        .cfg("smpi/simulate-computation:no")
        .cfg("plugin:host_energy")
        .args(["1e8"])
        .run();
    assert_eq!(out.code, Some(134), "{}", out.describe());
    out.assert_stderr_has(&[
        "[Bare:0:(1) 1.250000] [root/CRITICAL] No power range properties specified for host Bare",
    ]);
}

#[test]
fn malformed_power_properties_name_the_file_host_and_property() {
    // (host speeds, property value, what is wrong)
    let cases = [
        (
            "1Gf",
            "100:1x0:200",
            "invalid Epsilon value for pstate 0 on host H: \"1x0\"",
        ),
        (
            "1Gf,500Mf",
            "100:120:200, 90",
            "(pstate 1: \" 90\"): it should be 'Idle:AllCores'",
        ),
        // SimGrid checks the number of profiles first.
        (
            "1Gf",
            "100:120:200, 90:95",
            "found 2 energetic profiles for 1 pstates",
        ),
        (
            "1Gf",
            "100:120:150:200",
            "it should be 'Idle:AllCores' (or 'Idle:Epsilon:AllCores')",
        ),
        (
            "1Gf",
            "100 :200",
            "invalid Idle value for pstate 0 on host H: \"100 \"",
        ),
    ];
    let property = "wattage_per_state";
    let hf = hostfile("energy-bad.hosts", &["H"]);
    for (i, (speeds, value, why)) in cases.iter().enumerate() {
        let xml = format!(
            "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n\
             <platform version=\"4.1\"><zone id=\"z\" routing=\"Full\">\n\
             <host id=\"H\" speed=\"{speeds}\"><prop id=\"{property}\" value=\"{value}\"/></host>\n\
             </zone></platform>\n"
        );
        let p = write_scratch(&format!("energy-bad-{i}.xml"), &xml);
        let out = Smpirun::new(program())
            .platform(&p)
            .hostfile(&hf)
            .np(1)
            .cfg("plugin:host_energy")
            .run();
        out.assert_failure().assert_stderr_has(&[
            &format!("{}: host H: property {property}=\"{value}\"", p.display()),
            why,
        ]);
    }
    let p = write_scratch(
        "energy-bad-off.xml",
        "<?xml version='1.0'?>\n<platform version=\"4.1\"><zone id=\"z\" routing=\"Full\">\n\
         <host id=\"H\" speed=\"1Gf\"><prop id=\"wattage_per_state\" value=\"1:2\"/>\
         <prop id=\"wattage_off\" value=\"10W\"/></host>\n</zone></platform>\n",
    );
    let out = Smpirun::new(program())
        .platform(&p)
        .hostfile(&hf)
        .np(1)
        .cfg("plugin:host_energy")
        .run();
    out.assert_failure().assert_stderr_has(&[
        "host H: property wattage_off=\"10W\": invalid value for property wattage_off of host H",
    ]);
    // The plugin off: the properties are not read.
    Smpirun::new(program())
        .platform(&p)
        .hostfile(&hf)
        .np(1)
        .cfg("smpi/simulate-computation:no")
        .args(["1e8", "quiet"])
        .run()
        .assert_success();
}

#[test]
fn other_plugins_are_refused_and_the_key_is_documented() {
    let hf = hostfile("energy-plugins.hosts", &["Quad"]);
    for (name, needle) in [
        (
            "host_load",
            "SimGrid's plugin host_load is not supported by smpirun (only host_energy is)",
        ),
        ("link_energy", "SimGrid's plugin link_energy is not supported"),
        ("host_dvfs", "SimGrid's plugin host_dvfs is not supported"),
        ("file_system", "SimGrid's file_system plugin is not supported"),
        (
            "energy",
            "unknown plugin; SimGrid's plugins are link_load, link_energy_wifi, link_energy, host_load, \
             host_energy, host_dvfs, cmonkey",
        ),
    ] {
        let out = Smpirun::new(program())
            .platform(mixed())
            .hostfile(&hf)
            .np(1)
            .cfg(&format!("plugin:{name}"))
            .run();
        out.assert_failure()
            .assert_stderr_has(&[&format!("--cfg=plugin:{name}: "), needle]);
    }
    let mut help = Command::new(e2e_tests::smpirun());
    help.arg("--help-cfg");
    let out = run_command(help, Duration::from_secs(30));
    assert!(
        out.stdout.contains("plugin") && out.stdout.contains("SimGrid plugin: host_energy"),
        "{}",
        out.describe()
    );
}

#[test]
fn log_thresholds_silence_the_plugin_lines() {
    let hf = hostfile("energy-log.hosts", &["Quad", "Bare"]);
    let run = |log: &str| {
        let out = Smpirun::new(program())
            .platform(mixed())
            .hostfile(&hf)
            .np(2)
            .cfg("smpi/simulate-computation:no")
            .cfg("plugin:host_energy")
            .opt(format!("--log={log}"))
            .args(["1e8", "quiet"])
            .run();
        out.assert_success();
        out
    };
    // host_energy hangs under kernel, as in SimGrid.
    let warn = run("host_energy.thres:warning");
    assert!(
        warn.stderr
            .contains("[host_energy/WARNING] No energetic profiles"),
        "{}",
        warn.describe()
    );
    assert!(!warn.stderr.contains("[host_energy/INFO]"), "{}", warn.describe());
    let none = run("kernel.thres:error");
    assert!(!none.stderr.contains("host_energy"), "{}", none.describe());
    // The summary and JSON do not depend on the log.
    assert!(none.stderr.contains("| energy "), "{}", none.describe());
}

/// SimGrid's own example of DVFS and energy (`examples/smpi/energy`: each rank switches its
/// host through its three pstates, computes 1 Gflop in each and reads its energy): every line
/// of its tesh file, the plugin's end lines included, comes out of our run unchanged.
#[test]
fn simgrid_energy_example_gives_its_tesh_output() {
    let dir = e2e_tests::simgrid_examples().join("smpi/energy");
    let Some(platform) = simgrid_platform("energy_platform.xml") else {
        return;
    };
    if !dir.is_dir() {
        eprintln!("skipped: SimGrid 3.32's sources are not in {}", dir.display());
        return;
    }
    let source = std::fs::read_to_string(dir.join("energy.c")).expect("readable example");
    let prog = build_c(&write_scratch("sg_energy.c", &source));
    let hosts = std::fs::read_to_string(dir.join("hostfile")).expect("readable hostfile");
    let hf = write_scratch("sg_energy.hosts", &hosts);
    let out = Smpirun::new(&prog)
        .platform(&platform)
        .hostfile(&hf)
        .np(2)
        .cfg("smpi/simulate-computation:no")
        .cfg("plugin:host_energy")
        .cfg("smpi/wtime:0")
        .run();
    out.assert_success();
    let tesh = std::fs::read_to_string(dir.join("energy.tesh")).expect("readable tesh");
    let want: BTreeSet<&str> = tesh.lines().filter_map(|l| l.strip_prefix("> ")).collect();
    let got: BTreeSet<&str> = out
        .stderr
        .lines()
        .chain(out.stdout.lines())
        .filter(|l| !l.starts_with("[smpirun]") && !l.starts_with("smpirun: "))
        .collect();
    assert_eq!(got, want, "{}", out.describe());
}
