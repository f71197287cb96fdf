//! MPI misuse is reported, never passed silently, hung on or crashed on
//! (`apps/misuse/misuse.c`, one misuse per mode, 2 ranks): truncation in
//! every completion path, MPI_Init twice, calls before MPI_Init and after
//! MPI_Finalize, a probe that can never match, a non-blocking collective never
//! completed, a rank that ends without MPI_Finalize.

use e2e_tests::{apps_dir, build_c, platform, RunOutput, Smpirun};

fn run(mode: &str) -> RunOutput {
    Smpirun::new(build_c(&apps_dir().join("misuse/misuse.c")))
        .platform(platform("cluster_4.toml"))
        .np(2)
        .args([mode])
        .run()
}

#[track_caller]
fn fails_with(mode: &str, code: i32, needles: &[&str]) {
    let out = run(mode);
    assert_eq!(out.code, Some(code), "{mode}\n{}", out.describe());
    out.assert_stderr_has(needles);
}

#[test]
fn a_truncated_non_blocking_receive_is_an_error() {
    fails_with(
        "truncate-wait",
        1,
        &["rank 0", "MPI_Wait", "message truncated", "MPI_ERR_TRUNCATE"],
    );
    fails_with(
        "truncate-waitall",
        1,
        &["rank 0", "MPI_Waitall", "request 1", "MPI_ERR_IN_STATUS"],
    );
    let out = run("truncate-return");
    out.assert_success();
    assert!(
        out.stdout.contains("MPI_Wait returned MPI_ERR_TRUNCATE"),
        "{}",
        out.describe()
    );
}

#[test]
fn calls_outside_init_and_finalize_are_errors() {
    fails_with("init-twice", 1, &["MPI_Init called twice"]);
    fails_with(
        "before-init",
        1,
        &["rank 0", "MPI_Barrier called before MPI_Init"],
    );
    fails_with(
        "after-finalize",
        1,
        &["rank 0", "MPI_Send called after MPI_Finalize"],
    );
}

#[test]
fn collectives_that_do_not_match_across_ranks_are_errors() {
    fails_with(
        "coll-kind",
        1,
        &[
            "collective mismatch on MPI_COMM_WORLD (collective call #1)",
            "MPI_Bcast(root 0, 4 B of MPI_INT)",
            "MPI_Barrier()",
        ],
    );
    fails_with("coll-root", 1, &["MPI_Bcast", "root 0", "root 1", "MPI_ERR_ROOT"]);
    fails_with(
        "coll-op",
        1,
        &["MPI_Allreduce(MPI_SUM", "MPI_Allreduce(MPI_MAX", "MPI_ERR_OP"],
    );
    fails_with(
        "coll-count",
        1,
        &["16 B of MPI_INT", "12 B of MPI_INT", "MPI_ERR_TYPE"],
    );
    let out = run("coll-fine");
    out.assert_success();
    assert!(out.stdout.contains("rank 0: user sum 3"), "{}", out.describe());
}

#[test]
fn a_send_received_as_another_type_is_a_warning() {
    let out = run("type-mismatch");
    out.assert_success();
    assert!(out.stdout.contains("received all four"), "{}", out.describe());
    out.assert_stderr_has(&[
        "warning: rank 1 sends 4 × MPI_INT (tag 0) to rank 0, whose receive takes MPI_FLOAT",
        "type signatures do not match",
    ]);
    assert_eq!(
        out.stderr.matches("type signatures do not match").count(),
        1,
        "{}",
        out.describe()
    );
}

#[test]
fn handles_never_freed_are_reported_at_the_end() {
    let out = run("leak");
    out.assert_success();
    out.assert_stderr_has(&[
        "warning: rank 0 called MPI_Finalize with MPI handles never freed (probable leaks): \
         1 communicator, 1 group, 1 datatype, 1 operation, 1 request; --cfg=smpi/list-leaks:N lists them",
        "warning: rank 1 called MPI_Finalize with MPI handles never freed",
    ]);
    let listed = Smpirun::new(build_c(&apps_dir().join("misuse/misuse.c")))
        .platform(platform("cluster_4.toml"))
        .np(2)
        .cfg("smpi/list-leaks:3")
        .args(["leak"])
        .run();
    listed.assert_success();
    listed.assert_stderr_has(&[
        "communicator 3",
        "group 2 (2 members)",
        "datatype",
        ", and 2 more",
    ]);
    // SimGrid's analysis mode lists them too, and prints the timing.
    let analyzed = Smpirun::new(build_c(&apps_dir().join("misuse/misuse.c")))
        .platform(platform("cluster_4.toml"))
        .np(2)
        .opt("-analyze")
        .args(["leak"])
        .run();
    analyzed.assert_success();
    analyzed.assert_stderr_has(&["communicator 3", "operation"]);
    // A program that frees everything is not reported.
    let clean = run("coll-fine");
    assert!(!clean.stderr.contains("never freed"), "{}", clean.describe());
}

#[test]
fn a_probe_that_can_never_match_is_a_deadlock() {
    fails_with(
        "probe-never",
        3,
        &["rank 0", "deadlock", "MPI_Probe(source 1, tag 99)"],
    );
}

#[test]
fn unfinished_work_at_the_end_of_a_rank_is_reported() {
    // The receives of an Igather never waited used to land in the ended rank's
    // freed stack: a crash of the simulator.
    let out = run("nbc-unwaited");
    out.assert_success();
    out.assert_stderr_has(&[
        "rank 0 ended with requests never completed",
        "non-blocking collective",
    ]);
    let out = run("no-finalize");
    out.assert_success();
    out.assert_stderr_has(&["rank 1 returned from main without calling MPI_Finalize"]);
}

#[test]
fn functions_nothing_defines_are_listed_before_the_run() {
    let out = Smpirun::new(build_c(&apps_dir().join("misuse/unimplemented.c")))
        .platform(platform("cluster_4.toml"))
        .np(2)
        .run();
    assert_eq!(out.code, Some(2), "{}", out.describe());
    out.assert_stderr_has(&[
        "not implemented by smpirun: MPI_Comm_spawn",
        "in no library the program was linked with: not_defined_anywhere",
    ]);
    assert!(
        !out.stdout.contains("started"),
        "refused before running\n{}",
        out.describe()
    );
}

#[test]
fn a_negative_split_color_is_an_argument_error() {
    fails_with(
        "split-color",
        1,
        &["rank 0", "MPI_Comm_split", "invalid color -10", "MPI_ERR_ARG"],
    );
}

#[test]
fn freeing_an_active_persistent_request_is_a_warning() {
    let out = run("free-active-persistent");
    out.assert_success();
    out.assert_stderr_has(&[
        "warning: rank 0 frees an active persistent request",
        "never waited",
    ]);
}

#[test]
fn a_message_never_received_is_reported_at_the_end() {
    let out = run("unreceived");
    out.assert_success();
    out.assert_stderr_has(&[
        "warning: 1 message(s) sent and never received",
        "rank 0 to rank 1 (tag 42, 12 B)",
    ]);
    // A run whose messages are all received says nothing of the kind.
    let clean = run("coll-fine");
    assert!(!clean.stderr.contains("never received"), "{}", clean.describe());
}
