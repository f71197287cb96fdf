//! SMPI's SMP allreduces (`smp_binomial`, `smp_binomial_pipeline`,
//! `smp_rdb`, `smp_rsag`, `smp_rsag_lr`, `smp_rsag_rab`): a reduction inside
//! each host to its leader, an allreduce between the leaders, a broadcast
//! inside each host. Hosts are blocks of `num_core` consecutive ranks (see
//! `smp.rs`).
//!
//! SMPI combines every received partial result as `received op mine`; we
//! keep rank order (`mine op received` when it comes from higher ranks), so
//! non-commutative operations are right too; the messages are the same.

use super::smp::num_core;
use super::{contribution, local_copy, CommView, Reducer, TempBuf, TAG_ALLREDUCE};
use crate::mpi::MpiResult;

/// Where a rank stands: SMPI's `num_core`, host index and rank in the host,
/// number of hosts, ranks on this host.
#[derive(Clone, Copy)]
struct Place {
    nc: i32,
    host: i32,
    local: i32,
    hosts: i32,
    here: i32,
    base: i32,
}

impl Place {
    fn of(c: CommView) -> MpiResult<Self> {
        let nc = num_core(c)?;
        let (host, local) = (c.rank / nc, c.rank % nc);
        let hosts = (c.size + nc - 1) / nc;
        let base = host * nc;
        let here = if host == hosts - 1 { c.size - base } else { nc };
        Ok(Place {
            nc,
            host,
            local,
            hosts,
            here,
            base,
        })
    }
}

/// Copies the contribution into `rbuf` (SMPI's self-sendrecv).
fn start(sbuf: *const u8, rbuf: *mut u8, count: usize, red: &Reducer) -> MpiResult<()> {
    local_copy(contribution(sbuf, rbuf), count, red.dtype, rbuf, count, red.dtype)
}

/// Binomial reduction to virtual rank 0 among `n` (`v` mine, `real` maps
/// virtual ranks to ranks of `c`; blocking calls, one received buffer at a
/// time, combined into `acc`).
fn binomial_reduce(
    c: CommView,
    acc: *mut u8,
    count: usize,
    red: &Reducer,
    v: i32,
    n: i32,
    real: impl Fn(i32) -> i32,
) -> MpiResult<()> {
    let mut tmp = red.temp(count);
    let mut mask = 1;
    while mask < n {
        if v & mask == 0 {
            let src = v | mask;
            if src < n {
                c.recv(tmp.ptr(), count, red.dtype, real(src), TAG_ALLREDUCE)?;
                red.right(acc, tmp.ptr(), count)?;
            }
        } else {
            c.send(acc, count, red.dtype, real(v & !mask), TAG_ALLREDUCE)?;
            break;
        }
        mask <<= 1;
    }
    Ok(())
}

/// Binomial bcast from virtual rank 0 among `n` (blocking calls).
fn binomial_bcast(
    c: CommView,
    buf: *mut u8,
    count: usize,
    dtype: i32,
    v: i32,
    n: i32,
    real: impl Fn(i32) -> i32,
) -> MpiResult<()> {
    let mut mask = 1;
    while mask < n {
        if v & mask != 0 {
            c.recv(buf, count, dtype, real(v - mask), TAG_ALLREDUCE)?;
            break;
        }
        mask <<= 1;
    }
    mask >>= 1;
    while mask > 0 {
        if v + mask < n {
            c.send(buf, count, dtype, real(v + mask), TAG_ALLREDUCE)?;
        }
        mask >>= 1;
    }
    Ok(())
}

/// SMPI's `smp_binomial`: binomial reduce inside the host, binomial reduce
/// then binomial bcast between the leaders, binomial bcast inside the host.
pub(crate) fn smp_binomial(
    c: CommView,
    sbuf: *const u8,
    rbuf: *mut u8,
    count: usize,
    red: &Reducer,
) -> MpiResult<()> {
    let p = Place::of(c)?;
    start(sbuf, rbuf, count, red)?;
    let (nc, base) = (p.nc, p.base);
    binomial_reduce(c, rbuf, count, red, p.local, p.here, |v| base + v)?;
    if p.local == 0 {
        binomial_reduce(c, rbuf, count, red, p.host, p.hosts, |v| v * nc)?;
        binomial_bcast(c, rbuf, count, red.dtype, p.host, p.hosts, |v| v * nc)?;
    }
    binomial_bcast(c, rbuf, count, red.dtype, p.local, p.here, |v| base + v)
}

