//! libc functions whose state real programs expect per process, exported so
//! that each rank gets its own copy (see `crate::host::libc_state`). Outside a
//! rank (a library constructor, say) they are libc's own.
#![allow(clippy::missing_safety_doc)]

use std::ffi::{c_char, c_double, c_int, c_long, c_uint, c_ushort, CStr};

use crate::host::libc_state::getopt::{Flavour, LongOption};
use crate::host::libc_state::{self as ls, libc_function, LibcState, Rand48};
use crate::mpi::{with_world, world_exists};

/// Runs `f` on the calling rank's libc state, or returns None outside a rank.
pub(super) fn on_rank<R>(f: impl FnOnce(&mut LibcState, u32) -> R) -> Option<R> {
    let rank = simcore::crash::current_actor()?;
    if !world_exists() {
        return None;
    }
    Some(with_world(|w| f(&mut w.libc, rank)))
}

/// libc's own `name`, with the signature `T`.
pub(super) unsafe fn libc_fn<T: Copy>(name: &CStr) -> T {
    // Safety: the caller upholds this function's contract (see its `# Safety`).
    unsafe {
        let f = libc_function(name);
        std::mem::transmute_copy(&f)
    }
}

pub(super) type Getopt = unsafe extern "C" fn(c_int, *const *mut c_char, *const c_char) -> c_int;
pub(super) type GetoptLong =
    unsafe extern "C" fn(c_int, *const *mut c_char, *const c_char, *const LongOption, *mut c_int) -> c_int;

