//! Timelines (`smpirun -trace`): a Chrome trace-event JSON file with one track
//! per rank whose spans tile each rank's simulated time, a Paje file in date
//! order, both written on every ending, and nothing written (or slowed) when
//! tracing is off.

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
        if matches!(f[0], "7" | "8" | "11" | "12") {
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
