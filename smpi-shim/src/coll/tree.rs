//! Tree topologies over a communicator (Open MPI's `coll_base_topo` shapes),
//! given as my parent and my children in real ranks.

/// My place in a tree.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Tree {
    pub parent: Option<i32>,
    pub children: Vec<i32>,
}

fn real(v: i32, root: i32, n: i32) -> i32 {
    (v + root) % n
}

fn virt(rank: i32, root: i32, n: i32) -> i32 {
    (rank - root + n) % n
}

/// Binomial tree: the parent of `v` clears its lowest set bit; children are
/// `v + 1, v + 2, v + 4, ...` below that bit (increasing order, as Open MPI's
/// `bmtree`). Subtrees are contiguous in virtual rank.
pub(crate) fn binomial(n: i32, rank: i32, root: i32) -> Tree {
    let v = virt(rank, root, n);
    let mut t = Tree::default();
    let mut mask = 1;
    while mask < n {
        if v & mask != 0 {
            t.parent = Some(real(v - mask, root, n));
            break;
        }
        if v + mask < n {
            t.children.push(real(v + mask, root, n));
        }
        mask <<= 1;
    }
    t
}

/// `fanout` chains of consecutive virtual ranks hanging from the root
/// (Open MPI's `build_chain`); `fanout = 1` is a pipeline.
pub(crate) fn chain(n: i32, rank: i32, root: i32, fanout: i32) -> Tree {
    let v = virt(rank, root, n);
    let mut t = Tree::default();
    if n <= 1 {
        return t;
    }
    let fanout = fanout.clamp(1, n - 1);
    let len = (n - 1) / fanout;
    let mark = (n - 1) % fanout;
    // chain k covers virtual ranks [start(k), start(k) + length(k)).
    let length = |k: i32| if k < mark { len + 1 } else { len };
    let start = |k: i32| 1 + k * len + k.min(mark);
    if v == 0 {
        t.children = (0..fanout).map(|k| real(start(k), root, n)).collect();
        return t;
    }
    let k = (0..fanout)
        .find(|&k| v < start(k) + length(k))
        .unwrap_or(fanout - 1);
    t.parent = Some(if v == start(k) { root } else { real(v - 1, root, n) });
    if v + 1 < start(k) + length(k) {
        t.children.push(real(v + 1, root, n));
    }
    t
}

/// Open MPI's `build_tree` with fanout `k`: virtual rank `v` at level `l`
/// (levels hold k^0, k^1, ... ranks) has children `v + k^l (i + 1)`,
/// i = 0..k-1. With k = 2 the odd virtual ranks form the subtree of 1 and the
/// even ones that of 2.
pub(crate) fn ompi_tree(n: i32, rank: i32, root: i32, k: i32) -> Tree {
    let v = virt(rank, root, n);
    let mut t = Tree::default();
    if n < 2 {
        return t;
    }
    // level of v: the smallest l with (k^0 + ... + k^l) > v
    let (mut level, mut nodes, mut width) = (0, 1, 1);
    while nodes <= v {
        width *= k;
        nodes += width;
        level += 1;
    }
    let delta = k.pow(level);
    for i in 0..k {
        let c = v + delta * (i + 1);
        if c >= n {
            break;
        }
        t.children.push(real(c, root, n));
    }
    if v > 0 {
        let limit = (delta - 1) / (k - 1); // ranks above my level
        let mut p = v;
        if p < k {
            p = 0;
        } else {
            while p >= limit {
                p -= delta / k;
            }
        }
        t.parent = Some(real(p, root, n));
    }
    t
}

/// In-order binary tree rooted at rank `n - 1` (Open MPI's
/// `build_in_order_bintree`): the node of ranks `[lo, hi]` is `hi`; its
/// children are the roots of `[lo + n/2, hi - 1]` and `[lo, lo + n/2 - 1]`.
/// Every subtree is a contiguous range of ranks, so combining children in
/// rank order keeps non-commutative operations right.
pub(crate) fn in_order_binary(n: i32, rank: i32) -> Tree {
    let (mut lo, mut hi) = (0, n - 1);
    let mut parent = None;
    loop {
        let size = hi - lo + 1;
        let right = size / 2; // ranks [lo, lo + right - 1]
        let right_root = (right > 0).then_some(lo + right - 1);
        let left_root = (lo + right < hi).then_some(hi - 1); // ranks [lo + right, hi - 1]
        if rank == hi {
            return Tree {
                parent,
                children: left_root.into_iter().chain(right_root).collect(),
            };
        }
        parent = Some(hi);
        if rank < lo + right {
            hi = lo + right - 1;
        } else {
            lo += right;
            hi -= 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every rank but the root has a parent that lists it as a child.
    fn consistent(n: i32, root: i32, f: impl Fn(i32) -> Tree) {
        let trees: Vec<Tree> = (0..n).map(&f).collect();
        for r in 0..n {
            match trees[r as usize].parent {
                None => assert_eq!(r, root, "n={n} root={root}: {r} has no parent"),
                Some(p) => assert!(
                    trees[p as usize].children.contains(&r),
                    "n={n}: parent {p} of {r}"
                ),
            }
            for &c in &trees[r as usize].children {
                assert_eq!(trees[c as usize].parent, Some(r), "n={n}: child {c} of {r}");
            }
        }
    }

    #[test]
    fn trees_are_trees() {
        for n in 1..40 {
            for root in [0, n / 2, n - 1] {
                consistent(n, root, |r| binomial(n, r, root));
                consistent(n, root, |r| ompi_tree(n, r, root, 2));
                consistent(n, root, |r| ompi_tree(n, r, root, 3));
                for f in [1, 2, 4, n / 2] {
                    consistent(n, root, |r| chain(n, r, root, f));
                }
            }
            consistent(n, n - 1, |r| in_order_binary(n, r));
        }
        assert_eq!(binomial(4, 0, 0).children, vec![1, 2]);
        assert_eq!(chain(4, 1, 0, 1).children, vec![2]);
        assert_eq!(in_order_binary(3, 2).children, vec![1, 0]);
        assert_eq!(ompi_tree(8, 1, 0, 2).children, vec![3, 5]);
        assert_eq!(ompi_tree(8, 3, 0, 2).children, vec![7]);
        assert_eq!(ompi_tree(8, 5, 0, 2).parent, Some(1));
    }
}
