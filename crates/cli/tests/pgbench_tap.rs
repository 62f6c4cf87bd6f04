//! PostgreSQL's own pgbench TAP tests (`001_pgbench_with_server.pl`, `002_pgbench_no_server.pl`
//! of PostgreSQL 15 and 18), run against `hotbench run`. The cases were extracted into
//! `tests/tap/pgNN/*.json` by `tests/tap/extract/extract.pl` (see `tests/tap/README.md`);
//! `tests/tap/expectations.json` lists the cases skipped (with a reason) and the known
//! failures (with their class). A case that fails without being listed fails the test, and so
//! does a listed known failure that now passes, so the list stays true.

mod common;

use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use common::oracle::pg18_bin;
use common::*;

/// How long one invocation may take before it counts as hung (the machine may be loaded).
const CASE_DEADLINE: Duration = Duration::from_secs(180);

fn tap_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/tap")
}

fn load(rel: &str) -> Value {
    let path = tap_dir().join(rel);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{rel}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// A Perl regex (pattern and modifiers, as `re::regexp_pattern` gives them) for fancy-regex.
/// Without `/m`, Perl's `$` also matches before a final newline: spelled out here.
fn perl_regex(re: &str, flags: &str) -> fancy_regex::Regex {
    let mut out = String::new();
    let inline: String = flags.chars().filter(|c| "imsx".contains(*c)).collect();
    if !inline.is_empty() {
        out.push_str(&format!("(?{inline})"));
    }
    let multiline = flags.contains('m');
    let mut chars = re.chars().peekable();
    let mut in_class = false;
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                out.push(c);
                match chars.next() {
                    Some('Z') => {
                        out.pop();
                        out.push_str(r"(?=\n?\z)");
                    }
                    Some(n) => out.push(n),
                    None => {}
                }
            }
            '[' if !in_class => {
                in_class = true;
                out.push(c);
                // A ']' first in a class is literal.
                if chars.peek() == Some(&']') {
                    out.push_str(r"\]");
                    chars.next();
                }
            }
            ']' if in_class => {
                in_class = false;
                out.push(c);
            }
            '$' if !in_class && !multiline => out.push_str(r"(?=\n?\z)"),
            _ => out.push(c),
        }
    }
    fancy_regex::Regex::new(&out).unwrap_or_else(|e| panic!("regex {re:?} -> {out:?}: {e}"))
}

fn pattern(v: &Value) -> (String, fancy_regex::Regex) {
    let re = v["re"].as_str().expect("re");
    let flags = v["flags"].as_str().unwrap_or("");
    (re.to_string(), perl_regex(re, flags))
}

fn subst(s: &str, dir: &Path) -> String {
    s.replace("@DIR@", &dir.to_string_lossy())
}

/// What runs the cases: `hotbench run`, or a real pgbench (the oracle that shows the
/// extracted cases test what PostgreSQL's harness tests).
#[derive(Clone, Debug)]
enum Program {
    Hotbench,
    Pgbench(PathBuf),
}

impl Program {
    fn label(&self) -> String {
        match self {
            Program::Hotbench => "hotbench run".to_string(),
            Program::Pgbench(p) => p.display().to_string(),
        }
    }
}

/// Where a suite runs: its directory, the server (None for the no-server suite) and its
/// major version, and the program under test.
struct Suite {
    dir: PathBuf,
    db: Option<hotbench_pgserver::ConnInfo>,
    psql_bins: Option<hotbench_pgserver::PgBinaries>,
    server_major: u32,
    program: Program,
}

impl Suite {
    fn env(&self, cmd: &mut Command) {
        hotbench_pgserver::testing::without_libpq_env(cmd);
        match &self.db {
            Some(db) => {
                cmd.env("PGHOST", &db.socket_dir)
                    .env("PGPORT", db.port.to_string())
                    .env("PGUSER", &db.user)
                    .env("PGDATABASE", &db.dbname);
            }
            // pgbench's no-server tests find no server at the default place; hotbench would
            // start its embedded one there (a deliberate difference), so point it nowhere.
            None => {
                cmd.env("PGHOST", self.dir.join("no-server"))
                    .env("PGPORT", "1");
            }
        }
    }

    fn psql(&self, sql: &str) -> String {
        self.try_psql(sql).unwrap_or_else(|e| panic!("{e}"))
    }

