//! Which PostgreSQL-compatible engine a server is, from its `version()` or `server_version`
//! text: scenarios pick per-engine SQL with it, probes pick their views, reports print it.

/// `"postgresql"`, `"yugabytedb"` or `"cockroachdb"`.
pub fn engine_of(version: &str) -> &'static str {
    crate::engine_profile::Engine::of_version(version).name()
}

#[cfg(test)]
mod tests {
    use super::engine_of;

    #[test]
    fn engines_from_version_strings() {
        assert_eq!(
            engine_of("PostgreSQL 15.18 (Debian 15.18-0+deb12u1) on x86_64"),
            "postgresql"
        );
        assert_eq!(engine_of("11.2-YB-2.21.0.1-b0"), "yugabytedb");
        assert_eq!(
            engine_of("PostgreSQL 11.2-YB-2.20.1.0-b0 on x86_64"),
            "yugabytedb"
        );
        assert_eq!(
            engine_of("CockroachDB CCL v23.1.11 (x86_64-pc-linux-gnu)"),
            "cockroachdb"
        );
        assert_eq!(engine_of("15.18 (Debian 15.18-0+deb12u1)"), "postgresql");
    }
}
