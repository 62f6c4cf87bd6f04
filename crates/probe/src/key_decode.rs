//! Hot rows' key values decoded by hotbench from the server's binary format. A value in text
//! format would be written by its type's output function, and a value cast to text by its
//! cast: for a user-defined type (or a cast somebody created) that is code its owner wrote,
//! run as whoever reads. So key columns are read in binary, only those of built-in types (and
//! enums, whose binary form is the label, written by the server's own `enum_send`), and
//! decoded here (the common types as PostgreSQL writes them, the others as bytes); a
//! user-defined type is never selected. Pure, tested without a server.

use std::fmt::Write as _;

/// The first OID a user object can have (`FirstNormalObjectId`): below it, the server's own.
pub const FIRST_NORMAL_OID: u32 = 16384;

/// Whether a value of type `oid` (after domains, resolved to their base type) with
/// `pg_type.typtype` `typtype` may be selected in binary: a built-in type (its `send`
/// function, and those of any element, subtype or field it holds, are the server's own),
/// or an enum (its label, written by `enum_send`). The types [`decode`] knows come back as
/// text, other built-in ones as their bytes.
pub fn readable(oid: u32, typtype: &str) -> bool {
    typtype == "e" || oid < FIRST_NORMAL_OID
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Bool,
    Bytes,
    Char,
    Text,
    /// `char(n)`: sent padded; shown as its cast to text shows it, without the padding.
    Padded,
    Int2,
    Int4,
    Int8,
    Oid,
    Float4,
    Float8,
    Date,
    Timestamp,
    TimestampTz,
    Numeric,
    Uuid,
}

fn decoder(oid: u32) -> Option<Kind> {
    Some(match oid {
        16 => Kind::Bool,
        17 => Kind::Bytes,
        18 => Kind::Char,
        19 | 25 | 1043 => Kind::Text,
        1042 => Kind::Padded,
        20 => Kind::Int8,
        21 => Kind::Int2,
        23 => Kind::Int4,
        26 => Kind::Oid,
        700 => Kind::Float4,
        701 => Kind::Float8,
        1082 => Kind::Date,
        1114 => Kind::Timestamp,
        1184 => Kind::TimestampTz,
        1700 => Kind::Numeric,
        2950 => Kind::Uuid,
        _ => return None,
    })
}

/// The value of a column whose base type is `oid` (`typtype` as in [`readable`]) as text
/// (PostgreSQL's text form for the decoded types; timestamps with time zone in UTC), or its
/// bytes as hex (`\x…`) when they do not decode.
pub fn decode(oid: u32, typtype: &str, v: &[u8]) -> String {
    let kind = if typtype == "e" {
        Some(Kind::Text)
    } else {
        decoder(oid)
    };
    kind.and_then(|k| decode_kind(k, v))
        .unwrap_or_else(|| hex(v))
}

fn hex(v: &[u8]) -> String {
    let mut s = String::with_capacity(2 + 2 * v.len());
    s.push_str("\\x");
    for b in v {
        let _ = write!(s, "{b:02x}");
    }
    s
}

fn be<const N: usize>(v: &[u8]) -> Option<[u8; N]> {
    v.try_into().ok()
}

fn decode_kind(k: Kind, v: &[u8]) -> Option<String> {
    Some(match k {
        Kind::Bool => match v {
            [0] => "false".into(),
            [1] => "true".into(),
            _ => return None,
        },
        Kind::Bytes => hex(v),
        Kind::Char | Kind::Text => String::from_utf8_lossy(v).into_owned(),
        Kind::Padded => String::from_utf8_lossy(v).trim_end_matches(' ').to_string(),
        Kind::Int2 => i16::from_be_bytes(be(v)?).to_string(),
        Kind::Int4 => i32::from_be_bytes(be(v)?).to_string(),
        Kind::Int8 => i64::from_be_bytes(be(v)?).to_string(),
        Kind::Oid => u32::from_be_bytes(be(v)?).to_string(),
        Kind::Float4 => f32::from_be_bytes(be(v)?).to_string(),
        Kind::Float8 => f64::from_be_bytes(be(v)?).to_string(),
        Kind::Date => date(i32::from_be_bytes(be(v)?)),
        Kind::Timestamp => timestamp(i64::from_be_bytes(be(v)?))?,
        Kind::TimestampTz => {
            let t = timestamp(i64::from_be_bytes(be(v)?))?;
            if t.ends_with("infinity") {
                t
            } else {
                t + "+00"
            }
        }
        Kind::Numeric => numeric(v)?,
        Kind::Uuid => {
            let b: [u8; 16] = be(v)?;
            let h = hex(&b);
            let h = &h[2..];
            format!(
                "{}-{}-{}-{}-{}",
                &h[..8],
                &h[8..12],
                &h[12..16],
                &h[16..20],
                &h[20..]
            )
        }
    })
}

