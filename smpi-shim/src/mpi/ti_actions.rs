//! Reading time-independent traces for `smpirun -replay <file>`: the index
//! file, each rank's actions, checked and converted before the simulation
//! starts, so that a malformed trace is an error naming its file and line
//! (and never a replay that skips what it cannot read).
//!
//! The format is SMPI 3.32's (see [`crate::mpi::ti_trace`] for what each
//! action's fields are; the reader follows `smpi_replay.cpp` and
//! `xbt_replay.cpp`):
//!
//! - the index lists trace files, one per non-empty line (paths relative to
//!   the working directory, else to the index's directory). One file: it
//!   holds every rank's lines (SMPI's "shared trace"); several: file i is
//!   rank i's. The index may also be a trace itself (a first line
//!   `<rank> <action> ...`), as a convenience SMPI lacks;
//! - in a trace, blank lines and lines starting with `#` are skipped; fields
//!   are separated by spaces or tabs; the first is the rank, the second the
//!   action;
//! - counts are in elements of the action's datatype, written as numbers
//!   that may have a fraction or an exponent (`1e6`; truncated); a missing
//!   datatype is the rank's default: `MPI_BYTE`, or `MPI_DOUBLE` when its
//!   `init` line has an argument (SMPI: MPE traces vs TAU traces).
//!
//! Besides SMPI's actions, the replay accepts the send modes SMPI records but
//! its replayer does not know (`Ssend`, `bsend`, `ISsend`, `ibsend`).
//!
//! A trace can hold millions of actions, all in memory during the replay, so
//! an action is a fixed 24-byte record: no heap data of its own (the per-rank
//! counts of the `v` collectives go to one array of the trace), and no text.
//! The line's text, which only messages and the verbose log print, is read
//! again from the file when needed ([`Trace::line_texts`]).

use std::num::NonZeroU8;
use std::path::{Path, PathBuf};

use crate::mpi::ti_trace::handle_of_smpi_id;

/// A datatype field: our handle (predefined handles are below 256, and none
/// of them is 0), or `None` for the rank's default type.
pub(crate) type Dt = Option<NonZeroU8>;

/// An `f64` kept as two 4-byte halves, so that actions are 4-byte aligned
/// (and 24 bytes, not 32).
#[derive(Clone, Copy, PartialEq)]
pub(crate) struct Float([u32; 2]);

impl Float {
    pub(crate) fn new(x: f64) -> Float {
        let b = x.to_bits();
        Float([b as u32, (b >> 32) as u32])
    }

    pub(crate) fn get(self) -> f64 {
        f64::from_bits(self.0[0] as u64 | (self.0[1] as u64) << 32)
    }
}

impl std::fmt::Debug for Float {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.get().fmt(f)
    }
}

/// Send modes of the send actions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    Standard,
    Sync,
    Buffered,
}

/// What a send or receive action names.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Message {
    /// `isend`, `irecv`...: the non-blocking form.
    pub(crate) nonblocking: bool,
    pub(crate) dt: Dt,
    /// The other rank (of MPI_COMM_WORLD); -1 for a receive from any source.
    pub(crate) partner: i32,
    pub(crate) tag: i32,
    /// Elements of `dt`; -1 for a receive of unknown size.
    pub(crate) count: i32,
}

/// What one line asks for. Counts are at most `i32::MAX`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Kind {
    /// `init [x]`: with an argument, the default datatype is `MPI_DOUBLE`.
    Init {
        double_default: bool,
    },
    Finalize,
    /// `comm_size`, `comm_split`, `comm_dup`, `location`: nothing to do (as SMPI).
    Nothing,
    Send {
        mode: Mode,
        message: Message,
    },
    /// `count` < 0: unknown size, probed first (as SMPI).
    Recv(Message),
    Wait {
        src: i32,
        dst: i32,
        tag: i32,
    },
    Test {
        src: i32,
        dst: i32,
        tag: i32,
    },
    WaitAll,
    SendRecv {
        sdt: Dt,
        rdt: Dt,
        scount: u32,
        dst: i32,
        rcount: u32,
        src: i32,
    },
    Barrier,
    Bcast {
        dt: Dt,
        count: u32,
        root: i32,
    },
    /// `reduce`, `allreduce`, `scan`, `exscan`.
    Reduction {
        coll: Reduction,
        dt: Dt,
        count: u32,
        /// The root of `reduce` (0 for the others).
        root: i32,
        flops: Float,
    },
    /// `alltoall`, `gather`, `allgather`, `scatter` and their `v` forms.
    Exchange {
        coll: Exchange,
        sdt: Dt,
        rdt: Dt,
        /// Each side's count, or, on the side(s) with one count per rank
        /// ([`Exchange::per_rank`]), where its counts start in [`Trace::counts`].
        send: u32,
        recv: u32,
        /// The root of `gather`, `scatter` and their `v` forms (0 for the others).
        root: i32,
    },
    ReduceScatter {
        dt: Dt,
        /// Where the receive counts start in [`Trace::counts`].
        rcounts: u32,
        flops: Float,
    },
    Compute {
        flops: Float,
    },
    Sleep {
        seconds: Float,
    },
}

