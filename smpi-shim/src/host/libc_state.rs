//! Per-rank copies of the libc state real programs expect per process.
//!
//! Every rank runs in one process, so libc's own globals are shared by all of
//! them. Where programs rely on that state being their own, `smpirun` exports
//! wrappers that keep one copy per rank (per program copy: without
//! privatization all ranks share one, as they share their globals):
//!
//! - `getopt`, `getopt_long`, `getopt_long_only` (and `__posix_getopt`) with
//!   their variables `optind`, `optarg`, `opterr`, `optopt`: each program
//!   copy's references to the variables are bound to the rank's own cells at
//!   load time, and the parser is ours ([`getopt`] module), with all of its
//!   state per rank, because glibc's keeps a hidden position inside a group
//!   of short options (`-abc`) that no wrapper can save. It follows glibc
//!   2.36 exactly (argument permutation, `+`/`-`/`:` prefixes,
//!   `POSIXLY_CORRECT`, long options and their abbreviations, `-W foo`, the
//!   error messages); a property test compares the two.
//! - `rand`/`srand`, `random`/`srandom`/`initstate`/`setstate` and the
//!   `drand48` family: one generator per rank, through glibc's reentrant
//!   functions, so each rank draws glibc's own sequence from its own seed.
//! - `strtok`: one saved position per rank.
//! - `errno` is kept per rank by the kernel's context switches (`simcore`).

use std::ffi::{c_char, c_int, c_long, c_uint, c_ushort, c_void, CStr};

pub(crate) mod getopt;

/// glibc's `struct random_data`.
#[repr(C)]
struct RandomData {
    fptr: *mut i32,
    rptr: *mut i32,
    state: *mut i32,
    rand_type: c_int,
    rand_deg: c_int,
    rand_sep: c_int,
    end_ptr: *mut i32,
}

/// glibc's `struct drand48_data`.
#[repr(C)]
#[derive(Default)]
struct Drand48Data {
    x: [c_ushort; 3],
    old_x: [c_ushort; 3],
    c: c_ushort,
    init: c_ushort,
    a: u64,
}

extern "C" {
    fn initstate_r(seed: c_uint, statebuf: *mut c_char, statelen: usize, buf: *mut RandomData) -> c_int;
    fn setstate_r(statebuf: *mut c_char, buf: *mut RandomData) -> c_int;
    fn srandom_r(seed: c_uint, buf: *mut RandomData) -> c_int;
    fn random_r(buf: *mut RandomData, result: *mut i32) -> c_int;
    fn erand48_r(xsubi: *mut c_ushort, buffer: *mut Drand48Data, result: *mut f64) -> c_int;
    fn nrand48_r(xsubi: *mut c_ushort, buffer: *mut Drand48Data, result: *mut c_long) -> c_int;
    fn jrand48_r(xsubi: *mut c_ushort, buffer: *mut Drand48Data, result: *mut c_long) -> c_int;
    fn srand48_r(seed: c_long, buffer: *mut Drand48Data) -> c_int;
    fn seed48_r(seed16v: *mut c_ushort, buffer: *mut Drand48Data) -> c_int;
    fn lcong48_r(param: *mut c_ushort, buffer: *mut Drand48Data) -> c_int;
}

/// The libc state of one rank (or of every rank, without privatization).
pub(crate) struct RankLibc {
    /// Boxed: each program copy's GOT points into its variables.
    getopt: Box<getopt::Parser>,
    random: Box<RandomData>,
    /// glibc's TYPE_3 state (31 words plus the type word), as `rand` has by default.
    random_state: Box<[i32; 32]>,
    drand48: Box<Drand48Data>,
    /// `drand48`, `lrand48`, `mrand48` keep their state in `drand48.x`.
    strtok_save: *mut c_char,
}

impl RankLibc {
    fn new() -> Self {
        let mut r = RankLibc {
            getopt: Box::default(),
            random: Box::new(RandomData {
                fptr: std::ptr::null_mut(),
                rptr: std::ptr::null_mut(),
                state: std::ptr::null_mut(),
                rand_type: 0,
                rand_deg: 0,
                rand_sep: 0,
                end_ptr: std::ptr::null_mut(),
            }),
            random_state: Box::new([0; 32]),
            drand48: Box::default(),
            strtok_save: std::ptr::null_mut(),
        };
        // Safety: a zeroed random_data and a 128-byte buffer, as initstate_r
        // requires; seed 1 is libc's state before any srand.
        unsafe {
            initstate_r(
                1,
                r.random_state.as_mut_ptr().cast(),
                std::mem::size_of::<[i32; 32]>(),
                &mut *r.random,
            );
        }
        r
    }
}

/// The libc state of every rank of a run.
pub(crate) struct LibcState {
    states: Vec<RankLibc>,
}

impl LibcState {
    /// One state per program copy (`copies` is 1 without privatization).
    pub(crate) fn new(copies: usize) -> Self {
        LibcState {
            states: (0..copies.max(1)).map(|_| RankLibc::new()).collect(),
        }
    }

    /// The state of `rank`'s program copy.
    fn index(&self, rank: u32) -> usize {
        (rank as usize).min(self.states.len() - 1)
    }

    /// Where copy `copy`'s references to libc's getopt variables must point
    /// (name, address), for the loader's relocation pass.
    pub(crate) fn getopt_cells(&mut self, copy: usize) -> Vec<(&'static str, usize)> {
        let g = &mut self.states[copy].getopt.vars;
        vec![
            ("optind", &mut g.optind as *mut c_int as usize),
            ("opterr", &mut g.opterr as *mut c_int as usize),
            ("optopt", &mut g.optopt as *mut c_int as usize),
            ("optarg", &mut g.optarg as *mut *mut c_char as usize),
        ]
    }

