//! Token ring on the four hosts of `platforms/cluster_4.toml`.
//!
//! Demonstrates:
//! - loading a platform file and spawning one actor per host with [`Simulation::spawn`];
//! - point-to-point messages built from kernel activities: the sender starts a communication
//!   (`comm_async`) and hands it to the receiver through a small mailbox; a receiver with an
//!   empty mailbox blocks on a *manual* activity that the sender completes;
//! - what one message costs on this platform: route host-A -> host-B = `c4_link_A_UP`,
//!   `c4_backbone`, `c4_link_B_DOWN`, so 25 us of latency, then 1 MB at 1 GB/s (the private
//!   links; the SHARED backbone carries the data plus its ACK cross-traffic, ×1.05, but has
//!   2.5 GB/s): 1.025 ms per hop, plus 1 ms of computation at 1 Gflop/s;
//! - a readable timeline: `[time] actor: event`.
//!
//! ```text
//!   rank-0 ──► rank-1 ──► rank-2 ──► rank-3
//!     ▲                                 │
//!     └─────────────────────────────────┘   (3 laps, 1 MB token, 1 Mflop per hop)
//! ```
//!
//! Run with `cargo run -p simcore --release --example ring`.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::path::Path;
use std::rc::Rc;

use simcore::platform::{HostId, Platform};
use simcore::{ActivityId, Ctx, KernelConfig, Simulation};

/// Bytes carried by the token.
const TOKEN_SIZE: f64 = 1e6;
/// Work done by each rank before passing the token on, flop.
const WORK: f64 = 1e6;
/// Number of times the token goes round the ring.
const LAPS: usize = 3;

/// One mailbox per rank: communications sent to it, and the manual activity its owner blocks
/// on while the queue is empty.
#[derive(Default)]
struct Mailbox {
    queue: VecDeque<(ActivityId, usize)>,
    waiting: Option<ActivityId>,
}

type Mailboxes = Rc<RefCell<Vec<Mailbox>>>;

/// Sends `msg` (`size` bytes) to rank `to` on host `dst` and waits until it has arrived.
fn send(ctx: &Ctx, boxes: &Mailboxes, to: usize, dst: HostId, size: f64, msg: usize) {
    let comm = ctx.comm_async(ctx.host(), dst, size, 0);
    ctx.retain(comm); // one reference for the sender, one for the receiver
    let waiting = {
        let mut b = boxes.borrow_mut();
        b[to].queue.push_back((comm, msg));
        b[to].waiting.take()
    };
    if let Some(m) = waiting {
        ctx.complete(m);
    }
    ctx.wait(comm);
    ctx.release(comm);
}

/// Receives the next message of rank `me`: blocks until one was sent and has arrived.
fn recv(ctx: &Ctx, boxes: &Mailboxes, me: usize) -> usize {
    loop {
        let next = boxes.borrow_mut()[me].queue.pop_front();
        if let Some((comm, msg)) = next {
            ctx.wait(comm);
            ctx.release(comm);
            return msg;
        }
        let m = ctx.manual_create();
        boxes.borrow_mut()[me].waiting = Some(m);
        ctx.wait(m);
        ctx.release(m);
    }
}

fn log(ctx: &Ctx, name: &str, event: &str) {
    println!("[{:>10.6}] {name:<7} {event}", ctx.now());
}

fn main() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../platforms/cluster_4.toml");
    let platform = Rc::new(Platform::from_file(&path).unwrap_or_else(|e| panic!("{e}")));
    let n = platform.hosts.len();
    let mut sim = Simulation::new(platform.clone(), KernelConfig::default());
    let boxes: Mailboxes = Rc::new(RefCell::new((0..n).map(|_| Mailbox::default()).collect()));

    println!(
        "token ring: {n} ranks on {}, {LAPS} laps, {TOKEN_SIZE} B token, {WORK} flop per hop",
        path.file_name().and_then(|f| f.to_str()).unwrap_or("?")
    );
    for rank in 0..n {
        let boxes = boxes.clone();
        let name = format!("rank-{rank}");
        let next = (rank + 1) % n;
        let next_host = HostId(next as u32);
        sim.spawn(name.clone(), HostId(rank as u32), move |ctx: &Ctx| {
            if rank == 0 {
                log(ctx, &name, "creates the token");
                send(ctx, &boxes, next, next_host, TOKEN_SIZE, 1);
                log(ctx, &name, &format!("sent the token to rank-{next}"));
            }
            loop {
                let hops = recv(ctx, &boxes, rank);
                if hops == 0 {
                    // The stop message: pass it on (unless the next rank is the originator).
                    log(ctx, &name, "received the stop message");
                    if next != 0 {
                        send(ctx, &boxes, next, next_host, 0.0, 0);
                    }
                    log(ctx, &name, "stops");
                    return Ok(());
                }
                log(ctx, &name, &format!("received the token (hop {hops})"));
                if rank == 0 && hops == LAPS * n {
                    log(ctx, &name, "token back home for the last time: stopping the ring");
                    send(ctx, &boxes, next, next_host, 0.0, 0);
                    log(ctx, &name, "stops");
                    return Ok(());
                }
                ctx.execute(WORK);
                log(ctx, &name, &format!("computed {WORK} flop"));
                send(ctx, &boxes, next, next_host, TOKEN_SIZE, hops + 1);
                log(ctx, &name, &format!("sent the token to rank-{next}"));
            }
        });
    }
    match sim.run() {
        Ok(summary) => println!(
            "simulation ended at {:.6} s after {} events",
            summary.time, summary.events
        ),
        Err(e) => {
            eprintln!("simulation failed: {e}");
            std::process::exit(1);
        }
    }
}
