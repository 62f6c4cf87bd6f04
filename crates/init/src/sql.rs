//! The SQL pgbench 15 sends during initialization, character for character, built without
//! I/O so the exact text is unit-tested (and checked against real pgbench in the
//! integration tests).

use crate::options::{
    InitOptions, PartitionMethod, NACCOUNTS, NBRANCHES, NTELLERS, SCALE_32BIT_THRESHOLD,
};

/// Step `d`: one statement, so foreign keys between the tables do not matter.
pub const DROP_TABLES: &str =
    "drop table if exists pgbench_accounts, pgbench_branches, pgbench_history, pgbench_tellers";

/// First statement of steps `g` and `G` (inside their transaction).
pub const TRUNCATE_TABLES: &str =
    "truncate table pgbench_accounts, pgbench_branches, pgbench_history, pgbench_tellers";

/// Step `v`, in pgbench's order.
pub const VACUUM: [&str; 4] = [
    "vacuum analyze pgbench_branches",
    "vacuum analyze pgbench_tellers",
    "vacuum analyze pgbench_accounts",
    "vacuum analyze pgbench_history",
];

/// Step `p` without `--index-tablespace`.
pub const PRIMARY_KEYS: [&str; 3] = [
    "alter table pgbench_branches add primary key (bid)",
    "alter table pgbench_tellers add primary key (tid)",
    "alter table pgbench_accounts add primary key (aid)",
];

/// Step `f`.
pub const FOREIGN_KEYS: [&str; 5] = [
    "alter table pgbench_tellers add constraint pgbench_tellers_bid_fkey foreign key (bid) references pgbench_branches",
    "alter table pgbench_accounts add constraint pgbench_accounts_bid_fkey foreign key (bid) references pgbench_branches",
    "alter table pgbench_history add constraint pgbench_history_bid_fkey foreign key (bid) references pgbench_branches",
    "alter table pgbench_history add constraint pgbench_history_tid_fkey foreign key (tid) references pgbench_tellers",
    "alter table pgbench_history add constraint pgbench_history_aid_fkey foreign key (aid) references pgbench_accounts",
];

/// pgbench's `ddlinfo`: table, columns with 32-bit account ids, with 64-bit ones, and
/// whether the table takes a fill factor.
const DDLS: [(&str, &str, &str, bool); 4] = [
    (
        "pgbench_history",
        "tid int,bid int,aid    int,delta int,mtime timestamp,filler char(22)",
        "tid int,bid int,aid bigint,delta int,mtime timestamp,filler char(22)",
        false,
    ),
    (
        "pgbench_tellers",
        "tid int not null,bid int,tbalance int,filler char(84)",
        "tid int not null,bid int,tbalance int,filler char(84)",
        true,
    ),
    (
        "pgbench_accounts",
        "aid    int not null,bid int,abalance int,filler char(84)",
        "aid bigint not null,bid int,abalance int,filler char(84)",
        true,
    ),
    (
        "pgbench_branches",
        "bid int not null,bbalance int,filler char(88)",
        "bid int not null,bbalance int,filler char(88)",
        true,
    ),
];

/// libpq's `PQescapeIdentifier`: always double-quoted, `"` doubled.
pub fn quote_identifier(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

fn unlogged(opts: &InitOptions) -> &'static str {
    if opts.unlogged_tables {
        " unlogged"
    } else {
        ""
    }
}

/// Step `t`: the four `create table` statements (history, tellers, accounts, branches).
///
/// pgbench 15 makes every table unlogged with `--unlogged-tables`, the partitioned
/// `pgbench_accounts` parent included; the parent gets `partition by …` instead of a fill
/// factor. PostgreSQL 18 refuses unlogged partitioned tables, and pgbench 18 then leaves
/// these four tables logged when partitioning (only the partitions are unlogged): on a
/// server from 18 on, so does hotbench.
pub fn create_tables(opts: &InitOptions, server_version_num: u32) -> Vec<String> {
    let method = opts.effective_partition_method();
    let unlogged = if server_version_num >= 180000 && method.is_some() {
        ""
    } else {
        unlogged(opts)
    };
    DDLS.iter()
        .map(|(table, small, big, fillfactor)| {
            let cols = if opts.scale >= SCALE_32BIT_THRESHOLD {
                big
            } else {
                small
            };
            let mut q = format!("create{unlogged} table {table}({cols})");
            match method {
                Some(m) if *table == "pgbench_accounts" => {
                    q.push_str(&format!(" partition by {} (aid)", m.as_str()));
                }
                _ if *fillfactor => q.push_str(&format!(" with (fillfactor={})", opts.fillfactor)),
                _ => {}
            }
            if let Some(ts) = &opts.tablespace {
                q.push_str(&format!(" tablespace {}", quote_identifier(ts)));
            }
            q
        })
        .collect()
}

