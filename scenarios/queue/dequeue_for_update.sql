-- Naive: lock the oldest job. Every consumer queues behind the same row lock.
select take_jobs(array(
    select id from job_queue order by id {{order}} limit 1 for update
)) as hotbench_ok
\gset
\if :hotbench_ok = 0
\sleep {{idle_sleep_ms}} ms
\endif
