"""Helpers shared by the bench/ scripts (vs-pgbench, client-bound): finding pgbench, measuring
a child's CPU, parsing pgbench-style reports, load averages, medians with ranges, and the
embedded server in a throwaway data directory."""
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import urllib.parse

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def sh(cmd, **kw):
    return subprocess.run(cmd, check=True, text=True, capture_output=True, **kw)


def find_pgbench(pg_bin=None):
    """pgbench from pg_bin, else pg_config --bindir, /usr/lib/postgresql/*/bin or PATH."""
    if pg_bin:
        p = os.path.join(pg_bin, "pgbench")
        return p if os.access(p, os.X_OK) else None
    try:
        bindir = sh(["pg_config", "--bindir"]).stdout.strip()
        p = os.path.join(bindir, "pgbench")
        if os.access(p, os.X_OK):
            return p
    except (OSError, subprocess.CalledProcessError):
        pass
    root = "/usr/lib/postgresql"
    versions = sorted(os.listdir(root), reverse=True) if os.path.isdir(root) else []
    for v in versions:
        p = os.path.join(root, v, "bin", "pgbench")
        if os.access(p, os.X_OK):
            return p
    return shutil.which("pgbench")


def perf_works():
    perf = shutil.which("perf")
    if not perf:
        return None
    try:
        out = subprocess.run([perf, "stat", "-x,", "-e", "task-clock", "true"],
                             text=True, capture_output=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return perf if out.returncode == 0 and "task-clock" in out.stderr else None


def measured(cmd, env, perf):
    """Runs cmd; returns (stdout, CPU seconds of the child and its threads)."""
    if perf:
        full = [perf, "stat", "-x,", "-e", "task-clock", "--"] + cmd
        proc = subprocess.run(full, text=True, capture_output=True, env=env)
        if proc.returncode != 0:
            sys.exit(f"failed: {' '.join(cmd)}\n{proc.stdout}\n{proc.stderr}")
        # perf's CSV line: value,unit,event,...; the program's own stderr comes before it.
        line = [l for l in proc.stderr.splitlines() if ",task-clock," in l][-1]
        value, unit = line.split(",")[:2]
        cpu = float(value) / (1000.0 if unit == "msec" else 1e9 if unit == "ns" else 1.0)
        return proc.stdout, cpu
    out, u = rusage_run(cmd, env)
    return out, u.user + u.sys


class Usage:
    """A finished child's resource usage: user and system seconds, voluntary and involuntary
    context switches (from RUSAGE_CHILDREN around the run, so no other child may be reaped
    meanwhile)."""

    def __init__(self, before, after):
        self.user = after.ru_utime - before.ru_utime
        self.sys = after.ru_stime - before.ru_stime
        self.vcsw = after.ru_nvcsw - before.ru_nvcsw
        self.ivcsw = after.ru_nivcsw - before.ru_nivcsw


def rusage_run(cmd, env):
    """Runs cmd; returns (stdout, Usage). Exits with its output if it fails."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run(cmd, text=True, capture_output=True, env=env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{proc.stdout}\n{proc.stderr}")
    return proc.stdout, Usage(before, after)


def parse(out):
    tps = float(re.search(r"^tps = ([0-9.]+)", out, re.M).group(1))
    n = int(re.search(r"^number of transactions actually processed: (\d+)", out, re.M).group(1))
    conn = re.search(r"^initial connection time = ([0-9.]+) ms", out, re.M)
    return tps, n, float(conn.group(1)) if conn else None


def load():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def med_range(xs, fmt="{:.2f}"):
    return f"{fmt.format(statistics.median(xs))} ({fmt.format(min(xs))}-{fmt.format(max(xs))})"


def build_hotbench(path=None):
    """The hotbench binary: `path` if given, else a release build of this checkout."""
    if path:
        if not os.access(path, os.X_OK):
            sys.exit(f"--hotbench {path!r} is not an executable")
        return os.path.abspath(path)
    if not shutil.which("cargo"):
        sys.exit("cargo not found: build hotbench elsewhere and pass --hotbench PATH")
    print("building hotbench (release)...", flush=True)
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "hotbench"], cwd=ROOT, check=True)
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
    return os.path.join(target, "release", "hotbench")


def embedded_conn(url, env):
    """-h/-p/-U/dbname arguments for the URL `hotbench server start|url` prints; the server
    wants its generated password over TCP, so env's PGPASSFILE is pointed at the password
    file the URL names (`?passfile=…`: the password itself is never printed)."""
    m = re.match(r"postgresql://([^@]+)@([^:/]+):(\d+)/(\w+)", url)
    user, host, port, db = m.groups()
    pf = re.search(r"[?&]passfile=([^&]+)", url)
    if pf:
        env["PGPASSFILE"] = urllib.parse.unquote(pf.group(1))
    return ["-h", host, "-p", port, "-U", user, db]


class EmbeddedServer:
    """The default embedded server in a throwaway data directory (fsync off unless `fast` is
    False: then as durable as PostgreSQL's defaults), started with
    `prefix` (e.g. taskset) so its processes inherit the CPU affinity; `conn` is the
    -h/-p/-U/dbname argument list."""

    def __init__(self, hb, prefix=(), pg_bin=None, scale=None, fast=True):
        self.hb = hb
        self.work = tempfile.mkdtemp(prefix="hotbench-bench-")
        os.chmod(self.work, 0o755)  # the PostgreSQL account must reach the data directory
        env = dict(os.environ)
        env["XDG_DATA_HOME"] = os.path.join(self.work, "data")
        env["XDG_STATE_HOME"] = os.path.join(self.work, "state")
        env["XDG_CACHE_HOME"] = os.environ.get("XDG_CACHE_HOME", os.path.join(self.work, "cache"))
        for v in ("PGHOST", "PGPORT", "PGUSER", "PGDATABASE", "PGPASSWORD"):
            env.pop(v, None)
        self.env = env
        start = list(prefix) + [hb, "server", "start"] + (["--fast"] if fast else [])
        if pg_bin:
            start += ["--pg-bin", pg_bin]
        try:
            self.url = sh(start, env=env).stdout.strip().splitlines()[-1]
        except subprocess.CalledProcessError as e:
            shutil.rmtree(self.work, ignore_errors=True)
            sys.exit(f"could not start the embedded server:\n{e.stdout}\n{e.stderr}")
        self.conn = embedded_conn(self.url, env)
        if scale:
            sh(list(prefix) + [hb, "run", "-i", "-q", "-s", str(scale)] + self.conn, env=env)

    def stop(self):
        subprocess.run([self.hb, "server", "stop"], env=self.env, capture_output=True)
        shutil.rmtree(self.work, ignore_errors=True)
