//! The command-line tools: `--help` works, and user mistakes (unknown `--cfg`
//! key, missing or malformed platform, unknown host in a hostfile...) end with
//! a clear message on stderr and a non-zero exit code, never a panic or a hang.

use std::process::Command;
use std::time::Duration;

use e2e_tests::{
    apps_dir, build_app, build_c, platform, run_command, smpicc, smpirun, write_scratch, RunOutput, Smpirun,
};

const TIMEOUT: Duration = Duration::from_secs(30);

fn tool(path: std::path::PathBuf, args: &[&str]) -> RunOutput {
    let mut c = Command::new(path);
    c.args(args);
    run_command(c, TIMEOUT)
}

/// Checks a user error: non-zero exit, every `needle` on stderr, no panic.
#[track_caller]
fn assert_user_error(out: &RunOutput, needles: &[&str]) {
    out.assert_failure();
    assert!(
        out.code.is_some(),
        "exited normally, not by a signal\n{}",
        out.describe()
    );
    out.assert_stderr_has(needles);
    assert!(
        !out.stderr.contains("panicked") && !out.stderr.contains("RUST_BACKTRACE"),
        "a user error must not panic\n{}",
        out.describe()
    );
}

fn ring() -> Smpirun {
    Smpirun::new(build_app("ring")).timeout(TIMEOUT)
}

#[test]
fn smpirun_help() {
    for flag in ["--help", "-help"] {
        let out = tool(smpirun(), &[flag]);
        out.assert_success();
        for want in ["Usage: smpirun", "-platform", "-np", "-hostfile", "--cfg"] {
            assert!(
                out.stdout.contains(want),
                "smpirun {flag} mentions {want}\n{}",
                out.describe()
            );
        }
    }
}

#[test]
fn smpirun_help_cfg_lists_keys() {
    let out = tool(smpirun(), &["--help-cfg"]);
    out.assert_success();
    for key in [
        "network/model",
        "smpi/privatization",
        "smpi/wtime",
        "contexts/stack-size",
    ] {
        assert!(
            out.stdout.contains(key),
            "--help-cfg lists {key}\n{}",
            out.describe()
        );
    }
}

#[test]
fn smpirun_help_coll_lists_every_collectives_algorithms() {
    let out = tool(smpirun(), &["--help-coll"]);
    out.assert_success();
    for (coll, algorithm) in [
        ("smpi/allreduce", "smp_rsag_lr"),
        ("smpi/alltoall", "mvapich2_scatter_dest"),
        ("smpi/bcast", "arrival_pattern_aware_wait"),
        ("smpi/reduce_scatter", "ompi_butterfly"),
        ("smpi/barrier", "automatic"),
    ] {
        let section = out.stdout.split(&format!("{coll} (")).nth(1).unwrap_or_default();
        let section = section.split("\n\n").next().unwrap_or_default();
        assert!(
            section.split_whitespace().any(|w| w == algorithm),
            "--help-coll lists {algorithm} under {coll}\n{}",
            out.describe()
        );
    }
}

#[test]
fn smpicc_help() {
    let out = tool(smpicc(), &["--help"]);
    out.assert_success();
    assert!(out.stdout.contains("Usage: smpicc"), "{}", out.describe());
}

#[test]
fn smpicc_reports_compile_errors() {
    let src = write_scratch(
        "broken.c",
        "#include <mpi.h>\nint main(void) { return undeclared_variable; }\n",
    );
    let obj = src.with_extension("so");
    let out = tool(smpicc(), &[src.to_str().unwrap(), "-o", obj.to_str().unwrap()]);
    assert_user_error(&out, &["undeclared_variable"]);
}

/// The ring program on 2 ranks of the 4-host cluster with one extra `--cfg`.
fn ring_with_cfg(cfg: &str) -> RunOutput {
    ring().platform(platform("cluster_4.toml")).np(2).cfg(cfg).run()
}

#[test]
fn unknown_cfg_key() {
    let out = ring_with_cfg("smpi/no-such-key:1");
    assert_user_error(&out, &["smpi/no-such-key"]);
}

#[test]
fn bad_cfg_value() {
    let out = ring_with_cfg("network/model:NoSuchModel");
    assert_user_error(&out, &["network/model", "NoSuchModel"]);
}

#[test]
fn bad_event_order() {
    let out = ring_with_cfg("smpi/event-order:random");
    assert_user_error(&out, &["smpi/event-order", "random", "simgrid or fifo"]);
}

