//! The sequences a workload's statements name by hand (`nextval('message_id_sequence')`, as
//! SQLAlchemy's `Sequence` columns insert: no column default draws from them, so the
//! tables' catalogs never lead to them): looked up by name along `search_path` as
//! [`crate::catalog::resolve`] looks tables up (relkind `S`, through the catalogs' indexes),
//! with the captured column each one feeds. [`sequence_name`] reads the `regclass` text a
//! statement passes (`'s'`, `'sch.s'`, `'"My Seq"'`).

use hotbench_wire::Connection;

use crate::catalog::{lookup, TableName};
use crate::model::{Model, Relation};
use crate::schema_error::SchemaError;
use crate::schema_options::NamedSequence;

/// A named sequence's OID, with the (relation, column number) it feeds.
pub type Named = (u32, Option<(u32, i16)>);

/// The OIDs of the `named` sequences found (an unqualified one along `search_path`, first
/// match), each with the (relation, column number) it feeds among `rels`; one not found is
/// a note.
pub fn resolve(
    conn: &mut Connection,
    named: &[NamedSequence],
    search_path: &[String],
    rels: &[Relation],
    model: &mut Model,
) -> Result<Vec<Named>, SchemaError> {
    if named.is_empty() {
        return Ok(Vec::new());
    }
    let names: Vec<&TableName> = named.iter().map(|n| &n.name).collect();
    let found = lookup(
        conn,
        &names,
        search_path,
        &["S"],
        "looking up the sequences the statements name",
    )?;
    let mut out: Vec<Named> = Vec::new();
    for (k, n) in named.iter().enumerate() {
        let Some(&oid) = found.get(&k) else {
            model.unreproducible.push(format!(
                "sequence {}: named by a statement but not found; not created",
                n.name.display()
            ));
            continue;
        };
        let feeds = n.feeds.as_ref().and_then(|(t, c)| feeds(rels, t, c));
        match out.iter_mut().find(|o| o.0 == oid) {
            Some(o) => o.1 = o.1.or(feeds),
            None => out.push((oid, feeds)),
        }
    }
    Ok(out)
}

/// The (relation, column number) of `table.column` among `rels`.
fn feeds(rels: &[Relation], table: &TableName, column: &str) -> Option<(u32, i16)> {
    let rel = rels
        .iter()
        .find(|r| r.name == table.name && table.schema.as_ref().is_none_or(|s| *s == r.schema))?;
    let col = rel.columns.iter().find(|c| c.name == column)?;
    Some((rel.oid, col.num))
}

/// The sequences the statements of `shapes` pass by name to `nextval`, `currval` or
/// `setval` (a string value right after the call's parenthesis), each with the table and
/// column its value is inserted into when the statement shows them.
pub fn named_sequences(shapes: &[crate::shapes::ShapeModel]) -> Vec<NamedSequence> {
    let mut out: Vec<NamedSequence> = Vec::new();
    for st in shapes.iter().flat_map(|s| &s.statements) {
        let t = &st.text;
        for (i, v) in t.values.iter().enumerate() {
            let before = t.pieces.get(i).map_or("", |p| p.trim_end()).to_lowercase();
            let call = ["nextval(", "currval(", "setval("]
                .iter()
                .any(|f| before.ends_with(f));
            let (true, crate::sql_text::Value::Text(text)) = (call, v) else {
                continue;
            };
            let Some(name) = sequence_name(text) else {
                continue;
            };
            let table = hotbench_diagnose::shape::touches(&st.key)
                .first()
                .map(|r| r.relation.clone());
            let column = t
                .columns
                .get(i)
                .cloned()
                .flatten()
                .or_else(|| insert_column(&t.pieces, i));
            let feeds = table
                .zip(column)
                .map(|(r, c)| (TableName::new(None, &r), c));
            match out.iter_mut().find(|o| o.name == name) {
                Some(o) => o.feeds = o.feeds.take().or(feeds),
                None => out.push(NamedSequence { name, feeds }),
            }
        }
    }
    out
}

