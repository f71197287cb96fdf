//! Performance models (see README.md).
