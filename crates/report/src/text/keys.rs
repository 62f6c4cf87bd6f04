//! The text report's lines for hot keys (`--key`), per-host results and fairness: who and
//! what the transactions were about, after pgbench's report and never inside it.

use std::fmt::Write as _;

use hotbench_results::RunRecord;
use hotbench_stats::zipf::ZipfShare;

/// Hot keys shown in the text report (all of them are in the JSON).
const TOP_KEYS: usize = 10;

pub fn key_and_fairness_lines(o: &mut String, rec: &RunRecord) {
    if !rec.hot_keys.is_empty() {
        let _ = writeln!(
            o,
            "hot keys (top {} of {} by share of transaction time):",
            TOP_KEYS.min(rec.hot_keys.len()),
            rec.hot_keys.len()
        );
        for k in rec.hot_keys.iter().take(TOP_KEYS) {
            let failed = hotbench_stats::saturating_sum(k.failed.values().copied());
            let _ = writeln!(
                o,
                "  {}={}: {:.1}% of time, {} attempts, {} committed, {} failed, {} retries, p50 = {:.3} ms, p99 = {:.3} ms",
                k.variable,
                k.value,
                k.time_share * 100.0,
                k.attempts,
                k.committed,
                failed,
                k.retries,
                k.p50_ms,
                k.p99_ms
            );
        }
    }
    zipf_lines(o, &rec.hot_key_zipf);
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
        let _ = writeln!(
            o,
            "fairness of group {}: Jain's index = {jain} over {} clients{starved}",
            f.group, f.clients
        );
    }
}

/// One line per Zipfian key: the top keys' observed share against the parameter's
/// prediction (`zipfian k = random_zipfian(1, 1000, 1.1): top 1 key 9.8% of transactions
/// (predicted 10.1%), top 10 …`).
fn zipf_lines(o: &mut String, shares: &[ZipfShare]) {
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
        let _ = writeln!(
            o,
            "zipfian {} = random_zipfian({}, {}, {}): {}{estimate}",
            first.variable,
            first.lo,
            first.hi,
            first.s,
            parts.join(", ")
        );
        rest = next;
    }
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
        let mut o = String::new();
        zipf_lines(
            &mut o,
            &[
                z("a", 1, 0.098, 0.101),
                z("a", 10, 0.3, 0.31),
                z("b", 1, 0.5, 0.4),
            ],
        );
        assert_eq!(
            o,
            "zipfian a = random_zipfian(1, 1000, 1.1): top 1 key 9.8% of transactions (predicted 10.1%), top 10 keys 30.0% of transactions (predicted 31.0%)\n\
             zipfian b = random_zipfian(1, 1000, 1.1): top 1 key 50.0% of transactions (predicted 40.0%) (observed shares estimated: more values than --key-capacity)\n"
        );
    }
}
