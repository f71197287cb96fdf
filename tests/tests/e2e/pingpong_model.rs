//! The CM02 model on the simplest platform: two hosts joined by one link of
//! bandwidth B and latency L. Under `--cfg=network/model:CM02
//! --cfg=smpi/simulate-computation:no`, a message of S bytes takes
//! L + (S + 16)/B (16 bytes of envelope), so one timed ping-pong round trip
//! measures
//!
//! ```text
//! rtt = 2·(L + (S + 16)/B) + wtime        (wtime = smpi/wtime, 1e-8 s by default)
//! ```
//!
//! because one MPI_Wtime cost falls between the two readings. With `-i n`
//! round trips the app prints the mean, 2·(L + (S+16)/B) + wtime/n. This holds
//! for detached (< 64 KiB, `smpi/send-is-detached-thresh`) and rendezvous
//! messages alike.
//!
//! The link is SPLITDUPLEX (the route uses its `_UP` half), so the 5% ACK
//! cross-traffic of CM02 lands on the unused `_DOWN` half; a SHARED link gives
//! the same times once `network/crosstraffic:no`.

use e2e_tests::{build_app, field_f64, write_scratch, Smpirun};

/// Envelope bytes added to every message.
const ENVELOPE: f64 = 16.0;
/// Default `smpi/wtime`.
const WTIME: f64 = 1e-8;

