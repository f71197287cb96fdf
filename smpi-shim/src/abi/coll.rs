//! Collective communication (MPI chapter 6), blocking and non-blocking, on intra- and
//! intercommunicators, and reduction operations.
//!
//! A collective's blocking and non-blocking forms are exported from one
//! parameter list and one body ([`coll_forms!`]), which checks and reads the
//! C arguments once and then runs in the form it was called in ([`Form`]):
//! the blocking algorithms (`coll`, `coll::inter`) or a started non-blocking
//! schedule (`coll::nbc`, `coll::nbc_inter`).
#![allow(non_snake_case, clippy::missing_safety_doc, clippy::too_many_arguments)]

use std::ffi::{c_int, c_void};

use crate::coll::inter::{self as ic, InterView};
use crate::coll::nbc_inter::{self, MPI_ROOT};
use crate::coll::{self, nbc, regular_counts, Alltoallw, CommView, IN_PLACE};
use crate::mpi::entry::{enter_call, result};
use crate::mpi::op::{Op, UserFn};
use crate::mpi::{self as rt, mpi_err, with_world, MpiResult, MPI_SUCCESS};

use crate::mpi::coll_check::{self, CollSig};

use super::args::*;
use super::ti_hooks as tih;
use crate::mpi::ti_trace::{self, ti};

pub(super) fn view(me: u32, comm: i32) -> MpiResult<CommView> {
    let inter = with_world(|w| w.ranks[me as usize].comm(comm).map(|c| c.shared.remote.is_some()))?;
    if inter {
        return Err(mpi_err(
            rt::MPI_ERR_COMM,
            "collectives on intercommunicators are not supported yet",
        ));
    }
    CommView::new(me, comm)
}

/// A count that MPI says is ignored when its buffer is `MPI_IN_PLACE`.
fn in_place_count(buf: *const c_void, v: c_int) -> MpiResult<usize> {
    if in_place(buf) {
        Ok(0)
    } else {
        nonneg(v)
    }
}

/// Exports a collective's blocking form and its non-blocking form, which
/// takes one more parameter, the request, so that each collective's
/// parameters and code are written once. After the parameters comes either
/// `|call, req| body`, the body of both forms, where `call` is the form's
/// name and `req` its request (`None` for the blocking form), or a function
/// that takes the call's name, the parameters, the request and then the
/// arguments in parentheses after the function, if any. The neighbourhood
/// collectives (`abi/topo.rs`) are exported by it too.
macro_rules! coll_forms {
    () => {};
    (
        $name:ident / $iname:ident ($($p:ident: $t:ty),* $(,)?) => |$call:ident, $req:ident| $body:expr;
        $($rest:tt)*
    ) => {
        #[no_mangle]
        pub(super) unsafe extern "C" fn $name($($p: $t),*) -> c_int {
            let ($call, $req) = (stringify!($name), None);
            // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
            unsafe { $body }
        }

        #[no_mangle]
        pub(super) unsafe extern "C" fn $iname($($p: $t,)* req: *mut c_int) -> c_int {
            let ($call, $req) = (stringify!($iname), Some(req));
            // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
            unsafe { $body }
        }

        $crate::abi::coll::coll_forms!($($rest)*);
    };
    (
        $name:ident / $iname:ident ($($p:ident: $t:ty),* $(,)?) => $f:ident $(($($x:expr),*))?;
        $($rest:tt)*
    ) => {
        $crate::abi::coll::coll_forms! {
            $name / $iname ($($p: $t),*) => |call, req| $f(call, $($p,)* req $($(, $x)*)?);
            $($rest)*
        }
    };
}
pub(super) use coll_forms;

/// How a collective was called.
#[derive(Clone, Copy)]
enum Form {
    /// The blocking form: it runs to completion.
    Blocking,
    /// The non-blocking form: it starts a request.
    Started,
}

/// What a collective did: `None` when it ran to completion, the request it
/// started otherwise.
type Ran = MpiResult<Option<u32>>;

/// A blocking collective's outcome as a [`Ran`].
fn done(r: MpiResult<()>) -> Ran {
    r.map(|()| None)
}

impl Form {
    /// Records the blocking form's line of a TI trace (the non-blocking forms
    /// have none: [`collective`] counts them as unrepresented).
    fn ti(self, record: impl FnOnce()) {
        if let Form::Blocking = self {
            ti!(record());
        }
    }

    /// Where the collective runs.
    fn on(self, me: u32, comm: i32) -> MpiResult<On> {
        match self {
            Form::Blocking => On::of(me, comm),
            Form::Started => {
                let (c, remote) = comm_of(me, comm)?;
                Ok(On::Start(c, remote))
            }
        }
    }

    /// Request `id`, started by the collective `call`: the blocking form waits for it.
    fn complete(self, me: u32, id: u32, call: &'static str) -> Ran {
        match self {
            Form::Blocking => done(wait_coll(me, id, call)),
            Form::Started => Ok(Some(id)),
        }
    }
}

