//! Timelines of a run (`smpirun -trace`): per rank, every MPI call of the
//! program, every message from its send to its receive's completion and,
//! with `tracing/smpi/computing`, every stretch of computation, with their
//! simulated dates. Two formats, chosen by `tracing/format` or the file name:
//! Chrome's trace-event JSON (`.json`: opens in Perfetto and chrome://tracing;
//! written as the run goes; messages are flow arrows) and Paje, the format
//! SimGrid's tools read (any other name: one container per rank, inside one
//! per host with `tracing/smpi/group`, a state per call, a link per message;
//! events are kept and written in date order at the end, as Paje requires).
//! SMPI's switches say what is recorded: `tracing/smpi/internals` (the
//! messages inside collectives too), `tracing/smpi/display-sizes` (sizes on
//! Paje states and links), `tracing/precision` (digits of Paje dates),
//! `tracing/comment` and `tracing/comment-file` (lines at the top).

use std::collections::{HashMap, VecDeque};
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

/// What a timeline records (the `tracing/*` switches).
#[derive(Clone, Debug, Default)]
pub(crate) struct TraceOptions {
    /// `tracing/smpi/computing`: computation too.
    pub computing: bool,
    /// `tracing/smpi/internals`: the messages collectives exchange too.
    pub internals: bool,
    /// `tracing/smpi/display-sizes`: Paje states and links carry sizes.
    pub display_sizes: bool,
    /// `tracing/smpi/group`: Paje rank containers inside host containers,
    /// JSON tracks grouped by host.
    pub grouped: bool,
    /// `tracing/precision`: decimal digits of Paje dates.
    pub precision: usize,
    /// `tracing/comment` and the lines of `tracing/comment-file`: written at
    /// the top of the file.
    pub comments: Vec<String>,
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
    /// Bytes of the messages the call posted (`tracing/smpi/display-sizes`).
    bytes: Option<usize>,
}

/// One end of a message's link (Paje).
#[derive(Clone, Debug)]
struct LinkEnd {
    date: f64,
    /// Its number in the order things happened.
    seq: u64,
    /// The send (`true`) or the receive's completion.
    start: bool,
    rank: u32,
    key: u64,
    size: usize,
}

/// A message waiting for its receive to complete: the sender's local rank,
/// the receiver (world), the tag and the context identify it, as MPI's
/// matching does; messages of one flow stay in order.
type Flow = (i32, u32, i32, u32);

/// The timeline being recorded.
pub(crate) struct Timeline {
    path: PathBuf,
    format: TraceFormat,
    options: TraceOptions,
    out: BufWriter<File>,
    /// Chrome JSON: whether an event was written (for the separators).
    written: bool,
    /// Paje: every span and link end, written sorted at the end.
    spans: Vec<Span>,
    links: Vec<LinkEnd>,
    /// The last number [`Timeline::begin`] handed out.
    happenings: u64,
    /// Each rank's host name, for the track names.
    hosts: Vec<String>,
    /// The hosts used, in order of first use, and each rank's index in it.
    host_names: Vec<String>,
    rank_host: Vec<usize>,
    /// Per rank, the collective algorithms chosen during its current MPI
    /// call (`bcast: binomial_tree`), attached to the call's span.
    algorithms: Vec<String>,
    /// Per rank, the messages its current MPI call posted (`send to 3, 8 B,
    /// tag 0`), attached to the call's span.
    messages: Vec<String>,
    /// Per rank, the bytes its current MPI call sent.
    bytes: Vec<usize>,
    /// Messages sent and not yet received, by [`Flow`]: their keys.
    in_flight: HashMap<Flow, VecDeque<u64>>,
    /// The last message key handed out.
    last_key: u64,
    /// Kernel names, kept once for the whole run (a model set has a few).
    names: HashMap<String, &'static str>,
}

