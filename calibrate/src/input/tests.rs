//! One test per kind of bad input: each asserts the message names the file,
//! the line and the column.

use super::*;
use crate::synth::metadata;

fn network(rows: &[&str]) -> String {
    let mut s = metadata("network", "node-7", 7, 1e-9, 2e-8);
    s.push_str("seq,kind,size,start,duration,warmup\n");
    for r in rows {
        s.push_str(r);
        s.push('\n');
    }
    s.push_str(&format!("# end: {}\n", rows.len()));
    s
}

/// Line of the header in `network(...)`: 16 metadata lines, then the header.
const HEADER: usize = 17;

fn err(text: &str) -> String {
    parse(text, "cal.csv", 0).unwrap_err().to_string()
}

#[test]
fn a_good_file_parses() {
    let f = parse(
        &network(&["0,pingpong,10,0.0,1e-6,1", "1,send,10,1e-5,2.5e-7,0"]),
        "ok.csv",
        0,
    )
    .unwrap();
    let Table::Network(rows) = &f.table else { panic!() };
    assert_eq!(rows.len(), 2);
    assert_eq!(
        (rows[1].kind, rows[1].size, rows[1].warmup),
        (NetKind::Send, 10, false)
    );
    assert_eq!(
        rows[1].at,
        RowRef {
            file: 0,
            line: HEADER + 2,
            column: 3
        }
    );
    assert_eq!(f.meta("host"), "node-7");
}

#[test]
fn heldout_rows_are_kept_apart_from_the_fitted_ones() {
    let f = parse(
        &network(&[
            "0,pingpong,10,0.0,1e-6,1",
            "1,pingpong_heldout,30,1e-5,1.2e-6,1",
            "2,pingpong_heldout,30,2e-5,1.1e-6,0",
            "3,send,10,3e-5,2.5e-7,0",
        ]),
        "ok.csv",
        0,
    )
    .unwrap();
    let Table::Network(rows) = &f.table else { panic!() };
    assert_eq!(rows.len(), 2, "the fit sees no held-out row");
    assert!(rows.iter().all(|r| r.size == 10));
    assert_eq!(f.heldout.len(), 2);
    assert_eq!(
        (
            f.heldout[1].kind,
            f.heldout[1].size,
            f.heldout[1].warmup,
            f.heldout[1].at.line
        ),
        (NetKind::Pingpong, 30, false, HEADER + 3)
    );
}

#[test]
fn missing_metadata_key() {
    let text = network(&["0,send,1,0,1e-6,0"]).replace("# blas_kernel: synthetic\n", "");
    let e = err(&text);
    assert!(
        e.starts_with(&format!(
            "cal.csv:{}:1: missing metadata key `blas_kernel`",
            HEADER - 1
        )),
        "{e}"
    );
}

#[test]
fn bad_metadata_value() {
    let e = err(&network(&["0,send,1,0,1e-6,0"]).replace("# kind: network", "# kind: netwrk"));
    assert!(e.starts_with("cal.csv:2:9: metadata `kind`: `netwrk`"), "{e}");
}

#[test]
fn missing_column() {
    let text = network(&["0,send,1,0,1e-6"]).replace("start,duration,warmup", "start,duration");
    let e = err(&text);
    assert!(
        e.starts_with(&format!("cal.csv:{HEADER}:29: missing column `warmup`")),
        "{e}"
    );
}

#[test]
fn non_numeric_value() {
    let e = err(&network(&["0,send,1,0,1e-6,0", "1,send,12,0,fast,0"]));
    assert!(
        e.starts_with(&format!(
            "cal.csv:{}:13: column `duration`: `fast` is not a number",
            HEADER + 2
        )),
        "{e}"
    );
}

#[test]
fn size_out_of_range() {
    let e = err(&network(&["0,send,-3,0,1e-6,0"]));
    assert!(
        e.starts_with(&format!(
            "cal.csv:{}:8: column `size`: -3 is out of range",
            HEADER + 1
        )),
        "{e}"
    );
    let e = err(&network(&["0,send,1.5,0,1e-6,0"]));
    assert!(e.contains(":8: column `size`: 1.5 is out of range"), "{e}");
}

#[test]
fn negative_duration() {
    let e = err(&network(&["0,send,1,0,-1e-6,0"]));
    assert!(
        e.starts_with(&format!(
            "cal.csv:{}:12: column `duration`: -1e-6 is out of range",
            HEADER + 1
        )),
        "{e}"
    );
}

