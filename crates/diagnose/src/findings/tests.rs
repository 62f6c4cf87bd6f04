//! The findings on hand-built samples: each pattern is named, with its scenario and command,
//! and a quiet sample finds nothing.

use hotbench_results::diagnosis_record::FindingKind;
use hotbench_results::probe_record::{Blocker, DatabaseDelta, ProbeRecord, WaitShare, XminHolder};

use super::{diagnose, Input};
use crate::testdata::{record, stmt, table};

fn run(p: &ProbeRecord) -> Vec<hotbench_results::diagnosis_record::Finding> {
    diagnose(&Input {
        probe: p,
        duration_s: 3.0,
        server_cores: Some(2),
        functions: &Default::default(),
        catalog: crate::testdata::catalog(),
    })
    .0
}

#[test]
fn read_lock_then_write_on_a_few_customers_is_a_daily_limit_hot_row() {
    let p = record(
        &[
            stmt("select remaining from daily_limit where customer_id = ? and day = current_date for update", 60, 55, 16),
            stmt("update daily_limit set remaining = ?, last_update = now() where customer_id = ? and day = current_date", 8, 0, 12),
            stmt("insert into ledger (customer_id, day, amount) values (?, current_date, ?)", 4, 0, 10),
        ],
        &[
            ("daily_limit", "customer_id=1, day=2025-06-01", 40),
            ("daily_limit", "customer_id=2, day=2025-06-01", 10),
            ("daily_limit", "customer_id=3, day=2025-06-01", 9),
        ],
    );
    let f = run(&p);
    let h = &f[0];
    assert_eq!(h.kind, FindingKind::HotRow, "{f:?}");
    assert_eq!(h.relation.as_deref(), Some("daily_limit"));
    assert!(h.keys[0].key.starts_with("customer_id=1,"), "{:?}", h.keys);
    assert_eq!(h.scenario.as_deref(), Some("daily-limit"));
    let cmd = h.command.as_deref().unwrap_or("");
    assert!(
        cmd.starts_with("hotbench scenario run daily-limit -c 16 "),
        "{cmd}"
    );
    assert!(
        cmd.contains("--param customers=3") && cmd.ends_with("--rtt 1.3ms"),
        "{cmd}"
    );
    assert_eq!(h.statements[0].role, "waiting");
    assert!(h.statements[0].query.contains("for update"));
    assert!(h.share > 0.9 && h.share <= 1.0, "{}", h.share);
    assert_eq!(f.len(), 1, "{f:?}");
}

/// As a pg_monitor role without SELECT on the table the rows are named by ctid, and every
/// update makes a row a new ctid: 24 row versions of a table of 8 rows. The hot-row count
/// is still suggested (it was dropped from the command), bounded by the table's live rows
/// and said to be a guess.
#[test]
fn rows_named_by_ctid_still_suggest_a_hot_row_count() {
    let hot: Vec<(String, u64)> = (0..24).map(|i| (format!("ctid=(0,{i})"), 3)).collect();
    let hot: Vec<(&str, &str, u64)> = hot
        .iter()
        .map(|(k, n)| ("daily_limit", k.as_str(), *n))
        .collect();
    let stmts = [
        stmt(
            "select remaining from daily_limit where customer_id = ? for update",
            60,
            55,
            16,
        ),
        stmt(
            "update daily_limit set remaining = ? where customer_id = ?",
            8,
            0,
            12,
        ),
    ];
    let mut p = record(&stmts, &hot);
    let mut t = table("daily_limit", 0, 500, 0, (10, 40));
    t.live_tuples_end = 8;
    p.tables.push(t);
    let f = run(&p);
    let cmd = f[0].command.as_deref().unwrap_or("");
    assert!(cmd.contains("--param customers=8 "), "{cmd}");
    let ev = |what: &str| {
        f[0].evidence
            .iter()
            .find(|e| e.what == what)
            .map(|e| e.value.clone())
            .unwrap_or_default()
    };
    assert!(
        ev("hot rows").starts_with("at most 8, a guess"),
        "{:?}",
        f[0].evidence
    );
    assert_eq!(ev("distinct row versions (ctids) waited on"), "24");
    // Without the table's counters: the row versions, an upper bound.
    p.tables.clear();
    let cmd = run(&p)[0].command.clone().unwrap_or_default();
    assert!(cmd.contains("--param customers=24 "), "{cmd}");
}

