//! `--redact`: every captured value (a statement's literal, a most-common value, a string in
//! a histogram, a hot key) replaced by a generated one of the same type, so a capture can
//! leave the building. The mapping is a keyed permutation, deterministic for a key: the same
//! value maps to the same generated value wherever it appears (a hot key in a script, in
//! `data.sql`'s rows that must exist, in a child table's foreign key column), and different
//! values stay different (numbers, dates, UUIDs exactly; strings up to a 64-bit hash), so the
//! hottest key stays one key and keeps its share.
//!
//! What is kept: a number keeps its sign, its count of digits and where its decimal point
//! is (so its magnitude, and a value stays within its type's range); a date or timestamp
//! moves by one whole number of days, the same for every value of a key (order and spacing
//! kept); a string keeps its length; booleans and enum labels are kept (they are the
//! schema's, not the data's). Numbers' and times' histogram bounds are not redacted: they
//! are the distribution. The keyed permutation hides values from a reader of the capture;
//! it is not encryption (a short string can be guessed by trying every value).

use crate::model::ValueKind;
use crate::sqltext::{array_text, parse_array};

/// Replaces values of a kind with generated ones, the same way for the same key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Redactor {
    key: u64,
}

impl Redactor {
    pub fn new(seed: u64) -> Redactor {
        Redactor {
            key: mix(seed ^ 0x7265_6461_6374_6564),
        }
    }

    /// The generated value standing for `text`, a value of `kind` as PostgreSQL prints it;
    /// `None` for a kind no generated value can stand in for (the caller leaves the value
    /// out: never writes the original).
    pub fn value(&self, kind: &ValueKind, text: &str) -> Option<String> {
        match kind {
            ValueKind::Bool | ValueKind::Enum { .. } => Some(text.to_string()),
            ValueKind::Int { min, max } => self.int(text, *min, *max),
            ValueKind::Decimal => Some(self.decimal(text)),
            ValueKind::Text => Some(self.text(text)),
            ValueKind::Uuid => Some(self.uuid(text)),
            ValueKind::Date | ValueKind::Timestamp | ValueKind::TimestampTz => self.date(text),
            ValueKind::Json => Some(format!("\"r{:016x}\"", self.hash(b"json", text))),
            ValueKind::Bytea => Some(self.bytea(text)),
            ValueKind::Array(elem) => {
                let items = parse_array(text)?;
                let mut out = Vec::with_capacity(items.len());
                for item in items {
                    out.push(match item {
                        None => None,
                        Some(v) => Some(self.value(elem, &v)?),
                    });
                }
                Some(array_text(&out))
            }
            ValueKind::Other => None,
        }
    }

    /// Whether [`Redactor::value`] has a generated value for `kind`.
    pub fn handles(kind: &ValueKind) -> bool {
        match kind {
            ValueKind::Other => false,
            ValueKind::Array(e) => Redactor::handles(e),
            _ => true,
        }
    }

