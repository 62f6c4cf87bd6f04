//! Per-client variables with pgbench's typing rules.
//!
//! A variable holds either a string (from `-D`, `\gset`, `\aset`) or a typed
//! [`Value`] (from `\set`, automatic variables). Strings are converted on use
//! in expressions exactly like pgbench's `makeVariableValue` (`null`, boolean
//! prefixes, integers, doubles); typed values are rendered to text like
//! `getVariable` when substituted into SQL.

use crate::value::Value;
use std::collections::HashMap;

/// One variable's content.
#[derive(Clone, Debug, PartialEq)]
pub enum VarValue {
    /// Text as received (SQL results, `-D`).
    Text(Box<str>),
    /// A typed value.
    Value(Value),
}

/// A variable name pgbench refuses (`<context>: invalid variable name: "<name>"`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{context}: invalid variable name: \"{name}\"")]
pub struct InvalidVariableName {
    /// Where the assignment came from (`set`, `gset`, `option`, `setshell`, …).
    pub context: String,
    /// The refused name.
    pub name: String,
}

/// The variables of one client. Names come from the user's own scripts, so a fast
/// non-cryptographic hash is enough (lookups are on every transaction's path).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Variables {
    map: HashMap<Box<str>, VarValue, foldhash::fast::RandomState>,
}

/// pgbench `valid_variable_name`: non-empty, ASCII letters, `_`, any non-ASCII
/// byte, and digits except in first position.
pub fn valid_variable_name(name: &str) -> bool {
    let b = name.as_bytes();
    match b.first() {
        None => false,
        Some(&c) if c.is_ascii_digit() => false,
        Some(_) => b
            .iter()
            .all(|&c| c >= 0x80 || c.is_ascii_alphanumeric() || c == b'_'),
    }
}

impl Variables {
    /// No variables.
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of variables.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// True when there are no variables.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Whether `name` is defined.
    pub fn contains(&self, name: &str) -> bool {
        self.map.contains_key(name)
    }

    /// Raw content of a variable.
    pub fn get(&self, name: &str) -> Option<&VarValue> {
        self.map.get(name)
    }

    /// Iterates over all variables (unordered).
    pub fn iter(&self) -> impl Iterator<Item = (&str, &VarValue)> {
        self.map.iter().map(|(k, v)| (&**k, v))
    }

    fn check(&self, context: &str, name: &str) -> Result<(), InvalidVariableName> {
        if self.map.contains_key(name) || valid_variable_name(name) {
            Ok(())
        } else {
            Err(InvalidVariableName {
                context: context.to_string(),
                name: name.to_string(),
            })
        }
    }

    /// pgbench `putVariable`: stores text (creating the variable if its name is valid).
    pub fn set_text(
        &mut self,
        context: &str,
        name: &str,
        value: &str,
    ) -> Result<(), InvalidVariableName> {
        self.check(context, name)?;
        match self.map.get_mut(name) {
            Some(v) => *v = VarValue::Text(value.into()),
            None => {
                self.map.insert(name.into(), VarValue::Text(value.into()));
            }
        }
        Ok(())
    }

    /// pgbench `putVariableValue`: stores a typed value.
    pub fn set_value(
        &mut self,
        context: &str,
        name: &str,
        value: Value,
    ) -> Result<(), InvalidVariableName> {
        self.check(context, name)?;
        match self.map.get_mut(name) {
            Some(v) => *v = VarValue::Value(value),
            None => {
                self.map.insert(name.into(), VarValue::Value(value));
            }
        }
        Ok(())
    }

    /// Appends the text form of `name` (pgbench `getVariable`); false if undefined.
    pub fn write_text(&self, name: &str, out: &mut String) -> bool {
        match self.map.get(name) {
            None => false,
            Some(VarValue::Text(t)) => {
                out.push_str(t);
                true
            }
            Some(VarValue::Value(v)) => {
                v.write_text(out);
                true
            }
        }
    }

    /// The text form of `name`, if defined.
    pub fn text(&self, name: &str) -> Option<String> {
        let mut s = String::new();
        self.write_text(name, &mut s).then_some(s)
    }

    /// The typed value of `name` for an expression (pgbench `makeVariableValue`).
    pub fn value(&self, name: &str) -> Result<Value, String> {
        match self.map.get(name) {
            None => Err(format!("undefined variable \"{name}\"")),
            Some(VarValue::Value(v)) => Ok(*v),
            Some(VarValue::Text(t)) => parse_text_value(name, t),
        }
    }
}

/// Converts variable text to a value like pgbench's `makeVariableValue`.
pub fn parse_text_value(name: &str, s: &str) -> Result<Value, String> {
    let slen = s.len();
    if slen == 0 {
        return Err(format!("malformed variable \"{name}\" value: \"\""));
    }
    let lower = s.to_ascii_lowercase();
    let prefix_of = |word: &str| slen <= word.len() && word.starts_with(lower.as_str());
    if lower == "null" {
        return Ok(Value::Null);
    }
    if prefix_of("true") || prefix_of("yes") || lower == "on" {
        return Ok(Value::Bool(true));
    }
    if prefix_of("false") || prefix_of("no") || lower == "off" || lower == "of" {
        return Ok(Value::Bool(false));
    }
    if is_an_int(s) {
        return strtoint64(s).map(Value::Int);
    }
    match strtodouble(s) {
        Some(d) => Ok(Value::Double(d)),
        None => Err(format!("malformed variable \"{name}\" value: \"{s}\"")),
    }
}

