//! The perturbations that act on the server's processes or on the run itself, against real
//! servers (docs/perturbations.md): `restart` and `pause` of the embedded server (each test in a
//! home of its own, one command at a time), with hotbench killed mid-pause leaving nothing
//! stopped; `--perturb-cmd` for a server of the user's (the shared test server), its marker
//! file and its failure recorded, and the refusal without one; `rtt` and `rate` changing the
//! run for a while; a manifest's `[[perturbation]]` firing in a ladder; and what a pooler and
//! a shard do with them.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use common::case::Case;
use common::*;
use hotbench_results::{IntervalRecord, LadderFile, PerturbationRecord, RunRecord};

fn only(entries: &[PerturbationRecord], kind: &str) -> PerturbationRecord {
    let found: Vec<_> = entries.iter().filter(|p| p.kind == kind).collect();
    assert_eq!(found.len(), 1, "one {kind}: {entries:#?}");
    found[0].clone()
}

/// Commits per second over the intervals ending in `(from, to]`.
fn rate_in(timeline: &[IntervalRecord], from: f64, to: f64) -> f64 {
    let ivs: Vec<_> = timeline
        .iter()
        .filter(|i| i.t > from + 1e-9 && i.t <= to + 1e-9)
        .collect();
    let n: u64 = ivs.iter().map(|i| i.totals.cnt).sum();
    n as f64 / (to - from)
}

/// The mean latency of the intervals ending in `(from, to]` that committed anything, ms.
fn latency_in(timeline: &[IntervalRecord], from: f64, to: f64) -> f64 {
    let ivs: Vec<_> = timeline
        .iter()
        .filter(|i| i.t > from + 1e-9 && i.t <= to + 1e-9 && i.totals.cnt > 0)
        .collect();
    let w: u64 = ivs.iter().map(|i| i.totals.cnt).sum();
    ivs.iter()
        .map(|i| i.totals.lat_mean_ms * i.totals.cnt as f64)
        .sum::<f64>()
        / w.max(1) as f64
}

// ---------------------------------------------------------------------------------------
// The embedded server: a home (a data directory and a server of its own) per test. A restart
// or a pause is refused while another command uses the server, so the restart and the pause
// tests, which shared one home, ran one after the other (the second waiting on a lock for the
// first's 30 s); each in its own home, they run side by side.

struct Home {
    dir: PathBuf,
}

/// The embedded home of the test `tag`, its server started by the first command run in it.
fn embedded(tag: &str) -> Home {
    let dir = temp_dir(&format!("perturb-embedded-{tag}"));
    // PostgreSQL runs as its own account when the tests run as root: it must get in.
    use std::os::unix::fs::PermissionsExt;
    let _ = std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755));
    Home { dir }
}

impl Home {
    fn command(&self, args: &[&str]) -> Command {
        let mut c = hotbench();
        c.args(args).stdout(Stdio::piped()).stderr(Stdio::piped());
        private_home(&mut c, &self.dir);
        c
    }

    fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().expect("run hotbench")
    }

    fn script(&self) -> PathBuf {
        write_script(
            &self.dir,
            "sleepy.sql",
            "select pg_catalog.pg_sleep(0.002);\n",
        )
    }
}

