//! Argument checks and C ↔ Rust conversions shared by the MPI functions.
#![allow(non_snake_case, clippy::missing_safety_doc, clippy::too_many_arguments)]

use std::ffi::{c_char, c_int, c_void};

use crate::mpi::{
    self as rt, entry, mpi_err, with_world, CStatus, MpiError, MpiResult, StatusInfo, MPI_ERR_COUNT,
    MPI_SUCCESS,
};

pub(super) type Aint = isize;

/// A count (`int` or `MPI_Count`) as `usize`; a negative one goes through the
/// communicator's error handler as `MPI_ERR_COUNT`.
pub(super) fn count_ok(me: u32, comm: i32, call: &str, count: impl Into<i64>) -> Result<usize, c_int> {
    let count: i64 = count.into();
    usize::try_from(count).map_err(|_| {
        entry::handle_error(
            me,
            comm,
            call,
            mpi_err(MPI_ERR_COUNT, format!("negative count {count}")),
        )
    })
}

pub(super) unsafe fn set<T>(p: *mut T, v: T) {
    // Safety: the caller upholds this function's contract (see its `# Safety`).
    unsafe {
        if !p.is_null() {
            *p = v;
        }
    }
}

/// The end of a query whose answer is one value: writes `r`'s value to `out`
/// (when not NULL) and returns `MPI_SUCCESS`, or returns `r`'s error class.
pub(super) unsafe fn put<T>(out: *mut T, r: Result<T, c_int>) -> c_int {
    match r {
        Ok(v) => {
            // Safety: `out` is null or valid for a write (the caller's contract).
            unsafe { set(out, v) };
            MPI_SUCCESS
        }
        Err(code) => code,
    }
}

/// The end of a call on communicator `comm` whose answer is one value:
/// writes it to `out` (when not NULL) and returns `MPI_SUCCESS`, or hands the
/// error to the handler of `comm`.
pub(super) unsafe fn answer<T>(me: u32, comm: i32, call: &str, out: *mut T, r: MpiResult<T>) -> c_int {
    match r {
        Ok(v) => {
            // Safety: `out` is null or valid for a write (the caller's contract).
            unsafe { set(out, v) };
            MPI_SUCCESS
        }
        Err(e) => entry::handle_error(me, comm, call, e),
    }
}

/// The end of a call that starts a request: its handle goes to `*req` (when
/// not null), an error to the handler of `comm`.
pub(super) unsafe fn started(me: u32, comm: i32, call: &str, req: *mut c_int, r: MpiResult<u32>) -> c_int {
    // Safety: the caller's contract.
    unsafe { answer(me, comm, call, req, r.map(|id| id as c_int + 1)) }
}

pub(super) unsafe fn write_cstr(dst: *mut c_char, s: &str, len: *mut c_int, max: usize) {
    // Safety: the caller upholds this function's contract (see its `# Safety`).
    unsafe {
        let n = s.len().min(max - 1);
        if !dst.is_null() {
            std::ptr::copy_nonoverlapping(s.as_ptr(), dst as *mut u8, n);
            *dst.add(n) = 0;
        }
        set(len, n as c_int);
    }
}

pub(crate) fn status_result(me: u32, comm: i32, call: &str, s: &StatusInfo, count: usize) -> c_int {
    if s.error == rt::MPI_ERR_TRUNCATE {
        return entry::handle_error(
            me,
            comm,
            call,
            mpi_err(
                rt::MPI_ERR_TRUNCATE,
                format!("message truncated (receive count {count} too small)"),
            ),
        );
    }
    MPI_SUCCESS
}

/// Request handle → internal id (`None` for MPI_REQUEST_NULL or inactive persistent).
pub(super) fn req_id(h: c_int) -> Result<Option<u32>, MpiError> {
    if h == 0 {
        return Ok(None);
    }
    let id = (h - 1) as u32;
    with_world(|w| match w.reqs.get(id as usize).and_then(|r| r.as_ref()) {
        Some(r) if r.persistent && !r.active => Ok(None),
        Some(_) => Ok(Some(id)),
        None => Err(mpi_err(
            rt::MPI_ERR_REQUEST,
            format!("invalid request handle {h}"),
        )),
    })
}

