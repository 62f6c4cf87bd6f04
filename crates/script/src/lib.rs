//! hotbench-script: the pgbench script language, parsed and evaluated exactly
//! like PostgreSQL 15's pgbench (plus `\syncpipeline` and psql's `:'x'`/`:"x"`).
//!
//! No I/O except `\shell`/`\setshell` (via `sh -c`) and `debug()` lines, which
//! go to a writer the caller passes.
//!
//! # Parsing (start-up)
//!
//! - [`parse_script`]`(name, text)` → [`Script`], or a [`ScriptError`] whose
//!   `Display` is pgbench's `name:line: message (detail) in command "set"`
//!   followed by the command text and a `^ error found here` caret.
//! - Built-ins: [`find_builtin`] (unambiguous prefix, pgbench's messages),
//!   [`parse_builtin`], [`BUILTINS`], [`list_builtins`]; `-b NAME@W` / `-f FILE@W`:
//!   [`parse_weight`].
//! - Under `-M extended`/`prepared` also call [`Script::check_extended`].
//!
//! A [`Script`] is a list of [`Command`]s (`index`, `line`, `first_line` for
//! `-r`, and a [`CommandKind`]): SQL ([`SqlCommand`]) or meta ([`MetaCommand`]).
//! `\gset`/`\aset` are merged into the SQL command before them
//! ([`SqlCommand::result_mode`]); `\if` chains are validated and carry jump
//! targets.
//!
//! # Run set-up
//!
//! - `--random-seed`: [`RandomSeed`] (`FromStr`: `time`, `rand`, integer),
//!   [`RandomSeed::resolve`] → `u64`.
//! - [`derive_seeds`]`(seed, nclients, nthreads, draw_default_seed)` → [`Seeds`]:
//!   per-client `cs_func_rs`, `default_seed`, per-thread `choose`/`throttle`/`sample`
//!   generators, in pgbench's drawing order. [`clients_per_thread`] deals
//!   clients to threads like pgbench.
//! - `-D name=value`: [`define`] into a [`Variables`]; then per client
//!   [`client_variables`]`(&defines, id, scale, seeds.default_seed, seed)` and
//!   [`Client::new`]`(id, vars, seeds.clients[id])`.
//!
//! # Per transaction (engine loop)
//!
//! 1. Pick the script: [`choose_script`]`(&mut thread.choose, &weights)`;
//!    under `-R`, the next start is `+= `[`poisson_rand`]`(&mut thread.throttle, delay_us)`.
//! 2. [`Client::begin_transaction`] (remembers the generator).
//! 3. For `i` from 0 while `i < script.len()`:
//!    - SQL: `-M simple`: [`SqlCommand::render_simple`]`(&client.vars, &mut buf)`;
//!      extended/prepared: [`SqlCommand::extended_text`] (or
//!      [`SqlCommand::render_extended`] when [`SqlCommand::has_dynamic_text`]) and
//!      for each `p < param_count()` [`SqlCommand::write_param`] (false → NULL).
//!      For each result `q` of the command: if [`SqlCommand::wants_result`]`(is_last)`
//!      call [`SqlCommand::store_result`] (an error aborts the client, message via
//!      [`ResultError::pgbench_message`]). `\gset`/`\aset` are not allowed in a
//!      pipeline (pgbench aborts). Then `i += 1`.
//!    - Meta: [`Client::execute`]`(&script, script_index, i, &mut debug_sink)` →
//!      [`Action`]: `Next` (`i += 1`), `Jump(n)` (`i = n`), `Sleep(us)` (sleep,
//!      then `i += 1`), `StartPipeline`/`SyncPipeline`/`EndPipeline` (do it, then
//!      `i += 1`). `Err(`[`ExecError`]`)` aborts the client: log the message and
//!      [`ExecError::abort_line`].
//! 4. On a serialization/deadlock error with retries left: roll back,
//!    [`Client::restart_transaction`] (same random values again), and restart at
//!    command 0.
//!
//! # Expressions
//!
//! [`parse_expr`] parses one expression (a Pratt parser with pgbench's
//! precedences; `Display` of [`Expr`] prints S-expressions). [`Client::eval`]
//! evaluates one. [`Value`] renders as pgbench does ([`Value::write_text`],
//! [`Value::debug_text`]).

