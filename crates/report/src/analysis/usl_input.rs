//! What `hotbench usl` fits: (concurrency, throughput) points from any tool. A file is a CSV
//! of `clients,tps` lines (header optional, `#` comments and blank lines skipped; commas,
//! semicolons, tabs or spaces between the two numbers), or a hotbench result document: a run
//! result gives one point (clients, tps), a sweep its runs (one series per scenario variant),
//! a ladder one point per variant (a series per variant across several ladder files).

use crate::document::{parse_document, Document, DocumentError};

/// Points of one curve; `label` is empty for an unlabelled series.
#[derive(Debug, Clone, PartialEq)]
pub struct PointSeries {
    pub label: String,
    pub points: Vec<(f64, f64)>,
}

/// A point and the series it belongs to.
pub type LabelledPoint = (String, (f64, f64));

#[derive(Debug, thiserror::Error)]
pub enum UslInputError {
    #[error("{name}:{line}: {message}")]
    Csv {
        name: String,
        line: usize,
        message: String,
    },
    #[error(transparent)]
    Document(#[from] DocumentError),
}

fn csv_error(name: &str, line: usize, message: String) -> UslInputError {
    UslInputError::Csv {
        name: name.to_string(),
        line,
        message,
    }
}

/// `clients,tps` lines. The first data line may be a header (any non-numeric first field).
pub fn parse_csv(name: &str, text: &str) -> Result<Vec<(f64, f64)>, UslInputError> {
    let mut out = Vec::new();
    let mut seen_line = false;
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let first_line = !seen_line;
        seen_line = true;
        let fields: Vec<&str> = line
            .split([',', ';', '\t', ' '])
            .map(str::trim)
            .filter(|f| !f.is_empty())
            .collect();
        let parse = |f: &str| f.trim_matches('"').parse::<f64>().ok();
        if first_line && fields.first().is_some_and(|f| parse(f).is_none()) {
            continue; // a header such as `clients,tps`
        }
        if fields.len() != 2 {
            return Err(csv_error(
                name,
                i + 1,
                format!("expected two numbers (clients,throughput), got \"{line}\""),
            ));
        }
        let (Some(n), Some(x)) = (parse(fields[0]), parse(fields[1])) else {
            return Err(csv_error(
                name,
                i + 1,
                format!("not a number in \"{line}\""),
            ));
        };
        if !(n.is_finite() && n >= 1.0) {
            return Err(csv_error(
                name,
                i + 1,
                format!("concurrency must be ≥ 1, got \"{}\"", fields[0]),
            ));
        }
        if !(x.is_finite() && x >= 0.0) {
            return Err(csv_error(
                name,
                i + 1,
                format!("throughput must be ≥ 0, got \"{}\"", fields[1]),
            ));
        }
        out.push((n, x));
    }
    Ok(out)
}

/// The labelled points of a result document.
pub fn document_points(doc: &Document) -> Vec<LabelledPoint> {
    match doc {
        Document::Run(_, r) => vec![(String::new(), (r.bench.clients as f64, r.totals.tps))],
        Document::Sweep(s) => s
            .runs
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let label = s.labels.get(i).cloned().unwrap_or_default();
                (label, (r.bench.clients as f64, r.totals.tps))
            })
            .collect(),
        Document::Ladders(ls) => ls
            .iter()
            .flat_map(|l| l.variants.iter())
            .filter_map(|v| {
                let r = v.record.as_ref()?;
                Some((v.name.clone(), (r.bench.clients as f64, r.totals.tps)))
            })
            .collect(),
    }
}

/// The labelled points of one file: JSON documents start with `{`, anything else is CSV.
pub fn read_points(name: &str, text: &str) -> Result<Vec<LabelledPoint>, UslInputError> {
    if text.trim_start().starts_with('{') {
        Ok(document_points(&parse_document(name, text)?))
    } else {
        Ok(parse_csv(name, text)?
            .into_iter()
            .map(|p| (String::new(), p))
            .collect())
    }
}

/// Groups labelled points into series, in order of first appearance.
pub fn group(points: Vec<LabelledPoint>) -> Vec<PointSeries> {
    let mut out: Vec<PointSeries> = Vec::new();
    for (label, p) in points {
        match out.iter_mut().find(|s| s.label == label) {
            Some(s) => s.points.push(p),
            None => out.push(PointSeries {
                label,
                points: vec![p],
            }),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use hotbench_results::testdata::record;
    use hotbench_results::SweepDoc;

    #[test]
    fn csv_with_and_without_header() {
        let with = parse_csv("a.csv", "clients,tps\n1,100\n2, 190\n\n# note\n4;350.5\n").unwrap();
        assert_eq!(with, vec![(1.0, 100.0), (2.0, 190.0), (4.0, 350.5)]);
        let without = parse_csv("b.csv", "1\t100\n8 700\n").unwrap();
        assert_eq!(without, vec![(1.0, 100.0), (8.0, 700.0)]);
    }

    #[test]
    fn bad_csv_lines_name_file_and_line() {
        let e = parse_csv("a.csv", "clients,tps\n1,100\n2,abc\n").unwrap_err();
        assert_eq!(e.to_string(), "a.csv:3: not a number in \"2,abc\"");
        let e = parse_csv("a.csv", "1,2,3\n").unwrap_err();
        assert!(
            e.to_string().starts_with("a.csv:1: expected two numbers"),
            "{e}"
        );
        let e = parse_csv("a.csv", "1,100\n0,5\n").unwrap_err();
        assert!(
            e.to_string().starts_with("a.csv:2: concurrency must be"),
            "{e}"
        );
        let e = parse_csv("a.csv", "1,100\nx,5\n").unwrap_err();
        assert!(e.to_string().starts_with("a.csv:2: not a number"), "{e}");
    }

    #[test]
    fn documents_give_points_by_series() {
        let mut r = record("s", 1.0, 2, 200, 1.0);
        r.bench.clients = 8;
        let text = serde_json::to_string(&r).unwrap();
        let pts = read_points("r.json", &text).unwrap();
        assert_eq!(pts, vec![(String::new(), (8.0, 100.0))]);
        let sweep = SweepDoc::labelled(vec![
            ("a".into(), r.clone()),
            ("b".into(), r.clone()),
            ("a".into(), r),
        ]);
        let pts = read_points("s.json", &serde_json::to_string(&sweep).unwrap()).unwrap();
        let series = group(pts);
        assert_eq!(series.len(), 2);
        assert_eq!(series[0].label, "a");
        assert_eq!(series[0].points.len(), 2);
        assert!(read_points("x.json", "{\"format\":\"nope\"}").is_err());
    }
}