struct Link {
    /// Bandwidth as written in the platform file, and in bytes/s.
    bw: (&'static str, f64),
    /// Latency as written in the platform file, and in seconds.
    lat: (&'static str, f64),
    /// `SPLITDUPLEX` or `SHARED`.
    policy: &'static str,
}

const FAST: Link = Link {
    bw: ("1GBps", 1e9),
    lat: ("10us", 1e-5),
    policy: "SPLITDUPLEX",
};
const SLOW: Link = Link {
    bw: ("100Mbps", 12.5e6),
    lat: ("50us", 5e-5),
    policy: "SPLITDUPLEX",
};

fn two_host_platform(link: &Link) -> std::path::PathBuf {
    e2e_tests::two_host_platform(link.bw.0, link.lat.0, link.policy)
}

/// Runs the pingpong app and returns (size, mean rtt) per printed line.
fn pingpong(link: &Link, sizes: &[u64], iters: u32, extra_cfg: &[&str]) -> Vec<(u64, f64)> {
    let mut run = Smpirun::new(build_app("pingpong"))
        .platform(two_host_platform(link))
        .np(2)
        .cfg("network/model:CM02")
        .cfg("smpi/simulate-computation:no");
    for c in extra_cfg {
        run = run.cfg(c);
    }
    let out = run
        .args(["-i".to_string(), iters.to_string()])
        .args(sizes.iter().map(|s| s.to_string()))
        .run();
    out.assert_ok();
    let rows: Vec<(u64, f64)> = out
        .lines_starting_with("pingpong ")
        .map(|l| (field_f64(l, "size") as u64, field_f64(l, "rtt")))
        .collect();
    assert_eq!(
        rows.iter().map(|r| r.0).collect::<Vec<_>>(),
        sizes,
        "{}",
        out.describe()
    );
    rows
}

fn expected_rtt(link: &Link, size: u64, iters: u32, wtime: f64) -> f64 {
    2.0 * (link.lat.1 + (size as f64 + ENVELOPE) / link.bw.1) + wtime / iters as f64
}

#[track_caller]
fn check(link: &Link, sizes: &[u64], iters: u32, extra_cfg: &[&str], wtime: f64) {
    let mut bad = Vec::new();
    for (size, rtt) in pingpong(link, sizes, iters, extra_cfg) {
        let want = expected_rtt(link, size, iters, wtime);
        // printed with 10 significant digits; the model is exact
        if (rtt - want).abs() > 1e-7 * want {
            bad.push(format!("size {size}: rtt {rtt:.9e} s, expected {want:.9e} s"));
        }
    }
    assert!(
        bad.is_empty(),
        "ping-pong on {} B/s, {} s ({}), {iters} round trips, {extra_cfg:?}:\n{}",
        link.bw.1,
        link.lat.1,
        link.policy,
        bad.join("\n")
    );
}

const SMALL: &[u64] = &[0, 1, 100, 1000, 16384, 65535];
const LARGE: &[u64] = &[65536, 100_000, 1 << 20, 16 << 20];

#[test]
fn small_detached_messages_follow_cm02() {
    check(&FAST, SMALL, 1, &[], WTIME);
    check(&SLOW, SMALL, 1, &[], WTIME);
}

#[test]
fn large_rendezvous_messages_follow_cm02() {
    check(&FAST, LARGE, 1, &[], WTIME);
    check(&SLOW, &LARGE[..3], 1, &[], WTIME);
}

#[test]
fn wtime_zero_removes_the_wtime_cost() {
    check(&FAST, &[1, 1000, 1 << 20], 1, &["smpi/wtime:0"], 0.0);
    // and the difference between the two runs is exactly one MPI_Wtime cost
    let with = pingpong(&FAST, &[1000], 1, &[]);
    let without = pingpong(&FAST, &[1000], 1, &["smpi/wtime:0"]);
    let d = with[0].1 - without[0].1;
    assert!(
        (d - WTIME).abs() < 1e-12,
        "rtt difference {d:e} s, expected {WTIME:e} s"
    );
}

#[test]
fn wtime_cost_is_paid_once_per_timed_interval() {
    check(&FAST, &[1, 1000, 1 << 20], 4, &[], WTIME);
}

#[test]
fn wtime_cost_is_configurable() {
    check(&FAST, &[1000], 1, &["smpi/wtime:1e-6"], 1e-6);
}

#[test]
fn shared_link_without_crosstraffic_gives_the_same_times() {
    let shared = Link {
        policy: "SHARED",
        ..FAST
    };
    check(
        &shared,
        &[1, 1000, 1 << 20],
        1,
        &["network/crosstraffic:no"],
        WTIME,
    );
}

/// A model file's `[network] noise` is drawn once per message and added to
/// its latency phase: with a mixture of mean 5 µs (σ 1 µs) the mean round
/// trip over many iterations grows by two means; the same seed gives the same
/// times, another seed others.
#[test]
fn network_noise_of_a_model_file_delays_each_message() {
    let model = write_scratch(
        "noisy_network.toml",
        "[network]\nnoise = { weights = [1.0], means = [5e-6], sigmas = [1e-6] }\n",
    );
    let model = model.display().to_string();
    let seeded = |seed: &str| {
        pingpong(&FAST, &[1000], 400, &[&format!("smpi/seed:{seed}")])
            .into_iter()
            .map(|(_, rtt)| rtt)
            .next()
            .expect("one size")
    };
    let quiet = expected_rtt(&FAST, 1000, 400, WTIME);
    let run = |seed: &str| {
        let out = Smpirun::new(build_app("pingpong"))
            .platform(two_host_platform(&FAST))
            .np(2)
            .cfg("network/model:CM02")
            .cfg("smpi/simulate-computation:no")
            .cfg(&format!("smpi/seed:{seed}"))
            .opt("-model")
            .opt(&model)
            .args(["-i", "400", "1000"])
            .run();
        out.assert_ok();
        let line = out
            .lines_starting_with("pingpong ")
            .next()
            .expect("a result line")
            .to_string();
        field_f64(&line, "rtt")
    };
    let (a, b, c) = (run("1"), run("1"), run("2"));
    assert_eq!(a, b, "same seed, same times");
    assert_ne!(a, c, "another seed, other draws");
    for rtt in [a, c] {
        let extra = rtt - quiet;
        // Two draws per round trip, mean 5 µs each; the mean of 400 round trips
        // has a standard deviation of about 0.07 µs.
        assert!(
            (extra - 1e-5).abs() < 5e-7,
            "noise added {extra:.3e} s per round trip, expected 1e-5"
        );
    }
    // Without the model file the time is the plain model's.
    assert!((seeded("1") - quiet).abs() < 1e-7 * quiet);
}
