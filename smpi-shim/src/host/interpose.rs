//! Interposing application functions by name, in each rank's copy.
//!
//! A program built by `smpicc` is a position-independent shared object: calls
//! to its own global functions go through its PLT, i.e. through GOT entries
//! filled by the dynamic loader (`R_X86_64_JUMP_SLOT`, or `R_X86_64_GLOB_DAT`
//! with `-fno-plt`). After loading a copy we rewrite the entries of the
//! functions a model file names so they point at one of our trampolines, which
//! injects the model's time and does no work. Calls the compiler resolved
//! directly (static functions, `-fvisibility=hidden`, LTO) cannot be
//! intercepted; [`patch`] reports how many entries it rewrote so a model that
//! never applies is visible.
//!
//! Trampolines read the first six integer arguments (x86-64 System V: rdi,
//! rsi, rdx, rcx, r8, r9) as C `int`s: a model's `params` are the function's
//! first integer arguments, in order.

use std::ffi::{c_void, CStr};

use models::compute::KernelId;

use crate::mpi::entry;

/// How many distinct functions can be interposed at once.
pub(crate) const SLOTS: usize = 32;

struct Slot {
    kernel: KernelId,
    nparams: usize,
}

thread_local! {
    static TABLE: std::cell::RefCell<Vec<Slot>> = const { std::cell::RefCell::new(Vec::new()) };
}

fn dispatch(slot: usize, args: [i64; 6]) -> i64 {
    let _g = entry::enter();
    let found = TABLE.with(|t| t.borrow().get(slot).map(|s| (s.kernel, s.nparams)));
    if let Some((k, n)) = found {
        let mut params = [0f64; 6];
        for i in 0..n.min(6) {
            params[i] = args[i] as i32 as f64;
        }
        crate::host::compute::inject(k, &params[..n.min(6)]);
    }
    0
}

macro_rules! trampolines {
    ($($name:ident = $i:expr),* $(,)?) => {
        $(extern "C" fn $name(a: i64, b: i64, c: i64, d: i64, e: i64, f: i64) -> i64 {
            dispatch($i, [a, b, c, d, e, f])
        })*
        const TRAMPOLINES: [extern "C" fn(i64, i64, i64, i64, i64, i64) -> i64; SLOTS] = [$($name),*];
    };
}

trampolines!(
    t0 = 0,
    t1 = 1,
    t2 = 2,
    t3 = 3,
    t4 = 4,
    t5 = 5,
    t6 = 6,
    t7 = 7,
    t8 = 8,
    t9 = 9,
    t10 = 10,
    t11 = 11,
    t12 = 12,
    t13 = 13,
    t14 = 14,
    t15 = 15,
    t16 = 16,
    t17 = 17,
    t18 = 18,
    t19 = 19,
    t20 = 20,
    t21 = 21,
    t22 = 22,
    t23 = 23,
    t24 = 24,
    t25 = 25,
    t26 = 26,
    t27 = 27,
    t28 = 28,
    t29 = 29,
    t30 = 30,
    t31 = 31,
);

/// Registers the functions to interpose; returns their trampoline addresses by name.
pub(crate) fn register(functions: &[(String, KernelId, usize)]) -> Result<Vec<(String, usize)>, String> {
    if functions.len() > SLOTS {
        return Err(format!(
            "at most {SLOTS} functions can be modelled by name ({} given)",
            functions.len()
        ));
    }
    if let Some((name, _, n)) = functions.iter().find(|f| f.2 > 6) {
        return Err(format!(
            "function model {name}: {n} params, but a modelled function's parameters are its first six integer arguments (at most 6)"
        ));
    }
    TABLE.with(|t| {
        let mut t = t.borrow_mut();
        t.clear();
        for (_, k, n) in functions {
            t.push(Slot {
                kernel: *k,
                nparams: *n,
            });
        }
    });
    Ok(functions
        .iter()
        .enumerate()
        .map(|(i, (name, _, _))| (name.clone(), TRAMPOLINES[i] as usize))
        .collect())
}

#[repr(C)]
struct LinkMap {
    l_addr: usize,
    l_name: *const i8,
    l_ld: *const Elf64Dyn,
    l_next: *mut LinkMap,
    l_prev: *mut LinkMap,
}

#[repr(C)]
struct Elf64Dyn {
    d_tag: i64,
    d_val: u64,
}

#[repr(C)]
struct Elf64Rela {
    r_offset: u64,
    r_info: u64,
    r_addend: i64,
}

