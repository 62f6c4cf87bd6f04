//! `--random-seed` for every command that runs scripts: pgbench's forms (`time`, `rand`, an
//! unsigned integer), falling back to `PGBENCH_RANDOM_SEED`, then to the time.

use crate::fail::{Fail, Result};

pub fn resolve(option: Option<&str>) -> Result<u64> {
    let text = option
        .map(str::to_string)
        .or_else(|| std::env::var("PGBENCH_RANDOM_SEED").ok());
    match text {
        Some(t) => Ok(t
            .parse::<hotbench_script::RandomSeed>()
            .map_err(|_| {
                // pgbench's two errors: the value, then the option it came from.
                Fail::input(format!("unrecognized random seed option \"{t}\""))
                    .detail("Expecting an unsigned integer, \"time\" or \"rand\".")
                    .then("error while setting random seed from --random-seed option")
            })?
            .resolve()),
        None => Ok(hotbench_script::RandomSeed::Time.resolve()),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn integers_and_errors() {
        assert_eq!(super::resolve(Some("42")).unwrap(), 42);
        let e = super::resolve(Some("soon")).unwrap_err();
        assert_eq!(e.code, 1);
        assert_eq!(e.message, "unrecognized random seed option \"soon\"");
    }
}
