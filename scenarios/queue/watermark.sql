-- Watermark consumers: each consumer remembers (in its session) the last id it claimed and
-- scans from there, so it never walks the index entries of jobs already done, which an
-- old snapshot keeps from being cleaned. Ids are handed out before commit, so a job can
-- appear behind a consumer's watermark (a slower producer, a job locked or rolled back
-- when it passed): every {{sweep_s}} s each consumer sweeps once from the start, so nothing
-- is ever left behind; that sweep walks the dead entries and is the price.
create function take_after_watermark(batch int, sweep_every interval) returns bigint
language plpgsql as $fn$
declare
    mark bigint := coalesce(nullif(current_setting('hotbench.watermark', true), '')::bigint, 0);
    swept timestamptz := coalesce(
        nullif(current_setting('hotbench.swept_at', true), '')::timestamptz, clock_timestamp());
    from_id bigint := mark;
    claimed bigint[];
begin
    if current_setting('hotbench.swept_at', true) is null
       or current_setting('hotbench.swept_at', true) = '' then
        perform set_config('hotbench.swept_at', clock_timestamp()::text, false);
    elsif clock_timestamp() - swept >= sweep_every then
        from_id := 0;
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