    fn hash(&self, domain: &[u8], text: &str) -> u64 {
        let mut h = self.key ^ 0xcbf2_9ce4_8422_2325;
        for b in domain.iter().chain([0u8].iter()).chain(text.as_bytes()) {
            h ^= u64::from(*b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        mix(h)
    }

    fn int(&self, text: &str, min: i128, max: i128) -> Option<String> {
        let t = text.trim();
        let (neg, digits) = match t.strip_prefix('-') {
            Some(d) => (true, d),
            None => (false, t.strip_prefix('+').unwrap_or(t)),
        };
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let fits = |d: &str| {
            let v: i128 = d.parse().unwrap_or(i128::MAX);
            let v = if neg { -v } else { v };
            v >= min && v <= max
        };
        let mut y = self.digits(digits);
        let mut steps = 0;
        while !fits(&y) {
            steps += 1;
            if steps > 100_000 {
                return None;
            }
            y = self.digits(&y);
        }
        Some(if neg { format!("-{y}") } else { y })
    }

    fn decimal(&self, text: &str) -> String {
        let t = text.trim();
        let (mantissa, exp) = match t.find(['e', 'E']) {
            Some(i) => (&t[..i], &t[i..]),
            None => (t, ""),
        };
        let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
        if digits.is_empty() {
            return t.to_string(); // NaN, Infinity
        }
        let mut y = self.digits(&digits).into_bytes().into_iter();
        let mut out = String::with_capacity(t.len());
        for c in mantissa.chars() {
            if c.is_ascii_digit() {
                out.push(char::from(y.next().unwrap_or(b'0')));
            } else {
                out.push(c);
            }
        }
        out.push_str(exp);
        out
    }

    /// A keyed permutation of the digit strings of `d.len()` digits that keeps whether the
    /// first digit is a zero (so `42` stays a two-digit number and `0.5` stays below one).
    fn digits(&self, d: &str) -> String {
        let lead_zero = d.len() > 1 && d.starts_with('0');
        let mut y = self.digits_once(d);
        let mut steps = 0;
        while d.len() > 1 && y.starts_with('0') != lead_zero && steps < 100_000 {
            y = self.digits_once(&y);
            steps += 1;
        }
        y
    }

    /// One pass of the permutation: each 18-digit chunk permuted within its own size.
    fn digits_once(&self, d: &str) -> String {
        let mut out = String::with_capacity(d.len());
        for (k, chunk) in d.as_bytes().chunks(18).enumerate() {
            let n = chunk.len() as u32;
            let domain = 10u64.pow(n);
            let x: u64 = std::str::from_utf8(chunk)
                .ok()
                .and_then(|c| c.parse().ok())
                .unwrap_or(0);
            let y = self.permute(x, domain, (k as u64) << 8 | u64::from(n));
            out.push_str(&format!("{y:0width$}", width = n as usize));
        }
        out
    }

    /// A keyed permutation of `0..domain` (a Feistel network on the next power of two,
    /// walked until it lands inside the domain).
    fn permute(&self, x: u64, domain: u64, tweak: u64) -> u64 {
        if domain <= 1 {
            return x;
        }
        let bits = 64 - (domain - 1).leading_zeros();
        let bits = bits + (bits & 1); // even, for two equal halves
        let half = bits / 2;
        let mask = (1u64 << half) - 1;
        let mut v = x;
        loop {
            let (mut l, mut r) = (v >> half, v & mask);
            for round in 0..4u64 {
                let f = mix(self.key ^ mix(tweak ^ round << 56) ^ r) & mask;
                (l, r) = (r, l ^ f);
            }
            v = (l << half) | r;
            if v < domain {
                return v;
            }
        }
    }

    fn text(&self, text: &str) -> String {
        const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
        let n = text.chars().count().max(1);
        let mut out = String::with_capacity(n);
        let mut h = self.hash(b"text", text);
        for k in 0..n {
            if k % 12 == 0 && k > 0 {
                h = mix(h ^ k as u64);
            }
            out.push(char::from(ALPHABET[(h % ALPHABET.len() as u64) as usize]));
            h /= ALPHABET.len() as u64;
        }
        out
    }

    fn uuid(&self, text: &str) -> String {
        let a = self.hash(b"uuid-a", text);
        let b = self.hash(b"uuid-b", text);
        let hex = format!("{a:016x}{b:016x}");
        format!(
            "{}-{}-{}-{}-{}",
            &hex[0..8],
            &hex[8..12],
            &hex[12..16],
            &hex[16..20],
            &hex[20..32]
        )
    }

    fn bytea(&self, text: &str) -> String {
        let n = text.strip_prefix("\\x").map_or(text.len(), |h| h.len() / 2);
        let mut out = String::from("\\x");
        let mut h = self.hash(b"bytea", text);
        for k in 0..n {
            if k % 8 == 0 && k > 0 {
                h = mix(h ^ k as u64);
            }
            out.push_str(&format!("{:02x}", h & 0xff));
            h >>= 8;
        }
        out
    }

    /// `YYYY-MM-DD…` moved by the key's whole number of days (between 1 and 4 years);
    /// `None` for text it cannot read (`infinity`, BC dates).
    fn date(&self, text: &str) -> Option<String> {
        let t = text.trim();
        let b = t.as_bytes();
        if b.len() < 10 || !b[..10].is_ascii() || b[4] != b'-' || b[7] != b'-' || t.ends_with(" BC")
        {
            return if t.contains("infinity") {
                Some(t.to_string())
            } else {
                None
            };
        }
        let y: i64 = t[0..4].parse().ok()?;
        let m: u32 = t[5..7].parse().ok()?;
        let d: u32 = t[8..10].parse().ok()?;
        let shift = 365 + (self.key % (3 * 365)) as i64;
        let (y2, m2, d2) = civil_from_days(days_from_civil(y, m, d) + shift);
        if !(1..=9999).contains(&y2) {
            return None;
        }
        Some(format!("{y2:04}-{m2:02}-{d2:02}{}", &t[10..]))
    }
}

/// splitmix64's finalizer.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(m);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    fn int4() -> ValueKind {
        ValueKind::of_builtin(23)
    }

