//! The order in which actors woken at one date run, with `KernelConfig::simgrid_order`.
//!
//! SMPI programs whose costs depend on that order (the growing `MPI_Iprobe` cost is one
//! counter shared by all ranks) only reproduce SimGrid's numbers when ranks are woken in
//! SimGrid's order. Each expected order below was observed with SimGrid 3.32 on an SMPI
//! program of the same shape (ranks on distinct hosts, `smpi_execute_flops`, `sleep`,
//! `MPI_Send`): these tests pin the rules `simcore/src/sgorder.rs` reproduces.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::{Mutex, MutexGuard};

use simcore::platform::{HostId, Platform};
use simcore::{Ctx, KernelConfig, Simulation};

/// One simulation at a time in this process (the crash reporter's registry is global).
fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// Hosts h0..h3 at 1 Gflop/s, each behind its own 1 GB/s link of latency 0.5 ms (a star:
/// every route crosses two links, 1 ms in all).
fn platform() -> Rc<Platform> {
    let mut toml = String::new();
    for i in 0..4 {
        toml.push_str(&format!(
            "[[host]]\nid = \"h{i}\"\nspeed = \"1Gf\"\n[[link]]\nid = \"l{i}\"\nbandwidth = \"1GBps\"\nlatency = \"0.5ms\"\n"
        ));
    }
    for i in 0..4 {
        for j in i + 1..4 {
            toml.push_str(&format!(
                "[[route]]\nsrc = \"h{i}\"\ndst = \"h{j}\"\nlinks = [\"l{i}\", \"l{j}\"]\n"
            ));
        }
    }
    Rc::new(Platform::from_toml_str(&toml, "inline.toml").unwrap_or_else(|e| panic!("{e}")))
}

fn config(simgrid_order: bool) -> KernelConfig {
    KernelConfig {
        timing_precision: 1e-9,
        simgrid_order,
        ..KernelConfig::default()
    }
}

type Body = Box<dyn FnOnce(&Ctx, &dyn Fn(&Ctx, &str))>;

/// Spawns one actor per body (actor i on host h_i, in order); `woke(ctx, label)` records
/// `label` and the date. Returns the records in execution order.
fn run(simgrid_order: bool, bodies: Vec<Body>) -> Vec<(String, f64)> {
    let _serial = serial();
    let p = platform();
    let mut sim = Simulation::new(p, config(simgrid_order));
    let log = Rc::new(RefCell::new(Vec::new()));
    for (i, body) in bodies.into_iter().enumerate() {
        let log = log.clone();
        sim.spawn(format!("a{i}"), HostId(i as u32), move |ctx: &Ctx| {
            let woke = |ctx: &Ctx, label: &str| log.borrow_mut().push((label.to_string(), ctx.now()));
            body(ctx, &woke);
            Ok(())
        });
    }
    sim.run().unwrap_or_else(|e| panic!("{e}"));
    let out = log.borrow().clone();
    out
}

/// Sends `bytes` from host `src` to host `dst` and waits for the end.
fn transfer(ctx: &Ctx, src: u32, dst: u32, bytes: f64) {
    let c = ctx.comm_async(HostId(src), HostId(dst), bytes, 0);
    ctx.wait(c);
    ctx.release(c);
}

fn labels(log: &[(String, f64)]) -> Vec<&str> {
    log.iter().map(|(l, _)| l.as_str()).collect()
}

/// A computation and two sleeps started at one date, ending at one date: SimGrid dates new
/// sleeps first (they enter its modified set at the front), newest first, then the
/// computation. (SimGrid 3.32: `smpi_execute_flops(1e9)` on rank 0, `sleep(1)` on ranks 1
/// and 2 wake in the order 2, 1, 0.) Plain FIFO order would give 1, 2, 0.
#[test]
fn new_sleeps_come_first_newest_first() {
    let bodies = || -> Vec<Body> {
        vec![
            Box::new(|ctx, woke| {
                ctx.execute(1e9);
                woke(ctx, "exec");
            }),
            Box::new(|ctx, woke| {
                ctx.sleep(1.0);
                woke(ctx, "sleep1");
            }),
            Box::new(|ctx, woke| {
                ctx.sleep(1.0);
                woke(ctx, "sleep2");
            }),
        ]
    };
    let log = run(true, bodies());
    assert_eq!(labels(&log), ["sleep2", "sleep1", "exec"]);
    assert!(log.iter().all(|(_, t)| *t == 1.0), "{log:?}");
    assert_eq!(labels(&run(false, bodies())), ["sleep1", "sleep2", "exec"]);
}

