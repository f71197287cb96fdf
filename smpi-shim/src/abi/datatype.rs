//! Derived datatypes (MPI chapter 5): constructors, envelope and contents, extents,
//! names, packing (native and external32), and the large-count forms.
#![allow(non_snake_case, clippy::missing_safety_doc, clippy::too_many_arguments)]

use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_void, CStr};
use std::hash::{BuildHasherDefault, Hasher};
use std::rc::Rc;

use crate::mpi::datatype::ext::{self, DarrayDim};
use crate::mpi::datatype::{Contents, Datatype, PREDEFINED_COUNT};
use crate::mpi::{self as rt, mpi_err, with_world, MpiResult, World, MPI_SUCCESS};

use super::args::*;

// ------------------------------------------------------------------ datatypes

/// The value of a `Result<T, c_int>`, or a return of its error class (the
/// datatype calls return their errors without an error handler).
macro_rules! or_code {
    ($r:expr) => {
        match $r {
            Ok(v) => v,
            Err(code) => return code,
        }
    };
}

pub(super) fn type_info<T>(dt: c_int, f: impl FnOnce(&Datatype) -> T) -> Result<T, c_int> {
    with_world(|w| w.dtype(dt).map(|d| f(&d)).map_err(|e| e.code))
}

/// Exports the queries of a datatype's sizes: each writes the values its
/// closure reads from the type into its out-parameters (those not NULL), or
/// returns the error class of an invalid handle.
macro_rules! type_queries {
    ($($name:ident($($out:ident: $t:ty),+) = |$d:ident| ($($v:expr),+);)*) => {$(
        #[no_mangle]
        pub(super) unsafe extern "C" fn $name(dt: c_int, $($out: *mut $t),+) -> c_int {
            // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
            type_info(dt, |$d| unsafe { $(set($out, ($v) as $t);)+ }).map_or_else(|code| code, |()| MPI_SUCCESS)
        }
    )*};
}

type_queries! {
    MPI_Type_size(size: c_int) = |d| (d.size);
    MPI_Type_size_x(size: Count) = |d| (d.size);
    MPI_Type_size_c(size: Count) = |d| (d.size);
    MPI_Type_get_extent(lb: Aint, extent: Aint) = |d| (d.lb, d.extent);
    MPI_Type_get_extent_c(lb: Count, extent: Count) = |d| (d.lb, d.extent);
    MPI_Type_get_true_extent(lb: Aint, extent: Aint) = |d| (d.true_lb, d.true_ub - d.true_lb);
    MPI_Type_get_true_extent_c(lb: Count, extent: Count) = |d| (d.true_lb, d.true_ub - d.true_lb);
    MPI_Type_ub(ub: Aint) = |d| (d.lb + d.extent);
}

/// Exports other names of functions (deprecated MPI-1 names, `_x` forms of
/// `_c` ones): the same parameters, forwarded.
macro_rules! aliases {
    ($($name:ident($($p:ident: $t:ty),*) = $f:ident($($a:expr),*);)*) => {$(
        #[no_mangle]
        pub(super) unsafe extern "C" fn $name($($p: $t),*) -> c_int {
            // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
            unsafe { $f($($a),*) }
        }
    )*};
}

aliases! {
    MPI_Type_extent(dt: c_int, extent: *mut Aint) = MPI_Type_get_extent(dt, std::ptr::null_mut(), extent);
    MPI_Type_lb(dt: c_int, lb: *mut Aint) = MPI_Type_get_extent(dt, lb, std::ptr::null_mut());
    MPI_Type_get_extent_x(dt: c_int, lb: *mut Count, extent: *mut Count) = MPI_Type_get_extent_c(dt, lb, extent);
    MPI_Type_get_true_extent_x(dt: c_int, lb: *mut Count, extent: *mut Count)
        = MPI_Type_get_true_extent_c(dt, lb, extent);
    MPI_Type_hvector(count: c_int, blen: c_int, stride: Aint, old: c_int, new: *mut c_int)
        = MPI_Type_create_hvector(count, blen, stride, old, new);
    MPI_Type_hindexed(count: c_int, blens: *const c_int, displs: *const Aint, old: c_int, new: *mut c_int)
        = MPI_Type_create_hindexed(count, blens, displs, old, new);
    MPI_Type_struct(count: c_int, blens: *const c_int, displs: *const Aint, types: *const c_int, new: *mut c_int)
        = MPI_Type_create_struct(count, blens, displs, types, new);
    MPI_Address(loc: *const c_void, addr: *mut Aint) = MPI_Get_address(loc, addr);
}

/// Exports functions that only pass their arguments on to a Rust function,
/// with the call's name last (for its error messages).
macro_rules! forwards {
    ($($name:ident($($p:ident: $t:ty),*) => $f:ident($($a:expr),*);)*) => {$(
        #[no_mangle]
        pub(super) unsafe extern "C" fn $name($($p: $t),*) -> c_int {
            // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
            unsafe { $f($($a,)* stringify!($name)) }
        }
    )*};
}

forwards! {
    MPI_Type_contiguous(count: c_int, old: c_int, new: *mut c_int) => contiguous(count, old, new);
    MPI_Type_contiguous_c(count: Count, old: c_int, new: *mut c_int) => contiguous(count, old, new);
    MPI_Type_vector(count: c_int, blen: c_int, stride: c_int, old: c_int, new: *mut c_int)
        => strided(count, blen, Stride::Elements(stride), old, new);
    MPI_Type_create_hvector(count: c_int, blen: c_int, stride: Aint, old: c_int, new: *mut c_int)
        => strided(count, blen, Stride::Bytes(stride), old, new);
    MPI_Type_indexed(count: c_int, blens: *const c_int, displs: *const c_int, old: c_int, new: *mut c_int)
        => indexed(count, Blocks::Each(blens), Displs::<_, Aint>::Elements(displs), old, new, 5);
    MPI_Type_create_hindexed(count: c_int, blens: *const c_int, displs: *const Aint, old: c_int, new: *mut c_int)
        => indexed(count, Blocks::Each(blens), Displs::<c_int, _>::Bytes(displs), old, new, 6);
    MPI_Type_create_hindexed_c(count: Count, blens: *const Count, displs: *const Count, old: c_int, new: *mut c_int)
        => indexed(count, Blocks::Each(blens), Displs::<Count, _>::Bytes(displs), old, new, 6);
    MPI_Type_create_indexed_block(count: c_int, blen: c_int, displs: *const c_int, old: c_int, new: *mut c_int)
        => indexed(count, Blocks::One(blen.into()), Displs::<_, Aint>::Elements(displs), old, new, 7);
    MPI_Type_create_indexed_block_c(count: Count, blen: Count, displs: *const Count, old: c_int, new: *mut c_int)
        => indexed(count, Blocks::One(blen), Displs::<_, Count>::Elements(displs), old, new, 7);
    MPI_Type_create_hindexed_block(count: c_int, blen: c_int, displs: *const Aint, old: c_int, new: *mut c_int)
        => indexed(count, Blocks::One(blen.into()), Displs::<c_int, _>::Bytes(displs), old, new, 11);
}