/// On the server's host (Unix socket or loopback) the time between a transaction's
/// statements is the client's think time: not replayed as --rtt on every round trip.
#[test]
fn think_time_of_local_clients_is_not_suggested_as_rtt() {
    let mut p = record(
        &[
            stmt(
                "select remaining from daily_limit where customer_id = ? for update",
                60,
                55,
                16,
            ),
            stmt(
                "update daily_limit set remaining = ? where customer_id = ?",
                8,
                0,
                12,
            ),
        ],
        &[
            ("daily_limit", "customer_id=1", 40),
            ("daily_limit", "customer_id=2", 10),
            ("daily_limit", "customer_id=3", 9),
        ],
    );
    if let Some(s) = p.sessions.as_mut() {
        s.remote_client_samples = 0;
        s.in_transaction_gap_ms = Some(5.1);
    }
    let f = run(&p);
    let cmd = f[0].command.as_deref().unwrap_or("");
    assert!(
        !cmd.contains("--rtt") && cmd.ends_with("--think 5.1ms"),
        "{cmd}"
    );
    assert!(
        f[0].evidence
            .iter()
            .any(|e| e.value.contains("5.10 ms of client think time")),
        "{:?}",
        f[0].evidence
    );
}

#[test]
fn increments_are_counters_and_aggregates_with_history_are_tpcb() {
    let p = record(
        &[stmt(
            "update post set views_count = views_count + ? where id = ?",
            50,
            45,
            8,
        )],
        &[
            ("post", "id=1", 20),
            ("post", "id=2", 15),
            ("post", "id=3", 10),
            ("post", "id=4", 5),
        ],
    );
    let f = run(&p);
    assert_eq!(
        (f[0].kind, f[0].scenario.as_deref()),
        (FindingKind::HotRow, Some("counters"))
    );
    assert!(f[0]
        .command
        .as_deref()
        .unwrap_or("")
        .contains("--param posts=4"));

    let p = record(
        &[
            stmt("update pgbench_accounts set abalance = abalance + ? where aid = ?", 10, 0, 16),
            stmt("update pgbench_tellers set tbalance = tbalance + ? where tid = ?", 20, 10, 16),
            stmt("update pgbench_branches set bbalance = bbalance + ? where bid = ?", 50, 45, 16),
            stmt("insert into pgbench_history (tid, bid, aid, delta, mtime) values (?, ?, ?, ?, current_timestamp)", 2, 0, 10),
        ],
        &[("pgbench_branches", "bid=1", 40), ("pgbench_tellers", "tid=3", 4)],
    );
    let f = run(&p);
    assert_eq!(f[0].relation.as_deref(), Some("pgbench_branches"), "{f:?}");
    assert_eq!(f[0].scenario.as_deref(), Some("tpcb-hotspot"));
    // The aggregate tables' sizes were not read: no scale guessed from the hot rows.
    let cmd = f[0].command.as_deref().unwrap_or("");
    assert!(!cmd.contains("--param scale"), "{cmd}");
    assert!(f[0].advice.contains("bucketed"), "{}", f[0].advice);
    assert!(!f[0].advice.contains("RETURNING"), "{}", f[0].advice);
}

