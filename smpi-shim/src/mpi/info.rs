//! MPI_Info objects: ordered (key, value) string pairs.
//!
//! Handles index one table of the run ([`InfoTable`], in the world: every
//! rank runs in this process, and each creates its own objects). Handle 0 is
//! `MPI_INFO_NULL`; `MPI_INFO_ENV` is a predefined, read-only object holding
//! what MPI-4 lists for it that smpirun knows (`command`, `argv`, `maxprocs`,
//! `host`).

use crate::mpi::{mpi_err, MpiResult, MPI_ERR_ARG};

/// `MPI_ERR_INFO`.
pub(crate) const MPI_ERR_INFO: i32 = 22;
/// `MPI_ERR_INFO_KEY`: key empty or longer than `MPI_MAX_INFO_KEY`.
pub(crate) const MPI_ERR_INFO_KEY: i32 = 24;
/// `MPI_ERR_INFO_VALUE`: value longer than `MPI_MAX_INFO_VAL`.
pub(crate) const MPI_ERR_INFO_VALUE: i32 = 25;
/// `MPI_ERR_INFO_NOKEY`: deleting a key that is not there.
pub(crate) const MPI_ERR_INFO_NOKEY: i32 = 26;
/// `MPI_MAX_INFO_KEY` (without the terminating NUL).
pub(crate) const MAX_KEY: usize = 255;
/// `MPI_MAX_INFO_VAL` (without the terminating NUL).
pub(crate) const MAX_VALUE: usize = 1024;
/// `MPI_INFO_ENV`'s handle.
pub(crate) const INFO_ENV: i32 = 1;

type Pairs = Vec<(String, String)>;

/// The info objects of a run. Index = handle; `None` = freed. Slot 0 is
/// `MPI_INFO_NULL`, slot 1 `MPI_INFO_ENV`.
#[derive(Debug)]
pub(crate) struct InfoTable(Vec<Option<Pairs>>);

impl Default for InfoTable {
    fn default() -> Self {
        InfoTable(vec![None, Some(Vec::new())])
    }
}

/// Fills `MPI_INFO_ENV` (called once by the launcher).
pub(crate) fn set_env(pairs: Pairs) {
    crate::mpi::with_world(|w| w.infos.0[INFO_ENV as usize] = Some(pairs));
}

fn writable(h: i32) -> MpiResult<()> {
    if h == INFO_ENV {
        return Err(mpi_err(MPI_ERR_INFO, "MPI_INFO_ENV is read-only"));
    }
    Ok(())
}

fn check_key(key: &str) -> MpiResult<()> {
    if key.is_empty() || key.len() > MAX_KEY {
        return Err(mpi_err(
            MPI_ERR_INFO_KEY,
            format!("info key of {} characters (1..={MAX_KEY} allowed)", key.len()),
        ));
    }
    Ok(())
}

impl InfoTable {
    fn with_pairs<R>(&mut self, h: i32, f: impl FnOnce(&mut Pairs) -> R) -> MpiResult<R> {
        match self.0.get_mut(h.max(0) as usize).and_then(|p| p.as_mut()) {
            Some(p) if h > 0 => Ok(f(p)),
            _ => Err(mpi_err(MPI_ERR_INFO, format!("invalid info handle {h}"))),
        }
    }

    /// MPI_Info_create.
    pub(crate) fn create(&mut self) -> i32 {
        self.add(Vec::new())
    }

    fn add(&mut self, pairs: Pairs) -> i32 {
        self.0.push(Some(pairs));
        (self.0.len() - 1) as i32
    }

    /// MPI_Info_free.
    pub(crate) fn free(&mut self, h: i32) -> MpiResult<()> {
        writable(h)?;
        self.with_pairs(h, |_| ())?;
        self.0[h as usize] = None;
        Ok(())
    }

