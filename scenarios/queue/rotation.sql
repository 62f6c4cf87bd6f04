-- Table rotation (PgQ-style): the queue becomes a table partitioned into 4 slots. Producers
-- write the current slot; after {{rotate_jobs}} jobs a rotator moves them on to the next
-- slot (once it is empty), and truncates each drained slot that is no longer current.
-- TRUNCATE leaves no dead rows, so the index entries of jobs done, which an old snapshot
-- keeps from being cleaned, are thrown away with their slot: a scan walks at most a slot or
-- two of dead entries, however long the run. The slot is counted in jobs, not time, so
-- every slot drains before its turn comes again whatever the throughput (as long as the
-- queue's depth is under about 2 × rotate_jobs).

-- The prefilled table keeps its contents; its id sequence keeps its name (the producers'
-- depth mode reads job_queue_id_seq) and its position.
alter table job_queue rename to job_queue_prefill;
alter index job_queue_shard rename to job_queue_prefill_shard;
alter sequence job_queue_id_seq rename to job_queue_prefill_id_seq;
create sequence job_queue_id_seq;
select setval('job_queue_id_seq', last_value, is_called) from job_queue_prefill_id_seq;

-- The current slot is job_queue_slot's value modulo 4, and job_queue_slot_start the last
-- job id drawn when it became current (sequences: moving them on leaves no dead row).
create sequence job_queue_slot minvalue 0 start 0;
create sequence job_queue_slot_start minvalue 0 start 0;
select setval('job_queue_slot_start', last_value) from job_queue_id_seq;

create function queue_slot() returns int language sql volatile as $fn$
    select (last_value % 4)::int from job_queue_slot
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

-- One rotator call: moves producers on to the next slot once the current one has had
-- {{rotate_jobs}} jobs and the next one is empty, then truncates at most one drained slot
-- other than the current one. Returns the slots truncated (0 or 1).
-- Nothing queued is ever truncated: the slot is locked ACCESS EXCLUSIVE first, which waits
-- for every producer and consumer still writing it to commit or roll back (a killed
-- consumer's job is back by then; a producer that read the slot number just before it
-- moved on has written its jobs), and only then checked empty, with a fresh snapshot. The
-- lock waits at most 50 ms (consumers queue behind it meanwhile); on a timeout the slot is
-- tried again at the next call. The old snapshot holds no lock on the slot, so it never
-- blocks the TRUNCATE (and never reads the queue, which TRUNCATE would empty for it).
create function rotate_queue() returns int language plpgsql volatile as $fn$
declare
    now_slot int := queue_slot();
    drawn bigint := (select last_value from job_queue_id_seq);
    part text;
    empty boolean;
begin
    if drawn - (select last_value from job_queue_slot_start) >= {{rotate_jobs}}
       and pg_relation_size(format('job_queue_%s', (now_slot + 1) % 4)::regclass) = 0 then
        perform nextval('job_queue_slot');
        perform setval('job_queue_slot_start', drawn);
        now_slot := queue_slot();
    end if;
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
