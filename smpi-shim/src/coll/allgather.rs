//! MPI_Allgather and MPI_Allgatherv. One set of algorithms serves both: they
//! all handle per-rank counts and arbitrary displacements.

use super::bcast::rdb_allgather_image;
use super::select::{self, pick};
use super::{
    boff, dtype_of, gather, is_pof2, local_copy, trees_allgather, CommView, BYTE, IN_PLACE, TAG_ALLGATHER,
};
use crate::mpi::datatype::Datatype;
use crate::mpi::MpiResult;

pub(super) const ALLGATHER: &[&str] = &[
    "GB",
    "ring",
    "rdb",
    "bruck",
    "pair",
    "ompi_neighborexchange",
    "NTSLR",
    "NTSLR_NB",
    "rhv",
    "spreading_simple",
    "2dmesh",
    "3dmesh",
    "smp_simple",
    "SMP_NTS",
    "loosely_lr",
    "mvapich2_smp",
];
pub(super) const ALLGATHERV: &[&str] = &[
    "GB",
    "ring",
    "pair",
    "mpich_ring",
    "mpich_rdb",
    "ompi_bruck",
    "ompi_neighborexchange",
];

/// SMPI default: everyone isends its block to and irecvs from everyone
/// (`regular`: chosen with `smpi/allgather`, else `smpi/allgatherv`).
pub(crate) fn run(
    c: CommView,
    sbuf: *const u8,
    scount: usize,
    stype: i32,
    rbuf: *mut u8,
    rcounts: &[usize],
    displs: &[isize],
    rtype: i32,
    regular: bool,
) -> MpiResult<()> {
    let rdt = dtype_of(rtype)?;
    let n = c.size;
    let total: usize = rcounts.iter().sum::<usize>() * rdt.size;
    let algo = if regular {
        let block = rcounts.first().copied().unwrap_or(0) * rdt.size;
        pick(
            "allgather",
            ALLGATHER,
            select::Facts {
                total,
                ..select::Facts::new(c, block)
            },
            || "default",
            || select::ompi_allgather(n, block),
            || select::mpich_allgather(n, total, false),
        )?
    } else {
        pick(
            "allgatherv",
            ALLGATHERV,
            select::Facts {
                regular: false,
                ..select::Facts::new(c, total)
            },
            || "default",
            || select::ompi_allgatherv(n, total / n as usize),
            || select::mpich_allgather(n, total, true),
        )?
    };
    if algo == "default" {
        return linear_nb(c, sbuf, scount, stype, rbuf, rcounts, displs, rtype);
    }
    let ag = Ag {
        c,
        rbuf,
        rcounts,
        displs,
        rtype,
        rdt: &rdt,
    };
    if !std::ptr::eq(sbuf, IN_PLACE) {
        local_copy(
            sbuf,
            scount,
            stype,
            ag.slot(c.rank),
            rcounts[c.rank as usize],
            rtype,
        )?;
    }
    if n == 1 {
        return Ok(());
    }
    // regular blocks (these names are allgather-only)
    let blocks = trees_allgather::Blocks {
        rbuf,
        count: rcounts[0],
        rtype,
    };
    match algo {
        "GB" => ag.gb(regular),
        "ring" => ag.ring(),
        // SMPI's pair needs a power-of-two size: `ring` otherwise.
        "pair" if is_pof2(n) => ag.pair(),
        "pair" => ag.ring(),
        "rdb" | "mpich_rdb" => ag.rdb(),
        "bruck" | "ompi_bruck" => ag.bruck(),
        // Open MPI's neighbor exchange needs an even size: its fallback is the ring.
        "ompi_neighborexchange" if n % 2 == 0 => ag.neighbor(),
        "rhv" => {
            let same = std::ptr::eq(sbuf, IN_PLACE)
                || scount as isize * dtype_of(stype)?.extent == rcounts[0] as isize * rdt.extent;
            trees_allgather::rhv(c, blocks, same)
        }
        "spreading_simple" => trees_allgather::spreading_simple(c, blocks),
        "2dmesh" => trees_allgather::mesh2(c, blocks),
        "3dmesh" => trees_allgather::mesh3(c, blocks),
        "smp_simple" | "SMP_NTS" | "loosely_lr" | "mvapich2_smp" => super::smp_allgather::run(
            algo,
            c,
            super::smp_allgather::Blocks {
                buf: rbuf,
                count: rcounts[0],
                dtype: rtype,
                dt: &rdt,
            },
        ),
        _ => ag.ring_forward(),
    }
}

/// SMPI's iallgather(v): for each other rank in ascending order, a send then a receive.
pub(crate) fn linear_nb(
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
    let mut reqs = Vec::new();
    for i in (0..c.size).filter(|&i| i != c.rank) {
        reqs.push(c.isend(sbuf, scount, stype, i, TAG_ALLGATHER)?);
        let dst = rbuf.wrapping_offset(displs[i as usize] * rdt.extent);
        reqs.push(c.irecv(dst, rcounts[i as usize], rtype, i, TAG_ALLGATHER)?);
    }
    c.waitall(&reqs);
    Ok(())
}

