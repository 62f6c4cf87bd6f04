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

/// This machine's wall clock minus the server's, ms: the server is the one clock every
/// shard talks to, so `merge` can tell when the machines' clocks disagree (a shard whose
/// clock is ahead starts `--start-at` early). The best of three reads of
/// `clock_timestamp()`, each taken as of the middle of its round trip; `None` when the
/// server does not answer it.
pub fn clock_offset_ms(conn: &mut hotbench_wire::Connection) -> Option<f64> {
    let mut best: Option<(i64, f64)> = None;
    for _ in 0..3 {
        let before = hotbench_engine::unix_now_us();
        let rows = conn
            .simple_query("select extract(epoch from pg_catalog.clock_timestamp())::text")
            .ok()?;
        let after = hotbench_engine::unix_now_us();
        let server_s: f64 = rows.first()?.get(0, 0)?.trim().parse().ok()?;
        let offset_ms = clock_offset_of(before, after, server_s);
        let rtt = after - before;
        if best.is_none_or(|(r, _)| rtt < r) {
            best = Some((rtt, offset_ms));
        }
    }
    best.map(|(_, o)| o)
}

/// The offset (ms) of a clock read at `before`..`after` (local Unix µs) against the
/// server's answer `server_s` (Unix s), taken at the middle of the round trip.
fn clock_offset_of(before: i64, after: i64, server_s: f64) -> f64 {
    let local_us = before as f64 + (after - before) as f64 / 2.0;
    // Rounded to the µs the clocks are read in.
    (local_us - server_s * 1e6).round() / 1000.0
}

/// The zone of an RFC 3339 time: `Z` or `±HH:MM`, split off as seconds east of UTC.
fn split_zone(text: &str) -> Option<(&str, i64)> {
    if let Some(t) = text.strip_suffix(['Z', 'z']) {
        return Some((t, 0));
    }
    let (t, zone) = text.split_at(text.len().checked_sub(6)?);
    let sign = match zone.as_bytes().first()? {
        b'+' => 1,
        b'-' => -1,
        _ => return None,
    };
    let (h, m) = zone[1..].split_once(':')?;
    if h.len() != 2 || m.len() != 2 {
        return None;
    }
    let (h, m): (i64, i64) = (h.parse().ok()?, m.parse().ok()?);
    (h < 24 && m < 60).then_some((t, sign * (h * 3600 + m * 60)))
}

/// `--start-at`: RFC 3339 with its zone (`2026-11-23T17:00:00Z`, `…T18:00:00+01:00`) or
/// Unix seconds (`@1795000000`), as Unix µs. A time without a zone is refused rather than
/// taken as UTC: the machines of a spread run may not share a local zone, and a silent
/// guess starts them hours apart.
pub fn parse_start_at(text: &str) -> Result<i64> {
    let bad = |why: &str| {
        Fail::input(format!(
            "invalid --start-at \"{text}\": {why} (expected e.g. 2026-11-23T17:00:00Z, 2026-11-23T18:00:00+01:00 or @1795000000)"
        ))
    };
    let us = if let Some(secs) = text.strip_prefix('@') {
        let s: f64 = secs.trim().parse().map_err(|_| bad("not a number"))?;
        if !s.is_finite() || s <= 0.0 {
            return Err(bad("not a time"));
        }
        (s * 1e6) as i64
    } else {
        let (local, east_s) = split_zone(text.trim()).ok_or_else(|| {
            bad("no time zone: end it with Z for UTC or an offset such as +01:00")
        })?;
        let t = humantime::parse_rfc3339_weak(local).map_err(|e| bad(&e.to_string()))?;
        let utc = t
            .duration_since(std::time::UNIX_EPOCH)
            .map_err(|_| bad("before 1970"))?
            .as_micros() as i64;
        utc - east_s * 1_000_000
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

/// What a run with `--start-at` says before it connects and waits: the start in UTC and
/// how far off it is, so a wait is never taken for a hang.
pub fn waiting_line(at_us: i64, now_us: i64) -> String {
    let when = std::time::UNIX_EPOCH + std::time::Duration::from_micros(at_us.max(0) as u64);
    let in_s = ((at_us - now_us) as f64 / 1e6).max(0.0).round();
    format!(
        "waiting until {} (in {in_s:.0} s) to start, as --start-at asks (connecting first)",
        humantime::format_rfc3339_seconds(when)
    )
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
    fn the_wait_is_announced_with_its_length() {
        let line = waiting_line(1_795_000_000_000_000, 1_794_999_958_000_000);
        assert_eq!(
            line,
            "waiting until 2026-11-18T11:06:40Z (in 42 s) to start, as --start-at asks (connecting first)"
        );
    }

    #[test]
    fn start_at_needs_a_zone_and_honours_offsets() {
        let soon = hotbench_engine::unix_now_us() / 1_000_000 / 60 * 60 + 3600;
        let utc = humantime::format_rfc3339_seconds(
            std::time::UNIX_EPOCH + std::time::Duration::from_secs(soon as u64),
        )
        .to_string();
        let bare = utc.trim_end_matches('Z');
        let e = parse_start_at(bare).unwrap_err();
        assert!(e.message.contains("no time zone"), "{}", e.message);
        // The same instant written one hour east of UTC.
        let east = humantime::format_rfc3339_seconds(
            std::time::UNIX_EPOCH + std::time::Duration::from_secs(soon as u64 + 3600),
        )
        .to_string();
        let east = format!("{}+01:00", east.trim_end_matches('Z'));
        assert_eq!(parse_start_at(&east).unwrap(), soon * 1_000_000);
        let west = humantime::format_rfc3339_seconds(
            std::time::UNIX_EPOCH + std::time::Duration::from_secs(soon as u64 - 1800),
        )
        .to_string();
        let west = format!("{}-00:30", west.trim_end_matches('Z'));
        assert_eq!(parse_start_at(&west).unwrap(), soon * 1_000_000);
        for bad in [format!("{bare}+1:00"), format!("{bare}+25:00")] {
            assert!(parse_start_at(&bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_clock_offset_is_taken_at_the_middle_of_the_round_trip() {
        // Read from 1000.000 s to 1000.004 s locally; the server said 992.002 s: 8 s ahead.
        let o = clock_offset_of(1_000_000_000, 1_000_004_000, 992.002);
        assert!((o - 8000.0).abs() < 1e-6, "{o}");
        assert!((clock_offset_of(5_000_000, 5_000_000, 5.0)).abs() < 1e-9);
    }

    #[test]
    fn run_keys_differ_by_count_and_settings() {
        assert_eq!(run_key(3, "x"), run_key(3, "x"));
        assert_ne!(run_key(3, "x"), run_key(2, "x"));
        assert_ne!(run_key(3, "x"), run_key(3, "y"));
    }
}