/// Writes the status of a single-request completion (MPI_Wait, MPI_Test,
/// MPI_Mrecv): MPI leaves the `MPI_ERROR` field alone there, only the
/// multiple-completion calls set it.
pub(crate) unsafe fn write_single_status(st: *mut CStatus, s: &StatusInfo) {
    // Safety: the caller upholds this function's contract (see its `# Safety`).
    unsafe {
        if !st.is_null() {
            let error = (*st).error;
            write_status(st, s);
            (*st).error = error;
        }
    }
}

/// A count as `usize`, or `MPI_ERR_COUNT` when negative (`int` or `MPI_Count`).
pub(super) fn nonneg(v: impl Into<i64>) -> MpiResult<usize> {
    let v: i64 = v.into();
    usize::try_from(v).map_err(|_| mpi_err(MPI_ERR_COUNT, format!("negative count {v}")))
}
pub(super) type Count = i64;

pub(super) fn extent(dt: i32) -> MpiResult<isize> {
    with_world(|w| w.dtype(dt).map(|d| d.extent))
}

/// Writes a status unless the pointer is `MPI_STATUS_IGNORE`.
///
/// # Safety
/// `st` is null or points to an `MPI_Status`.
pub(super) unsafe fn write_status(st: *mut CStatus, s: &StatusInfo) {
    // Safety: the caller upholds this function's contract (see its `# Safety`).
    unsafe {
        if !st.is_null() {
            *st = CStatus {
                source: s.source,
                tag: s.tag,
                error: s.error,
                cancelled: s.cancelled as i32,
                count: s.bytes as i64,
            };
        }
    }
}

// ------------------------------------------------------------------ argument checks
//
// One check per kind of argument, so every MPI function reports the same
// mistake with the same class (those MPICH and Open MPI use) and a message
// naming the argument as the standard does (`sendbuf`, `recvcounts`, ...).
// They run before any communication starts: a bad argument must end in an
// error, never in a crash inside the simulator.

/// The C parameter names of one data argument (buffer, count(s),
/// displacements, datatype(s)), for messages.
#[derive(Clone, Copy, Debug)]
pub(super) struct Names {
    pub buf: &'static str,
    pub count: &'static str,
    pub displs: &'static str,
    pub dtype: &'static str,
}

impl Names {
    /// The data argument of `MPI_Pack` (`inbuf`, `incount`) or `MPI_Unpack`
    /// (`outbuf`, `outcount`), of type `datatype`.
    pub(super) const fn pack(buf: &'static str, count: &'static str) -> Self {
        Self::new(buf, count, "displs", "datatype")
    }

    const fn new(buf: &'static str, count: &'static str, displs: &'static str, dtype: &'static str) -> Self {
        Names {
            buf,
            count,
            displs,
            dtype,
        }
    }

    /// The same names but the displacement array's.
    const fn displs(self, displs: &'static str) -> Self {
        Names { displs, ..self }
    }

    /// The same names but the buffer's.
    const fn buf(self, buf: &'static str) -> Self {
        Names { buf, ..self }
    }
}

pub(super) const SEND: Names = Names::new("sendbuf", "sendcount", "sdispls", "sendtype");
pub(super) const RECV: Names = Names::new("recvbuf", "recvcount", "rdispls", "recvtype");
/// The receive side of MPI_Gatherv / MPI_Allgatherv, whose array is `displs`.
pub(super) const RECV_V: Names = RECV.displs("displs");
/// The send side of MPI_Scatterv, whose array is `displs`.
pub(super) const SEND_V: Names = SEND.displs("displs");
/// Reductions: `sendbuf`/`recvbuf` share `count` and `datatype`.
pub(super) const RSEND: Names = Names::new("sendbuf", "count", "displs", "datatype");
pub(super) const RRECV: Names = RSEND.buf("recvbuf");
/// MPI_Bcast's single buffer.
pub(super) const BUFFER: Names = RSEND.buf("buffer");
/// Point-to-point calls' buffer (`buf`, `count`, `datatype`).
pub(super) const P2P_BUF: Names = RSEND.buf("buf");
/// MPI_Reduce_local.
pub(super) const INBUF: Names = RSEND.buf("inbuf");
pub(super) const INOUTBUF: Names = RSEND.buf("inoutbuf");

