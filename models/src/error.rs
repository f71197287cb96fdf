//! Errors of the `models` crate: one enum, [`ModelError`], for every way a model
//! file, a factor string or an include tree can be wrong.
//!
//! All variants are user mistakes (bad input), never bugs: the crate never panics
//! on user input. Messages are lowercase and name the file, line, column and key
//! when they are known.

use std::path::PathBuf;

/// What went wrong while reading or validating a model.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ModelError {
    /// A model file could not be read (missing, unreadable). Fatal for the load.
    #[error("{}: cannot read model file: {source}", path.display())]
    Io {
        /// The file that could not be read.
        path: PathBuf,
        /// The underlying I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The file is not valid TOML, or a key has the wrong type or is unknown.
    /// The message comes from the TOML parser and already carries line and column.
    #[error("{file}:{line}:{column}: {message}")]
    Syntax {
        /// File name as given to the loader.
        file: String,
        /// 1-based line of the error (0 when unknown).
        line: usize,
        /// 1-based column of the error (0 when unknown).
        column: usize,
        /// Parser message.
        message: String,
    },
    /// The file is valid TOML but a value is semantically wrong (unknown kernel,
    /// missing coefficient, unsorted or overlapping ranges, negative sigma, ...).
    #[error("{file}:{line}:{column}: {key}: {message}")]
    Invalid {
        /// File name as given to the loader.
        file: String,
        /// 1-based line of the offending value (0 when unknown).
        line: usize,
        /// 1-based column of the offending value (0 when unknown).
        column: usize,
        /// Dotted key path of the offending value, e.g. `compute.dgemm.noise.sigma`.
        key: String,
        /// What is wrong and what was expected.
        message: String,
    },
    /// An SMPI-style factor or overhead string (`"B:v;B:v"` or `"B:a:b;..."`)
    /// is malformed. When it comes from a file, it is wrapped in [`ModelError::Invalid`].
    #[error("chunk {chunk} (`{text}`): {message}")]
    FactorString {
        /// 1-based index of the offending `;`-separated chunk (0 for the whole string).
        chunk: usize,
        /// The offending chunk text.
        text: String,
        /// What is wrong and what was expected.
        message: String,
    },
    /// `include` files form a cycle.
    #[error("{file}: include cycle: {chain}")]
    IncludeCycle {
        /// The file whose include closes the cycle.
        file: String,
        /// The chain of files, `a.toml -> b.toml -> a.toml`.
        chain: String,
    },
    /// Two files of one include tree define the same thing (the network model,
    /// a kernel, a config key or the seed).
    #[error("{file}:{line}:{column}: {key} is already defined in {first}")]
    Duplicate {
        /// The file with the second definition.
        file: String,
        /// Line of the second definition.
        line: usize,
        /// Column of the second definition.
        column: usize,
        /// The duplicated key.
        key: String,
        /// The file with the first definition.
        first: String,
    },
}
