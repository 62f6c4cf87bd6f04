//! Every command in README.md's `sh` blocks runs, against the embedded server of a fresh
//! data directory (its own `XDG_DATA_HOME`, kept running for the test with `hotbench server
//! start`), or the test states why it cannot. So a reader's first commands work as written.
//!
//! The `hotbench scenario` lines run in order in a lane of their own, beside the other lines
//! (in order too). How a README line is run: `hotbench` is this build's binary (`cargo run --release --` too);
//! durations become 1 s (`-T 60` → `-T 1`), client counts at most 4 (`-c 1,2,4,…,32` → `-c
//! 1,2,4`), scale 1, and ladders without `-c`/`-T` get `-c 4 -T 1`: the same commands, sized
//! for a test. Files a reader would have from earlier runs (`after.json`, `ladder-a.json`,
//! `client1.json`, `measured.csv`, their own `daily_limit.sql`) are made first. A line that
//! cannot run here, or that another test runs and checks (the demo), gets its reason in
//! [`why_not`]; a README line the test does not know fails it, so new README commands are
//! tested too.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{hotbench, private_home, text};

/// Commands that cannot run here, and why (matched on the line's start).
fn why_not(line: &str) -> Option<&'static str> {
    let reasons: [(&str, &str); 8] = [
        (
            "cargo run --release -- demo",
            "scenario.rs's demo_writes_both_ladders runs it, sized as here (demo -T 1 -c 4, \
             with flags of its own), and checks both ladders and the files it writes",
        ),
        (
            "cargo test --workspace",
            "the README's test command: this test runs inside it",
        ),
        (
            "start=$(",
            "a shell variable for the lines after it (their -h db is a server of yours)",
        ),
        ("$EDITOR", "opens an editor"),
        (
            "hotbench scenario run app-capture",
            "runs the capture the line before makes of a server of yours (-h HOST)",
        ),
        (
            "hotbench capture --verify ./app-capture",
            "scores the capture the lines before make of a server of yours (-h HOST)",
        ),
        ("cp -r", "a shell copy of files the test does not have"),
        (
            "hotbench run --prometheus :9187 -T 3600 …",
            "its arguments are elided (…); the endpoint has its own test (report.rs)",
        ),
    ];
    if let Some((_, why)) = reasons.iter().find(|(start, _)| line.starts_with(start)) {
        return Some(why);
    }
    // -h HOST names a server of the reader's (db.example, db): none exists on a fresh machine.
    let words: Vec<&str> = line.split_whitespace().collect();
    if words.windows(2).any(|w| w[0] == "-h") {
        return Some("targets a server of yours (-h HOST), which a fresh machine does not have");
    }
    None
}

/// The command lines of README.md's `sh` blocks, comments cut, in order.
fn readme_lines() -> Vec<String> {
    let readme = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md");
    let text = std::fs::read_to_string(readme).expect("README.md");
    let mut out = Vec::new();
    let mut in_sh = false;
    for raw in text.lines() {
        let l = raw.trim();
        if l.starts_with("```") {
            in_sh = !in_sh && l == "```sh";
            continue;
        }
        if !in_sh {
            continue;
        }
        let cmd = match l.find(" #") {
            Some(i) => l[..i].trim(),
            None => l,
        };
        if !cmd.is_empty() && !cmd.starts_with('#') {
            out.push(cmd.to_string());
        }
    }
    out
}

/// The README line as this test runs it (see the module comment), without `hotbench`.
fn sized(line: &str) -> Vec<String> {
    let line = line
        .strip_prefix("cargo run --release -- ")
        .map(|r| format!("hotbench {r}"))
        .unwrap_or_else(|| line.to_string());
    let mut words: Vec<String> = line
        .split_whitespace()
        .skip(1)
        .map(str::to_string)
        .collect();
    let mut i = 0;
    while i < words.len() {
        let next = words.get(i + 1).cloned();
        match (words[i].as_str(), next) {
            ("-T", Some(_)) => words[i + 1] = "1".into(),
            ("-s", Some(_)) if words[0] == "run" => words[i + 1] = "1".into(),
            ("-c", Some(n)) if n.contains(',') => words[i + 1] = "1,2,4".into(),
            ("-c", Some(n)) if n.parse::<u32>().is_ok_and(|n| n > 4) => words[i + 1] = "4".into(),
            _ => {}
        }
        i += 1;
    }
    let ladder = words.first().is_some_and(|w| w == "demo")
        || words.len() > 1 && words[0] == "scenario" && words[1] == "run";
    if ladder {
        for (flag, value) in [("-c", "4"), ("-T", "1")] {
            if !words.iter().any(|w| w == flag) {
                words.extend([flag.to_string(), value.to_string()]);
            }
        }
    }
    words
}

/// A fresh data home for the embedded server, reachable by its unprivileged user.
struct Home {
    dir: PathBuf,
}

