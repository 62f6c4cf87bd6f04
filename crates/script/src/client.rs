//! Per-client interpreter state and meta-command execution.
//!
//! The engine owns one [`Client`] per connection. SQL commands are sent by the
//! engine (see [`crate::SqlCommand`]); meta-commands are executed here and
//! return an [`Action`] telling the engine where to go next.

use crate::eval::{evaluate, EvalContext};
use crate::expr::Expr;
use crate::prng::PrngState;
use crate::script::{settable, CommandKind, Meta, Script, SleepAmount};
use crate::shell::{run_setshell, run_shell};
use crate::value::Value;
use crate::vars::Variables;
use std::io::Write;

/// What the engine does after a meta-command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// Continue with the next command (`index + 1`).
    Next,
    /// Continue with command `n` (may equal the script length: end of script).
    Jump(usize),
    /// Sleep this many microseconds (may be ≤ 0: no sleep), then continue
    /// with the next command.
    Sleep(i64),
    /// `\startpipeline`: enter pipeline mode (pgbench refuses it under `-M simple`:
    /// "cannot use pipeline mode with the simple query protocol").
    StartPipeline,
    /// `\syncpipeline`: send a Sync inside the pipeline.
    SyncPipeline,
    /// `\endpipeline`: send Sync, collect all pending results, leave pipeline mode.
    EndPipeline,
}

/// A meta-command failure: pgbench aborts the client.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ExecError {
    /// 0-based index of the failing command.
    pub command: usize,
    /// Command name pgbench shows (`set`, `sleep`, `shell`, …).
    pub name: String,
    /// The specific error (`division by zero`, `bigint add out of range`, …).
    pub message: String,
    /// pgbench's summary (`evaluation of meta-command failed`, …).
    pub summary: &'static str,
}

impl ExecError {
    /// pgbench's second error line:
    /// `client 0 aborted in command 1 (set) of script 0; evaluation of meta-command failed`.
    pub fn abort_line(&self, client: usize, script: usize) -> String {
        format!(
            "client {client} aborted in command {} ({}) of script {script}; {}",
            self.command, self.name, self.summary
        )
    }
}

/// Per-client state: variables and the `cs_func_rs` generator (with the
/// snapshot taken at transaction start for retries).
#[derive(Clone, Debug)]
pub struct Client {
    /// Client number (`client_id`).
    pub id: usize,
    /// The client's variables.
    pub vars: Variables,
    rng: PrngState,
    saved: PrngState,
}

const EVAL_FAILED: &str = "evaluation of meta-command failed";
const EXEC_FAILED: &str = "execution of meta-command failed";

impl Client {
    /// A client with its variables (see [`crate::client_variables`]) and its
    /// generator (`Seeds::clients[id]`).
    pub fn new(id: usize, vars: Variables, rng: PrngState) -> Self {
        Client {
            id,
            vars,
            rng,
            saved: rng,
        }
    }

    /// The expression functions' generator.
    pub fn rng(&mut self) -> &mut PrngState {
        &mut self.rng
    }

    /// Call when a transaction (script run) starts: remembers the generator,
    /// as pgbench does in `CSTATE_START_TX`.
    pub fn begin_transaction(&mut self) {
        self.saved = self.rng;
    }

    /// Call before retrying a transaction after a serialization/deadlock
    /// error: restores the generator so the same values are drawn again.
    pub fn restart_transaction(&mut self) {
        self.rng = self.saved;
    }

    /// Evaluates an expression in this client's context.
    pub fn eval(
        &mut self,
        expr: &Expr,
        script: usize,
        command: usize,
        debug: &mut dyn Write,
    ) -> Result<Value, String> {
        let mut ctx = EvalContext {
            vars: &self.vars,
            rng: &mut self.rng,
            script,
            command,
            debug,
        };
        evaluate(expr, &mut ctx).map_err(|e| e.0)
    }

