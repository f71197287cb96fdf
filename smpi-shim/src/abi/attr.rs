//! Attributes and keyvals on communicators and datatypes (MPI chapter 7.7), and the
//! predefined attributes of `MPI_COMM_WORLD`.
#![allow(non_snake_case, clippy::missing_safety_doc, clippy::too_many_arguments)]

use super::args::*;
use crate::abi::errhandler::LAST_USED_CODE;
use crate::mpi as rt;
use crate::mpi::entry;
use crate::mpi::entry::result;
use crate::mpi::mpi_err;
use crate::mpi::with_world;
use crate::mpi::MpiResult;
use crate::mpi::MPI_SUCCESS;
use std::ffi::c_int;
use std::ffi::c_void;

pub(super) static mut TAG_UB_VALUE: c_int = rt::TAG_UB;
pub(super) static mut WTIME_IS_GLOBAL: c_int = 1;
/// MPI_HOST: no process is the host.
pub(super) static mut HOST_RANK: c_int = rt::MPI_PROC_NULL;
/// MPI_IO: every process can do I/O (MPI_ANY_SOURCE).
pub(super) static mut IO_RANK: c_int = -1;
pub(super) static mut APPNUM: c_int = 0;
pub(super) static UNIVERSE_SIZE: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);

#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_get_attr(
    comm: c_int,
    key: c_int,
    val: *mut c_void,
    flag: *mut c_int,
) -> c_int {
    let me = rt::current_rank();
    let p: Option<*mut c_int> = match key {
        1 => Some(&raw mut TAG_UB_VALUE),
        2 => Some(&raw mut HOST_RANK),
        3 => Some(&raw mut IO_RANK),
        4 => Some(&raw mut WTIME_IS_GLOBAL),
        5 => {
            let n = with_world(|w| w.ranks.len()) as c_int;
            UNIVERSE_SIZE.store(n, std::sync::atomic::Ordering::Relaxed);
            Some(UNIVERSE_SIZE.as_ptr())
        }
        6 => Some(&raw mut APPNUM),
        7 => Some(LAST_USED_CODE.as_ptr()),
        _ => None,
    };
    if let Some(p) = p {
        *(val as *mut *mut c_int) = p;
        set(flag, 1);
        return MPI_SUCCESS;
    }
    match with_world(|w| {
        w.ranks[me as usize]
            .comm(comm)
            .map(|c| c.attrs.get(&key).copied())
    }) {
        Ok(Some(v)) => {
            *(val as *mut usize) = v;
            set(flag, 1);
            MPI_SUCCESS
        }
        Ok(None) => {
            set(flag, 0);
            MPI_SUCCESS
        }
        Err(e) => entry::handle_error(me, comm, "MPI_Comm_get_attr", e),
    }
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Attr_get(comm: c_int, key: c_int, val: *mut c_void, flag: *mut c_int) -> c_int {
    MPI_Comm_get_attr(comm, key, val, flag)
}

#[no_mangle]
pub unsafe extern "C" fn MPI_COMM_DUP_FN(
    _comm: c_int,
    _key: c_int,
    _extra: *mut c_void,
    inval: *mut c_void,
    outval: *mut c_void,
    flag: *mut c_int,
) -> c_int {
    *(outval as *mut *mut c_void) = inval;
    set(flag, 1);
    MPI_SUCCESS
}

// ------------------------------------------------------------------ attributes

pub(super) fn keyval_new(copy: usize, delete: usize, extra: usize) -> c_int {
    with_world(|w| {
        w.keyvals.push(Some((copy, delete, extra)));
        (w.keyvals.len() - 1 + 16) as c_int
    })
}

pub(super) fn keyval(k: c_int) -> MpiResult<(usize, usize, usize)> {
    with_world(|w| {
        (k >= 16)
            .then(|| w.keyvals.get((k - 16) as usize).copied().flatten())
            .flatten()
            .ok_or_else(|| mpi_err(rt::MPI_ERR_KEYVAL, format!("invalid keyval {k}")))
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_create_keyval(
    copy: usize,
    delete: usize,
    key: *mut c_int,
    extra: *mut c_void,
) -> c_int {
    set(key, keyval_new(copy, delete, extra as usize));
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Keyval_create(
    copy: usize,
    delete: usize,
    key: *mut c_int,
    extra: *mut c_void,
) -> c_int {
    MPI_Comm_create_keyval(copy, delete, key, extra)
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_free_keyval(key: *mut c_int) -> c_int {
    if keyval(*key).is_err() {
        return rt::MPI_ERR_KEYVAL;
    }
    // Attributes already attached keep their callbacks; the keyval id is not reused.
    *key = -1;
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Keyval_free(key: *mut c_int) -> c_int {
    MPI_Comm_free_keyval(key)
}

pub(super) type DeleteFn = unsafe extern "C" fn(c_int, c_int, *mut c_void, *mut c_void) -> c_int;
pub(super) type CopyFn =
    unsafe extern "C" fn(c_int, c_int, *mut c_void, *mut c_void, *mut c_void, *mut c_int) -> c_int;

pub(super) unsafe fn delete_attr(me: u32, comm: c_int, key: c_int) -> MpiResult<()> {
    let old = with_world(|w| w.ranks[me as usize].comm_mut(comm).map(|c| c.attrs.remove(&key)))?;
    if let Some(v) = old {
        let (_, del, extra) = keyval(key)?;
        if del != 0 {
            let f: DeleteFn = std::mem::transmute(del);
            let rc = f(comm, key, v as *mut c_void, extra as *mut c_void);
            if rc != MPI_SUCCESS {
                // Put it back: a failing delete callback keeps the attribute.
                with_world(|w| {
                    w.ranks[me as usize]
                        .comm_mut(comm)
                        .map(|c| c.attrs.insert(key, v))
                })?;
                return Err(mpi_err(rc, "attribute delete callback failed"));
            }
        }
    }
    Ok(())
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_set_attr(comm: c_int, key: c_int, val: *mut c_void) -> c_int {
    let me = rt::current_rank();
    let r = keyval(key).and_then(|_| {
        delete_attr(me, comm, key)?;
        with_world(|w| {
            w.ranks[me as usize]
                .comm_mut(comm)
                .map(|c| c.attrs.insert(key, val as usize))
        })?;
        ATTR_SET_ORDER.with(|o| {
            let mut o = o.borrow_mut();
            o.1 += 1;
            let seq = o.1;
            o.0.insert((me, comm, key), seq);
        });
        Ok(())
    });
    result(me, comm, "MPI_Comm_set_attr", r)
}

thread_local! {
    /// When each communicator attribute was last set, for the LIFO deletion
    /// MPI_Finalize does on MPI_COMM_SELF: ((rank, comm, keyval) -> sequence, next sequence).
    #[allow(clippy::type_complexity)]
    static ATTR_SET_ORDER: std::cell::RefCell<(std::collections::HashMap<(u32, i32, i32), u64>, u64)> =
        Default::default();
}

/// Runs the delete callbacks of all of `comm`'s attributes, the most recently
/// set first (what MPI_Finalize does to MPI_COMM_SELF before anything else).
pub unsafe fn delete_attrs_lifo(me: u32, comm: c_int) -> MpiResult<()> {
    let mut keys: Vec<(u64, i32)> = with_world(|w| {
        w.ranks[me as usize]
            .comm(comm)
            .map(|c| c.attrs.keys().copied().collect::<Vec<i32>>())
    })?
    .into_iter()
    .map(|k| {
        let seq = ATTR_SET_ORDER.with(|o| o.borrow().0.get(&(me, comm, k)).copied().unwrap_or(0));
        (seq, k)
    })
    .collect();
    keys.sort_unstable_by(|a, b| b.cmp(a));
    for (_, k) in keys {
        delete_attr(me, comm, k)?;
    }
    Ok(())
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Attr_put(comm: c_int, key: c_int, val: *mut c_void) -> c_int {
    MPI_Comm_set_attr(comm, key, val)
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_delete_attr(comm: c_int, key: c_int) -> c_int {
    let me = rt::current_rank();
    let r = keyval(key).and_then(|_| delete_attr(me, comm, key));
    result(me, comm, "MPI_Comm_delete_attr", r)
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Attr_delete(comm: c_int, key: c_int) -> c_int {
    MPI_Comm_delete_attr(comm, key)
}

/// Copies attributes from `old` to `new` through their copy callbacks (Comm_dup).
pub unsafe fn copy_attrs(me: u32, old: c_int, new: c_int) -> MpiResult<()> {
    let attrs: Vec<(i32, usize)> = with_world(|w| {
        w.ranks[me as usize]
            .comm(old)
            .map(|c| c.attrs.iter().map(|(k, v)| (*k, *v)).collect())
    })?;
    for (k, v) in attrs {
        let Ok((copy, _, extra)) = keyval(k) else { continue };
        if copy == 0 {
            continue;
        }
        let f: CopyFn = std::mem::transmute(copy);
        let mut out: *mut c_void = std::ptr::null_mut();
        let mut flag: c_int = 0;
        let rc = f(
            old,
            k,
            extra as *mut c_void,
            v as *mut c_void,
            (&mut out as *mut *mut c_void).cast(),
            &mut flag,
        );
        if rc != MPI_SUCCESS {
            return Err(mpi_err(rc, "attribute copy callback failed"));
        }
        if flag != 0 {
            with_world(|w| {
                w.ranks[me as usize]
                    .comm_mut(new)
                    .map(|c| c.attrs.insert(k, out as usize))
            })?;
        }
    }
    Ok(())
}

/// Runs the delete callbacks of every attribute of `comm` (Comm_free).
pub unsafe fn delete_all_attrs(me: u32, comm: c_int) -> MpiResult<()> {
    let keys: Vec<i32> = with_world(|w| {
        w.ranks[me as usize]
            .comm(comm)
            .map(|c| c.attrs.keys().copied().collect())
    })?;
    for k in keys {
        delete_attr(me, comm, k)?;
    }
    Ok(())
}

// ------------------------------------------------------------------ datatype attributes

thread_local! {
    static TYPE_ATTRS: std::cell::RefCell<std::collections::HashMap<(u32, i32, i32), usize>> =
        std::cell::RefCell::new(std::collections::HashMap::new());
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_create_keyval(
    copy: usize,
    delete: usize,
    key: *mut c_int,
    extra: *mut c_void,
) -> c_int {
    set(key, keyval_new(copy, delete, extra as usize));
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_free_keyval(key: *mut c_int) -> c_int {
    MPI_Comm_free_keyval(key)
}

pub(super) type TypeDeleteFn = unsafe extern "C" fn(c_int, c_int, *mut c_void, *mut c_void) -> c_int;

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_delete_attr(dt: c_int, key: c_int) -> c_int {
    let me = rt::current_rank();
    let Ok((_, del, extra)) = keyval(key) else {
        return rt::MPI_ERR_KEYVAL;
    };
    let old = TYPE_ATTRS.with(|m| m.borrow_mut().remove(&(me, dt, key)));
    if let (Some(v), true) = (old, del != 0) {
        let f: TypeDeleteFn = std::mem::transmute(del);
        let rc = f(dt, key, v as *mut c_void, extra as *mut c_void);
        if rc != MPI_SUCCESS {
            // A failing delete callback keeps the attribute.
            TYPE_ATTRS.with(|m| m.borrow_mut().insert((me, dt, key), v));
        }
        return rc;
    }
    MPI_SUCCESS
}

/// Copies the attributes of type `old` to its duplicate `new` through their
/// copy callbacks (MPI_Type_dup); returns the first failing callback's code.
pub unsafe fn copy_type_attrs(me: u32, old: c_int, new: c_int) -> c_int {
    let mut attrs: Vec<(i32, usize)> = TYPE_ATTRS.with(|m| {
        m.borrow()
            .iter()
            .filter(|((r, t, _), _)| *r == me && *t == old)
            .map(|((_, _, k), v)| (*k, *v))
            .collect()
    });
    attrs.sort_unstable();
    for (k, v) in attrs {
        let Ok((copy, _, extra)) = keyval(k) else { continue };
        if copy == 0 {
            continue;
        }
        let f: CopyFn = std::mem::transmute(copy);
        let mut out: *mut c_void = std::ptr::null_mut();
        let mut flag: c_int = 0;
        let rc = f(
            old,
            k,
            extra as *mut c_void,
            v as *mut c_void,
            (&mut out as *mut *mut c_void).cast(),
            &mut flag,
        );
        if rc != MPI_SUCCESS {
            return rc;
        }
        if flag != 0 {
            TYPE_ATTRS.with(|m| m.borrow_mut().insert((me, new, k), out as usize));
        }
    }
    MPI_SUCCESS
}

/// Deletes every attribute of type `dt` through its delete callback (MPI_Type_free).
pub unsafe fn delete_type_attrs(me: u32, dt: c_int) -> c_int {
    let mut keys: Vec<i32> = TYPE_ATTRS.with(|m| {
        m.borrow()
            .keys()
            .filter(|(r, t, _)| *r == me && *t == dt)
            .map(|(_, _, k)| *k)
            .collect()
    });
    keys.sort_unstable();
    for k in keys {
        let rc = MPI_Type_delete_attr(dt, k);
        if rc != MPI_SUCCESS {
            return rc;
        }
    }
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_set_attr(dt: c_int, key: c_int, val: *mut c_void) -> c_int {
    let me = rt::current_rank();
    if keyval(key).is_err() {
        return rt::MPI_ERR_KEYVAL;
    }
    let rc = MPI_Type_delete_attr(dt, key);
    if rc != MPI_SUCCESS {
        return rc;
    }
    TYPE_ATTRS.with(|m| m.borrow_mut().insert((me, dt, key), val as usize));
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_get_attr(
    dt: c_int,
    key: c_int,
    val: *mut c_void,
    flag: *mut c_int,
) -> c_int {
    let me = rt::current_rank();
    if keyval(key).is_err() {
        return rt::MPI_ERR_KEYVAL;
    }
    match TYPE_ATTRS.with(|m| m.borrow().get(&(me, dt, key)).copied()) {
        Some(v) => {
            *(val as *mut usize) = v;
            set(flag, 1);
        }
        None => set(flag, 0),
    }
    MPI_SUCCESS
}
