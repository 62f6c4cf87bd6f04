//! The variables a script draws its values into: a column's name when it is a plain one
//! and free, else `pN`.

/// Script variable names: a column's name when it is a plain one and free, else `pN`.
#[derive(Default)]
pub(crate) struct Names {
    used: std::collections::BTreeSet<String>,
    n: usize,
}

impl Names {
    /// A claimed column's variable: its name when plain and free.
    pub(crate) fn claimed(&mut self, column: &str) -> String {
        self.next(Some(column))
    }

    pub(crate) fn next(&mut self, column: Option<&str>) -> String {
        let plain = column.filter(|c| {
            c.len() <= 40
                && c.chars().next().is_some_and(|f| f.is_ascii_lowercase())
                && c.chars()
                    .all(|x| x.is_ascii_lowercase() || x.is_ascii_digit() || x == '_')
                && !matches!(*c, "skew" | "clients" | "duration" | "scale")
        });
        if let Some(c) = plain {
            if self.used.insert(c.to_string()) {
                return c.to_string();
            }
        }
        loop {
            self.n += 1;
            let name = format!("p{}", self.n);
            if self.used.insert(name.clone()) {
                return name;
            }
        }
    }
}
