//! SimGrid's order of same-date events, reproduced.
//!
//! When several activities end at one date, SimGrid wakes their actors in an order that
//! follows from its data structures, not from any documented rule; SMPI programs whose
//! costs depend on that order (a rank's `MPI_Iprobe` cost grows with a counter shared by
//! all ranks) only give SimGrid's numbers if we wake ranks in the same order. SimGrid 3.32:
//!
//! - Each model (CPU, then network) keeps its actions in a *stable* heap ordered by
//!   `(date, stamp)`, where the stamp is renewed every time an action is (re)dated.
//! - After each date's actors have run, the max-min system is solved and every action of
//!   the *modified set* is re-dated, in that set's order, even when its rate is unchanged.
//! - The modified set is built from the modified *constraints*, in the order in which they
//!   were first touched since the previous solve. Touching a constraint walks, depth first,
//!   the constraints of every enabled variable on it (each variable once per solve), newest
//!   enabled variable first. A constraint is touched when a variable is expanded on it, when
//!   a variable is enabled (its first constraint) and when an enabled variable is freed
//!   (its first constraint, before it leaves the lists). A constraint left with no variable
//!   at all (enabled or not) leaves the modified set; touched again, it goes to its end.
//! - Per constraint, enabled variables are listed newest-enabled first.
//! - A sleep is a CPU action with a zero penalty; it enters the CPU model's modified set at
//!   its *front* when created, so new sleeps are dated before the computations, newest first.
//! - At one date, the CPU model's ended actions wake their actors before the network's.
//! - An action is due at a date when it is strictly less than one precision after it.
//! - At one date, every flow whose latency is paid is enabled before any finished flow frees
//!   its variable (SimGrid frees them when it hands them to their activities; pinned by the
//!   comparison suite's `traffic.fattree2_64.CM02` case).
//! - The solve itself covers exactly the modified constraints (SimGrid's selective update),
//!   in the set's order: a constraint the walks missed keeps its old allocation, which makes
//!   a difference when a variable is enabled on a constraint already touched in the round.
//!
//! This module tracks the touches and lists; the engine solves the listed constraints
//! (`lmm::System::solve_listed`) and re-dates the listed actions in order.

/// A flow's walk mark: every link of the flow has been walked through this period.
const WALKED: u32 = u32::MAX;

/// Order-tracking state (indices: hosts, links and activity slots of the engine).
#[derive(Default)]
pub(crate) struct SgOrder {
    /// Solve period; marks equal to it mean "already done since the last solve".
    period: u32,
    /// The CPU model's modified constraints (hosts; their variables: computations and sleeps).
    hosts: ModifiedSet,
    /// Running computations per host, oldest first.
    host_execs: Vec<Vec<u32>>,
    /// Sleeps created since the last solve, oldest first.
    new_sleeps: Vec<u32>,
    /// The network model's modified constraints (links; their variables: flows, enabled or in
    /// their latency phase).
    links: ModifiedSet,
    /// Enabled flows per link, oldest first (SimGrid's list read backwards).
    link_enabled: Vec<Vec<u32>>,
    /// Per activity slot: the links of a flow (route, then back route), as expanded so far,
    /// in a flat array of `stride` entries per slot (cache-friendly walks).
    flow_links: Vec<u32>,
    stride: usize,
    /// Per activity slot: the flow's state for walks and listings.
    flows: Vec<FlowState>,
    /// The walk's stack (kept to reuse its allocation): per link being walked, how many of
    /// its enabled flows are left to visit, and the flow the walk came through (done with
    /// when the link is).
    walk_stack: Vec<(u32, u32, u32)>,
    /// The links of the last [`SgOrder::net_order`]'s set that carry enabled flows, in order.
    busy_links: Vec<u32>,
}

/// A flow's links count and marks.
#[derive(Clone, Copy, Default)]
struct FlowState {
    /// Links in its slot of `flow_links`.
    len: u32,
    /// Period of its last walk, and the index where a walk through its links resumes (or
    /// [`WALKED`] once done).
    walk_period: u32,
    walk_at: u32,
    /// Period in which it was last listed in the network model's modified set.
    listed: u32,
}

