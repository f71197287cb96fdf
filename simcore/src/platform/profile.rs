//! Availability and state profiles: a resource's speed, bandwidth, latency or on/off state over
//! time (SimGrid's `speed_file`, `bandwidth_file`, `latency_file`, `state_file`, `<trace>`).
//!
//! # Format (SimGrid 3.32's "legacy" profiles)
//! One `DATE VALUE` pair per line, dates absolute and non-decreasing; blank lines and lines
//! starting with `#` or `%` are skipped. `LOOPAFTER D` makes the list repeat, `D` seconds after
//! its last date; `PERIODICITY P` (or the `periodicity` of a `<trace>`) makes it repeat every
//! `P` seconds (the delay after the last date is `P - last date`). So with dates `d0 < … < dn`
//! and `LOOPAFTER D`, the values come back at `dn + D + d0`, `dn + D + d1`, …: the period is
//! `dn + D`, not `D`.
//!
//! The values are: a speed *scale* for a host (`0.5`: half its peak speed), an absolute
//! bandwidth (B/s) or latency (s) for a link, and for a state profile `0` (off) or anything
//! else (on). Stochastic profiles (`STOCHASTIC`, `NORM`, `UNIF`, `EXP`) draw from SimGrid's own
//! random generator: they are rejected as not supported rather than given other numbers.
//!
//! # Timing
//! SimGrid keeps each profile's *deltas* (the first is its first date) and dates the next
//! value as the current event's date plus the next delta, so a profile's events fall at the
//! same floating-point dates here.

use std::path::{Path, PathBuf};

use super::error::{PlatformError, PlatformErrorKind as K};
use super::spec::{ProfileAttach, ProfileKind, ProfileSource};
use super::types::{HostId, LinkId, Platform};

/// What a profile drives.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ProfileTarget {
    /// A host's speed scale (its peak speed times the value).
    HostSpeed(HostId),
    /// A host's state: 0 turns it off (its actors are killed), anything else on.
    HostState(HostId),
    /// A link's bandwidth, B/s.
    LinkBandwidth(LinkId),
    /// A link's latency, s.
    LinkLatency(LinkId),
    /// A link's state: 0 turns it off (its communications fail), anything else on.
    LinkState(LinkId),
}

/// A parsed profile: the values and the delay before each (SimGrid's event list).
#[derive(Clone, Debug, PartialEq)]
pub struct Profile {
    /// Its name: the file as written, or the `<trace>` id.
    pub name: String,
    /// `(delay since the previous entry, value)`; the first delay is the first date.
    pub pattern: Vec<(f64, f64)>,
    /// Extra delay before the pattern starts over (`None`: played once).
    pub repeat_delay: Option<f64>,
}

/// A profile attached to a resource of the platform.
#[derive(Clone, Debug)]
pub struct ResourceProfile {
    /// The resource and what of it changes.
    pub target: ProfileTarget,
    /// The values over time.
    pub profile: Profile,
}

/// Why a profile text is malformed: the 1-based line (0: the whole profile) and the problem.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ProfileSyntax {
    pub(crate) line: usize,
    pub(crate) reason: String,
}

fn syntax(line: usize, reason: impl Into<String>) -> ProfileSyntax {
    ProfileSyntax {
        line,
        reason: reason.into(),
    }
}

/// A number as C's `strtod` reads a whole word (SimGrid uses `std::stod` and `%lg`).
fn number(word: &str, line: usize, what: &str) -> Result<f64, ProfileSyntax> {
    match word.parse::<f64>() {
        Ok(x) if x.is_finite() => Ok(x),
        _ => Err(syntax(line, format!("{what} `{word}` is not a number"))),
    }
}

