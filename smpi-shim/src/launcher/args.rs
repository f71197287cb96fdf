//! `smpirun`'s command line: SMPI's single-dash flags, `--cfg`, the hostfile.

use std::path::{Path, PathBuf};

use simcore::platform::{HostId, Platform};

use crate::config::printable;

pub(super) const USAGE: &str = "\
smpirun: run an MPI program (built with smpicc) on a simulated platform

Usage: smpirun [options] -platform <file> [-hostfile <file>] [-np <n>] <program> [args...]
       smpirun [options] -platform <file> [-hostfile <file>] [-np <n>] -replay <trace>

Options:
  -platform <file>     platform description: our TOML format or SimGrid v4 XML
  -platform-set <cluster>.<attribute>=<value>
                       change an attribute of a cluster of the platform as if the file said so
                       (repeatable; `cluster.<attribute>` changes every cluster): what-if runs
                       without editing files, e.g. -platform-set cluster.bw=1GBps,
                       -platform-set 'ft.topo_parameters=2;16,16;1,4;1,1' (a 4:1 taper)
  -np, -n <n>          number of ranks (default: number of hostfile lines)
  -hostfile, -machinefile <file>
                       one host per line (\"host:N\" = N lines); rank i runs on line i mod lines.
                       Without it, ranks go round-robin on the platform's hosts in name order
  -map                 print the rank -> host placement
  --cfg=<key>:<value>  set a configuration key (repeatable; see --help-cfg)
  --log=<category>.thres:<priority>
                       threshold of a SimGrid log category of the program (xbt/log.h) and of
                       its subcategories; priority: trace, debug, verbose, info (default),
                       warning, error, critical; `root` is the top category. Repeatable, or
                       several settings separated by spaces; --log=no_loc drops file:line.
                       SimGrid's own categories (smpi, xbt_cfg, ...) are accepted, but smpirun
                       does not produce their messages. Log lines go to stderr in SimGrid's
                       format: [host:rank:(rank+1) time] [category/PRIORITY] message
  -trace               record a timeline (each rank's MPI calls; --cfg=tracing/smpi/computing:yes
                       adds computation): Chrome trace-event JSON when the file name ends in .json
                       (Perfetto, chrome://tracing), else Paje (SimGrid's tools); --cfg=tracing/format
  -trace-file <file>   the timeline's file (default smpi_simgrid.trace, as SMPI). Each message is
                       drawn from its send to its receive (Paje links, JSON flow arrows);
                       --cfg=tracing/smpi/internals:yes adds the messages inside collectives,
                       tracing/smpi/display-sizes:yes puts sizes on Paje states and links,
                       tracing/precision:<digits> sets the digits of Paje dates (default 6)
  -trace-grouped       group the ranks by host on the timeline (tracing/smpi/group:yes)
  -trace-comment <text>, -trace-comment-file <file>
                       a comment, or a file's lines, at the top of the timeline
                       (tracing/comment, tracing/comment-file)
  -trace-ti            record a time-independent trace instead (SMPI's TI format, for -replay):
                       each rank's MPI calls with their arguments and its computation in flops;
                       <file> (default smpi_simgrid.txt) lists <file>_files/rank-<r>.txt
                       (--cfg=tracing/smpi/format:TI; tracing/smpi/format/ti-one-file:yes puts
                       all ranks in one file; tracing/smpi/sleeping:yes records sleeps)
  -replay <trace>      replay a time-independent trace (ours or SMPI's) instead of running a
                       program: its index file, or one file with every rank's actions; -np
                       defaults to the trace's ranks. --log=smpi_replay.thres:verbose prints
                       each action with its end date and duration, as SMPI
  --link-stats         at the end, the 10 busiest links (bytes carried, time saturated, most
                       flows at once) and each rank's time computing vs in MPI (also in --json)
  -model <file>        model set (TOML; see models/README.md)
  --json <file>        write a JSON summary on every ending (format smpirun-summary/2, see the
                       README: status, exit code, simulated time, per-rank finish times, messages;
                       wall time and memory under host); `--json -` prints it on stdout, after
                       the program's output
  -request-log <file>  write one line per send, receive and probe posted:
                       <date> <rank> send|recv|iprobe size=<B> peer=<rank|-1> tag=<t> [found=0|1]
                       (the fields of SimGrid's smpi_request verbose log; compare the two
                       with scripts/request_diff.py)
  -keep-temps          keep the per-rank copies of the program
  -no-privatize        share globals between ranks (smpi/privatization:no)
  -analyze             SimGrid's analysis mode: smpi/display-timing:yes, smpi/list-leaks:50,
                       smpi/pedantic:yes (MPI misuse checks are always on)
  -tmpdir <dir>        where per-rank copies of the program go (default /tmp)
  -quiet               no end summary
  -progress <seconds>  a progress line on stderr every <seconds> of wall time, also when
                       stderr is not a terminal (on a terminal: one updated line, every 3 s)
  --wall-time-limit <seconds>, --sim-time-limit <seconds>
                       stop the run cleanly after that much wall-clock or simulated time
                       (also MPIEXEC_TIMEOUT=<seconds>): output flushed, where each rank is,
                       --json written, exit status 124. SIGINT and SIGTERM stop it the same
                       way, with exit status 130 and 143.
  -help, --help        this text
  --help-cfg           list configuration keys with their defaults
  --help-coll          list every collective's algorithms (--cfg=smpi/<collective>:<name>)
  -version             print the version

The program's output goes to stdout; smpirun's summary goes to stderr.
";

/// smpirun's options, for the suggestion when one is mistyped.
const OPTIONS: &[&str] = &[
    "-platform",
    "-platform-set",
    "-np",
    "-hostfile",
    "-machinefile",
    "-map",
    "--cfg",
    "--log",
    "-model",
    "--json",
    "-request-log",
    "-keep-temps",
    "-no-privatize",
    "-analyze",
    "-foreground",
    "-tmpdir",
    "-quiet",
    "-progress",
    "--wall-time-limit",
    "--sim-time-limit",
    "-trace",
    "-trace-file",
    "-trace-ti",
    "-trace-grouped",
    "-trace-comment",
    "-trace-comment-file",
    "-replay",
    "--link-stats",
    "--help",
    "--help-cfg",
    "--help-coll",
    "-version",
];

/// The message for an option smpirun does not know, with the nearest known
/// one when it is close (a typo).
fn unknown_option(given: &str) -> String {
    let name = given.split('=').next().unwrap_or(given);
    let bare = name.trim_start_matches('-');
    let nearest = OPTIONS
        .iter()
        .map(|o| (crate::config::edit_distance(bare, o.trim_start_matches('-')), *o))
        .min();
    match nearest {
        Some((d, o)) if d <= 2.max(bare.len() / 4) => {
            format!("unknown option '{given}'; did you mean {o}? (see smpirun --help)")
        }
        _ => format!("unknown option '{given}' (see smpirun --help)"),
    }
}

/// Parsed command line.
#[derive(Debug, Default)]
pub(super) struct Args {
    pub platform: Option<PathBuf>,
    /// `-platform-set <cluster>.<attribute>=<value>`: cluster attributes changed at load.
    pub platform_set: Vec<(String, String)>,
    pub np: Option<usize>,
    pub hostfile: Option<PathBuf>,
    pub map: bool,
    /// `--link-stats`: the busiest links and the split of each rank's time.
    pub link_stats: bool,
    pub cfg: Vec<String>,
    /// `--log=` settings, checked while parsing.
    pub log: crate::host::xbt_log::Settings,
    pub model: Option<PathBuf>,
    pub json: Option<PathBuf>,
    /// `-request-log <file>`: one line per send, receive and probe posted.
    pub request_log: Option<PathBuf>,
    pub quiet: bool,
    /// `-progress <seconds>`: progress lines also when stderr is not a terminal.
    pub progress_every: Option<f64>,
    /// `--wall-time-limit <seconds>`.
    pub wall_time_limit: Option<f64>,
    /// `--sim-time-limit <seconds>`.
    pub sim_time_limit: Option<f64>,
    pub program: Option<PathBuf>,
    pub program_args: Vec<String>,
    /// `-replay <trace>`: the trace replayed instead of a program.
    pub replay: Option<PathBuf>,
}

/// What the command line asks for.
pub(super) enum Command {
    Run(Box<Args>),
    Help,
    HelpCfg,
    HelpColl,
    Version,
}

/// Parses smpirun's arguments (SMPI-style single-dash flags).
pub(super) fn parse_args(argv: &[String]) -> Result<Command, String> {
    let mut a = Args::default();
    let mut i = 0;
    let need = |i: usize, flag: &str| -> Result<String, String> {
        argv.get(i + 1)
            .cloned()
            .ok_or_else(|| format!("{flag} needs a value"))
    };
    while i < argv.len() {
        let s = argv[i].as_str();
        if a.program.is_some() {
            // After the program: only --cfg/--log are ours, like SMPI.
            if let Some(kv) = s.strip_prefix("--cfg=") {
                a.cfg.push(kv.to_string());
            } else if let Some(v) = s.strip_prefix("--log=") {
                a.log.add_flag(v)?;
            } else {
                a.program_args.push(s.to_string());
            }
            i += 1;
            continue;
        }
        match s {
            "-help" | "--help" | "-h" => return Ok(Command::Help),
            "--help-cfg" | "-help-cfg" => return Ok(Command::HelpCfg),
            "--help-coll" | "-help-coll" => return Ok(Command::HelpColl),
            "-version" | "--version" => return Ok(Command::Version),
            "-platform" | "--platform" => {
                a.platform = Some(need(i, s)?.into());
                i += 1;
            }
            "-np" | "-n" | "--np" => {
                let v = need(i, s)?;
                a.np = Some(
                    v.parse()
                        .map_err(|_| format!("{s}: expected a number, got '{v}'"))?,
                );
                i += 1;
            }
            "-hostfile" | "-machinefile" | "--hostfile" => {
                a.hostfile = Some(need(i, s)?.into());
                i += 1;
            }
            "-platform-set" | "--platform-set" => {
                let setting = need(i, s)?;
                let Some((key, value)) = setting.split_once('=') else {
                    return Err(format!(
                        "{s} {setting}: expected <cluster id>.<attribute>=<value> (or cluster.<attribute>=<value>)"
                    ));
                };
                a.platform_set.push((key.to_string(), value.to_string()));
                i += 1;
            }
            "-map" => a.map = true,
            "--link-stats" | "-link-stats" => a.link_stats = true,
            "-model" | "--model" => {
                a.model = Some(need(i, s)?.into());
                i += 1;
            }
            "--json" | "-json" => {
                a.json = Some(need(i, s)?.into());
                i += 1;
            }
            "-request-log" | "--request-log" => {
                a.request_log = Some(need(i, s)?.into());
                i += 1;
            }
            "--cfg" => {
                a.cfg.push(need(i, s)?);
                i += 1;
            }
            "-keep-temps" => a.cfg.push("smpi/keep-temps:yes".into()),
            "-no-privatize" => a.cfg.push("smpi/privatization:no".into()),
            // SimGrid's analysis mode: its keys, so that a later --cfg still wins.
            "-analyze" => a.cfg.extend(
                [
                    "smpi/display-timing:yes",
                    "smpi/list-leaks:50",
                    "smpi/pedantic:yes",
                ]
                .map(String::from),
            ),
            // SimGrid's smpirun runs in the foreground anyway.
            "-foreground" => {}
            "-tmpdir" => {
                a.cfg.push(format!("smpi/tmpdir:{}", need(i, s)?));
                i += 1;
            }
            "-quiet" => a.quiet = true,
            "--wall-time-limit" | "-wall-time-limit" | "--sim-time-limit" | "-sim-time-limit" => {
                let v = need(i, s)?;
                i += 1;
                let secs: f64 = v
                    .parse()
                    .ok()
                    .filter(|s: &f64| *s > 0.0 && s.is_finite())
                    .ok_or_else(|| format!("{s}: '{v}' is not a positive number of seconds"))?;
                if s.contains("wall") {
                    a.wall_time_limit = Some(secs);
                } else {
                    a.sim_time_limit = Some(secs);
                }
            }
            "-progress" => {
                let v = need(i, s)?;
                i += 1;
                let secs: f64 = v
                    .parse()
                    .ok()
                    .filter(|s: &f64| *s > 0.0 && s.is_finite())
                    .ok_or_else(|| format!("-progress: '{v}' is not a positive number of seconds"))?;
                a.progress_every = Some(secs);
            }
            "-trace" => a.cfg.push("tracing:yes".into()),
            "-trace-grouped" => a.cfg.push("tracing/smpi/group:yes".into()),
            "-trace-comment" => {
                a.cfg.push(format!("tracing/comment:{}", need(i, s)?));
                i += 1;
            }
            "-trace-comment-file" => {
                a.cfg.push(format!("tracing/comment-file:{}", need(i, s)?));
                i += 1;
            }
            "-trace-file" | "--trace-file" => {
                a.cfg.push(format!("tracing/filename:{}", need(i, s)?));
                i += 1;
            }
            // As SMPI's smpirun: TI format with computation; the default file
            // name comes first so that a -trace-file or --cfg anywhere wins.
            "-trace-ti" => {
                a.cfg.insert(0, "tracing/filename:smpi_simgrid.txt".into());
                a.cfg.extend(
                    [
                        "tracing:yes",
                        "tracing/smpi/format:TI",
                        "tracing/smpi/computing:yes",
                    ]
                    .map(String::from),
                );
            }
            "-replay" | "--replay" => {
                a.replay = Some(need(i, s)?.into());
                i += 1;
            }
            _ if s.starts_with("--cfg=") => a.cfg.push(s["--cfg=".len()..].to_string()),
            _ if s.starts_with("--log=") => a.log.add_flag(&s["--log=".len()..])?,
            _ if s.starts_with('-') => return Err(unknown_option(s)),
            _ => a.program = Some(s.into()),
        }
        i += 1;
    }
    Ok(Command::Run(Box::new(a)))
}

/// Reads a hostfile: one host per line, `host:N` for N copies; `#` comments.
pub(super) fn read_hostfile(path: &Path, platform: &Platform) -> Result<Vec<HostId>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    parse_hostfile(&text, &path.display().to_string(), platform)
}

/// The most slots a hostfile may list (each is a place for a rank; a run holds about 8000).
const MAX_SLOTS: usize = 1 << 20;

/// Parses a hostfile's text; `file` names it in messages.
pub(super) fn parse_hostfile(text: &str, file: &str, platform: &Platform) -> Result<Vec<HostId>, String> {
    let mut hosts = Vec::new();
    for (lineno, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        // As quoted in messages: a stray carriage return or other control character escaped.
        let shown = printable(line);
        let at = format!("{file}:{}", lineno + 1);
        let (name, n) = match line.rsplit_once(':') {
            Some((h, n)) => (
                h.trim(),
                n.trim()
                    .parse::<usize>()
                    .map_err(|_| format!("{at}: bad slot count in '{shown}'"))?,
            ),
            None => (line, 1),
        };
        if n == 0 || n > MAX_SLOTS - hosts.len() {
            return Err(format!(
                "{at}: slot count {n} in '{shown}': each line gives 1 to {MAX_SLOTS} slots, and the \
                 whole file at most {MAX_SLOTS}"
            ));
        }
        let id = platform
            .host_by_name(name)
            .ok_or_else(|| format!("{at}: host '{}' is not in the platform", printable(name)))?;
        hosts.extend(std::iter::repeat_n(id, n));
    }
    if hosts.is_empty() {
        return Err(format!("{file}: no host listed"));
    }
    Ok(hosts)
}

#[cfg(test)]
mod fuzz;

#[cfg(test)]
mod suggestion_tests {
    use super::*;

    #[test]
    fn a_mistyped_option_gets_the_nearest_one() {
        assert!(unknown_option("-platfrom").contains("did you mean -platform?"));
        assert!(unknown_option("--link-stat").contains("did you mean --link-stats?"));
        assert!(unknown_option("-trase").contains("did you mean -trace?"));
        assert!(!unknown_option("-zzzzzzzz").contains("did you mean"));
    }

    #[test]
    fn every_option_in_the_help_can_be_suggested() {
        for line in USAGE.lines() {
            let Some(first) = line.trim_start().split([' ', ',', '=']).next() else {
                continue;
            };
            if line.starts_with("  -") && first.starts_with('-') {
                let bare = first.trim_start_matches('-');
                assert!(
                    OPTIONS.iter().any(|o| o.trim_start_matches('-') == bare),
                    "{first} (from the help) is not in OPTIONS"
                );
            }
        }
    }
}
