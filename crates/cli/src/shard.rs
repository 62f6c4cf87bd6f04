//! `--shard I/N` and `--start-at TIME`: N processes (pods of a Kubernetes Indexed Job, or N
//! shells on N machines) that together make one run. Each takes its part of every group's
//! clients and the same part of the group's `-R` rate; `-t` stays per client, as in pgbench,
//! so the shards' transactions add up to one process's. Client ids continue across shards and
//! per-client random seeds are those of one process running all clients, so shard results
//! merge exactly (`hotbench merge`).

use hotbench_engine::ShardConfig;

use crate::fail::{Fail, Result};
use crate::groups::GroupSpec;

/// `I/N` with `0 <= I < N` (0-based, as `JOB_COMPLETION_INDEX`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
}

impl Shard {
    pub fn parse(text: &str) -> Result<Shard> {
        let bad = || {
            Fail::input(format!(
                "invalid --shard \"{text}\": expected I/N with 0 <= I < N, e.g. 0/3"
            ))
        };
        let (i, n) = text.split_once('/').ok_or_else(bad)?;
        let index: usize = i.trim().parse().map_err(|_| bad())?;
        let count: usize = n.trim().parse().map_err(|_| bad())?;
        if count == 0 || index >= count || count > 100_000 {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

/// Shard `j`'s part of `clients` (the first `clients % n` shards take one more).
fn part(clients: usize, j: usize, n: usize) -> usize {
    clients / n + usize::from(j < clients % n)
}

/// Cuts `groups` down to this shard's clients and rates and returns the engine's view of the
/// shard. `run_key` identifies the run (see [`run_key`]).
pub fn split(groups: &mut Vec<GroupSpec>, shard: Shard, run_key: String) -> Result<ShardConfig> {
    let run_clients: usize = groups.iter().map(|g| g.clients).sum();
    let first_client: usize = (0..shard.index)
        .map(|j| {
            groups
                .iter()
                .map(|g| part(g.clients, j, shard.count))
                .sum::<usize>()
        })
        .sum();
    for g in groups.iter_mut() {
        let mine = part(g.clients, shard.index, shard.count);
        g.rate = g.rate.map(|r| r * mine as f64 / g.clients.max(1) as f64);
        g.clients = mine;
    }
    groups.retain(|g| g.clients > 0);
    if groups.is_empty() {
        return Err(Fail::input(format!(
            "shard {}/{} has no clients: give at least {} clients (-c) so every shard gets one",
            shard.index, shard.count, shard.count
        )));
    }
    Ok(ShardConfig {
        index: shard.index,
        count: shard.count,
        first_client,
        run_clients,
        run_key,
    })
}

/// A stable identity of the run every shard computes alike (FNV-1a of the settings shards
/// share): shards of different runs cannot be merged by mistake.
pub fn run_key(count: usize, shared_settings: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in count.to_le_bytes().iter().chain(shared_settings.as_bytes()) {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

/// `--start-at`: RFC 3339 (`2026-11-23T17:00:00Z`) or Unix seconds (`@1795000000`), as Unix µs.
pub fn parse_start_at(text: &str) -> Result<i64> {
    let bad = |why: &str| {
        Fail::input(format!(
            "invalid --start-at \"{text}\": {why} (expected e.g. 2026-11-23T17:00:00Z or @1795000000)"
        ))
    };
    let us = if let Some(secs) = text.strip_prefix('@') {
        let s: f64 = secs.trim().parse().map_err(|_| bad("not a number"))?;
        if !s.is_finite() || s <= 0.0 {
            return Err(bad("not a time"));
        }
        (s * 1e6) as i64
    } else {
        let t = humantime::parse_rfc3339_weak(text.trim()).map_err(|e| bad(&e.to_string()))?;
        t.duration_since(std::time::UNIX_EPOCH)
            .map_err(|_| bad("before 1970"))?
            .as_micros() as i64
    };
    let now = hotbench_engine::unix_now_us();
    if us < now - 3_600_000_000 {
        return Err(bad("more than an hour in the past"));
    }
    if us > now + 86_400_000_000 {
        return Err(bad("more than a day ahead"));
    }
    Ok(us)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scripts::ScriptSpec;

    fn group(name: &str, clients: usize, rate: Option<f64>) -> GroupSpec {
        GroupSpec {
            name: name.into(),
            scripts: vec![ScriptSpec::Builtin("select-only".into())],
            clients,
            rate,
            goodput: None,
            keys: Vec::new(),
        }
    }

    #[test]
    fn shards_partition_clients_and_rates_exactly() {
        let mut seen = Vec::new();
        let (mut clients, mut rate) = (0, 0.0);
        for i in 0..3 {
            let mut gs = vec![group("a", 10, Some(100.0)), group("b", 2, None)];
            let s = split(&mut gs, Shard { index: i, count: 3 }, "k".into()).unwrap();
            let here: usize = gs.iter().map(|g| g.clients).sum();
            seen.extend(s.first_client..s.first_client + here);
            clients += here;
            rate += gs.iter().filter_map(|g| g.rate).sum::<f64>();
            assert_eq!(s.run_clients, 12);
        }
        assert_eq!(clients, 12);
        assert!((rate - 100.0).abs() < 1e-9, "{rate}");
        // Client ids are distinct and contiguous over the shards.
        assert_eq!(seen, (0..12).collect::<Vec<_>>());
    }

    #[test]
    fn bad_shards_and_times_are_input_errors() {
        for bad in ["3/3", "1", "a/b", "0/0", "-1/2"] {
            assert_eq!(Shard::parse(bad).unwrap_err().code, 1, "{bad}");
        }
        assert_eq!(Shard::parse("2/3").unwrap(), Shard { index: 2, count: 3 });
        let mut gs = vec![group("a", 2, None)];
        let e = split(&mut gs, Shard { index: 2, count: 3 }, "k".into()).unwrap_err();
        assert!(e.message.contains("no clients"), "{}", e.message);
        for bad in ["tomorrow", "@x", "2001-01-01T00:00:00Z", "@0"] {
            assert_eq!(parse_start_at(bad).unwrap_err().code, 1, "{bad}");
        }
        let soon = hotbench_engine::unix_now_us() / 1_000_000 + 60;
        assert_eq!(
            parse_start_at(&format!("@{soon}")).unwrap(),
            soon * 1_000_000
        );
        let text = humantime::format_rfc3339_seconds(
            std::time::UNIX_EPOCH + std::time::Duration::from_secs(soon as u64),
        )
        .to_string();
        assert_eq!(parse_start_at(&text).unwrap(), soon * 1_000_000);
    }

    #[test]
    fn run_keys_differ_by_count_and_settings() {
        assert_eq!(run_key(3, "x"), run_key(3, "x"));
        assert_ne!(run_key(3, "x"), run_key(2, "x"));
        assert_ne!(run_key(3, "x"), run_key(3, "y"));
    }
}
