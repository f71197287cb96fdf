//! Reduction operations: the predefined MPI ops on every basic type, and user ops.

use crate::mpi::datatype::Basic;

/// A reduction operation.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Op {
    Max,
    Min,
    Sum,
    Prod,
    Land,
    Band,
    Lor,
    Bor,
    Lxor,
    Bxor,
    MinLoc,
    MaxLoc,
    Replace,
    Noop,
    /// A user function `f(invec, inoutvec, len, datatype)`.
    User {
        func: UserFn,
        commutative: bool,
    },
}

/// `MPI_User_function`.
pub(crate) type UserFn = unsafe extern "C" fn(*mut u8, *mut u8, *mut i32, *mut i32);

impl Op {
    /// The op of a predefined handle (`mpi.h` values 1..=14).
    pub(crate) fn predefined(handle: i32) -> Option<Op> {
        Some(match handle {
            1 => Op::Max,
            2 => Op::Min,
            3 => Op::Sum,
            4 => Op::Prod,
            5 => Op::Land,
            6 => Op::Band,
            7 => Op::Lor,
            8 => Op::Bor,
            9 => Op::Lxor,
            10 => Op::Bxor,
            11 => Op::MinLoc,
            12 => Op::MaxLoc,
            13 => Op::Replace,
            14 => Op::Noop,
            _ => return None,
        })
    }

    pub(crate) fn is_commutative(&self) -> bool {
        match self {
            Op::User { commutative, .. } => *commutative,
            _ => true,
        }
    }
}

/// Why a reduction could not be applied.
#[derive(Debug)]
pub(crate) struct OpTypeError;

macro_rules! arith {
    ($t:ty, $op:expr, $inv:expr, $io:expr, $n:expr) => {{
        let a = $inv as *const $t;
        let b = $io as *mut $t;
        for i in 0..$n {
            let x = std::ptr::read_unaligned(a.add(i));
            let y = std::ptr::read_unaligned(b.add(i));
            std::ptr::write_unaligned(b.add(i), $op(x, y));
        }
    }};
}

macro_rules! int_ops {
    ($t:ty, $op:expr, $inv:expr, $io:expr, $n:expr) => {{
        match $op {
            Op::Max => arith!($t, |x: $t, y: $t| if x > y { x } else { y }, $inv, $io, $n),
            Op::Min => arith!($t, |x: $t, y: $t| if x < y { x } else { y }, $inv, $io, $n),
            Op::Sum => arith!($t, |x: $t, y: $t| y.wrapping_add(x), $inv, $io, $n),
            Op::Prod => arith!($t, |x: $t, y: $t| y.wrapping_mul(x), $inv, $io, $n),
            Op::Land => arith!($t, |x: $t, y: $t| ((x != 0) && (y != 0)) as $t, $inv, $io, $n),
            Op::Lor => arith!($t, |x: $t, y: $t| ((x != 0) || (y != 0)) as $t, $inv, $io, $n),
            Op::Lxor => arith!($t, |x: $t, y: $t| ((x != 0) != (y != 0)) as $t, $inv, $io, $n),
            Op::Band => arith!($t, |x: $t, y: $t| x & y, $inv, $io, $n),
            Op::Bor => arith!($t, |x: $t, y: $t| x | y, $inv, $io, $n),
            Op::Bxor => arith!($t, |x: $t, y: $t| x ^ y, $inv, $io, $n),
            _ => return Err(OpTypeError),
        }
    }};
}

