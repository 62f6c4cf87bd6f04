//! The one place that turns backend messages into query results (like tokio-postgres's
//! codec): [`interpret`] reads a message and tells a [`ResultSink`] what it means (columns,
//! a row, a completed statement and its row count, an error, ready for the next query).
//! The engine's streaming collector and the blocking query API are both sinks; they differ
//! only in what they keep. Static dispatch, no allocation beyond what a sink does.

use fallible_iterator::FallibleIterator;
use postgres_protocol::message::backend::{DataRowBody, Message, RowDescriptionBody};

use crate::error::{DbError, Error};

/// Receives what result messages mean. Every method has a do-nothing default.
pub trait ResultSink {
    /// A result set starts: its column descriptions.
    fn columns(&mut self, _body: &RowDescriptionBody) -> Result<(), Error> {
        Ok(())
    }
    /// One row of the current result set.
    fn row(&mut self, _body: &DataRowBody) -> Result<(), Error> {
        Ok(())
    }
    /// A statement completed with this command tag (`rows`: the tag's row count).
    fn complete(&mut self, _tag: &str, _rows: Option<u64>) {}
    /// An empty query string completed.
    fn empty(&mut self) {}
    /// The server reported an error (further errors of the same query may follow).
    fn error(&mut self, _err: DbError) {}
    /// The Parse of the extended protocol succeeded.
    fn parsed(&mut self) {}
    /// An asynchronous notice.
    fn notice(&mut self, _notice: DbError) {}
    /// A run-time parameter changed (`SET`, `application_name`, …).
    fn parameter(&mut self, _name: &str, _value: &str) {}
}

/// Where the query stands after one message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress {
    /// More messages belong to the query.
    More,
    /// ReadyForQuery with this transaction status byte (`I`, `T` or `E`): the query ended.
    Ready(u8),
}

/// Interprets one backend message for `sink`. Malformed messages are [`Error::Protocol`].
#[inline]
pub fn interpret<S: ResultSink>(msg: &Message, sink: &mut S) -> Result<Progress, Error> {
    match msg {
        Message::RowDescription(body) => sink.columns(body)?,
        Message::DataRow(body) => sink.row(body)?,
        Message::CommandComplete(body) => {
            let tag = body.tag().map_err(protocol)?;
            sink.complete(tag, rows_affected(tag));
        }
        Message::EmptyQueryResponse => sink.empty(),
        Message::ErrorResponse(body) => sink.error(DbError::from_error_response(body)?),
        Message::ParseComplete => sink.parsed(),
        Message::NoticeResponse(body) => sink.notice(DbError::from_notice_response(body)?),
        Message::ParameterStatus(body) => {
            if let (Ok(k), Ok(v)) = (body.name(), body.value()) {
                sink.parameter(k, v);
            }
        }
        Message::ReadyForQuery(body) => return Ok(Progress::Ready(body.status())),
        // Extended-protocol acknowledgements, COPY OUT data, notifications: nothing to keep.
        _ => {}
    }
    Ok(Progress::More)
}

/// The trailing number of a command tag, if it has one (`INSERT 0 5` → 5, `SELECT 3` → 3).
pub fn rows_affected(tag: &str) -> Option<u64> {
    // Read once per command: digits from the end, no splitting or UTF-8 parsing.
    let bytes = tag.as_bytes();
    let space = bytes.iter().rposition(|&b| b == b' ')?;
    let digits = &bytes[space + 1..];
    if digits.is_empty() {
        return None;
    }
    digits.iter().try_fold(0u64, |n, &d| {
        if d.is_ascii_digit() {
            n.checked_mul(10)?.checked_add(u64::from(d - b'0'))
        } else {
            None
        }
    })
}

/// Column names of a RowDescription, appended to `out`.
pub fn column_names(body: &RowDescriptionBody, out: &mut Vec<String>) -> Result<(), Error> {
    let mut fields = body.fields();
    while let Some(f) = fields.next().map_err(protocol)? {
        out.push(f.name().to_string());
    }
    Ok(())
}

