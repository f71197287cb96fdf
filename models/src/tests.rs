//! Tests of model-file loading: the shipped sets, includes, SMPI strings versus
//! TOML ranges, and every bad-input message.

use super::*;

fn manifest(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(p)
}

#[test]
fn default_set_is_smpi_default() {
    let set = ModelSet::load(&manifest("default.toml")).unwrap();
    assert_eq!(set.network, Some(NetworkModel::smpi_default()));
    assert!(set.compute.is_empty());
    assert_eq!(set.seed, 0);
    assert!(set.config.is_empty());
}

#[test]
fn dahu_set_loads() {
    let set = ModelSet::load(&manifest("dahu.toml")).unwrap();
    let net = set.network.as_ref().unwrap();
    assert_eq!(net.bw_factor.value(8133.0), 0.4709912642540426);
    assert_eq!(net.bw_factor.value(8134.0), 0.6770561715947873);
    assert_eq!(net.lat_factor.value(1e6), 129.24904864614737);
    assert_eq!(
        net.os.cost(100.0),
        2.9654918472829634e-07 + 100.0 * 9.636195922971908e-11
    );
    assert_eq!(net.os.cost(8134.0), 0.0);
    assert_eq!(set.config_value("smpi/async-small-thresh"), Some("8133"));
    assert_eq!(set.config_value("smpi/wtime"), Some("0.000005094848181818182"));
    assert_eq!(set.seed, 42);
    assert_eq!(set.files.len(), 3);
    let names: Vec<&str> = set.compute.names().collect();
    assert!(names.contains(&"dgemm") && names.contains(&"HPL_dlaswp04T"));
    let k = set.compute.kernel_id("dgemm").unwrap();
    let t = set.compute.duration_without_noise(k, 0, &[100.0, 200.0, 300.0]);
    assert_eq!(t, 1.029e-11 * 6e6 + 1.981e-12);
}

fn load(text: &str) -> ModelSet {
    match ModelSet::from_toml_str(text, "t.toml") {
        Ok(s) => s,
        Err(e) => panic!("{e}"),
    }
}

fn err(text: &str) -> String {
    match ModelSet::from_toml_str(text, "t.toml") {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e.to_string(),
    }
}

/// A fresh directory under the system temp dir for include tests.
fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("models-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn smpi_strings_equal_toml_ranges() {
    let strings = load(
        r#"
[network]
lat_factor = "0:1.135;8133:29.85;15831:30.27"
bw_factor = "15831:0.709;0:0.471;8133:0.677"
os = "0:2.965e-07:9.636e-11;8133:0:0;15831:1e-6:0"
ois = "0:1us:0;8133:2e-6:1e-10;15831:0:0"
"#,
    );
    let ranges = load(
        r#"
[[network.range]]
above = 0
upto = 8133
lat_factor = 1.135
bw_factor = 0.471
os = { offset = 2.965e-07, per_byte = 9.636e-11 }
ois = [1e-6, 0]
[[network.range]]
above = 8133
lat_factor = 29.85
bw_factor = 0.677
os = [0, 0]
ois = { offset = 2e-6, per_byte = 1e-10 }
[[network.range]]
above = 15831
lat_factor = 30.27
bw_factor = 0.709
os = [1e-6, 0]
ois = [0, 0]
"#,
    );
    assert_eq!(strings.network, ranges.network);
    // `or` is absent in both: zero.
    assert_eq!(ranges.network.as_ref().unwrap().or, Overhead::zero());
    // The SMPI default strings, written as ranges.
    let mut text = String::new();
    let lat = PiecewiseFactor::parse_smpi(SMPI_DEFAULT_LAT_FACTOR).unwrap();
    let bw = PiecewiseFactor::parse_smpi(SMPI_DEFAULT_BW_FACTOR).unwrap();
    for ((b, l), (_, w)) in lat.piecewise().chunks().zip(bw.piecewise().chunks()) {
        text += &format!("[[network.range]]\nabove = {b}\nlat_factor = {l}\nbw_factor = {w}\nos = [0, 0]\n");
    }
    let mut m = load(&text).network.unwrap();
    let d = NetworkModel::smpi_default();
    assert_eq!((&m.lat_factor, &m.bw_factor), (&d.lat_factor, &d.bw_factor));
    for s in [0.0, 1.0, 257.0, 258.0, 65472.0, 65473.0, 1e9] {
        assert_eq!(m.os.cost(s), 0.0);
    }
    m.os = d.os.clone();
    assert_eq!(m, d);
}

