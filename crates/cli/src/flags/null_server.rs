//! `hotbench null-server` (hidden): the canned-reply PostgreSQL responder that
//! `bench/client-bound` runs so the client, not the server, is the bottleneck.

use clap::Args;

#[derive(Debug, Clone, Args)]
pub struct NullServerArgs {
    /// Address to listen on
    #[arg(long, default_value = "127.0.0.1", value_name = "ADDR")]
    pub host: String,
    /// TCP port (0: a free one; the address is printed on the first line)
    #[arg(long, default_value_t = 0, value_name = "PORT")]
    pub port: u16,
    /// Also listen on a Unix socket in this directory (DIR/.s.PGSQL.PORT), as PostgreSQL
    #[arg(long, value_name = "DIR")]
    pub socket_dir: Option<std::path::PathBuf>,
    /// Event loops (threads), e.g. one per core the server is pinned to (1 to 1024)
    #[arg(long, default_value_t = 1, value_name = "N",
          value_parser = parse_threads)]
    pub threads: u16,
    /// Never sleep in epoll_wait (the server owns a core): clients' sends never wake it
    #[arg(long)]
    pub busy_poll: bool,
}

/// `--threads`: 1 to 1024 event loops (each a thread: beyond that a machine cannot start
/// them, and more loops than cores only contend).
fn parse_threads(s: &str) -> Result<u16, String> {
    match s.trim().parse::<u16>() {
        Ok(n) if (1..=1024).contains(&n) => Ok(n),
        _ => Err(format!(
            "invalid --threads \"{s}\": the null server runs 1 to 1024 event loop threads"
        )),
    }
}
