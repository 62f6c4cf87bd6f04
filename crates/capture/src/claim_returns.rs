//! Which of a claim's result columns holds a column a later statement compares with: the
//! select list of `SELECT … LIMIT n FOR UPDATE` read item by item, so a follow-up's
//! `WHERE id = ?` takes the claimed row's value through the claim's `\gset` under the name
//! the claim returns it as (an ORM's `kombu_message.id AS kombu_message_id`).

/// The name a select-list item returns `column` under: `col`, `t.col` or `t.col AS alias`
/// (an ORM's `kombu_message.id AS kombu_message_id`), matched case-insensitively.
pub fn returned_as(item: &str, column: &str) -> Option<String> {
    let item = item.trim();
    let lower = item.to_ascii_lowercase();
    let (expr, alias) = match lower.find(" as ") {
        Some(at) => (&item[..at], Some(item[at + 4..].trim())),
        None => (item, None),
    };
    let source = expr.rsplit('.').next()?.trim().trim_matches('"');
    source
        .eq_ignore_ascii_case(column)
        .then(|| alias.unwrap_or(source).trim_matches('"').to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_aliased_qualified_column_is_returned_under_its_alias() {
        assert_eq!(
            returned_as(" kombu_message.id as kombu_message_id", "id").as_deref(),
            Some("kombu_message_id")
        );
        assert_eq!(returned_as("\"ID\"", "id").as_deref(), Some("ID"));
        assert_eq!(returned_as("t.id", "id").as_deref(), Some("id"));
        assert_eq!(
            returned_as("t.idx as id", "id"),
            None,
            "the source column counts"
        );
        assert_eq!(returned_as("payload", "id"), None);
    }
}
