//! BLAS entry points exported to the application (CBLAS and Fortran-77
//! `name_` conventions). Exported symbols of the executable take precedence
//! over a BLAS the program was linked with, so each call lands here: a
//! modelled kernel injects its model time and does no work (see
//! `crate::host::kernels`), otherwise the real BLAS of the system runs.
#![allow(non_snake_case, clippy::missing_safety_doc, clippy::too_many_arguments)]

use std::cell::Cell;
use std::ffi::{c_char, c_int};

use crate::host::compute::{self, blas_modelled, modelled_idamax};
use crate::host::kernels;
use crate::mpi::{current_rank, entry};

// Kernel indices in kernels::BLAS.
pub(super) const DGEMM: usize = 0;
pub(super) const DTRSM: usize = 1;
pub(super) const DGEMV: usize = 2;
pub(super) const DGER: usize = 3;
pub(super) const DTRSV: usize = 4;
pub(super) const DAXPY: usize = 5;
pub(super) const DSCAL: usize = 6;
pub(super) const DSWAP: usize = 7;
pub(super) const DCOPY: usize = 8;

pub(super) const CBLAS_LEFT: c_int = 141;

thread_local! {
    /// Set while the real BLAS runs: its internal calls (e.g. netlib's
    /// cblas_dgemm calling dgemm_) bind to our exports and must go straight to
    /// the real implementation instead of looping back.
    static IN_REAL: Cell<bool> = const { Cell::new(false) };
}

pub(super) fn real<T: Copy>(symbol: &str) -> T {
    compute::real_compute_runs(symbol);
    match kernels::real::<T>(symbol) {
        Ok(f) => f,
        Err(msg) => entry::abort_run(current_rank(), msg),
    }
}

/// Runs `f` (a call into the real BLAS) with the re-entrance flag set.
pub(super) fn in_real<R>(f: impl FnOnce() -> R) -> R {
    let was = IN_REAL.with(|c| c.replace(true));
    let r = f();
    IN_REAL.with(|c| c.set(was));
    r
}

pub(super) fn nested() -> bool {
    IN_REAL.with(|c| c.get())
}

pub(super) type Idamax = unsafe extern "C" fn(c_int, *const f64, c_int) -> usize;

/// Exports the CBLAS kernels. A modelled call (`blas_modelled` of the
/// kernel, on the features in brackets) costs its model's time and does no
/// work, except for the kernels with a stand-in in `kernels` (after `=>`),
/// whose results programs read back; otherwise the real BLAS runs.
macro_rules! cblas_forms {
    ($($name:ident[$kernel:ident: $($f:expr),+]($($p:ident: $t:ty),* $(,)?) $(=> $stand_in:expr)?;)*) => {$(
        #[no_mangle]
        pub(super) unsafe extern "C" fn $name($($p: $t),*) {
            // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
            unsafe {
                if blas_modelled($kernel, &[$($f as f64),+]) {
                    $($stand_in;)?
                } else {
                    in_real(|| real::<unsafe extern "C" fn($($t),*)>(stringify!($name))($($p),*))
                }
            }
        }
    )*};
}

cblas_forms! {
    cblas_dgemm[DGEMM: m, n, k](
        o: c_int, ta: c_int, tb: c_int, m: c_int, n: c_int, k: c_int, alpha: f64, a: *const f64, lda: c_int,
        b: *const f64, ldb: c_int, beta: f64, c: *mut f64, ldc: c_int,
    );
    cblas_dtrsm[DTRSM: m, n, if side == CBLAS_LEFT { 0 } else { 1 }](
        o: c_int, side: c_int, uplo: c_int, ta: c_int, diag: c_int, m: c_int, n: c_int, alpha: f64,
        a: *const f64, lda: c_int, b: *mut f64, ldb: c_int,
    );
    cblas_dgemv[DGEMV: m, n](
        o: c_int, ta: c_int, m: c_int, n: c_int, alpha: f64, a: *const f64, lda: c_int, x: *const f64,
        incx: c_int, beta: f64, y: *mut f64, incy: c_int,
    );
    cblas_dger[DGER: m, n](
        o: c_int, m: c_int, n: c_int, alpha: f64, x: *const f64, incx: c_int, y: *const f64, incy: c_int,
        a: *mut f64, lda: c_int,
    );
    cblas_dtrsv[DTRSV: n](
        o: c_int, uplo: c_int, ta: c_int, diag: c_int, n: c_int, a: *const f64, lda: c_int, x: *mut f64,
        incx: c_int,
    );
    cblas_daxpy[DAXPY: n](n: c_int, alpha: f64, x: *const f64, incx: c_int, y: *mut f64, incy: c_int);
    cblas_dscal[DSCAL: n](n: c_int, alpha: f64, x: *mut f64, incx: c_int);
    cblas_dswap[DSWAP: n](n: c_int, x: *mut f64, incx: c_int, y: *mut f64, incy: c_int)
        => kernels::dswap(n, x, incx, y, incy);
    cblas_dcopy[DCOPY: n](n: c_int, x: *const f64, incx: c_int, y: *mut f64, incy: c_int)
        => kernels::dcopy(n, x, incx, y, incy);
}

