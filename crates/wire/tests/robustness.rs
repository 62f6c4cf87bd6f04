//! Malformed server bytes never panic: the message reader and body parsers on random
//! input (proptest), and whole connections against a fake server that answers garbage.

use std::io::{Read, Write};
use std::net::TcpListener;

use hotbench_wire::fallible_iterator::FallibleIterator;
use hotbench_wire::{Config, Connection, DbError, Environment, Message, MessageReader};
use proptest::prelude::*;

/// Pops every message and walks every body the way the crate's users do.
fn drain(reader: &mut MessageReader) {
    loop {
        match reader.next_message() {
            Ok(Some(m)) => walk(m),
            Ok(None) | Err(_) => return,
        }
    }
}

fn walk(m: Message) {
    match m {
        Message::DataRow(b) => {
            let buf = b.buffer();
            let mut r = b.ranges();
            while let Ok(Some(range)) = r.next() {
                if let Some(range) = range {
                    let _ = buf.get(range);
                }
            }
        }
        Message::RowDescription(b) => {
            let mut f = b.fields();
            while let Ok(Some(field)) = f.next() {
                let _ = field.name();
            }
        }
        Message::ErrorResponse(b) => {
            let _ = DbError::from_error_response(&b).map(|e| e.to_string());
        }
        Message::NoticeResponse(b) => {
            let _ = DbError::from_notice_response(&b);
        }
        Message::CommandComplete(b) => {
            let _ = b.tag();
        }
        Message::ParameterStatus(b) => {
            let _ = (b.name(), b.value());
        }
        Message::AuthenticationSasl(b) => {
            let mut m = b.mechanisms();
            while let Ok(Some(_)) = m.next() {}
        }
        _ => {}
    }
}

/// A well-formed-looking message frame with a valid tag and random body.
fn framed() -> impl Strategy<Value = Vec<u8>> {
    (
        prop::sample::select(b"123ACDEGHIKNRSTZcdnst".to_vec()),
        prop::collection::vec(any::<u8>(), 0..64),
    )
        .prop_map(|(tag, body)| {
            let mut v = vec![tag];
            v.extend_from_slice(&((body.len() + 4) as u32).to_be_bytes());
            v.extend_from_slice(&body);
            v
        })
}

proptest! {
    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        let mut r = MessageReader::new();
        r.extend(&bytes);
        drain(&mut r);
    }

    #[test]
    fn random_frames_never_panic(frames in prop::collection::vec(framed(), 0..16), split in 0usize..512) {
        let all: Vec<u8> = frames.concat();
        let split = split.min(all.len());
        let mut r = MessageReader::new();
        r.extend(&all[..split]);
        drain(&mut r);
        r.extend(&all[split..]);
        drain(&mut r);
    }
}

fn read_startup(s: &mut std::net::TcpStream) -> std::io::Result<()> {
    let mut len = [0u8; 4];
    s.read_exact(&mut len)?;
    let n = u32::from_be_bytes(len) as usize;
    let mut rest = vec![0u8; n.saturating_sub(4)];
    s.read_exact(&mut rest)
}

/// A fake server: accepts one connection, answers start-up with `startup_reply`, then
/// answers the first query with `query_reply` (if any) and closes.
fn fake_server(startup_reply: Vec<u8>, query_reply: Vec<u8>) -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let Ok((mut s, _)) = l.accept() else { return };
        let _ = s.set_read_timeout(Some(std::time::Duration::from_secs(5)));
        if read_startup(&mut s).is_err() {
            return;
        }
        let _ = s.write_all(&startup_reply);
        if query_reply.is_empty() {
            return;
        }
        let mut buf = [0u8; 1024];
        let _ = s.read(&mut buf);
        let _ = s.write_all(&query_reply);
    });
    port
}

const GOOD_STARTUP: &[u8] = b"R\0\0\0\x08\0\0\0\0K\0\0\0\x0c\0\0\0\x01\0\0\0\x02Z\0\0\0\x05I";

fn connect(port: u16) -> Result<Connection, hotbench_wire::Error> {
    let env = Environment {
        os_user: Some("u".into()),
        ..Environment::default()
    };
    let p = Config::parse(&format!(
        "host=127.0.0.1 port={port} sslmode=disable connect_timeout=5"
    ))?
    .resolve_in(&env)?;
    Connection::connect(&p)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn garbage_during_startup_is_an_error(reply in prop::collection::vec(any::<u8>(), 0..256)) {
        let port = fake_server(reply.clone(), Vec::new());
        // Never a panic or a hang, and never a connection: random bytes are not an
        // authentication exchange ending in ReadyForQuery.
        prop_assert!(connect(port).is_err(), "connected on {:?}", reply);
    }

    #[test]
    fn garbage_query_reply_is_an_error(
        frames in prop::collection::vec(framed(), 0..8),
        tail in prop::collection::vec(any::<u8>(), 0..64),
    ) {
        let mut reply = frames.concat();
        reply.extend_from_slice(&tail);
        let port = fake_server(GOOD_STARTUP.to_vec(), reply);
        let mut c = connect(port).expect("fake start-up succeeds");
        prop_assert_eq!(c.backend_pid(), 1);
        let _ = c.simple_query("SELECT 1");
        let _ = c.simple_query("SELECT 1");
    }
}

