//! The HTML report's charts say what the run did: units on their own axes (backends waiting
//! on locks are not flattened by the xmin age in thousands), a wait event keeps its colour
//! from chart to chart, static legends name series (no `s: –`), no trailing partial interval
//! drawn as a dip to zero, whole multi-line statements, and the tables panel's live counts.
//! Checked in the page data and, when Chromium is installed, in the drawn page.

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use common::browser::{chromium_or_skip, headless};
use common::{conn_args, database, hotbench, temp_dir, text};

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 temp path")
}

/// The charts declared in the page (`<script id="hotbench-data">`, JSON).
fn charts(page: &str) -> Vec<serde_json::Value> {
    let data = page
        .split("<script id=\"hotbench-data\" type=\"application/json\">")
        .nth(1)
        .and_then(|r| r.split("</script>").next())
        .expect("chart data");
    serde_json::from_str(data).expect("chart data is JSON")
}

/// The `live` cell of `table`'s first row in the page's tables panel.
fn live_count(page: &str, table: &str) -> i64 {
    let tables = page
        .split("<table class=\"tables\">")
        .nth(1)
        .and_then(|t| t.split("</table>").next())
        .expect("tables panel");
    let row = tables
        .split("<tr>")
        .find(|r| r.contains(&format!("<td>{table}</td>")))
        .unwrap_or_else(|| panic!("no {table} row in {tables}"));
    let cells: Vec<&str> = row
        .split("<td>")
        .skip(1)
        .map(|c| c.split("</td>").next().unwrap_or(""))
        .collect();
    cells[5].parse().expect("live count")
}

#[test]
fn tables_panel_counts_the_rows_the_setup_inserted() {
    // daily-limit's setup inserts the hot rows; the run only updates them.
    let db = database("live");
    let dir = temp_dir("live");
    let html = dir.join("daily.html");
    let o = hotbench()
        .args([
            "scenario",
            "run",
            "daily-limit",
            "--variants",
            "update-returning",
        ])
        .args(["-c", "2", "-T", "1", "--html", s(&html)])
        .args(conn_args(&db))
        .arg(&db.dbname)
        .output()
        .expect("run hotbench");
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{stdout}\n{stderr}");
    let page = std::fs::read_to_string(&html).expect("html written");
    assert!(
        live_count(&page, "daily_limit") > 0,
        "live 0 for daily_limit"
    );
}

#[test]
fn ladder_charts_have_own_axes_stable_colours_and_full_statements() {
    let db = database("charts");
    let dir = temp_dir("charts");
    let html = dir.join("queue.html");
    let o = hotbench()
        .args([
            "scenario",
            "run",
            "queue",
            "--variants",
            "for-update,skip-locked",
        ])
        .args(["-c", "4", "-T", "3", "--param", "backlog=3000"])
        .args(["--param", "xmin_holder=on", "--html", s(&html)])
        .args(conn_args(&db))
        .arg(&db.dbname)
        .output()
        .expect("run hotbench");
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{stdout}\n{stderr}");
    let page = std::fs::read_to_string(&html).expect("html written");
    let charts = charts(&page);

    // Own axis per unit: no chart mixes backends with xids.
    for c in &charts {
        let labels: Vec<&str> = c["series"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|s| s["label"].as_str())
            .collect();
        let has = |w: &str| labels.iter().any(|l| l.contains(w));
        assert!(!(has("locks") && has("xmin")), "mixed units: {labels:?}");
    }
    assert!(
        charts.iter().any(|c| c["y_label"] == "xids"),
        "no xmin chart (xmin_holder=on)"
    );

    // A wait event has one colour on every chart.
    let mut colour: BTreeMap<String, String> = BTreeMap::new();
    let mut waits_charts = 0;
    for c in charts
        .iter()
        .filter(|c| c["y_label"] == "backends" && c["stacked"] == true)
    {
        waits_charts += 1;
        for s in c["series"].as_array().unwrap() {
            let label = s["label"].as_str().unwrap().to_string();
            let col = s["color"]
                .as_str()
                .expect("wait series has a colour")
                .to_string();
            let first = colour.entry(label.clone()).or_insert(col.clone());
            assert_eq!(*first, col, "{label} changes colour");
        }
    }
    assert!(waits_charts >= 2, "one waits chart per variant expected");

    // No trailing partial interval: the last throughput point of each run is not a drop
    // to (near) zero from the run's median.
    for c in charts
        .iter()
        .filter(|c| c["title"] == "Throughput and goodput")
    {
        let tps: Vec<f64> = c["series"][0]["values"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|v| v.as_f64())
            .collect();
        let mut sorted = tps.clone();
        sorted.sort_by(f64::total_cmp);
        let median = sorted[sorted.len() / 2];
        let last = *tps.last().unwrap();
        assert!(last > median * 0.2, "trailing dip: {tps:?}");
    }

    // The whole multi-line statement, not only its first line.
    assert!(
        page.contains("for update skip locked\n)) as hotbench_ok"),
        "multi-line statement cut to its first line"
    );

    // The tables panel: the queue table had rows during the run.
    assert!(live_count(&page, "job_queue") > 0, "live 0 for job_queue");

    let Some(browser) = chromium_or_skip(&html) else {
        return;
    };
    let (dom, log) = headless(&browser, &dir, &html, &["--dump-dom".to_string()]);
    assert!(dom.contains("data-ready=\"yes\""), "page not ready:\n{log}");
    // Static legends (no cursor): series names, no "–" values.
    assert!(dom.contains("class=\"u-legend"), "no legend drawn");
    assert!(
        !dom.contains("class=\"u-value\">–</td>"),
        "a static legend shows '–'"
    );
    assert!(dom.contains("hb-idle"), "static legends keep their x entry");
    let shot = dir.join("charts.png");
    headless(
        &browser,
        &dir,
        &html,
        &[format!("--screenshot={}", shot.display())],
    );
    println!("screenshot: {}", shot.display());
}
