//! Argument checking as MPI requires (`apps/args/arg_checks.c`, 2 ranks): a
//! NULL buffer with data, a negative count, an invalid datatype, operation,
//! root, rank, tag, communicator or request, and NULL or negative count and
//! displacement arrays, in collectives, point-to-point, request completion
//! and datatype constructors, return the class real MPIs return under
//! `MPI_ERRORS_RETURN` and end the run with a message under the default
//! handler; never a crash. What MPI allows (`MPI_IN_PLACE`, root-only
//! arguments, `MPI_BOTTOM` with absolute addresses, zero counts with NULL
//! buffers, `MPI_PROC_NULL`, wildcards on receives) still succeeds.

use e2e_tests::{apps_dir, build_c, platform, RunOutput, Smpirun};

fn run(args: &[&str]) -> RunOutput {
    Smpirun::new(build_c(&apps_dir().join("args/arg_checks.c")))
        .platform(platform("cluster_4.toml"))
        .np(2)
        .cfg("smpi/simulate-computation:no")
        .args(args.iter().copied())
        .run()
}

/// The `<case>: <returned> (expected <class>)` lines, as (case, returned, expected).
fn cases(out: &RunOutput) -> Vec<(&str, &str, &str)> {
    out.stdout
        .lines()
        .filter_map(|l| {
            let (case, rest) = l.rsplit_once(": ")?;
            let (got, expected) = rest.strip_suffix(')')?.split_once(" (expected ")?;
            Some((case, got, expected))
        })
        .collect()
}

#[track_caller]
fn assert_case(all: &[(&str, &str, &str)], case: &str, class: &str) {
    let found = all.iter().find(|c| c.0 == case);
    assert_eq!(found.map(|c| c.1), Some(class), "case {case:?}: {:?}", found);
}

#[test]
fn every_bad_argument_returns_the_class_real_mpis_return() {
    let out = run(&[]);
    out.assert_success();
    let all = cases(&out);
    let wrong: Vec<_> = all.iter().filter(|c| c.1 != c.2).collect();
    assert!(
        wrong.is_empty(),
        "unexpected classes: {wrong:#?}\n{}",
        out.describe()
    );
    assert!(
        all.len() >= 225,
        "only {} cases ran\n{}",
        all.len(),
        out.describe()
    );
    assert!(
        out.stdout
            .contains(&format!("checked {} cases, 0 unexpected", all.len())),
        "{}",
        out.describe()
    );
    // One of each kind, so the classes are visible here too.
    for (case, class) in [
        ("Allreduce sendbuf NULL", "MPI_ERR_BUFFER"),
        ("Bcast count -1", "MPI_ERR_COUNT"),
        ("Bcast datatype uncommitted", "MPI_ERR_TYPE"),
        ("Allreduce op invalid", "MPI_ERR_OP"),
        ("Bcast root 7", "MPI_ERR_ROOT"),
        ("Bcast comm invalid", "MPI_ERR_COMM"),
        ("Allreduce recvbuf MPI_IN_PLACE", "MPI_ERR_BUFFER"),
        ("Reduce_local inbuf NULL", "MPI_ERR_BUFFER"),
        ("Gather recvbuf NULL at root", "MPI_ERR_BUFFER"),
        ("Gatherv recvcounts NULL at root", "MPI_ERR_ARG"),
        ("Alltoallv sendcounts[1] -1", "MPI_ERR_COUNT"),
        ("Alltoallw recvtypes[1] invalid", "MPI_ERR_TYPE"),
        ("Alltoallv_c sendcounts[1] -2", "MPI_ERR_COUNT"),
        ("Reduce_scatter recvcounts NULL", "MPI_ERR_ARG"),
        ("Iallreduce sendbuf NULL", "MPI_ERR_BUFFER"),
        ("Ireduce root 4", "MPI_ERR_ROOT"),
        ("Neighbor_allgather recvbuf NULL", "MPI_ERR_BUFFER"),
        ("Neighbor_alltoallw recvtypes NULL", "MPI_ERR_ARG"),
        ("inter Bcast root 3", "MPI_ERR_ROOT"),
        ("inter Allreduce sendbuf MPI_IN_PLACE", "MPI_ERR_BUFFER"),
        ("Send dest MPI_ANY_SOURCE", "MPI_ERR_RANK"),
        ("Send tag MPI_ANY_TAG", "MPI_ERR_TAG"),
        ("Recv buf NULL", "MPI_ERR_BUFFER"),
        ("Sendrecv_replace buf NULL", "MPI_ERR_BUFFER"),
        ("Iprobe tag -7", "MPI_ERR_TAG"),
        ("Send_c count -1", "MPI_ERR_COUNT"),
        ("Send_init buf NULL", "MPI_ERR_BUFFER"),
        ("Wait request invalid", "MPI_ERR_REQUEST"),
        ("Waitall requests NULL", "MPI_ERR_ARG"),
        ("Startall requests NULL", "MPI_ERR_ARG"),
        ("Type_vector count -1", "MPI_ERR_COUNT"),
        ("Type_indexed blocklengths NULL", "MPI_ERR_ARG"),
        ("Type_create_struct types[1] invalid", "MPI_ERR_TYPE"),
        ("Type_contiguous_c count -1", "MPI_ERR_COUNT"),
    ] {
        assert_case(&all, case, class);
    }
}

#[test]
fn what_mpi_allows_is_not_flagged() {
    let out = run(&[]);
    out.assert_success();
    let all = cases(&out);
    for case in [
        "Allreduce sendbuf MPI_IN_PLACE",
        "Reduce sendbuf MPI_IN_PLACE at root",
        "Gather recvbuf NULL on non-root",
        "Gather sendbuf MPI_IN_PLACE at root",
        "Gatherv recvcounts NULL on non-root",
        "Scatter sendbuf NULL on non-root",
        "Scatter recvbuf MPI_IN_PLACE at root",
        "Scatterv sendcounts NULL on non-root",
        "Allgather sendbuf MPI_IN_PLACE",
        "Alltoall sendbuf MPI_IN_PLACE",
        "Bcast buffer NULL count 0",
        "Allreduce buffers NULL count 0",
        "Alltoallv counts 0 buffers NULL",
        "Reduce_local buffers NULL count 0",
        "Send buf NULL count 0",
        "Recv buf NULL count 0",
        "Send dest MPI_PROC_NULL",
        "Recv source MPI_PROC_NULL",
        "Sendrecv peers MPI_PROC_NULL",
        "Recv MPI_ANY_SOURCE MPI_ANY_TAG",
        "Bcast MPI_BOTTOM absolute datatype",
        "Allreduce MPI_BOTTOM absolute datatype",
        "Sendrecv MPI_BOTTOM absolute datatype",
        "inter Bcast MPI_ROOT",
        "Type_contiguous count 0",
    ] {
        assert_case(&all, case, "MPI_SUCCESS");
    }
    // A send-receive rejected for its receive half must not have posted its
    // send: no request is left behind.
    assert!(!out.stderr.contains("never freed"), "{}", out.describe());
}

#[test]
fn a_bad_argument_under_the_default_handler_ends_the_run_naming_rank_function_and_argument() {
    let out = run(&["fatal"]);
    assert_eq!(out.code, Some(1), "{}", out.describe());
    out.assert_stderr_has(&[
        "rank 0",
        "MPI_Allreduce",
        "sendbuf is NULL",
        "count 10",
        "MPI_ERR_BUFFER",
    ]);
    assert!(!out.stdout.contains("not reached"), "{}", out.describe());
    assert!(!out.stderr.contains("SIGSEGV"), "{}", out.describe());
}
