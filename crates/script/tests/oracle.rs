//! Expressions and meta-commands compared with real pgbench 15.
//!
//! `testdata/expr_cases.txt` lists the cases; `testdata/expr_expected.txt`
//! holds what pgbench printed for each (its `debug()` lines and error
//! messages). The normal test runs our implementation against the stored
//! expectations. With `HOTBENCH_PGBENCH_ORACLE=1` the test also runs real
//! pgbench (binary from `HOTBENCH_PGBENCH`, default `pgbench`; connection from
//! the usual `PGHOST`/`PGPORT`/`PGUSER` variables) and checks the stored file
//! against it; `HOTBENCH_PGBENCH_ORACLE=write` rewrites the file instead.

mod oracle_support;

use hotbench_script::{
    choose_script, client_variables, clients_per_thread, define, derive_seeds, parse_script,
    Client, CommandKind, Variables,
};
use oracle_support::{assert_no_mismatches, check_or_write, load_expected, oracle_mode, testdata};

const SEED: u64 = 5432;

struct Case {
    defines: Vec<String>,
    /// Scripts with their weights; one unweighted script is run as `-f expr.sql`.
    scripts: Vec<(String, Option<i32>)>,
    clients: usize,
    transactions: usize,
    threads: usize,
}

impl Case {
    fn first_line(&self) -> &str {
        self.scripts
            .first()
            .and_then(|(s, _)| s.lines().next())
            .unwrap_or("")
    }

    fn script_name(&self, i: usize) -> String {
        if self.scripts.len() == 1 && self.scripts[0].1.is_none() {
            "expr.sql".to_string()
        } else {
            format!("expr{i}.sql")
        }
    }
}

fn load_cases() -> Vec<Case> {
    let text = std::fs::read_to_string(testdata("expr_cases.txt")).expect("read expr_cases.txt");
    let mut cases = Vec::new();
    for block in text.split("\n\n") {
        let mut case = Case {
            defines: Vec::new(),
            scripts: Vec::new(),
            clients: 1,
            transactions: 1,
            threads: 1,
        };
        for line in block.lines() {
            if line.starts_with('#') {
                continue;
            }
            let num = |s: &str| s.trim().parse::<usize>().expect("number in case option");
            if let Some(d) = line.strip_prefix("-D ") {
                case.defines.push(d.to_string());
            } else if let Some(n) = line.strip_prefix("-c ") {
                case.clients = num(n);
            } else if let Some(n) = line.strip_prefix("-t ") {
                case.transactions = num(n);
            } else if let Some(n) = line.strip_prefix("-j ") {
                case.threads = num(n);
            } else if let Some(w) = line.strip_prefix("-f ") {
                case.scripts.push((String::new(), Some(num(w) as i32)));
            } else {
                if case.scripts.is_empty() {
                    case.scripts.push((String::new(), None));
                }
                let script = &mut case.scripts.last_mut().expect("script").0;
                if let Some(e) = line.strip_prefix("e ") {
                    script.push_str(&format!("\\set x debug({e})\n"));
                } else {
                    script.push_str(line);
                    script.push('\n');
                }
            }
        }
        if !case.scripts.is_empty() {
            cases.push(case);
        }
    }
    cases
}

/// Runs a case with hotbench-script, producing pgbench-like stderr lines:
/// one thread loop per thread, clients taking turns one transaction at a time.
fn run_ours(case: &Case) -> Vec<String> {
    let mut scripts = Vec::new();
    for (i, (text, _)) in case.scripts.iter().enumerate() {
        match parse_script(&case.script_name(i), text) {
            Ok(s) => scripts.push(s),
            Err(e) => return e.to_string().lines().map(str::to_string).collect(),
        }
    }
    let weights: Vec<i32> = case.scripts.iter().map(|(_, w)| w.unwrap_or(1)).collect();
    let mut defines = Variables::new();
    for d in &case.defines {
        if let Err(e) = define(&mut defines, d) {
            return vec![e];
        }
    }
    let seeds = derive_seeds(
        SEED,
        case.clients,
        case.threads,
        !defines.contains("default_seed"),
    );
    let mut clients: Vec<Client> = (0..case.clients)
        .map(|id| {
            let vars = client_variables(&defines, id, 1, seeds.default_seed, SEED);
            Client::new(id, vars, seeds.clients[id])
        })
        .collect();
    let mut out: Vec<u8> = Vec::new();
    let mut first = 0;
    for (t, &n) in clients_per_thread(case.clients, case.threads)
        .iter()
        .enumerate()
    {
        let mut choose = seeds.threads[t].choose;
        let mut aborted = vec![false; n];
        for _ in 0..case.transactions {
            for (k, client) in clients[first..first + n].iter_mut().enumerate() {
                if aborted[k] {
                    continue;
                }
                let which = choose_script(&mut choose, &weights);
                let script = &scripts[which];
                client.begin_transaction();
                let mut i = 0;
                while i < script.len() {
                    if let Some(CommandKind::Sql(_)) = script.command(i).map(|c| &c.kind) {
                        i += 1;
                        continue;
                    }
                    match client.execute(script, which, i, &mut out) {
                        Ok(hotbench_script::Action::Jump(n)) => i = n,
                        Ok(_) => i += 1,
                        Err(e) => {
                            let line = format!("{e}\n{}\n", e.abort_line(client.id, which));
                            out.extend_from_slice(line.as_bytes());
                            aborted[k] = true;
                            break;
                        }
                    }
                }
            }
        }
        first += n;
    }
    let lines: Vec<String> = String::from_utf8_lossy(&out)
        .lines()
        .map(str::to_string)
        .collect();
    normalize(case, lines)
}

