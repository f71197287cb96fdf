//! Memory folding (SMPI's shared malloc): large buffers whose contents do not
//! matter are backed by one small block of physical memory, mapped again and
//! again, so a simulated rank can "allocate" gigabytes at almost no cost.
//!
//! - `global` (default): one anonymous file of `smpi/shared-malloc-blocksize`
//!   bytes (memfd) is mapped over every whole block of each shared range; the
//!   page-aligned tail maps the start of the same file. All folded buffers of
//!   all ranks share that memory: their contents are garbage.
//! - `local`: one file per call site (`file:line`), as large as the largest
//!   request from that site, mapped once per allocation: ranks allocating at the
//!   same site really share the contents.
//! - `no`: plain `malloc`.
//!
//! `SMPI_PARTIAL_SHARED_MALLOC` folds only the given `[start, stop)` byte
//! ranges; the rest stays private. `smpi/auto-shared-malloc-thresh` folds every
//! `malloc`/`calloc`/`realloc` of at least that many bytes (smpicc routes the
//! program's allocation calls here).
//!
//! *Copy-on-write folding* (`smpi/auto-shared-malloc-cow-thresh`, our
//! extension): allocations between that size and the auto threshold are
//! folded read-only over a file nobody writes, so they read as zeros (like
//! fresh memory: `calloc` needs nothing more); the first write to a page (by
//! the program) replaces that page and its two neighbours with private zeroed
//! memory, from then on real.
//! Messages carrying real (private) data make the pages they land on private
//! too; folded data is not copied. This keeps small control
//! data that lives inside large buffers (HPL's pivot vector inside its panel
//! buffers) correct while the bulk stays folded. Freed regions are folded
//! again and recycled (HPL allocates and frees its panels at every step).
//!
//! Each folded block is one kernel mapping; we count them and fail early, with
//! a clear message, before `vm.max_map_count` would be exceeded. Messages whose
//! buffers lie in folded ranges copy only the private parts ([`private_ranges`]).

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::ffi::c_void;

/// One folded allocation.
struct Alloc {
    size: usize,
    /// Reserved bytes (a multiple of the page, or of 1 MiB for pooled regions).
    span: usize,
    /// Fully folded regions are recycled through a pool: Some(is_cow).
    poolable: Option<bool>,
    /// Copy-on-write allocations: pages already made private.
    cow: Option<Box<[u64]>>,
    /// Private `[start, end)` byte ranges (relative), sorted.
    private: Vec<(usize, usize)>,
    /// Mappings this allocation uses (for the map count).
    mappings: usize,
}

struct State {
    mode: Mode,
    block: usize,
    fd: i32,
    /// Backs copy-on-write regions; mapped read-only only, so it stays zero.
    zero_fd: i32,
    hugepage: bool,
    sites: BTreeMap<String, (i32, usize)>,
    allocs: BTreeMap<usize, Alloc>,
    mappings: usize,
    max_mappings: usize,
    auto_thresh: usize,
    cow_thresh: usize,
    /// Freed fully folded regions by (span, copy-on-write), ready for reuse.
    pool: BTreeMap<(usize, bool), Vec<(usize, Alloc)>>,
    pooled: usize,
}

/// Regions kept for reuse at most (mmap/munmap churn is the cost they avoid).
const POOL_MAX: usize = 512;
const MIB: usize = 1 << 20;

/// Folding mode (`smpi/shared-malloc`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Global,
    Local,
    No,
}

thread_local! {
    static STATE: RefCell<Option<State>> = const { RefCell::new(None) };
}

const PAGE: usize = 4096;

/// An error setting up or performing a folded allocation.
#[derive(Debug)]
pub struct FoldError(pub String);

