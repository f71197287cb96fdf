//! Datatype services beyond the type map itself: the layout of distributed
//! arrays (MPI_Type_create_darray) and the portable "external32" data
//! representation (MPI_Pack_external and friends).

use crate::mpi::datatype::{Basic, Datatype, Elem};

pub(crate) const DISTRIBUTE_NONE: i32 = 0;
pub(crate) const DISTRIBUTE_BLOCK: i32 = 1;
pub(crate) const DISTRIBUTE_CYCLIC: i32 = 2;
pub(crate) const DISTRIBUTE_DFLT_DARG: i32 = -49767;
pub(crate) const ORDER_C: i32 = 0;
pub(crate) const ORDER_FORTRAN: i32 = 1;

/// One dimension of a distributed array, as given to MPI_Type_create_darray.
#[derive(Copy, Clone, Debug)]
pub(crate) struct DarrayDim {
    pub gsize: usize,
    pub distrib: i32,
    pub darg: i32,
    pub psize: usize,
}

/// The global indices of dimension `d` owned by the process at grid
/// coordinate `coord`, in increasing order.
fn owned_indices(d: &DarrayDim, coord: usize) -> Result<Vec<usize>, String> {
    let g = d.gsize;
    match d.distrib {
        DISTRIBUTE_NONE => Ok((0..g).collect()),
        DISTRIBUTE_BLOCK => {
            let block = if d.darg == DISTRIBUTE_DFLT_DARG {
                g.div_ceil(d.psize)
            } else if d.darg > 0 {
                d.darg as usize
            } else {
                return Err(format!("invalid block size {}", d.darg));
            };
            if block * d.psize < g {
                return Err(format!(
                    "block size {block} too small for {g} elements over {} processes",
                    d.psize
                ));
            }
            let start = (coord * block).min(g);
            let end = (start + block).min(g);
            Ok((start..end).collect())
        }
        DISTRIBUTE_CYCLIC => {
            let k = if d.darg == DISTRIBUTE_DFLT_DARG {
                1
            } else if d.darg > 0 {
                d.darg as usize
            } else {
                return Err(format!("invalid cyclic block size {}", d.darg));
            };
            let mut v = Vec::new();
            let mut first = coord * k;
            while first < g {
                v.extend(first..(first + k).min(g));
                first += k * d.psize;
            }
            Ok(v)
        }
        other => Err(format!("invalid distribution {other}")),
    }
}

/// The elements of the global array that process `rank` owns, as
/// `(first element index, number of consecutive elements)` runs in type-map
/// order (C order: the last dimension varies fastest; Fortran: the first).
/// Processes are laid out on the grid in row-major order whatever `order` is.
pub(crate) fn darray_runs(
    rank: usize,
    dims: &[DarrayDim],
    order: i32,
) -> Result<Vec<(usize, usize)>, String> {
    let nd = dims.len();
    if nd == 0 {
        return Ok(vec![]);
    }
    if order != ORDER_C && order != ORDER_FORTRAN {
        return Err(format!("invalid array order {order}"));
    }
    if dims.iter().any(|d| d.psize == 0) {
        return Err("process grid dimension of size 0".into());
    }
    // Row-major process coordinates.
    let mut coords = vec![0; nd];
    let mut r = rank;
    for i in (0..nd).rev() {
        coords[i] = r % dims[i].psize;
        r /= dims[i].psize;
    }
    let owned: Vec<Vec<usize>> = dims
        .iter()
        .zip(&coords)
        .map(|(d, &c)| owned_indices(d, c))
        .collect::<Result<_, _>>()?;
    // Dimensions from slowest to fastest varying, and each one's stride in elements.
    let dim_order: Vec<usize> = if order == ORDER_C {
        (0..nd).collect()
    } else {
        (0..nd).rev().collect()
    };
    let mut stride = vec![0usize; nd];
    let mut s = 1;
    for &i in dim_order.iter().rev() {
        stride[i] = s;
        s *= dims[i].gsize;
    }
    let fastest = dim_order[nd - 1];
    // Consecutive owned indices of the fastest dimension form one run.
    let mut row: Vec<(usize, usize)> = Vec::new();
    for &i in &owned[fastest] {
        match row.last_mut() {
            Some((start, len)) if *start + *len == i => *len += 1,
            _ => row.push((i, 1)),
        }
    }
    let outer = &dim_order[..nd - 1];
    if outer.iter().any(|&i| owned[i].is_empty()) || row.is_empty() {
        return Ok(vec![]);
    }
    let mut out = Vec::new();
    let mut pos = vec![0usize; outer.len()];
    loop {
        let base: usize = outer
            .iter()
            .zip(&pos)
            .map(|(&i, &p)| owned[i][p] * stride[i])
            .sum();
        out.extend(
            row.iter()
                .map(|&(start, len)| (base + start * stride[fastest], len)),
        );
        // Odometer over the outer dimensions, the last of them fastest.
        let mut k = outer.len();
        loop {
            if k == 0 {
                return Ok(out);
            }
            k -= 1;
            pos[k] += 1;
            if pos[k] < owned[outer[k]].len() {
                break;
            }
            pos[k] = 0;
        }
    }
}

