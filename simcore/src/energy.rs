//! SimGrid 3.32's host energy plugin (`--cfg=plugin:host_energy`): the energy each host
//! dissipates, from its per-pstate power profile and the load of its CPU over time.
//!
//! # Power profile (host properties)
//! - `wattage_per_state`: one profile per pstate, separated by `,`; a profile is
//!   `Idle:Epsilon:AllCores` or the older `Idle:AllCores` (then Epsilon = Idle), in watts.
//!   Each number reads as C's `strtod` reads it: leading blanks are skipped, anything after
//!   the number is an error (SimGrid's rule).
//! - `wattage_off`: the power of a host that is off (0 when absent).
//!
//! A host without `wattage_per_state` is accounted at 0 W, with SimGrid's warning.
//!
//! # Power at a load
//! With `L` the CPU usage of the host (the sum of the rates of its computations, flop/s),
//! `s` the peak speed of its current pstate and `c` its cores, the load is
//! `l = min(L / s / c, 1)` (`l = 1` when `s` is 0), and the power is
//!
//! ```text
//! P(l) = Idle                              if l = 0
//! P(l) = Epsilon + l · (AllCores − Epsilon) if 0 < l ≤ 1
//! P    = wattage_off                       when the host is off
//! ```
//!
//! # When the energy is updated
//! The energy is `Σ P · Δt` over the intervals between *updates*, each interval at the power
//! of the load and pstate seen at its end (SimGrid's `HostEnergy::update`): the kernel updates
//! a host just before a computation starts on it, when a computation or a sleep on it ends
//! (before its variable leaves the max-min system), when its speed, pstate or state changes
//! (before the system is re-solved), when a program reads its energy, and at the end of the
//! simulation. Between two updates the load is constant (the CPU shares change only at those
//! events), so the sum is the integral of the power over time. The pstate of an interval is
//! the one recorded at its start.
//!
//! A host is *used* when some update saw a load above 0; the end report splits the total into
//! used hosts and unused/idle ones.

use crate::platform::{Host, HostId};

/// The powers of one pstate, watts.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PowerRange {
    /// When nothing runs on the host.
    pub idle: f64,
    /// When every core is at an epsilon load (the static part of a busy host).
    pub epsilon: f64,
    /// When every core is fully loaded.
    pub all_cores: f64,
    /// `all_cores − epsilon`: the dynamic part at full load.
    pub slope: f64,
}

impl PowerRange {
    fn new(idle: f64, epsilon: f64, all_cores: f64) -> Self {
        PowerRange {
            idle,
            epsilon,
            all_cores,
            slope: all_cores - epsilon,
        }
    }
}

/// A host's power profile, from its properties.
#[derive(Clone, Debug, PartialEq)]
pub struct HostPower {
    /// One range per pstate; `None` without a `wattage_per_state` property (0 W).
    pub ranges: Option<Vec<PowerRange>>,
    /// `wattage_off`.
    pub watts_off: f64,
}

/// A malformed power property.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("host {host}: property {property}=\"{value}\": {why}")]
pub struct PropertyError {
    /// The host.
    pub host: String,
    /// `wattage_per_state` or `wattage_off`.
    pub property: &'static str,
    /// Its value as given.
    pub value: String,
    /// What is wrong, in SimGrid's words where it has some.
    pub why: String,
}

/// A number as C's `strtod` reads a whole string (leading blanks skipped, nothing after it),
/// and finite.
fn c_number(text: &str) -> Option<f64> {
    let t = text.trim_start_matches([' ', '\t', '\n', '\r', '\x0b', '\x0c']);
    t.parse::<f64>().ok().filter(|v| v.is_finite())
}

