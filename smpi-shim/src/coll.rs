//! Collective operations, built from simulated point-to-point messages on the
//! communicator's collective context, so their timing feels the network.
//!
//! The algorithms and the default choices follow SMPI 3.32's `default`
//! selector (see `notes/smpi-3.32-collectives.md`). Other algorithms are
//! chosen with `--cfg=smpi/<coll>:<algo>` (SMPI's algorithm names) or with a
//! whole selector, `--cfg=smpi/coll-selector:ompi|mpich|mvapich2|impi` (see
//! `coll/select.rs`), or `automatic` (SMPI's benchmark of every algorithm at
//! every call, `coll/automatic.rs`). A per-collective setting wins over the
//! selector; its value may also be `default`, `ompi`, `mpich`, `mvapich2`,
//! `impi` (that selector's decision for this collective) or `automatic`.
//!
//! | collective | algorithms (first = SMPI default) |
//! |---|---|
//! | barrier | `ompi_basic_linear`, `ompi_two_procs`, `ompi_recursivedoubling`, `ompi_bruck`, `ompi_tree`, `ompi_doublering`, `mvapich2_pair`, `mpich_smp` |
//! | bcast | `binomial_tree`, `flattree`, `flattree_pipeline`, `scatter_rdb_allgather`, `scatter_LR_allgather`, `ompi_pipeline`, `ompi_split_bintree`, `NTSL`, `NTSB`, `mvapich2_knomial_intra_node`, `NTSL_Isend`, `arrival_pattern_aware`, `arrival_pattern_aware_wait`, `arrival_scatter`, `SMP_binomial`, `SMP_binary`, `SMP_linear`, `mvapich2_intra_node`, `mvapich2_inter_node` |
//! | reduce | (non-blocking linear), `ompi_basic_linear`, `flat_tree`, `binomial`, `scatter_gather`, `ompi_chain`, `ompi_pipeline`, `ompi_binary`, `ompi_binomial`, `ompi_in_order_binary`, `NTSL`, `mvapich2_knomial`, `rab`, `arrival_pattern_aware`, `mvapich2_two_level` |
//! | allreduce | (reduce + bcast), `redbcast`, `rdb`, `lr`, `rab_rdb`, `ompi_ring_segmented`, `rab1`, `rab2`, `mvapich2_rs`, `rab`, `smp_binomial`, `smp_rdb`, `smp_binomial_pipeline`, `smp_rsag`, `smp_rsag_lr`, `smp_rsag_rab`, `mvapich2_two_level` |
//! | gather | (non-blocking linear), `ompi_basic_linear`, `ompi_binomial`, `ompi_linear_sync`, `mvapich2_two_level` |
//! | scatter | (non-blocking linear), `ompi_basic_linear`, `ompi_binomial`, `ompi_linear_nb`, `mvapich2_two_level_binomial`, `mvapich2_two_level_direct` |
//! | allgather | (non-blocking linear), `GB`, `ring`, `rdb`, `bruck`, `pair`, `ompi_neighborexchange`, `NTSLR`, `NTSLR_NB`, `rhv`, `spreading_simple`, `2dmesh`, `3dmesh`, `smp_simple`, `SMP_NTS`, `loosely_lr`, `mvapich2_smp` |
//! | allgatherv | (non-blocking linear), `GB`, `ring`, `pair`, `mpich_ring`, `mpich_rdb`, `ompi_bruck`, `ompi_neighborexchange` |
//! | alltoall | (ompi decision), `basic_linear`, `pair`, `ring`, `bruck`, `mvapich2_scatter_dest`, `pair_light_barrier`, `pair_mpi_barrier`, `pair_one_barrier`, `ring_light_barrier`, `ring_mpi_barrier`, `ring_one_barrier`, `rdb`, `2dmesh`, `3dmesh`, `pair_rma` |
//! | alltoallv | (non-blocking linear), `ompi_basic_linear`, `pair`, `ring`, `bruck`, `pair_light_barrier`, `pair_mpi_barrier`, `pair_one_barrier`, `ring_light_barrier`, `ring_mpi_barrier`, `ring_one_barrier` |
//! | reduce_scatter | (reduce + scatterv; MPICH's choice for unequal counts), `ompi_basic_recursivehalving`, `ompi_ring`, `mpich_pair`, `mpich_noncomm`, `mpich_rdb`, `ompi_butterfly` |
//!
//! Every algorithm works for any communicator size, any root, `MPI_IN_PLACE`
//! where MPI allows it, non-contiguous datatypes and non-commutative operations
//! (reductions combine in rank order `x0 op x1 op ... op x(n-1)`). Algorithms
//! whose pattern cannot do that fall back to a valid one; each fallback is
//! documented at the algorithm (e.g. `pair` needs a power-of-two size and runs
//! `ring` otherwise; ring-based reductions need a commutative operation).
//!
//! Buffers are the application's raw pointers, exactly as MPI passes them; their
//! validity for the given counts and datatypes is the caller's contract (as in
//! any MPI library), hence the lint allowances below.
#![allow(clippy::not_unsafe_ptr_arg_deref, clippy::too_many_arguments)]

