//! `deploy/grafana/hotbench.json` queries only what `--prometheus` exports: every series a
//! panel or a variable queries exists under that name, with the labels (and label values,
//! such as `quantile="0.99"` or a monitor's `name="backlog"`) it selects, groups or shows in
//! its legend. The exported series come from the exposition code itself
//! (`hotbench_report::text::prometheus`), for a `run` and for a ladder variant whose
//! monitors are every shipped scenario's, not from a list kept by hand.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use hotbench_report::text::prometheus::{exposition, LiveMetrics};
use hotbench_results::IntervalStats;

/// Labels Prometheus adds at scrape time.
const SCRAPE_LABELS: [&str; 2] = ["job", "instance"];

/// Every exported series: name → label sets (label → value).
type Series = BTreeMap<String, Vec<BTreeMap<String, String>>>;

fn exported() -> Series {
    let interval = IntervalStats {
        tps: 10.0,
        ..Default::default()
    };
    let mut run = LiveMetrics::default();
    run.add_interval(1.0, &interval);
    run.waits.push(("Lock:tuple".into(), 1.0));
    let monitors: Vec<(String, f64)> = hotbench_scenario::source::builtin_bundles()
        .into_iter()
        .map(|b| hotbench_scenario::load(b).expect("shipped scenario"))
        .flat_map(|s| s.manifest.monitors.clone())
        .map(|m| (m.name, 1.0))
        .collect();
    assert!(monitors.iter().any(|(n, _)| n == "backlog"), "{monitors:?}");
    let mut ladder = LiveMetrics::for_variant("queue", "skip-locked", 10, "18");
    ladder.add_interval(1.0, &interval);
    ladder.monitors = monitors;
    let mut out = Series::new();
    for text in [exposition(&run), exposition(&ladder)] {
        for line in text.lines().filter(|l| !l.starts_with('#')) {
            let name_end = line.find(['{', ' ']).unwrap_or(line.len());
            let mut labels = BTreeMap::new();
            if line[name_end..].starts_with('{') {
                let body = &line[name_end + 1..line.rfind('}').expect("closing brace")];
                for (k, v) in matchers(body) {
                    labels.insert(k, v);
                }
            }
            out.entry(line[..name_end].to_string())
                .or_default()
                .push(labels);
        }
    }
    out
}

/// `k="v"` pairs (any operator) of a label list, values unescaped enough for the names used.
fn matchers(body: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut rest = body;
    while let Some(q) = rest.find('"') {
        let key = rest[..q]
            .trim_matches(|c: char| c == ',' || c.is_whitespace())
            .trim_end_matches(['=', '~', '!'])
            .trim()
            .to_string();
        let after = &rest[q + 1..];
        let mut end = 0;
        let bytes = after.as_bytes();
        while end < bytes.len() && !(bytes[end] == b'"' && (end == 0 || bytes[end - 1] != b'\\')) {
            end += 1;
        }
        out.push((key, after[..end].replace("\\\"", "\"")));
        rest = &after[(end + 1).min(after.len())..];
    }
    out
}

/// A selector in a query: the metric, its label matchers, and labels the query groups or
/// labels by (`by (…)`, `label_values(…, label)`, the legend's `{{label}}`).
struct Use {
    metric: String,
    matchers: Vec<(String, String)>,
    labels: Vec<String>,
}

/// Every `hotbench_*` selector of `expr`; `extra` labels apply to all of them.
fn uses(expr: &str, extra: &[String]) -> Vec<Use> {
    let mut out = Vec::new();
    let mut by = extra.to_vec();
    for part in expr.split("by (").skip(1) {
        let inside = part.split(')').next().unwrap_or("");
        by.extend(inside.split(',').map(|s| s.trim().to_string()));
    }
    if let Some(lv) = expr.strip_prefix("label_values(") {
        let label = lv.trim_end_matches(')').rsplit(',').next().unwrap_or("");
        by.push(label.trim().to_string());
    }
    let mut rest = expr;
    while let Some(i) = rest.find("hotbench_") {
        let tail = &rest[i..];
        let end = tail
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(tail.len());
        let metric = tail[..end].to_string();
        let after = &tail[end..];
        let (ms, next) = match after.strip_prefix('{') {
            Some(b) => {
                let close = b.find('}').expect("selector closed");
                (matchers(&b[..close]), &b[close + 1..])
            }
            None => (Vec::new(), after),
        };
        out.push(Use {
            metric,
            matchers: ms,
            labels: by.clone(),
        });
        rest = next;
    }
    out
}

