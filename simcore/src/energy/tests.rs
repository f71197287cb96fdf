use super::*;

fn host(props: &[(&str, &str)]) -> Host {
    Host {
        name: "MyHost1".into(),
        speed: 100e6,
        pstate_speeds: vec![100e6, 50e6, 20e6],
        pstate: 0,
        cores: 4,
        properties: props
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    }
}

/// A host with a fixed state, its pstates 100, 50 and 20 Mf.
struct Fixed(std::cell::Cell<HostState>);

impl Hosts for Fixed {
    fn state(&self, _host: HostId) -> HostState {
        self.0.get()
    }
    fn pstate_speed(&self, _host: HostId, pstate: usize) -> f64 {
        [100e6, 50e6, 20e6][pstate]
    }
    fn pstate_count(&self, _host: HostId) -> Option<usize> {
        Some(3)
    }
}

fn fixed(load_cores: f64) -> Fixed {
    Fixed(std::cell::Cell::new(HostState {
        on: true,
        pstate: 0,
        cores: 4,
        load: load_cores * 100e6,
    }))
}

#[test]
fn three_and_two_value_profiles() {
    let p = HostPower::from_properties(
        &host(&[
            (
                "wattage_per_state",
                "100.0:93.33333333333333:200.0, 93.0:170.0, 90.0:90.0:150.0",
            ),
            ("wattage_off", "10"),
        ]),
        Some(3),
    )
    .unwrap();
    let r = p.ranges.unwrap();
    assert_eq!(r[0], PowerRange::new(100.0, 93.33333333333333, 200.0));
    // Idle:AllCores: Epsilon is Idle.
    assert_eq!(r[1], PowerRange::new(93.0, 93.0, 170.0));
    assert_eq!(r[2].slope, 60.0);
    assert_eq!(p.watts_off, 10.0);
}

#[test]
fn no_profile_is_zero_watts_and_off_defaults_to_zero() {
    let p = HostPower::from_properties(&host(&[]), Some(1)).unwrap();
    assert_eq!(p.ranges, None);
    assert_eq!(p.watts_off, 0.0);
}

#[test]
fn malformed_properties_name_host_property_and_pstate() {
    let bad = |props: &[(&str, &str)], pstates: Option<usize>| {
        HostPower::from_properties(&host(props), pstates)
            .unwrap_err()
            .to_string()
    };
    let e = bad(&[("wattage_per_state", "100:200, 90:150")], Some(3));
    assert!(
        e.contains("host MyHost1: property wattage_per_state=")
            && e.contains("found 2 energetic profiles for 3 pstates"),
        "{e}"
    );
    let e = bad(&[("wattage_per_state", "100:120:150:200")], None);
    assert!(
        e.contains(
            "(pstate 0: \"100:120:150:200\"): it should be 'Idle:AllCores' (or 'Idle:Epsilon:AllCores')"
        ),
        "{e}"
    );
    let e = bad(&[("wattage_per_state", "100:1x0:200")], None);
    assert!(
        e.contains("invalid Epsilon value for pstate 0 on host MyHost1: \"1x0\""),
        "{e}"
    );
    let e = bad(&[("wattage_per_state", "100:120:200,90:100:")], None);
    assert!(e.contains("invalid AllCores value for pstate 1"), "{e}");
    // strtod: blanks before a number are fine, after it they are not.
    assert!(HostPower::from_properties(&host(&[("wattage_per_state", " 100: 120: 200")]), None).is_ok());
    let e = bad(&[("wattage_per_state", "100 :120:200")], None);
    assert!(e.contains("invalid Idle value for pstate 0"), "{e}");
    let e = bad(&[("wattage_off", "ten")], None);
    assert!(
        e.contains("property wattage_off=\"ten\": invalid value for property wattage_off of host MyHost1"),
        "{e}"
    );
}

