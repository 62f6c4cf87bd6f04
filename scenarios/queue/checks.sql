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

select 'jobs processed during the run = jobs the consumers counted' as name,
       count(*) filter (where not final_drain) = {{goodput:consumer}}
       and count(*) = count(distinct id) as ok,
       format('%s jobs processed during the run, %s counted by the consumers (take_jobs results)',
              count(*) filter (where not final_drain), {{goodput:consumer}}) as detail
from job_done;

select 'enqueue log = jobs the producers counted + backlog' as name,
       count(*) = {{goodput:producer}} + {{backlog}} as ok,
       format('%s logged, %s enqueued by the producers, %s prefilled', count(*), {{goodput:producer}}, {{backlog}}) as detail
from job_enqueued;
