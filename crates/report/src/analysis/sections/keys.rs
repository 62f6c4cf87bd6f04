//! Hot keys (`--key`), their Zipfian shares and fairness: who and what the transactions were
//! about. The terminal gets one line per key, per Zipfian variable and per group; the page a
//! bar chart of each key's share of transaction time, its figures, the Zipfian shares, and
//! the probe's hot rows (the terminal has those among the probe's lines).

use hotbench_stats::zipf::ZipfShare;
use hotbench_stats::RunRecord;

use crate::analysis::section::{Bar, Bars, Block, Cell, Section, Table};

/// Hot keys shown (all of them are in the JSON).
pub const TOP_KEYS: usize = 10;

pub fn section(rec: &RunRecord) -> Section {
    let mut s = Section::new("keys");
    hot_keys(&mut s, rec);
    zipf_lines(&mut s, &rec.hot_key_zipf);
    zipf_table(&mut s, &rec.hot_key_zipf);
    fairness(&mut s, rec);
    hot_rows(&mut s, rec);
    s
}

fn hot_keys(s: &mut Section, rec: &RunRecord) {
    let keys: Vec<_> = rec.hot_keys.iter().take(TOP_KEYS).collect();
    if keys.is_empty() {
        return;
    }
    s.line(format!(
        "hot keys (top {} of {} by share of transaction time):",
        keys.len(),
        rec.hot_keys.len()
    ));
    let failed = |k: &hotbench_stats::hot_keys::HotKeyRecord| {
        hotbench_stats::saturating_sum(k.failed.values().copied())
    };
    for k in &keys {
        s.line(format!(
            "  {}={}: {:.1}% of time, {} attempts, {} committed, {} failed, {} retries, p50 = {:.3} ms, p99 = {:.3} ms",
            k.variable,
            k.value,
            k.time_share * 100.0,
            k.attempts,
            k.committed,
            failed(k),
            k.retries,
            k.p50_ms,
            k.p99_ms
        ));
    }
    s.push(Block::Bars(Bars {
        title: format!("Hot keys (top {} of {})", keys.len(), rec.hot_keys.len()),
        unit: "% of transaction time".into(),
        bars: keys
            .iter()
            .enumerate()
            .map(|(i, k)| Bar {
                label: format!("{}={}", k.variable, k.value),
                value: k.time_share * 100.0,
                badge: format!("{} attempts", k.attempts),
                highlight: i == 0,
                bad: false,
            })
            .collect(),
        line: None,
    }));
    let rows = keys
        .iter()
        .map(|k| {
            vec![
                Cell::from(format!("{}={}", k.variable, k.value)),
                Cell::from(format!("{:.1}%", k.time_share * 100.0)),
                Cell::from(k.attempts.to_string()),
                Cell::from(k.committed.to_string()),
                Cell::from(failed(k).to_string()),
                Cell::from(k.retries.to_string()),
                Cell::num(k.p50_ms),
                Cell::num(k.p99_ms),
            ]
        })
        .collect();
    s.table(Table::new(
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
        rows,
    ));
}

/// One line per Zipfian key: the top keys' observed share against the parameter's
/// prediction (`zipfian k = random_zipfian(1, 1000, 1.1): top 1 key 9.8% of transactions
/// (predicted 10.1%), top 10 …`).
fn zipf_lines(s: &mut Section, shares: &[ZipfShare]) {
    let mut rest = shares;
    while let Some(first) = rest.first() {
        let n = rest
            .iter()
            .take_while(|z| z.variable == first.variable)
            .count();
        let (this, next) = rest.split_at(n);
        let parts: Vec<String> = this
            .iter()
            .map(|z| {
                format!(
                    "top {} {} {:.1}% of transactions (predicted {:.1}%)",
                    z.k,
                    if z.k == 1 { "key" } else { "keys" },
                    z.observed_share * 100.0,
                    z.predicted_share * 100.0
                )
            })
            .collect();
        let estimate = if first.approximate {
            " (observed shares estimated: more values than --key-capacity)"
        } else {
            ""
        };
        s.line(format!(
            "zipfian {} = random_zipfian({}, {}, {}): {}{estimate}",
            first.variable,
            first.lo,
            first.hi,
            first.s,
            parts.join(", ")
        ));
        rest = next;
    }
}

fn zipf_table(s: &mut Section, shares: &[ZipfShare]) {
    if shares.is_empty() {
        return;
    }
    let rows = shares
        .iter()
        .map(|z| {
            vec![
                Cell::from(z.variable.as_str()),
                Cell::from(format!("random_zipfian({}, {}, {})", z.lo, z.hi, z.s)),
                Cell::from(z.k.to_string()),
                Cell::from(format!(
                    "{:.1}%{}",
                    z.observed_share * 100.0,
                    if z.approximate { " (estimate)" } else { "" }
                )),
                Cell::from(format!("{:.1}%", z.predicted_share * 100.0)),
            ]
        })
        .collect();
    s.table(Table::new(
        "hot-key-zipf",
        &[
            "zipfian key",
            "drawn by",
            "top k",
            "observed share",
            "predicted share",
        ],
        rows,
    ));
}

fn fairness(s: &mut Section, rec: &RunRecord) {
    for f in &rec.fairness {
        if f.clients < 2 {
            continue;
        }
        let jain = f.jain_index.map_or("–".to_string(), |j| format!("{j:.3}"));
        let starved = if f.starved.is_empty() {
            String::new()
        } else {
            format!(
                "; starved: {} client(s) with < 1/4 of the median {:.0} commits (client {})",
                f.starved.len(),
                f.median_committed,
                f.starved
                    .iter()
                    .take(5)
                    .map(usize::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        s.line(format!(
            "fairness of group {}: Jain's index = {jain} over {} clients{starved}",
            f.group, f.clients
        ));
    }
}

/// The rows the probe saw lock waits queue on (the page shows them beside the keys).
fn hot_rows(s: &mut Section, rec: &RunRecord) {
    let Some(p) = rec.probe_record().filter(|p| !p.hot_rows.is_empty()) else {
        return;
    };
    let rows = p
        .hot_rows
        .iter()
        .map(|r| {
            vec![
                Cell::from(r.relation.as_str()),
                Cell::from(r.key.as_str()),
                Cell::from(format!("{:.0}%", r.pct)),
                Cell::from(r.count.to_string()),
            ]
        })
        .collect();
    s.table(Table::new(
        "hot-rows",
        &["hot row: relation", "key", "of lock waits", "samples"],
        rows,
    ));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zipfian_keys_get_one_line_each() {
        let z = |variable: &str, k: u64, observed: f64, predicted: f64| ZipfShare {
            variable: variable.into(),
            lo: 1,
            hi: 1000,
            s: 1.1,
            k,
            predicted_share: predicted,
            observed_share: observed,
            transactions: 5000,
            approximate: variable == "b",
        };
        let rec = RunRecord {
            hot_key_zipf: vec![
                z("a", 1, 0.098, 0.101),
                z("a", 10, 0.3, 0.31),
                z("b", 1, 0.5, 0.4),
            ],
            ..Default::default()
        };
        assert_eq!(
            section(&rec).lines(),
            [
                "zipfian a = random_zipfian(1, 1000, 1.1): top 1 key 9.8% of transactions (predicted 10.1%), top 10 keys 30.0% of transactions (predicted 31.0%)",
                "zipfian b = random_zipfian(1, 1000, 1.1): top 1 key 50.0% of transactions (predicted 40.0%) (observed shares estimated: more values than --key-capacity)"
            ]
        );
    }
}
