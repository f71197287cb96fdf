//! Errors of the fitter. Input errors name the file, the line and the column
//! (1-based, in characters) of the offending cell, the column's name, the bad
//! value and what was expected, like the rest of the project's loaders.

use std::path::PathBuf;

/// Something wrong in a calibration CSV (the user's input).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum InputError {
    /// The file cannot be read.
    #[error("{}: cannot read it: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The system error.
        source: std::io::Error,
    },
    /// A required `# key: value` metadata line is absent.
    #[error("{file}:{line}:{column}: missing metadata key `{key}` (every calibration CSV starts with `# {key}: ...`; see apps/calibration/FORMAT.md)")]
    MissingMetadata {
        /// The file.
        file: String,
        /// Line where the metadata block ends (the header row).
        line: usize,
        /// Column (always 1).
        column: usize,
        /// The missing key.
        key: String,
    },
    /// A metadata value is not what FORMAT.md says.
    #[error("{file}:{line}:{column}: metadata `{key}`: {message}")]
    BadMetadata {
        /// The file.
        file: String,
        /// Line of the metadata entry.
        line: usize,
        /// Column of the value.
        column: usize,
        /// The key.
        key: String,
        /// What is wrong.
        message: String,
    },
    /// The header row lacks a column.
    #[error("{file}:{line}:{column}: missing column `{name}` (the {kind} header is `{expected}`)")]
    MissingColumn {
        /// The file.
        file: String,
        /// Line of the header.
        line: usize,
        /// Column just after the header's end.
        column: usize,
        /// The missing column.
        name: String,
        /// `network` or `compute`.
        kind: String,
        /// The header FORMAT.md prescribes.
        expected: String,
    },
    /// A cell that should be a number is not.
    #[error("{file}:{line}:{column}: column `{name}`: `{value}` is not a number ({expected})")]
    NotNumeric {
        /// The file.
        file: String,
        /// Line.
        line: usize,
        /// Column of the cell.
        column: usize,
        /// Column name.
        name: String,
        /// The cell's text.
        value: String,
        /// What was expected.
        expected: String,
    },
    /// A number outside its allowed range (negative duration, non-integer or too
    /// large size, warm-up flag other than 0/1, ...).
    #[error("{file}:{line}:{column}: column `{name}`: {value} is out of range ({expected})")]
    OutOfRange {
        /// The file.
        file: String,
        /// Line.
        line: usize,
        /// Column of the cell.
        column: usize,
        /// Column name.
        name: String,
        /// The cell's text.
        value: String,
        /// The allowed range.
        expected: String,
    },
    /// Some other malformed cell or row (unknown kind or kernel, wrong number of
    /// fields, parameters missing for a kernel).
    #[error("{file}:{line}:{column}: {message}")]
    BadRow {
        /// The file.
        file: String,
        /// Line.
        line: usize,
        /// Column.
        column: usize,
        /// What is wrong.
        message: String,
    },
    /// Too little data to fit a kernel or a measure kind.
    #[error("{file}:{line}:{column}: no data for {what}: {message}")]
    NoData {
        /// The file (the first one holding rows of it, or the last file read).
        file: String,
        /// Line of its first row (or of the header when it has none).
        line: usize,
        /// Column of the kind/kernel cell.
        column: usize,
        /// Kernel or measure kind.
        what: String,
        /// Why it is not enough.
        message: String,
    },
    /// The file does not end with `# end: <rows>` (the run did not finish), or the
    /// count disagrees.
    #[error("{file}:{line}:{column}: incomplete file: {message}")]
    Incomplete {
        /// The file.
        file: String,
        /// Line after the last one (or of the bad end line).
        line: usize,
        /// Column.
        column: usize,
        /// What is wrong.
        message: String,
    },
}