/// pgbench at scale 1 waits on the ten tellers' rows: the scale is the branches' row count
/// (pg_stat_user_tables' n_live_tup), not the ten rows waited on.
#[test]
fn tpcb_scale_is_the_branches_row_count_not_the_tellers_waited_on() {
    for scale in [1i64, 3] {
        let mut p = record(
            &[
                stmt("UPDATE pgbench_accounts SET abalance = abalance + $1 WHERE aid = $2", 10, 0, 8),
                stmt("UPDATE pgbench_tellers SET tbalance = tbalance + $1 WHERE tid = $2", 50, 45, 8),
                stmt("UPDATE pgbench_branches SET bbalance = bbalance + $1 WHERE bid = $2", 20, 10, 8),
                stmt("INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES ($1, $2, $3, $4, CURRENT_TIMESTAMP)", 2, 0, 8),
            ],
            &(1..=10)
                .map(|t| ("pgbench_tellers", ["tid=1", "tid=2", "tid=3", "tid=4", "tid=5", "tid=6", "tid=7", "tid=8", "tid=9", "tid=10"][t - 1], 5))
                .collect::<Vec<_>>(),
        );
        for (name, live) in [
            ("pgbench_accounts", 100_000 * scale),
            ("pgbench_tellers", 10 * scale),
            ("pgbench_branches", scale),
        ] {
            let mut t = table(name, 0, 500, 0, (0, 10));
            t.live_tuples_end = live;
            p.tables.push(t);
        }
        let f = run(&p);
        assert_eq!(f[0].relation.as_deref(), Some("pgbench_tellers"), "{f:?}");
        let cmd = f[0].command.as_deref().unwrap_or("");
        assert!(cmd.contains(&format!("--param scale={scale}")), "{cmd}");
    }
}

#[test]
fn for_update_claims_with_deletes_are_a_queue_not_a_hot_row() {
    let mut p = record(
        &[
            stmt("select take_jobs(array( select id from job_queue order by id asc limit ? for update )) as hotbench_ok", 70, 60, 8),
            stmt("select greatest(?, ? - (select case when is_called then last_value else ? end from job_queue_id_seq))", 3, 0, 2),
        ],
        &[("hb_queue.job_queue", "id=101", 10), ("hb_queue.job_queue", "id=102", 10), ("hb_queue.job_queue", "id=103", 9)],
    );
    p.tables = vec![table("hb_queue.job_queue", 500, 0, 480, (0, 300))];
    let f = run(&p);
    assert_eq!(f.len(), 1, "{f:?}");
    let q = &f[0];
    assert_eq!(
        (q.kind, q.relation.as_deref()),
        (FindingKind::Queue, Some("hb_queue.job_queue"))
    );
    assert_eq!(q.variants[..2], ["for-update", "skip-locked"]);
    assert!(q
        .command
        .as_deref()
        .unwrap_or("")
        .starts_with("hotbench scenario run queue -c 8 --variants for-update,"));
    assert!(q.title.contains("FOR UPDATE"), "{}", q.title);
}

#[test]
fn a_quiet_skip_locked_queue_is_only_a_check() {
    let mut p = record(
        &[stmt("delete from jobs where id = (select id from jobs order by id limit ? for update skip locked) returning id", 40, 0, 4)],
        &[],
    );
    p.tables = vec![table("jobs", 100, 0, 100, (50, 40))];
    let (f, checks) = diagnose(&Input {
        probe: &p,
        duration_s: 3.0,
        server_cores: None,
        functions: &Default::default(),
        catalog: crate::testdata::catalog(),
    });
    assert!(f.is_empty(), "{f:?}");
    assert!(
        checks
            .iter()
            .any(|c| c.what == "queue table" && c.value.contains("SKIP LOCKED")),
        "{checks:?}"
    );
}