use std::rc::Rc;

use crate::mpi::datatype::Datatype;
use crate::mpi::datatype::{MPI_BYTE, MPI_INT};
use crate::mpi::op::{self, Op};
use crate::mpi::{self as rt, mpi_err, with_world, MpiResult, P2p, SendMode, StatusInfo};
mod allgather;
mod allreduce;
mod alltoall;
mod alltoall_mesh;
mod alltoall_rma;
mod alltoall_sync;
mod automatic;
mod barrier;
mod bcast;
mod gather;
pub(crate) mod inter;
pub(crate) mod nbc;
pub(crate) mod nbc_inter;
pub(crate) mod neighbor;
mod reduce;
mod reduce_scatter;
mod scan;
mod select;
mod select_impi;
mod select_mvapich2;
mod smp;
mod smp_allgather;
mod smp_allreduce;
mod smp_bcast;
mod smp_gather;
mod smp_reduce;
mod tree;

/// The collectives whose algorithm `--cfg=smpi/<collective>` chooses (SMPI 3.32's).
const SELECTABLE: [&str; 11] = [
    "barrier",
    "bcast",
    "reduce",
    "allreduce",
    "gather",
    "scatter",
    "allgather",
    "allgatherv",
    "alltoall",
    "alltoallv",
    "reduce_scatter",
];

/// The algorithm names `--cfg=smpi/<coll>:<name>` takes for collective `coll`
/// (SMPI's names, `automatic` last; besides the selectors' names), for
/// `smpirun --help-cfg`.
pub(crate) fn algorithm_names(coll: &str) -> Option<&'static [&'static str]> {
    static WITH_AUTOMATIC: std::sync::OnceLock<Vec<(&'static str, Vec<&'static str>)>> =
        std::sync::OnceLock::new();
    let all = WITH_AUTOMATIC.get_or_init(|| {
        SELECTABLE
            .iter()
            .filter_map(|&c| {
                let mut names = own_algorithm_names(c)?.to_vec();
                names.push(automatic::NAME);
                Some((c, names))
            })
            .collect()
    });
    all.iter().find(|(c, _)| *c == coll).map(|(_, v)| v.as_slice())
}

/// `smpirun --help-coll`: every collective's algorithms, as `--cfg=smpi/<collective>:<name>`
/// takes them (SMPI 3.32's names), and the selectors.
pub(crate) fn help() -> String {
    let mut out = String::from(
        "Collective algorithms (SMPI 3.32's), chosen with --cfg=smpi/<collective>:<name>, or for every\n\
         collective by a selector: --cfg=smpi/coll-selector:<default|ompi|mpich|mvapich2|impi|automatic>.\n\
         `automatic` runs every algorithm in turn and reports the quickest (as SMPI).\n\n",
    );
    for coll in SELECTABLE {
        let names = algorithm_names(coll).unwrap_or_default();
        out += &format!("smpi/{coll} ({} algorithms):\n", names.len());
        let mut line = String::from(" ");
        for name in names {
            if line.len() + name.len() + 1 > 96 {
                out += &line;
                out.push('\n');
                line = String::from(" ");
            }
            line.push(' ');
            line += name;
        }
        out += &line;
        out.push_str("\n\n");
    }
    out
}

