//! MPI datatypes as flattened type maps.
//!
//! A datatype is kept as the list of `(byte offset, byte length)` blocks of one
//! element, in type-map order, plus its size, lower bound and extent. Sending
//! `count` elements of a non-contiguous type packs the blocks of element `i` at
//! `buf + i·extent`; receiving unpacks the same way. Adjacent blocks are merged
//! when they touch, so a contiguous type is one block.
//!
//! Besides the byte blocks, a type keeps its type signature as runs of basic
//! elements (for MPI_Get_elements and external32 packing), its alignment (for
//! struct padding) and, for derived types, the arguments it was built from
//! (for MPI_Type_get_contents).

pub(crate) mod ext;

use std::borrow::Cow;
use std::rc::Rc;

/// Basic element types, for reductions.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Basic {
    I8,
    U8,
    I16,
    U16,
    I32,
    U32,
    I64,
    U64,
    F32,
    F64,
    /// `long double` (x86-64: 16 bytes storage, 80-bit value).
    F128,
    Bool,
    /// Complex numbers: two floats or two doubles.
    C32,
    C64,
    /// `long double _Complex`: two x87 long doubles.
    C128,
    /// Pair types for MINLOC/MAXLOC: (value type, index int).
    PairF32I32,
    PairF64I32,
    PairI64I32,
    PairI32I32,
    PairI16I32,
    PairF128I32,
    /// Bytes with no arithmetic meaning (MPI_BYTE, MPI_PACKED).
    Byte,
}

impl Basic {
    /// Whether data sent as `self` may be received as `other`: the same basic
    /// type, bytes on either side, or integers of one width differing only in
    /// sign.
    pub(crate) fn compatible_with(self, other: Basic) -> bool {
        use Basic::*;
        let unsigned = |b: Basic| match b {
            U8 => I8,
            U16 => I16,
            U32 => I32,
            U64 => I64,
            b => b,
        };
        self == Byte || other == Byte || unsigned(self) == unsigned(other)
    }

    /// Storage size in bytes (pair types include padding as C lays them out).
    pub(crate) fn size(self) -> usize {
        match self {
            Basic::I8 | Basic::U8 | Basic::Bool | Basic::Byte => 1,
            Basic::I16 | Basic::U16 => 2,
            Basic::I32 | Basic::U32 | Basic::F32 => 4,
            Basic::I64 | Basic::U64 | Basic::F64 | Basic::C32 => 8,
            Basic::F128 | Basic::C64 => 16,
            Basic::C128 => 32,
            Basic::PairF32I32 | Basic::PairI32I32 => 8,
            Basic::PairF64I32 | Basic::PairI64I32 => 16,
            Basic::PairI16I32 => 8,
            Basic::PairF128I32 => 32,
        }
    }

    /// Alignment in a C struct on x86-64 (complex numbers align like their parts).
    pub(crate) fn align(self) -> usize {
        match self {
            Basic::I8 | Basic::U8 | Basic::Bool | Basic::Byte => 1,
            Basic::I16 | Basic::U16 => 2,
            Basic::I32 | Basic::U32 | Basic::F32 | Basic::C32 => 4,
            Basic::PairF32I32 | Basic::PairI32I32 | Basic::PairI16I32 => 4,
            Basic::I64 | Basic::U64 | Basic::F64 | Basic::C64 => 8,
            Basic::PairF64I32 | Basic::PairI64I32 => 8,
            Basic::F128 | Basic::C128 | Basic::PairF128I32 => 16,
        }
    }

    /// The basic elements of one value, as `(offset, element)`: pair types
    /// are two elements (MPI counts them so), everything else one.
    pub(crate) fn elements(self) -> Vec<(isize, Basic)> {
        match self {
            Basic::PairF32I32 => vec![(0, Basic::F32), (4, Basic::I32)],
            Basic::PairF64I32 => vec![(0, Basic::F64), (8, Basic::I32)],
            Basic::PairI64I32 => vec![(0, Basic::I64), (8, Basic::I32)],
            Basic::PairI32I32 => vec![(0, Basic::I32), (4, Basic::I32)],
            Basic::PairI16I32 => vec![(0, Basic::I16), (4, Basic::I32)],
            Basic::PairF128I32 => vec![(0, Basic::F128), (16, Basic::I32)],
            b => vec![(0, b)],
        }
    }
}

/// One basic element of a type signature: its native kind and its size in
/// the external32 representation (which differs for e.g. MPI_LONG: 4 bytes).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct Elem {
    pub basic: Basic,
    pub external: u8,
}

impl Elem {
    fn native(basic: Basic) -> Self {
        Elem {
            basic,
            external: basic.size() as u8,
        }
    }
}

/// `count` adjacent basic elements of one kind, starting at byte `offset`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct Run {
    pub offset: isize,
    pub elem: Elem,
    pub count: usize,
}

/// How a derived type was built: the arguments MPI_Type_get_contents returns.
///
/// Kept in one allocation (the integer arguments, the address arguments, then
/// the old types' handles): programs such as HPL build and free a derived
/// type for every message, and each allocation kept until `MPI_Type_free` is
/// a cold free then.
#[derive(Clone, Debug, Default)]
pub(crate) struct Contents {
    n_ints: usize,
    n_aints: usize,
    args: Box<[i64]>,
    /// The old types that are derived, by position among the old types: kept
    /// alive for MPI_Type_get_contents (named types live as long as the run).
    derived: Vec<(usize, Rc<Datatype>)>,
}

impl Contents {
    /// Records `ints`, `aints` and the old types' handles `types`;
    /// `derived(h)` is the type of handle `h` if it is a derived one.
    pub(crate) fn new(
        ints: &[i64],
        aints: &[isize],
        types: &[i32],
        mut derived_of: impl FnMut(i32) -> Option<Rc<Datatype>>,
    ) -> Self {
        let mut args = Vec::with_capacity(ints.len() + aints.len() + types.len());
        args.extend_from_slice(ints);
        args.extend(aints.iter().map(|&a| a as i64));
        args.extend(types.iter().map(|&h| h as i64));
        let derived = types
            .iter()
            .enumerate()
            .filter_map(|(i, &h)| derived_of(h).map(|t| (i, t)))
            .collect();
        Contents {
            n_ints: ints.len(),
            n_aints: aints.len(),
            args: args.into_boxed_slice(),
            derived,
        }
    }

    pub(crate) fn ints(&self) -> &[i64] {
        &self.args[..self.n_ints]
    }

    pub(crate) fn aints(&self) -> impl ExactSizeIterator<Item = isize> + '_ {
        self.args[self.n_ints..self.n_ints + self.n_aints]
            .iter()
            .map(|&a| a as isize)
    }

    /// The old types: their handle when the type was built, and the type
    /// itself if it is derived.
    pub(crate) fn types(&self) -> impl ExactSizeIterator<Item = (i32, Option<&Rc<Datatype>>)> + '_ {
        let mut derived = self.derived.iter().peekable();
        self.args[self.n_ints + self.n_aints..]
            .iter()
            .enumerate()
            .map(move |(i, &h)| (h as i32, derived.next_if(|d| d.0 == i).map(|d| &d.1)))
    }
}