macro_rules! float_ops {
    ($t:ty, $op:expr, $inv:expr, $io:expr, $n:expr) => {{
        match $op {
            Op::Max => arith!($t, |x: $t, y: $t| if x > y { x } else { y }, $inv, $io, $n),
            Op::Min => arith!($t, |x: $t, y: $t| if x < y { x } else { y }, $inv, $io, $n),
            Op::Sum => arith!($t, |x: $t, y: $t| y + x, $inv, $io, $n),
            Op::Prod => arith!($t, |x: $t, y: $t| y * x, $inv, $io, $n),
            Op::Land => arith!(
                $t,
                |x: $t, y: $t| ((x != 0.0) && (y != 0.0)) as i32 as $t,
                $inv,
                $io,
                $n
            ),
            Op::Lor => arith!(
                $t,
                |x: $t, y: $t| ((x != 0.0) || (y != 0.0)) as i32 as $t,
                $inv,
                $io,
                $n
            ),
            Op::Lxor => arith!(
                $t,
                |x: $t, y: $t| ((x != 0.0) != (y != 0.0)) as i32 as $t,
                $inv,
                $io,
                $n
            ),
            _ => return Err(OpTypeError),
        }
    }};
}

macro_rules! loc_ops {
    ($t:ty, $stride:expr, $op:expr, $inv:expr, $io:expr, $n:expr) => {{
        let want_max = match $op {
            Op::MaxLoc => true,
            Op::MinLoc => false,
            _ => return Err(OpTypeError),
        };
        for i in 0..$n {
            let pa = ($inv as *const u8).add(i * $stride);
            let pb = ($io as *mut u8).add(i * $stride);
            let va = std::ptr::read_unaligned(pa as *const $t);
            let vb = std::ptr::read_unaligned(pb as *const $t);
            let ia = std::ptr::read_unaligned(pa.add(std::mem::size_of::<$t>().max(4)) as *const i32);
            let ib = std::ptr::read_unaligned(pb.add(std::mem::size_of::<$t>().max(4)) as *const i32);
            let take_a = loc_takes_in(va, ia, vb, ib, want_max);
            if take_a {
                std::ptr::write_unaligned(pb as *mut $t, va);
                std::ptr::write_unaligned(pb.add(std::mem::size_of::<$t>().max(4)) as *mut i32, ia);
            }
        }
    }};
}

/// `inout[i] = in[i] op inout[i]` for `n` basic elements.
///
/// # Safety
/// Both pointers must be valid for `n` elements of `basic`.
pub(crate) unsafe fn apply(
    op: Op,
    basic: Basic,
    inv: *const u8,
    inout: *mut u8,
    n: usize,
) -> Result<(), OpTypeError> {
    // Safety: the caller upholds this function's contract (see its `# Safety`).
    unsafe {
        use Basic::*;
        if matches!(op, Op::Replace) {
            std::ptr::copy(inv, inout, n * basic.size());
            return Ok(());
        }
        if matches!(op, Op::Noop) {
            return Ok(());
        }
        match basic {
            I8 => int_ops!(i8, op, inv, inout, n),
            U8 | Byte => int_ops!(u8, op, inv, inout, n),
            Bool => int_ops!(u8, op, inv, inout, n),
            I16 => int_ops!(i16, op, inv, inout, n),
            U16 => int_ops!(u16, op, inv, inout, n),
            I32 => int_ops!(i32, op, inv, inout, n),
            U32 => int_ops!(u32, op, inv, inout, n),
            I64 => int_ops!(i64, op, inv, inout, n),
            U64 => int_ops!(u64, op, inv, inout, n),
            F32 => float_ops!(f32, op, inv, inout, n),
            F64 => float_ops!(f64, op, inv, inout, n),
            F128 => {
                // long double: reduced through f64 (80-bit precision is not kept).
                return long_double(op, inv, inout, n);
            }
            C32 | C64 => {
                let (w, two) = if basic == C32 { (4, 2 * n) } else { (8, 2 * n) };
                match op {
                    Op::Sum => {
                        if w == 4 {
                            arith!(f32, |x: f32, y: f32| y + x, inv, inout, two)
                        } else {
                            arith!(f64, |x: f64, y: f64| y + x, inv, inout, two)
                        }
                    }
                    Op::Prod => {
                        for i in 0..n {
                            if w == 4 {
                                let a = inv as *const f32;
                                let b = inout as *mut f32;
                                let (ar, ai) = (*a.add(2 * i), *a.add(2 * i + 1));
                                let (br, bi) = (*b.add(2 * i), *b.add(2 * i + 1));
                                *b.add(2 * i) = ar * br - ai * bi;
                                *b.add(2 * i + 1) = ar * bi + ai * br;
                            } else {
                                let a = inv as *const f64;
                                let b = inout as *mut f64;
                                let (ar, ai) = (*a.add(2 * i), *a.add(2 * i + 1));
                                let (br, bi) = (*b.add(2 * i), *b.add(2 * i + 1));
                                *b.add(2 * i) = ar * br - ai * bi;
                                *b.add(2 * i + 1) = ar * bi + ai * br;
                            }
                        }
                    }
                    _ => return Err(OpTypeError),
                }
            }
            PairF32I32 => loc_ops!(f32, 8, op, inv, inout, n),
            PairF64I32 => loc_ops!(f64, 16, op, inv, inout, n),
            PairI64I32 => loc_ops!(i64, 16, op, inv, inout, n),
            PairI32I32 => loc_ops!(i32, 8, op, inv, inout, n),
            PairI16I32 => loc_ops!(i16, 8, op, inv, inout, n),
            PairF128I32 => return long_double_loc(op, inv, inout, n),
            C128 => return Err(OpTypeError),
        }
        Ok(())
    }
}

