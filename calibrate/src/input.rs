//! Reading calibration CSVs (the contract is `apps/calibration/FORMAT.md`):
//! the `# key: value` metadata block, the network or compute table, and the
//! closing `# end: <rows>` line. Every error names the file, the line and the
//! column of the offending cell (see [`InputError`]).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::error::InputError;

/// The `format` metadata value this reader understands.
pub const FORMAT_VERSION: &str = "smpi-calibration/1";

/// Metadata keys every file must carry (FORMAT.md).
pub const REQUIRED_KEYS: [&str; 16] = [
    "format",
    "kind",
    "host",
    "date",
    "kernel",
    "cpu",
    "compiler",
    "mpi",
    "blas",
    "blas_kernel",
    "command",
    "seed",
    "mode",
    "timer",
    "timer_resolution_s",
    "timer_overhead_s",
];

/// Header of a network table.
pub const NETWORK_HEADER: [&str; 6] = ["seq", "kind", "size", "start", "duration", "warmup"];
/// Header of a compute table.
pub const COMPUTE_HEADER: [&str; 8] = ["seq", "core", "kernel", "p0", "p1", "p2", "start", "duration"];

/// Largest message size accepted (an MPI `int` count of bytes).
pub const MAX_SIZE: f64 = 2_147_483_647.0;

/// What a network row timed (FORMAT.md "Kinds").
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NetKind {
    /// Blocking `MPI_Send` (receive already posted).
    Send,
    /// `MPI_Recv` of a message already there.
    Recv,
    /// `MPI_Isend` alone.
    Isend,
    /// One `MPI_Test` that does not complete.
    Test,
    /// One `MPI_Iprobe` that finds nothing.
    Iprobe,
    /// One `MPI_Wtime`.
    Wtime,
    /// `MPI_Send` + `MPI_Recv` round trip.
    Pingpong,
}

impl NetKind {
    /// Every kind, in report order.
    pub const ALL: [NetKind; 7] = [
        NetKind::Pingpong,
        NetKind::Send,
        NetKind::Recv,
        NetKind::Isend,
        NetKind::Test,
        NetKind::Iprobe,
        NetKind::Wtime,
    ];

    /// The name used in the CSV.
    pub fn name(self) -> &'static str {
        match self {
            NetKind::Send => "send",
            NetKind::Recv => "recv",
            NetKind::Isend => "isend",
            NetKind::Test => "test",
            NetKind::Iprobe => "iprobe",
            NetKind::Wtime => "wtime",
            NetKind::Pingpong => "pingpong",
        }
    }

    /// Parses a CSV name.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.name() == s)
    }

    /// True for the kinds whose duration depends on the size (fitted piecewise).
    pub fn sized(self) -> bool {
        matches!(
            self,
            NetKind::Send | NetKind::Recv | NetKind::Isend | NetKind::Pingpong
        )
    }
}

/// Where a row came from, for error messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RowRef {
    /// Index of the file in the list read.
    pub file: usize,
    /// 1-based line.
    pub line: usize,
    /// 1-based column of the row's kind (network) or kernel (compute) cell.
    pub column: usize,
}

/// The CSV kind of held-out ping-pong rows (`calib_net --heldout-per-quarter-decade`).
pub const HELDOUT_KIND: &str = "pingpong_heldout";

/// The CSV kinds of `calib_net`'s `iprobe_arrived` measure: one `MPI_Iprobe` for a
/// message that arrived after the rank's last MPI call, found or missed.
pub const PROBE_ARRIVED_KINDS: [&str; 2] = ["iprobe_arrived_found", "iprobe_arrived_missed"];

/// One `iprobe_arrived` row: did a probe see a message that arrived after the
/// rank's previous MPI call (which therefore could not progress it)?
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ProbeArrived {
    /// The probe found the message.
    pub found: bool,
    /// Duration of the probe (s).
    pub duration: f64,
    /// A warm-up row.
    pub warmup: bool,
}

