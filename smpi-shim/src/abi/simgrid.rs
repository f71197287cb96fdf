//! SimGrid's C helper API that SMPI programs include (`xbt/log.h`,
//! `xbt/asserts.h`, `simgrid/actor.h`, `simgrid/host.h`, `simgrid/engine.h`,
//! `simgrid/instr.h`), answered as SMPI 3.32 answers for a rank.
//!
//! - Logging: the headers keep each category in a C struct of the program
//!   ([`Category`]) and format messages with `vsnprintf`; here the threshold
//!   of a category is resolved once (`host::xbt_log`) and lines are written
//!   on C's `stderr`, the stream SimGrid logs to, so they interleave with the
//!   program's own `fprintf(stderr, ...)` in order. SimGrid's own categories
//!   (`root`, `smpi`, `xbt_cfg`, ...) are exported as data from here, so a
//!   program may hang its categories under them as it does with libsimgrid.
//! - `xbt_assert`/`xbt_die`/`xbt_abort`: a `root/CRITICAL` line like
//!   SimGrid's, then the run ends as a failure of the rank, with exit status
//!   134 (SimGrid ends with `abort()`, hence 128 + SIGABRT).
//! - Actors and hosts: SMPI runs rank `r` as actor `"r"` with pid `r + 1`, on
//!   its host of the placement. Handles (`sg_actor_t`, `sg_host_t`) are
//!   opaque to the program: here they are the rank or host index plus one.
#![allow(clippy::missing_safety_doc)]

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::ffi::{c_char, c_int, c_long, c_void, CStr, CString};

use simcore::platform::HostId;

use crate::host::xbt_log::{self, Origin, Priority};
use crate::mpi::entry;
use crate::mpi::{with_world, world_exists};

/// A log category as the headers lay it out (`struct xbt_log_category_s` of
/// our `xbt/log.h`).
#[repr(C)]
#[derive(Debug)]
pub(crate) struct Category {
    /// The parent category (`NULL` for `root`).
    parent: *const Category,
    name: *const c_char,
    description: *const c_char,
    /// The resolved threshold, or -1 until the first message or check.
    threshold: c_int,
}

macro_rules! export_categories {
    ($($name:ident < $parent:ident),* $(,)?) => {
        /// SimGrid's own categories, exported under libsimgrid's symbol names.
        #[allow(non_upper_case_globals)]
        mod categories {
            use super::Category;
            use std::ffi::c_char;

            #[export_name = "_simgrid_log_category__root"]
            pub(super) static mut root: Category = Category {
                parent: std::ptr::null(),
                name: c"root".as_ptr(),
                description: c"The root of the category hierarchy".as_ptr(),
                threshold: -1,
            };
            $(
                #[export_name = concat!("_simgrid_log_category__", stringify!($name))]
                pub(super) static mut $name: Category = Category {
                    parent: &raw const $parent,
                    name: concat!(stringify!($name), "\0").as_ptr() as *const c_char,
                    description: c"a category of SimGrid (smpirun does not produce its messages)".as_ptr(),
                    threshold: -1,
                };
            )*
        }
    };
}
xbt_log::with_simgrid_categories!(export_categories);

/// The C strings handed to the program (host and actor names, kept for the
/// whole run: the program may hold the pointers) and the tracing category of
/// each rank (`TRACE_smpi_set_category`).
#[derive(Default)]
struct Names {
    hosts: BTreeMap<u32, CString>,
    actors: BTreeMap<u32, CString>,
    #[allow(
        dead_code,
        reason = "recorded for the tracing to come (smpirun -trace), which will read it"
    )]
    trace_category: BTreeMap<u32, String>,
}

thread_local! {
    static NAMES: RefCell<Names> = RefCell::new(Names::default());
}

unsafe fn text(p: *const c_char) -> String {
    if p.is_null() {
        return "(null)".into();
    }
    // Safety: a C string of the program (the caller's contract).
    unsafe { CStr::from_ptr(p).to_string_lossy().into_owned() }
}

