//! Collecting one SQL command's results from backend messages, without allocating in the
//! steady state: row counts always, column names and the last row's values only when the
//! command has `\gset`/`\aset`. Compound commands (`\;`) yield several results; whether a
//! result is the last one is known only when the next one starts or ReadyForQuery arrives,
//! so the previous result is kept pending until then (pgbench peeks ahead the same way).

use hotbench_script::{QueryResult, ResultError, SqlCommand, Variables};
use hotbench_wire::backend::{DataRowBody, RowDescriptionBody};
use hotbench_wire::results::{column_names, interpret, row_values, Progress, ResultSink};
use hotbench_wire::{DbError, Message};

#[derive(Debug)]
pub struct Collector {
    /// Index of the result being received within the command.
    query: usize,
    ntuples: usize,
    has_rows: bool,
    in_result: bool,
    pending: bool,
    want_values: bool,
    cols: Vec<String>,
    vals: Vec<String>,
    /// First server error of the command.
    pub error: Option<DbError>,
    /// A `\gset`/`\aset` failure (aborts the client like pgbench).
    pub store_error: Option<ResultError>,
    /// Rows returned or affected by the last result (goodput "rows" rule).
    pub last_rows: u64,
    /// Transaction status byte of the ReadyForQuery that ended the command.
    pub tx_status: u8,
    /// A ParseComplete arrived (the statement sent with Parse exists on the server).
    pub parsed: bool,
    /// The server entered COPY mode (pgbench aborts the client: scripts cannot feed COPY).
    pub copy_started: bool,
    /// Server notices not yet handed to the core (it shows them on stderr as libpq's
    /// default notice processor does).
    pub notices: Vec<String>,
    /// A notice saying the session is going away (57P01 of an immediate shutdown, which
    /// PostgreSQL sends as a WARNING before it closes the connection): the session's last
    /// word when the connection is lost next.
    pub farewell: Option<DbError>,
}

impl Default for Collector {
    /// Idle before any command: a script made only of meta-commands ends its transaction
    /// outside any block, as in pgbench.
    fn default() -> Self {
        Collector {
            query: 0,
            ntuples: 0,
            has_rows: false,
            in_result: false,
            pending: false,
            want_values: false,
            cols: Vec::new(),
            vals: Vec::new(),
            error: None,
            store_error: None,
            last_rows: 0,
            tx_status: b'I',
            parsed: false,
            copy_started: false,
            notices: Vec::new(),
            farewell: None,
        }
    }
}

/// What a message meant for the command in flight.
#[derive(Debug, PartialEq, Eq)]
pub enum Step {
    More,
    /// ReadyForQuery: the command is complete.
    Done,
}

impl Collector {
    pub fn start(&mut self, sql: Option<&SqlCommand>) {
        self.query = 0;
        self.ntuples = 0;
        self.has_rows = false;
        self.in_result = false;
        self.pending = false;
        self.want_values = sql.is_some_and(|s| s.wants_result(true) || s.wants_result(false));
        self.error = None;
        self.store_error = None;
        self.last_rows = 0;
        self.tx_status = b'I';
        self.parsed = false;
        self.copy_started = false;
    }

    /// Handles one backend message for `sql` (None for ROLLBACK or pipeline syncs).
    #[inline]
    pub fn on_message(
        &mut self,
        msg: &Message,
        sql: Option<&SqlCommand>,
        vars: &mut Variables,
    ) -> Result<Step, hotbench_wire::Error> {
        if matches!(
            msg,
            Message::CopyInResponse(_) | Message::CopyOutResponse(_)
        ) {
            self.copy_started = true;
            return Ok(Step::Done);
        }
        let mut sink = Sink { c: self, sql, vars };
        match interpret(msg, &mut sink)? {
            Progress::More => Ok(Step::More),
            Progress::Ready(status) => {
                self.tx_status = status;
                if self.error.is_none() {
                    self.flush_pending(sql, vars, true);
                }
                Ok(Step::Done)
            }
        }
    }

