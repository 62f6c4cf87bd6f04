//! Several processes make one run: three `hotbench run --shard I/3 --start-at T` against one
//! server equal one process with all the clients — the same client ids, the same random
//! draws per client, the same transaction counts — and `merge` combines them exactly, rates
//! included, and notes clock skew between the shards' machines.

mod common;

use common::*;

fn unix_now_s() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// `(client_id, draw)` rows of `table`, sorted.
fn draws(db: &hotbench_pgserver::ConnInfo, table: &str) -> Vec<String> {
    let out = psql(
        db,
        &format!("select c || ':' || r from {table} order by c, r"),
    );
    out.lines().map(str::to_string).collect()
}

/// Runs `count` shards of one run (`--shard I/count`, a common `--start-at` a few seconds
/// ahead, each with `--json DIR/TAG-I.json`) at the same time; returns their result files
/// and outputs, after checking each succeeded.
fn run_shards(
    db: &hotbench_pgserver::ConnInfo,
    dir: &std::path::Path,
    tag: &str,
    count: usize,
    args: &[&str],
) -> (Vec<std::path::PathBuf>, Vec<std::process::Output>) {
    let start = format!("@{}", unix_now_s() + 4);
    let jsons: Vec<_> = (0..count)
        .map(|i| dir.join(format!("{tag}-{i}.json")))
        .collect();
    let children: Vec<_> = jsons
        .iter()
        .enumerate()
        .map(|(i, json)| {
            let shard = format!("{i}/{count}");
            let mut all: Vec<&str> = args.to_vec();
            all.extend([
                "--shard",
                &shard,
                "--start-at",
                &start,
                "--json",
                json.to_str().unwrap(),
            ]);
            spawn_run(db, &all)
        })
        .collect();
    let outputs: Vec<_> = children
        .into_iter()
        .map(|c| {
            let o = c.wait_with_output().unwrap();
            assert!(o.status.success(), "{:?}", text(&o));
            // Issue 29: the wait for --start-at is announced, with its length.
            let (_, err) = text(&o);
            assert!(
                err.contains("waiting until") && err.contains(" s) to start"),
                "{err}"
            );
            o
        })
        .collect();
    (jsons, outputs)
}

/// `hotbench merge FILES -o OUT`.
fn merge(files: &[&std::path::Path], out: &std::path::Path) -> std::process::Output {
    hotbench()
        .arg("merge")
        .args(files.iter().map(|p| p.to_str().unwrap()))
        .args(["-o", out.to_str().unwrap()])
        .output()
        .unwrap()
}

