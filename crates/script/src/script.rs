//! Parsing a whole script into commands: SQL commands (split like psql),
//! meta-commands with their arguments and parsed expressions, `\gset`/`\aset`
//! merged into the preceding SQL command, and `\if` chains checked and
//! resolved into jump targets.

use crate::error::ScriptError;
use crate::expr::Expr;
use crate::exprparse::{end_of_command, parse_expression, ExprError};
use crate::sql::{ResultMode, SqlCommand, MAX_PARAMS};
use crate::sqlscan::{SqlScanner, Stop};
use crate::vars::valid_variable_name;

/// A parsed script. Immutable once parsed: clones (one per run plan and worker thread) share
/// the commands, so a 200,000-line script is held once.
#[derive(Clone, Debug, PartialEq)]
pub struct Script {
    name: String,
    commands: std::sync::Arc<[Command]>,
}

/// One command of a script.
#[derive(Clone, Debug, PartialEq)]
pub struct Command {
    /// 0-based position in the script (pgbench's command number).
    pub index: usize,
    /// 1-based line where the command starts.
    pub line: usize,
    /// The text pgbench shows for this command in `-r` reports and errors: the
    /// first line of a SQL command (at most 127 bytes), or the whole
    /// meta-command from its backslash.
    pub first_line: String,
    /// What the command does.
    pub kind: CommandKind,
}

/// SQL or meta-command.
#[derive(Clone, Debug, PartialEq)]
pub enum CommandKind {
    /// Sent to the server.
    Sql(SqlCommand),
    /// Executed by the client ([`crate::Client::execute`]).
    Meta(MetaCommand),
}

/// A backslash command.
#[derive(Clone, Debug, PartialEq)]
pub struct MetaCommand {
    /// The command word as written (`set`, `SET`, `sleep`, …), used in messages.
    pub name: String,
    /// What it does.
    pub meta: Meta,
}

/// The value of a `\sleep`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SleepAmount {
    /// A literal number (already `atoi`-ed).
    Literal(i32),
    /// `:name`, read when executed.
    Variable(String),
}

/// Meta-commands, with `\if` chains resolved to command indexes.
#[derive(Clone, Debug, PartialEq)]
pub enum Meta {
    /// `\set var expr`.
    Set {
        /// Target variable.
        var: String,
        /// Expression.
        expr: Expr,
    },
    /// `\setshell var command args…`.
    SetShell {
        /// Target variable.
        var: String,
        /// Command words (`:name` words are variables, `::x` is the text `:x`).
        args: Vec<String>,
    },
    /// `\shell command args…`.
    Shell {
        /// Command words.
        args: Vec<String>,
    },
    /// `\sleep n [us|ms|s]`.
    Sleep {
        /// Amount.
        amount: SleepAmount,
        /// Multiplier to microseconds (1, 1000 or 1000000).
        unit_us: i32,
    },
    /// `\if expr`; `next` is the following `\elif`/`\else`/`\endif` of the chain.
    If {
        /// Condition.
        expr: Expr,
        /// Index of the next branch command.
        next: usize,
    },
    /// `\elif expr`.
    Elif {
        /// Condition.
        expr: Expr,
        /// Index of the next branch command.
        next: usize,
        /// Index of the chain's `\endif`.
        end: usize,
    },
    /// `\else`.
    Else {
        /// Index of the chain's `\endif`.
        end: usize,
    },
    /// `\endif`.
    Endif,
    /// `\startpipeline`.
    StartPipeline,
    /// `\syncpipeline` (pgbench 17; accepted as an extension).
    SyncPipeline,
    /// `\endpipeline`.
    EndPipeline,
}

impl Script {
    /// Script name (as given to [`parse_script`]).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// All commands, in order.
    pub fn commands(&self) -> &[Command] {
        &self.commands
    }

    /// Command `i`, if any.
    pub fn command(&self, i: usize) -> Option<&Command> {
        self.commands.get(i)
    }

    /// Number of commands.
    pub fn len(&self) -> usize {
        self.commands.len()
    }

    /// Never true for a successfully parsed script.
    pub fn is_empty(&self) -> bool {
        self.commands.is_empty()
    }

    /// The check pgbench makes for `-M extended`/`prepared` (`parseQuery`):
    /// at most 255 parameters per SQL command.
    pub fn check_extended(&self) -> Result<(), ScriptError> {
        for c in self.commands.iter() {
            if let CommandKind::Sql(sql) = &c.kind {
                if sql.param_count() > MAX_PARAMS {
                    let mut e = ScriptError::new(
                        &self.name,
                        c.line,
                        format!("statement has too many arguments (maximum is {MAX_PARAMS})"),
                    );
                    e.text = Some(sql.text().to_string());
                    return Err(e);
                }
            }
        }
        Ok(())
    }
}

