//! The generated SQL of each fix, on shapes as a capture writes them.

use super::*;

fn s(v: &[&str]) -> Vec<String> {
    v.iter().map(|x| x.to_string()).collect()
}

pub(crate) fn payments() -> Shape {
    Shape {
        name: "shape_1".into(),
        script: "shape_1.sql".into(),
        draws: s(&["\\set customer random(1, 4)", "\\set amount random(1, 10)", "\\set remaining 100"]),
        statements: s(&[
            "begin",
            "select remaining from daily_limit where customer_id = :customer and day = current_date for update",
            "update daily_limit set remaining = :remaining, last_update = now() where customer_id = :customer and day = current_date",
            "insert into ledger (customer_id, day, amount) values (:customer, current_date, :amount)",
            "commit",
        ]),
        amounts: [("remaining".to_string(), "amount".to_string())].into(),
        floors: vec![Floor {
            relation: "daily_limit".into(),
            column: "remaining".into(),
            strict: false,
            value: "0".into(),
            source: FloorSource::Check("daily_limit_remaining_check".into()),
        }],
        ..Shape::default()
    }
}

fn file<'a>(f: &'a Fixes, name: &str) -> &'a str {
    &f.files
        .iter()
        .find(|x| x.name == name)
        .unwrap_or_else(|| {
            panic!(
                "no {name} in {:?}",
                f.files.iter().map(|x| &x.name).collect::<Vec<_>>()
            )
        })
        .text
}

pub(crate) fn queue() -> Shape {
    Shape {
        name: "shape_2".into(),
        script: "shape_2.sql".into(),
        statements: s(&[
            "BEGIN",
            "SELECT id, payload FROM \"Job Queue\" WHERE state = 'new' ORDER BY id LIMIT 1 FOR UPDATE",
            "UPDATE \"Job Queue\" SET state = 'done' WHERE id = :id",
            "COMMIT",
        ]),
        claimed: [("id".to_string(), "id".to_string())].into(),
        ..Shape::default()
    }
}

pub(crate) fn lab_queue() -> Shape {
    Shape {
        name: "consumer".into(),
        script: "consumer.sql".into(),
        statements: s(&["select take_jobs(array(select id from job_queue order by id asc limit 1 for update)) as hotbench_ok"]),
        ..Shape::default()
    }
}

pub(crate) fn views() -> Shape {
    Shape {
        name: "views".into(),
        script: "views.sql".into(),
        draws: s(&["\\set post random(1, 100)"]),
        statements: s(&[
            "begin",
            "UPDATE \"site_page\" SET \"views\" = (\"site_page\".\"views\" + 1) WHERE \"site_page\".\"id\" = :post",
            "select views from site_page where id = :post",
            "commit",
        ]),
        ..Shape::default()
    }
}

#[test]
fn read_check_write_becomes_one_update_returning_with_the_floor_in_its_where() {
    let f = fixes(&payments());
    assert_eq!(f.variants.len(), 1);
    let v = &f.variants[0];
    assert_eq!(
        (v.name.as_str(), v.script.as_str()),
        ("shape_1-update-returning", "shape_1_update_returning.sql")
    );
    let script = file(&f, "shape_1_update_returning.sql");
    assert!(
        script.contains("\\set customer random(1, 4)\n\\set amount random(1, 10)\n"),
        "{script}"
    );
    assert!(script.contains(
        "with hotbench_rcw as (\nupdate daily_limit set remaining = remaining - :amount, last_update = now() \
         where (customer_id = :customer and day = current_date) and (remaining - :amount) >= 0\n returning 1\n)\n\
         select count(*) as hotbench_ok from hotbench_rcw\n\\gset\n\\if :hotbench_ok\n\
         insert into ledger (customer_id, day, amount) values (:customer, current_date, :amount);\n\\endif\ncommit;\n"
    ), "{script}");
    assert!(!script.contains("for update"), "{script}");
    // The check, for every variant: named after its floor's source.
    assert_eq!(f.checks, ["hotbench_floor_daily_limit_remaining.sql"]);
    let check = file(&f, "hotbench_floor_daily_limit_remaining.sql");
    assert!(
        check.contains("never below 0 (CHECK constraint daily_limit_remaining_check)"),
        "{check}"
    );
    assert!(
        check.contains("from daily_limit where \"remaining\" < 0;"),
        "{check}"
    );
    assert!(f.baseline_body.is_empty());

    // An increment-form update keeps its own delta; a strict observed floor.
    let mut inc = payments();
    inc.statements[2] = "update daily_limit set remaining = remaining - :amount where day = current_date and customer_id = :customer".into();
    inc.amounts.clear();
    inc.floors[0].strict = true;
    inc.floors[0].value = "-5".into();
    inc.floors[0].source = FloorSource::ObservedMinimum;
    let f = fixes(&inc);
    // Its UPDATE is a decrement, but of a balance with a floor: not also a counter to shard.
    assert_eq!(f.variants.len(), 1, "{:?}", f.notes);
    let script = file(&f, "shape_1_update_returning.sql");
    assert!(
        script.contains("and (remaining - :amount) > -5"),
        "{script}"
    );
    assert!(file(&f, &f.checks[0]).contains("at or below -5 (the observed minimum)"));

    // No floor, or an assigned value without an amount: no variant, and a note says why.
    let mut none = payments();
    none.floors.clear();
    let f = fixes(&none);
    assert!(
        f.variants.is_empty() && f.notes.iter().any(|n| n.contains("no floor is known")),
        "{:?}",
        f.notes
    );
    let mut none = payments();
    none.amounts.clear();
    let f = fixes(&none);
    assert!(
        f.variants.is_empty() && f.notes.iter().any(|n| n.contains("no amount variable")),
        "{:?}",
        f.notes
    );
    // A different row is not a read-check-write.
    let mut other = payments();
    other.statements[2] = "update daily_limit set remaining = :remaining where customer_id = :other and day = current_date".into();
    assert!(fixes(&other).variants.is_empty());
}

