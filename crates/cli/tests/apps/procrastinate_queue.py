"""procrastinate as its docs run it: producers `defer_async` small jobs (each insert fires
procrastinate's NOTIFY trigger) and one worker with `--clients` concurrent jobs claims them
through `procrastinate_fetch_job_v2(…)`, a PL/pgSQL function whose body holds the
`… LIMIT 1 FOR UPDATE OF jobs SKIP LOCKED` claim."""
import asyncio
import signal

import common

a = common.args()

import procrastinate  # noqa: E402

conninfo = f"host={a.host} port={a.port} user={a.user} dbname={a.dbname}"
app = procrastinate.App(connector=procrastinate.PsycopgConnector(conninfo=conninfo, min_size=2, max_size=a.clients + 8))


@app.task(queue="jobs")
async def work(i: int) -> None:
    return None


async def main() -> None:
    async with app.open_async():
        if a.setup:
            await app.schema_manager.apply_schema_async()
            return
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        loop.call_later(a.seconds, stop.set)
        deferred = 0

        async def produce() -> None:
            nonlocal deferred
            i = 0
            while not stop.is_set():
                await work.defer_async(i=i)
                i += 1
                deferred += 1

        worker = asyncio.create_task(
            app.run_worker_async(
                queues=["jobs"],
                concurrency=a.clients,
                install_signal_handlers=False,
                fetch_job_polling_interval=0.05,
                delete_jobs="always",
            )
        )
        producers = [asyncio.create_task(produce()) for _ in range(4)]
        t0 = loop.time()
        await stop.wait()
        for p in producers:
            p.cancel()
        worker.cancel()
        await asyncio.gather(*producers, worker, return_exceptions=True)
        elapsed = loop.time() - t0
        print(f"deferred {deferred} in {elapsed:.2f} s: {deferred / elapsed:.1f} jobs/s", flush=True)


asyncio.run(main())
