//! Weighted max-min fair sharing of resources (the "LMM" of SimGrid).
//!
//! A [`System`] holds *constraints* (one per resource: a link direction, a CPU)
//! and *variables* (one per activity: a flow, a computation). A variable uses a
//! constraint with a consumption weight `w`. The solver finds the rates `x_v`
//! that are max-min fair, weighted by `1 / penalty`:
//!
//! - shared constraint `c`: `Σ_v w_cv · x_v ≤ bound_c`;
//! - fat-pipe constraint `c`: `max_v w_cv · x_v ≤ bound_c`;
//! - every variable: `x_v ≤ bound_v` when `bound_v > 0`.
//!
//! The algorithm is SimGrid's saturation loop: repeatedly find the constraint(s)
//! with the smallest `remaining / usage` ratio (where `usage = Σ w / penalty` over
//! unfixed variables), fix their variables at `ratio / penalty` (or at their own
//! bound when that is smaller), subtract, and continue until every variable is
//! fixed. Ties are collected exactly like SimGrid (equal ratios), and the same
//! precision rules apply (`precision/work-amount`, default 1e-5, relative to a
//! constraint's bound for `remaining`, absolute for `usage`). The smallest ratio is
//! found with a lazily invalidated min-heap rather than SimGrid's rescan of all the
//! constraints every round (O((E + C) log C) per solve instead of O(C²)); ties are then
//! processed in SimGrid's light-table order, so the results are bit-identical to the
//! scan ([`System::solve_reference`]).
//!
//! The solve is *incremental*: any change (new variable, penalty change, removal)
//! marks the constraints it touches, and [`System::solve`] recomputes only the
//! connected component of the constraint-variable graph reachable from them.
//! The list of variables whose value was recomputed is returned so the caller
//! can update only the affected activities.
//!
//! A variable with penalty 0 is *disabled*: it is attached to its constraints but
//! gets no share (SimGrid uses this for flows still in their latency phase).

/// Identifier of a constraint.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CnstId(pub u32);

/// Identifier of a variable. Ids of removed variables are reused.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct VarId(pub u32);

/// How a constraint aggregates the consumption of its variables.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Sharing {
    /// Sum of `w · x` is bounded.
    Shared,
    /// Max of `w · x` is bounded (each variable may use the full capacity).
    FatPipe,
}

#[derive(Clone, Debug)]
struct Element {
    var: u32,
    /// Position of the matching entry in the variable's `cnsts`.
    slot: u32,
    weight: f64,
    /// Copy of the variable's penalty, so that walking a constraint's elements during a solve
    /// does not touch the variables.
    penalty: f64,
}

#[derive(Clone, Debug)]
struct Constraint {
    bound: f64,
    sharing: Sharing,
    elems: Vec<Element>,
    // Scratch state of a solve.
    remaining: f64,
    usage: f64,
    light_pos: u32,
    /// Version of the constraint's only valid entry in the saturation heap.
    heap_version: u32,
    /// Key of that entry, a lower bound of the current ratio's key (0 while the constraint is
    /// being saturated, `u64::MAX` when it has no entry).
    heap_key: u64,
    visit: u64,
    modified: bool,
}

#[derive(Clone, Debug)]
struct VarCnst {
    cnst: u32,
    weight: f64,
    /// Position of the matching element in the constraint's `elems`.
    pos: u32,
}

#[derive(Clone, Debug)]
struct Variable {
    alive: bool,
    penalty: f64,
    bound: f64,
    value: f64,
    cnsts: Vec<VarCnst>,
}

const NOT_IN_LIGHT: u32 = u32::MAX;

/// Default size up to which the light table is scanned each round rather than kept in a heap.
const SCAN_MAX: usize = 64;

/// An entry of the saturation heap: a constraint's `remaining / usage` (as [`ratio_key`]) when
/// it was pushed, valid while the constraint's `heap_version` is `version`.
#[derive(Copy, Clone, Debug)]
struct HeapEntry {
    key: u64,
    cnst: u32,
    version: u32,
}

/// A 4-ary min-heap of [`HeapEntry`] ordered by `key` alone (the order among equal keys does
/// not matter: tied constraints are sorted by light-table position afterwards). Four children
/// of 16 bytes share a cache line.
#[derive(Debug, Default)]
struct MinHeap {
    data: Vec<HeapEntry>,
}

impl MinHeap {
    const ARITY: usize = 4;

    fn clear(&mut self) {
        self.data.clear();
    }

    fn peek(&self) -> Option<&HeapEntry> {
        self.data.first()
    }

    fn push(&mut self, entry: HeapEntry) {
        let mut i = self.data.len();
        self.data.push(entry);
        while i > 0 {
            let parent = (i - 1) / Self::ARITY;
            if self.data[parent].key <= entry.key {
                break;
            }
            self.data[i] = self.data[parent];
            i = parent;
        }
        self.data[i] = entry;
    }

    fn pop(&mut self) -> Option<HeapEntry> {
        let last = self.data.pop()?;
        if self.data.is_empty() {
            return Some(last);
        }
        let top = self.data[0];
        self.sift_down(0, last);
        Some(top)
    }

    /// Puts `entry` at the hole `i` and moves it down to its place.
    fn sift_down(&mut self, mut i: usize, entry: HeapEntry) {
        let n = self.data.len();
        loop {
            let first = i * Self::ARITY + 1;
            if first >= n {
                break;
            }
            let mut best = first;
            for c in first + 1..(first + Self::ARITY).min(n) {
                if self.data[c].key < self.data[best].key {
                    best = c;
                }
            }
            if self.data[best].key >= entry.key {
                break;
            }
            self.data[i] = self.data[best];
            i = best;
        }
        self.data[i] = entry;
    }

    /// Restores the heap order of `data` after arbitrary pushes to it, in O(n).
    fn heapify(&mut self) {
        let n = self.data.len();
        if n < 2 {
            return;
        }
        for i in (0..=(n - 2) / Self::ARITY).rev() {
            let entry = self.data[i];
            self.sift_down(i, entry);
        }
    }
}

