//! Process topologies (MPI chapter 8): Cartesian, graph and distributed graph, and the
//! neighbourhood collectives.
#![allow(non_snake_case, clippy::missing_safety_doc, clippy::too_many_arguments)]

use std::ffi::{c_int, c_void};
use std::rc::Rc;

use crate::coll::neighbor::{self, Block};
use crate::coll::{self, CommView, IN_PLACE};
use crate::mpi::entry::{self, enter_call, result};
use crate::mpi::topo::{self, Cart, DistGraph, Graph, Neighbors, Topology};
use crate::mpi::{self as rt, mpi_err, with_world, MpiResult, MPI_COMM_NULL, MPI_SUCCESS, MPI_UNDEFINED};

use crate::mpi::coll_check::{self, CollSig};

use super::args::*;

// ------------------------------------------------------------------ Cartesian topologies

/// The Cartesian topology of `comm` and my rank in it.
pub(super) fn cart_of(me: u32, comm: c_int) -> MpiResult<(Cart, i32)> {
    with_world(|w| {
        let c = w.ranks[me as usize].comm(comm)?;
        match c.topo.as_deref() {
            Some(Topology::Cart(k)) => Ok((k.clone(), c.my_rank)),
            _ => Err(mpi_err(
                topo::MPI_ERR_TOPOLOGY,
                "communicator has no Cartesian topology",
            )),
        }
    })
}