impl SgOrder {
    pub(crate) fn new(hosts: usize, links: usize) -> Self {
        SgOrder {
            period: 1,
            hosts: ModifiedSet::new(hosts),
            host_execs: vec![Vec::new(); hosts],
            links: ModifiedSet::new(links),
            link_enabled: vec![Vec::new(); links],
            stride: 8,
            ..Default::default()
        }
    }

    fn slot(&mut self, a: u32) {
        let n = a as usize + 1;
        if self.flows.len() < n {
            let n = n.max(self.flows.len() * 2);
            self.flows.resize(n, FlowState::default());
            self.flow_links.resize(n * self.stride, 0);
        }
    }

    /// Appends a link to flow `a`'s list, widening every slot when a route is longer.
    fn push_link(&mut self, a: usize, l: u32) {
        let len = self.flows[a].len as usize;
        if len == self.stride {
            let (old, stride) = (self.stride, self.stride * 2);
            let mut links = vec![0; self.flows.len() * stride];
            for (i, f) in self.flows.iter().enumerate() {
                let n = f.len;
                links[i * stride..i * stride + n as usize]
                    .copy_from_slice(&self.flow_links[i * old..i * old + n as usize]);
            }
            self.flow_links = links;
            self.stride = stride;
        }
        self.flow_links[a * self.stride + len] = l;
        self.flows[a].len += 1;
    }

    /// Whether anything was touched since the last solve.
    pub(crate) fn pending(&self) -> bool {
        !self.hosts.touched.is_empty() || !self.links.touched.is_empty() || !self.new_sleeps.is_empty()
    }

    pub(crate) fn exec_start(&mut self, a: u32, host: u32) {
        self.slot(a);
        self.host_execs[host as usize].push(a);
        self.hosts.cnsts[host as usize].vars += 1;
        self.hosts.touch(host, self.period);
    }

    pub(crate) fn exec_free(&mut self, a: u32, host: u32) {
        self.hosts.touch(host, self.period);
        let list = &mut self.host_execs[host as usize];
        if let Some(i) = list.iter().rposition(|&x| x == a) {
            list.remove(i);
        }
        self.hosts.var_gone(host, self.period);
    }

    pub(crate) fn sleep_start(&mut self, a: u32, host: u32) {
        self.slot(a);
        self.hosts.cnsts[host as usize].vars += 1;
        self.hosts.touch(host, self.period);
        self.new_sleeps.push(a);
    }

    /// A sleep ends or is cancelled (its variable is disabled: no touch).
    pub(crate) fn sleep_free(&mut self, host: u32) {
        self.hosts.var_gone(host, self.period);
    }

    /// A host's constraint changed (its bound, or a computation's bound on it).
    #[cold]
    pub(crate) fn touch_host(&mut self, h: u32) {
        self.hosts.touch(h, self.period);
    }

    /// A flow's variable changed (bound or penalty): SimGrid touches each of its constraints.
    #[cold]
    pub(crate) fn touch_flow(&mut self, a: u32) {
        let (start, n) = (a as usize * self.stride, self.flows[a as usize].len as usize);
        for i in start..start + n {
            let l = self.flow_links[i];
            self.touch_link(l);
        }
    }

    /// A link's constraint changed (its bound), with the walk through its flows.
    #[cold]
    pub(crate) fn touch_link_changed(&mut self, l: u32) {
        self.touch_link(l);
    }

    /// Inlined: most touches find the link already in the set (or without enabled flows),
    /// and the walk's register saves would cost more than the check.
    #[inline]
    fn touch_link(&mut self, l: u32) {
        if self.links.touch(l, self.period) && !self.link_enabled[l as usize].is_empty() {
            self.walk_from(l);
        }
    }

