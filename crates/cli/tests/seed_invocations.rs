//! Every pgbench command line from the source documents (`../shared/seeds/`) works with
//! `hotbench run` in place of `pgbench`, against the harness server, with the seed's schema
//! set up first. Durations and counts are shortened; flags are otherwise as written.
//! The scripts here are our own equivalents of the seeds' (same commands and meta-commands).

mod common;

use common::*;

fn ok(o: &std::process::Output) -> String {
    let (out, err) = text(o);
    assert!(
        o.status.success(),
        "exit {:?}\n{out}\n{err}",
        o.status.code()
    );
    out
}

#[test]
fn daily_limit_select_for_update_extended_100_clients() {
    let db = database("seed_daily");
    psql(
        &db,
        "create table daily_limit (customer_id bigint, day date, daily_limit bigint check (daily_limit > 0),
           last_update timestamp default now(), primary key (customer_id, day));
         insert into daily_limit (customer_id, day, daily_limit)
           select c, current_date + d, 1e9 from generate_series(-5, 5) d, generate_series(1, 4) c;
         create or replace procedure run(c bigint, a int) as $$
           update daily_limit set daily_limit = daily_limit - a, last_update = now()
           where customer_id = c and day = now()::date $$ language sql;",
    );
    let dir = temp_dir("seed_daily");
    let fu = write_script(
        &dir,
        "daily_limit_pgbench.sql",
        "\\set customer random(1,4)\n\\set amount random(1,10)\nbegin transaction;\n\
         select daily_limit from daily_limit\nwhere customer_id=:customer and day=now()::date for update\n\\gset\n\
         \\set daily_limit :daily_limit - :amount\n\
         update daily_limit\nset daily_limit=:daily_limit, last_update=now()\nwhere customer_id=:customer and day=now()::date;\ncommit;\n",
    );
    let out = ok(&run(
        &db,
        &[
            "-nf",
            fu.to_str().unwrap(),
            "-M",
            "extended",
            "-T",
            "2",
            "-c",
            "100",
        ],
    ));
    assert!(
        out.contains("query mode: extended\nnumber of clients: 100\n"),
        "{out}"
    );
    let ur = write_script(
        &dir,
        "update_returning.sql",
        "\\set customer random(1,4)\n\\set amount random(1,10)\nbegin transaction;\n\
         update daily_limit set daily_limit=daily_limit-:amount, last_update=now() where customer_id=:customer and day=now()::date returning daily_limit-:amount as daily_limit\n\\gset\ncommit;\n",
    );
    ok(&run(
        &db,
        &[
            "-nf",
            ur.to_str().unwrap(),
            "-M",
            "extended",
            "-T",
            "2",
            "-c",
            "100",
        ],
    ));
    let call = write_script(
        &dir,
        "call.sql",
        "\\set customer random(1,4)\n\\set amount random(1,10)\ncall run(:customer,:amount);\n",
    );
    ok(&run(
        &db,
        &["-nf", call.to_str().unwrap(), "-T", "2", "-c", "100"],
    ));
}

#[test]
fn queue_enqueue_rate_and_dequeue_progress() {
    let db = database("seed_queue");
    psql(
        &db,
        "create table job_queue (id bigint generated always as identity, account_id int, payload text,
           primary key (account_id, id));
         insert into job_queue(account_id) select 0 from generate_series(1, 5000);",
    );
    let dir = temp_dir("seed_queue");
    let enq = write_script(
        &dir,
        "enqueue.sql",
        "insert into job_queue(account_id) values(0);\n",
    );
    let deq = write_script(
        &dir,
        "dequeue.sql",
        "begin transaction;\nselect account_id, id, payload, 1 as found from job_queue \n where account_id=0 \n for update skip locked limit 1\n\\gset\n\
         delete from job_queue \n where account_id=:account_id and id=:id;\ncommit;\n",
    );
    let out = ok(&run(
        &db,
        &["--rate=100", "-nf", enq.to_str().unwrap(), "-T", "2"],
    ));
    assert!(out.contains("rate limit schedule lag: avg"), "{out}");
    let out = ok(&run(
        &db,
        &[
            "--client=10",
            "-nf",
            deq.to_str().unwrap(),
            "-T",
            "2",
            "-P",
            "1",
        ],
    ));
    assert!(out.contains("number of clients: 10"), "{out}");
    ok(&run(
        &db,
        &[
            "--rate=100",
            "--client=10",
            "-nf",
            deq.to_str().unwrap(),
            "-T",
            "2",
            "-P",
            "1",
        ],
    ));
}