/// One datatype.
#[derive(Clone, Debug)]
pub(crate) struct Datatype {
    /// "derived" until the program names it: no allocation per derived type.
    pub name: Cow<'static, str>,
    /// Bytes of data in one element.
    pub size: usize,
    pub lb: isize,
    pub extent: isize,
    pub true_lb: isize,
    pub true_ub: isize,
    /// `(offset, len)` blocks of one element.
    pub blocks: Vec<(isize, usize)>,
    /// The single basic type all data is made of, if any (for reductions).
    pub basic: Option<Basic>,
    /// Number of basic elements in one element (for MPI_Get_elements).
    pub basic_count: usize,
    pub committed: bool,
    pub predefined: bool,
    /// Explicit MPI_LB / MPI_UB markers set by old-style struct types.
    pub has_lb_marker: bool,
    pub has_ub_marker: bool,
    /// Combiner (MPI_COMBINER_*) for Type_get_envelope.
    pub combiner: i32,
    /// Alignment of the most aligned basic element (struct extents are padded to it).
    pub align: usize,
    /// The type signature of one element, as runs of basic elements in type-map order.
    pub runs: Vec<Run>,
    /// Constructor arguments of a derived type.
    pub contents: Option<Rc<Contents>>,
}

/// The non-empty pieces `(offset, len)` of `count` elements of a type, in order: what
/// [`Datatype::pieces`] gives, as a plain loop (the inner loop of every non-contiguous copy).
#[derive(Clone)]
struct Cursor<'a> {
    blocks: &'a [(isize, usize)],
    extent: isize,
    elements: usize,
    scale: usize,
    element: usize,
    block: usize,
}

impl<'a> Cursor<'a> {
    fn new(dt: &'a Datatype, count: usize) -> Self {
        let (elements, scale) = if dt.is_contiguous() && dt.size > 0 {
            (count.min(1), count)
        } else {
            (count, 1)
        };
        Cursor {
            blocks: &dt.blocks,
            extent: dt.extent,
            elements,
            scale,
            element: 0,
            block: 0,
        }
    }

    #[inline(always)]
    fn next_piece(&mut self) -> Option<(isize, usize)> {
        while self.element < self.elements {
            if let Some(&(off, len)) = self.blocks.get(self.block) {
                self.block += 1;
                if len > 0 {
                    return Some((self.element as isize * self.extent + off, len * self.scale));
                }
            } else {
                self.block = 0;
                self.element += 1;
            }
        }
        None
    }
}

/// Moves `n` bytes, reading them all before writing (right even if the ranges overlap);
/// the sizes of one or two basic elements without a call.
///
/// # Safety
/// Both ranges valid for `n` bytes.
#[inline(always)]
unsafe fn move_bytes(from: *const u8, to: *mut u8, n: usize) {
    // Safety: as the caller promised.
    unsafe {
        match n {
            4 => std::ptr::write_unaligned(to.cast::<u32>(), std::ptr::read_unaligned(from.cast::<u32>())),
            8 => std::ptr::write_unaligned(to.cast::<u64>(), std::ptr::read_unaligned(from.cast::<u64>())),
            16 => std::ptr::write_unaligned(to.cast::<u128>(), std::ptr::read_unaligned(from.cast::<u128>())),
            _ => std::ptr::copy(from, to, n),
        }
    }
}

/// Copies `bytes` between one contiguous run and the single-block elements of `cursor`
/// at `base`: from the run into the elements, or (`into_run`) from the elements into it.
///
/// # Safety
/// The run valid for `bytes`, `base` for the cursor's pieces; the side read is only read.
unsafe fn copy_strided(run: *mut u8, cursor: &Cursor, base: *mut u8, bytes: usize, into_run: bool) {
    let (boff, blen) = cursor.blocks[0];
    let (mut at, mut left) = (0usize, bytes);
    for e in 0..cursor.elements {
        let n = blen.min(left);
        if n == 0 {
            break;
        }
        // Safety: as the caller promised.
        unsafe {
            let (run_at, element) = (run.add(at), base.offset(e as isize * cursor.extent + boff));
            if into_run {
                move_bytes(element, run_at, n);
            } else {
                move_bytes(run_at, element, n);
            }
        }
        (at, left) = (at + n, left - n);
    }
}

/// Copies `bytes` of the type signature between two type maps in ordinary memory
/// (neither side folded), piece by piece. A contiguous side against one block per
/// element on the other (vectors, resized types) is a strided loop.
///
/// # Safety
/// Both buffers valid for their cursors' pieces; `bytes` within both sides' sizes.
unsafe fn copy_plain(from: Cursor, src: *const u8, to: Cursor, dst: *mut u8, bytes: usize) {
    let (first_from, first_to) = (from.clone().next_piece(), to.clone().next_piece());
    if let (Some((soff, slen)), Some((doff, dlen))) = (first_from, first_to) {
        if slen >= bytes && to.blocks.len() == 1 && to.scale == 1 {
            // Safety: the pieces the general loop below would visit, in the same order.
            unsafe { copy_strided(src.offset(soff).cast_mut(), &to, dst, bytes, false) };
            return;
        }
        if dlen >= bytes && from.blocks.len() == 1 && from.scale == 1 {
            // Safety: as above, the elements being the source.
            unsafe { copy_strided(dst.offset(doff), &from, src.cast_mut(), bytes, true) };
            return;
        }
    }
    for_each_chunk(from, to, bytes, |soff, doff, n| {
        // Safety: within the pieces of both type maps, as the caller promised.
        unsafe { move_bytes(src.offset(soff), dst.offset(doff), n) }
    });
}

/// Walks the first `bytes` of two type maps together: `chunk(source offset, destination
/// offset, n)` for each run of `n` bytes contiguous on both sides, in signature order.
#[inline(always)]
fn for_each_chunk(
    mut from: Cursor,
    mut to: Cursor,
    bytes: usize,
    mut chunk: impl FnMut(isize, isize, usize),
) {
    let (mut s, mut d) = (from.next_piece(), to.next_piece());
    let mut left = bytes;
    while left > 0 {
        let (Some((soff, slen)), Some((doff, dlen))) = (s, d) else {
            break;
        };
        let n = slen.min(dlen).min(left);
        chunk(soff, doff, n);
        left -= n;
        s = if n < slen {
            Some((soff + n as isize, slen - n))
        } else {
            from.next_piece()
        };
        d = if n < dlen {
            Some((doff + n as isize, dlen - n))
        } else {
            to.next_piece()
        };
    }
}

impl Datatype {
    /// Whether `MPI_BOTTOM` (a NULL buffer) can hold data of this type.
    ///
    /// With `MPI_BOTTOM` the type map's displacements are the data's absolute
    /// addresses (MPI 4.1 §5.1.12), so a derived type built from
    /// `MPI_Get_address` values is valid with a NULL buffer. A predefined type
    /// has its data at displacement 0, and no derived type whose data starts
    /// below the first page can hold absolute addresses either: Linux never
    /// maps that page (`vm.mmap_min_addr` is at least 4096), so such data at
    /// `MPI_BOTTOM` could only be a crash. Deciding on the lowest data byte
    /// (`true_lb`) rather than on the first block keeps types whose blocks are
    /// not in address order right.
    pub(crate) fn fits_bottom(&self) -> bool {
        const FIRST_MAPPABLE_ADDRESS: isize = 4096;
        !self.predefined && self.true_lb >= FIRST_MAPPABLE_ADDRESS
    }

