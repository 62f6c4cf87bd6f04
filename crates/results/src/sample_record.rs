//! What the documents of a read-only sample of a live server share: `hotbench diagnose`'s
//! ([`crate::diagnosis_record`]) and `hotbench capture`'s ([`crate::capture_record`]) both
//! say how their sample ended with one [`SampleStatus`] (`complete`, `interrupted`,
//! `server_lost` in the JSON), so the binary turns either into the same exit code and line.

use serde::{Deserialize, Serialize};

/// How a sample of a live server ended; the document covers what was sampled either way.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SampleStatus {
    /// Sampled for the whole duration.
    #[default]
    Complete,
    /// Stopped early by Ctrl-C.
    Interrupted,
    /// The server went away mid-sample.
    ServerLost,
}

#[cfg(test)]
mod tests {
    use super::SampleStatus;

    #[test]
    fn statuses_are_snake_case_and_default_to_complete() {
        for (s, text) in [
            (SampleStatus::Complete, "\"complete\""),
            (SampleStatus::Interrupted, "\"interrupted\""),
            (SampleStatus::ServerLost, "\"server_lost\""),
        ] {
            assert_eq!(serde_json::to_string(&s).unwrap(), text);
            assert_eq!(serde_json::from_str::<SampleStatus>(text).unwrap(), s);
        }
        assert_eq!(SampleStatus::default(), SampleStatus::Complete);
    }
}
