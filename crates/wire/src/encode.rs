//! Frontend messages appended to a caller's reusable `BytesMut`.
//!
//! Thin wrappers over `postgres_protocol::message::frontend` so a whole transaction
//! (Parse/Bind/Execute/Sync, or one Query) is batched into one buffer and one `write`.
//! Bind, Execute and Sync, sent with every command, are written here directly, each sized
//! first and filled in one go (the generic encoder's per-field growth checks and `memcpy`
//! calls were most of the client's encoding cost; the tests compare the bytes with it).
//! Parameters are text format, written from byte slices (`None` = NULL). The only failure
//! is invalid input (a NUL byte inside a string, too many parameters): [`Error::Usage`].

use bytes::BytesMut;
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

/// Refuses a string that cannot be sent as a C string (a NUL inside).
fn check_cstr(s: &str) -> Result<(), Error> {
    // The unnamed portal, in every Bind and Execute, skips the search.
    if !s.is_empty() && s.as_bytes().contains(&0) {
        return Err(Error::Usage("string contains embedded null".to_string()));
    }
    Ok(())
}

/// Writes fields into a message's bytes, sized beforehand: fixed-size fields compile to
/// plain stores instead of one growth check and `memcpy` call each.
struct Cursor<'a> {
    dst: &'a mut [u8],
    at: usize,
}

impl Cursor<'_> {
    #[inline(always)]
    fn put(&mut self, bytes: &[u8]) {
        self.dst[self.at..self.at + bytes.len()].copy_from_slice(bytes);
        self.at += bytes.len();
    }

    #[inline(always)]
    fn cstr(&mut self, s: &str) {
        self.put(s.as_bytes());
        self.put(&[0]);
    }
}

/// `Bind` with all parameters and results in text format. On error nothing is appended.
pub fn bind<'a, I>(
    buf: &mut BytesMut,
    portal: &str,
    statement: &str,
    params: I,
) -> Result<(), Error>
where
    I: IntoIterator<Item = Option<&'a [u8]>>,
    I::IntoIter: Clone,
{
    check_cstr(portal)?;
    check_cstr(statement)?;
    let params = params.into_iter();
    let (mut count, mut values) = (0usize, 0usize);
    for p in params.clone() {
        count += 1;
        values += 4 + p.map_or(0, <[u8]>::len);
    }
    let count = i16::try_from(count)
        .map_err(|_| Error::Usage("too many parameters (at most 32767)".to_string()))?;
    // Length field, names, format codes (none), count, values, result formats (none).
    let len = 4 + portal.len() + 1 + statement.len() + 1 + 2 + 2 + values + 2;
    let len32 =
        i32::try_from(len).map_err(|_| Error::Usage("value too large to transmit".to_string()))?;
    let start = buf.len();
    buf.resize(start + 1 + len, 0);
    let mut w = Cursor {
        dst: &mut buf[start..],
        at: 0,
    };
    w.put(b"B");
    w.put(&len32.to_be_bytes());
    w.cstr(portal);
    w.cstr(statement);
    w.put(&0i16.to_be_bytes());
    w.put(&count.to_be_bytes());
    for p in params {
        match p {
            // Each value is shorter than the whole message, which fits an i32.
            Some(v) => {
                w.put(&(v.len() as i32).to_be_bytes());
                w.put(v);
            }
            None => w.put(&(-1i32).to_be_bytes()),
        }
    }
    w.put(&0i16.to_be_bytes());
    debug_assert_eq!(w.at, 1 + len);
    Ok(())
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
    check_cstr(portal)?;
    let len = 4 + portal.len() + 1 + 4;
    let len32 = i32::try_from(len).map_err(|_| Error::Usage("portal name too long".to_string()))?;
    let start = buf.len();
    buf.resize(start + 1 + len, 0);
    let mut w = Cursor {
        dst: &mut buf[start..],
        at: 0,
    };
    w.put(b"E");
    w.put(&len32.to_be_bytes());
    w.cstr(portal);
    w.put(&max_rows.to_be_bytes());
    Ok(())
}

/// `Sync`: ends an extended-protocol batch; the server answers ReadyForQuery.
pub fn sync(buf: &mut BytesMut) {
    buf.extend_from_slice(b"S\0\0\0\x04");
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

    /// The hand-written Bind, Execute and Sync match postgres_protocol's encoder byte for byte.
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
            sync(&mut ours);
            frontend::sync(&mut theirs);
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
