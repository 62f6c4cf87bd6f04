//! From the raw sample to the capture: the observed profile (`capture.json`'s
//! [`CaptureDoc`]: statement mix, waits, hot keys, throughput, sessions, shapes with their
//! weights, latency, gaps and fitted parameters, and every note on what could not be read)
//! and the pgbench script of each shape. Shapes come from the best source there is: the
//! server log's transactions (`--log`, exact), else the per-session activity sample; counts
//! from `pg_stat_statements` when it is there, else from the sample, scaled to the commits.

use std::collections::BTreeMap;

use hotbench_results::capture_record::{
    CaptureDoc, HotKey, Sessions, Shape, SourceUse, StatementShare, WaitShare,
};
use hotbench_results::diagnosis_record::Diagnosis;

use crate::observed::ObservedTransaction;
use crate::sample::{Options, Sample};
use crate::script::{self, Context};
use crate::shapes::{self, Counts, ShapeModel};
use crate::sql_text::{key_of, StatementText, Value};
use crate::tracker::SampledTransaction;

/// A capture: the document, the shapes it came from, and one script per shape.
pub struct Capture {
    pub doc: CaptureDoc,
    pub shapes: Vec<ShapeModel>,
    /// (file name, text), in the order of `doc.shapes`.
    pub scripts: Vec<(String, String)>,
    /// `simple` when the clients sent their values inline, `prepared` when they bound them.
    pub query_mode: &'static str,
    /// Sessions the twin runs (clients).
    pub clients: u32,
    /// The rate (`-R`) when arrivals were open.
    pub rate: Option<f64>,
    pub diagnosis: Diagnosis,
    pub writing: Writing,
    /// Each script in its parts, in the order of `scripts`.
    pub written: Vec<script::Written>,
    /// The captured functions' argument names ([`crate::chain::function_args`]): evidence
    /// for the chains [`Capture::write_scripts`] finds.
    pub function_args: BTreeMap<String, Vec<String>>,
    /// The client groups (their shapes by index) when kinds of session ran apart; empty:
    /// every client runs every shape by its weight (`crate::client_groups`).
    pub groups: Vec<(Vec<usize>, hotbench_results::capture_record::ClientGroup)>,
}