/// Runs collective `call` under its entry guard in the form `req` says
/// (`None`: blocking; otherwise where to write the request it starts). Any
/// error goes to the handler of `comm`.
unsafe fn collective(
    call: &'static str,
    comm: c_int,
    req: Option<*mut c_int>,
    body: impl FnOnce(u32, Form) -> Ran,
) -> c_int {
    let g = enter_call(call);
    match req {
        None => result(g.me, comm, call, body(g.me, Form::Blocking)),
        Some(req) => {
            // Non-blocking collectives have no action in SMPI's TI format.
            ti!(ti_trace::unrepresented(call));
            let r = body(g.me, Form::Started).map(|id| id.expect("a started collective returns its request"));
            // Safety: `req` is null or valid for a write (the caller's contract).
            unsafe { started(g.me, comm, call, req, r) }
        }
    }
}

/// The communicator a collective runs on.
enum On {
    /// Blocking, on an intercommunicator: the algorithms of `coll::inter`.
    Inter(InterView),
    /// Blocking, on an intracommunicator: the selected algorithm of `coll`.
    Intra(CommView),
    /// Non-blocking: the schedules of `coll::nbc_inter` on an
    /// intercommunicator (the size of its remote group), of `coll::nbc` otherwise.
    Start(CommView, Option<i32>),
}

impl On {
    fn of(me: u32, comm: i32) -> MpiResult<On> {
        Ok(match InterView::of(me, comm)? {
            Some(iv) => On::Inter(iv),
            None => On::Intra(view(me, comm)?),
        })
    }

    /// This rank in an intracommunicator; `None` on an intercommunicator.
    fn rank(&self) -> Option<i32> {
        match self {
            On::Inter(_) | On::Start(_, Some(_)) => None,
            On::Intra(c) | On::Start(c, None) => Some(c.rank),
        }
    }

    /// How many ranks a rooted or all-to-all collective addresses: the
    /// remote group on an intercommunicator, the communicator otherwise.
    fn peers(&self) -> i32 {
        match self {
            On::Inter(iv) => iv.rsize,
            On::Intra(c) => c.size,
            On::Start(c, remote) => remote.unwrap_or(c.size),
        }
    }
}

/// Starts the non-blocking collective `f` of `nbc_inter` on an
/// intercommunicator (`remote` is `Some`), of `nbc` otherwise.
macro_rules! nbc_start {
    ($remote:expr, $f:ident($($a:expr),* $(,)?)) => {
        match $remote {
            Some(_) => nbc_inter::$f($($a),*),
            None => nbc::$f($($a),*),
        }
        .map(Some)
    };
}

/// The two sides of a rooted collective at this rank: (it is the root side,
/// it has data of its own on the other side). `rank` is `None` on an
/// intercommunicator, where `root` is `MPI_ROOT`, `MPI_PROC_NULL` or a remote
/// rank; `own` is the non-root buffer (`MPI_IN_PLACE` at an intracommunicator root).
fn rooted(rank: Option<i32>, root: c_int, own: *const c_void) -> (bool, bool) {
    match rank {
        None => (root == MPI_ROOT, root >= 0),
        Some(rank) => (rank == root, !in_place(own)),
    }
}

/// A count where it is read (`used`), zero where MPI says it is ignored.
fn count_if(used: bool, count: c_int) -> MpiResult<usize> {
    if used {
        nonneg(count)
    } else {
        Ok(0)
    }
}

/// The count of a rooted non-blocking collective: none moves at a member of
/// the root's group other than the root (`MPI_PROC_NULL`) on an intercommunicator.
fn start_count(remote: Option<i32>, root: c_int, count: c_int) -> MpiResult<usize> {
    if remote.is_some() && root == rt::MPI_PROC_NULL {
        Ok(0)
    } else {
        nonneg(count)
    }
}

/// The element count of a reduction, once its datatype and operation are known valid.
fn reduction_count(count: c_int, dt: c_int, op: c_int) -> MpiResult<usize> {
    let n = nonneg(count)?;
    with_world(|w| w.dtype(dt).and(w.op(op).map(|_| ())))?;
    Ok(n)
}

/// `n` counts from a C array of `int` or `MPI_Count`.
unsafe fn ivec<T: Copy + Into<i64>>(n: i32, p: *const T) -> MpiResult<Vec<usize>> {
    // Safety: the caller upholds this function's contract (see its `# Safety`).
    unsafe {
        if p.is_null() && n > 0 {
            return Err(mpi_err(rt::MPI_ERR_ARG, "null array of counts"));
        }
        (0..n.max(0) as usize)
            .map(|i| nonneg((*p.add(i)).into()))
            .collect()
    }
}

/// `n` displacements from a C array of `int` or `MPI_Aint` (a null array reads as zeros).
unsafe fn dvec<T: Copy + TryInto<isize>>(n: i32, p: *const T) -> Vec<isize> {
    // Safety: the caller upholds this function's contract (see its `# Safety`).
    unsafe {
        (0..n.max(0) as usize)
            .map(|i| {
                if p.is_null() {
                    0
                } else {
                    (*p.add(i)).try_into().unwrap_or(0)
                }
            })
            .collect()
    }
}

/// `n` datatype handles.
unsafe fn tvec(n: i32, p: *const c_int) -> MpiResult<Vec<i32>> {
    // Safety: the caller upholds this function's contract (see its `# Safety`).
    unsafe {
        if p.is_null() && n > 0 {
            return Err(mpi_err(rt::MPI_ERR_TYPE, "null array of datatypes"));
        }
        Ok((0..n.max(0) as usize).map(|i| *p.add(i)).collect())
    }
}

