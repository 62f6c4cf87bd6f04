//! The key pg_stat_statements counts a statement under, from the key a sampled text gives
//! ([`crate::sql_text::StatementText::key`]): `pg_stat_statements` replaces every constant
//! with `$n`, the boolean and NULL constants too (`VALUES (nextval($1), $2, $3)`,
//! `visible != $2`), while a sampled text keeps `true`, `false` and `null` as words (they
//! are no values to draw). Matching on this key finds a sampled statement's exact calls
//! (SQLAlchemy's `INSERT … VALUES (nextval(…), true, NULL, …)`), and a twin's statement
//! its captured counterpart. `IS NULL` and `IS [NOT] TRUE` are no constants and stay.

/// `key` with `true`, `false` and `null` outside quotes as `?` (not after `is` / `is not`).
pub fn counted_key(key: &str) -> String {
    let chars: Vec<char> = key.chars().collect();
    let mut out = String::with_capacity(key.len());
    let mut quote: Option<char> = None;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if let Some(q) = quote {
            out.push(c);
            if c == q {
                quote = None;
            }
            i += 1;
            continue;
        }
        if c == '\'' || c == '"' {
            quote = Some(c);
            out.push(c);
            i += 1;
            continue;
        }
        if is_word(c) && (i == 0 || !is_word(chars[i - 1])) {
            let end = (i..chars.len())
                .find(|&j| !is_word(chars[j]))
                .unwrap_or(chars.len());
            let word: String = chars[i..end].iter().collect();
            let constant = matches!(word.as_str(), "true" | "false" | "null");
            if constant && !after_is(&out) {
                out.push('?');
            } else {
                out.push_str(&word);
            }
            i = end;
            continue;
        }
        out.push(c);
        i += 1;
    }
    out
}

/// The server's own foreign-key check (`SELECT 1 FROM ONLY parent x WHERE id = $1 FOR KEY
/// SHARE OF x`, run by the RI trigger of an INSERT or UPDATE of the child): counted by
/// pg_stat_statements when it tracks nested statements (`track = all`), but no client
/// sends it, so it is no part of the statement mix a twin reproduces.
pub fn is_foreign_key_check(key: &str) -> bool {
    key.starts_with("select ? from only ") && key.ends_with(" for key share of x")
}

fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '$'
}

/// The text so far ends in `is` or `is not` (a test, not a constant).
fn after_is(out: &str) -> bool {
    let mut words = out.split_whitespace().rev();
    match words.next() {
        Some("is") => true,
        Some("not") => words.next() == Some("is"),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boolean_and_null_constants_count_as_slots() {
        assert_eq!(
            counted_key("insert into m (id, v, t) values (nextval(?), true, null, ?)"),
            "insert into m (id, v, t) values (nextval(?), ?, ?, ?)"
        );
        assert_eq!(
            counted_key("update m set visible=false where m.x is not null and y is true"),
            "update m set visible=? where m.x is not null and y is true"
        );
        assert_eq!(
            counted_key("select 'true', \"null\", true_col, nulls from t"),
            "select 'true', \"null\", true_col, nulls from t"
        );
    }

    #[test]
    fn the_servers_foreign_key_check_is_recognised() {
        let k = "select ? from only \"public\".\"kombu_queue\" x where \"id\" operator(pg_catalog.=) ? for key share of x";
        assert!(is_foreign_key_check(k));
        assert!(!is_foreign_key_check(
            "select ? from only t x where id = ? for update of x"
        ));
    }
}