/// An allgather in progress: my block is already in its slot of `rbuf`.
pub(crate) struct Ag<'a> {
    pub(crate) c: CommView,
    pub(crate) rbuf: *mut u8,
    pub(crate) rcounts: &'a [usize],
    pub(crate) displs: &'a [isize],
    pub(crate) rtype: i32,
    pub(crate) rdt: &'a Datatype,
}

impl Ag<'_> {
    fn slot(&self, i: i32) -> *mut u8 {
        self.rbuf
            .wrapping_offset(self.displs[i as usize] * self.rdt.extent)
    }

    fn count(&self, i: i32) -> usize {
        self.rcounts[i as usize]
    }

    fn n(&self) -> i32 {
        self.c.size
    }

    /// sendrecv of whole slots.
    fn swap(&self, sb: i32, dst: i32, rb: i32, src: i32) -> MpiResult<()> {
        self.c.sendrecv(
            self.slot(sb),
            self.count(sb),
            self.rtype,
            dst,
            self.slot(rb),
            self.count(rb),
            self.rtype,
            src,
            TAG_ALLGATHER,
        )
    }

    /// SMPI's `ring`: at step i, send my block to rank + i and receive rank − i's.
    pub(crate) fn ring(&self) -> MpiResult<()> {
        let (n, r) = (self.n(), self.c.rank);
        for i in 1..n {
            let src = (r - i + n) % n;
            let dst = (r + i) % n;
            self.swap(r, dst, src, src)?;
        }
        Ok(())
    }

    /// SMPI's `pair`: at step i, exchange blocks with rank XOR i (power-of-two sizes).
    fn pair(&self) -> MpiResult<()> {
        let r = self.c.rank;
        for i in 1..self.n() {
            let peer = r ^ i;
            self.swap(r, peer, peer, peer)?;
        }
        Ok(())
    }

    /// MPICH's ring (`mpich_ring`, SMPI's `NTSLR`): at step i, forward to
    /// rank + 1 the block received at step i − 1 (block rank − i) and receive
    /// block rank − i − 1 from rank − 1.
    fn ring_forward(&self) -> MpiResult<()> {
        let (n, r) = (self.n(), self.c.rank);
        let right = (r + 1) % n;
        let left = (r - 1 + n) % n;
        for i in 0..n - 1 {
            self.swap((r - i + n) % n, right, (r - i - 1 + n) % n, left)?;
        }
        Ok(())
    }

    /// `GB`: gather to rank 0 (the configured gather, or the linear gatherv),
    /// then broadcast from 0 (the configured bcast; the blocks go packed).
    fn gb(&self, regular: bool) -> MpiResult<()> {
        let c = self.c;
        let me = c.rank;
        let sb = if me == 0 {
            IN_PLACE as *const u8
        } else {
            self.slot(me) as *const u8
        };
        if regular {
            let k = self.count(0);
            gather::gather(c, sb, k, self.rtype, self.rbuf, k, self.rtype, 0)?;
            return super::bcast(c, self.rbuf, k * self.n() as usize, self.rtype, 0);
        }
        gather::gatherv_linear(
            c,
            sb,
            self.count(me),
            self.rtype,
            self.rbuf,
            self.rcounts,
            self.displs,
            self.rtype,
            0,
        )?;
        let mut p = self.packed();
        if me == 0 {
            self.pack_all(&mut p);
        }
        super::bcast(c, p.data.as_mut_ptr(), p.data.len(), BYTE, 0)?;
        if me != 0 {
            self.unpack_all(&p);
        }
        Ok(())
    }

    /// A byte image of all blocks in rank order (my block filled in).
    fn packed(&self) -> Packed {
        let mut off = Vec::with_capacity(self.n() as usize + 1);
        let mut acc = 0;
        for i in 0..self.n() {
            off.push(acc);
            acc += self.count(i) * self.rdt.size;
        }
        off.push(acc);
        let mut p = Packed {
            data: vec![0u8; acc],
            off,
        };
        let me = self.c.rank as usize;
        let mut v = Vec::new();
        // Safety: my slot holds my block.
        unsafe { self.rdt.pack(self.slot(me as i32), self.count(me as i32), &mut v) };
        p.data[p.off[me]..p.off[me + 1]].copy_from_slice(&v);
        p
    }

    fn pack_all(&self, p: &mut Packed) {
        for i in 0..self.n() {
            let mut v = Vec::new();
            // Safety: the slots hold the blocks.
            unsafe { self.rdt.pack(self.slot(i), self.count(i), &mut v) };
            let i = i as usize;
            p.data[p.off[i]..p.off[i + 1]].copy_from_slice(&v);
        }
    }

    /// Writes every block but mine from the byte image into its slot.
    fn unpack_all(&self, p: &Packed) {
        for i in (0..self.n()).filter(|&i| i != self.c.rank) {
            let u = i as usize;
            // Safety: the slots have room for the blocks.
            unsafe {
                self.rdt
                    .unpack(&p.data[p.off[u]..p.off[u + 1]], self.slot(i), self.count(i))
            };
        }
    }

    /// MPICH's recursive doubling (`rdb`, `mpich_rdb`) on the packed image,
    /// with its tree-forwarding fix-up for non-power-of-two sizes.
    pub(crate) fn rdb(&self) -> MpiResult<()> {
        let c = self.c;
        let n = self.n();
        let mut p = self.packed();
        let total = p.data.len();
        let offs = p.off.clone();
        let off = |i: i32| offs[i.min(n) as usize];
        rdb_allgather_image(c, p.data.as_mut_ptr(), total, c.rank, |v| v, off, TAG_ALLGATHER)?;
        self.unpack_all(&p);
        Ok(())
    }

    /// Bruck's algorithm: blocks kept rotated (position j = rank + j); at
    /// distance 1, 2, 4, ... send the first min(d, n − d) blocks to rank − d
    /// and receive as many from rank + d behind them.
    pub(crate) fn bruck(&self) -> MpiResult<()> {
        let c = self.c;
        let (n, rank) = (self.n(), c.rank);
        let p = self.packed();
        let who = |j: i32| (rank + j) % n;
        // rotated image: position j holds rank (rank + j)'s block
        let mut roff = Vec::with_capacity(n as usize + 1);
        let mut acc = 0;
        for j in 0..n {
            roff.push(acc);
            acc += self.count(who(j)) * self.rdt.size;
        }
        roff.push(acc);
        let mut rot = vec![0u8; acc];
        let me = rank as usize;
        rot[..roff[1]].copy_from_slice(&p.data[p.off[me]..p.off[me + 1]]);
        let base = rot.as_mut_ptr();
        let mut d = 1;
        while d < n {
            let k = d.min(n - d) as usize;
            let d_ = d as usize;
            c.sendrecv(
                base,
                roff[k],
                BYTE,
                (rank - d + n) % n,
                boff(base, roff[d_]),
                roff[d_ + k] - roff[d_],
                BYTE,
                (rank + d) % n,
                TAG_ALLGATHER,
            )?;
            d <<= 1;
        }
        for j in 1..n {
            let r = who(j);
            let j = j as usize;
            // Safety: the slots have room for the blocks.
            unsafe {
                self.rdt
                    .unpack(&rot[roff[j]..roff[j + 1]], self.slot(r), self.count(r))
            };
        }
        Ok(())
    }

    /// Open MPI's neighbor exchange (even sizes): a first exchange of one
    /// block with one neighbour, then n/2 − 1 exchanges of the two blocks
    /// received last, alternating between the two neighbours.
    fn neighbor(&self) -> MpiResult<()> {
        let c = self.c;
        let (n, rank) = (self.n(), c.rank);
        let mut p = self.packed();
        let offs = p.off.clone();
        let base = p.data.as_mut_ptr();
        let off = |i: i32| offs[i as usize];
        let even = rank % 2 == 0;
        let (neighbor, mut recv_from, step) = if even {
            ([(rank + 1) % n, (rank - 1 + n) % n], [rank, rank], [2, -2])
        } else {
            let l = (rank - 1 + n) % n;
            ([l, (rank + 1) % n], [l, l], [-2, 2])
        };
        let nb0 = neighbor[0];
        c.sendrecv(
            boff(base, off(rank)),
            off(rank + 1) - off(rank),
            BYTE,
            nb0,
            boff(base, off(nb0)),
            off(nb0 + 1) - off(nb0),
            BYTE,
            nb0,
            TAG_ALLGATHER,
        )?;
        let mut send_from = if even { rank } else { recv_from[0] };
        for i in 1..n / 2 {
            let par = (i % 2) as usize;
            recv_from[par] = (recv_from[par] + step[par] + n) % n;
            let rf = recv_from[par];
            // blocks b and b + 1 (b even) are adjacent in the image
            let two = |b: i32| (off(b), off(b + 2) - off(b));
            let (so, sl) = two(send_from);
            let (ro, rl) = two(rf);
            c.sendrecv(
                boff(base, so),
                sl,
                BYTE,
                neighbor[par],
                boff(base, ro),
                rl,
                BYTE,
                neighbor[par],
                TAG_ALLGATHER,
            )?;
            send_from = rf;
        }
        self.unpack_all(&p);
        Ok(())
    }
}

struct Packed {
    data: Vec<u8>,
    /// byte offset of each rank's block, plus the total
    off: Vec<usize>,
}
