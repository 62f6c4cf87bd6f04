//! SQLSTATE codes hotbench reacts to, as one typed value, and their classification.
//!
//! Server errors are classified by SQLSTATE, never by message text (see
//! `docs/architecture.md`). The constants are the five-character codes of the PostgreSQL
//! manual's appendix A that hotbench names; the methods group them the way the engine's retry
//! logic, the connection phase, the probes and the report need them. Compared as five bytes,
//! without allocation, so the engine can classify every server error on the hot path.

/// A SQLSTATE as a value: five ASCII letters or digits, upper-case.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SqlState([u8; 5]);

impl SqlState {
    /// `40001` serialization_failure: retried by pgbench 15+.
    pub const SERIALIZATION_FAILURE: SqlState = SqlState(*b"40001");
    /// `40P01` deadlock_detected: retried by pgbench 15+.
    pub const DEADLOCK_DETECTED: SqlState = SqlState(*b"40P01");
    /// `40003` statement_completion_unknown (CockroachDB's "result is ambiguous").
    pub const STATEMENT_COMPLETION_UNKNOWN: SqlState = SqlState(*b"40003");
    /// `40002` transaction_integrity_constraint_violation.
    pub const TRANSACTION_INTEGRITY_CONSTRAINT_VIOLATION: SqlState = SqlState(*b"40002");
    /// `55P03` lock_not_available (`NOWAIT`, `lock_timeout`).
    pub const LOCK_NOT_AVAILABLE: SqlState = SqlState(*b"55P03");
    /// `57014` query_canceled (cancel request, `statement_timeout`).
    pub const QUERY_CANCELED: SqlState = SqlState(*b"57014");
    /// `57P01` admin_shutdown (server shutting down, `pg_terminate_backend`).
    pub const ADMIN_SHUTDOWN: SqlState = SqlState(*b"57P01");
    /// `57P02` crash_shutdown.
    pub const CRASH_SHUTDOWN: SqlState = SqlState(*b"57P02");
    /// `57P03` cannot_connect_now (server starting up or in recovery).
    pub const CANNOT_CONNECT_NOW: SqlState = SqlState(*b"57P03");
    /// `57P04` database_dropped.
    pub const DATABASE_DROPPED: SqlState = SqlState(*b"57P04");
    /// `57P05` idle_session_timeout.
    pub const IDLE_SESSION_TIMEOUT: SqlState = SqlState(*b"57P05");
    /// `25P03` idle_in_transaction_session_timeout.
    pub const IDLE_IN_TRANSACTION_SESSION_TIMEOUT: SqlState = SqlState(*b"25P03");
    /// `25P02` in_failed_sql_transaction.
    pub const IN_FAILED_SQL_TRANSACTION: SqlState = SqlState(*b"25P02");
    /// `08000` connection_exception.
    pub const CONNECTION_EXCEPTION: SqlState = SqlState(*b"08000");
    /// `08006` connection_failure.
    pub const CONNECTION_FAILURE: SqlState = SqlState(*b"08006");
    /// `08P01` protocol_violation.
    pub const PROTOCOL_VIOLATION: SqlState = SqlState(*b"08P01");
    /// `28P01` invalid_password.
    pub const INVALID_PASSWORD: SqlState = SqlState(*b"28P01");
    /// `28000` invalid_authorization_specification (no pg_hba.conf entry, unknown role).
    pub const INVALID_AUTHORIZATION_SPECIFICATION: SqlState = SqlState(*b"28000");
    /// `3D000` invalid_catalog_name (unknown database).
    pub const INVALID_CATALOG_NAME: SqlState = SqlState(*b"3D000");
    /// `53300` too_many_connections.
    pub const TOO_MANY_CONNECTIONS: SqlState = SqlState(*b"53300");
    /// `42501` insufficient_privilege.
    pub const INSUFFICIENT_PRIVILEGE: SqlState = SqlState(*b"42501");
    /// `42P01` undefined_table.
    pub const UNDEFINED_TABLE: SqlState = SqlState(*b"42P01");
    /// `42703` undefined_column.
    pub const UNDEFINED_COLUMN: SqlState = SqlState(*b"42703");
    /// `42883` undefined_function.
    pub const UNDEFINED_FUNCTION: SqlState = SqlState(*b"42883");
    /// `42704` undefined_object.
    pub const UNDEFINED_OBJECT: SqlState = SqlState(*b"42704");
    /// `42601` syntax_error.
    pub const SYNTAX_ERROR: SqlState = SqlState(*b"42601");
    /// `42P07` duplicate_table.
    pub const DUPLICATE_TABLE: SqlState = SqlState(*b"42P07");
    /// `42710` duplicate_object.
    pub const DUPLICATE_OBJECT: SqlState = SqlState(*b"42710");
    /// `23505` unique_violation.
    pub const UNIQUE_VIOLATION: SqlState = SqlState(*b"23505");
    /// `23503` foreign_key_violation.
    pub const FOREIGN_KEY_VIOLATION: SqlState = SqlState(*b"23503");
    /// `22012` division_by_zero.
    pub const DIVISION_BY_ZERO: SqlState = SqlState(*b"22012");
    /// `22P02` invalid_text_representation.
    pub const INVALID_TEXT_REPRESENTATION: SqlState = SqlState(*b"22P02");
    /// `26000` invalid_sql_statement_name (unknown prepared statement).
    pub const INVALID_SQL_STATEMENT_NAME: SqlState = SqlState(*b"26000");
    /// `0A000` feature_not_supported.
    pub const FEATURE_NOT_SUPPORTED: SqlState = SqlState(*b"0A000");
    /// `XX000` internal_error.
    pub const INTERNAL_ERROR: SqlState = SqlState(*b"XX000");

