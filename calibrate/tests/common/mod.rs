//! Scratch directories of the crate's integration tests: one parent per test
//! process (`$TMPDIR/<prefix>-<pid>/`), and the parents left by test processes
//! that have exited are removed when a new one is made (a failed run's files
//! stay until the next run).

use std::path::{Path, PathBuf};

/// A fresh, empty `$TMPDIR/<prefix>-<pid>/<name>`.
pub fn scratch(prefix: &str, name: &str) -> PathBuf {
    let tmp = std::env::temp_dir();
    if let Ok(entries) = std::fs::read_dir(&tmp) {
        for e in entries.flatten() {
            let file = e.file_name().to_string_lossy().into_owned();
            let Some(rest) = file.strip_prefix(prefix).and_then(|r| r.strip_prefix('-')) else {
                continue;
            };
            // Older layouts put the name after the pid (`<prefix>-<pid>-<name>`).
            let pid = rest.split('-').next().unwrap_or("");
            if pid.parse::<u32>().is_ok()
                && pid != std::process::id().to_string()
                && !Path::new("/proc").join(pid).exists()
            {
                let _ = std::fs::remove_dir_all(e.path());
            }
        }
    }
    let d = tmp.join(format!("{prefix}-{}", std::process::id())).join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("cannot create the scratch directory");
    d
}