    /// A predefined type of `size` bytes.
    pub(crate) fn basic(name: &'static str, basic: Basic) -> Self {
        let size = basic.size();
        // Pair types may have data holes (e.g. double+int = 12 bytes of data in 16).
        let (blocks, data) = match basic {
            Basic::PairF64I32 | Basic::PairI64I32 => (vec![(0, 12)], 12),
            Basic::PairI16I32 => (vec![(0, 2), (4, 4)], 6),
            Basic::PairF128I32 => (vec![(0, 20)], 20),
            _ => (vec![(0, size)], size),
        };
        let runs = basic
            .elements()
            .into_iter()
            .map(|(offset, b)| Run {
                offset,
                elem: Elem::native(b),
                count: 1,
            })
            .collect();
        Datatype {
            name: name.into(),
            size: data,
            lb: 0,
            extent: size as isize,
            true_lb: 0,
            true_ub: size as isize,
            blocks,
            basic: Some(basic),
            basic_count: 1,
            committed: true,
            predefined: true,
            has_lb_marker: false,
            has_ub_marker: false,
            combiner: 0,
            align: basic.align(),
            runs,
            contents: None,
        }
    }

    /// A zero-size marker type (MPI_LB / MPI_UB).
    pub(crate) fn marker(name: &'static str, is_lb: bool) -> Self {
        Datatype {
            name: name.into(),
            size: 0,
            lb: 0,
            extent: 0,
            true_lb: 0,
            true_ub: 0,
            blocks: vec![],
            basic: None,
            basic_count: 0,
            committed: true,
            predefined: true,
            has_lb_marker: is_lb,
            has_ub_marker: !is_lb,
            combiner: 0,
            align: 1,
            runs: vec![],
            contents: None,
        }
    }

    /// Whether `count` elements occupy one contiguous range starting at the buffer.
    pub(crate) fn is_contiguous(&self) -> bool {
        self.blocks.len() == 1 && self.blocks[0].0 == 0 && self.blocks[0].1 as isize == self.extent
            || self.size == 0
    }

    /// Builds a type from `(displacement, child, repetitions)` pieces (the
    /// general constructor behind contiguous/vector/indexed/struct).
    ///
    /// Consecutive pieces usually share their type (HPL's panel broadcast is a
    /// struct of 129 columns of `MPI_DOUBLE`, rebuilt every step): what a
    /// piece needs of its type is worked out once per run of such pieces, and
    /// a gap-free type ([`PlainChild`]) then costs a few additions a piece.
    pub(crate) fn from_pieces(
        name: &'static str,
        pieces: &[(isize, &Datatype, usize)],
        combiner: i32,
    ) -> Self {
        let mut map = TypeMapBuilder::with_capacity(pieces.len());
        let mut rest = pieces;
        while let Some(&(_, child, _)) = rest.first() {
            let same = rest.iter().take_while(|p| std::ptr::eq(p.1, child)).count();
            let (group, after) = rest.split_at(same);
            match PlainChild::of(child) {
                Some(plain) => map.add_plain(&plain, group),
                None => {
                    for &(disp, child, reps) in group.iter().filter(|p| p.2 > 0) {
                        map.add(disp, child, reps);
                    }
                }
            }
            rest = after;
        }
        map.finish(name, combiner)
    }

    /// [`Datatype::from_pieces`] the obvious way, every piece through the
    /// general step: what the fast path is checked against.
    #[cfg(test)]
    pub(crate) fn from_pieces_general(
        name: &'static str,
        pieces: &[(isize, &Datatype, usize)],
        combiner: i32,
    ) -> Self {
        let mut map = TypeMapBuilder::with_capacity(pieces.len());
        for &(disp, child, reps) in pieces {
            if reps > 0 {
                map.add(disp, child, reps);
            }
        }
        map.finish(name, combiner)
    }

    /// Bytes taken by the first `n` basic elements of a message of this type
    /// (the inverse of [`Datatype::elements_in`], for MPI_Status_set_elements).
    pub(crate) fn bytes_of_elements(&self, n: usize) -> usize {
        let per_type: usize = self.runs.iter().map(|r| r.count).sum();
        if per_type == 0 {
            return 0;
        }
        let mut bytes = n / per_type * self.size;
        let mut rest = n % per_type;
        for r in &self.runs {
            let take = rest.min(r.count);
            bytes += take * r.elem.basic.size();
            rest -= take;
            if rest == 0 {
                break;
            }
        }
        bytes
    }

    /// Number of basic elements in the first `bytes` bytes of a message of
    /// this type (MPI_Get_elements): whole elements only.
    pub(crate) fn elements_in(&self, bytes: usize) -> usize {
        if self.size == 0 {
            return 0;
        }
        let per_type: usize = self.runs.iter().map(|r| r.count).sum();
        let mut n = bytes / self.size * per_type;
        let mut rest = bytes % self.size;
        for r in &self.runs {
            let s = r.elem.basic.size().max(1);
            let fit = (rest / s).min(r.count);
            n += fit;
            if fit < r.count {
                break;
            }
            rest -= fit * s;
        }
        n
    }

    /// Same data, new lower bound and extent.
    pub(crate) fn resized(&self, lb: isize, extent: isize) -> Self {
        let mut t = self.clone();
        t.lb = lb;
        t.extent = extent;
        t.predefined = false;
        t.committed = false;
        t.has_lb_marker = true;
        t.has_ub_marker = true;
        t.combiner = 10;
        t.contents = None;
        t
    }

    /// Copies `count` elements laid out at `buf` into a contiguous byte vector.
    ///
    /// # Safety
    /// `buf` must be valid for the type map of `count` elements.
    pub(crate) unsafe fn pack(&self, buf: *const u8, count: usize, out: &mut Vec<u8>) {
        // Safety: the caller upholds this function's contract (see its `# Safety`).
        unsafe {
            if self.is_contiguous() {
                out.extend_from_slice(std::slice::from_raw_parts(buf, self.size * count));
                return;
            }
            out.reserve(self.size * count);
            for i in 0..count {
                let base = buf.offset(i as isize * self.extent);
                for &(off, len) in &self.blocks {
                    out.extend_from_slice(std::slice::from_raw_parts(base.offset(off), len));
                }
            }
        }
    }

    /// The layout (see [`crate::host::folding::Layout`]) of the memory `count`
    /// elements at `buf` span, from their first byte (`true_lb`), when it
    /// touches folded memory; `None` when everything is ordinary memory.
    /// A send computes it once when posted (MPI forbids touching a send
    /// buffer before completion) and hands it to [`Datatype::copy_to_with`].
    pub(crate) fn folded_layout(&self, buf: *const u8, count: usize) -> Option<SpanLayout> {
        if count == 0 || self.size == 0 || !crate::host::folding::any() {
            return None;
        }
        let (start, span) = self.span_of(buf, count)?;
        // A dense type map is looked up whole; a sparse one (far-apart blocks)
        // only where its blocks are, in address order, nearby blocks merged.
        let layout = if span <= 2 * self.size * count || span <= SPARSE_GAP {
            crate::host::folding::Layout::of(start, span)
        } else {
            let mut pieces: Vec<(usize, usize)> = self
                .pieces(count)
                .filter(|p| p.1 > 0)
                .map(|(off, len)| ((off - self.true_lb) as usize, (off - self.true_lb) as usize + len))
                .collect();
            pieces.sort_unstable();
            let mut merged: Vec<(usize, usize)> = Vec::with_capacity(pieces.len());
            for (a, b) in pieces {
                match merged.last_mut() {
                    Some((_, e)) if a <= *e + SPARSE_GAP => *e = (*e).max(b),
                    _ => merged.push((a, b)),
                }
            }
            crate::host::folding::Layout::of_ranges(start, &merged)
        };
        layout.map(|l| (self.true_lb, l))
    }

