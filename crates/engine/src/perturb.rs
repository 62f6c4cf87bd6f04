//! The perturbation driver (`--perturb`): a thread that starts with the benchmark, waits for
//! each perturbation's time and fires it on a thread of its own, over its own connection to
//! the target (the clients' connection options, another `application_name`), so a lock held
//! or a slow CHECKPOINT never blocks the engine or the next perturbation. When the run ends,
//! [`Driver::finish`] wakes it, cancels what is still running on the server, releases what
//! is held, and returns what happened as record entries (the recovery is judged afterwards
//! from the timeline, `results::recovery::judge`). What each kind executes is
//! `perturb_sql.rs` (SQL on its own connection), `perturb_server.rs` (the server's processes:
//! restart, pause, or the user's `--perturb-cmd`) and, for the run's own `rtt` and `rate`,
//! [`knob`] here. [`check`] refuses before the run what cannot be done (a restart of a
//! server hotbench did not start and no command for it, a rate burst without `-R`). In a
//! sharded run (`--shard I/N`) shard 0 fires what acts on the whole server, once for the run;
//! every shard does what acts on the run's clients to its own.

use std::sync::Arc;
use std::thread::JoinHandle;

use hotbench_results::PerturbationRecord;
use hotbench_settings::perturb::{At, Kind, Perturbation, Scope};
use hotbench_settings::perturb_cmd::command_for;
use hotbench_wire::Connector;

use crate::config::RunConfig;
use crate::knobs::Knobs;
use crate::perturb_ctx::{early, entry, run_rate, Ctx};

/// Refuses, before the run, perturbations this run cannot do: `restart` or `pause` of a
/// server hotbench did not start with no `--perturb-cmd` for it, `rate` without `-R`.
pub(crate) fn check(cfg: &RunConfig) -> Result<(), String> {
    let s = &cfg.settings;
    check_server_kinds(s, cfg.server.is_some())?;
    for p in &s.perturb {
        if matches!(p.kind, Kind::Rate { .. }) && run_rate(cfg) <= 0.0 {
            return Err(format!(
                "--perturb {p}: rate= changes the open-loop rate for a while, and this run has \
                 none: give -R (or a rate to a scenario's group)"
            ));
        }
    }
    Ok(())
}

/// Refuses `restart` or `pause` when hotbench has no server process to act on
/// (`has_server`: the embedded server's) and no `--perturb-cmd` for the kind: what a ladder
/// checks before its first variant's setup, as a run before its start.
pub fn check_server_kinds(
    s: &hotbench_settings::RunSettings,
    has_server: bool,
) -> Result<(), String> {
    for p in &s.perturb {
        let name = p.kind.name();
        if p.kind.needs_server_process()
            && !has_server
            && command_for(&s.perturb_cmd, name).is_none()
        {
            return Err(format!(
                "--perturb {p}: {name} acts on the server's processes, which hotbench does only \
                 to a server it started (the embedded one); for your server give \
                 --perturb-cmd '{name}=COMMAND' (e.g. 'restart=pg_ctl -D DATADIR restart -m fast', \
                 or a Patroni switchover)"
            ));
        }
    }
    Ok(())
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
        let ctx = Arc::new(Ctx::new(
            cfg,
            origin_us,
            Connector::new(params),
            run_application_name,
            knobs,
        ));
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
        self.ctx.stop();
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
