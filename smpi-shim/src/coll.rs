//! Collective operations, built from simulated point-to-point messages on the
//! communicator's collective context, so their timing feels the network.
//!
//! The algorithms and the default choices follow SMPI 3.32's `default`
//! selector (see `notes/smpi-3.32-collectives.md`); `--cfg=smpi/<coll>:<algo>`
//! forces an algorithm.
//!
//! Buffers are the application's raw pointers, exactly as MPI passes them; their
//! validity for the given counts and datatypes is the caller's contract (as in
//! any MPI library), hence the lint allowances below.
#![allow(clippy::not_unsafe_ptr_arg_deref, clippy::too_many_arguments)]

use std::rc::Rc;

use crate::datatype::Datatype;
use crate::op::{self, Op};
use crate::runtime::{self as rt, mpi_err, with_world, MpiResult, P2p, SendMode, StatusInfo};

pub const TAG_BARRIER: i32 = 1;
pub const TAG_BCAST: i32 = 2;
pub const TAG_REDUCE: i32 = 3;
pub const TAG_GATHER: i32 = 4;
pub const TAG_SCATTER: i32 = 5;
pub const TAG_ALLGATHER: i32 = 6;
pub const TAG_ALLTOALL: i32 = 7;
pub const TAG_SCAN: i32 = 8;
pub const TAG_SPLIT: i32 = 9;
pub const TAG_REDUCE_SCATTER: i32 = 10;

/// `MPI_IN_PLACE` as a pointer value.
pub const IN_PLACE: *mut u8 = usize::MAX as *mut u8;

/// A communicator seen from one rank: its handle, my rank, its size.
#[derive(Clone, Copy, Debug)]
pub struct CommView {
    pub me: u32,
    pub comm: i32,
    pub rank: i32,
    pub size: i32,
}

