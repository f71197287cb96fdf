//! Timelines (`smpirun -trace`): a Chrome trace-event JSON file with one track
//! per rank whose spans tile each rank's simulated time, a Paje file in date
//! order whose message links are SMPI's, SMPI's `tracing/*` switches, both
//! formats written on every ending, and nothing written when tracing is off.

use e2e_tests::{build_app, platform, scratch_path, RunOutput, Smpirun};

fn ring(trace: &std::path::Path, extra: &[&str]) -> RunOutput {
    let mut r = Smpirun::new(build_app("ring"))
        .platform(platform("cluster_4.toml"))
        .np(4)
        .cfg("smpi/host-speed:1Gf")
        .opt("-trace")
        .opt("-trace-file")
        .opt(trace.as_os_str());
    for c in extra {
        r = r.cfg(c);
    }
    r.json().run()
}

#[test]
fn chrome_json_timeline_tiles_each_ranks_time() {
    let file = scratch_path("ring-timeline.json");
    let out = ring(&file, &["tracing/smpi/computing:yes"]);
    out.assert_success();
    out.assert_stderr_has(&["timeline written to"]);
    let text = std::fs::read_to_string(&file).expect("the timeline file");
    let v: serde_json::Value = serde_json::from_str(&text).expect("valid JSON");
    let events = v["traceEvents"].as_array().expect("traceEvents");
    let tracks: Vec<_> = events.iter().filter(|e| e["name"] == "thread_name").collect();
    assert_eq!(tracks.len(), 4, "one track per rank");
    let finish: Vec<f64> = out.json()["per_rank"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["finish_time"].as_f64().unwrap())
        .collect();
    for (rank, finish) in finish.iter().enumerate() {
        let mut spans: Vec<(f64, f64, String)> = events
            .iter()
            .filter(|e| e["ph"] == "X" && e["tid"] == rank)
            .map(|e| {
                let ts = e["ts"].as_f64().unwrap() * 1e-6;
                (
                    ts,
                    ts + e["dur"].as_f64().unwrap() * 1e-6,
                    e["name"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        spans.sort_by(|a, b| a.0.total_cmp(&b.0));
        assert!(
            spans.iter().any(|s| s.2 == "MPI_Sendrecv" || s.2 == "MPI_Send"),
            "{spans:?}"
        );
        // Point-to-point calls carry their messages: peer, size, tag.
        let next = (rank + 1) % 4;
        let sent = events.iter().any(|e| {
            e["tid"] == rank
                && e["name"] == "MPI_Send"
                && e["args"]["messages"]
                    .as_str()
                    .is_some_and(|m| m.starts_with(&format!("send to {next}, ")) && m.contains(" B, tag "))
        });
        assert!(sent, "rank {rank}: no MPI_Send to {next} with its message");
        // Simulated time passes only in MPI calls and computation: the spans
        // follow each other without gap or overlap from 0 to the rank's end.
        let mut at = 0.0;
        for (start, end, name) in &spans {
            assert!(
                (start - at).abs() < 1e-8,
                "rank {rank}: {name} starts at {start}, previous ended at {at}"
            );
            at = *end;
        }
        assert!(
            (at - finish).abs() < 1e-8,
            "rank {rank}: spans end at {at}, the rank at {finish}"
        );
    }
}

#[test]
fn paje_timeline_is_in_date_order() {
    let file = scratch_path("ring-timeline.trace");
    let out = ring(&file, &[]);
    out.assert_success();
    let text = std::fs::read_to_string(&file).expect("the timeline file");
    assert!(
        text.starts_with("%EventDef PajeDefineContainerType 0"),
        "{}",
        &text[..200]
    );
    let mut last = 0.0;
    let mut pushes = 0;
    for line in text.lines().filter(|l| !l.starts_with('%')) {
        let f: Vec<&str> = line.split_whitespace().collect();
        if matches!(f[0], "7" | "8" | "11" | "12" | "15" | "16") {
            let date: f64 = f[1].parse().unwrap();
            assert!(date >= last, "date goes back: {line}");
            last = date;
        }
        pushes += (f[0] == "11") as usize;
    }
    assert_eq!(pushes, text.matches("\n12 ").count(), "balanced push/pop");
    assert!(text.contains("\"MPI_Sendrecv\"") || text.contains("\"MPI_Send\""));
}

/// PajeNG's `pj_dump` (the Paje tools SimGrid's users read SMPI traces with; Debian's
/// `pajeng`, installed by `.ci/run`) reads the Paje timeline strictly, and finds every call of
/// the ring at nesting level 0: its calls are sequential, including a send that takes no time
/// followed by a receive begun at the same date.
#[test]
fn paje_timeline_is_read_by_pajeng_with_calls_in_sequence() {
    if std::process::Command::new("pj_dump")
        .arg("--help")
        .output()
        .is_err()
    {
        eprintln!("skipped: pj_dump (Debian's pajeng) is not installed; .ci/run installs it");
        return;
    }
    let file = scratch_path("ring-pajeng.trace");
    ring(&file, &["tracing/smpi/computing:yes"]).assert_success();
    let dump = std::process::Command::new("pj_dump")
        .arg(&file)
        .output()
        .expect("pj_dump runs");
    let text = String::from_utf8_lossy(&dump.stdout);
    assert!(
        dump.status.success(),
        "pj_dump rejected the trace: {}",
        String::from_utf8_lossy(&dump.stderr)
    );
    let states: Vec<Vec<&str>> = text
        .lines()
        .filter(|l| l.starts_with("State,"))
        .map(|l| l.split(", ").collect())
        .collect();
    assert!(states.len() > 4 * 20, "{text}");
    for s in &states {
        // State, container, type, start, end, duration, imbrication, value
        assert_eq!(
            s[6].parse::<f64>(),
            Ok(0.0),
            "a call nested in another: {}",
            s.join(", ")
        );
    }
    for rank in 0..4 {
        let calls = states
            .iter()
            .filter(|s| s[1].starts_with(&format!("rank-{rank} ")))
            .count();
        assert!(calls > 20, "rank {rank}: {calls} states\n{text}");
    }
}

#[test]
fn no_timeline_without_trace_and_bad_format_is_an_error() {
    let file = scratch_path("never.json");
    let out = Smpirun::new(build_app("ring"))
        .platform(platform("cluster_4.toml"))
        .np(2)
        .cfg(&format!("tracing/filename:{}", file.display()))
        .run();
    out.assert_success();
    assert!(!file.exists(), "tracing is off by default");
    let bad = ring(&scratch_path("t.x"), &["tracing/format:otf2"]);
    assert_eq!(bad.code, Some(2), "{}", bad.describe());
    bad.assert_stderr_has(&["tracing/format:otf2", "expected auto, json or paje"]);
}

#[test]
fn collectives_carry_their_algorithm() {
    let file = scratch_path("bcast-timeline.json");
    let out = Smpirun::new(e2e_tests::build_c(
        &e2e_tests::apps_dir().join("coll/coll_time.c"),
    ))
    .platform(platform("fat_tree.toml"))
    .np(16)
    .cfg("smpi/simulate-computation:no")
    .cfg("smpi/bcast:binomial_tree")
    .opt("-trace")
    .opt("-trace-file")
    .opt(file.as_os_str())
    .args(["bcast", "65536"])
    .run();
    out.assert_success();
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let bcasts: Vec<_> = v["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["name"] == "MPI_Bcast")
        .collect();
    assert!(!bcasts.is_empty());
    for b in bcasts {
        assert_eq!(b["args"]["algorithm"], "bcast: binomial_tree", "{b}");
    }
}

/// `pj_dump` is installed (Debian's pajeng; `.ci/run` installs it).
fn have_pj_dump() -> bool {
    let ok = std::process::Command::new("pj_dump")
        .arg("--help")
        .output()
        .is_ok();
    if !ok {
        eprintln!("skipped: pj_dump (Debian's pajeng) is not installed; .ci/run installs it");
    }
    ok
}

/// The message links of a Paje file as `pj_dump` reads them: (start, end,
/// from rank, to rank), sorted; container names reduced to `rank-<r>`.
fn links(file: &std::path::Path) -> Vec<String> {
    let dump = std::process::Command::new("pj_dump")
        .arg(file)
        .output()
        .expect("pj_dump runs");
    assert!(
        dump.status.success(),
        "pj_dump rejected {}: {}",
        file.display(),
        String::from_utf8_lossy(&dump.stderr)
    );
    let rank = |c: &str| c.split(' ').next().unwrap_or(c).to_string();
    let mut v: Vec<String> = String::from_utf8_lossy(&dump.stdout)
        .lines()
        .filter(|l| l.starts_with("Link,"))
        .map(|l| {
            // Link, container, type, start, end, duration, value, from, to, key
            let f: Vec<&str> = l.split(", ").collect();
            format!("{} {} {} {}", f[3], f[4], rank(f[7]), rank(f[8]))
        })
        .collect();
    v.sort();
    v
}

/// Each message of the ring is a Paje link from its send to its receive's
/// completion, the same links (dates to SMPI's 6 digits, ranks) as SMPI 3.32
/// writes for the same run when it is installed; with
/// `tracing/smpi/internals` the messages inside the collectives (the ring's
/// barrier and allreduce) are added, again as SMPI's.
#[test]
fn paje_links_are_the_messages_as_smpi_draws_them() {
    if !have_pj_dump() {
        return;
    }
    let xml = e2e_tests::write_scratch(
        "star3.xml",
        "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n\
         <platform version=\"4.1\">\n  <cluster id=\"star\" prefix=\"h-\" suffix=\"\" radical=\"0-2\" \
         speed=\"1Gf\" bw=\"1GBps\" lat=\"10us\"/>\n</platform>\n",
    );
    let ours = |file: &std::path::Path, internals: bool| {
        let mut r = Smpirun::new(build_app("ring"))
            .platform(&xml)
            .np(3)
            .cfg("smpi/simulate-computation:no")
            .opt("-trace")
            .opt("-trace-file")
            .opt(file.as_os_str())
            .args(["1"]);
        if internals {
            r = r.cfg("tracing/smpi/internals:yes");
        }
        r.run().assert_success();
        links(file)
    };
    let plain = ours(&scratch_path("ring-links.trace"), false);
    let inner = ours(&scratch_path("ring-links-internals.trace"), true);
    // 10 laps of 3 messages; the barrier and allreduce add theirs.
    assert_eq!(plain.len(), 30, "{plain:?}");
    assert!(inner.len() > plain.len(), "{inner:?}");
    assert!(plain.iter().all(|l| inner.contains(l)));
    let smpi_ok = std::process::Command::new("smpirun")
        .arg("-version")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("3.32"));
    if !smpi_ok {
        eprintln!("skipped the comparison: SimGrid SMPI 3.32 is not installed");
        return;
    }
    let exe = scratch_path("ring_smpi");
    let mut cc = std::process::Command::new("smpicc");
    cc.arg(e2e_tests::apps_dir().join("ring.c")).arg("-o").arg(&exe);
    let r = e2e_tests::run_command(cc, std::time::Duration::from_secs(120));
    assert_eq!(r.code, Some(0), "SMPI's smpicc\n{}", r.describe());
    for (internals, expected) in [(false, &plain), (true, &inner)] {
        let file = scratch_path(&format!("ring-links-smpi-{internals}.trace"));
        let mut cmd = std::process::Command::new("smpirun");
        cmd.current_dir(exe.parent().unwrap())
            .args(["-np", "3", "-platform"])
            .arg(&xml)
            .args(["-trace", "-trace-file"])
            .arg(&file);
        if internals {
            cmd.arg("--cfg=tracing/smpi/internals:yes");
        }
        cmd.arg(&exe).arg("1");
        let r = e2e_tests::run_command(cmd, std::time::Duration::from_secs(120));
        assert_eq!(r.code, Some(0), "SMPI\n{}", r.describe());
        assert_eq!(&links(&file), expected, "internals: {internals}");
    }
}

/// SMPI's switches: `-trace-grouped` puts each rank's container inside its
/// host's, `-trace-comment`/`-trace-comment-file` write lines at the top,
/// `tracing/smpi/display-sizes` adds sizes to states and links,
/// `tracing/precision` sets the digits of the dates; `pj_dump` reads the
/// result. In JSON every message's flow arrow has both ends. A comment file
/// that cannot be read is an error naming it.
#[test]
fn tracing_switches_change_what_is_written() {
    let comments = e2e_tests::write_scratch("trace-comments.txt", "first line\nsecond line\n");
    let file = scratch_path("ring-switches.trace");
    let out = Smpirun::new(build_app("ring"))
        .platform(platform("cluster_4.toml"))
        .np(8)
        .cfg("smpi/host-speed:1Gf")
        .cfg("tracing/smpi/display-sizes:yes")
        .cfg("tracing/precision:9")
        .opt("-trace")
        .opt("-trace-grouped")
        .opt("-trace-comment")
        .opt("a study of the ring")
        .opt("-trace-comment-file")
        .opt(comments.as_os_str())
        .opt("-trace-file")
        .opt(file.as_os_str())
        .run();
    out.assert_success();
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(
        text.starts_with("# a study of the ring\n# first line\n# second line\n%EventDef"),
        "{}",
        &text[..200]
    );
    // 8 ranks on 4 hosts: two rank containers inside each host container.
    let created = |kind: &str| {
        text.lines()
            .filter(|l| l.starts_with("7 ") && l.split(' ').nth(3) == Some(kind))
            .count()
    };
    assert_eq!(created("CT_Host"), 4, "{text}");
    assert_eq!(text.matches(" CT_Rank host-").count(), 8, "{text}");
    // Sizes: MPI_Send states and message links carry the ring's 8 bytes.
    assert!(text.contains(" \"MPI_Send\" 8\n"), "{text}");
    let starts: Vec<&str> = text.lines().filter(|l| l.starts_with("15 ")).collect();
    assert!(
        !starts.is_empty() && starts.iter().all(|l| l.ends_with(" 8")),
        "{starts:?}"
    );
    // Nine digits after the point.
    let date = text
        .lines()
        .find(|l| l.starts_with("11 "))
        .unwrap()
        .split(' ')
        .nth(1)
        .unwrap();
    assert_eq!(date.split('.').nth(1).map(str::len), Some(9), "{date}");
    if have_pj_dump() {
        assert_eq!(links(&file).len(), starts.len());
    }

    let json = scratch_path("ring-switches.json");
    Smpirun::new(build_app("ring"))
        .platform(platform("cluster_4.toml"))
        .np(8)
        .cfg("smpi/host-speed:1Gf")
        .opt("-trace")
        .opt("-trace-grouped")
        .opt("-trace-file")
        .opt(json.as_os_str())
        .run()
        .assert_success();
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let events = v["traceEvents"].as_array().unwrap();
    let processes = events.iter().filter(|e| e["name"] == "process_name").count();
    assert_eq!(processes, 4, "one process per host");
    let ids = |ph: &str| {
        let mut v: Vec<u64> = events
            .iter()
            .filter(|e| e["ph"] == ph)
            .map(|e| e["id"].as_u64().unwrap())
            .collect();
        v.sort();
        v
    };
    assert_eq!(ids("s").len(), 8 * 10, "8 ranks, 10 laps");
    assert_eq!(ids("s"), ids("f"), "every message's arrow has both ends");

    let bad = Smpirun::new(build_app("ring"))
        .platform(platform("cluster_4.toml"))
        .np(2)
        .opt("-trace")
        .opt("-trace-comment-file")
        .opt("/nonexistent/comments.txt")
        .opt("-trace-file")
        .opt(scratch_path("never.trace").as_os_str())
        .run();
    assert_eq!(bad.code, Some(2), "{}", bad.describe());
    bad.assert_stderr_has(&["tracing/comment-file", "/nonexistent/comments.txt"]);
}
