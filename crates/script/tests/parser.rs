//! Parser tests: S-expression goldens for the Pratt parser (with pgbench's
//! precedences), script structure, `\if` resolution, `\gset`, and error texts.

use hotbench_script::{
    parse_expr, parse_script, Action, Client, CommandKind, Meta, PrngState, QueryResult,
    ResultError, ResultMode, Value, Variables, EXPR_STACK_BYTES, MAX_TREE_DEPTH,
};

#[track_caller]
fn check(input: &str, expected: &str) {
    match parse_expr(input) {
        Ok(e) => assert_eq!(e.to_string(), expected, "input: {input}"),
        Err(e) => assert_eq!(
            format!("error: {}", e.message),
            expected,
            "input: {input}\n{e}"
        ),
    }
}

#[test]
fn sexpr_arithmetic() {
    check("1", "1");
    check("1.5", "1.5");
    check("1e3", "1000.0");
    check(":x", ":x");
    check("1 + 2", "(+ 1 2)");
    check("1 + 2 + 3", "(+ (+ 1 2) 3)");
    check("1 - 2 - 3", "(- (- 1 2) 3)");
    check("1 + 2 * 3", "(+ 1 (* 2 3))");
    check("(1 + 2) * 3", "(* (+ 1 2) 3)");
    check("8 / 4 / 2", "(/ (/ 8 4) 2)");
    check("7 % 3 * 2", "(* (mod 7 3) 2)");
    check("-1", "(- 0 1)");
    check("- -1", "(- 0 (- 0 1))");
    check("+1", "1");
    check("-2 * 3", "(* (- 0 2) 3)");
    check("-9223372036854775808", "-9223372036854775808");
    check("-9223372036854775808 * 2", "(* -9223372036854775808 2)");
    check("9223372036854775808", "error: syntax error");
    check("99999999999999999999", "error: bigint constant overflow");
}

#[test]
fn sexpr_bitwise_and_comparisons() {
    check("1 | 2 & 3", "(& (| 1 2) 3)");
    check("1 << 2 + 3", "(<< 1 (+ 2 3))");
    check("~1", "(# -1 1)");
    check("~1 + 2", "(# -1 (+ 1 2))");
    check("~1 | 2", "(| (# -1 1) 2)");
    check("~1 < 2", "(< (# -1 1) 2)");
    check("1 # 2 < 3 + 4", "(< (# 1 2) (+ 3 4))");
    check("1 > 2", "(< 2 1)");
    check("1 >= 2", "(<= 2 1)");
    check("1 != 2", "(<> 1 2)");
    check("1 < 2 = true", "error: syntax error");
    check("1 < 2 < 3", "error: syntax error");
    check("(1 < 2) < 3", "(< (< 1 2) 3)");
}

#[test]
fn sexpr_logic_and_is() {
    check("true and false or true", "(!or (!and true false) true)");
    check("true or false and true", "(!or true (!and false true))");
    check("not true and false", "(!and (!not true) false)");
    check("not 1 = 2", "(!not (= 1 2))");
    check("not not true", "(!not (!not true))");
    check("1 is null", "(!is 1 null)");
    check("1 is not null", "(!not (!is 1 null))");
    check("1 isnull", "(!is 1 null)");
    check("1 notnull", "(!not (!is 1 null))");
    check("true is not false", "(!not (!is true false))");
    check("1 = 2 is true", "(!is (= 1 2) true)");
    check("not 1 is null", "(!not (!is 1 null))");
    check("1 is null is null", "(!is (!is 1 null) null)");
    check("1 + 1 is null", "(!is (+ 1 1) null)");
    check("1 is 2", "error: syntax error");
    check("NULL AND TRUE", "(!and null true)");
}

#[test]
fn sexpr_functions_and_case() {
    check("abs(-1)", "(abs (- 0 1))");
    check("ABS(1)", "(abs 1)");
    check("power(2, 3)", "(pow 2 3)");
    check("hash(1)", "(hash_murmur2 1 :default_seed)");
    check("hash(1, 2)", "(hash_murmur2 1 2)");
    check("hash_fnv1a(1)", "(hash_fnv1a 1 :default_seed)");
    check("permute(1, 10)", "(permute 1 10 :default_seed)");
    check("least(1, 2.5, :x)", "(least 1 2.5 :x)");
    check("pi()", "(pi)");
    check("random(1, 10 * :scale)", "(random 1 (* 10 :scale))");
    check("case when 1 then 2 end", "(!case_end 1 2 null)");
    check(
        "case when :a < 1 then 2 when :a < 2 then 3 else 4 end",
        "(!case_end (< :a 1) 2 (< :a 2) 3 4)",
    );
    check("case 1 when 1 then 2 end", "error: syntax error");
    check("foo(1)", "error: unexpected function name");
    check("abs(1, 2)", "error: unexpected number of arguments");
    check("least()", "error: at least one argument expected");
    check("hash(1, 2, 3)", "error: unexpected number of arguments");
    check("permute(1)", "error: unexpected number of arguments");
    check("abs", "error: syntax error");
}