    fn try_psql(&self, sql: &str) -> Result<String, String> {
        let db = self
            .db
            .as_ref()
            .expect("SQL step in a suite without server");
        match &self.psql_bins {
            Some(bins) => hotbench_pgserver::server::psql(bins, db, sql).map_err(|e| e.to_string()),
            None => Ok(psql(db, sql)),
        }
    }
}

/// Runs one recorded pgbench invocation with `hotbench run`; returns what did not match.
fn run_case(suite: &Suite, case: &Value) -> Vec<String> {
    for f in case["files"].as_array().expect("files") {
        let path = subst(f["path"].as_str().expect("path"), &suite.dir);
        let _ = std::fs::remove_file(&path);
        if let Some(parent) = Path::new(&path).parent() {
            std::fs::create_dir_all(parent).expect("script dir");
        }
        std::fs::write(&path, f["text"].as_str().expect("text")).expect("write script");
    }
    let args: Vec<String> = case["args"]
        .as_array()
        .expect("args")
        .iter()
        .map(|a| subst(a.as_str().expect("arg"), &suite.dir))
        .collect();
    let out_path = suite.dir.join("case.stdout");
    let err_path = suite.dir.join("case.stderr");
    let mut cmd = match &suite.program {
        Program::Hotbench => {
            let mut c = hotbench();
            c.arg("run");
            c
        }
        Program::Pgbench(path) => Command::new(path),
    };
    cmd.args(&args).current_dir(&suite.dir);
    suite.env(&mut cmd);
    if let Some(env) = case["env"].as_object() {
        for (k, v) in env {
            cmd.env(k, v.as_str().unwrap_or(""));
        }
    }
    cmd.stdin(Stdio::null())
        .stdout(File::create(&out_path).expect("stdout file"))
        .stderr(File::create(&err_path).expect("stderr file"));
    let mut child = cmd.spawn().expect("spawn hotbench");
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break Some(s);
        }
        if start.elapsed() > CASE_DEADLINE {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let stdout = std::fs::read_to_string(&out_path).unwrap_or_default();
    let stderr = std::fs::read_to_string(&err_path).unwrap_or_default();
    let mut problems = Vec::new();
    let want = case["status"].as_i64().expect("status") as i32;
    match status.and_then(|s| s.code()) {
        Some(code) if code == want => {}
        Some(code) => problems.push(format!("status {code}, expected {want}")),
        None => problems.push(format!(
            "no exit status (hung past {CASE_DEADLINE:?} or killed by a signal)"
        )),
    }
    for (stream, text) in [("stdout", &stdout), ("stderr", &stderr)] {
        for p in case[stream].as_array().expect("patterns") {
            let (re, rx) = pattern(p);
            if !rx.is_match(text).unwrap_or(false) {
                problems.push(format!("{stream} does not match /{re}/"));
            }
        }
    }
    if !problems.is_empty() {
        problems.push(format!(
            "command: {} {}\n--- stdout\n{}--- stderr\n{}",
            suite.program.label(),
            args.join(" "),
            clip(&stdout),
            clip(&stderr)
        ));
    }
    problems
}

fn clip(s: &str) -> String {
    const MAX: usize = 3000;
    if s.len() <= MAX {
        return s.to_string();
    }
    let mut cut = MAX;
    while !s.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}\n[… {} more bytes]\n", &s[..cut], s.len() - cut)
}

/// The recorded `check_pgbench_logs`: file count and names, lines per file, line format.
fn check_logs(suite: &Suite, step: &Value) -> Vec<String> {
    let dir = PathBuf::from(subst(step["dir"].as_str().expect("dir"), &suite.dir));
    let prefix = step["prefix"].as_str().expect("prefix");
    let (_, line_rx) = pattern(&step["line"]);
    let name_rx = fancy_regex::Regex::new(&format!(r"^{prefix}\.\d+(\.\d+)?$")).expect("rx");
    let mut logs: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("log dir")
        .filter_map(|e| e.ok())
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with(&format!("{prefix}."))
        })
        .map(|e| e.path())
        .collect();
    logs.sort();
    let mut problems = Vec::new();
    let want = step["files"].as_u64().expect("files") as usize;
    if logs.len() != want {
        problems.push(format!(
            "{} log files {prefix}.*, expected {want}",
            logs.len()
        ));
    }
    let (min, max) = (step["min"].as_u64().unwrap(), step["max"].as_u64().unwrap());
    for log in &logs {
        let name = log.file_name().unwrap().to_string_lossy().into_owned();
        if !name_rx.is_match(&name).unwrap_or(false) {
            problems.push(format!("log file name {name}"));
        }
        let text = std::fs::read_to_string(log).unwrap_or_default();
        let lines: Vec<&str> = text.split('\n').filter(|l| !l.is_empty()).collect();
        if !(min..=max).contains(&(lines.len() as u64)) {
            problems.push(format!(
                "{name}: {} lines, expected {min}..={max}",
                lines.len()
            ));
        }
        for l in &lines {
            if !line_rx.is_match(l).unwrap_or(false) {
                problems.push(format!("{name}: line {l:?} does not match"));
                break;
            }
        }
    }
    problems
}

