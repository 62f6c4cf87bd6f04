//! What hotbench knows of each PostgreSQL-compatible engine's transaction errors and of the
//! client retry conventions its documentation recommends, kept as data so it is tested
//! without the engines' servers.
//!
//! Retry decisions stay SQLSTATE-based (see `docs/architecture.md`): every engine reports
//! its conflicts as `40001` (YugabyteDB's read restarts and priority conflicts, CockroachDB's
//! `restart transaction` errors), so the message text only names the *kind* of conflict for
//! the report. `40003` (statement completion unknown; CockroachDB's "result is ambiguous")
//! is never retried: the transaction may have committed, and running it again could apply it
//! twice.

use crate::SqlState;

/// A PostgreSQL-compatible engine, from its version text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    PostgreSql,
    YugabyteDb,
    CockroachDb,
}

impl Engine {
    /// The engine behind `version()` / `server_version` text.
    pub fn of_version(version: &str) -> Engine {
        let v = version.to_ascii_lowercase();
        if v.contains("-yb-") || v.contains("yugabyte") {
            Engine::YugabyteDb
        } else if v.contains("cockroach") {
            Engine::CockroachDb
        } else {
            Engine::PostgreSql
        }
    }

    /// `"postgresql"`, `"yugabytedb"` or `"cockroachdb"` (as stored in result files).
    pub fn name(self) -> &'static str {
        match self {
            Engine::PostgreSql => "postgresql",
            Engine::YugabyteDb => "yugabytedb",
            Engine::CockroachDb => "cockroachdb",
        }
    }

    pub fn parse(name: &str) -> Option<Engine> {
        match name.to_ascii_lowercase().as_str() {
            "postgresql" | "postgres" | "pg" => Some(Engine::PostgreSql),
            "yugabytedb" | "yugabyte" | "yb" => Some(Engine::YugabyteDb),
            "cockroachdb" | "cockroach" | "crdb" => Some(Engine::CockroachDb),
            _ => None,
        }
    }

    /// The client-side retry settings the engine's documentation recommends for contended
    /// transactions (PostgreSQL: pgbench's defaults, one try).
    pub fn retry_defaults(self) -> RetryDefaults {
        match self {
            Engine::PostgreSql => RetryDefaults {
                max_tries: 1,
                backoff: "none",
            },
            // YugabyteDB's YSQL retry guidance: up to 10 attempts, exponential back-off
            // starting at 2 ms and doubling (2, 4, … 1,024 ms).
            Engine::YugabyteDb => RetryDefaults {
                max_tries: 10,
                backoff: "exp:2ms:1024ms:2",
            },
            // CockroachDB's client-side retry example: exponential back-off of 2^n × 100 ms
            // (plus jitter) with a bounded number of retries.
            Engine::CockroachDb => RetryDefaults {
                max_tries: 10,
                backoff: "exp:100ms:3200ms:2",
            },
        }
    }
}

/// A retry policy in `--max-tries` / `--retry-backoff` terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryDefaults {
    pub max_tries: u32,
    /// In `--retry-backoff` syntax.
    pub backoff: &'static str,
}

/// What a client should do after a server error inside a transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// A conflict: rolled back, safe to run again (within `--max-tries`).
    Retry,
    /// The outcome is unknown (the commit may have happened): never run it again blindly.
    Ambiguous,
    /// Any other error: retried only when the user asked for its SQLSTATE (`--retry-on`).
    Other,
}

/// A server error as the engine profile sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Classified {
    pub verdict: Verdict,
    /// The kind of conflict for reports (`read restart`, `priority conflict`, …); empty for
    /// errors that are not conflicts.
    pub kind: &'static str,
}

/// Classifies a server error. The verdict depends on the SQLSTATE alone; the message only
/// picks the kind.
pub fn classify(engine: Engine, code: SqlState, message: &str) -> Classified {
    let verdict = if code.is_retryable_by_default() {
        Verdict::Retry
    } else if code.is_outcome_unknown() {
        Verdict::Ambiguous
    } else {
        Verdict::Other
    };
    let kind = match (verdict, code) {
        (Verdict::Retry, SqlState::DEADLOCK_DETECTED) => "deadlock",
        (Verdict::Retry, _) => conflict_kind(engine, message),
        (Verdict::Ambiguous, _) => "ambiguous result",
        (Verdict::Other, _) => "",
    };
    Classified { verdict, kind }
}

/// Whether `code` may be given to `--retry-on`: an ambiguous outcome may already be
/// committed, so retrying it is refused with this reason.
pub fn refuse_retry_of(code: SqlState) -> Option<&'static str> {
    code.is_outcome_unknown().then_some(
        "40003 (statement completion unknown, \"result is ambiguous\") is never retried: \
         the transaction may have committed, and running it again could apply it twice",
    )
}

