//! Same program, platform and flags ⇒ the same output. Measured computation
//! time varies from run to run, so these runs do not simulate computation
//! (`smpi/simulate-computation:no`), like the SMPI reference runs.

use e2e_tests::{build_app, platform, RunOutput, Smpirun};

fn stencil(plat: &str, np: usize, extra: &[&str]) -> RunOutput {
    let mut r = Smpirun::new(build_app("stencil"))
        .platform(platform(plat))
        .np(np)
        .cfg("smpi/simulate-computation:no")
        .json();
    for c in extra {
        r = r.cfg(c);
    }
    let out = r.args(["-n", "24", "-m", "20", "-i", "8"]).run();
    out.assert_ok();
    out
}

#[track_caller]
fn assert_same(a: &RunOutput, b: &RunOutput) {
    assert_eq!(
        a.stdout,
        b.stdout,
        "two identical runs printed different outputs:\n{}\n{}",
        a.describe(),
        b.describe()
    );
    let (ja, jb) = (a.json(), b.json());
    assert_eq!(
        ja["simulated_time"], jb["simulated_time"],
        "simulated_time differs"
    );
    assert_eq!(
        ja["per_rank"], jb["per_rank"],
        "per-rank finish times / messages differ"
    );
    assert_eq!(ja["events"], jb["events"], "event counts differ");
    // Everything but the `host` part (wall time, memory) is deterministic.
    let strip = |j: &serde_json::Value| {
        let mut j = j.clone();
        j.as_object_mut().expect("an object").remove("host");
        j
    };
    assert_eq!(strip(ja), strip(jb), "the deterministic part of --json differs");
}

#[test]
fn stencil_twice_prints_the_same() {
    for (plat, np) in [("fat_tree.toml", 64), ("cluster_4.toml", 6)] {
        let a = stencil(plat, np, &[]);
        let b = stencil(plat, np, &[]);
        assert_same(&a, &b);
    }
}

#[test]
fn stencil_twice_prints_the_same_under_cm02() {
    let a = stencil("torus_64.toml", 64, &["network/model:CM02"]);
    let b = stencil("torus_64.toml", 64, &["network/model:CM02"]);
    assert_same(&a, &b);
}

#[test]
fn collectives_twice_print_the_same() {
    let run = || {
        let out = Smpirun::new(build_app("collectives"))
            .platform(platform("fat_tree.toml"))
            .np(32)
            .cfg("smpi/simulate-computation:no")
            .args(["1", "1000"])
            .json()
            .run();
        out.assert_ok();
        out
    };
    assert_same(&run(), &run());
}

/// The check: the same 1024-rank run with noise models (network noise
/// and a noisy compute kernel) three times: byte-identical output and
/// deterministic --json fields; another seed changes the times.
#[test]
fn a_1024_rank_run_with_noise_models_is_deterministic() {
    let model = e2e_tests::write_scratch(
        "noisy_1024.toml",
        "[network]\nnoise = { weights = [0.8, 0.2], means = [1e-6, 2e-5], sigmas = [2e-7, 5e-6] }\n",
    );
    let run = |seed: &str| {
        let out = Smpirun::new(build_app("stencil"))
            .platform(platform("fat_tree_1024.toml"))
            .np(1024)
            .cfg("smpi/simulate-computation:no")
            .cfg(&format!("smpi/seed:{seed}"))
            .opt("-model")
            .opt(model.as_os_str())
            .json()
            .args(["-n", "64", "-m", "64", "-i", "4"])
            .run();
        out.assert_ok();
        out
    };
    let (a, b, c) = (run("11"), run("11"), run("11"));
    assert_same(&a, &b);
    assert_same(&a, &c);
    let other = run("12");
    assert_ne!(
        a.json()["simulated_time"],
        other.json()["simulated_time"],
        "the seed moves the noise"
    );
}
