//! Checkpoints during a variant, named in its notes: the full-page writes after a checkpoint
//! slow every writer for a while, so a dip in a long run (or a steady ratio below 1) may be
//! the server's checkpoint schedule, not the pattern. Read from the probe's record
//! (server-wide counts, so another workload's checkpoints count too).

use hotbench_results::RunRecord;

/// "N checkpoint(s) during the run …, at T s …", or `None` when none began (or the probe
/// could not count them).
pub fn note(r: &RunRecord) -> Option<String> {
    let probes = r.probes.as_ref()?;
    let n = probes.server.checkpoints.filter(|&n| n > 0)?;
    let at: Vec<String> = probes
        .timeline
        .iter()
        .filter(|iv| iv.server.checkpoints.is_some_and(|c| c > 0))
        .map(|iv| format!("{:.0} s", iv.t))
        .collect();
    let when = if at.is_empty() {
        String::new()
    } else {
        format!(" (at {})", at.join(", "))
    };
    let s = if n == 1 { "" } else { "s" };
    Some(format!(
        "{n} checkpoint{s} began during the run{when}, server-wide: the full-page writes after \
         one slow writes for a while (checkpoint_timeout, max_wal_size)"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use hotbench_results::probe_record::{ProbeInterval, ProbeRecord, ServerDelta};

    fn record(total: Option<u64>, per_interval: &[(f64, Option<u64>)]) -> RunRecord {
        RunRecord {
            probes: Some(ProbeRecord {
                server: ServerDelta {
                    checkpoints: total,
                    ..Default::default()
                },
                timeline: per_interval
                    .iter()
                    .map(|&(t, c)| ProbeInterval {
                        t,
                        server: ServerDelta {
                            checkpoints: c,
                            ..Default::default()
                        },
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    #[test]
    fn checkpoints_are_named_with_when_they_began() {
        let r = record(
            Some(2),
            &[(1.0, Some(0)), (212.0, Some(1)), (1112.4, Some(1))],
        );
        let n = note(&r).expect("a note");
        assert!(
            n.starts_with("2 checkpoints began during the run (at 212 s, 1112 s)"),
            "{n}"
        );
        let r = record(Some(1), &[(30.0, Some(1))]);
        assert!(note(&r).expect("a note").starts_with("1 checkpoint began"));
    }

    #[test]
    fn no_checkpoint_or_no_count_is_no_note() {
        assert_eq!(note(&record(Some(0), &[(1.0, Some(0))])), None);
        assert_eq!(note(&record(None, &[])), None);
        assert_eq!(note(&RunRecord::default()), None);
    }
}