    fn begin_result(&mut self, sql: Option<&SqlCommand>, vars: &mut Variables) {
        if self.pending {
            self.flush_pending(sql, vars, false);
            self.query += 1;
        }
        self.in_result = true;
        self.has_rows = false;
        self.ntuples = 0;
    }

    fn end_result(&mut self) {
        self.in_result = false;
        self.pending = true;
    }

    fn flush_pending(&mut self, sql: Option<&SqlCommand>, vars: &mut Variables, is_last: bool) {
        if !self.pending {
            return;
        }
        self.pending = false;
        let Some(sql) = sql else { return };
        if self.store_error.is_some() || !sql.wants_result(is_last) {
            return;
        }
        let outcome = if self.has_rows {
            let pairs: Vec<(&str, &str)> = self
                .cols
                .iter()
                .zip(self.vals.iter())
                .map(|(c, v)| (c.as_str(), v.as_str()))
                .collect();
            sql.store_result(
                vars,
                self.query,
                is_last,
                QueryResult::Rows {
                    ntuples: self.ntuples,
                    last_row: &pairs,
                },
            )
        } else {
            sql.store_result(vars, self.query, is_last, QueryResult::NoRows)
        };
        if let Err(e) = outcome {
            self.store_error = Some(e);
        }
    }

    fn read_columns(&mut self, body: &RowDescriptionBody) -> Result<(), hotbench_wire::Error> {
        self.cols.clear();
        column_names(body, &mut self.cols)
    }

    fn read_row(&mut self, body: &DataRowBody) -> Result<(), hotbench_wire::Error> {
        let vals = &mut self.vals;
        let n = row_values(body, |i, value| {
            if vals.len() <= i {
                vals.push(String::new());
            }
            let v = &mut vals[i];
            v.clear();
            if let Some(bytes) = value {
                v.push_str(&String::from_utf8_lossy(bytes));
            }
        })?;
        vals.truncate(n);
        Ok(())
    }
}

/// The collector's view of one message of the command in flight.
struct Sink<'a, 'v> {
    c: &'a mut Collector,
    sql: Option<&'a SqlCommand>,
    vars: &'v mut Variables,
}

impl ResultSink for Sink<'_, '_> {
    fn columns(&mut self, body: &RowDescriptionBody) -> Result<(), hotbench_wire::Error> {
        self.c.begin_result(self.sql, self.vars);
        self.c.has_rows = true;
        if self.c.want_values {
            self.c.read_columns(body)?;
        }
        Ok(())
    }

    fn row(&mut self, body: &DataRowBody) -> Result<(), hotbench_wire::Error> {
        if !self.c.in_result {
            self.c.begin_result(self.sql, self.vars);
            self.c.has_rows = true;
        }
        self.c.ntuples += 1;
        if self.c.want_values {
            self.c.read_row(body)?;
        }
        Ok(())
    }

    fn complete(&mut self, _tag: &str, rows: Option<u64>) {
        if !self.c.in_result {
            self.c.begin_result(self.sql, self.vars);
        }
        self.c.last_rows = (self.c.ntuples as u64).max(rows.unwrap_or(0));
        self.c.end_result();
    }

    fn empty(&mut self) {
        if !self.c.in_result {
            self.c.begin_result(self.sql, self.vars);
        }
        self.c.last_rows = 0;
        self.c.end_result();
    }

    fn error(&mut self, err: DbError) {
        if self.c.error.is_none() {
            self.c.error = Some(err);
        }
        self.c.in_result = false;
        self.c.pending = false;
    }

    fn parsed(&mut self) {
        self.c.parsed = true;
    }

    /// Server notices go to stderr as libpq's default notice processor prints them (pgbench
    /// shows them that way: `WARNING:  SET LOCAL can only be used in transaction blocks`).
    fn notice(&mut self, notice: DbError) {
        self.c.notices.push(crate::retry::one_line(&notice));
        if notice.code.is_connection_lost() {
            self.c.farewell = Some(notice);
        }
    }
}