impl Timeline {
    /// Creates `path` for the timeline of ranks running on `hosts`.
    pub(crate) fn create(
        path: &Path,
        format: TraceFormat,
        options: TraceOptions,
        hosts: Vec<String>,
    ) -> Result<Self, String> {
        let file = File::create(path).map_err(|e| format!("trace file {}: {e}", path.display()))?;
        let n = hosts.len();
        let mut host_names: Vec<String> = Vec::new();
        let mut index: HashMap<&str, usize> = HashMap::new();
        let rank_host = hosts
            .iter()
            .map(|h| {
                *index.entry(h.as_str()).or_insert_with(|| {
                    host_names.push(h.clone());
                    host_names.len() - 1
                })
            })
            .collect();
        let mut t = Timeline {
            path: path.to_path_buf(),
            format,
            options,
            out: BufWriter::new(file),
            written: false,
            spans: Vec::new(),
            links: Vec::new(),
            happenings: 0,
            algorithms: vec![String::new(); n],
            messages: vec![String::new(); n],
            bytes: vec![0; n],
            host_names,
            rank_host,
            hosts,
            in_flight: HashMap::new(),
            last_key: 0,
            names: Default::default(),
        };
        if format == TraceFormat::ChromeJson {
            t.write_json_header();
        }
        Ok(t)
    }

    /// Whether computation is recorded.
    pub(crate) fn computing(&self) -> bool {
        self.options.computing
    }

    /// Whether messages of communication context `context` are recorded (the
    /// program's contexts are even; collectives' odd ones only with
    /// `tracing/smpi/internals`).
    pub(crate) fn records(&self, context: u32) -> bool {
        context.is_multiple_of(2) || self.options.internals
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
    /// (shown with the call's span in the JSON format).
    pub(crate) fn note_message(&mut self, rank: u32, kind: &str, size: usize, peer: Option<u32>, tag: i32) {
        if let Some(m) = self.messages.get_mut(rank as usize) {
            if !m.is_empty() {
                m.push_str("; ");
            }
            let peer = peer.map_or("any".to_string(), |p| p.to_string());
            let dir = if kind == "send" { "to" } else { "from" };
            m.push_str(&format!("{kind} {dir} {peer}, {size} B, tag {tag}"));
        }
        if let Some(b) = self.bytes.get_mut(rank as usize) {
            *b += size;
        }
    }

    /// A message leaves `from` (world rank; `from_local` in its
    /// communicator) for `to` at `date`: the start of its link.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn message_sent(
        &mut self,
        date: f64,
        from: u32,
        from_local: i32,
        to: u32,
        tag: i32,
        context: u32,
        size: usize,
    ) {
        self.last_key += 1;
        let key = self.last_key;
        self.in_flight
            .entry((from_local, to, tag, context))
            .or_default()
            .push_back(key);
        let args = format!(", \"args\": {{\"to\": {to}, \"bytes\": {size}, \"tag\": {tag}}}");
        self.link_end(date, true, from, key, size, &args);
    }

    /// The receive of the message from `from_local` (in its communicator)
    /// to `to` with `tag` in `context` completed at `date`: the end of its
    /// link (nothing when its send was not recorded).
    pub(crate) fn message_received(&mut self, date: f64, from_local: i32, to: u32, tag: i32, context: u32) {
        let flow = (from_local, to, tag, context);
        let Some(key) = self.in_flight.get_mut(&flow).and_then(|q| q.pop_front()) else {
            return;
        };
        if self.in_flight.get(&flow).is_some_and(|q| q.is_empty()) {
            self.in_flight.remove(&flow);
        }
        self.link_end(date, false, to, key, 0, "");
    }

    /// Records one end of message `key`'s link on `rank` at `date` (`start`:
    /// its send, else its receive's completion): a JSON flow event (`args`:
    /// its extra fields), or a Paje link event written at the end.
    fn link_end(&mut self, date: f64, start: bool, rank: u32, key: u64, size: usize, args: &str) {
        match self.format {
            TraceFormat::ChromeJson => {
                let phase = if start { "\"s\"" } else { "\"f\", \"bp\": \"e\"" };
                self.json_event(&format!(
                    "{{\"name\": \"message\", \"cat\": \"message\", \"ph\": {phase}, \"id\": {key}, \
                     \"pid\": {}, \"tid\": {rank}, \"ts\": {:.3}{args}}}",
                    self.pid(rank),
                    date * 1e6
                ))
            }
            TraceFormat::Paje => {
                let seq = self.begin();
                self.links.push(LinkEnd {
                    date,
                    seq,
                    start,
                    rank,
                    key,
                    size,
                });
            }
        }
    }

