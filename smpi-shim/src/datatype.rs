//! MPI datatypes as flattened type maps.
//!
//! A datatype is kept as the list of `(byte offset, byte length)` blocks of one
//! element, in type-map order, plus its size, lower bound and extent. Sending
//! `count` elements of a non-contiguous type packs the blocks of element `i` at
//! `buf + i·extent`; receiving unpacks the same way. Adjacent blocks are merged
//! when they touch, so a contiguous type is one block.

/// Basic element types, for reductions.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Basic {
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
    /// Storage size in bytes (pair types include padding as C lays them out).
    pub fn size(self) -> usize {
        match self {
            Basic::I8 | Basic::U8 | Basic::Bool | Basic::Byte => 1,
            Basic::I16 | Basic::U16 => 2,
            Basic::I32 | Basic::U32 | Basic::F32 => 4,
            Basic::I64 | Basic::U64 | Basic::F64 | Basic::C32 => 8,
            Basic::F128 | Basic::C64 => 16,
            Basic::PairF32I32 | Basic::PairI32I32 => 8,
            Basic::PairF64I32 | Basic::PairI64I32 => 16,
            Basic::PairI16I32 => 8,
            Basic::PairF128I32 => 32,
        }
    }
}

/// One datatype.
#[derive(Clone, Debug)]
pub struct Datatype {
    pub name: String,
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
}

