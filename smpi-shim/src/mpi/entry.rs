//! What every MPI entry point does around its work: stop the computation
//! benchmark (inject the time spent in user code since the previous MPI call),
//! restart it on return, and turn errors into MPI error-handler behaviour.

use crate::mpi::{self as rt, with_world, MpiError, World, MPI_ERRORS_RETURN};
use simcore::Ctx;

/// Thread CPU time in seconds.
pub(crate) fn thread_cpu_time() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // Safety: valid pointer to a timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

/// Guard created at the start of each MPI call; its drop restarts the benchmark.
pub(crate) struct Entry {
    pub me: u32,
    /// The program's MPI call, its start date and its beginning's number
    /// ([`crate::mpi::trace::Timeline::begin`]), when a timeline is recorded.
    traced: Option<(&'static str, f64, u64)>,
    /// The program's MPI call (`None`: the library's own entries, such as
    /// `smpi_execute` and kernel models, which run no MPI progress). Whether
    /// it progresses ([`progresses`]) is asked only under `smpi/probe-sees:progressed`.
    call: Option<&'static str>,
}

/// Starts MPI call `call` of the program on the current rank: ends the run
/// when MPI is not initialized or already finalized (the call is erroneous),
/// then as [`enter`].
pub(crate) fn enter_call(call: &'static str) -> Entry {
    let me = rt::current_rank();
    let (finalized, traced, entered) = with_world(|w| {
        let traced = w.trace.is_some();
        let r = &mut w.ranks[me as usize];
        r.user_call = Some(call);
        let (initialized, finalized) = (r.initialized, r.finalized);
        // Entered in the same borrow unless the call is erroneous (the run ends below).
        let entered = (initialized && !finalized).then(|| enter_world(w, me));
        (finalized, traced, entered)
    });
    let Some((flops, ctx)) = entered else {
        outside_mpi(me, call, finalized)
    };
    let mut entry = entered_with(me, flops, ctx);
    entry.call = Some(call);
    if traced {
        entry.traced = with_world(|w| {
            let now = w.kernel.now();
            w.trace.as_mut().map(|t| (call, now, t.begin()))
        });
    }
    entry
}

/// Ends the run: the program made MPI call `call` before `MPI_Init` or after
/// `MPI_Finalize` (out of line: the string formatting stays out of every call's frame).
#[cold]
#[inline(never)]
fn outside_mpi(me: u32, call: &'static str, finalized: bool) -> ! {
    if finalized {
        abort_run(me, format!("{call} called after MPI_Finalize"));
    }
    abort_run(me, format!("{call} called before MPI_Init"))
}

/// Runs `compute` (which injects `flops` of the program's computation on
/// rank `me`) and records it as `name` on the timeline when computation is
/// traced, and in the time-independent trace.
pub(crate) fn traced_computation(me: u32, name: &str, flops: f64, compute: impl FnOnce()) {
    crate::mpi::ti_trace::ti!(if with_world(|w| w.cfg.tracing_computing) {
        crate::mpi::ti_trace::compute(me, flops)
    });
    let start = with_world(|w| {
        w.trace
            .as_mut()
            .filter(|t| t.computing())
            .map(|t| (t.intern(name), w.kernel.now(), t.begin()))
    });
    compute();
    if let Some((name, start, begun)) = start {
        with_world(|w| {
            let now = w.kernel.now();
            if let Some(t) = &mut w.trace {
                t.span(me, name, start, now, begun);
            }
        });
    }
}

/// Whether MPI call `call` runs the MPI library's progress engine (Open MPI's
/// ob1 queues arrived messages there): the clock, handle and datatype
/// queries do not.
fn progresses(call: &str) -> bool {
    !(call.starts_with("MPI_Wti")
        || call.starts_with("MPI_Comm_rank")
        || call.starts_with("MPI_Comm_size")
        || call.starts_with("MPI_Type_")
        || call.starts_with("MPI_Get_")
        || call.starts_with("MPI_Address"))
}

/// Starts an MPI call on the current rank: injects the computation time
/// measured since the rank last left MPI (when `smpi/simulate-computation`).
pub(crate) fn enter() -> Entry {
    let me = rt::current_rank();
    let (flops, ctx) = with_world(|w| enter_world(w, me));
    entered_with(me, flops, ctx)
}

/// [`enter`]'s part under the world borrow: counts the call in and returns the computation
/// to inject (flops) and the rank's context.
fn enter_world(w: &mut World, me: u32) -> (f64, &'static Ctx) {
    let r = &mut w.ranks[me as usize];
    r.in_mpi += 1;
    if r.in_mpi > 1 || !w.cfg.simulate_computation {
        return (0.0, r.ctx());
    }
    let elapsed = thread_cpu_time() - r.bench_start;
    let flops = if elapsed >= w.cfg.cpu_threshold && w.cfg.cpu_threshold >= 0.0 {
        elapsed * w.cfg.host_speed
    } else {
        0.0
    };
    (flops, r.ctx())
}

/// [`enter`]'s part after the borrow: injects the computation.
fn entered_with(me: u32, flops: f64, ctx: &'static Ctx) -> Entry {
    if flops > 0.0 {
        traced_computation(me, "computation", flops, || ctx.compute(flops));
    }
    Entry {
        me,
        traced: None,
        call: None,
    }
}

impl Drop for Entry {
    fn drop(&mut self) {
        with_world(|w| {
            if let (Some((call, start, begun)), Some(t)) = (self.traced, w.trace.as_mut()) {
                t.span(self.me, call, start, w.kernel.now(), begun);
            }
            let progressed = w.cfg.probe_sees_progressed;
            let r = &mut w.ranks[self.me as usize];
            r.in_mpi = r.in_mpi.saturating_sub(1);
            if progressed && r.in_mpi == 0 && self.call.is_some_and(progresses) {
                let epoch = &mut w.progress_epochs[self.me as usize];
                *epoch = epoch.wrapping_add(1);
            }
            if r.in_mpi == 0 && w.cfg.simulate_computation {
                r.bench_start = thread_cpu_time();
            }
        });
    }
}

/// Injects `seconds` of computation on the current rank's host, scaled like
/// measured time (`smpi_execute`), or exactly (`benched`: seconds of the
/// simulated host).
pub(crate) fn execute_seconds(me: u32, seconds: f64, benched: bool) {
    let (flops, ctx) = with_world(|w| {
        let r = &w.ranks[me as usize];
        let speed = if benched {
            w.platform.host(w.hosts[me as usize]).speed
        } else {
            w.cfg.host_speed
        };
        (seconds * speed, r.ctx())
    });
    if flops > 0.0 {
        traced_computation(me, "smpi_execute", flops, || ctx.compute(flops));
    }
}

/// Ends the whole run because of a fatal error on rank `me`.
pub(crate) fn abort_run(me: u32, message: String) -> ! {
    let ctx = with_world(|w| w.ranks[me as usize].ctx());
    ctx.exit(Err(message))
}

/// First handle of the error handlers a program creates
/// (`MPI_Comm_create_errhandler`); below are `MPI_ERRHANDLER_NULL`,
/// `MPI_ERRORS_ARE_FATAL` and `MPI_ERRORS_RETURN`.
pub(crate) const FIRST_USER_ERRHANDLER: i32 = 3;

/// `MPI_Comm_errhandler_function`: `void (MPI_Comm *, int *, ...)`.
pub(crate) type CommErrhandlerFn = unsafe extern "C" fn(*mut i32, *mut i32, ...);

/// The function of error handler `handle`, if it is one the program created.
pub(crate) fn user_errhandler(handle: i32) -> Option<CommErrhandlerFn> {
    let i = usize::try_from(handle - FIRST_USER_ERRHANDLER).ok()?;
    let f = with_world(|w| w.errhandlers.get(i).copied())?;
    // Safety: registered by MPI_Comm_create_errhandler from a function of this type.
    Some(unsafe { std::mem::transmute::<usize, CommErrhandlerFn>(f) })
}

/// The error handler of `comm` on rank `me` (`MPI_COMM_WORLD`'s when `comm`
/// is not a valid communicator, as MPI says).
fn errhandler_of(me: u32, comm: i32) -> i32 {
    with_world(|w| {
        let r = &w.ranks[me as usize];
        match r.comm(comm) {
            Ok(c) => c.errhandler,
            Err(_) => r.comms[1].as_ref().map_or(1, |c| c.errhandler),
        }
    })
}

/// Applies the communicator's error handler to an error of `call`:
/// `MPI_ERRORS_RETURN` returns the code, a handler the program created is
/// called and then the code returned, otherwise the run ends with a message.
pub(crate) fn handle_error(me: u32, comm: i32, call: &str, e: MpiError) -> i32 {
    let handler = errhandler_of(me, comm);
    if handler == MPI_ERRORS_RETURN {
        return e.code;
    }
    if let Some(f) = user_errhandler(handler) {
        let (mut c, mut code) = (comm, e.code);
        // Safety: the program's handler, called as MPI specifies (no world borrow held).
        unsafe { f(&mut c, &mut code) };
        return e.code;
    }
    abort_run(me, format!("{call}: {} ({})", e.message, short_class(e.code)))
}

pub(crate) fn short_class(code: i32) -> &'static str {
    let s = rt::error_string(code);
    s.split(':').next().unwrap_or(s)
}

/// `Result` of a call → MPI return code.
pub(crate) fn result<T>(me: u32, comm: i32, call: &str, r: Result<T, MpiError>) -> i32 {
    match r {
        Ok(_) => rt::MPI_SUCCESS,
        Err(e) => handle_error(me, comm, call, e),
    }
}