/// A count argument: negative is `MPI_ERR_COUNT`.
pub(super) fn arg_count(v: impl Into<i64>, name: &str) -> MpiResult<usize> {
    let v: i64 = v.into();
    usize::try_from(v).map_err(|_| mpi_err(MPI_ERR_COUNT, format!("negative {name} {v}")))
}

/// A datatype argument used for data: an unknown or freed handle
/// (`MPI_DATATYPE_NULL` included) or a derived type not committed is
/// `MPI_ERR_TYPE`.
pub(super) fn arg_dtype(dt: i32, name: &str) -> MpiResult<std::rc::Rc<crate::mpi::datatype::Datatype>> {
    let d = with_world(|w| w.dtype(dt))
        .map_err(|_| mpi_err(rt::MPI_ERR_TYPE, format!("invalid {name} (handle {dt})")))?;
    if !d.predefined && !d.committed {
        return Err(mpi_err(
            rt::MPI_ERR_TYPE,
            format!("{name} {} is not committed", d.name),
        ));
    }
    Ok(d)
}

/// A datatype argument given to a constructor (`oldtype`): it need not be
/// committed, but it must exist.
pub(super) fn arg_oldtype(dt: i32, name: &str) -> MpiResult<()> {
    with_world(|w| w.dtype(dt))
        .map(|_| ())
        .map_err(|_| mpi_err(rt::MPI_ERR_TYPE, format!("invalid {name} (handle {dt})")))
}

/// A reduction operation: an unknown or freed handle (`MPI_OP_NULL`
/// included) is `MPI_ERR_OP`.
pub(super) fn arg_op(op: i32) -> MpiResult<()> {
    with_world(|w| w.op(op))
        .map(|_| ())
        .map_err(|_| mpi_err(rt::MPI_ERR_OP, format!("invalid op (handle {op})")))
}

/// A buffer holding `count` elements of `dt`: NULL is `MPI_ERR_BUFFER`
/// unless there is no data (zero count or empty type) or the type can be
/// used from `MPI_BOTTOM` (see [`Datatype::fits_bottom`]).
///
/// [`Datatype::fits_bottom`]: crate::mpi::datatype::Datatype::fits_bottom
pub(super) fn arg_buffer(
    buf: *const c_void,
    count: usize,
    dt: &crate::mpi::datatype::Datatype,
    names: Names,
) -> MpiResult<()> {
    if buf.is_null() && count > 0 && dt.size > 0 && !dt.fits_bottom() {
        return Err(mpi_err(
            rt::MPI_ERR_BUFFER,
            format!(
                "{} is NULL with {} {count} of {}",
                names.buf, names.count, dt.name
            ),
        ));
    }
    Ok(())
}

/// `count` elements of `dt` at `buf`, all three checked.
pub(super) fn arg_data(buf: *const c_void, count: impl Into<i64>, dt: i32, names: Names) -> MpiResult<()> {
    let n = arg_count(count, names.count)?;
    if n == 0 {
        // MPI lets a zero-count argument name any buffer and any type.
        return Ok(());
    }
    let d = arg_dtype(dt, names.dtype)?;
    arg_buffer(buf, n, &d, names)
}

/// A C array of `n` entries the call reads: NULL with `n > 0` is
/// `MPI_ERR_ARG`.
pub(super) fn arg_array<T>(p: *const T, n: usize, name: &str) -> MpiResult<()> {
    if p.is_null() && n > 0 {
        return Err(mpi_err(
            rt::MPI_ERR_ARG,
            format!("{name} is NULL but {n} entries are needed"),
        ));
    }
    Ok(())
}

