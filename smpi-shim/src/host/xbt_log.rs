//! SimGrid's logging (XBT log) as seen by the program: categories, thresholds
//! set with `smpirun --log=...`, and the line format.
//!
//! A program written for SMPI defines categories with `XBT_LOG_NEW_*CATEGORY`
//! (`xbt/log.h`) and logs with `XBT_INFO` and friends. Each category names its
//! parent; the top ones hang under `root`. A message is printed when its
//! priority is at least the category's threshold, and a category without a
//! threshold of its own takes its nearest ancestor's; `root` defaults to
//! `info`. Settings come from `--log=<category>.thres[hold]:<priority>`
//! (several flags, or several settings separated by spaces in one flag; for
//! the same category the last one wins; `--log=no_loc` drops the source
//! location from lines).
//!
//! Lines are SimGrid 3.32's default layout, on stderr:
//!
//! ```text
//! [alice:0:(1) 0.000122] [app/INFO] hello
//! [alice:0:(1) 0.000122] /path/app.c:20: [app/WARNING] careful
//! [0.000000] [app/INFO] outside of any rank
//! ```
//!
//! (host, actor name — SMPI names a rank's actor after the rank —, pid =
//! rank + 1, simulated time; every priority but `info` shows the source
//! location.)
//!
//! SimGrid's own categories (`smpi`, `xbt_cfg`, `smpi_request`, ...) exist
//! (`abi/simgrid.rs` exports them, so programs may hang their categories under
//! them), and `--log` accepts them; smpirun does not produce SimGrid's internal
//! messages, which [`Settings::notes`] says when a flag asks for more of them.
//!
//! The run's settings live in one thread-local, installed by the launcher
//! before the program is loaded (its constructors may already log).

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};

/// A message priority (SimGrid's `e_xbt_log_priority_t` values).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Priority {
    Trace = 1,
    Debug = 2,
    Verbose = 3,
    Info = 4,
    Warning = 5,
    Error = 6,
    Critical = 7,
}

const PRIORITIES: [Priority; 7] = [
    Priority::Trace,
    Priority::Debug,
    Priority::Verbose,
    Priority::Info,
    Priority::Warning,
    Priority::Error,
    Priority::Critical,
];

impl Priority {
    /// The priority of a C value, if it is one.
    pub(crate) fn from_c(v: i32) -> Option<Priority> {
        PRIORITIES.into_iter().find(|p| *p as i32 == v)
    }

    /// As printed in a line (`[cat/WARNING]`).
    pub(crate) fn label(self) -> &'static str {
        match self {
            Priority::Trace => "TRACE",
            Priority::Debug => "DEBUG",
            Priority::Verbose => "VERBOSE",
            Priority::Info => "INFO",
            Priority::Warning => "WARNING",
            Priority::Error => "ERROR",
            Priority::Critical => "CRITICAL",
        }
    }

    /// A priority named in `--log` (case-insensitive, full names only, as SimGrid).
    fn parse(s: &str) -> Option<Priority> {
        PRIORITIES.into_iter().find(|p| p.label().eq_ignore_ascii_case(s))
    }
}