/// Parses a profile text; `periodicity > 0` (a `<trace periodicity>`) makes it repeat.
pub(crate) fn parse(name: &str, text: &str, periodicity: f64) -> Result<Profile, ProfileSyntax> {
    let mut periodicity = periodicity;
    let mut looped = periodicity > 0.0;
    let mut loop_delay = 0.0;
    let mut last_date = 0.0;
    let mut pattern = Vec::new();
    for (i, raw) in text.split(['\n', '\r']).enumerate() {
        // Lines are counted as SimGrid counts them: "\r\n" counts twice.
        let line = i + 1;
        let l = raw.trim();
        if l.is_empty() || l.starts_with('#') || l.starts_with('%') {
            continue;
        }
        let words: Vec<&str> = l.split_whitespace().collect();
        match words[0] {
            "PERIODICITY" | "LOOPAFTER" => {
                let Some(w) = words.get(1) else {
                    return Err(syntax(line, format!("`{}` needs a number of seconds", words[0])));
                };
                let x = number(w, line, words[0])?;
                looped = true;
                if words[0] == "PERIODICITY" {
                    periodicity = x;
                } else {
                    loop_delay = x;
                }
                continue;
            }
            "STOCHASTIC" | "DET" | "NORM" | "NORMAL" | "GAUSS" | "GAUSSIAN" | "EXP" | "EXPONENTIAL"
            | "UNIF" | "UNIFORM" => {
                return Err(syntax(
                    line,
                    "stochastic profiles are not supported (SimGrid draws them from its own random \
                     generator)",
                ))
            }
            _ => {}
        }
        if words.len() < 2 {
            return Err(syntax(line, format!("expected `DATE VALUE`, got `{l}`")));
        }
        let date = number(words[0], line, "date")?;
        let value = number(words[1], line, "value")?;
        if date < 0.0 {
            return Err(syntax(line, format!("negative date {date}")));
        }
        if value < 0.0 {
            return Err(syntax(line, format!("negative value {value}")));
        }
        if date < last_date {
            return Err(syntax(
                line,
                format!("dates must not decrease, but {date} comes after {last_date}"),
            ));
        }
        pattern.push((date - last_date, value));
        last_date = date;
    }
    if periodicity > 0.0 {
        if loop_delay != 0.0 {
            return Err(syntax(0, "both a periodicity and LOOPAFTER are given"));
        }
        loop_delay = periodicity - last_date;
    }
    if loop_delay < 0.0 {
        return Err(syntax(
            0,
            format!("the period ends before the last date {last_date} (the loop cannot be realised)"),
        ));
    }
    if looped && !pattern.is_empty() && pattern.iter().all(|&(d, _)| d == 0.0) && loop_delay == 0.0 {
        return Err(syntax(
            0,
            "a repeating profile whose dates are all 0 never lets time advance",
        ));
    }
    Ok(Profile {
        name: name.to_string(),
        pattern,
        repeat_delay: looped.then_some(loop_delay),
    })
}

/// Where SimGrid finds a relative profile file: in the working directory (its `path` setting's
/// default, `./`), then in the directories of `path` (`search`), then in the platform file's
/// directory. The name as given when it is nowhere (the error names it).
fn find(file: &str, platform_file: &str, search: &[PathBuf]) -> PathBuf {
    let p = Path::new(file);
    if p.is_absolute() || p.exists() {
        return p.to_path_buf();
    }
    let beside = Path::new(platform_file).parent().map(|dir| dir.join(p));
    search
        .iter()
        .map(|dir| dir.join(p))
        .chain(beside)
        .find(|candidate| candidate.exists())
        .unwrap_or_else(|| p.to_path_buf())
}

