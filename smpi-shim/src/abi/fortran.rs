//! The MPI Fortran interface (`include 'mpif.h'` and `use mpi`), for programs
//! built with `smpif90` / `smpiff` (gfortran).
//!
//! Each Fortran MPI routine is an exported function with gfortran's name for
//! it (`MPI_SEND` → `mpi_send_`, plus the profiling name `pmpi_send_`): every
//! argument by reference, `ierror` last, then one hidden `size_t` length per
//! CHARACTER argument. It converts its arguments and calls the C function of
//! the same name, so Fortran and C share all semantics:
//!
//! - handles are the C `int` handles (our `MPI_Fint` is `int`): no table;
//! - LOGICAL is gfortran's: 0 false, 1 (any non-zero) true, like C's ints;
//! - `INTEGER status(MPI_STATUS_SIZE)` has the layout of `MPI_Status` (6
//!   ints) but only 4-byte alignment, so statuses go through an aligned copy;
//! - CHARACTER inputs lose their trailing blanks (Info keys and values their
//!   leading ones too) and outputs are blank-padded to the Fortran length;
//! - indices returned by `MPI_WAITANY`, `MPI_TESTANY`, `MPI_WAITSOME`,
//!   `MPI_TESTSOME` are 1-based;
//! - `MPI_BOTTOM`, `MPI_IN_PLACE`, `MPI_STATUS(ES)_IGNORE`, `MPI_UNWEIGHTED`,
//!   `MPI_WEIGHTS_EMPTY`, ... are variables in common blocks of `mpif.h`. The
//!   blocks are defined here under gfortran's symbol names and the loader
//!   keeps every rank's references bound to these definitions (they are
//!   simulator API, see `host::interpose::is_simulator_api`), so an argument
//!   is special when its address is one of them.
//!
//! The functions whose arguments convert one by one are generated from
//! `mpi.h` by `tools/gen_fortran.py` into `fortran/generated.rs`; the others
//! are written below: `MPI_INIT`, `MPI_WTIME`, attribute caching (Fortran
//! passes attribute values, C pointers), keyval callbacks (a trampoline calls
//! the Fortran procedure with its arguments by reference), `MPI_PCONTROL`,
//! `MPI_BUFFER_DETACH`, `MPI_INFO_GET_STRING` (its length has no NUL),
//! generalized requests (trampolines as for keyvals), window attributes,
//! `MPI_AINT_ADD`/`DIFF` (functions of kind `MPI_ADDRESS_KIND`) and the
//! specific procedures of `MPI_SIZEOF`. User reduction functions and error
//! handlers take pointers in both languages and are passed as they are.
//!
//! `STOP` and `ERROR STOP` end the calling rank / the run the way `exit` does
//! in C (libgfortran's `_gfortran_stop_*` are replaced here), instead of
//! ending the whole simulator process.
#![allow(
    non_snake_case,
    non_upper_case_globals,
    clippy::missing_safety_doc,
    clippy::too_many_arguments
)]

use std::ffi::{c_char, c_int, c_void, CString};

use crate::mpi::entry;
use crate::mpi::{self as rt, mpi_err, CStatus, MPI_SUCCESS, MPI_UNDEFINED};

/// Exports each Fortran binding under its name and its profiling name.
macro_rules! fortran_bindings {
    ($($name:ident / $pname:ident ($($p:ident: $t:ty),* $(,)?) { $($body:tt)* })*) => {$(
        #[no_mangle]
        pub(super) unsafe extern "C" fn $name($($p: $t),*) {
            // Safety: called by a Fortran program as MPI specifies: every
            // argument points at a variable or array of the documented type.
            unsafe { $($body)* }
        }
        #[no_mangle]
        pub(super) unsafe extern "C" fn $pname($($p: $t),*) {
            // Safety: as for the MPI_ name.
            unsafe { $name($($p),*) }
        }
    )*};
}

#[rustfmt::skip]
mod generated;

#[cfg(test)]
mod tests;

// The predefined window attributes (mpi.h).
const WIN_SIZE: c_int = 9;
const WIN_DISP_UNIT: c_int = 10;
const WIN_CREATE_FLAVOR: c_int = 11;
const WIN_MODEL: c_int = 12;

/// `MPI_STATUS_SIZE`: an `MPI_Status` in Fortran INTEGERs.
pub(crate) const STATUS_SIZE: usize = 6;
const _: () = assert!(std::mem::size_of::<CStatus>() == STATUS_SIZE * 4);

/// One common block of `mpif.h`: room for the largest declaration using it.
#[repr(C, align(16))]
pub(super) struct CommonBlock([u8; 64]);

// The special addresses (common blocks `/MPI_FORTRAN_BOTTOM/`, ...). Mutable
// because the program may, in principle, write to them; nothing reads them.
#[no_mangle]
pub(super) static mut mpi_fortran_bottom_: CommonBlock = CommonBlock([0; 64]);
#[no_mangle]
pub(super) static mut mpi_fortran_in_place_: CommonBlock = CommonBlock([0; 64]);
#[no_mangle]
pub(super) static mut mpi_fortran_status_ignore_: CommonBlock = CommonBlock([0; 64]);
#[no_mangle]
pub(super) static mut mpi_fortran_statuses_ignore_: CommonBlock = CommonBlock([0; 64]);
#[no_mangle]
pub(super) static mut mpi_fortran_errcodes_ignore_: CommonBlock = CommonBlock([0; 64]);
#[no_mangle]
pub(super) static mut mpi_fortran_unweighted_: CommonBlock = CommonBlock([0; 64]);
#[no_mangle]
pub(super) static mut mpi_fortran_weights_empty_: CommonBlock = CommonBlock([0; 64]);
#[no_mangle]
pub(super) static mut mpi_fortran_argv_null_: CommonBlock = CommonBlock([0; 64]);
#[no_mangle]
pub(super) static mut mpi_fortran_argvs_null_: CommonBlock = CommonBlock([0; 64]);