/// The algorithms this library implements for collective `coll`.
fn own_algorithm_names(coll: &str) -> Option<&'static [&'static str]> {
    Some(match coll {
        "barrier" => barrier::KNOWN,
        "bcast" => bcast::KNOWN,
        "reduce" => reduce::KNOWN,
        "allreduce" => allreduce::KNOWN,
        "gather" => gather::GATHER,
        "scatter" => gather::SCATTER,
        "allgather" => allgather::ALLGATHER,
        "allgatherv" => allgather::ALLGATHERV,
        "alltoall" => alltoall::ALLTOALL,
        "alltoallv" => alltoall::ALLTOALLV,
        "reduce_scatter" => reduce_scatter::KNOWN,
        _ => return None,
    })
}
mod trees_allgather;
mod trees_allreduce;
mod trees_bcast;
mod trees_rab;
mod trees_reduce;

pub(crate) const TAG_BARRIER: i32 = 1;
pub(crate) const TAG_BCAST: i32 = 2;
pub(crate) const TAG_REDUCE: i32 = 3;
pub(crate) const TAG_GATHER: i32 = 4;
pub(crate) const TAG_SCATTER: i32 = 5;
pub(crate) const TAG_ALLGATHER: i32 = 6;
pub(crate) const TAG_ALLTOALL: i32 = 7;
pub(crate) const TAG_SCAN: i32 = 8;
pub(crate) const TAG_SPLIT: i32 = 9;
pub(crate) const TAG_REDUCE_SCATTER: i32 = 10;
pub(crate) const TAG_ALLREDUCE: i32 = 11;

/// `MPI_IN_PLACE` as a pointer value.
pub(crate) const IN_PLACE: *mut u8 = usize::MAX as *mut u8;

/// `MPI_BYTE`'s handle (packed data travels as bytes).
pub(crate) const BYTE: i32 = 4;

/// The arguments of an alltoallw: per peer, a count, a displacement in bytes
/// and a type on each side (alltoall and alltoallv map onto it).
pub(crate) struct Alltoallw {
    pub sbuf: *const u8,
    pub scounts: Vec<usize>,
    pub sdispls: Vec<isize>,
    pub stypes: Vec<i32>,
    pub rbuf: *mut u8,
    pub rcounts: Vec<usize>,
    pub rdispls: Vec<isize>,
    pub rtypes: Vec<i32>,
}

/// A communicator seen from one rank: its handle, my rank, its size.
#[derive(Clone, Copy, Debug)]
pub(crate) struct CommView {
    pub me: u32,
    pub comm: i32,
    pub rank: i32,
    pub size: i32,
}

impl CommView {
    pub(crate) fn new(me: u32, comm: i32) -> MpiResult<Self> {
        with_world(|w| {
            let c = w.ranks[me as usize].comm(comm)?;
            Ok(CommView {
                me,
                comm,
                rank: c.my_rank,
                size: c.size(),
            })
        })
    }

    /// `MPI_ERR_ROOT` unless `root` is a rank of the communicator.
    pub(crate) fn check_root(&self, root: i32) -> MpiResult<()> {
        if root < 0 || root >= self.size {
            return Err(mpi_err(
                rt::MPI_ERR_ROOT,
                format!("invalid root {root} (communicator size {})", self.size),
            ));
        }
        Ok(())
    }

    fn p2p(&self, buf: *mut u8, count: usize, dtype: i32, peer: i32, tag: i32) -> P2p {
        P2p {
            buf,
            count,
            dtype,
            peer,
            tag,
            comm: self.comm,
            coll: true,
        }
    }

    pub(crate) fn send(&self, buf: *const u8, count: usize, dtype: i32, dst: i32, tag: i32) -> MpiResult<()> {
        rt::send(
            self.me,
            &self.p2p(buf as *mut u8, count, dtype, dst, tag),
            SendMode::Standard,
            "collective send",
        )
    }

    pub(crate) fn recv(
        &self,
        buf: *mut u8,
        count: usize,
        dtype: i32,
        src: i32,
        tag: i32,
    ) -> MpiResult<StatusInfo> {
        rt::recv(self.me, &self.p2p(buf, count, dtype, src, tag))
    }

    pub(crate) fn isend(
        &self,
        buf: *const u8,
        count: usize,
        dtype: i32,
        dst: i32,
        tag: i32,
    ) -> MpiResult<u32> {
        rt::isend(
            self.me,
            &self.p2p(buf as *mut u8, count, dtype, dst, tag),
            SendMode::Standard,
            true,
        )
    }

