//! Generated fixes run on a real server: a hand-made captured-like scenario directory per
//! shape (schema and data, the captured script written as the capture writes it — its
//! statements replaced by `Fixes::baseline_body` — and a scenario.toml whose variants,
//! parameters, setup and checks come from `capture::fixes`), run as a ladder. The baseline and
//! every fix pass the invariant checks; a deliberately broken copy of each fix fails them.

use std::path::Path;

use hotbench_capture::fixes::{fixes, Fixes, Floor, FloorSource, Shape, VariantEntry};
use hotbench_pgserver::testing;
use hotbench_scenario::{run_ladder, source::dir_bundles, LadderOptions};

fn options(conn: hotbench_wire::Config) -> LadderOptions<'static> {
    LadderOptions {
        conn,
        params: vec![
            ("duration".into(), "1".into()),
            ("clients".into(), "4".into()),
        ],
        variants: None,
        demo: false,
        settings: hotbench_engine::RunSettings {
            jobs: Some(2),
            ..Default::default()
        },
        random_seed: 7,
        target_description: "test".into(),
        embedded: false,
        fast: false,
        command_line: Vec::new(),
        probe: None,
        sharing: &(),
        progress: false,
        keep_schema: false,
        route: None,
        live: None,
        server: None,
    }
}

fn s(v: &[&str]) -> Vec<String> {
    v.iter().map(|x| x.to_string()).collect()
}

/// Writes the scenario: schema, the captured script, the fixes, and `broken` (a copy of a
/// fix variant with its script changed by the function) as one more variant.
fn write_dir(
    dir: &Path,
    title: &str,
    schema: &str,
    shape: &Shape,
    f: &Fixes,
    broken: (&str, &dyn Fn(&str) -> String),
) {
    std::fs::write(dir.join("schema.sql"), schema).unwrap();
    let mut captured = shape.draws.join("\n");
    captured.push('\n');
    captured.push_str(
        f.baseline_body
            .get(&shape.script)
            .cloned()
            .unwrap_or_else(|| shape.statements.join(";\n") + ";\n")
            .as_str(),
    );
    std::fs::write(dir.join(&shape.script), captured).unwrap();
    for file in &f.files {
        std::fs::write(dir.join(&file.name), &file.text).unwrap();
    }
    let (of, mutate) = broken;
    let fix = f
        .variants
        .iter()
        .find(|v| v.name == of)
        .expect("the fix to break");
    let text = f
        .files
        .iter()
        .find(|x| x.name == fix.script)
        .unwrap()
        .text
        .clone();
    let broken_text = mutate(&text);
    assert_ne!(broken_text, text, "the breakage must change the script");
    std::fs::write(dir.join("broken.sql"), broken_text).unwrap();
    let mut variants: Vec<VariantEntry> = f.variants.clone();
    variants.push(VariantEntry {
        name: "broken".into(),
        about: "a fix with its safeguard removed".into(),
        script: "broken.sql".into(),
        ..fix.clone()
    });
    #[derive(serde::Serialize)]
    struct Doc<'a> {
        variants: &'a [VariantEntry],
    }
    let mut toml_text = format!(
        "title = {title:?}\ndemonstrates = \"generated fixes\"\nclients = 4\nduration = 1\nsetup = {:?}\nchecks = {:?}\n",
        std::iter::once("schema.sql".to_string()).chain(f.setup.iter().cloned()).collect::<Vec<_>>(),
        f.checks
    );
    for p in &f.params {
        toml_text.push_str(&format!(
            "\n[params.{}]\n{}",
            p.name,
            toml::to_string(p).unwrap()
        ));
    }
    toml_text.push_str(&format!(
        "\n[[variants]]\nname = \"captured\"\nabout = \"as captured\"\nbaseline = true\nscript = {:?}\n\n",
        shape.script
    ));
    toml_text.push_str(
        &toml::to_string(&Doc {
            variants: &variants,
        })
        .unwrap(),
    );
    std::fs::write(dir.join("scenario.toml"), toml_text).unwrap();
}

/// Runs the ladder of `dir`: (variant, failed check names) of every variant.
fn ladder(dir: &Path, db: &str) -> Vec<(String, Vec<String>)> {
    let pg = testing::shared();
    let db = pg
        .create_database(&format!("{db}_{}", std::process::id()))
        .expect("database");
    let conn = hotbench_wire::Config::parse(&db.socket_conninfo()).expect("conninfo");
    let scn = hotbench_scenario::load(dir_bundles(dir).expect("bundle").remove(0))
        .expect("the generated scenario loads");
    let mut log = Vec::new();
    let l = run_ladder(&scn, &options(conn), &mut log, &mut |_| {})
        .unwrap_or_else(|e| panic!("ladder: {e}\n{}", String::from_utf8_lossy(&log)));
    l.variants
        .iter()
        .map(|v| {
            assert!(!v.checks.is_empty(), "{}: no checks ran", v.name);
            let committed = v.record.as_ref().map_or(0, |r| r.totals.counters.cnt);
            assert!(
                committed > 0,
                "{}: nothing committed\n{}",
                v.name,
                String::from_utf8_lossy(&log)
            );
            (
                v.name.clone(),
                v.checks
                    .iter()
                    .filter(|c| !c.ok)
                    .map(|c| format!("{}: {}", c.name, c.detail))
                    .collect(),
            )
        })
        .collect()
}

