//! Which keys hurt (`hotbench run --key VAR`): per value of a script variable at the end of
//! each transaction, its attempts, commits, failures by SQLSTATE, retries, latency and share
//! of all transaction time. Memory is bounded: past `capacity` distinct values the table
//! becomes a Space-Saving sketch (Metwally et al.): a new value replaces the one with the
//! fewest attempts and inherits its count as an over-estimate, so the heavy hitters stay
//! exact or nearly so and the report says the counts became approximate.

use std::collections::BTreeMap;
use std::hash::BuildHasher;

use foldhash::fast::RandomState;
use hashbrown::HashTable;

use serde::{Deserialize, Serialize};

use crate::key_latency::{HistogramPool, KeyLatency};

/// Longest key value kept, in bytes. A script may set its key variable to anything (a
/// megabyte of text); a longer value is cut on a character boundary and ends with
/// [`CUT_MARKER`], so each entry costs at most this much whatever the script draws (values
/// alike in their first bytes count as one key).
pub const MAX_KEY_BYTES: usize = 256;

/// The end of a key value cut at [`MAX_KEY_BYTES`].
pub const CUT_MARKER: &str = "…";

/// `text` as a key: itself when short enough, else its first [`MAX_KEY_BYTES`] bytes (on a
/// character boundary) and [`CUT_MARKER`], written into `buf`.
pub fn bounded_key<'a>(text: &'a str, buf: &'a mut String) -> &'a str {
    if text.len() <= MAX_KEY_BYTES {
        return text;
    }
    let mut end = MAX_KEY_BYTES;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    buf.clear();
    buf.push_str(&text[..end]);
    buf.push_str(CUT_MARKER);
    buf
}

/// A variable's value as a key, as the table stores it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum KeyValue {
    Int(i64),
    Text(String),
}

/// A variable's value as a key, borrowed: what a transaction looks up (no allocation unless
/// the value is new to the table, and none for integers).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyRef<'a> {
    Int(i64),
    Text(&'a str),
}

impl KeyValue {
    pub fn key_ref(&self) -> KeyRef<'_> {
        match self {
            KeyValue::Int(i) => KeyRef::Int(*i),
            KeyValue::Text(t) => KeyRef::Text(t),
        }
    }

    /// Becomes `key`, reusing a text key's buffer for a text key.
    fn set(&mut self, key: KeyRef<'_>) {
        match (self, key) {
            (KeyValue::Text(mine), KeyRef::Text(t)) => {
                mine.clear();
                mine.push_str(t);
            }
            (mine, key) => *mine = key.to_value(),
        }
    }
}

impl KeyRef<'_> {
    pub fn to_value(self) -> KeyValue {
        match self {
            KeyRef::Int(i) => KeyValue::Int(i),
            KeyRef::Text(t) => KeyValue::Text(t.to_string()),
        }
    }
}

impl std::fmt::Display for KeyValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            KeyValue::Int(i) => write!(f, "{i}"),
            KeyValue::Text(t) => f.write_str(t),
        }
    }
}

/// One transaction's outcome, as the key table counts it.
#[derive(Debug, Clone, Copy)]
pub struct KeyOutcome<'a> {
    /// Tries it took (1 + retries).
    pub tries: u32,
    pub committed: bool,
    /// SQLSTATE of the failure, for failed transactions.
    pub failed_with: Option<&'a str>,
    /// From its scheduled start to its end, µs.
    pub latency_us: u64,
}

/// An entry's figures but its attempts (kept apart, densely, for the minimum scan).
#[derive(Debug, Clone, Default)]
struct KeyStats {
    committed: u64,
    /// Empty (no allocation) unless the key's transactions fail.
    failed: BTreeMap<String, u64>,
    retries: u64,
    time_us: u64,
    latency: KeyLatency,
    /// Attempts inherited from an evicted key (Space-Saving's error bound).
    overestimate: u64,
}

#[derive(Debug, Clone)]
struct Entry {
    key: KeyValue,
    /// The key's hash, so that evicting it does not hash it again.
    hash: u64,
    stats: KeyStats,
}

