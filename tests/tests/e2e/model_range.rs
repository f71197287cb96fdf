//! A model file's calibrated ranges (`[about.calibrated]`, as `smpi-fit` writes
//! them) are checked on every modelled call: a small program calling
//! `cblas_dgemm` (a piecewise model on K) and a modelled function of its own,
//! run under smpirun with sizes inside and outside the ranges:
//! - inside: no warning, and `extrapolated` in `--json` is an empty object;
//! - outside: one warning block names each kernel, its calls outside out of all
//!   its calls, the range (`K<128`), the term, the extreme seen and the
//!   calibrated interval; `--json` gives the same numbers;
//! - a call with a zero dimension (BLAS's quick return) is never counted;
//! - the same model without the table: no warning, `extrapolated` is null, and
//!   the simulated time is the same to the last digit (the check changes no time).

use std::path::PathBuf;
use std::sync::OnceLock;

use e2e_tests::{build_c, platform, write_scratch, RunOutput, Smpirun};

/// Three dgemm calls of the given sizes and one with M = 0 (a quick return),
/// then `work(w)`, a function the model file models; on every rank.
const PROGRAM: &str = r#"
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

void cblas_dgemm(int, int, int, int, int, int, double, const double *, int, const double *, int, double,
                 double *, int);

volatile double sink;

void work(int n)
{
  double s = 0;
  for (int i = 0; i < n; i++) s += i * 0.5;
  sink = s;
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  int m = atoi(argv[1]), n = atoi(argv[2]), k = atoi(argv[3]), w = atoi(argv[4]);
  static double a[1], b[1], c[1]; /* modelled: never read */
  for (int i = 0; i < 3; i++) cblas_dgemm(102, 111, 111, m, n, k, 1.0, a, m, b, k, 0.0, c, m);
  cblas_dgemm(102, 111, 111, 0, n, k, 1.0, a, 1, b, k, 0.0, c, 1);
  work(w);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) printf("done at %.9f\n", MPI_Wtime());
  MPI_Finalize();
  return 0;
}
"#;

const RANGES: &str = r#"[about]
tool = "hand-written, in the shape smpi-fit writes"
[about.calibrated."dgemm@K<128"]
K = [4.0, 127.0]
M = [4.0, 1000.0]
MNK = [64.0, 100000000.0]
N = [4.0, 1000.0]
[about.calibrated."dgemm@K>=128"]
K = [128.0, 128.0]
M = [1.0, 8000.0]
N = [1.0, 8000.0]
[about.calibrated.work]
n = [10.0, 1000.0]
[about.calibrated.network]
size = [1.0, 1000000.0]
"#;

const MODELS: &str = r#"
[compute.dgemm]
piecewise_on = "K"
[[compute.dgemm.range]]
from = 0.0
to = 128.0
model = "linear"
product = "MNK"
a = 1e-11
b = 2e-7
noise = { kind = "normal", sigma = 1e-8 }
[[compute.dgemm.range]]
from = 128.0
model = "linear"
product = "MNK"
a = 4e-11
b = 0

[compute.work]
kind = "function"
params = ["n"]
model = "linear"
product = "n"
a = 2e-6
b = 0
"#;

/// The program, built once per test process.
fn program() -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT
        .get_or_init(|| build_c(&write_scratch("model_range.c", PROGRAM)))
        .clone()
}

const WARNING: &str = "smpirun: warning: the model extrapolates";

fn run(model: &str, sizes: [u32; 4]) -> RunOutput {
    let model = write_scratch("model_range.toml", model);
    let out = Smpirun::new(program())
        .platform(platform("cluster_4.toml"))
        .np(2)
        .cfg("smpi/simulate-computation:no")
        .opt("-model")
        .opt(model.as_os_str())
        .args(sizes.map(|s| s.to_string()))
        .json()
        .run();
    out.assert_success();
    out
}

fn with_ranges() -> String {
    format!("{RANGES}{MODELS}")
}

#[test]
fn calls_inside_the_calibrated_ranges_give_no_warning() {
    let out = run(&with_ranges(), [100, 100, 64, 500]);
    assert!(!out.stderr.contains(WARNING), "{}", out.describe());
    assert_eq!(
        out.json()["extrapolated"],
        serde_json::json!({}),
        "checked, nothing outside\n{}",
        out.describe()
    );
}