/// Step `t` with `--partitions`: one `create table pgbench_accounts_N partition of …`
/// per partition (empty when not partitioned).
pub fn create_partitions(opts: &InitOptions) -> Vec<String> {
    let Some(method) = opts.effective_partition_method() else {
        return Vec::new();
    };
    let parts = i64::from(opts.partitions);
    let part_size = (NACCOUNTS * i64::from(opts.scale) + parts - 1) / parts;
    (1..=parts)
        .map(|p| {
            let mut q = format!(
                "create{} table pgbench_accounts_{p}\n  partition of pgbench_accounts\n  ",
                unlogged(opts)
            );
            match method {
                PartitionMethod::Range => {
                    let from = if p == 1 {
                        "minvalue".to_string()
                    } else {
                        ((p - 1) * part_size + 1).to_string()
                    };
                    let to = if p < parts {
                        (p * part_size + 1).to_string()
                    } else {
                        "maxvalue".to_string()
                    };
                    q.push_str(&format!("for values from ({from}) to ({to})"));
                }
                PartitionMethod::Hash => {
                    q.push_str(&format!(
                        "for values with (modulus {parts}, remainder {})",
                        p - 1
                    ));
                }
            }
            q.push_str(&format!(" with (fillfactor={})", opts.fillfactor));
            q
        })
        .collect()
}

/// Step `g`: one insert per branch (the filler column stays NULL).
pub fn insert_branch(i: i64) -> String {
    format!(
        "insert into pgbench_branches(bid,bbalance) values({},0)",
        i + 1
    )
}

/// Step `g`: one insert per teller.
pub fn insert_teller(i: i64) -> String {
    format!(
        "insert into pgbench_tellers(tid,bid,tbalance) values ({},{},0)",
        i + 1,
        i / NTELLERS + 1
    )
}

/// Step `g`: the accounts COPY, with `freeze on` from server 14 on when not partitioned.
pub fn copy_accounts(partitioned: bool, server_version_num: u32) -> &'static str {
    if !partitioned && server_version_num >= 140000 {
        "copy pgbench_accounts from stdin with (freeze on)"
    } else {
        "copy pgbench_accounts from stdin"
    }
}

/// Step `G`: the three `insert … select … from generate_series` statements.
pub fn server_side_inserts(scale: i32) -> [String; 3] {
    let scale = i64::from(scale);
    [
        format!(
            "insert into pgbench_branches(bid,bbalance) select bid, 0 from generate_series(1, {}) as bid",
            NBRANCHES * scale
        ),
        format!(
            "insert into pgbench_tellers(tid,bid,tbalance) select tid, (tid - 1) / {NTELLERS} + 1, 0 from generate_series(1, {}) as tid",
            NTELLERS * scale
        ),
        format!(
            "insert into pgbench_accounts(aid,bid,abalance,filler) select aid, (aid - 1) / {NACCOUNTS} + 1, 0, '' from generate_series(1, {}) as aid",
            NACCOUNTS * scale
        ),
    ]
}