#[test]
fn smpi_option_names_are_accepted_in_network() {
    let a = load("[network]\n\"smpi/lat-factor\" = \"0:2\"\n\"network/bandwidth-factor\" = 0.97\n\"smpi/or\" = \"0:1e-6:0\"\n");
    let b = load("[network]\nlat_factor = \"0:2\"\nbw_factor = 0.97\nor = \"0:1e-6:0\"\n");
    assert_eq!(a.network, b.network);
}

#[test]
fn network_noise_ranges_and_default() {
    let s = load(
        r#"
[network]
noise = { kind = "normal", sigma = 1e-7 }
[[network.range]]
above = 0
lat_factor = 1
bw_factor = 1
[[network.range]]
above = 1000
lat_factor = 1
bw_factor = 1
noise = { weights = [0.9, 0.1], means = [0, 1e-5], sigmas = [1e-7, 1e-6] }
"#,
    );
    let n = &s.network.unwrap().noise;
    assert_eq!(n.law(0.0), Some(&Mixture::normal(0.0, 1e-7).unwrap()));
    assert_eq!(n.law(1000.0), Some(&Mixture::normal(0.0, 1e-7).unwrap()));
    assert_eq!(n.law(1001.0).unwrap().weights(), [0.9, 0.1]);
    // Mixture proportions over 1e5 draws.
    let mut rng = NoiseRng::for_stream(1, 0, "network");
    let slow = (0..100_000).filter(|_| n.sample(5000.0, &mut rng) > 5e-6).count() as f64 / 1e5;
    assert!((slow - 0.1).abs() < 0.002, "{slow}");
}

#[test]
fn config_values_become_strings() {
    let s =
        load("[config]\n\"smpi/a\" = 8133\n\"smpi/b\" = 1.5e-6\n\"smpi/c\" = \"auto\"\n\"smpi/d\" = true\n");
    assert_eq!(s.config_value("smpi/a"), Some("8133"));
    assert_eq!(s.config_value("smpi/b").unwrap().parse::<f64>().unwrap(), 1.5e-6);
    assert_eq!(s.config_value("smpi/c"), Some("auto"));
    assert_eq!(s.config_value("smpi/d"), Some("true"));
    assert!(s.network.is_none());
}

#[test]
fn readme_example_parses() {
    let readme = include_str!("../README.md");
    let start = readme
        .find("```toml\ninclude")
        .expect("README has the format example")
        + 8;
    let end = start + readme[start..].find("```").unwrap();
    let text = readme[start..end].replace("include = [\"network.toml\", \"compute.toml\"]", "");
    let s = load(&text);
    assert_eq!(s.seed, 42);
    let c = &s.compute;
    let names: Vec<&str> = c.names().collect();
    assert_eq!(names, ["HPL_dlaswp04T", "daxpy", "dgemm", "dgemv", "dtrsm"]);
    assert!(c.is_calibrated(), "[about.calibrated.dgemm]");
    let dgemm = c.kernel_id("dgemm").unwrap();
    assert_eq!(
        c.duration_without_noise(dgemm, 4, &[10.0, 10.0, 10.0]),
        1.1e-11 * 1000.0 + 1.981e-12
    );
    assert_eq!(
        c.duration_without_noise(dgemm, 7, &[10.0, 10.0, 10.0]),
        1.029e-11 * 1000.0 + 1.981e-12
    );
    let net = s.network.unwrap();
    assert_eq!(net.lat_factor.value(8134.0), 29.85);
    assert_eq!(net.lat_factor.value(8133.0), 1.135);
    assert_eq!(net.bw_factor.value(0.0), 0.97);
    assert_eq!(net.or.cost(100.0), 1.375e-6 + 100.0 * 8.456e-11);
    assert_eq!(net.or.cost(8134.0), 0.0);
    assert_eq!(net.os.cost(8133.0), 2.965e-07 + 8133.0 * 9.636e-11);
    assert_eq!(net.noise.law(100.0).unwrap().weights(), [0.7, 0.3]);
    assert_eq!(net.noise.law(10000.0).unwrap().weights(), [0.9, 0.1]);
}

