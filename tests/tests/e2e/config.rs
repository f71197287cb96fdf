//! Where `--cfg` values come from: one precedence chain, built-in default < platform `<config>`
//! < model file (`-model`: `[config]` and `[network]`) < command line (`--cfg`), checked on
//! simulated times; and a key given anywhere is either used or rejected with a message naming it
//! (`network/loopback-bw` and `network/loopback-lat` reach the network model's loopback link
//! from every source).
//!
//! The platform is two hosts joined by one 1 GB/s, 1 ms link in a zone of declared routes
//! (`Full`), so two ranks on one host talk through the network model's `__loopback__` link.
//! `apps/pingpong.c` prints the one-way time of a message; the `--json` summary gives the
//! simulated time. Computation is not simulated, so every time is exact and repeatable.

use std::path::PathBuf;

use e2e_tests::{build_app, field_f64, rel_diff, smpirun, write_scratch, RunOutput, Smpirun};

/// The platform, with `<config>` entries in place of `CONFIG`.
const PLATFORM: &str = r#"<?xml version='1.0'?>
<platform version="4.1">
  CONFIG
  <zone id="z" routing="Full">
    <host id="h0" speed="1Gf"/>
    <host id="h1" speed="1Gf"/>
    <link id="wire" bandwidth="1GBps" latency="1ms"/>
    <route src="h0" dst="h1"><link_ctn id="wire"/></route>
  </zone>
</platform>
"#;

/// Latency of `wire`, seconds.
const WIRE_LATENCY: f64 = 1e-3;

/// The platform with `<config>` setting `entries`.
fn platform_with(entries: &[(&str, &str)]) -> PathBuf {
    let props: String = entries
        .iter()
        .map(|(k, v)| format!("<prop id=\"{k}\" value=\"{v}\"/>"))
        .collect();
    let config = if props.is_empty() {
        String::new()
    } else {
        format!("<config>{props}</config>")
    };
    write_scratch("platform.xml", &PLATFORM.replace("CONFIG", &config))
}

/// A model file with a `[config]` table of `entries` and, if not empty, a `[network]` table.
fn model_with(entries: &[(&str, &str)], network: &str) -> PathBuf {
    let mut text = String::from("[config]\n");
    for (k, v) in entries {
        text += &format!("\"{k}\" = \"{v}\"\n");
    }
    if !network.is_empty() {
        text += &format!("[network]\n{network}\n");
    }
    write_scratch("model.toml", &text)
}

/// Both ranks on h0: their messages cross the model loopback.
fn same_host() -> PathBuf {
    write_scratch("hosts.txt", "h0:2\n")
}

/// One rank per host: their messages cross `wire`.
fn two_hosts() -> PathBuf {
    write_scratch("hosts.txt", "h0\nh1\n")
}

/// One timed round trip of `size` bytes between the two ranks.
fn pingpong(platform: PathBuf, hostfile: PathBuf, size: &str) -> Smpirun {
    Smpirun::new(build_app("pingpong"))
        .platform(platform)
        .hostfile(hostfile)
        .cfg("smpi/simulate-computation:no")
        .json()
        .args(["-i", "1", size])
}

/// What a run measured.
struct Times {
    /// pingpong's `one_way` as printed (compared digit for digit).
    one_way_text: String,
    one_way: f64,
    /// The whole run's simulated time.
    simulated: f64,
}

fn times(out: &RunOutput) -> Times {
    out.assert_ok();
    let line = out
        .lines_starting_with("pingpong ")
        .next()
        .unwrap_or_else(|| panic!("no pingpong line\n{}", out.describe()));
    let one_way_text = e2e_tests::fields(line)["one_way"].to_string();
    Times {
        one_way: field_f64(line, "one_way"),
        one_way_text,
        simulated: out.json()["simulated_time"]
            .as_f64()
            .expect("simulated_time is a number"),
    }
}

// ---------------------------------------------------------------------------------------------
// The model loopback's keys, from every source

#[test]
fn loopback_bandwidth_on_the_command_line_equals_the_platform_config() {
    let default = times(&pingpong(platform_with(&[]), same_host(), "1m").run());
    let command_line = times(
        &pingpong(platform_with(&[]), same_host(), "1m")
            .cfg("network/loopback-bw:1GBps")
            .run(),
    );
    let platform = times(
        &pingpong(
            platform_with(&[("network/loopback-bw", "1GBps")]),
            same_host(),
            "1m",
        )
        .run(),
    );
    let model = times(
        &pingpong(platform_with(&[]), same_host(), "1m")
            .opt("-model")
            .opt(model_with(&[("network/loopback-bw", "1GBps")], ""))
            .run(),
    );
    // 1 MiB at 10 GB/s (the default) then at 1 GB/s: ten times as long, give or take the latency.
    let ratio = command_line.one_way / default.one_way;
    assert!((9.0..11.0).contains(&ratio), "{ratio}");
    assert_eq!(command_line.one_way_text, platform.one_way_text);
    assert_eq!(command_line.one_way_text, model.one_way_text);
}