/// Runs `f` on a thread with the stack hotbench gives threads that run scripts.
fn on_script_stack(f: impl FnOnce() + Send + 'static) {
    std::thread::Builder::new()
        .stack_size(EXPR_STACK_BYTES)
        .spawn(f)
        .expect("thread")
        .join()
        .expect("no stack overflow");
}

#[test]
fn deep_expressions_are_refused_not_overflowing() {
    on_script_stack(refuse_deep_expressions);
}

fn refuse_deep_expressions() {
    let deep = format!("{}1{}", "(".repeat(5000), ")".repeat(5000));
    assert!(parse_expr(&deep).is_err());
    let long = vec!["1"; 20_000].join(" + ");
    let e = parse_expr(&long).expect_err("too deep");
    assert!(e.to_string().contains("too deeply nested"), "{e}");
    let unary = format!("{}1", "-".repeat(10_000));
    assert!(parse_expr(&unary).is_err());
    let just_over = vec!["1"; MAX_TREE_DEPTH + 2].join(" + ");
    assert!(parse_expr(&just_over).is_err());
}

/// Expressions nested `n` levels deep, in each form that recurses.
fn nested_forms(n: usize) -> Vec<(&'static str, String, Value)> {
    let open_close = |open: &str, close: &str, inner: &str| {
        format!("{}{inner}{}", open.repeat(n), close.repeat(n))
    };
    vec![
        ("parentheses", open_close("(", ")", "1"), Value::Int(1)),
        (
            "right-nested sums",
            open_close("1 + (", ")", "0"),
            Value::Int(n as i64),
        ),
        (
            "left-nested sums",
            vec!["1"; n].join(" + "),
            Value::Int(n as i64),
        ),
        (
            "unary minus",
            open_close("-(", ")", "1"),
            Value::Int(if n.is_multiple_of(2) { 1 } else { -1 }),
        ),
        (
            "function calls",
            open_close("abs(", ")", "3"),
            Value::Int(3),
        ),
        (
            "not",
            open_close("not (", ")", "true"),
            Value::Bool(n.is_multiple_of(2)),
        ),
        (
            "case",
            open_close("case when true then ", " else 0 end", "7"),
            Value::Int(7),
        ),
    ]
}

/// pgbench accepts 1,000 nesting levels (and more): parse, evaluate, print and drop them on a
/// thread with the stack hotbench gives threads that run scripts. The main thread has 8 MB.
#[test]
fn thousand_levels_parse_and_evaluate_within_the_script_stack() {
    const { assert!(MAX_TREE_DEPTH >= 1_000) };
    on_script_stack(|| {
        for (form, text, want) in nested_forms(999) {
            let expr = parse_expr(&text).unwrap_or_else(|e| panic!("{form}: {e}"));
            let mut client = Client::new(0, Variables::new(), PrngState::seed(1));
            let v = client
                .eval(&expr, 0, 0, &mut std::io::sink())
                .unwrap_or_else(|e| panic!("{form}: {e}"));
            assert_eq!(v, want, "{form}");
            assert!(!expr.to_string().is_empty());
            let copy = expr.clone();
            drop(expr);
            drop(copy);
        }
        // Beyond the limit is a clear error, never a stack overflow: one level for trees
        // (plain parentheses add no height: they are bounded at twice the limit).
        for (form, text, _) in nested_forms(MAX_TREE_DEPTH + 1) {
            if form != "parentheses" {
                let e = parse_expr(&text).expect_err(form);
                assert!(e.to_string().contains("too deeply nested"), "{form}: {e}");
            }
        }
        for (form, text, _) in nested_forms(2 * MAX_TREE_DEPTH + 1) {
            let e = parse_expr(&text).expect_err(form);
            assert!(e.to_string().contains("too deeply nested"), "{form}: {e}");
        }
    });
}