/// A new type from `(byte displacement, old type, repetitions)` pieces; its
/// handle goes to `out`.
pub(super) fn new_type(pieces: &[(isize, i32, usize)], combiner: i32, out: *mut c_int) -> c_int {
    let r = with_world(|w| -> MpiResult<c_int> {
        // The old types are borrowed from the table while the new one is built.
        let mut refs: Vec<(isize, &Datatype, usize)> = Vec::with_capacity(pieces.len());
        let mut last: Option<(c_int, &Datatype)> = None;
        for &(disp, h, reps) in pieces {
            // Consecutive pieces are usually of one type: one table look-up for them.
            let t = match last {
                Some((seen, t)) if seen == h => t,
                _ => match w.dtype_ref(h) {
                    Some(t) => t,
                    None => return Err(w.dtype(h).expect_err("dtype_ref found no type")),
                },
            };
            last = Some((h, t));
            refs.push((disp, t, reps));
        }
        let t = Datatype::from_pieces("derived", &refs, combiner);
        Ok(w.add_type(t))
    });
    match r {
        Ok(h) => {
            // Safety: out is the application's MPI_Datatype pointer.
            unsafe { set(out, h) };
            MPI_SUCCESS
        }
        Err(e) => e.code,
    }
}

/// Replaces type `h` by a copy that `f` changed (whatever holds the old one,
/// a pending message or a type built from it, keeps it); an invalid handle's
/// error class.
fn update_type(w: &mut World, h: c_int, f: impl FnOnce(&mut Datatype)) -> c_int {
    if let Err(e) = w.dtype(h) {
        return e.code;
    }
    let t = w.types[h as usize].as_mut().expect("a valid handle has a type");
    // Copied only when something else holds the type (a type held by the
    // table alone, as at MPI_Type_commit, is changed in place).
    f(Rc::make_mut(t));
    MPI_SUCCESS
}

pub(super) fn extent_of(dt: c_int) -> Result<isize, c_int> {
    type_info(dt, |d| d.extent)
}

/// [`type_ctor`]'s checks of a constructor from one old type, with no array.
unsafe fn ctor_of_one(
    call: &str,
    count: i64,
    blocks: Blocks<i64>,
    old: c_int,
    new: *mut c_int,
) -> Result<(), c_int> {
    // Safety: no array is passed.
    unsafe { type_ctor(call, count, blocks, None::<*const c_int>, Err(old), new) }
}

/// `MPI_Type_contiguous` and its `_c` form.
unsafe fn contiguous(count: impl Into<i64>, old: c_int, new: *mut c_int, call: &str) -> c_int {
    let count: i64 = count.into();
    // Safety: the caller's `new` is the program's MPI_Datatype pointer.
    or_code!(unsafe { ctor_of_one(call, count, Blocks::None, old, new) });
    build(&[(0, old, count as usize)], 2, vec![count], vec![], &[old], new)
}

/// The stride of a vector datatype.
#[derive(Clone, Copy)]
enum Stride {
    /// In extents of the old type (`int`).
    Elements(c_int),
    /// In bytes (`MPI_Aint`).
    Bytes(Aint),
}

/// `MPI_Type_vector` and `MPI_Type_create_hvector`: `count` blocks of `blen`
/// `old`s, `stride` apart.
unsafe fn strided(
    count: c_int,
    blen: c_int,
    stride: Stride,
    old: c_int,
    new: *mut c_int,
    call: &str,
) -> c_int {
    // Safety: the caller's `new` is the program's MPI_Datatype pointer.
    or_code!(unsafe { ctor_of_one(call, count.into(), Blocks::One(blen.into()), old, new) });
    let (bytes, combiner, ints, aints) = match stride {
        Stride::Elements(s) => {
            let ext = or_code!(extent_of(old));
            (
                s as isize * ext,
                3,
                vec![count as i64, blen as i64, s as i64],
                vec![],
            )
        }
        Stride::Bytes(s) => (s, 4, vec![count as i64, blen as i64], vec![s]),
    };
    let pieces: Vec<(isize, i32, usize)> = (0..count as isize)
        .map(|i| (i * bytes, old, blen as usize))
        .collect();
    build(&pieces, combiner, ints, aints, &[old], new)
}

/// A displacement or position argument: `int`, `MPI_Aint` or `MPI_Count`.
trait Offset: Copy {
    fn offset(self) -> isize;
    fn from_offset(v: isize) -> Self;
}

impl Offset for c_int {
    fn offset(self) -> isize {
        self as isize
    }
    fn from_offset(v: isize) -> Self {
        v as c_int
    }
}

impl Offset for Aint {
    fn offset(self) -> isize {
        self
    }
    fn from_offset(v: isize) -> Self {
        v
    }
}

impl Offset for Count {
    fn offset(self) -> isize {
        self as isize
    }
    fn from_offset(v: isize) -> Self {
        v as Count
    }
}

