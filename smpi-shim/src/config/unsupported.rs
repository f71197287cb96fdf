//! SimGrid 3.32's documented configuration keys that this simulator does not implement, each
//! with the reason, so that a configuration written for SimGrid is refused with a sentence that
//! says why instead of "unknown key" (or, worse, silently ignored).

/// `(name, why it is refused)`: a name covers the key of that name and its family (the keys that
/// continue it with `/`, `-` or `_`: `tracing/disable` covers `tracing/disable-destroy` and
/// `tracing/disable_link`). Keys we implement are in [`super::keys::KEYS`]; a name is looked up
/// here only when it is not one of them.
const UNSUPPORTED: &[(&str, &str)] = &[
    ("model-check", "model checking (SimGrid's simgrid-mc) is not implemented"),
    (
        "bmf/",
        "the BMF solver of parallel tasks (host/model:ptask_L07) is not implemented; max-min is the only solver",
    ),
    (
        "maxmin/concurrency-limit",
        "actions are never queued per resource here: every action shares its resources at once (SimGrid's default, -1)",
    ),
    (
        "plugin/dvfs/",
        "SimGrid's host_dvfs plugin is not implemented (programs can set pstates with sg_host_set_pstate)",
    ),
    (
        "tracing/categorized",
        "resource-utilization traces are not written; the trace (-trace) is the MPI timeline",
    ),
    (
        "tracing/uncategorized",
        "resource-utilization traces are not written; the trace (-trace) is the MPI timeline",
    ),
    ("tracing/platform", "the platform's graph is not written into traces"),
    ("tracing/actor", "the trace holds MPI ranks, not SimGrid actors' states"),
    ("tracing/vm", "virtual machines are not simulated"),
    ("tracing/basic", "SimGrid's basic (uncategorized, no-state) trace is not written"),
    ("tracing/disable", "SimGrid's resource-utilization traces are not written, so there is nothing to disable"),
    (
        "smpi/trace-call",
        "call locations (file and line of each MPI call) are not recorded in traces",
    ),
    ("debug/breakpoint", "stopping in a debugger at a simulated date is not implemented"),
    ("debug/clean-atexit", "SimGrid's exit handlers do not exist here: the run always cleans up"),
    ("debug/verbose-exit", "a run stopped by a signal always reports each rank's place (Ctrl-C prints it)"),
    ("exception/cutpath", "SimGrid's C++ exception backtraces do not exist here"),
    ("msg/debug-multiple-use", "SimGrid's MSG interface is not provided"),
    ("storage/", "SimGrid's legacy storage model is not implemented (<disk> elements and MPI-IO are)"),
    ("vm/model", "virtual machines are not simulated"),
    ("ns3/", "the ns-3 network model is not available; use network/model SMPI, CM02, LV08 or raw"),
    (
        "smpi/IB-penalty-factors",
        "SimGrid's InfiniBand network model (network/model:IB) is not implemented",
    ),
    (
        "smpi/buffering",
        "it only matters to SimGrid's model checker; sends are buffered by smpi/send-is-detached-thresh here as in SMPI",
    ),
    (
        "smpi/comp-adjustment-file",
        "per-code-section speed-ups are not implemented; use smpi/host-speed or SMPI_SAMPLE_* macros",
    ),
    (
        "smpi/display-allocs",
        "allocation reporting is not implemented; smpirun warns when the program's globals times the ranks may not fit in memory",
    ),
    ("smpi/papi-events", "PAPI counters are not read"),
    (
        "smpi/privatize-libs",
        "only the program's own globals are privatized per rank; shared libraries are loaded once",
    ),
];

/// Why `key` is refused, if it is a SimGrid key this simulator does not implement.
pub(super) fn reason(key: &str) -> Option<&'static str> {
    UNSUPPORTED
        .iter()
        .find(|(name, _)| {
            key.strip_prefix(name).is_some_and(|rest| {
                rest.is_empty() || name.ends_with('/') || rest.starts_with(['/', '-', '_'])
            })
        })
        .map(|(_, why)| *why)
}

#[cfg(test)]
mod tests {
    use super::reason;
    use crate::config::KEYS;

    #[test]
    fn refused_keys_are_never_implemented_ones() {
        for k in KEYS {
            for name in std::iter::once(k.name).chain(k.aliases.iter().copied()) {
                assert!(
                    reason(name).is_none(),
                    "{name} is implemented and listed as unsupported"
                );
            }
        }
    }

    #[test]
    fn prefixes_cover_their_families_only() {
        assert!(reason("model-check/reduction").is_some());
        assert!(reason("storage/max_file_descriptors").is_some());
        assert!(reason("smpi/buffering").is_some());
        assert!(reason("smpi/buffer").is_none());
        assert!(reason("model-checker").is_none());
        assert!(reason("tracing/disable_link").is_some());
        assert!(reason("tracing/platform/topology").is_some());
        assert!(reason("smpi/trace-call-use-absolute-path").is_some());
        assert!(reason("tracing/smpi").is_none());
    }
}