/// A `u64` whose unsigned order is the numeric order of a non-NaN ratio, equal keys being
/// equal ratios (−0 is mapped to +0).
fn ratio_key(ratio: f64) -> u64 {
    let bits = (ratio + 0.0).to_bits();
    if bits >> 63 == 0 {
        bits | (1 << 63)
    } else {
        !bits
    }
}

/// A max-min system. See the module documentation.
#[derive(Debug)]
pub struct System {
    cnsts: Vec<Constraint>,
    vars: Vec<Variable>,
    // Per-variable scratch state of a solve, in dense arrays (cache-friendly when walking the
    // elements of large constraints).
    var_visit: Vec<u64>,
    var_fixed: Vec<bool>,
    free_vars: Vec<u32>,
    modified: Vec<u32>,
    visit_epoch: u64,
    /// `precision/work-amount`.
    epsilon: f64,
    // Reused buffers.
    comp_cnsts: Vec<u32>,
    comp_vars: Vec<u32>,
    light: Vec<u32>,
    saturated: Vec<u32>,
    candidates: Vec<u32>,
    /// `min_bound` of the current round (see `collect_candidates`).
    min_bound: f64,
    heap: MinHeap,
    /// Whether the current round finds the smallest ratio with `heap` (else by a scan).
    use_heap: bool,
    /// Light tables up to this size are scanned.
    scan_max: usize,
    /// The caller tracks what changed and always solves with [`System::solve_listed`]: the
    /// system's own record of modified constraints is not kept.
    caller_lists: bool,
}

impl Default for System {
    fn default() -> Self {
        Self::new(1e-5)
    }
}

impl System {
    /// A system whose precision (`precision/work-amount`) is `epsilon`.
    pub fn new(epsilon: f64) -> Self {
        System {
            cnsts: Vec::new(),
            vars: Vec::new(),
            var_visit: Vec::new(),
            var_fixed: Vec::new(),
            free_vars: Vec::new(),
            modified: Vec::new(),
            visit_epoch: 0,
            epsilon,
            comp_cnsts: Vec::new(),
            comp_vars: Vec::new(),
            light: Vec::new(),
            saturated: Vec::new(),
            candidates: Vec::new(),
            min_bound: f64::INFINITY,
            heap: MinHeap::default(),
            use_heap: false,
            scan_max: SCAN_MAX,
            caller_lists: false,
        }
    }

    /// Declares that the caller tracks changes itself and solves only with
    /// [`System::solve_listed`] (SimGrid's event order): the system then skips its own
    /// bookkeeping of modified constraints, which nothing would read.
    pub fn set_caller_lists(&mut self, on: bool) {
        self.caller_lists = on;
    }

    /// The precision (`precision/work-amount`).
    pub fn precision(&self) -> f64 {
        self.epsilon
    }

    /// Sets the size up to which the light table is scanned for the smallest ratio rather
    /// than kept in a heap (default 64; 0 = always the heap). The results do not depend on
    /// it: this is for tests and benchmarks.
    #[doc(hidden)]
    pub fn set_scan_max(&mut self, n: usize) {
        self.scan_max = n;
    }

    /// Adds a resource of capacity `bound`.
    pub fn add_constraint(&mut self, bound: f64, sharing: Sharing) -> CnstId {
        self.cnsts.push(Constraint {
            bound,
            sharing,
            elems: Vec::new(),
            remaining: 0.0,
            usage: 0.0,
            light_pos: NOT_IN_LIGHT,
            heap_version: 0,
            heap_key: u64::MAX,
            visit: 0,
            modified: false,
        });
        CnstId((self.cnsts.len() - 1) as u32)
    }

    /// Changes a constraint's capacity.
    pub fn set_constraint_bound(&mut self, c: CnstId, bound: f64) {
        self.cnsts[c.0 as usize].bound = bound;
        self.mark_cnst(c.0);
    }

    /// The capacity of constraint `c`.
    pub fn constraint_bound(&self, c: CnstId) -> f64 {
        self.cnsts[c.0 as usize].bound
    }

    /// Adds a variable. `penalty` 0 creates it disabled; `bound ≤ 0` means unbounded.
    pub fn add_variable(&mut self, penalty: f64, bound: f64) -> VarId {
        let id = if let Some(id) = self.free_vars.pop() {
            // Reuse the slot and its element buffer (no allocation on the hot path).
            let var = &mut self.vars[id as usize];
            var.alive = true;
            var.penalty = penalty;
            var.bound = bound;
            var.value = 0.0;
            var.cnsts.clear();
            self.var_visit[id as usize] = 0;
            self.var_fixed[id as usize] = false;
            id
        } else {
            self.vars.push(Variable {
                alive: true,
                penalty,
                bound,
                value: 0.0,
                cnsts: Vec::new(),
            });
            self.var_visit.push(0);
            self.var_fixed.push(false);
            (self.vars.len() - 1) as u32
        };
        VarId(id)
    }

    /// Makes `v` consume `c` with weight `w`. Expanding an existing pair merges:
    /// shared constraints add the weights, fat pipes keep the larger one.
    pub fn expand(&mut self, c: CnstId, v: VarId, w: f64) {
        let (ci, vi) = (c.0, v.0);
        if let Some(slot) = self.vars[vi as usize].cnsts.iter().position(|vc| vc.cnst == ci) {
            let sharing = self.cnsts[ci as usize].sharing;
            let vc = &mut self.vars[vi as usize].cnsts[slot];
            vc.weight = match sharing {
                Sharing::Shared => vc.weight + w,
                Sharing::FatPipe => vc.weight.max(w),
            };
            let (weight, pos) = (vc.weight, vc.pos);
            self.cnsts[ci as usize].elems[pos as usize].weight = weight;
        } else {
            let slot = self.vars[vi as usize].cnsts.len() as u32;
            let pos = self.cnsts[ci as usize].elems.len() as u32;
            self.cnsts[ci as usize].elems.push(Element {
                var: vi,
                slot,
                weight: w,
                penalty: self.vars[vi as usize].penalty,
            });
            self.vars[vi as usize].cnsts.push(VarCnst {
                cnst: ci,
                weight: w,
                pos,
            });
        }
        if self.vars[vi as usize].penalty > 0.0 {
            self.mark_cnst(ci);
        }
    }

