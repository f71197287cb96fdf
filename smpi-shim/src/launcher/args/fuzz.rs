//! Fuzz target for the hostfile parser ([`parse_hostfile`]), run as a test for a fixed time
//! (`FUZZ_SECONDS`, default 3 s; see `tests/fuzz-corpus/README.md`).
//!
//! Properties: no panic, no hang, no absurd allocation (a huge slot count is an error, not a
//! list of that many hosts); a rejected file gets one message naming the file and the line (or
//! saying it lists no host); an accepted one gives 1 to 2^20 slots, all hosts of the platform.

use simcore::platform::Platform;

use super::parse_hostfile;
use crate::config::fuzz::harness::Target;

const FILE: &str = "fuzz-hostfile";

/// Eight hosts, two of them with names a hostfile has trouble with.
const PLATFORM: &str = r#"
routing = "full"
[[host]]
id = "node-0"
speed = "1Gf"
[[host]]
id = "node-1"
speed = "1Gf"
[[host]]
id = "a:b"
speed = "1Gf"
[[host]]
id = "é"
speed = "1Gf"
[[link]]
id = "l"
bandwidth = "1GBps"
[[route]]
src = "node-0"
dst = "node-1"
links = ["l"]
[[route]]
src = "node-0"
dst = "a:b"
links = ["l"]
[[route]]
src = "node-0"
dst = "é"
links = ["l"]
[[route]]
src = "node-1"
dst = "a:b"
links = ["l"]
[[route]]
src = "node-1"
dst = "é"
links = ["l"]
[[route]]
src = "a:b"
dst = "é"
links = ["l"]
"#;

#[test]
fn hostfile() {
    let platform =
        Platform::from_toml_str(PLATFORM, "hostfile-platform.toml").unwrap_or_else(|e| panic!("{e}"));
    Target::new("hostfile", "txt")
        .dict(&[
            "node-0",
            "node-1",
            "a:b",
            "a:b:2",
            "é",
            "node-0:4",
            "node-1:0",
            "node-0:-1",
            "node-0 # c",
            "#",
            "node-0:18446744073709551615",
            "node-0:1048576",
            "node-0:1048577",
            "node-2",
            ":",
            " : ",
        ])
        .run(move |bytes| {
            let text = String::from_utf8_lossy(bytes);
            match parse_hostfile(&text, FILE, &platform) {
                Ok(slots) => {
                    if slots.is_empty() || slots.len() > 1 << 20 {
                        return Err(format!("accepted nonsense: {} slots", slots.len()));
                    }
                    match slots.iter().find(|h| h.0 as usize >= platform.hosts.len()) {
                        Some(h) => Err(format!("accepted nonsense: host {}", h.0)),
                        None => Ok(()),
                    }
                }
                Err(msg) => {
                    let located = msg.starts_with(&format!("{FILE}:"))
                        && msg[FILE.len() + 1..].starts_with(|c: char| c.is_ascii_digit());
                    if !located && msg != format!("{FILE}: no host listed") {
                        return Err(format!("message without the line: `{msg}`"));
                    }
                    if msg.contains(['\n', '\r']) {
                        return Err(format!("message on several lines: `{msg}`"));
                    }
                    Ok(())
                }
            }
        });
}

// ---------------------------------------------------------------------------------------------
// Regression cases (their inputs are also in `tests/fuzz-corpus/hostfile/crash-*`).

fn error(text: &str) -> String {
    let platform =
        Platform::from_toml_str(PLATFORM, "hostfile-platform.toml").unwrap_or_else(|e| panic!("{e}"));
    parse_hostfile(text, "hf", &platform).expect_err("rejected")
}

/// Was an allocation failure (a list of 2^64 copies of the host) that aborted smpirun.
#[test]
fn huge_slot_count_is_an_error() {
    assert_eq!(
        error("node-0\nnode-1:18446744073709551615\n"),
        "hf:2: slot count 18446744073709551615 in 'node-1:18446744073709551615': each line gives 1 to \
         1048576 slots, and the whole file at most 1048576"
    );
    assert!(error("node-0:1048576\nnode-1\n").starts_with("hf:2: slot count 1 in 'node-1': "));
    // Was silently no slot.
    assert!(error("node-0:0\n").starts_with("hf:1: slot count 0 in 'node-0:0': each line gives 1 to"));
}

/// Was a message with a raw carriage return in the middle.
#[test]
fn messages_stay_on_one_line() {
    assert_eq!(error("-\r5\n"), "hf:1: host '-\\r5' is not in the platform");
}