/// Configures folding for this run.
pub fn init(
    mode: &str,
    block: usize,
    hugepage: &str,
    auto_thresh: usize,
    cow_thresh: usize,
) -> Result<(), FoldError> {
    let mode = match mode {
        "global" | "yes" => Mode::Global,
        "local" => Mode::Local,
        _ => Mode::No,
    };
    let hugepage = !hugepage.is_empty();
    let block = if hugepage {
        // whole huge pages (2 MiB): the block is that many huge pages of memory
        const HUGE: usize = 2 << 20;
        block.max(HUGE).div_ceil(HUGE) * HUGE
    } else {
        block.max(PAGE).div_ceil(PAGE) * PAGE
    };
    let max_map = std::fs::read_to_string("/proc/sys/vm/max_map_count")
        .ok()
        .and_then(|s| s.trim().parse::<usize>().ok())
        .unwrap_or(65530);
    let in_use = std::fs::read_to_string("/proc/self/maps")
        .map(|s| s.lines().count())
        .unwrap_or(1000);
    STATE.with(|s| {
        *s.borrow_mut() = Some(State {
            mode,
            block,
            fd: -1,
            zero_fd: -1,
            hugepage,
            sites: BTreeMap::new(),
            allocs: BTreeMap::new(),
            mappings: 0,
            // Keep room for stacks, program copies and the allocator.
            max_mappings: max_map.saturating_sub(in_use).saturating_sub(max_map / 8),
            auto_thresh,
            cow_thresh,
            pool: BTreeMap::new(),
            pooled: 0,
        })
    });
    if cow_thresh > 0 {
        install_cow_handler();
    }
    Ok(())
}

/// Stops folding (end of run).
pub fn reset() {
    STATE.with(|s| *s.borrow_mut() = None);
}

/// The `smpi/auto-shared-malloc-thresh` in force (0 = off).
pub fn auto_threshold() -> usize {
    STATE.with(|s| s.borrow().as_ref().map_or(0, |st| st.auto_thresh))
}

/// The `smpi/auto-shared-malloc-cow-thresh` in force (0 = off).
pub fn cow_threshold() -> usize {
    STATE.with(|s| s.borrow().as_ref().map_or(0, |st| st.cow_thresh))
}

fn memfd(name: &str, size: usize, hugepage: bool) -> Result<i32, FoldError> {
    let cname = std::ffi::CString::new(name).expect("no NUL");
    let flags = libc::MFD_CLOEXEC | if hugepage { libc::MFD_HUGETLB } else { 0 };
    // Safety: plain syscalls on a descriptor we own.
    unsafe {
        let fd = libc::memfd_create(cname.as_ptr(), flags);
        if fd < 0 {
            return Err(FoldError(format!(
                "cannot create the folding file{}: {}",
                if hugepage {
                    " with huge pages (is smpi/shared-malloc-hugepage configured?)"
                } else {
                    ""
                },
                std::io::Error::last_os_error()
            )));
        }
        if libc::ftruncate(fd, size as i64) != 0 {
            return Err(FoldError(format!(
                "cannot size the folding file: {}",
                std::io::Error::last_os_error()
            )));
        }
        Ok(fd)
    }
}

/// Allocates `size` bytes whose `shared` byte ranges are folded. Returns null
/// for size 0.
pub fn alloc(size: usize, shared: &[(usize, usize)], site: &str) -> Result<*mut u8, FoldError> {
    alloc_mode(size, shared, site, false)
}

/// Allocates `size` bytes folded copy-on-write (see the module docs).
pub fn alloc_cow(size: usize) -> Result<*mut u8, FoldError> {
    alloc_mode(size, &[(0, size)], "auto-cow", true)
}

