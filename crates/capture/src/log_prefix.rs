//! PostgreSQL's `log_line_prefix` as a pattern: parsed from the setting's text (`%m [%p] %c `),
//! matched against a stderr log line to find the session, the time and the transaction ids
//! it carries and where the message starts, and inferred from a log's first lines when the
//! user does not say what the prefix was. Values whose form PostgreSQL fixes (timestamps,
//! pids, session ids, transaction ids) are matched by that form; free text (user, database,
//! application, host, command tag) matches lazily, up to what follows it. Pure.

/// One escape of `log_line_prefix` (`%c`, `%p`, …) or literal text between them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Item {
    Lit(String),
    /// The escape's letter; padded (`%-10a`) values may carry spaces around them.
    Field {
        esc: char,
        padded: bool,
    },
    /// `%q`: non-session processes stop printing the prefix here.
    SessionOnly,
}

/// A parsed `log_line_prefix`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prefix {
    pub text: String,
    pub items: Vec<Item>,
}

/// What the prefix of one line said.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Fields {
    /// `%c`
    pub session: Option<String>,
    /// `%p`
    pub pid: Option<String>,
    /// Seconds since the epoch (`%n`), or of the wall clock the log wrote (`%m`, `%t`).
    pub at_s: Option<f64>,
    /// `%v`
    pub vxid: Option<String>,
    /// `%x`
    pub xid: Option<String>,
    /// `%a`
    pub application: Option<String>,
    /// `%d`
    pub database: Option<String>,
}

/// Escapes whose values are free text: matched lazily.
const FREE: [char; 8] = ['a', 'u', 'd', 'r', 'h', 'b', 'i', 'L'];
/// Every escape PostgreSQL knows (up to 18).
const KNOWN: &str = "aubdrhLpPtmnieclsvxqQ%";

impl Prefix {
    /// Parses the setting's value. Unknown escapes are an error (PostgreSQL prints nothing
    /// for them, so a typo would silently shift every field after it).
    pub fn parse(text: &str) -> Result<Prefix, String> {
        let mut items: Vec<Item> = Vec::new();
        let mut lit = String::new();
        let mut chars = text.chars().peekable();
        while let Some(c) = chars.next() {
            if c != '%' {
                lit.push(c);
                continue;
            }
            let mut padded = false;
            while let Some(&d) = chars.peek() {
                if d == '-' || d.is_ascii_digit() {
                    padded = true;
                    chars.next();
                } else {
                    break;
                }
            }
            let Some(esc) = chars.next() else {
                lit.push('%');
                break;
            };
            if !KNOWN.contains(esc) {
                return Err(format!(
                    "log_line_prefix {text:?}: unknown escape %{esc} (PostgreSQL knows %a %u %d %r %h %b %L %p %P %t %m %n %i %e %c %l %s %v %x %q %Q %%)"
                ));
            }
            if esc == '%' {
                lit.push('%');
                continue;
            }
            if !lit.is_empty() {
                items.push(Item::Lit(std::mem::take(&mut lit)));
            }
            items.push(if esc == 'q' {
                Item::SessionOnly
            } else {
                Item::Field { esc, padded }
            });
        }
        if !lit.is_empty() {
            items.push(Item::Lit(lit));
        }
        Ok(Prefix {
            text: text.to_string(),
            items,
        })
    }

    pub fn has(&self, esc: char) -> bool {
        self.items
            .iter()
            .any(|i| matches!(i, Item::Field { esc: e, .. } if *e == esc))
    }

    /// What a log written with this prefix lacks for transactions to be read from it, as
    /// the words of an error (`None` when nothing is missing): a session (`%c` or `%p`) and
    /// a time (`%m`, `%n` or `%t`), both before any `%q`.
    pub fn missing(&self) -> Option<String> {
        let mut missing = Vec::new();
        if !self.has('c') && !self.has('p') {
            missing.push("a session id (%c) or process id (%p)");
        }
        if !self.has('m') && !self.has('n') && !self.has('t') {
            missing.push("a timestamp (%m, %n or %t)");
        }
        if missing.is_empty() {
            None
        } else {
            Some(missing.join(" and "))
        }
    }

