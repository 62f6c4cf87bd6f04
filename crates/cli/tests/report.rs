//! Reports from real runs against the project's harness server: `run --html` opened in
//! headless Chromium (no console errors, every chart drawn, a screenshot kept), user text
//! escaped, `compare` and `merge` on real result files, a short `sweep` with its USL fit (and
//! one of a piped script), and `hotbench usl --html` drawn in Chromium.

mod common;

use std::path::Path;
use std::process::Output;

use common::browser::{chromium_or_skip, headless};
use common::*;

/// `hotbench SUB <connection to db> ARGS… DBNAME`.
fn sub(name: &str, db: &hotbench_pgserver::ConnInfo, args: &[&str]) -> Output {
    command_on(db, &[name], args)
        .output()
        .expect("run hotbench")
}

fn ok(o: &Output) -> String {
    let (out, err) = text(o);
    assert!(o.status.success(), "failed:\n{out}\n{err}");
    out
}

fn tool(args: &[&str]) -> Output {
    hotbench().args(args).output().expect("run hotbench")
}

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 temp path")
}

#[test]
fn html_report_of_a_real_run_draws_every_chart_in_chromium() {
    let db = database("html");
    let o = run(&db, &["-i", "-q"]);
    ok(&o);
    let dir = temp_dir("html");
    let html = dir.join("run.html");
    let json = dir.join("run.json");
    let out = ok(&run(
        &db,
        &[
            "-T",
            "3",
            "-c",
            "4",
            "-j",
            "2",
            "--rtt",
            "1ms",
            "--random-seed",
            "7",
            "--json",
            s(&json),
            "--html",
            s(&html),
        ],
    ));
    assert!(
        out.contains(&format!("report written to {}", html.display())),
        "{out}"
    );
    let page = std::fs::read_to_string(&html).expect("html written");
    // Self-contained: no external resources at all.
    for bad in [
        "src=\"http",
        "href=\"http",
        "<link ",
        "@import",
        "<script src",
    ] {
        assert!(
            !page.contains(bad),
            "page references an external resource: {bad}"
        );
    }
    assert!(page.contains("random seed</dt><dd>7</dd>"));
    assert!(page.contains("1 ms"), "rtt shown");
    let charts = page.matches("data-chart=").count();
    assert!(charts >= 4, "expected at least 4 charts, found {charts}");
    check_in_browser(&dir, &html, charts, "report.png");
}

/// Opens `html` in headless Chromium: the page must report every one of its `charts` drawn
/// and no errors, with no console errors logged; saves a screenshot `shot` in `dir`. Skips
/// (with a message) when Chromium is not installed, fails then under CI.
fn check_in_browser(dir: &Path, html: &Path, charts: usize, shot: &str) {
    let Some(browser) = chromium_or_skip(html) else {
        return;
    };
    let (dom, log) = headless(&browser, dir, html, &["--dump-dom".to_string()]);
    let status = dom
        .split("<pre id=\"status\">")
        .nth(1)
        .and_then(|r| r.split("</pre>").next())
        .unwrap_or("(no status element)")
        .to_string();
    assert!(
        status.starts_with(&format!(
            "ready charts={charts} drawn={charts} empty=0 errors=0"
        )),
        "page status: {status}\nchromium log:\n{log}"
    );
    assert!(dom.contains("data-ready=\"yes\""), "{status}");
    for line in log.lines() {
        let l = line.to_ascii_lowercase();
        assert!(
            !(l.contains("console") && (l.contains("error") || l.contains("uncaught"))),
            "console error: {line}"
        );
    }
    let shot = dir.join(shot);
    let _ = std::fs::remove_file(&shot);
    headless(
        &browser,
        dir,
        html,
        &[format!("--screenshot={}", shot.display())],
    );
    let size = std::fs::metadata(&shot).map(|m| m.len()).unwrap_or(0);
    assert!(
        size > 10_000,
        "screenshot {} is {size} bytes",
        shot.display()
    );
    println!("screenshot: {}", shot.display());
}

