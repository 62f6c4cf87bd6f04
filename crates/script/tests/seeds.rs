//! Every pgbench script of the workloads in the source documents parses.
//!
//! `testdata/seeds/*.sql` are our rewrites of those scripts (same constructs);
//! when `../shared/seeds/` (the documents themselves) is present, the verbatim
//! scripts are also read from it by line range and parsed, without copying
//! their text into the project.

use hotbench_script::{parse_script, CommandKind, Meta, ResultMode};
use std::path::{Path, PathBuf};

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("testdata")
        .join("seeds")
}

/// (fixture, number of commands, number of SQL commands with \gset)
const EXPECTED: &[(&str, usize, usize)] = &[
    ("000_limit_select_for_update.sql", 7, 1),
    ("000_limit_update_returning.sql", 5, 1),
    ("000_limit_with_settings.sql", 7, 1),
    ("000_limit_procedure.sql", 3, 0),
    ("001_queue_enqueue.sql", 1, 0),
    ("001_queue_dequeue.sql", 4, 1),
    ("002_tpcb_bucketed.sql", 12, 0),
    ("003_ycsb_zipf_update.sql", 3, 0),
    ("004_orders_advisory_cte.sql", 1, 0),
    ("004_orders_advisory_gset.sql", 4, 1),
    ("004_orders_advisory_sleep.sql", 5, 1),
    ("004_orders_skip_locked.sql", 4, 1),
];

fn gsets(script: &hotbench_script::Script) -> usize {
    script
        .commands()
        .iter()
        .filter(|c| matches!(&c.kind, CommandKind::Sql(s) if matches!(s.result_mode(), ResultMode::Gset(_))))
        .count()
}

#[test]
fn seed_fixtures_parse() {
    let mut seen = 0;
    for entry in std::fs::read_dir(fixtures()).expect("fixtures dir") {
        let path = entry.expect("entry").path();
        if path.extension().and_then(|e| e.to_str()) != Some("sql") {
            continue;
        }
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default()
            .to_string();
        let text = std::fs::read_to_string(&path).expect("read fixture");
        let script = parse_script(&name, &text).unwrap_or_else(|e| panic!("{e}"));
        let (_, n, g) = EXPECTED
            .iter()
            .find(|(f, _, _)| *f == name)
            .unwrap_or_else(|| panic!("no expectation for {name}"));
        assert_eq!(script.len(), *n, "{name}: command count");
        assert_eq!(gsets(&script), *g, "{name}: \\gset count");
        seen += 1;
    }
    assert_eq!(seen, EXPECTED.len());
}

#[test]
fn sleep_with_unit_in_seed() {
    let text =
        std::fs::read_to_string(fixtures().join("004_orders_advisory_sleep.sql")).expect("read");
    let script = parse_script("s", &text).expect("parse");
    let sleep = script.commands().iter().find_map(|c| match &c.kind {
        CommandKind::Meta(m) => match &m.meta {
            Meta::Sleep { unit_us, .. } => Some(*unit_us),
            _ => None,
        },
        _ => None,
    });
    assert_eq!(sleep, Some(1000));
}

/// Scripts inside the source documents: (file, first line, last line), 1-based inclusive.
const VERBATIM: &[(&str, usize, usize)] = &[
    ("000_dc0b835bf35ca06d.txt", 21, 31),
    ("000_dc0b835bf35ca06d.txt", 60, 65),
    ("000_dc0b835bf35ca06d.txt", 161, 169),
    ("000_dc0b835bf35ca06d.txt", 179, 181),
    ("001_a2d07a9f374d8559.txt", 38, 38),
    ("001_a2d07a9f374d8559.txt", 42, 49),
    ("004_270d963b29dcb055.txt", 32, 34),
    ("004_270d963b29dcb055.txt", 36, 40),
    ("004_270d963b29dcb055.txt", 42, 47),
    ("004_270d963b29dcb055.txt", 70, 75),
    ("004_270d963b29dcb055.txt", 80, 85),
];

#[test]
#[ignore = "reads the project's seed documents outside the repository (../shared/seeds or HOTBENCH_SEEDS_DIR): cargo test -- --ignored"]
fn verbatim_seed_scripts_parse() {
    let dir = std::env::var_os("HOTBENCH_SEEDS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/seeds"));
    assert!(dir.is_dir(), "{} not present", dir.display());
    for (file, first, last) in VERBATIM {
        let text =
            std::fs::read_to_string(dir.join(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
        let script: String = text
            .lines()
            .skip(first - 1)
            .take(last + 1 - first)
            .map(|l| format!("{l}\n"))
            .collect();
        let parsed = parse_script(file, &script).unwrap_or_else(|e| panic!("{file}:{first}: {e}"));
        assert!(!parsed.is_empty());
    }
}