/// Builds the capture from the sample.
pub fn profile(sample: Sample, opts: &Options) -> Capture {
    let Sample {
        diagnosis: d,
        activity,
        notes: sample_notes,
    } = sample;
    let mut doc = observed(&d, opts);
    doc.notes.extend(sample_notes);
    // What the activity sampler says of itself (its reads slowed, its connection lost).
    if let Some(a) = &activity {
        doc.notes.extend(a.notes.iter().cloned());
    }
    let commits = d
        .probe
        .server
        .database
        .as_ref()
        .map(|x| x.commits.max(0) as f64);
    let pgss = !d.probe.statements.is_empty();
    let mut counts: BTreeMap<String, Counts> = BTreeMap::new();
    for s in &d.probe.statements {
        let c = counts.entry(key_of(&s.query)).or_default();
        c.calls += s.calls.max(0) as u64;
        c.total_ms += s.total_ms;
        c.rows += s.rows.max(0) as u64;
    }
    // Transactions: the log's when given, else the activity sample's.
    let (txs, shapes_from) = match (&opts.log, &activity) {
        (Some(log), _) => (from_log(log), "log"),
        (None, Some(a)) => (a.tracker.done.clone(), "pg_stat_activity"),
        (None, None) => (Vec::new(), "none"),
    };
    doc.notes
        .extend(opts.log_notes.iter().map(|n| format!("log: {n}")));
    alias_cut_texts(&mut counts, &txs);
    let lookup = alias_constants(&counts, &txs);
    let sampled = shapes_from == "pg_stat_activity";
    let (mut models, notes) = shapes::build(&shapes::Input {
        transactions: &txs,
        counts: pgss.then_some(&lookup),
        period_s: activity
            .as_ref()
            .filter(|_| sampled)
            .map(|a| a.tracker.period()),
    });
    doc.notes.extend(notes);
    if models.is_empty() && pgss {
        models = autocommit_from_counts(&counts);
        doc.notes.push(
            "no transaction was seen by sampling: every pg_stat_statements statement is its own autocommit shape"
                .into(),
        );
    }
    // A log counts its own period, not the sample's: without pg_stat_statements its
    // transactions are a rate over its span (`log_profile`), and its sessions the clients.
    let log_counted = match (&opts.log, shapes_from, pgss) {
        (Some(log), "log", false) => crate::log_profile::span_s(log),
        _ => None,
    };
    if !pgss {
        scale_to_commits(&mut models, &mut doc, opts, log_counted, commits);
    }
    let mut sessions = sessions(&activity, doc.tps);
    if let (Some(log), "log") = (&opts.log, shapes_from) {
        if log_counted.is_some() || sessions.seen == 0 {
            sessions = crate::log_profile::sessions(log);
            doc.notes.push(format!(
                "sessions from the log: {} at once at most",
                sessions.seen
            ));
        }
    }
    if let (true, Some(a)) = (sampled, &activity) {
        scale_gaps(&mut models, &a.tracker, doc.tps, doc.duration_s);
    }
    doc.sessions = sessions.clone();
    doc.sources = sources(&d, &activity, pgss, opts, shapes_from);
    doc.statements = mix(&counts, &models, pgss);
    let query_mode = if txs
        .iter()
        .flat_map(|t| &t.tx.statements)
        .any(|s| s.sql.contains("$1"))
    {
        "prepared"
    } else {
        "simple"
    };
    let (begin_sql, commit_sql) = control_words(&counts);
    let idle = (!sessions.open_arrivals)
        .then_some(sessions.idle_between_ms)
        .flatten();
    let clients = sessions.seen.max(1);
    let rate = sessions
        .open_arrivals
        .then_some(doc.tps)
        .filter(|r| *r > 0.0);
    let mut c = Capture {
        doc,
        shapes: models,
        scripts: Vec::new(),
        written: Vec::new(),
        function_args: BTreeMap::new(),
        query_mode,
        clients,
        rate,
        diagnosis: d,
        writing: Writing {
            counts_from: if pgss {
                "pg_stat_statements calls"
            } else if log_counted.is_some() {
                "the server log's transactions over its span"
            } else {
                "sampled statements scaled to pg_stat_database's commits"
            },
            seen_in: if shapes_from == "log" {
                "in the server log"
            } else {
                "by sampling"
            },
            begin_sql,
            commit_sql,
            idle_between_ms: idle,
        },
        groups: Vec::new(),
    };
    c.write_grouped_scripts(&txs);
    c
}

/// Sampled weights are relative: scales them to the commits counted (a log's are exact:
/// scaled from its span to the sample's duration). Without pg_stat_statements only.
fn scale_to_commits(
    models: &mut [ShapeModel],
    doc: &mut CaptureDoc,
    opts: &Options,
    log_counted: Option<f64>,
    commits: Option<f64>,
) {
    // Sampled weights are relative: scale them to the commits counted (a log's are
    // exact: scaled from its span to the sample's duration).
    let total: f64 = models.iter().map(|m| m.count).sum();
    let commits = match log_counted {
        Some(span) => {
            doc.tps = total / span;
            let rolled_back = opts
                .log
                .as_deref()
                .map_or(0, |l| l.iter().filter(|t| t.rolled_back).count());
            doc.rollbacks_per_s = rolled_back as f64 / span;
            Some(total * doc.duration_s.max(1e-3) / span)
        }
        None => commits,
    };
    if let (Some(c), true) = (commits, total > 0.0) {
        let k = c / total;
        for m in models.iter_mut() {
            m.count *= k;
            for s in &mut m.statements {
                s.calls *= k;
            }
        }
    }
}

/// How the scripts are written (decided by [`profile`]).
#[derive(Debug, Clone)]
pub struct Writing {
    counts_from: &'static str,
    seen_in: &'static str,
    begin_sql: &'static str,
    commit_sql: &'static str,
    idle_between_ms: Option<f64>,
}