#[test]
fn power_between_idle_epsilon_and_all_cores() {
    let platform = vec![host(&[(
        "wattage_per_state",
        "100:120:200, 93:115:170, 90:110:150",
    )])];
    let h = HostId(0);
    // SimGrid's table: 0 cores busy (idle) 100 W, 1 core 140 W, ..., 4 cores 200 W.
    for (cores, watts) in [
        (0.0, 100.0),
        (1.0, 140.0),
        (2.0, 160.0),
        (3.0, 180.0),
        (4.0, 200.0),
        (6.0, 200.0),
    ] {
        let view = fixed(cores);
        let (mut m, warnings) = Meter::new(&platform, 0.0, &view).unwrap();
        assert!(warnings.is_empty());
        m.update(h, 2.0, &view);
        let mut a = Access::new(&mut m, 2.0, &view);
        assert_eq!(a.consumed(h), 2.0 * watts, "{cores} cores busy");
        assert_eq!(a.current(h), watts);
    }
}

#[test]
fn each_interval_is_counted_at_its_start_pstate_and_used_hosts_are_split() {
    let mut hosts = vec![host(&[
        ("wattage_per_state", "100:120:200, 93:115:170, 90:110:150"),
        ("wattage_off", "10"),
    ])];
    hosts.push(Host {
        name: "Idle".into(),
        ..hosts[0].clone()
    });
    let platform = hosts;
    let (a, b) = (HostId(0), HostId(1));
    let view = fixed(1.0);
    let (mut m, _) = Meter::new(&platform, 0.0, &view).unwrap();
    // [0, 10]: pstate 0, one core of four: 140 W. Then pstate 1 is set (the update comes
    // after the change): the interval still counts at pstate 0.
    view.0.set(HostState {
        pstate: 1,
        ..view.0.get()
    });
    m.update(a, 10.0, &view);
    // [10, 30]: pstate 1 (50 Mf), a load of 50 Mf on 4 cores: 115 + 55/4 W.
    view.0.set(HostState {
        load: 50e6,
        ..view.0.get()
    });
    m.update(a, 30.0, &view);
    // [30, 40]: off.
    view.0.set(HostState {
        on: false,
        ..view.0.get()
    });
    m.update(a, 30.0, &view);
    m.update(a, 40.0, &view);
    let idle = fixed(0.0);
    let mut acc = Access::new(&mut m, 40.0, &idle);
    acc.update(b);
    let report = acc.report();
    let e_a = 1400.0 + 20.0 * (115.0 + 55.0 / 4.0) + 100.0;
    assert_eq!(
        report.hosts,
        vec![
            ("MyHost1".to_string(), e_a, true),
            ("Idle".to_string(), 4000.0, false)
        ]
    );
    assert_eq!(
        report.lines(),
        vec![
            format!("Total energy consumption: {:.6} Joules (used hosts: {e_a:.6} Joules; unused/idle hosts: 4000.000000)", e_a + 4000.0),
            "Energy consumption of host Idle: 4000.000000 Joules".to_string(),
            format!("Energy consumption of host MyHost1: {e_a:.6} Joules"),
        ]
    );
}

#[test]
fn pstate_accessors_answer_zero_without_profile_and_reject_unknown_pstates() {
    let platform = vec![
        host(&[("wattage_per_state", "100:120:200, 93:115:170, 90:110:150")]),
        Host {
            name: "Bare".into(),
            ..host(&[])
        },
    ];
    let view = fixed(0.0);
    let (mut m, warnings) = Meter::new(&platform, 0.0, &view).unwrap();
    assert_eq!(
        warnings,
        vec!["No energetic profiles (wattage_per_state) given for host Bare, using 0 W by default. Direct request \
              of power/energy consumption of this host will fail."]
    );
    let a = Access::new(&mut m, 0.0, &view);
    assert_eq!(a.idle_at(HostId(0), 1), Ok(93.0));
    assert_eq!(a.epsilon_at(HostId(0), 2), Ok(110.0));
    assert_eq!(a.all_cores_at(HostId(0), 0), Ok(200.0));
    assert_eq!(a.slope_at(HostId(0), 1), Ok(55.0));
    assert_eq!(a.idle_at(HostId(1), 7), Ok(0.0));
    assert!(a.has_profile(HostId(0)) && !a.has_profile(HostId(1)));
    assert_eq!(
        a.idle_at(HostId(0), 3),
        Err("host MyHost1 has no pstate 3 (its pstates are 0 to 2)".to_string())
    );
    assert!(a.slope_at(HostId(0), -1).is_err());
}
