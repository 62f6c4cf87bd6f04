-- Up to {{batch}} free jobs per transaction.
with claimed as (
    select id from job_queue order by id {{order}} limit {{batch}} for update skip locked
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
