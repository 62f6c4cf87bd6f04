//! The captured shapes handed to the lab's fixes ([`crate::fixes`]): each written script's
//! draws and statements, the relations whose rows are hot, the claims' follow-up variables,
//! and the floors the data keeps (a `CHECK` constraint of the captured schema, else the least
//! value its statistics saw), so a read-check-write's fix keeps the same invariant. Pure.

use std::collections::BTreeSet;

use crate::fixes::{self, Fixes, Floor, FloorSource, Shape};
use crate::schema::SchemaCapture;
use crate::workload::Capture;

/// The fixes of every shape, merged.
pub fn plan(c: &Capture, schema: Option<&SchemaCapture>) -> Fixes {
    let floors = schema.map(floors).unwrap_or_default();
    let mut hot: BTreeSet<String> = c
        .doc
        .hot_keys
        .iter()
        .map(|k| hotbench_diagnose::shape::relation_key(&k.relation))
        .collect();
    for (sh, model) in c.doc.shapes.iter().zip(&c.shapes) {
        for p in sh.parameters.iter().filter(|p| !p.hot.is_empty()) {
            if let Some(st) = model.statements.get(p.statement) {
                hot.extend(
                    hotbench_diagnose::shape::touches(&st.key)
                        .into_iter()
                        .map(|t| t.relation),
                );
            }
        }
    }
    let all = c
        .written
        .iter()
        .zip(&c.doc.shapes)
        .map(|(w, sh)| {
            fixes::fixes(&Shape {
                name: sh.script.trim_end_matches(".sql").to_string(),
                script: sh.script.clone(),
                draws: w.draws.clone(),
                statements: w.statements.clone(),
                amounts: Default::default(),
                floors: floors.clone(),
                hot: hot.iter().cloned().collect(),
                claimed: w.claimed.clone(),
            })
        })
        .collect();
    fixes::merge(all)
}

/// Floors of the captured tables' numeric columns: their `CHECK` constraints (read from the
/// schema the capture wrote), else zero for a column whose statistics hold no negative
/// value.
fn floors(s: &SchemaCapture) -> Vec<Floor> {
    let mut out: Vec<Floor> = Vec::new();
    for line in s.schema_sql.lines() {
        let l = line.trim();
        let lower = l.to_ascii_lowercase();
        let (Some(rest), Some(at)) = (lower.strip_prefix("alter table "), lower.find(" check "))
        else {
            continue;
        };
        let table = rest.split(" add ").next().unwrap_or("");
        let rel = hotbench_diagnose::shape::relation_key(
            &l["alter table ".len().."alter table ".len() + table.len()],
        );
        let def = l[at + 1..].trim_end_matches(';');
        for t in s.tables.iter().filter(|t| t.name == rel) {
            for col in &t.columns {
                if let Some((strict, value)) = fixes::floor_from_check(&col.name, def) {
                    out.push(Floor {
                        relation: rel.clone(),
                        column: col.name.clone(),
                        strict,
                        value,
                        source: FloorSource::Check(def.trim_end_matches(';').to_string()),
                    });
                }
            }
        }
    }
    for t in &s.tables {
        for col in &t.columns {
            if out
                .iter()
                .any(|f| f.relation == t.name && f.column == col.name)
            {
                continue;
            }
            let Some(stats) = &col.stats else { continue };
            let least = stats
                .histogram
                .iter()
                .chain(stats.mcv.iter().map(|m| &m.0))
                .filter_map(|v| v.parse::<f64>().ok())
                .fold(f64::INFINITY, f64::min);
            // A column never seen negative keeps to zero (a balance, a stock); the least
            // value itself would be today's data, not a rule.
            let numeric = matches!(
                col.kind,
                crate::model::ValueKind::Int { .. } | crate::model::ValueKind::Decimal
            );
            if least.is_finite() && least >= 0.0 && numeric {
                out.push(Floor {
                    relation: t.name.clone(),
                    column: col.name.clone(),
                    strict: false,
                    value: "0".into(),
                    source: FloorSource::ObservedMinimum,
                });
            }
        }
    }
    out
}
