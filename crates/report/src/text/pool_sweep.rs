//! `hotbench sweep --pool-size`'s terminal output: per series, goodput and p99 at each
//! connection-pool size (and without a pooler, the baseline), then the best size called out
//! against the baseline. Pure functions of the sweep document.

use std::fmt::Write as _;

use hotbench_results::{SweepDoc, SweepPoint};

use crate::text::number::num;

fn size(p: &SweepPoint) -> String {
    p.pool_size
        .map(|n| n.to_string())
        .unwrap_or_else(|| "no pooler".into())
}

/// The pool-size table and the best size, for the terminal.
pub fn render_pool_text(doc: &SweepDoc) -> String {
    let mut o = String::new();
    for series in doc.series() {
        let clients = series.runs.first().map_or(0, |r| r.bench.clients);
        let label = if series.label.is_empty() {
            String::new()
        } else {
            format!("{}, ", series.label)
        };
        let _ = writeln!(o, "{label}{clients} clients:");
        o.push_str("pool size        tps  goodput/s     p99 ms  top wait\n");
        for (p, r) in series.points().iter().zip(&series.runs) {
            let _ = writeln!(
                o,
                "{:>9} {:>10} {:>10} {:>10}  {}",
                size(p),
                num(p.tps),
                num(p.goodput_per_s),
                num(p.p99_ms),
                r.top_wait().unwrap_or_else(|| "-".into())
            );
        }
        o.push_str(&best_line(series.best_pool_size(), series.without_pooler()));
        o.push_str(&mode_note(&series.runs));
        o.push('\n');
    }
    o
}

/// A note when the run without a pooler used another query mode than the pools (a
/// scenario's `prepared` becomes `extended` behind a PgBouncer that keeps no prepared
/// statements): the comparison then includes that difference.
pub fn mode_note(runs: &[&hotbench_results::RunRecord]) -> String {
    let direct = runs.iter().find(|r| r.pooler.is_none());
    let pooled = runs.iter().find(|r| r.pooler.is_some());
    match (direct, pooled) {
        (Some(d), Some(p)) if d.bench.query_mode != p.bench.query_mode => format!(
            "note: without a pooler the query mode was {}, through the pooler {}: the \
             comparison includes that difference\n",
            d.bench.query_mode, p.bench.query_mode
        ),
        _ => String::new(),
    }
}

/// `best pool size: 16 (…)`, against the run without a pooler when there is one.
pub fn best_line(best: Option<SweepPoint>, direct: Option<SweepPoint>) -> String {
    let Some(b) = best else {
        return "best pool size: none (no run went through a pooler)\n".into();
    };
    let mut s = format!(
        "best pool size: {} ({} goodput/s, p99 {} ms)",
        size(&b),
        num(b.goodput_per_s),
        num(b.p99_ms)
    );
    if let Some(d) = direct {
        let ratio = if d.goodput_per_s > 0.0 {
            format!("{:.2}×", b.goodput_per_s / d.goodput_per_s)
        } else {
            "–".into()
        };
        let _ = write!(
            s,
            "; without a pooler {} goodput/s, p99 {} ms: {ratio} the goodput",
            num(d.goodput_per_s),
            num(d.p99_ms)
        );
    }
    s.push('\n');
    s
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use hotbench_results::{PoolerSetup, RunRecord, SweepAxis};

    /// No pooler, then pools of 4, 16 and 64 at 100 clients.
    pub(crate) fn pool_sweep() -> SweepDoc {
        let run = |pool: Option<u32>, goodput: f64, p99: f64| {
            let mut r = RunRecord::default();
            r.bench.clients = 100;
            r.totals.tps = goodput;
            r.totals.goodput_per_s = goodput;
            r.totals.latency.p99_ms = p99;
            r.pooler = pool.map(|n| PoolerSetup {
                kind: "pgbouncer".into(),
                pool_size: Some(n),
                ..Default::default()
            });
            r
        };
        SweepDoc::labelled(vec![
            ("update-returning".into(), run(None, 600.0, 900.0)),
            ("update-returning".into(), run(Some(4), 1500.0, 120.0)),
            ("update-returning".into(), run(Some(16), 1200.0, 150.0)),
            ("update-returning".into(), run(Some(64), 700.0, 600.0)),
        ])
        .with_axis(SweepAxis::PoolSize)
    }

    #[test]
    fn each_size_is_a_row_and_the_best_is_called_out() {
        let text = render_pool_text(&pool_sweep());
        assert!(
            text.starts_with("update-returning, 100 clients:\n"),
            "{text}"
        );
        assert!(
            text.contains("no pooler        600        600        900  -\n"),
            "{text}"
        );
        assert!(
            text.contains("        4       1500       1500        120"),
            "{text}"
        );
        assert!(
            text.contains(
                "best pool size: 4 (1500 goodput/s, p99 120 ms); without a pooler 600 \
                 goodput/s, p99 900 ms: 2.50× the goodput\n"
            ),
            "{text}"
        );
        assert_eq!(mode_note(&pool_sweep().series()[0].runs), "");
        let mut doc = pool_sweep();
        doc.runs[0].bench.query_mode = "prepared".into();
        doc.runs[1].bench.query_mode = "extended".into();
        assert!(render_pool_text(&doc).contains(
            "note: without a pooler the query mode was prepared, through the pooler extended"
        ));
        assert_eq!(
            best_line(None, None),
            "best pool size: none (no run went through a pooler)\n"
        );
    }
}
