//! Free loopback TCP ports and "is this port taken?" checks.

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
