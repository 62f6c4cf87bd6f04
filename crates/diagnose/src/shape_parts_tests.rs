use super::*;

fn at(sql: &str, r: &Range<usize>) -> String {
    sql[r.clone()].to_string()
}

#[test]
fn a_claim_its_select_limit_and_where() {
    let sql = "select take_jobs(array(select id from job_queue where s = :st order by id limit 1 for update))";
    let c = &lock_clauses(sql)[0];
    assert!(c.nested && !c.skip_locked && !c.share);
    assert_eq!(at(sql, &c.clause), "for update");
    assert_eq!(
        at(sql, &c.select),
        "select id from job_queue where s = :st order by id limit 1 for update"
    );
    assert_eq!(at(sql, c.limit_value.as_ref().unwrap()), "1");
    assert_eq!(at(sql, c.where_clause.as_ref().unwrap()), "s = :st");
    assert_eq!(&sql[..c.strength_end], "select take_jobs(array(select id from job_queue where s = :st order by id limit 1 for update");

    let sql = "SELECT id FROM \"Jobs\" j WHERE j.state = 'new' ORDER BY id LIMIT :n FOR NO KEY UPDATE OF j SKIP LOCKED";
    let c = &lock_clauses(sql)[0];
    assert!(!c.nested && c.skip_locked);
    assert_eq!(at(sql, &c.clause), "FOR NO KEY UPDATE OF j SKIP LOCKED");
    assert_eq!(&sql[c.strength_end..], " SKIP LOCKED");
    assert_eq!(at(sql, c.limit_value.as_ref().unwrap()), ":n");
    assert_eq!(at(sql, &c.select), sql);

    let sql = "select remaining from daily_limit where customer_id = $1 and day = current_date for share nowait";
    let c = &lock_clauses(sql)[0];
    assert!(c.share && c.nowait && c.limit_value.is_none());
    assert_eq!(
        at(sql, c.where_clause.as_ref().unwrap()),
        "customer_id = $1 and day = current_date"
    );
    assert!(lock_clauses("select 'for update' from t").is_empty());
}

#[test]
fn an_update_its_assignments_deltas_and_where() {
    let sql = "UPDATE \"site_page\" SET \"views\" = (\"site_page\".\"views\" + $1), x = 2 WHERE \"site_page\".\"id\" = $2 RETURNING 1";
    let u = update_parts(sql).unwrap();
    assert_eq!(u.relation, "site_page");
    assert_eq!(at(sql, &u.relation_span), "\"site_page\"");
    assert!(u.alias.is_none());
    assert_eq!(u.assignments.len(), 2);
    let a = &u.assignments[0];
    assert_eq!(a.column, "views");
    assert_eq!(
        a.delta.as_ref().map(|(neg, r)| (*neg, at(sql, r))),
        Some((false, "$1".to_string()))
    );
    assert!(u.assignments[1].delta.is_none());
    assert_eq!(at(sql, &u.assignments[1].rhs), "2");
    assert_eq!(
        at(sql, u.where_clause.as_ref().unwrap()),
        "\"site_page\".\"id\" = $2"
    );
    assert_eq!(&sql[..u.end], "UPDATE \"site_page\" SET \"views\" = (\"site_page\".\"views\" + $1), x = 2 WHERE \"site_page\".\"id\" = $2");

    let sql = "update post p1_0 set view_count=(p1_0.view_count-:d) where p1_0.id=:k";
    let u = update_parts(sql).unwrap();
    assert_eq!(at(sql, u.alias.as_ref().unwrap()), "p1_0");
    assert_eq!(
        u.assignments[0]
            .delta
            .as_ref()
            .map(|(n, r)| (*n, at(sql, r))),
        Some((true, ":d".to_string()))
    );
    let sql = "update t set n = :d + n where id = 1";
    let u = update_parts(sql).unwrap();
    assert_eq!(
        u.assignments[0]
            .delta
            .as_ref()
            .map(|(n, r)| (*n, at(sql, r))),
        Some((false, ":d".to_string()))
    );
    let sql = "update t set n = coalesce(n, 0) - (:a * 2) where id = 1";
    let u = update_parts(sql).unwrap();
    assert_eq!(
        u.assignments[0]
            .delta
            .as_ref()
            .map(|(n, r)| (*n, at(sql, r))),
        Some((true, "(:a * 2)".to_string()))
    );
    assert!(update_parts("select 1 for update").is_none());
    assert!(
        update_parts("insert into t values (1) on conflict (id) do update set n = t.n + 1")
            .is_none()
    );
}

#[test]
fn equality_conjunctions() {
    let sql = "where customer_id = :customer and day = current_date";
    let e = equalities(sql, 6..sql.len()).unwrap();
    let got: Vec<(String, String)> = e.iter().map(|(c, r)| (c.clone(), at(sql, r))).collect();
    assert_eq!(
        got,
        [
            ("customer_id".into(), ":customer".into()),
            ("day".into(), "current_date".into())
        ]
    );
    let sql = "$1 = \"T\".\"Id\"";
    let e = equalities(sql, 0..sql.len()).unwrap();
    assert_eq!(e[0].0, "Id");
    assert!(equalities("a > 1", 0..5).is_none());
    assert!(equalities("a = 1 or b = 2", 0..14).is_none());
}
