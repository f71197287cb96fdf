//! Timelines of a run (`smpirun -trace`): per rank, every MPI call of the
//! program and, with `tracing/smpi/computing`, every stretch of computation,
//! with their simulated dates. Two formats, chosen by `tracing/format` or the
//! file name: Chrome's trace-event JSON (`.json`: opens in Perfetto and
//! chrome://tracing; written as the run goes) and Paje, the format SimGrid's
//! tools read (any other name: one container per rank, a state per call;
//! events are kept and written in date order at the end, as Paje requires).

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// Which file format a timeline is written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TraceFormat {
    ChromeJson,
    Paje,
}

impl TraceFormat {
    /// The format `tracing/format` names (`auto`: by the file's extension).
    pub(crate) fn choose(setting: &str, file: &Path) -> Result<Self, String> {
        match setting {
            "json" => Ok(TraceFormat::ChromeJson),
            "paje" => Ok(TraceFormat::Paje),
            "auto" if file.extension().is_some_and(|e| e == "json") => Ok(TraceFormat::ChromeJson),
            "auto" => Ok(TraceFormat::Paje),
            other => Err(format!("tracing/format:{other}: expected auto, json or paje")),
        }
    }
}

/// One stretch of a rank's time.
#[derive(Clone, Debug)]
struct Span {
    rank: u32,
    name: &'static str,
    start: f64,
    end: f64,
    /// When the span began and ended in the order things happened
    /// ([`Timeline::begin`]): at one date, the program's order.
    begun: u64,
    ended: u64,
}

/// The timeline being recorded.
pub(crate) struct Timeline {
    path: PathBuf,
    format: TraceFormat,
    out: BufWriter<File>,
    /// Chrome JSON: whether an event was written (for the separators).
    written: bool,
    /// Paje: every span, written sorted at the end.
    spans: Vec<Span>,
    /// The last number [`Timeline::begin`] handed out.
    happenings: u64,
    /// Whether computation is recorded too.
    pub(crate) computing: bool,
    /// Each rank's host name, for the track names.
    hosts: Vec<String>,
    /// Per rank, the collective algorithms chosen during its current MPI
    /// call (`bcast: binomial_tree`), attached to the call's span.
    algorithms: Vec<String>,
    /// Per rank, the messages its current MPI call posted (`send to 3, 8 B,
    /// tag 0`), attached to the call's span.
    messages: Vec<String>,
    /// Kernel names, kept once for the whole run (a model set has a few).
    names: std::collections::HashMap<String, &'static str>,
}

impl Timeline {
    /// Creates `path` for the timeline of ranks running on `hosts`.
    pub(crate) fn create(
        path: &Path,
        format: TraceFormat,
        computing: bool,
        hosts: Vec<String>,
    ) -> Result<Self, String> {
        let file = File::create(path).map_err(|e| format!("trace file {}: {e}", path.display()))?;
        let mut t = Timeline {
            path: path.to_path_buf(),
            format,
            out: BufWriter::new(file),
            written: false,
            spans: Vec::new(),
            happenings: 0,
            computing,
            algorithms: vec![String::new(); hosts.len()],
            messages: vec![String::new(); hosts.len()],
            hosts,
            names: Default::default(),
        };
        if format == TraceFormat::ChromeJson {
            t.write_json_header();
        }
        Ok(t)
    }

