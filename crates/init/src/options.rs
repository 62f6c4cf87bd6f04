//! What `hotbench run -i` was asked to do: pgbench's initialization options, validated with
//! pgbench 15's rules and wording so the CLI can pass flags straight through.
//!
//! The CLI parses flags; this module owns the checks that depend on pgbench semantics
//! (`checkInitSteps`, the `-F`/`-s`/`--partitions` ranges, `--partition-method` needing
//! `--partitions`) and the step string pgbench really runs (`-n` blanks out `v`,
//! `--foreign-keys` appends `f`).

use std::str::FromStr;

use crate::error::InitError;

pub use crate::steps::{ALL_INIT_STEPS, DEFAULT_INIT_STEPS};
/// Rows of `pgbench_branches` per scale unit.
pub const NBRANCHES: i64 = 1;
/// Rows of `pgbench_tellers` per scale unit.
pub const NTELLERS: i64 = 10;
/// Rows of `pgbench_accounts` per scale unit.
pub const NACCOUNTS: i64 = 100_000;
/// From this scale on, account ids are `bigint` (pgbench's `SCALE_32BIT_THRESHOLD`).
pub const SCALE_32BIT_THRESHOLD: i32 = 20_000;
/// Default fill factor.
pub const DEFAULT_FILLFACTOR: i32 = 100;

/// How `pgbench_accounts` is partitioned (`--partition-method`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PartitionMethod {
    /// `partition by range (aid)`, open-ended first and last partitions.
    Range,
    /// `partition by hash (aid)`.
    Hash,
}

impl PartitionMethod {
    /// The keyword used in DDL and in pgbench's report (`range`, `hash`).
    pub fn as_str(self) -> &'static str {
        match self {
            PartitionMethod::Range => "range",
            PartitionMethod::Hash => "hash",
        }
    }
}

impl std::fmt::Display for PartitionMethod {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for PartitionMethod {
    type Err = InitError;

    /// Case-insensitive, as pgbench (`pg_strcasecmp`).
    fn from_str(s: &str) -> Result<Self, InitError> {
        if s.eq_ignore_ascii_case("range") {
            Ok(PartitionMethod::Range)
        } else if s.eq_ignore_ascii_case("hash") {
            Ok(PartitionMethod::Hash)
        } else {
            Err(InitError::InvalidOption(format!(
                "invalid partition method, expecting \"range\" or \"hash\", got: \"{s}\""
            )))
        }
    }
}

/// pgbench's initialization options.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InitOptions {
    /// `-I`: steps to run, from [`ALL_INIT_STEPS`] and spaces.
    pub steps: String,
    /// `-s`: scale factor (≥ 1).
    pub scale: i32,
    /// `-F`: fill factor of branches, tellers and accounts (10..=100).
    pub fillfactor: i32,
    /// `--unlogged-tables`.
    pub unlogged_tables: bool,
    /// `--foreign-keys`: adds step `f` if missing.
    pub foreign_keys: bool,
    /// `--tablespace`.
    pub tablespace: Option<String>,
    /// `--index-tablespace`.
    pub index_tablespace: Option<String>,
    /// `--partitions` (0 = not partitioned).
    pub partitions: i32,
    /// `--partition-method`; `None` = not given (range when `partitions > 0`).
    pub partition_method: Option<PartitionMethod>,
    /// `-q`: a progress line every 5 s instead of every 100,000 rows.
    pub quiet: bool,
    /// `-n`: removes every `v` from the steps.
    pub no_vacuum: bool,
    /// Progress lines end in `\r` (one updating line) when writing to a terminal, as
    /// pgbench does. `None`: ask whether this process's stderr is a terminal.
    pub terminal: Option<bool>,
}

impl Default for InitOptions {
    fn default() -> Self {
        InitOptions {
            steps: DEFAULT_INIT_STEPS.to_string(),
            scale: 1,
            fillfactor: DEFAULT_FILLFACTOR,
            unlogged_tables: false,
            foreign_keys: false,
            tablespace: None,
            index_tablespace: None,
            partitions: 0,
            partition_method: None,
            quiet: false,
            no_vacuum: false,
            terminal: None,
        }
    }
}

/// pgbench's `checkInitSteps`: non-empty, only [`ALL_INIT_STEPS`] and spaces.
pub fn check_init_steps(steps: &str) -> Result<(), InitError> {
    if steps.is_empty() {
        return Err(InitError::NoSteps);
    }
    match steps
        .chars()
        .find(|c| *c != ' ' && !ALL_INIT_STEPS.contains(*c))
    {
        Some(c) => Err(InitError::UnrecognizedStep(c)),
        None => Ok(()),
    }
}

