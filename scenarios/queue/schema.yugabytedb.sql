-- YugabyteDB: rows are stored in primary-key order, so the key order consumers scan in is
-- the primary key's; split the table so producers and consumers spread over tablets.
create table job_queue (
    id          bigint generated always as identity,
    shard       int not null,
    payload     text not null,
    enqueued_at timestamptz not null default clock_timestamp(),
    primary key (id {{order}})
) split into 4 tablets;
create index job_queue_shard on job_queue (shard hash, id {{order}});

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
