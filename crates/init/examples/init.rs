//! Manual check and timing: `cargo run --release -p hotbench-init --example init --
//! CONNINFO [SCALE [STEPS]]` runs initialization like `pgbench -i -s SCALE -I STEPS`.

use hotbench_init::{run_init, InitOptions};

fn main() {
    let mut args = std::env::args().skip(1);
    let conninfo = args.next().unwrap_or_default();
    let scale = args.next().and_then(|s| s.parse().ok()).unwrap_or(1);
    let steps = args
        .next()
        .unwrap_or_else(|| hotbench_init::DEFAULT_INIT_STEPS.to_string());
    let mut conn = match hotbench_wire::Connection::connect_str(&conninfo) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("hotbench: error: {e}");
            std::process::exit(1);
        }
    };
    let opts = InitOptions {
        scale,
        steps,
        ..InitOptions::default()
    };
    if let Err(e) = run_init(&mut conn, &opts, &mut std::io::stderr()) {
        eprintln!("hotbench: error: {e}");
        if let Some(d) = e.detail() {
            eprintln!("hotbench: detail: {d}");
        }
        if let Some(h) = e.hint() {
            eprintln!("hotbench: hint: {h}");
        }
        std::process::exit(e.exit_code());
    }
}