#[test]
fn user_text_in_the_report_is_escaped() {
    let db = database("escape");
    let dir = temp_dir("escape");
    // The name contains a '/', so the script lives in a directory named "<script>alert(1)<".
    let evil_dir = dir.join("<script>alert(1)<");
    std::fs::create_dir_all(&evil_dir).expect("dir");
    std::fs::write(
        evil_dir.join("script>.sql"),
        "select '</script><script>alert(2)</script>';\n",
    )
    .expect("script");
    let script = format!("{}/<script>alert(1)</script>.sql", dir.display());
    let html = dir.join("evil.html");
    let json = dir.join("evil.json");
    ok(&run(
        &db,
        &[
            "-n",
            "-T",
            "2",
            "-r",
            "-f",
            &script,
            "--json",
            s(&json),
            "--html",
            s(&html),
        ],
    ));
    let page = std::fs::read_to_string(&html).expect("html");
    assert!(
        !page.contains("<script>alert("),
        "unescaped user text in the report"
    );
    assert!(page.contains("&lt;script&gt;alert(1)&lt;/script&gt;.sql"));
    assert!(
        page.contains("&lt;/script&gt;&lt;script&gt;alert(2)"),
        "SQL text escaped"
    );
    assert_eq!(
        page.matches("<script").count(),
        3,
        "only the report's own scripts"
    );
    // `report` renders the JSON the same way.
    let again = dir.join("again.html");
    ok(&tool(&["report", s(&json), "-o", s(&again)]));
    let page = std::fs::read_to_string(&again).expect("html");
    assert!(!page.contains("<script>alert("));
}

#[test]
fn compare_and_merge_real_results() {
    let db = database("cmpmerge");
    let dir = temp_dir("cmpmerge");
    let script = write_script(&dir, "one.sql", "select 1;\n");
    let (a, b) = (dir.join("a.json"), dir.join("b.json"));
    for (p, c) in [(&a, "2"), (&b, "3")] {
        ok(&run(
            &db,
            &[
                "-n",
                "-T",
                "2",
                "--interval",
                "250ms",
                "-c",
                c,
                "-f",
                s(&script),
                "--json",
                s(p),
            ],
        ));
    }
    let cmp_html = dir.join("cmp.html");
    let out = ok(&tool(&["compare", s(&a), s(&b), "-o", s(&cmp_html)]));
    for want in [
        "tps ↑",
        "goodput/s ↑",
        "p50 ms ↓",
        "p99 ms ↓",
        "p99.9 ms ↓",
        "failed ↓",
        "retries ↓",
        "×",
    ] {
        assert!(out.contains(want), "missing {want:?} in:\n{out}");
    }
    assert!(
        out.contains(&format!(
            "B vs A ({} vs {}):\n  tps",
            b.display(),
            a.display()
        )),
        "{out}"
    );
    assert!(std::fs::read_to_string(&cmp_html)
        .expect("html")
        .contains("comparison"));

    let all = dir.join("all.json");
    let out = ok(&tool(&["merge", s(&a), s(&b), "-o", s(&all)]));
    assert!(out.contains("merged 2 results"), "{out}");
    let (ja, jb, jm) = (json(&a), json(&b), json(&all));
    let cnt = |v: &serde_json::Value| v["totals"]["counters"]["cnt"].as_u64().unwrap();
    assert_eq!(cnt(&jm), cnt(&ja) + cnt(&jb));
    assert_eq!(jm["bench"]["clients"].as_u64(), Some(5));
    assert_eq!(jm["format"], "hotbench-result/1");
    let hist = |v: &serde_json::Value| {
        hotbench_stats::LatencyHistogram::from_base64(
            v["totals"]["counters"]["hist"].as_str().unwrap(),
        )
        .unwrap()
        .len()
    };
    assert_eq!(hist(&jm), hist(&ja) + hist(&jb));
    assert_eq!(hist(&jm), cnt(&jm));
    let tl_sum = |v: &serde_json::Value| {
        v["timeline"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["totals"]["cnt"].as_u64().unwrap())
            .sum::<u64>()
    };
    assert_eq!(tl_sum(&jm), tl_sum(&ja) + tl_sum(&jb));
    // Compare refuses what it cannot read, with exit code 1.
    let bad = write_script(&dir, "bad.json", "{\"format\": \"nope/1\"}");
    let o = tool(&["compare", s(&a), s(&bad)]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o).1.contains("unknown result format \"nope/1\""));
}

