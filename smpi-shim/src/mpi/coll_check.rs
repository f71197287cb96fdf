//! Collective calls must match across the members of a communicator: the
//! same collective, in the same order, with the same root, operation and
//! data signature where MPI requires it. A mismatch is erroneous and in a
//! real MPI ends in a hang or silently wrong data; here the rank that finds it
//! gets an MPI error naming both ranks' calls.
//!
//! Each rank numbers the collectives it calls on each communicator (by
//! context). The first member to make call number k records its signature;
//! every other member compares with it; the record goes once all members
//! have checked. The cost is one hash-map operation per collective call.

use std::collections::HashMap;
use std::ffi::c_void;

use crate::coll::IN_PLACE;
use crate::mpi::datatype::Basic;

use super::{mpi_err, with_world, MpiResult, World, MPI_ERR_OP, MPI_ERR_OTHER, MPI_ERR_ROOT, MPI_ERR_TYPE};

/// What one rank's collective call must agree on with the other members'.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CollSig {
    call: &'static str,
    root: Option<i32>,
    op: Option<i32>,
    /// Elements and datatype, compared as (the one basic type the data is
    /// made of, if any; total bytes).
    data: Option<(Option<Basic>, usize)>,
    /// The datatype's handle, named only in a mismatch's message (no
    /// allocation per collective call).
    dtype: i32,
}

impl CollSig {
    /// The signature of a call of `call`.
    pub(crate) fn new(call: &'static str) -> Self {
        CollSig {
            call,
            root: None,
            op: None,
            data: None,
            dtype: 0,
        }
    }

    /// The root must agree.
    pub(crate) fn root(mut self, root: i32) -> Self {
        self.root = Some(root);
        self
    }

    /// The reduction operation must agree.
    pub(crate) fn op(mut self, op: i32) -> Self {
        self.op = Some(op);
        self
    }

    /// The data (`count` elements of `dtype`) must agree: same bytes, and
    /// basic types that match (see [`data_agree`]).
    pub(crate) fn data(mut self, count: i32, dtype: i32) -> Self {
        let (size, basic) = with_world(|w| w.dtype(dtype).map(|d| (d.size, d.basic)).unwrap_or((0, None)));
        self.dtype = dtype;
        self.data = Some((basic, usize::try_from(count).unwrap_or(0) * size));
        self
    }

    /// What a rank contributes to a gather, allgather or alltoall: its send
    /// arguments, or its receive ones when it sends `MPI_IN_PLACE`.
    pub(crate) fn contributed(
        self,
        sbuf: *const c_void,
        scount: i32,
        stype: i32,
        rcount: i32,
        rtype: i32,
    ) -> Self {
        if sbuf as *mut u8 == IN_PLACE {
            self.data(rcount, rtype)
        } else {
            self.data(scount, stype)
        }
    }

    /// What a rank receives from a scatter: its receive arguments, or the
    /// root's send ones when it receives `MPI_IN_PLACE`.
    pub(crate) fn received(
        self,
        rbuf: *mut c_void,
        rcount: i32,
        rtype: i32,
        scount: i32,
        stype: i32,
    ) -> Self {
        if rbuf as *mut u8 == IN_PLACE {
            self.data(scount, stype)
        } else {
            self.data(rcount, rtype)
        }
    }

    fn describe(&self, w: &World) -> String {
        let mut parts = Vec::new();
        if let Some(r) = self.root {
            parts.push(format!("root {r}"));
        }
        if let Some(o) = self.op {
            match usize::try_from(o).ok().and_then(|o| PREDEFINED_OP_NAMES.get(o)) {
                Some(name) if o > 0 => parts.push((*name).to_string()),
                _ => parts.push(format!("user operation {o}")),
            }
        }
        if let Some((_, bytes)) = self.data {
            let name = match w.dtype(self.dtype) {
                Ok(d) if !d.name.is_empty() => d.name.to_string(),
                Ok(_) => "unnamed type".to_string(),
                Err(_) => format!("datatype {}", self.dtype),
            };
            parts.push(format!("{bytes} B of {name}"));
        }
        format!("{}({})", self.call, parts.join(", "))
    }
}

/// `MPI_NO_OP`, the last predefined operation handle (`MPI_MAX` is 1).
const LAST_PREDEFINED_OP: i32 = 14;

