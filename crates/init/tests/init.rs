//! `hotbench run -i` and the pre-run table check against a real PostgreSQL from the
//! project's harness (one shared server, one database per test), plus a comparison with
//! the real `pgbench -i` when it is installed.

use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};

use hotbench_init::{
    get_table_info, run_init, run_init_cancellable, InitError, InitOptions, PartitionMethod,
    TableInfo,
};
use hotbench_pgserver::testing::shared;
use hotbench_pgserver::ConnInfo;
use hotbench_wire::{Connection, SqlState};

/// A fresh database named `name` on the shared server, and a connection to it.
fn fresh_db(name: &str) -> (ConnInfo, Connection) {
    let pg = shared();
    let ci = pg
        .create_database(name)
        .unwrap_or_else(|e| panic!("create database {name}: {e}"));
    let conn = Connection::connect_str(&ci.socket_conninfo())
        .unwrap_or_else(|e| panic!("connect to {name}: {e}"));
    (ci, conn)
}

/// Runs `sql` and returns the first column of the first row.
fn one(conn: &mut Connection, sql: &str) -> String {
    let r = conn
        .simple_query(sql)
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    r.last()
        .and_then(|r| r.get(0, 0))
        .unwrap_or_default()
        .to_string()
}

/// Rows as `a|b|c` lines.
fn rows(conn: &mut Connection, sql: &str) -> Vec<String> {
    let r = conn
        .simple_query(sql)
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    r.last()
        .map(|r| {
            r.rows
                .iter()
                .map(|row| {
                    row.iter()
                        .map(|v| v.as_deref().unwrap_or("NULL"))
                        .collect::<Vec<_>>()
                        .join("|")
                })
                .collect()
        })
        .unwrap_or_default()
}

fn init(conn: &mut Connection, opts: &InitOptions) -> String {
    let mut out = Vec::new();
    let opts = InitOptions {
        terminal: Some(false),
        ..opts.clone()
    };
    match run_init(conn, &opts, &mut out) {
        Ok(_) => String::from_utf8_lossy(&out).into_owned(),
        Err(e) => panic!(
            "run_init failed: {e}\ndetail: {:?}\noutput so far:\n{}",
            e.detail(),
            String::from_utf8_lossy(&out)
        ),
    }
}

/// Replaces every `N.NN s` by `X s` so timings compare.
fn normalize_times(s: &str) -> String {
    let mut out = String::new();
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        // digits '.' digit digit ' s'
        let mut j = i;
        while j < b.len() && b[j].is_ascii_digit() {
            j += 1;
        }
        let is_time = j > i
            && (i == 0 || !b[i - 1].is_ascii_digit())
            && b.len() >= j + 5
            && b[j] == b'.'
            && b[j + 1].is_ascii_digit()
            && b[j + 2].is_ascii_digit()
            && &b[j + 3..j + 5] == b" s";
        if is_time {
            out.push_str("X s");
            i = j + 5;
        } else if j > i {
            out.push_str(&s[i..j]);
            i = j;
        } else {
            let ch = s[i..].chars().next().unwrap_or(' ');
            out.push(ch);
            i += ch.len_utf8();
        }
    }
    out
}

/// Row counts and a checksum of every pgbench table.
fn contents(conn: &mut Connection) -> Vec<String> {
    rows(
        conn,
        "select 'branches', count(*), sum(bid), sum(bbalance), count(filler) from pgbench_branches \
         union all select 'tellers', count(*), sum(tid::bigint * bid), sum(tbalance), count(filler) from pgbench_tellers \
         union all select 'accounts', count(*), sum(aid::bigint * bid), sum(abalance), \
           count(*) filter (where octet_length(filler) = 84) from pgbench_accounts \
         union all select 'history', count(*), 0, 0, 0 from pgbench_history",
    )
}

