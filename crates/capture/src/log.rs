//! `--log FILE`: a server log written with `log_min_duration_statement = 0` read into
//! [`ObservedTransaction`]s, streamed (memory follows the sessions open at once, never the
//! file's size). Two formats: stderr, whose `log_line_prefix` must carry a session (`%c`, or
//! the pid `%p`) and a time (`%m`, `%n` or `%t`) — given by the caller or inferred from the
//! first lines — and csvlog (`log_destination = csvlog`), which always carries both.
//! [`crate::log_session`] turns the messages into transactions; `log_prefix` reads the prefix,
//! `log_csv` the records. Lines that are not the server's own messages (another program
//! writing to the same file) are skipped and counted; a message the reader cannot read is an
//! error `FILE:LINE: message`. Documented in `docs/capture.md` ("Server logs").

use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use crate::log_csv;
pub use crate::log_error::{LogError, MAX_LINE};
use crate::log_prefix::{self, Prefix, SECONDARY};
use crate::log_session::{Counts, Entry, Sessions};
use crate::observed::ObservedTransaction;

/// How to read the log.
#[derive(Debug, Clone, Default)]
pub struct LogOptions {
    /// The server's `log_line_prefix` (stderr logs); inferred from the log when `None`.
    pub prefix: Option<String>,
    /// Read only this database's messages, where the log names databases (csvlog's
    /// `database_name`, `%d` in a stderr prefix); the others are counted in a note.
    pub database: Option<String>,
    /// Keep hotbench's own sampling sessions ([`OWN_APPLICATIONS`]), left out by default:
    /// for a check of what they ran.
    pub keep_own_sessions: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    Stderr,
    Csv,
}

/// What reading a log found besides its transactions.
#[derive(Debug, Clone, PartialEq)]
pub struct LogSummary {
    pub format: LogFormat,
    /// The `log_line_prefix` used (stderr), and whether it was inferred.
    pub prefix: Option<String>,
    pub prefix_inferred: bool,
    pub lines: u64,
    /// Messages read (a message with its DETAIL and STATEMENT lines is one).
    pub messages: u64,
    /// Lines that were none of the server's messages, and the first of them.
    pub skipped_lines: u64,
    /// Messages of hotbench's own read-only sessions (capture, diagnose, probes), left out.
    pub own_messages: u64,
    /// Messages of other databases than [`LogOptions::database`], left out.
    pub other_db_messages: u64,
    /// Those databases (the first few).
    pub other_databases: Vec<String>,
    pub first_skipped_line: Option<u64>,
    pub counts: Counts,
    /// The log's first and last message times (seconds since the epoch, or of its clock).
    pub first_at_s: Option<f64>,
    pub last_at_s: Option<f64>,
    /// What a reader of the capture should know (skipped lines, cut transactions).
    pub notes: Vec<String>,
}

/// Lines read before deciding the format and inferring the prefix.
const SAMPLE_LINES: usize = 1000;

/// Reads the log at `path`, handing each transaction to `sink` as it ends.
pub fn read_log(
    path: &Path,
    opts: &LogOptions,
    sink: &mut dyn FnMut(ObservedTransaction),
) -> Result<LogSummary, LogError> {
    let file = path.display().to_string();
    let f = std::fs::File::open(path).map_err(|source| LogError::Io {
        file: file.clone(),
        source,
    })?;
    if path.extension().is_some_and(|e| e == "json") {
        return Err(LogError::Format {
            file,
            message: "jsonlog is not read; use the stderr or csvlog file of the same server".into(),
        });
    }
    read_log_from(BufReader::new(f), &file, opts, sink)
}

/// Every transaction of the log at `path`, collected (for small logs and tests).
pub fn read_all(
    path: &Path,
    opts: &LogOptions,
) -> Result<(Vec<ObservedTransaction>, LogSummary), LogError> {
    let mut out = Vec::new();
    let s = read_log(path, opts, &mut |t| out.push(t))?;
    Ok((out, s))
}