    /// MPI_Info_dup.
    pub(crate) fn dup(&mut self, h: i32) -> MpiResult<i32> {
        let pairs = self.with_pairs(h, |p| p.clone())?;
        Ok(self.add(pairs))
    }

    /// MPI_Info_set: replaces the value of an existing key (keeping its position).
    pub(crate) fn set(&mut self, h: i32, key: &str, value: &str) -> MpiResult<()> {
        writable(h)?;
        check_key(key)?;
        if value.len() > MAX_VALUE {
            return Err(mpi_err(
                MPI_ERR_INFO_VALUE,
                format!("info value of {} characters (at most {MAX_VALUE})", value.len()),
            ));
        }
        self.with_pairs(h, |p| match p.iter_mut().find(|(k, _)| k == key) {
            Some(slot) => slot.1 = value.to_string(),
            None => p.push((key.to_string(), value.to_string())),
        })
    }

    /// MPI_Info_delete.
    pub(crate) fn delete(&mut self, h: i32, key: &str) -> MpiResult<()> {
        writable(h)?;
        check_key(key)?;
        let found = self.with_pairs(h, |p| {
            let before = p.len();
            p.retain(|(k, _)| k != key);
            p.len() != before
        })?;
        if !found {
            return Err(mpi_err(MPI_ERR_INFO_NOKEY, format!("no info key '{key}'")));
        }
        Ok(())
    }

    /// The value of `key`, if set.
    pub(crate) fn get(&mut self, h: i32, key: &str) -> MpiResult<Option<String>> {
        check_key(key)?;
        self.with_pairs(h, |p| p.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone()))
    }

    /// MPI_Info_get_nkeys.
    pub(crate) fn nkeys(&mut self, h: i32) -> MpiResult<usize> {
        self.with_pairs(h, |p| p.len())
    }

    /// MPI_Info_get_nthkey (keys in the order they were first set).
    pub(crate) fn nth_key(&mut self, h: i32, n: i32) -> MpiResult<String> {
        let key = self.with_pairs(h, |p| {
            usize::try_from(n)
                .ok()
                .and_then(|i| p.get(i))
                .map(|(k, _)| k.clone())
        })?;
        key.ok_or_else(|| mpi_err(MPI_ERR_ARG, format!("info key index {n} out of range")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_replaces_in_place_and_keeps_order() {
        let mut t = InfoTable::default();
        let h = t.create();
        t.set(h, "b", "1").unwrap();
        t.set(h, "a", "2").unwrap();
        t.set(h, "b", "3").unwrap();
        assert_eq!(t.nkeys(h).unwrap(), 2);
        assert_eq!(t.nth_key(h, 0).unwrap(), "b");
        assert_eq!(t.get(h, "b").unwrap().as_deref(), Some("3"));
        let d = t.dup(h).unwrap();
        t.delete(h, "b").unwrap();
        assert_eq!(t.get(h, "b").unwrap(), None);
        assert_eq!(t.get(d, "b").unwrap().as_deref(), Some("3"));
        assert_eq!(t.delete(h, "b").unwrap_err().code, MPI_ERR_INFO_NOKEY);
        t.free(h).unwrap();
        assert_eq!(t.nkeys(h).unwrap_err().code, MPI_ERR_INFO);
    }

    #[test]
    fn limits_and_read_only_env() {
        let mut t = InfoTable::default();
        let h = t.create();
        assert_eq!(t.set(h, "", "x").unwrap_err().code, MPI_ERR_INFO_KEY);
        assert_eq!(
            t.set(h, &"k".repeat(MAX_KEY + 1), "x").unwrap_err().code,
            MPI_ERR_INFO_KEY
        );
        assert_eq!(
            t.set(h, "k", &"v".repeat(MAX_VALUE + 1)).unwrap_err().code,
            MPI_ERR_INFO_VALUE
        );
        assert!(t.set(INFO_ENV, "k", "v").is_err());
        assert!(t.free(INFO_ENV).is_err());
        assert!(t.nkeys(0).is_err());
    }
}