/// Bytes of `count` elements of `dt` in external32.
pub(crate) fn external32_size(dt: &Datatype, count: usize) -> usize {
    dt.runs
        .iter()
        .map(|r| r.count * r.elem.external as usize)
        .sum::<usize>()
        * count
}

/// Packs `count` elements at `buf` into external32 (big-endian, fixed sizes).
///
/// # Safety
/// `buf` must be valid for the type map of `count` elements.
pub(crate) unsafe fn pack_external32(dt: &Datatype, buf: *const u8, count: usize, out: &mut Vec<u8>) {
    // Safety: the caller upholds this function's contract (see its `# Safety`).
    unsafe {
        out.reserve(external32_size(dt, count));
        for i in 0..count {
            let base = buf.offset(i as isize * dt.extent);
            for r in &dt.runs {
                let n = r.elem.basic.size();
                for j in 0..r.count {
                    let src = std::slice::from_raw_parts(base.offset(r.offset).add(j * n), n);
                    encode(r.elem, src, out);
                }
            }
        }
    }
}

/// Unpacks external32 data into `count` elements at `buf`; returns the bytes
/// consumed, or `None` when `data` is too short.
///
/// # Safety
/// `buf` must be valid for the type map of `count` elements.
pub(crate) unsafe fn unpack_external32(
    dt: &Datatype,
    data: &[u8],
    buf: *mut u8,
    count: usize,
) -> Option<usize> {
    // Safety: the caller upholds this function's contract (see its `# Safety`).
    unsafe {
        if data.len() < external32_size(dt, count) {
            return None;
        }
        let mut pos = 0;
        for i in 0..count {
            let base = buf.offset(i as isize * dt.extent);
            for r in &dt.runs {
                let n = r.elem.basic.size();
                let e = r.elem.external as usize;
                for j in 0..r.count {
                    let dst = std::slice::from_raw_parts_mut(base.offset(r.offset).add(j * n), n);
                    decode(r.elem, &data[pos..pos + e], dst);
                    pos += e;
                }
            }
        }
        Some(pos)
    }
}

fn is_signed(b: Basic) -> bool {
    matches!(b, Basic::I8 | Basic::I16 | Basic::I32 | Basic::I64)
}

/// Appends the external32 form of one native (little-endian) element.
fn encode(elem: Elem, src: &[u8], out: &mut Vec<u8>) {
    match elem.basic {
        Basic::F128 => out.extend_from_slice(&f80_to_quad(src)),
        Basic::C128 => {
            out.extend_from_slice(&f80_to_quad(&src[..16]));
            out.extend_from_slice(&f80_to_quad(&src[16..]));
        }
        // Each part of a complex number separately.
        Basic::C32 | Basic::C64 => {
            let half = src.len() / 2;
            out.extend(src[..half].iter().rev());
            out.extend(src[half..].iter().rev());
        }
        // Integers keep their low bytes when external32 is narrower.
        _ => out.extend(src[..elem.external as usize].iter().rev()),
    }
}

