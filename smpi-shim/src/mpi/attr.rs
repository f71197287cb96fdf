//! Attributes (MPI chapter 7.7): keyvals with their copy and delete callbacks,
//! and the attributes attached to communicators and datatypes (and the
//! deletion of windows' attributes, kept by their windows).
//!
//! Keyvals are numbered from 16 (lower numbers are the predefined attributes
//! of `MPI_COMM_WORLD`, which the C interface answers itself). A
//! communicator's attributes live in its [`CommEntry`](super::CommEntry); a
//! datatype's in [`World::type_attrs`](super::World::type_attrs). Callbacks
//! are the program's C functions: they may call MPI, so none runs while the
//! world is borrowed.

use std::ffi::{c_int, c_void};

use super::{mpi_err, with_world, MpiResult, MPI_ERR_KEYVAL, MPI_SUCCESS};

/// First keyval number handed out (below are the predefined attributes).
const FIRST_KEYVAL: c_int = 16;

/// `MPI_Comm_delete_attr_function` / `MPI_Type_delete_attr_function`.
type DeleteFn = unsafe extern "C" fn(c_int, c_int, *mut c_void, *mut c_void) -> c_int;
/// `MPI_Comm_copy_attr_function` / `MPI_Type_copy_attr_function`.
type CopyFn = unsafe extern "C" fn(c_int, c_int, *mut c_void, *mut c_void, *mut c_void, *mut c_int) -> c_int;

/// A keyval's callbacks (0 = none) and extra state, as the program gave them.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Keyval {
    copy: usize,
    delete: usize,
    extra: usize,
}

/// Creates a keyval (`MPI_Comm_create_keyval`, `MPI_Type_create_keyval`).
pub(crate) fn create_keyval(copy: usize, delete: usize, extra: usize) -> c_int {
    with_world(|w| {
        w.keyvals.push(Some(Keyval { copy, delete, extra }));
        w.keyvals.len() as c_int - 1 + FIRST_KEYVAL
    })
}

/// The keyval `k`, or `MPI_ERR_KEYVAL`.
pub(crate) fn keyval(k: c_int) -> MpiResult<Keyval> {
    with_world(|w| {
        k.checked_sub(FIRST_KEYVAL)
            .and_then(|i| usize::try_from(i).ok())
            .and_then(|i| w.keyvals.get(i).copied().flatten())
            .ok_or_else(|| mpi_err(MPI_ERR_KEYVAL, format!("invalid keyval {k}")))
    })
}

/// Checks `k` and frees it: attributes already attached keep their
/// callbacks, and the number is not reused.
pub(crate) fn free_keyval(k: c_int) -> MpiResult<()> {
    keyval(k).map(|_| ())
}

/// Runs keyval `kv`'s copy callback on `value` (of object `object`, under
/// keyval number `k`): the value for the copy, if the callback wants one.
///
/// # Safety
/// The keyval's copy callback must be a C function of the MPI signature.
pub(crate) unsafe fn copy_value(
    kv: Keyval,
    object: c_int,
    k: c_int,
    value: usize,
) -> MpiResult<Option<usize>> {
    if kv.copy == 0 {
        return Ok(None);
    }
    // Safety: a non-null copy callback the program registered with this signature.
    let f: CopyFn = unsafe { std::mem::transmute(kv.copy) };
    let mut out: *mut c_void = std::ptr::null_mut();
    let mut flag: c_int = 0;
    // Safety: the callback gets the arguments MPI specifies; `out` and `flag` are ours.
    let rc = unsafe {
        f(
            object,
            k,
            kv.extra as *mut c_void,
            value as *mut c_void,
            (&mut out as *mut *mut c_void).cast(),
            &mut flag,
        )
    };
    if rc != MPI_SUCCESS {
        return Err(mpi_err(rc, "attribute copy callback failed"));
    }
    Ok((flag != 0).then_some(out as usize))
}

/// Runs keyval `kv`'s delete callback on `value`; its error code if it fails.
///
/// # Safety
/// The keyval's delete callback must be a C function of the MPI signature.
pub(crate) unsafe fn delete_value(kv: Keyval, object: c_int, k: c_int, value: usize) -> c_int {
    if kv.delete == 0 {
        return MPI_SUCCESS;
    }
    // Safety: a non-null delete callback the program registered with this signature.
    let f: DeleteFn = unsafe { std::mem::transmute(kv.delete) };
    // Safety: the callback gets the arguments MPI specifies.
    unsafe { f(object, k, value as *mut c_void, kv.extra as *mut c_void) }
}

