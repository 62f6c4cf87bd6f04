//! `--pgbench-compat N` against the real pgbench N (15: the machine's; 18: the wheel
//! `.ci/install-pg18` unpacks): the same command lines must give the same report layout
//! (several scripts, retries, `--failures-detailed`, `-r` columns, an aborted run), the same
//! `-t` totals and `debug()` values, the same `-l` field layouts, and `-d` must mean what it
//! means in that version.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::oracle::{pg18_bin, report_shapes};
use common::*;

/// One program run: its exit code, stdout and stderr.
struct Ran {
    code: Option<i32>,
    out: String,
    err: String,
}

fn ran(o: Output) -> Ran {
    let (out, err) = text(&o);
    Ran {
        code: o.status.code(),
        out,
        err,
    }
}

/// The two programs, run the same way from the same directory.
struct Pair {
    version: u32,
    pgbench: PathBuf,
    db: hotbench_pgserver::ConnInfo,
    dir: PathBuf,
}

impl Pair {
    fn new(version: u32, pgbench: PathBuf) -> Pair {
        let tag = format!("compat{version}");
        let db = database(&tag);
        let dir = temp_dir(&tag);
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("test dir");
        Pair {
            version,
            pgbench,
            db,
            dir,
        }
    }

    fn script(&self, name: &str, text: &str) -> String {
        write_script(&self.dir, name, text)
            .to_string_lossy()
            .into_owned()
    }

    /// pgbench with `args`, then the database name unless `args` name it (`-d`).
    fn pgbench(&self, args: &[&str]) -> Ran {
        let mut cmd = Command::new(&self.pgbench);
        self.finish(&mut cmd, args)
    }

    fn hotbench(&self, args: &[&str]) -> Ran {
        let mut cmd = hotbench();
        cmd.args(["run", "--pgbench-compat", &self.version.to_string()]);
        self.finish(&mut cmd, args)
    }

    fn finish(&self, cmd: &mut Command, args: &[&str]) -> Ran {
        cmd.args(conn_args(&self.db)).args(args);
        let names_db = args.contains(&"--dbname") || (self.version >= 17 && args.contains(&"-d"));
        if !names_db {
            cmd.arg(&self.db.dbname);
        }
        ran(cmd
            .current_dir(&self.dir)
            .output()
            .expect("run the program"))
    }

    /// Both programs on `args`: same exit code and same report layout. Returns both runs.
    fn same_report(&self, args: &[&str]) -> (Ran, Ran) {
        let p = self.pgbench(args);
        let h = self.hotbench(args);
        let v = self.version;
        assert_eq!(
            p.code, h.code,
            "exit codes differ (pgbench {v}) for {args:?}\n{}\n{}",
            p.err, h.err
        );
        assert!(
            !report_shapes(&p.out).is_empty(),
            "pgbench {v} printed no report for {args:?}:\n{}",
            p.err
        );
        assert_eq!(
            report_shapes(&p.out),
            report_shapes(&h.out),
            "report layout differs from pgbench {v} for {args:?}\npgbench:\n{}\nhotbench:\n{}",
            p.out,
            h.out
        );
        (p, h)
    }

    /// Field counts of the `-l` log lines each program writes for `args`.
    fn same_log_fields(&self, args: &[&str]) {
        let fields = |prefix: &str, run: &dyn Fn(&[&str]) -> Ran| {
            let mut a = args.to_vec();
            a.extend(["--log-prefix", prefix]);
            let r = run(&a);
            assert_eq!(r.code, Some(0), "{args:?}: {}", r.err);
            log_field_counts(&self.dir, &format!("{prefix}."))
        };
        let p = fields("p", &|a| self.pgbench(a));
        let h = fields("h", &|a| self.hotbench(a));
        assert!(!p.is_empty(), "pgbench {} wrote no log", self.version);
        assert_eq!(
            p, h,
            "log fields differ from pgbench {} for {args:?}",
            self.version
        );
    }
}

/// The distinct field counts of the log files starting with `prefix` (removed afterwards).
fn log_field_counts(dir: &Path, prefix: &str) -> Vec<usize> {
    let mut counts = Vec::new();
    for e in std::fs::read_dir(dir)
        .expect("test dir")
        .filter_map(|e| e.ok())
    {
        if e.file_name().to_string_lossy().starts_with(prefix) {
            let text = std::fs::read_to_string(e.path()).expect("log file");
            counts.extend(text.lines().map(|l| l.split(' ').count()));
            let _ = std::fs::remove_file(e.path());
        }
    }
    counts.sort();
    counts.dedup();
    counts
}

