//! Time-independent traces (`smpirun -trace-ti`, `tracing/smpi/format:TI`):
//! per rank, the MPI calls of the program with their arguments and the
//! computation between them in flops, never dates, in SMPI 3.32's format, so
//! that `smpirun -replay` (ours or SMPI's) can replay the run on any platform.
//!
//! Files, as SMPI writes them: `<file>` is an index with one path per line,
//! `<file>_files/rank-<r>.txt` holds rank r's lines (SMPI names them
//! `<wall-clock>_rank-<r+1>.txt`; ours are deterministic), or, with
//! `tracing/smpi/format/ti-one-file:yes`, `<file>_files/all-ranks.txt` holds
//! every rank's lines in the order they happened and the index lists it once.
//! A line is `<rank> <action> <fields>`; the fields of each action are those
//! of SMPI's `TIData` classes (`src/instr/instr_private.hpp`):
//!
//! ```text
//! 0 init
//! 0 compute 124114                      flops (C++ stream format: 6 significant digits)
//! 0 send 1 1 100 0                      send|Ssend|bsend|isend|ISsend|ibsend|recv|irecv:
//!                                       world partner, tag, count, datatype id
//! 0 wait 3 0 2                          wait|test: world source, world destination, tag
//! 0 waitall 2                           number of requests
//! 0 sendRecv 10 1 10 3 0 0              sendcount, dst, recvcount, src, types
//! 0 bcast 1000 1 0                      count, root (when > 0, or 0 with a type), type
//! 0 reduce 500 0 2 1                    count, flops (0), root, type
//! 0 allreduce 700 0 0                   count, flops (0), type
//! 0 alltoallv 40 10 10 10 10 46 10 11 12 13 0 0
//! 0 reducescatter 10 11 12 13 0 0       recvcounts, flops (0), type
//! 0 finalize
//! ```
//!
//! Datatype ids are SMPI's (`MPI_DOUBLE` 0, `MPI_INT` 1, `MPI_CHAR` 2,
//! `MPI_BYTE` 6, ...). Two choices differ from SMPI, both so that a replay is
//! not silently wrong: a derived datatype is written as its size in bytes with
//! `MPI_BYTE`'s id (SMPI writes an empty id, which its replayer reads as the
//! default type, with the count in derived elements), and a receive from
//! `MPI_ANY_SOURCE` names partner -1 (ours and SMPI's replayers take it as
//! any source). Like SMPI, collectives on a communicator other than
//! `MPI_COMM_WORLD` are written with their communicator-local root, and the
//! replay runs them on `MPI_COMM_WORLD`; the run ends with a warning naming
//! them, and with one for every MPI call the format cannot represent
//! (non-blocking collectives, `MPI_Waitany`, persistent requests, ...).
//!
//! Recording costs one branch per MPI call when it is off: the hooks in
//! [`crate::abi`] are `ti!(...)`, which tests [`on`] before evaluating
//! anything.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use crate::mpi::datatype::PREDEFINED_COUNT;
use crate::mpi::{with_world, World, MPI_ANY_SOURCE, MPI_COMM_WORLD, MPI_PROC_NULL};

/// Whether a TI trace is being recorded (set once, before the ranks run).
static ON: AtomicBool = AtomicBool::new(false);

/// Whether a TI trace is being recorded.
#[inline(always)]
pub(crate) fn on() -> bool {
    ON.load(Ordering::Relaxed)
}

/// Records a line only when a TI trace is being recorded: `ti!(ti_trace::f(..))`
/// evaluates nothing otherwise.
macro_rules! ti {
    ($e:expr) => {
        if $crate::mpi::ti_trace::on() {
            $e
        }
    };
}
pub(crate) use ti;