    /// The first byte and the length of the memory `count` elements at `buf`
    /// touch (`None` if empty).
    fn span_of(&self, buf: *const u8, count: usize) -> Option<(*const u8, usize)> {
        let span = (count as isize - 1) * self.extent + (self.true_ub - self.true_lb);
        (span > 0).then(|| (buf.wrapping_offset(self.true_lb), span as usize))
    }

    /// Like [`Datatype::pack`], but reads only the bytes that hold data
    /// (folded and never-written parts come out as zeros, unread), given the
    /// buffer's layout.
    ///
    /// # Safety
    /// `buf` must be valid for the type map of `count` elements; `layout`
    /// must be this buffer's [`Datatype::folded_layout`].
    pub(crate) unsafe fn pack_with(
        &self,
        buf: *const u8,
        count: usize,
        layout: Option<&SpanLayout>,
        out: &mut Vec<u8>,
    ) {
        // Safety: the caller upholds this function's contract (see its `# Safety`).
        unsafe {
            let Some((lo, layout)) = layout else {
                return self.pack(buf, count, out);
            };
            let lo = *lo;
            let start = out.len();
            out.resize(start + self.size * count, 0);
            let mut pos = start;
            for (off, len) in self.pieces(count) {
                let rel = (off - lo) as usize;
                for (a, b, what) in layout.runs_in(rel, rel + len) {
                    if matches!(
                        what,
                        crate::host::folding::Bytes::Data | crate::host::folding::Bytes::Unknown
                    ) {
                        let src = buf.offset(lo).add(a);
                        std::ptr::copy_nonoverlapping(src, out.as_mut_ptr().add(pos + a - rel), b - a);
                    }
                }
                pos += len;
            }
        }
    }

    /// The `(offset from buf, len)` pieces of `count` elements, in type-map order.
    /// A contiguous type gives one piece for all `count` elements.
    fn pieces(&self, count: usize) -> impl Iterator<Item = (isize, usize)> + '_ {
        let (elements, scale) = if self.is_contiguous() && self.size > 0 {
            (count.min(1), count)
        } else {
            (count, 1)
        };
        (0..elements).flat_map(move |i| {
            let base = i as isize * self.extent;
            self.blocks
                .iter()
                .map(move |&(off, len)| (base + off, len * scale))
        })
    }

    /// Copies the first `bytes` of the type signature from `scount` elements
    /// of `self` at `src` into `rcount` elements of `rdt` at `dst`, block by
    /// block, with no intermediate buffer. Folded memory is handled as by
    /// [`crate::host::folding::copy`]: folded source bytes are not read.
    ///
    /// # Safety
    /// Both buffers must be valid for their type maps; `bytes` must not
    /// exceed either side's size.
    #[cfg(test)]
    pub(crate) unsafe fn copy_to(
        &self,
        src: *const u8,
        scount: usize,
        rdt: &Datatype,
        dst: *mut u8,
        rcount: usize,
        bytes: usize,
    ) {
        let slay = self.folded_layout(src, scount);
        // Safety: as this function's contract.
        unsafe { self.copy_to_with(src, scount, slay.as_ref(), rdt, dst, rcount, bytes) }
    }

    /// [`Datatype::copy_to`] with the source's layout already known.
    ///
    /// # Safety
    /// As [`Datatype::copy_to`]; `slay` must be the source's
    /// [`Datatype::folded_layout`].
    #[allow(clippy::too_many_arguments)]
    pub(crate) unsafe fn copy_to_with(
        &self,
        src: *const u8,
        scount: usize,
        slay: Option<&SpanLayout>,
        rdt: &Datatype,
        dst: *mut u8,
        rcount: usize,
        bytes: usize,
    ) {
        // Safety: the caller upholds this function's contract (see its `# Safety`).
        unsafe {
            if bytes == 0 {
                return;
            }
            // Each side is classified once; the pieces then look their bytes up.
            let dlay = rdt.folded_layout(dst, rcount);
            fn rel(lay: Option<&SpanLayout>, off: isize) -> (Option<&crate::host::folding::Layout>, usize) {
                lay.map_or((None, 0), |(lo, l)| (Some(l), (off - lo) as usize))
            }
            if self.is_contiguous() && rdt.is_contiguous() {
                let ((sl, sr), (dl, dr)) = (rel(slay, 0), rel(dlay.as_ref(), 0));
                crate::host::folding::transfer(src, sl, sr, dst, dl, dr, bytes);
                return;
            }
            if slay.is_none() && dlay.is_none() {
                copy_plain(
                    Cursor::new(self, scount),
                    src,
                    Cursor::new(rdt, rcount),
                    dst,
                    bytes,
                );
                return;
            }
            let (from, to) = (Cursor::new(self, scount), Cursor::new(rdt, rcount));
            for_each_chunk(from, to, bytes, |soff, doff, n| {
                let ((sl, sr), (dl, dr)) = (rel(slay, soff), rel(dlay.as_ref(), doff));
                crate::host::folding::transfer(src.offset(soff), sl, sr, dst.offset(doff), dl, dr, n);
            });
        }
    }

    /// Like [`Datatype::unpack`], but leaves folded memory alone and writes
    /// never-written copy-on-write pages only where the data differs.
    ///
    /// # Safety
    /// `buf` must be valid for the type map of `count` elements.
    pub(crate) unsafe fn unpack_folded(&self, data: &[u8], buf: *mut u8, count: usize) -> usize {
        // Safety: the caller upholds this function's contract (see its `# Safety`).
        unsafe {
            let Some((lo, layout)) = self.folded_layout(buf, count) else {
                return self.unpack(data, buf, count);
            };
            let mut pos = 0;
            for (off, len) in self.pieces(count) {
                if pos >= data.len() {
                    break;
                }
                let n = len.min(data.len() - pos);
                let rel = (off - lo) as usize;
                crate::host::folding::transfer(
                    data.as_ptr().add(pos),
                    None,
                    0,
                    buf.offset(off),
                    Some(&layout),
                    rel,
                    n,
                );
                pos += n;
            }
            pos
        }
    }

    /// Scatters bytes from `data` into `count` elements at `buf`; stops when
    /// `data` is exhausted. Returns the bytes consumed.
    ///
    /// # Safety
    /// `buf` must be valid for the type map of `count` elements.
    pub(crate) unsafe fn unpack(&self, data: &[u8], buf: *mut u8, count: usize) -> usize {
        // Safety: the caller upholds this function's contract (see its `# Safety`).
        unsafe {
            if self.is_contiguous() {
                let n = data.len().min(self.size * count);
                std::ptr::copy_nonoverlapping(data.as_ptr(), buf, n);
                return n;
            }
            let mut pos = 0;
            'outer: for i in 0..count {
                let base = buf.offset(i as isize * self.extent);
                for &(off, len) in &self.blocks {
                    if pos >= data.len() {
                        break 'outer;
                    }
                    let n = len.min(data.len() - pos);
                    std::ptr::copy_nonoverlapping(data.as_ptr().add(pos), base.offset(off), n);
                    pos += n;
                }
            }
            pos
        }
    }
}