#[test]
fn a_snapshot_held_at_every_read_while_the_queue_bloats_names_its_holder() {
    let mut p = record(
        &[stmt("delete from jobs where id = (select id from jobs order by id limit ? for update skip locked)", 40, 0, 4)],
        &[],
    );
    p.tables = vec![table("jobs", 900, 0, 900, (10, 910))];
    let s = p.sessions.as_mut().expect("sessions");
    s.xmin_holders = vec![
        XminHolder {
            kind: "session".into(),
            id: "4242".into(),
            application_name: "report".into(),
            state: "idle in transaction".into(),
            xmin: "777".into(),
            xmin_age: 1900,
            xact_age_s: Some(12.0),
            query: "select count(*) from jobs".into(),
            seen: 10,
        },
        XminHolder {
            kind: "session".into(),
            id: "99".into(),
            xmin_age: 3,
            seen: 1,
            ..Default::default()
        },
    ];
    let f = run(&p);
    let x = f
        .iter()
        .find(|f| f.kind == FindingKind::XminHorizon)
        .expect("xmin finding");
    assert_eq!(x.holder.as_ref().map(|h| h.id.as_str()), Some("4242"));
    assert!(
        x.title.contains("session 4242") && x.title.contains("jobs (+900)"),
        "{}",
        x.title
    );
    assert!(x.advice.contains("pg_terminate_backend(4242)"));
    // The queue bloats meanwhile: its ladder runs with the old snapshot too.
    let q = f
        .iter()
        .find(|f| f.kind == FindingKind::Queue)
        .expect("queue finding");
    assert!(
        q.command
            .as_deref()
            .unwrap_or("")
            .contains("--param xmin_holder=on"),
        "{q:?}"
    );
    assert_eq!(
        q.variants,
        [
            "for-update",
            "skip-locked",
            "skip-locked-lifo",
            "watermark",
            "rotation"
        ]
    );
    // Seen at one read only: not a finding.
    p.sessions.as_mut().expect("s").xmin_holders.remove(0);
    assert!(run(&p).iter().all(|f| f.kind != FindingKind::XminHorizon));
}

#[test]
fn uniform_reads_find_nothing_and_say_what_was_looked_at() {
    let mut p = record(
        &[stmt(
            "select abalance from pgbench_accounts where aid = ?",
            30,
            0,
            2,
        )],
        &[],
    );
    p.server.database = Some(DatabaseDelta {
        commits: 9000,
        rollbacks: 0,
        deadlocks: 0,
    });
    let (f, checks) = diagnose(&Input {
        probe: &p,
        duration_s: 3.0,
        server_cores: Some(2),
        functions: &Default::default(),
        catalog: crate::testdata::catalog(),
    });
    assert!(f.is_empty(), "{f:?}");
    let what: Vec<&str> = checks.iter().map(|c| c.what.as_str()).collect();
    for w in [
        "active sessions",
        "lock waits",
        "queue tables",
        "oldest xmin",
        "deadlocks",
        "rollbacks",
        "WAL waits",
        "sessions on CPU",
    ] {
        assert!(what.contains(&w), "{w} missing from {what:?}");
    }
    assert!(checks.iter().all(|c| !c.found));
}

#[test]
fn server_wide_symptoms_are_findings_ranked_by_share() {
    let mut p = record(
        &[stmt("insert into events (payload) values (?)", 100, 0, 64)],
        &[],
    );
    p.server.database = Some(DatabaseDelta {
        commits: 900,
        rollbacks: 100,
        deadlocks: 2,
    });
    p.samples = 10;
    p.waits = vec![
        WaitShare {
            event: "CPU".into(),
            count: 60,
            pct: 50.0,
        },
        WaitShare {
            event: "LWLock:WALWrite".into(),
            count: 36,
            pct: 30.0,
        },
        WaitShare {
            event: "Lock:transactionid".into(),
            count: 24,
            pct: 20.0,
        },
    ];
    p.sessions.as_mut().expect("s").blockers = vec![Blocker {
        query: "select * from accounts where id = ? for update".into(),
        state: "idle in transaction".into(),
        application_name: "batch".into(),
        samples: 5,
        sessions: 1,
        pids: vec![31],
        max_state_s: 7.5,
        ..Default::default()
    }];
    let f = run(&p);
    let kinds: Vec<FindingKind> = f.iter().map(|f| f.kind).collect();
    assert_eq!(
        kinds,
        [
            FindingKind::Oversubscribed,
            FindingKind::CommitBound,
            FindingKind::IdleInTransaction,
            FindingKind::Serialization,
            FindingKind::Deadlocks
        ],
        "{f:#?}"
    );
    assert!(f.windows(2).all(|w| w[0].share >= w[1].share));
    assert!(f[2].title.contains("pid 31"));
}

