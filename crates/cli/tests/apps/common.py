"""Shared by the workload scripts: the connection flags, and a loop of N client threads for
a number of seconds that prints how many transactions committed (for the tps)."""
import argparse
import signal
import threading
import time


def args(extra=None):
    p = argparse.ArgumentParser()
    p.add_argument("--host", required=True)
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--user", required=True)
    p.add_argument("--dbname", required=True)
    p.add_argument("--clients", type=int, default=8)
    p.add_argument("--seconds", type=float, default=60.0)
    p.add_argument("--setup", action="store_true", help="create and fill the tables, then exit")
    if extra:
        extra(p)
    return p.parse_args()


def run(a, client):
    """Runs `client(stop)` in a.clients threads for a.seconds; each returns its commit count."""
    stop = threading.Event()
    counts = [0] * a.clients
    # SIGTERM or SIGINT ends the run (a child of a background shell inherits SIGINT ignored).
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())

    def one(i):
        counts[i] = client(stop)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(a.clients)]
    t0 = time.monotonic()
    for t in threads:
        t.start()
    while time.monotonic() - t0 < a.seconds and not stop.is_set():
        time.sleep(0.05)
    stop.set()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - t0
    total = sum(counts)
    print(f"committed {total} in {elapsed:.2f} s: {total / elapsed:.1f} tps", flush=True)