/// Reads a log from `reader`; `file` names it in messages.
pub fn read_log_from(
    reader: impl BufRead,
    file: &str,
    opts: &LogOptions,
    sink: &mut dyn FnMut(ObservedTransaction),
) -> Result<LogSummary, LogError> {
    let mut lines = Lines::new(reader, file);
    // The first lines decide the format (and the prefix, when not given).
    let mut sample: Vec<(u64, String)> = Vec::new();
    while sample.len() < SAMPLE_LINES {
        match lines.next_line()? {
            Some(l) => sample.push(l),
            None => break,
        }
    }
    let first = sample.iter().find(|(_, l)| !l.trim().is_empty());
    let is_csv = first.is_some_and(|(_, l)| log_csv::looks_like_csvlog(l));
    let mut st = State::new(file, opts);
    if is_csv {
        let rest = sample
            .into_iter()
            .map(Ok)
            .chain(std::iter::from_fn(|| lines.next_line().transpose()));
        log_csv::read(rest, file, &mut |e| st.entry(e, sink))?;
        st.summary.lines = lines.count;
        return st.finish(LogFormat::Csv, None, false, sink);
    }
    let (prefix, inferred) = prefix_for(&sample, file, opts)?;
    if let Some(missing) = prefix.missing() {
        return Err(LogError::Format {
            file: file.into(),
            message: format!(
                "log_line_prefix {:?} has no {missing}: transactions cannot be read from this log; \
                 set log_line_prefix = '%m [%p] %c %x ' (and log_min_duration_statement = 0) on the server",
                prefix.text
            ),
        });
    }
    let mut reader = StderrReader::new(&prefix);
    for (n, l) in sample {
        reader.line(n, &l, &mut st, sink)?;
    }
    while let Some((n, l)) = lines.next_line()? {
        reader.line(n, &l, &mut st, sink)?;
    }
    reader.flush(&mut st, sink)?;
    st.summary.lines = lines.count;
    st.summary.skipped_lines += lines.too_long;
    st.finish(LogFormat::Stderr, Some(prefix.text), inferred, sink)
}

fn prefix_for(
    sample: &[(u64, String)],
    file: &str,
    opts: &LogOptions,
) -> Result<(Prefix, bool), LogError> {
    if let Some(p) = &opts.prefix {
        let p = Prefix::parse(p).map_err(|message| LogError::Format {
            file: file.into(),
            message,
        })?;
        return Ok((p, false));
    }
    let lines: Vec<&str> = sample.iter().map(|(_, l)| l.as_str()).collect();
    match log_prefix::infer(&lines) {
        Some(p) => Ok((p, true)),
        None => {
            let shown = sample
                .iter()
                .find(|(_, l)| !l.trim().is_empty())
                .map(|(n, l)| format!(" (line {n}: {:?})", log_sql_clip(l)))
                .unwrap_or_default();
            Err(LogError::Format {
                file: file.into(),
                message: format!(
                    "cannot tell this log's log_line_prefix from its first lines{shown}: give it \
                     (SHOW log_line_prefix on the server); a stderr log needs lines like \
                     `2024-05-01 10:00:00.123 UTC [4242] 6632a1f0.1092 0 LOG:  duration: …`, \
                     in English (lc_messages = 'C')"
                ),
            })
        }
    }
}

fn log_sql_clip(l: &str) -> String {
    let mut s: String = l.chars().take(80).collect();
    if l.chars().nth(80).is_some() {
        s.push('…');
    }
    s
}

/// Lines of the file, numbered, without their line break, invalid UTF-8 replaced; a line
/// longer than [`MAX_LINE`] is skipped and counted.
struct Lines<R> {
    r: R,
    file: String,
    count: u64,
    too_long: u64,
    buf: Vec<u8>,
}

impl<R: BufRead> Lines<R> {
    fn new(r: R, file: &str) -> Self {
        Lines {
            r,
            file: file.to_string(),
            count: 0,
            too_long: 0,
            buf: Vec::new(),
        }
    }

    fn next_line(&mut self) -> Result<Option<(u64, String)>, LogError> {
        loop {
            self.buf.clear();
            let io = |source| LogError::Io {
                file: self.file.clone(),
                source,
            };
            let n = (&mut self.r)
                .take(MAX_LINE as u64 + 1)
                .read_until(b'\n', &mut self.buf)
                .map_err(io)?;
            if n == 0 {
                return Ok(None);
            }
            self.count += 1;
            if self.buf.len() > MAX_LINE && self.buf.last() != Some(&b'\n') {
                // Skip to the end of this line.
                loop {
                    let (done, used) = {
                        let avail = self.r.fill_buf().map_err(|source| LogError::Io {
                            file: self.file.clone(),
                            source,
                        })?;
                        match avail.iter().position(|b| *b == b'\n') {
                            Some(i) => (true, i + 1),
                            None => (avail.is_empty(), avail.len()),
                        }
                    };
                    self.r.consume(used);
                    if done {
                        break;
                    }
                }
                self.too_long += 1;
                continue;
            }
            while matches!(self.buf.last(), Some(b'\n' | b'\r')) {
                self.buf.pop();
            }
            return Ok(Some((
                self.count,
                String::from_utf8_lossy(&self.buf).into_owned(),
            )));
        }
    }
}

