use std::path::Path;

use models::ModelSet;
use simcore::platform::ConfigEntry;

use super::*;

fn defaults() -> SmpiConfig {
    SmpiConfig::from_raw(&RawConfig::default()).expect("the defaults are valid")
}

fn platform_entry(key: &str, value: &str) -> ConfigEntry {
    ConfigEntry {
        key: key.to_string(),
        value: value.to_string(),
        place: "p.xml:3:5".to_string(),
    }
}

fn cli(pairs: &[&str]) -> Vec<String> {
    pairs.iter().map(|p| p.to_string()).collect()
}

#[test]
fn defaults_are_smpi_defaults() {
    let c = defaults();
    assert_eq!(c.net_model, NetModel::Smpi);
    assert_eq!(c.detached_thresh, 65536);
    assert_eq!(c.host_speed, 20000.0);
    assert_eq!(c.weight_s, 8775.0);
    assert!((c.lat_factor.value(17.0) - 2.01467).abs() < 1e-12);
    assert_eq!(c.model_loopback(), ModelLoopback::default());
    assert_eq!(c.stack_size, 8192 * 1024);
}

#[test]
fn every_default_parses_on_its_own() {
    let mut cfg = defaults();
    for k in KEYS {
        k.apply(&mut cfg, k.default)
            .unwrap_or_else(|e| panic!("{}: default '{}': {e}", k.name, k.default));
    }
}

/// Every field starts as a placeholder (NaN for most numbers); after the defaults none is left.
#[test]
fn every_field_is_set_by_a_key() {
    let shown = format!("{:?}", defaults());
    assert!(!shown.contains("NaN"), "a field no key sets: {shown}");
}

#[test]
fn names_and_aliases_are_unique() {
    let mut names: Vec<&str> = KEYS
        .iter()
        .flat_map(|k| std::iter::once(k.name).chain(k.aliases.iter().copied()))
        .collect();
    let n = names.len();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), n, "a name or alias is declared twice");
}

#[test]
fn help_lists_every_key_once_and_the_precedence() {
    let text = help();
    for k in KEYS {
        let lines = text
            .lines()
            .filter(|l| l.split_whitespace().next() == Some(k.name))
            .count();
        assert_eq!(lines, 1, "{} in\n{text}", k.name);
        for alias in k.aliases {
            assert!(text.contains(alias), "alias {alias}");
        }
    }
    assert!(
        text.contains("the default below < the platform\nfile's <config> < the model file"),
        "{text}"
    );
}

#[test]
fn aliases_and_unknown_keys() {
    let mut raw = RawConfig::default();
    raw.set_pair("smpi/bw-factor:0.5").unwrap();
    assert_eq!(raw.get("network/bandwidth-factor"), "0.5");
    let e = raw.set_pair("smpi/no-such-key:1").unwrap_err();
    assert!(e.to_string().starts_with("--cfg=smpi/no-such-key:1: "), "{e}");
    assert!(e.to_string().contains("unknown configuration key"), "{e}");
    let e = raw.set_pair("smpi/wtim:0").unwrap_err();
    assert!(e.to_string().contains("did you mean smpi/wtime"), "{e}");
    // SimGrid's own keys that are not implemented say so, and why.
    let e = raw
        .set_pair("model-check/reduction:dpor")
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("--cfg=model-check/reduction:dpor: a SimGrid 3.32 key that this simulator does not support: model checking"), "{e}");
    let e = raw
        .set_pair("smpi/papi-events:PAPI_TOT_CYC")
        .unwrap_err()
        .to_string();
    assert!(e.contains("does not support: PAPI"), "{e}");
}

#[test]
fn bad_values_name_the_key_and_the_value() {
    for (pair, problem) in [
        ("smpi/host-speed:fast", "not a speed"),
        ("network/model:NoSuchModel", "expected SMPI, CM02, LV08 or raw"),
        ("smpi/event-order:random", "expected simgrid or fifo"),
        ("network/loopback-bw:0", "must be positive"),
        ("network/loopback-lat:-1us", "must not be negative"),
        ("contexts/guard-size:2", "not supported"),
    ] {
        let mut raw = RawConfig::default();
        raw.set_pair(pair).unwrap();
        let e = SmpiConfig::from_raw(&raw).unwrap_err().to_string();
        assert!(e.starts_with(&format!("--cfg={pair}: ")), "{e}");
        assert!(e.contains(problem), "{pair}: {e}");
    }
}

#[test]
fn a_factor_default_follows_the_network_model() {
    let cfg = resolve(&[], None, &cli(&["network/model:CM02"])).unwrap();
    assert_eq!(cfg.lat_factor.value(17.0), 1.0);
    assert_eq!(cfg.weight_s, 0.0);
}

