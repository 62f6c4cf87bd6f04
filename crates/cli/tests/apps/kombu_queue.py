"""kombu's SQLAlchemy transport as its docs run it (`sqla+postgresql://`, psycopg2): producer
threads `SimpleQueue.put` small messages and consumer threads `SimpleQueue.get` them. Each
get claims the oldest visible message with `SELECT … ORDER BY timestamp, id LIMIT 1 FOR
UPDATE` then `UPDATE … SET visible = false` in one transaction (kombu/transport/sqlalchemy:
`Channel._get`): every consumer queues on the same head row. `--clients` consumers,
`--producers` producers; prints the messages consumed per second and how many were consumed
more than once (kombu's claim delivers each once)."""
import collections
import threading

import common

a = common.args(lambda p: p.add_argument("--producers", type=int, default=4))

from kombu import Connection  # noqa: E402

url = f"sqla+postgresql://{a.user}@{a.host}:{a.port}/{a.dbname}"
OPTS = {"pool_size": a.clients + a.producers + 2, "max_overflow": 4}


def connection():
    return Connection(url, transport_options=OPTS)


if a.setup:
    with connection() as c:
        q = c.SimpleQueue("jobs")
        for i in range(2000):
            q.put({"n": -1 - i})
        q.close()
    raise SystemExit(0)

seen = collections.Counter()
seen_lock = threading.Lock()
made = [0] * a.producers
stop_all = threading.Event()


def produce(k):
    with connection() as c:
        q = c.SimpleQueue("jobs")
        i = 0
        while not stop_all.is_set():
            q.put({"n": k * 1_000_000_000 + i})
            i += 1
        made[k] = i
        q.close()


def consume(stop):
    done = 0
    with connection() as c:
        q = c.SimpleQueue("jobs")
        while not stop.is_set():
            try:
                m = q.get(block=True, timeout=1)
            except q.Empty:
                continue
            m.ack()
            with seen_lock:
                seen[m.payload["n"]] += 1
            done += 1
        q.close()
    return done


producers = [threading.Thread(target=produce, args=(k,)) for k in range(a.producers)]
for t in producers:
    t.start()
try:
    common.run(a, consume)
finally:
    stop_all.set()
    for t in producers:
        t.join()
twice = sum(1 for n in seen.values() if n > 1)
print(f"produced {sum(made)}, consumed {sum(seen.values())}, consumed twice {twice}", flush=True)
