//! The real, unmodified HPL built with smpicc (`apps/hpl/build.sh`, which
//! fetches the source on first use), run under smpirun:
//! - with the system BLAS, its residual check passes on 2×2 grids;
//! - with modelled BLAS (`apps/hpl/models/smpi_reference.toml`), a 2×2 run
//!   prints its result line and two runs print it bit for bit the same;
//! - on 1×1 (no communication) with dgemm costing 1 ns per multiply-add and
//!   everything else free, the simulated time is exactly the sum of the dgemm
//!   model times, and HPL reports ≈ 2 Gflop/s (LU does ≈ N³/3 multiply-adds in
//!   dgemm and HPL counts 2N³/3 flops);
//! - folding and function models: a 64-rank program allocating 4 GiB per rank
//!   runs in under 200 MiB, and a modelled function costs exactly its model;
//! - a BLAS the program defines itself is never replaced unless a model file
//!   models the kernel: HPL linked with a stub BLAS that injects the reference
//!   dgemm model (`apps/hpl/simgrid/blas_model.c`) gives the model file's
//!   Gflops, and SimGrid 3.32's time where it is installed;
//! - `xhpl-fast-pipid` (HPL_pipid answered from an index) computes HPL's own
//!   pivot pairs and prints the same output as `xhpl`.

use std::path::PathBuf;
use std::process::Command;
use std::sync::Mutex;
use std::time::Duration;

use e2e_tests::{
    apps_dir, build_c, platform, rel_diff, run_command, smpicc, smpirun, workspace_root, RunOutput, Smpirun,
};

/// Builds (and if needed fetches) HPL once per test process.
fn xhpl() -> PathBuf {
    static BUILT: Mutex<Option<PathBuf>> = Mutex::new(None);
    let mut b = BUILT.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(p) = b.as_ref() {
        return p.clone();
    }
    let mut cmd = Command::new(workspace_root().join("apps/hpl/build.sh"));
    cmd.arg(smpicc());
    let out = run_command(cmd, Duration::from_secs(900));
    assert!(
        out.status.success(),
        "apps/hpl/build.sh failed\n{}",
        out.describe()
    );
    let p = workspace_root().join("apps/hpl/build/xhpl");
    assert!(p.exists(), "no {}", p.display());
    *b = Some(p.clone());
    p
}

/// `gen_dat.sh` options of a 2×2 run, N=2000, NB=64, no residual check, plus `extra`.
fn dat_2x2_n2000<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    let mut dat = vec![
        "--n",
        "2000",
        "--nb",
        "64",
        "--p",
        "2",
        "--q",
        "2",
        "--threshold",
        "-1",
    ];
    dat.extend_from_slice(extra);
    dat
}

/// Writes HPL.dat into a fresh directory and runs xhpl there, on the 64-host fat tree.
fn run_hpl(name: &str, np: usize, dat: &[&str], opts: &[&str]) -> (RunOutput, serde_json::Value) {
    run_hpl_on("fat_tree.toml", name, np, dat, opts)
}

/// [`run_hpl`] on the shipped platform file `platform_file`.
fn run_hpl_on(
    platform_file: &str,
    name: &str,
    np: usize,
    dat: &[&str],
    opts: &[&str],
) -> (RunOutput, serde_json::Value) {
    run_program_on(&xhpl(), platform_file, name, np, dat, opts)
}

