//! The manifest loader and the parameter expansion on hostile input (issue 29): random text
//! as `scenario.toml`, the shipped manifests with lines dropped, repeated or given hostile
//! values (huge counts, zero weights, nested `{{…}}`, wrong types), then every variant
//! prepared as a ladder would before connecting. Nothing may panic or run away: what is
//! refused is refused with a message naming the manifest. Bounded case counts;
//! `HOTBENCH_FUZZ_CASES=N` for a longer hunt.

use std::collections::BTreeMap;

use hotbench_scenario::source::builtin_bundles;
use hotbench_scenario::{ladder::check_ladder, load, Bundle};
use proptest::prelude::*;

fn cases(default: u32) -> u32 {
    std::env::var("HOTBENCH_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Loads `bundle`; when it loads, prepares its ladder with `params` (as `scenario run`
/// does before connecting) and describes it (as `scenario show` does).
fn exercise(bundle: Bundle, params: &[(String, String)]) {
    let location = bundle.location.clone();
    match load(bundle) {
        Err(e) => {
            let msg = e.to_string();
            assert!(msg.starts_with(&location) || !msg.is_empty(), "{msg}");
        }
        Ok(scn) => {
            let _ = check_ladder(&scn, None, false, params);
            let _ = check_ladder(&scn, None, true, params);
            for v in &scn.manifest.variants {
                if let Ok(p) =
                    hotbench_scenario::params::Params::resolve(&scn.manifest, Some(v), params)
                {
                    let _ = p.describe(&v.about);
                    let _ = p.defines();
                }
            }
        }
    }
}

fn bundle_with(base: &Bundle, manifest: String) -> Bundle {
    let mut b = base.clone();
    b.builtin = false;
    b.location = format!("fuzz/{}", b.name);
    b.files.insert("scenario.toml".into(), manifest);
    b
}

/// Values a careless or hostile manifest author writes.
const HOSTILE: &[&str] = &[
    "100000000",
    "0",
    "-1",
    "1e308",
    "\"{{clients}}\"",
    "\"{{nope}}\"",
    "\"{{\"",
    "\"a.sql@0\"",
    "\"a.sql@99999999999\"",
    "\"builtin:nope\"",
    "[]",
    "{}",
    "true",
    "\"\"",
    "\"x'; drop table t; --\"",
    "\"{{clients}}{{clients}}{{clients}}{{clients}}\"",
];

/// A shipped manifest with each `(line, action)` applied: drop the line, repeat it, or
/// give its value a hostile one.
fn mutate(text: &str, edits: &[(usize, usize)]) -> String {
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    for &(at, action) in edits {
        if lines.is_empty() {
            break;
        }
        let i = at % lines.len();
        match action % 4 {
            0 => {
                lines.remove(i);
            }
            1 => {
                let l = lines[i].clone();
                lines.insert(i, l);
            }
            _ => {
                if let Some((k, _)) = lines[i].split_once('=') {
                    let v = HOSTILE[action / 4 % HOSTILE.len()];
                    lines[i] = format!("{k}= {v}");
                }
            }
        }
    }
    lines.join("\n")
}

fn user_params() -> impl Strategy<Value = Vec<(String, String)>> {
    prop::collection::vec(
        (
            prop::sample::select(vec![
                "clients",
                "duration",
                "mode",
                "customers",
                "batch",
                "x",
            ]),
            prop::sample::select(vec![
                "1",
                "0",
                "100000000",
                "abc",
                "{{clients}}",
                "-5",
                "1e9",
            ]),
        )
            .prop_map(|(k, v)| (k.to_string(), v.to_string())),
        0..3,
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(96), ..ProptestConfig::default() })]

    #[test]
    fn mutated_shipped_manifests_load_or_are_refused(
        which in 0usize..16,
        edits in prop::collection::vec((any::<usize>(), any::<usize>()), 1..5),
        params in user_params(),
    ) {
        let bundles = builtin_bundles();
        let base = &bundles[which % bundles.len()];
        let text = base.file("scenario.toml").unwrap_or_default();
        exercise(bundle_with(base, mutate(text, &edits)), &params);
    }

    #[test]
    fn random_text_as_a_manifest_is_refused(s in "\\PC{0,300}") {
        let base = &builtin_bundles()[0];
        exercise(bundle_with(base, s), &[]);
    }

    /// Nested expansions of any shape end in bounded time and size, or with a message.
    #[test]
    fn parameter_expansion_is_bounded(
        defs in prop::collection::vec(("[a-c]", "(\\{\\{[a-c]\\}\\}|x|\\{\\{|\\}\\}){0,12}"), 1..6),
        text in "(\\{\\{[a-c]\\}\\}|y|\\{\\{){0,8}",
    ) {
        let mut p = hotbench_scenario::params::Params::default();
        for (name, expansion) in defs {
            p.values.insert(name.clone(), "v".into());
            p.expansions.insert(name, [("v".to_string(), expansion.repeat(8))].into());
        }
        if let Ok(out) = p.substitute(&text, &BTreeMap::new()) {
            prop_assert!(out.len() <= hotbench_scenario::params::EXPANSION_LIMIT);
        }
    }
}