/// Copies packed bytes `v` into the buffer `out` of `outsize` bytes at
/// position `*pos`, and moves `*pos` past them (`MPI_Pack`,
/// `MPI_Pack_external`); `MPI_ERR_TRUNCATE` when they do not fit.
unsafe fn put_packed<P: Offset>(v: &[u8], out: *mut c_void, outsize: usize, pos: *mut P) -> c_int {
    // Safety: `pos` is the program's position and `out` its buffer of `outsize` bytes (the caller's contract).
    unsafe {
        let at = (*pos).offset();
        if at < 0 || at as usize + v.len() > outsize {
            return rt::MPI_ERR_TRUNCATE;
        }
        std::ptr::copy_nonoverlapping(v.as_ptr(), (out as *mut u8).add(at as usize), v.len());
        *pos = P::from_offset(at + v.len() as isize);
        MPI_SUCCESS
    }
}

/// The displacements of an indexed datatype's blocks.
#[derive(Clone, Copy)]
enum Displs<E, B> {
    /// In extents of the old type (`int`; `MPI_Count` in the `_c` forms).
    Elements(*const E),
    /// In bytes (`MPI_Aint`; `MPI_Count` in the `_c` forms).
    Bytes(*const B),
}

/// MPI_Type_indexed, MPI_Type_create_hindexed, MPI_Type_create_indexed_block
/// and MPI_Type_create_hindexed_block, and their `_c` forms: `count` blocks of
/// `old`, of the lengths `blens`, at `displs`; `combiner` is the envelope's.
unsafe fn indexed<C: Copy + Into<i64>, E: Offset, B: Offset>(
    count: C,
    blens: Blocks<C>,
    displs: Displs<E, B>,
    old: c_int,
    new: *mut c_int,
    combiner: i32,
    call: &str,
) -> c_int {
    // Safety: the arrays hold `count` entries (the caller's contract, checked non-NULL by type_ctor).
    unsafe {
        let count: i64 = count.into();
        let checked = match displs {
            Displs::Elements(d) => type_ctor(call, count, blens, Some(d), Err(old), new),
            Displs::Bytes(d) => type_ctor(call, count, blens, Some(d), Err(old), new),
        };
        or_code!(checked);
        let n = count.max(0) as usize;
        let at: Vec<isize> = match displs {
            Displs::Elements(d) => {
                let ext = or_code!(extent_of(old));
                (0..n).map(|i| (*d.add(i)).offset() * ext).collect()
            }
            Displs::Bytes(d) => (0..n).map(|i| (*d.add(i)).offset()).collect(),
        };
        let len = |i: usize| match blens {
            Blocks::Each(b) => (*b.add(i)).into().max(0) as usize,
            Blocks::One(b) => b.max(0) as usize,
            Blocks::None => 0,
        };
        let pieces: Vec<(isize, i32, usize)> = (0..n).map(|i| (at[i], old, len(i))).collect();
        // The envelope: the count, the block length(s), then the
        // displacements as integers or as addresses.
        let mut ints = vec![count];
        match blens {
            Blocks::Each(b) => ints.extend((0..n).map(|i| (*b.add(i)).into())),
            Blocks::One(b) => ints.push(b),
            Blocks::None => {}
        }
        let aints = match displs {
            Displs::Elements(d) => {
                ints.extend((0..n).map(|i| (*d.add(i)).offset() as i64));
                vec![]
            }
            Displs::Bytes(_) => at,
        };
        build(&pieces, combiner, ints, aints, &[old], new)
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Type_create_struct(
    count: c_int,
    blens: *const c_int,
    displs: *const Aint,
    types: *const c_int,
    new: *mut c_int,
) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        or_code!(type_ctor(
            "MPI_Type_create_struct",
            count.into(),
            Blocks::Each(blens),
            Some(displs),
            Ok(types),
            new,
        ));
        let n = count.max(0) as usize;
        let olds = std::slice::from_raw_parts(types, n);
        // The constructor's arguments: what MPI_Type_get_contents returns, and
        // the key of the cache of struct types.
        let mut args: Vec<i64> = Vec::with_capacity(1 + 3 * n);
        args.push(count as i64);
        args.extend((0..n).map(|i| *blens.add(i) as i64));
        args.extend((0..n).map(|i| *displs.add(i) as i64));
        args.extend(olds.iter().map(|&t| t as i64));
        let cacheable = olds.iter().all(|&t| (t as usize) < PREDEFINED_COUNT);
        if cacheable {
            if let Some(t) = STRUCT_TYPES.with(|c| c.borrow().get(&args)) {
                set(new, with_world(|w| w.add_type_rc(t)));
                return MPI_SUCCESS;
            }
        }
        let pieces: Vec<(isize, i32, usize)> = (0..n)
            .map(|i| (*displs.add(i), *types.add(i), (*blens.add(i)).max(0) as usize))
            .collect();
        let ints = args[..=n].to_vec();
        let aints = (0..n).map(|i| *displs.add(i)).collect();
        let rc = build(&pieces, 8, ints, aints, olds, new);
        if rc != MPI_SUCCESS {
            return rc;
        }
        // Like C structs (and MPICH), the extent is padded to the largest
        // alignment of the members, unless MPI_UB/MPI_LB or a resized type set it.
        let h = *new;
        with_world(|w| {
            // The reference is dropped before the update (which would copy the type).
            let padding = w.dtype(h).ok().and_then(|d| {
                let align = d.align.max(1) as isize;
                (!d.has_ub_marker && d.extent % align != 0).then_some(align)
            });
            if let Some(align) = padding {
                update_type(w, h, |t| t.extent += align - t.extent % align);
            }
            if cacheable {
                let built = w.types[h as usize].clone().expect("just built");
                STRUCT_TYPES.with(|c| c.borrow_mut().insert(args.into_boxed_slice(), built));
            }
        });
        MPI_SUCCESS
    }
}

/// Struct types built from named types only, by their constructor's
/// arguments, shared by every handle built from the same arguments (a type
/// is changed only through `Rc::make_mut`, which copies a shared one). HPL
/// builds, commits and frees a struct type for every panel message, and the
/// ranks of a process row build the same ones at about the same time: a hit
/// costs a hash look-up instead of building the type map and its
/// allocations, and freeing it only drops a reference. An entry goes when
/// the last handle holding it is freed, so the cache holds about what the
/// program holds (a message still in flight may keep one a while longer: a
/// budget bounds those).
#[derive(Default)]
struct StructTypeCache {
    by_args: HashMap<Box<[i64]>, usize, BuildHasherDefault<WordHasher>>,
    /// The entry of each cached type and of each committed twin, by address.
    by_type: HashMap<*const Datatype, usize, BuildHasherDefault<WordHasher>>,
    entries: Vec<Option<CachedStruct>>,
    free_entries: Vec<usize>,
    /// The size of what is kept, in type-map entries (see [`weight`]).
    weight: usize,
    /// Entries nothing held when last released, oldest first, with their
    /// weight: kept until [`RELEASED_WEIGHT`] newer ones came after them.
    released: std::collections::VecDeque<(usize, usize)>,
    released_weight: usize,
}