/// One network row.
#[derive(Debug, Clone, PartialEq)]
pub struct NetworkCall {
    /// Position in the shuffled sequence.
    pub seq: u64,
    /// What was timed.
    pub kind: NetKind,
    /// Payload size (bytes).
    pub size: u64,
    /// Timer reading at the start (s from the run's start).
    pub start: f64,
    /// Duration (s).
    pub duration: f64,
    /// First contact of its (kind, size): excluded by the fitter.
    pub warmup: bool,
    /// Origin.
    pub at: RowRef,
}

/// One compute row.
#[derive(Debug, Clone, PartialEq)]
pub struct KernelCall {
    /// Position in the shuffled sequence.
    pub seq: u64,
    /// The core the process was pinned to.
    pub core: u32,
    /// Kernel or HPL function name.
    pub kernel: String,
    /// The model parameters (FORMAT.md order).
    pub params: Vec<f64>,
    /// Start (s from the run's start).
    pub start: f64,
    /// Duration (s).
    pub duration: f64,
    /// Origin.
    pub at: RowRef,
}

/// The table of a file.
#[derive(Debug, Clone, PartialEq)]
pub enum Table {
    /// `kind: network`.
    Network(Vec<NetworkCall>),
    /// `kind: compute`.
    Compute(Vec<KernelCall>),
}

/// One parsed calibration file.
#[derive(Debug, Clone, PartialEq)]
pub struct CalibrationFile {
    /// The path as given.
    pub path: PathBuf,
    /// SHA-256 of the file's bytes (hex).
    pub sha256: String,
    /// Metadata `key → value`.
    pub meta: BTreeMap<String, String>,
    /// Line of the header row.
    pub header_line: usize,
    /// The rows.
    pub table: Table,
    /// Held-out ping-pong rows (kind `pingpong_heldout`, network files): measured
    /// like `pingpong` among the others, never fitted; `smpi-validate` checks
    /// the fitted model on them. Their `kind` is [`NetKind::Pingpong`].
    pub heldout: Vec<NetworkCall>,
    /// `iprobe_arrived_found` / `_missed` rows (network files): how the real MPI's
    /// probe sees a message no call has progressed (`smpi/probe-sees`).
    pub probe_arrived: Vec<ProbeArrived>,
}

impl CalibrationFile {
    /// A metadata value (required keys are always present).
    pub fn meta(&self, key: &str) -> &str {
        self.meta.get(key).map_or("", String::as_str)
    }

    /// The file name for messages.
    pub fn name(&self) -> String {
        self.path.display().to_string()
    }
}

/// The parameter names of a kernel's CSV cells `p0, p1, p2` (FORMAT.md), `None`
/// for an unknown kernel. HPL functions other than the listed ones are accepted
/// by their parameter count (two: `M, N`; three: `M0, M1, N`).
pub fn kernel_params(kernel: &str, cells_given: usize) -> Option<Vec<&'static str>> {
    let p: &[&str] = match kernel {
        "dgemm" => &["M", "N", "K"],
        "dtrsm" => &["M", "N", "side"],
        "dgemv" | "dger" => &["M", "N"],
        "dtrsv" | "daxpy" | "dscal" | "dswap" | "dcopy" | "idamax" => &["N"],
        "HPL_dlaswp00N" | "HPL_dlaswp01T" | "HPL_dlaswp02N" | "HPL_dlaswp03T" | "HPL_dlacpy"
        | "HPL_dlatcpy" => &["M", "N"],
        "HPL_dlaswp04T" => &["M0", "M1", "N"],
        k if k.starts_with("HPL_") && k[4..].chars().all(|c| c.is_ascii_alphanumeric() || c == '_') => {
            match cells_given {
                2 => &["M", "N"],
                3 => &["M0", "M1", "N"],
                _ => return None,
            }
        }
        _ => return None,
    };
    Some(p.to_vec())
}

