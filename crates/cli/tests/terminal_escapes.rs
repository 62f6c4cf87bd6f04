//! What a server or a result file controls reaches the terminal escaped (issue 36 row 3):
//! a notice and an error naming a relation with `ESC ]0;…BEL`, `ESC [2J` and a newline, in
//! `run`'s stderr and report, and the result file holding them shown by `compare`: no raw
//! control byte but a line break, no forged line; the JSON keeps the true text.

mod common;

use common::*;

/// No character a terminal acts on but a line break.
fn assert_terminal_safe(what: &str, bytes: &[u8]) {
    let text = String::from_utf8_lossy(bytes);
    let bad: Vec<char> = text
        .chars()
        .filter(|&c| c != '\n' && c.is_control())
        .collect();
    assert!(
        bad.is_empty(),
        "{what} holds raw control characters {bad:?}:\n{text}"
    );
    assert!(
        !text.lines().any(|l| l.starts_with("forged:")),
        "{what} has a forged line:\n{text}"
    );
}

#[test]
fn server_text_in_a_run_and_its_result_file_is_escaped_on_the_terminal() {
    let db = database("term_escapes");
    let dir = temp_dir("term-escapes");
    // Unicode escapes: the script itself holds no control character; the server's texts do.
    let script = write_script(
        &dir,
        "hostile.sql",
        "do $$ begin raise notice '%', E'note\\x1b]0;owned\\x07\\x1b[2J\\nforged: notice'; end $$;\n\
         select * from U&\"acct\\001b[2J\\000aforged: error\";\n",
    );
    let json = dir.join("hostile.json");
    let o = run(
        &db,
        &[
            "-n",
            "-t",
            "1",
            "-f",
            script.to_str().expect("utf-8"),
            "--json",
            json.to_str().expect("utf-8"),
        ],
    );
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{out}\n{err}");
    assert_terminal_safe("run's stdout", &o.stdout);
    assert_terminal_safe("run's stderr", &o.stderr);
    assert!(
        err.contains("note\\x1b]0;owned\\x07\\x1b[2J\\nforged: notice"),
        "{err}"
    );
    assert!(err.contains("acct\\x1b[2J\\nforged: error"), "{err}");
    // The result file keeps the server's true text; compare shows it escaped.
    let file = std::fs::read_to_string(&json).expect("result");
    assert!(file.contains("acct\\u001b[2J\\nforged: error"), "{file}");
    // A file named by someone else (a download, an archive) is the file's text too.
    let named = dir.join("run\u{1b}]0;owned\u{7}\nforged: file.json");
    std::fs::copy(&json, &named).expect("copy");
    let c = hotbench()
        .arg("compare")
        .args([&json, &named])
        .output()
        .expect("compare");
    assert_terminal_safe("compare's stdout", &c.stdout);
    assert_terminal_safe("compare's stderr", &c.stderr);
    let shown = String::from_utf8_lossy(&c.stdout);
    assert!(
        shown.contains("run\\x1b]0;owned\\x07\\nforged: file.json"),
        "{shown}"
    );
}