/// Attaches `topology` to my handle `h` (unless it is `MPI_COMM_NULL`).
pub(crate) fn attach_topology(me: u32, h: c_int, topology: Topology) {
    if h == MPI_COMM_NULL {
        return;
    }
    with_world(|w| {
        if let Ok(c) = w.ranks[me as usize].comm_mut(h) {
            c.topo = Some(Rc::new(topology));
        }
    });
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Cart_create(
    comm: c_int,
    ndims: c_int,
    dims: *const c_int,
    periods: *const c_int,
    _reorder: c_int,
    new: *mut c_int,
) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        create("MPI_Cart_create", comm, new, |me| {
            if ndims < 0 {
                return Err(mpi_err(topo::MPI_ERR_DIMS, format!("negative ndims {ndims}")));
            }
            let nd = ndims as usize;
            arg_array(dims, nd, "dims")?;
            arg_array(periods, nd, "periods")?;
            let d: Vec<i32> = ints(nd, dims);
            let p: Vec<bool> = ints(nd, periods).iter().map(|&x| x != 0).collect();
            let total: i64 = d.iter().map(|&x| x as i64).product();
            let size = CommView::new(me, comm)?.size;
            if d.iter().any(|&x| x <= 0) || total > size as i64 {
                return Err(mpi_err(
                    topo::MPI_ERR_DIMS,
                    format!("dims {d:?} do not fit {size} ranks"),
                ));
            }
            let group: Option<Vec<u32>> = with_world(|w| {
                w.ranks[me as usize]
                    .comm(comm)
                    .ok()
                    .map(|c| c.shared.group[..total as usize].to_vec())
            });
            let h = crate::mpi::comm::derive_comm(me, comm, -7, group)?;
            attach_topology(me, h, Topology::Cart(Cart { dims: d, periods: p }));
            Ok(h)
        })
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Cartdim_get(comm: c_int, ndims: *mut c_int) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        let me = rt::current_rank();
        match cart_of(me, comm) {
            Ok((c, _)) => {
                set(ndims, c.dims.len() as c_int);
                MPI_SUCCESS
            }
            Err(e) => entry::handle_error(me, comm, "MPI_Cartdim_get", e),
        }
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Cart_get(
    comm: c_int,
    maxdims: c_int,
    dims: *mut c_int,
    periods: *mut c_int,
    coords: *mut c_int,
) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        let me = rt::current_rank();
        let checked = cart_of(me, comm).and_then(|(c, my)| {
            let n = count(maxdims, "maxdims")?.min(c.dims.len());
            for (p, name) in [(dims, "dims"), (periods, "periods"), (coords, "coords")] {
                arg_array(p, n, name)?;
            }
            Ok((c, my))
        });
        match checked {
            Ok((c, my)) => {
                let co = c.coords(my);
                for (i, x) in co.iter().enumerate().take(maxdims as usize) {
                    set(dims.add(i), c.dims[i]);
                    set(periods.add(i), c.periods[i] as c_int);
                    set(coords.add(i), *x);
                }
                MPI_SUCCESS
            }
            Err(e) => entry::handle_error(me, comm, "MPI_Cart_get", e),
        }
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Cart_coords(
    comm: c_int,
    rank: c_int,
    maxdims: c_int,
    coords: *mut c_int,
) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        query("MPI_Cart_coords", comm, |me| {
            cart_of(me, comm).and_then(|(c, _)| {
                if rank < 0 || rank >= c.size() {
                    return Err(mpi_err(rt::MPI_ERR_RANK, format!("invalid rank {rank}")));
                }
                arg_array(coords, maxdims.max(0) as usize, "coords")?;
                for (i, x) in c.coords(rank).iter().enumerate().take(maxdims.max(0) as usize) {
                    *coords.add(i) = *x;
                }
                Ok(())
            })
        })
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Cart_rank(comm: c_int, coords: *const c_int, rank: *mut c_int) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        query("MPI_Cart_rank", comm, |me| {
            cart_of(me, comm).and_then(|(c, _)| {
                arg_array(coords, c.dims.len(), "coords")?;
                let co: Vec<i32> = ints(c.dims.len(), coords);
                let r = c.rank_of(&co).ok_or_else(|| {
                    mpi_err(rt::MPI_ERR_ARG, format!("coordinates {co:?} outside the grid"))
                })?;
                set(rank, r);
                Ok(())
            })
        })
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Cart_shift(
    comm: c_int,
    dir: c_int,
    disp: c_int,
    src: *mut c_int,
    dst: *mut c_int,
) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        query("MPI_Cart_shift", comm, |me| {
            cart_of(me, comm).and_then(|(c, my)| {
                if dir < 0 || dir as usize >= c.dims.len() {
                    return Err(mpi_err(topo::MPI_ERR_DIMS, format!("invalid direction {dir}")));
                }
                let (s, d) = c.shift(my, dir as usize, disp);
                set(src, s);
                set(dst, d);
                Ok(())
            })
        })
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Cart_sub(comm: c_int, remain: *const c_int, new: *mut c_int) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        let g = enter_call("MPI_Cart_sub");
        let (c, me) = match cart_of(g.me, comm) {
            Ok(x) => x,
            Err(e) => return entry::handle_error(g.me, comm, "MPI_Cart_sub", e),
        };
        if let Err(e) = arg_array(remain, c.dims.len(), "remain_dims") {
            return entry::handle_error(g.me, comm, "MPI_Cart_sub", e);
        }
        let keep: Vec<bool> = ints(c.dims.len(), remain).iter().map(|&x| x != 0).collect();
        let co = c.coords(me);
        // Color: coordinates along dropped dimensions; key: along kept ones.
        let (mut color, mut key) = (0i32, 0i32);
        for i in 0..c.dims.len() {
            if keep[i] {
                key = key * c.dims[i] + co[i];
            } else {
                color = color * c.dims[i] + co[i];
            }
        }
        // Keeping no dimension gives a 0-dimensional grid: one point, held by
        // rank 0 (as MPICH, whose test suite expects MPI_COMM_NULL elsewhere).
        if !keep.contains(&true) && me != 0 {
            color = MPI_UNDEFINED;
        }
        let rc = super::comm::MPI_Comm_split(comm, color, key, new);
        if rc == MPI_SUCCESS {
            let dims: Vec<i32> = (0..c.dims.len())
                .filter(|&i| keep[i])
                .map(|i| c.dims[i])
                .collect();
            let periods: Vec<bool> = (0..c.dims.len())
                .filter(|&i| keep[i])
                .map(|i| c.periods[i])
                .collect();
            attach_topology(g.me, *new, Topology::Cart(Cart { dims, periods }));
        }
        rc
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Topo_test(comm: c_int, status: *mut c_int) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        let me = rt::current_rank();
        match with_world(|w| {
            w.ranks[me as usize]
                .comm(comm)
                .map(|c| c.topo.as_ref().map(|t| t.kind()))
        }) {
            Ok(kind) => {
                set(status, kind.unwrap_or(MPI_UNDEFINED));
                MPI_SUCCESS
            }
            Err(e) => entry::handle_error(me, comm, "MPI_Topo_test", e),
        }
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Dims_create(nnodes: c_int, ndims: c_int, dims: *mut c_int) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        let me = rt::current_rank();
        let bad = if ndims < 0 {
            Some(mpi_err(topo::MPI_ERR_DIMS, format!("negative ndims {ndims}")))
        } else {
            arg_array(dims, ndims as usize, "dims").err()
        };
        if let Some(e) = bad {
            return entry::handle_error(me, rt::MPI_COMM_WORLD, "MPI_Dims_create", e);
        }
        let nd = ndims as usize;
        let mut d: Vec<i32> = ints(nd, dims);
        match topo::dims_create(nnodes, &mut d) {
            Ok(()) => {
                for (i, x) in d.iter().enumerate() {
                    *dims.add(i) = *x;
                }
                MPI_SUCCESS
            }
            Err(e) => entry::handle_error(me, rt::MPI_COMM_WORLD, "MPI_Dims_create", e),
        }
    }
}