/// The rank running now, if any.
fn current() -> Option<u32> {
    if !world_exists() {
        return None;
    }
    simcore::crash::current_actor().filter(|r| with_world(|w| (*r as usize) < w.ranks.len()))
}

/// Who logs and the simulated time: the running rank, else nobody (before the
/// ranks start, e.g. in a constructor of the program).
fn origin_now() -> (Option<(String, u32)>, f64) {
    if !world_exists() {
        return (None, 0.0);
    }
    match current() {
        Some(r) => with_world(|w| {
            let rank = &w.ranks[r as usize];
            let now = if rank.ctx.is_null() {
                w.kernel.now()
            } else {
                rank.ctx().now()
            };
            (Some((w.platform.host(w.hosts[r as usize]).name.clone(), r)), now)
        }),
        None => (None, with_world(|w| w.kernel.now())),
    }
}

/// Writes on C's `stderr`, where the program's own error output goes.
fn write_stderr(line: &str) {
    extern "C" {
        static mut stderr: *mut libc::FILE;
    }
    let text = CString::new(line.replace('\0', "\\0")).expect("NULs were replaced");
    // Safety: libc's stderr stream, written through stdio like the program does.
    unsafe {
        libc::fputs(text.as_ptr(), stderr);
    }
}

/// Prints one log line of `category` (a name) in SimGrid's layout.
fn emit(category: &str, prio: Priority, location: Option<(&str, i32)>, message: &str) {
    let (origin, now) = origin_now();
    let location = location.filter(|_| !xbt_log::no_loc());
    let origin = origin.as_ref().map(|(host, rank)| Origin { host, rank: *rank });
    write_stderr(&xbt_log::format_line(
        origin, now, category, prio, location, message,
    ));
}

/// Ends the run because of a failed `xbt_assert`, `xbt_die` or `xbt_abort`
/// on the running rank (exit status 134, see the module doc).
fn fail(what: &str, location: Option<(&str, i32)>, message: Option<&str>) -> ! {
    if let Some(m) = message {
        emit("root", Priority::Critical, location, m);
    }
    let at = location.map(|(f, l)| format!(" at {f}:{l}")).unwrap_or_default();
    let why = format!(
        "aborted by {what}{at}{}",
        message.map(|m| format!(": {m}")).unwrap_or_default()
    );
    match current() {
        Some(me) => entry::abort_run(me, why),
        None => {
            // Outside of any rank (a constructor of the program): nothing to fail but the process.
            eprintln!("smpirun: error: {why}");
            // Safety: flushing C stdio before leaving.
            unsafe { libc::fflush(std::ptr::null_mut()) };
            std::process::exit(128 + libc::SIGABRT)
        }
    }
}

/// Ends the run on a bad argument of a SimGrid function (a program error).
fn bad_argument(call: &str, what: String) -> ! {
    let why = format!("{call}: {what}");
    match current() {
        Some(me) => entry::abort_run(me, why),
        None => {
            eprintln!("smpirun: error: {why}");
            std::process::exit(1)
        }
    }
}

// ------------------------------------------------------------------ logging (xbt/log.h)

/// Resolves (and caches in the category) the threshold of `cat`.
#[no_mangle]
pub(super) unsafe extern "C" fn _xbt_log_cat_init(cat: *mut Category) -> c_int {
    if cat.is_null() {
        bad_argument("XBT_LOG", "NULL category".into());
    }
    // Safety: categories are the program's structs (or ours), linked by parent pointers.
    unsafe {
        let mut names = Vec::new();
        let mut c: *const Category = cat;
        // The depth bound guards against a corrupted chain; real ones are a few levels deep.
        while !c.is_null() && names.len() < 64 {
            names.push(text((*c).name));
            c = (*c).parent;
        }
        let chain: Vec<&str> = names.iter().map(String::as_str).collect();
        let (prio, cacheable) = xbt_log::threshold(&chain);
        if cacheable {
            (*cat).threshold = prio as c_int;
        }
        prio as c_int
    }
}