    /// `name` with the lifetime of the run (modelled kernels' names).
    pub(crate) fn intern(&mut self, name: &str) -> &'static str {
        if let Some(n) = self.names.get(name) {
            return n;
        }
        let leaked: &'static str = Box::leak(name.to_string().into_boxed_str());
        self.names.insert(name.to_string(), leaked);
        leaked
    }

    /// Notes that `rank`'s current MPI call runs collective `coll` with
    /// `algorithm` (shown with the call's span in the JSON format).
    pub(crate) fn note_algorithm(&mut self, rank: u32, coll: &str, algorithm: &str) {
        if let Some(a) = self.algorithms.get_mut(rank as usize) {
            if !a.is_empty() {
                a.push_str(", ");
            }
            a.push_str(coll);
            a.push_str(": ");
            a.push_str(algorithm);
        }
    }

    /// Notes that `rank`'s current MPI call posted a `kind` (send or recv)
    /// of `size` bytes with `peer` (world rank; `None`: any source) and `tag`
    /// (shown with the call's span in the JSON format; the program's own
    /// messages, not those inside collectives).
    pub(crate) fn note_message(&mut self, rank: u32, kind: &str, size: usize, peer: Option<u32>, tag: i32) {
        if let Some(m) = self.messages.get_mut(rank as usize) {
            if !m.is_empty() {
                m.push_str("; ");
            }
            let peer = peer.map_or("any".to_string(), |p| p.to_string());
            let dir = if kind == "send" { "to" } else { "from" };
            m.push_str(&format!("{kind} {dir} {peer}, {size} B, tag {tag}"));
        }
    }

    /// The file being written.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    fn write_json_header(&mut self) {
        // A write error surfaces at `finish` (BufWriter keeps it).
        let _ = self
            .out
            .write_all(b"{\"displayTimeUnit\": \"ns\", \"traceEvents\": [\n");
        for (rank, host) in self.hosts.clone().iter().enumerate() {
            self.json_event(&format!(
                "{{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": 0, \"tid\": {rank}, \
                 \"args\": {{\"name\": \"rank {rank} ({host})\"}}}}"
            ));
            self.json_event(&format!(
                "{{\"name\": \"thread_sort_index\", \"ph\": \"M\", \"pid\": 0, \"tid\": {rank}, \
                 \"args\": {{\"sort_index\": {rank}}}}}"
            ));
        }
    }

    fn json_event(&mut self, event: &str) {
        let sep: &[u8] = if self.written { b",\n" } else { b"" };
        let _ = self.out.write_all(sep);
        let _ = self.out.write_all(event.as_bytes());
        self.written = true;
    }

    /// Numbers a span's beginning (pass it to [`Timeline::span`] when the span
    /// ends): dates alone cannot order a call that takes no time and the next
    /// call, which begins at the same date.
    pub(crate) fn begin(&mut self) -> u64 {
        self.happenings += 1;
        self.happenings
    }

    /// Records that `rank` spent `[start, end]` (simulated seconds) in
    /// `name` (an MPI call, `computation`, or a modelled kernel), begun when
    /// [`Timeline::begin`] returned `begun`.
    pub(crate) fn span(&mut self, rank: u32, name: &'static str, start: f64, end: f64, begun: u64) {
        match self.format {
            TraceFormat::ChromeJson => {
                let mpi = name.starts_with("MPI_");
                let category = if mpi { "MPI" } else { "computation" };
                let mut args = Vec::new();
                if mpi {
                    for (key, notes) in [
                        ("algorithm", &mut self.algorithms),
                        ("messages", &mut self.messages),
                    ] {
                        if let Some(n) = notes.get_mut(rank as usize).filter(|n| !n.is_empty()) {
                            args.push(format!("\"{key}\": \"{}\"", std::mem::take(n)));
                        }
                    }
                }
                let algorithms = if args.is_empty() {
                    String::new()
                } else {
                    format!(", \"args\": {{{}}}", args.join(", "))
                };
                // Microseconds, with the simulator's nanosecond precision.
                self.json_event(&format!(
                    "{{\"name\": \"{name}\", \"cat\": \"{category}\", \"ph\": \"X\", \"pid\": 0, \
                     \"tid\": {rank}, \"ts\": {:.3}, \"dur\": {:.3}{algorithms}}}",
                    start * 1e6,
                    (end - start).max(0.0) * 1e6
                ));
            }
            TraceFormat::Paje => {
                // (Paje states carry no arguments: the note goes with the call.)
                if name.starts_with("MPI_") {
                    for notes in [&mut self.algorithms, &mut self.messages] {
                        if let Some(n) = notes.get_mut(rank as usize) {
                            n.clear();
                        }
                    }
                }
                let ended = self.begin();
                self.spans.push(Span {
                    rank,
                    name,
                    start,
                    end,
                    begun,
                    ended,
                })
            }
        }
    }

    /// Completes the file (the run ended at `end`); the error names the file.
    pub(crate) fn finish(mut self, end: f64) -> Result<(), String> {
        match self.format {
            TraceFormat::ChromeJson => {
                let _ = self.out.write_all(b"\n]}\n");
            }
            TraceFormat::Paje => self.write_paje(end),
        }
        self.out
            .flush()
            .map_err(|e| format!("trace file {}: {e}", self.path.display()))
    }

    fn write_paje(&mut self, end: f64) {
        let mut text = String::from(PAJE_HEADER);
        text += "0 CT_Rank 0 \"rank\"\n3 ST_Mpi CT_Rank \"MPI_STATE\"\n";
        for (rank, host) in self.hosts.iter().enumerate() {
            text += &format!("7 0.000000000 rank-{rank} CT_Rank 0 \"rank-{rank} ({host})\"\n");
        }
        // Paje wants dates in order: a push at a span's start, a pop at its
        // end; at one date, in the order they happened (a call that took no
        // time is popped before the next call is pushed; an enclosing call is
        // pushed before the calls it makes).
        let mut events: Vec<(f64, u64, bool, &Span)> = Vec::with_capacity(2 * self.spans.len());
        for s in &self.spans {
            events.push((s.start, s.begun, true, s));
            events.push((s.end.max(s.start), s.ended, false, s));
        }
        events.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        let _ = self.out.write_all(text.as_bytes());
        for (date, _, push, s) in events {
            let line = if push {
                format!("11 {date:.9} ST_Mpi rank-{} \"{}\"\n", s.rank, s.name)
            } else {
                format!("12 {date:.9} ST_Mpi rank-{}\n", s.rank)
            };
            let _ = self.out.write_all(line.as_bytes());
        }
        for rank in 0..self.hosts.len() {
            let _ = self
                .out
                .write_all(format!("8 {end:.9} CT_Rank rank-{rank}\n").as_bytes());
        }
    }
}