    /// Changes a variable's penalty (0 disables it; a positive value enables it).
    pub fn set_penalty(&mut self, v: VarId, penalty: f64) {
        let var = &mut self.vars[v.0 as usize];
        if var.penalty == penalty {
            return;
        }
        var.penalty = penalty;
        if penalty <= 0.0 {
            var.value = 0.0;
        }
        for vc in &self.vars[v.0 as usize].cnsts {
            self.cnsts[vc.cnst as usize].elems[vc.pos as usize].penalty = penalty;
        }
        self.mark_var(v.0);
    }

    /// Changes a variable's bound (≤ 0 = unbounded).
    pub fn set_bound(&mut self, v: VarId, bound: f64) {
        self.vars[v.0 as usize].bound = bound;
        if self.vars[v.0 as usize].penalty > 0.0 {
            self.mark_var(v.0);
        }
    }

    /// The sharing penalty (weight) of variable `v`.
    pub fn penalty(&self, v: VarId) -> f64 {
        self.vars[v.0 as usize].penalty
    }

    /// The rate computed by the last solve (0 for disabled variables).
    pub fn value(&self, v: VarId) -> f64 {
        self.vars[v.0 as usize].value
    }

    /// Number of constraints a variable uses.
    pub fn degree(&self, v: VarId) -> usize {
        self.vars[v.0 as usize].cnsts.len()
    }

    /// Removes a variable; its share goes back to the others at the next solve.
    pub fn remove_variable(&mut self, v: VarId) {
        let vi = v.0;
        let enabled = self.vars[vi as usize].penalty > 0.0;
        let cnsts = std::mem::take(&mut self.vars[vi as usize].cnsts);
        for vc in &cnsts {
            let c = &mut self.cnsts[vc.cnst as usize];
            let pos = vc.pos as usize;
            c.elems.swap_remove(pos);
            if pos < c.elems.len() {
                let moved = c.elems[pos].clone();
                self.vars[moved.var as usize].cnsts[moved.slot as usize].pos = pos as u32;
            }
            if enabled {
                self.mark_cnst(vc.cnst);
            }
        }
        let var = &mut self.vars[vi as usize];
        var.alive = false;
        var.cnsts = cnsts;
        var.cnsts.clear();
        self.free_vars.push(vi);
    }

    fn mark_cnst(&mut self, c: u32) {
        if self.caller_lists {
            return;
        }
        self.mark_listed(c);
    }

    fn mark_listed(&mut self, c: u32) {
        let cn = &mut self.cnsts[c as usize];
        if !cn.modified {
            cn.modified = true;
            self.modified.push(c);
        }
    }

    fn mark_var(&mut self, v: u32) {
        if self.caller_lists {
            return;
        }
        for i in 0..self.vars[v as usize].cnsts.len() {
            let c = self.vars[v as usize].cnsts[i].cnst;
            self.mark_cnst(c);
        }
    }

    /// True when something changed since the last solve.
    pub fn needs_solve(&self) -> bool {
        !self.modified.is_empty()
    }

    /// Recomputes the values of every variable in the connected components of
    /// the modified constraints. Returns those variables (enabled ones only).
    pub fn solve(&mut self) -> &[u32] {
        self.comp_vars.clear();
        if self.modified.is_empty() {
            return &self.comp_vars;
        }
        self.collect_component();
        self.saturate();
        &self.comp_vars
    }

    /// SimGrid's selective update, exactly: re-solves the constraints `cnsts` (in this order,
    /// which is also the light table's) and the enabled variables on them, and nothing else.
    /// A variable's constraints outside the list keep their old allocation: SimGrid's modified
    /// set can miss some (when a variable is enabled on a constraint already touched in the same
    /// round, the walk does not go through it), and its results then differ from the full
    /// component's; matching SimGrid means reproducing that. Returns the re-solved variables.
    pub fn solve_listed(&mut self, cnsts: impl IntoIterator<Item = CnstId>) -> &[u32] {
        // The list replaces the system's own record (kept only without caller lists).
        for i in 0..self.modified.len() {
            let c = self.modified[i];
            self.cnsts[c as usize].modified = false;
        }
        self.modified.clear();
        self.visit_epoch += 1;
        let epoch = self.visit_epoch;
        self.comp_cnsts.clear();
        self.comp_vars.clear();
        for c in cnsts {
            let cn = &mut self.cnsts[c.0 as usize];
            if cn.visit != epoch {
                cn.visit = epoch;
                self.comp_cnsts.push(c.0);
            }
        }
        if self.comp_cnsts.is_empty() {
            return &self.comp_vars;
        }
        self.collect_listed(epoch);
        self.saturate();
        &self.comp_vars
    }