/// SMPI 3.32's datatype ids (`smpi_datatype.cpp`), by our predefined handle
/// (`mpi.h`); `None` where SMPI has no such type.
const SMPI_ID: [Option<u8>; PREDEFINED_COUNT] = {
    let mut t = [None; PREDEFINED_COUNT];
    // (our handle, SMPI id)
    let pairs: [(usize, u8); 67] = [
        (1, 2),   // MPI_CHAR
        (2, 8),   // MPI_SIGNED_CHAR
        (3, 9),   // MPI_UNSIGNED_CHAR
        (4, 6),   // MPI_BYTE
        (5, 3),   // MPI_SHORT
        (6, 10),  // MPI_UNSIGNED_SHORT
        (7, 1),   // MPI_INT
        (8, 11),  // MPI_UNSIGNED
        (9, 4),   // MPI_LONG
        (10, 12), // MPI_UNSIGNED_LONG
        (11, 7),  // MPI_LONG_LONG
        (12, 13), // MPI_UNSIGNED_LONG_LONG
        (13, 5),  // MPI_FLOAT
        (14, 0),  // MPI_DOUBLE
        (15, 14), // MPI_LONG_DOUBLE
        (16, 15), // MPI_WCHAR
        (17, 16), // MPI_C_BOOL
        (18, 17), // MPI_INT8_T
        (19, 18), // MPI_INT16_T
        (20, 19), // MPI_INT32_T
        (21, 20), // MPI_INT64_T
        (22, 21), // MPI_UINT8_T
        (23, 22), // MPI_UINT16_T
        (24, 23), // MPI_UINT32_T
        (25, 24), // MPI_UINT64_T
        (26, 28), // MPI_AINT
        (27, 29), // MPI_OFFSET
        (28, 59), // MPI_COUNT
        (29, 57), // MPI_PACKED
        (30, 30), // MPI_FLOAT_INT
        (31, 32), // MPI_DOUBLE_INT
        (32, 31), // MPI_LONG_INT
        (33, 34), // MPI_2INT
        (34, 33), // MPI_SHORT_INT
        (35, 50), // MPI_LONG_DOUBLE_INT
        (36, 25), // MPI_C_FLOAT_COMPLEX
        (37, 26), // MPI_C_DOUBLE_COMPLEX
        (38, 27), // MPI_C_LONG_DOUBLE_COMPLEX
        (39, 55), // MPI_UB
        (40, 56), // MPI_LB
        (41, 35), // MPI_2FLOAT
        (42, 36), // MPI_2DOUBLE
        (43, 37), // MPI_2LONG
        (44, 51), // MPI_CXX_BOOL
        (45, 52), // MPI_CXX_FLOAT_COMPLEX
        (46, 53), // MPI_CXX_DOUBLE_COMPLEX
        (47, 54), // MPI_CXX_LONG_DOUBLE_COMPLEX
        (48, 39), // MPI_REAL4
        (49, 40), // MPI_REAL8
        (50, 41), // MPI_REAL16
        (51, 42), // MPI_COMPLEX8
        (52, 43), // MPI_COMPLEX16
        (53, 44), // MPI_COMPLEX32
        (54, 45), // MPI_INTEGER1
        (55, 46), // MPI_INTEGER2
        (56, 47), // MPI_INTEGER4
        (57, 48), // MPI_INTEGER8
        // SMPI's Fortran bindings turn the Fortran types into C ones, except MPI_REAL.
        (58, 1),  // MPI_INTEGER: MPI_INT
        (59, 38), // MPI_REAL
        (60, 0),  // MPI_DOUBLE_PRECISION: MPI_DOUBLE
        (61, 1),  // MPI_LOGICAL: MPI_INT
        (62, 2),  // MPI_CHARACTER: MPI_CHAR
        (63, 25), // MPI_COMPLEX: MPI_C_FLOAT_COMPLEX
        (64, 26), // MPI_DOUBLE_COMPLEX: MPI_C_DOUBLE_COMPLEX
        (65, 34), // MPI_2INTEGER: MPI_2INT
        (66, 35), // MPI_2REAL: MPI_2FLOAT
        (67, 36), // MPI_2DOUBLE_PRECISION: MPI_2DOUBLE
    ];
    let mut i = 0;
    while i < pairs.len() {
        t[pairs[i].0] = Some(pairs[i].1);
        i += 1;
    }
    t
};