/// The Paje event definitions used (PajeDefineContainerType, PajeDefineStateType,
/// PajeCreateContainer, PajeDestroyContainer, PajePushState, PajePopState).
const PAJE_HEADER: &str = "\
%EventDef PajeDefineContainerType 0
%       Alias string
%       Type string
%       Name string
%EndEventDef
%EventDef PajeDefineStateType 3
%       Alias string
%       Type string
%       Name string
%EndEventDef
%EventDef PajeCreateContainer 7
%       Time date
%       Alias string
%       Type string
%       Container string
%       Name string
%EndEventDef
%EventDef PajeDestroyContainer 8
%       Time date
%       Type string
%       Name string
%EndEventDef
%EventDef PajePushState 11
%       Time date
%       Type string
%       Container string
%       Value string
%EndEventDef
%EventDef PajePopState 12
%       Time date
%       Type string
%       Container string
%EndEventDef
";

#[cfg(test)]
mod tests {
    use super::*;

    /// A Paje file as SimGrid's readers take it: every event's id defined in
    /// the header, dates never decreasing, states pushed and popped in pairs
    /// per container, containers created before use.
    fn check_paje(text: &str) -> Result<usize, String> {
        let mut defined = std::collections::HashSet::new();
        let mut last = 0.0f64;
        let mut depth: std::collections::HashMap<String, i32> = Default::default();
        let mut pushes = 0;
        for line in text.lines() {
            if let Some(rest) = line.strip_prefix("%EventDef ") {
                let id = rest.split_whitespace().nth(1).ok_or("no id")?;
                defined.insert(id.to_string());
                continue;
            }
            if line.starts_with('%') || line.is_empty() {
                continue;
            }
            let f: Vec<&str> = line.split_whitespace().collect();
            if !defined.contains(f[0]) {
                return Err(format!("undefined event {line}"));
            }
            if matches!(f[0], "7" | "8" | "11" | "12") {
                let date: f64 = f[1].parse().map_err(|_| format!("bad date: {line}"))?;
                if date < last {
                    return Err(format!("date goes back: {line}"));
                }
                last = date;
            }
            match f[0] {
                "7" => {
                    depth.insert(f[2].to_string(), 0);
                }
                "11" | "12" => {
                    let d = depth.get_mut(f[3]).ok_or(format!("unknown container: {line}"))?;
                    *d += if f[0] == "11" { 1 } else { -1 };
                    pushes += (f[0] == "11") as usize;
                    if *d < 0 {
                        return Err(format!("pop without push: {line}"));
                    }
                }
                "8" if depth.get(f[3]) != Some(&0) => {
                    return Err(format!("destroyed with states open: {line}"));
                }
                _ => {}
            }
        }
        Ok(pushes)
    }

