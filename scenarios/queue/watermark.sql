-- Watermark consumers: each consumer remembers (in its session) the last id it claimed and
-- scans from there, so it never walks the index entries of jobs already done, which an
-- old snapshot keeps from being cleaned. Ids are handed out before commit, so a job can
-- appear behind a consumer's watermark (a slower producer, a job locked or rolled back
-- when it passed): every {{sweep_s}} s each consumer sweeps from the queue's low-water
-- mark, below which every job is done, so nothing is ever left behind. The low-water mark
-- follows the queue's head at most a sweep period behind, so a sweep walks at most that
-- period's dead entries, however long the old snapshot has been held.

-- The low-water mark: every job id up to it is done (a sequence: advancing it leaves no
-- dead row behind).
create sequence job_queue_low minvalue 0 start 0;

-- A producer's transaction takes its transaction id before its statement draws job ids,
-- so "every transaction older than X has ended" means "every id drawn before X is
-- committed or gone".
create function job_queue_xid_first() returns trigger language plpgsql as $fn$
begin
    perform txid_current();
    return null;
end
$fn$;
create trigger job_queue_xid_first before insert on job_queue
    for each statement execute function job_queue_xid_first();

-- Called at each sweep; returns the low-water mark. A sweep proposes a cap (every id below
-- it already drawn) with its own transaction id X; a later sweep, once every transaction
-- up to X has ended (no id below the cap can still appear), raises the mark to just below
-- the first job still there under the cap (one a consumer holds counts: it may be rolled
-- back), or to the cap.
create function advance_low_water() returns bigint language plpgsql as $fn$
declare
    low bigint := (select last_value from job_queue_low);
    pending text := nullif(current_setting('hotbench.low_pending', true), '');
    cap bigint;
    proposer bigint;
    first_live bigint;
begin
    if pending is not null then
        cap := split_part(pending, ' ', 1)::bigint;
        proposer := split_part(pending, ' ', 2)::bigint;
        if txid_snapshot_xmin(txid_current_snapshot()) > proposer then
            select min(id) into first_live from job_queue where id > low and id < cap;
            if coalesce(first_live, cap) - 1 > low then
                low := coalesce(first_live, cap) - 1;
                -- Concurrent sweeps may race; a mark set lower again is still true.
                perform setval('job_queue_low', greatest(low, last_value)) from job_queue_low;
            end if;
            pending := null;
        end if;
    end if;
    if pending is null then
        cap := (select case when is_called then last_value + 1 else last_value end
                  from job_queue_id_seq);
        proposer := txid_current();
        perform set_config('hotbench.low_pending', cap || ' ' || proposer, false);
    end if;
    return low;
end
$fn$;

create function take_after_watermark(batch int, sweep_every interval) returns bigint
language plpgsql as $fn$
declare
    mark bigint := coalesce(nullif(current_setting('hotbench.watermark', true), '')::bigint,
                            (select last_value from job_queue_low));
    swept text := nullif(current_setting('hotbench.swept_at', true), '');
    from_id bigint := mark;
    claimed bigint[];
begin
    if swept is null then
        perform set_config('hotbench.swept_at', clock_timestamp()::text, false);
    elsif clock_timestamp() - swept::timestamptz >= sweep_every then
        from_id := advance_low_water();
        perform set_config('hotbench.swept_at', clock_timestamp()::text, false);
    end if;
    claimed := array(
        select id from job_queue where id > from_id order by id limit batch for update skip locked
    );
    if cardinality(claimed) > 0 then
        -- A sweep never moves the watermark back.
        perform set_config('hotbench.watermark',
                           greatest(mark, claimed[cardinality(claimed)])::text, false);
    end if;
    return take_jobs(claimed);
end
$fn$;
