//! `hotbench null-server`: binds (TCP, and a Unix socket with `--socket-dir`), prints
//! `listening on ADDR:PORT`, and serves until killed. A socket file already there is only
//! replaced when it is a stale socket: never a file that is not a socket, never one a
//! server listens on or whose PostgreSQL lock file names a live process.

use std::io::Write;
use std::net::TcpListener;
use std::os::unix::fs::FileTypeExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::Path;

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
            clear_stale_socket(&path)?;
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
        threads: usize::from(args.threads),
    };
    let listeners = hotbench_nullserver::Listeners { tcp, unix };
    hotbench_nullserver::serve(listeners, opts)
        .map_err(|e| Fail::run(format!("null server: {e}")))?;
    Ok(0)
}

/// Removes `path` only when it is a socket nobody serves: one a connection is refused on,
/// whose `.lock` file (PostgreSQL's) names no live process. Anything else is refused.
fn clear_stale_socket(path: &Path) -> Result<()> {
    let shown = path.display();
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(Fail::input(format!("cannot inspect \"{shown}\": {e}"))),
    };
    if !meta.file_type().is_socket() {
        return Err(Fail::input(format!(
            "\"{shown}\" exists and is not a socket; it is left alone: choose another --socket-dir or --port"
        )));
    }
    let in_use = |why: String| {
        Fail::input(format!(
            "\"{shown}\" belongs to a running server ({why}); it is left alone: choose another --socket-dir or --port"
        ))
    };
    match UnixStream::connect(path) {
        Ok(_) => return Err(in_use("it accepts connections".into())),
        Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => {}
        Err(e) => return Err(in_use(format!("connecting to it: {e}"))),
    }
    let lock = format!("{}.lock", path.display());
    if let Some(pid) = std::fs::read_to_string(&lock)
        .ok()
        .and_then(|t| t.lines().next()?.trim().parse::<u32>().ok())
    {
        if pid > 0 && Path::new(&format!("/proc/{pid}")).exists() {
            return Err(in_use(format!("{lock} names pid {pid}, which runs")));
        }
    }
    std::fs::remove_file(path)
        .map_err(|e| Fail::input(format!("cannot remove the stale socket \"{shown}\": {e}")))
}
