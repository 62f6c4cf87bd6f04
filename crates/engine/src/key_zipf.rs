//! Which `--key` variables are Zipfian: a key every script of its groups draws with
//! `\set VAR random_zipfian(lo, hi, s)` (arguments literal or `-D`/scenario variables), so
//! the report can set the observed share of the top keys against the parameter's
//! prediction (`stats::zipf`). Keys set any other way (another `\set`, scripts that differ)
//! get no comparison: a prediction for a different distribution would mislead.

use hotbench_script::{CommandKind, Expr, Func, Meta, Script, Value};
use hotbench_stats::hot_keys::KeySketch;
use hotbench_stats::zipf::ZipfShare;

use crate::plan::Plan;

/// How a script sets a variable.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Source {
    Unset,
    Zipfian(i64, i64, f64),
    Other,
}

/// The comparisons for every key sketch whose variable is Zipfian in all its groups' scripts.
pub(crate) fn zipf_shares(plan: &Plan, sketches: &[KeySketch]) -> Vec<ZipfShare> {
    let lookup = |name: &str| -> Option<f64> {
        if name == "scale" {
            return Some(plan.cfg.scale as f64);
        }
        let (_, v) = plan.cfg.defines.iter().rev().find(|(k, _)| k == name)?;
        v.trim().parse().ok()
    };
    let mut out = Vec::new();
    for (i, sketch) in sketches.iter().enumerate() {
        let scripts = plan
            .groups
            .iter()
            .filter(|g| g.key_sketches.contains(&i))
            .flat_map(|g| g.scripts.iter());
        let mut params = None;
        let mut zipfian = true;
        for script in scripts {
            match source(script, &sketch.variable, &lookup) {
                Source::Zipfian(lo, hi, s) if params.is_none_or(|p| p == (lo, hi, s)) => {
                    params = Some((lo, hi, s))
                }
                _ => zipfian = false,
            }
        }
        if let (true, Some(p)) = (zipfian, params) {
            let (counts, total) = sketch.transaction_counts();
            out.extend(ZipfShare::compare(
                &sketch.variable,
                p,
                &counts,
                total,
                sketch.approximate,
            ));
        }
    }
    out
}

fn source(script: &Script, var: &str, lookup: &dyn Fn(&str) -> Option<f64>) -> Source {
    let mut found = Source::Unset;
    for c in script.commands() {
        let CommandKind::Meta(m) = &c.kind else {
            continue;
        };
        let this = match &m.meta {
            Meta::Set { var: v, expr } if v == var => zipfian_args(expr, lookup),
            Meta::SetShell { var: v, .. } if v == var => Source::Other,
            _ => continue,
        };
        found = match found {
            Source::Unset => this,
            _ => Source::Other,
        };
    }
    found
}

fn zipfian_args(expr: &Expr, lookup: &dyn Fn(&str) -> Option<f64>) -> Source {
    let Expr::Call(Func::RandomZipfian, args) = expr else {
        return Source::Other;
    };
    let number = |e: &Expr| match e {
        Expr::Const(Value::Int(i)) => Some(*i as f64),
        Expr::Const(Value::Double(d)) => Some(*d),
        Expr::Var(name) => lookup(name),
        _ => None,
    };
    let whole = |x: f64| (x.fract() == 0.0 && x.abs() < 9e15).then_some(x as i64);
    match args.as_slice() {
        [lo, hi, s] => match (
            number(lo).and_then(whole),
            number(hi).and_then(whole),
            number(s),
        ) {
            (Some(lo), Some(hi), Some(s)) => Source::Zipfian(lo, hi, s),
            _ => Source::Other,
        },
        _ => Source::Other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn src(text: &str, var: &str) -> Source {
        let script = hotbench_script::parse_script("t", text).expect("parses");
        let lookup = |n: &str| (n == "records").then_some(500.0);
        source(&script, var, &lookup)
    }

    #[test]
    fn finds_a_zipfian_key_and_nothing_else() {
        assert_eq!(
            src(
                "\\set k random_zipfian(1, :records, 1.1)\nselect :k;\n",
                "k"
            ),
            Source::Zipfian(1, 500, 1.1)
        );
        assert_eq!(
            src("\\set k random_zipfian(3, 9, 2)\nselect 1;\n", "k"),
            Source::Zipfian(3, 9, 2.0)
        );
        assert_eq!(src("select 1;\n", "k"), Source::Unset);
        assert_eq!(src("\\set k random(1, 9)\nselect 1;\n", "k"), Source::Other);
        // Unknown variables, computed arguments and a second \set: no prediction.
        for text in [
            "\\set k random_zipfian(1, :nope, 1.1)\nselect 1;\n",
            "\\set k random_zipfian(1, 10 * 2, 1.1)\nselect 1;\n",
            "\\set k random_zipfian(1, 10, 1.1)\n\\set k :k + 1\nselect 1;\n",
            "\\set k random_zipfian(1.5, 10, 1.1)\nselect 1;\n",
        ] {
            assert_eq!(src(text, "k"), Source::Other, "{text}");
        }
    }
}
