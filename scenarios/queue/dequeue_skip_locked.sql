-- Take the first job nobody else holds.
select take_jobs(array(
    select id from job_queue order by id {{order}} limit 1 for update skip locked
)) as hotbench_ok
\gset
\if :hotbench_ok = 0
\sleep {{idle_sleep_ms}} ms
\endif
