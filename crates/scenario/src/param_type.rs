//! Parameter types: every scenario parameter has one (declared with `type = …` in the
//! manifest, or implied by its default), every value — default, mode preset, variant value or
//! `--param` — is checked against it, and `{{name}}` expands to text that is safe where it
//! lands: numbers and identifiers as validated tokens, an enum as its manifest-written
//! expansion, free text as a quoted SQL literal. A `--param` value can therefore never
//! close a statement and start another.

pub use crate::manifest::ParamType;
use crate::manifest::{ParamDef, Scalar};

impl ParamType {
    /// The declared type, or the one the default implies (integer, number; enum when the
    /// parameter lists `values`; text otherwise).
    pub fn of(def: &ParamDef) -> ParamType {
        if let Some(t) = def.kind {
            return t;
        }
        if def.values.is_some() {
            return ParamType::Enum;
        }
        match def.default {
            Scalar::Int(_) => ParamType::Integer,
            Scalar::Float(_) => ParamType::Number,
            Scalar::Text(_) | Scalar::Bool(_) => ParamType::Text,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            ParamType::Integer => "integer",
            ParamType::Number => "number",
            ParamType::Duration => "duration",
            ParamType::Enum => "enum",
            ParamType::Identifier => "identifier",
            ParamType::Text => "text",
        }
    }
}

/// What a parameter accepts: its type and, for numbers, optional bounds.
#[derive(Debug, Clone, PartialEq)]
pub struct Rule {
    pub kind: ParamType,
    pub min: Option<f64>,
    pub max: Option<f64>,
}

impl Rule {
    pub fn of(def: &ParamDef) -> Rule {
        Rule {
            kind: ParamType::of(def),
            min: def.min,
            max: def.max,
        }
    }

    /// `clients` and `duration`: whole numbers from 1 to 2147483647.
    pub fn positive_int() -> Rule {
        Rule {
            kind: ParamType::Integer,
            min: Some(1.0),
            max: Some(i32::MAX as f64),
        }
    }

    /// Checks `value`; returns it in canonical form (integers without sign or zeros
    /// padding, trimmed numbers), or what was expected. Enum membership is checked by the
    /// caller, which knows the `values`.
    pub fn check(&self, value: &str) -> Result<String, String> {
        let v = value.trim();
        let bounded = |x: f64| -> Result<(), String> {
            if self.min.is_some_and(|m| x < m) || self.max.is_some_and(|m| x > m) {
                return Err(match (self.min, self.max) {
                    (Some(lo), Some(hi)) => format!("expected {lo} to {hi}"),
                    (Some(lo), None) => format!("expected at least {lo}"),
                    (None, Some(hi)) => format!("expected at most {hi}"),
                    (None, None) => unreachable!("a bound failed"),
                });
            }
            Ok(())
        };
        match self.kind {
            ParamType::Integer => {
                let n: i64 = v.parse().map_err(|_| "expected an integer".to_string())?;
                bounded(n as f64)?;
                Ok(n.to_string())
            }
            ParamType::Number => {
                let x: f64 = v
                    .parse()
                    .ok()
                    .filter(|x: &f64| x.is_finite())
                    .ok_or_else(|| "expected a number".to_string())?;
                bounded(x)?;
                Ok(v.to_string())
            }
            ParamType::Duration => {
                let us = hotbench_engine::duration::parse_duration_us(
                    v,
                    hotbench_engine::duration::Unit::Millis,
                )
                .map_err(|_| "expected a duration such as 10ms or 2s".to_string())?;
                let ms = us as f64 / 1000.0;
                bounded(ms)?;
                Ok(format!("{ms}"))
            }
            ParamType::Enum => Ok(v.to_string()),
            ParamType::Identifier => {
                let ok = !v.is_empty()
                    && v.len() <= 63
                    && v.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
                    && v.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
                if ok {
                    Ok(v.to_string())
                } else {
                    Err("expected an identifier (a letter or _, then letters, digits or _; at most 63)".into())
                }
            }
            ParamType::Text => {
                if value.contains('\0') {
                    Err("text may not contain a NUL character".into())
                } else {
                    Ok(value.to_string())
                }
            }
        }
    }
}

/// `s` as an SQL string literal that means `s` whatever `standard_conforming_strings` is:
/// quotes doubled, and an `E'…'` literal with doubled backslashes when there are any.
pub fn sql_literal(s: &str) -> String {
    let quoted = s.replace('\'', "''");
    if s.contains('\\') {
        format!("E'{}'", quoted.replace('\\', "\\\\"))
    } else {
        format!("'{quoted}'")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(kind: ParamType) -> Rule {
        Rule {
            kind,
            min: None,
            max: None,
        }
    }

    #[test]
    fn sql_pasted_into_a_typed_value_is_refused() {
        let attack = "4) as c; drop table public.canary; select (1";
        for kind in [
            ParamType::Integer,
            ParamType::Number,
            ParamType::Duration,
            ParamType::Identifier,
        ] {
            assert!(rule(kind).check(attack).is_err(), "{kind:?}");
            assert!(rule(kind).check("1; drop table x").is_err(), "{kind:?}");
        }
        assert!(rule(ParamType::Number).check("nan").is_err());
        assert!(rule(ParamType::Number).check("inf").is_err());
        assert!(rule(ParamType::Identifier).check("a b").is_err());
        assert!(rule(ParamType::Identifier).check("x\"y").is_err());
    }

    #[test]
    fn values_are_canonical_and_bounded() {
        assert_eq!(rule(ParamType::Integer).check(" +007 ").unwrap(), "7");
        assert_eq!(rule(ParamType::Number).check("1.5").unwrap(), "1.5");
        assert_eq!(rule(ParamType::Duration).check("2s").unwrap(), "2000");
        assert_eq!(rule(ParamType::Duration).check("10").unwrap(), "10");
        let r = Rule::positive_int();
        assert!(r.check("0").is_err());
        assert!(r.check("2147483648").is_err());
        assert_eq!(r.check("5").unwrap(), "5");
    }

    #[test]
    fn text_becomes_a_literal_that_cannot_be_closed() {
        assert_eq!(sql_literal("it's"), "'it''s'");
        assert_eq!(sql_literal(r"a\'; drop"), r"E'a\\''; drop'");
        assert_eq!(
            sql_literal("x') ; drop table t; --"),
            "'x'') ; drop table t; --'"
        );
        assert!(rule(ParamType::Text).check("a\0b").is_err());
    }
}
