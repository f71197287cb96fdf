//! Loading the application: one private copy of the program per rank.
//!
//! `smpicc` builds the program as a shared object exporting `main`. The dynamic
//! loader shares one load of a given file, so to give every rank its own
//! globals (`.data`/`.bss`), each rank loads its own copy of the file from a
//! private temporary directory (SMPI's "dlopen privatization"). The copies are
//! unlinked right after loading unless `smpi/keep-temps` is set. With
//! `smpi/privatization:no` the program is loaded once and ranks share globals.
//!
//! The in-memory copies share their read-only segments (code, constants): once
//! a copy is loaded, those segments are mapped from the first copy's file and
//! the copy's own pages are freed, so memory grows with the ranks' writable
//! data only (4096 copies of HPL: 32 MiB instead of 905 MiB).
//!
//! Limits: every copy costs about 5 memory mappings; with 8 MiB coroutine
//! stacks (2 mappings each) a run needs roughly 8 mappings per rank, so
//! `vm.max_map_count` (default 65530) allows about 8,000 ranks.

use std::ffi::{c_char, c_int, CString};
use std::path::{Path, PathBuf};

/// The C `main` of the application.
pub(crate) type MainFn = unsafe extern "C" fn(c_int, *mut *mut c_char) -> c_int;

/// Loaded copies of the program, one `main` per rank.
pub(crate) struct Program {
    pub mains: Vec<MainFn>,
    /// The `dlopen` handle of each rank's copy (one shared handle without privatization).
    pub handles: Vec<*mut std::ffi::c_void>,
    libs: Vec<libloading::Library>,
    dir: Option<PathBuf>,
    keep: bool,
}

/// An error while loading the program.
#[derive(Debug, thiserror::Error)]
pub(crate) enum LoadError {
    #[error("cannot read program {path}: {source}")]
    Read { path: PathBuf, source: std::io::Error },
    #[error("{path} is not a shared object built by smpicc (rebuild it with smpicc): {message}")]
    NotShared { path: PathBuf, message: String },
    #[error("{path}: no `main` symbol exported: {message}")]
    NoMain { path: PathBuf, message: String },
    #[error(
        "{ranks} ranks need about {needed} memory mappings ({per_rank} per rank: a copy of the \
         program and a coroutine stack), beyond this system's limit vm.max_map_count = {limit} \
         (about {fit} ranks fit): raise it (sysctl -w vm.max_map_count={suggested}, as root), \
         or run fewer ranks, or share one copy of the program (-no-privatize, if its globals \
         allow)"
    )]
    TooManyRanks {
        ranks: usize,
        needed: usize,
        per_rank: usize,
        limit: usize,
        fit: usize,
        suggested: usize,
    },
    #[error("cannot copy the program for rank {rank} to {dir}: {source}")]
    Copy {
        rank: usize,
        dir: PathBuf,
        source: std::io::Error,
    },
}

impl Program {
    /// Loads `path` for `ranks` ranks.
    pub(crate) fn load(
        path: &Path,
        ranks: usize,
        privatize: bool,
        tmpdir: &Path,
        keep: bool,
    ) -> Result<Self, LoadError> {
        let meta = std::fs::metadata(path).map_err(|e| LoadError::Read {
            path: path.into(),
            source: e,
        })?;
        if !meta.is_file() {
            return Err(LoadError::Read {
                path: path.into(),
                source: std::io::Error::other("not a regular file"),
            });
        }
        let mut header = [0u8; 18];
        let f = std::fs::File::open(path).map_err(|e| LoadError::Read {
            path: path.into(),
            source: e,
        })?;
        use std::io::Read;
        let _ = (&f).read(&mut header);
        // ELF e_type at offset 16: 3 = ET_DYN (shared object or PIE).
        if &header[0..4] != b"\x7fELF" || header[16] != 3 {
            return Err(LoadError::NotShared {
                path: path.into(),
                message: "not an ELF shared object".into(),
            });
        }
        let mut prog = Program {
            mains: Vec::with_capacity(ranks),
            handles: Vec::new(),
            libs: Vec::new(),
            dir: None,
            keep,
        };
        if !privatize {
            let lib = open(path)?;
            let (lib, handle) = split(lib);
            let main = find_main(&lib, path)?;
            prog.mains = vec![main; ranks];
            prog.handles.push(handle);
            prog.libs.push(lib);
            return Ok(prog);
        }
        let image = std::fs::read(path).map_err(|e| LoadError::Read {
            path: path.into(),
            source: e,
        })?;
        if let Some(warning) = memory_warning(writable_bytes(&image), ranks, mem_available()) {
            eprintln!("smpirun: warning: {warning}");
        }
        if !keep {
            return load_memfd(path, &image, ranks, prog);
        }
        let dir = tmpdir.join(format!("smpirun-{}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(|e| LoadError::Copy {
            rank: 0,
            dir: dir.clone(),
            source: e,
        })?;
        prog.dir = Some(dir.clone());
        let base = path.file_name().and_then(|s| s.to_str()).unwrap_or("app");
        for rank in 0..ranks {
            let copy = dir.join(format!("{base}-{rank}.so"));
            std::fs::copy(path, &copy).map_err(|e| LoadError::Copy {
                rank,
                dir: dir.clone(),
                source: e,
            })?;
            let (lib, handle) = split(open(&copy)?);
            prog.handles.push(handle);
            let main = find_main(&lib, path)?;
            if !keep {
                let _ = std::fs::remove_file(&copy);
            }
            prog.mains.push(main);
            prog.libs.push(lib);
        }
        Ok(prog)
    }
}