struct CachedStruct {
    args: Box<[i64]>,
    /// As built (uncommitted), what a new handle gets.
    plain: Rc<Datatype>,
    /// The same, committed: `MPI_Type_commit` of a handle holding `plain`
    /// swaps it in instead of copying the shared type.
    committed: Rc<Datatype>,
}

impl CachedStruct {
    /// Whether a handle (or a message in flight) still holds it.
    fn held(&self) -> bool {
        Rc::strong_count(&self.plain) > 1 || Rc::strong_count(&self.committed) > 1
    }
}

/// A multiply-rotate hash over 8-byte words: the cache's keys are a few
/// dozen integers hashed at every struct type a program builds, where the
/// standard SipHash cost more than the rest of a cache hit. Not resistant to
/// chosen keys, which a simulated program has no reason to make.
#[derive(Default)]
struct WordHasher(u64);

impl Hasher for WordHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut words = bytes.chunks_exact(8);
        for w in &mut words {
            self.write_u64(u64::from_le_bytes(w.try_into().expect("8 bytes")));
        }
        for &b in words.remainder() {
            self.write_u64(b as u64);
        }
    }

    fn write_u64(&mut self, w: u64) {
        self.0 = (self.0.rotate_left(5) ^ w).wrapping_mul(0x517c_c1b7_2722_0a95);
    }

    fn write_usize(&mut self, w: usize) {
        self.write_u64(w as u64);
    }

    fn finish(&self) -> u64 {
        // The table picks buckets by the low bits: bring the well-mixed high ones there.
        self.0.rotate_left(26)
    }
}

/// What the cache keeps at most, in type-map entries (blocks and runs, about
/// 40 bytes each, twins included): about 40 MB. Past it, the entries nothing
/// holds are dropped; if that is not enough, new types are not cached.
const STRUCT_TYPES_WEIGHT: usize = 1 << 20;

/// What the released entries (held by no handle) may weigh, in type-map
/// entries: about 2.5 MB. The ranks of one of HPL's process rows build the
/// same panel types one after the other, each freeing its own before the
/// next builds it; types never built again leave within this much.
const RELEASED_WEIGHT: usize = 1 << 16;

/// The memory a cached type and its twin take, in type-map entries.
fn weight(t: &Datatype) -> usize {
    2 * (t.blocks.len() + t.runs.len() + 1)
}

impl StructTypeCache {
    fn get(&self, args: &[i64]) -> Option<Rc<Datatype>> {
        let e = self.entries[*self.by_args.get(args)?].as_ref()?;
        Some(e.plain.clone())
    }

    /// The committed twin of `t`, if `t` is a cached type as built.
    fn committed_twin(&self, t: &Rc<Datatype>) -> Option<Rc<Datatype>> {
        let e = self.entries[*self.by_type.get(&Rc::as_ptr(t))?].as_ref()?;
        Rc::ptr_eq(&e.plain, t).then(|| e.committed.clone())
    }

    fn insert(&mut self, args: Box<[i64]>, plain: Rc<Datatype>) {
        let w = weight(&plain);
        if w > STRUCT_TYPES_WEIGHT / 64 {
            return;
        }
        if self.weight + w > STRUCT_TYPES_WEIGHT {
            let unheld: Vec<usize> = (0..self.entries.len())
                .filter(|&i| self.entries[i].as_ref().is_some_and(|e| !e.held()))
                .collect();
            for i in unheld {
                self.remove(i);
            }
            if self.weight + w > STRUCT_TYPES_WEIGHT / 2 {
                return;
            }
        }
        let mut committed = (*plain).clone();
        committed.committed = true;
        let committed = Rc::new(committed);
        let i = self.free_entries.pop().unwrap_or(self.entries.len());
        if i == self.entries.len() {
            self.entries.push(None);
        }
        self.by_args.insert(args.clone(), i);
        self.by_type.insert(Rc::as_ptr(&plain), i);
        self.by_type.insert(Rc::as_ptr(&committed), i);
        self.entries[i] = Some(CachedStruct {
            args,
            plain,
            committed,
        });
        self.weight += w;
    }

    /// After a handle holding type `t` was freed: if nothing else holds its
    /// entry, the entry joins the released ones, and the oldest of those go
    /// (unless held again) past [`RELEASED_WEIGHT`].
    fn release(&mut self, t: *const Datatype) {
        let Some(&i) = self.by_type.get(&t) else { return };
        let Some(w) = self.entries[i]
            .as_ref()
            .filter(|e| !e.held())
            .map(|e| weight(&e.plain))
        else {
            return;
        };
        self.released.push_back((i, w));
        self.released_weight += w;
        while self.released_weight > RELEASED_WEIGHT {
            let Some((j, wj)) = self.released.pop_front() else {
                break;
            };
            self.released_weight -= wj;
            // A slot may have been released twice, or reused since: only an
            // entry nothing holds goes (dropping one is always safe).
            if self.entries[j].as_ref().is_some_and(|e| !e.held()) {
                self.remove(j);
            }
        }
    }

    fn remove(&mut self, i: usize) {
        let e = self.entries[i].take().expect("a listed entry");
        self.by_args.remove(&e.args);
        self.by_type.remove(&Rc::as_ptr(&e.plain));
        self.by_type.remove(&Rc::as_ptr(&e.committed));
        self.weight -= weight(&e.plain);
        self.free_entries.push(i);
    }
}