/// `n` counts and displacements from C arrays where they are read (`used`),
/// zeros where MPI says they are ignored.
unsafe fn vecs_if<C: Copy + Into<i64>, D: Copy + TryInto<isize>>(
    used: bool,
    n: i32,
    counts: *const C,
    displs: *const D,
) -> MpiResult<(Vec<usize>, Vec<isize>)> {
    if used {
        // Safety: where they are read the arrays hold `n` entries (the caller's contract).
        unsafe { Ok((ivec(n, counts)?, dvec(n, displs))) }
    } else {
        Ok((vec![0; n.max(0) as usize], vec![0; n.max(0) as usize]))
    }
}

fn in_place(p: *const c_void) -> bool {
    p as *mut u8 == IN_PLACE
}

/// The communicator of a collective, and the size of its remote group when it
/// is an intercommunicator.
fn comm_of(me: u32, comm: i32) -> MpiResult<(CommView, Option<i32>)> {
    match nbc_inter::Inter::of(me, comm)? {
        Some(c) => Ok((c, Some(nbc_inter::remote_size(c)?))),
        None => Ok((CommView::new(me, comm)?, None)),
    }
}

fn no_inter(call: &str) -> rt::MpiError {
    mpi_err(
        rt::MPI_ERR_COMM,
        format!("{call} is not defined on intercommunicators"),
    )
}

/// Waits for a collective request a blocking call started.
fn wait_coll(me: u32, id: u32, call: &'static str) -> MpiResult<()> {
    let st = rt::wait(me, id, call);
    if st.error != MPI_SUCCESS {
        return Err(mpi_err(st.error, format!("{call} failed")));
    }
    Ok(())
}

// ------------------------------------------------------------------ the collectives
//
// Each body checks the arguments (before the collective matching check, so
// that a bad argument is reported as itself), records the blocking form in a
// TI trace, reads the counts where MPI says they are significant, and runs.