#[test]
fn sweep_runs_each_client_count_and_fits_the_usl() {
    let db = database("sweep");
    let dir = temp_dir("sweep");
    let script = write_script(&dir, "one.sql", "select pg_sleep(0.002);\n");
    let html = dir.join("sweep.html");
    let json = dir.join("sweep.json");
    let out = ok(&sub(
        "sweep",
        &db,
        &[
            "-n",
            "-T",
            "1",
            "-c",
            "1,2,4",
            "-f",
            s(&script),
            "--json",
            s(&json),
            "-o",
            s(&html),
            // Every point is perturbed (docs/perturbations.md: a run setting).
            "--perturb",
            "500ms:checkpoint",
        ],
    ));
    for n in [1, 2, 4] {
        assert!(
            out.contains(&format!("=== sweep: {n} clients ===")),
            "{out}"
        );
        assert!(out.contains(&format!("number of clients: {n}\n")), "{out}");
    }
    assert!(out.contains("USL fit: σ (contention) = "), "{out}");
    assert!(out.contains("peak: "), "{out}");
    let doc = json_value(&json);
    assert_eq!(doc["format"], "hotbench-sweep/1");
    assert_eq!(doc["runs"].as_array().map(Vec::len), Some(3));
    for run in doc["runs"].as_array().into_iter().flatten() {
        let p = &run["perturbations"][0];
        assert_eq!(
            (&p["spec"], &p["kind"], &p["error"]),
            (
                &"500ms:checkpoint".into(),
                &"checkpoint".into(),
                &serde_json::Value::Null
            ),
            "{run}"
        );
    }
    assert_eq!(
        out.matches("perturbation 500ms:checkpoint at ").count(),
        3,
        "{out}"
    );
    assert!(std::fs::read_to_string(&html)
        .expect("html")
        .contains("measured vs USL fit"));
}

