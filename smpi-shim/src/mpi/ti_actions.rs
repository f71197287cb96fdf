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

use std::path::{Path, PathBuf};

use crate::mpi::ti_trace::handle_of_smpi_id;

/// A datatype field: our handle, or `None` for the rank's default type.
pub(crate) type Dt = Option<i32>;

/// Send modes of the send actions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    Standard,
    Sync,
    Buffered,
}

/// What a send or receive action names.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Message {
    /// `isend`, `irecv`...: the non-blocking form.
    pub(crate) nonblocking: bool,
    /// The other rank (of MPI_COMM_WORLD); -1 for a receive from any source.
    pub(crate) partner: i32,
    pub(crate) tag: i32,
    /// Elements of `dt`.
    pub(crate) count: i64,
    pub(crate) dt: Dt,
}

/// What one line asks for.
#[derive(Clone, Debug, PartialEq)]
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
        scount: usize,
        dst: i32,
        rcount: usize,
        src: i32,
        sdt: Dt,
        rdt: Dt,
    },
    Barrier,
    Bcast {
        count: usize,
        root: i32,
        dt: Dt,
    },
    /// `reduce`, `allreduce`, `scan`, `exscan`.
    Reduction {
        coll: Reduction,
        count: usize,
        flops: f64,
        /// The root of `reduce` (0 for the others).
        root: i32,
        dt: Dt,
    },
    /// `alltoall`, `gather`, `allgather`, `scatter` and their `v` forms
    /// (one count per rank on one side, or both for `alltoallv`).
    Exchange {
        coll: Exchange,
        send: Counts,
        recv: Counts,
        /// The root of `gather`, `scatter` and their `v` forms (0 for the others).
        root: i32,
        sdt: Dt,
        rdt: Dt,
    },
    ReduceScatter {
        rcounts: Vec<usize>,
        flops: f64,
        dt: Dt,
    },
    Compute {
        flops: f64,
    },
    Sleep {
        seconds: f64,
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

/// The collectives that move data without reducing it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Exchange {
    AllToAll,
    Gather,
    AllGather,
    Scatter,
}

/// The counts of one side of an [`Kind::Exchange`]: one, or one per rank (the `v` forms).
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Counts {
    One(usize),
    PerRank(Vec<usize>),
}

impl Counts {
    /// The elements of the side: the count, or the sum of the counts.
    pub(crate) fn total(&self) -> usize {
        match self {
            Counts::One(n) => *n,
            Counts::PerRank(v) => v.iter().sum(),
        }
    }
}

/// One line of a trace.
#[derive(Clone, Debug)]
pub(crate) struct Action {
    pub kind: Kind,
    /// Index of its file in [`Trace::files`], and its line number there.
    pub file: u32,
    pub line: u32,
    /// The line's fields joined by single spaces (SMPI's verbose replay log).
    pub text: Box<str>,
}

/// A trace read for replay.
#[derive(Debug)]
pub(crate) struct Trace {
    pub files: Vec<PathBuf>,
    /// Each rank's actions, in order.
    pub ranks: Vec<Vec<Action>>,
}

impl Trace {
    /// `file:line` of an action, for messages.
    pub(crate) fn at(&self, a: &Action) -> String {
        format!("{}:{}", self.files[a.file as usize].display(), a.line)
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
        return load_shared(vec![index.to_path_buf()], &[text], np);
    }
    let dir = index.parent().unwrap_or(Path::new("."));
    let mut files = Vec::with_capacity(entries.len());
    let mut texts = Vec::with_capacity(entries.len());
    for (lineno, entry) in &entries {
        let p = Path::new(entry);
        let path = if p.is_relative() && !p.exists() && dir.join(p).exists() {
            dir.join(p)
        } else {
            p.to_path_buf()
        };
        let t = std::fs::read_to_string(&path).map_err(|e| {
            format!(
                "{}:{lineno}: trace file '{}' cannot be read: {e}",
                index.display(),
                path.display()
            )
        })?;
        files.push(path);
        texts.push(t);
    }
    if files.len() == 1 {
        return load_shared(files, &texts, np);
    }
    let n = files.len();
    if let Some(np) = np.filter(|np| *np != n) {
        return Err(format!(
            "{}: the index lists {n} rank trace files but -np is {np} (give -np {n} or leave it out)",
            index.display()
        ));
    }
    let mut ranks = Vec::with_capacity(n);
    for (i, t) in texts.iter().enumerate() {
        let mut actions = Vec::new();
        for (lineno, fields) in lines(t) {
            let at = || format!("{}:{lineno}", files[i].display());
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
            let mut a = parse_action(&fields, n, lineno, &at)?;
            a.file = i as u32;
            actions.push(a);
        }
        ranks.push(actions);
    }
    Ok(Trace { files, ranks })
}