impl HostPower {
    /// The profile of `host`; `pstates` is its number of pstates when known (the count of
    /// profiles must match it, as SimGrid requires).
    pub fn from_properties(host: &Host, pstates: Option<usize>) -> Result<HostPower, PropertyError> {
        let prop = |name: &str| {
            host.properties
                .iter()
                .rev()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v)
        };
        let err = |property: &'static str, value: &str, why: String| PropertyError {
            host: host.name.clone(),
            property,
            value: value.to_string(),
            why,
        };
        let watts_off = match prop("wattage_off") {
            None => 0.0,
            Some(v) => c_number(v).ok_or_else(|| {
                err(
                    "wattage_off",
                    v,
                    format!("invalid value for property wattage_off of host {}", host.name),
                )
            })?,
        };
        let Some(all) = prop("wattage_per_state") else {
            return Ok(HostPower {
                ranges: None,
                watts_off,
            });
        };
        let per_state: Vec<&str> = all.split(',').collect();
        if let Some(n) = pstates.filter(|n| *n != per_state.len()) {
            return Err(err(
                "wattage_per_state",
                all,
                format!("found {} energetic profiles for {n} pstates", per_state.len()),
            ));
        }
        let mut ranges = Vec::with_capacity(per_state.len());
        for (i, profile) in per_state.iter().enumerate() {
            let values: Vec<&str> = profile.split(':').collect();
            if values.len() != 2 && values.len() != 3 {
                return Err(err(
                    "wattage_per_state",
                    all,
                    format!(
                        "power properties incorrectly defined for host {} (pstate {i}: \"{profile}\"): it should be \
                         'Idle:AllCores' (or 'Idle:Epsilon:AllCores') power values",
                        host.name
                    ),
                ));
            }
            let read = |what: &str, text: &str| {
                c_number(text).ok_or_else(|| {
                    err(
                        "wattage_per_state",
                        all,
                        format!(
                            "invalid {what} value for pstate {i} on host {}: \"{text}\"",
                            host.name
                        ),
                    )
                })
            };
            let idle = read("Idle", values[0])?;
            let (epsilon, all_cores) = match values[..] {
                [_, max] => (idle, read("AllCores", max)?),
                [_, eps, max] => (read("Epsilon", eps)?, read("AllCores", max)?),
                _ => unreachable!("2 or 3 values, checked above"),
            };
            ranges.push(PowerRange::new(idle, epsilon, all_cores));
        }
        Ok(HostPower {
            ranges: Some(ranges),
            watts_off,
        })
    }
}

/// A host's state at a date, as the plugin needs it (the kernel answers).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HostState {
    /// Whether the host is on.
    pub on: bool,
    /// Its current pstate.
    pub pstate: usize,
    /// Its number of cores.
    pub cores: u32,
    /// Its CPU usage: the sum of its computations' rates, flop/s.
    pub load: f64,
}

/// The kernel's view of the hosts, for the plugin.
pub trait Hosts {
    /// The state of `host` now.
    fn state(&self, host: HostId) -> HostState;
    /// The peak speed of one core of `host` at `pstate`, flop/s.
    fn pstate_speed(&self, host: HostId, pstate: usize) -> f64;
    /// The number of pstates of `host`, when known (`wattage_per_state` must give as many
    /// profiles).
    fn pstate_count(&self, host: HostId) -> Option<usize>;
}

/// One host's account.
#[derive(Clone, Debug)]
struct Account {
    total: f64,
    last_updated: f64,
    /// The pstate of the interval since `last_updated`; `None` when the host was off.
    pstate: Option<usize>,
    used: bool,
}

/// The plugin's state: every host's profile and account.
#[derive(Debug)]
pub struct Meter {
    power: Vec<HostPower>,
    accounts: Vec<Account>,
    names: Vec<String>,
}

/// Where SimGrid's plugin prints its warning of a host without profile (its source
/// location, part of its log line).
pub const WARNING_LOCATION: (&str, i32) = ("./src/plugins/host_energy.cpp", 344);