#[test]
fn tpcb_hotspot_invocations() {
    let db = database("seed_tpcb");
    ok(&run(&db, &["-i"]));
    let out = ok(&run(&db, &["-nrT2", "-c10", "-N"]));
    assert!(out.contains("<builtin: simple update>"), "{out}");
    ok(&run(&db, &["-nrT2", "-c10"]));
    let out = ok(&run(&db, &["-nrT2", "-c10", "--max-tries=10"]));
    assert!(out.contains("maximum number of tries: 10"), "{out}");
    assert!(
        out.contains("statement latencies in milliseconds, failures and retries:"),
        "{out}"
    );
}

#[test]
fn order_queue_advisory_lock_extended_fixed_count() {
    let db = database("seed_orders");
    psql(
        &db,
        "create table t_order_q (id serial8 primary key, order_id uuid unique, cts timestamp not null);
         create table t_order_u (id serial8 primary key, order_id uuid unique, cts timestamp not null,
           uts timestamp not null, status int not null);
         insert into t_order_q (order_id, cts) select gen_random_uuid(), clock_timestamp() from generate_series(1, 2000);",
    );
    let dir = temp_dir("seed_orders");
    let t = write_script(
        &dir,
        "t.sql",
        "with tmp as\n(delete from t_order_q where ctid = (select ctid from t_order_q where pg_try_advisory_xact_lock(id) order by id limit 1) returning order_id, cts)\n\
         insert into t_order_u (order_id,cts,uts,status) select tmp.order_id, tmp.cts, now(), 1 from tmp;\n",
    );
    let json_path = dir.join("t.json");
    // The seed's invocation, with each script and count.
    let invocation = |script: &std::path::Path, t: &str, extra: &[&str]| {
        let script = script.to_str().unwrap().to_string();
        let mut args = vec!["-M", "extended", "-f", &script, "-n", "-r", "-P", "1"];
        args.extend(["-c", "16", "-j", "2", "-t", t]);
        args.extend(extra);
        ok(&run(&db, &args))
    };
    let out = invocation(
        &t,
        "50",
        &["--goodput", "rows", "--json", json_path.to_str().unwrap()],
    );
    assert!(
        out.contains("number of transactions actually processed: 800/800"),
        "{out}"
    );
    // Under concurrency some claims find their row already gone and move nothing: those
    // transactions commit but are not goodput. Goodput must equal the rows really moved.
    let moved: u64 = psql(&db, "select count(*) from t_order_u")
        .trim()
        .parse()
        .unwrap();
    let v = json(&json_path);
    assert_eq!(
        v["totals"]["counters"]["goodput"].as_u64(),
        Some(moved),
        "{out}"
    );
    assert!(moved > 0 && moved <= 800);
    let t1 = write_script(
        &dir,
        "t1.sql",
        "begin;\nselect id as vid from t_order_q order by id for update skip locked limit 1 \\gset\n\
         with tmp as\n(delete from t_order_q where id = :vid returning order_id, cts)\n\
         insert into t_order_u (order_id,cts,uts,status) select tmp.order_id, tmp.cts, now(), 1 from tmp;\nend;\n",
    );
    let out = invocation(&t1, "20", &[]);
    assert!(out.contains("320/320"), "{out}");
    // SKIP LOCKED always finds a free row while the backlog lasts: every claim moves one.
    let after: u64 = psql(&db, "select count(*) from t_order_u")
        .trim()
        .parse()
        .unwrap();
    assert_eq!(after, moved + 320);
}
