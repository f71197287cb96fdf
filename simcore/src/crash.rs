//! Turning crashes inside actors into clear reports.
//!
//! User code (C code of an MPI rank, typically) may dereference a bad pointer,
//! call `abort()` or overflow its coroutine stack. The kernel installs handlers
//! for SIGSEGV, SIGBUS, SIGFPE, SIGILL and SIGABRT on an alternate signal stack;
//! the handler names the actor that was running, says whether the fault hit the
//! guard page below its stack (a stack overflow) and exits with status
//! `128 + signal`. Nothing here allocates in the handler.
//!
//! Everything is per thread: each thread that runs a simulation has its own actor
//! registry, its own "current actor" and its own alternate signal stack (a signal
//! such as SIGSEGV is delivered to the thread that faulted, and `sigaltstack` is a
//! per-thread setting), so simulations may run concurrently on several threads (as
//! `cargo test` does). The signal handlers themselves are process-wide and installed once.

use std::cell::{Cell, UnsafeCell};
use std::sync::Once;

struct ActorInfo {
    name: String,
    guard_lo: usize,
    guard_hi: usize,
    stack_size: usize,
}

thread_local! {
    /// The actors of the simulation running on this thread, indexed by id. Written only
    /// by `register_actor`, read by the signal handler of this thread.
    static REGISTRY: UnsafeCell<Vec<ActorInfo>> = const { UnsafeCell::new(Vec::new()) };
    /// The actor running now on this thread. A `Copy` type without destructor and with a
    /// constant initializer: reading it is a plain thread-local load, also from the handler.
    static CURRENT: Cell<Option<u32>> = const { Cell::new(None) };
    /// This thread's alternate signal stack, created by the first `install` on the thread.
    static ALT_STACK: AltStack = AltStack::new();
    /// The guard page of this thread's scratch stack (`engine::on_scratch_stack`), and its
    /// size; zeros before it exists.
    static SCRATCH_GUARD: Cell<(usize, usize, usize)> = const { Cell::new((0, 0, 0)) };
}

/// Records the guard-page range of this thread's scratch stack: a fault there is the
/// simulator's own stack overflow, not the running actor's.
pub(crate) fn register_scratch_stack(guard_lo: usize, guard_hi: usize, stack_size: usize) {
    SCRATCH_GUARD.with(|g| g.set((guard_lo, guard_hi, stack_size)));
}

/// What a fatal signal at `addr` was, for the report.
#[derive(Debug, PartialEq, Eq)]
enum Fault {
    /// The running actor ran into its stack's guard page.
    ActorStackOverflow,
    /// Code running on the scratch stack ran into its guard page.
    ScratchStackOverflow,
    /// Anything else.
    Other,
}

fn classify(
    sig: libc::c_int,
    addr: usize,
    actor_guard: Option<(usize, usize)>,
    scratch_guard: (usize, usize),
) -> Fault {
    if sig == libc::SIGABRT {
        return Fault::Other;
    }
    match actor_guard {
        Some((lo, hi)) if addr >= lo && addr < hi => Fault::ActorStackOverflow,
        _ if addr >= scratch_guard.0 && addr < scratch_guard.1 => Fault::ScratchStackOverflow,
        _ => Fault::Other,
    }
}

static INSTALL_HANDLERS: Once = Once::new();

/// Records the name and guard-page range of an actor's stack (in this thread's registry).
pub(crate) fn register_actor(id: u32, name: String, guard_lo: usize, guard_hi: usize, stack_size: usize) {
    REGISTRY.with(|reg| {
        // Safety: the registry is only touched by this thread, and no reference to it is
        // held across this call; the handler of this thread only reads it while an actor
        // runs (`CURRENT` is set), never while the kernel registers one.
        let reg = unsafe { &mut *reg.get() };
        let i = id as usize;
        while reg.len() <= i {
            reg.push(ActorInfo {
                name: String::new(),
                guard_lo: 0,
                guard_hi: 0,
                stack_size: 0,
            });
        }
        reg[i] = ActorInfo {
            name,
            guard_lo,
            guard_hi,
            stack_size,
        };
    });
}

/// Sets the actor that is running now on this thread (`None` = the kernel itself).
pub(crate) fn set_current(id: Option<u32>) {
    CURRENT.with(|c| c.set(id));
}

/// Installs the crash handlers (once per process) and this thread's alternate signal
/// stack (once per thread). Call it on every thread that runs a simulation.
pub fn install() {
    ALT_STACK.with(|_| {});
    INSTALL_HANDLERS.call_once(|| {
        // Safety: plain libc calls with valid arguments.
        unsafe {
            for sig in [
                libc::SIGSEGV,
                libc::SIGBUS,
                libc::SIGFPE,
                libc::SIGILL,
                libc::SIGABRT,
            ] {
                let mut sa: libc::sigaction = std::mem::zeroed();
                sa.sa_sigaction = handler as *const () as usize;
                sa.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
                libc::sigemptyset(&mut sa.sa_mask);
                libc::sigaction(sig, &sa, std::ptr::null_mut());
            }
        }
    });
}