/// Per-variable key table of one thread (or of the whole run once merged).
#[derive(Debug, Clone)]
pub struct KeySketch {
    pub variable: String,
    capacity: usize,
    entries: Vec<Entry>,
    /// Each entry's attempts, by entry index: the minimum scan reads 8 bytes per entry.
    attempts: Vec<u64>,
    /// Entry indexes by key hash. A table of indexes rather than a map of keys: an evicted
    /// value's index is left behind, stale (a lookup compares the entry's current key, so it
    /// never matches again), because removing it costs two cache misses on nearly every
    /// transaction once the table is a sketch; the table is rebuilt from the entries when
    /// stale indexes reach as many as live ones (memory stays bounded by 2 × capacity).
    /// Each index is stored with 32 more bits of its key's hash ([`check_bits`]): a lookup
    /// reads an entry only when they match too, not on every 7-bit tag collision (a value
    /// new to the table, the common case once it is a sketch, then reads no entry at all).
    index: HashTable<(u32, u32)>,
    /// foldhash for text keys, not SipHash: keys are hashed on every transaction (no
    /// untrusted input picks them adversarially beyond what the script draws).
    hasher: RandomState,
    /// Integer keys are hashed inline with this random seed (see [`KeySketch::hash_of`]).
    int_seed: u64,
    /// Latency histograms of the entries seen more than a few times.
    pool: HistogramPool,
    /// The fewest attempts of any entry when the table was last scanned, and the entries
    /// that had exactly that many (some may have grown since: skipped when popped). Counts
    /// only grow, so a candidate still at `min_attempts` has the fewest: eviction is O(1)
    /// without a sorted index to update on every transaction, and a rescan (allocation-free)
    /// happens once the candidates run out — after about as many evictions as entries share
    /// the minimum, which in a full table is most of them.
    min_attempts: u64,
    min_candidates: Vec<u32>,
    /// Values were evicted: counts are Space-Saving estimates.
    pub approximate: bool,
    /// Transaction time over all keys, µs (evicted ones included).
    total_time_us: u64,
    /// Transactions over all keys (evicted ones included).
    total_transactions: u64,
}

/// One key in the result record.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HotKeyRecord {
    pub variable: String,
    pub value: String,
    pub attempts: u64,
    pub committed: u64,
    /// Failed transactions by SQLSTATE.
    pub failed: BTreeMap<String, u64>,
    pub retries: u64,
    pub p50_ms: f64,
    pub p99_ms: f64,
    /// This key's share of all transaction time (0..1).
    pub time_share: f64,
    /// Upper bound of the over-count of `attempts` (0 while the table is exact).
    #[serde(default)]
    pub attempts_error: u64,
}

/// The hash bits an index keeps to filter lookups: the high half (hashbrown's 7-bit tag is
/// the top of it and the bucket comes from the low bits, so ~25 of these are independent).
#[inline]
fn check_bits(hash: u64) -> u32 {
    (hash >> 32) as u32
}

impl KeySketch {
    pub fn new(variable: &str, capacity: usize) -> KeySketch {
        KeySketch {
            variable: variable.to_string(),
            // Entry indexes are u32.
            capacity: capacity.clamp(1, u32::MAX as usize),
            entries: Vec::new(),
            attempts: Vec::new(),
            index: HashTable::new(),
            hasher: RandomState::default(),
            int_seed: RandomState::default().hash_one(0x9e37_79b9_7f4a_7c15u64),
            pool: HistogramPool::default(),
            min_attempts: 0,
            min_candidates: Vec::new(),
            approximate: false,
            total_time_us: 0,
            total_transactions: 0,
        }
    }

    /// Counts one transaction under `key`.
    pub fn record(&mut self, key: KeyRef<'_>, o: KeyOutcome<'_>) {
        self.total_time_us += o.latency_us;
        self.total_transactions += 1;
        let i = self.slot_for(key);
        self.attempts[i] += u64::from(o.tries.max(1));
        let s = &mut self.entries[i].stats;
        s.retries += u64::from(o.tries.saturating_sub(1));
        s.time_us += o.latency_us;
        if o.committed {
            s.committed += 1;
            s.latency.record_us(o.latency_us, &mut self.pool);
        } else if let Some(code) = o.failed_with {
            match s.failed.get_mut(code) {
                Some(n) => *n += 1,
                None => {
                    s.failed.insert(code.to_string(), 1);
                }
            }
        }
    }

    /// The hash of `key`. An integer's is one folded multiply, inline (foldhash's own
    /// integer mixing, without its out-of-line call through the Hash trait): it runs on
    /// every transaction. An integer and a text may collide: lookups compare the key.
    #[inline]
    fn hash_of(&self, key: KeyRef<'_>) -> u64 {
        match key {
            KeyRef::Int(i) => {
                let p = u128::from(i as u64 ^ self.int_seed) * 0x5851_f42d_4c95_7f2d_u128;
                (p as u64) ^ ((p >> 64) as u64)
            }
            KeyRef::Text(t) => self.hasher.hash_one(t),
        }
    }