/// Its server stopped, and its directory (a data directory of 56 MB) removed when the test
/// passed: a failed test's is kept, its JSON the evidence.
impl Drop for Home {
    fn drop(&mut self) {
        let _ = self.command(&["server", "stop"]).output();
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

fn ok(o: &Output) -> String {
    let (out, err) = text(o);
    assert_eq!(o.status.code(), Some(0), "{out}\n{err}");
    out
}

/// `restart` (fast) of the embedded server mid-run: the sessions end with 57P01, the clients
/// reconnect and the rate is back (TTR90 finite); `restart=immediate` in a ladder: crash
/// recovery (its start-up syncs the data directory: seconds on a busy machine, hence the
/// 7 s runs), the immediate shutdown's 57P01 counted, and the variant's checks still pass.
#[test]
fn restart_of_the_embedded_server_is_survived_and_the_checks_pass() {
    let home = embedded("restart");
    let json = home.dir.join("restart.json");
    let script = home.script();
    let o = home.run(&[
        "run",
        "-n",
        "-c",
        "8",
        "-R",
        "1000",
        "-T",
        "10",
        "--interval",
        "100ms",
        // 3 s of baseline: over 1.5 s, clients catching up a slow start on a loaded machine
        // made it 235/s at -R 200, which the steady 200/s after the restart never reached
        // 90% of (a fresh-clone CI run); 7 s left to see the recovery confirmed. 1000/s: the
        // Poisson noise of the baseline against the 2 s hold is ±2.9% (±6.4% at 200/s).
        "--perturb",
        "3s:restart",
        "-f",
        s(&script),
        "--json",
        s(&json),
    ]);
    let out = ok(&o);
    let v: RunRecord = read(&json);
    let p = only(&v.perturbations, "restart");
    assert_eq!(p.error, None, "{p:#?}");
    assert!(
        p.detail
            .as_deref()
            .is_some_and(|d| d.starts_with("restarted (fast shutdown): pid ")),
        "{p:#?}"
    );
    let c = &v.totals.counters;
    assert!(
        c.errors_by_sqlstate.get("57P01").is_some_and(|n| *n >= 1),
        "{:?}\n{out}",
        c.errors_by_sqlstate
    );
    assert!(c.reconnects >= 1, "{c:?}");
    assert!(p.ttr90_s.is_some(), "recovered: {p:#?}\n{out}");
    assert!(rate_in(&v.timeline, 8.5, 10.0) > 100.0, "{out}");
    probes_survive_the_restart(&v, &p, &out);

    let ladder = home.dir.join("ladder.json");
    let o = home.run(&[
        "scenario",
        "run",
        "counters",
        "--variants",
        "direct",
        "-c",
        "2",
        "-T",
        "7",
        "--interval",
        "100ms",
        "--perturb",
        "1s:restart=immediate",
        "--json",
        s(&ladder),
    ]);
    ok(&o);
    let file: LadderFile = read(&ladder);
    let v = &file.ladders[0].variants[0];
    assert!(
        !v.checks.is_empty() && v.checks.iter().all(|c| c.ok),
        "{:?}",
        v.checks
    );
    let rec = v.record.as_ref().expect("the variant's record");
    let p = only(&rec.perturbations, "restart");
    assert!(
        p.detail
            .as_deref()
            .is_some_and(|d| d.starts_with("restarted (immediate shutdown)")),
        "{p:#?}"
    );
    let codes = &rec.totals.counters.errors_by_sqlstate;
    assert!(
        codes.contains_key("57P01") || codes.contains_key("57P03"),
        "{codes:?}"
    );
    // The crash recovery reset the server's counters: the variant's probes took a new
    // baseline after it and the run's totals still add up.
    let probes = rec.probes.as_ref().expect("the variant's probes");
    assert!(
        probes.reconnects.iter().any(|r| r.server_restarted),
        "{:?}\n{:?}",
        probes.reconnects,
        probes.notes
    );
    assert!(
        probes
            .server
            .database
            .as_ref()
            .is_some_and(|d| d.commits > 0),
        "{:?}",
        probes.server
    );
}

/// The probes (on by default) connected again after the restart and sampled on: the record
/// says when, the server's counters count anew from then (no interval's delta spans the
/// restart), and the restart's window has the server's side, on its text line too.
fn probes_survive_the_restart(v: &RunRecord, p: &PerturbationRecord, out: &str) {
    let probes = v.probes.as_ref().expect("the probes' record");
    let back = probes.reconnects.first().expect("the probe reconnected");
    assert!(
        back.server_restarted,
        "{:?}\n{:?}",
        probes.reconnects, probes.notes
    );
    assert!(
        back.lost_s >= p.at_s - 0.5 && back.back_s > back.lost_s,
        "{back:?}"
    );
    let after: Vec<_> = probes
        .timeline
        .iter()
        .filter(|iv| iv.t > back.back_s + 0.05 && iv.samples > 0)
        .collect();
    assert!(
        after.len() >= 5,
        "sampled after the restart: {:?}",
        probes.notes
    );
    assert!(
        after.iter().any(|iv| iv.server.wal_bytes.is_some()),
        "the server's counters read again: {after:?}"
    );
    assert!(
        probes.timeline.iter().any(|iv| iv.restarted),
        "an interval spans the restart"
    );
    assert!(
        !probes.notes.iter().any(|n| n.contains("sampling stopped")),
        "{:?}",
        probes.notes
    );
    let w = p
        .server
        .as_ref()
        .expect("the server's side of the restart's window");
    assert!(w.server_restarted && w.to_s > back.back_s, "{w:?}");
    let line = out
        .lines()
        .find(|l| l.starts_with("perturbation ") && l.contains(":restart=fast at "))
        .unwrap_or("");
    assert!(
        line.contains("; server: ") && line.contains("counted anew from the server's restart"),
        "{out}"
    );
}

/// `pause`: every server process but the postmaster stopped for 1 s: nothing commits, then
/// the rate is back; and hotbench killed in the middle of a pause leaves no process stopped
/// (the watchdog continues them) and the server stopped by its guardian.
#[test]
fn pause_dips_and_recovers_and_a_killed_hotbench_leaves_nothing_stopped() {
    let home = embedded("pause");
    let json = home.dir.join("pause.json");
    let script = home.script();
    // Poisson arrivals make the baseline and the 1 s windows after the pause noisy, and the
    // 2 s hold must stay above 90% of that baseline: CI runs drew 230/s then 184/s at 200/s
    // over 2 s, and 525/s then 463/s at 500/s over 3 s. At 1500/s a 1 s window's noise is
    // ±2.6% and the baseline's ±1.5%, so 90% sits about 3.5 sigma below; 16 clients of a
    // 2.4 ms transaction (6600/s) clear the pause's backlog in well under a second.
    let o = home.run(&[
        "run",
        "-n",
        "-c",
        "16",
        "-R",
        "1500",
        "-T",
        "9",
        "--interval",
        "100ms",
        "--probe",
        "off",
        "--perturb",
        "3s:pause=1s",
        "-f",
        s(&script),
        "--json",
        s(&json),
    ]);
    let out = ok(&o);
    let v: RunRecord = read(&json);
    let p = only(&v.perturbations, "pause");
    assert_eq!(p.error, None, "{p:#?}");
    assert!(
        p.detail
            .as_deref()
            .is_some_and(|d| d.contains(" server processes stopped for 1s, then continued")),
        "{p:#?}"
    );
    let b = p.baseline_per_s.unwrap_or(0.0);
    assert!(b > 750.0, "{p:#?}");
    assert!(
        rate_in(&v.timeline, 3.2, 3.9) < 0.25 * b,
        "nothing commits: {out}"
    );
    assert!(p.ttr90_s.is_some(), "recovered: {p:#?}\n{out}");

    // Killed mid-pause: the kernel closes the watchdog's pipe.
    let data = home.dir.join("hotbench");
    let mut child = home
        .command(&[
            "run",
            "-n",
            "-c",
            "2",
            "-T",
            "60",
            "--probe",
            "off",
            "--perturb",
            "1s:pause=50s",
            "-f",
            s(&script),
        ])
        .spawn()
        .expect("spawn");
    wait_until("server processes stopped", Duration::from_secs(60), || {
        !stopped_in(&data).is_empty()
    });
    child.kill().expect("kill hotbench");
    let _ = child.wait();
    wait_until(
        "nothing left stopped, the server gone",
        Duration::from_secs(30),
        || {
            stopped_in(&data).is_empty()
                && hotbench_pgserver::process::processes_in(&data).is_empty()
        },
    );
}

/// Processes under `dir` in state T (stopped).
fn stopped_in(dir: &Path) -> Vec<u32> {
    hotbench_pgserver::process::processes_in(dir)
        .into_iter()
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .ok()
                .and_then(|s| {
                    s.rfind(')')
                        .map(|i| s[i + 1..].trim_start().starts_with('T'))
                })
                .unwrap_or(false)
        })
        .collect()
}

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

