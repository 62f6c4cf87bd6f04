-- Table rotation (PgQ-style): the queue becomes a table partitioned into 4 slots. Producers
-- write the slot of the current period ({{rotate_ms}} ms long, taken from the clock, so no
-- shared row is updated and nothing bloats), consumers claim in id order over all slots,
-- and a rotator truncates each drained slot that is no longer current. TRUNCATE leaves no
-- dead rows, so the index entries of jobs done, which an old snapshot keeps from being
-- cleaned, are thrown away with their slot: a scan walks at most the dead entries of the
-- current and the previous period, however long the run.

-- The prefilled table keeps its contents; its id sequence keeps its name (the producers'
-- depth mode reads job_queue_id_seq) and its position.
alter table job_queue rename to job_queue_prefill;
alter index job_queue_shard rename to job_queue_prefill_shard;
alter sequence job_queue_id_seq rename to job_queue_prefill_id_seq;
create sequence job_queue_id_seq;
select setval('job_queue_id_seq', last_value, is_called) from job_queue_prefill_id_seq;

-- The slot producers write now: the period number modulo the 4 slots.
create function queue_slot() returns int language sql volatile as $fn$
    select (floor(extract(epoch from clock_timestamp()) * 1000 / {{rotate_ms}})::bigint % 4)::int
$fn$;

-- No primary key (it would have to include the slot): ids are unique by their sequence,
-- and job_done's primary key still catches a job processed twice.
create table job_queue (
    id          bigint not null default nextval('job_queue_id_seq'),
    slot        int not null default queue_slot(),
    shard       int not null,
    payload     text not null,
    enqueued_at timestamptz not null default clock_timestamp()
) partition by list (slot);
create table job_queue_0 partition of job_queue for values in (0);
create table job_queue_1 partition of job_queue for values in (1);
create table job_queue_2 partition of job_queue for values in (2);
create table job_queue_3 partition of job_queue for values in (3);
create index job_queue_id on job_queue (id);
create index job_queue_shard on job_queue (shard, id);

insert into job_queue (id, shard, payload, enqueued_at)
select id, shard, payload, enqueued_at from job_queue_prefill;
drop table job_queue_prefill;
analyze job_queue;

-- Truncates one drained slot other than the current one; returns 1 if it did, else 0.
-- Nothing queued is ever truncated: the slot is locked ACCESS EXCLUSIVE first, which waits
-- for every producer and consumer still writing it to commit or roll back (a killed
-- consumer's job is back by then), and only then checked empty, with a fresh snapshot.
-- The lock waits at most 50 ms (consumers queue behind it meanwhile); on a timeout the
-- slot is tried again at the next call. The old snapshot holds no lock on the slot, so it
-- never blocks the TRUNCATE (and never reads the queue, which TRUNCATE would empty for it).
create function rotate_queue() returns int language plpgsql volatile as $fn$
declare
    now_slot int := queue_slot();
    part text;
    empty boolean;
begin
    for s in 0..3 loop
        continue when s = now_slot;
        part := format('job_queue_%s', s);
        -- Truncated already and not written since.
        continue when pg_relation_size(part::regclass) = 0;
        -- Still draining (checked without the lock first, to stall consumers only when
        -- the slot is likely done).
        execute format('select not exists (select 1 from %I)', part) into empty;
        continue when not empty;
        begin
            perform set_config('lock_timeout', '50ms', true);
            execute format('lock table %I in access exclusive mode', part);
            execute format('select not exists (select 1 from %I)', part) into empty;
            if empty then
                execute format('truncate %I', part);
                return 1;
            end if;
        exception when lock_not_available then
            null;
        end;
        -- One slot per call: the lock is held until this transaction ends.
        return 0;
    end loop;
    return 0;
end
$fn$;