/// A script read from a pipe (`-f -`, `<(…)`) gives its text once: every count of the sweep
/// runs it (the second count had read an empty pipe: "empty command list", exit 1, after
/// the first count had run).
#[test]
fn a_sweep_runs_a_piped_script_at_every_count() {
    use std::io::Write;
    let db = database("sweeppipe");
    let mut child = command_on(&db, &["sweep"], &["-n", "-t", "2", "-c", "1,2", "-f", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run hotbench");
    let mut stdin = child.stdin.take().expect("stdin");
    stdin.write_all(b"select 1;\n").expect("write the script");
    drop(stdin);
    let out = ok(&child.wait_with_output().expect("sweep"));
    for n in [1, 2] {
        assert!(out.contains(&format!("number of clients: {n}\n")), "{out}");
    }
}

fn json_value(p: &Path) -> serde_json::Value {
    json(p)
}

#[test]
fn scenario_ladder_html_report_draws_in_chromium() {
    let db = database("ladderhtml");
    let dir = temp_dir("ladderhtml");
    let html = dir.join("ladder.html");
    let json = dir.join("ladder.json");
    let out = ok(&command_on(
        &db,
        &[
            "scenario",
            "run",
            "tpcb-hotspot",
            "--variants",
            "tpcb,bucketed",
        ],
        &["-c", "4", "-T", "1", "--html", s(&html), "--json", s(&json)],
    )
    .output()
    .expect("run hotbench"));
    assert!(out.contains("report written to"), "{out}");
    let page = std::fs::read_to_string(&html).expect("html written");
    assert!(page.contains("class=\"bars\""), "ladder bars");
    assert!(page.contains("checks ✔"), "check results shown");
    for v in ["tpcb", "bucketed"] {
        assert!(
            page.contains(&format!("tpcb-hotspot / {v}")),
            "section for {v}"
        );
    }
    // `report` renders the ladder file the same way.
    let again = dir.join("again.html");
    ok(&tool(&["report", s(&json), "-o", s(&again)]));
    let page2 = std::fs::read_to_string(&again).expect("html");
    assert_eq!(
        page2.matches("data-chart=").count(),
        page.matches("data-chart=").count()
    );
    assert!(page2.contains("class=\"bars\""));
    let charts = page.matches("data-chart=").count();
    check_in_browser(&dir, &html, charts, "ladder.png");
}

/// Issue 7's acceptance: on the tpcb-hotspot scenario the USL reports more contention (σ)
/// for `tpcb`, whose every transaction updates the one branch row, than for `bucketed`.
#[test]
fn sweep_of_tpcb_hotspot_finds_more_contention_in_tpcb_than_bucketed() {
    let db = database("sweepscn");
    let dir = temp_dir("sweepscn");
    let json = dir.join("sweep.json");
    let html = dir.join("sweep.html");
    let out = ok(&sub(
        "sweep",
        &db,
        &[
            "--scenario",
            "tpcb-hotspot",
            "--variants",
            "tpcb,bucketed",
            "-c",
            "1,2,4,8,16,32",
            "-T",
            "2",
            "--rtt",
            "3ms",
            "--json",
            s(&json),
            "-o",
            s(&html),
        ],
    ));
    println!("{out}");
    let doc: hotbench_results::SweepDoc =
        serde_json::from_value(json_value(&json)).expect("sweep document");
    let sigma = |label: &str| {
        let series = doc.series();
        let s = series
            .iter()
            .find(|s| s.label == label)
            .unwrap_or_else(|| panic!("no series {label}"));
        assert_eq!(s.runs.len(), 6, "{label}: one run per client count");
        hotbench_report::analysis::sweep::fit(s).expect("fit").sigma
    };
    let (hot, spread) = (sigma("tpcb"), sigma("bucketed"));
    println!("σ tpcb = {hot:.4}, σ bucketed = {spread:.4}");
    assert!(
        hot > spread,
        "σ tpcb {hot} should exceed σ bucketed {spread}\n{out}"
    );
    let charts = std::fs::read_to_string(&html)
        .expect("html")
        .matches("data-chart=")
        .count();
    check_in_browser(&dir, &html, charts, "sweep.png");
}

/// `run --prometheus`: the endpoint serves live counters while the run is going.
#[test]
fn prometheus_endpoint_serves_live_metrics_during_a_run() {
    use std::io::{BufRead, BufReader, Read, Write};
    let db = database("prom");
    let dir = temp_dir("prom");
    let script = write_script(&dir, "one.sql", "select 1;\n");
    let mut child = spawn_run(
        &db,
        &[
            "-n",
            "-T",
            "3",
            "-c",
            "2",
            "-f",
            s(&script),
            "--prometheus",
            "127.0.0.1:0",
        ],
    );
    let stderr = child.stderr.take().expect("stderr piped");
    let mut lines = BufReader::new(stderr).lines();
    let addr = loop {
        let line = lines
            .next()
            .expect("prometheus line before stderr closes")
            .expect("read stderr");
        if let Some(rest) = line.strip_prefix("prometheus metrics at http://") {
            break rest.trim_end_matches("/metrics").to_string();
        }
    };
    let scrape = || {
        let mut conn = std::net::TcpStream::connect(&addr).expect("connect to the endpoint");
        write!(conn, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n").expect("request");
        let mut body = String::new();
        conn.read_to_string(&mut body).expect("response");
        body
    };
    let total = |body: &str| -> f64 {
        body.lines()
            .find_map(|l| l.strip_prefix("hotbench_transactions_total "))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0.0)
    };
    // The first interval reaches the endpoint about a second into the run.
    let mut body = String::new();
    wait_until(
        "a scrape counting transactions",
        std::time::Duration::from_secs(30),
        || {
            body = scrape();
            total(&body) > 0.0
        },
    );
    let out = child.wait_with_output().expect("run ends");
    assert!(out.status.success());
    assert!(body.starts_with("HTTP/1.1 200 OK"), "{body}");
    assert!(body.contains("hotbench_clients 2\n"), "{body}");
    let total = total(&body);
    assert!(total > 0.0, "no transactions counted yet:\n{body}");
    assert!(
        body.contains("hotbench_latency_milliseconds{quantile=\"0.99\"}"),
        "{body}"
    );
}

#[test]
fn usl_page_draws_in_chromium() {
    let dir = temp_dir("usl-html");
    // Points on a USL curve with a peak (σ = 0.05, κ = 0.002), as `hotbench usl` reads them.
    let csv: String = [1, 2, 4, 8, 16, 24, 32, 48]
        .iter()
        .map(|&n| {
            let n = n as f64;
            let x = 100.0 * n / (1.0 + 0.05 * (n - 1.0) + 0.002 * n * (n - 1.0));
            format!("{n},{x:.2}\n")
        })
        .collect();
    let data = write_script(&dir, "points.csv", &format!("clients,tps\n{csv}"));
    let page = dir.join("usl.html");
    ok(&tool(&["usl", s(&data), "--html", s(&page)]));
    let text = std::fs::read_to_string(&page).expect("usl page");
    assert_eq!(text.matches("data-chart=").count(), 1);
    check_in_browser(&dir, &page, 1, "usl.png");
}