/// SMPI's id of `MPI_BYTE`.
pub(crate) const SMPI_BYTE: u8 = 6;

/// [`SMPI_ID`] inverted: our handle (the first one: the C type where a
/// Fortran type shares SMPI's id) by SMPI id; 0 where there is none.
const HANDLE_OF_SMPI_ID: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut h = PREDEFINED_COUNT;
    // Backwards, so that the first handle of an id is the one left.
    while h > 0 {
        h -= 1;
        if let Some(id) = SMPI_ID[h] {
            t[id as usize] = h as u8;
        }
    }
    t
};

/// Our handle of the datatype SMPI calls `id` (the first one: the C type
/// where a Fortran type shares SMPI's id). A trace replay looks up every
/// action's datatype: one table read.
pub(crate) fn handle_of_smpi_id(id: u8) -> Option<i32> {
    match HANDLE_OF_SMPI_ID[id as usize] {
        0 => None,
        h => Some(h as i32),
    }
}

/// `x` as a C++ output stream writes a double by default (`%g`, 6 significant digits).
pub(crate) fn fmt_g(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return if x == 0.0 { "0".into() } else { format!("{x}") };
    }
    let sci = format!("{x:.5e}");
    let (mantissa, exp) = sci.split_once('e').expect("{:e} has an exponent");
    let exp: i32 = exp.parse().expect("{:e} exponent is an integer");
    let trim = |s: &str| -> String {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s.to_string()
        }
    };
    if !(-4..6).contains(&exp) {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{}e{sign}{:02}", trim(mantissa), exp.abs())
    } else {
        trim(&format!("{x:.*}", (5 - exp) as usize))
    }
}

/// A datatype field as SMPI writes it: `(count, id)` of `count` elements of
/// handle `dt` (a derived type: its size in bytes as `MPI_BYTE`s).
fn typed(w: &World, count: usize, dt: i32) -> (usize, String) {
    match usize::try_from(dt)
        .ok()
        .and_then(|h| SMPI_ID.get(h).copied().flatten())
    {
        Some(id) => (count, id.to_string()),
        None => {
            let size = w.dtype(dt).map(|d| d.size).unwrap_or(1);
            (count * size, SMPI_BYTE.to_string())
        }
    }
}

/// Per rank, the output file and what the format could not say.
pub(crate) struct TiRecorder {
    index: PathBuf,
    /// One writer per rank, or one for all (`ti-one-file`).
    files: Vec<BufWriter<File>>,
    one_file: bool,
    /// Calls the format cannot represent, with how many times ranks made them.
    unrepresented: BTreeMap<&'static str, u64>,
    /// Collectives on communicators other than `MPI_COMM_WORLD`.
    sub_comm_colls: u64,
    /// First write error, reported at the end.
    error: Option<String>,
    line: String,
}

impl TiRecorder {
    /// Creates the index `path` and the per-rank files under `<path>_files/`
    /// for `np` ranks, and turns recording on.
    pub(crate) fn create(path: &Path, np: usize, one_file: bool) -> Result<Self, String> {
        let dir = PathBuf::from(format!("{}_files", path.display()));
        std::fs::create_dir_all(&dir).map_err(|e| format!("trace directory {}: {e}", dir.display()))?;
        let names: Vec<PathBuf> = if one_file {
            vec![dir.join("all-ranks.txt")]
        } else {
            (0..np).map(|r| dir.join(format!("rank-{r}.txt"))).collect()
        };
        let mut index = String::new();
        let mut files = Vec::with_capacity(names.len());
        for n in &names {
            let f = File::create(n).map_err(|e| format!("trace file {}: {e}", n.display()))?;
            files.push(BufWriter::new(f));
            index.push_str(&format!("{}\n", n.display()));
        }
        std::fs::write(path, index).map_err(|e| format!("trace file {}: {e}", path.display()))?;
        ON.store(true, Ordering::Relaxed);
        Ok(TiRecorder {
            index: path.to_path_buf(),
            files,
            one_file,
            unrepresented: BTreeMap::new(),
            sub_comm_colls: 0,
            error: None,
            line: String::new(),
        })
    }