// ------------------------------------------------------------------ communicators

/// The value of attribute `k` of communicator `comm` of rank `me`, if set.
pub(crate) fn comm_attr(me: u32, comm: c_int, k: c_int) -> MpiResult<Option<usize>> {
    with_world(|w| w.ranks[me as usize].comm(comm).map(|c| c.attrs.get(&k).copied()))
}

/// Deletes attribute `k` of `comm` through its delete callback; a failing
/// callback keeps the attribute.
///
/// # Safety
/// Runs the program's delete callback.
pub(crate) unsafe fn delete_comm_attr(me: u32, comm: c_int, k: c_int) -> MpiResult<()> {
    let take = || with_world(|w| w.ranks[me as usize].comm_mut(comm).map(|c| c.attrs.remove(&k)));
    let put_back = |v| with_world(|w| w.ranks[me as usize].comm_mut(comm).map(|c| c.attrs.insert(k, v)));
    // Safety: as the caller allows.
    unsafe { delete_attr(comm, k, take, put_back) }
}

/// Deletes attribute `k` of `object` (a communicator, a window): `take`
/// removes its value, which goes to the keyval's delete callback; a failing
/// callback keeps the attribute (`put_back` puts it back).
///
/// # Safety
/// Runs the program's delete callback.
pub(crate) unsafe fn delete_attr(
    object: c_int,
    k: c_int,
    take: impl FnOnce() -> MpiResult<Option<usize>>,
    put_back: impl FnOnce(usize) -> MpiResult<Option<usize>>,
) -> MpiResult<()> {
    let Some(value) = take()? else { return Ok(()) };
    // Safety: the caller allows running the program's callback.
    let rc = unsafe { delete_value(keyval(k)?, object, k, value) };
    if rc != MPI_SUCCESS {
        put_back(value)?;
        return Err(mpi_err(rc, "attribute delete callback failed"));
    }
    Ok(())
}

/// Sets attribute `k` of `comm` (deleting the previous value first).
///
/// # Safety
/// Runs the program's delete callback of the previous value.
pub(crate) unsafe fn set_comm_attr(me: u32, comm: c_int, k: c_int, value: usize) -> MpiResult<()> {
    keyval(k)?;
    // Safety: as the caller allows.
    unsafe { delete_comm_attr(me, comm, k)? };
    with_world(|w| {
        w.ranks[me as usize].comm_mut(comm)?.attrs.insert(k, value);
        w.attr_sets += 1;
        let seq = w.attr_sets;
        w.attr_set_order.insert((me, comm, k), seq);
        Ok(())
    })
}

/// Runs the delete callbacks of all of `comm`'s attributes, the most recently
/// set first (what MPI_Finalize does to MPI_COMM_SELF before anything else).
///
/// # Safety
/// Runs the program's delete callbacks.
pub(crate) unsafe fn delete_comm_attrs_lifo(me: u32, comm: c_int) -> MpiResult<()> {
    let mut keys: Vec<(u64, i32)> = with_world(|w| {
        let c = w.ranks[me as usize].comm(comm)?;
        Ok::<_, super::MpiError>(
            c.attrs
                .keys()
                .map(|&k| (w.attr_set_order.get(&(me, comm, k)).copied().unwrap_or(0), k))
                .collect(),
        )
    })?;
    keys.sort_unstable_by(|a, b| b.cmp(a));
    for (_, k) in keys {
        // Safety: as the caller allows.
        unsafe { delete_comm_attr(me, comm, k)? };
    }
    Ok(())
}

/// Copies the attributes of `old` to `new` through their copy callbacks (MPI_Comm_dup).
///
/// # Safety
/// Runs the program's copy callbacks.
pub(crate) unsafe fn copy_comm_attrs(me: u32, old: c_int, new: c_int) -> MpiResult<()> {
    let attrs: Vec<(i32, usize)> = with_world(|w| {
        w.ranks[me as usize]
            .comm(old)
            .map(|c| c.attrs.iter().map(|(k, v)| (*k, *v)).collect())
    })?;
    for (k, v) in attrs {
        let Ok(kv) = keyval(k) else { continue };
        // Safety: as the caller allows.
        if let Some(copy) = unsafe { copy_value(kv, old, k, v)? } {
            with_world(|w| {
                w.ranks[me as usize]
                    .comm_mut(new)
                    .map(|c| c.attrs.insert(k, copy))
            })?;
        }
    }
    Ok(())
}