    /// The getopt parser of `rank`'s program copy.
    pub(crate) fn getopt(&mut self, rank: u32) -> &mut getopt::Parser {
        let i = self.index(rank);
        &mut self.states[i].getopt
    }
}

/// libc's definition of `name` (the next one after smpirun's own export).
pub(crate) fn libc_function(name: &CStr) -> *mut c_void {
    // Safety: a symbol lookup.
    let f = unsafe { libc::dlsym(libc::RTLD_NEXT, name.as_ptr()) };
    assert!(!f.is_null(), "libc defines {}", name.to_string_lossy());
    f
}

/// The rank's `strtok` position.
pub(crate) fn strtok_save(state: &mut LibcState, rank: u32) -> *mut *mut c_char {
    let i = state.index(rank);
    &mut state.states[i].strtok_save
}

/// Draws of the rank's `random()` generator (what `rand()` returns too).
pub(crate) fn random(state: &mut LibcState, rank: u32) -> c_long {
    let i = state.index(rank);
    let mut out = 0i32;
    // Safety: the rank's initialised generator.
    unsafe { random_r(&mut *state.states[i].random, &mut out) };
    c_long::from(out)
}

/// `srandom(seed)` (and `srand`) for the rank.
pub(crate) fn srandom(state: &mut LibcState, rank: u32, seed: c_uint) {
    let i = state.index(rank);
    // Safety: the rank's initialised generator.
    unsafe { srandom_r(seed, &mut *state.states[i].random) };
}

/// `initstate(seed, buf, n)` for the rank: the generator now lives in `buf`.
/// Returns the previous state buffer, as `initstate` does.
///
/// # Safety
/// `buf` must be valid for `n` bytes and outlive its use.
pub(crate) unsafe fn initstate(
    state: &mut LibcState,
    rank: u32,
    seed: c_uint,
    buf: *mut c_char,
    n: usize,
) -> *mut c_char {
    // Safety: the caller upholds this function's contract (see its `# Safety`).
    unsafe {
        let i = state.index(rank);
        let r = &mut *state.states[i].random;
        let old = r.state.sub(1).cast::<c_char>();
        if initstate_r(seed, buf, n, r) != 0 {
            return std::ptr::null_mut();
        }
        old
    }
}

/// `setstate(buf)` for the rank. Returns the previous state buffer.
///
/// # Safety
/// `buf` must be a state buffer set up by `initstate`.
pub(crate) unsafe fn setstate(state: &mut LibcState, rank: u32, buf: *mut c_char) -> *mut c_char {
    // Safety: the caller upholds this function's contract (see its `# Safety`).
    unsafe {
        let i = state.index(rank);
        let r = &mut *state.states[i].random;
        let old = r.state.sub(1).cast::<c_char>();
        if setstate_r(buf, r) != 0 {
            return std::ptr::null_mut();
        }
        old
    }
}

/// The `drand48` family, on the rank's generator.
pub(crate) enum Rand48<'a> {
    /// `drand48()`.
    Drand,
    /// `erand48(x)`.
    Erand(&'a mut [c_ushort; 3]),
    /// `lrand48()`.
    Lrand,
    /// `nrand48(x)`.
    Nrand(&'a mut [c_ushort; 3]),
    /// `mrand48()`.
    Mrand,
    /// `jrand48(x)`.
    Jrand(&'a mut [c_ushort; 3]),
}

/// One draw of the `drand48` family for the rank: (double result, integer result).
pub(crate) fn rand48(state: &mut LibcState, rank: u32, call: Rand48) -> (f64, c_long) {
    let i = state.index(rank);
    let d = &mut *state.states[i].drand48;
    let own: *mut c_ushort = d.x.as_mut_ptr();
    let (mut f, mut l) = (0f64, 0 as c_long);
    // Safety: three-element arrays and the rank's drand48 data.
    unsafe {
        match call {
            Rand48::Drand => erand48_r(own, d, &mut f),
            Rand48::Erand(x) => erand48_r(x.as_mut_ptr(), d, &mut f),
            Rand48::Lrand => nrand48_r(own, d, &mut l),
            Rand48::Nrand(x) => nrand48_r(x.as_mut_ptr(), d, &mut l),
            Rand48::Mrand => jrand48_r(own, d, &mut l),
            Rand48::Jrand(x) => jrand48_r(x.as_mut_ptr(), d, &mut l),
        };
    }
    (f, l)
}

/// `srand48(seed)` for the rank.
pub(crate) fn srand48(state: &mut LibcState, rank: u32, seed: c_long) {
    let i = state.index(rank);
    // Safety: the rank's drand48 data.
    unsafe { srand48_r(seed, &mut *state.states[i].drand48) };
}

/// `seed48(seed)` for the rank; returns where the previous state was saved,
/// as `seed48` does (the rank's own buffer).
///
/// # Safety
/// `seed` must point to three values.
pub(crate) unsafe fn seed48(state: &mut LibcState, rank: u32, seed: *mut c_ushort) -> *mut c_ushort {
    // Safety: the caller upholds this function's contract (see its `# Safety`).
    unsafe {
        let i = state.index(rank);
        let d = &mut *state.states[i].drand48;
        seed48_r(seed, d);
        d.old_x.as_mut_ptr()
    }
}

/// `lcong48(param)` for the rank.
///
/// # Safety
/// `param` must point to seven values.
pub(crate) unsafe fn lcong48(state: &mut LibcState, rank: u32, param: *mut c_ushort) {
    // Safety: the caller upholds this function's contract (see its `# Safety`).
    unsafe {
        let i = state.index(rank);
        lcong48_r(param, &mut *state.states[i].drand48);
    }
}