#[test]
fn a_standalone_claim_gets_skip_locked_then_batches_and_every_variant_logs_its_claims() {
    let f = fixes(&queue());
    let names: Vec<&str> = f.variants.iter().map(|v| v.name.as_str()).collect();
    assert_eq!(names, ["shape_2-skip-locked", "shape_2-skip-locked-batch"]);
    assert_eq!(f.setup, ["hotbench_claims.sql"]);
    assert_eq!(f.checks, ["hotbench_claims_check.sql"]);
    assert_eq!(f.work.as_ref().map(|w| w.unit.as_str()), Some("claims"));
    let skip = file(&f, "shape_2_skip_locked.sql");
    assert!(skip.contains("ORDER BY id LIMIT 1 FOR UPDATE skip locked\n), hotbench_claim_log as (\n insert into hotbench_claims (claimed)\n select E'Job Queue:' || hotbench_claim::text from hotbench_claim\n)\n\
        select count(*) as hotbench_claimed, (array_agg(hotbench_claim.\"id\"))[1] as id from hotbench_claim\n\\gset\n\\if :hotbench_claimed\n\
        UPDATE \"Job Queue\" SET state = 'done' WHERE id = :id;\n\\endif\nCOMMIT;\n"), "{skip}");
    assert!(skip.starts_with("-- hotbench capture: the claim with SKIP LOCKED (shape shape_2, captured as shape_2.sql)\nBEGIN;\n"), "{skip}");
    let batch = file(&f, "shape_2_skip_locked_batch.sql");
    assert_eq!(batch.matches("skip locked").count(), 10);
    assert_eq!(batch.matches("\\if :hotbench_claimed").count(), 10);
    assert_eq!(batch.matches("\\endif").count(), 10);
    assert_eq!(batch.matches("COMMIT;").count(), 1);
    // The baseline: the captured claim (no SKIP LOCKED), logged the same way.
    let base = &f.baseline_body["shape_2.sql"];
    assert!(
        base.contains("LIMIT 1 FOR UPDATE\n), hotbench_claim_log"),
        "{base}"
    );
    assert!(!base.contains("skip locked"));
}

#[test]
fn a_claim_inside_a_statement_becomes_a_cte_the_statement_reads() {
    let f = fixes(&lab_queue());
    let skip = file(&f, "consumer_skip_locked.sql");
    assert!(skip.ends_with("with hotbench_claim as (\nselect id from job_queue order by id asc limit 1 for update skip locked\n), \
        hotbench_claim_log as (\n insert into hotbench_claims (claimed)\n select E'job_queue:' || hotbench_claim::text from hotbench_claim\n)\n\
        select take_jobs(array(select * from hotbench_claim)) as hotbench_ok;\n"), "{skip}");
    let batch = file(&f, "consumer_skip_locked_batch.sql");
    assert!(
        batch.contains("limit {{batch}} for update skip locked"),
        "{batch}"
    );
    assert_eq!(
        f.params
            .iter()
            .map(|p| (p.name.as_str(), p.default))
            .collect::<Vec<_>>(),
        [("batch", 10)]
    );
    // `id = (select …)` takes one row: a batch reads `in (…)`; a WITH statement keeps its own CTEs.
    let mut one = lab_queue();
    one.statements = vec!["with x as (select 1) delete from jobs where id = (select id from jobs order by id limit 1 for update) returning *".into()];
    let f = fixes(&one);
    let batch = file(&f, "consumer_skip_locked_batch.sql");
    assert!(batch.contains("with hotbench_claim as (\nselect id from jobs order by id limit {{batch}} for update skip locked\n), hotbench_claim_log"), "{batch}");
    assert!(batch.contains("),\nx as (select 1) delete from jobs where id in (select * from hotbench_claim) returning *;"), "{batch}");
}

