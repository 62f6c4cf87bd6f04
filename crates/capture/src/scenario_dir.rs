//! The capture as an ordinary scenario directory: `scenario.toml` (clients as sessions seen,
//! the rate when arrivals were open, the captured duration, the captured variant as the
//! baseline, a ceiling that draws every key uniformly, and the fix variants generated for
//! the shapes the lab recognises), the shape scripts, `checks.sql`, the schema and data
//! files, and `capture.json`. Every text a user's server controls that lands in TOML is a
//! TOML basic string with its escapes; nothing is pasted. Pure: returns the files.

use hotbench_results::capture_record::CaptureDoc;

use crate::fixes::Fixes;
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
/// (their `baseline_body`: statements that also log what the invariant checks count) keeps
/// its draws and comments.
pub fn files(
    c: &Capture,
    schema: &SchemaFiles,
    fixes: &Fixes,
) -> Result<Vec<(String, String)>, serde_json::Error> {
    let mut out: Vec<(String, String)> = Vec::new();
    out.extend(schema.files.iter().cloned());
    for ((file, text), w) in c.scripts.iter().zip(&c.written) {
        match fixes.baseline_body.get(file) {
            // One logging statement per captured one: spliced into the script's own
            // structure (its gaps, conditions and repeats stay).
            Some(body) => match split_body(body).filter(|r| r.len() == w.statements.len()) {
                Some(replace) => out.push((
                    file.clone(),
                    format!(
                        "{}-- the captured statements, logging what the fix variants' checks count\n{}",
                        w.head,
                        w.render_body(Some(&replace))
                    ),
                )),
                None => out.push((
                    file.clone(),
                    format!(
                        "{}-- the captured statements, logging what the fix variants' checks count (their gaps and conditions not kept)\n{}\n",
                        w.head,
                        body.trim_end()
                    ),
                )),
            },
            None => out.push((file.clone(), text.clone())),
        }
    }
    out.extend(fixes.files.iter().map(|f| (f.name.clone(), f.text.clone())));
    out.push(("checks.sql".into(), checks()));
    out.push((CHECKS_CAPTURED.into(), checks_captured(c)));
    out.push(("scenario.toml".into(), manifest(c, schema, fixes)));
    let mut doc: CaptureDoc = c.doc.clone();
    doc.notes.extend(schema.notes.iter().cloned());
    doc.notes.extend(fixes.notes.iter().cloned());
    out.push((CAPTURE_JSON.into(), serde_json::to_string_pretty(&doc)?));
    Ok(out)
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
                ((s.weight * 1000.0).round() as u64).max(1)
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
        &script_specs(c),
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
            &scripts,
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

fn variant(
    name: &str,
    about: &str,
    baseline: bool,
    scripts: &[String],
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
    if rate {
        v.push_str(&format!(
            "groups = [{{ name = \"main\", scripts = {}, rate = \"{{{{rate}}}}\" }}]\n",
            toml_list(scripts)
        ));
    } else {
        v.push_str(&format!("scripts = {}\n", toml_list(scripts)));
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
    for sh in &c.doc.shapes {
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
mod tests {
    use super::*;

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