/// A thread's alternate signal stack, unregistered and unmapped when the thread exits.
struct AltStack {
    base: *mut libc::c_void,
}

/// Size of the alternate stack: the handler formats into a fixed buffer and calls
/// `fflush`, far below this; pages are only committed when touched.
const ALT_STACK_SIZE: usize = 256 * 1024;

impl AltStack {
    fn new() -> AltStack {
        // Safety: plain libc calls with valid arguments; the mapping is owned by the
        // returned value.
        unsafe {
            let base = libc::mmap(
                std::ptr::null_mut(),
                ALT_STACK_SIZE,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            );
            if base == libc::MAP_FAILED {
                return AltStack {
                    base: std::ptr::null_mut(),
                };
            }
            let ss = libc::stack_t {
                ss_sp: base,
                ss_flags: 0,
                ss_size: ALT_STACK_SIZE,
            };
            if libc::sigaltstack(&ss, std::ptr::null_mut()) != 0 {
                libc::munmap(base, ALT_STACK_SIZE);
                return AltStack {
                    base: std::ptr::null_mut(),
                };
            }
            AltStack { base }
        }
    }
}

impl Drop for AltStack {
    fn drop(&mut self) {
        if self.base.is_null() {
            return;
        }
        // Safety: disables the alternate stack only if it is still ours (the standard
        // library may already have disabled it at thread exit), then unmaps our mapping.
        unsafe {
            let mut cur: libc::stack_t = std::mem::zeroed();
            if libc::sigaltstack(std::ptr::null(), &mut cur) == 0
                && cur.ss_sp == self.base
                && cur.ss_flags & libc::SS_DISABLE == 0
            {
                let off = libc::stack_t {
                    ss_sp: std::ptr::null_mut(),
                    ss_flags: libc::SS_DISABLE,
                    ss_size: 0,
                };
                libc::sigaltstack(&off, std::ptr::null_mut());
            }
            libc::munmap(self.base, ALT_STACK_SIZE);
        }
    }
}

struct StackBuf {
    buf: [u8; 512],
    len: usize,
}

impl std::fmt::Write for StackBuf {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        let n = s.len().min(self.buf.len() - self.len);
        self.buf[self.len..self.len + n].copy_from_slice(&s.as_bytes()[..n]);
        self.len += n;
        Ok(())
    }
}

/// The current actor's name, guard range and stack size, read without allocating.
fn with_current_actor<R>(f: impl FnOnce(Option<&ActorInfo>) -> R) -> R {
    // `CURRENT` has a constant initializer and no destructor: no lazy initialization.
    let Some(id) = CURRENT.try_with(Cell::get).ok().flatten() else {
        return f(None);
    };
    // `REGISTRY` was initialized on this thread before any actor could run on it
    // (`register_actor` precedes `set_current(Some(..))`), so this access does not
    // register a destructor; once the thread's destructors have run it fails cleanly.
    match REGISTRY.try_with(|reg| reg.get().cast_const()) {
        // Safety: read-only access from this thread while an actor runs, when the
        // kernel is not modifying the registry.
        Ok(reg) => f(unsafe { &*reg }.get(id as usize)),
        Err(_) => f(None),
    }
}

