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

/// `c"name"` for an identifier: the C name of a libc function.
macro_rules! c_name {
    ($name:ident) => {
        CStr::from_bytes_with_nul(concat!(stringify!($name), "\0").as_bytes()).expect("a C name")
    };
}

/// Exports the getopt parsers, one per flavour: each is one call of the
/// rank's parser ([`getopt_as_rank`]); the short ones take no long options.
macro_rules! getopt_forms {
    ($($name:ident: $flavour:ident($($p:ident: $t:ty),*) => ($long:expr, $index:expr);)*) => {$(
        #[no_mangle]
        pub(super) unsafe extern "C" fn $name(
            argc: c_int,
            argv: *const *mut c_char,
            opts: *const c_char
            $(, $p: $t)*
        ) -> c_int {
            // Safety: the program calls this as libc specifies: its pointers are valid for what it passes.
            unsafe { getopt_as_rank(c_name!($name), Flavour::$flavour, argc, argv, opts, $long, $index) }
        }
    )*};
}

getopt_forms! {
    getopt: Short() => (std::ptr::null(), std::ptr::null_mut());
    __posix_getopt: Posix() => (std::ptr::null(), std::ptr::null_mut());
    getopt_long: Long(long: *const LongOption, index: *mut c_int) => (long, index);
    getopt_long_only: LongOnly(long: *const LongOption, index: *mut c_int) => (long, index);
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

/// Exports libc functions whose state is per process: each runs its body on
/// the calling rank's libc state (`$s`, rank `$r`), and outside a rank calls
/// libc's own function of the same name.
macro_rules! per_rank {
    ($($name:ident($($p:ident: $t:ty),*) $(-> $ret:ty)? = |$s:pat_param, $r:pat_param| $body:expr;)*) => {$(
        #[no_mangle]
        pub(super) unsafe extern "C" fn $name($($p: $t),*) $(-> $ret)? {
            // Safety: the program calls this as libc specifies: its pointers are valid for what it passes.
            unsafe {
                on_rank(|$s, $r| $body)
                    .unwrap_or_else(|| libc_fn::<unsafe extern "C" fn($($t),*) $(-> $ret)?>(c_name!($name))($($p),*))
            }
        }
    )*};
}

per_rank! {
    rand() -> c_int = |s, r| ls::random(s, r) as c_int;
    random() -> c_long = |s, r| ls::random(s, r);
    srand(seed: c_uint) = |s, r| ls::srandom(s, r, seed);
    srandom(seed: c_uint) = |s, r| ls::srandom(s, r, seed);
    initstate(seed: c_uint, buf: *mut c_char, n: usize) -> *mut c_char = |s, r| ls::initstate(s, r, seed, buf, n);
    setstate(buf: *mut c_char) -> *mut c_char = |s, r| ls::setstate(s, r, buf);
    drand48() -> c_double = |s, r| ls::rand48(s, r, Rand48::Drand).0;
    erand48(x: *mut [c_ushort; 3]) -> c_double = |s, r| ls::rand48(s, r, Rand48::Erand(&mut *x)).0;
    lrand48() -> c_long = |s, r| ls::rand48(s, r, Rand48::Lrand).1;
    nrand48(x: *mut [c_ushort; 3]) -> c_long = |s, r| ls::rand48(s, r, Rand48::Nrand(&mut *x)).1;
    mrand48() -> c_long = |s, r| ls::rand48(s, r, Rand48::Mrand).1;
    jrand48(x: *mut [c_ushort; 3]) -> c_long = |s, r| ls::rand48(s, r, Rand48::Jrand(&mut *x)).1;
    srand48(seed: c_long) = |s, r| ls::srand48(s, r, seed);
    seed48(seed: *mut c_ushort) -> *mut c_ushort = |s, r| ls::seed48(s, r, seed);
    lcong48(param: *mut c_ushort) = |s, r| ls::lcong48(s, r, param);
}