impl Datatype {
    /// A predefined type of `size` bytes.
    pub fn basic(name: &str, basic: Basic) -> Self {
        let size = basic.size();
        // Pair types may have data holes (e.g. double+int = 12 bytes of data in 16).
        let (blocks, data) = match basic {
            Basic::PairF64I32 | Basic::PairI64I32 => (vec![(0, 12)], 12),
            Basic::PairI16I32 => (vec![(0, 2), (4, 4)], 6),
            Basic::PairF128I32 => (vec![(0, 20)], 20),
            _ => (vec![(0, size)], size),
        };
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
        }
    }

    /// A zero-size marker type (MPI_LB / MPI_UB).
    pub fn marker(name: &str, is_lb: bool) -> Self {
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
        }
    }

    /// Whether `count` elements occupy one contiguous range starting at the buffer.
    pub fn is_contiguous(&self) -> bool {
        self.blocks.len() == 1 && self.blocks[0].0 == 0 && self.blocks[0].1 as isize == self.extent
            || self.size == 0
    }

    /// Builds a type from `(displacement, child, repetitions)` pieces (the
    /// general constructor behind contiguous/vector/indexed/struct).
    pub fn from_pieces(name: &str, pieces: &[(isize, &Datatype, usize)], combiner: i32) -> Self {
        let mut blocks: Vec<(isize, usize)> = Vec::new();
        let mut size = 0;
        let mut basic: Option<Option<Basic>> = None;
        let mut basic_count = 0;
        let mut lb = isize::MAX;
        let mut ub = isize::MIN;
        let mut true_lb = isize::MAX;
        let mut true_ub = isize::MIN;
        let mut lb_marker: Option<isize> = None;
        let mut ub_marker: Option<isize> = None;
        for &(disp, child, reps) in pieces {
            if reps == 0 {
                continue;
            }
            let dense = child.blocks.len() == 1
                && child.blocks[0].0 == 0
                && child.blocks[0].1 as isize == child.extent;
            if dense {
                // Repetitions of a gap-free type form one block: O(1), not O(reps).
                push_block(&mut blocks, disp, child.blocks[0].1 * reps);
            } else {
                for r in 0..reps {
                    let base = disp + r as isize * child.extent;
                    for &(off, len) in &child.blocks {
                        push_block(&mut blocks, base + off, len);
                    }
                }
            }
            size += child.size * reps;
            basic_count += child.basic_count * reps;
            if child.size > 0 || child.predefined {
                basic = Some(match basic {
                    None => child.basic,
                    Some(b) if b == child.basic => b,
                    Some(_) => None,
                });
            }
            let first = disp;
            let last = disp + (reps as isize - 1) * child.extent;
            let (clb, cub) = (child.lb, child.lb + child.extent);
            if child.has_lb_marker {
                let m = first.min(last) + clb;
                lb_marker = Some(lb_marker.map_or(m, |x| x.min(m)));
            }
            if child.has_ub_marker {
                let m = first.max(last) + cub;
                ub_marker = Some(ub_marker.map_or(m, |x| x.max(m)));
            }
            lb = lb.min(first + clb).min(last + clb);
            ub = ub.max(first + cub).max(last + cub);
            if child.size > 0 {
                let (tlb, tub) = (child.true_lb, child.true_ub);
                true_lb = true_lb.min(first + tlb).min(last + tlb);
                true_ub = true_ub.max(first + tub).max(last + tub);
            }
        }
        if lb == isize::MAX {
            lb = 0;
            ub = 0;
        }
        if let Some(m) = lb_marker {
            lb = m;
        }
        if let Some(m) = ub_marker {
            ub = m;
        }
        if true_lb == isize::MAX {
            true_lb = 0;
            true_ub = 0;
        }
        Datatype {
            name: name.into(),
            size,
            lb,
            extent: ub - lb,
            true_lb,
            true_ub,
            blocks,
            basic: basic.flatten(),
            basic_count,
            committed: false,
            predefined: false,
            has_lb_marker: lb_marker.is_some(),
            has_ub_marker: ub_marker.is_some(),
            combiner,
        }
    }

    /// Same data, new lower bound and extent.
    pub fn resized(&self, lb: isize, extent: isize) -> Self {
        let mut t = self.clone();
        t.lb = lb;
        t.extent = extent;
        t.predefined = false;
        t.committed = false;
        t.has_lb_marker = true;
        t.has_ub_marker = true;
        t.combiner = 10;
        t
    }

    /// Copies `count` elements laid out at `buf` into a contiguous byte vector.
    ///
    /// # Safety
    /// `buf` must be valid for the type map of `count` elements.
    pub unsafe fn pack(&self, buf: *const u8, count: usize, out: &mut Vec<u8>) {
        out.reserve(self.size * count);
        for i in 0..count {
            let base = buf.offset(i as isize * self.extent);
            for &(off, len) in &self.blocks {
                out.extend_from_slice(std::slice::from_raw_parts(base.offset(off), len));
            }
        }
    }

    /// The private byte ranges (relative to the start of the type map) of
    /// `count` elements at `buf` when they touch folded memory (see
    /// `crate::shared`); `None` when everything is ordinary memory.
    fn folded_layout(&self, buf: *const u8, count: usize) -> Option<(isize, Vec<(usize, usize)>)> {
        if count == 0 || self.size == 0 || !crate::shared::any() {
            return None;
        }
        let lo = self.true_lb;
        let span = (count as isize - 1) * self.extent + (self.true_ub - self.true_lb);
        if span <= 0 {
            return None;
        }
        crate::shared::private_ranges(buf.wrapping_offset(lo), span as usize).map(|r| (lo, r))
    }

    /// Whether `count` elements at `buf` lie entirely in folded memory.
    ///
    /// # Safety
    /// `buf` must be valid for the type map of `count` elements.
    pub unsafe fn is_all_folded(&self, buf: *const u8, count: usize) -> bool {
        self.folded_layout(buf, count)
            .is_some_and(|(_, private)| private.is_empty())
    }

    /// Like [`Datatype::pack`], but reads folded memory only where it is
    /// private: folded parts come out as zeros, uncopied.
    ///
    /// # Safety
    /// `buf` must be valid for the type map of `count` elements.
    pub unsafe fn pack_folded(&self, buf: *const u8, count: usize, out: &mut Vec<u8>) {
        let Some((lo, private)) = self.folded_layout(buf, count) else {
            return self.pack(buf, count, out);
        };
        let start = out.len();
        out.resize(start + self.size * count, 0);
        if private.is_empty() {
            return;
        }
        let mut pos = start;
        for i in 0..count {
            for &(off, len) in &self.blocks {
                let rel = (i as isize * self.extent + off - lo) as usize;
                for (a, b) in overlap(&private, rel, rel + len) {
                    let src = buf.offset(lo).add(a);
                    std::ptr::copy_nonoverlapping(src, out.as_mut_ptr().add(pos + a - rel), b - a);
                }
                pos += len;
            }
        }
    }

    /// Like [`Datatype::unpack`], but writes folded memory only where it is private.
    ///
    /// # Safety
    /// `buf` must be valid for the type map of `count` elements.
    pub unsafe fn unpack_folded(&self, data: &[u8], buf: *mut u8, count: usize) -> usize {
        let Some((lo, private)) = self.folded_layout(buf, count) else {
            return self.unpack(data, buf, count);
        };
        let mut pos = 0;
        'outer: for i in 0..count {
            for &(off, len) in &self.blocks {
                if pos >= data.len() {
                    break 'outer;
                }
                let n = len.min(data.len() - pos);
                let rel = (i as isize * self.extent + off - lo) as usize;
                for (a, b) in overlap(&private, rel, rel + n) {
                    std::ptr::copy_nonoverlapping(
                        data.as_ptr().add(pos + a - rel),
                        buf.offset(lo).add(a),
                        b - a,
                    );
                }
                pos += n;
            }
        }
        pos
    }

    /// Scatters bytes from `data` into `count` elements at `buf`; stops when
    /// `data` is exhausted. Returns the bytes consumed.
    ///
    /// # Safety
    /// `buf` must be valid for the type map of `count` elements.
    pub unsafe fn unpack(&self, data: &[u8], buf: *mut u8, count: usize) -> usize {
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

/// The parts of `[a, b)` inside the sorted, disjoint `ranges`.
fn overlap(ranges: &[(usize, usize)], a: usize, b: usize) -> impl Iterator<Item = (usize, usize)> + '_ {
    let first = ranges.partition_point(|r| r.1 <= a);
    ranges[first..]
        .iter()
        .take_while(move |r| r.0 < b)
        .map(move |r| (r.0.max(a), r.1.min(b)))
}

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