extern "C" fn handler(sig: libc::c_int, info: *mut libc::siginfo_t, _ctx: *mut libc::c_void) {
    use std::fmt::Write;
    // Safety: `info` is provided by the kernel for SA_SIGINFO handlers.
    let addr = unsafe { (*info).si_addr() } as usize;
    let mut out = StackBuf {
        buf: [0; 512],
        len: 0,
    };
    let cause = match sig {
        libc::SIGSEGV => "SIGSEGV (invalid memory access)",
        libc::SIGBUS => "SIGBUS (bus error)",
        libc::SIGFPE => "SIGFPE (arithmetic error)",
        libc::SIGILL => "SIGILL (illegal instruction)",
        libc::SIGABRT => "SIGABRT (abort)",
        _ => "a fatal signal",
    };
    let (scratch_lo, scratch_hi, scratch_size) = SCRATCH_GUARD.try_with(Cell::get).unwrap_or((0, 0, 0));
    let _ = with_current_actor(|actor| {
        match (
            actor,
            classify(
                sig,
                addr,
                actor.map(|a| (a.guard_lo, a.guard_hi)),
                (scratch_lo, scratch_hi),
            ),
        ) {
            (Some(a), Fault::ActorStackOverflow) => writeln!(
                out,
                "\nerror: {} overflowed its stack ({} KiB); raise it with --cfg=contexts/stack-size:<KiB>",
                a.name,
                a.stack_size / 1024
            ),
            (_, Fault::ScratchStackOverflow) => writeln!(
            out,
            "\nerror: the simulator overflowed its own scratch stack ({} KiB) while handling a call of {}: \
             a bug in the simulator, not in the program; please report it",
            scratch_size / 1024,
            actor.map_or("no actor", |a| a.name.as_str())
        ),
            (Some(a), _) if sig == libc::SIGSEGV || sig == libc::SIGBUS => {
                writeln!(
                    out,
                    "\nerror: {} crashed: {} at address {:#x}",
                    a.name, cause, addr
                )
            }
            (Some(a), _) => writeln!(out, "\nerror: {} crashed: {}", a.name, cause),
            (None, _) => writeln!(
                out,
                "\nerror: the simulator crashed: {cause} (not inside an actor)"
            ),
        }
    });
    // Safety: flushing C stdio so the app's earlier output is not lost, then
    // writing and exiting with async-signal-safe calls.
    unsafe {
        libc::fflush(std::ptr::null_mut());
        libc::write(2, out.buf.as_ptr().cast(), out.len);
        libc::_exit(128 + sig);
    }
}

/// The actor running now on this thread, if any (readable from foreign-function entry
/// points; a plain thread-local load).
pub fn current_actor() -> Option<u32> {
    CURRENT.with(Cell::get)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn faults_in_a_guard_page_are_named_by_whose_stack_it_guards() {
        let (actor, scratch) = (Some((0x1000, 0x2000)), (0x8000, 0x9000));
        assert_eq!(
            classify(libc::SIGSEGV, 0x1800, actor, scratch),
            Fault::ActorStackOverflow
        );
        assert_eq!(
            classify(libc::SIGSEGV, 0x8000, actor, scratch),
            Fault::ScratchStackOverflow
        );
        assert_eq!(
            classify(libc::SIGSEGV, 0x8fff, None, scratch),
            Fault::ScratchStackOverflow
        );
        assert_eq!(classify(libc::SIGSEGV, 0x9000, actor, scratch), Fault::Other);
        assert_eq!(classify(libc::SIGABRT, 0x8800, actor, scratch), Fault::Other);
        // No scratch stack yet: its range is empty.
        assert_eq!(classify(libc::SIGSEGV, 0, None, (0, 0)), Fault::Other);
    }

    #[test]
    fn current_actor_and_registry_are_per_thread() {
        install();
        register_actor(0, "main-0".into(), 0x1000, 0x2000, 65536);
        set_current(Some(0));
        let other = std::thread::spawn(|| {
            install();
            assert_eq!(current_actor(), None);
            with_current_actor(|a| assert!(a.is_none()));
            register_actor(0, "other-0".into(), 0x3000, 0x4000, 65536);
            register_actor(1, "other-1".into(), 0x5000, 0x6000, 65536);
            set_current(Some(1));
            assert_eq!(current_actor(), Some(1));
            with_current_actor(|a| assert_eq!(a.map(|a| a.name.as_str()), Some("other-1")));
            // This thread has its own alternate signal stack.
            // Safety: test data, valid for the sizes and types used.
            let mut ss: libc::stack_t = unsafe { std::mem::zeroed() };
            // Safety: test data, valid for the sizes and types used.
            assert_eq!(unsafe { libc::sigaltstack(std::ptr::null(), &mut ss) }, 0);
            let ours = ALT_STACK.with(|s| s.base);
            assert!(!ours.is_null());
            assert_eq!(ss.ss_sp, ours);
            assert_eq!(ss.ss_flags & libc::SS_DISABLE, 0);
            ours as usize
        });
        let other_stack = other.join().expect("the other thread succeeds");
        assert_eq!(current_actor(), Some(0));
        with_current_actor(|a| {
            let a = a.expect("actor 0 registered on this thread");
            assert_eq!((a.name.as_str(), a.guard_lo), ("main-0", 0x1000));
        });
        // Safety: test data, valid for the sizes and types used.
        let mut ss: libc::stack_t = unsafe { std::mem::zeroed() };
        // Safety: test data, valid for the sizes and types used.
        assert_eq!(unsafe { libc::sigaltstack(std::ptr::null(), &mut ss) }, 0);
        assert_eq!(ss.ss_sp, ALT_STACK.with(|s| s.base));
        assert_ne!(ss.ss_sp as usize, other_stack);
        set_current(None);
        assert_eq!(current_actor(), None);
    }
}