/// `n` counts (`int` or `MPI_Count`): a NULL array is `MPI_ERR_ARG`, a
/// negative entry `MPI_ERR_COUNT`.
///
/// # Safety
/// `p` is NULL or points to `n` values.
pub(super) unsafe fn arg_counts<T: Copy + Into<i64>>(
    p: *const T,
    n: usize,
    name: &str,
) -> MpiResult<Vec<usize>> {
    // Safety: as this function's contract.
    unsafe { check_counts(p, n, name) }?;
    // Safety: as this function's contract; all entries are non-negative.
    Ok((0..n)
        .map(|i| {
            // Safety: as this function's contract.
            let v: i64 = unsafe { *p.add(i) }.into();
            v as usize
        })
        .collect())
}

/// [`arg_counts`]' checks alone, with nothing allocated.
///
/// # Safety
/// `p` is NULL or points to `n` values.
pub(super) unsafe fn check_counts<T: Copy + Into<i64>>(p: *const T, n: usize, name: &str) -> MpiResult<()> {
    arg_array(p, n, name)?;
    for i in 0..n {
        // Safety: `p` holds `n` values (the caller's contract).
        let v: i64 = unsafe { *p.add(i) }.into();
        if v < 0 {
            return Err(mpi_err(MPI_ERR_COUNT, format!("negative {name}[{i}] = {v}")));
        }
    }
    Ok(())
}

/// A buffer described per peer (the `v` and `w` collectives): `counts[i]`
/// elements of `types[i]` at displacement `displs[i]`. The displacement
/// array is needed only when some data moves; a datatype only where its
/// count is positive (MPI lets zero-count entries name anything).
///
/// # Safety
/// `counts` and `displs` are NULL or hold `n` values; `types` is `Err(dt)`
/// (one type for all) or NULL or holds `n` handles.
pub(super) unsafe fn arg_data_v<C: Copy + Into<i64>, D>(
    buf: *const c_void,
    n: usize,
    counts: *const C,
    displs: *const D,
    types: Result<*const c_int, i32>,
    names: Names,
) -> MpiResult<()> {
    // Safety: the caller's contract.
    let cs = unsafe { arg_counts(counts, n, names.count) }?;
    if cs.iter().all(|&c| c == 0) {
        return Ok(());
    }
    arg_array(displs, n, names.displs)?;
    if let Ok(p) = types {
        arg_array(p, n, names.dtype)?;
    }
    for (i, &c) in cs.iter().enumerate() {
        if c == 0 {
            continue;
        }
        let dt = match types {
            // Safety: `p` holds `n` handles (checked non-NULL above).
            Ok(p) => unsafe { *p.add(i) },
            Err(dt) => dt,
        };
        let d = arg_dtype(dt, names.dtype)?;
        arg_buffer(buf, c, &d, names)?;
    }
    Ok(())
}

/// Where a collective's data argument is significant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum At {
    /// Every process that takes part (intercommunicator: not the
    /// `MPI_PROC_NULL` side of a rooted collective).
    All,
    /// The root only (intercommunicator: the process passing `MPI_ROOT`).
    Root,
    /// The processes that send to or receive from the root (intracommunicator:
    /// every one, the root included; intercommunicator: the remote group).
    Peers,
}

/// Where `MPI_IN_PLACE` may replace a data argument (never on an
/// intercommunicator).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum InPlace {
    No,
    Anywhere,
    AtRoot,
}

/// The communicator and root of a collective, checked, and what a data
/// argument's significance depends on.
#[derive(Clone, Copy, Debug)]
pub(super) struct CollArgs {
    /// My rank in the (local group of the) communicator.
    pub rank: i32,
    /// Size of the local group.
    pub size: i32,
    /// Size of the remote group of an intercommunicator.
    pub remote: Option<i32>,
    root: Option<i32>,
}

