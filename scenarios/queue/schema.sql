-- The queue, the log of what was enqueued, and the ledger of processed jobs (its primary
-- key makes processing a job twice an error the checks would see).
create table job_queue (
    id          bigint generated always as identity primary key,
    shard       int not null,
    payload     text not null,
    enqueued_at timestamptz not null default clock_timestamp()
);
create index job_queue_shard on job_queue (shard, id);

create table job_enqueued (id bigint primary key);

create table job_done (
    id          bigint primary key,
    shard       int not null,
    enqueued_at timestamptz not null,
    done_at     timestamptz not null default clock_timestamp(),
    final_drain boolean not null default false
);

with j as (
    insert into job_queue (shard, payload)
    select g % {{clients}}, md5(g::text) from generate_series(1, {{backlog}}) as g
    returning id
)
insert into job_enqueued select id from j;
vacuum analyze job_queue;
