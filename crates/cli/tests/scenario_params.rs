//! Scenario parameters are typed (issue 13, item 6): a `--param` value with SQL pasted into
//! it is refused before anything runs (numbers, identifiers, enums), free text reaches SQL
//! only as a quoted literal, and nothing outside the scenario's schema is touched.

mod common;

use common::{command_on, database, psql, temp_dir, text};
use hotbench_pgserver::ConnInfo;

fn scenario_run(db: &ConnInfo, args: &[&str]) -> std::process::Output {
    command_on(db, &["scenario", "run"], args)
        .output()
        .expect("run hotbench")
}

fn canary_count(db: &ConnInfo) -> String {
    psql(db, "select count(*) from public.canary")
        .trim()
        .to_string()
}

#[test]
fn sql_in_typed_parameters_is_refused_before_anything_runs() {
    let db = database("param_inject");
    psql(
        &db,
        "create table public.canary (x int); insert into public.canary values (1);",
    );
    let attack = "4) as c; drop table public.canary; select (1";
    for (scenario, param) in [
        ("daily-limit", format!("customers={attack}")),
        (
            "daily-limit",
            "max_amount=10; drop table public.canary".to_string(),
        ),
        (
            "queue",
            "order=asc; drop table public.canary; --".to_string(),
        ),
        ("counters", "skew=nan".to_string()),
        ("daily-limit", "customers=-3".to_string()),
        ("ycsb", format!("synchronous_commit=off' {attack}")),
    ] {
        let o = scenario_run(&db, &[scenario, "-T", "1", "-c", "2", "--param", &param]);
        let (out, err) = text(&o);
        assert_eq!(o.status.code(), Some(1), "{param}\n{out}\n{err}");
        assert!(err.contains("invalid value"), "{param}: {err}");
        assert_eq!(canary_count(&db), "1", "{param} touched public.canary");
    }
}

#[test]
fn text_parameters_reach_sql_as_literals() {
    let db = database("param_text");
    psql(
        &db,
        "create table public.canary (x int); insert into public.canary values (1);",
    );
    let dir = temp_dir("param-text").join("labels");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("scenario.toml"),
        r#"title = "labels"
demonstrates = "a text parameter is stored exactly as given"
clients = 1
duration = 1
setup = ["schema.sql"]
checks = ["checks.sql"]

[params.label]
type = "text"
default = "plain"
help = "stored in every row"

[params.n]
default = 3
help = "rows"

[[variants]]
name = "a"
baseline = true
script = "a.sql"
"#,
    )
    .unwrap();
    std::fs::write(
        dir.join("schema.sql"),
        "create table note (label text);\n\
         insert into note select {{label}} from generate_series(1, {{n}});\n",
    )
    .unwrap();
    std::fs::write(dir.join("a.sql"), "select count(*) from note;\n").unwrap();
    std::fs::write(
        dir.join("checks.sql"),
        "select 'label stored as given' as name,\n\
         (select count(*) = {{n}} and bool_and(label = {{label}}) from note) as ok,\n\
         (select string_agg(distinct label, ',') from note) as detail;\n",
    )
    .unwrap();
    let d = dir.parent().unwrap().to_string_lossy().into_owned();
    for label in [
        "x'); drop table public.canary; --",
        r"a\'); drop table public.canary; --",
        "it's $$ fine $$ \" ;",
    ] {
        let p = format!("label={label}");
        let o = scenario_run(&db, &["labels", "--dir", &d, "--param", &p]);
        let (out, err) = text(&o);
        assert_eq!(o.status.code(), Some(0), "{label}\n{out}\n{err}");
        assert!(out.contains("✔ 1/1"), "{label}\n{out}");
        assert_eq!(canary_count(&db), "1", "{label} touched public.canary");
    }
}
