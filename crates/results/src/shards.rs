//! Which inputs of `merge` are shards of one run (`hotbench run --shard I/N`): all or none
//! of them, one run key, one shard count, each index once. Shards of different runs are
//! refused; missing shards are named in the merged result's notes; each shard's status is
//! kept beside the merged one.

use crate::{RunRecord, ShardPart, ShardsRecord};

/// The shards found among merge inputs.
#[derive(Debug, Clone, PartialEq)]
pub struct Shards {
    pub count: u64,
    pub run_key: String,
    /// `(index, input name, status, clients)`, by index.
    pub parts: Vec<(u64, String, String, usize)>,
}

impl Shards {
    pub fn missing(&self) -> Vec<u64> {
        (0..self.count)
            .filter(|i| !self.parts.iter().any(|p| p.0 == *i))
            .collect()
    }

    pub fn note(&self) -> Option<String> {
        let missing = self.missing();
        (!missing.is_empty()).then(|| {
            format!(
                "incomplete run: {} of {} shards merged (missing shard {})",
                self.parts.len(),
                self.count,
                missing
                    .iter()
                    .map(u64::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })
    }

    /// What a merged result records of its shards (`config.shards`).
    pub fn record(&self) -> ShardsRecord {
        ShardsRecord {
            count: self.count,
            run_key: self.run_key.clone(),
            missing: self.missing(),
            parts: self
                .parts
                .iter()
                .map(|(index, file, status, clients)| ShardPart {
                    index: *index,
                    file: file.clone(),
                    status: status.clone(),
                    clients: *clients,
                })
                .collect(),
        }
    }
}

/// `Ok(None)` when no input is a shard; an error naming the offending input otherwise.
pub fn check(records: &[(String, RunRecord)]) -> Result<Option<Shards>, String> {
    let of = |r: &RunRecord| -> Option<(u64, u64, String)> {
        let s = r.config.shard.as_ref()?;
        Some((s.index as u64, s.count as u64, s.run_key.clone()))
    };
    let Some((first_name, first)) = records.iter().find_map(|(n, r)| of(r).map(|s| (n, s))) else {
        return Ok(None);
    };
    let mut shards = Shards {
        count: first.1,
        run_key: first.2.clone(),
        parts: Vec::new(),
    };
    for (name, r) in records {
        let Some((index, count, key)) = of(r) else {
            return Err(format!(
                "{name} is not a shard, but {first_name} is: merge the shards of one run only"
            ));
        };
        if key != shards.run_key || count != shards.count {
            return Err(format!(
                "{name} is shard {index}/{count} of another run than {first_name} \
                 (run key {key} vs {}): shards must share their settings, seed and --start-at",
                shards.run_key
            ));
        }
        if shards.parts.iter().any(|p| p.0 == index) {
            return Err(format!("{name} repeats shard {index}/{count}"));
        }
        shards
            .parts
            .push((index, name.clone(), r.status.to_string(), r.bench.clients));
    }
    shards.parts.sort_by_key(|p| p.0);
    Ok(Some(shards))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A one-shard record of run `key` (also used by `merge`'s tests).
    pub(crate) fn shard(index: u64, count: u64, key: &str) -> RunRecord {
        let mut r = crate::testdata::record("select 1", 1_700_000_000.0, 2, 10, 1.0);
        r.config.shard = Some(crate::ShardConfig {
            index: index as usize,
            count: count as usize,
            run_key: key.into(),
            ..Default::default()
        });
        r
    }

    #[test]
    fn shards_of_one_run_are_found_and_missing_ones_are_named() {
        let recs = vec![
            ("b.json".to_string(), shard(2, 3, "k")),
            ("a.json".to_string(), shard(0, 3, "k")),
        ];
        let s = check(&recs).unwrap().unwrap();
        assert_eq!(s.parts.iter().map(|p| p.0).collect::<Vec<_>>(), vec![0, 2]);
        assert_eq!(s.missing(), vec![1]);
        assert!(s.note().unwrap().contains("missing shard 1"));
    }

    #[test]
    fn shards_of_different_runs_or_repeated_are_refused() {
        let other = vec![
            ("a".to_string(), shard(0, 2, "k")),
            ("b".to_string(), shard(1, 2, "other")),
        ];
        assert!(check(&other).unwrap_err().contains("another run"));
        let twice = vec![
            ("a".to_string(), shard(0, 2, "k")),
            ("b".to_string(), shard(0, 2, "k")),
        ];
        assert!(check(&twice).unwrap_err().contains("repeats shard 0/2"));
        let mixed = vec![
            ("a".to_string(), shard(0, 2, "k")),
            (
                "plain".to_string(),
                crate::testdata::record("x", 1.0, 1, 1, 1.0),
            ),
        ];
        assert!(check(&mixed).unwrap_err().contains("plain is not a shard"));
        let none = vec![(
            "plain".to_string(),
            crate::testdata::record("x", 1.0, 1, 1, 1.0),
        )];
        assert_eq!(check(&none).unwrap(), None);
    }
}