impl Drop for Program {
    fn drop(&mut self) {
        // Libraries stay mapped until exit: rank stacks may still reference them.
        for lib in self.libs.drain(..) {
            std::mem::forget(lib);
        }
        if let (Some(dir), false) = (&self.dir, self.keep) {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

/// Loads one in-memory copy per rank (`memfd_create`): no disk traffic, and the
/// copies vanish with the process.
///
/// The dynamic loader recognises an already-loaded object by the path it was
/// opened with, and descriptor numbers are reused once closed, so each copy is
/// opened through a uniquely named symbolic link to `/proc/self/fd/<n>`. Each `dlopen` compares
/// its path with every object already loaded (`strcmp`: a quarter of the start-up of a thousand
/// ranks), so the links have short paths that differ early: `<tmp>/smpi<pid>/<rank>-<program>.so`.
fn load_memfd(path: &Path, image: &[u8], ranks: usize, mut prog: Program) -> Result<Program, LoadError> {
    let links = std::env::temp_dir().join(format!("smpi{}", std::process::id()));
    std::fs::create_dir_all(&links).map_err(|e| LoadError::Copy {
        rank: 0,
        dir: links.clone(),
        source: e,
    })?;
    let base = path.file_name().and_then(|s| s.to_str()).unwrap_or("app");
    let segments = read_only_segments(image);
    // The first copy's descriptor and load address, kept while the others load.
    let mut first: Option<(c_int, usize)> = None;
    let mut maps_before = None;
    for rank in 0..ranks {
        let copy_err = |e: std::io::Error| LoadError::Copy {
            rank,
            dir: "memfd".into(),
            source: e,
        };
        let name = CString::new(format!("smpi-rank-{rank}")).expect("no NUL in name");
        // Safety: plain syscalls on a fresh descriptor we own.
        let fd = unsafe { libc::memfd_create(name.as_ptr(), libc::MFD_CLOEXEC) };
        if fd < 0 {
            return Err(copy_err(std::io::Error::last_os_error()));
        }
        let mut written = 0;
        while written < image.len() {
            // Safety: writing from a valid buffer to our descriptor.
            let n = unsafe { libc::write(fd, image[written..].as_ptr().cast(), image.len() - written) };
            if n <= 0 {
                return Err(copy_err(std::io::Error::last_os_error()));
            }
            written += n as usize;
        }
        let link = links.join(format!("{rank}-{base}.so"));
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(format!("/proc/self/fd/{fd}"), &link).map_err(copy_err)?;
        let opened = open(&link);
        let _ = std::fs::remove_file(&link);
        let (lib, handle) = split(opened?);
        match (first, load_address(handle)) {
            (None, Some(addr)) => first = Some((fd, addr)),
            (Some((fd0, addr0)), Some(addr)) => {
                // Safety: both copies are loaded from identical images.
                unsafe { share_segments(&segments, fd0, addr0, fd, addr) };
                // Safety: the loader keeps its own mapping; the descriptor is no longer needed.
                unsafe { libc::close(fd) };
            }
            // Safety: as above.
            (_, None) => unsafe {
                libc::close(fd);
            },
        }
        prog.handles.push(handle);
        let main = find_main(&lib, path)?;
        prog.mains.push(main);
        prog.libs.push(lib);
        // The second copy shows what one more costs in mappings (the first
        // differs: its read-only segments stay its own): refuse now, with the
        // knob to turn, rather than fail in the dynamic loader or a stack
        // allocation thousands of copies later.
        if rank == 0 {
            maps_before = map_count();
        } else if rank == 1 {
            check_map_budget(ranks, maps_before, map_count())?;
        }
    }
    let _ = std::fs::remove_dir(&links);
    if let Some((fd0, _)) = first {
        // Safety: our descriptor; the mappings keep the file.
        unsafe { libc::close(fd0) };
    }
    Ok(prog)
}

/// The warning for `ranks` private copies of a program whose writable data
/// (initialized and zeroed globals) is `per_rank` bytes, when together they
/// could exceed the `available` memory: each rank's globals become its own
/// memory as it writes them, and a run the kernel's out-of-memory killer
/// ends loses every line not yet printed.
fn memory_warning(per_rank: usize, ranks: usize, available: Option<usize>) -> Option<String> {
    let available = available?;
    let total = per_rank.saturating_mul(ranks);
    if ranks < 2 || total <= available / 10 * 9 {
        return None;
    }
    const MIB: f64 = 1024.0 * 1024.0;
    Some(format!(
        "the program's global variables take {:.1} MiB per rank: {ranks} private copies can grow to \
         {:.0} MiB if every rank writes all of them, more than the {:.0} MiB this machine has \
         available; run fewer ranks, share the globals (-no-privatize, if the program allows), or \
         allocate large arrays with SMPI_SHARED_MALLOC",
        per_rank as f64 / MIB,
        total as f64 / MIB,
        available as f64 / MIB
    ))
}

/// The memory the system can give without swapping (`MemAvailable`), in bytes.
fn mem_available() -> Option<usize> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: usize = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Mappings a coroutine stack takes (the stack and its guard page).
const STACK_MAPPINGS: usize = 2;

/// The process's current number of memory mappings (`None` if unknown).
fn map_count() -> Option<usize> {
    std::fs::read_to_string("/proc/self/maps")
        .ok()
        .map(|m| m.lines().count())
}

/// The system's limit on memory mappings per process.
fn map_limit() -> Option<usize> {
    std::fs::read_to_string("/proc/sys/vm/max_map_count")
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// Whether `ranks` copies (two loaded, `before` and `after` the second) and
/// their stacks fit under `vm.max_map_count`, with a tenth left for the
/// program's own allocations and memory folding.
fn check_map_budget(ranks: usize, before: Option<usize>, after: Option<usize>) -> Result<(), LoadError> {
    let (Some(before), Some(after), Some(limit)) = (before, after, map_limit()) else {
        return Ok(());
    };
    let per_rank = after.saturating_sub(before).max(1) + STACK_MAPPINGS;
    let needed = after + per_rank * ranks.saturating_sub(2) + STACK_MAPPINGS * 2;
    let budget = limit - limit / 10;
    if needed <= budget {
        return Ok(());
    }
    Err(LoadError::TooManyRanks {
        ranks,
        needed,
        per_rank,
        limit,
        fit: budget.saturating_sub(after) / per_rank + 2,
        suggested: (needed + needed / 10).next_power_of_two(),
    })
}

/// A read-only `PT_LOAD` segment (code, constants) of the image, in pages:
/// (first page's offset in the file and in memory, length).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Segment {
    file_offset: usize,
    vaddr: usize,
    len: usize,
    /// `PROT_*` as the loader maps it.
    prot: i32,
}

const PAGE: usize = 4096;

/// The read-only loadable segments of an ELF64 image (none if it cannot be
/// read as one).
fn read_only_segments(image: &[u8]) -> Vec<Segment> {
    let u16_at = |o: usize| {
        image
            .get(o..o + 2)
            .map(|b| u16::from_le_bytes([b[0], b[1]]) as usize)
    };
    let u32_at = |o: usize| {
        image
            .get(o..o + 4)
            .map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes")))
    };
    let u64_at = |o: usize| {
        image
            .get(o..o + 8)
            .map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")) as usize)
    };
    // ELF64, little-endian (EI_CLASS 2, EI_DATA 1).
    if image.len() < 64 || image[4] != 2 || image[5] != 1 {
        return vec![];
    }
    let (Some(phoff), Some(phentsize), Some(phnum)) = (u64_at(32), u16_at(54), u16_at(56)) else {
        return vec![];
    };
    const PT_LOAD: u32 = 1;
    const PF_W: u32 = 2;
    (0..phnum)
        .filter_map(|i| {
            let h = phoff + i * phentsize;
            let (kind, flags) = (u32_at(h)?, u32_at(h + 4)?);
            let (offset, vaddr, filesz) = (u64_at(h + 8)?, u64_at(h + 16)?, u64_at(h + 32)?);
            if kind != PT_LOAD || flags & PF_W != 0 || offset % PAGE != vaddr % PAGE {
                return None;
            }
            let start = offset / PAGE * PAGE;
            const PF_X: u32 = 1;
            const PF_R: u32 = 4;
            let prot = if flags & PF_R != 0 { libc::PROT_READ } else { 0 }
                | if flags & PF_X != 0 { libc::PROT_EXEC } else { 0 };
            Some(Segment {
                file_offset: start,
                vaddr: vaddr / PAGE * PAGE,
                len: (offset + filesz).div_ceil(PAGE) * PAGE - start,
                prot,
            })
        })
        .collect()
}

/// The bytes of an ELF64 image's writable loadable segments as loaded
/// (initialized data and its zeroed tail, `.bss`): what each private copy
/// may come to own (0 if the image cannot be read as ELF64).
fn writable_bytes(image: &[u8]) -> usize {
    let field = |o: usize, n: usize| -> Option<usize> {
        let b = image.get(o..o + n)?;
        Some(b.iter().rev().fold(0usize, |acc, &x| (acc << 8) | x as usize))
    };
    if image.len() < 64 || image[4] != 2 || image[5] != 1 {
        return 0;
    }
    let (Some(phoff), Some(phentsize), Some(phnum)) = (field(32, 8), field(54, 2), field(56, 2)) else {
        return 0;
    };
    const PT_LOAD: usize = 1;
    const PF_W: usize = 2;
    (0..phnum)
        .filter_map(|i| {
            let h = phoff.checked_add(i.checked_mul(phentsize)?)?;
            let (kind, flags, memsz) = (field(h, 4)?, field(h + 4, 4)?, field(h + 40, 8)?);
            (kind == PT_LOAD && flags & PF_W != 0).then_some(memsz)
        })
        .fold(0usize, usize::saturating_add)
}

/// Where the loader put an object (`l_addr`).
fn load_address(handle: *mut std::ffi::c_void) -> Option<usize> {
    #[repr(C)]
    struct LinkMapHead {
        l_addr: usize,
    }
    let mut map: *const LinkMapHead = std::ptr::null();
    // Safety: RTLD_DI_LINKMAP stores a `struct link_map *`.
    let rc = unsafe { libc::dlinfo(handle, 2, (&mut map as *mut *const LinkMapHead).cast()) };
    // Safety: a valid link map from the loader.
    (rc == 0 && !map.is_null()).then(|| unsafe { (*map).l_addr })
}

/// Maps the read-only segments of the copy at `addr` (file `fd`) from the
/// first copy's file instead, where their bytes are identical (they are,
/// unless the loader relocated code), and frees the copy's own pages: code
/// and constants are then in memory once for all ranks (4096 copies of HPL
/// took 0.9 GB).
///
/// # Safety
/// Both copies must be loaded and `fd0`/`fd` their files.
unsafe fn share_segments(segments: &[Segment], fd0: c_int, addr0: usize, fd: c_int, addr: usize) {
    // Safety: the caller upholds this function's contract (see its `# Safety`).
    unsafe {
        for seg in segments {
            let (mine, theirs) = ((addr + seg.vaddr) as *mut u8, (addr0 + seg.vaddr) as *const u8);
            if std::slice::from_raw_parts(mine, seg.len) != std::slice::from_raw_parts(theirs, seg.len) {
                continue;
            }
            let m = libc::mmap(
                mine.cast(),
                seg.len,
                seg.prot,
                libc::MAP_FIXED | libc::MAP_PRIVATE,
                fd0,
                seg.file_offset as libc::off_t,
            );
            if m != libc::MAP_FAILED {
                libc::fallocate(
                    fd,
                    libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
                    seg.file_offset as libc::off_t,
                    seg.len as libc::off_t,
                );
            }
        }
    }
}

/// A library and its raw `dlopen` handle.
fn split(lib: libloading::Library) -> (libloading::Library, *mut std::ffi::c_void) {
    let unix: libloading::os::unix::Library = lib.into();
    let raw = unix.into_raw();
    // Safety: `raw` comes from `into_raw` just above.
    let lib = unsafe { libloading::os::unix::Library::from_raw(raw) };
    (lib.into(), raw)
}

fn open(path: &Path) -> Result<libloading::Library, LoadError> {
    // Safety: loading the user's program is the point; its initialisers run here.
    unsafe {
        libloading::os::unix::Library::open(Some(path), libc::RTLD_LAZY | libc::RTLD_LOCAL)
            .map(libloading::Library::from)
            .map_err(|e| LoadError::NotShared {
                path: path.into(),
                message: e.to_string(),
            })
    }
}

fn find_main(lib: &libloading::Library, path: &Path) -> Result<MainFn, LoadError> {
    // Safety: `main` has the C signature by definition of a C program.
    unsafe {
        lib.get::<MainFn>(b"main\0")
            .map(|s| *s)
            .map_err(|e| LoadError::NoMain {
                path: path.into(),
                message: e.to_string(),
            })
    }
}

/// Builds a C `argv` (NUL-terminated array) from strings; the returned
/// vectors must outlive the call.
pub(crate) fn c_argv(args: &[String]) -> (Vec<CString>, Vec<*mut c_char>) {
    let owned: Vec<CString> = args
        .iter()
        .map(|a| CString::new(a.as_str()).unwrap_or_else(|_| CString::new("?").expect("no NUL")))
        .collect();
    let mut ptrs: Vec<*mut c_char> = owned.iter().map(|c| c.as_ptr() as *mut c_char).collect();
    ptrs.push(std::ptr::null_mut());
    (owned, ptrs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_only_segments_of_an_elf_image() {
        // This test binary: a position-independent executable with code and constants.
        let image = std::fs::read("/proc/self/exe").unwrap();
        let segs = read_only_segments(&image);
        assert!(!segs.is_empty());
        assert!(
            segs.iter().any(|s| s.prot & libc::PROT_EXEC != 0),
            "a code segment: {segs:?}"
        );
        for s in &segs {
            assert_eq!(s.file_offset % PAGE, 0);
            assert_eq!(s.vaddr % PAGE, 0);
            assert!(s.len > 0 && s.len % PAGE == 0);
            assert!(s.file_offset + s.len <= image.len().div_ceil(PAGE) * PAGE);
        }
        assert!(read_only_segments(b"not an elf").is_empty());
    }

    #[test]
    fn writable_data_of_an_elf_image_and_the_memory_warning() {
        // This test binary has globals (its data and bss segments).
        let image = std::fs::read("/proc/self/exe").unwrap();
        let per_rank = writable_bytes(&image);
        assert!(per_rank > 0 && per_rank < image.len() * 4, "{per_rank}");
        assert_eq!(writable_bytes(b"not an elf"), 0);
        const MIB: usize = 1 << 20;
        // 1000 ranks of 100 MiB against 16 GiB: warned, with the numbers and the knobs.
        let w = memory_warning(100 * MIB, 1000, Some(16 * 1024 * MIB)).unwrap();
        assert!(
            w.contains("100.0 MiB per rank") && w.contains("1000 private copies"),
            "{w}"
        );
        assert!(w.contains("-no-privatize") && w.contains("16384 MiB"), "{w}");
        // Within the memory, a single rank, or no /proc/meminfo: quiet.
        assert_eq!(memory_warning(MIB, 1000, Some(16 * 1024 * MIB)), None);
        assert_eq!(memory_warning(100 * 1024 * MIB, 1, Some(MIB)), None);
        assert_eq!(memory_warning(100 * MIB, 1000, None), None);
    }
}
