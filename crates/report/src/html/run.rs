//! One run record as an HTML section: its heading, then the run's sections
//! (`analysis::sections::RUN`: header facts and notes, headline figures, the charts over
//! time, commands, errors, hot keys, pooler, probes, perturbations) as the section model's
//! HTML, the charts drawn together under the headline figures.

use hotbench_stats::RunRecord;

use crate::analysis::sections;
use crate::html::doc::Doc;
use crate::html::section::run_sections;

/// The whole section of one run.
pub fn run_section(doc: &mut Doc, title: &str, rec: &RunRecord) {
    doc.raw("<section class=\"run\">\n");
    doc.heading(2, title);
    run_sections(doc, &sections::run(rec));
    doc.raw("</section>\n");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::sections::RUN;
    use hotbench_stats::hot_keys::HotKeyRecord;
    use hotbench_stats::{ErrorSample, PerturbationRecord};

    /// A run with commands, errors, hot keys and a perturbation.
    fn record() -> RunRecord {
        let mut r = hotbench_stats::testdata::record("s.sql", 1.0, 2, 100, 2.0);
        r.totals.counters.record_error_code("40001");
        r.errors.push(ErrorSample {
            sqlstate: "40001".into(),
            message: "could not serialize".into(),
            count: 1,
        });
        r.hot_keys.push(HotKeyRecord {
            variable: "k".into(),
            value: "1".into(),
            attempts: 3,
            ..Default::default()
        });
        r.perturbations.push(PerturbationRecord::new(
            "1s:checkpoint".into(),
            "checkpoint",
            String::new(),
            1.0,
        ));
        r
    }

    #[test]
    fn the_page_and_the_terminal_show_the_sections_in_the_lists_order() {
        let rec = record();
        let names: Vec<&str> = RUN.iter().map(|s| s(&rec).name).collect();
        let at = |name: &str| names.iter().position(|n| *n == name).expect(name);
        assert!(at("commands") < at("errors") && at("errors") < at("keys"));
        assert!(at("keys") < at("perturbations"));
        let mut doc = Doc::new("t");
        run_section(&mut doc, "run", &rec);
        let page = doc.finish();
        let pos = |what: &str| page.find(what).unwrap_or_else(|| panic!("{what}"));
        assert!(pos("<table class=\"commands\">") < pos("<table class=\"errors\">"));
        assert!(pos("<table class=\"errors\">") < pos("<table class=\"hot-keys\">"));
        assert!(pos("<table class=\"hot-keys\">") < pos("<table class=\"perturbations\">"));
        let text = crate::text::pgbench::extra_lines(&rec);
        let pos = |what: &str| text.find(what).unwrap_or_else(|| panic!("{what}: {text}"));
        assert!(pos("errors by SQLSTATE") < pos("hot keys (top 1 of 1"));
        assert!(pos("hot keys (top 1 of 1") < pos("perturbation 1s:checkpoint"));
    }
}