    /// The index file.
    pub(crate) fn path(&self) -> &Path {
        &self.index
    }

    fn write(&mut self, rank: u32) {
        let f = if self.one_file { 0 } else { rank as usize };
        self.line.push('\n');
        if let Err(e) = self.files[f].write_all(self.line.as_bytes()) {
            self.error.get_or_insert_with(|| e.to_string());
        }
    }

    /// Flushes every file; the warnings the run should print; the error names the file.
    pub(crate) fn finish(mut self) -> Result<Vec<String>, String> {
        ON.store(false, Ordering::Relaxed);
        for f in &mut self.files {
            if let Err(e) = f.flush() {
                self.error.get_or_insert_with(|| e.to_string());
            }
        }
        if let Some(e) = self.error {
            return Err(format!("TI trace {}: {e}", self.index.display()));
        }
        let mut warnings = Vec::new();
        if self.sub_comm_colls > 0 {
            warnings.push(format!(
                "TI trace {}: {} collective call(s) on communicators other than MPI_COMM_WORLD are recorded \
                 as SMPI does, without their communicator: a replay runs them on MPI_COMM_WORLD",
                self.index.display(),
                self.sub_comm_colls
            ));
        }
        if !self.unrepresented.is_empty() {
            let calls: Vec<String> = self
                .unrepresented
                .iter()
                .map(|(c, n)| format!("{c} x{n}"))
                .collect();
            warnings.push(format!(
                "TI trace {}: SMPI's format has no action for these calls, which a replay cannot redo: {}",
                self.index.display(),
                calls.join(", ")
            ));
        }
        Ok(warnings)
    }
}

/// Appends a line for rank `me`: `<me> ` then what `f` writes.
fn record(me: u32, f: impl FnOnce(&World, &mut String)) {
    with_world(|w| {
        let Some(mut t) = w.ti.take() else { return };
        t.line.clear();
        let _ = write!(t.line, "{me} ");
        f(w, &mut t.line);
        t.write(me);
        w.ti = Some(t);
    });
}

/// The world rank of `peer` in `comm` as a trace names it (-1: any source).
fn world_peer(w: &World, me: u32, comm: i32, peer: i32) -> i64 {
    if peer == MPI_ANY_SOURCE {
        return -1;
    }
    match w.ranks[me as usize].comm(comm) {
        Ok(c) if peer >= 0 && peer < c.peer_size() => c.world_of(peer) as i64,
        _ => peer as i64,
    }
}

/// Whether `comm` is `MPI_COMM_WORLD` or has its group in its order.
fn is_world(w: &World, me: u32, comm: i32) -> bool {
    comm == MPI_COMM_WORLD
        || w.ranks[me as usize].comm(comm).is_ok_and(|c| {
            c.shared.remote.is_none()
                && c.shared.group.len() == w.ranks.len()
                && c.shared.group.iter().enumerate().all(|(i, r)| *r as usize == i)
        })
}

/// A line without fields: `init`, `finalize`, `barrier`.
pub(crate) fn plain(me: u32, action: &'static str) {
    record(me, |_, l| l.push_str(action));
}

/// `barrier` on `comm`.
pub(crate) fn barrier(me: u32, comm: i32) {
    note_comm(me, comm);
    plain(me, "barrier");
}

/// `compute <flops>`.
pub(crate) fn compute(me: u32, flops: f64) {
    record(me, |_, l| {
        l.push_str("compute ");
        l.push_str(&fmt_g(flops));
    });
}