/// pgbench beside an idle REPEATABLE READ session: the old snapshot's share is the active
/// time it cost (none measured here), not the 98% of active time spent on tables that
/// bloated; it ranks below the hot row and names no relation of its own.
#[test]
fn an_old_snapshot_ranks_by_the_time_it_cost_not_the_time_on_bloating_tables() {
    let mut p = record(
        &[
            stmt("UPDATE pgbench_accounts SET abalance = abalance + ? WHERE aid = ?", 10, 0, 8),
            stmt("UPDATE pgbench_tellers SET tbalance = tbalance + ? WHERE tid = ?", 50, 40, 8),
            stmt("UPDATE pgbench_branches SET bbalance = bbalance + ? WHERE bid = ?", 30, 20, 8),
            stmt("INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (?, ?, ?, ?, CURRENT_TIMESTAMP)", 2, 0, 8),
        ],
        &[("pgbench_tellers", "tid=1", 10), ("pgbench_tellers", "tid=2", 9), ("pgbench_branches", "bid=1", 8)],
    );
    for (name, live, dead) in [
        ("pgbench_accounts", 100_000, 900),
        ("pgbench_tellers", 10, 900),
        ("pgbench_branches", 1, 900),
    ] {
        let mut t = table(name, 0, 900, 0, (0, dead));
        t.live_tuples_end = live;
        p.tables.push(t);
    }
    p.sessions.as_mut().expect("s").xmin_holders = vec![XminHolder {
        kind: "session".into(),
        id: "77".into(),
        state: "idle in transaction".into(),
        xmin_age: 5000,
        seen: 10,
        ..Default::default()
    }];
    let f = run(&p);
    assert_eq!(f[0].kind, FindingKind::HotRow, "{f:#?}");
    let x = f
        .iter()
        .find(|f| f.kind == FindingKind::XminHorizon)
        .expect("xmin finding");
    assert_eq!(x.share, 0.0);
    assert_eq!(x.relation, None);
    assert!(
        x.evidence
            .iter()
            .any(|e| e.what == "active time it cost" && e.value.starts_with("not measured")),
        "{:?}",
        x.evidence
    );
}

/// pgqueuer spent 40% of active time in `Lock:object` and diagnose said "heavyweight lock
/// waits, none on rows" with no finding: NOTIFY's commit lock is a finding naming the
/// notifying statements, with the queue ladder's notify variants.
#[test]
fn notify_commit_lock_waits_are_a_finding_with_the_notify_ladder() {
    let mut p = record(
        &[
            stmt("select pg_notify(?, ?)", 30, 28, 6),
            stmt(
                "insert into pgqueuer (priority, entrypoint, payload) values (?, ?, ?)",
                20,
                0,
                6,
            ),
            stmt("commit", 10, 9, 6),
        ],
        &[],
    );
    p.waits = vec![
        WaitShare {
            event: "Lock:object".into(),
            count: 40,
            pct: 40.0,
        },
        WaitShare {
            event: "CPU".into(),
            count: 60,
            pct: 60.0,
        },
    ];
    let (f, checks) = diagnose(&Input {
        probe: &p,
        duration_s: 3.0,
        server_cores: None,
        functions: &Default::default(),
        catalog: crate::testdata::catalog(),
    });
    let l = f
        .iter()
        .find(|f| f.kind == FindingKind::LockWait)
        .unwrap_or_else(|| panic!("{f:#?}"));
    assert!((l.share - 0.4).abs() < 1e-9);
    assert!(l.title.starts_with("Lock:object: 40% of active time") && l.title.contains("NOTIFY"));
    assert_eq!(l.scenario.as_deref(), Some("queue"));
    assert_eq!(
        l.variants,
        ["notify-per-job", "notify-per-batch", "skip-locked"]
    );
    assert!(l
        .command
        .as_deref()
        .unwrap_or("")
        .contains("--param producers=6"));
    let roles: Vec<(&str, &str)> = l
        .statements
        .iter()
        .map(|s| (s.role.as_str(), s.query.as_str()))
        .collect();
    assert!(
        roles.contains(&("notifying", "select pg_notify(?, ?)")),
        "{roles:?}"
    );
    assert!(roles.contains(&("waiting", "commit")), "{roles:?}");
    assert!(checks
        .iter()
        .any(|c| c.what == "other heavyweight locks" && c.found));
}