/// Runs the delete callbacks of every attribute of `comm` (MPI_Comm_free).
///
/// # Safety
/// Runs the program's delete callbacks.
pub(crate) unsafe fn delete_all_comm_attrs(me: u32, comm: c_int) -> MpiResult<()> {
    let keys: Vec<i32> = with_world(|w| {
        w.ranks[me as usize]
            .comm(comm)
            .map(|c| c.attrs.keys().copied().collect())
    })?;
    for k in keys {
        // Safety: as the caller allows.
        unsafe { delete_comm_attr(me, comm, k)? };
    }
    Ok(())
}

// ------------------------------------------------------------------ datatypes

/// The value of attribute `k` of datatype `dt` of rank `me`, if set.
pub(crate) fn type_attr(me: u32, dt: c_int, k: c_int) -> MpiResult<Option<usize>> {
    keyval(k)?;
    Ok(with_world(|w| w.type_attrs.get(&(me, dt, k)).copied()))
}

/// Deletes attribute `k` of `dt` through its delete callback; returns the
/// callback's code (a failing callback keeps the attribute).
///
/// # Safety
/// Runs the program's delete callback.
pub(crate) unsafe fn delete_type_attr(me: u32, dt: c_int, k: c_int) -> c_int {
    let Ok(kv) = keyval(k) else { return MPI_ERR_KEYVAL };
    let Some(value) = with_world(|w| w.type_attrs.remove(&(me, dt, k))) else {
        return MPI_SUCCESS;
    };
    // Safety: as the caller allows.
    let rc = unsafe { delete_value(kv, dt, k, value) };
    if rc != MPI_SUCCESS {
        with_world(|w| w.type_attrs.insert((me, dt, k), value));
    }
    rc
}

/// Sets attribute `k` of `dt` (deleting the previous value first).
///
/// # Safety
/// Runs the program's delete callback of the previous value.
pub(crate) unsafe fn set_type_attr(me: u32, dt: c_int, k: c_int, value: usize) -> c_int {
    if keyval(k).is_err() {
        return MPI_ERR_KEYVAL;
    }
    // Safety: as the caller allows.
    let rc = unsafe { delete_type_attr(me, dt, k) };
    if rc == MPI_SUCCESS {
        with_world(|w| w.type_attrs.insert((me, dt, k), value));
    }
    rc
}

/// The attributes of datatype `dt` of rank `me`, by keyval.
fn type_attrs_of(me: u32, dt: c_int) -> Vec<(i32, usize)> {
    with_world(|w| {
        w.type_attrs
            .range((me, dt, c_int::MIN)..=(me, dt, c_int::MAX))
            .map(|(&(_, _, k), &v)| (k, v))
            .collect()
    })
}

/// Copies the attributes of type `old` to its duplicate `new` through their
/// copy callbacks (MPI_Type_dup); returns the first failing callback's code.
///
/// # Safety
/// Runs the program's copy callbacks.
pub(crate) unsafe fn copy_type_attrs(me: u32, old: c_int, new: c_int) -> c_int {
    for (k, v) in type_attrs_of(me, old) {
        let Ok(kv) = keyval(k) else { continue };
        // Safety: as the caller allows.
        match unsafe { copy_value(kv, old, k, v) } {
            Ok(Some(copy)) => {
                with_world(|w| w.type_attrs.insert((me, new, k), copy));
            }
            Ok(None) => {}
            Err(e) => return e.code,
        }
    }
    MPI_SUCCESS
}

/// Deletes every attribute of type `dt` through its delete callback (MPI_Type_free).
///
/// # Safety
/// Runs the program's delete callbacks.
pub(crate) unsafe fn delete_type_attrs(me: u32, dt: c_int) -> c_int {
    for (k, _) in type_attrs_of(me, dt) {
        // Safety: as the caller allows.
        let rc = unsafe { delete_type_attr(me, dt, k) };
        if rc != MPI_SUCCESS {
            return rc;
        }
    }
    MPI_SUCCESS
}
