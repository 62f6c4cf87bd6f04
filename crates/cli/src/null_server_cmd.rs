//! `hotbench null-server`: binds, prints `listening on ADDR:PORT`, and serves until killed.

use std::io::Write;
use std::net::TcpListener;

use crate::fail::{Fail, Result};
use crate::flags::null_server::NullServerArgs;

pub fn main(args: &NullServerArgs) -> Result<u8> {
    let listener = TcpListener::bind((args.host.as_str(), args.port)).map_err(|e| {
        Fail::input(format!(
            "could not listen on \"{}\" port {}: {e}",
            args.host, args.port
        ))
    })?;
    let addr = listener
        .local_addr()
        .map_err(|e| Fail::run(e.to_string()))?;
    println!("listening on {addr}");
    let _ = std::io::stdout().flush();
    let opts = hotbench_nullserver::Options {
        busy_poll: args.busy_poll,
    };
    hotbench_nullserver::serve(listener, opts)
        .map_err(|e| Fail::run(format!("null server: {e}")))?;
    Ok(0)
}