#[repr(C)]
struct Elf64Sym {
    st_name: u32,
    st_info: u8,
    st_other: u8,
    st_shndx: u16,
    st_value: u64,
    st_size: u64,
}

const DT_NULL: i64 = 0;
const DT_PLTRELSZ: i64 = 2;
const DT_STRTAB: i64 = 5;
const DT_SYMTAB: i64 = 6;
const DT_RELA: i64 = 7;
const DT_RELASZ: i64 = 8;
const DT_JMPREL: i64 = 23;
const R_X86_64_GLOB_DAT: u32 = 6;
const R_X86_64_JUMP_SLOT: u32 = 7;

const R_X86_64_64: u32 = 1;
const SHN_UNDEF: u16 = 0;
const SHN_ABS: u16 = 0xfff1;
const STT_TLS: u8 = 6;

/// One relocation of the loaded program that the loader resolved by symbol.
struct SymbolReloc<'a> {
    name: &'a str,
    sym: &'a Elf64Sym,
    kind: u32,
    addend: i64,
    /// The relocated word, in the loaded copy.
    slot: *mut usize,
}

/// Calls `f` for every JUMP_SLOT, GLOB_DAT and 64-bit absolute relocation of
/// the object loaded as `handle`; `base` is its load address.
unsafe fn for_each_symbol_reloc(
    handle: *mut c_void,
    mut f: impl FnMut(usize, &SymbolReloc),
) -> Result<(), String> {
    // Safety: the caller upholds this function's contract (see its `# Safety`).
    unsafe {
        let mut lm: *mut LinkMap = std::ptr::null_mut();
        if libc::dlinfo(
            handle,
            libc::RTLD_DI_LINKMAP,
            (&mut lm as *mut *mut LinkMap).cast(),
        ) != 0
            || lm.is_null()
        {
            return Err("cannot read the program's link map".into());
        }
        let base = (*lm).l_addr;
        let mut d = (*lm).l_ld;
        let (mut strtab, mut symtab, mut jmprel, mut pltrelsz, mut rela, mut relasz) =
            (0u64, 0u64, 0u64, 0u64, 0u64, 0u64);
        while (*d).d_tag != DT_NULL {
            match (*d).d_tag {
                DT_STRTAB => strtab = (*d).d_val,
                DT_SYMTAB => symtab = (*d).d_val,
                DT_JMPREL => jmprel = (*d).d_val,
                DT_PLTRELSZ => pltrelsz = (*d).d_val,
                DT_RELA => rela = (*d).d_val,
                DT_RELASZ => relasz = (*d).d_val,
                _ => {}
            }
            d = d.add(1);
        }
        // The loader relocates these d_ptr entries to absolute addresses on glibc.
        let fix = |p: u64| {
            if p != 0 && (p as usize) < base {
                p as usize + base
            } else {
                p as usize
            }
        };
        let (strtab, symtab) = (fix(strtab), fix(symtab));
        if strtab == 0 || symtab == 0 {
            return Err("the program has no dynamic symbol table".into());
        }
        for (table, size) in [(fix(jmprel), pltrelsz), (fix(rela), relasz)] {
            if table == 0 {
                continue;
            }
            let n = size as usize / std::mem::size_of::<Elf64Rela>();
            let relas = std::slice::from_raw_parts(table as *const Elf64Rela, n);
            for r in relas {
                let kind = (r.r_info & 0xffff_ffff) as u32;
                let index = (r.r_info >> 32) as usize;
                if !matches!(kind, R_X86_64_JUMP_SLOT | R_X86_64_GLOB_DAT | R_X86_64_64) || index == 0 {
                    continue;
                }
                let sym = &*((symtab as *const Elf64Sym).add(index));
                let name = CStr::from_ptr((strtab + sym.st_name as usize) as *const i8);
                let Ok(name) = name.to_str() else { continue };
                let slot = (base + r.r_offset as usize) as *mut usize;
                f(
                    base,
                    &SymbolReloc {
                        name,
                        sym,
                        kind,
                        addend: r.r_addend,
                        slot,
                    },
                );
            }
        }
        Ok(())
    }
}

/// Writes one relocated word, making its page writable first (the GOT may be
/// read-only after relocation, RELRO).
unsafe fn write_slot(slot: *mut usize, value: usize) {
    // Safety: the caller upholds this function's contract (see its `# Safety`).
    unsafe {
        let page = 4096usize;
        let start = (slot as usize) & !(page - 1);
        libc::mprotect(start as *mut c_void, page, libc::PROT_READ | libc::PROT_WRITE);
        *slot = value;
    }
}

