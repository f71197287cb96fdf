//! Unit tests of the calibrated ranges: reading `[about.calibrated]`, the check
//! inside and outside, piecewise sections, zero dimensions, the report and the
//! messages of malformed tables.

use crate::ModelSet;

use super::*;

fn set(toml: &str) -> ComputeModels {
    match ModelSet::from_toml_str(toml, "test.toml") {
        Ok(s) => s.compute,
        Err(e) => panic!("{e}"),
    }
}

fn err(toml: &str) -> String {
    match ModelSet::from_toml_str(toml, "test.toml") {
        Ok(_) => panic!("accepted:\n{toml}"),
        Err(e) => e.to_string(),
    }
}

/// A piecewise dgemm (three ranges on K, as smpi-fit writes it), a named
/// function with a product term, and a kernel without calibrated ranges.
const FITTED: &str = r#"
[about]
tool = "smpi-fit"
[about.calibrated.HPL_dlaswp04T]
M0 = [0.0, 1002.0]
M1 = [9.0, 1024.0]
"M1*N" = [10220.0, 4192688.0]
N = [28.0, 8168.0]
[about.calibrated."dgemm@K<128"]
K = [4.0, 127.0]
M = [4.0, 6115.0]
MNK = [64.0, 1304035200.0]
N = [4.0, 6115.0]
[about.calibrated."dgemm@K=128"]
K = [128.0, 128.0]
M = [1.0, 8158.0]
MNK = [128.0, 4264321920.0]
N = [1.0, 8158.0]
[about.calibrated."dgemm@K>=129"]
K = [135.0, 7775.0]
M = [64.0, 7775.0]
MNK = [36045000.0, 8589934592.0]
N = [64.0, 7775.0]
[about.calibrated.network]
size = [1.0, 9948532.0]

[compute.HPL_dlaswp04T]
kind = "function"
params = ["M0", "M1", "N"]
model = "linear"
product = "M1*N"
a = 2.5e-9
b = 0

[compute.dgemm]
piecewise_on = "K"
[[compute.dgemm.range]]
from = 0.0
to = 128.0
model = "linear"
product = "MNK"
a = 4.4e-11
b = 2e-7
[[compute.dgemm.range]]
from = 128.0
to = 129.0
model = "linear"
product = "MNK"
a = 4.0e-11
b = 7e-6
[[compute.dgemm.range]]
from = 129.0
model = "linear"
product = "MNK"
a = 3.6e-11
b = 0

[compute.daxpy]
model = "linear"
product = "N"
a = 8e-10
b = 2e-6
"#;

/// Checks one call, as smpirun does: with its modelled duration.
fn check(c: &ComputeModels, t: &mut Extrapolations, name: &str, params: &[f64]) {
    let id = c.kernel_id(name).unwrap();
    c.check_calibrated(id, params, c.duration_without_noise(id, 0, params), t);
}

#[test]
fn calls_inside_their_range_are_not_counted() {
    let c = set(FITTED);
    assert!(c.is_calibrated());
    let mut t = c.extrapolations();
    check(&c, &mut t, "dgemm", &[100.0, 200.0, 64.0]); // K<128
    check(&c, &mut t, "dgemm", &[8000.0, 4000.0, 128.0]); // K=128: M up to 8158
    check(&c, &mut t, "dgemm", &[1000.0, 1000.0, 1000.0]); // K>=129
    check(&c, &mut t, "HPL_dlaswp04T", &[0.0, 100.0, 1000.0]); // M0 = 0 is calibrated
    check(&c, &mut t, "daxpy", &[1e12]); // no ranges: never checked
    assert_eq!(t, c.extrapolations(), "nothing recorded");
    assert!(t.report(&c).is_empty());
}

/// (section, term, calls, min seen, max seen).
type Row<'a> = (&'a str, &'a str, u64, Option<f64>, Option<f64>);