    /// [`System::solve_listed`] without the saturation loop, for the common case of a solve
    /// that only concerns *lone* constraints: each carries exactly one variable, enabled, with
    /// a positive finite weight, using no other constraint (a computation alone on its CPU,
    /// such as the polling cost of a failed `MPI_Iprobe`). Such a variable gets
    /// `ratio / penalty`, where `ratio = bound / usage` is its constraint's share, or its own
    /// bound when `bound · penalty` is below that ratio: what the loop gives it, to the bit.
    /// With several constraints the loop's rounds could interact through a tie (a variable
    /// waits for another's bound within precision), so either all variables are bound-limited
    /// or none is; otherwise, and whenever a constraint is not lone, nothing is changed and
    /// `false` is returned (solve with [`System::solve_listed`] then).
    pub fn solve_lone(&mut self, cnsts: &[CnstId]) -> bool {
        let eps = self.epsilon;
        // A value 0 < eps is what lets the loop fix a bound-limited variable; NaN or
        // non-positive precisions go through the loop.
        let eps_positive = eps > 0.0;
        if !eps_positive {
            return false;
        }
        match cnsts {
            [] => return false,
            // The common case, one computation: a single look.
            [c] => {
                let Some((v, value, _)) = self.lone_value(c.0) else {
                    return false;
                };
                self.vars[v as usize].value = value;
            }
            _ => {
                let mut limited = 0;
                for c in cnsts {
                    let Some((_, _, by_bound)) = self.lone_value(c.0) else {
                        return false;
                    };
                    limited += usize::from(by_bound);
                }
                if limited != 0 && limited != cnsts.len() {
                    return false;
                }
                for c in cnsts {
                    let (v, value, _) = self.lone_value(c.0).expect("checked above");
                    self.vars[v as usize].value = value;
                }
            }
        }
        // As `solve_listed`: the list replaces the system's own record.
        for i in 0..self.modified.len() {
            let c = self.modified[i];
            self.cnsts[c as usize].modified = false;
        }
        self.modified.clear();
        true
    }

    /// A lone constraint's variable, the value the saturation loop gives it, and whether that
    /// value is the variable's own bound; `None` if `c` is not lone (see
    /// [`System::solve_lone`]) or its share is not a finite positive number.
    #[inline]
    fn lone_value(&self, c: u32) -> Option<(u32, f64, bool)> {
        let cn = &self.cnsts[c as usize];
        let [e] = cn.elems.as_slice() else {
            return None;
        };
        let var = &self.vars[e.var as usize];
        let lone = var.cnsts.len() == 1 && e.penalty > 0.0 && e.weight > 0.0 && e.weight.is_finite();
        if !lone {
            return None;
        }
        let bound = cn.bound;
        // Loaded (as `collect_listed` decides), with a finite share: the loop selects it in
        // its first round where it is the smallest ratio, the variable being its only candidate.
        if bound <= bound * self.epsilon || !bound.is_finite() {
            return None;
        }
        let usage = with_element(0.0, cn.sharing, e.weight, e.penalty);
        let ratio = bound / usage;
        let finite_share = usage > 0.0 && ratio.is_finite();
        if !finite_share {
            return None;
        }
        let bp = var.bound * e.penalty;
        if var.bound > 0.0 && bp < ratio {
            Some((e.var, var.bound, true))
        } else {
            Some((e.var, ratio / var.penalty, false))
        }
    }

    /// [`System::collect_component`] for [`System::solve_listed`]: the constraints are
    /// `comp_cnsts` as listed (no walk beyond them), each prepared the same way, in order.
    fn collect_listed(&mut self, epoch: u64) {
        let System {
            cnsts,
            vars,
            var_visit,
            var_fixed,
            comp_cnsts,
            comp_vars,
            light,
            epsilon,
            ..
        } = self;
        let eps = *epsilon;
        light.clear();
        for &c in comp_cnsts.iter() {
            let cn = &mut cnsts[c as usize];
            let (bound, sharing) = (cn.bound, cn.sharing);
            // (Not `bound > bound * eps`: a NaN bound is "loaded", as in SimGrid.)
            let unloaded = bound <= bound * eps;
            let mut usage: f64 = 0.0;
            for e in &cn.elems {
                let Element {
                    var, weight, penalty, ..
                } = *e;
                debug_assert_eq!(penalty.to_bits(), vars[var as usize].penalty.to_bits());
                if !unloaded {
                    usage = with_element(usage, sharing, weight, penalty);
                }
                let v = var as usize;
                if penalty <= 0.0 || var_visit[v] == epoch {
                    continue;
                }
                var_visit[v] = epoch;
                comp_vars.push(var);
                // Variables that touch no loaded constraint get their bound (or stay 0).
                let var = &mut vars[v];
                let has_weight = var.cnsts.iter().any(|vc| vc.weight > 0.0 || vc.weight.is_nan());
                var.value = if !has_weight && var.bound > 0.0 {
                    var.bound
                } else {
                    0.0
                };
                var_fixed[v] = !has_weight;
            }
            cn.remaining = bound;
            cn.usage = usage;
            cn.light_pos = NOT_IN_LIGHT;
            if !unloaded && usage > 0.0 {
                cn.light_pos = light.len() as u32;
                light.push(c);
            }
        }
    }

    /// Recomputes every variable (debug / reference mode).
    pub fn solve_all(&mut self) -> &[u32] {
        for c in 0..self.cnsts.len() as u32 {
            self.mark_cnst(c);
        }
        self.solve()
    }

