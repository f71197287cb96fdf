//! Unit tests of the network model: SMPI chunk rule at, below and above every
//! boundary; SMPI string parsing and its errors; overhead costs.

use super::*;

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * b.abs().max(1e-300)
}

/// SMPI default lat-factor chunks, ascending: (boundary, value).
const LAT: [(f64, f64); 9] = [
    (0.0, 2.01467),
    (257.0, 1.95341),
    (732.0, 1.9503),
    (1426.0, 1.61075),
    (3484.0, 1.88101),
    (5776.0, 2.18796),
    (9376.0, 2.59299),
    (15424.0, 3.48845),
    (65472.0, 11.6436),
];
const BW: [(f64, f64); 9] = [
    (0.0, 0.812084),
    (257.0, 0.338112),
    (732.0, 0.341987),
    (1426.0, 0.608902),
    (3484.0, 0.77493),
    (5776.0, 1.08739),
    (9376.0, 0.58729),
    (15424.0, 0.697866),
    (65472.0, 0.940694),
];

#[test]
fn smpi_default_breakpoints_at_below_above() {
    let m = NetworkModel::smpi_default();
    for (table, f) in [(&LAT, &m.lat_factor), (&BW, &m.bw_factor)] {
        for (i, &(b, v)) in table.iter().enumerate() {
            // At the boundary and just below: the previous chunk (or the default 1.0).
            let prev = if i == 0 { 1.0 } else { table[i - 1].1 };
            assert_eq!(f.value(b), prev, "at {b}");
            if b > 0.0 {
                assert_eq!(f.value(b - 0.5), prev, "just below {b}");
            }
            // Just above: this chunk.
            assert_eq!(f.value(b + 0.5), v, "just above {b}");
            assert_eq!(f.value(b + 1.0), v, "one byte above {b}");
        }
        assert_eq!(f.value(1e12), table[8].1);
    }
    // The digest's summary: 1 < S <= 257 B → lat×2.01467, bw×0.812084.
    assert_eq!(m.lat_factor.value(100.0), 2.01467);
    assert_eq!(m.bw_factor.value(100.0), 0.812084);
    assert_eq!(m.os.cost(1e6), 0.0);
    assert!(m.noise.is_none());
}

#[test]
fn size_zero_gets_default() {
    let f = PiecewiseFactor::parse_smpi("0:5;10:7").unwrap();
    assert_eq!(f.value(0.0), 1.0);
    assert_eq!(f.value(1e-9), 5.0);
    assert_eq!(f.value(10.0), 5.0);
    assert_eq!(f.value(10.000001), 7.0);
    let f = PiecewiseFactor::parse_smpi("100:5").unwrap();
    assert_eq!(f.value(50.0), 1.0);
    assert_eq!(f.value(100.0), 1.0);
    assert_eq!(f.value(101.0), 5.0);
}

#[test]
fn single_number_is_constant_everywhere() {
    let f = PiecewiseFactor::parse_smpi("0.97").unwrap();
    for s in [0.0, 1.0, 1e9] {
        assert_eq!(f.value(s), 0.97);
    }
    assert_eq!(f, PiecewiseFactor::constant(0.97));
    let o = Overhead::parse_smpi(" 2e-6 ").unwrap();
    assert_eq!(o.cost(0.0), 2e-6);
    assert_eq!(o.cost(1e6), 2e-6);
}

#[test]
fn chunk_order_does_not_matter() {
    let a = PiecewiseFactor::parse_smpi(SMPI_DEFAULT_BW_FACTOR).unwrap();
    let asc: Vec<String> = BW.iter().map(|(b, v)| format!("{b}:{v}")).collect();
    let b = PiecewiseFactor::parse_smpi(&asc.join(";")).unwrap();
    assert_eq!(a, b);
    assert_eq!(a, PiecewiseFactor::from_chunks(BW.to_vec()).unwrap());
}

#[test]
fn cm02_is_identity() {
    let m = NetworkModel::cm02();
    for s in [0.0, 1.0, 1e5, 1e9] {
        assert_eq!(m.lat_factor.value(s), 1.0);
        assert_eq!(m.bw_factor.value(s), 1.0);
        assert_eq!(m.os.cost(s) + m.or.cost(s) + m.ois.cost(s), 0.0);
    }
    assert_eq!(NetworkModel::default(), m);
}

