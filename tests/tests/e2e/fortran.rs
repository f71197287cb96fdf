//! Fortran programs through `smpif90` / `smpiff` (`apps/fortran/`): the
//! bindings (`use mpi` and `include 'mpif.h'`, fixed and free form), the
//! special addresses, CHARACTER/LOGICAL arguments, Fortran callbacks, output
//! of every rank, STOP / ERROR STOP, and simulated times equal to SMPI 3.32's
//! for the same Fortran program (when SimGrid is installed).

use std::path::Path;

use e2e_tests::{apps_dir, build_with, platform, workspace_root, write_scratch, RunOutput, Smpirun};

fn run(prog: &Path, np: usize) -> RunOutput {
    Smpirun::new(prog)
        .platform(platform("cluster_4.toml"))
        .np(np)
        .cfg("smpi/simulate-computation:no")
        .run()
}

#[test]
fn use_mpi_program_passes_all_its_checks() {
    let prog = build_with(
        "smpif90",
        &[&apps_dir().join("fortran/features.f90")],
        &["-O2"],
        "features",
    );
    let out = run(&prog, 3);
    out.assert_success();
    let checks = [
        "sendrecv",
        "user_op",
        "in_place",
        "comm_name",
        "info",
        "info_absent",
        "error_string",
        "waitany",
        "waitall",
        "keyval_copy",
        "tag_ub",
    ];
    for rank in 0..3 {
        for c in checks {
            let line = format!("check {c} {rank} ok");
            assert!(
                out.stdout.lines().any(|l| l == line),
                "missing `{line}`\n{}",
                out.describe()
            );
        }
    }
    assert!(out.stdout.lines().any(|l| l == "OK"), "{}", out.describe());
}

#[test]
fn fixed_form_mpif_h_program_prints_from_every_rank_and_stop_ends_ranks() {
    let prog = build_with(
        "smpiff",
        &[&apps_dir().join("fortran/timing77.f")],
        &["-O2"],
        "timing77",
    );
    let out = run(&prog, 4);
    out.assert_success();
    for rank in 0..4 {
        let line = format!("rank {rank} max     1000.0");
        assert!(
            out.stdout.lines().any(|l| l == line),
            "missing `{line}`\n{}",
            out.describe()
        );
    }
    for label in ["ring", "bcast", "reduce", "allreduce", "total"] {
        assert_eq!(
            out.lines_starting_with(&format!("{label} ")).count(),
            1,
            "{}",
            out.describe()
        );
    }
}

#[test]
fn free_form_include_mpif_h_with_mpi_bottom_and_status_array() {
    let src = write_scratch(
        "bottom.f90",
        r#"program bottom
  implicit none
  include 'mpif.h'
  integer :: ierr, rank, x, y, t, st(MPI_STATUS_SIZE), statuses(MPI_STATUS_SIZE, 2), reqs(2)
  integer(kind=MPI_ADDRESS_KIND) :: addr(1)
  integer :: blen(1)
  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  x = 40 + rank
  blen(1) = 1
  call MPI_GET_ADDRESS(x, addr(1), ierr)
  call MPI_TYPE_CREATE_HINDEXED(1, blen, addr, MPI_INTEGER, t, ierr)
  call MPI_TYPE_COMMIT(t, ierr)
  call MPI_IRECV(y, 1, MPI_INTEGER, 1 - rank, 3, MPI_COMM_WORLD, reqs(1), ierr)
  call MPI_ISEND(MPI_BOTTOM, 1, t, 1 - rank, 3, MPI_COMM_WORLD, reqs(2), ierr)
  call MPI_WAITALL(2, reqs, statuses, ierr)
  st = statuses(:, 1)
  print '(a,i0,a,i0,a,i0,a,i0)', 'rank ', rank, ' got ', y, ' source ', st(MPI_SOURCE), ' tag ', st(MPI_TAG)
  call MPI_TYPE_FREE(t, ierr)
  call MPI_FINALIZE(ierr)
end program bottom
"#,
    );
    let prog = build_with("smpif90", &[&src], &[], "bottom");
    let out = run(&prog, 2);
    out.assert_success();
    for (rank, got) in [(0, 41), (1, 40)] {
        let line = format!("rank {rank} got {got} source {} tag 3", 1 - rank);
        assert!(
            out.stdout.lines().any(|l| l == line),
            "missing `{line}`\n{}",
            out.describe()
        );
    }
}