/// The reader's running state: the sessions and the summary.
struct State {
    file: String,
    database: Option<String>,
    keep_own: bool,
    sessions: Sessions,
    summary: LogSummary,
}

impl State {
    fn new(file: &str, opts: &LogOptions) -> Self {
        State {
            file: file.to_string(),
            database: opts.database.clone(),
            keep_own: opts.keep_own_sessions,
            sessions: Sessions::default(),
            summary: LogSummary {
                format: LogFormat::Stderr,
                prefix: None,
                prefix_inferred: false,
                lines: 0,
                messages: 0,
                skipped_lines: 0,
                own_messages: 0,
                other_db_messages: 0,
                other_databases: Vec::new(),
                first_skipped_line: None,
                counts: Counts::default(),
                first_at_s: None,
                last_at_s: None,
                notes: Vec::new(),
            },
        }
    }

    fn entry(
        &mut self,
        e: Entry,
        sink: &mut dyn FnMut(ObservedTransaction),
    ) -> Result<(), LogError> {
        self.summary.messages += 1;
        self.summary.first_at_s.get_or_insert(e.at_s);
        self.summary.last_at_s = Some(e.at_s);
        if e.session.is_empty() {
            return Ok(());
        }
        if !self.keep_own && e.application.as_deref().is_some_and(is_hotbench_sampler) {
            self.summary.own_messages += 1;
            return Ok(());
        }
        if let (Some(want), Some(db)) = (&self.database, &e.database) {
            if want != db {
                let s = &mut self.summary;
                s.other_db_messages += 1;
                if s.other_databases.len() < 5 && !s.other_databases.contains(db) {
                    s.other_databases.push(db.clone());
                }
                return Ok(());
            }
        }
        self.sessions
            .feed(&e, sink)
            .map_err(|message| LogError::Line {
                file: self.file.clone(),
                line: e.line,
                message,
            })
    }

    fn skipped(&mut self, line: u64) {
        self.summary.skipped_lines += 1;
        self.summary.first_skipped_line.get_or_insert(line);
    }

    fn finish(
        mut self,
        format: LogFormat,
        prefix: Option<String>,
        inferred: bool,
        sink: &mut dyn FnMut(ObservedTransaction),
    ) -> Result<LogSummary, LogError> {
        self.sessions.finish(sink);
        let mut s = self.summary;
        s.format = format;
        s.prefix = prefix;
        s.prefix_inferred = inferred;
        s.counts = self.sessions.counts.clone();
        let others = || {
            s.other_databases
                .iter()
                .map(|d| format!("{d:?}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        if let (0, 1.., Some(want)) = (s.counts.statements, s.other_db_messages, &self.database) {
            return Err(LogError::Format {
                file: self.file,
                message: format!(
                    "no statement of database {want:?} in {} lines: they ran in {} (the log of another database or server?)",
                    s.lines,
                    others()
                ),
            });
        }
        if s.other_db_messages > 0 {
            let note = format!(
                "{} message(s) of other databases ({}) were left out",
                s.other_db_messages,
                others()
            );
            s.notes.push(note);
        }
        if s.counts.statements == 0 {
            return Err(LogError::Format {
                file: self.file,
                message: format!(
                    "no statement in {} lines: the server must log them (log_min_duration_statement = 0{})",
                    s.lines,
                    if s.messages == 0 { ", in English: lc_messages = 'C'" } else { "" }
                ),
            });
        }
        if s.skipped_lines > 0 {
            s.notes.push(format!(
                "{} line(s) were none of the server's messages and were skipped (the first: line {})",
                s.skipped_lines,
                s.first_skipped_line.unwrap_or(0)
            ));
        }
        if s.own_messages > 0 {
            s.notes.push(format!(
                "{} message(s) of hotbench's own sessions (application_name {}…) were left out: a capture's or diagnose's reads are not the workload",
                s.own_messages, OWN_APPLICATIONS[0]
            ));
        }
        if s.counts.cut > 0 {
            s.notes.push(format!(
                "{} transaction(s) had more than {} statements; the rest of each was left out",
                s.counts.cut,
                crate::log_session::MAX_STATEMENTS
            ));
        }
        if s.counts.incomplete > 0 {
            s.notes.push(format!(
                "{} transaction(s) began before the log or were still open at its end (complete = false)",
                s.counts.incomplete
            ));
        }
        Ok(s)
    }
}

/// Which field of the message being read a continuation line (`\t…`) extends.
#[derive(Clone, Copy, PartialEq)]
enum Field {
    Message,
    Detail,
    Statement,
    Other,
}

/// stderr lines into messages: a prefixed line starts one, its DETAIL/STATEMENT/… lines
/// (same session) complete it, tab-led lines continue the field before them.
struct StderrReader<'p> {
    prefix: &'p Prefix,
    pending: Option<Entry>,
    field: Field,
}

impl<'p> StderrReader<'p> {
    fn new(prefix: &'p Prefix) -> Self {
        StderrReader {
            prefix,
            pending: None,
            field: Field::Other,
        }
    }

