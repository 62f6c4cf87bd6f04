-- Session-level advisory lock held across three transactions (claim, work, release): correct
-- on a connection of one's own; behind a transaction pool each statement may run on another
-- server connection, whose next client then "takes" the same lock again (it is already held
-- by that session) and the job runs twice.
select claim_job_session_lock() as job
\gset
\if :job = 0
\set hotbench_ok 0
\sleep {{idle_sleep_ms}} ms
\else
select run_locked_job(:job) as hotbench_ok
\gset
select release_job(:job);
\endif