/// Writes one native element from its external32 form.
fn decode(elem: Elem, src: &[u8], dst: &mut [u8]) {
    match elem.basic {
        Basic::F128 => dst.copy_from_slice(&quad_to_f80(src)),
        Basic::C128 => {
            dst[..16].copy_from_slice(&quad_to_f80(&src[..16]));
            dst[16..].copy_from_slice(&quad_to_f80(&src[16..]));
        }
        Basic::C32 | Basic::C64 => {
            let half = src.len() / 2;
            for (d, s) in dst[..half].iter_mut().zip(src[..half].iter().rev()) {
                *d = *s;
            }
            for (d, s) in dst[half..].iter_mut().zip(src[half..].iter().rev()) {
                *d = *s;
            }
        }
        _ => {
            let e = src.len();
            for (d, s) in dst[..e].iter_mut().zip(src.iter().rev()) {
                *d = *s;
            }
            let negative = is_signed(elem.basic) && src.first().is_some_and(|b| b & 0x80 != 0);
            dst[e..].fill(if negative { 0xff } else { 0 });
        }
    }
}

/// x87 80-bit extended (16 bytes of storage, little-endian) to big-endian
/// IEEE binary128, exactly: same sign, exponent and bias; the 63 fraction bits
/// become the top of the 112-bit fraction.
fn f80_to_quad(src: &[u8]) -> [u8; 16] {
    let mant = u64::from_le_bytes(src[0..8].try_into().unwrap_or([0; 8]));
    let sign_exp = u16::from_le_bytes([src[8], src[9]]) as u128;
    let fraction = (mant & !(1u64 << 63)) as u128;
    ((sign_exp << 112) | (fraction << 49)).to_be_bytes()
}

