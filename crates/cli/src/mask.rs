//! Never print a password: masks `password=…` in conninfo strings and `user:pass@` in URLs
//! wherever a command line or target is shown or stored.

/// Masks passwords inside one argument.
pub fn mask_arg(arg: &str) -> String {
    let mut out = arg.to_string();
    if let Some(scheme_end) = out.find("://") {
        let rest_start = scheme_end + 3;
        let authority_end = out[rest_start..]
            .find(['/', '?'])
            .map_or(out.len(), |i| rest_start + i);
        if let Some(at) = out[rest_start..authority_end].rfind('@') {
            let userinfo = &out[rest_start..rest_start + at];
            if let Some(colon) = userinfo.find(':') {
                let start = rest_start + colon + 1;
                out.replace_range(start..rest_start + at, "****");
            }
        }
    }
    let lower = out.to_ascii_lowercase();
    if let Some(pos) = lower.find("password=") {
        let start = pos + "password=".len();
        let bytes = out.as_bytes();
        let end = if bytes.get(start) == Some(&b'\'') {
            out[start + 1..]
                .find('\'')
                .map_or(out.len(), |i| start + i + 2)
        } else {
            out[start..]
                .find([' ', '&'])
                .map_or(out.len(), |i| start + i)
        };
        out.replace_range(start..end, "****");
    }
    out
}

pub fn mask_args(args: &[String]) -> Vec<String> {
    args.iter().map(|a| mask_arg(a)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_url_and_conninfo_passwords() {
        assert_eq!(
            mask_arg("postgresql://bob:s3cret@db:5432/x?sslmode=require"),
            "postgresql://bob:****@db:5432/x?sslmode=require"
        );
        assert_eq!(mask_arg("postgresql://bob@db/x"), "postgresql://bob@db/x");
        assert_eq!(
            mask_arg("host=db password=s3cret user=bob"),
            "host=db password=**** user=bob"
        );
        assert_eq!(
            mask_arg("host=db password='a b' user=bob"),
            "host=db password=**** user=bob"
        );
        assert_eq!(
            mask_arg("postgres://h/db?password=s3cret&x=1"),
            "postgres://h/db?password=****&x=1"
        );
        assert_eq!(mask_arg("-c10"), "-c10");
    }
}
