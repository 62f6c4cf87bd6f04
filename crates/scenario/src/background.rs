//! What runs beside the measured clients: background perturbations (a connection that runs
//! some SQL when the variant starts and keeps its session, e.g. an open repeatable-read
//! transaction holding back the xmin horizon) and monitors (one-number queries sampled every
//! interval over their own connection, opened again should the server restart: queue
//! backlog, age at dequeue).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use hotbench_wire::{Config, Connection};

use crate::db;
use crate::error::{Result, ScenarioError};
use crate::params::Params;
use hotbench_stats::MonitorSeries;

/// A perturbation's connection, kept open until [`Holder::stop`].
pub struct Holder {
    pub name: String,
    conn: Connection,
    end: String,
}

impl Holder {
    pub fn start(cfg: &Config, name: &str, file: &str, sql: &str, end: &str) -> Result<Holder> {
        let mut conn = db::connect(cfg)?;
        db::run_file(&mut conn, file, sql)?;
        Ok(Holder {
            name: name.to_string(),
            conn,
            end: end.to_string(),
        })
    }

    pub fn stop(mut self) {
        let _ = self.conn.simple_query(&self.end);
        self.conn.close();
    }
}

/// A perturbation's or monitor's `when`: on unless it expands to something other than
/// `on`, `true`, `yes` or `1`.
pub fn switched_on(params: &Params, when: Option<&str>, what: &str) -> Result<bool> {
    let Some(w) = when else { return Ok(true) };
    let w = params
        .substitute(w, &BTreeMap::new())
        .map_err(|e| ScenarioError::Input(format!("{what}: {e}")))?;
    Ok(matches!(
        w.trim().to_ascii_lowercase().as_str(),
        "on" | "true" | "yes" | "1"
    ))
}

/// What went wrong with one monitor's samples: a monitor that fails or answers no number is
/// named in the variant's notes, not dropped in silence.
#[derive(Debug, Default)]
struct Trouble {
    tries: u64,
    failed: u64,
    empty: u64,
    first_error: Option<String>,
}

impl Trouble {
    fn note(&self, name: &str) -> Option<String> {
        if let Some(e) = &self.first_error {
            return Some(format!(
                "monitor \"{name}\" failed in {} of {} samples: {e}",
                self.failed, self.tries
            ));
        }
        (self.empty > 0).then(|| {
            format!(
                "monitor \"{name}\" returned no number (NULL, no row or not numeric) in {} of {} samples",
                self.empty, self.tries
            )
        })
    }
}

/// Sampling threads of the monitors.
pub struct Monitors {
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<(Vec<MonitorSeries>, Vec<String>)>>,
    /// Each monitor's latest value, for the live progress lines.
    latest: Arc<Mutex<Vec<(String, f64)>>>,
}

impl Monitors {
    /// Starts sampling `(name, sql)` every `interval` (nothing when the list is empty).
    pub fn start(cfg: &Config, monitors: Vec<(String, String)>, interval: Duration) -> Monitors {
        let stop = Arc::new(AtomicBool::new(false));
        let latest = Arc::new(Mutex::new(Vec::new()));
        if monitors.is_empty() {
            return Monitors {
                stop,
                handle: None,
                latest,
            };
        }
        let shared = latest.clone();
        let (ready_tx, ready_rx) = mpsc::channel();
        let cfg = cfg.clone();
        let flag = stop.clone();
        let handle = std::thread::spawn(move || {
            let mut series: Vec<MonitorSeries> = monitors
                .iter()
                .map(|(n, _)| MonitorSeries {
                    name: n.clone(),
                    samples: Vec::new(),
                })
                .collect();
            let conn = db::connect(&cfg);
            let _ = ready_tx.send(());
            let mut conn = match conn {
                Ok(c) => c,
                Err(e) => {
                    let note = format!("monitors did not run: could not connect: {e}");
                    return (series, vec![note]);
                }
            };
            let mut trouble: Vec<Trouble> = monitors.iter().map(|_| Trouble::default()).collect();
            let t0 = Instant::now();
            let mut next = t0;
            while !flag.load(Ordering::SeqCst) {
                let mut now = Vec::with_capacity(monitors.len());
                for (i, (name, sql)) in monitors.iter().enumerate() {
                    let t = &mut trouble[i];
                    t.tries += 1;
                    match conn.simple_query(sql) {
                        Ok(r) => match db::scalar(&r).filter(|v| v.is_finite()) {
                            Some(v) => {
                                series[i].samples.push((t0.elapsed().as_secs_f64(), v));
                                now.push((name.clone(), v));
                            }
                            None => t.empty += 1,
                        },
                        Err(e) => {
                            t.failed += 1;
                            t.first_error.get_or_insert_with(|| e.to_string());
                            // The server restarted (a `restart` perturbation): sample again
                            // from a new session once it is back.
                            if e.is_connection_lost() {
                                if let Ok(c) = db::connect(&cfg) {
                                    conn = c;
                                }
                            }
                        }
                    }
                }
                if let Ok(mut l) = shared.lock() {
                    *l = now;
                }
                next += interval;
                while Instant::now() < next && !flag.load(Ordering::SeqCst) {
                    std::thread::sleep(Duration::from_millis(20));
                }
            }
            conn.close();
            let notes = monitors
                .iter()
                .zip(&trouble)
                .filter_map(|((name, _), t)| t.note(name))
                .collect();
            (series, notes)
        });
        let _ = ready_rx.recv_timeout(Duration::from_secs(10));
        Monitors {
            stop,
            handle: Some(handle),
            latest,
        }
    }

    /// The latest value of each monitor (those that answered at their last sampling).
    pub fn latest(&self) -> Vec<(String, f64)> {
        self.latest.lock().map(|l| l.clone()).unwrap_or_default()
    }

    /// The samples, and a note per monitor that failed or answered no number.
    pub fn finish(mut self) -> (Vec<MonitorSeries>, Vec<String>) {
        self.stop.store(true, Ordering::SeqCst);
        self.handle
            .take()
            .and_then(|h| h.join().ok())
            .unwrap_or_default()
    }
}
