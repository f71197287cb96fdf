//! Fuzz target for the model-file parser ([`ModelSet::from_toml_str`]), run as a test for a
//! fixed time (`FUZZ_SECONDS`, default 3 s; see `tests/fuzz-corpus/README.md`).
//!
//! Properties, for every input: loading never panics, never hangs, never allocates more than
//! 1 GiB at once (the harness checks these); a rejected file gets one message naming the file,
//! a line and column or a key; an accepted set holds only sensible values (finite factors, a
//! latency factor that is not negative and a bandwidth factor that is positive, finite
//! overheads) and its kernels give a finite, non-negative duration for any sizes.

#[path = "../../tests/fuzz-corpus/harness.rs"]
mod harness;

use harness::{Target, Verdict};
use models::{ModelError, ModelSet, NoiseRng, PiecewiseFactor};

#[global_allocator]
static ALLOC: harness::TrackingAlloc = harness::TrackingAlloc;

/// The name the input is loaded under: in the crate's directory (the tests' working directory),
/// so that the seeds' `include`s resolve to the shipped files.
const FILE: &str = "fuzz-input.toml";

fn check_error(e: &ModelError) -> Verdict {
    let msg = e.to_string();
    if msg.contains(['\n', '\r']) {
        return Err(format!("message on several lines: `{msg}`"));
    }
    // Errors in an included file name that file.
    if !msg.starts_with(FILE) && !msg.split(':').next().is_some_and(|f| f.ends_with(".toml")) {
        return Err(format!("message without the file name: `{msg}`"));
    }
    let located = match e {
        ModelError::Syntax { line, column, .. } => *line > 0 && *column > 0,
        ModelError::Invalid { line, key, .. } => *line > 0 && !key.is_empty(),
        ModelError::Duplicate { line, .. } => *line > 0,
        ModelError::Io { .. } | ModelError::IncludeCycle { .. } => true,
        _ => false,
    };
    if !located {
        return Err(format!("message without a line or key: `{msg}`"));
    }
    Ok(())
}

fn check_factor(name: &str, f: &PiecewiseFactor, positive: bool) -> Verdict {
    let p = f.piecewise();
    for v in std::iter::once(*p.default_value()).chain(p.chunks().map(|(_, v)| *v)) {
        if !v.is_finite() || v < 0.0 || (positive && v == 0.0) {
            return Err(format!("accepted nonsense: {name} {v}"));
        }
    }
    Ok(())
}

fn check_set(set: &ModelSet) -> Verdict {
    if let Some(net) = &set.network {
        check_factor("latency factor", &net.lat_factor, false)?;
        check_factor("bandwidth factor", &net.bw_factor, true)?;
        for (name, o) in [("os", &net.os), ("or", &net.or), ("ois", &net.ois)] {
            let p = o.piecewise();
            let values = std::iter::once(*p.default_value()).chain(p.chunks().map(|(_, v)| *v));
            for (offset, per_byte) in values {
                if !(offset.is_finite() && per_byte.is_finite()) {
                    return Err(format!("accepted nonsense: {name} ({offset}, {per_byte})"));
                }
            }
            for size in [0.0, 1.0, 65536.0, 1e9] {
                if !o.cost(size).is_finite() {
                    return Err(format!("bad overhead: {name} of {size} B is {}", o.cost(size)));
                }
            }
        }
        let mut rng = NoiseRng::new(set.seed, 1);
        for size in [0.0, 1.0, 8133.0, 1e6] {
            let draw = net.noise.sample(size, &mut rng);
            if !draw.is_finite() {
                return Err(format!("bad network noise: draw {draw} at {size} B"));
            }
        }
    }
    let c = &set.compute;
    for name in c.names() {
        let k = c
            .kernel_id(name)
            .ok_or_else(|| format!("bad kernel: `{name}` is listed but has no id"))?;
        let n = c.signature(k).params.len();
        let mut rng = NoiseRng::for_stream(set.seed, 0, name);
        for size in [0.0, 1.0, 2.0, 100.0, 1e4, 1e9] {
            let params = vec![size; n];
            for host in [0, 1, 5, 1 << 20] {
                for t in [
                    c.duration(k, host, &params, &mut rng),
                    c.duration_without_noise(k, host, &params),
                ] {
                    if t.is_nan() || t < 0.0 {
                        return Err(format!(
                            "bad duration: `{name}` of size {size} on host {host}: {t}"
                        ));
                    }
                }
            }
        }
    }
    Ok(())
}

