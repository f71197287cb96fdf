//! Process topologies (MPI chapter 8).
//!
//! - [`Topology`]: what a communicator created by `MPI_Cart_create`,
//!   `MPI_Graph_create` or `MPI_Dist_graph_create(_adjacent)` carries (kept by
//!   `MPI_Comm_dup`), with its neighbour lists ([`Topology::neighbors`]; the
//!   neighbourhood collectives are in [`crate::coll::neighbor`]);
//! - [`dims_create`]: `MPI_Dims_create`'s balanced factorisation.
//!
//! Ranks are never reordered (`reorder` is ignored, as in SMPI): topology rank
//! `i` is rank `i` of the parent communicator.

use crate::mpi::{self as rt, mpi_err, MpiResult, MPI_PROC_NULL};

/// `MPI_GRAPH`, `MPI_CART`, `MPI_DIST_GRAPH` (values of `mpi.h`).
pub(crate) const MPI_GRAPH: i32 = 1;
pub(crate) const MPI_CART: i32 = 2;
pub(crate) const MPI_DIST_GRAPH: i32 = 3;

/// `MPI_ERR_TOPOLOGY` and `MPI_ERR_DIMS`.
pub(crate) const MPI_ERR_TOPOLOGY: i32 = 11;
pub(crate) const MPI_ERR_DIMS: i32 = 12;

/// Tag of neighbourhood-collective messages (collective context). Cartesian
/// ones add the slot so that the -1 and +1 messages between the same two
/// ranks (periodic dimensions of size 1 or 2) cannot be swapped.
const TAG_NEIGHBOR: i32 = 200;

/// A Cartesian grid, row-major (the last dimension varies fastest).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Cart {
    pub dims: Vec<i32>,
    pub periods: Vec<bool>,
}

impl Cart {
    /// Number of grid points.
    pub(crate) fn size(&self) -> i32 {
        self.dims.iter().product()
    }

    /// Coordinates of `rank`.
    pub(crate) fn coords(&self, mut rank: i32) -> Vec<i32> {
        let mut c = vec![0; self.dims.len()];
        for i in (0..self.dims.len()).rev() {
            c[i] = rank % self.dims[i];
            rank /= self.dims[i];
        }
        c
    }

    /// Rank at `coords` (wrapped along periodic dimensions); `None` outside
    /// the grid.
    pub(crate) fn rank_of(&self, coords: &[i32]) -> Option<i32> {
        let mut r = 0;
        for (i, &d) in self.dims.iter().enumerate() {
            let mut x = coords[i];
            if self.periods[i] {
                x = x.rem_euclid(d);
            } else if x < 0 || x >= d {
                return None;
            }
            r = r * d + x;
        }
        Some(r)
    }

    /// `MPI_Cart_shift`: (source, destination) of `rank` for a shift of
    /// `disp` along `dim`, `MPI_PROC_NULL` off a non-periodic edge.
    pub(crate) fn shift(&self, rank: i32, dim: usize, disp: i32) -> (i32, i32) {
        let co = self.coords(rank);
        let mut up = co.clone();
        up[dim] += disp;
        let mut down = co;
        down[dim] -= disp;
        (
            self.rank_of(&down).unwrap_or(MPI_PROC_NULL),
            self.rank_of(&up).unwrap_or(MPI_PROC_NULL),
        )
    }

    /// Neighbours in the standard's order: for each dimension, the -1 then
    /// the +1 neighbour (`MPI_PROC_NULL` off a non-periodic edge).
    pub(crate) fn neighbors(&self, rank: i32) -> Vec<i32> {
        (0..self.dims.len())
            .flat_map(|d| {
                let (minus, plus) = self.shift(rank, d, 1);
                [minus, plus]
            })
            .collect()
    }
}

/// A graph topology as `MPI_Graph_create` gives it: `index[i]` is the
/// number of edges of nodes `0..=i`, `edges` their neighbours in node order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Graph {
    pub index: Vec<i32>,
    pub edges: Vec<i32>,
}

impl Graph {
    /// Checks `MPI_Graph_create`'s arguments for a communicator of `size` ranks.
    pub(crate) fn new(size: i32, index: Vec<i32>, edges: Vec<i32>) -> MpiResult<Graph> {
        let nnodes = index.len() as i32;
        if nnodes > size {
            return Err(mpi_err(
                rt::MPI_ERR_ARG,
                format!("graph of {nnodes} nodes on a communicator of {size} ranks"),
            ));
        }
        let mut prev = 0;
        for &x in &index {
            if x < prev {
                return Err(mpi_err(
                    rt::MPI_ERR_ARG,
                    format!("decreasing graph index {index:?}"),
                ));
            }
            prev = x;
        }
        if let Some(&e) = edges.iter().find(|&&e| e < 0 || e >= nnodes) {
            return Err(mpi_err(
                rt::MPI_ERR_ARG,
                format!("graph edge to node {e} outside 0..{nnodes}"),
            ));
        }
        Ok(Graph { index, edges })
    }