impl CommView {
    pub fn new(me: u32, comm: i32) -> MpiResult<Self> {
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

    pub fn send(&self, buf: *const u8, count: usize, dtype: i32, dst: i32, tag: i32) -> MpiResult<()> {
        rt::send(
            self.me,
            &self.p2p(buf as *mut u8, count, dtype, dst, tag),
            SendMode::Standard,
            "collective send",
        )
    }

    pub fn recv(&self, buf: *mut u8, count: usize, dtype: i32, src: i32, tag: i32) -> MpiResult<StatusInfo> {
        rt::recv(self.me, &self.p2p(buf, count, dtype, src, tag))
    }

    pub fn isend(&self, buf: *const u8, count: usize, dtype: i32, dst: i32, tag: i32) -> MpiResult<u32> {
        rt::isend(
            self.me,
            &self.p2p(buf as *mut u8, count, dtype, dst, tag),
            SendMode::Standard,
            false,
        )
    }

    pub fn irecv(&self, buf: *mut u8, count: usize, dtype: i32, src: i32, tag: i32) -> MpiResult<u32> {
        rt::irecv(self.me, &self.p2p(buf, count, dtype, src, tag))
    }

    pub fn sendrecv(
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
        if dst == self.rank && src == self.rank {
            return local_copy(sbuf, scount, stype, rbuf, rcount, rtype);
        }
        let s = self.p2p(sbuf as *mut u8, scount, stype, dst, tag);
        let r = self.p2p(rbuf, rcount, rtype, src, tag);
        rt::sendrecv(self.me, &s, &r).map(|_| ())
    }

    pub fn waitall(&self, reqs: &[u32]) {
        for &r in reqs {
            rt::wait(self.me, r, "collective wait");
        }
    }
}

/// Copies `scount` elements of `stype` into `rcount` elements of `rtype`.
pub fn local_copy(
    sbuf: *const u8,
    scount: usize,
    stype: i32,
    rbuf: *mut u8,
    rcount: usize,
    rtype: i32,
) -> MpiResult<()> {
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
pub struct TempBuf {
    mem: Vec<u8>,
    shift: isize,
}

impl TempBuf {
    pub fn new(dt: &Datatype, count: usize) -> Self {
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
    pub fn ptr(&mut self) -> *mut u8 {
        self.mem.as_mut_ptr().wrapping_offset(self.shift)
    }
}

/// `inout = in op inout` for `count` elements of `dtype`.
pub fn apply_op(op_h: i32, dtype: i32, inv: *const u8, inout: *mut u8, count: usize) -> MpiResult<()> {
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
        if dt.is_contiguous() {
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

fn dtype_of(h: i32) -> MpiResult<Rc<Datatype>> {
    with_world(|w| w.dtype(h))
}

fn forced(coll: &str) -> Option<String> {
    with_world(|w| w.cfg.coll_forced.get(coll).cloned())
}

fn unknown_algo(coll: &str, algo: &str, known: &[&str]) -> rt::MpiError {
    mpi_err(
        rt::MPI_ERR_ARG,
        format!(
            "unknown algorithm '{algo}' for smpi/{coll} (known: {})",
            known.join(", ")
        ),
    )
}

// ---------------------------------------------------------------- barrier

/// MPI_Barrier.
pub fn barrier(c: CommView) -> MpiResult<()> {
    match forced("barrier").as_deref() {
        None | Some("default") | Some("ompi_basic_linear") => barrier_basic_linear(c),
        Some("ompi_recursivedoubling") => barrier_recursive_doubling(c),
        Some(a) => Err(unknown_algo(
            "barrier",
            a,
            &["ompi_basic_linear", "ompi_recursivedoubling"],
        )),
    }
}

/// Everyone sends an empty message to 0, then 0 answers everyone.
fn barrier_basic_linear(c: CommView) -> MpiResult<()> {
    if c.size == 1 {
        return Ok(());
    }
    let byte = 4;
    if c.rank > 0 {
        c.send(std::ptr::null(), 0, byte, 0, TAG_BARRIER)?;
        c.recv(std::ptr::null_mut(), 0, byte, 0, TAG_BARRIER)?;
    } else {
        let mut reqs = Vec::new();
        for _ in 1..c.size {
            reqs.push(c.irecv(std::ptr::null_mut(), 0, byte, rt::MPI_ANY_SOURCE, TAG_BARRIER)?);
        }
        c.waitall(&reqs);
        reqs.clear();
        for i in 1..c.size {
            reqs.push(c.isend(std::ptr::null(), 0, byte, i, TAG_BARRIER)?);
        }
        c.waitall(&reqs);
    }
    Ok(())
}

fn barrier_recursive_doubling(c: CommView) -> MpiResult<()> {
    let byte = 4;
    let mut mask = 1;
    while mask < c.size {
        let peer = c.rank ^ mask;
        if peer < c.size {
            c.sendrecv(
                std::ptr::null(),
                0,
                byte,
                peer,
                std::ptr::null_mut(),
                0,
                byte,
                peer,
                TAG_BARRIER,
            )?;
        }
        mask <<= 1;
    }
    Ok(())
}

// ---------------------------------------------------------------- bcast

/// MPI_Bcast.
pub fn bcast(c: CommView, buf: *mut u8, count: usize, dtype: i32, root: i32) -> MpiResult<()> {
    check_root(c, root)?;
    match forced("bcast").as_deref() {
        None | Some("default") | Some("binomial_tree") => bcast_binomial(c, buf, count, dtype, root),
        Some("flattree") => bcast_flat(c, buf, count, dtype, root),
        Some(a) => Err(unknown_algo("bcast", a, &["binomial_tree", "flattree"])),
    }
}

fn check_root(c: CommView, root: i32) -> MpiResult<()> {
    if root < 0 || root >= c.size {
        return Err(mpi_err(
            rt::MPI_ERR_ROOT,
            format!("invalid root {root} (communicator size {})", c.size),
        ));
    }
    Ok(())
}

/// Binomial tree rooted at `root`, blocking sends (MPICH's classic algorithm).
pub fn bcast_binomial(c: CommView, buf: *mut u8, count: usize, dtype: i32, root: i32) -> MpiResult<()> {
    let n = c.size;
    let rel = (c.rank - root + n) % n;
    let mut mask = 1;
    while mask < n {
        if rel & mask != 0 {
            let src = (c.rank - mask + n) % n;
            c.recv(buf, count, dtype, src, TAG_BCAST)?;
            break;
        }
        mask <<= 1;
    }
    mask >>= 1;
    while mask > 0 {
        if rel + mask < n {
            let dst = (c.rank + mask) % n;
            c.send(buf, count, dtype, dst, TAG_BCAST)?;
        }
        mask >>= 1;
    }
    Ok(())
}

fn bcast_flat(c: CommView, buf: *mut u8, count: usize, dtype: i32, root: i32) -> MpiResult<()> {
    if c.rank == root {
        let mut reqs = Vec::new();
        for i in 0..c.size {
            if i != root {
                reqs.push(c.isend(buf, count, dtype, i, TAG_BCAST)?);
            }
        }
        c.waitall(&reqs);
    } else {
        c.recv(buf, count, dtype, root, TAG_BCAST)?;
    }
    Ok(())
}

// ---------------------------------------------------------------- reduce

/// MPI_Reduce.
pub fn reduce(
    c: CommView,
    sbuf: *const u8,
    rbuf: *mut u8,
    count: usize,
    dtype: i32,
    op: i32,
    root: i32,
) -> MpiResult<()> {
    check_root(c, root)?;
    let (commutative, dt) =
        with_world(|w| Ok::<_, rt::MpiError>((w.op(op)?.is_commutative(), w.dtype(dtype)?)))?;
    match forced("reduce").as_deref() {
        None | Some("default") => {
            if !commutative || !dt.predefined {
                reduce_linear(c, sbuf, rbuf, count, dtype, op, root)
            } else {
                reduce_linear_nb(c, sbuf, rbuf, count, dtype, op, root)
            }
        }
        Some("ompi_basic_linear") | Some("flat_tree") => reduce_linear(c, sbuf, rbuf, count, dtype, op, root),
        Some("binomial") => reduce_binomial(c, sbuf, rbuf, count, dtype, op, root, commutative),
        Some(a) => Err(unknown_algo(
            "reduce",
            a,
            &["default", "ompi_basic_linear", "binomial", "flat_tree"],
        )),
    }
}

/// Non-blocking linear reduce: every non-root sends to the root; the root
/// posts all receives, waits for them, and reduces in rank order.
fn reduce_linear_nb(
    c: CommView,
    sbuf: *const u8,
    rbuf: *mut u8,
    count: usize,
    dtype: i32,
    op: i32,
    root: i32,
) -> MpiResult<()> {
    let dt = dtype_of(dtype)?;
    let sbuf = if std::ptr::eq(sbuf, IN_PLACE) {
        rbuf as *const u8
    } else {
        sbuf
    };
    if c.rank != root {
        let r = c.isend(sbuf, count, dtype, root, TAG_REDUCE)?;
        c.waitall(&[r]);
        return Ok(());
    }
    let mut temps: Vec<TempBuf> = Vec::new();
    let mut reqs = Vec::new();
    for i in 0..c.size {
        if i == root {
            continue;
        }
        let mut t = TempBuf::new(&dt, count);
        reqs.push(c.irecv(t.ptr(), count, dtype, i, TAG_REDUCE)?);
        temps.push(t);
    }
    c.waitall(&reqs);
    reduce_in_rank_order(c.size, root, sbuf, rbuf, count, dtype, op, &mut temps)
}

/// Combines contributions `(r0 op r1 op ... op r_{n-1})` into `rbuf`, where the
/// root's own data is `sbuf` and the others' are in `temps` (rank order, root skipped).
fn reduce_in_rank_order(
    size: i32,
    root: i32,
    sbuf: *const u8,
    rbuf: *mut u8,
    count: usize,
    dtype: i32,
    op: i32,
    temps: &mut [TempBuf],
) -> MpiResult<()> {
    // SMPI's order: start from the root's own data, then acc = x_src op acc for
    // every other source in ascending rank order.
    let dt = dtype_of(dtype)?;
    let mut acc = TempBuf::new(&dt, count);
    local_copy(sbuf, count, dtype, acc.ptr(), count, dtype)?;
    let mut k = 0;
    for i in 0..size {
        if i == root {
            continue;
        }
        apply_op(op, dtype, temps[k].ptr(), acc.ptr(), count)?;
        k += 1;
    }
    local_copy(acc.ptr(), count, dtype, rbuf, count, dtype)
}

/// Blocking linear reduce (ompi_basic_linear): the root receives from each rank
/// in decreasing rank order and reduces as data arrives.
fn reduce_linear(
    c: CommView,
    sbuf: *const u8,
    rbuf: *mut u8,
    count: usize,
    dtype: i32,
    op: i32,
    root: i32,
) -> MpiResult<()> {
    let sbuf = if std::ptr::eq(sbuf, IN_PLACE) {
        rbuf as *const u8
    } else {
        sbuf
    };
    if c.rank != root {
        return c.send(sbuf, count, dtype, root, TAG_REDUCE);
    }
    let dt = dtype_of(dtype)?;
    let mut acc = TempBuf::new(&dt, count);
    let mut tmp = TempBuf::new(&dt, count);
    let last = c.size - 1;
    if last == root {
        local_copy(sbuf, count, dtype, acc.ptr(), count, dtype)?;
    } else {
        c.recv(acc.ptr(), count, dtype, last, TAG_REDUCE)?;
    }
    for i in (0..last).rev() {
        if i == root {
            apply_op(op, dtype, sbuf, acc.ptr(), count)?;
        } else {
            c.recv(tmp.ptr(), count, dtype, i, TAG_REDUCE)?;
            apply_op(op, dtype, tmp.ptr(), acc.ptr(), count)?;
        }
    }
    local_copy(acc.ptr(), count, dtype, rbuf, count, dtype)
}

fn reduce_binomial(
    c: CommView,
    sbuf: *const u8,
    rbuf: *mut u8,
    count: usize,
    dtype: i32,
    op: i32,
    root: i32,
    commutative: bool,
) -> MpiResult<()> {
    if !commutative {
        return reduce_linear(c, sbuf, rbuf, count, dtype, op, root);
    }
    let sbuf = if std::ptr::eq(sbuf, IN_PLACE) {
        rbuf as *const u8
    } else {
        sbuf
    };
    let dt = dtype_of(dtype)?;
    let mut acc = TempBuf::new(&dt, count);
    let mut tmp = TempBuf::new(&dt, count);
    local_copy(sbuf, count, dtype, acc.ptr(), count, dtype)?;
    let n = c.size;
    let rel = (c.rank - root + n) % n;
    let mut mask = 1;
    while mask < n {
        if rel & mask == 0 {
            let src_rel = rel | mask;
            if src_rel < n {
                let src = (src_rel + root) % n;
                c.recv(tmp.ptr(), count, dtype, src, TAG_REDUCE)?;
                apply_op(op, dtype, tmp.ptr(), acc.ptr(), count)?;
            }
        } else {
            let dst = ((rel & !mask) + root) % n;
            c.send(acc.ptr(), count, dtype, dst, TAG_REDUCE)?;
            break;
        }
        mask <<= 1;
    }
    if c.rank == root {
        local_copy(acc.ptr(), count, dtype, rbuf, count, dtype)?;
    }
    Ok(())
}

// ---------------------------------------------------------------- allreduce

/// MPI_Allreduce.
pub fn allreduce(
    c: CommView,
    sbuf: *const u8,
    rbuf: *mut u8,
    count: usize,
    dtype: i32,
    op: i32,
) -> MpiResult<()> {
    match forced("allreduce").as_deref() {
        None | Some("default") | Some("redbcast") => {
            let sbuf = if std::ptr::eq(sbuf, IN_PLACE) {
                rbuf as *const u8
            } else {
                sbuf
            };
            let dt = dtype_of(dtype)?;
            let mut tmp = TempBuf::new(&dt, count);
            // Reduce into a temporary on rank 0 (rbuf may alias nothing useful elsewhere).
            let target = if c.rank == 0 { rbuf } else { tmp.ptr() };
            reduce(c, sbuf, target, count, dtype, op, 0)?;
            bcast(c, rbuf, count, dtype, 0)
        }
        Some("rdb") => allreduce_rdb(c, sbuf, rbuf, count, dtype, op),
        Some(a) => Err(unknown_algo("allreduce", a, &["default", "redbcast", "rdb"])),
    }
}

/// Recursive doubling (power-of-two part plus fold-in of the extra ranks).
fn allreduce_rdb(
    c: CommView,
    sbuf: *const u8,
    rbuf: *mut u8,
    count: usize,
    dtype: i32,
    op: i32,
) -> MpiResult<()> {
    if !std::ptr::eq(sbuf, IN_PLACE) {
        local_copy(sbuf, count, dtype, rbuf, count, dtype)?;
    }
    let dt = dtype_of(dtype)?;
    let mut tmp = TempBuf::new(&dt, count);
    let n = c.size;
    let mut pof2 = 1;
    while pof2 * 2 <= n {
        pof2 *= 2;
    }
    let rem = n - pof2;
    let newrank;
    if c.rank < 2 * rem {
        if c.rank % 2 == 0 {
            c.send(rbuf, count, dtype, c.rank + 1, TAG_REDUCE)?;
            newrank = -1;
        } else {
            c.recv(tmp.ptr(), count, dtype, c.rank - 1, TAG_REDUCE)?;
            apply_op(op, dtype, tmp.ptr(), rbuf, count)?;
            newrank = c.rank / 2;
        }
    } else {
        newrank = c.rank - rem;
    }
    if newrank != -1 {
        let mut mask = 1;
        while mask < pof2 {
            let newdst = newrank ^ mask;
            let dst = if newdst < rem {
                newdst * 2 + 1
            } else {
                newdst + rem
            };
            c.sendrecv(rbuf, count, dtype, dst, tmp.ptr(), count, dtype, dst, TAG_REDUCE)?;
            if dst < c.rank {
                apply_op(op, dtype, tmp.ptr(), rbuf, count)?;
            } else {
                // keep operand order for non-commutative ops: rbuf = rbuf op tmp
                let mut t2 = TempBuf::new(&dt, count);
                local_copy(rbuf, count, dtype, t2.ptr(), count, dtype)?;
                local_copy(tmp.ptr(), count, dtype, rbuf, count, dtype)?;
                apply_op(op, dtype, t2.ptr(), rbuf, count)?;
            }
            mask <<= 1;
        }
    }
    if c.rank < 2 * rem {
        if c.rank % 2 != 0 {
            c.send(rbuf, count, dtype, c.rank - 1, TAG_REDUCE)?;
        } else {
            c.recv(rbuf, count, dtype, c.rank + 1, TAG_REDUCE)?;
        }
    }
    Ok(())
}

// ---------------------------------------------------------------- gather / allgather

/// MPI_Gatherv (MPI_Gather is the regular case): linear, non-blocking.
pub fn gatherv(
    c: CommView,
    sbuf: *const u8,
    scount: usize,
    stype: i32,
    rbuf: *mut u8,
    rcounts: &[usize],
    displs: &[isize],
    rtype: i32,
    root: i32,
) -> MpiResult<()> {
    check_root(c, root)?;
    if c.rank != root {
        let r = c.isend(sbuf, scount, stype, root, TAG_GATHER)?;
        c.waitall(&[r]);
        return Ok(());
    }
    let rdt = dtype_of(rtype)?;
    let mut reqs = Vec::new();
    for i in 0..c.size {
        let dst = rbuf.wrapping_offset(displs[i as usize] * rdt.extent);
        if i == root {
            if !std::ptr::eq(sbuf, IN_PLACE) {
                local_copy(sbuf, scount, stype, dst, rcounts[i as usize], rtype)?;
            }
        } else {
            reqs.push(c.irecv(dst, rcounts[i as usize], rtype, i, TAG_GATHER)?);
        }
    }
    c.waitall(&reqs);
    Ok(())
}

/// MPI_Scatterv: linear, non-blocking.
pub fn scatterv(
    c: CommView,
    sbuf: *const u8,
    scounts: &[usize],
    displs: &[isize],
    stype: i32,
    rbuf: *mut u8,
    rcount: usize,
    rtype: i32,
    root: i32,
) -> MpiResult<()> {
    check_root(c, root)?;
    if c.rank != root {
        let r = c.irecv(rbuf, rcount, rtype, root, TAG_SCATTER)?;
        c.waitall(&[r]);
        return Ok(());
    }
    let sdt = dtype_of(stype)?;
    let mut reqs = Vec::new();
    for i in 0..c.size {
        let src = sbuf.wrapping_offset(displs[i as usize] * sdt.extent);
        if i == root {
            if rbuf != IN_PLACE {
                local_copy(src, scounts[i as usize], stype, rbuf, rcount, rtype)?;
            }
        } else {
            reqs.push(c.isend(src, scounts[i as usize], stype, i, TAG_SCATTER)?);
        }
    }
    c.waitall(&reqs);
    Ok(())
}

/// MPI_Allgatherv: everyone posts receives from and sends to everyone.
pub fn allgatherv(
    c: CommView,
    sbuf: *const u8,
    scount: usize,
    stype: i32,
    rbuf: *mut u8,
    rcounts: &[usize],
    displs: &[isize],
    rtype: i32,
) -> MpiResult<()> {
    let rdt = dtype_of(rtype)?;
    let mine = rbuf.wrapping_offset(displs[c.rank as usize] * rdt.extent);
    let (sbuf, scount, stype) = if std::ptr::eq(sbuf, IN_PLACE) {
        (mine as *const u8, rcounts[c.rank as usize], rtype)
    } else {
        local_copy(sbuf, scount, stype, mine, rcounts[c.rank as usize], rtype)?;
        (sbuf, scount, stype)
    };
    // SMPI's iallgather: for each other rank in ascending order, a send then a receive.
    let mut reqs = Vec::new();
    for i in (0..c.size).filter(|&i| i != c.rank) {
        reqs.push(c.isend(sbuf, scount, stype, i, TAG_ALLGATHER)?);
        let dst = rbuf.wrapping_offset(displs[i as usize] * rdt.extent);
        reqs.push(c.irecv(dst, rcounts[i as usize], rtype, i, TAG_ALLGATHER)?);
    }
    c.waitall(&reqs);
    Ok(())
}

// ---------------------------------------------------------------- alltoall

/// MPI_Alltoallv / MPI_Alltoall (regular counts).
pub fn alltoallv(
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
    let sdt = dtype_of(stype)?;
    let rdt = dtype_of(rtype)?;
    // MPI_IN_PLACE: send from a copy of the receive buffer.
    let mut copy: Option<TempBuf> = None;
    let (sbuf, scounts, sdispls, stype, sdt) = if std::ptr::eq(sbuf, IN_PLACE) {
        let total: usize = (0..c.size as usize)
            .map(|i| rdispls[i].max(0) as usize + rcounts[i])
            .max()
            .unwrap_or(0);
        let mut t = TempBuf::new(&rdt, total);
        local_copy(rbuf, total, rtype, t.ptr(), total, rtype)?;
        let p = t.ptr() as *const u8;
        copy = Some(t);
        (p, rcounts, rdispls, rtype, rdt.clone())
    } else {
        (sbuf, scounts, sdispls, stype, sdt)
    };
    let sp = |i: i32| sbuf.wrapping_offset(sdispls[i as usize] * sdt.extent);
    let rp = |i: i32| rbuf.wrapping_offset(rdispls[i as usize] * rdt.extent);
    let algo = if regular {
        let block = sdt.size * scounts.first().copied().unwrap_or(0);
        match forced("alltoall").as_deref() {
            None | Some("default") | Some("ompi") => ompi_alltoall_choice(c.size, block),
            Some(a) => a.to_string(),
        }
    } else {
        forced("alltoallv").unwrap_or_else(|| "default".into())
    };
    match algo.as_str() {
        "ring" => {
            for i in 0..c.size {
                let src = (c.rank - i + c.size) % c.size;
                let dst = (c.rank + i) % c.size;
                c.sendrecv(
                    sp(dst),
                    scounts[dst as usize],
                    stype,
                    dst,
                    rp(src),
                    rcounts[src as usize],
                    rtype,
                    src,
                    TAG_ALLTOALL,
                )?;
            }
        }
        "pair" => {
            if c.size & (c.size - 1) != 0 {
                return Err(mpi_err(
                    rt::MPI_ERR_ARG,
                    "alltoall pair algorithm needs a power-of-two number of ranks",
                ));
            }
            for i in 0..c.size {
                let peer = c.rank ^ i;
                c.sendrecv(
                    sp(peer),
                    scounts[peer as usize],
                    stype,
                    peer,
                    rp(peer),
                    rcounts[peer as usize],
                    rtype,
                    peer,
                    TAG_ALLTOALL,
                )?;
            }
        }
        "basic_linear" | "ompi_basic_linear" | "bruck" => {
            // Bruck's timing differs (log2 n exchanges of half the data); it is
            // approximated by the linear exchange until implemented.
            local_copy(
                sp(c.rank),
                scounts[c.rank as usize],
                stype,
                rp(c.rank),
                rcounts[c.rank as usize],
                rtype,
            )?;
            let mut reqs = Vec::new();
            for k in 1..c.size {
                let i = (c.rank + k) % c.size;
                reqs.push(c.irecv(rp(i), rcounts[i as usize], rtype, i, TAG_ALLTOALL)?);
            }
            for k in 1..c.size {
                let i = (c.rank - k + c.size) % c.size;
                reqs.push(c.isend(sp(i), scounts[i as usize], stype, i, TAG_ALLTOALL)?);
            }
            c.waitall(&reqs);
        }
        "default" => {
            // Default alltoallv: receives from everyone (ascending), then sends (ascending).
            local_copy(
                sp(c.rank),
                scounts[c.rank as usize],
                stype,
                rp(c.rank),
                rcounts[c.rank as usize],
                rtype,
            )?;
            let mut reqs = Vec::new();
            for i in (0..c.size).filter(|&i| i != c.rank) {
                reqs.push(c.irecv(rp(i), rcounts[i as usize], rtype, i, TAG_ALLTOALL)?);
            }
            for i in (0..c.size).filter(|&i| i != c.rank) {
                reqs.push(c.isend(sp(i), scounts[i as usize], stype, i, TAG_ALLTOALL)?);
            }
            c.waitall(&reqs);
        }
        a => {
            return Err(unknown_algo(
                "alltoall",
                a,
                &["default", "ring", "pair", "basic_linear", "bruck"],
            ))
        }
    }
    drop(copy);
    Ok(())
}

/// Open MPI 4.1's fixed decision for alltoall (SMPI 3.32's `alltoall__ompi`),
/// from the communicator size and the bytes of one block.
fn ompi_alltoall_choice(n: i32, block: usize) -> String {
    // (upper bound exclusive, algorithm): 1 linear, 2 pairwise, 3 bruck, 4 linear_sync, 5 two_proc.
    let table: &[(usize, u8)] = match n {
        i32::MIN..=1 => &[(usize::MAX, 1)],
        2 => &[
            (2, 2),
            (4, 5),
            (16, 2),
            (64, 5),
            (256, 2),
            (4096, 5),
            (32768, 2),
            (262144, 4),
            (1048576, 5),
            (usize::MAX, 2),
        ],
        3..=7 => &[
            (8192, 4),
            (16384, 1),
            (65536, 4),
            (524288, 1),
            (1048576, 2),
            (usize::MAX, 1),
        ],
        8..=15 => &[(262144, 4), (usize::MAX, 1)],
        16..=31 => &[
            (4, 4),
            (512, 3),
            (8192, 4),
            (32768, 1),
            (262144, 4),
            (524288, 1),
            (usize::MAX, 4),
        ],
        32..=63 => &[(512, 3), (524288, 1), (usize::MAX, 4)],
        64..=127 => &[(1024, 3), (2048, 1), (4096, 4), (262144, 1), (usize::MAX, 2)],
        128..=255 => &[(1024, 3), (2048, 4), (262144, 1), (usize::MAX, 2)],
        256..=511 => &[(1024, 3), (8192, 4), (32768, 1), (usize::MAX, 2)],
        512..=1023 => &[
            (512, 3),
            (8192, 4),
            (16384, 1),
            (131072, 4),
            (262144, 1),
            (usize::MAX, 2),
        ],
        1024..=2047 => &[
            (512, 3),
            (1024, 4),
            (2048, 1),
            (16384, 4),
            (262144, 1),
            (usize::MAX, 4),
        ],
        2048..=4095 => &[(1024, 3), (4096, 4), (8192, 1), (131072, 4), (usize::MAX, 1)],
        _ => &[
            (2048, 3),
            (8192, 4),
            (16384, 1),
            (32768, 4),
            (65536, 1),
            (usize::MAX, 4),
        ],
    };
    let alg = table
        .iter()
        .find(|(bound, _)| block < *bound)
        .map_or(1, |(_, a)| *a);
    match alg {
        2 => "pair",
        3 => "bruck",
        _ => "basic_linear",
    }
    .to_string()
}

// ---------------------------------------------------------------- scan

/// MPI_Scan (inclusive) and MPI_Exscan (exclusive): linear chain.
pub fn scan(
    c: CommView,
    sbuf: *const u8,
    rbuf: *mut u8,
    count: usize,
    dtype: i32,
    op: i32,
    exclusive: bool,
) -> MpiResult<()> {
    let dt = dtype_of(dtype)?;
    let sbuf = if std::ptr::eq(sbuf, IN_PLACE) {
        let mut t = TempBuf::new(&dt, count);
        local_copy(rbuf, count, dtype, t.ptr(), count, dtype)?;
        let p = t.ptr() as *const u8;
        std::mem::forget(t);
        p
    } else {
        sbuf
    };
    let mut acc = TempBuf::new(&dt, count);
    // acc = prefix of ranks 0..rank-1 (received from rank-1).
    if c.rank > 0 {
        c.recv(acc.ptr(), count, dtype, c.rank - 1, TAG_SCAN)?;
    }
    let mut incl = TempBuf::new(&dt, count);
    local_copy(sbuf, count, dtype, incl.ptr(), count, dtype)?;
    if c.rank > 0 {
        // incl = acc op mine, keeping rank order: copy acc then apply mine on the right
        let mut t = TempBuf::new(&dt, count);
        local_copy(acc.ptr(), count, dtype, t.ptr(), count, dtype)?;
        // want result = acc op x: apply_op computes inout = in op inout, so in = acc, inout = x
        apply_op(op, dtype, t.ptr(), incl.ptr(), count)?;
    }
    if c.rank + 1 < c.size {
        c.send(incl.ptr(), count, dtype, c.rank + 1, TAG_SCAN)?;
    }
    if exclusive {
        if c.rank > 0 {
            local_copy(acc.ptr(), count, dtype, rbuf, count, dtype)?;
        }
    } else {
        local_copy(incl.ptr(), count, dtype, rbuf, count, dtype)?;
    }
    Ok(())
}

/// MPI_Reduce_scatter: reduce to rank 0, then scatterv.
pub fn reduce_scatter(
    c: CommView,
    sbuf: *const u8,
    rbuf: *mut u8,
    rcounts: &[usize],
    dtype: i32,
    op: i32,
) -> MpiResult<()> {
    let dt = dtype_of(dtype)?;
    let total: usize = rcounts.iter().sum();
    let mut tmp = TempBuf::new(&dt, total);
    let sbuf = if std::ptr::eq(sbuf, IN_PLACE) {
        rbuf as *const u8
    } else {
        sbuf
    };
    reduce(c, sbuf, tmp.ptr(), total, dtype, op, 0)?;
    let mut displs = Vec::with_capacity(rcounts.len());
    let mut d = 0isize;
    for &n in rcounts {
        displs.push(d);
        d += n as isize;
    }
    let mine = rcounts[c.rank as usize];
    scatterv(c, tmp.ptr(), rcounts, &displs, dtype, rbuf, mine, dtype, 0)
}

/// Exchanges one `i32` pair per rank with everyone (used by Comm_split).
pub fn allgather_i32_pairs(c: CommView, mine: [i32; 2]) -> MpiResult<Vec<[i32; 2]>> {
    let mut all = vec![[0i32; 2]; c.size as usize];
    let counts = vec![2usize; c.size as usize];
    let displs: Vec<isize> = (0..c.size as isize).map(|i| 2 * i).collect();
    allgatherv(
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
