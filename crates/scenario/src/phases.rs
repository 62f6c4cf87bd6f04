//! Where a ladder's time goes. A 5-second variant once took 9 s of wall time, and a ceiling
//! whose check read the ledger once per customer took minutes, with nothing on the screen
//! but the measured run's progress. Each variant's phases are timed (`phases_s` in the
//! ladder file), a phase still running after 2 s says so on the progress output while it
//! runs, and a phase longer than a quarter of the measured run gets a note.

use std::io::Write;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use hotbench_results::PhaseTimes;

/// A phase shows on the progress output once it has run this long.
pub const SHOW_AFTER: Duration = Duration::from_secs(2);
/// … and then every this often.
const SHOW_EVERY: Duration = Duration::from_secs(5);

/// How a slow phase shows while it runs: `prefix` before the first `2 s…` (the text that
/// names the phase), and whether its line is ended when the phase ends.
pub struct Live<'a> {
    pub prefix: &'a str,
    pub end_line: bool,
}

impl<'a> Live<'a> {
    /// `Some` when the progress output is on.
    pub fn when(on: bool, prefix: &'a str, end_line: bool) -> Option<Live<'a>> {
        on.then_some(Live { prefix, end_line })
    }
}

/// Runs `f`, returning its value and its wall-clock seconds. With `live`, a watcher thread
/// writes `PREFIX 2 s… 7 s…` to `log` while `f` is still running (`f` itself runs on the
/// calling thread and never writes to `log` meanwhile).
pub fn timed<T>(
    log: &mut (dyn Write + Send),
    live: Option<Live<'_>>,
    f: impl FnOnce() -> T,
) -> (T, f64) {
    let start = Instant::now();
    let Some(live) = live else {
        let r = f();
        return (r, start.elapsed().as_secs_f64());
    };
    let (done, ended) = mpsc::channel::<()>();
    let r = std::thread::scope(|s| {
        s.spawn(move || {
            let mut next = SHOW_AFTER;
            let mut shown = false;
            loop {
                let wait = next.saturating_sub(start.elapsed());
                match ended.recv_timeout(wait) {
                    Err(mpsc::RecvTimeoutError::Timeout) => {
                        let lead = if shown { " " } else { live.prefix };
                        let _ = write!(log, "{lead}{} s…", next.as_secs());
                        let _ = log.flush();
                        shown = true;
                        next += SHOW_EVERY;
                    }
                    _ => break,
                }
            }
            if shown && live.end_line {
                let _ = writeln!(log);
            }
        });
        let r = f();
        drop(done);
        r
    });
    (r, start.elapsed().as_secs_f64())
}

/// A note for each phase but the run that took more than a quarter of the measured run:
/// `phase checks took 4.2 s (84% of the 5 s run)`.
pub fn notes(p: &PhaseTimes) -> Vec<String> {
    if p.run <= 0.0 {
        return Vec::new();
    }
    p.named()
        .iter()
        .filter(|(name, s)| *name != "run" && *s > p.run / 4.0)
        .map(|(name, s)| {
            format!(
                "phase {name} took {s:.1} s ({:.0}% of the {:.0} s run)",
                s * 100.0 / p.run,
                p.run
            )
        })
        .collect()
}

/// The ladder's closing line: `ladder: 62 s wall, 35 s of measured runs (7 variants); 3.9
/// s per variant outside its run (median)`.
pub fn total_line(wall_s: f64, phases: &[&PhaseTimes]) -> String {
    let runs: f64 = phases.iter().map(|p| p.run).sum();
    let mut outside: Vec<f64> = phases.iter().map(|p| p.outside_run()).collect();
    outside.sort_by(f64::total_cmp);
    let mut line = format!(
        "ladder: {wall_s:.0} s wall, {runs:.0} s of measured runs ({} variants)",
        phases.len()
    );
    if let Some(m) = median(&outside) {
        line.push_str(&format!("; {m:.1} s per variant outside its run (median)"));
    }
    line
}

/// The median of sorted values.
fn median(sorted: &[f64]) -> Option<f64> {
    let n = sorted.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(sorted[n / 2]),
        _ => Some((sorted[n / 2 - 1] + sorted[n / 2]) / 2.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn phases(setup: f64, run: f64, checks: f64) -> PhaseTimes {
        PhaseTimes {
            setup,
            run,
            checks,
            connect: 0.1,
            finish: 0.2,
            teardown: 0.1,
        }
    }

    #[test]
    fn a_phase_over_a_quarter_of_the_run_is_noted() {
        let p = phases(0.3, 5.0, 4.2);
        assert_eq!(notes(&p), ["phase checks took 4.2 s (84% of the 5 s run)"]);
        assert!(notes(&phases(1.2, 5.0, 1.25)).is_empty());
        assert!((p.outside_run() - 4.9).abs() < 1e-9);
    }

    #[test]
    fn the_total_line_gives_the_median_time_outside_the_runs() {
        let a = phases(0.5, 5.0, 0.2);
        let b = phases(1.5, 5.0, 0.2);
        let c = phases(9.0, 5.0, 0.2);
        assert_eq!(
            total_line(31.2, &[&a, &b, &c]),
            "ladder: 31 s wall, 15 s of measured runs (3 variants); 2.1 s per variant \
             outside its run (median)"
        );
    }

    /// A writer the test can read while the watcher holds it.
    #[derive(Clone, Default)]
    struct Shared(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_slow_phase_shows_while_it_runs_and_a_quick_one_does_not() {
        let live = || Live {
            prefix: "  v: checks… ",
            end_line: true,
        };
        let out = Shared::default();
        let (v, s) = timed(&mut out.clone(), Some(live()), || 7);
        assert_eq!((v, out.0.lock().unwrap().len()), (7, 0));
        assert!(s < SHOW_AFTER.as_secs_f64());
        // A slow phase: it ends only once the watcher has shown it (polled, bounded).
        let (_, s) = timed(&mut out.clone(), Some(live()), || {
            let start = Instant::now();
            while out.0.lock().unwrap().is_empty() && start.elapsed() < Duration::from_secs(60) {
                std::thread::sleep(Duration::from_millis(20));
            }
        });
        assert!(s >= SHOW_AFTER.as_secs_f64());
        let text = String::from_utf8(out.0.lock().unwrap().clone()).unwrap();
        assert_eq!(text, "  v: checks… 2 s…\n");
    }
}
