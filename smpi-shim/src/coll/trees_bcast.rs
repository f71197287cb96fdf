//! SMPI's arrival-pattern-aware broadcasts (Faraj and Yuan): rank 0 polls
//! with probes for the ranks that have arrived (each announces itself with a
//! 1-byte message) and serves them in arrival order, forming a chain.
//!
//! Their time depends on the polling cost: each probe costs what an
//! `MPI_Iprobe` costs (`smpi/iprobe`, `smpi/iprobe-cpu-usage`, with the
//! shared growing multiplier of `smpi/grow-injected-times`), and SMPI's
//! `bcast__arrival_pattern_aware` reads the clock once per polling round
//! (`smpi/wtime`).
//!
//! Their messages travel on the collective context under a tag of their own
//! (SMPI sends them on the user's context with tag 3334), so that an
//! announcement SMPI leaves unreceived never matches another collective's
//! message.

use super::{bcast, dtype_of, elem, CommView, BYTE};
use crate::mpi::datatype::MPI_INT;
use crate::mpi::{self as rt, with_world, MpiResult};

/// The tag of the arrival-pattern-aware algorithms' messages.
pub(crate) const TAG_ARRIVAL: i32 = 3334;

/// Ints in a header (the chain of ranks to serve, ended by −1), except in
/// `arrival_scatter`.
pub(crate) const HEADER: usize = 1024;

/// Ints in `arrival_scatter`'s header.
const SCATTER_HEADER: usize = 128;

/// An `MPI_Iprobe` for a message from `src` with `tag` on the collective
/// context, with the polling cost of a user's probe.
pub(crate) fn probe(c: CommView, src: i32, tag: i32) -> MpiResult<bool> {
    let me = c.me;
    let (context, flops) = with_world(|w| -> MpiResult<(u32, f64)> {
        let context = w.ranks[me as usize].comm(c.comm)?.shared.context + 1;
        let speed = w.platform.host(w.hosts[me as usize]).speed;
        let n = rt::poll_counter(w, me, rt::Poll::Iprobe) as f64;
        let usage = w.cfg.iprobe_cpu_usage;
        Ok((context, n * w.cfg.iprobe * speed * usage))
    })?;
    if flops > 0.0 {
        let ctx = with_world(|w| w.ranks[me as usize].ctx());
        ctx.execute(flops);
    }
    let found = with_world(|w| rt::probe_match(w, me, context, src, tag).is_some());
    rt::simcall_yield(me);
    with_world(|w| rt::poll_result(w, me, rt::Poll::Iprobe, found));
    Ok(found)
}

/// A header of `len` ints (more if the chain needs them: SMPI's arrays
/// overflow then): `chain` then −1.
pub(crate) fn header(chain: &[i32], len: usize) -> Vec<i32> {
    let mut h = vec![0i32; len.max(chain.len() + 1)];
    h[..chain.len()].copy_from_slice(chain);
    h[chain.len()] = -1;
    h
}

/// The rank after me in a received header's chain, if any.
pub(crate) fn next_in(h: &[i32], me: i32) -> Option<i32> {
    let at = h.iter().position(|&r| r == me)?;
    (h[at + 1] != -1).then_some(h[at + 1])
}

/// The segment size (elements) and count of SMPI's pipelined variants:
/// 8192 / extent elements (at least 1), count / segment of them.
fn segments(extent: isize, count: usize) -> (usize, usize) {
    let seg = if extent > 0 {
        (8192 / extent).max(1) as usize
    } else {
        1
    };
    (seg, count / seg)
}

/// If the root is not rank 0, it first sends the whole buffer to rank 0.
fn to_rank0(c: CommView, buf: *mut u8, count: usize, dtype: i32, root: i32) -> MpiResult<()> {
    if root != 0 {
        if c.rank == root {
            c.send(buf, count, dtype, 0, TAG_ARRIVAL)?;
        } else if c.rank == 0 {
            c.recv(buf, count, dtype, root, TAG_ARRIVAL)?;
        }
    }
    Ok(())
}