fn alloc_mode(size: usize, shared: &[(usize, usize)], site: &str, cow: bool) -> Result<*mut u8, FoldError> {
    STATE.with(|s| {
        let mut s = s.borrow_mut();
        let Some(st) = s.as_mut() else {
            return Err(FoldError("shared malloc used outside a simulation".into()));
        };
        if size == 0 {
            return Ok(std::ptr::null_mut());
        }
        if st.mode == Mode::No {
            // Safety: plain allocation.
            return Ok(unsafe { libc::malloc(size) } as *mut u8);
        }
        // Whole-buffer folds of 1 MiB or more use 1 MiB-rounded regions that
        // are recycled: programs such as HPL allocate and free large buffers
        // at every step.
        let poolable = st.mode == Mode::Global && size >= MIB && shared == [(0, size)];
        let span = if poolable { size.div_ceil(MIB) * MIB } else { size.div_ceil(PAGE) * PAGE };
        if poolable {
            if let Some((base, mut a)) = st.pool.get_mut(&(span, cow)).and_then(|v| v.pop()) {
                st.pooled -= 1;
                a.size = size;
                st.allocs.insert(base, a);
                return Ok(base as *mut u8);
            }
        }
        let shared_full = [(0, span)];
        let shared: &[(usize, usize)] = if poolable { &shared_full } else { shared };
        // Safety: reserving fresh address space.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                span,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(FoldError(format!("cannot reserve {size} bytes: {}", std::io::Error::last_os_error())));
        }
        let base = base as usize;
        let mut mappings = 1;
        if st.mode == Mode::Local {
            let (fd, cur) = match st.sites.get(site) {
                Some(&(fd, cur)) => (fd, cur),
                None => (memfd(&format!("smpi-local-{site}"), span, false)?, span),
            };
            if span > cur {
                // Safety: growing our own file.
                unsafe { libc::ftruncate(fd, span as i64) };
            }
            st.sites.insert(site.to_string(), (fd, cur.max(span)));
            map_fixed(base, span, fd, 0, libc::PROT_READ | libc::PROT_WRITE)
                .map_err(|e| huge_page_hint(e, st.hugepage, span))?;
            mappings += 1;
            st.allocs.insert(base, Alloc { size, span, poolable: None, cow: None, private: vec![], mappings });
            st.mappings += mappings;
            return Ok(base as *mut u8);
        }
        if st.fd < 0 {
            st.fd = memfd("smpi-shared-block", st.block, st.hugepage)?;
        }
        if cow && st.zero_fd < 0 {
            st.zero_fd = memfd("smpi-cow-zero-block", st.block, st.hugepage)?;
        }
        let fd = if cow { st.zero_fd } else { st.fd };
        // Plan the mappings first so a too-large request fails cleanly.
        let mut plan: Vec<(usize, usize)> = Vec::new();
        for &(start, stop) in shared {
            let stop = stop.min(size);
            if start >= stop {
                continue;
            }
            // Only whole pages can be folded; sub-page edges stay private.
            let first = start.div_ceil(PAGE) * PAGE;
            let last = stop / PAGE * PAGE;
            let mut at = first;
            while at < last {
                let len = (last - at).min(st.block);
                plan.push((at, len));
                at += len;
            }
        }
        if st.mappings + plan.len() + 1 > st.max_mappings {
            // Safety: releasing the reservation made above.
            unsafe { libc::munmap(base as *mut c_void, span) };
            return Err(FoldError(format!(
                "folding {size} bytes needs {} more memory mappings, beyond the system limit (vm.max_map_count allows about {} for folding, {} in use); raise --cfg=smpi/shared-malloc-blocksize (now {} B) or vm.max_map_count",
                plan.len(),
                st.max_mappings,
                st.mappings,
                st.block
            )));
        }
        let prot = if cow { libc::PROT_READ } else { libc::PROT_READ | libc::PROT_WRITE };
        for &(at, len) in &plan {
            map_fixed(base + at, len, fd, 0, prot).map_err(|e| huge_page_hint(e, st.hugepage, st.block))?;
        }
        mappings += plan.len();
        // Private ranges: the complement of the folded ones.
        let mut private = Vec::new();
        let mut cursor = 0;
        for &(at, len) in &plan {
            if at > cursor {
                private.push((cursor, at));
            }
            cursor = at + len;
        }
        if cursor < size {
            private.push((cursor, size));
        }
        let cow = if cow {
            let pages = span / PAGE;
            let bits = vec![0u64; pages.div_ceil(64)].into_boxed_slice();
            cow_register(base, span, bits.as_ptr() as *mut u64);
            Some(bits)
        } else {
            None
        };
        let poolable = poolable.then_some(cow.is_some());
        st.allocs.insert(base, Alloc { size, span, poolable, cow, private, mappings });
        st.mappings += mappings;
        Ok(base as *mut u8)
    })
}