/// The column of `INSERT INTO t (a, b, …) VALUES (x, y, …)` that slot `slot`'s value
/// expression goes into (`nextval(?)` sits inside a call, where the statement's own
/// column tracking does not look): the top-level commas before it in the VALUES list.
fn insert_column(pieces: &[String], slot: usize) -> Option<String> {
    let before: String = pieces
        .iter()
        .take(slot + 1)
        .cloned()
        .collect::<Vec<_>>()
        .join("?");
    let lower = before.to_ascii_lowercase();
    if !lower.trim_start().starts_with("insert into") {
        return None;
    }
    let values = lower.find(") values (")?;
    let list = &before[before[..values].find('(')? + 1..values];
    let mut depth = 0i32;
    let mut commas = 0usize;
    for c in before[values + ") values (".len()..].chars() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => commas += 1,
            _ => {}
        }
        if depth < 0 {
            return None;
        }
    }
    let col = list.split(',').nth(commas)?.trim();
    let col = match col.strip_prefix('"').and_then(|c| c.strip_suffix('"')) {
        Some(q) => q.replace("\"\"", "\""),
        None => col.to_lowercase(),
    };
    (!col.is_empty()).then_some(col)
}

/// The sequence a `regclass` text names, as the server reads it: dot-separated parts, each
/// a double-quoted name (`""` a quote) or a bare one folded to lower case; `None` when it
/// is not one or two names.
pub fn sequence_name(text: &str) -> Option<TableName> {
    let mut parts: Vec<String> = Vec::new();
    let mut chars = text.trim().chars().peekable();
    loop {
        let mut part = String::new();
        if chars.peek() == Some(&'"') {
            chars.next();
            loop {
                match chars.next()? {
                    '"' if chars.peek() == Some(&'"') => {
                        chars.next();
                        part.push('"');
                    }
                    '"' => break,
                    c => part.push(c),
                }
            }
        } else {
            while let Some(&c) = chars.peek() {
                if c == '.' {
                    break;
                }
                part.extend(c.to_lowercase());
                chars.next();
            }
            part = part.trim().to_string();
        }
        if part.is_empty() {
            return None;
        }
        parts.push(part);
        match chars.next() {
            None => break,
            Some('.') => continue,
            Some(_) => return None,
        }
    }
    match parts.as_slice() {
        [n] => Some(TableName::new(None, n)),
        [s, n] => Some(TableName::new(Some(s), n)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_column_an_insert_gives_a_sequence_value_to() {
        let p = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let pieces = p(&[
            "INSERT INTO kombu_message (\"ID x\", visible, payload) VALUES (nextval(",
            "), true, ",
            ")",
        ]);
        assert_eq!(insert_column(&pieces, 0).as_deref(), Some("ID x"));
        assert_eq!(insert_column(&pieces, 1).as_deref(), Some("payload"));
        let pieces = p(&["insert into t (a, b) values (f(1, 2), nextval(", "))"]);
        assert_eq!(insert_column(&pieces, 0).as_deref(), Some("b"));
        assert_eq!(insert_column(&p(&["select nextval(", ")"]), 0), None);
    }

    #[test]
    fn regclass_texts_read_as_the_server_reads_them() {
        let n = |t: &str| sequence_name(t).map(|n| (n.schema, n.name));
        assert_eq!(
            n("message_id_sequence"),
            Some((None, "message_id_sequence".into()))
        );
        assert_eq!(n("Public.Seq"), Some((Some("public".into()), "seq".into())));
        assert_eq!(
            n(r#""My ""S"".q"."x.y""#),
            Some((Some(r#"My "S".q"#.into()), "x.y".into()))
        );
        assert_eq!(n("a.b.c"), None);
        assert_eq!(n(r#""open"#), None);
        assert_eq!(n(""), None);
        assert_eq!(n(r#""a"x"#), None);
    }
}
