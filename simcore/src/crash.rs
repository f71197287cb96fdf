//! Turning crashes inside actors into clear reports.
//!
//! User code (C code of an MPI rank, typically) may dereference a bad pointer,
//! call `abort()` or overflow its coroutine stack. The kernel installs handlers
//! for SIGSEGV, SIGBUS, SIGFPE, SIGILL and SIGABRT on an alternate signal stack;
//! the handler names the actor that was running, says whether the fault hit the
//! guard page below its stack (a stack overflow) and exits with status
//! `128 + signal`. Nothing here allocates in the handler.

use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};

struct ActorInfo {
    name: String,
    guard_lo: usize,
    guard_hi: usize,
    stack_size: usize,
}

struct Registry(UnsafeCell<Vec<ActorInfo>>);
// Safety: the simulator runs all actors on one thread; the registry is written
// only from that thread, and read by the signal handler running on it.
unsafe impl Sync for Registry {}

static REGISTRY: Registry = Registry(UnsafeCell::new(Vec::new()));
static CURRENT: AtomicI64 = AtomicI64::new(-1);
static INSTALLED: AtomicBool = AtomicBool::new(false);

/// Records the name and guard-page range of an actor's stack.
pub(crate) fn register_actor(id: u32, name: String, guard_lo: usize, guard_hi: usize, stack_size: usize) {
    // Safety: single simulation thread (see `Registry`).
    let reg = unsafe { &mut *REGISTRY.0.get() };
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
}

/// Sets the actor that is running now (`None` = the kernel itself).
pub(crate) fn set_current(id: Option<u32>) {
    CURRENT.store(id.map_or(-1, i64::from), Ordering::Relaxed);
}

/// Installs the crash handlers once per process.
pub fn install() {
    if INSTALLED.swap(true, Ordering::SeqCst) {
        return;
    }
    // Safety: plain libc calls with valid arguments; the alternate stack is leaked on purpose.
    unsafe {
        let size = 256 * 1024;
        let stack = libc::mmap(
            std::ptr::null_mut(),
            size,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        );
        if stack != libc::MAP_FAILED {
            let ss = libc::stack_t {
                ss_sp: stack,
                ss_flags: 0,
                ss_size: size,
            };
            libc::sigaltstack(&ss, std::ptr::null_mut());
        }
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
    let cur = CURRENT.load(Ordering::Relaxed);
    // Safety: read-only access on the simulation thread.
    let reg = unsafe { &*REGISTRY.0.get() };
    let _ = match (cur >= 0).then(|| reg.get(cur as usize)).flatten() {
        Some(a) if sig != libc::SIGABRT && addr >= a.guard_lo && addr < a.guard_hi => writeln!(
            out,
            "\nerror: {} overflowed its stack ({} KiB); raise it with --cfg=contexts/stack-size:<KiB>",
            a.name,
            a.stack_size / 1024
        ),
        Some(a) if sig == libc::SIGSEGV || sig == libc::SIGBUS => {
            writeln!(
                out,
                "\nerror: {} crashed: {} at address {:#x}",
                a.name, cause, addr
            )
        }
        Some(a) => writeln!(out, "\nerror: {} crashed: {}", a.name, cause),
        None => writeln!(
            out,
            "\nerror: the simulator crashed: {cause} (not inside an actor)"
        ),
    };
    // Safety: flushing C stdio so the app's earlier output is not lost, then
    // writing and exiting with async-signal-safe calls.
    unsafe {
        libc::fflush(std::ptr::null_mut());
        libc::write(2, out.buf.as_ptr().cast(), out.len);
        libc::_exit(128 + sig);
    }
}

/// The actor running now, if any (readable from foreign-function entry points).
pub fn current_actor() -> Option<u32> {
    let c = CURRENT.load(Ordering::Relaxed);
    (c >= 0).then_some(c as u32)
}