/// SMPI's `arrival_pattern_aware`. Rank 0 (after the root hands it the data)
/// repeats until every rank is served: probe every other rank in turn, read
/// the clock, receive the announcements found from ranks not yet served,
/// then send the chain of those ranks (a 4 KiB header) and the data to the
/// first of them; when none has arrived, serve the lowest rank not yet
/// served alone (its announcement is received at the very end if the
/// message was pipelined, and never otherwise). Every other rank sends its
/// announcement, receives the header and the data from anyone, and forwards
/// both to the next rank of its chain. Messages of more than one 8 KiB
/// segment go in segments (blocking sends from rank 0, received all at once
/// and forwarded one by one by the others); the count % segment last
/// elements then go through the configured bcast.
pub(crate) fn arrival_pattern_aware(
    c: CommView,
    buf: *mut u8,
    count: usize,
    dtype: i32,
    root: i32,
) -> MpiResult<()> {
    let dt = dtype_of(dtype)?;
    let (n, rank) = (c.size, c.rank);
    let (seg, pipe) = segments(dt.extent, count);
    to_rank0(c, buf, count, dtype, root)?;
    let at = |i: usize| elem(buf, &dt, i * seg);
    let pipelined = count > seg;
    // rank 0 sends the data to `to`: whole, or in blocking segment sends
    let send_data = |to: i32| -> MpiResult<()> {
        if pipelined {
            for i in 0..pipe {
                c.send(at(i), seg, dtype, to, TAG_ARRIVAL)?;
            }
            Ok(())
        } else {
            c.send(buf, count, dtype, to, TAG_ARRIVAL)
        }
    };
    let mut one = [0u8; 1];
    if rank == 0 {
        let mut served = vec![false; n as usize];
        let mut unheard = vec![false; n as usize];
        let mut left = n - 1;
        while left > 0 {
            let mut arrived = vec![false; n as usize];
            for i in 1..n {
                arrived[i as usize] = probe(c, i, TAG_ARRIVAL)?;
            }
            if pipelined {
                rt::read_clock(c.me);
            }
            let mut chain = Vec::new();
            for i in 1..n {
                if arrived[i as usize] && !served[i as usize] {
                    c.recv(one.as_mut_ptr(), 1, BYTE, i, TAG_ARRIVAL)?;
                    chain.push(i);
                    served[i as usize] = true;
                    left -= 1;
                }
            }
            if chain.is_empty() {
                let Some(i) = (1..n).find(|&i| !served[i as usize]) else {
                    break;
                };
                chain.push(i);
                served[i as usize] = true;
                unheard[i as usize] = true;
                left -= 1;
            }
            let h = header(&chain, HEADER);
            c.send(h.as_ptr().cast(), h.len(), MPI_INT, chain[0], TAG_ARRIVAL)?;
            send_data(chain[0])?;
        }
        if pipelined {
            for i in (0..n).filter(|&i| unheard[i as usize]) {
                c.recv(one.as_mut_ptr(), 1, BYTE, i, TAG_ARRIVAL)?;
            }
        }
    } else {
        c.send(one.as_ptr(), 1, BYTE, 0, TAG_ARRIVAL)?;
        let mut h = vec![0i32; HEADER.max(n as usize)];
        c.recv(
            h.as_mut_ptr().cast(),
            h.len(),
            MPI_INT,
            rt::MPI_ANY_SOURCE,
            TAG_ARRIVAL,
        )?;
        let next = next_in(&h, rank);
        if !pipelined {
            c.recv(buf, count, dtype, rt::MPI_ANY_SOURCE, TAG_ARRIVAL)?;
            if let Some(to) = next {
                c.send(h.as_ptr().cast(), h.len(), MPI_INT, to, TAG_ARRIVAL)?;
                c.send(buf, count, dtype, to, TAG_ARRIVAL)?;
            }
            return Ok(());
        }
        if let Some(to) = next {
            c.send(h.as_ptr().cast(), h.len(), MPI_INT, to, TAG_ARRIVAL)?;
        }
        relay(c, &at, pipe, seg, dtype, rt::MPI_ANY_SOURCE, next)?;
    }
    if pipelined && pipe * seg < count {
        bcast::run(c, at(pipe), count - pipe * seg, dtype, root)?;
    }
    Ok(())
}