/// Applies a recorded `append_conf` to the suite's database (its sessions get the settings).
fn apply_conf(suite: &Suite, text: &str) {
    let db = suite
        .db
        .as_ref()
        .expect("conf step in a suite without server");
    for line in text.lines() {
        let Some((name, value)) = line.split_once('=') else {
            continue;
        };
        let sql = format!(
            "ALTER DATABASE \"{}\" SET {} = '{}'",
            db.dbname,
            name.trim(),
            value.trim().replace('\'', "''")
        );
        suite.psql(&sql);
    }
}

/// Runs every step of one extracted suite with `program`; panics with a summary when an
/// unlisted case fails or a listed known failure passes. The pg18 suites run on a PostgreSQL
/// 18 server when its binaries are installed (see [`pg18_bin`]), else on the harness's.
fn run_suite(version: &str, test: &str, with_server: bool, program: Program) {
    // The with-server suites of one server create the same cluster-wide tablespace.
    static SERVER_SUITE: std::sync::Mutex<()> = std::sync::Mutex::new(());
    static PG18_SUITE: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let pg18 = if version == "18" { pg18_bin() } else { None };
    let lock = if pg18.is_some() {
        &PG18_SUITE
    } else {
        &SERVER_SUITE
    };
    let _one_at_a_time = with_server.then(|| lock.lock().unwrap_or_else(|p| p.into_inner()));
    let data = load(&format!("pg{version}/{test}.json"));
    let expectations = load("expectations.json");
    let key = format!("pg{version}/{test}");
    let notes = expectations[&key].as_object().cloned().unwrap_or_default();
    // A dedicated PostgreSQL 18 server lives as long as the suite.
    let own_server = match (&pg18, with_server) {
        (Some(bin), true) => Some(start_server(bin)),
        _ => None,
    };
    let suite = set_up_suite(version, test, with_server, program, own_server.as_ref());
    let mut tally = Tally::default();
    let ids: Vec<&str> = data["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .filter_map(|s| s["id"].as_str())
        .collect();
    for id in notes.keys() {
        if !ids.contains(&id.as_str()) {
            tally.unexpected.insert(
                id.clone(),
                vec!["listed in expectations.json but no such case".into()],
            );
        }
    }
    for step in data["steps"].as_array().expect("steps") {
        run_step(&suite, step, &notes, &mut tally);
    }
    tally.report(&key, with_server, &suite);
}

/// A suite's directory and database (its own server's or the harness's), ready to run.
fn set_up_suite(
    version: &str,
    test: &str,
    with_server: bool,
    program: Program,
    own_server: Option<&hotbench_pgserver::server::Server>,
) -> Suite {
    let tag = match &program {
        Program::Hotbench => format!("tap{version}-{test}"),
        Program::Pgbench(_) => format!("oracle{version}-{test}"),
    };
    let dir = temp_dir(&tag);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("suite dir");
    let db = with_server.then(|| match own_server {
        Some(server) => server
            .create_database(&format!("tap{version}_{}", std::process::id()))
            .expect("create database"),
        None => database(&format!("tap{version}")),
    });
    let mut suite = Suite {
        db,
        psql_bins: own_server.map(|s| s.binaries().clone()),
        server_major: 0,
        dir,
        program,
    };
    if let Some(db) = &suite.db {
        give_to_server_user(&suite.dir, db);
        let num: u32 = suite
            .psql("SHOW server_version_num")
            .trim()
            .parse()
            .unwrap_or(0);
        suite.server_major = num / 10000;
    }
    suite
}

/// What a suite's cases came to.
#[derive(Default)]
struct Tally {
    passed: usize,
    known: usize,
    total: usize,
    /// Skipped cases with their reasons from expectations.json, reported in the summary.
    skipped: Vec<String>,
    todo_failures: usize,
    unexpected: BTreeMap<String, Vec<String>>,
}

/// Runs one step of a suite (SQL, a data or log check, a configuration change, a case).
fn run_step(
    suite: &Suite,
    step: &serde_json::Value,
    notes: &serde_json::Map<String, serde_json::Value>,
    tally: &mut Tally,
) {
    match step["kind"].as_str().expect("kind") {
        "sql" => {
            let sql = subst(step["sql"].as_str().expect("sql"), &suite.dir);
            if sql.contains("CREATE TABLESPACE") {
                let loc = suite.dir.join("regress_pgbench_tap_1_ts_dir");
                std::fs::create_dir_all(&loc).expect("tablespace dir");
                give_to_server_user(&loc, suite.db.as_ref().unwrap());
            }
            suite.psql(&sql);
        }
        "query" => {
            let got = suite
                .try_psql(step["sql"].as_str().expect("sql"))
                .unwrap_or_else(|e| e);
            let want = step["expect"].as_str().expect("expect");
            if got.trim() != want {
                tally
                    .unexpected
                    .entry(format!("data check {}", step["sql"]))
                    .or_default()
                    .push(format!("got {got:?}, expected {want}"));
            }
        }
        "conf" => apply_conf(suite, step["text"].as_str().expect("text")),
        "reload" => {}
        "logs" => {
            let problems = check_logs(suite, step);
            if !problems.is_empty() {
                tally
                    .unexpected
                    .insert(format!("log check {}", step["prefix"]), problems);
            }
        }
        "pgbench" => run_pgbench_step(suite, step, notes, tally),
        other => panic!("unknown step kind {other}"),
    }
}

/// Runs one pgbench case (unless expectations.json skips it) and judges it against its
/// known failure class, if any.
fn run_pgbench_step(
    suite: &Suite,
    step: &serde_json::Value,
    notes: &serde_json::Map<String, serde_json::Value>,
    tally: &mut Tally,
) {
    tally.total += 1;
    let id = step["id"].as_str().expect("id");
    let note = notes.get(id);
    let is_hotbench = matches!(suite.program, Program::Hotbench);
    if let Some(reason) = note.and_then(|n| n.get("skip")) {
        if is_hotbench {
            match reason.as_str().filter(|r| !r.trim().is_empty()) {
                Some(r) => tally.skipped.push(format!("{id}: {r}")),
                None => {
                    tally.unexpected.insert(
                        id.to_string(),
                        vec!["skipped without a reason in expectations.json".into()],
                    );
                }
            }
            return;
        }
    }
    let problems = run_case(suite, step);
    // Real pgbench must pass everything but what its server cannot do; hotbench
    // has its known failures, server-version ones only on an older server.
    let known_class = note.and_then(|n| n.get("known_failure")).filter(|class| {
        let server_bound = class
            .as_str()
            .is_some_and(|c| c.starts_with("server-version:"));
        if server_bound {
            suite.server_major < 17
        } else {
            is_hotbench
        }
    });
    match (problems.is_empty(), known_class) {
        (true, None) => tally.passed += 1,
        (true, Some(_)) => {
            tally.unexpected.insert(
                id.to_string(),
                vec!["passes now: remove it from the known failures".into()],
            );
        }
        (false, Some(class)) => {
            tally.known += 1;
            eprintln!("known failure {id} ({class}): {}", problems[0]);
        }
        // PostgreSQL's own TODO (an upstream flake, e.g. concurrent GRANT/VACUUM):
        // reported, never a failure, as under Test::More.
        (false, None) if step.get("todo").is_some() => {
            tally.todo_failures += 1;
            eprintln!("TODO failure {id} ({}): {}", step["todo"], problems[0]);
        }
        (false, None) => {
            tally.unexpected.insert(id.to_string(), problems);
        }
    }
}

impl Tally {
    /// Prints the suite's summary line; panics listing the unexpected results, if any.
    fn report(&self, key: &str, with_server: bool, suite: &Suite) {
        let server = if with_server {
            format!(" on PostgreSQL {}", suite.server_major)
        } else {
            String::new()
        };
        let skip_list = if self.skipped.is_empty() {
            String::new()
        } else {
            format!(" ({})", self.skipped.join("; "))
        };
        let summary = format!(
            "{key} with {}{server}: passed {}/{}, skipped {}{skip_list}, known failures {}, TODO failures {}, unexpected {}",
            suite.program.label(),
            self.passed,
            self.total,
            self.skipped.len(),
            self.known,
            self.todo_failures,
            self.unexpected.len()
        );
        eprintln!("{summary}");
        if !self.unexpected.is_empty() {
            let mut msg = String::new();
            for (id, problems) in &self.unexpected {
                msg.push_str(&format!("\n=== {id}\n{}\n", problems.join("\n")));
            }
            panic!("{key}: {} unexpected results:{msg}", self.unexpected.len());
        }
    }
}

/// Hands a directory to the server's OS user (the owner of its socket directory), as a
/// tablespace location must be.
fn give_to_server_user(dir: &Path, db: &hotbench_pgserver::ConnInfo) {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(&db.socket_dir).expect("socket dir");
    std::os::unix::fs::chown(dir, Some(meta.uid()), Some(meta.gid())).expect("chown");
}

#[test]
fn perl_regexes_translate() {
    let m = |re: &str, flags: &str, text: &str| perl_regex(re, flags).is_match(text).unwrap();
    assert!(m("^$", "", ""));
    assert!(m("^$", "", "\n"));
    assert!(!m("^$", "", "x\n"));
    assert!(m("a$", "", "xa\n"));
    assert!(!m("a$", "", "a\nb"));
    assert!(m("a$", "m", "a\nb"));
    assert!(m("[$]", "", "$"));
    assert!(m(r"\$1 = ", "", "$1 = "));
    assert!(m("(?!vacuuming)", "", "vacuuming"));
    assert!(m(r"(a|b)x.*\1", "s", "ax\nya"));
    assert!(m("ABC", "i", "abc"));
}

/// pgbench 15 (the machine's PostgreSQL 15 packages).
fn pgbench15() -> Option<PathBuf> {
    let p = PathBuf::from("/usr/lib/postgresql/15/bin/pgbench");
    p.is_file().then_some(p)
}

/// An oracle binary; a missing one fails the test (never a silent pass): pgbench 15 ships
/// with the server packages the harness uses, pgbench 18's test is `#[ignore]`d unless asked
/// for (`.ci/run` installs it and runs it with `--ignored`).
fn oracle(found: Option<PathBuf>, what: &str) -> Program {
    match found {
        Some(p) => Program::Pgbench(p),
        None => panic!("{what} not found (.ci/run installs it: .ci/install-pg18)"),
    }
}

fn start_server(bin: &Path) -> hotbench_pgserver::server::Server {
    use hotbench_pgserver::testing::{test_cluster_options, test_server_options};
    let mut opts = test_server_options(test_cluster_options());
    opts.bins = hotbench_pgserver::BinOptions {
        pg_bin: Some(bin.to_path_buf()),
        pg_version: None,
        no_download: true,
    };
    hotbench_pgserver::server::Server::start(&opts).expect("start the PostgreSQL 18 server")
}

#[test]
fn tap_pg15_no_server() {
    run_suite("15", "002_pgbench_no_server", false, Program::Hotbench);
}

#[test]
fn tap_pg15_with_server() {
    run_suite("15", "001_pgbench_with_server", true, Program::Hotbench);
}

#[test]
fn tap_pg18_no_server() {
    run_suite("18", "002_pgbench_no_server", false, Program::Hotbench);
}

#[test]
fn tap_pg18_with_server() {
    run_suite("18", "001_pgbench_with_server", true, Program::Hotbench);
}

#[test]
fn oracle_pgbench15_passes_tap_pg15() {
    let p = oracle(pgbench15(), "pgbench 15");
    run_suite("15", "002_pgbench_no_server", false, p.clone());
    run_suite("15", "001_pgbench_with_server", true, p);
}

#[test]
#[ignore = "needs pgbench 18 (.ci/install-pg18 or HOTBENCH_PG18_BIN); .ci/run runs it with --ignored"]
fn oracle_pgbench18_passes_tap_pg18() {
    let p = oracle(pg18_bin().map(|b| b.join("pgbench")), "pgbench 18");
    run_suite("18", "002_pgbench_no_server", false, p.clone());
    run_suite("18", "001_pgbench_with_server", true, p);
}
