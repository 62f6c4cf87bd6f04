"""pgqueuer as its docs run it: `Queries.install()` (its tables and the trigger that
pg_notify's every change of the queue table), producers `enqueue` one job at a time, and
`--clients` QueueManager workers (each its own autocommit psycopg connection) dequeue with
pgqueuer's CTE/LATERAL `… FOR UPDATE SKIP LOCKED` claim."""
import asyncio
import signal

import common

a = common.args()

import psycopg  # noqa: E402
from pgqueuer import PsycopgDriver, QueueManager, Queries  # noqa: E402

dsn = f"host={a.host} port={a.port} user={a.user} dbname={a.dbname}"


async def connect():
    return await psycopg.AsyncConnection.connect(dsn, autocommit=True)


async def main() -> None:
    if a.setup:
        await Queries(PsycopgDriver(await connect())).install()
        return
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    loop.call_later(a.seconds, stop.set)
    managers = []
    for _ in range(a.clients):
        qm = QueueManager(Queries(PsycopgDriver(await connect())))

        @qm.entrypoint("work")
        async def work(job) -> None:
            return None

        managers.append(qm)
    runs = [asyncio.create_task(qm.run(batch_size=1)) for qm in managers]
    enqueued = 0

    async def produce() -> None:
        nonlocal enqueued
        q = Queries(PsycopgDriver(await connect()))
        while not stop.is_set():
            await q.enqueue("work", b"x")
            enqueued += 1

    producers = [asyncio.create_task(produce()) for _ in range(8)]
    t0 = loop.time()
    await stop.wait()
    for p in producers:
        p.cancel()
    for qm in managers:
        qm.shutdown.set()
    await asyncio.gather(*producers, return_exceptions=True)
    await asyncio.wait(runs, timeout=5)
    elapsed = loop.time() - t0
    print(f"enqueued {enqueued} in {elapsed:.2f} s: {enqueued / elapsed:.1f} jobs/s", flush=True)


asyncio.run(main())
