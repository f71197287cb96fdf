//! Derived datatypes in flight: MPI says a communication using a datatype
//! completes normally even if the handle is freed (and reused) meanwhile.
//! `apps/datatypes/type_free_eager.c` sends 150 doubles through a struct type
//! with a small (detached) send, frees the type before the receiver matches,
//! and in mode 2 creates a new type that may reuse the handle.

use e2e_tests::{apps_dir, build_c, platform, Smpirun};

#[test]
fn freed_datatype_still_delivers_pending_message() {
    let prog = build_c(&apps_dir().join("datatypes/type_free_eager.c"));
    for mode in ["0", "1", "2"] {
        let out = Smpirun::new(&prog)
            .platform(platform("cluster_4.toml"))
            .np(2)
            .cfg("smpi/simulate-computation:no")
            .args([mode])
            .run();
        out.assert_success();
        assert!(
            out.stdout
                .contains(&format!("mode {mode}: 0 of 150 doubles wrong")),
            "mode {mode}\n{}",
            out.describe()
        );
    }
}

/// `apps/datatypes/darray_external.c`: darray layouts (C and Fortran order),
/// external32 bytes, and MPI_Type_get_contents, checked by every rank.
#[test]
fn darray_external32_and_contents() {
    every_rank_finds_no_error("datatypes/darray_external.c", 4);
}

/// Runs `app` (under `apps/`) on `np` ranks; each must print "rank R: 0 errors".
fn every_rank_finds_no_error(app: &str, np: usize) {
    let prog = build_c(&apps_dir().join(app));
    let out = Smpirun::new(&prog)
        .platform(platform("cluster_4.toml"))
        .np(np)
        .cfg("smpi/simulate-computation:no")
        .run();
    out.assert_success();
    for rank in 0..np {
        assert!(
            out.stdout.contains(&format!("rank {rank}: 0 errors")),
            "{}",
            out.describe()
        );
    }
}

/// `apps/datatypes/send_buffer_reuse.c`: a detached send's buffer is
/// overwritten right after MPI_Send returns; the receiver still gets what was
/// sent, with its receive posted before or after the send, contiguous or strided.
#[test]
fn detached_send_buffer_can_be_reused_at_once() {
    let prog = build_c(&apps_dir().join("datatypes/send_buffer_reuse.c"));
    let out = Smpirun::new(&prog)
        .platform(platform("cluster_4.toml"))
        .np(2)
        .cfg("smpi/simulate-computation:no")
        .run();
    out.assert_success();
    assert!(out.stdout.contains("0 errors"), "{}", out.describe());
}

/// `apps/datatypes/struct_twins.c`: struct types built from the same
/// arguments (which the simulator may share) stay separate objects: one
/// committed, one named and refused for a send while uncommitted, both with
/// the same extent and contents; a third, built after the first is freed,
/// carries its data to a rank that built its own.
#[test]
fn identical_struct_types_are_separate_objects() {
    every_rank_finds_no_error("datatypes/struct_twins.c", 2);
}