impl Home {
    fn new() -> Home {
        let dir = hotbench_pgserver::testing::test_temp_root()
            .join(format!("hotbench-readme-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        for d in [dir.clone(), dir.join("data"), dir.join("work")] {
            std::fs::create_dir_all(&d).expect("dir");
            let _ = Command::new("chmod").arg("755").arg(&d).status();
        }
        Home { dir }
    }

    fn work(&self) -> PathBuf {
        self.dir.join("work")
    }

    fn hotbench(&self, args: &[String]) -> Output {
        let data = self.dir.join("data");
        let mut c = hotbench();
        c.args(args).current_dir(self.work());
        private_home(&mut c, &data).output().expect("run hotbench")
    }

    fn ok(&self, args: &[&str]) -> String {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        let o = self.hotbench(&args);
        let (out, err) = text(&o);
        assert!(
            o.status.success(),
            "hotbench {args:?} failed:\n{out}\n{err}"
        );
        out
    }
}

impl Drop for Home {
    fn drop(&mut self) {
        let _ = self.hotbench(&["server".into(), "stop".into()]);
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[test]
fn every_readme_command_runs_or_says_why_not() {
    let lines = readme_lines();
    assert!(lines.len() > 10, "README sh blocks not found: {lines:?}");
    let home = Home::new();
    home.ok(&["server", "start"]);
    // What a reader has from earlier steps.
    home.ok(&["run", "-i", "-q"]);
    std::fs::write(
        home.work().join("daily_limit.sql"),
        "\\set aid random(1, 100000 * :scale)\n\
         update pgbench_accounts set abalance = abalance - 1 where aid = :aid;\n",
    )
    .expect("script");
    std::fs::write(
        home.work().join("measured.csv"),
        "clients,tps\n1,950\n2,1800\n4,3100\n8,4200\n16,4400\n",
    )
    .expect("csv");
    // The result files are independent runs of the initialized tables: run side by side
    // (one second each, not five), beside the two queue ladders (one after the other: they
    // share the scenario's schema).
    std::thread::scope(|s| {
        let runs: Vec<_> = [
            "after.json",
            "client1.json",
            "client2.json",
            "s0.json",
            "s1.json",
        ]
        .into_iter()
        .map(|f| {
            let home = &home;
            s.spawn(move || home.ok(&["run", "-S", "-n", "-T", "1", "-c", "2", "--json", f]))
        })
        .collect();
        for f in ["ladder-a.json", "ladder-b.json"] {
            home.ok(&[
                "scenario",
                "run",
                "queue",
                "--variants",
                "for-update,skip-locked",
                "-T",
                "1",
                "-c",
                "2",
                "--json",
                f,
            ]);
        }
        for r in runs {
            r.join().expect("a result file's run");
        }
    });

    // Two lanes, each in the README's order: the scenario lines (their ladders take most of
    // the time and share the scenarios' schemas, so one after another) beside the rest, which
    // touch neither those schemas nor each other's files.
    let (scenario, rest): (Vec<&String>, Vec<&String>) = lines
        .iter()
        .partition(|l| l.starts_with("hotbench scenario "));
    let ran = std::thread::scope(|s| {
        let lane = s.spawn(|| run_lines(&home, &scenario));
        run_lines(&home, &rest) + lane.join().expect("the scenario lines")
    });
    assert!(ran >= 12, "only {ran} README commands ran");
}

/// Runs README `lines` in order (sized), or prints why not; returns how many ran.
fn run_lines(home: &Home, lines: &[&String]) -> usize {
    let mut ran = 0;
    for line in lines {
        if let Some(why) = why_not(line) {
            println!("not run: {line}\n   why: {why}");
            continue;
        }
        assert!(
            line.starts_with("hotbench ") || line.starts_with("cargo run --release -- "),
            "README line this test does not know how to run: {line:?}; run it in \
             crates/cli/tests/readme_commands.rs or say why not in why_not()"
        );
        let args = sized(line);
        println!("run: {line}\n as: hotbench {}", args.join(" "));
        let o = home.hotbench(&args);
        let (out, err) = text(&o);
        assert!(
            o.status.success(),
            "README line failed: {line}\n(as hotbench {})\nstdout:\n{out}\nstderr:\n{err}",
            args.join(" ")
        );
        ran += 1;
    }
    ran
}

#[test]
fn sizing_keeps_the_command_and_shrinks_only_its_size() {
    let s = |l: &str| sized(l).join(" ");
    assert_eq!(
        s("hotbench run -c 100 -j 2 -T 60 -M extended -f daily_limit.sql"),
        "run -c 4 -j 2 -T 1 -M extended -f daily_limit.sql"
    );
    assert_eq!(
        s("hotbench sweep -b tpcb-like -T 20 -c 1,2,4,8,16,32 -o usl.html"),
        "sweep -b tpcb-like -T 1 -c 1,2,4 -o usl.html"
    );
    assert_eq!(s("cargo run --release -- demo"), "demo -c 4 -T 1");
    assert_eq!(s("hotbench run -i -s 10"), "run -i -s 1");
    assert!(
        why_not("hotbench run -nrT10 -c10 --max-tries=10 -h db.example -U app bench").is_some()
    );
    assert!(why_not("hotbench scenario list").is_none());
}