thread_local! {
    /// Per symbol name the program defines: whether it keeps binding to `smpirun`.
    static BINDS_TO_SMPIRUN: std::cell::RefCell<std::collections::HashMap<String, bool>> =
        std::cell::RefCell::new(std::collections::HashMap::new());
}

/// Whether the global scope resolves `name` to a definition in the image
/// loaded at `smpirun_base`.
unsafe fn exported_by(name: &str, smpirun_base: usize) -> bool {
    // Safety: the caller upholds this function's contract (see its `# Safety`).
    unsafe {
        let Ok(cname) = std::ffi::CString::new(name) else {
            return false;
        };
        let bound = libc::dlsym(libc::RTLD_DEFAULT, cname.as_ptr());
        if bound.is_null() {
            return false;
        }
        let mut info: libc::Dl_info = std::mem::zeroed();
        libc::dladdr(bound, &mut info) != 0 && info.dli_fbase as usize == smpirun_base
    }
}

/// The address at which `smpirun`'s own image is loaded. Looked up once: `dladdr` also
/// searches the image's symbol table for the nearest symbol (about 10^5 instructions in
/// `smpirun`), and every rank's copy of the program asks.
fn smpirun_base() -> Result<usize, String> {
    static BASE: std::sync::OnceLock<Option<usize>> = std::sync::OnceLock::new();
    let base = *BASE.get_or_init(|| {
        // Safety: `dladdr` only reads the loader's tables; `info` is a plain C struct.
        unsafe {
            let mut info: libc::Dl_info = std::mem::zeroed();
            let here = smpirun_base as *const c_void;
            (libc::dladdr(here, &mut info) != 0).then_some(info.dli_fbase as usize)
        }
    });
    base.ok_or_else(|| "cannot locate smpirun's own image".to_string())
}

/// Binds the program's references to its own global symbols to its own
/// definitions, as they would bind in an executable: a program is loaded as a
/// shared object after `smpirun` and libc, so without this a global of the
/// program named like a libc symbol (MPICH's tests have `int err`, and `err`
/// is a libc function) would resolve to libc's, and a function the program
/// defines itself with a name `smpirun` exports (its own BLAS stub that
/// injects modelled time, as SMPI's HPL tutorials write it) would silently be
/// replaced by ours.
///
/// Only the simulator's API (MPI, PMPI and SMPI's own functions) and the
/// symbols `keep_ours` names (the BLAS kernels a model file models: the user
/// asked for them) keep binding to `smpirun`; `keep_ours` is asked once per
/// such name. Unlike linking with `-Bsymbolic`, calls still go through the
/// PLT, so [`patch`] can interpose them afterwards. Returns how many
/// relocations were rebound.
///
/// # Safety
/// `handle` must be a live `dlopen` handle.
pub(crate) unsafe fn bind_own_symbols(
    handle: *mut c_void,
    keep_ours: &mut dyn FnMut(&str) -> bool,
) -> Result<usize, String> {
    // Safety: the caller upholds this function's contract (see its `# Safety`).
    unsafe {
        let smpirun_base = smpirun_base()?;
        let mut rebound = 0usize;
        for_each_symbol_reloc(handle, |base, r| {
            let defined = r.sym.st_shndx != SHN_UNDEF && r.sym.st_shndx != SHN_ABS;
            if !defined || r.sym.st_info & 0xf == STT_TLS {
                return;
            }
            // Cached by name: every rank's copy asks.
            let ours = BINDS_TO_SMPIRUN.with(|c| {
                *c.borrow_mut().entry(r.name.to_string()).or_insert_with(|| {
                    exported_by(r.name, smpirun_base) && (is_simulator_api(r.name) || keep_ours(r.name))
                })
            });
            if ours {
                return;
            }
            let own = base + r.sym.st_value as usize;
            let value = match r.kind {
                R_X86_64_64 => own.wrapping_add(r.addend as usize),
                _ => own,
            };
            if *r.slot != value {
                write_slot(r.slot, value);
                rebound += 1;
            }
        })?;
        Ok(rebound)
    }
}

