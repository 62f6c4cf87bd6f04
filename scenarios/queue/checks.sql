select 'every enqueued job processed' as name,
       count(*) = 0 as ok,
       format('%s enqueued jobs never processed', count(*)) as detail
from job_enqueued e where not exists (select 1 from job_done d where d.id = e.id);

select 'nothing processed that was not enqueued' as name,
       count(*) = 0 as ok,
       format('%s processed jobs were never enqueued', count(*)) as detail
from job_done d where not exists (select 1 from job_enqueued e where e.id = d.id);

select 'queue empty after the final drain' as name,
       count(*) = 0 as ok,
       format('%s jobs left', count(*)) as detail
from job_queue;

-- A transaction in doubt (cancelled at the end, or cut by a lost connection after its commit:
-- a restart) may have committed: a consumer's took at most {{batch}} jobs, a producer's is
-- only known to have enqueued some.
select 'jobs processed during the run = jobs the consumers counted' as name,
       count(*) filter (where not final_drain)
           between {{goodput:consumer}} and {{goodput:consumer}} + {{in_doubt:consumer}} * {{batch}}
       and count(*) = count(distinct id) as ok,
       format('%s jobs processed during the run, %s counted by the consumers (take_jobs results), %s transactions in doubt',
              count(*) filter (where not final_drain), {{goodput:consumer}}, {{in_doubt:consumer}}) as detail
from job_done;

select 'enqueue log = jobs the producers counted + backlog' as name,
       (count(*) = {{goodput:producer}} + {{backlog}}
        or (count(*) > {{goodput:producer}} + {{backlog}} and {{in_doubt:producer}} > 0)) as ok,
       format('%s logged, %s enqueued by the producers, %s prefilled, %s producer transactions in doubt',
              count(*), {{goodput:producer}}, {{backlog}}, {{in_doubt:producer}}) as detail
from job_enqueued;