fn looks_like_action(line: &str) -> bool {
    let mut f = line.split_whitespace();
    f.next().is_some_and(|r| r.parse::<u32>().is_ok())
        && f.next()
            .is_some_and(|a| a.chars().all(|c| c.is_ascii_alphabetic() || c == '_'))
}

/// Non-blank, non-comment lines of a trace: (line number, fields).
fn lines(text: &str) -> impl Iterator<Item = (u32, Vec<&str>)> {
    text.lines().enumerate().filter_map(|(i, l)| {
        let l = l.trim();
        (!l.is_empty() && !l.starts_with('#')).then(|| {
            (
                (i + 1) as u32,
                l.split([' ', '\t']).filter(|f| !f.is_empty()).collect(),
            )
        })
    })
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

/// One file with every rank's lines.
fn load_shared(files: Vec<PathBuf>, texts: &[String], np: Option<usize>) -> Result<Trace, String> {
    let t = &texts[0];
    let name = files[0].display().to_string();
    let mut seen: Vec<(u32, Vec<&str>, usize)> = Vec::new();
    let mut max = 0;
    for (lineno, fields) in lines(t) {
        let at = || format!("{name}:{lineno}");
        let rank = rank_field(&fields, &at)?;
        max = max.max(rank + 1);
        seen.push((lineno, fields, rank));
    }
    if seen.is_empty() {
        return Err(format!("{name}: the trace has no action"));
    }
    let n = np.unwrap_or(max);
    if max > n {
        return Err(format!(
            "{name}: the trace has actions of ranks 0 to {} but -np is {n}",
            max - 1
        ));
    }
    let mut ranks: Vec<Vec<Action>> = vec![Vec::new(); n];
    for (lineno, fields, rank) in seen {
        let at = || format!("{name}:{lineno}");
        ranks[rank].push(parse_action(&fields, n, lineno, &at)?);
    }
    if let Some(r) = ranks.iter().position(|a| a.is_empty()) {
        return Err(format!(
            "{name}: no action for rank {r} (the trace is for fewer ranks than -np {n})"
        ));
    }
    Ok(Trace { files, ranks })
}

/// Parses one line's fields (`fields[0]` is the rank) for a run of `np` ranks.
fn parse_action(fields: &[&str], np: usize, line: u32, at: &dyn Fn() -> String) -> Result<Action, String> {
    let text = fields.join(" ");
    let bad = |why: String| format!("{}: {why} in '{text}'", at());
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
    let count = |i: usize, what: &str| -> Result<usize, String> {
        let v = num(i, what)?.trunc();
        if v < 0.0 || v > i32::MAX as f64 {
            return Err(bad(format!("{what} {} is out of range", args[i])));
        }
        Ok(v as usize)
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
            .map(Some)
            .ok_or_else(|| bad(format!("datatype id {id} is not a datatype smpirun knows")))
    };
    // A send's or receive's fields: partner, tag, count (read by the caller), datatype.
    let message = |nonblocking: bool, any_partner: bool, count: i64| -> Result<Message, String> {
        Ok(Message {
            nonblocking,
            partner: rank_arg(0, "the partner", any_partner)?,
            tag: int(1, "the tag")?,
            count,
            dt: dt(3)?,
        })
    };
    let flops = |i: usize| -> Result<f64, String> {
        let f = num(i, "the amount of flops")?;
        if f < 0.0 {
            return Err(bad(format!("the amount of flops {f} is negative")));
        }
        Ok(f)
    };
    let counts = |from: usize, what: &str| -> Result<Vec<usize>, String> {
        (from..from + np).map(|i| count(i, what)).collect()
    };
    // One count at `i`, or one per rank from `i` (the `v` forms).
    let side = |i: usize, per_rank: bool, what: &str| -> Result<Counts, String> {
        Ok(if per_rank {
            Counts::PerRank(counts(i, &format!("a {what} count"))?)
        } else {
            Counts::One(count(i, &format!("the {what} count"))?)
        })
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
                message: message(nonblocking, false, count(2, "the count")? as i64)?,
            }
        }
        "recv" | "irecv" => {
            want(3, 1)?;
            let c = num(2, "the count")?.trunc();
            if c > i32::MAX as f64 {
                return Err(bad(format!("the count {} is out of range", args[2])));
            }
            Kind::Recv(message(name == "irecv", true, c as i64)?)
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
            let (coll, send_v, recv_v) = match name {
                "alltoall" => (Exchange::AllToAll, false, false),
                "allgather" => (Exchange::AllGather, false, false),
                "gather" => (Exchange::Gather, false, false),
                "gatherv" => (Exchange::Gather, false, true),
                "scatter" => (Exchange::Scatter, false, false),
                _ => (Exchange::Scatter, true, false),
            };
            let rooted = matches!(coll, Exchange::Gather | Exchange::Scatter) as usize;
            let width = |per_rank: bool| if per_rank { np } else { 1 };
            let n = width(send_v) + width(recv_v);
            want(n, 2 + rooted)?;
            Kind::Exchange {
                coll,
                send: side(0, send_v, "send")?,
                recv: side(width(send_v), recv_v, "receive")?,
                root: if rooted == 1 { root(n)? } else { 0 },
                sdt: dt(n + rooted)?,
                rdt: dt(n + rooted + 1)?,
            }
        }
        "alltoallv" => {
            // Each side's counts follow the size of its buffer (ignored, as SMPI).
            want(2 * np + 2, 2)?;
            Kind::Exchange {
                coll: Exchange::AllToAll,
                send: side(1, true, "send")?,
                recv: side(np + 2, true, "receive")?,
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
            Kind::Exchange {
                coll: Exchange::AllGather,
                send: side(0, false, "send")?,
                recv: side(1, true, "receive")?,
                root: 0,
                sdt,
                rdt,
            }
        }
        "reducescatter" => {
            want(np + 1, 1)?;
            Kind::ReduceScatter {
                rcounts: counts(0, "a receive count")?,
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
            Kind::Sleep { seconds: s }
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
    Ok(Action {
        kind,
        file: 0,
        line,
        text: text.into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(line: &str, np: usize) -> Result<Kind, String> {
        let fields: Vec<&str> = line.split_whitespace().collect();
        parse_action(&fields, np, 7, &|| "t.txt:7".to_string()).map(|a| a.kind)
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
                dt: Some(14)
            })
        );
        assert_eq!(
            one("0 reduce 500 0 2 1 ", 3),
            Ok(Kind::Reduction {
                coll: Reduction::Reduce,
                count: 500,
                flops: 0.0,
                root: 2,
                dt: Some(7)
            })
        );
        assert_eq!(
            one("0 alltoallv 100 1 40 30 1000 1 80 100", 3),
            Ok(Kind::Exchange {
                coll: Exchange::AllToAll,
                send: Counts::PerRank(vec![1, 40, 30]),
                recv: Counts::PerRank(vec![1, 80, 100]),
                root: 0,
                sdt: None,
                rdt: None
            })
        );
        assert_eq!(
            one("1 reducescatter 10 11 12 13 0 0", 4),
            Ok(Kind::ReduceScatter {
                rcounts: vec![10, 11, 12, 13],
                flops: 0.0,
                dt: Some(14)
            })
        );
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
    }

    #[test]
    fn collective_fields_are_read_where_smpi_writes_them() {
        let exchange = |coll, send, recv, root, sdt, rdt| {
            Ok(Kind::Exchange {
                coll,
                send,
                recv,
                root,
                sdt,
                rdt,
            })
        };
        use Counts::{One, PerRank};
        assert_eq!(
            one("0 alltoall 4 5", 2),
            exchange(Exchange::AllToAll, One(4), One(5), 0, None, None)
        );
        assert_eq!(
            one("0 gather 10 20 1 0 1", 3),
            exchange(Exchange::Gather, One(10), One(20), 1, Some(14), Some(7))
        );
        assert_eq!(
            one("0 gatherv 5 1 2 3 1", 3),
            exchange(Exchange::Gather, One(5), PerRank(vec![1, 2, 3]), 1, None, None)
        );
        assert_eq!(
            one("0 scatterv 1 2 3 4 2 1 0", 3),
            exchange(
                Exchange::Scatter,
                PerRank(vec![1, 2, 3]),
                One(4),
                2,
                Some(7),
                Some(14)
            )
        );
        assert_eq!(
            one("0 allgatherv 5 1 2 3 0 1", 3),
            exchange(
                Exchange::AllGather,
                One(5),
                PerRank(vec![1, 2, 3]),
                0,
                Some(14),
                Some(7)
            )
        );
        assert_eq!(
            one("0 exscan 7 100 1", 3),
            Ok(Kind::Reduction {
                coll: Reduction::Exscan,
                count: 7,
                flops: 100.0,
                root: 0,
                dt: Some(7)
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
    }
}
