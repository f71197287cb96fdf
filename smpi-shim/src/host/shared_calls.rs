//! `SMPI_SHARED_CALL(func, input, args...)`: the result of an expensive call
//! (reading an input file, building a table) computed once for all ranks.
//!
//! Results are kept by (function name, input) for the whole run; the first
//! rank to make the call computes and stores the result, the others get the
//! same pointer (so they must treat it as read-only). One table per run: all
//! ranks share it, as in SMPI.

use std::cell::RefCell;
use std::collections::BTreeMap;

thread_local! {
    static CALLS: RefCell<BTreeMap<(String, String), usize>> = const { RefCell::new(BTreeMap::new()) };
}

/// Whether a result of `func` for `input` is stored.
pub(crate) fn known(func: &str, input: &str) -> bool {
    CALLS.with(|c| c.borrow().contains_key(&(func.to_string(), input.to_string())))
}

/// The stored result of `func` for `input`, if any.
pub(crate) fn get(func: &str, input: &str) -> Option<usize> {
    CALLS.with(|c| c.borrow().get(&(func.to_string(), input.to_string())).copied())
}

/// Stores the result of `func` for `input` (replacing an earlier one) and returns it.
pub(crate) fn set(func: &str, input: &str, data: usize) -> usize {
    CALLS.with(|c| c.borrow_mut().insert((func.to_string(), input.to_string()), data));
    data
}
