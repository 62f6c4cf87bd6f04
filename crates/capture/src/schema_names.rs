//! What the captured statements name, for the schema capture: the tables they touch and the
//! functions they call, each with the schema the statement wrote. A statement run inside a
//! function (which `pg_stat_statements` counts with `track = all`) names its tables
//! qualified, in whatever schema the function lives, often one the search path does not
//! hold: looked up unqualified they were "not found" and the twin got no rows. Names are
//! read by the one SQL lexer (`hotbench_diagnose::shape::name_parts`), so a schema holding
//! quotes, dots, spaces, `;` or non-ASCII letters is read whole. Pure.

use crate::catalog::TableName;

/// What [`named`] found, each once, in the order first named.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Named {
    /// The touched relations' keys (`hotbench_diagnose::shape::relation_key`).
    pub relations: Vec<String>,
    /// The touched tables as the catalogs name them.
    pub tables: Vec<TableName>,
    /// The called functions as the catalogs name them.
    pub functions: Vec<TableName>,
}

/// The tables and functions `statements` name.
pub fn named<'a>(statements: impl IntoIterator<Item = &'a str>) -> Named {
    let mut out = Named::default();
    for q in statements {
        for t in hotbench_diagnose::shape::touches(q) {
            if !out.relations.contains(&t.relation) {
                out.relations.push(t.relation);
            }
            if let Some(n) = TableName::from_written(&t.written) {
                if !out.tables.contains(&n) {
                    out.tables.push(n);
                }
            }
        }
        for f in hotbench_diagnose::shape::calls_written(q) {
            if let Some(n) = TableName::from_written(&f) {
                if !out.functions.contains(&n) {
                    out.functions.push(n);
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: &str = r#"q "x" ü; y"#;

    /// cli/tests/capture_chain.rs's queue: the client calls the functions; only their
    /// bodies' statements (counted by pg_stat_statements) name the table.
    #[test]
    fn a_table_named_only_in_a_function_body_keeps_its_hostile_schema() {
        let n = named([
            r#"select id, status from "q ""x"" ü; y".fetch_job(?)"#,
            r#"update "q ""x"" ü; y".jobs set status = ? where id = (select id from "q ""x"" ü; y".jobs where status = ? order by id limit ? for update skip locked) returning *"#,
            r#"delete from "q ""x"" ü; y".jobs where id = job_id and status = ?"#,
            "select count(*) from Public.Other",
        ]);
        assert_eq!(n.relations, ["jobs", "other"]);
        assert_eq!(
            n.tables,
            [
                TableName::new(Some(S), "jobs"),
                TableName::new(Some("public"), "other")
            ]
        );
        assert_eq!(n.functions, [TableName::new(Some(S), "fetch_job")]);
        let plain = named(["select * from t join \"a.b\".\"c.d\" on true"]);
        assert_eq!(
            plain.tables,
            [
                TableName::new(None, "t"),
                TableName::new(Some("a.b"), "c.d")
            ]
        );
    }
}
