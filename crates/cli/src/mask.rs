//! Never print a password: every argument that libpq would read as a connection string
//! (`key=value …` or a `postgresql://` URL) is parsed with the same parser that reads it
//! (`hotbench_wire::Config`) and printed back with the password masked, so quoting and
//! escapes cannot hide part of a password from the mask. An argument that looks like a
//! connection string but does not parse, and mentions a password, is masked whole.

use hotbench_wire::Config;

const MASKED_WHOLE: &str = "********";

/// Masks passwords inside one argument (`--opt=VALUE` masks VALUE).
pub fn mask_arg(arg: &str) -> String {
    if let Some(rest) = arg.strip_prefix("--") {
        if let Some((name, value)) = rest.split_once('=') {
            if !name.is_empty() && !name.contains(char::is_whitespace) {
                return format!("--{name}={}", mask_value(value));
            }
        }
    }
    mask_value(arg)
}

fn mask_value(value: &str) -> String {
    if !Config::looks_like_conninfo(value) {
        return value.to_string();
    }
    match Config::parse(value) {
        Ok(c) if c.password.is_some() => c.masked(),
        Ok(_) => value.to_string(),
        Err(_) => {
            let lower = value.to_ascii_lowercase();
            if lower.contains("password") || lower.contains("://") {
                MASKED_WHOLE.to_string()
            } else {
                value.to_string()
            }
        }
    }
}

pub fn mask_args(args: &[String]) -> Vec<String> {
    args.iter().map(|a| mask_arg(a)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_hidden(arg: &str, secret_parts: &[&str]) {
        let m = mask_arg(arg);
        for s in secret_parts {
            assert!(!m.contains(s), "{arg:?} masked as {m:?} still shows {s:?}");
        }
        assert!(m.contains("****"), "{arg:?} masked as {m:?}");
    }

    #[test]
    fn masks_url_and_conninfo_passwords() {
        assert_eq!(
            mask_arg("postgresql://bob:s3cret@db:5432/x?sslmode=require"),
            "postgresql://bob:********@db:5432/x?sslmode=require"
        );
        assert_eq!(mask_arg("postgresql://bob@db/x"), "postgresql://bob@db/x");
        assert_eq!(
            mask_arg("host=db password=s3cret user=bob"),
            "host=db user=bob password=********"
        );
        assert_hidden("host=db password='a b' user=bob", &["a b"]);
        assert_hidden("postgres://h/db?password=s3cret&x=1", &["s3cret"]);
        assert_eq!(mask_arg("-c10"), "-c10");
        assert_eq!(mask_arg("--json=r.json"), "--json=r.json");
        assert_eq!(mask_arg("host=db dbname=x"), "host=db dbname=x");
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]
        /// Issue 29: whatever surrounds a password (malformed hosts, quotes, stray `@`, `[`),
        /// the masked argument never shows it, as a URL, a conninfo or `--opt=VALUE`.
        #[test]
        fn a_password_is_never_shown(
            pw in "[QXJ][QXJ0-9]{7,11}",
            // No quote before the password: a quoted value could then hold the text
            // `password=…`, which libpq too reads as that value, not as a password.
            head in "[a-z0-9:@/\\[\\]?&=%,. ]{0,16}",
            tail in "[a-z0-9:@/\\[\\]?&=%,. ']{0,16}",
            form in 0u8..5,
        ) {
            let arg = match form {
                0 => format!("postgresql://u:{pw}@{tail}"),
                1 => format!("postgres://{head}?x=1&password={pw}&{tail}"),
                2 => format!("host=h {head} password={pw} {tail}"),
                3 => format!("--dbname=postgresql://u:{pw}@{tail}"),
                _ => format!("host=h password='{pw} {tail}"),
            };
            let m = mask_arg(&arg);
            proptest::prop_assert!(!m.contains(&pw), "{arg:?} masked as {m:?}");
        }
    }

    #[test]
    fn quotes_and_escapes_cannot_leak_part_of_a_password() {
        // Escaped quotes inside a quoted value (the issue's reproducer).
        assert_hidden(
            r"host=db password='it\'s a \'pwQ\' x' user=bob",
            &["pwQ", "it", " x"],
        );
        // Escaped space in an unquoted value; spaces around '='; upper-case keyword is
        // not a keyword for libpq, so it must not parse as one (masked whole).
        assert_hidden(r"host=db password=ab\ cd\ ef", &["ab", "cd", "ef"]);
        assert_hidden("host=db password = 'x y z'", &["x y z", "y z"]);
        // Percent-encoded URL password and one in the query string.
        assert_hidden("postgresql://bob:p%40ss%20word@db/x", &["p%40ss", "word"]);
        assert_hidden(
            "postgresql://db/x?user=bob&password=a%26b",
            &["a%26b", "a&b"],
        );
        // Unparseable strings that mention a password are masked whole.
        assert_hidden("host=db password='never closed", &["never", "closed"]);
        assert_hidden("postgresql://bob:bad%zzpw@db/x", &["bad", "pw"]);
        // The same inside --option=VALUE.
        assert_hidden("--dbname=host=db password=s3cret", &["s3cret"]);
    }
}
