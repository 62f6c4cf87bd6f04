//! Live progress of a ladder, like pgbench's `-P`: while a variant runs, a line every few
//! seconds with the work group's useful work per second (in the scenario's unit) and p99,
//! the monitors' latest values (a queue's backlog, dead tuples) and the time left for the
//! whole ladder, so a ten-minute-per-variant run is not silent. `--quiet` turns it off.

use std::io::Write;

use hotbench_results::{IntervalRecord, IntervalStats};

use hotbench_engine::RunObserver;

use crate::background::Monitors;
use hotbench_results::VariantResult;

/// Seconds between progress lines for a variant of `duration_s`: about six lines per
/// variant, at least every second and at most every 10 s.
pub fn period_s(duration_s: u64) -> u64 {
    (duration_s / 6).clamp(1, 10)
}

/// `1m05s`, `42s`.
pub fn human(seconds: u64) -> String {
    if seconds >= 60 {
        format!("{}m{:02}s", seconds / 60, seconds % 60)
    } else {
        format!("{seconds}s")
    }
}

/// What a progress line needs besides the interval itself.
pub struct LineContext<'a> {
    pub variant: &'a str,
    /// `jobs`, or `goodput` when the scenario has no unit.
    pub unit: &'a str,
    /// Index of the work group in the record's groups (`None`: the totals).
    pub work_group: Option<usize>,
    pub duration_s: u64,
    /// Seconds the variants after this one will take.
    pub left_after_s: u64,
}

/// One line: `  skip-locked 10 s: 4123 jobs/s, p99 12.10 ms, backlog 2000, dead
/// tuples 51234; ladder 3m10s left`.
pub fn line(cx: &LineContext<'_>, iv: &IntervalRecord, monitors: &[(String, f64)]) -> String {
    let s: &IntervalStats = match cx.work_group {
        Some(g) => iv.groups.get(g).unwrap_or(&iv.totals),
        None => &iv.totals,
    };
    let mut out = format!(
        "  {} {:.0} s: {:.0} {}/s, p99 {:.2} ms",
        cx.variant, iv.t, s.goodput_per_s, cx.unit, s.lat_p99_ms
    );
    for (name, value) in monitors {
        out.push_str(&format!(", {name} {value:.0}"));
    }
    let left = cx.duration_s.saturating_sub(iv.t as u64) + cx.left_after_s;
    out.push_str(&format!("; ladder {} left", human(left)));
    out
}

/// Prints a line every [`period_s`] seconds of the run: an observer of the engine's run.
pub struct Printer<'a> {
    pub cx: LineContext<'a>,
    pub out: &'a mut dyn Write,
    /// Where the monitors' latest values come from (none in tests).
    monitors: Option<&'a Monitors>,
    next_at: f64,
}

impl<'a> Printer<'a> {
    pub fn new(cx: LineContext<'a>, out: &'a mut dyn Write, monitors: &'a Monitors) -> Printer<'a> {
        let mut p = Printer::bare(cx, out);
        p.monitors = Some(monitors);
        p
    }

    fn bare(cx: LineContext<'a>, out: &'a mut dyn Write) -> Printer<'a> {
        let next_at = period_s(cx.duration_s) as f64;
        Printer {
            cx,
            out,
            monitors: None,
            next_at,
        }
    }

    /// Called for every timeline interval; `monitors` gives the latest monitor values.
    pub fn interval(&mut self, iv: &IntervalRecord, monitors: &[(String, f64)]) {
        // The trailing partial interval is past the run's end: the final line says it all.
        if iv.t + 1e-6 < self.next_at || iv.t > self.cx.duration_s as f64 + 0.5 {
            return;
        }
        let _ = writeln!(self.out, "{}", line(&self.cx, iv, monitors));
        let _ = self.out.flush();
        while self.next_at <= iv.t + 1e-6 {
            self.next_at += period_s(self.cx.duration_s) as f64;
        }
    }
}

/// `6739 jobs/s (consumer), p99 12.40 ms, checks 5/5`: the work group's figures in the
/// scenario's unit.
pub fn done_line(v: &VariantResult, m: &crate::manifest::Manifest) -> String {
    let unit = m.work.as_ref().map_or("goodput", |w| w.unit.as_str());
    let group = v
        .work_group
        .as_deref()
        .filter(|_| v.record.as_ref().is_some_and(|r| r.groups.len() > 1))
        .map(|g| format!(" ({g})"))
        .unwrap_or_default();
    let p99 = v.work_record().map_or(0.0, |r| r.totals.latency.p99_ms);
    let ok = v.checks.iter().filter(|c| c.ok).count();
    format!(
        "{:.0} {unit}/s{group}, p99 {p99:.2} ms, checks {ok}/{}",
        v.useful_per_s().unwrap_or(0.0),
        v.checks.len()
    )
}

impl RunObserver for Printer<'_> {
    fn interval(&mut self, iv: &IntervalRecord) {
        let latest = self.monitors.map(|m| m.latest()).unwrap_or_default();
        Printer::interval(self, iv, &latest);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn iv(t: f64, jobs: f64, p99: f64) -> IntervalRecord {
        let g = IntervalStats {
            goodput_per_s: jobs,
            lat_p99_ms: p99,
            ..Default::default()
        };
        IntervalRecord {
            t,
            totals: IntervalStats {
                goodput_per_s: jobs + 500.0,
                lat_p99_ms: 5000.0,
                ..Default::default()
            },
            groups: vec![IntervalStats::default(), g],
        }
    }

    #[test]
    fn lines_show_the_work_group_the_monitors_and_the_time_left() {
        let cx = LineContext {
            variant: "skip-locked",
            unit: "jobs",
            work_group: Some(1),
            duration_s: 300,
            left_after_s: 310,
        };
        let mons = [
            ("backlog".to_string(), 2000.0),
            ("dead tuples".into(), 51234.4),
        ];
        assert_eq!(
            line(&cx, &iv(10.0, 4123.2, 12.1), &mons),
            "  skip-locked 10 s: 4123 jobs/s, p99 12.10 ms, backlog 2000, dead tuples 51234; \
             ladder 10m00s left"
        );
    }

    #[test]
    fn a_line_every_period_and_none_for_the_trailing_partial_interval() {
        let cx = LineContext {
            variant: "v",
            unit: "goodput",
            work_group: None,
            duration_s: 30,
            left_after_s: 0,
        };
        let mut out = Vec::new();
        {
            let mut p = Printer::bare(cx, &mut out);
            for t in 1..=30 {
                p.interval(&iv(t as f64, 1.0, 1.0), &[]);
            }
            p.interval(&iv(30.9, 1.0, 1.0), &[]);
        }
        let text = String::from_utf8(out).unwrap();
        assert_eq!(text.lines().count(), 6, "{text}");
        assert!(text
            .lines()
            .next()
            .unwrap()
            .starts_with("  v 5 s: 501 goodput/s"));
        assert!(text.ends_with("ladder 0s left\n"), "{text}");
        assert_eq!(period_s(600), 10);
        assert_eq!(period_s(3), 1);
        assert_eq!(human(3725), "62m05s");
    }
}
