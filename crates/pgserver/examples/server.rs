//! How the CLI drives this crate: a tiny stand-in for `hotbench server …` and for a command
//! that needs the default server. Try:
//! `cargo run -p hotbench-pgserver --example server -- start|url|status|stop|reset|use|hold [--pg-version N] [--dir D] [--fast]`.

use std::path::PathBuf;
use std::process::ExitCode;

use hotbench_pgserver::default_server::{
    ensure_default_server, server_reset, server_start, server_status, server_stop, server_url,
    DefaultOptions,
};

fn parse(args: &[String]) -> Result<(String, DefaultOptions), String> {
    let mut opts = DefaultOptions::default();
    let mut cmd = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--pg-version" => {
                let v = it.next().ok_or("--pg-version needs a number")?;
                opts.bins.pg_version =
                    Some(v.parse().map_err(|_| format!("bad --pg-version {v:?}"))?);
            }
            "--pg-bin" => {
                opts.bins.pg_bin = Some(PathBuf::from(
                    it.next().ok_or("--pg-bin needs a directory")?,
                ))
            }
            "--dir" => opts.dir = Some(PathBuf::from(it.next().ok_or("--dir needs a directory")?)),
            "--fast" => opts.fast = true,
            c if cmd.is_none() && !c.starts_with('-') => cmd = Some(c.to_string()),
            other => return Err(format!("unexpected argument {other:?}")),
        }
    }
    Ok((cmd.unwrap_or_else(|| "status".into()), opts))
}

fn run(cmd: &str, opts: &DefaultOptions) -> Result<(), hotbench_pgserver::Error> {
    match cmd {
        "start" => {
            let st = server_start(opts)?;
            if let Some(r) = st.running {
                println!("{}", r.conn.display_url());
            }
        }
        "url" => println!("{}", server_url(opts)?),
        "status" => println!("{}", server_status(opts)?),
        "stop" => {
            if !server_stop(opts)? {
                println!("not running");
            }
        }
        "reset" => server_reset(opts)?,
        "use" => {
            // What `hotbench run` does when given no database.
            let guard = ensure_default_server(opts)?;
            println!(
                "using {} (started here: {}, fast: {})",
                guard.url(),
                guard.started_here(),
                guard.is_fast()
            );
            drop(guard);
        }
        "hold" => {
            // A long "run": holds the default server for 60 s (try kill -9 on it).
            let guard = ensure_default_server(opts)?;
            println!("holding {} (pid {})", guard.url(), std::process::id());
            std::thread::sleep(std::time::Duration::from_secs(60));
            drop(guard);
        }
        other => {
            return Err(hotbench_pgserver::Error::Invalid(format!(
                "unknown command {other:?} (start, url, status, stop, reset, use, hold)"
            )))
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (cmd, opts) = match parse(&args) {
        Ok(x) => x,
        Err(e) => {
            eprintln!("hotbench: {e}");
            return ExitCode::from(1);
        }
    };
    match run(&cmd, &opts) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("hotbench: {e}");
            ExitCode::from(1)
        }
    }
}