/// SMPI's `smp_rdb`: binomial reduce inside the host, recursive doubling
/// between the leaders (the first 2·rem leaders pair up to leave a power of
/// two), binomial bcast inside the host.
pub(crate) fn smp_rdb(
    c: CommView,
    sbuf: *const u8,
    rbuf: *mut u8,
    count: usize,
    red: &Reducer,
) -> MpiResult<()> {
    let p = Place::of(c)?;
    start(sbuf, rbuf, count, red)?;
    let base = p.base;
    binomial_reduce(c, rbuf, count, red, p.local, p.here, |v| base + v)?;
    if p.local == 0 {
        leaders_rdb(c, rbuf, count, red, p)?;
    }
    binomial_bcast(c, rbuf, count, red.dtype, p.local, p.here, |v| base + v)
}

/// Recursive doubling among the leaders (host h is rank h·num_core).
fn leaders_rdb(c: CommView, rbuf: *mut u8, count: usize, red: &Reducer, p: Place) -> MpiResult<()> {
    let (nc, h, m) = (p.nc, p.host, p.hosts);
    let pof2 = super::pof2_floor(m);
    let rem = m - pof2;
    let mut tmp = red.temp(count);
    let newrank = if h < 2 * rem {
        if h % 2 == 0 {
            c.send(rbuf, count, red.dtype, c.rank + nc, TAG_ALLREDUCE)?;
            -1
        } else {
            c.recv(tmp.ptr(), count, red.dtype, c.rank - nc, TAG_ALLREDUCE)?;
            red.left(tmp.ptr(), rbuf, count)?;
            h / 2
        }
    } else {
        h - rem
    };
    if newrank != -1 {
        let mut mask = 1;
        while mask < pof2 {
            let newdst = newrank ^ mask;
            let dst = if newdst < rem {
                newdst * 2 + 1
            } else {
                newdst + rem
            } * nc;
            c.sendrecv(
                rbuf,
                count,
                red.dtype,
                dst,
                tmp.ptr(),
                count,
                red.dtype,
                dst,
                TAG_ALLREDUCE,
            )?;
            red.combine(newdst < newrank, tmp.ptr(), rbuf, count)?;
            mask <<= 1;
        }
    }
    if h < 2 * rem {
        if h % 2 == 1 {
            c.send(rbuf, count, red.dtype, c.rank - nc, TAG_ALLREDUCE)?;
        } else {
            c.recv(rbuf, count, red.dtype, c.rank + nc, TAG_ALLREDUCE)?;
        }
    }
    Ok(())
}

/// SMPI's `smp_binomial_pipeline`: `smp_binomial` on segments of 4096
/// elements in a four-stage pipeline (at phase p: intra reduce of segment p,
/// leaders' reduce of p − 1, leaders' bcast of p − 2, intra bcast of p − 3).
/// SMPI drops the count % 4096 last elements; here they are a last, shorter
/// segment (SMPI's time whenever the count is a multiple of the segment or
/// below one).
pub(crate) fn smp_binomial_pipeline(
    c: CommView,
    sbuf: *const u8,
    rbuf: *mut u8,
    count: usize,
    red: &Reducer,
) -> MpiResult<()> {
    let p = Place::of(c)?;
    start(sbuf, rbuf, count, red)?;
    if count == 0 {
        return Ok(());
    }
    let (nc, base) = (p.nc, p.base);
    let pcount = count.min(4096);
    let nseg = count.div_ceil(pcount);
    let seg = |s: usize| (red.at(rbuf, s * pcount), pcount.min(count - s * pcount));
    for phase in 0..nseg + 3 {
        if phase < nseg {
            let (b, k) = seg(phase);
            binomial_reduce(c, b, k, red, p.local, p.here, |v| base + v)?;
        }
        if p.local == 0 && phase > 0 && phase <= nseg {
            let (b, k) = seg(phase - 1);
            binomial_reduce(c, b, k, red, p.host, p.hosts, |v| v * nc)?;
        }
        if p.local == 0 && phase > 1 && phase < nseg + 2 {
            let (b, k) = seg(phase - 2);
            binomial_bcast(c, b, k, red.dtype, p.host, p.hosts, |v| v * nc)?;
        }
        if phase > 2 {
            let (b, k) = seg(phase - 3);
            binomial_bcast(c, b, k, red.dtype, p.local, p.here, |v| base + v)?;
        }
    }
    Ok(())
}

