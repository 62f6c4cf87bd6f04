-- Rate mode (depth = 0): one job per transaction, at the producers' rate.
-- Depth mode (depth > 0): each transaction tops the queue up to {{depth}} jobs, estimated as
-- ids issued minus jobs taken (two sequences: no count over a table full of dead rows).
\if :depth > 0
select greatest(0, :depth
         - (select case when is_called then last_value else 0 end from job_queue_id_seq)
         + (select case when is_called then last_value else 0 end from job_taken)) as enqueued
\gset
\if :enqueued = 0
\sleep 1 ms
\endif
\else
\set enqueued 1
\endif
-- Into random shards, logged as enqueued in the same transaction.
\set shard random(0, :clients - 1)
\set notify {{notify}}
\if :notify = 0
with j as (
    insert into job_queue (shard, payload)
    select (:shard + g) % :clients, md5(random()::text) from generate_series(1, :enqueued) as g
    returning id
)
insert into job_enqueued select id from j;
\elif :notify = 1
-- NOTIFY per job (as a trigger on the queue table does): each commit that notified takes the
-- one lock on the database's notification queue (wait event Lock:object) while it commits.
with j as (
    insert into job_queue (shard, payload)
    select (:shard + g) % :clients, md5(random()::text) from generate_series(1, :enqueued) as g
    returning id
), e as (
    insert into job_enqueued select id from j returning id
)
select count(pg_notify('hotbench_jobs', id::text)) as notified from e;
\else
-- One NOTIFY per producer transaction, whatever the number of jobs in it.
with j as (
    insert into job_queue (shard, payload)
    select (:shard + g) % :clients, md5(random()::text) from generate_series(1, :enqueued) as g
    returning id
), e as (
    insert into job_enqueued select id from j returning id
)
select pg_notify('hotbench_jobs', count(*)::text) as notified from e;
\endif
