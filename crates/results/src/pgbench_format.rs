//! Which pgbench version hotbench's output follows (`--pgbench-compat N`), and the one table of
//! what differs between pgbench 15 and 19. Everything that prints like pgbench (the flag
//! rewriting in cli, the report in report, the transaction log in engine) asks this table
//! instead of comparing version numbers, so a version's behaviour is described in one place.
//!
//! Checked against the real programs (15.18, 17.10, 18.6) and against pgbench.c of
//! PostgreSQL 15, 18 and master (19, for `--continue-on-error`'s additions); 16 prints as 15
//! and 17 do (pgbench.c's report and log code did not change between them).

use serde::{Deserialize, Serialize};

/// The oldest and newest versions `--pgbench-compat` accepts.
pub const OLDEST: u32 = 15;
pub const NEWEST: u32 = 19;

/// What a pgbench version prints differently from the others.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Traits {
    pub version: u32,
    /// `-d` is `--dbname` (17 on); before, `-d` is `--debug`.
    pub d_is_dbname: bool,
    /// The per-script section counts all of the script's transactions
    /// (`- N transactions (x% of total)`, processed + failed + skipped) and adds
    /// `- number of transactions actually processed: N (tps = …)` (18 on). Before, the
    /// first line counts processed ones only, as a share of all processed, with the tps.
    pub per_script_processed_line: bool,
    /// When no transaction was even tried (all aborted), the report stops after
    /// `number of transactions actually processed` (18 on). Before, it goes on with
    /// `number of failed transactions: 0 (NaN%)` and the retry lines, and stops there
    /// when nothing succeeded or was skipped.
    pub stops_when_nothing_tried: bool,
    /// `-r` columns are separated by one space after the failures column (18 on); before,
    /// by two.
    pub narrow_statement_columns: bool,
    /// Other SQL failures (`--continue-on-error`) are reported on their own (19): the
    /// `number of other failures` lines under `--failures-detailed`, a 16th field in the
    /// aggregate log, `other` in the per-transaction log.
    pub other_failures: bool,
}

const TABLE: [Traits; 5] = [
    v(15, false, false, false, false, false),
    v(16, false, false, false, false, false),
    v(17, true, false, false, false, false),
    v(18, true, true, true, true, false),
    v(19, true, true, true, true, true),
];

const fn v(
    version: u32,
    d_is_dbname: bool,
    per_script_processed_line: bool,
    stops_when_nothing_tried: bool,
    narrow_statement_columns: bool,
    other_failures: bool,
) -> Traits {
    Traits {
        version,
        d_is_dbname,
        per_script_processed_line,
        stops_when_nothing_tried,
        narrow_statement_columns,
        other_failures,
    }
}

/// A pgbench version to follow; 15 by default (the report existing parsers were written
/// for). Stored in the result record, so a report rendered later keeps the run's format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct PgbenchCompat(u32);

impl Default for PgbenchCompat {
    fn default() -> Self {
        PgbenchCompat(OLDEST)
    }
}

impl PgbenchCompat {
    /// A version in `OLDEST..=NEWEST`, or None.
    pub fn new(version: u32) -> Option<PgbenchCompat> {
        (OLDEST..=NEWEST)
            .contains(&version)
            .then_some(PgbenchCompat(version))
    }

    pub fn version(self) -> u32 {
        self.0
    }

    /// This version's row of the table (a record from a newer hotbench with an unknown
    /// version gets the newest row, an older one the oldest).
    pub fn traits(self) -> Traits {
        let v = self.0.clamp(OLDEST, NEWEST);
        TABLE[(v - OLDEST) as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_row_per_version_in_order() {
        assert_eq!(TABLE.len() as u32, NEWEST - OLDEST + 1);
        for (i, t) in TABLE.iter().enumerate() {
            assert_eq!(t.version, OLDEST + i as u32);
            assert_eq!(PgbenchCompat::new(t.version).unwrap().traits(), *t);
        }
        assert!(PgbenchCompat::new(14).is_none() && PgbenchCompat::new(20).is_none());
        assert_eq!(PgbenchCompat::default().version(), 15);
    }

    #[test]
    fn versions_differ_where_pgbench_changed() {
        let t = |n| PgbenchCompat::new(n).unwrap().traits();
        assert_eq!(
            t(16),
            Traits {
                version: 16,
                ..t(15)
            }
        );
        assert!(!t(16).d_is_dbname && t(17).d_is_dbname);
        assert!(!t(17).per_script_processed_line && t(18).per_script_processed_line);
        assert!(!t(17).narrow_statement_columns && t(18).narrow_statement_columns);
        assert!(!t(18).other_failures && t(19).other_failures);
    }

    #[test]
    fn stored_as_a_plain_number_and_absent_means_15() {
        let c = PgbenchCompat::new(18).unwrap();
        assert_eq!(serde_json::to_string(&c).unwrap(), "18");
        let back: PgbenchCompat = serde_json::from_str("18").unwrap();
        assert_eq!(back, c);
        #[derive(Deserialize)]
        struct Old {
            #[serde(default)]
            compat: PgbenchCompat,
        }
        let old: Old = serde_json::from_str("{}").unwrap();
        assert_eq!(old.compat.version(), 15);
    }
}