#[test]
fn overhead_cost_offset_plus_per_byte() {
    let o = Overhead::parse_smpi("0:1e-6:1e-9;100:2e-6:0;1000:3us:1ns").unwrap();
    // At or below the first boundary: the first chunk (SMPI), not 0.
    assert_eq!(o.cost(0.0), 1e-6);
    let late = Overhead::parse_smpi("64:1e-6:1e-9;100:2e-6:0").unwrap();
    assert!(close(late.cost(10.0), 1e-6 + 10.0 * 1e-9));
    assert!(close(o.cost(50.0), 1e-6 + 50.0 * 1e-9));
    assert!(close(o.cost(100.0), 1e-6 + 100.0 * 1e-9));
    assert_eq!(o.cost(101.0), 2e-6);
    assert_eq!(o.cost(1000.0), 2e-6);
    assert!(close(o.cost(2000.0), 3e-6 + 2000.0 * 1e-9));
    // SimGrid's default: extra values ignored → zero.
    assert_eq!(Overhead::parse_smpi("0:0:0:0:0").unwrap().cost(1e6), 0.0);
    // A chunk with only an offset has per_byte 0.
    assert_eq!(Overhead::parse_smpi("0:5e-7").unwrap().cost(1e6), 5e-7);
    assert_eq!(Overhead::zero().cost(123.0), 0.0);
}

#[test]
fn trailing_semicolons_and_spaces_are_accepted() {
    let a = PiecewiseFactor::parse_smpi(" 0 : 2 ; 10:3 ;").unwrap();
    assert_eq!(
        a,
        PiecewiseFactor::from_chunks(vec![(0.0, 2.0), (10.0, 3.0)]).unwrap()
    );
}

fn err(s: &str) -> String {
    PiecewiseFactor::parse_smpi(s).unwrap_err().to_string()
}

#[test]
fn bad_factor_strings() {
    assert_eq!(
        err("abc"),
        "chunk 0 (`abc`): expected a number or `boundary:value;...` chunks"
    );
    assert_eq!(
        err(""),
        "chunk 0 (``): expected a number or `boundary:value;...` chunks"
    );
    assert_eq!(err(";"), "chunk 0 (`;`): no chunk");
    assert_eq!(err("0:1;10:x"), "chunk 2 (`10:x`): value 1 `x` is not a number");
    assert_eq!(
        err("0:1;-5:2"),
        "chunk 2 (`-5:2`): boundary `-5` is not a non-negative integer byte count"
    );
    assert_eq!(
        err("1.5:2"),
        "chunk 1 (`1.5:2`): boundary `1.5` is not a non-negative integer byte count"
    );
    assert_eq!(
        err("0:1;10"),
        "chunk 2 (`10`): expected 1 value after the boundary, found 0"
    );
    assert_eq!(
        err("0:1;10:2;10:3"),
        "chunk 0 (`10`): boundary appears twice (overlapping chunks)"
    );
    assert_eq!(err("0:inf"), "chunk 1 (`0:inf`): value 1 `inf` is not a number");
    assert_eq!(
        Overhead::parse_smpi("0:1e-6:x").unwrap_err().to_string(),
        "chunk 1 (`0:1e-6:x`): value 2 `x` is not a number"
    );
}

#[test]
fn from_chunks_rejects_negative_boundaries() {
    let e = PiecewiseFactor::from_chunks(vec![(-1.0, 2.0)])
        .unwrap_err()
        .to_string();
    assert_eq!(e, "chunk 1 (`-1`): boundary must be a finite size >= 0 (bytes)");
}

#[test]
fn network_noise_per_range() {
    let m = Mixture::normal(1e-6, 0.0).unwrap();
    let n = NetworkNoise::from_chunks(vec![(0.0, None), (1000.0, Some(m))]).unwrap();
    let mut rng = NoiseRng::new(1, 2);
    assert!(!n.is_none());
    assert_eq!(n.sample(500.0, &mut rng), 0.0);
    assert_eq!(n.sample(1000.0, &mut rng), 0.0);
    assert_eq!(n.sample(1001.0, &mut rng), 1e-6);
    assert!(n.law(10.0).is_none());
}

