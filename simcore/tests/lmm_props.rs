//! Property tests of the max-min solver (`simcore::lmm`) on random systems, plus SimGrid's
//! `maxmin_test.cpp` oracles that `lmm.rs`'s own unit tests do not already cover.
//!
//! A random system has shared and fat-pipe constraints with positive bounds, and variables with
//! random penalties (some 0 = disabled), optional bounds and 1–4 elements of random weights
//! (an element may be repeated: shared constraints then add the weights, fat pipes keep the
//! larger). Values come either from a small discrete set (to create exact ties) or from a
//! continuous range. The properties:
//!
//! - **feasibility**: `Σ w·x ≤ C` on shared constraints, `max w·x ≤ C` on fat pipes, `x ≤ bound`,
//!   within the solver's precision (1e-5 relative);
//! - **bottleneck**: every enabled variable either sits at its own bound or uses a saturated
//!   constraint on which its `x·penalty` is the largest among that constraint's enabled
//!   variables (the weighted max-min optimality condition). With feasibility this characterises
//!   the weighted max-min allocation, so it is a complete oracle;
//! - **weights**: two variables alone on one constraint get values in the inverse ratio of
//!   their penalties;
//! - **incremental = from scratch**: after random additions, removals, penalty, bound and
//!   capacity changes interleaved with incremental [`System::solve`] calls, the values equal
//!   those of a fresh system holding the final state and solved with [`System::solve_all`];
//!   every variable whose value changed during a `solve()` is in the list it returns;
//! - **insertion order does not matter**: permuting the variables gives the same values;
//! - **heap = scan, bit for bit**: [`System::solve`] (min-heap saturation loop) gives exactly
//!   the same `f64` values, and reports the same variables, as [`System::solve_reference`]
//!   (SimGrid's rescan of the light table), on random systems, after random incremental
//!   changes, and at scale (large random systems, fat-tree traffic with cross-traffic).

use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use simcore::lmm::{CnstId, Sharing, System, VarId};
use simcore::platform::{HostId, Platform, SharingPolicy};

/// `precision/work-amount`, the solver's default.
const EPS: f64 = 1e-5;

#[derive(Clone, Debug)]
struct CnstSpec {
    bound: f64,
    sharing: Sharing,
}

#[derive(Clone, Debug)]
struct VarSpec {
    /// 0 = disabled.
    penalty: f64,
    /// ≤ 0 = unbounded.
    bound: f64,
    /// (constraint index, weight), in expansion order; pairs may repeat.
    elems: Vec<(usize, f64)>,
}

#[derive(Clone, Debug)]
struct SysSpec {
    cnsts: Vec<CnstSpec>,
    vars: Vec<VarSpec>,
}

// ---------------------------------------------------------------------------------------------
// Strategies

/// A value from `discrete` (exact ties are likely) or uniform in `lo..hi`.
fn value(discrete: &'static [f64], lo: f64, hi: f64) -> BoxedStrategy<f64> {
    prop_oneof![prop::sample::select(discrete), lo..hi].boxed()
}

fn cnst_spec() -> impl Strategy<Value = CnstSpec> {
    (
        value(&[1.0, 2.0, 3.0, 5.0, 10.0, 100.0], 0.5, 100.0),
        prop::bool::weighted(0.25),
    )
        .prop_map(|(bound, fat)| CnstSpec {
            bound,
            sharing: if fat { Sharing::FatPipe } else { Sharing::Shared },
        })
}

fn penalty() -> BoxedStrategy<f64> {
    prop_oneof![
        1 => Just(0.0),
        7 => value(&[0.5, 1.0, 2.0, 4.0], 0.1, 10.0),
    ]
    .boxed()
}

fn var_bound() -> BoxedStrategy<f64> {
    prop_oneof![Just(-1.0), value(&[0.5, 1.0, 2.0, 5.0], 0.1, 50.0)].boxed()
}

fn weight() -> BoxedStrategy<f64> {
    value(&[1.0, 1.0, 0.05, 2.0, 0.5], 0.05, 2.0)
}

fn var_spec(n_cnsts: usize) -> impl Strategy<Value = VarSpec> {
    (
        penalty(),
        var_bound(),
        prop::collection::vec((0..n_cnsts, weight()), 1..=4),
    )
        .prop_map(|(penalty, bound, elems)| VarSpec {
            penalty,
            bound,
            elems,
        })
}

fn sys_spec() -> impl Strategy<Value = SysSpec> {
    (1usize..8).prop_flat_map(|n| {
        (
            prop::collection::vec(cnst_spec(), n),
            prop::collection::vec(var_spec(n), 1..40),
        )
            .prop_map(|(cnsts, vars)| SysSpec { cnsts, vars })
    })
}

// ---------------------------------------------------------------------------------------------
// Building and checking