/// Says what to change when a mapping of huge pages fails (usually: too few
/// free huge pages for the block).
fn huge_page_hint(e: FoldError, hugepage: bool, bytes: usize) -> FoldError {
    if !hugepage {
        return e;
    }
    FoldError(format!(
        "{} (smpi/shared-malloc-hugepage: a block of {} bytes needs {} free huge pages of 2 MiB; see HugePages_Free in /proc/meminfo, raise vm.nr_hugepages or lower smpi/shared-malloc-blocksize)",
        e.0,
        bytes,
        bytes.div_ceil(2 << 20)
    ))
}

fn map_fixed(addr: usize, len: usize, fd: i32, offset: i64, prot: i32) -> Result<(), FoldError> {
    // Safety: replacing part of our own reservation.
    let p = unsafe {
        libc::mmap(
            addr as *mut c_void,
            len,
            prot,
            libc::MAP_FIXED | libc::MAP_SHARED,
            fd,
            offset,
        )
    };
    if p == libc::MAP_FAILED {
        return Err(FoldError(format!(
            "cannot map a folded block: {}",
            std::io::Error::last_os_error()
        )));
    }
    Ok(())
}

/// Frees a folded allocation; returns false if `p` is not one.
pub fn free(p: *mut u8) -> bool {
    STATE.with(|s| {
        let mut s = s.borrow_mut();
        let Some(st) = s.as_mut() else { return false };
        match st.allocs.remove(&(p as usize)) {
            Some(mut a) => {
                if let (Some(cow), true) = (a.poolable, st.pooled < POOL_MAX) {
                    if cow {
                        refold(p as usize, &mut a, st.block, st.zero_fd);
                    }
                    st.pool.entry((a.span, cow)).or_default().push((p as usize, a));
                    st.pooled += 1;
                    return true;
                }
                if a.cow.is_some() {
                    cow_unregister(p as usize);
                }
                st.mappings -= a.mappings;
                // Safety: unmapping exactly the reservation we made.
                unsafe { libc::munmap(p as *mut c_void, a.span) };
                true
            }
            None => false,
        }
    })
}

/// Folds back the pages a copy-on-write region made private, before reuse:
/// each block holding private pages is mapped again whole (one call, however
/// scattered its private pages are).
fn refold(base: usize, a: &mut Alloc, block: usize, fd: i32) {
    let Some(bits) = a.cow.as_mut() else { return };
    let pages_per_block = block / PAGE;
    let pages = a.span / PAGE;
    for first in (0..pages).step_by(pages_per_block) {
        let last = (first + pages_per_block).min(pages);
        // Whole bitmap words: a word shared with the next block may remap a
        // block with no private page, which is harmless.
        if bits[first / 64..=(last - 1) / 64].iter().all(|&w| w == 0) {
            continue;
        }
        // Every block of the region maps the folding file from offset 0.
        if map_fixed(base + first * PAGE, (last - first) * PAGE, fd, 0, libc::PROT_READ).is_ok() {
            for pg in first..last {
                bits[pg / 64] &= !(1 << (pg % 64));
            }
        }
    }
}

/// The size of the folded allocation starting at `p`, if it is one.
pub fn size_of(p: *const u8) -> Option<usize> {
    STATE.with(|s| {
        s.borrow()
            .as_ref()
            .and_then(|st| st.allocs.get(&(p as usize)).map(|a| a.size))
    })
}

/// Whether any folded allocation exists (fast path for copies).
pub fn any() -> bool {
    STATE.with(|s| s.borrow().as_ref().is_some_and(|st| !st.allocs.is_empty()))
}

/// Whether `[p, p+len)` overlaps any folded allocation (one lookup, no
/// allocation: the common case of ordinary buffers stays cheap).
pub fn touches_folded(p: *const u8, len: usize) -> bool {
    let addr = p as usize;
    STATE.with(|s| {
        s.borrow().as_ref().is_some_and(|st| {
            st.allocs
                .range(..addr.saturating_add(len.max(1)))
                .next_back()
                .is_some_and(|(&base, a)| base + a.size > addr)
        })
    })
}

