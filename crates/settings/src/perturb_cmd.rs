//! `--perturb-cmd 'KIND=SHELL COMMAND'`: the user's own command for a perturbation that acts on
//! the server's processes (`restart`, `pause`), for a server hotbench did not start (a Patroni
//! switchover, `pg_ctl restart`, a cloud CLI). Parsed here once; the engine's perturbation
//! driver runs it with `sh -c` (docs/perturbations.md). The record keeps none of it: a command
//! line may carry a token, as a URL may carry a password (`--pooler-admin`).

/// The kinds a command can stand for: the ones hotbench does to a server it started by
/// signalling its processes. The other kinds are SQL hotbench runs itself.
pub const COMMAND_KINDS: &[&str] = &["restart", "pause"];

/// One `--perturb-cmd`: the kind it stands for and the shell command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PerturbCmd {
    pub kind: String,
    pub command: String,
}

impl PerturbCmd {
    /// `KIND=SHELL COMMAND`.
    pub fn parse(text: &str) -> Result<PerturbCmd, String> {
        let bad = |why: &str| format!("invalid --perturb-cmd: {why}");
        let (kind, command) = text.split_once('=').ok_or_else(|| {
            bad("expected KIND=SHELL COMMAND, e.g. 'restart=pg_ctl -D /data restart -m fast'")
        })?;
        let kind = kind.trim();
        if !COMMAND_KINDS.contains(&kind) {
            let shown: String = kind.chars().filter(|c| !c.is_control()).take(40).collect();
            return Err(bad(&format!(
                "a command stands for restart or pause (got \"{shown}\"); the other kinds are SQL hotbench runs itself"
            )));
        }
        if command.trim().is_empty() {
            return Err(bad(&format!("{kind}= needs a command")));
        }
        if command.contains('\0') {
            return Err(bad("the command holds a NUL byte"));
        }
        Ok(PerturbCmd {
            kind: kind.to_string(),
            command: command.to_string(),
        })
    }
}

/// The command given for `kind`, the last one when it was given more than once.
pub fn command_for<'a>(cmds: &'a [PerturbCmd], kind: &str) -> Option<&'a str> {
    cmds.iter()
        .rev()
        .find(|c| c.kind == kind)
        .map(|c| c.command.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_stands_for_restart_or_pause() {
        let c = PerturbCmd::parse("restart=patronictl switchover --force --candidate b=1").unwrap();
        assert_eq!(c.kind, "restart");
        assert_eq!(c.command, "patronictl switchover --force --candidate b=1");
        let cmds = [
            c,
            PerturbCmd::parse(" pause =docker pause pg; sleep 1").unwrap(),
            PerturbCmd::parse("restart=pg_ctl restart").unwrap(),
        ];
        assert_eq!(command_for(&cmds, "restart"), Some("pg_ctl restart"));
        assert_eq!(
            command_for(&cmds, "pause"),
            Some("docker pause pg; sleep 1")
        );
        assert_eq!(command_for(&cmds, "checkpoint"), None);
        for (text, msg) in [
            ("restart", "expected KIND=SHELL COMMAND"),
            (
                "checkpoint=psql -c checkpoint",
                "stands for restart or pause (got \"checkpoint\")",
            ),
            ("restart=  ", "restart= needs a command"),
            ("pause=a\0b", "NUL byte"),
        ] {
            let e = PerturbCmd::parse(text).unwrap_err();
            assert!(
                e.starts_with("invalid --perturb-cmd: ") && e.contains(msg),
                "{text}: {e}"
            );
        }
    }
}