/// Everything about the pgbench tables' definitions that pgbench decides.
fn definitions(conn: &mut Connection) -> Vec<String> {
    let mut d = rows(
        conn,
        "select c.relname, c.relkind, c.relpersistence, coalesce(array_to_string(c.reloptions, ','), ''), \
           coalesce(pg_get_expr(c.relpartbound, c.oid), ''), coalesce(pg_get_partkeydef(c.oid), ''), \
           coalesce(t.spcname, '') \
         from pg_class c join pg_namespace n on n.oid = c.relnamespace \
         left join pg_tablespace t on t.oid = c.reltablespace \
         where n.nspname = 'public' and c.relname like 'pgbench%' order by 1",
    );
    d.extend(rows(
        conn,
        "select c.relname, a.attnum, a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull, \
           coalesce(pg_get_expr(ad.adbin, ad.adrelid), '') \
         from pg_attribute a join pg_class c on c.oid = a.attrelid \
         join pg_namespace n on n.oid = c.relnamespace \
         left join pg_attrdef ad on ad.adrelid = a.attrelid and ad.adnum = a.attnum \
         where n.nspname = 'public' and c.relname like 'pgbench%' and a.attnum > 0 and not a.attisdropped \
         order by 1, 2",
    ));
    d.extend(rows(
        conn,
        "select c.relname, co.conname, co.contype, pg_get_constraintdef(co.oid) \
         from pg_constraint co join pg_class c on c.oid = co.conrelid \
         join pg_namespace n on n.oid = c.relnamespace \
         where n.nspname = 'public' and c.relname like 'pgbench%' order by 1, 2",
    ));
    d.extend(rows(
        conn,
        "select tablename, indexname, indexdef from pg_indexes \
         where schemaname = 'public' and tablename like 'pgbench%' order by 1, 2",
    ));
    d
}

fn counts(conn: &mut Connection) -> (i64, i64, i64, i64) {
    let n = |conn: &mut Connection, t: &str| -> i64 {
        one(conn, &format!("select count(*) from {t}"))
            .parse()
            .unwrap_or(-1)
    };
    (
        n(conn, "pgbench_branches"),
        n(conn, "pgbench_tellers"),
        n(conn, "pgbench_accounts"),
        n(conn, "pgbench_history"),
    )
}

fn constraint_names(conn: &mut Connection, contype: char) -> Vec<String> {
    rows(
        conn,
        &format!(
            "select conname from pg_constraint where contype = '{contype}' \
             and conrelid::regclass::text like 'pgbench%' order by 1"
        ),
    )
}

#[test]
fn default_steps_scale_1() {
    let (_, mut conn) = fresh_db("init_default");
    let out = init(&mut conn, &InitOptions::default());
    let norm = normalize_times(&out);
    assert_eq!(
        norm,
        "dropping old tables...\n\
         NOTICE:  table \"pgbench_accounts\" does not exist, skipping\n\
         NOTICE:  table \"pgbench_branches\" does not exist, skipping\n\
         NOTICE:  table \"pgbench_history\" does not exist, skipping\n\
         NOTICE:  table \"pgbench_tellers\" does not exist, skipping\n\
         creating tables...\n\
         generating data (client-side)...\n\
         100000 of 100000 tuples (100%) done (elapsed X s, remaining X s)\n\
         vacuuming...\n\
         creating primary keys...\n\
         done in X s (drop tables X s, create tables X s, client-side generate X s, vacuum X s, primary keys X s).\n",
        "raw output:\n{out}"
    );
    assert_eq!(counts(&mut conn), (1, 10, 100_000, 0));
    assert_eq!(
        constraint_names(&mut conn, 'p'),
        [
            "pgbench_accounts_pkey",
            "pgbench_branches_pkey",
            "pgbench_tellers_pkey"
        ]
    );
    assert!(constraint_names(&mut conn, 'f').is_empty());
    // Filler blank-padded in accounts, NULL elsewhere; balances zero; frozen by COPY.
    assert_eq!(
        contents(&mut conn),
        [
            "branches|1|1|0|0",
            "tellers|10|55|0|0",
            "accounts|100000|5000050000|0|100000",
            "history|0|0|0|0"
        ]
    );
    // Running it again drops and recreates (no NOTICEs this time).
    let again = init(&mut conn, &InitOptions::default());
    assert!(!again.contains("NOTICE"), "{again}");
    assert_eq!(counts(&mut conn), (1, 10, 100_000, 0));
}

