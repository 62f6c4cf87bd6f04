//! The captured shapes handed to the lab's fixes ([`crate::fixes`]): each written script's
//! draws and statements, the relations whose rows are hot, the claims' follow-up variables,
//! and the floors the data keeps (a `CHECK` constraint of the captured schema, else the least
//! value its statistics saw), so a read-check-write's fix keeps the same invariant. Pure.

use crate::fixes::{self, Fixes, Floor, FloorSource, Shape};
use crate::schema::SchemaCapture;
use crate::workload::Capture;

/// The fixes of every shape, merged.
pub fn plan(c: &Capture, schema: Option<&SchemaCapture>) -> Fixes {
    let floors = schema.map(floors).unwrap_or_default();
    // The relations whose rows were waited on, hottest first, then those a hot draw touches.
    let mut hot: Vec<String> = Vec::new();
    let mut add = |r: String| {
        if !hot.contains(&r) {
            hot.push(r);
        }
    };
    for k in &c.doc.hot_keys {
        add(hotbench_diagnose::shape::relation_key(&k.relation));
    }
    for (sh, model) in c.doc.shapes.iter().zip(&c.shapes) {
        for p in sh.parameters.iter().filter(|p| !p.hot.is_empty()) {
            if let Some(st) = model.statements.get(p.statement) {
                let touched = hotbench_diagnose::shape::touches(&st.key);
                touched.into_iter().for_each(|t| add(t.relation));
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
                hot: hot.clone(),
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
    for (table, name, def) in check_constraints(&s.schema_sql) {
        let rel = hotbench_diagnose::shape::relation_key(&table);
        for t in s.tables.iter().filter(|t| t.name == rel) {
            for col in &t.columns {
                if let Some((strict, value)) = fixes::floor_from_check(&col.name, &def) {
                    out.push(Floor {
                        relation: rel.clone(),
                        column: col.name.clone(),
                        strict,
                        value,
                        source: FloorSource::Check(name.clone()),
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

/// The `CHECK` constraints of `schema.sql`: the table's name as written, the constraint's
/// name (its definition when it has none) and its definition; the
/// catalogs' `alter table T add constraint N check (…);` lines, and pg_dump's, which writes
/// them inside `CREATE TABLE T (` … `);` (`CONSTRAINT N CHECK (…)`) or as `ALTER TABLE ONLY T`
/// with `ADD CONSTRAINT N CHECK (…)` on the next line.
fn check_constraints(schema_sql: &str) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    // The table a line belongs to: inside a CREATE TABLE, or after an ALTER TABLE line.
    let mut table: Option<String> = None;
    let mut inside_create = false;
    for line in schema_sql.lines() {
        let l = line.trim();
        let lower = l.to_ascii_lowercase();
        let head = [
            "create table ",
            "create unlogged table ",
            "alter table only ",
            "alter table ",
        ]
        .iter()
        .find(|p| lower.starts_with(*p));
        if let Some(p) = head {
            let rest = &l[p.len()..];
            // The name ends where the statement goes on: ` (`, ` add `, or the line's end.
            let lower_rest = &lower[p.len()..];
            let end = [" (", " add ", " partition "]
                .iter()
                .filter_map(|w| lower_rest.find(w))
                .min()
                .unwrap_or(rest.len());
            table = Some(rest[..end].trim().to_string());
            inside_create = p.starts_with("create");
        }
        let Some(t) = &table else { continue };
        if let Some(at) = lower.find("check (") {
            // A constraint's text is `CHECK (…)`: cut what comes after its last parenthesis.
            let def = &l[at..];
            let def = def.rfind(')').map_or(def, |e| &def[..=e]);
            // `CONSTRAINT name CHECK`: the name as written (quoted when it needs to be).
            let name = lower[..at]
                .rfind("constraint ")
                .map(|c| l[c + "constraint ".len()..at].trim())
                .filter(|n| !n.is_empty())
                .unwrap_or(def);
            out.push((t.clone(), name.to_string(), def.to_string()));
        }
        if l.ends_with(';') || (inside_create && l.starts_with(')')) {
            table = None;
            inside_create = false;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{check_constraints, floors};
    use crate::fixes::FloorSource;
    use crate::model::{RelKind, ValueKind};
    use crate::schema::{ColumnProfile, SchemaCapture, SchemaSource, TableProfile};

    fn acct(schema_sql: &str) -> SchemaCapture {
        let col = |name: &str| ColumnProfile {
            name: name.into(),
            type_sql: "bigint".into(),
            kind: ValueKind::Int {
                min: i64::MIN.into(),
                max: i64::MAX.into(),
            },
            not_null: true,
            stats: Some(Default::default()),
        };
        SchemaCapture {
            schema_sql: schema_sql.into(),
            data_sql: String::new(),
            source: SchemaSource::PgDump {
                version: "15".into(),
            },
            tables: vec![TableProfile {
                schema: "public".into(),
                name: "acct".into(),
                kind: RelKind::Table,
                partition_of: None,
                reltuples: 1000.0,
                rows: 1000,
                columns: vec![col("id"), col("balance")],
            }],
            unreproducible: vec![],
            trigger_sql: String::new(),
        }
    }

    #[test]
    fn a_check_pg_dump_writes_inside_create_table_is_the_floor() {
        // The Zipf acceptance's `acct`: pg_dump writes the CHECK inside CREATE TABLE, which
        // was not read, so the fix's check named "the observed minimum" instead.
        let dump = "CREATE TABLE acct (\n    id integer NOT NULL,\n    balance bigint NOT NULL,\n    CONSTRAINT acct_balance_check CHECK ((balance >= 5))\n);\nALTER TABLE ONLY acct\n    ADD CONSTRAINT acct_pkey PRIMARY KEY (id);\n";
        let f = floors(&acct(dump));
        let b = f.iter().find(|f| f.column == "balance").expect("a floor");
        assert_eq!(b.value, "5");
        assert_eq!(b.source, FloorSource::Check("acct_balance_check".into()));
        let catalogs = "alter table acct add constraint c CHECK ((balance > 2));\n";
        let f = floors(&acct(catalogs));
        let b = f.iter().find(|f| f.column == "balance").expect("a floor");
        assert_eq!((b.strict, b.value.as_str()), (true, "2"));
    }

    #[test]
    fn checks_are_read_from_every_form_pg_dump_writes() {
        let dump = "ALTER TABLE ONLY \"Wé\"\n    ADD CONSTRAINT c CHECK ((x > 1)) NOT VALID;\nCREATE TABLE t (\n    a int\n);\nALTER TABLE ONLY t\n    ADD CONSTRAINT t_pkey PRIMARY KEY (a);\n";
        assert_eq!(
            check_constraints(dump),
            vec![(
                "\"Wé\"".to_string(),
                "c".to_string(),
                "CHECK ((x > 1))".to_string()
            )]
        );
    }
}