/// MINLOC/MAXLOC on `{long double; int}` pairs (32 bytes, index at 16),
/// comparing the 80-bit values exactly.
unsafe fn long_double_loc(op: Op, inv: *const u8, inout: *mut u8, n: usize) -> Result<(), OpTypeError> {
    // Safety: the caller upholds this function's contract (see its `# Safety`).
    unsafe {
        let want_max = match op {
            Op::MaxLoc => true,
            Op::MinLoc => false,
            _ => return Err(OpTypeError),
        };
        for i in 0..n {
            let pa = inv.add(32 * i);
            let pb = inout.add(32 * i);
            let va = f80_order_key(std::slice::from_raw_parts(pa, 10));
            let vb = f80_order_key(std::slice::from_raw_parts(pb, 10));
            let ia = std::ptr::read_unaligned(pa.add(16) as *const i32);
            let ib = std::ptr::read_unaligned(pb.add(16) as *const i32);
            let take_a = loc_takes_in(va, ia, vb, ib, want_max);
            if take_a {
                std::ptr::copy_nonoverlapping(pa, pb, 10);
                std::ptr::write_unaligned(pb.add(16) as *mut i32, ia);
            }
        }
        Ok(())
    }
}

/// A key that orders x87 extended values like the numbers they hold (NaNs aside).
fn f80_order_key(b: &[u8]) -> i128 {
    let mant = u64::from_le_bytes(b[0..8].try_into().unwrap_or([0; 8]));
    let se = u16::from_le_bytes([b[8], b[9]]);
    let magnitude = (((se & 0x7fff) as i128) << 64) | mant as i128;
    if se & 0x8000 != 0 {
        -magnitude
    } else {
        magnitude
    }
}

unsafe fn long_double(op: Op, inv: *const u8, inout: *mut u8, n: usize) -> Result<(), OpTypeError> {
    // Safety: the caller upholds this function's contract (see its `# Safety`).
    unsafe {
        // x87 80-bit extended: decode to f64, operate, encode back.
        for i in 0..n {
            let a = f80_to_f64(std::slice::from_raw_parts(inv.add(16 * i), 10));
            let b = f80_to_f64(std::slice::from_raw_parts(inout.add(16 * i), 10));
            let r = match op {
                Op::Sum => a + b,
                Op::Prod => a * b,
                Op::Max => a.max(b),
                Op::Min => a.min(b),
                _ => return Err(OpTypeError),
            };
            let bytes = f64_to_f80(r);
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), inout.add(16 * i), 10);
        }
        Ok(())
    }
}