// ---------------------------------------------------------------------------------------
// A server of the user's (the shared test server).

fn sleepy(tag: &str) -> Case {
    Case::new(tag, "select pg_catalog.pg_sleep(0.002);\n")
}

/// A ladder on a server of the user's refuses a `restart` without `--perturb-cmd` before its
/// first variant's setup (as `run` does before its run), not once that variant's run starts.
#[test]
fn a_ladder_refuses_a_restart_of_their_server_before_any_setup() {
    let db = database("pt_ladder_refused");
    let o = command_on(
        &db,
        &["scenario", "run", "counters"],
        &["--variants", "direct", "-T", "2", "--perturb", "1s:restart"],
    )
    .output()
    .expect("run hotbench");
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}\n{err}");
    assert!(
        err.contains("--perturb-cmd 'restart=COMMAND'") && err.trim().lines().count() == 1,
        "{err}"
    );
    let schemas = psql(
        &db,
        "select count(*) from pg_namespace where nspname not like 'pg\\_%' \
         and nspname not in ('public', 'information_schema')",
    );
    assert_eq!(schemas.trim(), "0", "no setup ran: {out}");
}

/// `--perturb-cmd`: their command runs for the kind (a marker file, the spec in its
/// environment, its output in the detail); one that fails is the entry's error; without
/// one, a restart of their server is refused before the run with a line naming the flag.
#[test]
fn perturb_cmd_runs_the_users_command_and_records_its_failure() {
    let case = sleepy("pt_cmd");
    let marker = case.dir.join("restarted");
    let restart = format!(
        "restart=touch '{}'; echo \"spec $HOTBENCH_PERTURB_SPEC\"",
        marker.display()
    );
    let o = case
        .command("-n -c 2 -T 3 --probe off --perturb 1s:restart --perturb 1500ms:pause=1s")
        .args(["--perturb-cmd", &restart])
        .args(["--perturb-cmd", "pause=echo 'no docker here' >&2; exit 3"])
        .output()
        .expect("run");
    ok(&o);
    assert!(marker.is_file(), "the command ran");
    let v = case.record();
    let r = only(&v.perturbations, "restart");
    assert_eq!(r.error, None, "{r:#?}");
    let d = r.detail.as_deref().unwrap_or("");
    assert!(
        d.starts_with("command exited 0 after ") && d.ends_with("; output: spec 1s:restart=fast"),
        "{r:#?}"
    );
    let p = only(&v.perturbations, "pause");
    let e = p.error.as_deref().unwrap_or("");
    assert!(
        e.starts_with("command exited 3 after ") && e.ends_with("; output: no docker here"),
        "{p:#?}"
    );
    assert!(
        !serde_json::to_string(&v.config).unwrap().contains("docker"),
        "the command stays out of the record"
    );

    let o = case
        .command("-n -c 1 -T 2 --perturb 1s:restart=immediate")
        .output()
        .expect("run");
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("--perturb-cmd 'restart=COMMAND'") && err.trim().lines().count() == 1,
        "{err}"
    );
}

