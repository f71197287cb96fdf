//! Unit tests of `--log` parsing, threshold inheritance and the line format.

use super::*;

fn settings(flags: &[&str]) -> Settings {
    let mut s = Settings::default();
    for f in flags {
        s.add_flag(f).unwrap();
    }
    s
}

#[test]
fn thresholds_are_inherited_from_the_nearest_ancestor_with_a_setting() {
    // app < root, app_sub < app, other < root.
    let s = settings(&["app.thres:debug", "root.threshold:error"]);
    assert_eq!(s.threshold(&["app_sub", "app"]), Priority::Debug);
    assert_eq!(s.threshold(&["app"]), Priority::Debug);
    assert_eq!(s.threshold(&["other"]), Priority::Error);
    // A category's own setting wins over its parent's, whatever the order.
    let s = settings(&["app_sub.thres:critical", "app.thres:trace"]);
    assert_eq!(s.threshold(&["app_sub", "app"]), Priority::Critical);
    // Nothing set: root's default, info.
    assert_eq!(Settings::default().threshold(&["x"]), Priority::Info);
}

#[test]
fn the_last_setting_of_a_category_wins_and_one_flag_may_hold_several() {
    let s = settings(&["app.thres:debug app.t:WARNING", "no_loc"]);
    assert_eq!(s.threshold(&["app"]), Priority::Warning);
    assert!(s.no_loc);
}

#[test]
fn bad_settings_are_errors_naming_the_flag() {
    let err = |f: &str| Settings::default().add_flag(f).unwrap_err();
    let e = err("app.thres:warn");
    assert!(
        e.starts_with("--log=app.thres:warn:") && e.contains("unknown priority 'warn'"),
        "{e}"
    );
    assert!(err("app:debug").contains("invalid setting 'app:debug'"));
    assert!(err("app.foo:debug").contains("unknown setting 'foo'"));
    assert!(err("app.fmt:%m").contains("not supported"));
    assert!(err("").contains("empty"));
}

#[test]
fn simgrid_categories_are_known_and_notes_say_their_messages_are_not_produced() {
    let s = settings(&[
        "smpi.thres:warning",
        "smpi_request.thres:debug",
        "xbt_cfg.thres:critical",
    ]);
    let notes = s.notes();
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(notes[0].contains("smpi_request") && notes[0].contains("-request-log"));
    assert!(is_simgrid_category("xbt_cfg") && is_simgrid_category("root"));
    assert!(!is_simgrid_category("app"));
    let used: BTreeSet<String> = ["app".to_string()].into();
    let s = settings(&["app.thres:debug", "apq.thres:debug", "smpi.thres:debug"]);
    assert_eq!(
        s.unused(&used),
        vec!["--log=apq.thres:debug: no category named 'apq' was used in this run".to_string()]
    );
}

#[test]
fn lines_follow_simgrids_default_layout() {
    let o = Some(Origin {
        host: "alice",
        rank: 0,
    });
    assert_eq!(
        format_line(o, 0.000122, "app", Priority::Info, Some(("a.c", 3)), "hi"),
        "[alice:0:(1) 0.000122] [app/INFO] hi\n"
    );
    assert_eq!(
        format_line(o, 1.5, "app", Priority::Warning, Some(("/x/a.c", 20)), "w"),
        "[alice:0:(1) 1.500000] /x/a.c:20: [app/WARNING] w\n"
    );
    assert_eq!(
        format_line(None, 0.0, "root", Priority::Critical, None, "c"),
        "[0.000000] [root/CRITICAL] c\n"
    );
}