fn f80_to_f64(b: &[u8]) -> f64 {
    let mant = u64::from_le_bytes(b[0..8].try_into().unwrap_or([0; 8]));
    let se = u16::from_le_bytes([b[8], b[9]]);
    let sign = if se & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exp = (se & 0x7fff) as i32;
    if exp == 0 && mant == 0 {
        return 0.0 * sign;
    }
    sign * (mant as f64 / (1u64 << 63) as f64) * 2f64.powi(exp - 16383)
}

fn f64_to_f80(x: f64) -> [u8; 10] {
    let mut out = [0u8; 10];
    if x == 0.0 {
        if x.is_sign_negative() {
            out[9] = 0x80;
        }
        return out;
    }
    let bits = x.to_bits();
    let sign = (bits >> 63) as u16;
    let exp = ((bits >> 52) & 0x7ff) as i32;
    let frac = bits & ((1u64 << 52) - 1);
    let (e80, mant) = if exp == 0 {
        // subnormal double: normalise
        let shift = frac.leading_zeros() - 11;
        (1 - 1023 + 16383 - shift as i32, (frac << (shift + 11)))
    } else {
        (exp - 1023 + 16383, (1u64 << 63) | (frac << 11))
    };
    out[0..8].copy_from_slice(&mant.to_le_bytes());
    let se = (sign << 15) | (e80 as u16 & 0x7fff);
    out[8..10].copy_from_slice(&se.to_le_bytes());
    out
}

/// Whether MINLOC / MAXLOC keeps the incoming pair `(va, ia)` over
/// `(vb, ib)`: its value is better, or equal with a lower index.
fn loc_takes_in<T: PartialOrd>(va: T, ia: i32, vb: T, ib: i32, want_max: bool) -> bool {
    if va == vb {
        ia < ib
    } else if want_max {
        va > vb
    } else {
        va < vb
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `b = a op b` on `count` elements of `basic`, the layout of `a` and `b`.
    fn reduce<T>(op: Op, basic: Basic, count: usize, a: &T, b: &mut T) {
        // Safety: `a` and `b` each hold `count` elements of `basic` (the test's data).
        unsafe { apply(op, basic, (a as *const T).cast(), (b as *mut T).cast(), count).unwrap() };
    }

    #[test]
    fn sum_and_maxloc() {
        let a = [1.0f64, 2.0, 3.0];
        let mut b = [10.0f64, 20.0, 30.0];
        reduce(Op::Sum, Basic::F64, 3, &a, &mut b);
        assert_eq!(b, [11.0, 22.0, 33.0]);
        #[repr(C)]
        struct DI {
            v: f64,
            i: i32,
        }
        let mut b = DI { v: 5.0, i: 0 };
        reduce(Op::MaxLoc, Basic::PairF64I32, 1, &DI { v: 5.0, i: 1 }, &mut b);
        assert_eq!((b.v, b.i), (5.0, 0));
        reduce(Op::MaxLoc, Basic::PairF64I32, 1, &DI { v: 7.0, i: 3 }, &mut b);
        assert_eq!((b.v, b.i), (7.0, 3));
    }

    #[test]
    fn long_double_minloc() {
        let pair = |x: f64, i: i32| {
            let mut b = [0u8; 32];
            b[..10].copy_from_slice(&f64_to_f80(x));
            b[16..20].copy_from_slice(&i.to_le_bytes());
            b
        };
        let mut b = pair(2.0, 1);
        reduce(Op::MinLoc, Basic::PairF128I32, 1, &pair(-3.0, 5), &mut b);
        assert_eq!(b, pair(-3.0, 5));
        reduce(Op::MinLoc, Basic::PairF128I32, 1, &pair(-3.0, 2), &mut b);
        assert_eq!(b, pair(-3.0, 2));
        reduce(Op::MaxLoc, Basic::PairF128I32, 1, &pair(7.5, 9), &mut b);
        assert_eq!(b, pair(7.5, 9));
    }

    #[test]
    fn long_double_roundtrip() {
        for x in [1.0, -2.5, 1e300, 3.25e-10] {
            assert_eq!(f80_to_f64(&f64_to_f80(x)), x);
        }
    }
}