/// The predefined types, indexed by their handle value in `mpi.h`.
pub fn predefined() -> Vec<Option<Datatype>> {
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
        (36, "MPI_C_FLOAT_COMPLEX", C32),
        (37, "MPI_C_DOUBLE_COMPLEX", C64),
        (38, "MPI_C_LONG_DOUBLE_COMPLEX", Byte),
    ];
    let mut v: Vec<Option<Datatype>> = vec![None; 44];
    for &(h, name, b) in table {
        let mut t = Datatype::basic(name, b);
        if h == 38 {
            t.size = 32;
            t.extent = 32;
            t.true_ub = 32;
            t.blocks = vec![(0, 32)];
            t.basic = None;
        }
        v[h as usize] = Some(t);
    }
    v[39] = Some(Datatype::marker("MPI_UB", false));
    v[40] = Some(Datatype::marker("MPI_LB", true));
    let two = |name: &str, b: Basic| {
        let base = Datatype::basic(name, b);
        let mut t = Datatype::from_pieces(name, &[(0, &base, 2)], 0);
        t.predefined = true;
        t.committed = true;
        t
    };
    v[41] = Some(two("MPI_2FLOAT", F32));
    v[42] = Some(two("MPI_2DOUBLE", F64));
    v[43] = Some(two("MPI_2LONG", I64));
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
        unsafe { v.pack(src.as_ptr().cast(), 1, &mut packed) };
        let vals: Vec<f64> = packed
            .chunks(8)
            .map(|c| f64::from_ne_bytes(c.try_into().unwrap()))
            .collect();
        assert_eq!(vals, vec![0.0, 1.0, 4.0, 5.0, 8.0, 9.0]);
        let mut dst = vec![-1.0f64; 10];
        unsafe { v.unpack(&packed, dst.as_mut_ptr().cast(), 1) };
        assert_eq!(dst[4], 4.0);
        assert_eq!(dst[2], -1.0);
    }

    #[test]
    fn contiguous_is_one_block() {
        let int = Datatype::basic("i", Basic::I32);
        let c = Datatype::from_pieces("c", &[(0, &int, 5)], 2);
        assert!(c.is_contiguous());
        assert_eq!(c.size, 20);
    }
}