impl Meter {
    /// The plugin started at `now` on the platform's `hosts` (by [`HostId`]); `hosts` gives each host's state and
    /// number of pstates. Returns the meter and SimGrid's warnings
    /// (one per host without `wattage_per_state`).
    pub fn new(
        platform_hosts: &[Host],
        now: f64,
        hosts: &dyn Hosts,
    ) -> Result<(Meter, Vec<String>), PropertyError> {
        let mut power = Vec::with_capacity(platform_hosts.len());
        let mut accounts = Vec::with_capacity(platform_hosts.len());
        let mut warnings = Vec::new();
        for (i, host) in platform_hosts.iter().enumerate() {
            let id = HostId(i as u32);
            let p = HostPower::from_properties(host, hosts.pstate_count(id))?;
            if p.ranges.is_none() {
                warnings.push(format!(
                    "No energetic profiles (wattage_per_state) given for host {}, using 0 W by default. Direct \
                     request of power/energy consumption of this host will fail.",
                    host.name
                ));
            }
            power.push(p);
            let state = hosts.state(id);
            accounts.push(Account {
                total: 0.0,
                last_updated: now,
                pstate: state.on.then_some(state.pstate),
                used: false,
            });
        }
        let names = platform_hosts.iter().map(|h| h.name.clone()).collect();
        Ok((
            Meter {
                power,
                accounts,
                names,
            },
            warnings,
        ))
    }

    /// The power of `host` at CPU load `load` (0 to 1) in the pstate of its current interval.
    fn watts_at(&self, host: HostId, load: f64) -> f64 {
        let i = host.0 as usize;
        let Some(ranges) = &self.power[i].ranges else {
            return 0.0;
        };
        let Some(pstate) = self.accounts[i].pstate else {
            return self.power[i].watts_off;
        };
        let r = ranges
            .get(pstate)
            .unwrap_or_else(|| panic!("host {}: pstate {pstate} has no power profile", self.names[i]));
        if load > 0.0 {
            r.epsilon + load * r.slope
        } else {
            r.idle
        }
    }

    /// The power of `host` now, in the pstate of its current interval (marks it used when
    /// loaded, as SimGrid does).
    fn watts_now(&mut self, host: HostId, hosts: &dyn Hosts) -> f64 {
        let i = host.0 as usize;
        let Some(pstate) = self.accounts[i].pstate else {
            return self.power[i].watts_off;
        };
        let state = hosts.state(host);
        let speed = hosts.pstate_speed(host, pstate);
        let load = if speed <= 0.0 {
            // A pstate of speed 0 (booting, say) counts as fully loaded, as in SimGrid.
            1.0
        } else {
            let l = (state.load / speed / f64::from(state.cores.max(1))).min(1.0);
            if l > 0.0 {
                self.accounts[i].used = true;
            }
            l
        };
        self.watts_at(host, load)
    }

    /// Adds the energy of `host` since its last update, at `date`, and records the pstate
    /// (or off) of the interval that starts.
    pub fn update(&mut self, host: HostId, date: f64, hosts: &dyn Hosts) {
        let i = host.0 as usize;
        let start = self.accounts[i].last_updated;
        if start < date {
            let watts = self.watts_now(host, hosts);
            let acct = &mut self.accounts[i];
            acct.total += watts * (date - start);
            acct.last_updated = date;
        }
        let state = hosts.state(host);
        self.accounts[i].pstate = state.on.then_some(state.pstate);
    }

    fn ranges(&self, host: HostId) -> Option<&[PowerRange]> {
        self.power[host.0 as usize].ranges.as_deref()
    }

    /// The range of `pstate` of `host` (`Ok(None)` without profile: SimGrid answers 0 W).
    fn range_at(&self, host: HostId, pstate: i64) -> Result<Option<PowerRange>, String> {
        let Some(ranges) = self.ranges(host) else {
            return Ok(None);
        };
        usize::try_from(pstate)
            .ok()
            .and_then(|p| ranges.get(p).copied())
            .map(Some)
            .ok_or_else(|| {
                format!(
                    "host {} has no pstate {pstate} (its pstates are 0 to {})",
                    self.names[host.0 as usize],
                    ranges.len() - 1
                )
            })
    }
}

/// The energy of the hosts at a date, for the end report.
#[derive(Clone, Debug, PartialEq)]
pub struct EnergyReport {
    /// The date.
    pub date: f64,
    /// Per host, in platform order: its name, its energy (J) and whether it was used.
    pub hosts: Vec<(String, f64, bool)>,
}

impl EnergyReport {
    /// The hosts by name: SimGrid's order for the total, and for its per-host lines on a
    /// platform of one zone (it prints those zone by zone, child zones first).
    pub fn by_name(&self) -> Vec<&(String, f64, bool)> {
        let mut v: Vec<&(String, f64, bool)> = self.hosts.iter().collect();
        v.sort_by(|a, b| a.0.cmp(&b.0));
        v
    }