    /// Neighbours of `rank`, in the order given at creation.
    pub(crate) fn neighbors(&self, rank: i32) -> &[i32] {
        let r = rank as usize;
        let start = if r == 0 { 0 } else { self.index[r - 1] as usize };
        &self.edges[start..self.index[r] as usize]
    }
}

/// One rank's view of a distributed graph: its incoming and outgoing edges.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DistGraph {
    pub sources: Vec<i32>,
    pub source_weights: Vec<i32>,
    pub destinations: Vec<i32>,
    pub destination_weights: Vec<i32>,
    /// False when created with `MPI_UNWEIGHTED` (the weights are then all 1).
    pub weighted: bool,
}

/// The topology attached to a communicator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Topology {
    Cart(Cart),
    Graph(Graph),
    DistGraph(DistGraph),
}

/// Whom a rank receives from and sends to in a neighbourhood collective, in
/// buffer-slot order. `MPI_PROC_NULL` entries keep their slot but carry no
/// message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Neighbors {
    pub sources: Vec<i32>,
    pub destinations: Vec<i32>,
    /// Cartesian slots come in (-1, +1) pairs per dimension (see [`TAG_NEIGHBOR`]).
    cartesian: bool,
}

impl Neighbors {
    pub(crate) fn send_tag(&self, slot: usize) -> i32 {
        if self.cartesian {
            TAG_NEIGHBOR + slot as i32
        } else {
            TAG_NEIGHBOR
        }
    }

    /// What we receive in slot 2d (from the -1 neighbour) is what that
    /// neighbour sent to its +1 neighbour (slot 2d+1), and conversely.
    pub(crate) fn recv_tag(&self, slot: usize) -> i32 {
        if self.cartesian {
            TAG_NEIGHBOR + (slot ^ 1) as i32
        } else {
            TAG_NEIGHBOR
        }
    }
}

impl Topology {
    /// `MPI_Topo_test`'s answer.
    pub(crate) fn kind(&self) -> i32 {
        match self {
            Topology::Cart(_) => MPI_CART,
            Topology::Graph(_) => MPI_GRAPH,
            Topology::DistGraph(_) => MPI_DIST_GRAPH,
        }
    }

    /// The neighbour lists of `rank` for the neighbourhood collectives.
    pub(crate) fn neighbors(&self, rank: i32) -> Neighbors {
        match self {
            Topology::Cart(c) => {
                let n = c.neighbors(rank);
                Neighbors {
                    sources: n.clone(),
                    destinations: n,
                    cartesian: true,
                }
            }
            Topology::Graph(g) => {
                let n = g.neighbors(rank).to_vec();
                Neighbors {
                    sources: n.clone(),
                    destinations: n,
                    cartesian: false,
                }
            }
            Topology::DistGraph(d) => Neighbors {
                sources: d.sources.clone(),
                destinations: d.destinations.clone(),
                cartesian: false,
            },
        }
    }
}

/// `MPI_Dims_create`: fills the zero entries of `dims` with the most balanced
/// factorisation of `nnodes / (product of the non-zero entries)`, in
/// non-increasing order.
///
/// "Most balanced" follows MPICH (whose test suite checks the exact answer):
/// the smallest difference between the largest and the smallest factor;
/// among equals, the one whose factors, compared from the smallest up, are
/// largest (e.g. 70416 in 4-d: 163 x 9 x 8 x 6, not 163 x 12 x 6 x 6).
pub(crate) fn dims_create(nnodes: i32, dims: &mut [i32]) -> MpiResult<()> {
    if nnodes < 1 {
        return Err(mpi_err(rt::MPI_ERR_ARG, format!("invalid node count {nnodes}")));
    }
    if let Some(&d) = dims.iter().find(|&&d| d < 0) {
        return Err(mpi_err(MPI_ERR_DIMS, format!("negative dimension {d}")));
    }
    let fixed: i64 = dims.iter().filter(|&&d| d > 0).map(|&d| d as i64).product();
    let free: Vec<usize> = (0..dims.len()).filter(|&i| dims[i] == 0).collect();
    if free.is_empty() {
        return if fixed == nnodes as i64 {
            Ok(())
        } else {
            Err(mpi_err(
                MPI_ERR_DIMS,
                format!("dimensions {dims:?} do not multiply to {nnodes}"),
            ))
        };
    }
    if nnodes as i64 % fixed != 0 {
        return Err(mpi_err(
            MPI_ERR_DIMS,
            format!("{nnodes} nodes are not a multiple of the given dimensions {dims:?}"),
        ));
    }
    let factors = balanced_factors((nnodes as i64 / fixed) as i32, free.len());
    for (&i, f) in free.iter().zip(factors) {
        dims[i] = f;
    }
    Ok(())
}

/// `n >= 1` as a product of `k` factors, non-increasing, as balanced as
/// [`dims_create`] says.
fn balanced_factors(n: i32, k: usize) -> Vec<i32> {
    if n == 1 || k == 0 {
        return vec![1; k];
    }
    let n = n as i64;
    let mut divisors = Vec::new();
    let mut d = 1;
    while d * d <= n {
        if n % d == 0 {
            divisors.push(d);
            if d * d != n {
                divisors.push(n / d);
            }
        }
        d += 1;
    }
    divisors.sort_unstable();
    let mut search = FactorSearch {
        divisors,
        current: Vec::with_capacity(k),
        best: None,
    };
    search.run(n, k, n);
    search
        .best
        .expect("n = n x 1 x ... x 1 is always a factorisation")
        .into_iter()
        .map(|f| f as i32)
        .collect()
}

