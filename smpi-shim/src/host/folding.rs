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
//! Whole buffers folded globally alias across ranks ([`alloc_by`]): one region
//! serves one allocation of each rank, so its page tables are filled once
//! (a rank never gets a region it already holds). The BLAS kernels read and
//! write folded memory through one canonical mapping of the file
//! ([`FoldView`]), which stays in cache.
//!
//! `SMPI_PARTIAL_SHARED_MALLOC` folds only the given `[start, stop)` byte
//! ranges; the rest stays private. `smpi/auto-shared-malloc-thresh` folds every
//! `malloc`/`calloc`/`realloc` of at least that many bytes (smpicc routes the
//! program's allocation calls here).
//!
//! *Copy-on-write folding* (`smpi/auto-shared-malloc-cow-thresh`, our
//! extension): allocations between that size and the auto threshold are one
//! private mapping of a never-written file, so they read as zeros (like fresh
//! memory: `calloc` needs nothing more) and cost nothing until written; the
//! kernel's own copy-on-write gives a page its private copy at the first
//! write (no signal, no extra mapping). Which pages were written is read from
//! `/proc/self/pagemap` (`PAGEMAP_SCAN` where the kernel has it): present and
//! no longer the file's page. Messages carrying real data make the pages
//! they land on private too, unless those pages already hold the same bytes
//! (all-zero blocks stay folded); never-written pages are not copied. This
//! keeps small control data that
//! lives inside large buffers (HPL's pivot vector inside its panel buffers)
//! correct while the bulk stays folded. Freed regions drop their private
//! pages (`MADV_DONTNEED`) and are recycled (HPL allocates and frees its
//! panels at every step).
//!
//! Each folded block is one kernel mapping; we count them and fail early, with
//! a clear message, before `vm.max_map_count` would be exceeded. A message
//! classifies its buffers once ([`Layout`]) and moves only real data
//! ([`transfer`]).

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
    /// A copy-on-write allocation (private mapping of the zero file).
    cow: bool,
    /// Private `[start, end)` byte ranges (relative), sorted.
    private: Vec<(usize, usize)>,
    /// Mappings this allocation uses (for the map count).
    mappings: usize,
    /// Whole-buffer global folds handed to several holders (ranks): who
    /// holds it now (empty for other allocations).
    holders: Vec<u32>,
    /// Whole-buffer global folds: bytes `[0, folded_end)` are folded in
    /// blocks from offset 0 (so byte `r` is byte `r % block` of the file);
    /// 0 otherwise.
    folded_end: usize,
}

struct State {
    mode: Mode,
    block: usize,
    fd: i32,
    /// Backs copy-on-write regions: a sparse file mapped privately only, so
    /// it stays zero.
    zero_fd: i32,
    /// `/proc/self/pagemap`, open while copy-on-write folding is on.
    pagemap: i32,
    /// One mapping of the whole folding file (`fd`), populated once: the
    /// BLAS kernels reach folded memory through it (see [`FoldView`]).
    canon: usize,
    hugepage: bool,
    sites: BTreeMap<String, (i32, usize)>,
    allocs: BTreeMap<usize, Alloc>,
    /// Where every allocation lies, by base: what `allocs` says, searched by
    /// bisection on every message ([`touches_folded`]) and BLAS call
    /// ([`fold_view`]), where a walk down the B-tree cost ~150 instructions.
    bounds: Vec<Span>,
    mappings: usize,
    max_mappings: usize,
    auto_thresh: usize,
    cow_thresh: usize,
    /// Freed fully folded regions by copy-on-write or not, then span, ready
    /// for reuse.
    pool: [BTreeMap<usize, Vec<(usize, Alloc)>>; 2],
    pooled: usize,
    /// Live whole-buffer global folds by span (bases): one region serves one
    /// allocation of each holder (see [`alloc_by`]).
    shared_regions: BTreeMap<usize, Vec<usize>>,
}

/// Where one allocation lies (see [`State::bounds`]).
#[derive(Clone, Copy, Debug)]
struct Span {
    base: usize,
    /// `base + size`.
    end: usize,
    /// The end of its part folded in whole blocks from the start (`base` if none).
    view_end: usize,
    /// A copy-on-write allocation (its classification needs nothing else).
    cow: bool,
}

impl Span {
    fn of(base: usize, a: &Alloc) -> Span {
        Span {
            base,
            end: base + a.size,
            view_end: base + a.folded_end.min(a.size),
            cow: a.cow,
        }
    }
}

impl State {
    /// Lists allocation `a` at `base` (in `allocs` and `bounds`).
    fn insert(&mut self, base: usize, a: Alloc) {
        let span = Span::of(base, &a);
        let i = self.bounds.partition_point(|b| b.base < base);
        if self.bounds.get(i).is_some_and(|b| b.base == base) {
            self.bounds[i] = span;
        } else {
            self.bounds.insert(i, span);
        }
        self.allocs.insert(base, a);
    }

    /// Unlists the allocation at `base`, if any.
    fn remove(&mut self, base: usize) -> Option<Alloc> {
        let a = self.allocs.remove(&base)?;
        let i = self.bounds.partition_point(|b| b.base < base);
        self.bounds.remove(i);
        Some(a)
    }

    /// The allocation that starts last at or before `addr`, if any.
    fn span_at_or_before(&self, addr: usize) -> Option<&Span> {
        let i = self.bounds.partition_point(|b| b.base <= addr);
        i.checked_sub(1).map(|i| &self.bounds[i])
    }
}

/// Regions kept for reuse at most (mmap/munmap churn is the cost they avoid).
const POOL_MAX: usize = 512;
const MIB: usize = 1 << 20;

/// Folding mode (`smpi/shared-malloc`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    Global,
    Local,
    No,
}