    pub(crate) fn irecv(&self, buf: *mut u8, count: usize, dtype: i32, src: i32, tag: i32) -> MpiResult<u32> {
        rt::irecv(self.me, &self.p2p(buf, count, dtype, src, tag))
    }

    pub(crate) fn sendrecv(
        &self,
        sbuf: *const u8,
        scount: usize,
        stype: i32,
        dst: i32,
        rbuf: *mut u8,
        rcount: usize,
        rtype: i32,
        src: i32,
        tag: i32,
    ) -> MpiResult<()> {
        self.sendrecv_status(sbuf, scount, stype, dst, rbuf, rcount, rtype, src, tag)
            .map(|_| ())
    }

    /// [`CommView::sendrecv`] returning the receive's status (its byte count).
    /// A sendrecv with myself on both sides is a local copy (as in SMPI).
    pub(crate) fn sendrecv_status(
        &self,
        sbuf: *const u8,
        scount: usize,
        stype: i32,
        dst: i32,
        rbuf: *mut u8,
        rcount: usize,
        rtype: i32,
        src: i32,
        tag: i32,
    ) -> MpiResult<StatusInfo> {
        if dst == self.rank && src == self.rank {
            local_copy(sbuf, scount, stype, rbuf, rcount, rtype)?;
            let (ssize, rsize) =
                with_world(|w| Ok::<_, rt::MpiError>((w.dtype(stype)?.size, w.dtype(rtype)?.size)))?;
            return Ok(StatusInfo {
                source: src,
                tag,
                bytes: (ssize * scount).min(rsize * rcount),
                ..Default::default()
            });
        }
        let s = self.p2p(sbuf as *mut u8, scount, stype, dst, tag);
        let r = self.p2p(rbuf, rcount, rtype, src, tag);
        let st = rt::sendrecv(self.me, &s, &r)?;
        truncated(&st, rcount)?;
        Ok(st)
    }

    /// Waits for every request, in completion order (SMPI's waitall).
    pub(crate) fn waitall(&self, reqs: &[u32]) {
        rt::wait_all_ids(self.me, reqs);
    }

    /// Waits for one request; fails if a receive was truncated.
    pub(crate) fn wait(&self, req: u32) -> MpiResult<StatusInfo> {
        let st = rt::wait(self.me, req, "collective wait");
        truncated(&st, 0)?;
        Ok(st)
    }

    /// Waits for every request (in completion order); fails if a receive was truncated.
    pub(crate) fn waitall_checked(&self, reqs: &[u32]) -> MpiResult<()> {
        let mut trunc = Ok(());
        for st in rt::wait_all_ids(self.me, reqs).iter().flatten() {
            if trunc.is_ok() {
                trunc = truncated(st, 0);
            }
        }
        trunc
    }
}

fn truncated(st: &StatusInfo, count: usize) -> MpiResult<()> {
    if st.error == rt::MPI_ERR_TRUNCATE {
        return Err(mpi_err(
            rt::MPI_ERR_TRUNCATE,
            format!("collective message truncated (receive of {count} elements too small)"),
        ));
    }
    Ok(())
}

/// Copies `scount` elements of `stype` into `rcount` elements of `rtype`.
pub(crate) fn local_copy(
    sbuf: *const u8,
    scount: usize,
    stype: i32,
    rbuf: *mut u8,
    rcount: usize,
    rtype: i32,
) -> MpiResult<()> {
    if scount == 0 || rcount == 0 {
        return Ok(());
    }
    let (sdt, rdt) = with_world(|w| Ok::<_, rt::MpiError>((w.dtype(stype)?, w.dtype(rtype)?)))?;
    let n = (sdt.size * scount).min(rdt.size * rcount);
    if n == 0 || std::ptr::eq(sbuf, rbuf) {
        return Ok(());
    }
    // Safety: buffers given by the application for these type maps.
    unsafe {
        if sdt.is_contiguous() && rdt.is_contiguous() {
            std::ptr::copy(sbuf, rbuf, n);
        } else {
            let mut v = Vec::with_capacity(sdt.size * scount);
            sdt.pack(sbuf, scount, &mut v);
            v.truncate(n);
            rdt.unpack(&v, rbuf, rcount);
        }
    }
    Ok(())
}

/// A temporary buffer able to hold `count` elements of a datatype.
pub(crate) struct TempBuf {
    mem: Vec<u8>,
    shift: isize,
}

