//! Bringing a default cluster up: choose binaries and base directory (taken over from the
//! `postgres` account an older hotbench ran it as), initdb on first use (with a progress
//! line), give the superuser a generated password when it has none yet, start the
//! postmaster on the last-used port, record the state and the password file.

use std::process::Child;
use std::time::{Duration, Instant};

use super::layout::{absolute, default_base, existing_bases, running_in, Layout};
use super::{say, DefaultOptions};
use crate::account::RunAs;
use crate::binaries::{self, PgBinaries};
use crate::cluster;
use crate::config::{self, ClusterOptions};
use crate::error::{Error, Result};
use crate::guardian::Guardian;
use crate::paths;
use crate::ports;
use crate::secret;
use crate::server;
use crate::state::State;

/// A running default cluster when the command named none (no --dir, --pg-version, --pg-bin):
/// commands use whichever is up, e.g. one started with `server start --pg-version 17`.
pub(super) fn running_default(opts: &DefaultOptions) -> Option<Layout> {
    if opts.dir.is_some() || opts.bins.pg_version.is_some() || opts.bins.pg_bin.is_some() {
        return None;
    }
    existing_bases()
        .into_iter()
        .find(|b| running_in(b))
        .map(Layout::new)
}

/// Pick binaries and the base directory (created owned by the run-as user).
pub(super) fn prepare(opts: &DefaultOptions) -> Result<(Layout, PgBinaries, &'static RunAs)> {
    let user = RunAs::get()?;
    let bins = binaries::find(&opts.bins)?;
    let base = match &opts.dir {
        Some(d) => absolute(d)?,
        None => default_base(bins.major)?,
    };
    if !user.can_traverse(&base) {
        return Err(Error::Invalid(format!(
            "{} is not reachable by user `{}` that PostgreSQL runs as; choose a directory outside a private home",
            base.display(),
            user.name
        )));
    }
    // Someone else's cluster in --dir: refused before anything of it is touched.
    Layout::new(base.clone()).refuse_foreign()?;
    let fresh = !base.exists();
    paths::create_dir_all(&base)?;
    if fresh {
        paths::set_mode(&base, 0o755)?;
    }
    // PostgreSQL creates data.initdb/ and its socket dir in here: it must own the base (an
    // existing --dir included).
    user.chown(&base)?;
    let l = Layout::new(base);
    take_over(&l, user)?;
    Ok((l, bins, user))
}

/// A cluster an older hotbench made while it ran PostgreSQL as the shared `postgres` account
/// (as root): give it to our own account, which PostgreSQL now runs as (it refuses a data
/// directory it does not own).
fn take_over(l: &Layout, user: &RunAs) -> Result<()> {
    use std::os::unix::fs::MetadataExt;
    let owner = std::fs::symlink_metadata(&l.data).map(|m| m.uid()).ok();
    if !user.switch || owner.is_none() || owner == Some(user.uid) {
        return Ok(());
    }
    user.chown_tree(&l.data)?;
    if l.log.is_file() {
        user.chown(&l.log)?;
    }
    Ok(())
}

/// `--dir` made absolute (it ends up in postgresql.conf and the state file).
pub(super) fn initdb_if_needed(
    l: &Layout,
    bins: &PgBinaries,
    user: &RunAs,
    opts: &DefaultOptions,
) -> Result<()> {
    if l.initialized() {
        if let Some(m) = l.data_major() {
            if m != bins.major {
                return Err(Error::State(format!(
                    "{} holds a PostgreSQL {m} cluster but the binaries found are {} ({}); pass --pg-version {m} or run `hotbench server reset`",
                    l.data.display(),
                    bins.version,
                    bins.bin_dir.display()
                )));
            }
        }
        return Ok(());
    }
    // initdb into a side directory renamed into place when complete, so an interrupted first
    // use (Ctrl-C, kill, disk full) never leaves a half-made `data/` that looks initialised.
    let building = l.base.join("data.initdb");
    for stale in [&l.data, &building] {
        if stale.exists() {
            std::fs::remove_dir_all(stale)
                .map_err(|e| Error::io("cannot remove incomplete cluster", stale, e))?;
        }
    }
    say(
        opts,
        &format!(
            "creating the default PostgreSQL {} cluster in {} (first use)…",
            bins.version,
            l.data.display()
        ),
    );
    let t = Instant::now();
    let co = ClusterOptions {
        fast: false,
        ..ClusterOptions::default()
    };
    let made = cluster::init(bins, user, &building, &co, &l.log).and_then(|()| {
        // The marker first: a cluster in place is always one hotbench may delete.
        let marker = l.base.join(super::layout::MARKER);
        std::fs::write(
            &marker,
            "created by hotbench's initdb; `hotbench server reset` deletes it\n",
        )
        .map_err(|e| Error::io("cannot write", &marker, e))?;
        std::fs::rename(&building, &l.data)
            .map_err(|e| Error::io("cannot move new cluster into place", &l.data, e))
    });
    if let Err(e) = made {
        let _ = std::fs::remove_dir_all(&building);
        return Err(e);
    }
    say(
        opts,
        &format!("cluster created in {:.1} s", t.elapsed().as_secs_f64()),
    );
    Ok(())
}

