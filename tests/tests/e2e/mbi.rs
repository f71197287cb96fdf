//! MPI Bugs Initiative (MBI) regression guard: a small fixed subset of the selection of
//! `tests/mbi/selection.txt` (one or two programs per MBI error class, and correct programs)
//! run through `tests/mbi/run.py` with our `smpicc`/`smpirun`.
//!
//! Asserts that no correct program is flagged (no false positive), and that every program of
//! [`FLAGGED`] (the ones of the subset we flag today) is still flagged. The programs of
//! [`NOT_YET`] are run and reported only: when one becomes flagged the test says so, and it
//! belongs in [`FLAGGED`] from then on.
//!
//! MBI's programs are generated at test time from Debian's `simgrid` source package
//! (`tests/mbi/fetch.sh`, run by `run.py` on need). When it cannot be fetched (no network to
//! the Debian mirror: `run.py` exits 4), the test prints a skip message and passes; any other
//! failure fails the test. The full selection and the table of the README:
//! `tests/mbi/run.py --simgrid`.

use std::collections::BTreeMap;
use std::process::Command;
use std::time::Duration;

use e2e_tests::{run_command, scratch_path, smpicc, smpirun, workspace_root};

/// Programs we flag today, with their MBI class (and how, today).
const FLAGGED: &[(&str, &str)] = &[
    // MPI_COMM_NULL: MPI_ERR_COMM
    ("InvalidParam_ComNull_Reduce_nok", "AInvalidParam"),
    // negative tag: MPI_ERR_TAG
    ("InvalidParam_Tag_Send_Recv_nok", "AInvalidParam"),
    // the rest: a deadlock report
    ("ReqLifecycle_MissingStart_Send_init_Irecv_nok", "BReqLifecycle"),
    ("ParamMatching_Tag_Send_Irecv_nok", "CMatch"),
    ("ParamMatching_Com_Allreduce_nok", "CMatch"),
    ("ParamMatching_Root_Reduce_nok", "CMatch"),
    ("CallOrdering_Allreduce_Gather_nok", "DMatch"),
    ("CallOrdering_Barrier_Igather_nok", "DMatch"),
    ("MessageRace_Allreduce_Isend_Irecv_nok", "DRace"),
    // a communicator never freed: listed as a leak at MPI_Finalize
    ("ResLeak_Comm_dup_nok", "BResLeak"),
    // an MPI_Iallgather never completed: a request leak
    ("ReqLifecycle_MissingWait_Iallgather_nok", "BReqLifecycle"),
    // MPI_INT on odd ranks against MPI_FLOAT on even ranks: a collective mismatch
    ("ParamMatching_Data_Gather_nok", "CMatch"),
    // MPI_Gather then MPI_Allgatherv on odd ranks, the other order on even ranks
    ("CallOrdering_Gather_Allgatherv_nok", "DMatch"),
    // one-sided accesses racing under a lock: an unlock of a lock not held (MPI_ERR_RMA_SYNC)
    (
        "GlobalConcurrency_rl_Win_lock_Get_rload_nok",
        "DGlobalConcurrency",
    ),
];

/// Buggy programs we do not flag yet (SimGrid 3.32 neither: it takes memory tracking).
const NOT_YET: &[(&str, &str)] = &[
    // a receive buffer written before the receive completes (needs memory tracking)
    ("LocalConcurrency_Irecv_Send_nok", "BLocalConcurrency"),
];

/// Correct programs: none may be flagged.
const CORRECT: &[&str] = &[
    "CallOrdering_Allreduce_Exscan_ok",
    "CallOrdering_Ibcast_Igather_ok",
    "CallOrdering_Probe_Recv_Send_ok",
    "ParamMatching_Com_Ireduce_ok",
    "ParamMatching_Tag_Send_init_Irecv_ok",
    "ResLeak_Comm_split_ok",
];

/// `run.py`'s exit code when MBI cannot be fetched.
const EXIT_NO_MBI: i32 = 4;

struct Outcome {
    class: String,
    expect: String,
    verdict: String,
    outcome: String,
    evidence: String,
    log: String,
}

#[test]
fn mbi_subset() {
    let names: Vec<&str> = FLAGGED
        .iter()
        .chain(NOT_YET)
        .map(|(n, _)| *n)
        .chain(CORRECT.iter().copied())
        .collect();
    let json = scratch_path("mbi.json");
    let mut cmd = Command::new("python3");
    cmd.arg(workspace_root().join("tests/mbi/run.py"))
        .arg("--only")
        .arg(names.join(","))
        .args(["--jobs", "2", "--no-results", "--no-cache", "-q", "--json"])
        .arg(&json)
        .arg("--smpicc")
        .arg(smpicc())
        .arg("--smpirun")
        .arg(smpirun());
    let r = run_command(cmd, Duration::from_secs(600));
    if r.code == Some(EXIT_NO_MBI) {
        eprintln!(
            "SKIPPED mbi_subset: MBI could not be fetched from Debian's simgrid source package \
             (no network to the Debian mirror?)\n{}",
            r.stderr
        );
        return;
    }
    // 0: done; 1: a correct program was flagged (reported below from the JSON).
    assert!(
        matches!(r.code, Some(0 | 1)) && json.exists(),
        "tests/mbi/run.py failed\n{}",
        r.describe()
    );
    let data: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).expect("run.py's JSON"))
            .expect("run.py's JSON parses");
    let s = |v: &serde_json::Value| v.as_str().unwrap_or("").to_string();
    let mut got = BTreeMap::new();
    for p in data["programs"].as_array().expect("a programs array") {
        got.insert(
            s(&p["name"]),
            Outcome {
                class: s(&p["class"]),
                expect: s(&p["expect"]),
                verdict: s(&p["ours"]["verdict"]),
                outcome: s(&p["ours"]["outcome"]),
                evidence: s(&p["ours"]["evidence"]),
                log: s(&p["ours"]["log"]),
            },
        );
    }
    let missing: Vec<&&str> = names.iter().filter(|n| !got.contains_key(**n)).collect();
    assert!(
        missing.is_empty(),
        "not run (no longer in tests/mbi/selection.txt?): {missing:?}\n{}",
        r.describe()
    );

    let describe = |n: &str| {
        let o = &got[n];
        format!("  {n}: {} ({}) {} [{}]", o.verdict, o.outcome, o.evidence, o.log)
    };
    let mut failures = Vec::new();
    for n in CORRECT {
        let o = &got[*n];
        assert_eq!(o.expect, "OK", "{n} is not a correct program");
        if o.verdict == "FP" {
            failures.push(format!("correct program flagged:\n{}", describe(n)));
        }
    }
    for (n, class) in FLAGGED {
        let o = &got[*n];
        assert_eq!(&o.class, class, "{n}: class in MBI's header");
        if o.verdict != "TP" {
            failures.push(format!("no longer flagged:\n{}", describe(n)));
        }
    }
    for (n, class) in NOT_YET {
        let o = &got[*n];
        assert_eq!(&o.class, class, "{n}: class in MBI's header");
        if o.verdict == "TP" {
            eprintln!(
                "now flagged (move it to FLAGGED in tests/tests/e2e/mbi.rs):\n{}",
                describe(n)
            );
        }
    }
    eprintln!("MBI subset, ours:");
    for n in &names {
        eprintln!("{}", describe(n));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
