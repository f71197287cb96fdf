//! SimGrid's host energy plugin as programs see it (`simgrid/plugins/energy.h`), and its log
//! lines (category `host_energy`, under `kernel`), answered as SMPI 3.32 answers.
//!
//! The plugin itself (profiles, accounting) is `simcore::energy`; it is on with
//! `--cfg=plugin:host_energy`. `sg_host_energy_plugin_init()` from a program turns it on too,
//! at time 0 only: SimGrid wants it before the platform is loaded (an SMPI program calling it
//! crashes), and at time 0 nothing has been dissipated yet, so starting then gives the numbers
//! of `--cfg=plugin:host_energy`; later it would miss the energy so far, which is refused.
//!
//! The functions' failures are SimGrid's: a host without `wattage_per_state` asked for its
//! energy or power fails an `xbt_assert` (a `root/CRITICAL` line, exit status 134); a call
//! with the plugin off ends the run with SimGrid's message.
#![allow(clippy::missing_safety_doc)]

use std::ffi::{c_int, c_void};

use simcore::energy::Access;
use simcore::platform::HostId;

use crate::host::xbt_log::{self, Origin, Priority};
use crate::mpi::{entry, with_world, world_exists};

/// The category chain of the plugin's messages, nearest first.
const CATEGORY: [&str; 2] = ["host_energy", "kernel"];

/// Prints one line of the category `chain[0]` (`chain`: it and its ancestors) in SimGrid's
/// layout when `--log` lets it through, at the simulated time `now`: from the rank running now
/// when `from_rank`, else from no actor (SimGrid's kernel). C's stdio is flushed first, so the
/// line follows the program's output.
fn log(
    chain: &[&str],
    prio: Priority,
    location: Option<(&str, i32)>,
    message: &str,
    now: f64,
    from_rank: bool,
) {
    if prio < xbt_log::threshold(chain).0 {
        return;
    }
    let location = location.filter(|_| !xbt_log::no_loc());
    let origin = current()
        .filter(|_| from_rank)
        .map(|r| with_world(|w| (w.platform.host(w.hosts[r as usize]).name.clone(), r)));
    let origin = origin.as_ref().map(|(host, rank)| Origin { host, rank: *rank });
    // Safety: flushing C stdio.
    unsafe { libc::fflush(std::ptr::null_mut()) };
    eprint!(
        "{}",
        xbt_log::format_line(origin, now, chain[0], prio, location, message)
    );
}

/// Prints a `host_energy` message (the end report, the warnings of the start), from no actor
/// as SimGrid's plugin does (it logs from the kernel).
pub(crate) fn log_energy(prio: Priority, location: Option<(&str, i32)>, message: &str, now: f64) {
    log(&CATEGORY, prio, location, message, now, false);
}

/// The rank running now, if any.
fn current() -> Option<u32> {
    if !world_exists() {
        return None;
    }
    simcore::crash::current_actor().filter(|r| with_world(|w| (*r as usize) < w.ranks.len()))
}

/// Ends the run (a program error) with `why`.
fn stop(why: String) -> ! {
    match current() {
        Some(me) => entry::abort_run(me, why),
        None => {
            eprintln!("smpirun: error: {why}");
            std::process::exit(1)
        }
    }
}

fn now() -> f64 {
    with_world(|w| w.kernel.now())
}

/// A failed `xbt_assert` of the plugin: SimGrid's `root/CRITICAL` line, then the run ends
/// (exit status 134, as SimGrid aborts).
fn assert_failed(message: String) -> ! {
    log(&["root"], Priority::Critical, None, &message, now(), true);
    stop(format!("aborted by xbt_assert: {message}"))
}

/// The host behind a handle (`sg_host_t`: its index plus one).
fn host_of(call: &str, host: *const c_void) -> HostId {
    let n = with_world(|w| w.platform.hosts.len());
    match (host as usize).checked_sub(1) {
        Some(i) if i < n => HostId(i as u32),
        _ => stop(format!(
            "{call}: {host:?} is not a host (sg_host_t) of the platform"
        )),
    }
}

