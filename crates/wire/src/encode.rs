//! Frontend messages appended to a caller's reusable `BytesMut`.
//!
//! Thin wrappers over `postgres_protocol::message::frontend` so a whole transaction
//! (Parse/Bind/Execute/Sync, or one Query) is batched into one buffer and one `write`.
//! Parameters are text format, written from byte slices (`None` = NULL). The only failure
//! is invalid input (a NUL byte inside a string, too many parameters): [`Error::Usage`].

use bytes::BytesMut;
use postgres_protocol::message::frontend;
use postgres_protocol::IsNull;

use crate::error::Error;

fn usage(e: std::io::Error) -> Error {
    Error::Usage(e.to_string())
}

/// `Query` (simple protocol; may hold several `;`-separated statements).
pub fn query(buf: &mut BytesMut, sql: &str) -> Result<(), Error> {
    frontend::query(sql, buf).map_err(usage)
}

/// `Parse`: prepare `sql` as statement `name` (`""` = unnamed). `param_types` may be
/// empty (server infers) or give one type OID per `$n` (0 = unspecified).
pub fn parse(buf: &mut BytesMut, name: &str, sql: &str, param_types: &[u32]) -> Result<(), Error> {
    frontend::parse(name, sql, param_types.iter().copied(), buf).map_err(usage)
}

/// `Bind` with all parameters and results in text format.
pub fn bind<'a, I>(
    buf: &mut BytesMut,
    portal: &str,
    statement: &str,
    params: I,
) -> Result<(), Error>
where
    I: IntoIterator<Item = Option<&'a [u8]>>,
{
    frontend::bind(
        portal,
        statement,
        std::iter::empty(),
        params,
        |p, buf| match p {
            Some(v) => {
                buf.extend_from_slice(v);
                Ok(IsNull::No)
            }
            None => Ok(IsNull::Yes),
        },
        std::iter::empty(),
        buf,
    )
    .map_err(|e| match e {
        frontend::BindError::Conversion(e) => Error::Usage(e.to_string()),
        frontend::BindError::Serialization(e) => usage(e),
    })
}

/// `Bind` from `&str` parameters (`None` = NULL).
pub fn bind_str(
    buf: &mut BytesMut,
    portal: &str,
    statement: &str,
    params: &[Option<&str>],
) -> Result<(), Error> {
    bind(
        buf,
        portal,
        statement,
        params.iter().map(|p| p.map(str::as_bytes)),
    )
}

/// `Describe` a portal (`P`).
pub fn describe_portal(buf: &mut BytesMut, portal: &str) -> Result<(), Error> {
    frontend::describe(b'P', portal, buf).map_err(usage)
}

/// `Describe` a prepared statement (`S`).
pub fn describe_statement(buf: &mut BytesMut, statement: &str) -> Result<(), Error> {
    frontend::describe(b'S', statement, buf).map_err(usage)
}

/// `Execute` a portal; `max_rows` 0 = all rows.
pub fn execute(buf: &mut BytesMut, portal: &str, max_rows: i32) -> Result<(), Error> {
    frontend::execute(portal, max_rows, buf).map_err(usage)
}

/// `Sync`: ends an extended-protocol batch; the server answers ReadyForQuery.
pub fn sync(buf: &mut BytesMut) {
    frontend::sync(buf)
}

/// `Flush`: ask the server to send what it has without ending the batch.
pub fn flush(buf: &mut BytesMut) {
    frontend::flush(buf)
}

/// `Close` a prepared statement.
pub fn close_statement(buf: &mut BytesMut, statement: &str) -> Result<(), Error> {
    frontend::close(b'S', statement, buf).map_err(usage)
}

/// `Close` a portal.
pub fn close_portal(buf: &mut BytesMut, portal: &str) -> Result<(), Error> {
    frontend::close(b'P', portal, buf).map_err(usage)
}

/// `Terminate`: polite goodbye before closing the socket.
pub fn terminate(buf: &mut BytesMut) {
    frontend::terminate(buf)
}

/// `CopyData` carrying `data`.
pub fn copy_data(buf: &mut BytesMut, data: &[u8]) -> Result<(), Error> {
    frontend::CopyData::new(data).map_err(usage)?.write(buf);
    Ok(())
}

/// `CopyDone`: end of COPY FROM STDIN data.
pub fn copy_done(buf: &mut BytesMut) {
    frontend::copy_done(buf)
}

/// `CopyFail`: abort COPY FROM STDIN with `message`.
pub fn copy_fail(buf: &mut BytesMut, message: &str) -> Result<(), Error> {
    frontend::copy_fail(message, buf).map_err(usage)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_bytes() {
        let mut b = BytesMut::new();
        query(&mut b, "SELECT 1").unwrap();
        assert_eq!(&b[..], b"Q\0\0\0\x0dSELECT 1\0");
        assert!(matches!(query(&mut b, "a\0b"), Err(Error::Usage(_))));
    }

    #[test]
    fn extended_batch() {
        let mut b = BytesMut::new();
        parse(&mut b, "", "SELECT $1, $2", &[]).unwrap();
        bind(&mut b, "", "", [Some(&b"42"[..]), None]).unwrap();
        describe_portal(&mut b, "").unwrap();
        execute(&mut b, "", 0).unwrap();
        sync(&mut b);
        // Bind: 'B' len portal\0 stmt\0 nformats(0) nparams(2) [len 2 "42"] [len -1] nres(0)
        let bind_start = 1 + 4 + 14 + 2 + 1;
        let expected_bind: &[u8] = b"B\0\0\0\x16\0\0\0\0\0\x02\0\0\0\x0242\xff\xff\xff\xff\0\0";
        assert_eq!(
            &b[bind_start..bind_start + expected_bind.len()],
            expected_bind
        );
        assert_eq!(&b[b.len() - 5..], b"S\0\0\0\x04");
    }

    #[test]
    fn copy_messages() {
        let mut b = BytesMut::new();
        copy_data(&mut b, b"1\t2\n").unwrap();
        copy_done(&mut b);
        assert_eq!(&b[..], b"d\0\0\0\x081\t2\nc\0\0\0\x04");
    }
}