fn is_at(p: *const c_void, block: *const CommonBlock) -> bool {
    std::ptr::eq(p, block.cast())
}

/// A choice buffer: `MPI_BOTTOM` and `MPI_IN_PLACE` become C's.
pub(super) fn choice_buf(p: *mut c_void) -> *mut c_void {
    if is_at(p, &raw const mpi_fortran_bottom_) {
        std::ptr::null_mut()
    } else if is_at(p, &raw const mpi_fortran_in_place_) {
        -1isize as *mut c_void
    } else {
        p
    }
}

/// A weight array: `MPI_UNWEIGHTED` and `MPI_WEIGHTS_EMPTY` become C's.
pub(super) fn weight_array(p: *mut c_void) -> *mut c_void {
    if is_at(p, &raw const mpi_fortran_unweighted_) {
        // C's MPI_UNWEIGHTED, ((int *)1).
        std::ptr::without_provenance_mut(1)
    } else if is_at(p, &raw const mpi_fortran_weights_empty_) {
        std::ptr::without_provenance_mut(2)
    } else {
        p
    }
}

fn is_status_ignore(p: *const c_void) -> bool {
    p.is_null()
        || is_at(p, &raw const mpi_fortran_status_ignore_)
        || is_at(p, &raw const mpi_fortran_statuses_ignore_)
}

pub(super) unsafe fn set_ierror(ierror: *mut c_int, rc: c_int) {
    if !ierror.is_null() {
        // Safety: `ierror` is the program's INTEGER.
        unsafe { *ierror = rc };
    }
}

/// A CHARACTER input without its trailing blanks (and anything after a NUL).
pub(super) unsafe fn trim_trailing(p: *const c_char, len: usize) -> CString {
    // Safety: `p` points at `len` characters (gfortran's hidden length).
    let s = if p.is_null() {
        &[][..]
    } else {
        unsafe { std::slice::from_raw_parts(p.cast::<u8>(), len) }
    };
    let s = &s[..s.iter().position(|&c| c == 0).unwrap_or(s.len())];
    let end = s.iter().rposition(|&c| c != b' ').map_or(0, |i| i + 1);
    CString::new(&s[..end]).expect("no NUL left")
}

/// A CHARACTER input without its leading and trailing blanks (Info keys and
/// values: MPI strips both).
pub(super) unsafe fn trim_both(p: *const c_char, len: usize) -> CString {
    // Safety: as for trim_trailing.
    let t = unsafe { trim_trailing(p, len) };
    let b = t.as_bytes();
    let start = b.iter().position(|&c| c != b' ').unwrap_or(b.len());
    CString::new(&b[start..]).expect("no NUL")
}

/// A C buffer for a CHARACTER output of Fortran length `len`: at least as long
/// as the longest string the C functions write (`MPI_MAX_INFO_VAL` + 1).
pub(super) fn out_string_buffer(len: usize) -> Vec<u8> {
    vec![0u8; len.max(4096) + 1]
}

/// Copies a C string into a CHARACTER output, truncated or blank-padded to
/// its length `len`.
pub(super) unsafe fn blank_pad(c: &[u8], dst: *mut c_char, len: usize) {
    if dst.is_null() {
        return;
    }
    let n = c.iter().position(|&b| b == 0).unwrap_or(c.len()).min(len);
    // Safety: `dst` holds `len` characters.
    unsafe {
        std::ptr::copy_nonoverlapping(c.as_ptr(), dst.cast::<u8>(), n);
        std::ptr::write_bytes(dst.cast::<u8>().add(n), b' ', len - n);
    }
}

/// The C status for an output status argument: a copy of the program's, as
/// the C call may leave fields alone (single completions never write
/// `MPI_ERROR`, and MPI says it keeps its value).
pub(super) unsafe fn status_out(p: *mut c_void) -> CStatus {
    // Safety: as in status_in.
    unsafe { status_in(p) }
}

/// The C status for a status the call reads: a copy of the Fortran array.
pub(super) unsafe fn status_in(p: *mut c_void) -> CStatus {
    if is_status_ignore(p) {
        // Safety: CStatus is plain integers.
        return unsafe { std::mem::zeroed() };
    }
    // Safety: `p` is an INTEGER(MPI_STATUS_SIZE) array (4-byte aligned only).
    unsafe { std::ptr::read_unaligned(p.cast::<CStatus>()) }
}

/// The status pointer to give C: null for `MPI_STATUS_IGNORE`.
pub(super) fn status_ptr(c: &mut CStatus, p: *mut c_void) -> *mut c_void {
    if is_status_ignore(p) {
        std::ptr::null_mut()
    } else {
        (c as *mut CStatus).cast()
    }
}

/// Copies a C status back into the Fortran array (unless ignored).
pub(super) unsafe fn status_back(c: &CStatus, p: *mut c_void) {
    if !is_status_ignore(p) {
        // Safety: as in status_in.
        unsafe { std::ptr::write_unaligned(p.cast::<CStatus>(), *c) };
    }
}

/// C statuses for an array of `n` statuses.
pub(super) fn statuses_buffer(n: c_int) -> Vec<CStatus> {
    // Safety: CStatus is plain integers.
    vec![unsafe { std::mem::zeroed() }; usize::try_from(n).unwrap_or(0)]
}

/// The statuses pointer to give C: null for `MPI_STATUSES_IGNORE`.
pub(super) fn statuses_ptr(c: &mut [CStatus], p: *mut c_void) -> *mut c_void {
    if is_status_ignore(p) {
        std::ptr::null_mut()
    } else {
        c.as_mut_ptr().cast()
    }
}

