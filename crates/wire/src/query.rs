//! A small blocking query API for setup, checks, probes and `-i`: simple and extended
//! queries returning text values, and COPY FROM STDIN.
//!
//! Not the benchmark path (the engine encodes and parses messages itself); values are
//! `String`s, which is what psql-style checks and pgbench's initialization need. After an
//! error the API reads up to ReadyForQuery, so the connection stays usable unless
//! [`Error::is_connection_lost`].

use postgres_protocol::message::backend::{DataRowBody, Message, RowDescriptionBody};

use crate::conn::{Connection, TxStatus};
use crate::encode;
use crate::error::{DbError, Error};
use crate::results::{column_names, interpret, row_values, Progress, ResultSink};

/// One statement's outcome.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct QueryResult {
    /// Column names (empty for statements without a result set).
    pub columns: Vec<String>,
    /// Rows as text values (`None` = NULL).
    pub rows: Vec<Vec<Option<String>>>,
    /// Command tag (`SELECT 3`, `INSERT 0 1`, `CREATE TABLE`); empty for an empty query.
    pub command_tag: String,
}

impl QueryResult {
    /// The row count in the command tag (`INSERT 0 5` → 5, `SELECT 3` → 3), if any.
    pub fn rows_affected(&self) -> Option<u64> {
        rows_affected(&self.command_tag)
    }

    /// Value at (row, column), `None` if out of range or NULL.
    pub fn get(&self, row: usize, col: usize) -> Option<&str> {
        self.rows.get(row)?.get(col)?.as_deref()
    }
}

pub use crate::results::rows_affected;

/// Collects messages of one or more statements until ReadyForQuery.
#[derive(Default)]
struct Collector {
    results: Vec<QueryResult>,
    current: Option<QueryResult>,
    error: Option<DbError>,
}

/// The blocking API's view of result messages: every result is kept whole; notices and
/// parameter changes go to the connection.
struct QuerySink<'a> {
    conn: &'a mut Connection,
    c: &'a mut Collector,
}

impl ResultSink for QuerySink<'_> {
    fn columns(&mut self, body: &RowDescriptionBody) -> Result<(), Error> {
        let mut r = QueryResult::default();
        column_names(body, &mut r.columns)?;
        self.c.current = Some(r);
        Ok(())
    }

    fn row(&mut self, body: &DataRowBody) -> Result<(), Error> {
        let r = self.c.current.get_or_insert_with(QueryResult::default);
        let mut row = Vec::with_capacity(r.columns.len());
        row_values(body, |_, v| {
            row.push(v.map(|b| String::from_utf8_lossy(b).into_owned()))
        })?;
        r.rows.push(row);
        Ok(())
    }

    fn complete(&mut self, tag: &str, _rows: Option<u64>) {
        let mut r = self.c.current.take().unwrap_or_default();
        r.command_tag = tag.to_string();
        self.c.results.push(r);
    }

    fn empty(&mut self) {
        self.c.current = None;
        self.c.results.push(QueryResult::default());
    }

    fn error(&mut self, e: DbError) {
        if e.is_fatal() {
            self.conn.closed = true;
        }
        if self.c.error.is_none() {
            self.c.error = Some(e);
        }
    }

    fn notice(&mut self, n: DbError) {
        self.conn.notice(n);
    }

    fn parameter(&mut self, name: &str, value: &str) {
        crate::startup::set_param(&mut self.conn.params, name, value);
    }
}

impl Connection {
    /// Runs `sql` (one or more `;`-separated statements) with the simple protocol.
    /// Returns one [`QueryResult`] per statement; the first server error aborts the rest
    /// (as the server does) and is returned once ReadyForQuery arrived.
    pub fn simple_query(&mut self, sql: &str) -> Result<Vec<QueryResult>, Error> {
        self.out.clear();
        encode::query(&mut self.out, sql)?;
        self.flush_blocking()?;
        self.collect()
    }

    /// Runs `sql` and ignores rows; returns the rows affected by the last statement.
    pub fn execute(&mut self, sql: &str) -> Result<u64, Error> {
        let r = self.simple_query(sql)?;
        Ok(r.last().and_then(QueryResult::rows_affected).unwrap_or(0))
    }

    /// Runs one statement through the extended protocol (unnamed statement and portal)
    /// with text parameters (`None` = NULL), returning its rows as text.
    pub fn query_params(
        &mut self,
        sql: &str,
        params: &[Option<&str>],
    ) -> Result<QueryResult, Error> {
        self.out.clear();
        encode::parse(&mut self.out, "", sql, &[])?;
        encode::bind_str(&mut self.out, "", "", params)?;
        encode::describe_portal(&mut self.out, "")?;
        encode::execute(&mut self.out, "", 0)?;
        encode::sync(&mut self.out);
        self.flush_blocking()?;
        let mut r = self.collect()?;
        Ok(r.pop().unwrap_or_default())
    }