/// `MPI_UNWEIGHTED` and `MPI_WEIGHTS_EMPTY`: special weight-array addresses
/// (as in MPICH; not NULL, so that NULL stays an ordinary empty array).
pub(super) const UNWEIGHTED: usize = 1;
pub(super) const WEIGHTS_EMPTY: usize = 2;

/// `MPI_INT`'s handle (topology exchanges carry ints).
pub(super) const INT: i32 = 7;

/// `n` ints from `p` (nothing is read when `n` is 0, so `p` may be NULL).
pub(super) unsafe fn ints(n: usize, p: *const c_int) -> Vec<i32> {
    // Safety: the caller upholds this function's contract (see its `# Safety`).
    unsafe {
        if n == 0 || p.is_null() {
            return Vec::new();
        }
        std::slice::from_raw_parts(p, n).to_vec()
    }
}

pub(super) fn count(v: c_int, what: &str) -> MpiResult<usize> {
    usize::try_from(v).map_err(|_| mpi_err(rt::MPI_ERR_ARG, format!("negative {what} {v}")))
}

/// `n` counts from `p`, each checked non-negative.
pub(super) unsafe fn counts(n: usize, p: *const c_int) -> MpiResult<Vec<usize>> {
    // Safety: the caller upholds this function's contract (see its `# Safety`).
    unsafe {
        ints(n, p)
            .into_iter()
            .map(|v| {
                usize::try_from(v).map_err(|_| mpi_err(rt::MPI_ERR_COUNT, format!("negative count {v}")))
            })
            .collect()
    }
}

/// My view of an intracommunicator (topologies need one).
pub(super) fn intra_view(me: u32, comm: c_int) -> MpiResult<CommView> {
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
pub(super) fn topology_of(me: u32, comm: c_int) -> MpiResult<(Rc<Topology>, i32)> {
    with_world(|w| {
        let c = w.ranks[me as usize].comm(comm)?;
        c.topo
            .clone()
            .map(|t| (t, c.my_rank))
            .ok_or_else(|| mpi_err(topo::MPI_ERR_TOPOLOGY, "communicator has no topology"))
    })
}

pub(super) fn graph_of(me: u32, comm: c_int) -> MpiResult<Rc<Topology>> {
    let (t, _) = topology_of(me, comm)?;
    match *t {
        Topology::Graph(_) => Ok(t),
        _ => Err(mpi_err(
            topo::MPI_ERR_TOPOLOGY,
            "communicator has no graph topology",
        )),
    }
}

pub(super) fn dist_graph_of(me: u32, comm: c_int) -> MpiResult<Rc<Topology>> {
    let (t, _) = topology_of(me, comm)?;
    match *t {
        Topology::DistGraph(_) => Ok(t),
        _ => Err(mpi_err(
            topo::MPI_ERR_TOPOLOGY,
            "communicator has no distributed graph topology",
        )),
    }
}

/// Runs the topology query `call` of `comm` for this rank: an error goes to
/// the handler of `comm`.
fn query(call: &str, comm: c_int, f: impl FnOnce(u32) -> MpiResult<()>) -> c_int {
    let me = rt::current_rank();
    result(me, comm, call, f(me))
}

/// Runs `call`, which derives from `comm` a communicator with a topology,
/// under its entry guard: the new handle goes to `new`, an error to the
/// handler of `comm`.
unsafe fn create(
    call: &'static str,
    comm: c_int,
    new: *mut c_int,
    f: impl FnOnce(u32) -> MpiResult<c_int>,
) -> c_int {
    let g = enter_call(call);
    let r = if new.is_null() {
        Err(mpi_err(
            rt::MPI_ERR_ARG,
            "the new communicator's handle pointer is NULL",
        ))
    } else {
        f(g.me)
    };
    // Safety: `new` is valid for a write (the caller's contract).
    unsafe { created(g.me, comm, call, r, new) }
}

/// Writes a new communicator handle, or applies the error handler.
pub(super) unsafe fn created(
    me: u32,
    comm: c_int,
    call: &str,
    r: MpiResult<c_int>,
    new: *mut c_int,
) -> c_int {
    // Safety: the caller upholds this function's contract (see its `# Safety`).
    unsafe {
        match r {
            Ok(h) => {
                set(new, h);
                MPI_SUCCESS
            }
            Err(e) => entry::handle_error(me, comm, call, e),
        }
    }
}

// ------------------------------------------------------------------ mapping

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Cart_map(
    comm: c_int,
    ndims: c_int,
    dims: *const c_int,
    _periods: *const c_int,
    newrank: *mut c_int,
) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        query("MPI_Cart_map", comm, |me| {
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
        })
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Graph_map(
    comm: c_int,
    nnodes: c_int,
    _index: *const c_int,
    _edges: *const c_int,
    newrank: *mut c_int,
) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        query("MPI_Graph_map", comm, |me| {
            let c = intra_view(me, comm)?;
            if nnodes < 0 || nnodes > c.size {
                return Err(mpi_err(
                    rt::MPI_ERR_ARG,
                    format!("graph of {nnodes} nodes on {} ranks", c.size),
                ));
            }
            set(newrank, if c.rank < nnodes { c.rank } else { MPI_UNDEFINED });
            Ok(())
        })
    }
}

