//! pgbench's built-in scripts (`-b NAME[@W]`), prefix matching of their names,
//! and the `NAME@WEIGHT` option syntax shared with `-f FILE@WEIGHT`.

use crate::error::ScriptError;
use crate::script::{parse_script, Script};

/// A built-in script.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Builtin {
    /// Short name for `-b` (`tpcb-like`, …).
    pub name: &'static str,
    /// Description, also the script name in reports (`<builtin: TPC-B (sort of)>`).
    pub desc: &'static str,
    /// The script text, exactly as in pgbench.
    pub script: &'static str,
}

/// The opening both TPC-B-like scripts share: the variables, then the account update and
/// read.
macro_rules! tpcb_opening {
    () => {
        "\\set aid random(1, 100000 * :scale)\n\
\\set bid random(1, 1 * :scale)\n\
\\set tid random(1, 10 * :scale)\n\
\\set delta random(-5000, 5000)\n\
BEGIN;\n\
UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;\n\
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;\n"
    };
}

/// The history row and commit that end both TPC-B-like scripts.
macro_rules! tpcb_closing {
    () => {
        "INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);\n\
END;\n"
    };
}

/// pgbench's built-in scripts, in pgbench's order.
pub const BUILTINS: &[Builtin] = &[
    Builtin {
        name: "tpcb-like",
        desc: "<builtin: TPC-B (sort of)>",
        script: concat!(
            tpcb_opening!(),
            "UPDATE pgbench_tellers SET tbalance = tbalance + :delta WHERE tid = :tid;\n\
UPDATE pgbench_branches SET bbalance = bbalance + :delta WHERE bid = :bid;\n",
            tpcb_closing!()
        ),
    },
    Builtin {
        name: "simple-update",
        desc: "<builtin: simple update>",
        script: concat!(tpcb_opening!(), tpcb_closing!()),
    },
    Builtin {
        name: "select-only",
        desc: "<builtin: select only>",
        script: "\\set aid random(1, 100000 * :scale)\n\
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;\n",
    },
];

/// Errors of `-b` / `@weight` options, with pgbench's messages.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum OptionError {
    /// No builtin name starts with the given prefix.
    #[error("no builtin script found for name \"{0}\"\n{list}", list = list_builtins())]
    NoBuiltin(String),
    /// Several builtin names start with the prefix.
    #[error("ambiguous builtin name: {count} builtin scripts found for prefix \"{name}\"\n{list}", list = list_builtins())]
    Ambiguous {
        /// The prefix given.
        name: String,
        /// How many scripts matched.
        count: usize,
    },
    /// The text after `@` is not a number.
    #[error("invalid weight specification: {0}")]
    InvalidWeight(String),
    /// The weight is outside `0..=i32::MAX`.
    #[error("weight specification out of range (0 .. 2147483647): {0}")]
    WeightOutOfRange(i64),
    /// A builtin script failed to parse (never happens; kept for completeness).
    #[error("{0}")]
    Script(#[from] ScriptError),
}

/// The list pgbench prints for `-b list` and after a bad `-b` name.
pub fn list_builtins() -> String {
    let mut s = String::from("Available builtin scripts:\n");
    for b in BUILTINS {
        s.push_str(&format!("  {:>13}: {}\n", b.name, b.desc));
    }
    s
}

/// Finds a builtin by unambiguous prefix (pgbench `findBuiltin`).
pub fn find_builtin(name: &str) -> Result<&'static Builtin, OptionError> {
    let found: Vec<&Builtin> = BUILTINS
        .iter()
        .filter(|b| b.name.starts_with(name))
        .collect();
    match found.as_slice() {
        [one] => Ok(one),
        [] => Err(OptionError::NoBuiltin(name.to_string())),
        many => Err(OptionError::Ambiguous {
            name: name.to_string(),
            count: many.len(),
        }),
    }
}

/// Finds and parses a builtin (named by its description, like pgbench).
pub fn builtin(name: &str) -> Result<Script, OptionError> {
    let b = find_builtin(name)?;
    Ok(parse_builtin(b)?)
}

/// Parses a builtin's text.
pub fn parse_builtin(b: &Builtin) -> Result<Script, ScriptError> {
    parse_script(b.desc, b.script)
}

/// Splits `NAME@W` (pgbench `parseScriptWeight`, last `@` wins); weight 1
/// when there is no `@`.
pub fn parse_weight(option: &str) -> Result<(String, i32), OptionError> {
    let Some(at) = option.rfind('@') else {
        return Ok((option.to_string(), 1));
    };
    let name = option[..at].to_string();
    let spec = &option[at + 1..];
    // strtol: leading blanks, sign, digits, nothing after.
    let t = spec.trim_start_matches(|c: char| c.is_ascii_whitespace());
    let (neg, digits) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(OptionError::InvalidWeight(option[at..].to_string()));
    }
    let v: i64 = match digits.parse::<i64>() {
        Ok(v) => {
            if neg {
                -v
            } else {
                v
            }
        }
        Err(_) => return Err(OptionError::InvalidWeight(option[at..].to_string())),
    };
    if !(0..=i64::from(i32::MAX)).contains(&v) {
        return Err(OptionError::WeightOutOfRange(v));
    }
    Ok((name, v as i32))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes() {
        assert_eq!(find_builtin("tpcb").map(|b| b.name), Ok("tpcb-like"));
        assert_eq!(find_builtin("si").map(|b| b.name), Ok("simple-update"));
        assert!(matches!(
            find_builtin("s"),
            Err(OptionError::Ambiguous { count: 2, .. })
        ));
        assert!(matches!(find_builtin("x"), Err(OptionError::NoBuiltin(_))));
        for b in BUILTINS {
            assert!(parse_builtin(b).is_ok());
        }
    }

    #[test]
    fn weights() {
        assert_eq!(parse_weight("a@5"), Ok(("a".to_string(), 5)));
        assert_eq!(parse_weight("a@b@0"), Ok(("a@b".to_string(), 0)));
        assert_eq!(parse_weight("x"), Ok(("x".to_string(), 1)));
        assert!(parse_weight("a@").is_err());
        assert!(parse_weight("a@1x").is_err());
        assert_eq!(parse_weight("a@-1"), Err(OptionError::WeightOutOfRange(-1)));
        assert_eq!(
            parse_weight("a@3000000000"),
            Err(OptionError::WeightOutOfRange(3_000_000_000))
        );
    }
}