#[test]
fn unwritable_request_log() {
    let out = ring()
        .platform(platform("cluster_4.toml"))
        .np(2)
        .opt("-request-log")
        .opt("/nonexistent/dir/requests.log")
        .run();
    assert_user_error(&out, &["-request-log", "/nonexistent/dir/requests.log"]);
}

#[test]
fn missing_platform_file() {
    let out = ring().platform("/nonexistent/dir/platform.toml").np(2).run();
    assert_user_error(&out, &["/nonexistent/dir/platform.toml"]);
}

#[test]
fn no_platform_given() {
    let out = ring().np(2).run();
    assert_user_error(&out, &["platform"]);
}

#[test]
fn unknown_host_in_hostfile() {
    let hf = write_scratch("hosts.txt", "host-0\nhost-1\nno-such-host-9\n");
    let out = ring()
        .platform(platform("cluster_4.toml"))
        .hostfile(&hf)
        .np(3)
        .run();
    // names the host and where it is (file:line)
    assert_user_error(&out, &["no-such-host-9", &format!("{}:3", hf.display())]);
}

#[test]
fn hostfile_gives_the_placement() {
    let hf = write_scratch("hosts.txt", "host-3\nhost-2:2\n");
    let out = ring()
        .platform(platform("cluster_4.toml"))
        .hostfile(&hf)
        .np(4)
        .opt("-map")
        .run();
    out.assert_ok();
    for (rank, host) in [(0, "host-3"), (1, "host-2"), (2, "host-2"), (3, "host-3")] {
        let want = format!("[rank {rank}] -> {host}");
        assert!(out.stdout.contains(&want), "{want}\n{}", out.describe());
    }
}

#[test]
fn malformed_toml_platform_unknown_key() {
    let p = write_scratch(
        "bad.toml",
        "[[cluster]]\nid = \"c\"\nprefix = \"h-\"\nradical = \"0-3\"\nspeed = \"1Gf\"\nbww = \"1GBps\"\nlat = \"1us\"\n",
    );
    let out = ring().platform(&p).np(2).run();
    // file:line:column and the bad key
    assert_user_error(&out, &[&format!("{}:6:", p.display()), "bww"]);
}

#[test]
fn malformed_toml_platform_syntax() {
    let p = write_scratch(
        "bad.toml",
        "[[cluster]]\nid = \"c\"\nradical = \"0-3\nspeed = \"1Gf\"\n",
    );
    let out = ring().platform(&p).np(2).run();
    assert_user_error(&out, &[&format!("{}:3:", p.display())]);
}

#[test]
fn malformed_platform_bad_unit() {
    let p = write_scratch(
        "bad.toml",
        "[[cluster]]\nid = \"c\"\nprefix = \"h-\"\nradical = \"0-3\"\nspeed = \"1Gf\"\nbw = \"10Gbs\"\nlat = \"1us\"\n",
    );
    let out = ring().platform(&p).np(2).run();
    assert_user_error(&out, &[&format!("{}:6:", p.display()), "10Gbs"]);
}

#[test]
fn malformed_xml_platform() {
    let p = write_scratch(
        "bad.xml",
        "<platform version=\"4.1\">\n<zone id=\"z\" routing=\"Full\">\n<host id=\"a\"/>\n",
    );
    let out = ring().platform(&p).np(2).run();
    assert_user_error(&out, &[&p.display().to_string()]);
}

#[test]
fn program_that_does_not_exist() {
    let out = Smpirun::new("/nonexistent/program")
        .platform(platform("cluster_4.toml"))
        .np(2)
        .timeout(TIMEOUT)
        .run();
    assert_user_error(&out, &["/nonexistent/program"]);
}

#[test]
fn program_that_is_not_built_by_smpicc() {
    let not_elf = write_scratch("not_a_program", "#!/bin/sh\necho hi\n");
    let out = Smpirun::new(&not_elf)
        .platform(platform("cluster_4.toml"))
        .np(2)
        .timeout(TIMEOUT)
        .run();
    assert_user_error(&out, &["smpicc"]);
}

#[test]
fn unknown_option() {
    let out = ring()
        .platform(platform("cluster_4.toml"))
        .np(2)
        .opt("-no-such-option")
        .run();
    assert_user_error(&out, &["-no-such-option"]);
}

