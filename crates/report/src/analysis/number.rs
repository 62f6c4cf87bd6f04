//! Numbers as hotbench's tables print them, in the terminal and in HTML alike.

/// A number formatted for tables: 3 significant-ish digits, thousands unseparated; from
/// 1e15 on in scientific notation (`1.000e308`, not 309 digits of a hostile file's value).
pub fn num(v: f64) -> String {
    if !v.is_finite() {
        return "–".into();
    }
    let a = v.abs();
    if a >= 1e15 {
        format!("{v:.3e}")
    } else if a >= 1000.0 || v == v.trunc() && a < 1e15 {
        format!("{v:.0}")
    } else if a >= 100.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn huge_numbers_are_short() {
        assert_eq!(num(1e308), "1.000e308");
        assert_eq!(num(-1.7e308), "-1.700e308");
        assert_eq!(num(999_999_999_999_999.0), "999999999999999");
        assert!(num(f64::MAX).len() < 12);
    }

    #[test]
    fn numbers() {
        assert_eq!(num(1234.56), "1235");
        assert_eq!(num(12.345), "12.35");
        assert_eq!(num(0.1234), "0.123");
        assert_eq!(num(3.0), "3");
        assert_eq!(num(f64::NAN), "–");
    }
}
