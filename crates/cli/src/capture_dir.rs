//! A capture's scenario directory as the commands read it back: whether a directory holds a
//! capture document of ours (`capture.json`, checked to be one), the document, and the
//! scenario's name. Shared by `capture` (its output check and summary), `capture --verify`
//! and `diagnose --capture`.

use std::path::Path;

use hotbench_capture::scenario_dir::CAPTURE_JSON;
use hotbench_results::capture_record::{CaptureDoc, CAPTURE_FORMAT};

use crate::fail::{Fail, Result};

/// A directory holding a capture document of ours.
pub fn is_capture_dir(dir: &Path) -> bool {
    read_doc(dir).is_ok()
}

/// `DIR/capture.json`, read and checked to be a capture document.
pub fn read_doc(dir: &Path) -> Result<CaptureDoc> {
    let path = dir.join(CAPTURE_JSON);
    let text = hotbench_results::input_file::read_text(&path, 64 << 20)
        .map_err(|e| Fail::input(format!("could not read \"{}\": {e}", path.display())))?;
    let doc: CaptureDoc = serde_json::from_str(&text)
        .map_err(|e| Fail::input(format!("\"{}\" is not a capture: {e}", path.display())))?;
    if doc.format != CAPTURE_FORMAT {
        return Err(Fail::input(format!(
            "\"{}\" is not a capture (format \"{}\", expected \"{CAPTURE_FORMAT}\")",
            path.display(),
            doc.format.escape_debug()
        )));
    }
    Ok(doc)
}

/// The scenario's name: its directory's (as `scenario run --dir` names it).
pub fn scenario_name(dir: &Path) -> String {
    dir.canonicalize()
        .unwrap_or_else(|_| dir.to_path_buf())
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "scenario".into())
}
