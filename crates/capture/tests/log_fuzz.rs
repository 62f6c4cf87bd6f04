//! `--log` reads files users hand it: on hostile input — random bytes, and PostgreSQL's own
//! log lines cut, shuffled, mixed with junk, with odd prefixes, durations, parameters and
//! csv quoting — it returns transactions or an error, never panics, and every transaction it
//! returns has statements. Bounded case counts (`HOTBENCH_FUZZ_CASES=N` for a longer hunt).

use hotbench_capture::log::{read_log_from, LogOptions};
use proptest::prelude::*;

fn cases(default: u32) -> u32 {
    std::env::var("HOTBENCH_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Pieces real logs are made of (PostgreSQL 15's wording), to be recombined.
const PIECES: &[&str] = &[
    "2026-11-28 08:02:28.255 UTC [18557] 6b0a8a94.487d 730 3/6 ",
    "2026-11-28 08:02:28.255 UTC [18558] 6b0a8a94.487e 0 3/0 ",
    "2026-11-28 08:02:28 UTC [1] ",
    "1714557600.123 [7] ",
    "2026-11-28 08:02:28.255 +03 [9] a@b ",
    "2026-11-28 08:02:28.255,\"u\",\"d\",18557,\"[local]\",6b0a8a94.487d,1,\"SELECT\",2026-11-28 08:02:28 UTC,3/6,0,LOG,00000,\"",
    "\",,,,,,,,,\"\",\"client backend\",,0",
    "LOG:  ",
    "ERROR:  ",
    "FATAL:  ",
    "PANIC:  ",
    "DETAIL:  ",
    "STATEMENT:  ",
    "duration: 0.229 ms  ",
    "duration: 1e308 ms  ",
    "duration: -1 ms",
    "duration: NaN ms  ",
    "duration: 12 ms",
    "statement: ",
    "parse <unnamed>: ",
    "bind P_1/C_2: ",
    "execute P_1: ",
    "execute fetch from S/C: ",
    "parameters: $1 = '4', $2 = NULL",
    "parameters: $65536 = 'x'",
    "parameters: $1 = 'it''s",
    "parameters: $99999999999999999999 = '1'",
    "begin",
    "commit",
    "rollback",
    "rollback to savepoint a",
    "commit and chain",
    "end",
    "start transaction",
    "begin; update t set n = n + 1; commit;",
    "select ';' from \"a;b\" where x = $$;$$",
    "update acct set v = v - $1 where id = $2",
    "connection authorized: user=x",
    "disconnection: session time: 0:00:00.010",
    "\t",
    "\n",
    "\n\t",
    ",",
    "\"",
    "\"\"",
    "é\u{1b}[31m\u{0}",
    "%",
    " ",
];

fn log_text() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            4 => prop::sample::select(PIECES).prop_map(str::to_string),
            1 => any::<String>(),
            1 => "[ -~\\t\\n]{0,30}",
        ],
        0..120,
    )
    .prop_map(|parts| parts.concat())
}

fn check(text: &[u8], prefix: Option<&str>) {
    let opts = LogOptions {
        prefix: prefix.map(str::to_string),
        ..LogOptions::default()
    };
    let mut n = 0usize;
    let r = read_log_from(text, "fuzz.log", &opts, &mut |t| {
        assert!(!t.statements.is_empty());
        assert!(t
            .statements
            .iter()
            .all(|s| s.started_at_s.is_finite() && s.started_at_s >= 0.0));
        n += 1;
    });
    if let Ok(s) = r {
        assert!(s.counts.statements > 0);
        assert_eq!(s.counts.transactions as usize, n);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(96), ..ProptestConfig::default() })]

    #[test]
    fn recombined_log_lines_never_panic(text in log_text(), which in 0usize..5) {
        let prefix = [None, Some("%m [%p] %c %x %v "), Some("%t [%p] "), Some("%n [%p] "), Some("%m [%p] %q%u@%d ")][which];
        check(text.as_bytes(), prefix);
    }

    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..600)) {
        check(&bytes, None);
        check(&bytes, Some("%m [%p] "));
    }

    #[test]
    fn odd_prefixes_never_panic(prefix in "[%a-zA-Z0-9 \\[\\]:|@=,.-]{0,24}", text in log_text()) {
        check(text.as_bytes(), Some(&prefix));
    }
}
