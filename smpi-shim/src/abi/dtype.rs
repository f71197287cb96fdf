//! The datatype part of the MPI C ABI that goes beyond building type maps:
//! introspection (envelope, contents, names, MPI_Type_match_size),
//! distributed arrays, external32 packing and the MPI-4 large-count (`_c`)
//! constructors and queries.
#![allow(non_snake_case, clippy::missing_safety_doc, clippy::too_many_arguments)]

use std::ffi::{c_char, c_int, c_void, CStr};
use std::rc::Rc;

use crate::mpi::datatype::ext::{self as ext, DarrayDim};
use crate::mpi::datatype::{Contents, Datatype};
use crate::mpi::{self as rt, mpi_err, with_world, MpiResult, MPI_SUCCESS};

type Aint = isize;
type Count = i64;

pub const COMBINER_DARRAY: i32 = 12;
const TYPECLASS_REAL: c_int = 1;
const TYPECLASS_INTEGER: c_int = 2;
const TYPECLASS_COMPLEX: c_int = 3;

unsafe fn set<T>(p: *mut T, v: T) {
    if !p.is_null() {
        *p = v;
    }
}

unsafe fn slice<'a, T>(p: *const T, n: usize) -> &'a [T] {
    if p.is_null() || n == 0 {
        &[]
    } else {
        std::slice::from_raw_parts(p, n)
    }
}

/// Remembers how derived type `h` was built, for MPI_Type_get_contents and
/// MPI_Type_get_envelope. `types` are the old types' handles.
pub fn record(h: c_int, ints: Vec<i64>, aints: Vec<isize>, types: &[c_int]) {
    with_world(|w| {
        let types = types
            .iter()
            .filter_map(|&t| w.dtype(t).ok().map(|rc| (t, rc)))
            .collect();
        if let Some(Some(t)) = w.types.get_mut(h.max(0) as usize) {
            // A new type's only reference is the table's: no copy of its type map.
            Rc::make_mut(t).contents = Some(Rc::new(Contents { ints, aints, types }));
        }
    });
}

/// Builds a type from `(byte displacement, old type, repetitions)` pieces,
/// records its contents and stores its handle in `out`.
fn build(
    pieces: &[(isize, c_int, usize)],
    combiner: i32,
    ints: Vec<i64>,
    aints: Vec<isize>,
    types: &[c_int],
    out: *mut c_int,
) -> c_int {
    let r = with_world(|w| -> MpiResult<c_int> {
        let children: Vec<Rc<Datatype>> = pieces.iter().map(|p| w.dtype(p.1)).collect::<MpiResult<_>>()?;
        let refs: Vec<(isize, &Datatype, usize)> = pieces
            .iter()
            .zip(&children)
            .map(|(p, c)| (p.0, c.as_ref(), p.2))
            .collect();
        Ok(w.add_type(Datatype::from_pieces("derived", &refs, combiner)))
    });
    match r {
        Ok(h) => {
            record(h, ints, aints, types);
            // Safety: out is the application's MPI_Datatype pointer.
            unsafe { set(out, h) };
            MPI_SUCCESS
        }
        Err(e) => e.code,
    }
}

fn type_of(dt: c_int) -> Result<Rc<Datatype>, c_int> {
    with_world(|w| w.dtype(dt)).map_err(|e| e.code)
}

