//! The MPI C ABI of graph and distributed-graph topologies, topology mapping
//! (`MPI_Cart_map`, `MPI_Graph_map`) and the neighbourhood collectives
//! (`MPI_Neighbor_*`, `MPI_Ineighbor_*`). The library side is
//! `crate::mpi::topo`; the Cartesian calls live in `abi_more`.
#![allow(non_snake_case, clippy::missing_safety_doc, clippy::too_many_arguments)]

use std::ffi::{c_int, c_void};
use std::rc::Rc;

use crate::coll::{self, CommView, IN_PLACE};
use crate::mpi::entry::{self, enter, result};
use crate::mpi::topo::{self, Block, DistGraph, Graph, Neighbors, Topology};
use crate::mpi::{self as rt, mpi_err, with_world, MpiResult, MPI_SUCCESS, MPI_UNDEFINED};

use crate::abi::more::attach_topology;

/// `MPI_UNWEIGHTED` and `MPI_WEIGHTS_EMPTY`: special weight-array addresses
/// (as in MPICH; not NULL, so that NULL stays an ordinary empty array).
const UNWEIGHTED: usize = 1;
const WEIGHTS_EMPTY: usize = 2;

/// `MPI_INT`'s handle (topology exchanges carry ints).
const INT: i32 = 7;

unsafe fn set<T>(p: *mut T, v: T) {
    if !p.is_null() {
        *p = v;
    }
}

/// `n` ints from `p` (nothing is read when `n` is 0, so `p` may be NULL).
unsafe fn ints(n: usize, p: *const c_int) -> Vec<i32> {
    if n == 0 || p.is_null() {
        return Vec::new();
    }
    std::slice::from_raw_parts(p, n).to_vec()
}

fn count(v: c_int, what: &str) -> MpiResult<usize> {
    usize::try_from(v).map_err(|_| mpi_err(rt::MPI_ERR_ARG, format!("negative {what} {v}")))
}

/// `n` counts from `p`, each checked non-negative.
unsafe fn counts(n: usize, p: *const c_int) -> MpiResult<Vec<usize>> {
    ints(n, p)
        .into_iter()
        .map(|v| usize::try_from(v).map_err(|_| mpi_err(rt::MPI_ERR_COUNT, format!("negative count {v}"))))
        .collect()
}

/// My view of an intracommunicator (topologies need one).
fn intra_view(me: u32, comm: c_int) -> MpiResult<CommView> {
    let v = CommView::new(me, comm)?;
    if with_world(|w| w.ranks[me as usize].comm(comm).map(|c| c.shared.remote.is_some()))? {
        return Err(mpi_err(
            rt::MPI_ERR_COMM,
            "topologies on intercommunicators are not supported",
        ));
    }
    Ok(v)
}

/// The topology of `comm` and my rank in it.
fn topology_of(me: u32, comm: c_int) -> MpiResult<(Rc<Topology>, i32)> {
    with_world(|w| {
        let c = w.ranks[me as usize].comm(comm)?;
        c.topo
            .clone()
            .map(|t| (t, c.my_rank))
            .ok_or_else(|| mpi_err(topo::MPI_ERR_TOPOLOGY, "communicator has no topology"))
    })
}

fn graph_of(me: u32, comm: c_int) -> MpiResult<Rc<Topology>> {
    let (t, _) = topology_of(me, comm)?;
    match *t {
        Topology::Graph(_) => Ok(t),
        _ => Err(mpi_err(
            topo::MPI_ERR_TOPOLOGY,
            "communicator has no graph topology",
        )),
    }
}

fn dist_graph_of(me: u32, comm: c_int) -> MpiResult<Rc<Topology>> {
    let (t, _) = topology_of(me, comm)?;
    match *t {
        Topology::DistGraph(_) => Ok(t),
        _ => Err(mpi_err(
            topo::MPI_ERR_TOPOLOGY,
            "communicator has no distributed graph topology",
        )),
    }
}