/// Depth-first search over non-increasing factorisations, pruned by the best
/// spread found so far.
struct FactorSearch {
    divisors: Vec<i64>,
    current: Vec<i64>,
    best: Option<Vec<i64>>,
}

/// Whether `f^e >= x` (without overflow).
fn pow_at_least(f: i64, e: usize, x: i64) -> bool {
    let mut p = 1i64;
    for _ in 0..e {
        p = p.saturating_mul(f);
        if p >= x {
            return true;
        }
    }
    p >= x
}

impl FactorSearch {
    fn spread(v: &[i64]) -> i64 {
        v[0] - v[v.len() - 1]
    }

    /// Whether `a` beats `b`: smaller spread, then larger factors from the
    /// smallest up.
    fn better(a: &[i64], b: &[i64]) -> bool {
        match Self::spread(a).cmp(&Self::spread(b)) {
            std::cmp::Ordering::Less => true,
            std::cmp::Ordering::Greater => false,
            std::cmp::Ordering::Equal => a.iter().rev().gt(b.iter().rev()),
        }
    }

    /// Chooses the remaining `left` factors of `rest`, each at most `max`.
    fn run(&mut self, rest: i64, left: usize, max: i64) {
        if left == 1 {
            if rest <= max {
                self.current.push(rest);
                let improves = match &self.best {
                    None => true,
                    Some(b) => Self::better(&self.current, b),
                };
                if improves {
                    self.best = Some(self.current.clone());
                }
                self.current.pop();
            }
            return;
        }
        // Smallest admissible factor first: the most balanced candidates come
        // first, so that a good bound appears early.
        for i in 0..self.divisors.len() {
            let f = self.divisors[i];
            if f > max || f > rest {
                break;
            }
            // f is the largest of the `left` remaining factors.
            if rest % f != 0 || !pow_at_least(f, left, rest) {
                continue;
            }
            let largest = self.current.first().copied().unwrap_or(f);
            if let Some(b) = &self.best {
                // Every later factor is at least `largest - spread(best)`.
                let floor = (largest - Self::spread(b)).max(1);
                if f < floor {
                    continue;
                }
                if !at_least_product(rest / f, floor, left - 1) {
                    continue;
                }
            }
            self.current.push(f);
            self.run(rest / f, left - 1, f);
            self.current.pop();
        }
    }
}

/// Whether `x >= floor^e`, i.e. `x` can be a product of `e` factors that are
/// all at least `floor`.
fn at_least_product(x: i64, floor: i64, e: usize) -> bool {
    let mut p = 1i64;
    for _ in 0..e {
        p = p.saturating_mul(floor);
        if p > x {
            return false;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dims(n: i32, k: usize) -> Vec<i32> {
        let mut d = vec![0; k];
        dims_create(n, &mut d).unwrap();
        d
    }

    #[test]
    fn dims_are_balanced_and_non_increasing() {
        assert_eq!(dims(72, 2), [9, 8]);
        assert_eq!(dims(12, 2), [4, 3]);
        assert_eq!(dims(648, 5), [6, 4, 3, 3, 3]);
        assert_eq!(dims(70416, 4), [163, 9, 8, 6]);
        assert_eq!(dims(712656, 5), [101, 14, 9, 8, 7]);
        assert_eq!(dims(349920, 5), [18, 15, 12, 12, 9]);
        assert_eq!(dims(7, 3), [7, 1, 1]);
        assert_eq!(dims(1, 2), [1, 1]);
        assert_eq!(dims(1 << 17, 17), [2; 17]);
    }

    #[test]
    fn dims_keep_given_entries() {
        let mut d = [0, 3, 0];
        dims_create(24, &mut d).unwrap();
        assert_eq!(d, [4, 3, 2]);
        let mut bad = [5, 0];
        assert!(dims_create(12, &mut bad).is_err());
    }

    #[test]
    fn cart_neighbors_follow_the_standard_order() {
        let c = Cart {
            dims: vec![2, 3],
            periods: vec![false, true],
        };
        // rank 1 = (0, 1): dim 0: -1 off the edge, +1 = (1, 1) = 4; dim 1: (0, 0) = 0, (0, 2) = 2.
        assert_eq!(c.neighbors(1), [MPI_PROC_NULL, 4, 0, 2]);
        let ring1 = Cart {
            dims: vec![1],
            periods: vec![true],
        };
        assert_eq!(ring1.neighbors(0), [0, 0]);
    }

    #[test]
    fn graph_neighbors_come_from_the_index() {
        let g = Graph::new(3, vec![2, 3, 4], vec![1, 2, 0, 0]).unwrap();
        assert_eq!(g.neighbors(0), [1, 2]);
        assert_eq!(g.neighbors(2), [0]);
        assert!(Graph::new(3, vec![1], vec![5]).is_err());
    }
}
