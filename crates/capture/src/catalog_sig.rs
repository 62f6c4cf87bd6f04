//! The types a captured function's signature names (its arguments, `OUT` columns and
//! result): a function cannot be created before them, and `pg_get_functiondef` writes
//! only the function. Read as [`crate::catalog_types`] reads the columns' types (by OID,
//! catalog functions only), recorded in `model.types` after what each is built on; a
//! function whose signature names a table's row type (`RETURNS jobs`) is moved after the
//! tables (`model.late_functions`), and one whose types cannot be created on the twin is
//! left out and named.

use std::collections::{BTreeMap, BTreeSet};

use hotbench_wire::Connection;

use crate::catalog::{cell_u32, oid_array, query};
use crate::catalog_types::{read_rows, rowtype_relation, visit_type, TypeRow, FIRST_NORMAL_OID};
use crate::model::Model;
use crate::schema_error::SchemaError;
use crate::sqltext::parse_array;

/// Each function's user-defined signature types (arguments, all arguments with `OUT`
/// ones, result), as an `oid[]` text.
const SIGNATURE_SQL: &str = "select p.oid::int8, (select pg_catalog.array_agg(distinct u.t)::text \
      from pg_catalog.unnest(p.proargtypes::pg_catalog.oid[] \
        || coalesce(p.proallargtypes, '{}'::pg_catalog.oid[]) || p.prorettype) as u(t) \
      where u.t >= 16384) \
    from pg_catalog.pg_proc p where p.oid = any($1::oid[])";

/// Reads the signature types of `functions` (the OIDs [`crate::catalog_types::functions`]
/// wrote into `model.functions`, in its order) and records them; `relations` are the
/// captured relations' OIDs (whose row types the tables create).
pub fn signature_types(
    conn: &mut Connection,
    functions: &[u32],
    relations: &[u32],
    model: &mut Model,
) -> Result<(), SchemaError> {
    if functions.is_empty() {
        return Ok(());
    }
    let arr = oid_array(functions.iter().copied());
    let r = query(
        conn,
        "reading the functions' argument and result types",
        SIGNATURE_SQL,
        &[Some(&arr)],
    )?;
    let mut sig: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
    for row in 0..r.rows.len() {
        let types = r
            .get(row, 1)
            .and_then(parse_array)
            .unwrap_or_default()
            .into_iter()
            .flatten()
            .filter_map(|v| v.parse::<u32>().ok())
            .filter(|o| *o >= FIRST_NORMAL_OID)
            .collect();
        sig.insert(cell_u32(&r, row, 0), types);
    }
    let want: BTreeSet<u32> = sig.values().flatten().copied().collect();
    let mut rows: BTreeMap<u32, TypeRow> = BTreeMap::new();
    if !want.is_empty() {
        read_rows(conn, want, &mut rows)?;
    }
    place_functions(&rows, &sig, functions, relations, model);
    Ok(())
}

/// Records each function's types, and sorts `model.functions` into those written before
/// the tables, those after them (a row type in the signature) and those left out.
fn place_functions(
    rows: &BTreeMap<u32, TypeRow>,
    sig: &BTreeMap<u32, Vec<u32>>,
    functions: &[u32],
    relations: &[u32],
    model: &mut Model,
) {
    let defs = std::mem::take(&mut model.functions);
    let mut seen = BTreeMap::new();
    for (oid, (name, def)) in functions.iter().zip(defs) {
        let types = sig.get(oid).cloned().unwrap_or_default();
        let user = format!("function {name}");
        let mut ok = true;
        let mut late = false;
        for t in &types {
            if let Some(rel) = rowtype_relation(rows, *t, 0) {
                late = true;
                if !relations.contains(&rel) {
                    model.unreproducible.push(format!(
                        "{user}: its signature names the row type of a table not captured; \
                         not reproduced"
                    ));
                    ok = false;
                }
            }
            ok &= visit_type(rows, *t, &user, &mut seen, model, 0);
        }
        if !ok {
            model.unreproducible.push(format!(
                "{user}: a type of its signature cannot be created; left out"
            ));
        } else if late {
            model.late_functions.push((name, def));
        } else {
            model.functions.push((name, def));
        }
    }
}