thread_local! {
    static STATE: RefCell<Option<State>> = const { RefCell::new(None) };
    /// Whether this thread's `STATE` held a folded allocation since it was configured: until
    /// then no buffer can touch folded memory, which copies and message layouts check without
    /// reaching `STATE` (whose destructor makes every access go through a registration check).
    /// A plain flag with a constant initializer: reading it is one load.
    static FOLDED_EVER: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

const PAGE: usize = 4096;

/// An error setting up or performing a folded allocation.
#[derive(Debug)]
pub(crate) struct FoldError(pub String);

/// Configures folding for this run.
pub(crate) fn init(
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
    FOLDED_EVER.with(|f| f.set(false));
    STATE.with(|s| {
        *s.borrow_mut() = Some(State {
            mode,
            block,
            fd: -1,
            zero_fd: -1,
            pagemap: -1,
            canon: 0,
            hugepage,
            sites: BTreeMap::new(),
            allocs: BTreeMap::new(),
            bounds: Vec::new(),
            mappings: 0,
            // Keep room for the allocator and the libraries; what else the
            // run will map later is reserved with `reserve_mappings`.
            max_mappings: max_map.saturating_sub(in_use).saturating_sub(max_map / 16),
            auto_thresh,
            cow_thresh,
            pool: [BTreeMap::new(), BTreeMap::new()],
            shared_regions: BTreeMap::new(),
            pooled: 0,
        })
    });
    Ok(())
}

/// Largest copy-on-write region: the zero file is this large (sparse; only
/// pages read through some mapping take memory, once for all regions).
const ZERO_FILE_SIZE: usize = 1 << 40;

/// Keeps `n` more memory mappings out of folding's budget: those the run
/// makes after [`init`] (two per coroutine stack).
pub(crate) fn reserve_mappings(n: usize) {
    STATE.with(|s| {
        if let Some(st) = s.borrow_mut().as_mut() {
            st.max_mappings = st.max_mappings.saturating_sub(n);
        }
    });
}

/// The error for a failed mapping: out of mappings (ENOMEM) is said as such.
fn map_error(what: String, e: std::io::Error, st: &State) -> FoldError {
    if e.raw_os_error() == Some(libc::ENOMEM) {
        FoldError(format!(
            "{what}: {e}: most likely the process ran out of memory mappings (vm.max_map_count; folding uses {} of about {} it can have); raise vm.max_map_count or smpi/shared-malloc-blocksize",
            st.mappings, st.max_mappings
        ))
    } else {
        FoldError(format!("{what}: {e}"))
    }
}

/// Stops folding (end of run).
#[cfg(test)]
pub(crate) fn reset() {
    STATE.with(|s| *s.borrow_mut() = None);
}

/// The `smpi/auto-shared-malloc-thresh` in force (0 = off).
pub(crate) fn auto_threshold() -> usize {
    STATE.with(|s| s.borrow().as_ref().map_or(0, |st| st.auto_thresh))
}

/// The `smpi/auto-shared-malloc-cow-thresh` in force (0 = off).
pub(crate) fn cow_threshold() -> usize {
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
#[cfg(test)]
pub(crate) fn alloc(size: usize, shared: &[(usize, usize)], site: &str) -> Result<*mut u8, FoldError> {
    alloc_mode(size, shared, site, false)
}

/// Like [`alloc`], for `holder` (a rank). A whole buffer folded globally is
/// garbage that aliases every other folded buffer anyway, so one region
/// serves an allocation of each holder: ranks get the same address, as real
/// processes often do, and the kernel fills the region's page tables once
/// instead of once per rank (HPL's matrix: page faults were a fifth of the
/// run, and each rank's copy took memory mappings). A holder never gets a
/// region it already holds. Free with [`free_by`].
pub(crate) fn alloc_by(
    holder: u32,
    size: usize,
    shared: &[(usize, usize)],
    site: &str,
) -> Result<*mut u8, FoldError> {
    let whole = size >= MIB && shared == [(0, size)];
    let span = size.div_ceil(MIB) * MIB;
    let found = STATE.with(|s| {
        let mut s = s.borrow_mut();
        let st = s.as_mut()?;
        if st.mode != Mode::Global || !whole {
            return None;
        }
        let base = st
            .shared_regions
            .range(span..)
            .flat_map(|(_, bases)| bases.iter().copied())
            .find(|b| st.allocs.get(b).is_some_and(|a| !a.holders.contains(&holder)))?;
        st.allocs.get_mut(&base).expect("listed").holders.push(holder);
        Some(base as *mut u8)
    });
    if let Some(p) = found {
        return Ok(p);
    }
    let p = alloc_mode(size, shared, site, false)?;
    STATE.with(|s| {
        let mut s = s.borrow_mut();
        let Some(st) = s.as_mut() else { return };
        if st.mode == Mode::Global && whole && !p.is_null() {
            let a = st.allocs.get_mut(&(p as usize)).expect("just allocated");
            // The region is folded up to its span, whoever asked for how much.
            a.size = a.span;
            let i = st.bounds.partition_point(|b| b.base < p as usize);
            st.bounds[i] = Span::of(p as usize, a);
            a.holders = vec![holder];
            st.shared_regions.entry(a.span).or_default().push(p as usize);
        }
    });
    Ok(p)
}

/// Frees `holder`'s allocation at `p` (see [`alloc_by`]); returns false if
/// `p` is not a folded allocation.
pub(crate) fn free_by(holder: u32, p: *mut u8) -> bool {
    // Folded allocations start on a page; most frees are of small ordinary
    // blocks (HPL frees four per panel message), which need no table look-up.
    if !(p as usize).is_multiple_of(PAGE) {
        return false;
    }
    let still_held = STATE.with(|s| {
        let mut s = s.borrow_mut();
        let st = s.as_mut()?;
        let a = st.allocs.get_mut(&(p as usize))?;
        if a.holders.is_empty() {
            return Some(false);
        }
        if let Some(i) = a.holders.iter().position(|&h| h == holder) {
            a.holders.swap_remove(i);
        }
        if !a.holders.is_empty() {
            return Some(true);
        }
        let span = a.span;
        if let Some(bases) = st.shared_regions.get_mut(&span) {
            bases.retain(|&b| b != p as usize);
            if bases.is_empty() {
                st.shared_regions.remove(&span);
            }
        }
        Some(false)
    });
    match still_held {
        None => false,
        Some(true) => true,
        Some(false) => free(p),
    }
}

/// Allocates `size` bytes folded copy-on-write (see the module docs).
pub(crate) fn alloc_cow(size: usize) -> Result<*mut u8, FoldError> {
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
        // Whole-buffer folds of 1 MiB or more, and copy-on-write regions, use
        // 1 MiB-rounded regions that are recycled: programs such as HPL
        // allocate and free large buffers at every step.
        let poolable = st.mode == Mode::Global && (cow || (size >= MIB && shared == [(0, size)]));
        let span = if poolable { size.div_ceil(MIB) * MIB } else { size.div_ceil(PAGE) * PAGE };
        if poolable {
            // The smallest free region that is large enough (programs such as
            // HPL free a buffer and allocate a slightly smaller one).
            let pool = &mut st.pool[cow as usize];
            let fit = pool.range_mut(span..).next().map(|(&k, v)| (k, v.pop()));
            if let Some((key, Some((base, mut a)))) = fit {
                if pool.get(&key).is_some_and(|v| v.is_empty()) {
                    pool.remove(&key);
                }
                st.pooled -= 1;
                a.size = size;
                st.insert(base, a);
            FOLDED_EVER.with(|f| f.set(true));
                return Ok(base as *mut u8);
            }
        }
        if cow {
            return alloc_cow_region(st, size, span);
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
            map_fixed(base, span, fd, 0, libc::PROT_READ | libc::PROT_WRITE).map_err(|e| {
                huge_page_hint(map_error(format!("cannot map {size} bytes folded at {site}"), e, st), st.hugepage, span)
            })?;
            mappings += 1;
            let a = Alloc {
                size,
                span,
                poolable: None,
                cow: false,
                private: vec![],
                mappings,
                holders: vec![],
                folded_end: 0,
            };
            st.insert(base, a);
            FOLDED_EVER.with(|f| f.set(true));
            st.mappings += mappings;
            return Ok(base as *mut u8);
        }
        if st.fd < 0 {
            st.fd = memfd("smpi-shared-block", st.block, st.hugepage)?;
            // Safety: a fresh shared mapping of our own file.
            let canon = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    st.block,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_SHARED,
                    st.fd,
                    0,
                )
            };
            if canon == libc::MAP_FAILED {
                return Err(huge_page_hint(
                    FoldError(format!("cannot map the folding file: {}", std::io::Error::last_os_error())),
                    st.hugepage,
                    st.block,
                ));
            }
            st.canon = canon as usize;
            st.mappings += 1;
        }
        let fd = st.fd;
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
        for &(at, len) in &plan {
            if let Err(e) = map_fixed(base + at, len, fd, 0, libc::PROT_READ | libc::PROT_WRITE) {
                let e = map_error(format!("cannot map a folded block of {size} bytes"), e, st);
                // Safety: releasing the reservation made above.
                unsafe { libc::munmap(base as *mut c_void, span) };
                return Err(huge_page_hint(e, st.hugepage, st.block));
            }
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
        let poolable = poolable.then_some(false);
        // Folded from offset 0 in whole blocks: byte r is byte r % block of the file.
        let uniform = plan.first().is_some_and(|c| c.0 == 0)
            && plan.windows(2).all(|w| w[0].0 + w[0].1 == w[1].0 && w[0].1 == st.block);
        let folded_end = if uniform { plan.last().map_or(0, |c| c.0 + c.1) } else { 0 };
        let a = Alloc { size, span, poolable, cow: false, private, mappings, holders: vec![], folded_end };
        st.insert(base, a);
        FOLDED_EVER.with(|f| f.set(true));
        st.mappings += mappings;
        Ok(base as *mut u8)
    })
}