/// Copies the first `n` C statuses back into the Fortran array (unless ignored).
pub(super) unsafe fn statuses_back(c: &[CStatus], p: *mut c_void, n: c_int) {
    if is_status_ignore(p) {
        return;
    }
    let n = usize::try_from(n).unwrap_or(0).min(c.len());
    for (i, s) in c[..n].iter().enumerate() {
        // Safety: the Fortran array holds at least `n` statuses.
        unsafe { std::ptr::write_unaligned(p.cast::<CStatus>().add(i), *s) };
    }
}

/// Makes the first `n` indices of `p` 1-based (`MPI_UNDEFINED` stays).
pub(super) unsafe fn one_based(p: *mut c_void, n: c_int) {
    for i in 0..usize::try_from(n).unwrap_or(0) {
        // Safety: `p` holds at least `n` INTEGERs.
        unsafe {
            let v = p.cast::<c_int>().add(i);
            if *v != MPI_UNDEFINED && *v >= 0 {
                *v += 1;
            }
        }
    }
}

/// Default-INTEGER displacements (deprecated MPI-1 Fortran forms) as `MPI_Aint`s.
pub(super) unsafe fn widen(n: c_int, p: *const c_int) -> Vec<isize> {
    let n = usize::try_from(n).unwrap_or(0);
    if p.is_null() || n == 0 {
        return Vec::new();
    }
    // Safety: `p` holds `n` INTEGERs.
    unsafe { std::slice::from_raw_parts(p, n) }
        .iter()
        .map(|&v| v as isize)
        .collect()
}

/// Stores an `MPI_Aint` result into a default INTEGER (deprecated MPI-1
/// forms); a value that does not fit is an error, never a truncated number.
pub(super) unsafe fn narrow(rc: c_int, v: isize, dst: *mut c_int, call: &'static str) -> c_int {
    if rc != MPI_SUCCESS {
        return rc;
    }
    match c_int::try_from(v) {
        Ok(x) => {
            // Safety: `dst` is the program's INTEGER.
            unsafe { *dst = x };
            MPI_SUCCESS
        }
        Err(_) => entry::handle_error(
            rt::current_rank(),
            1,
            call,
            mpi_err(
                rt::MPI_ERR_ARG,
                format!("{v} does not fit in a default INTEGER (Fortran {call}): use the MPI-2 form with INTEGER(KIND=MPI_ADDRESS_KIND)"),
            ),
        ),
    }
}

extern "C" {
    fn MPI_Init(argc: *mut c_void, argv: *mut c_void) -> c_int;
    fn MPI_Init_thread(argc: *mut c_void, argv: *mut c_void, required: c_int, provided: *mut c_void)
        -> c_int;
    fn MPI_Wtime() -> f64;
    fn MPI_Wtick() -> f64;
    fn MPI_Buffer_detach(buffer: *mut c_void, size: *mut c_void) -> c_int;
    fn MPI_Comm_create_keyval(
        copy: *mut c_void,
        delete: *mut c_void,
        keyval: *mut c_void,
        extra: *mut c_void,
    ) -> c_int;
    fn MPI_Type_create_keyval(
        copy: *mut c_void,
        delete: *mut c_void,
        keyval: *mut c_void,
        extra: *mut c_void,
    ) -> c_int;
    fn MPI_Comm_set_attr(comm: c_int, keyval: c_int, val: *mut c_void) -> c_int;
    fn MPI_Comm_get_attr(comm: c_int, keyval: c_int, val: *mut c_void, flag: *mut c_void) -> c_int;
    fn MPI_Type_set_attr(dt: c_int, keyval: c_int, val: *mut c_void) -> c_int;
    fn MPI_Type_get_attr(dt: c_int, keyval: c_int, val: *mut c_void, flag: *mut c_void) -> c_int;
    fn MPI_Win_create_keyval(
        copy: *mut c_void,
        delete: *mut c_void,
        keyval: *mut c_void,
        extra: *mut c_void,
    ) -> c_int;
    fn MPI_Win_set_attr(win: c_int, keyval: c_int, val: *mut c_void) -> c_int;
    fn MPI_Win_get_attr(win: c_int, keyval: c_int, val: *mut c_void, flag: *mut c_void) -> c_int;
    fn MPI_Info_get_string(
        info: c_int,
        key: *const c_char,
        buflen: *mut c_int,
        value: *mut c_char,
        flag: *mut c_int,
    ) -> c_int;
    fn MPI_Info_create_env(argc: c_int, argv: *mut c_void, info: *mut c_void) -> c_int;
    fn MPI_Grequest_start(
        query: Option<rt::GreqQueryFn>,
        free: Option<rt::GreqFreeFn>,
        cancel: Option<rt::GreqCancelFn>,
        extra: *mut c_void,
        request: *mut c_void,
    ) -> c_int;
}

