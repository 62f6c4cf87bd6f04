-- One job, into a random shard, logged as enqueued in the same transaction.
\set shard random(0, :clients - 1)
with j as (
    insert into job_queue (shard, payload) values (:shard, md5(random()::text))
    returning id
)
insert into job_enqueued select id from j;
