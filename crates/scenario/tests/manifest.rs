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
        let s = load(b).unwrap_or_else(|e| panic!("{name}: {e}"));
        // Every hot-row scenario says how to remove its contention.
        if ["counters", "daily-limit", "tpcb-hotspot", "ycsb"].contains(&name.as_str()) {
            let c = hotbench_scenario::ceiling::ceiling_variant(&s.manifest)
                .unwrap_or_else(|| panic!("{name}: no [ceiling]"));
            assert_eq!(c.name, "ceiling");
            assert!(!c.baseline && c.about.contains("not ranked"), "{}", c.about);
        }
    }
}

#[test]
fn a_ceiling_names_a_variant_and_known_parameters() {
    let with = |c: &str| format!("{GOOD}\n[params.n]\ndefault = 4\n\n[ceiling]\n{c}\n");
    let s = load(bundle(
        &with("variant = \"a\"\nparams = { n = 4000 }"),
        &[("a.sql", "select 1;")],
    ))
    .expect("loads");
    let c = hotbench_scenario::ceiling::ceiling_variant(&s.manifest).expect("ceiling");
    assert_eq!(c.params["n"].text(), "4000");
    assert_eq!(c.about, "a's statements with n=4000 (not ranked)");
    let user = vec![("n".to_string(), "7".to_string())];
    let p = hotbench_scenario::ceiling::ceiling_params(&s.manifest, &user);
    assert_eq!(p.last(), Some(&("n".to_string(), "4000".to_string())));
    let e = error(&with("variant = \"zz\""), &[("a.sql", "")]);
    assert!(e.contains("[ceiling]: no variant named \"zz\""), "{e}");
    let e = error(
        &with("variant = \"a\"\nparams = { m = 1 }"),
        &[("a.sql", "")],
    );
    assert!(e.contains("[ceiling]: unknown parameter \"m\""), "{e}");
    let e = error(&GOOD.replace("\"a\"", "\"ceiling\""), &[("a.sql", "")]);
    assert!(e.contains("\"ceiling\" is reserved"), "{e}");
    // --variants a,ceiling runs the ceiling after a; ceiling alone measures nothing.
    let s = load(bundle(&with("variant = \"a\""), &[("a.sql", "select 1;")])).unwrap();
    let pick = |w: &[&str]| w.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    let sel = hotbench_scenario::select_variants(&s, Some(&pick(&["a", "ceiling"])), false);
    assert_eq!(sel.expect("selects").len(), 1);
    use hotbench_scenario::selection::runs_ceiling;
    assert!(runs_ceiling(&s, Some(&pick(&["a", "ceiling"])), false));
    assert!(!runs_ceiling(&s, Some(&pick(&["a"])), false));
    assert!(runs_ceiling(&s, None, false));
    assert!(!runs_ceiling(&s, None, true));
    let e = hotbench_scenario::select_variants(&s, Some(&pick(&["ceiling"])), false);
    assert!(e.is_err());
    let plain = load(bundle(GOOD, &[("a.sql", "select 1;")])).unwrap();
    assert!(hotbench_scenario::select_variants(&plain, Some(&pick(&["ceiling"])), false).is_err());
    assert!(!runs_ceiling(&plain, None, false));
}

