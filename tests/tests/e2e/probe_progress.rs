//! `smpi/probe-sees`: which messages a non-blocking probe sees. `sent` (the
//! default, SimGrid's): every message sent so far. `progressed` (Open MPI's
//! ob1, which matches a probe before it runs its progress engine): only the
//! messages that arrived before the rank's previous progressing MPI call, so
//! a receiver polling between chunks of work, as HPL's look-ahead does, finds
//! a message one poll later. Measured on this project's VM with Open MPI 4.1
//! (a 7.6 MB send during 5.5 ms chunks: the first probe after the send began
//! failed, the next found it), and in HPL's traced runs.

use e2e_tests::{build_c, fields, write_scratch, Smpirun};

/// Rank 1 polls every 1 ms of computation (`smpi_execute_benched`, and
/// MPI_Wtime between polls: neither runs MPI's progress); rank 0 sends after
/// 2.5 ms. Prints the number of
/// failed probes and the date the message was found.
const POLLER: &str = r#"
#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, x = 7;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        smpi_execute_benched(0.0025);
        MPI_Send(&x, 1, MPI_INT, 1, 3, MPI_COMM_WORLD);
    } else {
        int flag = 0, failed = 0;
        for (;;) {
            MPI_Iprobe(0, 3, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
            if (flag) break;
            failed++;
            smpi_execute_benched(0.001);
            (void)MPI_Wtime();
        }
        double found = MPI_Wtime();
        MPI_Recv(&x, 1, MPI_INT, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        printf("failed=%d found=%.6f\n", failed, found);
    }
    MPI_Finalize();
    return 0;
}
"#;

fn polls(setting: Option<&str>) -> (u32, f64) {
    let prog = build_c(&write_scratch("probe_progress.c", POLLER));
    let mut run = Smpirun::new(prog)
        .platform(e2e_tests::platform("cluster_4.toml"))
        .np(2)
        .cfg("smpi/iprobe:0")
        .cfg("smpi/wtime:0");
    if let Some(s) = setting {
        run = run.cfg(&format!("smpi/probe-sees:{s}"));
    }
    let out = run.run();
    out.assert_success();
    let line = out
        .lines_starting_with("failed=")
        .next()
        .expect("the result line")
        .to_string();
    let f = fields(&line);
    (f["failed"].parse().unwrap(), f["found"].parse().unwrap())
}

#[test]
fn a_probe_sees_messages_as_simgrid_does_or_one_progress_later() {
    // Sent at 2.5 ms: the probes at 0, 1, 2 ms fail, the one at 3 ms finds it.
    let (failed, found) = polls(None);
    assert_eq!(failed, 3);
    assert!((found - 0.003).abs() < 1e-4, "found at {found}");
    assert_eq!(polls(Some("sent")), (failed, found));
    // Open MPI's ob1: the probe at 3 ms only queues it; the one at 4 ms finds it.
    let (failed, found) = polls(Some("progressed"));
    assert_eq!(failed, 4, "the clock reads between polls are not progress");
    assert!((found - 0.004).abs() < 1e-4, "found at {found}");
}

#[test]
fn a_bad_probe_setting_is_refused_by_name() {
    let prog = build_c(&write_scratch("probe_progress.c", POLLER));
    Smpirun::new(prog)
        .platform(e2e_tests::platform("cluster_4.toml"))
        .np(2)
        .cfg("smpi/probe-sees:maybe")
        .run()
        .assert_failure()
        .assert_stderr_has(&["smpi/probe-sees"]);
}
