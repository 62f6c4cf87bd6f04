//! `\shell` and `\setshell`: the only meta-commands with side effects outside
//! the client. Commands run through `sh -c`, like C's `system()`/`popen()`.

use crate::vars::Variables;
use std::process::{Command, Stdio};

const SHELL_COMMAND_SIZE: usize = 256;

/// Joins the words (`:var` substituted, `::x` → `:x`) as pgbench does.
fn build(vars: &Variables, words: &[String]) -> Result<String, String> {
    let first = words.first().map(String::as_str).unwrap_or("");
    let mut cmd = String::new();
    for (i, w) in words.iter().enumerate() {
        let arg = if let Some(rest) = w.strip_prefix("::") {
            format!(":{rest}")
        } else if let Some(name) = w.strip_prefix(':') {
            match vars.text(name) {
                Some(v) => v,
                None => return Err(format!("{first}: undefined variable \"{w}\"")),
            }
        } else {
            w.clone()
        };
        if cmd.len() + arg.len() + usize::from(i > 0) >= SHELL_COMMAND_SIZE - 1 {
            return Err(format!("{first}: shell command is too long"));
        }
        if i > 0 {
            cmd.push(' ');
        }
        cmd.push_str(&arg);
    }
    Ok(cmd)
}

/// Runs `\shell` words; Err carries pgbench's message.
pub(crate) fn run_shell(vars: &Variables, words: &[String]) -> Result<(), String> {
    let first = words.first().cloned().unwrap_or_default();
    let cmd = build(vars, words)?;
    match Command::new("sh").arg("-c").arg(&cmd).status() {
        Ok(s) if s.success() => Ok(()),
        _ => Err(format!("{first}: could not launch shell command")),
    }
}

/// Runs `\setshell` words and returns the integer printed on the first line.
pub(crate) fn run_setshell(vars: &Variables, words: &[String]) -> Result<i64, String> {
    let first = words.first().cloned().unwrap_or_default();
    let cmd = build(vars, words)?;
    let out = Command::new("sh")
        .arg("-c")
        .arg(&cmd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .output()
        .map_err(|_| format!("{first}: could not launch shell command"))?;
    // fgets(res, 64): first line, at most 63 bytes, newline kept.
    let line: Vec<u8> = {
        let mut v = Vec::new();
        for &b in out.stdout.iter().take(63) {
            v.push(b);
            if b == b'\n' {
                break;
            }
        }
        v
    };
    if line.is_empty() {
        return Err(format!("{first}: could not read result of shell command"));
    }
    let res = String::from_utf8_lossy(&line).into_owned();
    // strtol, then only trailing blanks allowed.
    let t = res.trim_start_matches(|c: char| c.is_ascii_whitespace());
    let (neg, rest) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let nd = rest.bytes().take_while(u8::is_ascii_digit).count();
    let tail = &rest[nd..];
    if nd == 0 || !tail.bytes().all(|b| b.is_ascii_whitespace()) {
        return Err(format!(
            "{first}: shell command must return an integer (not \"{res}\")"
        ));
    }
    let v: i64 = rest[..nd].parse::<i64>().unwrap_or(i64::MAX);
    let v = if neg { v.wrapping_neg() } else { v };
    // pgbench stores (int) strtol(...).
    Ok(i64::from(v as i32))
}
