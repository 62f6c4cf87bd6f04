//! What a database or a file controls never reaches a terminal raw: a table name, a key, a
//! query text, a server message, a script or variant name read from a result file can hold
//! `ESC ]0;…BEL` (sets the window title), `ESC [2J` (clears the screen) or a newline that
//! forges a report line. Every text renderer and every stderr printer of such text goes
//! through this module: [`escape`] for one value (control characters, newlines included,
//! become visible `\n`, `\x1b`, `\u{202e}`), [`escaped`] for a whole record before it is
//! rendered (each of its strings escaped, map keys too), [`escape_lines`] for text already
//! rendered (its own line breaks kept). JSON keeps the true strings; HTML escapes its own.

use std::borrow::Cow;
use std::fmt::Write;

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

/// Characters a terminal acts on: C0 controls, DEL, C1 controls, and the Unicode format
/// characters that reorder or break what is shown (bidi overrides, line separators).
fn acts_on_terminal(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
                | '\u{2028}' | '\u{2029}'
        )
}

fn push_escaped(out: &mut String, c: char) {
    match c {
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        c if (c as u32) < 0x80 => {
            let _ = write!(out, "\\x{:02x}", c as u32);
        }
        c => {
            let _ = write!(out, "\\u{{{:04x}}}", c as u32);
        }
    }
}

fn escape_where(s: &str, keep: impl Fn(char) -> bool) -> Cow<'_, str> {
    if !s.chars().any(|c| acts_on_terminal(c) && !keep(c)) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if acts_on_terminal(c) && !keep(c) {
            push_escaped(&mut out, c);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// One value for a terminal: every control character shown escaped (a newline too, so it
/// stays on its line).
pub fn escape(s: &str) -> Cow<'_, str> {
    escape_where(s, |_| false)
}

/// Rendered text for a terminal: its line breaks kept, every other control character
/// escaped (the last guard of a printer; the values in it are escaped with [`escape`]).
pub fn escape_lines(s: &str) -> Cow<'_, str> {
    escape_where(s, |c| c == '\n')
}

/// A stream to a terminal (a ladder's progress on stderr): each write has its control
/// characters escaped but line breaks, carriage returns and tabs (the stream's own layout),
/// so a name or message written into it cannot act on the terminal.
pub struct Guard<W: std::io::Write>(pub W);

impl<W: std::io::Write> std::io::Write for Guard<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let layout = |c: char| matches!(c, '\n' | '\r' | '\t');
        match std::str::from_utf8(buf) {
            Ok(s) => self.0.write_all(escape_where(s, layout).as_bytes())?,
            Err(_) => {
                let s = String::from_utf8_lossy(buf);
                self.0.write_all(escape_where(&s, layout).as_bytes())?;
            }
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

/// Whether `v` holds a string a terminal would act on (escapes it in place).
fn escape_value(v: &mut Value) -> bool {
    match v {
        Value::String(s) => match escape(s) {
            Cow::Borrowed(_) => false,
            Cow::Owned(e) => {
                *s = e;
                true
            }
        },
        Value::Array(a) => a.iter_mut().fold(false, |any, x| escape_value(x) | any),
        Value::Object(m) => {
            let mut any = false;
            let entries = std::mem::take(m);
            for (k, mut x) in entries {
                any |= escape_value(&mut x);
                let k = match escape(&k) {
                    Cow::Borrowed(_) => k,
                    Cow::Owned(e) => {
                        any = true;
                        e
                    }
                };
                m.insert(k, x);
            }
            any
        }
        _ => false,
    }
}

/// A record as a terminal may show it: itself when none of its strings holds a control
/// character (the usual case, no copy), else a copy with every string escaped. Should the
/// copy not read back (a value JSON cannot hold), the record is returned as is and the
/// printer's [`escape_lines`] still keeps every escape sequence off the terminal.
pub fn escaped<T: Serialize + DeserializeOwned + Clone>(v: &T) -> Cow<'_, T> {
    let Ok(mut value) = serde_json::to_value(v) else {
        return Cow::Borrowed(v);
    };
    if !escape_value(&mut value) {
        return Cow::Borrowed(v);
    }
    match serde_json::from_value(value) {
        Ok(t) => Cow::Owned(t),
        Err(_) => Cow::Borrowed(v),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_sequences_and_newlines_are_shown_not_acted_on() {
        let hostile = "t\u{1b}]0;owned\u{7}\u{1b}[2J\nfindings: none\r\t\u{9b}x\u{202e}";
        let e = escape(hostile);
        assert!(!e.chars().any(acts_on_terminal), "{e}");
        assert_eq!(
            e,
            "t\\x1b]0;owned\\x07\\x1b[2J\\nfindings: none\\r\\t\\u{009b}x\\u{202e}"
        );
        assert_eq!(escape_lines("a\u{1b}[2J\nb"), "a\\x1b[2J\nb");
        assert!(matches!(escape("plain ünïcode ✔"), Cow::Borrowed(_)));
        let mut g = Guard(Vec::new());
        std::io::Write::write_all(&mut g, "v\u{1b}[2J: 3 s…\r\n".as_bytes()).expect("write");
        assert_eq!(String::from_utf8_lossy(&g.0), "v\\x1b[2J: 3 s…\r\n");
    }

    #[test]
    fn every_string_of_a_record_is_escaped_and_a_clean_one_is_not_copied() {
        use std::collections::BTreeMap;
        #[derive(Serialize, serde::Deserialize, Clone, PartialEq, Debug)]
        struct R {
            name: String,
            rows: Vec<(String, f64)>,
            by: BTreeMap<String, Option<String>>,
        }
        let clean = R {
            name: "accounts".into(),
            rows: vec![("k".into(), 1.5)],
            by: BTreeMap::from([("a".into(), Some("b".into()))]),
        };
        assert!(matches!(escaped(&clean), Cow::Borrowed(_)));
        let hostile = R {
            name: "acc\u{1b}[2J".into(),
            rows: vec![("k\n".into(), 1.5)],
            by: BTreeMap::from([("a\u{7}".into(), Some("\u{1b}]0;x".into()))]),
        };
        let e = escaped(&hostile).into_owned();
        assert_eq!(e.name, "acc\\x1b[2J");
        assert_eq!(e.rows, vec![("k\\n".to_string(), 1.5)]);
        assert_eq!(e.by.get("a\\x07"), Some(&Some("\\x1b]0;x".to_string())));
    }

    /// The records the terminal reports render read back escaped (no field JSON cannot hold
    /// in a fresh one), so the copy is used, not the raw record.
    #[test]
    fn result_records_round_trip_escaped() {
        let mut run = crate::RunRecord::default();
        run.notes.push("n\u{1b}[2J".into());
        assert_eq!(escaped(&run).notes, ["n\\x1b[2J"]);
        let mut d = crate::Diagnosis::default();
        d.notes.push("n\nforged".into());
        assert_eq!(escaped(&d).notes, ["n\\nforged"]);
        let l = crate::Ladder {
            title: "t\u{7}".into(),
            ..Default::default()
        };
        assert_eq!(escaped(&l).title, "t\\x07");
        let sweep = crate::sweep_record::SweepDoc::new(vec![run]);
        assert!(matches!(escaped(&sweep), Cow::Owned(_)));
    }
}
