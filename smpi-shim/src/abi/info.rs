//! `MPI_Info_*`: the C side of `crate::mpi::info`. Errors go to the handler of
//! `MPI_COMM_SELF`, as MPI 4 says for calls without a communicator; these
//! calls are also valid before `MPI_Init` and after `MPI_Finalize`.
#![allow(non_snake_case, clippy::missing_safety_doc)]

use std::ffi::{c_char, c_int, CStr};

use crate::mpi::entry::{enter_call, result};
use crate::mpi::{info, mpi_err, with_world, MpiResult, MPI_COMM_SELF, MPI_ERR_ARG, MPI_SUCCESS};

use super::args::*;

pub(super) unsafe fn text(p: *const c_char, what: &str) -> MpiResult<String> {
    // Safety: the caller upholds this function's contract (see its `# Safety`).
    unsafe {
        if p.is_null() {
            return Err(mpi_err(MPI_ERR_ARG, format!("null {what}")));
        }
        Ok(CStr::from_ptr(p).to_string_lossy().into_owned())
    }
}

/// Copies at most `room` characters of `s` and a NUL into `dst`.
pub(super) unsafe fn copy_out(dst: *mut c_char, s: &str, room: usize) {
    // Safety: the caller upholds this function's contract (see its `# Safety`).
    unsafe {
        if dst.is_null() {
            return;
        }
        let n = s.len().min(room);
        std::ptr::copy_nonoverlapping(s.as_ptr(), dst as *mut u8, n);
        *dst.add(n) = 0;
    }
}

pub(super) fn report<T>(call: &'static str, r: MpiResult<T>) -> c_int {
    // The info functions may also be called before MPI_Init and after
    // MPI_Finalize (MPI 4.0 §11.2.1); then they are not MPI calls the
    // simulation times (the entry would count the time since the start as
    // computation).
    let me = crate::mpi::current_rank();
    if with_world(|w| w.ranks[me as usize].initialized && !w.ranks[me as usize].finalized) {
        let g = enter_call(call);
        result(g.me, MPI_COMM_SELF, call, r)
    } else {
        result(me, MPI_COMM_SELF, call, r)
    }
}

/// [`report`] of a call whose answer is one value, written to `out` (when not
/// NULL).
unsafe fn report_into<T: Copy>(call: &'static str, out: *mut T, r: MpiResult<T>) -> c_int {
    if let Ok(v) = r {
        // Safety: `out` is null or valid for a write (the caller's contract).
        unsafe { set(out, v) };
    }
    report(call, r)
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Info_create(h: *mut c_int) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        set(h, with_world(|w| w.infos.create()));
        MPI_SUCCESS
    }
}

/// MPI 4: an info object with what `MPI_INFO_ENV` holds for this program.
#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Info_create_env(
    _argc: c_int,
    _argv: *mut *mut c_char,
    h: *mut c_int,
) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        report_into(
            "MPI_Info_create_env",
            h,
            with_world(|w| w.infos.dup(info::INFO_ENV)),
        )
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Info_free(h: *mut c_int) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        if h.is_null() {
            return report(
                "MPI_Info_free",
                Err::<(), _>(mpi_err(MPI_ERR_ARG, "null info pointer")),
            );
        }
        let r = with_world(|w| w.infos.free(*h));
        if r.is_ok() {
            *h = 0;
        }
        report("MPI_Info_free", r)
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Info_dup(h: c_int, new: *mut c_int) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe { report_into("MPI_Info_dup", new, with_world(|w| w.infos.dup(h))) }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Info_set(h: c_int, key: *const c_char, value: *const c_char) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        let r = (|| {
            let (key, value) = (text(key, "key")?, text(value, "value")?);
            with_world(|w| w.infos.set(h, &key, &value))
        })();
        report("MPI_Info_set", r)
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Info_delete(h: c_int, key: *const c_char) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        let r = (|| {
            let key = text(key, "key")?;
            with_world(|w| w.infos.delete(h, &key))
        })();
        report("MPI_Info_delete", r)
    }
}

/// `valuelen`: room for that many characters plus the NUL; longer values are
/// truncated.
#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Info_get(
    h: c_int,
    key: *const c_char,
    valuelen: c_int,
    value: *mut c_char,
    flag: *mut c_int,
) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        let r = (|| {
            if valuelen < 0 {
                return Err(mpi_err(MPI_ERR_ARG, format!("negative valuelen {valuelen}")));
            }
            lookup(h, key, flag)
        })();
        with_value("MPI_Info_get", r, |v| copy_out(value, v, valuelen as usize))
    }
}

/// The end of the calls that read a key's value ([`lookup`]): `use_value`
/// gets the value when the key is set; an error is reported.
fn with_value(call: &'static str, r: MpiResult<Option<String>>, use_value: impl FnOnce(&str)) -> c_int {
    if let Ok(Some(v)) = &r {
        use_value(v);
    }
    report(call, r)
}

/// The value of `key` in info `h`, if set; `flag` says whether it is.
pub(super) unsafe fn lookup(h: c_int, key: *const c_char, flag: *mut c_int) -> MpiResult<Option<String>> {
    // Safety: the caller upholds this function's contract (see its `# Safety`).
    unsafe {
        let key = text(key, "key")?;
        let v = with_world(|w| w.infos.get(h, &key))?;
        set(flag, v.is_some() as c_int);
        Ok(v)
    }
}

/// MPI 4: `buflen` in: room including the NUL; out: the value's length + 1.
#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Info_get_string(
    h: c_int,
    key: *const c_char,
    buflen: *mut c_int,
    value: *mut c_char,
    flag: *mut c_int,
) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        with_value("MPI_Info_get_string", lookup(h, key, flag), |v| {
            let room = if buflen.is_null() { 0 } else { *buflen };
            if room > 0 {
                copy_out(value, v, room as usize - 1);
            }
            set(buflen, v.len() as c_int + 1);
        })
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Info_get_valuelen(
    h: c_int,
    key: *const c_char,
    valuelen: *mut c_int,
    flag: *mut c_int,
) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        with_value("MPI_Info_get_valuelen", lookup(h, key, flag), |v| {
            set(valuelen, v.len() as c_int)
        })
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Info_get_nkeys(h: c_int, n: *mut c_int) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        report_into(
            "MPI_Info_get_nkeys",
            n,
            with_world(|w| w.infos.nkeys(h)).map(|k| k as c_int),
        )
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Info_get_nthkey(h: c_int, n: c_int, key: *mut c_char) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        let r = with_world(|w| w.infos.nth_key(h, n));
        if let Ok(k) = &r {
            copy_out(key, k, info::MAX_KEY);
        }
        report("MPI_Info_get_nthkey", r)
    }
}