fn is_word_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | 0x0b | 0x0c)
}

/// One word of a meta-command: (start, end, next position); None at the end
/// of the command (the newline is consumed).
fn lex_word(src: &[u8], mut pos: usize) -> (Option<(usize, usize)>, usize) {
    loop {
        match src.get(pos) {
            Some(&b) if is_word_space(b) => pos += 1,
            Some(b'\\') if src.get(pos + 1) == Some(&b'\n') => pos += 2,
            Some(b'\n') => return (None, pos + 1),
            None => return (None, pos),
            Some(_) => break,
        }
    }
    let start = pos;
    while pos < src.len() && !is_word_space(src[pos]) && src[pos] != b'\n' {
        pos += 1;
    }
    let mut end = pos;
    if src.get(pos) == Some(&b'\n') && end > start && src[end - 1] == b'\\' {
        // "word\<newline>": the continuation is not part of the word.
        end -= 1;
        pos += 1;
    }
    (Some((start, end)), pos)
}

fn chomp(s: &str) -> &str {
    s.trim_end_matches(['\n', '\r'])
}

fn text_of(src: &[u8], a: usize, b: usize) -> String {
    String::from_utf8_lossy(&src[a.min(src.len())..b.min(src.len())]).into_owned()
}

/// `atoi` of a literal sleep time (glibc: `(int) strtol`).
fn atoi(s: &str) -> i32 {
    let t = s.trim_start_matches(|c: char| c.is_ascii_whitespace());
    let (neg, rest) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let digits: &str = &rest[..rest.bytes().take_while(u8::is_ascii_digit).count()];
    let v: i64 = if digits.is_empty() {
        0
    } else {
        match digits.parse::<i64>() {
            Ok(v) => {
                if neg {
                    -v
                } else {
                    v
                }
            }
            Err(_) => {
                if neg {
                    i64::MIN
                } else {
                    i64::MAX
                }
            }
        }
    };
    v as i32
}

enum Parsed {
    Meta(Command),
    Gset(ResultMode),
    Nothing,
}

struct Ctx<'a> {
    name: &'a str,
    src: &'a [u8],
}

impl Ctx<'_> {
    fn err(&self, line: usize, msg: &str) -> ScriptError {
        ScriptError::new(self.name, line, msg)
    }

    fn expr_err(&self, line: usize, start: usize, cmd: &str, e: ExprError) -> ScriptError {
        let end = end_of_command(self.src, e.pos.max(start));
        let mut err = self.err(line, &e.message);
        err.detail = e.more;
        err.command = Some(cmd.to_string());
        err.text = Some(chomp(&text_of(self.src, start, end)).to_string());
        err.column = Some(e.pos.saturating_sub(start));
        err
    }

    /// Parses the meta-command whose backslash is at `start`; returns it and
    /// the offset after it.
    fn backslash(&self, start: usize, line: usize) -> Result<(Parsed, usize), ScriptError> {
        let src = self.src;
        let (first, mut pos) = lex_word(src, start + 1);
        let Some((ws, we)) = first else {
            return Ok((Parsed::Nothing, pos));
        };
        let name = text_of(src, ws, we);
        let lower = name.to_ascii_lowercase();
        let mk = |meta: Meta, first_line: String| {
            Parsed::Meta(Command {
                index: 0,
                line,
                first_line,
                kind: CommandKind::Meta(MetaCommand {
                    name: name.clone(),
                    meta,
                }),
            })
        };
        if matches!(lower.as_str(), "set" | "if" | "elif") {
            let mut var = String::new();
            if lower == "set" {
                let (w, p) = lex_word(src, pos);
                let Some((vs, ve)) = w else {
                    let mut e = self.err(line, "missing argument");
                    e.command = Some(name.clone());
                    return Err(e);
                };
                var = text_of(src, vs, ve);
                pos = p;
            }
            let (expr, end) =
                parse_expression(src, pos).map_err(|e| self.expr_err(line, start, &name, e))?;
            let first_line = chomp(&text_of(src, start, end)).to_string();
            let meta = match lower.as_str() {
                "set" => Meta::Set { var, expr },
                "if" => Meta::If { expr, next: 0 },
                _ => Meta::Elif {
                    expr,
                    next: 0,
                    end: 0,
                },
            };
            return Ok((mk(meta, first_line), end));
        }
        let mut args: Vec<(String, usize)> = Vec::new();
        loop {
            let (w, p) = lex_word(src, pos);
            pos = p;
            let Some((a, b)) = w else { break };
            args.push((text_of(src, a, b), a));
        }
        let first_line = chomp(&text_of(src, start, pos)).to_string();
        let fail = |msg: &str, detail: Option<String>, column: Option<usize>| {
            let mut e = self.err(line, msg);
            e.command = Some(name.clone());
            e.text = Some(first_line.clone());
            e.detail = detail;
            e.column = column;
            e
        };
        if args.len() + 1 > 255 {
            return Err(fail("too many arguments", None, None));
        }
        let words = || args.iter().map(|(w, _)| w.clone()).collect::<Vec<_>>();
        let meta = match lower.as_str() {
            "sleep" => sleep(&args, start, &fail)?,
            "setshell" => {
                if args.len() < 2 {
                    return Err(fail("missing argument", None, None));
                }
                let mut w = words();
                let var = w.remove(0);
                Meta::SetShell { var, args: w }
            }
            "shell" => {
                if args.is_empty() {
                    return Err(fail("missing command", None, None));
                }
                Meta::Shell { args: words() }
            }
            "else" | "endif" | "startpipeline" | "syncpipeline" | "endpipeline" => {
                if !args.is_empty() {
                    return Err(fail("unexpected argument", None, None));
                }
                match lower.as_str() {
                    "else" => Meta::Else { end: 0 },
                    "endif" => Meta::Endif,
                    "startpipeline" => Meta::StartPipeline,
                    "syncpipeline" => Meta::SyncPipeline,
                    _ => Meta::EndPipeline,
                }
            }
            "gset" | "aset" => {
                if args.len() > 1 {
                    return Err(fail("too many arguments", None, None));
                }
                let prefix = args.first().map(|(w, _)| w.clone()).unwrap_or_default();
                let mode = if lower == "gset" {
                    ResultMode::Gset(prefix)
                } else {
                    ResultMode::Aset(prefix)
                };
                return Ok((Parsed::Gset(mode), pos));
            }
            _ => return Err(fail("invalid command", None, None)),
        };
        Ok((mk(meta, first_line), pos))
    }
}

