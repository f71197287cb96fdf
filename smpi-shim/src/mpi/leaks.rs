//! MPI handles a rank never freed: communicators, groups, datatypes,
//! operations and requests still alive when it ends after `MPI_Finalize`.
//! MPI requires the program to free them; a real MPI leaks their memory
//! silently, and a long run that creates them in a loop runs out of it.
//! SimGrid reports them at the end of the run as probable leaks
//! (`smpi/list-leaks:N` lists them); so does this module, per rank, with
//! the same key.

use super::request::ReqKind;
use super::{World, MPI_COMM_SELF};

/// The handles rank `me` never freed, as "2 communicators, 1 datatype";
/// with `list > 0`, followed by up to `list` of the handles themselves.
/// `owned` are its live requests, those in `never_completed` are left out
/// (reported as such); both in handle order. `None` when there are none.
pub(crate) fn unfreed_handles(
    w: &World,
    me: u32,
    list: usize,
    owned: &[u32],
    never_completed: &[u32],
) -> Option<String> {
    let rank = &w.ranks[me as usize];
    let mut kinds: Vec<(&str, Vec<String>)> = Vec::new();
    let windows = crate::mpi::rma::open_windows(w, me);
    let comms: Vec<String> = rank
        .comms
        .iter()
        .enumerate()
        .skip(MPI_COMM_SELF as usize + 1)
        // A window's own communicator goes with the window.
        .filter(|(h, _)| !windows.iter().any(|&(_, c)| c as usize == *h))
        .filter_map(|(h, c)| {
            c.as_ref().map(|c| {
                if c.name.is_empty() {
                    format!("communicator {h}")
                } else {
                    format!("communicator {h} ({})", c.name)
                }
            })
        })
        .collect();
    kinds.push(("communicator", comms));
    kinds.push((
        "window",
        windows.iter().map(|(h, _)| format!("window {h}")).collect(),
    ));
    kinds.push(("file", crate::mpi::io::open_files(w, me)));
    // Handle 1 is MPI_GROUP_EMPTY.
    let groups: Vec<String> = (rank.groups.iter().enumerate().skip(2))
        .filter(|(_, g)| g.is_some())
        .map(|(h, g)| format!("group {h} ({} members)", g.as_ref().map_or(0, |g| g.len())))
        .collect();
    kinds.push(("group", groups));
    let types: Vec<String> = w
        .type_owner
        .of(me)
        .filter_map(|h| {
            let t = w.types.get(h as usize)?.as_ref()?;
            Some(format!("datatype {h} ({})", t.name))
        })
        .collect();
    kinds.push(("datatype", types));
    let ops: Vec<i32> = w
        .op_owner
        .of(me)
        .filter(|&h| w.ops.get(h as usize).is_some_and(|o| o.is_some()))
        .collect();
    kinds.push((
        "operation",
        ops.iter().map(|h| format!("operation {h}")).collect(),
    ));
    // The program's own requests (point-to-point on its contexts, its
    // non-blocking collectives, generalized ones), not the pieces of a
    // collective; those never completed are reported separately.
    let reqs: Vec<String> = owned
        .iter()
        .map(|&id| (id, w.req(id)))
        .filter(|(id, r)| !r.orphan && never_completed.binary_search(id).is_err())
        .filter(|(_, r)| match r.kind {
            ReqKind::Send | ReqKind::Recv => r.context.is_multiple_of(2),
            ReqKind::Coll | ReqKind::Generalized => true,
        })
        .map(|(id, r)| {
            let what = match r.kind {
                ReqKind::Send => "send",
                ReqKind::Recv => "receive",
                ReqKind::Coll => "collective",
                ReqKind::Generalized => "generalized",
            };
            let persistent = if r.persistent { "persistent " } else { "" };
            format!("{persistent}{what} request {id} (tag {})", r.tag)
        })
        .collect();
    kinds.push(("request", reqs));
    let counts: Vec<String> = kinds
        .iter()
        .filter(|(_, v)| !v.is_empty())
        .map(|(k, v)| format!("{} {k}{}", v.len(), if v.len() > 1 { "s" } else { "" }))
        .collect();
    if counts.is_empty() {
        return None;
    }
    let mut text = counts.join(", ");
    if list > 0 {
        let all: Vec<&String> = kinds.iter().flat_map(|(_, v)| v).collect();
        let shown: Vec<&str> = all.iter().take(list).map(|s| s.as_str()).collect();
        text += &format!(": {}", shown.join(", "));
        if all.len() > list {
            text += &format!(", and {} more", all.len() - list);
        }
    }
    Some(text)
}

/// The program's messages still waiting for a receive when the run ended
/// (MPI requires every send to be matched; a detached or buffered send lets
/// the sender finish anyway, so nothing else would say so). `None` when
/// there are none; the first few are named.
pub(crate) fn unreceived_messages(w: &World) -> Option<String> {
    const NAMED: usize = 4;
    let mut found: Vec<String> = Vec::new();
    let mut count = 0usize;
    for mb in &w.mailboxes {
        for &id in &mb.unexpected {
            let Some(r) = w.reqs.get(id as usize).and_then(|r| r.as_ref()) else {
                continue;
            };
            // The program's own messages (collectives and one-sided transfers
            // use their own contexts and tags).
            if r.kind != ReqKind::Send || !r.context.is_multiple_of(2) || r.rma || r.tag < 0 {
                continue;
            }
            count += 1;
            if found.len() < NAMED {
                found.push(format!(
                    "rank {} to rank {} (tag {}, {} B)",
                    r.owner, r.peer_world, r.tag, r.size
                ));
            }
        }
    }
    (count > 0).then(|| {
        let more = if count > found.len() {
            format!(", and {} more", count - found.len())
        } else {
            String::new()
        };
        format!(
            "{count} message(s) sent and never received, still pending at the end of the run: {}{more}",
            found.join(", ")
        )
    })
}