/// Maps a new copy-on-write region: one private mapping of the zero file.
fn alloc_cow_region(st: &mut State, size: usize, span: usize) -> Result<*mut u8, FoldError> {
    if span > ZERO_FILE_SIZE {
        return Err(FoldError(format!(
            "{size} bytes is beyond the largest copy-on-write region ({ZERO_FILE_SIZE} B); raise smpi/auto-shared-malloc-thresh"
        )));
    }
    if st.zero_fd < 0 {
        st.zero_fd = memfd("smpi-cow-zero", ZERO_FILE_SIZE, false)?;
    }
    if st.pagemap < 0 {
        // Safety: opening a file read-only.
        let fd = unsafe { libc::open(c"/proc/self/pagemap".as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
        if fd < 0 {
            return Err(FoldError(format!(
                "copy-on-write folding reads /proc/self/pagemap, which cannot be opened: {}",
                std::io::Error::last_os_error()
            )));
        }
        st.pagemap = fd;
    }
    if st.mappings + 1 > st.max_mappings {
        return Err(FoldError(format!(
            "a copy-on-write region needs one more memory mapping, beyond the system limit (vm.max_map_count allows about {} for folding, {} in use); raise vm.max_map_count or smpi/auto-shared-malloc-cow-thresh",
            st.max_mappings, st.mappings
        )));
    }
    // Safety: a fresh private mapping of our own sparse file.
    let base = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            span,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_NORESERVE,
            st.zero_fd,
            0,
        )
    };
    if base == libc::MAP_FAILED {
        let e = std::io::Error::last_os_error();
        return Err(map_error(
            format!("cannot map a copy-on-write region of {size} bytes"),
            e,
            st,
        ));
    }
    let base = base as usize;
    let a = Alloc {
        size,
        span,
        poolable: Some(true),
        cow: true,
        private: vec![],
        mappings: 1,
        holders: vec![],
        folded_end: 0,
    };
    st.insert(base, a);
    FOLDED_EVER.with(|f| f.set(true));
    st.mappings += 1;
    Ok(base as *mut u8)
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

fn map_fixed(addr: usize, len: usize, fd: i32, offset: i64, prot: i32) -> std::io::Result<()> {
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
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Frees a folded allocation; returns false if `p` is not one.
pub(crate) fn free(p: *mut u8) -> bool {
    STATE.with(|s| {
        let mut s = s.borrow_mut();
        let Some(st) = s.as_mut() else { return false };
        match st.remove(p as usize) {
            Some(a) => {
                if let (Some(cow), true) = (a.poolable, st.pooled < POOL_MAX) {
                    if cow {
                        // Drop the written pages: the region reads as zeros again.
                        // Safety: our own private mapping.
                        unsafe { libc::madvise(p as *mut c_void, a.span, libc::MADV_DONTNEED) };
                    }
                    st.pool[cow as usize]
                        .entry(a.span)
                        .or_default()
                        .push((p as usize, a));
                    st.pooled += 1;
                    return true;
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

/// Calls `f(first, last)` for each run `[first, last)` of written (private)
/// pages among pages `[first, last)` of the copy-on-write region at `base`:
/// pages present in memory that are no longer the zero file's. If the page
/// map cannot be read, every page counts as written (always correct: a
/// never-written page holds zeros; only memory is lost).
fn written_runs(pagemap: i32, base: usize, first: usize, last: usize, mut f: impl FnMut(usize, usize)) {
    if first >= last {
        return;
    }
    if SCAN_WORKS.with(|w| w.get()) && scan_written(pagemap, base, first, last, &mut f) {
        return;
    }
    SCAN_WORKS.with(|w| w.set(false));
    read_written(pagemap, base, first, last, f)
}

/// `PAGEMAP_SCAN` (Linux 6.7+): the kernel reports only the matching runs,
/// skipping unmapped and never-written pages quickly. False if the kernel
/// lacks it (nothing was reported then).
fn scan_written(
    pagemap: i32,
    base: usize,
    first: usize,
    last: usize,
    f: &mut impl FnMut(usize, usize),
) -> bool {
    #[repr(C)]
    #[derive(Clone, Copy, Default)]
    struct PageRegion {
        start: u64,
        end: u64,
        categories: u64,
    }
    #[repr(C)]
    #[derive(Default)]
    struct PmScanArg {
        size: u64,
        flags: u64,
        start: u64,
        end: u64,
        walk_end: u64,
        vec: u64,
        vec_len: u64,
        max_pages: u64,
        category_inverted: u64,
        category_mask: u64,
        category_anyof_mask: u64,
        return_mask: u64,
    }
    const PAGE_IS_FILE: u64 = 1 << 2;
    const PAGE_IS_PRESENT: u64 = 1 << 3;
    const PAGE_IS_SWAPPED: u64 = 1 << 4;
    // _IOWR('f', 16, struct pm_scan_arg)
    const PAGEMAP_SCAN: libc::c_ulong = 0xc060_6610;
    let mut regions = [PageRegion::default(); 64];
    let end = (base + last * PAGE) as u64;
    let mut at = (base + first * PAGE) as u64;
    while at < end {
        // Written = not the file's page, and present or swapped out.
        let mut arg = PmScanArg {
            size: std::mem::size_of::<PmScanArg>() as u64,
            start: at,
            end,
            vec: regions.as_mut_ptr() as u64,
            vec_len: regions.len() as u64,
            category_inverted: PAGE_IS_FILE,
            category_mask: PAGE_IS_FILE,
            category_anyof_mask: PAGE_IS_PRESENT | PAGE_IS_SWAPPED,
            return_mask: PAGE_IS_FILE,
            ..Default::default()
        };
        // Safety: the kernel fills at most vec_len regions of our array.
        let n = unsafe { libc::ioctl(pagemap, PAGEMAP_SCAN, &mut arg) };
        if n < 0 {
            return at > (base + first * PAGE) as u64;
        }
        for r in &regions[..n as usize] {
            f((r.start as usize - base) / PAGE, (r.end as usize - base) / PAGE);
        }
        if arg.walk_end <= at {
            break;
        }
        at = arg.walk_end;
    }
    true
}

/// The page map read entry by entry (kernels before 6.7). If it cannot be
/// read, every page counts as written (always correct; only memory is lost).
fn read_written(pagemap: i32, base: usize, first: usize, last: usize, mut f: impl FnMut(usize, usize)) {
    const PRESENT: u64 = 1 << 63;
    const SWAPPED: u64 = 1 << 62;
    const FILE: u64 = 1 << 61;
    PAGEMAP_ENTRIES.with(|buf| {
        let mut entries = buf.borrow_mut();
        let n = last - first;
        entries.clear();
        entries.resize(n, 0);
        // One read for the whole range (the kernel walks only the page tables).
        let mut valid = 0;
        while valid < n {
            let offset = ((base / PAGE + first + valid) * 8) as i64;
            // Safety: reading into our own buffer, within its length.
            let got = unsafe {
                libc::pread(
                    pagemap,
                    entries[valid..].as_mut_ptr().cast(),
                    (n - valid) * 8,
                    offset,
                )
            };
            if got <= 0 {
                break;
            }
            valid += got as usize / 8;
        }
        let mut run: Option<usize> = None;
        for (i, &e) in entries.iter().enumerate() {
            let written = i >= valid || (e & SWAPPED != 0) || (e & PRESENT != 0 && e & FILE == 0);
            match (written, run) {
                (true, None) => run = Some(first + i),
                (false, Some(r)) => {
                    f(r, first + i);
                    run = None;
                }
                _ => {}
            }
        }
        if let Some(r) = run {
            f(r, last);
        }
    });
}

thread_local! {
    /// Whether `PAGEMAP_SCAN` works here (cleared at its first failure).
    static SCAN_WORKS: std::cell::Cell<bool> = const { std::cell::Cell::new(true) };
    /// Scratch buffer for page map entries.
    static PAGEMAP_ENTRIES: RefCell<Vec<u64>> = const { RefCell::new(Vec::new()) };
}

/// The size of the folded allocation starting at `p`, if it is one.
pub(crate) fn size_of(p: *const u8) -> Option<usize> {
    if !(p as usize).is_multiple_of(PAGE) {
        return None;
    }
    STATE.with(|s| {
        s.borrow()
            .as_ref()
            .and_then(|st| st.allocs.get(&(p as usize)).map(|a| a.size))
    })
}

/// Whether any folded allocation exists (fast path for copies).
pub(crate) fn any() -> bool {
    if !FOLDED_EVER.with(std::cell::Cell::get) {
        return false;
    }
    STATE.with(|s| s.borrow().as_ref().is_some_and(|st| !st.allocs.is_empty()))
}

/// Whether `[p, p+len)` overlaps any folded allocation (one lookup, no
/// allocation: the common case of ordinary buffers stays cheap).
pub(crate) fn touches_folded(p: *const u8, len: usize) -> bool {
    if !FOLDED_EVER.with(std::cell::Cell::get) {
        return false;
    }
    let addr = p as usize;
    STATE.with(|s| {
        s.borrow().as_ref().is_some_and(|st| {
            // The last allocation starting before the range's end, if it reaches into it.
            st.span_at_or_before(addr.saturating_add(len.max(1)) - 1)
                .is_some_and(|b| b.end > addr)
        })
    })
}

/// Folded memory seen through the one canonical mapping of the folding file.
/// Every folded block maps the same file, so a folded byte can be read or
/// written there instead: the same physical memory, without populating the
/// page tables of each rank's view (HPL's pivot search reads rows of its
/// folded matrix, one page per element, on every rank: page faults were a
/// fifth of the run).
#[derive(Clone, Copy, Debug)]
pub(crate) struct FoldView {
    base: usize,
    end: usize,
    mask: usize,
    block: usize,
    canon: usize,
}

impl FoldView {
    /// Where the byte at `addr` is best accessed: its place in the canonical
    /// mapping if it is folded memory of this view's allocation, else `addr`.
    #[inline]
    pub(crate) fn at(&self, addr: usize) -> usize {
        if addr.wrapping_sub(self.base) < self.end - self.base {
            let r = addr - self.base;
            self.canon
                + if self.mask != 0 {
                    r & self.mask
                } else {
                    r % self.block
                }
        } else {
            addr
        }
    }

    /// Splits `[addr, addr+len)` into pieces that are contiguous where they
    /// are best accessed: `(where, len)`.
    pub(crate) fn pieces(&self, addr: usize, len: usize) -> impl Iterator<Item = (usize, usize)> + '_ {
        let mut at = addr;
        let end = addr + len;
        std::iter::from_fn(move || {
            if at >= end {
                return None;
            }
            let next = if at < self.base {
                self.base.min(end)
            } else if at < self.end {
                // The end of this folded block (or of the folded part).
                (self.base + ((at - self.base) / self.block + 1) * self.block)
                    .min(self.end)
                    .min(end)
            } else {
                end
            };
            let piece = (self.at(at), next - at);
            at = next;
            Some(piece)
        })
    }
}

/// The [`FoldView`] of the globally folded allocation holding `p` (whole
/// buffers folded from their start only), if any.
pub(crate) fn fold_view(p: *const u8) -> Option<FoldView> {
    let addr = p as usize;
    STATE.with(|s| {
        let s = s.borrow();
        let st = s.as_ref()?;
        let &Span {
            base, view_end: end, ..
        } = st.span_at_or_before(addr)?;
        (addr < end && st.canon != 0).then(|| FoldView {
            base,
            end,
            mask: if st.block.is_power_of_two() {
                st.block - 1
            } else {
                0
            },
            block: st.block,
            canon: st.canon,
        })
    })
}

/// What the bytes of a memory range hold, as far as copying goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Bytes {
    /// Real data: ordinary memory, unfolded parts of partial folds, written
    /// pages of copy-on-write regions.
    Data,
    /// Never-written copy-on-write pages: they read as zeros, and stay
    /// folded unless something different is written.
    Zero,
    /// Folded memory (shared by everyone): garbage, never copied.
    Garbage,
    /// Copy-on-write pages not looked up (short ranges): data or zeros.
    Unknown,
}

/// Below this many bytes of a copy-on-write region, a classification does not
/// read the page map: the bytes are [`Bytes::Unknown`], read as data and
/// written only where they differ ([`copy_changed`]), which is always
/// correct; a page map read costs more than a few pages of copying.
const PAGEMAP_MIN_BYTES: usize = 16 * PAGE;

/// The classification of `[p, p+len)`: sorted runs `(start, end, what)`
/// relative to `p` that cover the range. Built once per buffer and message.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Layout {
    runs: Vec<(usize, usize, Bytes)>,
}

impl Layout {
    /// Classifies `[p, p+len)`; `None` when it touches no folded allocation
    /// (everything is data).
    pub(crate) fn of(p: *const u8, len: usize) -> Option<Layout> {
        Self::of_ranges(p, &[(0, len)])
    }

    /// Classifies the byte ranges `ranges` (relative to `origin`, sorted and
    /// disjoint; the bytes between them are left out); `None` when none of
    /// them touches a folded allocation. A message's type map may reach far
    /// apart buffers (HPL's panel type holds a column block of the matrix and
    /// a small workspace): only the bytes it uses are looked up.
    pub(crate) fn of_ranges(origin: *const u8, ranges: &[(usize, usize)]) -> Option<Layout> {
        let origin = origin as usize;
        if !ranges
            .iter()
            .any(|&(a, b)| b > a && touches_folded((origin + a) as *const u8, b - a))
        {
            return None;
        }
        STATE.with(|s| {
            let s = s.borrow();
            let st = s.as_ref()?;
            let mut runs: Vec<(usize, usize, Bytes)> = Vec::new();
            for &(a, b) in ranges {
                classify(st, origin, a, b, &mut runs);
            }
            Some(Layout { runs })
        })
    }

    /// The runs of `[a, b)`, clipped to it.
    pub(crate) fn runs_in(&self, a: usize, b: usize) -> impl Iterator<Item = (usize, usize, Bytes)> + '_ {
        self.runs_meeting(a, b)
            .iter()
            .map(move |&(s0, e0, w)| (s0.max(a), e0.min(b), w))
    }

    /// The runs that meet `[a, b)`, not clipped (the first may start before
    /// `a`, the last end after `b`): a slice, for callers that search it.
    fn runs_meeting(&self, a: usize, b: usize) -> &[(usize, usize, Bytes)] {
        let first = self.runs.partition_point(|r| r.1 <= a);
        let last = self.runs.partition_point(|r| r.0 < b);
        &self.runs[first..last.max(first)]
    }

    /// Whether every byte is folded garbage (a message from it carries nothing).
    pub(crate) fn all_garbage(&self) -> bool {
        self.runs.iter().all(|r| r.2 == Bytes::Garbage)
    }
}

/// Appends to `runs` the classification of bytes `[a, b)` after `origin`
/// (runs relative to `origin`, merged with the previous one when alike).
fn classify(st: &State, origin: usize, a: usize, b: usize, runs: &mut Vec<(usize, usize, Bytes)>) {
    if a >= b {
        return;
    }
    let (addr, end) = (origin + a, origin + b);
    let mut push = |s0: usize, e0: usize, what: Bytes| {
        if s0 >= e0 {
            return;
        }
        match runs.last_mut() {
            Some((_, e, w)) if *e == s0 && *w == what => *e = e0,
            _ => runs.push((s0, e0, what)),
        }
    };
    // The allocation containing `addr`, if any, then those starting inside the
    // range: found in the bisected `bounds` (the B-tree is walked only for
    // the private ranges of non-copy-on-write allocations).
    let from = st.bounds.partition_point(|b| b.base <= addr);
    let first = from.checked_sub(1).filter(|&i| addr < st.bounds[i].end);
    let to = st.bounds.partition_point(|b| b.base < end);
    let mut cursor = addr;
    for span in first.into_iter().chain(from..to).map(|i| st.bounds[i]) {
        let base = span.base;
        // Ordinary memory before this allocation.
        push(cursor - origin, base.max(cursor).min(end) - origin, Bytes::Data);
        let off = cursor.max(base) - base;
        let stop = (end - base).min(span.end - base);
        let clip = |x: usize| x.clamp(off, stop) + base - origin;
        if !span.cow {
            let mut at = off;
            for &(s0, e0) in &st.allocs[&base].private {
                push(clip(at), clip(s0), Bytes::Garbage);
                push(clip(s0), clip(e0), Bytes::Data);
                at = at.max(e0);
            }
            push(clip(at), clip(stop), Bytes::Garbage);
        } else if stop - off < PAGEMAP_MIN_BYTES {
            push(clip(off), clip(stop), Bytes::Unknown);
        } else {
            // Written pages hold data; the gaps between them are zeros.
            let mut at = off;
            written_runs(st.pagemap, base, off / PAGE, stop.div_ceil(PAGE), |f, l| {
                push(clip(at), clip(f * PAGE), Bytes::Zero);
                push(clip(f * PAGE), clip(l * PAGE), Bytes::Data);
                at = l * PAGE;
            });
            push(clip(at), clip(stop), Bytes::Zero);
        }
        cursor = base + stop;
    }
    push(cursor - origin, b, Bytes::Data);
}

/// Moves `n` bytes from `src` to `dst` as a message does, given the layouts
/// of the buffers they lie in (`soff`/`doff`: their offsets in those
/// layouts). Folded garbage is neither read nor written; zeros from
/// never-written pages land as zeros; never-written destination pages are
/// written only where the data differs, so they stay folded when it is zeros.
///
/// # Safety
/// Both ranges must be valid for `n` bytes; the layouts must describe them.
pub(crate) unsafe fn transfer(
    src: *const u8,
    slay: Option<&Layout>,
    soff: usize,
    dst: *mut u8,
    dlay: Option<&Layout>,
    doff: usize,
    n: usize,
) {
    // Safety: the caller upholds this function's contract (see its `# Safety`).
    unsafe {
        if slay.is_none() && dlay.is_none() {
            std::ptr::copy(src, dst, n);
            return;
        }
        // The runs of both ranges, unclipped (borrowed: no allocation per
        // message); a range without a layout is one run of data.
        let (send, dend) = (soff + n, doff + n);
        let (whole_src, whole_dst) = ([(soff, send, Bytes::Data)], [(doff, dend, Bytes::Data)]);
        let src_runs = slay.map_or(&whole_src[..], |l| l.runs_meeting(soff, send));
        let dest = dlay.map_or(&whole_dst[..], |l| l.runs_meeting(doff, dend));
        for &(sa, sb, sw) in src_runs {
            if sw == Bytes::Garbage {
                continue;
            }
            // [lo, hi): this source run, clipped, relative to the message.
            let (lo, hi) = (sa.max(soff) - soff, sb.min(send) - soff);
            // Every destination run ends after `doff`; one may start before it.
            let first = dest.partition_point(|r| r.1 - doff <= lo);
            for &(da, db, dw) in dest[first..].iter().take_while(|r| r.0 < doff + hi) {
                let (a, b) = (da.saturating_sub(doff).max(lo), (db - doff).min(hi));
                let (s, d) = (src.add(a), dst.add(a));
                match (sw, dw) {
                    (_, Bytes::Garbage) | (Bytes::Zero, Bytes::Zero) => {}
                    (Bytes::Zero, Bytes::Data) => std::ptr::write_bytes(d, 0, b - a),
                    (Bytes::Zero, _) => zero_changed(d, b - a),
                    (_, Bytes::Data) => std::ptr::copy(s, d, b - a),
                    (_, Bytes::Zero) => copy_nonzero(s, d, b - a),
                    _ => copy_changed(s, d, b - a),
                }
            }
        }
    }
}

/// Copies `n` bytes from `src` to `dst` one destination page at a time,
/// skipping the pages whose bytes are already equal: a write of the same data
/// into a never-written copy-on-write page would make it private for nothing
/// (HPL moves many all-zero blocks).
///
/// # Safety
/// Both ranges must be valid for `n` bytes.
pub(crate) unsafe fn copy_changed(src: *const u8, dst: *mut u8, n: usize) {
    // Safety: the caller upholds this function's contract (see its `# Safety`).
    unsafe {
        for_each_dst_page(dst, n, |at, len| {
            let (s, d) = (src.add(at), dst.add(at));
            if std::slice::from_raw_parts(s, len) != std::slice::from_raw_parts(d as *const u8, len) {
                std::ptr::copy(s, d, len);
            }
        });
    }
}

/// Calls `f(offset, len)` for the pieces of `[dst, dst+n)` cut at page boundaries of `dst`.
#[inline]
fn for_each_dst_page(dst: *mut u8, n: usize, mut f: impl FnMut(usize, usize)) {
    let mut at = 0;
    while at < n {
        let page_end = ((dst as usize + at) / PAGE + 1) * PAGE - dst as usize;
        let len = page_end.min(n) - at;
        f(at, len);
        at += len;
    }
}

/// A page of zeros to compare with (`memcmp` is vectorized; a byte loop is not).
static ZERO_PAGE: [u8; PAGE] = [0; PAGE];

/// [`copy_changed`] into never-written copy-on-write pages, which read as zeros: the
/// pages whose source bytes are all zero are skipped without reading the destination
/// (a read would map the zero file's pages there, to be unmapped again at the free).
///
/// # Safety
/// Both ranges must be valid for `n` bytes.
unsafe fn copy_nonzero(src: *const u8, dst: *mut u8, n: usize) {
    // Safety: the caller upholds this function's contract (see its `# Safety`).
    unsafe {
        for_each_dst_page(dst, n, |at, len| {
            let s = src.add(at);
            if std::slice::from_raw_parts(s, len) != &ZERO_PAGE[..len] {
                std::ptr::copy(s, dst.add(at), len);
            }
        });
    }
}

/// Writes zeros over `n` bytes at `dst`, skipping pages already zero (see
/// [`copy_changed`]).
///
/// # Safety
/// The range must be valid for `n` bytes.
unsafe fn zero_changed(dst: *mut u8, n: usize) {
    // Safety: the caller upholds this function's contract (see its `# Safety`).
    unsafe {
        for_each_dst_page(dst, n, |at, len| {
            let d = dst.add(at);
            if std::slice::from_raw_parts(d as *const u8, len) != &ZERO_PAGE[..len] {
                std::ptr::write_bytes(d, 0, len);
            }
        });
    }
}

/// Copies `len` bytes from `src` to `dst` as a message does (see
/// [`transfer`]): folded source bytes are not copied, never-written
/// copy-on-write pages carry zeros.
///
/// # Safety
/// Both ranges must be valid for `len` bytes.
pub(crate) unsafe fn copy(src: *const u8, dst: *mut u8, len: usize) {
    // Safety: the caller upholds this function's contract (see its `# Safety`).
    unsafe {
        if len == 0 {
            return;
        }
        if !FOLDED_EVER.with(std::cell::Cell::get) {
            std::ptr::copy(src, dst, len);
            return;
        }
        let (slay, dlay) = (Layout::of(src, len), Layout::of(dst, len));
        transfer(src, slay.as_ref(), 0, dst, dlay.as_ref(), 0, len);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cow_setup() {
        init("global", MIB, "", 32 * MIB, 256 << 10).unwrap();
    }

    fn runs(p: *const u8, len: usize) -> Vec<(usize, usize, Bytes)> {
        Layout::of(p, len).expect("folded").runs_in(0, len).collect()
    }

    #[test]
    fn copy_on_write_pages_are_zeros_until_written_then_data() {
        cow_setup();
        let p = alloc_cow(MIB).unwrap();
        // Never written (and read, which maps the zero file): zeros.
        // Safety: test data, valid for the sizes and types used.
        assert_eq!(unsafe { *p.add(5 * PAGE) }, 0);
        assert_eq!(runs(p, MIB), vec![(0, MIB, Bytes::Zero)]);
        // Safety: test data, valid for the sizes and types used.
        unsafe {
            *p.add(3 * PAGE + 7) = 1;
            std::ptr::write_bytes(p.add(10 * PAGE), 2, 2 * PAGE);
        }
        assert_eq!(
            runs(p, MIB),
            vec![
                (0, 3 * PAGE, Bytes::Zero),
                (3 * PAGE, 4 * PAGE, Bytes::Data),
                (4 * PAGE, 10 * PAGE, Bytes::Zero),
                (10 * PAGE, 12 * PAGE, Bytes::Data),
                (12 * PAGE, MIB, Bytes::Zero),
            ]
        );
        // A short range is not looked up: data or zeros.
        assert_eq!(runs(p, 2 * PAGE), vec![(0, 2 * PAGE, Bytes::Unknown)]);
        assert!(free(p));
        reset();
    }

    #[test]
    fn freed_copy_on_write_regions_come_back_as_zeros() {
        cow_setup();
        let p = alloc_cow(2 * MIB).unwrap();
        // Safety: test data, valid for the sizes and types used.
        unsafe { std::ptr::write_bytes(p, 0x5a, 2 * MIB) };
        assert!(free(p));
        // A slightly smaller request reuses the region (best fit), wiped.
        let q = alloc_cow(2 * MIB - 3 * PAGE).unwrap();
        assert_eq!(p, q);
        // Safety: test data, valid for the sizes and types used.
        assert!(unsafe { std::slice::from_raw_parts(q, 2 * MIB - 3 * PAGE) }
            .iter()
            .all(|&b| b == 0));
        assert_eq!(
            runs(q, 2 * MIB - 3 * PAGE),
            vec![(0, 2 * MIB - 3 * PAGE, Bytes::Zero)]
        );
        assert!(free(q));
        reset();
    }

    #[test]
    fn copies_keep_never_written_pages_folded_when_the_data_is_zeros() {
        cow_setup();
        let (src, dst) = (alloc_cow(MIB).unwrap(), alloc_cow(MIB).unwrap());
        // Safety: test data, valid for the sizes and types used.
        unsafe {
            // Source: page 0 written with zeros (data, but all zero), page 1 with ones.
            std::ptr::write_bytes(src, 0, PAGE);
            std::ptr::write_bytes(src.add(PAGE), 1, PAGE);
            copy(src, dst, MIB);
            assert_eq!(*dst.add(PAGE + 9), 1, "real data arrives");
            assert_eq!(*dst.add(9), 0);
        }
        // Only the page that received different bytes became private.
        assert_eq!(
            runs(dst, MIB),
            vec![
                (0, PAGE, Bytes::Zero),
                (PAGE, 2 * PAGE, Bytes::Data),
                (2 * PAGE, MIB, Bytes::Zero)
            ]
        );
        // Never-written source pages carry zeros over data.
        let mut plain = vec![7u8; 3 * PAGE];
        // Safety: test data, valid for the sizes and types used.
        unsafe { copy(src.add(MIB - 3 * PAGE), plain.as_mut_ptr(), 3 * PAGE) };
        assert!(plain.iter().all(|&b| b == 0));
        assert!(free(src) && free(dst));
        reset();
    }

    #[test]
    fn transfers_at_offsets_move_every_byte_but_folded_garbage() {
        cow_setup();
        // Source: copy-on-write pages, some written (data) and some not (zeros);
        // destination: another such region; and a buffer half folded (garbage).
        let (src, dst) = (alloc_cow(16 * PAGE).unwrap(), alloc_cow(16 * PAGE).unwrap());
        let half = alloc(8 * PAGE, &[(2 * PAGE, 5 * PAGE)], "t:half").unwrap();
        // Safety: test data, valid for the sizes and types used.
        unsafe {
            for (i, page) in [1, 3, 4, 9, 12].into_iter().enumerate() {
                for b in 0..PAGE {
                    *src.add(page * PAGE + b) = (i + b % 251 + 1) as u8;
                }
            }
            std::ptr::write_bytes(dst.add(5 * PAGE), 0xee, 2 * PAGE);
            for b in 0..8 * PAGE {
                *half.add(b) = (b % 13 + 1) as u8;
            }
        }
        let slay = Layout::of(src, 16 * PAGE);
        let hlay = Layout::of(half, 8 * PAGE);
        // (source offset, destination offset, bytes): runs cut at both ends. The
        // pointers given are the message's; the offsets place it in the layouts.
        for (soff, doff, n) in [
            (0, 0, 16 * PAGE),
            (PAGE / 2, 3 * PAGE + 7, 9 * PAGE),
            (4 * PAGE - 1, 17, 2),
        ] {
            let mut plain = vec![0x55u8; 16 * PAGE];
            // Classified anew: the previous round made some of its pages private.
            let dlay = Layout::of(dst, 16 * PAGE);
            // Safety: the ranges lie in the buffers above, which the layouts describe.
            let (want, got_cow) = unsafe {
                let s = src.add(soff);
                transfer(
                    s,
                    slay.as_ref(),
                    soff,
                    plain.as_mut_ptr().add(doff),
                    None,
                    doff,
                    n,
                );
                transfer(s, slay.as_ref(), soff, dst.add(doff), dlay.as_ref(), doff, n);
                let want = std::slice::from_raw_parts(src.add(soff), n).to_vec();
                (want, std::slice::from_raw_parts(dst, 16 * PAGE).to_vec())
            };
            let first_difference = |got: &[u8]| (0..n).find(|&i| got[doff + i] != want[i]);
            assert_eq!(
                first_difference(&plain),
                None,
                "into plain memory at {soff}, {doff}, {n}"
            );
            assert!(plain[..doff].iter().chain(&plain[doff + n..]).all(|&b| b == 0x55));
            assert_eq!(
                first_difference(&got_cow),
                None,
                "into copy-on-write pages at {soff}, {doff}, {n}"
            );
        }
        // From the half-folded buffer at an offset: its private bytes arrive, its garbage not.
        let mut plain = vec![0u8; 8 * PAGE];
        let (soff, n) = (PAGE + 100, 5 * PAGE);
        // Safety: as above.
        unsafe {
            transfer(
                half.add(soff),
                hlay.as_ref(),
                soff,
                plain.as_mut_ptr(),
                None,
                0,
                n,
            )
        };
        for (i, &b) in plain[..n].iter().enumerate() {
            let at = soff + i;
            let want = if (2 * PAGE..5 * PAGE).contains(&at) {
                0
            } else {
                (at % 13 + 1) as u8
            };
            assert_eq!(b, want, "byte {i} (source byte {at})");
        }
        assert!(free(src) && free(dst) && free(half));
        reset();
    }

    #[test]
    fn folded_source_bytes_are_never_copied() {
        cow_setup();
        let folded = alloc(4 * PAGE, &[(0, 4 * PAGE)], "t:folded").unwrap();
        // Safety: test data, valid for the sizes and types used.
        unsafe { std::ptr::write_bytes(folded, 3, 4 * PAGE) };
        let mut plain = vec![9u8; 4 * PAGE];
        // Safety: test data, valid for the sizes and types used.
        unsafe { copy(folded, plain.as_mut_ptr(), 4 * PAGE) };
        assert!(plain.iter().all(|&b| b == 9), "garbage is not copied");
        assert!(free(folded));
        reset();
    }

    #[test]
    fn the_canonical_view_reaches_the_same_folded_memory() {
        cow_setup();
        let p = alloc(3 * MIB + 100, &[(0, 3 * MIB + 100)], "t:view").unwrap();
        let v = fold_view(p).expect("a whole-buffer global fold");
        let at = p as usize + MIB + MIB / 2;
        // Safety: test data, valid for the sizes and types used.
        unsafe { *(at as *mut u64) = 0xfeed };
        assert_ne!(v.at(at), at);
        assert_eq!(
            // Safety: test data, valid for the sizes and types used.
            unsafe { *(v.at(at) as *const u64) },
            0xfeed,
            "same physical memory"
        );
        // Every block maps the file from its start.
        assert_eq!(v.at(p as usize + 2 * MIB + 8), v.at(p as usize + 8));
        // The unfolded tail (past the last whole page) is not redirected.
        let tail = p as usize + 3 * MIB + 50;
        assert_eq!(v.at(tail), tail);
        // A range across a block boundary comes in two pieces.
        let pieces: Vec<(usize, usize)> = v.pieces(p as usize + MIB - 16, 32).collect();
        assert_eq!(
            pieces,
            vec![(v.at(p as usize + MIB - 16), 16), (v.at(p as usize + MIB), 16)]
        );
        assert!(free(p));
        reset();
    }

    #[test]
    fn whole_folds_alias_across_holders_but_never_within_one() {
        cow_setup();
        let a0 = alloc_by(0, 3 * MIB, &[(0, 3 * MIB)], "t:a").unwrap();
        let a1 = alloc_by(1, 3 * MIB - 5, &[(0, 3 * MIB - 5)], "t:a").unwrap();
        assert_eq!(a0, a1, "two ranks share one region");
        let b0 = alloc_by(0, 3 * MIB, &[(0, 3 * MIB)], "t:b").unwrap();
        assert_ne!(a0, b0, "a rank's two buffers are distinct");
        // Partial folds keep private parts: never shared.
        let p0 = alloc_by(0, 3 * MIB, &[(PAGE, 3 * MIB)], "t:p").unwrap();
        let p1 = alloc_by(1, 3 * MIB, &[(PAGE, 3 * MIB)], "t:p").unwrap();
        assert_ne!(p0, p1);
        // Rank 0 frees its share; rank 1 still holds the region.
        assert!(free_by(0, a0));
        assert_eq!(size_of(a1), Some(3 * MIB));
        let c0 = alloc_by(0, 2 * MIB + 1, &[(0, 2 * MIB + 1)], "t:c").unwrap();
        assert_eq!(c0, a0, "a held region serves another rank's allocation that fits");
        assert!(free_by(1, a1) && free_by(0, c0) && free_by(0, b0));
        assert_eq!(size_of(a0), None, "freed by every holder");
        assert!(free_by(0, p0) && free_by(1, p1));
        reset();
    }
}
