//! The capture as an ordinary scenario directory: `scenario.toml` (clients as sessions seen,
//! the rate when arrivals were open, the captured duration, the captured variant as the
//! baseline, a ceiling that draws every key uniformly, and the fix variants generated for
//! the shapes the lab recognises), the shape scripts, `checks.sql`, the schema and data
//! files, and `capture.json`. Every text a user's server controls that lands in TOML is a
//! TOML basic string with its escapes; nothing is pasted. Pure: returns the files.

use hotbench_results::capture_record::{CaptureDoc, ClientGroup};

use crate::fixes::Fixes;
use crate::fixes_sql as gen;
use crate::script::Written;
use crate::workload::Capture;

/// The schema side (tables, indexes, functions, a data generator): files and the setup order.
#[derive(Debug, Clone, Default)]
pub struct SchemaFiles {
    /// (file name, text).
    pub files: Vec<(String, String)>,
    /// Files run before every variant, in order.
    pub setup: Vec<String>,
    /// The tables, for the probes' table health.
    pub tables: Vec<String>,
    pub notes: Vec<String>,
}

/// The name of the captured variant.
pub const CAPTURED: &str = "captured";
/// The captured variant's own checks.
const CHECKS_CAPTURED: &str = "checks_captured.sql";
/// The capture document's file name.
pub const CAPTURE_JSON: &str = "capture.json";

/// Every file of the scenario directory, `capture.json` last. A script the fixes rewrite
/// (their `baseline_body`: statements that also log what the invariant checks count) and
/// the fix variants' scripts are spliced into the captured script's structure ([`splice`]).
pub fn files(
    c: &Capture,
    schema: &SchemaFiles,
    fixes: &Fixes,
) -> Result<Vec<(String, String)>, serde_json::Error> {
    let mut out: Vec<(String, String)> = Vec::new();
    out.extend(schema.files.iter().cloned());
    out.extend(scripts(&c.scripts, &c.written, fixes));
    out.push(("checks.sql".into(), checks()));
    out.push((CHECKS_CAPTURED.into(), checks_captured(c)));
    out.push(("scenario.toml".into(), manifest(c, schema, fixes)));
    let mut doc: CaptureDoc = c.doc.clone();
    doc.notes.extend(schema.notes.iter().cloned());
    doc.notes.extend(fixes.notes.iter().cloned());
    out.push((CAPTURE_JSON.into(), serde_json::to_string_pretty(&doc)?));
    Ok(out)
}

/// The captured scripts (the baseline's logging statements spliced in where the fixes
/// rewrite them) and the fixes' files, each variant's script spliced into the script of the
/// shape it fixes.
fn scripts(
    captured: &[(String, String)],
    written: &[Written],
    fixes: &Fixes,
) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for ((file, text), w) in captured.iter().zip(written) {
        out.push(match fixes.baseline_body.get(file) {
            Some(body) => (
                file.clone(),
                splice(
                    w,
                    "the captured statements, logging what the fix variants' checks count",
                    body,
                ),
            ),
            None => (file.clone(), text.clone()),
        });
    }
    for f in &fixes.files {
        // A variant is named `{stem}-{kind}`, its shape's script `{stem}.sql` (as the
        // manifest's script lists match them).
        let shape = fixes
            .variants
            .iter()
            .find(|v| v.script == f.name)
            .and_then(|v| v.name.split('-').next())
            .and_then(|stem| {
                captured
                    .iter()
                    .zip(written)
                    .find(|((file, _), _)| gen::file_stem(file.trim_end_matches(".sql")) == stem)
            });
        out.push(match shape {
            Some((_, w)) => (
                f.name.clone(),
                splice(
                    w,
                    "the fix's statements in place of the captured ones",
                    &f.text,
                ),
            ),
            None => (f.name.clone(), f.text.clone()),
        });
    }
    out
}