/// The reductions that give every rank (or the root) one block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Reduction {
    Reduce,
    AllReduce,
    Scan,
    Exscan,
}

/// The collectives that move data without reducing it, and their `v` forms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Exchange {
    AllToAll,
    AllToAllV,
    Gather,
    GatherV,
    AllGather,
    AllGatherV,
    Scatter,
    ScatterV,
}

impl Exchange {
    /// Whether the (send, receive) side has one count per rank.
    pub(crate) fn per_rank(self) -> (bool, bool) {
        match self {
            Exchange::AllToAllV => (true, true),
            Exchange::GatherV | Exchange::AllGatherV => (false, true),
            Exchange::ScatterV => (true, false),
            Exchange::AllToAll | Exchange::Gather | Exchange::AllGather | Exchange::Scatter => (false, false),
        }
    }
}

/// One line of a trace: what it asks for, and its line number in its file.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Action {
    pub kind: Kind,
    pub line: u32,
}

// Millions of actions are held during a replay: keep them small.
const _: () = assert!(std::mem::size_of::<Action>() <= 24);

/// A trace read for replay.
#[derive(Debug)]
pub(crate) struct Trace {
    /// One file with every rank's lines, or one file per rank.
    pub files: Vec<PathBuf>,
    /// Each rank's actions, in order.
    pub ranks: Vec<Vec<Action>>,
    /// The per-rank counts of the `v` collectives and `reducescatter`,
    /// `ranks.len()` for each side that has them.
    pub counts: Vec<i32>,
}

impl Trace {
    /// The file holding rank `rank`'s lines.
    fn file_of(&self, rank: usize) -> &Path {
        &self.files[if self.files.len() == 1 { 0 } else { rank }]
    }

    /// `file:line` of rank `rank`'s action `a`, for messages.
    pub(crate) fn at(&self, rank: usize, a: &Action) -> String {
        format!("{}:{}", self.file_of(rank).display(), a.line)
    }

    /// The `ranks.len()` counts that start at `from` in [`Trace::counts`].
    pub(crate) fn per_rank(&self, from: u32) -> &[i32] {
        &self.counts[from as usize..from as usize + self.ranks.len()]
    }

    /// Rank `rank`'s lines as (line number, fields joined by single spaces:
    /// SMPI's text of the action), read again from its file; in the order of
    /// its actions, unless the file changed since it was loaded.
    pub(crate) fn line_texts(&self, rank: usize) -> Vec<(u32, String)> {
        let Ok(text) = std::fs::read_to_string(self.file_of(rank)) else {
            return Vec::new();
        };
        let mut fields = Vec::new();
        let mut texts = Vec::with_capacity(self.ranks[rank].len());
        for (lineno, line) in lines(&text) {
            split(line, &mut fields);
            if fields[0].parse::<usize>() == Ok(rank) {
                texts.push((lineno, fields.join(" ")));
            }
        }
        texts
    }

    /// The text of rank `rank`'s action `a`, for a message (read again from
    /// the file: this is slow, and only for errors).
    pub(crate) fn text_of(&self, rank: usize, a: &Action) -> String {
        self.line_texts(rank)
            .into_iter()
            .find(|(l, _)| *l == a.line)
            .map(|(_, t)| t)
            .unwrap_or_else(|| "(the line is no longer in the file)".into())
    }
}

