//! Ladders behind a connection pooler that hotbench runs. The benchmark clients go through
//! it; the scenario's own sessions (setup, checks, monitors, background holders) and the
//! probes go straight to the server, so they neither take server connections from the pool
//! being measured nor queue behind its clients. What the clients' sessions need cannot ride
//! on start-up parameters (PgBouncer refuses `options`): the [`ClientRoute`] puts the
//! scenario's settings, its schema on the search path first, in force on every server
//! connection its clients get.
//!
//! A transaction pool gives a client a server connection per transaction, so session state
//! does not follow it: a variant that declares `needs = ["session"]` is not run there (the
//! ladder says why), and protocol-level prepared statements (`query_mode = "prepared"`)
//! become `extended` on a PgBouncer that cannot keep them (before 1.21), with a note.

use hotbench_engine::QueryMode;
use hotbench_results::PoolerSetup;
use hotbench_wire::Config;

use crate::manifest::{Need, Variant};

/// How a ladder's benchmark clients reach the server through a pooler (plugged in by the
/// binary, which starts and owns the pooler).
pub trait ClientRoute {
    /// Connection options for a variant's clients with `settings` in force on every server
    /// connection they get.
    fn clients(&self, base: &Config, settings: &[(String, String)]) -> Result<Config, String>;
    /// The pooler, for the record and notes.
    fn setup(&self) -> PoolerSetup;
    /// Does a client keep one server connection for its whole session (session pooling)?
    fn keeps_sessions(&self) -> bool;
    /// Are protocol-level prepared statements kept between a client's transactions?
    fn keeps_prepared_statements(&self) -> bool;
}

/// Why `v` is not run behind `route` (`None`: it runs).
pub fn refusal(v: &Variant, route: Option<&dyn ClientRoute>) -> Option<String> {
    let route = route?;
    if route.keeps_sessions() || !v.needs.contains(&Need::Session) {
        return None;
    }
    Some(format!(
        "needs session state (needs = [\"session\"]), which a transaction pool does not keep \
         between a client's transactions ({})",
        route.setup().describe()
    ))
}

/// The query mode the clients use behind `route`, and a note when it is not `mode`.
pub fn query_mode(mode: QueryMode, route: Option<&dyn ClientRoute>) -> (QueryMode, Option<String>) {
    match route {
        Some(r) if mode == QueryMode::Prepared && !r.keeps_prepared_statements() => (
            QueryMode::Extended,
            Some(format!(
                "query mode extended, not prepared: {} keeps no prepared statements \
                 between a client's transactions",
                r.setup().describe()
            )),
        ),
        _ => (mode, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Pool {
        sessions: bool,
        prepared: bool,
    }

    impl ClientRoute for Pool {
        fn clients(&self, base: &Config, _: &[(String, String)]) -> Result<Config, String> {
            Ok(base.clone())
        }
        fn setup(&self) -> PoolerSetup {
            PoolerSetup {
                kind: "pgbouncer".into(),
                version: "1.18.0".into(),
                pool_mode: if self.sessions {
                    "session"
                } else {
                    "transaction"
                }
                .into(),
                pool_size: Some(10),
                started_by_hotbench: true,
            }
        }
        fn keeps_sessions(&self) -> bool {
            self.sessions
        }
        fn keeps_prepared_statements(&self) -> bool {
            self.prepared
        }
    }

    fn variant(needs: Vec<Need>) -> Variant {
        let mut v: Variant = toml::from_str("name = \"v\"\nscript = \"a.sql\"").expect("variant");
        v.needs = needs;
        v
    }

    #[test]
    fn a_session_variant_is_refused_by_a_transaction_pool_only() {
        let tx = Pool {
            sessions: false,
            prepared: false,
        };
        let session = Pool {
            sessions: true,
            prepared: true,
        };
        let needy = variant(vec![Need::Session]);
        let why = refusal(&needy, Some(&tx)).expect("refused");
        assert!(why.contains("transaction pool of 10"), "{why}");
        assert_eq!(refusal(&needy, Some(&session)), None);
        assert_eq!(
            refusal(&needy, None),
            None,
            "direct connections keep sessions"
        );
        assert_eq!(refusal(&variant(Vec::new()), Some(&tx)), None);
    }

    #[test]
    fn prepared_becomes_extended_where_the_pool_cannot_keep_statements() {
        let tx = Pool {
            sessions: false,
            prepared: false,
        };
        let (m, note) = query_mode(QueryMode::Prepared, Some(&tx));
        assert_eq!(m, QueryMode::Extended);
        assert!(note.is_some_and(|n| n.starts_with("query mode extended, not prepared")));
        assert_eq!(
            query_mode(QueryMode::Simple, Some(&tx)),
            (QueryMode::Simple, None)
        );
        assert_eq!(
            query_mode(QueryMode::Prepared, None),
            (QueryMode::Prepared, None)
        );
    }
}