//!
//! # Compatibility with pgbench 15
//!
//! Checked against real pgbench by `tests/oracle.rs` (expressions, meta-commands,
//! errors, several clients/threads/weighted scripts) and `tests/sql_oracle.rs`
//! (SQL splitting, substitution in both protocols, `-r` command texts):
//! identical PRNG (`pg_prng` xoroshiro128** + splitmix64), seeding order,
//! `random*`, `hash*`, `permute`, values and their text, `debug()` lines, error
//! messages and carets. Differences, all deliberate:
//! - extensions: `\syncpipeline` (pgbench 17) and psql's `:'name'`/`:"name"`
//!   (pgbench sends them unchanged);
//! - expression trees deeper than 200 levels are refused (bounded recursion);
//! - `\if` structure errors read `file:line: \elif without matching \if`
//!   (pgbench: `condition error in script "file" command N: …`);
//! - a SQL command's `first_line` is cut at 127 bytes on a character boundary
//!   (pgbench may cut inside a UTF-8 sequence); scripts are UTF-8 text;
//! - an empty-string variable used in an expression reports `malformed variable`
//!   (pgbench aborts without a message); a NaN `random_zipfian` parameter is an
//!   error (pgbench loops forever);
//! - `--random-seed=time` uses wall-clock microseconds, `rand` the std hasher's
//!   random keys (pgbench: monotonic clock, `pg_strong_random`).

#![warn(missing_docs)]
// Parse errors are built at most once per run; a flat struct with public
// fields is easier for callers than a boxed one.
#![allow(clippy::result_large_err)]

mod builtin;
mod client;
mod error;
mod eval;
mod expr;
mod exprparse;
mod hash;
mod prng;
mod script;
mod seeds;
mod shell;
mod sql;
mod sqlscan;
mod value;
mod vars;

pub use builtin::{
    builtin, find_builtin, list_builtins, parse_builtin, parse_weight, Builtin, OptionError,
    BUILTINS,
};
pub use client::{client_variables, define, Action, Client, ExecError};
pub use error::ScriptError;
pub use eval::{evaluate, EvalContext, EvalError};
pub use exprparse::MAX_TREE_DEPTH;

/// Stack a thread needs to parse, evaluate and drop the deepest expression accepted
/// ([`MAX_TREE_DEPTH`]), with a wide margin for unoptimised builds; threads that run scripts
/// are created with at least this much (tested in `tests/parser.rs`).
pub const EXPR_STACK_BYTES: usize = 32 << 20;
pub use expr::{Expr, Func};
pub use hash::{hash_fnv1a, hash_murmur2, permute};
pub use prng::{
    exponential_rand, gaussian_rand, getrand, poisson_rand, zipfian_rand, PrngState,
    MAX_ZIPFIAN_PARAM, MIN_GAUSSIAN_PARAM, MIN_ZIPFIAN_PARAM,
};
pub use script::{parse_script, Command, CommandKind, Meta, MetaCommand, Script, SleepAmount};
pub use seeds::{
    choose_script, clients_per_thread, derive_seeds, RandomSeed, SeedError, Seeds, ThreadRandom,
};
pub use sql::{
    quote_ident, quote_literal, QueryResult, ResultError, ResultMode, SqlCommand, MAX_PARAMS,
};
pub use value::{format_g, format_g15, Value};
pub use vars::{valid_variable_name, InvalidVariableName, VarValue, Variables};

/// Parses a single expression (as after `\set name`), for tools and tests.
/// Errors are rendered like a `\set` syntax error in a script named `expr`.
pub fn parse_expr(text: &str) -> Result<Expr, ScriptError> {
    let src = format!("\\set x {text}");
    let script = parse_script("expr", &src)?;
    match script.commands().first().map(|c| &c.kind) {
        Some(CommandKind::Meta(MetaCommand {
            meta: Meta::Set { expr, .. },
            ..
        })) => Ok(expr.clone()),
        _ => Err(ScriptError::new("expr", 1, "not an expression")),
    }
}