    /// Breadth-first walk from the modified constraints through enabled variables, which also
    /// prepares the saturation (one pass over the elements):
    /// - each constraint of the component gets `remaining = bound` and its `usage` (`Σ w/p`,
    ///   fat pipe `max w/p`, over enabled elements with `w > 0`); unless `remaining ≤ bound·ε`,
    ///   it enters the light table if its usage is positive, in component order;
    /// - each variable of the component gets value 0 and is unfixed, except that a variable
    ///   with no positive weight is fixed at once at its bound (or 0).
    fn collect_component(&mut self) {
        let eps = self.epsilon;
        self.visit_epoch += 1;
        let epoch = self.visit_epoch;
        self.comp_cnsts.clear();
        self.light.clear();
        for &c in &self.modified {
            let cn = &mut self.cnsts[c as usize];
            cn.modified = false;
            if cn.visit != epoch {
                cn.visit = epoch;
                self.comp_cnsts.push(c);
            }
        }
        self.modified.clear();
        let mut i = 0;
        while i < self.comp_cnsts.len() {
            let c = self.comp_cnsts[i] as usize;
            i += 1;
            let (bound, sharing) = (self.cnsts[c].bound, self.cnsts[c].sharing);
            // (Not `bound > bound * eps`: a NaN bound is "loaded", as in SimGrid.)
            let unloaded = bound <= bound * eps;
            let mut usage: f64 = 0.0;
            for e in 0..self.cnsts[c].elems.len() {
                let Element {
                    var, weight, penalty, ..
                } = self.cnsts[c].elems[e];
                debug_assert_eq!(penalty.to_bits(), self.vars[var as usize].penalty.to_bits());
                if !unloaded {
                    usage = with_element(usage, sharing, weight, penalty);
                }
                let v = var as usize;
                if penalty <= 0.0 || self.var_visit[v] == epoch {
                    continue;
                }
                self.var_visit[v] = epoch;
                self.comp_vars.push(v as u32);
                let mut has_weight = false;
                for k in 0..self.vars[v].cnsts.len() {
                    let VarCnst { cnst, weight, .. } = self.vars[v].cnsts[k];
                    has_weight |= weight > 0.0 || weight.is_nan();
                    let c2 = cnst as usize;
                    if self.cnsts[c2].visit != epoch {
                        self.cnsts[c2].visit = epoch;
                        self.comp_cnsts.push(c2 as u32);
                    }
                }
                // Variables that touch no loaded constraint get their bound (or stay 0).
                let var = &mut self.vars[v];
                var.value = match (has_weight, var.bound > 0.0) {
                    (false, true) => var.bound,
                    _ => 0.0,
                };
                self.var_fixed[v] = !has_weight;
            }
            let cn = &mut self.cnsts[c];
            cn.remaining = bound;
            cn.usage = usage;
            cn.light_pos = NOT_IN_LIGHT;
            if !unloaded && usage > 0.0 {
                cn.light_pos = self.light.len() as u32;
                self.light.push(c as u32);
            }
        }
    }

    /// The saturation loop. The light table is kept exactly as in SimGrid (compact array,
    /// swap-with-last removal) because its order decides the order in which tied constraints,
    /// hence variables, are processed, and so the rounding of `remaining`. The smallest ratio is
    /// found with a min-heap of `(remaining / usage, constraint)` instead of a scan of the table.
    ///
    /// The heap is lazy: each constraint of the table has one valid entry (its `heap_version`)
    /// whose key is a *lower bound* of its current ratio. Fixing variables at the smallest
    /// ratio can only raise the ratios of the other constraints they use (they take less than
    /// those constraints' average share), so nothing is pushed then, except when rounding
    /// lowers a ratio below its entry's key. A popped entry whose key is below the constraint's
    /// current ratio is pushed again with the current one; the first entry popped with an exact
    /// key has the smallest ratio, and the following entries with that same exact key are the
    /// ties. Entries of constraints that left the table, or superseded by a newer push, are
    /// skipped. Cost O((E + C) log C) per solve instead of O(C²), with results bit-identical
    /// to [`System::solve_reference`].
    ///
    /// Tables of at most `scan_max` constraints (64 by default) are scanned as SimGrid does,
    /// which is cheaper than building a heap; a large table uses the heap until it has shrunk
    /// to that size. Both ways select the same constraints in the same order. The first round
    /// of a large table is a scan that also makes the heap's entries, ordered only if a second
    /// round needs them: a solve whose constraints all tie (a ring of equal flows) is one
    /// round, and the scan gives its ties in table order without popping or sorting them.
    fn saturate(&mut self) {
        self.use_heap = self.light.len() > self.scan_max;
        self.heap.clear();
        let mut heap_ordered = false;
        while !self.light.is_empty() {
            if self.use_heap && self.light.len() <= self.scan_max {
                self.use_heap = false;
            }
            // Smallest ratio, with exact ties collected (all constraints whose ratio equals it).
            let min_usage = if !self.use_heap {
                self.scan_min()
            } else if heap_ordered {
                self.heap_min()
            } else {
                self.scan_min_making_entries()
            };
            if self.saturated.is_empty() {
                // Every constraint left in the light table has a NaN ratio: none is ever
                // selected (the reference scan would loop forever).
                break;
            }
            self.collect_candidates(min_usage);
            let min_bound = self.min_bound;
            if self.candidates.is_empty() {
                // Only possible through rounding; drop the constraints to guarantee progress.
                for i in 0..self.saturated.len() {
                    let c = self.saturated[i];
                    self.light_remove(c);
                }
            }
            for i in 0..self.candidates.len() {
                let v = self.candidates[i] as usize;
                if let Some(value) = self.candidate_value(v, min_usage, min_bound) {
                    self.fix_variable(v, value);
                }
            }
            if self.use_heap {
                // Saturated constraints that stay (variables waiting for their bound) get an entry.
                for i in 0..self.saturated.len() {
                    let c = self.saturated[i];
                    if self.cnsts[c as usize].light_pos != NOT_IN_LIGHT {
                        self.heap_push(c);
                    }
                }
                if !heap_ordered && self.light.len() > self.scan_max {
                    // Entries pushed meanwhile went to an unordered array: ordered together.
                    self.heap.heapify();
                    heap_ordered = true;
                }
            }
        }
        self.heap.clear();
    }

    /// Fills `saturated` with the constraints of smallest ratio, in light-table order, by
    /// scanning the table (SimGrid's way); returns that ratio.
    fn scan_min(&mut self) -> f64 {
        let mut min_usage = f64::INFINITY;
        self.saturated.clear();
        for &c in &self.light {
            let cn = &self.cnsts[c as usize];
            keep_smallest(&mut self.saturated, &mut min_usage, c, cn.remaining / cn.usage);
        }
        min_usage
    }

    /// [`System::scan_min`] for the first round of a large table: also gives every constraint
    /// of the table its heap entry (a lower bound of its ratio, as [`System::heap_entry`]),
    /// pushed unordered. The saturated constraints' entries no longer count (their `heap_key`
    /// is 0, as [`System::heap_min`] leaves them): superseded when they are pushed again at the
    /// round's end, or skipped once they leave the table.
    fn scan_min_making_entries(&mut self) -> f64 {
        let mut min_usage = f64::INFINITY;
        self.saturated.clear();
        self.heap.clear();
        for i in 0..self.light.len() {
            let c = self.light[i];
            let Some(entry) = self.heap_entry(c) else {
                continue; // NaN: never selected, no entry
            };
            self.heap.data.push(entry);
            let cn = &self.cnsts[c as usize];
            keep_smallest(&mut self.saturated, &mut min_usage, c, cn.remaining / cn.usage);
        }
        for i in 0..self.saturated.len() {
            let c = self.saturated[i];
            self.cnsts[c as usize].heap_key = 0;
        }
        min_usage
    }