impl TempBuf {
    pub(crate) fn new(dt: &Datatype, count: usize) -> Self {
        let span = if count == 0 {
            0
        } else {
            (count as isize - 1) * dt.extent + (dt.true_ub - dt.true_lb)
        };
        TempBuf {
            mem: vec![0u8; span.max(0) as usize + 16],
            shift: -dt.true_lb,
        }
    }

    /// Pointer to element 0 (may point before the allocation start for negative lb).
    pub(crate) fn ptr(&mut self) -> *mut u8 {
        self.mem.as_mut_ptr().wrapping_offset(self.shift)
    }
}

/// `inout = in op inout` for `count` elements of `dtype`.
pub(crate) fn apply_op(op_h: i32, dtype: i32, inv: *const u8, inout: *mut u8, count: usize) -> MpiResult<()> {
    let (op, dt) = with_world(|w| Ok::<_, rt::MpiError>((w.op(op_h)?, w.dtype(dtype)?)))?;
    apply_op_dt(op, &dt, dtype, inv, inout, count)
}

fn apply_op_dt(
    op: Op,
    dt: &Datatype,
    dtype: i32,
    inv: *const u8,
    inout: *mut u8,
    count: usize,
) -> MpiResult<()> {
    if count == 0 {
        return Ok(());
    }
    if let Op::User { func, .. } = op {
        let mut len = count as i32;
        let mut dh = dtype;
        // Safety: a user op receives the application's own buffers.
        unsafe { func(inv as *mut u8, inout, &mut len, &mut dh) };
        return Ok(());
    }
    let basic = dt.basic.ok_or_else(|| {
        mpi_err(
            rt::MPI_ERR_OP,
            format!("operation not defined for datatype {}", dt.name),
        )
    })?;
    let n = count * dt.basic_count;
    // Safety: buffers hold `count` elements of `dt`.
    unsafe {
        // Predefined types (pair types included, whose data has holes) are
        // reduced in place at their natural stride.
        if dt.is_contiguous() || dt.predefined {
            op::apply(op, basic, inv, inout, n)
        } else {
            let mut a = Vec::new();
            let mut b = Vec::new();
            dt.pack(inv, count, &mut a);
            dt.pack(inout, count, &mut b);
            let r = op::apply(op, basic, a.as_ptr(), b.as_mut_ptr(), n);
            dt.unpack(&b, inout, count);
            r
        }
    }
    .map_err(|_| {
        mpi_err(
            rt::MPI_ERR_OP,
            format!("operation not defined for datatype {}", dt.name),
        )
    })
}

// ---------------------------------------------------------------- shared helpers

fn dtype_of(h: i32) -> MpiResult<Rc<Datatype>> {
    with_world(|w| w.dtype(h))
}

/// Counts and element displacements of `n` consecutive blocks of `count`
/// (what the regular forms of the v-collectives pass).
pub(crate) fn regular_counts(n: i32, count: usize) -> (Vec<usize>, Vec<isize>) {
    let n = n.max(0) as usize;
    (
        vec![count; n],
        (0..n as isize).map(|i| i * count as isize).collect(),
    )
}

/// Where a rank's contribution to a reduction is: its send buffer, or its
/// receive buffer with `MPI_IN_PLACE`.
pub(crate) fn contribution(sbuf: *const u8, rbuf: *mut u8) -> *const u8 {
    if std::ptr::eq(sbuf, IN_PLACE) {
        rbuf as *const u8
    } else {
        sbuf
    }
}

/// Element `i` of a buffer of `dt` elements.
fn elem(p: *const u8, dt: &Datatype, i: usize) -> *mut u8 {
    (p as *mut u8).wrapping_offset(i as isize * dt.extent)
}

/// Largest power of two `<= n` (1 for n <= 1).
fn pof2_floor(n: i32) -> i32 {
    let mut p = 1;
    while p * 2 <= n {
        p *= 2;
    }
    p
}

fn is_pof2(n: i32) -> bool {
    n > 0 && n & (n - 1) == 0
}

/// A reduction's operation and datatype, with helpers that keep the operand
/// order of non-commutative operations.
#[derive(Clone)]
pub(crate) struct Reducer {
    op: Op,
    dt: Rc<Datatype>,
    pub(crate) dtype: i32,
    commutative: bool,
}