thread_local! {
    static STRUCT_TYPES: RefCell<StructTypeCache> = RefCell::new(StructTypeCache::default());
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Type_create_resized(
    old: c_int,
    lb: Aint,
    extent: Aint,
    new: *mut c_int,
) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        or_code!(ctor_of_one("MPI_Type_create_resized", 0, Blocks::None, old, new));
        let r = with_world(|w| -> MpiResult<c_int> {
            let d = w.dtype(old)?;
            Ok(w.add_type(d.resized(lb, extent)))
        });
        match r {
            Ok(h) => {
                record(h, vec![], vec![lb, extent], &[old]);
                set(new, h);
                MPI_SUCCESS
            }
            Err(e) => e.code,
        }
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Type_create_subarray(
    ndims: c_int,
    sizes: *const c_int,
    subsizes: *const c_int,
    starts: *const c_int,
    order: c_int,
    old: c_int,
    new: *mut c_int,
) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        let ext = or_code!(extent_of(old));
        or_code!(subarray_args(ndims, sizes, subsizes, starts, order, new));
        let nd = ndims as usize;
        let get = |p: *const c_int, i: usize| *p.add(if order == 0 { i } else { nd - 1 - i }) as isize;
        // Enumerate the rows of the last (fastest) dimension in C order.
        let mut pieces: Vec<(isize, i32, usize)> = Vec::new();
        let mut total = 1isize;
        for i in 0..nd {
            total *= get(sizes, i);
        }
        if nd == 0 {
            return new_type(&[], 9, new);
        }
        let mut idx = vec![0isize; nd];
        loop {
            let mut off = 0isize;
            for (i, x) in idx.iter().enumerate() {
                off = off * get(sizes, i) + get(starts, i) + x;
            }
            pieces.push((off * ext, old, get(subsizes, nd - 1) as usize));
            // advance all but the last dimension
            let mut d = nd as isize - 2;
            loop {
                if d < 0 {
                    break;
                }
                let du = d as usize;
                idx[du] += 1;
                if idx[du] < get(subsizes, du) {
                    break;
                }
                idx[du] = 0;
                d -= 1;
            }
            if d < 0 {
                break;
            }
        }
        let rc = new_type(&pieces, 9, new);
        if rc != MPI_SUCCESS {
            return rc;
        }
        // The subarray's extent is the full array's.
        let h = *new;
        with_world(|w| {
            update_type(w, h, |t| {
                t.lb = 0;
                t.extent = total * ext;
            })
        });
        let mut ints = vec![nd as i64];
        for p in [sizes, subsizes, starts] {
            ints.extend((0..nd).map(|i| *p.add(i) as i64));
        }
        ints.push(order as i64);
        record(h, ints, vec![], &[old]);
        MPI_SUCCESS
    }
}

/// `MPI_ORDER_C` and `MPI_ORDER_FORTRAN` (`mpi.h`): row- or column-major arrays.
const MPI_ORDER_C: c_int = 0;
const MPI_ORDER_FORTRAN: c_int = 1;

/// The class of `MPI_Type_create_subarray`'s first invalid argument: a
/// negative dimension count, missing arrays or result, sizes below 1, a
/// subarray that does not fit inside the array, an unknown order.
///
/// # Safety
/// `sizes`, `subsizes` and `starts` are null or hold `ndims` integers.
unsafe fn subarray_args(
    ndims: c_int,
    sizes: *const c_int,
    subsizes: *const c_int,
    starts: *const c_int,
    order: c_int,
    new: *mut c_int,
) -> Result<(), c_int> {
    if ndims < 0 {
        return Err(rt::MPI_ERR_COUNT);
    }
    if new.is_null() || (ndims > 0 && (sizes.is_null() || subsizes.is_null() || starts.is_null())) {
        return Err(rt::MPI_ERR_ARG);
    }
    if order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN {
        return Err(rt::MPI_ERR_ARG);
    }
    let n = ndims as usize;
    // Safety: non-null, with `ndims` elements (the caller's contract).
    let (sz, sub, st) = unsafe { (slice(sizes, n), slice(subsizes, n), slice(starts, n)) };
    let fits =
        (0..n).all(|i| sz[i] >= 1 && sub[i] >= 1 && sub[i] <= sz[i] && st[i] >= 0 && st[i] <= sz[i] - sub[i]);
    if fits {
        Ok(())
    } else {
        Err(rt::MPI_ERR_ARG)
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Type_dup(old: c_int, new: *mut c_int) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        or_code!(ctor_of_one("MPI_Type_dup", 0, Blocks::None, old, new));
        let r = with_world(|w| -> MpiResult<c_int> {
            let mut d = (*w.dtype(old)?).clone();
            d.predefined = false;
            d.combiner = 1;
            // A duplicate has no name until it is given one, like any
            // derived type (as in MPICH, whose tests check it: typesnamef).
            d.name = "derived".into();
            Ok(w.add_type(d))
        });
        match r {
            Ok(mut h) => {
                record(h, vec![], vec![], &[old]);
                let rc = crate::mpi::attr::copy_type_attrs(rt::current_rank(), old, h);
                if rc != MPI_SUCCESS {
                    // A failing copy callback fails the dup, which yields MPI_DATATYPE_NULL.
                    MPI_Type_free(&mut h);
                    set(new, 0);
                    return rc;
                }
                set(new, h);
                MPI_SUCCESS
            }
            Err(e) => e.code,
        }
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Type_commit(dt: *mut c_int) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        let h = *dt;
        with_world(|w| {
            // Not matched on `w.dtype(h)` itself: its reference would live through
            // the update, which would then copy the type.
            let predefined = w.dtype(h).is_ok_and(|d| d.predefined);
            if predefined {
                MPI_SUCCESS
            } else if let Some(twin) = STRUCT_TYPES.with(|c| {
                let t = w.types.get(h as usize)?.as_ref()?;
                c.borrow().committed_twin(t)
            }) {
                w.types[h as usize] = Some(twin);
                MPI_SUCCESS
            } else {
                update_type(w, h, |t| t.committed = true)
            }
        })
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Type_free(dt: *mut c_int) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        let h = *dt;
        if with_world(|w| w.dtype_ref(h).is_some_and(|d| !d.predefined)) {
            let rc = crate::mpi::attr::delete_type_attrs(rt::current_rank(), h);
            if rc != MPI_SUCCESS {
                return rc;
            }
        }
        let (rc, freed) = with_world(|w| match w.dtype_ref(h) {
            Some(d) if d.predefined => (rt::MPI_ERR_TYPE, None),
            Some(d) => {
                let freed = d as *const Datatype;
                w.free_type(h);
                (MPI_SUCCESS, Some(freed))
            }
            None => (w.dtype(h).expect_err("no type").code, None),
        });
        if let Some(t) = freed {
            STRUCT_TYPES.with(|c| c.borrow_mut().release(t));
        }
        if rc == MPI_SUCCESS {
            *dt = 0;
        }
        rc
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Get_address(loc: *const c_void, addr: *mut Aint) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        set(addr, loc as Aint);
        MPI_SUCCESS
    }
}