impl Capture {
    /// The scripts, then the kinds of session (dedicated producers and consumers, or a
    /// queue's workers through a pool) as client groups, each idling between its
    /// transactions as its own sessions did: the scripts rewritten with each group's idle.
    fn write_grouped_scripts(&mut self, txs: &[SampledTransaction]) {
        use crate::client_groups as g;
        self.write_scripts(None, None);
        let facts = g::facts(&self.shapes, &self.doc.shapes);
        self.groups = g::groups(&g::GroupInput {
            shapes: &facts,
            transactions: g::transactions(txs),
            seen: self.clients,
            mean_busy: self.doc.sessions.mean_busy,
            open_arrivals: self.doc.sessions.open_arrivals,
        });
        if !self.groups.is_empty() {
            self.write_scripts(None, None);
        }
    }

    /// (Re)writes every shape's script and its record, values through `redact` when given
    /// (`--redact`: the generated value standing for each captured one).
    pub fn write_scripts(
        &mut self,
        redact: Option<&script::Redact<'_>>,
        fallback: Option<&script::Fallback<'_>>,
    ) {
        // A chained shape's transactions run in its returning shape's script: it keeps no
        // weight of its own, even for the few taken values whose return the capture missed
        // (a job fetched before the log began): alone, a replayed value names nothing.
        let chains = crate::chain::detect(&self.shapes, &self.function_args);
        let chained = |i: usize| chains.iter().find(|c| c.to == i);
        let total: f64 = (0..self.shapes.len())
            .filter(|i| chained(*i).is_none())
            .map(|i| self.shapes[i].count)
            .sum::<f64>()
            .max(1e-9);
        let n = self.shapes.len();
        let duration = self.doc.duration_s.max(1e-3);
        self.scripts.clear();
        self.written.clear();
        self.doc.shapes.clear();
        for (i, m) in self.shapes.iter().enumerate() {
            let file = format!("shape_{:02}.sql", i + 1);
            let weight = if chained(i).is_some() {
                0.0
            } else {
                m.count / total
            };
            let w = script::write(
                m,
                &Context {
                    file: &file,
                    number: i + 1,
                    of: n,
                    weight,
                    duration_s: duration,
                    counts_from: self.writing.counts_from,
                    seen_in: self.writing.seen_in,
                    begin_sql: self.writing.begin_sql,
                    commit_sql: self.writing.commit_sql,
                    idle_between_ms: self
                        .groups
                        .iter()
                        .find(|(shapes, _)| shapes.contains(&i))
                        .map_or(self.writing.idle_between_ms, |(_, g)| g.idle_between_ms),
                    redact,
                    fallback,
                    carried: chained(i).map(|c| c.slot),
                },
            );
            self.scripts.push((file.clone(), w.text()));
            self.doc.shapes.push(shape_record(
                m,
                &file,
                weight,
                duration,
                w.parameters.clone(),
            ));
            self.written.push(w);
        }
        self.doc.groups = self.groups.iter().map(|(_, g)| g.clone()).collect();
        self.chain(&chains);
        self.unseen_values();
    }

    /// A note per script whose values were neither seen nor stood for by statistics: bound
    /// server-side, sampling shows `$1` (psycopg 3, `-M prepared`).
    fn unseen_values(&mut self) {
        const NOTE: &str = "values not seen: ";
        self.doc.notes.retain(|n| !n.starts_with(NOTE));
        for sh in &self.doc.shapes {
            let unseen: Vec<String> = sh
                .parameters
                .iter()
                .filter(|p| p.model == "unknown")
                .map(|p| format!("statement {} value {}", p.statement + 1, p.position + 1))
                .collect();
            if !unseen.is_empty() {
                self.doc.notes.push(format!(
                    "{NOTE}{}: {} were bound server-side (sampling shows `$n`) and no statistics stood for them: written as 1, not reproduced (it may not even be valid for the type, and the transactions then fail in the twin); --log reads the bound values",
                    sh.script,
                    unseen.join(", ")
                ));
            }
        }
    }

