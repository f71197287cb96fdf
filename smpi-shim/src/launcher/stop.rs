//! Ending a run early and cleanly: SIGINT and SIGTERM (sent to smpirun or
//! raised by a rank), `--wall-time-limit`, `--sim-time-limit` and Open MPI's
//! `MPIEXEC_TIMEOUT`.
//!
//! Each only sets a flag; the kernel stops at its next scheduling round and
//! the launcher reports as for any ending (the program's output flushed, the
//! simulated time reached, where each rank is, `--json`), with exit status
//! 130 (SIGINT), 143 (SIGTERM) or 124 (a time limit). A rank that computes
//! without calling MPI never returns to the kernel: after a grace period a
//! watcher thread flushes the output, says so and exits with the same status.

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::time::{Duration, Instant};

/// Why the run is asked to stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum StopReason {
    /// A signal (its number).
    Signal(i32),
    /// `--wall-time-limit` or `MPIEXEC_TIMEOUT`.
    WallTime,
    /// `--sim-time-limit`.
    SimTime,
}

impl StopReason {
    /// The process exit status for this reason.
    pub(super) fn exit_code(self) -> i32 {
        match self {
            StopReason::Signal(s) => 128 + s,
            StopReason::WallTime | StopReason::SimTime => 124,
        }
    }

    /// What stopped the run, for messages.
    pub(super) fn describe(self, wall_limit: Option<f64>, sim_limit: Option<f64>) -> String {
        match self {
            StopReason::Signal(libc::SIGINT) => "interrupted (SIGINT)".into(),
            StopReason::Signal(libc::SIGTERM) => "terminated (SIGTERM)".into(),
            StopReason::Signal(s) => format!("stopped by signal {s}"),
            StopReason::WallTime => {
                format!(
                    "wall-clock time limit of {} s reached",
                    wall_limit.unwrap_or(f64::NAN)
                )
            }
            StopReason::SimTime => {
                format!(
                    "simulated time limit of {} s reached",
                    sim_limit.unwrap_or(f64::NAN)
                )
            }
        }
    }
}

/// The flag the kernel polls (see `Simulation::stop_when`).
static FLAG: AtomicBool = AtomicBool::new(false);
/// The reason: a signal number, or the negative codes below.
static REASON: AtomicI32 = AtomicI32::new(0);
/// Set once the kernel has returned: the watcher's grace period is over.
static ACKNOWLEDGED: AtomicBool = AtomicBool::new(false);
const WALL: i32 = -1;
const SIM: i32 = -2;

fn request(reason: i32) {
    // The first reason wins.
    let _ = REASON.compare_exchange(0, reason, Ordering::SeqCst, Ordering::SeqCst);
    FLAG.store(true, Ordering::SeqCst);
}

extern "C" fn on_signal(sig: libc::c_int) {
    // Async-signal-safe: two atomic stores.
    request(sig);
}

/// The reason a stop was requested, if any.
pub(super) fn requested() -> Option<StopReason> {
    match REASON.load(Ordering::SeqCst) {
        0 => None,
        WALL => Some(StopReason::WallTime),
        SIM => Some(StopReason::SimTime),
        s => Some(StopReason::Signal(s)),
    }
}

/// Asks the run to stop because its simulated time passed the limit.
pub(super) fn sim_time_reached() {
    request(SIM);
}

/// The kernel has returned: no emergency exit needed any more.
pub(super) fn acknowledge() {
    ACKNOWLEDGED.store(true, Ordering::SeqCst);
}

/// Installs the SIGINT/SIGTERM handlers and the watcher thread (wall-time
/// limit, and the emergency exit when the simulation does not come back to
/// the kernel after a stop request). Returns the flag to give the kernel.
pub(super) fn install(wall_limit: Option<f64>) -> &'static AtomicBool {
    for sig in [libc::SIGINT, libc::SIGTERM] {
        // Safety: a handler doing only atomic stores, installed with sigaction.
        unsafe {
            let mut act: libc::sigaction = std::mem::zeroed();
            act.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as usize;
            libc::sigemptyset(&mut act.sa_mask);
            act.sa_flags = libc::SA_RESTART;
            libc::sigaction(sig, &act, std::ptr::null_mut());
        }
    }
    let start = Instant::now();
    std::thread::spawn(move || {
        let mut asked_at: Option<Instant> = None;
        loop {
            std::thread::sleep(Duration::from_millis(50));
            if ACKNOWLEDGED.load(Ordering::SeqCst) {
                return;
            }
            if wall_limit.is_some_and(|l| start.elapsed().as_secs_f64() >= l) {
                request(WALL);
            }
            if FLAG.load(Ordering::SeqCst) {
                let at = *asked_at.get_or_insert_with(Instant::now);
                if at.elapsed() >= Duration::from_secs(3) && !ACKNOWLEDGED.load(Ordering::SeqCst) {
                    emergency_exit(wall_limit);
                }
            }
        }
    });
    &FLAG
}

/// A rank keeps computing without calling MPI: the kernel cannot stop it.
/// Flush what the program printed, say so, and exit.
fn emergency_exit(wall_limit: Option<f64>) -> ! {
    let reason = requested().unwrap_or(StopReason::WallTime);
    // Safety: flushing C stdio from this thread while a rank may be writing is
    // a race on the buffers at worst; the process ends right after.
    unsafe { libc::fflush(std::ptr::null_mut()) };
    eprintln!(
        "smpirun: error: {}; a rank is computing without calling MPI and cannot be stopped cleanly: output flushed, run abandoned",
        reason.describe(wall_limit, None)
    );
    // Safety: _exit only ends the process (the simulation thread is in user code).
    unsafe { libc::_exit(reason.exit_code()) }
}
