//! Modelled computation on the calling rank: a kernel call's model time,
//! injected as computation on the rank's host instead of running the kernel,
//! and the run's notice when real BLAS work goes unsimulated.

use models::compute::KernelId;

use crate::mpi::{current_rank, with_world};

/// Injects the model time of kernel `k` with `params` on the calling rank.
/// Returns false when called outside a simulation.
pub(crate) fn inject(k: KernelId, params: &[f64]) {
    let me = current_rank();
    let (flops, ctx, name) = with_world(|w| {
        let host = w.hosts[me as usize];
        let d = w.kernels.duration(me, host.0 as usize, k, params);
        let name = w.trace.is_some().then(|| w.kernels.name(k).to_string());
        (d * w.platform.host(host).speed, w.ranks[me as usize].ctx(), name)
    });
    if flops > 0.0 {
        match name {
            Some(name) => crate::mpi::entry::traced_computation(me, &name, flops, || ctx.compute(flops)),
            None if crate::mpi::ti_trace::on() => {
                crate::mpi::entry::traced_computation(me, "", flops, || ctx.compute(flops))
            }
            None => ctx.compute(flops),
        }
    }
}

/// If BLAS kernel `i` (index in [`BLAS`]) is modelled, injects its model time
/// for `params` (as an MPI call would: flushing the measured computation first)
/// and returns true; returns false when it must run for real.
pub(crate) fn blas_modelled(i: usize, params: &[f64]) -> bool {
    let k = with_world(|w| w.kernels.blas_model(i));
    match k {
        Some(k) => {
            let _g = crate::mpi::entry::enter();
            inject(k, params);
            true
        }
        None => false,
    }
}

/// idamax in model mode: a pseudo-random index in `0..n` (None if not modelled).
pub(crate) fn modelled_idamax(n: usize) -> Option<usize> {
    let k = with_world(|w| w.kernels.blas_model(9))?;
    let _g = crate::mpi::entry::enter();
    inject(k, &[n as f64]);
    let me = current_rank();
    Some(with_world(|w| w.kernels.random_index(me, n)))
}

/// Called whenever a BLAS kernel runs for real: when computation is not
/// simulated (`smpi/simulate-computation:no`) its time is lost, and the run
/// says so once.
pub(crate) fn real_compute_runs(symbol: &str) {
    let first = with_world(|w| {
        let first = !w.cfg.simulate_computation && !w.kernels.said_unsimulated;
        w.kernels.said_unsimulated |= first;
        first
    });
    if first {
        eprintln!(
            "smpirun: warning: {symbol} (and any other BLAS call that is not modelled) runs for real, but \
             smpi/simulate-computation:no leaves its time out of the simulated time; model the kernels \
             with -model, or simulate computation"
        );
    }
}

/// Whether a kernel that runs for real may use our own implementation
/// instead of the system BLAS: only when computation is not simulated (its
/// time is not measured, so the implementation does not matter, only the
/// result, which is the same).
pub(crate) fn native_allowed() -> bool {
    with_world(|w| !w.cfg.simulate_computation)
}