    /// Each chain's returning statement keeps its value and runs the taking shape's
    /// transaction with it (the taking script keeps weight 0); a note says so.
    fn chain(&mut self, chains: &[crate::chain::Chain]) {
        self.doc.notes.retain(|n| !n.starts_with("chained: "));
        for c in chains {
            let taker = &self.written[c.to];
            let tail = crate::chain::block(
                &self.scripts[c.to].0,
                &c.evidence,
                &taker.draws,
                &taker.body,
            );
            let column = script::escape_identifiers(&crate::chain::quote_ident(&c.column));
            let Some(sql) = self.written[c.from].statement_of(c.statement) else {
                continue;
            };
            let sql = crate::chain::carry_statement(&sql, &column);
            if self.written[c.from].chain(c.statement, sql, tail) {
                self.scripts[c.from].1 = self.written[c.from].text();
                self.doc.notes.push(format!(
                    "chained: {} runs after {} in its script, taking the value it returned ({}); its own weight is {:.0}%",
                    self.scripts[c.to].0,
                    self.scripts[c.from].0,
                    c.evidence,
                    self.doc.shapes[c.to].weight * 100.0
                ));
            }
        }
    }
}

/// The think time: each gap by Little's law on the samples that saw a session idle after the
/// statement before it (`capture::think`). When no idle sample named a statement, the old
/// rule: the total is Little's law (the sessions idle inside a transaction on average, over
/// the transactions per second), spread over the round trips (BEGIN's and COMMIT's too), the
/// gaps between statements in the proportions seen between two sightings.
pub(crate) fn scale_gaps(
    models: &mut [ShapeModel],
    t: &crate::tracker::Tracker,
    tps: f64,
    duration_s: f64,
) {
    if tps <= 0.0 || t.samples == 0 {
        return;
    }
    let idle = crate::think::IdleSamples {
        by_key: &t.idle_after,
        after_control: t.idle_after_control,
        rounds: t.samples,
    };
    if crate::think::place(models, &idle, tps, duration_s) {
        return;
    }
    let idle_per_tx = t.idle_in_tx as f64 / t.samples as f64 / tps;
    let total: f64 = models.iter().map(|m| m.count).sum();
    // What the seen gaps add up to per transaction, across shapes by weight, against the
    // part of the idle time that falls between statements.
    let explicit: f64 = models
        .iter()
        .filter(|m| !m.autocommit)
        .map(|m| if total > 0.0 { m.count / total } else { 0.0 })
        .sum();
    if explicit <= 0.0 {
        return;
    }
    // Only explicit transactions idle inside themselves.
    let idle_per_tx = idle_per_tx / explicit;
    let mut seen = 0.0;
    let mut between = 0.0;
    for m in models.iter_mut() {
        let w = if total > 0.0 { m.count / total } else { 0.0 };
        seen += w * m.gaps_s.iter().flatten().sum::<f64>();
        if m.autocommit {
            continue;
        }
        // Two alternatives are one statement of the transaction.
        let n = (m.statements.len() - script::alternatives(m).len()) as f64;
        between += w * idle_per_tx * (n - 1.0) / (n + 1.0);
        m.edge_gap_s = Some(idle_per_tx / (n + 1.0));
    }
    if seen <= 0.0 {
        return;
    }
    let k = between / seen;
    for m in models {
        for g in m.gaps_s.iter_mut().flatten() {
            *g *= k;
        }
    }
}

