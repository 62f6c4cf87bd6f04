//! Passwords never reach a result file (issue 13, item 12): the command line stored in the
//! JSON and shown in the HTML is masked with the parser that reads connection strings, so
//! escaped quotes, escaped spaces or percent-encoding cannot leave a piece of it visible.

mod common;

use common::*;

#[test]
fn passwords_with_quotes_and_escapes_never_reach_json_or_html() {
    let db = database("secrets");
    let o = run(&db, &["-i", "-q"]);
    assert!(o.status.success(), "{:?}", text(&o));
    let dir = temp_dir("secrets");
    // The harness's server trusts local connections: the password is sent to no one, but
    // it is on the command line exactly as a user would type it.
    let base = format!(
        "host={} port={} user={} dbname={}",
        db.socket_dir.display(),
        db.port,
        db.user,
        db.dbname
    );
    for (i, (conninfo, secrets)) in [
        (
            format!(r"{base} password='it\'s a \'pwQ\' x'"),
            vec!["pwQ", " x'"],
        ),
        (
            format!(r"{base} password=sec\ Zq9\ Kx7"),
            vec!["Zq9", "Kx7"],
        ),
    ]
    .into_iter()
    .enumerate()
    {
        let json_path = dir.join(format!("r{i}.json"));
        let html_path = dir.join(format!("r{i}.html"));
        let o = hotbench()
            .args(["run", "-n", "-t", "2", "--json"])
            .arg(&json_path)
            .arg("--html")
            .arg(&html_path)
            .arg(&conninfo)
            .env_remove("PGPASSWORD")
            .output()
            .expect("run hotbench");
        let (out, err) = text(&o);
        assert!(o.status.success(), "{conninfo}\n{out}\n{err}");
        let json_text = std::fs::read_to_string(&json_path).unwrap();
        let html_text = std::fs::read_to_string(&html_path).unwrap();
        assert!(json_text.contains("********"), "{json_text}");
        for s in &secrets {
            for (what, t) in [("json", &json_text), ("html", &html_text), ("stdout", &out)] {
                assert!(!t.contains(s), "{what} shows {s:?} of {conninfo:?}");
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