impl CollArgs {
    /// Checks `comm` (`MPI_ERR_COMM`) and `root` (`MPI_ERR_ROOT`: a rank of
    /// the communicator; on an intercommunicator `MPI_ROOT`, `MPI_PROC_NULL`
    /// or a rank of the remote group).
    pub(super) fn new(me: u32, comm: i32, root: Option<i32>) -> MpiResult<Self> {
        let (rank, size, remote) = with_world(|w| {
            w.ranks[me as usize].comm(comm).map(|c| {
                (
                    c.my_rank,
                    c.size(),
                    c.shared.remote.as_ref().map(|r| r.len() as i32),
                )
            })
        })
        .map_err(|_| mpi_err(rt::MPI_ERR_COMM, format!("invalid communicator (handle {comm})")))?;
        if let Some(root) = root {
            let ok = match remote {
                None => (0..size).contains(&root),
                Some(rs) => {
                    root == crate::coll::nbc_inter::MPI_ROOT
                        || root == rt::MPI_PROC_NULL
                        || (0..rs).contains(&root)
                }
            };
            if !ok {
                let group = if remote.is_some() {
                    "remote group"
                } else {
                    "communicator"
                };
                return Err(mpi_err(
                    rt::MPI_ERR_ROOT,
                    format!("invalid root {root} ({group} size {})", remote.unwrap_or(size)),
                ));
            }
        }
        Ok(CollArgs {
            rank,
            size,
            remote,
            root,
        })
    }

    /// Entries of a per-process array: one per process of the remote group
    /// on an intercommunicator, of the communicator otherwise.
    pub(super) fn peers(&self) -> usize {
        self.remote.unwrap_or(self.size).max(0) as usize
    }

    fn is_root(&self) -> bool {
        match (self.root, self.remote) {
            (Some(r), None) => r == self.rank,
            (Some(r), Some(_)) => r == crate::coll::nbc_inter::MPI_ROOT,
            (None, _) => false,
        }
    }

    /// Whether an argument significant `at` is significant here.
    pub(super) fn significant(&self, at: At) -> bool {
        match (self.remote, self.root) {
            (None, _) | (Some(_), None) => at != At::Root || self.is_root(),
            (Some(_), Some(root)) => match at {
                At::All => root != rt::MPI_PROC_NULL,
                At::Root => root == crate::coll::nbc_inter::MPI_ROOT,
                At::Peers => root >= 0,
            },
        }
    }

    /// `Ok(true)` when the argument is `MPI_IN_PLACE` where that is allowed
    /// (its count and type are then ignored); `MPI_IN_PLACE` elsewhere is
    /// `MPI_ERR_BUFFER`.
    fn in_place(&self, buf: *const c_void, allowed: InPlace, names: Names) -> MpiResult<bool> {
        if buf as *mut u8 != crate::coll::IN_PLACE {
            return Ok(false);
        }
        let ok = self.remote.is_none()
            && match allowed {
                InPlace::No => false,
                InPlace::Anywhere => true,
                InPlace::AtRoot => self.is_root(),
            };
        if ok {
            Ok(true)
        } else {
            Err(mpi_err(
                rt::MPI_ERR_BUFFER,
                format!("MPI_IN_PLACE is not allowed as {} here", names.buf),
            ))
        }
    }

    /// A data argument of one count and one type ([`arg_data`]), where it is
    /// significant.
    pub(super) fn data(
        &self,
        at: At,
        in_place: InPlace,
        names: Names,
        buf: *const c_void,
        count: impl Into<i64>,
        dt: i32,
    ) -> MpiResult<()> {
        if !self.significant(at) || self.in_place(buf, in_place, names)? {
            return Ok(());
        }
        arg_data(buf, count, dt, names)
    }

    /// A per-peer data argument ([`arg_data_v`], [`Self::peers`] entries),
    /// where it is significant.
    ///
    /// # Safety
    /// As [`arg_data_v`] with `n` = [`Self::peers`].
    pub(super) unsafe fn data_v<C: Copy + Into<i64>, D>(
        &self,
        at: At,
        in_place: InPlace,
        names: Names,
        buf: *const c_void,
        counts: *const C,
        displs: *const D,
        types: Result<*const c_int, i32>,
    ) -> MpiResult<()> {
        if !self.significant(at) || self.in_place(buf, in_place, names)? {
            return Ok(());
        }
        // Safety: the caller's contract.
        unsafe { arg_data_v(buf, self.peers(), counts, displs, types, names) }
    }
}

