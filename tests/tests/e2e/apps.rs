//! Every app of `apps/` runs and passes its own check (last line `OK`, exit 0)
//! on several rank counts and platforms, and the `--json` summary is there and
//! consistent with the run.

use e2e_tests::{build_app, field_f64, platform, rel_diff, RunOutput, Smpirun};

/// (platform file, rank counts): more ranks than hosts wrap around the hosts.
const SETUPS: &[(&str, &[usize])] = &[("cluster_4.toml", &[2, 4, 7]), ("fat_tree.toml", &[2, 16, 64])];

/// Runs `app args` on every setup with `--json`, checks OK and the summary,
/// and returns the outputs.
fn run_everywhere(app: &str, args: &[&str], extra_cfg: &[&str]) -> Vec<(usize, RunOutput)> {
    let prog = build_app(app);
    let mut outs = Vec::new();
    for (plat, nps) in SETUPS {
        for &np in *nps {
            let mut run = Smpirun::new(&prog).platform(platform(plat)).np(np).json();
            for c in extra_cfg {
                run = run.cfg(c);
            }
            let out = run.args(args.iter().copied()).run();
            out.assert_ok();
            check_summary(&out, np);
            outs.push((np, out));
        }
    }
    outs
}

/// The `--json` summary: fields exist, agree with each other and with the
/// summary line on stderr.
#[track_caller]
fn check_summary(out: &RunOutput, np: usize) {
    let j = out.json();
    let ctx = || format!("--json: {j:#}\n{}", out.describe());
    let num = |v: &serde_json::Value, k: &str| -> f64 {
        v.get(k)
            .and_then(|x| x.as_f64())
            .unwrap_or_else(|| panic!("no number `{k}`\n{}", ctx()))
    };
    let sim = num(j, "simulated_time");
    assert!(sim > 0.0, "simulated_time {sim} should be > 0\n{}", ctx());
    assert_eq!(num(j, "ranks") as usize, np, "ranks\n{}", ctx());
    let wall = num(&j["host"], "wall_time");
    // smpirun's own wall clock is within the run we measured from outside
    assert!(
        (0.0..=out.wall.as_secs_f64()).contains(&wall),
        "wall_time {wall} outside [0, {}]\n{}",
        out.wall.as_secs_f64(),
        ctx()
    );
    let per_rank = j
        .get("per_rank")
        .and_then(|p| p.as_array())
        .unwrap_or_else(|| panic!("no per_rank\n{}", ctx()));
    assert_eq!(per_rank.len(), np, "per_rank has one entry per rank\n{}", ctx());
    let mut max_finish = 0.0f64;
    let mut sent = 0.0;
    for (i, r) in per_rank.iter().enumerate() {
        assert_eq!(num(r, "rank") as usize, i, "per_rank is in rank order\n{}", ctx());
        let f = num(r, "finish_time");
        assert!(
            f >= 0.0 && f <= sim * (1.0 + 1e-12),
            "rank {i}: finish_time {f} > simulated_time {sim}\n{}",
            ctx()
        );
        max_finish = max_finish.max(f);
        assert!(num(r, "bytes_sent") >= 0.0, "rank {i}: bytes_sent\n{}", ctx());
        sent += num(r, "messages_sent");
    }
    assert!(
        rel_diff(max_finish, sim) < 1e-9,
        "the last rank finishes at simulated_time\n{}",
        ctx()
    );
    let messages = num(j, "messages");
    assert!(messages > 0.0, "messages {messages} should be > 0\n{}", ctx());
    assert_eq!(
        messages,
        sent,
        "messages = sum of per-rank messages_sent\n{}",
        ctx()
    );
    // the summary line on stderr says the same
    let line = out
        .stderr
        .lines()
        .find(|l| l.contains("simulated time:"))
        .unwrap_or_else(|| panic!("no summary line on stderr\n{}", ctx()));
    let printed: f64 = line
        .split("simulated time:")
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("cannot read the summary line {line:?}"));
    assert!(
        (printed - sim).abs() <= 1e-9,
        "summary line says {printed}, JSON {sim}\n{}",
        ctx()
    );
}

/// The single line of stdout starting with `prefix`.
#[track_caller]
fn one_line<'a>(out: &'a RunOutput, prefix: &str) -> &'a str {
    let lines: Vec<&str> = out.lines_starting_with(prefix).collect();
    assert_eq!(
        lines.len(),
        1,
        "expected one line starting with {prefix:?}\n{}",
        out.describe()
    );
    lines[0]
}

#[test]
fn pingpong_runs_ok() {
    for (_, out) in run_everywhere("pingpong", &["-i", "3", "1", "1k", "64k", "1M"], &[]) {
        let lines: Vec<&str> = out.lines_starting_with("pingpong ").collect();
        assert_eq!(lines.len(), 4, "{}", out.describe());
        let mut last = 0.0;
        for l in lines {
            let rtt = field_f64(l, "rtt");
            assert!(rtt > last, "rtt grows with the size: {l}\n{}", out.describe());
            assert!(rel_diff(field_f64(l, "one_way"), rtt / 2.0) < 1e-6, "{l}");
            last = rtt;
        }
        let j = out.json();
        // rank 0 sends 1 warm-up + 3 timed messages per size
        let sent0 = j["per_rank"][0]["messages_sent"].as_f64().unwrap();
        assert!(sent0 >= 16.0, "rank 0 sent {sent0} messages\n{}", out.describe());
    }
}