coll_forms! {
    MPI_Barrier / MPI_Ibarrier(comm: c_int) => |call, req| collective(call, comm, req, |me, form| {
        CollArgs::new(me, comm, None)?;
        coll_check::check(me, comm, CollSig::new(call))?;
        form.ti(|| tih::barrier(me, comm));
        match form.on(me, comm)? {
            On::Inter(iv) => done(ic::barrier(iv)),
            On::Intra(c) => done(coll::barrier(c)),
            On::Start(c, remote) => nbc_start!(remote, ibarrier(c)),
        }
    });
    MPI_Bcast / MPI_Ibcast(
        buf: *mut c_void, count: c_int, dt: c_int, root: c_int, comm: c_int,
    ) => |call, req| collective(call, comm, req, |me, form| {
        let a = CollArgs::new(me, comm, Some(root))?;
        a.data(At::All, InPlace::No, BUFFER, buf, count, dt)?;
        coll_check::check(me, comm, CollSig::new(call).root(root).data(count, dt))?;
        form.ti(|| tih::bcast(me, count, dt, root, comm));
        let buf = buf as *mut u8;
        match form.on(me, comm)? {
            On::Inter(iv) => done(ic::bcast(iv, buf, nonneg(count)?, dt, root)),
            On::Intra(c) => {
                let n = nonneg(count)?;
                with_world(|w| w.dtype(dt))?;
                done(coll::bcast(c, buf, n, dt, root))
            }
            On::Start(c, remote) => {
                let n = start_count(remote, root, count)?;
                nbc_start!(remote, ibcast(c, buf, n, dt, root))
            }
        }
    });
    MPI_Reduce / MPI_Ireduce(
        s: *const c_void, r: *mut c_void, count: c_int, dt: c_int, op: c_int, root: c_int, comm: c_int,
    ) => |call, req| collective(call, comm, req, |me, form| {
        let a = CollArgs::new(me, comm, Some(root))?;
        a.data(At::Peers, InPlace::AtRoot, RSEND, s, count, dt)?;
        a.data(At::Root, InPlace::No, RRECV, r, count, dt)?;
        arg_op(op)?;
        let sig = CollSig::new(call).root(root).op(op).data(count, dt);
        coll_check::check(me, comm, sig)?;
        form.ti(|| tih::reduction(me, "reduce", count, dt, root, comm));
        let (s, r) = (s as *const u8, r as *mut u8);
        match form.on(me, comm)? {
            On::Inter(iv) => done(ic::reduce(iv, s, r, nonneg(count)?, dt, op, root)),
            On::Intra(c) => done(coll::reduce(c, s, r, reduction_count(count, dt, op)?, dt, op, root)),
            On::Start(c, remote) => {
                let n = start_count(remote, root, count)?;
                nbc_start!(remote, ireduce(c, s, r, n, dt, op, root))
            }
        }
    });
    MPI_Allreduce / MPI_Iallreduce(
        s: *const c_void, r: *mut c_void, count: c_int, dt: c_int, op: c_int, comm: c_int,
    ) => |call, req| collective(call, comm, req, |me, form| {
        check_allreduce(me, s, r, count, dt, op, comm)?;
        coll_check::check(me, comm, CollSig::new(call).op(op).data(count, dt))?;
        form.ti(|| tih::reduction(me, "allreduce", count, dt, -1, comm));
        let (s, r) = (s as *const u8, r as *mut u8);
        match form.on(me, comm)? {
            On::Inter(iv) => done(ic::allreduce(iv, s, r, nonneg(count)?, dt, op)),
            On::Intra(c) => done(coll::allreduce(c, s, r, reduction_count(count, dt, op)?, dt, op)),
            On::Start(c, remote) => nbc_start!(remote, iallreduce(c, s, r, nonneg(count)?, dt, op)),
        }
    });
    MPI_Gather / MPI_Igather(
        s: *const c_void, sc: c_int, st: c_int, r: *mut c_void, rc: c_int, rt_: c_int, root: c_int, comm: c_int,
    ) => |call, req| collective(call, comm, req, |me, form| {
        let a = CollArgs::new(me, comm, Some(root))?;
        a.data(At::Peers, InPlace::AtRoot, SEND, s, sc, st)?;
        a.data(At::Root, InPlace::No, RECV, r, rc, rt_)?;
        let sig = CollSig::new(call).root(root);
        coll_check::check(me, comm, sig.contributed(s, sc, st, rc, rt_))?;
        form.ti(|| tih::regular(me, "gather", s, sc, st, rc, rt_, root, comm));
        let on = form.on(me, comm)?;
        let (receives, sends) = rooted(on.rank(), root, s);
        // Receive arguments matter only at the root.
        let (rc, sc) = (count_if(receives, rc)?, count_if(sends, sc)?);
        let (cs, ds) = regular_counts(on.peers(), rc);
        let (s, r) = (s as *const u8, r as *mut u8);
        gathered(on, s, sc, st, r, cs, ds, rt_, root, |c, _, _| {
            coll::gather(c, s, sc, st, r, rc, rt_, root)
        })
    });
    MPI_Gatherv / MPI_Igatherv(
        s: *const c_void, sc: c_int, st: c_int,
        r: *mut c_void, rcs: *const c_int, ds: *const c_int, rt_: c_int, root: c_int, comm: c_int,
    ) => |call, req| collective(call, comm, req, |me, form| {
        let a = CollArgs::new(me, comm, Some(root))?;
        a.data(At::Peers, InPlace::AtRoot, SEND, s, sc, st)?;
        // At the root the arrays hold one entry per process (the caller's contract).
        a.data_v(At::Root, InPlace::No, RECV_V, r, rcs, ds, Err(rt_))?;
        coll_check::check(me, comm, CollSig::new(call).root(root))?;
        form.ti(|| tih::gatherv(me, s, sc, st, rcs, rt_, root, comm));
        let on = form.on(me, comm)?;
        let (receives, sends) = rooted(on.rank(), root, s);
        let (cs, ds) = vecs_if(receives, on.peers(), rcs, ds)?;
        let sc = count_if(sends, sc)?;
        let (s, r) = (s as *const u8, r as *mut u8);
        gathered(on, s, sc, st, r, cs, ds, rt_, root, |c, cs, ds| {
            coll::gatherv(c, s, sc, st, r, cs, ds, rt_, root)
        })
    });
    MPI_Scatter / MPI_Iscatter(
        s: *const c_void, sc: c_int, st: c_int, r: *mut c_void, rc: c_int, rt_: c_int, root: c_int, comm: c_int,
    ) => |call, req| collective(call, comm, req, |me, form| {
        let a = CollArgs::new(me, comm, Some(root))?;
        a.data(At::Root, InPlace::No, SEND, s, sc, st)?;
        a.data(At::Peers, InPlace::AtRoot, RECV, r, rc, rt_)?;
        let sig = CollSig::new(call).root(root);
        coll_check::check(me, comm, sig.received(r, rc, rt_, sc, st))?;
        form.ti(|| tih::regular(me, "scatter", s, sc, st, rc, rt_, root, comm));
        let on = form.on(me, comm)?;
        let (sends, receives) = rooted(on.rank(), root, r);
        // Send arguments matter only at the root.
        let (sc, rc) = (count_if(sends, sc)?, count_if(receives, rc)?);
        let (cs, ds) = regular_counts(on.peers(), sc);
        let (s, r) = (s as *const u8, r as *mut u8);
        scattered(on, s, cs, ds, st, r, rc, rt_, root, |c, _, _| {
            coll::scatter(c, s, sc, st, r, rc, rt_, root)
        })
    });
    MPI_Scatterv / MPI_Iscatterv(
        s: *const c_void, scs: *const c_int, ds: *const c_int, st: c_int,
        r: *mut c_void, rc: c_int, rt_: c_int, root: c_int, comm: c_int,
    ) => |call, req| collective(call, comm, req, |me, form| {
        let a = CollArgs::new(me, comm, Some(root))?;
        // At the root the arrays hold one entry per process (the caller's contract).
        a.data_v(At::Root, InPlace::No, SEND_V, s, scs, ds, Err(st))?;
        a.data(At::Peers, InPlace::AtRoot, RECV, r, rc, rt_)?;
        coll_check::check(me, comm, CollSig::new(call).root(root))?;
        form.ti(|| tih::scatterv(me, scs, st, rc, rt_, root, comm));
        let on = form.on(me, comm)?;
        let (sends, receives) = rooted(on.rank(), root, r);
        let (cs, ds) = vecs_if(sends, on.peers(), scs, ds)?;
        let rc = count_if(receives, rc)?;
        let (s, r) = (s as *const u8, r as *mut u8);
        scattered(on, s, cs, ds, st, r, rc, rt_, root, |c, cs, ds| {
            coll::scatterv(c, s, cs, ds, st, r, rc, rt_, root)
        })
    });
    MPI_Allgather / MPI_Iallgather(
        s: *const c_void, sc: c_int, st: c_int, r: *mut c_void, rc: c_int, rt_: c_int, comm: c_int,
    ) => |call, req| collective(call, comm, req, |me, form| {
        check_allgather(me, s, sc, st, r, rc, rt_, comm)?;
        let sig = CollSig::new(call);
        coll_check::check(me, comm, sig.contributed(s, sc, st, rc, rt_))?;
        form.ti(|| tih::regular(me, "allgather", s, sc, st, rc, rt_, -1, comm));
        let on = form.on(me, comm)?;
        let (cs, ds) = regular_counts(on.peers(), nonneg(rc)?);
        allgathered(on, s, sc, st, r, cs, ds, rt_)
    });
    MPI_Allgatherv / MPI_Iallgatherv(
        s: *const c_void, sc: c_int, st: c_int,
        r: *mut c_void, rcs: *const c_int, ds: *const c_int, rt_: c_int, comm: c_int,
    ) => |call, req| collective(call, comm, req, |me, form| {
        let a = CollArgs::new(me, comm, None)?;
        a.data(At::All, InPlace::Anywhere, SEND, s, sc, st)?;
        // The arrays hold one entry per process (the caller's contract).
        a.data_v(At::All, InPlace::No, RECV_V, r, rcs, ds, Err(rt_))?;
        coll_check::check(me, comm, CollSig::new(call))?;
        form.ti(|| tih::gatherv(me, s, sc, st, rcs, rt_, -1, comm));
        let on = form.on(me, comm)?;
        let n = on.peers();
        let (cs, ds) = (ivec(n, rcs)?, dvec(n, ds));
        allgathered(on, s, sc, st, r, cs, ds, rt_)
    });
    MPI_Alltoall / MPI_Ialltoall(
        s: *const c_void, sc: c_int, st: c_int, r: *mut c_void, rc: c_int, rt_: c_int, comm: c_int,
    ) => |call, req| collective(call, comm, req, |me, form| {
        check_allgather(me, s, sc, st, r, rc, rt_, comm)?;
        let sig = CollSig::new(call);
        coll_check::check(me, comm, sig.contributed(s, sc, st, rc, rt_))?;
        form.ti(|| tih::regular(me, "alltoall", s, sc, st, rc, rt_, -1, comm));
        let on = form.on(me, comm)?;
        // The send count and type are ignored with MPI_IN_PLACE (refused
        // on an intercommunicator by check_allgather).
        let (sc, rc) = (in_place_count(s, sc)?, nonneg(rc)?);
        let ((scs, sds), (rcs, rds)) = (regular_counts(on.peers(), sc), regular_counts(on.peers(), rc));
        alltoallv_on(on, s, scs, sds, st, r, rcs, rds, rt_, true)
    });
    MPI_Alltoallv / MPI_Ialltoallv(
        s: *const c_void, scs: *const c_int, sds: *const c_int, st: c_int,
        r: *mut c_void, rcs: *const c_int, rds: *const c_int, rt_: c_int, comm: c_int,
    ) => alltoallv(Some(tih::alltoallv));
    MPI_Alltoallw / MPI_Ialltoallw(
        s: *const c_void, scs: *const c_int, sds: *const c_int, sts: *const c_int,
        r: *mut c_void, rcs: *const c_int, rds: *const c_int, rts: *const c_int, comm: c_int,
    ) => |call, req| collective(call, comm, req, |me, form| {
        check_alltoallv(me, s, scs, sds, Ok(sts), r, rcs, rds, Ok(rts), comm)?;
        coll_check::check(me, comm, CollSig::new(call))?;
        form.ti(|| ti_trace::unrepresented(call));
        // Both forms run the non-blocking schedule.
        let (c, remote) = comm_of(me, comm)?;
        let n = remote.unwrap_or(c.size);
        // With MPI_IN_PLACE the send arguments are not read.
        let (scounts, sdispls, stypes) = if in_place(s) {
            let z = n.max(0) as usize;
            (vec![0; z], vec![0; z], vec![0; z])
        } else {
            (ivec(n, scs)?, dvec(n, sds), tvec(n, sts)?)
        };
        let a = Alltoallw {
            sbuf: s as *const u8,
            scounts,
            sdispls,
            stypes,
            rbuf: r as *mut u8,
            rcounts: ivec(n, rcs)?,
            rdispls: dvec(n, rds),
            rtypes: tvec(n, rts)?,
        };
        let id = start_alltoallw(c, remote, a)?;
        form.complete(me, id, call)
    });
    MPI_Reduce_scatter / MPI_Ireduce_scatter(
        s: *const c_void, r: *mut c_void, rcs: *const c_int, dt: c_int, op: c_int, comm: c_int,
    ) => |call, req| collective(call, comm, req, |me, form| {
        let a = CollArgs::new(me, comm, None)?;
        // `recvcounts` holds one entry per process of the local group.
        let cs = arg_counts(rcs, a.size as usize, "recvcounts")?;
        // On an intercommunicator the send buffer holds what the other group
        // receives, which this process does not know: only the receive side is checked.
        if a.remote.is_none() {
            let total: usize = cs.iter().sum();
            a.data(At::All, InPlace::Anywhere, RSEND, s, total as i64, dt)?;
        }
        let mine = cs.get(a.rank as usize).copied().unwrap_or(0);
        a.data(At::All, InPlace::No, RRECV, r, mine as i64, dt)?;
        arg_op(op)?;
        coll_check::check(me, comm, CollSig::new(call).op(op))?;
        form.ti(|| tih::reduce_scatter(me, rcs, None, dt, comm));
        reduce_scattered(form.on(me, comm)?, me, comm, s, r, |n| ivec(n, rcs), dt, op)
    });
    MPI_Reduce_scatter_block / MPI_Ireduce_scatter_block(
        s: *const c_void, r: *mut c_void, rc: c_int, dt: c_int, op: c_int, comm: c_int,
    ) => |call, req| collective(call, comm, req, |me, form| {
        let a = CollArgs::new(me, comm, None)?;
        // The send buffer holds `recvcount` elements per process: it has data
        // exactly when the receive buffer has.
        a.data(At::All, InPlace::Anywhere, RSEND, s, rc, dt)?;
        a.data(At::All, InPlace::No, RRECV, r, rc, dt)?;
        arg_op(op)?;
        coll_check::check(me, comm, CollSig::new(call).op(op))?;
        form.ti(|| tih::reduce_scatter(me, std::ptr::null(), Some(rc), dt, comm));
        let counts = |n| Ok(vec![nonneg(rc)?; n as usize]);
        reduce_scattered(form.on(me, comm)?, me, comm, s, r, counts, dt, op)
    });
    MPI_Scan / MPI_Iscan(
        s: *const c_void, r: *mut c_void, count: c_int, dt: c_int, op: c_int, comm: c_int,
    ) => scan(false);
    MPI_Exscan / MPI_Iexscan(
        s: *const c_void, r: *mut c_void, count: c_int, dt: c_int, op: c_int, comm: c_int,
    ) => scan(true);
}