/// What in `u` is not exported: an unknown metric, or no series of it with every label it
/// selects or shows (and the literal value of each `=` matcher).
fn missing(series: &Series, u: &Use) -> Option<String> {
    let Some(sets) = series.get(&u.metric) else {
        return Some(format!("{} is not exported", u.metric));
    };
    let wanted = |set: &BTreeMap<String, String>| {
        u.matchers
            .iter()
            .filter(|(k, _)| !SCRAPE_LABELS.contains(&k.as_str()))
            .all(|(k, v)| match set.get(k) {
                Some(have) => v.contains('$') || v.contains(['*', '|']) || have == v,
                None => false,
            })
            && u.labels
                .iter()
                .filter(|l| !SCRAPE_LABELS.contains(&l.as_str()) && !l.is_empty())
                .all(|l| set.contains_key(l))
    };
    (!sets.iter().any(wanted)).then(|| {
        format!(
            "no {} series has {:?} and labels {:?} (exported: {:?})",
            u.metric, u.matchers, u.labels, sets
        )
    })
}

/// `{{label}}` names in a legend.
fn legend_labels(legend: &str) -> Vec<String> {
    legend
        .split("{{")
        .skip(1)
        .filter_map(|p| p.split("}}").next())
        .map(|s| s.trim().to_string())
        .collect()
}

#[test]
fn every_series_the_dashboard_queries_is_exported() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../deploy/grafana/hotbench.json");
    let text = std::fs::read_to_string(&path).expect("deploy/grafana/hotbench.json");
    let dash: serde_json::Value = serde_json::from_str(&text).expect("valid JSON");
    let series = exported();
    let mut problems = Vec::new();
    let mut queried = BTreeSet::new();
    let vars = dash["templating"]["list"].as_array().expect("variables");
    assert!(
        vars.iter()
            .any(|v| v["type"] == "datasource" && v["query"] == "prometheus"),
        "a Prometheus datasource variable"
    );
    for v in vars.iter().filter(|v| v["type"] == "query") {
        let q = v["definition"].as_str().expect("variable query");
        for u in uses(q, &[]) {
            queried.insert(u.metric.clone());
            problems.extend(missing(&series, &u).map(|m| format!("variable {}: {m}", v["name"])));
        }
    }
    let panels = dash["panels"].as_array().expect("panels");
    for p in panels {
        assert_eq!(p["datasource"]["uid"], "${datasource}", "{}", p["title"]);
        for t in p["targets"].as_array().expect("targets") {
            let expr = t["expr"].as_str().expect("expr");
            let legend = legend_labels(t["legendFormat"].as_str().unwrap_or(""));
            let found = uses(expr, &legend);
            if found.is_empty() {
                problems.push(format!("{}: {expr} queries no hotbench series", p["title"]));
            }
            for u in found {
                queried.insert(u.metric.clone());
                problems.extend(missing(&series, &u).map(|m| format!("{}: {m}", p["title"])));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    // What the issue asks to watch: throughput, goodput, p50/p99, failures and retries,
    // the scenarios' backlog and dead tuples.
    for m in [
        "hotbench_tps",
        "hotbench_goodput_per_second",
        "hotbench_latency_milliseconds",
        "hotbench_failures_total",
        "hotbench_retries_total",
        "hotbench_monitor",
    ] {
        assert!(queried.contains(m), "the dashboard does not chart {m}");
    }
}

/// The checker finds what is not exported: a renamed label, an unknown metric, a monitor
/// no scenario declares.
#[test]
fn a_query_for_something_not_exported_is_caught() {
    let series = exported();
    for bad in [
        r#"hotbench_tps{variant_name=~"$variant"}"#,
        r#"rate(hotbench_failure_total[1m])"#,
        r#"hotbench_monitor{name="queue depth"}"#,
        r#"sum by (table) (hotbench_tps)"#,
    ] {
        let found = uses(bad, &[]);
        assert!(
            found.iter().any(|u| missing(&series, u).is_some()),
            "{bad} passed"
        );
    }
    let good = uses(
        r#"hotbench_latency_milliseconds{quantile="0.99",variant=~"$v"}"#,
        &[],
    );
    assert!(missing(&series, &good[0]).is_none());
}
