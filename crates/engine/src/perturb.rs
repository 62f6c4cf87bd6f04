//! The perturbation driver (`--perturb`): a thread that starts with the benchmark, waits for
//! each perturbation's time and fires it on a thread of its own, over its own connection to
//! the target (the clients' connection options, another `application_name`), so a lock held
//! or a slow CHECKPOINT never blocks the engine or the next perturbation. When the run ends,
//! [`Driver::finish`] wakes it, cancels what is still running on the server, releases what
//! is held, and returns what happened as record entries (the recovery is judged afterwards
//! from the timeline, `stats::perturbation_record::judge`). What each kind executes is
//! `perturb_sql.rs` (SQL on its own connection), `perturb_server.rs` (the server's processes:
//! restart, pause, or the user's `--perturb-cmd`) and, for the run's own `rtt` and `rate`,
//! [`knob`] here. [`check`] refuses before the run what cannot be done (a restart of a
//! server hotbench did not start and no command for it, a rate burst without `-R`). In a
//! sharded run (`--shard I/N`) shard 0 fires what acts on the whole server, once for the run;
//! every shard does what acts on the run's clients to its own.

use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use hotbench_settings::perturb::{At, Kind, Perturbation, Scope};
use hotbench_settings::perturb_cmd::{command_for, PerturbCmd};
use hotbench_stats::PerturbationRecord;
use hotbench_wire::{CancelToken, Connector};

use crate::clock::now_us;
use crate::config::RunConfig;
use crate::knobs::Knobs;
use crate::server_process::ServerHandle;

/// Refuses, before the run, perturbations this run cannot do: `restart` or `pause` of a
/// server hotbench did not start with no `--perturb-cmd` for it, `rate` without `-R`.
pub(crate) fn check(cfg: &RunConfig) -> Result<(), String> {
    let s = &cfg.settings;
    for p in &s.perturb {
        let name = p.kind.name();
        if p.kind.needs_server_process()
            && cfg.server.is_none()
            && command_for(&s.perturb_cmd, name).is_none()
        {
            return Err(format!(
                "--perturb {p}: {name} acts on the server's processes, which hotbench does only \
                 to a server it started (the embedded one); for your server give \
                 --perturb-cmd '{name}=COMMAND' (e.g. 'restart=pg_ctl -D DATADIR restart -m fast', \
                 or a Patroni switchover)"
            ));
        }
        if matches!(p.kind, Kind::Rate { .. }) && run_rate(cfg) <= 0.0 {
            return Err(format!(
                "--perturb {p}: rate= changes the open-loop rate for a while, and this run has \
                 none: give -R (or a rate to a scenario's group)"
            ));
        }
    }
    Ok(())
}

/// The run's open-loop rate, transactions per second (0: closed loop).
fn run_rate(cfg: &RunConfig) -> f64 {
    cfg.groups
        .iter()
        .filter_map(|g| g.rate.filter(|r| *r > 0.0 && g.clients > 0))
        .sum()
}

/// What the firings share: the stop flag (with its condition variable, so waits end at
/// once), the cancel tokens of the statements in flight, and the run's start.
pub(crate) struct Ctx {
    stopped: Mutex<bool>,
    wake: Condvar,
    in_flight: Mutex<Vec<(u64, CancelToken)>>,
    /// The benchmark's start (`clock::now_us`).
    origin_us: i64,
    pub(crate) connector: Connector,
    /// The `application_name` of the run's client backends, when it is the run's own (one
    /// the connection options set is somebody else's too: `terminate` refuses it).
    pub(crate) run_application_name: Option<String>,
    /// What `rtt` and `rate` change, and the values they go back to.
    pub(crate) knobs: Arc<Knobs>,
    pub(crate) base_rtt_us: i64,
    pub(crate) run_rate: f64,
    /// The server's processes (`restart`, `pause`), when hotbench started it.
    pub(crate) server: Option<ServerHandle>,
    /// The user's `--perturb-cmd`s.
    pub(crate) commands: Vec<PerturbCmd>,
    /// This process's shard of the run (`--shard I/N`): index, count.
    pub(crate) shard: Option<(usize, usize)>,
}

impl Ctx {
    /// Seconds since the benchmark started.
    pub(crate) fn now_s(&self) -> f64 {
        (now_us() - self.origin_us) as f64 / 1e6
    }

    pub(crate) fn is_stopped(&self) -> bool {
        *lock(&self.stopped)
    }