fortran_bindings! {
    mpi_init_ / pmpi_init_ (ierror: *mut c_int) {
        set_ierror(ierror, MPI_Init(std::ptr::null_mut(), std::ptr::null_mut()));
    }

    mpi_init_thread_ / pmpi_init_thread_ (required: *const c_int, provided: *mut c_void, ierror: *mut c_int) {
        set_ierror(ierror, MPI_Init_thread(std::ptr::null_mut(), std::ptr::null_mut(), *required, provided));
    }

    mpi_pcontrol_ / pmpi_pcontrol_ (_level: *const c_int, ierror: *mut c_int) {
        set_ierror(ierror, MPI_SUCCESS);
    }

    mpi_buffer_detach_ / pmpi_buffer_detach_ (_buffer_addr: *mut c_void, size: *mut c_void, ierror: *mut c_int) {
        // C writes the buffer's address; Fortran has no use for it (and
        // the argument is the buffer itself, not room for a pointer).
        let mut addr: *mut c_void = std::ptr::null_mut();
        set_ierror(ierror, MPI_Buffer_detach((&raw mut addr).cast(), size));
    }

    mpi_grequest_start_ / pmpi_grequest_start_ (query: *mut c_void, free: *mut c_void, cancel: *mut c_void,
                                                extra_state: *const isize, request: *mut c_void, ierror: *mut c_int) {
        // The C request calls trampolines, which call the Fortran procedures
        // with their arguments by reference; their state is freed by the
        // free trampoline, which MPI calls exactly once. The callbacks get
        // the program's EXTRA_STATE variable itself, as with MPICH and Open
        // MPI (programs count on updates made by the callbacks, MPICH's
        // greqf among them), so it must outlive the request there too.
        let state = Box::into_raw(Box::new(FortranGreq { query, free, cancel, extra: extra_state }));
        let rc = MPI_Grequest_start(
            Some(greq_query_trampoline),
            Some(greq_free_trampoline),
            Some(greq_cancel_trampoline),
            state.cast(),
            request,
        );
        if rc != MPI_SUCCESS {
            drop(Box::from_raw(state));
        }
        set_ierror(ierror, rc);
    }

    mpi_info_get_string_ / pmpi_info_get_string_ (info: *const c_int, key: *const c_char, buflen: *mut c_int,
                                                  value: *mut c_char, flag: *mut c_int, ierror: *mut c_int,
                                                  key_len: usize, value_len: usize) {
        // Fortran's BUFLEN counts characters, no NUL: in, how many to
        // store (0: none, VALUE untouched); out, the value's length.
        let key_c = trim_both(key, key_len);
        let want = (*buflen).max(0) as usize;
        let mut value_c = out_string_buffer(want);
        let mut c_len: c_int = if want == 0 { 0 } else { want as c_int + 1 };
        let rc = MPI_Info_get_string(*info, key_c.as_ptr(), &mut c_len, value_c.as_mut_ptr().cast(), flag);
        if rc == MPI_SUCCESS && *flag != 0 {
            *buflen = c_len - 1;
            if want > 0 {
                blank_pad(&value_c, value, value_len);
            }
        }
        set_ierror(ierror, rc);
    }

    mpi_info_create_env_ / pmpi_info_create_env_ (info: *mut c_void, ierror: *mut c_int) {
        set_ierror(ierror, MPI_Info_create_env(0, std::ptr::null_mut(), info));
    }

    mpi_win_create_keyval_ / pmpi_win_create_keyval_ (copy: *mut c_void, delete: *mut c_void, keyval: *mut c_void,
                                                      extra_state: *const isize, ierror: *mut c_int) {
        let (c, d, e) = keyval_callbacks(copy, delete, *extra_state, true);
        set_ierror(ierror, MPI_Win_create_keyval(c, d, keyval, e));
    }

    mpi_win_set_attr_ / pmpi_win_set_attr_ (win: *const c_int, keyval: *const c_int, value: *const isize,
                                            ierror: *mut c_int) {
        set_ierror(ierror, MPI_Win_set_attr(*win, *keyval, *value as *mut c_void));
    }

    mpi_win_get_attr_ / pmpi_win_get_attr_ (win: *const c_int, keyval: *const c_int, value: *mut isize,
                                            flag: *mut c_int, ierror: *mut c_int) {
        let mut p: *mut c_void = std::ptr::null_mut();
        let rc = MPI_Win_get_attr(*win, *keyval, (&raw mut p).cast(), flag.cast());
        if rc == MPI_SUCCESS && *flag != 0 {
            // C gives the predefined attributes by pointer (MPI_WIN_BASE is
            // the base itself), Fortran by value.
            *value = match *keyval {
                WIN_SIZE => *(p as *const isize),
                WIN_DISP_UNIT | WIN_CREATE_FLAVOR | WIN_MODEL => *(p as *const c_int) as isize,
                _ => p as isize,
            };
        }
        set_ierror(ierror, rc);
    }

    mpi_comm_create_keyval_ / pmpi_comm_create_keyval_ (copy: *mut c_void, delete: *mut c_void, keyval: *mut c_void,
                                                        extra_state: *const isize, ierror: *mut c_int) {
        let (c, d, e) = keyval_callbacks(copy, delete, *extra_state, true);
        set_ierror(ierror, MPI_Comm_create_keyval(c, d, keyval, e));
    }

    mpi_type_create_keyval_ / pmpi_type_create_keyval_ (copy: *mut c_void, delete: *mut c_void, keyval: *mut c_void,
                                                        extra_state: *const isize, ierror: *mut c_int) {
        let (c, d, e) = keyval_callbacks(copy, delete, *extra_state, true);
        set_ierror(ierror, MPI_Type_create_keyval(c, d, keyval, e));
    }

    mpi_keyval_create_ / pmpi_keyval_create_ (copy: *mut c_void, delete: *mut c_void, keyval: *mut c_void,
                                              extra_state: *const c_int, ierror: *mut c_int) {
        let (c, d, e) = keyval_callbacks(copy, delete, *extra_state as isize, false);
        set_ierror(ierror, MPI_Comm_create_keyval(c, d, keyval, e));
    }

    mpi_comm_set_attr_ / pmpi_comm_set_attr_ (comm: *const c_int, keyval: *const c_int, value: *const isize,
                                              ierror: *mut c_int) {
        set_ierror(ierror, MPI_Comm_set_attr(*comm, *keyval, *value as *mut c_void));
    }

    mpi_attr_put_ / pmpi_attr_put_ (comm: *const c_int, keyval: *const c_int, value: *const c_int,
                                    ierror: *mut c_int) {
        set_ierror(ierror, MPI_Comm_set_attr(*comm, *keyval, *value as isize as *mut c_void));
    }

    mpi_type_set_attr_ / pmpi_type_set_attr_ (dt: *const c_int, keyval: *const c_int, value: *const isize,
                                              ierror: *mut c_int) {
        set_ierror(ierror, MPI_Type_set_attr(*dt, *keyval, *value as *mut c_void));
    }

    mpi_comm_get_attr_ / pmpi_comm_get_attr_ (comm: *const c_int, keyval: *const c_int, value: *mut isize,
                                              flag: *mut c_int, ierror: *mut c_int) {
        let (rc, v) = comm_attr(*comm, *keyval, flag);
        if let Some(v) = v {
            *value = v;
        }
        set_ierror(ierror, rc);
    }

    mpi_attr_get_ / pmpi_attr_get_ (comm: *const c_int, keyval: *const c_int, value: *mut c_int,
                                    flag: *mut c_int, ierror: *mut c_int) {
        let (rc, v) = comm_attr(*comm, *keyval, flag);
        if let Some(v) = v {
            // MPI-1's INTEGER attribute: the value the program stored.
            *value = v as c_int;
        }
        set_ierror(ierror, rc);
    }

    mpi_type_get_attr_ / pmpi_type_get_attr_ (dt: *const c_int, keyval: *const c_int, value: *mut isize,
                                              flag: *mut c_int, ierror: *mut c_int) {
        let mut p: *mut c_void = std::ptr::null_mut();
        let rc = MPI_Type_get_attr(*dt, *keyval, (&raw mut p).cast(), flag.cast());
        if rc == MPI_SUCCESS && *flag != 0 {
            *value = p as isize;
        }
        set_ierror(ierror, rc);
    }

    // Predefined attribute callbacks, callable from Fortran (MPI-1 forms
    // with INTEGER values, then the MPI-2 forms with address-sized ones).
    mpi_null_copy_fn_ / pmpi_null_copy_fn_ (_old: *const c_int, _keyval: *const c_int, _extra: *const c_int,
                                            _vin: *const c_int, _vout: *mut c_int, flag: *mut c_int,
                                            ierror: *mut c_int) {
        *flag = 0;
        set_ierror(ierror, MPI_SUCCESS);
    }

    mpi_dup_fn_ / pmpi_dup_fn_ (_old: *const c_int, _keyval: *const c_int, _extra: *const c_int, vin: *const c_int,
                                vout: *mut c_int, flag: *mut c_int, ierror: *mut c_int) {
        *vout = *vin;
        *flag = 1;
        set_ierror(ierror, MPI_SUCCESS);
    }

    mpi_null_delete_fn_ / pmpi_null_delete_fn_ (_comm: *const c_int, _keyval: *const c_int, _value: *const c_int,
                                                _extra: *const c_int, ierror: *mut c_int) {
        set_ierror(ierror, MPI_SUCCESS);
    }

    mpi_comm_null_copy_fn_ / pmpi_comm_null_copy_fn_ (_old: *const c_int, _keyval: *const c_int,
                                                      _extra: *const isize, _vin: *const isize, _vout: *mut isize,
                                                      flag: *mut c_int, ierror: *mut c_int) {
        *flag = 0;
        set_ierror(ierror, MPI_SUCCESS);
    }

    mpi_comm_dup_fn_ / pmpi_comm_dup_fn_ (_old: *const c_int, _keyval: *const c_int, _extra: *const isize,
                                          vin: *const isize, vout: *mut isize, flag: *mut c_int,
                                          ierror: *mut c_int) {
        *vout = *vin;
        *flag = 1;
        set_ierror(ierror, MPI_SUCCESS);
    }

    mpi_comm_null_delete_fn_ / pmpi_comm_null_delete_fn_ (_comm: *const c_int, _keyval: *const c_int,
                                                          _value: *const isize, _extra: *const isize,
                                                          ierror: *mut c_int) {
        set_ierror(ierror, MPI_SUCCESS);
    }

    mpi_type_null_copy_fn_ / pmpi_type_null_copy_fn_ (_old: *const c_int, _keyval: *const c_int,
                                                      _extra: *const isize, _vin: *const isize, _vout: *mut isize,
                                                      flag: *mut c_int, ierror: *mut c_int) {
        *flag = 0;
        set_ierror(ierror, MPI_SUCCESS);
    }

    mpi_type_dup_fn_ / pmpi_type_dup_fn_ (_old: *const c_int, _keyval: *const c_int, _extra: *const isize,
                                          vin: *const isize, vout: *mut isize, flag: *mut c_int,
                                          ierror: *mut c_int) {
        *vout = *vin;
        *flag = 1;
        set_ierror(ierror, MPI_SUCCESS);
    }

    mpi_win_null_copy_fn_ / pmpi_win_null_copy_fn_ (_old: *const c_int, _keyval: *const c_int,
                                                    _extra: *const isize, _vin: *const isize, _vout: *mut isize,
                                                    flag: *mut c_int, ierror: *mut c_int) {
        *flag = 0;
        set_ierror(ierror, MPI_SUCCESS);
    }

    mpi_win_dup_fn_ / pmpi_win_dup_fn_ (_old: *const c_int, _keyval: *const c_int, _extra: *const isize,
                                        vin: *const isize, vout: *mut isize, flag: *mut c_int,
                                        ierror: *mut c_int) {
        *vout = *vin;
        *flag = 1;
        set_ierror(ierror, MPI_SUCCESS);
    }

    mpi_win_null_delete_fn_ / pmpi_win_null_delete_fn_ (_win: *const c_int, _keyval: *const c_int,
                                                        _value: *const isize, _extra: *const isize,
                                                        ierror: *mut c_int) {
        set_ierror(ierror, MPI_SUCCESS);
    }

    mpi_type_null_delete_fn_ / pmpi_type_null_delete_fn_ (_dt: *const c_int, _keyval: *const c_int,
                                                          _value: *const isize, _extra: *const isize,
                                                          ierror: *mut c_int) {
        set_ierror(ierror, MPI_SUCCESS);
    }
}

