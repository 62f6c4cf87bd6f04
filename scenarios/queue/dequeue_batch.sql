-- Up to {{batch}} free jobs per transaction.
select take_jobs(array(
    select id from job_queue order by id {{order}} limit {{batch}} for update skip locked
)) as hotbench_ok
\gset
\if :hotbench_ok = 0
\sleep {{idle_sleep_ms}} ms
\endif