    /// Waits until `until_us` (on the run's clock, µs since the start) or the stop; true when
    /// stopped.
    pub(crate) fn wait_until(&self, until_us: i64) -> bool {
        let mut stopped = lock(&self.stopped);
        loop {
            if *stopped {
                return true;
            }
            let left = until_us - (now_us() - self.origin_us);
            if left <= 0 {
                return false;
            }
            stopped = match self
                .wake
                .wait_timeout(stopped, Duration::from_micros(left as u64))
            {
                Ok((g, _)) => g,
                Err(p) => p.into_inner().0,
            };
        }
    }

    /// Waits `us` from now, or until the stop; true when stopped.
    pub(crate) fn wait_for(&self, us: i64) -> bool {
        self.wait_until(now_us() - self.origin_us + us)
    }

    /// Registers a statement that [`Driver::finish`] cancels if it is still running; the
    /// returned id unregisters it.
    pub(crate) fn track(&self, id: u64, token: CancelToken) {
        lock(&self.in_flight).push((id, token));
    }

    pub(crate) fn untrack(&self, id: u64) {
        lock(&self.in_flight).retain(|(i, _)| *i != id);
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The driver thread, started with the benchmark.
pub(crate) struct Driver {
    ctx: Arc<Ctx>,
    /// The driver thread, or the entries saying why it could not start.
    thread: Result<JoinHandle<Vec<PerturbationRecord>>, Vec<PerturbationRecord>>,
}

impl Driver {
    /// Starts the driver for `cfg`'s perturbations, the benchmark having started at
    /// `origin_us`, with the workers' `knobs`; `None` when there are none. What keeps it from
    /// starting (a thread that cannot be created) is each perturbation's error, not the run's.
    pub(crate) fn start(cfg: &RunConfig, origin_us: i64, knobs: Arc<Knobs>) -> Option<Driver> {
        if cfg.settings.perturb.is_empty() {
            return None;
        }
        // The runner resolved the same options for its clients before the start; the
        // application_name that tells the run's backends apart is the clients' alike.
        let clients = cfg.conn.resolve().ok()?;
        let mut params = match &cfg.perturb_conn {
            Some(c) => c.resolve().ok()?,
            None => clients.clone(),
        };
        let run_application_name = match &clients.application_name {
            None => Some(cfg.application_name.clone()),
            Some(_) => None,
        };
        params.application_name = Some(format!("{}-perturb", cfg.application_name));
        let ctx = Arc::new(Ctx {
            stopped: Mutex::new(false),
            wake: Condvar::new(),
            in_flight: Mutex::new(Vec::new()),
            origin_us,
            connector: Connector::new(params),
            run_application_name,
            knobs,
            base_rtt_us: cfg.settings.rtt_us,
            run_rate: run_rate(cfg),
            server: cfg.server.clone(),
            commands: cfg.settings.perturb_cmd.clone(),
            shard: cfg.shard.as_ref().map(|s| (s.index, s.count)),
        });
        let (list, left_to_shard_0) = by_shard(&cfg.settings.perturb, ctx.shard);
        let c = ctx.clone();
        let spawned = std::thread::Builder::new()
            .name("hotbench-perturb".into())
            .spawn(move || {
                let mut out = left_to_shard_0;
                out.extend(drive(&c, &list));
                out
            });
        let thread = spawned.map_err(|e| {
            let why = format!("not run: could not create thread: {e}");
            cfg.settings
                .perturb
                .iter()
                .map(|p| {
                    let mut r = entry(p, p.first_us() as f64 / 1e6);
                    r.error = Some(why.clone());
                    r
                })
                .collect()
        });
        Some(Driver { ctx, thread })
    }

    /// Ends the driver: wakes every wait, cancels the statements still running, and returns
    /// every perturbation that happened (or was due and could not run) in time order.
    pub(crate) fn finish(self) -> Vec<PerturbationRecord> {
        *lock(&self.ctx.stopped) = true;
        self.ctx.wake.notify_all();
        for (_, token) in lock(&self.ctx.in_flight).drain(..) {
            // Best effort: a statement that ended meanwhile has nothing to cancel.
            let _ = token.cancel();
        }
        let mut out = match self.thread {
            Ok(t) => t.join().unwrap_or_default(),
            Err(entries) => entries,
        };
        out.sort_by(|a, b| a.at_s.total_cmp(&b.at_s));
        out
    }
}

/// The driver's loop: the next perturbation due, fired on its own thread, until the stop.
fn drive(ctx: &Arc<Ctx>, list: &[Perturbation]) -> Vec<PerturbationRecord> {
    let mut next: Vec<Option<i64>> = list.iter().map(|p| Some(p.first_us())).collect();
    let mut firings: Vec<JoinHandle<PerturbationRecord>> = Vec::new();
    let mut out = Vec::new();
    let mut id = 0u64;
    while let Some((i, due)) = next
        .iter()
        .enumerate()
        .filter_map(|(i, t)| t.map(|t| (i, t)))
        .min_by_key(|&(_, t)| t)
    {
        if ctx.wait_until(due) {
            break;
        }
        next[i] = match list[i].at {
            At::Once(_) => None,
            At::Every(period) => Some(due + period),
        };
        id += 1;
        let (c, p, fid) = (ctx.clone(), list[i].clone(), id);
        match std::thread::Builder::new()
            .name("hotbench-perturb-fire".into())
            .spawn(move || fire(&c, &p, fid))
        {
            Ok(h) => firings.push(h),
            Err(e) => {
                let mut r = entry(&list[i], ctx.now_s());
                r.error = Some(format!("not run: could not create thread: {e}"));
                out.push(r);
            }
        }
    }
    // Once-only perturbations the run ended before.
    for (p, t) in list.iter().zip(&next) {
        if let (At::Once(_), Some(t)) = (p.at, t) {
            let mut r = entry(p, *t as f64 / 1e6);
            r.error = Some(format!(
                "not run: the run ended at {:.1} s, before it was due",
                ctx.now_s()
            ));
            out.push(r);
        }
    }
    out.extend(firings.into_iter().filter_map(|h| h.join().ok()));
    out
}

/// The perturbations this process fires, and entries for those another shard fires: in a
/// sharded run, what acts on the whole server is shard 0's to do, once for the run.
fn by_shard(
    all: &[Perturbation],
    shard: Option<(usize, usize)>,
) -> (Vec<Perturbation>, Vec<PerturbationRecord>) {
    let Some((index, count)) = shard.filter(|s| s.0 > 0) else {
        return (all.to_vec(), Vec::new());
    };
    let (mine, theirs): (Vec<_>, Vec<_>) = all
        .iter()
        .cloned()
        .partition(|p| p.kind.scope() == Scope::Clients);
    let entries = theirs
        .iter()
        .map(|p| {
            let mut r = entry(p, p.first_us() as f64 / 1e6);
            r.error = Some(format!(
                "not run here: shard 0 of {count} does it for the run (this is shard {index})"
            ));
            r
        })
        .collect();
    (mine, entries)
}

/// Fires `p` now, by kind.
fn fire(ctx: &Ctx, p: &Perturbation, id: u64) -> PerturbationRecord {
    match &p.kind {
        k if k.needs_server_process() => crate::perturb_server::fire(ctx, p),
        Kind::Rtt { .. } | Kind::Rate { .. } => knob(ctx, p),
        _ => crate::perturb_sql::fire(ctx, p, id),
    }
}

/// `rtt` and `rate`: the run's own setting changed for the perturbation's duration (or until
/// the run ends), then back to the run's.
fn knob(ctx: &Ctx, p: &Perturbation) -> PerturbationRecord {
    let mut rec = entry(p, ctx.now_s());
    let hold_us = p.kind.hold_us().unwrap_or(0);
    let detail = match p.kind {
        Kind::Rtt { rtt_us, .. } => {
            ctx.knobs.set_rtt(rtt_us);
            let stopped = ctx.wait_for(hold_us);
            ctx.knobs.set_rtt(ctx.base_rtt_us);
            let base = crate::duration::format_us(ctx.base_rtt_us);
            format!(
                "round trip {} for {}, then {base} again{}",
                crate::duration::format_us(rtt_us),
                crate::duration::format_us(hold_us),
                early(stopped)
            )
        }
        Kind::Rate { per_s, .. } => {
            ctx.knobs.set_rate_factor(per_s / ctx.run_rate);
            let stopped = ctx.wait_for(hold_us);
            ctx.knobs.set_rate_factor(1.0);
            format!(
                "rate {per_s}/s for {} (the run's {}/s), then the run's again{}",
                crate::duration::format_us(hold_us),
                ctx.run_rate,
                early(stopped)
            )
        }
        _ => String::new(),
    };
    rec.detail = Some(detail);
    rec.end_s = Some(ctx.now_s());
    rec
}

/// The note of a hold the run's end cut short.
pub(crate) fn early(stopped: bool) -> &'static str {
    if stopped {
        "; released early: the run ended"
    } else {
        ""
    }
}

/// The record entry of `p` starting at `at_s`.
pub(crate) fn entry(p: &Perturbation, at_s: f64) -> PerturbationRecord {
    PerturbationRecord::new(p.to_string(), p.kind.name(), p.kind.args(), at_s)
}