/// A buffer's [`crate::host::folding::Layout`] from the first byte its type map
/// touches, with that byte's offset from the buffer (`true_lb`).
pub(crate) type SpanLayout = (isize, crate::host::folding::Layout);

/// Blocks of a type map closer than this are classified together (with the
/// bytes between them) when looking up folded memory.
const SPARSE_GAP: usize = 64 << 10;

// Inlined: a call costs more than the merge it usually is (pushes and pops of six registers).
#[inline(always)]
fn push_run(runs: &mut Vec<Run>, offset: isize, elem: Elem, count: usize) {
    if count == 0 {
        return;
    }
    if let Some(last) = runs.last_mut() {
        if last.elem == elem && last.offset + (last.count * elem.basic.size()) as isize == offset {
            last.count += count;
            return;
        }
    }
    runs.push(Run { offset, elem, count });
}

#[inline(always)]
fn push_block(blocks: &mut Vec<(isize, usize)>, off: isize, len: usize) {
    if len == 0 {
        return;
    }
    if let Some(last) = blocks.last_mut() {
        if last.0 + last.1 as isize == off {
            last.1 += len;
            return;
        }
    }
    blocks.push((off, len));
}

/// What [`Datatype::from_pieces`] needs of a gap-free child type: one block
/// from offset 0 filling its extent, one run of basic elements, no markers.
/// Repetitions of it are one block and one run, its bounds those of the block.
#[derive(Copy, Clone, Debug)]
struct PlainChild {
    /// Bytes of one element (= its extent).
    size: usize,
    elem: Elem,
    /// Basic elements of one element (its one run's length).
    elems: usize,
    basic_count: usize,
    basic: Option<Basic>,
    align: usize,
}

impl PlainChild {
    fn of(t: &Datatype) -> Option<PlainChild> {
        let plain = t.size > 0
            && t.lb == 0
            && t.extent == t.size as isize
            && (t.true_lb, t.true_ub) == (0, t.extent)
            && t.blocks.as_slice() == [(0, t.size)]
            && !t.has_lb_marker
            && !t.has_ub_marker;
        match t.runs.as_slice() {
            [r] if plain && r.offset == 0 && r.count * r.elem.basic.size() == t.size => Some(PlainChild {
                size: t.size,
                elem: r.elem,
                elems: r.count,
                basic_count: t.basic_count,
                basic: t.basic,
                align: t.align,
            }),
            _ => None,
        }
    }
}

/// A type map under construction from pieces, in type-map order: blocks and
/// runs merged as they come, size, counts and bounds accumulated.
struct TypeMapBuilder {
    blocks: Vec<(isize, usize)>,
    runs: Vec<Run>,
    size: usize,
    /// `None` before any data; then the single basic type so far, if any.
    basic: Option<Option<Basic>>,
    basic_count: usize,
    lb: isize,
    ub: isize,
    true_lb: isize,
    true_ub: isize,
    lb_marker: Option<isize>,
    ub_marker: Option<isize>,
    align: usize,
}

impl TypeMapBuilder {
    /// Sized for one block and one run per piece (the most a piece of a
    /// gap-free type adds).
    fn with_capacity(pieces: usize) -> Self {
        TypeMapBuilder {
            blocks: Vec::with_capacity(pieces),
            runs: Vec::with_capacity(pieces),
            size: 0,
            basic: None,
            basic_count: 0,
            lb: isize::MAX,
            ub: isize::MIN,
            true_lb: isize::MAX,
            true_ub: isize::MIN,
            lb_marker: None,
            ub_marker: None,
            align: 1,
        }
    }

    fn merge_basic(&mut self, b: Option<Basic>) {
        self.basic = Some(match self.basic {
            None => b,
            Some(old) if old == b => old,
            Some(_) => None,
        });
    }

    /// Pieces `(disp, _, reps)` of one gap-free child: the general step's
    /// result for each, without its loops, and the child's alignment and
    /// basic type merged once for all.
    fn add_plain(&mut self, c: &PlainChild, pieces: &[(isize, &Datatype, usize)]) {
        // Sums and bounds in locals (registers), written back once.
        let (mut size, mut basic_count) = (self.size, self.basic_count);
        let (mut lo, mut hi) = (isize::MAX, isize::MIN);
        let mut pieces = pieces.iter().filter(|p| p.2 > 0);
        if let Some(&(disp, _, reps)) = pieces.next() {
            let len = c.size * reps;
            push_run(&mut self.runs, disp, c.elem, c.elems * reps);
            push_block(&mut self.blocks, disp, len);
            (size, basic_count) = (size + len, basic_count + c.basic_count * reps);
            (lo, hi) = (disp, disp + len as isize);
        }
        // From here on the last block and the last run (of this child's
        // element) both end where the last piece ends: a piece extends both
        // or starts both.
        for &(disp, _, reps) in pieces {
            let len = c.size * reps;
            let block = self.blocks.last_mut().expect("pushed above");
            if block.0 + block.1 as isize == disp {
                block.1 += len;
                self.runs.last_mut().expect("pushed above").count += c.elems * reps;
            } else {
                self.blocks.push((disp, len));
                self.runs.push(Run {
                    offset: disp,
                    elem: c.elem,
                    count: c.elems * reps,
                });
            }
            size += len;
            basic_count += c.basic_count * reps;
            lo = lo.min(disp);
            hi = hi.max(disp + len as isize);
        }
        if lo <= hi {
            (self.size, self.basic_count) = (size, basic_count);
            self.lb = self.lb.min(lo);
            self.ub = self.ub.max(hi);
            self.true_lb = self.true_lb.min(lo);
            self.true_ub = self.true_ub.max(hi);
            self.align = self.align.max(c.align);
            self.merge_basic(c.basic);
        }
    }

    /// `reps > 0` elements of any child from `disp` on, `child.extent` apart.
    fn add(&mut self, disp: isize, child: &Datatype, reps: usize) {
        self.align = self.align.max(child.align);
        let dense_run = match child.runs.as_slice() {
            [r] => r.offset == 0 && (r.count * r.elem.basic.size()) as isize == child.extent,
            _ => false,
        };
        if dense_run {
            let r = child.runs[0];
            push_run(&mut self.runs, disp, r.elem, r.count * reps);
        } else {
            for rep in 0..reps {
                let base = disp + rep as isize * child.extent;
                for r in &child.runs {
                    push_run(&mut self.runs, base + r.offset, r.elem, r.count);
                }
            }
        }
        let dense =
            child.blocks.len() == 1 && child.blocks[0].0 == 0 && child.blocks[0].1 as isize == child.extent;
        if dense {
            // Repetitions of a gap-free type form one block: O(1), not O(reps).
            push_block(&mut self.blocks, disp, child.blocks[0].1 * reps);
        } else {
            for r in 0..reps {
                let base = disp + r as isize * child.extent;
                for &(off, len) in &child.blocks {
                    push_block(&mut self.blocks, base + off, len);
                }
            }
        }
        self.size += child.size * reps;
        self.basic_count += child.basic_count * reps;
        if child.size > 0 || child.predefined {
            self.merge_basic(child.basic);
        }
        let first = disp;
        let last = disp + (reps as isize - 1) * child.extent;
        let (clb, cub) = (child.lb, child.lb + child.extent);
        if child.has_lb_marker {
            let m = first.min(last) + clb;
            self.lb_marker = Some(self.lb_marker.map_or(m, |x| x.min(m)));
        }
        if child.has_ub_marker {
            let m = first.max(last) + cub;
            self.ub_marker = Some(self.ub_marker.map_or(m, |x| x.max(m)));
        }
        self.lb = self.lb.min(first + clb).min(last + clb);
        self.ub = self.ub.max(first + cub).max(last + cub);
        if child.size > 0 {
            let (tlb, tub) = (child.true_lb, child.true_ub);
            self.true_lb = self.true_lb.min(first + tlb).min(last + tlb);
            self.true_ub = self.true_ub.max(first + tub).max(last + tub);
        }
    }