    /// Matches the start of `line`: the fields and the byte offset where the severity
    /// (`LOG:  `) starts, or `None` when the line does not carry this prefix followed by a
    /// severity. A non-session process's line may stop at `%q`.
    pub fn match_line(&self, line: &str) -> Option<(Fields, usize)> {
        let mut fields = Fields::default();
        let mut budget = 20_000usize;
        if let Some(end) = match_items(&self.items, line, 0, &mut fields, &mut budget) {
            return Some((fields, end));
        }
        let q = self.items.iter().position(|i| *i == Item::SessionOnly)?;
        let mut fields = Fields::default();
        match_items(&self.items[..q], line, 0, &mut fields, &mut budget).map(|e| (fields, e))
    }
}

/// The severities a message line starts with after the prefix (`LOG:  `), in English:
/// `lc_messages` translates them, and a translated log is not read.
pub const SEVERITIES: [&str; 13] = [
    "LOG", "ERROR", "FATAL", "PANIC", "WARNING", "NOTICE", "INFO", "DEBUG", "DEBUG1", "DEBUG2",
    "DEBUG3", "DEBUG4", "DEBUG5",
];
/// Secondary lines that belong to the message before them.
pub const SECONDARY: [&str; 6] = [
    "DETAIL",
    "HINT",
    "CONTEXT",
    "STATEMENT",
    "QUERY",
    "LOCATION",
];

/// The severity at the start of `rest` (`LOG:  …`) and the length of `SEVERITY:  `.
pub fn severity_at(rest: &str) -> Option<(&str, usize)> {
    SEVERITIES
        .iter()
        .chain(SECONDARY.iter())
        .find(|s| rest.starts_with(**s) && rest[s.len()..].starts_with(":  "))
        .map(|s| (*s, s.len() + 3))
}

fn match_items(
    items: &[Item],
    line: &str,
    at: usize,
    f: &mut Fields,
    budget: &mut usize,
) -> Option<usize> {
    *budget = budget.checked_sub(1)?;
    let Some((first, rest)) = items.split_first() else {
        return severity_at(&line[at..]).map(|_| at);
    };
    match first {
        Item::SessionOnly => match_items(rest, line, at, f, budget),
        Item::Lit(l) => {
            if line[at..].starts_with(l.as_str()) {
                match_items(rest, line, at + l.len(), f, budget)
            } else {
                None
            }
        }
        Item::Field { esc, padded } => {
            let mut start = at;
            if *padded {
                start += line[at..].len() - line[at..].trim_start_matches(' ').len();
            }
            if FREE.contains(esc) {
                // Lazily: the shortest value after which the rest matches.
                let s = &line[start..];
                for (i, _) in s.char_indices().chain(std::iter::once((s.len(), ' '))) {
                    if let Some(end) = match_items(rest, line, start + i, f, budget) {
                        store(*esc, &s[..i], f);
                        return Some(end);
                    }
                    if *budget == 0 {
                        return None;
                    }
                }
                None
            } else {
                let len = fixed_len(*esc, &line[start..])?;
                let value = &line[start..start + len];
                let mut end = start + len;
                if *padded {
                    end += line[end..].len() - line[end..].trim_start_matches(' ').len();
                }
                let saved = f.clone();
                store(*esc, value, f);
                let r = match_items(rest, line, end, f, budget);
                if r.is_none() {
                    *f = saved;
                }
                r
            }
        }
    }
}

fn store(esc: char, value: &str, f: &mut Fields) {
    match esc {
        'c' => f.session = Some(value.to_string()),
        'p' => f.pid = Some(value.to_string()),
        'v' => f.vxid = Some(value.to_string()),
        'x' => f.xid = Some(value.to_string()),
        'a' => f.application = Some(value.to_string()),
        'd' => f.database = Some(value.to_string()),
        'm' | 't' => f.at_s = wall_seconds(value),
        'n' => f.at_s = value.parse::<f64>().ok().filter(|v| v.is_finite()),
        _ => {}
    }
}