/// MPI_Alltoallv with `MPI_Count` counts and `MPI_Aint` displacements: the
/// same algorithms as MPI_Alltoallv (and no line in a TI trace).
#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Alltoallv_c(
    s: *const c_void,
    scs: *const i64,
    sds: *const isize,
    st: c_int,
    r: *mut c_void,
    rcs: *const i64,
    rds: *const isize,
    rt_: c_int,
    comm: c_int,
) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        alltoallv(
            "MPI_Alltoallv_c",
            s,
            scs,
            sds,
            st,
            r,
            rcs,
            rds,
            rt_,
            comm,
            None,
            None,
        )
    }
}

/// MPI_Scan and MPI_Exscan (`exclusive`), on intracommunicators only.
unsafe fn scan(
    call: &'static str,
    s: *const c_void,
    r: *mut c_void,
    count: c_int,
    dt: c_int,
    op: c_int,
    comm: c_int,
    req: Option<*mut c_int>,
    exclusive: bool,
) -> c_int {
    // Safety: the caller upholds this function's contract (see its `# Safety`).
    unsafe {
        collective(call, comm, req, |me, form| {
            check_allreduce(me, s, r, count, dt, op, comm)?;
            coll_check::check(me, comm, CollSig::new(call).op(op).data(count, dt))?;
            let name = if exclusive { "exscan" } else { "scan" };
            form.ti(|| tih::reduction(me, name, count, dt, -1, comm));
            let (s, r) = (s as *const u8, r as *mut u8);
            match form {
                Form::Blocking => {
                    let c = view(me, comm)?;
                    done(coll::scan(c, s, r, nonneg(count)?, dt, op, exclusive))
                }
                Form::Started => match comm_of(me, comm)? {
                    (_, Some(_)) => Err(no_inter(call)),
                    (c, None) => nbc::iscan(c, s, r, nonneg(count)?, dt, op, exclusive).map(Some),
                },
            }
        })
    }
}