/// Writes a new communicator handle, or applies the error handler.
unsafe fn created(me: u32, comm: c_int, call: &str, r: MpiResult<c_int>, new: *mut c_int) -> c_int {
    match r {
        Ok(h) => {
            set(new, h);
            MPI_SUCCESS
        }
        Err(e) => entry::handle_error(me, comm, call, e),
    }
}

// ------------------------------------------------------------------ mapping

#[no_mangle]
pub unsafe extern "C" fn MPI_Cart_map(
    comm: c_int,
    ndims: c_int,
    dims: *const c_int,
    _periods: *const c_int,
    newrank: *mut c_int,
) -> c_int {
    let me = rt::current_rank();
    let r = (|| -> MpiResult<()> {
        let c = intra_view(me, comm)?;
        let d = ints(count(ndims, "ndims")?, dims);
        let points: i64 = d.iter().map(|&x| x as i64).product();
        if d.iter().any(|&x| x <= 0) || points > c.size as i64 {
            return Err(mpi_err(
                topo::MPI_ERR_DIMS,
                format!("dims {d:?} do not fit {} ranks", c.size),
            ));
        }
        // Identity mapping, as MPI_Cart_create uses.
        set(
            newrank,
            if (c.rank as i64) < points {
                c.rank
            } else {
                MPI_UNDEFINED
            },
        );
        Ok(())
    })();
    result(me, comm, "MPI_Cart_map", r)
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Graph_map(
    comm: c_int,
    nnodes: c_int,
    _index: *const c_int,
    _edges: *const c_int,
    newrank: *mut c_int,
) -> c_int {
    let me = rt::current_rank();
    let r = (|| -> MpiResult<()> {
        let c = intra_view(me, comm)?;
        if nnodes < 0 || nnodes > c.size {
            return Err(mpi_err(
                rt::MPI_ERR_ARG,
                format!("graph of {nnodes} nodes on {} ranks", c.size),
            ));
        }
        set(newrank, if c.rank < nnodes { c.rank } else { MPI_UNDEFINED });
        Ok(())
    })();
    result(me, comm, "MPI_Graph_map", r)
}

// ------------------------------------------------------------------ graph topologies

#[no_mangle]
pub unsafe extern "C" fn MPI_Graph_create(
    comm: c_int,
    nnodes: c_int,
    index: *const c_int,
    edges: *const c_int,
    _reorder: c_int,
    new: *mut c_int,
) -> c_int {
    let g = enter();
    let r = (|| -> MpiResult<c_int> {
        let c = intra_view(g.me, comm)?;
        let index = ints(count(nnodes, "nnodes")?, index);
        let nedges = count(index.last().copied().unwrap_or(0), "edge count")?;
        let graph = Graph::new(c.size, index, ints(nedges, edges))?;
        let group: Vec<u32> = with_world(|w| {
            w.ranks[g.me as usize]
                .comm(comm)
                .map(|e| e.shared.group[..nnodes as usize].to_vec())
        })?;
        // An empty graph gives MPI_COMM_NULL everywhere (MPI 2.1).
        let h = crate::abi::base::derive_comm(g.me, comm, -8, Some(group))?;
        attach_topology(g.me, h, Topology::Graph(graph));
        Ok(h)
    })();
    created(g.me, comm, "MPI_Graph_create", r, new)
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Graphdims_get(comm: c_int, nnodes: *mut c_int, nedges: *mut c_int) -> c_int {
    let me = rt::current_rank();
    let r = graph_of(me, comm).map(|t| {
        if let Topology::Graph(gr) = &*t {
            set(nnodes, gr.index.len() as c_int);
            set(nedges, gr.edges.len() as c_int);
        }
    });
    result(me, comm, "MPI_Graphdims_get", r)
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Graph_get(
    comm: c_int,
    maxindex: c_int,
    maxedges: c_int,
    index: *mut c_int,
    edges: *mut c_int,
) -> c_int {
    let me = rt::current_rank();
    let r = graph_of(me, comm).map(|t| {
        if let Topology::Graph(gr) = &*t {
            for (i, &x) in gr.index.iter().take(maxindex.max(0) as usize).enumerate() {
                *index.add(i) = x;
            }
            for (i, &x) in gr.edges.iter().take(maxedges.max(0) as usize).enumerate() {
                *edges.add(i) = x;
            }
        }
    });
    result(me, comm, "MPI_Graph_get", r)
}

/// Neighbours of `rank` in the graph topology of `comm`.
fn graph_neighbors(me: u32, comm: c_int, rank: c_int) -> MpiResult<Vec<i32>> {
    let t = graph_of(me, comm)?;
    let Topology::Graph(gr) = &*t else {
        unreachable!("graph_of returns graph topologies")
    };
    if rank < 0 || rank as usize >= gr.index.len() {
        return Err(mpi_err(rt::MPI_ERR_RANK, format!("invalid rank {rank}")));
    }
    Ok(gr.neighbors(rank).to_vec())
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Graph_neighbors_count(comm: c_int, rank: c_int, n: *mut c_int) -> c_int {
    let me = rt::current_rank();
    let r = graph_neighbors(me, comm, rank).map(|v| set(n, v.len() as c_int));
    result(me, comm, "MPI_Graph_neighbors_count", r)
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Graph_neighbors(
    comm: c_int,
    rank: c_int,
    maxneighbors: c_int,
    neighbors: *mut c_int,
) -> c_int {
    let me = rt::current_rank();
    let r = graph_neighbors(me, comm, rank).map(|v| {
        for (i, &x) in v.iter().take(maxneighbors.max(0) as usize).enumerate() {
            *neighbors.add(i) = x;
        }
    });
    result(me, comm, "MPI_Graph_neighbors", r)
}

// ------------------------------------------------------------------ distributed graphs

/// Whether a weight array means "weighted" (anything but `MPI_UNWEIGHTED`).
fn is_weighted(weights: *const c_int) -> bool {
    weights as usize != UNWEIGHTED
}

/// `n` weights, or 1s for `MPI_UNWEIGHTED` / `MPI_WEIGHTS_EMPTY` / NULL.
unsafe fn weights_of(n: usize, weights: *const c_int) -> Vec<i32> {
    match weights as usize {
        0 | UNWEIGHTED | WEIGHTS_EMPTY => vec![1; n],
        _ => ints(n, weights),
    }
}

fn check_ranks(size: i32, ranks: &[i32]) -> MpiResult<()> {
    match ranks.iter().find(|&&r| r < 0 || r >= size) {
        Some(r) => Err(mpi_err(
            rt::MPI_ERR_RANK,
            format!("graph edge to rank {r} outside 0..{size}"),
        )),
        None => Ok(()),
    }
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Dist_graph_create_adjacent(
    comm: c_int,
    indegree: c_int,
    sources: *const c_int,
    sourceweights: *const c_int,
    outdegree: c_int,
    destinations: *const c_int,
    destweights: *const c_int,
    _info: c_int,
    _reorder: c_int,
    new: *mut c_int,
) -> c_int {
    let g = enter();
    let r = (|| -> MpiResult<c_int> {
        let c = intra_view(g.me, comm)?;
        let (nin, nout) = (count(indegree, "indegree")?, count(outdegree, "outdegree")?);
        let graph = DistGraph {
            sources: ints(nin, sources),
            source_weights: weights_of(nin, sourceweights),
            destinations: ints(nout, destinations),
            destination_weights: weights_of(nout, destweights),
            weighted: is_weighted(sourceweights) && is_weighted(destweights),
        };
        check_ranks(c.size, &graph.sources)?;
        check_ranks(c.size, &graph.destinations)?;
        let h = crate::abi::base::derive_comm(g.me, comm, -9, None)?;
        attach_topology(g.me, h, Topology::DistGraph(graph));
        Ok(h)
    })();
    created(g.me, comm, "MPI_Dist_graph_create_adjacent", r, new)
}

/// Delivers every edge `[source, destination, weight]` given by any rank to
/// both of its ends (one alltoall of counts, one alltoallv of edges, on the
/// parent communicator), and returns the edges that reach me, ordered by
/// the rank that gave them, then as given.
fn exchange_edges(c: CommView, mine: &[[i32; 3]]) -> MpiResult<Vec<[i32; 3]>> {
    let n = c.size as usize;
    let mut outgoing: Vec<Vec<i32>> = vec![Vec::new(); n];
    for e in mine {
        outgoing[e[0] as usize].extend_from_slice(e);
        if e[1] != e[0] {
            outgoing[e[1] as usize].extend_from_slice(e);
        }
    }
    let scounts: Vec<i32> = outgoing.iter().map(|v| v.len() as i32).collect();
    let mut rcounts = vec![0i32; n];
    let ones = vec![1usize; n];
    let unit_displs: Vec<isize> = (0..n as isize).collect();
    coll::alltoallv(
        c,
        scounts.as_ptr().cast(),
        &ones,
        &unit_displs,
        INT,
        rcounts.as_mut_ptr().cast(),
        &ones,
        &unit_displs,
        INT,
        true,
    )?;
    let sendbuf: Vec<i32> = outgoing.concat();
    let displs = |counts: &[usize]| -> Vec<isize> {
        counts
            .iter()
            .scan(0isize, |acc, &k| {
                let d = *acc;
                *acc += k as isize;
                Some(d)
            })
            .collect()
    };
    let scounts: Vec<usize> = scounts.iter().map(|&k| k as usize).collect();
    let rcounts: Vec<usize> = rcounts.iter().map(|&k| k.max(0) as usize).collect();
    let mut recvbuf = vec![0i32; rcounts.iter().sum()];
    coll::alltoallv(
        c,
        sendbuf.as_ptr().cast(),
        &scounts,
        &displs(&scounts),
        INT,
        recvbuf.as_mut_ptr().cast(),
        &rcounts,
        &displs(&rcounts),
        INT,
        false,
    )?;
    Ok(recvbuf.chunks_exact(3).map(|e| [e[0], e[1], e[2]]).collect())
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Dist_graph_create(
    comm: c_int,
    n: c_int,
    sources: *const c_int,
    degrees: *const c_int,
    destinations: *const c_int,
    weights: *const c_int,
    _info: c_int,
    _reorder: c_int,
    new: *mut c_int,
) -> c_int {
    let g = enter();
    let r = (|| -> MpiResult<c_int> {
        let c = intra_view(g.me, comm)?;
        let n = count(n, "source count")?;
        let srcs = ints(n, sources);
        let degs = counts(n, degrees)?;
        let total: usize = degs.iter().sum();
        let dsts = ints(total, destinations);
        let wts = weights_of(total, weights);
        check_ranks(c.size, &srcs)?;
        check_ranks(c.size, &dsts)?;
        let mut edges = Vec::with_capacity(total);
        let mut k = 0;
        for (&s, &deg) in srcs.iter().zip(&degs) {
            for _ in 0..deg {
                edges.push([s, dsts[k], wts[k]]);
                k += 1;
            }
        }
        let mut graph = DistGraph {
            sources: Vec::new(),
            source_weights: Vec::new(),
            destinations: Vec::new(),
            destination_weights: Vec::new(),
            weighted: is_weighted(weights),
        };
        for [s, d, w] in exchange_edges(c, &edges)? {
            if d == c.rank {
                graph.sources.push(s);
                graph.source_weights.push(w);
            }
            if s == c.rank {
                graph.destinations.push(d);
                graph.destination_weights.push(w);
            }
        }
        let h = crate::abi::base::derive_comm(g.me, comm, -10, None)?;
        attach_topology(g.me, h, Topology::DistGraph(graph));
        Ok(h)
    })();
    created(g.me, comm, "MPI_Dist_graph_create", r, new)
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Dist_graph_neighbors_count(
    comm: c_int,
    indegree: *mut c_int,
    outdegree: *mut c_int,
    weighted: *mut c_int,
) -> c_int {
    let me = rt::current_rank();
    let r = dist_graph_of(me, comm).map(|t| {
        if let Topology::DistGraph(d) = &*t {
            set(indegree, d.sources.len() as c_int);
            set(outdegree, d.destinations.len() as c_int);
            set(weighted, d.weighted as c_int);
        }
    });
    result(me, comm, "MPI_Dist_graph_neighbors_count", r)
}

/// Copies up to `max` entries of `v` to `p` (skipped for the special
/// weight addresses).
unsafe fn copy_out(v: &[i32], max: c_int, p: *mut c_int) {
    if matches!(p as usize, 0 | UNWEIGHTED | WEIGHTS_EMPTY) {
        return;
    }
    for (i, &x) in v.iter().take(max.max(0) as usize).enumerate() {
        *p.add(i) = x;
    }
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Dist_graph_neighbors(
    comm: c_int,
    maxindegree: c_int,
    sources: *mut c_int,
    sourceweights: *mut c_int,
    maxoutdegree: c_int,
    destinations: *mut c_int,
    destweights: *mut c_int,
) -> c_int {
    let me = rt::current_rank();
    let r = dist_graph_of(me, comm).map(|t| {
        if let Topology::DistGraph(d) = &*t {
            copy_out(&d.sources, maxindegree, sources);
            copy_out(&d.destinations, maxoutdegree, destinations);
            if d.weighted {
                copy_out(&d.source_weights, maxindegree, sourceweights);
                copy_out(&d.destination_weights, maxoutdegree, destweights);
            }
        }
    });
    result(me, comm, "MPI_Dist_graph_neighbors", r)
}

// ------------------------------------------------------------------ neighbourhood collectives

/// My view of `comm` and my neighbours in its topology.
fn neighborhood(me: u32, comm: c_int) -> MpiResult<(CommView, Neighbors)> {
    let c = intra_view(me, comm)?;
    let (t, rank) = topology_of(me, comm)?;
    Ok((c, t.neighbors(rank)))
}

fn extent(dtype: i32) -> MpiResult<isize> {
    with_world(|w| w.dtype(dtype).map(|d| d.extent))
}

/// Blocks at byte offsets `displs` of `buf`.
fn blocks(buf: *const c_void, counts: &[usize], displs: &[isize], types: &[i32]) -> Vec<Block> {
    (0..counts.len())
        .map(|k| Block {
            buf: (buf as *mut u8).wrapping_offset(displs[k]),
            count: counts[k],
            dtype: types[k],
        })
        .collect()
}

/// `n` blocks of `count` elements of `dtype`, one after the other.
fn regular_blocks(buf: *const c_void, n: usize, count: usize, dtype: i32) -> MpiResult<Vec<Block>> {
    let step = count as isize * extent(dtype)?;
    let displs: Vec<isize> = (0..n as isize).map(|k| k * step).collect();
    Ok(blocks(buf, &vec![count; n], &displs, &vec![dtype; n]))
}

/// Blocks at displacements `displs` counted in extents of `dtype`.
unsafe fn v_blocks(
    buf: *const c_void,
    n: usize,
    counts_p: *const c_int,
    displs_p: *const c_int,
    dtype: i32,
) -> MpiResult<Vec<Block>> {
    let ext = extent(dtype)?;
    let displs: Vec<isize> = ints(n, displs_p).iter().map(|&d| d as isize * ext).collect();
    Ok(blocks(buf, &counts(n, counts_p)?, &displs, &vec![dtype; n]))
}

fn no_in_place(sbuf: *const c_void) -> MpiResult<()> {
    if sbuf as *mut u8 == IN_PLACE {
        return Err(mpi_err(
            rt::MPI_ERR_BUFFER,
            "MPI_IN_PLACE is not allowed in neighbourhood collectives",
        ));
    }
    Ok(())
}

/// Starts the collective `start` describes; the blocking form (`req` NULL)
/// waits for it.
unsafe fn neighbor_call(
    call: &'static str,
    comm: c_int,
    req: *mut c_int,
    start: impl FnOnce(&Neighbors) -> MpiResult<(Vec<Block>, Vec<Block>)>,
) -> c_int {
    let g = enter();
    let r = (|| -> MpiResult<u32> {
        let (c, nb) = neighborhood(g.me, comm)?;
        let (sends, recvs) = start(&nb)?;
        topo::ineighbor(c, nb, sends, recvs)
    })();
    match r {
        Ok(id) if req.is_null() => {
            rt::wait(g.me, id, call);
            MPI_SUCCESS
        }
        Ok(id) => {
            set(req, id as c_int + 1);
            MPI_SUCCESS
        }
        Err(e) => entry::handle_error(g.me, comm, call, e),
    }
}

unsafe fn allgather(
    call: &'static str,
    s: *const c_void,
    sc: c_int,
    st: c_int,
    r: *mut c_void,
    rc: c_int,
    rtype: c_int,
    comm: c_int,
    req: *mut c_int,
) -> c_int {
    neighbor_call(call, comm, req, |nb| {
        no_in_place(s)?;
        let sc = count(sc, "count")?;
        let sends = vec![
            Block {
                buf: s as *mut u8,
                count: sc,
                dtype: st
            };
            nb.destinations.len()
        ];
        Ok((
            sends,
            regular_blocks(r, nb.sources.len(), count(rc, "count")?, rtype)?,
        ))
    })
}

unsafe fn allgatherv(
    call: &'static str,
    s: *const c_void,
    sc: c_int,
    st: c_int,
    r: *mut c_void,
    rcs: *const c_int,
    rds: *const c_int,
    rtype: c_int,
    comm: c_int,
    req: *mut c_int,
) -> c_int {
    neighbor_call(call, comm, req, |nb| {
        no_in_place(s)?;
        let sc = count(sc, "count")?;
        let sends = vec![
            Block {
                buf: s as *mut u8,
                count: sc,
                dtype: st
            };
            nb.destinations.len()
        ];
        Ok((sends, v_blocks(r, nb.sources.len(), rcs, rds, rtype)?))
    })
}

unsafe fn alltoall(
    call: &'static str,
    s: *const c_void,
    sc: c_int,
    st: c_int,
    r: *mut c_void,
    rc: c_int,
    rtype: c_int,
    comm: c_int,
    req: *mut c_int,
) -> c_int {
    neighbor_call(call, comm, req, |nb| {
        no_in_place(s)?;
        Ok((
            regular_blocks(s, nb.destinations.len(), count(sc, "count")?, st)?,
            regular_blocks(r, nb.sources.len(), count(rc, "count")?, rtype)?,
        ))
    })
}

unsafe fn alltoallv(
    call: &'static str,
    s: *const c_void,
    scs: *const c_int,
    sds: *const c_int,
    st: c_int,
    r: *mut c_void,
    rcs: *const c_int,
    rds: *const c_int,
    rtype: c_int,
    comm: c_int,
    req: *mut c_int,
) -> c_int {
    neighbor_call(call, comm, req, |nb| {
        no_in_place(s)?;
        Ok((
            v_blocks(s, nb.destinations.len(), scs, sds, st)?,
            v_blocks(r, nb.sources.len(), rcs, rds, rtype)?,
        ))
    })
}

unsafe fn alltoallw(
    call: &'static str,
    s: *const c_void,
    scs: *const c_int,
    sds: *const isize,
    sts: *const c_int,
    r: *mut c_void,
    rcs: *const c_int,
    rds: *const isize,
    rts: *const c_int,
    comm: c_int,
    req: *mut c_int,
) -> c_int {
    neighbor_call(call, comm, req, |nb| {
        no_in_place(s)?;
        let side = |buf: *const c_void, n: usize, cs, ds: *const isize, ts| -> MpiResult<Vec<Block>> {
            let displs = if n == 0 {
                Vec::new()
            } else {
                std::slice::from_raw_parts(ds, n).to_vec()
            };
            Ok(blocks(buf, &counts(n, cs)?, &displs, &ints(n, ts)))
        };
        Ok((
            side(s, nb.destinations.len(), scs, sds, sts)?,
            side(r, nb.sources.len(), rcs, rds, rts)?,
        ))
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Neighbor_allgather(
    s: *const c_void,
    sc: c_int,
    st: c_int,
    r: *mut c_void,
    rc: c_int,
    rtype: c_int,
    comm: c_int,
) -> c_int {
    allgather(
        "MPI_Neighbor_allgather",
        s,
        sc,
        st,
        r,
        rc,
        rtype,
        comm,
        std::ptr::null_mut(),
    )
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Ineighbor_allgather(
    s: *const c_void,
    sc: c_int,
    st: c_int,
    r: *mut c_void,
    rc: c_int,
    rtype: c_int,
    comm: c_int,
    req: *mut c_int,
) -> c_int {
    allgather("MPI_Ineighbor_allgather", s, sc, st, r, rc, rtype, comm, req)
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Neighbor_allgatherv(
    s: *const c_void,
    sc: c_int,
    st: c_int,
    r: *mut c_void,
    rcs: *const c_int,
    rds: *const c_int,
    rtype: c_int,
    comm: c_int,
) -> c_int {
    allgatherv(
        "MPI_Neighbor_allgatherv",
        s,
        sc,
        st,
        r,
        rcs,
        rds,
        rtype,
        comm,
        std::ptr::null_mut(),
    )
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Ineighbor_allgatherv(
    s: *const c_void,
    sc: c_int,
    st: c_int,
    r: *mut c_void,
    rcs: *const c_int,
    rds: *const c_int,
    rtype: c_int,
    comm: c_int,
    req: *mut c_int,
) -> c_int {
    allgatherv(
        "MPI_Ineighbor_allgatherv",
        s,
        sc,
        st,
        r,
        rcs,
        rds,
        rtype,
        comm,
        req,
    )
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Neighbor_alltoall(
    s: *const c_void,
    sc: c_int,
    st: c_int,
    r: *mut c_void,
    rc: c_int,
    rtype: c_int,
    comm: c_int,
) -> c_int {
    alltoall(
        "MPI_Neighbor_alltoall",
        s,
        sc,
        st,
        r,
        rc,
        rtype,
        comm,
        std::ptr::null_mut(),
    )
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Ineighbor_alltoall(
    s: *const c_void,
    sc: c_int,
    st: c_int,
    r: *mut c_void,
    rc: c_int,
    rtype: c_int,
    comm: c_int,
    req: *mut c_int,
) -> c_int {
    alltoall("MPI_Ineighbor_alltoall", s, sc, st, r, rc, rtype, comm, req)
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Neighbor_alltoallv(
    s: *const c_void,
    scs: *const c_int,
    sds: *const c_int,
    st: c_int,
    r: *mut c_void,
    rcs: *const c_int,
    rds: *const c_int,
    rtype: c_int,
    comm: c_int,
) -> c_int {
    alltoallv(
        "MPI_Neighbor_alltoallv",
        s,
        scs,
        sds,
        st,
        r,
        rcs,
        rds,
        rtype,
        comm,
        std::ptr::null_mut(),
    )
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Ineighbor_alltoallv(
    s: *const c_void,
    scs: *const c_int,
    sds: *const c_int,
    st: c_int,
    r: *mut c_void,
    rcs: *const c_int,
    rds: *const c_int,
    rtype: c_int,
    comm: c_int,
    req: *mut c_int,
) -> c_int {
    alltoallv(
        "MPI_Ineighbor_alltoallv",
        s,
        scs,
        sds,
        st,
        r,
        rcs,
        rds,
        rtype,
        comm,
        req,
    )
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Neighbor_alltoallw(
    s: *const c_void,
    scs: *const c_int,
    sds: *const isize,
    sts: *const c_int,
    r: *mut c_void,
    rcs: *const c_int,
    rds: *const isize,
    rts: *const c_int,
    comm: c_int,
) -> c_int {
    alltoallw(
        "MPI_Neighbor_alltoallw",
        s,
        scs,
        sds,
        sts,
        r,
        rcs,
        rds,
        rts,
        comm,
        std::ptr::null_mut(),
    )
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Ineighbor_alltoallw(
    s: *const c_void,
    scs: *const c_int,
    sds: *const isize,
    sts: *const c_int,
    r: *mut c_void,
    rcs: *const c_int,
    rds: *const isize,
    rts: *const c_int,
    comm: c_int,
    req: *mut c_int,
) -> c_int {
    alltoallw(
        "MPI_Ineighbor_alltoallw",
        s,
        scs,
        sds,
        sts,
        r,
        rcs,
        rds,
        rts,
        comm,
        req,
    )
}