fn conflict_kind(engine: Engine, message: &str) -> &'static str {
    let m = message.to_ascii_lowercase();
    let has = |needle: &str| m.contains(needle);
    match engine {
        Engine::YugabyteDb if has("restart read required") => "read restart",
        Engine::YugabyteDb if has("conflicts with higher priority transaction") => {
            "priority conflict"
        }
        Engine::YugabyteDb if has("value write after transaction start") => {
            "write after transaction start"
        }
        Engine::YugabyteDb if has("conflicts with committed transaction") => {
            "conflict with committed transaction"
        }
        Engine::YugabyteDb if has("transaction aborted") || has("transaction expired") => {
            "transaction aborted"
        }
        Engine::CockroachDb if has("writetooold") || has("retry_write_too_old") => "write too old",
        Engine::CockroachDb if has("retry_serializable") => "serializable push",
        Engine::CockroachDb if has("readwithinuncertaintyinterval") => "uncertainty interval",
        Engine::CockroachDb if has("abort_reason") || has("transactionabortederror") => {
            "transaction aborted"
        }
        Engine::CockroachDb if has("restart transaction") => "restart transaction",
        _ => "serialization failure",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn engines_from_version_strings() {
        let e = Engine::of_version;
        assert_eq!(e("PostgreSQL 15.18 (Debian) on x86_64"), Engine::PostgreSql);
        assert_eq!(e("11.2-YB-2.21.0.1-b0"), Engine::YugabyteDb);
        assert_eq!(
            e("CockroachDB CCL v23.1.11 (x86_64-pc-linux-gnu)"),
            Engine::CockroachDb
        );
        for engine in [Engine::PostgreSql, Engine::YugabyteDb, Engine::CockroachDb] {
            assert_eq!(Engine::parse(engine.name()), Some(engine));
        }
        assert_eq!(Engine::parse("oracle"), None);
    }

    /// The messages each engine's documentation shows for its conflicts.
    #[test]
    fn yugabytedb_conflicts_retry_by_sqlstate_and_are_named_by_message() {
        let yb = |msg| classify(Engine::YugabyteDb, SqlState::SERIALIZATION_FAILURE, msg);
        let cases = [
            ("Restart read required at: { read: { physical: 1 } }", "read restart"),
            (
                "could not serialize access due to concurrent update (query layer retry isn't possible because data was already sent): Conflicts with higher priority transaction: 4ad0",
                "priority conflict",
            ),
            (
                "Value write after transaction start: { physical: 17 } >= { physical: 16 }",
                "write after transaction start",
            ),
            ("Transaction aborted: kAborted", "transaction aborted"),
            ("something new", "serialization failure"),
        ];
        for (msg, kind) in cases {
            let c = yb(msg);
            assert_eq!(c.verdict, Verdict::Retry, "{msg}");
            assert_eq!(c.kind, kind, "{msg}");
        }
    }

    #[test]
    fn cockroachdb_ambiguous_results_are_never_retried() {
        let c = classify(
            Engine::CockroachDb,
            SqlState::SERIALIZATION_FAILURE,
            "restart transaction: TransactionRetryWithProtoRefreshError: WriteTooOldError: write for key /Table/1 at timestamp 1 too old",
        );
        assert_eq!(
            c,
            Classified {
                verdict: Verdict::Retry,
                kind: "write too old"
            }
        );
        let c = classify(
            Engine::CockroachDb,
            SqlState::SERIALIZATION_FAILURE,
            "restart transaction: TransactionRetryWithProtoRefreshError: TransactionRetryError: retry txn (RETRY_SERIALIZABLE - failed preemptive refresh)",
        );
        assert_eq!(c.kind, "serializable push");
        let c = classify(
            Engine::CockroachDb,
            SqlState::STATEMENT_COMPLETION_UNKNOWN,
            "result is ambiguous: error=rpc error",
        );
        assert_eq!(c.verdict, Verdict::Ambiguous);
        // The SQLSTATE decides, on every engine: a message that looks like a conflict under
        // another code is not retried.
        let c = classify(
            Engine::PostgreSql,
            SqlState::INTERNAL_ERROR,
            "restart transaction: Restart read required",
        );
        assert_eq!(c.verdict, Verdict::Other);
        assert!(refuse_retry_of(SqlState::STATEMENT_COMPLETION_UNKNOWN).is_some());
        assert!(refuse_retry_of(SqlState::LOCK_NOT_AVAILABLE).is_none());
    }

    #[test]
    fn postgresql_keeps_pgbench_defaults() {
        assert_eq!(Engine::PostgreSql.retry_defaults().max_tries, 1);
        let yb = Engine::YugabyteDb.retry_defaults();
        assert_eq!((yb.max_tries, yb.backoff), (10, "exp:2ms:1024ms:2"));
        assert_eq!(
            classify(
                Engine::PostgreSql,
                SqlState::DEADLOCK_DETECTED,
                "deadlock detected"
            )
            .kind,
            "deadlock"
        );
    }
}