/// Reads the trace whose index is `index` for `np` ranks (`None`: as many as it has).
pub(crate) fn load(index: &Path, np: Option<usize>) -> Result<Trace, String> {
    let text = std::fs::read_to_string(index)
        .map_err(|e| format!("{}: cannot read the trace: {e}", index.display()))?;
    let entries: Vec<(usize, &str)> = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim()))
        .filter(|(_, l)| !l.is_empty())
        .collect();
    if entries.is_empty() {
        return Err(format!(
            "{}: empty trace index (it should list trace files)",
            index.display()
        ));
    }
    // An index whose first line reads as an action is a trace itself.
    let first = entries[0].1;
    if first.starts_with('#') || looks_like_action(first) {
        return load_shared(index.to_path_buf(), &text, np);
    }
    let dir = index.parent().unwrap_or(Path::new("."));
    let mut files = Vec::with_capacity(entries.len());
    // Every listed file is checked before any is parsed (so a missing one is
    // the error), then each is read, parsed and dropped in turn.
    for (lineno, entry) in &entries {
        let p = Path::new(entry);
        let path = if p.is_relative() && !p.exists() && dir.join(p).exists() {
            dir.join(p)
        } else {
            p.to_path_buf()
        };
        std::fs::File::open(&path).map_err(|e| {
            format!(
                "{}:{lineno}: trace file '{}' cannot be read: {e}",
                index.display(),
                path.display()
            )
        })?;
        files.push(path);
    }
    if files.len() == 1 {
        let t = std::fs::read_to_string(&files[0])
            .map_err(|e| format!("{}: cannot read the trace: {e}", files[0].display()))?;
        return load_shared(files.remove(0), &t, np);
    }
    let n = files.len();
    if let Some(np) = np.filter(|np| *np != n) {
        return Err(format!(
            "{}: the index lists {n} rank trace files but -np is {np} (give -np {n} or leave it out)",
            index.display()
        ));
    }
    let mut ranks = Vec::with_capacity(n);
    let mut counts = Vec::new();
    // One buffer for every file's text (files of similar sizes: no new pages to fault in).
    let mut t = String::new();
    for (i, path) in files.iter().enumerate() {
        t.clear();
        std::fs::File::open(path)
            .and_then(|mut f| std::io::Read::read_to_string(&mut f, &mut t))
            .map_err(|e| {
                format!(
                    "{}:{}: trace file '{}' cannot be read: {e}",
                    index.display(),
                    entries[i].0,
                    path.display()
                )
            })?;
        // An action line has at least 6 bytes ("0 init"): no reallocation while
        // parsing (and the pages never written are never touched).
        let mut actions = Vec::with_capacity(t.len() / 6 + 1);
        let mut fields = Vec::new();
        for (lineno, line) in lines(&t) {
            split(line, &mut fields);
            let at = || format!("{}:{lineno}", path.display());
            let rank = rank_field(&fields, &at)?;
            if rank != i {
                return Err(format!(
                    "{}: an action of rank {rank} in the trace file of rank {i} (line 'file {}' of {}): '{}'",
                    at(),
                    i + 1,
                    index.display(),
                    fields.join(" ")
                ));
            }
            actions.push(parse_action(&fields, n, lineno, &mut counts, &at)?);
        }
        actions.shrink_to_fit();
        ranks.push(actions);
    }
    counts.shrink_to_fit();
    Ok(Trace { files, ranks, counts })
}

fn looks_like_action(line: &str) -> bool {
    let mut f = line.split_whitespace();
    f.next().is_some_and(|r| r.parse::<u32>().is_ok())
        && f.next()
            .is_some_and(|a| a.chars().all(|c| c.is_ascii_alphabetic() || c == '_'))
}

/// Non-blank, non-comment lines of a trace: (line number, trimmed line).
fn lines(text: &str) -> impl Iterator<Item = (u32, &str)> {
    text.lines().enumerate().filter_map(|(i, l)| {
        let l = l.trim();
        (!l.is_empty() && !l.starts_with('#')).then_some(((i + 1) as u32, l))
    })
}

/// The fields of a line (separated by spaces or tabs) into `fields`
/// (reused: no allocation per line).
fn split<'t>(line: &'t str, fields: &mut Vec<&'t str>) {
    fields.clear();
    let mut start = None;
    for (i, c) in line.bytes().enumerate() {
        if c == b' ' || c == b'\t' {
            if let Some(s) = start.take() {
                fields.push(&line[s..i]);
            }
        } else if start.is_none() {
            start = Some(i);
        }
    }
    if let Some(s) = start {
        fields.push(&line[s..]);
    }
}

fn rank_field(fields: &[&str], at: &dyn Fn() -> String) -> Result<usize, String> {
    fields[0].parse::<usize>().map_err(|_| {
        format!(
            "{}: the first field should be a rank (a number), found '{}' in '{}'",
            at(),
            fields[0],
            fields.join(" ")
        )
    })
}

