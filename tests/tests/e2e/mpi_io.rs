//! MPI-IO (`apps/io/io.c`, `apps/io/io_errors.c`): every access form (explicit offsets,
//! individual pointers, collective, shared pointer, ordered, non-blocking, split collective,
//! a noncontiguous view) writes real data that reads back; the simulated dates of every phase
//! equal SMPI 3.32's on a platform with disks (live, when SimGrid is installed); a lone write
//! and read take size / bandwidth of the platform's disk; errors return their class under the
//! default `MPI_ERRORS_RETURN` and end the run naming rank, call and handle under
//! `MPI_ERRORS_ARE_FATAL`; a bad `<disk>` is a platform error naming file, line and key.

use std::path::{Path, PathBuf};
use std::process::Command;

use e2e_tests::{build_app, run_command, scratch_dir, write_scratch, RunOutput, Smpirun, DEFAULT_TIMEOUT};

/// The platform with disks of `apps/io` (two hosts, one disk each).
fn disks_xml() -> PathBuf {
    e2e_tests::apps_dir().join("io/disks.xml")
}

fn run_io(platform: &Path, np: usize, args: &[&str]) -> RunOutput {
    Smpirun::new(build_app("io/io"))
        .platform(platform)
        .np(np)
        .cfg("smpi/simulate-computation:no")
        .args(args.iter().copied())
        .run()
}

/// The `<phase> <rank> <date>` lines, sorted.
fn phase_lines(stdout: &str) -> Vec<String> {
    let mut v: Vec<String> = stdout
        .lines()
        .filter(|l| {
            l.split_whitespace().count() == 3 && l.split_whitespace().nth(2).is_some_and(|d| d.contains('.'))
        })
        .map(str::to_string)
        .collect();
    v.sort();
    v
}

/// The date rank `rank` printed after `phase`.
fn date(stdout: &str, phase: &str, rank: usize) -> f64 {
    let prefix = format!("{phase} {rank} ");
    stdout
        .lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .unwrap_or_else(|| panic!("no `{prefix}` line in\n{stdout}"))
        .trim()
        .parse()
        .expect("a date")
}

#[test]
fn every_access_form_round_trips_through_the_file() {
    let file = scratch_dir().join("io_round_trip.dat");
    let out = run_io(&disks_xml(), 4, &[file.to_str().expect("utf-8 path")]);
    out.assert_success();
    assert!(out.stdout.contains("io: all checks passed"), "{}", out.describe());
    assert!(!file.exists(), "MPI_File_delete left {}", file.display());
}

#[test]
fn data_lands_in_a_real_file_and_outlives_the_run() {
    let dir = scratch_dir().join("io_real");
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let prog = write_scratch(
        "io_keep.c",
        r#"#include <mpi.h>
int main(int argc, char **argv) {
  MPI_File fh; int rank, v;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  v = 1000 + rank;
  MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
  MPI_File_write_at(fh, rank * (MPI_Offset)sizeof(int), &v, 1, MPI_INT, MPI_STATUS_IGNORE);
  MPI_File_close(&fh);
  MPI_Finalize();
  return 0;
}
"#,
    );
    let exe = e2e_tests::build_c(&prog);
    let file = dir.join("kept.dat");
    let _ = std::fs::remove_file(&file);
    Smpirun::new(exe)
        .platform(disks_xml())
        .np(3)
        .cfg("smpi/simulate-computation:no")
        .args([file.to_str().expect("utf-8 path")])
        .run()
        .assert_success();
    let bytes = std::fs::read(&file).expect("the program's output file exists");
    let ints: Vec<i32> = bytes
        .chunks(4)
        .map(|c| i32::from_ne_bytes(c.try_into().expect("4 bytes")))
        .collect();
    assert_eq!(ints, vec![1000, 1001, 1002]);
}

#[test]
fn lone_write_and_read_take_size_over_disk_bandwidth() {
    let (read_bw, write_bw) = (200e6, 50e6);
    let toml = write_scratch(
        "io_one_disk.toml",
        "routing = \"full\"\n\n[[host]]\nid = \"solo\"\nspeed = \"1Gf\"\n\n[[host.disk]]\nid = \"ssd\"\n\
         read_bw = \"200MBps\"\nwrite_bw = \"50MBps\"\n",
    );
    let file = scratch_dir().join("io_one_disk.dat");
    let out = Smpirun::new(build_app("io/io"))
        .platform(&toml)
        .np(1)
        .cfg("smpi/simulate-computation:no")
        .cfg("smpi/wtime:0")
        .args([file.to_str().expect("utf-8 path")])
        .run();
    out.assert_success();
    // io.c writes then reads N = 1000 ints at an explicit offset.
    let bytes = 1000.0 * 4.0;
    let write = date(&out.stdout, "write_at", 0) - date(&out.stdout, "open", 0);
    let read = date(&out.stdout, "read_at", 0) - date(&out.stdout, "write_at", 0);
    assert!(
        (write - bytes / write_bw).abs() < 1e-12,
        "write took {write} s\n{}",
        out.stdout
    );
    assert!(
        (read - bytes / read_bw).abs() < 1e-12,
        "read took {read} s\n{}",
        out.stdout
    );
}

