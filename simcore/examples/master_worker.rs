//! A master distributing tasks to workers on `platforms/cluster_4.toml`.
//!
//! Demonstrates:
//! - computation and communication interleaved: each task is 8 MB of input sent by the master,
//!   a computation of its own size on the worker, and a 1 MB result sent back;
//! - bandwidth sharing: the master sends task inputs asynchronously, so transfers to different
//!   workers overlap on the master's private link `c4_link_0_UP` (1 GB/s) and share it;
//! - CPU sharing: two workers per 2-core host each get a full core;
//! - on-demand scheduling: a worker asks for work by sending its previous result (or a "ready"
//!   message at start); the master answers each request with the next task, then with "stop";
//! - messages built from kernel activities (a mailbox per actor, a manual activity to block
//!   on an empty mailbox), and a readable timeline `[time] actor: event`.
//!
//! ```text
//!                    ┌──► worker-1a, worker-1b   (host-1)
//!   master (host-0) ─┼──► worker-2a, worker-2b   (host-2)
//!                    └──► worker-3a, worker-3b   (host-3)
//! ```
//!
//! Run with `cargo run -p simcore --release --example master_worker`.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::path::Path;
use std::rc::Rc;

use simcore::platform::{HostId, Platform};
use simcore::{ActivityId, Ctx, KernelConfig, Simulation};

/// Number of tasks.
const TASKS: usize = 12;
/// Input data of a task, bytes.
const INPUT: f64 = 8e6;
/// Result of a task, bytes.
const RESULT: f64 = 1e6;
/// Size of a control message ("ready", "stop"), bytes.
const CONTROL: f64 = 64.0;

#[derive(Debug, Clone, Copy)]
enum Msg {
    /// A worker (its index) asks for its first task.
    Ready(usize),
    /// A worker returns the result of a task and asks for the next one.
    Result { worker: usize, task: usize },
    /// A task for a worker: its number and its work in flop.
    Task { task: usize, flops: f64 },
    /// No more tasks.
    Stop,
}

/// One mailbox per actor: communications sent to it with their message, and the manual
/// activity its owner blocks on while the queue is empty.
#[derive(Default)]
struct Mailbox {
    queue: VecDeque<(ActivityId, Msg)>,
    waiting: Option<ActivityId>,
}

type Mailboxes = Rc<RefCell<Vec<Mailbox>>>;

/// Starts sending `msg` (`size` bytes) to actor `to` on host `dst`, without waiting: the
/// receiver owns the communication.
fn send_async(ctx: &Ctx, boxes: &Mailboxes, to: usize, dst: HostId, size: f64, msg: Msg) {
    let comm = ctx.comm_async(ctx.host(), dst, size, 0);
    let waiting = {
        let mut b = boxes.borrow_mut();
        b[to].queue.push_back((comm, msg));
        b[to].waiting.take()
    };
    if let Some(m) = waiting {
        ctx.complete(m);
    }
}

/// Sends and waits until the message has arrived.
fn send(ctx: &Ctx, boxes: &Mailboxes, to: usize, dst: HostId, size: f64, msg: Msg) {
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

/// The next message for actor `me`, once it has fully arrived. Messages are taken in the
/// order they were sent.
fn recv(ctx: &Ctx, boxes: &Mailboxes, me: usize) -> Msg {
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
    println!("[{:>9.6}] {name:<10} {event}", ctx.now());
}

fn main() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../platforms/cluster_4.toml");
    let platform = Rc::new(Platform::from_file(&path).unwrap_or_else(|e| panic!("{e}")));
    let mut sim = Simulation::new(platform.clone(), KernelConfig::default());

    // Actor 0 is the master on host-0; workers 1.. are two per other host.
    let master_host = HostId(0);
    let workers: Vec<(String, HostId)> = (1..platform.hosts.len() as u32)
        .flat_map(|h| ["a", "b"].map(|s| (format!("worker-{h}{s}"), HostId(h))))
        .collect();
    let boxes: Mailboxes = Rc::new(RefCell::new(
        (0..=workers.len()).map(|_| Mailbox::default()).collect(),
    ));
    println!(
        "master-worker: {TASKS} tasks, {} workers on {}; {INPUT} B in, {RESULT} B out per task",
        workers.len(),
        path.file_name().and_then(|f| f.to_str()).unwrap_or("?")
    );

    let done = Rc::new(RefCell::new(vec![0usize; workers.len() + 1]));
    {
        let boxes = boxes.clone();
        let worker_hosts: Vec<HostId> = workers.iter().map(|w| w.1).collect();
        let names: Vec<String> = workers.iter().map(|w| w.0.clone()).collect();
        sim.spawn("master", master_host, move |ctx: &Ctx| {
            let mut stopped = 0;
            let mut next_task = 0;
            while stopped < worker_hosts.len() {
                let worker = match recv(ctx, &boxes, 0) {
                    Msg::Ready(w) => {
                        log(ctx, "master", &format!("{} is ready", names[w - 1]));
                        w
                    }
                    Msg::Result { worker, task } => {
                        log(
                            ctx,
                            "master",
                            &format!("got the result of task {task} from {}", names[worker - 1]),
                        );
                        worker
                    }
                    other => return Err(format!("master: unexpected message {other:?}")),
                };
                let dst = worker_hosts[worker - 1];
                if next_task < TASKS {
                    // Tasks get bigger: 0.5, 1.0, 1.5, ... Gflop.
                    let flops = 0.5e9 * (next_task + 1) as f64;
                    log(
                        ctx,
                        "master",
                        &format!(
                            "sends task {next_task} ({:.1} Gflop) to {}",
                            flops / 1e9,
                            names[worker - 1]
                        ),
                    );
                    let msg = Msg::Task {
                        task: next_task,
                        flops,
                    };
                    send_async(ctx, &boxes, worker, dst, INPUT, msg);
                    next_task += 1;
                } else {
                    log(ctx, "master", &format!("tells {} to stop", names[worker - 1]));
                    send_async(ctx, &boxes, worker, dst, CONTROL, Msg::Stop);
                    stopped += 1;
                }
            }
            log(ctx, "master", "all tasks done");
            Ok(())
        });
    }
    for (i, (name, h)) in workers.iter().enumerate() {
        let (me, name, h) = (i + 1, name.clone(), *h);
        let (boxes, done) = (boxes.clone(), done.clone());
        sim.spawn(name.clone(), h, move |ctx: &Ctx| {
            send(ctx, &boxes, 0, master_host, CONTROL, Msg::Ready(me));
            loop {
                match recv(ctx, &boxes, me) {
                    Msg::Task { task, flops } => {
                        log(ctx, &name, &format!("received task {task}"));
                        ctx.execute(flops);
                        log(ctx, &name, &format!("computed task {task}"));
                        done.borrow_mut()[me] += 1;
                        let msg = Msg::Result { worker: me, task };
                        send(ctx, &boxes, 0, master_host, RESULT, msg);
                    }
                    Msg::Stop => {
                        log(ctx, &name, "stops");
                        return Ok(());
                    }
                    other => return Err(format!("{name}: unexpected message {other:?}")),
                }
            }
        });
    }
    match sim.run() {
        Ok(summary) => {
            println!(
                "simulation ended at {:.6} s after {} events",
                summary.time, summary.events
            );
            for (i, (name, _)) in workers.iter().enumerate() {
                println!("  {name}: {} task(s)", done.borrow()[i + 1]);
            }
        }
        Err(e) => {
            eprintln!("simulation failed: {e}");
            std::process::exit(1);
        }
    }
}