/// A fix's script for a captured one: its own leading comments and `\set` lines (those the
/// captured script draws written once), then the captured head (comments, the idle sleep
/// between transactions, the draws), then its statements. With one statement per captured
/// one they are spliced into the captured body: its gaps, conditions (`\if … \elif`) and
/// repeats stay. Otherwise they are written as they are, after the captured think time
/// inside the transaction (its unconditional `\sleep`s) slept once, and the comment says
/// what was not kept.
pub(crate) fn splice(w: &Written, what: &str, text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let lead = lines
        .iter()
        .take_while(|l| {
            let t = l.trim();
            t.starts_with("--") || t.starts_with("\\set ")
        })
        .count();
    let (mut own, mut sets) = (String::new(), String::new());
    for l in &lines[..lead] {
        if l.trim().starts_with("--") {
            own.push_str(&format!("{l}\n"));
        } else if !w.draws.iter().any(|d| d.trim() == l.trim()) {
            sets.push_str(&format!("{l}\n"));
        }
    }
    let rest = lines[lead..].join("\n");
    let head = format!("{own}{}{sets}", w.head);
    // A chained shape's transaction runs after the fix's as after the captured one.
    let body = match split_body(&rest).filter(|r| r.len() == w.statements.len()) {
        Some(replace) => format!("{head}-- {what}\n{}", w.render_body(Some(&replace))),
        None => {
            // As many statements in the same order: each captured gap before the same one.
            if let Some(spread) = crate::splice_gaps::gaps_before(&w.body, w.statements.len())
                .and_then(|g| crate::splice_gaps::spread(&rest, &g))
            {
                return format!(
                    "{head}-- {what} (the captured gaps slept before the same statements)\n{spread}"
                );
            }
            let (slept, conditional) = think_time_us(&w.body);
            let mut lost = vec![format!(
                "its statements do not correspond one to one with the captured {}, so the captured gaps' places, conditions and repeats are not kept",
                w.statements.len()
            )];
            if conditional > 0 {
                lost.push(format!(
                    "{conditional} us of sleeps under a condition not slept"
                ));
            }
            let sleep = if slept > 0 {
                format!(
                    "-- the captured think time inside the transaction, slept once before its statements\n\\sleep {slept} us\n"
                )
            } else {
                String::new()
            };
            format!(
                "{head}-- {what} ({})\n{sleep}{}\n",
                lost.join("; "),
                rest.trim_end()
            )
        }
    };
    body + &w.tail
}

/// The `\sleep N us` of a captured body: outside any `\if` (microseconds in all), and under one.
fn think_time_us(body: &str) -> (u64, u64) {
    let (mut depth, mut plain, mut conditional) = (0usize, 0u64, 0u64);
    for l in body.lines().map(str::trim) {
        if l.starts_with("\\if ") {
            depth += 1;
        } else if l == "\\endif" {
            depth = depth.saturating_sub(1);
        } else if let Some(us) = l
            .strip_prefix("\\sleep ")
            .and_then(|r| r.strip_suffix(" us"))
            .and_then(|n| n.trim().parse::<u64>().ok())
        {
            if depth == 0 {
                plain += us;
            } else {
                conditional += us;
            }
        }
    }
    (plain, conditional)
}

/// A fix's body as its statements (SQL, ends in `\gset`), when it is only statements.
fn split_body(body: &str) -> Option<Vec<(String, bool)>> {
    let mut out = Vec::new();
    let mut cur = String::new();
    for line in body.lines() {
        let t = line.trim_end();
        if t == "\\gset" {
            out.push((std::mem::take(&mut cur), true));
            continue;
        }
        if t.starts_with('\\') {
            return None;
        }
        if !cur.is_empty() {
            cur.push('\n');
        }
        cur.push_str(t);
        if t.ends_with(';') {
            let sql = std::mem::take(&mut cur);
            out.push((sql.trim_end_matches(';').to_string(), false));
        }
    }
    cur.trim().is_empty().then_some(out)
}