/// The checks `MPI_Pack`, `MPI_Unpack` and `MPI_Pack_size` share: the
/// program's data (`count` of `dt` at `data`, named by `names`), the packed
/// buffer (`packed` of `size` bytes, when there is one), the position and
/// the communicator.
fn pack_args(
    data: *const c_void,
    count: c_int,
    dt: c_int,
    names: Names,
    packed: Option<(*const c_void, c_int)>,
    pos: Option<*const c_int>,
    comm: c_int,
) -> MpiResult<()> {
    let me = rt::current_rank();
    with_world(|w| w.ranks[me as usize].comm(comm).map(|_| ()))?;
    arg_count(count, names.count)?;
    arg_dtype(dt, names.dtype)?;
    arg_data(data, count, dt, names)?;
    if pos.is_some_and(|p| p.is_null()) {
        return Err(mpi_err(rt::MPI_ERR_ARG, "position is NULL"));
    }
    if let Some((buf, size)) = packed {
        if size < 0 {
            return Err(mpi_err(
                rt::MPI_ERR_ARG,
                format!("negative packed buffer size {size}"),
            ));
        }
        if buf.is_null() && size > 0 {
            return Err(mpi_err(rt::MPI_ERR_ARG, "the packed buffer is NULL"));
        }
    }
    Ok(())
}

/// Runs a packing call's `work` once its arguments passed [`pack_args`];
/// an error goes to `comm`'s handler.
fn packing(call: &str, comm: c_int, checked: MpiResult<()>, work: impl FnOnce() -> MpiResult<()>) -> c_int {
    match checked.and_then(|()| work()) {
        Ok(()) => MPI_SUCCESS,
        Err(e) => crate::mpi::entry::handle_error(rt::current_rank(), comm, call, e),
    }
}

