//! SQL splitting and variable substitution compared with real pgbench 15.
//!
//! `testdata/sql_cases.txt` holds scripts; `testdata/sql_expected.txt` the
//! statements pgbench sent for each (from `pgbench --debug`), under
//! `-M simple` and `-M extended`. Regenerate/check against real pgbench with
//! `HOTBENCH_PGBENCH_ORACLE=write|1` (connection from `PGHOST`/`PGPORT`/`PGUSER`).

mod oracle_support;

use hotbench_script::{
    client_variables, derive_seeds, parse_script, Action, Client, CommandKind, Variables,
};
use oracle_support::{assert_no_mismatches, check_or_write, load_expected, oracle_mode, testdata};

struct Case {
    simple_only: bool,
    script: String,
}

fn load_cases() -> Vec<Case> {
    let text = std::fs::read_to_string(testdata("sql_cases.txt")).expect("read sql_cases.txt");
    let mut cases = Vec::new();
    for block in text.split("----\n") {
        let mut simple_only = false;
        let mut script = String::new();
        for line in block.lines() {
            if line == "#simple" {
                simple_only = true;
            } else if !line.starts_with("# ") {
                script.push_str(line);
                script.push('\n');
            }
        }
        if !script.trim().is_empty() {
            cases.push(Case {
                simple_only,
                script,
            });
        }
    }
    cases
}

fn modes(case: &Case) -> &'static [&'static str] {
    if case.simple_only {
        &["simple"]
    } else {
        &["simple", "extended"]
    }
}

/// Our commands' `first_line`s, as pgbench's `-r` report lists them.
fn report_ours(case: &Case) -> Vec<String> {
    let Ok(script) = parse_script("sql.sql", &case.script) else {
        return Vec::new();
    };
    let mut out = vec!["--- report".to_string()];
    for c in script.commands() {
        out.extend(c.first_line.split('\n').map(str::to_string));
    }
    out
}

fn run_ours(case: &Case, mode: &str) -> Vec<String> {
    let script = match parse_script("sql.sql", &case.script) {
        Ok(s) => s,
        Err(e) => return e.to_string().lines().map(str::to_string).collect(),
    };
    let seeds = derive_seeds(1, 1, 1, true);
    let vars = client_variables(&Variables::new(), 0, 1, seeds.default_seed, 1);
    let mut client = Client::new(0, vars, seeds.clients[0]);
    let mut out = Vec::new();
    let mut sink = Vec::new();
    let mut i = 0;
    let mut buf = String::new();
    while i < script.len() {
        match script.command(i).map(|c| &c.kind) {
            Some(CommandKind::Sql(sql)) => {
                if mode == "simple" {
                    sql.render_simple(&client.vars, &mut buf);
                } else {
                    sql.render_extended(&client.vars, &mut buf);
                }
                out.push("--- send".to_string());
                out.extend(buf.lines().map(str::to_string));
                i += 1;
            }
            _ => match client.execute(&script, 0, i, &mut sink) {
                Ok(Action::Jump(n)) => i = n,
                Ok(_) => i += 1,
                Err(e) => {
                    out.push(e.to_string());
                    break;
                }
            },
        }
    }
    out
}

fn run_pgbench(case: &Case, mode: &str, dir: &std::path::Path) -> Vec<String> {
    std::fs::write(dir.join("sql.sql"), &case.script).expect("write case");
    let bin = std::env::var("HOTBENCH_PGBENCH").unwrap_or_else(|_| "pgbench".to_string());
    let out = std::process::Command::new(bin)
        .current_dir(dir)
        .args([
            "--debug",
            "-r",
            "-n",
            "-t",
            "1",
            "--random-seed",
            "1",
            "-M",
            mode,
            "-f",
            "sql.sql",
        ])
        .output()
        .expect("run pgbench");
    let text = String::from_utf8_lossy(&out.stderr);
    let mut lines = Vec::new();
    // The -r report (stdout): "   latency  failures first_line".
    let stdout = String::from_utf8_lossy(&out.stdout);
    let mut report = Vec::new();
    let mut in_report = false;
    for l in stdout.lines() {
        if l.starts_with("statement latencies") {
            in_report = true;
            report.push("--- report".to_string());
        } else if in_report {
            // "%11.3f  %10d  first_line"; continuation lines of a multi-line
            // first_line come verbatim.
            let mut parts = l.split_whitespace();
            let numeric = parts.next().is_some_and(|t| t.parse::<f64>().is_ok())
                && parts.next().is_some_and(|t| t.parse::<i64>().is_ok());
            if numeric {
                let rest = l.trim_start();
                let rest = rest.split_once(' ').map_or("", |(_, r)| r).trim_start();
                let first_line = rest.split_once(' ').map_or("", |(_, r)| r).trim_start();
                report.push(first_line.to_string());
            } else {
                report.push(l.to_string());
            }
        }
    }
    let mut in_send = false;
    for l in text.lines() {
        if let Some(sql) = l.strip_prefix("pgbench: client 0 sending ") {
            lines.push("--- send".to_string());
            lines.push(sql.to_string());
            in_send = true;
        } else if l.starts_with("pgbench: ") {
            in_send = false;
            if let Some(e) = l.strip_prefix("pgbench: error: ") {
                if e.starts_with("sql.sql:") {
                    lines.push(e.to_string());
                    in_send = true; // the command text and caret follow
                }
            }
        } else if in_send {
            lines.push(l.to_string());
        }
    }
    lines.extend(report);
    lines
}

fn render(cases: &[Case], results: &[(usize, &str, Vec<String>)]) -> String {
    let mut s = String::new();
    for (i, mode, lines) in results {
        let first = cases[*i].script.lines().next().unwrap_or("");
        s.push_str(&format!("=== {i} {mode} {first}\n"));
        for l in lines {
            s.push_str(l);
            s.push('\n');
        }
    }
    s
}

#[test]
fn sql_matches_pgbench_expectations() {
    let cases = load_cases();
    let expected = load_expected("sql_expected.txt");
    let mut runs = Vec::new();
    for (i, c) in cases.iter().enumerate() {
        for m in modes(c) {
            runs.push((i, *m));
        }
    }
    assert_eq!(
        runs.len(),
        expected.len(),
        "sql_expected.txt is out of date"
    );
    let mut failures = Vec::new();
    for ((i, mode), want) in runs.iter().zip(&expected) {
        let mut got = run_ours(&cases[*i], mode);
        if want.iter().any(|l| l == "--- report") {
            got.extend(report_ours(&cases[*i]));
        }
        if &got != want {
            failures.push(format!(
                "case {i} ({mode}):\n{}--- pgbench:\n{}\n--- hotbench:\n{}\n",
                cases[*i].script,
                want.join("\n"),
                got.join("\n")
            ));
        }
    }
    assert_no_mismatches(&failures);
}

#[test]
#[ignore = "compares with real pgbench on a running server: HOTBENCH_PGBENCH_ORACLE=1 PGHOST=… PGPORT=… cargo test -- --ignored"]
fn sql_expectations_match_real_pgbench() {
    let mode = oracle_mode();
    let cases = load_cases();
    let dir = std::env::temp_dir().join(format!("hotbench-sql-oracle-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let mut results = Vec::new();
    for (i, c) in cases.iter().enumerate() {
        for m in modes(c) {
            results.push((i, *m, run_pgbench(c, m, &dir)));
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    let rendered = render(&cases, &results);
    check_or_write(&mode, "sql_expected.txt", rendered);
}