/// SMPI's `smp_rsag` and `smp_rsag_lr`: binomial reduce inside the host, a
/// ring reduce-scatter then a ring allgather between the leaders (block b
/// of `count / hosts` elements, the last block also holding the remainder),
/// binomial bcast inside the host. `smp_rsag` is the same when the count is
/// a multiple of the number of hosts (SMPI's `smp_rsag` otherwise leaves the
/// remainder unreduced; we reduce it as `smp_rsag_lr` does, whose time we
/// match: SMPI's exact time is out of reach there, as its messages are too
/// short to carry a correct result). With fewer elements than hosts, every
/// message of SMPI's `smp_rsag_lr` carries the whole vector (each block's
/// offset is 0, that of the last block): ours too, the vectors passed along
/// the ring (see [`ring_whole`]). A non-commutative operation runs
/// `smp_binomial` (the ring does not combine in rank order).
pub(crate) fn smp_rsag(
    c: CommView,
    sbuf: *const u8,
    rbuf: *mut u8,
    count: usize,
    red: &Reducer,
    lr: bool,
) -> MpiResult<()> {
    if !red.commutative {
        return smp_binomial(c, sbuf, rbuf, count, red);
    }
    let p = Place::of(c)?;
    start(sbuf, rbuf, count, red)?;
    let (nc, base, h, m) = (p.nc, p.base, p.host, p.hosts);
    binomial_reduce(c, rbuf, count, red, p.local, p.here, |v| base + v)?;
    if p.local == 0 && lr && count < m as usize {
        ring_whole(c, rbuf, count, red, h, m, nc)?;
    } else if p.local == 0 {
        let cs = count / m as usize;
        let rem = count % m as usize;
        let block = |b: i32| {
            let b = (b % m + m) % m;
            let k = if b == m - 1 { cs + rem } else { cs };
            (red.at(rbuf, b as usize * cs), k)
        };
        let to = (h + 1) % m * nc;
        let from = (h - 1 + m) % m * nc;
        let mut tmp = red.temp(cs + rem);
        for i in 0..m - 1 {
            let (sb, sk) = block(h - 1 - i);
            let (rb, rk) = block(h - 2 - i);
            c.sendrecv(
                sb,
                sk,
                red.dtype,
                to,
                tmp.ptr(),
                rk,
                red.dtype,
                from,
                TAG_ALLREDUCE,
            )?;
            red.left(tmp.ptr(), rb, rk)?;
        }
        for i in 0..m - 1 {
            let (sb, sk) = block(h - i);
            let (rb, rk) = block(h - 1 - i);
            c.sendrecv(sb, sk, red.dtype, to, rb, rk, red.dtype, from, TAG_ALLREDUCE)?;
        }
    }
    binomial_bcast(c, rbuf, count, red.dtype, p.local, p.here, |v| base + v)
}