/// `rtt=30ms,1s`: every round trip takes 30 ms longer for a second, and no longer after.
#[test]
fn rtt_raises_the_latency_for_a_while() {
    let case = sleepy("pt_rtt");
    case.run("-n -c 2 -T 4 --interval 100ms --probe off --perturb 1s:rtt=30ms,1s")
        .expect_code(0);
    let v = case.record();
    let p = only(&v.perturbations, "rtt");
    assert_eq!(
        p.detail.as_deref(),
        Some("round trip 30ms for 1s, then 0 again"),
        "{p:#?}"
    );
    let inside = latency_in(&v.timeline, 1.2, 1.9);
    let before = latency_in(&v.timeline, 0.2, 0.9);
    let after = latency_in(&v.timeline, 2.5, 3.8);
    assert!(inside >= 25.0, "{inside} ms inside");
    assert!(
        before < 15.0 && after < 15.0,
        "{before} / {after} ms outside"
    );
}

/// `rate=400,1s` on a run at `-R 100`: a second at four times the rate, then the run's; and
/// without `-R` it is refused before the run.
#[test]
fn rate_bursts_above_the_open_loop_rate() {
    let case = sleepy("pt_rate");
    case.run("-n -c 4 -R 100 -T 4 --interval 100ms --probe off --perturb 1500ms:rate=400,1s")
        .expect_code(0);
    let v = case.record();
    let p = only(&v.perturbations, "rate");
    assert_eq!(p.error, None, "{p:#?}");
    let inside = rate_in(&v.timeline, 1.6, 2.5);
    let before = rate_in(&v.timeline, 0.3, 1.5);
    assert!(inside > 250.0, "{inside}/s in the burst");
    assert!((50.0..160.0).contains(&before), "{before}/s before");
    let o = case
        .command("-n -c 1 -T 2 --perturb 1s:rate=400,1s")
        .output()
        .expect("run");
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("give -R"), "{err}");
}

