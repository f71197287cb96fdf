//! Transparent huge pages for the simulator's heap.
//!
//! At thousands of ranks the per-rank state (requests, mailboxes, communicators,
//! the max-min system's variables) spreads over gigabytes of heap that each
//! simulated message touches a little of: TLB misses on 4 KiB pages. glibc backs
//! its heap with transparent huge pages when the tunable `glibc.malloc.hugetlb=1`
//! is set, but only at process start, so `smpirun` restarts itself once with the
//! tunable added to `GLIBC_TUNABLES`, for runs of at least [`MIN_RANKS`] ranks
//! (below, the heap is small and the pages bring nothing measurable: HPL at 256
//! ranks gained nothing and took 3 % more memory). Nothing is restarted when the kernel's
//! setting is not `madvise` (`always` needs no advice, `never` ignores it),
//! when `GLIBC_TUNABLES` already sets the tunable (`glibc.malloc.hugetlb=0`
//! keeps 4 KiB pages), or under Valgrind (which would lose the restarted
//! process). The restarted process puts `GLIBC_TUNABLES` back as it was, so
//! the program sees the environment it was given.
//!
//! Measured on the full Stampede run (6,006 ranks, 2026-11-27): 6 % more
//! events in alternated 240-s samples, 4–6 % more resident memory.

use std::ffi::OsString;
use std::os::unix::process::CommandExt;

/// The glibc tunable this module sets.
const TUNABLE: &str = "glibc.malloc.hugetlb";

/// Runs with fewer ranks keep 4 KiB pages.
const MIN_RANKS: usize = 1024;

/// Carries `GLIBC_TUNABLES`' value before the restart (`=` and the value, or
/// nothing when it was unset) to the restarted process.
const BEFORE_RESTART: &str = "SMPIRUN_GLIBC_TUNABLES_BEFORE_RESTART";

/// Restarts this process (same arguments) with huge pages for its heap when
/// that changes anything for a run of `ranks` ranks (see the module's doc);
/// returns only if it did not restart.
pub(super) fn restart_with_huge_page_heap(ranks: usize) {
    if let Some(before) = std::env::var_os(BEFORE_RESTART) {
        // The restarted process (glibc has read its tunables): the environment as it was.
        std::env::remove_var(BEFORE_RESTART);
        match before.to_str().and_then(|b| b.strip_prefix('=')) {
            Some(value) => std::env::set_var("GLIBC_TUNABLES", value),
            None => std::env::remove_var("GLIBC_TUNABLES"),
        }
        return;
    }
    let under_valgrind = std::env::var("LD_PRELOAD").is_ok_and(|p| p.contains("vgpreload"));
    if ranks < MIN_RANKS || under_valgrind {
        return;
    }
    let thp_mode = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled").unwrap_or_default();
    let current = std::env::var_os("GLIBC_TUNABLES");
    let Some(tunables) = tunables_with_huge_pages(current.clone(), &thp_mode) else {
        return;
    };
    let before = current.map_or_else(OsString::new, |c| {
        let mut b = OsString::from("=");
        b.push(c);
        b
    });
    let mut args = std::env::args_os();
    let argv0 = args.next().unwrap_or_else(|| OsString::from("smpirun"));
    // `exec` returns only on failure: then this process goes on, with 4 KiB pages.
    let _ = std::process::Command::new("/proc/self/exe")
        .arg0(argv0)
        .args(args)
        .env("GLIBC_TUNABLES", tunables)
        .env(BEFORE_RESTART, before)
        .exec();
}

/// The `GLIBC_TUNABLES` to restart with, given its current value and the
/// kernel's transparent huge page setting; `None` to go on as we are.
fn tunables_with_huge_pages(current: Option<OsString>, thp_mode: &str) -> Option<OsString> {
    if !thp_mode.contains("[madvise]") {
        return None;
    }
    let current = current.unwrap_or_default();
    let current = current.to_str()?;
    if current.split(':').any(|t| t.split('=').next() == Some(TUNABLE)) {
        return None;
    }
    Some(if current.is_empty() {
        OsString::from(format!("{TUNABLE}=1"))
    } else {
        OsString::from(format!("{current}:{TUNABLE}=1"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const MADVISE: &str = "always [madvise] never\n";

    #[test]
    fn the_tunable_is_added_once_and_only_where_advice_matters() {
        assert_eq!(
            tunables_with_huge_pages(None, MADVISE),
            Some(OsString::from("glibc.malloc.hugetlb=1"))
        );
        assert_eq!(
            tunables_with_huge_pages(Some("glibc.malloc.arena_max=2".into()), MADVISE),
            Some(OsString::from("glibc.malloc.arena_max=2:glibc.malloc.hugetlb=1"))
        );
        // Already set (by the restart itself, or to 0 by the user): no restart.
        assert_eq!(
            tunables_with_huge_pages(Some("glibc.malloc.hugetlb=1".into()), MADVISE),
            None
        );
        assert_eq!(
            tunables_with_huge_pages(
                Some("glibc.malloc.arena_max=2:glibc.malloc.hugetlb=0".into()),
                MADVISE
            ),
            None
        );
        assert_eq!(tunables_with_huge_pages(None, "[always] madvise never\n"), None);
        assert_eq!(tunables_with_huge_pages(None, "always madvise [never]\n"), None);
        assert_eq!(tunables_with_huge_pages(None, ""), None);
    }
}