impl Reducer {
    pub(crate) fn new(op_h: i32, dtype: i32) -> MpiResult<Self> {
        let (op, dt) = with_world(|w| Ok::<_, rt::MpiError>((w.op(op_h)?, w.dtype(dtype)?)))?;
        Ok(Reducer {
            op,
            commutative: op.is_commutative(),
            dt,
            dtype,
        })
    }

    /// `acc = x op acc` (x comes from lower ranks than acc).
    pub(crate) fn left(&self, x: *const u8, acc: *mut u8, count: usize) -> MpiResult<()> {
        apply_op_dt(self.op, &self.dt, self.dtype, x, acc, count)
    }

    /// `acc = acc op x` (x comes from higher ranks than acc); `x` is clobbered.
    fn right(&self, acc: *mut u8, x: *mut u8, count: usize) -> MpiResult<()> {
        if self.commutative {
            return self.left(x, acc, count);
        }
        apply_op_dt(self.op, &self.dt, self.dtype, acc, x, count)?;
        local_copy(x, count, self.dtype, acc, count, self.dtype)
    }

    /// Combines `x`, the partial result of `peer`'s group, into `acc`, mine.
    fn combine(&self, peer_is_lower: bool, x: *mut u8, acc: *mut u8, count: usize) -> MpiResult<()> {
        if peer_is_lower {
            self.left(x, acc, count)
        } else {
            self.right(acc, x, count)
        }
    }

    pub(crate) fn temp(&self, count: usize) -> TempBuf {
        TempBuf::new(&self.dt, count)
    }

    fn at(&self, p: *const u8, i: usize) -> *mut u8 {
        elem(p, &self.dt, i)
    }

    fn bytes(&self, count: usize) -> usize {
        self.dt.size * count
    }
}

/// Data of `count` elements seen as bytes: the buffer itself when the type is
/// contiguous, else a packed copy (filled from the buffer when `load`), to be
/// written back with [`ByteView::store`].
struct ByteView {
    packed: Option<Vec<u8>>,
    buf: *mut u8,
    dt: Rc<Datatype>,
    count: usize,
}

impl ByteView {
    fn new(buf: *mut u8, count: usize, dt: Rc<Datatype>, load: bool) -> Self {
        let packed = if dt.is_contiguous() {
            None
        } else {
            let mut v = Vec::with_capacity(dt.size * count);
            if load {
                // Safety: the buffer holds `count` elements of `dt`.
                unsafe { dt.pack(buf, count, &mut v) };
            } else {
                v.resize(dt.size * count, 0);
            }
            Some(v)
        };
        ByteView {
            packed,
            buf,
            dt,
            count,
        }
    }

    fn len(&self) -> usize {
        self.dt.size * self.count
    }

    fn ptr(&mut self) -> *mut u8 {
        match &mut self.packed {
            Some(v) => v.as_mut_ptr(),
            None => self.buf,
        }
    }

    fn store(&self) {
        if let Some(v) = &self.packed {
            // Safety: the buffer holds `count` elements of `dt`.
            unsafe { self.dt.unpack(v, self.buf, self.count) };
        }
    }
}

/// `n` bytes starting at byte `off` of a byte buffer.
fn boff(p: *mut u8, off: usize) -> *mut u8 {
    p.wrapping_add(off)
}

// ---------------------------------------------------------------- entry points

// The blocking collectives on an intracommunicator: each module's entry
// point (the rooted ones check the root first).
// `smpi/<coll>:automatic` is dispatched here (see `automatic.rs`).
pub(crate) use gather::{gatherv_linear as gatherv, scatterv_linear as scatterv};
pub(crate) use scan::run as scan;

/// MPI_Barrier on an intracommunicator.
pub(crate) fn barrier(c: CommView) -> MpiResult<()> {
    if automatic::configured("barrier") {
        return automatic::barrier(c);
    }
    barrier::run(c)
}

/// MPI_Bcast on an intracommunicator.
pub(crate) fn bcast(c: CommView, buf: *mut u8, count: usize, dtype: i32, root: i32) -> MpiResult<()> {
    if automatic::configured("bcast") {
        return automatic::bcast(c, buf, count, dtype, root);
    }
    bcast::run(c, buf, count, dtype, root)
}