/// One file with every rank's lines (`text`, read from `file`).
fn load_shared(file: PathBuf, text: &str, np: Option<usize>) -> Result<Trace, String> {
    let name = file.display().to_string();
    // First the ranks (their number decides how many counts the `v` collectives have),
    // then the actions.
    let mut fields = Vec::new();
    let mut max = 0;
    let mut per_rank: Vec<usize> = Vec::new();
    for (lineno, line) in lines(text) {
        split(line, &mut fields);
        let rank = rank_field(&fields, &|| format!("{name}:{lineno}"))?;
        max = max.max(rank + 1);
        if per_rank.len() < max {
            per_rank.resize(max, 0);
        }
        per_rank[rank] += 1;
    }
    if max == 0 {
        return Err(format!("{name}: the trace has no action"));
    }
    let n = np.unwrap_or(max);
    if max > n {
        return Err(format!(
            "{name}: the trace has actions of ranks 0 to {} but -np is {n}",
            max - 1
        ));
    }
    let mut ranks: Vec<Vec<Action>> = (0..n)
        .map(|r| Vec::with_capacity(per_rank.get(r).copied().unwrap_or(0)))
        .collect();
    let mut counts = Vec::new();
    for (lineno, line) in lines(text) {
        split(line, &mut fields);
        let rank = fields[0].parse::<usize>().expect("ranks checked above");
        let at = || format!("{name}:{lineno}");
        ranks[rank].push(parse_action(&fields, n, lineno, &mut counts, &at)?);
    }
    if let Some(r) = ranks.iter().position(|a| a.is_empty()) {
        return Err(format!(
            "{name}: no action for rank {r} (the trace is for fewer ranks than -np {n})"
        ));
    }
    counts.shrink_to_fit();
    Ok(Trace {
        files: vec![file],
        ranks,
        counts,
    })
}

/// A count field: a finite number, truncated (`None` if it is not one).
fn truncated(s: &str) -> Option<f64> {
    // Integers, the usual case, without the float parser (same value).
    match s.parse::<i64>() {
        Ok(i) => Some(i as f64),
        Err(_) => s.parse::<f64>().ok().filter(|v| v.is_finite()).map(f64::trunc),
    }
}