    /// Executes meta-command `index` of `script` (`script_index` is only used
    /// for `debug()` output). `debug()` lines go to `debug`.
    pub fn execute(
        &mut self,
        script: &Script,
        script_index: usize,
        index: usize,
        debug: &mut dyn Write,
    ) -> Result<Action, ExecError> {
        let cmd = script.command(index).ok_or_else(|| ExecError {
            command: index,
            name: String::new(),
            message: format!("no command {index} in script"),
            summary: EXEC_FAILED,
        })?;
        let CommandKind::Meta(m) = &cmd.kind else {
            return Err(ExecError {
                command: index,
                name: "SQL".to_string(),
                message: "not a meta-command".to_string(),
                summary: EXEC_FAILED,
            });
        };
        let fail = |name: &str, message: String, summary: &'static str| ExecError {
            command: index,
            name: name.to_string(),
            message,
            summary,
        };
        match &m.meta {
            Meta::Set { var, expr } => {
                let v = self
                    .eval(expr, script_index, index, debug)
                    .map_err(|e| fail(&m.name, e, EVAL_FAILED))?;
                if !settable(var) && !self.vars.contains(var) {
                    return Err(fail(
                        "set",
                        format!("{}: invalid variable name: \"{var}\"", m.name),
                        "assignment of meta-command failed",
                    ));
                }
                let _ = self.vars.set_value(&m.name, var, v);
                Ok(Action::Next)
            }
            Meta::If { expr, next } => {
                let v = self
                    .eval(expr, script_index, index, debug)
                    .map_err(|e| fail(&m.name, e, EVAL_FAILED))?;
                if v.truth() {
                    Ok(Action::Next)
                } else {
                    self.resolve_branch(script, script_index, *next, debug)
                }
            }
            // Reached sequentially: the previous branch ran, skip to \endif.
            Meta::Elif { end, .. } | Meta::Else { end } => Ok(Action::Jump(end + 1)),
            Meta::Endif => Ok(Action::Next),
            Meta::Sleep { amount, unit_us } => {
                let base = match amount {
                    SleepAmount::Literal(v) => *v,
                    SleepAmount::Variable(name) => {
                        let Some(text) = self.vars.text(name) else {
                            return Err(fail(
                                "sleep",
                                format!("{}: undefined variable \"{name}\"", m.name),
                                EXEC_FAILED,
                            ));
                        };
                        let v = atoi_text(&text);
                        if v == 0 && !text.as_bytes().first().is_some_and(u8::is_ascii_digit) {
                            return Err(fail(
                                "sleep",
                                format!(
                                    "{}: invalid sleep time \"{text}\" for variable \"{name}\"",
                                    m.name
                                ),
                                EXEC_FAILED,
                            ));
                        }
                        v
                    }
                };
                Ok(Action::Sleep(i64::from(base.wrapping_mul(*unit_us))))
            }
            Meta::SetShell { var, args } => {
                let v =
                    run_setshell(&self.vars, args).map_err(|e| fail("setshell", e, EXEC_FAILED))?;
                self.vars
                    .set_value("setshell", var, Value::Int(v))
                    .map_err(|e| fail("setshell", e.to_string(), EXEC_FAILED))?;
                Ok(Action::Next)
            }
            Meta::Shell { args } => {
                run_shell(&self.vars, args).map_err(|e| fail("shell", e, EXEC_FAILED))?;
                Ok(Action::Next)
            }
            Meta::StartPipeline => Ok(Action::StartPipeline),
            Meta::SyncPipeline => Ok(Action::SyncPipeline),
            Meta::EndPipeline => Ok(Action::EndPipeline),
        }
    }

    /// After a false `\if`/`\elif`: evaluates the following `\elif`s (each as
    /// its own command for `debug()` and errors) until one is true, and returns
    /// where execution continues.
    fn resolve_branch(
        &mut self,
        script: &Script,
        script_index: usize,
        mut target: usize,
        debug: &mut dyn Write,
    ) -> Result<Action, ExecError> {
        loop {
            let Some(CommandKind::Meta(m)) = script.command(target).map(|c| &c.kind) else {
                return Ok(Action::Jump(target + 1));
            };
            match &m.meta {
                Meta::Elif { expr, next, .. } => {
                    let v =
                        self.eval(expr, script_index, target, debug)
                            .map_err(|e| ExecError {
                                command: target,
                                name: m.name.clone(),
                                message: e,
                                summary: EVAL_FAILED,
                            })?;
                    if v.truth() {
                        return Ok(Action::Jump(target + 1));
                    }
                    target = *next;
                }
                _ => return Ok(Action::Jump(target + 1)),
            }
        }
    }
}

/// C `atoi` on variable text.
fn atoi_text(s: &str) -> i32 {
    let t = s.trim_start_matches(|c: char| c.is_ascii_whitespace());
    let (neg, rest) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let nd = rest.bytes().take_while(u8::is_ascii_digit).count();
    if nd == 0 {
        return 0;
    }
    let v = rest[..nd].parse::<i64>().unwrap_or(i64::MAX);
    (if neg { v.wrapping_neg() } else { v }) as i32
}

/// Builds a client's variables as pgbench does at start-up: the `-D`
/// definitions, then `scale`, `client_id`, `default_seed` and `random_seed`
/// unless `-D` defined them.
pub fn client_variables(
    defines: &Variables,
    client_id: usize,
    scale: i64,
    default_seed: Option<u64>,
    random_seed: u64,
) -> Variables {
    let mut vars = defines.clone();
    let mut put = |name: &str, v: i64| {
        if !defines.contains(name) {
            let _ = vars.set_value("startup", name, Value::Int(v));
        }
    };
    put("scale", scale);
    put("client_id", client_id as i64);
    if let Some(seed) = default_seed {
        put("default_seed", seed as i64);
    }
    put("random_seed", random_seed as i64);
    vars
}

/// Parses one `-D NAME=VALUE` into `defines` (pgbench rules and messages).
pub fn define(defines: &mut Variables, option: &str) -> Result<(), String> {
    match option.split_once('=') {
        Some((name, value)) if !name.is_empty() && !value.is_empty() => defines
            .set_text("option", name, value)
            .map_err(|e| e.to_string()),
        _ => Err(format!("invalid variable definition: \"{option}\"")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defines_follow_pgbench_rules() {
        let mut d = Variables::new();
        assert!(define(&mut d, "a=1").is_ok());
        assert!(define(&mut d, "b=x=y").is_ok());
        assert_eq!(d.text("b").as_deref(), Some("x=y"));
        assert_eq!(
            define(&mut d, "=1"),
            Err("invalid variable definition: \"=1\"".to_string())
        );
        assert_eq!(
            define(&mut d, "c="),
            Err("invalid variable definition: \"c=\"".to_string())
        );
        assert_eq!(
            define(&mut d, "c"),
            Err("invalid variable definition: \"c\"".to_string())
        );
        assert_eq!(
            define(&mut d, "1x=5"),
            Err("option: invalid variable name: \"1x\"".to_string())
        );
    }

    #[test]
    fn automatic_variables_respect_defines() {
        let mut d = Variables::new();
        define(&mut d, "scale=7").expect("define");
        let v = client_variables(&d, 3, 1, Some(42), 9);
        assert_eq!(v.value("scale"), Ok(Value::Int(7)));
        assert_eq!(v.value("client_id"), Ok(Value::Int(3)));
        assert_eq!(v.value("default_seed"), Ok(Value::Int(42)));
        assert_eq!(v.value("random_seed"), Ok(Value::Int(9)));
    }
}