fn build(spec: &SysSpec) -> (System, Vec<CnstId>, Vec<VarId>) {
    let mut sys = System::default();
    let cnsts: Vec<CnstId> = spec
        .cnsts
        .iter()
        .map(|c| sys.add_constraint(c.bound, c.sharing))
        .collect();
    let vars = spec
        .vars
        .iter()
        .map(|v| {
            let id = sys.add_variable(v.penalty, v.bound);
            for &(c, w) in &v.elems {
                sys.expand(cnsts[c], id, w);
            }
            id
        })
        .collect();
    (sys, cnsts, vars)
}

/// A variable's elements after merging repeated constraints (shared: sum, fat pipe: max).
fn merged(cnsts: &[CnstSpec], v: &VarSpec) -> Vec<(usize, f64)> {
    let mut out: Vec<(usize, f64)> = Vec::new();
    for &(c, w) in &v.elems {
        match out.iter_mut().find(|(c2, _)| *c2 == c) {
            Some((_, w2)) => match cnsts[c].sharing {
                Sharing::Shared => *w2 += w,
                Sharing::FatPipe => *w2 = w2.max(w),
            },
            None => out.push((c, w)),
        }
    }
    out
}

/// Checks feasibility and the bottleneck condition of `values` (one per variable of `spec`).
fn check_maxmin(spec: &SysSpec, values: &[f64]) -> Result<(), TestCaseError> {
    let elems: Vec<Vec<(usize, f64)>> = spec.vars.iter().map(|v| merged(&spec.cnsts, v)).collect();
    let enabled = |i: usize| spec.vars[i].penalty > 0.0;
    // Per constraint: load (sum or max of w·x) and the largest x·p among its enabled variables.
    let mut load = vec![0.0f64; spec.cnsts.len()];
    let mut max_xp = vec![0.0f64; spec.cnsts.len()];
    for (i, v) in spec.vars.iter().enumerate() {
        let x = values[i];
        prop_assert!(x.is_finite() && x >= 0.0, "variable {i}: value {x}");
        if !enabled(i) {
            prop_assert_eq!(x, 0.0, "disabled variable {} has a share", i);
            continue;
        }
        if v.bound > 0.0 {
            prop_assert!(
                x <= v.bound * (1.0 + EPS),
                "variable {i}: {x} above its bound {}",
                v.bound
            );
        }
        for &(c, w) in &elems[i] {
            match spec.cnsts[c].sharing {
                Sharing::Shared => load[c] += w * x,
                Sharing::FatPipe => load[c] = load[c].max(w * x),
            }
            max_xp[c] = max_xp[c].max(x * v.penalty);
        }
    }
    for (c, cs) in spec.cnsts.iter().enumerate() {
        prop_assert!(
            load[c] <= cs.bound * (1.0 + EPS),
            "constraint {c} ({:?}) exceeded: load {} > bound {}",
            cs.sharing,
            load[c],
            cs.bound
        );
    }
    for (i, v) in spec.vars.iter().enumerate() {
        if !enabled(i) {
            continue;
        }
        let x = values[i];
        if v.bound > 0.0 && x >= v.bound * (1.0 - EPS) {
            continue;
        }
        let bottleneck = elems[i].iter().find(|&&(c, _)| {
            let saturated = load[c] >= spec.cnsts[c].bound * (1.0 - 2.0 * EPS);
            saturated && x * v.penalty >= max_xp[c] * (1.0 - 2.0 * EPS)
        });
        prop_assert!(
            bottleneck.is_some(),
            "variable {i} (x={x}, p={}, bound={}) has no bottleneck; its constraints (index, \
             load/bound, max x·p): {:?}",
            v.penalty,
            v.bound,
            elems[i]
                .iter()
                .map(|&(c, _)| (c, load[c] / spec.cnsts[c].bound, max_xp[c]))
                .collect::<Vec<_>>()
        );
    }
    Ok(())
}

fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * a.abs().max(b.abs()) + 1e-12
}

// ---------------------------------------------------------------------------------------------
// Random operation sequences for the incremental solve

#[derive(Clone, Debug)]
enum Op {
    Add(VarSpec),
    /// Operand: a selector among the live variables (taken modulo their number).
    Remove(usize),
    SetPenalty(usize, f64),
    SetBound(usize, f64),
    /// Adds one more element to a live variable.
    Expand(usize, usize, f64),
    SetCnstBound(usize, f64),
    /// An intermediate incremental solve.
    Solve,
}

fn op(n_cnsts: usize) -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => var_spec(n_cnsts).prop_map(Op::Add),
        2 => any::<usize>().prop_map(Op::Remove),
        2 => (any::<usize>(), penalty()).prop_map(|(v, p)| Op::SetPenalty(v, p)),
        1 => (any::<usize>(), var_bound()).prop_map(|(v, b)| Op::SetBound(v, b)),
        1 => (any::<usize>(), 0..n_cnsts, weight()).prop_map(|(v, c, w)| Op::Expand(v, c, w)),
        1 => (0..n_cnsts, value(&[1.0, 2.0, 3.0, 5.0, 10.0], 0.5, 100.0))
            .prop_map(|(c, b)| Op::SetCnstBound(c, b)),
        3 => Just(Op::Solve),
    ]
}