/// Private byte ranges (relative to `p`) of `[p, p+len)`, sorted: `None` if
/// the range touches no folded allocation (everything is private). Bytes
/// outside folded allocations (the range may span several) are private.
pub fn private_ranges(p: *const u8, len: usize) -> Option<Vec<(usize, usize)>> {
    STATE.with(|s| {
        let s = s.borrow();
        let st = s.as_ref()?;
        let addr = p as usize;
        let end = addr + len;
        // The allocation containing `addr`, if any, then those starting inside the range.
        let first = st
            .allocs
            .range(..=addr)
            .next_back()
            .filter(|(&b, a)| addr < b + a.size);
        let rest = st.allocs.range(addr + 1..end);
        let mut touched = first.into_iter().chain(rest).peekable();
        touched.peek()?;
        let mut out: Vec<(usize, usize)> = Vec::new();
        let mut push = |s0: usize, e0: usize| {
            if s0 >= e0 {
                return;
            }
            match out.last_mut() {
                Some((_, e)) if *e == s0 => *e = e0,
                _ => out.push((s0, e0)),
            }
        };
        let mut cursor = addr;
        for (&base, a) in touched {
            // Ordinary memory before this allocation.
            push(cursor - addr, base.max(cursor).min(end) - addr);
            let off = cursor.max(base) - base;
            let stop = (end - base).min(a.size);
            if let Some(bits) = &a.cow {
                // Runs of private pages, a bitmap word at a time (panels span
                // thousands of pages, mostly still folded).
                let (mut pg, last) = (off / PAGE, stop.div_ceil(PAGE));
                while pg < last {
                    let word = bits[pg / 64] >> (pg % 64);
                    if word == 0 {
                        pg = (pg / 64 + 1) * 64;
                        continue;
                    }
                    pg += word.trailing_zeros() as usize;
                    if pg >= last {
                        break;
                    }
                    let run = ((bits[pg / 64] >> (pg % 64)).trailing_ones() as usize).min(64 - pg % 64);
                    let end = (pg + run).min(last);
                    push(
                        (pg * PAGE).max(off) + base - addr,
                        (end * PAGE).min(stop) + base - addr,
                    );
                    pg = end;
                }
            } else {
                for &(s0, e0) in &a.private {
                    push(
                        s0.max(off) + base - addr,
                        e0.min(stop).max(s0.max(off)) + base - addr,
                    );
                }
            }
            cursor = base + stop;
        }
        push(cursor - addr, len);
        Some(out)
    })
}

/// The byte ranges of `[p, p+len)` (relative to `p`, sorted) in copy-on-write
/// pages never written: they read as zeros, and a message from them carries zeros.
pub fn zero_ranges(p: *const u8, len: usize) -> Vec<(usize, usize)> {
    let addr = p as usize;
    let mut out: Vec<(usize, usize)> = Vec::new();
    STATE.with(|s| {
        let s = s.borrow();
        let Some(st) = s.as_ref() else { return };
        let first = st.allocs.range(..=addr).next_back().into_iter();
        for (&base, a) in first.chain(st.allocs.range(addr + 1..addr + len)) {
            let Some(bits) = &a.cow else { continue };
            let (lo, hi) = (addr.max(base), (addr + len).min(base + a.size));
            for pg in lo.saturating_sub(base) / PAGE..hi.saturating_sub(base).div_ceil(PAGE) {
                if lo >= hi || bits[pg / 64] & (1 << (pg % 64)) != 0 {
                    continue;
                }
                let (s0, e0) = (
                    (base + pg * PAGE).max(lo) - addr,
                    (base + (pg + 1) * PAGE).min(hi) - addr,
                );
                match out.last_mut() {
                    Some((_, e)) if *e == s0 => *e = e0,
                    _ => out.push((s0, e0)),
                }
            }
        }
    });
    out
}

/// Writes zeros over the bytes of `[p, p+len)` that hold data (private
/// memory); never-written copy-on-write pages already read as zeros and
/// folded memory is garbage.
///
/// # Safety
/// The range must be valid for `len` bytes.
pub unsafe fn zero_private(p: *mut u8, len: usize) {
    match private_ranges(p, len) {
        None => std::ptr::write_bytes(p, 0, len),
        Some(r) => {
            for (a, b) in r {
                std::ptr::write_bytes(p.add(a), 0, b - a);
            }
        }
    }
}

