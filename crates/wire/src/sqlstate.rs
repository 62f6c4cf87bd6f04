//! SQLSTATE codes hotbench reacts to, and their classification.
//!
//! Server errors are classified by SQLSTATE, never by message text (see
//! `docs/architecture.md`). The constants are the five-character codes of the PostgreSQL
//! manual's appendix A; the helpers group them the way the engine's retry logic and the
//! report need them.

/// `40001` serialization_failure: retried by pgbench 15+.
pub const SERIALIZATION_FAILURE: &str = "40001";
/// `40P01` deadlock_detected: retried by pgbench 15+.
pub const DEADLOCK_DETECTED: &str = "40P01";
/// `40003` statement_completion_unknown.
pub const STATEMENT_COMPLETION_UNKNOWN: &str = "40003";
/// `40002` transaction_integrity_constraint_violation.
pub const TRANSACTION_INTEGRITY_CONSTRAINT_VIOLATION: &str = "40002";
/// `55P03` lock_not_available (`NOWAIT`, `lock_timeout`).
pub const LOCK_NOT_AVAILABLE: &str = "55P03";
/// `57014` query_canceled (cancel request, `statement_timeout`).
pub const QUERY_CANCELED: &str = "57014";
/// `57P01` admin_shutdown (server shutting down, `pg_terminate_backend`).
pub const ADMIN_SHUTDOWN: &str = "57P01";
/// `57P02` crash_shutdown.
pub const CRASH_SHUTDOWN: &str = "57P02";
/// `57P03` cannot_connect_now (server starting up or in recovery).
pub const CANNOT_CONNECT_NOW: &str = "57P03";
/// `57P04` database_dropped.
pub const DATABASE_DROPPED: &str = "57P04";
/// `57P05` idle_session_timeout.
pub const IDLE_SESSION_TIMEOUT: &str = "57P05";
/// `25P03` idle_in_transaction_session_timeout.
pub const IDLE_IN_TRANSACTION_SESSION_TIMEOUT: &str = "25P03";
/// `25P02` in_failed_sql_transaction.
pub const IN_FAILED_SQL_TRANSACTION: &str = "25P02";
/// `08000` connection_exception.
pub const CONNECTION_EXCEPTION: &str = "08000";
/// `08006` connection_failure.
pub const CONNECTION_FAILURE: &str = "08006";
/// `08P01` protocol_violation.
pub const PROTOCOL_VIOLATION: &str = "08P01";
/// `28P01` invalid_password.
pub const INVALID_PASSWORD: &str = "28P01";
/// `28000` invalid_authorization_specification (no pg_hba.conf entry, unknown role).
pub const INVALID_AUTHORIZATION_SPECIFICATION: &str = "28000";
/// `3D000` invalid_catalog_name (unknown database).
pub const INVALID_CATALOG_NAME: &str = "3D000";
/// `53300` too_many_connections.
pub const TOO_MANY_CONNECTIONS: &str = "53300";
/// `42P01` undefined_table.
pub const UNDEFINED_TABLE: &str = "42P01";
/// `42703` undefined_column.
pub const UNDEFINED_COLUMN: &str = "42703";
/// `42883` undefined_function.
pub const UNDEFINED_FUNCTION: &str = "42883";
/// `42601` syntax_error.
pub const SYNTAX_ERROR: &str = "42601";
/// `42P07` duplicate_table.
pub const DUPLICATE_TABLE: &str = "42P07";
/// `42710` duplicate_object.
pub const DUPLICATE_OBJECT: &str = "42710";
/// `23505` unique_violation.
pub const UNIQUE_VIOLATION: &str = "23505";
/// `23503` foreign_key_violation.
pub const FOREIGN_KEY_VIOLATION: &str = "23503";
/// `22012` division_by_zero.
pub const DIVISION_BY_ZERO: &str = "22012";
/// `26000` invalid_sql_statement_name (unknown prepared statement).
pub const INVALID_SQL_STATEMENT_NAME: &str = "26000";
/// `0A000` feature_not_supported.
pub const FEATURE_NOT_SUPPORTED: &str = "0A000";
/// `XX000` internal_error.
pub const INTERNAL_ERROR: &str = "XX000";

/// A SQLSTATE as a value: five ASCII letters or digits, upper-case. Compared without
/// allocation, so the engine can classify every server error on the hot path.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SqlState([u8; 5]);

impl SqlState {
    /// `40001`, see [`SERIALIZATION_FAILURE`].
    pub const SERIALIZATION_FAILURE: SqlState = SqlState(*b"40001");
    /// `40P01`, see [`DEADLOCK_DETECTED`].
    pub const DEADLOCK_DETECTED: SqlState = SqlState(*b"40P01");

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
        class(self.as_str())
    }

    /// Serialization failure or deadlock: the errors pgbench retries (`--max-tries`).
    pub fn is_retryable_by_default(self) -> bool {
        self == SqlState::SERIALIZATION_FAILURE || self == SqlState::DEADLOCK_DETECTED
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

/// The two-character class of a SQLSTATE (`"40001"` → `"40"`); the whole code if shorter.
pub fn class(code: &str) -> &str {
    code.get(..2).unwrap_or(code)
}

/// Serialization failure or deadlock: the errors pgbench retries (`--max-tries`).
pub fn is_retryable_by_default(code: &str) -> bool {
    SqlState::parse(code).is_ok_and(SqlState::is_retryable_by_default)
}

/// Class 08, connection exception.
pub fn is_connection_exception(code: &str) -> bool {
    class(code) == "08"
}

/// Class 40, transaction rollback (serialization failure, deadlock, …).
pub fn is_transaction_rollback(code: &str) -> bool {
    class(code) == "40"
}

/// The server is going away or not accepting connections: the session is lost
/// (57P01–57P05, and class 08).
pub fn is_server_shutdown(code: &str) -> bool {
    matches!(
        code,
        ADMIN_SHUTDOWN
            | CRASH_SHUTDOWN
            | CANNOT_CONNECT_NOW
            | DATABASE_DROPPED
            | IDLE_SESSION_TIMEOUT
    ) || is_connection_exception(code)
}

/// Class 28, invalid authorization (bad password, no pg_hba.conf entry).
pub fn is_auth_failure(code: &str) -> bool {
    class(code) == "28"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes() {
        assert_eq!(class("40P01"), "40");
        assert_eq!(class("4"), "4");
        assert!(is_retryable_by_default("40001"));
        assert!(is_retryable_by_default("40P01"));
        assert!(!is_retryable_by_default("40003"));
        assert!(is_transaction_rollback("40003"));
        assert!(is_connection_exception("08P01"));
        assert!(is_server_shutdown("57P01"));
        assert!(is_server_shutdown("08006"));
        assert!(!is_server_shutdown("57014"));
        assert!(is_auth_failure("28P01"));
    }

    #[test]
    fn typed_codes_parse_case_insensitively_and_reject_bad_text() {
        assert_eq!(SqlState::parse("40p01"), Ok(SqlState::DEADLOCK_DETECTED));
        assert_eq!(
            SqlState::parse("40001").unwrap().as_str(),
            SERIALIZATION_FAILURE
        );
        assert_eq!(SqlState::parse("55P03").unwrap().class(), "55");
        assert!(SqlState::parse("55P0").is_err());
        assert!(SqlState::parse("55P03x").is_err());
        assert!(SqlState::parse("55-03").is_err());
        assert!(SqlState::DEADLOCK_DETECTED.is_retryable_by_default());
        assert!(!SqlState::parse("55P03").unwrap().is_retryable_by_default());
    }
}