    /// The entry of `key`: its own, a new one, or an evicted value's (the caller then adds
    /// at least one attempt).
    fn slot_for(&mut self, key: KeyRef<'_>) -> usize {
        let hash = self.hash_of(key);
        let entries = &self.entries;
        if let Some(&(i, _)) = self.index.find(hash, |&(i, bits)| {
            bits == check_bits(hash) && entries[i as usize].key.key_ref() == key
        }) {
            return i as usize;
        }
        if self.entries.len() < self.capacity {
            let i = self.entries.len();
            self.entries.push(Entry {
                key: key.to_value(),
                hash,
                stats: KeyStats::default(),
            });
            self.attempts.push(0);
            let entries = &self.entries;
            self.index
                .insert_unique(hash, (i as u32, check_bits(hash)), |&(j, _)| {
                    entries[j as usize].hash
                });
            return i;
        }
        // Space-Saving: the least-attempted value makes room and leaves its count behind.
        // Its entry is reset in place: past capacity this runs on nearly every transaction,
        // so it must not allocate (an integer key never does; a text key reuses the buffer).
        self.approximate = true;
        let (min, i) = self.least_attempted();
        let e = &mut self.entries[i];
        e.key.set(key);
        e.hash = hash;
        let s = &mut e.stats;
        s.overestimate = min;
        s.committed = 0;
        s.failed.clear();
        s.retries = 0;
        s.time_us = 0;
        s.latency.clear(&mut self.pool);
        self.attempts[i] = min;
        if self.index.len() >= 2 * self.entries.len() {
            self.rebuild_index(); // indexes the new value too
        } else {
            let entries = &self.entries;
            self.index
                .insert_unique(hash, (i as u32, check_bits(hash)), |&(j, _)| {
                    entries[j as usize].hash
                });
        }
        i
    }

    /// Drops the stale indexes: the table again holds one per entry (its allocation kept).
    fn rebuild_index(&mut self) {
        self.index.clear();
        let entries = &self.entries;
        for (i, e) in entries.iter().enumerate() {
            self.index
                .insert_unique(e.hash, (i as u32, check_bits(e.hash)), |&(j, _)| {
                    entries[j as usize].hash
                });
        }
    }

    /// The entry with the fewest attempts (the table is full, so not empty).
    fn least_attempted(&mut self) -> (u64, usize) {
        loop {
            while let Some(i) = self.min_candidates.pop() {
                if self.attempts[i as usize] == self.min_attempts {
                    return (self.min_attempts, i as usize);
                }
            }
            let Some(&min) = self.attempts.iter().min() else {
                return (0, 0);
            };
            self.min_attempts = min;
            let attempts = &self.attempts;
            self.min_candidates.extend(
                (0..attempts.len() as u32)
                    .rev()
                    .filter(|&i| attempts[i as usize] == min),
            );
        }
    }

    /// Adds another thread's table (same variable).
    pub fn merge(&mut self, o: &KeySketch) {
        self.approximate |= o.approximate;
        self.total_time_us += o.total_time_us;
        self.total_transactions += o.total_transactions;
        for (e, &their_attempts) in o.entries.iter().zip(&o.attempts) {
            let i = self.slot_for(e.key.key_ref());
            self.attempts[i] += their_attempts;
            let theirs = &e.stats;
            let s = &mut self.entries[i].stats;
            s.committed += theirs.committed;
            for (code, n) in &theirs.failed {
                *s.failed.entry(code.clone()).or_insert(0) += n;
            }
            s.retries += theirs.retries;
            s.time_us += theirs.time_us;
            s.latency.merge(&theirs.latency, &o.pool, &mut self.pool);
            s.overestimate += theirs.overestimate;
        }
    }

    /// Each kept value's transactions (attempts less retries: one draw of the key per
    /// transaction) and the transactions over all values.
    pub fn transaction_counts(&self) -> (Vec<u64>, u64) {
        let counts = self
            .entries
            .iter()
            .zip(&self.attempts)
            .map(|(e, &a)| a.saturating_sub(e.stats.retries))
            .collect();
        (counts, self.total_transactions)
    }

