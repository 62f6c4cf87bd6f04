//! `hotbench server start|stop|status|url|reset`, over `hotbench_pgserver::default_server`.

use hotbench_pgserver::default_server::{
    server_reset, server_start, server_status, server_stop, server_url,
};
use hotbench_pgserver::DefaultOptions;

use crate::fail::{Fail, Result};
use crate::flags::server::{ServerAction, ServerArgs, ServerOpts};

fn options(o: &ServerOpts) -> DefaultOptions {
    DefaultOptions {
        bins: o.embedded.bin_options(),
        dir: o.dir.clone(),
        ..DefaultOptions::default()
    }
}

fn fail(e: hotbench_pgserver::Error) -> Fail {
    Fail::input(e.to_string())
}

/// `--dir` must be a directory or not exist yet (it is created): a file there is named as
/// such, not blamed on permissions later.
fn check_dir(o: &ServerOpts) -> Result<()> {
    match &o.dir {
        Some(d) if d.exists() && !d.is_dir() => Err(Fail::input(format!(
            "--dir \"{}\" is not a directory",
            d.display()
        ))),
        _ => Ok(()),
    }
}

pub fn main(args: &ServerArgs) -> Result<u8> {
    let (ServerAction::Start { opts, .. }
    | ServerAction::Stop { opts, .. }
    | ServerAction::Status { opts }
    | ServerAction::Url { opts }
    | ServerAction::Reset { opts, .. }) = &args.action;
    check_dir(opts)?;
    match &args.action {
        ServerAction::Start { opts, fast, port } => {
            let mut o = options(opts);
            o.fast = *fast;
            o.port = *port;
            let status = server_start(&o).map_err(fail)?;
            match &status.running {
                Some(r) => println!("{}", r.conn.display_url()),
                None => println!("{}", status.to_string().trim_end()),
            }
        }
        ServerAction::Stop { opts, force } => {
            let o = DefaultOptions {
                force: *force,
                ..options(opts)
            };
            if server_stop(&o).map_err(fail)? {
                println!("stopped");
            } else {
                println!("not running");
            }
        }
        ServerAction::Status { opts } => {
            let status = server_status(&options(opts)).map_err(fail)?;
            println!("{}", status.to_string().trim_end());
        }
        ServerAction::Url { opts } => {
            println!("{}", server_url(&options(opts)).map_err(fail)?);
        }
        ServerAction::Reset { opts, force } => {
            let o = DefaultOptions {
                force: *force,
                ..options(opts)
            };
            server_reset(&o).map_err(fail)?;
            println!("reset: the default server's data directory was removed");
        }
    }
    Ok(0)
}
