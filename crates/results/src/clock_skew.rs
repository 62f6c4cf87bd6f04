//! Clock skew between the machines whose results `merge` combines. Each `--shard` /
//! `--start-at` run records its clock's offset from the server's (`server.clock_offset_ms`):
//! the server is the one clock every machine talks to. A machine whose clock is 8 s ahead
//! starts `--start-at` 8 s early and stamps its timeline 8 s late, which the records'
//! own `started_at` cannot show (each says the agreed start). From the offsets, `merge` puts
//! every input on the server's clock (its timeline alignment and overlap check use that) and
//! notes skew beyond [`SKEW_LIMIT_MS`], with how little the inputs then overlapped.

use crate::RunRecord;

/// Offsets that differ by more than this are skew worth a note, ms: well above what a
/// measurement through a local network adds (half a round trip), well below an interval.
pub const SKEW_LIMIT_MS: f64 = 250.0;

/// How the note about skew begins (the `merge` command prints it as a warning too).
pub const NOTE_PREFIX: &str = "clock skew:";

/// Each input's start on the server's clock (Unix s): `started_at` minus its clock offset,
/// when every input that has a start recorded its offset; the `started_at`s as they are
/// otherwise (one clock cannot be compared with none).
pub fn server_starts(records: &[(String, RunRecord)]) -> Vec<f64> {
    let all_known = records
        .iter()
        .all(|(_, r)| r.started_at <= 0.0 || r.server.clock_offset_ms.is_some());
    records
        .iter()
        .map(|(_, r)| match r.server.clock_offset_ms {
            Some(off) if all_known && r.started_at > 0.0 => r.started_at - off / 1000.0,
            _ => r.started_at,
        })
        .collect()
}

/// The note when the inputs' clocks disagree by more than [`SKEW_LIMIT_MS`]: each offset,
/// and how long the inputs ran together on the server's clock.
pub fn note(records: &[(String, RunRecord)]) -> Option<String> {
    let offsets: Vec<(&str, f64)> = records
        .iter()
        .filter_map(|(n, r)| r.server.clock_offset_ms.map(|o| (n.as_str(), o)))
        .filter(|(_, o)| o.is_finite())
        .collect();
    let lo = offsets.iter().map(|o| o.1).fold(f64::INFINITY, f64::min);
    let hi = offsets
        .iter()
        .map(|o| o.1)
        .fold(f64::NEG_INFINITY, f64::max);
    if offsets.len() < 2 || hi - lo <= SKEW_LIMIT_MS {
        return None;
    }
    let each: Vec<String> = offsets
        .iter()
        .map(|(n, o)| format!("{n} {:+.3} s", o / 1000.0))
        .collect();
    let starts = server_starts(records);
    let windows: Vec<(f64, f64)> = records
        .iter()
        .zip(&starts)
        .filter(|(_, s)| **s > 0.0)
        .map(|((_, r), s)| (*s, *s + r.duration_s))
        .collect();
    let together = windows.iter().map(|w| w.1).fold(f64::INFINITY, f64::min)
        - windows
            .iter()
            .map(|w| w.0)
            .fold(f64::NEG_INFINITY, f64::max);
    let longest = records
        .iter()
        .map(|(_, r)| r.duration_s)
        .fold(0.0, f64::max);
    Some(format!(
        "{NOTE_PREFIX} the inputs' clocks disagree by {:.3} s against the server's ({}): \
         they did not start together; on the server's clock they ran together for {:.1} s \
         of {:.1} s, so the merged rates count as concurrent what was not (timelines are \
         aligned on the server's clock); synchronise the machines' clocks (NTP) and run again",
        (hi - lo) / 1000.0,
        each.join(", "),
        together.max(0.0),
        longest
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shards::tests::shard;

    fn with_offset(index: u64, offset_ms: f64) -> (String, RunRecord) {
        let mut r = shard(index, 2, "k");
        r.server.clock_offset_ms = Some(offset_ms);
        (format!("s{index}.json"), r)
    }

    #[test]
    fn a_shard_whose_clock_is_8_s_ahead_is_noted_and_put_on_the_servers_clock() {
        // Both say they started at the agreed time; one machine's clock is 8 s ahead.
        let recs = vec![with_offset(0, 1.5), with_offset(1, 8_001.5)];
        let starts = server_starts(&recs);
        assert!((starts[0] - starts[1] - 8.0).abs() < 1e-9, "{starts:?}");
        let n = note(&recs).expect("skew noted");
        assert!(n.starts_with(NOTE_PREFIX), "{n}");
        assert!(n.contains("disagree by 8.000 s"), "{n}");
        assert!(n.contains("s1.json +8.002 s"), "{n}");
        // 2 s runs 8 s apart never ran together.
        assert!(n.contains("ran together for 0.0 s of 2.0 s"), "{n}");
    }

    #[test]
    fn merge_notes_the_skew_and_aligns_the_timelines_on_the_servers_clock() {
        let recs = vec![with_offset(0, 0.0), with_offset(1, 8_000.0)];
        let m = crate::merge::merge(&recs).unwrap();
        assert!(
            m.notes.iter().any(|n| n.starts_with(NOTE_PREFIX)),
            "{:?}",
            m.notes
        );
        assert!(
            m.notes
                .iter()
                .any(|n| n.contains("did not run at the same time")),
            "{:?}",
            m.notes
        );
        // Two 2-interval timelines 8 s apart: four intervals, not two summed ones.
        let t: Vec<f64> = m.timeline.iter().map(|i| i.t).collect();
        assert_eq!(t, vec![1.0, 2.0, 9.0, 10.0]);
        assert_eq!(m.server.clock_offset_ms, None, "no one machine's offset");
        let synced = crate::merge::merge(&[with_offset(0, 0.0), with_offset(1, 2.0)]).unwrap();
        assert_eq!(synced.timeline.len(), 2);
        assert!(!synced.notes.iter().any(|n| n.starts_with(NOTE_PREFIX)));
    }

    #[test]
    fn synchronised_or_unmeasured_clocks_are_left_alone() {
        assert_eq!(note(&[with_offset(0, 3.0), with_offset(1, -40.0)]), None);
        let mut plain = with_offset(1, 9_000.0);
        plain.1.server.clock_offset_ms = None;
        let recs = vec![with_offset(0, 0.0), plain];
        assert_eq!(note(&recs), None);
        // Without every offset the starts stay as recorded.
        let starts = server_starts(&recs);
        assert_eq!(starts[0], recs[0].1.started_at);
        assert_eq!(starts[1], recs[1].1.started_at);
    }
}
