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
//! constraint's bound for `remaining`, absolute for `usage`).
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
    weight: f64,
    /// Position of the matching entry in the variable's `cnsts`.
    slot: u32,
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
    visit: u64,
    fixed: bool,
}

const NOT_IN_LIGHT: u32 = u32::MAX;

/// A max-min system. See the module documentation.
#[derive(Debug)]
pub struct System {
    cnsts: Vec<Constraint>,
    vars: Vec<Variable>,
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
            free_vars: Vec::new(),
            modified: Vec::new(),
            visit_epoch: 0,
            epsilon,
            comp_cnsts: Vec::new(),
            comp_vars: Vec::new(),
            light: Vec::new(),
            saturated: Vec::new(),
            candidates: Vec::new(),
        }
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
            var.visit = 0;
            var.fixed = false;
            id
        } else {
            self.vars.push(Variable {
                alive: true,
                penalty,
                bound,
                value: 0.0,
                cnsts: Vec::new(),
                visit: 0,
                fixed: false,
            });
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
                weight: w,
                slot,
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
        self.mark_var(v.0);
    }

    /// Changes a variable's bound (≤ 0 = unbounded).
    pub fn set_bound(&mut self, v: VarId, bound: f64) {
        self.vars[v.0 as usize].bound = bound;
        if self.vars[v.0 as usize].penalty > 0.0 {
            self.mark_var(v.0);
        }
    }

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
        let cn = &mut self.cnsts[c as usize];
        if !cn.modified {
            cn.modified = true;
            self.modified.push(c);
        }
    }

    fn mark_var(&mut self, v: u32) {
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

    /// Recomputes every variable (debug / reference mode).
    pub fn solve_all(&mut self) -> &[u32] {
        for c in 0..self.cnsts.len() as u32 {
            self.mark_cnst(c);
        }
        self.solve()
    }

    /// Breadth-first walk from the modified constraints through enabled variables.
    fn collect_component(&mut self) {
        self.visit_epoch += 1;
        let epoch = self.visit_epoch;
        self.comp_cnsts.clear();
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
            for e in 0..self.cnsts[c].elems.len() {
                let v = self.cnsts[c].elems[e].var as usize;
                if self.vars[v].penalty <= 0.0 || self.vars[v].visit == epoch {
                    continue;
                }
                self.vars[v].visit = epoch;
                self.comp_vars.push(v as u32);
                for k in 0..self.vars[v].cnsts.len() {
                    let c2 = self.vars[v].cnsts[k].cnst as usize;
                    if self.cnsts[c2].visit != epoch {
                        self.cnsts[c2].visit = epoch;
                        self.comp_cnsts.push(c2 as u32);
                    }
                }
            }
        }
    }

    fn saturate(&mut self) {
        let eps = self.epsilon;
        for &v in &self.comp_vars {
            let var = &mut self.vars[v as usize];
            var.value = 0.0;
            var.fixed = false;
        }
        self.light.clear();
        for idx in 0..self.comp_cnsts.len() {
            let c = self.comp_cnsts[idx] as usize;
            let cn = &mut self.cnsts[c];
            cn.light_pos = NOT_IN_LIGHT;
            cn.remaining = cn.bound;
            cn.usage = 0.0;
            if cn.remaining <= cn.bound * eps {
                continue;
            }
            for e in &cn.elems {
                let var = &self.vars[e.var as usize];
                if var.penalty > 0.0 && e.weight > 0.0 {
                    let u = e.weight / var.penalty;
                    match cn.sharing {
                        Sharing::Shared => cn.usage += u,
                        Sharing::FatPipe => cn.usage = cn.usage.max(u),
                    }
                }
            }
            if cn.usage > 0.0 {
                cn.light_pos = self.light.len() as u32;
                self.light.push(c as u32);
            }
        }
        // Variables that touch no loaded constraint get their bound (or stay 0).
        for &v in &self.comp_vars {
            let var = &mut self.vars[v as usize];
            if var.cnsts.iter().all(|vc| vc.weight <= 0.0) {
                var.value = if var.bound > 0.0 { var.bound } else { 0.0 };
                var.fixed = true;
            }
        }

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
            // Candidates: unfixed enabled variables of the saturated constraints.
            self.candidates.clear();
            let mut min_bound = f64::INFINITY;
            for &c in &self.saturated {
                for e in &self.cnsts[c as usize].elems {
                    let var = &self.vars[e.var as usize];
                    if var.penalty <= 0.0 || e.weight <= 0.0 || var.fixed {
                        continue;
                    }
                    self.candidates.push(e.var);
                    if var.bound > 0.0 {
                        let bp = var.bound * var.penalty;
                        if bp < min_usage && bp < min_bound {
                            min_bound = bp;
                        }
                    }
                }
            }
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
                if self.vars[v].fixed {
                    continue;
                }
                let (penalty, bound) = (self.vars[v].penalty, self.vars[v].bound);
                let value = if min_bound.is_finite() {
                    if (bound * penalty - min_bound).abs() < eps {
                        bound
                    } else {
                        continue;
                    }
                } else {
                    min_usage / penalty
                };
                self.fix_variable(v, value);
            }
        }
    }

    fn fix_variable(&mut self, v: usize, value: f64) {
        let eps = self.epsilon;
        self.vars[v].value = value;
        self.vars[v].fixed = true;
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
                Sharing::FatPipe => {
                    let mut usage: f64 = 0.0;
                    for e in &self.cnsts[c].elems {
                        let other = &self.vars[e.var as usize];
                        if !other.fixed && other.penalty > 0.0 && e.weight > 0.0 {
                            usage = usage.max(e.weight / other.penalty);
                        }
                    }
                    self.cnsts[c].usage = usage;
                }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1.0)
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