/// The predefined operations by handle (`include/mpi.h`).
const PREDEFINED_OP_NAMES: [&str; 15] = [
    "MPI_OP_NULL",
    "MPI_MAX",
    "MPI_MIN",
    "MPI_SUM",
    "MPI_PROD",
    "MPI_LAND",
    "MPI_BAND",
    "MPI_LOR",
    "MPI_BOR",
    "MPI_LXOR",
    "MPI_BXOR",
    "MPI_MINLOC",
    "MPI_MAXLOC",
    "MPI_REPLACE",
    "MPI_NO_OP",
];

/// Collective calls recorded and not yet checked by every member:
/// (communicator context, call number) → (signature, first rank, members left).
#[derive(Debug, Default)]
pub(crate) struct PendingCollectives {
    calls: HashMap<(u32, u64), (CollSig, u32, usize)>,
    /// Collectives called so far per (world rank, context).
    counts: HashMap<(u32, u32), u64>,
}

/// Checks rank `me`'s collective call `sig` on `comm` against the other
/// members' call of the same number; an error names both calls.
pub(crate) fn check(me: u32, comm: i32, sig: CollSig) -> MpiResult<()> {
    with_world(|w| {
        let c = w.ranks[me as usize].comm(comm)?;
        let (context, members, inter) = (c.shared.context, c.size() as usize, c.shared.remote.is_some());
        let my_rank = c.my_rank;
        let name = if comm == super::MPI_COMM_WORLD {
            "MPI_COMM_WORLD".to_string()
        } else {
            format!("communicator {comm}")
        };
        let members = if inter {
            // Both groups take part; roots are written differently on each side.
            members + c.shared.remote.as_ref().map_or(0, |r| r.len())
        } else {
            members
        };
        let n = {
            let k = w.pending_colls.counts.entry((me, context)).or_insert(0);
            *k += 1;
            *k
        };
        let key = (context, n);
        let entry = w.pending_colls.calls.get(&key).cloned();
        match entry {
            None => {
                if members > 1 {
                    w.pending_colls
                        .calls
                        .insert(key, (sig, my_rank as u32, members - 1));
                }
                Ok(())
            }
            Some((first, first_rank, left)) => {
                if left <= 1 {
                    w.pending_colls.calls.remove(&key);
                } else if let Some(e) = w.pending_colls.calls.get_mut(&key) {
                    e.2 -= 1;
                }
                let class = if first.call != sig.call {
                    Some(MPI_ERR_OTHER)
                } else if inter {
                    None
                } else if first.root != sig.root {
                    Some(MPI_ERR_ROOT)
                } else if !ops_agree(first.op, sig.op) {
                    Some(MPI_ERR_OP)
                } else if !data_agree(first.data, sig.data) {
                    Some(MPI_ERR_TYPE)
                } else {
                    None
                };
                match class {
                    None => Ok(()),
                    Some(code) => Err(mpi_err(
                        code,
                        format!(
                            "collective mismatch on {name} (collective call #{n}): rank {first_rank} called {}, rank {my_rank} calls {}",
                            first.describe(w),
                            sig.describe(w)
                        ),
                    )),
                }
            }
        }
    })
}

/// Whether two ranks' operations agree. User-defined operations are created
/// by each rank and get distinct handles, so only predefined ones compare.
fn ops_agree(a: Option<i32>, b: Option<i32>) -> bool {
    let predefined = |o: i32| (1..=LAST_PREDEFINED_OP).contains(&o);
    match (a, b) {
        (Some(a), Some(b)) if predefined(a) && predefined(b) => a == b,
        _ => true,
    }
}

/// Whether two ranks' data agree: the same bytes, made of basic types that
/// match as in point-to-point (bytes match anything, signed and unsigned
/// integers of one width match; data of mixed basic types is compared by
/// size only).
fn data_agree(a: Option<(Option<Basic>, usize)>, b: Option<(Option<Basic>, usize)>) -> bool {
    match (a, b) {
        (Some((ta, ba)), Some((tb, bb))) => {
            ba == bb
                && match (ta, tb) {
                    (Some(ta), Some(tb)) => ta.compatible_with(tb),
                    _ => true,
                }
        }
        _ => true,
    }
}