/// With several threads pgbench's stderr lines interleave (even inside a
/// line), so only the multiset of printed integers is compared.
fn normalize(case: &Case, lines: Vec<String>) -> Vec<String> {
    if case.threads <= 1 {
        return lines;
    }
    let all = lines.join("\n");
    let mut values: Vec<String> = all
        .split("int ")
        .skip(1)
        .map(|rest| {
            let n: String = rest
                .chars()
                .take_while(|c| c.is_ascii_digit() || *c == '-')
                .collect();
            format!("int {n}")
        })
        .collect();
    values.sort();
    values
}

/// Runs a case with real pgbench.
fn run_pgbench(case: &Case, dir: &std::path::Path) -> Vec<String> {
    let bin = std::env::var("HOTBENCH_PGBENCH").unwrap_or_else(|_| "pgbench".to_string());
    let mut cmd = std::process::Command::new(bin);
    cmd.current_dir(dir).args([
        "-n",
        "-t",
        &case.transactions.to_string(),
        "-c",
        &case.clients.to_string(),
        "-j",
        &case.threads.to_string(),
        "--random-seed",
        &SEED.to_string(),
    ]);
    for (i, (text, weight)) in case.scripts.iter().enumerate() {
        let name = case.script_name(i);
        std::fs::write(dir.join(&name), text).expect("write case");
        cmd.arg("-f").arg(match weight {
            Some(w) => format!("{name}@{w}"),
            None => name,
        });
    }
    for d in &case.defines {
        cmd.arg("-D").arg(d);
    }
    let out = cmd.output().expect("run pgbench");
    let lines: Vec<String> = String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter(|l| {
            !l.contains("Run was aborted")
                && !l.starts_with("pgbench: hint:")
                && !l.starts_with("pgbench: setting random seed")
        })
        .map(|l| l.strip_prefix("pgbench: error: ").unwrap_or(l).to_string())
        .collect();
    normalize(case, lines)
}

fn render(cases: &[Case], results: &[Vec<String>]) -> String {
    let mut s = String::new();
    for (i, (c, r)) in cases.iter().zip(results).enumerate() {
        let first = c.first_line();
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
    let expected = load_expected("expr_expected.txt");
    assert_eq!(
        cases.len(),
        expected.len(),
        "expr_expected.txt is out of date"
    );
    let mut failures = Vec::new();
    for (i, (case, want)) in cases.iter().zip(&expected).enumerate() {
        let got = run_ours(case);
        if &got != want {
            failures.push(format!(
                "case {i}:\n{}--- pgbench:\n{}\n--- hotbench:\n{}\n",
                case.scripts
                    .iter()
                    .map(|(s, _)| s.as_str())
                    .collect::<String>(),
                want.join("\n"),
                got.join("\n")
            ));
        }
    }
    assert_no_mismatches(&failures);
}

#[test]
#[ignore = "compares with real pgbench on a running server: HOTBENCH_PGBENCH_ORACLE=1 PGHOST=… PGPORT=… cargo test -- --ignored"]
fn expectations_match_real_pgbench() {
    let mode = oracle_mode();
    let cases = load_cases();
    let dir = std::env::temp_dir().join(format!("hotbench-oracle-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let results: Vec<Vec<String>> = cases.iter().map(|c| run_pgbench(c, &dir)).collect();
    let _ = std::fs::remove_dir_all(&dir);
    let rendered = render(&cases, &results);
    check_or_write(&mode, "expr_expected.txt", rendered);
}