    fn finish(self, name: &'static str, combiner: i32) -> Datatype {
        let (mut lb, mut ub) = if self.lb == isize::MAX {
            (0, 0)
        } else {
            (self.lb, self.ub)
        };
        if let Some(m) = self.lb_marker {
            lb = m;
        }
        if let Some(m) = self.ub_marker {
            ub = m;
        }
        let (true_lb, true_ub) = if self.true_lb == isize::MAX {
            (0, 0)
        } else {
            (self.true_lb, self.true_ub)
        };
        Datatype {
            name: name.into(),
            size: self.size,
            lb,
            extent: ub - lb,
            true_lb,
            true_ub,
            blocks: self.blocks,
            basic: self.basic.flatten(),
            basic_count: self.basic_count,
            committed: false,
            predefined: false,
            has_lb_marker: self.lb_marker.is_some(),
            has_ub_marker: self.ub_marker.is_some(),
            combiner,
            align: self.align,
            runs: self.runs,
            contents: None,
        }
    }
}

/// `MPI_INT`, the type of the simulator's own small exchanges.
pub(crate) const MPI_INT: i32 = 7;
/// `MPI_BYTE`, the type of the simulator's own raw exchanges.
pub(crate) const MPI_BYTE: i32 = 4;

/// Number of predefined datatype handles (`mpi.h` values below this).
pub(crate) const PREDEFINED_COUNT: usize = 68;