#[test]
fn display_is_smpi_syntax_and_round_trips() {
    let m = NetworkModel::smpi_default();
    assert_eq!(
        m.lat_factor.to_string(),
        "0:2.01467;257:1.95341;732:1.9503;1426:1.61075;3484:1.88101;5776:2.18796;9376:2.59299;15424:3.48845;65472:11.6436"
    );
    assert_eq!(
        PiecewiseFactor::parse_smpi(&m.bw_factor.to_string()).unwrap(),
        m.bw_factor
    );
    assert_eq!(m.os.to_string(), "0");
    assert_eq!(PiecewiseFactor::constant(0.97).to_string(), "0.97");
    let o = Overhead::parse_smpi("8133:0:0;0:2.9654918472829634e-07:9.636195922971908e-11").unwrap();
    assert_eq!(
        o.to_string(),
        "0:0.00000029654918472829634:0.00000000009636195922971908;8133:0:0"
    );
    assert_eq!(Overhead::parse_smpi(&o.to_string()).unwrap(), o);
}

/// SimGrid's `FactorSet::operator()(size)`, transcribed as the obvious loop.
fn reference(chunks: &[(f64, f64)], default: f64, size: f64) -> f64 {
    let mut sorted = chunks.to_vec();
    sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
    for (i, (b, _)) in sorted.iter().enumerate() {
        if size <= *b {
            return if i == 0 { default } else { sorted[i - 1].1 };
        }
    }
    sorted.last().map_or(default, |c| c.1)
}

proptest::proptest! {
    /// The fast lookup (branch-free count up to 16 chunks, binary search beyond)
    /// agrees with SimGrid's loop, for 0 to 40 chunks, at random sizes and at every
    /// boundary ± 1.
    #[test]
    fn lookup_matches_simgrid_loop(
        bounds in proptest::collection::btree_set(0u32..100_000, 0..40),
        values in proptest::collection::vec(0.01f64..100.0, 40),
        sizes in proptest::collection::vec(0.0f64..120_000.0, 20),
    ) {
        let chunks: Vec<(f64, f64)> = bounds.iter().zip(&values).map(|(b, v)| (f64::from(*b), *v)).collect();
        let f = PiecewiseFactor::from_chunks(chunks.clone()).unwrap();
        let probes = chunks.iter().flat_map(|(b, _)| [*b - 1.0, *b, *b + 1.0]).chain(sizes);
        for s in probes {
            proptest::prop_assert_eq!(f.value(s), reference(&chunks, 1.0, s), "size {}", s);
        }
        // Round trip through SMPI syntax.
        proptest::prop_assert_eq!(&PiecewiseFactor::parse_smpi(&f.to_string()).unwrap(), &f);
    }
}

#[test]
fn dahu_breakpoints_at_below_above() {
    let set = crate::ModelSet::load(std::path::Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/dahu.toml"
    )))
    .unwrap();
    let m = set.network.unwrap();
    let bw = [
        0.4709912642540426,
        0.6770561715947873,
        0.7091971477925826,
        0.7033449540683548,
        0.9867951082730284,
    ];
    let lat = [
        1.1347371681807956,
        29.84698135078078,
        30.274775156187765,
        64.63917831305292,
        129.24904864614737,
    ];
    for (i, b) in [0.0, 8133.0, 15831.0, 33956.0, 63305.0].into_iter().enumerate() {
        let (bw_prev, lat_prev) = if i == 0 {
            (1.0, 1.0)
        } else {
            (bw[i - 1], lat[i - 1])
        };
        assert_eq!(m.bw_factor.value(b), bw_prev, "at {b}");
        assert_eq!(m.lat_factor.value(b), lat_prev, "at {b}");
        if b > 0.0 {
            assert_eq!(m.bw_factor.value(b - 1.0), bw_prev, "below {b}");
        }
        assert_eq!(m.bw_factor.value(b + 1.0), bw[i], "above {b}");
        assert_eq!(m.lat_factor.value(b + 1.0), lat[i], "above {b}");
    }
    // ois per-byte term in the second chunk.
    assert_eq!(
        m.ois.cost(10_000.0),
        3.601990790153314e-07 + 10_000.0 * 1.2449128895712003e-10
    );
}