#[test]
fn pingpong_default_sizes_reach_256_mib() {
    let out = Smpirun::new(build_app("pingpong"))
        .platform(platform("cluster_4.toml"))
        .np(2)
        .cfg("smpi/simulate-computation:no")
        .run();
    out.assert_ok();
    let sizes: Vec<u64> = out
        .lines_starting_with("pingpong ")
        .map(|l| field_f64(l, "size") as u64)
        .collect();
    let want: Vec<u64> = (0..15).map(|k| 1u64 << (2 * k)).collect();
    assert_eq!(sizes, want, "{}", out.describe());
}

#[test]
fn ring_runs_ok() {
    for (np, out) in run_everywhere("ring", &["-l", "3"], &[]) {
        let l = one_line(&out, "ring ");
        let s = (np * (np + 1) / 2) as f64;
        assert_eq!(field_f64(l, "token"), 3.0 * s, "{}", out.describe());
        let t = field_f64(l, "time");
        let sim = out.json()["simulated_time"].as_f64().unwrap();
        assert!(
            t > 0.0 && t <= sim,
            "ring time {t} within (0, {sim}]\n{}",
            out.describe()
        );
    }
}

#[test]
fn ring_with_padding_runs_ok() {
    for (_, out) in run_everywhere("ring", &["-l", "2", "-s", "100000"], &[]) {
        one_line(&out, "ring ");
    }
}

#[test]
fn stencil_runs_ok() {
    for (np, out) in run_everywhere("stencil", &["-n", "16", "-m", "12", "-i", "5"], &[]) {
        let l = one_line(&out, "stencil ");
        let f = e2e_tests::fields(l);
        let (px, py) = f["procs"].split_once('x').expect("procs=PXxPY");
        let (px, py): (usize, usize) = (px.parse().unwrap(), py.parse().unwrap());
        assert_eq!(px * py, np, "{l}");
        assert!(px <= py, "{l}");
        assert_eq!(f["grid"], format!("{}x{}", px * 16, py * 12), "{l}");
    }
}

#[test]
fn stencil_checksum_does_not_depend_on_the_rank_count() {
    // One 48x48 global grid split two ways must give the same result.
    let prog = build_app("stencil");
    let run = |np: usize, n: &str, m: &str| {
        let out = Smpirun::new(&prog)
            .platform(platform("fat_tree.toml"))
            .np(np)
            .cfg("smpi/simulate-computation:no")
            .args(["-n", n, "-m", m, "-i", "7"])
            .run();
        out.assert_ok();
        let l = one_line(&out, "stencil ").to_string();
        let f = e2e_tests::fields(&l);
        (f["grid"].to_string(), f["checksum"].to_string())
    };
    // 4 ranks = 2x2 of 24x24, 16 ranks = 4x4 of 12x12: both 48x48
    let a = run(4, "24", "24");
    let b = run(16, "12", "12");
    assert_eq!(a.0, "48x48");
    assert_eq!(a.0, b.0);
    let (ca, cb): (f64, f64) = (a.1.parse().unwrap(), b.1.parse().unwrap());
    assert!(rel_diff(ca, cb) < 1e-10, "checksums {ca} and {cb}");
}

#[test]
fn collectives_run_ok() {
    for (np, out) in run_everywhere("collectives", &["1", "100", "1000"], &[]) {
        let ops = [
            "Barrier",
            "Bcast",
            "Reduce",
            "Allreduce",
            "Gather",
            "Scatter",
            "Allgather",
            "Alltoall",
        ];
        let lines: Vec<&str> = out.lines_starting_with("coll ").collect();
        assert_eq!(lines.len(), ops.len() * 3, "{}", out.describe());
        for l in lines {
            let f = e2e_tests::fields(l);
            assert!(ops.contains(&f["op"]), "{l}");
            let t = field_f64(l, "time");
            // with two ranks or more, every operation exchanges messages and takes time
            assert!(np < 2 || t > 0.0, "{l}\n{}", out.describe());
        }
    }
}

#[test]
fn collectives_default_counts_run_ok() {
    let out = Smpirun::new(build_app("collectives"))
        .platform(platform("fat_tree.toml"))
        .np(64)
        .json()
        .run();
    out.assert_ok();
    check_summary(&out, 64);
    assert_eq!(
        out.lines_starting_with("coll ").count(),
        8 * 3,
        "{}",
        out.describe()
    );
}

#[test]
fn apps_run_on_one_rank() {
    for (app, args) in [
        ("ring", &["-l", "2"][..]),
        ("stencil", &[][..]),
        ("collectives", &["1", "10"][..]),
    ] {
        let out = Smpirun::new(build_app(app))
            .platform(platform("cluster_4.toml"))
            .np(1)
            .args(args.iter().copied())
            .run();
        out.assert_ok();
    }
}

/// `apps/sendrecv_status.c`: the status of each of the four send-receive
/// calls (blocking and MPI-4 non-blocking, plain and `_replace`) is its
/// receive's: source, tag and count of the message that arrived, with
/// `MPI_ANY_SOURCE`/`MPI_ANY_TAG` posted (the non-blocking forms gave an
/// empty status before).
#[test]
fn send_receive_statuses_are_the_receives() {
    let out = Smpirun::new(build_app("sendrecv_status"))
        .platform(platform("cluster_4.toml"))
        .np(4)
        .cfg("smpi/simulate-computation:no")
        .run();
    out.assert_success();
    let lines: Vec<&str> = out.stdout.lines().filter(|l| l.starts_with("MPI_")).collect();
    assert_eq!(lines.len(), 16, "{}", out.describe());
    assert!(lines.iter().all(|l| l.ends_with(" ok")), "{}", out.describe());
}
