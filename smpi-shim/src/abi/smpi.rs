//! Exports behind `smpi.h` and `smpi/smpi_helpers.h`: memory folding, the
//! malloc interceptor, simulated sleeps and clocks, `exit`, sampling, and
//! shared call results (`SMPI_SHARED_CALL`).
#![allow(clippy::missing_safety_doc)]

use std::ffi::{c_char, c_int, c_uint, c_void, CStr};

use crate::host::{folding as shared, sampling, shared_calls};
use crate::mpi::entry::{self, enter};
use crate::mpi::{self as rt, with_world};

/// A sleep of the program (recorded in a TI trace with `tracing/smpi/sleeping`).
fn user_sleep(me: u32, seconds: f64) {
    crate::mpi::ti_trace::ti!(crate::mpi::ti_trace::sleep(me, seconds));
    rt::sleep_for(me, seconds);
}

// ------------------------------------------------------------------ SMPI extensions (smpi.h)

#[no_mangle]
pub(super) unsafe extern "C" fn smpi_execute(seconds: f64) {
    let g = enter();
    entry::execute_seconds(g.me, seconds, false);
}

#[no_mangle]
pub(super) unsafe extern "C" fn smpi_execute_benched(seconds: f64) {
    let g = enter();
    entry::execute_seconds(g.me, seconds, true);
}