#[test]
fn the_range_of_a_piecewise_kernel_is_the_segment_used() {
    let c = set(FITTED);
    let mut t = c.extrapolations();
    // M = 8000 is inside K=128's range but outside K<128's.
    check(&c, &mut t, "dgemm", &[8000.0, 100.0, 64.0]);
    check(&c, &mut t, "dgemm", &[8000.0, 100.0, 128.0]);
    // K = 130 uses the K>=129 segment, calibrated from K = 135; M = 10 below 64.
    check(&c, &mut t, "dgemm", &[10.0, 4000.0, 130.0]);
    // Far above: N and MNK too.
    check(&c, &mut t, "dgemm", &[40000.0, 40000.0, 64.0]);
    let r = t.report(&c);
    assert_eq!(r.len(), 1);
    let d = &r[0];
    assert_eq!(d.kernel, "dgemm");
    assert_eq!(d.calls, 3);
    let id = c.kernel_id("dgemm").unwrap();
    let outside: f64 = [
        [8000.0, 100.0, 64.0],
        [10.0, 4000.0, 130.0],
        [40000.0, 40000.0, 64.0],
    ]
    .iter()
    .map(|p| c.duration_without_noise(id, 0, p))
    .sum();
    assert_eq!(
        d.seconds, outside,
        "the modelled time of the calls outside, not of the one inside"
    );
    let terms: Vec<Row> = d
        .terms
        .iter()
        .map(|x| {
            (
                x.section.as_str(),
                x.term.as_str(),
                x.calls,
                x.min_seen,
                x.max_seen,
            )
        })
        .collect();
    assert_eq!(
        terms,
        [
            ("dgemm@K<128", "M", 2, None, Some(40000.0)),
            ("dgemm@K<128", "MNK", 1, None, Some(40000.0 * 40000.0 * 64.0)),
            ("dgemm@K<128", "N", 1, None, Some(40000.0)),
            ("dgemm@K>=129", "K", 1, Some(130.0), None),
            ("dgemm@K>=129", "M", 1, Some(10.0), None),
            ("dgemm@K>=129", "MNK", 1, Some(10.0 * 4000.0 * 130.0), None),
        ]
    );
    assert_eq!(d.terms[0].calibrated, [4.0, 6115.0]);
    assert_eq!(
        d.describe(7, 2.0 * d.seconds),
        "dgemm: 3 of 7 calls (50 % of its modelled time) outside the calibrated range (K<128: M up to 40000, calibrated 4–6115; \
         K<128: MNK up to 1.02e11, calibrated 64–1.3e9; K<128: N up to 40000, calibrated 4–6115; \
         K>=129: K down to 130, calibrated 135–7775; K>=129: M down to 10, calibrated 64–7775; \
         K>=129: MNK down to 5.2e6, calibrated 3.6e7–8.59e9)"
    );
}

#[test]
fn a_named_function_is_checked_on_its_product_terms() {
    let c = set(FITTED);
    let mut t = c.extrapolations();
    // M1*N = 1024 * 8168 > 4192688 although M1 and N are both inside.
    check(&c, &mut t, "HPL_dlaswp04T", &[5.0, 1024.0, 8168.0]);
    let r = t.report(&c);
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].terms.len(), 1);
    assert_eq!(r[0].terms[0].term, "M1*N");
    assert_eq!(r[0].terms[0].max_seen, Some(1024.0 * 8168.0));
    assert_eq!(
        r[0].describe(1, r[0].seconds),
        "HPL_dlaswp04T: 1 of 1 call (100 % of its modelled time) outside the calibrated range (M1*N up to 8.36e6, calibrated 10220–4.19e6)"
    );
}

#[test]
fn a_zero_dimension_is_not_an_extrapolation() {
    let c = set(FITTED);
    let mut t = c.extrapolations();
    // BLAS's quick return: smpi-fit leaves these calls out of the fit.
    check(&c, &mut t, "dgemm", &[0.0, 100.0, 64.0]);
    check(&c, &mut t, "dgemm", &[40000.0, 0.0, 64.0]);
    check(&c, &mut t, "HPL_dlaswp04T", &[5.0, 0.0, 100.0]);
    assert!(t.report(&c).is_empty());
}

#[test]
fn the_check_does_not_change_durations() {
    let with = set(FITTED);
    let start = FITTED.find("[compute.HPL_dlaswp04T]").unwrap();
    let without = set(&FITTED[start..]);
    assert!(!without.is_calibrated());
    for p in [[10.0, 20.0, 64.0], [9000.0, 9000.0, 128.0], [1.0, 1.0, 5000.0]] {
        let k = with.kernel_id("dgemm").unwrap();
        assert_eq!(
            with.duration_without_noise(k, 0, &p).to_bits(),
            without.duration_without_noise(k, 0, &p).to_bits()
        );
    }
}

