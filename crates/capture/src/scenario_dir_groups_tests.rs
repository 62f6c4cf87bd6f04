//! kombu's twin in the manifest and scripts: every variant keeps the client groups, the
//! consumers do the work, and the claim's logging script keeps its gaps in place.

use super::*;

/// kombu's capture through its pool: producers and consumers. The captured variant and
/// each fix keep the groups (the fix replaces the claim in the consumers' scripts only),
/// and the scenario loads with the consumers as its work group.
#[test]
fn the_client_groups_stay_in_every_variant_and_the_consumers_do_the_work() {
    use hotbench_scenario::source::dir_bundles;
    let group = |name: &str, script: &str, clients: u32| ClientGroup {
        name: name.into(),
        scripts: vec![script.into()],
        clients,
        sized_by: "busy".into(),
        ..Default::default()
    };
    let groups = vec![
        (vec![0], group("producers", "shape_01.sql", 3)),
        (vec![1], group("consumers", "shape_02.sql", 9)),
    ];
    let specs = || {
        vec![
            "shape_01.sql@751".to_string(),
            "shape_02.sql@249".to_string(),
        ]
    };
    let captured = variant(
        "captured",
        "as captured",
        true,
        &grouped(&groups, specs()),
        false,
        &[],
        &[],
    );
    assert!(
        captured.contains("groups = [{ name = \"producers\", scripts = [\"shape_01.sql@751\"], clients = 3 }, { name = \"consumers\", scripts = [\"shape_02.sql@249\"], clients = 9 }]"),
        "{captured}"
    );
    let fixed = vec![
        "shape_01.sql@751".to_string(),
        "shape_02_skip_locked.sql@249".to_string(),
    ];
    let fix = variant(
        "shape_02-skip-locked",
        "skip",
        false,
        &grouped(&groups, fixed),
        false,
        &[],
        &[],
    );
    // Without groups: one weighted list, as before.
    assert!(
        variant("x", "y", false, &grouped(&[], specs()), false, &[], &[])
            .contains("scripts = [\"shape_01.sql@751\", \"shape_02.sql@249\"]")
    );
    let tmp = tempfile::tempdir().expect("tempdir");
    for f in ["shape_01.sql", "shape_02.sql", "shape_02_skip_locked.sql"] {
        std::fs::write(tmp.path().join(f), "select 1;\n").expect("write");
    }
    std::fs::write(
        tmp.path().join("scenario.toml"),
        format!("title = \"kombu\"\ndemonstrates = \"groups\"\nclients = 12\nwork_group = \"consumers\"\n{captured}{fix}"),
    )
    .expect("write");
    let scn = hotbench_scenario::load(dir_bundles(tmp.path()).expect("bundle").remove(0))
        .unwrap_or_else(|e| panic!("the scenario loads: {e}"));
    assert_eq!(scn.manifest.work_group.as_deref(), Some("consumers"));
    for v in &scn.manifest.variants {
        let g: Vec<(&str, Vec<&str>)> = v
            .groups
            .iter()
            .map(|g| {
                (
                    g.name.as_str(),
                    g.scripts.iter().map(String::as_str).collect(),
                )
            })
            .collect();
        let claim = if v.baseline {
            "shape_02.sql@249"
        } else {
            "shape_02_skip_locked.sql@249"
        };
        assert_eq!(
            g,
            [
                ("producers", vec!["shape_01.sql@751"]),
                ("consumers", vec![claim])
            ],
            "{}",
            v.name
        );
    }
}

/// The baseline's claim, logged through a CTE with its UPDATE under `\if
/// :hotbench_claimed`, was written with all 9.9 ms of captured think time slept before
/// BEGIN: the consumer held its claimed row for round trips only, and the twin's consumers
/// hardly queued. Each gap now goes before the same statement.
#[test]
fn the_logged_claim_keeps_each_captured_gap_before_its_statement() {
    let statements = [
        "BEGIN",
        "SELECT q FROM kombu_queue LIMIT 1",
        "SELECT id FROM m ORDER BY t LIMIT 1 FOR UPDATE",
        "UPDATE m SET visible = false WHERE id = :id",
        "COMMIT",
    ];
    let w = Written::for_test(
        "-- shape_02.sql\n",
        "{0}\\sleep 1000 us\n{1}\\sleep 3400 us\n{2}\\sleep 4500 us\n{3}\\sleep 1000 us\n{4}",
        &[],
        &statements,
    );
    let fix = "BEGIN;\nSELECT q FROM kombu_queue LIMIT 1;\nwith hotbench_claim as (\nSELECT id FROM m ORDER BY t LIMIT 1 FOR UPDATE\n)\nselect count(*) as hotbench_claimed from hotbench_claim\n\\gset\n\\if :hotbench_claimed\nUPDATE m SET visible = false WHERE id = :id;\n\\endif\nCOMMIT;\n";
    let s = splice(&w, "logged", fix);
    assert!(
        s.contains("\\if :hotbench_claimed\n\\sleep 4500 us\nUPDATE m"),
        "{s}"
    );
    assert!(!s.contains("slept once before its statements"), "{s}");
    assert_eq!(s.matches("\\sleep ").count(), 4, "{s}");
}