    /// SimGrid's `update_modified_cnst_set_rec` from link `l` (just added to the set): depth
    /// first through the enabled flows on each link (newest first) to their other links, each
    /// flow once per solve period. Written with a stack of its own instead of recursion.
    #[inline(never)]
    fn walk_from(&mut self, l: u32) {
        let SgOrder {
            period,
            links: set,
            link_enabled,
            flow_links,
            stride,
            flows,
            walk_stack: stack,
            ..
        } = self;
        let (period, stride) = (*period, *stride);
        stack.clear();
        stack.push((l, link_enabled[l as usize].len() as u32, u32::MAX));
        while let Some(top) = stack.last_mut() {
            let (l, left, via) = *top;
            if left == 0 {
                stack.pop();
                if via != u32::MAX {
                    flows[via as usize].walk_at = WALKED;
                }
                continue;
            }
            top.1 = left - 1;
            let a = link_enabled[l as usize][left as usize - 1] as usize;
            let FlowState {
                len,
                walk_period: p,
                walk_at: at,
                ..
            } = flows[a];
            if p == period && at == WALKED {
                continue;
            }
            // SimGrid restarts at the flow's first link when a deeper walk meets the flow
            // again; the links before the one that walk came through are all touched by then
            // (no effect), so starting after it touches the same links in the same order, in
            // linear rather than quadratic time.
            let mut i = if p == period { at as usize } else { 0 };
            let start = a * stride;
            let links = &flow_links[start..start + len as usize];
            let mut deeper = None;
            while i < links.len() {
                let l2 = links[i];
                i += 1;
                if l2 == l || !set.touch(l2, period) {
                    continue;
                }
                let on = &link_enabled[l2 as usize];
                if on.last() == Some(&(a as u32)) {
                    // The walk from `l2` would meet this flow first (its newest) and resume
                    // it after `l2`: that is this loop going on. The older flows of `l2` wait
                    // in a frame below whatever the rest of this flow leads to, as they would
                    // in `l2`'s own frame; without any, no frame (the flow is marked walked
                    // when its links are done, before any frame below it ends).
                    if on.len() > 1 {
                        stack.push((l2, on.len() as u32 - 1, a as u32));
                    }
                    continue;
                }
                deeper = Some(l2);
                break;
            }
            match deeper {
                Some(l2) => {
                    // The flow is on `l2` too: that walk meets it (resuming after `l2`) and
                    // finishes it.
                    let f = &mut flows[a];
                    (f.walk_period, f.walk_at) = (period, i as u32);
                    stack.push((l2, link_enabled[l2 as usize].len() as u32, a as u32));
                }
                None => {
                    let f = &mut flows[a];
                    (f.walk_period, f.walk_at) = (period, WALKED);
                }
            }
        }
    }

    /// A flow starts: its variable is expanded on `links` in order (enabled at once when it
    /// has no latency phase).
    pub(crate) fn flow_start(&mut self, a: u32, links: impl Iterator<Item = u32>, enabled: bool) {
        self.slot(a);
        self.flows[a as usize] = FlowState::default();
        for l in links {
            self.push_link(a as usize, l);
            self.links.cnsts[l as usize].vars += 1;
            if enabled {
                self.link_enabled[l as usize].push(a);
            }
            self.touch_link(l);
        }
    }

    /// A flow's latency phase ends: its variable is enabled.
    pub(crate) fn flow_enable(&mut self, a: u32) {
        let (start, n) = (a as usize * self.stride, self.flows[a as usize].len as usize);
        for i in start..start + n {
            let l = self.flow_links[i];
            self.link_enabled[l as usize].push(a);
        }
        if n > 0 {
            self.touch_link(self.flow_links[start]);
        }
    }