/// The predefined types, indexed by their handle value in `mpi.h`.
pub(crate) fn predefined() -> Vec<Option<Datatype>> {
    use Basic::*;
    let table: &[(i32, &str, Basic)] = &[
        (1, "MPI_CHAR", I8),
        (2, "MPI_SIGNED_CHAR", I8),
        (3, "MPI_UNSIGNED_CHAR", U8),
        (4, "MPI_BYTE", Byte),
        (5, "MPI_SHORT", I16),
        (6, "MPI_UNSIGNED_SHORT", U16),
        (7, "MPI_INT", I32),
        (8, "MPI_UNSIGNED", U32),
        (9, "MPI_LONG", I64),
        (10, "MPI_UNSIGNED_LONG", U64),
        (11, "MPI_LONG_LONG_INT", I64),
        (12, "MPI_UNSIGNED_LONG_LONG", U64),
        (13, "MPI_FLOAT", F32),
        (14, "MPI_DOUBLE", F64),
        (15, "MPI_LONG_DOUBLE", F128),
        (16, "MPI_WCHAR", I32),
        (17, "MPI_C_BOOL", Bool),
        (18, "MPI_INT8_T", I8),
        (19, "MPI_INT16_T", I16),
        (20, "MPI_INT32_T", I32),
        (21, "MPI_INT64_T", I64),
        (22, "MPI_UINT8_T", U8),
        (23, "MPI_UINT16_T", U16),
        (24, "MPI_UINT32_T", U32),
        (25, "MPI_UINT64_T", U64),
        (26, "MPI_AINT", I64),
        (27, "MPI_OFFSET", I64),
        (28, "MPI_COUNT", I64),
        (29, "MPI_PACKED", Byte),
        (30, "MPI_FLOAT_INT", PairF32I32),
        (31, "MPI_DOUBLE_INT", PairF64I32),
        (32, "MPI_LONG_INT", PairI64I32),
        (33, "MPI_2INT", PairI32I32),
        (34, "MPI_SHORT_INT", PairI16I32),
        (35, "MPI_LONG_DOUBLE_INT", PairF128I32),
        // MPI_C_COMPLEX and MPI_C_FLOAT_COMPLEX are one handle; MPI allows either name.
        (36, "MPI_C_COMPLEX", C32),
        (37, "MPI_C_DOUBLE_COMPLEX", C64),
        (38, "MPI_C_LONG_DOUBLE_COMPLEX", C128),
        (44, "MPI_CXX_BOOL", Bool),
        (45, "MPI_CXX_FLOAT_COMPLEX", C32),
        (46, "MPI_CXX_DOUBLE_COMPLEX", C64),
        (47, "MPI_CXX_LONG_DOUBLE_COMPLEX", C128),
        (48, "MPI_REAL4", F32),
        (49, "MPI_REAL8", F64),
        (50, "MPI_REAL16", F128),
        (51, "MPI_COMPLEX8", C32),
        (52, "MPI_COMPLEX16", C64),
        (53, "MPI_COMPLEX32", C128),
        (54, "MPI_INTEGER1", I8),
        (55, "MPI_INTEGER2", I16),
        (56, "MPI_INTEGER4", I32),
        (57, "MPI_INTEGER8", I64),
        // Fortran's default kinds (gfortran: LOGICAL is a 4-byte integer, 1 for .TRUE.).
        (58, "MPI_INTEGER", I32),
        (59, "MPI_REAL", F32),
        (60, "MPI_DOUBLE_PRECISION", F64),
        (61, "MPI_LOGICAL", I32),
        (62, "MPI_CHARACTER", I8),
        (63, "MPI_COMPLEX", C32),
        (64, "MPI_DOUBLE_COMPLEX", C64),
        (65, "MPI_2INTEGER", PairI32I32),
    ];
    let mut v: Vec<Option<Datatype>> = vec![None; PREDEFINED_COUNT];
    for &(h, name, b) in table {
        let mut t = Datatype::basic(name, b);
        // external32 sizes that differ from the native ones (MPI-4.0 table 14.4).
        match h {
            9 | 10 | 32 => t.runs[0].elem.external = 4,
            16 => t.runs[0].elem.external = 2,
            _ => {}
        }
        v[h as usize] = Some(t);
    }
    v[39] = Some(Datatype::marker("MPI_UB", false));
    v[40] = Some(Datatype::marker("MPI_LB", true));
    let two = |name: &'static str, b: Basic| {
        let base = Datatype::basic(name, b);
        let mut t = Datatype::from_pieces(name, &[(0, &base, 2)], 0);
        t.predefined = true;
        t.committed = true;
        t
    };
    v[41] = Some(two("MPI_2FLOAT", F32));
    v[42] = Some(two("MPI_2DOUBLE", F64));
    v[43] = Some(two("MPI_2LONG", I64));
    v[66] = Some(two("MPI_2REAL", F32));
    v[67] = Some(two("MPI_2DOUBLE_PRECISION", F64));
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vector_type_map_and_pack_roundtrip() {
        let dbl = Datatype::basic("d", Basic::F64);
        // vector(count=3, blocklen=2, stride=4) of double
        let block = Datatype::from_pieces("blk", &[(0, &dbl, 2)], 2);
        let pieces: Vec<(isize, &Datatype, usize)> = (0..3).map(|i| (i * 4 * 8, &block, 1)).collect();
        let v = Datatype::from_pieces("vec", &pieces, 3);
        assert_eq!(v.size, 48);
        assert_eq!(v.extent, (2 * 4 + 2) * 8);
        assert_eq!(v.blocks, vec![(0, 16), (32, 16), (64, 16)]);
        assert_eq!(v.basic, Some(Basic::F64));
        let src: Vec<f64> = (0..10).map(|x| x as f64).collect();
        let mut packed = Vec::new();
        // Safety: test data, valid for the sizes and types used.
        unsafe { v.pack(src.as_ptr().cast(), 1, &mut packed) };
        let vals: Vec<f64> = packed
            .chunks(8)
            .map(|c| f64::from_ne_bytes(c.try_into().unwrap()))
            .collect();
        assert_eq!(vals, vec![0.0, 1.0, 4.0, 5.0, 8.0, 9.0]);
        let mut dst = vec![-1.0f64; 10];
        // Safety: test data, valid for the sizes and types used.
        unsafe { v.unpack(&packed, dst.as_mut_ptr().cast(), 1) };
        assert_eq!(dst[4], 4.0);
        assert_eq!(dst[2], -1.0);
    }

    /// vector(count, blocklen, stride) of doubles.
    fn dvector(count: isize, blocklen: usize, stride: isize) -> Datatype {
        let dbl = Datatype::basic("d", Basic::F64);
        let pieces: Vec<(isize, &Datatype, usize)> =
            (0..count).map(|i| (i * stride * 8, &dbl, blocklen)).collect();
        Datatype::from_pieces("vec", &pieces, 3)
    }

    #[test]
    fn strided_copies_match_pack_then_unpack() {
        // One block per element: 2 doubles in a 3-double extent, against plain doubles
        // (both directions, whole and truncated), and against an odd 2-block vector.
        let dbl = Datatype::basic("d", Basic::F64);
        let pair = Datatype::from_pieces("pair", &[(0, &dbl, 2)], 3).resized(0, 24);
        let odd = dvector(2, 1, 2);
        let src: Vec<f64> = (0..40).map(|x| x as f64).collect();
        for (from, scount, to, rcount) in [
            (&dbl, 10usize, &pair, 5usize),
            (&pair, 5, &dbl, 10),
            (&pair, 4, &odd, 4),
            (&odd, 4, &pair, 4),
        ] {
            let total = from.size * scount;
            for bytes in [total, total - 8, 8] {
                let mut direct = vec![-1.0f64; 40];
                let mut via_pack = vec![-1.0f64; 40];
                let mut packed = Vec::new();
                // Safety: test data, valid for the sizes and types used.
                unsafe {
                    from.copy_to(
                        src.as_ptr().cast(),
                        scount,
                        to,
                        direct.as_mut_ptr().cast(),
                        rcount,
                        bytes,
                    );
                    from.pack(src.as_ptr().cast(), scount, &mut packed);
                    to.unpack(&packed[..bytes], via_pack.as_mut_ptr().cast(), rcount);
                }
                assert_eq!(
                    direct, via_pack,
                    "{} x {scount} -> {} x {rcount}, {bytes} B",
                    from.name, to.name
                );
            }
        }
    }

    #[test]
    fn direct_copy_between_two_layouts_matches_pack_then_unpack() {
        // 3 blocks of 4 doubles, stride 5 -> 4 blocks of 3 doubles, stride 4; the
        // blocks do not line up, so copies split at both sides' boundaries.
        let (s, r) = (dvector(3, 4, 5), dvector(4, 3, 4));
        let src: Vec<f64> = (0..15).map(|x| x as f64).collect();
        let mut direct = vec![-1.0f64; 16];
        let mut via_pack = vec![-1.0f64; 16];
        // Only the first 10 doubles of the signature (a truncated receive).
        // Safety: test data, valid for the sizes and types used.
        unsafe { s.copy_to(src.as_ptr().cast(), 1, &r, direct.as_mut_ptr().cast(), 1, 80) };
        let mut packed = Vec::new();
        // Safety: test data, valid for the sizes and types used.
        unsafe { s.pack(src.as_ptr().cast(), 1, &mut packed) };
        // Safety: test data, valid for the sizes and types used.
        unsafe { r.unpack(&packed[..80], via_pack.as_mut_ptr().cast(), 1) };
        assert_eq!(direct, via_pack);
        assert_eq!(&direct[..4], &[0.0, 1.0, 2.0, -1.0]);
        assert_eq!(&direct[8..14], &[7.0, 8.0, 10.0, -1.0, 11.0, -1.0]);
    }

    #[test]
    fn direct_copy_moves_only_bytes_private_on_both_sides() {
        crate::host::folding::init("global", 1 << 20, "", 0, 0).unwrap();
        let page = 4096;
        // Three pages, the middle one folded, on each side.
        let src = crate::host::folding::alloc(3 * page, &[(page, 2 * page)], "t:1").unwrap();
        let dst = crate::host::folding::alloc(3 * page, &[(page, 2 * page)], "t:2").unwrap();
        // Safety: test data, valid for the sizes and types used.
        unsafe {
            std::ptr::write_bytes(src, 7, page);
            std::ptr::write_bytes(src.add(2 * page), 9, page);
            std::ptr::write_bytes(dst, 0, page);
            std::ptr::write_bytes(dst.add(2 * page), 0, page);
            // Shift by half a page: half of each private source page lands in folded memory.
            let half = page / 2;
            let bytes = Datatype::basic("b", Basic::U8);
            let body = Datatype::from_pieces("body", &[(0, &bytes, 3 * page - half)], 3);
            body.copy_to(src, 1, &body, dst.add(half), 1, 3 * page - half);
            assert_eq!(*dst.add(half), 7);
            assert_eq!(*dst.add(page - 1), 7);
            assert_eq!(
                *dst.add(2 * page + half),
                9,
                "private source and destination bytes arrive"
            );
            assert_eq!(
                *dst.add(2 * page + half - 1),
                0,
                "folded source bytes are not read"
            );
        }
        crate::host::folding::reset();
    }

    #[test]
    fn layout_covers_ordinary_memory_around_a_folded_allocation() {
        use crate::host::folding::{Bytes, Layout};
        crate::host::folding::init("global", 1 << 20, "", 0, 0).unwrap();
        let page = 4096;
        let a = crate::host::folding::alloc(4 * page, &[(page, 3 * page)], "t:3").unwrap();
        // From one page before the allocation to one page after it.
        // Safety: test data, valid for the sizes and types used.
        let l = Layout::of(unsafe { a.sub(page) }, 6 * page).unwrap();
        assert_eq!(
            l.runs_in(0, 6 * page).collect::<Vec<_>>(),
            vec![
                (0, 2 * page, Bytes::Data),
                (2 * page, 4 * page, Bytes::Garbage),
                (4 * page, 6 * page, Bytes::Data)
            ]
        );
        // Wholly inside the folded part: all garbage.
        // Safety: test data, valid for the sizes and types used.
        assert!(Layout::of(unsafe { a.add(page) }, 2 * page)
            .unwrap()
            .all_garbage());
        crate::host::folding::reset();
    }

    #[test]
    fn sparse_type_maps_classify_only_their_blocks() {
        use crate::host::folding::Bytes;
        crate::host::folding::init("global", 1 << 20, "", 0, 0).unwrap();
        let page = 4096;
        // Two folded allocations far apart, one private page at the start of each.
        let a = crate::host::folding::alloc(64 * page, &[(page, 64 * page)], "t:4").unwrap();
        let b = crate::host::folding::alloc(64 * page, &[(page, 64 * page)], "t:5").unwrap();
        let (lo, hi) = if a < b { (a, b) } else { (b, a) };
        let gap = hi as isize - lo as isize;
        let bytes = Datatype::basic("b", Basic::U8);
        // One page of each: the first page (private) and the second (folded) of `hi`.
        let t = Datatype::from_pieces("two", &[(0, &bytes, page), (gap, &bytes, 2 * page)], 3);
        let (at, l) = t.folded_layout(lo, 1).expect("touches folded memory");
        assert_eq!(at, 0);
        let g = gap as usize;
        assert_eq!(
            l.runs_in(0, page).collect::<Vec<_>>(),
            vec![(0, page, Bytes::Data)]
        );
        assert_eq!(
            l.runs_in(g, g + 2 * page).collect::<Vec<_>>(),
            vec![
                (g, g + page, Bytes::Data),
                (g + page, g + 2 * page, Bytes::Garbage)
            ]
        );
        crate::host::folding::reset();
    }

    #[test]
    fn elements_of_partial_and_pair_types() {
        let int = Datatype::basic("i", Basic::I32);
        let chr = Datatype::basic("c", Basic::I8);
        // struct { int; char[256] }, of which 4 + 16 bytes arrived: 1 + 16 elements.
        let s = Datatype::from_pieces("s", &[(0, &int, 1), (4, &chr, 256)], 8);
        assert_eq!(s.runs.len(), 2);
        assert_eq!(s.elements_in(20), 17);
        assert_eq!(s.elements_in(2 * 260 + 3), 2 * 257);
        assert_eq!(s.bytes_of_elements(2 * 257 + 17), 2 * 260 + 20);
        // A {double, int} pair is two basic elements.
        let di = Datatype::basic("di", Basic::PairF64I32);
        assert_eq!(di.elements_in(24), 4);
        assert_eq!(di.bytes_of_elements(3), 20);
        assert_eq!(di.align, 8);
        // A contiguous run of a contiguous type stays one run.
        let c = Datatype::from_pieces("c", &[(0, &int, 1000)], 2);
        assert_eq!(
            c.runs,
            vec![Run {
                offset: 0,
                elem: int.runs[0].elem,
                count: 1000
            }]
        );
    }

    /// The children the random structs below are made of: gap-free types
    /// (the fast path), and types with holes, pair types, markers, negative
    /// bounds and no data (the general step).
    fn child_pool() -> Vec<Datatype> {
        let dbl = Datatype::basic("d", Basic::F64);
        let int = Datatype::basic("i", Basic::I32);
        let chr = Datatype::basic("c", Basic::I8);
        let columns = Datatype::from_pieces("col", &[(0, &dbl, 3)], 2);
        let holes = Datatype::from_pieces("vec", &[(0, &int, 2), (12, &int, 1)], 3);
        let lb = Datatype::marker("MPI_LB", true);
        let ub = Datatype::marker("MPI_UB", false);
        let marked = Datatype::from_pieces("mk", &[(-8, &lb, 1), (0, &dbl, 1), (24, &ub, 1)], 8);
        let resized = dbl.resized(-4, 16);
        let empty = Datatype::from_pieces("empty", &[], 2);
        vec![
            dbl.clone(),
            int,
            chr,
            Datatype::basic("di", Basic::PairF64I32),
            Datatype::basic("si", Basic::PairI16I32),
            columns,
            holes,
            marked,
            resized,
            empty,
            lb,
            ub,
        ]
    }

    /// `count` elements of pieces `(disp, child, reps)` packed one block of
    /// one child at a time: the type map as MPI defines it, nothing merged.
    fn pack_piecewise(
        pieces: &[(isize, &Datatype, usize)],
        extent: isize,
        buf: *const u8,
        count: usize,
    ) -> Vec<u8> {
        let mut out = Vec::new();
        for i in 0..count as isize {
            for &(disp, child, reps) in pieces {
                for r in 0..reps as isize {
                    for &(off, len) in &child.blocks {
                        let at = i * extent + disp + r * child.extent + off;
                        // Safety: the test's buffer covers every displacement it draws.
                        out.extend_from_slice(unsafe { std::slice::from_raw_parts(buf.offset(at), len) });
                    }
                }
            }
        }
        out
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(3000))]

        /// Structs of random pieces (runs of one type, adjacent or not, empty
        /// ones): the grouped fast path builds exactly the type the general
        /// step builds, and packing it gives the bytes of its pieces one by one.
        #[test]
        fn fast_struct_build_is_the_general_one(
            spec in proptest::collection::vec((0usize..12, 0usize..4, 0isize..3, -64isize..64, 1usize..4), 0..24)
        ) {
            let pool = child_pool();
            let mut pieces: Vec<(isize, &Datatype, usize)> = Vec::new();
            let mut at = 0isize;
            for &(child, reps, how, jump, copies) in &spec {
                // Several consecutive pieces of one type, touching (how 0),
                // apart (1) or anywhere (2).
                for _ in 0..copies {
                    let c = &pool[child];
                    let disp = match how {
                        0 => at,
                        1 => at + jump.abs() + 1,
                        _ => jump * 4,
                    };
                    pieces.push((disp, c, reps));
                    at = disp + reps as isize * c.extent;
                }
            }
            let fast = Datatype::from_pieces("s", &pieces, 8);
            let general = Datatype::from_pieces_general("s", &pieces, 8);
            proptest::prop_assert_eq!(format!("{fast:?}"), format!("{general:?}"));
            // Every displacement drawn lies within ±16 KiB of the middle of the buffer.
            let src: Vec<u8> = (0..65536u32).map(|i| (i * 7 + i / 251) as u8).collect();
            let mid = src[32768..].as_ptr();
            for count in [1usize, 2] {
                if fast.extent.unsigned_abs() > 1024 {
                    continue;
                }
                let mut packed = Vec::new();
                // Safety: the buffer covers the type map of `count` elements.
                unsafe { fast.pack(mid, count, &mut packed) };
                proptest::prop_assert_eq!(packed.len(), fast.size * count);
                proptest::prop_assert_eq!(packed, pack_piecewise(&pieces, fast.extent, mid, count));
            }
        }
    }

    #[test]
    fn contiguous_is_one_block() {
        let int = Datatype::basic("i", Basic::I32);
        let c = Datatype::from_pieces("c", &[(0, &int, 5)], 2);
        assert!(c.is_contiguous());
        assert_eq!(c.size, 20);
    }
}