/// The superuser's password from the password file; when there is none (a new cluster, or
/// one an older hotbench made, which trusted TCP), a new one is generated and set in
/// single-user mode (the server is stopped: only `start` calls this, under the base lock).
fn ensure_password(l: &Layout, bins: &PgBinaries, user: &RunAs) -> Result<String> {
    if let Some(pw) = secret::read(&l.passfile) {
        return Ok(pw);
    }
    let pw = secret::generate()?;
    cluster::set_password(bins, user, &l.data, &ClusterOptions::default(), &pw, &l.log)?;
    // Written before the start (any port), rewritten for the port once it listens.
    let text = secret::render(config::DEFAULT_USER, &pw, &l.socket_dir(user), None);
    secret::write(&l.passfile, &text)?;
    Ok(pw)
}

/// Start the postmaster of `l`; `guardian` present for command-scoped starts.
pub(super) fn start(
    l: &Layout,
    bins: &PgBinaries,
    user: &RunAs,
    opts: &DefaultOptions,
    mut guardian: Option<&mut Guardian>,
    owner: u32,
) -> Result<(Child, State)> {
    let socket_dir = l.socket_dir(user);
    paths::create_private_dir(&socket_dir, user)?;
    let password = ensure_password(l, bins, user)?;
    let last: Option<u16> = std::fs::read_to_string(&l.last_port)
        .ok()
        .and_then(|s| s.trim().parse().ok());
    let port = opts.port.or(last.filter(|p| !ports::in_use(*p)));
    let co = ClusterOptions {
        fast: opts.fast,
        port,
        settings: opts.settings.clone(),
        ..ClusterOptions::default()
    };
    let detached = guardian.is_none();
    let gpid = guardian.as_ref().map(|g| g.pid()).unwrap_or(0);
    let t = Instant::now();
    let launch = |co: &ClusterOptions, guardian: Option<&mut Guardian>| {
        let wait = Duration::from_secs(120);
        server::launch(
            bins,
            user,
            &l.data,
            &socket_dir,
            &l.log,
            co,
            wait,
            detached,
            guardian,
        )
    };
    let launched = match launch(&co, guardian.as_deref_mut()) {
        // The last port was taken meanwhile: any free one will do.
        Err(Error::PortInUse { .. }) if opts.port.is_none() && port.is_some() => {
            launch(&ClusterOptions { port: None, ..co }, guardian)?
        }
        r => r?,
    };
    let _ = std::fs::write(&l.last_port, launched.port.to_string());
    let text = secret::render(
        config::DEFAULT_USER,
        &password,
        &socket_dir,
        Some(launched.port),
    );
    if let Err(e) = secret::write(&l.passfile, &text) {
        crate::process::stop(
            launched.child.id(),
            crate::process::StopMode::Fast,
            Duration::from_secs(60),
        );
        return Err(e);
    }
    let st = State {
        pid: launched.child.id(),
        owner,
        guardian: gpid,
        port: launched.port,
        socket_dir,
        bin_dir: bins.bin_dir.clone(),
        version: bins.version.clone(),
        fast: opts.fast,
    };
    st.save(&l.state)?;
    say(
        opts,
        &format!(
            "started PostgreSQL {} (pid {}) in {:.1} s",
            bins.version,
            st.pid,
            t.elapsed().as_secs_f64()
        ),
    );
    Ok((launched.child, st))
}
