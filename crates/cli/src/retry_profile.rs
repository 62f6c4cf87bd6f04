//! `--retry-profile`: which engine's client retry conventions a run follows. `pgbench` (the
//! default) keeps pgbench's one try, so a pgbench command line behaves the same; `auto`
//! follows the engine detected at connection; an engine name forces that engine's. Explicit
//! `--max-tries` / `--retry-backoff` always win over the profile.

use hotbench_engine::{Backoff, RetryPolicy};
use hotbench_wire::Engine;

use crate::fail::{Fail, Result};

/// The parsed `--retry-profile` value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RetryProfile {
    Pgbench,
    Auto,
    Engine(Engine),
}

impl RetryProfile {
    pub fn parse(text: Option<&str>) -> Result<RetryProfile> {
        match text {
            None | Some("pgbench") => Ok(RetryProfile::Pgbench),
            Some("auto") => Ok(RetryProfile::Auto),
            Some(t) => Engine::parse(t).map(RetryProfile::Engine).ok_or_else(|| {
                Fail::input(format!(
                    "invalid --retry-profile \"{t}\": expected pgbench, auto, postgresql, yugabytedb or cockroachdb"
                ))
            }),
        }
    }

    /// The engine whose defaults apply, for a server that is `detected`.
    fn engine(self, detected: Engine) -> Option<Engine> {
        match self {
            RetryProfile::Pgbench => None,
            RetryProfile::Auto => Some(detected),
            RetryProfile::Engine(e) => Some(e),
        }
    }
}

/// `--retry-on` codes the profile refuses (an ambiguous outcome may already be committed).
pub fn check_retry_on(codes: &[hotbench_wire::SqlState]) -> Result<()> {
    for code in codes {
        if let Some(why) = hotbench_wire::engine_profile::refuse_retry_of(*code) {
            return Err(Fail::input(format!("invalid --retry-on: {why}")));
        }
    }
    Ok(())
}

/// `retry` with the profile's defaults filled in where the user gave no value of their own.
pub fn apply(
    profile: RetryProfile,
    detected: Engine,
    explicit_max_tries: bool,
    explicit_backoff: bool,
    mut retry: RetryPolicy,
) -> Result<RetryPolicy> {
    let Some(engine) = profile.engine(detected) else {
        return Ok(retry);
    };
    let defaults = engine.retry_defaults();
    if !explicit_max_tries {
        retry.max_tries = defaults.max_tries;
    }
    if !explicit_backoff {
        retry.backoff = Backoff::parse(defaults.backoff).map_err(Fail::run)?;
    }
    Ok(retry)
}

#[cfg(test)]
mod tests {
    use super::*;
    use hotbench_wire::SqlState;

    #[test]
    fn pgbench_profile_changes_nothing_and_explicit_values_win() {
        let base = RetryPolicy::default();
        let same = apply(
            RetryProfile::Pgbench,
            Engine::YugabyteDb,
            false,
            false,
            base.clone(),
        )
        .unwrap();
        assert_eq!(same, base);
        let yb = apply(
            RetryProfile::Auto,
            Engine::YugabyteDb,
            false,
            false,
            base.clone(),
        )
        .unwrap();
        assert_eq!(yb.max_tries, 10);
        assert_eq!(
            yb.backoff,
            Backoff::Exp {
                min_us: 2_000,
                max_us: 1_024_000,
                mult: 2.0
            }
        );
        let mut mine = base.clone();
        mine.max_tries = 3;
        let kept = apply(
            RetryProfile::Engine(Engine::CockroachDb),
            Engine::PostgreSql,
            true,
            false,
            mine,
        )
        .unwrap();
        assert_eq!(kept.max_tries, 3);
        assert_ne!(kept.backoff, Backoff::None);
    }

    #[test]
    fn bad_profiles_and_ambiguous_codes_are_input_errors() {
        let e = RetryProfile::parse(Some("oracle")).unwrap_err();
        assert_eq!(e.code, 1);
        assert!(e.message.contains("\"oracle\""), "{}", e.message);
        assert_eq!(
            RetryProfile::parse(Some("yb")).unwrap(),
            RetryProfile::Engine(Engine::YugabyteDb)
        );
        let e = check_retry_on(&[
            SqlState::LOCK_NOT_AVAILABLE,
            SqlState::STATEMENT_COMPLETION_UNKNOWN,
        ])
        .unwrap_err();
        assert!(e.message.contains("never retried"), "{}", e.message);
        assert!(check_retry_on(&[SqlState::LOCK_NOT_AVAILABLE]).is_ok());
    }
}