/// Step `p`, with ` using index tablespace "…"` when `--index-tablespace` is given.
pub fn primary_keys(index_tablespace: Option<&str>) -> Vec<String> {
    PRIMARY_KEYS
        .iter()
        .map(|q| match index_tablespace {
            Some(ts) => format!("{q} using index tablespace {}", quote_identifier(ts)),
            None => (*q).to_string(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_tables() {
        let t = create_tables(&InitOptions::default(), 150000);
        assert_eq!(
            t,
            [
                "create table pgbench_history(tid int,bid int,aid    int,delta int,mtime timestamp,filler char(22))",
                "create table pgbench_tellers(tid int not null,bid int,tbalance int,filler char(84)) with (fillfactor=100)",
                "create table pgbench_accounts(aid    int not null,bid int,abalance int,filler char(84)) with (fillfactor=100)",
                "create table pgbench_branches(bid int not null,bbalance int,filler char(88)) with (fillfactor=100)",
            ]
        );
        assert!(create_partitions(&InitOptions::default()).is_empty());
    }

    #[test]
    fn big_scale_unlogged_tablespace() {
        let o = InitOptions {
            scale: 20000,
            fillfactor: 90,
            unlogged_tables: true,
            tablespace: Some("my\"ts".into()),
            ..InitOptions::default()
        };
        let t = create_tables(&o, 150000);
        assert_eq!(
            t[0],
            "create unlogged table pgbench_history(tid int,bid int,aid bigint,delta int,mtime timestamp,filler char(22)) tablespace \"my\"\"ts\""
        );
        assert_eq!(
            t[2],
            "create unlogged table pgbench_accounts(aid bigint not null,bid int,abalance int,filler char(84)) with (fillfactor=90) tablespace \"my\"\"ts\""
        );
    }

    #[test]
    fn range_partitions() {
        let o = InitOptions {
            partitions: 3,
            ..InitOptions::default()
        };
        assert_eq!(
            create_tables(&o, 150000)[2],
            "create table pgbench_accounts(aid    int not null,bid int,abalance int,filler char(84)) partition by range (aid)"
        );
        assert_eq!(
            create_partitions(&o),
            [
                "create table pgbench_accounts_1\n  partition of pgbench_accounts\n  for values from (minvalue) to (33335) with (fillfactor=100)",
                "create table pgbench_accounts_2\n  partition of pgbench_accounts\n  for values from (33335) to (66669) with (fillfactor=100)",
                "create table pgbench_accounts_3\n  partition of pgbench_accounts\n  for values from (66669) to (maxvalue) with (fillfactor=100)",
            ]
        );
    }

    #[test]
    fn hash_partitions_unlogged() {
        let o = InitOptions {
            partitions: 2,
            partition_method: Some(PartitionMethod::Hash),
            unlogged_tables: true,
            ..InitOptions::default()
        };
        assert!(create_tables(&o, 150000)[2].starts_with("create unlogged table pgbench_accounts("));
        assert!(create_tables(&o, 150000)[2].ends_with(") partition by hash (aid)"));
        // PostgreSQL 18 refuses unlogged partitioned tables: pgbench 18 keeps them logged.
        assert!(create_tables(&o, 180000)[2].starts_with("create table pgbench_accounts("));
        assert!(create_tables(&o, 180000)[0].starts_with("create table "));
        assert!(create_partitions(&o)[0].starts_with("create unlogged table pgbench_accounts_1"));
        assert_eq!(
            create_partitions(&o)[1],
            "create unlogged table pgbench_accounts_2\n  partition of pgbench_accounts\n  for values with (modulus 2, remainder 1) with (fillfactor=100)"
        );
    }

    #[test]
    fn data_statements() {
        assert_eq!(
            insert_branch(0),
            "insert into pgbench_branches(bid,bbalance) values(1,0)"
        );
        assert_eq!(
            insert_teller(10),
            "insert into pgbench_tellers(tid,bid,tbalance) values (11,2,0)"
        );
        assert_eq!(
            copy_accounts(false, 150018),
            "copy pgbench_accounts from stdin with (freeze on)"
        );
        assert_eq!(
            copy_accounts(true, 150018),
            "copy pgbench_accounts from stdin"
        );
        assert_eq!(
            copy_accounts(false, 130000),
            "copy pgbench_accounts from stdin"
        );
        let g = server_side_inserts(2);
        assert_eq!(g[1], "insert into pgbench_tellers(tid,bid,tbalance) select tid, (tid - 1) / 10 + 1, 0 from generate_series(1, 20) as tid");
        assert_eq!(g[2], "insert into pgbench_accounts(aid,bid,abalance,filler) select aid, (aid - 1) / 100000 + 1, 0, '' from generate_series(1, 200000) as aid");
        assert_eq!(
            primary_keys(Some("ix"))[2],
            "alter table pgbench_accounts add primary key (aid) using index tablespace \"ix\""
        );
    }
}