#[test]
fn error_display_is_pgbench_like() {
    let e = parse_script("f.sql", "select 1;\n\\set x 1 +\n").expect_err("error");
    assert_eq!(
        e.to_string(),
        "f.sql:2: syntax error in command \"set\"\n\\set x 1 +\n          ^ error found here"
    );
    assert_eq!(e.line, 2);
    let e = parse_script("f.sql", "\\set\n").expect_err("error");
    assert_eq!(
        e.to_string(),
        "f.sql:1: missing argument in command \"set\""
    );
    let e = parse_script("f.sql", "\n\n\\sleep 1 days\n").expect_err("error");
    assert_eq!(
        e.to_string(),
        "f.sql:3: unrecognized time unit, must be us, ms or s (days) in command \"sleep\"\n\\sleep 1 days\n         ^ error found here"
    );
    let e = parse_script("f.sql", "-- nothing\n").expect_err("empty");
    assert!(e.to_string().contains("empty command list"), "{e}");
}

#[test]
fn conditional_structure_errors_carry_lines() {
    for (src, line, msg) in [
        ("select 1;\n\\endif\n", 2, "\\endif without matching \\if"),
        ("\\elif true\n", 1, "\\elif without matching \\if"),
        ("\\else\n", 1, "\\else without matching \\if"),
        (
            "\\if 1\n\\else\n\\else\n\\endif\n",
            3,
            "\\else after \\else",
        ),
        (
            "\\if 1\n\\else\n\\elif 1\n\\endif\n",
            3,
            "\\elif after \\else",
        ),
        (
            "select 1;\n\\if 1\nselect 2;\n",
            2,
            "\\if without matching \\endif",
        ),
    ] {
        let e = parse_script("c.sql", src).expect_err(src);
        assert_eq!((e.line, e.message.as_str()), (line, msg), "{src}");
    }
}

fn run_meta(script: &str) -> (Vec<usize>, String) {
    let s = parse_script("t", script).expect("parse");
    let mut client = Client::new(0, Variables::new(), PrngState::seed(3));
    let mut out = Vec::new();
    let mut visited = Vec::new();
    let mut i = 0;
    while i < s.len() {
        visited.push(i);
        match s.command(i).map(|c| &c.kind) {
            Some(CommandKind::Sql(_)) => i += 1,
            _ => match client.execute(&s, 0, i, &mut out).expect("execute") {
                Action::Jump(n) => i = n,
                _ => i += 1,
            },
        }
    }
    (visited, String::from_utf8_lossy(&out).into_owned())
}

#[test]
fn if_chains_jump_like_pgbench() {
    let script = "\\set a 2\n\\if :a = 1\nselect 1;\n\\elif :a = 2\nselect 2;\n\\else\nselect 3;\n\\endif\nselect 4;\n";
    let (visited, _) = run_meta(script);
    // 0 set, 1 if (false) -> 3 elif (true) -> 4 select 2 -> 5 else -> 8 select 4
    assert_eq!(visited, vec![0, 1, 4, 5, 8]);
    let (visited, _) = run_meta(&script.replace("\\set a 2", "\\set a 1"));
    assert_eq!(visited, vec![0, 1, 2, 3, 8]);
    let (visited, _) = run_meta(&script.replace("\\set a 2", "\\set a 9"));
    assert_eq!(visited, vec![0, 1, 6, 7, 8]);
    let s = parse_script("t", script).expect("parse");
    match &s.commands()[1].kind {
        CommandKind::Meta(m) => assert!(matches!(m.meta, Meta::If { next: 3, .. })),
        CommandKind::Sql(_) => panic!("expected \\if"),
    }
}

#[test]
fn gset_attaches_and_stores() {
    let s =
        parse_script("g", "select 1 as a, 2 as b \\gset p_\nselect 3;\n\\aset\n").expect("parse");
    assert_eq!(s.len(), 2);
    let CommandKind::Sql(first) = &s.commands()[0].kind else {
        panic!("sql")
    };
    assert_eq!(first.result_mode(), &ResultMode::Gset("p_".to_string()));
    assert_eq!(first.text(), "select 1 as a, 2 as b ");
    let mut vars = Variables::new();
    first
        .store_result(
            &mut vars,
            0,
            true,
            QueryResult::Rows {
                ntuples: 1,
                last_row: &[("a", "1"), ("b", "x")],
            },
        )
        .expect("store");
    assert_eq!(vars.text("p_a").as_deref(), Some("1"));
    assert_eq!(
        vars.value("p_b"),
        Err("malformed variable \"p_b\" value: \"x\"".to_string())
    );
    let err = first
        .store_result(
            &mut vars,
            0,
            true,
            QueryResult::Rows {
                ntuples: 2,
                last_row: &[],
            },
        )
        .expect_err("two rows");
    assert_eq!(err, ResultError::ExpectedOneRow { query: 0, got: 2 });
    assert_eq!(
        err.pgbench_message(3, 0, 0),
        "client 3 script 0 command 0 query 0: expected one row, got 2"
    );
    let err = first
        .store_result(&mut vars, 0, true, QueryResult::NoRows)
        .expect_err("no rows");
    assert_eq!(err, ResultError::ExpectedOneRow { query: 0, got: 0 });
    let CommandKind::Sql(second) = &s.commands()[1].kind else {
        panic!("sql")
    };
    assert_eq!(second.result_mode(), &ResultMode::Aset(String::new()));
    assert!(second.wants_result(false));
    second
        .store_result(
            &mut vars,
            0,
            false,
            QueryResult::Rows {
                ntuples: 0,
                last_row: &[],
            },
        )
        .expect("aset skips empty results");
    let bad = second.store_result(
        &mut vars,
        1,
        true,
        QueryResult::Rows {
            ntuples: 1,
            last_row: &[("?column?", "1")],
        },
    );
    assert!(matches!(bad, Err(ResultError::BadVariable { .. })));

    for src in [
        "\\gset\n",
        "\\set a 1\n\\gset\n",
        "select 1 \\gset\n\\gset\n",
    ] {
        let e = parse_script("g", src).expect_err(src);
        assert!(
            e.message.contains("\\gset must follow an SQL command"),
            "{src}: {e}"
        );
    }
}