    /// A flow's variable is freed (`enabled`: it was past its latency phase).
    pub(crate) fn flow_free(&mut self, a: u32, enabled: bool) {
        let (start, n) = (a as usize * self.stride, self.flows[a as usize].len as usize);
        if enabled && n > 0 {
            self.touch_link(self.flow_links[start]);
        }
        for i in start..start + n {
            let l = self.flow_links[i] as usize;
            if enabled {
                let list = &mut self.link_enabled[l];
                if let Some(i) = list.iter().rposition(|&x| x == a) {
                    // The newest goes without a (library) move of the others.
                    if i + 1 == list.len() {
                        list.pop();
                    } else {
                        list.remove(i);
                    }
                }
            }
            self.links.var_gone(l as u32, self.period);
        }
        self.flows[a as usize].len = 0;
    }

    /// The CPU model's modified set at a solve: new sleeps (newest first), then the
    /// computations of the touched hosts (host by host, newest first).
    pub(crate) fn cpu_order(&mut self, out: &mut Vec<u32>) {
        out.extend(self.new_sleeps.iter().rev());
        for h in self.hosts.members(self.period) {
            out.extend(self.host_execs[h as usize].iter().rev());
        }
    }

    /// The network model's modified set at a solve (and the links to re-solve: see
    /// [`SgOrder::modified_busy_links`]).
    pub(crate) fn net_order(&mut self, out: &mut Vec<u32>) {
        self.busy_links.clear();
        for l in self.links.members(self.period) {
            let flows = &self.link_enabled[l as usize];
            if !flows.is_empty() {
                self.busy_links.push(l);
            }
            for &a in flows.iter().rev() {
                let f = &mut self.flows[a as usize];
                if f.listed != self.period {
                    f.listed = self.period;
                    out.push(a);
                }
            }
        }
    }

    /// The hosts of the CPU model's modified set that run computations, in order (the
    /// others have nothing to re-solve).
    pub(crate) fn modified_busy_hosts(&self) -> impl Iterator<Item = u32> + '_ {
        self.hosts
            .members(self.period)
            .filter(|&h| !self.host_execs[h as usize].is_empty())
    }

    /// The links of the network model's modified set that carry enabled flows, in order
    /// (the others have nothing to re-solve), as [`SgOrder::net_order`] found them.
    pub(crate) fn modified_busy_links(&self) -> impl Iterator<Item = u32> + '_ {
        self.busy_links.iter().copied()
    }

    /// Ends a solve period.
    pub(crate) fn next_period(&mut self) {
        self.period = self.period.wrapping_add(1);
        if self.period == 0 {
            // Marks of four billion solves ago would look current: clear them.
            self.hosts.clear_marks();
            self.links.clear_marks();
            for f in &mut self.flows {
                (f.walk_period, f.walk_at, f.listed) = (0, 0, 0);
            }
            self.period = 1;
        }
        self.hosts.touched.clear();
        self.links.touched.clear();
        self.new_sleeps.clear();
    }
}

/// One model's set of modified constraints, in first-touch order (SimGrid's
/// `modified_constraint_set`), indexed by host or link.
#[derive(Default)]
struct ModifiedSet {
    cnsts: Vec<CnstState>,
    /// Touched constraints in order, with the token they had.
    touched: Vec<(u32, u32)>,
}

/// A constraint's place in its model's modified set.
#[derive(Clone, Copy, Default)]
struct CnstState {
    /// Period of the last touch (0: not in the set).
    mark: u32,
    /// Bumped when a constraint leaves the set, so its older `touched` entry is skipped.
    token: u32,
    /// Variables on the constraint, enabled or not.
    vars: u32,
}

impl ModifiedSet {
    fn new(n: usize) -> Self {
        ModifiedSet {
            cnsts: vec![CnstState::default(); n],
            touched: Vec::new(),
        }
    }

    /// Adds `c` at the end of the set unless it is in it; returns whether it was added.
    #[inline]
    fn touch(&mut self, c: u32, period: u32) -> bool {
        let cn = &mut self.cnsts[c as usize];
        if cn.mark == period {
            return false;
        }
        cn.mark = period;
        self.touched.push((c, cn.token));
        true
    }

