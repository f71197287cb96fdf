//! Per-rank globals (SMPI's `smpi/privatization:dlopen`, the default): the
//! `privatization` app writes its rank into globals, communicates, and checks
//! that they still hold its own rank. It must pass at 64 ranks with default
//! settings, and fail (its check detects the sharing) with
//! `--cfg=smpi/privatization:no` or `-no-privatize`.

use e2e_tests::{build_app, field_f64, platform, scratch_path, RunOutput, Smpirun};

fn run(np: usize, options: &[&str]) -> RunOutput {
    let mut r = Smpirun::new(build_app("privatization"))
        .platform(platform("fat_tree.toml"))
        .np(np);
    for o in options {
        r = r.opt(*o);
    }
    r.args(["2"]).run()
}

#[track_caller]
fn wrong_ranks(out: &RunOutput) -> f64 {
    let line = out
        .lines_starting_with("privatization ")
        .next()
        .unwrap_or_else(|| panic!("no summary line\n{}", out.describe()));
    field_f64(line, "wrong_ranks")
}

#[test]
fn globals_are_private_by_default_at_64_ranks() {
    let out = run(64, &[]);
    out.assert_ok();
    assert_eq!(wrong_ranks(&out), 0.0, "{}", out.describe());
}

#[test]
fn globals_are_private_with_explicit_dlopen() {
    let out = run(8, &["--cfg=smpi/privatization:dlopen"]);
    out.assert_ok();
}

#[test]
fn globals_are_private_with_file_copies_at_64_ranks() {
    // -keep-temps loads one file copy per rank instead of memfd copies
    let tmp = scratch_path("copies");
    std::fs::create_dir_all(&tmp).unwrap();
    let tmp = tmp.to_str().unwrap().to_string();
    let out = run(64, &["-keep-temps", "-tmpdir", &tmp]);
    out.assert_ok();
    assert_eq!(wrong_ranks(&out), 0.0, "{}", out.describe());
}

#[test]
fn shared_globals_are_detected_without_privatization() {
    for options in [&["--cfg=smpi/privatization:no"][..], &["-no-privatize"][..]] {
        let out = run(64, options);
        out.assert_failure();
        assert_eq!(out.code, Some(1), "every rank returns 1\n{}", out.describe());
        assert_eq!(out.stdout.lines().last(), Some("FAIL"), "{}", out.describe());
        // all ranks share one counter, so every rank sees a wrong value
        assert_eq!(wrong_ranks(&out), 64.0, "{}", out.describe());
        out.assert_stderr_has(&["privatization: rank", "static counter is 64"]);
    }
}

#[test]
fn one_rank_needs_no_privatization() {
    let out = run(1, &["--cfg=smpi/privatization:no"]);
    out.assert_ok();
}

/// The per-rank copies share their code and constants: 128 ranks of a program
/// with 4 MiB of constants, all read by every rank, stay far below 128 copies.
#[test]
fn program_copies_share_their_read_only_segments() {
    let out = Smpirun::new(e2e_tests::build_c(
        &e2e_tests::apps_dir().join("memory/big_code.c"),
    ))
    .platform(platform("fat_tree.toml"))
    .np(128)
    .cfg("smpi/simulate-computation:no")
    .json()
    .run();
    out.assert_success();
    assert!(out.stdout.contains("big_code OK"), "{}", out.describe());
    let pss = out.json()["host"]["peak_pss_kb"].as_u64().expect("peak_pss_kb");
    assert!(
        pss < 128 * 1024,
        "peak PSS {pss} KiB for 128 copies of 4 MiB of constants"
    );
}
