//! `deploy/kubernetes/`: each manifest, with its `${…}` values filled in as its README says,
//! is valid YAML with the fields Kubernetes requires for its kind, and every `hotbench` flag
//! it uses is one the binary accepts. (No cluster runs here; this is what can be checked
//! without one.)

mod common;

use std::path::{Path, PathBuf};

use yaml_rust2::{Yaml, YamlLoader};

fn deploy_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../deploy/kubernetes")
}

/// The substitution the README's `envsubst "$VARS"` makes.
fn filled(text: &str) -> String {
    let values = [
        ("SHARDS", "3"),
        ("START_AT", "2026-11-23T17:00:00Z"),
        ("CLIENTS", "300"),
        ("DURATION", "60"),
        ("IMAGE", "registry.example/hotbench:dev"),
        ("PGHOST", "db.example"),
        ("PGDATABASE", "app"),
    ];
    let mut s = text.to_string();
    for (k, v) in values {
        s = s.replace(&format!("${{{k}}}"), v);
    }
    s
}

fn manifests() -> Vec<(String, Yaml)> {
    let mut out = Vec::new();
    let mut files: Vec<_> = std::fs::read_dir(deploy_dir())
        .expect("deploy/kubernetes exists")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml" || e == "yml"))
        .collect();
    files.sort();
    for f in files {
        let text = filled(&std::fs::read_to_string(&f).unwrap());
        let docs = YamlLoader::load_from_str(&text)
            .unwrap_or_else(|e| panic!("{}: not valid YAML: {e}", f.display()));
        for d in docs {
            out.push((f.file_name().unwrap().to_string_lossy().into_owned(), d));
        }
    }
    out
}

fn str_at<'a>(y: &'a Yaml, path: &[&str]) -> Option<&'a str> {
    path.iter().fold(y, |y, k| &y[*k]).as_str()
}

fn check_pod_spec(name: &str, spec: &Yaml) -> Vec<String> {
    let restart = spec["restartPolicy"].as_str();
    assert!(
        matches!(restart, Some("Never" | "OnFailure")),
        "{name}: a Job's pods need restartPolicy Never or OnFailure, not {restart:?}"
    );
    let containers = spec["containers"]
        .as_vec()
        .unwrap_or_else(|| panic!("{name}: no containers"));
    assert!(!containers.is_empty(), "{name}: no containers");
    let volumes: Vec<&str> = spec["volumes"]
        .as_vec()
        .map(|v| v.iter().filter_map(|v| v["name"].as_str()).collect())
        .unwrap_or_default();
    let mut commands = Vec::new();
    for c in containers {
        let cname = c["name"]
            .as_str()
            .unwrap_or_else(|| panic!("{name}: container without name"));
        let image = c["image"].as_str().unwrap_or("");
        assert!(
            !image.is_empty() && !image.contains("${"),
            "{name}/{cname}: image {image:?}"
        );
        for m in c["volumeMounts"].as_vec().into_iter().flatten() {
            let v = m["name"].as_str().unwrap_or("");
            assert!(
                volumes.contains(&v),
                "{name}/{cname}: mounts undeclared volume {v:?}"
            );
            assert!(
                m["mountPath"].as_str().is_some(),
                "{name}/{cname}: mount without path"
            );
        }
        for e in c["env"].as_vec().into_iter().flatten() {
            assert!(
                e["name"].as_str().is_some(),
                "{name}/{cname}: env without name"
            );
            assert!(
                e["value"].as_str().is_some() || !e["valueFrom"].is_badvalue(),
                "{name}/{cname}: env {:?} has no value",
                e["name"]
            );
        }
        for part in ["command", "args"] {
            for a in c[part].as_vec().into_iter().flatten() {
                commands.push(a.as_str().unwrap_or("").to_string());
            }
        }
    }
    commands
}

#[test]
fn kubernetes_manifests_have_what_kubernetes_requires() {
    let docs = manifests();
    assert!(
        docs.len() >= 3,
        "expected the PVC and two Jobs, found {}",
        docs.len()
    );
    let mut shard_job = false;
    let mut used_flags = Vec::new();
    for (file, d) in &docs {
        let kind = str_at(d, &["kind"]).unwrap_or_else(|| panic!("{file}: no kind"));
        assert!(
            str_at(d, &["apiVersion"]).is_some(),
            "{file}: no apiVersion"
        );
        let name =
            str_at(d, &["metadata", "name"]).unwrap_or_else(|| panic!("{file}: no metadata.name"));
        assert!(
            name.len() <= 63
                && name
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-'),
            "{file}: {name:?} is not a DNS label"
        );
        match kind {
            "Job" => {
                assert_eq!(str_at(d, &["apiVersion"]), Some("batch/v1"), "{file}");
                let spec = &d["spec"];
                let commands = check_pod_spec(file, &spec["template"]["spec"]);
                let line = commands.join(" ");
                if line.contains("--shard") {
                    shard_job = true;
                    assert_eq!(spec["completionMode"].as_str(), Some("Indexed"), "{file}");
                    let completions = spec["completions"]
                        .as_i64()
                        .expect("completions is an integer");
                    assert_eq!(
                        spec["parallelism"].as_i64(),
                        Some(completions),
                        "{file}: all shards at once"
                    );
                    assert!(
                        line.contains("JOB_COMPLETION_INDEX"),
                        "{file}: shard index from the Job"
                    );
                    assert!(line.contains("--start-at"), "{file}: a common start");
                }
                for w in line.split_whitespace() {
                    if let Some(flag) = w.strip_prefix("--") {
                        used_flags.push(flag.split('=').next().unwrap().to_string());
                    }
                }
            }
            "PersistentVolumeClaim" => {
                assert!(
                    d["spec"]["accessModes"]
                        .as_vec()
                        .is_some_and(|v| !v.is_empty()),
                    "{file}"
                );
                assert!(
                    str_at(d, &["spec", "resources", "requests", "storage"]).is_some(),
                    "{file}"
                );
            }
            other => panic!("{file}: unexpected kind {other}"),
        }
    }
    assert!(shard_job, "no Indexed Job running hotbench run --shard");
    // Every flag the manifests give hotbench exists.
    let help = |cmd: &str| {
        let o = common::hotbench().args([cmd, "--help"]).output().unwrap();
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let known = format!("{}{}{}", help("run"), help("merge"), help("report"));
    for f in used_flags {
        assert!(known.contains(&format!("--{f}")), "hotbench has no --{f}");
    }
}