    /// A span beginning (`true`) or ending on a rank, at a date, in the order things happen.
    type Happening = (bool, u32, &'static str, f64);

    fn record(format: TraceFormat, happenings: &[Happening]) -> String {
        let path = std::env::temp_dir().join(format!("smpi-trace-test-{}-{format:?}", std::process::id()));
        let mut t = Timeline::create(&path, format, true, vec!["a".into(), "b".into()]).unwrap();
        let mut open = Vec::new();
        for &(begins, rank, name, date) in happenings {
            if begins {
                open.push((rank, name, date, t.begin()));
            } else {
                let at = open
                    .iter()
                    .rposition(|&(r, n, _, _)| (r, n) == (rank, name))
                    .unwrap();
                let (_, _, start, begun) = open.remove(at);
                t.span(rank, name, start, date, begun);
            }
        }
        assert!(open.is_empty());
        t.finish(3.0).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let _ = std::fs::remove_file(&path);
        text
    }

    // Ranks interleaved, a call inside another, calls that take no time, and a
    // call that takes no time followed by one that begins at the same date.
    const HAPPENINGS: &[Happening] = &[
        (true, 0, "MPI_Init", 0.0),
        (true, 1, "MPI_Init", 0.0),
        (false, 0, "MPI_Init", 0.0),
        (true, 0, "MPI_Sendrecv", 0.0),
        (false, 1, "MPI_Init", 0.0),
        (true, 1, "computation", 0.0),
        (true, 0, "MPI_Recv", 0.5),
        (false, 1, "computation", 1.0),
        (true, 1, "MPI_Isend", 1.0),
        (false, 1, "MPI_Isend", 1.0),
        (true, 1, "MPI_Wait", 1.0),
        (false, 0, "MPI_Recv", 2.0),
        (false, 0, "MPI_Sendrecv", 2.0),
        (true, 0, "MPI_Finalize", 2.0),
        (false, 0, "MPI_Finalize", 2.0),
        (false, 1, "MPI_Wait", 2.5),
    ];
    const SPANS: usize = HAPPENINGS.len() / 2;

    #[test]
    fn paje_is_in_date_order_with_balanced_states() {
        let text = record(TraceFormat::Paje, HAPPENINGS);
        assert_eq!(check_paje(&text), Ok(SPANS), "{text}");
        // The enclosing call is pushed before the call it contains.
        let sendrecv = text.find("\"MPI_Sendrecv\"").unwrap();
        let recv = text.find("\"MPI_Recv\"").unwrap();
        assert!(sendrecv < recv, "{text}");
        // A call that took no time ends before the next one, begun at the same date, begins.
        assert!(
            text.contains("11 1.000000000 ST_Mpi rank-1 \"MPI_Isend\"\n12 1.000000000 ST_Mpi rank-1\n11 1.000000000 ST_Mpi rank-1 \"MPI_Wait\""),
            "{text}"
        );
    }

    #[test]
    fn chrome_json_has_a_track_per_rank_and_every_span() {
        let text = record(TraceFormat::ChromeJson, HAPPENINGS);
        let v: serde_json::Value = serde_json::from_str(&text).expect("valid JSON");
        let events = v["traceEvents"].as_array().unwrap();
        let tracks = events.iter().filter(|e| e["name"] == "thread_name").count();
        assert_eq!(tracks, 2);
        let spans: Vec<_> = events.iter().filter(|e| e["ph"] == "X").collect();
        assert_eq!(spans.len(), SPANS);
        let wait = spans.iter().find(|e| e["name"] == "MPI_Wait").unwrap();
        assert_eq!(wait["tid"], 1);
        assert_eq!(wait["ts"].as_f64(), Some(1e6));
        assert_eq!(wait["dur"].as_f64(), Some(1.5e6));
    }

    #[test]
    fn the_format_follows_the_setting_or_the_file_name() {
        let f = |setting, file| TraceFormat::choose(setting, Path::new(file));
        assert_eq!(f("auto", "t.json"), Ok(TraceFormat::ChromeJson));
        assert_eq!(f("auto", "smpi_simgrid.trace"), Ok(TraceFormat::Paje));
        assert_eq!(f("paje", "t.json"), Ok(TraceFormat::Paje));
        assert!(f("otf2", "t").unwrap_err().contains("tracing/format:otf2"));
    }
}
