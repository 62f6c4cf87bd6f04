-- Each consumer owns the shard numbered after its client id: no two consumers compete.
\set shard :client_id % :clients
select take_jobs(array(
    select id from job_queue where shard = :shard
     order by id {{order}} limit 1 for update skip locked
)) as hotbench_ok
\gset
\if :hotbench_ok = 0
\sleep {{idle_sleep_ms}} ms
\endif