/// Calls `$m!` with SimGrid 3.32's log categories as `name < parent` pairs
/// (the categories libsimgrid exports; `root` is the top). Programs may name
/// them as parents or in `--log`.
macro_rules! with_simgrid_categories {
    ($m:ident) => {
        $m! {
            kernel < root, ker_engine < root, instr < root, mc < root, msg < root, s4u < root,
            smpi < root, surf < root, xbt < root, dag_parsing < root, producer_consumer < root,
            cmonkey < kernel, host_dvfs < kernel, host_energy < kernel, host_load < kernel,
            ker_activity < kernel, ker_actor < kernel, ker_bmf < kernel, ker_context < kernel,
            ker_cpu < kernel, ker_io < kernel, ker_lmm < kernel, ker_mailbox < kernel,
            ker_network < kernel, ker_resource < kernel, ker_routing < kernel, ker_simcall < kernel,
            ker_synchro < kernel, link_energy < kernel, link_energy_wifi < kernel, link_load < kernel,
            ker_barrier < ker_synchro, ker_condition < ker_synchro, ker_mutex < ker_synchro,
            ker_semaphore < ker_synchro,
            ker_netpoint < ker_routing, ker_routing_cluster < ker_routing,
            ker_routing_dijkstra < ker_routing, ker_routing_dragonfly < ker_routing,
            ker_routing_fat_tree < ker_routing, ker_routing_floyd < ker_routing,
            ker_routing_full < ker_routing, ker_routing_generic < ker_routing,
            ker_routing_none < ker_routing, ker_routing_star < ker_routing,
            ker_routing_torus < ker_routing, ker_routing_vivaldi < ker_routing,
            ker_routing_wifi < ker_routing,
            res_cpu < ker_resource, res_disk < ker_resource, res_host < ker_resource,
            res_network < ker_resource, res_vm < ker_resource,
            cpu_cas < res_cpu, cpu_ti < res_cpu, res_ns3 < res_network,
            instr_api < instr, instr_config < instr, instr_paje_containers < instr,
            instr_paje_events < instr, instr_paje_trace < instr, instr_paje_types < instr,
            instr_resource < instr, instr_routing < instr, instr_smpi < instr,
            mc_global < mc, mc_observer < mc, mc_record < mc, mc_transition < mc,
            obs_comm < mc_observer, obs_mutex < mc_observer,
            msg_task < msg,
            s4u_activity < s4u, s4u_actor < s4u, s4u_barrier < s4u, s4u_channel < s4u,
            s4u_engine < s4u, s4u_file < s4u, s4u_host < s4u, s4u_vm < s4u, vm_live_migration < s4u,
            s4u_comm < s4u_activity, s4u_exec < s4u_activity,
            smpi_bench < smpi, smpi_coll < smpi, smpi_colls < smpi, smpi_comm < smpi,
            smpi_config < smpi, smpi_datatype < smpi, smpi_host < smpi, smpi_io < smpi,
            smpi_kernel < smpi, smpi_memory < smpi, smpi_mpi < smpi, smpi_op < smpi,
            smpi_pmpi < smpi, smpi_process < smpi, smpi_replay < smpi, smpi_request < smpi,
            smpi_rma < smpi, smpi_shared < smpi, smpi_utils < smpi,
            sg_version < surf, surf_config < surf, surf_kernel < surf, surf_parse < surf,
            log < xbt, module < xbt, parse < xbt, replay < xbt, xbt_cfg < xbt, xbt_dict < xbt,
            xbt_dyn < xbt, xbt_exception < xbt, xbt_graph < xbt, xbt_help < xbt,
            xbt_mallocator < xbt, xbt_parmap < xbt, xbt_random < xbt,
            xbt_dict_cursor < xbt_dict,
        }
    };
}
pub(crate) use with_simgrid_categories;

macro_rules! category_names {
    ($($name:ident < $parent:ident),* $(,)?) => {
        /// SimGrid's own categories, `root` excluded.
        const SIMGRID_CATEGORIES: &[&str] = &[$(stringify!($name)),*];
    };
}
with_simgrid_categories!(category_names);

/// Whether `name` is one of SimGrid's own categories (or `root`).
pub(crate) fn is_simgrid_category(name: &str) -> bool {
    name == "root" || SIMGRID_CATEGORIES.contains(&name)
}

/// What `--log` flags set.
#[derive(Debug, Default, Clone)]
pub(crate) struct Settings {
    /// Explicit thresholds, by category name (the last setting of a name wins).
    thresholds: BTreeMap<String, Priority>,
    /// `--log=no_loc`: no source location in lines.
    pub no_loc: bool,
    /// Each setting as given (`cat.thres:prio`), for messages.
    given: Vec<(String, String)>,
}

/// The setting keywords SimGrid has besides the threshold; smpirun supports none.
const OTHER_KEYWORDS: [&str; 6] = ["appender", "app", "format", "fmt", "additivity", "add"];

impl Settings {
    /// Adds the settings of one `--log=<value>` flag: space-separated
    /// `<category>.<keyword>:<value>` items, or `no_loc`. The error names the
    /// flag and says what is wrong.
    pub(crate) fn add_flag(&mut self, value: &str) -> Result<(), String> {
        let flag = format!("--log={value}");
        if value.trim().is_empty() {
            return Err(format!("{flag}: empty log setting"));
        }
        for item in value.split_whitespace() {
            if item == "no_loc" {
                self.no_loc = true;
                continue;
            }
            let bad = |why: String| format!("{flag}: {why}");
            let (cat, rest) = item.split_once('.').ok_or_else(|| {
                bad(format!(
                    "invalid setting '{item}': expected <category>.thres:<priority> (e.g. root.thres:debug)"
                ))
            })?;
            let (keyword, val) = rest.split_once(':').ok_or_else(|| {
                bad(format!(
                    "invalid setting '{item}': expected <category>.thres:<priority>"
                ))
            })?;
            if cat.is_empty() {
                return Err(bad(format!("invalid setting '{item}': no category name")));
            }
            if keyword.is_empty() || !"threshold".starts_with(keyword) {
                if OTHER_KEYWORDS.iter().any(|k| k.starts_with(keyword)) && !keyword.is_empty() {
                    return Err(bad(format!(
                        "'{keyword}' settings (appenders, layouts, additivity) are not supported by smpirun; \
                         only <category>.thres:<priority>"
                    )));
                }
                return Err(bad(format!(
                    "unknown setting '{keyword}' of category '{cat}' (expected thres or threshold)"
                )));
            }
            let prio = Priority::parse(val).ok_or_else(|| {
                bad(format!(
                    "unknown priority '{val}' (one of: trace, debug, verbose, info, warning, error, critical)"
                ))
            })?;
            self.thresholds.insert(cat.to_string(), prio);
            self.given.push((item.to_string(), cat.to_string()));
        }
        Ok(())
    }