/// MPI_Reduce on an intracommunicator.
pub(crate) fn reduce(
    c: CommView,
    sbuf: *const u8,
    rbuf: *mut u8,
    count: usize,
    dtype: i32,
    op: i32,
    root: i32,
) -> MpiResult<()> {
    if automatic::configured("reduce") {
        return automatic::reduce(c, sbuf, rbuf, count, dtype, op, root);
    }
    automatic::warn_forced_noncommutative("reduce", op);
    reduce::run(c, sbuf, rbuf, count, dtype, op, root)
}

/// MPI_Allreduce on an intracommunicator.
pub(crate) fn allreduce(
    c: CommView,
    sbuf: *const u8,
    rbuf: *mut u8,
    count: usize,
    dtype: i32,
    op: i32,
) -> MpiResult<()> {
    if automatic::configured("allreduce") {
        return automatic::allreduce(c, sbuf, rbuf, count, dtype, op);
    }
    automatic::warn_forced_noncommutative("allreduce", op);
    allreduce::run(c, sbuf, rbuf, count, dtype, op)
}

/// MPI_Reduce_scatter(_block) on an intracommunicator.
pub(crate) fn reduce_scatter(
    c: CommView,
    sbuf: *const u8,
    rbuf: *mut u8,
    rcounts: &[usize],
    dtype: i32,
    op: i32,
) -> MpiResult<()> {
    if automatic::configured("reduce_scatter") {
        return automatic::reduce_scatter(c, sbuf, rbuf, rcounts, dtype, op);
    }
    automatic::warn_forced_noncommutative("reduce_scatter", op);
    reduce_scatter::run(c, sbuf, rbuf, rcounts, dtype, op)
}

/// MPI_Gather on an intracommunicator.
pub(crate) fn gather(
    c: CommView,
    sbuf: *const u8,
    scount: usize,
    stype: i32,
    rbuf: *mut u8,
    rcount: usize,
    rtype: i32,
    root: i32,
) -> MpiResult<()> {
    if automatic::configured("gather") {
        return automatic::gather(c, sbuf, scount, stype, rbuf, rcount, rtype, root);
    }
    gather::gather(c, sbuf, scount, stype, rbuf, rcount, rtype, root)
}

/// MPI_Scatter on an intracommunicator.
pub(crate) fn scatter(
    c: CommView,
    sbuf: *const u8,
    scount: usize,
    stype: i32,
    rbuf: *mut u8,
    rcount: usize,
    rtype: i32,
    root: i32,
) -> MpiResult<()> {
    if automatic::configured("scatter") {
        return automatic::scatter(c, sbuf, scount, stype, rbuf, rcount, rtype, root);
    }
    gather::scatter(c, sbuf, scount, stype, rbuf, rcount, rtype, root)
}

/// MPI_Alltoall(v) on an intracommunicator (`regular`: MPI_Alltoall, chosen
/// with `smpi/alltoall`; else `smpi/alltoallv`).
pub(crate) fn alltoallv(
    c: CommView,
    sbuf: *const u8,
    scounts: &[usize],
    sdispls: &[isize],
    stype: i32,
    rbuf: *mut u8,
    rcounts: &[usize],
    rdispls: &[isize],
    rtype: i32,
    regular: bool,
) -> MpiResult<()> {
    if automatic::configured(if regular { "alltoall" } else { "alltoallv" }) {
        return automatic::alltoallv(
            c, sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, regular,
        );
    }
    alltoall::run(
        c, sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, regular,
    )
}

/// MPI_Allgatherv: chooses with `smpi/allgatherv`, except that regular counts
/// and displacements (what MPI_Allgather produces) choose with
/// `smpi/allgather` — the same operation, and every rank sees the same
/// arrays, so the choice is consistent.
pub(crate) fn allgatherv(
    c: CommView,
    sbuf: *const u8,
    scount: usize,
    stype: i32,
    rbuf: *mut u8,
    rcounts: &[usize],
    displs: &[isize],
    rtype: i32,
) -> MpiResult<()> {
    let regular = rcounts.iter().all(|&k| k == rcounts[0])
        && displs
            .iter()
            .enumerate()
            .all(|(i, &d)| d == i as isize * rcounts[0] as isize);
    if automatic::configured(if regular { "allgather" } else { "allgatherv" }) {
        return automatic::allgatherv(c, sbuf, scount, stype, rbuf, rcounts, displs, rtype, regular);
    }
    allgather::run(c, sbuf, scount, stype, rbuf, rcounts, displs, rtype, regular)
}