    /// Same as [`System::scan_min`], with the heap.
    fn heap_min(&mut self) -> f64 {
        self.saturated.clear();
        let mut min_key = u64::MAX;
        let mut min_usage = f64::INFINITY;
        while let Some(&top) = self.heap.peek() {
            if !self.saturated.is_empty() && top.key != min_key {
                break;
            }
            self.heap.pop();
            let cn = &self.cnsts[top.cnst as usize];
            if cn.light_pos == NOT_IN_LIGHT || cn.heap_version != top.version {
                continue;
            }
            let ratio = cn.remaining / cn.usage;
            if ratio.is_nan() || ratio_key(ratio) != top.key {
                // Raised since pushed: re-push at the current ratio (NaN: never selected).
                self.heap_push(top.cnst);
                continue;
            }
            if self.saturated.is_empty() {
                min_key = top.key;
                min_usage = ratio;
            }
            // Being saturated: no entry, and no push from `fix_variable` until the round ends.
            self.cnsts[top.cnst as usize].heap_key = 0;
            self.saturated.push(top.cnst);
        }
        // Tied constraints are processed in light-table order, as the scan does.
        if self.saturated.len() > 1 {
            let cnsts = &self.cnsts;
            self.saturated
                .sort_unstable_by_key(|&c| cnsts[c as usize].light_pos);
        }
        min_usage
    }

    /// Candidates of a round: unfixed enabled variables of the saturated constraints, in
    /// order (with repeats). Also sets `min_bound`: the smallest `bound · penalty` below
    /// `min_usage` among them (infinite if none).
    fn collect_candidates(&mut self, min_usage: f64) {
        self.candidates.clear();
        let mut min_bound = f64::INFINITY;
        for &c in &self.saturated {
            for e in &self.cnsts[c as usize].elems {
                if e.penalty <= 0.0 || e.weight <= 0.0 || self.var_fixed[e.var as usize] {
                    continue;
                }
                self.candidates.push(e.var);
                let bound = self.vars[e.var as usize].bound;
                if bound > 0.0 {
                    let bp = bound * e.penalty;
                    if bp < min_usage && bp < min_bound {
                        min_bound = bp;
                    }
                }
            }
        }
        self.min_bound = min_bound;
    }

    /// The value a candidate gets this round, or `None` if it waits (already fixed, or some
    /// variable's bound is hit first and this one's is not that bound).
    fn candidate_value(&self, v: usize, min_usage: f64, min_bound: f64) -> Option<f64> {
        if self.var_fixed[v] {
            return None;
        }
        let var = &self.vars[v];
        if min_bound.is_finite() {
            ((var.bound * var.penalty - min_bound).abs() < self.epsilon).then_some(var.bound)
        } else {
            Some(min_usage / var.penalty)
        }
    }

    /// A new entry for `c` at its current ratio, now its only valid one (a NaN ratio gets no
    /// entry: the scan never selects it either).
    fn heap_entry(&mut self, c: u32) -> Option<HeapEntry> {
        let cn = &mut self.cnsts[c as usize];
        cn.heap_version = cn.heap_version.wrapping_add(1);
        let ratio = cn.remaining / cn.usage;
        if ratio.is_nan() {
            cn.heap_key = u64::MAX;
            return None;
        }
        cn.heap_key = ratio_key(ratio);
        Some(HeapEntry {
            key: cn.heap_key,
            cnst: c,
            version: cn.heap_version,
        })
    }

    fn heap_push(&mut self, c: u32) {
        if let Some(entry) = self.heap_entry(c) {
            self.heap.push(entry);
        }
    }

    fn fix_variable(&mut self, v: usize, value: f64) {
        let eps = self.epsilon;
        self.vars[v].value = value;
        self.var_fixed[v] = true;
        let penalty = self.vars[v].penalty;
        for k in 0..self.vars[v].cnsts.len() {
            let VarCnst { cnst, weight, .. } = self.vars[v].cnsts[k];
            if weight <= 0.0 {
                continue;
            }
            let c = cnst as usize;
            if self.cnsts[c].light_pos == NOT_IN_LIGHT {
                continue;
            }
            let changed = match self.cnsts[c].sharing {
                Sharing::Shared => {
                    let cn = &mut self.cnsts[c];
                    cn.remaining = snap(cn.remaining - weight * value, cn.bound * eps);
                    cn.usage = snap(cn.usage - weight / penalty, eps);
                    true
                }
                // `usage` is the max of `w / p` over the unfixed variables: it can only change
                // if `v` reached it (same bits either way, the max is exact).
                Sharing::FatPipe if weight / penalty < self.cnsts[c].usage => false,
                Sharing::FatPipe => {
                    self.cnsts[c].usage = self.fatpipe_usage(c);
                    true
                }
            };
            let cn = &self.cnsts[c];
            if cn.usage <= eps || cn.remaining <= cn.bound * eps {
                self.light_remove(cnst);
            } else if changed {
                // Normally the ratio went up and the entry stays a valid lower bound; if
                // rounding lowered it, push the lower key now.
                let ratio = cn.remaining / cn.usage;
                if self.use_heap && !ratio.is_nan() && ratio_key(ratio) < cn.heap_key {
                    self.heap_push(cnst);
                }
            }
        }
    }

    /// Max of `w / p` over the unfixed enabled variables of fat pipe `c`.
    fn fatpipe_usage(&self, c: usize) -> f64 {
        let mut usage: f64 = 0.0;
        for e in &self.cnsts[c].elems {
            if !self.var_fixed[e.var as usize] && e.penalty > 0.0 && e.weight > 0.0 {
                usage = usage.max(e.weight / e.penalty);
            }
        }
        usage
    }