#[test]
fn unknown_kind() {
    let e = err(&network(&["0,bcast,1,0,1e-6,0"]));
    assert!(
        e.starts_with(&format!(
            "cal.csv:{}:3: column `kind`: unknown kind `bcast`",
            HEADER + 1
        )),
        "{e}"
    );
}

#[test]
fn incomplete_file_without_end() {
    let text = network(&["0,send,1,0,1e-6,0"]).replace("# end: 1\n", "");
    let e = err(&text);
    assert!(
        e.starts_with(&format!("cal.csv:{}:1: incomplete file: no `# end", HEADER + 2)),
        "{e}"
    );
}

#[test]
fn end_count_disagrees() {
    let text = network(&["0,send,1,0,1e-6,0"]).replace("# end: 1", "# end: 2");
    let e = err(&text);
    assert!(
        e.starts_with(&format!(
            "cal.csv:{}:1: incomplete file: `# end: 2` but the file has 1 data rows",
            HEADER + 2
        )),
        "{e}"
    );
}

#[test]
fn compute_parameters_are_checked() {
    let mut s = metadata("compute", "node-7", 7, 1e-9, 2e-8);
    s.push_str("seq,core,kernel,p0,p1,p2,start,duration\n0,0,dgemm,4,4,,0,1e-6\n# end: 1\n");
    let e = err(&s);
    assert!(
        e.starts_with(&format!(
            "cal.csv:{}:15: column `p2`: empty, but dgemm takes 3",
            HEADER + 1
        )),
        "{e}"
    );
    let s2 = s.replace("dgemm,4,4,,", "dgemv,4,4,4,");
    assert!(
        err(&s2).contains(":15: column `p2`: `4` given, but dgemv takes only 2"),
        "{}",
        err(&s2)
    );
    let s3 = s.replace("dgemm,4,4,,", "dgemmm,4,4,4,");
    assert!(err(&s3).contains(&format!(
        "cal.csv:{}:5: column `kernel`: unknown kernel `dgemmm`",
        HEADER + 1
    )));
}

#[test]
fn no_data_for_a_kernel() {
    let mut s = metadata("compute", "node-7", 7, 1e-9, 2e-8);
    s.push_str("seq,core,kernel,p0,p1,p2,start,duration\n");
    for i in 0..5 {
        s.push_str(&format!("{i},0,daxpy,{},,,0,1e-6\n", 100 + i));
    }
    s.push_str("# end: 5\n");
    let f = parse(&s, "few.csv", 0).unwrap();
    let e = crate::compute::fit_compute(&[f], &|_, _| 0, &Default::default())
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with(&format!(
            "few.csv:{}:5: no data for kernel `daxpy`: 5 calls",
            HEADER + 1
        )),
        "{e}"
    );
}

#[test]
fn no_data_for_a_network_kind() {
    let text = network(&[
        "0,pingpong,1,0,1e-6,0",
        "1,pingpong,2,0,1e-6,0",
        "2,send,3,0,1e-6,0",
    ]);
    let f = parse(&text, "net.csv", 0).unwrap();
    let e = crate::network::fit_network(&[f], &Default::default())
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with(&format!(
            "net.csv:{}:3: no data for network kind `pingpong`: 2 distinct sizes",
            HEADER + 1
        )),
        "{e}"
    );
}

#[test]
fn iprobe_arrived_rows_are_kept_apart_with_their_outcome() {
    let f = parse(
        &network(&[
            "0,iprobe_arrived_missed,0,0.0,2e-7,1",
            "1,send,10,1e-5,2.5e-7,0",
            "2,iprobe_arrived_found,0,2e-5,3e-7,0",
            "3,iprobe_arrived_missed,0,3e-5,1.9e-7,0",
        ]),
        "probe.csv",
        0,
    )
    .unwrap();
    let Table::Network(rows) = &f.table else { panic!() };
    assert_eq!(rows.len(), 1, "the probe rows are no fitted kind");
    assert_eq!(
        f.probe_arrived,
        vec![
            ProbeArrived {
                found: false,
                duration: 2e-7,
                warmup: true
            },
            ProbeArrived {
                found: true,
                duration: 3e-7,
                warmup: false
            },
            ProbeArrived {
                found: false,
                duration: 1.9e-7,
                warmup: false
            },
        ]
    );
    // An unknown probe outcome is an unknown kind, named with the line.
    let err = parse(&network(&["0,iprobe_arrived_maybe,0,0.0,2e-7,0"]), "bad.csv", 0).unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("iprobe_arrived_maybe") && text.contains("iprobe_arrived_found"),
        "{text}"
    );
}
