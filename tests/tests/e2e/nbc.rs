//! Non-blocking collectives (`apps/nbc.c`): non-commutative reductions
//! combine in rank order, a rank blocked in MPI_Recv keeps its outstanding
//! collectives moving, arguments MPI ignores (in-place send count, receive
//! count at a non-root) are not checked, and the intercommunicator forms move
//! data between the groups. The app's global `err` also checks that a
//! program's globals named like libc functions stay its own.

use e2e_tests::{build_app, field_f64, platform, Smpirun};

#[test]
fn nonblocking_collectives_on_intra_and_intercommunicators() {
    for np in [3, 4, 7] {
        let out = Smpirun::new(build_app("nbc"))
            .platform(platform("cluster_4.toml"))
            .np(np)
            .cfg("smpi/simulate-computation:no")
            .run();
        out.assert_ok();
        let line = out.lines_starting_with("nbc ").next().expect("an nbc line");
        assert_eq!(field_f64(line, "np"), np as f64, "{}", out.describe());
        assert!(field_f64(line, "checks") > 10.0, "{}", out.describe());
    }
}