/// Runs a gather(v) once its counts are read (`cs`, `ds`: the receive
/// counts and displacements). `intra` is the blocking form on an
/// intracommunicator (the regular form has an algorithm of its own); the
/// other forms run the v-form.
fn gathered(
    on: On,
    s: *const u8,
    sc: usize,
    st: c_int,
    r: *mut u8,
    cs: Vec<usize>,
    ds: Vec<isize>,
    rt_: c_int,
    root: c_int,
    intra: impl FnOnce(CommView, &[usize], &[isize]) -> MpiResult<()>,
) -> Ran {
    match on {
        On::Inter(iv) => done(ic::gatherv(iv, s, sc, st, r, &cs, &ds, rt_, root)),
        On::Intra(c) => done(intra(c, &cs, &ds)),
        On::Start(c, remote) => nbc_start!(remote, igatherv(c, s, sc, st, r, cs, ds, rt_, root)),
    }
}

/// Runs a scatter(v) once its counts are read (`cs`, `ds`: the send counts
/// and displacements), as [`gathered`] a gather(v).
fn scattered(
    on: On,
    s: *const u8,
    cs: Vec<usize>,
    ds: Vec<isize>,
    st: c_int,
    r: *mut u8,
    rc: usize,
    rt_: c_int,
    root: c_int,
    intra: impl FnOnce(CommView, &[usize], &[isize]) -> MpiResult<()>,
) -> Ran {
    match on {
        On::Inter(iv) => done(ic::scatterv(iv, s, &cs, &ds, st, r, rc, rt_, root)),
        On::Intra(c) => done(intra(c, &cs, &ds)),
        On::Start(c, remote) => nbc_start!(remote, iscatterv(c, s, cs, ds, st, r, rc, rt_, root)),
    }
}

