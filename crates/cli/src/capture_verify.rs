//! `hotbench capture --verify DIR`: the twin scored against the capture.
use std::path::Path;

use crate::fail::Result;
use crate::flags::capture::CaptureArgs;

pub fn main(_a: &CaptureArgs, _dir: &Path, _argv: &[String]) -> Result<u8> {
    Ok(0)
}