/// `@W` of each shape: its share in thousandths, at least 1.
fn script_specs(c: &Capture) -> Vec<String> {
    c.doc
        .shapes
        .iter()
        .map(|s| {
            format!(
                "{}@{}",
                s.script,
                // A chained shape (weight 0) runs in its returning shape's script.
                if s.weight > 0.0 {
                    ((s.weight * 1000.0).round() as u64).max(1)
                } else {
                    0
                }
            )
        })
        .collect()
}

fn manifest(c: &Capture, schema: &SchemaFiles, fixes: &Fixes) -> String {
    let d = &c.doc;
    let mut m = String::new();
    m.push_str("# Written by hotbench capture: the captured workload as a scenario.\n");
    m.push_str(
        "# `hotbench scenario run NAME --dir DIR` runs it (NAME is the directory's name);\n",
    );
    m.push_str("# `hotbench capture --verify DIR` scores the twin against capture.json.\n");
    m.push_str(&format!(
        "title = {}\n",
        toml_string(&format!("Captured workload ({})", d.target))
    ));
    let shapes: Vec<String> = d
        .shapes
        .iter()
        .map(|s| format!("{} {:.0}%", s.script, s.weight * 100.0))
        .collect();
    m.push_str(&format!(
        "demonstrates = {}\n",
        toml_string(&format!(
            "The workload sampled from {} for {:.0} s ({:.0} transactions/s, {} sessions): {} transaction shape{} ({}). The captured variant runs them at the captured clients{}; the ceiling draws every key uniformly.",
            d.target,
            d.duration_s,
            d.tps,
            d.sessions.seen,
            d.shapes.len(),
            if d.shapes.len() == 1 { "" } else { "s" },
            shapes.join(", "),
            if c.rate.is_some() { " and rate" } else { "" }
        ))
    ));
    m.push_str(&format!("clients = {}\n", c.clients.clamp(1, 10_000)));
    m.push_str(&format!(
        "duration = {}\n",
        (d.duration_s.round() as u64).max(1)
    ));
    m.push_str(&format!("query_mode = \"{}\"\n", c.query_mode));
    m.push_str(&format!("tables = {}\n", toml_list(&schema.tables)));
    let setup: Vec<String> = schema.setup.iter().chain(&fixes.setup).cloned().collect();
    m.push_str(&format!("setup = {}\n", toml_list(&setup)));
    let checks: Vec<String> = std::iter::once("checks.sql".to_string())
        .chain(fixes.checks.iter().cloned())
        .collect();
    m.push_str(&format!("checks = {}\n", toml_list(&checks)));
    let keys: Vec<String> = d
        .shapes
        .iter()
        .flat_map(|s| &s.parameters)
        .filter(|p| !p.hot.is_empty())
        .map(|p| p.variable.clone())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    if !keys.is_empty() {
        m.push_str(&format!(
            "key = {}   # the variables with hot values: each variant's hot keys\n",
            toml_list(&keys)
        ));
    }
    m.push_str(&groups_comment(c));
    if c.groups.iter().any(|(_, g)| g.name == "consumers") {
        m.push_str("work_group = \"consumers\"   # the queue's consumers do its work\n");
    }
    m.push_str(&format!(
        "\n[params.{}]\ndefault = 1\nmin = 0\nmax = 1\nhelp = \"1: keys drawn as captured (hot values and fitted tails); 0: uniformly over each key's range (the ceiling)\"\n",
        crate::script::SKEW_PARAM
    ));
    for p in &fixes.params {
        m.push_str(&format!(
            "\n[params.{}]\ndefault = {}\nmin = {}\nhelp = {}\n",
            p.name,
            p.default,
            p.min,
            toml_string(&p.help)
        ));
    }
    if let Some(w) = &fixes.work {
        m.push_str(&format!(
            "\n[work]\nsql = {}\nunit = {}\n",
            toml_string(&w.sql),
            toml_string(&w.unit)
        ));
    }
    if let Some(rate) = c.rate {
        m.push_str(&format!(
            "\n[params.rate]\ndefault = {:.1}\nmin = 0.1\nhelp = \"transactions per second (-R): the captured arrivals were open, at this rate\"\n",
            rate.max(0.1)
        ));
    }
    m.push_str(&variant(
        CAPTURED,
        "the captured transaction shapes, weighted as they ran",
        true,
        &grouped(&c.groups, script_specs(c)),
        c.rate.is_some(),
        &[],
        &[CHECKS_CAPTURED.to_string()],
    ));
    for f in &fixes.variants {
        // The fixed shape's script in place of the captured one; the other shapes as they ran.
        let stem = f.name.split('-').next().unwrap_or("");
        let scripts: Vec<String> = script_specs(c)
            .into_iter()
            .map(|spec| {
                if spec.starts_with(&format!("{stem}.sql@")) {
                    let w = spec.rsplit('@').next().unwrap_or("1");
                    format!("{}@{w}", f.script)
                } else {
                    spec
                }
            })
            .collect();
        let mut v = variant(
            &f.name,
            &f.about,
            false,
            &grouped(&c.groups, scripts),
            c.rate.is_some(),
            &f.setup,
            &f.checks,
        );
        if let Some(g) = &f.goodput {
            v.push_str(&format!("goodput = {}\n", toml_string(g)));
        }
        m.push_str(&v);
    }
    m.push_str(&format!(
        "\n# The captured shapes with every key drawn uniformly over its range: no key is hot.\n[ceiling]\nvariant = \"{CAPTURED}\"\nparams = {{ {} = 0 }}\n",
        crate::script::SKEW_PARAM
    ));
    m
}