/// Prints a message already formatted by the header (`vsnprintf`).
#[no_mangle]
pub(super) unsafe extern "C" fn _xbt_log_emit(
    cat: *const Category,
    prio: c_int,
    file: *const c_char,
    line: c_int,
    message: *const c_char,
) {
    let Some(p) = Priority::from_c(prio) else {
        bad_argument(
            "XBT_LOG",
            format!("priority {prio} is not one of xbt_log_priority_trace..critical"),
        );
    };
    // Safety: the program's category struct and C strings.
    unsafe {
        let name = if cat.is_null() {
            "root".into()
        } else {
            text((*cat).name)
        };
        emit(&name, p, Some((&text(file), line)), &text(message));
    }
}

/// A failed `xbt_assert`: its message (already formatted) at `file:line`.
#[no_mangle]
pub(super) unsafe extern "C" fn _xbt_assert_failed(
    file: *const c_char,
    line: c_int,
    message: *const c_char,
) -> ! {
    // Safety: C strings of the program.
    let (f, m) = unsafe { (text(file), text(message)) };
    fail("xbt_assert", Some((&f, line)), Some(&m))
}

/// `xbt_die(...)`: its message (already formatted) at `file:line`.
#[no_mangle]
pub(super) unsafe extern "C" fn _xbt_die_at(file: *const c_char, line: c_int, message: *const c_char) -> ! {
    // Safety: C strings of the program.
    let (f, m) = unsafe { (text(file), text(message)) };
    fail("xbt_die", Some((&f, line)), Some(&m))
}

/// `xbt_abort()`: ends the run without a log line (SimGrid's "kill the program in silence").
#[no_mangle]
pub(super) extern "C" fn xbt_abort() -> ! {
    fail("xbt_abort", None, None)
}

// ------------------------------------------------------------------ actors (simgrid/actor.h)

/// The handle of object `i` (actors and hosts): `i + 1`, so that NULL is none.
fn handle_of(i: u32) -> *const c_void {
    (i as usize + 1) as *const c_void
}

/// The object behind a handle ([`handle_of`]); the run ends when there is
/// no such object among the `n` (`what`: what the handle should be).
fn index_of(call: &str, handle: *const c_void, n: usize, what: &str) -> u32 {
    match (handle as usize).checked_sub(1) {
        Some(i) if i < n => i as u32,
        _ => bad_argument(call, format!("{handle:?} is not {what}")),
    }
}

/// The name of object `i`, made by `make` the first time and kept for the
/// whole run in the map that `pick` chooses.
fn kept_name(
    pick: fn(&mut Names) -> &mut BTreeMap<u32, CString>,
    i: u32,
    make: impl FnOnce() -> CString,
) -> *const c_char {
    NAMES.with(|n| pick(&mut n.borrow_mut()).entry(i).or_insert_with(make).as_ptr())
}

fn actor_handle(rank: u32) -> *const c_void {
    handle_of(rank)
}

fn rank_of(call: &str, actor: *const c_void) -> u32 {
    let n = with_world(|w| w.ranks.len());
    index_of(call, actor, n, "an actor (sg_actor_t) of this run")
}

fn actor_name(rank: u32) -> *const c_char {
    kept_name(
        |n| &mut n.actors,
        rank,
        || CString::new(rank.to_string()).expect("digits"),
    )
}

/// The calling rank, or the end of the run when called outside of any rank.
fn me(call: &str) -> u32 {
    current().unwrap_or_else(|| bad_argument(call, "called outside of any rank".into()))
}

#[no_mangle]
pub(super) extern "C" fn sg_actor_self() -> *const c_void {
    // SimGrid answers NULL outside of any actor.
    current().map_or(std::ptr::null(), actor_handle)
}