const WORDS: &[&str] = &[
    "include = [\"default.toml\"]",
    "include = [\"dahu/network.toml\", \"dahu/compute.toml\"]",
    "include = [\"fuzz-input.toml\"]",
    "include = [\".\"]",
    "seed = 18446744073709551615",
    "seed = -1",
    "[about]",
    "[config]",
    "\"smpi/wtime\" = 1e-8",
    "\"smpi/os\" = \"0:1:2\"",
    "\"x\" = [1, 2]",
    "[network]",
    "[[network.range]]",
    "above = 0",
    "above = 8133",
    "upto = 1e999",
    "lat_factor = -1",
    "lat_factor = \"0:1;100:-2\"",
    "bw_factor = 0",
    "bw_factor = \"0:0.5;65536:0\"",
    "bw_factor = nan",
    "os = { offset = 1e-6, per_byte = 1e-9 }",
    "or = [1e308, 1e308]",
    "ois = \"0:1e-6\"",
    "noise = { kind = \"normal\", sigma = 1e-6 }",
    "noise = { kind = \"half_normal\", sigma = { N = 1e-9 } }",
    "noise = { weights = [0.5, 0.5], means = [0, 1e-6], sigmas = [0, 1e-7] }",
    "noise = { kind = \"none\" }",
    "[compute.dgemm]",
    "[compute.dtrsm]",
    "[compute.idamax]",
    "[compute.my_fn]",
    "[compute.\"a.b\"]",
    "kind = \"function\"",
    "kind = \"blas\"",
    "params = [\"M\", \"N\"]",
    "params = [\"a\", \"b\", \"c\", \"d\", \"e\", \"f\", \"g\", \"h\", \"i\"]",
    "model = \"constant\"",
    "model = \"linear\"",
    "model = \"polynomial\"",
    "value = 1e-6",
    "a = 1e-11",
    "b = 0",
    "product = \"M*N*K\"",
    "product = \"M^4294967296\"",
    "coefficients = { MNK = 1e-11, intercept = 2e-12 }",
    "coefficients = { \"M^2*N^2*K^2\" = 1e300 }",
    "piecewise_on = \"M*N*K\"",
    "[[compute.dgemm.range]]",
    "from = 0",
    "to = 100",
    "[[compute.dgemm.host]]",
    "hosts = [0, 1, 16777216]",
    "hosts = [18446744073709551615]",
    "quantum = 1e-320",
    "quantum = 0",
    "source = \"x\"",
    "M^99999999999",
    "MNK",
    "intercept",
];

#[test]
fn model_file() {
    Target::new("model-file", "toml")
        .seed_dir("models", &[".toml"])
        .seed_dir("models/dahu", &[".toml"])
        .seed_dir("apps/hpl/models", &[".toml"])
        .seed_dir("apps/models", &[".toml"])
        .dict(WORDS)
        .nesting("[", "]")
        .nesting("{a=", "}")
        .run(|bytes| {
            let text = String::from_utf8_lossy(bytes);
            match ModelSet::from_toml_str(&text, FILE) {
                Ok(set) => check_set(&set),
                Err(e) => check_error(&e),
            }
        });
}

// ---------------------------------------------------------------------------------------------
// Regression cases: each bug the fuzzing found, with the message it now gets. (Their inputs are
// also in the corpus, `tests/fuzz-corpus/model-file/crash-*`.)

