-- The session-lock variant: a ledger of every run of a job's work (no primary key, so a job
-- run twice shows), the claim, the work and the release.
create table job_runs (id bigint not null, ran_at timestamptz not null default clock_timestamp());

-- Claims the first queued job whose session-level advisory lock is free and keeps that lock
-- past the end of the transaction, until release_job. The lock is tried on one candidate at
-- a time, in queue order (a lock call in the WHERE clause of a scan could take a lock on
-- every row the scan reads). 0 = nothing free.
create function claim_job_session_lock() returns bigint language plpgsql as $fn$
declare
    j bigint;
begin
    for j in select id from job_queue order by id {{order}} limit 100 loop
        if pg_try_advisory_lock(j) then
            return j;
        end if;
    end loop;
    return 0;
end
$fn$;

-- The job's work, trusting the lock: it runs (a row in job_runs) for every claim of a job
-- still queued. The check reads a snapshot taken after the lock: whoever held it before
-- deleted the job and committed before releasing it.
create function run_locked_job(j bigint) returns bigint language plpgsql as $fn$
begin
    if not exists (select 1 from job_queue where id = j) then
        return 0;
    end if;
    insert into job_runs (id) values (j);
    return take_jobs(array[j]);
end
$fn$;

-- Releases the claim. Behind a transaction pool the release may run on a server connection
-- that never took the lock: false, without the server's warning for each one.
create function release_job(j bigint) returns boolean language sql
set client_min_messages = error as $fn$
    select pg_advisory_unlock(j)
$fn$;