/// Big-endian IEEE binary128 to x87 80-bit extended (padded to 16 bytes).
fn quad_to_f80(src: &[u8]) -> [u8; 16] {
    let q = u128::from_be_bytes(src[..16].try_into().unwrap_or([0; 16]));
    let sign_exp = (q >> 112) as u16;
    let fraction = ((q >> 49) as u64) & !(1u64 << 63);
    let integer_bit = if sign_exp & 0x7fff != 0 { 1u64 << 63 } else { 0 };
    let mut out = [0u8; 16];
    out[0..8].copy_from_slice(&(fraction | integer_bit).to_le_bytes());
    out[8..10].copy_from_slice(&sign_exp.to_le_bytes());
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mpi::datatype::predefined;

    fn dim(gsize: usize, distrib: i32, darg: i32, psize: usize) -> DarrayDim {
        DarrayDim {
            gsize,
            distrib,
            darg,
            psize,
        }
    }

    #[test]
    fn darray_cyclic_1d() {
        let d = [dim(12, DISTRIBUTE_CYCLIC, 1, 4)];
        assert_eq!(darray_runs(1, &d, ORDER_C).unwrap(), vec![(1, 1), (5, 1), (9, 1)]);
        let d = [dim(16, DISTRIBUTE_CYCLIC, 2, 4)];
        assert_eq!(darray_runs(3, &d, ORDER_C).unwrap(), vec![(6, 2), (14, 2)]);
    }

    #[test]
    fn darray_block_default_and_short_last_block() {
        let d = [dim(10, DISTRIBUTE_BLOCK, DISTRIBUTE_DFLT_DARG, 3)];
        assert_eq!(darray_runs(0, &d, ORDER_C).unwrap(), vec![(0, 4)]);
        assert_eq!(darray_runs(2, &d, ORDER_C).unwrap(), vec![(8, 2)]);
        assert!(darray_runs(0, &[dim(10, DISTRIBUTE_BLOCK, 2, 3)], ORDER_C).is_err());
    }

    #[test]
    fn darray_2d_c_and_fortran_order() {
        // 4x6 array, 2x2 process grid, block rows x cyclic columns; rank 1 = grid (0, 1).
        let d = [
            dim(4, DISTRIBUTE_BLOCK, DISTRIBUTE_DFLT_DARG, 2),
            dim(6, DISTRIBUTE_CYCLIC, DISTRIBUTE_DFLT_DARG, 2),
        ];
        // C order: rows 0..2, columns 1, 3, 5; row-major offsets.
        assert_eq!(
            darray_runs(1, &d, ORDER_C).unwrap(),
            vec![(1, 1), (3, 1), (5, 1), (7, 1), (9, 1), (11, 1)]
        );
        // Fortran order: column-major offsets (i + 4 j), first dimension fastest.
        assert_eq!(
            darray_runs(1, &d, ORDER_FORTRAN).unwrap(),
            vec![(4, 2), (12, 2), (20, 2)]
        );
        // DISTRIBUTE_NONE keeps the whole dimension.
        let d = [dim(3, DISTRIBUTE_NONE, 0, 1), dim(4, DISTRIBUTE_BLOCK, 2, 2)];
        assert_eq!(
            darray_runs(1, &d, ORDER_C).unwrap(),
            vec![(2, 2), (6, 2), (10, 2)]
        );
    }

    #[test]
    fn external32_ints_longs_and_floats() {
        let types = predefined();
        let int = types[7].as_ref().unwrap();
        let long = types[9].as_ref().unwrap();
        let float = types[13].as_ref().unwrap();
        let data = [1i32, -2];
        let mut out = Vec::new();
        // Safety: test data, valid for the sizes and types used.
        unsafe { pack_external32(int, data.as_ptr().cast(), 2, &mut out) };
        assert_eq!(out, [0, 0, 0, 1, 0xff, 0xff, 0xff, 0xfe]);
        let longs = [1i64, -2];
        let mut out = Vec::new();
        // Safety: test data, valid for the sizes and types used.
        unsafe { pack_external32(long, longs.as_ptr().cast(), 2, &mut out) };
        assert_eq!(out, [0, 0, 0, 1, 0xff, 0xff, 0xff, 0xfe]);
        assert_eq!(external32_size(long, 2), 8);
        let mut back = [0i64; 2];
        // Safety: test data, valid for the sizes and types used.
        let used = unsafe { unpack_external32(long, &out, back.as_mut_ptr().cast(), 2) };
        assert_eq!((used, back), (Some(8), [1, -2]));
        let floats = [1.0f32, 2.0];
        let mut out = Vec::new();
        // Safety: test data, valid for the sizes and types used.
        unsafe { pack_external32(float, floats.as_ptr().cast(), 2, &mut out) };
        assert_eq!(out, [0x3f, 0x80, 0, 0, 0x40, 0, 0, 0]);
    }

    #[test]
    fn external32_long_double_is_binary128() {
        let one = [0u8, 0, 0, 0, 0, 0, 0, 0x80, 0xff, 0x3f, 0, 0, 0, 0, 0, 0];
        let q = f80_to_quad(&one);
        assert_eq!(q[..2], [0x3f, 0xff]);
        assert!(q[2..].iter().all(|&b| b == 0));
        assert_eq!(quad_to_f80(&q), one);
    }

    #[test]
    fn external32_pair_type_has_no_padding() {
        let types = predefined();
        let double_int = types[31].as_ref().unwrap();
        assert_eq!(external32_size(double_int, 1), 12);
        #[repr(C)]
        struct Di {
            v: f64,
            i: i32,
        }
        let src = [Di { v: 2.0, i: 7 }];
        let mut out = Vec::new();
        // Safety: test data, valid for the sizes and types used.
        unsafe { pack_external32(double_int, src.as_ptr().cast(), 1, &mut out) };
        assert_eq!(out[..8], 2.0f64.to_be_bytes());
        assert_eq!(out[8..], 7i32.to_be_bytes());
    }
}