    /// Reads results until ReadyForQuery.
    fn collect(&mut self) -> Result<Vec<QueryResult>, Error> {
        let mut c = Collector::default();
        loop {
            let msg = self.read_message_blocking();
            let msg = match msg {
                Ok(m) => m,
                // A FATAL error followed by EOF: report the server's error.
                Err(Error::Closed) if c.error.is_some() => break,
                Err(e) => return Err(e),
            };
            match msg {
                Message::CopyInResponse(_) => {
                    encode::copy_fail(
                        &mut self.out,
                        "COPY FROM STDIN is not supported here; use copy_in",
                    )?;
                    self.flush_blocking()?;
                }
                other => {
                    if let Progress::Ready(status) = self.handle(&mut c, &other)? {
                        self.tx_status = TxStatus::from_byte(status);
                        break;
                    }
                }
            }
        }
        match c.error {
            Some(e) => Err(Error::from(e)),
            None => Ok(c.results),
        }
    }

    fn handle(&mut self, c: &mut Collector, msg: &Message) -> Result<Progress, Error> {
        interpret(msg, &mut QuerySink { conn: self, c })
    }

    /// Starts `COPY … FROM STDIN` (sent with the simple protocol). Feed data with
    /// [`CopyIn::write`], then [`CopyIn::finish`].
    pub fn copy_in_start(&mut self, sql: &str) -> Result<CopyIn<'_>, Error> {
        self.out.clear();
        encode::query(&mut self.out, sql)?;
        self.flush_blocking()?;
        let mut c = Collector::default();
        loop {
            match self.read_message_blocking()? {
                Message::CopyInResponse(_) => {
                    return Ok(CopyIn {
                        conn: self,
                        done: false,
                    })
                }
                Message::ReadyForQuery(b) => {
                    self.tx_status = TxStatus::from_byte(b.status());
                    return Err(match c.error {
                        Some(e) => Error::from(e),
                        None => Error::Usage(format!("not a COPY FROM STDIN statement: {sql}")),
                    });
                }
                other => {
                    self.handle(&mut c, &other)?;
                }
            }
        }
    }

    /// Runs `COPY … FROM STDIN` sending each chunk of `data` (COPY text or CSV format,
    /// as the statement says). Returns the number of rows copied.
    pub fn copy_in<I, B>(&mut self, sql: &str, data: I) -> Result<u64, Error>
    where
        I: IntoIterator<Item = B>,
        B: AsRef<[u8]>,
    {
        let mut copy = self.copy_in_start(sql)?;
        for chunk in data {
            copy.write(chunk.as_ref())?;
        }
        copy.finish()
    }
}

/// An open COPY FROM STDIN. Dropping it without `finish` aborts the COPY.
pub struct CopyIn<'a> {
    conn: &'a mut Connection,
    done: bool,
}

/// Outbound bytes buffered before a COPY write goes to the socket.
const COPY_FLUSH_AT: usize = 64 * 1024;

impl CopyIn<'_> {
    /// Sends one chunk of data (any split; rows may span chunks).
    pub fn write(&mut self, data: &[u8]) -> Result<(), Error> {
        encode::copy_data(&mut self.conn.out, data)?;
        if self.conn.out.len() >= COPY_FLUSH_AT {
            self.conn.flush_blocking()?;
        }
        Ok(())
    }

    /// Ends the data and returns the rows copied (or the server's error).
    pub fn finish(self) -> Result<u64, Error> {
        self.end(None)
    }

    /// Aborts the COPY; the server answers with an error, which is swallowed.
    pub fn abort(self, reason: &str) -> Result<(), Error> {
        match self.end(Some(reason)) {
            Ok(_) => Ok(()),
            Err(Error::Db(_)) => Ok(()),
            Err(e) => Err(e),
        }
    }

    fn end(mut self, fail: Option<&str>) -> Result<u64, Error> {
        self.done = true;
        let conn = &mut *self.conn;
        match fail {
            None => encode::copy_done(&mut conn.out),
            Some(msg) => encode::copy_fail(&mut conn.out, msg)?,
        }
        conn.flush_blocking()?;
        let r = conn.collect()?;
        Ok(r.last().and_then(QueryResult::rows_affected).unwrap_or(0))
    }
}

impl Drop for CopyIn<'_> {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        let conn = &mut *self.conn;
        if encode::copy_fail(&mut conn.out, "COPY aborted by client").is_ok()
            && conn.flush_blocking().is_ok()
        {
            let _ = conn.collect();
        }
    }
}