#[test]
fn diskless_hosts_take_no_io_time_and_say_so() {
    let file = scratch_dir().join("io_diskless.dat");
    let out = run_io(
        &e2e_tests::platform("cluster_4.toml"),
        4,
        &[file.to_str().expect("utf-8 path")],
    );
    out.assert_success();
    assert!(out.stdout.contains("io: all checks passed"), "{}", out.describe());
    out.assert_stderr_has(&["has no disk", "no simulated time"]);
}

#[test]
fn phase_dates_equal_smpi_3_32() {
    let (cc, sg_run) = (Path::new("/usr/bin/smpicc"), Path::new("/usr/bin/smpirun"));
    if !cc.exists() || !sg_run.exists() {
        eprintln!("skipped: SimGrid 3.32 is not installed (/usr/bin/smpicc, /usr/bin/smpirun)");
        return;
    }
    let exe = scratch_dir().join("io_smpi");
    let mut c = Command::new(cc);
    c.arg("-O2")
        .arg(e2e_tests::apps_dir().join("io/io.c"))
        .arg("-o")
        .arg(&exe);
    let built = run_command(c, DEFAULT_TIMEOUT);
    assert_eq!(
        built.code,
        Some(0),
        "SimGrid's smpicc failed\n{}",
        built.describe()
    );
    let file = scratch_dir().join("io_smpi.dat");
    let mut c = Command::new(sg_run);
    c.current_dir(scratch_dir())
        .arg("-np")
        .arg("4")
        .arg("-platform")
        .arg(disks_xml())
        .arg("--cfg=smpi/simulate-computation:no")
        .arg(&exe)
        .arg(&file)
        .arg("smpi");
    let theirs = run_command(c, DEFAULT_TIMEOUT);
    assert_eq!(theirs.code, Some(0), "SMPI run failed\n{}", theirs.describe());
    let ours = run_io(
        &disks_xml(),
        4,
        &[
            scratch_dir().join("io_ours.dat").to_str().expect("utf-8 path"),
            "smpi",
        ],
    );
    ours.assert_success();
    let (a, b) = (phase_lines(&ours.stdout), phase_lines(&theirs.stdout));
    assert!(a.len() >= 4 * 10, "{}", ours.describe());
    assert_eq!(
        a, b,
        "MPI-IO dates differ from SMPI 3.32's\nours:\n{}\nSMPI:\n{}",
        ours.stdout, theirs.stdout
    );
}

#[test]
fn errors_return_their_class_and_fatal_ones_name_rank_call_and_file() {
    let dir = scratch_dir().join("io_errors_dir");
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let _ = std::fs::remove_file(dir.join("io_errors.dat"));
    let out = Smpirun::new(build_app("io/io_errors"))
        .platform(disks_xml())
        .np(2)
        .cfg("smpi/simulate-computation:no")
        .args([dir.to_str().expect("utf-8 path")])
        .run();
    out.assert_failure();
    for (case, class) in [
        ("default_errhandler", "MPI_ERRORS_RETURN"),
        ("open_missing", "MPI_ERR_NO_SUCH_FILE"),
        ("open_bad_amode", "MPI_ERR_AMODE"),
        ("open_create", "MPI_SUCCESS"),
        ("read_wronly", "MPI_ERR_ACCESS"),
        ("write_wronly", "MPI_SUCCESS"),
        ("negative_count", "MPI_ERR_COUNT"),
        ("bad_whence", "MPI_ERR_ARG"),
        ("open_excl", "MPI_ERR_FILE_EXISTS"),
        ("write_rdonly", "MPI_ERR_READ_ONLY"),
        ("delete_missing", "MPI_ERR_NO_SUCH_FILE"),
        ("read_closed", "MPI_ERR_FILE"),
    ] {
        let line = format!("{case} {class}");
        assert_eq!(
            out.stdout.lines().filter(|l| *l == line).count(),
            2,
            "`{line}` once per rank expected\n{}",
            out.describe()
        );
    }
    out.assert_stderr_has(&["rank 1", "MPI_File_read", "file handle", "MPI_ERR_FILE"]);
    // MPI_MODE_DELETE_ON_CLOSE removed it.
    assert!(!dir.join("io_errors.dat").exists());
}

#[test]
fn a_bad_disk_is_a_platform_error_naming_file_line_and_key() {
    let toml = write_scratch(
        "io_bad_disk.toml",
        "routing = \"full\"\n\n[[host]]\nid = \"a\"\nspeed = \"1Gf\"\n\n[[host.disk]]\nid = \"d\"\nread_bw = \"fast\"\n\
         write_bw = \"1MBps\"\n",
    );
    let out = Smpirun::new(build_app("io/io")).platform(&toml).np(1).run();
    out.assert_failure();
    out.assert_stderr_has(&["io_bad_disk.toml:9", "read_bw"]);
    let xml = write_scratch(
        "io_bad_disk.xml",
        "<?xml version='1.0'?>\n<platform version=\"4.1\">\n<zone id=\"z\" routing=\"Full\">\n\
         <host id=\"a\" speed=\"1Gf\">\n  <disk id=\"d\" read_bw=\"1MBps\"/>\n</host>\n</zone>\n</platform>\n",
    );
    let out = Smpirun::new(build_app("io/io")).platform(&xml).np(1).run();
    out.assert_failure();
    out.assert_stderr_has(&["io_bad_disk.xml:5", "write_bw", "<disk>"]);
}
