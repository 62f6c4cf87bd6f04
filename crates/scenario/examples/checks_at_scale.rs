//! `bench/checks-at-scale`: every shipped scenario set up as each of its variants is, its
//! work tables filled as an hour-long run on a big server would leave them (a million rows
//! by default, 4,000 keys where a ceiling uses them; the queue's table also holds a million
//! dead rows kept by an old snapshot, as under `xmin_holder=on`), then each monitor, the
//! work count, the finish and every check run and timed. Prints a markdown table: rows in
//! the work tables and milliseconds per statement, and the plan of any statement over 2 s.
//!
//! Usage: checks_at_scale CONNINFO [--rows N] [--keys N] [--scenarios a,b]

#[path = "../tests/support/scale.rs"]
mod scale;

use std::time::Instant;

use hotbench_scenario::db;
use hotbench_scenario::source::builtin_bundles;
use hotbench_wire::Connection;

struct Args {
    conninfo: String,
    rows: u64,
    keys: u64,
    scenarios: Option<Vec<String>>,
}

fn parse_args() -> Result<Args, String> {
    let mut it = std::env::args().skip(1);
    let mut a = Args {
        conninfo: String::new(),
        rows: 1_000_000,
        keys: 4000,
        scenarios: None,
    };
    while let Some(x) = it.next() {
        let mut value = |name: &str| it.next().ok_or(format!("{name} needs a value"));
        match x.as_str() {
            "--rows" => {
                a.rows = value("--rows")?
                    .parse()
                    .map_err(|e| format!("--rows: {e}"))?
            }
            "--keys" => {
                a.keys = value("--keys")?
                    .parse()
                    .map_err(|e| format!("--keys: {e}"))?
            }
            "--scenarios" => {
                a.scenarios = Some(value("--scenarios")?.split(',').map(String::from).collect())
            }
            _ if a.conninfo.is_empty() && !x.starts_with("--") => a.conninfo = x,
            _ => return Err(format!("unexpected argument {x}")),
        }
    }
    if a.conninfo.is_empty() {
        return Err(
            "usage: checks_at_scale CONNINFO [--rows N] [--keys N] [--scenarios a,b]".into(),
        );
    }
    Ok(a)
}

fn main() {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("checks_at_scale: {e}");
            std::process::exit(1);
        }
    };
    if let Err(e) = run(&args) {
        eprintln!("checks_at_scale: {e}");
        std::process::exit(2);
    }
}

fn run(args: &Args) -> Result<(), String> {
    let cfg = hotbench_wire::Config::parse(&args.conninfo).map_err(|e| e.to_string())?;
    println!("| scenario / setup | statement | work rows | ms |");
    println!("|---|---|---:|---:|");
    let mut worst = (0.0f64, String::new());
    for bundle in builtin_bundles() {
        if args
            .scenarios
            .as_ref()
            .is_some_and(|s| !s.contains(&bundle.name))
        {
            continue;
        }
        let scn = hotbench_scenario::load(bundle).map_err(|e| e.to_string())?;
        let schema = format!("scale_{}", scn.name().replace('-', "_"));
        let conn_cfg = db::with_settings(&cfg, &[("search_path".into(), schema.clone())])
            .map_err(|e| e.to_string())?;
        let mut conn = db::connect(&conn_cfg).map_err(|e| e.to_string())?;
        let keys = args.keys.to_string();
        let user: Vec<(String, String)> = ["customers", "posts"]
            .into_iter()
            .filter(|k| scn.manifest.params.contains_key(*k))
            .map(|k| (k.to_string(), keys.clone()))
            .collect();
        for s in scale::setups(&scn, &user)? {
            let what = format!("{} / {}", scn.name(), s.label);
            one_setup(
                &mut conn, &conn_cfg, &schema, &scn, &s, args.rows, &what, &mut worst,
            )?;
        }
        scale::exec(&mut conn, &format!("drop schema {schema} cascade"))?;
        conn.close();
    }
    println!();
    println!("slowest: {:.0} ms ({})", worst.0, worst.1);
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn one_setup(
    conn: &mut Connection,
    conn_cfg: &hotbench_wire::Config,
    schema: &str,
    scn: &hotbench_scenario::Scenario,
    s: &scale::Setup,
    rows: u64,
    what: &str,
    worst: &mut (f64, String),
) -> Result<(), String> {
    let mut slowest_setup = (0.0f64, String::new());
    let mut last = Instant::now();
    let mut last_label = String::new();
    let t0 = Instant::now();
    // Each statement is timed from the previous one's start (the callback runs before it).
    scale::set_up(conn, schema, scn, s, &mut |_, label, _| {
        let ms = last.elapsed().as_secs_f64() * 1000.0;
        if !last_label.is_empty() && ms > slowest_setup.0 {
            slowest_setup = (ms, last_label.clone());
        }
        last = Instant::now();
        last_label = label.to_string();
        Ok(())
    })?;
    let ms = last.elapsed().as_secs_f64() * 1000.0;
    if ms > slowest_setup.0 {
        slowest_setup = (ms, last_label);
    }
    let setup_ms = t0.elapsed().as_secs_f64() * 1000.0;
    println!(
        "| {what} | setup (all; slowest {} {:.0} ms) | | {setup_ms:.0} |",
        slowest_setup.1, slowest_setup.0
    );
    // An old snapshot, as under xmin_holder=on: the queue's deleted jobs stay as dead rows.
    let mut holder = db::connect(conn_cfg).map_err(|e| e.to_string())?;
    scale::exec(
        &mut holder,
        "begin isolation level repeatable read; select 1",
    )?;
    let t = Instant::now();
    let mut tables = scale::seed(conn, scn, s, rows)?;
    if scn.name() == "queue" {
        let backlog = s.params.values.get("backlog").cloned().unwrap_or_default();
        scale::exec(
            conn,
            &format!(
                "insert into job_queue (shard, payload)
                 select g % 16, md5(g::text) from generate_series(1, {rows}) as g;
                 delete from job_queue where id > {backlog}"
            ),
        )?;
        tables.push("job_queue");
    }
    let seed_ms = t.elapsed().as_secs_f64() * 1000.0;
    let sizes = scale::table_sizes(conn, schema)?;
    let work_rows: f64 = tables.iter().filter_map(|t| sizes.get(*t)).sum();
    let dead = if scn.name() == "queue" {
        format!(" + {rows} dead in job_queue")
    } else {
        String::new()
    };
    println!(
        "| {what} | seed ({}{dead}) | {work_rows:.0} | {seed_ms:.0} |",
        tables.join(", ")
    );
    for st in scale::statements(scn, s)? {
        if !st.on {
            continue;
        }
        let t = Instant::now();
        conn.simple_query(&st.sql)
            .map_err(|e| format!("{what}: {}: {e}", st.label))?;
        let ms = t.elapsed().as_secs_f64() * 1000.0;
        println!(
            "| {what} | {} {} | {work_rows:.0} | {ms:.1} |",
            st.kind.name(),
            st.label
        );
        let label = format!("{what}: {} {}", st.kind.name(), st.label);
        if ms > worst.0 {
            *worst = (ms, label.clone());
        }
        if ms > 2000.0 && scale::explainable(&st.sql) {
            let plan = scale::explain(conn, &st.sql)?;
            eprintln!("over 2 s: {label}\n{plan:#}");
        }
    }
    scale::exec(&mut holder, "rollback")?;
    holder.close();
    Ok(())
}
