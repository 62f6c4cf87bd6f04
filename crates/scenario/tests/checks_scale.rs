//! Issue 24: every statement a ladder runs besides its timed run (setup, monitors, the work
//! count, finish, checks) must cost the rows it reads, never rows × keys. A check that sums
//! the ledger per customer with a correlated subquery took 148 s on the ceiling's 4,000
//! customers. Time bounds flake on a shared machine, plan shapes do not: every shipped
//! scenario is set up as each of its variants is, its work tables filled with 20,000 rows
//! and analyzed, and the plan of each statement must not scan a large table once per row of
//! another (`support::scale::plan_problems`). `bench/checks-at-scale` times the same
//! statements at a million rows.

mod support;

use std::collections::BTreeMap;

use hotbench_pgserver::testing;
use hotbench_scenario::db;
use hotbench_scenario::source::builtin_bundles;
use support::scale;

const ROWS: u64 = 20_000;

#[test]
fn no_shipped_statement_reads_a_table_once_per_key() {
    let pg = testing::shared();
    let dbase = pg
        .create_database(&format!("checks_scale_{}", std::process::id()))
        .expect("database");
    let cfg = hotbench_wire::Config::parse(&dbase.socket_conninfo()).expect("conninfo");
    let mut problems = Vec::new();
    let mut explained = 0;
    for bundle in builtin_bundles() {
        let scn = hotbench_scenario::load(bundle).expect("shipped scenario loads");
        let schema = format!("scale_{}", scn.name().replace('-', "_"));
        let conn_cfg =
            db::with_settings(&cfg, &[("search_path".into(), schema.clone())]).expect("cfg");
        let mut conn = db::connect(&conn_cfg).expect("connect");
        let user = keys_params(&scn);
        for s in scale::setups(&scn, &user).expect("setups") {
            let what = format!("{} / {}", scn.name(), s.label);
            let mut check = |conn: &mut hotbench_wire::Connection, label: &str, sql: &str| {
                if scale::explainable(sql) {
                    let sizes = scale::table_sizes(conn, &schema)?;
                    let plan = scale::explain(conn, sql).map_err(|e| format!("{label}: {e}"))?;
                    explained += 1;
                    for p in scale::plan_problems(&plan, &sizes) {
                        problems.push(format!("{what}: setup {label}: {p}"));
                    }
                }
                Ok(())
            };
            scale::set_up(&mut conn, &schema, &scn, &s, &mut check)
                .unwrap_or_else(|e| panic!("{what}: setup: {e}"));
            scale::seed(&mut conn, &scn, &s, ROWS).unwrap_or_else(|e| panic!("{what}: {e}"));
            // Planned as right after a run (no statistics on the new rows yet), then as
            // after autovacuum's analyze.
            for analyzed in [false, true] {
                if analyzed {
                    scale::exec(&mut conn, "analyze").expect("analyze");
                }
                let sizes = scale::table_sizes(&mut conn, &schema).expect("sizes");
                for st in scale::statements(&scn, &s).expect("statements") {
                    if !scale::explainable(&st.sql) {
                        continue;
                    }
                    let plan = scale::explain(&mut conn, &st.sql)
                        .unwrap_or_else(|e| panic!("{what}: {}: {e}", st.label));
                    explained += 1;
                    for p in scale::plan_problems(&plan, &sizes) {
                        let when = if analyzed { "analyzed" } else { "not analyzed" };
                        problems.push(format!(
                            "{what}: {} {} ({when}): {p}",
                            st.kind.name(),
                            st.label
                        ));
                    }
                }
            }
        }
        scale::exec(&mut conn, &format!("drop schema {schema} cascade")).expect("drop");
        conn.close();
    }
    assert!(explained > 40, "only {explained} statements explained");
    assert!(
        problems.is_empty(),
        "statements whose cost is rows × keys:\n{}",
        problems.join("\n")
    );
}

/// ycsb's table, which its setup fills row by row, stays small (the seed adds the rows); the
/// keys are each variant's own, the ceiling's 4,000 customers included.
fn keys_params(scn: &hotbench_scenario::Scenario) -> Vec<(String, String)> {
    let p = &scn.manifest.params;
    [("records", "2000")]
        .into_iter()
        .filter(|(k, _)| p.contains_key(*k))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// The detector sees the check that took 148 s: daily-limit's ledger summed per customer by
/// a correlated subquery, with no index on `ledger(customer_id, day)`.
#[test]
fn a_correlated_sum_over_the_ledger_is_caught() {
    let pg = testing::shared();
    let dbase = pg
        .create_database(&format!("checks_scale_bad_{}", std::process::id()))
        .expect("database");
    let cfg = hotbench_wire::Config::parse(&dbase.socket_conninfo()).expect("conninfo");
    let mut conn = db::connect(&cfg).expect("connect");
    scale::exec(
        &mut conn,
        "create table daily_limit (customer_id bigint, day date, initial bigint, remaining bigint,
                                   primary key (customer_id, day));
         create table ledger (customer_id bigint, day date, amount bigint);
         insert into daily_limit select c, current_date, 100, 100 from generate_series(1, 4000) c;
         insert into ledger select 1 + g % 4000, current_date, 1 from generate_series(1, 20000) g;
         analyze",
    )
    .expect("tables");
    let sizes: BTreeMap<String, f64> = scale::table_sizes(&mut conn, "public").expect("sizes");
    let old = "select d.customer_id,
                      coalesce((select sum(l.amount) from ledger l
                                where l.customer_id = d.customer_id and l.day = d.day), 0)
               from daily_limit d";
    let plan = scale::explain(&mut conn, old).expect("explain");
    let found = scale::plan_problems(&plan, &sizes);
    assert!(
        found.iter().any(|p| p.contains("Seq Scan on ledger")),
        "{found:?}"
    );
    // The same sum as one grouped join reads the ledger once.
    let set_based = "select d.customer_id, coalesce(l.s, 0) from daily_limit d
                     left join (select customer_id, day, sum(amount) s from ledger group by 1, 2) l
                     using (customer_id, day)";
    let plan = scale::explain(&mut conn, set_based).expect("explain");
    assert_eq!(scale::plan_problems(&plan, &sizes), Vec::<String>::new());
    conn.close();
}
