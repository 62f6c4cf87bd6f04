//! Pure interpretation of what the server reports, kept free of I/O so it is tested without a
//! server: which wait label a `pg_stat_activity` row counts as, how long a chain of blocked
//! backends is, and how PostgreSQL's array and number texts parse.

use std::collections::{BTreeMap, BTreeSet};

/// What one `pg_stat_activity` row (or a group of identical rows) counts as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Sampled {
    /// Busy on the server, or idle inside a transaction: counted under this label.
    Counted(String),
    /// Idle outside a transaction: the client's own time, not a server wait.
    Idle,
    /// The row's details are hidden (another role's session without pg_read_all_stats).
    Hidden,
}

/// Label for a backend in `state` with `wait_event_type`/`wait_event`:
/// `CPU` when active without a wait event, `type:event` otherwise; a backend idle inside a
/// transaction counts as its wait event (`Client:ClientRead`: a client round trip while the
/// transaction holds its locks).
pub fn classify(state: Option<&str>, wtype: Option<&str>, wevent: Option<&str>) -> Sampled {
    let Some(state) = state.filter(|s| !s.is_empty()) else {
        return Sampled::Hidden;
    };
    if state == "idle" {
        return Sampled::Idle;
    }
    let wtype = wtype.filter(|s| !s.is_empty());
    match (wtype, state.starts_with("idle in transaction")) {
        (Some(t), _) => Sampled::Counted(format!("{t}:{}", wevent.unwrap_or(""))),
        (None, true) => Sampled::Counted("Client:ClientRead".into()),
        (None, false) => Sampled::Counted("CPU".into()),
    }
}

/// Parses PostgreSQL's text form of an integer array (`{1,2,3}`, `{}`); bad items are
/// skipped.
pub fn parse_int_array(text: &str) -> Vec<i64> {
    text.trim()
        .trim_start_matches('{')
        .trim_end_matches('}')
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .collect()
}

/// A relation's name as `regclass` wrote it, shown as the user's own session would see it:
/// the probe pins its session's `search_path` to `pg_catalog`, where `regclass` qualifies
/// every user table, so a schema on the user's `search_path` (the one read before pinning;
/// `public` when unknown) is dropped (`public.acct` → `acct`, `hb_queue.jobs` → `jobs` when
/// `hb_queue` is on it); any other schema is kept.
pub fn display_relation(name: &str, search_path: Option<&str>) -> String {
    let visible = search_path.map_or_else(|| vec!["public".to_string()], path_schemas);
    visible
        .iter()
        .find_map(|schema| {
            name.strip_prefix(schema.as_str())
                .and_then(|r| r.strip_prefix('.'))
                .filter(|r| !r.is_empty())
        })
        .unwrap_or(name)
        .to_string()
}

/// The schemas a `search_path` setting names, as `regclass` writes them (a quoted one stays
/// quoted; `"$user"` is left out: the role's own schema is shown qualified).
fn path_schemas(path: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut item = String::new();
    let mut quoted = false;
    for c in path.chars().chain(std::iter::once(',')) {
        match c {
            '"' => {
                quoted = !quoted;
                item.push(c);
            }
            ',' if !quoted => {
                let s = item.trim();
                if !s.is_empty() && s != "\"$user\"" && s != "$user" {
                    out.push(s.to_string());
                }
                item.clear();
            }
            _ => item.push(c),
        }
    }
    out
}

/// Integer cell (`None` for NULL or garbage, never a panic).
pub fn int(v: Option<&str>) -> Option<i64> {
    v?.trim().parse().ok()
}

/// Float cell.
pub fn float(v: Option<&str>) -> Option<f64> {
    v?.trim().parse::<f64>().ok().filter(|f| f.is_finite())
}