/// Reports an error of a call that belongs to no communicator (datatype
/// constructors, request completion) through `MPI_COMM_WORLD`'s error
/// handler, as MPI implementations do, and returns its class.
pub(super) fn world_error(call: &str, e: MpiError) -> c_int {
    entry::handle_error(rt::current_rank(), rt::MPI_COMM_WORLD, call, e)
}

/// The block lengths of a datatype constructor.
#[derive(Clone, Copy, Debug)]
pub(super) enum Blocks<C> {
    /// No block length (MPI_Type_contiguous, MPI_Type_create_resized, ...).
    None,
    /// One `blocklength` for all blocks.
    One(i64),
    /// `array_of_blocklengths`, one per block.
    Each(*const C),
}

/// The arguments datatype constructors share: `count` (`MPI_ERR_COUNT`),
/// block lengths (`MPI_ERR_COUNT` if negative, `MPI_ERR_ARG` for a NULL
/// array), displacements (`MPI_ERR_ARG` for a NULL array), old types
/// (`MPI_ERR_TYPE`; one `Err(oldtype)` or `Ok(array_of_types)`) and the
/// `newtype` pointer (`MPI_ERR_ARG`). An error goes through the error
/// handler ([`world_error`]); `Err` holds the class to return.
///
/// # Safety
/// The arrays are NULL or hold `count` values.
pub(super) unsafe fn type_ctor<C: Copy + Into<i64>, D>(
    call: &str,
    count: i64,
    blocks: Blocks<C>,
    displs: Option<*const D>,
    olds: Result<*const c_int, c_int>,
    new: *mut c_int,
) -> Result<(), c_int> {
    let r = (|| -> MpiResult<()> {
        let n = arg_count(count, "count")?;
        match blocks {
            Blocks::None => {}
            Blocks::One(b) => {
                arg_count(b, "blocklength")?;
            }
            // Safety: the array holds `count` values (the caller's contract).
            Blocks::Each(p) => {
                unsafe { check_counts(p, n, "array_of_blocklengths") }?;
            }
        }
        if let Some(d) = displs {
            arg_array(d, n, "array_of_displacements")?;
        }
        match olds {
            Err(dt) => arg_oldtype(dt, "oldtype")?,
            Ok(p) => {
                arg_array(p, n, "array_of_types")?;
                // One borrow of the world for the whole array, no reference taken per entry.
                let invalid = with_world(|w| {
                    // Safety: the array holds `count` handles (checked non-NULL).
                    (0..n)
                        .map(|i| unsafe { *p.add(i) })
                        .find(|&dt| w.dtype_ref(dt).is_none())
                });
                if let Some(dt) = invalid {
                    arg_oldtype(dt, "array_of_types entry")?;
                }
            }
        }
        arg_array(new as *const c_int, 1, "newtype")
    })();
    r.map_err(|e| world_error(call, e))
}

/// The `request` pointer of a call that reads or writes one handle: NULL is
/// `MPI_ERR_ARG`.
pub(super) fn arg_request_ptr(p: *const c_int) -> MpiResult<()> {
    if p.is_null() {
        return Err(mpi_err(rt::MPI_ERR_ARG, "request is NULL"));
    }
    Ok(())
}

/// The requests of a multiple completion or start: a negative `count` is
/// `MPI_ERR_COUNT`, a NULL `array_of_requests` with requests in it
/// `MPI_ERR_ARG` (each handle is checked by [`req_id`]).
pub(super) fn arg_requests(count: c_int, p: *const c_int) -> MpiResult<usize> {
    let n = arg_count(count, "count")?;
    arg_array(p, n, "array_of_requests")?;
    Ok(n)
}

/// A request handle the call must act on (`MPI_Start`): `MPI_REQUEST_NULL`
/// or a handle that names no request is `MPI_ERR_REQUEST`.
pub(super) fn arg_request(h: c_int) -> MpiResult<u32> {
    let exists = h > 0 && with_world(|w| w.reqs.get(h as usize - 1).is_some_and(|r| r.is_some()));
    if exists {
        Ok(h as u32 - 1)
    } else {
        Err(mpi_err(
            rt::MPI_ERR_REQUEST,
            format!("invalid request handle {h}"),
        ))
    }
}