    /// Like [`System::solve`], but with the original saturation loop that rescans the whole
    /// light table each round (O(C²) per solve, as SimGrid's `maxmin_solve`). Kept as the
    /// reference `solve` must match bit for bit; not for production use.
    pub fn solve_reference(&mut self) -> &[u32] {
        self.comp_vars.clear();
        if self.modified.is_empty() {
            return &self.comp_vars;
        }
        self.collect_component();
        self.saturate_reference();
        &self.comp_vars
    }

    /// The original scan-based saturation loop (see [`System::solve_reference`]).
    fn saturate_reference(&mut self) {
        let eps = self.epsilon;
        while !self.light.is_empty() {
            // Smallest ratio, with exact ties collected.
            let mut min_usage = f64::INFINITY;
            self.saturated.clear();
            for &c in &self.light {
                let cn = &self.cnsts[c as usize];
                let ratio = cn.remaining / cn.usage;
                if ratio < min_usage {
                    min_usage = ratio;
                    self.saturated.clear();
                    self.saturated.push(c);
                } else if ratio == min_usage {
                    self.saturated.push(c);
                }
            }
            self.collect_candidates(min_usage);
            let min_bound = self.min_bound;
            if self.candidates.is_empty() {
                // Only possible through rounding; drop the constraints to guarantee progress.
                for i in 0..self.saturated.len() {
                    let c = self.saturated[i];
                    self.light_remove(c);
                }
                continue;
            }
            for i in 0..self.candidates.len() {
                let v = self.candidates[i] as usize;
                if let Some(value) = self.candidate_value(v, min_usage, min_bound) {
                    self.fix_variable_reference(v, value, eps);
                }
            }
        }
    }

    /// The original `fix_variable` (fat-pipe usage always recomputed, no heap bookkeeping).
    fn fix_variable_reference(&mut self, v: usize, value: f64, eps: f64) {
        self.vars[v].value = value;
        self.var_fixed[v] = true;
        let penalty = self.vars[v].penalty;
        for k in 0..self.vars[v].cnsts.len() {
            let VarCnst { cnst, weight, .. } = self.vars[v].cnsts[k];
            if weight <= 0.0 {
                continue;
            }
            let c = cnst as usize;
            if self.cnsts[c].light_pos == NOT_IN_LIGHT {
                continue;
            }
            match self.cnsts[c].sharing {
                Sharing::Shared => {
                    let cn = &mut self.cnsts[c];
                    cn.remaining = snap(cn.remaining - weight * value, cn.bound * eps);
                    cn.usage = snap(cn.usage - weight / penalty, eps);
                }
                Sharing::FatPipe => self.cnsts[c].usage = self.fatpipe_usage(c),
            }
            let cn = &self.cnsts[c];
            if cn.usage <= eps || cn.remaining <= cn.bound * eps {
                self.light_remove(cnst);
            }
        }
    }

    fn light_remove(&mut self, c: u32) {
        let pos = self.cnsts[c as usize].light_pos;
        if pos == NOT_IN_LIGHT {
            return;
        }
        self.light.swap_remove(pos as usize);
        if (pos as usize) < self.light.len() {
            let moved = self.light[pos as usize];
            self.cnsts[moved as usize].light_pos = pos;
        }
        self.cnsts[c as usize].light_pos = NOT_IN_LIGHT;
    }

    /// Sum (shared) or max (fat pipe) of `w · x` over a constraint's enabled variables.
    pub fn constraint_load(&self, c: CnstId) -> f64 {
        let cn = &self.cnsts[c.0 as usize];
        let mut load: f64 = 0.0;
        for e in &cn.elems {
            let var = &self.vars[e.var as usize];
            if var.penalty > 0.0 {
                let x = e.weight * var.value;
                match cn.sharing {
                    Sharing::Shared => load += x,
                    Sharing::FatPipe => load = load.max(x),
                }
            }
        }
        load
    }

    /// Number of live variables.
    pub fn variable_count(&self) -> usize {
        self.vars.len() - self.free_vars.len()
    }

    /// Constraints used by a variable, with their weights.
    pub fn variable_constraints(&self, v: VarId) -> impl Iterator<Item = (CnstId, f64)> + '_ {
        self.vars[v.0 as usize]
            .cnsts
            .iter()
            .map(|vc| (CnstId(vc.cnst), vc.weight))
    }

    /// Whether a variable id currently refers to a live variable.
    pub fn is_alive(&self, v: VarId) -> bool {
        self.vars.get(v.0 as usize).is_some_and(|var| var.alive)
    }
}

/// `x`, or 0 when `x < eps` (SimGrid's `double_update` snapping).
fn snap(x: f64, eps: f64) -> f64 {
    if x < eps {
        0.0
    } else {
        x
    }
}

/// A constraint's usage with one more element: `Σ w/p` (fat pipe: `max w/p`)
/// over the enabled elements with `w > 0`.
#[inline]
fn with_element(usage: f64, sharing: Sharing, weight: f64, penalty: f64) -> f64 {
    if penalty > 0.0 && weight > 0.0 {
        let u = weight / penalty;
        match sharing {
            Sharing::Shared => usage + u,
            Sharing::FatPipe => usage.max(u),
        }
    } else {
        usage
    }
}

