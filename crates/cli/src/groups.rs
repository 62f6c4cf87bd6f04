//! `--group NAME:file=F[@W],builtin=B[@W],clients=N,rate=R,goodput=RULE,key=VAR`: several
//! client groups in one run, each with its own scripts, clients, rate and hot-key variables
//! (e.g. one producer at 100/s while ten consumers drain a queue).

use hotbench_engine::GoodputRule;

use crate::fail::{Fail, Result};
use crate::scripts::ScriptSpec;

#[derive(Debug, Clone, PartialEq)]
pub struct GroupSpec {
    pub name: String,
    pub scripts: Vec<ScriptSpec>,
    pub clients: usize,
    pub rate: Option<f64>,
    pub goodput: Option<GoodputRule>,
    /// `key=VAR` (repeatable): hot keys counted over this group's transactions only.
    pub keys: Vec<String>,
}

pub fn parse_goodput(text: &str) -> Result<GoodputRule> {
    GoodputRule::parse(text).map_err(Fail::input)
}

pub fn parse_group(text: &str) -> Result<GroupSpec> {
    let usage = || {
        Fail::input(format!("invalid --group \"{text}\""))
            .hint("use NAME:file=F[@W],builtin=B[@W],clients=N,rate=R,goodput=RULE,key=VAR")
    };
    let (name, rest) = text.split_once(':').ok_or_else(usage)?;
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '-')
    {
        return Err(usage());
    }
    let mut g = GroupSpec {
        name: name.to_string(),
        scripts: Vec::new(),
        clients: 1,
        rate: None,
        goodput: None,
        keys: Vec::new(),
    };
    let mut seen: Vec<&str> = Vec::new();
    for part in rest.split(',').filter(|p| !p.is_empty()) {
        let (k, v) = part.split_once('=').ok_or_else(usage)?;
        // One value per setting: a second `clients=` (or `c=`) is a mistake, not an override.
        let setting = match k {
            "clients" | "c" => "clients",
            "rate" | "R" => "rate",
            "goodput" => "goodput",
            _ => "",
        };
        if !setting.is_empty() {
            if seen.contains(&setting) {
                return Err(Fail::input(format!(
                    "--group \"{text}\" gives {setting} twice"
                )));
            }
            seen.push(setting);
        }
        match k {
            "file" | "f" => g.scripts.push(ScriptSpec::File(v.to_string())),
            "builtin" | "b" => g.scripts.push(ScriptSpec::Builtin(v.to_string())),
            "clients" | "c" => {
                g.clients = v
                    .parse()
                    .ok()
                    .filter(|&n: &usize| n >= 1 && n as i64 <= crate::option_ranges::INT_MAX)
                    .ok_or_else(|| {
                    Fail::input(format!(
                        "invalid clients \"{v}\" in --group \"{text}\": expected a whole number ≥ 1"
                    ))
                })?
            }
            "rate" | "R" => {
                g.rate = Some(v.parse().ok().filter(|&r: &f64| crate::option_ranges::rate_is_meaningful(r)).ok_or_else(
                    || {
                        Fail::input(format!(
                            "invalid rate \"{v}\" in --group \"{text}\": expected transactions per second > 0"
                        ))
                    },
                )?)
            }
            "goodput" => g.goodput = Some(parse_goodput(v)?),
            "key" => {
                if !hotbench_script::valid_variable_name(v) {
                    return Err(Fail::input(format!(
                        "invalid key \"{v}\" in --group \"{text}\": expected a script variable name"
                    )));
                }
                if !g.keys.iter().any(|k| k == v) {
                    g.keys.push(v.to_string());
                }
            }
            _ => {
                return Err(Fail::input(format!(
                    "unknown key \"{k}\" in --group \"{text}\""
                ))
                .hint("keys are file, builtin, clients, rate, goodput and key"))
            }
        }
    }
    if g.scripts.is_empty() {
        return Err(Fail::input(format!(
            "--group \"{text}\" has no script (file=… or builtin=…)"
        )));
    }
    Ok(g)
}

