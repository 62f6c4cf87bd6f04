//! The check every documented record's test makes (the run record against
//! `docs/results.md`, the diagnosis against `docs/diagnosis.md`, the capture against
//! `docs/capture.md`): each key of a serialized object is named, in backquotes, in its doc.

/// The keys of each `(scope, object)` that `doc` does not name as `` `key` ``, each as
/// `scope` + key (`findings[].kind`).
pub fn undocumented(doc: &str, scopes: &[(&str, &serde_json::Value)]) -> Vec<String> {
    let mut missing = Vec::new();
    for (scope, v) in scopes {
        for key in v.as_object().map(|o| o.keys()).into_iter().flatten() {
            if !doc.contains(&format!("`{key}`")) {
                missing.push(format!("{scope}{key}"));
            }
        }
    }
    missing
}