#[test]
fn three_shards_equal_one_process_and_merge_exactly() {
    let db = database("shards");
    psql(
        &db,
        "create table one(c int, r bigint); create table sharded(c int, r bigint);",
    );
    let dir = temp_dir("shards");
    let script = |table: &str| {
        write_script(
            &dir,
            &format!("{table}.sql"),
            &format!(
                "\\set r random(1, 1000000000)\ninsert into {table} values (:client_id, :r);\n"
            ),
        )
    };
    let (one, sharded) = (script("one"), script("sharded"));
    // The same workload, in one process and in three shards.
    fn workload(file: &str) -> [&str; 9] {
        [
            "-n",
            "-c",
            "6",
            "-t",
            "5",
            "--random-seed",
            "42",
            "-f",
            file,
        ]
    }
    let o = run(&db, &workload(one.to_str().unwrap()));
    assert!(o.status.success(), "{:?}", text(&o));

    let (jsons, outputs) = run_shards(&db, &dir, "shard", 3, &workload(sharded.to_str().unwrap()));
    for o in &outputs {
        let (out, _) = text(o);
        assert_eq!(
            line_value(&out, "number of transactions actually processed:"),
            Some("10/10"),
            "{out}"
        );
    }
    // Same client ids, same draws per client, same counts as one process.
    let expected = draws(&db, "one");
    assert_eq!(expected.len(), 30);
    assert_eq!(draws(&db, "sharded"), expected);

    // The shards started together and merge into one run of 6 clients.
    let starts: Vec<f64> = jsons.iter().map(|p| record(p).started_at).collect();
    let spread = starts.iter().cloned().fold(f64::MIN, f64::max)
        - starts.iter().cloned().fold(f64::MAX, f64::min);
    assert!(
        spread < 1.0,
        "shards started {spread:.3} s apart: {starts:?}"
    );
    let merged = dir.join("merged.json");
    let files: Vec<&std::path::Path> = jsons.iter().map(|p| p.as_path()).collect();
    let o = merge(&files, &merged);
    assert!(o.status.success(), "{:?}", text(&o));
    let m = record(&merged);
    assert_eq!(m.totals.counters.cnt, 30);
    assert_eq!(m.bench.clients, 6);
    // Issue 35, item 2: the run's description and pgbench's header agree (config.clients
    // kept the first shard's 2 before).
    assert_eq!((m.config.clients, m.config.threads), (6, 3));
    assert_eq!(m.config.groups[0].clients, 6);
    assert_eq!(m.bench.threads, 3);
    let shards = m.config.shards.expect("config.shards");
    assert_eq!(shards.parts.len(), 3);
    assert!(shards.missing.is_empty(), "{shards:?}");
    assert!(m.config.shard.is_none());

    // A shard of another run (other seed) is refused.
    let stranger = dir.join("stranger.json");
    let o = run(
        &db,
        &[
            "-n",
            "-c",
            "6",
            "-t",
            "5",
            "--random-seed",
            "7",
            "--shard",
            "1/3",
            "-f",
            sharded.to_str().unwrap(),
            "--json",
            stranger.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{:?}", text(&o));
    let o = merge(&[&jsons[0], &stranger], &dir.join("bad.json"));
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("another run"), "{err}");
}

#[test]
fn sharded_time_runs_merge_to_the_sum_of_their_rates() {
    let db = database("shards_tps");
    let dir = temp_dir("shards_tps");
    let script = write_script(&dir, "sel.sql", "select 1;\n");
    let (jsons, _) = run_shards(
        &db,
        &dir,
        "s",
        2,
        &["-n", "-c", "4", "-T", "2", "-f", script.to_str().unwrap()],
    );
    let merged = dir.join("merged.json");
    let files: Vec<&std::path::Path> = jsons.iter().map(|p| p.as_path()).collect();
    let o = merge(&files, &merged);
    assert!(o.status.success(), "{:?}", text(&o));
    // The shards ran over the same two seconds, so the merged rate is the sum of theirs: not
    // a sum over separate durations, nor one shard's share. (Comparing with a separate
    // one-process run is a benchmark, not a test: two shared cores swing far more than a
    // merge error between runs.)
    let tps = |p: &std::path::Path| record(p).totals.tps;
    let sum: f64 = jsons.iter().map(|p| tps(p)).sum();
    let both = tps(&merged);
    assert!(
        (both / sum - 1.0).abs() < 0.2,
        "merged {both:.0} tps vs the shards' sum {sum:.0} tps"
    );
    let m = record(&merged);
    assert_eq!(m.bench.clients, 4);
    let cnt: u64 = jsons.iter().map(|p| record(p).totals.counters.cnt).sum();
    assert_eq!(m.totals.counters.cnt, cnt);
    clock_skew_is_noted(&dir, &jsons);
}

/// Issue 36, row 15: each shard measured its clock against the server's (one machine
/// here: about 0); a shard whose machine's clock is 8 s ahead (its record as that machine
/// writes it: the agreed start, an offset of +8 s) makes `merge` warn and note the skew,
/// and its timeline is put 8 s earlier instead of being summed with the other's.
fn clock_skew_is_noted(dir: &std::path::Path, jsons: &[std::path::PathBuf]) {
    for p in jsons {
        let off = record(p).server.clock_offset_ms.expect("clock_offset_ms");
        assert!(off.abs() < 1000.0, "one machine, one clock: {off} ms");
    }
    let mut ahead = record(&jsons[1]);
    ahead.server.clock_offset_ms = ahead.server.clock_offset_ms.map(|o| o + 8000.0);
    let skewed = dir.join("ahead.json");
    std::fs::write(&skewed, serde_json::to_vec(&ahead).unwrap()).unwrap();
    let out = dir.join("skewed-merge.json");
    let o = merge(&[&jsons[0], &skewed], &out);
    let (_, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("warning: clock skew: "), "{err}");
    assert!(err.contains("ahead.json +8.0"), "{err}");
    let m = record(&out);
    assert!(
        m.notes.iter().any(|n| n.starts_with("clock skew: ")),
        "{:?}",
        m.notes
    );
    let synced = record(&dir.join("merged.json")).timeline.len();
    assert!(
        m.timeline.len() == 2 * synced,
        "8 s apart the timelines do not overlap: {} vs {synced} intervals",
        m.timeline.len()
    );
}