#[test]
fn error_stop_ends_the_run_with_its_code() {
    let src = write_scratch(
        "errstop.f90",
        "program errstop\n  use mpi\n  integer :: ierr, rank\n  call MPI_INIT(ierr)\n  \
         call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)\n  if (rank == 1) error stop 3\n  \
         call MPI_BARRIER(MPI_COMM_WORLD, ierr)\n  call MPI_FINALIZE(ierr)\nend program errstop\n",
    );
    let prog = build_with("smpif90", &[&src], &[], "errstop");
    let out = run(&prog, 2);
    assert_eq!(out.code, Some(3), "{}", out.describe());
    out.assert_stderr_has(&["ERROR STOP 3"]);
}

/// `label value` lines of a run's stdout.
fn values(stdout: &str) -> Vec<(String, f64)> {
    stdout
        .lines()
        .filter_map(|l| {
            let mut it = l.split_whitespace();
            let (k, v) = (it.next()?, it.next()?);
            (it.next().is_none()).then_some(())?;
            Some((k.to_string(), v.parse().ok()?))
        })
        .collect()
}

#[test]
fn fortran_simulated_times_equal_smpi_3_32() {
    let (sg_ff, sg_run) = (Path::new("/usr/bin/smpiff"), Path::new("/usr/bin/smpirun"));
    if !sg_ff.exists() || !sg_run.exists() {
        eprintln!("skipped: SimGrid's smpiff/smpirun are not installed in /usr/bin");
        return;
    }
    let src = apps_dir().join("fortran/timing77.f");
    let ours = build_with("smpiff", &[&src], &["-O2"], "timing77_cmp");
    let theirs = e2e_tests::scratch_path("timing77_sg");
    let mut cc = std::process::Command::new(sg_ff);
    cc.arg("-O2").arg(&src).arg("-o").arg(&theirs);
    let r = e2e_tests::run_command(cc, e2e_tests::DEFAULT_TIMEOUT);
    assert_eq!(r.code, Some(0), "SimGrid's smpiff failed\n{}", r.describe());
    let dir = workspace_root().join("tests/smpi_compare/platforms");
    let (xml, hosts) = (dir.join("small_routes.xml"), dir.join("hosts_small.txt"));
    let cfg = ["--cfg=smpi/simulate-computation:no", "--cfg=smpi/host-speed:1Gf"];
    let mut sg = std::process::Command::new(sg_run);
    sg.arg("-platform")
        .arg(&xml)
        .arg("-hostfile")
        .arg(&hosts)
        .args(["-np", "4"])
        .args(cfg)
        .arg(&theirs);
    let expected = e2e_tests::run_command(sg, e2e_tests::DEFAULT_TIMEOUT);
    assert_eq!(expected.code, Some(0), "SMPI failed\n{}", expected.describe());
    let mut mine = Smpirun::new(&ours).platform(&xml).hostfile(&hosts).np(4);
    for c in cfg {
        mine = mine.cfg(c.trim_start_matches("--cfg="));
    }
    let got = mine.run();
    got.assert_success();
    let (e, g) = (values(&expected.stdout), values(&got.stdout));
    assert_eq!(e.len(), 5, "SMPI printed:\n{}", expected.stdout);
    assert_eq!(e, g, "SMPI 3.32:\n{}\nours:\n{}", expected.stdout, got.describe());
}
