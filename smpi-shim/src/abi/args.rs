//! Argument checks and C ↔ Rust conversions shared by the MPI functions.
#![allow(non_snake_case, clippy::missing_safety_doc, clippy::too_many_arguments)]

use std::ffi::{c_char, c_int};

use crate::mpi::{
    self as rt, entry, mpi_err, with_world, CStatus, MpiError, MpiResult, StatusInfo, MPI_ERR_COUNT,
    MPI_SUCCESS,
};

pub(super) type Aint = isize;

/// A count (`int` or `MPI_Count`) as `usize`; a negative one goes through the
/// communicator's error handler as `MPI_ERR_COUNT`.
pub(super) fn count_ok(me: u32, comm: i32, call: &str, count: impl Into<i64>) -> Result<usize, c_int> {
    let count: i64 = count.into();
    usize::try_from(count).map_err(|_| {
        entry::handle_error(
            me,
            comm,
            call,
            mpi_err(MPI_ERR_COUNT, format!("negative count {count}")),
        )
    })
}

pub(super) unsafe fn set<T>(p: *mut T, v: T) {
    // Safety: the caller upholds this function's contract (see its `# Safety`).
    unsafe {
        if !p.is_null() {
            *p = v;
        }
    }
}

pub(super) unsafe fn write_cstr(dst: *mut c_char, s: &str, len: *mut c_int, max: usize) {
    // Safety: the caller upholds this function's contract (see its `# Safety`).
    unsafe {
        let n = s.len().min(max - 1);
        if !dst.is_null() {
            std::ptr::copy_nonoverlapping(s.as_ptr(), dst as *mut u8, n);
            *dst.add(n) = 0;
        }
        set(len, n as c_int);
    }
}

pub(crate) fn status_result(me: u32, comm: i32, call: &str, s: &StatusInfo, count: usize) -> c_int {
    if s.error == rt::MPI_ERR_TRUNCATE {
        return entry::handle_error(
            me,
            comm,
            call,
            mpi_err(
                rt::MPI_ERR_TRUNCATE,
                format!("message truncated (receive count {count} too small)"),
            ),
        );
    }
    MPI_SUCCESS
}

/// Request handle → internal id (`None` for MPI_REQUEST_NULL or inactive persistent).
pub(super) fn req_id(h: c_int) -> Result<Option<u32>, MpiError> {
    if h == 0 {
        return Ok(None);
    }
    let id = (h - 1) as u32;
    with_world(|w| match w.reqs.get(id as usize).and_then(|r| r.as_ref()) {
        Some(r) if r.persistent && !r.active => Ok(None),
        Some(_) => Ok(Some(id)),
        None => Err(mpi_err(
            rt::MPI_ERR_REQUEST,
            format!("invalid request handle {h}"),
        )),
    })
}

/// Writes the status of a single-request completion (MPI_Wait, MPI_Test,
/// MPI_Mrecv): MPI leaves the `MPI_ERROR` field alone there, only the
/// multiple-completion calls set it.
pub(crate) unsafe fn write_single_status(st: *mut CStatus, s: &StatusInfo) {
    // Safety: the caller upholds this function's contract (see its `# Safety`).
    unsafe {
        if !st.is_null() {
            let error = (*st).error;
            write_status(st, s);
            (*st).error = error;
        }
    }
}

/// A count as `usize`, or `MPI_ERR_COUNT` when negative (`int` or `MPI_Count`).
pub(super) fn nonneg(v: impl Into<i64>) -> MpiResult<usize> {
    let v: i64 = v.into();
    usize::try_from(v).map_err(|_| mpi_err(MPI_ERR_COUNT, format!("negative count {v}")))
}
pub(super) type Count = i64;

pub(super) fn extent(dt: i32) -> MpiResult<isize> {
    with_world(|w| w.dtype(dt).map(|d| d.extent))
}

/// Writes a status unless the pointer is `MPI_STATUS_IGNORE`.
///
/// # Safety
/// `st` is null or points to an `MPI_Status`.
pub(super) unsafe fn write_status(st: *mut CStatus, s: &StatusInfo) {
    // Safety: the caller upholds this function's contract (see its `# Safety`).
    unsafe {
        if !st.is_null() {
            *st = CStatus {
                source: s.source,
                tag: s.tag,
                error: s.error,
                cancelled: s.cancelled as i32,
                count: s.bytes as i64,
            };
        }
    }
}