/// The cache lines holding the program's slots for the simulator's interface (its
/// MPI calls jump through them), at most `max`, in address order. Each rank's copy has
/// its own; the run loop prefetches a rank's lines before it resumes the rank
/// (`Simulation::set_hot_lines`), as they are cold by then with hundreds of ranks.
///
/// # Safety
/// `handle` must be a live `dlopen` handle.
pub(crate) unsafe fn api_slot_lines(handle: *mut c_void, max: usize) -> Result<Vec<usize>, String> {
    let mut lines = std::collections::BTreeSet::new();
    // Safety: the caller upholds this function's contract (see its `# Safety`).
    unsafe {
        for_each_symbol_reloc(handle, |_, r| {
            if r.kind == R_X86_64_JUMP_SLOT && is_simulator_api(r.name) {
                lines.insert(r.slot as usize & !63);
            }
        })?;
    }
    Ok(lines.into_iter().take(max).collect())
}

/// Whether `name` belongs to the interface the simulator implements for the
/// program (MPI, its Fortran names and common blocks, and SMPI's helpers): a
/// program never overrides those.
pub(crate) fn is_simulator_api(name: &str) -> bool {
    ["MPI_", "PMPI_", "MPIX_", "smpi_", "SMPI_", "mpi_", "pmpi_"]
        .iter()
        .any(|p| name.starts_with(p))
}

/// Points the program's references to the data symbols `targets` (name →
/// address) that it takes from a library (libc's `optind`, say) at the given
/// addresses instead. Returns how many relocations were rewritten.
///
/// The functions the program (loaded lazily) calls but nothing defines:
/// neither `smpirun` nor a library the program was linked with. Each would
/// end the run at its first call, in the dynamic loader, with everything the
/// program printed so far lost; `smpirun` refuses to start instead. Weak
/// references (allowed to stay undefined) are left out.
///
/// # Safety
/// `handle` must be a live `dlopen` handle.
pub(crate) unsafe fn unresolved_functions(handle: *mut c_void) -> Result<Vec<String>, String> {
    const STB_WEAK: u8 = 2;
    let mut missing = Vec::new();
    // Safety: a live handle, as the caller guarantees.
    unsafe {
        for_each_symbol_reloc(handle, |_, r| {
            if r.kind != R_X86_64_JUMP_SLOT || r.sym.st_shndx != SHN_UNDEF || r.sym.st_info >> 4 == STB_WEAK {
                return;
            }
            let Ok(name) = std::ffi::CString::new(r.name) else {
                return;
            };
            let found = !libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()).is_null()
                || !libc::dlsym(handle, name.as_ptr()).is_null();
            if !found && !missing.iter().any(|m: &String| m == r.name) {
                missing.push(r.name.to_string());
            }
        })?;
    }
    missing.sort();
    Ok(missing)
}

/// # Safety
/// `handle` must be a live `dlopen` handle, and each address valid for the
/// symbol's type for as long as the program runs.
pub(crate) unsafe fn bind_data(handle: *mut c_void, targets: &[(&str, usize)]) -> Result<usize, String> {
    // Safety: the caller upholds this function's contract (see its `# Safety`).
    unsafe {
        let mut rewritten = 0;
        for_each_symbol_reloc(handle, |_, r| {
            if r.sym.st_shndx != SHN_UNDEF {
                return; // the program's own variable of that name
            }
            if let Some((_, addr)) = targets.iter().find(|(t, _)| *t == r.name) {
                let value = match r.kind {
                    R_X86_64_64 => addr.wrapping_add(r.addend as usize),
                    _ => *addr,
                };
                write_slot(r.slot, value);
                rewritten += 1;
            }
        })?;
        Ok(rewritten)
    }
}

/// Rewrites the GOT entries of `targets` (name → address) in the object loaded
/// as `handle`. Returns the number of entries rewritten per target.
///
/// # Safety
/// `handle` must be a live `dlopen` handle.
pub(crate) unsafe fn patch(handle: *mut c_void, targets: &[(String, usize)]) -> Result<Vec<usize>, String> {
    // Safety: the caller upholds this function's contract (see its `# Safety`).
    unsafe {
        let mut counts = vec![0usize; targets.len()];
        if targets.is_empty() {
            return Ok(counts);
        }
        for_each_symbol_reloc(handle, |_, r| {
            if r.kind == R_X86_64_64 {
                return; // a function's address taken in data, not a call
            }
            if let Some(i) = targets.iter().position(|(t, _)| t == r.name) {
                write_slot(r.slot, targets[i].1);
                counts[i] += 1;
            }
        })?;
        Ok(counts)
    }
}
