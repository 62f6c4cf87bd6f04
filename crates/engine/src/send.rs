//! Encoding one SQL command of a script into the connection's output buffer, per query mode,
//! with reused text buffers (no allocation per transaction in the steady state):
//! simple → one Query message; extended → Parse/Bind/Describe/Execute/Sync on the unnamed
//! statement; prepared → the same on a named statement, parsed once per connection.

use bytes::BytesMut;
use hotbench_script::SqlCommand;
use hotbench_wire::encode;

use crate::config::QueryMode;

/// Reusable buffers for rendering commands.
#[derive(Debug, Default)]
pub struct SendBuffers {
    sql: String,
    params: Vec<String>,
    nulls: Vec<bool>,
    name: String,
    /// The (group, script, command) `name` was built for.
    name_key: Option<(usize, usize, usize)>,
}

impl SendBuffers {
    /// The SQL text last rendered for the simple protocol (`--debug` shows it).
    pub fn last_simple_sql(&self) -> &str {
        &self.sql
    }
}

/// Appends the messages for `sql` to `out`. `prepared` tracks whether the named statement
/// already exists on this connection (set here when a Parse is sent; the caller clears it
/// again if the server rejected that Parse). `sync` is false inside a pipeline.
/// Returns whether a named statement was parsed in this batch.
#[allow(clippy::too_many_arguments)]
pub fn encode_command(
    out: &mut BytesMut,
    bufs: &mut SendBuffers,
    mode: QueryMode,
    sql: &SqlCommand,
    vars: &hotbench_script::Variables,
    statement_key: (usize, usize, usize),
    prepared: &mut bool,
    sync: bool,
) -> Result<bool, hotbench_wire::Error> {
    if mode == QueryMode::Simple {
        bufs.sql.clear();
        sql.render_simple(vars, &mut bufs.sql);
        return encode::query(out, &bufs.sql).map(|_| false);
    }
    let mut parsed_named = false;
    let n = sql.param_count();
    while bufs.params.len() < n {
        bufs.params.push(String::new());
        bufs.nulls.push(false);
    }
    for i in 0..n {
        bufs.params[i].clear();
        bufs.nulls[i] = !sql.write_param(i, vars, &mut bufs.params[i]);
    }
    let params = bufs.params[..n]
        .iter()
        .zip(&bufs.nulls[..n])
        .map(|(p, &null)| if null { None } else { Some(p.as_bytes()) });
    let named = mode == QueryMode::Prepared && !sql.has_dynamic_text();
    if named {
        if bufs.name_key != Some(statement_key) {
            // "P{g}_{s}_{c}" without core::fmt: built once per command switch.
            let (g, s, c) = statement_key;
            let mut num = itoa::Buffer::new();
            bufs.name.clear();
            bufs.name.push('P');
            bufs.name.push_str(num.format(g));
            bufs.name.push('_');
            bufs.name.push_str(num.format(s));
            bufs.name.push('_');
            bufs.name.push_str(num.format(c));
            bufs.name_key = Some(statement_key);
        }
        if !*prepared {
            encode::parse(out, &bufs.name, sql.extended_text(), &[])?;
            *prepared = true;
            parsed_named = true;
        }
        encode::bind(out, "", &bufs.name, params)?;
    } else {
        let text = if sql.has_dynamic_text() {
            bufs.sql.clear();
            sql.render_extended(vars, &mut bufs.sql);
            bufs.sql.as_str()
        } else {
            sql.extended_text()
        };
        encode::parse(out, "", text, &[])?;
        encode::bind(out, "", "", params)?;
    }
    // Column names are only needed for \gset/\aset; skipping Describe otherwise saves a
    // RowDescription per execution.
    if sql.wants_result(true) || sql.wants_result(false) {
        encode::describe_portal(out, "")?;
    }
    encode::execute(out, "", 0)?;
    if sync {
        encode::sync(out);
    }
    Ok(parsed_named)
}