#[no_mangle]
pub(super) extern "C" fn sg_actor_self_get_pid() -> c_long {
    c_long::from(me("sg_actor_self_get_pid")) + 1
}

#[no_mangle]
pub(super) extern "C" fn sg_actor_self_get_ppid() -> c_long {
    me("sg_actor_self_get_ppid");
    // SMPI's ranks are started by the engine itself, not by another actor.
    0
}

#[no_mangle]
pub(super) extern "C" fn sg_actor_self_get_name() -> *const c_char {
    actor_name(me("sg_actor_self_get_name"))
}

#[no_mangle]
pub(super) extern "C" fn sg_actor_get_pid(actor: *const c_void) -> c_long {
    c_long::from(rank_of("sg_actor_get_pid", actor)) + 1
}

#[no_mangle]
pub(super) extern "C" fn sg_actor_get_ppid(actor: *const c_void) -> c_long {
    rank_of("sg_actor_get_ppid", actor);
    0
}

#[no_mangle]
pub(super) extern "C" fn sg_actor_get_name(actor: *const c_void) -> *const c_char {
    actor_name(rank_of("sg_actor_get_name", actor))
}

#[no_mangle]
pub(super) extern "C" fn sg_actor_get_host(actor: *const c_void) -> *const c_void {
    let r = rank_of("sg_actor_get_host", actor);
    host_handle(with_world(|w| w.hosts[r as usize]))
}

// ------------------------------------------------------------------ hosts (simgrid/host.h)

fn host_handle(h: HostId) -> *const c_void {
    handle_of(h.0)
}

fn host_of(call: &str, host: *const c_void) -> HostId {
    let n = with_world(|w| w.platform.hosts.len());
    HostId(index_of(call, host, n, "a host (sg_host_t) of the platform"))
}

fn host_name(h: HostId) -> *const c_char {
    kept_name(
        |n| &mut n.hosts,
        h.0,
        || CString::new(with_world(|w| w.platform.host(h).name.clone())).unwrap_or_default(),
    )
}

#[no_mangle]
pub(super) extern "C" fn sg_host_self() -> *const c_void {
    match current() {
        Some(r) => host_handle(with_world(|w| w.hosts[r as usize])),
        None => std::ptr::null(),
    }
}

#[no_mangle]
pub(super) extern "C" fn sg_host_self_get_name() -> *const c_char {
    let r = me("sg_host_self_get_name");
    host_name(with_world(|w| w.hosts[r as usize]))
}

#[no_mangle]
pub(super) extern "C" fn sg_host_get_name(host: *const c_void) -> *const c_char {
    host_name(host_of("sg_host_get_name", host))
}

#[no_mangle]
pub(super) unsafe extern "C" fn sg_host_by_name(name: *const c_char) -> *const c_void {
    // Safety: a C string of the program.
    let name = unsafe { text(name) };
    // SimGrid answers NULL for an unknown name.
    with_world(|w| w.platform.host_by_name(&name)).map_or(std::ptr::null(), host_handle)
}

#[no_mangle]
pub(super) extern "C" fn sg_host_count() -> usize {
    with_world(|w| w.platform.hosts.len())
}

/// The peak speed of one core of the host in its current pstate, in flop/s (SimGrid's
/// `Host::get_speed`: a speed profile's scale is not included; see
/// [`sg_host_get_available_speed`]).
#[no_mangle]
pub(super) extern "C" fn sg_host_get_speed(host: *const c_void) -> f64 {
    let h = host_of("sg_host_get_speed", host);
    with_world(|w| w.kernel.host_peak_speed(h))
}

/// The fraction of its peak speed that a speed profile gives the host now (1 without one).
#[no_mangle]
pub(super) extern "C" fn sg_host_get_available_speed(host: *const c_void) -> f64 {
    let h = host_of("sg_host_get_available_speed", host);
    with_world(|w| w.kernel.host_speed_scale(h))
}