// ------------------------------------------------------------------ graph topologies

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Graph_create(
    comm: c_int,
    nnodes: c_int,
    index: *const c_int,
    edges: *const c_int,
    _reorder: c_int,
    new: *mut c_int,
) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        create("MPI_Graph_create", comm, new, |me| {
            let c = intra_view(me, comm)?;
            let n = count(nnodes, "nnodes")?;
            arg_array(index, n, "index")?;
            let index = ints(n, index);
            let nedges = count(index.last().copied().unwrap_or(0), "edge count")?;
            arg_array(edges, nedges, "edges")?;
            let graph = Graph::new(c.size, index, ints(nedges, edges))?;
            let group: Vec<u32> = with_world(|w| {
                w.ranks[me as usize]
                    .comm(comm)
                    .map(|e| e.shared.group[..nnodes as usize].to_vec())
            })?;
            // An empty graph gives MPI_COMM_NULL everywhere (MPI 2.1).
            let h = crate::mpi::comm::derive_comm(me, comm, -8, Some(group))?;
            attach_topology(me, h, Topology::Graph(graph));
            Ok(h)
        })
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Graphdims_get(
    comm: c_int,
    nnodes: *mut c_int,
    nedges: *mut c_int,
) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        query("MPI_Graphdims_get", comm, |me| {
            graph_of(me, comm).map(|t| {
                if let Topology::Graph(gr) = &*t {
                    set(nnodes, gr.index.len() as c_int);
                    set(nedges, gr.edges.len() as c_int);
                }
            })
        })
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Graph_get(
    comm: c_int,
    maxindex: c_int,
    maxedges: c_int,
    index: *mut c_int,
    edges: *mut c_int,
) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        query("MPI_Graph_get", comm, |me| {
            graph_of(me, comm).map(|t| {
                if let Topology::Graph(gr) = &*t {
                    for (i, &x) in gr.index.iter().take(maxindex.max(0) as usize).enumerate() {
                        *index.add(i) = x;
                    }
                    for (i, &x) in gr.edges.iter().take(maxedges.max(0) as usize).enumerate() {
                        *edges.add(i) = x;
                    }
                }
            })
        })
    }
}

/// Neighbours of `rank` in the graph topology of `comm`.
pub(super) fn graph_neighbors(me: u32, comm: c_int, rank: c_int) -> MpiResult<Vec<i32>> {
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
pub(super) unsafe extern "C" fn MPI_Graph_neighbors_count(comm: c_int, rank: c_int, n: *mut c_int) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        query("MPI_Graph_neighbors_count", comm, |me| {
            graph_neighbors(me, comm, rank).map(|v| set(n, v.len() as c_int))
        })
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Graph_neighbors(
    comm: c_int,
    rank: c_int,
    maxneighbors: c_int,
    neighbors: *mut c_int,
) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        query("MPI_Graph_neighbors", comm, |me| {
            graph_neighbors(me, comm, rank).map(|v| {
                for (i, &x) in v.iter().take(maxneighbors.max(0) as usize).enumerate() {
                    *neighbors.add(i) = x;
                }
            })
        })
    }
}

