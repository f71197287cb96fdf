//! The constants of `include/mpi.h` and the simulator's agree: every
//! `const MPI_*` defined in the sources and every predefined datatype handle.

use std::collections::BTreeMap;
use std::path::Path;

/// `#define MPI_NAME value` of the header, integers only, aliases resolved.
fn header_constants() -> BTreeMap<String, i64> {
    let header = include_str!("../../include/mpi.h");
    let mut raw: BTreeMap<String, String> = BTreeMap::new();
    for line in header.lines() {
        let mut words = line.split_whitespace();
        if words.next() != Some("#define") {
            continue;
        }
        let (Some(name), Some(value)) = (words.next(), words.next()) else {
            continue;
        };
        if name.contains('(') || words.next().is_some() {
            continue; // function-like macros and expressions
        }
        raw.insert(
            name.to_string(),
            value.trim_start_matches('(').trim_end_matches(')').to_string(),
        );
    }
    let mut out = BTreeMap::new();
    for name in raw.keys() {
        let mut v = &raw[name];
        for _ in 0..8 {
            match raw.get(v.as_str()) {
                Some(next) => v = next,
                None => break,
            }
        }
        let parsed = match v.strip_prefix("0x") {
            Some(hex) => i64::from_str_radix(hex, 16).ok(),
            None => v.parse().ok(),
        };
        if let Some(n) = parsed {
            out.insert(name.clone(), n);
        }
    }
    out
}

/// `const MPI_NAME: type = value;` in every source file of the crate.
fn source_constants() -> Vec<(String, String, i64)> {
    fn walk(dir: &Path, out: &mut Vec<(String, String, i64)>) {
        for e in std::fs::read_dir(dir).expect("source dir") {
            let p = e.expect("entry").path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                let text = std::fs::read_to_string(&p).expect("source");
                for line in text.lines() {
                    let l = line
                        .trim_start()
                        .trim_start_matches("pub(crate) ")
                        .trim_start_matches("pub ");
                    let Some(rest) = l.strip_prefix("const MPI_") else {
                        continue;
                    };
                    let Some((name, rest)) = rest.split_once(':') else {
                        continue;
                    };
                    let Some((_, value)) = rest.split_once('=') else {
                        continue;
                    };
                    let value = value.trim().trim_end_matches(';').replace('_', "");
                    if let Ok(v) = value.parse::<i64>() {
                        out.push((format!("MPI_{name}"), p.display().to_string(), v));
                    }
                }
            }
        }
    }
    let mut out = Vec::new();
    walk(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), &mut out);
    out
}

#[test]
fn mpi_h_constants_match_the_simulator() {
    let header = header_constants();
    assert!(
        header.len() > 150,
        "parsed only {} constants from mpi.h",
        header.len()
    );
    let sources = source_constants();
    assert!(
        sources.len() > 30,
        "found only {} MPI constants in the sources",
        sources.len()
    );
    let mut wrong = Vec::new();
    for (name, file, value) in &sources {
        match header.get(name) {
            Some(h) if h == value => {}
            Some(h) => wrong.push(format!("{name} = {value} in {file}, {h} in mpi.h")),
            None => wrong.push(format!("{name} ({file}) is not in mpi.h")),
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

#[test]
fn predefined_datatype_handles_match_mpi_h() {
    let header = header_constants();
    let mut checked = 0;
    for (handle, dt) in crate::mpi::datatype::predefined().iter().enumerate() {
        let Some(dt) = dt else { continue };
        let name = dt.name.as_ref();
        assert_eq!(
            header.get(name),
            Some(&(handle as i64)),
            "{name}: handle {handle} in the simulator"
        );
        checked += 1;
    }
    assert!(checked > 40, "only {checked} predefined datatypes");
}