/// The time between a transaction's statements by Little's law (idle-in-transaction
/// sessions / commits per second / statements per commit less one), not the idle age of the
/// sampled sessions (length-biased: 3 ms a gap for pgbench, whose lab run then ran at 7%).
#[test]
fn think_time_is_idle_time_per_transaction_over_its_gaps() {
    use hotbench_results::probe_record::StatementStats;
    let mut p = record(
        &[
            stmt("UPDATE pgbench_tellers SET tbalance = tbalance + $1 WHERE tid = $2", 50, 45, 8),
            stmt("UPDATE pgbench_branches SET bbalance = bbalance + $1 WHERE bid = $2", 20, 10, 8),
            stmt("UPDATE pgbench_accounts SET abalance = abalance + $1 WHERE aid = $2", 10, 0, 8),
            stmt("INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES ($1, $2, $3, $4, CURRENT_TIMESTAMP)", 2, 0, 8),
        ],
        &[("pgbench_tellers", "tid=1", 10), ("pgbench_tellers", "tid=2", 9), ("pgbench_tellers", "tid=3", 8)],
    );
    // 3 s, 1800 commits a second, 7 statements each (BEGIN … END): 6 gaps a transaction;
    // 6.6 sessions idle in a transaction on average: 3.67 ms a transaction, 0.61 ms a gap.
    p.server.database = Some(DatabaseDelta {
        commits: 5400,
        rollbacks: 0,
        deadlocks: 0,
    });
    p.statements = (0..7)
        .map(|i| StatementStats {
            queryid: i.to_string(),
            calls: 5400,
            ..Default::default()
        })
        .collect();
    if let Some(s) = p.sessions.as_mut() {
        s.remote_client_samples = 0;
        s.idle_in_transaction_samples = 66;
        s.in_transaction_gap_ms = Some(3.0);
    }
    let f = run(&p);
    assert_eq!(f[0].estimate.as_ref().and_then(|e| e.think_ms), None);
    assert!(
        f[0].evidence
            .iter()
            .any(|e| e.value.starts_with("0.61 ms of client think time")),
        "{:?}",
        f[0].evidence
    );
    // A tenth of the rate with as many idle sessions: 6.1 ms a gap, suggested.
    p.server.database = Some(DatabaseDelta {
        commits: 540,
        rollbacks: 0,
        deadlocks: 0,
    });
    for st in &mut p.statements {
        st.calls = 540;
    }
    let f = run(&p);
    let cmd = f[0].command.as_deref().unwrap_or("");
    assert!(cmd.ends_with("--think 6.1ms"), "{cmd}");
}

/// Without pg_stat_statements (no calls per transaction) the think time falls back to the
/// sampled idle age, and its evidence says so and names the missing extension.
#[test]
fn think_time_without_pg_stat_statements_names_the_extension() {
    let mut p = record(
        &[
            stmt("SELECT accounts.id, accounts.balance FROM accounts WHERE accounts.id = $1::BIGINT FOR UPDATE", 60, 55, 8),
            stmt("UPDATE accounts SET balance=$1::BIGINT WHERE accounts.id = $2::BIGINT", 8, 0, 8),
        ],
        &[("accounts", "id=1", 40), ("accounts", "id=2", 9)],
    );
    p.server.database = Some(DatabaseDelta {
        commits: 900,
        rollbacks: 0,
        deadlocks: 0,
    });
    if let Some(s) = p.sessions.as_mut() {
        s.remote_client_samples = 0;
        s.idle_in_transaction_samples = 30;
        s.in_transaction_gap_ms = Some(2.4);
    }
    let f = run(&p);
    assert_eq!(f[0].scenario.as_deref(), Some("daily-limit"));
    let cmd = f[0].command.as_deref().unwrap_or("");
    assert!(
        cmd.contains("--param customers=2 ") && cmd.ends_with("--think 2.4ms"),
        "{cmd}"
    );
    assert!(
        f[0].evidence
            .iter()
            .any(|e| e.value.starts_with("2.40 ms of client think time")
                && e.value.contains("without pg_stat_statements")),
        "{:?}",
        f[0].evidence
    );
}