/// Runs an allgather(v) once its receive counts and displacements are read.
fn allgathered(
    on: On,
    s: *const c_void,
    sc: c_int,
    st: c_int,
    r: *mut c_void,
    cs: Vec<usize>,
    ds: Vec<isize>,
    rt_: c_int,
) -> Ran {
    // MPI_IN_PLACE is refused on an intercommunicator (check_allgather(v)).
    let (s, sc, r) = (s as *const u8, in_place_count(s, sc)?, r as *mut u8);
    match on {
        On::Inter(iv) => done(ic::allgatherv(iv, s, sc, st, r, &cs, &ds, rt_)),
        On::Intra(c) => done(coll::allgatherv(c, s, sc, st, r, &cs, &ds, rt_)),
        On::Start(c, remote) => nbc_start!(remote, iallgatherv(c, s, sc, st, r, cs, ds, rt_)),
    }
}

/// The TI trace record of MPI_Alltoallv.
type AlltoallvTrace<C> = unsafe fn(u32, *const c_void, *const C, c_int, *const C, c_int, c_int);

/// MPI_Alltoallv and its forms, with counts of `int` or `MPI_Count` and
/// displacements of `int` or `MPI_Aint`; `trace` records the blocking form
/// in a TI trace.
unsafe fn alltoallv<C: Copy + Into<i64>, D: Copy + TryInto<isize>>(
    call: &'static str,
    s: *const c_void,
    scs: *const C,
    sds: *const D,
    st: c_int,
    r: *mut c_void,
    rcs: *const C,
    rds: *const D,
    rt_: c_int,
    comm: c_int,
    req: Option<*mut c_int>,
    trace: Option<AlltoallvTrace<C>>,
) -> c_int {
    // Safety: the caller upholds this function's contract (see its `# Safety`).
    unsafe {
        collective(call, comm, req, |me, form| {
            check_alltoallv(me, s, scs, sds, Err(st), r, rcs, rds, Err(rt_), comm)?;
            coll_check::check(me, comm, CollSig::new(call))?;
            if let Some(trace) = trace {
                form.ti(|| trace(me, s, scs, st, rcs, rt_, comm));
            }
            let on = form.on(me, comm)?;
            let n = on.peers();
            let (rcs, rds) = (ivec(n, rcs)?, dvec(n, rds));
            // With MPI_IN_PLACE the send arguments are not read.
            let (scs, sds) = vecs_if(!in_place(s), n, scs, sds)?;
            alltoallv_on(on, s, scs, sds, st, r, rcs, rds, rt_, false)
        })
    }
}

/// Runs an alltoall(v) once its counts and displacements (in elements of one
/// type per side) are read; `regular`: every block has the same count (for
/// the blocking algorithm's selection). Its other forms run an alltoallw.
fn alltoallv_on(
    on: On,
    s: *const c_void,
    scs: Vec<usize>,
    sds: Vec<isize>,
    st: c_int,
    r: *mut c_void,
    rcs: Vec<usize>,
    rds: Vec<isize>,
    rt_: c_int,
    regular: bool,
) -> Ran {
    if let On::Intra(c) = on {
        // With MPI_IN_PLACE the send arguments are those of the receive.
        let (scs, sds, st) = if in_place(s) {
            (rcs.clone(), rds.clone(), rt_)
        } else {
            (scs, sds, st)
        };
        let (s, r) = (s as *const u8, r as *mut u8);
        return done(coll::alltoallv(c, s, &scs, &sds, st, r, &rcs, &rds, rt_, regular));
    }
    // Displacements in elements become bytes, one type per side (the send
    // type is not read with MPI_IN_PLACE).
    let n = rcs.len();
    let rext = extent(rt_)?;
    let sext = if in_place(s) { 0 } else { extent(st)? };
    let a = Alltoallw {
        sbuf: s as *const u8,
        scounts: scs,
        sdispls: sds.iter().map(|d| d * sext).collect(),
        stypes: vec![st; n],
        rbuf: r as *mut u8,
        rcounts: rcs,
        rdispls: rds.iter().map(|d| d * rext).collect(),
        rtypes: vec![rt_; n],
    };
    match on {
        On::Inter(iv) => done(ic::alltoallw(iv, &a)),
        On::Start(c, remote) => start_alltoallw(c, remote, a).map(Some),
        On::Intra(_) => unreachable!("run above"),
    }
}

/// Starts the alltoallw `a` on `c` (`remote`: an intercommunicator).
fn start_alltoallw(c: CommView, remote: Option<i32>, a: Alltoallw) -> MpiResult<u32> {
    match remote {
        Some(_) if std::ptr::eq(a.sbuf, IN_PLACE) => Err(mpi_err(
            rt::MPI_ERR_BUFFER,
            "MPI_IN_PLACE on an intercommunicator",
        )),
        Some(_) => nbc_inter::ialltoallw(c, a),
        None => nbc::ialltoallw(c, a),
    }
}

