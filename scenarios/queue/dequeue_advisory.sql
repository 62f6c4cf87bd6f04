-- Advisory lock on the job id: the first job whose lock is free. The delete re-checks the
-- row, so a job finished meanwhile by someone else is not processed twice.
select take_jobs(array(
    select id from job_queue where pg_try_advisory_xact_lock(id)
     order by id {{order}} limit 1
)) as hotbench_ok
\gset
\if :hotbench_ok = 0
\sleep {{idle_sleep_ms}} ms
\endif