/// Reads and parses the attached profiles and resolves the hosts and links they drive (a
/// SPLITDUPLEX link's profile drives both its halves, as in SimGrid).
pub(crate) fn attach(
    platform: &Platform,
    attached: &[ProfileAttach],
    file: &str,
    search: &[PathBuf],
) -> Result<Vec<ResourceProfile>, PlatformError> {
    let mut out = Vec::new();
    for a in attached {
        let err = |kind| PlatformError::new(file, a.loc, kind);
        let profile = match &a.source {
            ProfileSource::File(v) => {
                let path = find(&v.text, file, search);
                let shown = path.display().to_string();
                let text = std::fs::read_to_string(&path).map_err(|e| {
                    PlatformError::new(
                        file,
                        v.loc,
                        K::Profile {
                            profile: shown.clone(),
                            line: 0,
                            reason: format!("cannot read it: {e}"),
                        },
                    )
                })?;
                parse(&a.name, &text, -1.0).map_err(|e| {
                    err(K::Profile {
                        profile: shown.clone(),
                        line: e.line,
                        reason: e.reason,
                    })
                })?
            }
            ProfileSource::Inline(text, first, period) => parse(&a.name, text, *period).map_err(|e| {
                err(K::Profile {
                    profile: format!("{} (trace `{}`)", file, a.name),
                    line: if e.line > 0 { first + e.line - 1 } else { 0 },
                    reason: e.reason,
                })
            })?,
        };
        let name = &a.element.text;
        let element_err = |what: &str| {
            PlatformError::new(
                file,
                a.element.loc,
                K::InvalidValue {
                    key: "element".to_string(),
                    value: name.clone(),
                    reason: format!("no {what} of that name for a {} profile", a.kind.name()),
                },
            )
        };
        let targets: Vec<ProfileTarget> = match a.kind {
            ProfileKind::HostSpeed | ProfileKind::HostState => {
                let h = platform.host_by_name(name).ok_or_else(|| element_err("host"))?;
                vec![if a.kind == ProfileKind::HostSpeed {
                    ProfileTarget::HostSpeed(h)
                } else {
                    ProfileTarget::HostState(h)
                }]
            }
            ProfileKind::LinkBandwidth | ProfileKind::LinkLatency | ProfileKind::LinkState => {
                let links: Vec<LinkId> = match platform.link_by_name(name) {
                    Some(l) => vec![l],
                    None => ["_UP", "_DOWN"]
                        .iter()
                        .filter_map(|s| platform.link_by_name(&format!("{name}{s}")))
                        .collect(),
                };
                if links.is_empty() {
                    return Err(element_err("link"));
                }
                links
                    .into_iter()
                    .map(|l| match a.kind {
                        ProfileKind::LinkBandwidth => ProfileTarget::LinkBandwidth(l),
                        ProfileKind::LinkLatency => ProfileTarget::LinkLatency(l),
                        _ => ProfileTarget::LinkState(l),
                    })
                    .collect()
            }
        };
        if let Some(dup) = out
            .iter()
            .find(|r: &&ResourceProfile| targets.contains(&r.target))
        {
            return Err(err(K::Unsupported {
                what: format!("a second {} profile on `{name}`", a.kind.name()),
                reason: format!(
                    "`{}` is already attached to it (SimGrid refuses a second one)",
                    dup.profile.name
                ),
            }));
        }
        for target in targets {
            out.push(ResourceProfile {
                target,
                profile: profile.clone(),
            });
        }
    }
    Ok(out)
}

/// Plays a profile: the dates and values of its events, in order (SimGrid's `Profile::next`).
#[derive(Clone, Debug)]
pub struct ProfileCursor {
    idx: usize,
    /// The date of the next event, if any.
    pub next_date: Option<f64>,
}

impl ProfileCursor {
    /// A cursor at the profile's first event (dated from time 0).
    pub fn start(p: &Profile) -> Self {
        ProfileCursor {
            idx: 0,
            next_date: p.pattern.first().map(|&(d, _)| d),
        }
    }

