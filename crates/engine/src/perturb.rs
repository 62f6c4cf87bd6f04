//! The perturbation driver (`--perturb`): a thread that starts with the benchmark, waits for
//! each perturbation's time and fires it on a thread of its own, over its own connection to
//! the target (the clients' connection options, another `application_name`), so a lock held
//! or a slow CHECKPOINT never blocks the engine or the next perturbation. When the run ends,
//! [`Driver::finish`] wakes it, cancels what is still running on the server, releases what
//! is held, and returns what happened as record entries (the recovery is judged afterwards
//! from the timeline, `stats::perturbation_record::judge`). What each kind executes is
//! `perturb_sql.rs`.

use std::sync::Arc;
use std::thread::JoinHandle;

use hotbench_results::PerturbationRecord;
use hotbench_settings::perturb::{At, Perturbation};
use hotbench_wire::Connector;

use crate::config::RunConfig;
use crate::perturb_ctx::{entry, Ctx};

/// The driver thread, started with the benchmark.
pub(crate) struct Driver {
    ctx: Arc<Ctx>,
    /// The driver thread, or the entries saying why it could not start.
    thread: Result<JoinHandle<Vec<PerturbationRecord>>, Vec<PerturbationRecord>>,
}

impl Driver {
    /// Starts the driver for `cfg`'s perturbations, the benchmark having started at
    /// `origin_us`; `None` when there are none. What keeps it from starting (a thread that
    /// cannot be created) is each perturbation's error, not the run's.
    pub(crate) fn start(cfg: &RunConfig, origin_us: i64) -> Option<Driver> {
        let list = cfg.settings.perturb.clone();
        if list.is_empty() {
            return None;
        }
        // The runner resolved the same options for its clients before the start.
        let mut params = cfg.conn.resolve().ok()?;
        let run_application_name = match &params.application_name {
            None => Some(cfg.application_name.clone()),
            Some(_) => None,
        };
        params.application_name = Some(format!("{}-perturb", cfg.application_name));
        let ctx = Arc::new(Ctx::new(
            origin_us,
            Connector::new(params),
            run_application_name,
        ));
        let c = ctx.clone();
        let spawned = std::thread::Builder::new()
            .name("hotbench-perturb".into())
            .spawn(move || drive(&c, &list));
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
            .spawn(move || crate::perturb_sql::fire(&c, &p, fid))
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