/// The distinct `debug(…)` lines of a run's stderr.
fn debug_values(err: &str) -> Vec<&str> {
    let mut v: Vec<&str> = err.lines().filter(|l| l.starts_with("debug(")).collect();
    v.sort();
    v.dedup();
    v
}

fn line<'a>(out: &'a str, prefix: &str) -> Option<&'a str> {
    out.lines().find(|l| l.starts_with(prefix))
}

fn compare_with(version: u32, pgbench: PathBuf) {
    let pair = Pair::new(version, pgbench);
    let a = pair.script(
        "a.sql",
        "\\set r random(1, 1000)\n\\set x debug(mod(-7, 3))\nselect :r as r;\n",
    );
    let b = pair.script("b.sql", "\\set y debug(1.5 * 2)\nbegin;\nselect 1;\nend;\n");
    let bad = pair.script("bad.sql", "-- SQL syntax error\n    SELECT 1 + ;\n");
    let two = [a.as_str(), "-f", &format!("{b}@3")].join(" ");
    let two: Vec<&str> = two.split(' ').collect();

    // Several scripts with retries and detailed failures, -r: every per-script line.
    let mut args = vec!["-n", "-t", "10", "-c", "2", "--max-tries", "2"];
    args.extend(["--failures-detailed", "-r", "--random-seed", "7", "-f"]);
    args.extend(&two);
    let (p, h) = pair.same_report(&args);
    let processed = "number of transactions actually processed:";
    assert_eq!(
        line(&p.out, processed),
        Some(&*format!("{processed} 20/20"))
    );
    assert_eq!(line(&h.out, processed), line(&p.out, processed));
    assert_eq!(debug_values(&p.err).len(), 2, "{}", p.err);
    assert_eq!(debug_values(&h.err), debug_values(&p.err));

    // One try, -r with one column less.
    pair.same_report(&["-n", "-t", "5", "-r", "-f", &a]);

    // Nothing tried: the prepare fails, the client aborts (exit 2).
    let (p, _) = pair.same_report(&["-n", "-t", "1", "-M", "prepared", "-f", &bad]);
    assert_eq!(p.code, Some(2));

    // -l layouts: per transaction, and aggregated.
    pair.same_log_fields(&[
        "-n",
        "-t",
        "5",
        "-c",
        "2",
        "-l",
        "--max-tries",
        "2",
        "-f",
        &a,
    ]);
    let mut agg = vec![
        "-n",
        "-T",
        "2",
        "-c",
        "2",
        "-l",
        "--aggregate-interval",
        "1",
    ];
    agg.extend(["--max-tries", "2", "--failures-detailed", "-f", &a]);
    pair.same_log_fields(&agg);

    // -d: the database from 17 on, --debug before.
    let dbname = pair.db.dbname.clone();
    let args: Vec<&str> = if version >= 17 {
        vec!["-n", "-t", "1", "-f", &a, "-d", &dbname]
    } else {
        vec!["-n", "-t", "1", "-f", &a, "-d"]
    };
    let (p, h) = pair.same_report(&args);
    assert_eq!(p.code, Some(0), "{}", p.err);
    let traced = |r: &Ran| r.err.contains("client 0 sending");
    assert_eq!(traced(&p), version < 17, "{}", p.err);
    assert_eq!(traced(&h), traced(&p), "{}", h.err);
}

#[test]
fn pgbench_compat_15_matches_pgbench_15() {
    let bin = PathBuf::from("/usr/lib/postgresql/15/bin/pgbench");
    assert!(
        bin.is_file(),
        "pgbench 15 not found (it ships with the PostgreSQL 15 server binaries the harness uses)"
    );
    compare_with(15, bin);
}

#[test]
#[ignore = "needs pgbench 18 (.ci/install-pg18 or HOTBENCH_PG18_BIN); .ci/run runs it with --ignored"]
fn pgbench_compat_18_matches_pgbench_18() {
    let bin = pg18_bin().expect("pgbench 18 not found (.ci/run installs it: .ci/install-pg18)");
    compare_with(18, bin.join("pgbench"));
}