    fn line(
        &mut self,
        n: u64,
        line: &str,
        st: &mut State,
        sink: &mut dyn FnMut(ObservedTransaction),
    ) -> Result<(), LogError> {
        if let Some(cont) = line.strip_prefix('\t') {
            let Some(e) = self.pending.as_mut() else {
                st.skipped(n);
                return Ok(());
            };
            let target = match self.field {
                Field::Message => Some(&mut e.message),
                Field::Detail => e.detail.as_mut(),
                Field::Statement => e.statement.as_mut(),
                Field::Other => None,
            };
            if let Some(t) = target {
                t.push('\n');
                t.push_str(cont);
            }
            return Ok(());
        }
        let Some((fields, at)) = self.prefix.match_line(line) else {
            st.skipped(n);
            return Ok(());
        };
        let Some((severity, len)) = log_prefix::severity_at(&line[at..]) else {
            st.skipped(n);
            return Ok(());
        };
        let text = &line[at + len..];
        let session = fields.session.or(fields.pid).unwrap_or_default();
        if SECONDARY.contains(&severity) {
            match self.pending.as_mut() {
                Some(e) if e.session == session => {
                    self.field = match severity {
                        "DETAIL" => {
                            e.detail = Some(text.to_string());
                            Field::Detail
                        }
                        "STATEMENT" => {
                            e.statement = Some(text.to_string());
                            Field::Statement
                        }
                        _ => Field::Other,
                    };
                }
                _ => st.skipped(n),
            }
            return Ok(());
        }
        self.flush(st, sink)?;
        let Some(at_s) = fields.at_s else {
            return Err(LogError::Line {
                file: st.file.clone(),
                line: n,
                message: "the line's timestamp is not a date and time".into(),
            });
        };
        self.pending = Some(Entry {
            line: n,
            session,
            at_s,
            vxid: fields.vxid,
            application: fields.application,
            database: fields.database,
            severity: severity.to_string(),
            message: text.to_string(),
            detail: None,
            statement: None,
        });
        self.field = Field::Message;
        Ok(())
    }

    fn flush(
        &mut self,
        st: &mut State,
        sink: &mut dyn FnMut(ObservedTransaction),
    ) -> Result<(), LogError> {
        match self.pending.take() {
            Some(e) => st.entry(e, sink),
            None => Ok(()),
        }
    }
}

/// The `application_name`s of hotbench's own read-only sessions (its probes, `capture`'s
/// sampler and pg_dump, `diagnose`): their statements in a log are not the workload.
pub const OWN_APPLICATIONS: [&str; 3] = ["hotbench-probe", "hotbench capture", "hotbench diagnose"];

/// A session of hotbench's own sampling, by its `application_name`.
pub fn is_hotbench_sampler(application: &str) -> bool {
    OWN_APPLICATIONS.iter().any(|a| application.starts_with(a))
}

#[cfg(test)]
mod own_session_tests {
    use super::*;

    fn read(text: &str, prefix: Option<&str>) -> (Vec<ObservedTransaction>, LogSummary) {
        let mut out = Vec::new();
        let opts = LogOptions {
            prefix: prefix.map(str::to_string),
            ..LogOptions::default()
        };
        let s = read_log_from(text.as_bytes(), "x.log", &opts, &mut |t| out.push(t))
            .expect("the log reads");
        (out, s)
    }