    /// A variable leaves `c`; a constraint left empty leaves the set.
    fn var_gone(&mut self, c: u32, period: u32) {
        let cn = &mut self.cnsts[c as usize];
        cn.vars -= 1;
        if cn.vars == 0 && cn.mark == period {
            cn.mark = 0;
            cn.token = cn.token.wrapping_add(1);
        }
    }

    /// The constraints in the set, in order.
    fn members(&self, period: u32) -> impl Iterator<Item = u32> + '_ {
        self.touched.iter().filter_map(move |&(c, token)| {
            let cn = &self.cnsts[c as usize];
            (token == cn.token && cn.mark == period).then_some(c)
        })
    }

    /// Forgets every mark (at a wrap of the period counter).
    fn clear_marks(&mut self) {
        for cn in &mut self.cnsts {
            cn.mark = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    /// SimGrid's `update_modified_cnst_set_rec`, literally: a flow's links are walked from
    /// the first each time the flow is met, and it is marked only after its loop.
    fn simgrid_walk(
        l: u32,
        enabled: &[Vec<u32>],
        links_of: &[Vec<u32>],
        visited: &mut [bool],
        in_set: &mut [bool],
        order: &mut Vec<u32>,
    ) {
        for &a in enabled[l as usize].iter().rev() {
            for &l2 in &links_of[a as usize] {
                if visited[a as usize] {
                    break;
                }
                if l2 != l && !in_set[l2 as usize] {
                    in_set[l2 as usize] = true;
                    order.push(l2);
                    simgrid_walk(l2, enabled, links_of, visited, in_set, order);
                }
            }
            visited[a as usize] = true;
        }
    }

    #[test]
    fn walks_touch_links_in_simgrids_order() {
        // Dense: most links carry many flows. Sparse: many links carry one flow or none, so
        // walks go on through links whose only flow is the one they came through. Some
        // routes pass a link twice (a back route over the same links).
        for (seed, max_links, max_route, twice) in [(7, 12, 9, 0.0), (8, 40, 5, 0.0), (9, 30, 6, 0.2)] {
            let mut rng = rand_pcg::Pcg64::seed_from_u64(seed);
            for _ in 0..1000 {
                let n_links = rng.gen_range(2..max_links);
                let n_flows = rng.gen_range(1..14u32);
                let mut sg = SgOrder::new(1, n_links as usize);
                let mut enabled = vec![Vec::new(); n_links as usize];
                let mut links_of = Vec::new();
                for a in 0..n_flows {
                    // A route: distinct links in a random order, sometimes followed by the
                    // same links again.
                    let mut route: Vec<u32> = (0..n_links).collect();
                    for i in (1..route.len()).rev() {
                        route.swap(i, rng.gen_range(0..=i));
                    }
                    route.truncate(rng.gen_range(1..=n_links.min(max_route)) as usize);
                    if rng.gen_bool(twice) {
                        route.extend_from_within(..);
                    }
                    sg.flow_start(a, route.iter().copied(), true);
                    for &l in &route {
                        enabled[l as usize].push(a);
                    }
                    links_of.push(route);
                }
                sg.next_period();
                // A new flow in its latency phase touches its links, in order.
                let mut probe: Vec<u32> = (0..n_links).filter(|_| rng.gen_bool(0.4)).collect();
                for i in (1..probe.len()).rev() {
                    probe.swap(i, rng.gen_range(0..=i));
                }
                sg.flow_start(n_flows, probe.iter().copied(), false);
                let mut expected = Vec::new();
                let (mut visited, mut in_set) =
                    (vec![false; n_flows as usize], vec![false; n_links as usize]);
                for &l in &probe {
                    if !in_set[l as usize] {
                        in_set[l as usize] = true;
                        expected.push(l);
                        simgrid_walk(l, &enabled, &links_of, &mut visited, &mut in_set, &mut expected);
                    }
                }
                let got: Vec<u32> = sg.links.members(sg.period).collect();
                assert_eq!(got, expected, "flows {links_of:?}, probe {probe:?}");
            }
        }
    }
}