/// `sleep <seconds>`, when `tracing/smpi/sleeping` asks for it.
pub(crate) fn sleep(me: u32, seconds: f64) {
    if with_world(|w| w.cfg.tracing_sleeping) {
        record(me, |_, l| {
            l.push_str("sleep ");
            l.push_str(&fmt_g(seconds));
        });
    }
}

/// A point-to-point call: `<action> <world partner> <tag> <count> <type>`
/// (nothing for `MPI_PROC_NULL`, as SMPI).
pub(crate) fn p2p(me: u32, action: &'static str, comm: i32, peer: i32, tag: i32, count: usize, dt: i32) {
    if peer == MPI_PROC_NULL {
        return;
    }
    record(me, |w, l| {
        let (n, id) = typed(w, count, dt);
        let _ = write!(l, "{action} {} {tag} {n} {id}", world_peer(w, me, comm, peer));
    });
}

/// `sendRecv <sendcount> <dst> <recvcount> <src> <sendtype> <recvtype>`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn sendrecv(
    me: u32,
    comm: i32,
    scount: usize,
    stype: i32,
    dst: i32,
    rcount: usize,
    rtype: i32,
    src: i32,
) {
    if dst == MPI_PROC_NULL || src == MPI_PROC_NULL {
        // SMPI then makes a plain send or receive, not traced.
        return;
    }
    record(me, |w, l| {
        let (sn, sid) = typed(w, scount, stype);
        let (rn, rid) = typed(w, rcount, rtype);
        let (d, s) = (world_peer(w, me, comm, dst), world_peer(w, me, comm, src));
        let _ = write!(l, "sendRecv {sn} {d} {rn} {s} {sid} {rid}");
    });
}

/// `wait|test <world source> <world destination> <tag>` of request `id`.
pub(crate) fn wait(me: u32, action: &'static str, id: u32) {
    record(me, |w, l| {
        let r = w.req(id);
        let (src, dst) = match r.kind {
            crate::mpi::ReqKind::Send => (r.owner as i64, r.peer_world as i64),
            crate::mpi::ReqKind::Recv if r.peer == MPI_ANY_SOURCE => (-1, r.owner as i64),
            crate::mpi::ReqKind::Recv => (r.peer_world as i64, r.owner as i64),
            // Collective and generalized requests have no partner: SMPI's
            // replayer finds no such request and goes on.
            _ => (-1, -1),
        };
        let _ = write!(l, "{action} {src} {dst} {}", r.tag);
    });
}

/// `waitall <count>`.
pub(crate) fn waitall(me: u32, count: usize) {
    record(me, |_, l| {
        let _ = write!(l, "waitall {count}");
    });
}

/// A call the format has no action for (counted, reported at the end).
pub(crate) fn unrepresented(call: &'static str) {
    with_world(|w| {
        if let Some(t) = w.ti.as_mut() {
            *t.unrepresented.entry(call).or_default() += 1;
        }
    });
}

fn note_comm(me: u32, comm: i32) {
    with_world(|w| {
        if !is_world(w, me, comm) {
            if let Some(t) = w.ti.as_mut() {
                t.sub_comm_colls += 1;
            }
        }
    });
}

/// A collective with one count per side (SMPI's `CollTIData`):
/// `<name> <send> [<recv>] [<flops>] [<root>] <sendtype> <recvtype>`, where
/// `recv` is written when positive, `flops` when not negative, `root` when
/// positive or 0 with a send type. `recv` is `None` for collectives with one
/// buffer description (its type field is then empty).
#[allow(clippy::too_many_arguments)]
pub(crate) fn coll(
    me: u32,
    comm: i32,
    name: &'static str,
    root: i32,
    flops: f64,
    send: (usize, i32),
    recv: Option<(usize, i32)>,
) {
    note_comm(me, comm);
    record(me, |w, l| {
        let (sn, sid) = typed(w, send.0, send.1);
        let (rn, rid) = recv.map_or((0, String::new()), |(n, t)| typed(w, n, t));
        let _ = write!(l, "{name} {sn} ");
        if rn > 0 {
            let _ = write!(l, "{rn} ");
        }
        if flops >= 0.0 {
            let _ = write!(l, "{} ", fmt_g(flops));
        }
        if root >= 0 {
            let _ = write!(l, "{root} ");
        }
        let _ = write!(l, "{sid} {rid}");
    });
}