/// The leaders' ring of `smp_rsag_lr` with fewer elements than hosts: the
/// reduce-scatter's m − 1 steps and the allgather's m − 1 steps each move
/// the whole vector to the next leader (SMPI's sizes). Each leader passes on
/// the vector it received (first its own), so after the first m − 1 steps
/// it holds every host's; it combines them in host order (the same result
/// on every leader); the allgather's messages then carry the result.
fn ring_whole(
    c: CommView,
    rbuf: *mut u8,
    count: usize,
    red: &Reducer,
    h: i32,
    m: i32,
    nc: i32,
) -> MpiResult<()> {
    let to = (h + 1) % m * nc;
    let from = (h - 1 + m) % m * nc;
    let mut got: Vec<TempBuf> = (0..m).map(|_| red.temp(count)).collect();
    local_copy(rbuf, count, red.dtype, got[h as usize].ptr(), count, red.dtype)?;
    for i in 0..m - 1 {
        let (sent, arriving) = ((h - i + m) % m, (h - 1 - i + m) % m);
        let sp = got[sent as usize].ptr();
        let rp = got[arriving as usize].ptr();
        c.sendrecv(
            sp,
            count,
            red.dtype,
            to,
            rp,
            count,
            red.dtype,
            from,
            TAG_ALLREDUCE,
        )?;
    }
    local_copy(got[0].ptr(), count, red.dtype, rbuf, count, red.dtype)?;
    for b in got.iter_mut().skip(1) {
        red.right(rbuf, b.ptr(), count)?;
    }
    let mut scratch = red.temp(count);
    for _ in 0..m - 1 {
        c.sendrecv(
            rbuf,
            count,
            red.dtype,
            to,
            scratch.ptr(),
            count,
            red.dtype,
            from,
            TAG_ALLREDUCE,
        )?;
    }
    Ok(())
}

/// SMPI's `smp_rsag_rab`: binomial reduce inside the host, recursive-halving
/// reduce-scatter then recursive-doubling allgather between the leaders,
/// binomial bcast inside the host. SMPI needs a power-of-two size (it
/// throws otherwise) and a count that the number of hosts divides (it
/// leaves the rest unreduced otherwise): we run `smp_binomial` in both
/// cases, and for a non-commutative operation. When count / hosts is odd,
/// SMPI's allgather messages are one element short (wrong data); ours carry
/// the whole block (SMPI's time whenever its result is right).
pub(crate) fn smp_rsag_rab(
    c: CommView,
    sbuf: *const u8,
    rbuf: *mut u8,
    count: usize,
    red: &Reducer,
) -> MpiResult<()> {
    let p = Place::of(c)?;
    let m = c.size / p.nc;
    if !super::is_pof2(c.size) || !count.is_multiple_of(m as usize) || !red.commutative {
        return smp_binomial(c, sbuf, rbuf, count, red);
    }
    start(sbuf, rbuf, count, red)?;
    let (nc, base, h) = (p.nc, p.base, p.host);
    binomial_reduce(c, rbuf, count, red, p.local, p.here, |v| base + v)?;
    if p.local == 0 {
        let mut tmp = red.temp(count / 2);
        let mut mask = 1;
        let mut curr = count / 2;
        let mut at = 0usize; // my segment of the vector
        while mask < m {
            let dst = (h ^ mask) * nc;
            let (send_at, recv_at) = if h & mask != 0 {
                (at, at + curr)
            } else {
                (at + curr, at)
            };
            at = recv_at;
            c.sendrecv(
                red.at(rbuf, send_at),
                curr,
                red.dtype,
                dst,
                tmp.ptr(),
                curr,
                red.dtype,
                dst,
                TAG_ALLREDUCE,
            )?;
            red.left(tmp.ptr(), red.at(rbuf, recv_at), curr)?;
            mask *= 2;
            curr /= 2;
        }
        // my reduced block, in blocks of count / hosts: the bits of my host
        // index reversed (the first split was on the lowest bit)
        let chunk = count / m as usize;
        let mut mine = 0usize;
        let mut half = (m / 2) as usize;
        let mut bit = 1;
        while bit < m {
            if h & bit != 0 {
                mine += half;
            }
            bit <<= 1;
            half /= 2;
        }
        // SMPI doubles its last halved count back, one element short when
        // count / hosts is odd (leaving one unsent); we start from the block
        curr = chunk;
        mask >>= 1;
        let mut i = 1usize;
        while mask >= 1 {
            let dst = (h ^ mask) * nc;
            let theirs = if h & mask != 0 { mine - i } else { mine + i };
            c.sendrecv(
                red.at(rbuf, mine * chunk),
                curr,
                red.dtype,
                dst,
                red.at(rbuf, theirs * chunk),
                curr,
                red.dtype,
                dst,
                TAG_ALLREDUCE,
            )?;
            mine = mine.min(theirs);
            curr *= 2;
            i *= 2;
            mask >>= 1;
        }
    }
    binomial_bcast(c, rbuf, count, red.dtype, p.local, p.here, |v| base + v)
}
