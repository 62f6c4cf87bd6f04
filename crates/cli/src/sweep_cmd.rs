//! `hotbench sweep`: runs `hotbench run`'s workload once per client count (the same code
//! path as `run`, so the same validation, report and result record), then fits the Universal
//! Scalability Law to the measured throughput and prints the fit and predicted peak.

use clap::ArgMatches;
use hotbench_report::sweep::{self, SweepDoc};

use crate::fail::{Fail, Result};
use crate::flags::sweep::SweepArgs;

/// `1,2,4,8` (also `1 2 4`), each ≥ 1, in the order given, duplicates dropped.
fn parse_clients(text: &str) -> Result<Vec<usize>> {
    let mut out: Vec<usize> = Vec::new();
    for part in text
        .split([',', ' '])
        .map(str::trim)
        .filter(|s| !s.is_empty())
    {
        let n: usize = part.parse().ok().filter(|n| *n >= 1).ok_or_else(|| {
            Fail::input(format!(
                "invalid client count \"{part}\" in -c/--clients \"{text}\": expected a list such as 1,2,4,8"
            ))
        })?;
        if !out.contains(&n) {
            out.push(n);
        }
    }
    if out.is_empty() {
        return Err(Fail::input(
            "-c/--clients: give the client counts to sweep, e.g. 1,2,4,8",
        ));
    }
    Ok(out)
}

pub fn main(args: &SweepArgs, m: &ArgMatches, argv: &[String]) -> Result<u8> {
    let run = &args.run;
    if run.initialize {
        return Err(Fail::input(
            "sweep does not initialize: run `hotbench run -i` first",
        ));
    }
    if run.dbname.len() > 1 {
        return Err(Fail::input(format!(
            "too many command-line arguments (first is \"{}\")",
            run.dbname[1]
        )));
    }
    let counts = parse_clients(run.client.as_deref().unwrap_or("1,2,4,8"))?;
    if counts.len() < 3 {
        eprintln!("hotbench: warning: the USL fit needs at least 3 client counts");
    }
    let output = args.output.clone().or_else(|| run.html.clone());
    let ta = crate::run_cmd::target_args(run);
    let mut records = Vec::new();
    let mut code = 0;
    for n in &counts {
        println!("\n=== sweep: {n} clients ===");
        let mut one = run.clone();
        one.client = Some(n.to_string());
        one.json = None;
        one.html = None;
        let (c, rec) = crate::run_cmd::benchmark_record(&one, m, argv, &ta)?;
        records.push(rec);
        if c != 0 {
            code = c;
            eprintln!("hotbench: error: the sweep stopped at {n} clients");
            break;
        }
    }
    let doc = SweepDoc::new(records);
    println!();
    print!("{}", sweep::render_text(&doc));
    if let Some(p) = &run.json {
        hotbench_stats::json_file::write_atomic(p, &doc).map_err(|e| Fail::run(e.to_string()))?;
        println!("result written to {}", p.display());
    }
    if let Some(p) = &output {
        crate::report_cmd::write_html(p, &sweep::render_html(&doc))?;
        println!("report written to {}", p.display());
    }
    Ok(code)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_lists() {
        assert_eq!(parse_clients("1,2,4,8").unwrap(), vec![1, 2, 4, 8]);
        assert_eq!(parse_clients("4, 2 ,2").unwrap(), vec![4, 2]);
        let e = parse_clients("1,x").unwrap_err();
        assert!(
            e.message.contains("invalid client count \"x\""),
            "{}",
            e.message
        );
        assert!(parse_clients("0").is_err());
        assert!(parse_clients(",").is_err());
    }
}
