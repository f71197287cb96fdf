//! The generated Fortran files are up to date, and `mpif.h` agrees with `mpi.h`.

use std::collections::BTreeMap;
use std::path::Path;

/// `PARAMETER (NAME=value)` lines of mpif.h.
fn mpif_parameters() -> BTreeMap<String, i64> {
    let text = include_str!("../../../include/mpif.h");
    let mut out = BTreeMap::new();
    for line in text.lines() {
        let Some(rest) = line.trim().strip_prefix("PARAMETER (") else {
            continue;
        };
        let (name, value) = rest.trim_end_matches(')').split_once('=').expect("NAME=value");
        out.insert(name.to_string(), value.parse().expect("an integer value"));
    }
    out
}

#[test]
fn mpif_h_constants_equal_mpi_h_ones() {
    let mpif = mpif_parameters();
    // Constants of mpi.h: `#define MPI_X <int>` or an alias of an earlier one.
    let header = include_str!("../../../include/mpi.h");
    let mut c: BTreeMap<String, i64> = BTreeMap::new();
    for line in header.lines() {
        let Some(rest) = line.strip_prefix("#define MPI_") else {
            continue;
        };
        let mut it = rest.split_whitespace();
        let (Some(name), Some(value)) = (it.next(), it.next()) else {
            continue;
        };
        let name = format!("MPI_{name}");
        let v = value.trim_matches(|ch| ch == '(' || ch == ')');
        if let Ok(v) = v.parse::<i64>() {
            c.insert(name, v);
        } else if let Some(&v) = c.get(value) {
            c.insert(name, v);
        }
    }
    assert!(c.len() > 150, "parsed only {} constants from mpi.h", c.len());
    let mut wrong = Vec::new();
    for (name, v) in &c {
        match mpif.get(name) {
            Some(f) if f == v => {}
            Some(f) => wrong.push(format!("{name}: {v} in mpi.h, {f} in mpif.h")),
            None => wrong.push(format!("{name} ({v}) is missing from mpif.h")),
        }
    }
    assert!(
        wrong.is_empty(),
        "mpif.h disagrees with mpi.h (run tools/gen_fortran.py):\n{}",
        wrong.join("\n")
    );
    assert_eq!(mpif["MPI_STATUS_SIZE"], super::STATUS_SIZE as i64);
}

#[test]
fn mpif_h_lines_fit_fixed_form() {
    for (i, line) in include_str!("../../../include/mpif.h").lines().enumerate() {
        assert!(line.len() <= 72, "mpif.h:{}: longer than 72 columns", i + 1);
        assert!(
            line.starts_with('!') || line.starts_with("      ") && !line[6..].starts_with(' '),
            "mpif.h:{}: a statement must start in column 7, a comment with '!'",
            i + 1
        );
    }
}

#[test]
fn generated_files_are_up_to_date() {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tools/gen_fortran.py");
    let out = match std::process::Command::new("python3")
        .arg(&script)
        .arg("--check")
        .output()
    {
        Ok(o) => o,
        Err(e) => {
            eprintln!("skipped: cannot run python3 ({e})");
            return;
        }
    };
    assert!(
        out.status.success(),
        "{} --check failed:\n{}",
        script.display(),
        String::from_utf8_lossy(&out.stderr)
    );
}
