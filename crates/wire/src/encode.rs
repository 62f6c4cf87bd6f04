//! Frontend messages appended to a caller's reusable `BytesMut`.
//!
//! Thin wrappers over `postgres_protocol::message::frontend` so a whole transaction
//! (Parse/Bind/Execute/Sync, or one Query) is batched into one buffer and one `write`.
//! Bind and Execute, sent with every command, are written here directly (a third of the
//! instructions of the generic encoder; the tests compare the bytes with it).
//! Parameters are text format, written from byte slices (`None` = NULL). The only failure
//! is invalid input (a NUL byte inside a string, too many parameters): [`Error::Usage`].

use bytes::{BufMut, BytesMut};
use postgres_protocol::message::frontend;

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

/// Appends `s` and its NUL terminator; a NUL inside `s` is refused.
fn put_cstr(buf: &mut BytesMut, s: &str) -> Result<(), Error> {
    if s.as_bytes().contains(&0) {
        return Err(Error::Usage("string contains embedded null".to_string()));
    }
    buf.extend_from_slice(s.as_bytes());
    buf.put_u8(0);
    Ok(())
}

/// Writes the length of the message that starts (type byte) at `start` into its header.
fn patch_length(buf: &mut BytesMut, start: usize) -> Result<(), Error> {
    let len = i32::try_from(buf.len() - start - 1)
        .map_err(|_| Error::Usage("message too large".to_string()))?;
    buf[start + 1..start + 5].copy_from_slice(&len.to_be_bytes());
    Ok(())
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
    let start = buf.len();
    let written = write_bind(buf, start, portal, statement, params);
    if written.is_err() {
        // Leave the buffer as it was: nothing half-written is ever sent.
        buf.truncate(start);
    }
    written
}

fn write_bind<'a, I>(
    buf: &mut BytesMut,
    start: usize,
    portal: &str,
    statement: &str,
    params: I,
) -> Result<(), Error>
where
    I: IntoIterator<Item = Option<&'a [u8]>>,
{
    buf.put_u8(b'B');
    buf.put_i32(0);
    put_cstr(buf, portal)?;
    put_cstr(buf, statement)?;
    buf.put_i16(0); // no parameter format codes: all text
    let count_at = buf.len();
    buf.put_i16(0);
    let mut count = 0usize;
    for p in params {
        match p {
            Some(v) => {
                let len = i32::try_from(v.len())
                    .map_err(|_| Error::Usage("value too large to transmit".to_string()))?;
                buf.put_i32(len);
                buf.extend_from_slice(v);
            }
            None => buf.put_i32(-1),
        }
        count += 1;
    }
    let count = i16::try_from(count)
        .map_err(|_| Error::Usage("too many parameters (at most 32767)".to_string()))?;
    buf[count_at..count_at + 2].copy_from_slice(&count.to_be_bytes());
    buf.put_i16(0); // no result format codes: all text
    patch_length(buf, start)
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
    let start = buf.len();
    buf.put_u8(b'E');
    buf.put_i32(0);
    if let Err(e) = put_cstr(buf, portal) {
        buf.truncate(start);
        return Err(e);
    }
    buf.put_i32(max_rows);
    patch_length(buf, start)
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
    use postgres_protocol::IsNull;

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

    /// The hand-written Bind and Execute match postgres_protocol's encoder byte for byte.
    #[test]
    fn bind_and_execute_match_the_generic_encoder() {
        let big = vec![b'x'; 70_000];
        type Case<'a> = (&'a str, &'a str, Vec<Option<&'a [u8]>>);
        let cases: Vec<Case> = vec![
            ("", "", vec![]),
            ("", "P0_0_1", vec![Some(b"42"), None, Some(b"")]),
            (
                "portal",
                "stmt",
                vec![Some(&big[..]), Some("été".as_bytes())],
            ),
        ];
        for (portal, stmt, params) in cases {
            let mut ours = BytesMut::from(&b"prefix"[..]);
            bind(&mut ours, portal, stmt, params.iter().copied()).unwrap();
            execute(&mut ours, portal, 7).unwrap();
            let mut theirs = BytesMut::from(&b"prefix"[..]);
            frontend::bind(
                portal,
                stmt,
                std::iter::empty(),
                params.iter().copied(),
                |p, buf| match p {
                    Some(v) => {
                        buf.extend_from_slice(v);
                        Ok(IsNull::No)
                    }
                    None => Ok(IsNull::Yes),
                },
                std::iter::empty(),
                &mut theirs,
            )
            .unwrap_or_else(|_| panic!("postgres_protocol refused the bind"));
            frontend::execute(portal, 7, &mut theirs).unwrap();
            assert_eq!(ours, theirs, "portal {portal:?} statement {stmt:?}");
        }
    }

    #[test]
    fn bind_refuses_bad_input_and_leaves_the_buffer_alone() {
        let mut b = BytesMut::from(&b"kept"[..]);
        assert!(matches!(
            bind(&mut b, "", "a\0b", [None]),
            Err(Error::Usage(_))
        ));
        assert!(matches!(execute(&mut b, "p\0", 0), Err(Error::Usage(_))));
        let many = std::iter::repeat_n(None, 40_000);
        assert!(matches!(bind(&mut b, "", "", many), Err(Error::Usage(_))));
        assert_eq!(&b[..], b"kept");
    }

    #[test]
    fn copy_messages() {
        let mut b = BytesMut::new();
        copy_data(&mut b, b"1\t2\n").unwrap();
        copy_done(&mut b);
        assert_eq!(&b[..], b"d\0\0\0\x081\t2\nc\0\0\0\x04");
    }
}
