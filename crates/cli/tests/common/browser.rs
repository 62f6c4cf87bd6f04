//! Headless Chromium for the HTML report tests: found on PATH (Debian's `chromium`) or via
//! $HOTBENCH_CHROMIUM. Without one, tests skip their browser half with a message, except
//! under CI (`HOTBENCH_CI` set, as `.ci/run` does), which installs Chromium: there a missing
//! browser fails the test rather than letting it pass untested.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Chromium from PATH (Debian's `chromium`), or $HOTBENCH_CHROMIUM.
pub fn chromium() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("HOTBENCH_CHROMIUM") {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH")?;
    for name in ["chromium", "chromium-browser", "google-chrome", "chrome"] {
        for dir in std::env::split_paths(&path) {
            let p = dir.join(name);
            if p.is_file() {
                return Some(p);
            }
        }
    }
    None
}

/// The browser for a test's browser half (checking `page`): `None`, with a SKIPPED message,
/// where there is none; a failure under CI.
pub fn chromium_or_skip(page: &Path) -> Option<PathBuf> {
    let found = chromium();
    if found.is_none() {
        let page = page.display();
        assert!(
            !super::under_ci(),
            "chromium not found under CI to check {page} (.ci/run installs it; or set HOTBENCH_CHROMIUM)"
        );
        println!(
            "SKIPPED the browser check of {page}: chromium not found \
             (install it with `apt-get install -y chromium`, or set HOTBENCH_CHROMIUM)"
        );
    }
    found
}

/// Runs headless Chromium on `page` with a fresh profile; returns (stdout, stderr).
pub fn headless(browser: &Path, dir: &Path, page: &Path, extra: &[String]) -> (String, String) {
    let profile = dir.join(format!("profile-{}", extra.len()));
    let _ = std::fs::remove_dir_all(&profile);
    let o = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-dev-shm-usage",
            "--enable-logging=stderr",
            "--v=0",
            "--virtual-time-budget=10000",
            "--window-size=1280,4000",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(extra)
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("start chromium");
    let _ = std::fs::remove_dir_all(&profile);
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}
