//! The ceiling: how fast the scenario's statements run with the contention removed (the
//! manifest's `[ceiling]`: one variant's statements with parameter overrides such as
//! `customers = 4000`). `scenario run` runs it after the variants as an extra row, not
//! ranked, and every variant gets its goodput as a percentage of the ceiling's — the distance
//! to what the server can do, which says whether to keep working on the schema or on the
//! hardware.

use crate::manifest::{Manifest, Variant};
use hotbench_results::{ClientBound, Ladder};

/// Name of the ceiling's row.
pub const CEILING: &str = "ceiling";

/// The ceiling as a variant (not the baseline, named [`CEILING`]); `None` without
/// `[ceiling]`. The manifest's validation guarantees the named variant exists.
pub fn ceiling_variant(m: &Manifest) -> Option<Variant> {
    let def = m.ceiling.as_ref()?;
    let mut v = m.variants.iter().find(|v| v.name == def.variant)?.clone();
    v.name = CEILING.into();
    v.baseline = false;
    let overrides: Vec<String> = def
        .params
        .iter()
        .map(|(k, x)| format!("{k}={}", x.text()))
        .collect();
    v.about = if def.about.is_empty() && overrides.is_empty() {
        format!("{}'s statements (not ranked)", def.variant)
    } else if def.about.is_empty() {
        format!(
            "{}'s statements with {} (not ranked)",
            def.variant,
            overrides.join(", ")
        )
    } else {
        def.about.clone()
    };
    for (k, x) in &def.params {
        v.params.insert(k.clone(), x.clone());
    }
    Some(v)
}

/// The user's `--param`s with the ceiling's overrides appended (the last value wins).
pub fn ceiling_params(m: &Manifest, user: &[(String, String)]) -> Vec<(String, String)> {
    let mut p = user.to_vec();
    if let Some(def) = &m.ceiling {
        p.extend(def.params.iter().map(|(k, x)| (k.clone(), x.text())));
    }
    p
}

/// Sets every variant's `pct_of_ceiling` (goodput ÷ the ceiling's goodput × 100) when the
/// ceiling ran and did useful work.
pub fn apply_pct(l: &mut Ladder) {
    let Some(top) = l
        .ceiling
        .as_ref()
        .and_then(|c| c.useful_per_s())
        .filter(|x| *x > 0.0)
    else {
        return;
    };
    for v in &mut l.variants {
        v.pct_of_ceiling = v.useful_per_s().map(|u| u * 100.0 / top);
    }
}

/// Marks the variants and the ceiling whose runs reached 90% of what their clients could do
/// whatever the server ([`ClientBound`], with `--rtt` given as `rtt_us`): a note says so, so
/// a ceiling of 100 clients over a 1 ms round trip is not read as the server's limit.
pub fn mark_client_bound(l: &mut Ladder, rtt_us: i64) {
    for v in l.variants.iter_mut().chain(l.ceiling.as_mut()) {
        let bound = v
            .work_record()
            .and_then(|r| ClientBound::of(&r, rtt_us))
            .filter(ClientBound::binds);
        if let Some(b) = bound {
            v.notes.push(b.message());
            v.client_bound = Some(b);
        }
    }
}

/// Text lines under the ladder table: the ceiling's goodput (or what bound it, when that
/// was the clients) and each variant's share of it.
pub fn lines(l: &Ladder) -> String {
    let Some(c) = &l.ceiling else {
        return String::new();
    };
    let unit = l.work_unit.as_deref().unwrap_or("goodput");
    let mut out = match c.useful_per_s() {
        Some(u) => format!("ceiling: {u:.0} {unit}/s — {}\n", c.about),
        None => format!(
            "ceiling: did not run ({})\n",
            c.skipped.as_deref().unwrap_or("no record")
        ),
    };
    if let Some(b) = &c.client_bound {
        out.push_str(&format!("ceiling {}\n", b.message()));
    }
    let pcts: Vec<String> = l
        .variants
        .iter()
        .filter_map(|v| v.pct_of_ceiling.map(|p| format!("{} {p:.0}%", v.name)))
        .collect();
    if !pcts.is_empty() {
        let of = if c.client_bound.is_some() {
            "% of the client-bound ceiling"
        } else {
            "% of ceiling"
        };
        out.push_str(&format!("{of}: {}\n", pcts.join(", ")));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use hotbench_results::{GroupRecord, RunRecord, TotalsRecord, TxnCounters, VariantResult};

    /// A 5-second run of `clients` whose fastest transaction took `min_us`.
    fn variant(name: &str, clients: usize, per_s: f64, min_us: f64) -> VariantResult {
        let mut c = TxnCounters {
            cnt: (per_s * 5.0) as u64,
            goodput: (per_s * 5.0) as u64,
            ..Default::default()
        };
        c.latency.add(min_us);
        let totals = TotalsRecord::from_counters(c, 5.0);
        VariantResult {
            name: name.into(),
            about: "update-returning's statements with customers=4000 (not ranked)".into(),
            record: Some(RunRecord {
                duration_s: 5.0,
                totals: totals.clone(),
                groups: vec![GroupRecord::plain("main", clients, totals)],
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    #[test]
    fn a_ceiling_at_its_clients_bound_says_so_instead_of_passing_for_the_server() {
        // The 16-core run: 100 clients, --rtt 1ms, fastest payment 1.03 ms, 91,720/s; escrow
        // at the same; select-for-update far below its own bound.
        let mut l = Ladder {
            variants: vec![
                variant("select-for-update", 100, 9_000.0, 4100.0),
                variant("escrow", 100, 91_000.0, 1030.0),
            ],
            ceiling: Some(variant(CEILING, 100, 91_720.0, 1030.0)),
            ..Default::default()
        };
        apply_pct(&mut l);
        mark_client_bound(&mut l, 1000);
        assert!(l.variants[0].client_bound.is_none());
        assert!(l.variants[0].notes.is_empty());
        assert!(l.variants[1].notes[0].starts_with("bound by clients × rtt (100 clients"));
        let text = lines(&l);
        assert!(
            text.contains(
                "ceiling bound by clients × rtt (100 clients / 1.03 ms = 97087/s; 94% of it \
                 reached): raise -c to measure the server\n"
            ),
            "{text}"
        );
        assert!(text.contains("% of the client-bound ceiling: select-for-update 10%, escrow 99%"));
    }
}