/// [`run_hpl_on`] with another HPL binary (e.g. `apps/hpl/build/xhpl-fast-pipid`).
fn run_program_on(
    program: &std::path::Path,
    platform_file: &str,
    name: &str,
    np: usize,
    dat: &[&str],
    opts: &[&str],
) -> (RunOutput, serde_json::Value) {
    let dir = std::env::temp_dir().join(format!("e2e-hpl-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    let mut gen = Command::new(workspace_root().join("apps/hpl/gen_dat.sh"));
    gen.args(dat).arg("-o").arg(dir.join("HPL.dat"));
    let g = run_command(gen, Duration::from_secs(30));
    assert!(g.status.success(), "gen_dat.sh failed\n{}", g.describe());
    let json = dir.join("run.json");
    let mut cmd = Command::new(smpirun());
    cmd.current_dir(&dir)
        .arg("-platform")
        .arg(platform(platform_file))
        .arg("-np")
        .arg(np.to_string())
        .args(opts)
        .arg("--json")
        .arg(&json)
        .arg(program);
    let out = run_command(cmd, Duration::from_secs(300));
    let v = std::fs::read_to_string(&json)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(serde_json::Value::Null);
    let _ = std::fs::remove_dir_all(&dir);
    (out, v)
}

fn result_line(out: &RunOutput) -> String {
    out.stdout
        .lines()
        .find(|l| l.starts_with("WR") || l.starts_with("WC"))
        .unwrap_or_else(|| panic!("no HPL result line\n{}", out.describe()))
        .to_string()
}

fn reference_model() -> String {
    workspace_root()
        .join("apps/hpl/models/smpi_reference.toml")
        .display()
        .to_string()
}

#[test]
fn real_blas_residual_check_passes() {
    let (out, _) = run_hpl(
        "real",
        4,
        &[
            "--n", "500", "--nb", "32", "--p", "2", "--q", "2", "--bcast", "1", "--swap", "0",
        ],
        &[
            "--cfg=smpi/simulate-computation:no",
            "--cfg=smpi/blas-mode:compute",
        ],
    );
    out.assert_success();
    assert!(out.stdout.contains("PASSED"), "{}", out.describe());
}

/// `apps/hpl/build/xhpl-fast-pipid` (HPL with `pipid_indexed.c`'s HPL_pipid) computes what HPL's
/// own HPL_pipid computes: `pipid_check` finds K and IPID identical on 8,000 pivot vectors of
/// every shape, with no call falling back to HPL's code; and a real-BLAS 2×2 run with real
/// pivoting (NB = 64, so the index is used) prints the same output, residual included, with the
/// same simulated time as `xhpl`.
#[test]
fn indexed_pipid_gives_hpls_output() {
    let build = xhpl().parent().expect("build dir").to_path_buf();
    let mut check = Command::new(smpirun());
    check
        .arg("-platform")
        .arg(platform("small_star.toml"))
        .args(["-np", "1", "--cfg=smpi/simulate-computation:no", "-quiet"])
        .arg(build.join("pipid_check"))
        .arg("200");
    let out = run_command(check, Duration::from_secs(120));
    out.assert_success();
    assert!(
        out.stdout.contains(
            "pipid_check: 8000 cases, K and IPID identical to HPL's HPL_pipid; 0 took the fallback"
        ),
        "{}",
        out.describe()
    );
    let dat = [
        "--n", "1500", "--nb", "64", "--p", "2", "--q", "2", "--bcast", "1", "--swap", "0",
    ];
    let opts = [
        "--cfg=smpi/simulate-computation:no",
        "--cfg=smpi/blas-mode:compute",
    ];
    let run = |program: &str| {
        let (out, json) = run_program_on(&build.join(program), "fat_tree.toml", program, 4, &dat, &opts);
        out.assert_success();
        assert!(out.stdout.contains("PASSED"), "{}", out.describe());
        let time = json["simulated_time"].as_f64().expect("simulated_time");
        // The HPL lines, without the wall-clock dates HPL prints.
        let lines: Vec<String> = out
            .stdout
            .lines()
            .filter(|l| !l.contains("HPL_pdgesv() start") && !l.contains("HPL_pdgesv() end"))
            .map(str::to_string)
            .collect();
        (lines, time)
    };
    let (plain, plain_time) = run("xhpl");
    let (indexed, indexed_time) = run("xhpl-fast-pipid");
    assert_eq!(plain, indexed);
    assert_eq!(plain_time, indexed_time);
}

/// A small Stampede-shaped run (apps/hpl/bench.py's Stampede scenarios at 4×4, N = 16384):
/// NB = 1024, Crout, long-modified broadcast, depth 0, binary exchange, on the Stampede platform
/// with its kernel models and the bench's folding thresholds. It completes, and SimGrid's event
/// order and the plain one give the same HPL output and the same simulated time but for the
/// rounding of sums taken in another order (4e-11 relative).
#[test]
fn stampede_shaped_hpl_is_the_same_under_both_event_orders() {
    let dat = [
        "--n",
        "16384",
        "--nb",
        "1024",
        "--p",
        "4",
        "--q",
        "4",
        "--bcast",
        "5",
        "--depth",
        "0",
        "--swap",
        "0",
        "--pfact",
        "1",
        "--rfact",
        "1",
        "--threshold",
        "-1",
    ];
    let model = workspace_root()
        .join("apps/hpl/models/stampede.toml")
        .display()
        .to_string();
    let run = |order: &str| {
        let order = format!("--cfg=smpi/event-order:{order}");
        let (out, json) = run_hpl_on(
            "stampede.toml",
            &format!("stampede-{order}"),
            16,
            &dat,
            &[
                "--cfg=smpi/simulate-computation:no",
                "--cfg=smpi/auto-shared-malloc-thresh:134217728",
                "--cfg=smpi/auto-shared-malloc-cow-thresh:262144",
                &order,
                "-model",
                &model,
            ],
        );
        out.assert_success();
        (
            result_line(&out),
            json["simulated_time"].as_f64().expect("simulated_time"),
        )
    };
    let (simgrid_line, simgrid_time) = run("simgrid");
    let (fifo_line, fifo_time) = run("fifo");
    assert!(simgrid_line.contains("16384  1024     4     4"), "{simgrid_line}");
    assert_eq!(simgrid_line, fifo_line);
    assert!(
        rel_diff(simgrid_time, fifo_time) < 1e-9,
        "{simgrid_time} vs {fifo_time}"
    );
    // The models' dgemm runs at 1,206 Gflop/s per node: HPL cannot go faster on 16 nodes.
    let gflops: f64 = simgrid_line.split_whitespace().last().unwrap().parse().unwrap();
    assert!(gflops > 0.0 && gflops < 16.0 * 1206.0, "{simgrid_line}");
}

#[test]
fn model_mode_2x2_is_deterministic() {
    let dat = dat_2x2_n2000(&["--bcast", "1", "--swap", "0"]);
    let model = reference_model();
    let opts = [
        "--cfg=smpi/simulate-computation:no",
        "--cfg=smpi/host-speed:1Gf",
        "--cfg=smpi/auto-shared-malloc-thresh:1048576",
        "-model",
        model.as_str(),
    ];
    let (a, ja) = run_hpl("model-a", 4, &dat, &opts);
    let (b, _) = run_hpl("model-b", 4, &dat, &opts);
    a.assert_success();
    b.assert_success();
    assert_eq!(result_line(&a), result_line(&b));
    let t = ja["simulated_time"].as_f64().expect("simulated_time");
    assert!(t > 0.0);
    assert!(ja["kernels"]["dgemm"]["calls"].as_u64().unwrap_or(0) > 0, "{ja}");
    // HPL's own functions named by the model file are interposed in the real xhpl (linking
    // programs with -Bsymbolic once disabled this silently): one HPL_pdmatgen per rank.
    assert_eq!(ja["kernels"]["HPL_pdmatgen"]["calls"].as_u64(), Some(4), "{ja}");
    assert!(
        ja["kernels"]["HPL_dlaswp01T"]["calls"].as_u64().unwrap_or(0) > 0,
        "{ja}"
    );
    assert!(!a.stderr.contains("never applies"), "{}", a.describe());
}

/// Folding (the matrix folded globally, the panels copy-on-write) must not
/// change what HPL does: the simulated time equals that of a run on ordinary
/// memory, for every broadcast, swap and look-ahead variant.
#[test]
fn folding_leaves_hpl_simulated_time_unchanged() {
    let model = reference_model();
    for (bcast, swap, depth) in [
        ("0", "0", "0"),
        ("1", "0", "1"),
        ("2", "1", "1"),
        ("4", "2", "0"),
        ("5", "1", "1"),
    ] {
        let dat = dat_2x2_n2000(&["--bcast", bcast, "--swap", swap, "--depth", depth]);
        let time = |name: &str, folding: &[&str]| {
            let mut opts = vec![
                "--cfg=smpi/simulate-computation:no",
                "--cfg=smpi/host-speed:1Gf",
                "-model",
                model.as_str(),
            ];
            opts.extend_from_slice(folding);
            let (out, json) = run_hpl(&format!("{name}-{bcast}{swap}{depth}"), 4, &dat, &opts);
            out.assert_success();
            json["simulated_time"].as_f64().expect("simulated_time")
        };
        let plain = time("plain", &[]);
        let folded = time(
            "folded",
            &[
                "--cfg=smpi/auto-shared-malloc-thresh:4194304",
                "--cfg=smpi/auto-shared-malloc-cow-thresh:262144",
            ],
        );
        assert_eq!(plain, folded, "BCAST {bcast} SWAP {swap} DEPTH {depth}");
    }
}

#[test]
fn one_rank_time_is_the_sum_of_kernel_models() {
    let model = std::env::temp_dir().join(format!("e2e-hpl-1ns-{}.toml", std::process::id()));
    let mut text = std::fs::read_to_string(reference_model()).expect("reference model");
    text = text.replacen("a = 1.029e-11\nb = 1.981e-12", "a = 1e-9\nb = 0", 1);
    assert!(
        text.contains("a = 1e-9"),
        "the reference model's dgemm line changed"
    );
    std::fs::write(&model, text).expect("write model");
    let n = 1200.0_f64;
    let (out, j) = run_hpl(
        "one",
        1,
        &[
            "--n",
            "1200",
            "--nb",
            "64",
            "--p",
            "1",
            "--q",
            "1",
            "--threshold",
            "-1",
        ],
        &[
            "--cfg=smpi/simulate-computation:no",
            "--cfg=smpi/wtime:0",
            "-model",
            model.to_str().expect("utf-8"),
        ],
    );
    let _ = std::fs::remove_file(&model);
    out.assert_success();
    let sim = j["simulated_time"].as_f64().expect("simulated_time");
    let dgemm = j["kernels"]["dgemm"]["seconds"].as_f64().expect("dgemm seconds");
    // No communication, no other cost: the clock is the sum of the dgemm models.
    assert!(
        rel_diff(sim, dgemm) < 1e-9,
        "simulated {sim} vs sum of dgemm models {dgemm}"
    );
    // Σ M·N·K over the factorization ≈ N³/3 (plus lower-order terms).
    let madds = dgemm / 1e-9;
    assert!(
        rel_diff(madds, n * n * n / 3.0) < 0.05,
        "Σ MNK = {madds}, N³/3 = {}",
        n * n * n / 3.0
    );
    let gflops: f64 = result_line(&out)
        .split_whitespace()
        .nth(6)
        .and_then(|g| g.parse().ok())
        .expect("Gflops");
    assert!(
        (gflops - 2.0).abs() < 0.1,
        "HPL reports {gflops} Gflop/s, expected ≈ 2"
    );
}

#[test]
fn folding_4_gib_per_rank_on_64_ranks_fits_in_200_mib() {
    let prog = build_c(&apps_dir().join("memory/fold.c"));
    let out = Smpirun::new(prog)
        .platform(platform("fat_tree.toml"))
        .np(64)
        .cfg("smpi/simulate-computation:no")
        .cfg("smpi/auto-shared-malloc-thresh:1048576")
        .cfg("smpi/shared-malloc-blocksize:67108864")
        .json()
        .args(["4"])
        .run();
    out.assert_success();
    assert!(out.stdout.contains("private data OK"), "{}", out.describe());
    let pss = out.json()["host"]["peak_pss_kb"].as_u64().expect("peak_pss_kb");
    assert!(pss < 200 * 1024, "peak PSS {pss} KiB");
}

/// `smpi/shared-malloc-hugepage`: the folded block is made of 2 MiB huge pages
/// (here 64 MiB = 32 of them). Where the machine has that many free huge
/// pages the 64 × 4 GiB run works as without them; where it has not, smpirun
/// must say so, not fall back silently.
#[test]
fn folding_on_huge_pages_works_or_fails_clearly() {
    let free_huge = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            m.lines()
                .find(|l| l.starts_with("HugePages_Free:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        })
        .unwrap_or(0);
    let prog = build_c(&apps_dir().join("memory/fold.c"));
    let out = Smpirun::new(prog)
        .platform(platform("fat_tree.toml"))
        .np(64)
        .cfg("smpi/simulate-computation:no")
        .cfg("smpi/auto-shared-malloc-thresh:1048576")
        .cfg("smpi/shared-malloc-blocksize:67108864")
        .cfg("smpi/shared-malloc-hugepage:/dev/hugepages")
        .json()
        .args(["4"])
        .run();
    if free_huge >= 32 {
        out.assert_success();
        assert!(out.stdout.contains("private data OK"), "{}", out.describe());
        let pss = out.json()["host"]["peak_pss_kb"].as_u64().expect("peak_pss_kb");
        assert!(pss < 200 * 1024, "peak PSS {pss} KiB");
    } else {
        eprintln!("only {free_huge} free huge pages: checking the error path");
        out.assert_failure();
        out.assert_stderr_has(&["huge pages"]);
    }
}

/// Copy-on-write folding behaves as real memory that costs only the pages
/// written: written pages keep their data, real data received into
/// never-written pages arrives, never-written pages read and send zeros
/// (calloc), and freed buffers are folded again before reuse (a recycled
/// buffer of each size from 2 to 17 MiB would keep 152 MiB otherwise).
#[test]
fn copy_on_write_folding_keeps_written_data_and_refolds_freed_buffers() {
    let prog = build_c(&apps_dir().join("memory/fold_cow.c"));
    let out = Smpirun::new(prog)
        .platform(platform("fat_tree.toml"))
        .np(64)
        .cfg("smpi/simulate-computation:no")
        .cfg("smpi/auto-shared-malloc-thresh:33554432")
        .cfg("smpi/auto-shared-malloc-cow-thresh:1048576")
        .json()
        .run();
    out.assert_success();
    assert!(out.stdout.contains("copy-on-write data OK"), "{}", out.describe());
    let pss = out.json()["host"]["peak_pss_kb"].as_u64().expect("peak_pss_kb");
    assert!(pss < 100 * 1024, "peak PSS {pss} KiB");
}

/// A buffer of a quarter more 1 MiB folding blocks than `vm.max_map_count`
/// allows (80 GiB under Linux's default 65,530; more where the machine's
/// setting was raised, as for the Stampede runs): smpirun must say so and what
/// to change.
#[test]
fn folding_beyond_the_mapping_limit_fails_clearly() {
    let limit: usize = std::fs::read_to_string("/proc/sys/vm/max_map_count")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(65_530);
    let gib = (limit * 5 / 4).div_ceil(1024).to_string();
    let prog = build_c(&apps_dir().join("memory/fold.c"));
    let out = Smpirun::new(prog)
        .platform(platform("fat_tree.toml"))
        .np(64)
        .cfg("smpi/simulate-computation:no")
        .cfg("smpi/auto-shared-malloc-thresh:1048576")
        .args([gib.as_str()])
        .run();
    out.assert_failure();
    out.assert_stderr_has(&["vm.max_map_count", "smpi/shared-malloc-blocksize"]);
}

#[test]
fn function_model_by_name_costs_exactly_its_model() {
    let prog = build_c(&apps_dir().join("models/model_work.c"));
    let model = apps_dir().join("models/work_model.toml");
    let out = Smpirun::new(prog)
        .platform(platform("cluster_4.toml"))
        .np(2)
        .cfg("smpi/simulate-computation:no")
        .opt("-model")
        .opt(model.as_os_str())
        .args(["1000"])
        .run();
    out.assert_success();
    // work(n) is modelled at 2 µs per unit; dgemm 64³ at 1.029e-11·MNK + 1.981e-12.
    assert!(
        out.stdout.contains("work(1000) took 2.000000000e-03 s"),
        "{}",
        out.describe()
    );
    let dgemm = 1.029e-11 * 64.0 * 64.0 * 64.0 + 1.981e-12;
    let printed: f64 = out
        .stdout
        .split("dgemm 64^3 took ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no dgemm time\n{}", out.describe()));
    assert!(
        rel_diff(printed, dgemm) < 1e-8,
        "dgemm took {printed}, model says {dgemm}"
    );
    // In model mode no real work is done: c stays 0.
    assert!(out.stdout.contains("c[0]=0"), "{}", out.describe());
}

/// The "took" value the program printed after `label`.
fn printed_seconds(out: &RunOutput, label: &str) -> f64 {
    out.stdout
        .split(label)
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no `{label}` time\n{}", out.describe()))
}

#[test]
fn a_blas_function_the_program_defines_is_its_own_unless_a_model_names_it() {
    let prog = build_c(&apps_dir().join("models/own_blas.c"));
    let run = |opts: &[&str]| {
        Smpirun::new(&prog)
            .platform(platform("cluster_4.toml"))
            .np(2)
            .args(opts.iter().copied())
            .run()
    };
    // No model: the program's stub runs (1 ns per multiply-add), not smpirun's BLAS.
    let stub = 4.0 * 1e-9 * 512f64.powi(3);
    let out = run(&[]);
    out.assert_success();
    let took = printed_seconds(&out, "4 dgemm 512^3 took");
    // Within the cost of the closing MPI_Wtime (smpi/wtime, 10 ns).
    assert!(
        (took - stub).abs() < 2e-8,
        "took {took}, the stub says {stub}\n{}",
        out.describe()
    );
    assert!(!out.stderr.contains("replaces it"), "{}", out.describe());

    // A model file that models dgemm: the user asked, the model replaces the stub, and the run says so.
    let model = reference_model();
    let out = Smpirun::new(&prog)
        .platform(platform("cluster_4.toml"))
        .np(2)
        .opt("-model")
        .opt(&model)
        .run();
    out.assert_success();
    out.assert_stderr_has(&["defines cblas_dgemm itself", "the model of dgemm replaces it"]);
    let modelled = 4.0 * (1.029e-11 * 512f64.powi(3) + 1.981e-12);
    let took = printed_seconds(&out, "4 dgemm 512^3 took");
    assert!(
        (took - modelled).abs() < 2e-8,
        "took {took}, the model says {modelled}"
    );

    // The same model with the kernel forced to compute: the program's own function again.
    let out = run(&["-model", &model, "--cfg=smpi/blas-compute:dgemm"]);
    out.assert_success();
    let took = printed_seconds(&out, "4 dgemm 512^3 took");
    assert!((took - stub).abs() < 2e-8, "took {took}, the stub says {stub}");
}

#[test]
fn real_blas_without_simulated_computation_says_so_once() {
    let prog = build_c(&apps_dir().join("models/model_work.c"));
    let out = Smpirun::new(prog)
        .platform(platform("cluster_4.toml"))
        .np(2)
        .cfg("smpi/simulate-computation:no")
        .cfg("smpi/blas-mode:compute")
        .args(["10"])
        .run();
    out.assert_success();
    let warnings = out
        .stderr
        .matches("leaves its time out of the simulated time")
        .count();
    assert_eq!(warnings, 1, "{}", out.describe());
}

/// `apps/hpl/simgrid/run.sh <sim> <args>`: the HPL time it prints (exact for
/// the blas_model.c builds, from the Gflops otherwise) and HPL's Gflops field.
fn hpl_run_sh(sim: &str, args: &[&str]) -> (f64, String) {
    let mut cmd = Command::new(workspace_root().join("apps/hpl/simgrid/run.sh"));
    cmd.arg(sim)
        .args(args)
        .env("HOSTFILE", "none")
        .env("OURS_SMPIRUN", smpirun())
        .env("OURS_XHPL", xhpl());
    let out = run_command(cmd, Duration::from_secs(600));
    assert!(out.status.success(), "run.sh {sim} failed\n{}", out.describe());
    let field = |key: &str| {
        out.stdout
            .split(key)
            .nth(1)
            .and_then(|r| r.split_whitespace().next())
            .unwrap_or_else(|| panic!("no {key} in run.sh output\n{}", out.describe()))
            .to_string()
    };
    let time = field("time=");
    let time = time
        .trim_start_matches('~')
        .parse()
        .unwrap_or_else(|_| panic!("run.sh {sim}: time={time}\n{}", out.describe()));
    (time, field("gflops="))
}

/// Builds HPL with `apps/hpl/simgrid/blas_model.c`, a BLAS stub that injects
/// the reference dgemm model with `smpi_execute_benched`, using `smpicc`.
fn build_stub_hpl(smpicc: &std::path::Path, variant: &str) {
    let _ = xhpl(); // fetches the HPL sources
    let mut cmd = Command::new(workspace_root().join("apps/hpl/simgrid/build.sh"));
    cmd.env("SG_SMPICC", smpicc).env("VARIANT", variant);
    let out = run_command(cmd, Duration::from_secs(900));
    assert!(
        out.status.success(),
        "simgrid/build.sh failed\n{}",
        out.describe()
    );
}

#[test]
fn hpl_with_its_own_blas_stub_gets_the_stubs_time() {
    // The stub's dgemm costs what the reference model file says, so the stub
    // build without a model and the plain build with the model file must give
    // the same time; smpirun's real BLAS in place of the stub gave 3x the Gflops.
    build_stub_hpl(&smpicc(), "ours");
    let args = ["--n", "4000", "--nb", "128", "--p", "2", "--q", "2"];
    let (stub, stub_gflops) = hpl_run_sh("ours-bm", &args);
    let (_, modelled_gflops) = hpl_run_sh("ours", &args);
    assert_eq!(stub_gflops, modelled_gflops, "stub build vs model file");
    let flops = 2.0 / 3.0 * 4000f64.powi(3) + 1.5 * 4000f64.powi(2);
    let gflops = flops / stub / 1e9;
    assert!(
        gflops < 400.0,
        "{gflops} Gflops: more than the stub's dgemm model allows"
    );
    // And SimGrid 3.32 with the same stub, where it is installed.
    let sg_smpicc = std::path::Path::new("/usr/bin/smpicc");
    if !sg_smpicc.exists() || !std::path::Path::new("/usr/bin/smpirun").exists() {
        eprintln!("SimGrid not installed: stub HPL not compared with SMPI");
        return;
    }
    build_stub_hpl(sg_smpicc, "");
    let (sg, _) = hpl_run_sh("sg", &args);
    assert_eq!(stub, sg, "stub HPL: ours {stub} s, SimGrid {sg} s");
}

/// `apps/hpl/bench.py`'s checks for the Stampede scenarios: under Linux's default
/// vm.max_map_count the full run is refused before it starts, naming the setting and the
/// sysctl that raises it, and runs once it is raised; the grid's measured points and the
/// reference scenarios pass; the shared matrix's fold block grows only when 1 MiB blocks would
/// not fit in the mappings left (4 MiB for the full run, 1 MiB for the points measured so far).
#[test]
fn hpl_bench_says_what_the_full_stampede_run_needs_before_it_starts() {
    let script = r#"
import sys
sys.path.insert(0, sys.argv[1])
import bench
err = bench.mappings_error(77, 78, 3875000, 1024, 65530)
assert err and "vm.max_map_count = 65530" in err and "sysctl -w vm.max_map_count=262144" in err, err
assert bench.mappings_error(77, 78, 3875000, 1024, 262144) is None
for p, q, n, nb in [(16, 32, 500000, 1024), (32, 32, 500000, 1024), (16, 32, 1000000, 1024), (64, 64, 200000, 128)]:
    assert bench.mappings_error(p, q, n, nb, 65530) is None, (p, q, n)
    assert not any("blocksize" in c for c in bench.folding_cfg(p, q, n, nb, 65530)), (p, q, n)
assert bench.folding_cfg(77, 78, 3875000, 1024, 65530)[-1] == "--cfg=smpi/shared-malloc-blocksize:4194304"
print("ok")
"#;
    run_python_check(script);
}

/// `apps/hpl/grid_report.py` (the Stampede grid's table and growth exponents): on bench results
/// that follow wall ∝ ranks^1.2 · N^1.7 and PSS ∝ ranks^0.8 · N^0.5 exactly, it finds those
/// exponents, keeps only the grid's points (errors and other scenarios left out) and prints a
/// table row per point, with the HPL binary and the date a result names; the measured points
/// kept in `apps/hpl/results/stampede-grid.json` give one dated row each.
#[test]
fn hpl_grid_report_fits_the_growth_exponents() {
    let script = r#"
import json, subprocess, sys, tempfile
sys.path.insert(0, sys.argv[1])
import grid_report as g
rows = [{"name": "stampede-16x16-100k", "wall_s": 1, "pss_mb": 1, "maxrss_mb": 1, "simulated_s": 1, "gflops": 1},
        {"name": "stampede-4096-4M", "error": "timeout"}]
for ranks in (512, 1024, 2048):
    for n in (500000, 1000000, 2000000):
        rows.append({"name": f"stampede-{ranks}-{n / 1e6:g}M", "wall_s": 3.0 * ranks ** 1.2 * (n / 1e6) ** 1.7,
                     "pss_mb": 0.2 * ranks ** 0.8 * (n / 1e6) ** 0.5, "maxrss_mb": 1024.0, "simulated_s": 1.0,
                     "gflops": 1.0, "cmd": "smpirun ... /x/xhpl-fast-pipid"})
rows[-1].update(binary="xhpl", date="2026-11-27")
f = tempfile.NamedTemporaryFile("w", suffix=".json", delete=False)
json.dump(rows, f)
f.close()
pts = g.grid_points([f.name])
assert len(pts) == 9, pts
_, b, c, worst = g.fit_power_law(pts, "wall_s")
assert abs(b - 1.2) < 1e-9 and abs(c - 1.7) < 1e-9 and worst < 1e-9, (b, c, worst)
_, b, c, _ = g.fit_power_law(pts, "pss_mb")
assert abs(b - 0.8) < 1e-9 and abs(c - 0.5) < 1e-9, (b, c)
assert g.fit_power_law(pts[:3], "wall_s") is None
out = subprocess.run([sys.executable, sys.argv[1] + "/grid_report.py", f.name], capture_output=True, text=True, check=True).stdout
assert out.count("`xhpl-fast-pipid` | ? |") == 8 and out.count("`xhpl` | 2026-11-27 |") == 1, out
assert "wall time ∝ ranks^1.20 · N^1.70 over 9 points" in out, out
# The measured points kept in the repository: one dated row each.
kept = json.load(open(sys.argv[1] + "/results/stampede-grid.json"))
out = subprocess.run([sys.executable, sys.argv[1] + "/grid_report.py", sys.argv[1] + "/results/stampede-grid.json"],
                     capture_output=True, text=True, check=True).stdout
rows = [l for l in out.splitlines() if l.startswith("| ") and l.split("|")[1].strip()[0].isdigit()]
assert len(rows) == len(kept) >= 5, out
assert sorted(r.split("|")[-2].strip() for r in rows) == sorted(k["date"] for k in kept), out
print("ok")
"#;
    run_python_check(script);
}

/// Runs a Python check with `apps/hpl` as its `sys.argv[1]`; it must print "ok" and exit 0.
fn run_python_check(script: &str) {
    let mut c = Command::new("python3");
    c.arg("-c").arg(script).arg(workspace_root().join("apps/hpl"));
    let out = run_command(c, Duration::from_secs(60));
    assert_eq!(out.code, Some(0), "{}", out.describe());
    assert_eq!(out.stdout.trim(), "ok", "{}", out.describe());
}