    /// The total, and the part of the used hosts, summed in SimGrid's order.
    pub fn totals(&self) -> (f64, f64) {
        let (mut total, mut used) = (0.0, 0.0);
        for (_, e, u) in self.by_name() {
            total += e;
            if *u {
                used += e;
            }
        }
        (total, used)
    }

    /// SimGrid's end lines (messages of its `host_energy` category, without the log prefix):
    /// the total, then each host by name.
    pub fn lines(&self) -> Vec<String> {
        let (total, used) = self.totals();
        let mut out = vec![format!(
            "Total energy consumption: {total:.6} Joules (used hosts: {used:.6} Joules; unused/idle hosts: {:.6})",
            total - used
        )];
        for (name, e, _) in self.by_name() {
            out.push(format!("Energy consumption of host {name}: {e:.6} Joules"));
        }
        out
    }
}

/// The plugin at a date, with the kernel's view of the hosts: what the program's calls and
/// the end of the run ask.
pub struct Access<'a> {
    meter: &'a mut Meter,
    now: f64,
    hosts: &'a dyn Hosts,
}

impl std::fmt::Debug for Access<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Access")
            .field("now", &self.now)
            .finish_non_exhaustive()
    }
}

impl<'a> Access<'a> {
    /// The plugin at `now`, hosts as `hosts` sees them.
    pub fn new(meter: &'a mut Meter, now: f64, hosts: &'a dyn Hosts) -> Self {
        Access { meter, now, hosts }
    }

    /// Updates `host` now.
    pub fn update(&mut self, host: HostId) {
        self.meter.update(host, self.now, self.hosts);
    }

    /// Updates every host now (`sg_host_energy_update_all`).
    pub fn update_all(&mut self) {
        for i in 0..self.meter.accounts.len() {
            self.update(HostId(i as u32));
        }
    }

    /// Whether `host` has a power profile.
    pub fn has_profile(&self, host: HostId) -> bool {
        self.meter.ranges(host).is_some()
    }

    /// The energy `host` consumed so far, J (updated to now first if needed).
    pub fn consumed(&mut self, host: HostId) -> f64 {
        if self.meter.accounts[host.0 as usize].last_updated < self.now {
            self.update(host);
        }
        self.meter.accounts[host.0 as usize].total
    }

    /// The power of `host` now, W.
    pub fn current(&mut self, host: HostId) -> f64 {
        self.meter.watts_now(host, self.hosts)
    }

    /// Idle power of `pstate`, W (0 without profile).
    pub fn idle_at(&self, host: HostId, pstate: i64) -> Result<f64, String> {
        Ok(self.meter.range_at(host, pstate)?.map_or(0.0, |r| r.idle))
    }

    /// Epsilon power of `pstate`, W (0 without profile).
    pub fn epsilon_at(&self, host: HostId, pstate: i64) -> Result<f64, String> {
        Ok(self.meter.range_at(host, pstate)?.map_or(0.0, |r| r.epsilon))
    }

    /// All-cores power of `pstate`, W (0 without profile).
    pub fn all_cores_at(&self, host: HostId, pstate: i64) -> Result<f64, String> {
        Ok(self.meter.range_at(host, pstate)?.map_or(0.0, |r| r.all_cores))
    }

    /// `AllCores − Epsilon` of `pstate`, W (0 without profile).
    pub fn slope_at(&self, host: HostId, pstate: i64) -> Result<f64, String> {
        Ok(self.meter.range_at(host, pstate)?.map_or(0.0, |r| r.slope))
    }

    /// The end of the simulation: every host updated to now, and their energies.
    pub fn report(&mut self) -> EnergyReport {
        let n = self.meter.accounts.len();
        let hosts = (0..n)
            .map(|i| {
                let e = self.consumed(HostId(i as u32));
                (self.meter.names[i].clone(), e, self.meter.accounts[i].used)
            })
            .collect();
        EnergyReport {
            date: self.now,
            hosts,
        }
    }
}

#[cfg(test)]
mod tests;