#[test]
fn bad_rank_count() {
    let out = ring()
        .platform(platform("cluster_4.toml"))
        .opt("-np")
        .opt("many")
        .run();
    assert_user_error(&out, &["many"]);
    let out = ring().platform(platform("cluster_4.toml")).np(0).run();
    assert_user_error(&out, &["-np"]);
}

/// `-progress <s>` prints progress lines even when stderr is not a terminal
/// (as in CI logs or `2> file`); a malformed value is a user error.
#[test]
fn progress_lines_on_request() {
    let out = ring()
        .platform(platform("fat_tree.toml"))
        .np(16)
        .opt("-progress")
        .opt("0.000001")
        .args(["-l", "200"])
        .run();
    out.assert_ok();
    assert!(
        out.stderr
            .lines()
            .any(|l| l.starts_with("[smpirun] simulated ") && l.contains("s wall")),
        "{}",
        out.describe()
    );
    let bad = ring()
        .platform(platform("fat_tree.toml"))
        .np(2)
        .opt("-progress")
        .opt("soon")
        .run();
    assert_user_error(&bad, &["-progress", "soon"]);
}

#[test]
fn json_dash_prints_the_summary_on_stdout_after_the_output() {
    let out = ring()
        .platform(platform("cluster_4.toml"))
        .np(4)
        .opt("--json")
        .opt("-")
        .run();
    out.assert_success();
    let start = out
        .stdout
        .find("{\n")
        .unwrap_or_else(|| panic!("no JSON on stdout\n{}", out.describe()));
    assert!(start > 0, "the program's output comes first\n{}", out.describe());
    let v: serde_json::Value = serde_json::from_str(&out.stdout[start..]).expect("valid JSON");
    assert_eq!(v["format"], "smpirun-summary/2");
    assert_eq!(v["status"], "ok");
    assert_eq!(v["ranks"], 4);
}

#[test]
fn host_speed_left_at_its_default_is_a_warning_when_computation_is_simulated() {
    let run = |cfg: &[&str]| {
        let mut r = ring().platform(platform("cluster_4.toml")).np(2);
        for c in cfg {
            r = r.cfg(c);
        }
        r.run()
    };
    let warned = run(&[]);
    warned.assert_success();
    warned.assert_stderr_has(&[
        "warning: smpi/host-speed is left at its default",
        "--cfg=smpi/host-speed:",
    ]);
    for cfg in [
        &["smpi/host-speed:1Gf"][..],
        &["smpi/simulate-computation:no"][..],
    ] {
        let quiet = run(cfg);
        quiet.assert_success();
        assert!(
            !quiet.stderr.contains("host-speed is left"),
            "{cfg:?}\n{}",
            quiet.describe()
        );
    }
}

#[test]
fn a_run_that_polls_under_the_growing_shared_cost_is_warned_chaotic() {
    let run = |seconds: &str, cfg: &[&str]| {
        let mut r = Smpirun::new(build_app("polling"))
            .timeout(TIMEOUT)
            .platform(platform("cluster_4.toml"))
            .np(2)
            .cfg("smpi/host-speed:1Gf")
            .args([seconds]);
        for c in cfg {
            r = r.cfg(c);
        }
        r.run()
    };
    let chaotic = run("100", &[]);
    chaotic.assert_success();
    chaotic.assert_stderr_has(&[
        "warning: the ranks polled without success 1413 times",
        "chaotic",
        "--cfg=smpi/grow-injected-times:no",
    ]);
    for (seconds, cfg) in [("0.01", &[][..]), ("1", &["smpi/grow-injected-times:no"][..])] {
        let calm = run(seconds, cfg);
        calm.assert_success();
        assert!(
            !calm.stderr.contains("chaotic"),
            "{seconds} {cfg:?}\n{}",
            calm.describe()
        );
    }
}

