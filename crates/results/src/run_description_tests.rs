//! Unit tests of [`super`]: `config` and `bench` agree in merged records — three real shard
//! files written before the description was unified (they still read), three synthetic
//! throttled shards — and files whose `config` does not describe the run are read through
//! their header.

use super::*;
use crate::config_record::ConfigScript;

/// Three shards of one `-c 6 -t 5` run, as `hotbench run --shard I/3` wrote them before
/// `bench` was derived from `config` (the format of main at f73e426).
fn shard_files() -> Vec<(String, RunRecord)> {
    [
        include_str!("../testdata/shard-0-of-3.json"),
        include_str!("../testdata/shard-1-of-3.json"),
        include_str!("../testdata/shard-2-of-3.json"),
    ]
    .iter()
    .enumerate()
    .map(|(i, text)| {
        let r: RunRecord = serde_json::from_str(text).expect("a current-format record reads");
        (format!("shard-{i}-of-3.json"), r)
    })
    .collect()
}

/// `config` and `bench` say the same of the run.
fn assert_agree(r: &RunRecord) {
    let (c, b) = (&r.config, &r.bench);
    assert_eq!((c.clients, c.threads), (b.clients, b.threads));
    assert_eq!(c.rate, b.rate);
    assert_eq!(c.retry.max_tries, b.max_tries);
    assert_eq!(c.random_seed, b.random_seed);
    assert_eq!(c.query_mode.name(), b.query_mode);
    let group_clients: usize = c.groups.iter().map(|g| g.clients).sum();
    assert_eq!(group_clients, c.clients, "{:?}", c.groups);
    match c.limit {
        Limit::Duration(us) => assert_eq!(b.duration_s, Some((us / 1_000_000) as u64)),
        Limit::Transactions(n) => assert_eq!(b.transactions_per_client, Some(n)),
    }
}

#[test]
fn a_merge_of_three_shard_files_agrees_in_config_and_bench() {
    let shards = shard_files();
    for (_, r) in &shards {
        assert_eq!((r.config.clients, r.bench.clients), (2, 2));
        assert_agree(r);
    }
    let m = crate::merge::merge(&shards).unwrap();
    assert_agree(&m);
    assert_eq!((m.config.clients, m.config.threads), (6, 3));
    assert_eq!(m.config.groups.len(), 1);
    assert_eq!(m.config.groups[0].clients, 6);
    assert_eq!(m.config.limit, Limit::Transactions(5));
    assert_eq!(m.config.shards.as_ref().map(|s| s.parts.len()), Some(3));
}

#[test]
fn a_merge_of_three_throttled_shards_sums_rates_in_config_and_bench() {
    let shards: Vec<(String, RunRecord)> = (0..3)
        .map(|i| {
            let mut r = crate::shards::tests::shard(i, 3, "k");
            r.config.clients = 2;
            r.config.threads = 1;
            r.config.limit = Limit::Duration(2_000_000);
            r.config.rate = Some(100.0 / 3.0);
            r.config.groups = vec![ConfigGroup {
                name: "default".into(),
                clients: 2,
                rate: Some(100.0 / 3.0),
                scripts: vec![ConfigScript {
                    name: format!("s{i}.sql"),
                    weight: 1,
                }],
                ..Default::default()
            }];
            r.bench.derive_from(&r.config);
            (format!("s{i}.json"), r)
        })
        .collect();
    let m = crate::merge::merge(&shards).unwrap();
    assert_agree(&m);
    assert_eq!(m.config.clients, 6);
    let rate = m.config.rate.expect("throttled");
    assert!((rate - 100.0).abs() < 1e-9, "{rate}");
    let g = &m.config.groups[0];
    assert!((g.rate.unwrap() - 100.0).abs() < 1e-9);
    assert_eq!(g.scripts.len(), 3, "the shards' scripts united");
    // One unthrottled input: the merged run has no single rate.
    let mut mixed = shards.clone();
    mixed[2].1.config.rate = None;
    mixed[2].1.config.groups[0].rate = None;
    mixed[2].1.bench.rate = None;
    let m = crate::merge::merge(&mixed).unwrap();
    assert_eq!((m.config.rate, m.bench.rate), (None, None));
}

#[test]
fn a_config_without_clients_is_read_through_the_header() {
    // testdata's records describe their run in `bench` and `groups` only.
    let mut r = crate::testdata::record("a", 100.0, 3, 300, 1.0);
    r.bench.query_mode = "simple".into();
    assert_eq!(r.config.clients, 0);
    let c = described(&r);
    assert_eq!((c.clients, c.threads, c.random_seed), (4, 1, 42));
    assert_eq!(c.limit, Limit::Duration(3_000_000));
    assert_eq!(c.groups.len(), r.groups.len());
    let mut b = r.bench.clone();
    b.derive_from(&c);
    assert_eq!(
        serde_json::to_value(&b).unwrap(),
        serde_json::to_value(&r.bench).unwrap(),
        "the header read back is the header"
    );
    let mut other = crate::testdata::record("b", 101.0, 3, 300, 1.0);
    other.bench.query_mode = "simple".into();
    let m = crate::merge::merge(&[("a".into(), r), ("b".into(), other)]).unwrap();
    assert_agree(&m);
    assert_eq!(m.config.clients, 8);
}
