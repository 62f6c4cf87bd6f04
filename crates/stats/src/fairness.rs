//! Whether clients got their fair share: per-client commits and p99, Jain's fairness index
//! per group (1 = all equal, 1/n = one client got everything) and the starved clients (fewer
//! than a quarter of the group's median client's commits). Under a hot row, lock queues are
//! not FIFO for every engine and mode; this is where that shows.

use serde::{Deserialize, Serialize};

use crate::coarse::CoarseHistogram;

/// What one client did (kept per client by its worker thread).
#[derive(Debug, Clone, Default)]
pub struct ClientTally {
    pub committed: u64,
    pub failed: u64,
    pub latency: CoarseHistogram,
}

/// One client in the result record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClientRecord {
    /// `client_id`.
    pub id: usize,
    pub group: String,
    pub committed: u64,
    pub failed: u64,
    /// Coarse (~9% resolution) p99 of its committed transactions, ms; 0 without any.
    pub p99_ms: f64,
}

/// A client group's fairness.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GroupFairness {
    pub group: String,
    pub clients: usize,
    /// Jain's index of committed transactions per client; null when nobody committed.
    pub jain_index: Option<f64>,
    pub median_committed: f64,
    /// `client_id`s with fewer than a quarter of the median client's commits.
    pub starved: Vec<usize>,
}

impl ClientRecord {
    pub fn from_tally(id: usize, group: &str, t: &ClientTally) -> ClientRecord {
        ClientRecord {
            id,
            group: group.to_string(),
            committed: t.committed,
            failed: t.failed,
            p99_ms: t.latency.quantile_ms(0.99),
        }
    }
}

/// Fairness per group, in the order groups first appear in `clients`.
pub fn fairness(clients: &[ClientRecord]) -> Vec<GroupFairness> {
    let mut groups: Vec<&str> = Vec::new();
    for c in clients {
        if !groups.contains(&c.group.as_str()) {
            groups.push(&c.group);
        }
    }
    groups
        .into_iter()
        .map(|g| {
            let members: Vec<&ClientRecord> = clients.iter().filter(|c| c.group == g).collect();
            let xs: Vec<f64> = members.iter().map(|c| c.committed as f64).collect();
            let sum: f64 = xs.iter().sum();
            let sum_sq: f64 = xs.iter().map(|x| x * x).sum();
            let jain_index = (sum_sq > 0.0).then(|| sum * sum / (xs.len() as f64 * sum_sq));
            let median_committed = median(&xs);
            let starved = members
                .iter()
                .filter(|c| (c.committed as f64) < median_committed / 4.0)
                .map(|c| c.id)
                .collect();
            GroupFairness {
                group: g.to_string(),
                clients: members.len(),
                jain_index,
                median_committed,
                starved,
            }
        })
        .collect()
}

fn median(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        return 0.0;
    }
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn client(id: usize, group: &str, committed: u64) -> ClientRecord {
        ClientRecord {
            id,
            group: group.into(),
            committed,
            failed: 0,
            p99_ms: 0.0,
        }
    }

    #[test]
    fn equal_shares_are_fair_and_a_starved_client_is_named() {
        let even: Vec<_> = (0..4).map(|i| client(i, "a", 100)).collect();
        let f = fairness(&even);
        assert_eq!(f.len(), 1);
        assert!((f[0].jain_index.unwrap() - 1.0).abs() < 1e-12);
        assert!(f[0].starved.is_empty());

        let mut skewed: Vec<_> = (0..4).map(|i| client(i, "a", 100)).collect();
        skewed[2].committed = 10;
        skewed.push(client(9, "b", 0));
        let f = fairness(&skewed);
        assert_eq!(f[0].starved, vec![2]);
        // (310)² / (4 · 30,100) = 0.798…
        assert!((f[0].jain_index.unwrap() - 96_100.0 / 120_400.0).abs() < 1e-12);
        assert_eq!(f[1].group, "b");
        assert_eq!(f[1].jain_index, None);
        assert!(
            f[1].starved.is_empty(),
            "nobody is starved when nobody commits"
        );

        // One client got everything: the index is 1/n.
        let hog: Vec<_> = (0..5)
            .map(|i| client(i, "a", u64::from(i == 0) * 50))
            .collect();
        assert!((fairness(&hog)[0].jain_index.unwrap() - 0.2).abs() < 1e-12);
    }
}