/// `MPI_AINT_ADD` and `MPI_AINT_DIFF`: functions of kind MPI_ADDRESS_KIND
/// (declared in mpif.h), with C's wrap-around arithmetic.
#[no_mangle]
pub(super) unsafe extern "C" fn mpi_aint_add_(base: *const isize, disp: *const isize) -> isize {
    // Safety: the program passes two INTEGER(KIND=MPI_ADDRESS_KIND)s.
    unsafe { (*base).wrapping_add(*disp) }
}

#[no_mangle]
pub(super) unsafe extern "C" fn pmpi_aint_add_(base: *const isize, disp: *const isize) -> isize {
    // Safety: as for mpi_aint_add_.
    unsafe { mpi_aint_add_(base, disp) }
}

#[no_mangle]
pub(super) unsafe extern "C" fn mpi_aint_diff_(a: *const isize, b: *const isize) -> isize {
    // Safety: the program passes two INTEGER(KIND=MPI_ADDRESS_KIND)s.
    unsafe { (*a).wrapping_sub(*b) }
}

#[no_mangle]
pub(super) unsafe extern "C" fn pmpi_aint_diff_(a: *const isize, b: *const isize) -> isize {
    // Safety: as for mpi_aint_diff_.
    unsafe { mpi_aint_diff_(a, b) }
}

