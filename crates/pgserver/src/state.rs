//! The default server's state file (`hotbench.state` next to its data directory): who started
//! the postmaster and how to reach it, so the next command can reuse it, or detect and clean an
//! orphan left by a killed `hotbench`. A plain `key=value` file, written atomically.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// Recorded facts about a running default server.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct State {
    /// Postmaster pid.
    pub pid: u32,
    /// Pid of the `hotbench` command that started it for itself; 0 when started by
    /// `hotbench server start` (kept running).
    pub owner: u32,
    /// Pid of the owner's guardian (0 if none).
    pub guardian: u32,
    /// TCP port.
    pub port: u16,
    /// Unix socket directory.
    pub socket_dir: PathBuf,
    /// Binaries used.
    pub bin_dir: PathBuf,
    /// Full server version.
    pub version: String,
    /// Durability off?
    pub fast: bool,
}

impl State {
    /// Serialise.
    pub fn render(&self) -> String {
        format!(
            "pid={}\nowner={}\nguardian={}\nport={}\nsocket_dir={}\nbin_dir={}\nversion={}\nfast={}\n",
            self.pid,
            self.owner,
            self.guardian,
            self.port,
            self.socket_dir.display(),
            self.bin_dir.display(),
            self.version,
            u8::from(self.fast)
        )
    }

    /// Parse; `None` when malformed (treated as stale).
    pub fn parse(text: &str) -> Option<State> {
        let mut s = State::default();
        for line in text.lines() {
            let Some((k, v)) = line.split_once('=') else {
                continue;
            };
            match k {
                "pid" => s.pid = v.parse().ok()?,
                "owner" => s.owner = v.parse().ok()?,
                "guardian" => s.guardian = v.parse().ok()?,
                "port" => s.port = v.parse().ok()?,
                "socket_dir" => s.socket_dir = v.into(),
                "bin_dir" => s.bin_dir = v.into(),
                "version" => s.version = v.into(),
                "fast" => s.fast = v == "1",
                _ => {}
            }
        }
        (s.pid != 0 && s.port != 0).then_some(s)
    }

    /// Read from `path` (None if absent or malformed).
    pub fn load(path: &Path) -> Option<State> {
        State::parse(&std::fs::read_to_string(path).ok()?)
    }

    /// Write to `path` atomically.
    pub fn save(&self, path: &Path) -> Result<()> {
        let tmp = path.with_extension("tmp");
        std::fs::write(&tmp, self.render())
            .map_err(|e| Error::io("cannot write state file", &tmp, e))?;
        std::fs::rename(&tmp, path).map_err(|e| Error::io("cannot write state file", path, e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        let s = State {
            pid: 10,
            owner: 0,
            guardian: 0,
            port: 5000,
            socket_dir: "/tmp/x".into(),
            bin_dir: "/b".into(),
            version: "15.2".into(),
            fast: true,
        };
        assert_eq!(State::parse(&s.render()), Some(s));
        assert_eq!(State::parse("pid=x\n"), None);
        assert_eq!(State::parse(""), None);
    }
}