    /// Transactions counted under this variable (0: no transaction ended with it set).
    pub fn transactions(&self) -> u64 {
        self.total_transactions
    }

    pub fn distinct(&self) -> usize {
        self.entries.len()
    }

    /// The keys, by share of transaction time, largest first.
    pub fn records(&self) -> Vec<HotKeyRecord> {
        let total = self.total_time_us.max(1) as f64;
        let mut out: Vec<HotKeyRecord> = self
            .entries
            .iter()
            .zip(&self.attempts)
            .map(|(e, &attempts)| {
                let s = &e.stats;
                HotKeyRecord {
                    variable: self.variable.clone(),
                    value: e.key.to_string(),
                    attempts,
                    committed: s.committed,
                    failed: s.failed.clone(),
                    retries: s.retries,
                    p50_ms: s.latency.quantile_ms(0.5, &self.pool),
                    p99_ms: s.latency.quantile_ms(0.99, &self.pool),
                    time_share: s.time_us as f64 / total,
                    attempts_error: s.overestimate,
                }
            })
            .collect();
        out.sort_by(|a, b| {
            b.time_share
                .total_cmp(&a.time_share)
                .then(b.attempts.cmp(&a.attempts))
        });
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn ok(latency_us: u64) -> KeyOutcome<'static> {
        KeyOutcome {
            tries: 1,
            committed: true,
            failed_with: None,
            latency_us,
        }
    }

    #[test]
    fn exact_below_capacity_sorted_by_time_share() {
        let mut s = KeySketch::new("c", 10);
        for _ in 0..4 {
            s.record(KeyRef::Int(1), ok(1_000));
        }
        s.record(KeyRef::Int(2), ok(1_000));
        s.record(
            KeyRef::Int(2),
            KeyOutcome {
                tries: 3,
                committed: false,
                failed_with: Some("40001"),
                latency_us: 5_000,
            },
        );
        let r = s.records();
        assert!(!s.approximate);
        assert_eq!(r[0].value, "2");
        assert!((r[0].time_share - 6.0 / 10.0).abs() < 1e-12);
        assert_eq!((r[0].attempts, r[0].retries, r[0].committed), (4, 2, 1));
        assert_eq!(r[0].failed.get("40001"), Some(&1));
        assert_eq!((r[1].value.as_str(), r[1].attempts), ("1", 4));
        assert!((r[1].p99_ms - 1.0).abs() < 0.1, "{}", r[1].p99_ms);
    }

    #[test]
    fn space_saving_guarantees_hold() {
        // A skewed stream over 300 values into 20 entries: every count bounds the true one
        // from above within its error, counts add up to the stream, and every value seen
        // more than n / capacity times is kept.
        let mut s = KeySketch::new("k", 20);
        let mut truth: HashMap<i64, u64> = HashMap::new();
        let mut x: u64 = 42;
        let n = 20_000u64;
        for _ in 0..n {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let u = (x >> 33) as f64 / (1u64 << 31) as f64;
            let key = (300.0 * u.powi(4)) as i64;
            *truth.entry(key).or_insert(0) += 1;
            s.record(KeyRef::Int(key), ok(10));
        }
        let r = s.records();
        assert_eq!(r.iter().map(|k| k.attempts).sum::<u64>(), n);
        for k in &r {
            let t = truth[&k.value.parse::<i64>().unwrap()];
            assert!(
                k.attempts >= t && k.attempts - k.attempts_error <= t,
                "{k:?} true {t}"
            );
        }
        for (key, &t) in &truth {
            if t > n / 20 {
                assert!(
                    r.iter().any(|k| k.value == key.to_string()),
                    "{key} ({t}) lost"
                );
            }
        }
    }

    #[test]
    fn an_evicted_entry_keeps_only_its_count() {
        let mut s = KeySketch::new("k", 1);
        s.record(KeyRef::Int(1), ok(100_000));
        s.record(
            KeyRef::Int(1),
            KeyOutcome {
                tries: 2,
                committed: false,
                failed_with: Some("40001"),
                latency_us: 100_000,
            },
        );
        s.record(KeyRef::Int(2), ok(1_000));
        let r = s.records();
        assert_eq!(r.len(), 1);
        let k = &r[0];
        assert_eq!(k.value, "2");
        assert_eq!((k.attempts, k.attempts_error), (4, 3));
        assert_eq!((k.committed, k.retries), (1, 0));
        assert!(k.failed.is_empty());
        assert!((k.p99_ms - 1.0).abs() < 0.1, "{}", k.p99_ms);
        assert_eq!(s.transaction_counts(), (vec![4], 3));
    }