proptest! {
    /// Any string: parse never panics; what parses prints back to an equal configuration
    /// in both forms, and the masked forms never contain the password.
    #[test]
    fn conninfo_and_url_parsing_never_panic(
        s in prop_oneof![
            any::<String>(),
            "[a-z_]{1,12}=('[^']{0,8}'|[^ ]{0,8})( [a-z_]{1,12}=[^ ]{0,8}){0,3}",
            "postgres(ql)?://[^/?]{0,20}(/[^?]{0,10})?(\\?[a-z_=&%0-9A-F]{0,30})?",
        ]
    ) {
        if let Ok(c) = Config::parse(&s) {
            let back = Config::parse(&c.to_conninfo_string()).expect("conninfo round trip");
            prop_assert_eq!(back.pairs(), c.pairs());
            let back = Config::parse(&c.to_url_string()).expect("URL round trip");
            prop_assert_eq!(back.pairs(), c.pairs());
            if let Some(pw) = c.password.as_deref().filter(|p| p.len() > 3) {
                prop_assert!(!c.masked().contains(pw) || c.pairs().iter().any(|(k, v)| *k != "password" && v.contains(pw)));
            }
        }
    }
}

/// A password token: letters no other part of the generated strings uses, so finding it in
/// a message can only mean the password leaked.
fn secret() -> impl Strategy<Value = String> {
    "[QXJ][QXJ0-9]{7,11}"
}

/// Hostile URL text around the password: brackets, colons, `@`, `/`, `?`, `%` and quotes.
fn url_noise() -> impl Strategy<Value = String> {
    "[a-z0-9:@/\\[\\]?&=%,. ']{0,24}"
}

/// Connection strings that carry a password as the parser reads it (URL credentials, a
/// URL's `password=`, a conninfo `password=`, with malformed text after it), paired with
/// the password and, for an unquoted password followed by a word, that word too (the rest
/// of a password with a space).
fn with_password() -> impl Strategy<Value = (String, Vec<String>)> {
    prop_oneof![
        ("[a-z]{0,6}", secret(), url_noise()).prop_map(|(user, pw, tail)| {
            (format!("postgresql://{user}:{pw}@{tail}"), vec![pw])
        }),
        (url_noise(), secret(), url_noise()).prop_map(|(head, pw, tail)| {
            (
                format!("postgres://h/d?{head}&password={pw}&{tail}"),
                vec![pw],
            )
        }),
        (
            "([a-z_]{1,8}=[a-z0-9]{0,6} ){0,3}",
            secret(),
            "[ a-z0-9=']{0,16}"
        )
            .prop_map(|(head, pw, tail)| (format!("{head}password={pw} {tail}"), vec![pw])),
        (
            "[a-z_]{1,8}=[a-z0-9]{0,6} ",
            secret(),
            secret(),
            "[ a-z0-9=']{0,12}"
        )
            .prop_map(|(head, a, b, tail)| (format!("{head}password={a} {b}{tail}"), vec![a, b])),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// Issue 29, row 12: whatever follows a password (a malformed host, an unclosed `[`,
    /// stray characters), no error message and no masked form contains it.
    #[test]
    fn a_password_never_appears_in_a_message((s, secrets) in with_password()) {
        let env = Environment {
            os_user: Some("u".into()),
            ..Environment::default()
        };
        let shown = match Config::parse(&s) {
            Err(e) => e.to_string(),
            Ok(c) => {
                let mut shown = format!("{}\n{}", c.masked(), c.masked_url());
                if let Err(e) = c.resolve_in(&env) {
                    shown.push_str(&e.to_string());
                }
                shown
            }
        };
        for pw in &secrets {
            prop_assert!(!shown.contains(pw.as_str()), "{s:?} showed {pw:?}: {shown}");
        }
    }
}

#[test]
fn malformed_urls_never_print_their_password() {
    for s in [
        "postgresql://u:pw5ecret@[::1:5432/db",
        "postgresql://u:pw5ecret@[]",
        "postgresql://u:pw5ecret@[::1]x",
        "postgresql://u:pw5ecret@h:5432x/db",
        "postgresql://h/db?password=pw5ecret%zz",
        "postgresql://h/db?password=pw5ecret&sslmode=bogus",
        "host=h password=pw5 ecret",
    ] {
        let e = match Config::parse(s) {
            Err(e) => e.to_string(),
            Ok(c) => c
                .resolve_in(&Environment::default())
                .expect_err(s)
                .to_string(),
        };
        assert!(!e.contains("pw5ecret") && !e.contains("ecret"), "{s}: {e}");
    }
}