/// The size of this rank's (local) group of `comm`.
fn local_size(me: u32, comm: c_int) -> MpiResult<i32> {
    with_world(|w| w.ranks[me as usize].comm(comm).map(|c| c.size()))
}

/// Runs a reduce_scatter(_block) once its receive counts (`counts`, one per
/// rank of the local group, also on an intercommunicator) are read.
fn reduce_scattered(
    on: On,
    me: u32,
    comm: c_int,
    s: *const c_void,
    r: *mut c_void,
    counts: impl FnOnce(i32) -> MpiResult<Vec<usize>>,
    dt: c_int,
    op: c_int,
) -> Ran {
    let (s, r) = (s as *const u8, r as *mut u8);
    match on {
        On::Inter(iv) => {
            let rc = counts(local_size(me, comm)?)?;
            let total: usize = rc.iter().sum();
            done(ic::reduce_scatter(iv, s, r, &rc, total, dt, op))
        }
        On::Intra(c) => done(coll::reduce_scatter(c, s, r, &counts(c.size)?, dt, op)),
        On::Start(c, remote) => nbc_start!(remote, ireduce_scatter(c, s, r, counts(c.size)?, dt, op)),
    }
}

// ------------------------------------------------------------------ reduction operations

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Reduce_local(
    inbuf: *const c_void,
    inout: *mut c_void,
    count: c_int,
    dt: c_int,
    op: c_int,
) -> c_int {
    let g = enter_call("MPI_Reduce_local");
    coll_call!(g, rt::MPI_COMM_WORLD, "MPI_Reduce_local", {
        arg_data(inbuf, count, dt, INBUF)?;
        arg_data(inout, count, dt, INOUTBUF)?;
        arg_op(op)?;
        coll::apply_op(op, dt, inbuf as *const u8, inout as *mut u8, nonneg(count)?)
    })
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Op_create(f: Option<UserFn>, commute: c_int, op: *mut c_int) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        let Some(func) = f else { return rt::MPI_ERR_OP };
        let h = with_world(|w| {
            w.ops.push(Some(Op::User {
                func,
                commutative: commute != 0,
            }));
            let h = (w.ops.len() - 1) as c_int;
            w.op_owner.set(h, rt::current_rank());
            h
        });
        set(op, h);
        MPI_SUCCESS
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Op_free(op: *mut c_int) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        if *op > 14 {
            with_world(|w| {
                if let Some(o) = w.ops.get_mut(*op as usize) {
                    *o = None;
                }
            });
        }
        *op = 0;
        MPI_SUCCESS
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Op_commutative(op: c_int, commute: *mut c_int) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        match with_world(|w| w.op(op)) {
            Ok(o) => {
                set(commute, o.is_commutative() as c_int);
                MPI_SUCCESS
            }
            Err(e) => e.code,
        }
    }
}
// ------------------------------------------------------------------ argument checks
//
// The checks two collectives share (the others check their arguments at the
// top of their body). Each runs before the collective matching check so a
// bad argument is reported as itself; [`CollArgs`] knows which arguments are
// significant where, also on an intercommunicator.

/// MPI_Allreduce, MPI_Scan, MPI_Exscan (and their `I` forms).
fn check_allreduce(
    me: u32,
    s: *const c_void,
    r: *const c_void,
    count: c_int,
    dt: c_int,
    op: c_int,
    comm: c_int,
) -> MpiResult<()> {
    let a = CollArgs::new(me, comm, None)?;
    a.data(At::All, InPlace::Anywhere, RSEND, s, count, dt)?;
    a.data(At::All, InPlace::No, RRECV, r, count, dt)?;
    arg_op(op)
}

/// MPI_Allgather and MPI_Alltoall (and their `I` forms).
fn check_allgather(
    me: u32,
    s: *const c_void,
    sc: c_int,
    st: c_int,
    r: *const c_void,
    rc: c_int,
    rt_: c_int,
    comm: c_int,
) -> MpiResult<()> {
    let a = CollArgs::new(me, comm, None)?;
    a.data(At::All, InPlace::Anywhere, SEND, s, sc, st)?;
    a.data(At::All, InPlace::No, RECV, r, rc, rt_)
}

/// MPI_Alltoallv, MPI_Alltoallw, MPI_Alltoallv_c (and the `I` forms):
/// `Err(type)` for one type per side, `Ok(array)` for the `w` form.
unsafe fn check_alltoallv<C: Copy + Into<i64>, D>(
    me: u32,
    s: *const c_void,
    scs: *const C,
    sds: *const D,
    st: Result<*const c_int, c_int>,
    r: *const c_void,
    rcs: *const C,
    rds: *const D,
    rt_: Result<*const c_int, c_int>,
    comm: c_int,
) -> MpiResult<()> {
    let a = CollArgs::new(me, comm, None)?;
    // Safety: the arrays hold one entry per process (the caller's contract).
    unsafe {
        a.data_v(At::All, InPlace::Anywhere, SEND, s, scs, sds, st)?;
        a.data_v(At::All, InPlace::No, RECV, r, rcs, rds, rt_)
    }
}