/// Longest chain of blocked backends in `blocked_by` (waiting pid → pids blocking it): a
/// waiter blocked by a backend that is not itself waiting is a chain of 1. Cycles (deadlocks
/// about to be detected) are cut.
pub fn longest_chain(blocked_by: &BTreeMap<i64, Vec<i64>>) -> u32 {
    fn depth(
        pid: i64,
        g: &BTreeMap<i64, Vec<i64>>,
        memo: &mut BTreeMap<i64, u32>,
        visiting: &mut BTreeSet<i64>,
    ) -> u32 {
        if let Some(&d) = memo.get(&pid) {
            return d;
        }
        let Some(blockers) = g.get(&pid) else {
            return 0;
        };
        if !visiting.insert(pid) {
            return 0;
        }
        let mut best = 0;
        for &b in blockers {
            best = best.max(depth(b, g, memo, visiting));
        }
        visiting.remove(&pid);
        let d = if blockers.is_empty() { 0 } else { best + 1 };
        memo.insert(pid, d);
        d
    }
    let mut memo = BTreeMap::new();
    let mut visiting = BTreeSet::new();
    blocked_by
        .keys()
        .map(|&p| depth(p, blocked_by, &mut memo, &mut visiting))
        .max()
        .unwrap_or(0)
}

pub use hotbench_wire::engine_of;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels() {
        let c = |s: &str| Sampled::Counted(s.to_string());
        assert_eq!(classify(Some("active"), None, None), c("CPU"));
        assert_eq!(
            classify(Some("active"), Some("Lock"), Some("tuple")),
            c("Lock:tuple")
        );
        assert_eq!(
            classify(
                Some("idle in transaction"),
                Some("Client"),
                Some("ClientRead")
            ),
            c("Client:ClientRead")
        );
        assert_eq!(
            classify(Some("idle in transaction (aborted)"), None, None),
            c("Client:ClientRead")
        );
        assert_eq!(
            classify(Some("idle"), Some("Client"), Some("ClientRead")),
            Sampled::Idle
        );
        assert_eq!(classify(None, None, None), Sampled::Hidden);
    }

    #[test]
    fn arrays_and_numbers() {
        assert_eq!(parse_int_array("{1,22,333}"), vec![1, 22, 333]);
        assert!(parse_int_array("{}").is_empty());
        assert_eq!(int(Some("12")), Some(12));
        assert_eq!(int(Some("x")), None);
        assert_eq!(float(Some("NaN")), None);
    }

    #[test]
    fn chains() {
        let mut g = BTreeMap::new();
        assert_eq!(longest_chain(&g), 0);
        // 3 waits for 2, 2 waits for 1 (running), 4 waits for 1.
        g.insert(3, vec![2]);
        g.insert(2, vec![1]);
        g.insert(4, vec![1]);
        assert_eq!(longest_chain(&g), 2);
        // A cycle does not loop forever.
        g.insert(1, vec![3]);
        assert!(longest_chain(&g) >= 2);
    }

    #[test]
    fn engines() {
        assert_eq!(engine_of("PostgreSQL 15.4 on x86_64"), "postgresql");
        assert_eq!(
            engine_of("PostgreSQL 11.2-YB-2.20.1.0-b0 on x86_64"),
            "yugabytedb"
        );
        assert_eq!(engine_of("CockroachDB CCL v23.1.0"), "cockroachdb");
    }

    #[test]
    fn relations_are_shown_as_the_users_search_path_sees_them() {
        use super::display_relation as d;
        assert_eq!(d("public.acct", None), "acct");
        assert_eq!(d("hb_queue.jobs", None), "hb_queue.jobs");
        assert_eq!(d("hb_queue.jobs", Some("hb_queue, public")), "jobs");
        assert_eq!(d("public.acct", Some("\"$user\", public")), "acct");
        assert_eq!(d("\"My S\".t", Some("\"My S\", public")), "t");
        assert_eq!(d("app.t", Some("\"$user\", public")), "app.t");
        assert_eq!(d("\"Acc,ounts\"", Some("public")), "\"Acc,ounts\"");
    }
}