/// Length of the value of a fixed-form escape at the start of `s`, or `None` when `s` does
/// not start with one.
fn fixed_len(esc: char, s: &str) -> Option<usize> {
    let b = s.as_bytes();
    let digits = |from: usize| b[from..].iter().take_while(|c| c.is_ascii_digit()).count();
    match esc {
        'p' | 'l' | 'x' => {
            let n = digits(0);
            (n > 0).then_some(n)
        }
        // The parallel leader's pid: empty for every other process.
        'P' => Some(digits(0)),
        'Q' => {
            let sign = usize::from(b.first() == Some(&b'-'));
            let n = digits(sign);
            (n > 0).then_some(sign + n)
        }
        'n' => {
            let n = digits(0);
            (n > 0 && b.get(n) == Some(&b'.') && digits(n + 1) > 0).then(|| n + 1 + digits(n + 1))
        }
        'c' => {
            let hex = |from: usize| {
                b[from..]
                    .iter()
                    .take_while(|c| c.is_ascii_hexdigit())
                    .count()
            };
            let n = hex(0);
            (n > 0 && b.get(n) == Some(&b'.') && hex(n + 1) > 0).then(|| n + 1 + hex(n + 1))
        }
        // Empty for processes without a virtual transaction.
        'v' => {
            let n = digits(0);
            if n > 0 && b.get(n) == Some(&b'/') && digits(n + 1) > 0 {
                Some(n + 1 + digits(n + 1))
            } else {
                Some(0)
            }
        }
        'e' => (b.len() >= 5 && b[..5].iter().all(|c| c.is_ascii_alphanumeric())).then_some(5),
        'm' | 't' | 's' => timestamp_len(s, esc == 'm'),
        _ => None,
    }
}

/// `YYYY-MM-DD HH:MM:SS[.mmm] ZONE`: its length at the start of `s`.
fn timestamp_len(s: &str, millis: bool) -> Option<usize> {
    let b = s.as_bytes();
    let shape = if millis {
        "dddd-dd-dd dd:dd:dd.ddd "
    } else {
        "dddd-dd-dd dd:dd:dd "
    };
    if b.len() < shape.len() {
        return None;
    }
    for (c, want) in b.iter().zip(shape.bytes()) {
        let ok = if want == b'd' {
            c.is_ascii_digit()
        } else {
            *c == want
        };
        if !ok {
            return None;
        }
    }
    let zone = s[shape.len()..]
        .bytes()
        .take_while(|c| !c.is_ascii_whitespace())
        .count();
    (zone > 0).then_some(shape.len() + zone)
}

/// Seconds of a `YYYY-MM-DD HH:MM:SS[.fff] ZONE` timestamp since 1970 on its own wall
/// clock, a numeric zone (`+03`, `-0530`) taken into account; a named zone (`UTC`, `CEST`) is
/// read as UTC: times within one log are compared, and they share the zone.
pub fn wall_seconds(ts: &str) -> Option<f64> {
    let (date, rest) = ts.split_once(' ')?;
    let (time, zone) = rest.split_once(' ').unwrap_or((rest, ""));
    let mut d = date.splitn(3, '-').map(|p| p.parse::<i64>().ok());
    let (y, m, dd) = (d.next()??, d.next()??, d.next()??);
    let mut t = time.splitn(3, ':');
    let h: i64 = t.next()?.parse().ok()?;
    let mi: i64 = t.next()?.parse().ok()?;
    let sec: f64 = t.next()?.parse().ok()?;
    if !(1..=12).contains(&m)
        || !(1..=31).contains(&dd)
        || h > 24
        || mi > 59
        || !(0.0..61.0).contains(&sec)
    {
        return None;
    }
    let days = days_from_civil(y, m, dd);
    let mut s = days as f64 * 86_400.0 + (h * 3600 + mi * 60) as f64 + sec;
    if let Some(off) = numeric_zone(zone) {
        s -= off as f64;
    }
    Some(s)
}