/// SMPI's `arrival_pattern_aware_wait`. Rank 0 (after the root hands it the
/// data) repeats until every rank is served: three times, probe in turn each
/// rank neither served nor announced, receiving an announcement as soon as it
/// is found and starting over from rank 1; then, if some ranks have
/// announced themselves, send them their chain (a 4 KiB header) and isend
/// the data to the first (waiting for the sends). Every other rank sends its
/// announcement, receives the header from anyone, forwards it, posts the
/// receives of the data from the rank before it in the chain and forwards
/// each segment as it arrives. The data goes in 8 KiB segments (one segment
/// when it fits); the count % segment last elements then go through the
/// configured bcast.
pub(crate) fn arrival_pattern_aware_wait(
    c: CommView,
    buf: *mut u8,
    count: usize,
    dtype: i32,
    root: i32,
) -> MpiResult<()> {
    let dt = dtype_of(dtype)?;
    let (n, rank) = (c.size, c.rank);
    let (mut seg, mut pipe) = segments(dt.extent, count);
    let pipelined = count > seg;
    if !pipelined {
        (seg, pipe) = (count, 1);
    }
    to_rank0(c, buf, count, dtype, root)?;
    let at = |i: usize| elem(buf, &dt, i * seg);
    let mut one = [0u8; 1];
    if rank == 0 {
        let mut served = vec![false; n as usize];
        let mut announced = vec![false; n as usize];
        let mut left = n - 1;
        while left > 0 {
            for _ in 0..3 {
                let mut i = 1;
                while i < n {
                    let u = i as usize;
                    i += 1;
                    if !served[u] && !announced[u] && probe(c, u as i32, TAG_ARRIVAL)? {
                        announced[u] = true;
                        c.recv(one.as_mut_ptr(), 1, BYTE, u as i32, TAG_ARRIVAL)?;
                        i = 1;
                    }
                }
            }
            let chain: Vec<i32> = (1..n)
                .filter(|&i| announced[i as usize] && !served[i as usize])
                .collect();
            let Some(&to) = chain.first() else {
                continue;
            };
            for &i in &chain {
                served[i as usize] = true;
            }
            left -= chain.len() as i32;
            let h = header(&chain, HEADER);
            c.send(h.as_ptr().cast(), h.len(), MPI_INT, to, TAG_ARRIVAL)?;
            let mut sends = Vec::with_capacity(pipe);
            for i in 0..pipe {
                sends.push(c.isend(at(i), seg, dtype, to, TAG_ARRIVAL)?);
            }
            c.waitall(&sends);
        }
    } else {
        c.send(one.as_ptr(), 1, BYTE, 0, TAG_ARRIVAL)?;
        let mut h = vec![0i32; HEADER.max(n as usize)];
        c.recv(
            h.as_mut_ptr().cast(),
            h.len(),
            MPI_INT,
            rt::MPI_ANY_SOURCE,
            TAG_ARRIVAL,
        )?;
        let mine = h.iter().position(|&r| r == rank).unwrap_or(0);
        let from = if mine == 0 { 0 } else { h[mine - 1] };
        let next = next_in(&h, rank);
        if let Some(to) = next {
            c.send(h.as_ptr().cast(), h.len(), MPI_INT, to, TAG_ARRIVAL)?;
        }
        relay(c, &at, pipe, seg, dtype, from, next)?;
    }
    if pipelined && pipe * seg < count {
        bcast::run(c, at(pipe), count - pipe * seg, dtype, root)?;
    }
    Ok(())
}

/// A chain member's part of the arrival-pattern bcasts: post the receives of
/// the `pipe` segments (of `seg` elements, at `at(i)`) from `from`, and pass
/// each one on to `next` as it arrives (isends, waited for at the end).
fn relay(
    c: CommView,
    at: &dyn Fn(usize) -> *mut u8,
    pipe: usize,
    seg: usize,
    dtype: i32,
    from: i32,
    next: Option<i32>,
) -> MpiResult<()> {
    let mut recvs = Vec::with_capacity(pipe);
    for i in 0..pipe {
        recvs.push(c.irecv(at(i), seg, dtype, from, TAG_ARRIVAL)?);
    }
    match next {
        Some(to) => {
            let mut sends = Vec::with_capacity(pipe);
            for (i, &rq) in recvs.iter().enumerate() {
                c.wait(rq)?;
                sends.push(c.isend(at(i), seg, dtype, to, TAG_ARRIVAL)?);
            }
            c.waitall(&sends);
            Ok(())
        }
        None => c.waitall_checked(&recvs),
    }
}