fn range_error(option: &str, min: i32, max: i32) -> InitError {
    InitError::InvalidOption(format!("{option} must be in range {min}..{max}"))
}

impl InitOptions {
    /// All of pgbench's checks on initialization options, in pgbench's order.
    pub fn validate(&self) -> Result<(), InitError> {
        check_init_steps(&self.steps)?;
        if self.scale < 1 {
            return Err(range_error("-s/--scale", 1, i32::MAX));
        }
        if !(10..=100).contains(&self.fillfactor) {
            return Err(range_error("-F/--fillfactor", 10, 100));
        }
        if self.partitions < 0 {
            return Err(range_error("--partitions", 0, i32::MAX));
        }
        if self.partitions == 0 && self.partition_method.is_some() {
            return Err(InitError::InvalidOption(
                "--partition-method requires greater than zero --partitions".into(),
            ));
        }
        Ok(())
    }

    /// The steps pgbench really runs: `-n` turns each `v` into a space, `--foreign-keys`
    /// appends `f` unless present.
    pub fn effective_steps(&self) -> String {
        let mut steps: String = if self.no_vacuum {
            self.steps
                .chars()
                .map(|c| if c == 'v' { ' ' } else { c })
                .collect()
        } else {
            self.steps.clone()
        };
        if self.foreign_keys && !steps.contains('f') {
            steps.push('f');
        }
        steps
    }

    /// The partitioning in effect: `--partition-method`, or range when only
    /// `--partitions` was given; `None` when not partitioned.
    pub fn effective_partition_method(&self) -> Option<PartitionMethod> {
        if self.partitions > 0 {
            Some(self.partition_method.unwrap_or(PartitionMethod::Range))
        } else {
            None
        }
    }

    /// Total rows of `pgbench_accounts`.
    pub fn accounts(&self) -> i64 {
        NACCOUNTS * i64::from(self.scale)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_are_checked_like_pgbench() {
        assert!(check_init_steps("dtgGvpf").is_ok());
        assert!(check_init_steps(" d t ").is_ok());
        assert_eq!(
            check_init_steps("").unwrap_err().to_string(),
            "no initialization steps specified"
        );
        let e = check_init_steps("dtx").unwrap_err();
        assert_eq!(e.to_string(), "unrecognized initialization step \"x\"");
        assert_eq!(
            e.detail().as_deref(),
            Some("Allowed step characters are: \"dtgGvpf\".")
        );
    }

    #[test]
    fn option_ranges_have_pgbench_wording() {
        let bad = |o: InitOptions| o.validate().unwrap_err().to_string();
        let d = InitOptions::default();
        assert!(d.validate().is_ok());
        assert_eq!(
            bad(InitOptions {
                fillfactor: 5,
                ..d.clone()
            }),
            "-F/--fillfactor must be in range 10..100"
        );
        assert_eq!(
            bad(InitOptions {
                scale: 0,
                ..d.clone()
            }),
            "-s/--scale must be in range 1..2147483647"
        );
        assert_eq!(
            bad(InitOptions {
                partitions: -1,
                ..d.clone()
            }),
            "--partitions must be in range 0..2147483647"
        );
        assert_eq!(
            bad(InitOptions {
                partition_method: Some(PartitionMethod::Hash),
                ..d.clone()
            }),
            "--partition-method requires greater than zero --partitions"
        );
    }

    #[test]
    fn partition_method_parsing() {
        assert_eq!(
            "HASH".parse::<PartitionMethod>().ok(),
            Some(PartitionMethod::Hash)
        );
        assert_eq!(
            "range".parse::<PartitionMethod>().ok(),
            Some(PartitionMethod::Range)
        );
        assert_eq!(
            "foo".parse::<PartitionMethod>().unwrap_err().to_string(),
            "invalid partition method, expecting \"range\" or \"hash\", got: \"foo\""
        );
        let o = InitOptions {
            partitions: 3,
            ..InitOptions::default()
        };
        assert_eq!(o.effective_partition_method(), Some(PartitionMethod::Range));
        assert_eq!(InitOptions::default().effective_partition_method(), None);
    }

    #[test]
    fn no_vacuum_and_foreign_keys_rewrite_steps() {
        let o = InitOptions {
            steps: "dtvgvp".into(),
            no_vacuum: true,
            foreign_keys: true,
            ..InitOptions::default()
        };
        assert_eq!(o.effective_steps(), "dt g pf");
        let o = InitOptions {
            steps: "dtfg".into(),
            foreign_keys: true,
            ..InitOptions::default()
        };
        assert_eq!(o.effective_steps(), "dtfg");
    }
}