#[test]
fn a_whole_kernel_section_covers_every_range() {
    let c = set(&FITTED.replace(
        "[about.calibrated.\"dgemm@K<128\"]\nK = [4.0, 127.0]\nM = [4.0, 6115.0]\nMNK = [64.0, 1304035200.0]\nN = [4.0, 6115.0]\n[about.calibrated.\"dgemm@K=128\"]\nK = [128.0, 128.0]\nM = [1.0, 8158.0]\nMNK = [128.0, 4264321920.0]\nN = [1.0, 8158.0]\n[about.calibrated.\"dgemm@K>=129\"]\nK = [135.0, 7775.0]\nM = [64.0, 7775.0]\nMNK = [36045000.0, 8589934592.0]\nN = [64.0, 7775.0]\n",
        "[about.calibrated.dgemm]\nM = [1.0, 100.0]\n",
    ));
    let mut t = c.extrapolations();
    check(&c, &mut t, "dgemm", &[200.0, 1.0, 1.0]);
    check(&c, &mut t, "dgemm", &[200.0, 1.0, 128.0]);
    check(&c, &mut t, "dgemm", &[200.0, 1.0, 1000.0]);
    check(&c, &mut t, "dgemm", &[50.0, 1e9, 1000.0]);
    let r = t.report(&c);
    assert_eq!(r[0].calls, 3);
    assert_eq!(r[0].terms[0].section, "dgemm");
    assert_eq!(
        r[0].describe(4, 4000.0 * r[0].seconds),
        "dgemm: 3 of 4 calls (0.025 % of its modelled time) outside the calibrated range (M up to 200, calibrated 1–100)"
    );
}

#[test]
fn ranges_in_an_included_file_apply_to_its_kernels() {
    let dir = std::env::temp_dir().join(format!("models-calibrated-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("fit.toml"), FITTED).unwrap();
    let top = dir.join("top.toml");
    std::fs::write(
        &top,
        "include = [\"fit.toml\"]\n[compute.dscal]\nmodel = \"constant\"\nvalue = 1e-7\n",
    )
    .unwrap();
    let c = ModelSet::load(&top).unwrap().compute;
    let mut t = c.extrapolations();
    check(&c, &mut t, "dgemm", &[8000.0, 100.0, 64.0]);
    check(&c, &mut t, "dscal", &[1e9]);
    let r = t.report(&c);
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].kernel, "dgemm");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn files_without_the_table_check_nothing() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    for f in ["default.toml", "dahu.toml"] {
        let c = ModelSet::load(&root.join(f)).unwrap().compute;
        assert!(!c.is_calibrated(), "{f}");
    }
    let c = set("[about]\nsource = \"by hand\"\n[compute.dscal]\nmodel = \"constant\"\nvalue = 1e-7\n");
    assert!(!c.is_calibrated());
}

const KERNEL: &str = "[compute.dgemm]\nmodel = \"linear\"\nproduct = \"MNK\"\na = 1e-11\nb = 0\n";

#[test]
fn malformed_tables_are_errors_naming_the_key() {
    let cases: &[(&str, &str)] = &[
        (
            "[about.calibrated.dgemm]\nM = [10.0, 1.0]\n",
            "test.toml:2:5: about.calibrated.dgemm.M: min 10 > max 1: expected [min, max]",
        ),
        (
            "[about.calibrated.dgemm]\nM = 3\n",
            "test.toml:2:5: about.calibrated.dgemm.M: found integer: expected [min, max]",
        ),
        (
            "[about.calibrated.dgemm]\nM = [1, 2, 3]\n",
            "test.toml:2:5: about.calibrated.dgemm.M: 3 values: expected [min, max]",
        ),
        (
            "[about.calibrated.dgemm]\nM = [1, \"x\"]\n",
            "about.calibrated.dgemm.M: not two finite numbers",
        ),
        (
            "[about.calibrated.dgemm]\nQ = [1, 2]\n",
            "test.toml:2:5: about.calibrated.dgemm.Q: unknown variable `Q`",
        ),
        (
            "[about.calibrated.dgemm]\nintercept = [1, 2]\n",
            "about.calibrated.dgemm.intercept: a calibrated range is for a term with at least one variable",
        ),
        (
            "[about.calibrated.dgemm]\nMN = [1, 2]\n\"N*M\" = [1, 3]\n",
            "about.calibrated.dgemm.\"N*M\": term `N*M` is the same term as `MN`",
        ),
        (
            "[about.calibrated.dtrsm]\nM = [1, 2]\n",
            "test.toml:1:1: about.calibrated.dtrsm: no [compute.dtrsm] in this file",
        ),
        (
            "[about.calibrated.\"dgemm@K<128\"]\nM = [1, 2]\n",
            "test.toml:1:1: about.calibrated.\"dgemm@K<128\": `dgemm` is not piecewise",
        ),
        (
            "[about.calibrated.network]\nbytes = [1, 2]\n",
            "about.calibrated.network.bytes: unknown quantity `bytes` of the network's calibrated range",
        ),
        (
            "[about]\ncalibrated = 3\n",
            "test.toml:2:14: invalid type: integer `3`, expected a map",
        ),
    ];
    for (about, want) in cases {
        let e = err(&format!("{about}{KERNEL}"));
        assert!(e.contains(want), "{about}\n got: {e}\nwant: {want}");
    }
}

