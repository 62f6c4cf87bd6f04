//! Result documents read back from files (`hotbench report`, `hotbench usl`), recognised by
//! their `format` field: a run record, scenario ladders or a sweep.

use hotbench_results::{
    Ladder, LadderFile, RunRecord, SweepDoc, LADDER_FORMAT, RESULT_FORMAT, SWEEP_FORMAT,
};

/// A result document read from a file.
#[derive(Debug, Clone)]
pub enum Document {
    /// A run record, with its name (file name) for titles.
    Run(String, Box<RunRecord>),
    Ladders(Vec<Ladder>),
    Sweep(Box<SweepDoc>),
}

#[derive(Debug, thiserror::Error)]
pub enum DocumentError {
    #[error("{name}: not JSON: {source}")]
    Json {
        name: String,
        source: serde_json::Error,
    },
    #[error("{name}: unknown result format \"{format}\" (this hotbench reads {})", KNOWN_FORMATS.join(", "))]
    Format { name: String, format: String },
    #[error("{name}: invalid {format} document: {source}")]
    Shape {
        name: String,
        format: String,
        source: serde_json::Error,
    },
}

/// Reads a result document of any kind from JSON text.
pub fn parse_document(name: &str, text: &str) -> Result<Document, DocumentError> {
    /// Only the format, to pick the document's type (the rest is skipped unread).
    #[derive(serde::Deserialize)]
    struct Head {
        #[serde(default)]
        format: String,
    }
    let format = match serde_json::from_str::<Head>(text) {
        Ok(h) => h.format,
        // Valid JSON of another shape (an array, a string) is a document of no format.
        Err(_) if serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok() => String::new(),
        Err(source) => {
            return Err(DocumentError::Json {
                name: name.to_string(),
                source,
            })
        }
    };
    let shape = |source| DocumentError::Shape {
        name: name.to_string(),
        format: format.clone(),
        source,
    };
    let unknown = |format: &str| DocumentError::Format {
        name: name.to_string(),
        format: format.to_string(),
    };
    // Whole `family/version` strings: a later version of a known family is as unknown as
    // a foreign family (its shape may differ in ways this reader would misread).
    let doc = match format.as_str() {
        RESULT_FORMAT => Document::Run(
            name.to_string(),
            Box::new(serde_json::from_str(text).map_err(shape)?),
        ),
        LADDER_FORMAT => {
            let f: LadderFile = serde_json::from_str(text).map_err(shape)?;
            Document::Ladders(f.ladders)
        }
        SWEEP_FORMAT => Document::Sweep(Box::new(serde_json::from_str(text).map_err(shape)?)),
        other => return Err(unknown(other)),
    };
    // Run records nested in ladders and sweeps carry their own format too.
    let nested: Vec<&RunRecord> = match &doc {
        Document::Run(..) => Vec::new(),
        Document::Ladders(ls) => ls
            .iter()
            .flat_map(|l| &l.variants)
            .filter_map(|v| v.record.as_ref())
            .collect(),
        Document::Sweep(s) => s.runs.iter().collect(),
    };
    match nested.iter().find(|r| r.format != RESULT_FORMAT) {
        Some(r) => Err(unknown(&r.format)),
        None => Ok(doc),
    }
}

/// Every format `parse_document` reads.
pub const KNOWN_FORMATS: [&str; 3] = [RESULT_FORMAT, LADDER_FORMAT, SWEEP_FORMAT];

#[cfg(test)]
mod tests {
    use super::*;
    use hotbench_results::testdata::record;

    #[test]
    fn documents_are_recognised_by_format() {
        let r = record("a", 1.0, 2, 100, 1.0);
        let text = serde_json::to_string(&r).unwrap();
        assert!(matches!(
            parse_document("a.json", &text),
            Ok(Document::Run(..))
        ));
        let err = parse_document("x.json", "{\"format\": \"other/1\"}").unwrap_err();
        assert!(
            err.to_string()
                .contains("unknown result format \"other/1\""),
            "{err}"
        );
        assert!(parse_document("y.json", "not json").is_err());
    }

    #[test]
    fn later_versions_of_known_formats_are_refused() {
        let r = record("a", 1.0, 2, 100, 1.0);
        let mut v = serde_json::to_value(&r).unwrap();
        for f in [
            "hotbench-result/2",
            "hotbench-result/10",
            "hotbench-result",
            "",
        ] {
            v["format"] = f.into();
            let err = parse_document("r.json", &v.to_string()).unwrap_err();
            assert!(
                err.to_string()
                    .contains(&format!("unknown result format \"{f}\"")),
                "{err}"
            );
        }
        let mut nested = r.clone();
        nested.format = "hotbench-result/2".into();
        for doc in [
            serde_json::json!({"format": "hotbench-ladder/2", "ladders": []}),
            serde_json::json!({"format": "hotbench-sweep/2", "runs": []}),
            serde_json::json!({"format": "hotbench-ladder/1",
                "ladders": [{"variants": [{"name": "v", "record": nested}]}]}),
            serde_json::json!({"format": "hotbench-sweep/1", "runs": [nested]}),
        ] {
            let err = parse_document("d.json", &doc.to_string()).unwrap_err();
            assert!(err.to_string().contains("unknown result format"), "{err}");
        }
    }
}