#[test]
fn calls_outside_are_counted_per_kernel_and_term() {
    // M = 2000 is above the K<128 range's 1000; work(5000) above 1000.
    let out = run(&with_ranges(), [2000, 100, 64, 5000]);
    let warnings = out.stderr.matches(WARNING).count();
    assert_eq!(warnings, 1, "one warning block\n{}", out.describe());
    out.assert_stderr_has(&[
        "smpirun: warning: the model extrapolates: 2 kernels were called outside the ranges their models \
         were calibrated on:\n",
        // 2 ranks × 3 calls outside; the M = 0 call of each rank is a quick return.
        // The quick returns last the intercept, 2e-7 s: the calls outside carry ~100 % of the time.
        "\n  dgemm: 6 of 8 calls (100 % of its modelled time) outside the calibrated range (K<128: M up to 2000, \
         calibrated 4–1000)\n",
        "\n  work: 2 of 2 calls (100 % of its modelled time) outside the calibrated range (n up to 5000, calibrated \
         10–1000)\n",
    ]);
    let mut x = out.json()["extrapolated"].clone();
    // The modelled seconds of the calls outside and of all calls (noise σ = 1e-8 s a call).
    let outside = 6.0 * (2000.0 * 100.0 * 64.0 * 1e-11 + 2e-7);
    let seconds = x["dgemm"]["seconds"].as_f64().unwrap();
    let of_seconds = x["dgemm"]["of_seconds"].as_f64().unwrap();
    assert!((seconds - outside).abs() < 1e-7, "{seconds} vs {outside}");
    assert!((of_seconds - seconds - 2.0 * 2e-7).abs() < 1e-7, "{of_seconds}");
    assert_eq!(x["work"]["seconds"], 2.0 * 5000.0 * 2e-6);
    for k in ["dgemm", "work"] {
        let o = x[k].as_object_mut().unwrap();
        o.remove("seconds");
        o.remove("of_seconds");
    }
    assert_eq!(
        x["dgemm"],
        serde_json::json!({
            "calls": 6,
            "of_calls": 8,
            "terms": [{
                "section": "dgemm@K<128",
                "term": "M",
                "calls": 6,
                "min_seen": null,
                "max_seen": 2000.0,
                "calibrated": [4.0, 1000.0],
            }],
        }),
        "{}",
        out.describe()
    );
    assert_eq!(x["work"]["calls"], 2);
    assert_eq!(x["work"]["terms"][0]["term"], "n");
    assert_eq!(x["work"]["terms"][0]["max_seen"], 5000.0);
    assert_eq!(x.as_object().map(|o| o.len()), Some(2), "{x}");
}

#[test]
fn the_range_is_the_piecewise_segment_the_call_uses() {
    // K = 200 uses the K>=128 model, calibrated at K = 128 only; M = 2000 is
    // inside that range (and only outside K<128's). One kernel: one line.
    let out = run(&with_ranges(), [2000, 100, 200, 500]);
    let lines: Vec<&str> = out.stderr.lines().filter(|l| l.contains(WARNING)).collect();
    assert_eq!(
        lines,
        [
            "smpirun: warning: the model extrapolates: dgemm: 6 of 8 calls (100 % of its modelled time) \
             outside the calibrated range (K>=128: K up to 200, calibrated 128–128)"
        ],
        "{}",
        out.describe()
    );
    let x = &out.json()["extrapolated"];
    assert_eq!(x["dgemm"]["terms"][0]["section"], "dgemm@K>=128");
    assert!(x.get("work").is_none(), "{x}");
}

#[test]
fn without_the_table_nothing_is_checked_and_times_are_the_same() {
    let sizes = [2000, 3000, 64, 5000];
    let checked = run(&with_ranges(), sizes);
    let plain = run(MODELS, sizes);
    assert!(checked.stderr.contains(WARNING), "{}", checked.describe());
    assert!(!plain.stderr.contains(WARNING), "{}", plain.describe());
    assert_eq!(plain.json()["extrapolated"], serde_json::Value::Null);
    // The check draws nothing and changes nothing: same time, same output.
    assert_eq!(
        checked.json()["simulated_time"],
        plain.json()["simulated_time"],
        "{}\n{}",
        checked.describe(),
        plain.describe()
    );
    assert_eq!(checked.stdout, plain.stdout);
    // Both MNK (3.84e8 > 1e8) and N (3000 > 1000) extrapolate here, sorted by name.
    checked.assert_stderr_has(&[
        "dgemm: 6 of 8 calls (100 % of its modelled time) outside the calibrated range (K<128: M up to 2000, \
         calibrated 4–1000; K<128: MNK up to 3.84e8, calibrated 64–1e8; K<128: N up to 3000, calibrated 4–1000)",
    ]);
}

#[test]
fn a_malformed_table_is_refused_naming_the_key() {
    let bad = with_ranges().replace("n = [10.0, 1000.0]", "n = [1000.0, 10.0]");
    let model = write_scratch("model_range_bad.toml", &bad);
    let out = Smpirun::new(program())
        .platform(platform("cluster_4.toml"))
        .np(2)
        .opt("-model")
        .opt(model.as_os_str())
        .args(["1", "1", "1", "1"])
        .run();
    out.assert_failure();
    out.assert_stderr_has(&[
        "model_range_bad.toml:13:5: about.calibrated.work.n: min 1000 > max 10: expected [min, max]",
    ]);
}