// ------------------------------------------------------------------ introspection

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_get_envelope(
    dt: c_int,
    ni: *mut c_int,
    na: *mut c_int,
    nd: *mut c_int,
    combiner: *mut c_int,
) -> c_int {
    match type_of(dt) {
        Ok(d) => {
            let c = d.contents.as_deref();
            set(ni, c.map_or(0, |c| c.ints.len()) as c_int);
            set(na, c.map_or(0, |c| c.aints.len()) as c_int);
            set(nd, c.map_or(0, |c| c.types.len()) as c_int);
            set(combiner, if d.predefined { 0 } else { d.combiner });
            MPI_SUCCESS
        }
        Err(code) => code,
    }
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_get_contents(
    dt: c_int,
    max_ints: c_int,
    max_aints: c_int,
    max_types: c_int,
    ints: *mut c_int,
    aints: *mut Aint,
    types: *mut c_int,
) -> c_int {
    let d = match type_of(dt) {
        Ok(d) => d,
        Err(code) => return code,
    };
    let Some(c) = d.contents.as_deref().filter(|_| !d.predefined) else {
        // Not allowed on named types (MPI_COMBINER_NAMED).
        return rt::MPI_ERR_TYPE;
    };
    if (max_ints as usize) < c.ints.len()
        || (max_aints as usize) < c.aints.len()
        || (max_types as usize) < c.types.len()
    {
        return rt::MPI_ERR_ARG;
    }
    for (i, &v) in c.ints.iter().enumerate() {
        *ints.add(i) = v as c_int;
    }
    for (i, &v) in c.aints.iter().enumerate() {
        *aints.add(i) = v;
    }
    for (i, (h, t)) in c.types.iter().enumerate() {
        // Named types come back as themselves; derived ones as new handles
        // that the caller frees.
        *types.add(i) = if t.predefined {
            *h
        } else {
            with_world(|w| w.add_type((**t).clone()))
        };
    }
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_set_name(dt: c_int, name: *const c_char) -> c_int {
    if name.is_null() {
        return rt::MPI_ERR_ARG;
    }
    let s = CStr::from_ptr(name).to_string_lossy().into_owned();
    with_world(|w| match w.dtype(dt) {
        Ok(d) => {
            let mut t = (*d).clone();
            t.name = s;
            w.types[dt as usize] = Some(Rc::new(t));
            MPI_SUCCESS
        }
        Err(e) => e.code,
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_get_name(dt: c_int, name: *mut c_char, len: *mut c_int) -> c_int {
    match type_of(dt) {
        Ok(d) => {
            // Derived types have no name until MPI_Type_set_name gives one.
            let s = if d.predefined || d.name != "derived" {
                d.name.as_str()
            } else {
                ""
            };
            let n = s.len().min(127);
            if !name.is_null() {
                std::ptr::copy_nonoverlapping(s.as_ptr(), name as *mut u8, n);
                *name.add(n) = 0;
            }
            set(len, n as c_int);
            MPI_SUCCESS
        }
        Err(code) => code,
    }
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_match_size(typeclass: c_int, size: c_int, dt: *mut c_int) -> c_int {
    // The Fortran-sized types of mpi.h (MPI_REAL4, MPI_INTEGER8, MPI_COMPLEX16, ...).
    let h = match (typeclass, size) {
        (TYPECLASS_REAL, 4) => 48,
        (TYPECLASS_REAL, 8) => 49,
        (TYPECLASS_REAL, 16) => 50,
        (TYPECLASS_COMPLEX, 8) => 51,
        (TYPECLASS_COMPLEX, 16) => 52,
        (TYPECLASS_COMPLEX, 32) => 53,
        (TYPECLASS_INTEGER, 1) => 54,
        (TYPECLASS_INTEGER, 2) => 55,
        (TYPECLASS_INTEGER, 4) => 56,
        (TYPECLASS_INTEGER, 8) => 57,
        _ => return rt::MPI_ERR_ARG,
    };
    set(dt, h);
    MPI_SUCCESS
}

// ------------------------------------------------------------------ distributed arrays

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_create_darray(
    size: c_int,
    rank: c_int,
    ndims: c_int,
    gsizes: *const c_int,
    distribs: *const c_int,
    dargs: *const c_int,
    psizes: *const c_int,
    order: c_int,
    old: c_int,
    new: *mut c_int,
) -> c_int {
    let nd = ndims.max(0) as usize;
    let (g, di, da, ps) = (
        slice(gsizes, nd),
        slice(distribs, nd),
        slice(dargs, nd),
        slice(psizes, nd),
    );
    let r = (|| -> MpiResult<c_int> {
        if size <= 0 || rank < 0 || rank >= size || ndims < 0 {
            return Err(mpi_err(rt::MPI_ERR_ARG, "invalid darray size, rank or ndims"));
        }
        if g.iter().chain(ps).any(|&x| x <= 0) {
            return Err(mpi_err(rt::MPI_ERR_ARG, "darray sizes must be positive"));
        }
        if ps.iter().map(|&p| p as i64).product::<i64>() != size as i64 {
            return Err(mpi_err(rt::MPI_ERR_ARG, "process grid does not match size"));
        }
        let dims: Vec<DarrayDim> = (0..nd)
            .map(|i| DarrayDim {
                gsize: g[i] as usize,
                distrib: di[i],
                darg: da[i],
                psize: ps[i] as usize,
            })
            .collect();
        let runs = ext::darray_runs(rank as usize, &dims, order).map_err(|m| mpi_err(rt::MPI_ERR_ARG, m))?;
        with_world(|w| {
            let child = w.dtype(old)?;
            let ext = child.extent;
            let pieces: Vec<(isize, &Datatype, usize)> = runs
                .iter()
                .map(|&(first, n)| (first as isize * ext, child.as_ref(), n))
                .collect();
            let mut t = Datatype::from_pieces("derived", &pieces, COMBINER_DARRAY);
            // Like a subarray, a darray spans the whole global array.
            let total: isize = g.iter().map(|&x| x as isize).product();
            t.lb = 0;
            t.extent = total * ext;
            Ok(w.add_type(t))
        })
    })();
    match r {
        Ok(h) => {
            let mut ints = vec![size as i64, rank as i64, ndims as i64];
            for part in [g, di, da, ps] {
                ints.extend(part.iter().map(|&x| x as i64));
            }
            ints.push(order as i64);
            record(h, ints, vec![], &[old]);
            set(new, h);
            MPI_SUCCESS
        }
        Err(e) => e.code,
    }
}

// ------------------------------------------------------------------ external32

fn check_datarep(datarep: *const c_char) -> Result<(), c_int> {
    // Safety: datarep is the application's NUL-terminated string.
    let ok = !datarep.is_null() && unsafe { CStr::from_ptr(datarep) }.to_bytes() == b"external32";
    if ok {
        Ok(())
    } else {
        Err(rt::MPI_ERR_ARG)
    }
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Pack_external_size(
    datarep: *const c_char,
    count: c_int,
    dt: c_int,
    size: *mut Aint,
) -> c_int {
    if let Err(code) = check_datarep(datarep) {
        return code;
    }
    match type_of(dt) {
        Ok(d) => {
            set(size, ext::external32_size(&d, count.max(0) as usize) as Aint);
            MPI_SUCCESS
        }
        Err(code) => code,
    }
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Pack_external(
    datarep: *const c_char,
    inbuf: *const c_void,
    count: c_int,
    dt: c_int,
    out: *mut c_void,
    outsize: Aint,
    pos: *mut Aint,
) -> c_int {
    if let Err(code) = check_datarep(datarep) {
        return code;
    }
    if count < 0 {
        return rt::MPI_ERR_COUNT;
    }
    let d = match type_of(dt) {
        Ok(d) => d,
        Err(code) => return code,
    };
    let mut v = Vec::new();
    ext::pack_external32(&d, inbuf as *const u8, count as usize, &mut v);
    if *pos < 0 || *pos as usize + v.len() > outsize.max(0) as usize {
        return rt::MPI_ERR_TRUNCATE;
    }
    std::ptr::copy_nonoverlapping(v.as_ptr(), (out as *mut u8).add(*pos as usize), v.len());
    *pos += v.len() as Aint;
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Unpack_external(
    datarep: *const c_char,
    inbuf: *const c_void,
    insize: Aint,
    pos: *mut Aint,
    out: *mut c_void,
    count: c_int,
    dt: c_int,
) -> c_int {
    if let Err(code) = check_datarep(datarep) {
        return code;
    }
    if count < 0 {
        return rt::MPI_ERR_COUNT;
    }
    let d = match type_of(dt) {
        Ok(d) => d,
        Err(code) => return code,
    };
    if *pos < 0 || *pos > insize {
        return rt::MPI_ERR_TRUNCATE;
    }
    let data = slice((inbuf as *const u8).add(*pos as usize), (insize - *pos) as usize);
    match ext::unpack_external32(&d, data, out as *mut u8, count as usize) {
        Some(used) => {
            *pos += used as Aint;
            MPI_SUCCESS
        }
        None => rt::MPI_ERR_TRUNCATE,
    }
}

// ------------------------------------------------------------------ large counts (MPI-4 `_c`)

fn count_ok(c: Count) -> Result<usize, c_int> {
    usize::try_from(c).map_err(|_| rt::MPI_ERR_COUNT)
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_contiguous_c(count: Count, old: c_int, new: *mut c_int) -> c_int {
    match count_ok(count) {
        Ok(n) => build(&[(0, old, n)], 2, vec![count], vec![], &[old], new),
        Err(code) => code,
    }
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_create_hindexed_c(
    count: Count,
    blens: *const Count,
    displs: *const Count,
    old: c_int,
    new: *mut c_int,
) -> c_int {
    let Ok(n) = count_ok(count) else {
        return rt::MPI_ERR_COUNT;
    };
    let (b, d) = (slice(blens, n), slice(displs, n));
    let mut pieces = Vec::with_capacity(n);
    for i in 0..n {
        match count_ok(b[i]) {
            Ok(len) => pieces.push((d[i] as isize, old, len)),
            Err(code) => return code,
        }
    }
    let mut ints = vec![count];
    ints.extend_from_slice(b);
    build(
        &pieces,
        6,
        ints,
        d.iter().map(|&x| x as isize).collect(),
        &[old],
        new,
    )
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_create_indexed_block_c(
    count: Count,
    blen: Count,
    displs: *const Count,
    old: c_int,
    new: *mut c_int,
) -> c_int {
    let (Ok(n), Ok(len)) = (count_ok(count), count_ok(blen)) else {
        return rt::MPI_ERR_COUNT;
    };
    let ext = match type_of(old) {
        Ok(d) => d.extent,
        Err(code) => return code,
    };
    let d = slice(displs, n);
    let pieces: Vec<(isize, c_int, usize)> = d.iter().map(|&x| (x as isize * ext, old, len)).collect();
    let mut ints = vec![count, blen];
    ints.extend_from_slice(d);
    build(&pieces, 7, ints, vec![], &[old], new)
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_size_c(dt: c_int, size: *mut Count) -> c_int {
    match type_of(dt) {
        Ok(d) => {
            set(size, d.size as Count);
            MPI_SUCCESS
        }
        Err(code) => code,
    }
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_get_extent_c(dt: c_int, lb: *mut Count, extent: *mut Count) -> c_int {
    match type_of(dt) {
        Ok(d) => {
            set(lb, d.lb as Count);
            set(extent, d.extent as Count);
            MPI_SUCCESS
        }
        Err(code) => code,
    }
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_get_true_extent_c(dt: c_int, lb: *mut Count, extent: *mut Count) -> c_int {
    match type_of(dt) {
        Ok(d) => {
            set(lb, d.true_lb as Count);
            set(extent, (d.true_ub - d.true_lb) as Count);
            MPI_SUCCESS
        }
        Err(code) => code,
    }
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_get_extent_x(dt: c_int, lb: *mut Count, extent: *mut Count) -> c_int {
    MPI_Type_get_extent_c(dt, lb, extent)
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_get_true_extent_x(dt: c_int, lb: *mut Count, extent: *mut Count) -> c_int {
    MPI_Type_get_true_extent_c(dt, lb, extent)
}