/// What the diagnosis' sample says directly: status, target, throughput, waits, hot rows.
fn observed(d: &Diagnosis, opts: &Options) -> CaptureDoc {
    let mut doc = CaptureDoc::new();
    // One `SampleStatus` for both documents.
    doc.status = d.status;
    doc.target = d.target.clone();
    doc.server_version = d.server_version.clone();
    doc.started_at = d.started_at;
    doc.duration_s = d.duration_s;
    doc.interval_ms = opts.activity_interval.as_secs_f64() * 1000.0;
    doc.notes = d.notes.clone();
    doc.findings = d.findings.iter().map(|f| f.title.clone()).collect();
    let duration = d.duration_s.max(1e-3);
    let commits = d
        .probe
        .server
        .database
        .as_ref()
        .map(|x| x.commits.max(0) as f64);
    let rollbacks = d
        .probe
        .server
        .database
        .as_ref()
        .map(|x| x.rollbacks.max(0) as f64);
    doc.tps = commits.unwrap_or(0.0) / duration;
    doc.rollbacks_per_s = rollbacks.unwrap_or(0.0) / duration;
    doc.waits = d
        .probe
        .waits
        .iter()
        .map(|w| WaitShare {
            event: w.event.clone(),
            share: w.pct / 100.0,
        })
        .collect();
    doc.hot_keys = d
        .probe
        .hot_rows
        .iter()
        .enumerate()
        .map(|(i, r)| HotKey {
            relation: r.relation.clone(),
            key: r.key.clone(),
            rank: i as u32 + 1,
            share: r.pct / 100.0,
            samples: r.count,
        })
        .collect();
    doc.sampling = crate::ties::sampling_of(&d.probe);
    // A row waited on in one sample only is no hot key: the rows waited on moved (a
    // queue's head row changes with every claim), and naming one would ask the twin to
    // reproduce chance.
    let rows = &d.probe.hot_rows;
    if !rows.is_empty() && rows.iter().all(|r| r.count == 1) {
        doc.notes.push(format!(
            "no row was waited on twice: {} rows were waited on in one sample each (the rows waited on move, as a queue's head does), so no hottest key is named",
            rows.len()
        ));
        doc.hot_keys.clear();
    }
    doc
}

/// A log's transactions, each statement seen for sure, gaps from their timings.
fn from_log(log: &[ObservedTransaction]) -> Vec<SampledTransaction> {
    log.iter()
        .map(|t| {
            let gaps_s = t
                .statements
                .iter()
                .enumerate()
                .map(|(i, s)| {
                    let p = i.checked_sub(1).and_then(|j| t.statements.get(j))?;
                    Some((s.started_at_s - (p.started_at_s + p.duration_s?)).max(0.0))
                })
                .collect();
            let first = t.statements.first().map_or(0.0, |s| s.started_at_s);
            SampledTransaction {
                tx: t.clone(),
                weights: vec![1.0; t.statements.len()],
                gaps_s,
                offsets_s: t
                    .statements
                    .iter()
                    .map(|s| Some(s.started_at_s - first))
                    .collect(),
            }
        })
        .collect()
}

/// pg_stat_statements' texts are cut to 300 characters in the record: a sampled statement
/// whose key starts with a cut text's key takes that entry's counts, and the cut entry goes
/// (kept, it listed the statement twice in the mix: kombu's claim at 5.6% twice).
fn alias_cut_texts(counts: &mut BTreeMap<String, Counts>, txs: &[SampledTransaction]) {
    let cut: Vec<(String, String, Counts)> = counts
        .iter()
        .filter(|(k, _)| k.chars().count() >= 250)
        .map(|(k, c)| (k.clone(), k.chars().take(200).collect(), *c))
        .collect();
    if cut.is_empty() {
        return;
    }
    for t in txs {
        for s in &t.tx.statements {
            let k = key_of(&s.sql);
            if counts.contains_key(&k) {
                continue;
            }
            if let Some((cut_key, _, c)) = cut.iter().find(|(_, p, _)| k.starts_with(p.as_str())) {
                counts.remove(cut_key);
                counts.insert(k, *c);
            }
        }
    }
}

/// `counts` with each sampled statement's key added that pg_stat_statements counts under
/// another (its `true`/`false`/`null` constants as slots: `crate::count_key`), for the
/// shapes' lookups only (the statement mix stays pg_stat_statements' own).
fn alias_constants(
    counts: &BTreeMap<String, Counts>,
    txs: &[SampledTransaction],
) -> BTreeMap<String, Counts> {
    let mut out = counts.clone();
    for s in txs.iter().flat_map(|t| &t.tx.statements) {
        let k = key_of(&s.sql);
        if out.contains_key(&k) {
            continue;
        }
        if let Some(c) = counts.get(&crate::count_key::counted_key(&k)) {
            out.insert(k, *c);
        }
    }
    out
}