#[test]
fn a_range_section_must_name_an_existing_range() {
    let cases: &[(&str, &str)] = &[
        ("dgemm@K<129", "no range of compute.dgemm is `K<129` (its ranges, from the first `from`: [0, 128), [128, 129), [129, ...))"),
        ("dgemm@K=127", "no range of compute.dgemm is `K=127`"),
        ("dgemm@K>=130", "no range of compute.dgemm is `K>=130`"),
        ("dgemm@M<128", "`M` is not the feature compute.dgemm.piecewise_on selects ranges by"),
        ("dgemm@K~3", "cannot read the range `K~3`"),
    ];
    for (name, want) in cases {
        let text = FITTED.replace("dgemm@K<128", name);
        let e = err(&text);
        assert!(e.contains(want), "{name}\n got: {e}\nwant: {want}");
        assert!(e.contains(&format!("about.calibrated.\"{name}\"")), "{e}");
    }
    // A range smpi-fit dropped (too few calls) is covered by its lower
    // neighbour, whose name keeps its own upper bound: `K<100` is the first range.
    let c = set(&FITTED.replace("dgemm@K<128", "dgemm@K<100"));
    assert!(c.is_calibrated());
    // `[a,b)` names a middle range too, and two names of one range clash.
    let c = set(&FITTED.replace("dgemm@K=128", "dgemm@K[128,129)"));
    assert!(c.is_calibrated());
    let e = err(&FITTED.replace("dgemm@K<128", "dgemm@K[128,129)"));
    assert!(e.contains("the same range as about.calibrated."), "{e}");
    let e = err(&FITTED.replace(
        "[about.calibrated.HPL_dlaswp04T]",
        "[about.calibrated.dgemm]\nM = [1, 2]\n[about.calibrated.HPL_dlaswp04T]",
    ));
    assert!(
        e.contains("the whole kernel is already calibrated by about.calibrated.dgemm"),
        "{e}"
    );
}

#[test]
fn numbers_are_readable() {
    assert_eq!(readable(4.0), "4");
    assert_eq!(readable(6115.0), "6115");
    assert_eq!(readable(40000.0), "40000");
    assert_eq!(readable(1304035200.0), "1.3e9");
    assert_eq!(readable(5.12345e10), "5.12e10");
    assert_eq!(readable(0.5), "0.5");
    assert_eq!(readable(1234.5678), "1230");
    assert_eq!(readable(0.000123456), "1.23e-4");
    assert_eq!(readable(-3.0), "-3");
    // A value just outside a bound gets the digits that tell them apart.
    assert_eq!(readable_apart(1304035201.0, 1304035200.0), "1.304035201e9");
    assert_eq!(readable_apart(2e9, 1304035200.0), "2e9");
}

#[test]
fn term_values_are_the_polynomial_terms_to_the_bit() {
    // Products beyond 2^53 round: the check must round as the model does.
    let (m, n, k) = (3_000_001.0f64, 2_999_999.0f64, 1_234_567.0f64);
    let exact = 1.0 * m * n * k;
    let model = format!(
        "[compute.dgemm]\nmodel = \"polynomial\"\ncoefficients = {{ MNK = 1.0 }}\n\
         [about.calibrated.dgemm]\nMNK = [1.0, {exact:?}]\n"
    );
    let c = set(&model);
    let id = c.kernel_id("dgemm").unwrap();
    assert_eq!(
        c.duration_without_noise(id, 0, &[m, n, k]).to_bits(),
        exact.to_bits()
    );
    let mut t = c.extrapolations();
    c.check_calibrated(id, &[m, n, k], exact, &mut t);
    assert!(t.report(&c).is_empty(), "at the maximum itself: inside");
    let below = f64::from_bits(exact.to_bits() - 1);
    let c = set(&model.replace(&format!("{exact:?}]"), &format!("{below:?}]")));
    let mut t = c.extrapolations();
    c.check_calibrated(id, &[m, n, k], exact, &mut t);
    assert_eq!(t.report(&c)[0].terms[0].max_seen, Some(exact));
}