/// Calls `each(i, value)` for every value of a DataRow (`None` = NULL).
pub fn row_values(
    body: &DataRowBody,
    mut each: impl FnMut(usize, Option<&[u8]>),
) -> Result<usize, Error> {
    let buf = body.buffer();
    let mut ranges = body.ranges();
    let mut i = 0;
    while let Some(range) = ranges.next().map_err(protocol)? {
        each(i, range.and_then(|r| buf.get(r)));
        i += 1;
    }
    Ok(i)
}

fn protocol(e: std::io::Error) -> Error {
    Error::Protocol(e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::{BufMut, BytesMut};

    fn backend(tag: u8, body: &[u8]) -> Message {
        let mut buf = BytesMut::new();
        buf.put_u8(tag);
        buf.put_u32(body.len() as u32 + 4);
        buf.put_slice(body);
        Message::parse(&mut buf).unwrap().unwrap()
    }

    #[derive(Default)]
    struct Log(Vec<String>);

    impl ResultSink for Log {
        fn columns(&mut self, body: &RowDescriptionBody) -> Result<(), Error> {
            let mut names = Vec::new();
            column_names(body, &mut names)?;
            self.0.push(format!("columns {names:?}"));
            Ok(())
        }
        fn row(&mut self, body: &DataRowBody) -> Result<(), Error> {
            let mut vals = Vec::new();
            row_values(body, |_, v| vals.push(v.map(|b| b.to_vec())))?;
            self.0.push(format!("row {vals:?}"));
            Ok(())
        }
        fn complete(&mut self, tag: &str, rows: Option<u64>) {
            self.0.push(format!("complete {tag} {rows:?}"));
        }
        fn error(&mut self, err: DbError) {
            self.0.push(format!("error {}", err.code));
        }
    }

    #[test]
    fn messages_reach_the_sink_with_their_meaning() {
        let mut sink = Log::default();
        let mut desc = Vec::new();
        desc.extend_from_slice(&1u16.to_be_bytes());
        desc.extend_from_slice(b"a\0");
        desc.extend_from_slice(&[0; 18]);
        let mut row = Vec::new();
        row.extend_from_slice(&2u16.to_be_bytes());
        row.extend_from_slice(&1i32.to_be_bytes());
        row.extend_from_slice(b"7");
        row.extend_from_slice(&(-1i32).to_be_bytes());
        let msgs = [
            backend(b'T', &desc),
            backend(b'D', &row),
            backend(b'C', b"SELECT 1\0"),
            backend(b'E', b"SERROR\0C40001\0Mx\0\0"),
        ];
        for m in &msgs {
            assert_eq!(interpret(m, &mut sink).unwrap(), Progress::More);
        }
        assert_eq!(
            interpret(&backend(b'Z', b"T"), &mut sink).unwrap(),
            Progress::Ready(b'T')
        );
        assert_eq!(
            sink.0,
            [
                "columns [\"a\"]",
                "row [Some([55]), None]",
                "complete SELECT 1 Some(1)",
                "error 40001"
            ]
        );
    }

    #[test]
    fn command_tags() {
        assert_eq!(rows_affected("INSERT 0 5"), Some(5));
        assert_eq!(rows_affected("SELECT 3"), Some(3));
        assert_eq!(rows_affected("UPDATE 0"), Some(0));
        assert_eq!(rows_affected("COPY 100000"), Some(100000));
        assert_eq!(rows_affected("CREATE TABLE"), None);
        assert_eq!(rows_affected("BEGIN"), None);
        assert_eq!(rows_affected(""), None);
        assert_eq!(rows_affected("SELECT "), None);
        assert_eq!(rows_affected("SELECT 1x"), None);
        assert_eq!(rows_affected("SELECT 18446744073709551615"), Some(u64::MAX));
        assert_eq!(rows_affected("SELECT 18446744073709551616"), None);
    }
}