/// The byte ranges of `[p, p+len)` (relative to `p`) a message may write:
/// like [`private_ranges`], but folded copy-on-write pages are made private
/// first, as a write by the program would (received data is real data).
/// Plain folded memory stays folded.
pub fn writable_ranges(p: *mut u8, len: usize) -> Option<Vec<(usize, usize)>> {
    let addr = p as usize;
    STATE.with(|s| {
        let mut s = s.borrow_mut();
        let st = s.as_mut()?;
        let first = st.allocs.range(..=addr).next_back().map(|(&b, _)| b).into_iter();
        let bases: Vec<usize> = first
            .chain(st.allocs.range(addr + 1..addr + len).map(|(&b, _)| b))
            .collect();
        for base in bases {
            let a = st.allocs.get_mut(&base).expect("listed above");
            let Some(bits) = a.cow.as_mut() else { continue };
            let (lo, hi) = (addr.max(base), (addr + len).min(base + a.size));
            if lo >= hi {
                continue;
            }
            let (mut pg, last) = ((lo - base) / PAGE, (hi - base).div_ceil(PAGE));
            while pg < last {
                if bits[pg / 64] & (1 << (pg % 64)) != 0 {
                    pg += 1;
                    continue;
                }
                let run = pg;
                while pg < last && bits[pg / 64] & (1 << (pg % 64)) == 0 {
                    pg += 1;
                }
                // Safety: replacing folded pages of our own region.
                let m = unsafe {
                    libc::mmap(
                        (base + run * PAGE) as *mut c_void,
                        (pg - run) * PAGE,
                        libc::PROT_READ | libc::PROT_WRITE,
                        libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
                        -1,
                        0,
                    )
                };
                if m == libc::MAP_FAILED {
                    // Received data would be lost: stop, saying why.
                    eprintln!("{} ({})", COW_FAILED.trim(), std::io::Error::last_os_error());
                    std::process::exit(1);
                }
                for q in run..pg {
                    bits[q / 64] |= 1 << (q % 64);
                }
            }
        }
        Some(())
    })?;
    private_ranges(p, len)
}

/// Copies `len` bytes from `src` to `dst`, skipping folded parts: private
/// source bytes go to the destination where it is private or copy-on-write
/// (which they make private); never-written copy-on-write source bytes are
/// zeros, written as such where the destination holds data; folded source
/// bytes are garbage and not copied.
///
/// # Safety
/// Both ranges must be valid for `len` bytes.
pub unsafe fn copy(src: *const u8, dst: *mut u8, len: usize) {
    if len == 0 {
        return;
    }
    if !touches_folded(src, len) && !touches_folded(dst, len) {
        std::ptr::copy(src, dst, len);
        return;
    }
    let source = private_ranges(src, len);
    if source.is_some() {
        for (a, b) in zero_ranges(src, len) {
            zero_private(dst.add(a), b - a);
        }
    }
    let source = source.unwrap_or_else(|| vec![(0, len)]);
    for (a, b) in source {
        match writable_ranges(dst.add(a), b - a) {
            None => std::ptr::copy(src.add(a), dst.add(a), b - a),
            Some(dest) => {
                for (x, y) in dest {
                    std::ptr::copy(src.add(a + x), dst.add(a + x), y - x);
                }
            }
        }
    }
}

/// Mappings currently used by folding.
pub fn mapping_count() -> usize {
    STATE.with(|s| s.borrow().as_ref().map_or(0, |st| st.mappings))
}

// ---------------------------------------------------------------- copy-on-write faults

/// Copy-on-write regions readable from the signal handler without locks:
/// (start, span, bitmap). Only the simulation thread touches it.
struct CowTable(std::cell::UnsafeCell<Vec<(usize, usize, *mut u64)>>);
// Safety: single simulation thread; the handler runs on that thread.
unsafe impl Sync for CowTable {}
static COW: CowTable = CowTable(std::cell::UnsafeCell::new(Vec::new()));
static mut PREVIOUS: libc::sigaction = unsafe { std::mem::zeroed() };
static COW_INSTALLED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