/// Without any sampled transaction, each counted statement is an autocommit shape.
fn autocommit_from_counts(counts: &BTreeMap<String, Counts>) -> Vec<ShapeModel> {
    let mut v: Vec<ShapeModel> = counts
        .iter()
        .filter(|(k, c)| c.calls > 0 && StatementText::parse(k, &[]).control().is_none())
        .map(|(k, c)| {
            let text = StatementText::parse(k, &[]);
            let slots = text.values.len();
            ShapeModel {
                statements: vec![shapes::ShapeStatement {
                    key: k.clone(),
                    text,
                    per_tx: 1.0,
                    values: vec![Vec::<(Value, f64)>::new(); slots],
                    mean_ms: Some(c.total_ms / c.calls as f64),
                    calls: c.calls as f64,
                }],
                autocommit: true,
                count: c.calls as f64,
                observed: 0,
                together: Default::default(),
                edge_gap_s: None,
                commit_gap_s: None,
                gaps_s: vec![None],
                agreements: BTreeMap::new(),
            }
        })
        .collect();
    v.sort_by(|a, b| b.count.total_cmp(&a.count));
    v
}

/// Sessions idle this long (ms) between their transactions, and busy less than half the
/// time, serve arrivals (a pool waiting for requests); shorter idles are a closed-loop
/// client's own time (pgbench's at 13,000 tps on a busy machine idles each session about
/// 1 ms, and a rate would only make its twin lag).
const OPEN_IDLE_MS: f64 = 10.0;

/// Who ran the workload. The time a session spends between its transactions is Little's law
/// on the sample: sessions not busy over the transactions per second (`(seen - busy) / tps`);
/// without a rate, twice the mean idle age sampled.
fn sessions(activity: &Option<crate::activity::Sampled>, tps: f64) -> Sessions {
    let Some(a) = activity else {
        return Sessions::default();
    };
    let t = &a.tracker;
    let samples = t.samples.max(1) as f64;
    let seen = t.sessions.len() as u32;
    let mean_busy = (t.active + t.idle_in_tx) as f64 / samples;
    let idle_between_ms = if tps > 0.0 && seen > 0 {
        Some(1000.0 * (seen as f64 - mean_busy).max(0.0) / tps)
    } else {
        (t.idle_between.1 > 0).then(|| 2000.0 * t.idle_between.0 / t.idle_between.1 as f64)
    };
    Sessions {
        seen,
        mean_busy,
        mean_active: t.active as f64 / samples,
        open_arrivals: seen >= 2
            && mean_busy < 0.5 * seen as f64
            && idle_between_ms.is_some_and(|m| m >= OPEN_IDLE_MS),
        idle_between_ms,
        remote: !t.remote.is_empty(),
    }
}

fn sources(
    d: &Diagnosis,
    activity: &Option<crate::activity::Sampled>,
    pgss: bool,
    opts: &Options,
    shapes_from: &str,
) -> Vec<SourceUse> {
    let mut v = Vec::new();
    v.push(SourceUse {
        name: "log".into(),
        used: opts.log.is_some(),
        detail: match &opts.log {
            Some(l) => format!(
                "{} transactions read (the shapes and values come from it)",
                l.len()
            ),
            None => "not given (--log FILE: exact shapes and values)".into(),
        },
    });
    v.push(SourceUse {
        name: "pg_stat_statements".into(),
        used: pgss,
        detail: if pgss {
            format!(
                "{} statements' calls, time and rows over the sample",
                d.probe.statements.len()
            )
        } else {
            d.notes
                .iter()
                .find(|n| n.contains("pg_stat_statements"))
                .cloned()
                .unwrap_or_else(|| "no statement counted (not installed, or nothing ran)".into())
        },
    });
    v.push(SourceUse {
        name: "pg_stat_activity".into(),
        used: activity.is_some(),
        detail: match activity {
            Some(a) => format!(
                "{} samples, {} transactions seen{}{}",
                a.tracker.samples,
                a.tracker.done.len() as u64 + a.tracker.dropped,
                if shapes_from == "pg_stat_activity" {
                    " (the shapes come from it)"
                } else {
                    ""
                },
                if a.tracker.hidden > 0 {
                    format!(
                        "; {} rows with texts hidden from this role (grant pg_read_all_stats)",
                        a.tracker.hidden
                    )
                } else {
                    String::new()
                }
            ),
            None => "not sampled (see the notes)".into(),
        },
    });
    v.push(SourceUse {
        name: "pg_locks".into(),
        used: !d.probe.hot_rows.is_empty(),
        detail: format!(
            "{} hot rows{}",
            d.probe.hot_rows.len(),
            if opts.key_reads {
                ""
            } else {
                " (--no-keys: named by ctid)"
            }
        ),
    });
    v
}

