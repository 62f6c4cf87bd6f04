-- Advisory lock on the job id: the first job whose lock is free. The delete re-checks the
-- row, so a job finished meanwhile by someone else is not processed twice.
with claimed as (
    select id from job_queue
     where pg_try_advisory_xact_lock(id)
     order by id {{order}} limit 1
), gone as (
    delete from job_queue q using claimed c where q.id = c.id
    returning q.id, q.shard, q.enqueued_at
), done as (
    insert into job_done (id, shard, enqueued_at) select id, shard, enqueued_at from gone
    returning 1
)
select count(*) as hotbench_ok from done
\gset
\if :hotbench_ok = 0
\sleep {{idle_sleep_ms}} ms
\endif