/// Parses one line's fields (`fields[0]` is the rank) for a run of `np`
/// ranks; per-rank counts go to `counts`.
fn parse_action(
    fields: &[&str],
    np: usize,
    line: u32,
    counts: &mut Vec<i32>,
    at: &dyn Fn() -> String,
) -> Result<Action, String> {
    let bad = |why: String| format!("{}: {why} in '{}'", at(), fields.join(" "));
    let Some(&name) = fields.get(1) else {
        return Err(bad("a line needs a rank and an action".into()));
    };
    let args = &fields[2..];
    // SMPI's CHECK_ACTION_PARAMS: at least `need` arguments, at most `need + optional`.
    let want = |need: usize, optional: usize| -> Result<(), String> {
        if args.len() < need || args.len() > need + optional {
            let range = if optional == 0 {
                format!("{need}")
            } else {
                format!("{need} to {}", need + optional)
            };
            return Err(bad(format!(
                "action '{name}' takes {range} arguments, found {}",
                args.len()
            )));
        }
        Ok(())
    };
    let num = |i: usize, what: &str| -> Result<f64, String> {
        let s = args[i];
        s.parse::<f64>()
            .ok()
            .filter(|v| v.is_finite())
            .ok_or_else(|| bad(format!("{what} should be a number, found '{s}'")))
    };
    let count = |i: usize, what: &str| -> Result<u32, String> {
        match truncated(args[i]) {
            Some(v) if (0.0..=i32::MAX as f64).contains(&v) => Ok(v as u32),
            Some(_) => Err(bad(format!("{what} {} is out of range", args[i]))),
            None => Err(bad(format!("{what} should be a number, found '{}'", args[i]))),
        }
    };
    let int = |i: usize, what: &str| -> Result<i32, String> {
        args[i]
            .parse::<i32>()
            .map_err(|_| bad(format!("{what} should be an integer, found '{}'", args[i])))
    };
    let rank_arg = |i: usize, what: &str, any: bool| -> Result<i32, String> {
        let r = int(i, what)?;
        if (r == -1 && any) || (r >= 0 && (r as usize) < np) {
            Ok(r)
        } else {
            Err(bad(format!(
                "{what} {r} is not a rank of this run (0 to {})",
                np - 1
            )))
        }
    };
    let root = |i: usize| -> Result<i32, String> {
        if i < args.len() {
            rank_arg(i, "root", false)
        } else {
            Ok(0)
        }
    };
    let dt = |i: usize| -> Result<Dt, String> {
        let Some(s) = args.get(i) else { return Ok(None) };
        let id: u8 = s
            .parse()
            .map_err(|_| bad(format!("datatype should be an SMPI datatype id, found '{s}'")))?;
        handle_of_smpi_id(id)
            .map(|h| Some(NonZeroU8::new(h as u8).expect("predefined datatype handles are 1 to 255")))
            .ok_or_else(|| bad(format!("datatype id {id} is not a datatype smpirun knows")))
    };
    // A send's or receive's fields: partner, tag, count (read by the caller), datatype.
    let message = |nonblocking: bool, any_partner: bool, count: i32| -> Result<Message, String> {
        Ok(Message {
            nonblocking,
            partner: rank_arg(0, "the partner", any_partner)?,
            tag: int(1, "the tag")?,
            count,
            dt: dt(3)?,
        })
    };
    let flops = |i: usize| -> Result<Float, String> {
        let f = num(i, "the amount of flops")?;
        if f < 0.0 {
            return Err(bad(format!("the amount of flops {f} is negative")));
        }
        Ok(Float::new(f))
    };
    // `np` counts from `from`, appended to `counts`; where they start there.
    // (After an error, what it appended does not matter: the whole trace is refused.)
    let mut per_rank = |from: usize, what: &str| -> Result<u32, String> {
        let start =
            u32::try_from(counts.len()).map_err(|_| bad("too many per-rank counts in the trace".into()))?;
        for i in from..from + np {
            counts.push(count(i, what)? as i32);
        }
        Ok(start)
    };
    let kind = match name {
        "init" => {
            want(0, 1)?;
            Kind::Init {
                double_default: !args.is_empty(),
            }
        }
        "finalize" => {
            want(0, 0)?;
            Kind::Finalize
        }
        "comm_size" | "comm_split" | "comm_dup" => Kind::Nothing,
        "location" => {
            want(2, 0)?;
            Kind::Nothing
        }
        "send" | "Ssend" | "bsend" | "isend" | "ISsend" | "ibsend" => {
            want(3, 1)?;
            let (mode, nonblocking) = match name {
                "send" => (Mode::Standard, false),
                "Ssend" => (Mode::Sync, false),
                "bsend" => (Mode::Buffered, false),
                "isend" => (Mode::Standard, true),
                "ISsend" => (Mode::Sync, true),
                _ => (Mode::Buffered, true),
            };
            Kind::Send {
                mode,
                message: message(nonblocking, false, count(2, "the count")? as i32)?,
            }
        }
        "recv" | "irecv" => {
            want(3, 1)?;
            let c = truncated(args[2])
                .ok_or_else(|| bad(format!("the count should be a number, found '{}'", args[2])))?;
            if c > i32::MAX as f64 {
                return Err(bad(format!("the count {} is out of range", args[2])));
            }
            // Any negative count: the size is unknown.
            Kind::Recv(message(
                name == "irecv",
                true,
                if c < 0.0 { -1 } else { c as i32 },
            )?)
        }
        "wait" | "test" => {
            want(3, 0)?;
            let (src, dst, tag) = (
                int(0, "the source")?,
                int(1, "the destination")?,
                int(2, "the tag")?,
            );
            if name == "wait" {
                Kind::Wait { src, dst, tag }
            } else {
                Kind::Test { src, dst, tag }
            }
        }
        "waitall" => {
            want(0, 1)?;
            Kind::WaitAll
        }
        "sendRecv" => {
            want(4, 2)?;
            Kind::SendRecv {
                scount: count(0, "the send count")?,
                dst: rank_arg(1, "the destination", false)?,
                rcount: count(2, "the receive count")?,
                src: rank_arg(3, "the source", true)?,
                sdt: dt(4)?,
                rdt: dt(5)?,
            }
        }
        "barrier" => {
            want(0, 0)?;
            Kind::Barrier
        }
        "bcast" => {
            want(1, 2)?;
            Kind::Bcast {
                count: count(0, "the count")?,
                root: root(1)?,
                dt: dt(2)?,
            }
        }
        "reduce" | "allreduce" | "scan" | "exscan" => {
            // The count, the flops, the root (of a reduce), the datatype.
            let coll = match name {
                "reduce" => Reduction::Reduce,
                "allreduce" => Reduction::AllReduce,
                "scan" => Reduction::Scan,
                _ => Reduction::Exscan,
            };
            let rooted = (coll == Reduction::Reduce) as usize;
            want(2, 1 + rooted)?;
            Kind::Reduction {
                coll,
                count: count(0, "the count")?,
                flops: flops(1)?,
                root: if rooted == 1 { root(2)? } else { 0 },
                dt: dt(2 + rooted)?,
            }
        }
        "alltoall" | "allgather" | "gather" | "scatter" | "gatherv" | "scatterv" => {
            // The send counts, the receive counts, the root (of gathers and scatters), the datatypes.
            let coll = match name {
                "alltoall" => Exchange::AllToAll,
                "allgather" => Exchange::AllGather,
                "gather" => Exchange::Gather,
                "gatherv" => Exchange::GatherV,
                "scatter" => Exchange::Scatter,
                _ => Exchange::ScatterV,
            };
            let (send_v, recv_v) = coll.per_rank();
            let rooted = !matches!(coll, Exchange::AllToAll | Exchange::AllGather) as usize;
            let width = |per_rank: bool| if per_rank { np } else { 1 };
            let n = width(send_v) + width(recv_v);
            want(n, 2 + rooted)?;
            let send = if send_v {
                per_rank(0, "a send count")?
            } else {
                count(0, "the send count")?
            };
            let recv = if recv_v {
                per_rank(width(send_v), "a receive count")?
            } else {
                count(width(send_v), "the receive count")?
            };
            Kind::Exchange {
                coll,
                send,
                recv,
                root: if rooted == 1 { root(n)? } else { 0 },
                sdt: dt(n + rooted)?,
                rdt: dt(n + rooted + 1)?,
            }
        }
        "alltoallv" => {
            // Each side's counts follow the size of its buffer (ignored, as SMPI).
            want(2 * np + 2, 2)?;
            let send = per_rank(1, "a send count")?;
            let recv = per_rank(np + 2, "a receive count")?;
            Kind::Exchange {
                coll: Exchange::AllToAllV,
                send,
                recv,
                root: 0,
                sdt: dt(2 * np + 2)?,
                rdt: dt(2 * np + 3)?,
            }
        }
        "allgatherv" => {
            // SMPI also accepts displacements after the counts (ignored: blocks go at 0, as SMPI).
            want(np + 1, np + 2)?;
            let (sdt, rdt) = if args.len() == np + 3 || args.len() == 2 * np + 3 {
                (dt(np + 1)?, dt(np + 2)?)
            } else {
                (None, None)
            };
            let send = count(0, "the send count")?;
            let recv = per_rank(1, "a receive count")?;
            Kind::Exchange {
                coll: Exchange::AllGatherV,
                send,
                recv,
                root: 0,
                sdt,
                rdt,
            }
        }
        "reducescatter" => {
            want(np + 1, 1)?;
            Kind::ReduceScatter {
                rcounts: per_rank(0, "a receive count")?,
                flops: flops(np)?,
                dt: dt(np + 1)?,
            }
        }
        "compute" => {
            want(1, 0)?;
            Kind::Compute { flops: flops(0)? }
        }
        "sleep" => {
            want(1, 0)?;
            let s = num(0, "the duration")?;
            if s < 0.0 {
                return Err(bad(format!("the duration {s} is negative")));
            }
            Kind::Sleep {
                seconds: Float::new(s),
            }
        }
        "ibarrier" | "ibcast" | "ireduce" | "iallreduce" | "ialltoall" | "ialltoallv" | "igather"
        | "iallgather" | "igatherv" | "iallgatherv" | "iscatter" | "iscatterv" | "ireducescatter"
        | "iscan" | "iexscan" => {
            return Err(bad(format!(
            "action '{name}' (a non-blocking collective) cannot be replayed: the format does not say which \
                 wait completes it (SMPI's replayer does not know it either)"
        )))
        }
        "waitAny" | "testany" | "testall" | "testsome" | "Start" | "Startall" | "migrate" => {
            return Err(bad(format!(
                "action '{name}' cannot be replayed: the format does not say which requests it completes \
                 (SMPI's replayer does not know it either)"
            )))
        }
        _ => return Err(bad(format!("unknown action '{name}'"))),
    };
    Ok(Action { kind, line })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kind of one line, and the per-rank counts it stored.
    fn parsed(line: &str, np: usize) -> Result<(Kind, Vec<i32>), String> {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let mut counts = Vec::new();
        let a = parse_action(&fields, np, 7, &mut counts, &|| "t.txt:7".to_string())?;
        assert_eq!(a.line, 7);
        Ok((a.kind, counts))
    }

    fn one(line: &str, np: usize) -> Result<Kind, String> {
        parsed(line, np).map(|(k, _)| k)
    }

    /// Our handle `h` as a datatype field.
    fn dt(h: u8) -> Dt {
        NonZeroU8::new(h)
    }

    #[test]
    fn smpi_lines_parse() {
        assert_eq!(
            one("0 send 1 0 1e6", 2),
            Ok(Kind::Send {
                mode: Mode::Standard,
                message: Message {
                    nonblocking: false,
                    partner: 1,
                    tag: 0,
                    count: 1_000_000,
                    dt: None
                }
            })
        );
        assert_eq!(
            one("0 bcast 1000 1 0 ", 3),
            Ok(Kind::Bcast {
                count: 1000,
                root: 1,
                dt: dt(14)
            })
        );
        assert_eq!(
            one("0 reduce 500 0 2 1 ", 3),
            Ok(Kind::Reduction {
                coll: Reduction::Reduce,
                count: 500,
                flops: Float::new(0.0),
                root: 2,
                dt: dt(7)
            })
        );
        let (kind, counts) = parsed("0 alltoallv 100 1 40 30 1000 1 80 100", 3).unwrap();
        assert_eq!(
            kind,
            Kind::Exchange {
                coll: Exchange::AllToAllV,
                send: 0,
                recv: 3,
                root: 0,
                sdt: None,
                rdt: None
            }
        );
        assert_eq!(counts, [1, 40, 30, 1, 80, 100]);
        let (kind, counts) = parsed("1 reducescatter 10 11 12 13 0 0", 4).unwrap();
        assert_eq!(
            kind,
            Kind::ReduceScatter {
                rcounts: 0,
                flops: Float::new(0.0),
                dt: dt(14)
            }
        );
        assert_eq!(counts, [10, 11, 12, 13]);
        assert_eq!(
            one("0 init", 1),
            Ok(Kind::Init {
                double_default: false
            })
        );
        assert_eq!(
            one("0 recv -1 5 10 0", 2).map(|k| matches!(k, Kind::Recv(Message { partner: -1, .. }))),
            Ok(true)
        );
        // A receive of unknown size.
        assert_eq!(
            one("0 irecv 1 5 -1e12", 2).map(|k| matches!(k, Kind::Recv(Message { count: -1, .. }))),
            Ok(true)
        );
    }

    #[test]
    fn counts_are_truncated_numbers_up_to_i32_max() {
        let send_count = |c: &str| match one(&format!("0 send 1 0 {c}"), 2) {
            Ok(Kind::Send { message, .. }) => Ok(message.count),
            Ok(k) => panic!("{k:?}"),
            Err(e) => Err(e),
        };
        assert_eq!(send_count("17"), Ok(17));
        assert_eq!(send_count("+17"), Ok(17));
        assert_eq!(send_count("-0"), Ok(0));
        assert_eq!(send_count("17.9"), Ok(17));
        assert_eq!(send_count("2.5e3"), Ok(2500));
        assert_eq!(send_count("2147483647"), Ok(i32::MAX));
        for c in ["2147483648", "-1", "1e300", "-0.5e1"] {
            let e = send_count(c).unwrap_err();
            assert!(e.contains(&format!("the count {c} is out of range")), "{e}");
        }
        for c in ["inf", "NaN", "1x"] {
            let e = send_count(c).unwrap_err();
            assert!(e.contains("the count should be a number"), "{e}");
        }
    }

    #[test]
    fn collective_fields_are_read_where_smpi_writes_them() {
        let exchange = |coll, send, recv, root, sdt, rdt| Kind::Exchange {
            coll,
            send,
            recv,
            root,
            sdt,
            rdt,
        };
        assert_eq!(
            one("0 alltoall 4 5", 2),
            Ok(exchange(Exchange::AllToAll, 4, 5, 0, None, None))
        );
        assert_eq!(
            one("0 gather 10 20 1 0 1", 3),
            Ok(exchange(Exchange::Gather, 10, 20, 1, dt(14), dt(7)))
        );
        assert_eq!(
            parsed("0 gatherv 5 1 2 3 1", 3),
            Ok((exchange(Exchange::GatherV, 5, 0, 1, None, None), vec![1, 2, 3]))
        );
        assert_eq!(
            parsed("0 scatterv 1 2 3 4 2 1 0", 3),
            Ok((
                exchange(Exchange::ScatterV, 0, 4, 2, dt(7), dt(14)),
                vec![1, 2, 3]
            ))
        );
        assert_eq!(
            parsed("0 allgatherv 5 1 2 3 0 1", 3),
            Ok((
                exchange(Exchange::AllGatherV, 5, 0, 0, dt(14), dt(7)),
                vec![1, 2, 3]
            ))
        );
        assert_eq!(
            one("0 exscan 7 100 1", 3),
            Ok(Kind::Reduction {
                coll: Reduction::Exscan,
                count: 7,
                flops: Float::new(100.0),
                root: 0,
                dt: dt(7)
            })
        );
        let e = one("0 gatherv 5 1 x 3", 3).unwrap_err();
        assert!(e.contains("a receive count should be a number, found 'x'"), "{e}");
        let e = one("0 gather 10 20 3", 3).unwrap_err();
        assert!(e.contains("root 3 is not a rank of this run"), "{e}");
    }

    #[test]
    fn errors_name_the_place_and_the_problem() {
        let e = one("0 sned 1 0 10", 2).unwrap_err();
        assert!(e.starts_with("t.txt:7: unknown action 'sned'"), "{e}");
        let e = one("0 send 1 0", 2).unwrap_err();
        assert!(e.contains("takes 3 to 4 arguments, found 2"), "{e}");
        let e = one("0 send 5 0 10", 2).unwrap_err();
        assert!(
            e.contains("the partner 5 is not a rank of this run (0 to 1)"),
            "{e}"
        );
        let e = one("0 send 1 0 ten", 2).unwrap_err();
        assert!(e.contains("the count should be a number, found 'ten'"), "{e}");
        let e = one("0 bcast 10 0 99", 2).unwrap_err();
        assert!(e.contains("datatype id 99"), "{e}");
        let e = one("0 ibcast 10 0 0", 2).unwrap_err();
        assert!(e.contains("non-blocking collective"), "{e}");
        // The line is quoted with its fields joined by single spaces.
        let e = one("0\tsend  1 0\t\tten", 2).unwrap_err();
        assert!(e.ends_with("in '0 send 1 0 ten'"), "{e}");
    }

    #[test]
    fn floats_keep_every_bit() {
        for x in [
            0.0,
            -0.0,
            1e-300,
            124114.0,
            1.23457e9,
            f64::MAX,
            f64::MIN_POSITIVE,
        ] {
            assert_eq!(Float::new(x).get().to_bits(), x.to_bits());
        }
    }

    /// A shared trace and per-rank files give the same actions, and the
    /// texts read again for messages are each action's line.
    #[test]
    fn traces_load_and_lines_are_read_again() {
        let dir = std::env::temp_dir().join(format!("ti-actions-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let shared = dir.join("shared.txt");
        std::fs::write(
            &shared,
            "# a comment\n0 init\n1 init\n\n0 send 1 0 1e3\n1  recv 0 0 1000\n1 gatherv 5 1 2 0\n0 gatherv 5 1 2 0\n",
        )
        .unwrap();
        let t = load(&shared, None).unwrap();
        assert_eq!(t.ranks.len(), 2);
        let lines = |r: usize| t.ranks[r].iter().map(|a| a.line).collect::<Vec<_>>();
        assert_eq!(lines(0), [2, 5, 8]);
        assert_eq!(lines(1), [3, 6, 7]);
        assert_eq!(t.counts, [1, 2, 1, 2]);
        let Kind::Exchange { recv, .. } = t.ranks[0][2].kind else {
            panic!("{:?}", t.ranks[0][2])
        };
        assert_eq!(t.per_rank(recv), [1, 2]);
        assert_eq!(
            t.line_texts(1),
            [
                (3, "1 init".to_string()),
                (6, "1 recv 0 0 1000".into()),
                (7, "1 gatherv 5 1 2 0".into())
            ]
        );
        assert_eq!(t.text_of(0, &t.ranks[0][1]), "0 send 1 0 1e3");
        assert_eq!(t.at(0, &t.ranks[0][1]), format!("{}:5", shared.display()));

        let (r0, r1) = (dir.join("r0.txt"), dir.join("r1.txt"));
        std::fs::write(&r0, "0 init\n0 send 1 0 1e3\n").unwrap();
        std::fs::write(&r1, "1 init\n\n1 recv 0 0 1000\n").unwrap();
        let index = dir.join("index");
        std::fs::write(&index, "r0.txt\nr1.txt\n").unwrap();
        let t2 = load(&index, None).unwrap();
        assert_eq!(t2.files, [r0.clone(), r1.clone()]);
        for r in 0..2 {
            let kinds = |t: &Trace| t.ranks[r].iter().map(|a| a.kind).collect::<Vec<_>>();
            assert_eq!(kinds(&t2), kinds(&t)[..2]);
        }
        assert_eq!(t2.at(1, &t2.ranks[1][1]), format!("{}:3", r1.display()));
        assert_eq!(t2.text_of(1, &t2.ranks[1][1]), "1 recv 0 0 1000");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
