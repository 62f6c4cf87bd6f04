-- After the run: whatever is left in the queue is processed here, marked as such.
with gone as (
    delete from job_queue returning id, shard, enqueued_at
)
insert into job_done (id, shard, enqueued_at, final_drain)
select id, shard, enqueued_at, true from gone;
