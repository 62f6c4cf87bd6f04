//! The HTML report's hot keys (`--key`) and the probe's hot rows: a bar chart of each key's
//! share of transaction time and a table of its figures, then the rows lock waits queued on.
//! Every value is escaped (keys are user data).

use hotbench_results::RunRecord;

use crate::html::bars::{self, Bar};
use crate::html::doc::table;
use crate::html::escape::html;
use crate::text::number::num;

/// Keys shown (all of them are in the JSON).
const TOP_KEYS: usize = 10;

/// The hot keys' chart and table and the hot rows' table; empty when there are neither.
pub fn hot_keys_html(rec: &RunRecord) -> String {
    let mut o = String::new();
    let keys: Vec<_> = rec.hot_keys.iter().take(TOP_KEYS).collect();
    if !keys.is_empty() {
        let bar_list: Vec<Bar> = keys
            .iter()
            .enumerate()
            .map(|(i, k)| Bar {
                label: format!("{}={}", k.variable, k.value),
                value: k.time_share * 100.0,
                badge: format!("{} attempts", k.attempts),
                highlight: i == 0,
                bad: false,
            })
            .collect();
        o.push_str(&bars::svg(
            &format!("Hot keys (top {} of {})", keys.len(), rec.hot_keys.len()),
            "% of transaction time",
            &bar_list,
        ));
        let rows: Vec<Vec<String>> = keys
            .iter()
            .map(|k| {
                let failed = hotbench_stats::saturating_sum(k.failed.values().copied());
                vec![
                    html(&format!("{}={}", k.variable, k.value)),
                    format!("{:.1}%", k.time_share * 100.0),
                    k.attempts.to_string(),
                    k.committed.to_string(),
                    failed.to_string(),
                    k.retries.to_string(),
                    num(k.p50_ms),
                    num(k.p99_ms),
                ]
            })
            .collect();
        o.push_str(&table(
            "hot-keys",
            &[
                "key",
                "time",
                "attempts",
                "committed",
                "failed",
                "retries",
                "p50 ms",
                "p99 ms",
            ],
            &rows,
        ));
    }
    if !rec.hot_key_zipf.is_empty() {
        let rows: Vec<Vec<String>> = rec
            .hot_key_zipf
            .iter()
            .map(|z| {
                vec![
                    html(&z.variable),
                    html(&format!("random_zipfian({}, {}, {})", z.lo, z.hi, z.s)),
                    z.k.to_string(),
                    format!(
                        "{:.1}%{}",
                        z.observed_share * 100.0,
                        if z.approximate { " (estimate)" } else { "" }
                    ),
                    format!("{:.1}%", z.predicted_share * 100.0),
                ]
            })
            .collect();
        o.push_str(&table(
            "hot-key-zipf",
            &[
                "zipfian key",
                "drawn by",
                "top k",
                "observed share",
                "predicted share",
            ],
            &rows,
        ));
    }
    if let Some(p) = rec.probe_record().filter(|p| !p.hot_rows.is_empty()) {
        let rows: Vec<Vec<String>> = p
            .hot_rows
            .iter()
            .map(|r| {
                vec![
                    html(&r.relation),
                    html(&r.key),
                    format!("{:.0}%", r.pct),
                    r.count.to_string(),
                ]
            })
            .collect();
        o.push_str(&table(
            "hot-rows",
            &["hot row: relation", "key", "of lock waits", "samples"],
            &rows,
        ));
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use hotbench_results::probe_record::{HotRow, ProbeRecord};
    use hotbench_stats::hot_keys::HotKeyRecord;

    #[test]
    fn keys_and_rows_are_charted_tabled_and_escaped() {
        let mut rec = hotbench_results::testdata::record("r", 1.0, 2, 100, 2.0);
        assert_eq!(hot_keys_html(&rec), "");
        rec.hot_keys = vec![HotKeyRecord {
            variable: "c".into(),
            value: "<1>".into(),
            attempts: 40,
            committed: 39,
            time_share: 0.62,
            ..Default::default()
        }];
        let probes = ProbeRecord {
            hot_rows: vec![HotRow {
                relation: "acct".into(),
                key: "id=<1>".into(),
                count: 9,
                pct: 75.0,
            }],
            ..Default::default()
        };
        rec.probes = Some(probes);
        let h = hot_keys_html(&rec);
        assert!(h.contains("<svg class=\"bars\""), "{h}");
        assert!(h.contains("c=&lt;1&gt;") && !h.contains("<1>"), "{h}");
        assert!(h.contains("62.0%"), "{h}");
        assert!(h.contains("id=&lt;1&gt;") && h.contains("75%"), "{h}");
        assert!(!h.contains("hot-key-zipf"), "{h}");
        rec.hot_key_zipf = vec![hotbench_stats::zipf::ZipfShare {
            variable: "k".into(),
            lo: 1,
            hi: 100,
            s: 1.5,
            k: 10,
            predicted_share: 0.8123,
            observed_share: 0.8011,
            transactions: 9,
            approximate: false,
        }];
        let h = hot_keys_html(&rec);
        assert!(h.contains("random_zipfian(1, 100, 1.5)"), "{h}");
        assert!(h.contains("80.1%") && h.contains("81.2%"), "{h}");
    }
}