fn assert_only_broken_fails(results: &[(String, Vec<String>)], want_fixes: usize) {
    assert_eq!(results.len(), want_fixes + 2, "{results:#?}");
    for (name, failed) in results {
        if name == "broken" {
            assert!(
                !failed.is_empty(),
                "the broken fix passed its checks: {results:#?}"
            );
        } else {
            assert!(failed.is_empty(), "{name} failed: {failed:?}");
        }
    }
}

#[test]
fn read_check_write_fix_keeps_the_floor_and_a_broken_one_does_not() {
    let tmp = tempfile::tempdir().unwrap();
    // No CHECK constraint: the floor is the observed minimum, so only the statements keep it.
    let schema = "create table acct (id int primary key, balance int not null);
insert into acct select g, 40 from generate_series(1, 3) g;
create table ledger (id int not null, amount int not null);";
    let shape = Shape {
        name: "pay".into(),
        script: "pay.sql".into(),
        draws: s(&["\\set id random(1, 3)", "\\set amount random(1, 9)"]),
        statements: s(&[
            "begin",
            "select balance from acct where id = :id for update",
            "update acct set balance = balance - :amount where id = :id",
            "insert into ledger (id, amount) values (:id, :amount)",
            "commit",
        ]),
        floors: vec![Floor {
            relation: "acct".into(),
            column: "balance".into(),
            strict: false,
            value: "0".into(),
            source: FloorSource::ObservedMinimum,
        }],
        ..Shape::default()
    };
    let f = fixes(&shape);
    assert_eq!(f.variants.len(), 1, "{:?}", f.notes);
    // The captured app checks in the client, as the lab's lock_then_update.sql does.
    let mut captured = shape.clone();
    captured.statements.clear();
    write_dir(
        tmp.path(),
        "rcw",
        schema,
        &shape,
        &f,
        ("pay-update-returning", &|t: &str| {
            t.replace(" and (balance - :amount) >= 0", "")
        }),
    );
    std::fs::write(
        tmp.path().join("pay.sql"),
        "\\set id random(1, 3)\n\\set amount random(1, 9)\nbegin;\nselect balance from acct where id = :id for update\n\\gset\n\\if :balance >= :amount\nupdate acct set balance = balance - :amount where id = :id;\ninsert into ledger (id, amount) values (:id, :amount);\n\\endif\ncommit;\n",
    )
    .unwrap();
    assert_only_broken_fails(&ladder(tmp.path(), "fix_rcw"), 1);
}

#[test]
fn claim_fixes_take_each_row_once_and_a_broken_one_does_not() {
    let tmp = tempfile::tempdir().unwrap();
    let schema =
        "create table \"Job Queue\" (id bigint primary key, state text not null, payload text);
insert into \"Job Queue\" select g, 'new', md5(g::text) from generate_series(1, 100000) g;";
    let shape = Shape {
        name: "consume".into(),
        script: "consume.sql".into(),
        statements: s(&[
            "begin",
            "select id, payload from \"Job Queue\" where state = 'new' order by id limit 1 for update",
            "update \"Job Queue\" set state = 'done' where id = :id",
            "commit",
        ]),
        claimed: [("id".to_string(), "id".to_string())].into(),
        ..Shape::default()
    };
    let f = fixes(&shape);
    assert_eq!(f.variants.len(), 2, "{:?}", f.notes);
    // Broken: the claim no longer marks its row done, so the next claim takes it again.
    write_dir(
        tmp.path(),
        "claim",
        schema,
        &shape,
        &f,
        ("consume-skip-locked", &|t: &str| {
            t.replace(
                "update \"Job Queue\" set state = 'done' where id = :id;\n",
                "",
            )
        }),
    );
    assert_only_broken_fails(&ladder(tmp.path(), "fix_claim"), 2);
}

#[test]
fn sharded_counter_counts_every_increment_and_a_broken_one_does_not() {
    let tmp = tempfile::tempdir().unwrap();
    let schema =
        "create table \"Post\" (id int primary key, \"View Count\" bigint not null default 0);
insert into \"Post\" (id) select g from generate_series(1, 5) g;";
    let shape = Shape {
        name: "view".into(),
        script: "view.sql".into(),
        draws: s(&["\\set post random(1, 5)", "\\set d random(1, 3)"]),
        statements: s(&[
            "update \"Post\" set \"View Count\" = \"View Count\" + :d where id = :post",
        ]),
        ..Shape::default()
    };
    let f = fixes(&shape);
    assert_eq!(f.variants.len(), 1, "{:?}", f.notes);
    // Broken: each increment logged twice over.
    write_dir(
        tmp.path(),
        "counter",
        schema,
        &shape,
        &f,
        ("view-sharded", &|t: &str| {
            t.replace("(:d)::numeric", "(2 * :d)::numeric")
        }),
    );
    assert_only_broken_fails(&ladder(tmp.path(), "fix_counter"), 1);
}