    #[test]
    fn an_evicted_frequent_key_gives_back_its_histogram_and_its_successor_starts_clean() {
        let mut s = KeySketch::new("k", 1);
        for _ in 0..10 {
            s.record(KeyRef::Int(1), ok(100_000));
        }
        assert_eq!(s.pool.in_use(), 1, "ten samples live in a pooled histogram");
        s.record(KeyRef::Int(2), ok(1_234));
        assert_eq!(s.pool.in_use(), 0, "the evicted key's histogram went back");
        let r = s.records();
        assert_eq!((r[0].value.as_str(), r[0].committed), ("2", 1));
        // One sample, inline: its exact latency, nothing of the 100 ms predecessor.
        assert_eq!((r[0].p50_ms, r[0].p99_ms), (1.234, 1.234));
        for _ in 0..10 {
            s.record(KeyRef::Int(2), ok(2_000));
        }
        assert_eq!(s.pool.in_use(), 1);
        let r = s.records();
        assert!((r[0].p99_ms - 2.0).abs() < 0.2, "{}", r[0].p99_ms);
        assert!(
            r[0].p50_ms < 50.0,
            "no sample of the predecessor: {}",
            r[0].p50_ms
        );
    }

    #[test]
    fn an_evicted_value_left_in_the_index_never_matches_and_the_index_stays_bounded() {
        let mut s = KeySketch::new("k", 2);
        for key in [1, 1, 1, 2, 3] {
            s.record(KeyRef::Int(key), ok(1_000));
        }
        // 2 was evicted for 3 (its stale index now points at 3's entry); 2 again is new and
        // takes the least attempted entry, 3's.
        s.record(KeyRef::Int(2), ok(5_000));
        let r = s.records();
        let two = r.iter().find(|k| k.value == "2").expect("2 kept");
        assert_eq!((two.attempts, two.attempts_error, two.committed), (3, 2, 1));
        assert_eq!(two.p99_ms, 5.0, "none of 3's latency");
        assert!(r.iter().any(|k| k.value == "1" && k.attempts == 3));
        for key in 10..10_000 {
            s.record(KeyRef::Int(key), ok(10));
            assert!(s.index.len() <= 2 * s.capacity, "{} indexes", s.index.len());
        }
        assert_eq!(
            s.records().iter().map(|k| k.attempts).sum::<u64>(),
            6 + 9_990
        );
    }

    #[test]
    fn text_keys_are_found_and_replaced_in_place() {
        let mut s = KeySketch::new("k", 2);
        for name in ["alice", "bob", "alice", "alice", "carol"] {
            s.record(KeyRef::Text(name), ok(1_000));
        }
        s.record(KeyRef::Int(7), ok(1_000));
        let r = s.records();
        assert_eq!(r.len(), 2);
        assert_eq!((r[0].value.as_str(), r[0].attempts), ("alice", 3));
        // carol took bob's entry (1 + 1 attempts); 7 then took carol's (2 + 1).
        assert_eq!(
            (r[1].value.as_str(), r[1].attempts, r[1].attempts_error),
            ("7", 3, 2)
        );
        assert_eq!(s.transaction_counts().1, 6);
    }

    #[test]
    fn heavy_hitters_survive_a_bounded_table_and_threads_merge() {
        // Key 0 takes a third of the traffic; 10,000 other keys share the rest.
        let mut a = KeySketch::new("k", 50);
        let mut b = KeySketch::new("k", 50);
        for i in 0..30_000i64 {
            let key = if i % 3 == 0 { 0 } else { 1 + i % 10_000 };
            let t = if i % 2 == 0 { &mut a } else { &mut b };
            t.record(KeyRef::Int(key), ok(100));
        }
        assert!(a.approximate && a.distinct() == 50);
        a.merge(&b);
        let r = a.records();
        assert_eq!(r[0].value, "0");
        // Space-Saving over-estimates by at most its error bound, never under-counts.
        assert!(r[0].attempts >= 10_000);
        assert!(r[0].attempts - r[0].attempts_error <= 10_000);
        assert!(a.distinct() <= 100);
        let (counts, total) = a.transaction_counts();
        assert_eq!(total, 30_000);
        assert_eq!(counts.len(), a.distinct());
        let text = KeyValue::Text("alice".into());
        assert_eq!(text.to_string(), "alice");
    }
}