#[no_mangle]
pub(super) unsafe extern "C" fn cblas_idamax(n: c_int, x: *const f64, incx: c_int) -> usize {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        if n <= 0 {
            return 0;
        }
        match modelled_idamax(n as usize) {
            Some(i) => i,
            None if compute::native_allowed() => {
                compute::real_compute_runs("cblas_idamax");
                kernels::idamax(n, x, incx)
            }
            None => in_real(|| real::<Idamax>("cblas_idamax")(n, x, incx)),
        }
    }
}

// ---- Fortran 77 interface (arguments by reference, hidden string lengths ignored).

pub(super) type FIdamax = unsafe extern "C" fn(*const c_int, *const f64, *const c_int) -> c_int;

pub(super) const COL_MAJOR: c_int = 102;

pub(super) fn trans(c: *const c_char) -> c_int {
    // Safety: BLAS passes a pointer to one character.
    match unsafe { *c } as u8 {
        b'N' | b'n' => 111,
        b'T' | b't' => 112,
        _ => 113,
    }
}

pub(super) fn uplo(c: *const c_char) -> c_int {
    // Safety: as above.
    if matches!(unsafe { *c } as u8, b'U' | b'u') {
        121
    } else {
        122
    }
}

pub(super) fn diag(c: *const c_char) -> c_int {
    // Safety: as above.
    if matches!(unsafe { *c } as u8, b'U' | b'u') {
        132
    } else {
        131
    }
}

pub(super) fn side(c: *const c_char) -> c_int {
    // Safety: as above.
    if matches!(unsafe { *c } as u8, b'L' | b'l') {
        141
    } else {
        142
    }
}

/// Exports the Fortran BLAS forms (arguments by reference, column-major
/// matrices). Inside a call the real BLAS serves them (see `nested`);
/// otherwise they go to the cblas form, with the arguments after `=>`.
macro_rules! fortran_forms {
    ($($name:ident = $cblas:ident($($p:ident: $t:ty),* $(,)?) => ($($a:expr),* $(,)?);)*) => {$(
        #[no_mangle]
        pub(super) unsafe extern "C" fn $name($($p: $t),*) {
            // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
            unsafe {
                if nested() {
                    return real::<unsafe extern "C" fn($($t),*)>(stringify!($name))($($p),*);
                }
                $cblas($($a),*)
            }
        }
    )*};
}

fortran_forms! {
    dgemm_ = cblas_dgemm(
        ta: *const c_char, tb: *const c_char, m: *const c_int, n: *const c_int, k: *const c_int,
        alpha: *const f64, a: *const f64, lda: *const c_int, b: *const f64, ldb: *const c_int,
        beta: *const f64, c: *mut f64, ldc: *const c_int,
    )
        => (COL_MAJOR, trans(ta), trans(tb), *m, *n, *k, *alpha, a, *lda, b, *ldb, *beta, c, *ldc);
    dtrsm_ = cblas_dtrsm(
        s: *const c_char, u: *const c_char, ta: *const c_char, d: *const c_char, m: *const c_int,
        n: *const c_int, alpha: *const f64, a: *const f64, lda: *const c_int, b: *mut f64, ldb: *const c_int,
    )
        => (COL_MAJOR, side(s), uplo(u), trans(ta), diag(d), *m, *n, *alpha, a, *lda, b, *ldb);
    dgemv_ = cblas_dgemv(
        ta: *const c_char, m: *const c_int, n: *const c_int, alpha: *const f64, a: *const f64,
        lda: *const c_int, x: *const f64, incx: *const c_int, beta: *const f64, y: *mut f64,
        incy: *const c_int,
    )
        => (COL_MAJOR, trans(ta), *m, *n, *alpha, a, *lda, x, *incx, *beta, y, *incy);
    dger_ = cblas_dger(
        m: *const c_int, n: *const c_int, alpha: *const f64, x: *const f64, incx: *const c_int,
        y: *const f64, incy: *const c_int, a: *mut f64, lda: *const c_int,
    )
        => (COL_MAJOR, *m, *n, *alpha, x, *incx, y, *incy, a, *lda);
    dtrsv_ = cblas_dtrsv(
        u: *const c_char, ta: *const c_char, d: *const c_char, n: *const c_int, a: *const f64,
        lda: *const c_int, x: *mut f64, incx: *const c_int,
    )
        => (COL_MAJOR, uplo(u), trans(ta), diag(d), *n, a, *lda, x, *incx);
    daxpy_ = cblas_daxpy(
        n: *const c_int, alpha: *const f64, x: *const f64, incx: *const c_int, y: *mut f64,
        incy: *const c_int,
    )
        => (*n, *alpha, x, *incx, y, *incy);
    dscal_ = cblas_dscal(n: *const c_int, alpha: *const f64, x: *mut f64, incx: *const c_int)
        => (*n, *alpha, x, *incx);
    dswap_ = cblas_dswap(
        n: *const c_int, x: *mut f64, incx: *const c_int, y: *mut f64, incy: *const c_int,
    )
        => (*n, x, *incx, y, *incy);
    dcopy_ = cblas_dcopy(
        n: *const c_int, x: *const f64, incx: *const c_int, y: *mut f64, incy: *const c_int,
    )
        => (*n, x, *incx, y, *incy);
}

#[no_mangle]
pub(super) unsafe extern "C" fn idamax_(n: *const c_int, x: *const f64, incx: *const c_int) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        if nested() {
            return real::<FIdamax>("idamax_")(n, x, incx);
        }
        if *n <= 0 {
            return 0;
        }
        cblas_idamax(*n, x, *incx) as c_int + 1
    }
}
