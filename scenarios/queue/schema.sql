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
-- The age-at-dequeue monitor reads the last second's jobs through this index: a scan of
-- the whole ledger, which grows all run, would slow every variant minute after minute.
create index job_done_done_at on job_done (done_at);

-- Processes the claimed jobs: removes them from the queue and records them as done, in
-- the caller's transaction (its locks still held). Returns how many were processed (0 = an
-- empty poll, or jobs someone else finished first).
-- job_taken counts taken jobs outside transactions (a sequence), so the producer can keep
-- the queue at a target depth (--param depth=N) without counting a table that bloats.
create sequence job_taken;

create function take_jobs(claimed bigint[]) returns bigint language sql as $fn$
    with gone as (
        delete from job_queue where id = any(claimed)
        returning id, shard, enqueued_at
    ), done as (
        insert into job_done (id, shard, enqueued_at)
        select id, shard, enqueued_at from gone
        returning 1
    )
    select count(nextval('job_taken')) from done;
$fn$;

-- The kill_consumer perturbation: terminates one consumer backend in the middle of a
-- job (inside take_jobs: its jobs locked, nothing committed), watching for up to about
-- 900 ms (most of the monitor's one-second interval, so a loaded machine whose consumers
-- are rarely mid-job still sees one killed). Returns how many it terminated (0 or 1).
create function kill_a_consumer() returns int language plpgsql as $fn$
declare
    victim int;
begin
    for i in 1..180 loop
        select pid into victim from pg_stat_activity
         where datname = current_database() and pid <> pg_backend_pid()
           and state = 'active' and query like '%take\_%(%'
         limit 1;
        if victim is not null then
            return pg_terminate_backend(victim)::int;
        end if;
        perform pg_sleep(0.005);
        -- pg_stat_activity is read once per transaction unless the snapshot is cleared.
        perform pg_stat_clear_snapshot();
    end loop;
    return 0;
end
$fn$;

-- A bystander's small OLTP table (--param bystanders=N): its latency shows what the
-- queue's bloat costs everyone else on the server.
create table bystander_account (id int primary key, balance bigint not null);
insert into bystander_account select g, 0 from generate_series(1, 1000) as g;

with j as (
    insert into job_queue (shard, payload)
    select g % {{clients}}, md5(g::text) from generate_series(1, {{backlog}}) as g
    returning id
)
insert into job_enqueued select id from j;
vacuum analyze job_queue;