#[test]
fn loopback_keys_reach_the_model_loopback() {
    let cfg = resolve(
        &[],
        None,
        &cli(&["network/loopback-bw:1GBps", "network/loopback-lat:2us"]),
    )
    .unwrap();
    assert_eq!(
        cfg.model_loopback(),
        ModelLoopback {
            bandwidth: 1e9,
            latency: 2e-6
        }
    );
}

#[test]
fn precedence_does_not_depend_on_the_order_given() {
    let mut raw = RawConfig::default();
    raw.set("smpi/wtime", "3", Source::CommandLine).unwrap();
    let model = Source::ModelFile {
        place: "m.toml: [config]".into(),
    };
    raw.set("smpi/wtime", "2", model.clone()).unwrap();
    let platform = Source::Platform {
        place: "p.xml:1:1".into(),
    };
    raw.set("smpi/wtime", "1", platform.clone()).unwrap();
    assert_eq!(
        (raw.get("smpi/wtime"), raw.source("smpi/wtime")),
        ("3", Source::CommandLine)
    );
    raw.set("smpi/test", "1", platform.clone()).unwrap();
    raw.set("smpi/test", "2", model.clone()).unwrap();
    assert_eq!(raw.get("smpi/test"), "2");
    // At one level, the last value wins.
    raw.set("smpi/test", "4", model).unwrap();
    assert_eq!(raw.get("smpi/test"), "4");
    assert_eq!(raw.source("smpi/init"), Source::Default);
}

const MODEL: &str = r#"
[config]
"smpi/wtime" = 2e-6
[network]
lat_factor = 2.0
os = "0:2e-6:0"
"#;

/// Each level beats the one below, for a plain key (`smpi/wtime`) and for the model file's
/// `[network]` quantities (`network/latency-factor`, `smpi/os`).
#[test]
fn one_chain_platform_model_command_line() {
    let model = ModelSet::from_toml_str(MODEL, "m.toml").unwrap();
    let model = Some((Path::new("m.toml"), &model));
    let platform = [
        platform_entry("smpi/wtime", "1e-6"),
        platform_entry("network/latency-factor", "1.5"),
        platform_entry("smpi/os", "0:1e-6:0"),
    ];
    let only_platform = resolve(&platform, None, &[]).unwrap();
    assert_eq!(only_platform.wtime, 1e-6);
    assert_eq!(only_platform.lat_factor.value(100.0), 1.5);
    assert_eq!(only_platform.os.cost(100.0), 1e-6);

    let with_model = resolve(&platform, model, &[]).unwrap();
    assert_eq!(with_model.wtime, 2e-6);
    assert_eq!(with_model.lat_factor.value(100.0), 2.0);
    assert_eq!(with_model.os.cost(100.0), 2e-6);
    // [network] is a whole network model: what it does not give is CM02's.
    assert_eq!(with_model.bw_factor.value(100.0), 1.0);

    let command_line = cli(&["smpi/wtime:3e-6", "smpi/lat-factor:3.0", "smpi/os:0:3e-6:0"]);
    let all = resolve(&platform, model, &command_line).unwrap();
    assert_eq!(all.wtime, 3e-6);
    assert_eq!(all.lat_factor.value(100.0), 3.0);
    assert_eq!(all.os.cost(100.0), 3e-6);
}

#[test]
fn errors_say_where_the_value_was_given() {
    let e = resolve(&[platform_entry("smpi/wtime", "soon")], None, &[]).unwrap_err();
    assert!(
        e.to_string().starts_with("p.xml:3:5: <config> smpi/wtime:soon: "),
        "{e}"
    );
    let e = resolve(&[platform_entry("no/such-key", "1")], None, &[]).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("p.xml:3:5: <config> no/such-key:1: unknown configuration key"),
        "{e}"
    );
    let model = ModelSet::from_toml_str("[config]\n\"smpi/test\" = \"often\"\n", "m.toml").unwrap();
    let e = resolve(&[], Some((Path::new("m.toml"), &model)), &[]).unwrap_err();
    assert!(
        e.to_string().starts_with("m.toml: [config] smpi/test:often: "),
        "{e}"
    );
}

/// The shipped model files' `[network]` tables reach the configuration unchanged through
/// their SMPI-syntax form.
#[test]
fn shipped_model_networks_round_trip() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../models");
    for file in ["default.toml", "dahu.toml"] {
        let path = dir.join(file);
        let set = ModelSet::load(&path).unwrap_or_else(|e| panic!("{e}"));
        let net = set.network.clone().expect("a [network] table");
        let cfg = resolve(&[], Some((&path, &set)), &[]).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(cfg.lat_factor, net.lat_factor, "{file}");
        assert_eq!(cfg.bw_factor, net.bw_factor, "{file}");
        assert_eq!(
            (&cfg.os, &cfg.or, &cfg.ois),
            (&net.os, &net.or, &net.ois),
            "{file}"
        );
    }
}