/// The statement mix: pg_stat_statements' entries, else the shapes' estimated calls.
fn mix(
    counts: &BTreeMap<String, Counts>,
    models: &[ShapeModel],
    pgss: bool,
) -> Vec<StatementShare> {
    let rows: Vec<(String, f64, f64, u64)> = if pgss {
        counts
            .iter()
            .filter(|(k, _)| !crate::count_key::is_foreign_key_check(k))
            .map(|(k, c)| (k.clone(), c.calls as f64, c.total_ms, c.rows))
            .collect()
    } else {
        let mut m: BTreeMap<String, f64> = BTreeMap::new();
        for s in models.iter().flat_map(|m| &m.statements) {
            *m.entry(s.key.clone()).or_default() += s.calls;
        }
        m.into_iter().map(|(k, c)| (k, c, 0.0, 0)).collect()
    };
    let calls: f64 = rows.iter().map(|r| r.1).sum::<f64>().max(1e-9);
    let time: f64 = rows.iter().map(|r| r.2).sum::<f64>();
    let mut v: Vec<StatementShare> = rows
        .into_iter()
        .map(|(query, c, t, r)| StatementShare {
            query,
            calls: c.round() as u64,
            calls_share: c / calls,
            total_ms: t,
            time_share: if time > 0.0 { t / time } else { 0.0 },
            rows: r,
            mean_ms: if c > 0.0 { t / c } else { 0.0 },
            source: if pgss {
                "pg_stat_statements"
            } else {
                "sampled"
            }
            .into(),
        })
        .collect();
    v.sort_by(|a, b| b.calls.cmp(&a.calls).then(a.query.cmp(&b.query)));
    v
}

/// `BEGIN`/`START TRANSACTION` and `COMMIT`/`END` as the clients wrote them (by
/// pg_stat_statements' counts), so the twin's statement mix names the same ones.
fn control_words(counts: &BTreeMap<String, Counts>) -> (&'static str, &'static str) {
    let calls = |k: &str| counts.get(k).map_or(0, |c| c.calls);
    let begin = if calls("start transaction") > calls("begin") {
        "START TRANSACTION"
    } else {
        "BEGIN"
    };
    let commit = if calls("end") > calls("commit") {
        "END"
    } else {
        "COMMIT"
    };
    (begin, commit)
}

fn shape_record(
    m: &ShapeModel,
    file: &str,
    weight: f64,
    duration: f64,
    parameters: Vec<hotbench_results::capture_record::Parameter>,
) -> Shape {
    let server_ms: Option<f64> = m
        .statements
        .iter()
        .map(|s| s.mean_ms.map(|ms| ms * s.per_tx))
        .sum();
    let gaps_ms: Vec<Option<f64>> = m
        .gaps_s
        .iter()
        .skip(1)
        .map(|g| g.map(|g| g * 1000.0))
        .collect();
    Shape {
        script: file.to_string(),
        statements: m.statements.iter().map(|s| s.key.clone()).collect(),
        per_transaction: m
            .statements
            .iter()
            .map(|s| (s.per_tx * 1000.0).round() / 1000.0)
            .collect(),
        autocommit: m.autocommit,
        weight,
        tps: m.count / duration,
        latency_ms: server_ms.map(|s| s + gaps_ms.iter().flatten().sum::<f64>()),
        gaps_ms,
        observed: m.observed,
        parameters,
    }
}

#[cfg(test)]
#[path = "workload_tests.rs"]
mod profile_tests;
