select 'each claimed job ran once' as name,
       count(*) = count(distinct id) as ok,
       format('%s runs of %s distinct jobs (%s jobs ran more than once)', count(*),
              count(distinct id), count(*) - count(distinct id)) as detail
from job_runs;

select 'every job that ran is done' as name,
       count(*) = 0 as ok,
       format('%s runs of jobs never recorded as done', count(*)) as detail
from job_runs r where not exists (select 1 from job_done d where d.id = r.id);