#[test]
fn platform_set_changes_cluster_attributes_without_editing_the_file() {
    let ring = |platform_file: &str, set: &[&str]| {
        let mut r = Smpirun::new(build_app("ring"))
            .timeout(TIMEOUT)
            .platform(platform(platform_file))
            .np(16)
            .cfg("smpi/simulate-computation:no");
        for s in set {
            r = r.opt("-platform-set").opt(*s);
        }
        r.json().run()
    };
    let time = |out: &RunOutput| {
        out.assert_success();
        out.json()["simulated_time"].as_f64().expect("a simulated time")
    };
    for file in ["fat_tree.toml", "fat_tree_64.xml"] {
        let base = time(&ring(file, &[]));
        let slow = time(&ring(file, &["ft64.lat=100us"]));
        assert!(slow > 10.0 * base, "{file}: {slow} vs {base}");
        // Setting what the file already says changes nothing.
        let same = time(&ring(file, &["cluster.lat=1us", "cluster.bw=10GBps"]));
        assert_eq!(same, base, "{file}");
    }
    assert_user_error(
        &ring("fat_tree.toml", &["nope.bw=1GBps"]),
        &[
            "-platform-set nope.bw=1GBps",
            "no cluster \"nope\"",
            "clusters: ft64",
        ],
    );
    assert_user_error(
        &ring("fat_tree.toml", &["cluster.bw=fast"]),
        &["-platform-set cluster.bw=fast", "`fast` is not a bandwidth"],
    );
    assert_user_error(
        &ring("fat_tree.toml", &["cluster.bogus=1"]),
        &["unknown attribute `bogus`"],
    );
    assert_user_error(
        &ring("fat_tree.toml", &["bw"]),
        &["expected <cluster id>.<attribute>=<value>"],
    );
}

#[test]
fn link_stats_name_the_busiest_links_and_split_each_ranks_time() {
    let alltoall = Smpirun::new(build_c(&apps_dir().join("coll/coll_time.c")))
        .timeout(TIMEOUT)
        .platform(platform("torus_64.toml"))
        .np(64)
        .cfg("smpi/simulate-computation:no")
        .opt("--link-stats")
        .args(["alltoall", "65536"])
        .json()
        .run();
    alltoall.assert_success();
    alltoall.assert_stderr_has(&["busiest links", "saturated s", "peak flows", "time per rank"]);
    let links = alltoall.json()["links"]
        .as_array()
        .expect("links in the JSON")
        .clone();
    assert_eq!(links.len(), 10, "{links:?}");
    let run_time = alltoall.json()["simulated_time"].as_f64().unwrap();
    for l in &links {
        let saturated = l["saturated_time"].as_f64().unwrap();
        assert!(saturated > 0.0 && saturated <= run_time, "{l}");
        assert!(l["bytes"].as_f64().unwrap() >= 65536.0, "{l}");
        assert!(l["peak_flows"].as_u64().unwrap() > 1, "{l}");
    }
    // Rank 0 computes 100 s (smpi_execute_benched), rank 1 waits for it in MPI.
    let polling = Smpirun::new(build_app("polling"))
        .timeout(TIMEOUT)
        .platform(platform("cluster_4.toml"))
        .np(2)
        .cfg("smpi/simulate-computation:no")
        .cfg("smpi/grow-injected-times:no")
        .args(["100"])
        .json()
        .run();
    polling.assert_success();
    let ranks = polling.json()["per_rank"].as_array().unwrap().clone();
    assert!(
        (ranks[0]["compute_time"].as_f64().unwrap() - 100.0).abs() < 1e-6,
        "{ranks:?}"
    );
    assert!(ranks[1]["compute_time"].as_f64().unwrap() < 1e-6, "{ranks:?}");
    assert!(ranks[1]["mpi_time"].as_f64().unwrap() > 99.0, "{ranks:?}");
    assert!(polling.json()["links"].is_null(), "links only with --link-stats");
}

/// Runs of 1,024 ranks restart smpirun with huge pages for its heap (a glibc
/// tunable in `GLIBC_TUNABLES`): the program still sees the environment it was
/// given, with the variable unset, empty or set to something else.
#[test]
fn a_large_run_gives_the_program_its_environment_as_given() {
    let prog = build_c(&apps_dir().join("libc/environment.c"));
    for given in [None, Some(""), Some("glibc.malloc.arena_max=4")] {
        let mut cmd = Command::new(smpirun());
        cmd.args(["-platform"])
            .arg(platform("fat_tree_1024.toml"))
            .args(["-np", "1024", "--cfg=smpi/simulate-computation:no"])
            .arg(&prog)
            .arg("GLIBC_TUNABLES");
        match given {
            Some(v) => cmd.env("GLIBC_TUNABLES", v),
            None => cmd.env_remove("GLIBC_TUNABLES"),
        };
        let out = run_command(cmd, TIMEOUT);
        out.assert_success();
        let expected = match given {
            Some(v) => format!("GLIBC_TUNABLES={v}\n"),
            None => "GLIBC_TUNABLES unset\n".to_string(),
        };
        assert_eq!(out.stdout, expected, "given {given:?}\n{}", out.describe());
    }
}
