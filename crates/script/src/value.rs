//! Values computed by expressions, and the exact text pgbench renders for them.
//!
//! pgbench prints doubles with C's `%.15g` (`DBL_DIG` digits) both in `debug()`
//! and when a double variable is substituted into SQL; this module reproduces
//! that format (and `%f`, used in some error messages) without libc.

use std::fmt::Write as _;

/// A value computed by an expression or stored by `\set`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value {
    /// SQL-like NULL.
    Null,
    /// `true` / `false`.
    Bool(bool),
    /// 64-bit integer; arithmetic overflow is an error, as in pgbench.
    Int(i64),
    /// IEEE double.
    Double(f64),
}

impl Value {
    /// pgbench's name of the type, used in error messages ("cannot coerce boolean to int").
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "boolean",
            Value::Int(_) => "int",
            Value::Double(_) => "double",
        }
    }

    /// Truth value for `\if`/`\elif` and `CASE WHEN`: NULL and zero are false.
    pub fn truth(&self) -> bool {
        match *self {
            Value::Null => false,
            Value::Bool(b) => b,
            Value::Int(i) => i != 0,
            Value::Double(d) => d != 0.0,
        }
    }

    /// Appends the text pgbench substitutes for this value (`getVariable`):
    /// `NULL`, `true`/`false`, decimal integers, doubles as `%.15g`.
    pub fn write_text(&self, out: &mut String) {
        match *self {
            Value::Null => out.push_str("NULL"),
            Value::Bool(b) => out.push_str(if b { "true" } else { "false" }),
            Value::Int(i) => out.push_str(itoa::Buffer::new().format(i)),
            Value::Double(d) => format_g15(d, out),
        }
    }

    /// The text after `debug(script=S,command=C): ` in pgbench's `debug()` output,
    /// e.g. `int 5`, `double 4.5`, `boolean true`, `null`.
    pub fn debug_text(&self) -> String {
        let mut s = String::new();
        match *self {
            Value::Null => s.push_str("null"),
            Value::Bool(b) => s.push_str(if b { "boolean true" } else { "boolean false" }),
            Value::Int(i) => {
                let _ = write!(s, "int {i}");
            }
            Value::Double(d) => {
                s.push_str("double ");
                format_g15(d, &mut s);
            }
        }
        s
    }
}

/// Appends `x` formatted like C's `printf("%.15g", x)` with PostgreSQL's `snprintf` spelling of
/// non-finite values (`Infinity`, `-Infinity`, `NaN`).
pub fn format_g15(x: f64, out: &mut String) {
    format_g(x, 15, out)
}

/// Appends `x` formatted like C's `printf("%.<p>g", x)`.
pub fn format_g(x: f64, p: usize, out: &mut String) {
    let p = p.max(1);
    if x.is_nan() {
        out.push_str("NaN");
        return;
    }
    if x.is_infinite() {
        out.push_str(if x < 0.0 { "-Infinity" } else { "Infinity" });
        return;
    }
    if x == 0.0 {
        out.push_str(if x.is_sign_negative() { "-0" } else { "0" });
        return;
    }
    let e = format!("{:.*e}", p - 1, x);
    let (mant, exp) = match e.split_once('e') {
        Some(parts) => parts,
        None => {
            out.push_str(&e);
            return;
        }
    };
    let exp: i32 = exp.parse().unwrap_or(0);
    if exp < -4 || exp >= p as i32 {
        out.push_str(strip_zeros(mant));
        out.push('e');
        out.push(if exp < 0 { '-' } else { '+' });
        let _ = write!(out, "{:02}", exp.unsigned_abs());
    } else {
        let decimals = (p as i32 - 1 - exp).max(0) as usize;
        let f = format!("{:.*}", decimals, x);
        out.push_str(strip_zeros(&f));
    }
}

fn strip_zeros(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

/// `x` formatted like C's `printf("%f", x)`.
pub fn format_f6(x: f64) -> String {
    if x.is_nan() {
        return "NaN".to_string();
    }
    if x.is_infinite() {
        return if x < 0.0 { "-Infinity" } else { "Infinity" }.to_string();
    }
    format!("{x:.6}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(x: f64) -> String {
        let mut s = String::new();
        format_g15(x, &mut s);
        s
    }

    #[test]
    fn g15_matches_printf() {
        assert_eq!(g(4.5), "4.5");
        assert_eq!(g(1.0), "1");
        assert_eq!(g(0.1), "0.1");
        assert_eq!(g(1e15), "1e+15");
        assert_eq!(g(123456789012345.0), "123456789012345");
        assert_eq!(g(1e-5), "1e-05");
        assert_eq!(g(0.0001), "0.0001");
        assert_eq!(g(std::f64::consts::PI), "3.14159265358979");
        assert_eq!(g(-2.5e100), "-2.5e+100");
        assert_eq!(g(1000000000000005.0), "1e+15");
        assert_eq!(g(f64::INFINITY), "Infinity");
        assert_eq!(g(-0.0), "-0");
    }

    #[test]
    fn f6_matches_printf() {
        assert_eq!(format_f6(1e19), "10000000000000000000.000000");
        assert_eq!(format_f6(-0.5), "-0.500000");
    }
}