    #[test]
    fn the_same_value_maps_the_same_way_and_different_values_differently() {
        let r = Redactor::new(7);
        assert_eq!(r.value(&int4(), "42"), r.value(&int4(), "42"));
        assert_ne!(
            Redactor::new(8).value(&int4(), "123456"),
            r.value(&int4(), "123456")
        );
        let mut seen = BTreeSet::new();
        for v in 0..1000 {
            let y = r.value(&int4(), &v.to_string()).unwrap();
            assert_eq!(y.len(), v.to_string().len(), "{v} -> {y}");
            assert!(seen.insert(y));
        }
        assert!(r.value(&int4(), "-5").unwrap().starts_with('-'));
    }

    #[test]
    fn numbers_stay_in_their_type() {
        let r = Redactor::new(3);
        let int2 = ValueKind::of_builtin(21);
        for v in [32767, 32000, 10000, -32768] {
            let y: i64 = r.value(&int2, &v.to_string()).unwrap().parse().unwrap();
            assert!((-32768..=32767).contains(&y), "{v} -> {y}");
        }
        let big = r
            .value(&ValueKind::of_builtin(20), "9223372036854775807")
            .unwrap();
        assert!(big.parse::<i64>().is_ok(), "{big}");
        let d = r.value(&ValueKind::Decimal, "0.05").unwrap();
        assert!(d.starts_with("0.") && d.len() == 4, "{d}");
        assert_eq!(r.value(&ValueKind::Decimal, "NaN").unwrap(), "NaN");
        assert!(r.value(&int4(), "abc").is_none());
    }

    #[test]
    fn strings_dates_uuids_arrays_keep_their_form() {
        let r = Redactor::new(1);
        let s = r.value(&ValueKind::Text, "alice@example.com").unwrap();
        assert_eq!(s.chars().count(), 17);
        assert_ne!(s, "alice@example.com");
        let u = r
            .value(&ValueKind::Uuid, "0e37df36-f698-11e6-8dd4-cb9ced3df976")
            .unwrap();
        assert_eq!(u.len(), 36);
        let d = r
            .value(&ValueKind::Timestamp, "2024-02-29 12:00:00")
            .unwrap();
        assert!(
            d.ends_with(" 12:00:00") && !d.starts_with("2024-02-29"),
            "{d}"
        );
        let a = ValueKind::Array(Box::new(ValueKind::Text));
        let v = r.value(&a, "{x,NULL,\"y z\"}").unwrap();
        assert_eq!(crate::sqltext::parse_array(&v).unwrap().len(), 3);
        assert!(v.contains("NULL"));
        assert!(r.value(&ValueKind::Other, "(1,2)").is_none());
        assert!(r.value(&ValueKind::Date, "2024-01-0é").is_none());
        assert!(r.value(&ValueKind::Date, "ü").is_none());
        let label = ValueKind::Enum {
            labels: vec!["a".into()],
        };
        assert_eq!(r.value(&label, "a").as_deref(), Some("a"));
    }

    #[test]
    fn the_calendar_round_trips() {
        for days in [-800_000, -1, 0, 59, 60, 11_016, 2_932_896] {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days);
        }
        assert_eq!(civil_from_days(0), (1970, 1, 1));
    }
}