#[test]
fn loopback_latency_on_the_command_line_equals_the_platform_config() {
    let run = |platform: PathBuf| pingpong(platform, same_host(), "1").cfg("network/model:CM02");
    let command_line = times(&run(platform_with(&[])).cfg("network/loopback-lat:1ms").run());
    let platform = times(&run(platform_with(&[("network/loopback-lat", "1ms")])).run());
    // CM02: latency factor 1, so one byte takes the loopback's latency and a little more.
    assert!(
        rel_diff(command_line.one_way, 1e-3) < 1e-3,
        "{}",
        command_line.one_way
    );
    assert_eq!(command_line.one_way_text, platform.one_way_text);
}

// ---------------------------------------------------------------------------------------------
// One precedence chain. Each level is checked on a factor key (`network/latency-factor`: the
// one-way time of one byte over `wire` is the factor times 1 ms) and on a plain key
// (`smpi/init`: each rank's MPI_Init takes that long, so the run ends that much later).

/// The network model is CM02 (factors 1) from the command line, so that only the keys under
/// test differ from run to run.
fn on_wire(platform: PathBuf) -> Smpirun {
    pingpong(platform, two_hosts(), "1").cfg("network/model:CM02")
}

/// Checks a run against the latency factor and the MPI_Init cost it should have used: its
/// one-way time is that of a run given only the factor, digit for digit, and it ends `init`
/// seconds later than that run.
#[track_caller]
fn assert_used(run: &Times, lat_factor: f64, init: f64) {
    let reference = times(
        &on_wire(platform_with(&[]))
            .cfg(&format!("network/latency-factor:{lat_factor}"))
            .run(),
    );
    assert!(
        rel_diff(reference.one_way, lat_factor * WIRE_LATENCY) < 1e-3,
        "one_way {} for a latency factor of {lat_factor}",
        reference.one_way
    );
    assert_eq!(
        run.one_way_text, reference.one_way_text,
        "one_way with a latency factor of {lat_factor}"
    );
    assert!(
        (run.simulated - reference.simulated - init).abs() < 1e-9,
        "simulated time {} = {} + smpi/init {init}?",
        run.simulated,
        reference.simulated
    );
}

const PLATFORM_VALUES: &[(&str, &str)] = &[("network/latency-factor", "2"), ("smpi/init", "1")];

#[test]
fn platform_config_beats_the_default() {
    let default = times(&on_wire(platform_with(&[])).run());
    assert_used(&default, 1.0, 0.0);
    let run = times(&on_wire(platform_with(PLATFORM_VALUES)).run());
    assert_used(&run, 2.0, 1.0);
}

/// The model file's `[network]` (here its latency factor) and its `[config]` both beat the
/// platform's `<config>` (before, the platform's `<config>` beat `[network]` while `[config]`
/// beat the platform).
#[test]
fn model_file_beats_the_platform_config() {
    let model = model_with(&[("smpi/init", "2")], "lat_factor = 3.0");
    let run = times(
        &on_wire(platform_with(PLATFORM_VALUES))
            .opt("-model")
            .opt(model)
            .run(),
    );
    assert_used(&run, 3.0, 2.0);
}

#[test]
fn command_line_beats_the_model_file() {
    let model = model_with(&[("smpi/init", "2")], "lat_factor = 3.0");
    let run = times(
        &on_wire(platform_with(PLATFORM_VALUES))
            .opt("-model")
            .opt(model)
            .cfg("smpi/lat-factor:4")
            .cfg("smpi/init:3")
            .run(),
    );
    assert_used(&run, 4.0, 3.0);
}

// ---------------------------------------------------------------------------------------------
// Keys nobody uses are rejected, wherever they are given

/// A user error: non-zero exit, every needle on stderr, no panic.
#[track_caller]
fn assert_rejected(out: &RunOutput, needles: &[&str]) {
    out.assert_failure();
    out.assert_stderr_has(needles);
    assert!(!out.stderr.contains("panicked"), "{}", out.describe());
}

#[test]
fn unknown_keys_are_rejected_wherever_given() {
    let out = on_wire(platform_with(&[])).cfg("network/loopback_bw:1GBps").run();
    assert_rejected(
        &out,
        &[
            "--cfg=network/loopback_bw:1GBps",
            "unknown configuration key",
            "did you mean network/loopback-bw?",
        ],
    );

    let platform = platform_with(&[("network/no-such-key", "Lazy")]);
    let out = on_wire(platform.clone()).run();
    // file:line:column of the entry, the key and the value
    assert_rejected(
        &out,
        &[
            &format!("{}:3:", platform.display()),
            "<config> network/no-such-key:Lazy",
            "unknown configuration key",
        ],
    );

    let model = model_with(&[("smpi/no-such-key", "1")], "");
    let out = on_wire(platform_with(&[])).opt("-model").opt(&model).run();
    assert_rejected(
        &out,
        &[
            &format!("{}: [config] smpi/no-such-key:1", model.display()),
            "unknown configuration key",
        ],
    );
}