    #[test]
    fn hotbench_sampling_sessions_are_left_out_and_noted() {
        let stderr = "2026-11-28 08:02:28.257 UTC [1] 6b.1 app: LOG:  duration: 0.1 ms  statement: update t set v = 1
2026-11-28 08:02:28.258 UTC [2] 6b.2 hotbench-probe capture: LOG:  duration: 0.1 ms  statement: execute hotbench_capture_activity
2026-11-28 08:02:28.259 UTC [3] 6b.3 hotbench capture (pg_dump): LOG:  duration: 0.1 ms  statement: select 1
2026-11-28 08:02:28.260 UTC [4] 6b.4 hotbench diagnose: LOG:  duration: 0.1 ms  statement: select 2
2026-11-28 08:02:28.261 UTC [5] 6b.5 hotbench run: LOG:  duration: 0.1 ms  statement: select 3
";
        let (txs, s) = read(stderr, Some("%m [%p] %c %a: "));
        let mut sessions: Vec<&str> = txs.iter().map(|t| t.session.as_str()).collect();
        sessions.sort_unstable();
        assert_eq!(sessions, ["6b.1", "6b.5"]);
        assert_eq!(s.own_messages, 3);
        let kept = read_log_from(
            stderr.as_bytes(),
            "x.log",
            &LogOptions {
                prefix: Some("%m [%p] %c %a: ".into()),
                keep_own_sessions: true,
                ..LogOptions::default()
            },
            &mut |_| {},
        )
        .expect("the log reads");
        assert_eq!((kept.counts.statements, kept.own_messages), (5, 0));
        assert!(
            s.notes
                .iter()
                .any(|n| n.contains("3 message(s) of hotbench's own")),
            "{:?}",
            s.notes
        );
        let csv = r#"2026-11-28 08:02:28.257 UTC,"postgres","app",18557,"[local]",6b.1,1,"UPDATE",2026-11-28 08:02:28 UTC,3/6,0,LOG,00000,"duration: 0.1 ms  statement: update t set v = 1",,,,,,,,,"psql","client backend",,0
2026-11-28 08:02:28.258 UTC,"postgres","app",18558,"[local]",6b.2,1,"SELECT",2026-11-28 08:02:28 UTC,4/6,0,LOG,00000,"duration: 0.1 ms  statement: select 1",,,,,,,,,"hotbench-probe capture","client backend",,0
"#;
        let (txs, s) = read(csv, None);
        assert_eq!(txs.len(), 1);
        assert_eq!(txs[0].session, "6b.1");
        assert_eq!(s.own_messages, 1);
    }

    #[test]
    fn other_databases_are_left_out_where_the_log_names_them() {
        let stderr = "2026-11-28 08:02:28.257 UTC [1] 6b.1 app: LOG:  duration: 0.1 ms  statement: update t set v = 1
2026-11-28 08:02:28.258 UTC [2] 6b.2 postgres: LOG:  duration: 0.1 ms  statement: select 1
";
        let mut out = Vec::new();
        let opts = LogOptions {
            prefix: Some("%m [%p] %c %d: ".into()),
            database: Some("app".into()),
            ..LogOptions::default()
        };
        let s = read_log_from(stderr.as_bytes(), "x.log", &opts, &mut |t| out.push(t))
            .expect("the log reads");
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].session, "6b.1");
        assert_eq!(
            (s.other_db_messages, &s.other_databases[..]),
            (1, &["postgres".to_string()][..])
        );
        let only_other = LogOptions {
            database: Some("shop".into()),
            ..opts
        };
        let e = read_log_from(stderr.as_bytes(), "x.log", &only_other, &mut |_| {})
            .expect_err("no statement of shop");
        assert!(
            e.to_string().contains(
                "no statement of database \"shop\" in 2 lines: they ran in \"app\", \"postgres\""
            ),
            "{e}"
        );
    }

    #[test]
    fn pgbadgers_prefix_inferred_names_application_and_database() {
        let mut text = String::new();
        for (pid, app, db) in [
            (7, "psql", "app"),
            (8, "hotbench-probe capture", "app"),
            (9, "psql", "postgres"),
        ] {
            for n in 0..5 {
                text.push_str(&format!(
                    "2026-11-28 08:02:2{n} UTC [{pid}]: [{n}-1] user=bob,db={db},app={app},client=[local] LOG:  duration: 0.1 ms  statement: select {n}\n"
                ));
            }
        }
        let mut out = Vec::new();
        let opts = LogOptions {
            database: Some("app".into()),
            ..LogOptions::default()
        };
        let s = read_log_from(text.as_bytes(), "x.log", &opts, &mut |t| out.push(t))
            .expect("the log reads");
        assert!(s.prefix_inferred);
        // Without %v, a pid's statements before any BEGIN are held as one incomplete block.
        assert_eq!(
            (s.counts.statements, s.own_messages, s.other_db_messages),
            (5, 5, 5),
            "{s:?}"
        );
        assert!(out.iter().all(|t| t.session == "7"));
    }
}