/// Each client group's name, clients and script specs (`specs` in the shapes' order); one
/// unnamed group of every spec when the capture has no groups.
type Groups = Vec<(Option<(String, u32)>, Vec<String>)>;

fn grouped(groups: &[(Vec<usize>, ClientGroup)], specs: Vec<String>) -> Groups {
    if groups.is_empty() {
        return vec![(None, specs)];
    }
    groups
        .iter()
        .map(|(shapes, g)| {
            let mine = shapes
                .iter()
                .filter_map(|&i| specs.get(i).cloned())
                .collect();
            (Some((g.name.clone(), g.clients.max(1))), mine)
        })
        .collect()
}

/// The comment that says how the client groups were found and sized.
fn groups_comment(c: &Capture) -> String {
    let Some((_, first)) = c.groups.first() else {
        return String::new();
    };
    let how = if first.sized_by == "sessions" {
        "# The sessions ran disjoint sets of shapes (dedicated producers and consumers): each set is\n# a client group with as many clients as sessions were seen running it.\n"
    } else {
        "# The sessions mixed shapes (a pool hands a backend to whichever thread asks), but a queue's\n# claim is run by workers looping on it: its shapes are the consumers, sized by Little's law\n# (sessions busy in them at once = their tps x (latency + the busy time per transaction the\n# latencies leave out: sampled busy sessions beyond them over all tps)), which is how many\n# queue on the head row; the other sessions run the other shapes.\n"
    };
    let mut s = format!("\n{how}");
    for (_, g) in &c.groups {
        s.push_str(&format!(
            "#   {}: {} clients ({}; {:.1} busy), {}{}\n",
            g.name,
            g.clients,
            g.scripts.join(", "),
            g.busy,
            "idle between transactions ",
            g.idle_between_ms.map_or("unknown".into(), |ms| format!(
                "{ms:.1} ms (clients - busy) / its tps"
            )),
        ));
    }
    s
}