#[test]
fn keys_are_one_variable_or_a_list_and_must_be_variable_names() {
    let one = format!("key = \"customer\"\n{GOOD}key = [\"amount\", \"day\"]\n");
    let s = load(bundle(&one, &[("a.sql", "select 1;")])).expect("loads");
    assert_eq!(s.manifest.key.names(), ["customer"]);
    assert_eq!(s.manifest.variants[0].key.names(), ["amount", "day"]);
    let g = GOOD.replace(
        "script = \"a.sql\"",
        "groups = [{ name = \"g\", script = \"a.sql\", key = \"k\" }]",
    );
    let s = load(bundle(&g, &[("a.sql", "select 1;")])).expect("loads");
    assert_eq!(s.manifest.variants[0].groups[0].key.names(), ["k"]);
    assert!(s.manifest.key.names().is_empty());
    let e = error(&format!("{GOOD}key = \"not a var\"\n"), &[("a.sql", "")]);
    assert!(
        e.starts_with("/tmp/t/scenario.toml:8:")
            && e.contains("invalid key \"not a var\": expected a script variable name"),
        "{e}"
    );
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

/// Issue 13, item 8: a comment or quote left open in a setup, check or engine-specific file
/// is reported with its file and line when the scenario loads, before anything runs.
#[test]
fn unterminated_comments_and_quotes_name_file_and_line() {
    let text = GOOD.replace(
        "title = \"t\"",
        "title = \"t\"\nsetup = [\"schema.sql\"]\nchecks = [\"checks.sql\"]",
    );
    let ok_checks = (
        "checks.sql",
        "select 'x' as name, true as ok, '' as detail;\n",
    );
    for (files, expected) in [
        (
            vec![
                (
                    "schema.sql",
                    "create table a (x int);\n/* forgot\ncreate table b (x int);\n",
                ),
                ok_checks,
            ],
            "/tmp/t/schema.sql:2: unterminated /* comment",
        ),
        (
            vec![
                ("schema.sql", "create table a (x int);\n"),
                (
                    "checks.sql",
                    "select 'x' as name,\n  true as ok,\n  'open as detail;\n",
                ),
            ],
            "/tmp/t/checks.sql:3: unterminated quoted string",
        ),
        (
            vec![
                ("schema.sql", "create table a (x int);\n"),
                (
                    "schema.yugabytedb.sql",
                    "create table a (x int);\n/* /* nested */\n",
                ),
                ok_checks,
            ],
            "/tmp/t/schema.yugabytedb.sql:2: unterminated /* comment",
        ),
    ] {
        let mut all = files.clone();
        all.push(("a.sql", "select 1;"));
        let e = error(&text, &all);
        assert_eq!(e, expected);
    }
}

/// A manifest's `FILE@W` is read by the one parser `-f` uses (`hotbench_script::parse_weight`),
/// with pgbench's words: a weight that is not a number is an error, not part of a file name.
#[test]
fn script_weights_are_parsed_as_pgbench_parses_them() {
    let with = |spec: &str| GOOD.replace("script = \"a.sql\"", &format!("script = \"{spec}\""));
    let files = [("a.sql", "select 1;"), ("a.sql@x", "select 1;")];
    let e = error(&with("a.sql@x"), &files);
    assert!(e.contains("invalid weight specification: @x"), "{e}");
    let e = error(&with("a.sql@3000000000"), &files);
    assert!(
        e.contains("weight specification out of range (0 .. 2147483647): 3000000000"),
        "{e}"
    );
    let e = error(&with("a.sql@0"), &files);
    assert!(e.contains("total script weight must not be zero"), "{e}");
    let ok = load(bundle(&with("a.sql@ 7"), &files)).expect("strtol's blanks");
    assert_eq!(ok.manifest.variants[0].script.as_deref(), Some("a.sql@ 7"));
}

/// `[[reproduces]]` names a shape once, the scenario's own variants and parameters, and what
/// a diagnosis observes.
#[test]
fn reproduced_shapes_name_variants_parameters_and_observations() {
    let m = |extra: &str| {
        format!(
            "{GOOD}\n[params.rows]\ndefault = 10\n\n[[reproduces]]\nshape = \"counter\"\n{extra}"
        )
    };
    let files = [("a.sql", "select 1;")];
    let s = load(bundle(
        &m("variants = [\"a\"]\nobserved = { hot_rows = \"rows\" }\n"),
        &files,
    ))
    .expect("loads");
    let r = &s.manifest.reproduces[0];
    assert_eq!(
        (r.shape.as_str(), &r.variants[..]),
        ("counter", &["a".to_string()][..])
    );
    assert_eq!(r.observed["hot_rows"], "rows");
    let e = error(&m("variants = [\"b\"]\n"), &files);
    assert!(
        e.contains("[[reproduces]] \"counter\": no variant named \"b\""),
        "{e}"
    );
    let e = error(&m("params = { nope = 1 }\n"), &files);
    assert!(e.contains("unknown parameter \"nope\""), "{e}");
    let e = error(&m("observed = { keys = \"rows\" }\n"), &files);
    assert!(e.contains("unknown observation \"keys\""), "{e}");
    let e = error(&m("[[reproduces]]\nshape = \"counter\"\n"), &files);
    assert!(e.contains("shape \"counter\" is listed twice"), "{e}");
}