/// A manifest's `[[perturbation]]`s fire in the variant's run, after the user's `--perturb`:
/// the scenario's for every variant (switched by a parameter), a variant's own.
#[test]
fn a_manifest_perturbation_fires_in_a_ladder() {
    let db = database("pt_manifest");
    let dir = temp_dir("pt-manifest");
    let scn = dir.join("bumps");
    std::fs::create_dir_all(&scn).expect("dir");
    std::fs::write(
        scn.join("scenario.toml"),
        r#"title = "bumps"
demonstrates = "a counter bumped, perturbed"
clients = 2
duration = 3
setup = ["schema.sql"]
checks = ["checks.sql"]

[params.bump_lock]
default = "on"
values = { on = "on", off = "off" }

[[perturbation]]
when = "{{bump_lock}}"
at = "1s"
kind = "ddl-lock"
args = "bump,300ms"

[[variants]]
name = "plain"
baseline = true
script = "bump.sql"
perturbation = [{ at = "1500ms", kind = "checkpoint" }]
"#,
    )
    .expect("manifest");
    std::fs::write(
        scn.join("schema.sql"),
        "create table bump(n bigint); insert into bump values (0);\n",
    )
    .expect("schema");
    std::fs::write(scn.join("bump.sql"), "update bump set n = n + 1;\n").expect("script");
    std::fs::write(
        scn.join("checks.sql"),
        "select 'counted' as name, n >= {{committed}} and n > 0 as ok, n::text as detail from bump;\n",
    )
    .expect("checks");
    let out = dir.join("ladder.json");
    let o = command_on(
        &db,
        &["scenario", "run", "bumps"],
        &[
            "--dir",
            s(&dir),
            "--probe",
            "off",
            "--interval",
            "100ms",
            "--perturb",
            "500ms:analyze=bump",
            "--json",
            s(&out),
        ],
    )
    .output()
    .expect("run hotbench");
    ok(&o);
    let file: LadderFile = read(&out);
    let v = &file.ladders[0].variants[0];
    assert!(v.checks.iter().all(|c| c.ok), "{:?}", v.checks);
    let rec = v.record.as_ref().expect("record");
    let specs: Vec<String> = rec
        .config
        .settings
        .perturb
        .iter()
        .map(|p| p.to_string())
        .collect();
    assert_eq!(
        specs,
        [
            "500ms:analyze=bump",
            "1s:ddl-lock=bump,300ms",
            "1.5s:checkpoint"
        ]
    );
    for kind in ["analyze", "ddl-lock", "checkpoint"] {
        let p = only(&rec.perturbations, kind);
        assert_eq!(p.error, None, "{p:#?}");
    }
}

/// Through hotbench's PgBouncer the perturbation connects straight to the server and
/// `terminate-all` ends the server backends serving the run (they carry its
/// application_name, which PgBouncer sets on them); the clients go on.
#[test]
fn terminate_through_a_pooler_ends_the_backends_behind_it() {
    let case = sleepy("pt_pool");
    let ran = case
        .run("-n -c 4 -R 200 -T 4 --interval 100ms --probe off --pooler pgbouncer --perturb 2s:terminate-all")
        .expect_code(0);
    let v = case.record();
    let p = only(&v.perturbations, "terminate-all");
    let done: u32 = p
        .detail
        .as_deref()
        .and_then(|d| d.strip_prefix("terminated "))
        .and_then(|d| d.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    assert!(done >= 1, "{p:#?}\n{}", ran.out);
    assert!(rate_in(&v.timeline, 3.0, 4.0) > 100.0, "{}", ran.out);
}

/// `--shard 1/2`: what acts on the whole server is shard 0's (recorded here as not run), what
/// acts on the clients this shard does to its own (its part of terminate=3: 1).
#[test]
fn a_shard_leaves_server_wide_kinds_to_shard_0() {
    let case = sleepy("pt_shard");
    case.run(
        "-n -c 4 -T 2 --probe off --random-seed 1 --shard 1/2 --perturb 1s:checkpoint --perturb 1s:terminate=3",
    )
    .expect_code(0);
    let v = case.record();
    let c = only(&v.perturbations, "checkpoint");
    assert_eq!(
        c.error.as_deref(),
        Some("not run here: shard 0 of 2 does it for the run (this is shard 1)")
    );
    let t = only(&v.perturbations, "terminate");
    assert_eq!(t.detail.as_deref(), Some("terminated 1 backend"), "{t:#?}");
    case.run("-n -c 4 -T 2 --probe off --random-seed 1 --shard 0/2 --perturb 1s:checkpoint")
        .expect_code(0);
    let c = only(&case.record().perturbations, "checkpoint");
    assert_eq!(c.error, None, "{c:#?}");
}