/// Django's view: the increment, then a read of the row, in one transaction that waits on
/// its client between them. The counters ladder starts with the variant of that shape (in
/// autocommit `direct` ran 21× the observed rate: --think had no transaction to delay).
#[test]
fn an_increment_read_back_in_its_transaction_starts_with_the_transaction_variant() {
    let mut up = stmt("UPDATE \"site_page\" SET \"views\" = (\"site_page\".\"views\" + $1) WHERE \"site_page\".\"id\" = $2", 60, 55, 8);
    up.idle_in_transaction = 5;
    let read = stmt("SELECT \"site_page\".\"id\", \"site_page\".\"views\" FROM \"site_page\" WHERE \"site_page\".\"id\" = $1 LIMIT $2", 10, 0, 8);
    let mut p = record(
        &[up, read],
        &[("site_page", "id=1", 40), ("site_page", "id=2", 9)],
    );
    let f = run(&p);
    assert_eq!(f[0].scenario.as_deref(), Some("counters"));
    assert_eq!(
        f[0].variants,
        [
            "direct-in-transaction",
            "direct",
            "slotted",
            "events-rollup"
        ]
    );
    // In autocommit (no round trip inside a transaction): the plain ladder.
    if let Some(s) = p.sessions.as_mut() {
        s.statements[0].idle_in_transaction = 0;
    }
    let f = run(&p);
    assert_eq!(f[0].variants, ["direct", "slotted", "events-rollup"]);
}

/// A scenario added only as a directory with a `scenario.toml` that declares the shape it
/// reproduces is what diagnose points to: nothing in this crate names it.
#[test]
fn a_scenario_added_as_a_directory_is_found_by_the_shape_it_reproduces() {
    let dir = tempfile::tempdir().expect("temp dir");
    let lab = dir.path().join("my-counters");
    std::fs::create_dir(&lab).expect("scenario dir");
    std::fs::write(
        lab.join("bump.sql"),
        "update c set n = n + 1 where id = :id;\n",
    )
    .expect("script");
    std::fs::write(
        lab.join("scenario.toml"),
        r#"title = "my counters"
demonstrates = "counter increments, my way"

[params.rows]
default = 10

[[variants]]
name = "bump"
baseline = true
script = "bump.sql"

[[variants]]
name = "batched"
script = "bump.sql"

[[reproduces]]
shape = "counter"
variants = ["batched", "bump"]
observed = { hot_rows = "rows" }
"#,
    )
    .expect("manifest");
    let mut scenarios: Vec<hotbench_scenario::Scenario> =
        hotbench_scenario::source::dir_bundles(dir.path())
            .expect("bundles")
            .into_iter()
            .map(|b| hotbench_scenario::load(b).expect("loads"))
            .collect();
    let builtin = hotbench_scenario::source::builtin_bundles();
    scenarios.extend(
        builtin
            .into_iter()
            .filter_map(|b| hotbench_scenario::load(b).ok()),
    );
    let catalog = crate::catalog::Catalog::of(&scenarios);
    let p = record(
        &[stmt(
            "update post set views_count = views_count + ? where id = ?",
            50,
            45,
            8,
        )],
        &[
            ("post", "id=1", 20),
            ("post", "id=2", 15),
            ("post", "id=3", 10),
        ],
    );
    let (f, _) = diagnose(&Input {
        probe: &p,
        duration_s: 3.0,
        server_cores: Some(2),
        functions: &Default::default(),
        catalog: &catalog,
    });
    assert_eq!(f[0].kind, FindingKind::HotRow);
    assert_eq!(f[0].scenario.as_deref(), Some("my-counters"));
    assert_eq!(f[0].variants, ["batched", "bump"]);
    let cmd = f[0].command.as_deref().unwrap_or("");
    assert!(
        cmd.contains("scenario run my-counters") && cmd.contains("--param rows=3"),
        "{cmd}"
    );
    // Other shapes still go to the built-in scenarios.
    assert_eq!(
        catalog
            .find(crate::catalog::Shape::Claim)
            .map(|r| r.scenario.as_str()),
        Some("queue")
    );
}
