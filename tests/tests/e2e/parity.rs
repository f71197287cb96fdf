//! The C interface and the simulator agree: every function `include/mpi.h`
//! declares is exported by `smpirun` (so a program that compiles also loads),
//! and a program built with `smpicc` sees the constants the simulator uses
//! (`smpi-shim`'s unit test `mpi_h_constants_match_the_simulator` checks the
//! Rust side against the header).

use std::collections::BTreeSet;
use std::process::Command;

use e2e_tests::{run_command, smpirun, workspace_root, DEFAULT_TIMEOUT};

/// The functions `mpi.h` declares (prototypes outside preprocessor lines).
fn declared_functions() -> BTreeSet<String> {
    let header = std::fs::read_to_string(workspace_root().join("smpi-shim/include/mpi.h")).expect("mpi.h");
    let mut text = String::new();
    let mut in_comment = false;
    for line in header.lines() {
        let mut l = line.to_string();
        if in_comment {
            match l.find("*/") {
                Some(end) => {
                    l = l[end + 2..].to_string();
                    in_comment = false;
                }
                None => continue,
            }
        }
        if let Some(start) = l.find("/*") {
            match l[start..].find("*/") {
                Some(end) => l.replace_range(start..start + end + 2, ""),
                None => {
                    l.truncate(start);
                    in_comment = true;
                }
            }
        }
        if !l.trim_start().starts_with('#') {
            text.push_str(&l);
            text.push('\n');
        }
    }
    // `<type> [*] NAME(` with NAME an MPI, PMPI or SMPI function.
    let mut names = BTreeSet::new();
    let bytes = text.as_bytes();
    for (i, _) in text.match_indices('(') {
        let before = text[..i].trim_end();
        let start = before
            .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .map_or(0, |p| p + 1);
        let name = &before[start..];
        let typed = before[..start].trim_end();
        let is_decl = typed.ends_with(|c: char| c.is_ascii_alphanumeric() || c == '*' || c == '_')
            && !typed.ends_with("typedef")
            && bytes.get(start.wrapping_sub(1)) != Some(&b'(');
        if is_decl
            && ["MPI_", "PMPI_", "MPIX_", "smpi_", "SMPI_"]
                .iter()
                .any(|p| name.starts_with(p))
        {
            names.insert(name.to_string());
        }
    }
    names
}

#[test]
fn every_function_mpi_h_declares_is_exported() {
    let declared = declared_functions();
    assert!(
        declared.len() > 250,
        "the header parse found only {} functions",
        declared.len()
    );
    let mut nm = Command::new("nm");
    nm.args(["-D", "--defined-only"]).arg(smpirun());
    let out = run_command(nm, DEFAULT_TIMEOUT);
    assert!(out.status.success(), "nm failed\n{}", out.describe());
    let exported: BTreeSet<&str> = out
        .stdout
        .lines()
        .filter_map(|l| l.split_whitespace().last())
        .collect();
    let missing: Vec<&String> = declared
        .iter()
        .filter(|f| !exported.contains(f.as_str()))
        .collect();
    assert!(
        missing.is_empty(),
        "mpi.h declares {} functions smpirun does not export: {missing:?}",
        missing.len()
    );
}
