//! Robustness: no input makes the parser or the evaluator panic, and every
//! parse error names a line. Property tests (proptest) over grammar-shaped
//! and arbitrary text, plus a kept corpus (`testdata/fuzz_corpus/`) replayed
//! on every `cargo test`.

use hotbench_script::{
    parse_script, Action, Client, CommandKind, Meta, PrngState, QueryResult, Variables,
};
use proptest::prelude::*;

/// Parses and, when the script is valid, runs its meta-commands (never the
/// shell ones) and renders its SQL, checking invariants on the way.
fn exercise(src: &str) {
    match parse_script("fuzz.sql", src) {
        Err(e) => {
            let lines = src.split('\n').count();
            assert!(
                e.line >= 1 && e.line <= lines + 1,
                "line {} of {lines}: {e}",
                e.line
            );
            assert!(e.to_string().starts_with(&format!("fuzz.sql:{}: ", e.line)));
        }
        Ok(script) => {
            assert!(!script.is_empty());
            let mut vars = Variables::new();
            let _ = vars.set_text("t", "x", "12");
            let _ = vars.set_text("t", "y", "abc");
            let mut client = Client::new(0, vars, PrngState::seed(1));
            let mut sink = Vec::new();
            let mut buf = String::new();
            let mut i = 0;
            let mut steps = 0;
            while i < script.len() && steps < 1000 {
                steps += 1;
                let Some(cmd) = script.command(i) else { break };
                assert_eq!(cmd.index, i);
                assert!(cmd.line >= 1);
                match &cmd.kind {
                    CommandKind::Sql(sql) => {
                        sql.render_simple(&client.vars, &mut buf);
                        sql.render_extended(&client.vars, &mut buf);
                        for p in 0..sql.param_count() {
                            buf.clear();
                            let _ = sql.write_param(p, &client.vars, &mut buf);
                        }
                        let row = [("col", "1")];
                        let _ = sql.store_result(
                            &mut client.vars,
                            0,
                            true,
                            QueryResult::Rows {
                                ntuples: 1,
                                last_row: &row,
                            },
                        );
                        i += 1;
                    }
                    CommandKind::Meta(m) => {
                        if matches!(m.meta, Meta::Shell { .. } | Meta::SetShell { .. }) {
                            i += 1;
                            continue;
                        }
                        match client.execute(&script, 0, i, &mut sink) {
                            Ok(Action::Jump(n)) => {
                                assert!(n > i && n <= script.len(), "jump {i} -> {n}");
                                i = n;
                            }
                            Ok(_) => i += 1,
                            Err(e) => {
                                assert_eq!(e.command, i);
                                let _ = e.abort_line(0, 0);
                                break;
                            }
                        }
                    }
                }
            }
        }
    }
}

const FRAGMENTS: &[&str] = &[
    "\\set x ",
    "\\set ",
    "\\set y ",
    "\\if ",
    "\\elif ",
    "\\else",
    "\\endif",
    "\\sleep ",
    "\\gset",
    "\\aset p_",
    "\\startpipeline",
    "\\syncpipeline",
    "\\endpipeline",
    "\\foo",
    "\\shell echo",
    "\\setshell v echo 1",
    "1",
    "0",
    "-",
    "+",
    "*",
    "/",
    "%",
    "(",
    ")",
    ",",
    ":x",
    ":y",
    ":z",
    "random(",
    "random_zipfian(",
    "random_gaussian(",
    "random_exponential(",
    "hash(",
    "hash_fnv1a(",
    "permute(",
    "least(",
    "greatest(",
    "abs(",
    "int(",
    "double(",
    "sqrt(",
    "ln(",
    "exp(",
    "pow(",
    "pi()",
    "debug(",
    "case ",
    "when ",
    "then ",
    "else ",
    "end",
    " is ",
    "null",
    "not ",
    " and ",
    " or ",
    "true",
    "false",
    "1.5",
    "1e308",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775808",
    "<",
    "<=",
    "=",
    "<>",
    "!=",
    ">",
    "~",
    "<<",
    ">>",
    "&",
    "|",
    "#",
    "isnull",
    "notnull",
    "ms",
    "us",
    "s",
    "select ",
    "'",
    "\"",
    "$$",
    "$a$",
    "--",
    "/*",
    "*/",
    ";",
    "\\;",
    "\\:",
    "\\",
    "\n",
    "\n",
    "\n",
    " ",
    " ",
    ":'x'",
    ":\"x\"",
    ":{?x}",
    "::",
    "begin ",
    "create function ",
    "E'",
    "\\\n",
    "\t",
    "é",
    "\u{0}",
    "\r\n",
    "1.",
    ".5",
    "1e",
    "3e-400",
];

fn script_strategy() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            8 => prop::sample::select(FRAGMENTS).prop_map(str::to_string),
            1 => any::<char>().prop_map(|c| c.to_string()),
            1 => "[0-9]{1,25}",
        ],
        0..60,
    )
    .prop_map(|parts| parts.concat())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 768, ..ProptestConfig::default() })]

    #[test]
    fn grammar_shaped_scripts_never_panic(src in script_strategy()) {
        exercise(&src);
    }

    #[test]
    fn arbitrary_text_never_panics(src in "\\PC{0,200}") {
        exercise(&src);
    }

    #[test]
    fn expressions_never_panic(parts in prop::collection::vec(prop::sample::select(FRAGMENTS), 1..30)) {
        let expr: String = parts.concat().replace('\n', " ");
        exercise(&format!("\\set x {expr}\n\\if {expr}\n\\elif {expr}\n\\endif\n"));
    }
}

#[test]
fn corpus_replays() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/fuzz_corpus");
    let mut n = 0;
    for entry in std::fs::read_dir(dir).expect("corpus dir") {
        let path = entry.expect("entry").path();
        let bytes = std::fs::read(&path).expect("read");
        exercise(&String::from_utf8_lossy(&bytes));
        n += 1;
    }
    assert!(n >= 10);
}
