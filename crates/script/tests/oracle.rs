//! Expressions and meta-commands compared with real pgbench 15.
//!
//! `testdata/expr_cases.txt` lists the cases; `testdata/expr_expected.txt`
//! holds what pgbench printed for each (its `debug()` lines and error
//! messages). The normal test runs our implementation against the stored
//! expectations. With `HOTBENCH_PGBENCH_ORACLE=1` the test also runs real
//! pgbench (binary from `HOTBENCH_PGBENCH`, default `pgbench`; connection from
//! the usual `PGHOST`/`PGPORT`/`PGUSER` variables) and checks the stored file
//! against it; `HOTBENCH_PGBENCH_ORACLE=write` rewrites the file instead.

use hotbench_script::{
    client_variables, define, derive_seeds, parse_script, Client, CommandKind, Variables,
};
use std::path::PathBuf;

const SEED: u64 = 5432;

struct Case {
    defines: Vec<String>,
    script: String,
}

fn testdata(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata").join(name)
}

fn load_cases() -> Vec<Case> {
    let text = std::fs::read_to_string(testdata("expr_cases.txt")).expect("read expr_cases.txt");
    let mut cases = Vec::new();
    for block in text.split("\n\n") {
        let mut defines = Vec::new();
        let mut script = String::new();
        for line in block.lines() {
            if line.starts_with('#') {
                continue;
            }
            if let Some(d) = line.strip_prefix("-D ") {
                defines.push(d.to_string());
            } else if let Some(e) = line.strip_prefix("e ") {
                script.push_str(&format!("\\set x debug({e})\n"));
            } else {
                script.push_str(line);
                script.push('\n');
            }
        }
        if !script.is_empty() {
            cases.push(Case { defines, script });
        }
    }
    cases
}

fn load_expected() -> Vec<Vec<String>> {
    let text = std::fs::read_to_string(testdata("expr_expected.txt")).unwrap_or_default();
    let mut out: Vec<Vec<String>> = Vec::new();
    for line in text.lines() {
        if line.starts_with("=== ") {
            out.push(Vec::new());
        } else if let Some(last) = out.last_mut() {
            last.push(line.to_string());
        }
    }
    out
}

/// Runs a case with hotbench-script, producing pgbench-like stderr lines.
fn run_ours(case: &Case) -> Vec<String> {
    let script = match parse_script("expr.sql", &case.script) {
        Ok(s) => s,
        Err(e) => return e.to_string().lines().map(str::to_string).collect(),
    };
    let mut defines = Variables::new();
    for d in &case.defines {
        if let Err(e) = define(&mut defines, d) {
            return vec![e];
        }
    }
    let seeds = derive_seeds(SEED, 1, 1, !defines.contains("default_seed"));
    let vars = client_variables(&defines, 0, 1, seeds.default_seed, SEED);
    let mut client = Client::new(0, vars, seeds.clients[0]);
    client.begin_transaction();
    let mut out: Vec<u8> = Vec::new();
    let mut i = 0;
    while i < script.len() {
        if let Some(CommandKind::Sql(_)) = script.command(i).map(|c| &c.kind) {
            i += 1;
            continue;
        }
        match client.execute(&script, 0, i, &mut out) {
            Ok(hotbench_script::Action::Jump(n)) => i = n,
            Ok(_) => i += 1,
            Err(e) => {
                out.extend_from_slice(format!("{e}\n{}\n", e.abort_line(0, 0)).as_bytes());
                break;
            }
        }
    }
    String::from_utf8_lossy(&out).lines().map(str::to_string).collect()
}

/// Runs a case with real pgbench.
fn run_pgbench(case: &Case, dir: &std::path::Path) -> Vec<String> {
    let file = dir.join("expr.sql");
    std::fs::write(&file, &case.script).expect("write case");
    let bin = std::env::var("HOTBENCH_PGBENCH").unwrap_or_else(|_| "pgbench".to_string());
    let mut cmd = std::process::Command::new(bin);
    cmd.current_dir(dir)
        .args(["-n", "-t", "1", "--random-seed", &SEED.to_string(), "-f", "expr.sql"]);
    for d in &case.defines {
        cmd.arg("-D").arg(d);
    }
    let out = cmd.output().expect("run pgbench");
    String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter(|l| {
            !l.contains("Run was aborted")
                && !l.starts_with("pgbench: hint:")
                && !l.starts_with("pgbench: setting random seed")
        })
        .map(|l| l.strip_prefix("pgbench: error: ").unwrap_or(l).to_string())
        .collect()
}

fn render(cases: &[Case], results: &[Vec<String>]) -> String {
    let mut s = String::new();
    for (i, (c, r)) in cases.iter().zip(results).enumerate() {
        let first = c.script.lines().next().unwrap_or("");
        s.push_str(&format!("=== {i} {first}\n"));
        for l in r {
            s.push_str(l);
            s.push('\n');
        }
    }
    s
}

#[test]
fn expressions_match_pgbench_expectations() {
    let cases = load_cases();
    let expected = load_expected();
    assert_eq!(cases.len(), expected.len(), "expr_expected.txt is out of date");
    let mut failures = Vec::new();
    for (i, (case, want)) in cases.iter().zip(&expected).enumerate() {
        let got = run_ours(case);
        if &got != want {
            failures.push(format!(
                "case {i}:\n{}--- pgbench:\n{}\n--- hotbench:\n{}\n",
                case.script,
                want.join("\n"),
                got.join("\n")
            ));
        }
    }
    assert!(failures.is_empty(), "{} mismatches:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn expectations_match_real_pgbench() {
    let mode = std::env::var("HOTBENCH_PGBENCH_ORACLE").unwrap_or_default();
    if mode.is_empty() {
        eprintln!("skipped: set HOTBENCH_PGBENCH_ORACLE=1 (and PGHOST/PGPORT) to compare with real pgbench");
        return;
    }
    let cases = load_cases();
    let dir = std::env::temp_dir().join(format!("hotbench-oracle-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let results: Vec<Vec<String>> = cases.iter().map(|c| run_pgbench(c, &dir)).collect();
    let _ = std::fs::remove_dir_all(&dir);
    let rendered = render(&cases, &results);
    if mode == "write" {
        std::fs::write(testdata("expr_expected.txt"), rendered).expect("write expectations");
        return;
    }
    let stored = std::fs::read_to_string(testdata("expr_expected.txt")).unwrap_or_default();
    assert_eq!(stored, rendered, "pgbench output differs from testdata/expr_expected.txt");
}