fn scenario() -> impl Strategy<Value = (SysSpec, Vec<Op>)> {
    (1usize..8).prop_flat_map(|n| {
        (
            prop::collection::vec(cnst_spec(), n),
            prop::collection::vec(var_spec(n), 0..12),
            prop::collection::vec(op(n), 1..80),
        )
            .prop_map(|(cnsts, vars, ops)| (SysSpec { cnsts, vars }, ops))
    })
}

/// An incremental solve that checks that every variable whose value changed is reported.
fn solve_checked(sys: &mut System, live: &[(VarId, VarSpec)]) -> Result<(), TestCaseError> {
    let before: Vec<f64> = live.iter().map(|(id, _)| sys.value(*id)).collect();
    let updated = sys.solve().to_vec();
    for ((id, v), old) in live.iter().zip(before) {
        let new = sys.value(*id);
        if new != old {
            prop_assert!(
                updated.contains(&id.0),
                "variable {id:?} ({v:?}) changed from {old} to {new} but solve() did not report it"
            );
        }
    }
    Ok(())
}

/// Runs `ops` on a system built from `spec`, solving incrementally; returns the final state
/// (as a spec holding the live variables in creation order) and their incremental values.
fn run_incremental(spec: &SysSpec, ops: &[Op]) -> Result<(SysSpec, Vec<f64>), TestCaseError> {
    let (mut sys, cnst_ids, ids) = build(spec);
    let mut cnsts = spec.cnsts.clone();
    // Live variables: (id, current spec).
    let mut live: Vec<(VarId, VarSpec)> = ids.into_iter().zip(spec.vars.iter().cloned()).collect();
    solve_checked(&mut sys, &live)?;
    for op in ops {
        let n = live.len();
        match op {
            Op::Add(v) => {
                let id = sys.add_variable(v.penalty, v.bound);
                for &(c, w) in &v.elems {
                    sys.expand(cnst_ids[c], id, w);
                }
                live.push((id, v.clone()));
            }
            Op::Remove(sel) if n > 0 => {
                let (id, _) = live.remove(sel % n);
                sys.remove_variable(id);
            }
            Op::SetPenalty(sel, p) if n > 0 => {
                let (id, v) = &mut live[sel % n];
                sys.set_penalty(*id, *p);
                v.penalty = *p;
            }
            Op::SetBound(sel, b) if n > 0 => {
                let (id, v) = &mut live[sel % n];
                sys.set_bound(*id, *b);
                v.bound = *b;
            }
            Op::Expand(sel, c, w) if n > 0 => {
                let (id, v) = &mut live[sel % n];
                sys.expand(cnst_ids[*c], *id, *w);
                v.elems.push((*c, *w));
            }
            Op::SetCnstBound(c, b) => {
                sys.set_constraint_bound(cnst_ids[*c], *b);
                cnsts[*c].bound = *b;
            }
            Op::Solve => solve_checked(&mut sys, &live)?,
            _ => {}
        }
    }
    solve_checked(&mut sys, &live)?;
    let values = live.iter().map(|(id, _)| sys.value(*id)).collect();
    let vars = live.into_iter().map(|(_, v)| v).collect();
    Ok((SysSpec { cnsts, vars }, values))
}