#[no_mangle]
pub(super) extern "C" fn mpi_wtime_() -> f64 {
    // Safety: no arguments.
    unsafe { MPI_Wtime() }
}

#[no_mangle]
pub(super) extern "C" fn pmpi_wtime_() -> f64 {
    mpi_wtime_()
}

#[no_mangle]
pub(super) extern "C" fn mpi_wtick_() -> f64 {
    // Safety: no arguments.
    unsafe { MPI_Wtick() }
}

#[no_mangle]
pub(super) extern "C" fn pmpi_wtick_() -> f64 {
    mpi_wtick_()
}

/// A communicator attribute as Fortran sees it: the value the program
/// stored, or the predefined attribute's integer value (C gives a pointer to
/// it). `None` when absent or on error.
unsafe fn comm_attr(comm: c_int, keyval: c_int, flag: *mut c_int) -> (c_int, Option<isize>) {
    let mut p: *mut c_void = std::ptr::null_mut();
    // Safety: `flag` is the program's LOGICAL; `p` receives a pointer.
    unsafe {
        let rc = MPI_Comm_get_attr(comm, keyval, (&raw mut p).cast(), flag.cast());
        if rc != MPI_SUCCESS || *flag == 0 {
            return (rc, None);
        }
        // Keyvals 1..=7 are the predefined ones (MPI_TAG_UB ... MPI_LASTUSEDCODE).
        if (1..=7).contains(&keyval) {
            (rc, Some(*(p as *const c_int) as isize))
        } else {
            (rc, Some(p as isize))
        }
    }
}

/// The Fortran procedures and extra state of a keyval created from Fortran:
/// the C extra state of the keyval points at it (leaked: keyvals live until
/// their attributes are gone, which this module cannot see).
struct FortranKeyval {
    copy: *mut c_void,
    delete: *mut c_void,
    extra: isize,
    /// MPI-2 forms (address-sized values) or MPI-1 `MPI_KEYVAL_CREATE` (INTEGER).
    wide: bool,
}

type WideCopyFn = unsafe extern "C" fn(
    *const c_int,
    *const c_int,
    *const isize,
    *const isize,
    *mut isize,
    *mut c_int,
    *mut c_int,
);
type NarrowCopyFn = unsafe extern "C" fn(
    *const c_int,
    *const c_int,
    *const c_int,
    *const c_int,
    *mut c_int,
    *mut c_int,
    *mut c_int,
);
type WideDeleteFn = unsafe extern "C" fn(*const c_int, *const c_int, *const isize, *const isize, *mut c_int);
type NarrowDeleteFn =
    unsafe extern "C" fn(*const c_int, *const c_int, *const c_int, *const c_int, *mut c_int);

/// The C callbacks and extra state for Fortran's `copy` and `delete`: the
/// predefined null functions become C's null callbacks, anything else a
/// trampoline.
unsafe fn keyval_callbacks(
    copy: *mut c_void,
    delete: *mut c_void,
    extra: isize,
    wide: bool,
) -> (*mut c_void, *mut c_void, *mut c_void) {
    let null_copy = [
        mpi_null_copy_fn_ as *const () as usize,
        mpi_comm_null_copy_fn_ as *const () as usize,
        mpi_type_null_copy_fn_ as *const () as usize,
        mpi_win_null_copy_fn_ as *const () as usize,
    ];
    let null_delete = [
        mpi_null_delete_fn_ as *const () as usize,
        mpi_comm_null_delete_fn_ as *const () as usize,
        mpi_type_null_delete_fn_ as *const () as usize,
        mpi_win_null_delete_fn_ as *const () as usize,
    ];
    let c = if copy.is_null() || null_copy.contains(&(copy as usize)) {
        std::ptr::null_mut()
    } else {
        copy_trampoline as *mut c_void
    };
    let d = if delete.is_null() || null_delete.contains(&(delete as usize)) {
        std::ptr::null_mut()
    } else {
        delete_trampoline as *mut c_void
    };
    let state = Box::new(FortranKeyval {
        copy,
        delete,
        extra,
        wide,
    });
    (c, d, Box::into_raw(state).cast())
}