#[test]
fn server_side_generation() {
    let (_, mut conn) = fresh_db("init_server_side");
    let opts = InitOptions {
        steps: "dtG".into(),
        scale: 2,
        ..InitOptions::default()
    };
    let out = normalize_times(&init(&mut conn, &opts));
    assert!(
        out.ends_with(
            "creating tables...\ngenerating data (server-side)...\n\
             done in X s (drop tables X s, create tables X s, server-side generate X s).\n"
        ),
        "{out}"
    );
    assert_eq!(counts(&mut conn), (2, 20, 200_000, 0));
    assert!(constraint_names(&mut conn, 'p').is_empty());
    assert_eq!(
        contents(&mut conn),
        [
            "branches|2|3|0|0",
            "tellers|20|365|0|0",
            "accounts|200000|35000150000|0|200000",
            "history|0|0|0|0"
        ]
    );
}

#[test]
fn partitions_range_and_hash_hold_the_same_rows() {
    let (_, mut plain) = fresh_db("init_part_plain");
    init(
        &mut plain,
        &InitOptions {
            steps: "dtG".into(),
            ..InitOptions::default()
        },
    );
    let expected = contents(&mut plain);
    for (method, steps) in [
        (PartitionMethod::Range, "dtgvp"),
        (PartitionMethod::Hash, "dtGvp"),
    ] {
        let name = format!("init_part_{method}");
        let (_, mut conn) = fresh_db(&name);
        let opts = InitOptions {
            steps: steps.into(),
            partitions: 3,
            partition_method: Some(method),
            ..InitOptions::default()
        };
        let out = init(&mut conn, &opts);
        assert!(
            out.contains("creating tables...\ncreating 3 partitions...\n"),
            "{out}"
        );
        assert_eq!(contents(&mut conn), expected, "{method}");
        let per_part = rows(
            &mut conn,
            "select c.relname, (select count(*) from pgbench_accounts a where a.tableoid = c.oid) \
             from pg_inherits i join pg_class c on c.oid = i.inhrelid \
             where i.inhparent = 'pgbench_accounts'::regclass order by 1",
        );
        assert_eq!(per_part.len(), 3, "{per_part:?}");
        if method == PartitionMethod::Range {
            assert_eq!(
                per_part,
                [
                    "pgbench_accounts_1|33334",
                    "pgbench_accounts_2|33334",
                    "pgbench_accounts_3|33332"
                ]
            );
        }
        let info = get_table_info(&mut conn, false).expect("table info");
        assert_eq!(
            info,
            TableInfo {
                scale: 1,
                partition_method: Some(method),
                partitions: 3,
                warning: None
            }
        );
    }
}

#[test]
fn foreign_keys_with_f() {
    let (_, mut conn) = fresh_db("init_fkeys");
    let opts = InitOptions {
        steps: "dtGp".into(),
        foreign_keys: true,
        no_vacuum: true,
        ..InitOptions::default()
    };
    let out = normalize_times(&init(&mut conn, &opts));
    assert!(
        out.ends_with("creating primary keys...\ncreating foreign keys...\ndone in X s (drop tables X s, create tables X s, server-side generate X s, primary keys X s, foreign keys X s).\n"),
        "{out}"
    );
    assert_eq!(
        constraint_names(&mut conn, 'f'),
        [
            "pgbench_accounts_bid_fkey",
            "pgbench_history_aid_fkey",
            "pgbench_history_bid_fkey",
            "pgbench_history_tid_fkey",
            "pgbench_tellers_bid_fkey"
        ]
    );
    // With foreign keys in place, re-initializing still works (one drop, one truncate).
    init(&mut conn, &InitOptions::default());
    assert_eq!(counts(&mut conn), (1, 10, 100_000, 0));
}

#[test]
fn invalid_steps_are_rejected_before_anything_runs() {
    let (_, mut conn) = fresh_db("init_bad_steps");
    let mut out = Vec::new();
    let opts = InitOptions {
        steps: "dtx".into(),
        ..InitOptions::default()
    };
    let e = run_init(&mut conn, &opts, &mut out).expect_err("bad steps");
    assert_eq!(e.to_string(), "unrecognized initialization step \"x\"");
    assert_eq!(
        e.detail().as_deref(),
        Some("Allowed step characters are: \"dtgGvpf\".")
    );
    assert_eq!(e.exit_code(), 1);
    assert!(out.is_empty(), "nothing printed, nothing run");
    assert_eq!(
        one(
            &mut conn,
            "select count(*) from pg_class where relname like 'pgbench%'"
        ),
        "0"
    );
    let e = run_init(
        &mut conn,
        &InitOptions {
            steps: String::new(),
            ..InitOptions::default()
        },
        &mut out,
    )
    .expect_err("no steps");
    assert_eq!(e.to_string(), "no initialization steps specified");
}

