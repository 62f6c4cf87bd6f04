//! `hotbench null-server`: binds (TCP, and a Unix socket with `--socket-dir`), prints
//! `listening on ADDR:PORT`, and serves until killed.

use std::io::Write;
use std::net::TcpListener;
use std::os::unix::net::UnixListener;

use crate::fail::{Fail, Result};
use crate::flags::null_server::NullServerArgs;

pub fn main(args: &NullServerArgs) -> Result<u8> {
    let tcp = TcpListener::bind((args.host.as_str(), args.port)).map_err(|e| {
        Fail::input(format!(
            "could not listen on \"{}\" port {}: {e}",
            args.host, args.port
        ))
    })?;
    let addr = tcp.local_addr().map_err(|e| Fail::run(e.to_string()))?;
    let unix = match &args.socket_dir {
        Some(dir) => {
            let path = dir.join(format!(".s.PGSQL.{}", addr.port()));
            let _ = std::fs::remove_file(&path);
            let l = UnixListener::bind(&path).map_err(|e| {
                Fail::input(format!("could not listen on \"{}\": {e}", path.display()))
            })?;
            Some(l)
        }
        None => None,
    };
    println!("listening on {addr}");
    let _ = std::io::stdout().flush();
    let opts = hotbench_nullserver::Options {
        busy_poll: args.busy_poll,
        threads: args.threads,
    };
    let listeners = hotbench_nullserver::Listeners { tcp, unix };
    hotbench_nullserver::serve(listeners, opts)
        .map_err(|e| Fail::run(format!("null server: {e}")))?;
    Ok(0)
}