fn variant(
    name: &str,
    about: &str,
    baseline: bool,
    groups: &Groups,
    rate: bool,
    setup: &[String],
    checks: &[String],
) -> String {
    let mut v = format!(
        "\n[[variants]]\nname = {}\nabout = {}\n",
        toml_string(name),
        toml_string(about)
    );
    if baseline {
        v.push_str("baseline = true\n");
    }
    match groups.as_slice() {
        [(None, scripts)] if rate => v.push_str(&format!(
            "groups = [{{ name = \"main\", scripts = {}, rate = \"{{{{rate}}}}\" }}]\n",
            toml_list(scripts)
        )),
        [(None, scripts)] => v.push_str(&format!("scripts = {}\n", toml_list(scripts))),
        _ => {
            let items: Vec<String> = groups
                .iter()
                .map(|(g, scripts)| {
                    let (name, clients) = g.clone().unwrap_or_else(|| ("main".into(), 1));
                    format!(
                        "{{ name = {}, scripts = {}, clients = {clients} }}",
                        toml_string(&name),
                        toml_list(scripts)
                    )
                })
                .collect();
            v.push_str(&format!("groups = [{}]\n", items.join(", ")));
        }
    }
    if !setup.is_empty() {
        v.push_str(&format!("setup = {}\n", toml_list(setup)));
    }
    if !checks.is_empty() {
        v.push_str(&format!("checks = {}\n", toml_list(checks)));
    }
    // Deadlocks and serialization failures are retried as the application would; anything
    // else a captured statement meets on the twin's data is counted, not fatal.
    v.push_str("retry = { max_tries = 10, continue_on_error = true }\n");
    v
}

/// The check every variant answers: almost no transaction failed.
fn checks() -> String {
    "-- Written by hotbench capture: the captured statements run on the twin's data.\n\
     select 'at most 1% of transactions failed' as name,\n       {{failed}} * 100 <= {{committed}} + {{failed}} as ok,\n       format('%s failed, %s committed', {{failed}}, {{committed}}) as detail;\n"
        .to_string()
}

/// The captured variant's own checks: each shape committed transactions.
fn checks_captured(c: &Capture) -> String {
    let mut s = String::from("-- Written by hotbench capture: every captured shape ran.\n");
    // A chained shape (weight 0) runs inside its returning shape's script.
    for sh in c.doc.shapes.iter().filter(|s| s.weight > 0.0) {
        let file = &sh.script;
        s.push_str(&format!(
            "select {} as name, {{{{committed:{file}}}}} > 0 or {{{{committed}}}} = 0 as ok,\n       format('%s transactions committed', {{{{committed:{file}}}}}) as detail;\n",
            sql_literal(&format!("{file} committed transactions"))
        ));
    }
    s
}