#[test]
fn server_errors_read_like_pgbench() {
    let (_, mut conn) = fresh_db("init_bad_tablespace");
    let opts = InitOptions {
        steps: "dt".into(),
        tablespace: Some("nosuch".into()),
        ..InitOptions::default()
    };
    let mut out = Vec::new();
    let e = run_init(&mut conn, &opts, &mut out).expect_err("missing tablespace");
    assert_eq!(
        e.to_string(),
        "query failed: ERROR:  tablespace \"nosuch\" does not exist"
    );
    assert_eq!(
        e.detail().as_deref(),
        Some("Query was: create table pgbench_history(tid int,bid int,aid    int,delta int,mtime timestamp,filler char(22)) tablespace \"nosuch\"")
    );
    assert_eq!(e.sqlstate(), Some(SqlState::UNDEFINED_OBJECT));
    // The connection is still usable.
    assert_eq!(one(&mut conn, "select 1"), "1");
}

#[test]
fn table_info_on_fresh_database_says_initialize() {
    let (_, mut conn) = fresh_db("init_missing");
    let e = get_table_info(&mut conn, false).expect_err("no tables");
    assert_eq!(
        e.to_string(),
        "could not count number of branches: ERROR:  relation \"pgbench_branches\" does not exist\n\
         LINE 1: select count(*) from pgbench_branches\n\
         \x20                            ^"
    );
    assert_eq!(
        e.hint().as_deref(),
        Some("Perhaps you need to do initialization (\"hotbench run -i\") in database \"init_missing\".")
    );
    assert_eq!(e.sqlstate(), Some(SqlState::UNDEFINED_TABLE));
    assert_eq!(e.exit_code(), 1);
}

#[test]
fn table_info_detects_scale() {
    let (_, mut conn) = fresh_db("init_scale");
    init(
        &mut conn,
        &InitOptions {
            steps: "dtG".into(),
            scale: 2,
            ..InitOptions::default()
        },
    );
    let info = get_table_info(&mut conn, false).expect("info");
    assert_eq!(
        info,
        TableInfo {
            scale: 2,
            partition_method: None,
            partitions: 0,
            warning: None
        }
    );
    let info = get_table_info(&mut conn, true).expect("info");
    assert_eq!(
        info.warning.as_deref(),
        Some("scale option ignored, using count from pgbench_branches table (2)")
    );
    conn.simple_query("truncate pgbench_branches")
        .expect("truncate");
    let e = get_table_info(&mut conn, false).expect_err("zero branches");
    assert!(matches!(e, InitError::InvalidCount(_)));
    assert_eq!(
        e.to_string(),
        "invalid count(*) from pgbench_branches: \"0\""
    );
}

/// Sets a flag once a progress line went by (a user pressing Ctrl-C mid-COPY).
struct CancelOnProgress<'a> {
    seen: Vec<u8>,
    flag: &'a AtomicBool,
}

impl std::io::Write for CancelOnProgress<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.seen.extend_from_slice(buf);
        if String::from_utf8_lossy(&self.seen).contains("tuples (") {
            self.flag.store(true, Ordering::Relaxed);
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn cancel_stops_between_steps_and_mid_copy() {
    let (_, mut conn) = fresh_db("init_cancel");
    let flag = AtomicBool::new(true);
    let mut out = Vec::new();
    let e = run_init_cancellable(&mut conn, &InitOptions::default(), &mut out, &flag)
        .expect_err("canceled");
    assert!(matches!(e, InitError::Canceled), "{e}");
    assert!(out.is_empty());

    let flag = AtomicBool::new(false);
    let mut out = CancelOnProgress {
        seen: Vec::new(),
        flag: &flag,
    };
    let opts = InitOptions {
        scale: 2,
        terminal: Some(false),
        ..InitOptions::default()
    };
    let e = run_init_cancellable(&mut conn, &opts, &mut out, &flag).expect_err("canceled");
    assert!(matches!(e, InitError::Canceled), "{e}");
    let seen = String::from_utf8_lossy(&out.seen).into_owned();
    assert!(seen.contains("100000 of 200000 tuples (50%)"), "{seen}");
    assert!(!seen.contains("200000 of 200000"), "{seen}");
    // Rolled back, and the connection is usable.
    assert_eq!(counts(&mut conn), (0, 0, 0, 0));
}

/// Major version of a pgbench binary (`pgbench (PostgreSQL) 15.18 …` → 15).
fn pgbench_major(pgbench: &std::path::Path) -> Option<u32> {
    let out = Command::new(pgbench).arg("--version").output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let version = text.split_whitespace().nth(2)?;
    version.split(['.', 'b', 'd', 'r']).next()?.parse().ok()
}

/// The real pgbench: next to the server's binaries, on PATH's Debian wrapper, or from
/// `pg_config --bindir`.
fn find_pgbench() -> Option<PathBuf> {
    let local = shared().binaries().program("pgbench");
    if local.is_file() {
        return Some(local);
    }
    let usr = PathBuf::from("/usr/bin/pgbench");
    if usr.is_file() {
        return Some(usr);
    }
    let out = Command::new("pg_config").arg("--bindir").output().ok()?;
    let p = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()).join("pgbench");
    p.is_file().then_some(p)
}

