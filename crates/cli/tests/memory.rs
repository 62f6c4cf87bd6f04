//! Memory proportional to the script: long and deeply nested scripts run with modest memory
//! (per-command state is allocated when a command first records a latency, and meta-commands
//! record only with -r), measured as the process's peak RSS (`client.rss_peak_kib`).

mod common;

use common::*;

/// Runs `script` once on each of 2 clients in 2 threads (per-command state is per thread and
/// allocated at a command's first use); returns the peak RSS in MiB.
fn peak_mib(tag: &str, script: &str, extra: &[&str]) -> f64 {
    let db = database(tag);
    let dir = temp_dir(tag);
    let path = write_script(&dir, &format!("{tag}.sql"), script);
    let json_path = dir.join(format!("{tag}.json"));
    let mut args = vec![
        "-n",
        "-t",
        "1",
        "-c",
        "2",
        "-j",
        "2",
        "-f",
        path.to_str().unwrap(),
        "--json",
        json_path.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let o = run(&db, &args);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{tag}:\n{out}\n{err}");
    assert_eq!(
        line_value(&out, "number of transactions actually processed:"),
        Some("2/2"),
        "{tag}: {out}"
    );
    let v = json(&json_path);
    let kib = v["client"]["rss_peak_kib"].as_u64().expect("rss_peak_kib");
    assert!(kib > 0, "{tag}: peak RSS is measured");
    let _ = std::fs::remove_dir_all(&dir);
    eprintln!("{tag}: peak RSS {} MiB", kib / 1024);
    kib as f64 / 1024.0
}

#[test]
fn two_hundred_thousand_set_lines_run_in_modest_memory() {
    // Was ~375 KB per command per thread (24 GB here).
    let mut script = String::with_capacity(200_000 * 16);
    for i in 0..200_000 {
        script.push_str(&format!("\\set v{} {i}\n", i % 100));
    }
    script.push_str("select :v7;\n");
    let mib = peak_mib("sets", &script, &[]);
    assert!(mib < 300.0, "200,000 \\set lines: peak RSS {mib:.0} MiB");
}

#[test]
fn ten_thousand_nested_ifs_run_in_modest_memory() {
    let depth = 10_000;
    let mut script = "\\if 1\n".repeat(depth);
    script.push_str("select 1;\n");
    script.push_str(&"\\endif\n".repeat(depth));
    let mib = peak_mib("ifs", &script, &[]);
    assert!(mib < 150.0, "{depth} nested \\if: peak RSS {mib:.0} MiB");
}

#[test]
fn a_thousand_sql_commands_with_per_command_latencies() {
    // Every SQL command keeps a latency histogram (-r prints them): each costs only the
    // range its latencies cover, not an hour-long range up front (was 384 MB here).
    let script = "select 1;\n".repeat(1_000);
    let mib = peak_mib("sqls", &script, &["-r"]);
    assert!(
        mib < 150.0,
        "1,000 SQL commands with -r: peak RSS {mib:.0} MiB"
    );
}