#[test]
fn include_resolves_relative_paths_and_merges() {
    let d = temp_dir("include");
    std::fs::create_dir_all(d.join("sub")).unwrap();
    std::fs::write(
        d.join("main.toml"),
        "include = [\"sub/net.toml\", \"sub/compute.toml\"]\nseed = 9\n",
    )
    .unwrap();
    std::fs::write(
        d.join("sub/net.toml"),
        "[network]\nlat_factor = 2\n[config]\n\"smpi/x\" = 1\n",
    )
    .unwrap();
    std::fs::write(
        d.join("sub/compute.toml"),
        "include = [\"more.toml\"]\n[compute.dgemm]\nmodel = \"constant\"\nvalue = 1\n",
    )
    .unwrap();
    std::fs::write(
        d.join("sub/more.toml"),
        "[compute.dtrsm]\nmodel = \"constant\"\nvalue = 2\n",
    )
    .unwrap();
    let s = ModelSet::load(&d.join("main.toml")).unwrap();
    assert_eq!(s.seed, 9);
    assert_eq!(s.network.as_ref().unwrap().lat_factor.value(5.0), 2.0);
    assert_eq!(s.config_value("smpi/x"), Some("1"));
    assert_eq!(s.compute.names().collect::<Vec<_>>(), ["dgemm", "dtrsm"]);
    let files: Vec<String> = s
        .files
        .iter()
        .map(|f| f.strip_prefix(&d).unwrap().display().to_string())
        .collect();
    assert_eq!(
        files,
        ["sub/net.toml", "sub/more.toml", "sub/compute.toml", "main.toml"]
    );
    // from_toml_str resolves includes relative to the name it is given.
    let text = std::fs::read_to_string(d.join("main.toml")).unwrap();
    let s2 = ModelSet::from_toml_str(&text, &d.join("main.toml").display().to_string()).unwrap();
    assert_eq!(s2.compute, ModelSet::load(&d.join("main.toml")).unwrap().compute);
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn include_errors() {
    let d = temp_dir("include-errors");
    let p = |f: &str| d.join(f).display().to_string();
    // Cycle.
    std::fs::write(d.join("a.toml"), "include = [\"b.toml\"]\n").unwrap();
    std::fs::write(d.join("b.toml"), "include = [\"a.toml\"]\n").unwrap();
    let e = ModelSet::load(&d.join("a.toml")).unwrap_err().to_string();
    let a = d.join("a.toml").canonicalize().unwrap();
    let b = d.join("b.toml").canonicalize().unwrap();
    assert_eq!(
        e,
        format!(
            "{}: include cycle: {} -> {} -> {}",
            p("b.toml"),
            a.display(),
            b.display(),
            a.display()
        )
    );
    // Duplicate definitions across files.
    std::fs::write(
        d.join("c.toml"),
        "include = [\"d.toml\"]\n\n[compute.dgemm]\nmodel = \"constant\"\nvalue = 1\n",
    )
    .unwrap();
    std::fs::write(
        d.join("d.toml"),
        "[compute.dgemm]\nmodel = \"constant\"\nvalue = 2\n",
    )
    .unwrap();
    let e = ModelSet::load(&d.join("c.toml")).unwrap_err().to_string();
    assert_eq!(
        e,
        format!(
            "{}:3:1: compute.dgemm is already defined in {}",
            p("c.toml"),
            p("d.toml")
        )
    );
    std::fs::write(d.join("e.toml"), "include = [\"f.toml\"]\nseed = 1\n").unwrap();
    std::fs::write(d.join("f.toml"), "seed = 2\n").unwrap();
    let e = ModelSet::load(&d.join("e.toml")).unwrap_err().to_string();
    assert_eq!(
        e,
        format!("{}:2:8: seed is already defined in {}", p("e.toml"), p("f.toml"))
    );
    std::fs::write(
        d.join("g.toml"),
        "include = [\"h.toml\"]\n[network]\nlat_factor = 1\n",
    )
    .unwrap();
    std::fs::write(d.join("h.toml"), "[network]\nbw_factor = 1\n").unwrap();
    let e = ModelSet::load(&d.join("g.toml")).unwrap_err().to_string();
    assert!(
        e.starts_with(&format!(
            "{}:2:1: network is already defined in {}",
            p("g.toml"),
            p("h.toml")
        )),
        "{e}"
    );
    std::fs::write(d.join("i.toml"), "include = [\"j.toml\"]\n[config]\n\"k\" = 1\n").unwrap();
    std::fs::write(d.join("j.toml"), "[config]\n\"k\" = 2\n").unwrap();
    let e = ModelSet::load(&d.join("i.toml")).unwrap_err().to_string();
    assert_eq!(
        e,
        format!(
            "{}:3:7: config.\"k\" is already defined in {}",
            p("i.toml"),
            p("j.toml")
        )
    );
    // Missing included file.
    std::fs::write(d.join("k.toml"), "\ninclude = [\"nope.toml\"]\n").unwrap();
    let e = ModelSet::load(&d.join("k.toml")).unwrap_err().to_string();
    assert!(
        e.starts_with(&format!(
            "{}:2:12: include: cannot read included file {}: ",
            p("k.toml"),
            p("nope.toml")
        )),
        "{e}"
    );
    // Missing top file.
    let e = ModelSet::load(&d.join("none.toml")).unwrap_err().to_string();
    assert!(
        e.starts_with(&format!("{}: cannot read model file: ", p("none.toml"))),
        "{e}"
    );
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn syntax_and_type_errors_carry_positions() {
    assert_eq!(err("seed = \n"), "t.toml:1:8: invalid string; expected `\"`, `'`");
    assert_eq!(
        err("seed = -1\n"),
        "t.toml:1:8: invalid value: integer `-1`, expected u64"
    );
    assert_eq!(
        err("[network]\nlat_factr = 1\n"),
        "t.toml:2:1: unknown field `lat_factr`, expected one of `lat_factor`, `network/latency-factor`, \
         `smpi/lat-factor`, `bw_factor`, `network/bandwidth-factor`, `smpi/bw-factor`, `os`, \
         `smpi/os`, `or`, `smpi/or`, `ois`, `smpi/ois`, `noise`, `range`, `source`"
    );
    assert!(err("[compute.dgemm]\nmodel = \"linear\"\nproduct = 3\n")
        .starts_with("t.toml:3:11: invalid type: integer `3`, expected a string"));
}

#[test]
fn unknown_kernel() {
    assert_eq!(
        err("\n[compute.dgemmm]\nmodel = \"constant\"\nvalue = 1\n"),
        "t.toml:2:1: compute.dgemmm: unknown kernel `dgemmm`: known kernels are the BLAS dgemm, dtrsm, \
         dgemv, dger, dtrsv, daxpy, dscal, dswap, dcopy, idamax and names declared with kind = \"function\" \
         and params = [...]"
    );
    assert_eq!(
        err("[compute.foo]\nkind = \"fn\"\n"),
        "t.toml:2:8: compute.foo.kind: unknown kind \"fn\" (expected \"function\" for a non-BLAS kernel)"
    );
    assert_eq!(
        err("[compute.dgemm]\nkind = \"function\"\n"),
        "t.toml:2:8: compute.dgemm.kind: `dgemm` is a BLAS kernel: kind must be \"blas\" or absent, found \"function\""
    );
    assert_eq!(
        err("[compute.dgemm]\nparams = [\"M\"]\nmodel = \"constant\"\nvalue = 1\n"),
        "t.toml:2:10: compute.dgemm.params: the parameters of BLAS kernel `dgemm` are fixed: [M, N, K]"
    );
    assert_eq!(
        err("[compute.foo]\nkind = \"function\"\nmodel = \"constant\"\nvalue = 1\n"),
        "t.toml:1:1: compute.foo: missing key `params` (the names of the call's parameters, e.g. [\"M\", \"N\"])"
    );
    assert_eq!(
        err("[compute.foo]\nkind = \"function\"\nparams = [\"M\", \"M\"]\n"),
        "t.toml:3:10: compute.foo.params: parameter `M` appears twice"
    );
    assert_eq!(
        err("[compute.foo]\nkind = \"function\"\nparams = [\"1x\"]\n"),
        "t.toml:3:10: compute.foo.params: parameter name `1x` is not an identifier"
    );
    assert_eq!(
        err("[compute.foo]\nkind = \"function\"\nparams = []\n"),
        "t.toml:3:10: compute.foo.params: expected 1 to 8 parameters, found 0"
    );
    assert_eq!(
        err("[compute.\"a-b\"]\nkind = \"function\"\nparams = [\"N\"]\n"),
        "t.toml:1:1: compute.a-b: kernel name `a-b` is not an identifier"
    );
}

#[test]
fn missing_model_or_coefficient() {
    assert_eq!(
        err("[compute.dgemm]\nnoise = { kind = \"none\" }\n"),
        "t.toml:1:1: compute.dgemm: missing key `model` (constant, linear or polynomial) or `range` entries"
    );
    assert_eq!(
        err("[compute.dgemm]\nvalue = 1\n"),
        "t.toml:1:1: compute.dgemm: missing key `model` (constant, linear or polynomial)"
    );
    assert_eq!(
        err("[compute.dgemm]\nmodel = \"constant\"\n"),
        "t.toml:1:1: compute.dgemm: missing coefficient `value` for model = \"constant\" (T = value, in seconds)"
    );
    assert_eq!(
        err("[compute.dgemm]\nmodel = \"linear\"\nproduct = \"MNK\"\nb = 0\n"),
        "t.toml:1:1: compute.dgemm: missing coefficient `a` for model = \"linear\" (T = a·product + b)"
    );
    assert_eq!(
        err("[compute.dgemm]\nmodel = \"linear\"\nproduct = \"MNK\"\na = 1e-11\n"),
        "t.toml:1:1: compute.dgemm: missing coefficient `b` for model = \"linear\" (T = a·product + b; \
         write b = 0 for no intercept)"
    );
    assert_eq!(
        err("[compute.dgemm]\nmodel = \"linear\"\na = 1e-11\nb = 0\n"),
        "t.toml:1:1: compute.dgemm: missing key `product` for model = \"linear\" (e.g. \"M*N*K\")"
    );
    assert_eq!(
        err("[compute.dgemm]\nmodel = \"polynomial\"\n"),
        "t.toml:1:1: compute.dgemm: missing coefficient `coefficients` for model = \"polynomial\" (a table of \
         term = coefficient, e.g. { MNK = 1e-11, intercept = 2e-12 })"
    );
    assert_eq!(
        err("[compute.dgemm]\nmodel = \"polynomial\"\ncoefficients = {}\n"),
        "t.toml:3:16: compute.dgemm.coefficients: missing coefficients: the table is empty"
    );
    assert_eq!(
        err("[compute.dgemm]\nmodel = \"cubic\"\n"),
        "t.toml:2:9: compute.dgemm.model: unknown model `cubic` (expected constant, linear or polynomial)"
    );
    assert_eq!(
        err("[compute.dgemm]\nmodel = \"constant\"\nvalue = 1\na = 2\n"),
        "t.toml:4:5: compute.dgemm.a: `a` is not used by model = \"constant\""
    );
    assert_eq!(
        err("[compute.dgemm]\nmodel = \"constant\"\nvalue = nan\n"),
        "t.toml:3:9: compute.dgemm.value: NaN is not a finite number"
    );
}

#[test]
fn bad_terms() {
    assert_eq!(
        err("[compute.dgemm]\nmodel = \"polynomial\"\ncoefficients = { MNX = 1 }\n"),
        "t.toml:3:24: compute.dgemm.coefficients.\"MNX\": unknown variable `MNX` in term `MNX` (variables: M, N, K; \
         write products as `M*N*K` or `MNK`, a constant as `intercept`)"
    );
    assert_eq!(
        err("[compute.dgemm]\nmodel = \"polynomial\"\ncoefficients = { MNK = 1, \"K*N*M\" = 2 }\n"),
        "t.toml:3:24: compute.dgemm.coefficients.\"MNK\": term `MNK` is the same term as `K*N*M`"
    );
    assert_eq!(
        err("[compute.dgemm]\nmodel = \"linear\"\nproduct = \"M^0\"\na = 1\nb = 0\n"),
        "t.toml:3:11: compute.dgemm.product: bad exponent in `M^0` of term `M^0` (expected an integer >= 1)"
    );
    assert_eq!(
        err("[compute.dgemm]\nmodel = \"linear\"\nproduct = \"M^7\"\na = 1\nb = 0\n"),
        "t.toml:3:11: compute.dgemm.product: term `M^7` has degree 7 (at most 6)"
    );
}

#[test]
fn bad_compute_ranges() {
    let head = "[compute.dgemv]\npiecewise_on = \"MN\"\n";
    let r = |from: &str, extra: &str| {
        format!("[[compute.dgemv.range]]\nfrom = {from}\n{extra}model = \"constant\"\nvalue = 1\n")
    };
    assert_eq!(
        err(&format!("{head}{}{}", r("100", ""), r("10", ""))),
        "t.toml:8:8: compute.dgemv.range[1].from: unsorted ranges: from = 10 comes after from = 100; sort ranges by `from`"
    );
    assert_eq!(
        err(&format!("{head}{}{}", r("10", ""), r("10", ""))),
        "t.toml:8:8: compute.dgemv.range[1].from: overlapping ranges: range 0 also starts at 10"
    );
    assert_eq!(
        err(&format!("{head}{}{}", r("0", "to = 20\n"), r("10", ""))),
        "t.toml:5:6: compute.dgemv.range[0].to: overlapping ranges: to = 20 but the next range starts at 10"
    );
    assert_eq!(
        err(&format!("{head}{}{}", r("0", "to = 5\n"), r("10", ""))),
        "t.toml:5:6: compute.dgemv.range[0].to: gap between ranges: to = 5 but the next range starts at 10"
    );
    assert_eq!(
        err(&format!("{head}{}", r("10", "to = 5\n"))),
        "t.toml:5:6: compute.dgemv.range[0].to: to = 5 must be > from = 10"
    );
    assert_eq!(
        err(&format!("{head}[[compute.dgemv.range]]\nmodel = \"constant\"\nvalue = 1\n")),
        "t.toml:3:1: compute.dgemv.range[0]: missing key `from` (the range covers from <= feature < next from)"
    );
    assert_eq!(
        err(&format!("{head}[[compute.dgemv.range]]\nfrom = 0\n")),
        "t.toml:3:1: compute.dgemv.range[0]: missing key `model` (constant, linear or polynomial)"
    );
    assert_eq!(
        err(&format!("[compute.dgemv]\n{}", r("0", ""))),
        "t.toml:1:1: compute.dgemv: missing key `piecewise_on` (the feature that selects the range, e.g. \"M*N*K\")"
    );
    assert_eq!(
        err(&format!("{head}model = \"constant\"\nvalue = 1\n{}", r("0", ""))),
        "t.toml:1:1: compute.dgemv: a model with `range` entries takes its model keys (model, value, a, b, \
         product, coefficients) in each range"
    );
    assert_eq!(
        err("[compute.dgemv]\npiecewise_on = \"MN\"\nmodel = \"constant\"\nvalue = 1\n"),
        "t.toml:2:16: compute.dgemv.piecewise_on: `piecewise_on` needs `range` entries"
    );
    assert_eq!(
        err(&format!("{head}{}", r("0", "hosts = [1]\n"))),
        "t.toml:5:9: compute.dgemv.range[0].hosts: `hosts` is not used by a range entry"
    );
    assert_eq!(
        err("[compute.dgemv]\npiecewise_on = \"intercept\"\n[[compute.dgemv.range]]\nfrom = 0\nmodel = \"constant\"\nvalue = 1\n"),
        "t.toml:2:16: compute.dgemv.piecewise_on: the feature must use at least one variable"
    );
    assert_eq!(
        err("[compute.dgemv]\nfrom = 0\nmodel = \"constant\"\nvalue = 1\n"),
        "t.toml:2:8: compute.dgemv.from: `from` is not used by a kernel table (only in [[range]] or [[host]] entries)"
    );
}

#[test]
fn bad_hosts() {
    let base = "[compute.dgemm]\nmodel = \"constant\"\nvalue = 1\n";
    assert_eq!(
        err(&format!(
            "{base}[[compute.dgemm.host]]\nmodel = \"constant\"\nvalue = 2\n"
        )),
        "t.toml:4:1: compute.dgemm.host[0]: missing key `hosts` (list of host indices)"
    );
    assert_eq!(
        err(&format!("{base}[[compute.dgemm.host]]\nhosts = []\n")),
        "t.toml:5:9: compute.dgemm.host[0].hosts: empty list of hosts"
    );
    assert_eq!(
        err(&format!(
            "{base}[[compute.dgemm.host]]\nhosts = [1, 2]\n[[compute.dgemm.host]]\nhosts = [3, 2]\n"
        )),
        "t.toml:7:9: compute.dgemm.host[1].hosts: host 2 is already listed in compute.dgemm.host[0]"
    );
    assert_eq!(
        err(&format!("{base}[[compute.dgemm.host]]\nhosts = [99999999999]\n")),
        "t.toml:5:9: compute.dgemm.host[0].hosts: host index 99999999999 is too large (at most 16777216)"
    );
    assert_eq!(
        err(&format!("{base}empty = {{ product = \"M*Q\", seconds = 1e-8 }}\n")),
        "t.toml:4:21: compute.dgemm.empty.product: unknown variable `Q` in term `M*Q` (variables: M, N, K; write products as `M*N*K` or `MNK`, a constant as `intercept`)"
    );
    assert_eq!(
        err(&format!("{base}empty = {{ product = \"N\", seconds = -1 }}\n")),
        "t.toml:4:36: compute.dgemm.empty.seconds: seconds = -1 must be >= 0"
    );
    assert_eq!(
        err(&format!("{base}quantum = 0\n")),
        "t.toml:4:11: compute.dgemm.quantum: quantum = 0 must be > 0 (seconds)"
    );
}

#[test]
fn bad_noise() {
    let k = |noise: &str| format!("[compute.dgemm]\nmodel = \"constant\"\nvalue = 1\nnoise = {noise}\n");
    assert_eq!(
        err(&k("{ kind = \"normal\", sigma = -1 }")),
        "t.toml:4:36: compute.dgemm.noise.sigma: negative sigma -1 (a standard deviation must be >= 0)"
    );
    assert_eq!(
        err(&k(
            "{ kind = \"half_normal\", sigma = { intercept = -1e-7, MNK = 1e-12 } }"
        )),
        "t.toml:4:41: compute.dgemm.noise.sigma: negative sigma: the intercept is -0.0000001, so σ < 0 when \
         every variable is 0 (a standard deviation must be >= 0)"
    );
    assert_eq!(
        err(&k(
            "{ kind = \"mixture\", weights = [0.5, 0.5], means = [0, 0], sigmas = [1, -2] }"
        )),
        "t.toml:4:76: compute.dgemm.noise.sigmas: negative sigma -2 (a standard deviation must be >= 0)"
    );
    assert_eq!(
        err(&k("{ weights = [0.5, 0.6], means = [0, 0], sigmas = [1, 2] }")),
        "t.toml:4:21: compute.dgemm.noise.weights: weights sum to 1.1, expected 1"
    );
    assert_eq!(
        err(&k("{ weights = [1], means = [0] }")),
        "t.toml:4:9: compute.dgemm.noise: missing key `sigmas` for a mixture (weights, means, sigmas)"
    );
    assert_eq!(
        err(&k("{ kind = \"normal\" }")),
        "t.toml:4:9: compute.dgemm.noise: missing key `sigma` for kind = \"normal\""
    );
    assert_eq!(
        err(&k("{ sigma = 1 }")),
        "t.toml:4:9: compute.dgemm.noise: missing key `kind` (none, normal, half_normal or mixture; kind may be \
         omitted for a mixture)"
    );
    assert_eq!(
        err(&k("{ kind = \"gumbel\" }")),
        "t.toml:4:18: compute.dgemm.noise.kind: unknown noise kind `gumbel` (expected none, normal, half_normal or \
         mixture)"
    );
    assert_eq!(
        err(&k("{ kind = \"normal\", sigma = 1, weights = [1] }")),
        "t.toml:4:49: compute.dgemm.noise.weights: `weights` is not used by kind = \"normal\""
    );
    assert_eq!(
        err(&k("{ kind = \"normal\", sigma = \"big\" }")),
        "t.toml:4:36: compute.dgemm.noise.sigma: sigma must be a number or a table of term = coefficient, found string"
    );
    // Network noise.
    assert_eq!(
        err("[network]\nnoise = { kind = \"normal\", sigma = -1e-6 }\n"),
        "t.toml:2:36: network.noise.sigma: negative sigma -0.000001 (a standard deviation must be >= 0)"
    );
    assert_eq!(
        err("[network]\nnoise = { kind = \"half_normal\", sigma = 1e-6 }\n"),
        "t.toml:2:18: network.noise.kind: unknown network noise kind `half_normal` (expected none, normal or mixture)"
    );
    assert_eq!(
        err("[network]\nnoise = { weights = [0.5, 0.5], means = [0], sigmas = [1, 1] }\n"),
        "t.toml:2:41: network.noise.means: expected 2 means (one per weight), found 1"
    );
}

#[test]
fn bad_network() {
    let r = |above: &str, extra: &str| {
        format!("[[network.range]]\nabove = {above}\n{extra}lat_factor = 1\nbw_factor = 1\n")
    };
    assert_eq!(
        err(&format!("{}{}", r("100", ""), r("10", ""))),
        "t.toml:6:9: network.range[1].above: unsorted ranges: above = 10 comes after above = 100; sort ranges by `above`"
    );
    assert_eq!(
        err(&format!("{}{}", r("10", ""), r("10", ""))),
        "t.toml:6:9: network.range[1].above: overlapping ranges: range 0 also starts above 10"
    );
    assert_eq!(
        err(&format!("{}{}", r("0", "upto = 20\n"), r("10", ""))),
        "t.toml:3:8: network.range[0].upto: overlapping ranges: upto = 20 but the next range starts above 10"
    );
    assert_eq!(
        err(&format!("{}{}", r("0", "upto = 5\n"), r("10", ""))),
        "t.toml:3:8: network.range[0].upto: gap between ranges: upto = 5 but the next range starts above 10"
    );
    assert_eq!(
        err(&r("-1", "")),
        "t.toml:2:9: network.range[0].above: -1 is negative (bytes)"
    );
    assert_eq!(
        err("[[network.range]]\nabove = 0\nbw_factor = 1\n"),
        "t.toml:1:1: network.range[0]: missing coefficient `lat_factor` (give it in every range, or once in \
         [network] as a number or SMPI string)"
    );
    assert_eq!(
        err("[[network.range]]\nlat_factor = 1\nbw_factor = 1\n"),
        "t.toml:1:1: network.range[0]: missing key `above` (the range covers sizes > above)"
    );
    assert_eq!(
        err("[network]\nlat_factor = 2\n[[network.range]]\nabove = 0\nlat_factor = 1\nbw_factor = 1\n"),
        "t.toml:5:14: network.range[0].lat_factor: lat_factor is already given as an SMPI string in [network]; \
         use one or the other"
    );
    assert_eq!(
        err("[[network.range]]\nabove = 0\nlat_factor = 1\nbw_factor = 1\nos = { offset = 1 }\n"),
        "t.toml:5:6: network.range[0].os: missing coefficient `per_byte` (offset + per_byte·size)"
    );
    assert_eq!(
        err("[[network.range]]\nabove = 0\nlat_factor = 1\nbw_factor = 1\nos = [1]\n"),
        "t.toml:5:6: network.range[0].os: expected { offset = <s>, per_byte = <s/B> } or [offset, per_byte] \
         (cost = offset + per_byte·size)"
    );
    assert_eq!(
        err("[network]\n\n\"smpi/bw-factor\" = \"0:0.5;8133:x\"\n"),
        "t.toml:3:20: network.bw_factor: invalid SMPI value: chunk 2 (`8133:x`): value 1 `x` is not a number"
    );
    assert_eq!(
        err("[network]\nos = \"0:1e-6:0;100:0:0;100:1:1\"\n"),
        "t.toml:2:6: network.os: invalid SMPI value: chunk 0 (`100`): boundary appears twice (overlapping chunks)"
    );
    assert_eq!(
        err("[network]\nlat_factor = [1]\n"),
        "t.toml:2:14: network.lat_factor: expected an SMPI string like \"0:1.0;65472:0.9\" or a number, found array"
    );
    assert_eq!(
        err("[config]\n\"smpi/os\" = \"0:1:0\"\n"),
        "t.toml:2:13: config.\"smpi/os\": `smpi/os` is part of the network model: set it as `os` in [network]"
    );
    assert_eq!(
        err("[config]\nx = [1]\n"),
        "t.toml:2:5: config.\"x\": config values must be strings, numbers or booleans, found array"
    );
}

/// A term is evaluated left to right, coefficient first (`((a·M)·N)·K + b`), as a C model
/// library writes it: a last-bit difference in an injected time can decide an MPI_Iprobe
/// race and send HPL down another path (16×16 N=80000 moved by 0.9 % with a product tree).
#[test]
fn terms_multiply_left_to_right_like_c() {
    let set =
        load("[compute.dgemm]\nmodel = \"linear\"\nproduct = \"M*N*K\"\na = 1.029e-11\nb = 1.981e-12\n");
    let k = set.compute.kernel_id("dgemm").unwrap();
    let (a, b) = (1.029e-11_f64, 1.981e-12_f64);
    let mut orders_differ = 0;
    for m in [1.0, 3.0, 127.0, 128.0, 1250.0, 4872.0, 9999.0] {
        for n in [1.0, 7.0, 128.0, 2500.0, 4999.0] {
            for kk in [1.0, 64.0, 128.0, 333.0] {
                let t = set.compute.duration_without_noise(k, 0, &[m, n, kk]);
                assert_eq!(t, a * m * n * kk + b, "M={m} N={n} K={kk}");
                if a * ((m * n) * kk) + b != t {
                    orders_differ += 1;
                }
            }
        }
    }
    // The check has teeth: other orders give other bits on some of these shapes.
    assert!(orders_differ > 0);
}
