//! `SMPI_SAMPLE_LOCAL` / `SMPI_SAMPLE_GLOBAL`: benchmark a loop body on a few
//! iterations, then skip the rest and inject their estimated time. The
//! `_TAG` forms (`SMPI_SAMPLE_LOCAL_TAG`, ...) add a run-time tag to the call
//! site, so one loop sampled from different contexts keeps separate
//! statistics ([`tagged_site`]).

use std::cell::RefCell;
use std::collections::HashMap;

use crate::mpi::entry::thread_cpu_time;

#[derive(Default)]
struct Site {
    iters: usize,
    threshold: f64,
    n: usize,
    sum: f64,
    sum_sq: f64,
}

impl Site {
    fn enough(&self) -> bool {
        if self.n >= self.iters.max(1) {
            return true;
        }
        if self.threshold > 0.0 && self.n >= 2 {
            let mean = self.sum / self.n as f64;
            let var = (self.sum_sq / self.n as f64 - mean * mean).max(0.0);
            let stderr = (var / self.n as f64).sqrt();
            return mean > 0.0 && stderr / mean < self.threshold;
        }
        false
    }

    fn mean(&self) -> f64 {
        if self.n == 0 {
            0.0
        } else {
            self.sum / self.n as f64
        }
    }
}

/// One running sampled loop (per rank and site).
#[derive(Default, Clone, Copy)]
struct Run {
    total: usize,
    done: usize,
    started: f64,
}

#[derive(Default)]
struct Sampler {
    sites: HashMap<String, Site>,
    runs: HashMap<(u32, String), Run>,
    /// The site names of tagged loops, by (file, tag): the C strings stay
    /// alive for the run (the program passes them back at every call).
    tagged: HashMap<(String, String), std::ffi::CString>,
    /// Ranks inside a benchmarked iteration.
    benchmarking: std::collections::HashSet<u32>,
}

thread_local! {
    static SAMPLER: RefCell<Sampler> = RefCell::new(Sampler::default());
}

fn key(global: bool, rank: u32, file: &str, line: i32) -> String {
    if global {
        format!("{file}:{line}")
    } else {
        format!("{file}:{line}:{rank}")
    }
}

/// The site name of a loop of `file` sampled with `tag` (`file[tag]`, or
/// `file` when the tag is empty), as a C string that lives for the run.
pub(crate) fn tagged_site(file: &str, tag: &str) -> *const std::ffi::c_char {
    SAMPLER.with(|s| {
        s.borrow_mut()
            .tagged
            .entry((file.to_string(), tag.to_string()))
            .or_insert_with(|| {
                let name = if tag.is_empty() {
                    file.to_string()
                } else {
                    format!("{file}[{tag}]")
                };
                std::ffi::CString::new(name).expect("made of C strings, so without NUL")
            })
            .as_ptr()
    })
}

/// Starts a sampled loop.
pub(crate) fn begin(global: bool, rank: u32, file: &str, line: i32, iters: i32, threshold: f64) {
    let k = key(global, rank, file, line);
    SAMPLER.with(|s| {
        let mut s = s.borrow_mut();
        let site = s.sites.entry(k.clone()).or_default();
        site.iters = iters.max(1) as usize;
        site.threshold = threshold;
        s.runs.insert((rank, k), Run::default());
    });
}

/// Counts one iteration of the header-only pass.
pub(crate) fn count(global: bool, rank: u32, file: &str, line: i32) {
    let k = key(global, rank, file, line);
    SAMPLER.with(|s| s.borrow_mut().runs.entry((rank, k)).or_default().total += 1);
}

/// Before an iteration: `Some(0)` to run it; `Some(seconds)`, the time to
/// inject, when benchmarking is over and the loop must end.
pub(crate) fn before(global: bool, rank: u32, file: &str, line: i32) -> Option<f64> {
    let k = key(global, rank, file, line);
    SAMPLER.with(|s| {
        let mut s = s.borrow_mut();
        let (enough, mean) = s
            .sites
            .get(&k)
            .map_or((false, 0.0), |st| (st.enough(), st.mean()));
        let run = s.runs.entry((rank, k)).or_default();
        if enough {
            let rest = run.total.saturating_sub(run.done);
            run.done = run.total;
            return Some(mean * rest as f64);
        }
        run.started = thread_cpu_time();
        s.benchmarking.insert(rank);
        None
    })
}

/// Whether `rank` is inside a benchmarked iteration of a sampled loop. As in
/// SMPI 3.32, `MPI_Wtime` there only reads the clock: it neither injects the
/// computation so far nor costs `smpi/wtime`, so the rank never leaves the
/// CPU mid-iteration (the iteration's CPU time is this thread's, which would
/// then count the other ranks' work too).
pub(crate) fn benchmarking(rank: u32) -> bool {
    SAMPLER.with(|s| s.borrow().benchmarking.contains(&rank))
}

/// After an iteration: records its time.
pub(crate) fn after(global: bool, rank: u32, file: &str, line: i32) {
    let k = key(global, rank, file, line);
    let now = thread_cpu_time();
    SAMPLER.with(|s| {
        let mut s = s.borrow_mut();
        s.benchmarking.remove(&rank);
        let run = s.runs.entry((rank, k.clone())).or_default();
        let dt = now - run.started;
        run.done += 1;
        let site = s.sites.entry(k).or_default();
        site.n += 1;
        site.sum += dt;
        site.sum_sq += dt * dt;
    });
}