/// Reads and parses one file; `index` is its position in the list (kept in
/// each row's [`RowRef`]).
pub fn read_file(path: &Path, index: usize) -> Result<CalibrationFile, InputError> {
    let bytes = std::fs::read(path).map_err(|source| InputError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let text = String::from_utf8_lossy(&bytes);
    let mut f = parse(&text, &path.display().to_string(), index)?;
    f.path = path.to_path_buf();
    f.sha256 = Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    Ok(f)
}

/// 1-based character columns where each comma-separated field of `line`
/// starts (quote-aware, as the csv reader splits).
fn field_columns(line: &str) -> Vec<usize> {
    let mut cols = vec![1];
    let mut quoted = false;
    for (i, c) in line.chars().enumerate() {
        match c {
            '"' => quoted = !quoted,
            ',' if !quoted => cols.push(i + 2),
            _ => {}
        }
    }
    cols
}

/// Parses the text of one file named `file` (see [`read_file`]).
pub fn parse(text: &str, file: &str, index: usize) -> Result<CalibrationFile, InputError> {
    let lines: Vec<&str> = text.lines().collect();
    let mut meta: BTreeMap<String, (String, usize, usize)> = BTreeMap::new();
    let mut i = 0;
    // Metadata block: `# key: value` lines before the header.
    while i < lines.len() {
        let l = lines[i].trim_end_matches('\r');
        if l.trim().is_empty() {
            i += 1;
            continue;
        }
        let Some(rest) = l.trim_start().strip_prefix('#') else {
            break;
        };
        if let Some((k, v)) = rest.split_once(':') {
            let value_col = l.len() - v.trim_start().len() + 1;
            meta.insert(k.trim().to_string(), (v.trim().to_string(), i + 1, value_col));
        }
        i += 1;
    }
    let header_line = i + 1;
    if i >= lines.len() {
        return Err(InputError::Incomplete {
            file: file.into(),
            line: header_line,
            column: 1,
            message: "no header row after the metadata (the run wrote nothing)".into(),
        });
    }
    for key in REQUIRED_KEYS {
        if !meta.contains_key(key) {
            return Err(InputError::MissingMetadata {
                file: file.into(),
                line: header_line,
                column: 1,
                key: key.into(),
            });
        }
    }
    let bad_meta = |key: &str, message: String| {
        let (_, line, column) = &meta[key];
        InputError::BadMetadata {
            file: file.into(),
            line: *line,
            column: *column,
            key: key.into(),
            message,
        }
    };
    if meta["format"].0 != FORMAT_VERSION {
        return Err(bad_meta(
            "format",
            format!(
                "`{}` is not supported (expected `{FORMAT_VERSION}`)",
                meta["format"].0
            ),
        ));
    }
    for key in ["timer_resolution_s", "timer_overhead_s"] {
        if !meta[key]
            .0
            .parse::<f64>()
            .is_ok_and(|v| v.is_finite() && v >= 0.0)
        {
            return Err(bad_meta(
                key,
                format!("`{}` is not a number of seconds >= 0", meta[key].0),
            ));
        }
    }
    let is_network = match meta["kind"].0.as_str() {
        "network" => true,
        "compute" => false,
        other => {
            return Err(bad_meta(
                "kind",
                format!("`{other}` is neither `network` nor `compute`"),
            ))
        }
    };
    let expected: &[&str] = if is_network {
        &NETWORK_HEADER
    } else {
        &COMPUTE_HEADER
    };
    let header_text = lines[i].trim_end_matches('\r');
    let header: Vec<String> = header_text.split(',').map(|s| s.trim().to_string()).collect();
    let mut col_of = BTreeMap::new();
    for name in expected {
        match header.iter().position(|h| h == name) {
            Some(p) => {
                col_of.insert(*name, p);
            }
            None => {
                return Err(InputError::MissingColumn {
                    file: file.into(),
                    line: header_line,
                    column: header_text.chars().count() + 1,
                    name: (*name).into(),
                    kind: if is_network { "network" } else { "compute" }.into(),
                    expected: expected.join(","),
                })
            }
        }
    }

    // Data rows up to `# end: N`.
    let mut data_lines: Vec<(usize, &str)> = Vec::new();
    let mut end: Option<(usize, &str)> = None;
    for (j, raw) in lines.iter().enumerate().skip(i + 1) {
        let l = raw.trim_end_matches('\r');
        if l.trim().is_empty() {
            continue;
        }
        if let Some((end_line, _)) = end {
            return Err(InputError::BadRow {
                file: file.into(),
                line: j + 1,
                column: 1,
                message: format!("data after the `# end` line (line {end_line})"),
            });
        }
        if let Some(rest) = l.trim_start().strip_prefix('#') {
            end = Some((j + 1, rest));
            continue;
        }
        data_lines.push((j + 1, l));
    }
    let Some((end_line, end_text)) = end else {
        return Err(InputError::Incomplete {
            file: file.into(),
            line: lines.len() + 1,
            column: 1,
            message: "no `# end: <rows>` line (the calibration run was interrupted?)".into(),
        });
    };
    let count = end_text
        .split_once(':')
        .filter(|(k, _)| k.trim() == "end")
        .and_then(|(_, v)| v.trim().parse::<usize>().ok());
    match count {
        Some(c) if c == data_lines.len() => {}
        Some(c) => {
            return Err(InputError::Incomplete {
                file: file.into(),
                line: end_line,
                column: 1,
                message: format!("`# end: {c}` but the file has {} data rows", data_lines.len()),
            })
        }
        None => {
            return Err(InputError::Incomplete {
                file: file.into(),
                line: end_line,
                column: 1,
                message: format!("expected `# end: <rows>` as the last line, found `#{end_text}`"),
            })
        }
    }

    // Cells through the csv reader (quoting, trimming); columns from the raw line.
    let block: String = data_lines.iter().map(|(_, l)| format!("{l}\n")).collect();
    let mut rdr = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .trim(csv::Trim::All)
        .from_reader(block.as_bytes());
    let mut net = Vec::new();
    let mut heldout_rows = Vec::new();
    let mut probe_rows = Vec::new();
    let mut comp = Vec::new();
    for (rec, (line, raw)) in rdr.records().zip(&data_lines) {
        let line = *line;
        let cols = field_columns(raw);
        let rec = rec.map_err(|e| InputError::BadRow {
            file: file.into(),
            line,
            column: 1,
            message: format!("malformed CSV row: {e}"),
        })?;
        if rec.len() != header.len() {
            return Err(InputError::BadRow {
                file: file.into(),
                line,
                column: cols.last().copied().unwrap_or(1),
                message: format!("{} fields, the header has {}", rec.len(), header.len()),
            });
        }
        let cell = |name: &str| {
            let p = col_of[name];
            (rec.get(p).unwrap_or(""), cols.get(p).copied().unwrap_or(1))
        };
        let number = |name: &str, expected: &str| -> Result<f64, InputError> {
            let (v, column) = cell(name);
            match v.parse::<f64>() {
                Ok(x) if x.is_finite() => Ok(x),
                _ => Err(InputError::NotNumeric {
                    file: file.into(),
                    line,
                    column,
                    name: name.into(),
                    value: v.into(),
                    expected: expected.into(),
                }),
            }
        };
        let out_of_range = |name: &str, expected: &str| {
            let (v, column) = cell(name);
            InputError::OutOfRange {
                file: file.into(),
                line,
                column,
                name: name.into(),
                value: v.into(),
                expected: expected.into(),
            }
        };
        let seq = number("seq", "an integer >= 0")?;
        if seq < 0.0 || seq.fract() != 0.0 {
            return Err(out_of_range("seq", "an integer >= 0"));
        }
        let start = number("start", "seconds")?;
        let duration = number("duration", "seconds >= 0")?;
        if duration < 0.0 {
            return Err(out_of_range("duration", "seconds >= 0"));
        }
        if is_network && PROBE_ARRIVED_KINDS.contains(&cell("kind").0) {
            let warmup = number("warmup", "0 or 1")?;
            if warmup != 0.0 && warmup != 1.0 {
                return Err(out_of_range("warmup", "0 or 1"));
            }
            probe_rows.push(ProbeArrived {
                found: cell("kind").0 == PROBE_ARRIVED_KINDS[0],
                duration,
                warmup: warmup == 1.0,
            });
        } else if is_network {
            let (k, kcol) = cell("kind");
            let heldout = k == HELDOUT_KIND;
            let kind = (if heldout {
                Some(NetKind::Pingpong)
            } else {
                NetKind::parse(k)
            })
            .ok_or_else(|| InputError::BadRow {
                file: file.into(),
                line,
                column: kcol,
                message: format!(
                    "column `kind`: unknown kind `{k}` (expected one of {}, {HELDOUT_KIND}, {})",
                    NetKind::ALL.map(NetKind::name).join(", "),
                    PROBE_ARRIVED_KINDS.join(", ")
                ),
            })?;
            let size = number("size", "an integer number of bytes")?;
            if !(0.0..=MAX_SIZE).contains(&size) || size.fract() != 0.0 {
                return Err(out_of_range(
                    "size",
                    "an integer number of bytes from 0 to 2147483647",
                ));
            }
            let warmup = number("warmup", "0 or 1")?;
            if warmup != 0.0 && warmup != 1.0 {
                return Err(out_of_range("warmup", "0 or 1"));
            }
            let rows = if heldout { &mut heldout_rows } else { &mut net };
            rows.push(NetworkCall {
                seq: seq as u64,
                kind,
                size: size as u64,
                start,
                duration,
                warmup: warmup == 1.0,
                at: RowRef {
                    file: index,
                    line,
                    column: kcol,
                },
            });
        } else {
            let core = number("core", "a core number >= 0")?;
            if core < 0.0 || core.fract() != 0.0 || core > 65535.0 {
                return Err(out_of_range("core", "an integer core number from 0 to 65535"));
            }
            let (kernel, kcol) = cell("kernel");
            let given = ["p0", "p1", "p2"]
                .iter()
                .take_while(|p| !cell(p).0.is_empty())
                .count();
            let names = kernel_params(kernel, given).ok_or_else(|| InputError::BadRow {
                file: file.into(),
                line,
                column: kcol,
                message: format!(
                    "column `kernel`: unknown kernel `{kernel}` (expected dgemm, dtrsm, dgemv, dger, dtrsv, \
                     daxpy, dscal, dswap, dcopy, idamax or an HPL_ function, see FORMAT.md)"
                ),
            })?;
            let mut params = Vec::new();
            for (j, pname) in ["p0", "p1", "p2"].iter().enumerate() {
                let (v, column) = cell(pname);
                if j < names.len() {
                    if v.is_empty() {
                        return Err(InputError::BadRow {
                            file: file.into(),
                            line,
                            column,
                            message: format!(
                                "column `{pname}`: empty, but {kernel} takes {} ({})",
                                names.len(),
                                names.join(", ")
                            ),
                        });
                    }
                    let x = number(pname, &format!("{kernel}'s parameter {}", names[j]))?;
                    if x < 0.0 || x.fract() != 0.0 || x > MAX_SIZE {
                        return Err(out_of_range(
                            pname,
                            &format!("{kernel}'s {}: an integer from 0 to 2147483647", names[j]),
                        ));
                    }
                    if names[j] == "side" && x != 0.0 && x != 1.0 {
                        return Err(out_of_range(pname, "dtrsm's side: 0 (Left) or 1 (Right)"));
                    }
                    params.push(x);
                } else if !v.is_empty() {
                    return Err(InputError::BadRow {
                        file: file.into(),
                        line,
                        column,
                        message: format!(
                            "column `{pname}`: `{v}` given, but {kernel} takes only {} ({})",
                            names.len(),
                            names.join(", ")
                        ),
                    });
                }
            }
            comp.push(KernelCall {
                seq: seq as u64,
                core: core as u32,
                kernel: kernel.to_string(),
                params,
                start,
                duration,
                at: RowRef {
                    file: index,
                    line,
                    column: kcol,
                },
            });
        }
    }
    if data_lines.is_empty() {
        return Err(InputError::NoData {
            file: file.into(),
            line: header_line,
            column: 1,
            what: "any measure".into(),
            message: "the table has no data row".into(),
        });
    }
    Ok(CalibrationFile {
        path: PathBuf::from(file),
        sha256: String::new(),
        meta: meta.into_iter().map(|(k, (v, _, _))| (k, v)).collect(),
        header_line,
        table: if is_network {
            Table::Network(net)
        } else {
            Table::Compute(comp)
        },
        heldout: heldout_rows,
        probe_arrived: probe_rows,
    })
}

#[cfg(test)]
mod tests;
