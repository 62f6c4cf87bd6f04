//! One test's setting for `hotbench run`: a database of its own, a scratch directory, the
//! script and the result file, and the run itself with its flags written as one line, so a
//! test says only what differs from the others.

use std::path::PathBuf;
use std::process::{Child, Output};

use hotbench_pgserver::ConnInfo;

use super::{database, json, run, spawn_run, temp_dir, text, write_script};

pub struct Case {
    pub db: ConnInfo,
    pub dir: PathBuf,
    pub script: PathBuf,
    pub json: PathBuf,
}

/// What a finished run printed and how it exited.
pub struct Ran {
    pub out: String,
    pub err: String,
    pub code: Option<i32>,
}

impl Case {
    /// A fresh database and directory named after `tag`, with `script` in `tag.sql`.
    pub fn new(tag: &str, script: &str) -> Case {
        Case::on(database(tag), tag, script)
    }

    /// As [`Case::new`], on a database of the caller's (a private server's).
    pub fn on(db: ConnInfo, tag: &str, script: &str) -> Case {
        let dir = temp_dir(tag);
        Case {
            script: write_script(&dir, &format!("{tag}.sql"), script),
            json: dir.join(format!("{tag}.json")),
            db,
            dir,
        }
    }

    /// `FLAGS -f SCRIPT --json JSON`: `flags` split at spaces.
    fn args(&self, flags: &str) -> Vec<String> {
        let mut v: Vec<String> = flags.split_whitespace().map(String::from).collect();
        for (flag, path) in [("-f", &self.script), ("--json", &self.json)] {
            v.push(flag.into());
            v.push(path.to_string_lossy().into_owned());
        }
        v
    }

    /// Runs `hotbench run FLAGS -f SCRIPT --json JSON` to the end.
    pub fn run(&self, flags: &str) -> Ran {
        let args = self.args(flags);
        Ran::from(run(
            &self.db,
            &args.iter().map(String::as_str).collect::<Vec<_>>(),
        ))
    }

    /// Starts the same run in the background.
    pub fn spawn(&self, flags: &str) -> Child {
        let args = self.args(flags);
        spawn_run(
            &self.db,
            &args.iter().map(String::as_str).collect::<Vec<_>>(),
        )
    }

    /// `hotbench run FLAGS -f SCRIPT --json JSON`, not started yet.
    pub fn command(&self, flags: &str) -> std::process::Command {
        let args = self.args(flags);
        super::run_command(
            &self.db,
            &args.iter().map(String::as_str).collect::<Vec<_>>(),
        )
    }

    /// The result file, parsed.
    pub fn result(&self) -> serde_json::Value {
        json(&self.json)
    }

    /// The run's result file as its type.
    pub fn record(&self) -> hotbench_results::RunRecord {
        super::record(&self.json)
    }
}

impl From<Output> for Ran {
    fn from(o: Output) -> Ran {
        let (out, err) = text(&o);
        Ran {
            out,
            err,
            code: o.status.code(),
        }
    }
}

impl Ran {
    /// Waits for a run started with [`Case::spawn`].
    pub fn wait(child: Child) -> Ran {
        Ran::from(child.wait_with_output().expect("wait for hotbench"))
    }

    /// Fails the test, with both outputs, unless the run exited with `code`.
    pub fn expect_code(self, code: i32) -> Ran {
        assert_eq!(self.code, Some(code), "{}\n{}", self.out, self.err);
        self
    }
}