/// One step of a scan for the smallest ratio with its exact ties: `c`, of ratio `ratio`,
/// replaces the kept constraints when smaller, joins them when equal.
#[inline(always)]
fn keep_smallest(kept: &mut Vec<u32>, min: &mut f64, c: u32, ratio: f64) {
    if ratio < *min {
        *min = ratio;
        kept.clear();
        kept.push(c);
    } else if ratio == *min {
        kept.push(c);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1.0)
    }

    #[test]
    fn ratio_keys_follow_the_numeric_order() {
        let xs = [
            0.0,
            -0.0,
            1e-300,
            5e-324,
            0.5,
            1.0,
            1.0 + f64::EPSILON,
            3e10,
            f64::INFINITY,
        ];
        for a in xs {
            for b in xs {
                assert_eq!(
                    ratio_key(a).cmp(&ratio_key(b)),
                    a.partial_cmp(&b).unwrap(),
                    "{a} vs {b}"
                );
            }
        }
    }

    #[test]
    fn min_heap_pops_in_key_order() {
        let mut heap = MinHeap::default();
        let mut keys: Vec<u64> = Vec::new();
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % 50
        };
        for round in 0..200 {
            // Heapified bulk loads, interleaved pushes and pops, duplicates.
            if round % 50 == 0 {
                heap.clear();
                keys.clear();
                for i in 0..(round + 3) {
                    let key = next();
                    heap.data.push(HeapEntry {
                        key,
                        cnst: i as u32,
                        version: 0,
                    });
                    keys.push(key);
                }
                heap.heapify();
            }
            for _ in 0..(next() % 4) {
                let key = next();
                heap.push(HeapEntry {
                    key,
                    cnst: 0,
                    version: 0,
                });
                keys.push(key);
            }
            for _ in 0..(next() % 4) {
                keys.sort_unstable();
                let want = (!keys.is_empty()).then(|| keys.remove(0));
                assert_eq!(heap.peek().map(|e| e.key), want);
                assert_eq!(heap.pop().map(|e| e.key), want);
            }
        }
        keys.sort_unstable();
        let rest: Vec<u64> = std::iter::from_fn(|| heap.pop().map(|e| e.key)).collect();
        assert_eq!(rest, keys);
    }

    #[test]
    fn penalties_share_inversely() {
        // capacity 3, penalties 1 and 2 → 2 and 1 (SimGrid maxmin_test oracle)
        let mut s = System::default();
        let c = s.add_constraint(3.0, Sharing::Shared);
        let a = s.add_variable(1.0, -1.0);
        let b = s.add_variable(2.0, -1.0);
        s.expand(c, a, 1.0);
        s.expand(c, b, 1.0);
        s.solve();
        assert!(close(s.value(a), 2.0));
        assert!(close(s.value(b), 1.0));
    }

    #[test]
    fn consumption_weights() {
        // capacity 3, weights 1 and 2, penalties 1 → 1 and 1
        let mut s = System::default();
        let c = s.add_constraint(3.0, Sharing::Shared);
        let a = s.add_variable(1.0, -1.0);
        let b = s.add_variable(1.0, -1.0);
        s.expand(c, a, 1.0);
        s.expand(c, b, 2.0);
        s.solve();
        assert!(close(s.value(a), 1.0));
        assert!(close(s.value(b), 1.0));
    }

    #[test]
    fn fatpipe_gives_full_capacity() {
        // FATPIPE capacity 10, penalties 1 and 2 → 10 and 5
        let mut s = System::default();
        let c = s.add_constraint(10.0, Sharing::FatPipe);
        let a = s.add_variable(1.0, -1.0);
        let b = s.add_variable(2.0, -1.0);
        s.expand(c, a, 1.0);
        s.expand(c, b, 1.0);
        s.solve();
        assert!(close(s.value(a), 10.0));
        assert!(close(s.value(b), 5.0));
    }

    #[test]
    fn bound_releases_share_to_others() {
        let mut s = System::default();
        let c = s.add_constraint(10.0, Sharing::Shared);
        let a = s.add_variable(1.0, 2.0);
        let b = s.add_variable(1.0, -1.0);
        s.expand(c, a, 1.0);
        s.expand(c, b, 1.0);
        s.solve();
        assert!(close(s.value(a), 2.0));
        assert!(close(s.value(b), 8.0));
    }

    #[test]
    fn disabled_variable_takes_nothing_and_removal_frees_share() {
        let mut s = System::default();
        let c = s.add_constraint(10.0, Sharing::Shared);
        let a = s.add_variable(1.0, -1.0);
        let b = s.add_variable(0.0, -1.0);
        s.expand(c, a, 1.0);
        s.expand(c, b, 1.0);
        s.solve();
        assert!(close(s.value(a), 10.0));
        assert_eq!(s.value(b), 0.0);
        s.set_penalty(b, 1.0);
        s.solve();
        assert!(close(s.value(a), 5.0));
        s.remove_variable(a);
        let updated = s.solve().to_vec();
        assert_eq!(updated, vec![b.0]);
        assert!(close(s.value(b), 10.0));
    }

    #[test]
    fn incremental_solve_touches_only_the_component() {
        let mut s = System::default();
        let c1 = s.add_constraint(10.0, Sharing::Shared);
        let c2 = s.add_constraint(10.0, Sharing::Shared);
        let a = s.add_variable(1.0, -1.0);
        let b = s.add_variable(1.0, -1.0);
        s.expand(c1, a, 1.0);
        s.expand(c2, b, 1.0);
        s.solve();
        let d = s.add_variable(1.0, -1.0);
        s.expand(c2, d, 1.0);
        let updated = s.solve().to_vec();
        assert!(updated.contains(&b.0) && updated.contains(&d.0) && !updated.contains(&a.0));
        assert!(close(s.value(a), 10.0));
        assert!(close(s.value(b), 5.0));
    }

    #[test]
    fn bottleneck_chain() {
        // a uses c1 (cap 1) and c2 (cap 10); b uses c2 only: a=1, b=9.
        let mut s = System::default();
        let c1 = s.add_constraint(1.0, Sharing::Shared);
        let c2 = s.add_constraint(10.0, Sharing::Shared);
        let a = s.add_variable(1.0, -1.0);
        let b = s.add_variable(1.0, -1.0);
        s.expand(c1, a, 1.0);
        s.expand(c2, a, 1.0);
        s.expand(c2, b, 1.0);
        s.solve();
        assert!(close(s.value(a), 1.0));
        assert!(close(s.value(b), 9.0));
    }
}