    /// Parses a code as the user or the server writes it (case-insensitive).
    pub fn parse(code: &str) -> Result<SqlState, String> {
        let b = code.as_bytes();
        if b.len() != 5 || !b.iter().all(u8::is_ascii_alphanumeric) {
            return Err(format!(
                "invalid SQLSTATE \"{code}\": expected five characters such as 55P03"
            ));
        }
        let mut out = [0u8; 5];
        for (o, c) in out.iter_mut().zip(b) {
            *o = c.to_ascii_uppercase();
        }
        Ok(SqlState(out))
    }

    /// The code as text (`"40P01"`).
    pub fn as_str(&self) -> &str {
        // Only ASCII alphanumerics are ever stored.
        std::str::from_utf8(&self.0).unwrap_or("?????")
    }

    /// The two-character class (`40P01` → `"40"`).
    pub fn class(&self) -> &str {
        &self.as_str()[..2]
    }

    /// `40001`: the transaction lost a serialization conflict.
    pub fn is_serialization_failure(self) -> bool {
        self == SqlState::SERIALIZATION_FAILURE
    }

    /// `40P01`: the transaction was chosen as a deadlock victim.
    pub fn is_deadlock(self) -> bool {
        self == SqlState::DEADLOCK_DETECTED
    }

    /// Serialization failure or deadlock: the errors pgbench retries (`--max-tries`).
    pub fn is_retryable_by_default(self) -> bool {
        self.is_serialization_failure() || self.is_deadlock()
    }

    /// `40003`: the commit may or may not have happened, so running the transaction again
    /// could apply it twice; never retried.
    pub fn is_outcome_unknown(self) -> bool {
        self == SqlState::STATEMENT_COMPLETION_UNKNOWN
    }

    /// Class 40, transaction rollback (serialization failure, deadlock, …).
    pub fn is_transaction_rollback(self) -> bool {
        self.class() == "40"
    }

    /// Class 08, connection exception.
    pub fn is_connection_exception(self) -> bool {
        self.class() == "08"
    }

    /// The server is going away or not accepting connections: the session is lost
    /// (57P01–57P05, and class 08).
    pub fn is_connection_lost(self) -> bool {
        matches!(
            self,
            SqlState::ADMIN_SHUTDOWN
                | SqlState::CRASH_SHUTDOWN
                | SqlState::CANNOT_CONNECT_NOW
                | SqlState::DATABASE_DROPPED
                | SqlState::IDLE_SESSION_TIMEOUT
        ) || self.is_connection_exception()
    }

    /// Class 28, invalid authorization (bad password, no pg_hba.conf entry).
    pub fn is_auth_failure(self) -> bool {
        self.class() == "28"
    }

    /// The object a query names does not exist on this server (table, column, function):
    /// an older server or one without the extension.
    pub fn is_undefined_object(self) -> bool {
        matches!(
            self,
            SqlState::UNDEFINED_TABLE
                | SqlState::UNDEFINED_COLUMN
                | SqlState::UNDEFINED_FUNCTION
                | SqlState::UNDEFINED_OBJECT
        )
    }
}

impl std::fmt::Display for SqlState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::fmt::Debug for SqlState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SqlState({})", self.as_str())
    }
}

impl std::str::FromStr for SqlState {
    type Err = String;
    fn from_str(s: &str) -> Result<SqlState, String> {
        SqlState::parse(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(text: &str) -> SqlState {
        SqlState::parse(text).unwrap()
    }

    #[test]
    fn classes() {
        assert_eq!(code("40P01").class(), "40");
        assert!(code("40001").is_retryable_by_default());
        assert!(code("40P01").is_retryable_by_default());
        assert!(!code("40003").is_retryable_by_default());
        assert!(code("40003").is_outcome_unknown());
        assert!(code("40003").is_transaction_rollback());
        assert!(code("08P01").is_connection_exception());
        assert!(code("57P01").is_connection_lost());
        assert!(code("08006").is_connection_lost());
        assert!(!code("57014").is_connection_lost());
        assert!(code("28P01").is_auth_failure());
        assert!(code("42883").is_undefined_object());
        assert!(!code("42501").is_undefined_object());
    }

    #[test]
    fn typed_codes_parse_case_insensitively_and_reject_bad_text() {
        assert_eq!(SqlState::parse("40p01"), Ok(SqlState::DEADLOCK_DETECTED));
        assert_eq!(SqlState::SERIALIZATION_FAILURE.as_str(), "40001");
        assert_eq!(code("55P03"), SqlState::LOCK_NOT_AVAILABLE);
        assert_eq!(code("55P03").class(), "55");
        assert!(SqlState::parse("55P0").is_err());
        assert!(SqlState::parse("55P03x").is_err());
        assert!(SqlState::parse("55-03").is_err());
        assert!(SqlState::parse("").is_err());
        assert!(SqlState::DEADLOCK_DETECTED.is_retryable_by_default());
        assert!(!SqlState::LOCK_NOT_AVAILABLE.is_retryable_by_default());
    }
}