/// SMPI's `arrival_scatter`. Rank 0 (after the root hands it the data)
/// gathers announcements as `arrival_pattern_aware_wait` does; each group
/// of ranks found together gets its header (512 bytes; one blocking send each, in
/// order), then its share of the data: count / k elements each for a group
/// of k, the last one also taking the count % k rest (blocking sends). The
/// members of a group then allgather their shares around the ring of the
/// group (sendrecv with the next and the previous member). With fewer
/// elements than ranks SMPI calls the configured bcast, i.e. itself, and
/// never returns; here that runs SMPI's default (`binomial_tree`).
pub(crate) fn arrival_scatter(
    c: CommView,
    buf: *mut u8,
    count: usize,
    dtype: i32,
    root: i32,
) -> MpiResult<()> {
    let dt = dtype_of(dtype)?;
    let (n, rank) = (c.size, c.rank);
    if count < n as usize {
        return bcast::binomial_tree(c, buf, count, dtype, root);
    }
    to_rank0(c, buf, count, dtype, root)?;
    let mut one = [0u8; 1];
    // share j of a group of k: (first element, elements)
    let share = |j: usize, k: usize| {
        let base = count / k;
        (j * base, if j == k - 1 { base + count % k } else { base })
    };
    if rank == 0 {
        let mut served = vec![false; n as usize];
        let mut announced = vec![false; n as usize];
        let mut left = n - 1;
        while left > 0 {
            for _ in 0..3 {
                let mut i = 1;
                while i < n {
                    let u = i as usize;
                    i += 1;
                    if !served[u] && !announced[u] && probe(c, u as i32, TAG_ARRIVAL)? {
                        announced[u] = true;
                        c.recv(one.as_mut_ptr(), 1, BYTE, u as i32, TAG_ARRIVAL)?;
                        i = 1;
                    }
                }
            }
            let group: Vec<i32> = (1..n)
                .filter(|&i| announced[i as usize] && !served[i as usize])
                .collect();
            if group.is_empty() {
                continue;
            }
            for &i in &group {
                served[i as usize] = true;
            }
            left -= group.len() as i32;
            let h = header(&group, SCATTER_HEADER);
            for &to in &group {
                c.send(h.as_ptr().cast(), h.len(), MPI_INT, to, TAG_ARRIVAL)?;
            }
            for (j, &to) in group.iter().enumerate() {
                let (off, len) = share(j, group.len());
                c.send(elem(buf, &dt, off), len, dtype, to, TAG_ARRIVAL)?;
            }
        }
        return Ok(());
    }
    c.send(one.as_ptr(), 1, BYTE, 0, TAG_ARRIVAL)?;
    let mut h = vec![0i32; SCATTER_HEADER.max(n as usize)];
    c.recv(h.as_mut_ptr().cast(), h.len(), MPI_INT, 0, TAG_ARRIVAL)?;
    let k = h.iter().position(|&r| r == -1).unwrap_or(h.len());
    let mine = h.iter().position(|&r| r == rank).unwrap_or(0);
    let (off, len) = share(mine, k);
    c.recv(elem(buf, &dt, off), len, dtype, 0, TAG_ARRIVAL)?;
    let to = h[(mine + 1) % k];
    let from = h[(mine + k - 1) % k];
    for i in 0..k - 1 {
        let (soff, slen) = share((mine + k - i) % k, k);
        let (roff, rlen) = share((mine + 2 * k - i - 1) % k, k);
        c.sendrecv(
            elem(buf, &dt, soff),
            slen,
            dtype,
            to,
            elem(buf, &dt, roff),
            rlen,
            dtype,
            from,
            TAG_ARRIVAL,
        )?;
    }
    Ok(())
}