#[test]
fn a_hot_counter_goes_to_shards_and_every_variant_logs_its_increments() {
    let f = fixes(&views());
    assert_eq!(f.variants.len(), 1);
    let v = &f.variants[0];
    assert_eq!(
        (v.name.as_str(), v.setup.as_slice()),
        (
            "views-sharded",
            &["views_sharded_setup.sql".to_string()][..]
        )
    );
    assert_eq!(f.setup, ["hotbench_counter_site_page.sql"]);
    let script = file(&f, "views_sharded.sql");
    assert!(
        script.contains("\\set hotbench_shard random(0, {{shards}} - 1)\n"),
        "{script}"
    );
    assert!(script.contains("UPDATE \"hotbench_shard_site_page\" as \"site_page\" SET \"views\" = (\"site_page\".\"views\" + 1) \
        WHERE (\"site_page\".\"id\" = :post) and hotbench_shard = :hotbench_shard\n returning 1\n)\n\
        insert into hotbench_increments (counter, delta)\nselect E'site_page.views', (1)::numeric from hotbench_inc;"), "{script}");
    let setup = file(&f, "views_sharded_setup.sql");
    assert!(
        setup.contains("generate_series(0, {{shards}} - 1) as hotbench_g"),
        "{setup}"
    );
    let check = file(&f, "hotbench_counter_site_page_check.sql");
    assert!(
        check.contains("(select sum(\"views\") from \"hotbench_shard_site_page\")"),
        "{check}"
    );
    assert!(f.baseline_body["views.sql"].contains("UPDATE \"site_page\" SET"));
    assert!(f.notes.iter().any(|n| n.contains("sees the base row only")));
    // A subtracted delta is logged negative; an alias stays the alias.
    let mut dec = views();
    dec.statements[1] =
        "update post p1_0 set view_count=(p1_0.view_count-:d) where p1_0.id=:post".into();
    let f = fixes(&dec);
    let script = file(&f, "views_sharded.sql");
    assert!(script.contains("update \"hotbench_shard_post\" p1_0 set view_count=(p1_0.view_count-:d) where (p1_0.id=:post) and hotbench_shard"), "{script}");
    assert!(
        script.contains("select E'post.view_count', -(:d)::numeric from hotbench_inc"),
        "{script}"
    );
    // Two counters incremented: the one whose rows were waited on first, wherever it stands
    // in the transaction (tpcb-like's tellers, after the accounts' UPDATE).
    let mut two = views();
    two.statements.insert(
        1,
        "update author set posts = posts + 1 where author.id = :post".into(),
    );
    two.hot = vec!["site_page".into(), "author".into()];
    let f = fixes(&two);
    assert_eq!(f.setup, ["hotbench_counter_site_page.sql"], "{:?}", f.setup);
    // Not hot: left alone.
    let mut cold = views();
    cold.hot = vec!["other".into()];
    assert!(fixes(&cold).variants.is_empty());
}

#[test]
fn identifiers_are_quoted_whatever_they_hold() {
    let rel = "Wé \"ird\" {{x}} ;--";
    // As the user's statement wrote it (the script writer guards `{{` when it writes it).
    let q = format!("\"{}\"", rel.replace('"', "\"\""));
    let shape = Shape {
        name: "odd name/ü".into(),
        script: "s.sql".into(),
        statements: vec![format!(
            "update {q} set \"N n\" = \"N n\" + 1 where \"K\" = :k"
        )],
        ..Shape::default()
    };
    let f = fixes(&shape);
    assert_eq!(f.variants.len(), 1, "{:?}", f.notes);
    let stem = crate::fixes_sql::file_stem("odd name/ü");
    assert!(stem.starts_with("odd_name__") && stem.len() > 12, "{stem}");
    let setup = file(&f, &f.setup[0]);
    // `{{` never reaches the scenario's expansion: written U&"…\007B…".
    assert!(!setup.contains("{{"), "{setup}");
    assert!(
        setup.contains("create table U&\"hotbench_shard_Wé \"\"ird\"\" \\007B\\007Bx}} ;--\""),
        "{setup}"
    );
    let script = file(&f, &f.variants[0].script);
    assert!(!script.replace("{{shards}}", "").contains("{{"), "{script}");
    // 63 bytes at most, cut on a character.
    let long = "é".repeat(40);
    let t = crate::fixes_sql::shard_table(&long);
    assert!(t.len() <= 63 && t.is_char_boundary(t.len()), "{t}");
}

#[test]
fn floors_from_check_constraints() {
    assert_eq!(
        floor_from_check("remaining", "CHECK ((remaining >= 0))"),
        Some((false, "0".into()))
    );
    assert_eq!(
        floor_from_check("balance", "CHECK ((balance > ('-100'::integer)::numeric))"),
        None
    );
    assert_eq!(
        floor_from_check("balance", "CHECK ((balance > (-100)::numeric))"),
        Some((true, "-100".into()))
    );
    assert_eq!(
        floor_from_check("My Col", "CHECK ((0 <= \"My Col\"))"),
        Some((false, "0".into()))
    );
    assert_eq!(
        floor_from_check("x", "CHECK (((x >= 0) AND (x <= 10)))"),
        None
    );
    assert_eq!(floor_from_check("x", "CHECK ((y >= 0))"), None);
    assert_eq!(floor_from_check("x", "UNIQUE (x)"), None);
}