/// How many pstates (speeds) the host has (`speed="100Mf,50Mf,20Mf"`: 3).
#[no_mangle]
pub(super) extern "C" fn sg_host_get_nb_pstates(host: *const c_void) -> std::ffi::c_ulong {
    let h = host_of("sg_host_get_nb_pstates", host);
    with_world(|w| w.platform.host(h).pstate_speeds.len() as std::ffi::c_ulong)
}

/// The pstate the host runs in.
#[no_mangle]
pub(super) extern "C" fn sg_host_get_pstate(host: *const c_void) -> std::ffi::c_ulong {
    let h = host_of("sg_host_get_pstate", host);
    with_world(|w| w.kernel.host_pstate(h) as std::ffi::c_ulong)
}

/// Switches the host to a pstate: its computations run at that pstate's speed from now on.
/// A pstate the host does not have ends the run (SimGrid asserts).
#[no_mangle]
pub(super) extern "C" fn sg_host_set_pstate(host: *const c_void, pstate: std::ffi::c_ulong) {
    let h = host_of("sg_host_set_pstate", host);
    let done = with_world(|w| {
        w.kernel
            .set_host_pstate(h, usize::try_from(pstate).unwrap_or(usize::MAX))
    });
    if let Err(e) = done {
        bad_argument("sg_host_set_pstate", e);
    }
}

/// The speed of one core of the host in pstate `pstate`, in flop/s.
#[no_mangle]
pub(super) extern "C" fn sg_host_get_pstate_speed(host: *const c_void, pstate: std::ffi::c_ulong) -> f64 {
    let h = host_of("sg_host_get_pstate_speed", host);
    let speed = with_world(|w| {
        let speeds = &w.platform.host(h).pstate_speeds;
        usize::try_from(pstate)
            .ok()
            .and_then(|p| speeds.get(p).copied())
            .ok_or_else(|| {
                format!(
                    "host `{}` has {} pstate(s), not pstate {pstate}",
                    w.platform.host(h).name,
                    speeds.len()
                )
            })
    });
    speed.unwrap_or_else(|e| bad_argument("sg_host_get_pstate_speed", e))
}

/// The name older SimGrid versions gave [`sg_host_get_speed`] (removed from
/// SimGrid's headers before 3.32; kept for programs written for them).
#[no_mangle]
pub(super) extern "C" fn sg_host_speed(host: *const c_void) -> f64 {
    let h = host_of("sg_host_speed", host);
    with_world(|w| w.kernel.host_peak_speed(h))
}

#[no_mangle]
pub(super) extern "C" fn sg_host_core_count(host: *const c_void) -> c_int {
    let h = host_of("sg_host_core_count", host);
    with_world(|w| w.platform.host(h).cores as c_int)
}

// ------------------------------------------------------------------ engine and tracing

/// The simulated time now. Not an MPI call: unlike `MPI_Wtime`, it injects no
/// computation time and costs nothing (as in SMPI).
#[no_mangle]
pub(super) extern "C" fn simgrid_get_clock() -> f64 {
    origin_now().1
}

/// Sets the tracing category of the rank's next operations. Tracing is not
/// implemented (`-trace` is refused with a warning), so the category is only
/// recorded, as SMPI does when tracing is off.
#[no_mangle]
#[allow(non_snake_case, reason = "SimGrid's name")]
pub(super) unsafe extern "C" fn TRACE_smpi_set_category(category: *const c_char) {
    let r = me("TRACE_smpi_set_category");
    // Safety: a C string of the program, or NULL (no category).
    let cat = (!category.is_null()).then(|| unsafe { text(category) });
    NAMES.with(|n| {
        let mut n = n.borrow_mut();
        match cat {
            Some(c) => n.trace_category.insert(r, c),
            None => n.trace_category.remove(&r),
        }
    });
}