/// The C copy callback of a Fortran keyval: calls the Fortran procedure with
/// its arguments by reference and stores the value it copies.
unsafe extern "C" fn copy_trampoline(
    old: c_int,
    keyval: c_int,
    extra: *mut c_void,
    value_in: *mut c_void,
    value_out: *mut c_void,
    flag: *mut c_int,
) -> c_int {
    // Safety: `extra` is the FortranKeyval of this keyval (keyval_callbacks);
    // `value_out` is where C wants the new attribute value (a `void **`).
    unsafe {
        let k = &*(extra as *const FortranKeyval);
        let mut ierr: c_int = MPI_SUCCESS;
        let mut f_flag: c_int = 0;
        let out: isize = if k.wide {
            let f: WideCopyFn = std::mem::transmute::<*mut c_void, WideCopyFn>(k.copy);
            let vin = value_in as isize;
            let mut vout: isize = 0;
            f(&old, &keyval, &k.extra, &vin, &mut vout, &mut f_flag, &mut ierr);
            vout
        } else {
            let f: NarrowCopyFn = std::mem::transmute::<*mut c_void, NarrowCopyFn>(k.copy);
            let (extra, vin) = (k.extra as c_int, value_in as isize as c_int);
            let mut vout: c_int = 0;
            f(&old, &keyval, &extra, &vin, &mut vout, &mut f_flag, &mut ierr);
            vout as isize
        };
        *flag = (f_flag != 0) as c_int;
        if f_flag != 0 {
            *(value_out as *mut *mut c_void) = out as *mut c_void;
        }
        ierr
    }
}

/// The C delete callback of a Fortran keyval.
unsafe extern "C" fn delete_trampoline(
    obj: c_int,
    keyval: c_int,
    value: *mut c_void,
    extra: *mut c_void,
) -> c_int {
    // Safety: as in copy_trampoline.
    unsafe {
        let k = &*(extra as *const FortranKeyval);
        let mut ierr: c_int = MPI_SUCCESS;
        if k.wide {
            let f: WideDeleteFn = std::mem::transmute::<*mut c_void, WideDeleteFn>(k.delete);
            f(&obj, &keyval, &(value as isize), &k.extra, &mut ierr);
        } else {
            let f: NarrowDeleteFn = std::mem::transmute::<*mut c_void, NarrowDeleteFn>(k.delete);
            f(
                &obj,
                &keyval,
                &(value as isize as c_int),
                &(k.extra as c_int),
                &mut ierr,
            );
        }
        ierr
    }
}

// ------------------------------------------------------------------ C <-> Fortran handles

/// `MPI_Comm_c2f`, `MPI_Comm_f2c`, ... for C code called from Fortran (or
/// the reverse): our handles are the same ints in both languages.
macro_rules! identity_conversions {
    ($($name:ident),* $(,)?) => {$(
        #[no_mangle]
        pub(super) extern "C" fn $name(h: c_int) -> c_int {
            h
        }
    )*};
}

identity_conversions! {
    MPI_Comm_c2f, MPI_Comm_f2c, PMPI_Comm_c2f, PMPI_Comm_f2c,
    MPI_Type_c2f, MPI_Type_f2c, PMPI_Type_c2f, PMPI_Type_f2c,
    MPI_Group_c2f, MPI_Group_f2c, PMPI_Group_c2f, PMPI_Group_f2c,
    MPI_Request_c2f, MPI_Request_f2c, PMPI_Request_c2f, PMPI_Request_f2c,
    MPI_Op_c2f, MPI_Op_f2c, PMPI_Op_c2f, PMPI_Op_f2c,
    MPI_Info_c2f, MPI_Info_f2c, PMPI_Info_c2f, PMPI_Info_f2c,
    MPI_Errhandler_c2f, MPI_Errhandler_f2c, PMPI_Errhandler_c2f, PMPI_Errhandler_f2c,
}

/// `MPI_Status_c2f` and `MPI_Status_f2c`: the layouts are the same
/// (`MPI_STATUS_SIZE` INTEGERs), so a copy.
#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Status_c2f(c: *const CStatus, f: *mut c_int) -> c_int {
    if c.is_null() || f.is_null() {
        return rt::MPI_ERR_ARG;
    }
    // Safety: `c` is a status, `f` an INTEGER(MPI_STATUS_SIZE) array.
    unsafe { std::ptr::write_unaligned(f.cast::<CStatus>(), *c) };
    MPI_SUCCESS
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Status_f2c(f: *const c_int, c: *mut CStatus) -> c_int {
    if c.is_null() || f.is_null() {
        return rt::MPI_ERR_ARG;
    }
    // Safety: as in MPI_Status_c2f.
    unsafe { *c = std::ptr::read_unaligned(f.cast::<CStatus>()) };
    MPI_SUCCESS
}

// ------------------------------------------------------------------ generalized requests

/// The Fortran procedures and extra state of a generalized request started
/// from Fortran (the C extra state points at it).
struct FortranGreq {
    query: *mut c_void,
    free: *mut c_void,
    cancel: *mut c_void,
    /// The program's EXTRA_STATE variable.
    extra: *const isize,
}

type GreqQueryF = unsafe extern "C" fn(*const isize, *mut c_int, *mut c_int);
type GreqFreeF = unsafe extern "C" fn(*const isize, *mut c_int);
type GreqCancelF = unsafe extern "C" fn(*const isize, *const c_int, *mut c_int);

unsafe extern "C" fn greq_query_trampoline(state: *mut c_void, status: *mut CStatus) -> c_int {
    // Safety: `state` is the FortranGreq of this request (mpi_grequest_start_);
    // `status` is a C status, laid out as INTEGER(MPI_STATUS_SIZE).
    unsafe {
        let g = &*(state as *const FortranGreq);
        let f = std::mem::transmute::<*mut c_void, GreqQueryF>(g.query);
        let mut ierr = MPI_SUCCESS;
        f(g.extra, status.cast(), &mut ierr);
        ierr
    }
}