fn c_isspace(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
}

/// pgbench `is_an_int`: `^\s*[-+]?[0-9]*$` (sic: no digit required).
fn is_an_int(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() && c_isspace(b[i]) {
        i += 1;
    }
    if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
        i += 1;
    }
    b[i..].iter().all(u8::is_ascii_digit)
}

/// pgbench `strtoint64` with its error messages.
pub(crate) fn strtoint64(s: &str) -> Result<i64, String> {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() && c_isspace(b[i]) {
        i += 1;
    }
    let mut neg = false;
    if i < b.len() && (b[i] == b'-' || b[i] == b'+') {
        neg = b[i] == b'-';
        i += 1;
    }
    if i >= b.len() || !b[i].is_ascii_digit() {
        return Err(format!("invalid input syntax for type bigint: \"{s}\""));
    }
    let mut acc: i64 = 0;
    while i < b.len() && b[i].is_ascii_digit() {
        let d = i64::from(b[i] - b'0');
        acc = match acc.checked_mul(10).and_then(|v| v.checked_sub(d)) {
            Some(v) => v,
            None => return Err(format!("value \"{s}\" is out of range for type bigint")),
        };
        i += 1;
    }
    while i < b.len() && c_isspace(b[i]) {
        i += 1;
    }
    if i < b.len() {
        return Err(format!("invalid input syntax for type bigint: \"{s}\""));
    }
    if neg {
        Ok(acc)
    } else {
        acc.checked_neg()
            .ok_or_else(|| format!("value \"{s}\" is out of range for type bigint"))
    }
}

/// C `strtod` with pgbench's checks: whole string consumed, no range error.
pub(crate) fn strtodouble(s: &str) -> Option<f64> {
    let t = s.trim_start_matches(|c: char| c.is_ascii() && c_isspace(c as u8));
    let lower = t.to_ascii_lowercase();
    let body = lower.trim_start_matches(['+', '-']);
    if body.starts_with("0x") {
        return parse_hex_float(&lower);
    }
    if matches!(body, "inf" | "infinity" | "nan") {
        return lower.parse::<f64>().ok();
    }
    if body.is_empty()
        || !body
            .bytes()
            .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'+' | b'-'))
    {
        return None;
    }
    let v = lower.parse::<f64>().ok()?;
    if v.is_infinite() {
        return None;
    }
    if (v == 0.0
        && lower
            .split('e')
            .next()
            .unwrap_or("")
            .bytes()
            .any(|b| (b'1'..=b'9').contains(&b)))
        || (v != 0.0 && v.abs() < f64::MIN_POSITIVE)
    {
        return None;
    }
    Some(v)
}

fn parse_hex_float(s: &str) -> Option<f64> {
    let (neg, rest) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let rest = rest.strip_prefix("0x")?;
    let (mant, exp) = match rest.split_once('p') {
        Some((m, e)) => (m, e.parse::<i32>().ok()?),
        None => (rest, 0),
    };
    let (int, frac) = mant.split_once('.').unwrap_or((mant, ""));
    if int.is_empty() && frac.is_empty() {
        return None;
    }
    let mut v = 0f64;
    for c in int.chars() {
        v = v * 16.0 + f64::from(c.to_digit(16)?);
    }
    let mut scale = 1.0 / 16.0;
    for c in frac.chars() {
        v += f64::from(c.to_digit(16)?) * scale;
        scale /= 16.0;
    }
    let v = v * 2f64.powi(exp);
    if !v.is_finite() {
        return None;
    }
    Some(if neg { -v } else { v })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_conversions() {
        assert_eq!(parse_text_value("x", "5"), Ok(Value::Int(5)));
        assert_eq!(parse_text_value("x", " -5"), Ok(Value::Int(-5)));
        assert!(parse_text_value("x", " -5 ").is_err());
        assert_eq!(parse_text_value("x", "1.5"), Ok(Value::Double(1.5)));
        assert_eq!(parse_text_value("x", "NULL"), Ok(Value::Null));
        assert_eq!(parse_text_value("x", "ye"), Ok(Value::Bool(true)));
        assert_eq!(parse_text_value("x", "of"), Ok(Value::Bool(false)));
        assert_eq!(parse_text_value("x", "n"), Ok(Value::Bool(false)));
        assert!(parse_text_value("x", "o").is_err());
        assert!(parse_text_value("x", "-").is_err());
        assert!(parse_text_value("x", "99999999999999999999").is_err());
    }

    #[test]
    fn names() {
        assert!(valid_variable_name("a1"));
        assert!(valid_variable_name("_"));
        assert!(valid_variable_name("été"));
        assert!(!valid_variable_name("1a"));
        assert!(!valid_variable_name(""));
        assert!(!valid_variable_name("a-b"));
    }
}
