//! Free loopback TCP ports, "is this port taken?" checks, and who listens on a port (read
//! from `/proc/net/tcp*` and the process's open files: a readiness check must not take
//! whatever answers on the port for the process we started).

use std::net::{Ipv4Addr, SocketAddrV4, TcpListener};

/// A port the kernel just handed out on 127.0.0.1 (free a moment ago; callers retry on a race).
pub fn free_port() -> std::io::Result<u16> {
    let l = TcpListener::bind(SocketAddrV4::new(Ipv4Addr::LOCALHOST, 0))?;
    Ok(l.local_addr()?.port())
}

/// Is `port` on 127.0.0.1 taken (something listening or bound)?
pub fn in_use(port: u16) -> bool {
    TcpListener::bind(SocketAddrV4::new(Ipv4Addr::LOCALHOST, port)).is_err()
}

/// Does something accept TCP connections on 127.0.0.1:`port`?
pub fn accepts(port: u16) -> bool {
    let addr = std::net::SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    std::net::TcpStream::connect_timeout(&addr, std::time::Duration::from_millis(100)).is_ok()
}

/// Who listens on a TCP port, as far as process `pid` is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Listener {
    /// Nothing listens on it (yet).
    Nobody,
    /// `pid` holds the listening socket.
    Ours,
    /// Another process does.
    Foreign,
}

/// Inodes of the sockets listening on `port` (any address, IPv4 and IPv6), from a
/// `/proc/net/tcp`-format table.
fn listening_inodes(table: &str, port: u16, out: &mut Vec<u64>) {
    const LISTEN: &str = "0A";
    let want = format!(":{port:04X}");
    for line in table.lines().skip(1) {
        let f: Vec<&str> = line.split_whitespace().collect();
        let (Some(local), Some(state), Some(inode)) = (f.get(1), f.get(3), f.get(9)) else {
            continue;
        };
        if local.ends_with(&want) && *state == LISTEN {
            if let Ok(i) = inode.parse::<u64>() {
                out.push(i);
            }
        }
    }
}

/// Does process `pid` hold the socket(s) listening on `port`, another process, or nobody?
/// `None` when `/proc` cannot tell (not mounted, or `pid`'s open files are unreadable).
pub fn listener(pid: u32, port: u16) -> Option<Listener> {
    let mut inodes = Vec::new();
    let mut any_table = false;
    for t in ["/proc/net/tcp", "/proc/net/tcp6"] {
        if let Ok(text) = std::fs::read_to_string(t) {
            any_table = true;
            listening_inodes(&text, port, &mut inodes);
        }
    }
    if !any_table {
        return None;
    }
    if inodes.is_empty() {
        return Some(Listener::Nobody);
    }
    let held: Vec<u64> = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .ok()?
        .flatten()
        .filter_map(|e| std::fs::read_link(e.path()).ok())
        .filter_map(|l| {
            let l = l.to_string_lossy().into_owned();
            l.strip_prefix("socket:[")?.strip_suffix(']')?.parse().ok()
        })
        .collect();
    // Every socket listening there must be its own: another one in a SO_REUSEPORT group
    // would get a share of the connections.
    let ours = inodes.iter().all(|i| held.contains(i));
    Some(if ours {
        Listener::Ours
    } else {
        Listener::Foreign
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_listening_socket_is_told_ours_or_foreign() {
        let l = TcpListener::bind(SocketAddrV4::new(Ipv4Addr::LOCALHOST, 0)).expect("bind");
        let port = l.local_addr().expect("addr").port();
        assert_eq!(listener(std::process::id(), port), Some(Listener::Ours));
        // Our own parent (the test runner's shell or cargo) does not hold it.
        // SAFETY: getppid has no preconditions.
        let parent = unsafe { libc::getppid() } as u32;
        assert_eq!(listener(parent, port), Some(Listener::Foreign));
        drop(l);
        assert_eq!(listener(std::process::id(), port), Some(Listener::Nobody));
        let table = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n   \
            0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000   101        0 4242 1\n   \
            1: 0100007F:1F90 0100007F:A000 01 00000000:00000000 00:00000000 00000000   101        0 4343 1\n";
        let mut v = Vec::new();
        listening_inodes(table, 8080, &mut v);
        assert_eq!(v, vec![4242], "only the LISTEN line");
    }
}