/// `MPI_Pack`'s and `MPI_Unpack`'s user data.
const PACK_IN: Names = Names::pack("inbuf", "incount");
const UNPACK_OUT: Names = Names::pack("outbuf", "outcount");

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Pack(
    inbuf: *const c_void,
    count: c_int,
    dt: c_int,
    out: *mut c_void,
    outsize: c_int,
    pos: *mut c_int,
    comm: c_int,
) -> c_int {
    let checked = pack_args(inbuf, count, dt, PACK_IN, Some((out, outsize)), Some(pos), comm);
    packing("MPI_Pack", comm, checked, || {
        let d = with_world(|w| w.dtype(dt))?;
        let mut v = Vec::new();
        // Safety: `inbuf` holds `count` elements of `dt` (checked above, and the program's promise).
        unsafe { d.pack(inbuf as *const u8, count as usize, &mut v) };
        // Safety: `out` has `outsize` bytes and `pos` is valid (checked non-NULL above).
        match unsafe { put_packed(&v, out, outsize as usize, pos) } {
            MPI_SUCCESS => Ok(()),
            code => Err(mpi_err(
                code,
                format!("{} packed bytes do not fit in {outsize}", v.len()),
            )),
        }
    })
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Unpack(
    inbuf: *const c_void,
    insize: c_int,
    pos: *mut c_int,
    out: *mut c_void,
    count: c_int,
    dt: c_int,
    comm: c_int,
) -> c_int {
    let checked = pack_args(out, count, dt, UNPACK_OUT, Some((inbuf, insize)), Some(pos), comm);
    packing("MPI_Unpack", comm, checked, || {
        let d = with_world(|w| w.dtype(dt))?;
        let need = d.size * count as usize;
        // Safety: `pos` is valid (checked non-NULL above).
        let at = unsafe { *pos };
        if at < 0 || at as usize + need > insize as usize {
            return Err(mpi_err(
                rt::MPI_ERR_TRUNCATE,
                format!("{need} bytes at position {at} are not inside the {insize}-byte packed buffer"),
            ));
        }
        // Safety: `inbuf` holds `insize` bytes, of which these are inside (checked above).
        unsafe {
            let data = std::slice::from_raw_parts((inbuf as *const u8).add(at as usize), need);
            d.unpack(data, out as *mut u8, count as usize);
            *pos += need as c_int;
        }
        Ok(())
    })
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Pack_size(
    count: c_int,
    dt: c_int,
    comm: c_int,
    size: *mut c_int,
) -> c_int {
    // No data is read: only the count, the type and the communicator matter.
    let checked = pack_args(std::ptr::dangling(), count, dt, PACK_IN, None, None, comm);
    packing("MPI_Pack_size", comm, checked, || {
        if size.is_null() {
            return Err(mpi_err(rt::MPI_ERR_ARG, "size is NULL"));
        }
        let bytes = with_world(|w| w.dtype(dt))?.size * count as usize;
        // Safety: `size` is the program's int (checked non-NULL above).
        unsafe { set(size, bytes as c_int) };
        Ok(())
    })
}

// ------------------------------------------------------------------ datatype introspection

// MPI_Type_get_envelope, MPI_Type_set_name and MPI_Type_get_name: see abi_dtype.rs.

pub(super) const COMBINER_DARRAY: i32 = 12;
const COMBINER_F90_REAL: i32 = 13;
const COMBINER_F90_COMPLEX: i32 = 14;
const COMBINER_F90_INTEGER: i32 = 15;

/// A type returned by `MPI_Type_create_f90_*`: predefined (it cannot be
/// freed) but with an envelope giving its parameters.
fn is_f90(d: &Datatype) -> bool {
    d.predefined && (COMBINER_F90_REAL..=COMBINER_F90_INTEGER).contains(&d.combiner)
}
pub(super) const TYPECLASS_REAL: c_int = 1;
pub(super) const TYPECLASS_INTEGER: c_int = 2;
pub(super) const TYPECLASS_COMPLEX: c_int = 3;

pub(super) unsafe fn slice<'a, T>(p: *const T, n: usize) -> &'a [T] {
    // Safety: the caller upholds this function's contract (see its `# Safety`).
    unsafe {
        if p.is_null() || n == 0 {
            &[]
        } else {
            std::slice::from_raw_parts(p, n)
        }
    }
}

/// Remembers how derived type `h` was built, for MPI_Type_get_contents and
/// MPI_Type_get_envelope. `types` are the old types' handles.
pub(super) fn record(h: c_int, ints: Vec<i64>, aints: Vec<isize>, types: &[c_int]) {
    with_world(|w| {
        let contents = Contents::new(&ints, &aints, types, |t| {
            w.dtype_held(t).filter(|d| !d.predefined).cloned()
        });
        if let Some(Some(t)) = w.types.get_mut(h.max(0) as usize) {
            // A new type's only reference is the table's: no copy of its type map.
            Rc::make_mut(t).contents = Some(Rc::new(contents));
        }
    });
}

/// Builds a type from `(byte displacement, old type, repetitions)` pieces
/// ([`new_type`]) and records its contents; `out` is not NULL (checked by
/// [`type_ctor`]).
pub(super) fn build(
    pieces: &[(isize, c_int, usize)],
    combiner: i32,
    ints: Vec<i64>,
    aints: Vec<isize>,
    types: &[c_int],
    out: *mut c_int,
) -> c_int {
    let rc = new_type(pieces, combiner, out);
    if rc == MPI_SUCCESS {
        // Safety: `out` holds the new handle.
        record(unsafe { *out }, ints, aints, types);
    }
    rc
}

pub(super) fn type_of(dt: c_int) -> Result<Rc<Datatype>, c_int> {
    with_world(|w| w.dtype(dt)).map_err(|e| e.code)
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Type_get_envelope(
    dt: c_int,
    ni: *mut c_int,
    na: *mut c_int,
    nd: *mut c_int,
    combiner: *mut c_int,
) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        match type_of(dt) {
            Ok(d) => {
                let c = d.contents.as_deref();
                set(ni, c.map_or(0, |c| c.ints().len()) as c_int);
                set(na, c.map_or(0, |c| c.aints().len()) as c_int);
                set(nd, c.map_or(0, |c| c.types().len()) as c_int);
                // Predefined types are MPI_COMBINER_NAMED, except the
                // parameterized Fortran ones (MPI_Type_create_f90_*).
                set(
                    combiner,
                    if d.predefined && !is_f90(&d) {
                        0
                    } else {
                        d.combiner
                    },
                );
                MPI_SUCCESS
            }
            Err(code) => code,
        }
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Type_get_contents(
    dt: c_int,
    max_ints: c_int,
    max_aints: c_int,
    max_types: c_int,
    ints: *mut c_int,
    aints: *mut Aint,
    types: *mut c_int,
) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        let d = or_code!(type_of(dt));
        let Some(c) = d.contents.as_deref().filter(|_| !d.predefined || is_f90(&d)) else {
            // Not allowed on named types (MPI_COMBINER_NAMED).
            return rt::MPI_ERR_TYPE;
        };
        if (max_ints as usize) < c.ints().len()
            || (max_aints as usize) < c.aints().len()
            || (max_types as usize) < c.types().len()
        {
            return rt::MPI_ERR_ARG;
        }
        for (i, &v) in c.ints().iter().enumerate() {
            *ints.add(i) = v as c_int;
        }
        for (i, v) in c.aints().enumerate() {
            *aints.add(i) = v;
        }
        for (i, (h, derived)) in c.types().enumerate() {
            // Named types come back as themselves; derived ones as new handles
            // that the caller frees.
            *types.add(i) = match derived {
                None => h,
                Some(t) => with_world(|w| w.add_type((**t).clone())),
            };
        }
        MPI_SUCCESS
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Type_set_name(dt: c_int, name: *const c_char) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        if name.is_null() {
            return rt::MPI_ERR_ARG;
        }
        let s = CStr::from_ptr(name).to_string_lossy().into_owned();
        with_world(|w| update_type(w, dt, |t| t.name = s.into()))
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Type_get_name(dt: c_int, name: *mut c_char, len: *mut c_int) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        match type_of(dt) {
            Ok(d) => {
                // Derived types have no name until MPI_Type_set_name gives one.
                let s = if d.predefined || d.name != "derived" {
                    d.name.as_ref()
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
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Type_match_size(typeclass: c_int, size: c_int, dt: *mut c_int) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
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
}

// ------------------------------------------------------------------ Fortran 90 parameterized types

/// The gfortran kind (its size in bytes) that `SELECTED_INT_KIND(r)` picks.
fn f90_integer_kind(r: c_int) -> Option<usize> {
    [(2, 1), (4, 2), (9, 4), (18, 8)]
        .into_iter()
        .find(|&(range, _)| r <= range)
        .map(|(_, k)| k)
}

/// The size of the gfortran REAL that `SELECTED_REAL_KIND(p, r)` picks
/// (`MPI_UNDEFINED`: no constraint): 4, 8, or 16 for the x87 extended
/// `REAL(10)`, stored in 16 bytes like C's `long double`. gfortran's
/// `REAL(16)` (software quad precision, p = 33) has no MPI type here.
fn f90_real_size(p: c_int, r: c_int) -> Option<usize> {
    let (p, r) = (
        if p == rt::MPI_UNDEFINED { 0 } else { p },
        if r == rt::MPI_UNDEFINED { 0 } else { r },
    );
    [(6, 37, 4), (15, 307, 8), (18, 4931, 16)]
        .into_iter()
        .find(|&(pp, rr, _)| p <= pp && r <= rr)
        .map(|(_, _, size)| size)
}

/// `MPI_Type_create_f90_{integer,real,complex}`: a predefined type per
/// distinct `(p, r)` (MPI requires the same handle for the same arguments),
/// laid out as the matching sized type (`MPI_INTEGER4`, `MPI_REAL8`, ...).
unsafe fn create_f90(call: &'static str, combiner: i32, p: c_int, r: c_int, new: *mut c_int) -> c_int {
    let g = crate::mpi::entry::enter_call(call);
    let base = match combiner {
        COMBINER_F90_INTEGER => f90_integer_kind(r).map(|k| match k {
            1 => 54,
            2 => 55,
            4 => 56,
            _ => 57,
        }),
        _ if p == rt::MPI_UNDEFINED && r == rt::MPI_UNDEFINED => None,
        _ => f90_real_size(p, r).map(|size| {
            let real = match size {
                4 => 48,
                8 => 49,
                _ => 50,
            };
            // MPI_COMPLEX8/16/32 follow MPI_REAL4/8/16 in mpi.h.
            if combiner == COMBINER_F90_COMPLEX {
                real + 3
            } else {
                real
            }
        }),
    };
    let Some(base) = base else {
        let what = if combiner == COMBINER_F90_INTEGER {
            format!("no Fortran INTEGER kind has range {r} (the largest supported is INTEGER*8, r = 18)")
        } else {
            format!("no Fortran REAL kind has precision {p} and range {r} (supported: up to REAL(10), p = 18, r = 4931; MPI_UNDEFINED for either but not both)")
        };
        return crate::mpi::entry::handle_error(
            g.me,
            rt::MPI_COMM_WORLD,
            call,
            mpi_err(rt::MPI_ERR_ARG, what),
        );
    };
    let ints: Vec<i64> = if combiner == COMBINER_F90_INTEGER {
        vec![r as i64]
    } else {
        vec![p as i64, r as i64]
    };
    let h = with_world(|w| {
        let key = (combiner, p, r);
        if let Some(&h) = w.f90_types.get(&key) {
            return h;
        }
        let mut d = (*w.dtype(base).expect("sized Fortran types are predefined")).clone();
        d.combiner = combiner;
        d.contents = Some(Rc::new(Contents::new(&ints, &[], &[], |_| None)));
        let h = w.add_type(d);
        w.f90_types.insert(key, h);
        h
    });
    // Safety: `new` is the program's MPI_Datatype.
    unsafe { set(new, h) };
    MPI_SUCCESS
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Type_create_f90_integer(r: c_int, new: *mut c_int) -> c_int {
    // Safety: the program calls this as MPI specifies.
    unsafe {
        create_f90(
            "MPI_Type_create_f90_integer",
            COMBINER_F90_INTEGER,
            rt::MPI_UNDEFINED,
            r,
            new,
        )
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Type_create_f90_real(p: c_int, r: c_int, new: *mut c_int) -> c_int {
    // Safety: the program calls this as MPI specifies.
    unsafe { create_f90("MPI_Type_create_f90_real", COMBINER_F90_REAL, p, r, new) }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Type_create_f90_complex(p: c_int, r: c_int, new: *mut c_int) -> c_int {
    // Safety: the program calls this as MPI specifies.
    unsafe { create_f90("MPI_Type_create_f90_complex", COMBINER_F90_COMPLEX, p, r, new) }
}

// ------------------------------------------------------------------ distributed arrays

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Type_create_darray(
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
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        let nd = ndims.max(0) as usize;
        let (g, di, da, ps) = (
            slice(gsizes, nd),
            slice(distribs, nd),
            slice(dargs, nd),
            slice(psizes, nd),
        );
        let r = (|| -> MpiResult<c_int> {
            let missing = [gsizes, distribs, dargs, psizes].iter().any(|p| p.is_null());
            if new.is_null() || (nd > 0 && missing) {
                return Err(mpi_err(rt::MPI_ERR_ARG, "darray: an array or the result is NULL"));
            }
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
            let runs =
                ext::darray_runs(rank as usize, &dims, order).map_err(|m| mpi_err(rt::MPI_ERR_ARG, m))?;
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
}

// ------------------------------------------------------------------ external32

pub(super) fn check_datarep(datarep: *const c_char) -> Result<(), c_int> {
    // Safety: datarep is the application's NUL-terminated string.
    let ok = !datarep.is_null() && unsafe { CStr::from_ptr(datarep) }.to_bytes() == b"external32";
    if ok {
        Ok(())
    } else {
        Err(rt::MPI_ERR_ARG)
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Pack_external_size(
    datarep: *const c_char,
    count: c_int,
    dt: c_int,
    size: *mut Aint,
) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        or_code!(check_datarep(datarep));
        put(
            size,
            type_of(dt).map(|d| ext::external32_size(&d, count.max(0) as usize) as Aint),
        )
    }
}

/// The arguments `MPI_Pack_external` and `MPI_Unpack_external` check first:
/// the data representation, the count and the type.
fn external32_args(datarep: *const c_char, count: c_int, dt: c_int) -> Result<(Rc<Datatype>, usize), c_int> {
    check_datarep(datarep)?;
    let count = usize::try_from(count).map_err(|_| rt::MPI_ERR_COUNT)?;
    Ok((type_of(dt)?, count))
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Pack_external(
    datarep: *const c_char,
    inbuf: *const c_void,
    count: c_int,
    dt: c_int,
    out: *mut c_void,
    outsize: Aint,
    pos: *mut Aint,
) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        let (d, count) = or_code!(external32_args(datarep, count, dt));
        let mut v = Vec::new();
        ext::pack_external32(&d, inbuf as *const u8, count, &mut v);
        put_packed(&v, out, outsize.max(0) as usize, pos)
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Unpack_external(
    datarep: *const c_char,
    inbuf: *const c_void,
    insize: Aint,
    pos: *mut Aint,
    out: *mut c_void,
    count: c_int,
    dt: c_int,
) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        let (d, count) = or_code!(external32_args(datarep, count, dt));
        if *pos < 0 || *pos > insize {
            return rt::MPI_ERR_TRUNCATE;
        }
        let data = slice((inbuf as *const u8).add(*pos as usize), (insize - *pos) as usize);
        match ext::unpack_external32(&d, data, out as *mut u8, count) {
            Some(used) => {
                *pos += used as Aint;
                MPI_SUCCESS
            }
            None => rt::MPI_ERR_TRUNCATE,
        }
    }
}