/// One call of the calling rank's getopt parser (libc's `name` outside a rank).
pub(super) unsafe fn getopt_as_rank(
    name: &CStr,
    flavour: Flavour,
    argc: c_int,
    argv: *const *mut c_char,
    opts: *const c_char,
    long: *const LongOption,
    index: *mut c_int,
) -> c_int {
    // Safety: the caller upholds this function's contract (see its `# Safety`).
    unsafe {
        on_rank(|s, r| {
            s.getopt(r)
                .next(flavour, argc, argv as *mut *mut c_char, opts, long, index)
        })
        .unwrap_or_else(|| match flavour {
            Flavour::Short | Flavour::Posix => libc_fn::<Getopt>(name)(argc, argv, opts),
            Flavour::Long | Flavour::LongOnly => libc_fn::<GetoptLong>(name)(argc, argv, opts, long, index),
        })
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn getopt(argc: c_int, argv: *const *mut c_char, opts: *const c_char) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        getopt_as_rank(
            c"getopt",
            Flavour::Short,
            argc,
            argv,
            opts,
            std::ptr::null(),
            std::ptr::null_mut(),
        )
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn __posix_getopt(
    argc: c_int,
    argv: *const *mut c_char,
    opts: *const c_char,
) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        getopt_as_rank(
            c"__posix_getopt",
            Flavour::Posix,
            argc,
            argv,
            opts,
            std::ptr::null(),
            std::ptr::null_mut(),
        )
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn getopt_long(
    argc: c_int,
    argv: *const *mut c_char,
    opts: *const c_char,
    long: *const LongOption,
    index: *mut c_int,
) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe { getopt_as_rank(c"getopt_long", Flavour::Long, argc, argv, opts, long, index) }
}

#[no_mangle]
pub(super) unsafe extern "C" fn getopt_long_only(
    argc: c_int,
    argv: *const *mut c_char,
    opts: *const c_char,
    long: *const LongOption,
    index: *mut c_int,
) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        getopt_as_rank(
            c"getopt_long_only",
            Flavour::LongOnly,
            argc,
            argv,
            opts,
            long,
            index,
        )
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn strtok(s: *mut c_char, delim: *const c_char) -> *mut c_char {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        match on_rank(ls::strtok_save) {
            Some(save) => libc::strtok_r(s, delim, save),
            None => libc_fn::<unsafe extern "C" fn(*mut c_char, *const c_char) -> *mut c_char>(c"strtok")(
                s, delim,
            ),
        }
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn rand() -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        on_rank(ls::random).map_or_else(
            || libc_fn::<unsafe extern "C" fn() -> c_int>(c"rand")(),
            |v| v as c_int,
        )
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn random() -> c_long {
    unsafe { on_rank(ls::random).unwrap_or_else(|| libc_fn::<unsafe extern "C" fn() -> c_long>(c"random")()) }
}

#[no_mangle]
pub(super) unsafe extern "C" fn srand(seed: c_uint) {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        if on_rank(|s, r| ls::srandom(s, r, seed)).is_none() {
            libc_fn::<unsafe extern "C" fn(c_uint)>(c"srand")(seed);
        }
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn srandom(seed: c_uint) {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        if on_rank(|s, r| ls::srandom(s, r, seed)).is_none() {
            libc_fn::<unsafe extern "C" fn(c_uint)>(c"srandom")(seed);
        }
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn initstate(seed: c_uint, buf: *mut c_char, n: usize) -> *mut c_char {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        on_rank(|s, r| ls::initstate(s, r, seed, buf, n)).unwrap_or_else(|| {
            libc_fn::<unsafe extern "C" fn(c_uint, *mut c_char, usize) -> *mut c_char>(c"initstate")(
                seed, buf, n,
            )
        })
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn setstate(buf: *mut c_char) -> *mut c_char {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        on_rank(|s, r| ls::setstate(s, r, buf))
            .unwrap_or_else(|| libc_fn::<unsafe extern "C" fn(*mut c_char) -> *mut c_char>(c"setstate")(buf))
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn drand48() -> c_double {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        on_rank(|s, r| ls::rand48(s, r, Rand48::Drand).0)
            .unwrap_or_else(|| libc_fn::<unsafe extern "C" fn() -> c_double>(c"drand48")())
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn erand48(x: *mut [c_ushort; 3]) -> c_double {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        on_rank(|s, r| ls::rand48(s, r, Rand48::Erand(&mut *x)).0)
            .unwrap_or_else(|| libc_fn::<unsafe extern "C" fn(*mut [c_ushort; 3]) -> c_double>(c"erand48")(x))
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn lrand48() -> c_long {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        on_rank(|s, r| ls::rand48(s, r, Rand48::Lrand).1)
            .unwrap_or_else(|| libc_fn::<unsafe extern "C" fn() -> c_long>(c"lrand48")())
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn nrand48(x: *mut [c_ushort; 3]) -> c_long {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        on_rank(|s, r| ls::rand48(s, r, Rand48::Nrand(&mut *x)).1)
            .unwrap_or_else(|| libc_fn::<unsafe extern "C" fn(*mut [c_ushort; 3]) -> c_long>(c"nrand48")(x))
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn mrand48() -> c_long {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        on_rank(|s, r| ls::rand48(s, r, Rand48::Mrand).1)
            .unwrap_or_else(|| libc_fn::<unsafe extern "C" fn() -> c_long>(c"mrand48")())
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn jrand48(x: *mut [c_ushort; 3]) -> c_long {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        on_rank(|s, r| ls::rand48(s, r, Rand48::Jrand(&mut *x)).1)
            .unwrap_or_else(|| libc_fn::<unsafe extern "C" fn(*mut [c_ushort; 3]) -> c_long>(c"jrand48")(x))
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn srand48(seed: c_long) {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        if on_rank(|s, r| ls::srand48(s, r, seed)).is_none() {
            libc_fn::<unsafe extern "C" fn(c_long)>(c"srand48")(seed);
        }
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn seed48(seed: *mut c_ushort) -> *mut c_ushort {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        on_rank(|s, r| ls::seed48(s, r, seed)).unwrap_or_else(|| {
            libc_fn::<unsafe extern "C" fn(*mut c_ushort) -> *mut c_ushort>(c"seed48")(seed)
        })
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn lcong48(param: *mut c_ushort) {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        if on_rank(|s, r| ls::lcong48(s, r, param)).is_none() {
            libc_fn::<unsafe extern "C" fn(*mut c_ushort)>(c"lcong48")(param);
        }
    }
}