/// How a meta-command's parser reports an error: message, detail, column.
type FailAt<'a> = &'a dyn Fn(&str, Option<String>, Option<usize>) -> ScriptError;

/// `\sleep N [us|ms|s]` or `\sleep :var [unit]` (a unit glued to the number too), with
/// pgbench's errors; `start` is the command's offset, for error columns.
fn sleep(args: &[(String, usize)], start: usize, fail: FailAt<'_>) -> Result<Meta, ScriptError> {
    if args.is_empty() {
        return Err(fail("missing argument", None, None));
    }
    if args.len() > 2 {
        return Err(fail("too many arguments", None, Some(args[2].1 - start)));
    }
    let (arg1, off1) = args[0].clone();
    let mut unit = args.get(1).map(|(u, off)| (u.clone(), *off));
    let amount = if let Some(v) = arg1.strip_prefix(':') {
        SleepAmount::Variable(v.to_string())
    } else {
        let b = arg1.as_bytes();
        let mut i = usize::from(matches!(b.first(), Some(b'+' | b'-')));
        let have_digit = b.get(i).is_some_and(u8::is_ascii_digit);
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i < b.len() {
            if args.len() == 1 && have_digit {
                unit = Some((arg1[i..].to_string(), off1 + i));
            } else {
                return Err(fail(
                    "invalid sleep time, must be an integer",
                    Some(arg1.clone()),
                    Some(off1 - start),
                ));
            }
        }
        SleepAmount::Literal(atoi(&arg1))
    };
    let unit_us = match &unit {
        None => 1_000_000,
        Some((u, off)) => match u.to_ascii_lowercase().as_str() {
            "us" => 1,
            "ms" => 1000,
            "s" => 1_000_000,
            _ => {
                return Err(fail(
                    "unrecognized time unit, must be us, ms or s",
                    Some(u.clone()),
                    Some(off - start),
                ))
            }
        },
    };
    Ok(Meta::Sleep { amount, unit_us })
}

fn sql_first_line(text: &str) -> String {
    let mut end = text.len().min(127);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let s = &text[..end];
    let cut = s.find(['\n', '\r']).unwrap_or(s.len());
    s[..cut].to_string()
}

/// pgbench `skip_sql_comments`: drops leading blanks and `--` comments.
fn skip_sql_comments(s: &str) -> Option<(&str, usize)> {
    let b = s.as_bytes();
    let mut i = 0;
    let mut lines = 0;
    loop {
        let c = b.get(i).copied();
        if c.is_some_and(|c| c.is_ascii_whitespace() || c == 0x0b) {
            if c == Some(b'\n') {
                lines += 1;
            }
            i += 1;
        } else if b[i..].starts_with(b"--") {
            match b[i..].iter().position(|&c| c == b'\n') {
                Some(p) => {
                    i += p + 1;
                    lines += 1;
                }
                None => return None,
            }
        } else {
            break;
        }
    }
    if i >= b.len() {
        None
    } else {
        Some((&s[i..], lines))
    }
}