unsafe extern "C" fn greq_free_trampoline(state: *mut c_void) -> c_int {
    // Safety: as in greq_query_trampoline; MPI calls free once, last.
    unsafe {
        let g = Box::from_raw(state as *mut FortranGreq);
        let f = std::mem::transmute::<*mut c_void, GreqFreeF>(g.free);
        let mut ierr = MPI_SUCCESS;
        f(g.extra, &mut ierr);
        ierr
    }
}

unsafe extern "C" fn greq_cancel_trampoline(state: *mut c_void, complete: c_int) -> c_int {
    // Safety: as in greq_query_trampoline.
    unsafe {
        let g = &*(state as *const FortranGreq);
        let f = std::mem::transmute::<*mut c_void, GreqCancelF>(g.cancel);
        let mut ierr = MPI_SUCCESS;
        let complete = (complete != 0) as c_int;
        f(g.extra, &complete, &mut ierr);
        ierr
    }
}

// ------------------------------------------------------------------ MPI_SIZEOF

/// The specific procedures of the `mpi` module's generic `MPI_SIZEOF`
/// (include/mpi.f90): the module picks one by the argument's type and kind;
/// each only stores that size (the argument itself is not read).
macro_rules! sizeof_specifics {
    ($($name:ident = $size:expr),* $(,)?) => {$(
        #[no_mangle]
        pub(super) unsafe extern "C" fn $name(_x: *const c_void, size: *mut c_int, ierror: *mut c_int) {
            // Safety: SIZE and IERROR are the program's INTEGERs.
            unsafe {
                *size = $size;
                set_ierror(ierror, MPI_SUCCESS);
            }
        }
    )*};
}

sizeof_specifics! {
    smpi_sizeof_int1_ = 1, smpi_sizeof_int2_ = 2, smpi_sizeof_int4_ = 4, smpi_sizeof_int8_ = 8,
    smpi_sizeof_real4_ = 4, smpi_sizeof_real8_ = 8, smpi_sizeof_real10_ = 16, smpi_sizeof_real16_ = 16,
    smpi_sizeof_complex4_ = 8, smpi_sizeof_complex8_ = 16, smpi_sizeof_complex10_ = 32, smpi_sizeof_complex16_ = 32,
    smpi_sizeof_logical1_ = 1, smpi_sizeof_logical2_ = 2, smpi_sizeof_logical4_ = 4, smpi_sizeof_logical8_ = 8,
    smpi_sizeof_character_ = 1,
}

/// `MPI_SIZEOF` called without the `mpi` module (from `mpif.h`): the type of
/// the argument is unknown, so this is an error rather than a guess.
#[no_mangle]
pub(super) unsafe extern "C" fn mpi_sizeof_(_x: *const c_void, _size: *mut c_int, ierror: *mut c_int) {
    let rc = entry::handle_error(
        rt::current_rank(),
        1,
        "MPI_SIZEOF",
        mpi_err(
            rt::MPI_ERR_OTHER,
            "MPI_SIZEOF needs the argument's type: call it from a unit that has `use mpi` (not `include 'mpif.h'`)",
        ),
    );
    // Safety: IERROR is the program's INTEGER.
    unsafe { set_ierror(ierror, rc) };
}

// ------------------------------------------------------------------ STOP

/// Ends the rank for a Fortran `STOP` / `ERROR STOP`: prints what gfortran
/// prints, flushes C's streams, then ends like C's `exit(code)` does.
unsafe fn stop(code: c_int, message: Option<String>, error: bool) -> ! {
    if let Some(m) = message {
        eprintln!("{}{m}", if error { "ERROR STOP " } else { "STOP " });
    } else if error {
        eprintln!("ERROR STOP");
    }
    // Safety: smpi_exit ends the calling rank (or the run for a non-zero code).
    unsafe { super::smpi::smpi_exit(code) }
}

unsafe fn stop_text(s: *const c_char, len: usize) -> Option<String> {
    if s.is_null() {
        return None;
    }
    // Safety: gfortran passes the STOP string and its length.
    let b = unsafe { std::slice::from_raw_parts(s.cast::<u8>(), len) };
    Some(String::from_utf8_lossy(b).into_owned())
}

/// `STOP <number>` (gfortran ≥ 8: `quiet` is `STOP ..., QUIET=.true.`).
#[no_mangle]
pub(super) unsafe extern "C" fn _gfortran_stop_numeric(code: c_int, quiet: bool) -> ! {
    // Safety: see stop.
    unsafe { stop(code, (!quiet).then(|| code.to_string()), false) }
}

/// `STOP` and `STOP '<text>'`.
#[no_mangle]
pub(super) unsafe extern "C" fn _gfortran_stop_string(s: *const c_char, len: usize, quiet: bool) -> ! {
    // Safety: see stop_text.
    unsafe {
        let text = if quiet { None } else { stop_text(s, len) };
        stop(0, text, false)
    }
}

/// `ERROR STOP <number>`: ends the run with that code.
#[no_mangle]
pub(super) unsafe extern "C" fn _gfortran_error_stop_numeric(code: c_int, quiet: bool) -> ! {
    // Safety: see stop.
    unsafe { stop(code, (!quiet).then(|| code.to_string()), true) }
}

/// `ERROR STOP` and `ERROR STOP '<text>'`: ends the run with code 1.
#[no_mangle]
pub(super) unsafe extern "C" fn _gfortran_error_stop_string(s: *const c_char, len: usize, quiet: bool) -> ! {
    // Safety: see stop_text.
    unsafe {
        let text = if quiet { None } else { stop_text(s, len) };
        stop(1, text, true)
    }
}
