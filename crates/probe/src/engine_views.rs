//! The views the probe reads on distributed-SQL engines instead of PostgreSQL's
//! `pg_stat_activity` wait events: YugabyteDB's active session history and CockroachDB's
//! transaction contention events. Neither engine runs in CI, so the statements are checked
//! by their text here (and docs/engines.md says what has met a real server).

/// YugabyteDB (2.19+): wait events sampled by the tablet servers, weighted, since `$1`.
pub const YB_ASH_SQL: &str = "select coalesce(wait_event_class, '') || ':' || \
     coalesce(wait_event, ''), sum(sample_weight)::int8 from yb_active_session_history \
     where sample_time >= to_timestamp($1::float8) group by 1";

/// CockroachDB (22.2+): contention events and the time transactions waited, since `$1`.
pub const CRDB_CONTENTION_SQL: &str = "select count(*)::int8, \
     coalesce(sum(extract(epoch from contention_duration)), 0)::float8 \
     from crdb_internal.transaction_contention_events \
     where collection_ts >= to_timestamp($1::float8)";

#[cfg(test)]
mod tests {
    use super::*;

    /// Words of `sql`, lower-cased, without punctuation.
    fn words(sql: &str) -> Vec<String> {
        sql.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == '$'))
            .filter(|w| !w.is_empty())
            .map(str::to_ascii_lowercase)
            .collect()
    }

    #[test]
    fn yugabytedb_reads_active_session_history_since_the_last_sample() {
        let w = words(YB_ASH_SQL);
        for needed in [
            "yb_active_session_history",
            "wait_event_class",
            "wait_event",
            "sample_weight",
            "sample_time",
            "$1",
        ] {
            assert!(
                w.iter().any(|x| x == needed),
                "{needed} missing: {YB_ASH_SQL}"
            );
        }
        assert!(YB_ASH_SQL.contains("group by 1"));
    }

    #[test]
    fn cockroachdb_reads_contention_events_since_the_last_sample() {
        let w = words(CRDB_CONTENTION_SQL);
        for needed in [
            "crdb_internal.transaction_contention_events",
            "contention_duration",
            "collection_ts",
            "$1",
        ] {
            assert!(
                w.iter().any(|x| x == needed),
                "{needed} missing: {CRDB_CONTENTION_SQL}"
            );
        }
        // Neither engine has pg_locks-based waits: the statements must not touch them.
        for sql in [YB_ASH_SQL, CRDB_CONTENTION_SQL] {
            assert!(!sql.contains("pg_locks") && !sql.contains("pg_stat_activity"));
        }
    }
}