/// `YYYY-MM-DD` of a day count from 2000-01-01 (PostgreSQL's epoch).
fn date(days: i32) -> String {
    match days {
        i32::MIN => "-infinity".into(),
        i32::MAX => "infinity".into(),
        d => {
            let (y, m, day) = civil(i64::from(d) + 10957);
            if y <= 0 {
                format!("{:04}-{m:02}-{day:02} BC", 1 - y)
            } else {
                format!("{y:04}-{m:02}-{day:02}")
            }
        }
    }
}

/// `YYYY-MM-DD HH:MM:SS[.ffffff]` of microseconds from 2000-01-01 00:00.
fn timestamp(us: i64) -> Option<String> {
    match us {
        i64::MIN => return Some("-infinity".into()),
        i64::MAX => return Some("infinity".into()),
        _ => {}
    }
    let days = us.div_euclid(86_400_000_000);
    let rest = us.rem_euclid(86_400_000_000);
    let d = date(i32::try_from(days).ok()?);
    let (bc, d) = match d.strip_suffix(" BC") {
        Some(d) => (" BC", d.to_string()),
        None => ("", d),
    };
    let (s, frac) = (rest / 1_000_000, rest % 1_000_000);
    let mut t = format!("{d} {:02}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60);
    if frac != 0 {
        let f = format!("{frac:06}");
        t.push('.');
        t.push_str(f.trim_end_matches('0'));
    }
    t.push_str(bc);
    Some(t)
}

/// (year, month, day) of days since 1970-01-01 (proleptic Gregorian; H. Hinnant's algorithm).
fn civil(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// A `numeric` from its binary form: digit count, weight, sign, display scale, then base
/// 10,000 digits.
fn numeric(v: &[u8]) -> Option<String> {
    let word =
        |i: usize| -> Option<i16> { Some(i16::from_be_bytes(be(v.get(2 * i..2 * i + 2)?)?)) };
    let (n, weight, sign, dscale) = (word(0)?, word(1)?, word(2)? as u16, word(3)?);
    match sign {
        0xC000 => return Some("NaN".into()),
        0xD000 => return Some("Infinity".into()),
        0xF000 => return Some("-Infinity".into()),
        0x0000 | 0x4000 => {}
        _ => return None,
    }
    let n = usize::try_from(n).ok()?;
    if v.len() != 8 + 2 * n || !(0..=1000).contains(&dscale) || !(-1000..=1000).contains(&weight) {
        return None;
    }
    let digits: Vec<i16> = (0..n).map(|i| word(4 + i)).collect::<Option<_>>()?;
    if digits.iter().any(|d| !(0..10_000).contains(d)) {
        return None;
    }
    let digit = |i: i32| -> i16 {
        usize::try_from(i)
            .ok()
            .and_then(|i| digits.get(i))
            .copied()
            .unwrap_or(0)
    };
    let mut s = String::new();
    if sign == 0x4000 {
        s.push('-');
    }
    let weight = i32::from(weight);
    if weight < 0 {
        s.push('0');
    } else {
        let _ = write!(s, "{}", digit(0));
        for i in 1..=weight {
            let _ = write!(s, "{:04}", digit(i));
        }
    }
    if dscale > 0 {
        s.push('.');
        let mut frac = String::new();
        let mut i = weight + 1;
        while frac.len() < dscale as usize {
            let _ = write!(frac, "{:04}", digit(i));
            i += 1;
        }
        frac.truncate(dscale as usize);
        s.push_str(&frac);
    }
    Some(s)
}

/// `name` as an SQL identifier, always quoted (`"` doubled): whatever the name holds, it
/// stays one identifier.
pub fn quote_ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn num(words: &[i16]) -> Vec<u8> {
        words.iter().flat_map(|w| w.to_be_bytes()).collect()
    }

    #[test]
    fn builtin_types_decode_as_postgres_writes_them() {
        assert_eq!(decode(23, "b", &42i32.to_be_bytes()), "42");
        assert_eq!(decode(20, "b", &(-7i64).to_be_bytes()), "-7");
        assert_eq!(decode(21, "b", &3i16.to_be_bytes()), "3");
        assert_eq!(decode(16, "b", &[1]), "true");
        assert_eq!(decode(25, "b", b"a\x01b"), "a\u{1}b");
        assert_eq!(decode(1043, "b", "é".as_bytes()), "é");
        assert_eq!(decode(1042, "b", b"ab   "), "ab");
        assert_eq!(decode(99999, "e", b"gold"), "gold");
        assert_eq!(decode(1082, "b", &0i32.to_be_bytes()), "2000-01-01");
        assert_eq!(decode(1082, "b", &9828i32.to_be_bytes()), "2026-11-28");
        assert_eq!(
            decode(1082, "b", &(-730_119i32).to_be_bytes()),
            "0001-01-01"
        );
        assert_eq!(decode(1082, "b", &i32::MAX.to_be_bytes()), "infinity");
        let ts = 86_400_000_000i64 + 3_723_500_000;
        assert_eq!(
            decode(1114, "b", &ts.to_be_bytes()),
            "2000-01-02 01:02:03.5"
        );
        assert_eq!(
            decode(1184, "b", &0i64.to_be_bytes()),
            "2000-01-01 00:00:00+00"
        );
        let u: Vec<u8> = (0u8..16).collect();
        assert_eq!(
            decode(2950, "b", &u),
            "00010203-0405-0607-0809-0a0b0c0d0e0f"
        );
        assert_eq!(decode(17, "b", &[0xde, 0xad]), "\\xdead");
        // A wrong length for the type: the bytes, not a panic.
        assert_eq!(decode(23, "b", &[1, 2]), "\\x0102");
    }

    #[test]
    fn numerics_decode_with_their_scale_and_sign() {
        // 12345.678: digits 1, 2345, 6780; weight 1; dscale 3.
        assert_eq!(
            decode(1700, "b", &num(&[3, 1, 0, 3, 1, 2345, 6780])),
            "12345.678"
        );
        // -0.05: digit 500 at weight -1; dscale 2.
        assert_eq!(decode(1700, "b", &num(&[1, -1, 0x4000, 2, 500])), "-0.05");
        // 20000: one digit 2 at weight 1 (trailing zero digits are not sent).
        assert_eq!(decode(1700, "b", &num(&[1, 1, 0, 0, 2])), "20000");
        assert_eq!(decode(1700, "b", &num(&[0, 0, 0, 0])), "0");
        assert_eq!(decode(1700, "b", &num(&[0, 0, 0xC000u16 as i16, 0])), "NaN");
        assert!(decode(1700, "b", &num(&[5, 0, 0, 0, 1])).starts_with("\\x"));
    }

    #[test]
    fn only_builtin_types_and_enums_are_readable() {
        assert!(readable(23, "b") && readable(16500, "e"));
        assert!(
            readable(3904, "r") && readable(1007, "b"),
            "built-in range and array"
        );
        assert!(!readable(16500, "b"), "a user-defined base type");
        assert!(!readable(16501, "r"), "a user-defined range");
        assert!(!readable(16502, "c"), "a composite type");
        // A built-in type without a decoder: its bytes.
        assert_eq!(decode(869, "b", &[2, 32, 0, 4]), "\\x02200004");
    }

    #[test]
    fn identifiers_are_always_quoted() {
        assert_eq!(quote_ident("Accounts"), "\"Accounts\"");
        assert_eq!(quote_ident("a\"b.c"), "\"a\"\"b.c\"");
    }
}