/// `f` on the plugin now; the run ends with SimGrid's message when the plugin is off.
fn with_plugin<R>(call: &str, f: impl FnOnce(&mut Access<'_>) -> R) -> R {
    let kernel = with_world(|w| w.kernel.clone());
    kernel.energy(f).unwrap_or_else(|| {
        stop(format!(
            "{call}: The Energy plugin is not active. Please call sg_host_energy_plugin_init() before calling any \
             function related to that plugin (or run with --cfg=plugin:host_energy)."
        ))
    })
}

/// Turns the plugin on for the run (from `--cfg=plugin:host_energy`, or a program at time 0),
/// with SimGrid's warnings for hosts without profile; the error names the host and property.
pub(crate) fn start_plugin(kernel: &simcore::KernelHandle) -> Result<(), String> {
    let warnings = kernel.enable_host_energy().map_err(|e| e.to_string())?;
    for w in warnings {
        log_energy(
            Priority::Warning,
            Some(simcore::energy::WARNING_LOCATION),
            &w,
            kernel.now(),
        );
    }
    Ok(())
}

/// `pstate` of a host's power profile, or the end of the run when the host has no such pstate.
fn at_pstate(
    call: &str,
    host: *const c_void,
    pstate: c_int,
    what: fn(&Access<'_>, HostId, i64) -> Result<f64, String>,
) -> f64 {
    let h = host_of(call, host);
    with_plugin(call, |e| what(e, h, i64::from(pstate))).unwrap_or_else(|why| stop(format!("{call}: {why}")))
}

/// Turns the plugin on (nothing if it is on already). Only at time 0: see the module doc.
#[no_mangle]
pub(super) extern "C" fn sg_host_energy_plugin_init() {
    let kernel = with_world(|w| w.kernel.clone());
    if kernel.energy(|_| ()).is_some() {
        return;
    }
    let t = kernel.now();
    if t > 0.0 {
        stop(format!(
            "sg_host_energy_plugin_init() called at t={t:.6} s: not supported once the simulation has started \
             (SimGrid needs it before the platform is loaded); run with --cfg=plugin:host_energy"
        ));
    }
    if let Err(e) = start_plugin(&kernel) {
        stop(format!("sg_host_energy_plugin_init(): {e}"));
    }
}

/// Brings every host's energy up to now.
#[no_mangle]
pub(super) extern "C" fn sg_host_energy_update_all() {
    with_plugin("sg_host_energy_update_all", |e| e.update_all());
}

/// The energy the host consumed so far, in joules.
#[no_mangle]
pub(super) extern "C" fn sg_host_get_consumed_energy(host: *const c_void) -> f64 {
    let call = "sg_host_get_consumed_energy";
    let h = host_of(call, host);
    let answer = with_plugin(call, |e| e.has_profile(h).then(|| e.consumed(h)));
    answer.unwrap_or_else(|| assert_failed(no_profile(h)))
}

/// The power of the host now, in watts.
#[no_mangle]
pub(super) extern "C" fn sg_host_get_current_consumption(host: *const c_void) -> f64 {
    let call = "sg_host_get_current_consumption";
    let h = host_of(call, host);
    let answer = with_plugin(call, |e| e.has_profile(h).then(|| e.current(h)));
    answer.unwrap_or_else(|| assert_failed(no_profile(h)))
}

fn no_profile(h: HostId) -> String {
    let name = with_world(|w| w.platform.host(h).name.clone());
    format!("No power range properties specified for host {name}")
}

/// Idle power of pstate 0, in watts (0 without profile).
#[no_mangle]
pub(super) extern "C" fn sg_host_get_idle_consumption(host: *const c_void) -> f64 {
    at_pstate("sg_host_get_idle_consumption", host, 0, |e, h, p| e.idle_at(h, p))
}

/// Idle power of `pstate`, in watts (0 without profile).
#[no_mangle]
pub(super) extern "C" fn sg_host_get_idle_consumption_at(host: *const c_void, pstate: c_int) -> f64 {
    at_pstate("sg_host_get_idle_consumption_at", host, pstate, |e, h, p| {
        e.idle_at(h, p)
    })
}

/// Power of `pstate` at an epsilon load, in watts (0 without profile).
#[no_mangle]
pub(super) extern "C" fn sg_host_get_wattmin_at(host: *const c_void, pstate: c_int) -> f64 {
    at_pstate("sg_host_get_wattmin_at", host, pstate, |e, h, p| {
        e.epsilon_at(h, p)
    })
}

/// Power of `pstate` with all cores busy, in watts (0 without profile).
#[no_mangle]
pub(super) extern "C" fn sg_host_get_wattmax_at(host: *const c_void, pstate: c_int) -> f64 {
    at_pstate("sg_host_get_wattmax_at", host, pstate, |e, h, p| {
        e.all_cores_at(h, p)
    })
}

/// `AllCores − Epsilon` of `pstate`, in watts (0 without profile).
#[no_mangle]
pub(super) extern "C" fn sg_host_get_power_range_slope_at(host: *const c_void, pstate: c_int) -> f64 {
    at_pstate("sg_host_get_power_range_slope_at", host, pstate, |e, h, p| {
        e.slope_at(h, p)
    })
}
