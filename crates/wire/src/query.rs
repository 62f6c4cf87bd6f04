//! A small blocking query API for setup, checks, probes and `-i`: simple and extended
//! queries returning text values, and COPY FROM STDIN.
//!
//! Not the benchmark path (the engine encodes and parses messages itself); values are
//! `String`s, which is what psql-style checks and pgbench's initialization need. After an
//! error the API reads up to ReadyForQuery, so the connection stays usable unless
//! [`Error::is_connection_lost`].

use fallible_iterator::FallibleIterator;
use postgres_protocol::message::backend::Message;

use crate::conn::{Connection, TxStatus};
use crate::encode;
use crate::error::{DbError, Error};

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

/// The trailing number of a command tag, if it has one.
pub fn rows_affected(tag: &str) -> Option<u64> {
    let last = tag.rsplit(' ').next()?;
    if tag.contains(' ') {
        last.parse().ok()
    } else {
        None
    }
}

fn protocol(e: std::io::Error) -> Error {
    Error::Protocol(e.to_string())
}

/// Collects messages of one or more statements until ReadyForQuery.
#[derive(Default)]
struct Collector {
    results: Vec<QueryResult>,
    current: Option<QueryResult>,
    error: Option<DbError>,
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
                Message::ReadyForQuery(b) => {
                    self.tx_status = TxStatus::from_byte(b.status());
                    break;
                }
                Message::CopyInResponse(_) => {
                    encode::copy_fail(
                        &mut self.out,
                        "COPY FROM STDIN is not supported here; use copy_in",
                    )?;
                    self.flush_blocking()?;
                }
                other => self.handle(&mut c, other)?,
            }
        }
        match c.error {
            Some(e) => Err(Error::from(e)),
            None => Ok(c.results),
        }
    }

    fn handle(&mut self, c: &mut Collector, msg: Message) -> Result<(), Error> {
        match msg {
            Message::RowDescription(body) => {
                let mut r = QueryResult::default();
                let mut fields = body.fields();
                while let Some(f) = fields.next().map_err(protocol)? {
                    r.columns.push(f.name().to_string());
                }
                c.current = Some(r);
            }
            Message::DataRow(body) => {
                let r = c.current.get_or_insert_with(QueryResult::default);
                let buf = body.buffer();
                let mut row = Vec::with_capacity(r.columns.len());
                let mut ranges = body.ranges();
                while let Some(range) = ranges.next().map_err(protocol)? {
                    row.push(
                        range
                            .and_then(|rg| buf.get(rg))
                            .map(|v| String::from_utf8_lossy(v).into_owned()),
                    );
                }
                r.rows.push(row);
            }
            Message::CommandComplete(body) => {
                let mut r = c.current.take().unwrap_or_default();
                r.command_tag = body.tag().map_err(protocol)?.to_string();
                c.results.push(r);
            }
            Message::EmptyQueryResponse => {
                c.current = None;
                c.results.push(QueryResult::default());
            }
            Message::ErrorResponse(body) => {
                let e = DbError::from_error_response(&body)?;
                if e.is_fatal() {
                    self.closed = true;
                }
                if c.error.is_none() {
                    c.error = Some(e);
                }
            }
            Message::NoticeResponse(body) => {
                let n = DbError::from_notice_response(&body)?;
                self.notice(n);
            }
            Message::ParameterStatus(body) => {
                if let (Ok(k), Ok(v)) = (body.name(), body.value()) {
                    crate::startup::set_param(&mut self.params, k, v);
                }
            }
            // Extended-protocol acknowledgements, COPY OUT data, notifications: nothing
            // to keep.
            _ => {}
        }
        Ok(())
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
                other => self.handle(&mut c, other)?,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_tags() {
        assert_eq!(rows_affected("INSERT 0 5"), Some(5));
        assert_eq!(rows_affected("SELECT 3"), Some(3));
        assert_eq!(rows_affected("UPDATE 0"), Some(0));
        assert_eq!(rows_affected("COPY 100000"), Some(100000));
        assert_eq!(rows_affected("CREATE TABLE"), None);
        assert_eq!(rows_affected("BEGIN"), None);
        assert_eq!(rows_affected(""), None);
    }
}
