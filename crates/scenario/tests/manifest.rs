//! Manifest loading without a server: built-in scenarios load, and broken manifests give
//! one clear error naming the file and the line.

use std::collections::BTreeMap;

use hotbench_scenario::source::{builtin_bundles, Bundle};
use hotbench_scenario::{load, ScenarioError};

fn bundle(manifest: &str, files: &[(&str, &str)]) -> Bundle {
    let mut map = BTreeMap::new();
    map.insert("scenario.toml".to_string(), manifest.to_string());
    for (k, v) in files {
        map.insert(k.to_string(), v.to_string());
    }
    Bundle {
        name: "t".into(),
        location: "/tmp/t".into(),
        builtin: false,
        files: map,
    }
}

fn error(manifest: &str, files: &[(&str, &str)]) -> String {
    match load(bundle(manifest, files)) {
        Ok(_) => panic!("expected an error"),
        Err(e) => {
            assert!(matches!(e, ScenarioError::Manifest { .. }), "{e:?}");
            e.to_string()
        }
    }
}

const GOOD: &str = r#"title = "t"
demonstrates = "d"

[[variants]]
name = "a"
baseline = true
script = "a.sql"
"#;

#[test]
fn builtin_scenarios_load() {
    let names: Vec<String> = builtin_bundles().into_iter().map(|b| b.name).collect();
    for want in ["counters", "daily-limit", "queue", "tpcb-hotspot", "ycsb"] {
        assert!(
            names.iter().any(|n| n == want),
            "{want} missing from {names:?}"
        );
    }
    for b in builtin_bundles() {
        let name = b.name.clone();
        load(b).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}

#[test]
fn good_manifest_loads() {
    let s = load(bundle(GOOD, &[("a.sql", "select 1;")])).expect("loads");
    assert_eq!(s.baseline().map(|v| v.name.as_str()), Some("a"));
}

#[test]
fn bad_toml_names_file_and_line() {
    let text = GOOD.replace("name = \"a\"", "name = \"a");
    let e = error(&text, &[("a.sql", "")]);
    assert!(e.starts_with("/tmp/t/scenario.toml:5:"), "{e}");
}

#[test]
fn unknown_variant_key_names_file_and_line() {
    let text = GOOD.replace(
        "script = \"a.sql\"",
        "script = \"a.sql\"\nisolaton = \"serializable\"",
    );
    let e = error(&text, &[("a.sql", "")]);
    assert!(e.starts_with("/tmp/t/scenario.toml:8:"), "{e}");
    assert!(e.contains("unknown field `isolaton`"), "{e}");
}

#[test]
fn missing_file_names_file_and_line() {
    let e = error(GOOD, &[]);
    assert_eq!(
        e,
        "/tmp/t/scenario.toml:7: file \"a.sql\" not found in /tmp/t"
    );
}

#[test]
fn exactly_one_baseline() {
    let text = GOOD.replace("baseline = true\n", "");
    let e = error(&text, &[("a.sql", "")]);
    assert!(
        e.contains("exactly one variant must have baseline = true"),
        "{e}"
    );
}