fn error(text: &str) -> String {
    match ModelSet::from_toml_str(text, "bad.toml") {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => {
            let msg = e.to_string();
            assert!(!msg.contains(['\n', '\r']), "{msg}");
            msg
        }
    }
}

const DGEMM: &str = "[compute.dgemm]\nmodel = \"linear\"\na = 1e-11\nb = 0\n";

/// Was an allocation failure of 4 GB (the factors of `M^99999999999` written out), then
/// the degree check.
#[test]
fn huge_exponent_is_an_error() {
    assert_eq!(
        error(&format!("{DGEMM}product = \"M^99999999999\"\n")),
        "bad.toml:5:11: compute.dgemm.product: term `M^99999999999` has degree 99999999999 (at most 6)"
    );
    assert_eq!(
        error(&format!("{DGEMM}product = \"MNK^18446744073709551615\"\n")),
        "bad.toml:5:11: compute.dgemm.product: term `MNK^18446744073709551615` has degree \
         55340232221128654845 (at most 6)"
    );
}

/// Were accepted: a negative latency factor, a zero bandwidth factor (every message then
/// waits forever, reported as a deadlock of the ranks).
#[test]
fn factors_that_cannot_be_are_errors() {
    assert_eq!(
        error("[network]\nlat_factor = \"-1\"\n"),
        "bad.toml:2:14: network.lat_factor: latency factor -1 must not be negative"
    );
    assert_eq!(
        error("[network]\nbw_factor = \"0:0.5;65536:0\"\n"),
        "bad.toml:2:13: network.bw_factor: bandwidth factor 0 must be positive (a message would never end)"
    );
    assert_eq!(
        error("[[network.range]]\nabove = 0\nlat_factor = 1\nbw_factor = -0.5\n"),
        "bad.toml:4:13: network.range[0].bw_factor: bandwidth factor -0.5 must be positive (a message \
         would never end)"
    );
    // A latency factor of 0 is a choice (no latency); so are negative overheads (clamped at 0).
    assert!(ModelSet::from_toml_str("[network]\nlat_factor = 0\nos = \"0:-1e-6:0\"\n", "ok.toml").is_ok());
}

/// Were accepted: costs that overflow to an infinite time.
#[test]
fn overheads_and_noise_that_overflow_are_errors() {
    assert_eq!(
        error("[network]\nos = \"3:0:1e308\"\n"),
        "bad.toml:2:6: network.os: overhead 0 s + 1e308 s/B: the offset must be within ±1e9 s and the \
         per-byte cost within ±1 s/B"
    );
    assert!(
        error("[[network.range]]\nabove = 0\nlat_factor = 1\nbw_factor = 1\nor = [1e10, 0]\n")
            .starts_with("bad.toml:5:6: network.range[0].or: overhead 10000000000 s + 0 s/B")
    );
    assert_eq!(
        error("[network]\nnoise = { kind = \"normal\", sigma = 1e308 }\n"),
        "bad.toml:2:36: network.noise.sigma: sigma 1e308 is above 1e9 s"
    );
    assert!(
        error("[network]\nnoise = { weights = [1], means = [-1e10], sigmas = [0] }\n")
            .contains("network.noise.means: mean -10000000000 is beyond ±1e9 s")
    );
}

/// Was accepted, and every duration of the kernel was NaN (1/quantum is infinite).
#[test]
fn tiny_quantum_is_an_error() {
    assert_eq!(
        error(&format!("{DGEMM}product = \"MNK\"\nquantum = 1e-320\n")),
        "bad.toml:6:11: compute.dgemm.quantum: quantum = 1e-320 is too small (1/quantum is not a finite \
         number)"
    );
}

/// Was a message on two lines (a value with a newline quoted as written).
#[test]
fn messages_stay_on_one_line() {
    assert_eq!(
        error("[compute.k]\nkind=\"\\n\"\n"),
        "bad.toml:2:6: compute.k.kind: unknown kind \"\\n\" (expected \"function\" for a non-BLAS kernel)"
    );
}