/// All `--group` options: each parsed, and names unique (they label the report's sections
/// and the result's groups).
pub fn parse_groups(texts: &[String]) -> Result<Vec<GroupSpec>> {
    let groups = texts
        .iter()
        .map(|g| parse_group(g))
        .collect::<Result<Vec<_>>>()?;
    for (i, g) in groups.iter().enumerate() {
        if groups[..i].iter().any(|o| o.name == g.name) {
            return Err(Fail::input(format!(
                "--group name \"{}\" is given twice; each group needs its own name",
                g.name
            )));
        }
    }
    Ok(groups)
}

/// The script files the groups read (not built-ins, not standard input), so no output of
/// the run can replace one.
pub fn input_files(groups: &[GroupSpec]) -> Vec<std::path::PathBuf> {
    groups
        .iter()
        .flat_map(|g| &g.scripts)
        .filter_map(|s| match s {
            ScriptSpec::File(option) => hotbench_script::parse_weight(option)
                .ok()
                .map(|(path, _)| path),
            ScriptSpec::Builtin(_) => None,
        })
        .filter(|p| p != "-")
        .map(std::path::PathBuf::from)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_producer_group() {
        let g = parse_group("enqueue:file=enqueue.sql,clients=1,rate=100").unwrap();
        assert_eq!(g.name, "enqueue");
        assert_eq!(g.scripts, vec![ScriptSpec::File("enqueue.sql".into())]);
        assert_eq!(g.clients, 1);
        assert_eq!(g.rate, Some(100.0));
        let g =
            parse_group("dequeue:file=dequeue.sql@3,builtin=select-only,clients=10,goodput=rows")
                .unwrap();
        assert_eq!(g.scripts.len(), 2);
        assert_eq!(g.goodput, Some(GoodputRule::Rows));
        assert!(g.keys.is_empty());
    }

    #[test]
    fn a_group_names_its_key_variables() {
        let g =
            parse_group("pay:file=p.sql,key=customer,clients=4,key=amount,key=customer").unwrap();
        assert_eq!(g.keys, vec!["customer".to_string(), "amount".to_string()]);
        let e = parse_group("pay:file=p.sql,key=no-such").unwrap_err();
        assert_eq!(e.code, 1);
        assert!(
            e.message.contains("invalid key \"no-such\""),
            "{}",
            e.message
        );
        let e = parse_group("pay:file=p.sql,key=").unwrap_err();
        assert!(e.message.contains("invalid key"), "{}", e.message);
    }

    #[test]
    fn rejects_bad_groups_with_a_clear_message() {
        for bad in [
            "noscripts:clients=2",
            "x",
            ":file=a.sql",
            "g:file=a.sql,clients=0",
            "g:file=a.sql,rate=-1",
            "g:file=a.sql,color=red",
            "g:file=a.sql,goodput=maybe",
            "g:file=a.sql,rate=nan",
            "g:file=a.sql,rate=inf",
            "g:file=a.sql,rate=1e-20",
            "g:file=a.sql,clients=2,clients=3",
            "g:file=a.sql,c=2,clients=3",
            "g:file=a.sql,rate=5,R=6",
            "g:file=a.sql,clients=2147483648",
        ] {
            let e = parse_group(bad).unwrap_err();
            assert_eq!(e.code, 1, "{bad}");
            assert!(!e.message.is_empty());
        }
    }

    #[test]
    fn group_names_are_unique() {
        let two = |a: &str, b: &str| parse_groups(&[a.to_string(), b.to_string()]);
        assert!(two("a:file=x.sql", "b:file=x.sql").is_ok());
        for (a, b) in [
            ("a:file=x.sql", "a:file=y.sql"),
            ("w:builtin=tpcb-like", "w:file=y.sql,clients=3"),
        ] {
            let e = two(a, b).unwrap_err();
            assert!(e.message.contains("given twice"), "{}", e.message);
        }
    }
}