#[test]
fn same_tables_and_output_as_real_pgbench() {
    let pgbench = find_pgbench().expect(
        "pgbench not found (it ships with the PostgreSQL server binaries the test harness uses)",
    );
    let cases: [(&str, &[&str], InitOptions); 4] = [
        (
            // Tables and keys only: 64-bit account ids from scale 20000 on.
            "bigint",
            &[
                "-I",
                "dtp",
                "-s",
                "20000",
                "--index-tablespace",
                "pg_default",
            ],
            InitOptions {
                steps: "dtp".into(),
                scale: 20000,
                index_tablespace: Some("pg_default".into()),
                ..InitOptions::default()
            },
        ),
        (
            "default",
            &["-s", "2"],
            InitOptions {
                scale: 2,
                ..InitOptions::default()
            },
        ),
        (
            "hash",
            &[
                "-I",
                "dtGvpf",
                "-F",
                "80",
                "--unlogged-tables",
                "--partitions",
                "3",
                "--partition-method",
                "hash",
            ],
            InitOptions {
                steps: "dtGvpf".into(),
                fillfactor: 80,
                unlogged_tables: true,
                partitions: 3,
                partition_method: Some(PartitionMethod::Hash),
                ..InitOptions::default()
            },
        ),
        (
            "range_q",
            &[
                "-q",
                "-n",
                "--foreign-keys",
                "--partitions",
                "2",
                "-F",
                "90",
            ],
            InitOptions {
                quiet: true,
                no_vacuum: true,
                foreign_keys: true,
                partitions: 2,
                fillfactor: 90,
                ..InitOptions::default()
            },
        ),
    ];
    // Our messages are pgbench 15's; pgbench 17 reworded the progress lines.
    let same_messages = pgbench_major(&pgbench) == Some(15);
    eprintln!(
        "comparing with {} (messages too: {same_messages})",
        pgbench.display()
    );
    for (name, args, opts) in cases {
        let (theirs_ci, mut theirs) = fresh_db(&format!("cmp_pgbench_{name}"));
        let (_, mut ours) = fresh_db(&format!("cmp_hotbench_{name}"));
        let output = Command::new(&pgbench)
            .arg("-i")
            .args(args)
            .envs(theirs_ci.env())
            .env_remove("PGCLUSTER")
            .output()
            .unwrap_or_else(|e| panic!("run {}: {e}", pgbench.display()));
        let their_out = String::from_utf8_lossy(&output.stderr).into_owned();
        assert!(output.status.success(), "pgbench -i failed:\n{their_out}");
        let our_out = init(&mut ours, &opts);
        if same_messages {
            assert_eq!(
                normalize_times(&our_out),
                normalize_times(&their_out),
                "{name}: stderr differs"
            );
        }
        assert_eq!(
            definitions(&mut ours),
            definitions(&mut theirs),
            "{name}: definitions"
        );
        assert_eq!(
            contents(&mut ours),
            contents(&mut theirs),
            "{name}: contents"
        );
        let info = |c: &mut Connection| get_table_info(c, false).map_err(|e| e.to_string());
        assert_eq!(info(&mut ours), info(&mut theirs), "{name}: table info");
    }
}