/// A collective with per-rank counts (SMPI's `VarCollTIData`):
/// `<name> [<send>] [<sendcounts>...] [<recv>] [<recvcounts>...] [<root>] <sendtype> <recvtype>`.
/// Counts are in elements of their side's type; `types` are the two type
/// fields as written (SMPI puts the flops of `reducescatter` in the first).
pub(crate) struct VarColl<'a> {
    pub name: &'static str,
    pub root: i32,
    pub send: Option<usize>,
    pub sendcounts: Option<&'a [usize]>,
    pub recv: Option<usize>,
    pub recvcounts: Option<&'a [usize]>,
    pub send_type: Option<i32>,
    pub recv_type: Option<i32>,
    /// `reducescatter`: the first type field holds SMPI's flops ("0").
    pub flops_as_send_type: bool,
}

/// Records a [`VarColl`].
pub(crate) fn vcoll(me: u32, comm: i32, v: VarColl) {
    note_comm(me, comm);
    record(me, |w, l| {
        // A derived type's counts become bytes, as in `typed`.
        let scale = |t: Option<i32>| -> (usize, String) {
            match t {
                None => (1, String::new()),
                Some(t) => typed(w, 1, t),
            }
        };
        let (ss, sid) = scale(v.send_type);
        let (rs, rid) = scale(v.recv_type);
        let _ = write!(l, "{} ", v.name);
        if let Some(n) = v.send {
            let _ = write!(l, "{} ", n * ss);
        }
        for c in v.sendcounts.unwrap_or(&[]) {
            let _ = write!(l, "{} ", c * ss);
        }
        if let Some(n) = v.recv {
            let _ = write!(l, "{} ", n * rs);
        }
        for c in v.recvcounts.unwrap_or(&[]) {
            let _ = write!(l, "{} ", c * rs);
        }
        if v.root >= 0 {
            let _ = write!(l, "{} ", v.root);
        }
        if v.flops_as_send_type {
            let _ = write!(l, "0 {rid}");
        } else {
            let _ = write!(l, "{sid} {rid}");
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubles_are_written_as_a_cpp_stream_does() {
        for (x, s) in [
            (0.0, "0"),
            (124114.0, "124114"),
            (16540700.0, "1.65407e+07"),
            (1e6, "1e+06"),
            (999999.0, "999999"),
            (2.5, "2.5"),
            (1e-5, "1e-05"),
            (0.0001, "0.0001"),
            (123456789.0, "1.23457e+08"),
            (5e8, "5e+08"),
        ] {
            assert_eq!(fmt_g(x), s, "{x}");
        }
    }

    #[test]
    fn smpi_ids_round_trip() {
        for h in 1..PREDEFINED_COUNT as i32 {
            if let Some(id) = SMPI_ID[h as usize] {
                let back = handle_of_smpi_id(id).expect("an id we write is one we read");
                assert_eq!(SMPI_ID[back as usize], Some(id), "handle {h}");
                // Fortran types (58..) share the ids of C types, which win.
                assert!(back == h || h >= 58, "handle {h} read back as {back}");
            }
        }
        assert_eq!(handle_of_smpi_id(0), Some(14));
        assert_eq!(handle_of_smpi_id(6), Some(4));
        assert_eq!(handle_of_smpi_id(1), Some(7));
        assert_eq!(handle_of_smpi_id(49), None);
    }
}