#[no_mangle]
pub(super) unsafe extern "C" fn smpi_execute_flops(flops: f64) {
    let g = enter();
    if flops > 0.0 {
        let ctx = with_world(|w| w.ranks[g.me as usize].ctx());
        crate::mpi::entry::traced_computation(g.me, "smpi_execute_flops", flops, || ctx.compute(flops));
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn smpi_execute_flops_benched(flops: f64) {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe { smpi_execute_flops(flops) }
}

#[no_mangle]
pub(super) unsafe extern "C" fn smpi_sleep_seconds(seconds: f64) {
    let g = enter();
    user_sleep(g.me, seconds);
}

pub(super) unsafe fn site(file: *const c_char, line: c_int) -> String {
    // Safety: the caller upholds this function's contract (see its `# Safety`).
    unsafe {
        let f = if file.is_null() {
            "?".into()
        } else {
            CStr::from_ptr(file).to_string_lossy().into_owned()
        };
        format!("{f}:{line}")
    }
}

/// Who folded allocations belong to: the calling rank (none outside ranks).
pub(super) fn holder() -> u32 {
    simcore::crash::current_actor().unwrap_or(u32::MAX)
}

pub(super) fn fold_or_die(size: usize, ranges: &[(usize, usize)], site: &str) -> *mut c_void {
    match shared::alloc_by(holder(), size, ranges, site) {
        Ok(p) => p as *mut c_void,
        Err(e) => entry::abort_run(
            rt::current_rank(),
            format!("shared malloc of {size} B at {site}: {}", e.0),
        ),
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn smpi_shared_malloc(
    size: usize,
    file: *const c_char,
    line: c_int,
) -> *mut c_void {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe { fold_or_die(size, &[(0, size)], &site(file, line)) }
}

#[no_mangle]
pub(super) unsafe extern "C" fn smpi_shared_malloc_partial(
    size: usize,
    offsets: *const usize,
    n: c_int,
) -> *mut c_void {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        let ranges: Vec<(usize, usize)> = (0..n.max(0) as usize)
            .map(|i| (*offsets.add(2 * i), *offsets.add(2 * i + 1)))
            .collect();
        fold_or_die(size, &ranges, "partial")
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn smpi_shared_free(p: *mut c_void) {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        if !shared::free_by(holder(), p as *mut u8) {
            libc::free(p);
        }
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn smpi_auto_malloc(size: usize) -> *mut c_void {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        let t = shared::auto_threshold();
        let c = shared::cow_threshold();
        if t > 0 && size >= t {
            fold_or_die(size, &[(0, size)], "auto")
        } else if c > 0 && size >= c {
            match shared::alloc_cow(size) {
                Ok(p) => p as *mut c_void,
                Err(e) => entry::abort_run(
                    rt::current_rank(),
                    format!("copy-on-write fold of {size} B: {}", e.0),
                ),
            }
        } else {
            libc::malloc(size)
        }
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn smpi_auto_calloc(n: usize, size: usize) -> *mut c_void {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        let total = n.saturating_mul(size);
        let t = shared::auto_threshold();
        let c = shared::cow_threshold();
        if (t > 0 && total >= t) || (c > 0 && total >= c) {
            // Folded memory is garbage by definition: it is not zeroed.
            // Copy-on-write memory reads as zeros until written.
            smpi_auto_malloc(total)
        } else {
            libc::calloc(n, size)
        }
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn smpi_auto_realloc(p: *mut c_void, size: usize) -> *mut c_void {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        if p.is_null() {
            return smpi_auto_malloc(size);
        }
        let t = shared::auto_threshold();
        let folded_old = shared::size_of(p as *const u8);
        let c = shared::cow_threshold();
        if folded_old.is_none() && !(t > 0 && size >= t) && !(c > 0 && size >= c) {
            return libc::realloc(p, size);
        }
        let old = folded_old.unwrap_or_else(|| libc::malloc_usable_size(p));
        let new = smpi_auto_malloc(size);
        if !new.is_null() {
            shared::copy(p as *const u8, new as *mut u8, old.min(size));
        }
        smpi_auto_free(p);
        new
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn smpi_auto_free(p: *mut c_void) {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        if p.is_null() {
            return;
        }
        if !(shared::any() && shared::free_by(holder(), p as *mut u8)) {
            libc::free(p);
        }
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn smpi_sleep(seconds: c_uint) -> c_uint {
    let g = enter();
    user_sleep(g.me, seconds as f64);
    0
}

#[no_mangle]
pub(super) unsafe extern "C" fn smpi_usleep(usec: c_uint) -> c_int {
    let g = enter();
    user_sleep(g.me, usec as f64 * 1e-6);
    0
}

#[no_mangle]
pub(super) unsafe extern "C" fn smpi_nanosleep(
    req: *const libc::timespec,
    rem: *mut libc::timespec,
) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        let g = enter();
        if !req.is_null() {
            user_sleep(g.me, (*req).tv_sec as f64 + (*req).tv_nsec as f64 * 1e-9);
        }
        if !rem.is_null() {
            *rem = libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
        }
        0
    }
}

pub(super) fn simulated_now(me: u32) -> f64 {
    let (now, cost) = with_world(|w| (w.ranks[me as usize].ctx().now(), w.cfg.wtime));
    rt::sleep_for(me, cost);
    now
}

/// The calling rank's simulated time (a clock read, costed as
/// [`simulated_now`]): whole seconds, and the rest in units of
/// 1/`per_second` s (1e6: microseconds, 1e9: nanoseconds).
fn now_split(per_second: f64) -> (libc::time_t, i64) {
    let g = enter();
    let t = simulated_now(g.me);
    (t.floor() as libc::time_t, ((t - t.floor()) * per_second) as i64)
}

#[no_mangle]
pub(super) unsafe extern "C" fn smpi_gettimeofday(tv: *mut libc::timeval, _tz: *mut c_void) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        let (sec, usec) = now_split(1e6);
        if !tv.is_null() {
            (*tv).tv_sec = sec;
            (*tv).tv_usec = usec as libc::suseconds_t;
        }
        0
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn smpi_clock_gettime(_clk: libc::clockid_t, tp: *mut libc::timespec) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        let (sec, nsec) = now_split(1e9);
        if !tp.is_null() {
            (*tp).tv_sec = sec;
            (*tp).tv_nsec = nsec as libc::c_long;
        }
        0
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn smpi_exit(code: c_int) -> ! {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        let me = rt::current_rank();
        libc::fflush(std::ptr::null_mut());
        for problem in rt::rank_ended(me, code, "called exit with code") {
            eprintln!("smpirun: warning: rank {me} {problem}");
        }
        let ctx = with_world(|w| w.ranks[me as usize].ctx());
        ctx.exit(Ok(()))
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn smpi_sample_1(
    global: c_int,
    file: *const c_char,
    line: c_int,
    iters: c_int,
    thres: f64,
) {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        let f = CStr::from_ptr(file).to_string_lossy();
        sampling::begin(global != 0, rt::current_rank(), &f, line, iters, thres);
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn smpi_sample_count(global: c_int, file: *const c_char, line: c_int) {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        let f = CStr::from_ptr(file).to_string_lossy();
        sampling::count(global != 0, rt::current_rank(), &f, line);
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn smpi_sample_2(global: c_int, file: *const c_char, line: c_int) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        let f = CStr::from_ptr(file).to_string_lossy();
        let me = rt::current_rank();
        match sampling::before(global != 0, me, &f, line) {
            None => 1,
            Some(seconds) => {
                let g = enter();
                entry::execute_seconds(g.me, seconds, false);
                0
            }
        }
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn smpi_sample_3(global: c_int, file: *const c_char, line: c_int) {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        let f = CStr::from_ptr(file).to_string_lossy();
        sampling::after(global != 0, rt::current_rank(), &f, line);
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn smpi_sample_exit(_global: c_int, _file: *const c_char, _line: c_int) {}

/// The site name of a tagged sampled loop (`SMPI_SAMPLE_LOCAL_TAG`, ...).
#[no_mangle]
pub(super) unsafe extern "C" fn smpi_sample_site(file: *const c_char, tag: *const c_char) -> *const c_char {
    // Safety: C strings of the program (a NULL tag is no tag).
    unsafe {
        let f = CStr::from_ptr(file).to_string_lossy();
        let t = if tag.is_null() {
            "".into()
        } else {
            CStr::from_ptr(tag).to_string_lossy()
        };
        sampling::tagged_site(&f, &t)
    }
}

// ------------------------------------------------------------------ SMPI_SHARED_CALL

unsafe fn call_key(func: *const c_char, input: *const c_char) -> (String, String) {
    // Safety: C strings of the program (the caller's contract); NULL reads as empty.
    let s = |p: *const c_char| {
        if p.is_null() {
            String::new()
        } else {
            unsafe { CStr::from_ptr(p).to_string_lossy().into_owned() }
        }
    };
    (s(func), s(input))
}

#[no_mangle]
pub(super) unsafe extern "C" fn smpi_shared_known_call(func: *const c_char, input: *const c_char) -> c_int {
    // Safety: C strings of the program.
    let (f, i) = unsafe { call_key(func, input) };
    shared_calls::known(&f, &i) as c_int
}

#[no_mangle]
pub(super) unsafe extern "C" fn smpi_shared_get_call(
    func: *const c_char,
    input: *const c_char,
) -> *mut c_void {
    // Safety: C strings of the program.
    let (f, i) = unsafe { call_key(func, input) };
    match shared_calls::get(&f, &i) {
        Some(p) => p as *mut c_void,
        None => entry::abort_run(
            rt::current_rank(),
            format!("smpi_shared_get_call: no result of {f} for input '{i}' was stored (see smpi_shared_known_call)"),
        ),
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn smpi_shared_set_call(
    func: *const c_char,
    input: *const c_char,
    data: *mut c_void,
) -> *mut c_void {
    // Safety: C strings of the program.
    let (f, i) = unsafe { call_key(func, input) };
    shared_calls::set(&f, &i, data as usize) as *mut c_void
}