#[test]
fn unsupported_and_bad_values_are_rejected_with_the_key() {
    let out = on_wire(platform_with(&[])).cfg("contexts/guard-size:2").run();
    assert_rejected(&out, &["contexts/guard-size:2", "not supported"]);
    let platform = platform_with(&[("network/loopback-bw", "0")]);
    let out = on_wire(platform.clone()).run();
    assert_rejected(
        &out,
        &[
            &format!("{}:3:", platform.display()),
            "network/loopback-bw:0",
            "must be positive",
        ],
    );
}

/// SimGrid's implementation choices that its own example platforms set
/// (`examples/platforms/config.xml`: `cpu/optim:TI`, `host/model:compound`)
/// and users' command lines carry are accepted and change nothing; a value
/// SimGrid would not take, or a model not simulated here, is rejected with
/// the key.
#[test]
fn simgrid_implementation_keys_are_accepted_and_change_nothing() {
    let plain = times(&on_wire(platform_with(&[])).run());
    let choices = [
        ("cpu/optim", "TI"),
        ("network/optim", "Full"),
        ("host/model", "compound"),
        ("cpu/model", "Cas01"),
        ("cpu/maxmin-selective-update", "yes"),
        ("network/maxmin-selective-update", "no"),
        ("contexts/factory", "thread"),
        ("contexts/synchro", "posix"),
        ("disk/model", "S19"),
        ("disk/solver", "maxmin"),
        ("tracing/smpi", "yes"),
    ];
    let out = on_wire(platform_with(&choices)).cfg("contexts/nthreads:4").run();
    out.assert_success();
    let chosen = times(&out);
    assert_eq!(
        (chosen.one_way_text.as_str(), chosen.simulated),
        (plain.one_way_text.as_str(), plain.simulated),
        "{}",
        out.describe()
    );
    let out = on_wire(platform_with(&[])).cfg("host/model:ptask_L07").run();
    assert_rejected(&out, &["host/model:ptask_L07", "expected default or compound"]);
    let out = on_wire(platform_with(&[("cpu/optim", "Fast")])).run();
    assert_rejected(&out, &["cpu/optim:Fast", "expected Lazy, TI or Full"]);
    // SimGrid keys for what is not simulated here say so, with the reason, wherever given.
    let out = on_wire(platform_with(&[("tracing/categorized", "yes")])).run();
    assert_rejected(
        &out,
        &[
            "tracing/categorized:yes",
            "a SimGrid 3.32 key that this simulator does not support",
            "resource-utilization traces are not written",
        ],
    );
    let out = on_wire(platform_with(&[]))
        .cfg("model-check/reduction:dpor")
        .run();
    assert_rejected(&out, &["--cfg=model-check/reduction:dpor", "model checking"]);
}

#[test]
fn help_cfg_states_the_precedence() {
    let mut cmd = std::process::Command::new(smpirun());
    cmd.arg("--help-cfg");
    let out = e2e_tests::run_command(cmd, e2e_tests::DEFAULT_TIMEOUT);
    out.assert_success();
    let text = out.stdout.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        text.contains(
            "lowest precedence first: the default below < the platform file's <config> < the model file"
        ) && text.contains("< the command line (--cfg)"),
        "{}",
        out.describe()
    );
    // Each smpi/<collective> key lists the selectors and its algorithms.
    assert!(
        text.contains("smpi/bcast default '' force the bcast algorithm default, ompi, mpich, mvapich2, impi")
            && text.contains("SMP_binomial")
            && text.contains("ompi_butterfly"),
        "{}",
        out.describe()
    );
}

/// SMPI reads the host properties `smpi/os`, `smpi/or` and `smpi/ois` as that host's own
/// overheads; they are not implemented here, so they give a warning instead of nothing.
#[test]
fn per_host_overheads_are_not_dropped_in_silence() {
    let text = PLATFORM.replace("CONFIG", "").replace(
        r#"<host id="h1" speed="1Gf"/>"#,
        r#"<host id="h1" speed="1Gf"><prop id="smpi/or" value="0:1e-6:0"/></host>"#,
    );
    let out = on_wire(write_scratch("platform.xml", &text)).run();
    out.assert_ok();
    out.assert_stderr_has(&["smpirun: warning: ", "host h1: property smpi/or is not applied"]);
}
