//! The values given for a run, key by key, each with where it came from; the precedence chain
//! is applied here, as values arrive.

use std::collections::BTreeMap;

use super::keys::{self, KEYS};
use super::unsupported;
use super::{ConfigError, Source};

/// One given value and its source.
#[derive(Debug, Clone)]
struct Given {
    value: String,
    source: Source,
}

/// The values given for a run, by canonical key name: for each key, the value of the source of
/// highest precedence seen so far (the last one among values of equal precedence).
#[derive(Debug, Clone, Default)]
pub(crate) struct RawConfig {
    values: BTreeMap<&'static str, Given>,
}

impl RawConfig {
    /// Records `value` for `key` (or one of its aliases), given by `source`. It replaces a value
    /// of lower or equal precedence and is dropped under one of higher precedence, so the
    /// outcome does not depend on the order the sources are read in. Unknown keys are an error.
    pub(crate) fn set(&mut self, key: &str, value: &str, source: Source) -> Result<(), ConfigError> {
        let Some(declared) = keys::find(key) else {
            return Err(ConfigError {
                key: key.to_string(),
                value: value.to_string(),
                problem: unknown_key_problem(key),
                given_in: source,
            });
        };
        let replaces = match self.values.get(declared.name) {
            Some(old) => old.source.precedence() <= source.precedence(),
            None => true,
        };
        if replaces {
            let value = value.to_string();
            self.values.insert(declared.name, Given { value, source });
        }
        Ok(())
    }

    /// Parses `key:value` (the text after `--cfg=`), a command-line setting.
    pub(crate) fn set_pair(&mut self, pair: &str) -> Result<(), ConfigError> {
        let (key, value) = pair.split_once(':').ok_or_else(|| ConfigError {
            key: pair.to_string(),
            value: String::new(),
            problem: "expected key:value".to_string(),
            given_in: Source::CommandLine,
        })?;
        self.set(key.trim(), value.trim(), Source::CommandLine)
    }

    /// The value of `key` (a canonical name): the one given, else its default.
    /// Whether some source gave `key` (its declared name), rather than its default applying.
    pub(crate) fn is_given(&self, key: &str) -> bool {
        self.values.contains_key(key)
    }

    pub(crate) fn get(&self, key: &str) -> &str {
        match self.values.get(key) {
            Some(given) => &given.value,
            None => keys::find(key).map_or("", |k| k.default),
        }
    }

    /// Where the value of `key` (a canonical name) comes from.
    pub(crate) fn source(&self, key: &str) -> Source {
        self.values
            .get(key)
            .map_or(Source::Default, |given| given.source.clone())
    }
}

/// What to say about an unknown key: that SimGrid has it but this simulator does not (and why),
/// or that it is unknown, with the closest names if they are close (a typo, `_` for `-`).
fn unknown_key_problem(key: &str) -> String {
    if let Some(why) = unsupported::reason(key) {
        return format!("a SimGrid 3.32 key that this simulator does not support: {why}");
    }
    let names = KEYS
        .iter()
        .flat_map(|k| std::iter::once(k.name).chain(k.aliases.iter().copied()));
    // A name is near when the distance is at most max(2, bytes/5), and the distance is at least
    // the difference in characters (a key's bytes are at most 4 per character): no name is near
    // a key of more than 5 times the longest name's characters, and the distance costs the
    // product of the lengths (a huge key from a platform file would take seconds).
    let longest = names.clone().map(str::len).max().unwrap_or(0);
    if key.chars().count() > 5 * longest {
        return "unknown configuration key (smpirun --help-cfg lists them)".to_string();
    }
    let distances: Vec<(usize, &str)> = names.map(|name| (edit_distance(key, name), name)).collect();
    let closest = distances.iter().map(|(d, _)| *d).min().unwrap_or(usize::MAX);
    let near: Vec<&str> = distances
        .iter()
        .filter(|(d, _)| *d == closest && *d <= 2.max(key.len() / 5))
        .map(|(_, name)| *name)
        .collect();
    match near.as_slice() {
        [] => "unknown configuration key (smpirun --help-cfg lists them)".to_string(),
        names => format!(
            "unknown configuration key; did you mean {}? (smpirun --help-cfg lists them)",
            names.join(" or ")
        ),
    }
}

/// Levenshtein distance between two short strings, in characters.
pub(crate) fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut current = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(ca != *cb);
            current[j + 1] = substitution.min(previous[j + 1] + 1).min(current[j] + 1);
        }
        previous = current;
    }
    previous[b.len()]
}
