//! Matched probes (`apps/mprobe.c`): MPI_Mprobe/MPI_Mrecv deliver the data,
//! a probed message cannot be taken by a later receive, MPI_PROC_NULL gives
//! MPI_MESSAGE_NO_PROC, and a probed receive costs what a receive matched
//! at that moment costs.
//!
//! Timing, on two hosts joined by one link of bandwidth B and latency L under
//! `network/model:CM02` and `smpi/simulate-computation:no`: the probe finds
//! the message once the sender has posted it, and the transfer starts when
//! MPI_Mrecv matches it (SMPI starts a send's communication when its receive
//! is posted, small detached sends included), so the app's
//!
//! ```text
//! recv_time = L + (S + 16)/B + wtime      (16 bytes of envelope, one MPI_Wtime cost)
//! ```

use e2e_tests::{build_app, field_f64, fields, Smpirun};

const BANDWIDTH: f64 = 1e9;
const LATENCY: f64 = 1e-5;
const ENVELOPE: f64 = 16.0;
/// Default `smpi/wtime`.
const WTIME: f64 = 1e-8;

fn two_host_platform() -> std::path::PathBuf {
    e2e_tests::two_host_platform("1GBps", "10us", "SPLITDUPLEX")
}

#[test]
fn probed_receives_get_the_data_and_take_latency_plus_size_over_bandwidth() {
    // Detached (< 64 KiB) and rendezvous sizes.
    let sizes: [u64; 6] = [0, 1, 1000, 65535, 65536, 1 << 20];
    let out = Smpirun::new(build_app("mprobe"))
        .platform(two_host_platform())
        .np(2)
        .cfg("network/model:CM02")
        .cfg("smpi/simulate-computation:no")
        .args(sizes.iter().map(|s| s.to_string()))
        .run();
    out.assert_ok();
    let rows: Vec<_> = out.lines_starting_with("mprobe ").collect();
    assert_eq!(rows.len(), sizes.len(), "{}", out.describe());
    for (row, &size) in rows.iter().zip(&sizes) {
        let f = fields(row);
        assert_eq!(f["size"], size.to_string(), "{row}");
        assert_eq!(f["count"], size.to_string(), "{row}");
        assert_eq!((f["source"], f["tag"]), ("0", "1"), "{row}");
        let want = LATENCY + (size as f64 + ENVELOPE) / BANDWIDTH + WTIME;
        let got = field_f64(row, "recv_time");
        assert!(
            (got - want).abs() <= 1e-9 * want,
            "size {size}: probed receive took {got:e} s, expected {want:e} s\n{}",
            out.describe()
        );
    }
    // The probed message went to MPI_Imrecv, not to the MPI_Recv posted after the probe.
    let order = out.lines_starting_with("order ").next().expect("an order line");
    assert_eq!(field_f64(order, "first"), 11.0, "{order}");
    assert_eq!(field_f64(order, "second"), 22.0, "{order}");
}