    /// Takes the due event's value and dates the next one.
    pub fn advance(&mut self, p: &Profile) -> f64 {
        let date = self.next_date.expect("a profile event is due");
        let n = p.pattern.len();
        let value = p.pattern[self.idx % n].1;
        self.idx += 1;
        let k = self.idx % n;
        self.next_date = if self.idx < n {
            Some(date + p.pattern[k].0)
        } else {
            p.repeat_delay.map(|delay| {
                // The first entry of each repetition waits the loop delay too.
                if k == 0 {
                    date + (p.pattern[0].0 + delay)
                } else {
                    date + p.pattern[k].0
                }
            })
        };
        value
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dates(p: &Profile, n: usize) -> Vec<(f64, f64)> {
        let mut c = ProfileCursor::start(p);
        let mut out = Vec::new();
        while out.len() < n {
            let Some(d) = c.next_date else { break };
            out.push((d, c.advance(p)));
        }
        out
    }

    #[test]
    fn loopafter_repeats_after_the_last_date_plus_the_delay() {
        let p = parse("j", "0 0.5\n2 1.0\n# c\n\n4 0.7\nLOOPAFTER 10\n", -1.0).unwrap();
        assert_eq!(p.repeat_delay, Some(10.0));
        assert_eq!(
            dates(&p, 5),
            vec![(0.0, 0.5), (2.0, 1.0), (4.0, 0.7), (14.0, 0.5), (16.0, 1.0)]
        );
    }

    #[test]
    fn periodicity_sets_the_period() {
        let p = parse("A", "0.0 1.0\n11.0 0.5\n20.0 0.9\n", 21.0).unwrap();
        assert_eq!(dates(&p, 4).last(), Some(&(21.0, 1.0)));
        let once = parse("x", "1 0\n2 1\n", -1.0).unwrap();
        assert_eq!(dates(&once, 5), vec![(1.0, 0.0), (2.0, 1.0)]);
    }

    const INLINE: &str = r#"<?xml version='1.0'?>
<platform version="4.1">
  <trace id="A" periodicity="21.0">
    0.0 1.0
    11.0 0.5
  </trace>
  <trace id="F" periodicity="12.0">
    1.0 0.0
    two 1.0
  </trace>
  <zone id="AS0" routing="Full">
    <host id="a" speed="10f,5f" pstate="1"/>
    <link id="l" bandwidth="10MBps" latency="1ms" sharing_policy="SPLITDUPLEX"/>
  </zone>
  <trace_connect kind="SPEED" trace="A" element="a"/>
  <trace_connect kind="BANDWIDTH" trace="A" element="l"/>
  CONNECT
</platform>
"#;

    #[test]
    fn traces_connect_to_hosts_and_both_halves_of_a_splitduplex_link() {
        let p = Platform::from_xml_str(&INLINE.replace("CONNECT", ""), "t.xml").unwrap();
        let targets: Vec<ProfileTarget> = p.profiles.iter().map(|r| r.target).collect();
        assert_eq!(
            targets,
            vec![
                ProfileTarget::HostSpeed(HostId(0)),
                ProfileTarget::LinkBandwidth(LinkId(0)),
                ProfileTarget::LinkBandwidth(LinkId(1)),
            ]
        );
        assert_eq!(p.profiles[0].profile.repeat_delay, Some(10.0));
        assert_eq!((p.hosts[0].speed, p.hosts[0].pstate), (5.0, 1));
        assert_eq!(p.hosts[0].pstate_speeds, vec![10.0, 5.0]);
    }

    #[test]
    fn bad_connections_and_inline_lines_are_named() {
        let err = |c: &str| {
            Platform::from_xml_str(&INLINE.replace("CONNECT", c), "t.xml")
                .unwrap_err()
                .to_string()
        };
        let e = err(r#"<trace_connect kind="HOST_AVAIL" trace="F" element="a"/>"#);
        assert!(
            e.contains("t.xml (trace `F`)` line 9") && e.contains("`two` is not a number"),
            "{e}"
        );
        let e = err(r#"<trace_connect kind="LATENCY" trace="A" element="nope"/>"#);
        assert!(
            e.contains("t.xml:17") && e.contains("no link of that name"),
            "{e}"
        );
        let e = err(r#"<trace_connect kind="SPEED" trace="A" element="a"/>"#);
        assert!(e.contains("connected twice"), "{e}");
        let e = err(r#"<trace_connect kind="SPEED" trace="B" element="a"/>"#);
        assert!(e.contains("no <trace> of that id"), "{e}");
    }

    #[test]
    fn malformed_lines_are_named() {
        assert_eq!(parse("x", "1 0\n0 1\n", -1.0).unwrap_err().line, 2);
        assert_eq!(parse("x", "1 0\n\nabc 1\n", -1.0).unwrap_err().line, 3);
        assert_eq!(parse("x", "1\n", -1.0).unwrap_err().line, 1);
        assert_eq!(parse("x", "STOCHASTIC\n", -1.0).unwrap_err().line, 1);
        assert_eq!(parse("x", "5 1\n", 3.0).unwrap_err().line, 0);
    }
}