fn solve_fresh(spec: &SysSpec) -> Vec<f64> {
    let (mut sys, _, ids) = build(spec);
    sys.solve_all();
    ids.iter().map(|id| sys.value(*id)).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// (a) + (b): feasibility and the bottleneck condition.
    #[test]
    fn solution_is_feasible_and_weighted_maxmin(spec in sys_spec()) {
        let (mut sys, _, ids) = build(&spec);
        sys.solve();
        let values: Vec<f64> = ids.iter().map(|id| sys.value(*id)).collect();
        check_maxmin(&spec, &values)?;
        // `solve_all` on an already solved system gives the same values.
        sys.solve_all();
        for (i, id) in ids.iter().enumerate() {
            prop_assert!(close(sys.value(*id), values[i], 1e-12));
        }
    }

    /// (a) + (b) at the engine's scale: capacities in bytes/s (×1e9) and penalties that are
    /// route latencies in seconds (×1e-5), where the absolute `usage` epsilon could bite.
    #[test]
    fn network_scale_solution_is_weighted_maxmin(spec in sys_spec()) {
        let spec = SysSpec {
            cnsts: spec.cnsts.iter().map(|c| CnstSpec { bound: c.bound * 1e9, ..c.clone() }).collect(),
            vars: spec
                .vars
                .iter()
                .map(|v| VarSpec {
                    penalty: v.penalty * 1e-5,
                    bound: if v.bound > 0.0 { v.bound * 1e9 } else { v.bound },
                    elems: v.elems.clone(),
                })
                .collect(),
        };
        let values = solve_fresh(&spec);
        check_maxmin(&spec, &values)?;
    }

    /// The checker itself is not vacuous: scaling a solution down by 1 % leaves some variable
    /// without a bottleneck, scaling it up by 1 % breaks some capacity or bound.
    #[test]
    fn checker_rejects_non_maxmin_allocations(spec in sys_spec()) {
        let values = solve_fresh(&spec);
        if values.iter().any(|&x| x > 0.0) {
            let down: Vec<f64> = values.iter().map(|x| x * 0.99).collect();
            prop_assert!(check_maxmin(&spec, &down).is_err());
            let up: Vec<f64> = values.iter().map(|x| x * 1.01).collect();
            prop_assert!(check_maxmin(&spec, &up).is_err());
        }
    }

    /// (c): penalties p1, p2 alone on one constraint: x1 / x2 = p2 / p1, and x1 + x2 = C
    /// (shared) or max(x1, x2) = C (fat pipe).
    #[test]
    fn penalties_give_inverse_shares(
        bound in 0.5f64..1e4,
        p1 in 0.01f64..100.0,
        p2 in 0.01f64..100.0,
        fat in any::<bool>(),
    ) {
        let mut sys = System::default();
        let sharing = if fat { Sharing::FatPipe } else { Sharing::Shared };
        let c = sys.add_constraint(bound, sharing);
        let a = sys.add_variable(p1, -1.0);
        let b = sys.add_variable(p2, -1.0);
        sys.expand(c, a, 1.0);
        sys.expand(c, b, 1.0);
        sys.solve();
        let (x1, x2) = (sys.value(a), sys.value(b));
        prop_assert!(close(x1 / x2, p2 / p1, 1e-9), "x1={x1} x2={x2} p1={p1} p2={p2}");
        let total = if fat { x1.max(x2) } else { x1 + x2 };
        prop_assert!(close(total, bound, 1e-9), "total {total} != bound {bound}");
    }

    /// (d): incremental solving after random changes equals a from-scratch solve; it also
    /// satisfies (a) and (b).
    #[test]
    fn incremental_equals_from_scratch((spec, ops) in scenario()) {
        let (final_spec, incremental) = run_incremental(&spec, &ops)?;
        let fresh = solve_fresh(&final_spec);
        for (i, (a, b)) in incremental.iter().zip(&fresh).enumerate() {
            prop_assert!(
                close(*a, *b, 1e-6),
                "variable {i} ({:?}): incremental {a} vs from scratch {b}",
                final_spec.vars[i]
            );
        }
        check_maxmin(&final_spec, &incremental)?;
    }

    /// Permuting the order in which variables are created does not change their values.
    #[test]
    fn insertion_order_does_not_matter(
        (spec, perm) in sys_spec().prop_flat_map(|s| {
            let n = s.vars.len();
            (Just(s), Just((0..n).collect::<Vec<_>>()).prop_shuffle())
        })
    ) {
        let values = solve_fresh(&spec);
        let permuted = SysSpec {
            cnsts: spec.cnsts.clone(),
            vars: perm.iter().map(|&i| spec.vars[i].clone()).collect(),
        };
        let pvalues = solve_fresh(&permuted);
        for (k, &i) in perm.iter().enumerate() {
            prop_assert!(
                close(values[i], pvalues[k], 1e-6),
                "variable {i}: {} in order, {} permuted", values[i], pvalues[k]
            );
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Heap-based solve vs the reference scan, bit for bit

/// Applies `ops` to copies of the system built from `spec`; at every `Solve` (and at the start
/// and the end) the first copy runs [`System::solve_reference`] (the scan), the others
/// [`System::solve`] with the heap from the start (`scan_max` 0), with the heap until the
/// light table is down to `scan_max` constraints, and with the default threshold. The reported
/// variables and all live values must be identical, bit for bit.
fn run_both(spec: &SysSpec, ops: &[Op], scan_max: usize) -> Result<(), TestCaseError> {
    let (mut scan, cnst_ids, ids) = build(spec);
    let mut systems = vec![];
    for threshold in [Some(0), Some(scan_max), None] {
        let (mut sys, _, _) = build(spec);
        if let Some(n) = threshold {
            sys.set_scan_max(n);
        }
        systems.push(sys);
    }
    let mut live: Vec<VarId> = ids;
    let compare = |scan: &mut System, systems: &mut [System], live: &[VarId]| -> Result<(), TestCaseError> {
        let want = scan.solve_reference().to_vec();
        for (k, sys) in systems.iter_mut().enumerate() {
            let got = sys.solve().to_vec();
            prop_assert_eq!(&got, &want, "system {}: re-solved different variables", k);
            for id in live {
                let (x, y) = (sys.value(*id), scan.value(*id));
                prop_assert!(
                    x.to_bits() == y.to_bits(),
                    "system {k}, variable {id:?}: solve {x:e} vs reference {y:e}"
                );
            }
        }
        Ok(())
    };
    compare(&mut scan, &mut systems, &live)?;
    for op in ops {
        let n = live.len();
        let mut added = Vec::new();
        for sys in std::iter::once(&mut scan).chain(systems.iter_mut()) {
            match op {
                Op::Add(v) => {
                    let id = sys.add_variable(v.penalty, v.bound);
                    for &(c, w) in &v.elems {
                        sys.expand(cnst_ids[c], id, w);
                    }
                    added.push(id);
                }
                Op::Remove(sel) if n > 0 => sys.remove_variable(live[sel % n]),
                Op::SetPenalty(sel, p) if n > 0 => sys.set_penalty(live[sel % n], *p),
                Op::SetBound(sel, b) if n > 0 => sys.set_bound(live[sel % n], *b),
                Op::Expand(sel, c, w) if n > 0 => sys.expand(cnst_ids[*c], live[sel % n], *w),
                Op::SetCnstBound(c, b) => sys.set_constraint_bound(cnst_ids[*c], *b),
                _ => {}
            }
        }
        match op {
            Op::Add(_) => {
                // All the systems hand out the same ids (same free lists).
                prop_assert!(added.iter().all(|id| *id == added[0]));
                live.push(added[0]);
            }
            Op::Remove(sel) if n > 0 => {
                live.remove(sel % n);
            }
            Op::Solve => compare(&mut scan, &mut systems, &live)?,
            _ => {}
        }
    }
    compare(&mut scan, &mut systems, &live)
}

/// `spec` at the engine's scale (bounds in bytes/s, penalties = latencies in seconds).
fn network_scale(spec: &SysSpec) -> SysSpec {
    SysSpec {
        cnsts: spec
            .cnsts
            .iter()
            .map(|c| CnstSpec {
                bound: c.bound * 1e9,
                ..c.clone()
            })
            .collect(),
        vars: spec
            .vars
            .iter()
            .map(|v| VarSpec {
                penalty: v.penalty * 1e-5,
                bound: if v.bound > 0.0 { v.bound * 1e9 } else { v.bound },
                elems: v.elems.clone(),
            })
            .collect(),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// The heap-based `solve` equals the reference scan bit for bit on random systems.
    #[test]
    fn heap_solve_is_bit_identical_to_scan(spec in sys_spec()) {
        run_both(&spec, &[], 2)?;
        run_both(&network_scale(&spec), &[], 2)?;
    }

    /// ... and after random incremental changes (only the touched components re-solved).
    #[test]
    fn incremental_heap_solve_is_bit_identical_to_scan((spec, ops) in scenario()) {
        run_both(&spec, &ops, 2)?;
    }

    /// `solve_listed` of every constraint solves the whole system as `solve_all` does (the
    /// same variables reported, the same values but for the rounding of ties, which the two
    /// may meet in another order); a constraint listed twice counts once.
    #[test]
    fn listing_every_constraint_is_solving_all(spec in sys_spec()) {
        for spec in [spec.clone(), network_scale(&spec)] {
            let (mut all, _, ids) = build(&spec);
            let (mut listed, cnsts, _) = build(&spec);
            let mut want = all.solve_all().to_vec();
            let twice = cnsts.iter().rev().chain(cnsts.iter()).copied();
            let mut got = listed.solve_listed(twice).to_vec();
            want.sort_unstable();
            got.sort_unstable();
            prop_assert_eq!(got, want);
            for id in &ids {
                prop_assert!(close(listed.value(*id), all.value(*id), 1e-9), "{:?}", id);
            }
        }
    }
}

/// A random system of `n_cnsts` constraints and `n_vars` variables, values drawn from small
/// sets half of the time (ties), with repeated pairs and 0.05 cross-traffic weights.
fn random_spec(rng: &mut Pcg64, n_cnsts: usize, n_vars: usize, fat_share: f64) -> SysSpec {
    fn pick(rng: &mut Pcg64, set: &[f64], lo: f64, hi: f64) -> f64 {
        if rng.gen_bool(0.5) {
            set[rng.gen_range(0..set.len())]
        } else {
            rng.gen_range(lo..hi)
        }
    }
    let cnsts = (0..n_cnsts)
        .map(|_| CnstSpec {
            bound: pick(rng, &[1.0, 2.0, 3.0, 5.0, 10.0, 100.0], 0.5, 100.0),
            sharing: if rng.gen_bool(fat_share) {
                Sharing::FatPipe
            } else {
                Sharing::Shared
            },
        })
        .collect();
    let vars = (0..n_vars)
        .map(|_| {
            let penalty = if rng.gen_bool(0.1) {
                0.0
            } else {
                pick(rng, &[0.5, 1.0, 2.0, 4.0], 0.1, 10.0)
            };
            let bound = if rng.gen_bool(0.5) {
                -1.0
            } else {
                pick(rng, &[0.5, 1.0, 2.0, 5.0], 0.01, 5.0)
            };
            let k = rng.gen_range(1..=8);
            let elems = (0..k)
                .map(|_| {
                    let w = if rng.gen_bool(0.3) {
                        0.05
                    } else {
                        pick(rng, &[1.0, 2.0, 0.5], 0.05, 2.0)
                    };
                    (rng.gen_range(0..n_cnsts), w)
                })
                .collect();
            VarSpec {
                penalty,
                bound,
                elems,
            }
        })
        .collect();
    SysSpec { cnsts, vars }
}

/// Large random systems (hundreds of constraints in one component, thousands of variables),
/// with random incremental changes.
#[test]
fn heap_solve_is_bit_identical_to_scan_at_scale() {
    for seed in 0..8u64 {
        let mut rng = Pcg64::seed_from_u64(seed);
        let n_cnsts = [50, 200, 600][seed as usize % 3];
        let spec = random_spec(
            &mut rng,
            n_cnsts,
            n_cnsts * 8,
            if seed % 2 == 0 { 0.0 } else { 0.2 },
        );
        let extra = random_spec(&mut rng, n_cnsts, 200, 0.0);
        let mut ops: Vec<Op> = Vec::new();
        for v in extra.vars {
            ops.push(match rng.gen_range(0..6) {
                0 | 1 => Op::Add(v),
                2 => Op::Remove(rng.gen()),
                3 => Op::SetPenalty(rng.gen(), v.penalty),
                4 => Op::SetBound(rng.gen(), v.bound),
                _ => Op::SetCnstBound(rng.gen_range(0..n_cnsts), rng.gen_range(1.0..100.0)),
            });
            if rng.gen_bool(0.3) {
                ops.push(Op::Solve);
            }
        }
        run_both(&spec, &ops, 16).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        run_both(&network_scale(&spec), &ops[..ops.len().min(40)], 16)
            .unwrap_or_else(|e| panic!("seed {seed} (network scale): {e}"));
    }
}

/// The kernel's case: flows between random hosts of a 3-level fat tree, weight 1 on the route
/// and 0.05 on the reverse route (one component), penalty = latency, bound = slowest link;
/// flows come and go with a solve after each change.
#[test]
fn heap_solve_is_bit_identical_to_scan_on_fat_tree_traffic() {
    const FAT_TREE_512: &str = r#"
[[cluster]]
id = "ft512"
prefix = "node-"
radical = "0-511"
speed = "1Gf"
bw = "10GBps"
lat = "1us"
sharing_policy = "SPLITDUPLEX"
topology = "fat_tree"
topo_parameters = "3;8,8,8;1,8,8;1,1,1"
"#;
    let p = Platform::from_toml_str(FAT_TREE_512, "ft512.toml").expect("valid platform");
    let mut rng = Pcg64::seed_from_u64(42);
    // The reference scan, the default solve, the heap only.
    let mut systems: Vec<(System, Vec<CnstId>)> = (0..3)
        .map(|k| {
            let mut sys = System::default();
            if k == 2 {
                sys.set_scan_max(0);
            }
            let cnsts = p
                .links
                .iter()
                .map(|l| {
                    let sharing = match l.sharing {
                        SharingPolicy::Shared => Sharing::Shared,
                        SharingPolicy::FatPipe => Sharing::FatPipe,
                    };
                    sys.add_constraint(l.bandwidth, sharing)
                })
                .collect();
            (sys, cnsts)
        })
        .collect();
    let n = p.hosts.len() as u32;
    let mut live: Vec<VarId> = Vec::new();
    for step in 0..1500 {
        let remove = live.len() > 800 || (live.len() > 10 && rng.gen_bool(0.3));
        if remove {
            let v = live.swap_remove(rng.gen_range(0..live.len()));
            for (sys, _) in &mut systems {
                sys.remove_variable(v);
            }
        } else {
            let src = rng.gen_range(0..n);
            let dst = (src + rng.gen_range(1..n)) % n;
            let links = p.route(HostId(src), HostId(dst));
            let back = p.route(HostId(dst), HostId(src));
            let penalty = p.route_latency(&links);
            let bound = links
                .iter()
                .map(|l| p.link(*l).bandwidth)
                .fold(f64::INFINITY, f64::min);
            let mut id = None;
            for (sys, cnsts) in &mut systems {
                let v = sys.add_variable(penalty, bound);
                for l in &links {
                    sys.expand(cnsts[l.0 as usize], v, 1.0);
                }
                for l in &back {
                    sys.expand(cnsts[l.0 as usize], v, 0.05);
                }
                if let Some(prev) = id {
                    assert_eq!(prev, v, "all the systems hand out the same ids");
                }
                id = Some(v);
            }
            live.push(id.expect("three systems"));
        }
        if step % 3 == 0 || step > 1450 {
            let [(scan, _), rest @ ..] = &mut systems[..] else {
                unreachable!()
            };
            let want = scan.solve_reference().to_vec();
            for (k, (sys, _)) in rest.iter_mut().enumerate() {
                let got = sys.solve().to_vec();
                assert_eq!(
                    got, want,
                    "step {step}, system {k}: different re-solved variables"
                );
                for v in &live {
                    assert_eq!(
                        sys.value(*v).to_bits(),
                        scan.value(*v).to_bits(),
                        "step {step}, system {k}: {v:?}"
                    );
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// SimGrid `src/kernel/lmm/maxmin_test.cpp` oracles not already in `lmm.rs`'s unit tests

fn assert_close(got: f64, want: f64) {
    assert!((got - want).abs() < EPS, "got {got}, want {want}");
}

/// Shared, one constraint: `x1 + 2·x2 ≤ 20`, penalties 1 and 2 → x1 = 2·x2 → 10 and 5.
#[test]
fn shared_weight_and_penalty() {
    let mut s = System::default();
    let c = s.add_constraint(20.0, Sharing::Shared);
    let r1 = s.add_variable(1.0, -1.0);
    let r2 = s.add_variable(2.0, -1.0);
    s.expand(c, r1, 1.0);
    s.expand(c, r2, 2.0);
    s.solve();
    assert_close(s.value(r1), 10.0);
    assert_close(s.value(r2), 5.0);
}

/// Shared, two constraints:
/// `x1 + 2·x2 ≤ 20` (ratio 20/(1/1 + 2/2) = 10) and `2·x1 + x3 ≤ 60` (ratio 60/3 = 20);
/// penalties 1, 2, 1. The first saturates first: x1 = 10, x2 = 5; then x3 = 60 − 2·10 = 40.
#[test]
fn shared_two_constraints() {
    let mut s = System::default();
    let c1 = s.add_constraint(20.0, Sharing::Shared);
    let c2 = s.add_constraint(60.0, Sharing::Shared);
    let r1 = s.add_variable(1.0, -1.0);
    let r2 = s.add_variable(2.0, -1.0);
    let r3 = s.add_variable(1.0, -1.0);
    s.expand(c1, r1, 1.0);
    s.expand(c1, r2, 2.0);
    s.expand(c2, r1, 2.0);
    s.expand(c2, r3, 1.0);
    s.solve();
    assert_close(s.value(r1), 10.0);
    assert_close(s.value(r2), 5.0);
    assert_close(s.value(r3), 40.0);
}

/// Fat pipe, one constraint: `max(x1, 2·x2) ≤ 10`, penalties 1 → both get 10 / max(w/p) = 5.
#[test]
fn fatpipe_consumption_weight() {
    let mut s = System::default();
    let c = s.add_constraint(10.0, Sharing::FatPipe);
    let r1 = s.add_variable(1.0, -1.0);
    let r2 = s.add_variable(1.0, -1.0);
    s.expand(c, r1, 1.0);
    s.expand(c, r2, 2.0);
    s.solve();
    assert_close(s.value(r1), 5.0);
    assert_close(s.value(r2), 5.0);
}

/// Fat pipe, one constraint: `max(x1, 2·x2) ≤ 10`, penalties 1 and 2 → 10 and 5 (x1 + 2·x2 =
/// 20 exceeds 10: allowed for a fat pipe).
#[test]
fn fatpipe_weight_and_penalty() {
    let mut s = System::default();
    let c = s.add_constraint(10.0, Sharing::FatPipe);
    let r1 = s.add_variable(1.0, -1.0);
    let r2 = s.add_variable(2.0, -1.0);
    s.expand(c, r1, 1.0);
    s.expand(c, r2, 2.0);
    s.solve();
    assert_close(s.value(r1), 10.0);
    assert_close(s.value(r2), 5.0);
}

/// Fat pipes, two constraints: `max(x1, 2·x2) ≤ 10` (ratio 10/max(1, 1) = 10) and
/// `max(2·x1, x3) ≤ 60` (ratio 60/2 = 30); penalties 1, 2, 1. The first saturates first:
/// x1 = 10, x2 = 5; the second keeps its full capacity for x3 = 60.
#[test]
fn fatpipe_two_constraints() {
    let mut s = System::default();
    let c1 = s.add_constraint(10.0, Sharing::FatPipe);
    let c2 = s.add_constraint(60.0, Sharing::FatPipe);
    let r1 = s.add_variable(1.0, -1.0);
    let r2 = s.add_variable(2.0, -1.0);
    let r3 = s.add_variable(1.0, -1.0);
    s.expand(c1, r1, 1.0);
    s.expand(c1, r2, 2.0);
    s.expand(c2, r1, 2.0);
    s.expand(c2, r3, 1.0);
    s.solve();
    assert_close(s.value(r1), 10.0);
    assert_close(s.value(r2), 5.0);
    assert_close(s.value(r3), 60.0);
}

/// Expanding the same pair twice merges: shared constraints add the weights (1 + 0.05, the
/// cross-traffic case of a SHARED link used both ways), fat pipes keep the larger weight.
#[test]
fn expand_merges_repeated_pairs() {
    let mut s = System::default();
    let shared = s.add_constraint(105.0, Sharing::Shared);
    let fat = s.add_constraint(100.0, Sharing::FatPipe);
    let a = s.add_variable(1.0, -1.0);
    s.expand(shared, a, 1.0);
    s.expand(shared, a, 0.05);
    let b = s.add_variable(1.0, -1.0);
    s.expand(fat, b, 2.0);
    s.expand(fat, b, 0.05);
    s.solve();
    assert_eq!(s.degree(a), 1);
    assert_eq!(s.degree(b), 1);
    assert_close(s.value(a), 100.0);
    assert_close(s.value(b), 50.0);
}

/// `solve_lone` (no saturation loop) gives exactly the loop's values (`solve_listed`), to the
/// bit, whenever it accepts a list, and changes nothing when it refuses one. Systems of 1–4
/// constraints, most of them lone (one enabled variable using no other constraint), some not
/// (a second variable, a disabled one, a variable on two constraints); bounds, penalties and
/// weights from small sets half of the time, so that `bound · penalty` often equals the share
/// exactly. The CPU case (host speed, one computation bounded by it) is always accepted.
#[test]
fn lone_solve_is_the_saturation_loop() {
    let mut rng = Pcg64::seed_from_u64(21);
    let pick = |rng: &mut Pcg64, set: &[f64], lo: f64, hi: f64| {
        if rng.gen_bool(0.5) {
            set[rng.gen_range(0..set.len())]
        } else {
            rng.gen_range(lo..hi)
        }
    };
    let (mut accepted, mut refused) = (0, 0);
    for _ in 0..20_000 {
        let n = rng.gen_range(1..=4);
        let mut cnsts = Vec::new();
        let mut vars = Vec::new();
        for c in 0..n {
            cnsts.push(CnstSpec {
                bound: pick(&mut rng, &[1.0, 2.0, 4.0, 1e9], 0.5, 10.0),
                sharing: if rng.gen_bool(0.2) {
                    Sharing::FatPipe
                } else {
                    Sharing::Shared
                },
            });
            let lone = rng.gen_bool(0.85);
            let k = if lone { 1 } else { rng.gen_range(1..=2) };
            for _ in 0..k {
                let mut elems = vec![(c, pick(&mut rng, &[1.0, 0.5, 2.0], 0.05, 2.0))];
                if !lone && rng.gen_bool(0.5) {
                    elems.push((rng.gen_range(0..n), 1.0));
                }
                vars.push(VarSpec {
                    penalty: if !lone && rng.gen_bool(0.3) {
                        0.0
                    } else {
                        pick(&mut rng, &[1.0, 0.5, 2.0], 0.1, 4.0)
                    },
                    bound: if rng.gen_bool(0.3) {
                        -1.0
                    } else {
                        pick(&mut rng, &[1.0, 2.0, 4.0, 1e9], 0.1, 10.0)
                    },
                    elems,
                });
            }
        }
        let spec = SysSpec { cnsts, vars };
        let (mut fast, ids, vids) = build(&spec);
        let (mut slow, _, _) = build(&spec);
        let before: Vec<u64> = vids.iter().map(|v| fast.value(*v).to_bits()).collect();
        if fast.solve_lone(&ids) {
            accepted += 1;
            slow.solve_listed(ids.iter().copied());
            for v in &vids {
                assert_eq!(
                    fast.value(*v).to_bits(),
                    slow.value(*v).to_bits(),
                    "{v:?} in {spec:?}"
                );
            }
        } else {
            refused += 1;
            let after: Vec<u64> = vids.iter().map(|v| fast.value(*v).to_bits()).collect();
            assert_eq!(before, after, "a refused list changed values: {spec:?}");
        }
    }
    assert!(
        accepted > 5_000 && refused > 5_000,
        "accepted {accepted}, refused {refused}"
    );

    // A computation alone on its CPU (bound: the host's speed; the CPU: speed × cores).
    for (speed, cores) in [(1e9, 1.0), (1e9, 4.0), (20000.0, 1.0), (3.3e9, 24.0)] {
        let mut s = System::default();
        let cpu = s.add_constraint(speed * cores, Sharing::Shared);
        let exec = s.add_variable(1.0, speed);
        s.expand(cpu, exec, 1.0);
        assert!(s.solve_lone(&[cpu]));
        assert_eq!(s.value(exec), speed);
    }
}