/// Parses a pgbench script. `name` is used in error messages (`name:line: …`).
pub fn parse_script(name: &str, source: &str) -> Result<Script, ScriptError> {
    let src = source.as_bytes();
    let ctx = Ctx { name, src };
    let mut scanner = SqlScanner::new(source);
    let mut commands: Vec<Command> = Vec::new();
    // Whether the last command is SQL that may still take \gset.
    loop {
        let (buf, line, stop) = scanner.next_sql();
        let text = String::from_utf8_lossy(&buf);
        if let Some((body, skipped)) = skip_sql_comments(&text) {
            commands.push(Command {
                index: commands.len(),
                line: line + skipped,
                first_line: sql_first_line(body),
                kind: CommandKind::Sql(SqlCommand::new(body.to_string())),
            });
        }
        match stop {
            Stop::Semicolon => {}
            Stop::Eof => break,
            Stop::Backslash(at) => {
                let bline = scanner.line;
                let (parsed, next) = ctx.backslash(at, bline)?;
                scanner.seek(next);
                match parsed {
                    Parsed::Nothing => {}
                    Parsed::Meta(mut cmd) => {
                        cmd.index = commands.len();
                        commands.push(cmd);
                    }
                    Parsed::Gset(mode) => {
                        let msg = "\\gset must follow an SQL command";
                        let Some(prev) = commands.last_mut() else {
                            return Err(ctx.err(bline, msg));
                        };
                        match &mut prev.kind {
                            CommandKind::Sql(sql) if sql.result == ResultMode::Discard => {
                                sql.result = mode;
                            }
                            CommandKind::Sql(_) => return Err(ctx.err(bline, msg)),
                            CommandKind::Meta(_) => {
                                let mut e = ctx.err(bline, msg);
                                e.detail = Some(prev.first_line.clone());
                                return Err(e);
                            }
                        }
                    }
                }
            }
        }
    }
    if commands.is_empty() {
        let lines = source.lines().count().max(1);
        return Err(ctx.err(lines, &format!("empty command list for script \"{name}\"")));
    }
    resolve_conditionals(name, &mut commands)?;
    Ok(Script {
        name: name.to_string(),
        commands: commands.into(),
    })
}

/// Checks `\if` nesting (pgbench `CheckConditional`) and fills jump targets.
fn resolve_conditionals(name: &str, commands: &mut [Command]) -> Result<(), ScriptError> {
    // Each open chain: the branch commands seen so far, and whether \else was seen.
    let mut stack: Vec<(Vec<usize>, bool)> = Vec::new();
    let mut links: Vec<(usize, usize, usize)> = Vec::new(); // (branch, next, end)
    for (i, cmd) in commands.iter().enumerate() {
        let CommandKind::Meta(m) = &cmd.kind else {
            continue;
        };
        let line = cmd.line;
        let err = |msg: &str| ScriptError::new(name, line, msg);
        match m.meta {
            Meta::If { .. } => stack.push((vec![i], false)),
            Meta::Elif { .. } | Meta::Else { .. } => {
                let is_else = matches!(m.meta, Meta::Else { .. });
                let word = if is_else { "\\else" } else { "\\elif" };
                let Some((branches, else_seen)) = stack.last_mut() else {
                    return Err(err(&format!("{word} without matching \\if")));
                };
                if *else_seen {
                    return Err(err(&format!("{word} after \\else")));
                }
                *else_seen = is_else;
                branches.push(i);
            }
            Meta::Endif => {
                let Some((branches, _)) = stack.pop() else {
                    return Err(err("\\endif without matching \\if"));
                };
                for (k, &b) in branches.iter().enumerate() {
                    let next = branches.get(k + 1).copied().unwrap_or(i);
                    links.push((b, next, i));
                }
            }
            _ => {}
        }
    }
    if let Some((branches, _)) = stack.last() {
        let line = branches
            .first()
            .and_then(|&i| commands.get(i))
            .map_or(1, |c| c.line);
        return Err(ScriptError::new(
            name,
            line,
            "\\if without matching \\endif",
        ));
    }
    for (b, n, e) in links {
        if let Some(CommandKind::Meta(m)) = commands.get_mut(b).map(|c| &mut c.kind) {
            match &mut m.meta {
                Meta::If { next, .. } => *next = n,
                Meta::Elif { next, end, .. } => {
                    *next = n;
                    *end = e;
                }
                Meta::Else { end } => *end = e,
                _ => {}
            }
        }
    }
    Ok(())
}

/// True when `name` may be assigned by `\set` (checked at run time by pgbench).
pub(crate) fn settable(name: &str) -> bool {
    valid_variable_name(name)
}