    /// The file being written.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// The JSON process of `rank`'s track: its host's index when grouped.
    fn pid(&self, rank: u32) -> usize {
        if self.options.grouped {
            self.host_index(rank)
        } else {
            0
        }
    }

    /// The index of `rank`'s host in [`Timeline::host_names`].
    fn host_index(&self, rank: u32) -> usize {
        self.rank_host[rank as usize]
    }

    fn write_json_header(&mut self) {
        // A write error surfaces at `finish` (BufWriter keeps it).
        let _ = self
            .out
            .write_all(b"{\"displayTimeUnit\": \"ns\", \"traceEvents\": [\n");
        for comment in self.options.comments.clone() {
            let text = serde_json::to_string(&comment).unwrap_or_default();
            self.json_event(&format!(
                "{{\"name\": \"comment\", \"ph\": \"M\", \"pid\": 0, \"args\": {{\"comment\": {text}}}}}"
            ));
        }
        if self.options.grouped {
            for (pid, host) in self.host_names.clone().iter().enumerate() {
                self.json_event(&format!(
                    "{{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": {pid}, \"args\": {{\"name\": \"{host}\"}}}}"
                ));
            }
        }
        for (rank, host) in self.hosts.clone().iter().enumerate() {
            let pid = self.pid(rank as u32);
            self.json_event(&format!(
                "{{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": {pid}, \"tid\": {rank}, \
                 \"args\": {{\"name\": \"rank {rank} ({host})\"}}}}"
            ));
            self.json_event(&format!(
                "{{\"name\": \"thread_sort_index\", \"ph\": \"M\", \"pid\": {pid}, \"tid\": {rank}, \
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
        let mpi = name.starts_with("MPI_");
        let bytes = if mpi {
            self.bytes.get_mut(rank as usize).map(std::mem::take)
        } else {
            None
        };
        match self.format {
            TraceFormat::ChromeJson => {
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
                    "{{\"name\": \"{name}\", \"cat\": \"{category}\", \"ph\": \"X\", \"pid\": {}, \
                     \"tid\": {rank}, \"ts\": {:.3}, \"dur\": {:.3}{algorithms}}}",
                    self.pid(rank),
                    start * 1e6,
                    (end - start).max(0.0) * 1e6
                ));
            }
            TraceFormat::Paje => {
                // (Paje states carry no arguments: the note goes with the call.)
                if mpi {
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
                    bytes,
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
        let sizes = self.options.display_sizes;
        let digits = self.options.precision;
        let mut text = String::new();
        for comment in &self.options.comments {
            text += &format!("# {comment}\n");
        }
        text += &paje_header(sizes);
        let hosts = self.host_names.clone();
        if self.options.grouped {
            text += "0 CT_Host 0 \"host\"\n0 CT_Rank CT_Host \"rank\"\n";
        } else {
            text += "0 CT_Rank 0 \"rank\"\n";
        }
        text += "3 ST_Mpi CT_Rank \"MPI_STATE\"\n4 LT_Ptp 0 CT_Rank CT_Rank \"MPI_LINK\"\n";
        let zero = format!("{:.digits$}", 0.0);
        if self.options.grouped {
            for (i, host) in hosts.iter().enumerate() {
                text += &format!("7 {zero} host-{i} CT_Host 0 \"{host}\"\n");
            }
            for rank in 0..self.hosts.len() {
                let h = self.host_index(rank as u32);
                text += &format!("7 {zero} rank-{rank} CT_Rank host-{h} \"rank-{rank}\"\n");
            }
        } else {
            for (rank, host) in self.hosts.iter().enumerate() {
                text += &format!("7 {zero} rank-{rank} CT_Rank 0 \"rank-{rank} ({host})\"\n");
            }
        }
        let _ = self.out.write_all(text.as_bytes());
        // Paje wants dates in order: a push at a span's start, a pop at its
        // end, a link's start at its send, its end at its receive; at one
        // date, in the order they happened (a call that took no time is
        // popped before the next call is pushed; an enclosing call is pushed
        // before the calls it makes).
        enum Event<'a> {
            Push(&'a Span),
            Pop(&'a Span),
            Link(&'a LinkEnd),
        }
        let mut events: Vec<(f64, u64, Event)> = Vec::with_capacity(2 * self.spans.len() + self.links.len());
        for s in &self.spans {
            events.push((s.start, s.begun, Event::Push(s)));
            events.push((s.end.max(s.start), s.ended, Event::Pop(s)));
        }
        for l in &self.links {
            events.push((l.date, l.seq, Event::Link(l)));
        }
        events.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        for (date, _, event) in events {
            let line = match event {
                Event::Push(s) if sizes => format!(
                    "11 {date:.digits$} ST_Mpi rank-{} \"{}\" {}\n",
                    s.rank,
                    s.name,
                    s.bytes.unwrap_or(0)
                ),
                Event::Push(s) => format!("11 {date:.digits$} ST_Mpi rank-{} \"{}\"\n", s.rank, s.name),
                Event::Pop(s) => format!("12 {date:.digits$} ST_Mpi rank-{}\n", s.rank),
                Event::Link(l) if l.start && sizes => format!(
                    "15 {date:.digits$} LT_Ptp 0 PTP rank-{} {} {}\n",
                    l.rank, l.key, l.size
                ),
                Event::Link(l) if l.start => {
                    format!("15 {date:.digits$} LT_Ptp 0 PTP rank-{} {}\n", l.rank, l.key)
                }
                Event::Link(l) => format!("16 {date:.digits$} LT_Ptp 0 PTP rank-{} {}\n", l.rank, l.key),
            };
            let _ = self.out.write_all(line.as_bytes());
        }
        let end = format!("{end:.digits$}");
        for rank in 0..self.hosts.len() {
            let _ = self
                .out
                .write_all(format!("8 {end} CT_Rank rank-{rank}\n").as_bytes());
        }
        if self.options.grouped {
            for i in 0..hosts.len() {
                let _ = self
                    .out
                    .write_all(format!("8 {end} CT_Host host-{i}\n").as_bytes());
            }
        }
    }
}

/// The Paje events a timeline uses: name, id, fields. SMPI's
/// `tracing/smpi/display-sizes` adds a `Size int` field to the state pushes
/// and link starts ([`SIZED_EVENTS`]).
const PAJE_EVENTS: &[(&str, u8, &[&str])] = &[
    (
        "PajeDefineContainerType",
        0,
        &["Alias string", "Type string", "Name string"],
    ),
    (
        "PajeDefineStateType",
        3,
        &["Alias string", "Type string", "Name string"],
    ),
    (
        "PajeDefineLinkType",
        4,
        &[
            "Alias string",
            "Type string",
            "StartContainerType string",
            "EndContainerType string",
            "Name string",
        ],
    ),
    (
        "PajeCreateContainer",
        7,
        &[
            "Time date",
            "Alias string",
            "Type string",
            "Container string",
            "Name string",
        ],
    ),
    (
        "PajeDestroyContainer",
        8,
        &["Time date", "Type string", "Name string"],
    ),
    (
        "PajePushState",
        11,
        &["Time date", "Type string", "Container string", "Value string"],
    ),
    (
        "PajePopState",
        12,
        &["Time date", "Type string", "Container string"],
    ),
    (
        "PajeStartLink",
        15,
        &[
            "Time date",
            "Type string",
            "Container string",
            "Value string",
            "StartContainer string",
            "Key string",
        ],
    ),
    (
        "PajeEndLink",
        16,
        &[
            "Time date",
            "Type string",
            "Container string",
            "Value string",
            "EndContainer string",
            "Key string",
        ],
    ),
];

/// The events that carry a size with `tracing/smpi/display-sizes`.
const SIZED_EVENTS: &[u8] = &[11, 15];

/// The header of a Paje timeline: the definition of each event it uses.
fn paje_header(sizes: bool) -> String {
    let mut text = String::new();
    for (name, id, fields) in PAJE_EVENTS {
        text += &format!("%EventDef {name} {id}\n");
        for field in fields.iter() {
            text += &format!("%       {field}\n");
        }
        if sizes && SIZED_EVENTS.contains(id) {
            text += "%       Size int\n";
        }
        text += "%EndEventDef\n";
    }
    text
}

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
        let options = TraceOptions {
            computing: true,
            precision: 9,
            ..Default::default()
        };
        let mut t = Timeline::create(&path, format, options, vec!["a".into(), "b".into()]).unwrap();
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