// ------------------------------------------------------------------ distributed graphs

/// Whether a weight array means "weighted" (anything but `MPI_UNWEIGHTED`).
pub(super) fn is_weighted(weights: *const c_int) -> bool {
    weights as usize != UNWEIGHTED
}

/// `n` weights, or 1s for `MPI_UNWEIGHTED` / `MPI_WEIGHTS_EMPTY` / NULL.
pub(super) unsafe fn weights_of(n: usize, weights: *const c_int) -> Vec<i32> {
    // Safety: the caller upholds this function's contract (see its `# Safety`).
    unsafe {
        match weights as usize {
            0 | UNWEIGHTED | WEIGHTS_EMPTY => vec![1; n],
            _ => ints(n, weights),
        }
    }
}

pub(super) fn check_ranks(size: i32, ranks: &[i32]) -> MpiResult<()> {
    match ranks.iter().find(|&&r| r < 0 || r >= size) {
        Some(r) => Err(mpi_err(
            rt::MPI_ERR_RANK,
            format!("graph edge to rank {r} outside 0..{size}"),
        )),
        None => Ok(()),
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Dist_graph_create_adjacent(
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
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        create("MPI_Dist_graph_create_adjacent", comm, new, |me| {
            let c = intra_view(me, comm)?;
            let (nin, nout) = (count(indegree, "indegree")?, count(outdegree, "outdegree")?);
            arg_array(sources, nin, "sources")?;
            arg_array(destinations, nout, "destinations")?;
            let graph = DistGraph {
                sources: ints(nin, sources),
                source_weights: weights_of(nin, sourceweights),
                destinations: ints(nout, destinations),
                destination_weights: weights_of(nout, destweights),
                weighted: is_weighted(sourceweights) && is_weighted(destweights),
            };
            check_ranks(c.size, &graph.sources)?;
            check_ranks(c.size, &graph.destinations)?;
            let h = crate::mpi::comm::derive_comm(me, comm, -9, None)?;
            attach_topology(me, h, Topology::DistGraph(graph));
            Ok(h)
        })
    }
}

/// Delivers every edge `[source, destination, weight]` given by any rank to
/// both of its ends (one alltoall of counts, one alltoallv of edges, on the
/// parent communicator), and returns the edges that reach me, ordered by
/// the rank that gave them, then as given.
pub(super) fn exchange_edges(c: CommView, mine: &[[i32; 3]]) -> MpiResult<Vec<[i32; 3]>> {
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
pub(super) unsafe extern "C" fn MPI_Dist_graph_create(
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
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        create("MPI_Dist_graph_create", comm, new, |me| {
            let c = intra_view(me, comm)?;
            let n = count(n, "source count")?;
            arg_array(sources, n, "sources")?;
            arg_array(degrees, n, "degrees")?;
            let srcs = ints(n, sources);
            let degs = counts(n, degrees)?;
            let total: usize = degs.iter().sum();
            arg_array(destinations, total, "destinations")?;
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
            let h = crate::mpi::comm::derive_comm(me, comm, -10, None)?;
            attach_topology(me, h, Topology::DistGraph(graph));
            Ok(h)
        })
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Dist_graph_neighbors_count(
    comm: c_int,
    indegree: *mut c_int,
    outdegree: *mut c_int,
    weighted: *mut c_int,
) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        query("MPI_Dist_graph_neighbors_count", comm, |me| {
            dist_graph_of(me, comm).map(|t| {
                if let Topology::DistGraph(d) = &*t {
                    set(indegree, d.sources.len() as c_int);
                    set(outdegree, d.destinations.len() as c_int);
                    set(weighted, d.weighted as c_int);
                }
            })
        })
    }
}

/// Copies up to `max` entries of `v` to `p` (skipped for the special
/// weight addresses).
pub(super) unsafe fn copy_out(v: &[i32], max: c_int, p: *mut c_int) {
    // Safety: the caller upholds this function's contract (see its `# Safety`).
    unsafe {
        if matches!(p as usize, 0 | UNWEIGHTED | WEIGHTS_EMPTY) {
            return;
        }
        for (i, &x) in v.iter().take(max.max(0) as usize).enumerate() {
            *p.add(i) = x;
        }
    }
}

#[no_mangle]
pub(super) unsafe extern "C" fn MPI_Dist_graph_neighbors(
    comm: c_int,
    maxindegree: c_int,
    sources: *mut c_int,
    sourceweights: *mut c_int,
    maxoutdegree: c_int,
    destinations: *mut c_int,
    destweights: *mut c_int,
) -> c_int {
    // Safety: the program calls this as MPI (or the C API it implements) specifies: its pointers are valid for what it passes.
    unsafe {
        query("MPI_Dist_graph_neighbors", comm, |me| {
            dist_graph_of(me, comm).map(|t| {
                if let Topology::DistGraph(d) = &*t {
                    copy_out(&d.sources, maxindegree, sources);
                    copy_out(&d.destinations, maxoutdegree, destinations);
                    if d.weighted {
                        copy_out(&d.source_weights, maxindegree, sourceweights);
                        copy_out(&d.destination_weights, maxoutdegree, destweights);
                    }
                }
            })
        })
    }
}

// ------------------------------------------------------------------ neighbourhood collectives

/// My view of `comm` and my neighbours in its topology.
pub(super) fn neighborhood(me: u32, comm: c_int) -> MpiResult<(CommView, Neighbors)> {
    let c = intra_view(me, comm)?;
    let (t, rank) = topology_of(me, comm)?;
    Ok((c, t.neighbors(rank)))
}

/// Blocks at byte offsets `displs` of `buf`.
pub(super) fn blocks(buf: *const c_void, counts: &[usize], displs: &[isize], types: &[i32]) -> Vec<Block> {
    (0..counts.len())
        .map(|k| Block {
            buf: (buf as *mut u8).wrapping_offset(displs[k]),
            count: counts[k],
            dtype: types[k],
        })
        .collect()
}

/// `n` blocks of `count` elements of `dtype`, one after the other.
pub(super) fn regular_blocks(
    buf: *const c_void,
    n: usize,
    count: usize,
    dtype: i32,
) -> MpiResult<Vec<Block>> {
    let step = count as isize * extent(dtype)?;
    let displs: Vec<isize> = (0..n as isize).map(|k| k * step).collect();
    Ok(blocks(buf, &vec![count; n], &displs, &vec![dtype; n]))
}

/// `n` times the block of `count` elements of `dtype` at `buf` (a send
/// buffer every destination gets whole).
pub(super) fn repeated_block(buf: *const c_void, n: usize, count: usize, dtype: i32) -> Vec<Block> {
    let block = Block {
        buf: buf as *mut u8,
        count,
        dtype,
    };
    vec![block; n]
}

/// Blocks at displacements `displs` counted in extents of `dtype`.
pub(super) unsafe fn v_blocks(
    buf: *const c_void,
    n: usize,
    counts_p: *const c_int,
    displs_p: *const c_int,
    dtype: i32,
) -> MpiResult<Vec<Block>> {
    // Safety: the caller upholds this function's contract (see its `# Safety`).
    unsafe {
        let ext = extent(dtype)?;
        let displs: Vec<isize> = ints(n, displs_p).iter().map(|&d| d as isize * ext).collect();
        Ok(blocks(buf, &counts(n, counts_p)?, &displs, &vec![dtype; n]))
    }
}

pub(super) fn no_in_place(sbuf: *const c_void) -> MpiResult<()> {
    if sbuf as *mut u8 == IN_PLACE {
        return Err(mpi_err(
            rt::MPI_ERR_BUFFER,
            "MPI_IN_PLACE is not allowed in neighbourhood collectives",
        ));
    }
    Ok(())
}

/// Starts the collective `start` describes; the blocking form (`req` `None`)
/// waits for it.
pub(super) unsafe fn neighbor_call(
    call: &'static str,
    comm: c_int,
    req: Option<*mut c_int>,
    start: impl FnOnce(&Neighbors) -> MpiResult<(Vec<Block>, Vec<Block>)>,
) -> c_int {
    // Safety: the caller upholds this function's contract (see its `# Safety`).
    unsafe {
        let g = enter_call(call);
        let r = (|| -> MpiResult<u32> {
            coll_check::check(g.me, comm, CollSig::new(call))?;
            let (c, nb) = neighborhood(g.me, comm)?;
            let (sends, recvs) = start(&nb)?;
            neighbor::ineighbor(c, nb, sends, recvs)
        })();
        // A null request (passed to a non-blocking form too) waits, as the blocking form.
        let req = req.unwrap_or(std::ptr::null_mut());
        match r {
            Ok(id) if req.is_null() => {
                rt::wait(g.me, id, call);
                MPI_SUCCESS
            }
            r => started(g.me, comm, call, req, r),
        }
    }
}

/// MPI_(I)neighbor_allgather and MPI_(I)neighbor_alltoall (`split`: the send
/// buffer holds one block per destination, not one block for all).
unsafe fn regular(
    call: &'static str,
    s: *const c_void,
    sc: c_int,
    st: c_int,
    r: *mut c_void,
    rc: c_int,
    rtype: c_int,
    comm: c_int,
    req: Option<*mut c_int>,
    split: bool,
) -> c_int {
    // Safety: the caller upholds this function's contract (see its `# Safety`).
    unsafe {
        neighbor_call(call, comm, req, |nb| {
            no_in_place(s)?;
            // A side with no neighbours moves no data: its arguments are not
            // significant (a process of a graph may have no destinations).
            if !nb.destinations.is_empty() {
                arg_data(s, sc, st, SEND)?;
            }
            if !nb.sources.is_empty() {
                arg_data(r, rc, rtype, RECV)?;
            }
            let n = nb.destinations.len();
            let sends = if split {
                regular_blocks(s, n, count(sc, "count")?, st)?
            } else {
                repeated_block(s, n, count(sc, "count")?, st)
            };
            Ok((
                sends,
                regular_blocks(r, nb.sources.len(), count(rc, "count")?, rtype)?,
            ))
        })
    }
}

super::coll::coll_forms! {
    MPI_Neighbor_allgather / MPI_Ineighbor_allgather(
        s: *const c_void, sc: c_int, st: c_int, r: *mut c_void, rc: c_int, rtype: c_int, comm: c_int,
    ) => regular(false);
    MPI_Neighbor_allgatherv / MPI_Ineighbor_allgatherv(
        s: *const c_void, sc: c_int, st: c_int,
        r: *mut c_void, rcs: *const c_int, rds: *const c_int, rtype: c_int, comm: c_int,
    ) => |call, req| neighbor_call(call, comm, req, |nb| {
        no_in_place(s)?;
        if !nb.destinations.is_empty() {
            arg_data(s, sc, st, SEND)?;
        }
        arg_data_v(r, nb.sources.len(), rcs, rds, Err(rtype), RECV_V)?;
        let sends = repeated_block(s, nb.destinations.len(), count(sc, "count")?, st);
        Ok((sends, v_blocks(r, nb.sources.len(), rcs, rds, rtype)?))
    });
    MPI_Neighbor_alltoall / MPI_Ineighbor_alltoall(
        s: *const c_void, sc: c_int, st: c_int, r: *mut c_void, rc: c_int, rtype: c_int, comm: c_int,
    ) => regular(true);
    MPI_Neighbor_alltoallv / MPI_Ineighbor_alltoallv(
        s: *const c_void, scs: *const c_int, sds: *const c_int, st: c_int,
        r: *mut c_void, rcs: *const c_int, rds: *const c_int, rtype: c_int, comm: c_int,
    ) => |call, req| neighbor_call(call, comm, req, |nb| {
        no_in_place(s)?;
        arg_data_v(s, nb.destinations.len(), scs, sds, Err(st), SEND)?;
        arg_data_v(r, nb.sources.len(), rcs, rds, Err(rtype), RECV)?;
        Ok((
            v_blocks(s, nb.destinations.len(), scs, sds, st)?,
            v_blocks(r, nb.sources.len(), rcs, rds, rtype)?,
        ))
    });
    MPI_Neighbor_alltoallw / MPI_Ineighbor_alltoallw(
        s: *const c_void, scs: *const c_int, sds: *const isize, sts: *const c_int,
        r: *mut c_void, rcs: *const c_int, rds: *const isize, rts: *const c_int, comm: c_int,
    ) => |call, req| neighbor_call(call, comm, req, |nb| {
        no_in_place(s)?;
        arg_data_v(s, nb.destinations.len(), scs, sds, Ok(sts), SEND)?;
        arg_data_v(r, nb.sources.len(), rcs, rds, Ok(rts), RECV)?;
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
    });
}