    /// The threshold of a category given its name and its ancestors' names,
    /// nearest first (`root` last or implied): the nearest explicit setting,
    /// else `info`.
    pub(crate) fn threshold(&self, chain: &[&str]) -> Priority {
        chain
            .iter()
            .chain(std::iter::once(&"root"))
            .find_map(|c| self.thresholds.get(*c).copied())
            .unwrap_or(Priority::Info)
    }

    /// Notes for settings that ask SimGrid's own categories for more than
    /// `info`: smpirun does not produce SimGrid's internal messages, so only
    /// the program's categories under them are affected.
    pub(crate) fn notes(&self) -> Vec<String> {
        self.given
            .iter()
            .filter(|(_, cat)| cat != "root" && is_simgrid_category(cat))
            .filter(|(_, cat)| self.thresholds.get(cat).is_some_and(|p| *p < Priority::Info))
            .map(|(item, cat)| {
                let hint = if cat == "smpi_request" {
                    " (-request-log <file> writes the fields of its send/recv messages)"
                } else {
                    ""
                };
                format!(
                    "--log={item}: smpirun does not produce SimGrid's internal '{cat}' messages; \
                     only the program's categories under '{cat}' are affected{hint}"
                )
            })
            .collect()
    }

    /// Warnings for settings that named a category nothing used: neither
    /// SimGrid's nor one the program logged in (SimGrid accepts such names
    /// silently; a typo would then go unnoticed).
    pub(crate) fn unused(&self, used: &BTreeSet<String>) -> Vec<String> {
        let mut seen = BTreeSet::new();
        self.given
            .iter()
            .filter(|(_, cat)| !is_simgrid_category(cat) && !used.contains(cat))
            .filter(|(_, cat)| seen.insert(cat.clone()))
            .map(|(item, cat)| format!("--log={item}: no category named '{cat}' was used in this run"))
            .collect()
    }
}

/// Who logs: a rank (its host, its actor name and pid as SMPI gives them), or
/// nobody (before the ranks run).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Origin<'a> {
    pub host: &'a str,
    pub rank: u32,
}

/// One line in SimGrid's default layout (with its newline).
pub(crate) fn format_line(
    origin: Option<Origin>,
    now: f64,
    category: &str,
    prio: Priority,
    location: Option<(&str, i32)>,
    message: &str,
) -> String {
    let mut line = match origin {
        // SMPI's actor of rank r is named "r" and has pid r + 1.
        Some(o) => format!("[{}:{}:({}) {now:.6}] ", o.host, o.rank, o.rank + 1),
        None => format!("[{now:.6}] "),
    };
    if prio != Priority::Info {
        if let Some((file, lineno)) = location {
            line.push_str(&format!("{file}:{lineno}: "));
        }
    }
    line.push_str(&format!("[{category}/{}] {message}\n", prio.label()));
    line
}

/// The run's logging state.
#[derive(Debug, Default)]
struct State {
    settings: Settings,
    /// Names of the categories resolved so far (and their ancestors).
    used: BTreeSet<String>,
}

thread_local! {
    static STATE: RefCell<Option<State>> = const { RefCell::new(None) };
}

/// Installs the run's settings (before the program is loaded).
pub(crate) fn install(settings: Settings) {
    STATE.with(|s| {
        *s.borrow_mut() = Some(State {
            settings,
            used: BTreeSet::new(),
        })
    });
}

/// The threshold of a category (its name and its ancestors', nearest first),
/// and whether the settings are installed (only then may the answer be
/// cached in the category: before, the default `info` is a guess).
pub(crate) fn threshold(chain: &[&str]) -> (Priority, bool) {
    STATE.with(|s| match s.borrow_mut().as_mut() {
        Some(st) => {
            st.used.extend(chain.iter().map(|c| c.to_string()));
            (st.settings.threshold(chain), true)
        }
        None => (Priority::Info, false),
    })
}

/// Whether `--log=no_loc` was given.
pub(crate) fn no_loc() -> bool {
    STATE.with(|s| s.borrow().as_ref().is_some_and(|st| st.settings.no_loc))
}

/// At the end of the run: warnings for settings that named no category used.
pub(crate) fn finish() -> Vec<String> {
    STATE.with(|s| {
        s.borrow()
            .as_ref()
            .map(|st| st.settings.unused(&st.used))
            .unwrap_or_default()
    })
}

#[cfg(test)]
mod tests;