/// `+03`, `-0530`, `+05:30` → seconds east of UTC.
fn numeric_zone(z: &str) -> Option<i64> {
    let sign = match z.as_bytes().first()? {
        b'+' => 1,
        b'-' => -1,
        _ => return None,
    };
    let digits: String = z[1..].chars().filter(|c| *c != ':').collect();
    if digits.is_empty() || digits.len() > 4 || !digits.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let (h, m) = if digits.len() <= 2 {
        (digits.parse::<i64>().ok()?, 0)
    } else {
        let (a, b) = digits.split_at(digits.len() - 2);
        (a.parse::<i64>().ok()?, b.parse::<i64>().ok()?)
    };
    Some(sign * (h * 3600 + m * 60))
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Prefixes people set (PostgreSQL's default since 13 and Debian's, pgBadger's and pgreplay's
/// recommendations), tried when the log's own lines do not give the prefix away.
const KNOWN_PREFIXES: [&str; 10] = [
    "%m [%p] %c %x ",
    "%m [%p] %c %v %x ",
    "%m [%p] ",
    "%m [%p] %q%u@%d ",
    "%t [%p]: [%l-1] user=%u,db=%d,app=%a,client=%h ",
    "%t [%p]: user=%u,db=%d,app=%a,client=%h ",
    "%m [%p]: [%l-1] user=%u,db=%d,app=%a,client=%h ",
    "%m [%p-%l] %q%u@%d ",
    "%m|%u|%d|%c|",
    "%t [%p-%l] %q%u@%d ",
];

/// The prefix of a log whose first lines are `lines` (message lines, not continuations):
/// a template read off the lines themselves (timestamps, `[pid]`, session ids, transaction
/// ids and `user=`/`db=` values recognised), else the best of the well-known prefixes; the one
/// that matches the most lines wins, if it matches at least 90% of them.
pub fn infer(lines: &[&str]) -> Option<Prefix> {
    // The server's messages: lines with a severity (`LOG:  `); others are not the server's.
    let sample: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|l| {
            !l.starts_with('\t')
                && SEVERITIES
                    .iter()
                    .chain(SECONDARY.iter())
                    .any(|s| l.contains(&format!("{s}:  ")))
        })
        .collect();
    if sample.is_empty() {
        return None;
    }
    let mut candidates: Vec<Prefix> = Vec::new();
    for l in sample.iter().filter(|l| l.contains("duration: ")).take(3) {
        if let Some(t) = template_of(l, &sample) {
            candidates.push(t);
        }
    }
    candidates.extend(KNOWN_PREFIXES.iter().filter_map(|p| Prefix::parse(p).ok()));
    let score = |p: &Prefix| sample.iter().filter(|l| p.match_line(l).is_some()).count();
    let mut best: Option<(usize, Prefix)> = None;
    for c in candidates {
        let s = score(&c);
        if best.as_ref().is_none_or(|(b, _)| s > *b) {
            best = Some((s, c));
        }
    }
    let (s, p) = best?;
    (s * 10 >= sample.len() * 9 && s > 0).then_some(p)
}

/// A prefix template read off one line: the text before its severity with each recognised
/// value replaced by its escape.
fn template_of(line: &str, sample: &[&str]) -> Option<Prefix> {
    let sev = SEVERITIES
        .iter()
        .filter_map(|s| line.find(&format!("{s}:  ")))
        .min()?;
    let head = &line[..sev];
    let mut out = String::new();
    let mut i = 0;
    let b = head.as_bytes();
    let mut bare_digits = 0;
    while i < head.len() {
        let rest = &head[i..];
        let prev = head[..i].chars().last();
        if let Some(n) = timestamp_len(rest, true) {
            out.push_str("%m");
            i += n;
        } else if let Some(n) = timestamp_len(rest, false) {
            out.push_str("%t");
            i += n;
        } else if rest.starts_with(|c: char| c.is_ascii_hexdigit())
            && !prev.is_some_and(|c| c.is_ascii_alphanumeric())
            && fixed_len('c', rest)
                .is_some_and(|n| rest[..n].contains(|c: char| c.is_ascii_alphabetic()) || n >= 10)
            && fixed_len('n', rest).is_none_or(|n| {
                // An epoch with milliseconds has 10 digits, a dot and 3.
                fixed_len('c', rest) != Some(n) || n != 14
            })
        {
            let n = fixed_len('c', rest)?;
            out.push_str("%c");
            i += n;
        } else if let Some(n) = fixed_len('n', rest).filter(|n| *n == 14) {
            out.push_str("%n");
            i += n;
        } else if rest.starts_with(|c: char| c.is_ascii_digit())
            && fixed_len('v', rest).is_some_and(|n| n > 0)
        {
            out.push_str("%v");
            i += fixed_len('v', rest)?;
        } else if b[i].is_ascii_digit() && !prev.is_some_and(|c| c.is_ascii_alphanumeric()) {
            let n = fixed_len('p', rest)?;
            // `[digits]` is the pid; other bare numbers: a transaction id when some line has
            // 0 there, else the line number.
            let esc = if prev == Some('[') && !out.contains("%p") {
                'p'
            } else {
                let zero = bare_digits_zero(sample, bare_digits);
                bare_digits += 1;
                if zero {
                    'x'
                } else {
                    'l'
                }
            };
            out.push('%');
            out.push(esc);
            i += n;
        } else if let Some((key, esc)) = [
            ("user=", 'u'),
            ("db=", 'd'),
            ("app=", 'a'),
            ("client=", 'h'),
            ("host=", 'h'),
        ]
        .iter()
        .find(|(k, _)| rest.starts_with(k))
        {
            out.push_str(key);
            out.push('%');
            out.push(*esc);
            i += key.len();
            i += rest[key.len()..]
                .find([',', ' '])
                .unwrap_or(rest.len() - key.len());
        } else {
            let c = rest.chars().next()?;
            if c == '%' {
                out.push('%');
            }
            out.push(c);
            i += c.len_utf8();
        }
    }
    // `user@db ` → `%u@%d `
    let out = user_at_db(&out);
    Prefix::parse(&out).ok()
}

/// Whether some sampled line has `0` as its `nth` bare number after the timestamp and pid.
fn bare_digits_zero(sample: &[&str], nth: usize) -> bool {
    sample.iter().any(|l| {
        let words: Vec<&str> = l.split(' ').take(8).collect();
        words
            .iter()
            .skip(3)
            .filter(|w| !w.is_empty() && w.bytes().all(|c| c.is_ascii_digit()))
            .nth(nth)
            .is_some_and(|w| *w == "0")
    })
}

/// Replaces a `word@word` token of a template with `%u@%d`.
fn user_at_db(t: &str) -> String {
    let parts: Vec<&str> = t.split(' ').collect();
    parts
        .iter()
        .map(|p| {
            let at = p.find('@');
            match at {
                Some(a) if a > 0 && a + 1 < p.len() && !p.contains('%') => "%u@%d".to_string(),
                _ => (*p).to_string(),
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINE: &str = "2026-11-28 08:02:28.255 UTC [18557] 6b0a8a94.487d 730 3/6 6 LOG:  duration: 0.229 ms  statement: select 1";

    #[test]
    fn parses_and_matches_every_fixed_field() {
        let p = Prefix::parse("%m [%p] %c %x %v %l ").unwrap();
        let (f, at) = p.match_line(LINE).expect("matches");
        assert_eq!(f.session.as_deref(), Some("6b0a8a94.487d"));
        assert_eq!(f.pid.as_deref(), Some("18557"));
        assert_eq!(f.xid.as_deref(), Some("730"));
        assert_eq!(f.vxid.as_deref(), Some("3/6"));
        assert!(LINE[at..].starts_with("LOG:  duration"));
        let t = f.at_s.unwrap();
        assert!((t - 1_795_852_948.255).abs() < 1e-3, "{t}");
        // A postmaster line: no vxid.
        let pm = "2026-11-28 08:02:28.177 UTC [18540] 6b0a8a94.486c 0  3 LOG:  starting";
        assert!(p.match_line(pm).is_some());
        assert!(p.match_line("\tcontinued").is_none());
        assert!(p.match_line("garbage LOG:  x").is_none());
    }

    #[test]
    fn free_text_fields_match_lazily_and_q_stops_non_session_lines() {
        let p = Prefix::parse("%t [%p]: [%l-1] user=%u,db=%d,app=%a,client=%h ").unwrap();
        let l = "2024-05-01 10:00:00 CEST [77]: [3-1] user=a b,db=x,y,app=psql, really,client=[local] LOG:  duration: 1.0 ms  statement: select 1";
        let (f, at) = p.match_line(l).expect("matches");
        assert_eq!(f.pid.as_deref(), Some("77"));
        assert!(l[at..].starts_with("LOG:"));
        let q = Prefix::parse("%m [%p] %q%u@%d ").unwrap();
        assert!(q
            .match_line("2024-05-01 10:00:00.000 UTC [9] LOG:  checkpoint starting: time")
            .is_some());
        assert!(q
            .match_line(
                "2024-05-01 10:00:00.000 UTC [9] bob@app LOG:  duration: 1 ms  statement: x"
            )
            .is_some());
        assert!(Prefix::parse("%m %k").is_err());
        assert_eq!(
            Prefix::parse("%m ").unwrap().missing().as_deref(),
            Some("a session id (%c) or process id (%p)")
        );
        assert!(Prefix::parse("%m [%p] ").unwrap().missing().is_none());
        assert!(Prefix::parse("[%p] ")
            .unwrap()
            .missing()
            .unwrap()
            .contains("timestamp"));
    }

    #[test]
    fn timestamps_in_numeric_zones_and_epochs() {
        let a = wall_seconds("2024-01-01 00:00:00 +03").unwrap();
        let b = wall_seconds("2023-12-31 21:00:00 UTC").unwrap();
        assert_eq!(a, b);
        assert_eq!(wall_seconds("1970-01-01 00:00:01.500 UTC"), Some(1.5));
        assert!(wall_seconds("2024-13-01 00:00:00 UTC").is_none());
        let p = Prefix::parse("%n %c ").unwrap();
        let (f, _) = p.match_line("1714557600.123 1a.2b LOG:  x").unwrap();
        assert_eq!(f.at_s, Some(1_714_557_600.123));
    }

    #[test]
    fn infers_the_prefix_from_the_lines() {
        let lines = [
            "2026-11-28 08:02:28.177 UTC [18540] 6b0a8a94.486c 0  3 LOG:  starting PostgreSQL",
            "2026-11-28 08:02:28.255 UTC [18557] 6b0a8a94.487d 0 3/0 4 LOG:  duration: 0.449 ms  statement: insert",
            LINE,
        ];
        let p = infer(&lines).expect("inferred");
        assert_eq!(p.text, "%m [%p] %c %x %v %l ");
        let deb = [
            "2024-05-01 10:00:00.000 UTC [9] LOG:  checkpoint starting: time",
            "2024-05-01 10:00:00.100 UTC [10] bob@app LOG:  duration: 1.0 ms  statement: x",
            "2024-05-01 10:00:00.100 UTC [11] ann@app LOG:  duration: 1.0 ms  statement: y",
        ];
        let p = infer(&deb).expect("inferred");
        assert!(p.match_line(deb[2]).is_some(), "{}", p.text);
        assert!(infer(&["nothing like a log"]).is_none());
    }
}