fn cow_register(start: usize, span: usize, bits: *mut u64) {
    // Safety: see CowTable.
    let t = unsafe { &mut *COW.0.get() };
    let pos = t.partition_point(|r| r.0 < start);
    t.insert(pos, (start, span, bits));
}

fn cow_unregister(start: usize) {
    // Safety: see CowTable.
    let t = unsafe { &mut *COW.0.get() };
    if let Ok(i) = t.binary_search_by_key(&start, |r| r.0) {
        t.remove(i);
    }
}

/// What a write fault in a copy-on-write region came to.
#[derive(PartialEq)]
enum CowFault {
    /// Not a folded copy-on-write page.
    NotOurs,
    /// The page (and its free neighbours) is private now.
    Fixed,
    /// The page could not be made private (no memory mapping left).
    Failed,
}

/// Makes the page at `addr` (and its neighbours, as far as possible) private
/// if it is a folded copy-on-write page.
fn cow_fault(addr: usize) -> CowFault {
    // Safety: read-only use of the table on the simulation thread.
    let t = unsafe { &*COW.0.get() };
    let i = t.partition_point(|r| r.0 <= addr);
    if i == 0 {
        return CowFault::NotOurs;
    }
    let (start, span, bits) = t[i - 1];
    if addr >= start + span {
        return CowFault::NotOurs;
    }
    let page = (addr - start) / PAGE;
    let pages = span / PAGE;
    // A fault on an already-private page is not ours (should not happen).
    let mut outcome = CowFault::NotOurs;
    for pg in page.saturating_sub(1)..(page + 2).min(pages) {
        // Safety: the bitmap has one bit per page of the region.
        let word = unsafe { &mut *bits.add(pg / 64) };
        if *word & (1 << (pg % 64)) != 0 {
            continue;
        }
        // Safety: replacing one folded page of our own region.
        let p = unsafe {
            libc::mmap(
                (start + pg * PAGE) as *mut c_void,
                PAGE,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            // Neighbours are a convenience; the faulting page is not.
            if pg == page {
                return CowFault::Failed;
            }
            continue;
        }
        *word |= 1 << (pg % 64);
        if pg == page {
            outcome = CowFault::Fixed;
        }
    }
    outcome
}

/// Said before the crash report when a copy-on-write page cannot be made private.
const COW_FAILED: &str = "\nerror: a copy-on-write folded page could not be made private: the process ran out of memory mappings (vm.max_map_count); raise vm.max_map_count (sysctl) or smpi/auto-shared-malloc-cow-thresh\n";

extern "C" fn cow_handler(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut c_void) {
    // Safety: `info` comes from the kernel (SA_SIGINFO).
    let addr = unsafe { (*info).si_addr() } as usize;
    match cow_fault(addr) {
        CowFault::Fixed => return,
        // Safety: write(2) is async-signal-safe.
        CowFault::Failed => unsafe {
            libc::write(2, COW_FAILED.as_ptr().cast(), COW_FAILED.len());
        },
        CowFault::NotOurs => {}
    }
    // Not ours, or failed: hand over to the previous handler (the crash reporter).
    // Safety: PREVIOUS was filled by sigaction before this handler was installed.
    unsafe {
        let prev = std::ptr::addr_of!(PREVIOUS).read();
        if prev.sa_flags & libc::SA_SIGINFO != 0 && prev.sa_sigaction > 1 {
            let f: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut c_void) =
                std::mem::transmute(prev.sa_sigaction);
            f(sig, info, ctx);
        } else {
            libc::signal(sig, libc::SIG_DFL);
            libc::raise(sig);
        }
    }
}

fn install_cow_handler() {
    if COW_INSTALLED.swap(true, std::sync::atomic::Ordering::SeqCst) {
        return;
    }
    // The crash reporter must be installed first so we can chain to it.
    simcore::crash::install();
    // Safety: installing a SIGSEGV handler that chains to the previous one.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = cow_handler as *const () as usize;
        sa.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK | libc::SA_NODEFER;
        libc::sigemptyset(&mut sa.sa_mask);
        libc::sigaction(libc::SIGSEGV, &sa, std::ptr::addr_of_mut!(PREVIOUS));
    }
}