/// A TOML basic string.
pub fn toml_string(s: &str) -> String {
    let mut o = String::from("\"");
    for ch in s.chars() {
        match ch {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            '\n' => o.push_str("\\n"),
            '\t' => o.push_str("\\t"),
            '\r' => o.push_str("\\r"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => o.push_str(&format!("\\u{:04X}", c as u32)),
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

fn toml_list(v: &[String]) -> String {
    let items: Vec<String> = v.iter().map(|s| toml_string(s)).collect();
    format!("[{}]", items.join(", "))
}

/// A SQL string literal (standard-conforming: quotes doubled).
fn sql_literal(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

#[cfg(test)]
#[path = "scenario_dir_groups_tests.rs"]
mod groups_tests;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixes::{fixes, Shape};

    /// A captured Django counter: the page read, then `F("views") - 1` in 10% or `+ 1` in
    /// 90% of transactions (an `\if … \elif`), three 1.5 ms gaps and an idle sleep.
    fn django() -> (Written, Shape) {
        let statements = [
            "begin",
            "select views from site_page where id = :post",
            "UPDATE \"site_page\" SET \"views\" = (\"site_page\".\"views\" - 1) WHERE \"site_page\".\"id\" = :post",
            "UPDATE \"site_page\" SET \"views\" = (\"site_page\".\"views\" + 1) WHERE \"site_page\".\"id\" = :post",
            "commit",
        ];
        let w = Written::for_test(
            "-- shape_01.sql\n-- idled between transactions\n\\sleep 3000 us\n-- the page\n\\set post random(1, 4)\n",
            "{0}-- 1.5 ms idle in the transaction here\n\\sleep 1500 us\n{1}-- 1.5 ms between the statements\n\\sleep 1500 us\n\
             -- one of two statements never seen in one transaction\n\\set run2 random(1, 1000)\n\\if :run2 <= 100\n{2}\\elif :run2 <= 1000\n{3}\\endif\n\
             -- 1.5 ms idle in the transaction here\n\\sleep 1500 us\n{4}",
            &["\\set post random(1, 4)"],
            &statements,
        );
        let shape = Shape {
            name: "shape_01".into(),
            script: "shape_01.sql".into(),
            draws: w.draws.clone(),
            statements: w.statements.clone(),
            ..Shape::default()
        };
        (w, shape)
    }

    #[test]
    fn the_sharded_variant_keeps_the_captured_conditions_and_sleeps() {
        let (w, shape) = django();
        let f = fixes(&shape);
        let out = scripts(&[("shape_01.sql".into(), w.text())], &[w], &f);
        let file = |name: &str| {
            out.iter()
                .find(|(n, _)| n == name)
                .map(|(_, t)| t.clone())
                .unwrap_or_default()
        };
        let v = file("shape_01_sharded.sql");
        // Each increment goes to its shard under its own branch: not both every time.
        let at = |pat: &str| v.find(pat).unwrap_or_else(|| panic!("{pat} in {v}"));
        let (if_, elif, endif) = (
            at("\\if :run2 <= 100\n"),
            at("\\elif :run2 <= 1000\n"),
            at("\\endif\n"),
        );
        let dec = at("(\"site_page\".\"views\" - 1) WHERE (\"site_page\".\"id\" = :post) and hotbench_shard = :hotbench_shard");
        let inc = at("(\"site_page\".\"views\" + 1) WHERE (\"site_page\".\"id\" = :post) and hotbench_shard = :hotbench_shard");
        assert!(if_ < dec && dec < elif && elif < inc && inc < endif, "{v}");
        assert_eq!(v.matches("hotbench_shard_site_page").count(), 2, "{v}");
        // The think time and the idle sleep between transactions stay.
        assert_eq!(v.matches("\\sleep 1500 us\n").count(), 3, "{v}");
        assert_eq!(v.matches("\\sleep 3000 us\n").count(), 1, "{v}");
        // The draws once, the shard drawn before it is used.
        assert_eq!(v.matches("\\set post random(1, 4)\n").count(), 1, "{v}");
        assert!(
            at("\\set hotbench_shard random(0, {{shards}} - 1)\n") < dec,
            "{v}"
        );
        assert!(v.starts_with("-- hotbench capture: the hot counter"), "{v}");
        // The baseline as before: its logging statements in the same structure.
        let b = file("shape_01.sql");
        assert!(
            b.contains("\\if :run2 <= 100\n") && b.matches("\\sleep 1500 us\n").count() == 3,
            "{b}"
        );
        assert!(b.contains("insert into hotbench_increments"), "{b}");
    }

    /// The spliced Django directory run as a ladder on a real server: the baseline and the
    /// sharded variant commit and pass the counter's check (every increment counted).
    #[test]
    fn the_spliced_sharded_variant_runs_and_counts_every_increment() {
        use hotbench_scenario::{run_ladder, source::dir_bundles, LadderOptions};
        let (w, shape) = django();
        let f = fixes(&shape);
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = tmp.path();
        let mut files = scripts(&[("shape_01.sql".into(), w.text())], &[w], &f);
        files.push((
            "schema.sql".into(),
            "create table site_page (id int primary key, views bigint not null default 0);\ninsert into site_page (id) select g from generate_series(1, 4) g;\n".into(),
        ));
        for (name, text) in &files {
            std::fs::write(dir.join(name), text).expect("write");
        }
        #[derive(serde::Serialize)]
        struct Doc<'a> {
            variants: &'a [crate::fixes::VariantEntry],
        }
        let mut m = format!(
            "title = \"django\"\ndemonstrates = \"spliced fixes\"\nclients = 4\nduration = 1\nsetup = {}\nchecks = {}\n",
            toml_list(&std::iter::once("schema.sql".to_string()).chain(f.setup.iter().cloned()).collect::<Vec<_>>()),
            toml_list(&f.checks)
        );
        for p in &f.params {
            m.push_str(&format!(
                "\n[params.{}]\ndefault = {}\nmin = {}\n",
                p.name, p.default, p.min
            ));
        }
        m.push_str("\n[[variants]]\nname = \"captured\"\nabout = \"as captured\"\nbaseline = true\nscript = \"shape_01.sql\"\n\n");
        m.push_str(
            &toml::to_string(&Doc {
                variants: &f.variants,
            })
            .expect("toml"),
        );
        std::fs::write(dir.join("scenario.toml"), m).expect("write");
        let pg = hotbench_pgserver::testing::shared();
        let db = pg
            .create_database(&format!("splice_{}", std::process::id()))
            .expect("database");
        let conn = hotbench_wire::Config::parse(&db.socket_conninfo()).expect("conninfo");
        let scn = hotbench_scenario::load(dir_bundles(dir).expect("bundle").remove(0))
            .expect("the scenario loads");
        let opts = LadderOptions {
            conn,
            params: vec![("duration".into(), "1".into())],
            variants: None,
            demo: false,
            settings: hotbench_engine::RunSettings {
                jobs: Some(2),
                ..Default::default()
            },
            random_seed: 7,
            target_description: "test".into(),
            embedded: false,
            fast: false,
            command_line: Vec::new(),
            probe: None,
            sharing: &(),
            progress: false,
            keep_schema: false,
            route: None,
            live: None,
            server: None,
        };
        let mut log = Vec::new();
        let l = run_ladder(&scn, &opts, &mut log, &mut |_| {})
            .unwrap_or_else(|e| panic!("ladder: {e}\n{}", String::from_utf8_lossy(&log)));
        let names: Vec<&str> = l.variants.iter().map(|v| v.name.as_str()).collect();
        assert_eq!(names, ["captured", "shape_01-sharded"]);
        for v in &l.variants {
            let committed = v.record.as_ref().map_or(0, |r| r.totals.counters.cnt);
            assert!(
                committed > 0,
                "{}: nothing committed\n{}",
                v.name,
                String::from_utf8_lossy(&log)
            );
            assert_eq!(v.checks.len(), f.checks.len(), "{}", v.name);
            let failed: Vec<String> = v
                .checks
                .iter()
                .filter(|c| !c.ok)
                .map(|c| format!("{}: {}", c.name, c.detail))
                .collect();
            assert!(failed.is_empty(), "{}: {failed:?}", v.name);
        }
    }

    #[test]
    fn a_fix_that_cannot_be_spliced_keeps_the_think_time_and_says_what_it_lost() {
        let (w, _) = django();
        let v = splice(
            &w,
            "the fix",
            "-- a fix\n\\set post random(1, 4)\nbegin;\nupdate site_page set views = views + 1 where id = :post;\ncommit;\n",
        );
        assert!(v.starts_with("-- a fix\n-- shape_01.sql\n"), "{v}");
        assert_eq!(v.matches("\\set post random(1, 4)\n").count(), 1, "{v}");
        assert!(v.contains("\\sleep 3000 us\n"), "{v}");
        assert!(
            v.contains("do not correspond one to one with the captured 5"),
            "{v}"
        );
        assert!(
            v.contains("slept once before its statements\n\\sleep 4500 us\nbegin;\nupdate"),
            "{v}"
        );
    }

    #[test]
    fn toml_strings_escape_what_a_server_controls() {
        assert_eq!(
            toml_string("a\"b\\c\nd\u{1b}"),
            "\"a\\\"b\\\\c\\nd\\u001B\""
        );
        let parsed: toml::Value =
            toml::from_str(&format!("x = {}", toml_string("q\"\\\u{7}é"))).expect("valid TOML");
        assert_eq!(parsed["x"].as_str(), Some("q\"\\\u{7}é"));
    }
}