#[test]
fn sql_commands_keep_pgbench_text_and_lines() {
    let src =
        "-- header\n\n  select 1;\nselect\n  2 \\; select 3;\n\\set x 1\nselect 'a;b' -- c;\n;\n";
    let s = parse_script("l", src).expect("parse");
    let summary: Vec<(usize, &str)> = s
        .commands()
        .iter()
        .map(|c| (c.line, c.first_line.as_str()))
        .collect();
    assert_eq!(
        summary,
        vec![
            (3, "select 1;"),
            (4, "select"),
            (6, "\\set x 1"),
            (7, "select 'a;b' -- c;")
        ]
    );
    let CommandKind::Sql(c) = &s.commands()[1].kind else {
        panic!("sql")
    };
    assert_eq!(c.text(), "select\n  2 ; select 3;");
}

#[test]
fn sleep_forms() {
    let s = parse_script(
        "s",
        "\\sleep 10ms\n\\sleep 2\n\\sleep :t us\n\\sleep -5 s\n",
    )
    .expect("parse");
    let mut vars = Variables::new();
    vars.set_text("t", "t", "250").expect("set");
    let mut client = Client::new(0, vars, PrngState::seed(1));
    let mut sink = std::io::sink();
    let got: Vec<Action> = (0..4)
        .map(|i| client.execute(&s, 0, i, &mut sink).expect("sleep"))
        .collect();
    assert_eq!(
        got,
        vec![
            Action::Sleep(10_000),
            Action::Sleep(2_000_000),
            Action::Sleep(250),
            Action::Sleep(-5_000_000)
        ]
    );
    for bad in [
        "\\sleep x\n",
        "\\sleep 1 2 3\n",
        "\\sleep 1 fortnights\n",
        "\\sleep\n",
    ] {
        assert!(parse_script("s", bad).is_err(), "{bad}");
    }
}

#[test]
fn random_state_is_restored_on_retry() {
    let s = parse_script("r", "\\set a random(1, 1000000)\n").expect("parse");
    let mut client = Client::new(0, Variables::new(), PrngState::seed(77));
    let mut sink = std::io::sink();
    client.begin_transaction();
    client.execute(&s, 0, 0, &mut sink).expect("run");
    let first = client.vars.value("a");
    client.restart_transaction();
    client.execute(&s, 0, 0, &mut sink).expect("retry");
    assert_eq!(client.vars.value("a"), first);
    client.begin_transaction();
    client.execute(&s, 0, 0, &mut sink).expect("next");
    assert_ne!(client.vars.value("a"), first);
}

#[test]
fn psql_quoting_extension() {
    let s = parse_script("q", "select :'v', :\"v\", :v;\n").expect("parse");
    let CommandKind::Sql(c) = &s.commands()[0].kind else {
        panic!("sql")
    };
    let mut vars = Variables::new();
    vars.set_text("t", "v", "it's \"x\"").expect("set");
    let mut out = String::new();
    c.render_simple(&vars, &mut out);
    assert_eq!(out, "select 'it''s \"x\"', \"it's \"\"x\"\"\", it's \"x\";");
    c.render_extended(&vars, &mut out);
    assert_eq!(out, "select $1, \"it's \"\"x\"\"\", $2;");
    let mut p = String::new();
    assert!(c.write_param(0, &vars, &mut p));
    assert_eq!(p, "it's \"x\"");
}
