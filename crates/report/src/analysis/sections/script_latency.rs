//! Latency percentiles per script when a run has several (`-f a.sql@1 -f b.sql@9`): the
//! run's percentiles cover them all, so a slow script hides behind a frequent fast one.
//! One table, in the terminal and on the page.

use hotbench_stats::RunRecord;

use crate::analysis::section::{Cell, Section, Table, TextForm};

pub fn section(rec: &RunRecord) -> Section {
    let mut s = Section::new("script_latency");
    let several_groups = rec.groups.len() > 1;
    let scripts: Vec<_> = rec
        .groups
        .iter()
        .flat_map(|g| g.scripts.iter().map(move |sc| (g, sc)))
        .collect();
    if scripts.len() < 2 {
        return s;
    }
    let rows = scripts
        .iter()
        .map(|(g, sc)| {
            let l = &sc.totals.latency;
            let ms = |v: f64| {
                if l.count > 0 {
                    Cell::num(v)
                } else {
                    Cell::from("–")
                }
            };
            let name = if several_groups {
                format!("{}: {}", g.name, sc.name)
            } else {
                sc.name.clone()
            };
            vec![
                Cell::from(name),
                Cell::from(sc.totals.counters.cnt.to_string()),
                ms(l.p50_ms),
                ms(l.p90_ms),
                ms(l.p99_ms),
                ms(l.p999_ms),
                ms(l.max_ms),
            ]
        })
        .collect();
    s.table(
        Table::new(
            "script-latency",
            &[
                "script",
                "transactions",
                "p50 ms",
                "p90 ms",
                "p99 ms",
                "p99.9 ms",
                "max ms",
            ],
            rows,
        )
        .titled("latency percentiles by script")
        .in_text(TextForm::Columns),
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn several_scripts_get_a_row_each_one_script_nothing() {
        let mut rec = hotbench_stats::testdata::record("a.sql", 1.0, 2, 100, 2.0);
        assert!(
            section(&rec).blocks.is_empty(),
            "the run's percentiles say it"
        );
        let mut b = rec.groups[0].scripts[0].clone();
        b.name = "b.sql".into();
        b.totals.latency = Default::default();
        rec.groups[0].scripts.push(b);
        let s = section(&rec);
        let t = s.tables().next().expect("a table");
        assert_eq!(t.text, TextForm::Columns, "the terminal shows it too");
        let row = |i: usize| t.rows[i].iter().map(Cell::text).collect::<Vec<_>>();
        assert_eq!(row(0)[0], "a.sql");
        assert_eq!(row(0)[1], "100");
        assert!(row(0)[2].starts_with("2."), "{:?}", row(0));
        assert_eq!(
            row(1)[2..],
            ["–", "–", "–", "–", "–"],
            "no latency, no figure"
        );
    }
}