/// The `(color, key)` table of every rank, for MPI_Comm_split, moved the way
/// SMPI 3.32 moves it so that a split costs the same simulated time: a gather
/// of the pairs to rank 0, then, one color group after another (in order of
/// each color's lowest rank), rank 0 sends each member but itself one
/// pointer-sized message (SMPI sends a pointer to the new group) and waits for
/// that group's sends. Here the pointer is to the shared table, from which
/// each member derives its group. `None` for a rank with `MPI_UNDEFINED`
/// color other than rank 0 (it receives nothing).
pub(crate) fn split_tables(c: CommView, color: i32, key: i32) -> MpiResult<Option<Rc<Vec<[i32; 2]>>>> {
    const POINTER_BYTES: usize = std::mem::size_of::<*const u8>();
    let mine = [color, key];
    let mut all = vec![[0i32; 2]; if c.rank == 0 { c.size as usize } else { 0 }];
    gather::gather(
        c,
        mine.as_ptr().cast(),
        2,
        MPI_INT,
        all.as_mut_ptr().cast(),
        2,
        MPI_INT,
        0,
    )?;
    if c.rank != 0 {
        if color == rt::MPI_UNDEFINED {
            return Ok(None);
        }
        let mut ptr_bytes = [0u8; POINTER_BYTES];
        c.recv(ptr_bytes.as_mut_ptr(), POINTER_BYTES, BYTE, 0, TAG_SPLIT)?;
        let raw = usize::from_ne_bytes(ptr_bytes) as *const Vec<[i32; 2]>;
        // SAFETY: rank 0 sent a pointer made by Rc::into_raw, one per receiver.
        return Ok(Some(unsafe { Rc::from_raw(raw) }));
    }
    let table = Rc::new(all);
    let mut done = vec![false; table.len()];
    for first in 0..table.len() {
        let col = table[first][0];
        if done[first] || col == rt::MPI_UNDEFINED {
            continue;
        }
        let mut members: Vec<(i32, usize)> = (first..table.len())
            .filter(|&j| !done[j] && table[j][0] == col)
            .map(|j| (table[j][1], j))
            .collect();
        members.sort();
        let mut reqs = Vec::new();
        // The pointers must outlive their isends: keep each one's bytes here.
        let mut payloads: Vec<[u8; POINTER_BYTES]> = Vec::with_capacity(members.len());
        for &(_, j) in &members {
            done[j] = true;
            if j != 0 {
                let raw = Rc::into_raw(table.clone()) as usize;
                payloads.push(raw.to_ne_bytes());
            }
        }
        let targets = members.iter().filter(|&&(_, j)| j != 0);
        for (payload, &(_, j)) in payloads.iter().zip(targets) {
            reqs.push(c.isend(payload.as_ptr(), POINTER_BYTES, BYTE, j as i32, TAG_SPLIT)?);
        }
        c.waitall_checked(&reqs)?;
    }
    Ok(Some(table))
}

/// Exchanges one `i32` pair per rank with everyone (used by Comm_split).
/// Always the default pattern, whatever `smpi/allgather(v)` says.
pub(crate) fn allgather_i32_pairs(c: CommView, mine: [i32; 2]) -> MpiResult<Vec<[i32; 2]>> {
    let mut all = vec![[0i32; 2]; c.size as usize];
    let counts = vec![2usize; c.size as usize];
    let displs: Vec<isize> = (0..c.size as isize).map(|i| 2 * i).collect();
    allgather::linear_nb(
        c,
        mine.as_ptr().cast(),
        2,
        7,
        all.as_mut_ptr().cast(),
        &counts,
        &displs,
        7,
    )?;
    Ok(all)
}

/// 8 bytes from every rank of `view` (`mine`) to all of them (`all`, in rank
/// order), as SMPI's window and file constructors exchange their pointers:
/// an allgatherv of 8-byte blocks.
pub(crate) fn allgather8(view: CommView, mine: &[u8; 8], all: &mut [u8]) -> MpiResult<()> {
    let n = view.size as usize;
    let counts = vec![8usize; n];
    let displs: Vec<isize> = (0..n as isize).map(|i| 8 * i).collect();
    allgatherv(
        view,
        mine.as_ptr(),
        8,
        MPI_BYTE,
        all.as_mut_ptr(),
        &counts,
        &displs,
        MPI_BYTE,
    )
}