/// Two computations end together; the first woken posts a request (a simcall: it lets the
/// other run first) and computes again; the other computes again at once. Both second
/// computations end together and wake in creation order: the other first. (SimGrid 3.32,
/// same shape with `MPI_Send` as the request: ranks wake 1 then 0.) A host left without
/// any activity leaves SimGrid's modified set, so the order of the first computations'
/// ends does not carry over.
#[test]
fn computations_wake_in_creation_order_after_a_simcall() {
    let bodies = || -> Vec<Body> {
        vec![
            Box::new(|ctx, woke| {
                ctx.execute(1e5);
                woke(ctx, "a0-first");
                ctx.yield_now();
                ctx.execute(3e5);
                woke(ctx, "a0-second");
            }),
            Box::new(|ctx, woke| {
                ctx.execute(1e5);
                woke(ctx, "a1-first");
                ctx.execute(3e5);
                woke(ctx, "a1-second");
            }),
        ]
    };
    let log = run(true, bodies());
    assert_eq!(labels(&log), ["a0-first", "a1-first", "a1-second", "a0-second"]);
    assert_eq!(log[2].1, log[3].1);
}

/// A transfer and a computation ending within SimGrid's timing precision (1e-9 s) of each
/// other are handled at one date, the CPU model's completions before the network's, even
/// when the transfer's date is the earlier one.
#[test]
fn computations_end_before_transfers_at_one_date() {
    // The transfer's end date, measured alone.
    let transfer_alone = run(
        true,
        vec![Box::new(|ctx, woke| {
            transfer(ctx, 0, 1, 1e6);
            woke(ctx, "transfer");
        })],
    );
    let end = transfer_alone[0].1;
    assert!(
        end > 1e-3 + 1e-3 * 0.9,
        "latency plus about 1 ms of transfer, got {end}"
    );
    let flops = (end + 0.5e-9) * 1e9;
    let bodies = move |_: ()| -> Vec<Body> {
        vec![
            Box::new(|ctx, woke| {
                transfer(ctx, 0, 1, 1e6);
                woke(ctx, "transfer");
            }),
            Box::new(move |ctx, woke| {
                ctx.execute(flops);
                woke(ctx, "exec");
            }),
        ]
    };
    let log = run(true, bodies(()));
    assert_eq!(labels(&log), ["exec", "transfer"]);
    assert_eq!(log[0].1, log[1].1, "one date for both");
    assert_eq!(labels(&run(false, bodies(()))), ["transfer", "exec"]);
}

/// SimGrid's solve covers its modified set only, and that set can miss constraints: two flows
/// leave host h2 at once (to h3, then to h1); when their latency ends, enabling the first walks
/// from h2's link through it, enabling the second finds h2's link already touched and walks no
/// further, so h1's link, where a large flow runs, is not re-solved. The large flow keeps its
/// rate, as if the second flow were not there. (SimGrid 3.32, the same shape in SMPI on a
/// 4-host star, CM02: the 4 MB transfer ends at 4.2200168 ms with or without the two 200 kB
/// ones; a full max-min solve would end it at 4.4300336 ms.) In FIFO order, which solves the
/// whole component, the large flow is slowed.
#[test]
fn the_solve_covers_simgrid_modified_set_only() {
    let big_end = |simgrid_order: bool, with_small: bool| {
        let bodies: Vec<Body> = vec![
            Box::new(|ctx, woke| {
                transfer(ctx, 0, 1, 4e6);
                woke(ctx, "big");
            }),
            Box::new(|_, _| {}),
            Box::new(move |ctx, woke| {
                if !with_small {
                    return;
                }
                ctx.sleep(1e-3);
                let a = ctx.comm_async(HostId(2), HostId(3), 2e5, 0);
                let b = ctx.comm_async(HostId(2), HostId(1), 2e5, 0);
                ctx.wait(a);
                ctx.wait(b);
                ctx.release(a);
                ctx.release(b);
                woke(ctx, "small");
            }),
        ];
        let log = run(simgrid_order, bodies);
        log.iter().find(|(l, _)| l == "big").expect("big flow ends").1
    };
    let alone = big_end(true, false);
    assert_eq!(
        big_end(true, true),
        alone,
        "SimGrid's selective solve leaves the large flow alone"
    );
    assert!(
        big_end(false, true) > alone * 1.01,
        "a full solve slows the large flow"
    );
}

/// SimGrid handles at one date the events dated strictly less than one precision (1 ns)
/// after it (`double_equals`); an event exactly 1 ns later waits for its own date. (Ours
/// batched it too: the actor woke 1 ns early, and 16×16 HPL drifted by 0.2 %.)
#[test]
fn an_event_one_precision_later_has_its_own_date() {
    let log = run(
        true,
        vec![
            Box::new(|ctx: &Ctx, woke: &dyn Fn(&Ctx, &str)| {
                ctx.sleep(1.0);
                woke(ctx, "a");
            }),
            Box::new(|ctx: &Ctx, woke: &dyn Fn(&Ctx, &str)| {
                ctx.sleep(1.0 + 1e-9);
                woke(ctx, "b");
            }),
            Box::new(|ctx: &Ctx, woke: &dyn Fn(&Ctx, &str)| {
                ctx.sleep(1.0 + 0.5e-9);
                woke(ctx, "c");
            }),
        ],
    );
    assert_eq!(labels(&log), ["a", "c", "b"]);
    // c, half a precision later, is handled with a at a's date; b at its own.
    assert_eq!(log[0].1, 1.0);
    assert_eq!(log[1].1, 1.0);
    assert!(log[2].1 > 1.0, "b woke at {}", log[2].1);
}
