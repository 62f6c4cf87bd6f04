//! pgbench's progress lines while client-side generation copies `pgbench_accounts`:
//! `100000 of 200000 tuples (50%) done (elapsed 0.10 s, remaining 0.10 s)`, every
//! 100,000 rows, or with `-q` at most every 5 seconds (checked each 100 rows) plus the
//! last row. On a terminal each line ends in `\r` (one line updating in place) and a
//! final `\n` follows; otherwise each ends in `\n`. Same arithmetic as pgbench 15.

use std::io::{self, Write};

/// `-q` reports at most this often (pgbench's `LOG_STEP_SECONDS`).
pub const LOG_STEP_SECONDS: f64 = 5.0;

/// One progress line without its end-of-line character.
pub fn progress_line(j: i64, total: i64, elapsed_sec: f64) -> String {
    let remaining_sec = (total - j) as f64 * elapsed_sec / j as f64;
    format!(
        "{j} of {total} tuples ({}%) done (elapsed {elapsed_sec:.2} s, remaining {remaining_sec:.2} s)",
        (j * 100) / total
    )
}

/// When to print a progress line, and printing it.
#[derive(Debug)]
pub struct Progress {
    total: i64,
    quiet: bool,
    eol: char,
    log_interval: f64,
}

impl Progress {
    /// For `total` rows; `terminal` selects `\r` line ends.
    pub fn new(total: i64, quiet: bool, terminal: bool) -> Progress {
        Progress {
            total,
            quiet,
            eol: if terminal { '\r' } else { '\n' },
            log_interval: 1.0,
        }
    }

    /// After row `j` (1-based) was generated. `elapsed` (seconds since the COPY started)
    /// is only called when pgbench would read the clock.
    #[inline]
    pub fn row_done(
        &mut self,
        j: i64,
        elapsed: impl FnOnce() -> f64,
        out: &mut dyn Write,
    ) -> io::Result<()> {
        if !self.quiet {
            if j % 100_000 == 0 {
                let e = elapsed();
                write!(out, "{}{}", progress_line(j, self.total, e), self.eol)?;
                out.flush()?;
            }
        } else if j % 100 == 0 {
            let e = elapsed();
            if j == self.total || e >= self.log_interval * LOG_STEP_SECONDS {
                write!(out, "{}{}", progress_line(j, self.total, e), self.eol)?;
                out.flush()?;
                self.log_interval = (e / LOG_STEP_SECONDS).ceil();
            }
        }
        Ok(())
    }

    /// After the last row: leaves the terminal's updating line.
    pub fn finish(&self, out: &mut dyn Write) -> io::Result<()> {
        if self.eol != '\n' {
            out.write_all(b"\n")?;
        }
        out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(total: i64, quiet: bool, terminal: bool, secs_per_row: f64) -> String {
        let mut out = Vec::new();
        let mut p = Progress::new(total, quiet, terminal);
        for j in 1..=total {
            p.row_done(j, || j as f64 * secs_per_row, &mut out).unwrap();
        }
        p.finish(&mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn every_100000_rows() {
        assert_eq!(
            run(200_000, false, false, 1e-6),
            "100000 of 200000 tuples (50%) done (elapsed 0.10 s, remaining 0.10 s)\n\
             200000 of 200000 tuples (100%) done (elapsed 0.20 s, remaining 0.00 s)\n"
        );
    }

    #[test]
    fn terminal_uses_carriage_returns() {
        assert_eq!(
            run(100_000, false, true, 1e-6),
            "100000 of 100000 tuples (100%) done (elapsed 0.10 s, remaining 0.00 s)\r\n"
        );
    }

    #[test]
    fn quiet_every_five_seconds_and_last() {
        // 12.1 s in total: lines after 5 s, after 10 s, and at the end.
        let out = run(120_000, true, false, 1.01e-4);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 3, "{out}");
        assert_eq!(
            lines[0],
            "49600 of 120000 tuples (41%) done (elapsed 5.01 s, remaining 7.11 s)"
        );
        assert!(lines[1].starts_with("99100 of 120000 tuples (82%) done (elapsed 10.01 s"));
        assert!(lines[2].starts_with("120000 of 120000 tuples (100%)"));
        assert_eq!(
            run(200_000, true, false, 1e-7),
            "200000 of 200000 tuples (100%) done (elapsed 0.02 s, remaining 0.00 s)\n"
        );
    }
}
